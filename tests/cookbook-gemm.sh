#!/bin/sh
# tests/cookbook-gemm.sh: experiments/validation/cookbook-gemm-to-yaml.sh,
# which turns EleutherAI's A100 GEMM logs into a validation file of kind
# gemm. The logs are not shipped, so they are rebuilt here from the
# committed file's cases, with the lines between that the benchmark prints
# and a call too short to keep: the script must give that file back byte
# for byte, and validate must read it. Then its bad input: a log missing,
# a Throughput line that does not parse, a size of 8 digits, a vocabulary
# sweep's b other than 1, a log without one; each fails without writing the
# output.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/cookbook-gemm.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-cookbook.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

script=$srcdir/experiments/validation/cookbook-gemm-to-yaml.sh
committed=$srcdir/experiments/validation/eleutherai-a100-gemm.yaml

# The logs back from the committed cases, in the benchmark's notation: its
# (M x N) by (N x K) is trainsim's (m x k) by (k x n), and the vocabulary
# sweeps add ", b=1". Each starts with a 32 x 4096 x 32 call of 39 us,
# which the script leaves out.
for log in gemm_data/mm/m_sweep/a100.out gemm_data/mm/ksweep_low/a100.out \
           gemm_data/mm/ksweep_high/a100.out gemm_data/bmm/bsweep/a100.out \
           gemm_data/bmm/msweep/a100.out transformer_data/vocab_v_sweep.out \
           transformer_data/vocab_h_sweep.out; do
  mkdir -p "$tmp/logs/$(dirname "$log")"
  tag=$(echo "$log" | sed 's,^gemm_data/,,; s,^transformer_data/,mm/,; s,/a100\.out$,,; s,\.out$,,' | tr '/_' '--')
  case $log in *vocab*) b=", b=1" ;; *) b= ;; esac
  gemm_cases "$committed" | awk -v tag="$tag" -v b="$b" '
    BEGIN {
      print "Elapsed time for 32x4096x32" b ": 0.000"
      print "Throughput (in TFLOP/s) for 32x4096x32" b ": 0.213"
      print "--------------------------------------------------------------------------------"
    }
    index($1, tag "-") == 1 {
      dims = (tag ~ /^bmm/ ? $2 "x" : "") $3 "x" $5 "x" $4 b
      print "Elapsed time for " dims ": 0.001"
      print "Throughput (in TFLOP/s) for " dims ": " $6
      print "--------------------------------------------------------------------------------"
    }' >"$tmp/logs/$log"
done

why=
if ! sh "$script" "$tmp/logs" "$tmp/out.yaml" 2>"$tmp/err"; then
  fail_because "the script failed on logs rebuilt from the committed file"
elif ! cmp -s "$committed" "$tmp/out.yaml"; then
  fail_because "its output differs from the committed file: $(diff "$committed" "$tmp/out.yaml" | head -n 4 | tr '\n' ' ')"
elif grep -q "32x4096x32\|m: 32," "$tmp/out.yaml"; then
  fail_because "the 39 us call was kept"
fi
verdict "the committed file is the script's output, without the calls under 0.2 ms"

grep -Fqx '  - {id: bmm-bsweep-b64-1024x1024x1024, batch: 64, m: 1024, n: 1024, k: 1024, measured: {throughput: 229.112TFLOP/s}}' \
  "$committed" || fail_because "64 cubes of 1024 are not EleutherAI's 229.112 TFLOP/s"
grep -Fqx '  - {id: mm-ksweep-low-27648x64x4096, m: 27648, n: 64, k: 4096, measured: {throughput: 69.612TFLOP/s}}' \
  "$committed" || fail_because "27648 x 4096 by 4096 x 64 is not read as m 27648, n 64, k 4096"
grep -Fqx '  - {id: mm-vocab-v-sweep-8192x14336x51137, m: 8192, n: 14336, k: 51137, measured: {throughput: 76.096TFLOP/s}}' \
  "$committed" || fail_because "the vocabulary sweep's 8192x51137x14336, b=1 is not read as m 8192, n 14336, k 51137"
verdict "cases hold the logs' rates, the benchmark's inner dimension as k"

scores_every_case "$committed"

# bad LOGDIR: each variant fails and leaves no output.
bad () { converter_refuses "$1" "$script" "$tmp/bad" "$2"; }

fresh
rm "$tmp/bad/gemm_data/bmm/bsweep/a100.out"
bad "a missing log fails, named" "cannot read .*bmm/bsweep/a100.out"

fresh
sed '2s/.*/Throughput (in TFLOP\/s) for 32x40x96x32x1: 0.2/' "$tmp/logs/gemm_data/mm/ksweep_high/a100.out" \
  >"$tmp/bad/gemm_data/mm/ksweep_high/a100.out"
bad "a Throughput line of five sizes fails at its line" "mm/ksweep_high/a100.out:2: cannot read"

fresh
sed '2s/: 0.213$/: fast/' "$tmp/logs/gemm_data/mm/m_sweep/a100.out" >"$tmp/bad/gemm_data/mm/m_sweep/a100.out"
bad "a rate that is not a number fails at its line" "mm/m_sweep/a100.out:2: cannot read"

fresh
sed '2s/.*/Throughput (in TFLOP\/s) for 32x40960000x32: 0.2/' "$tmp/logs/gemm_data/mm/m_sweep/a100.out" \
  >"$tmp/bad/gemm_data/mm/m_sweep/a100.out"
bad "a size of 8 digits fails at its line" "mm/m_sweep/a100.out:2: cannot read"

fresh
sed '2s/, b=1: /, b=2: /' "$tmp/logs/transformer_data/vocab_v_sweep.out" \
  >"$tmp/bad/transformer_data/vocab_v_sweep.out"
bad "a vocabulary sweep's b other than 1 fails at its line" "vocab_v_sweep.out:2: cannot read"

fresh
grep -v '^Throughput' "$tmp/logs/gemm_data/bmm/msweep/a100.out" >"$tmp/bad/gemm_data/bmm/msweep/a100.out"
bad "a log without a Throughput line fails" "bmm/msweep/a100.out: no Throughput line"

finish
