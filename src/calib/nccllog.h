/* nccllog.h: the output of nccl-tests (all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, sendrecv_perf) read back into its
 * rows, for `trainsim calibrate nccl`.
 *
 * What is read, as nccl-tests prints it (src/util.cu there):
 *   # Collective test starting: all_reduce_perf   (or the command line)
 *   # Using devices
 *   #  Rank  0 Group  0 Pid 1234 on node1 device  0 [0x07] NVIDIA A100-SXM4-80GB
 *   #       size  count  type  redop  root  time  algbw  busbw  #wrong  time ...
 *          1024    256  float    sum    -1  12.34   0.08   0.15       0  12.1 ...
 *   # Avg bus bandwidth    : 98.7
 * The column header line names the columns, so the versions that print no
 * "root" or "redop" column, "error" for "#wrong", "cputime" for "time"
 * (-C 1), per-iteration statistics or a timestamp all read alike; a cell
 * may be "N/A" where nccl-tests prints it (#wrong without checking). Older
 * versions print no "Group" in the device lines. A row may stop after
 * its out-of-place half (a log trimmed by hand).
 *
 * NCCL's own INFO and WARN lines, mpirun's and anything else that is
 * neither a comment nor a row starting with a number are passed over. */
#pragma once

#include <glib.h>

typedef struct {
  guint line;        /* in the file, from 1 */
  double bytes;      /* the size column */
  /* The mean of the out-of-place time and the in-place one where the row
   * has it: two timings of the same collective. */
  double seconds;
} NcclRow;

typedef struct {
  char *path;        /* owned: as given, for messages */
  /* The test the log names (a CollKind), or -1 where it names none (an
   * older log pasted without its command line). */
  int op;
  guint op_line;
  /* From the device list: ranks in all, the hosts they ran on and the
   * ranks on each host (nccl-tests runs the same number on each); all 0
   * where the log has no device list. */
  int ranks;
  int hosts;
  int per_node;
  guint devices_line;
  guint header_line; /* the column header's */
  GArray *rows;      /* owned: NcclRow, rows of 0 bytes left out */
  guint zero_rows;   /* those left out: their time is the launch alone */
  double avg_busbw;  /* "# Avg bus bandwidth", bytes/s; -1 when absent */
} NcclLog;

/* Parses TEXT (LEN bytes) read from PATH (named in messages). Fails with
 * TS_ERROR_INPUT, "PATH:LINE: ..." saying what was expected, on a text
 * that is not nccl-tests output (no column header, or no row after it), a
 * row that does not parse, a device list that is not one run's (a rank
 * listed twice, unequal ranks per host, a second list), or a test that
 * trainsim does not model (broadcast_perf). */
NcclLog *nccllog_parse (const char *path, const char *text, gsize len,
                        GError **error);
/* Reads PATH (base/input.h's limits) and parses it. */
NcclLog *nccllog_read (const char *path, GError **error);
void nccllog_free (NcclLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NcclLog, nccllog_free)
