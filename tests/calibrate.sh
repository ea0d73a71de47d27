#!/bin/sh
# tests/calibrate.sh: `trainsim calibrate`: the link constants fitted to
# published nccl-tests logs against the shipped ones (src/net/net.c), the
# GEMM efficiency fitted to EleutherAI's A100 squares, the launch slope,
# round trips through `trainsim collective` (its output, calibrated, gives
# back the topology's constants), the fragment and its residuals, and the
# errors a bad input gets (exit 2, FILE:LINE and what was expected).
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand,
# from the top build directory: srcdir=. sh tests/calibrate.sh
set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-calibrate.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE
data=$srcdir/tests/data/calibrate
bekman=$data/bekman-a100-8gpu-all-reduce.log
ib=$data/synthetic-a100-2x8-1hdr-all-reduce.log
squares=$data/eleutherai-a100-squares.csv
launches=$data/launches-synthetic.csv

# fragment_value KEY: the number after "KEY: " in the fragment's last line
# ($tmp/out), its unit dropped.
fragment_value () {
  tail -n 1 "$tmp/out" | sed -n "s/.*$1: \\([0-9.e+-]*\\).*/\\1/p"
}

# near DESC GOT WANT TOL: records whether GOT is within TOL (a fraction)
# of WANT.
near () {
  if [ -z "$2" ]; then
    fail_because "$1: no value (exit $rc): $(tail -n 2 "$tmp/out")"
  elif ! awk -v g="$2" -v w="$3" -v t="$4" \
         'BEGIN { d = g / w - 1; exit !(d <= t && -d <= t) }'; then
    fail_because "$1 $2, expected $3 within $(awk -v t="$4" 'BEGIN { print t * 100 }') %"
  fi
}

# refuses DESC REGEX ARG...: records whether `trainsim ARG...` exits 2
# saying REGEX on stderr.
refuses () {
  desc=$1
  regex=$2
  shift 2
  ts "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eq -- "$regex" "$tmp/err" || fail_because "stderr lacks /$regex/: $(cat "$tmp/err")"
  verdict "$desc"
}

# --- usage ----------------------------------------------------------------------

for k in "" nccl gemm launch; do
  # shellcheck disable=SC2086
  "$TRAINSIM" calibrate $k --help >"$tmp/help" 2>&1 || fail_because "exit status $?"
  sed -n 2p "$tmp/help" | grep -q "^  trainsim calibrate ${k:+$k }\\[OPTION\\.\\.\\.\\] " ||
    fail_because "usage line: $(sed -n 2p "$tmp/help")"
  verdict "calibrate ${k:+$k }--help exits 0 and names the command"
done
refuses "calibrate without a kind exits 2" "expected what to calibrate: nccl, gemm, launch" \
  calibrate
refuses "an unknown kind exits 2, naming the known ones" "unknown kind 'frob' \\(known: nccl" \
  calibrate frob
refuses "calibrate nccl without a log exits 2" "expected a topology and at least one log" \
  calibrate nccl selene

# --- the shipped link constants, from the published logs ------------------------

# NVSwitch: Bekman's 8 x A100 all-reduce, 32 KiB-16 GiB. Worked out: its
# 4-16 GiB rows reach 233.9-234.9 GB/s, 0.78 of 300 and more; the fit puts
# a 15.5 us step latency under the small rows (which an nccl-tests run of
# -g 8 slows: one thread launches on all 8 GPUs), which leaves the 1 GiB
# row's 229 GB/s to a latency and the bandwidth to 0.784, 1.8 % above the
# shipped 0.77 (230 / 300, from the 1 GiB point). Sizes of 1 MiB and above,
# what training's collectives move: 0.781, within 2 % of 0.77.
ts calibrate nccl selene "$bekman"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
near "efficiency" "$(fragment_value efficiency)" 0.784 0.02
tail -n 1 "$tmp/out" | grep -q '^intra_node: {efficiency: [0-9.]*, latency: [0-9.]*us}$' ||
  fail_because "fragment: $(tail -n 1 "$tmp/out")"
[ "$(grep -c '^# bekman-a100-8gpu-all-reduce.log:[0-9]* *all_reduce ' "$tmp/out")" -eq 20 ] ||
  fail_because "not 20 residual rows"
grep -q '^# MAPE [0-9.]* % over the rows (the topology.s constants: [0-9.]* %)' "$tmp/out" ||
  fail_because "no MAPE line"
grep -q 'no device list: one node of the topology' "$tmp/out" ||
  fail_because "does not say it took one node for the log without a device list"
verdict "calibrate nccl on Bekman's 8 x A100 log: efficiency 0.784, a residual row each"

# The fragment, given back to the topology, predicts what the table says.
eff=$(fragment_value efficiency)
lat=$(fragment_value latency)
fitted=$(awk '$5 == 4294967296 { print $7 }' "$tmp/out")
ts collective selene -b 4G -e 4G --set intra_node.efficiency="$eff" --set intra_node.latency="${lat}us"
[ "$rc" -eq 0 ] || fail_because "collective with the fragment's values: exit $rc"
near "4 GiB bus bandwidth" "$(awk '$1 == 4294967296 { print $8 }' "$tmp/out")" "$fitted" 0.001
verdict "the fragment's values, set on the topology, give the table's fitted bus bandwidth"

ts calibrate nccl selene "$bekman" --min-size 1MiB
near "efficiency" "$(fragment_value efficiency)" 0.77 0.02
grep -q '5 rows outside --min-size and --max-size left out' "$tmp/out" ||
  fail_because "does not count the rows left out"
verdict "from 1 MiB up it gives the shipped NVSwitch efficiency 0.77 within 2 %"

# InfiniBand HDR, one NIC a node (synthetic from NVIDIA/nccl #1048's 24
# GB/s): worked out, the model gives 23.96 GB/s at 0.96, so 0.96 x 24 /
# 23.96 = 0.9616; the rows are too large to tell the latency, which stays.
ts calibrate nccl apollo-a100-1ib "$ib"
near "efficiency" "$(fragment_value efficiency)" 0.96 0.02
near "efficiency" "$(fragment_value efficiency)" 0.9616 0.002
[ "$(tail -n 1 "$tmp/out")" = "inter_node: {efficiency: $(fragment_value efficiency)}" ] ||
  fail_because "fragment: $(tail -n 1 "$tmp/out")"
grep -q 'latency 5us a step (5us), kept' "$tmp/out" || fail_because "latency not kept"
grep -q '16 ranks, 8 on each of 2 nodes' "$tmp/out" || fail_because "ranks not from the device list"
verdict "calibrate nccl on the 2 x 8 A100 one-HDR log gives the shipped 0.96 within 2 %"

# --- round trips: trainsim collective's own output gives its constants back -----

for op in all_reduce all_gather reduce_scatter alltoall sendrecv; do
  "$TRAINSIM" collective selene --op "$op" -b 1K -e 1G >"$tmp/$op.log"
  ts calibrate nccl selene "$tmp/$op.log"
  near "$op efficiency" "$(fragment_value efficiency)" 0.77 0.002
  near "$op latency" "$(fragment_value latency)" 2 0.02
  verdict "collective --op $op on one node, calibrated: 0.77 and 2 us back"
done
"$TRAINSIM" collective selene --gpus 32 -b 64K -e 1G >"$tmp/inter.log"
ts calibrate nccl selene --gpus 32 "$tmp/inter.log"
near "efficiency" "$(fragment_value efficiency)" 0.96 0.002
near "latency" "$(fragment_value latency)" 5 0.02
verdict "collective on 4 nodes, calibrated with --gpus 32: the HDR 0.96 and 5 us back"
# A slower link than the topology says: 270 of its 300 GB/s, and 3 us.
"$TRAINSIM" collective selene -b 1K -e 1G --set intra_node.bandwidth=270GB/s \
  --set intra_node.latency=3us >"$tmp/slow.log"
ts calibrate nccl selene "$tmp/slow.log"
near "efficiency" "$(fragment_value efficiency)" 0.693 0.003
near "latency" "$(fragment_value latency)" 3 0.02
verdict "a link of 270 GB/s and 3 us, calibrated on 300: 0.77 x 0.9 = 0.693 and 3 us"

# An older nccl-tests' layout (no root column, "error" for #wrong, no Group
# in the device lines) reads as the newer one.
awk '/^#  *size  *count/ { sub(/  root/, ""); sub(/#wrong/, " error") }
     /^ *[0-9]/ { $5 = "" } { print }' "$bekman" >"$tmp/old.log"
ts calibrate nccl selene "$bekman"
tail -n 1 "$tmp/out" >"$tmp/new.frag"
ts calibrate nccl selene "$tmp/old.log"
tail -n 1 "$tmp/out" | cmp -s - "$tmp/new.frag" || fail_because "fragments differ"
verdict "a log without the root column gives the same fit"

# --- gemm and launch -------------------------------------------------------------

# The squares and cubes alone run faster than training's GEMMs, to which
# the shipped 0.785 was fitted: worked out, 0.859 (MAPE 7.6 % against 9.0 %
# at 0.785), Bekman's best A100 GEMM being 86 % of peak.
ts calibrate gemm a100-sxm4-80gb "$squares"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
near "matmul_efficiency" "$(fragment_value matmul_efficiency)" 0.859 0.02
awk -v e="$(fragment_value matmul_efficiency)" 'BEGIN { exit !(e > 0.785) }' ||
  fail_because "not above the shipped 0.785"
[ "$(grep -c '^# *[0-9][0-9]* *[0-9][0-9]* *[0-9][0-9]* .* fp16 ' "$tmp/out")" -eq 51 ] ||
  fail_because "not 51 residual rows"
verdict "calibrate gemm on EleutherAI's A100 squares: 0.859, above the shipped 0.785"

{
  sed -n 1,5p "$squares"
  echo id,batch,m,n,k,dtype,tflops
  gemm_cases "$srcdir/experiments/validation/eleutherai-a100-gemm.yaml" |
    awk '$1 ~ /^(mm-m-sweep|bmm-bsweep|bmm-msweep)-/ {
           print $1 "," $2 "," $3 "," $4 "," $5 ",fp16," $6 }'
} >"$tmp/squares.csv"
cmp -s "$tmp/squares.csv" "$squares" || fail_because "the CSV no longer matches the YAML"
verdict "the GEMM CSV is the validation file's squares and cubes, as its README makes it"

# Round trips of the device curve: the rates the fit itself prints give
# its value back; scaled by 0.785 / 0.859 (the GEMMs are compute-bound but
# one), the curve of the shipped 0.785 gives 0.785 back.
ts calibrate gemm a100-sxm4-80gb "$squares"
fitted=$(fragment_value matmul_efficiency)
for target in "$fitted" 0.785; do
  { echo batch,m,n,k,dtype,tflops
    awk -v s="$target" -v f="$fitted" '/^# +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +fp16 / {
      printf "%s,%s,%s,%s,fp16,%.6f\n", $3, $4, $5, $6, $9 * s / f }' "$tmp/out"
  } >"$tmp/curve.csv"
  "$TRAINSIM" calibrate gemm a100-sxm4-80gb "$tmp/curve.csv" >"$tmp/curve.out" 2>"$tmp/err" ||
    fail_because "exit status $? on the $target curve"
  got=$(tail -n 1 "$tmp/curve.out" | sed 's/.*: *//; s/[^0-9.]//g')
  awk -v g="$got" -v t="$target" 'BEGIN { d = g / t - 1; exit !(d < 0.02 && d > -0.02) }' ||
    fail_because "the $target curve calibrates to $got"
done
verdict "calibrate gemm: a device's own curve gives its efficiency back within 2 % (0.859, 0.785)"

ts calibrate launch "$launches"
[ "$(tail -n 1 "$tmp/out")" = "host: {kernel_launch: 12.5us}" ] ||
  fail_because "fragment: $(tail -n 1 "$tmp/out")"
grep -q 'intercept 800us' "$tmp/out" || fail_because "intercept: $(grep intercept "$tmp/out")"
verdict "calibrate launch: the slope 12.5 us and the intercept 0.8 ms of an exact line"

# A table as a person or a spreadsheet writes one (output/plot-table.h,
# plot_table_read): a byte-order mark, CRLF, blanks around the cells,
# quoted cells, and notes and blank lines between the rows.
printf '\357\273\277kernels, host_seconds\r\n 100 , 0.00205\r\n# a note\r\n"200", "0.0033"\r\n\r\n400,0.0058\r\n' \
  >"$tmp/hand.csv"
ts calibrate launch "$tmp/hand.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc: $(cat "$tmp/err")"
[ "$(tail -n 1 "$tmp/out")" = "host: {kernel_launch: 12.5us}" ] ||
  fail_because "fragment: $(tail -n 1 "$tmp/out")"
[ "$(awk '/^# +[0-9]+ +[0-9]+ / { printf "%s ", $2 }' "$tmp/out")" = "2 4 6 " ] ||
  fail_because "the rows' lines: $(grep '^# *[0-9]' "$tmp/out")"
verdict "calibrate launch reads a hand-written CSV, each row's line said as in the file"

# --- the output ------------------------------------------------------------------

ts calibrate nccl selene "$bekman" -o "$tmp/frag.yaml"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q '^intra_node: {efficiency: ' "$tmp/frag.yaml" || fail_because "no values in the file"
grep -q '^intra_node' "$tmp/out" && fail_because "the values went to stdout too"
grep -q 'all_reduce .* %$' "$tmp/out" || fail_because "no residual table on stdout"
cp "$tmp/frag.yaml" "$tmp/first.yaml"
ts calibrate nccl selene "$bekman" -o "$tmp/frag.yaml"
cmp -s "$tmp/frag.yaml" "$tmp/first.yaml" || fail_because "a second run differs"
[ "$(ls "$tmp" | grep -c '^frag.yaml.')" -eq 0 ] || fail_because "a temporary file stayed"
verdict "-o writes the fragment, the report goes to stdout, and twice gives the same bytes"

cp "$launches" "$tmp/launches.csv"
ts calibrate launch "$tmp/launches.csv" -o "$tmp/launches.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q "would be written over" "$tmp/err" || fail_because "stderr: $(cat "$tmp/err")"
cmp -s "$launches" "$tmp/launches.csv" || fail_because "the input changed"
verdict "-o onto the input exits 2 and leaves the input alone"

# --- bad input: nccl ---------------------------------------------------------------

refuses "a file that is not nccl-tests output exits 2" \
  "selene.yaml:1: not nccl-tests output: no column header" \
  calibrate nccl selene "$srcdir/topologies/selene.yaml"
sed 's/^\( *1048576 .*float *sum *-1 *\)101.9/\1fast/' "$bekman" >"$tmp/bad-time.log"
refuses "a row without a time exits 2 at its line" \
  "bad-time.log:20: expected a time in microseconds .* column 6" \
  calibrate nccl selene "$tmp/bad-time.log"
sed '/^ *[0-9]/{/^ *32768 /!d;}' "$bekman" >"$tmp/one-row.log"
refuses "a log of one row exits 2: too few to fit" "one-row.log:13: 1 row of one size" \
  calibrate nccl selene "$tmp/one-row.log"
sed 's/all_reduce_perf/broadcast_perf/' "$bekman" >"$tmp/bcast.log"
refuses "a test trainsim does not model exits 2, naming those it does" \
  "bcast.log:[0-9]*: broadcast_perf: trainsim models the collectives all_reduce" \
  calibrate nccl selene "$tmp/bcast.log"
sed 's/^#  Rank  1 /#  Rank  0 /' "$ib" >"$tmp/twice.log"
refuses "a rank listed twice exits 2 (processes that ran alone)" \
  "twice.log:[0-9]*: rank 0 is listed again" calibrate nccl apollo-a100-1ib "$tmp/twice.log"
sed 's/^\(#  Rank  8 .*on \)     node2/\1     node1/' "$ib" >"$tmp/uneven.log"
refuses "ranks spread unevenly over the hosts exit 2" "uneven.log:[0-9]*: .*unevenly" \
  calibrate nccl apollo-a100-1ib "$tmp/uneven.log"
sed 's/node2/node1/' "$ib" >"$tmp/crowded.log"
refuses "16 ranks on one host of an 8-GPU topology exit 2" \
  "crowded.log:[0-9]*: 16 ranks, 16 on each node: more ranks on a node" \
  calibrate nccl apollo-a100-1ib "$tmp/crowded.log"
refuses "logs of one node and of two, together, exit 2" "calibrate the intra-node link .* first" \
  calibrate nccl apollo-a100-1ib "$bekman" "$ib"
grep -v 'all_reduce_perf' "$bekman" >"$tmp/anon.log"
refuses "a log that does not name its test needs --op" "give it with --op" \
  calibrate nccl selene "$tmp/anon.log"
ts calibrate nccl selene --op all_reduce "$tmp/anon.log"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
verdict "...and reads with --op all_reduce"
refuses "--op against the log's test exits 2" "runs all_reduce_perf, but --op says all_gather" \
  calibrate nccl selene --op all_gather "$bekman"
refuses "a size without its unit exits 2" "take sizes with their unit" \
  calibrate nccl selene --min-size 1024 "$bekman"

# --- bad input: gemm and launch ---------------------------------------------------

# gemm_refuses DESC REGEX NAME TEXT: records whether calibrate gemm
# refuses the CSV TEXT (\n for line ends), written to $tmp/NAME, saying
# REGEX.
gemm_refuses () {
  printf '%b' "$4" >"$tmp/$3"
  refuses "$1" "$2" calibrate gemm a100-sxm4-80gb "$tmp/$3"
}
ok_row='4096,4096,4096,fp16,0.001'
gemm_refuses "a GEMM table without k exits 2, saying the columns" \
  "no-k.csv:1: expected a header naming the columns m, n, k, dtype .*; it names m, n, dtype, time" \
  no-k.csv 'm,n,dtype,time\n4096,4096,fp16,0.001\n'
gemm_refuses "a size of 0 exits 2 at its line" "zero.csv:3: expected a size in column m" \
  zero.csv "m,n,k,dtype,time\n$ok_row\n0,4096,4096,fp16,0.001\n"
gemm_refuses "a negative time exits 2 at its line" "negative.csv:4: expected a time in column time_us" \
  negative.csv '# a note\nm,n,k,dtype,time_us\n4096,4096,4096,fp16,700\n4096,4096,4096,fp16,-700\n'
gemm_refuses "an empty cell exits 2 at its line" "empty.csv:2: .*the cell is empty" \
  empty.csv "m,n,k,dtype,time\n4096,4096,4096,fp16,\n$ok_row\n"
gemm_refuses "one GEMM exits 2: too few to fit" \
  "one.csv:1: 1 GEMM after the header: fitting needs at least 2" one.csv "m,n,k,dtype,time\n$ok_row\n"
gemm_refuses "a time faster than the peak exits 2 (a unit slip)" "ms.csv:3: .* above the fp16 peak" \
  ms.csv "m,n,k,dtype,time\n$ok_row\n8192,8192,8192,fp16,0.0000045\n"
gemm_refuses "an unknown dtype exits 2, naming the known ones" "fp4.csv:2: expected a dtype .*fp16" \
  fp4.csv "m,n,k,dtype,time\n4096,4096,4096,fp4,0.001\n$ok_row\n"
gemm_refuses "a row of more cells than the header exits 2" \
  "cells.csv:2: 6 fields, but the header has 5" cells.csv "m,n,k,dtype,time\n$ok_row,7\n"
refuses "a file that is not a GEMM table exits 2, quoting nothing of it" \
  "selene.yaml:11: not a GEMM table: expected a header" \
  calibrate gemm a100-sxm4-80gb "$srcdir/topologies/selene.yaml"
refuses "an unknown device exits 2, naming the known ones" "unknown device 'a100-bogus'; known devices:" \
  calibrate gemm a100-bogus "$squares"
printf 'kernels,host_seconds\n100,0.002\n100,0.0021\n' >"$tmp/same.csv"
refuses "launches of one kernel count exit 2" "same.csv:1: 2 rows of one count" \
  calibrate launch "$tmp/same.csv"
printf 'kernels,host_seconds\n100,0.002\n200,0.001\n' >"$tmp/down.csv"
refuses "a host time that falls with the kernels exits 2" "down.csv: the host time does not grow" \
  calibrate launch "$tmp/down.csv"
printf 'kernels,host_seconds,kernels\n100,0.002,1\n' >"$tmp/twice.csv"
refuses "a header naming a column twice exits 2" "twice.csv:1: the header names a column twice" \
  calibrate launch "$tmp/twice.csv"
printf 'kernels,seconds\n100,0.002\n200,0.004\n' >"$tmp/named.csv"
refuses "a launch table without host_seconds exits 2" "named.csv:1: no column host_seconds" \
  calibrate launch "$tmp/named.csv"

finish
