/* plot-table.c: the CSV that `trainsim plot` draws from: RFC 4180
 * parsing into a PlotTable, column look-ups, and the --where filter. */
#include "output/plot-private.h"
#include "base/errors.h"
#include "base/units.h"

#include <string.h>

/* ------------------------------------------------------------------ table */

static void
plot_row_free (gpointer p)
{
  PlotRow *row = p;

  g_ptr_array_unref (row->cells);
  g_free (row);
}

void
plot_table_free (PlotTable *table)
{
  if (table == NULL)
    return;
  g_free (table->name);
  g_clear_pointer (&table->header, g_ptr_array_unref);  /* NULL when empty */
  g_ptr_array_unref (table->rows);
  g_free (table);
}

const char *
plot_table_cell (const PlotTable *table, guint row, int col)
{
  const PlotRow *r = g_ptr_array_index (table->rows, row);

  return g_ptr_array_index (r->cells, col);
}

guint
plot_table_line (const PlotTable *table, guint row)
{
  return ((const PlotRow *) g_ptr_array_index (table->rows, row))->line;
}

gboolean
plot_cell_number (const char *s, double *v)
{
  /* Blanks around the number, as in a hand-written "64 , 128", are let
   * pass; hexadecimal, inf and nan are not numbers in a figure any more
   * than in an input (units_number). */
  while (*s == ' ' || *s == '\t')
    s++;
  gsize n = strlen (s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    n--;
  g_autofree char *number = g_strndup (s, n);
  return units_number (number, v);
}

/* One RFC 4180 record from @text at *@pos: its fields into @fields, the
 * line count advanced past any line break inside quotes and the record's
 * end. */
static gboolean
parse_record (const char *name, const char *text, gsize len, gsize *pos,
              guint *line, GPtrArray *fields, GError **error)
{
  gsize i = *pos;
  g_autoptr (GString) field = g_string_new (NULL);

  for (;;)
    {
      g_string_truncate (field, 0);
      if (i < len && text[i] == '"')
        {
          guint opened = *line;

          for (i++;; i++)
            {
              if (i >= len)
                {
                  g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                               "%s:%u: a quoted field is not closed", name,
                               opened);
                  return FALSE;
                }
              if (text[i] == '"' && i + 1 < len && text[i + 1] == '"')
                i++;
              else if (text[i] == '"')
                break;
              else if (text[i] == '\n')
                (*line)++;
              g_string_append_c (field, text[i]);
            }
          i++;
          if (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                           "%s:%u: text after the closing quote of a field "
                           "(a quote inside a field is written \"\")", name,
                           *line);
              return FALSE;
            }
        }
      else
        while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          g_string_append_c (field, text[i++]);
      g_ptr_array_add (fields, g_strdup (field->str));
      if (i < len && text[i] == ',')
        {
          i++;
          continue;
        }
      if (i < len && text[i] == '\r')
        i++;
      if (i < len && text[i] == '\n')
        i++;
      (*line)++;
      *pos = i;
      return TRUE;
    }
}

/* The throughput of the whole cluster, the y of a strong-scaling figure. */
static void
derive_aggregate_pflops (PlotTable *table)
{
  int tflops = -1, gpus = -1;

  for (guint c = 0; c < table->header->len; c++)
    {
      const char *h = g_ptr_array_index (table->header, c);

      if (strcmp (h, "aggregate_pflops") == 0)
        return;
      if (strcmp (h, "megatron_tflops_per_gpu") == 0)
        tflops = (int) c;
      else if (strcmp (h, "gpus") == 0)
        gpus = (int) c;
    }
  if (tflops < 0 || gpus < 0)
    return;
  g_ptr_array_add (table->header, g_strdup ("aggregate_pflops"));
  for (guint r = 0; r < table->rows->len; r++)
    {
      PlotRow *row = g_ptr_array_index (table->rows, r);
      double t, g;
      char buf[G_ASCII_DTOSTR_BUF_SIZE];

      if (plot_cell_number (g_ptr_array_index (row->cells, tflops), &t)
          && plot_cell_number (g_ptr_array_index (row->cells, gpus), &g))
        g_ptr_array_add (row->cells,
                         g_strdup (g_ascii_formatd (buf, sizeof buf, "%.10g",
                                                    t * g / 1000)));
      else
        g_ptr_array_add (row->cells, g_strdup (""));
    }
}

PlotTable *
plot_table_parse (const char *name, const char *text, gsize len,
                  GError **error)
{
  g_return_val_if_fail (name != NULL && text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autoptr (PlotTable) table = g_new0 (PlotTable, 1);
  table->name = g_strdup (name);
  table->rows = g_ptr_array_new_with_free_func (plot_row_free);
  gsize pos = 0;
  guint line = 1;

  /* Spreadsheets export UTF-8 with a byte-order mark. */
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    pos = 3;
  while (pos < len)
    {
      guint start = line;
      g_autoptr (GPtrArray) fields = g_ptr_array_new_with_free_func (g_free);

      /* A comment line before the header: a sweep's first line says
       * which sweep wrote the rows (sweep.c, append_identity). */
      if (table->header == NULL && text[pos] == '#')
        {
          const char *nl = memchr (text + pos, '\n', len - pos);
          pos = nl != NULL ? (gsize) (nl - text) + 1 : len;
          line++;
          continue;
        }

      if (!parse_record (name, text, len, &pos, &line, fields, error))
        return NULL;
      if (fields->len == 1 && *(const char *) fields->pdata[0] == '\0')
        continue;  /* a blank line */
      if (table->header == NULL)
        {
          table->header = g_steal_pointer (&fields);
          continue;
        }
      if (fields->len != table->header->len)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                       "%s:%u: %u fields, but the header has %u", name, start,
                       fields->len, table->header->len);
          return NULL;
        }
      PlotRow *row = g_new (PlotRow, 1);
      row->cells = g_steal_pointer (&fields);
      row->line = start;
      g_ptr_array_add (table->rows, row);
    }
  if (table->header == NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s: empty, expected a CSV header line (such as a "
                   "sweep's output)", name);
      return NULL;
    }
  derive_aggregate_pflops (table);
  return g_steal_pointer (&table);
}

/* ---------------------------------------------------------------- columns */

int
plot_table_find (const PlotTable *table, const char *name)
{
  int found = -1;
  gsize n = strlen (name);

  for (guint c = 0; c < table->header->len; c++)
    if (strcmp (g_ptr_array_index (table->header, c), name) == 0)
      return (int) c;
  for (guint c = 0; c < table->header->len; c++)
    {
      const char *h = g_ptr_array_index (table->header, c);
      gsize hn = strlen (h);

      if (hn > n && h[hn - n - 1] == '.' && strcmp (h + hn - n, name) == 0)
        {
          if (found >= 0)
            return -2;
          found = (int) c;
        }
    }
  return found;
}

char *
plot_table_columns (const PlotTable *table)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint c = 0; c < table->header->len; c++)
    g_string_append_printf (s, "%s%s", c ? ", " : "",
                            (const char *) g_ptr_array_index (table->header,
                                                              c));
  return g_string_free (g_steal_pointer (&s), FALSE);
}

gboolean
plot_table_resolve (const PlotTable *table, const char *name,
                    const char *option, int *col, GError **error)
{
  *col = plot_table_find (table, name);
  if (*col >= 0)
    return TRUE;
  g_autofree char *list = plot_table_columns (table);
  if (*col == -2)
    g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                 "%s '%s' ends more than one column of %s: name it in full "
                 "(columns: %s)", option, name, table->name, list);
  else
    g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                 "%s: %s has no column '%s' (columns: %s)", option,
                 table->name, name, list);
  return FALSE;
}

/* ---------------------------------------------------------------- filters */

/* Keeps the rows whose @keep is set, in one pass: a sweep can have many
 * rows, and removing them one by one would be quadratic. */
static void
keep_rows (PlotTable *table, const gboolean *keep)
{
  GPtrArray *old = table->rows;

  table->rows = g_ptr_array_new_full (old->len, plot_row_free);
  g_ptr_array_set_free_func (old, NULL);
  for (guint r = 0; r < old->len; r++)
    if (keep[r])
      g_ptr_array_add (table->rows, old->pdata[r]);
    else
      plot_row_free (old->pdata[r]);
  g_ptr_array_unref (old);
}

int
plot_table_status (const PlotTable *table)
{
  for (guint c = 0; c < table->header->len; c++)
    if (strcmp (g_ptr_array_index (table->header, c), "status") == 0)
      return (int) c;
  return -1;
}

/* TRUE when the cell @s matches the filter value @want. */
static gboolean
cell_matches (const char *s, const char *want)
{
  double a, b;

  return strcmp (s, want) == 0
         || (plot_cell_number (s, &a) && plot_cell_number (want, &b) && a == b);
}

/* The distinct values of column @col, for an error message: "1, 2, 4". */
static char *
column_values (const PlotTable *table, int col)
{
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint n = 0;

  for (guint r = 0; r < table->rows->len; r++)
    {
      const char *v = plot_table_cell (table, r, col);

      if (!g_hash_table_add (seen, (gpointer) v))
        continue;
      if (++n > 12)
        {
          g_string_append (s, ", ...");
          break;
        }
      g_string_append_printf (s, "%s%s", n > 1 ? ", " : "",
                              *v ? v : "(empty)");
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

gboolean
plot_table_where (PlotTable *table, const char *const *where, GError **error)
{
  g_return_val_if_fail (table != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  for (gsize i = 0; where != NULL && where[i] != NULL; i++)
    {
      const char *eq = strchr (where[i], '=');
      int col;

      if (eq == NULL || eq == where[i])
        {
          g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                       "--where '%s': expected COLUMN=VALUE, e.g. "
                       "parallel.tp=8", where[i]);
          return FALSE;
        }
      g_autofree char *name = g_strndup (where[i], eq - where[i]);
      if (!plot_table_resolve (table, name, "--where", &col, error))
        return FALSE;
      if (table->rows->len == 0)
        continue;  /* nothing to filter: the caller says no rows are left */
      g_autofree char *before = column_values (table, col);
      g_autofree gboolean *keep = g_new (gboolean, table->rows->len);
      for (guint r = 0; r < table->rows->len; r++)
        keep[r] = cell_matches (plot_table_cell (table, r, col), eq + 1);
      keep_rows (table, keep);
      if (table->rows->len == 0)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                       "--where %s: no row of %s has this value (%s has: %s)",
                       where[i], table->name,
                       (const char *) g_ptr_array_index (table->header, col),
                       before);
          return FALSE;
        }
    }
  return TRUE;
}
