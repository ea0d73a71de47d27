/* nccllog.c: reading nccl-tests output back into its rows; see nccllog.h. */
#include "calib/nccllog.h"
#include "base/errors.h"
#include "base/input.h"
#include "base/units.h"
#include "config/spec.h"

#include <stdlib.h>
#include <string.h>

/* The tests nccl-tests ships that trainsim does not model: a log of one
 * is refused by name rather than read as if it were a collective it is
 * not. (A word ending in _perf that is none of these, such as a folder
 * "nccl_perf", is not a test's name and is passed over.) */
static const char *const unmodelled_tests[] = {
  "broadcast", "reduce", "gather", "scatter", "hypercube", "alltoallv",
};

/* The parser's state between lines. */
typedef struct {
  NcclLog *log;
  guint line;
  /* The column header's indices: size, and the out-of-place and in-place
   * times (-1 where the header has no second). */
  int col_size, col_time[2];
  GHashTable *rank_line;     /* rank -> the line listing it */
  GHashTable *host_ranks;    /* owned host name -> ranks on it */
} Reader;

static void
nccllog_error (GError **error, const Reader *r, guint line, const char *format, ...)
  G_GNUC_PRINTF (4, 5);

static void
nccllog_error (GError **error, const Reader *r, guint line, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %s", r->log->path, line, what);
}

void
nccllog_free (NcclLog *log)
{
  if (log == NULL)
    return;
  g_free (log->path);
  g_array_unref (log->rows);
  g_free (log);
}

/* The whitespace-separated words of LINE, without the '#' that starts a
 * comment line (*COMMENT says whether it did). */
static GStrv
words (const char *line, gboolean *comment)
{
  while (*line == ' ' || *line == '\t')
    line++;
  *comment = *line == '#';
  if (*comment)
    line++;
  g_auto (GStrv) parts = g_strsplit_set (line, " \t", -1);
  GPtrArray *kept = g_ptr_array_new ();
  for (int i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      g_ptr_array_add (kept, g_strdup (parts[i]));
  g_ptr_array_add (kept, NULL);
  return (GStrv) g_ptr_array_free (kept, FALSE);
}

static gboolean
all_digits (const char *s)
{
  if (*s == '\0')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

/* Every "NAME_perf" in LINE (a command line, "# Collective test starting:
 * NAME_perf"): the log's test, which must be one and modelled. */
static gboolean
note_test (Reader *r, const char *line, GError **error)
{
  for (const char *at = strstr (line, "_perf"); at != NULL; at = strstr (at + 1, "_perf"))
    {
      const char *start = at;
      while (start > line && (g_ascii_islower (start[-1]) || start[-1] == '_'))
        start--;
      char after = at[5];
      if (start == at || g_ascii_isalnum (after) || (after == '_' && strncmp (at + 5, "_mpi", 4) != 0))
        continue;
      g_autofree char *name = g_strndup (start, (gsize) (at - start));
      int op = spec_enum_parse (SPEC_ENUM_COLLECTIVE, name);
      if (op < 0)
        {
          for (guint i = 0; i < G_N_ELEMENTS (unmodelled_tests); i++)
            if (strcmp (name, unmodelled_tests[i]) == 0)
              {
                g_autofree char *known = spec_enum_list (SPEC_ENUM_COLLECTIVE);
                nccllog_error (error, r, r->line, "%s_perf: trainsim models the "
                               "collectives %s (their nccl-tests: NAME_perf)", name, known);
                return FALSE;
              }
          continue;
        }
      if (r->log->op >= 0 && r->log->op != op)
        {
          nccllog_error (error, r, r->line, "%s_perf, but line %u named %s_perf: one "
                         "test per log", name, r->log->op_line,
                         spec_enum_name (SPEC_ENUM_COLLECTIVE, r->log->op));
          return FALSE;
        }
      r->log->op = op;
      r->log->op_line = r->line;
    }
  return TRUE;
}

/* "#  Rank  3 Group  0 Pid 1234 on node1 device  3 [0x4c] NVIDIA ..." (no
 * Group in older versions): the rank and its host. */
static gboolean
note_rank (Reader *r, GStrv w, GError **error)
{
  int on = -1;
  for (int i = 2; w[i] != NULL; i++)
    if (strcmp (w[i], "on") == 0 && w[i + 1] != NULL)
      {
        on = i;
        break;
      }
  if (w[1] == NULL || !all_digits (w[1]) || strlen (w[1]) > 7 || on < 0)
    {
      nccllog_error (error, r, r->line, "expected a device line such as '#  Rank  0 "
                     "Group  0 Pid 1234 on node1 device  0 [0x07] NVIDIA A100-SXM4-80GB'");
      return FALSE;
    }
  int rank = atoi (w[1]);
  gpointer seen = g_hash_table_lookup (r->rank_line, GINT_TO_POINTER (rank));
  if (seen != NULL)
    {
      nccllog_error (error, r, r->line, "rank %d is listed again (first at line %u): "
                     "the processes did not form one communicator, as when "
                     "nccl-tests is built without MPI=1 and each process runs alone",
                     rank, GPOINTER_TO_UINT (seen));
      return FALSE;
    }
  g_hash_table_insert (r->rank_line, GINT_TO_POINTER (rank), GUINT_TO_POINTER (r->line));
  const char *host = w[on + 1];
  int n = GPOINTER_TO_INT (g_hash_table_lookup (r->host_ranks, host));
  g_hash_table_insert (r->host_ranks, g_strdup (host), GINT_TO_POINTER (n + 1));
  return TRUE;
}

/* The column header, "#  size  count  type  redop  root  time  algbw
 * busbw  #wrong  time ...": where the size and the two times are. */
static gboolean
note_header (Reader *r, GStrv w, GError **error)
{
  r->col_size = 0;
  r->col_time[0] = r->col_time[1] = -1;
  for (int i = 0, times = 0; w[i] != NULL && times < 2; i++)
    if (strcmp (w[i], "time") == 0 || strcmp (w[i], "cputime") == 0)
      r->col_time[times++] = i;
  if (r->col_time[0] < 0)
    {
      nccllog_error (error, r, r->line, "a column header without a time column: "
                     "expected '#  size  count  type  redop  root  time  algbw  busbw ...'");
      return FALSE;
    }
  r->log->header_line = r->line;
  return TRUE;
}

/* A time cell: microseconds, finite and positive. */
static gboolean
time_cell (const char *cell, double *us)
{
  return cell != NULL && units_number (cell, us) && *us > 0;
}

static gboolean
note_row (Reader *r, GStrv w, GError **error)
{
  int n = (int) g_strv_length (w);
  double bytes = g_ascii_strtod (w[r->col_size], NULL);
  /* Beyond 2^53 bytes a double no longer holds the size exactly; no GPU
   * holds a buffer a thousandth of that. */
  if (strlen (w[r->col_size]) > 15)
    {
      nccllog_error (error, r, r->line, "a size of more than 15 digits: expected bytes, "
                     "as nccl-tests prints them");
      return FALSE;
    }
  double us[2];
  if (!time_cell (r->col_time[0] < n ? w[r->col_time[0]] : NULL, &us[0]))
    {
      nccllog_error (error, r, r->line, "expected a time in microseconds (a positive "
                     "number) in column %d, 'time' in the header at line %u",
                     r->col_time[0] + 1, r->log->header_line);
      return FALSE;
    }
  int timings = 1;
  if (r->col_time[1] >= 0 && r->col_time[1] < n)
    {
      if (!time_cell (w[r->col_time[1]], &us[1]))
        {
          nccllog_error (error, r, r->line, "expected the in-place time in microseconds "
                         "(a positive number) in column %d, or the row to end after its "
                         "out-of-place half", r->col_time[1] + 1);
          return FALSE;
        }
      timings = 2;
    }
  if (bytes == 0)
    {
      r->log->zero_rows++;
      return TRUE;
    }
  NcclRow row = { r->line, bytes, (timings == 2 ? (us[0] + us[1]) / 2 : us[0]) * 1e-6 };
  g_array_append_val (r->log->rows, row);
  return TRUE;
}

/* One line of the log. */
static gboolean
read_line (Reader *r, const char *line, GError **error)
{
  gboolean comment;
  g_auto (GStrv) w = words (line, &comment);
  if (w[0] == NULL)
    return TRUE;
  if (!comment)
    {
      /* A row: the first word a number, after the header. What starts
       * with a number before it (nothing nccl-tests prints) is left. */
      if (r->log->header_line > 0 && all_digits (w[0]))
        return note_row (r, w, error);
      return note_test (r, line, error);
    }
  if (strcmp (w[0], "Using") == 0 && w[1] != NULL && strcmp (w[1], "devices") == 0)
    {
      if (r->log->devices_line > 0)
        {
          nccllog_error (error, r, r->line, "a second '# Using devices' (the first at "
                         "line %u): one run per log, or the processes did not form one "
                         "communicator (nccl-tests built without MPI=1 runs each process "
                         "alone)", r->log->devices_line);
          return FALSE;
        }
      r->log->devices_line = r->line;
      return TRUE;
    }
  if (strcmp (w[0], "Rank") == 0)
    return note_rank (r, w, error);
  if (strcmp (w[0], "size") == 0 && w[1] != NULL && strcmp (w[1], "count") == 0)
    return note_header (r, w, error);
  if (strcmp (w[0], "Avg") == 0 && w[1] != NULL && strcmp (w[1], "bus") == 0)
    {
      const char *colon = strchr (line, ':');
      double v;
      g_auto (GStrv) after = colon != NULL ? words (colon + 1, &comment) : NULL;
      if (after != NULL && after[0] != NULL && units_number (after[0], &v) && v >= 0)
        r->log->avg_busbw = v * 1e9;
      return TRUE;
    }
  return note_test (r, line, error);
}

/* After the last line: a log with rows, and one run's device list. */
static gboolean
finish (Reader *r, GError **error)
{
  NcclLog *log = r->log;
  if (log->header_line == 0)
    {
      nccllog_error (error, r, 1, "not nccl-tests output: no column header such as '#  "
                     "size  count  type  redop  root  time  algbw  busbw  #wrong ...', "
                     "which all_reduce_perf and the others print above their rows");
      return FALSE;
    }
  if (log->rows->len == 0)
    {
      nccllog_error (error, r, log->header_line, "no row of more than 0 bytes after the "
                     "column header: expected rows such as '1048576  262144  float  sum  "
                     "-1  35.2  29.8  52.1  0 ...'");
      return FALSE;
    }
  guint ranks = g_hash_table_size (r->rank_line);
  if (ranks == 0)
    return TRUE;
  for (guint k = 0; k < ranks; k++)
    if (!g_hash_table_contains (r->rank_line, GINT_TO_POINTER ((int) k)))
      {
        nccllog_error (error, r, log->devices_line, "the device list has %u ranks but "
                       "not rank %u: expected ranks 0 to %u, each once", ranks, k, ranks - 1);
        return FALSE;
      }
  GHashTableIter it;
  gpointer host, count;
  int per = -1;
  g_hash_table_iter_init (&it, r->host_ranks);
  while (g_hash_table_iter_next (&it, &host, &count))
    {
      if (per >= 0 && per != GPOINTER_TO_INT (count))
        {
          nccllog_error (error, r, log->devices_line, "the ranks are spread unevenly over "
                         "the hosts (%d on one, %d on another): trainsim times a "
                         "collective with as many ranks on each node", per,
                         GPOINTER_TO_INT (count));
          return FALSE;
        }
      per = GPOINTER_TO_INT (count);
    }
  log->ranks = (int) ranks;
  log->hosts = (int) g_hash_table_size (r->host_ranks);
  log->per_node = per;
  return TRUE;
}

NcclLog *
nccllog_parse (const char *path, const char *text, gsize len, GError **error)
{
  g_autoptr (NcclLog) log = g_new0 (NcclLog, 1);
  log->path = g_strdup (path);
  log->op = -1;
  log->avg_busbw = -1;
  log->rows = g_array_new (FALSE, FALSE, sizeof (NcclRow));
  Reader r = { .log = log };
  r.rank_line = g_hash_table_new (g_direct_hash, g_direct_equal);
  r.host_ranks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gboolean ok = TRUE;
  for (gsize at = 0; ok && at < len;)
    {
      const char *nl = memchr (text + at, '\n', len - at);
      gsize end = nl != NULL ? (gsize) (nl - text) : len;
      g_autofree char *line = g_strndup (text + at, end - at);
      gsize n = strlen (line);
      if (n > 0 && line[n - 1] == '\r')
        line[n - 1] = '\0';
      r.line++;
      ok = read_line (&r, line, error);
      at = end + 1;
    }
  ok = ok && finish (&r, error);
  g_hash_table_unref (r.rank_line);
  g_hash_table_unref (r.host_ranks);
  return ok ? g_steal_pointer (&log) : NULL;
}

NcclLog *
nccllog_read (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  if (!input_read (path, &text, &len, error))
    return NULL;
  return nccllog_parse (path, text, len, error);
}
