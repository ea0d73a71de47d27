/* goodput.c: the run's wall time under failures and checkpoints
 * (goodput.h), in closed form and as a seeded Monte Carlo. */
#include "sweep/goodput.h"
#include "base/stats.h"
#include <math.h>
#include <stdlib.h>

double
goodput_young_daly (double checkpoint_s, double mtbf_s)
{
  return sqrt (2 * checkpoint_s * mtbf_s);
}

/* The whole segments of work and the last, shorter one (0 when the work
 * divides evenly). */
static double
segments (const GoodputModel *m, double *last)
{
  double whole = floor (m->work_s / m->interval_s);
  *last = m->work_s - whole * m->interval_s;
  return whole;
}

/* The expected time of a segment of S seconds, checkpoint included. */
static double
segment_expected_s (const GoodputModel *m, double s)
{
  double lambda = m->gpu_rate + m->node_rate;
  return (1 / lambda + m->recovery_s) * expm1 (lambda * s);
}

double
goodput_expected_s (const GoodputModel *m)
{
  double last, whole = segments (m, &last);
  double t = whole * segment_expected_s (m, m->interval_s + m->checkpoint_s);
  return last > 0 ? t + segment_expected_s (m, last + m->checkpoint_s) : t;
}

double
goodput_first_order_s (const GoodputModel *m)
{
  double mtbf = 1 / (m->gpu_rate + m->node_rate);
  double tau = m->interval_s, c = m->checkpoint_s;
  return m->work_s * (1 + c / tau)
         / (1 - (m->recovery_s + (tau + c) / 2) / mtbf);
}

/* An exponential draw of rate RATE. */
static double
exponential (GRand *rng, double rate)
{
  /* g_rand_double is in [0, 1): 1 - u is in (0, 1], its log finite. */
  return -log1p (-g_rand_double (rng)) / rate;
}

/* A uniform in (0, 1), as spec_slowest_draw needs. */
static double
open_uniform (GRand *rng)
{
  return (g_rand_int (rng) + 0.5) * 0x1.0p-32;
}

/* The work of one trial: the slowest GPU drawn where the model has a
 * spread (goodput.h). */
static double
trial_work (const GoodputModel *m, GRand *rng)
{
  const VariabilitySpec *v = m->variability;
  if (v == NULL || v->gpu_speed_spread == 0)
    return m->work_s;
  double u1 = open_uniform (rng), u2 = open_uniform (rng);
  double drawn = spec_slowest_draw (v, m->gpus, m->gpus_per_node, u1, u2);
  double expected = spec_slowest_expected (v, m->gpus, m->gpus_per_node);
  return m->work_s * (1 + m->varied * (drawn / expected - 1));
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

gboolean
goodput_monte_carlo (const GoodputModel *m, int trials, guint32 seed,
                     GoodputStats *out, char **why)
{
  if (!(isfinite (m->checkpoint_s) && isfinite (m->interval_s)
        && isfinite (m->recovery_s)))
    {
      *why = g_strdup_printf ("a checkpoint written in %.3g s every %.3g s, and "
                              "%.3g s to recover from a failure, have no end; "
                              "give the storage more bandwidth, or a finite "
                              "reliability", m->checkpoint_s, m->interval_s,
                              m->recovery_s);
      return FALSE;
    }
  double last, whole = segments (m, &last);
  if (whole + 1 > GOODPUT_MAX_SEGMENTS)
    {
      *why = g_strdup_printf ("a checkpoint every %g s of %g s of work makes "
                              "more than %g checkpoints; give a longer "
                              "reliability.checkpoint_interval", m->interval_s,
                              m->work_s, GOODPUT_MAX_SEGMENTS);
      return FALSE;
    }
  /* The expected failures: a stretch of s seconds (work and checkpoint)
   * is begun again after each, exp (lambda s) - 1 of them on average. */
  double lambda = m->gpu_rate + m->node_rate;
  double stretch = m->interval_s + m->checkpoint_s;
  double fails = (whole > 0 ? whole * expm1 (lambda * stretch) : 0)
                 + (last > 0 ? expm1 (lambda * (last + m->checkpoint_s)) : 0);
  if (!(fails <= GOODPUT_MAX_FAILURES))
    {
      *why = g_strdup_printf ("the cluster fails every %.3g s on average, and a "
                              "stretch between checkpoints takes %.3g s (the "
                              "interval and the checkpoint's write): the run "
                              "would begin stretches again %.3g times on average, "
                              "more than %g; give a shorter "
                              "reliability.checkpoint_interval, or faster storage",
                              1 / lambda, stretch, fails, GOODPUT_MAX_FAILURES);
      return FALSE;
    }
  if ((whole + 1 + fails) * trials > GOODPUT_MAX_DRAWS)
    {
      *why = g_strdup_printf ("its %d trials would replay %.3g checkpoints and "
                              "failures, more than %g; give fewer "
                              "reliability.trials", trials,
                              (whole + 1 + fails) * trials, GOODPUT_MAX_DRAWS);
      return FALSE;
    }
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  g_autofree double *totals = g_new (double, trials);
  double failures = 0, sum = 0;
  for (int k = 0; k < trials; k++)
    {
      GoodputModel mk = *m;
      mk.work_s = trial_work (m, rng);
      whole = segments (&mk, &last);
      double t = 0;
      for (double i = 0; i < whole + (last > 0); i++)
        {
          double s = (i < whole ? m->interval_s : last) + m->checkpoint_s;
          /* Memoryless: a segment begun again draws its failures afresh,
           * a GPU's and a node's apart, the first to come striking. */
          for (;;)
            {
              double g = exponential (rng, m->gpu_rate);
              double n = exponential (rng, m->node_rate);
              double x = MIN (g, n);
              if (x >= s)
                break;
              t += x + m->recovery_s;
              failures++;
            }
          t += s;
        }
      totals[k] = t;
      sum += t;
    }
  qsort (totals, trials, sizeof *totals, compare_doubles);
  out->mean_s = sum / trials;
  /* Nearest rank: the same trials give the same percentiles. */
  out->p10_s = totals[(int) floor (0.1 * (trials - 1) + 0.5)];
  out->p90_s = totals[(int) floor (0.9 * (trials - 1) + 0.5)];
  out->failures = failures / trials;
  return TRUE;
}
