#!/bin/sh
# tests/cookbook-mlp.sh: experiments/validation/cookbook-mlp-to-yaml.sh,
# which turns EleutherAI's A100 timings of a transformer's MLP block into a
# validation file of kind mlp. The logs are not shipped, so they are rebuilt
# here from the committed file's cases, with the lines between that the
# benchmark prints and a block too fast to keep: the script must give that
# file back byte for byte, and validate must read it. Then its bad input:
# either log missing, a configuration line or an MLP line that does not
# parse, an MLP line with no configuration before it, a hidden size of 8
# digits, a configuration given twice, a log without an MLP line, logs
# with no block of 1 ms; each fails without writing the output.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/cookbook-mlp.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-cookbook-mlp.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

script=$srcdir/experiments/validation/cookbook-mlp-to-yaml.sh
committed=$srcdir/experiments/validation/eleutherai-a100-mlp.yaml
log=transformer_data/h_sweep_tp.out

# The logs back from the committed cases (ids h-sweep-tp<T>-<H> and
# flash-attn-hsweep-tp<T>-<H>), each block as the benchmark prints it: the
# configuration, then "Actual" and the attention's, the MLP's and the
# layer's times. Each starts with a block of hidden 128 whose MLP took
# 0.1 ms, which the script leaves out.
mkdir -p "$tmp/logs/transformer_data"
for set in h-sweep flash-attn-hsweep; do
  awk -v set="$set" 'index($0, "  - {id: " set "-tp") == 1 {
      line = $0
      id = line; sub(/.*-tp/, "", id); sub(/,.*/, "", id)
      t = id; sub(/-.*/, "", t); h = id; sub(/.*-/, "", h)
      b = line; sub(/.*micro_batch: /, "", b); sub(/,.*/, "", b)
      ms = line; sub(/.*forward_ms: /, "", ms); sub(/\}.*/, "", ms)
      print t, h, b, ms
    }' "$committed" | awk '
    function block(t, h, b, s) {
      printf "num_attention_heads: 128, hidden_size: %s, train_micro_batch_size_per_gpu: %s, tensor_mp_size: %s, pipeline_mp_size: 1, dp_size: 1\n\n\n", h, b, t
      print "Actual"
      print "------"
      print "Attention duration (in seconds): 0.0388"
      print "Attention throughput (in TFLOP/s): 127.357"
      printf "MLP duration (in seconds): %s\n", s
      print "MLP throughput (in TFLOP/s): 239.830"
      print "Transformer duration (in seconds): 0.0786"
      print "Transformer throughput (in TFLOP/s): 174.765"
      print "Transformer - MLP - Attention (in seconds): 0.0031"
      print "========================================================================================================================"
    }
    BEGIN { block(1, 128, 4, "0.0001") }
    { block($1, $2, $3, sprintf("%.4f", $4 / 1000)) }' \
    >"$tmp/logs/transformer_data/$(echo "$set" | sed 's/^h-sweep$/h-sweep-tp/' | tr - _).out"
done

if ! sh "$script" "$tmp/logs" "$tmp/out.yaml" 2>"$tmp/err"; then
  fail_because "the script failed on the log rebuilt from the committed file: $(cat "$tmp/err")"
elif ! cmp -s "$committed" "$tmp/out.yaml"; then
  fail_because "its output differs from the committed file: $(diff "$committed" "$tmp/out.yaml" | head -n 4 | tr '\n' ' ')"
elif grep -q "hidden: 128," "$tmp/out.yaml"; then
  fail_because "the 0.1 ms block was kept"
fi
verdict "the committed file is the script's output, without the blocks under 1 ms"

grep -Fqx '  - {id: h-sweep-tp1-8192, hidden: 8192, micro_batch: 4, measured: {forward_ms: 36.7}}' \
  "$committed" || fail_because "hidden 8192's MLP is not EleutherAI's 0.0367 s"
[ "$(grep -c '^  - {id: flash-attn-hsweep-tp1-' "$committed")" -gt 0 ] ||
  fail_because "no case from flash_attn_hsweep.out"
grep -Fq 'defaults: {device: a100-sxm4-80gb, precision: fp16, seq_len: 2048}' "$committed" ||
  fail_because "the defaults are not the benchmark's A100, fp16 and 2048 tokens"
verdict "cases hold the log's MLP times in milliseconds, at its micro-batch"

scores_every_case "$committed"

# bad LOGDIR: each variant fails and leaves no output.
bad () { converter_refuses "$1" "$script" "$tmp/bad" "$2"; }

fresh
rm "$tmp/bad/$log"
bad "a missing log fails, named" "cannot read .*h_sweep_tp.out"

fresh
sed '1s/hidden_size: 128,/hidden_size: wide,/' "$tmp/logs/$log" >"$tmp/bad/$log"
bad "a configuration line that does not parse fails at its line" "h_sweep_tp.out:1: cannot read"

fresh
sed '1s/hidden_size: 128,/hidden_size: 12800000,/' "$tmp/logs/$log" >"$tmp/bad/$log"
bad "a hidden size of 8 digits fails at its line" "h_sweep_tp.out:1: cannot read"

fresh
sed '8s/: 0.0001$/: fast/' "$tmp/logs/$log" >"$tmp/bad/$log"
bad "an MLP time that is not a number fails at its line" "h_sweep_tp.out:8: cannot read"

fresh
sed '1d' "$tmp/logs/$log" >"$tmp/bad/$log"
bad "an MLP line with no configuration before it fails at its line" \
  "h_sweep_tp.out:7: cannot read .* \(no configuration before it\)"

fresh
grep -v '^MLP duration' "$tmp/logs/$log" >"$tmp/bad/$log"
bad "a log without an MLP line fails" "h_sweep_tp.out: no MLP duration line"

flash=transformer_data/flash_attn_hsweep.out
fresh
rm "$tmp/bad/$flash"
bad "the second log missing fails, named" "cannot read .*flash_attn_hsweep.out"

fresh
sed '8s/: 0.0001$/: 1e-3/' "$tmp/logs/$flash" >"$tmp/bad/$flash"
bad "an MLP time in the second log that does not parse fails at its line" \
  "flash_attn_hsweep.out:8: cannot read"

# The first log's second block (its first case) again, at its end.
fresh
sed -n '13,24p' "$tmp/logs/$log" >>"$tmp/bad/$log"
bad "a configuration given twice fails at its line" \
  "h_sweep_tp.out:[0-9]+: tensor_mp_size 1, hidden_size [0-9]+ again"

fresh
for f in "$log" "$flash"; do
  awk '/^MLP duration/ { $NF = "0.0009" } { print }' "$tmp/logs/$f" >"$tmp/bad/$f"
done
bad "logs with no block of 1 ms fail" "no MLP block of 1 ms or more in the logs"

finish
