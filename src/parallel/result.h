/* result.h: what one simulated training step reports.
 *
 * Filled by the executor (sim.c) and read by the output writers; the JSON
 * field names of trainsim(1), OUTPUT (doc/trainsim.1) are the names of
 * these fields. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "base/simtime.h"

/* Where the step's time went, on the critical rank (the slowest stage),
 * in seconds. The parts add up to the iteration time. */
typedef struct {
  double compute;     /* forward, backward and recompute kernels */
  double tp_comm;     /* exposed tensor-parallel collectives */
  double ep_comm;     /* an MoE layer's expert-parallel all-to-alls */
  double cp_comm;     /* context parallelism's KV ring transfers or
                       * all-to-alls, exposed (sim-cp.c) */
  double bubble;      /* pipeline fill and drain: compute idle, nothing to do */
  double pp_comm;     /* exposed pipeline send/recv waits */
  double dp_comm;     /* exposed data-parallel / ZeRO collectives */
  double epilogue;    /* the step's small collectives and what waits for
                       * their groups: the tied embedding's all-reduce,
                       * the optimizer's overflow and norm checks, the
                       * loss's reduction (sim-build.c, sim_epilogue_ops) */
  double optimizer;   /* the optimizer step */
  double offload;     /* exposed CPU-offload transfers and CPU Adam */
  double host;        /* compute idle while the host issues the kernels */
  double variability; /* of the kernels' and optimizer's time, what the
                       * critical rank's GPUs spent over their nominal
                       * time: waiting for the slowest (symmetric mode) or
                       * running slow (full mode; topology.variability) */
} Breakdown;

/* Bytes per GPU at the peak, on the stage with the largest footprint. */
typedef struct {
  double weights;
  double gradients;
  double optimizer;
  double activations;
  double other;       /* embedding/logits buffers, communication buffers,
                       * allocator fragmentation margin */
  double total;       /* the sum: the peak */
  double capacity;    /* the device's memory */
  /* CPU offload: host bytes per node (optimizer partitions, fp32
   * gradients, offloaded parameters, and DeepSpeed's cpu_checkpointing's
   * activation checkpoints) and the node's memory; 0 without. */
  double host;
  double host_capacity;
} MemoryBreakdown;

/* Room for a name echoed in a result, its end included. */
#define SIM_RESULT_NAME 128

typedef struct {
  double iteration_time_s;
  double samples_per_s;
  double tokens_per_s;
  double model_tflops_per_gpu;     /* model FLOPs, no recompute */
  double hardware_tflops_per_gpu;  /* FLOPs executed, recompute included */
  double megatron_tflops_per_gpu;  /* Narayanan 2021 eq. 3 */
  double mfu;
  double hfu;
  /* The model's parameters (plan_model_params): all of them, and those a
   * token uses (a mixture of experts' top_k routed and shared experts;
   * all of them in a dense model), on which model FLOPs and MFU rest. */
  double params;
  double active_params;
  int gpus, tp, pp, dp;
  int cp;              /* context parallelism (plan.h); 1 unless set */
  int ep, etp;         /* expert parallelism and an expert's tensor
                        * parallelism (ParallelSpec); 1 for a dense model */
  gboolean moe;        /* the model is a mixture of experts */
  int micro_batch, global_batch, virtual_stages;
  double memory_per_gpu_gib;
  gboolean fits_memory;
  MemoryBreakdown memory;
  Breakdown breakdown_s;
  double dp_traffic;               /* bytes each GPU of the critical stage
                                    * sends in DP and ZeRO collectives per
                                    * step, by the ring's count */
  double layer_forward_s;          /* one transformer layer's forward */
  double layer_backward_s;         /* and backward, recompute included */
  uint64_t events;                 /* engine events processed */
  uint64_t graph_bytes;            /* what the op graph took: its ops,
                                    * edges, collectives and flows (the
                                    * budget's estimate is of these) */
  /* Stages share nodes (plan_stages_share_nodes): replayed in full as
   * that was cheap (full_auto), or with one rank per stage, missing the
   * stages' sharing of the nodes' NICs (shared_nodes_missed). */
  gboolean full_auto, shared_nodes_missed;
  gboolean has_training;           /* training.tokens was given */
  double days_to_train;
  double cost_usd;
  /* What ran, for JSON and CSV to echo: the model's and topology's names
   * ("(inline)" without one; cut to fit), the framework as name@version,
   * and the names of the spec's settings (static strings). */
  char model[SIM_RESULT_NAME], topology[SIM_RESULT_NAME];
  char framework[SIM_RESULT_NAME];
  const char *schedule, *recompute, *offload, *precision, *attention;
  int zero_stage;
} SimResult;

/* One span of the Chrome trace: an op that ran on one stream of one rank. */
typedef struct {
  const char *name;   /* static string or interned: not owned */
  const char *cat;    /* "compute", "tp", "pp", "dp", "optimizer", "offload",
                       * "host", "epilogue", "ep", "cp": not owned */
  int rank;           /* simulated rank (pid in the trace) */
  int stream;         /* stream index on the rank (tid in the trace) */
  int micro_batch;    /* -1 when not tied to a micro-batch */
  SimTime start, end;
  int group;          /* a collective's group: its ranks in the job (not
                       * only those simulated), or 0 */
} TraceSpan;
