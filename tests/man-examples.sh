#!/bin/sh
# tests/man-examples.sh BINDIR MANPAGE [DATADIR]: the EXAMPLES of the man
# page, run with the installed binary (BINDIR/trainsim first on PATH) in an
# empty directory far from the source tree, in order, as a user of the
# installed copy would type them (issue 34, item 4): the experiments they
# name are found in the data directory. A block that needs what this
# machine lacks (jq, gnuplot) is skipped and said so, and mpirun's (64
# ranks) always; DATADIR's
# experiments/figures.sh is run too when given. Run by `make installcheck`
# (and so by distcheck). Prints 'ok N - what' or 'not ok N - what', then
# 'P passed, F failed', and exits 1 when a block failed.

set -u

[ $# -ge 2 ] || { echo "usage: $0 BINDIR MANPAGE [DATADIR]" >&2; exit 2; }
bindir=$1
man=$2
datadir=${3:-}
PATH=$bindir:$PATH
export PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-man.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

# The .EX ... .EE blocks that are commands (they start with trainsim or a
# shell loop), troff escapes undone, one file each.
awk -v dir="$tmp" '
  /^\.EX/ { on = 1; n++; file = dir "/block" sprintf("%02d", n); next }
  /^\.EE/ { on = 0; close(file); next }
  on { gsub(/\\-/, "-"); gsub(/\\e$/, "\\"); print >file }' "$man"

passed=0
failed=0
i=0
mkdir "$tmp/work"

# case_run WHAT ARG...: runs ARG... in the empty directory; its verdict.
case_run () {
  case_what=$1
  shift
  if (cd "$tmp/work" && "$@") >"$tmp/out" 2>"$tmp/err"; then
    echo "ok $i - $case_what"
    passed=$((passed + 1))
  else
    echo "not ok $i - $case_what"
    sed 's/^/#   /' "$tmp/err" | tail -n 5
    failed=$((failed + 1))
  fi
}

for block in "$tmp"/block*; do
  first=$(head -n 1 "$block")
  case $first in
    trainsim\ *|for\ *|mpirun\ *) ;;
    *) continue ;;
  esac
  i=$((i + 1))
  what=$(echo "$first" | cut -c 1-70)
  case $first in
    mpirun\ *)
      echo "ok $i - # SKIP $what (64 MPI ranks of an MPI build)"
      passed=$((passed + 1))
      continue ;;
  esac
  need=
  grep -q '| *jq ' "$block" && need=jq
  grep -q '^trainsim plot ' "$block" && need=gnuplot
  if [ -n "$need" ] && ! command -v "$need" >/dev/null 2>&1; then
    echo "ok $i - # SKIP $what (no $need)"
    passed=$((passed + 1))
    continue
  fi
  case_run "$what" sh -e "$block"
done
if [ -n "$datadir" ]; then
  i=$((i + 1))
  case_run "the installed figures.sh slingshot" sh "$datadir/experiments/figures.sh" slingshot figs
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
