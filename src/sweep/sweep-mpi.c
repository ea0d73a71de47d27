/* sweep-mpi.c: a sweep across the ranks of an MPI job (sweep-mpi.h).
 *
 * Rank 0 coordinates; every other rank is a worker. The conversation, all
 * on MPI_COMM_WORLD, a worker speaking only when spoken to after its first
 * word, so that each worker has at most one message in flight either way:
 *
 *   worker                          rank 0
 *   ASK (no bytes)          ->                    once, at the start
 *                           <-      POINT (uint64: the point to run)
 *   ROW (the row's bytes)   ->                    or FAIL ("CODE message")
 *                           <-      POINT ...
 *   ...
 *                           <-      STOP (int: 0, or 1 + the error code)
 *
 * Rank 0 keeps, for each worker, the slot it runs, and puts the rows in a
 * ring of WINDOW slots as sweep.c's threaded run does: a point is handed
 * out only once its slot is below next + WINDOW (next: the first slot whose
 * row is not written), so a worker that asks while the ring is full waits
 * for the rows before to come in, and memory stays bounded. Rows are
 * written as the prefix completes, through the same output as sweep_run.
 *
 * A failure stops the handing out: rank 0 waits for the last word of each
 * worker still running a point (writing the rows before a failed point, as
 * the threaded run does), then sends every worker STOP with the failure's
 * code, so that every rank exits with the same status and none is left
 * waiting; no MPI_Abort. */
#include "sweep/sweep-mpi.h"

#include <mpi.h>
#include <string.h>

#include "base/errors.h"
#include "sweep/sweep-private.h"
#include "sweep/sweep.h"

enum {
  TAG_ASK = 1,
  TAG_POINT,
  TAG_ROW,
  TAG_FAIL,
  TAG_STOP,
};

/* An error's code in TS_ERROR, which is what crosses between ranks; an
 * error of another domain (GLib's file errors) is an I/O failure. */
static int
error_code (const GError *error)
{
  return error->domain == TS_ERROR ? error->code : TS_ERROR_IO;
}

/* The non-negative integer in the environment variable NAME. */
static gboolean
env_int (const char *name, int *out)
{
  const char *text = g_getenv (name);
  guint64 n;

  if (text == NULL || !g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT, &n, NULL))
    return FALSE;
  *out = (int) n;
  return TRUE;
}

gboolean
sweep_mpi_launched (int *rank)
{
  /* Size and rank, as each launcher exports them to its processes. */
  static const char *const launchers[][2] = {
    { "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK" },  /* Open MPI's mpirun */
    { "PMI_SIZE", "PMI_RANK" },  /* MPICH's mpiexec (Hydra), srun --mpi=pmi2 */
  };

  for (guint i = 0; i < G_N_ELEMENTS (launchers); i++)
    {
      int size;

      if (env_int (launchers[i][0], &size) && env_int (launchers[i][1], rank))
        return size >= 2;
    }
  return FALSE;
}

int
sweep_mpi_start (void)
{
  int rank;

  /* One thread per rank calls MPI, and no other thread runs meanwhile. */
  MPI_Init (NULL, NULL);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  return rank;
}

void
sweep_mpi_finish (void)
{
  MPI_Finalize ();
}

gboolean
sweep_mpi_agree (GError **error)
{
  g_autofree int *failed = NULL;
  g_autofree char *message = NULL;
  int rank, size, mine = *error != NULL, root = -1;
  int head[2] = { 0, 0 };  /* the error's code and its message's length */

  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  failed = g_new (int, size);
  MPI_Allgather (&mine, 1, MPI_INT, failed, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = size - 1; r >= 0; r--)
    if (failed[r])
      root = r;
  if (root < 0)
    return TRUE;

  if (rank == root)
    {
      head[0] = error_code (*error);
      head[1] = (int) strlen ((*error)->message);
    }
  MPI_Bcast (head, 2, MPI_INT, root, MPI_COMM_WORLD);
  message = g_malloc0 ((gsize) head[1] + 1);
  if (rank == root)
    memcpy (message, (*error)->message, (gsize) head[1]);
  MPI_Bcast (message, head[1], MPI_CHAR, root, MPI_COMM_WORLD);
  g_clear_error (error);
  if (root == 0)
    g_set_error_literal (error, TS_ERROR, head[0], message);
  else
    g_set_error (error, TS_ERROR, head[0], "rank %d: %s", root, message);
  return FALSE;
}

/* ---------------------------------------------------------------- worker */

static gboolean
work (const Sweep *sweep, const SweepOptions *o, GError **error)
{
  g_autoptr (GString) row = g_string_new (NULL);
  MPI_Status status;
  guint64 point;
  int stop;

  MPI_Send (NULL, 0, MPI_CHAR, 0, TAG_ASK, MPI_COMM_WORLD);
  for (;;)
    {
      g_autoptr (GError) local = NULL;

      MPI_Probe (0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == TAG_STOP)
        break;
      g_assert (status.MPI_TAG == TAG_POINT);
      MPI_Recv (&point, 1, MPI_UINT64_T, 0, TAG_POINT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      g_string_truncate (row, 0);
      if (sweep_point_row (sweep, point, o, row, NULL, &local))
        MPI_Send (row->str, (int) row->len, MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD);
      else
        {
          g_string_printf (row, "%d %s", error_code (local), local->message);
          MPI_Send (row->str, (int) row->len, MPI_CHAR, 0, TAG_FAIL, MPI_COMM_WORLD);
        }
    }
  MPI_Recv (&stop, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (stop == 0)
    return TRUE;
  g_set_error (error, TS_ERROR, stop - 1, "the sweep failed; rank 0 says why");
  return FALSE;
}

/* ----------------------------------------------------------- coordinator */

/* The next message of any worker: its bytes, NUL-terminated; *WORKER and
 * *TAG say whose and which. */
static GString *
receive (int *worker, int *tag)
{
  MPI_Status status;
  GString *bytes;
  int count;

  MPI_Probe (MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  MPI_Get_count (&status, MPI_CHAR, &count);
  bytes = g_string_sized_new ((gsize) count + 1);
  g_string_set_size (bytes, (gsize) count);
  MPI_Recv (bytes->str, count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG,
            MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  *worker = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  return bytes;
}

/* A worker's FAIL, "CODE message", as an error. */
static GError *
fail_error (int worker, const char *text)
{
  char *end;
  gint64 code = g_ascii_strtoll (text, &end, 10);

  if (end == text || *end != ' ' || code < 0 || code > TS_ERROR_IO)
    return g_error_new (TS_ERROR, TS_ERROR_IO, "rank %d: %s", worker, text);
  return g_error_new (TS_ERROR, (int) code, "rank %d: %s", worker, end + 1);
}

static gboolean
coordinate (const Sweep *sweep, const SweepOptions *o, int size, GError **error)
{
  g_autoptr (GString) batch = g_string_new (NULL);
  g_autoptr (GError) fatal = NULL;       /* the failure of the lowest failed slot */
  g_autofree guint64 *slot_of = g_new0 (guint64, size);  /* worker -> its slot */
  g_autofree int *idle = g_new (int, size);              /* workers waiting: a stack */
  guint window = sweep_window ((guint) size - 1);
  g_autofree GString **ring = g_new0 (GString *, window); /* slot % window -> row */
  guint64 next = 0, queued = 0, fatal_slot = 0;
  int n_idle = 0, busy = size - 1;       /* busy: workers whose word is awaited */
  gboolean opened, ok;
  SweepOutput output;
  int stop;

  ok = opened = sweep_output_open (&output, sweep, o, error);
  if (ok)
    next = queued = output.resumed;
  while (ok && next < output.end)
    {
      g_autoptr (GString) bytes = NULL;
      int worker, tag;

      for (; fatal == NULL && n_idle > 0 && queued < output.end && queued < next + window;
           queued++)
        {
          guint64 point = sweep_slot_point (o, queued);
          int to = idle[--n_idle];

          slot_of[to] = queued;
          busy++;
          MPI_Send (&point, 1, MPI_UINT64_T, to, TAG_POINT, MPI_COMM_WORLD);
        }
      /* Slot NEXT is handed out and its row not yet back. */
      g_assert (busy > 0);
      bytes = receive (&worker, &tag);
      busy--;
      idle[n_idle++] = worker;
      if (tag == TAG_ROW)
        ring[slot_of[worker] % window] = g_steal_pointer (&bytes);
      else if (tag == TAG_FAIL && (fatal == NULL || slot_of[worker] < fatal_slot))
        {
          g_clear_error (&fatal);
          fatal = fail_error (worker, bytes->str);
          fatal_slot = slot_of[worker];
        }
      for (; next < output.end && ring[next % window] != NULL; next++)
        {
          GString *row = g_steal_pointer (&ring[next % window]);

          g_string_append_len (batch, row->str, (gssize) row->len);
          g_string_free (row, TRUE);
        }
      ok = sweep_output_write (&output, batch, next, error);
      g_string_truncate (batch, 0);
      if (ok && fatal != NULL && fatal_slot == next)
        {
          g_propagate_error (error, g_steal_pointer (&fatal));
          ok = FALSE;
        }
    }
  if (opened)
    ok = sweep_output_close (&output, ok, error);

  /* Every worker waits for a word: the busy ones once they have sent
   * theirs (dropped: the run is over), the idle ones already. */
  while (busy > 0)
    {
      int worker, tag;

      g_string_free (receive (&worker, &tag), TRUE);
      busy--;
    }
  stop = ok ? 0 : 1 + error_code (*error);
  for (int r = 1; r < size; r++)
    MPI_Send (&stop, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
  for (guint i = 0; i < window; i++)
    if (ring[i] != NULL)
      g_string_free (ring[i], TRUE);
  return ok;
}

gboolean
sweep_mpi_run (const Sweep *sweep, const SweepOptions *options, GError **error)
{
  int rank, size;

  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  /* A launcher whose environment said "several ranks" but an MPI world
   * of one (a launcher of another MPI): the sweep runs on threads. */
  if (size < 2)
    return sweep_run (sweep, options, error);
  return rank == 0 ? coordinate (sweep, options, size, error)
                   : work (sweep, options, error);
}
