#!/bin/sh
# tests/readme.sh: the samples of the README and of the manual
# (doc/manual.txt) are what the binary prints (issue 13, item 2; issue 34,
# item 2). A sample is a block indented by 4 spaces or more (inside a list
# item) whose first line starts with "$ ":
# each "$ " line (with its "\" continuation lines) is a command, and the
# lines after it are what it must print. Every command of the README, then
# of the manual, runs in order in one shell (a variable set by one is seen
# by every later one; a file written by one is there for the next), from a
# fresh copy of the tree's experiments/, models/, topologies/ and
# tests/data/calibrate/ beside ./trainsim. A command must exit 0 unless it
# ends with "# exit N": then it must exit N. In the expected lines "..."
# alone stands for any number of lines, and "..." within a line for any
# text; everything else must be printed as written.
#
#   sh tests/readme.sh            check every sample, and the Accuracy
#                                 tables against validate (make check)
#   sh tests/readme.sh --update   rewrite each sample's lines, in both
#                                 files, from what the commands print now,
#                                 keeping its "..." lines; a line with "..."
#                                 inside is kept as written and still checked
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
# The documents, in the order their commands run.
docs="$srcdir/README $srcdir/doc/manual.txt"
# The manual holds the Accuracy tables.
tables=$srcdir/doc/manual.txt

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-readme.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP PIPE

work=$tmp/work
mkdir "$work"
ln -s "$TRAINSIM" "$work/trainsim"
# A fresh copy, so that a sample that writes beside the shipped files
# (figures.sh's figures/, a sweep's output) changes nothing of the tree.
# The calibrate section's samples read the published logs kept with the
# tests.
mkdir -p "$work/tests/data"
for d in experiments models topologies tests/data/calibrate; do
  cp -R "$srcdir/$d" "$work/$d" || exit 99
  chmod -R u+w "$work/$d"
done

# Split each document into samples, numbered on from one document to the
# next: $tmp/sN.cmd (the block's commands as a script whose output is cut
# into parts by marker lines; after each command a check of its exit
# status, which prints a status line when it is not the one wanted) and
# $tmp/sN.want (the expected lines, each command's after a marker), with
# the document, the line range of each sample and its indentation in
# $tmp/samples ("N DOC FIRST LAST INDENT", DOC counting from 1).
split_doc () {
awk -v dir="$tmp" -v n="$2" -v doc="$3" '
  function close_sample() {
    if (in_block) {
      printf "%d %d %d %d %d\n", n, doc, first, last, indent >> (dir "/samples")
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
      if (!cont) status_check(body)
    } else if (body ~ /^\$ /) {
      print "echo @@trainsim-readme-marker@@" > cmd
      print "@@trainsim-readme-marker@@" > want
      print substr(body, 3) > cmd
      cont = body ~ /\\$/
      if (!cont) status_check(body)
    } else
      print body > want
  }
  # A command ends at its line without a final backslash; "# exit N" at
  # its end says the status it must exit with, else 0.
  function status_check(last,   code) {
    code = 0
    if (match(last, /# exit [0-9]+$/)) code = substr(last, RSTART + 7)
    printf "st=$?; [ \"$st\" = %d ] || echo \"@@trainsim-readme-status@@ exit $st, not %d\"\n", code, code > cmd
  }
  END { close_sample(); print n > (dir "/count") }
' "$1"
}
n=0 d=0
for doc in $docs; do
  d=$((d + 1))
  split_doc "$doc" "$n" "$d"
  n=$(cat "$tmp/count")
done

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

[ -s "$tmp/samples" ] || { echo "no samples found in $docs" >&2; exit 99; }

# Every sample's commands in one script, each sample's output after a
# line of its own, run once in one shell; then cut apart again.
while read -r k d first last indent; do
  echo "echo @@trainsim-readme-sample-$k@@"
  cat "$tmp/s$k.cmd"
done <"$tmp/samples" >"$tmp/all.cmd"
(cd "$work" && sh "$tmp/all.cmd") </dev/null >"$tmp/all.got" 2>"$tmp/err"
awk -v dir="$tmp" '
  /^@@trainsim-readme-sample-[0-9]+@@$/ {
    if (out) close(out)
    k = $0; gsub(/[^0-9]/, "", k); out = dir "/s" k ".got"
    printf "" > out
    next
  }
  out { print > out }' "$tmp/all.got"

d=0
for doc in $docs; do
  d=$((d + 1))
  cp "$doc" "$tmp/doc$d.new"
done
while read -r k d first last indent; do
  doc=$(echo $docs | cut -d' ' -f "$d")
  name=${doc#"$srcdir/"}
  [ -f "$tmp/s$k.got" ] || : >"$tmp/s$k.got"
  head=$(sed -n 2p "$tmp/s$k.cmd" | cut -c 1-70)
  if match "$tmp/s$k.want" "$tmp/s$k.got"; then
    ok "$name line $first: $head"
    continue
  fi
  if [ "$update" = yes ] && ! grep -q '^@@trainsim-readme-status@@' "$tmp/s$k.got" &&
     match "$tmp/s$k.want" "$tmp/s$k.got" "$tmp/s$k.new"; then
    echo "$k $d $first $last $indent" >>"$tmp/updates"
    ok "$name line $first: $head (to update)"
    continue
  fi
  why="$name's lines $first-$last and what the commands print differ:"
  notok "$name line $first: $head"
  diff "$tmp/s$k.want" "$tmp/s$k.got" | sed 's/^/#   /' | head -n 40
  why=
done <"$tmp/samples"

# Each sample to update, last first so that the line numbers of the ones
# before it still hold: its commands as they were, each command's
# expected lines from sN.new in order.
if [ -s "$tmp/updates" ]; then
  sort -k2,2n -k3,3nr "$tmp/updates" | while read -r k d first last indent; do
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
      }' "$tmp/doc$d.new" >"$tmp/doc$d.next" && mv "$tmp/doc$d.next" "$tmp/doc$d.new"
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
  grep -F -- "$file |" "$tables" | grep -qF -- "| $want" ||
    missing="$missing ${file#| }"
done <"$tmp/accuracy"
if [ -s "$tmp/accuracy" ] && [ -z "$missing" ]; then
  ok "manual Accuracy: every file's cases, MAPE, max and mean signed error as validate prints them"
else
  why="rows that differ from validate:${missing:- (validate printed no file)}"
  notok "manual Accuracy: every file's cases, MAPE, max and mean signed error as validate prints them"
  why=
fi

d=0
for doc in $docs; do
  d=$((d + 1))
  if [ "$update" = yes ] && ! cmp -s "$doc" "$tmp/doc$d.new"; then
    cat "$tmp/doc$d.new" >"$doc"
    echo "updated $doc"
  fi
done
finish
