/* trace.c: the Chrome trace-event writer.
 *
 * Format: Google's "Trace Event Format" document, JSON object form
 * ({"traceEvents": [...]}), which both chrome://tracing and Perfetto open.
 * Times are written from integer picoseconds with integer arithmetic, so a
 * span of 1,500,000 ps is exactly "1.5" us and the bytes never depend on
 * floating-point formatting or the locale. One event per line keeps a
 * trace diffable. */
#include "output/trace.h"
#include "output/report.h"
#include "base/outfile.h"

#include <string.h>

#define PS_PER_US G_GINT64_CONSTANT (1000000)

/* @ps picoseconds as microseconds, exactly: "12", "1.5", "0.000001". */
static void
append_us (GString *out, SimTime ps)
{
  gint64 frac = ps % PS_PER_US;

  g_string_append_printf (out, "%" G_GINT64_FORMAT, ps / PS_PER_US);
  if (frac != 0)
    {
      char digits[8];
      int n = 6;

      g_snprintf (digits, sizeof digits, "%06d", (int) frac);
      while (digits[n - 1] == '0')
        n--;
      g_string_append_printf (out, ".%.*s", n, digits);
    }
}

static void
append_stream_name (GString *out, int stream, const char *const *stream_names,
                    int n_streams)
{
  if (stream < n_streams && stream_names[stream] != NULL)
    report_append_json_string (out, stream_names[stream]);
  else
    g_string_append_printf (out, "\"stream %d\"", stream);
}

/* The metadata events: each rank that has a span is named and sorted, and
 * so is each of its streams that has one, in (rank, stream) order. A
 * table of flags indexed by rank and stream finds them in one pass; ranks
 * and streams are small dense integers, so it stays small. */
static void
append_metadata (GString *out, const TraceSpan *spans, gsize n_spans,
                 const char *const *stream_names, int n_streams)
{
  int max_rank = -1, max_stream = -1;
  g_autofree guint8 *seen = NULL;
  gsize width;

  /* With no span there is nothing to name, and no span after the metadata
   * lines to make their trailing commas valid. */
  if (n_spans == 0)
    return;
  for (gsize i = 0; i < n_spans; i++)
    {
      max_rank = MAX (max_rank, spans[i].rank);
      max_stream = MAX (max_stream, spans[i].stream);
    }
  width = (gsize) max_stream + 1;
  seen = g_malloc0_n ((gsize) max_rank + 1, width);
  for (gsize i = 0; i < n_spans; i++)
    seen[(gsize) spans[i].rank * width + (gsize) spans[i].stream] = 1;

  for (int rank = 0; rank <= max_rank; rank++)
    {
      gboolean named = FALSE;

      for (int stream = 0; stream <= max_stream; stream++)
        {
          if (!seen[(gsize) rank * width + (gsize) stream])
            continue;
          if (!named)
            {
              g_string_append_printf (out,
                  "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                  "\"tid\": 0, \"args\": {\"name\": \"rank %d\"}},\n"
                  "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, "
                  "\"tid\": 0, \"args\": {\"sort_index\": %d}},\n",
                  rank, rank, rank, rank);
              named = TRUE;
            }
          g_string_append_printf (out,
              "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
              "\"tid\": %d, \"args\": {\"name\": ", rank, stream);
          append_stream_name (out, stream, stream_names, n_streams);
          g_string_append_printf (out, "}},\n"
              "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": %d, "
              "\"tid\": %d, \"args\": {\"sort_index\": %d}},\n",
              rank, stream, stream);
        }
    }
}

static void
append_span (GString *out, const TraceSpan *s)
{
  g_string_append (out, "{\"name\": ");
  report_append_json_string (out, s->name);
  if (s->cat != NULL)
    {
      g_string_append (out, ", \"cat\": ");
      report_append_json_string (out, s->cat);
    }
  g_string_append (out, ", \"ph\": \"X\", \"ts\": ");
  append_us (out, s->start);
  g_string_append (out, ", \"dur\": ");
  append_us (out, s->end - s->start);
  g_string_append_printf (out, ", \"pid\": %d, \"tid\": %d", s->rank, s->stream);
  if (s->micro_batch >= 0)
    g_string_append_printf (out, ", \"args\": {\"micro_batch\": %d}", s->micro_batch);
  g_string_append_c (out, '}');
}

void
trace_append (GString *out, const TraceSpan *spans, gsize n_spans,
              const char *const *stream_names, int n_streams)
{
  gsize start_len;

  g_return_if_fail (out != NULL);
  g_return_if_fail (spans != NULL || n_spans == 0);
  g_return_if_fail (stream_names != NULL || n_streams == 0);

  for (gsize i = 0; i < n_spans; i++)
    {
      g_assert (spans[i].name != NULL);
      g_assert (spans[i].rank >= 0 && spans[i].stream >= 0);
      g_assert (spans[i].start >= 0 && spans[i].start <= spans[i].end);
    }

  /* A span takes about 140 bytes; growing once avoids the copies of
   * doubling a buffer of tens of megabytes. */
  start_len = out->len;
  g_string_set_size (out, start_len + 256 + n_spans * 160);
  g_string_truncate (out, start_len);

  g_string_append (out, "{\"traceEvents\": [\n");
  append_metadata (out, spans, n_spans, stream_names, n_streams);
  for (gsize i = 0; i < n_spans; i++)
    {
      append_span (out, &spans[i]);
      g_string_append (out, i + 1 < n_spans ? ",\n" : "\n");
    }
  g_string_append (out, "]}\n");
}

gboolean
trace_write (const char *path, const TraceSpan *spans, gsize n_spans,
             const char *const *stream_names, int n_streams, GError **error)
{
  g_autoptr (GString) doc = g_string_new (NULL);

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  trace_append (doc, spans, n_spans, stream_names, n_streams);
  return outfile_write (path, doc->str, doc->len, error);
}
