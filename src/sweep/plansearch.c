/* plansearch.c: the walk over plans of `trainsim search` and `trainsim
 * plan` (plansearch.h). */
#include "sweep/plansearch.h"
#include "base/progress.h"
#include "config/framework.h"
#include "parallel/plan.h"
#include "parallel/sim.h"
#include <math.h>
#include <string.h>

#define SEARCH_MAX_MICRO_BATCH 16
/* The sequence from which the search walks context parallelism (cp 1, 2,
 * 4, ...): shorter ones keep the experiment's cp, so that searches of
 * short sequences stay as fast as before. 8192 is Llama 3's pre-training
 * context (arXiv:2407.21783, section 3.4.1), the longest that Meta trained
 * without cp; its 131k-token stage used cp (section 3.3.2). */
#define SEARCH_CP_MIN_SEQ 8192
#define SEARCH_MAX_VIRTUAL_STAGES 8

/* The walk's shared state: the candidates in the order they replay
 * (by bound), and the KEEP fastest times replayed so far, which decide
 * what the rest may skip. */
typedef struct {
  GArray *cands;
  guint *order;           /* owned: indices into cands, by bound */
  guint keep;             /* 0: replay every plan */
  GMutex lock;            /* guards best and found */
  double *best;           /* owned: keep times, ascending */
  guint found;
  gint done;              /* candidates finished (atomic) */
} Walk;

/* The time a candidate must beat to matter: the KEEP-th fastest
 * replayed, or infinity while fewer have replayed. */
static double
walk_threshold (Walk *w)
{
  g_mutex_lock (&w->lock);
  double t = w->keep > 0 && w->found >= w->keep ? w->best[w->keep - 1]
                                                 : INFINITY;
  g_mutex_unlock (&w->lock);
  return t;
}

static void
walk_record (Walk *w, double t)
{
  g_mutex_lock (&w->lock);
  guint n = MIN (w->found, w->keep), i = n;
  for (; i > 0 && w->best[i - 1] > t; i--)
    if (i < w->keep)
      w->best[i] = w->best[i - 1];
  if (i < w->keep)
    w->best[i] = t;
  w->found++;
  g_mutex_unlock (&w->lock);
}

/* DATA: a position in w->order plus one. A candidate whose bound exceeds
 * the threshold is skipped (pruned): its step would exceed the KEEP
 * fastest found, so it ranks after them whatever its time. The bound is
 * compared strictly: a plan that could tie may rank first on its index. */
static void
run_candidate (gpointer data, gpointer user_data)
{
  Walk *w = user_data;
  guint k = w->order[GPOINTER_TO_UINT (data) - 1];
  PlanCandidate *c = &g_array_index (w->cands, PlanCandidate, k);
  if (w->keep > 0 && !c->fails && c->bound_s > walk_threshold (w))
    c->pruned = c->ok = TRUE;
  else
    {
      SimOptions options = { FALSE, NULL };
      c->ok = sim_run (&c->spec, &options, &c->result, NULL)
              && c->result.fits_memory;
      if (c->ok && w->keep > 0)
        walk_record (w, c->result.iteration_time_s);
    }
  g_atomic_int_inc (&w->done);
}

/* GThreadPool's function: the bound (sim_plan_bound) of candidate DATA,
 * whose plan fits. */
static void
bound_candidate (gpointer data, gpointer user_data)
{
  PlanCandidate *c = data;
  const ExperimentSpec *e = &c->spec;
  Plan plan;
  SimBound bound;
  gboolean made = plan_make (&plan, e, e->parallel.micro_batch,
                             e->parallel.virtual_stages, NULL);
  g_assert (made);
  sim_plan_bound (&plan, &bound);
  c->bound_s = bound.step_s;
  c->fails = bound.fails;
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
  gboolean recompute, zero, ep, etp, cp;
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
    { "parallel.ep", G_STRUCT_OFFSET (Pins, ep) },
    { "parallel.etp", G_STRUCT_OFFSET (Pins, etp) },
    { "parallel.cp", G_STRUCT_OFFSET (Pins, cp) },
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
 * runs (plan_check holds its rules), each of which, fitting or not,
 * counts in *VALID. */
static void
add_layout (GArray *cands, const ExperimentSpec *e, const Pins *pins, guint *valid)
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
          PlanCandidate c = { *e };
          if (pins->zero && zero != e->zero.stage)
            continue;
          c.spec.training.recompute = order[r];
          c.spec.zero.stage = pins->zero ? e->zero.stage : zero;
          if (!plan_check (&c.spec, NULL))
            continue;
          (*valid)++;
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

/* Whether the axis value X is one to walk: any when the axis is free,
 * else only the value held. */
#define WALK(pinned, x, held) (!(pinned) || (held) <= 0 || (x) == (held))

/* The expert-parallel layouts of a layout: for a mixture of experts each
 * ep that divides the experts, with etp the framework's default (tp for
 * Megatron-Core, 1 for DeepSpeed-MoE) unless held; plan_check refuses
 * the ep and etp no group layout allows. A dense model: as it is. */
static void
add_expert_layouts (GArray *cands, const ExperimentSpec *e, const Pins *pins,
                    guint *valid)
{
  if (e->model.experts == 0)
    {
      add_layout (cands, e, pins, valid);
      return;
    }
  for (int ep = 1; ep <= e->model.experts; ep++)
    {
      if (e->model.experts % ep != 0 || !WALK (pins->ep, ep, e->parallel.ep))
        continue;
      ExperimentSpec x = *e;
      x.parallel.ep = ep;
      if (!pins->etp)
        x.parallel.etp = e->framework->deepspeed_moe ? 1 : e->parallel.tp;
      add_layout (cands, &x, pins, valid);
    }
}

/* The layouts of TP x CP ranks: every pp, dp, micro-batch and virtual
 * stages the base allows. */
static void
enumerate_stages (GArray *cands, const ExperimentSpec *base, const Pins *pins,
                  guint *valid, int tp, int cp)
{
  const ModelSpec *m = &base->model;
  const ParallelSpec *bp = &base->parallel;
  int gpus = base->gpus;
  for (int pp = 1; pp <= m->layers && tp * cp * pp <= gpus; pp++)
    {
      /* A pp that does not divide the layers splits them as evenly
       * as they go, one chunk a stage. */
      gboolean even = m->layers % pp == 0;
      if ((!even && pp > SPEC_MAX_LIST) || gpus % (tp * cp * pp) != 0
          || !WALK (pins->pp, pp, bp->pp))
        continue;
      int dp = gpus / (tp * cp * pp);
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
              e.parallel.cp = cp;
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
              /* TE's TP overlap needs sequence parallelism: asked for,
               * it runs where a plan has that (plan.c refuses the rest). */
              e.parallel.tp_comm_overlap = bp->tp_comm_overlap && tp > 1
                                           && e.parallel.sequence_parallel;
              /* The search splits the layers itself. */
              e.parallel.stage_layers.len = 0;
              if (!even)
                plan_balanced_stages (m->layers, pp,
                                      &e.parallel.stage_layers);
              add_expert_layouts (cands, &e, pins, valid);
            }
        }
    }
}

static void
enumerate (GArray *cands, const ExperimentSpec *base, const Pins *pins, guint *valid)
{
  const ModelSpec *m = &base->model;
  const ParallelSpec *bp = &base->parallel;
  int gpus = base->gpus, gpn = base->topology.gpus_per_node;
  for (int tp = 1; tp <= MIN (m->heads, gpus); tp++)
    {
      if (m->heads % tp != 0 || gpus % tp != 0
          || (tp > gpn && !bp->tp_across_nodes) || !WALK (pins->tp, tp, bp->tp))
        continue;
      /* cp: powers of two for a long sequence, unless held; the
       * experiment's otherwise. */
      gboolean walk_cp = !pins->cp && m->seq_len >= SEARCH_CP_MIN_SEQ;
      for (int cp = walk_cp ? 1 : MAX (bp->cp, 1); tp * cp <= gpus;
           cp *= 2)
        {
          if (walk_cp && cp > 1 && m->seq_len % (2 * cp) != 0)
            break;
          enumerate_stages (cands, base, pins, valid, tp, cp);
          if (!walk_cp)
            break;
        }
    }
}

/* The replayed plans that fit by time, then those pruned, then those
 * that failed or do not fit; each in the order of enumeration on a tie. */
static int
by_time (gconstpointer a, gconstpointer b)
{
  const PlanCandidate *x = a, *y = b;
  int rx = !x->ok ? 2 : x->pruned, ry = !y->ok ? 2 : y->pruned;
  if (rx != ry)
    return rx < ry ? -1 : 1;
  if (rx == 0 && x->result.iteration_time_s != y->result.iteration_time_s)
    return x->result.iteration_time_s < y->result.iteration_time_s ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

char *
plansearch_label (const PlanCandidate *c)
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
  if (e->model.experts > 0)
    g_string_append_printf (s, ", ep %d etp %d", e->parallel.ep, e->parallel.etp);
  if (e->parallel.cp > 1)
    g_string_append_printf (s, ", cp %d %s", e->parallel.cp,
                            spec_enum_name (SPEC_ENUM_CP_KIND,
                                            e->parallel.cp_kind));
  for (int i = 0, run; i < sl->len; i += run)
    {
      for (run = 1; i + run < sl->len && sl->v[i + run] == sl->v[i]; run++)
        ;
      g_string_append_printf (s, run > 1 ? "%s%dx%d" : "%s%d",
                              i ? "," : ", stages ", sl->v[i], run);
    }
  return g_string_free (s, FALSE);
}

GPtrArray *
plansearch_sets (const PlanCandidate *c)
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
  if (e->model.experts > 0)
    {
      g_ptr_array_add (sets, g_strdup_printf ("parallel.ep=%d", e->parallel.ep));
      g_ptr_array_add (sets, g_strdup_printf ("parallel.etp=%d", e->parallel.etp));
    }
  /* cp where the search walks it or the plan has it. */
  if (e->parallel.cp > 1 || e->model.seq_len >= SEARCH_CP_MIN_SEQ)
    g_ptr_array_add (sets, g_strdup_printf ("parallel.cp=%d",
                                            MAX (e->parallel.cp, 1)));
  /* The stages always, [] for even ones: a list in the file would
   * otherwise outlive a plan of another pp. One word, without blanks. */
  GString *list = g_string_new ("parallel.stage_layers=[");
  for (int i = 0; i < sl->len; i++)
    g_string_append_printf (list, "%s%d", i ? "," : "", sl->v[i]);
  g_string_append_c (list, ']');
  g_ptr_array_add (sets, g_string_free (list, FALSE));
  return sets;
}

/* Positions in DATA's candidates by bound, then by index. */
static gint
by_bound (gconstpointer a, gconstpointer b, gpointer data)
{
  const GArray *cands = data;
  const PlanCandidate *x = &g_array_index (cands, PlanCandidate, *(const guint *) a);
  const PlanCandidate *y = &g_array_index (cands, PlanCandidate, *(const guint *) b);
  if (x->bound_s != y->bound_s)
    return x->bound_s < y->bound_s ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

GArray *
plansearch_run (const ExperimentSpec *base, const char *const *sets,
                int jobs, guint keep, guint *n_ok, guint *n_valid,
                guint *n_pruned)
{
  Pins pins;
  pins_from_sets (&pins, sets);
  GArray *cands = g_array_new (FALSE, FALSE, sizeof (PlanCandidate));
  *n_valid = 0;
  enumerate (cands, base, &pins, n_valid);
  /* A debugging aid (trainsim(1), ENVIRONMENT): every plan replayed. */
  const char *no_prune = g_getenv ("TRAINSIM_NO_PRUNE");
  Walk w = { cands, g_new (guint, MAX (cands->len, 1)),
             no_prune != NULL && *no_prune != '\0' ? 0 : keep };
  w.best = g_new (double, MAX (w.keep, 1));
  g_mutex_init (&w.lock);
  for (guint i = 0; i < cands->len; i++)
    w.order[i] = i;
  /* The bounds first, on the same threads: each takes a plan's programs. */
  GThreadPool *pool = g_thread_pool_new (bound_candidate, NULL, jobs, TRUE,
                                         NULL);
  for (guint i = 0; w.keep > 0 && i < cands->len; i++)
    g_thread_pool_push (pool, &g_array_index (cands, PlanCandidate, i), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
  g_qsort_with_data (w.order, (gint) cands->len, sizeof (guint), by_bound,
                     cands);
  pool = g_thread_pool_new (run_candidate, &w, jobs, TRUE, NULL);
  for (guint i = 0; i < cands->len; i++)
    g_thread_pool_push (pool, GUINT_TO_POINTER (i + 1), NULL);
  Progress line;
  progress_init (&line, "plans", cands->len, 0);
  while (line.on && (guint) g_atomic_int_get (&w.done) < cands->len)
    {
      progress_draw (&line, (guint64) g_atomic_int_get (&w.done), NULL);
      g_usleep (G_USEC_PER_SEC / 10);
    }
  g_thread_pool_free (pool, FALSE, TRUE);
  progress_clear (&line);
  g_mutex_clear (&w.lock);
  g_free (w.best);
  g_free (w.order);
  g_array_sort (cands, by_time);
  *n_ok = 0;
  guint pruned = 0;
  for (guint i = 0; i < cands->len; i++)
    {
      *n_ok += g_array_index (cands, PlanCandidate, i).ok;
      pruned += g_array_index (cands, PlanCandidate, i).pruned;
    }
  if (n_pruned != NULL)
    *n_pruned = pruned;
  return cands;
}
