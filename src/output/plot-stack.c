/* plot-stack.c: the stack kind of `trainsim plot`: a bar per x of the
 * time breakdown, or of --y's columns, optionally normalized. */
#include "output/plot-figure.h"

#include <math.h>
#include <string.h>

/* The y label of a stack: what its parts have in common, or with
 * --normalize, of what they are the fractions. */
static const char *
stack_ylabel (const Figure *f)
{
  const char *common[][3] = {
    { "breakdown_s.", "time per iteration (s)",
      "fraction of the iteration time" },
    { "memory.", "memory per GPU (GiB)", "fraction of the memory per GPU" },
  };
  gboolean normalize = f->spec->normalize;

  for (gsize k = 0; k < G_N_ELEMENTS (common); k++)
    {
      gboolean all = TRUE;

      for (guint i = 0; i < f->values->len && all; i++)
        all = g_str_has_prefix (g_ptr_array_index (
                f->table->header, g_array_index (f->values, int, i)),
                common[k][0]);
      if (all)
        return common[k][normalize ? 2 : 1];
    }
  if (normalize)
    return "fraction of the total";
  return f->values->len == 1
         ? column_label (f->table, g_array_index (f->values, int, 0)) : NULL;
}

gboolean
write_stack (const Figure *f, const Page *page, GString *gp, GString *dat,
             GError **error G_GNUC_UNUSED)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  g_autoptr (GString) columns = g_string_new (NULL);

  g_string_append_printf (columns, "%s value (the block's column)",
                          (const char *) g_ptr_array_index (t->header, f->x));
  append_dat_header (dat, f, columns->str);
  append_histogram_data (dat, f, TRUE);
  append_preamble (gp, f, page,
                   spec->xlabel ? spec->xlabel : column_label (t, f->x),
                   spec->ylabel ? spec->ylabel : stack_ylabel (f));
  append_key (gp, TRUE, NULL, key_place (page, &f->series, TRUE));
  if (spec->normalize)
    g_string_append (gp, "set yrange [0:1]\n");
  else
    append_yrange (gp, f);
  append_histogram_plot (gp, f, TRUE);
  return TRUE;
}
