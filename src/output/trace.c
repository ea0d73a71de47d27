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

#include <errno.h>
#include <stdio.h>
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
  if (s->micro_batch >= 0 || s->group > 0)
    {
      g_string_append (out, ", \"args\": {");
      if (s->micro_batch >= 0)
        g_string_append_printf (out, "\"micro_batch\": %d%s", s->micro_batch,
                                s->group > 0 ? ", " : "");
      if (s->group > 0)
        g_string_append_printf (out, "\"group\": %d", s->group);
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, '}');
}

/* ---- the document, span by span ----------------------------------------
 * Spans are written as they come; the metadata events, which name each
 * rank and stream that has a span, come after them (the format does not
 * order events), so a trace of millions of spans never sits in memory.
 * Each event is followed by ",\n" but the last; with no span there is no
 * metadata either. */

struct TraceWriter {
  GString *buf;               /* pending bytes (the caller's, in memory) */
  OutFile *out;               /* owned; NULL in memory */
  FILE *file;                 /* out's stream, or NULL */
  char *path;                 /* owned */
  GError *error;              /* owned: the first write error */
  const char *const *stream_names;
  int n_streams;
  guint64 *streams_of_rank;   /* owned: a bit per stream with a span */
  gsize n_ranks;
  gboolean any;
};

/* Bytes gathered before a write to the file. */
#define TRACE_CHUNK (1 << 16)

static void
flush_buf (TraceWriter *w)
{
  if (w->file == NULL || w->buf->len == 0)
    return;
  if (w->error == NULL && fwrite (w->buf->str, 1, w->buf->len, w->file)
                          != w->buf->len)
    {
      int saved = errno;
      g_set_error (&w->error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "cannot write %s: %s", w->path, g_strerror (saved));
    }
  g_string_truncate (w->buf, 0);
}

static void
begin (TraceWriter *w, const char *const *stream_names, int n_streams)
{
  w->stream_names = stream_names;
  w->n_streams = n_streams;
  g_string_append (w->buf, "{\"traceEvents\": [\n");
}

static void
add_span (TraceWriter *w, const TraceSpan *s)
{
  g_assert (s->name != NULL);
  g_assert (s->rank >= 0 && s->stream >= 0 && s->stream < 64);
  g_assert (s->start >= 0 && s->start <= s->end);
  if ((gsize) s->rank >= w->n_ranks)
    {
      gsize n = MAX ((gsize) s->rank + 1, 2 * w->n_ranks);
      w->streams_of_rank = g_renew (guint64, w->streams_of_rank, n);
      memset (w->streams_of_rank + w->n_ranks, 0,
              (n - w->n_ranks) * sizeof (guint64));
      w->n_ranks = n;
    }
  w->streams_of_rank[s->rank] |= G_GUINT64_CONSTANT (1) << s->stream;
  w->any = TRUE;
  append_span (w->buf, s);
  g_string_append (w->buf, ",\n");
  if (w->buf->len >= TRACE_CHUNK)
    flush_buf (w);
}

/* The metadata events, in (rank, stream) order, and the document's end. */
static void
finish (TraceWriter *w)
{
  gboolean first = TRUE;
  for (gsize rank = 0; rank < w->n_ranks; rank++)
    {
      guint64 streams = w->streams_of_rank[rank];
      if (streams == 0)
        continue;
      if (!first)
        g_string_append (w->buf, ",\n");
      first = FALSE;
      g_string_append_printf (w->buf,
          "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
          "\"tid\": 0, \"args\": {\"name\": \"rank %d\"}},\n"
          "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, "
          "\"tid\": 0, \"args\": {\"sort_index\": %d}}",
          (int) rank, (int) rank, (int) rank, (int) rank);
      for (int stream = 0; stream < 64; stream++)
        {
          if (!(streams & (G_GUINT64_CONSTANT (1) << stream)))
            continue;
          g_string_append_printf (w->buf, ",\n"
              "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
              "\"tid\": %d, \"args\": {\"name\": ", (int) rank, stream);
          append_stream_name (w->buf, stream, w->stream_names, w->n_streams);
          g_string_append_printf (w->buf, "}},\n"
              "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": %d, "
              "\"tid\": %d, \"args\": {\"sort_index\": %d}}",
              (int) rank, stream, stream);
        }
      if (w->buf->len >= TRACE_CHUNK)
        flush_buf (w);
    }
  g_string_append (w->buf, w->any ? "\n]}\n" : "]}\n");
  flush_buf (w);
}

void
trace_append (GString *out, const TraceSpan *spans, gsize n_spans,
              const char *const *stream_names, int n_streams)
{
  g_return_if_fail (out != NULL);
  g_return_if_fail (spans != NULL || n_spans == 0);
  g_return_if_fail (stream_names != NULL || n_streams == 0);

  TraceWriter w = { .buf = out };
  begin (&w, stream_names, n_streams);
  for (gsize i = 0; i < n_spans; i++)
    add_span (&w, &spans[i]);
  finish (&w);
  g_free (w.streams_of_rank);
}

/* ---- the file ------------------------------------------------------------
 * Written as base/outfile.h says: beside the file and renamed over it
 * once complete, so that a failed or killed run leaves the old one whole;
 * a symlink written through, a device or FIFO in place. */

TraceWriter *
trace_writer_open (const char *path, const char *const *stream_names,
                   int n_streams, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  OutFile *out = outfile_open (path, error);
  if (out == NULL)
    return NULL;
  TraceWriter *w = g_new0 (TraceWriter, 1);
  w->buf = g_string_sized_new (2 * TRACE_CHUNK);
  w->out = out;
  w->file = outfile_stream (out);
  w->path = g_strdup (path);
  begin (w, stream_names, n_streams);
  return w;
}

void
trace_writer_add (TraceWriter *w, const TraceSpan *span)
{
  add_span (w, span);
}

static void
writer_free (TraceWriter *w)
{
  g_string_free (w->buf, TRUE);
  g_free (w->path);
  g_clear_error (&w->error);
  g_free (w->streams_of_rank);
  g_free (w);
}

gboolean
trace_writer_close (TraceWriter *w, GError **error)
{
  finish (w);
  gboolean ok = w->error == NULL;
  if (!ok)
    {
      g_propagate_error (error, g_steal_pointer (&w->error));
      outfile_abort (w->out);
    }
  else
    ok = outfile_commit (w->out, error);
  writer_free (w);
  return ok;
}

void
trace_writer_abort (TraceWriter *w)
{
  if (w == NULL)
    return;
  outfile_abort (w->out);
  writer_free (w);
}

gboolean
trace_write (const char *path, const TraceSpan *spans, gsize n_spans,
             const char *const *stream_names, int n_streams, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  TraceWriter *w = trace_writer_open (path, stream_names, n_streams, error);
  if (w == NULL)
    return FALSE;
  for (gsize i = 0; i < n_spans; i++)
    trace_writer_add (w, &spans[i]);
  return trace_writer_close (w, error);
}
