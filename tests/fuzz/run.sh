#!/bin/sh
# tests/fuzz/run.sh SECONDS TARGET...: `make fuzz`, from the top build
# directory of a --enable-fuzz build: runs each libFuzzer target
# tests/fuzz/fuzz-TARGET for SECONDS, one after the other, in one process
# at nice 10, from its seed corpus (tests/fuzz/corpus/TARGET) and the
# corpus grown by earlier runs (tests/fuzz/work/TARGET, kept, so that the
# next run goes on from there). A crash, a leak, a sanitizer report, an
# input that takes over 10 s or a process over 2 GiB is a finding: its
# input is saved as tests/fuzz/crashes/TARGET-crash-* (or -timeout-,
# -leak-, -oom-) and the script exits 1 once every target has run.
set -u
seconds=$1
shift
fuzzdir=$(cd "$(dirname "$0")" && pwd) || exit 99
found=
# libFuzzer checks each input for leaks; the check at exit would also
# count GLib's quark arrays, which g_quark_new drops on purpose as the
# table grows (yamltree.c interns each "--set KEY" it meets).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}leak_check_at_exit=0
export ASAN_OPTIONS

for target in "$@"; do
  work=tests/fuzz/work/$target
  crashes=tests/fuzz/crashes
  log=$crashes/$target.log
  mkdir -p "$work" "$crashes" || exit 99
  # The YAML targets get room for deep nesting and long flow mappings.
  case $target in
    csv) dict=csv.dict max_len=16384 ;;
    *) dict=yaml.dict max_len=65536 ;;
  esac
  echo "== fuzz-$target: $seconds s (log: $log)"
  if nice -n 10 "tests/fuzz/fuzz-$target" -max_total_time="$seconds" \
       -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
       -dict="$fuzzdir/$dict" -artifact_prefix="$crashes/$target-" \
       -print_final_stats=1 "$work" "$fuzzdir/corpus/$target" >"$log" 2>&1; then
    sed -n 's/^stat::number_of_executed_units: */  runs: /p
            s/^stat::new_units_added: */  new inputs: /p' "$log"
  else
    found="$found $target"
    # The report: the sanitizer's or libFuzzer's lines, and the input.
    grep -v '^#[0-9]' "$log" | tail -n 60
    echo "fuzz-$target found a problem: replay it with tests/fuzz/fuzz-$target FILE;"
    echo "once fixed, keep FILE as tests/fuzz/regress/$target/NAME (see the README)"
  fi
done
if [ -n "$found" ]; then
  echo "fuzzing found problems in:$found"
  exit 1
fi
echo "fuzzing found no problem"
