#!/bin/sh
# tests/outputs.sh: result files are never lost or clobbered (issue 14):
# a device or FIFO is written in place, never renamed over; a symbolic link
# is written through; an error names the user's path, not a temporary one;
# output that cannot be written is an I/O failure (exit 1); absurd option
# values are refused (exit 2); a signal leaves no temporary file.
#
# Run by automake with TRAINSIM and srcdir set, like tests/cli.sh.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-outputs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

tiny=$srcdir/experiments/tiny.yaml

# --- devices, links ------------------------------------------------------------

# A device node of our own, the null device's twin: a regression renames
# over it, not over the system's /dev/null.
if [ "$(id -u)" -eq 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
  ts run "$tiny" -o "$tmp/null"
  [ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
  [ -c "$tmp/null" ] || fail_because "the device was replaced by a file"
  ts run "$tiny" --trace "$tmp/null"
  [ -c "$tmp/null" ] || fail_because "--trace replaced the device"
  verdict "run -o DEVICE and --trace DEVICE, as root, leave the device"
else
  skip "run -o DEVICE, as root, leaves the device" "not root"
fi

mkfifo "$tmp/fifo" 2>/dev/null && {
  # A reader that gives up, should the FIFO be renamed away from it.
  timeout 20 cat "$tmp/fifo" >"$tmp/from-fifo" &
  reader=$!
  ts run "$tiny" -f json -o "$tmp/fifo"
  wait "$reader"
  [ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
  [ -p "$tmp/fifo" ] || fail_because "the FIFO was replaced"
  grep -q '"iteration_time_s"' "$tmp/from-fifo" || fail_because "the reader got no report"
  verdict "run -o FIFO writes into the FIFO"
}

echo old >"$tmp/real.json"
ln -s real.json "$tmp/link.json"
ts run "$tiny" -f json -o "$tmp/link.json"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ -L "$tmp/link.json" ] || fail_because "the link was replaced by a file"
grep -q '"iteration_time_s"' "$tmp/real.json" || fail_because "the link's target was not written"
verdict "run -o LINK writes through the link and keeps it"

# The streamed trace follows outfile's rules too: through a link, the
# target is replaced only once the trace is whole. A run refused after the
# trace was opened (the event budget) leaves the old one.
echo old >"$tmp/real-trace.json"
ln -s real-trace.json "$tmp/trace-link.json"
TRAINSIM_MAX_EVENTS=10 "$TRAINSIM" run "$tiny" --trace "$tmp/trace-link.json" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ -L "$tmp/trace-link.json" ] || fail_because "the link was replaced by a file"
[ "$(cat "$tmp/real-trace.json")" = old ] || fail_because "the link's target was truncated"
verdict "a failed run --trace LINK leaves the link's target whole"

# A trace larger than its budget is refused before a byte is written:
# no file appears (a 16k-GPU --full trace wrote 4 GB with no word).
TRAINSIM_MAX_TRACE=1KiB "$TRAINSIM" run "$tiny" --trace "$tmp/big-trace.json" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'the trace of this plan would take about .* spans), more than the budget of 1.0 KiB' "$tmp/err" ||
  fail_because "stderr: $(cat "$tmp/err")"
[ ! -e "$tmp/big-trace.json" ] || fail_because "a trace file was written"
TRAINSIM_MAX_TRACE=1MiB "$TRAINSIM" run "$tiny" --trace "$tmp/big-trace.json" >"$tmp/out" 2>"$tmp/err" ||
  fail_because "under a budget it holds, the trace is refused: $(cat "$tmp/err")"
verdict "a trace over TRAINSIM_MAX_TRACE is refused before it is written"

ln -s "$tmp/new-target.json" "$tmp/dangling.json"
ts run "$tiny" -f json -o "$tmp/dangling.json"
[ -L "$tmp/dangling.json" ] && [ -s "$tmp/new-target.json" ] ||
  fail_because "a dangling link's target was not created through it"
verdict "run -o DANGLING-LINK creates the file it points to"

ts run "$tiny" -o "$tmp/no/such/dir/report.txt"
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q "$tmp/no/such/dir/report.txt" "$tmp/err" || fail_because "the error does not name the path"
grep -q 'XXXXXX\|/\.report\.txt\.' "$tmp/err" && fail_because "the error names a temporary file"
verdict "a report that cannot be written exits 1 naming the user's path"

leftover=$(ls -A "$tmp" | grep '^\.' || true)
[ -z "$leftover" ] || fail_because "temporary files left: $leftover"
verdict "no temporary file is left beside the outputs"

# --- standard output that cannot be written -----------------------------------

if [ -w /dev/full ]; then
  for args in "run $tiny" "validate $srcdir/experiments/validation/megatron-readme.yaml" \
              "collective selene -e 1M" "--help"; do
    # shellcheck disable=SC2086
    "$TRAINSIM" $args >/dev/full 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
    grep -qi 'write' "$tmp/err" || fail_because "stderr does not say the write failed"
    verdict "'${args%% *}' to a full disk exits 1"
  done
else
  skip "commands to a full disk exit 1" "no /dev/full"
fi

# --- absurd options --------------------------------------------------------------

ts collective selene -f 1.0000001
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ -s "$tmp/out" ] && fail_because "it printed rows"
grep -q 'raise -f' "$tmp/err" || fail_because "stderr does not say what to do"
verdict "collective -f 1.0000001 is refused instead of printing a billion rows"

# A hostile input's huge numbers in the table: exponent form, the same
# magnitude as the JSON's (fixed form overran its buffer: wrong digits).
ts run "$tiny" --set training.tokens=1e50
grep -q "training *2.52e+39 days, \$7.25e+41" "$tmp/out" || fail_because "$(grep training "$tmp/out")"
ts run "$tiny" --set training.tokens=1e50 -f json
grep -q '"days_to_train": 2.518[0-9]*e+39' "$tmp/out" || fail_because "the JSON's days differ: $(grep -o '"days_to_train": [^,]*' "$tmp/out")"
verdict "run's table gives 1e39 days and dollars in exponent form, as the JSON does"

ts run "$tiny" -o "$tmp/both.out" --trace "$tmp/both.out"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'name the same file' "$tmp/err" || fail_because "stderr does not say why: $(cat "$tmp/err")"
[ -e "$tmp/both.out" ] && fail_because "a file was written"
verdict "run -o FILE --trace FILE is refused: one would replace the other"

for j in 0 -1; do
  ts search "$tiny" -j "$j"
  [ "$rc" -eq 2 ] || fail_because "-j $j: exit status $rc, expected 2"
  grep -q 'jobs from 1' "$tmp/err" || fail_because "-j $j: stderr does not say what is valid"
  ts plan "$tiny" -j "$j"
  [ "$rc" -eq 2 ] || fail_because "plan -j $j: exit status $rc, expected 2"
done
verdict "search and plan -j 0 or -1 are refused, not silently the default"

for o in "--gpus 0" "--per-node 0"; do
  # shellcheck disable=SC2086
  ts collective selene $o -b 1M -e 1M
  [ "$rc" -eq 2 ] || fail_because "$o: exit status $rc, expected 2"
  grep -q 'must be' "$tmp/err" || fail_because "$o: stderr does not say what is valid"
done
verdict "collective --gpus 0 and --per-node 0 are refused, not silently the default"

finish
