#!/bin/sh
# tests/frameworks.sh: framework profiles (src/config/framework.c). Each
# framework refuses what its code cannot run, naming the rule (exit 2);
# search offers only what the framework runs; search's JSON rows replay
# with run to the same time; the same plan costs differently under two
# frameworks.
#
# Run by automake with srcdir in the environment; by hand, from the top
# build directory: srcdir=. sh tests/frameworks.sh
set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fw.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE
gpt=$srcdir/experiments/gpt3-175b-selene.yaml

# One refusal per rule: the framework, the file:line:col of the value or
# the --set, the rule's source and what would run.
refused () {
  what=$1; want=$2; shift 2
  ts run "$gpt" "$@"
  [ "$rc" -eq 2 ] || fail_because "$what: exit status $rc, expected 2"
  grep -q "$want" "$tmp/err" || fail_because "$what: stderr: $(cut -c 1-300 "$tmp/err")"
}
refused "megatron-lm: ZeRO-2" "framework megatron-lm@3 .*cannot run ZeRO stage 2: .*distrib_optimizer.py.*valid: zero.stage 0 or 1" \
  --set zero.stage=2
refused "megatron-lm: offload" "cannot run CPU offload" --set zero.stage=1 --set zero.offload=optimizer
refused "megatron-lm@2: sequence parallelism" "^  --set parallel.sequence_parallel: framework megatron-lm@2 .*cannot run sequence parallelism" \
  --set framework=megatron-lm@2.6 --set parallel.sequence_parallel=true
refused "megatron-lm@2: ZeRO-1" "framework megatron-lm@2 .*cannot run ZeRO stage 1: .*valid: zero.stage 0$" \
  --set framework=megatron-lm@2 --set zero.stage=1
refused "megatron-deepspeed: ZeRO-2 with pp" "^  --set zero.stage:.*PipelineEngine asserts ZeRO stage < 2 (deepspeed/runtime/pipe/engine.py); valid: zero.stage 0 or 1 with pp > 1, or pp 1" \
  --set framework=megatron-deepspeed --set zero.stage=2 --set parallel.pp=8 --set parallel.dp=16
refused "megatron-deepspeed: interleaving" "^  --set parallel.virtual_stages: .*cannot run the interleaved schedule: DeepSpeed's TrainSchedule" \
  --set framework=megatron-deepspeed --set parallel.schedule=interleaved --set parallel.virtual_stages=2 \
  --set parallel.pp=8 --set parallel.dp=16
refused "megatron-deepspeed: selective recompute" "^  --set training.recompute: .*cannot run selective recompute" \
  --set framework=megatron-deepspeed --set training.recompute=selective
refused "megatron-deepspeed: the interleaved schedule alone" "^  --set parallel.schedule: .*cannot run the interleaved schedule" \
  --set framework=megatron-deepspeed --set parallel.schedule=interleaved
refused "deepspeed: tp" "framework deepspeed@0.5 .*cannot run tp 8: DeepSpeed has no tensor-parallel layers" \
  --set framework=deepspeed
refused "pytorch-fsdp: pp" "cannot run pp 16: FSDP has no pipeline schedule" \
  --set framework=pytorch-fsdp --set parallel.tp=1 --set parallel.dp=64
refused "pytorch-fsdp: ZeRO-1" "cannot run ZeRO stage 1: its ShardingStrategy.*valid: zero.stage 0, 2 or 3$" \
  --set framework=pytorch-fsdp --set parallel.tp=1 --set parallel.pp=1 --set parallel.dp=1024 \
  --set zero.stage=1
refused "pytorch-fsdp: the optimizer offloaded alone" "cannot run the optimizer offloaded alone: CPUOffload" \
  --set framework=pytorch-fsdp --set parallel.tp=1 --set parallel.pp=1 --set parallel.dp=1024 \
  --set zero.stage=3 --set zero.offload=optimizer
verdict "each framework refuses what it cannot run, with its rule and source, exit 2"

refused "unknown framework" "^trainsim: --set framework: framework: unknown framework 'megatron'.*valid: megatron-lm, megatron-deepspeed, deepspeed or pytorch-fsdp" \
  --set framework=megatron
{ cat "$gpt"; echo "framework: deepspeed@0.3.16-rc1"; } >"$tmp/fw.yaml"
ts run "$tmp/fw.yaml"
[ "$rc" -eq 2 ] || fail_because "in a file: exit status $rc, expected 2"
grep -q "fw.yaml:[0-9]*:12: framework: version '0.3.16-rc1' is not a version such as 0.3" "$tmp/err" ||
  fail_because "in a file: stderr: $(cut -c 1-300 "$tmp/err")"
refused "bad version" "version 'x.1' is not a version" --set framework=deepspeed@x.1
refused "too old" "deepspeed before 0.3 is not modelled" --set framework=deepspeed@0.2
verdict "an unknown framework or version exits 2 with what is valid"

ts search "$gpt" --set framework=deepspeed --top 100 -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q 'framework deepspeed@0.5: [0-9]* plans fit' "$tmp/out" || fail_because "no header"
grep '^ *[0-9]*\. tp ' "$tmp/out" >"$tmp/plans"
[ -s "$tmp/plans" ] || fail_because "no plans"
grep -v '^ *[0-9]*\. tp 1 ' "$tmp/plans" | head -1 | grep . && fail_because "tp > 1 offered"
grep ' v [2-9]' "$tmp/plans" | head -1 | grep . && fail_because "interleaving offered"
grep ', sp' "$tmp/plans" | head -1 | grep . && fail_because "sequence parallelism offered"
grep -v ' pp 1 ' "$tmp/plans" | grep 'zero [23]' | head -1 | grep . &&
  fail_because "ZeRO-2/3 with pp > 1 offered"
verdict "search under deepspeed offers no tp, interleaving, SP, or ZeRO-2/3 with pp > 1"

ts search "$gpt" --set training.recompute=full --set zero.stage=0 --set parallel.tp=8 -j 2 --top 50
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep '^ *[0-9]*\. tp ' "$tmp/out" >"$tmp/plans"
[ -s "$tmp/plans" ] || fail_because "no plans"
grep -v '^ *[0-9]*\. tp 8 .*, recompute full, zero 0' "$tmp/plans" | head -1 | grep . &&
  fail_because "a plan not held at the --set values"
verdict "search holds every axis given with --set (recompute, ZeRO stage, tp)"

# JSON: one document; every row run with its own --set list gives the
# same time, to the digit.
ts search "$gpt" --set framework=megatron-deepspeed --format json --top 4 -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/out" >"$tmp/rows" <<'PY' || fail_because "not JSON: $(head -c 300 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["search"]["framework"] == "megatron-deepspeed@0", d["search"]
assert len(d["plans"]) == 4
for p in d["plans"]:
    print(repr(p["iteration_time_s"]) + "|" + "|".join(p["set"]))
PY
  while IFS='|' read -r want rest; do
    set -- ; oldifs=$IFS; IFS='|'
    for kv in $rest; do set -- "$@" --set "$kv"; done
    IFS=$oldifs
    got=$("$TRAINSIM" run "$gpt" --set framework=megatron-deepspeed "$@" -f json |
          python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["iteration_time_s"]))')
    [ "$got" = "$want" ] || fail_because "run $*: $got s, search said $want s"
  done <"$tmp/rows"
  verdict "search --format json parses, and each row replays with run to the same time"
else
  skip "search --format json parses, and each row replays with run to the same time" "no python3"
fi

ts search "$gpt" --format csv --top 3 -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
head -1 "$tmp/out" | grep -q '^rank,plan,set,iteration_time_s,' || fail_because "header: $(head -1 "$tmp/out")"
[ "$(grep -c '^[0-9],"tp ' "$tmp/out")" -eq 3 ] || fail_because "not three rows"
verdict "search --format csv: a header and a row per plan"

# The same plan under two frameworks: GPT-3 13B with ZeRO-1 on 64 GPUs, bf16.
# Both reduce-scatter after the last backward by default; Megatron-LM's
# --overlap-grad-reduce (gradient_bucketing: true) hides it under backward;
# DeepSpeed with ZeRO-2 reduces every micro-batch.
plan="--set model=gpt3-13b --set gpus=64 --set parallel.tp=1 --set parallel.pp=1 --set parallel.dp=64 --set parallel.micro_batch=1 --set parallel.global_batch=512 --set training.recompute=full --set zero.stage=1 --set training.precision=bf16"
ts run "$gpt" $plan -f json
meg=$(sed -n 's/.*"iteration_time_s": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
megdp=$(sed -n 's/.*"dp_traffic_gib": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
ts run "$gpt" $plan --set parallel.gradient_bucketing=true -f json
megov=$(sed -n 's/.*"iteration_time_s": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
ts run "$gpt" $plan --set framework=deepspeed -f json
ds=$(sed -n 's/.*"iteration_time_s": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
ts run "$gpt" $plan --set framework=deepspeed --set zero.stage=2 -f json
ds2dp=$(sed -n 's/.*"dp_traffic_gib": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
awk -v m="$meg" -v o="$megov" -v d="$ds" 'BEGIN { exit !(o > 0 && m > o && d > o) }' ||
  fail_because "megatron-lm $meg s, with --overlap-grad-reduce $megov s, deepspeed $ds s: the unoverlapped reduction is not slower"
# 8 micro-batches: DeepSpeed's ZeRO-2 moves 8 reduce-scatters of bf16
# gradients and a gather of bf16 parameters (8 x 2 + 2 bytes a parameter);
# Megatron-LM's ZeRO-1 one reduce-scatter, of its fp32 main_grad, and one
# gather (4 + 2): 3 x.
awk -v a="$megdp" -v b="$ds2dp" 'BEGIN { exit !(a > 0 && b / a > 2.95 && b / a < 3.05) }' ||
  fail_because "dp traffic: ZeRO-1 $megdp GiB, DeepSpeed ZeRO-2 $ds2dp GiB (expected 3 x)"
verdict "one plan under megatron-lm and deepspeed: what each overlaps and moves"

finish
