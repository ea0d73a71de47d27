#!/bin/sh
# tests/plot-hostile.sh: `trainsim plot` on a CSV someone sent you (issue
# 14 item 1). Its column names and cells, the CSV's and the figure's file
# names, --title, --xlabel and --ylabel all hold text that gnuplot would
# run if it reached the script unquoted: backquotes, $(...), system(),
# quotes of both kinds, a '!' shell escape and line breaks that would end
# a string or a comment; so do --label, --ratio-to and the description of
# a topology file that a `topology` column names. Each payload would
# create a file named PWNED-*; the test plots every kind, runs the written script by hand too, and
# checks that no such file exists and that each plot still succeeds.
#
# Run by automake with TRAINSIM (the binary) and srcdir in the
# environment; by hand, from the top build directory:
#   TRAINSIM=./trainsim srcdir=. sh tests/plot-hostile.sh
# Prints 'ok N - what' or 'not ok N - what' per case, then 'P passed, F failed'.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-hostile.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE
# Topology files beside the CSV, found as an experiment there finds them.
mkdir -p "$tmp/topologies"

nl='
'

# payload TAG: text that, run by gnuplot or a shell, creates PWNED-TAG-*
# in the current directory (gnuplot runs in the figure's directory).
payload () {
  printf '%s' "$1 \`touch PWNED-$1-bq\` \$(touch PWNED-$1-dollar) @x \"q\" 'sq' \\
system(\"touch PWNED-$1-sys\") \\
!touch PWNED-$1-bang
'; system('touch PWNED-$1-sq'); '
\"; system(\"touch PWNED-$1-dq\"); \"
end\\"
}

# field TEXT: TEXT as an RFC 4180 CSV field, quoted, quotes doubled.
field () {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"
}

x=$(payload xcol)
cat_=$(payload catcol)
by=$(payload bycol)
y=$(payload ycol)
y2=$(payload y2col)

csv=$tmp/hostile.csv
{
  printf '%s,%s,%s,status,%s,%s\n' "$(field "$x")" "$(field "$cat_")" "$(field "$by")" \
    "$(field "$y")" "$(field "$y2")"
  for c in 1 2; do
    for b in 1 2; do
      for g in 64 128; do
        printf '%s,%s,%s,ok,%s,%s\n' "$g" "$(field "$(payload "cat$c")")" \
          "$(field "$(payload "by$b")")" "$((g + c + b))" "$((g - c))"
      done
    done
  done
} >"$csv"
# The same CSV under a name that ends the script's comment line if it can.
evil=$tmp/"evil${nl}system(\"touch PWNED-csvname\")${nl}!touch PWNED-csvbang${nl}.csv"
cp "$csv" "$evil"

# pwned: the PWNED-* files anywhere under $tmp, on one line; removes them,
# so that each case reports its own.
pwned () {
  find "$tmp" -name 'PWNED-*' | sed 's|.*/||' | sort | tr '\n' ' '
  find "$tmp" -name 'PWNED-*' -exec rm -f {} +
}

# hostile DESC CSV FIG ARG...: plots CSV into FIG (its directory created)
# from $tmp; checks that nothing ran and that the figure was made.
hostile () {
  desc=$1
  data=$2
  fig=$3
  shift 3
  mkdir -p "$(dirname "$fig")"
  (cd "$tmp" && "$TRAINSIM" plot "$data" "$@" -o "$fig") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  left=$(pwned)
  [ -z "$left" ] || fail_because "a payload ran: $left"
  if command -v gnuplot >/dev/null 2>&1; then
    [ "$rc" -eq 0 ] || fail_because "exit status $rc, expected 0"
    [ -s "$fig" ] || fail_because "no figure"
  else
    [ "$rc" -eq 1 ] || fail_because "exit status $rc, expected 1 (no gnuplot)"
  fi
  [ -s "${fig%.pdf}.gp" ] || fail_because "no script"
  verdict "$desc: nothing runs, the plot is made"
}

hostile "line, hostile column names and --by values" "$csv" "$tmp/line/fig.pdf" \
  --x "$x" --y "$y" --by "$by"
hostile "line, hostile --title, --xlabel and --ylabel" "$csv" "$tmp/labels/fig.pdf" \
  --x "$x" --y "$y" --title "$(payload title)" --xlabel "$(payload xlabel)" \
  --ylabel "$(payload ylabel)"
hostile "bars, hostile categories and --by values" "$csv" "$tmp/bars/fig.pdf" \
  --kind bars --x "$cat_" --y "$y" --by "$by" --where "$by=$(payload by1)"
hostile "heatmap, hostile categories on both axes" "$csv" "$tmp/heatmap/fig.pdf" \
  --kind heatmap --x "$cat_" --y "$by" --z "$y2"
hostile "stack, hostile part names" "$csv" "$tmp/stack/fig.pdf" \
  --kind stack --x "$cat_" --y "$y,$y2"
# gnuplot reads a script or data file named '<cmd' as the output of cmd.
hostile "a figure named '<cmd' (so its script and data file are too)" \
  "$csv" "$tmp/named/<touch PWNED-lt${nl}.pdf" --x "$x" --y "$y"
hostile "a CSV whose name has line breaks (it is in the script's comment)" \
  "$evil" "$tmp/evil/fig.pdf" --x "$x" --y "$y"
# A figure name the script's strings cannot hold as the file's bytes
# (invalid UTF-8, a tab) is refused: the script would name other files.
for name in "$(printf 'f\377.pdf')" "$(printf 'f\tx.pdf')"; do
  ts plot "$csv" -o "$tmp/$name" --x "$x" --y "$y"
  [ "$rc" -eq 2 ] || fail_because "exit status $rc, expected 2"
  grep -q "is not printable UTF-8" "$tmp/err" || fail_because "stderr: $(cat "$tmp/err")"
done
verdict "a figure name of invalid UTF-8 or a control character is refused"

# --label's value and text, --ratio-to's value, and the descriptions of
# topology files beside the CSV (a series over `topology` is shown by
# them) are user text as much as a cell.
for t in a b; do
  {
    echo "schema_version: 1"
    echo "name: evil-$t"
    echo "description: |"
    payload "desc$t" | sed 's/^/  /'
    echo
  } >"$tmp/topologies/evil-$t.yaml"
done
topo=$tmp/topo.csv
{
  echo "topology,gpus,status,tflops"
  echo "evil-a,64,ok,100"
  echo "evil-b,64,ok,110"
  printf '%s,64,ok,120\n' "$(field "$(payload topocell)")"
} >"$topo"
hostile "bars of topologies whose descriptions are hostile" "$topo" "$tmp/topo/fig.pdf" \
  --kind bars --x gpus --y tflops --by topology
grep -q "title 'desca " "$tmp/topo/fig.gp" || fail_because "evil-a is not shown by its description"
verdict "a topology's description reaches the key, quoted"
hostile "a hostile --label value and text, and --ratio-to" "$topo" "$tmp/label/fig.pdf" \
  --kind bars --x gpus --y tflops --by topology --ratio-to "$(payload topocell)" \
  --label "topology=evil-b:$(payload labeltext)" --label "gpus=64:$(payload xlabeltext)"
grep -q "title 'labeltext " "$tmp/label/fig.gp" || fail_because "the --label text is not the series title"
verdict "a --label text reaches the key, quoted"

# The script, run by hand as its comment says, with the figure named to
# be read as a pipe ('|cmd') when trainsim does not set outfile: still
# nothing runs.
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p "$tmp/byhand"
  (cd "$tmp" && "$TRAINSIM" plot "$csv" --x "$x" --y "$y" --by "$by" \
    -o "$tmp/byhand/|touch PWNED-pipe.pdf") >"$tmp/out" 2>"$tmp/err"
  pwned >/dev/null
  (cd "$tmp/byhand" && gnuplot "./|touch PWNED-pipe.gp") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  left=$(pwned)
  [ -z "$left" ] || fail_because "a payload ran: $left"
  [ "$rc" -eq 0 ] || fail_because "gnuplot exit status $rc"
  [ -s "$tmp/byhand/|touch PWNED-pipe.pdf" ] || fail_because "no figure under its own name"
  verdict "the script run by hand: nothing runs, the figure is written under its name"
else
  skip "the script run by hand" "no gnuplot"
fi

# A line break in a title is kept as one, outside the quoted text.
grep -q "^set title 'title .*'\\.\"\\\\n\"\\.'" "$tmp/labels/fig.gp" \
  || fail_because "the title's line break is not joined on as \"\\n\""
verdict "a line break in --title stays a line break in the figure"

finish
