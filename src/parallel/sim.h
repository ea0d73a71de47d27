/* sim.h: the executor: a plan's training step replayed as engine events.
 *
 * Each simulated rank has streams as a Megatron or DeepSpeed process has
 * CUDA streams: compute (kernels and the tensor-parallel collectives,
 * which Megatron issues on the compute stream), pipeline send,
 * data-parallel collectives, ZeRO-3's parameter gathers, and CPU
 * offload's two directions over PCIe (PCIe is full duplex). An op starts when it heads its stream and its dependencies
 * are done; a collective starts when every participant has reached it.
 * The pipeline schedule is an order of ops on each stage, so the bubble
 * falls out of the replay instead of a formula.
 *
 * Symmetric mode (the default) simulates one representative rank per
 * pipeline stage: on a homogeneous cluster every TP and DP peer does the
 * same work at the same time, so a collective needs only its own rank and
 * its full group size for the cost. Full mode simulates every rank and
 * synchronizes the collectives across them; on such a cluster both modes
 * must agree, which tests/test-sim.c checks.
 *
 * Identical GPUs are not identical (topology.variability): each GPU's
 * time is its nominal time times a factor of spread s drawn once for the
 * run, each op's (a stretch of kernels between two waits) times another
 * of spread j drawn for the op, and the slow nodes' GPUs take 1 + x as
 * long. Every barrier waits for the slowest of the ranks it joins. Full
 * mode draws every factor (seeded: the same input, the same draws) and
 * its collectives wait as they do. Symmetric mode replays no peers, so it
 * takes the expectation of what they do (base/stats.h): a step's DP and
 * pipeline dependencies chain every GPU of the job, so the step runs at
 * the pace of the slowest of all N GPUs, E[slowest of N], or of the
 * slow nodes' GPUs if slower; and every stretch of kernels that ends in
 * a TP collective waits for the slowest draw of the tp ranks,
 * E[slowest of tp] in j. Jitter between other barriers (pipeline sends,
 * the DP reduction) sums over many ops first and averages out, so
 * symmetric mode leaves it out. The slowest GPU also slows stages that
 * do not hold it in symmetric mode: a pipeline's steady state runs at
 * its slowest stage's pace, but its fill and drain at each stage's own,
 * so symmetric mode adds about (p - 1) / (m + p - 1) of the excess (m
 * micro-batches); tests/test-sim.c checks how close the modes come. */
#pragma once

#include <glib.h>
#include "config/spec.h"
#include "parallel/plan.h"
#include "parallel/result.h"

typedef enum {
  SIM_STREAM_COMPUTE,
  SIM_STREAM_PP,
  SIM_STREAM_DP,
  SIM_STREAM_GATHER,    /* ZeRO-3 parameter gathers */
  SIM_STREAM_TO_HOST,   /* offload: gradients down */
  SIM_STREAM_FROM_HOST, /* offload: parameters up */
  SIM_STREAM_CPU,       /* offload: the CPUs' Adam step */
  SIM_STREAM_HOST,      /* the CPU thread that issues the GPU's kernels */
  SIM_STREAM_EP,        /* an EP all-to-all beside a side stream's
                         * kernels (parallel.moe_shared_expert_overlap) */
  SIM_N_STREAMS
} SimStream;

/* Receives each op of the step as it ends, for a trace. */
typedef void (*SimTraceFn) (void *ctx, const TraceSpan *span);

/* Told, now and then, how many engine events have fired of about how
 * many (the budget's estimate, which the count may pass). */
typedef void (*SimProgressFn) (void *ctx, uint64_t events, uint64_t estimate);

typedef struct {
  gboolean full;        /* every rank, not one per stage */
  SimTraceFn trace;     /* called with trace_ctx when not NULL */
  void *trace_ctx;
  SimProgressFn progress;   /* called with progress_ctx when not NULL */
  void *progress_ctx;
} SimOptions;

/* Replays one plan; fails (TS_ERROR_INPUT) only when an op would take
 * longer than any sane plan, or the step longer than 2^63 ps (absurd
 * efficiencies or bandwidths), or when replaying it would exceed the
 * simulator's budgets (budget.h; TS_ERROR_USAGE for a bad budget
 * variable), which it checks before it allocates anything. */
gboolean sim_run_plan (const Plan *plan, const SimOptions *options,
                       SimResult *result, GError **error);
/* A lower bound on the step that sim_run_plan replays for PLAN, worked
 * out without the replay (sim-bound.c says why it is one), and whether
 * that replay is sure to fail. */
typedef struct {
  double step_s;        /* <= the replay's iteration_time_s; 0 where a
                         * GPU can run faster than nominal (full mode's
                         * variability draws) */
  gboolean fails;       /* over the budgets, or an op of more than a day
                         * in the layer programs: the replay fails */
} SimBound;
void sim_plan_bound (const Plan *plan, SimBound *bound);
/* Checks the experiment's plan, resolves `auto` micro-batch and virtual
 * stages by replaying each candidate (the fastest that fits memory wins;
 * ties go to the smaller values), and replays the chosen plan. */
gboolean sim_run (const ExperimentSpec *e, const SimOptions *options,
                  SimResult *result, GError **error);
/* Names of the streams, for the trace. */
const char *const *sim_stream_names (void);
