/* sweep-private.h: what the parts of a sweep share inside src/sweep/.
 *
 * Three files, one way: the threaded run (sweep.c) and the MPI run
 * (sweep-mpi.c) make a point's row and write it through the output
 * (sweep-output.c: opening, locking and resuming the output file, writing
 * and closing it, the checks that tell a sweep's rows from anything else,
 * and merge). The output knows the sweep only as a SweepHead (what its
 * file starts with), never its axes or points, so that the rows and the
 * file they go to can change apart.
 *
 * Slot s of a shard K/N is point s * N + K - 1; the rows of the slots are
 * written in slot order. */
#pragma once

#include <stdio.h>

#include "base/outfile.h"
#include "base/progress.h"
#include "sweep/sweep.h"

/* ------------------------------------------------------ sweep.c: rows */

/* Runs POINT and appends its row to ROW in OPTIONS's format (nothing, for
 * an infeasible point under feasible_only), and sets *STATUS (when not
 * NULL) to its status: 0 ok, 1 infeasible, 2 oom. Fails only on what is
 * no fault of the point: a file that cannot be read. Called from many
 * threads at once; needs sweep_check done. */
gboolean sweep_point_row (const Sweep *sweep, guint64 point, const SweepOptions *options,
                          GString *row, int *status, GError **error);

static inline guint64
sweep_slot_point (const SweepOptions *options, guint64 slot)
{
  return slot * options->shard_n + (options->shard_k - 1);
}

/* The finished rows a run may hold back behind a slow one, for WORKERS
 * running points at once: the size of its reorder buffer. */
static inline guint
sweep_window (guint workers)
{
  return MAX (64, 32 * workers);
}

/* ----------------------------------------------- sweep-output.c: output */

/* What identifies a sweep's output, before its rows: the identity line
 * (its settings, shard and points) and, in CSV, the header. */
typedef struct {
  const char *settings; /* hex SHA-256 of the sweep's settings */
  guint64 points;       /* of the whole sweep */
  const char *header;   /* the CSV header line, its newline included;
                         * not read in JSON lines */
} SweepHead;

typedef struct {
  FILE *out;            /* stdout, the -o file, or the file that replaces
                         * it under --force (owned, as the two below) */
  OutFile *replacing;   /* under --force, the temporary file out writes,
                         * renamed over the -o file by a close that is OK;
                         * else NULL */
  int lock_fd;          /* under --force, the -o file held locked while
                         * the temporary file is written; else -1 (a lock
                         * held through out's own descriptor, or none) */
  const char *name;     /* of the output, for messages */
  guint64 end;          /* the slots of the shard */
  guint64 resumed;      /* the slots whose rows --resume kept: run from here */
  Progress progress;    /* on stderr when it is a terminal */
} SweepOutput;

/* Opens the output of a run of the sweep HEAD with OPTIONS (sweep_run's
 * errors): a regular file is locked for the whole run, and a second sweep
 * on it refused (TS_ERROR_USAGE); under --resume, keeps the complete rows
 * of the file and checks its start; under --force, writes a temporary
 * file beside it. Writes the identity line and CSV header where the file
 * has none. On failure nothing is left open. */
gboolean sweep_output_start (SweepOutput *output, const SweepHead *head,
                             const SweepOptions *options, GError **error);

/* Writes ROWS (the rows of the slots up to NEXT not yet written) and
 * flushes; redraws the progress line at most five times a second. */
gboolean sweep_output_write (SweepOutput *output, const GString *rows, guint64 next,
                             GError **error);

/* Clears the progress line and closes the file: under --force, when OK,
 * renames the temporary file over the -o file, else removes it. Then
 * releases the lock. Returns OK, or FALSE with ERROR set when the close
 * fails where OK was TRUE. */
gboolean sweep_output_close (SweepOutput *output, gboolean ok, GError **error);

/* ------------------------------------------- sweep.c: a Sweep's output */

/* sweep_output_start with SWEEP's head (its settings, points and CSV
 * header, which sweep.c knows): what sweep_run and sweep-mpi.c open. */
gboolean sweep_output_open (SweepOutput *output, const Sweep *sweep,
                            const SweepOptions *options, GError **error);
