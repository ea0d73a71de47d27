# testlib.sh: the case bookkeeping of the shell tests, sourced by each
# (tests/cli.sh, sweep.sh, plot.sh, figures.sh, mpi.sh). A script sets
# $tmp (its temporary directory) first, records each case with ok, notok,
# skip or verdict, and closes with finish, which prints the line
# "N passed, N failed" that CI reads and exits 1 if any case failed.
# The script sets $srcdir (to find this file) before sourcing it; this
# makes it absolute and resolves $TRAINSIM (default ./trainsim) to an
# absolute path too, since cases run from other directories.
# $tmp comes from the sourcing script; $rc is read by it.
# shellcheck disable=SC2154,SC2034
srcdir=$(cd "$srcdir" && pwd) || exit 99
: "${TRAINSIM:=$(pwd)/trainsim}"
case $TRAINSIM in
  /*) ;;
  *) TRAINSIM=$(pwd)/$TRAINSIM ;;
esac
if [ ! -x "$TRAINSIM" ]; then
  echo "$(basename "$0"): $TRAINSIM is not an executable (set TRAINSIM)" >&2
  exit 99
fi

n=0
passed=0
failed=0
why=

# ok DESC / notok DESC: records a case; notok prints the reason ($why) and
# what the program wrote on stderr ($tmp/err) as '# ' lines.
ok () {
  n=$((n + 1))
  passed=$((passed + 1))
  echo "ok $n - $1"
}
notok () {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $1"
  [ -n "$why" ] && echo "#   $why"
  if [ -s "$tmp/err" ]; then
    sed 's/^/#   stderr: /' "$tmp/err" | head -n 12
  fi
}
# skip DESC [WHY]: a case that cannot run here counts as passed.
skip () {
  n=$((n + 1))
  passed=$((passed + 1))
  echo "ok $n - $1 # SKIP ${2:-}"
}
# verdict DESC: ok when $why is empty, else not ok.
verdict () {
  if [ -z "$why" ]; then ok "$1"; else notok "$1"; fi
  why=
}
fail_because () {
  why="${why:+$why; }$1"
}

# ts ARG...: runs trainsim; stdout in $tmp/out, stderr in $tmp/err, status
# in $rc.
ts () {
  "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# gemm_cases FILE: the cases of a validation file of kind gemm, one line
# "id batch m n k rate" each (batch 1 where the case gives none, the rate
# in TFLOP/s), for tests that rebuild a converter's input from its output.
gemm_cases () {
  awk '/^  - \{id: / {
    line = $0
    id = line; sub(/.*\{id: /, "", id); sub(/,.*/, "", id)
    b = 1
    if (line ~ /batch: /) { b = line; sub(/.*batch: /, "", b); sub(/,.*/, "", b) }
    m = line; sub(/.* m: /, "", m); sub(/,.*/, "", m)
    n = line; sub(/.* n: /, "", n); sub(/,.*/, "", n)
    k = line; sub(/.* k: /, "", k); sub(/,.*/, "", k)
    r = line; sub(/.*throughput: /, "", r); sub(/TFLOP.*/, "", r)
    print id, b, m, n, k, r
  }' "$1"
}

# scores_every_case FILE: records whether validate reads the validation
# FILE that a converter wrote and scores each of its cases (its summary
# line counts every "  - {id: " line), meeting its goal or not.
scores_every_case () {
  ts validate "$1"
  [ "$rc" -le 1 ] || fail_because "validate exit $rc"
  grep -q "$(basename "$1"): MAPE .* over $(grep -c '^  - {id: ' "$1") cases" "$tmp/out" ||
    fail_because "no summary of every case: $(grep ': MAPE' "$tmp/out")"
  verdict "validate scores the file"
}

# fresh: $tmp/bad becomes a copy of $tmp/logs, the input a converter test
# rebuilt, for a bad variant of it.
fresh () {
  rm -rf "$tmp/bad"
  cp -R "$tmp/logs" "$tmp/bad"
}

# converter_refuses DESC SCRIPT INPUT [REGEX]: records whether the converter
# SCRIPT (experiments/validation/*-to-yaml.sh) fails on INPUT without
# writing its output ($tmp/bad.yaml), saying REGEX on stderr ($tmp/err)
# when given.
converter_refuses () {
  rm -f "$tmp/bad.yaml"
  if sh "$2" "$3" "$tmp/bad.yaml" 2>"$tmp/err"; then
    fail_because "the script accepted it"
  elif [ -e "$tmp/bad.yaml" ]; then
    fail_because "it wrote the output anyway"
  fi
  if [ $# -ge 4 ] && ! grep -Eq -- "$4" "$tmp/err"; then
    fail_because "stderr lacks /$4/: $(cat "$tmp/err")"
  fi
  verdict "$1"
}

finish () {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
