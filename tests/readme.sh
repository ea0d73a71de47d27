#!/bin/sh
# tests/readme.sh: the README's samples are what the binary prints (issue 13,
# item 2). A sample is a block indented by 4 spaces or more (inside a list
# item) whose first line starts with "$ ":
# each "$ " line (with its "\" continuation lines) is a command, run from a
# directory holding ./trainsim, experiments/ and tests/data/calibrate/ (a block's commands share
# one shell, so a variable set by one is seen by the next), and the lines
# after it are what it must print. In those lines "..." alone stands for any
# number of lines, and "..." within a line for any text; everything else
# must be printed as written.
#
#   sh tests/readme.sh            check every sample, and the Accuracy
#                                 tables against validate (make check)
#   sh tests/readme.sh --update   rewrite each sample's lines from what the
#                                 commands print now, keeping its "..."
#                                 lines; a line with "..." inside is kept
#                                 as written and still checked
#
# Run by automake with TRAINSIM and srcdir in the environment; by hand, from
# the top build directory: srcdir=. sh tests/readme.sh
# Prints 'ok N - what' or 'not ok N - what' per sample, then
# 'P passed, F failed', and exits 1 when a sample failed.

set -u

: "${srcdir:=$(dirname "$0")/..}"
. "$srcdir/tests/testlib.sh"

update=no
[ "${1:-}" = --update ] && update=yes
readme=$srcdir/README

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-readme.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

work=$tmp/work
mkdir "$work"
ln -s "$TRAINSIM" "$work/trainsim"
ln -s "$srcdir/experiments" "$work/experiments"
# The calibrate section's samples read the published logs kept with the
# tests.
mkdir -p "$work/tests/data"
ln -s "$srcdir/tests/data/calibrate" "$work/tests/data/calibrate"

# Split the README into samples: $tmp/sN.cmd (the block's commands as a
# script whose output is cut into parts by marker lines) and $tmp/sN.want
# (the expected lines, each command's after a marker), with the README line
# range of each sample and its indentation in $tmp/samples ("N FIRST LAST
# INDENT").
awk -v dir="$tmp" '
  function close_sample() {
    if (in_block) {
      printf "%d %d %d %d\n", n, first, last, indent >> (dir "/samples")
      close(cmd); close(want)
    }
    in_block = 0
  }
  {
    line = $0
    if (in_block && (substr(line, 1, indent) == pad || line == "")) {
      if (line == "") { blank++; next }
      if (blank) close_sample()
    }
    # A sample starts at "$ " after 4 spaces or more (a list item adds
    # its own); its lines keep that indentation.
    if (!in_block && match(line, /^    +\$ /)) {
      in_block = 1; n++; first = NR; blank = 0
      indent = RLENGTH - 2; pad = substr(line, 1, indent)
      cmd = dir "/s" n ".cmd"; want = dir "/s" n ".want"
      cont = 0
    }
    if (!in_block) next
    if (substr(line, 1, indent) != pad) { close_sample(); next }
    blank = 0
    last = NR
    body = substr(line, indent + 1)
    if (cont) {
      print body > cmd
      cont = body ~ /\\$/
    } else if (body ~ /^\$ /) {
      print "echo @@trainsim-readme-marker@@" > cmd
      print "@@trainsim-readme-marker@@" > want
      print substr(body, 3) > cmd
      cont = body ~ /\\$/
    } else
      print body > want
  }
  END { close_sample() }
' "$readme"

# match WANT GOT: 0 when GOT's lines match WANT's (the "..." rules); with a
# third argument OUT, writes there the lines to put in the README: WANT's
# "..." lines and lines holding "...", GOT's lines for the rest, aligned
# by matching with every number taken as any number; without "..." lines,
# all of GOT.
match () {
  awk -v want="$1" -v got="$2" -v out="${3:-}" '
    function pattern(s, loose,   r) {
      r = s
      gsub(/[][\\^$.*+?(){}|]/, "\\\\&", r)
      gsub(/\\\.\\\.\\\./, ".*", r)
      if (loose) gsub(/[0-9]+(\\\.[0-9]+)?/, "[0-9]+(\\.[0-9]+)?", r)
      return "^" r "$"
    }
    BEGIN {
      while ((getline l < want) > 0) w[++n] = l
      while ((getline l < got) > 0) g[++m] = l
      loose = out != ""
      for (i = 1; i <= n; i++) {
        skip[i] = w[i] ~ /^[ \t]*\.\.\.[ \t]*$/
        any_skip += skip[i]
        any_inline += !skip[i] && w[i] ~ /\.\.\./
        re[i] = pattern(w[i], loose && w[i] !~ /\.\.\./)
      }
      # ok[i, j]: the first i wanted lines match the first j got lines.
      ok[0, 0] = 1
      for (i = 1; i <= n; i++) {
        for (j = 0; j <= m; j++) {
          v = 0
          if (skip[i]) v = ok[i - 1, j] || (j > 0 && ok[i, j - 1])
          else if (j > 0 && ok[i - 1, j - 1] && g[j] ~ re[i]) v = 1
          ok[i, j] = v
        }
      }
      if (out != "" && !any_skip && !any_inline) {
        for (j = 1; j <= m; j++) print g[j] > out
        exit 0
      }
      if (!ok[n, m]) exit 1
      if (out == "") exit 0
      # Walk back along a match, taking got lines for the literal ones.
      j = m
      for (i = n; i >= 1; i--) {
        if (skip[i]) {
          res[i] = w[i]
          while (j > 0 && !ok[i - 1, j]) j--
        } else {
          res[i] = w[i] ~ /\.\.\./ ? w[i] : g[j]
          j--
        }
      }
      for (i = 1; i <= n; i++) print res[i] > out
    }'
}

[ -s "$tmp/samples" ] || { echo "no samples found in $readme" >&2; exit 99; }
cp "$readme" "$tmp/readme.new"
while read -r k first last indent; do
  (cd "$work" && sh "$tmp/s$k.cmd") >"$tmp/s$k.got" 2>"$tmp/err"
  head=$(sed -n 2p "$tmp/s$k.cmd" | cut -c 1-70)
  if match "$tmp/s$k.want" "$tmp/s$k.got"; then
    ok "README line $first: $head"
    continue
  fi
  if [ "$update" = yes ] && match "$tmp/s$k.want" "$tmp/s$k.got" "$tmp/s$k.new"; then
    echo "$k $first $last $indent" >>"$tmp/updates"
    ok "README line $first: $head (to update)"
    continue
  fi
  why="the README's lines $first-$last and what the commands print differ:"
  notok "README line $first: $head"
  diff "$tmp/s$k.want" "$tmp/s$k.got" | sed 's/^/#   /' | head -n 40
  why=
done <"$tmp/samples"

# Each sample to update, last first so that the line numbers of the ones
# before it still hold: its commands as they were, each command's
# expected lines from sN.new in order.
if [ -s "$tmp/updates" ]; then
  sort -k2,2nr "$tmp/updates" | while read -r k first last indent; do
    awk -v first="$first" -v last="$last" -v new="$tmp/s$k.new" -v indent="$indent" '
      BEGIN {
        while ((getline l < new) > 0) r[++n] = l
        i = 0; pad = sprintf ("%" indent "s", "")
      }
      NR < first || NR > last { print; next }
      # A command ends at its line without a final backslash: its
      # expected lines go after that one.
      {
        body = substr($0, indent + 1)
        if (!cont && body !~ /^\$ /)
          next
        print
        cont = body ~ /\\$/
        if (cont)
          next
        i++    # the marker line
        while (i < n && r[i + 1] != "@@trainsim-readme-marker@@") {
          i++; print pad r[i]
        }
      }' "$tmp/readme.new" >"$tmp/readme.next" && mv "$tmp/readme.next" "$tmp/readme.new"
  done
fi

# The Accuracy tables: each file's row holds the cases, MAPE, max and mean
# signed error that validate prints for it now (checked, not updated).
(cd "$work" && ./trainsim validate experiments/validation/*.yaml) >"$tmp/validate" 2>&1
awk '
  function commas(n) { return n >= 1000 ? int(n / 1000) "," sprintf("%03d", n % 1000) : n }
  /^experiments\/validation\/.*: MAPE / {
    file = $1; sub(/^experiments\/validation\//, "", file); sub(/:$/, "", file)
    mape = $3; max = $5; cases = $7; signed = $12
    sub(/%$/, "", mape); sub(/%$/, "", max); sub(/%,$/, "", signed)
    printf "| %s | %s | %s %% | %s %% | %s %% |\n", file, commas(cases), mape, max, signed
  }' "$tmp/validate" >"$tmp/accuracy"
missing=
while IFS= read -r row; do
  file=${row%% | *}
  want=${row#* | }
  grep -F -- "$file |" "$readme" | grep -qF -- "| $want" ||
    missing="$missing ${file#| }"
done <"$tmp/accuracy"
if [ -s "$tmp/accuracy" ] && [ -z "$missing" ]; then
  ok "README Accuracy: every file's cases, MAPE, max and mean signed error as validate prints them"
else
  why="rows that differ from validate:${missing:- (validate printed no file)}"
  notok "README Accuracy: every file's cases, MAPE, max and mean signed error as validate prints them"
  why=
fi

if [ "$update" = yes ] && ! cmp -s "$readme" "$tmp/readme.new"; then
  cat "$tmp/readme.new" >"$readme"
  echo "updated $readme"
fi
finish
