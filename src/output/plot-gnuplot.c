/* plot-gnuplot.c: the gnuplot text every kind of figure writes: strings,
 * file names and numbers made safe, line styles, the page and terminal,
 * the preamble, key, category tics and y range, the data file's header
 * and blocks, and the histograms bars and stacks share. */
#include "output/plot-figure.h"
#include "base/errors.h"
#include "base/units.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ gnuplot text
 *
 * A CSV may come from anyone, so its cells and column names, like the file
 * names and --title, are text to show and never gnuplot to run. gnuplot
 * runs `command` inside a double-quoted string (and anywhere outside a
 * string), expands @macros outside strings, and ends a string or a
 * comment at a line break, after which the next line is a command. So
 * such text reaches the script only through append_gp_string (a
 * single-quoted string, which expands nothing) or, in a comment, through
 * one_line; in the data file, which gnuplot reads as data and never runs,
 * it is still kept to its line. Only the script's own constants are
 * written double-quoted. */

/* S as a gnuplot string expression: single-quoted, where nothing is
 * expanded, with a quote and a line break (a two-line title) joined on
 * as the constants "'" and "\n": the only double-quoted parts, which hold
 * nothing of S. (gnuplot 5.4 reads the escape '' at the start of a string
 * as an empty string.) Other control characters become spaces. Accepted
 * wherever the script puts text (labels, titles, tic labels, assignments). */
void
append_gp_string (GString *out, const char *s)
{
  g_autofree char *valid = g_utf8_make_valid (s, -1);

  g_string_append_c (out, '\'');
  for (const unsigned char *p = (const unsigned char *) valid; *p; p++)
    if (*p == '\'')
      g_string_append (out, "'.\"'\".'");
    else if (*p == '\n')
      g_string_append (out, "'.\"\\n\".'");
    else
      g_string_append_c (out, *p < 0x20 || *p == 0x7f ? ' ' : (char) *p);
  g_string_append_c (out, '\'');
}

/* S as a tic label: a string as append_gp_string writes it, whose '%'
 * are doubled, since gnuplot formats a tic label as it formats numbers
 * ("100%" is a bad format, "%d GPUs" would show the tic's value). */
void
append_gp_tic_label (GString *out, const char *s)
{
  g_auto (GStrv) parts = g_strsplit (s, "%", -1);
  g_autofree char *doubled = g_strjoinv ("%%", parts);
  append_gp_string (out, doubled);
}

/* The file NAME (a base name) as gnuplot is to take it: gnuplot reads
 * '<cmd' as a command to read from (a script to load, data to plot),
 * '|cmd' as one to write to, and '-' and '$x' as other sources, so a name
 * that starts with anything but a letter, a digit, '_' or '.' becomes
 * "./NAME". Owned. */
char *
gp_file_name (const char *name)
{
  return g_ascii_isalnum (name[0]) || name[0] == '_' || name[0] == '.'
         ? g_strdup (name) : g_strconcat ("./", name, NULL);
}

/* The file NAME as a gnuplot string (gp_file_name). */
static void
append_gp_file (GString *out, const char *name)
{
  g_autofree char *path = gp_file_name (name);

  append_gp_string (out, path);
}

/* S on one line, control characters as spaces, for a comment of the
 * script or the data file: a line break would end the comment. */
static char *
one_line (const char *s)
{
  char *line = g_utf8_make_valid (s, -1);

  for (char *p = line; *p; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';
  return line;
}

/* A quoted text column of the data file: gnuplot has no escape there, so
 * a quote becomes ' and the text stays on its line. */
void
append_dat_string (GString *out, const char *s)
{
  g_autofree char *line = one_line (s);

  g_string_append_c (out, '"');
  for (const char *p = line; *p; p++)
    g_string_append_c (out, *p == '"' ? '\'' : *p);
  g_string_append_c (out, '"');
}

/* "%.10g" in the C locale: more digits than any figure shows, and the
 * same bytes everywhere. */
void
append_num (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (v == 0.0)
    v = 0.0;  /* -0 */
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.10g", v));
}

/* Okabe and Ito's palette: told apart with every common colour vision
 * deficiency, and by point shape in greyscale. Yellow (#F0E442) is left
 * out, too light on white. */
const char *const series_colours[SERIES_N_COLOURS] = {
  "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
  "#000000",
};

/* Filled circle, square, triangle, diamond, inverted triangle, pentagon,
 * star: a series stays apart from its neighbours in greyscale. */
static const int series_points[] = { 7, 5, 9, 13, 11, 15, 3 };
G_STATIC_ASSERT (G_N_ELEMENTS (series_points) == G_N_ELEMENTS (series_colours));

/* The dash types of the lines (solid, dashed, dash-dot, dash-dot-dot, long,
 * short, long-short) and the fills of the bars (solid, then hatched one
 * way, the other, crossed, and denser): with the points, what tells the
 * series apart in a greyscale print. Dotted (dt 3) is left for the ideal
 * scaling lines. */
static const char *const series_dashes[] = {
  "1", "2", "4", "5", "(12,6)", "(3,3)", "(12,4,4,4)",
};
G_STATIC_ASSERT (G_N_ELEMENTS (series_dashes) == G_N_ELEMENTS (series_colours));
static const char *const series_fills[] = {
  "solid 0.9", "pattern 5", "pattern 4", "pattern 1", "pattern 7",
  "pattern 6", "pattern 2",
};
G_STATIC_ASSERT (G_N_ELEMENTS (series_fills) == G_N_ELEMENTS (series_colours));

/* The n-th variant of style S's marker or fill (of the 7 of each): series
 * past the seventh take the colour of series s % 7 with another marker or
 * fill, shifted by 3 a cycle (3 and 7 have no common factor), so the first
 * 49 series all differ in more than colour. */
static gsize
series_variant (guint s)
{
  gsize n = G_N_ELEMENTS (series_colours);
  return (s % n + 3 * (s / n)) % n;
}

/* " ls N" for series S, and past the first seven " pt P", its marker. */
void
append_line_style (GString *gp, guint s)
{
  gsize n = G_N_ELEMENTS (series_colours);
  g_string_append_printf (gp, " ls %zu", (gsize) s % n + 1);
  if (s >= n)
    g_string_append_printf (gp, " pt %d", series_points[series_variant (s)]);
}


static const Terminal terminals[] = {
  { ".pdf", "pdfcairo", "in", 1, 1, "linewidth 1.5", "0.55" },
  { ".png", "pngcairo", "", 200, 2, "linewidth 3 background \"#ffffff\"",
    "1.2" },
  { ".svg", "svg", "", 100, 1,
    "dynamic linewidth 1.5 background \"#ffffff\"", "0.8" },
};

static const Terminal *
terminal_for (const char *figure)
{
  gsize n = strlen (figure);

  for (gsize i = 0; i < G_N_ELEMENTS (terminals); i++)
    {
      gsize e = strlen (terminals[i].ext);

      if (n > e && g_ascii_strcasecmp (figure + n - e, terminals[i].ext) == 0)
        return &terminals[i];
    }
  return NULL;
}


/* The bounds of --size and --font: a figure a paper can hold, and a font
 * it can be read in. */
#define PAGE_MIN_IN 0.5
#define PAGE_MAX_IN 50
#define FONT_MIN_PT 4
#define FONT_MAX_PT 72

gboolean
page_parse (Page *page, const PlotSpec *spec, GError **error)
{
  page->term = terminal_for (spec->figure);
  page->width = 5;
  page->height = 3.2;
  page->font = 10;
  if (page->term == NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "-o %s: unknown figure type; name it .pdf, .svg or .png",
                   spec->figure);
      return FALSE;
    }
  /* The script names the figure and its data in gnuplot strings, which
   * hold text and line breaks (append_gp_string): a name with anything
   * else (invalid UTF-8, another control character) would be written there
   * other than the files trainsim writes. */
  gboolean printable = g_utf8_validate (spec->figure, -1, NULL);
  for (const char *p = spec->figure; printable && *p; p++)
    printable = *p == '\n' || ((unsigned char) *p >= 0x20 && *p != 0x7f);
  if (!printable)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "-o: the figure's name is not "
                   "printable UTF-8; give it one that is, such as figure.pdf");
      return FALSE;
    }
  if (spec->size != NULL)
    {
      g_auto (GStrv) wh = g_strsplit_set (spec->size, "xX", -1);

      if (g_strv_length (wh) != 2 || !units_number (wh[0], &page->width)
          || !units_number (wh[1], &page->height)
          || page->width < PAGE_MIN_IN || page->width > PAGE_MAX_IN
          || page->height < PAGE_MIN_IN || page->height > PAGE_MAX_IN)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                       "--size '%s': expected WIDTHxHEIGHT in inches, each "
                       "from %g to %g, e.g. 3.3x2.2 for a paper's column",
                       spec->size, (double) PAGE_MIN_IN, (double) PAGE_MAX_IN);
          return FALSE;
        }
    }
  if (spec->font != NULL
      && (!units_number (spec->font, &page->font) || page->font < FONT_MIN_PT
          || page->font > FONT_MAX_PT))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--font '%s': expected a size in points from %d to %d, "
                   "e.g. 8", spec->font, FONT_MIN_PT, FONT_MAX_PT);
      return FALSE;
    }
  return TRUE;
}

/* The page's `set terminal` line. Pixels are whole. */
static void
append_terminal (GString *gp, const Page *page)
{
  const Terminal *t = page->term;
  gboolean pixels = *t->unit == '\0';
  double w = page->width * t->per_inch, h = page->height * t->per_inch;

  g_string_append_printf (gp, "set terminal %s noenhanced font \"Helvetica,",
                          t->name);
  append_num (gp, page->font * t->font_scale);
  g_string_append (gp, "\" size ");
  append_num (gp, pixels ? round (w) : w);
  g_string_append_printf (gp, "%s,", t->unit);
  append_num (gp, pixels ? round (h) : h);
  g_string_append_printf (gp, "%s %s\n", t->unit, t->options);
}

char *
plot_sibling_path (const char *figure, const char *ext)
{
  const char *slash = strrchr (figure, '/');
  const char *dot = strrchr (slash ? slash + 1 : figure, '.');
  gsize stem = dot && dot != (slash ? slash + 1 : figure)
               ? (gsize) (dot - figure) : strlen (figure);

  return g_strdup_printf ("%.*s%s", (int) stem, figure, ext);
}

/* The settings every kind shares: terminal, output, styles, labels. */
void
append_preamble (GString *gp, const Figure *f, const Page *page,
                 const char *xlabel, const char *ylabel)
{
  const PlotSpec *spec = f->spec;
  g_autofree char *fig = g_path_get_basename (spec->figure);
  g_autofree char *dat_path = plot_sibling_path (spec->figure, ".dat");
  g_autofree char *gp_path = plot_sibling_path (spec->figure, ".gp");
  g_autofree char *dat = g_path_get_basename (dat_path);
  g_autofree char *self = g_path_get_basename (gp_path);
  g_autofree char *csv = g_path_get_basename (f->table->name);
  g_autofree char *self_line = one_line (self), *csv_line = one_line (csv);
  g_autofree char *dat_line = one_line (dat);

  /* Each name is followed by text of the line's own: a comment ending in
   * a backslash would go on to swallow the next line. */
  g_string_append_printf (gp,
    "# %s: a %s plot of %s, written by trainsim plot; the data is in %s.\n"
    "# Restyle it freely, then run it from this directory: gnuplot %s\n\n"
    "set encoding utf8\n",
    self_line, kind_names[spec->kind], csv_line, dat_line, self_line);
  append_terminal (gp, page);
  g_string_append (gp, "# trainsim sets outfile to a temporary name it "
                   "renames once gnuplot succeeds.\n"
                   "if (!exists(\"outfile\")) outfile = ");
  append_gp_file (gp, fig);
  g_string_append (gp, "\nset output outfile\ndatafile = ");
  append_gp_file (gp, dat);
  g_string_append (gp, "\n\n");
  for (gsize i = 0; i < G_N_ELEMENTS (series_colours); i++)
    g_string_append_printf (gp, "set style line %zu lc rgb \"%s\" lw 1.5 "
                            "pt %d dt %s\n", i + 1, series_colours[i],
                            series_points[i], series_dashes[i]);
  g_string_append_printf (gp, "set pointsize %s\n", page->term->pointsize);
  g_string_append (gp, "set border 3 lw 1\nset tics nomirror out\n"
                   "set grid back lt 1 lc rgb \"#dddddd\" lw 1\n");
  if (spec->title != NULL)
    {
      g_string_append (gp, "set title ");
      append_gp_string (gp, spec->title);
      g_string_append_c (gp, '\n');
    }
  const char *axes[][2] = { { "xlabel", xlabel }, { "ylabel", ylabel } };
  for (gsize i = 0; i < G_N_ELEMENTS (axes); i++)
    if (axes[i][1] != NULL)
      {
        g_string_append_printf (gp, "set %s ", axes[i][0]);
        append_gp_string (gp, axes[i][1]);
        g_string_append_c (gp, '\n');
      }
}

/* The key, titled @title (the series' column), where @needed. */
void
append_key (GString *gp, gboolean needed, const char *title,
            const char *where)
{
  if (!needed)
    {
      g_string_append (gp, "unset key\n");
      return;
    }
  g_string_append_printf (gp, "set key %s Left reverse noautotitle "
                          "samplen 2.5 spacing 1.1", where);
  if (title != NULL)
    {
      g_string_append (gp, " title ");
      append_gp_string (gp, title);
    }
  g_string_append_c (gp, '\n');
}

/* Where the key of the series goes: right of the plot, or above it in a
 * row on a figure narrower than 4 in (a paper's column), or when a
 * series' name is long (a topology's description), where a key at the
 * side would take a third of the width or more. A vertical key of a
 * stack is inverted, its first part at the bottom as in the bars. */
const char *
key_place (const Page *page, const Axis *series, gboolean stacked)
{
  glong longest = 0;

  for (guint i = 0; !stacked && i < series->shown->len; i++)
    longest = MAX (longest, g_utf8_strlen (g_ptr_array_index (series->shown,
                                                              i), -1));
  if (page->width < 4 || longest > 24)
    return "outside top center horizontal";
  return stacked ? "outside right top vertical invert"
                 : "outside right top vertical";
}

/* Many or long category labels along x are slanted, not overlapped. */
void
append_slant (GString *gp, const Axis *cats)
{
  gsize longest = 0;

  for (guint i = 0; i < cats->shown->len; i++)
    longest = MAX (longest, strlen (g_ptr_array_index (cats->shown, i)));
  if (cats->shown->len > 8 || longest > 10)
    g_string_append (gp, "set xtics rotate by 30 right\n");
}

/* Category tics at 0, 1, 2... along @axis ("x" or "y"). */
void
append_category_tics (GString *gp, const char *axis, const Axis *cats)
{
  g_string_append_printf (gp, "set %stics (", axis);
  for (guint i = 0; i < cats->shown->len; i++)
    {
      g_string_append (gp, i ? ", " : "");
      append_gp_tic_label (gp, g_ptr_array_index (cats->shown, i));
      g_string_append_printf (gp, " %u", i);
    }
  g_string_append (gp, ")\n");
}

/* Whether a value of @axis is shown by a text other than its own. */
gboolean
axis_relabelled (const Axis *axis)
{
  for (guint i = 0; i < axis->labels->len; i++)
    if (strcmp (g_ptr_array_index (axis->labels, i),
                g_ptr_array_index (axis->shown, i)) != 0)
      return TRUE;
  return FALSE;
}

/* The comment at the head of the data file, and what the options did to
 * the numbers in it. */
void
append_dat_header (GString *dat, const Figure *f, const char *columns)
{
  const PlotSpec *spec = f->spec;
  g_autofree char *csv = g_path_get_basename (f->table->name);
  g_autofree char *csv_line = one_line (csv), *columns_line = one_line (columns);

  g_string_append_printf (dat, "# trainsim plot: data of a %s plot of %s, "
                          "one block per series (gnuplot: index N)\n"
                          "# columns: %s\n",
                          kind_names[spec->kind], csv_line, columns_line);
  if (spec->best != NULL)
    {
      g_autofree char *value = one_line (g_ptr_array_index (
        f->table->header, g_array_index (f->values, int, 0)));
      g_string_append_printf (dat, "# each point: of the rows on it, the one "
                              "with the %s %s (--best %s)\n",
                              strcmp (spec->best, "max") == 0 ? "highest"
                              : "lowest", value, spec->best);
    }
  if (spec->ratio_to != NULL)
    {
      g_autofree char *by = one_line (g_ptr_array_index (f->table->header,
                                                         f->by));
      g_autofree char *to = one_line (spec->ratio_to);
      g_string_append_printf (dat, "# y: over the y of the series %s = %s at "
                              "the same x (--ratio-to)\n", by, to);
    }
  if (spec->normalize)
    g_string_append (dat, "# values: fractions of their bar's total "
                     "(--normalize)\n");
}

/* A block's title line: "# series 2: topology.inter_node.nics_per_node = 2",
 * and the text the value is shown by where it is another. */
void
append_block (GString *dat, guint s, const char *column, const char *value,
              const char *shown)
{
  g_autofree char *column_line = one_line (column);
  g_autofree char *value_line = value ? one_line (value) : NULL;

  if (s > 0)
    g_string_append (dat, "\n\n");
  g_string_append_printf (dat, "# series %u: %s%s%s", s, column_line,
                          value ? " = " : "", value ? value_line : "");
  if (value != NULL && shown != NULL && strcmp (value, shown) != 0)
    {
      g_autofree char *shown_line = one_line (shown);
      g_string_append_printf (dat, ", shown as %s", shown_line);
    }
  g_string_append_c (dat, '\n');
}

static const char *
series_column (const Figure *f)
{
  return f->by >= 0 ? g_ptr_array_index (f->table->header, f->by)
                    : "all rows";
}

/* The block title of series @s of a line or bars. */
void
append_series_block (GString *dat, const Figure *f, guint s)
{
  append_block (dat, s, series_column (f),
                f->by >= 0 ? g_ptr_array_index (f->series.labels, s) : NULL,
                g_ptr_array_index (f->series.shown, s));
}

/* The y label of a line or bars: @label, or with --ratio-to what the
 * values are relative to. Owned. */
char *
value_ylabel (const Figure *f, const char *label)
{
  if (f->spec->ylabel != NULL)
    return g_strdup (f->spec->ylabel);
  if (f->spec->ratio_to == NULL)
    return g_strdup (label);
  guint ref = (guint) axis_find (&f->series, f->spec->ratio_to);
  const char *value = g_ptr_array_index (f->series.labels, ref);
  const char *shown = g_ptr_array_index (f->series.shown, ref);
  /* A value shown as itself ("1") is named with its column. */
  if (strcmp (value, shown) == 0)
    return g_strdup_printf ("%s, relative to %s = %s", label,
                            column_label (f->table, f->by), value);
  return g_strdup_printf ("%s, relative to %s", label, shown);
}

/* Whether the y axis starts at zero: when every value is zero or more,
 * since a bar or a throughput read against a cut axis looks larger than
 * it is; not on a log axis, nor for lines of ratios, which are read
 * against 1. */
gboolean
y_from_zero (const Figure *f)
{
  return !f->spec->logy && f->lo >= 0
         && !(f->spec->ratio_to != NULL && f->spec->kind == PLOT_LINE);
}

void
append_yrange (GString *gp, const Figure *f)
{
  /* Its decades as 1k, 10M: a cost's 1e+08 is read slower. */
  if (f->spec->logy && f->hi >= PLOT_SI_FROM)
    g_string_append (gp, "set logscale y\nset format y \"%.0s%c\"\n");
  else if (f->spec->logy)
    g_string_append (gp, "set logscale y\n");
  else if (y_from_zero (f))
    g_string_append (gp, "set yrange [0:*]\n");
}

/* Bars and stacks: a block per series (a --by value, or a part of the
 * stack), each with every category in order so gnuplot's histograms line
 * up row by row; a missing point is NaN, an empty slot. */
void
append_histogram_data (GString *dat, const Figure *f, gboolean stacked)
{
  const PlotTable *t = f->table;
  guint nb = stacked ? f->values->len : f->series.labels->len;

  for (guint b = 0; b < nb; b++)
    {
      int col = g_array_index (f->values, int, stacked ? b : 0);

      if (stacked && stack_block_is_slivers (f, b))
        {
          g_autoptr (GString) names = g_string_new ("the sum of");

          for (guint k = 0; k < f->slivers->len; k++)
            g_string_append_printf (names, " %s", (const char *) g_ptr_array_index (
                                      t->header, g_array_index (f->slivers, int, k)));
          append_block (dat, b, names->str, NULL, NULL);
        }
      else if (stacked)
        append_block (dat, b, g_ptr_array_index (t->header, col), NULL, NULL);
      else
        append_series_block (dat, f, b);
      for (guint i = 0; i < f->xs.labels->len; i++)
        {
          append_dat_string (dat, g_ptr_array_index (f->xs.shown, i));
          g_string_append_c (dat, ' ');
          if (isnan (figure_drawn (f, b, i)))
            g_string_append (dat, "NaN");
          else
            append_num (dat, figure_drawn (f, b, i));
          g_string_append_c (dat, '\n');
        }
    }
}

/* The index of bar @b's style, from which its colour (index % 7) and
 * fill (series_variant) come. A part of the time breakdown keeps its
 * style from figure to figure (DP comm is always the same), whichever
 * parts were left out for being zero. */
static guint
bar_style (const Figure *f, guint b, gboolean stacked)
{
  if (stacked && stack_block_is_slivers (f, b))
    return BREAKDOWN_N;  /* "other", after them all */
  if (stacked)
    {
      const char *name = g_ptr_array_index (
        f->table->header, g_array_index (f->values, int, b));

      for (gsize i = 0; i < G_N_ELEMENTS (breakdown_columns); i++)
        if (strcmp (name, breakdown_columns[i]) == 0)
          return (guint) i;
    }
  return b;
}

void
append_histogram_plot (GString *gp, const Figure *f, gboolean stacked)
{
  guint nb = stacked ? f->values->len : f->series.labels->len;

  append_slant (gp, &f->xs);
  g_string_append (gp, "set grid noxtics\nset xtics scale 0\n"
                   "set style data histograms\n");
  g_string_append (gp, stacked ? "set style histogram rowstacked\n"
                   "set boxwidth 0.6\n"
                   : "set style histogram clustered gap 1\n");
  g_string_append (gp, "plot ");
  for (guint b = 0; b < nb; b++)
    {
      guint k = bar_style (f, b, stacked);
      gsize style = k % G_N_ELEMENTS (series_colours) + 1;

      /* Solid borders (the style's dash type is for lines), and hatching
       * drawn thick enough to carry its colour. */
      g_string_append_printf (gp, "%sdatafile index %u using 2%s ls %zu "
                              "lw 0.8 dt 1 fs %s border lc rgb \"#333333\"",
                              b ? ", \\\n     " : "", b, b ? "" : ":xtic(1)",
                              style, series_fills[series_variant (k)]);
      if (stacked || f->by >= 0)
        {
          g_autofree char *part = stacked ? stack_part_title (f, b) : NULL;

          g_string_append (gp, " title ");
          append_gp_string (gp, stacked ? part : g_ptr_array_index (f->series.shown, b));
        }
    }
  g_string_append_c (gp, '\n');
}
