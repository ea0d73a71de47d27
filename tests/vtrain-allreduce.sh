#!/bin/sh
# tests/vtrain-allreduce.sh: experiments/validation/vtrain-allreduce-to-yaml.sh,
# which turns vTrain's nccl-tests tables into a collectives validation file.
# The tables are not shipped, so they are rebuilt here from the committed
# file's cases: the script must give that file back byte for byte, and
# validate must read it. Then its bad input: a table missing, a wrong
# header, a bus bandwidth that is not a number; each fails without writing
# the output.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/vtrain-allreduce.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-vtrain-ar.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

script=$srcdir/experiments/validation/vtrain-allreduce-to-yaml.sh
committed=$srcdir/experiments/validation/vtrain-a100-allreduce.yaml
header='size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)'

# The tables back from the committed cases: each power-of-two row with its
# bus bandwidth, and between them a row of 3 MiB that the script skips.
mkdir "$tmp/lut"
for g in 2 3 4 5 6 7 8; do
  {
    echo "$header"
    awk -v g="$g" '
      /^  - \{id: vtrain-ar-/ {
        if ($0 !~ "gpus: " g ",") next
        size = $0; sub(/.*size: /, "", size); sub(/,.*/, "", size)
        bw = $0; sub(/.*bus_bandwidth: /, "", bw); sub(/GB\/s.*/, "", bw)
        mib = size; sub(/[MG]iB$/, "", mib)
        if (size ~ /GiB$/) mib *= 1024
        printf "%d,%d,float,1000,%s,1000,%s\n", mib * 1048576, mib * 262144, bw, bw
        if (mib == 2) print "3145728,786432,float,1000,1.5,1000,1.5"
      }' "$committed"
  } >"$tmp/lut/AR_GPU${g}_1M_1024M_LUT"
done

why=
if ! sh "$script" "$tmp/lut" "$tmp/out.yaml" 2>"$tmp/err"; then
  fail_because "the script failed on tables rebuilt from the committed file"
elif ! cmp -s "$committed" "$tmp/out.yaml"; then
  fail_because "its output differs from the committed file: $(diff "$committed" "$tmp/out.yaml" | head -n 4 | tr '\n' ' ')"
elif [ "$(grep -c '^  - {id: vtrain-ar-' "$tmp/out.yaml")" != 77 ]; then
  fail_because "want 77 cases (7 GPU counts x 11 sizes)"
fi
verdict "the committed file is the script's output, 77 cases, the 3 MiB row skipped"

grep -Fqx '  - {id: vtrain-ar-8g-1mib, gpus: 8, size: 1MiB, measured: {bus_bandwidth: 19.78GB/s}}' \
  "$committed" || fail_because "8 GPUs at 1 MiB is not vTrain's 19.78 GB/s out-of-place"
verdict "a case holds the table's out-of-place bus bandwidth"

scores_every_case "$committed"

# bad LUTDIR: each variant fails and leaves no output.
bad () { converter_refuses "$1" "$script" "$tmp/badlut"; }

cp -R "$tmp/lut" "$tmp/badlut"
rm "$tmp/badlut/AR_GPU5_1M_1024M_LUT"
bad "a missing table fails"
grep -q "cannot read .*AR_GPU5" "$tmp/err" || fail_because "no 'cannot read' message"
verdict "it names the missing table"

rm -rf "$tmp/badlut"; cp -R "$tmp/lut" "$tmp/badlut"
sed '1s/.*/size,time/' "$tmp/lut/AR_GPU3_1M_1024M_LUT" >"$tmp/badlut/AR_GPU3_1M_1024M_LUT"
bad "a wrong header fails"
grep -q "AR_GPU3_1M_1024M_LUT:1: unexpected header" "$tmp/err" || fail_because "no file:line"
verdict "it names the file and line of the header"

rm -rf "$tmp/badlut"; cp -R "$tmp/lut" "$tmp/badlut"
sed '2s/,1000,[^,]*,1000,/,1000,fast,1000,/' "$tmp/lut/AR_GPU7_1M_1024M_LUT" >"$tmp/badlut/AR_GPU7_1M_1024M_LUT"
bad "a bus bandwidth that is not a number fails"
grep -q "AR_GPU7_1M_1024M_LUT:2:" "$tmp/err" || fail_because "no file:line"
verdict "it names the file and line of the bad row"

finish
