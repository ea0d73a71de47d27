/* cmd-sweep.c: `trainsim sweep`: every point of a design space, a row
 * each, written in point order as the points finish; on threads, or, in a
 * build with MPI run under mpirun, on the ranks of the job. */
#include "config.h"
#include "cli/cli.h"
#include "base/errors.h"
#include "base/outfile.h"
#include "base/text.h"
#include "sweep/sweep.h"
#ifdef HAVE_MPI
#include "sweep/sweep-mpi.h"
#endif
#include <stdio.h>
#include <string.h>

/* "K/N" with 1 <= K <= N. */
static gboolean
parse_shard (const char *text, guint *k, guint *n)
{
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint64 a, b;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 1, G_MAXUINT, &a, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 1, G_MAXUINT, &b, NULL) || a > b)
    return FALSE;
  *k = (guint) a;
  *n = (guint) b;
  return TRUE;
}

/* Exit status 2 for bad usage. MPI_RANK: -1, or this process's rank in an
 * MPI job, where every rank comes to the same verdict on the same command
 * line and rank 0 alone has said it. The ranks then join MPI to leave
 * together (MPI_Finalize waits for all of them): mpirun kills the job when
 * one rank exits with an error, which could cut rank 0 off before its
 * message is out. */
static int
usage_exit (int mpi_rank)
{
#ifdef HAVE_MPI
  if (mpi_rank >= 0)
    {
      fflush (stderr);
      sweep_mpi_start ();
      sweep_mpi_finish ();
    }
#endif
  return 2;
}

static int
usage_error (int mpi_rank, const char *message)
{
  if (mpi_rank <= 0)
    {
      cli_printerr ("trainsim sweep: %s", message);
      cli_try_help ("sweep");
    }
  return usage_exit (mpi_rank);
}

/* An axis of the command line. They are kept in the order given, --sweep
 * and --zip mixed, since that is the order of the columns. */
typedef struct {
  gboolean zip;     /* given with --zip */
  char *arg;        /* KEY=VALUES; owned */
} AxisArg;

static void
axis_arg_clear (gpointer data)
{
  g_free (((AxisArg *) data)->arg);
}

/* GOption's callback for --sweep and --zip; DATA is the GArray of AxisArg. */
static gboolean
add_axis_arg (const char *option, const char *value, gpointer data, GError **error)
{
  AxisArg axis = { strcmp (option, "--zip") == 0, g_strdup (value) };

  g_array_append_val ((GArray *) data, axis);
  return TRUE;
}

/* The sweep of the experiment PATH with SETS (--set) and AXES (AxisArg),
 * checked and ready to run. */
static Sweep *
load_sweep (const char *path, char **sets, const GArray *axes, gint64 max_points,
            GError **error)
{
  g_autoptr (Sweep) sweep = sweep_new (path, (const char *const *) sets,
                                       (guint64) max_points, error);

  if (sweep == NULL)
    return NULL;
  for (guint i = 0; i < axes->len; i++)
    {
      const AxisArg *axis = &g_array_index (axes, AxisArg, i);
      if (!sweep_add_axis (sweep, axis->arg, axis->zip, error))
        return NULL;
    }
  if (!sweep_check (sweep, error))
    return NULL;
  return g_steal_pointer (&sweep);
}

#ifdef HAVE_MPI
/* Under mpirun: every rank loads the sweep (the same files, the same
 * verdict) and takes its part in the run; an error, wherever it arose,
 * is reported by rank 0 and every rank exits with its status. */
static int
sweep_on_ranks (const char *path, char **sets, const GArray *axes, gint64 max_points,
                const SweepOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sweep = NULL;
  int rank = sweep_mpi_start (), status = 0;

  sweep = load_sweep (path, sets, axes, max_points, &error);
  if (sweep_mpi_agree (&error))
    sweep_mpi_run (sweep, options, &error);
  if (error != NULL)
    status = rank == 0 ? cli_fail (error) : ts_error_exit_status (error);
  sweep_mpi_finish ();
  return status;
}
#endif

/* The points' statuses, on stderr, after the rows: a sweep whose points
 * mostly could not run still exits 0, and says so. */
static void
print_counts (const SweepCounts *c)
{
  guint64 n = c->ok + c->oom + c->infeasible;

  if (n == 0)
    return;
  cli_printerr ("trainsim sweep: %" G_GUINT64_FORMAT " points: %" G_GUINT64_FORMAT " ok, %"
                G_GUINT64_FORMAT " oom, %" G_GUINT64_FORMAT " infeasible",
                n, c->ok, c->oom, c->infeasible);
  if (2 * c->infeasible > n)
    cli_printerr ("trainsim sweep: warning: most points are infeasible (the reason "
                  "column says why): check the axes against the plan rules "
                  "(parallel.dp=auto follows the GPU count), or give --feasible-only "
                  "to drop their rows");
}

int
cli_sweep (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autoptr (GArray) axes = g_array_new (FALSE, FALSE, sizeof (AxisArg));
  g_autofree char *format_name = NULL, *shard = NULL, *output = NULL;
  gboolean resume = FALSE, force = FALSE, feasible_only = FALSE;
  gint jobs = G_MININT;   /* not given: one per processor */
  gint64 max_points = 1000000;
  int mpi_rank = -1;
  GOptionEntry entries[] = {
    { "sweep", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) add_axis_arg,
      "Add an axis (repeatable), replacing the file's axis of the same key: "
      "KEY=1,2,4, KEY=1..8, KEY=1..8+2 (step), KEY=64..4096x2 (factor) or "
      "KEY=[a, b]", "KEY=VALUES" },
    { "zip", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) add_axis_arg,
      "Add a zipped axis (repeatable): the zipped axes advance together, the "
      "i-th point taking the i-th value of each, and need as many values each "
      "(values as for --sweep)", "KEY=VALUES" },
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the experiment (repeatable), e.g. parallel.tp=4",
      "KEY=VALUE" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
      "Run N points at a time (default: the number of processors)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write the rows to FILE, as they finish, instead of stdout", "FILE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "csv (default: a header, then a row per point) or jsonl (a JSON "
      "object per line)", "FORMAT" },
    { "resume", 0, 0, G_OPTION_ARG_NONE, &resume,
      "Keep the complete rows of the --output file and run the points after "
      "them", NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      "Replace an existing --output file once the sweep is done; until then "
      "the rows go to .FILE.XXXXXX beside it (without --force, or --resume, "
      "a file that holds rows is refused)", NULL },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard,
      "Run shard K of N: the points i with i % N == K - 1 (join the N "
      "outputs with trainsim merge)", "K/N" },
    { "max-points", 0, 0, G_OPTION_ARG_INT64, &max_points,
      "Refuse a sweep of more than N points (default 1000000)", "N" },
    { "feasible-only", 0, 0, G_OPTION_ARG_NONE, &feasible_only,
      "Leave out the rows of points whose plan cannot run (out-of-memory rows "
      "stay; not with --resume or --shard)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  /* The callbacks of --sweep and --zip get the main group's data. */
  GOptionGroup *group = g_option_group_new (NULL, NULL, NULL, axes, NULL);
  g_array_set_clear_func (axes, axis_arg_clear);
  g_option_group_add_entries (group, entries);
  g_option_context_set_main_group (context, group);
  g_option_context_set_summary (context,
    "Predicts every point of the cartesian product of the axes: those of the\n"
    "file's sweep: mapping (dotted key -> list of values or range), in file\n"
    "order, then those of --sweep and --zip, in the order given; the last\n"
    "axis varies fastest. The zipped axes (--zip, and the file's sweep.zip:\n"
    "mapping) advance together, as one axis in the place of the first of\n"
    "them: the i-th point takes the i-th value of each, such as gpus and\n"
    "parallel.global_batch for weak scaling. Each point is a row: the swept\n"
    "values, status (ok, infeasible or oom), reason, then the fields of\n"
    "'trainsim run --format csv'. Rows are written in point order as the\n"
    "points finish, so an interrupted sweep keeps the rows of the points\n"
    "before it; --resume runs the rest. One sweep at a time writes a file:\n"
    "it is locked while the sweep runs. A progress line is drawn on stderr\n"
    "when it is a terminal.");
  g_option_context_set_description (context,
    "Shards: run --shard 1/N ... N/N with -o each (a job array), then\n"
    "'trainsim merge OUT SHARD1 ... SHARDN', shards in K order: OUT is the\n"
    "unsharded output, byte for byte.\n\n"
#ifdef HAVE_MPI
    "MPI: under 'mpirun -n N' (N >= 2), rank 0 hands the points out to\n"
    "ranks 1..N-1, one at a time each, and writes their rows: the same bytes\n"
    "as on threads; -j is not used.\n\n"
#else
    "MPI: not built in (./configure --with-mpi).\n\n"
#endif
    "Exit status: 0 success (whatever the points' statuses); 1 an output\n"
    "could not be written; 2 bad usage or bad input (an empty axis, an\n"
    "unknown key, an empty range, zipped axes of different lengths, a key\n"
    "both zipped and swept, too many points, an error in the file, an\n"
    "output that another trainsim sweep is writing, or --resume of a file\n"
    "that is not a regular file or not this sweep's).");
#ifdef HAVE_MPI
  int rank = 0;
  if (sweep_mpi_launched (&rank))
    mpi_rank = rank;
#endif
  if (mpi_rank > 0 ? !cli_parse_quietly (context, entries, &argc, &argv)
                   : !cli_parse (context, entries, &argc, &argv))
    return usage_exit (mpi_rank);
  if (argc != 2)
    {
      g_autofree char *m = g_strdup_printf ("expected one experiment file, got %d",
                                            argc - 1);
      return usage_error (mpi_rank, m);
    }

  SweepOptions options = { 0 };
  options.threads = jobs > 0 ? (guint) jobs : g_get_num_processors ();
  options.format = SWEEP_CSV;
  options.feasible_only = feasible_only;
  options.shard_k = options.shard_n = 1;
  options.output = output != NULL && strcmp (output, "-") != 0 ? output : NULL;
  options.resume = resume;
  options.force = force;
  if (jobs != G_MININT && (jobs < 1 || jobs > 4096))
    return usage_error (mpi_rank, "-j must be between 1 and 4096");
  if (max_points < 1)
    return usage_error (mpi_rank, "--max-points must be at least 1");
  if (format_name != NULL && strcmp (format_name, "jsonl") == 0)
    options.format = SWEEP_JSONL;
  else if (format_name != NULL && strcmp (format_name, "csv") != 0)
    {
      g_autofree char *m = g_strdup_printf ("unknown format '%s' (valid: csv or jsonl)",
                                            format_name);
      return usage_error (mpi_rank, m);
    }
  if (shard != NULL && !parse_shard (shard, &options.shard_k, &options.shard_n))
    {
      g_autofree char *m = g_strdup_printf ("--shard %s: expected K/N with 1 <= K <= N, "
                                            "such as --shard 1/4", shard);
      return usage_error (mpi_rank, m);
    }
  if (resume && options.output == NULL)
    return usage_error (mpi_rank, "--resume needs the file to resume, given with -o FILE");
  g_autofree char *experiment = cli_find_input (argv[1], "experiments");
  argv[1] = experiment;
  /* --force replaces an earlier output, never the experiment. */
  g_autofree char *over = cli_output_over_input (options.output, argv[1]);
  if (over != NULL)
    return usage_error (mpi_rank, over);
  /* Rows then stand for points: dropping some would break both. */
  if (feasible_only && (resume || options.shard_n > 1))
    return usage_error (mpi_rank, "--feasible-only cannot be combined with --resume or "
                        "--shard (rows must map to points); filter the rows afterwards");

#ifdef HAVE_MPI
  if (mpi_rank >= 0)
    return sweep_on_ranks (argv[1], sets, axes, max_points, &options);
#endif
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sweep = load_sweep (argv[1], sets, axes, max_points, &error);
  SweepCounts counts = { 0 };
  options.counts = &counts;
  if (sweep != NULL && options.output != NULL)
    {
      g_autofree char *shown = text_shown (options.output);
      g_autofree char *note
        = force ? g_strdup_printf ("trainsim sweep: interrupted; %s is as it was (--force "
                                   "replaces it only when the sweep is done)", shown)
                : g_strdup_printf ("trainsim sweep: interrupted; the rows done so far are "
                                   "kept in %s: run the same command with --resume to "
                                   "finish", shown);
      outfile_set_interrupt_note (note);
    }
  if (sweep == NULL || !sweep_run (sweep, &options, &error))
    return cli_fail (error);
  print_counts (&counts);
  return 0;
}
