/* cmd-plot.c: `trainsim plot`: a sweep's CSV as a paper figure, through a
 * gnuplot script and data file that stay beside it to be restyled. */
#include "cli/cli.h"
#include "output/report.h"
#include "base/errors.h"
#include "base/input.h"
#include "base/outfile.h"
#include "output/plot.h"
#include <stdio.h>

/* Prints each line of @notes as "trainsim plot: LINE" and empties it:
 * notes say what was left out of a figure, so they go out even when a
 * later step fails. */
static void
flush_notes (GString *notes)
{
  g_auto (GStrv) lines = g_strsplit (notes->str, "\n", -1);

  for (gsize i = 0; lines[i] != NULL; i++)
    if (*lines[i] != '\0')
      cli_printerr ("trainsim plot: %s", lines[i]);
  g_string_truncate (notes, 0);
}

int
cli_plot (int argc, char **argv)
{
  g_autofree char *x = NULL, *y = NULL, *by = NULL, *z = NULL;
  g_autofree char *kind_name = NULL, *output = NULL, *title = NULL;
  g_autofree char *xlabel = NULL, *ylabel = NULL, *ratio_to = NULL;
  g_autofree char *best = NULL, *size = NULL, *font = NULL;
  g_auto (GStrv) where = NULL, labels = NULL;
  gboolean logx = FALSE, logy = FALSE, ideal = FALSE, normalize = FALSE;
  /* FILENAME for the text options too: the bytes as typed, with no
   * conversion from the locale's charset, so "µs" in a label works in the
   * C locale. */
  GOptionEntry entries[] = {
    { "x", 0, 0, G_OPTION_ARG_FILENAME, &x,
      "The column along x, e.g. gpus", "COL" },
    { "y", 0, 0, G_OPTION_ARG_FILENAME, &y,
      "The column along y (stack: a comma list, default the time breakdown)",
      "COL" },
    { "by", 0, 0, G_OPTION_ARG_FILENAME, &by,
      "A line or bar per value of this column, e.g. nics_per_node", "COL" },
    { "z", 0, 0, G_OPTION_ARG_FILENAME, &z,
      "The colour of a heatmap's cells", "COL" },
    { "kind", 'k', 0, G_OPTION_ARG_STRING, &kind_name,
      "line (default), bars, heatmap or stack", "KIND" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "The figure: .pdf, .svg or .png (required)", "FIG" },
    { "title", 0, 0, G_OPTION_ARG_FILENAME, &title,
      "A title above the plot (default none: papers use captions)", "T" },
    { "xlabel", 0, 0, G_OPTION_ARG_FILENAME, &xlabel,
      "The x axis label (default from the column, with its unit)", "L" },
    { "ylabel", 0, 0, G_OPTION_ARG_FILENAME, &ylabel,
      "The y axis label (default from the column, with its unit)", "L" },
    { "logx", 0, 0, G_OPTION_ARG_NONE, &logx,
      "A log x axis: base 2 (GPU counts), 10 from a million", NULL },
    { "logy", 0, 0, G_OPTION_ARG_NONE, &logy,
      "A base-10 logarithmic y axis (line, bars)", NULL },
    { "ideal", 0, 0, G_OPTION_ARG_NONE, &ideal,
      "Add linear scaling from each line's first point, dotted", NULL },
    { "where", 'w', 0, G_OPTION_ARG_FILENAME_ARRAY, &where,
      "Keep only the rows where COL is VALUE (repeatable)", "COL=VALUE" },
    { "label", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &labels,
      "Show VALUE of COL (x or --by) as TEXT (repeatable)",
      "COL=VALUE:TEXT" },
    { "ratio-to", 0, 0, G_OPTION_ARG_FILENAME, &ratio_to,
      "Draw each series over the --by series VALUE at equal x", "VALUE" },
    { "normalize", 0, 0, G_OPTION_ARG_NONE, &normalize,
      "Each stack as fractions of its total (stack)", NULL },
    { "best", 0, 0, G_OPTION_ARG_STRING, &best,
      "Of the rows on one point, draw the max or min y (heatmap: z)",
      "max|min" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size,
      "The figure's size in inches (default 5x3.2; a column: 3.3x2.2)",
      "WxH" },
    { "font", 0, 0, G_OPTION_ARG_STRING, &font,
      "The font size in points (default 10)", "PT" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("CSV");
  g_option_context_set_summary (context,
    "Draws a figure from a CSV with a header line, such as the output of\n"
    "trainsim sweep. Rows whose status column is not ok are skipped (a\n"
    "heatmap marks their cells). Beside FIG it writes FIG.gp, a gnuplot\n"
    "script to restyle, and FIG.dat, its data (a block per series), then\n"
    "runs gnuplot FIG.gp.");
  g_option_context_set_description (context,
    "Kinds:\n"
    "  line     y against x, a line per --by value; --logx, --logy,\n"
    "           --ideal, --ratio-to\n"
    "  bars     x values as groups, a bar per --by value; --logy,\n"
    "           --ratio-to\n"
    "  heatmap  x and y as categories, cells coloured and labelled by --z;\n"
    "           cells of only infeasible or out-of-memory rows are grey\n"
    "  stack    a bar per x of the time breakdown (breakdown_s.*), or of\n"
    "           the columns of --y A,B,C, parts under 3 % of every\n"
    "           bar as one, other; --normalize\n"
    "A column is named in full or by its last part (nics_per_node);\n"
    "aggregate_pflops (megatron_tflops_per_gpu x gpus / 1000) is derived.\n"
    "A topology named in a topology column is shown by its description,\n"
    "less what all of them share; --label overrides it.\n"
    "\n"
    "Example:\n"
    "  trainsim plot results.csv --x gpus --y megatron_tflops_per_gpu \\\n"
    "      --by nics_per_node -o fig.pdf\n"
    "\n"
    "Exit status: 0 success; 1 gnuplot is missing or failed, or a file\n"
    "could not be written (FIG.gp and FIG.dat are kept); 2 bad usage or\n"
    "bad input: no CSV, an unknown column, kind or figure type, no rows,\n"
    "a --label or --ratio-to value not in the data, a malformed --size or\n"
    "--font, an option the kind does not take, --logy on a y of zero or\n"
    "less.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc != 2)
    {
      cli_printerr ("trainsim plot: expected one CSV file, got %d", argc - 1);
      cli_try_help ("plot");
      return 2;
    }
  if (output == NULL)
    {
      cli_printerr ("trainsim plot: name the figure with -o FIG.pdf "
                    "(or .svg, .png)");
      cli_try_help ("plot");
      return 2;
    }
  int kind = PLOT_LINE;
  if (kind_name != NULL && (kind = plot_kind_parse (kind_name)) < 0)
    {
      cli_printerr ("trainsim plot: unknown kind '%s' (valid: %s)", kind_name,
                    plot_kind_names ());
      return 2;
    }

  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!input_read (argv[1], &text, &len, &error))
    {
      /* A CSV that is not there is bad input, not an I/O failure; one
       * too large or with a NUL byte in it too. */
      cli_fail (error);
      return 2;
    }
  g_autoptr (PlotTable) table = plot_table_parse (argv[1], text, len, &error);
  if (table == NULL)
    return cli_fail (error);

  g_autoptr (GString) notes = g_string_new (NULL);
  g_autoptr (GString) gp = g_string_new (NULL);
  g_autoptr (GString) dat = g_string_new (NULL);
  PlotSpec spec = {
    .kind = (PlotKind) kind, .figure = output, .x = x, .y = y, .by = by,
    .z = z, .title = title, .xlabel = xlabel, .ylabel = ylabel,
    .logx = logx, .logy = logy, .ideal = ideal,
    .labels = (const char *const *) labels, .ratio_to = ratio_to,
    .normalize = normalize, .best = best, .size = size, .font = font,
  };
  gboolean ok = plot_table_where (table, (const char *const *) where, &error)
                && plot_write_script (table, &spec, gp, dat, notes, &error);
  flush_notes (notes);
  if (!ok)
    return cli_fail (error);

  g_autofree char *gp_path = plot_sibling_path (output, ".gp");
  g_autofree char *dat_path = plot_sibling_path (output, ".dat");
  const char *written[] = { output, gp_path, dat_path };
  for (guint i = 0; i < G_N_ELEMENTS (written); i++)
    if (cli_output_is_input ("plot", written[i], argv[1]))
      return 2;
  /* Atomically (a temporary file renamed), as the figure will be. */
  if (!outfile_write (dat_path, dat->str, dat->len, &error)
      || !outfile_write (gp_path, gp->str, gp->len, &error)
      || !plot_run_gnuplot (output, notes, &error))
    {
      flush_notes (notes);
      return cli_fail (error);
    }
  flush_notes (notes);
  return 0;
}
