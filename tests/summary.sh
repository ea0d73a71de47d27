#!/bin/sh
# summary.sh: one closing line for the whole test run, counted from the
# test logs: Check's "Checks: N, Failures: F, Errors: E" lines and the
# shell tests' "N passed, N failed" lines. A test program that left no
# such line (it crashed) counts as one failure. Before it, the line of
# validation goals met that tests/validate.sh wrote.
passed=0
failed=0
for log in tests/*.log; do
  [ -f "$log" ] || continue
  counts=$(sed -n \
    -e 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' \
    -e 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2 0 shell/p' "$log" | tail -n 1)
  if [ -z "$counts" ]; then
    failed=$((failed + 1))
    echo "$log: no summary line (crashed?)"
    continue
  fi
  # shellcheck disable=SC2086 # split the counts into $1 $2 $3 $4
  set -- $counts
  if [ "${4:-}" = shell ]; then
    passed=$((passed + $1))
    failed=$((failed + $2))
  else
    passed=$((passed + $1 - $2 - $3))
    failed=$((failed + $2 + $3))
  fi
done
# How many files meet their accuracy goal, beside the guards' count: a
# green run must not read as "every goal met" (tests/validate.sh).
[ -f tests/validate.sh.log ] && grep '^validation goals: ' tests/validate.sh.log
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
