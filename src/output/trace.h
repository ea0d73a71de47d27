/* trace.h: a simulated step as a Chrome trace, for Perfetto or chrome://tracing.
 *
 * The JSON object format of the Trace Event Format: {"traceEvents": [...]}.
 * One complete event ("ph": "X") per span, pid = rank, tid = stream, ts and
 * dur in microseconds written exactly from the integer picoseconds; metadata
 * events ("ph": "M") name each rank "rank N" and each stream by its name and
 * sort them in numeric order, after the spans. Identical spans give
 * identical bytes. */
#pragma once

#include <glib.h>
#include "parallel/result.h"

/* Appends the trace document of @spans (in their order) to @out.
 * @stream_names[i] names stream i (a stream at or past @n_streams, or with a
 * NULL name, is called "stream N"); every span needs a name, and cat may be
 * NULL. Ranks must be >= 0, streams 0 to 63 and start <= end: anything
 * else is a bug of the caller. */
void trace_append (GString *out, const TraceSpan *spans, gsize n_spans,
                   const char *const *stream_names, int n_streams);

/* A trace written span by span to a file: trace_append's document, with
 * nothing of it held in memory but a buffer. A regular file (or a new
 * one) is written beside its path and renamed over it by
 * trace_writer_close; a symlink is written through, a device or FIFO
 * in place (base/outfile.h).
 * Fails with a G_FILE_ERROR. */
typedef struct TraceWriter TraceWriter;

TraceWriter *trace_writer_open (const char *path,
                                const char *const *stream_names,
                                int n_streams, GError **error);
void trace_writer_add (TraceWriter *w, const TraceSpan *span);
/* Completes the document and frees w; FALSE when any write failed (the
 * target is then left as it was). */
gboolean trace_writer_close (TraceWriter *w, GError **error);
/* Drops the document (the target is left as it was) and frees w. */
void trace_writer_abort (TraceWriter *w);

/* Writes the document of trace_append() to @path through a TraceWriter. */
gboolean trace_write (const char *path, const TraceSpan *spans, gsize n_spans,
                      const char *const *stream_names, int n_streams,
                      GError **error);
