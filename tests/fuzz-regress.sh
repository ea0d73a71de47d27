#!/bin/sh
# tests/fuzz-regress.sh: replays the fuzz targets' saved inputs with the
# replay-TARGET programs (tests/fuzz/replay.c), which need no libFuzzer:
# every seed of tests/fuzz/corpus/TARGET/ and every regression case of
# tests/fuzz/regress/TARGET/ (an input the fuzzer once crashed on), one
# case each. A case passes when the target returns within a minute: no
# crash, no assertion, no GLib warning, and under --enable-sanitizers no
# sanitizer report. A file named *.pending is a crash found but not yet fixed: it
# is skipped, and its fix renames it.
#
# Run by automake with srcdir in the environment; by hand, from the top
# build directory: srcdir=. sh tests/fuzz-regress.sh
set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fuzz.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

# Each input takes milliseconds; a minute is a hang (the fuzzer's is 10 s).
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 60"

for target in config run csv; do
  replay=$(pwd)/tests/fuzz/replay-$target
  for input in "$srcdir/tests/fuzz/corpus/$target"/* "$srcdir/tests/fuzz/regress/$target"/*; do
    [ -f "$input" ] || continue
    name="$target: ${input#"$srcdir/tests/fuzz/"}"
    case $input in
      *.pending) skip "$name" "a known crash, not fixed yet"; continue ;;
    esac
    if $limit "$replay" "$input" >/dev/null 2>"$tmp/err"; then
      ok "$name"
    else
      fail_because "replay-$target exited with status $?"
      notok "$name"
      why=
    fi
  done
done
finish
