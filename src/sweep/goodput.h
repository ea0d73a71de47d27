/* goodput.h: the time a whole training run takes when the cluster fails
 * now and then and the run goes back to its last checkpoint.
 *
 * The run is WORK seconds of steps at perfect uptime, cut into segments of
 * INTERVAL seconds of work, each followed by a checkpoint that takes
 * CHECKPOINT seconds to write (the steps wait for it, as Megatron-LM's
 * synchronous save does). GPUs and nodes fail as independent Poisson
 * processes (constant rates, so the cluster's failures are one Poisson
 * process of the summed rate). A failure during a segment or its
 * checkpoint loses the segment: the run pays RECOVERY seconds (detection,
 * restart, reading the checkpoint back), during which nothing fails, and
 * does the segment again. */
#pragma once

#include <glib.h>
#include "config/spec.h"

typedef struct {
  double work_s;            /* the run at perfect uptime */
  double gpu_rate;          /* failures per second, all GPUs together */
  double node_rate;         /* failures per second, all nodes together */
  double checkpoint_s;      /* writing one checkpoint */
  double interval_s;        /* work between checkpoints */
  double recovery_s;        /* detection + restart + loading the checkpoint */
  /* topology.variability: the steps were replayed at the expected pace
   * of the job's slowest GPU; the Monte Carlo draws that GPU once a trial
   * (spec_slowest_draw: one allocation for the run), and the share
   * VARIED of the work (the GPUs' kernels) scales by the draw over the
   * expectation. NULL, or no spread: no draw. */
  const VariabilitySpec *variability;
  int64_t gpus;
  int gpus_per_node;
  double varied;
} GoodputModel;

typedef struct {
  double mean_s, p10_s, p90_s;   /* of the run's wall time */
  double failures;               /* mean failures per run */
} GoodputStats;

/* Young's (1974) first-order optimum, sqrt (2 C M), that Daly (2006)
 * confirms to first order: the work between checkpoints that minimises
 * the time lost to checkpoints and to rework, for a checkpoint of C
 * seconds and a mean time between failures of M seconds. */
double goodput_young_daly (double checkpoint_s, double mtbf_s);

/* The expected wall time of the run, exactly, under the model above: a
 * segment of s seconds (work and its checkpoint) takes (1/lambda + R)
 * (e^(lambda s) - 1) on average, the standard result for restarts from
 * the segment's start after memoryless failures. */
double goodput_expected_s (const GoodputModel *m);

/* The standard first-order model (Young 1974, Daly 2006), for failures
 * rare against a segment: per unit of work, 1 + C/tau for the
 * checkpoints and, per failure (one every M seconds of wall time), R +
 * (tau + C)/2 of recovery and rework: T = W (1 + C/tau) / (1 - (R + (tau
 * + C)/2) / M). */
double goodput_first_order_s (const GoodputModel *m);

/* The run replayed TRIALS times with failures drawn from GRand seeded
 * with SEED (the same seed gives the same numbers on every machine):
 * the mean wall time, its 10th and 90th percentiles, and the mean count
 * of failures. FALSE, with *WHY set (owned, saying what to change), when a
 * checkpoint's write, the interval or the recovery is not finite (a
 * storage bandwidth near zero), when the run would need more than
 * GOODPUT_MAX_SEGMENTS checkpoints (an
 * interval far too short for the work), or would fail more than
 * GOODPUT_MAX_FAILURES times on average (a stretch between checkpoints
 * far longer than the time between failures: each failure undoes it, and
 * the expected restarts grow as exp (stretch / MTBF)), or the replay
 * would draw more than GOODPUT_MAX_DRAWS segments and failures over all
 * its trials (about a minute of work). */
#define GOODPUT_MAX_SEGMENTS 10000000.0
#define GOODPUT_MAX_FAILURES 1000000.0
#define GOODPUT_MAX_DRAWS 1000000000.0
gboolean goodput_monte_carlo (const GoodputModel *m, int trials,
                              guint32 seed, GoodputStats *out, char **why);
