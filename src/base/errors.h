/* errors.h: the GError domains of trainsim and how errors map to exit codes.
 *
 * GLib's rule: a GError for what a user can cause (bad input, a plan that
 * cannot run, I/O), an assertion for what only a bug can cause. */
#pragma once

#include <glib.h>

#define TS_ERROR (ts_error_quark ())
GQuark ts_error_quark (void);

typedef enum {
  TS_ERROR_INPUT,       /* malformed or invalid input: exit 2 */
  TS_ERROR_USAGE,       /* bad command line: exit 2 */
  TS_ERROR_PLAN,        /* sizes that do not divide, etc.: exit 2 */
  TS_ERROR_NO_FIT,      /* a valid plan that does not fit in memory: exit 1 */
  TS_ERROR_IO,          /* reading or writing a file failed: exit 1 */
} TsErrorCode;

/* Exit status for an error: 2 for bad usage or input, 1 otherwise. */
int ts_error_exit_status (const GError *error);
