#!/bin/sh
# tests/sweep.sh: `trainsim sweep` and `trainsim merge` from the command
# line: rows and header, axes from the file and from --sweep (lists and
# ranges), infeasible points as rows, the same bytes with 1 and 2 threads,
# JSON lines, a killed sweep resumed into the bytes of an uninterrupted
# one, shards merged into the unsharded output, a file that is not a
# regular one refused by resume and merge at once, rows whose quoted cell
# holds a line break resumed and merged, zipped axes (their rows,
# resumed, sharded), one sweep at a time on an output (the others
# refused), --force killed leaving the file as it was, Ctrl-C's message,
# the count of points by status, and the errors of bad input (exit 2, with where and what would be valid).
#
# Run by automake with TRAINSIM (the binary) and srcdir (the top source
# directory) in the environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/sweep.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed',
# and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-sweep.XXXXXX") || exit 99
bg=
cleanup () {
  [ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE

# The experiments written below name gpt3-175b and selene: found in the
# source tree's models/ and topologies/.
TRAINSIM_DATA_PATH=$srcdir
export TRAINSIM_DATA_PATH

# lines FILE: its number of lines.
lines () {
  wc -l <"$1" | tr -d ' '
}

# nap: a twentieth of a second where sleep takes fractions, else a second.
nap () {
  sleep 0.05 2>/dev/null || sleep 1
}

# ts_within SECONDS ARG...: ts, but a trainsim still running after
# SECONDS is killed and $rc is 124: a case that used to hang fails instead.
ts_within () {
  limit=$(($1 * 20))
  shift
  "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$limit" -gt 0 ]; do
    nap
    limit=$((limit - 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=124
  else
    wait "$pid"
    rc=$?
  fi
}

# temp_of FILE: the temporary file beside FILE (.FILE.XXXXXX, outfile.h's
# name) that a sweep --force writes, or nothing.
temp_of () {
  for t in "$(dirname "$1")/.$(basename "$1")".??????; do
    [ -e "$t" ] && echo "$t" && return
  done
}

# background_rows FILE ARG...: starts trainsim ARG... in the background
# ($bg), and returns once it has written 40 lines, into FILE or into
# FILE's temporary file, or FILE's bytes have changed, or it has ended
# (after 20 s at most).
background_rows () {
  watched=$1
  shift
  cp "$watched" "$tmp/watched.before" 2>/dev/null || : >"$tmp/watched.before"
  "$TRAINSIM" "$@" >/dev/null 2>"$tmp/bg-err" &
  bg=$!
  limit=400
  while kill -0 "$bg" 2>/dev/null && [ "$limit" -gt 0 ]; do
    t=$(temp_of "$watched")
    [ -n "$t" ] && [ "$(lines "$t")" -ge 40 ] && break
    [ ! -s "$tmp/watched.before" ] && [ -e "$watched" ] && [ "$(lines "$watched")" -ge 40 ] && break
    [ -s "$tmp/watched.before" ] && ! cmp -s "$watched" "$tmp/watched.before" && break
    nap
    limit=$((limit - 1))
  done
}

# expect_error DESC PATTERN ARG...: trainsim exits 2 and says PATTERN (a
# grep -E pattern) on stderr.
expect_error () {
  desc=$1
  pattern=$2
  shift 2
  ts "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eq -- "$pattern" "$tmp/err" || fail_because "stderr does not match '$pattern'"
  verdict "$desc"
}

# A GPT-3 175B experiment whose sweep has an infeasible value: tp 3
# divides neither the 96 heads nor the 1024 GPUs.
exp=$tmp/exp.yaml
cat >"$exp" <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 512}
training: {recompute: full}
sweep:
  parallel.tp: [3, 8]
  topology.inter_node.nics_per_node: [1, 4]
EOF

# --- usage --------------------------------------------------------------------

ts sweep --help
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q 'Exit status' "$tmp/out" || fail_because "no exit statuses in --help"
grep -q -- '--zip=KEY=VALUES' "$tmp/out" || fail_because "no --zip in --help"
verdict "sweep --help exits 0 and lists --zip and the exit statuses"
ts merge --help
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q 'K order' "$tmp/out" || fail_because "--help does not say the shards go in K order"
verdict "merge --help exits 0 and says the shards go in K order"

# --- rows ---------------------------------------------------------------------

ts sweep "$srcdir/experiments/ib-interfaces.yaml" -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(lines "$tmp/out")" -eq 18 ] || fail_because "$(lines "$tmp/out") lines, expected 18"
head -n 1 "$tmp/out" | grep -Eq '^# trainsim-sweep settings=[0-9a-f]{64} shard=1/1 points=16$' ||
  fail_because "first line: $(head -n 1 "$tmp/out" | cut -c 1-120)"
sed -n 2p "$tmp/out" | grep -q '^gpus,topology\.inter_node\.nics_per_node,status,reason,iteration_time_s,' ||
  fail_because "header: $(sed -n 2p "$tmp/out" | cut -c 1-80)"
sed -n 3p "$tmp/out" | grep -q '^64,1,ok,,' || fail_because "first row is not gpus 64, 1 NIC, ok"
sed -n 18p "$tmp/out" | grep -q '^512,4,ok,,' || fail_because "last row is not gpus 512, 4 NICs, ok"
verdict "sweep ib-interfaces.yaml prints its identity, a header and 16 rows, the last axis fastest"
grep -q "$(printf '\r')" "$tmp/err" && fail_because "stderr is not a terminal, yet: $(cut -c 1-80 "$tmp/err")"
[ "$(cat "$tmp/err")" = "trainsim sweep: 16 points: 16 ok, 0 oom, 0 infeasible" ] ||
  fail_because "stderr holds more than the count of points: $(cut -c 1-80 "$tmp/err")"
verdict "sweep draws no progress line when stderr is not a terminal, only the count of points"

# On a terminal (script(1) gives one) sweep, search, validate and a long
# run draw the same progress line, and erase it before they end.
if command -v script >/dev/null 2>&1; then
  for c in "sweep $srcdir/experiments/ib-interfaces.yaml -o $tmp/tty.csv|/16 points" \
           "search $srcdir/experiments/gpt3-175b-selene.yaml|/[0-9][0-9]* plans" \
           "validate $srcdir/experiments/validation/megatron-readme.yaml|/1 cases" \
           "run $srcdir/experiments/gpt3-175b-selene.yaml --full --set gpus=128 --set parallel.dp=1 --set parallel.global_batch=128|/[0-9]* events"; do
    script -qec "$TRAINSIM ${c%%|*} >/dev/null" /dev/null >"$tmp/tty" 2>&1
    grep -q "\[[#.]*\] [0-9]*${c#*|}" "$tmp/tty" ||
      fail_because "${c%% *}: no progress line with '${c#*|}': $(tr '\r' '\n' <"$tmp/tty" | head -3)"
    tr '\r' '\n' <"$tmp/tty" | tail -n 1 | grep -q '[^ ]' &&
      fail_because "${c%% *}: the progress line is not erased"
  done
  verdict "sweep, search, validate and run --full draw one progress line on a terminal and erase it"
fi

ts sweep "$exp" -j 2 --sweep parallel.micro_batch=1,2 --sweep parallel.global_batch=512..2048x2
cp "$tmp/out" "$tmp/list-range.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(lines "$tmp/out")" -eq 26 ] || fail_because "$(lines "$tmp/out") lines, expected 2 + 2*2*2*3"
sed -n 2p "$tmp/out" |
  grep -q '^parallel\.tp,topology\.inter_node\.nics_per_node,parallel\.micro_batch,parallel\.global_batch,status,reason,' ||
  fail_because "header: $(sed -n 2p "$tmp/out" | cut -c 1-120)"
[ "$(cut -d, -f4 "$tmp/out" | sed 1,2d | sort -n | uniq | tr '\n' ' ')" = "512 1024 2048 " ] ||
  fail_because "global_batch values: $(cut -d, -f4 "$tmp/out" | sed 1,2d | sort -u | tr '\n' ' ')"
verdict "sweep --sweep with a list and a geometric range multiplies the axes"

infeasible=$(grep -c '^3,[0-9]*,[0-9]*,[0-9]*,infeasible,' "$tmp/list-range.csv")
feasible=$(grep -c '^8,[0-9]*,[0-9]*,[0-9]*,ok,,[0-9]' "$tmp/list-range.csv")
[ "$infeasible" -eq 12 ] || fail_because "$infeasible tp-3 rows are infeasible, expected 12"
[ "$feasible" -eq 12 ] || fail_because "$feasible tp-8 rows are ok, expected 12"
grep '^3,' "$tmp/list-range.csv" | head -n 1 | grep -q 'tp 3 must divide' ||
  fail_because "the infeasible row does not say why"
verdict "infeasible points are rows with status infeasible and the rule they break"

ts sweep "$exp" -j 2 --sweep parallel.micro_batch=1,2 --sweep parallel.global_batch=512..2048x2 \
  --feasible-only
[ "$(lines "$tmp/out")" -eq 14 ] || fail_because "$(lines "$tmp/out") lines, expected 14"
grep -q infeasible "$tmp/out" && fail_because "an infeasible row is left"
verdict "sweep --feasible-only drops the infeasible rows"

# pp 1: all of GPT-3 175B's 350 GB of weights and Adam state per 8 GPUs.
ts sweep "$exp" -j 2 --sweep parallel.tp=8 --sweep parallel.pp=1,16 --feasible-only
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -c '^8,[14],1,oom,"needs [0-9.]* GiB per GPU, more than the GPU.s 80\.0 GiB",[0-9]' "$tmp/out")" -eq 2 ] ||
  fail_because "no two oom rows with the memory needed"
[ "$(grep -c '^8,[14],16,ok,,' "$tmp/out")" -eq 2 ] || fail_because "no two ok rows"
verdict "points that do not fit in memory are oom rows with a result, kept by --feasible-only"

ts sweep "$exp" -j 1 --sweep parallel.micro_batch=1,2 --sweep parallel.global_batch=512..2048x2
cmp -s "$tmp/out" "$tmp/list-range.csv" || fail_because "-j 1 and -j 2 differ"
verdict "sweep -j 1 and -j 2 write the same bytes"

ts sweep "$exp" -j 2 --format jsonl --sweep parallel.micro_batch=1,2
cp "$tmp/out" "$tmp/rows.jsonl"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(lines "$tmp/out")" -eq 9 ] || fail_because "$(lines "$tmp/out") lines, expected 9"
head -n 1 "$tmp/out" | grep -Eq '^\{"trainsim_sweep": \{"settings": "[0-9a-f]{64}", "shard": "1/1", "points": 8\}\}$' ||
  fail_because "first line: $(head -n 1 "$tmp/out" | cut -c 1-120)"
[ "$(grep -c '^{"parallel.tp": [38], "topology.inter_node.nics_per_node": [14], "parallel.micro_batch": [12], "status": "' "$tmp/out")" -eq 8 ] ||
  fail_because "a line does not start with the swept values as numbers"
verdict "sweep --format jsonl writes a JSON object per point"

if command -v python3 >/dev/null 2>&1; then
  if python3 - "$tmp/rows.jsonl" <<'EOF' 2>"$tmp/err"
import json, sys
with open(sys.argv[1]) as f:
    rows = [json.loads(line) for line in f]
assert rows[0]["trainsim_sweep"]["points"] == 8, rows[0]
for r in rows[1:]:
    assert isinstance(r["parallel.tp"], int), "parallel.tp is not a number"
    if r["status"] == "ok":
        assert r["reason"] is None and r["iteration_time_s"] > 0, r
    else:
        assert r["status"] == "infeasible" and r["reason"], r
        assert "iteration_time_s" not in r, r
EOF
  then ok "sweep --format jsonl lines parse, typed, with a reason where not ok"
  else
    why="python3 rejects them"
    notok "sweep --format jsonl lines parse, typed, with a reason where not ok"
    why=
  fi
else
  skip "sweep --format jsonl lines parse, typed, with a reason where not ok" "no python3"
fi

# --- resume -------------------------------------------------------------------

# 320 GPT-3 175B points: long enough to be killed halfway, a second or so.
set -- sweep "$srcdir/experiments/gpt3-175b-selene.yaml" -j 2 \
  --sweep topology.inter_node.nics_per_node=1..8 --sweep parallel.global_batch=64..512x2 \
  --sweep cost.gpu_hour_usd=1..10
ts "$@" -o "$tmp/full.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(lines "$tmp/full.csv")" -eq 322 ] || fail_because "$(lines "$tmp/full.csv") lines, expected 322"
[ -s "$tmp/out" ] && fail_because "rows also went to stdout"
verdict "sweep -o FILE writes the rows to FILE"

# Kill it once some rows are out (or it is done).
background_rows "$tmp/killed.csv" "$@" -o "$tmp/killed.csv"
kill -9 "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
bg=
before=$(lines "$tmp/killed.csv")
ts "$@" -o "$tmp/killed.csv" --resume
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
cmp -s "$tmp/killed.csv" "$tmp/full.csv" || fail_because "the resumed file differs from a full run"
verdict "a sweep killed after $before lines and resumed equals an uninterrupted run"

# A partial last line, as a kill in the middle of a write leaves.
head -c 20000 "$tmp/full.csv" >"$tmp/partial.csv"
ts "$@" -o "$tmp/partial.csv" --resume
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
cmp -s "$tmp/partial.csv" "$tmp/full.csv" || fail_because "the resumed file differs from a full run"
verdict "sweep --resume cuts a partial last row away and completes the file"

# A kill in the middle of the lines before the rows: of the first line,
# and of the header after a whole first line.
for cut in 21 "$(($(head -n 1 "$tmp/full.csv" | wc -c) + 20))"; do
  head -c "$cut" "$tmp/full.csv" >"$tmp/head-cut.csv"
  ts "$@" -o "$tmp/head-cut.csv" --resume
  [ "$rc" -eq 0 ] || fail_because "cut at byte $cut: exit status $rc, expected 0"
  cmp -s "$tmp/head-cut.csv" "$tmp/full.csv" ||
    fail_because "cut at byte $cut: the resumed file differs from a full run"
done
verdict "sweep --resume cuts a partial first line or header away and starts over"
printf 'my notes' >"$tmp/notes.csv"
ts "$@" -o "$tmp/notes.csv" --resume
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ "$(cat "$tmp/notes.csv")" = "my notes" ] || fail_because "the file was changed"
verdict "sweep --resume refuses a file of one line that is not a sweep's, and leaves it alone"

# /dev/zero never ends and has no line break: resume used to read it all
# before looking at its first line. A sweep's output is a regular file.
ts_within 10 "$@" -o /dev/zero --resume
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2 (124: still running after 10 s)"
grep -q 'cannot resume /dev/zero: it is not a regular file' "$tmp/err" ||
  fail_because "stderr: $(head -c 200 "$tmp/err")"
verdict "sweep --resume -o /dev/zero is refused at once (exit 2), naming the file"

cp "$tmp/list-range.csv" "$tmp/other.csv"
ts "$@" -o "$tmp/other.csv" --resume
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'come from other settings' "$tmp/err" || fail_because "no word of the settings"
cmp -s "$tmp/other.csv" "$tmp/list-range.csv" || fail_because "the file was changed"
verdict "sweep --resume refuses another sweep's file and leaves it alone"

# The same axes and header, another --set: rows of other settings.
head -c 20000 "$tmp/full.csv" >"$tmp/other-set.csv"
cp "$tmp/other-set.csv" "$tmp/other-set.before"
ts "$@" -o "$tmp/other-set.csv" --resume --set parallel.tp=4
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'come from other settings (another experiment, --set or axes)' "$tmp/err" ||
  fail_because "no word of the settings: $(cut -c 1-120 "$tmp/err")"
cmp -s "$tmp/other-set.csv" "$tmp/other-set.before" || fail_because "the file was changed"
ts "$@" -o "$tmp/other-set.csv" --resume --shard 1/2
[ "$rc" -eq 2 ] || fail_because "--shard 1/2: exit status $rc, expected 2"
grep -q 'output of another --shard' "$tmp/err" || fail_because "no word of the shard"
verdict "sweep --resume refuses rows of another --set or another shard, and leaves them alone"

# A line that is not a row (a hand edit, another file's) is not carried on.
{ head -n 10 "$tmp/full.csv"; echo garbage; } >"$tmp/edited.csv"
cp "$tmp/edited.csv" "$tmp/edited.before"
ts "$@" -o "$tmp/edited.csv" --resume
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'edited.csv:11: not a row of a sweep' "$tmp/err" || fail_because "no line: $(cut -c 1-120 "$tmp/err")"
cmp -s "$tmp/edited.csv" "$tmp/edited.before" || fail_because "the file was changed"
# So is the header again (two outputs joined): it would take a point's place.
{ head -n 10 "$tmp/full.csv"; sed -n 2p "$tmp/full.csv"; } >"$tmp/joined.csv"
cp "$tmp/joined.csv" "$tmp/joined.before"
ts "$@" -o "$tmp/joined.csv" --resume
[ "$rc" -eq 2 ] || fail_because "header again: exit status $rc, expected 2"
grep -q 'joined.csv:11: not a row of a sweep (an identity line or the header again' "$tmp/err" ||
  fail_because "header again: $(cut -c 1-160 "$tmp/err")"
cmp -s "$tmp/joined.csv" "$tmp/joined.before" || fail_because "header again: the file was changed"
verdict "sweep --resume refuses a line that is not a row, at its line, and leaves the file alone"

# --- shards -------------------------------------------------------------------

ts "$@" --shard 1/2 -o "$tmp/shard1.csv"
[ "$rc" -eq 0 ] || fail_because "shard 1/2: exit status $rc"
ts "$@" --shard 2/2 -o "$tmp/shard2.csv"
[ "$rc" -eq 0 ] || fail_because "shard 2/2: exit status $rc"
[ "$(lines "$tmp/shard1.csv")" -eq 162 ] || fail_because "shard 1/2 has $(lines "$tmp/shard1.csv") lines, expected 162"
ts merge "$tmp/merged.csv" "$tmp/shard1.csv" "$tmp/shard2.csv"
[ "$rc" -eq 0 ] || fail_because "merge: exit status $rc"
cmp -s "$tmp/merged.csv" "$tmp/full.csv" || fail_because "the merged file differs from the unsharded one"
ts merge -o - "$tmp/shard1.csv" "$tmp/shard2.csv"
cmp -s "$tmp/out" "$tmp/full.csv" || fail_because "merge -o - differs from the unsharded file"
verdict "shards 1/2 and 2/2 merged equal the unsharded sweep, byte for byte"

ts merge "$tmp/shard1.csv" "$tmp/shard2.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ "$(lines "$tmp/shard1.csv")" -eq 162 ] || fail_because "shard 1 was overwritten"
verdict "merge SHARD1 SHARD2 (no output named) leaves shard 1 alone and exits 2"

# So is another sweep's output named first: it is not replaced either.
cp "$tmp/list-range.csv" "$tmp/other-out.csv"
ts merge "$tmp/other-out.csv" "$tmp/shard1.csv" "$tmp/shard2.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q "looks like a sweep's shard or merge" "$tmp/err" || fail_because "no reason: $(cat "$tmp/err")"
cmp -s "$tmp/other-out.csv" "$tmp/list-range.csv" || fail_because "another sweep's output was overwritten"
verdict "merge OUT where OUT is another sweep's output leaves it alone and exits 2"

ts merge -o "$tmp/bad-merge.csv" "$tmp/shard1.csv" "$tmp/list-range.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'comes from other settings' "$tmp/err" || fail_because "no word of the settings"
[ -e "$tmp/bad-merge.csv" ] && fail_because "an output was left"
verdict "merge of shards of different sweeps exits 2 and writes nothing"

# Missing, duplicated, out-of-order and unfinished shards.
head -n 100 "$tmp/shard2.csv" >"$tmp/shard2-cut.csv"
for c in "needs every shard|$tmp/shard1.csv" \
         "are both shard 1/2|$tmp/shard1.csv $tmp/shard1.csv" \
         "given in place 1|$tmp/shard2.csv $tmp/shard1.csv" \
         "its sweep was interrupted|$tmp/shard1.csv $tmp/shard2-cut.csv"; do
  # shellcheck disable=SC2086 # the shards are words
  ts merge -o "$tmp/bad-merge.csv" ${c#*|}
  [ "$rc" -eq 2 ] || fail_because "${c%%|*}: exit status $rc, expected 2"
  grep -q "${c%%|*}" "$tmp/err" || fail_because "no '${c%%|*}': $(cut -c 1-120 "$tmp/err")"
  [ -e "$tmp/bad-merge.csv" ] && fail_because "${c%%|*}: an output was left"
done
verdict "merge refuses a missing, duplicated, out-of-order or unfinished shard, writing nothing"

# A shard is the file a sweep wrote: a FIFO (which no one writes, so that
# reading it would wait for ever) or a device is refused before it is read.
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$tmp/fifo.csv" 2>/dev/null; then
  for bad in "$tmp/fifo.csv" /dev/zero; do
    ts_within 10 merge -o "$tmp/bad-merge.csv" "$tmp/shard1.csv" "$bad"
    [ "$rc" -eq 2 ] || fail_because "$bad: exit status $rc, expected 2 (124: still running after 10 s)"
    grep -q "cannot merge $bad: it is not a regular file" "$tmp/err" ||
      fail_because "$bad: stderr: $(head -c 200 "$tmp/err")"
    [ -e "$tmp/bad-merge.csv" ] && fail_because "$bad: an output was left"
  done
  verdict "merge refuses a FIFO or a device as a shard at once (exit 2), naming it"
else
  skip "merge refuses a FIFO or a device as a shard at once (exit 2), naming it" "no mkfifo"
fi

# A shard with a line that is not a row: a cell too many, a quote left
# open (which would swallow the rows after it).
sed '5s/^/x,/' "$tmp/shard2.csv" >"$tmp/shard2-cell.csv"
sed '5s/,/,"/' "$tmp/shard2.csv" >"$tmp/shard2-quote.csv"
# The lines before the rows again, as two outputs joined leave them: the
# header has the header's cells, and would stand for a point.
{ head -n 4 "$tmp/shard2.csv"; sed -n 2p "$tmp/shard2.csv"; tail -n +6 "$tmp/shard2.csv"; } >"$tmp/shard2-header.csv"
{ head -n 4 "$tmp/shard2.csv"; sed -n 1p "$tmp/shard2.csv"; tail -n +6 "$tmp/shard2.csv"; } >"$tmp/shard2-identity.csv"
# refused_merge FIRST BAD LINE TEXT: merging shard FIRST with shard BAD
# exits 2 saying BAD's LINE is not a row, then TEXT, and writes nothing.
refused_merge () {
  out=$tmp/bad-merge.${2##*.}
  ts merge -o "$out" "$1" "$2"
  [ "$rc" -eq 2 ] || fail_because "$2: exit status $rc, expected 2"
  grep -q "$(basename "$2"):$3: not a row of a sweep${4:-}" "$tmp/err" ||
    fail_because "$2: no line: $(cut -c 1-120 "$tmp/err")"
  [ -e "$out" ] && fail_because "$2: an output was left"
}
for bad in cell quote header identity; do
  refused_merge "$tmp/shard1.csv" "$tmp/shard2-$bad.csv" 5
done
verdict "merge refuses a shard line that is not a row (the header or identity again too), at its line, and writes nothing"

# The same in JSON lines: whole shards merge (every row a whole object:
# strings with quotes and commas, null, true, numbers in exponent form),
# and a row an interrupted or edited write left open is refused.
tiny=$srcdir/experiments/tiny.yaml
jsweep () {
  ts sweep "$tiny" --sweep 'model.name=["a\"b,c", gpt3-125m]' \
    --sweep parallel.micro_batch=1,2,4,8 -f jsonl -j 2 "$@"
}
jsweep -o "$tmp/j-full.jsonl"
jsweep --shard 1/2 -o "$tmp/j1.jsonl"
jsweep --shard 2/2 -o "$tmp/j2.jsonl"
ts merge "$tmp/j-merged.jsonl" "$tmp/j1.jsonl" "$tmp/j2.jsonl"
[ "$rc" -eq 0 ] || fail_because "merge: exit status $rc"
cmp -s "$tmp/j-merged.jsonl" "$tmp/j-full.jsonl" || fail_because "the merged file differs"
sed '3s/}$/, "x": [1, 2/' "$tmp/j2.jsonl" >"$tmp/j2-open.jsonl"
{ head -n 2 "$tmp/j2.jsonl"; sed -n 1p "$tmp/j2.jsonl"; tail -n +4 "$tmp/j2.jsonl"; } >"$tmp/j2-identity.jsonl"
for bad in open identity; do
  refused_merge "$tmp/j1.jsonl" "$tmp/j2-$bad.jsonl" 3 \
    " (an identity line again, or not a whole JSON object"
done
verdict "JSON lines: whole shards merge; a row left open, or the identity again, is refused at its line"

# --- line breaks in cells -----------------------------------------------------

# A model's name may hold a line break: its cell is quoted, line break and
# all (RFC 4180), and the row spans two lines. Resume and merge read such
# a record whole, and count lines as a text editor does.
sed 's/^name: .*/name: "a\\nb"/' "$srcdir/models/gpt3-125m.yaml" >"$tmp/nl-model.yaml"
sed "s|^model: gpt3-125m|model: $tmp/nl-model.yaml|" "$tiny" >"$tmp/nl.yaml"
set -- sweep "$tmp/nl.yaml" -j 2 --sweep parallel.micro_batch=1,2,4,8
ts "$@" -o "$tmp/nl-full.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
if [ "$(grep -c ',"a$' "$tmp/nl-full.csv")" -ne 4 ] || [ "$(grep -c '^b",' "$tmp/nl-full.csv")" -ne 4 ]; then
  fail_because "no four rows with the name's line break in a quoted cell"
fi
verdict "a model name with a line break sweeps to rows with the break in a quoted cell"

cp "$tmp/nl-full.csv" "$tmp/nl-whole.csv"
ts "$@" -o "$tmp/nl-whole.csv" --resume
[ "$rc" -eq 0 ] || fail_because "a finished file: exit status $rc, expected 0"
cmp -s "$tmp/nl-whole.csv" "$tmp/nl-full.csv" || fail_because "a finished file was changed"
# Cut in the second row: before its line break (a quote open), just after
# it (a quote open, yet the file ends in a line break), and after it.
at=$(grep -b '^b",' "$tmp/nl-full.csv" | sed -n 2p | cut -d: -f1)
for cut in $((at - 1)) "$at" $((at + 5)); do
  head -c "$cut" "$tmp/nl-full.csv" >"$tmp/nl-cut.csv"
  ts "$@" -o "$tmp/nl-cut.csv" --resume
  [ "$rc" -eq 0 ] || fail_because "cut at byte $cut: exit status $rc, expected 0"
  cmp -s "$tmp/nl-cut.csv" "$tmp/nl-full.csv" ||
    fail_because "cut at byte $cut: the resumed file differs from a full run"
done
verdict "sweep --resume keeps rows with a quoted line break and completes a row cut inside one"

ts "$@" --shard 1/2 -o "$tmp/nl1.csv"
ts "$@" --shard 2/2 -o "$tmp/nl2.csv"
ts merge "$tmp/nl-merged.csv" "$tmp/nl1.csv" "$tmp/nl2.csv"
[ "$rc" -eq 0 ] || fail_because "merge: exit status $rc"
cmp -s "$tmp/nl-merged.csv" "$tmp/nl-full.csv" || fail_because "the merged file differs from the unsharded one"
verdict "shards with a quoted line break in their rows merge into the unsharded output"

# A line that is no row, after rows of two lines each: cited at its line.
{ cat "$tmp/nl-full.csv"; echo garbage; } >"$tmp/nl-edited.csv"
ts "$@" -o "$tmp/nl-edited.csv" --resume
[ "$rc" -eq 2 ] || fail_because "resume: exit status $rc, expected 2"
grep -q 'nl-edited.csv:11: not a row of a sweep' "$tmp/err" ||
  fail_because "resume: $(head -c 200 "$tmp/err")"
{ head -n 4 "$tmp/nl2.csv"; echo garbage; tail -n +5 "$tmp/nl2.csv"; } >"$tmp/nl2-edited.csv"
refused_merge "$tmp/nl1.csv" "$tmp/nl2-edited.csv" 5
verdict "resume and merge cite a line that is no row by its line, counting a row's two lines"

# --- zip ----------------------------------------------------------------------

# The file's tp (replaced by one value) and NICs, then GPUs and global batch
# zipped: each GPU count with its batch, crossed with the NICs.
ts sweep "$exp" -j 2 --sweep parallel.tp=8 --zip gpus=512,1024 --zip parallel.global_batch=256,512
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
head -n 1 "$tmp/out" | grep -q ' points=4$' || fail_because "first line: $(head -n 1 "$tmp/out")"
sed -n 2p "$tmp/out" |
  grep -q '^parallel\.tp,topology\.inter_node\.nics_per_node,gpus,parallel\.global_batch,status,reason,iteration_time_s,' ||
  fail_because "header: $(sed -n 2p "$tmp/out" | cut -c 1-120)"
[ "$(sed -n 2p "$tmp/out" | tr ',' '\n' | grep -c '^gpus$')" -eq 1 ] ||
  fail_because "gpus is not one column"
[ "$(sed 1,2d "$tmp/out" | cut -d, -f1-5 | tr '\n' ' ')" = "8,1,512,256,ok 8,1,1024,512,ok 8,4,512,256,ok 8,4,1024,512,ok " ] ||
  fail_because "rows: $(sed 1,2d "$tmp/out" | cut -d, -f1-5 | tr '\n' ' ')"
verdict "sweep --zip pairs the i-th values of the zipped axes, crossed with the other axes"

rm -f "$tmp/zip-bad.csv"
expect_error "zipped axes of different lengths exit 2, naming both lengths" \
  '--zip parallel\.global_batch: the zipped axes differ in length: gpus has 3 values, parallel\.global_batch has 2' \
  sweep "$exp" --zip gpus=256,512,1024 --zip parallel.global_batch=256,512 -o "$tmp/zip-bad.csv"
[ -e "$tmp/zip-bad.csv" ] && fail_because "an output was written"
verdict "zipped axes of different lengths write nothing"
expect_error "a key both zipped and swept exits 2" \
  '--sweep gpus: gpus is both zipped and swept \(--zip gpus gives it too\)' \
  sweep "$exp" --zip gpus=512,1024 --zip parallel.global_batch=256,512 --sweep gpus=512
expect_error "a key zipped twice exits 2 (the first list was dropped, and the lengths unchecked)" \
  '--zip gpus: gpus is given twice on the command line \(--zip gpus\)' \
  sweep "$exp" --zip gpus=512,1024 --zip gpus=256,512,1024 --zip parallel.global_batch=256,512
expect_error "a key swept twice exits 2" \
  '--sweep parallel.micro_batch: parallel.micro_batch is given twice on the command line' \
  sweep "$exp" --sweep parallel.micro_batch=1,2 --sweep parallel.micro_batch=4
for r in 1.5..8 ..4 -..5 1e3..8 +1..8 .5..8 0x1..8; do
  expect_error "the range $r is refused, not taken as a value" \
    "'$(printf '%s' "$r" | sed 's/[.+]/\\&/g')' is not a range: write A\\.\\.B" \
    sweep "$exp" --sweep "parallel.micro_batch=$r"
done
sed 's/^  parallel.tp: \[3, 8\]$/  zip: {parallel.tp: [3, 8], gpus: [1024]}/' "$exp" >"$tmp/zip-lengths.yaml"
expect_error "zipped axes of different lengths in the file exit 2 with its file:line:col" \
  'zip-lengths\.yaml:8:30: sweep\.zip: the zipped axes differ in length: parallel\.tp has 2 values, gpus has 1' \
  sweep "$tmp/zip-lengths.yaml"

# 32 GPT-3 175B points: 8 NIC counts zipped with 8 prices, 4 batches each.
set -- sweep "$srcdir/experiments/gpt3-175b-selene.yaml" -j 2 \
  --zip topology.inter_node.nics_per_node=1..8 --zip cost.gpu_hour_usd=1..8 \
  --sweep parallel.global_batch=64..512x2
ts "$@" -o "$tmp/zip-full.csv"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(lines "$tmp/zip-full.csv")" -eq 34 ] || fail_because "$(lines "$tmp/zip-full.csv") lines, expected 34"
head -c 5000 "$tmp/zip-full.csv" >"$tmp/zip-partial.csv"
ts "$@" -o "$tmp/zip-partial.csv" --resume
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
cmp -s "$tmp/zip-partial.csv" "$tmp/zip-full.csv" || fail_because "the resumed file differs from a full run"
verdict "sweep --resume completes a zipped sweep cut short into the bytes of a full run"

# The same axes crossed are another sweep: its rows are not resumed.
head -c 5000 "$tmp/zip-full.csv" >"$tmp/zip-partial.csv"
cp "$tmp/zip-partial.csv" "$tmp/zip-partial.before"
ts sweep "$srcdir/experiments/gpt3-175b-selene.yaml" -j 2 \
  --sweep topology.inter_node.nics_per_node=1..8 --sweep cost.gpu_hour_usd=1..8 \
  --sweep parallel.global_batch=64..512x2 -o "$tmp/zip-partial.csv" --resume
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'come from other settings' "$tmp/err" || fail_because "no word of the settings"
cmp -s "$tmp/zip-partial.csv" "$tmp/zip-partial.before" || fail_because "the file was changed"
verdict "sweep --resume refuses a zipped sweep's rows for the same axes crossed"

for k in 1 2 3; do
  ts "$@" --shard "$k/3" -o "$tmp/zip$k.csv"
  [ "$rc" -eq 0 ] || fail_because "shard $k/3: exit status $rc"
done
ts merge "$tmp/zip-merged.csv" "$tmp/zip1.csv" "$tmp/zip2.csv" "$tmp/zip3.csv"
[ "$rc" -eq 0 ] || fail_because "merge: exit status $rc"
cmp -s "$tmp/zip-merged.csv" "$tmp/zip-full.csv" || fail_because "the merged file differs from the unsharded one"
verdict "the shards of a zipped sweep merge into the unsharded output"

# --- one writer per output; --force ---------------------------------------------

# 2,560 GPT-3 175B points, a few seconds on one thread: long enough for
# other sweeps to try the same output meanwhile.
set -- sweep "$srcdir/experiments/gpt3-175b-selene.yaml" \
  --sweep topology.inter_node.nics_per_node=1..8 --sweep parallel.global_batch=64..512x2 \
  --sweep cost.gpu_hour_usd=1..80
rm -f "$tmp/busy.csv"
background_rows "$tmp/busy.csv" "$@" -j 1 -o "$tmp/busy.csv"
for opt in "" --resume; do
  # shellcheck disable=SC2086 # no option is no word
  ts "$@" -j 1 -o "$tmp/busy.csv" $opt
  [ "$rc" -eq 2 ] || fail_because "${opt:-no option}: exit status $rc, expected 2"
  grep -q "another trainsim sweep is writing $tmp/busy.csv" "$tmp/err" ||
    fail_because "${opt:-no option}: stderr: $(head -c 200 "$tmp/err")"
done
# Any sweep: --force of another (a quick one, which would be done and
# have replaced the file while the first still wrote).
ts sweep "$tiny" -o "$tmp/busy.csv" --force
[ "$rc" -eq 2 ] || fail_because "--force: exit status $rc, expected 2"
grep -q "another trainsim sweep is writing $tmp/busy.csv" "$tmp/err" ||
  fail_because "--force: stderr: $(head -c 200 "$tmp/err")"
kill -0 "$bg" 2>/dev/null ||
  fail_because "the first sweep ended before the others tried: proves nothing (lengthen it)"
wait "$bg" || fail_because "the first sweep: exit status not 0: $(head -c 200 "$tmp/bg-err")"
bg=
verdict "a second sweep, --resume or --force on an output being written is refused (exit 2)"

# The reference: an uninterrupted run (which --force may start over).
cp "$tmp/full.csv" "$tmp/long.csv"
ts "$@" -j 2 -o "$tmp/long.csv" --force
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ -n "$(temp_of "$tmp/long.csv")" ] && fail_because "a temporary file was left"
cmp -s "$tmp/busy.csv" "$tmp/long.csv" ||
  fail_because "the first sweep's output differs from an uninterrupted run's"
verdict "the output of the sweep the others tried is that of an uninterrupted run"
[ "$(lines "$tmp/long.csv")" -eq 2562 ] || fail_because "$(lines "$tmp/long.csv") lines, expected 2562"
verdict "sweep --force replaces a finished output once the sweep is done"

# --force writes beside the file and renames over it at the end: killed
# midway, the file is as it was. The temporary file holds the rows done:
# removed on SIGTERM (and SIGINT, SIGHUP), left by SIGKILL.
for sig in KILL TERM; do
  cp "$tmp/full.csv" "$tmp/kept.csv"
  background_rows "$tmp/kept.csv" "$@" -j 1 -o "$tmp/kept.csv" --force
  ts "$@" -j 1 -o "$tmp/kept.csv" --resume
  [ "$rc" -eq 2 ] || fail_because "SIG$sig: a --resume meanwhile: exit status $rc, expected 2"
  kill -0 "$bg" 2>/dev/null || fail_because "SIG$sig: the sweep ended before it was killed"
  kill -"$sig" "$bg" 2>/dev/null
  wait "$bg" 2>/dev/null
  bg=
  cmp -s "$tmp/kept.csv" "$tmp/full.csv" || fail_because "SIG$sig: the file was changed"
  t=$(temp_of "$tmp/kept.csv")
  if [ "$sig" = KILL ]; then
    [ -n "$t" ] || fail_because "SIGKILL: no temporary file with the rows done"
    [ -n "$t" ] && [ "$(head -n 1 "$t")" != "$(head -n 1 "$tmp/long.csv")" ] &&
      fail_because "SIGKILL: the temporary file is not the sweep's output"
  else
    [ -n "$t" ] && fail_because "SIGTERM: the temporary file $t was left"
    grep -q "interrupted; .*kept\.csv is as it was" "$tmp/bg-err" ||
      fail_because "SIGTERM: stderr does not say the file is as it was: $(cat "$tmp/bg-err")"
  fi
  rm -f "$t"
done
verdict "sweep --force killed midway leaves the file byte for byte as it was, and says so"

# Ctrl-C on a sweep writing its file: the rows done are kept, and stderr
# says so and how to finish. SIGTERM, as SIGINT is ignored by a
# background job of a shell without job control; one handler serves both.
rm -f "$tmp/int.csv"
background_rows "$tmp/int.csv" "$@" -j 1 -o "$tmp/int.csv"
kill -0 "$bg" 2>/dev/null || fail_because "the sweep ended before it was interrupted"
kill -TERM "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
bg=
[ "$(lines "$tmp/int.csv")" -ge 40 ] || fail_because "$(lines "$tmp/int.csv") lines kept, expected 40 or more"
grep -q "interrupted; the rows done so far are kept in .*int\.csv: run the same command with --resume" \
  "$tmp/bg-err" || fail_because "stderr does not say what was kept: $(cat "$tmp/bg-err")"
verdict "sweep interrupted keeps its rows and says how to resume"

# The points' statuses on stderr, and a warning when most could not run.
ts sweep "$srcdir/experiments/gpt3-175b-selene.yaml" --sweep parallel.tp=1,3,8 \
  --sweep parallel.micro_batch=1,16
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q "^trainsim sweep: 6 points: 1 ok, 1 oom, 4 infeasible$" "$tmp/err" ||
  fail_because "no count of 1 ok, 1 oom, 4 infeasible: $(cat "$tmp/err")"
grep -q "warning: most points are infeasible" "$tmp/err" || fail_because "no warning"
verdict "sweep counts its points by status on stderr and warns when most are infeasible"

# --- bad input ----------------------------------------------------------------

sed 's/  parallel.tp: \[3, 8\]/  parallel.tp: []/' "$exp" >"$tmp/empty-axis.yaml"
expect_error "an empty axis in the file exits 2 with its file:line:col" \
  'empty-axis\.yaml:8:[0-9]+: sweep\.parallel\.tp: the axis is empty' sweep "$tmp/empty-axis.yaml"
expect_error "a swept value with a line break exits 2 (a row is a line)" \
  'a swept value cannot hold a line break' sweep "$exp" --sweep 'description=["a\nb",c]'
expect_error "an empty --sweep axis exits 2" \
  '--sweep parallel\.pp: the axis is empty' sweep "$exp" --sweep parallel.pp=
expect_error "an unknown --sweep key exits 2 with a did-you-mean" \
  "--sweep parallel\.micro_bach: unknown key 'micro_bach' in parallel \(did you mean 'micro_batch'\?\)" \
  sweep "$exp" --sweep parallel.micro_bach=1,2
sed 's/  parallel.tp: \[3, 8\]/  parallel.tpp: [3, 8]/' "$exp" >"$tmp/bad-key.yaml"
expect_error "an unknown key in the file's sweep exits 2 with its file:line:col" \
  "bad-key\.yaml:8:3: unknown key 'tpp' in parallel" sweep "$tmp/bad-key.yaml"
expect_error "an empty range 8..1 exits 2 and says how to write it" \
  '--sweep parallel\.pp: the range 8\.\.1 is empty.*1\.\.8' sweep "$exp" --sweep parallel.pp=8..1
sed 's/  parallel.tp: \[3, 8\]/  parallel.tp: 8..1/' "$exp" >"$tmp/bad-range.yaml"
expect_error "an empty range in the file exits 2 with its file:line:col" \
  'bad-range\.yaml:8:16: sweep\.parallel\.tp: the range 8\.\.1 is empty' sweep "$tmp/bad-range.yaml"
expect_error "more points than --max-points exits 2 and says how to raise it" \
  'has 16 points \(2 x 2 x 4\), more than --max-points 10: raise --max-points' \
  sweep "$exp" --sweep parallel.micro_batch=1..4 --max-points 10
expect_error "a range of more values than an axis may hold exits 2, however high --max-points" \
  '--sweep gpus: the range 1\.\.1000000000000 has 1000000000000 values, more than the 1000000 an axis may hold' \
  sweep "$exp" --sweep gpus=1..1000000000000 --max-points 9000000000000000000
expect_error "--shard 3/2 exits 2" '--shard 3/2: expected K/N with 1 <= K <= N' \
  sweep "$exp" --shard 3/2
expect_error "--resume without -o exits 2" '--resume needs' sweep "$exp" --resume
expect_error "an unknown --set key exits 2 before any point runs" \
  "--set paralel\.tp: unknown key 'paralel'" sweep "$exp" --set paralel.tp=4

ts sweep "$exp" -o "$tmp/no/such/dir/rows.csv"
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1 (an I/O failure)"
verdict "sweep -o into a missing directory exits 1"


# A point whose fabric background leaves a link nothing (load 0.9 with
# congestion_exponent 1000) is an infeasible row saying why: it aborted
# the flow model, and with it the whole sweep.
"$TRAINSIM" sweep "$srcdir/tests/data/bad/valid.yaml" \
  --set topology.inter_node.fabric.background.load=0.9 \
  --sweep topology.inter_node.fabric.background.congestion_exponent=0.5,1000 \
  -o "$tmp/background.csv" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q '^0\.5,ok,' "$tmp/background.csv" || fail_because "no ok row for exponent 0.5"
grep -q '^1000,infeasible,".*leaves the job 0 of each shared link' "$tmp/background.csv" ||
  fail_because "no infeasible row saying why: $(grep '^1000' "$tmp/background.csv")"
verdict "sweep: a background that leaves a link nothing is an infeasible row"

finish
