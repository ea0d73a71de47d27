/* plot.h: a sweep's CSV as a gnuplot figure.
 *
 * The figure is made in two steps so that a paper author can restyle it
 * without trainsim: plot_write_script() turns the rows into a gnuplot
 * script (FIG.gp) and its data (FIG.dat), and plot_run_gnuplot() runs the
 * script. Both texts depend only on the CSV's bytes, the options and the
 * descriptions of the topology files the CSV names, never on the time, the
 * locale or a path outside the figure's directory, so the same CSV gives
 * the same bytes. */
#pragma once

#include <glib.h>

/* The kinds of figure, in the order of plot_kind_names(). */
typedef enum {
  PLOT_LINE,     /* y against a numeric x, a line per --by value */
  PLOT_BARS,     /* grouped bars: x as groups, a bar per --by value */
  PLOT_HEATMAP,  /* x and y as categories, the cells coloured by z */
  PLOT_STACK,    /* stacked bars of the time breakdown per x */
  PLOT_N
} PlotKind;

/* The kind called @name ("line", "bars", "heatmap" or "stack"), or -1. */
int plot_kind_parse (const char *name);

/* The known names, for an error message: "line, bars, heatmap or stack". */
const char *plot_kind_names (void);

/* A CSV file with a header line: RFC 4180 fields (quoted fields may hold
 * commas, quotes doubled, and line breaks), LF or CRLF line ends. */
typedef struct _PlotTable PlotTable;

/* Parses @text (@len bytes) read from the file @name (used in messages).
 * A row whose field count differs from the header's is an error naming
 * @name:LINE. When the header has megatron_tflops_per_gpu and gpus but no
 * aggregate_pflops, that column is derived (their product / 1000), so the
 * aggregate throughput of a scaling study can be plotted directly.
 * Fails with TS_ERROR_INPUT. */
PlotTable *plot_table_parse (const char *name, const char *text, gsize len,
                             GError **error);
void plot_table_free (PlotTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PlotTable, plot_table_free)

/* Keeps the rows where each COL=VALUE of @where holds (the cell equals
 * VALUE as text, or as a number: "64" matches "64.0"). Fails with
 * TS_ERROR_USAGE on a malformed filter or an unknown column, and with
 * TS_ERROR_INPUT when a filter leaves no row (naming the values it could
 * have matched). */
gboolean plot_table_where (PlotTable *table, const char *const *where,
                           GError **error);

/* What to draw. Column names are matched exactly, or by a unique dotted
 * suffix: "nics_per_node" names topology.inter_node.nics_per_node. */
typedef struct {
  PlotKind kind;
  const char *figure;  /* FIG.pdf, FIG.svg or FIG.png */
  const char *x;
  const char *y;       /* PLOT_STACK: a comma list, NULL for the breakdown */
  const char *by;      /* NULL: one series */
  const char *z;       /* PLOT_HEATMAP only: the cell values */
  const char *title, *xlabel, *ylabel;  /* NULL: none, or from the columns */
  gboolean logx;       /* PLOT_LINE only: a base-2 log x axis */
  gboolean logy;       /* PLOT_LINE and PLOT_BARS: a base-10 log y axis */
  gboolean ideal;      /* PLOT_LINE only: linear scaling from the first point */
  /* "COL=VALUE:TEXT": TEXT for VALUE of an axis column (x or the series)
   * in the key and the tics; NULL-terminated, or NULL. */
  const char *const *labels;
  const char *ratio_to;  /* with --by: y over that series' y at equal x */
  gboolean normalize;  /* PLOT_STACK only: each bar's parts as fractions */
  const char *best;    /* "max" or "min": of a point's rows, the one with
                        * the highest or lowest value; NULL: the first */
  const char *size;    /* "WxH" in inches; NULL: 5x3.2 */
  const char *font;    /* points; NULL: 10 */
} PlotSpec;

/* Writes the gnuplot script into @gp and its data into @dat, for the rows
 * of @table. The script reads the data file by its base name and writes
 * the figure by its base name, so it runs from the figure's directory.
 * Rows whose `status` column (when the header has one) is not "ok" (a
 * sweep's infeasible and out-of-memory points) are not drawn, with a line
 * in @notes counting them per status; a heatmap marks their cells. Rows
 * with an empty cell in a plotted column, and rows that fall on a point
 * an earlier row holds, are left out with a line in @notes.
 * A series or category whose column is `topology` and whose value names
 * a topology file (config_topology_description, found from the CSV's
 * directory) is shown by that file's description, so the texts depend on
 * those files too.
 * Fails with TS_ERROR_USAGE on options that do not fit together (an
 * unknown extension, --z without heatmap, a malformed --size...), an
 * unknown column (the message lists the known ones) or a --label or
 * --ratio-to value the data lacks, and with TS_ERROR_INPUT on a cell that
 * is not a number where one is needed, a value --logy or --normalize
 * cannot draw, or no row left to plot. */
gboolean plot_write_script (const PlotTable *table, const PlotSpec *spec,
                            GString *gp, GString *dat, GString *notes,
                            GError **error);

/* The path of the file beside @figure with its extension replaced by
 * @ext (".gp", ".dat"). */
char *plot_sibling_path (const char *figure, const char *ext);

/* Runs `gnuplot FIG.gp` in the figure's directory, with the figure going
 * to a temporary file renamed over @figure once gnuplot succeeds: a failed
 * run leaves no partial figure. What gnuplot prints on success goes to
 * @notes. Fails with TS_ERROR_IO when gnuplot is not installed or fails. */
gboolean plot_run_gnuplot (const char *figure, GString *notes,
                           GError **error);
