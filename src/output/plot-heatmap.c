/* plot-heatmap.c: the heatmap kind of `trainsim plot`: x and y as
 * categories, cells coloured and labelled by --z, cells where no row is
 * ok marked by their status. */
#include "output/plot-figure.h"

#include <math.h>
#include <string.h>

/* How a heatmap marks a cell where no row is ok, by the status of its
 * rows: a grey of its own, a word in the cell, and the key's entry for
 * the word. Another status is shown by its own name, in OTHER_GREY. */
static const struct {
  const char *status, *word, *meaning, *grey;
} status_marks[] = {
  { "oom", "OOM", "OOM: out of memory", "#bdbdbd" },
  { "infeasible", "n/a", "n/a: infeasible plan", "#e0e0e0" },
};
#define OTHER_GREY "#9e9e9e"

/* The plot elements of the cells marked with @status, block @index. */
static void
append_status_cells (GString *gp, guint index, const char *status)
{
  const char *word = *status ? status : "(empty)", *meaning = word;
  const char *grey = OTHER_GREY;

  for (gsize k = 0; k < G_N_ELEMENTS (status_marks); k++)
    if (strcmp (status, status_marks[k].status) == 0)
      {
        word = status_marks[k].word;
        meaning = status_marks[k].meaning;
        grey = status_marks[k].grey;
      }
  g_string_append_printf (gp, ", \\\n     datafile index %u using 1:2:(0.5):"
                          "(0.5) with boxxyerror fc rgb \"%s\" fs solid 1 "
                          "noborder title ", index, grey);
  append_gp_string (gp, meaning);
  g_string_append_printf (gp, ", \\\n     datafile index %u using 1:2:(",
                          index);
  append_gp_string (gp, word);
  g_string_append (gp, ") with labels tc rgb \"#333333\"");
}

gboolean
write_heatmap (const Figure *f, const Page *page, GString *gp,
               GString *dat, GError **error G_GNUC_UNUSED)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  int z = g_array_index (f->values, int, 0);
  guint nx = f->xs.labels->len, ny = f->series.labels->len;
  const char *xcol = g_ptr_array_index (t->header, f->x);
  const char *ycol = g_ptr_array_index (t->header, f->y);
  g_autofree char *columns = g_strdup_printf (
    "x_index y_index %s %s %s; then a block per status of the cells where "
    "no row is ok: x_index y_index %s %s",
    (const char *) g_ptr_array_index (t->header, z), xcol, ycol, xcol, ycol);
  /* The statuses of the marked cells, in the order first met. */
  g_autoptr (GPtrArray) statuses = g_ptr_array_new ();

  for (gsize k = 0; k < (gsize) nx * ny; k++)
    {
      const char *st;
      guint j;

      if (f->failed[k] < 0)
        continue;
      st = plot_table_cell (t, (guint) f->failed[k], f->status);
      for (j = 0; j < statuses->len; j++)
        if (strcmp (g_ptr_array_index (statuses, j), st) == 0)
          break;
      if (j == statuses->len)
        g_ptr_array_add (statuses, (gpointer) st);
    }

  append_dat_header (dat, f, columns);
  /* One block of the cells with a value: none is empty (a figure has a
   * row to draw), so the status blocks after it keep their index. */
  append_block (dat, 0, "the cells with a value", NULL, NULL);
  for (guint s = 0; s < ny; s++)
    for (guint i = 0; i < nx; i++)
      {
        if (figure_cell (f, s, i) < 0)
          continue;  /* an empty cell stays white */
        g_string_append_printf (dat, "%u %u ", i, s);
        append_num (dat, figure_drawn (f, s, i));
        g_string_append_c (dat, ' ');
        append_dat_string (dat, g_ptr_array_index (f->xs.shown, i));
        g_string_append_c (dat, ' ');
        append_dat_string (dat, g_ptr_array_index (f->series.shown, s));
        g_string_append_c (dat, '\n');
      }
  for (guint j = 0; j < statuses->len; j++)
    {
      append_block (dat, j + 1, "status", g_ptr_array_index (statuses, j),
                    NULL);
      for (guint s = 0; s < ny; s++)
        for (guint i = 0; i < nx; i++)
          {
            int r = f->failed[s * nx + i];

            if (r < 0 || strcmp (plot_table_cell (t, (guint) r, f->status),
                                 g_ptr_array_index (statuses, j)) != 0)
              continue;
            g_string_append_printf (dat, "%u %u ", i, s);
            append_dat_string (dat, g_ptr_array_index (f->xs.shown, i));
            g_string_append_c (dat, ' ');
            append_dat_string (dat, g_ptr_array_index (f->series.shown, s));
            g_string_append_c (dat, '\n');
          }
    }

  append_preamble (gp, f, page,
                   spec->xlabel ? spec->xlabel : column_label (t, f->x),
                   spec->ylabel ? spec->ylabel : column_label (t, f->y));
  /* The key says what the grey cells mean; the colour box, the rest.
   * Above the plot: below it, it sat on the x label. */
  append_key (gp, statuses->len > 0, NULL, "outside top center horizontal");
  g_string_append_printf (gp, "unset grid\nset tics scale 0\n"
                          "set xrange [-0.5:%u.5]\nset yrange [-0.5:%u.5]\n",
                          nx - 1, ny - 1);
  append_category_tics (gp, "x", &f->xs);
  append_slant (gp, &f->xs);
  append_category_tics (gp, "y", &f->series);
  g_string_append (gp, "set cblabel ");
  append_gp_string (gp, column_label (t, z));
  /* ColorBrewer's YlGnBu: ordered light to dark, readable in greyscale. */
  g_string_append (gp, "\nset palette defined (0 \"#ffffd9\", "
                   "0.25 \"#c7e9b4\", 0.5 \"#41b6c4\", 0.75 \"#225ea8\", "
                   "1 \"#081d58\")\n");
  /* The values in the cells: as many decimals as the largest needs for
   * three significant digits, white on the dark upper part of the palette. */
  double big = MAX (fabs (f->lo), fabs (f->hi));
  const char *fmt = big >= 100 ? "%.0f" : big >= 10 ? "%.1f"
                    : big >= 1 ? "%.2f" : "%.3g";
  g_string_append (gp, "plot datafile index 0 using 1:2:(0.5):(0.5):3 with "
                   "boxxyerror fc palette fs solid 1 noborder, \\\n     "
                   "datafile index 0 using 1:2:(sprintf(\"");
  g_string_append_printf (gp, "%s\", $3)):($3 > ", fmt);
  append_num (gp, f->lo + 0.55 * (f->hi - f->lo));
  g_string_append (gp, " ? 0xffffff : 0x000000) with labels tc rgb variable");
  for (guint j = 0; j < statuses->len; j++)
    append_status_cells (gp, j + 1, g_ptr_array_index (statuses, j));
  g_string_append_c (gp, '\n');
  return TRUE;
}
