#!/bin/sh
# tests/ledger.sh: the ledger of constants (src/base/ledger.def, printed by
# `trainsim constants`) against the code and the files it names: every row
# has a source and a kind; a fitted one names what it was fitted to, and a
# validation file so named has role: calibration (and every calibration
# file is so named); an assumed one says what +-50 % of it does; the module
# a row names reads it from the ledger; the manual (doc/manual.txt) names every fitted and
# assumed constant; the three formats agree on the count.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/ledger.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-ledger.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

vdir=$srcdir/experiments/validation

ts constants -f json
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
cp "$tmp/out" "$tmp/ledger.json"
# One object a line: "NAME KIND MODULE" and the fitted_to text, by field.
field () {
  sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p" "$tmp/ledger.json"
}
grep '^{"name"' "$tmp/ledger.json" >"$tmp/rows"
rows=$(wc -l <"$tmp/rows")
[ "$rows" -ge 40 ] || fail_because "only $rows rows"
verdict "constants -f json lists the ledger, one constant a line ($rows)"

ts constants -f csv
csv_rows=$(($(grep -c '^[A-Z0-9_]*,' "$tmp/out") + 0))
ts constants
table_rows=$(grep -c '^[A-Z0-9_]* = ' "$tmp/out")
grep -q "^$rows constants: [0-9]* published, [0-9]* measured, [0-9]* fitted, [0-9]* assumed$" \
  "$tmp/out" || fail_because "no summary line: $(tail -n 1 "$tmp/out")"
[ "$csv_rows" -eq "$rows" ] && [ "$table_rows" -eq "$rows" ] ||
  fail_because "json $rows, csv $csv_rows, table $table_rows rows"
verdict "table, CSV and JSON hold the same constants"

while IFS= read -r line; do
  name=$(printf '%s' "$line" | sed 's/^{"name": "\([A-Z0-9_]*\)".*/\1/')
  kind=$(printf '%s' "$line" | sed 's/.*"kind": "\([a-z]*\)".*/\1/')
  case $kind in
    published | measured | fitted | assumed) ;;
    *) fail_because "$name: kind '$kind'" ;;
  esac
  printf '%s' "$line" | grep -q '"source": "[^"]' || fail_because "$name: no source"
  case $kind in
    fitted)
      printf '%s' "$line" | grep -q '"fitted_to": "[^"]' ||
        fail_because "$name: fitted to nothing"
      ;;
    *)
      printf '%s' "$line" | grep -q '"fitted_to": null' ||
        fail_because "$name: $kind but names what it was fitted to"
      ;;
  esac
  [ "$kind" != assumed ] || printf '%s' "$line" | grep -q '"sensitivity": "[^"]' ||
    fail_because "$name: assumed without its sensitivity"
done <"$tmp/rows"
verdict "every constant has a source and a kind; fitted ones name their data, assumed ones their sensitivity"

# The validation files a fitted constant names are calibration, and every
# calibration file is named by one: validation stays validation.
field fitted_to | tr ' ' '\n' | grep '\.yaml$' | sort -u >"$tmp/fitted-files"
for f in $(cat "$tmp/fitted-files"); do
  if [ ! -f "$vdir/$f" ]; then
    fail_because "$f: no such file in experiments/validation"
  elif ! grep -q '^role: calibration' "$vdir/$f"; then
    fail_because "$f: a constant was fitted to it, but its role is not calibration"
  fi
done
for f in "$vdir"/*.yaml; do
  grep -q '^role: calibration' "$f" || continue
  grep -qx "$(basename "$f")" "$tmp/fitted-files" ||
    fail_because "$(basename "$f"): role calibration, but no constant names it"
done
verdict "a file a constant was fitted to is calibration, and each calibration file names one"

# Each row's module reads it from the ledger (LEDGER (NAME), LEDGER_VALUES
# (NAME) or LEDGER_NAME), so the table is the code's.
while IFS= read -r line; do
  name=$(printf '%s' "$line" | sed 's/^{"name": "\([A-Z0-9_]*\)".*/\1/')
  module=$(printf '%s' "$line" | sed 's/.*"module": "\([^"]*\)".*/\1/')
  grep -q -e "LEDGER (${name})" -e "LEDGER_VALUES (${name})" -e "LEDGER_${name}\\b" \
    "$srcdir/$module" || fail_because "$name: $module does not read it"
done <"$tmp/rows"
verdict "each constant is read from the ledger by the module it names"

# The manual's list of fitted and assumed constants is the ledger's.
while IFS= read -r line; do
  name=$(printf '%s' "$line" | sed 's/^{"name": "\([A-Z0-9_]*\)".*/\1/')
  case $line in
    *'"kind": "fitted"'* | *'"kind": "assumed"'*)
      grep -q "\`$name\`" "$srcdir/doc/manual.txt" || fail_because "the manual does not name $name" ;;
  esac
done <"$tmp/rows"
verdict "the manual (doc/manual.txt) names every fitted and assumed constant"

# A topology's own efficiency overrides the link kind's row: at 1 GiB the
# ring is bandwidth-bound, so 300 GB/s at 0.5 gives under 150 GB/s of bus
# bandwidth (the latency's share, some 0.3 %, below it), and eight NICs of
# 25 GB/s at 0.5 under 100 for the ring (forced: on two nodes NCCL's tree
# sends half the bytes through the NICs and passes that bound).
busbw () {
  awk '/^ *1073741824 / { print $8 }' "$tmp/out"
}
ts collective selene -b 1G -e 1G --set intra_node.efficiency=0.5
b=$(busbw)
awk -v b="$b" 'BEGIN { exit !(b > 149 && b < 150) }' || fail_because "intra_node: $b GB/s"
ts collective selene --gpus 16 -b 1G -e 1G -a ring --set inter_node.efficiency=0.5
b=$(busbw)
awk -v b="$b" 'BEGIN { exit !(b > 98 && b < 100) }' || fail_because "inter_node: $b GB/s"
ts collective selene --set intra_node.efficiency=1.5
[ "$rc" -eq 2 ] && grep -q 'must be a fraction in (0, 1\]' "$tmp/err" ||
  fail_because "an efficiency of 1.5: exit status $rc"
verdict "intra_node.efficiency and inter_node.efficiency override the link kind's"

ts constants extra
[ "$rc" -eq 2 ] || fail_because "a file argument: exit status $rc, expected 2"
ts constants -f yaml
[ "$rc" -eq 2 ] && grep -q 'table' "$tmp/err" || fail_because "an unknown format: exit status $rc"
verdict "constants refuses a file argument and an unknown format (exit 2)"

finish
