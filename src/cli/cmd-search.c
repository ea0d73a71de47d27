/* cmd-search.c: `trainsim search`: the fastest plans for a model, a GPU
 * count and a topology.
 *
 * It walks tp (divisors of the heads that fit a node), pp (that divides
 * the GPUs; when it does not divide the layers, they are split as evenly
 * as they go, plan_balanced_stages), dp (what is left of the GPUs), the
 * micro-batch (divisors of the per-replica batch up to 16) and the
 * virtual stages (interleaving, up to 8 chunks per stage, even stages). For each layout it picks the least recompute that
 * fits in memory (none, selective, full: each costs compute), replays
 * each ZeRO stage up to 2 that fits with it, and keeps sequence
 * parallelism on with tp > 1 (it only removes work). Candidates run in a
 * GThreadPool; the ranking is deterministic: by iteration time, then by
 * the order of enumeration. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/progress.h"
#include "config/config.h"
#include "config/framework.h"
#include "output/report.h"
#include "parallel/plan.h"
#include "parallel/sim.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEARCH_MAX_MICRO_BATCH 16
#define SEARCH_MAX_VIRTUAL_STAGES 8

typedef struct {
  ExperimentSpec spec;    /* shallow: shares the base's strings */
  SimResult result;
  gboolean ok;
  guint index;
} Candidate;

/* USER_DATA: the count of finished candidates (a gint, atomic). */
static void
run_candidate (gpointer data, gpointer user_data)
{
  Candidate *c = data;
  SimOptions options = { FALSE, NULL };
  c->ok = sim_run (&c->spec, &options, &c->result, NULL)
          && c->result.fits_memory;
  g_atomic_int_inc ((gint *) user_data);
}

/* Whether the plan of e fits in memory (its sizes already checked). */
static gboolean
fits (const ExperimentSpec *e)
{
  Plan plan;
  MemoryBreakdown mem;
  if (!plan_make (&plan, e, e->parallel.micro_batch,
                  e->parallel.virtual_stages, NULL))
    return FALSE;
  plan_memory (&plan, &mem);
  return plan_memory_fits (&mem);
}

/* The axes a --set holds fixed: search walks the others. */
typedef struct {
  gboolean tp, pp, dp, micro_batch, virtual_stages, sequence_parallel;
  gboolean recompute, zero;
} Pins;

/* Which axes SETS ("key=value" strings) name. */
static void
pins_from_sets (Pins *pins, const char *const *sets)
{
  static const struct { const char *key; gsize offset; } axes[] = {
    { "parallel.tp", G_STRUCT_OFFSET (Pins, tp) },
    { "parallel.pp", G_STRUCT_OFFSET (Pins, pp) },
    { "parallel.dp", G_STRUCT_OFFSET (Pins, dp) },
    { "parallel.micro_batch", G_STRUCT_OFFSET (Pins, micro_batch) },
    { "parallel.virtual_stages", G_STRUCT_OFFSET (Pins, virtual_stages) },
    { "parallel.sequence_parallel", G_STRUCT_OFFSET (Pins, sequence_parallel) },
    { "training.recompute", G_STRUCT_OFFSET (Pins, recompute) },
    { "zero.stage", G_STRUCT_OFFSET (Pins, zero) },
  };
  *pins = (Pins) { FALSE };
  for (int i = 0; sets && sets[i]; i++)
    {
      const char *eq = strchr (sets[i], '=');
      gsize n = eq ? (gsize) (eq - sets[i]) : strlen (sets[i]);
      for (guint a = 0; a < G_N_ELEMENTS (axes); a++)
        if (strlen (axes[a].key) == n && strncmp (sets[i], axes[a].key, n) == 0)
          G_STRUCT_MEMBER (gboolean, pins, axes[a].offset) = TRUE;
    }
}

/* Adds the candidates of one layout: the least recompute that fits, with
 * every ZeRO stage that fits at that recompute; only plans the framework
 * runs (plan_check holds its rules). */
static void
add_layout (GArray *cands, const ExperimentSpec *e, const Pins *pins)
{
  static const Recompute order[] = { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
                                     RECOMPUTE_FULL };
  for (guint r = 0; r < G_N_ELEMENTS (order); r++)
    {
      gboolean any = FALSE;
      if (pins->recompute && order[r] != e->training.recompute)
        continue;
      for (int zero = 0; zero <= (e->parallel.dp > 1 ? 3 : 0); zero++)
        {
          Candidate c = { *e };
          if (pins->zero && zero != e->zero.stage)
            continue;
          c.spec.training.recompute = order[r];
          c.spec.zero.stage = pins->zero ? e->zero.stage : zero;
          if (!plan_check (&c.spec, NULL) || !fits (&c.spec))
            continue;
          c.index = cands->len;
          g_array_append_val (cands, c);
          any = TRUE;
        }
      if (any)
        return;
    }
}

/* Whether the axis value X is one to walk: any when the axis is free,
 * else only the value held. */
#define WALK(pinned, x, held) (!(pinned) || (held) <= 0 || (x) == (held))

static void
enumerate (GArray *cands, const ExperimentSpec *base, const Pins *pins)
{
  const ModelSpec *m = &base->model;
  const ParallelSpec *bp = &base->parallel;
  int gpus = base->gpus, gpn = base->topology.gpus_per_node;
  for (int tp = 1; tp <= MIN (m->heads, gpus); tp++)
    {
      if (m->heads % tp != 0 || gpus % tp != 0
          || (tp > gpn && !bp->tp_across_nodes) || !WALK (pins->tp, tp, bp->tp))
        continue;
      for (int pp = 1; pp <= m->layers && tp * pp <= gpus; pp++)
        {
          /* A pp that does not divide the layers splits them as evenly
           * as they go, one chunk a stage. */
          gboolean even = m->layers % pp == 0;
          if ((!even && pp > SPEC_MAX_LIST) || gpus % (tp * pp) != 0
              || !WALK (pins->pp, pp, bp->pp))
            continue;
          int dp = gpus / (tp * pp);
          if (bp->global_batch % dp != 0 || !WALK (pins->dp, dp, bp->dp))
            continue;
          int per_replica = bp->global_batch / dp;
          for (int mb = 1; mb <= MIN (per_replica, SEARCH_MAX_MICRO_BATCH);
               mb++)
            {
              if (per_replica % mb != 0
                  || !WALK (pins->micro_batch, mb, bp->micro_batch))
                continue;
              int chunks = even ? m->layers / pp : 1;
              for (int v = 1; v <= MIN (chunks, SEARCH_MAX_VIRTUAL_STAGES);
                   v++)
                {
                  if (chunks % v != 0 || (v > 1 && pp == 1)
                      || !WALK (pins->virtual_stages, v, bp->virtual_stages))
                    continue;
                  ExperimentSpec e = *base;
                  e.parallel.tp = tp;
                  e.parallel.pp = pp;
                  e.parallel.dp = dp;
                  e.parallel.micro_batch = mb;
                  e.parallel.virtual_stages = v;
                  e.parallel.schedule = v > 1 ? SCHEDULE_INTERLEAVED
                                              : SCHEDULE_1F1B;
                  /* Sequence parallelism only removes work: on where
                   * there is TP and the framework has it. */
                  if (!pins->sequence_parallel)
                    e.parallel.sequence_parallel =
                      tp > 1 && e.framework->sequence_parallel.allowed;
                  /* The search splits the layers itself. */
                  e.parallel.stage_layers.len = 0;
                  if (!even)
                    plan_balanced_stages (m->layers, pp,
                                          &e.parallel.stage_layers);
                  add_layout (cands, &e, pins);
                }
            }
        }
    }
}

static int
by_time (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;
  if (x->ok != y->ok)
    return x->ok ? -1 : 1;
  if (x->result.iteration_time_s != y->result.iteration_time_s)
    return x->result.iteration_time_s < y->result.iteration_time_s ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* "tp 4 pp 12 dp 8 mb 2 v 1, recompute full, zero 1, sp", and with
 * uneven stages their layers as runs: "stages 5,6x10,5". */
static char *
plan_label (const Candidate *c)
{
  const ExperimentSpec *e = &c->spec;
  const SpecIntList *sl = &e->parallel.stage_layers;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "tp %d pp %d dp %d mb %d v %d, recompute %s, "
                          "zero %d%s", e->parallel.tp, e->parallel.pp,
                          e->parallel.dp, e->parallel.micro_batch,
                          e->parallel.virtual_stages,
                          spec_enum_name (SPEC_ENUM_RECOMPUTE,
                                          e->training.recompute),
                          e->zero.stage,
                          e->parallel.sequence_parallel ? ", sp" : "");
  for (int i = 0, run; i < sl->len; i += run)
    {
      for (run = 1; i + run < sl->len && sl->v[i + run] == sl->v[i]; run++)
        ;
      g_string_append_printf (s, run > 1 ? "%s%dx%d" : "%s%d",
                              i ? "," : ", stages ", sl->v[i], run);
    }
  return g_string_free (s, FALSE);
}

/* The --set arguments that make `run` replay the plan: every axis the
 * search walks, as KEY=VALUE. */
static GPtrArray *
plan_sets (const Candidate *c)
{
  const ExperimentSpec *e = &c->spec;
  const SpecIntList *sl = &e->parallel.stage_layers;
  GPtrArray *sets = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (sets, g_strdup_printf ("parallel.tp=%d", e->parallel.tp));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.pp=%d", e->parallel.pp));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.dp=%d", e->parallel.dp));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.micro_batch=%d",
                                          e->parallel.micro_batch));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.virtual_stages=%d",
                                          e->parallel.virtual_stages));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.schedule=%s",
                                          spec_enum_name (SPEC_ENUM_SCHEDULE,
                                                          e->parallel.schedule)));
  g_ptr_array_add (sets, g_strdup_printf ("parallel.sequence_parallel=%s",
                                          e->parallel.sequence_parallel
                                          ? "true" : "false"));
  g_ptr_array_add (sets, g_strdup_printf ("training.recompute=%s",
                                          spec_enum_name (SPEC_ENUM_RECOMPUTE,
                                                          e->training.recompute)));
  g_ptr_array_add (sets, g_strdup_printf ("zero.stage=%d", e->zero.stage));
  if (sl->len > 0)
    {
      GString *list = g_string_new ("parallel.stage_layers=[");
      for (int i = 0; i < sl->len; i++)
        g_string_append_printf (list, "%s%d", i ? ", " : "", sl->v[i]);
      g_string_append_c (list, ']');
      g_ptr_array_add (sets, g_string_free (list, FALSE));
    }
  return sets;
}

/* Why a plan beats the next one: the breakdown parts that differ most. */
static void
append_why (GString *out, const Candidate *a, const Candidate *b)
{
  static const struct { const char *name; gsize offset; } parts[] = {
    { "compute", G_STRUCT_OFFSET (Breakdown, compute) },
    { "TP comm", G_STRUCT_OFFSET (Breakdown, tp_comm) },
    { "bubble", G_STRUCT_OFFSET (Breakdown, bubble) },
    { "PP comm", G_STRUCT_OFFSET (Breakdown, pp_comm) },
    { "DP comm", G_STRUCT_OFFSET (Breakdown, dp_comm) },
    { "optimizer", G_STRUCT_OFFSET (Breakdown, optimizer) },
    { "host-bound", G_STRUCT_OFFSET (Breakdown, host) },
  };
  g_string_append (out, "      vs the next:");
  int shown = 0;
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      double x = G_STRUCT_MEMBER (double, &a->result.breakdown_s,
                                  parts[i].offset);
      double y = G_STRUCT_MEMBER (double, &b->result.breakdown_s,
                                  parts[i].offset);
      /* Parts within 1 % of the iteration are noise for this purpose. */
      if (fabs (x - y) < 0.01 * b->result.iteration_time_s)
        continue;
      g_string_append_printf (out, "%s %s %+.3g s", shown++ ? "," : "",
                              parts[i].name, x - y);
    }
  if (shown == 0)
    g_string_append (out, " the same breakdown within 1 %");
  g_string_append_c (out, '\n');
}

/* The ranked plans as a table: each plan's time, model TFLOP/s and MFU
 * first, Megatron's eq. 3 TFLOP/s labelled as such, memory and the
 * headroom left, the breakdown and what sets it apart from the next. */
static void
append_table (GString *out, const GArray *cands, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      const Candidate *c = &g_array_index (cands, Candidate, i);
      const SimResult *r = &c->result;
      const Breakdown *b = &r->breakdown_s;
      const double gib = 1024.0 * 1024 * 1024;
      g_autofree char *label = plan_label (c);
      g_string_append_printf (out, "%2u. %s\n", i + 1, label);
      g_string_append_printf (out, "      %.3f s, model %.1f TFLOP/s per GPU "
                              "(MFU %.1f %%), %.1f GiB per GPU (%.1f GiB "
                              "free); Megatron's eq. 3: %.1f TFLOP/s\n",
                              r->iteration_time_s, r->model_tflops_per_gpu,
                              100 * r->mfu, r->memory_per_gpu_gib,
                              r->memory.capacity / gib - r->memory_per_gpu_gib,
                              r->megatron_tflops_per_gpu);
      g_string_append_printf (out, "      compute %.3g s, TP %.3g s, "
                              "bubble %.3g s, PP %.3g s, DP %.3g s, "
                              "optimizer %.3g s\n", b->compute, b->tp_comm,
                              b->bubble, b->pp_comm, b->dp_comm,
                              b->optimizer);
      if (i + 1 < n)
        append_why (out, c, &g_array_index (cands, Candidate, i + 1));
    }
}

/* The ranked plans as CSV or JSON: rank, label, the --set arguments that
 * replay the plan, then run's columns or members (report.h). */
static void
append_rows (GString *out, const GArray *cands, guint n, ReportFormat format,
             const ExperimentSpec *base, guint n_ok)
{
  static const char *const skip[] = { NULL };
  g_autofree char *fw = framework_label (base->framework);
  if (format == REPORT_CSV)
    {
      g_string_append (out, "rank,plan,set,");
      report_append_csv_header (out, skip);
    }
  else
    {
      g_string_append (out, "{\"search\": {\"model\": ");
      report_append_json_string (out, base->model.name ? base->model.name : "");
      g_string_append (out, ", \"topology\": ");
      report_append_json_string (out, base->topology.name ? base->topology.name
                                                          : "");
      g_string_append_printf (out, ", \"gpus\": %d, \"global_batch\": %d, "
                              "\"framework\": ", base->gpus,
                              base->parallel.global_batch);
      report_append_json_string (out, fw);
      g_string_append_printf (out, ", \"plans_fit\": %u},\n \"plans\": [",
                              n_ok);
    }
  for (guint i = 0; i < n; i++)
    {
      const Candidate *c = &g_array_index (cands, Candidate, i);
      g_autofree char *label = plan_label (c);
      g_autoptr (GPtrArray) sets = plan_sets (c);
      if (format == REPORT_CSV)
        {
          /* Labels and --set lists hold commas: quoted. */
          g_string_append_printf (out, "%u,\"%s\",\"", i + 1, label);
          for (guint k = 0; k < sets->len; k++)
            g_string_append_printf (out, "%s--set %s", k ? " " : "",
                                    (const char *) g_ptr_array_index (sets, k));
          g_string_append (out, "\",");
          report_append_csv_row (out, &c->result, skip);
          continue;
        }
      g_string_append_printf (out, "%s\n  {\"rank\": %u, \"plan\": ",
                              i ? "," : "", i + 1);
      report_append_json_string (out, label);
      g_string_append (out, ", \"set\": [");
      for (guint k = 0; k < sets->len; k++)
        {
          if (k)
            g_string_append (out, ", ");
          report_append_json_string (out, g_ptr_array_index (sets, k));
        }
      g_string_append (out, "], ");
      report_append_json_members (out, &c->result, skip);
      g_string_append_c (out, '}');
    }
  if (format == REPORT_JSON)
    g_string_append (out, "\n]}\n");
}

int
cli_search (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *format_name = NULL;
  int top = 5, jobs = -1;   /* -1: not given, the core count */
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the experiment (repeatable); on an axis of the "
      "search (parallel.tp, pp, dp, micro_batch, virtual_stages, "
      "sequence_parallel, training.recompute, zero.stage) it holds the "
      "axis at that value", "KEY=VALUE" },
    { "top", 'n', 0, G_OPTION_ARG_INT, &top, "Plans to print (default 5)",
      "N" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "Output format: table (default), json or csv", "FORMAT" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
      "Worker threads (default: the core count)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  g_option_context_set_summary (context,
    "Finds the fastest plans that fit in memory for the experiment's model,\n"
    "GPU count, topology and global batch, over tp, pp, dp, micro-batch,\n"
    "virtual stages, recompute and ZeRO stage, among the plans the\n"
    "experiment's framework runs, and prints the best with their time\n"
    "breakdown and what sets each apart from the next. Each JSON or CSV row\n"
    "carries the --set arguments with which `trainsim run` replays it.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 no plan fits; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  int format = REPORT_TABLE;
  if (format_name != NULL && (format = report_format_parse (format_name)) < 0)
    {
      fprintf (stderr, "trainsim search: unknown format '%s' (valid: %s)\n"
                       "Try 'trainsim search --help'.\n", format_name,
               report_format_names ());
      return 2;
    }
  if (argc != 2 || top < 1 || jobs == 0 || jobs < -1 || jobs > 4096)
    {
      fprintf (stderr, "trainsim search: expected one experiment file, "
                       "--top >= 1 and --jobs from 1 to 4096\n"
                       "Try 'trainsim search --help'.\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  ExperimentSpec base;
  if (!config_load_experiment (argv[1], (const char *const *) sets, &base,
                               &error))
    return cli_fail (error);

  Pins pins;
  pins_from_sets (&pins, (const char *const *) sets);
  g_autoptr (GArray) cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
  enumerate (cands, &base, &pins);
  gint done = 0;
  GThreadPool *pool = g_thread_pool_new (run_candidate, &done,
                                         jobs > 0 ? jobs
                                         : (int) g_get_num_processors (),
                                         TRUE, NULL);
  for (guint i = 0; i < cands->len; i++)
    g_thread_pool_push (pool, &g_array_index (cands, Candidate, i), NULL);
  Progress line;
  progress_init (&line, "plans", cands->len, 0);
  while (line.on && (guint) g_atomic_int_get (&done) < cands->len)
    {
      progress_draw (&line, (guint64) g_atomic_int_get (&done), NULL);
      g_usleep (G_USEC_PER_SEC / 10);
    }
  g_thread_pool_free (pool, FALSE, TRUE);
  progress_clear (&line);
  g_array_sort (cands, by_time);

  guint n_ok = 0;
  for (guint i = 0; i < cands->len; i++)
    n_ok += g_array_index (cands, Candidate, i).ok;
  int status = 0;
  g_autofree char *fw = framework_label (base.framework);
  if (n_ok == 0)
    {
      fprintf (stderr, "trainsim search: none of %u plans that %s runs fits "
                       "in memory\n", cands->len, fw);
      status = 1;
    }
  else
    {
      g_autoptr (GString) out = g_string_new (NULL);
      guint n = MIN ((guint) top, n_ok);
      if (format == REPORT_TABLE)
        {
          g_string_append_printf (out, "trainsim search: %s on %s, %d GPUs, "
                                  "global batch %d, framework %s: %u plans "
                                  "fit\n",
                                  base.model.name ? base.model.name : "model",
                                  base.topology.name ? base.topology.name
                                                     : "topology",
                                  base.gpus, base.parallel.global_batch, fw,
                                  n_ok);
          append_table (out, cands, n);
        }
      else
        append_rows (out, cands, n, format, &base, n_ok);
      if (fputs (out->str, stdout) == EOF || fflush (stdout) != 0)
        {
          fprintf (stderr, "trainsim search: cannot write the results: %s\n",
                   g_strerror (errno));
          status = 1;
        }
    }
  experiment_spec_clear (&base);
  return status;
}
