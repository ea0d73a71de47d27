#!/bin/sh
# tests/llm-foundry.sh: experiments/validation/llm-foundry-to-yaml.sh, which
# turns a table of llm-foundry's benchmark README into validation cases
# (llm-foundry-h100-fp8.yaml, llm-foundry-h100-large.yaml). The README is not
# shipped, so its tables are rebuilt here from the committed files' comments,
# each row on the README line its case names: the script must give each
# file's cases back byte for byte, and validate must score them. Then its
# bad input: an unknown model, a batch that does not add up, a section that
# is not there; each fails naming the line.
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: TRAINSIM=./trainsim srcdir=. sh tests/llm-foundry.sh

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-llm-foundry.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

script=$srcdir/experiments/validation/llm-foundry-to-yaml.sh
fp8=$srcdir/experiments/validation/llm-foundry-h100-fp8.yaml
large=$srcdir/experiments/validation/llm-foundry-h100-large.yaml
fp8_section='H100 80GB FP8'
large_section='H100 80GB BF16 (Large Scale, >= 128 GPUs)'
large_attn='1b=flash2 3b=flash2 7b=flash2 70b=flash2'

# rows FILE: "LINE||table row" for each case of FILE, read back from
# its two comment lines (the columns the script does not read are 0).
rows () {
  awk '
    /^  # README.md line / { line = $4; next1 = 1; hdr = $0; next }
    next1 && /^  #   global / { next1 = 0
      model = hdr; sub(/.*\): /, "", model); sub(/ .*/, "", model)
      gpu = hdr; sub(/.*\): [^ ]* /, "", gpu); sub(/,.*/, "", gpu)
      seq = hdr; sub(/.*seq /, "", seq); sub(/,.*/, "", seq)
      gpus = hdr; sub(/.*seq [0-9]*, /, "", gpus); sub(/ GPUs.*/, "", gpus)
      mfu = hdr; sub(/.*MFU /, "", mfu); sub(/ %.*/, "", mfu)
      hfu = hdr; sub(/.*HFU /, "", hfu); sub(/ %.*/, "", hfu)
      micro = hdr; sub(/.*micro /, "", micro); sub(/ x.*/, "", micro)
      accum = hdr; sub(/.*accum /, "", accum); sub(/,.*/, "", accum)
      global = $0; sub(/.*global /, "", global); sub(/ seq.*/, "", global)
      tokens = $0; sub(/.*seq = /, "", tokens); sub(/ tok,.*/, "", tokens)
      tps = $0; sub(/.*tok, /, "", tps); sub(/ tok\/s.*/, "", tps)
      split($0, w, "; "); split(w[2], v, /[ ,]+/)
      ckpt = $0; sub(/.*ckpt /, "", ckpt); sub(/,.*/, "", ckpt)
      params = $0; sub(/.*NumParams /, "", params); sub(/\..*/, "", params)
      printf "%d|||  %s | %s | %s | %s | %s | %s | 0 | %s | %s | %s | 0 | %s | 0 | %s | %s | %s | %s | %s | False | %s |\n", \
        line, model, seq, gpus, gpu, mfu, hfu, micro, accum, global, tps, tokens, v[1], v[2], v[3], ckpt, params
    }' "$1"
}

# readme FILE SECTION OUT: a README with SECTION's table holding FILE's rows
# on their lines, another section before it and one after.
readme () {
  rows "$1" >"$tmp/rows"
  awk -F'\\|\\|' -v section="$2" '
    { line[NR] = $1; row[NR] = $2; n = NR }
    END {
      first = line[1]
      for (i = 1; i < first - 3; i++) print (i == 1 ? "## Another table" : "")
      print "## " section
      print "|  Model | SeqLen (T) | # GPUs | GPU | MFU | HFU | ..."
      print "|  --- | --- |"
      at = first
      for (i = 1; i <= n; i++) { while (at < line[i]) { print ""; at++ } print row[i]; at++ }
      print ""
      print "## A100 80GB"
      print "|  13b | 2048 | 8 | a100_80gb | 1 | 1 | 0 | 2 | 3 | 48 | 0 | 1 | 0 | 98304 | amp_bf16 | DEFAULT | FULL_SHARD | False | False | 1 |"
    }' "$tmp/rows" >"$3"
}

# cases FILE: the committed cases, from the line after "cases:".
cases () {
  sed '1,/^cases:$/d' "$1"
}

readme "$fp8" "$fp8_section" "$tmp/fp8.md"
readme "$large" "$large_section" "$tmp/large.md"

# gives_back FILE MD SECTION N DESC: records whether the script, on the
# README MD rebuilt from FILE (ATTN from the environment), prints FILE's N
# cases byte for byte.
gives_back () {
  if ! sh "$script" "$2" "$3" >"$tmp/out.yaml" 2>"$tmp/err"; then
    fail_because "the script failed: $(cat "$tmp/err")"
  elif ! cases "$1" | cmp -s - "$tmp/out.yaml"; then
    fail_because "its output differs from the committed cases: $(cases "$1" | diff - "$tmp/out.yaml" | head -n 4 | tr '\n' ' ')"
  elif [ "$(grep -c '^  - {id: ' "$tmp/out.yaml")" != "$4" ]; then
    fail_because "want the table's $4 rows"
  fi
  verdict "$5"
}

why=
gives_back "$fp8" "$tmp/fp8.md" "$fp8_section" 7 \
  "the FP8 file's cases are the script's output from its table, 7 rows"
ATTN=$large_attn gives_back "$large" "$tmp/large.md" "$large_section" 18 \
  "the large-scale file's cases are the script's output with its ATTN, 18 rows"

grep -q 'zero: {stage: 2},' "$large" && grep -q 'zero: {stage: 3},' "$large" ||
  fail_because "SHARD_GRAD_OP is not ZeRO 2 beside FULL_SHARD's 3"
grep -q 'id: l92-1b-.*' "$large" && grep -A3 'id: l92-1b-' "$large" | grep -q 'attention: flash2' ||
  fail_because "1b does not run the FlashAttention-2 its sweep names"
grep -A3 'id: l83-13b-' "$large" | grep -q 'attention: flash1-triton' ||
  fail_because "13b does not run the Triton kernel its sweep names"
verdict "sharding and attention follow the table and its sweep"

# 3b at 32K: 144 sequences of 32768 tokens at 46853 tokens/s.
grep -A3 'id: l154-3b-s32768-' "$fp8" | grep -q 'precision: fp8, recompute: full,.*iteration_time_s: 100.711}' ||
  fail_because "the 3b 32K row is not fp8, recomputed, 4718592 / 46853 = 100.711 s"
verdict "a row's time is its tokens over its throughput, in fp8"

scores_every_case "$fp8"
scores_every_case "$large"

# Bad input: each fails (exit 2) and names the README line.
refuses () {
  if sh "$script" "$1" "$2" >"$tmp/bad.out" 2>"$tmp/err"; then
    fail_because "the script accepted it"
  elif ! grep -Eq -- "$3" "$tmp/err"; then
    fail_because "stderr lacks /$3/: $(cat "$tmp/err")"
  fi
  verdict "$4"
}
line=$(grep -n '^|  1b | 512 ' "$tmp/fp8.md" | cut -d: -f1)
sed "${line}s/^|  1b /|  2b /" "$tmp/fp8.md" >"$tmp/bad.md"
refuses "$tmp/bad.md" "$fp8_section" "bad.md:$line: unknown model 2b" "an unknown model fails at its line"
sed "${line}s/| 56 | 4 | 1792 |/| 56 | 4 | 1793 |/" "$tmp/fp8.md" >"$tmp/bad.md"
refuses "$tmp/bad.md" "$fp8_section" "bad.md:$line: micro 56 x accum 4 x 8 GPUs != global 1793" \
  "a batch that does not add up fails at its line"
refuses "$tmp/fp8.md" "H100 80GB FP16" 'no section "H100 80GB FP16"' "a missing section fails"

finish
