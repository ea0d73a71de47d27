/* calib.c: the fits of `trainsim calibrate`; see calib.h. */
#include "calib/calib.h"
#include "hw/device.h"
#include "net/net.h"

#include <math.h>

/* ---- the search ----------------------------------------------------------
 * The objectives are sums of |relative errors|: continuous but kinked
 * wherever a row's prediction crosses its measurement, and a collective's
 * time also jumps where the tuner changes protocol. So no derivatives: a
 * grid finds the basin, and a compass search (Kolda, Lewis and Torczon,
 * SIAM Review 45(3), 2003) descends it, trying a step up and down each
 * parameter in turn and halving the steps when none helps. */

#define GRID_POINTS 33
#define FINEST_STEP 1e-6
/* A bound on the objective's calls, which the halving reaches long
 * before (each halving costs at most 2 N calls per improvement). */
#define MAX_CALLS 100000

/* Parameter J of unit coordinate U in [0, 1]. */
static double
from_unit (const CalibRange *r, double u)
{
  if (r->log_scale)
    return exp (log (r->lo) + u * (log (r->hi) - log (r->lo)));
  return r->lo + u * (r->hi - r->lo);
}

/* F at the unit coordinates U. */
static double
evaluate (CalibObjective f, void *data, int n, const CalibRange *ranges,
          const double *u, double *x)
{
  for (int j = 0; j < n; j++)
    x[j] = from_unit (&ranges[j], u[j]);
  return f (x, data);
}

double
calib_minimize (CalibObjective f, void *data, int n, const CalibRange *ranges,
                double *x)
{
  g_return_val_if_fail (n >= 1 && n <= 2, NAN);
  double u[2] = { 0, 0 }, best_u[2] = { 0, 0 }, probe[2];
  double best = INFINITY;
  int cells = n == 1 ? GRID_POINTS : GRID_POINTS * GRID_POINTS;
  for (int c = 0; c < cells; c++)
    {
      u[0] = (double) (c % GRID_POINTS) / (GRID_POINTS - 1);
      u[1] = (double) (c / GRID_POINTS) / (GRID_POINTS - 1);
      double v = evaluate (f, data, n, ranges, u, x);
      /* Strictly less: of equal values the first in the grid's order. */
      if (v < best)
        {
          best = v;
          best_u[0] = u[0];
          best_u[1] = u[1];
        }
    }
  double step = 1.0 / (GRID_POINTS - 1);
  for (int calls = 0; step >= FINEST_STEP && calls < MAX_CALLS;)
    {
      gboolean moved = FALSE;
      for (int j = 0; j < n && !moved; j++)
        for (int sign = -1; sign <= 1 && !moved; sign += 2)
          {
            probe[0] = best_u[0];
            probe[1] = best_u[1];
            probe[j] = CLAMP (best_u[j] + sign * step, 0.0, 1.0);
            if (probe[j] == best_u[j])
              continue;
            double v = evaluate (f, data, n, ranges, probe, x);
            calls++;
            if (v < best)
              {
                best = v;
                best_u[0] = probe[0];
                best_u[1] = probe[1];
                moved = TRUE;
              }
          }
      if (!moved)
        step /= 2;
    }
  for (int j = 0; j < n; j++)
    x[j] = from_unit (&ranges[j], best_u[j]);
  return best;
}

/* |predicted / measured - 1|: the error `trainsim validate` scores. */
static double
relative_error (double predicted, double measured)
{
  return fabs (predicted / measured - 1);
}

/* ---- links ---------------------------------------------------------------- */

typedef struct {
  const TopologySpec *t;
  CalibLink link;
  const CalibCollRow *rows;
  guint n;
  double *predicted;      /* NULL while searching */
  double latency_share;   /* the most of any row's time its latency takes */
  double held_latency_s;  /* > 0: the latency, when only efficiency varies */
} LinkProblem;

/* The network of P's topology with its link's efficiency and latency set
 * as the topology's own keys would set them (net_model_init reads
 * intra_node.efficiency and latency, inter_node's likewise). */
static void
link_model (const LinkProblem *p, double efficiency, double latency_s, NetModel *net)
{
  TopologySpec t = *p->t;   /* a shallow copy, read by net_model_init only */
  if (p->link == CALIB_INTRA_NODE)
    {
      t.intra_node.efficiency = efficiency;
      t.intra_node.latency = latency_s;
    }
  else
    {
      t.inter_node.efficiency = efficiency;
      t.inter_node.latency = latency_s;
    }
  net_model_init (net, &t, ALGORITHM_AUTO);
}

static double
link_mape (LinkProblem *p, const NetModel *net)
{
  double sum = 0;
  p->latency_share = 0;
  for (guint i = 0; i < p->n; i++)
    {
      const CalibCollRow *r = &p->rows[i];
      CollCost cost;
      double s = net_benchmark_time (net, r->op, r->bytes, r->ranks, r->per_node, &cost);
      p->latency_share = MAX (p->latency_share, cost.latency_s / s);
      if (p->predicted != NULL)
        p->predicted[i] = s;
      sum += relative_error (s, r->seconds);
    }
  return sum / p->n;
}

static double
link_objective (const double *x, void *data)
{
  LinkProblem *p = data;
  NetModel net;
  link_model (p, x[0], p->held_latency_s > 0 ? p->held_latency_s : x[1], &net);
  return link_mape (p, &net);
}

void
calib_fit_link (const TopologySpec *t, CalibLink link, const CalibCollRow *rows,
                guint n, CalibLinkFit *fit, double *predicted)
{
  g_return_if_fail (n >= 1);
  LinkProblem p = { t, link, rows, n, NULL, 0, 0 };
  /* The values the topology gives now: its keys, else the link kind's
   * calibration, as net_model_init resolves them. */
  NetModel net;
  net_model_init (&net, t, ALGORITHM_AUTO);
  if (link == CALIB_INTRA_NODE)
    {
      fit->efficiency_before = net.intra_bandwidth / t->intra_node.bandwidth;
      fit->latency_before_s = net.intra_latency;
    }
  else
    {
      fit->efficiency_before = net.nic_bandwidth / t->inter_node.nic_bandwidth;
      fit->latency_before_s = net.inter_latency;
    }
  fit->mape_before = link_mape (&p, &net);

  const CalibRange ranges[2] = {
    { CALIB_EFFICIENCY_MIN, CALIB_EFFICIENCY_MAX, FALSE },
    { CALIB_LATENCY_MIN, CALIB_LATENCY_MAX, TRUE },
  };
  double x[2];
  calib_minimize (link_objective, &p, 2, ranges, x);
  /* Can the rows tell latencies apart? Asked at the larger of the fitted
   * latency and the topology's, so that a fit that drove it to nothing
   * on large rows does not pass for one. */
  link_model (&p, x[0], MAX (x[1], fit->latency_before_s), &net);
  link_mape (&p, &net);
  fit->latency_fitted = p.latency_share >= CALIB_LATENCY_SHARE;
  if (!fit->latency_fitted)
    {
      p.held_latency_s = fit->latency_before_s;
      calib_minimize (link_objective, &p, 1, ranges, x);
      x[1] = fit->latency_before_s;
    }
  fit->efficiency = x[0];
  fit->latency_s = x[1];
  p.predicted = predicted;
  link_model (&p, x[0], x[1], &net);
  fit->mape = link_mape (&p, &net);
}

/* ---- GEMMs ------------------------------------------------------------------ */

typedef struct {
  ComputeModel cm[PRECISION_N];   /* the device's, at each precision */
  const CalibGemmRow *rows;
  guint n;
  double *predicted;              /* NULL while searching */
} GemmProblem;

static double
gemm_time (const GemmProblem *p, const CalibGemmRow *r, double efficiency)
{
  ComputeModel cm = p->cm[r->precision];
  cm.matmul_efficiency = efficiency;
  Kernel g = compute_gemm (&cm, r->batch, r->m, r->n, r->k);
  return compute_kernel_time (&cm, &g);
}

static double
gemm_mape (GemmProblem *p, double efficiency)
{
  double sum = 0;
  for (guint i = 0; i < p->n; i++)
    {
      double s = gemm_time (p, &p->rows[i], efficiency);
      if (p->predicted != NULL)
        p->predicted[i] = s;
      sum += relative_error (s, p->rows[i].seconds);
    }
  return sum / p->n;
}

static double
gemm_objective (const double *x, void *data)
{
  return gemm_mape (data, x[0]);
}

void
calib_fit_gemm (const DeviceSpec *device, const CalibGemmRow *rows, guint n,
                CalibGemmFit *fit, double *predicted)
{
  g_return_if_fail (n >= 1);
  GemmProblem p = { .rows = rows, .n = n };
  /* The device's compute model alone, as a run without compute: keys
   * builds it (no flat MFU, no override of the efficiencies). */
  ComputeSpec compute = { 0 };
  for (int prec = 0; prec < PRECISION_N; prec++)
    compute_model_init (&p.cm[prec], device, &compute, (Precision) prec);
  fit->efficiency_before = p.cm[PRECISION_FP16].matmul_efficiency;
  fit->mape_before = gemm_mape (&p, fit->efficiency_before);
  const CalibRange range = { CALIB_EFFICIENCY_MIN, CALIB_EFFICIENCY_MAX, FALSE };
  double x;
  calib_minimize (gemm_objective, &p, 1, &range, &x);
  fit->matmul_efficiency = x;
  p.predicted = predicted;
  fit->mape = gemm_mape (&p, x);
  /* A row whose time a 1 % change of the efficiency leaves alone is
   * priced by its bytes or the launch floor. */
  fit->insensitive = 0;
  for (guint i = 0; i < n; i++)
    if (gemm_time (&p, &rows[i], x * 1.01) == predicted[i])
      fit->insensitive++;
}

/* ---- kernel launches -------------------------------------------------------- */

void
calib_fit_launch (const double *kernels, const double *seconds, guint n,
                  CalibLaunchFit *fit, double *predicted)
{
  g_return_if_fail (n >= 2);
  double mx = 0, my = 0;
  for (guint i = 0; i < n; i++)
    {
      mx += kernels[i] / n;
      my += seconds[i] / n;
    }
  double sxy = 0, sxx = 0;
  for (guint i = 0; i < n; i++)
    {
      sxy += (kernels[i] - mx) * (seconds[i] - my);
      sxx += (kernels[i] - mx) * (kernels[i] - mx);
    }
  g_return_if_fail (sxx > 0);
  fit->kernel_launch_s = sxy / sxx;
  fit->intercept_s = my - fit->kernel_launch_s * mx;
  fit->mape = 0;
  for (guint i = 0; i < n; i++)
    {
      predicted[i] = fit->intercept_s + fit->kernel_launch_s * kernels[i];
      fit->mape += relative_error (predicted[i], seconds[i]) / n;
    }
  /* The default a run takes when the topology gives no host.kernel_launch:
   * the compute model's, outside the flat MFU model. */
  DeviceSpec device = { 0 };
  ComputeSpec compute = { 0 };
  ComputeModel cm;
  compute_model_init (&cm, &device, &compute, PRECISION_FP16);
  fit->kernel_launch_before_s = cm.host_launch_s;
}
