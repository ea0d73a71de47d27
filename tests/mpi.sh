#!/bin/sh
# tests/mpi.sh: `trainsim sweep` under mpirun, in a build with MPI
# (./configure --with-mpi): the rows of 2 and 3 ranks are the bytes of the
# threaded sweep with -j 1 and -j 2 (CSV to a file, JSON lines on stdout,
# --feasible-only), shards run under MPI merge into the unsharded file,
# --resume under MPI completes a cut file, mpirun -n 1 is a threaded sweep,
# and bad input or a failing point stops every rank with one message and
# the exit status of the threaded sweep. Without MPI: one skipped case.
#
# Run by automake with TRAINSIM (the binary) and srcdir (the top source
# directory) in the environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/mpi.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed',
# and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

if ! "$TRAINSIM" --version | grep -q 'with MPI'; then
  echo "ok 1 - # SKIP not built with MPI"
  echo "1 passed, 0 failed"
  exit 0
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "ok 1 - # SKIP no mpirun (Debian: apt-get install openmpi-bin)"
  echo "1 passed, 0 failed"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-mpi.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

# The experiments name gpt3-175b and selene: found in the source tree.
TRAINSIM_DATA_PATH=$srcdir
export TRAINSIM_DATA_PATH
# Open MPI refuses to run as root (CI's containers) unless told twice, and
# more ranks than cores unless told once; MPICH ignores these.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
  OMPI_MCA_rmaps_base_oversubscribe
# A hung rank fails the case instead of the whole test run.
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 300"



# mpi N ARG...: runs trainsim on N ranks, the same way.
mpi () {
  ranks=$1
  shift
  $limit mpirun -n "$ranks" "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}
# same A B: fails the case unless files A and B hold the same bytes.
same () {
  cmp -s "$1" "$2" || fail_because "$(basename "$1") and $(basename "$2") differ"
}
expect_rc () {
  [ "$rc" -eq "$1" ] || fail_because "exit status $rc, expected $1"
}
lines () {
  wc -l <"$1" | tr -d ' '
}

# 320 GPT-3 175B points, as in sweep.sh.
set -- sweep "$srcdir/experiments/gpt3-175b-selene.yaml" \
  --sweep topology.inter_node.nics_per_node=1..8 --sweep parallel.global_batch=64..512x2 \
  --sweep cost.gpu_hour_usd=1..10

ts "$@" -j 1 -o "$tmp/j1.csv"
expect_rc 0
ts "$@" -j 2 -o "$tmp/j2.csv"
expect_rc 0
same "$tmp/j1.csv" "$tmp/j2.csv"
[ "$(lines "$tmp/j1.csv")" -eq 322 ] || fail_because "$(lines "$tmp/j1.csv") lines, expected 322"
verdict "the threaded sweeps with -j 1 and -j 2 agree (the reference)"

mpi 2 "$@" -o "$tmp/mpi2.csv"
expect_rc 0
same "$tmp/mpi2.csv" "$tmp/j1.csv"
same "$tmp/mpi2.csv" "$tmp/j2.csv"
[ -s "$tmp/out" ] && fail_because "rows also went to stdout"
verdict "mpirun -n 2 sweep -o FILE writes the bytes of -j 1 and -j 2"

mpi 3 "$@" -o "$tmp/mpi3.csv"
expect_rc 0
same "$tmp/mpi3.csv" "$tmp/j1.csv"
verdict "mpirun -n 3 (two workers taking points as they ask) writes the same bytes"

ts "$@" -j 2 --format jsonl
expect_rc 0
cp "$tmp/out" "$tmp/j2.jsonl"
mpi 2 "$@" --format jsonl
expect_rc 0
same "$tmp/out" "$tmp/j2.jsonl"
[ "$(lines "$tmp/out")" -eq 321 ] || fail_because "$(lines "$tmp/out") lines on stdout, expected 321"
verdict "mpirun -n 2 sweep --format jsonl on stdout writes the bytes of -j 2"

# Infeasible points (tp 3) dropped: rows no longer stand for points.
mpi 1 "$@" --sweep parallel.tp=3,8 -j 2 --feasible-only
cp "$tmp/out" "$tmp/mpi1-feasible.csv"
expect_rc 0
ts "$@" --sweep parallel.tp=3,8 -j 2 --feasible-only
same "$tmp/out" "$tmp/mpi1-feasible.csv"
[ "$(lines "$tmp/out")" -eq 322 ] || fail_because "$(lines "$tmp/out") lines, expected 322"
verdict "mpirun -n 1 is a threaded sweep"

mpi 3 "$@" --sweep parallel.tp=3,8 --feasible-only
expect_rc 0
same "$tmp/out" "$tmp/mpi1-feasible.csv"
verdict "mpirun -n 3 sweep --feasible-only writes the bytes of -j 2"

# --- shards and resume ----------------------------------------------------------

mpi 2 "$@" --shard 1/3 -o "$tmp/shard1.csv"
expect_rc 0
mpi 3 "$@" --shard 2/3 -o "$tmp/shard2.csv"
expect_rc 0
ts "$@" -j 2 --shard 3/3 -o "$tmp/shard3.csv"
expect_rc 0
ts "$@" -j 2 --shard 2/3 -o "$tmp/shard2-threads.csv"
same "$tmp/shard2.csv" "$tmp/shard2-threads.csv"
ts merge "$tmp/merged.csv" "$tmp/shard1.csv" "$tmp/shard2.csv" "$tmp/shard3.csv"
expect_rc 0
same "$tmp/merged.csv" "$tmp/j1.csv"
verdict "shards 1/3 and 2/3 under MPI and 3/3 on threads merge into the unsharded bytes"

head -c 20000 "$tmp/j1.csv" >"$tmp/resumed.csv"
mpi 2 "$@" -o "$tmp/resumed.csv" --resume
expect_rc 0
same "$tmp/resumed.csv" "$tmp/j1.csv"
verdict "mpirun -n 2 sweep --resume cuts a partial row away and completes the file"

head -n 50 "$tmp/shard2-threads.csv" >"$tmp/shard2-resumed.csv"
mpi 3 "$@" --shard 2/3 -o "$tmp/shard2-resumed.csv" --resume
expect_rc 0
same "$tmp/shard2-resumed.csv" "$tmp/shard2-threads.csv"
mpi 2 "$@" --shard 2/3 -o "$tmp/shard2-resumed.csv" --resume
expect_rc 0
same "$tmp/shard2-resumed.csv" "$tmp/shard2-threads.csv"
verdict "mpirun sweep --shard 2/3 --resume completes a shard, and leaves a complete one as it is"

# --- errors -------------------------------------------------------------------

# expect_mpi_error DESC STATUS PATTERN ARG...: on 3 ranks, trainsim exits
# STATUS and says PATTERN (grep -E) on stderr exactly once.
expect_mpi_error () {
  desc=$1
  status=$2
  pattern=$3
  shift 3
  mpi 3 "$@"
  expect_rc "$status"
  count=$(grep -Ec -- "$pattern" "$tmp/err")
  [ "$count" -eq 1 ] || fail_because "stderr says '$pattern' $count times, expected once"
  verdict "$desc"
}

expect_mpi_error "an unknown --set key stops every rank with exit 2 and one message" 2 \
  "--set paralel\.tp: unknown key 'paralel'" "$@" --set paralel.tp=4
expect_mpi_error "a bad --shard stops every rank with exit 2 and one message" 2 \
  '--shard 3/2: expected K/N' "$@" --shard 3/2
expect_mpi_error "a missing experiment file stops every rank with exit 2 and one message" 2 \
  'cannot read|No such file' sweep "$tmp/no-such.yaml"

cp "$tmp/shard1.csv" "$tmp/other.csv"
expect_mpi_error "rank 0 refusing --resume of another sweep's file stops every rank (exit 2)" 2 \
  'come from other settings' "$@" -o "$tmp/other.csv" --resume --sweep parallel.tp=8
same "$tmp/other.csv" "$tmp/shard1.csv"
verdict "... and leaves the file alone"

expect_mpi_error "an output in a missing directory stops every rank with exit 1" 1 \
  'cannot write' "$@" -o "$tmp/no/such/dir/rows.csv"

# A point whose model cannot be read (an I/O error, not an infeasible
# point) fails the sweep after the rows before it, as on threads.
if [ -r /proc/self/mem ]; then
  set -- sweep "$srcdir/experiments/gpt3-175b-selene.yaml" \
    --sweep 'model=[gpt3-175b, gpt3-175b, gpt3-175b, /proc/self/mem, gpt3-175b]' \
    --sweep topology.inter_node.nics_per_node=1..4
  ts "$@" -j 2 -o "$tmp/fail-threads.csv"
  threads_rc=$rc
  mpi 3 "$@" -o "$tmp/fail-mpi.csv"
  [ "$threads_rc" -eq 1 ] || fail_because "the threaded sweep exits $threads_rc, expected 1"
  expect_rc 1
  same "$tmp/fail-mpi.csv" "$tmp/fail-threads.csv"
  [ "$(lines "$tmp/fail-mpi.csv")" -eq 14 ] ||
    fail_because "$(lines "$tmp/fail-mpi.csv") lines, expected 14 (identity, header, the points before)"
  count=$(grep -Ec 'rank [12]: .*/proc/self/mem' "$tmp/err")
  [ "$count" -eq 1 ] || fail_because "stderr names the failing rank and file $count times"
  verdict "a point failing on a worker stops the sweep after the rows before it (exit 1)"
else
  skip "a point failing on a worker stops the sweep after the rows before it" \
    "no /proc/self/mem"
fi

finish
