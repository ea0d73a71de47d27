/* moe.h: a mixture-of-experts layer as the ops one rank runs, beside the
 * dense layer of transformer.h.
 *
 * Megatron-Core's MoELayer with its all-to-all token dispatcher
 * (megatron/core/transformer/moe/moe_layer.py, router.py,
 * token_dispatcher.py MoEAlltoAllTokenDispatcher, experts.py GroupedMLP;
 * core_r0.10.0): the router's GEMM (hidden -> experts) and its top-k;
 * the tokens permuted so that each expert's are contiguous (memory-bound);
 * dispatched to the ranks holding their experts by an all-to-all over the
 * expert-parallel group, all-gathered over the expert-tensor-parallel
 * group when etp > 1; the local experts' FC1 and FC2 as grouped GEMMs over
 * the tokens each gets; the way back (reduce-scatter over etp, the
 * combine all-to-all, un-permutation weighted by the router's
 * probabilities); the shared experts as a dense MLP of their width; the
 * auxiliary load-balancing loss. The busiest expert gets `imbalance`
 * times the mean tokens, or up to capacity_factor times when one is set
 * (tokens beyond it are dropped). Backward mirrors it. DeepSpeed-MoE
 * (LayerShape.gshard) routes by GShard's einsums instead of permuting:
 * see moe.c. */
#pragma once

#include "graph/transformer.h"

/* Whether ls describes an MoE layer. */
gboolean moe_layer (const LayerShape *ls);
/* Tokens the busiest local expert of a rank computes in one micro-batch. */
double moe_tokens_per_expert (const LayerShape *ls);
/* The bytes one rank sends in the dispatch all-to-all (the combine's are
 * the same): its tokens' top_k copies of the hidden state, the busiest
 * rank's. */
double moe_dispatch_bytes (const LayerShape *ls);

/* As transformer.h's, for an MoE layer. */
void moe_layer_forward (const LayerShape *ls, GArray *ops);
void moe_layer_backward (const LayerShape *ls, GArray *ops);
void moe_layer_backward_accumulating (const LayerShape *ls, GArray *ops);

/* Parameters one rank holds of an MoE layer: those replicated over the
 * data-parallel group (attention, layer norms, router, shared experts),
 * and the routed experts' (E / ep of them, 1/etp of each), which the
 * expert-data-parallel group shares. */
double moe_layer_dense_params (const LayerShape *ls);
double moe_layer_expert_params (const LayerShape *ls);
/* With fp8 (graph/fp8.h): the weights of an MoE layer that TE keeps FP8
 * copies of (QKV's, the projection's, the shared and, but under
 * DeepSpeed-MoE, the local experts'; not the router's), and their casts
 * once a step, as fp8_layer_weight_casts is a dense layer's. */
double moe_fp8_weights (const LayerShape *ls);
void moe_fp8_weight_casts (const LayerShape *ls, GArray *ops);
/* The activations an MoE MLP block keeps for backward, per micro-batch,
 * in bytes: the dispatched tokens, the grouped GEMMs' inputs and
 * outputs, the combined output, the router's scores (not the permuted
 * input: the permutation keeps its indices only). */
double moe_activation_bytes (const LayerShape *ls);
/* With fp8 (whether or not LS carries the FP8 compute model, as
 * moe_fp8_weights), the bytes an MoE layer's saved activations shrink
 * by, as fp8_activation_saving is a dense layer's: the attention's linear
 * inputs, and Megatron-Core's experts' (FC1's and FC2's inputs, which
 * TE's GroupedLinear keeps in FP8; not DeepSpeed-MoE's); the router's
 * input stays 16-bit. */
double moe_fp8_activation_saving (const LayerShape *ls, double w);
