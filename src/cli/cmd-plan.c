/* cmd-plan.c: `trainsim plan`: a whole training run. The fastest plan the
 * cluster runs (sweep/plansearch.h, the walk `search` prints), the run's
 * time, GPU-hours and dollars at perfect uptime, then with failures and
 * checkpoints as a seeded Monte Carlo (sweep/goodput.h) beside its closed
 * form. */
#include "cli/cli.h"
#include "cli/plan-private.h"
#include "base/errors.h"
#include "base/text.h"
#include "config/config.h"
#include "config/framework.h"
#include "output/report.h"
#include "parallel/plan.h"
#include "parallel/sim.h"
#include "sweep/energy.h"
#include "sweep/family.h"
#include "sweep/goodput.h"
#include "sweep/plansearch.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void
outcome_clear (Outcome *o)
{
  g_free (o->model);
  g_free (o->topology);
  g_free (o->framework);
  g_free (o->label);
  if (o->sets)
    g_ptr_array_unref (o->sets);
}
typedef enum { OUT_TEXT, OUT_INT, OUT_DOUBLE, OUT_SETS } OutKind;

typedef struct {
  const char *name;
  OutKind kind;
  gsize offset;
} OutField;

#define OUT(name, kind, member) { name, kind, G_STRUCT_OFFSET (Outcome, member) }
static const OutField out_fields[] = {
  OUT ("model", OUT_TEXT, model),
  OUT ("topology", OUT_TEXT, topology),
  OUT ("framework", OUT_TEXT, framework),
  OUT ("gpus", OUT_INT, gpus),
  OUT ("nodes", OUT_INT, nodes),
  OUT ("plans_fit", OUT_INT, plans_fit),
  OUT ("plan", OUT_TEXT, label),
  OUT ("set", OUT_SETS, sets),
  OUT ("parameters", OUT_DOUBLE, parameters),
  OUT ("tokens", OUT_DOUBLE, tokens),
  OUT ("iteration_time_s", OUT_DOUBLE, iteration_time_s),
  OUT ("tokens_per_s", OUT_DOUBLE, tokens_per_s),
  OUT ("model_tflops_per_gpu", OUT_DOUBLE, model_tflops_per_gpu),
  OUT ("mfu", OUT_DOUBLE, mfu),
  OUT ("days", OUT_DOUBLE, days),
  OUT ("gpu_hours", OUT_DOUBLE, gpu_hours),
  OUT ("cost_usd", OUT_DOUBLE, cost_usd),
  OUT ("checkpoint_bytes", OUT_DOUBLE, checkpoint_bytes),
  OUT ("checkpoint_write_s", OUT_DOUBLE, checkpoint_write_s),
  OUT ("checkpoint_read_s", OUT_DOUBLE, checkpoint_read_s),
  OUT ("checkpoint_interval_s", OUT_DOUBLE, checkpoint_interval_s),
  OUT ("mtbf_h", OUT_DOUBLE, mtbf_h),
  OUT ("failures", OUT_DOUBLE, failures),
  OUT ("days_with_failures", OUT_DOUBLE, days_with_failures),
  OUT ("days_with_failures_p10", OUT_DOUBLE, days_with_failures_p10),
  OUT ("days_with_failures_p90", OUT_DOUBLE, days_with_failures_p90),
  OUT ("days_expected", OUT_DOUBLE, days_expected),
  OUT ("days_first_order", OUT_DOUBLE, days_first_order),
  OUT ("gpu_hours_with_failures", OUT_DOUBLE, gpu_hours_with_failures),
  OUT ("cost_usd_with_failures", OUT_DOUBLE, cost_usd_with_failures),
  OUT ("gpu_step_w", OUT_DOUBLE, gpu_step_w),
  OUT ("pue", OUT_DOUBLE, pue),
  OUT ("energy_mwh", OUT_DOUBLE, energy_mwh),
  OUT ("energy_mwh_with_failures", OUT_DOUBLE, energy_mwh_with_failures),
  OUT ("co2_t", OUT_DOUBLE, co2_t),
  OUT ("co2_t_with_failures", OUT_DOUBLE, co2_t_with_failures),
  OUT ("trials", OUT_INT, trials),
  OUT ("seed", OUT_INT, seed),
};
#undef OUT

/* JSON: one object; CSV: a header and a row. The --set arguments are a
 * list in JSON and one cell, "--set K=V --set ...", in CSV, as search
 * writes them. */
void
append_rows (GString *out, const Outcome *o, ReportFormat format)
{
  gboolean csv = format == REPORT_CSV;
  for (guint i = 0; csv && i < G_N_ELEMENTS (out_fields); i++)
    g_string_append_printf (out, "%s%s", i ? "," : "", out_fields[i].name);
  g_string_append (out, csv ? "\n" : "{");
  for (guint i = 0; i < G_N_ELEMENTS (out_fields); i++)
    {
      const OutField *f = &out_fields[i];
      const void *p = (const char *) o + f->offset;
      if (i)
        g_string_append (out, csv ? "," : ", ");
      if (!csv)
        g_string_append_printf (out, "\"%s\": ", f->name);
      switch (f->kind)
        {
        case OUT_TEXT:
          if (csv)
            report_append_csv_cell (out, *(char *const *) p);
          else
            report_append_json_string (out, *(char *const *) p);
          break;
        case OUT_INT:
          g_string_append_printf (out, "%d", *(const int *) p);
          break;
        case OUT_DOUBLE:
          if (!report_append_number (out, *(const double *) p) && !csv)
            g_string_append (out, "null");
          break;
        case OUT_SETS:
          {
            const GPtrArray *sets = *(GPtrArray *const *) p;
            g_autoptr (GString) joined = g_string_new (NULL);
            g_string_append (out, csv ? "" : "[");
            for (guint k = 0; k < sets->len; k++)
              {
                const char *set = g_ptr_array_index (sets, k);
                if (csv)
                  g_string_append_printf (joined, "%s--set %s", k ? " " : "",
                                          set);
                else
                  {
                    g_string_append (out, k ? ", " : "");
                    report_append_json_string (out, set);
                  }
              }
            if (csv)
              report_append_csv_cell (out, joined->str);
            else
              g_string_append_c (out, ']');
          }
          break;
        }
    }
  g_string_append (out, csv ? "\n" : "}\n");
}

/* N seconds as "N s", "N min" or "N h", for the table (a hostile input's
 * 1e300 hours in exponent form: report_fmt_num). */
static char *
fmt_span (double s)
{
  if (s < 7200)
    return s < 120 ? g_strdup_printf ("%.1f s", s) : g_strdup_printf ("%.1f min", s / 60);
  g_autofree char *hours = report_fmt_num ("%.1f", s / 3600);
  return g_strconcat (hours, " h", NULL);
}

#define TABLE_ROW "  %-17s"

static void
append_table (GString *out, const Outcome *o)
{
  /* Decimal units, as storage bandwidths are given; g_format_size would
   * put a no-break space in the table. */
  g_autofree char *ckpt = o->checkpoint_bytes >= 1e12
    ? g_strdup_printf ("%.3g TB", o->checkpoint_bytes / 1e12)
    : g_strdup_printf ("%.3g GB", o->checkpoint_bytes / 1e9);
  g_autofree char *tps = report_fmt_si (o->tokens_per_s);
  g_autofree char *gpuh = report_fmt_si (o->gpu_hours);
  g_autofree char *usd = report_fmt_usd (o->cost_usd);
  g_autofree char *gpuh_f = report_fmt_si (o->gpu_hours_with_failures);
  g_autofree char *usd_f = report_fmt_usd (o->cost_usd_with_failures);
  g_autofree char *interval = fmt_span (o->checkpoint_interval_s);
  g_autofree char *detect = fmt_span (o->detection_s);
  g_autofree char *restart = fmt_span (o->restart_s);
  /* The names from the input, shown (base/text.h). */
  g_autofree char *model = text_shown (o->model);
  g_autofree char *topology = text_shown (o->topology);
  g_autofree char *framework = text_shown (o->framework);
  g_autofree char *label = text_shown (o->label);
  g_string_append_printf (out, "trainsim plan: %s (%.3gB parameters), %.3gB "
                          "tokens, on %s, %d GPUs\n", model,
                          o->parameters / 1e9, o->tokens / 1e9, topology,
                          o->gpus);
  g_string_append_printf (out, TABLE_ROW "%s\n", "plan", label);
  if (o->plans_fit > 0)
    g_string_append_printf (out, TABLE_ROW "the fastest of %d plans that fit "
                            "under %s\n", "", o->plans_fit, framework);
  else
    g_string_append_printf (out, TABLE_ROW "as written (--as-written), under "
                            "%s\n", "", framework);
  g_string_append_printf (out, TABLE_ROW "%.2f s, %s tokens/s, model %.1f "
                          "TFLOP/s per GPU, MFU %.1f %%\n", "step",
                          o->iteration_time_s, tps, o->model_tflops_per_gpu,
                          100 * o->mfu);
  g_string_append_printf (out, TABLE_ROW "%.3g days, %s GPU-hours, %s\n",
                          "perfect uptime", o->days, gpuh, usd);
  g_string_append_printf (out, TABLE_ROW "%s (%.0f bytes a parameter), "
                          "written in %.1f s, read in %.1f s;\n", "checkpoints",
                          ckpt, o->checkpoint_bytes / o->parameters,
                          o->checkpoint_write_s, o->checkpoint_read_s);
  g_string_append_printf (out, TABLE_ROW "one every %s of work%s\n", "",
                          interval, o->young_daly
                          ? " (Young/Daly: sqrt(2 x write x MTBF))" : "");
  g_string_append_printf (out, TABLE_ROW "one every %.1f h (%d GPU%s at %.3g "
                          "an hour, %d node%s at %.3g);\n", "failures",
                          o->mtbf_h, o->gpus, o->gpus == 1 ? "" : "s",
                          o->gpu_failures_per_hour, o->nodes,
                          o->nodes == 1 ? "" : "s", o->node_failures_per_hour);
  g_string_append_printf (out, TABLE_ROW "each: %s to detect, %s to restart, "
                          "the read, the lost work\n", "", detect, restart);
  /* The days failures add (a hostile input's 1e299 in exponent form). */
  g_autofree char *more_days = report_fmt_num ("%.2f",
                                               o->days_with_failures - o->days);
  g_string_append_printf (out, TABLE_ROW "%.3g days (p10 %.3g, p90 %.3g; %d "
                          "runs, seed %d), +%s days,\n", "with failures",
                          o->days_with_failures, o->days_with_failures_p10,
                          o->days_with_failures_p90, o->trials, o->seed,
                          more_days);
  g_string_append_printf (out, TABLE_ROW "%.1f failures a run; closed form "
                          "%.3g days\n", "", o->failures, o->days_expected);
  g_string_append_printf (out, TABLE_ROW "%s GPU-hours, %s\n", "", gpuh_f,
                          usd_f);
  g_string_append_printf (out, TABLE_ROW "%.3g MWh, %.3g with failures (%.0f W "
                          "a GPU over a step, PUE %.2f)\n", "energy",
                          o->energy_mwh, o->energy_mwh_with_failures,
                          o->gpu_step_w, o->pue);
  if (isfinite (o->co2_t))
    g_string_append_printf (out, TABLE_ROW "%.3g t CO2, %.3g with failures\n",
                            "", o->co2_t, o->co2_t_with_failures);
}

/* The run's plan: the fastest that fits (*PLANS_FIT of them), or the
 * experiment's own with AS_WRITTEN (*PLANS_FIT 0). FALSE with *STATUS
 * the exit status when there is none (QUIET, budget mode: 1 or
 * PLAN_NONE_HOLDS, printing nothing). */
static gboolean
choose (const ExperimentSpec *base, const char *const *sets, int jobs,
        gboolean as_written, gboolean quiet, PlanCandidate *chosen,
        int *plans_fit, int *status)
{
  g_autoptr (GError) error = NULL;
  if (as_written)
    {
      SimOptions options = { FALSE, NULL };
      *chosen = (PlanCandidate) { *base };
      *plans_fit = 0;
      if (!sim_run (base, &options, &chosen->result, &error))
        {
          *status = cli_fail (error);
          return FALSE;
        }
      /* What ran, where the file left a size to trainsim (auto): the
       * label and the --set lines name the chosen value, which run takes. */
      chosen->spec.parallel.micro_batch = chosen->result.micro_batch;
      chosen->spec.parallel.virtual_stages = chosen->result.virtual_stages;
      if (!chosen->result.fits_memory)
        {
          g_autofree char *why = plan_memory_shortfall (&chosen->result.memory);
          cli_printerr ("trainsim plan: the experiment's plan %s", why);
          *status = 1;
          return FALSE;
        }
      return TRUE;
    }
  guint n_ok, n_valid;
  g_autoptr (GArray) cands = plansearch_run (base, sets, jobs, 1, &n_ok, &n_valid,
                                              NULL);
  if (n_ok == 0)
    {
      g_autofree char *fw = framework_label (base->framework);
      /* None to weigh at all: the values held rule them all out, bad
       * input, but in budget mode (QUIET) one size that none fits. */
      *status = n_valid == 0 ? (quiet ? PLAN_NONE_HOLDS : 2) : 1;
      if (quiet)
        return FALSE;
      if (n_valid == 0)
        cli_printerr ("trainsim plan: no plan that %s runs can hold the "
                      "experiment's GPUs, batch and --set values; trainsim run "
                      "with those values says why", fw);
      else
        cli_printerr ("trainsim plan: none of %u plans that %s runs fits in "
                      "memory", n_valid, fw);
      return FALSE;
    }
  *chosen = g_array_index (cands, PlanCandidate, 0);
  *plans_fit = (int) n_ok;
  return TRUE;
}

/* What plan needs of the experiment beyond what run does: tokens to
 * train on, and a storage: section to time the checkpoints. */
static gboolean
check_inputs (const ExperimentSpec *e, const char *path)
{
  /* A key missing is at the mapping that lacks it, where there is one. */
  const char *training = e->marks.training ? e->marks.training : path;
  const char *topology = e->marks.topology ? e->marks.topology : path;
  if (e->training.tokens == SPEC_UNSET)
    {
      cli_printerr ("trainsim plan: %s: training.tokens is not set: give the "
                    "tokens to train on, such as training: {tokens: 300e9}, "
                    "or tokens: chinchilla (tokens_per_parameter, default "
                    "20, times the parameters)", training);
      return FALSE;
    }
  g_autofree char *too_few = plan_tokens_problem (e);
  if (too_few != NULL)
    {
      cli_printerr ("trainsim plan: %s: %s", training, too_few);
      return FALSE;
    }
  if (e->topology.storage.bandwidth == SPEC_UNSET)
    {
      cli_printerr ("trainsim plan: %s: topology %s has no storage: section: "
                    "plan times checkpoints with its bandwidth, such as "
                    "storage: {bandwidth: 273GB/s, read_bandwidth: 1TB/s, "
                    "node_bandwidth: 50GB/s}", topology,
                    e->topology.name ? e->topology.name : "(inline)");
      return FALSE;
    }
  return TRUE;
}

/* The storage's rate for the whole cluster: the file system's aggregate,
 * or what the nodes can move, whichever is less. */
static double
storage_rate (const StorageSpec *st, double aggregate, int nodes)
{
  return st->node_bandwidth > 0 ? MIN (aggregate, nodes * st->node_bandwidth)
                                : aggregate;
}

/* Fills O from the chosen plan C and the experiment's reliability. */
static gboolean
outcome_fill (Outcome *o, const PlanCandidate *c, const ExperimentSpec *e)
{
  const SimResult *r = &c->result;
  const ReliabilitySpec *rel = &e->reliability;
  const StorageSpec *st = &e->topology.storage;
  o->model = g_strdup (r->model);
  o->topology = g_strdup (r->topology);
  o->framework = g_strdup (r->framework);
  o->label = plansearch_label (c);
  o->sets = plansearch_sets (c);
  o->gpus = r->gpus;
  o->nodes = (r->gpus + e->topology.gpus_per_node - 1)
             / e->topology.gpus_per_node;
  o->parameters = plan_model_params (&e->model);
  o->tokens = plan_training_tokens (e);
  o->iteration_time_s = r->iteration_time_s;
  o->tokens_per_s = r->tokens_per_s;
  o->model_tflops_per_gpu = r->model_tflops_per_gpu;
  o->mfu = r->mfu;
  double work = o->tokens / r->tokens_per_s;
  o->days = work / 86400;
  o->gpu_hours = work / 3600 * o->gpus;
  o->cost_usd = o->gpu_hours * e->cost.gpu_hour_usd;

  Plan plan;
  if (!plan_make (&plan, &c->spec, r->micro_batch, r->virtual_stages, NULL))
    g_assert_not_reached ();   /* it ran */
  o->checkpoint_bytes = plan_checkpoint_bytes (&plan);
  o->checkpoint_write_s = o->checkpoint_bytes
                          / storage_rate (st, st->bandwidth, o->nodes);
  o->checkpoint_read_s = o->checkpoint_bytes
    / storage_rate (st, st->read_bandwidth > 0 ? st->read_bandwidth
                                               : st->bandwidth, o->nodes);
  o->gpu_failures_per_hour = rel->gpu_failures_per_hour;
  o->node_failures_per_hour = rel->node_failures_per_hour;
  o->detection_s = rel->detection_s;
  o->restart_s = rel->restart_s;
  GoodputModel m = {
    .work_s = work,
    .gpu_rate = o->gpus * rel->gpu_failures_per_hour / 3600,
    .node_rate = o->nodes * rel->node_failures_per_hour / 3600,
    .checkpoint_s = o->checkpoint_write_s,
    .recovery_s = rel->detection_s + rel->restart_s + o->checkpoint_read_s,
    .variability = &e->topology.variability,
    .gpus = o->gpus,
    .gpus_per_node = e->topology.gpus_per_node,
    .varied = (r->breakdown_s.compute + r->breakdown_s.optimizer
               + r->breakdown_s.variability) / r->iteration_time_s,
  };
  double mtbf = 1 / (m.gpu_rate + m.node_rate);
  o->mtbf_h = mtbf / 3600;
  o->young_daly = rel->checkpoint_interval_s == SPEC_UNSET;
  m.interval_s = o->young_daly ? goodput_young_daly (m.checkpoint_s, mtbf)
                               : rel->checkpoint_interval_s;
  /* A checkpoint falls between steps, so at least a step apart (an
   * interval of 1 ms checkpointed 19 times a step); and one longer than
   * the work is the work, with a checkpoint at its end (the closed forms
   * took 0 x inf, NaN, and a negative first order from a longer one; the
   * Monte Carlo already ran it so). */
  double asked = m.interval_s;
  if (isfinite (asked))   /* else goodput refuses it, saying why */
    m.interval_s = MIN (MAX (asked, r->iteration_time_s), work);
  o->young_daly = o->young_daly && m.interval_s == asked;
  o->checkpoint_interval_s = m.interval_s;
  o->trials = rel->trials;
  o->seed = rel->seed;
  GoodputStats stats;
  g_autofree char *why = NULL;
  if (!goodput_monte_carlo (&m, rel->trials, (guint32) rel->seed, &stats, &why))
    {
      cli_printerr ("trainsim plan: %s: %s", e->marks.file, why);
      return FALSE;
    }
  o->failures = stats.failures;
  o->days_with_failures = stats.mean_s / 86400;
  o->days_with_failures_p10 = stats.p10_s / 86400;
  o->days_with_failures_p90 = stats.p90_s / 86400;
  o->days_expected = goodput_expected_s (&m) / 86400;
  o->days_first_order = goodput_first_order_s (&m) / 86400;
  o->gpu_hours_with_failures = stats.mean_s / 3600 * o->gpus;
  o->cost_usd_with_failures = o->gpu_hours_with_failures
                              * e->cost.gpu_hour_usd;

  /* The steps, checkpoints and rework draw the step's power; during the
   * recoveries the GPUs idle (the nodes stay on). */
  const EnergySpec *en = &e->energy;
  const double mwh = 3.6e9;   /* joules */
  double recovering = stats.failures * m.recovery_s;
  o->gpu_step_w = energy_gpu_step_w (&r->breakdown_s, r->iteration_time_s, en);
  o->pue = en->pue;
  o->energy_mwh = energy_joules (en, o->gpus, o->nodes, o->gpu_step_w, work)
                  / mwh;
  o->energy_mwh_with_failures =
    (energy_joules (en, o->gpus, o->nodes, o->gpu_step_w,
                    stats.mean_s - recovering)
     + energy_joules (en, o->gpus, o->nodes, en->gpu_idle_w, recovering))
    / mwh;
  /* g CO2 per kWh is kg per MWh: tonnes are 1000 of them. */
  o->co2_t = o->co2_t_with_failures = NAN;
  if (en->grid_g_co2_per_kwh != SPEC_UNSET)
    {
      o->co2_t = o->energy_mwh * en->grid_g_co2_per_kwh / 1000;
      o->co2_t_with_failures = o->energy_mwh_with_failures
                               * en->grid_g_co2_per_kwh / 1000;
    }
  return TRUE;
}

gboolean
plan_run (const char *path, const char *const *sets, int jobs,
          gboolean as_written, gboolean quiet, Outcome *o, int *status)
{
  g_autoptr (GError) error = NULL;
  ExperimentSpec base;
  PlanCandidate chosen;
  int plans_fit = 0;
  *status = 2;
  if (!config_load_experiment (path, sets, &base, &error))
    {
      *status = cli_fail (error);
      return FALSE;
    }
  /* Each step that fails says why and leaves *STATUS its exit status. */
  gboolean ok = check_inputs (&base, path)
                && choose (&base, sets, jobs, as_written, quiet, &chosen,
                           &plans_fit, status)
                && outcome_fill (o, &chosen, &base);
  o->plans_fit = plans_fit;
  experiment_spec_clear (&base);
  return ok;
}

int
cli_plan (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *format_name = NULL, *output = NULL, *family = NULL;
  gboolean as_written = FALSE, table = FALSE;
  double mfu = -DBL_MAX;
  int jobs = G_MININT;   /* not given: the core count */
  /* -DBL_MAX: not given (0, a negative, NaN or infinity given is refused). */
  double usd = -DBL_MAX, gpu_hours = -DBL_MAX, days = -DBL_MAX;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      PLANSEARCH_SET_HELP, "KEY=VALUE" },
    { "as-written", 0, 0, G_OPTION_ARG_NONE, &as_written,
      "Plan the run on the experiment's own plan instead of the fastest",
      NULL },
    { "budget-usd", 0, 0, G_OPTION_ARG_DOUBLE, &usd,
      "Budget mode: the family's compute-optimal model for X dollars at "
      "the simulated speed, failures included, beside its published sizes",
      "X" },
    { "gpu-hours", 0, 0, G_OPTION_ARG_DOUBLE, &gpu_hours,
      "Budget mode, in GPU-hours", "X" },
    { "days", 0, 0, G_OPTION_ARG_DOUBLE, &days,
      "Budget mode, in days", "X" },
    { "table", 0, 0, G_OPTION_ARG_NONE, &table,
      "The cost table: compute-optimal models of the family from 1.3B to 1T "
      "parameters, their ideal cost at --mfu as cost tables compute it, the "
      "published figures, and the simulated cost", NULL },
    { "mfu", 0, 0, G_OPTION_ARG_DOUBLE, &mfu,
      "The cost table's flat MFU (default 0.45, what its published rows "
      "imply)", "X" },
    { "family", 0, 0, G_OPTION_ARG_STRING, &family,
      "The published models of budget mode: those named FAMILY-* (default: the "
      "experiment model's name up to its last '-')", "FAMILY" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "Output format: table (default), json or csv", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write the report to FILE (atomically) instead of stdout", "FILE" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
      "Worker threads of the search (default: the core count)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  g_option_context_set_summary (context,
    "Plans a whole training run: finds the fastest plan that fits (as\n"
    "`trainsim search` does), and reports its step time, tokens/s and MFU,\n"
    "the days, GPU-hours and dollars to train on training.tokens (or\n"
    "tokens: chinchilla) at perfect uptime, then the same with failures\n"
    "(the experiment's reliability: section) and checkpoints (the\n"
    "topology's storage: section), as a seeded Monte Carlo of the run with\n"
    "its mean, p10 and p90, beside the closed form. With --budget-usd,\n"
    "--gpu-hours or --days, plans each published model of a family on\n"
    "Chinchilla's tokens and, built by the family's rule, the\n"
    "compute-optimal size for the budget at its simulated speed.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 no plan fits, or a file could not be\n"
    "written; 2 bad usage or bad input (no training.tokens, a topology\n"
    "without storage:, a rate that is not positive, a budget too small for\n"
    "any model of the family, an unknown family, a compute-optimal size\n"
    "beyond what the family's rule builds).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  int format;
  if (!cli_report_format ("plan", format_name, &format))
    return 2;
  if (argc != 2 || (jobs != G_MININT && (jobs < 1 || jobs > 4096)))
    {
      cli_printerr ("trainsim plan: expected one experiment file and "
                    "--jobs from 1 to 4096");
      cli_try_help ("plan");
      return 2;
    }
  const Budget budgets[] = {
    { "--budget-usd", usd, G_STRUCT_OFFSET (Outcome, cost_usd_with_failures),
      "dollar" },
    { "--gpu-hours", gpu_hours,
      G_STRUCT_OFFSET (Outcome, gpu_hours_with_failures), "GPU-hour" },
    { "--days", days, G_STRUCT_OFFSET (Outcome, days_with_failures), "day" },
  };
  const Budget *budget = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (budgets); i++)
    {
      if (budgets[i].limit == -DBL_MAX)
        continue;
      if (budget != NULL || !(budgets[i].limit > 0 && isfinite (budgets[i].limit))
          || as_written)
        {
          cli_printerr ("trainsim plan: give one budget, --budget-usd, "
                        "--gpu-hours or --days, positive and finite, and without "
                        "--as-written");
          cli_try_help ("plan");
          return 2;
        }
      budget = &budgets[i];
    }
  jobs = jobs > 0 ? jobs : (int) g_get_num_processors ();
  g_autofree char *experiment = cli_find_input (argv[1], "experiments");
  argv[1] = experiment;
  if (cli_output_is_input ("plan", output, argv[1]))
    return 2;
  if (table && (budget != NULL || as_written))
    {
      cli_printerr ("trainsim plan: --table plans its own sizes: give it "
                    "without a budget and without --as-written");
      return 2;
    }
  if (mfu != -DBL_MAX && (!table || !(mfu > 0 && mfu <= 1)))
    {
      cli_printerr ("trainsim plan: --mfu is the cost table's (--table), "
                    "above 0 and at most 1");
      return 2;
    }
  if (budget == NULL && !table && family != NULL)
    {
      cli_printerr ("trainsim plan: --family needs a budget (--budget-usd, "
                    "--gpu-hours or --days) or --table");
      return 2;
    }
  if (budget != NULL || table)
    {
      g_autoptr (GError) error = NULL;
      ExperimentSpec base;
      if (family == NULL)
        {
          if (!config_load_experiment (argv[1], (const char *const *) sets,
                                       &base, &error))
            return cli_fail (error);
          family = config_model_family_of (base.model.name ? base.model.name
                                                              : "");
          experiment_spec_clear (&base);
        }
      if (table)
        return plan_table (argv[1], (const char *const *) sets, jobs, family,
                           mfu == -DBL_MAX ? PLAN_TABLE_MFU : mfu, format,
                           output);
      return plan_budget (argv[1], (const char *const *) sets, jobs, family,
                          budget, format, output);
    }
  int status;
  Outcome o = { NULL };
  if (plan_run (argv[1], (const char *const *) sets, jobs, as_written, FALSE,
                &o, &status))
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GString) out = g_string_new (NULL);
      if (format == REPORT_TABLE)
        append_table (out, &o);
      else
        append_rows (out, &o, format);
      status = report_write (output, out, &error) ? 0 : cli_fail (error);
    }
  outcome_clear (&o);
  return status;
}
