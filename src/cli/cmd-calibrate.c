/* cmd-calibrate.c: `trainsim calibrate`: fits a topology's link constants,
 * a device's GEMM efficiency or the host's kernel launch time to a user's
 * own measurements (nccl-tests logs, a GEMM sweep, a launch benchmark),
 * and writes them as a YAML fragment with the fit's residuals, so that a
 * cluster's predictions start from its own numbers. The fits are in
 * calib/calib.c; this file reads the inputs and says what came out. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/units.h"
#include "calib/calib.h"
#include "calib/nccllog.h"
#include "config/config.h"
#include "net/net.h"
#include "output/plot-table.h"
#include "output/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shared ------------------------------------------------------------- */

/* A time as the topology files write one: 2.35us, 850ns, 1.2ms. */
static char *
time_text (double seconds)
{
  if (seconds < 1e-6)
    return g_strdup_printf ("%.3gns", seconds * 1e9);
  if (seconds < 1e-3)
    return g_strdup_printf ("%.3gus", seconds * 1e6);
  return g_strdup_printf ("%.3gms", seconds * 1e3);
}

/* A signed relative error, "+4.1 %": negative where the model is fast. */
static void
append_error (GString *out, double predicted, double measured)
{
  double e = (predicted / measured - 1) * 100;
  /* What rounds to zero prints as +0.0, whichever side it fell on. */
  g_string_append_printf (out, "  %+7.1f %%\n", fabs (e) < 0.05 ? 0.0 : e);
}

/* Says REPORT (comment lines: the fit and its residuals) on stdout, and
 * writes FRAGMENT (the values, with a comment saying where they came
 * from) to OUTPUT, or after the report on stdout where OUTPUT is NULL or
 * "-": a file that is all comments but the values, so that either way
 * the output reads as YAML. report_write says when stdout fails too. */
static int
write_result (GString *report, const GString *fragment, const char *output)
{
  g_autoptr (GError) error = NULL;
  if (output == NULL || strcmp (output, "-") == 0)
    g_string_append (report, fragment->str);
  else if (!report_write (output, fragment, &error))
    return cli_fail (error);
  return report_write (NULL, report, &error) ? 0 : cli_fail (error);
}

/* What a kind of calibration reads: its inputs must not be the output. */
static gboolean
output_over_inputs (const char *command, const char *output, char **inputs,
                    int n)
{
  for (int i = 0; i < n; i++)
    if (cli_output_is_input (command, output, inputs[i]))
      return TRUE;
  return FALSE;
}

/* The option every kind has: where the fragment goes. */
#define OUTPUT_OPTION(var)                                                   \
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &(var),                         \
    "Write the fragment to FILE (default: standard output, after the report)", \
    "FILE" }

/* Parses a kind's options, ENTRIES, with a --help of PARAMETERS, SUMMARY
 * and DESCRIPTION, and checks that MIN_ARGS to MAX_ARGS arguments remain
 * (WHAT says which, for the error); FALSE, having said why, on bad usage
 * (exit 2). */
static gboolean
parse_kind (int *argc, char ***argv, const GOptionEntry *entries,
            const char *parameters, const char *summary, const char *description,
            int min_args, int max_args, const char *what)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameters);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, argc, argv))
    return FALSE;
  int n = *argc - 1;
  if (n >= min_args && n <= max_args)
    return TRUE;
  cli_printerr ("trainsim %s: expected %s, got %d argument%s", (*argv)[0], what, n,
                n == 1 ? "" : "s");
  cli_try_help ((*argv)[0]);
  return FALSE;
}

/* ---- nccl: a link, from nccl-tests logs -------------------------------- */

/* One log's rows, as the fit and the table take them. */
typedef struct {
  NcclLog *log;        /* owned */
  CollKind op;
  int ranks, per_node;
  gboolean assumed;    /* no device list: one node of the topology */
  guint outside;       /* rows outside --min-size and --max-size */
} LogRun;

static void
log_run_clear (gpointer p)
{
  nccllog_free (((LogRun *) p)->log);
}

/* The op, ranks and ranks per node of LOG's run, from the log or, where
 * it does not say, from the options (OP < 0, GPUS and PER_NODE 0: not
 * given), against the topology T. */
static gboolean
resolve_run (LogRun *run, const TopologySpec *t, int op, int gpus, int per_node,
             GError **error)
{
  const NcclLog *log = run->log;
  if (log->op >= 0 && op >= 0 && log->op != op)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: the log runs %s_perf, but "
                   "--op says %s", log->path, log->op_line,
                   spec_enum_name (SPEC_ENUM_COLLECTIVE, log->op),
                   spec_enum_name (SPEC_ENUM_COLLECTIVE, op));
      return FALSE;
    }
  if (log->op < 0 && op < 0)
    {
      g_autofree char *known = spec_enum_list (SPEC_ENUM_COLLECTIVE);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: the log does not name its test "
                   "(no '# Collective test starting: all_reduce_perf' or command line): "
                   "give it with --op (%s)", log->path, known);
      return FALSE;
    }
  run->op = (CollKind) (log->op >= 0 ? log->op : op);
  if (log->ranks > 0)
    {
      if ((gpus > 0 && gpus != log->ranks) || (per_node > 0 && per_node != log->per_node))
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: the log lists %d ranks, "
                       "%d on each of %d hosts, which --gpus or --per-node contradict: "
                       "they are for logs without a device list", log->path,
                       log->devices_line, log->ranks, log->per_node, log->hosts);
          return FALSE;
        }
      run->ranks = log->ranks;
      run->per_node = log->per_node;
    }
  else
    {
      /* As `trainsim collective`: one node unless told otherwise. */
      run->per_node = per_node > 0 ? per_node : gpus > 0 ? MIN (gpus, t->gpus_per_node)
                                                         : t->gpus_per_node;
      run->ranks = gpus > 0 ? gpus : run->per_node;
      run->assumed = gpus <= 0;
    }
  const char *problem = NULL;
  int nodes = run->ranks / MAX (run->per_node, 1);
  if (run->ranks < 2)
    problem = "a collective needs at least 2 ranks";
  else if (run->per_node < 1 || run->ranks % run->per_node != 0)
    problem = "the ranks must fill whole nodes, as many on each";
  else if (run->per_node > t->gpus_per_node)
    problem = "more ranks on a node than the topology's nodes have GPUs";
  else if (nodes > 1 && t->inter_node.nics_per_node == 0)
    problem = "the run spans nodes, but the topology has no inter_node network";
  else if (t->inter_node.fabric.placement == PLACEMENT_SPREAD
           && nodes > (int64_t) t->inter_node.fabric.groups
                      * t->inter_node.fabric.nodes_per_group)
    problem = "with placement spread, the nodes must fit in the fabric's groups x "
              "nodes_per_group";
  if (problem != NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %d ranks, %d on each node: "
                   "%s (the topology's nodes have %d GPUs)", log->path,
                   log->ranks > 0 ? log->devices_line : 1, run->ranks, run->per_node,
                   problem, t->gpus_per_node);
      return FALSE;
    }
  return TRUE;
}

/* "the intra-node link (nvswitch, 300 GB/s a GPU)". */
static char *
link_description (const TopologySpec *t, CalibLink link)
{
  if (link == CALIB_INTRA_NODE)
    return g_strdup_printf ("the intra-node link (%s, %g GB/s a GPU)",
                            spec_enum_name (SPEC_ENUM_LINK, t->intra_node.link),
                            t->intra_node.bandwidth / 1e9);
  return g_strdup_printf ("the inter-node link (%s, %d x %g Gb/s a node)",
                          spec_enum_name (SPEC_ENUM_LINK, t->inter_node.link),
                          t->inter_node.nics_per_node,
                          t->inter_node.nic_bandwidth * 8 / 1e9);
}

/* The residual table: a line per row fitted, WHERE (its log's name and
 * line) and what it measured. */
static void
append_link_table (GString *out, const GPtrArray *where, const CalibCollRow *rows,
                   const double *predicted)
{
  int w = 3;
  for (guint i = 0; i < where->len; i++)
    w = MAX (w, (int) strlen (g_ptr_array_index (where, i)));
  g_string_append_printf (out, "#\n# %-*s %-14s %5s %12s %9s %9s %9s\n", w, "row", "op",
                          "ranks", "size", "busbw", "fitted", "error");
  g_string_append_printf (out, "# %-*s %-14s %5s %12s %9s %9s %9s\n", w, "", "", "",
                          "(B)", "(GB/s)", "(GB/s)", "(time)");
  for (guint i = 0; i < where->len; i++)
    {
      const CalibCollRow *c = &rows[i];
      g_string_append_printf (out, "# %-*s %-14s %5d %12.0f %9.2f %9.2f", w,
                              (const char *) g_ptr_array_index (where, i),
                              spec_enum_name (SPEC_ENUM_COLLECTIVE, c->op), c->ranks,
                              c->bytes,
                              net_bus_bandwidth (c->op, c->bytes, c->ranks, c->seconds) / 1e9,
                              net_bus_bandwidth (c->op, c->bytes, c->ranks, predicted[i]) / 1e9);
      append_error (out, predicted[i], c->seconds);
    }
}

/* What each log said beyond its rows: what was assumed, left out, or
 * missing. */
static void
append_log_notes (GString *out, const GArray *runs)
{
  for (guint r = 0; r < runs->len; r++)
    {
      const LogRun *run = &g_array_index (runs, LogRun, r);
      const NcclLog *log = run->log;
      g_string_append_printf (out, "# %s: %s_perf, %d ranks", log->path,
                              spec_enum_name (SPEC_ENUM_COLLECTIVE, run->op), run->ranks);
      if (run->ranks == run->per_node)
        g_string_append (out, " on one node");
      else
        g_string_append_printf (out, ", %d on each of %d nodes", run->per_node,
                                run->ranks / run->per_node);
      if (run->assumed)
        g_string_append (out, " (no device list: one node of the topology, as "
                              "`trainsim collective`; --gpus and --per-node say otherwise)");
      else if (log->ranks == 0)
        g_string_append (out, " (no device list: as --gpus and --per-node say)");
      g_string_append_c (out, '\n');
      if (log->zero_rows > 0)
        g_string_append_printf (out, "#   %u row%s of 0 bytes left out (a launch alone)\n",
                                log->zero_rows, log->zero_rows == 1 ? "" : "s");
      if (run->outside > 0)
        g_string_append_printf (out, "#   %u row%s outside --min-size and --max-size left "
                                "out\n", run->outside, run->outside == 1 ? "" : "s");
      if (log->avg_busbw >= 0)
        g_string_append_printf (out, "#   its '# Avg bus bandwidth': %g GB/s (over every "
                                "row, out-of-place and in-place)\n", log->avg_busbw / 1e9);
      else
        g_string_append (out, "#   no '# Avg bus bandwidth' line: the run may have been "
                              "cut short\n");
    }
}

static int
calibrate_nccl (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *op_name = NULL, *output = NULL, *min_text = NULL, *max_text = NULL;
  int gpus = 0, per_node = 0;
  GOptionEntry entries[] = {
    OUTPUT_OPTION (output),
    { "op", 0, 0, G_OPTION_ARG_STRING, &op_name,
      "The collective of logs that do not name their test: all_reduce, "
      "reduce_scatter, all_gather, alltoall or sendrecv", "OP" },
    { "gpus", 'g', 0, G_OPTION_ARG_INT, &gpus,
      "Ranks in all, for logs without a device list (default: one node's GPUs)", "N" },
    { "per-node", 'p', 0, G_OPTION_ARG_INT, &per_node,
      "Ranks per node, for logs without a device list", "N" },
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the topology (repeatable), e.g. "
      "inter_node.nics_per_node=1", "KEY=VALUE" },
    { "min-size", 0, 0, G_OPTION_ARG_STRING, &min_text,
      "Fit only rows of this size and above, such as 1MiB", "SIZE" },
    { "max-size", 0, 0, G_OPTION_ARG_STRING, &max_text,
      "Fit only rows of this size and below, such as 1GiB", "SIZE" },
    { NULL }
  };
  if (!parse_kind (&argc, &argv, entries, "TOPOLOGY LOG...",
    "Fits the efficiency and the step latency of the link that nccl-tests LOGs\n"
    "exercise (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
    "alltoall_perf, sendrecv_perf output) on TOPOLOGY: the intra-node link when\n"
    "every rank ran on one host, the inter-node link (the intra-node constants\n"
    "held) when they spanned hosts. Each row is timed as `trainsim collective`\n"
    "times it; the values kept are those with the least mean absolute relative\n"
    "error in time over the rows. Prints the fit and a residual table, and the\n"
    "values as a YAML fragment for the topology.",
    "Example: trainsim calibrate nccl selene all_reduce_perf.log -o nvswitch.yaml\n\n"
    "The log's device list ('#  Rank 0 Group 0 Pid ... on HOST device 0 ...')\n"
    "gives the ranks and the hosts. Where latency is under 1 % of every row's\n"
    "time (large sizes only), the rows cannot fix it: the topology's is kept.\n\n"
    "Exit status: 0 success; 1 the fragment could not be written; 2 bad usage\n"
    "or input (a log that is not nccl-tests output, too few rows).",
    2, G_MAXINT, "a topology and at least one log"))
    return 2;
  int op = -1;
  if (op_name != NULL && (op = spec_enum_parse (SPEC_ENUM_COLLECTIVE, op_name)) < 0)
    {
      g_autofree char *known = spec_enum_list (SPEC_ENUM_COLLECTIVE);
      cli_printerr ("trainsim %s: unknown --op '%s' (valid: %s)", argv[0], op_name,
                    known);
      return 2;
    }
  if (gpus < 0 || per_node < 0)
    {
      cli_printerr ("trainsim %s: --gpus and --per-node take a count above 0",
                    argv[0]);
      return 2;
    }
  /* The sizes a training step's collectives have, for a fit that should
   * hold there rather than over the whole sweep. */
  double min_size = 0, max_size = INFINITY;
  g_autofree char *why = NULL;
  if ((min_text != NULL && !units_parse (min_text, UNIT_BYTES, &min_size, &why))
      || (max_text != NULL && !units_parse (max_text, UNIT_BYTES, &max_size, &why))
      || min_size > max_size)
    {
      cli_printerr ("trainsim %s: --min-size and --max-size take sizes with their "
                    "unit, such as 1MiB or 4GB, the first no larger than the second",
                    argv[0]);
      return 2;
    }
  if (output_over_inputs (argv[0], output, argv + 2, argc - 2))
    return 2;

  g_autoptr (GError) error = NULL;
  TopologySpec t;
  if (!config_load_topology (argv[1], (const char *const *) sets, &t, &error))
    return cli_fail (error);
  g_autoptr (GArray) runs = g_array_new (FALSE, TRUE, sizeof (LogRun));
  g_array_set_clear_func (runs, log_run_clear);
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (CalibCollRow));
  g_autoptr (GPtrArray) where = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) sizes = g_hash_table_new_full (g_int64_hash, g_int64_equal,
                                                        g_free, NULL);
  int status = 0;
  CalibLink link = CALIB_INTRA_NODE;
  for (int a = 2; a < argc && status == 0; a++)
    {
      LogRun run = { nccllog_read (argv[a], &error) };
      if (run.log == NULL)
        {
          status = cli_fail (error);
          break;
        }
      g_array_append_val (runs, run);
      LogRun *r = &g_array_index (runs, LogRun, runs->len - 1);
      if (!resolve_run (r, &t, op, gpus, per_node, &error))
        {
          status = cli_fail (error);
          break;
        }
      CalibLink l = r->ranks > r->per_node ? CALIB_INTER_NODE : CALIB_INTRA_NODE;
      if (a > 2 && l != link)
        {
          cli_printerr ("trainsim: %s runs on %s, %s on %s: calibrate the "
                        "intra-node link with the one-node logs first, then the "
                        "inter-node link with the others, the first's values set",
                   argv[2], link == CALIB_INTRA_NODE ? "one node" : "several nodes",
                   argv[a], l == CALIB_INTRA_NODE ? "one node" : "several");
          status = 2;
          break;
        }
      link = l;
      g_autofree char *base = g_path_get_basename (r->log->path);
      for (guint j = 0; j < r->log->rows->len; j++)
        {
          const NcclRow *row = &g_array_index (r->log->rows, NcclRow, j);
          if (row->bytes < min_size || row->bytes > max_size)
            {
              r->outside++;
              continue;
            }
          CalibCollRow c = { r->op, row->bytes, r->ranks, r->per_node, row->seconds };
          g_array_append_val (rows, c);
          g_ptr_array_add (where, g_strdup_printf ("%s:%u", base, row->line));
          /* Sizes held exactly: at most 15 digits (nccllog.c). */
          gint64 *size = g_new (gint64, 1);
          *size = (gint64) row->bytes;
          g_hash_table_add (sizes, size);
        }
    }
  if (status == 0 && g_hash_table_size (sizes) < 2)
    {
      const NcclLog *last = g_array_index (runs, LogRun, runs->len - 1).log;
      cli_printerr ("trainsim: %s:%u: %u row%s of %s: fitting an efficiency and a "
                    "latency needs rows of at least 2 sizes (nccl-tests -b, -e, -f)%s",
               last->path, last->header_line, rows->len, rows->len == 1 ? "" : "s",
               rows->len == 0 ? "any size" : "one size",
               min_text || max_text ? ", within --min-size and --max-size" : "");
      status = 2;
    }
  if (status != 0)
    {
      topology_spec_clear (&t);
      return status;
    }

  g_autofree double *predicted = g_new (double, rows->len);
  CalibLinkFit fit;
  calib_fit_link (&t, link, (const CalibCollRow *) (void *) rows->data, rows->len, &fit,
                  predicted);

  const char *key = link == CALIB_INTRA_NODE ? "intra_node" : "inter_node";
  const char *topology = t.name != NULL ? t.name : argv[1];
  g_autofree char *described = link_description (&t, link);
  g_autofree char *lat = time_text (fit.latency_s);
  g_autofree char *lat_before = time_text (fit.latency_before_s);
  g_autoptr (GString) logs = g_string_new (NULL);
  for (int a = 2; a < argc; a++)
    g_string_append_printf (logs, "%s%s", a > 2 ? ", " : "", argv[a]);

  g_autoptr (GString) report = g_string_new (NULL);
  g_string_append_printf (report, "# trainsim calibrate nccl: %s of %s, fitted to %u rows\n",
                          described, topology, rows->len);
  append_log_notes (report, runs);
  g_string_append_printf (report, "# efficiency %.3f (the topology's: %.3f); latency %s a "
                          "step (%s)%s\n", fit.efficiency, fit.efficiency_before, lat,
                          lat_before, fit.latency_fitted ? ""
                          : ", kept: under 1 % of every row's time, the rows cannot fix it");
  if (fit.efficiency >= CALIB_EFFICIENCY_MAX * 0.999)
    g_string_append (report, "# the efficiency is at the search's top (1): the rows run "
                             "faster than the link's bandwidth allows; check it\n");
  g_string_append_printf (report, "# MAPE %.1f %% over the rows (the topology's constants: "
                          "%.1f %%)\n", fit.mape * 100, fit.mape_before * 100);
  append_link_table (report, where, (const CalibCollRow *) (void *) rows->data, predicted);

  g_autoptr (GString) fragment = g_string_new (NULL);
  g_string_append_printf (fragment, "# trainsim calibrate nccl: fitted to %s (%u rows) on %s; "
                          "MAPE %.1f %% (%.1f %% before)\n", logs->str, rows->len,
                          topology, fit.mape * 100, fit.mape_before * 100);
  if (fit.latency_fitted)
    g_string_append_printf (fragment, "# merge into the topology's %s, or give --set "
                            "%s.efficiency=%.3f --set %s.latency=%s\n"
                            "%s: {efficiency: %.3f, latency: %s}\n", key, key,
                            fit.efficiency, key, lat, key, fit.efficiency, lat);
  else
    g_string_append_printf (fragment, "# merge into the topology's %s, or give --set "
                            "%s.efficiency=%.3f\n%s: {efficiency: %.3f}\n", key, key,
                            fit.efficiency, key, fit.efficiency);
  topology_spec_clear (&t);
  return write_result (report, fragment, output);
}

/* ---- gemm: a device's matmul_efficiency, from timed GEMMs ---------------- */

/* torch's names for the precisions, beside trainsim's own. */
static const struct {
  const char *alias;
  Precision precision;
} dtype_aliases[] = {
  { "float16", PRECISION_FP16 }, { "half", PRECISION_FP16 },
  { "bfloat16", PRECISION_BF16 }, { "float32", PRECISION_FP32 },
  { "float", PRECISION_FP32 },
};

static int
parse_dtype (const char *name)
{
  int p = spec_enum_parse (SPEC_ENUM_PRECISION, name);
  for (guint i = 0; p < 0 && i < G_N_ELEMENTS (dtype_aliases); i++)
    if (g_ascii_strcasecmp (name, dtype_aliases[i].alias) == 0)
      p = dtype_aliases[i].precision;
  return p;
}

/* The largest GEMM size taken: 2^30, beyond any matrix a GPU holds. */
#define MAX_GEMM_SIZE 1073741824.0

/* Cell ROW, COL of T as a GEMM size: a whole number from 1 to
 * MAX_GEMM_SIZE. */
static gboolean
gemm_size (const PlotTable *t, guint row, int col, int64_t *out, GError **error)
{
  double v;
  if (!plot_table_positive (t, row, col, "a size", &v, error))
    return FALSE;
  if (v != floor (v) || v > MAX_GEMM_SIZE)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: expected a whole number from "
                   "1 to 2^30 in column %s", plot_table_name (t), plot_table_line (t, row),
                   plot_table_column_name (t, col));
      return FALSE;
    }
  *out = (int64_t) v;
  return TRUE;
}

/* The columns of a GEMM table; of time, time_us and tflops one is given. */
typedef struct {
  int m, n, k, dtype, batch, measure;
  double measure_scale;   /* seconds per unit of a time column; 0: tflops */
} GemmColumns;

/* What a GEMM table is: said when a file is not one, or lacks a column. */
#define GEMM_TABLE "a GEMM table: expected a header naming the columns m, n, k, " \
  "dtype and one of time (seconds), time_us or tflops (the measured TFLOP/s), and " \
  "batch if the products are batched"

static gboolean
gemm_columns (const PlotTable *t, GemmColumns *c, GError **error)
{
  static const char *const measures[] = { "time", "time_us", "tflops" };
  static const double scales[] = { 1, 1e-6, 0 };
  c->m = plot_table_column (t, "m");
  c->n = plot_table_column (t, "n");
  c->k = plot_table_column (t, "k");
  c->dtype = plot_table_column (t, "dtype");
  c->batch = plot_table_column (t, "batch");
  c->measure = -1;
  c->measure_scale = 1;
  int measures_given = 0;
  for (guint i = 0; i < G_N_ELEMENTS (measures); i++)
    if (plot_table_column (t, measures[i]) >= 0)
      {
        c->measure = plot_table_column (t, measures[i]);
        c->measure_scale = scales[i];
        measures_given++;
      }
  /* (A header naming none of them, some other file, was refused unquoted
   * by plot_table_read.) */
  if (c->m < 0 || c->n < 0 || c->k < 0 || c->dtype < 0 || measures_given != 1)
    {
      g_autofree char *have = plot_table_columns (t);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %s; it names %s",
                   plot_table_name (t), plot_table_header_line (t),
                   strchr (GEMM_TABLE, ':') + 2, have);
      return FALSE;
    }
  return TRUE;
}

/* The GEMMs of T, each checked, into ROWS. */
static gboolean
gemm_rows (const PlotTable *t, const DeviceSpec *device, GArray *rows, GError **error)
{
  const char *path = plot_table_name (t);
  GemmColumns c;
  if (!gemm_columns (t, &c, error))
    return FALSE;
  for (guint i = 0; i < plot_table_n_rows (t); i++)
    {
      CalibGemmRow g = { .batch = 1 };
      guint line = plot_table_line (t, i);
      const char *dtype = plot_table_cell (t, i, c.dtype);
      double measure;
      if ((c.batch >= 0 && !gemm_size (t, i, c.batch, &g.batch, error))
          || !gemm_size (t, i, c.m, &g.m, error) || !gemm_size (t, i, c.n, &g.n, error)
          || !gemm_size (t, i, c.k, &g.k, error)
          || !plot_table_positive (t, i, c.measure, c.measure_scale > 0 ? "a time"
                                   : "a rate in TFLOP/s", &measure, error))
        return FALSE;
      int p = parse_dtype (dtype);
      if (p < 0)
        {
          g_autofree char *known = spec_enum_list (SPEC_ENUM_PRECISION);
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: expected a dtype in column "
                       "dtype: %s (or torch's float16, bfloat16, float32)", path, line,
                       known);
          return FALSE;
        }
      g.precision = (Precision) p;
      double peak = device->peak_flops[p];
      if (!(peak > 0))
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: the device %s gives no %s "
                       "peak", path, line, device->name ? device->name : "",
                       spec_enum_name (SPEC_ENUM_PRECISION, p));
          return FALSE;
        }
      double flops = 2.0 * (double) g.batch * (double) g.m * (double) g.n * (double) g.k;
      g.seconds = c.measure_scale > 0 ? measure * c.measure_scale : flops / (measure * 1e12);
      /* Faster than the device's peak is a unit slip (milliseconds in a
       * column of seconds), not a measurement. */
      if (flops / g.seconds > peak)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %.4g TFLOP/s, above the "
                       "%s peak of %s (%.4g): is column %s in its unit (time: seconds, "
                       "time_us: microseconds)?", path, line, flops / g.seconds / 1e12,
                       spec_enum_name (SPEC_ENUM_PRECISION, p),
                       device->name ? device->name : "the device", peak / 1e12,
                       plot_table_column_name (t, c.measure));
          return FALSE;
        }
      g_array_append_val (rows, g);
    }
  if (rows->len < 2)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %u GEMM%s after the header: "
                   "fitting needs at least 2", path, plot_table_header_line (t), rows->len,
                   rows->len == 1 ? "" : "s");
      return FALSE;
    }
  return TRUE;
}

static int
calibrate_gemm (int argc, char **argv)
{
  g_autofree char *output = NULL;
  GOptionEntry entries[] = { OUTPUT_OPTION (output), { NULL } };
  if (!parse_kind (&argc, &argv, entries, "DEVICE CSV",
    "Fits DEVICE's matmul_efficiency, the fraction of peak that large GEMMs\n"
    "reach in trainsim's GEMM model (wave quantization, short k and alignment\n"
    "on top), to the GEMMs timed in CSV: the value with the least mean absolute\n"
    "relative error in time. DEVICE is a name from topologies/devices/ or a\n"
    "device file. Prints the fit and a residual table, and the value as a YAML\n"
    "fragment for the device.",
    "CSV: a header line, then one GEMM a row; '#' lines are comments. Columns:\n"
    "  m, n, k     the product (m x k) @ (k x n)\n"
    "  dtype       fp32, tf32, fp16 or bf16 (torch's float16, bfloat16, float32)\n"
    "  time        its time, seconds; or time_us, microseconds; or tflops, the\n"
    "              measured TFLOP/s (2 m n k per product)\n"
    "  batch       optional: products in one batched call (default 1)\n"
    "Time each GEMM alone, after warm-up, for 0.2 ms or more: shorter calls\n"
    "measure the launch.\n\n"
    "Example: trainsim calibrate gemm a100-sxm4-80gb gemms.csv\n\n"
    "Exit status: 0 success; 1 the fragment could not be written; 2 bad usage\n"
    "or input (a missing column, a size or time that is not positive, too\n"
    "few rows).",
    2, 2, "a device and a CSV"))
    return 2;
  if (output_over_inputs (argv[0], output, argv + 2, 1))
    return 2;
  g_autoptr (GError) error = NULL;
  DeviceSpec device;
  if (!config_load_device (argv[1], &device, &error))
    return cli_fail (error);
  static const char *const columns[] = { "m", "n", "k", "dtype", "time", "time_us",
                                         "tflops", "batch", NULL };
  g_autoptr (PlotTable) table = plot_table_read (argv[2], columns, GEMM_TABLE, &error);
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (CalibGemmRow));
  if (table == NULL || !gemm_rows (table, &device, rows, &error))
    {
      device_spec_clear (&device);
      return cli_fail (error);
    }
  const CalibGemmRow *g = (const CalibGemmRow *) (void *) rows->data;
  g_autofree double *predicted = g_new (double, rows->len);
  CalibGemmFit fit;
  calib_fit_gemm (&device, g, rows->len, &fit, predicted);

  const char *name = device.name != NULL ? device.name : argv[1];
  g_autoptr (GString) report = g_string_new (NULL);
  g_string_append_printf (report, "# trainsim calibrate gemm: %s's matmul_efficiency, fitted "
                          "to %u GEMMs of %s\n", name, rows->len, argv[2]);
  g_string_append_printf (report, "# matmul_efficiency %.3f (the device's: %.3f)\n",
                          fit.matmul_efficiency, fit.efficiency_before);
  g_string_append_printf (report, "# MAPE %.1f %% over the GEMMs (at the device's: %.1f %%)\n",
                          fit.mape * 100, fit.mape_before * 100);
  if (fit.insensitive > 0)
    g_string_append_printf (report, "# %u GEMM%s priced by %s bytes or the launch floor: "
                            "the efficiency does not move %s\n", fit.insensitive,
                            fit.insensitive == 1 ? "" : "s",
                            fit.insensitive == 1 ? "its" : "their",
                            fit.insensitive == 1 ? "it" : "them");
  if (fit.matmul_efficiency >= CALIB_EFFICIENCY_MAX * 0.999)
    g_string_append (report, "# the efficiency is at the search's top (1): the GEMMs run "
                             "faster than the model allows at peak; check the device's peak\n");
  g_string_append_printf (report, "#\n# %6s %6s %7s %7s %7s %5s %9s %9s %9s\n", "line",
                          "batch", "m", "n", "k", "dtype", "measured", "fitted", "error");
  g_string_append_printf (report, "# %6s %6s %7s %7s %7s %5s %9s %9s %9s\n", "", "", "", "",
                          "", "", "(TFLOP/s)", "(TFLOP/s)", "(time)");
  for (guint i = 0; i < rows->len; i++)
    {
      double flops = 2.0 * (double) g[i].batch * (double) g[i].m * (double) g[i].n
                     * (double) g[i].k;
      g_string_append_printf (report, "# %6u %6" G_GINT64_FORMAT " %7" G_GINT64_FORMAT
                              " %7" G_GINT64_FORMAT " %7" G_GINT64_FORMAT " %5s %9.1f %9.1f",
                              plot_table_line (table, i), g[i].batch, g[i].m, g[i].n,
                              g[i].k,
                              spec_enum_name (SPEC_ENUM_PRECISION, g[i].precision),
                              flops / g[i].seconds / 1e12, flops / predicted[i] / 1e12);
      append_error (report, predicted[i], g[i].seconds);
    }

  g_autoptr (GString) fragment = g_string_new (NULL);
  g_string_append_printf (fragment, "# trainsim calibrate gemm: fitted to %s (%u GEMMs) on "
                          "%s; MAPE %.1f %% (%.1f %% at %.3f)\n", argv[2], rows->len, name,
                          fit.mape * 100, fit.mape_before * 100, fit.efficiency_before);
  g_string_append_printf (fragment, "# into the device file, or a topology's gpu: {name: %s, "
                          "matmul_efficiency: %.3f}\nmatmul_efficiency: %.3f\n", name,
                          fit.matmul_efficiency, fit.matmul_efficiency);
  device_spec_clear (&device);
  return write_result (report, fragment, output);
}

/* ---- launch: the host's kernel launch time ------------------------------ */

static int
calibrate_launch (int argc, char **argv)
{
  g_autofree char *output = NULL;
  GOptionEntry entries[] = { OUTPUT_OPTION (output), { NULL } };
  if (!parse_kind (&argc, &argv, entries, "CSV",
    "Fits host.kernel_launch, the host's time to issue one kernel, as the\n"
    "least-squares slope of the host time against the kernels issued in a\n"
    "launch benchmark. Prints the fit and a residual table, and the value as a\n"
    "YAML fragment for the topology.",
    "CSV: a header line, then one run a row; '#' lines are comments. Columns:\n"
    "  kernels       kernels the run issued\n"
    "  host_seconds  the host's time to issue them (not the GPU's to run them:\n"
    "                time the loop, before synchronizing)\n"
    "Issue the kernels as training does (from Python, through the framework's\n"
    "modules) for the value a training run pays; what does not grow with the\n"
    "count is the intercept, left out.\n\n"
    "Example: trainsim calibrate launch launches.csv -o host.yaml\n\n"
    "Exit status: 0 success; 1 the fragment could not be written; 2 bad usage\n"
    "or input (a missing column, a value that is not positive, fewer than two\n"
    "kernel counts).",
    1, 1, "one CSV"))
    return 2;
  if (output_over_inputs (argv[0], output, argv + 1, 1))
    return 2;
  g_autoptr (GError) error = NULL;
  static const char *const columns[] = { "kernels", "host_seconds", NULL };
  g_autoptr (PlotTable) table = plot_table_read (argv[1], columns, "a launch table: "
                                                 "expected a header naming the columns "
                                                 "kernels and host_seconds", &error);
  if (table == NULL)
    return cli_fail (error);
  int ck = plot_table_column (table, "kernels");
  int cs = plot_table_column (table, "host_seconds");
  if (ck < 0 || cs < 0)
    {
      g_autofree char *have = plot_table_columns (table);
      g_set_error (&error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: no column %s: expected the "
                   "columns kernels and host_seconds; it names %s", argv[1],
                   plot_table_header_line (table), ck < 0 ? "kernels" : "host_seconds",
                   have);
      return cli_fail (error);
    }
  guint n = plot_table_n_rows (table);
  g_autofree double *kernels = g_new (double, MAX (n, 1));
  g_autofree double *seconds = g_new (double, MAX (n, 1));
  gboolean varied = FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (!plot_table_positive (table, i, ck, "a count of kernels", &kernels[i], &error)
          || !plot_table_positive (table, i, cs, "a time in seconds", &seconds[i], &error))
        return cli_fail (error);
      varied = varied || kernels[i] != kernels[0];
    }
  if (n < 2 || !varied)
    {
      g_set_error (&error, TS_ERROR, TS_ERROR_INPUT, "%s:%u: %u row%s of %s: the slope "
                   "needs runs of at least 2 kernel counts", argv[1],
                   plot_table_header_line (table), n, n == 1 ? "" : "s",
                   n < 2 ? "data" : "one count");
      return cli_fail (error);
    }
  g_autofree double *predicted = g_new (double, n);
  CalibLaunchFit fit;
  calib_fit_launch (kernels, seconds, n, &fit, predicted);
  if (!(fit.kernel_launch_s > 0))
    {
      g_set_error (&error, TS_ERROR, TS_ERROR_INPUT, "%s: the host time does not grow "
                   "with the kernels (%.3g us a kernel): expected the time to issue them, "
                   "more for more", argv[1], fit.kernel_launch_s * 1e6);
      return cli_fail (error);
    }
  g_autofree char *launch = time_text (fit.kernel_launch_s);
  g_autofree char *before = time_text (fit.kernel_launch_before_s);
  g_autofree char *intercept = time_text (fabs (fit.intercept_s));
  g_autoptr (GString) report = g_string_new (NULL);
  g_string_append_printf (report, "# trainsim calibrate launch: host.kernel_launch, fitted "
                          "to %u runs of %s\n", n, argv[1]);
  g_string_append_printf (report, "# kernel_launch %s a kernel (the default: %s); intercept "
                          "%s%s, what does not grow with the kernels\n", launch, before,
                          fit.intercept_s < 0 ? "-" : "", intercept);
  g_string_append_printf (report, "# MAPE %.1f %% over the runs\n", fit.mape * 100);
  g_string_append_printf (report, "#\n# %6s %12s %12s %12s %9s\n", "line", "kernels",
                          "host (s)", "fitted (s)", "error");
  for (guint i = 0; i < n; i++)
    {
      g_string_append_printf (report, "# %6u %12.0f %12.6g %12.6g",
                              plot_table_line (table, i), kernels[i],
                              seconds[i], predicted[i]);
      append_error (report, predicted[i], seconds[i]);
    }
  g_autoptr (GString) fragment = g_string_new (NULL);
  g_string_append_printf (fragment, "# trainsim calibrate launch: fitted to %s (%u runs); "
                          "MAPE %.1f %%\n# merge into the topology's host\n"
                          "host: {kernel_launch: %s}\n", argv[1], n, fit.mape * 100, launch);
  return write_result (report, fragment, output);
}

/* ---- dispatch -------------------------------------------------------------- */

static const struct {
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
} kinds[] = {
  { "nccl", calibrate_nccl,
    "a link's efficiency and step latency, from nccl-tests logs" },
  { "gemm", calibrate_gemm, "a device's matmul_efficiency, from timed GEMMs (CSV)" },
  { "launch", calibrate_launch,
    "the host's kernel launch time, from a launch benchmark (CSV)" },
};

int
cli_calibrate (int argc, char **argv)
{
  for (guint i = 0; argc >= 2 && i < G_N_ELEMENTS (kinds); i++)
    if (strcmp (argv[1], kinds[i].name) == 0)
      {
        /* "calibrate nccl" names the command in its --help and errors. */
        g_autofree char *name = g_strconcat (argv[0], " ", argv[1], NULL);
        char *own = argv[1];
        argv[1] = name;
        int status = kinds[i].fn (argc - 1, argv + 1);
        argv[1] = own;
        return status;
      }
  g_autoptr (GString) summary = g_string_new ("Fits trainsim's constants to measurements "
                                              "of one's own cluster:\n");
  g_autoptr (GString) known = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_string_append_printf (summary, "  %-8s %s\n", kinds[i].name, kinds[i].summary);
      g_string_append_printf (known, "%s%s", i ? ", " : "", kinds[i].name);
    }
  g_string_append (summary, "Each prints its fit and residuals, and the values as a YAML "
                            "fragment;\n'trainsim calibrate KIND --help' says what it reads.");
  GOptionEntry entries[] = { { NULL } };
  g_autoptr (GOptionContext) context = g_option_context_new ("KIND ARG...");
  g_option_context_set_summary (context, summary->str);
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 the fragment could not be written; 2 bad usage\n"
    "or input.");
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc < 2)
    cli_printerr ("trainsim calibrate: expected what to calibrate: %s", known->str);
  else
    cli_printerr ("trainsim calibrate: unknown kind '%s' (known: %s)", argv[1],
                  known->str);
  cli_try_help ("calibrate");
  return 2;
}
