/* sweep-private.h: what the threaded run (sweep.c) shares with the MPI run
 * (sweep-mpi.c): a point's row, and the output both write the rows to, so
 * that the two write the same bytes.
 *
 * Slot s of a shard K/N is point s * N + K - 1; the rows of the slots are
 * written in slot order. */
#pragma once

#include <stdio.h>

#include "base/progress.h"
#include "sweep/sweep.h"

/* Runs POINT and appends its row to ROW in OPTIONS's format (nothing, for
 * an infeasible point under feasible_only). Fails only on what is no fault
 * of the point: a file that cannot be read. Called from many threads at
 * once; needs sweep_check done. */
gboolean sweep_point_row (const Sweep *sweep, guint64 point, const SweepOptions *options,
                          GString *row, GError **error);

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

typedef struct {
  FILE *out;            /* stdout, or the -o file (owned) */
  const char *name;     /* of the output, for messages */
  guint64 end;          /* the slots of the shard */
  guint64 resumed;      /* the slots whose rows --resume kept: run from here */
  Progress progress;    /* on stderr when it is a terminal */
} SweepOutput;

/* Opens the output of a run of SWEEP with OPTIONS: under --resume, keeps
 * the complete rows of the file and checks its header (sweep_run's errors);
 * writes the CSV header where the file has none. */
gboolean sweep_output_open (SweepOutput *output, const Sweep *sweep,
                            const SweepOptions *options, GError **error);

/* Writes ROWS (the rows of the slots up to NEXT not yet written) and
 * flushes; redraws the progress line at most five times a second. */
gboolean sweep_output_write (SweepOutput *output, const GString *rows, guint64 next,
                             GError **error);

/* Clears the progress line and closes the file. Returns OK, or FALSE with
 * ERROR set when the close fails where OK was TRUE. */
gboolean sweep_output_close (SweepOutput *output, gboolean ok, GError **error);
