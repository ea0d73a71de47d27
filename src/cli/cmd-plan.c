/* cmd-plan.c: `trainsim plan`: a whole training run. The fastest plan the
 * cluster runs (sweep/plansearch.h, the walk `search` prints), the run's
 * time, GPU-hours and dollars at perfect uptime, then with failures and
 * checkpoints as a seeded Monte Carlo (sweep/goodput.h) beside its closed
 * form. */
#include "cli/cli.h"
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

/* Everything the command reports, in the order JSON and CSV give it. */
typedef struct {
  char *model, *topology, *framework, *label;
  GPtrArray *sets;
  int gpus, nodes, plans_fit, trials, seed;
  gboolean young_daly;
  double parameters, tokens;
  double iteration_time_s, tokens_per_s, model_tflops_per_gpu, mfu;
  double days, gpu_hours, cost_usd;
  double checkpoint_bytes, checkpoint_write_s, checkpoint_read_s;
  double checkpoint_interval_s, mtbf_h, gpu_failures_per_hour,
         node_failures_per_hour, detection_s, restart_s;
  double failures, days_with_failures, days_with_failures_p10,
         days_with_failures_p90, days_expected, days_first_order;
  double gpu_hours_with_failures, cost_usd_with_failures;
  double gpu_step_w, pue, energy_mwh, energy_mwh_with_failures;
  double co2_t, co2_t_with_failures;   /* NAN without a grid intensity */
} Outcome;

static void
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
static void
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

/* Budget mode's *STATUS (never an exit status) for a size that no plan
 * can hold with the values --set holds, where 1 is one that none fits in
 * memory. */
#define PLAN_NONE_HOLDS 3

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
  g_autoptr (GArray) cands = plansearch_run (base, sets, jobs, &n_ok, &n_valid);
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

/* Plans the run of the experiment PATH under SETS into *O: FALSE, with
 * *STATUS the exit status, when it cannot (said on stderr unless QUIET
 * and no plan fits). */
static gboolean
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

/* 126M, 12.9B, 3.49T: parameters and tokens. */
static char *
fmt_count (double n)
{
  return n >= 1e12 ? g_strdup_printf ("%.3gT", n / 1e12)
         : n >= 1e9 ? g_strdup_printf ("%.3gB", n / 1e9)
         : g_strdup_printf ("%.3gM", n / 1e6);
}

/* Budget mode: what a run may spend, in one of three measures. */
typedef struct {
  const char *flag;       /* "--budget-usd" */
  double limit;
  gsize spent;            /* the Outcome member it is held against */
  const char *unit;
} Budget;

static double
budget_spent (const Budget *b, const Outcome *o)
{
  return G_STRUCT_MEMBER (double, o, b->spent);
}

static int
by_parameters (gconstpointer a, gconstpointer b)
{
  const Outcome *x = a, *y = b;
  return (x->parameters > y->parameters) - (x->parameters < y->parameters);
}

/* The --set lines of one size of budget mode, NULL-terminated: the model
 * NAME on Chinchilla's tokens, then SETS, which apply to every size
 * (model.seq_len, say; set before the size, they were dropped with the
 * model they changed), then SHAPE's, where the family's rule built it. */
static GPtrArray *
size_sets (const char *name, const char *const *sets, const ModelSpec *shape)
{
  GPtrArray *all = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (all, g_strconcat ("model=", name, NULL));
  g_ptr_array_add (all, g_strdup ("training.tokens=chinchilla"));
  for (int k = 0; sets && sets[k]; k++)
    g_ptr_array_add (all, g_strdup (sets[k]));
  if (shape)
    {
      g_ptr_array_add (all, g_strdup_printf ("model.layers=%d", shape->layers));
      g_ptr_array_add (all, g_strdup_printf ("model.hidden=%d", shape->hidden));
      g_ptr_array_add (all, g_strdup_printf ("model.heads=%d", shape->heads));
      g_ptr_array_add (all, g_strdup_printf ("model.kv_heads=%d",
                                             shape->kv_heads));
      g_ptr_array_add (all, g_strdup_printf ("model.ffn_hidden=%d",
                                             shape->ffn_hidden));
    }
  g_ptr_array_add (all, NULL);
  return all;
}

/* Plans one size of budget mode under its --set lines ALL (size_sets)
 * into *O, whose own --set lines then replay it: ALL first, as planned. */
static gboolean
plan_size (const char *path, GPtrArray *all, int jobs, Outcome *o,
           int *status)
{
  *o = (Outcome) { NULL };
  if (!plan_run (path, (const char *const *) all->pdata, jobs, FALSE, TRUE, o,
                 status))
    {
      outcome_clear (o);
      return FALSE;
    }
  for (guint k = 0; k + 1 < all->len; k++)
    g_ptr_array_insert (o->sets, (gint) k, g_strdup (g_ptr_array_index (all, k)));
  return TRUE;
}

/* The compute-optimal size for the budget B at O's FLOPs per unit of it:
 * C = 6 N D with D = TPP N, so N* = sqrt (C / (6 TPP)). */
static double
optimum_at (const Budget *b, const Outcome *o, double tpp)
{
  double rate = 6 * o->parameters * o->tokens / budget_spent (b, o);
  return sqrt (rate * b->limit / (6 * tpp));
}

/* Budget mode's compute-optimal run: the family's rule (sweep/family.h)
 * builds N* from LARGEST, the size is planned, and its simulated FLOPs
 * per unit of budget give the next N*, until the rule builds a shape
 * planned already, at most 8 rounds. The speed moves little with the
 * size, but with the layers that the stages divide: on selene the rounds
 * for $1M circle among 65 to 68 layers, within 4 % of the budget. N0
 * starts it. *CHOSEN: of the sizes planned, the largest whose run fits
 * the budget, else the cheapest; *N_STAR the optimum at its speed;
 * *ROUNDS the sizes planned. FALSE with *STATUS the exit status, said on
 * stderr. */
static gboolean
plan_optimum (const char *path, const char *const *sets, int jobs,
              const Budget *b, const ModelSpec *largest, double tpp,
              double n0, Outcome *chosen, double *n_star, int *rounds,
              int *status)
{
  g_autoptr (GArray) planned = g_array_new (FALSE, TRUE, sizeof (Outcome));
  g_autoptr (GArray) shapes = g_array_new (FALSE, TRUE, sizeof (ModelSpec));
  double n = n0;
  gboolean ok = TRUE;
  while (ok && planned->len < 8)
    {
      ModelSpec shape;
      g_autofree char *why = NULL;
      if (!family_rule_build (largest, n, &shape, &why))
        {
          cli_printerr ("trainsim plan: %s %.15g: the compute-optimal size: %s",
                        b->flag, b->limit, why);
          *status = 2;
          ok = FALSE;
          break;
        }
      gboolean seen = FALSE;
      for (guint i = 0; i < shapes->len; i++)
        {
          const ModelSpec *s = &g_array_index (shapes, ModelSpec, i);
          seen = seen || (s->layers == shape.layers && s->hidden == shape.hidden);
        }
      if (seen)
        break;
      g_array_append_val (shapes, shape);
      g_autoptr (GPtrArray) all = size_sets (largest->name, sets, &shape);
      Outcome o;
      if (!plan_size (path, all, jobs, &o, status))
        {
          if (*status == 1 || *status == PLAN_NONE_HOLDS)
            cli_printerr ("trainsim plan: %s %.15g: the compute-optimal size, "
                          "%.3g parameters (%d layers, hidden %d), %s",
                          b->flag, b->limit, n, shape.layers, shape.hidden,
                          *status == 1 ? "fits in memory on no plan"
                          : "no plan can hold with the --set values");
          *status = MIN (*status, 2);
          ok = FALSE;
          break;
        }
      g_array_append_val (planned, o);
      n = optimum_at (b, &o, tpp);
    }
  int pick = -1;
  for (guint i = 0; ok && i < planned->len; i++)
    {
      const Outcome *o = &g_array_index (planned, Outcome, i);
      const Outcome *p = pick < 0 ? NULL : &g_array_index (planned, Outcome, pick);
      gboolean fits = budget_spent (b, o) <= b->limit;
      gboolean p_fits = p && budget_spent (b, p) <= b->limit;
      if (p == NULL
          || (fits && (!p_fits || o->parameters > p->parameters))
          || (!fits && !p_fits && budget_spent (b, o) < budget_spent (b, p)))
        pick = (int) i;
    }
  for (guint i = 0; i < planned->len; i++)
    if ((int) i == pick)
      *chosen = g_array_index (planned, Outcome, i);
    else
      outcome_clear (&g_array_index (planned, Outcome, i));
  if (ok)
    {
      *n_star = optimum_at (b, chosen, tpp);
      *rounds = (int) planned->len;
    }
  return ok;
}

/* Budget mode: each published model of FAMILY (models/FAMILY-*) planned
 * on Chinchilla's tokens (the experiment's tokens_per_parameter, default
 * 20: D = 20 N), beside the compute-optimal one that the family's rule
 * builds (plan_optimum). With compute C = 6 N D = 120 N^2 growing as N^2,
 * the optimum for the compute the budget buys is N* = sqrt (C / 120)
 * (Hoffmann et al. 2022, Table 3: its FLOPs are 6 N D, and sqrt (C / 120)
 * is within 4 % above its N at every size, 400M to 10T); the search
 * starts at the largest published size within the budget, its FLOPs per
 * unit of budget, and goes on at the built size's own. */
static int
plan_budget (const char *path, const char *const *sets, int jobs,
             const char *family, const Budget *b, ReportFormat format,
             const char *output)
{
  g_autofree char *families = NULL;
  g_autoptr (GPtrArray) names = config_model_family (path, family, &families);
  if (names->len == 0)
    {
      cli_printerr ("trainsim plan: --family %s: no models named %s-* "
                    "(families: %s)", family, family, families);
      return 2;
    }
  for (int k = 0; sets && sets[k]; k++)
    if (g_str_has_prefix (sets[k], "model=")
        || g_str_has_prefix (sets[k], "training.tokens="))
      {
        cli_printerr ("trainsim plan: --set %s: a budget plans each size of the "
                      "family (--family) on Chinchilla's tokens; --set model.KEY "
                      "changes every size, training.tokens_per_parameter the "
                      "tokens", sets[k]);
        return 2;
      }
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (Outcome));
  g_autoptr (GPtrArray) unfit = g_ptr_array_new_with_free_func (g_free);
  guint held = 0;   /* of UNFIT, sizes no plan can hold with the --set values */
  /* The family's largest published model, whose shape the rule keeps. */
  ExperimentSpec largest = { 0 };
  double largest_n = 0;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autoptr (GPtrArray) all = size_sets (name, sets, NULL);
      ExperimentSpec e;
      /* One that does not load fails its plan below, saying why. */
      if (config_load_experiment (path, (const char *const *) all->pdata, &e,
                                  NULL))
        {
          if (plan_model_params (&e.model) > largest_n)
            {
              largest_n = plan_model_params (&e.model);
              experiment_spec_clear (&largest);
              largest = e;
            }
          else
            experiment_spec_clear (&e);
        }
      Outcome o;
      int status;
      if (plan_size (path, all, jobs, &o, &status))
        g_array_append_val (rows, o);
      else
        {
          if (status != 1 && status != PLAN_NONE_HOLDS)
            {
              experiment_spec_clear (&largest);
              return status;
            }
          held += status == PLAN_NONE_HOLDS;
          g_autofree char *shown = text_shown (name);
          g_ptr_array_add (unfit, g_strdup_printf (
            "%-12s %s", shown, status == 1 ? "no plan fits in memory"
            : "no plan can hold the --set values (trainsim run says why)"));
        }
    }
  g_array_sort (rows, by_parameters);
  int best = -1;
  for (guint i = 0; i < rows->len; i++)
    if (budget_spent (b, &g_array_index (rows, Outcome, i)) <= b->limit)
      best = (int) i;
  if (best < 0)
    {
      const Outcome *least = rows->len ? &g_array_index (rows, Outcome, 0) : NULL;
      if (least)
        cli_printerr ("trainsim plan: %s %.15g is too small for any model of "
                      "family %s: the smallest, %s, needs %.4g %s",
                      b->flag, b->limit, family, least->model,
                      budget_spent (b, least), b->unit);
      else if (held == 0)
        cli_printerr ("trainsim plan: no model of family %s fits in "
                      "memory", family);
      else
        cli_printerr ("trainsim plan: no model of family %s fits in memory "
                      "or can hold the --set values (%u of them cannot); trainsim "
                      "run with those values says why", family, held);
      for (guint i = 0; i < rows->len; i++)
        outcome_clear (&g_array_index (rows, Outcome, i));
      experiment_spec_clear (&largest);
      return 2;
    }
  const Outcome *start = &g_array_index (rows, Outcome, best);
  double tpp = start->tokens / start->parameters;
  Outcome chosen;
  double n_star;
  int rounds, status;
  gboolean ok = plan_optimum (path, sets, jobs, b, &largest.model, tpp,
                              optimum_at (b, start, tpp), &chosen, &n_star,
                              &rounds, &status);
  g_autofree char *template = g_strdup (largest.model.name);
  experiment_spec_clear (&largest);
  if (!ok)
    {
      for (guint i = 0; i < rows->len; i++)
        outcome_clear (&g_array_index (rows, Outcome, i));
      return status;
    }
  /* The built size, named by its family and size, among the published. */
  g_autofree char *size = fmt_count (chosen.parameters);
  g_autofree char *lower = g_ascii_strdown (size, -1);
  g_free (chosen.model);
  chosen.model = g_strconcat (family, "-", lower, NULL);
  g_array_append_val (rows, chosen);
  g_array_sort (rows, by_parameters);
  const Outcome *below = NULL, *above = NULL, *c = NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      const Outcome *r = &g_array_index (rows, Outcome, i);
      if (r->sets == chosen.sets)
        c = r;
      else if (c == NULL)
        below = r;
      else if (above == NULL)
        above = r;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  if (format == REPORT_TABLE)
    {
      /* The names from the input, shown (base/text.h). */
      g_autofree char *family_shown = text_shown (family);
      g_autofree char *topology = text_shown (c->topology);
      g_string_append_printf (out, "trainsim plan %s %.15g: family %s, %.3g "
                              "tokens a parameter, on %s, %d GPUs\n", b->flag,
                              b->limit, family_shown, tpp, topology, c->gpus);
      g_string_append_printf (out, "  %-12s %10s %10s %9s %9s %11s %15s\n",
                              "model", "params", "tokens", "days",
                              "+failures", "GPU-hours", "cost");
      for (guint i = 0; i < rows->len; i++)
        {
          const Outcome *r = &g_array_index (rows, Outcome, i);
          g_autofree char *usd = report_fmt_usd (r->cost_usd_with_failures);
          g_autofree char *gpuh = report_fmt_si (r->gpu_hours_with_failures);
          g_autofree char *params = fmt_count (r->parameters);
          g_autofree char *tokens = fmt_count (r->tokens);
          g_autofree char *model = text_shown (r->model);
          g_string_append_printf (out, "%s %-12s %10s %10s %9.*g %9.*g "
                                  "%11s %15s\n", r == c ? "*" : " ",
                                  model, params, tokens,
                                  r->days < 1000 ? 3 : 4, r->days,
                                  r->days_with_failures < 1000 ? 3 : 4,
                                  r->days_with_failures, gpuh, usd);
        }
      for (guint i = 0; i < unfit->len; i++)
        g_string_append_printf (out, "  %s\n", (const char *) g_ptr_array_index (unfit, i));
      g_autofree char *params_star = fmt_count (n_star);
      g_autofree char *tokens_star = fmt_count (tpp * n_star);
      g_autofree char *model = text_shown (c->model);
      g_autofree char *shown_template = text_shown (template);
      g_autofree char *label = text_shown (c->label);
      g_string_append_printf (out, "  compute-optimal at %s's simulated FLOPs "
                              "per %s: %s parameters on %s tokens (%d round%s)\n",
                              model, b->unit, params_star, tokens_star, rounds,
                              rounds == 1 ? "" : "s");
      g_string_append_printf (out, "  * %s: built by the family's rule from "
                              "%s (%s), %.1f %% of the budget;\n", model,
                              shown_template, label,
                              100 * budget_spent (b, c) / b->limit);
      g_autofree char *near_below = below ? text_shown (below->model) : NULL;
      g_autofree char *near_above = above ? text_shown (above->model) : NULL;
      g_string_append_printf (out, "    the nearest published: %s below, %s "
                              "above\n", below ? near_below : "none",
                              above ? near_above : "none");
    }
  else
    {
      for (guint i = 0; i < rows->len; i++)
        {
          g_autoptr (GString) row = g_string_new (NULL);
          append_rows (row, &g_array_index (rows, Outcome, i), format);
          /* CSV: the header once, then a row per size; JSON: a line each. */
          const char *body = format == REPORT_CSV && i > 0
                             ? strchr (row->str, '\n') + 1 : row->str;
          g_string_append (out, body);
        }
      /* JSON: a last line, the optimum and the size chosen for it. */
      if (format == REPORT_JSON)
        {
          g_string_append (out, "{\"optimum\": {\"parameters\": ");
          report_append_number (out, n_star);
          g_string_append (out, ", \"tokens\": ");
          report_append_number (out, tpp * n_star);
          g_string_append_printf (out, ", \"rounds\": %d}, \"chosen\": "
                                  "{\"model\": ", rounds);
          report_append_json_string (out, c->model);
          g_string_append (out, ", \"built_from\": ");
          report_append_json_string (out, template);
          const struct { const char *key; double v; } fields[] = {
            { "parameters", c->parameters }, { "tokens", c->tokens },
            { "cost_usd", c->cost_usd_with_failures },
            { "gpu_hours", c->gpu_hours_with_failures },
            { "days", c->days_with_failures },
          };
          for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
            {
              g_string_append_printf (out, ", \"%s\": ", fields[i].key);
              report_append_number (out, fields[i].v);
            }
          g_string_append (out, "}, \"nearest\": {\"below\": ");
          if (below)
            report_append_json_string (out, below->model);
          else
            g_string_append (out, "null");
          g_string_append (out, ", \"above\": ");
          if (above)
            report_append_json_string (out, above->model);
          else
            g_string_append (out, "null");
          g_string_append (out, "}}\n");
        }
    }
  g_autoptr (GError) error = NULL;
  status = report_write (output, out, &error) ? 0 : cli_fail (error);
  for (guint i = 0; i < rows->len; i++)
    outcome_clear (&g_array_index (rows, Outcome, i));
  return status;
}

int
cli_plan (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *format_name = NULL, *output = NULL, *family = NULL;
  gboolean as_written = FALSE;
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
  if (budget == NULL && family != NULL)
    {
      cli_printerr ("trainsim plan: --family needs a budget (--budget-usd, "
                    "--gpu-hours or --days)");
      return 2;
    }
  if (budget != NULL)
    {
      g_autoptr (GError) error = NULL;
      ExperimentSpec base;
      if (family == NULL)
        {
          if (!config_load_experiment (argv[1], (const char *const *) sets,
                                       &base, &error))
            return cli_fail (error);
          const char *name = base.model.name ? base.model.name : "";
          const char *dash = strrchr (name, '-');
          family = g_strndup (name, dash ? (gsize) (dash - name) : 0);
          experiment_spec_clear (&base);
        }
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
