#!/bin/sh
# validate.sh: every published measurement in experiments/validation/ must
# stay within its file's tolerance (the bounds may only tighten). Prints
# each file's summary line, then "N passed, N failed" over the files.
: "${TRAINSIM:?TRAINSIM must name the trainsim binary}"
: "${srcdir:=.}"
passed=0
failed=0
for f in "$srcdir"/experiments/validation/*.yaml; do
  if "$TRAINSIM" validate "$f" >validate.out 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    cat validate.out
  fi
  grep 'MAPE' validate.out
done
rm -f validate.out
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
