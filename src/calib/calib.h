/* calib.h: fitting trainsim's constants to a user's own measurements, for
 * `trainsim calibrate`: a link's efficiency and step latency to
 * nccl-tests rows, a device's large-GEMM efficiency to timed GEMMs, and
 * the host's kernel launch time to a launch benchmark.
 *
 * Each fit runs trainsim's own model (net_benchmark_time, as `trainsim
 * collective` times a row; compute_gemm and compute_kernel_time, as a run
 * prices a GEMM) with the constant varied, and keeps the value whose
 * predictions have the least mean absolute relative error in time
 * (MAPE) over the rows, as `trainsim validate` scores. The search is a
 * grid and then a pattern search that halves its steps: deterministic,
 * the same rows give the same bytes on every machine. The inputs are
 * checked by the caller (sizes, counts, at least two rows). */
#pragma once

#include "config/spec.h"

/* ---- the search ---------------------------------------------------------- */

/* A parameter's range; a log-scale one is searched in equal ratios. */
typedef struct {
  double lo, hi;
  gboolean log_scale;
} CalibRange;

/* The objective: F (X, DATA), X holding N parameters. */
typedef double (*CalibObjective) (const double *x, void *data);

/* The X within RANGES (N of them, 1 or 2) where F is least; returns F
 * there. A grid of 33 points a parameter, then a pattern search from the
 * grid's best that halves its steps down to a millionth of each range
 * (of its logarithm on a log scale): 33^N calls of F and then a few
 * hundred (at most 100,000). */
double calib_minimize (CalibObjective f, void *data, int n,
                       const CalibRange *ranges, double *x);

/* ---- links, from nccl-tests -------------------------------------------- */

typedef enum {
  CALIB_INTRA_NODE,   /* NVLink, NVSwitch, PCIe: every rank on one node */
  CALIB_INTER_NODE,   /* the NICs: ranks on more than one node */
} CalibLink;

/* One row of a log: a collective of BYTES (nccl-tests' size) over RANKS,
 * PER_NODE of them on each node, that took SECONDS. */
typedef struct {
  CollKind op;
  double bytes;
  int ranks, per_node;
  double seconds;
} CalibCollRow;

typedef struct {
  double efficiency;   /* of the link's bandwidth */
  double latency_s;    /* per step, as the topology's latency key */
  /* FALSE: every row is so large that the steps' latency is under
   * CALIB_LATENCY_SHARE of its predicted time, so the rows cannot tell
   * one latency from another: the topology's was kept and only the
   * efficiency fitted. */
  gboolean latency_fitted;
  double mape;
  /* The same before fitting: the topology's values, and their MAPE. */
  double efficiency_before, latency_before_s, mape_before;
} CalibLinkFit;

/* Below this share of every row's time the latency is not fitted. */
#define CALIB_LATENCY_SHARE 0.01

/* The efficiency a link is searched for, a fraction of its bandwidth: an
 * efficiency at the top means the topology's bandwidth is too low. */
#define CALIB_EFFICIENCY_MIN 0.01
#define CALIB_EFFICIENCY_MAX 1.0
/* The step latencies searched, seconds: 10 ns to 1 ms. */
#define CALIB_LATENCY_MIN 1e-8
#define CALIB_LATENCY_MAX 1e-3

/* Fits LINK's efficiency and latency of topology T (the other link's
 * constants held as T gives them) to the N rows (N >= 2), each timed by
 * net_benchmark_time. PREDICTED (N) receives each row's fitted time. */
void calib_fit_link (const TopologySpec *t, CalibLink link,
                     const CalibCollRow *rows, guint n, CalibLinkFit *fit,
                     double *predicted);

/* ---- a device's GEMMs ---------------------------------------------------- */

typedef struct {
  int64_t batch, m, n, k;
  Precision precision;
  double seconds;
} CalibGemmRow;

typedef struct {
  double matmul_efficiency;
  double mape;
  double efficiency_before, mape_before;  /* the device's, and its MAPE */
  /* Rows whose time the efficiency does not set: priced by their bytes
   * (HBM) or the launch floor at the fitted value. */
  guint insensitive;
} CalibGemmFit;

/* Fits DEVICE's matmul_efficiency (ComputeModel.matmul_efficiency, the
 * fraction of peak large GEMMs reach) to the N rows (N >= 2), each priced
 * as compute_gemm and compute_kernel_time price it at its precision, which
 * the device must have a peak for. PREDICTED (N) receives the fitted
 * times. */
void calib_fit_gemm (const DeviceSpec *device, const CalibGemmRow *rows,
                     guint n, CalibGemmFit *fit, double *predicted);

/* ---- the host's kernel launches ------------------------------------------ */

typedef struct {
  double kernel_launch_s;   /* the slope: host seconds per kernel */
  double intercept_s;       /* what does not grow with the kernels */
  double mape;
  double kernel_launch_before_s;  /* the shipped default */
} CalibLaunchFit;

/* The least-squares line through (KERNELS[i], SECONDS[i]), N >= 2 points
 * of at least two kernel counts. PREDICTED (N) receives the line's
 * values. */
void calib_fit_launch (const double *kernels, const double *seconds, guint n,
                       CalibLaunchFit *fit, double *predicted);
