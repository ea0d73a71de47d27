/* fuzz-csv.c: the CSV reader of `trainsim plot` (output/plot-table.c) on
 * any bytes, and, on what it accepts, the steps of `trainsim plot` after
 * it: every kind of figure's script and data (plot.c) on the first
 * columns, with and without the options that change the numbers, and a
 * --where on the first cell. The
 * table may hold anything a CSV can, so the title and labels come from
 * its cells too. Seeds: tests/fuzz/corpus/csv/. */
#include "fuzz.h"

#include "base/errors.h"
#include "output/plot-private.h"   /* the header's columns */

/* The column I of TABLE, or its last one. */
static const char *
column (const PlotTable *table, guint i)
{
  return g_ptr_array_index (table->header, MIN (i, table->header->len - 1));
}

/* Writes a figure of KIND from TABLE's first columns, in the options that
 * KIND takes (plot.h): x, y, then the series (line, bars), the cell values
 * (heatmap), or the time breakdown (stack, y unset). With EXTRAS, the
 * options that change the numbers and the texts too: --logy, --ratio-to
 * and --label taken from the first row's cells, --best, --normalize,
 * --size, --font. Any failure must say why in trainsim's error domain. */
static void
script (const PlotTable *table, PlotKind kind, gboolean extras)
{
  const char *cell = table->rows->len ? plot_table_cell (table, 0, 0) : NULL;
  gboolean series = kind == PLOT_LINE || kind == PLOT_BARS;
  const char *by = series && table->header->len > 2 ? column (table, 2) : NULL;
  g_autofree char *label = cell ? g_strdup_printf ("%s=%s:%s",
                                                   column (table, 0), cell, cell)
                                : NULL;
  const char *labels[] = { label, NULL };
  PlotSpec spec = {
    .kind = kind, .figure = "fuzz.pdf",
    .x = column (table, 0),
    .y = kind == PLOT_STACK ? NULL : column (table, 1),
    .by = by,
    .z = kind == PLOT_HEATMAP ? column (table, 2) : NULL,
    .title = cell, .xlabel = cell, .ylabel = NULL,
    .logx = kind == PLOT_LINE && table->rows->len % 2, .ideal = kind == PLOT_LINE,
  };
  if (extras)
    {
      spec.ideal = FALSE;
      spec.logy = series;
      spec.ratio_to = by && table->rows->len ? plot_table_cell (table, 0, 2) : NULL;
      spec.labels = labels;
      spec.best = kind == PLOT_STACK ? NULL : "max";
      spec.normalize = kind == PLOT_STACK;
      spec.size = "3.3x2.2";
      spec.font = "8";
    }
  g_autoptr (GString) gp = g_string_new (NULL);
  g_autoptr (GString) dat = g_string_new (NULL);
  g_autoptr (GString) notes = g_string_new (NULL);
  g_autoptr (GError) error = NULL;

  if (!plot_write_script (table, &spec, gp, dat, notes, &error))
    g_assert (error != NULL && error->domain == TS_ERROR);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (PlotTable) table = NULL;
  g_autoptr (GError) error = NULL;

  fuzz_init ();
  table = plot_table_parse ("fuzz.csv", (const char *) data, size, &error);
  if (table == NULL)
    {
      g_assert (error != NULL && error->domain == TS_ERROR);
      return 0;
    }
  for (PlotKind kind = 0; kind < PLOT_N; kind++)
    {
      script (table, kind, FALSE);
      script (table, kind, TRUE);
    }
  if (table->rows->len)
    {
      g_autofree char *filter = g_strdup_printf ("%s=%s",
        (const char *) g_ptr_array_index (table->header, 0), plot_table_cell (table, 0, 0));
      const char *where[] = { filter, NULL };
      if (plot_table_where (table, where, &error))
        script (table, PLOT_LINE, FALSE);
      else
        g_assert (error != NULL && error->domain == TS_ERROR);
    }
  return 0;
}
