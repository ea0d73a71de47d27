#!/bin/sh
# llm-foundry-to-yaml.sh: print the cases of one table of MosaicML's
# llm-foundry benchmark README as trainsim validation cases (the `cases:`
# list of llm-foundry-h100-fp8.yaml and llm-foundry-h100-large.yaml; each
# file's header, written by hand, says how the table was read).
#
# Usage: llm-foundry-to-yaml.sh README SECTION
#   README   scripts/train/benchmarking/README.md of mosaicml/llm-foundry
#            (e.g. `git show 8c8dd48f:scripts/train/benchmarking/README.md`)
#   SECTION  the table's heading without "## ", e.g. "H100 80GB FP8"
#
# Each table row becomes one case: the MPT model's dimensions from its name
# (llm-foundry's scripts/train/yamls/pretrain/mpt-*.yaml: n_layers, d_model,
# n_heads), the layout (tp = pp = 1, dp = # GPUs, micro_batch, global batch
# in sequences, checked to equal micro x accum x GPUs), the sharding
# (FULL_SHARD is ZeRO 3, SHARD_GRAD_OP ZeRO 2), the recomputation
# (activation checkpointing: full or none), the precision (amp_fp8 is
# training.precision fp8, amp_bf16 bf16) and the measured iteration time,
# GlobalBatchSize (T) / Throughput (T/s). A row it cannot read (an unknown
# model, a batch that does not add up) stops it with an error. The
# attention each model ran is given as name=kind pairs in ATTN (default:
# every model flash1-triton, submit_benchmarks.py's --attn_impl triton).
# POSIX sh and awk.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 README SECTION" >&2; exit 2; }
readme=$1
section=$2
[ -r "$readme" ] || { echo "$0: cannot read $readme" >&2; exit 2; }

awk -v section="$section" -v attn="${ATTN:-}" '
function fail(msg) { print FILENAME ":" NR ": " msg > "/dev/stderr"; bad = 1; exit 2 }
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
BEGIN {
  # MPT yamls: n_layers d_model n_heads (expansion 4, vocab 50368).
  dims["125m"] = "12 768 12";   dims["350m"] = "24 1024 16"
  dims["760m"] = "24 1536 12";  dims["1b"] = "24 2048 16"
  dims["3b"] = "32 2560 20";    dims["7b"] = "32 4096 32"
  dims["13b"] = "40 5120 40";   dims["30b"] = "48 7168 56"
  dims["70b"] = "80 8192 64"
  n = split(attn, pairs, / +/)
  for (i = 1; i <= n; i++)
    if (split(pairs[i], kv, "=") == 2)
      kind[kv[1]] = kv[2]
  found = 0
}
/^## / { inside = (substr($0, 4) == section); if (inside) found = 1; next }
inside && /^\|/ {
  nf = split($0, c, "|")
  # c[1] is empty (the line starts with |): columns are c[2] .. c[nf-1].
  model = trim(c[2])
  if (model == "Model" || model ~ /^-+$/) next
  if (!(model in dims)) fail("unknown model " model)
  seq = trim(c[3]); gpus = trim(c[4]); gpu = trim(c[5])
  mfu = trim(c[6]); hfu = trim(c[7])
  micro = trim(c[9]); accum = trim(c[10]); global = trim(c[11])
  tps = trim(c[13]); tokens = trim(c[15]); prec = trim(c[16])
  mp = trim(c[17]); shard = trim(c[18]); ckpt = trim(c[19])
  params = trim(c[21])
  if (micro * accum * gpus != global)
    fail(sprintf("micro %d x accum %d x %d GPUs != global %d", micro, accum, gpus, global))
  if (global * seq != tokens)
    fail(sprintf("global %d x seq %d != %d tokens", global, seq, tokens))
  split(dims[model], d, " ")
  zero = shard == "FULL_SHARD" ? 3 : shard == "SHARD_GRAD_OP" ? 2 : -1
  if (zero < 0) fail("unknown sharding " shard)
  if (prec != "amp_fp8" && prec != "amp_bf16") fail("unknown precision " prec)
  iter = tokens / tps
  tag = (prec == "amp_fp8" ? "fp8" : "amp") (ckpt == "True" ? "-ckpt" : "")
  id = sprintf("l%d-%s-s%d-g%d-mb%d-ga%d-%s", NR, model, seq, gpus, micro, accum, tag)
  printf "  # README.md line %d (section \"%s\"): %s %s, seq %d, %d GPUs, MFU %s %%, HFU %s %%, micro %d x accum %d,\n", \
    NR, section, model, gpu, seq, gpus, mfu, hfu, micro, accum
  printf "  #   global %d seq = %d tok, %d tok/s; %s %s %s, act. ckpt %s, NumParams %s. iteration = %d / %d = %.4f s\n", \
    global, tokens, tps, prec, mp, shard, ckpt, params, tokens, tps, iter
  printf "  - {id: %s, model: {layers: %d, hidden: %d, heads: %d, seq_len: %d}, topology: dgx-h100, gpus: %d,\n", \
    id, d[1], d[2], d[3], seq, gpus
  printf "     parallel: {tp: 1, pp: 1, dp: %d, micro_batch: %d, global_batch: %d},\n", gpus, micro, global
  printf "     zero: {stage: %d},\n", zero
  printf "     training: {precision: %s, recompute: %s, attention: %s}, measured: {iteration_time_s: %.6g}}\n", \
    prec == "amp_fp8" ? "fp8" : "bf16", ckpt == "True" ? "full" : "none", \
    (model in kind) ? kind[model] : "flash1-triton", iter
}
END { if (!bad && !found) { print "no section \"" section "\"" > "/dev/stderr"; exit 2 } }
' "$readme"
