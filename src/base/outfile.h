/* outfile.h: writing a result file without losing or clobbering anything.
 *
 * A regular file (or a path that does not exist yet) is written to a
 * temporary file beside it and renamed over it, so a reader never sees
 * half a file and a failed write leaves the old one. A symbolic link is
 * written through: the file it points to is replaced, the link stays. A
 * device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is opened and
 * written in place: renaming over it would replace the device itself.
 * Temporary files are removed when the process is interrupted (SIGINT,
 * SIGTERM, SIGHUP) as well as on every error path; an error names the
 * user's path, never the temporary one. */
#pragma once

#include <glib.h>

#include <stdio.h>

/* Writes len bytes of data to path as above. Fails with a G_FILE_ERROR. */
gboolean outfile_write (const char *path, const char *data, gsize len,
                        GError **error);

/* The same for a file written piece by piece (a streamed trace): open it,
 * write to outfile_stream, then commit it (the rename into place) or
 * abort it (the old file stays). Either one frees it. Errors name path. */
typedef struct OutFile OutFile;
OutFile *outfile_open (const char *path, GError **error);
FILE *outfile_stream (OutFile *out);
gboolean outfile_commit (OutFile *out, GError **error);
void outfile_abort (OutFile *out);

/* The file that writing path replaces: path itself, or, for a symbolic
 * link, the file it points to (resolved, even when that does not exist
 * yet). Sets *in_place for a device, FIFO or socket, to be written
 * directly. Owned by the caller. */
char *outfile_target (const char *path, gboolean *in_place);

/* A temporary file to remove if a signal ends the process before it is
 * renamed or unlinked: register it once it exists, unregister it after.
 * Up to OUTFILE_MAX_TEMPS at once; more are simply not registered. */
#define OUTFILE_MAX_TEMPS 16
void outfile_temp_register (const char *path);
void outfile_temp_unregister (const char *path);

/* Installs the handlers that remove registered temporary files on
 * SIGINT, SIGTERM and SIGHUP and then let the signal end the process as
 * it would have. Called once by main. */
void outfile_install_signal_handlers (void);
/* The line those handlers write on stderr (after erasing the progress
 * line, base/progress.h) when a signal ends the process: what was kept
 * and how to go on. NULL for none. Set before the work starts, from the
 * main thread; copied. */
void outfile_set_interrupt_note (const char *note);
