#!/bin/sh
# tests/cli-habits.sh: the command line as people type it: short options
# glued to their values (-j2, -b1M), "trainsim COMMAND" in each --help's
# usage, and one exit status (2) for an input that cannot be read, in
# every command.
#
# Run by automake with srcdir in the environment; by hand, from the top
# build directory: srcdir=. sh tests/cli-habits.sh
set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE
exp=$srcdir/experiments/ib-interfaces.yaml

ts sweep "$exp" -j 2 -o "$tmp/apart.csv"
ts sweep "$exp" -j2 -o "$tmp/glued.csv"
[ "$rc" -eq 0 ] || fail_because "-j2: exit status $rc, expected 0"
cmp -s "$tmp/apart.csv" "$tmp/glued.csv" || fail_because "-j2 and -j 2 differ"
verdict "sweep -j2 is sweep -j 2"

ts collective selene -b1M -e4M -g8
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -c '^ *[0-9]' "$tmp/out")" -eq 3 ] ||
  fail_because "$(grep -c '^ *[0-9]' "$tmp/out") rows, expected 1, 2 and 4 MiB"
verdict "collective -b1M -e4M -g8 reads each value glued to its flag"

# A value given apart stays whole, even one that looks like an option.
(cd "$tmp" && "$TRAINSIM" sweep "$exp" -j 2 -o -j2 >/dev/null 2>&1)
[ -s "$tmp/-j2" ] || fail_because "-o -j2 did not write a file named -j2"
verdict "an option's value given apart is never split (-o -j2 writes ./-j2)"

for c in run validate sweep merge plot search collective; do
  "$TRAINSIM" "$c" --help >"$tmp/help" 2>&1
  sed -n 2p "$tmp/help" | grep -q "^  trainsim $c \\[OPTION\\.\\.\\.\\] " ||
    fail_because "$c --help: $(sed -n 2p "$tmp/help")"
done
verdict "every command's --help shows its usage as 'trainsim COMMAND [OPTION...] ...'"

for c in run validate sweep search plot merge; do
  case $c in
    merge) ts merge "$tmp/merged.csv" "$tmp/no-such.csv" ;;
    plot) ts plot "$tmp/no-such.csv" -o "$tmp/fig.pdf" ;;
    *) ts "$c" "$tmp/no-such.yaml" ;;
  esac
  [ "$rc" -eq 2 ] || fail_because "$c: exit status $rc, expected 2"
  grep -q "no-such" "$tmp/err" || fail_because "$c: stderr does not name the file"
done
verdict "a missing input exits 2 in every command, naming it"

ts run "$exp"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q 'ib-interfaces\.yaml:[0-9]*:[0-9]*: run predicts the experiment as written and ignores its sweep: section' \
  "$tmp/err" || fail_because "stderr: $(cut -c 1-120 "$tmp/err")"
verdict "run says on stderr that it ignores the file's sweep: section"

# gpus is an axis of ib-interfaces.yaml and a result column: one column.
[ "$(sed -n 2p "$tmp/glued.csv" | tr ',' '\n' | grep -c '^gpus$')" -eq 1 ] ||
  fail_because "header: $(sed -n 2p "$tmp/glued.csv" | cut -c 1-120)"
awk -F, -v n="$(sed -n 2p "$tmp/glued.csv" | awk -F, '{ print NF }')" \
  'NR > 2 && NF != n { bad = 1 } END { exit bad }' "$tmp/glued.csv" ||
  fail_because "a row does not have the header's columns"
verdict "a swept result column (gpus) appears once in the sweep's CSV"

# A derived value can be given back to the derivation: dp from the GPU
# count, after tp changes.
ts run "$srcdir/experiments/gpt3-175b-selene.yaml" --set parallel.tp=4 --set parallel.dp=auto
[ "$rc" -eq 0 ] || fail_because "exit status $rc: $(cut -c 1-120 "$tmp/err")"
grep -q 'tp 4 x pp 16 x dp 16' "$tmp/out" || fail_because "plan: $(grep plan "$tmp/out")"
ts run "$srcdir/experiments/gpt3-175b-selene.yaml" --set model.ffn_hidden=auto --set model.kv_heads=auto
[ "$rc" -eq 0 ] || fail_because "ffn_hidden, kv_heads auto: exit status $rc"
verdict "--set parallel.dp=auto (and ffn_hidden, kv_heads) unsets a derived value"

# Data found wherever it runs: the binary built here, run from another
# directory on an experiment there, finds the shipped models; a copy of it
# elsewhere (not installed) looks in the install directory and says where
# it looked.
mkdir -p "$tmp/elsewhere"
cp "$srcdir/experiments/gpt3-175b-selene.yaml" "$tmp/elsewhere/mine.yaml"
(cd "$tmp/elsewhere" && "$TRAINSIM" run mine.yaml >"$tmp/out" 2>"$tmp/err")
rc=$?
[ "$rc" -eq 0 ] || fail_because "exit status $rc: $(cut -c 1-120 "$tmp/err")"
grep -q 'gpt3-175b on selene' "$tmp/out" || fail_because "no report"
"$TRAINSIM" --version >"$tmp/version"
# The last directory named is the source tree (compared resolved: the
# build may sit under a symbolic link).
last=$(sed -n 's/^data: .*, then //p' "$tmp/version")
[ -n "$last" ] && [ "$(cd "$last" 2>/dev/null && pwd -P)" = "$(cd "$srcdir" && pwd -P)" ] &&
  case $last in *..*) false ;; *) true ;; esac ||
  fail_because "--version: $(sed -n 2p "$tmp/version")"
verdict "the built binary finds the shipped models from any directory; --version says where"

cp "$TRAINSIM" "$tmp/elsewhere/trainsim-copy"
(cd "$tmp/elsewhere" && TRAINSIM_DATA_PATH= ./trainsim-copy run mine.yaml >"$tmp/out" 2>"$tmp/err")
rc=$?
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q "no models found in models/ under .*elsewhere, .*, /" "$tmp/err" ||
  fail_because "stderr: $(cut -c 1-160 "$tmp/err")"
verdict "where no data is found, the error names every directory searched"

finish
