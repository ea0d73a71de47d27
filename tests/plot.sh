#!/bin/sh
# tests/plot.sh: `trainsim plot` (issue 5 item 3): each kind of figure in
# PDF, PNG and SVG with its FIG.gp and FIG.dat beside it, byte-identical
# .gp and .dat for the same CSV, the message and exit 1 when gnuplot is
# missing or fails (and no partial figure), and exit 2 with a clear
# message, and no file written, on each kind of bad input.
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
for part in compute tp_comm bubble pp_comm dp_comm optimizer; do
  grep -q "^# series [0-9]*: breakdown_s.$part\$" "$d/fig.dat" || fail_because "no $part block"
done
grep -q 'offload' "$d/fig.dat" && fail_because "offload, zero everywhere, is drawn"
[ "$(grep -c '^"' "$d/fig.dat")" -eq 24 ] || fail_because "not 6 parts x 4 GPU counts"
grep -q "^set title 'GPT-3 13B, 2 NICs \"HDR\"'\$" "$d/fig.gp" || fail_because "the title is not quoted for gnuplot"
verdict "stack: the breakdown parts that are not all zero, for each x"

d=$tmp/svg-heatmap
grep -q '^0 0 101.2 "1" "1"$' "$d/fig.dat" || fail_because "no cell (1, 1)"
[ "$(grep -c '^[0-9]' "$d/fig.dat")" -eq 8 ] || fail_because "not 8 cells (9 less one oom)"
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
grep -q 'would be written over the CSV' "$tmp/err" ||
  fail_because "stderr lacks 'would be written over the CSV'"
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
bad "a row with too many fields (file:line)" "fields.csv:2: 3 fields, but the header has 2" \
  "$tmp/fields.csv" --x a --y b -o "$o"
bad "an unclosed quote (file:line)" "unclosed.csv:2: a quoted field is not closed" \
  "$tmp/unclosed.csv" --x a --y b -o "$o"
bad "a y cell that is not a number (file:line)" "text.csv:2: megatron_tflops_per_gpu is 'fast'" \
  "$tmp/text.csv" --x gpus --y megatron_tflops_per_gpu -o "$o"
bad "a line plot over text along x" "kind bars" \
  "$networks" --x link --y megatron_tflops_per_gpu -o "$o"
bad "two CSVs" "expected one CSV" "$scaling" "$space" --x gpus --y mfu -o "$o"

plot --help
[ "$rc" -eq 0 ] || fail_because "exit status $rc"
grep -q 'Exit status' "$tmp/out" || fail_because "no exit statuses in --help"
grep -q 'heatmap' "$tmp/out" || fail_because "no kinds in --help"
verdict "plot --help exits 0 and describes the kinds and exit statuses"

finish
