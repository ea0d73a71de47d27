/* sim-bound.c: a lower bound on a plan's step without its replay (sim.h,
 * sim_plan_bound), which lets `trainsim search` skip the plans that cannot
 * beat the ones it has replayed.
 *
 * Why it is a lower bound. The builder (sim-build.c) puts every piece of
 * a layer program on the stage's compute stream, one op after another in
 * the schedule's order: kernels, each op as long as the sum of its
 * kernels' times (stretched by topology.variability's factor, never
 * shortened where the factor is at least 1), and the TP, CP and EP
 * collectives inside the layers, which carry no flow and last their
 * fixed time (sim.c, launch); the replay runs a stream's ops one at a
 * time. The bound counts only programs that every schedule runs: per
 * micro-batch and model chunk, each layer's forward, its backward (the
 * cheaper of the accumulating and the plain one), and what recompute
 * runs again, the embedding's forward and backward on the first virtual
 * stage, the head's on the last; the programs are sim_prepare's own, so
 * their times are the replay's to the picosecond. Pipeline sends, data
 * parallelism, the optimizer, host launches and everything else the
 * replay adds are left out: the bound assumes they cost nothing and
 * overlap perfectly. On top of stage s's work W_s come two chains the
 * pipeline cannot overlap away: the
 * stage's first op waits for the micro-batch's forward through virtual
 * stages 0 .. s-1 (each chunk's forward ends before its send, which the
 * next chunk's first op waits for), and its last op is a backward whose
 * gradients then go back through virtual stages s-1 .. 0, one backward
 * after another. So the step lasts at least
 *
 *   max over s of  sum_{s' < s} F_s'  +  W_s  +  sum_{s' < s} B_s'
 *
 * with F and B one chunk's forward and backward programs on stage s'
 * (the embedding's on stage 0). Pruning on it changes nothing that search
 * prints (plansearch.c). */
#include "parallel/sim-private.h"

/* The time of PROG on the compute stream: its kernels and its TP, CP
 * and EP collectives. */
static SimTime
stream_time (const Program *prog)
{
  return prog->time;
}

static SimTime
stream_min (const Program *a, const Program *b)
{
  return MIN (stream_time (a), stream_time (b));
}

/* The least factor topology.variability puts on any GPU op of the
 * replay (sim-build.c, gpu_factor); 0 where a jitter draw can shrink an
 * op without bound. */
static double
least_factor (const Sim *sim)
{
  double f = sim->gpu_factor;
  if (sim->options->full && sim->jitter > 0)
    return 0;
  for (int r = 0; sim->rank_factor != NULL && r < sim->plan->gpus; r++)
    f = MIN (f, sim->gpu_factor * sim->rank_factor[r]);
  return f;
}

void
sim_plan_bound (const Plan *plan, SimBound *bound)
{
  const SimOptions options = { FALSE, NULL };
  SimOptions chosen;
  sim_choose_mode (plan, &options, &chosen);
  Sim sim = { plan, &chosen };
  sim_prepare (&sim);
  SimCost cost;
  sim_estimate (&sim, &cost);
  /* The replay refuses the plan (budget.h) or fails on an op of more
   * than a day that the programs already hold. */
  bound->fails = !sim_budget_check (&cost, "", NULL) || sim.absurd != 0;
  bound->step_s = 0;
  /* A factor below 1 (full mode's draws) could make the replay faster
   * than the kernels' nominal times: no bound then. */
  if (least_factor (&sim) < 1)
    {
      sim_clear (&sim);
      return;
    }

  const ExperimentSpec *e = plan->spec;
  gboolean ds = e->zero.stage >= 2;   /* plain backward only, as emit_chunk */
  SimTime fwd = stream_time (&sim.layer_fwd);
  /* Full recompute runs the forward again. */
  SimTime again = sim.recompute == &sim.layer_fwd ? fwd
                  : sim.recompute != NULL ? stream_time (sim.recompute) : 0;
  SimTime bwd = (ds ? stream_time (&sim.layer_bwd)
                    : stream_min (&sim.layer_bwd, &sim.layer_bwd_acc))
                + again;
  SimTime emb_fwd = stream_time (&sim.emb_fwd);
  SimTime emb_bwd = ds ? stream_time (&sim.emb_bwd)
                       : stream_min (&sim.emb_bwd, &sim.emb_bwd_acc);
  SimTime head = stream_time (&sim.head_fwd)
                 + (ds ? stream_time (&sim.head_bwd)
                       : stream_min (&sim.head_bwd, &sim.head_bwd_acc));
  int m = plan->micro_batches, v = plan->virtual_stages;
  /* In picoseconds as doubles: exact up to 2^53 ps (2.5 hours), and a
   * sum that rounds there stays far below a day's op. */
  double before_f = 0, before_b = 0, best = 0;
  for (int s = 0; s < plan->pp; s++)
    {
      double layers = plan_chunk_layers (plan, s);
      double f = layers * (double) fwd + (s == 0 ? (double) emb_fwd : 0);
      double b = layers * (double) bwd + (s == 0 ? (double) emb_bwd : 0);
      double w = m * ((double) v * layers * ((double) fwd + (double) bwd)
                      + (s == 0 ? (double) (emb_fwd + emb_bwd) : 0)
                      + (s == plan->pp - 1 ? (double) head : 0));
      best = MAX (best, before_f + w + before_b);
      before_f += f;
      before_b += b;
    }
  /* Less a part in a million: the replay's ticks are sums of the same
   * integers, and this keeps the doubles' rounding on the safe side. */
  bound->step_s = best * (1 - 1e-6) / SIM_TIME_PS_PER_S;
  sim_clear (&sim);
}
