/* cmd-run.c: `trainsim run`: one experiment, one predicted step. */
#include "cli/cli.h"
#include "cli/run-hints.h"
#include "base/errors.h"
#include "base/progress.h"
#include "config/config.h"
#include "output/report.h"
#include "output/trace.h"
#include "parallel/plan.h"
#include "parallel/sim.h"
#include <stdio.h>
#include <string.h>

/* A long replay (--full on thousands of GPUs) draws sweep's progress line
 * in engine events against the budget's estimate; the line starts with
 * the first slice, so a short run draws nothing. With micro_batch: auto
 * each candidate replays from 0: their counts add up. */
typedef struct {
  Progress line;           /* started before the replay, for its rate */
  gboolean started;
  uint64_t last, before;   /* the current replay's count, the others' */
} RunProgress;

static void
run_progress (void *ctx, uint64_t events, uint64_t estimate)
{
  RunProgress *p = ctx;
  if (!p->started)
    p->line.total = estimate;
  else if (events < p->last)
    {
      p->before += p->last;
      p->line.total = p->before + estimate;
    }
  p->started = TRUE;
  p->last = events;
  p->line.total = MAX (p->line.total, p->before + events);
  progress_draw (&p->line, p->before + events, NULL);
}

static void
add_span (void *writer, const TraceSpan *span)
{
  trace_writer_add (writer, span);
}

int
cli_run (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *format_name = NULL, *trace_path = NULL, *output = NULL;
  gboolean full = FALSE;
  GOptionEntry entries[] = {
    /* FILENAME: the value's bytes as typed, with no conversion from the
     * locale's charset, so "2µs" works in the C locale too. */
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the experiment (repeatable), e.g. parallel.tp=4",
      "KEY=VALUE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "Output format: table (default), json or csv", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write the report to FILE (atomically) instead of stdout", "FILE" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &trace_path,
      "Write a Chrome trace of the step (open it in Perfetto)", "FILE" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full,
      "Simulate every rank, not one per pipeline stage", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  g_option_context_set_summary (context,
    "Predicts one training step of the experiment: iteration time, "
    "throughput,\nTFLOP/s per GPU, MFU, memory per GPU, a time breakdown, "
    "and time and cost\nto train when training.tokens is set.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 the plan does not fit in memory, or a file\n"
    "could not be written; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc != 2)
    {
      cli_printerr ("trainsim run: expected one experiment file, got %d", argc - 1);
      cli_try_help ("run");
      return 2;
    }
  int format = REPORT_TABLE;
  if (format_name != NULL && (format = report_format_parse (format_name)) < 0)
    {
      cli_printerr ("trainsim run: unknown format '%s' (valid: %s)", format_name,
                    report_format_names ());
      return 2;
    }
  /* "-" is standard output for -o, where the report goes: a trace there
   * would mix with it, and a file named "-" is surely not what was meant
   * (./- names one). */
  if (trace_path != NULL && strcmp (trace_path, "-") == 0)
    {
      cli_printerr ("trainsim run: --trace needs a file, such as -t trace.json "
                    "(standard output carries the report)");
      return 2;
    }
  /* One file cannot hold both: the second written would replace the first. */
  if (output != NULL && trace_path != NULL && strcmp (output, "-") != 0
      && report_same_file (output, trace_path))
    {
      cli_printerr ("trainsim run: --output and --trace name the same file, %s; "
                    "give each its own", output);
      return 2;
    }

  g_autofree char *experiment = cli_find_input (argv[1], "experiments");
  argv[1] = experiment;
  if (cli_output_is_input ("run", output, argv[1])
      || cli_output_is_input ("run", trace_path, argv[1]))
    return 2;

  g_autoptr (GError) error = NULL;
  ExperimentSpec spec;
  if (!config_load_experiment (argv[1], (const char *const *) sets, &spec,
                               &error))
    return cli_fail (error);
  /* Allowed, but worth saying: with one replica (and no context-parallel
   * ranks, which join them) ZeRO has nothing to partition over, and the plan is plain data parallelism of one. With
   * offload the stage still says what lives on the host, as on
   * ZeRO-Offload's single GPU. */
  if (spec.zero.stage > 0 && plan_dp (&spec) * spec.parallel.cp == 1
      && spec.zero.offload == OFFLOAD_NONE)
    cli_printerr ("trainsim: note: %s: zero.stage %d with dp = 1 partitions "
                  "nothing; the plan runs as stage 0",
                  spec.marks.zero_stage ? spec.marks.zero_stage : argv[1], spec.zero.stage);
  if (spec.marks.sweep != NULL)
    cli_printerr ("trainsim: note: %s: run predicts the experiment as written and "
                  "ignores its sweep: section; trainsim sweep runs its points",
                  spec.marks.sweep);
  /* The trace streams to its file as the step replays. */
  TraceWriter *trace = NULL;
  if (trace_path != NULL
      && (trace = trace_writer_open (trace_path, sim_stream_names (),
                                     SIM_N_STREAMS, &error)) == NULL)
    {
      experiment_spec_clear (&spec);
      return cli_fail (error);
    }
  RunProgress progress = { .started = FALSE };
  progress_init (&progress.line, "events", 0, 0);
  SimOptions options = { full, trace ? add_span : NULL, trace, run_progress,
                         &progress };
  SimResult result;
  gboolean ok = sim_run (&spec, &options, &result, &error);
  progress_clear (&progress.line);
  /* The layout as written, for the hints of a plan that cannot run. */
  int tp = spec.parallel.tp, pp = spec.parallel.pp;
  /* Faster, and not the same training: worth saying every time. */
  if (ok && spec.zero.offload_delayed_update)
    cli_printerr ("trainsim: note: %s: zero.offload_delayed_update: the "
                  "CPU's optimizer step of each iteration runs during the "
                  "next one, which trains on parameters one step older; "
                  "this changes convergence (Ren et al. 2021, ZeRO-Offload, "
                  "section 5), and DeepSpeed's released code has no such "
                  "option",
                  spec.marks.offload_delayed_update ? spec.marks.offload_delayed_update
                                                    : argv[1]);
  if (ok && result.full_auto)
    cli_printerr ("trainsim: note: stages share nodes (tp x dp = %d is not "
                  "a multiple of the node's %d GPUs): every rank replayed, "
                  "as with --full, to see them share the NICs",
                  result.tp * result.dp, spec.topology.gpus_per_node);
  if (ok && result.shared_nodes_missed)
    cli_printerr ("trainsim: warning: stages share nodes (tp x dp = %d is "
                  "not a multiple of the node's %d GPUs), and one rank per "
                  "stage does not see them share the NICs: the time may be "
                  "optimistic; --full replays every rank",
                  result.tp * result.dp, spec.topology.gpus_per_node);
  if (trace != NULL && ok)
    ok = trace_writer_close (trace, &error);
  else
    trace_writer_abort (trace);
  if (ok)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      g_autofree char *title = g_strdup_printf (
        "%s on %s", spec.model.name ? spec.model.name : "model",
        spec.topology.name ? spec.topology.name : "topology");
      report_append (out, &result, format, title);
      ok = report_write (output, out, &error);
    }
  experiment_spec_clear (&spec);
  if (!ok)
    {
      gboolean plan = error->domain == TS_ERROR && error->code == TS_ERROR_PLAN;
      int status = cli_fail (error);
      if (plan)
        run_hints_print (argv[1], (const char *const *) sets, FALSE, tp, pp, 0);
      return status;
    }
  if (!result.fits_memory)
    {
      g_autofree char *why = plan_memory_shortfall (&result.memory);
      cli_printerr ("trainsim: the plan %s: it does not fit (see the "
                    "memory lines of the report)", why);
      run_hints_print (argv[1], (const char *const *) sets, TRUE, result.tp, result.pp,
                       result.micro_batch);
      return 1;
    }
  return 0;
}
