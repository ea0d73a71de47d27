/* plot-xy.c: the line and bars kinds of `trainsim plot`. */
#include "output/plot-figure.h"
#include "base/errors.h"

#include <math.h>
#include <string.h>

gboolean
write_line (const Figure *f, const Page *page, GString *gp, GString *dat,
            GError **error)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  int y = g_array_index (f->values, int, 0);
  guint nx = f->xs.labels->len, ns = f->series.labels->len;

  if (!f->xs.numeric)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "--x %s: a line needs numbers along x, and %s has text "
                   "there; --kind bars takes categories", spec->x, t->name);
      return FALSE;
    }
  if ((spec->logx || spec->ideal)
      && g_array_index (f->xs.values, double, 0) <= 0)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s needs x above zero, and %s has x = %s",
                   spec->logx ? "--logx" : "--ideal", t->name,
                   (const char *) g_ptr_array_index (f->xs.labels, 0));
      return FALSE;
    }

  g_autofree char *columns = g_strdup_printf (
    "%s %s%s", (const char *) g_ptr_array_index (t->header, f->x),
    (const char *) g_ptr_array_index (t->header, y),
    spec->ideal ? " ideal (linear scaling from the first point)" : "");
  append_dat_header (dat, f, columns);
  for (guint s = 0; s < ns; s++)
    {
      double x0 = NAN, y0 = NAN;

      append_series_block (dat, f, s);
      for (guint i = 0; i < nx; i++)
        {
          int r = figure_cell (f, s, i);
          double yv = figure_drawn (f, s, i);

          if (isnan (yv))
            continue;
          double xv = cell_value (f, r, f->x);
          if (isnan (x0))
            {
              x0 = xv;
              y0 = yv;
            }
          append_num (dat, xv);
          g_string_append_c (dat, ' ');
          append_num (dat, yv);
          if (spec->ideal)
            {
              g_string_append_c (dat, ' ');
              append_num (dat, y0 * xv / x0);
            }
          g_string_append_c (dat, '\n');
        }
      /* A series --ratio-to left without points still takes its block:
       * gnuplot does not count a block with no data line in `index`. */
      if (isnan (x0))
        g_string_append (dat, "NaN NaN\n");
    }

  g_autofree char *ylabel = value_ylabel (f, column_label (t, y));
  append_preamble (gp, f, page,
                   spec->xlabel ? spec->xlabel : column_label (t, f->x),
                   ylabel);
  append_key (gp, f->by >= 0 || spec->ideal,
              f->by >= 0 ? column_label (t, f->by) : NULL,
              key_place (page, &f->series, FALSE));
  /* GPU counts double, so a log x axis is base 2 with the values as its
   * tics; parameters or tokens (a million and more) span decades, base 10
   * with SI tics (1G, 10G), since 1.07374e+09 at each power of two
   * overprinted its neighbours. */
  gboolean decades = spec->logx && axis_max (&f->xs) >= PLOT_SI_FROM;
  if (decades)
    g_string_append (gp, "set logscale x 10\nset format x \"%.0s%c\"\n");
  else if (spec->logx)
    g_string_append (gp, "set logscale x 2\n");
  /* A few x values (GPU counts, NICs per node) are the tics themselves;
   * gnuplot's own would put 1.5 NICs on the axis. A value --label names
   * is shown by its text. */
  gboolean relabelled = axis_relabelled (&f->xs);
  if ((nx <= 10 && !decades) || relabelled)
    {
      g_string_append (gp, "set xtics (");
      for (guint i = 0; i < nx; i++)
        {
          g_string_append (gp, i ? ", " : "");
          if (relabelled)
            {
              append_gp_tic_label (gp, g_ptr_array_index (f->xs.shown, i));
              g_string_append_c (gp, ' ');
            }
          append_num (gp, g_array_index (f->xs.values, double, i));
        }
      g_string_append (gp, ")\n");
    }
  else if (spec->logx && !decades)
    {
      /* More GPU counts than fit as tics: gnuplot's own base-2 tics put
       * 4096 and 16384 on each other; at most seven, a power of two of
       * powers of two apart, from the first value. */
      double lo = g_array_index (f->xs.values, double, 0), hi = axis_max (&f->xs);
      int step = MAX ((int) ceil (log2 (hi / lo) / 6), 1);

      g_string_append (gp, "set xtics (");
      for (double v = lo; v <= hi * (1 + 1e-9); v *= exp2 (step))
        {
          g_string_append (gp, v > lo ? ", " : "");
          append_num (gp, v);
        }
      g_string_append (gp, ")\n");
    }
  /* Room around the first and last points, so no marker sits on a border;
   * a log y axis already ends at the decades around them. */
  g_string_append_printf (gp, "set offsets graph 0.05, graph 0.05, %s, %s\n",
                          spec->logy ? "0" : "graph 0.05",
                          spec->logy || y_from_zero (f) ? "0" : "graph 0.05");
  append_yrange (gp, f);
  g_string_append (gp, "plot ");
  for (guint s = 0; s < ns; s++)
    {
      g_string_append_printf (gp, "%sdatafile index %u using 1:2 with "
                              "linespoints", s ? ", \\\n     " : "", s);
      append_line_style (gp, s);
      if (f->by >= 0)
        {
          g_string_append (gp, " title ");
          append_gp_string (gp, g_ptr_array_index (f->series.shown, s));
        }
    }
  if (spec->ideal)
    {
      for (guint s = 0; s < ns; s++)
        g_string_append_printf (gp, ", \\\n     datafile index %u using 1:3 "
                                "with lines ls %zu lw 1 dt 3", s,
                                s % G_N_ELEMENTS (series_colours) + 1);
      /* One key entry for all the dotted lines. */
      g_string_append (gp, ", \\\n     NaN with lines lc rgb \"#555555\" lw 1 "
                       "dt 3 title \"ideal scaling\"");
    }
  g_string_append_c (gp, '\n');
  return TRUE;
}


gboolean
write_bars (const Figure *f, const Page *page, GString *gp, GString *dat,
            GError **error G_GNUC_UNUSED)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  int y = g_array_index (f->values, int, 0);
  g_autofree char *columns = g_strdup_printf (
    "%s %s", (const char *) g_ptr_array_index (t->header, f->x),
    (const char *) g_ptr_array_index (t->header, y));

  append_dat_header (dat, f, columns);
  append_histogram_data (dat, f, FALSE);
  g_autofree char *ylabel = value_ylabel (f, column_label (t, y));
  append_preamble (gp, f, page,
                   spec->xlabel ? spec->xlabel : column_label (t, f->x),
                   ylabel);
  append_key (gp, f->by >= 0, f->by >= 0 ? column_label (t, f->by) : NULL,
              key_place (page, &f->series, FALSE));
  append_yrange (gp, f);
  append_histogram_plot (gp, f, FALSE);
  return TRUE;
}
