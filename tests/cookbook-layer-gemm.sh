#!/bin/sh
# tests/cookbook-layer-gemm.sh: experiments/validation/cookbook-layer-gemm-to-yaml.sh,
# which turns EleutherAI's log of a transformer layer's A100 products into a
# validation file of kind gemm. The log is not shipped, so it is rebuilt
# here from the committed file's cases in the benchmark's notation (a
# layer's header line, then its Throughput lines), with one call too short
# and two misaligned products added: the script must give that file back
# with the two (which trainsim prices) and without the short call, its
# header's count of the products left out aside, and validate must read it.
# Then its bad input: a log missing, a Throughput line that does not
# parse, a size of 8 digits, one before any layer, a second case of one id,
# a log without one, one whose every product is left out; each fails
# without writing the output.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/cookbook-layer-gemm.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-layer-gemm.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

script=$srcdir/experiments/validation/cookbook-layer-gemm-to-yaml.sh
committed=$srcdir/experiments/validation/eleutherai-a100-layer-gemm.yaml

# The log back from the committed cases: a linear of m = 4 x 2048 tokens
# is "(4xKxN, b=2048)", a bmm "(BxMxKxN)". The first layer also gets a
# product too short to keep (4 x 64 by 64 x 64 at 1 TFLOP/s: 33 ns) and
# two with a size of 130, not a multiple of 8 (inner size, columns): the
# script leaves the first out and counts it, and keeps the two.
gemm_cases "$committed" | awk '
  {
    h = $1; sub(/^h/, "", h); sub(/-.*/, "", h)
    label = $1; sub(/^h[0-9]+-/, "", label); gsub(/-/, "_", label)
    b = $2; m = $3; n = $4; k = $5; r = $6
    if (h != last) {
      print "num_attention_heads: 64, hidden_size: " h ", train_micro_batch_size_per_gpu: 4, tensor_mp_size: 4, pipeline_mp_size: 1, dp_size: 1"
      print ""
      print "Estimate"
      print "--------"
      if (last == "") {
        print "Throughput (in TFLOP/s) for tiny_product (4x64x64, b=1): 1.000"
        print "Throughput (in TFLOP/s) for misaligned_scores (64x2048x130x2048): 69.467"
        print "Throughput (in TFLOP/s) for misaligned_context (64x2048x2048x130): 88.627"
      }
      last = h
    }
    dims = b > 1 ? b "x" m "x" k "x" n : (m / 2048) "x" k "x" n ", b=2048"
    print "Elapsed time for " label " (" dims "): 0.0010"
    print "Throughput (in TFLOP/s) for " label " (" dims "): " r
  }' >"$tmp/h_sweep.out"

drop_counts () { grep -v "^# Of the log's\|-misaligned-" "$1"; }
if ! sh "$script" "$tmp/h_sweep.out" "$tmp/out.yaml" 2>"$tmp/err"; then
  fail_because "the script failed on the log rebuilt from the committed file"
elif [ "$(drop_counts "$committed")" != "$(drop_counts "$tmp/out.yaml")" ]; then
  drop_counts "$committed" >"$tmp/committed.yaml"
  fail_because "its output differs from the committed file: $(drop_counts "$tmp/out.yaml" | diff "$tmp/committed.yaml" - | head -n 4 | tr '\n' ' ')"
elif grep -q "tiny" "$tmp/out.yaml"; then
  fail_because "the short call was kept"
elif ! grep -Fqx '  - {id: h8192-misaligned-scores, batch: 64, m: 2048, n: 2048, k: 130, measured: {throughput: 69.467TFLOP/s}}' "$tmp/out.yaml" \
     || ! grep -q "^  - {id: h8192-misaligned-context, batch: 64, m: 2048, n: 130, k: 2048," "$tmp/out.yaml"; then
  fail_because "a product with a size of 130 was not kept as written"
fi
verdict "the committed file is the script's output, but for its counts and the products added"

cases=$(grep -c '^  - {id: ' "$committed")
grep -q "^# Of the log's $((cases + 3)) products, 1 took under 0.2 ms and are left out (see$" \
  "$tmp/out.yaml" || fail_because "the header does not count the one left out: $(grep '^# Of' "$tmp/out.yaml")"
grep -q "^# Of the log's [0-9]* products, 0 took under 0.2 ms and are left out (see$" \
  "$committed" || fail_because "the committed header lacks its count"
verdict "the header counts the products left out"

grep -Fqx '  - {id: h8192-attention-key-query-prob, batch: 64, m: 2048, n: 2048, k: 128, measured: {throughput: 91.589TFLOP/s}}' \
  "$committed" || fail_because "the scores of h 8192 are not EleutherAI's 64 x 2048 x 128 x 2048 at 91.589 TFLOP/s"
grep -Fqx '  - {id: h8192-attention-key-value-query-transform, m: 8192, n: 6144, k: 8192, measured: {throughput: 228.497TFLOP/s}}' \
  "$committed" || fail_because "(4x8192x6144, b=2048) is not read as m 8192, n 6144, k 8192"
verdict "cases hold the log's rates, the tokens as m and the inner size as k"

scores_every_case "$committed"

# bad LOG: each variant fails and leaves no output.
bad () { converter_refuses "$1" "$script" "$tmp/bad.out" "$2"; }

rm -f "$tmp/bad.out"
bad "a missing log fails, named" "cannot read .*bad.out"

sed '5s/.*/Throughput (in TFLOP\/s) for tiny_product (4x64x64x1, b=1): 1.000/' \
  "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a linear of four sizes fails at its line" "bad.out:5: cannot read"

sed '6s/: 69.467$/: fast/' "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a rate that is not a number fails at its line" "bad.out:6: cannot read"

sed '5s/.*/Throughput (in TFLOP\/s) for tiny_product (4x64x64, b=20480000): 1.000/' \
  "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a size of 8 digits fails at its line" "bad.out:5: cannot read"

sed '1d' "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a product before any layer fails at its line" "bad.out:4: a Throughput line before any hidden_size line"

sed '1s/hidden_size: 8192/hidden_size: 8320/' "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a layer given twice fails at its second case" "a second case h8320-"

grep -v '^Throughput' "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a log without a Throughput line fails" "bad.out: no Throughput line"

sed -n '1,5p' "$tmp/h_sweep.out" >"$tmp/bad.out"
bad "a log whose every product is left out fails, counting them" \
  "bad.out: no product kept \(1 read, 1 under 0.2 ms\)"

finish
