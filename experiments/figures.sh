#!/bin/sh
# figures.sh: one command per figure of the A100 scaling study (after an HPE
# study of Megatron-DeepSpeed on A100 clusters): it runs the experiment's sweep
# and draws the figure with `trainsim plot`.
#
#   experiments/figures.sh NAME [OUTDIR]
#
# NAME is one of
#   aggregate      aggregate PFLOP/s against GPUs, GPT 13B-175B, with ideal scaling,
#                  log-log (aggregate-pflops.yaml)
#   megatron       TFLOP/s per GPU, trainsim against Megatron-LM's published numbers
#                  (validation/narayanan2021-table1.yaml)
#   weak-scaling   TFLOP/s per GPU of the 39.1B model, batch growing with the GPUs,
#                  1 to 8 NICs per node (weak-scaling-39b.yaml)
#   ib-interfaces  TFLOP/s per GPU with 1 to 4 HDR interfaces per node, 39.1B and
#                  18.4B (ib-interfaces-18b-39b.yaml)
#   slingshot      Slingshot-11's TFLOP/s per GPU over HDR InfiniBand's as bars
#                  from 0, idle fabric and packed nodes (slingshot.pdf), and
#                  with other jobs loading the fabric by 0.5 and the nodes
#                  spread over its groups (slingshot-busy.pdf), each titled
#                  with its scenario (slingshot-vs-ib.yaml)
#   offload        TFLOP/s per GPU of 13B fine-tuning on 8 and 16 GPUs, grouped
#                  bars: without offload, with CPU offload, and with its delayed
#                  update (offload-finetune.yaml)
#   layout         heatmap: the best TFLOP/s per GPU of GPT-3 175B on 1,024 GPUs
#                  by tensor-parallel size and micro-batch, OOM cells grey
#                  (gpt3-175b-selene.yaml)
#   breakdown      stacked bars: the step's parts as fractions of it, the 39.1B
#                  model weak-scaling on one NIC per node (weak-scaling-39b.yaml)
#   all            every one of them
# OUTDIR (default figures/) receives NAME.csv, the rows the figure was drawn from,
# and NAME.pdf with NAME.gp (the gnuplot script, to restyle) and NAME.dat beside
# it; the paths are printed. FIGURES_FORMAT=png or svg draws that instead of PDF.
# All but megatron are sized for a paper's
# column (3.3 x 2.2 in, 8 pt). Without gnuplot the .csv, .gp and .dat are still
# written, and the script says so.
#
# trainsim is $TRAINSIM, else ./trainsim, else the one on PATH; the experiments
# are found beside this script. Exit status: 0 success, 1 a command failed, 2 bad
# usage.

set -eu

usage () {
  echo "usage: $0 aggregate|megatron|weak-scaling|ib-interfaces|slingshot|offload|layout|breakdown|all [OUTDIR]" >&2
  exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  usage
fi
name=$1
out=${2:-figures}
case $name in
  aggregate|megatron|weak-scaling|ib-interfaces|slingshot|offload|layout|breakdown|all) ;;
  *) usage ;;
esac
ext=${FIGURES_FORMAT:-pdf}
case $ext in
  pdf|png|svg) ;;
  *) echo "$0: FIGURES_FORMAT is '$ext'; use pdf, png or svg" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${TRAINSIM:-}" ]; then
  ts=$TRAINSIM
elif [ -x ./trainsim ]; then
  ts=$(pwd)/trainsim
elif command -v trainsim >/dev/null 2>&1; then
  ts=trainsim
else
  echo "$0: no trainsim: set TRAINSIM, run from the build directory, or put it on PATH" >&2
  exit 1
fi

have_gnuplot=yes
command -v gnuplot >/dev/null 2>&1 || have_gnuplot=no
[ "$have_gnuplot" = yes ] ||
  echo "$0: gnuplot is not installed: writing the .gp and .dat files only (apt-get install gnuplot-nox)" >&2

mkdir -p "$out"

# sweep CSV FILE [ARG...]: the rows of experiments/FILE in CSV.
sweep () {
  sweep_csv=$1
  sweep_file=$here/$2
  shift 2
  "$ts" sweep "$sweep_file" -j 2 -o "$sweep_csv" --force "$@"
}

# plot FIG CSV [ARG...]: OUTDIR/FIG.EXT from CSV; prints what it wrote. A
# missing gnuplot is not an error here (plot has written FIG.gp and FIG.dat).
plot () {
  fig=$out/$1
  plot_csv=$2
  shift 2
  plot_status=0
  "$ts" plot "$plot_csv" -o "$fig.$ext" "$@" || plot_status=$?
  if [ "$plot_status" -eq 0 ]; then
    echo "$fig.$ext"
  elif [ "$plot_status" -eq 1 ] && [ "$have_gnuplot" = no ]; then
    echo "$fig.gp $fig.dat"
  else
    echo "$0: trainsim plot failed for $fig.$ext" >&2
    exit 1
  fi
}

# The scaling figures are drawn for a paper's column (3.3 in wide, 8 pt).
column="--size 3.3x2.2 --font 8"

# Log-log: the four models span 7 to 500 PFLOP/s, and ideal scaling is a
# straight line.
aggregate () {
  sweep "$out/aggregate.csv" aggregate-pflops.yaml
  # shellcheck disable=SC2086 # $column is two options
  plot aggregate "$out/aggregate.csv" --x gpus --y aggregate_pflops --by model \
    --logx --logy --ideal $column --label model=gpt3-13b:"GPT-3 13B" \
    --label model=gpt-39.1b:"GPT 39.1B" --label model=gpt-76.1b:"GPT 76.1B" \
    --label model=gpt3-175b:"GPT-3 175B"
}

# Narayanan et al. 2021, Table 1, as bars: the TFLOP/s per GPU Megatron-LM
# measured, and trainsim's. `validate --format csv` gives both iteration times;
# the measured TFLOP/s come from the validation file, and the predicted ones
# follow from them (the same FLOPs over the predicted time:
# measured x measured_s / predicted_s).
megatron () {
  table=$here/validation/narayanan2021-table1.yaml
  raw=$out/megatron-validate.csv
  status=0
  "$ts" validate --format csv "$table" >"$raw" || status=$?
  if [ "$status" -gt 1 ]; then
    exit 1
  elif [ "$status" -eq 1 ]; then
    echo "$0: $table is above its tolerance (see trainsim validate)" >&2
  fi
  sed -n 's/.*{id: *\([^,]*\),.*tflops_per_gpu: *\([0-9.]*\).*/\1,\2/p' "$table" |
    awk -F, '
      NR == FNR { measured[$1] = $2; next }
      FNR == 1 { print "model,source,megatron_tflops_per_gpu"; next }
      ($2 in measured) && $4 > 0 {
        label = toupper($2); sub(/^GPT-/, "", label)
        printf "%s,measured,%s\n", label, measured[$2]
        printf "%s,trainsim,%.1f\n", label, measured[$2] * $3 / $4
      }' - "$raw" >"$out/megatron.csv"
  plot megatron "$out/megatron.csv" --kind bars --x model --by source \
    --y megatron_tflops_per_gpu --xlabel "GPT model, Narayanan et al. 2021, Table 1"
}

# Weak scaling: the file's sweep zips the global batch to the GPU count.
weak_scaling () {
  weak=$out/weak-scaling.csv
  sweep "$weak" weak-scaling-39b.yaml
  # shellcheck disable=SC2086
  plot weak-scaling "$weak" --x gpus --y megatron_tflops_per_gpu --by nics_per_node \
    --logx $column
}

ib_interfaces () {
  sweep "$out/ib-interfaces.csv" ib-interfaces-18b-39b.yaml
  # shellcheck disable=SC2086
  plot ib-interfaces "$out/ib-interfaces.csv" --kind bars --x gpus \
    --y megatron_tflops_per_gpu --by nics_per_node --where model=gpt-39.1b $column
  # shellcheck disable=SC2086
  plot ib-interfaces-18.4b "$out/ib-interfaces.csv" --kind bars --x gpus \
    --y megatron_tflops_per_gpu --by nics_per_node --where model=gpt-18.4b $column
}

# The finding is a ratio (idle and packed: within 0.3 % to 64 GPUs, 4.5 % on
# 4096), so Slingshot is drawn over InfiniBand at each size, as bars from 0
# (a ratio axis that starts at 0.95 turns a few per cent into the whole
# panel): on an idle fabric with the nodes packed, and on a busy one with
# them spread over the groups; the title says which.
slingshot () {
  sweep "$out/slingshot.csv" slingshot-vs-ib.yaml
  for state in "slingshot 0 packed" "slingshot-busy 0.5 spread"; do
    # shellcheck disable=SC2086 # $state is three words
    set -- $state
    if [ "$2" = 0 ]; then
      title="Idle fabric, nodes packed"
    else
      title="Fabric half loaded by other jobs, nodes spread"
    fi
    # shellcheck disable=SC2086
    plot "$1" "$out/slingshot.csv" --kind bars --x gpus --y megatron_tflops_per_gpu \
      --by topology --where load="$2" --where placement="$3" \
      --ratio-to apollo-a100-4ib $column --title "$title" \
      --label topology=apollo-a100-4ib:"HDR InfiniBand, fat tree" \
      --label topology=apollo-a100-4ss:"Slingshot-11, dragonfly" \
      --ylabel "TFLOP/s per GPU over InfiniBand's"
  done
}

# The plans of the offload study that run, as grouped bars: the GPU count
# along x, a bar per method (the sweep's other rows do not fit or cannot
# run, and say why in offload.csv).
offload () {
  sweep "$out/offload.csv" offload-finetune.yaml
  # The method as a number, so that the bars stand in this order; --label
  # names them.
  awk -F, '
    !header && /^#/ { next }
    !header { header = 1; for (i = 1; i <= NF; i++) at[$i] = i
              print "gpus,method,model_tflops_per_gpu"; next }
    $at["status"] == "ok" {
      method = 0
      if ($at["zero.offload"] != "none") method = 1
      if ($at["zero.offload_delayed_update"] == "true") method = 2
      print $at["gpus"] "," method "," $at["model_tflops_per_gpu"]
    }' "$out/offload.csv" >"$out/offload-bars.csv"
  # shellcheck disable=SC2086
  plot offload "$out/offload-bars.csv" --kind bars --x gpus --by method \
    --y model_tflops_per_gpu $column --label method=0:"no offload" \
    --label method=1:"CPU offload" --label method=2:"CPU offload, delayed update" \
    --xlabel "GPUs (8 without offload: out of memory)"
}

# Which layout is fastest: GPT-3 175B on Selene's 1,024 GPUs, the best
# TFLOP/s per GPU of each tensor-parallel size and micro-batch (dp follows
# the GPU count); the cells whose plans do not fit are grey, marked OOM.
layout () {
  sweep "$out/layout.csv" gpt3-175b-selene.yaml --set parallel.dp=auto \
    --sweep parallel.tp=1,2,4,8 --sweep parallel.pp=8,16,32 \
    --sweep parallel.micro_batch=1,2,4
  # shellcheck disable=SC2086
  plot layout "$out/layout.csv" --kind heatmap --x micro_batch --y tp \
    --z megatron_tflops_per_gpu --best max $column
}

# Where the time goes as the 39.1B model weak-scales on one NIC per node:
# each step's parts as fractions of it (weak-scaling-39b.yaml's rows).
breakdown () {
  sweep "$out/breakdown.csv" weak-scaling-39b.yaml --sweep topology.inter_node.nics_per_node=1
  # shellcheck disable=SC2086
  plot breakdown "$out/breakdown.csv" --kind stack --x gpus --normalize $column
}

case $name in
  aggregate) aggregate ;;
  megatron) megatron ;;
  weak-scaling) weak_scaling ;;
  ib-interfaces) ib_interfaces ;;
  slingshot) slingshot ;;
  offload) offload ;;
  layout) layout ;;
  breakdown) breakdown ;;
  all)
    aggregate
    megatron
    weak_scaling
    ib_interfaces
    slingshot
    offload
    layout
    breakdown
    ;;
esac
