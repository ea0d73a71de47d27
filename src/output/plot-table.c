/* plot-table.c: trainsim's CSV reader: RFC 4180 parsing into a
 * PlotTable, of the CSV that `trainsim plot` draws from (plot.h) and of
 * the measurements `trainsim calibrate` fits to (plot-table.h); column
 * look-ups, and plot's --where filter. */
#include "output/plot-private.h"
#include "base/errors.h"
#include "base/input.h"
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
plot_table_name (const PlotTable *table)
{
  return table->name;
}

guint
plot_table_header_line (const PlotTable *table)
{
  return table->header_line;
}

guint
plot_table_n_rows (const PlotTable *table)
{
  return table->rows->len;
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

/* The blanks around a number or a field that a hand-written table may
 * have: "64, 128" or "m ,n". */
static gboolean
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

gboolean
plot_cell_number (const char *s, double *v)
{
  /* Blanks around the number, as in a hand-written "64 , 128", are let
   * pass; hexadecimal, inf and nan are not numbers in a figure any more
   * than in an input (units_number). */
  while (is_blank (*s))
    s++;
  gsize n = strlen (s);
  while (n > 0 && is_blank (s[n - 1]))
    n--;
  g_autofree char *number = g_strndup (s, n);
  return units_number (number, v);
}

gboolean
plot_table_positive (const PlotTable *table, guint row, int col,
                     const char *what, double *out, GError **error)
{
  const char *cell = plot_table_cell (table, row, col);

  /* plot_cell_number refuses inf, nan and what overflows to them. */
  if (plot_cell_number (cell, out) && *out > 0)
    return TRUE;
  g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
               "%s:%u: expected %s in column %s, a number above 0%s",
               table->name, plot_table_line (table, row), what,
               plot_table_column_name (table, col),
               cell[strspn (cell, " \t")] == '\0' ? "; the cell is empty" : "");
  return FALSE;
}

/* ------------------------------------------------------------------ parse */

/* One RFC 4180 record from @text at *@pos: its fields into @fields, the
 * line count advanced past any line break inside quotes and the record's
 * end. With @trim, blanks around a field (outside its quotes) are
 * dropped. */
static gboolean
parse_record (const char *name, const char *text, gsize len, gsize *pos,
              guint *line, gboolean trim, GPtrArray *fields, GError **error)
{
  gsize i = *pos;
  g_autoptr (GString) field = g_string_new (NULL);

  for (;;)
    {
      g_string_truncate (field, 0);
      while (trim && i < len && is_blank (text[i]))
        i++;
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
          while (trim && i < len && is_blank (text[i]))
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
        {
          while (i < len && text[i] != ',' && text[i] != '\n'
                 && text[i] != '\r')
            g_string_append_c (field, text[i++]);
          while (trim && field->len > 0
                 && is_blank (field->str[field->len - 1]))
            g_string_truncate (field, field->len - 1);
        }
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

/* Refuses a header of measurements (plot_table_read) that names a column
 * twice or an empty one, which a look-up by name would read wrong, or
 * none of @columns: some other file, of which nothing is quoted back. */
static gboolean
check_header (const PlotTable *table, const char *const *columns,
              const char *what, GError **error)
{
  for (guint c = 0; c < table->header->len; c++)
    {
      const char *h = g_ptr_array_index (table->header, c);

      if (*h == '\0' || plot_table_column (table, h) != (int) c)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                       "%s:%u: the header names %s: expected each column's "
                       "name once", table->name, table->header_line,
                       *h ? "a column twice" : "an empty column");
          return FALSE;
        }
    }
  for (gsize i = 0; columns[i] != NULL; i++)
    if (plot_table_column (table, columns[i]) >= 0)
      return TRUE;
  g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: not %s", table->name,
               table->header_line, what);
  return FALSE;
}

/* Parses @text into a table. With @columns NULL, a CSV as a program
 * writes one (plot_table_parse): '#' lines only above the header, fields
 * as they are. Otherwise measurements as a person writes them
 * (plot_table_read): '#' lines anywhere, blanks around fields dropped,
 * and a header checked against @columns and @what before any row is read,
 * so that some other file is refused as that, not at its first odd line. */
static PlotTable *
parse_table (const char *name, const char *text, gsize len,
             const char *const *columns, const char *what, GError **error)
{
  gboolean lenient = columns != NULL;
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
      gsize first = pos;

      while (lenient && first < len && is_blank (text[first]))
        first++;
      /* A comment line before the header: a sweep's first line says
       * which sweep wrote the rows (sweep.c, append_identity). In
       * measurements, a note on where they came from, anywhere. */
      if ((table->header == NULL || lenient) && first < len
          && text[first] == '#')
        {
          const char *nl = memchr (text + first, '\n', len - first);
          pos = nl != NULL ? (gsize) (nl - text) + 1 : len;
          line++;
          continue;
        }

      if (!parse_record (name, text, len, &pos, &line, lenient, fields,
                         error))
        return NULL;
      if (fields->len == 1 && *(const char *) fields->pdata[0] == '\0')
        continue;  /* a blank line */
      if (table->header == NULL)
        {
          table->header = g_steal_pointer (&fields);
          table->header_line = start;
          if (lenient && !check_header (table, columns, what, error))
            return NULL;
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
      if (lenient)
        g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: empty, not %s",
                     name, what);
      else
        g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                     "%s: empty, expected a CSV header line (such as a "
                     "sweep's output)", name);
      return NULL;
    }
  return g_steal_pointer (&table);
}

PlotTable *
plot_table_parse (const char *name, const char *text, gsize len,
                  GError **error)
{
  g_return_val_if_fail (name != NULL && text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  PlotTable *table = parse_table (name, text, len, NULL, NULL, error);
  if (table != NULL)
    derive_aggregate_pflops (table);
  return table;
}

PlotTable *
plot_table_read (const char *path, const char *const *columns,
                 const char *what, GError **error)
{
  g_return_val_if_fail (path != NULL && columns != NULL && what != NULL,
                        NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autofree char *text = NULL;
  gsize len;
  if (!input_read (path, &text, &len, error))
    return NULL;
  return parse_table (path, text, len, columns, what, error);
}

/* ---------------------------------------------------------------- columns */

int
plot_table_column (const PlotTable *table, const char *name)
{
  for (guint c = 0; c < table->header->len; c++)
    if (strcmp (g_ptr_array_index (table->header, c), name) == 0)
      return (int) c;
  return -1;
}

const char *
plot_table_column_name (const PlotTable *table, int col)
{
  return g_ptr_array_index (table->header, col);
}

int
plot_table_find (const PlotTable *table, const char *name)
{
  int found = plot_table_column (table, name);
  gsize n = strlen (name);

  if (found >= 0)
    return found;
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
  return plot_table_column (table, "status");
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
