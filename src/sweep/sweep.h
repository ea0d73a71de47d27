/* sweep.h: a design space as the cartesian product of axes, run by a pool
 * of threads, a row per point written in point order as the points finish;
 * shards of a sweep (for job arrays) and the merge that joins them.
 *
 * An axis is a dotted experiment key (parallel.micro_batch) and a list of
 * values. Zipped axes (gpus and parallel.global_batch of a weak-scaling
 * study) advance together, as one dimension of the product in the place
 * of the first of them: the i-th value of each goes with the i-th of the
 * others. Points are numbered through the product with the last dimension
 * varying fastest. Shard K of N runs the points i with i % N == K - 1, so
 * row j of its output is point j * N + K - 1: that is all merge needs to
 * restore the order, byte for byte. A build with MPI also runs a sweep
 * across the ranks of an MPI job (sweep-mpi.h), writing the same bytes. */
#pragma once

#include <glib.h>

typedef enum {
  SWEEP_CSV,
  SWEEP_JSONL,
} SweepFormat;

typedef struct Sweep Sweep;

/* Reads the experiment PATH once, applies OVERRIDES (NULL or a
 * NULL-terminated list of --set "key=value"), and takes the axes of its
 * `sweep:` mapping, in file order; those of its `zip:` mapping, if any,
 * are zipped. Each axis is a list of values or a range (see
 * sweep_expand_range); an axis with no values, a range of more than
 * MAX_POINTS, an empty zip, or a key both in the zip and out of it is an
 * error citing its file:line:col. TS_ERROR_INPUT, also when the file
 * cannot be read. */
Sweep *sweep_new (const char *path, const char *const *overrides,
                  guint64 max_points, GError **error);
void sweep_free (Sweep *sweep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Sweep, sweep_free)

/* Adds the axis of a --sweep argument, or with ZIP of a --zip one:
 * "KEY=V1,V2,..." where each value is a YAML scalar or a range, or
 * "KEY=[V1, V2]" (a YAML list, for values with commas). It replaces an
 * axis of the file with the same key, zipped or not, or one given before
 * with the same option, where that one stood; otherwise it comes after
 * the others. A key given before with the other option is an error.
 * Errors cite "--sweep KEY" or "--zip KEY". */
gboolean sweep_add_axis (Sweep *sweep, const char *arg, gboolean zip, GError **error);

/* Checks, before any point runs, what would otherwise fail every point or
 * be found late: each axis key against the experiment's schema, the
 * zipped axes' lengths against each other, the size of the product
 * against MAX_POINTS, and the first point's loading, whose failure is
 * the file's (or --set's) fault unless it cites a swept value. Must be
 * called once, after the last sweep_add_axis, before sweep_run. */
gboolean sweep_check (Sweep *sweep, GError **error);

/* The number of points of the product (after sweep_check). */
guint64 sweep_n_points (const Sweep *sweep);

/* The points a sweep ran (a resumed file's earlier rows not counted), by
 * status: the summary a user reads on stderr. */
typedef struct {
  guint64 ok, oom, infeasible;
} SweepCounts;

typedef struct {
  guint threads;          /* worker threads, at least 1 */
  SweepFormat format;
  gboolean feasible_only; /* drop the infeasible rows (not with resume or shards) */
  guint shard_k, shard_n; /* run shard K of N (1 <= K <= N); 1 of 1: every point */
  const char *output;     /* a file, or NULL for stdout */
  gboolean resume;        /* keep OUTPUT's complete rows, run the rest */
  gboolean force;         /* replace an existing OUTPUT once the sweep is
                           * done (else refused) */
  SweepCounts *counts;    /* NULL, or filled with the points run, by status
                           * (on threads; the MPI ranks leave it 0) */
} SweepOptions;

/* Runs the points of the shard and writes a row per point to the output:
 * CSV (the sweep's identity as a comment line, a header, then rows; a
 * quoted cell may hold a line break, RFC 4180) or JSON lines (the
 * identity as the first object). A row is written once the rows of the
 * points before it are, and the output is flushed after each write, so an
 * interrupted sweep leaves the rows of a prefix of its points (and
 * perhaps a partial last row, which --resume cuts away). A point whose
 * plan cannot run, or does not fit in memory, is a row with its status and
 * reason. OUTPUT, a regular file, is locked for the whole run: while one
 * sweep writes it, another (a --resume, a --force) is refused. Under
 * --force an OUTPUT with something in it is replaced only when the sweep
 * is done: the rows go to a temporary file beside it, .NAME.XXXXXX,
 * renamed over it then (removed on a failure or SIGINT, SIGTERM, SIGHUP;
 * a SIGKILL leaves it). Fails with TS_ERROR_IO when the output cannot be
 * written; TS_ERROR_INPUT when a file to resume is not this sweep's or is
 * not a regular file; TS_ERROR_USAGE when OUTPUT holds rows and neither
 * --resume nor --force is given, or another process holds its lock. */
gboolean sweep_run (const Sweep *sweep, const SweepOptions *options,
                    GError **error);

/* Joins the outputs of the N shards of a sweep, INPUTS (N paths, shard 1
 * first, regular files), into OUTPUT ("-" for stdout; a file is written
 * to a temporary file renamed into place): the same bytes as the sweep
 * run unsharded.
 * Without REPLACE, an existing OUTPUT that starts as the shards do (a
 * shard named where the output was meant) is not replaced. Fails
 * (TS_ERROR_INPUT) when a shard's first line (its sweep's identity) is
 * not shard K of the same sweep for the K-th input, the headers differ, a
 * shard ends in a partial row, or its rows are not exactly its shard's;
 * TS_ERROR_USAGE when OUTPUT is a shard or is not replaced; TS_ERROR_INPUT
 * when a shard cannot be read or is not a regular file; TS_ERROR_IO when
 * OUTPUT cannot be written. */
gboolean sweep_merge (const char *output, const char *const *inputs,
                      guint n_inputs, gboolean replace, GError **error);

/* Expands TEXT if it is an integer range, appending its values (gint64)
 * to OUT: "A..B" (A, A+1, ... B), "A..B+S" (step S), "A..BxF" (A, A*F,
 * A*F^2 ... up to B). Returns FALSE without setting ERROR when TEXT is
 * not a range (it does not start with "INTEGER.."); FALSE with ERROR
 * (TS_ERROR_INPUT) for a malformed or empty range (8..1) or one with more
 * than MAX_VALUES or SWEEP_MAX_AXIS_VALUES values; TRUE otherwise. */
/* A range is expanded into memory (some 100 bytes a value), the product
 * of the axes never is: an axis holds at most a million values, whatever
 * --max-points allows the product. */
#define SWEEP_MAX_AXIS_VALUES 1000000
gboolean sweep_expand_range (const char *text, guint64 max_values, GArray *out,
                             GError **error);
