#!/bin/sh
# tests/plan-combos.sh: small plans over the product of the options that
# change how a step is built (framework, layout and schedule, ZeRO stage,
# overlapped gradient reduction and parameter gather, recompute, experts,
# CPU offload), each replayed one rank a stage and every rank (--full):
# every run ends with status 0 (fits), 1 (does not fit) or 2 (a rule of
# the plan, said), never an abort; one that runs prints its step. It
# found a deadlock of --full with param_gather_overlap over model chunks
# (NEWS). One case a framework and layout. TRAINSIM_TEST_LIGHT (the
# sanitizers' build in .ci/run) keeps two frameworks.
#
# Run by automake with srcdir in the environment; by hand, from the top
# build directory: srcdir=. sh tests/plan-combos.sh
set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-combos.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

# GPT-3 Small cut to 8 layers on 16 A100s of Selene: stages of a few
# GPUs share nodes, and 32 sequences make 8 to 32 micro-batches a
# pipeline.
cat >"$tmp/base.yaml" <<'YAML'
schema_version: 1
model: {name: gpt3-125m, layers: 8}
topology: selene
gpus: 16
parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 32, sequence_parallel: true}
training: {precision: bf16, recompute: none}
zero: {stage: 0}
YAML

# group FW TP PP V SCHEDULE: replays every option with that framework
# and layout, stopping at the first run that fails the rule above.
group () {
  fw=$1 tp=$2 pp=$3 v=$4 sched=$5
  for z in 0 1 3; do
    for overlap in "false false" "true false" "true true"; do
      set -- $overlap
      for recompute in none full; do
        for moe in 0 1; do
          for off in none optimizer; do
            args="--set framework=$fw --set parallel.tp=$tp --set parallel.pp=$pp
              --set parallel.virtual_stages=$v --set parallel.schedule=$sched
              --set zero.stage=$z --set parallel.gradient_bucketing=$1
              --set parallel.param_gather_overlap=$2
              --set training.recompute=$recompute --set zero.offload=$off"
            [ "$moe" = 1 ] && args="$args --set model.experts=4 --set parallel.ep=2"
            # shellcheck disable=SC2086
            args=$(echo $args)   # one line, for the messages
            for mode in "" --full; do
              # shellcheck disable=SC2086
              ts run "$tmp/base.yaml" $args $mode -f json
              case $rc in
                0 | 1) grep -q '"iteration_time_s": [0-9]' "$tmp/out" ||
                         fail_because "no step from run $args $mode" ;;
                2) grep -q 'cannot run\|must\|needs' "$tmp/err" ||
                     fail_because "status 2 without a rule from run $args $mode" ;;
                *) fail_because "status $rc from run $args $mode" ;;
              esac
              [ -n "$why" ] && return
            done
          done
        done
      done
    done
  done
}

frameworks="megatron-lm@3 megatron-deepspeed deepspeed pytorch-fsdp"
[ -n "${TRAINSIM_TEST_LIGHT:-}" ] && frameworks="megatron-lm@3 deepspeed"
for fw in $frameworks; do
  # tp pp virtual-stages schedule: micro-batch 0 of chunk 1 is the fifth
  # item of an interleaved stage at pp 4.
  for layout in "2 2 1 1f1b" "2 4 2 interleaved" "1 4 1 gpipe" "1 1 1 1f1b" \
                "1 2 4 interleaved"; do
    # shellcheck disable=SC2086
    group "$fw" $layout
    verdict "$fw, tp pp v schedule $layout: every option replays or is refused"
  done
done
finish
