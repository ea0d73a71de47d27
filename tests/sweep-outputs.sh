#!/bin/sh
# tests/sweep-outputs.sh: a sweep never truncates results it was not told
# to replace, and merge refuses what is not a sweep's output (issue 14).
#
# Run by automake with TRAINSIM and srcdir set, like tests/sweep.sh.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-sweep-outputs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE
TRAINSIM_DATA_PATH=$srcdir
export TRAINSIM_DATA_PATH

cat >"$tmp/exp.yaml" <<'YAML'
schema_version: 1
model: gpt3-125m
topology: selene
gpus: 8
parallel: {tp: 1, pp: 1, micro_batch: 1, global_batch: 64}
sweep:
  parallel.micro_batch: [1, 2, 4, 8]
YAML

echo "finished results" >"$tmp/results.csv"
ts sweep "$tmp/exp.yaml" -j 1 -o "$tmp/results.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ "$(cat "$tmp/results.csv")" = "finished results" ] || fail_because "the file was changed"
grep -q -- '--force' "$tmp/err" || fail_because "stderr does not name --force"
verdict "sweep -o EXISTING is refused and leaves the file as it was"

ts sweep "$tmp/exp.yaml" -j 1 -o "$tmp/results.csv" --force
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(wc -l <"$tmp/results.csv")" -eq 6 ] || fail_because "not an identity, a header and 4 rows"
verdict "sweep -o EXISTING --force replaces it"

for j in 0 -1; do
  ts sweep "$tmp/exp.yaml" -j "$j" -o "$tmp/other.csv"
  [ "$rc" -eq 2 ] || fail_because "-j $j: exit status $rc, expected 2"
  [ -e "$tmp/other.csv" ] && fail_because "-j $j: an output was written"
done
verdict "sweep -j 0 or -1 is refused, not silently the default"

ts merge "$tmp/merged.csv" /dev/zero
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ -e "$tmp/merged.csv" ] && fail_because "an output was written"
verdict "merge of /dev/zero is refused at once"

head -c 2000000 /dev/zero | tr '\0' 'a' >"$tmp/long.csv"
ts merge "$tmp/merged.csv" "$tmp/long.csv"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'over' "$tmp/err" || fail_because "stderr does not say the line is too long"
verdict "merge of a 2 MB line is refused"

finish
