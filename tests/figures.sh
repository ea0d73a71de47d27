#!/bin/sh
# tests/figures.sh: experiments/figures.sh (issue 5 item 4, issue 4 item 6):
# `figures.sh all` makes every figure, each with its rows, gnuplot script and
# data; the rows say what the experiments claim (1 to 4 NICs never slow the
# 39.1B model on 64 GPUs; the weak-scaling batch follows the GPU count; the
# Megatron bars pair each published number with a prediction); Slingshot is
# drawn over InfiniBand as bars from 0 titled with its scenario, offload as
# grouped bars, a heatmap and a stack, at a column's size; without
# gnuplot the script still writes the .gp and .dat files; bad usage exits 2.
#
# Run by automake with TRAINSIM (the binary) and srcdir in the environment;
# by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/figures.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed',
# and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"
export TRAINSIM
figures=$srcdir/experiments/figures.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-figures.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

have_gnuplot=no
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=yes


# column CSV NAME...: the rows of CSV whose status is ok, as the named
# columns (the first of that name, or of that last part as in
# nics_per_node), space-separated. The rows of the experiments used here
# have no quoted fields; a sweep's first line (a comment) is skipped.
column () {
  csv=$1
  shift
  awk -F, -v want="$*" '
    !header && /^#/ { next }
    !header {
      header = 1
      k = split(want, names, " ")
      for (i = NF; i >= 1; i--) {
        short = $i
        sub(/.*[.]/, "", short)
        by_short[short] = i
        at[$i] = i
      }
      for (j = 1; j <= k; j++) {
        if (!(names[j] in at) && names[j] in by_short) at[names[j]] = by_short[names[j]]
        if (!(names[j] in at)) { print "no column " names[j] | "cat 1>&2"; exit 1 }
      }
      next
    }
    "status" in at && $at["status"] != "ok" { next }
    {
      line = ""
      for (j = 1; j <= k; j++) line = line (j > 1 ? " " : "") $at[names[j]]
      print line
    }' "$csv"
}

figs="aggregate megatron weak-scaling ib-interfaces ib-interfaces-18.4b slingshot slingshot-busy offload layout breakdown"

# --- all figures -----------------------------------------------------------------

out=$tmp/figs
sh "$figures" all "$out" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
for f in $figs; do
  [ -s "$out/$f.gp" ] || fail_because "no $f.gp"
  [ -s "$out/$f.dat" ] || fail_because "no $f.dat"
done
for c in aggregate megatron weak-scaling ib-interfaces slingshot offload layout breakdown; do
  [ -s "$out/$c.csv" ] || fail_because "no $c.csv"
done
verdict "figures.sh all writes each figure's rows, gnuplot script and data"

if [ "$have_gnuplot" = yes ]; then
  for f in $figs; do
    [ "$(head -n 1 "$out/$f.pdf" 2>/dev/null | cut -c 1-4)" = "%PDF" ] ||
      fail_because "$f.pdf is not a PDF"
    grep -qx "$out/$f.pdf" "$tmp/out" || fail_because "$f.pdf is not printed"
  done
  verdict "figures.sh all draws each figure as a PDF and prints its path"
else
  skip "figures.sh all draws each figure as a PDF (gnuplot is not installed)"
fi

# --- what the rows say -----------------------------------------------------------

# The 39.1B model on 64 GPUs, 1 to 4 NICs: TFLOP/s per GPU never drops.
column "$out/ib-interfaces.csv" model gpus nics_per_node megatron_tflops_per_gpu \
  >"$tmp/nics" 2>"$tmp/err"
awk '$1 == "gpt-39.1b" && $2 == 64 { print $3, $4 }' "$tmp/nics" | sort -n >"$tmp/nics-39b"
[ "$(cut -d' ' -f1 "$tmp/nics-39b" | tr '\n' ' ')" = "1 2 3 4 " ] ||
  fail_because "39.1B 64-GPU rows for NICs: $(cut -d' ' -f1 "$tmp/nics-39b" | tr '\n' ' ')"
drop=$(awk 'NR > 1 && $2 < prev { print "NICs " $1 ": " $2 " < " prev } { prev = $2 }' \
  "$tmp/nics-39b")
[ -z "$drop" ] || fail_because "TFLOP/s drop with more NICs: $drop"
verdict "ib-interfaces: the 39.1B model on 64 GPUs is never slower with more NICs (1 to 4)"

# Weak scaling: every size with each NIC count, global batch 3 x GPUs.
column "$out/weak-scaling.csv" gpus global_batch nics_per_node >"$tmp/weak" 2>"$tmp/err"
[ "$(wc -l <"$tmp/weak")" -eq 28 ] || fail_because "$(wc -l <"$tmp/weak") ok rows, expected 7 sizes x 4 NICs"
bad=$(awk '$2 != 3 * $1' "$tmp/weak" | head -n 1)
[ -z "$bad" ] || fail_because "global batch is not 3 x GPUs: $bad"
[ "$(cut -d' ' -f1 "$tmp/weak" | uniq | tr '\n' ' ')" = "64 128 256 512 1024 2048 4096 " ] ||
  fail_because "sizes: $(cut -d' ' -f1 "$tmp/weak" | uniq | tr '\n' ' ')"
verdict "weak-scaling: one header, 28 rows, the global batch growing with the GPUs"

# Slingshot against InfiniBand is a ratio (InfiniBand's bars are 1 at every
# size), drawn as bars from 0 under a title that says the scenario, its
# series named in words, not by topology file, in a figure a paper's column
# holds; the aggregate throughput is log-log.
sed -n '/^# series 0/,/^$/p' "$out/slingshot.dat" | grep '^"[0-9]' >"$tmp/ib-ratio"
[ "$(wc -l <"$tmp/ib-ratio")" -eq 7 ] || fail_because "not 7 sizes of InfiniBand"
[ -z "$(awk '$2 != 1' "$tmp/ib-ratio")" ] || fail_because "InfiniBand over itself is not 1"
grep -q "title 'Slingshot-11, dragonfly'" "$out/slingshot.gp" || fail_because "Slingshot is not named"
grep -q "title 'apollo" "$out/slingshot.gp" && fail_because "a series is named by its file"
grep -q "^set title 'Idle fabric, nodes packed'" "$out/slingshot.gp" ||
  fail_because "slingshot's scenario is not its title"
grep -q "^set title 'Fabric half loaded by other jobs, nodes spread'" "$out/slingshot-busy.gp" ||
  fail_because "slingshot-busy's scenario is not its title"
for f in slingshot slingshot-busy; do
  grep -q '^set yrange \[0:\*\]' "$out/$f.gp" || fail_because "$f's y axis does not start at 0"
done
for f in aggregate weak-scaling ib-interfaces slingshot offload layout breakdown; do
  grep -q '^set terminal .* size 3.3in,2.2in ' "$out/$f.gp" || fail_because "$f is not 3.3 x 2.2 in"
done
grep -q '^set logscale y$' "$out/aggregate.gp" || fail_because "aggregate has no log y axis"
verdict "slingshot is a ratio to InfiniBand from 0, titled with its scenario, series in words; the figures fit a column"

# Busy and spread, every ring step crosses groups: Slingshot's half-bandwidth
# global links bind while InfiniBand keeps 0.62 of its full-bisection ones,
# so Slingshot trails InfiniBand at every size, and more with scale.
sed -n '/^# series 1/,/^$/p' "$out/slingshot-busy.dat" | grep '^"[0-9]' >"$tmp/ss-busy"
[ "$(wc -l <"$tmp/ss-busy")" -eq 7 ] || fail_because "not 7 sizes of Slingshot, busy"
[ -z "$(awk '$2 >= 1' "$tmp/ss-busy")" ] || fail_because "Slingshot busy and spread is not behind"
[ -z "$(awk 'NR > 1 && $2 > prev + 1e-9 { print } { prev = $2 }' "$tmp/ss-busy")" ] ||
  fail_because "Slingshot's busy ratio grows with scale"
verdict "slingshot-busy: spread on a busy fabric, Slingshot trails InfiniBand more with scale"

# Megatron: a measured and a predicted bar per Table 1 row, in its order.
column "$out/megatron.csv" model source megatron_tflops_per_gpu >"$tmp/megatron" 2>"$tmp/err"
[ "$(grep -c ' measured ' "$tmp/megatron")" -eq 10 ] || fail_because "not 10 measured bars"
[ "$(grep -c ' trainsim ' "$tmp/megatron")" -eq 10 ] || fail_because "not 10 trainsim bars"
[ "$(head -n 1 "$tmp/megatron")" = "1.7B measured 137" ] ||
  fail_because "first bar: $(head -n 1 "$tmp/megatron")"
[ "$(tail -n 1 "$tmp/megatron" | cut -d' ' -f1,2)" = "1008B trainsim" ] ||
  fail_because "last bar: $(tail -n 1 "$tmp/megatron")"
far=$(awk '$2 == "measured" { m = $3 } $2 == "trainsim" && ($3 < 0.8 * m || $3 > 1.2 * m)' \
  "$tmp/megatron")
[ -z "$far" ] || fail_because "a prediction more than 20 % from its measurement: $far"
verdict "megatron: 10 measured and 10 predicted bars, each prediction within 20 %"

# Offload (doc/manual.txt, "Memory and offload"): the manual's table is the sweep's
# rows that run, and its overlap_comm figure is the sweep's too.
awk -F, '
  !header && /^#/ { next }
  !header { header = 1; for (i = 1; i <= NF; i++) at[$i] = i; next }
  $at["status"] == "ok" {
    printf "| %s | %s | %s | %s | %.2f s | %.1f | %.1f GiB | %.1f GiB | %.2f s |\n",
      $at["gpus"], $at["zero.offload"],
      $at["zero.offload_delayed_update"] == "true" ? "yes" : "no",
      $at["micro_batch"], $at["iteration_time_s"], $at["model_tflops_per_gpu"],
      $at["memory_per_gpu_gib"], $at["memory.host_gib"], $at["breakdown_s.offload"]
  }' "$out/offload.csv" >"$tmp/offload-rows"
[ "$(wc -l <"$tmp/offload-rows")" -eq 5 ] ||
  fail_because "$(wc -l <"$tmp/offload-rows") offload rows run, expected 5"
while IFS= read -r row; do
  grep -qxF -- "$row" "$srcdir/doc/manual.txt" || fail_because "the manual lacks the row: $row"
done <"$tmp/offload-rows"
"$TRAINSIM" sweep "$srcdir/experiments/offload-finetune.yaml" --sweep gpus=8 \
  --sweep zero.offload=optimizer --sweep zero.offload_delayed_update=false \
  --set parallel.gradient_bucketing=true -o "$tmp/overlap.csv" 2>"$tmp/err"
overlap=$(column "$tmp/overlap.csv" model_tflops_per_gpu | awk '{ printf "%.1f", $1 }')
grep -q "offload then reach $overlap\$" "$srcdir/doc/manual.txt" ||
  grep -q "offload then reach $overlap " "$srcdir/doc/manual.txt" ||
  fail_because "the manual lacks 'offload then reach $overlap' (overlap_comm)"
verdict "offload: the manual's table and overlap figure are what the sweep says"

# The offload figure groups its bars by GPU count, a bar per method named in
# words, in the order no offload, offload, delayed update.
grep -q '^# series 0: method = 0, shown as no offload$' "$out/offload.dat" ||
  fail_because "series 0 is not 'no offload'"
grep -q '^# series 2: method = 2, shown as CPU offload, delayed update$' "$out/offload.dat" ||
  fail_because "series 2 is not the delayed update"
[ "$(grep -c '^"[0-9]*" [0-9]' "$out/offload.dat")" -eq 5 ] || fail_because "not 5 bars"
grep -q '^"8" NaN$' "$out/offload.dat" || fail_because "8 GPUs without offload is not left out"
verdict "offload: grouped bars, GPUs along x, a bar per method in words"

# The layout heatmap marks the plans that do not fit (tp 1) and gives each
# other cell the best of its pipeline sizes; the breakdown stack is in
# fractions of the step.
grep -q 'OOM' "$out/layout.gp" || fail_because "no OOM cell in the layout heatmap"
grep -q "^set ylabel 'fraction of the iteration time'" "$out/breakdown.gp" ||
  fail_because "the breakdown is not normalised"
verdict "layout heatmap marks OOM cells; breakdown stacks fractions of the step"

# --- without gnuplot, and bad usage ----------------------------------------------

# A PATH with only the tools figures.sh needs, so that plot finds no gnuplot.
mkdir -p "$tmp/bin"
for tool in sh dirname mkdir sed awk cat rm mv; do
  path=$(command -v "$tool") && ln -s "$path" "$tmp/bin/$tool"
done
PATH=$tmp/bin sh "$figures" slingshot "$tmp/nognuplot" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q 'gnuplot is not installed' "$tmp/err" || fail_because "no note that gnuplot is missing"
[ -s "$tmp/nognuplot/slingshot.gp" ] || fail_because "no .gp"
[ -s "$tmp/nognuplot/slingshot.dat" ] || fail_because "no .dat"
[ -e "$tmp/nognuplot/slingshot.pdf" ] && fail_because "a PDF was written"
verdict "without gnuplot: exit 0, a note, the .gp and .dat written"
: >"$tmp/err"

for args in "" "pie" "all $tmp/a $tmp/b"; do
  # shellcheck disable=SC2086 # the words of args are the arguments
  sh "$figures" $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail_because "'$args': exit status $rc, expected 2"
  grep -q '^usage: ' "$tmp/err" || fail_because "'$args': no usage line"
done
verdict "bad usage (no NAME, an unknown NAME, three arguments) exits 2 with the usage"

finish
