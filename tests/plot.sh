#!/bin/sh
# tests/plot.sh: `trainsim plot` (issue 5 item 3): each kind of figure in
# PDF, PNG and SVG with its FIG.gp and FIG.dat beside it, the options for
# a paper (issue 13 item 5: --logy, --label and topologies in words,
# --ratio-to, --size and --font, greyscale styles, --normalize, marked
# heatmap cells and --best), byte-identical .gp and .dat for the same CSV,
# the message and exit 1 when gnuplot is missing or fails (and no partial
# figure), and exit 2 with a clear message, and no file written, on each
# kind of bad input.
#
# The CSVs are written here, shaped like a sweep's output (the swept keys,
# status, reason, then report.h's columns), so the test does not depend on
# `trainsim sweep`. Without gnuplot the figure checks are skipped; the
# .gp and .dat checks still run.
#
# Run by automake with TRAINSIM (the binary) and srcdir in the
# environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/plot.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed',
# and exits 1 when a case failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-plot.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

have_gnuplot=no
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=yes


# plot ARG...: runs trainsim plot; stderr in $tmp/err, status in $rc.
plot () {
  "$TRAINSIM" plot "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# --- the CSVs -------------------------------------------------------------------

# A scaling study: 1, 2 or 4 NICs per node on 64 to 512 GPUs. The last two
# rows failed (a reason with a comma, quoted) and must be skipped.
scaling=$tmp/scaling.csv
cat >"$scaling" <<'EOF'
topology.inter_node.nics_per_node,gpus,status,reason,megatron_tflops_per_gpu,iteration_time_s,breakdown_s.compute,breakdown_s.tp_comm,breakdown_s.bubble,breakdown_s.pp_comm,breakdown_s.dp_comm,breakdown_s.optimizer,breakdown_s.offload
1,64,ok,,120.5,10.2,7.1,1.2,0.8,0.1,0.9,0.1,0
1,128,ok,,110.1,5.6,3.6,0.6,0.4,0.05,0.85,0.1,0
1,256,ok,,95.3,3.2,1.8,0.3,0.2,0.03,0.8,0.07,0
1,512,ok,,78.4,1.9,0.9,0.15,0.1,0.02,0.7,0.03,0
2,64,ok,,135.2,9.1,7.1,1.2,0.4,0.1,0.2,0.1,0
2,128,ok,,130,4.7,3.6,0.6,0.2,0.05,0.2,0.05,0
2,256,ok,,124.4,2.45,1.8,0.3,0.1,0.03,0.2,0.02,0
2,512,ok,,115.9,1.3,0.9,0.15,0.05,0.02,0.15,0.03,0
4,64,ok,,140.1,8.8,7.1,1.2,0.3,0.1,0.05,0.05,0
4,128,ok,,138.7,4.4,3.6,0.6,0.1,0.05,0.05,0,0
4,256,ok,,136,2.2,1.8,0.3,0.05,0.03,0.05,0,0
4,512,oom,"needs 90 GiB, has 80 GiB",,,,,,,,,
4,512,infeasible,"tp 3 does not divide heads 96, nor ""pp"" 5",,,,,,,,,
EOF

# A design space: micro-batch x tp, two out-of-memory points.
space=$tmp/space.csv
cat >"$space" <<'EOF'
parallel.micro_batch,parallel.tp,status,reason,megatron_tflops_per_gpu
1,1,ok,,101.2
1,2,ok,,120.4
1,4,ok,,131
2,1,ok,,110
2,2,ok,,128.9
2,4,ok,,139.7
4,1,oom,"needs 95 GiB, has 80",
4,2,ok,,135
4,4,ok,,142.2
EOF

# Networks by name, quoted, one with a comma and a quote in it.
networks=$tmp/networks.csv
cat >"$networks" <<'EOF'
topology.inter_node.link,gpus,status,reason,megatron_tflops_per_gpu
infiniband-hdr,64,ok,,140
"slingshot-11, ""dragonfly""",64,ok,,132
infiniband-hdr,128,ok,,137
"slingshot-11, ""dragonfly""",128,ok,,126
EOF

# magic KIND FILE: whether FILE starts as a KIND figure should.
magic () {
  case $1 in
    pdf) [ "$(head -c 4 "$2")" = "%PDF" ] ;;
    png) [ "$(dd if="$2" bs=1 skip=1 count=3 2>/dev/null)" = "PNG" ] ;;
    svg) grep -q '<svg' "$2" ;;
  esac
}

# --- each kind in each format ---------------------------------------------------

# figure ID DESC EXT ARG...: plots into $tmp/EXT-ID/fig.EXT; one case for
# the .gp and .dat, one for the figure (skipped without gnuplot).
figure () {
  id=$1
  desc=$2
  ext=$3
  shift 3
  dir=$tmp/$ext-$id
  mkdir -p "$dir"
  plot "$@" -o "$dir/fig.$ext"
  [ -s "$dir/fig.gp" ] || fail_because "no fig.gp"
  [ -s "$dir/fig.dat" ] || fail_because "no fig.dat"
  grep -q '^plot ' "$dir/fig.gp" || fail_because "fig.gp has no plot command"
  grep -q '^# series 0' "$dir/fig.dat" || fail_because "fig.dat has no series header"
  verdict "$desc ($ext): fig.gp and fig.dat are written"
  if [ "$have_gnuplot" = no ]; then
    skip "$desc ($ext): no gnuplot to make the figure"
    return
  fi
  [ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
  [ -s "$dir/fig.$ext" ] || fail_because "no fig.$ext"
  magic "$ext" "$dir/fig.$ext" || fail_because "fig.$ext is not a $ext file"
  verdict "$desc ($ext): gnuplot makes fig.$ext"
}

for ext in pdf png svg; do
  figure line "line by NICs, --logx --ideal" "$ext" "$scaling" --x gpus \
    --y aggregate_pflops --by nics_per_node --logx --ideal
  figure bars "bars by NICs" "$ext" "$scaling" --kind bars --x gpus \
    --y megatron_tflops_per_gpu --by topology.inter_node.nics_per_node
  figure heatmap "heatmap micro-batch x tp" "$ext" "$space" --kind heatmap \
    --x micro_batch --y tp --z megatron_tflops_per_gpu
  figure stack "stack of the breakdown" "$ext" "$scaling" --kind stack --x gpus \
    --where nics_per_node=2 --title 'GPT-3 13B, 2 NICs "HDR"'
done

# --- what the .gp and .dat hold -------------------------------------------------

d=$tmp/pdf-line
[ "$(grep -c '^# series' "$d/fig.dat")" -eq 3 ] || fail_because "not 3 series blocks"
# Blocks are separated by two blank lines: gnuplot's index counts them.
[ "$(awk 'NF == 0 { b++; if (b == 2) n++ } NF > 0 { b = 0 } END { print n + 0 }' \
  "$d/fig.dat")" -eq 2 ] || fail_because "blocks are not separated by two blank lines"
# 120.5 TFLOP/s x 64 GPUs = 7.712 PFLOP/s, and ideal scaling of it to 128.
grep -q '^64 7.712 7.712$' "$d/fig.dat" || fail_because "no '64 7.712 7.712' row"
grep -q '^128 14.0928 15.424$' "$d/fig.dat" || fail_because "no '128 14.0928 15.424' row"
grep -q '^512 ' "$d/fig.dat" || fail_because "no 512 row"
[ "$(grep -c '^512 ' "$d/fig.dat")" -eq 2 ] || fail_because "a failed 512 row was plotted"
grep -q 'set logscale x 2' "$d/fig.gp" || fail_because "no log x axis"
grep -q 'ideal scaling' "$d/fig.gp" || fail_because "no ideal scaling line"
grep -q "title 'NICs per node'" "$d/fig.gp" || fail_because "the key is not titled 'NICs per node'"
grep -q "set xlabel 'GPUs'" "$d/fig.gp" || fail_because "x label is not 'GPUs'"
grep -q "set ylabel 'aggregate PFLOP/s" "$d/fig.gp" || fail_because "y label is not readable"
grep -q 'pdfcairo.*font "Helvetica,10".*size 5in,3.2in' "$d/fig.gp" \
  || fail_because "not a 5in x 3.2in pdfcairo terminal with a 10 pt font"
grep -q "^datafile = 'fig.dat'" "$d/fig.gp" || fail_because "the script does not read fig.dat"
verdict "line: 3 series blocks, derived aggregate_pflops, ideal scaling, labels"

plot "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node -o "$tmp/notes.gp.pdf"
grep -q 'skipped 2 rows whose status is not ok (1 oom, 1 infeasible)' "$tmp/err" \
  || fail_because "no note counting the skipped rows"
verdict "rows whose status is not ok are skipped, with a count on stderr"

d=$tmp/png-stack
grep -q 'pngcairo.*size 1000,640' "$d/fig.gp" || fail_because "not a 1000x640 pngcairo terminal"
grep -q 'rowstacked' "$d/fig.gp" || fail_because "not a stacked histogram"
for part in compute tp_comm bubble dp_comm; do
  grep -q "^# series [0-9]*: breakdown_s.$part\$" "$d/fig.dat" || fail_because "no $part block"
done
grep -q 'offload' "$d/fig.dat" && fail_because "offload, zero everywhere, is drawn"
# PP comm (at most 0.02 of 1.3 s) and the optimizer (0.03 of 1.3 s) are
# under 3 % of every bar: one block, "other", their sum (0.1 + 0.1 at 64).
grep -q '^# series 4: the sum of breakdown_s.pp_comm breakdown_s.optimizer$' "$d/fig.dat" ||
  fail_because "the slivers are not one last block"
sed -n '/^# series 4/,$p' "$d/fig.dat" | grep -q '^"64" 0.2$' || fail_because "other at 64 GPUs is not 0.2"
grep -q "title 'other'$" "$d/fig.gp" || fail_because "the merged block is not 'other' in the key"
[ "$(grep -c '^"' "$d/fig.dat")" -eq 20 ] || fail_because "not 5 blocks x 4 GPU counts"
grep -q "^set title 'GPT-3 13B, 2 NICs \"HDR\"'\$" "$d/fig.gp" || fail_because "the title is not quoted for gnuplot"
verdict "stack: the breakdown parts that are not all zero, for each x, the slivers merged"

d=$tmp/svg-heatmap
grep -q '^0 0 101.2 "1" "1"$' "$d/fig.dat" || fail_because "no cell (1, 1)"
[ "$(sed -n '/^# series 0/,/^$/p' "$d/fig.dat" | grep -c '^[0-9]')" -eq 8 ] ||
  fail_because "not 8 cells with a value (9 less one oom)"
grep -q 'with labels' "$d/fig.gp" || fail_because "the values are not printed in the cells"
grep -q "set cblabel 'TFLOP/s per GPU (Megatron)'" "$d/fig.gp" || fail_because "no colour bar label"
verdict "heatmap: a cell per (x, y), labelled with its value"

dir=$tmp/quoted
mkdir -p "$dir"
plot "$networks" --kind bars --x gpus --y megatron_tflops_per_gpu --by link -o "$dir/fig.pdf"
[ "$rc" -eq 0 ] || [ "$have_gnuplot" = no ] || fail_because "exit status $rc"
grep -q "title 'slingshot-11, \"dragonfly\"'" "$dir/fig.gp" \
  || fail_because "the quoted by-value is not a series title"
grep -q '^# series 1: topology.inter_node.link = slingshot-11, "dragonfly"$' "$dir/fig.dat" \
  || fail_because "no block for the quoted value"
grep -q "title 'inter-node network'" "$dir/fig.gp" || fail_because "key title"
verdict "quoted CSV fields with commas and quotes parse"

# --- the options for a paper (issue 13 item 5) ----------------------------------

# A tiny comparison worked out by hand: ss over ib at 64 and 128 GPUs is
# 110/100 = 1.1 and 60/80 = 0.75; ib has no 256 row, so ss's is left out.
ratio=$tmp/ratio.csv
cat >"$ratio" <<'EOF'
net,gpus,status,tflops
ib,64,ok,100
ib,128,ok,80
ss,64,ok,110
ss,128,ok,60
ss,256,ok,50
EOF
d=$tmp/opts
mkdir -p "$d"
plot "$ratio" --x gpus --y tflops --by net --ratio-to ib -o "$d/ratio.pdf"
[ "$(sed -n '/^# series 0/,/^$/p' "$d/ratio.dat" | grep '^[0-9]' | tr '\n' ' ')" = "64 1 128 1 " ] ||
  fail_because "ib over itself is not 1 at 64 and 128"
[ "$(sed -n '/^# series 1/,$p' "$d/ratio.dat" | grep '^[0-9]' | tr '\n' ' ')" = "64 1.1 128 0.75 " ] ||
  fail_because "ss over ib is not 1.1 and 0.75"
grep -q "^set ylabel 'tflops, relative to net = ib'$" "$d/ratio.gp" ||
  fail_because "the y label does not say relative to ib"
grep -q 'ratio-to ib: left out 1 point at an x where ib has no value' "$tmp/err" ||
  fail_because "no note on the 256-GPU point"
grep -q 'set yrange \[0' "$d/ratio.gp" && fail_because "a line of ratios is drawn from zero"
verdict "--ratio-to: each series over the reference at equal x, worked by hand"

plot "$ratio" --kind bars --x gpus --y tflops --by net --ratio-to ib \
  --label net=ib:'InfiniBand' --label net=ss:'Slingshot "11"' -o "$d/ratio-bars.pdf"
grep -q "^set ylabel 'tflops, relative to InfiniBand'$" "$d/ratio-bars.gp" ||
  fail_because "the y label does not name the reference by its label"
grep -q "title 'Slingshot \"11\"'" "$d/ratio-bars.gp" || fail_because "the label is not the series title"
grep -q '^"128" 0.75$' "$d/ratio-bars.dat" || fail_because "no bar at 0.75"
grep -q '^# series 1: net = ss, shown as Slingshot "11"$' "$d/ratio-bars.dat" ||
  fail_because "the block does not say how ss is shown"
grep -q '^set yrange \[0:\*\]$' "$d/ratio-bars.gp" || fail_because "bars of ratios are not drawn from zero"
verdict "--ratio-to on bars, --label on a series"

plot "$scaling" --x gpus --y aggregate_pflops --by nics_per_node --logx --logy \
  --label gpus=512:'512 GPUs' --label nics_per_node=4:'4 x HDR' -o "$d/logy.pdf"
grep -q '^set logscale y$' "$d/logy.gp" || fail_because "no log y axis"
grep -q 'set yrange \[0' "$d/logy.gp" && fail_because "a log axis from zero"
grep -q "^set xtics ('64' 64, '128' 128, '256' 256, '512 GPUs' 512)$" "$d/logy.gp" ||
  fail_because "the x tic of 512 is not labelled"
grep -q "title '4 x HDR'" "$d/logy.gp" || fail_because "the 4-NIC series is not labelled"
verdict "--logy; --label on a line's x value and on a series"

plot "$scaling" --kind bars --x gpus --y megatron_tflops_per_gpu --by nics_per_node \
  --size 3.3x2.2 --font 8 -o "$d/column.pdf"
grep -q '^set terminal pdfcairo noenhanced font "Helvetica,8" size 3.3in,2.2in ' "$d/column.gp" ||
  fail_because "not a 3.3 x 2.2 in PDF with an 8 pt font"
grep -q '^set key outside top center horizontal' "$d/column.gp" ||
  fail_because "the key of a narrow figure is not above it"
plot "$scaling" --kind bars --x gpus --y megatron_tflops_per_gpu --by nics_per_node \
  --size 3.3x2.2 --font 8 -o "$d/column.png"
grep -q '^set terminal pngcairo noenhanced font "Helvetica,16" size 660,440 ' "$d/column.gp" ||
  fail_because "not a 660 x 440 PNG (200 dpi) with the font to match"
verdict "--size and --font set the terminal (inches, or pixels at 200 dpi)"

# Greyscale: each series its own dash type (lines) and fill (bars).
[ "$(grep -c '^set style line [0-9].* dt ' "$d/logy.gp")" -eq 7 ] ||
  fail_because "the line styles lack dash types"
[ "$(grep '^set style line' "$d/logy.gp" | sed 's/.* dt //' | sort -u | wc -l)" -eq 7 ] ||
  fail_because "two line styles share a dash type"
fills=$(grep -o ' fs [a-z]* [0-9.]*' "$d/column.gp" | sort -u | wc -l)
[ "$fills" -eq 3 ] || fail_because "$fills fills for 3 series of bars"
grep -q 'fs pattern' "$d/column.gp" || fail_because "no hatched bars"
verdict "series differ in dash type and point (lines) and fill pattern (bars), not colour alone"

plot "$scaling" --kind stack --x gpus --where nics_per_node=2 --normalize -o "$d/norm.pdf"
sums=$(awk '/^"/ { gsub(/"/, "", $1); if (!($1 in sum)) order[n++] = $1; sum[$1] += $2 }
  END { for (i = 0; i < n; i++) printf "%s:%.9f ", order[i], sum[order[i]] }' "$d/norm.dat")
[ "$sums" = "64:1.000000000 128:1.000000000 256:1.000000000 512:1.000000000 " ] ||
  fail_because "the parts do not sum to 1: $sums"
# compute at 64 GPUs: 7.1 of 9.1 s.
grep -q '^"64" 0.7802197802$' "$d/norm.dat" || fail_because "compute at 64 GPUs is not 7.1/9.1"
grep -q '^set yrange \[0:1\]$' "$d/norm.gp" || fail_because "y is not 0 to 1"
grep -q "^set ylabel 'fraction of the iteration time'$" "$d/norm.gp" || fail_because "y label"
verdict "--normalize: each stack's parts sum to 1"

# A design space where cells have only failed rows (micro-batch 4 x tp 1
# ran out of memory, 8 x 4 is infeasible) and cells hold two schedules.
cells=$tmp/cells.csv
cat >"$cells" <<'EOF'
parallel.micro_batch,parallel.tp,parallel.schedule,status,reason,megatron_tflops_per_gpu
1,1,1f1b,ok,,100
1,1,interleaved,ok,,104
1,4,1f1b,ok,,120
1,4,interleaved,oom,"needs 90 GiB",91
4,1,1f1b,oom,"needs 95 GiB",80
4,1,interleaved,oom,"needs 99 GiB",81
4,4,1f1b,ok,,130
4,4,interleaved,ok,,125
8,4,1f1b,infeasible,"tp 4",
EOF
plot "$cells" --kind heatmap --x micro_batch --y tp --z megatron_tflops_per_gpu --best max -o "$d/best.pdf"
[ "$(sed -n '/^# series 0/,/^$/p' "$d/best.dat" | grep '^[0-9]' | tr '\n' ' ')" = \
  '0 0 104 "1" "1" 0 1 120 "1" "4" 1 1 130 "4" "4" ' ] ||
  fail_because "--best max did not take 104, 120 and 130"
grep -q '^# series 1: status = oom$' "$d/best.dat" || fail_because "no block of out-of-memory cells"
[ "$(sed -n '/status = oom/,/^$/p' "$d/best.dat" | grep '^[0-9]')" = '1 0 "4" "1"' ] ||
  fail_because "the oom cell is not (4, 1) alone (1 x 4 has an ok row)"
[ "$(sed -n '/status = infeasible/,$p' "$d/best.dat" | grep '^[0-9]')" = '2 1 "8" "4"' ] ||
  fail_because "the infeasible cell is not (8, 4)"
grep -q "title 'OOM: out of memory'" "$d/best.gp" || fail_because "the key does not say what OOM is"
grep -q "using 1:2:('OOM') with labels" "$d/best.gp" || fail_because "OOM is not written in the cell"
grep -q "title 'n/a: infeasible plan'" "$d/best.gp" || fail_because "the key does not say what n/a is"
grep -q 'fc rgb "#bdbdbd"' "$d/best.gp" || fail_because "the oom cells are not grey"
grep -q 'marked 2 cells where no row is ok' "$tmp/err" || fail_because "no note on the marked cells"
grep -q 'fall on a point' "$tmp/err" && fail_because "--best still notes the rows it compared"
plot "$cells" --kind heatmap --x micro_batch --y tp --z megatron_tflops_per_gpu --best min -o "$d/min.pdf"
grep -q '^0 0 100 "1" "1"$' "$d/min.dat" || fail_because "--best min did not take 100"
grep -q '^1 1 125 "4" "4"$' "$d/min.dat" || fail_because "--best min did not take 125"
plot "$cells" --kind heatmap --x micro_batch --y tp --z megatron_tflops_per_gpu -o "$d/first.pdf"
grep -q '^0 0 100 "1" "1"$' "$d/first.dat" || fail_because "without --best, not the first row"
grep -q 'take the best with --best max|min' "$tmp/err" || fail_because "the duplicates note does not offer --best"
verdict "heatmap: out-of-memory and infeasible cells marked grey, in the key; --best max|min"

# Shipped topologies by their descriptions, less what they share; a
# --label wins, and a value that names no topology stays itself.
cat >"$tmp/topo.csv" <<'EOF'
topology,gpus,status,megatron_tflops_per_gpu
apollo-a100-1ib,64,ok,123.5
apollo-a100-2ib,64,ok,132.3
apollo-a100-4ib,64,ok,137.1
no-such-topology,64,ok,1
EOF
plot "$tmp/topo.csv" --kind bars --x gpus --y megatron_tflops_per_gpu --by topology \
  --label topology=apollo-a100-4ib:'4 NICs' -o "$d/topo.pdf"
grep -q "title '1 x HDR 200Gb/s per node'" "$d/topo.gp" || fail_because "apollo-a100-1ib is not in words"
grep -q "title '2 x HDR 200Gb/s per node'" "$d/topo.gp" || fail_because "apollo-a100-2ib is not in words"
grep -q "title '4 NICs'" "$d/topo.gp" || fail_because "--label does not win over the description"
grep -q "title 'no-such-topology'" "$d/topo.gp" || fail_because "an unknown name is not kept"
plot "$tmp/topo.csv" --kind bars --x gpus --y megatron_tflops_per_gpu --by topology \
  --where topology=apollo-a100-1ib -o "$d/topo1.pdf"
grep -q "title 'HPE Apollo 6500-style: 8 x A100 80GB on NVSwitch, 1 x HDR 200Gb/s per node, fat tree'" \
  "$d/topo1.gp" || fail_because "one topology alone is not its whole description"
verdict "topology series by their description, less what they share; --label wins"

# --- determinism ----------------------------------------------------------------

# same ARG...: plots twice, into two directories, and compares the bytes.
same () {
  plot "$@" -o "$tmp/det1/f.pdf"
  plot "$@" -o "$tmp/det2/f.pdf"
  cmp -s "$tmp/det1/f.gp" "$tmp/det2/f.gp" || fail_because "$*: .gp differs"
  cmp -s "$tmp/det1/f.dat" "$tmp/det2/f.dat" || fail_because "$*: .dat differs"
}

mkdir -p "$tmp/det1" "$tmp/det2"
same "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --ideal
same "$scaling" --kind bars --x gpus --y iteration_time_s --by nics_per_node
same "$space" --kind heatmap --x micro_batch --y tp --z megatron_tflops_per_gpu
same "$scaling" --kind stack --x gpus --where nics_per_node=1
verdict "the same CSV gives byte-identical .gp and .dat"

# Numeric axes sort, so the order of the rows does not matter. (The .dat
# names the CSV, hence the same name in another directory.)
mkdir -p "$tmp/shuffled"
{ head -n 1 "$scaling"; tail -n +2 "$scaling" | sort -r; } >"$tmp/shuffled/scaling.csv"
plot "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node -o "$tmp/det1/f.pdf"
plot "$tmp/shuffled/scaling.csv" --x gpus --y megatron_tflops_per_gpu --by nics_per_node -o "$tmp/det2/f.pdf"
cmp -s "$tmp/det1/f.dat" "$tmp/det2/f.dat" || fail_because "row order changes the .dat"
verdict "the rows' order in the CSV does not change the .dat"

# Blanks around a number, as a hand-written CSV has them, read as the
# number: the same .dat as without them.
mkdir -p "$tmp/blanks"
{ head -n 1 "$scaling"; tail -n +2 "$scaling" | sed -E 's/,([0-9.]+)/, \1 /g'; } >"$tmp/blanks/scaling.csv"
grep -q ', 7.1 ,' "$tmp/blanks/scaling.csv" || fail_because "the padded CSV lacks its blanks"
plot "$tmp/blanks/scaling.csv" --x gpus --y megatron_tflops_per_gpu --by nics_per_node -o "$tmp/det2/f.pdf"
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail_because "exit status $rc"
cmp -s "$tmp/det1/f.dat" "$tmp/det2/f.dat" || fail_because "blanks around numbers change the .dat"
verdict "blanks around a number in the CSV do not change the .dat"

# A '%' in a tic label is doubled: gnuplot formats tic labels, and "100%"
# was a bad format (exit 1, no figure), "%d" would show the tic's value.
mkdir -p "$tmp/pct"
printf 'status,x,y\nok,1,5\nok,2,6\n' >"$tmp/pct/p.csv"
plot "$tmp/pct/p.csv" --x x --y y --label 'x=2:100%' -o "$tmp/pct/p.pdf"
grep -q "^set xtics ('1' 1, '100%%' 2)$" "$tmp/pct/p.gp" || fail_because "$(grep xtics "$tmp/pct/p.gp")"
if [ "$have_gnuplot" = yes ]; then
  [ "$rc" -eq 0 ] || fail_because "exit status $rc: $(cat "$tmp/err")"
  [ -s "$tmp/pct/p.pdf" ] || fail_because "no figure"
fi
verdict "a '%' in a tic label is doubled, and gnuplot makes the figure"

# Past seven series the colours come round again, each with another marker
# (lines) or fill (bars): series 8 and 9 looked exactly like 1 and 2.
awk 'BEGIN { print "status,x,y,by"; for (i = 0; i < 9; i++) for (x = 1; x <= 2; x++) printf "ok,%d,%d,s%d\n", x, x * i + 1, i }' \
  >"$tmp/pct/nine.csv"
plot "$tmp/pct/nine.csv" --x x --y y --by by -o "$tmp/pct/nine.pdf"
grep -q 'index 7 using 1:2 with linespoints ls 1 pt 13' "$tmp/pct/nine.gp" &&
  grep -q 'index 8 using 1:2 with linespoints ls 2 pt 11' "$tmp/pct/nine.gp" ||
  fail_because "lines: $(grep -o 'index [78] using 1:2 with linespoints ls [0-9][ pt0-9]*' "$tmp/pct/nine.gp")"
plot "$tmp/pct/nine.csv" --kind bars --x x --y y --by by -o "$tmp/pct/bars.pdf"
[ "$(grep -o 'ls [0-9] lw 0.8 dt 1 fs [a-z]* *[0-9.]*' "$tmp/pct/bars.gp" | sort -u | wc -l)" -eq 9 ] ||
  fail_because "bars: $(grep -o 'ls [0-9] lw 0.8 dt 1 fs [a-z]* *[0-9.]*' "$tmp/pct/bars.gp" | sort | uniq -d)"
{ echo 'status,x,breakdown_s.compute,breakdown_s.tp_comm,breakdown_s.bubble,breakdown_s.pp_comm,breakdown_s.dp_comm,breakdown_s.optimizer,breakdown_s.offload,breakdown_s.host'
  echo 'ok,1,1,1,1,1,1,1,1,1'; } >"$tmp/pct/eight.csv"
plot "$tmp/pct/eight.csv" --kind stack --x x -o "$tmp/pct/eight.pdf"
grep -q "title 'host-bound'" "$tmp/pct/eight.gp" || fail_because "no host-bound part in the stack"
[ "$(grep -o 'ls [0-9] lw 0.8 dt 1 fs [a-z]* *[0-9.]*' "$tmp/pct/eight.gp" | sort -u | wc -l)" -eq 8 ] ||
  fail_because "stack: $(grep -o 'ls [0-9] lw 0.8 dt 1 fs [a-z]* *[0-9.]*' "$tmp/pct/eight.gp" | sort | uniq -d)"
verdict "series past the seventh differ from the earlier ones in marker or fill; a stack's eight parts too"

# A lone part under 3 % keeps its name, with how small it is.
printf 'status,x,a,b,c\nok,1,90,9.5,0.5\nok,2,80,19,1\n' >"$tmp/pct/lone.csv"
plot "$tmp/pct/lone.csv" --kind stack --x x --y a,b,c -o "$tmp/pct/lone.pdf"
grep -q "title 'c (under 1 %)'" "$tmp/pct/lone.gp" || fail_because "the lone sliver: $(grep -o "title '[^']*'" "$tmp/pct/lone.gp" | tr '\n' ' ')"
verdict "a stack's lone part under 3 % is named with how small it is"

# Parameters and cost span decades: base-10 log axes with SI tics, and
# labels from the units table, not the column names.
printf 'parameters,cost_usd_with_failures\n1.3e9,1400\n13e9,120000\n175e9,27e6\n1e12,2.7e8\n' >"$tmp/pct/cost.csv"
plot "$tmp/pct/cost.csv" --x parameters --y cost_usd_with_failures --logx --logy -o "$tmp/pct/cost.pdf"
grep -q '^set logscale x 10$' "$tmp/pct/cost.gp" && grep -q '^set format x "%.0s%c"$' "$tmp/pct/cost.gp" ||
  fail_because "x is not in decades with SI tics"
grep -q '^set format y "%.0s%c"$' "$tmp/pct/cost.gp" || fail_because "y is not in SI tics"
grep -q '^set xtics (' "$tmp/pct/cost.gp" && fail_because "each x value is a tic"
grep -q "^set ylabel 'cost with failures (USD)'$" "$tmp/pct/cost.gp" || fail_because "the y label is not from the units table"
plot "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --logx -o "$tmp/pct/gpus.pdf"
grep -q '^set logscale x 2$' "$tmp/pct/gpus.gp" || fail_because "GPU counts are not base 2"
# 1 to 32768 GPUs, 16 counts: 15 doublings in at most six steps of 8.
awk 'BEGIN { print "gpus,y"; for (g = 1; g <= 32768; g *= 2) print g "," g }' >"$tmp/pct/many.csv"
plot "$tmp/pct/many.csv" --x gpus --y y --logx -o "$tmp/pct/many.pdf"
grep -q '^set xtics (1, 8, 64, 512, 4096, 32768)$' "$tmp/pct/many.gp" ||
  fail_because "16 GPU counts: $(grep xtics "$tmp/pct/many.gp")"
verdict "--logx: GPU counts in base 2 (at most seven tics), parameters in decades with SI tics; units-table labels"

# --- gnuplot missing or failing -------------------------------------------------

mkdir -p "$tmp/nobin" "$tmp/nognuplot"
PATH=$tmp/nobin "$TRAINSIM" plot "$scaling" --x gpus --y megatron_tflops_per_gpu \
  -o "$tmp/nognuplot/fig.pdf" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q 'gnuplot not found: install it (apt-get install gnuplot-nox); .*fig.gp and .*fig.dat were written' "$tmp/err" \
  || fail_because "not the gnuplot-missing message"
[ -s "$tmp/nognuplot/fig.gp" ] || fail_because "no .gp"
[ -s "$tmp/nognuplot/fig.dat" ] || fail_because "no .dat"
[ -e "$tmp/nognuplot/fig.pdf" ] && fail_because "a figure was written"
verdict "without gnuplot on PATH: the message, exit 1, .gp and .dat kept"

# A gnuplot that fails: exit 1, its message passed on, no figure, no
# temporary file left behind.
mkdir -p "$tmp/badbin" "$tmp/badgnuplot"
cat >"$tmp/badbin/gnuplot" <<'EOF'
#!/bin/sh
echo "line 3: unknown terminal type" >&2
exit 1
EOF
chmod +x "$tmp/badbin/gnuplot"
PATH=$tmp/badbin:$PATH "$TRAINSIM" plot "$scaling" --x gpus --y megatron_tflops_per_gpu \
  -o "$tmp/badgnuplot/fig.png" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1"
grep -q 'unknown terminal type' "$tmp/err" || fail_because "gnuplot's message is not shown"
left=$(find "$tmp/badgnuplot" -type f | sed 's|.*/||' | sort | tr '\n' ' ')
[ "$left" = "fig.dat fig.gp " ] || fail_because "left behind: $left"
verdict "a failing gnuplot: exit 1, its message, no partial figure"

# --- bad input ------------------------------------------------------------------

# bad DESC PATTERN ARG...: exit 2, PATTERN on stderr, nothing written.
bad () {
  desc=$1
  pattern=$2
  shift 2
  rm -rf "$tmp/bad"
  mkdir -p "$tmp/bad"
  plot "$@"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -q -- "$pattern" "$tmp/err" || fail_because "stderr lacks '$pattern'"
  [ -z "$(ls -A "$tmp/bad")" ] || fail_because "files written: $(ls -A "$tmp/bad")"
  verdict "$desc exits 2"
}

printf 'a,b\n1,2,3\n' >"$tmp/fields.csv"
printf 'a,b\n1,"2\n' >"$tmp/unclosed.csv"
printf 'gpus,megatron_tflops_per_gpu\n64,fast\n' >"$tmp/text.csv"
printf 'gpus,status,megatron_tflops_per_gpu\n64,oom,\n' >"$tmp/allfailed.csv"
: >"$tmp/empty.csv"
o=$tmp/bad/fig.pdf
bad "a missing CSV" "no-such.csv" "$tmp/no-such.csv" --x gpus --y mfu -o "$o"
bad "an empty CSV" "header" "$tmp/empty.csv" --x gpus --y mfu -o "$o"
mkdir -p "$tmp/self"
printf 'gpus,megatron_tflops_per_gpu\n64,100\n128,99\n' >"$tmp/self/fig.dat"
plot "$tmp/self/fig.dat" --x gpus --y megatron_tflops_per_gpu -o "$tmp/self/fig.pdf"
[ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
grep -q 'fig.dat would be written over .*fig.dat, which it reads' "$tmp/err" ||
  fail_because "stderr lacks 'would be written over ..., which it reads'"
grep -q '^64,100$' "$tmp/self/fig.dat" || fail_because "the CSV was overwritten"
verdict "a figure whose .dat is the CSV itself exits 2 and keeps the CSV"
bad "an unknown --y column (the columns are listed)" \
  "has no column 'tflops'.*megatron_tflops_per_gpu" \
  "$scaling" --x gpus --y tflops -o "$o"
bad "an unknown --by column" "has no column 'nics'" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics -o "$o"
bad "an unknown --where column" "has no column 'zero'" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --where zero=1 -o "$o"
bad "a --where without =" "COLUMN=VALUE" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --where gpus -o "$o"
bad "a --where that leaves no rows (its values listed)" "64, 128, 256, 512" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --where gpus=7 -o "$o"
bad "a CSV whose rows all failed" "no rows left" \
  "$tmp/allfailed.csv" --x gpus --y megatron_tflops_per_gpu -o "$o"
bad "an unknown --kind" "unknown kind 'pie' (valid: line, bars, heatmap or stack)" \
  "$scaling" --kind pie --x gpus --y megatron_tflops_per_gpu -o "$o"
bad "an unknown figure extension" "name it .pdf, .svg or .png" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu -o "$tmp/bad/fig.jpg"
bad "no -o" "-o FIG.pdf" "$scaling" --x gpus --y megatron_tflops_per_gpu
bad "no --x" "--x COLUMN is required" "$scaling" --y megatron_tflops_per_gpu -o "$o"
bad "a heatmap without --z" "needs --z" \
  "$space" --kind heatmap --x micro_batch --y tp -o "$o"
bad "--ideal on bars" "--ideal is for --kind line" \
  "$scaling" --kind bars --x gpus --y megatron_tflops_per_gpu --ideal -o "$o"
awk 'BEGIN { print "status,x,y,by"; for (i = 0; i < 50000; i++) printf "ok,%d,1,s%d\n", i % 10, i }' \
  >"$tmp/many.csv"
bad "a --by of 50,000 values (gnuplot drew them for minutes)" \
  "--by by has 50000 values, more than the 49 series a figure tells apart.*--where" \
  "$tmp/many.csv" --x x --y y --by by -o "$o"
bad "a row with too many fields (file:line)" "fields.csv:2: 3 fields, but the header has 2" \
  "$tmp/fields.csv" --x a --y b -o "$o"
bad "an unclosed quote (file:line)" "unclosed.csv:2: a quoted field is not closed" \
  "$tmp/unclosed.csv" --x a --y b -o "$o"
bad "a y cell that is not a number (file:line)" "text.csv:2: megatron_tflops_per_gpu is 'fast'" \
  "$tmp/text.csv" --x gpus --y megatron_tflops_per_gpu -o "$o"
bad "a line plot over text along x" "kind bars" \
  "$networks" --x link --y megatron_tflops_per_gpu -o "$o"
bad "a --label for a value not in the data (the values listed)" \
  "--label 'nics_per_node=3:three': no row drawn has .*nics_per_node = 3 (it has: 1, 2, 4)" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --label nics_per_node=3:three -o "$o"
bad "a --label without :TEXT" "expected COLUMN=VALUE:TEXT" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --label nics_per_node=1 -o "$o"
bad "a --label on a column not drawn along x or as a series" \
  "iteration_time_s is not along x (gpus) nor a series" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --label iteration_time_s=1:x -o "$o"
bad "--ratio-to a series that is missing (the series listed)" \
  "--ratio-to 3: no series has .*nics_per_node = 3 (the series: 1, 2, 4)" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --by nics_per_node --ratio-to 3 -o "$o"
bad "--ratio-to without --by" "--ratio-to 1 needs --by" \
  "$scaling" --x gpus --y megatron_tflops_per_gpu --ratio-to 1 -o "$o"
for size in 3.3 3.3x 0x2 3.3x2.2x1 axb 100x2; do
  bad "a malformed --size ($size)" "--size '$size': expected WIDTHxHEIGHT in inches, each from 0.5 to 50" \
    "$scaling" --x gpus --y megatron_tflops_per_gpu --size "$size" -o "$o"
done
for font in big 0 -8 100; do
  bad "a malformed --font ($font)" "--font '$font': expected a size in points from 4 to 72" \
    "$scaling" --x gpus --y megatron_tflops_per_gpu --font "$font" -o "$o"
done
bad "--normalize without --kind stack" "--normalize is for --kind stack, not bars" \
  "$scaling" --kind bars --x gpus --y megatron_tflops_per_gpu --normalize -o "$o"
printf 'gpus,status,megatron_tflops_per_gpu\n64,ok,100\n128,ok,0\n' >"$tmp/zero.csv"
bad "--logy with a y of zero (file:line)" \
  "zero.csv:3: megatron_tflops_per_gpu is 0: --logy draws values above zero only" \
  "$tmp/zero.csv" --x gpus --y megatron_tflops_per_gpu --logy -o "$o"
bad "--logy on a stack" "--logy is for --kind line or bars, not stack" \
  "$scaling" --kind stack --x gpus --where nics_per_node=1 --logy -o "$o"
bad "--best neither max nor min" "--best 'high': expected max" \
  "$space" --kind heatmap --x micro_batch --y tp --z megatron_tflops_per_gpu --best high -o "$o"
bad "two CSVs" "expected one CSV" "$scaling" "$space" --x gpus --y mfu -o "$o"

plot --help
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q 'Exit status' "$tmp/out" || fail_because "no exit statuses in --help"
grep -q 'heatmap' "$tmp/out" || fail_because "no kinds in --help"
verdict "plot --help exits 0 and describes the kinds and exit statuses"

finish
