#!/bin/sh
# tests/cli.sh: the command line contract of doc/trainsim.1 (OUTPUT, EXIT
# STATUS) and doc/manual.txt (Commands, Inputs):
# exit statuses, output formats, and the errors a bad input gets (exit 2, a
# file:line:col, a hint of what is valid, and no report file left behind).
#
# Run by automake with TRAINSIM (the binary) and srcdir (the top source
# directory) in the environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/cli.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed',
# and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

selene=$srcdir/experiments/gpt3-175b-selene.yaml



# expect_rc DESC WANT ARG...: runs trainsim and checks only its exit status.
expect_rc () {
  desc=$1
  want=$2
  shift 2
  ts "$@"
  [ "$rc" -eq "$want" ] || fail_because "exit status $rc, expected $want"
  verdict "$desc"
}

# --- usage --------------------------------------------------------------------

expect_rc "--help exits 0" 0 --help
expect_rc "--version exits 0" 0 --version
expect_rc "no arguments exit 2" 2
expect_rc "an unknown command exits 2" 2 frobnicate
expect_rc "run --help exits 0" 0 run --help
expect_rc "validate --help exits 0" 0 validate --help
expect_rc "run without a file exits 2" 2 run
expect_rc "run with an unknown option exits 2" 2 run --bogus "$selene"
expect_rc "validate without a file exits 2" 2 validate

# --- run on the shipped experiment ---------------------------------------------

ts run "$selene"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -qi 'iteration' "$tmp/out" || fail_because "the table does not mention the iteration"
verdict "run gpt3-175b-selene.yaml exits 0 and prints a table with the iteration"

ts run "$selene" -f json
cp "$tmp/out" "$tmp/run.json"
json_rc=$rc
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -c . "$tmp/out")" -ge 1 ] || fail_because "no output"
first=$(head -c 1 "$tmp/out")
[ "$first" = "{" ] || fail_because "output does not start with '{'"
missing=
for f in iteration_time_s samples_per_s tokens_per_s model_tflops_per_gpu \
  hardware_tflops_per_gpu megatron_tflops_per_gpu mfu hfu gpus tp pp dp \
  micro_batch global_batch memory_per_gpu_gib fits_memory breakdown_s events \
  days_to_train cost_usd; do
  grep -q "\"$f\" *:" "$tmp/out" || missing="$missing $f"
done
breakdown=$(tr -d '\n' <"$tmp/out" | sed -n 's/.*"breakdown_s" *: *{\([^}]*\)}.*/\1/p')
for f in compute tp_comm bubble pp_comm dp_comm epilogue optimizer offload host; do
  case $breakdown in
    *"\"$f\""*) ;;
    *) missing="$missing breakdown_s.$f" ;;
  esac
done
[ -z "$missing" ] || fail_because "missing fields:$missing"
verdict "run -f json prints every contract field of trainsim(1) OUTPUT"

if command -v python3 >/dev/null 2>&1; then
  if [ "$json_rc" -eq 0 ] && python3 - "$tmp/run.json" <<'EOF' 2>"$tmp/err"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
assert isinstance(d, dict), "not an object"
for k in ("gpus", "tp", "pp", "dp", "micro_batch", "global_batch", "events"):
    assert isinstance(d[k], int), k + " is not an integer"
assert isinstance(d["fits_memory"], bool), "fits_memory is not a boolean"
assert d["gpus"] == d["tp"] * d["pp"] * d["dp"], "gpus != tp*pp*dp"
assert d["iteration_time_s"] > 0, "iteration_time_s <= 0"
assert 0 < d["mfu"] <= d["hfu"] <= 1, "not 0 < mfu <= hfu <= 1"
assert isinstance(d["breakdown_s"], dict), "breakdown_s is not an object"
EOF
  then ok "run -f json is one JSON object with typed fields"
  else
    why="python3 rejects it"
    notok "run -f json is one JSON object with typed fields"
    why=
  fi
else
  skip "run -f json is one JSON object with typed fields" "no python3"
fi

ts run "$selene" -f csv
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
lines=$(wc -l <"$tmp/out" | tr -d ' ')
[ "$lines" -eq 2 ] || fail_because "$lines lines, expected 2"
c1=$(sed -n 1p "$tmp/out" | tr -cd ',' | wc -c | tr -d ' ')
c2=$(sed -n 2p "$tmp/out" | tr -cd ',' | wc -c | tr -d ' ')
if [ "$c1" -eq 0 ] || [ "$c1" -ne "$c2" ]; then
  fail_because "comma counts $c1 and $c2"
fi
verdict "run -f csv prints a header and one row with as many fields"

ts run "$selene" -f json
cp "$tmp/out" "$tmp/run2.json"
if [ "$rc" -ne 0 ] || [ ! -s "$tmp/run.json" ]; then
  fail_because "no json report"
fi
cmp -s "$tmp/run.json" "$tmp/run2.json" || fail_because "two runs differ"
ts run "$selene"
cp "$tmp/out" "$tmp/table1"
ts run "$selene"
cmp -s "$tmp/table1" "$tmp/out" || fail_because "two table runs differ"
verdict "run output is byte-identical across runs"

ts run "$selene" -f json --set parallel.tp=4 --set parallel.pp=32
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q '"tp" *: *4[,}]' "$tmp/out" || fail_because "json tp is not 4"
grep -q '"pp" *: *32[,}]' "$tmp/out" || fail_because "json pp is not 32"
cmp -s "$tmp/out" "$tmp/run.json" && fail_because "the report did not change"
verdict "run --set parallel.tp=4 --set parallel.pp=32 changes the plan"

# The micro sign (U+00B5) is a time unit in files; it must be one in --set.
mu=$(printf '\302\265')
ts run "$selene" -f json --set "topology.intra_node.latency=2${mu}s"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
verdict "run --set with a unit in UTF-8 (2 micro-sign s) is accepted"

rm -f "$tmp/report.json"
ts run "$selene" -f json -o "$tmp/report.json"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ -s "$tmp/report.json" ] || fail_because "no file written"
cmp -s "$tmp/report.json" "$tmp/run.json" || fail_because "the file differs from stdout's report"
[ -s "$tmp/out" ] && fail_because "the report also went to stdout"
verdict "run -o FILE writes the report to FILE"

ts run "$selene" -o "$tmp/no/such/dir/report.json"
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1 (an I/O failure)"
[ -s "$tmp/err" ] || fail_because "nothing on stderr"
verdict "run -o into a missing directory exits 1"

rm -f "$tmp/trace.json"
ts run "$selene" --trace "$tmp/trace.json"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
if [ -s "$tmp/trace.json" ]; then
  head -c 15 "$tmp/trace.json" | grep -q '^{"traceEvents"' ||
    fail_because "the trace does not start with {\"traceEvents\""
else
  fail_because "no trace file"
fi
verdict "run --trace FILE writes a Chrome trace"

if command -v python3 >/dev/null 2>&1; then
  if [ -s "$tmp/trace.json" ] && python3 -c '
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
assert isinstance(d["traceEvents"], list) and d["traceEvents"]
' "$tmp/trace.json" 2>"$tmp/err"
  then ok "the trace loads with python3's json module"
  else
    why="python3 cannot load it"
    notok "the trace loads with python3's json module"
    why=
  fi
  rm -f "$tmp/trace.json"
else
  skip "the trace loads with python3's json module" "no python3"
fi

# --- bad input ----------------------------------------------------------------

# Names in the files below (gpt3-175b, selene) resolve from the source tree.
TRAINSIM_DATA_PATH=$srcdir
export TRAINSIM_DATA_PATH
mkdir "$tmp/o" || exit 99

# put NAME: writes stdin to $tmp/NAME.yaml.
put () {
  cat >"$tmp/$1.yaml"
}

# bad DESC NAME HINT [ARG...]: 'run NAME.yaml -o FILE ARG...' must exit 2,
# name NAME.yaml:LINE:COL on stderr with text matching the extended regular
# expression HINT, and leave nothing in the output directory.
bad () {
  desc=$1
  name=$2
  hint=$3
  shift 3
  ts run "$tmp/$name.yaml" -o "$tmp/o/report" "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eq "$name\\.yaml:[0-9]+:[0-9]+:" "$tmp/err" ||
    fail_because "stderr does not name $name.yaml:LINE:COL"
  grep -Eqi -- "$hint" "$tmp/err" || fail_because "stderr does not match /$hint/"
  if [ -n "$(ls -A "$tmp/o")" ] || [ -s "$tmp/out" ]; then
    fail_because "a report was written"
  fi
  rm -rf "$tmp/o" && mkdir "$tmp/o"
  verdict "$desc"
}

# bad_cli DESC HINT ARG...: like bad for an error of the command line (no file
# position), on the good experiment.
bad_cli () {
  desc=$1
  hint=$2
  shift 2
  ts run "$tmp/good.yaml" -o "$tmp/o/report" "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -Eqi -- "$hint" "$tmp/err" || fail_because "stderr does not match /$hint/"
  if [ -n "$(ls -A "$tmp/o")" ] || [ -s "$tmp/out" ]; then
    fail_because "a report was written"
  fi
  rm -rf "$tmp/o" && mkdir "$tmp/o"
  verdict "$desc"
}

put good <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
training: {precision: bf16, recompute: full}
EOF
ts run "$tmp/good.yaml" -f json -o "$tmp/o/report"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ -s "$tmp/o/report" ] || fail_because "no report"
rm -rf "$tmp/o" && mkdir "$tmp/o"
verdict "a file in a temporary directory resolves names through TRAINSIM_DATA_PATH"

put malformed <<'EOF'
schema_version: 1
model: [gpt3-175b
gpus: 8
EOF
bad "malformed YAML exits 2 with file:line:col" malformed "expected"

put unknown_key <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
paralel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "an unknown key exits 2 with a did-you-mean" unknown_key \
  "did you mean.*parallel"

put no_unit <<'EOF'
schema_version: 1
model: gpt3-175b
topology:
  gpus_per_node: 8
  gpu: a100-sxm4-80gb
  intra_node: {link: nvswitch, bandwidth: 300, latency: 2us}
  inter_node: {link: infiniband-hdr, nics_per_node: 8, nic_bandwidth: 200Gb/s, latency: 5us, fabric: {kind: fat-tree}}
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "a bandwidth without a unit exits 2" no_unit "GB/s|Gb/s"

put attention_conflict <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
training: {attention: unfused, flash_attention: true}
EOF
bad "flash_attention: true beside attention: unfused exits 2" attention_conflict \
  "contradicts.*unfused, flash1, flash1-triton, flash2, flash3 or cudnn"

put attention_unknown <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
training: {attention: flash4}
EOF
bad "an unknown attention kernel exits 2 with the valid ones" attention_unknown \
  "flash1-triton, flash2, flash3 or cudnn"

put missing <<'EOF'
schema_version: 1
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "a missing required field exits 2" missing "missing.*model|model.*missing"

put negative <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: -8
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "gpus: -8 exits 2" negative "positive"

put zero <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 0, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "parallel.tp: 0 exits 2" zero "positive"

put unknown_model <<'EOF'
schema_version: 1
model: gpt3-176b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "an unknown model name exits 2 with the known names" unknown_model \
  "gpt3-175b"

put unknown_enum <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536, schedule: zigzag}
EOF
bad "schedule: zigzag exits 2 with the valid values" unknown_enum "1f1b"

put tp_heads <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1280
parallel: {tp: 5, pp: 16, dp: 16, micro_batch: 1, global_batch: 1536, tp_across_nodes: true}
EOF
bad "tp not dividing the heads exits 2" tp_heads "heads"

put pp_layers <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 896
parallel: {tp: 8, pp: 7, dp: 16, micro_batch: 1, global_batch: 1536}
EOF
bad "pp not dividing the layers exits 2" pp_layers "layers"

put gpus_product <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1000
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
EOF
bad "gpus != tp x pp x dp exits 2" gpus_product "tp x pp x dp|1024"

put batch <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 2, global_batch: 1544}
EOF
bad "a global batch not divisible by micro_batch x dp exits 2" batch \
  "multiple"

# ZeRO and offload: an unknown stage or mode, offload without a host
# section or without a partitioned optimizer, a host memory without units.
zero_case () {
  put "$1" <<EOF
schema_version: 1
model: gpt3-175b
topology: ${3:-selene}
gpus: 1024
parallel: {tp: 8, pp: 16, dp: 8, micro_batch: 1, global_batch: 1536}
zero: $2
EOF
}
zero_case zero4 "{stage: 4}"
bad "zero.stage: 4 exits 2 with the valid range" zero4 "stage"
zero_case offload_mode "{stage: 2, offload: nvme}"
bad "an unknown offload mode exits 2 with the valid ones" offload_mode \
  "optimizer\\+params"
zero_case offload_no_host "{stage: 2, offload: optimizer}" \
  "{gpus_per_node: 8, gpu: a100-sxm4-80gb, intra_node: {link: nvswitch, bandwidth: 300GB/s}, inter_node: {nics_per_node: 8, nic_bandwidth: 200Gb/s}}"
bad "offload without a host section exits 2 naming what is missing" \
  offload_no_host "host.*cpu_adam_params_per_s"
zero_case offload_stage0 "{stage: 0, offload: optimizer}"
bad "offload with zero.stage 0 exits 2" offload_stage0 "stage 1, 2 or 3"
zero_case offload_params "{stage: 2, offload: optimizer+params}"
bad "offloading parameters below stage 3 exits 2" offload_params "stage 3"
zero_case host_mem_unit "{stage: 2, offload: optimizer}" \
  "{gpus_per_node: 8, gpu: a100-sxm4-80gb, intra_node: {link: nvswitch, bandwidth: 300GB/s}, inter_node: {nics_per_node: 8, nic_bandwidth: 200Gb/s}, host: {pcie_bandwidth: 25GB/s, memory: 1024, cpu_adam_params_per_s: 3.9e9}}"
bad "a host memory size without units exits 2" host_mem_unit "unit|GiB"
# host.cpu describes the CPUs whole; the delayed update needs offload.
host_cpu () {
  echo "{gpus_per_node: 8, gpu: a100-sxm4-80gb, intra_node: {link: nvswitch, bandwidth: 300GB/s}, inter_node: {nics_per_node: 8, nic_bandwidth: 200Gb/s}, host: {pcie_bandwidth: 25GB/s, memory: 1TiB, cpu: $1}}"
}
zero_case cpu_no_cores "{stage: 2, offload: optimizer}" \
  "$(host_cpu "{sockets: 2, frequency: 2.25GHz, simd_bits: 256, memory_bandwidth: 409.6GB/s}")"
bad "host.cpu without cores exits 2 naming it" cpu_no_cores "cores"
zero_case cpu_no_bandwidth "{stage: 2, offload: optimizer}" \
  "$(host_cpu "{sockets: 2, cores: 64, frequency: 2.25GHz, simd_bits: 256}")"
bad "host.cpu without memory_bandwidth exits 2 naming it" cpu_no_bandwidth \
  "memory_bandwidth"
zero_case cpu_simd "{stage: 2, offload: optimizer}" \
  "$(host_cpu "{sockets: 2, cores: 64, frequency: 2.25GHz, simd_bits: 300, memory_bandwidth: 409.6GB/s}")"
bad "host.cpu.simd_bits other than 128, 256 or 512 exits 2" cpu_simd \
  "128.*256.*512"
zero_case cpu_clock "{stage: 2, offload: optimizer}" \
  "$(host_cpu "{sockets: 2, cores: 64, frequency: 2.25, simd_bits: 256, memory_bandwidth: 409.6GB/s}")"
bad "host.cpu.frequency without a unit exits 2" cpu_clock "GHz"
zero_case dpu_no_offload "{stage: 2, offload_delayed_update: true}"
bad "the delayed update without offload exits 2" dpu_no_offload \
  "offload_delayed_update.*zero.offload optimizer"

bad_cli "--set without '=' exits 2" "KEY=VALUE" --set parallel.tp
bad_cli "--set of an unknown key exits 2 with a did-you-mean" \
  "did you mean" --set parallel.tpp=4
bad_cli "--set of a bad value exits 2" "positive" --set parallel.tp=abc
bad_cli "an unknown --format exits 2 with the valid ones" "json" -f xml

# --- a plan that does not fit -------------------------------------------------

put oom <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 8
parallel: {tp: 8, pp: 1, dp: 1, micro_batch: 1, global_batch: 8}
training: {precision: bf16, recompute: full}
EOF
ts run "$tmp/oom.yaml"
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -qi 'not fit' "$tmp/err" || fail_because "stderr does not say it does not fit"
grep -qi 'iteration' "$tmp/out" || fail_because "no report on stdout"
verdict "a plan that does not fit in memory exits 1 and still reports"

ts run "$tmp/oom.yaml" -f json
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q '"fits_memory" *: *false' "$tmp/out" || fail_because "fits_memory is not false"
verdict "run -f json of a plan that does not fit says fits_memory false"

# --- validate -----------------------------------------------------------------

put valid <<'EOF'
schema_version: 1
name: cli-test
role: validation
tolerance: {mape: 0.5, max: 0.9}
defaults:
  model: gpt3-125m
  topology: selene
  training: {precision: bf16, recompute: full}
  parallel: {micro_batch: 1}
cases:
  - {id: dp8, gpus: 8, parallel: {tp: 1, pp: 1, global_batch: 64}, measured: {iteration_time_s: 0.30}}
  - {id: tp2, gpus: 16, parallel: {tp: 2, pp: 1, global_batch: 64}, measured: {iteration_time_s: 0.25}}
EOF
sed 's/^tolerance: .*/tolerance: {mape: 0.0001, max: 0.0001}/' "$tmp/valid.yaml" \
  >"$tmp/tight.yaml"

ts validate "$tmp/valid.yaml"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -Eq 'MAPE [0-9.]+% max [0-9.]+% over 2 cases' "$tmp/out" ||
  fail_because "no 'MAPE x% max y% over 2 cases' line"
verdict "validate within the tolerance exits 0 with the MAPE line"

ts validate "$tmp/tight.yaml"
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -Eq 'MAPE [0-9.]+% max [0-9.]+% over 2 cases' "$tmp/out" ||
  fail_because "no 'MAPE x% max y% over 2 cases' line"
verdict "validate above the tolerance exits 1"

ts run "$selene" --set zero.stage=1 --set gpus=128 --set parallel.dp=1
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q 'zero.stage.*dp = 1 partitions nothing' "$tmp/err" ||
  fail_because "stderr does not say that ZeRO with dp = 1 partitions nothing"
verdict "a ZeRO stage with dp = 1 is allowed, and said"

# --- interconnect input and `trainsim collective` -------------------------------

put nics3 <<'EOF'
schema_version: 1
model: gpt3-175b
topology:
  gpus_per_node: 8
  gpu: a100-sxm4-80gb
  intra_node: {link: pcie, bandwidth: 25GB/s}
  inter_node: {link: infiniband-hdr, nics_per_node: 3, nic_bandwidth: 200Gb/s}
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
EOF
bad "3 NICs on 8 GPUs behind PCIe, with no placement, exit 2" nics3 \
  'nics_per_node \(3\) does not divide among 8 GPUs.*nic_of_gpu'

put placement <<'EOF'
schema_version: 1
model: gpt3-175b
topology: {name: selene, inter_node: {nic_of_gpu: [0, 1, 2, 3, 4, 5, 6, 9]}}
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
EOF
bad "a GPU placed at a NIC the node lacks exits 2" placement \
  'nic_of_gpu\[7\] is NIC 9; the node has NICs 0 to 7'

# fabric: other jobs' load and placement (doc/manual.txt, "Other jobs on the fabric").
fabric_case () {
  put "$1" <<EOF
schema_version: 1
model: gpt3-175b
topology: {name: selene, inter_node: {fabric: $2}}
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
EOF
}
fabric_case load1 "{background: {load: 1}}"
bad "a background load of 1 exits 2 with the valid range" load1 'share in \[0, 1\)'
fabric_case load_negative "{background: {load: -0.1}}"
bad "a negative background load exits 2" load_negative 'share in \[0, 1\)'
fabric_case bursty_high "{background: {load: 0.6, pattern: bursty}}"
bad "a bursty load of 0.6 exits 2: bursts carry twice it" bursty_high \
  'must be under 0.5 with pattern: bursty'
fabric_case pattern_unknown "{background: {load: 0.3, pattern: waves}}"
bad "an unknown background pattern exits 2 with the valid ones" pattern_unknown \
  'steady or bursty'
fabric_case placement_unknown "{placement: scattered}"
bad "an unknown placement exits 2 with the valid ones" placement_unknown \
  'valid values: packed or spread'
fabric_case spread_no_groups "{placement: spread}"
bad "spread on a fabric that gives no groups exits 2" spread_no_groups \
  'set inter_node.fabric.groups'
fabric_case spread_too_big "{placement: spread, groups: 4, nodes_per_group: 8}"
bad "spread over a fabric smaller than the job exits 2" spread_too_big \
  "over the fabric's 4 groups of 8 nodes, which hold 32: use at most 256 GPUs"
ts collective perlmutter --gpus 100000 --set inter_node.fabric.placement=spread
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q "groups x nodes_per_group" "$tmp/err" || fail_because "stderr does not say why"
verdict "collective with spread over more nodes than the fabric holds exits 2"

# Sizes past 1 TiB are a slip, not a size: refused, as a malformed one is.
for e in 9223372036854775807 1e30 2TiB 1k; do
  ts collective selene -e "$e"
  [ "$rc" -eq 2 ] || fail_because "-e $e: exit status $rc, expected 2"
  grep -q "from 1 byte to 1 TiB.*got -b 8 -e $e" "$tmp/err" || fail_because "-e $e: $(cat "$tmp/err")"
done
ts collective selene -b 512G -e 1TiB
[ "$rc" -eq 0 ] || fail_because "-b 512G -e 1TiB: exit status $rc"
verdict "collective refuses a size past 1 TiB or malformed, saying what it got"

put nobw <<'EOF'
schema_version: 1
model: gpt3-175b
topology:
  gpus_per_node: 8
  gpu: a100-sxm4-80gb
  intra_node: {link: nvswitch, bandwidth: 300GB/s}
  inter_node: {link: infiniband-hdr, nics_per_node: 8}
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
EOF
bad "a link without a bandwidth exits 2" nobw 'missing required key: nic_bandwidth'

put fabric <<'EOF'
schema_version: 1
model: gpt3-175b
topology: {name: selene, inter_node: {fabric: {kind: torus}}}
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
EOF
bad "an unknown fabric exits 2 and names the known ones" fabric 'fat-tree or dragonfly'

put algo <<'EOF'
schema_version: 1
model: gpt3-175b
topology: selene
gpus: 1024
parallel: {tp: 8, pp: 16, micro_batch: 1, global_batch: 1536}
collectives: {algorithm: butterfly}
EOF
bad "an unknown collective algorithm exits 2 and names the known ones" algo \
  'auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct or collnet_chain'

# The gradients' reductions, not the step: the epilogue's all-reduces of
# a few bytes over 128 GPUs take fewer latency steps one phase after
# another than around the whole ring.
ts run "$selene" -f json --set collectives.algorithm=hierarchical
hier=$(sed -n 's/.*"dp_comm": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
ts run "$selene" -f json --set collectives.algorithm=ring
ring=$(sed -n 's/.*"dp_comm": *\([0-9.e+-]*\).*/\1/p' "$tmp/out")
[ -n "$hier" ] && [ -n "$ring" ] || fail_because "no breakdown_s.dp_comm"
awk -v h="$hier" -v r="$ring" 'BEGIN { exit !(h >= r) }' ||
  fail_because "hierarchical ($hier s) faster than the pipelined ring ($ring s)"
verdict "collectives.algorithm is obeyed: phases one after another are never faster"

ts sweep "$srcdir/experiments/ib-interfaces-18b-39b.yaml" -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
curve=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "megatron_tflops_per_gpu") c = i; next }
  $1 == "gpt-39.1b" && $2 == 64 { printf "%s ", $c }' "$tmp/out")
echo "$curve" | awk '{ if (NF != 4) exit 1; for (i = 2; i <= NF; i++) if ($i < $(i - 1)) exit 1 }' ||
  fail_because "39.1B on 64 GPUs with 1-4 NICs: '$curve' is not four rising values"
verdict "the 1-4 NIC curve of the 39.1B model on 64 GPUs is monotone"

# CPU offload end to end on the shipped fine-tuning study: 13B on one node
# fits only with offload; the sweep writes the row that does not fit with
# its reason; too little host memory is an out-of-memory result too.
offload=$srcdir/experiments/offload-finetune.yaml
ts run "$offload" --set gpus=8 --set zero.offload=optimizer
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q "host memory.*per node (CPU offload)" "$tmp/out" || fail_because "no host memory line"
grep -Eq "offload [0-9.]+ s" "$tmp/out" || fail_because "no offload time in the breakdown"
verdict "run: 13B with CPU offload fits one node, with host memory and offload time"
ts run "$offload" --set gpus=8
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q "per GPU, more than the GPU's 40.0 GiB" "$tmp/err" || fail_because "stderr: $(cat "$tmp/err")"
verdict "run: the same without offload does not fit and exits 1 saying by how much"
ts run "$offload" --set gpus=8 --set zero.offload=optimizer --set topology.host.memory=64GiB
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q "host memory per node" "$tmp/err" || fail_because "stderr: $(cat "$tmp/err")"
verdict "run: offload beyond the host's memory exits 1 naming the host"
# One key of a device the topology names, set: the device's other keys
# stay (they were lost, the device then missing its peak).
ts run "$offload" --set gpus=8 --set topology.gpu.memory=100GiB
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0: $(cat "$tmp/err")"
grep -q "of 100.0 GiB (fits)" "$tmp/out" || fail_because "not 100 GiB: $(grep memory "$tmp/out")"
verdict "run --set topology.gpu.memory overrides one key of the named device"
ts sweep "$offload"
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -c ',ok,' "$tmp/out")" -eq 5 ] || fail_because "not five rows that fit"
grep -q "needs 50.8 GiB per GPU" "$tmp/out" || fail_because "no row with the reason"
[ "$(grep -c ',infeasible,.*offload_delayed_update' "$tmp/out")" -eq 2 ] ||
  fail_because "not two rows of the delayed update without offload"
verdict "sweep: offload-finetune writes five rows that fit, one that does not and two that cannot run"

# Uneven pipeline stages: BLOOM's own layout runs; a list that does not
# match pp, the layers or one chunk a stage is refused where it was written.
ts run "$srcdir/experiments/bloom-176b.yaml" -f json
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q '"fits_memory": true' "$tmp/out" || fail_because "BLOOM does not fit: $(cat "$tmp/out")"
verdict "run: BLOOM-176B with 5, 6 x 10, 5 layers on its 12 stages"
for c in "[6, 6, 6]|stage_layers lists 3 stages; pp is 4" \
         "[6, 6, 6, 5]|stage_layers add up to 23 layers; the model has 24" \
         "[6, 0, 6, 12]|stage_layers\\[1\\] must be an integer from 1" \
         "7|stage_layers must be a list of up to 128 integers" \
         "[6, 6, 6, 6], schedule: interleaved, virtual_stages: 2|stage_layers needs virtual_stages: 1"; do
  put stages <<EOF
schema_version: 1
model: {layers: 24, hidden: 2048, heads: 16, vocab: 51200, seq_len: 2048}
topology: selene
gpus: 32
parallel: {tp: 8, pp: 4, micro_batch: 1, global_batch: 64, stage_layers: ${c%%|*}}
EOF
  bad "stage_layers ${c%%|*} exits 2" stages "${c#*|}"
done

expect_rc "collective --help exits 0" 0 collective --help
ts collective selene -b 1G -e 1G
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
busbw=$(awk '!/^#/ && NF >= 10 { print $8 }' "$tmp/out")
awk -v b="$busbw" 'BEGIN { exit !(b >= 207 && b <= 253) }' ||
  fail_because "8 x A100 all-reduce at 1 GiB: busbw '$busbw', expected 230 +- 10 %"
grep -q '^# Avg bus bandwidth' "$tmp/out" || fail_because "no '# Avg bus bandwidth' line"
verdict "collective selene: nccl-tests rows, 1 GiB all-reduce at about 230 GB/s"

ts collective apollo-a100-1ib --gpus 16 -b 8 -e 1G
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -vc '^#' "$tmp/out")" -eq 28 ] || fail_because "expected 28 sizes, 8 B to 1 GiB"
last=$(awk '!/^#/ { b = $8 } END { print b }' "$tmp/out")
awk -v b="$last" 'BEGIN { exit !(b >= 21.6 && b <= 26.4) }' ||
  fail_because "1 HDR NIC per node: busbw '$last', expected 24 +- 10 %"
verdict "collective across nodes with one HDR NIC: 8 B to 1 GiB, 24 GB/s at the end"

ts collective selene --op alltoall --gpus 16 -b 1M -e 4M
[ "$rc" -eq 0 ] && grep -q 'direct' "$tmp/out" ||
  fail_because "exit status $rc, or no direct algorithm"
verdict "collective --op alltoall runs the direct algorithm"

ts collective selene --gpus 16 -b 8 -e 64 -f 1.1
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -vc '^#' "$tmp/out")" -gt 8 ] || fail_because "expected a row for each size from 8 to 64"
verdict "collective with a step factor near 1 still ends (each size at least a byte more)"

ts collective selene -e inf
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
verdict "collective with an infinite size exits 2"

ts collective selene --op broadcast
[ "$rc" -eq 2 ] && grep -q 'all_reduce, reduce_scatter' "$tmp/err" ||
  fail_because "exit status $rc, expected 2 naming the operations"
verdict "collective with an unknown --op exits 2 and names the known ones"

ts collective selene --algo butterfly
[ "$rc" -eq 2 ] && grep -q 'auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct or collnet_chain' "$tmp/err" ||
  fail_because "exit status $rc, expected 2 naming the algorithms"
verdict "collective with an unknown --algo exits 2 and names the known ones"

ts collective selene --gpus 12
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
verdict "collective with ranks that do not fill whole nodes exits 2"

ts collective no-such-topology
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
verdict "collective on an unknown topology exits 2"

# --- stages that share nodes ----------------------------------------------------

# tp 2 x dp 6 = 12 GPUs a stage on 8-GPU nodes: nodes hold two stages, whose
# traffic shares their NICs. Cheap, the default replays every rank (a note
# says so) and equals --full, also with a slow NIC where sharing matters;
# too costly, it warns instead.
cat >"$tmp/straddle.yaml" <<'EOF'
schema_version: 1
model: {name: gpt3-13b, layers: 36}
topology: selene
gpus: 72
parallel: {tp: 2, pp: 6, micro_batch: 1, global_batch: 96}
training: {recompute: full}
EOF
for nic in 200Gb/s 25Gb/s; do
  ts run "$tmp/straddle.yaml" --set topology.inter_node.nic_bandwidth=$nic -f json
  cp "$tmp/out" "$tmp/default.json"
  grep -q "note: stages share nodes (tp x dp = 12 .*every rank replayed" "$tmp/err" ||
    fail_because "$nic: no note: $(cat "$tmp/err")"
  ts run "$tmp/straddle.yaml" --set topology.inter_node.nic_bandwidth=$nic -f json --full
  cmp -s "$tmp/out" "$tmp/default.json" || fail_because "$nic: default and --full differ"
done
ts run "$tmp/straddle.yaml" --set gpus=3048 --set parallel.global_batch=4064
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q "warning: stages share nodes (tp x dp = 508 .*--full replays every rank" "$tmp/err" ||
  fail_because "no warning: $(cat "$tmp/err")"
verdict "stages sharing nodes: replayed whole when cheap (equal to --full), else a warning"

# --- search -------------------------------------------------------------------

ts search "$selene" --top 3 -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
[ "$(grep -c '^ [0-9]\. tp ' "$tmp/out")" -eq 3 ] ||
  fail_because "expected 3 ranked plans"
grep -q 'vs the next' "$tmp/out" || fail_because "no 'vs the next' line"
verdict "search --top 3 ranks three plans and says why each wins"

first=$(grep '^ 1\. ' "$tmp/out")
ts search "$selene" --top 3 -j 1
[ "$(grep '^ 1\. ' "$tmp/out")" = "$first" ] ||
  fail_because "the best plan differs between -j 2 and -j 1"
verdict "search ranks the same with 1 and 2 threads"

ts search "$srcdir/experiments/bloom-176b.yaml" --top 40 -j 2
[ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
grep -q 'pp 6 dp .*, stages 11,12x4,11$' "$tmp/out" ||
  fail_because "no plan with 70 layers on 6 stages: $(head -n 4 "$tmp/out")"
verdict "search tries a pp that does not divide the layers, with BLOOM's kind of split"

# TE's TP overlap asked for: plans of tp 1 (no SP, so no overlap) still
# count, as many plans fit as without it.
ts search "$srcdir/experiments/tiny.yaml" --set framework=megatron-lm@3 \
  --set parallel.sequence_parallel=true --set parallel.tp_comm_overlap=true \
  --top 100
with=$(sed -n 's/.*: \([0-9]*\) plans fit.*/\1/p' "$tmp/out")
grep -q '^ *[0-9]*\. tp 1 ' "$tmp/out" || fail_because "no tp 1 plan: $(head -n 3 "$tmp/out")"
ts search "$srcdir/experiments/tiny.yaml" --set framework=megatron-lm@3 \
  --set parallel.sequence_parallel=true --top 100
without=$(sed -n 's/.*: \([0-9]*\) plans fit.*/\1/p' "$tmp/out")
[ -n "$with" ] && [ "$with" = "$without" ] ||
  fail_because "$with plans fit with tp_comm_overlap, $without without"
verdict "search with tp_comm_overlap keeps the plans without TP"

ts search "$selene" --set gpus=8 --set parallel.dp=1 --set parallel.tp=8 \
  --set parallel.pp=1
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1 (nothing fits)"
verdict "search exits 1 when no plan fits in memory"

# No plan at all can hold the values given (tp 3 divides neither a node's 8
# GPUs nor the heads): bad input, not memory.
ts search "$srcdir/experiments/tiny.yaml" --set parallel.tp=3
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q "no plan that .* runs can hold" "$tmp/err" || fail_because "stderr: $(cat "$tmp/err")"
grep -q "fits in memory" "$tmp/err" && fail_because "it blames memory"
verdict "search exits 2 when no plan can hold the values given, without blaming memory"

ts search
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
verdict "search without a file exits 2"

# Each plan's breakdown adds up to its time (host-bound was left out): a
# small batch on one node, where the host bounds the step.
ts search "$srcdir/experiments/tiny.yaml" --set parallel.global_batch=1 --top 2 -j 2
awk '/^ +[0-9.]+ s, model / { t = $1 }
     /^      compute / { n++; sum = 0
       for (i = 1; i <= NF; i++) if ($i == "s" || $i == "s,") sum += $(i - 1)
       if (sum - t > 0.0005 + t * 0.001 || t - sum > 0.0005 + t * 0.001) { print "parts " sum " s, step " t " s"; bad = 1 } }
     END { if (n != 2) { print n " breakdowns"; bad = 1 }; exit bad }' "$tmp/out" >"$tmp/why" ||
  fail_because "$(cat "$tmp/why")"
grep -q 'host-bound' "$tmp/out" || fail_because "no host-bound part"
verdict "search's breakdown parts add up to each plan's time"

# Search skips the plans whose lower bound exceeds the fastest it has
# replayed (plansearch.h); TRAINSIM_NO_PRUNE replays them all. Both print
# the same bytes: the ranked plans, their breakdowns and the count.
for format in table json; do
  ts search "$srcdir/experiments/tiny.yaml" --top 4 -j 2 -f "$format"
  cp "$tmp/out" "$tmp/pruned"
  export TRAINSIM_NO_PRUNE=1
  ts search "$srcdir/experiments/tiny.yaml" --top 4 -j 2 -f "$format"
  unset TRAINSIM_NO_PRUNE
  [ "$rc" -eq 0 ] || fail_because "$format: exit status $rc"
  cmp -s "$tmp/pruned" "$tmp/out" || fail_because "$format: pruning changes the output"
done
verdict "search prints the same with and without pruning"

# --- an output over the input ---------------------------------------------------

# -o or -t naming the experiment would replace what was read: refused,
# and the experiment kept (sweep even with --force, which replaces an
# earlier output, never the experiment).
cp "$srcdir/experiments/tiny.yaml" "$tmp/self.yaml"
for c in "run -o" "run -t" "plan -o" "sweep --force -o"; do
  # shellcheck disable=SC2086 # the command and its option are words
  ts $c "$tmp/self.yaml" "$tmp/self.yaml"
  [ "$rc" -eq 2 ] || fail_because "$c: exit status $rc, expected 2"
  grep -q 'self.yaml.*otherwise' "$tmp/err" || fail_because "$c: $(cat "$tmp/err")"
  cmp -s "$tmp/self.yaml" "$srcdir/experiments/tiny.yaml" || fail_because "$c: the experiment was changed"
done
verdict "an output that is the experiment read is refused, and the experiment kept"

for c in "run -o" "run -t" "sweep -o" "plan -o" "merge -o" "plot -o"; do
  # shellcheck disable=SC2086 # the command and its option are words
  ts $c "" "$srcdir/experiments/tiny.yaml"
  [ "$rc" -eq 2 ] || fail_because "$c '': exit status $rc, expected 2"
  grep -q -- "needs a file name" "$tmp/err" || fail_because "$c '': $(head -n 1 "$tmp/err")"
done
verdict "an empty file name for an output option is usage (exit 2), not a write error"

(cd "$tmp" && "$TRAINSIM" run "$srcdir/experiments/tiny.yaml" -t - >out 2>err)
rc=$?
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q -- '--trace needs a file' "$tmp/err" || fail_because "$(cat "$tmp/err")"
[ -e "$tmp/-" ] && fail_because "a file named - was written"
verdict "run -t - is refused: no file named -, no trace mixed into the report"

# --- names ----------------------------------------------------------------------

# A model name beyond the result's 127 bytes is cut at a whole UTF-8
# character: 100 e-acutes (200 bytes) leave 63 of them, and valid UTF-8.
e_acute=$(printf '\303\251')
long_name=$(printf '%s' "$e_acute" | awk '{ for (i = 0; i < 100; i++) printf "%s", $0 }')
sed "s/^name: .*/name: \"$long_name\"/" "$srcdir/models/gpt3-125m.yaml" > "$tmp/long-model.yaml"
sed "s|^model: gpt3-125m|model: $tmp/long-model.yaml|" "$srcdir/experiments/tiny.yaml" > "$tmp/long.yaml"
ts run "$tmp/long.yaml" --format csv
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
iconv -f UTF-8 -t UTF-8 "$tmp/out" > /dev/null 2>&1 || fail_because "the CSV is not valid UTF-8"
cut_name=$(printf '%s' "$long_name" | cut -c1-126)
grep -q ",$cut_name,dgx-a100-40gb," "$tmp/out" || fail_because "the name is not cut at 63 characters"
verdict "a long UTF-8 model name is cut at a whole character"

# A control character in a name (YAML's "\x01", a line break, C1's
# "\u009b", an 8-bit escape) shows as '?'
# in the table: it would break the table or drive the terminal.
sed 's/^name: .*/name: "m\\x01o\\nx\\u009b"/' "$srcdir/models/gpt3-125m.yaml" > "$tmp/ctl-model.yaml"
sed "s|^model: gpt3-125m|model: $tmp/ctl-model.yaml|" "$srcdir/experiments/tiny.yaml" > "$tmp/ctl.yaml"
ts run "$tmp/ctl.yaml"
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
head -n 1 "$tmp/out" | grep -q '^trainsim: m?o?x? on dgx-a100-40gb, 8 GPUs$' ||
  fail_because "the title is $(head -n 2 "$tmp/out" | od -c | head -n 3)"
verdict "control characters in a name show as ? in the table"

# ESC and BEL from the input (a model's name, a case's id, a file's name)
# never reach the terminal raw (base/text.h): each shows as '?' in the
# tables of search, plan and validate and in the messages on stderr, and a
# line break in a name does not split a line.
# raw_controls FILE...: the number of ESC and BEL bytes in the files.
raw_controls () {
  cat "$@" | tr -d -c '\033\007' | wc -c | tr -d ' '
}
sed 's/^name: .*/name: "m\\eo\\ax\\nz"/' "$srcdir/models/gpt3-125m.yaml" > "$tmp/esc-model.yaml"
sed "s|^model: gpt3-125m|model: $tmp/esc-model.yaml|" "$srcdir/experiments/tiny.yaml" > "$tmp/esc.yaml"
ts search "$tmp/esc.yaml" -j 2 -n 2
[ "$rc" -eq 0 ] || fail_because "search: exit status $rc"
[ "$(raw_controls "$tmp/out" "$tmp/err")" -eq 0 ] || fail_because "search: a raw ESC or BEL"
head -n 1 "$tmp/out" | grep -q '^trainsim search: m?o?x?z on dgx-a100-40gb, 8 GPUs' ||
  fail_because "search: the title is $(head -n 2 "$tmp/out" | od -c | head -n 3)"
verdict "search shows a name's ESC, BEL and line break as ?"

ts plan "$tmp/esc.yaml" -j 2 --set topology.storage.bandwidth=100GB/s
[ "$rc" -eq 0 ] || fail_because "plan: exit status $rc"
[ "$(raw_controls "$tmp/out" "$tmp/err")" -eq 0 ] || fail_because "plan: a raw ESC or BEL"
head -n 1 "$tmp/out" | grep -q '^trainsim plan: m?o?x?z (0.126B parameters)' ||
  fail_because "plan: the title is $(head -n 2 "$tmp/out" | od -c | head -n 3)"
verdict "plan shows a name's ESC, BEL and line break as ?"

# A validation file whose name and case ids hold them, of that model.
cat > "$tmp/esc-valid.yaml" <<YAML
schema_version: 1
name: "v\\eal\\aid"
role: validation
tolerance: {mape: 0.9}
defaults:
  model: $tmp/esc-model.yaml
  topology: selene
  training: {precision: bf16, recompute: full}
  parallel: {micro_batch: 1}
cases:
  - {id: "dp\\e[31m8\\a\\nx", gpus: 8, parallel: {tp: 1, pp: 1, global_batch: 64}, measured: {iteration_time_s: 0.30}}
  - {id: "=1+2", gpus: 16, parallel: {tp: 2, pp: 1, global_batch: 64}, measured: {iteration_time_s: 0.25}}
YAML
ts validate "$tmp/esc-valid.yaml"
[ "$rc" -eq 0 ] || fail_because "validate: exit status $rc"
[ "$(raw_controls "$tmp/out" "$tmp/err")" -eq 0 ] || fail_because "validate: a raw ESC or BEL"
grep -q ': v?al?id$' "$tmp/out" || fail_because "validate: no title 'v?al?id'"
grep -q '^  dp?\[31m8??x  *[0-9.]*ms' "$tmp/out" ||
  fail_because "validate: the row is $(grep dp "$tmp/out" | od -c | head -n 3)"
verdict "validate shows ESC, BEL and a line break in a name and an id as ?"

# A case id that a spreadsheet would take for a formula is a quoted CSV
# cell; the CSV itself is a machine format, escaped, not shown as '?'.
ts validate "$tmp/esc-valid.yaml" --format csv
[ "$rc" -eq 0 ] || fail_because "validate --format csv: exit status $rc"
grep -q '^[^,]*,"=1+2",0.25,' "$tmp/out" ||
  fail_because "the id =1+2 is not quoted: $(grep '1+2' "$tmp/out")"
[ "$(raw_controls "$tmp/err")" -eq 0 ] || fail_because "a raw ESC or BEL in the summary on stderr"
verdict "validate --format csv quotes a case id that starts with '='"

# Errors: a file's name in a message, and a key that --set quotes.
esc=$(printf '\033')
bel=$(printf '\007')
ts run "$tmp/no${esc}[31mfile${bel}
x.yaml"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
[ "$(raw_controls "$tmp/err")" -eq 0 ] || fail_because "a raw ESC or BEL on stderr"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail_because "the message is not one line"
grep -q 'cannot read .*/no?\[31mfile??x\.yaml: ' "$tmp/err" ||
  fail_because "stderr: $(od -c "$tmp/err" | head -n 4)"
ts run "$srcdir/experiments/tiny.yaml" --set "training.x${esc}y${bel}=1"
[ "$rc" -eq 2 ] || fail_because "--set: exit status $rc, expected 2"
[ "$(raw_controls "$tmp/err")" -eq 0 ] || fail_because "--set: a raw ESC or BEL on stderr"
grep -q "unknown key 'x?y?'" "$tmp/err" || fail_because "--set: $(od -c "$tmp/err" | head -n 4)"
verdict "an error message shows ESC, BEL and a line break in a file's name or a key as ?"

# --- mixtures of experts (issue 32) -----------------------------------------------
mixtral=$srcdir/experiments/mixtral-8x7b-selene.yaml
ts run "$mixtral" --format json
[ "$rc" -eq 0 ] || fail_because "ep 8: exit status $rc: $(cat "$tmp/err")"
t8=$(sed -n 's/.*"iteration_time_s": \([0-9.e+-]*\).*/\1/p' "$tmp/out")
e8=$(sed -n 's/.*"ep_comm": \([0-9.e+-]*\).*/\1/p' "$tmp/out")
ts run "$mixtral" --format json --set parallel.ep=4
t4=$(sed -n 's/.*"iteration_time_s": \([0-9.e+-]*\).*/\1/p' "$tmp/out")
e4=$(sed -n 's/.*"ep_comm": \([0-9.e+-]*\).*/\1/p' "$tmp/out")
awk -v a="$e8" -v b="$e4" 'BEGIN { exit !(a > 2 * b && b > 0) }' \
  || fail_because "EP comm ep 8 $e8 s, ep 4 $e4 s: ep 8's group spans two nodes"
[ "$t8" != "$t4" ] || fail_because "ep 8 and ep 4 take the same time, $t8 s"
verdict "mixtral-8x7b at ep 8 and ep 4: different times, ep 8's all-to-alls crossing nodes"
ts search "$mixtral" --set parallel.tp=2 --set parallel.pp=4 --set parallel.micro_batch=1
[ "$rc" -eq 0 ] || fail_because "search: exit status $rc"
grep -q ", ep [248] etp 2" "$tmp/out" || fail_because "search offers no ep > 1: $(head -n 3 "$tmp/out")"
verdict "search walks ep for a mixture of experts"
ts collective selene --op all_to_all -b 1G -e 1G
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q "^ *1073741824 .*direct" "$tmp/out" || fail_because "$(cat "$tmp/out")"
verdict "collective --op all_to_all runs, as alltoall"

# --- FP8 (issue 33) --------------------------------------------------------------
ts sweep "$srcdir/experiments/tiny.yaml" --set topology=dgx-h100 --set gpus=8 \
  --sweep training.precision=bf16,fp8 -j 1
[ "$rc" -eq 0 ] || fail_because "exit status $rc: $(cat "$tmp/err")"
b=$(awk -F, '$1 == "bf16" && $2 == "ok" { print $4 }' "$tmp/out")
f=$(awk -F, '$1 == "fp8" && $2 == "ok" { print $4 }' "$tmp/out")
[ -n "$b" ] && [ -n "$f" ] || fail_because "rows: $(cat "$tmp/out")"
awk -v b="$b" -v f="$f" 'BEGIN { exit !(f != b) }' \
  || fail_because "bf16 $b s and fp8 $f s: the same step"
verdict "sweep training.precision=bf16,fp8 on H100s: a row each, different times"
# --- context parallelism (issue 33, item 3) -------------------------------------
# cp 1 is the dense path: GPT-3 175B on Selene predicts the step it did
# before parallel.cp existed (the number printed by commit 4bb0f25), and
# --set parallel.cp=1 changes no byte of the JSON.
ts run "$selene" -f json
cp "$tmp/out" "$tmp/cp0.json"
grep -q '"iteration_time_s": 29.218596246142,' "$tmp/out" \
  || fail_because "$(grep -o '"iteration_time_s": [^,]*' "$tmp/out"), before cp 29.218596246142"
ts run "$selene" -f json --set parallel.cp=1
cmp -s "$tmp/cp0.json" "$tmp/out" || fail_because "cp 1 changes the JSON"
verdict "cp 1 predicts gpt3-175b-selene's step as before, byte for byte"
long=$srcdir/experiments/llama3-8b-128k-cp.yaml
ts run "$long"
[ "$rc" -eq 0 ] || fail_because "cp 8: exit status $rc: $(cat "$tmp/err")"
grep -q 'tp 8 x cp 8 x pp 1 x dp 1' "$tmp/out" || fail_because "plan line: $(grep plan "$tmp/out")"
ts run "$long" -f json --set parallel.cp=1
[ "$rc" -eq 1 ] || fail_because "cp 1 at 131k tokens: exit status $rc, expected 1 (does not fit)"
verdict "llama3-8b at 131k tokens fits with cp 8 and not with cp 1"
ts search "$long" --set parallel.tp=8 --set parallel.pp=1 --set parallel.micro_batch=1
[ "$rc" -eq 0 ] || fail_because "search: exit status $rc"
grep -q ', cp [248] p2p' "$tmp/out" || fail_because "search offers no cp > 1: $(head -n 3 "$tmp/out")"
verdict "search walks cp for a long sequence"

finish
