/* fp8.h: training.precision: fp8 as NVIDIA TransformerEngine runs it,
 * beside the dense layer of transformer.h.
 *
 * TransformerEngine (NVIDIA/TransformerEngine at 2.20.0.dev0, commit
 * d0067d0d: transformer_engine/pytorch/quantization.py, module/base.py,
 * module/linear.py, module/layernorm_linear.py) runs the linear layers'
 * GEMMs in FP8 (QKV, the projection, FC1, FC2: forward, input gradient
 * and weight gradient; E4M3 forward, E5M2 gradients, Megatron's "hybrid"
 * format) and keeps everything else in bf16: the attention core, layer
 * norms, softmax, the activation, dropout, the logits. Its extra work:
 * - a cast to FP8 of each GEMM input: the activation before each forward
 *   GEMM, the output gradient before each backward pair, both written
 *   row-wise and transposed (Hopper's FP8 GEMMs take only the TN layout,
 *   so the weight gradient needs the transposed copies); memory-bound
 *   kernels at HBM bandwidth;
 * - the weights' casts (and transposes) once a step, on the first
 *   micro-batch: later micro-batches and the recomputed forward reuse them
 *   (is_first_microbatch, which Megatron-Core's TE wrappers pass);
 * - scaling: delayed scaling (DelayedScaling, the default recipe for
 *   FP8 on Hopper, quantization.py get_default_fp8_recipe) computes each
 *   tensor's amax inside its cast kernel and updates the scaling factors
 *   from an amax history (1,024 steps) as the forward's autocast exits
 *   and as the backward of the first FP8 module ends
 *   (reduce_and_update_fp8_tensors: a cat of the amaxes, their all-reduce
 *   over the amax group, one fused update kernel), once per micro-batch
 *   each way; current scaling (Float8CurrentScaling) reads each tensor
 *   once more for its amax just before its cast, and keeps no history.
 * The GEMMs run at the device's FP8 rate (DeviceSpec peak.fp8). */
#pragma once

#include "graph/transformer.h"

/* Whether the layer's linear GEMMs run in fp8. */
gboolean fp8_enabled (const LayerShape *ls);
/* The cast to FP8 of a linear layer's input of ELEMS elements, or of the
 * gradient entering its backward (with current scaling, its amax pass
 * first); nothing without fp8. */
void fp8_push_cast (GArray *ops, const LayerShape *ls, const char *name,
                    double elems);
/* A linear layer's GEMM (m x k) @ (k x n): at the FP8 rate with fp8, as
 * graph_push_gemm without. */
void fp8_push_gemm (GArray *ops, const LayerShape *ls, const char *name,
                    int64_t m, int64_t n, int64_t k);
/* BATCH such GEMMs at once, as a grouped GEMM (an MoE layer's experts,
 * graph/moe.c). */
void fp8_push_grouped_gemm (GArray *ops, const LayerShape *ls,
                            const char *name, int64_t batch, int64_t m,
                            int64_t n, int64_t k);
/* The backward of a linear layer's GEMM Y = X W (X: m x k, W: k x n):
 * with fp8 the output gradient's cast, then the input and weight
 * gradients at the FP8 rate; as graph_push_gemm_backward without. */
void fp8_push_gemm_backward (GArray *ops, const LayerShape *ls,
                             const char *dgrad, const char *wgrad,
                             int64_t m, int64_t n, int64_t k);
/* And of BATCH grouped GEMMs, one cast for all their gradients. */
void fp8_push_grouped_gemm_backward (GArray *ops, const LayerShape *ls,
                                     const char *dgrad, const char *wgrad,
                                     int64_t batch, int64_t m, int64_t n,
                                     int64_t k);
/* WEIGHTS elements of TENSORS weight tensors cast to FP8 with their
 * transposes, a launch a tensor (nothing without fp8). */
void fp8_push_weight_casts (GArray *ops, const LayerShape *ls,
                            const char *name, double weights, int tensors);
/* A layer's weights cast to FP8 with their transposes, once a step (on
 * the first micro-batch's forward). */
void fp8_layer_weight_casts (const LayerShape *ls, GArray *ops);
/* The bytes of delayed scaling's amaxes (an fp32 a tensor) that a
 * micro-batch's forward or backward over LAYERS layers reduces across
 * the amax group before its update; 0 with current scaling or no fp8. */
double fp8_amax_bytes (const LayerShape *ls, int layers, gboolean backward);
/* Delayed scaling's update of the scaling factors at the end of a
 * micro-batch's forward or backward over LAYERS layers (amax history
 * read and written, one fused kernel and the amaxes' concatenation);
 * nothing with current scaling. */
void fp8_scaling_update (const LayerShape *ls, int layers, gboolean backward,
                         GArray *ops);

/* Memory (parallel/plan.c): the bytes of the FP8 weight copies one layer
 * of SHAPE keeps (row-wise and transposed, a byte each per linear
 * weight), and the bytes one layer's saved activations shrink by when the
 * linear layers' inputs are saved in FP8 (1 byte instead of W) rather
 * than in 16 bits: tensors counted as Korthikanti 2022's Table 2 counts
 * them for micro-batch B (the QKV and FC1 inputs, whole without sequence
 * parallelism; the projection's and FC2's, 1/t). */
double fp8_weight_copy_bytes (const LayerShape *ls);
double fp8_activation_saving (const LayerShape *ls, double w);
/* Of it, the attention block's part (QKV's and the projection's inputs). */
double fp8_attention_saving (const LayerShape *ls, double w);
