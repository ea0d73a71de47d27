/* plot-figure.h: what the files of `trainsim plot` share, one way down:
 * plot.c (the Figure built from the table, and the entry points) calls
 * the kinds (plot-xy.c: line and bars, plot-stack.c, plot-heatmap.c),
 * which call plot-gnuplot.c (the gnuplot text every kind writes) and the
 * model's look-ups; nothing calls back up. Not for use outside them. */
#pragma once

#include "output/plot-private.h"

/* The distinct values of a column along an axis: numeric ones in
 * increasing order, text in the order first seen (a sweep's own order). */
typedef struct {
  GPtrArray *labels;   /* owned: char *, the cells as written */
  GPtrArray *shown;    /* owned: char *, the text in the key and the tics,
                        * valid UTF-8 (a table's cells may be any bytes) */
  GArray *values;      /* owned: double, when numeric */
  gboolean numeric;
  GHashTable *index;   /* owned: key -> position + 1 */
} Axis;

/* A figure draws at most 7 x 7 series, each unlike the others (7
 * colours, each with 7 markers or fills: series_variant); more would be a
 * legend no one reads, and a --by column of 50,000 values kept gnuplot
 * busy for minutes. */
#define PLOT_MAX_SERIES 49

/* From this value on, a log axis is drawn in decades with SI prefixes
 * (1M, 10G): a million is more GPUs than any cluster has. */
#define PLOT_SI_FROM 1e6

typedef struct {
  const PlotTable *table;
  const PlotSpec *spec;
  int x, by, y;        /* columns; by -1 without --by; y -1 for a stack */
  int status;          /* the status column, or -1 */
  GArray *values;      /* owned: int, the numeric columns drawn */
  Axis xs, series;     /* series: --by values, or a heatmap's y categories */
  int *cells;          /* owned: [series][x] -> row, or -1 */
  int *failed;         /* owned: [series][x] -> where no row is ok, the first
                        * row whose status is not; or -1 (heatmap only) */
  double *drawn;       /* owned: [block][x] -> the number drawn, or NaN; a
                        * block is a series, or a part of a stack */
  double lo, hi;       /* the range of the numbers drawn */
  GArray *slivers;     /* owned: int, the parts of a stack drawn as one,
                        * the last block (stack_merge_slivers); or empty */
} Figure;

/* Terminals by extension. A PDF's size is in inches and its font in
 * points; the PNG is the same figure at 200 dpi, and the SVG at 100 (its
 * units are pixels), so one --size and --font give all three alike. The
 * terminals draw points at different sizes, hence @pointsize. */
typedef struct {
  const char *ext;
  const char *name;       /* the gnuplot terminal */
  const char *unit;       /* of its size: "in", or "" for pixels */
  double per_inch;        /* its size units per inch */
  double font_scale;      /* its font size per point */
  const char *options;    /* what follows the size */
  const char *pointsize;
} Terminal;

/* What the figure is drawn on: a terminal, and the figure's size and
 * font. The default, 5 x 3.2 in with a 10 pt font, fits a page; a paper's
 * column takes --size 3.3x2.2 --font 8. */
typedef struct {
  const Terminal *term;
  double width, height;  /* inches */
  double font;           /* points */
} Page;

/* The kinds' names, in PlotKind's order. */
extern const char *const kind_names[PLOT_N];

/* The time breakdown of report.h, the default of a stack, in its order
 * (the columns a stack draws in its fixed colours). */
#define BREAKDOWN_N 12
extern const char *const breakdown_columns[BREAKDOWN_N];

/* plot.c: the model's look-ups. */
const char *column_label (const PlotTable *table, int col);
const char *column_legend (const PlotTable *table, int col);
int axis_find (const Axis *axis, const char *s);
double axis_max (const Axis *axis);
int figure_cell (const Figure *f, guint s, guint x);
double figure_drawn (const Figure *f, guint b, guint x);
double cell_value (const Figure *f, int row, int col);
gboolean stack_block_is_slivers (const Figure *f, guint b);
char *stack_part_title (const Figure *f, guint b);

/* plot-gnuplot.c: the gnuplot text every kind shares. */

/* The line styles' colours, one per style 1 to SERIES_N_COLOURS. */
#define SERIES_N_COLOURS 7
extern const char *const series_colours[SERIES_N_COLOURS];

void append_gp_string (GString *out, const char *s);
void append_gp_tic_label (GString *out, const char *s);
char *gp_file_name (const char *name);
void append_dat_string (GString *out, const char *s);
void append_num (GString *out, double v);
void append_line_style (GString *gp, guint s);
gboolean page_parse (Page *page, const PlotSpec *spec, GError **error);
void append_preamble (GString *gp, const Figure *f, const Page *page,
                      const char *xlabel, const char *ylabel);
void append_key (GString *gp, gboolean needed, const char *title,
                 const char *where);
const char *key_place (const Page *page, const Axis *series, gboolean stacked);
void append_slant (GString *gp, const Axis *cats);
void append_category_tics (GString *gp, const char *axis, const Axis *cats);
gboolean axis_relabelled (const Axis *axis);
void append_dat_header (GString *dat, const Figure *f, const char *columns);
void append_block (GString *dat, guint s, const char *column,
                   const char *value, const char *shown);
void append_series_block (GString *dat, const Figure *f, guint s);
char *value_ylabel (const Figure *f, const char *label);
gboolean y_from_zero (const Figure *f);
void append_yrange (GString *gp, const Figure *f);
void append_histogram_data (GString *dat, const Figure *f, gboolean stacked);
void append_histogram_plot (GString *gp, const Figure *f, gboolean stacked);

/* The kinds, each writing the script and the data: plot-xy.c (line,
 * bars), plot-stack.c, plot-heatmap.c. */
gboolean write_line (const Figure *f, const Page *page, GString *gp,
                     GString *dat, GError **error);
gboolean write_bars (const Figure *f, const Page *page, GString *gp,
                     GString *dat, GError **error);
gboolean write_stack (const Figure *f, const Page *page, GString *gp,
                      GString *dat, GError **error);
gboolean write_heatmap (const Figure *f, const Page *page, GString *gp,
                        GString *dat, GError **error);
