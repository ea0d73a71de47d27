/* trace.h: a simulated step as a Chrome trace, for Perfetto or chrome://tracing.
 *
 * The JSON object format of the Trace Event Format: {"traceEvents": [...]}.
 * One complete event ("ph": "X") per span, pid = rank, tid = stream, ts and
 * dur in microseconds written exactly from the integer picoseconds; metadata
 * events ("ph": "M") name each rank "rank N" and each stream by its name and
 * sort them in numeric order. Identical spans give identical bytes. */
#pragma once

#include <glib.h>
#include "parallel/result.h"

/* Appends the trace document of @spans (in their order) to @out.
 * @stream_names[i] names stream i (a stream at or past @n_streams, or with a
 * NULL name, is called "stream N"); every span needs a name, and cat may be
 * NULL. Ranks and streams must be >= 0 and start <= end: anything else is a
 * bug of the caller. */
void trace_append (GString *out, const TraceSpan *spans, gsize n_spans,
                   const char *const *stream_names, int n_streams);

/* Writes the document of trace_append() to @path atomically (a temporary
 * file renamed over it). Fails with a G_FILE_ERROR. */
gboolean trace_write (const char *path, const TraceSpan *spans, gsize n_spans,
                      const char *const *stream_names, int n_streams,
                      GError **error);
