#!/bin/sh
# tests/bad-input.sh: the catalogue of bad inputs (issue 14), as a table:
# each row runs trainsim once and says the exit status it must end with,
# a text its stderr must hold (the place, file:line:col, then the words)
# and one it must not (or -). Adding a case is adding a row; an input the
# row needs goes in tests/data/bad/ or, when it is binary or large, is
# made below into $t.
#
# Run by automake with TRAINSIM (the binary) and srcdir in the
# environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/bad-input.sh
# Prints 'ok N - what' or 'not ok N - what' per row, then 'P passed, F failed'.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-bad.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

# The names the rows use: $d the checked-in inputs, $t the made ones.
d=$srcdir/tests/data/bad
t=$tmp

# repeat N TEXT: TEXT N times.
repeat () {
  awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s", s }'
}

{ printf 'a: '; repeat 50000 '['; } >"$t/deep.yaml"
{ printf 'a: '; repeat 30000 '{a: '; } >"$t/deep-flow.yaml"
deep=$(repeat 50000 '[')
printf 'model: tiny\ngpus:\000 16\n' >"$t/nul.yaml"
printf 'gpus,mfu\n64,\0000.5\n' >"$t/nul.csv"
printf 'model: tiny\ntopology: selene\ngpus: \303\050\n' >"$t/utf8.yaml"
printf 'model: tiny\ntopology: selene\ngpus: \001\n' >"$t/control.yaml"
# 20 lines of 100 bytes: byte 1024, past a 1 KiB cap, is line 11, column 25.
repeat 20 "# $(repeat 97 x)
" >"$t/big.yaml"
{ echo gpus,mfu; repeat 500 '64,0.5
'; } >"$t/big.csv"
# A name in models/ that is a symbolic link to itself, and a path that is.
mkdir -p "$t/loop/models"
ln -s loop.yaml "$t/loop/models/loop.yaml"
sed 's/^model: tiny/model: loop/' "$d/valid.yaml" >"$t/loop/experiment.yaml"
ln -s self.yaml "$t/self.yaml"
# An empty key among a sweep's axes (it aborted: it splits into no parts).
{ cat "$d/valid.yaml"; echo 'sweep: {"": [1]}'; } >"$t/sweep-empty-key.yaml"
{ cat "$d/valid.yaml"; echo 'sweep: {zip: {"": [1]}}'; } >"$t/zip-empty-key.yaml"

# The table. STATUS | STDERR HAS | STDERR LACKS (or -) | trainsim's
# arguments, as shell words (VAR=VALUE words first set the environment).
# A row's description is its arguments; keep rows on one line each.
table () {
  cat <<'EOF'
# Nesting: capped at 64 levels, at the bracket that goes past, at once.
2 | deep.yaml:1:67: nested deeper than 64 levels | - | run $t/deep.yaml
2 | deep-flow.yaml:1:256: nested deeper than 64 levels | - | run $t/deep-flow.yaml
2 | --set model: nested deeper than 64 levels | - | run $d/valid.yaml --set "model=$deep"
2 | a key of more than 64 parts | - | run $d/valid.yaml --set "$(repeat 70 a.)a=1"
# Size and bytes: read by length, capped, a NUL byte an error where it is.
2 | nul.yaml:2:6: a NUL byte | - | run $t/nul.yaml
2 | nul.csv:2:4: a NUL byte | - | plot $t/nul.csv --x gpus --y mfu -o $t/nul.pdf
2 | /dev/zero:1:1: a NUL byte | - | run /dev/zero
2 | /dev/zero:1:1: a NUL byte | - | validate /dev/zero
2 | /dev/zero:1:1: a NUL byte | - | plot /dev/zero --x gpus --y mfu -o $t/zero.pdf
2 | big.yaml:11:25: the input goes on past 1KiB, the most trainsim reads; if it is meant to be this large, raise the cap with TRAINSIM_MAX_INPUT | - | TRAINSIM_MAX_INPUT=1KiB run $t/big.yaml
2 | big.yaml:1:1: an experiment file must be a mapping | goes on past | TRAINSIM_MAX_INPUT=1MiB run $t/big.yaml
2 | big.csv:147:1: the input goes on past 1KiB | - | TRAINSIM_MAX_INPUT=1KiB plot $t/big.csv --x gpus --y mfu -o $t/big.pdf
2 | TRAINSIM_MAX_INPUT='lots': expected an amount of memory | - | TRAINSIM_MAX_INPUT=lots run $d/valid.yaml
# libyaml's reader errors at their line and column, not 1:1.
2 | utf8.yaml:3:8: malformed YAML: invalid trailing UTF-8 octet | - | run $t/utf8.yaml
2 | control.yaml:3:7: malformed YAML: control characters are not allowed | - | run $t/control.yaml
# Blame the --set that made a value a mapping, not the file.
2 | --set parallel.tp.x: parallel.tp must be a positive integer, got a mapping | valid.yaml: | run $d/valid.yaml --set parallel.tp.x=4
# A name that cannot be read says why, not "did you mean" itself.
2 | experiment.yaml:2:8: cannot read model file | did you mean | run $t/loop/experiment.yaml
2 | Too many levels of symbolic links | did you mean | run $t/loop/experiment.yaml
2 | --set model: cannot read model file | not found | run $d/valid.yaml --set model=$t/self.yaml
# A model's depth is capped: a step is replayed layer by layer.
2 | --set model.layers: model.layers must be at most 100000, got 2147483647 | - | run $d/valid.yaml --set model.layers=2147483647
# An empty list that must hold something says so, not "got a sequence".
2 | --set parallel.stage_layers: parallel.stage_layers must be a list of up to 128 integers, such as [5, 6, 6, 5] (the layers of each stage), or [], got '7' | - | run $d/valid.yaml --set "parallel.stage_layers=7"
# A directory given as an input is bad input, as a missing file is.
2 | cannot read | - | run $t/loop
2 | cannot read | - | validate $t/loop
2 | cannot read | - | plan $t/loop
# A file that is not an input is not quoted.
2 | not-an-experiment.txt:1:1: an experiment file must be a mapping | c2VjcmV0 | run $d/not-an-experiment.txt
2 | not-an-experiment.txt:1:1: a validation file must be a mapping | c2VjcmV0 | validate $d/not-an-experiment.txt
2 | not-an-experiment.txt:1:1: a model file must be a mapping of model keys | c2VjcmV0 | run $d/valid.yaml --set model=$d/not-an-experiment.txt
2 | not-a-mapping-of-keys.txt:1:1: not an experiment file: none of its keys | secret | run $d/not-a-mapping-of-keys.txt
2 | not-a-mapping-of-keys.txt:1:1: not a model file: none of its keys | secret | run $d/valid.yaml --set model=$d/not-a-mapping-of-keys.txt
# Numbers are decimal: no hexadecimal floats, in a file, a --set or a CSV.
2 | hex-number.yaml:6:20: training.tokens must be a positive number | - | run $d/hex-number.yaml
2 | --set compute.mfu: compute.mfu must be a fraction in (0, 1] | - | run $d/valid.yaml --set compute.mfu=0x1p-1
2 | --set cost.gpu_hour_usd: cost.gpu_hour_usd must be a positive number | - | run $d/valid.yaml --set cost.gpu_hour_usd=0x10
2 | hex.csv:2: megatron_tflops_per_gpu is '0x1p7', not a number | - | plot $d/hex.csv --x gpus --y megatron_tflops_per_gpu -o $t/hex.pdf
# A background that leaves a link nothing (it aborted in the flow model).
2 | background-keep-zero.yaml:2:93: topology.inter_node.fabric.background: load 0.9 with congestion_exponent 1000 leaves the job 0 of each shared link | Bail out | run $d/background-keep-zero.yaml
# topology.variability (issue 31): spreads in [0, 1), known keys, no more slow nodes than nodes.
2 | variability.yaml:3:58: topology.variability.gpu_speed_spread must be a share in [0, 1) | - | run $d/variability.yaml
2 | variability-slow-nodes.yaml:3:52: variability.slow_nodes 3 is more than the job's 2 nodes | - | run $d/variability-slow-nodes.yaml
2 | --set topology.variability.jitter: topology.variability.jitter must be a share in [0, 1) | - | run $d/valid.yaml --set topology.variability.jitter=-0.1
2 | --set topology.variability.slow_node_slowdown: topology.variability.slow_node_slowdown must be a share in [0, 1) | - | run $d/valid.yaml --set topology.variability.slow_node_slowdown=1.5
# A device's generation (issue 33): ampere or hopper.
2 | --set topology.gpu.generation: topology.gpu.generation: unknown value 'volta'; valid values: ampere or hopper | - | run $d/valid.yaml --set topology.gpu.generation=volta
2 | --set topology.variability.spread: unknown key 'spread' in topology.variability; valid keys: gpu_speed_spread, jitter, slow_nodes, slow_node_slowdown, seed | - | run $d/valid.yaml --set topology.variability.spread=0.1
2 | --set topology.variability.slow_nodes: topology.variability.slow_nodes must be an integer from 0 to 1000000 | - | run $d/valid.yaml --set topology.variability.slow_nodes=-1
2 | --set topology.inter_node.fabric.background.congestion_exponent: topology.inter_node.fabric.background: load 0.999999999 with congestion_exponent 40 | Bail out | run $d/valid.yaml --set topology.inter_node.fabric.background.load=0.999999999 --set topology.inter_node.fabric.background.congestion_exponent=40
# training.activation_checkpointing (issue 31): DeepSpeed's options only, on
# full recompute, under a DeepSpeed framework, with what each needs.
2 | activation-checkpointing.yaml:6:56: unknown key 'offload' in training.activation_checkpointing; valid keys: partition_activations, cpu_checkpointing, contiguous_memory_optimization, synchronize_checkpoint_boundary | - | run $d/activation-checkpointing.yaml
2 | activation-checkpointing-no-recompute.yaml:6:38: training.activation_checkpointing (partition_activations) acts on the layers' checkpoints: it needs training.recompute: full, got none | - | run $d/activation-checkpointing-no-recompute.yaml
2 | --set training.activation_checkpointing.partition_activations: framework megatron-lm@3 (Megatron-LM after v2.6, 2022 on) cannot run training.activation_checkpointing (partition_activations) | - | run $d/valid.yaml --set training.recompute=full --set training.activation_checkpointing.partition_activations=true
2 | --set training.activation_checkpointing.contiguous_memory_optimization: contiguous_memory_optimization needs partition_activations: true | - | run $d/valid.yaml --set framework=megatron-deepspeed --set training.recompute=full --set training.activation_checkpointing.contiguous_memory_optimization=true
2 | --set training.activation_checkpointing.cpu_checkpointing: cpu_checkpointing needs partition_activations: true under framework deepspeed@0.3 | - | run $d/valid.yaml --set framework=deepspeed@0.3 --set parallel.tp=1 --set training.recompute=full --set training.activation_checkpointing.cpu_checkpointing=true
2 | --set training.activation_checkpointing.cpu_checkpointing: cpu_checkpointing needs the topology's host section with pcie_bandwidth and memory (topology selene lacks pcie_bandwidth memory) | partition_activations | run $d/valid.yaml --set framework=megatron-deepspeed --set training.recompute=full --set training.activation_checkpointing.cpu_checkpointing=true
2 | --set training.activation_checkpointing.cpu_checkpointing: training.activation_checkpointing.cpu_checkpointing must be true or false, got '2' | - | run $d/valid.yaml --set training.activation_checkpointing.cpu_checkpointing=2
# Write and read bandwidth held to one floor; plan of fewer tokens than a
# step (a 300-digit read time, inf energy, a -nan closed form).
2 | --set topology.storage.read_bandwidth: topology.storage.read_bandwidth must be at least 1MB/s | - | plan $d/valid.yaml --set training.tokens=1e9 --set topology.storage.bandwidth=100GB/s --set topology.storage.read_bandwidth=1e-300GB/s
2 | --set topology.storage.bandwidth: topology.storage.bandwidth must be at least 1MB/s | - | plan $d/valid.yaml --set training.tokens=1e9 --set topology.storage.bandwidth=1e-300GB/s
2 | --set training.tokens: training.tokens (1e-320) is less than one step's 4096 (global_batch 32 x seq_len 128) | nan | plan $d/valid.yaml --set training.tokens=1e-320
# Budget mode (issue 38): a budget below the run of the family's smallest
# size, an unknown family, an optimum beyond what the family's rule builds.
2 | trainsim plan: --budget-usd 1 is too small for any model of family mpt: the smallest, mpt-7b, needs | - | plan $srcdir/experiments/gpt3-175b-selene.yaml --budget-usd 1 --family mpt -j 2
2 | trainsim plan: --family nope: no models named nope-* (families: | - | plan $srcdir/experiments/gpt3-175b-selene.yaml --budget-usd 1e6 --family nope
2 | trainsim plan: --budget-usd 1000000000000: the compute-optimal size: 5.77e+13 parameters is beyond what the rule builds from gpt3-175b: up to 10 times its size, 1.75e+12 | - | plan $srcdir/experiments/gpt3-175b-selene.yaml --budget-usd 1e12 -j 2
# A trace's size is estimated before a byte of it is written (4 GB came
# with no word); the budget variable is checked as the others are.
2 | the trace of this plan would take about | - | TRAINSIM_MAX_TRACE=1KiB run $d/valid.yaml -t $t/trace.json
2 | TRAINSIM_MAX_TRACE=lots: expected an amount of memory | - | TRAINSIM_MAX_TRACE=lots run $d/valid.yaml -t $t/trace.json
# The located errors that were right already.
2 | unknown-key.yaml:5:1: unknown key 'paralel' in the experiment (did you mean 'parallel'?) | - | run $d/unknown-key.yaml
2 | bad-unit.yaml:3:50: topology.intra_node.bandwidth: expected a bandwidth such as 200Gb/s | - | run $d/bad-unit.yaml
2 | tp-heads.yaml:6:7: tp 3 must divide the 4 attention heads | - | run $d/tp-heads.yaml
2 | malformed.yaml:3:5: malformed YAML: did not find expected ',' or ']' | - | run $d/malformed.yaml
2 | duplicate.yaml:4:1: duplicate key 'model' (first written at | - | run $d/duplicate.yaml
2 | anchor.yaml:1:8: anchors (&m) are not supported | - | run $d/anchor.yaml
2 | tag.yaml:1:8: tags (tag:yaml.org,2002:str) are not supported | - | run $d/tag.yaml
2 | two-documents.yaml:2:1: a second YAML document | - | run $d/two-documents.yaml
2 | unknown-model.yaml:1:8: unknown model 'tinny' (did you mean 'tiny'?) | - | run $d/unknown-model.yaml
2 | schema-version.yaml:1:17: schema_version must be 1 | - | run $d/schema-version.yaml
2 | unknown-schedule.yaml:4:70: parallel.schedule: unknown value '1f1c' (did you mean '1f1b'?) | - | run $d/unknown-schedule.yaml
2 | --set parallel.tp: parallel.tp must be a positive integer, got 'two' | - | run $d/valid.yaml --set parallel.tp=two
2 | --set parallel.tp: expected KEY=VALUE | - | run $d/valid.yaml --set parallel.tp
2 | case-not-mapping.yaml:2:9: a case must be a mapping | - | validate $d/case-not-mapping.yaml
2 | sweep-unknown-key.yaml:6:3: unknown key 'tpp' in parallel (did you mean 'tp'?) | - | sweep $d/sweep-unknown-key.yaml
2 | sweep-empty-key.yaml:6:9: '' is not a dotted key | - | sweep $t/sweep-empty-key.yaml
2 | zip-empty-key.yaml:6:15: '' is not a dotted key | - | sweep $t/zip-empty-key.yaml
2 | fields.csv:2: 3 fields, but the header has 2 | - | plot $d/fields.csv --x gpus --y megatron_tflops_per_gpu -o $t/fields.pdf
# Mixtures of experts (issue 32): top_k above the experts, ep not dividing
# the experts or the GPUs, etp with ep that no group layout allows, a
# capacity factor <= 0, MoE keys on a dense model.
2 | moe-top-k.yaml:1:40: model.top_k (5) must be from 1 to model.experts (4) | - | run $d/moe-top-k.yaml
2 | --set parallel.ep: ep 3 must divide the 8 experts | - | run $d/moe.yaml --set parallel.ep=3
2 | --set parallel.ep: etp x ep = 2 x 16 must divide a stage's tp x dp = 2 x 8 ranks | - | run $d/moe.yaml --set parallel.ep=16
2 | --set parallel.ep: etp x ep = 4 x 8 must divide | - | run $d/moe.yaml --set parallel.ep=8 --set parallel.etp=4
2 | --set parallel.etp: framework megatron-deepspeed@0 (Megatron-DeepSpeed) cannot run etp 4 with tp 2 | - | run $d/moe.yaml --set framework=megatron-deepspeed --set parallel.sequence_parallel=false --set parallel.etp=4
2 | --set parallel.ep: ep 8 must divide dp 4: DeepSpeed-MoE | - | run $d/moe.yaml --set framework=megatron-deepspeed --set parallel.sequence_parallel=false --set gpus=8 --set parallel.ep=8
2 | --set model.capacity_factor: model.capacity_factor must be a positive number | - | run $d/moe.yaml --set model.capacity_factor=0
2 | --set model.top_k: model.top_k applies to a mixture of experts only | - | run $d/valid.yaml --set model.top_k=2
2 | --set parallel.ep: parallel.ep 2 needs a mixture of experts | - | run $d/valid.yaml --set parallel.ep=2
2 | --set training.moe_imbalance: training.moe_imbalance must be at least 1 | - | run $d/moe.yaml --set training.moe_imbalance=0.5
2 | moe.yaml:2:30: framework megatron-lm@2 (Megatron-LM v2.x, 2021) cannot run a mixture of experts | - | run $d/moe.yaml --set framework=megatron-lm@2 --set parallel.sequence_parallel=false
# The output layer's tie and the positions' kind.
2 | --set model.position_embedding: model.position_embedding: unknown value 'sinusoidal'; valid values: learned, rotary or alibi | - | run $d/valid.yaml --set model.position_embedding=sinusoidal
2 | --set model.untied_embeddings: model.untied_embeddings must be true or false | - | run $d/valid.yaml --set model.untied_embeddings=maybe
# Megatron-Core's MoE layer raises an error with tp > 1 and no sequence
# parallelism.
2 | --set parallel.sequence_parallel: a mixture of experts with tp 2 needs sequence parallelism | - | run $d/moe.yaml --set parallel.sequence_parallel=false
# Megatron-Core's --overlap-param-gather needs its distributed optimizer
# and overlapped reduction, and a framework that has the flag.
2 | param-gather.yaml:5:82: param_gather_overlap needs the distributed optimizer | - | run $d/param-gather.yaml
2 | cannot run parallel.param_gather_overlap: it is Megatron-Core's | - | run $d/valid.yaml --set parallel.param_gather_overlap=true --set framework=megatron-lm@2
2 | --set parallel.tp_comm_overlap: tp_comm_overlap overlaps the sequence-parallel all-gathers | - | run $d/valid.yaml --set parallel.tp_comm_overlap=true --set parallel.sequence_parallel=false --set framework=megatron-lm@3
2 | cannot run parallel.tp_comm_overlap: it is Megatron-Core's --tp-comm-overlap | - | run $d/valid.yaml --set parallel.tp_comm_overlap=true --set framework=megatron-lm@2
# FP8: a device without an FP8 rate, a recipe not known.
2 | fp8-a100.yaml:6:23: training.precision: fp8 needs a device with an FP8 rate (peak.fp8) | - | run $d/fp8-a100.yaml
2 | --set training.attention: training.attention: cudnn is measured on Hopper GPUs only, and a100-sxm4-80gb is generation ampere | - | run $d/valid.yaml --set training.attention=cudnn
2 | fp8-recipe.yaml:6:40: training.fp8_recipe: unknown value 'mxfp8'; valid values: delayed or current | - | run $d/fp8-recipe.yaml
2 | cp.yaml:7:23: cp 3 must split seq_len 2048 into 2 x cp = 6 equal chunks (valid cp: 1, 2, 4 | - | run $d/cp.yaml
2 | cp.yaml:7:23: gpus 16 must be a multiple of tp x cp x pp = 6 | - | run $d/cp.yaml
2 | --set parallel.cp_kind: parallel.cp_kind: unknown value 'ring'; valid values: p2p or ulysses | - | run $d/cp.yaml --set parallel.cp=2 --set parallel.cp_kind=ring
2 | --set parallel.cp_kind: cp_kind ulysses needs cp 4 to divide a TP rank's 2 heads | - | run $d/cp.yaml --set parallel.cp=4 --set parallel.cp_kind=ulysses
2 | cp.yaml:8:11: cp 2 needs a fused attention kernel | - | run $d/cp.yaml --set parallel.cp=2 --set training.attention=unfused
2 | --set parallel.moe_shared_expert_overlap: moe_shared_expert_overlap overlaps an MoE layer's shared experts | - | run $srcdir/experiments/mixtral-8x7b-selene.yaml --set parallel.moe_shared_expert_overlap=true
2 | cannot run parallel.moe_shared_expert_overlap: it is Megatron-Core's --moe-shared-expert-overlap | - | run $srcdir/experiments/mixtral-8x7b-selene.yaml --set model=deepseek-moe-16b --set parallel.moe_shared_expert_overlap=true --set framework=deepspeed --set parallel.sequence_parallel=false
2 | sharp-a100.yaml:3:82: topology.intra_node.sharp: NVLink SHARP needs third-generation NVSwitches and Hopper GPUs; a100-sxm4-80gb is generation ampere | - | run $d/sharp-a100.yaml
2 | sharp-pcie.yaml:3:79: topology.intra_node.sharp: NVLink SHARP reduces in NVSwitches; this node's link is pcie | - | run $d/sharp-pcie.yaml
2 | --set topology.intra_node.sharp: topology.intra_node.sharp must be true or false, got 'yes2' | - | run $d/valid.yaml --set topology.intra_node.sharp=yes2
2 | --set topology.intra_node.sharp: topology.intra_node.sharp: NVLink SHARP needs third-generation NVSwitches and Hopper GPUs | - | collective selene --gpus 8 --set intra_node.sharp=true
2 | ib-sharp-roce.yaml:3:103: topology.inter_node.sharp: InfiniBand SHARP reduces in InfiniBand switches; this fabric's link is roce | - | run $d/ib-sharp-roce.yaml
2 | --set topology.inter_node.sharp: topology.inter_node.sharp: InfiniBand SHARP reduces in InfiniBand switches; this fabric's link is slingshot-11 | - | collective perlmutter --gpus 16 --set inter_node.sharp=true
2 | unknown --algo 'nvlstree' (valid: auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct or collnet_chain) | - | collective selene --gpus 16 -a nvlstree
2 | coll-algorithm.yaml:8:79: case.algorithm: unknown value 'butterfly'; valid values: auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct or collnet_chain | - | validate $d/coll-algorithm.yaml
EOF
}

# trim TEXT: TEXT without the blanks around it.
trim () {
  printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

# Read from a file, not a pipe: the loop must run in this shell to count.
table >"$tmp/table"
while IFS='|' read -r status has lacks args; do
  case $status in '#'* | '') continue ;; esac
  status=$(trim "$status")
  has=$(trim "$has")
  lacks=$(trim "$lacks")
  args=$(trim "$args")
  eval "set -- $args"
  # The VAR=VALUE words in front, for env.
  envs=
  while [ $# -gt 0 ] && case $1 in [A-Z]*=*) true ;; *) false ;; esac; do
    envs="$envs $1"
    shift
  done
  # shellcheck disable=SC2086 # $envs: VAR=VALUE words, split on purpose
  env $envs "$TRAINSIM" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  [ "$rc" -eq "$status" ] || fail_because "exit status $rc, expected $status"
  grep -qF -- "$has" "$tmp/err" || fail_because "stderr lacks '$has'"
  [ "$lacks" = - ] || ! grep -qF -- "$lacks" "$tmp/err" || fail_because "stderr has '$lacks'"
  verdict "$(printf '%s' "$args" | cut -c1-100): exit $status, $has"
done <"$tmp/table"

"$TRAINSIM" run --help >"$tmp/out" 2>"$tmp/err"
grep -q 'TRAINSIM_MAX_INPUT' "$tmp/out" || fail_because "run --help does not name TRAINSIM_MAX_INPUT"
"$TRAINSIM" plot --help >"$tmp/out" 2>"$tmp/err"
grep -q 'TRAINSIM_MAX_INPUT' "$tmp/out" || fail_because "plot --help does not name TRAINSIM_MAX_INPUT"
verdict "--help says how large an input may be and how to raise it"

finish
