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

/* Adds the candidates of one layout: the least recompute that fits, with
 * every ZeRO stage that fits at that recompute. */
static void
add_layout (GArray *cands, const ExperimentSpec *e)
{
  static const Recompute order[] = { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE,
                                     RECOMPUTE_FULL };
  if (!plan_check (e, NULL))
    return;
  for (guint r = 0; r < G_N_ELEMENTS (order); r++)
    {
      gboolean any = FALSE;
      for (int zero = 0; zero <= (e->parallel.dp > 1 ? 2 : 0); zero++)
        {
          Candidate c = { *e };
          c.spec.training.recompute = order[r];
          c.spec.zero.stage = zero;
          if (!fits (&c.spec))
            continue;
          c.index = cands->len;
          g_array_append_val (cands, c);
          any = TRUE;
        }
      if (any)
        return;
    }
}

static void
enumerate (GArray *cands, const ExperimentSpec *base)
{
  const ModelSpec *m = &base->model;
  int gpus = base->gpus, gpn = base->topology.gpus_per_node;
  for (int tp = 1; tp <= MIN (m->heads, gpus); tp++)
    {
      if (m->heads % tp != 0 || gpus % tp != 0
          || (tp > gpn && !base->parallel.tp_across_nodes))
        continue;
      for (int pp = 1; pp <= m->layers && tp * pp <= gpus; pp++)
        {
          /* A pp that does not divide the layers splits them as evenly
           * as they go, one chunk a stage. */
          gboolean even = m->layers % pp == 0;
          if ((!even && pp > SPEC_MAX_LIST) || gpus % (tp * pp) != 0)
            continue;
          int dp = gpus / (tp * pp);
          if (base->parallel.global_batch % dp != 0)
            continue;
          int per_replica = base->parallel.global_batch / dp;
          for (int mb = 1; mb <= MIN (per_replica, SEARCH_MAX_MICRO_BATCH);
               mb++)
            {
              if (per_replica % mb != 0)
                continue;
              int chunks = even ? m->layers / pp : 1;
              for (int v = 1; v <= MIN (chunks, SEARCH_MAX_VIRTUAL_STAGES);
                   v++)
                {
                  if (chunks % v != 0 || (v > 1 && pp == 1))
                    continue;
                  ExperimentSpec e = *base;
                  e.parallel.tp = tp;
                  e.parallel.pp = pp;
                  e.parallel.dp = dp;
                  e.parallel.micro_batch = mb;
                  e.parallel.virtual_stages = v;
                  e.parallel.schedule = v > 1 ? SCHEDULE_INTERLEAVED
                                              : SCHEDULE_1F1B;
                  e.parallel.sequence_parallel = tp > 1;
                  /* The search splits the layers itself. */
                  e.parallel.stage_layers.len = 0;
                  if (!even)
                    plan_balanced_stages (m->layers, pp,
                                          &e.parallel.stage_layers);
                  add_layout (cands, &e);
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

int
cli_search (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  int top = 5, jobs = -1;   /* -1: not given, the core count */
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the experiment (repeatable)", "KEY=VALUE" },
    { "top", 'n', 0, G_OPTION_ARG_INT, &top, "Plans to print (default 5)",
      "N" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
      "Worker threads (default: the core count)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  g_option_context_set_summary (context,
    "Finds the fastest plans that fit in memory for the experiment's model,\n"
    "GPU count, topology and global batch, over tp, pp, dp, micro-batch,\n"
    "virtual stages, recompute and ZeRO stage, and prints the best with\n"
    "their time breakdown and what sets each apart from the next.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 no plan fits; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
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

  g_autoptr (GArray) cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
  enumerate (cands, &base);
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
  if (n_ok == 0)
    {
      fprintf (stderr, "trainsim search: none of %u plans fits in memory\n",
               cands->len);
      status = 1;
    }
  else
    {
      g_autoptr (GString) out = g_string_new (NULL);
      g_string_append_printf (out, "trainsim search: %s on %s, %d GPUs, "
                              "global batch %d: %u plans fit\n",
                              base.model.name ? base.model.name : "model",
                              base.topology.name ? base.topology.name
                                                 : "topology",
                              base.gpus, base.parallel.global_batch, n_ok);
      for (guint i = 0; i < MIN ((guint) top, n_ok); i++)
        {
          const Candidate *c = &g_array_index (cands, Candidate, i);
          const Breakdown *b = &c->result.breakdown_s;
          g_autofree char *label = plan_label (c);
          g_string_append_printf (out, "%2u. %-58s %8.3f s  %6.1f TFLOP/s "
                                  "%5.1f GiB\n", i + 1, label,
                                  c->result.iteration_time_s,
                                  c->result.megatron_tflops_per_gpu,
                                  c->result.memory_per_gpu_gib);
          g_string_append_printf (out, "      compute %.3g s, TP %.3g s, "
                                  "bubble %.3g s, PP %.3g s, DP %.3g s, "
                                  "optimizer %.3g s\n", b->compute,
                                  b->tp_comm, b->bubble, b->pp_comm,
                                  b->dp_comm, b->optimizer);
          if (i + 1 < n_ok)
            append_why (out, c, &g_array_index (cands, Candidate, i + 1));
        }
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
