/* transformer.h: a GPT-style transformer as the sequence of ops one
 * tensor-parallel rank runs, with the FLOPs and bytes of each.
 *
 * Megatron-LM's layer (Shoeybi 2019, Korthikanti 2022): LN, QKV GEMM,
 * attention, output projection, TP all-reduce, bias-dropout-residual, LN,
 * FC1, GeLU, FC2, TP all-reduce, bias-dropout-residual. With sequence
 * parallelism each all-reduce becomes a reduce-scatter and the next LN's
 * all-gather, and element-wise ops work on 1/t of the sequence. Backward
 * mirrors it with two GEMMs (input and weight gradients) per forward GEMM.
 * The graph knows no schedule, network or YAML: it fills GraphOp arrays
 * that the executor (parallel/sim.c) turns into engine events. */
#pragma once

#include <glib.h>
#include "config/spec.h"
#include "hw/device.h"

typedef enum {
  GOP_COMPUTE,
  GOP_TP_ALL_REDUCE,
  GOP_TP_REDUCE_SCATTER,
  GOP_TP_ALL_GATHER,
  GOP_EP_ALL_TO_ALL,  /* an MoE layer's dispatch or combine (graph/moe.h) */
  GOP_EP_ALL_GATHER,  /* Megatron-Core's dispatcher's token counts over the
                       * expert TP x EP group (graph/moe.h) */
  GOP_CP_SEND_RECV,   /* a KV block to the next rank of the CP ring and
                       * one from the previous (graph/cp.h) */
  GOP_CP_ALL_TO_ALL,  /* Ulysses' all-to-all over the CP group (graph/cp.h) */
} GraphOpKind;

typedef struct {
  GraphOpKind kind;
  const char *name;   /* static */
  Kernel kernel;      /* GOP_COMPUTE */
  double comm_bytes;  /* TP collectives: the full (unsplit) buffer */
  gboolean overlap;   /* a TP collective that runs alongside the next op
                       * (a GEMM): only what outlasts it is exposed */
  int launches;       /* kernels (or NCCL calls) the host issues for it */
  const ComputeModel *cm;   /* GOP_COMPUTE: what prices it when not the
                             * run's model (an FP8 GEMM: graph/fp8.h);
                             * NULL for the run's */
  int alongside;      /* GOP_EP_ALL_TO_ALL: the ops after it that run on a
                       * side stream beside it (graph/moe.c); 0 unless set */
  gboolean syncs;     /* the host reads its result back (an .item(), a
                       * nonzero's count, a .to('cpu')), so it waits for
                       * the device before issuing what follows; FALSE
                       * unless set (graph_set_syncs) */
} GraphOp;

/* Everything about a layer's shape on one TP rank. */
typedef struct {
  int64_t b, s, h, heads, kv_heads, ffn, vocab; /* vocab: padded */
  int64_t d;          /* a head's width (spec_head_dim) */
  int t;
  gboolean gated;     /* SwiGLU MLP */
  gboolean sequence_parallel;
  gboolean dropout;   /* dropout masks kept (a byte per element) */
  Attention attention;
  gboolean tp_overlap;      /* see ParallelSpec; false unless set */
  gboolean tp_comm_overlap; /* see ParallelSpec; false unless set */
  GradAccumulation grad_accumulation;   /* see ParallelSpec; fused unless set */
  CrossEntropy cross_entropy;   /* the framework's; vocab-parallel unless set */
  int train_metrics;            /* cross entropies over the logits that the
                                 * trainer's metrics add each micro-batch
                                 * (FrameworkProfile); 0 unless set */
  gboolean mpt_attention;       /* MPT's attention code (FrameworkProfile):
                                 * unfused, its PyTorch softmax rather than
                                 * Megatron's; with flash-attn's CUDA
                                 * kernels, the unpadding around them;
                                 * FALSE unless set */
  gboolean fp16;                /* the run's 16 bits are fp16, not bf16
                                 * (MPT's softmax); FALSE unless set */
  gboolean layer_sync;          /* the host waits for the device before the
                                 * MLP (FrameworkProfile.layer_sync); FALSE
                                 * unless set */
  gboolean fused_softmax;       /* unfused attention's softmax is Megatron's
                                 * fused kernel (framework_fused_softmax);
                                 * TRUE unless set */
  /* A mixture of experts (graph/moe.h): experts 0 for a dense layer.
   * ep, etp and imbalance are the plan's (1 unless set). */
  int64_t experts, top_k, moe_ffn, shared_experts;
  double capacity_factor;       /* 0: dropless */
  int ep, etp;
  double imbalance;
  gboolean shared_overlap;      /* parallel.moe_shared_expert_overlap */
  gboolean gshard;              /* DeepSpeed-MoE's dispatch and combine:
                                 * GShard's einsums (graph/moe.c); FALSE
                                 * unless set */
  /* Context parallelism (graph/cp.h): s is then a rank's seq_len / cp
   * tokens. cp 1 and p2p unless set. */
  int cp;
  CpKind cp_kind;
  const ComputeModel *cm;
  /* training.precision: fp8 (graph/fp8.h): the linear layers' GEMMs at
   * this model (the device's FP8 rate); NULL (bf16 GEMMs) unless set. */
  const ComputeModel *fp8;
  Fp8Recipe fp8_recipe;         /* delayed unless set */
  gboolean untied;              /* the output layer's own weights (ModelSpec) */
  int64_t position_rows;        /* a learned position table's rows: the
                                 * whole seq_len, which context
                                 * parallelism does not split; 0 without
                                 * a table (rotary, ALiBi) */
  gboolean rotary;              /* rotary positions: queries and keys
                                 * turned in every layer */
} LayerShape;

/* Megatron pads the vocabulary to a multiple of m->vocab_divisible_by x
 * tp (--make-vocab-size-divisible-by, 128 unless set). */
int64_t transformer_padded_vocab (const ModelSpec *m, int tp);
void transformer_layer_shape (LayerShape *ls, const ModelSpec *m, int tp,
                              int micro_batch, gboolean sequence_parallel,
                              Attention attention,
                              const ComputeModel *cm);

/* Each appends GraphOps to ops (a GArray of GraphOp). */
void transformer_layer_forward (const LayerShape *ls, GArray *ops);
/* Its two halves: up to the second layer norm, and the MLP after it. */
void transformer_layer_forward_attention (const LayerShape *ls, GArray *ops);
void transformer_layer_forward_mlp (const LayerShape *ls, GArray *ops);
/* The MLP block alone, as Megatron's ParallelMLP module runs its forward:
 * with sequence parallelism the all-gather of its input, FC1, the
 * activation and FC2, and FC2's TP all-reduce (or reduce-scatter with
 * SP); not the residual that follows it in a layer. */
void transformer_mlp_forward (const LayerShape *ls, GArray *ops);
void transformer_layer_backward (const LayerShape *ls, GArray *ops);
/* Its halves: the MLP block's backward (what transformer_mlp_forward
 * ran), and from the second layer norm back to the layer's input. */
void transformer_mlp_backward (const LayerShape *ls, GArray *ops);
void transformer_layer_backward_attention (const LayerShape *ls, GArray *ops);
/* The backward of a micro-batch after the first, whose gradients add into
 * those the earlier micro-batches left (gradient accumulation). */
void transformer_layer_backward_accumulating (const LayerShape *ls,
                                              GArray *ops);
void transformer_embedding_backward_accumulating (const LayerShape *ls,
                                                  GArray *ops);
void transformer_head_backward_accumulating (const LayerShape *ls,
                                             GArray *ops);
/* The attention core alone: what selective recompute runs again. */
void transformer_attention_core_forward (const LayerShape *ls, GArray *ops);
void transformer_embedding_forward (const LayerShape *ls, GArray *ops);
void transformer_embedding_backward (const LayerShape *ls, GArray *ops);
void transformer_head_forward (const LayerShape *ls, GArray *ops);
void transformer_head_backward (const LayerShape *ls, GArray *ops);

/* Parameters held by one TP rank; of them, the four linear layers'
 * weights. */
double transformer_layer_params (const LayerShape *ls);
double transformer_layer_weights (const LayerShape *ls);
double transformer_embedding_params (const LayerShape *ls); /* word (+ position) */
double transformer_head_params (const LayerShape *ls);      /* final LN */
/* The output layer's weight that the last of PP stages holds beside the
 * final norm: its own where the model unties it, else the word
 * embedding's copy where the embedding lives on another stage (pp > 1:
 * Megatron's shared embedding, whose gradient the two stages all-reduce),
 * else nothing (the embedding's own). */
double transformer_output_params (const LayerShape *ls, int pp);
/* The largest single parameter tensor: a linear layer's weight or the
 * word embedding's. */
double transformer_largest_tensor (const LayerShape *ls);

/* FLOPs of one iteration over global_batch sequences, all GPUs together:
 * model FLOPs (3 x the forward GEMMs: the MFU basis), and Megatron's eq. 3
 * (Narayanan 2021: 96 B s l h^2 (1 + s/6h + V/16lh), the number Megatron's
 * logs print; V padded as at tensor parallelism tp, as its logs have it:
 * training.py counts args.padded_vocab_size). */
double transformer_model_flops (const ModelSpec *m, int64_t global_batch);
double transformer_megatron_flops (const ModelSpec *m, int64_t global_batch,
                                   int tp);
/* Forward GEMM FLOPs of one layer over global_batch sequences (for
 * hardware FLOPs, which add the recomputed forward). */
/* Parameters of the model's MLPs, all layers: a dense layer's FC1 and
 * FC2, an MoE layer's router and its experts, all of them (ACTIVE false)
 * or those a token uses (the top_k routed and the shared ones). */
double transformer_mlp_params (const ModelSpec *m, gboolean active);
double transformer_layer_forward_flops (const ModelSpec *m,
                                        int64_t global_batch);
double transformer_attention_core_flops (const ModelSpec *m,
                                         int64_t global_batch);
