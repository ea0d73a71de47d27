#!/bin/sh
# tests/scale.sh: plans at the edges of what the simulator can count and
# hold: a step past 2^63 ps, sizes whose products wrap 32 bits, and plans
# over the simulator's memory and event budgets (TRAINSIM_MAX_SIM_MEMORY,
# TRAINSIM_MAX_EVENTS) are each a clear error for that point (exit 2 for
# `run`, an infeasible row in `sweep`), never an abort.
#
# Run by automake with TRAINSIM (the binary) and srcdir (the top source
# directory) in the environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/scale.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F
# failed', and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-scale.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

TRAINSIM_DATA_PATH=$srcdir
export TRAINSIM_DATA_PATH
tiny=$srcdir/experiments/tiny.yaml

# expect_error DESC PATTERN ARG...: trainsim exits 2 and says PATTERN (a
# grep -E pattern) on stderr, with no assertion or abort.
expect_error () {
  desc=$1
  pattern=$2
  shift 2
  ts "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eq -- "$pattern" "$tmp/err" || fail_because "stderr does not match '$pattern'"
  if grep -q -e 'ERROR' -e 'Bail out' "$tmp/err"; then
    fail_because "an assertion failed"
  fi
  verdict "$desc"
}

# Each kernel under a day at an MFU of 5e-8, but 1024 sequences of them
# are more than 2^63 ps (the old executor's sum wrapped and the engine's
# at >= now assertion aborted).
expect_error "run: a step past 2^63 ps exits 2 and says why" \
  "tiny.yaml: the step would last longer than simulated time can count" \
  run "$tiny" --set 'compute={mfu: 5e-8}' --set parallel.global_batch=1024

ts sweep "$tiny" --sweep 'compute.mfu=0.4,5e-8' \
  --set parallel.global_batch=1024 -o "$tmp/mfu.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q '^0\.4,ok,' "$tmp/mfu.csv" 2>/dev/null ||
  fail_because "no ok row for mfu 0.4"
grep -q '^5e-8,infeasible,"the step would last longer' "$tmp/mfu.csv" \
  2>/dev/null || fail_because "no infeasible row with the reason for 5e-8"
verdict "sweep: a step past 2^63 ps is an infeasible row with the reason"

selene=$srcdir/experiments/gpt3-175b-selene.yaml

# 2^27 GPUs with 127 NICs a node: 2^24 nodes of 256 link resources, a
# count that wrapped 32 bits to 0 in the old executor (an assertion in
# flow_start). Symmetric mode needs a few nodes' resources, added as
# flows first load them.
ts run "$selene" --set gpus=134217728 --set parallel.dp=1048576 \
  --set parallel.global_batch=1048576 \
  --set topology.inter_node.nics_per_node=127
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q '134217728 GPUs' "$tmp/out" || fail_because "no report"
verdict "run: 2^27 GPUs with 127 NICs a node (resource ids past 32 bits)"

# limited KIB CMD...: runs trainsim under an address-space limit of KIB
# KiB; rc 77 when the binary cannot start so (AddressSanitizer reserves
# terabytes).
limited () {
  kib=$1
  shift
  (ulimit -v "$kib" && exec "$TRAINSIM" "$@") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if grep -q AddressSanitizer "$tmp/err"; then
    rc=77
  fi
}

# The old search asked 19 GB for 2^30 GPUs' resources.
limited 2097152 search "$selene" --set gpus=1073741824 --set parallel.dp=8388608 \
  --set parallel.global_batch=1073741824 -j 2
if [ "$rc" -eq 77 ]; then
  skip "search: 2^30 GPUs in under 2 GiB" "sanitizer build"
else
  [ "$rc" -eq 0 ] || fail_because "exit status $rc"
  grep -q '1073741824 GPUs' "$tmp/out" || fail_because "no plans"
  verdict "search: 2^30 GPUs in under 2 GiB"
fi

# A trace of 2.5 M spans (345 MB, the host thread's included) streams to
# its file: the run needs no more memory than without it (230 MB; a run
# that held every span, twice, would need over 900 MB).
limited 524288 run "$selene" --full --set parallel.global_batch=128 \
  --trace "$tmp/trace.json"
if [ "$rc" -eq 77 ]; then
  skip "run --full --trace streams the trace" "sanitizer build"
else
  [ "$rc" -eq 0 ] || fail_because "exit status $rc"
  if [ -s "$tmp/trace.json" ]; then
    head -c 17 "$tmp/trace.json" | grep -q '^{"traceEvents": \[' ||
      fail_because "the trace does not start its document"
    [ "$(tail -c 5 "$tmp/trace.json")" = "}
]}" ] || fail_because "the trace does not end its document"
  else
    fail_because "no trace"
  fi
  verdict "run --full --trace streams the trace in 512 MiB"
fi
rm -f "$tmp/trace.json"

# A trace to a symlink goes through it to its target; the link stays.
: >"$tmp/target.json"
ln -s target.json "$tmp/link.json"
ts run "$tiny" --trace "$tmp/link.json"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
[ -L "$tmp/link.json" ] || fail_because "the symlink was replaced"
grep -q '"traceEvents"' "$tmp/target.json" || fail_because "the target has no trace"
verdict "run --trace writes through a symlink"

# The budgets: plans whose op graph would not fit are refused before any
# of it is allocated (the old executor ran 268 M micro-batches until it
# ran out of memory; timeout bounds this test on such a binary).
expect_budget () {
  desc=$1
  pattern=$2
  shift 2
  if command -v timeout >/dev/null 2>&1; then
    timeout 60 "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err"
  else
    "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err"
  fi
  rc=$?
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eq -- "$pattern" "$tmp/err" || fail_because "stderr does not match '$pattern'"
  verdict "$desc"
}

expect_budget "run: 268 M micro-batches are over the memory budget" \
  'tiny.yaml: simulating this plan would take about .* GiB of memory .*more than the budget of 4.0 GiB.*TRAINSIM_MAX_SIM_MEMORY' \
  run "$tiny" --set parallel.global_batch=268435456 --set parallel.micro_batch=1
expect_budget "run --full: 2^24 GPUs are over the memory budget" \
  'more than the budget of 4.0 GiB' \
  run "$selene" --full --set gpus=16777216 --set parallel.dp=131072 \
  --set parallel.global_batch=131072

TRAINSIM_MAX_SIM_MEMORY=1000PiB expect_budget \
  "no budget lets a plan past 2^32 ops run" \
  'more ops \(177033183232\) or ranks than the simulator can index' \
  run "$selene" --full --set gpus=1073741824 --set parallel.dp=8388608 \
  --set parallel.global_batch=8388608
TRAINSIM_MAX_SIM_MEMORY=16KiB expect_error \
  "TRAINSIM_MAX_SIM_MEMORY lowers the memory budget" \
  'more than the budget of 16.0 KiB: .*raise TRAINSIM_MAX_SIM_MEMORY' \
  run "$tiny" --full
TRAINSIM_MAX_EVENTS=100 expect_error \
  "TRAINSIM_MAX_EVENTS lowers the event budget" \
  'simulating this plan would take about [0-9]+ events, more than the budget of 100: .*raise TRAINSIM_MAX_EVENTS' \
  run "$tiny" --full
TRAINSIM_MAX_EVENTS=1e4 TRAINSIM_MAX_SIM_MEMORY='1 MiB' ts run "$tiny" --full
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
verdict "budgets in their variables let a plan under them run"
TRAINSIM_MAX_EVENTS=lots expect_error "a TRAINSIM_MAX_EVENTS that is not a count exits 2" \
  '^trainsim: TRAINSIM_MAX_EVENTS=lots: expected a count' run "$tiny"
TRAINSIM_MAX_SIM_MEMORY=12 expect_error "a TRAINSIM_MAX_SIM_MEMORY without a unit exits 2" \
  '^trainsim: TRAINSIM_MAX_SIM_MEMORY=12: expected an amount of memory' run "$tiny"

ts sweep "$tiny" --sweep 'parallel.global_batch=256,268435456' \
  --set parallel.micro_batch=1 -o "$tmp/budget.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q '^256,ok,' "$tmp/budget.csv" 2>/dev/null || fail_because "no ok row for 256"
grep -q '^268435456,infeasible,"simulating this plan would take about' \
  "$tmp/budget.csv" 2>/dev/null || fail_because "no infeasible row with the reason"
verdict "sweep: a plan over the budget is an infeasible row with the reason"

# topology.variability (issue 31): with a 5 % spread among the GPUs, GPT-3
# 175B loses a larger share of its step to the slowest GPU at 16,384 GPUs
# than at 1,024 (E[slowest of N] grows as sqrt (2 ln N)), and a 98,304-GPU
# prediction with variability runs (its time is a benchmark's, bench/).
share () {
  ts run "$selene" -f json --set topology.variability.gpu_speed_spread=0.05 "$@"
  sed -n 's/.*"iteration_time_s": \([0-9.e+-]*\).*"variability": \([0-9.e+-]*\).*/\2 \1/p' \
    "$tmp/out" | awk '{ printf "%.6f", $1 / $2 }'
}
small=$(share)
large=$(share --set gpus=16384 --set parallel.dp=128 --set parallel.global_batch=24576)
huge=$(share --set gpus=98304 --set parallel.dp=768 --set parallel.global_batch=147456)
awk -v a="$small" -v b="$large" -v c="$huge" \
  'BEGIN { exit !(a > 0.03 && b > a && c > b) }' ||
  fail_because "variability's share of the step: $small at 1,024 GPUs, $large at 16,384, $huge at 98,304"
verdict "run: a 5 % GPU spread costs more at 16,384 and 98,304 GPUs than at 1,024"

finish
