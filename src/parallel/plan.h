/* plan.h: a parallel plan (tp x pp x dp, micro-batches, virtual stages),
 * the rules it must obey, and the memory it needs per GPU.
 *
 * Megatron's rank order puts TP fastest, then DP, then PP: rank =
 * stage * (dp * tp) + replica * tp + tp_rank. So a TP group is tp
 * consecutive GPUs (inside a node when tp <= gpus_per_node), a DP group
 * strides by tp, and pipeline neighbours are dp * tp apart. */
#pragma once

#include <glib.h>
#include "config/spec.h"
#include "parallel/result.h"

typedef struct {
  const ExperimentSpec *spec;   /* not owned */
  int gpus, tp, pp, dp;
  int micro_batch;
  int virtual_stages;           /* v: model chunks per stage */
  int micro_batches;            /* m: per DP replica per iteration */
  int layers_per_chunk;         /* layers / (pp * v), when stages are even */
  /* Context parallelism: cp ranks share each sequence (graph/cp.h).
   * They join the data-parallel ranks in the gradient reduction, as
   * Megatron-Core's data-parallel group "with context parallel" does
   * (parallel_state.py, core_r0.10.0): dp above is that group, dp x cp
   * ranks in the order tp-cp-dp-pp (cp just outside tp), and dp / cp
   * replicas split the batch. cp 1: dp is the replicas. */
  int cp;
} Plan;

/* LAYERS over PP stages as evenly as they go, the end stages (which hold
 * the embedding and the head) given the fewer: 70 on 12 is BLOOM's 5, 6 x
 * 10, 5, the split Megatron-DeepSpeed's type:transformer|embedding
 * partition makes. PP at most SPEC_MAX_LIST and LAYERS. */
void plan_balanced_stages (int layers, int pp, SpecIntList *out);
/* The layers in each of stage's chunks: layers_per_chunk, or the stage's
 * entry of parallel.stage_layers (whose plans have one chunk a stage). */
int plan_chunk_layers (const Plan *plan, int stage);
/* The model's index of the first layer of STAGE's chunk CHUNK: chunk c
 * of stage s holds the (c pp + s)-th run of layers_per_chunk, as
 * Megatron's interleaved schedule places them (TransformerLayer.
 * _get_layer_offset, megatron/core/transformer/transformer_layer.py,
 * core_r0.10.0), or the layers after the stages before it in
 * parallel.stage_layers. */
int plan_chunk_first_layer (const Plan *plan, int stage, int chunk);

/* Checks every rule that does not depend on the micro-batch or virtual
 * stages (which may be auto), listing all that are violated, each with
 * the file:line:col where the value was written. TS_ERROR_PLAN. */
gboolean plan_check (const ExperimentSpec *e, GError **error);
/* A plan for one micro-batch size and v; FALSE (TS_ERROR_PLAN) when they
 * do not fit the batch or the layers. */
gboolean plan_make (Plan *plan, const ExperimentSpec *e, int micro_batch,
                    int virtual_stages, GError **error);
/* The data-parallel degree the experiment asks for or implies. */
int plan_dp (const ExperimentSpec *e);

/* Peak memory per GPU, on the stage that needs the most, and the host
 * memory per node that CPU offload needs. */
void plan_memory (const Plan *plan, MemoryBreakdown *out);
/* Whether the GPU's and (with offload) the host's memory suffice. */
gboolean plan_memory_fits (const MemoryBreakdown *m);

/* Whether a node holds GPUs of two pipeline stages or more (a stage's tp
 * x dp GPUs not a multiple of a node's), on more than one node: their
 * inter-node traffic then shares the node's NICs, which one simulated
 * rank per stage (the default, symmetric mode) does not see. */
gboolean plan_stages_share_nodes (const Plan *p);

/* Whether the DP reduction overlaps backward, bucket by bucket:
 * parallel.gradient_bucketing where given, else the framework's way;
 * ZeRO-3 overlaps in every framework that runs it (DeepSpeed turns
 * overlap_comm on for stage 3, zero/config.py; FSDP reduces on its own
 * stream). */
gboolean plan_dp_overlaps (const ExperimentSpec *e);
/* Why a plan does not fit, such as "needs 92.1 GiB per GPU, more than the
 * GPU's 80.0 GiB" (owned by the caller); NULL when it fits. */
char *plan_memory_shortfall (const MemoryBreakdown *m);

/* The model's parameters, all of them (the embedding and head too, as
 * Hoffmann et al. 2022 count them): what training.tokens: chinchilla
 * multiplies. */
double plan_model_params (const ModelSpec *m);
/* The parameters a token uses: all of a dense model's; of an MoE model,
 * the top_k routed experts and the shared ones, not the others. */
double plan_active_params (const ModelSpec *m);
/* The expert-data-parallel group's size (plan.c): the ranks holding the
 * same experts; dp for a dense model. */
int plan_expert_dp (const Plan *p);
/* The tokens to train on: training.tokens, or chinchilla's
 * tokens_per_parameter times plan_model_params; 0 when unset. */
double plan_training_tokens (const ExperimentSpec *e);
/* Why the tokens to train on are too few for plan (less than one step's),
 * owned by the caller; NULL when they are not, or unset. */
char *plan_tokens_problem (const ExperimentSpec *e);
/* The bytes of one checkpoint of the plan: the weights and optimizer
 * state of every stage and TP rank, once (14 bytes a parameter in mixed
 * precision). */
double plan_checkpoint_bytes (const Plan *p);
