/* sweep-mpi.h: a sweep across the ranks of an MPI job, for a build with
 * ./configure --with-mpi (sweep-mpi.c is compiled only then).
 *
 * Under `mpirun -n N trainsim sweep ...` (N >= 2) every rank reads the same
 * command line and experiment; rank 0 hands out the points of the shard one
 * at a time as the other ranks ask for them, and writes the rows they send
 * back through the output sweep_run writes to, in point order: the same
 * bytes as a threaded sweep, --resume and --shard included. Rank 0 only
 * coordinates and writes; ranks 1..N-1 each run one point at a time. */
#pragma once

#include <glib.h>

#include "sweep/sweep.h"

/* Whether a launcher (Open MPI's mpirun, MPICH's mpiexec, srun
 * --mpi=pmi2) started this process as one rank of a job of two ranks or
 * more, read from the launcher's environment before MPI is initialised;
 * *RANK is then its rank. FALSE otherwise, with no launcher or with one
 * rank: the sweep then runs on threads, as in a build without MPI. */
gboolean sweep_mpi_launched (int *rank);

/* Initialises MPI and returns this process's rank. Call it once, after
 * sweep_mpi_launched; every rank must then call sweep_mpi_finish before
 * it exits, whatever happens in between. */
int sweep_mpi_start (void);
void sweep_mpi_finish (void);

/* Called by every rank once it has loaded and checked the sweep, with
 * *ERROR what stopped it there (NULL: ready). Returns TRUE when every rank
 * is ready; otherwise FALSE on every rank with the same *ERROR: rank 0's,
 * or else the lowest failed rank's, prefixed "rank K: ". Collective. */
gboolean sweep_mpi_agree (GError **error);

/* Runs SWEEP (checked, and the same on every rank) across the ranks, with
 * OPTIONS as for sweep_run except threads (each rank runs one point at a
 * time). Rank 0 fails as sweep_run does, or with a rank's failure to run a
 * point (prefixed "rank K: "); it then stops the other ranks, which return
 * FALSE with an error of the same code and a message only saying so: rank
 * 0 is the one to report it. Collective. */
gboolean sweep_mpi_run (const Sweep *sweep, const SweepOptions *options, GError **error);
