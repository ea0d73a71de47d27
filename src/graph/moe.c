/* moe.c: an MoE layer's ops, parameters and FLOPs; see moe.h. */
#include "graph/moe.h"

#include <math.h>

#include "base/ledger.h"
#include "graph/fp8.h"
#include "graph/graph-private.h"

gboolean
moe_layer (const LayerShape *ls)
{
  return ls->experts > 0;
}

/* Tokens a rank holds as the layer starts (1/t of the sequence with SP). */
static double
local_tokens (const LayerShape *ls)
{
  return graph_token_elems (ls) / ls->h;
}

/* The busiest expert's tokens over the mean: the imbalance, cut at the
 * capacity (tokens beyond it dropped; Megatron-Core's
 * --moe-expert-capacity-factor without padding). GShard's dispatch
 * (below) pads every expert's buffer to the capacity. */
static double
load_factor (const LayerShape *ls)
{
  double f = ls->imbalance;
  if (ls->capacity_factor <= 0)
    return f;
  return ls->gshard ? ls->capacity_factor : MIN (f, ls->capacity_factor);
}

/* ---- DeepSpeed-MoE's dispatch ----------------------------------------------
 *
 * DeepSpeed-MoE routes as GShard's Algorithm 2 (Lepikhin 2020; deepspeed/
 * moe/sharded_moe.py, MOELayer.forward, top1gating and top2gating at
 * v0.5.8, the version the runs of experiments/validation/deepspeed-moe-
 * nlg-a100.yaml asked for): nothing is permuted. The gate writes
 * combine_weights, an fp32 tensor over tokens x experts x capacity slots
 * (einsum "se,sc->sec"), and dispatch_mask = combine_weights.bool(); the
 * dispatch is einsum "sec,sm->ecm" over the mask cast to the input's
 * type, one GEMM of (E C x S) by (S x h), and the combine is "sec,ecm->
 * sm" over the weights cast likewise, (S x E C) by (E C x h). USE_EINSUM
 * is True there, and torch.einsum contracts s (or e and c) as one matmul.
 * Each expert's buffer holds C = ceil(k S / E x capacity factor) slots
 * (top-1 at least min_capacity: GSHARD_MIN_CAPACITY; top-2 too from
 * v0.6.0, not modelled), padded; without
 * a capacity factor (drop_tokens False) C is the busiest expert's count.
 * The gate copies the experts' counts to the host (exp_counts ...
 * .to('cpu')), which waits for the device once a layer's forward, and
 * runs its many small kernels in fp32 (push_gshard_gate). */

/* E x C: the slots of every expert's buffer on a rank. */
static double
gshard_slots (const LayerShape *ls)
{
  double c = ceil (local_tokens (ls) * ls->top_k / ls->experts
                   * load_factor (ls));
  if (ls->top_k == 1)
    c = MAX (c, LEDGER (GSHARD_MIN_CAPACITY));
  return ls->experts * c;
}

/* The gate up to its S x E x C tensors (TopKGate.forward, top1gating),
 * its launches as the code makes them. Before the counts' copy to the
 * host, which waits: the input's cast to fp32, the softmax, argmax,
 * one_hot's two and the counts' sum (7 with the copy). After it, the
 * auxiliary loss (6: two means, a cast, a product, a sum, a scale),
 * random token selection's cut to the capacity (9: the uniform draw's
 * three, a product, topk, zeros_like, scatter_, a product) and the
 * locations (6: cumsum, a subtraction, a product, a sum, a cast, the
 * gates' product). Each but the cast passes over the S x E scores or
 * masks (int64 masks: up to 8 bytes read and 4 written an element). */
static void
push_gshard_gate (GArray *ops, const LayerShape *ls)
{
  double t = local_tokens (ls), se = t * ls->experts;
  double w = ls->cm->bytes_per_element;
  graph_push_kernel (ops, "gshard_gate_counts",
                     compute_memory_op (t * ls->h * (w + 4) + 5 * 12 * se, 5 * se));
  graph_set_launches (ops, 7);
  graph_set_syncs (ops);
  graph_push_kernel (ops, "gshard_gate", compute_memory_op (21 * 12 * se, 21 * se));
  graph_set_launches (ops, 21);
}

/* The gate's S x E x C tensors, forward: combine_weights written in fp32
 * (4 bytes; top-2 writes one for each choice and adds them, 4 + 4 + 12),
 * read by .bool() (4) which writes the mask (1), read by type_as (1)
 * which writes its copy (w); the locations' one_hot (two kernels) and
 * cast over S x C before each einsum. The combine's cast of the weights
 * is push_unpermute's. Backward: the cast's gradient back to fp32
 * (w + 4) and each einsum's over the gates, reading it (4 each). */
static void
push_gshard_masks (GArray *ops, const LayerShape *ls, const char *name,
                   gboolean fwd)
{
  double w = ls->cm->bytes_per_element;
  double sec = local_tokens (ls) * gshard_slots (ls);
  gboolean top2 = ls->top_k > 1;
  double bytes = fwd ? (top2 ? 20 : 4) + 4 + 1 + 1 + w : w + 4 + 4.0 * (top2 ? 2 : 1);
  graph_push_kernel (ops, name, compute_memory_op (sec * bytes, sec));
  graph_set_launches (ops, fwd ? (top2 ? 11 : 6) : (top2 ? 3 : 2));
}

/* The elements of the top_k copies of a rank's tokens that Megatron-
 * Core's dispatcher routes (up to the busiest expert's load). */
static double
routed_elems (const LayerShape *ls)
{
  return local_tokens (ls) * ls->top_k * load_factor (ls) * ls->h;
}

/* The tokens into expert order: permuted (Megatron-Core), or GShard's
 * dispatch GEMM; backward, the way back. */
static void
push_permute (GArray *ops, const LayerShape *ls, gboolean fwd)
{
  if (!ls->gshard)
    {
      graph_push_elementwise (ops, ls, fwd ? "permute" : "permute_bwd",
                              routed_elems (ls), 1, 1, 0);
      /* Megatron-Core's dispatcher reads the splits back, dropless, before
       * the all-to-all (its sync_point, below). */
      if (fwd && ls->capacity_factor <= 0)
        graph_set_syncs (ops);
      return;
    }
  double t = local_tokens (ls);
  int64_t ec = (int64_t) gshard_slots (ls);
  if (fwd)
    {
      push_gshard_masks (ops, ls, "gshard_masks", TRUE);
      graph_push_gemm (ops, ls, "gshard_dispatch", 1, ec, ls->h, (int64_t) t);
    }
  else  /* the mask has no gradient: the input's alone */
    graph_push_gemm (ops, ls, "gshard_dispatch_bwd", 1, (int64_t) t, ls->h, ec);
}

/* The experts' outputs back to token order, weighted: un-permuted, or
 * GShard's combine GEMM; backward, its gradients. */
static void
push_unpermute (GArray *ops, const LayerShape *ls, gboolean fwd)
{
  if (!ls->gshard)
    {
      /* The top_k copies read, weighted and summed per token. */
      graph_push_elementwise (ops, ls, fwd ? "unpermute" : "unpermute_bwd",
                              routed_elems (ls), 1, fwd ? 0 : 1, 0);
      return;
    }
  double t = local_tokens (ls);
  int64_t ec = (int64_t) gshard_slots (ls);
  if (fwd)
    {
      /* combine_weights cast to the input's type for the einsum. */
      graph_push_kernel (ops, "gshard_combine_cast",
                         compute_memory_op (t * ec * (4 + ls->cm->bytes_per_element),
                                            t * ec));
      graph_push_gemm (ops, ls, "gshard_combine", 1, (int64_t) t, ls->h, ec);
    }
  else
    {
      /* The weights' gradient (S x E C) and the experts' outputs'. */
      graph_push_gemm_backward (ops, ls, "gshard_combine_dgrad",
                                "gshard_combine_wgrad", 1, (int64_t) t, ls->h, ec);
      push_gshard_masks (ops, ls, "gshard_masks_bwd", FALSE);
    }
}

double
moe_dispatch_bytes (const LayerShape *ls)
{
  double w = ls->cm->bytes_per_element;
  if (ls->gshard)   /* the whole buffer, padded */
    return w * gshard_slots (ls) * ls->h;
  return w * routed_elems (ls);
}

double
moe_tokens_per_expert (const LayerShape *ls)
{
  /* A rank's T tokens go to top_k experts each, E / ep of which it holds,
   * from all ep ranks of its group: T k ep / E a local expert, and etp
   * times that after the all-gather over the expert's TP ranks. GShard's
   * experts run their whole buffers, C slots from each of the ep ranks. */
  if (ls->gshard)
    return gshard_slots (ls) / ls->experts * ls->ep * ls->etp;
  return local_tokens (ls) * ls->top_k * ls->ep * ls->etp / ls->experts
         * load_factor (ls);
}

static int64_t
local_experts (const LayerShape *ls)
{
  return ls->experts / ls->ep;
}

static int64_t
expert_fc1 (const LayerShape *ls)
{
  return (ls->gated ? 2 : 1) * ls->moe_ffn / ls->etp;
}

/* The shared experts: a dense MLP of their summed width, TP-split as the
 * dense MLP (Megatron-Core's SharedExpertMLP). */
static LayerShape
shared_shape (const LayerShape *ls)
{
  LayerShape sh = *ls;
  sh.ffn = ls->shared_experts * ls->moe_ffn;
  sh.experts = 0;
  return sh;
}

/* The expert-TP collectives around the experts: over the etp ranks,
 * costed as the TP group's (equal to it unless etp is set otherwise). */
static void
expert_tp (GArray *ops, const LayerShape *ls, GraphOpKind kind, const char *name)
{
  if (ls->etp > 1)
    graph_push_comm (ops, kind, name, ls->etp * moe_dispatch_bytes (ls));
}

/* ---- the experts under FP8 --------------------------------------------------
 *
 * With training.precision fp8, Megatron-Core runs the experts' GEMMs in
 * FP8 as its dense linear layers: TEGroupedMLP (megatron/core/transformer/
 * moe/experts.py, core_v0.10.0 to core_v0.12.0) over TransformerEngine's
 * GroupedLinear, which runs FP8 grouped GEMMs from TE 1.11 (Megatron-
 * Core's TransformerConfig.__post_init__: "Only transformer-engine>=
 * 1.11.0 supports FP8 grouped gemm"; core_r0.9.0 refused the pair), and
 * SequentialMLP's TE linear layers likewise. One multi-tensor cast takes
 * all local experts' inputs before each grouped GEMM, and their output
 * gradients before each backward pair (TE's fp8_multi_cast_transpose_
 * fused, 1.11-1.13; fused_multi_quantize, 2.x). TEGroupedMLP pads each
 * expert's tokens to a multiple of 16 for the FP8 GEMMs (TE's Fp8Padding
 * before FC1, Fp8Unpadding after FC2, from TE 1.11): to TE 2.2 both copy
 * every token even when none needs padding (a new buffer and
 * multi_padding_fused; a split and torch.cat back), and their backward
 * copies the gradients the other way; TE 2.3 skips an exact fit. The
 * router's GEMM, the permutation and the all-to-alls stay bf16
 * (TopKRouter.gating is a plain F.linear; the dispatcher sends the bf16
 * hidden states). DeepSpeed-MoE's experts are torch.nn.Linear: bf16. */
static gboolean
fp8_experts (const LayerShape *ls)
{
  return fp8_enabled (ls) && !ls->gshard;
}

/* Fp8Padding's or Fp8Unpadding's copy of ELEMS elements (either way). */
static void
push_fp8_padding (GArray *ops, const LayerShape *ls, const char *name,
                  double elems)
{
  if (fp8_experts (ls))
    graph_push_elementwise (ops, ls, name, elems, 1, 1, 0);
}

/* The local experts' GEMMs (m x k) @ (k x n), one a local expert: with
 * fp8 their inputs' cast (named CAST) first. */
static void
push_expert_gemm (GArray *ops, const LayerShape *ls, const char *cast,
                  const char *name, int64_t m, int64_t n, int64_t k)
{
  int64_t le = local_experts (ls);
  if (!fp8_experts (ls))
    {
      graph_push_gemm (ops, ls, name, le, m, n, k);
      return;
    }
  fp8_push_cast (ops, ls, cast, (double) le * m * k);
  fp8_push_grouped_gemm (ops, ls, name, le, m, n, k);
}

static void
push_expert_gemm_backward (GArray *ops, const LayerShape *ls,
                           const char *dgrad, const char *wgrad, int64_t m,
                           int64_t n, int64_t k)
{
  int64_t le = local_experts (ls);
  if (fp8_experts (ls))
    fp8_push_grouped_gemm_backward (ops, ls, dgrad, wgrad, le, m, n, k);
  else
    graph_push_gemm_backward (ops, ls, dgrad, wgrad, le, m, n, k);
}

/* Megatron-Core's --moe-shared-expert-overlap (shared_experts.py and
 * token_dispatcher.py's MoEAlltoAllTokenDispatcher, core_r0.10.0): the
 * shared experts run on a stream of their own, their input's all-gather
 * (sequence parallel) and FC1 with its activation beside the dispatch
 * all-to-all, FC2 and its reduce-scatter beside the combine. Autograd
 * runs each backward op on its forward op's stream, and the dispatcher
 * orders the all-to-alls' gradients first (set_tensor_grad_fn_sequence_
 * sr): backward, FC2's and the activation's gradients beside the
 * combine's all-to-all, FC1's beside the dispatch's. The shared MLP's ops
 * (transformer_mlp_forward or _backward) split after its activation;
 * the first half (second: !first) goes after the EP op at EP, which
 * it runs beside (GraphOp.alongside). */
static void
push_alongside (GArray *ops, guint ep, const GArray *shared, gboolean first)
{
  guint split = 0;
  for (guint i = 0; i < shared->len; i++)
    {
      const char *name = g_array_index (shared, GraphOp, i).name;
      if (g_str_has_prefix (name, "swiglu") || g_str_has_prefix (name, "gelu"))
        split = i + 1;
    }
  guint from = first ? 0 : split, to = first ? split : shared->len;
  g_array_append_vals (ops, &g_array_index (shared, GraphOp, from), to - from);
  g_array_index (ops, GraphOp, ep).alongside = (int) (to - from);
}

/* The shared experts' MLP, forward or backward, as a dense MLP of their
 * summed width (shared_shape). */
static GArray *
shared_mlp (const LayerShape *ls, gboolean fwd)
{
  GArray *ops = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  LayerShape sh = shared_shape (ls);
  if (ls->shared_experts > 0)
    (fwd ? transformer_mlp_forward : transformer_mlp_backward) (&sh, ops);
  return ops;
}

/* Whether the shared experts run beside the all-to-alls. */
static gboolean
overlapped (const LayerShape *ls)
{
  return ls->shared_overlap && ls->shared_experts > 0;
}

/* Pushes an EP all-to-all and, overlapped, the half of the shared
 * experts' MLP SHARED that runs beside it. */
static void
push_all_to_all (GArray *ops, const LayerShape *ls, const char *name,
                 const GArray *shared, gboolean first)
{
  graph_push_comm (ops, GOP_EP_ALL_TO_ALL, name, moe_dispatch_bytes (ls));
  if (overlapped (ls))
    push_alongside (ops, ops->len - 1, shared, first);
}

static void
moe_mlp_forward (const LayerShape *ls, GArray *ops)
{
  double t = local_tokens (ls), n = moe_tokens_per_expert (ls);
  int64_t le = local_experts (ls);
  g_autoptr (GArray) shared = shared_mlp (ls, TRUE);
  graph_push_gemm (ops, ls, "router", 1, (int64_t) t, ls->experts, ls->h);
  if (ls->gshard)
    push_gshard_gate (ops, ls);
  else
    {
      /* Softmax (or sigmoid) and top-k over the scores, in fp32, and the
       * auxiliary loss's sums over them. The dispatcher then copies its
       * token counts to the host and waits for the device once a layer
       * (MoEAlltoAllTokenDispatcher.preprocess and token_permutation,
       * megatron/core/transformer/moe/token_dispatcher.py, core_r0.10.0
       * as core_r0.9.0: cuda_sync_point, torch.cuda.current_stream().
       * synchronize()): with a capacity factor before the permutation,
       * dropless before the all-to-all. */
      graph_push_elementwise (ops, ls, "router_topk", t * ls->experts, 2, 1, 0);
      graph_push_elementwise (ops, ls, "aux_loss", t * ls->experts, 1, 0, 0);
      /* Its preprocess then gathers every rank's token count for each
       * expert (an int64 each) over the expert TP x EP group for the
       * all-to-all's splits (gather_from_sequence_parallel_region over
       * tp_ep_group where ep or etp > 1, core_r0.10.0 to core_v0.12.0),
       * before the host reads them. */
      if (ls->ep > 1 || ls->etp > 1)
        graph_push_comm (ops, GOP_EP_ALL_GATHER, "ep_token_counts",
                         8.0 * ls->experts * ls->ep * ls->etp);
      if (ls->capacity_factor > 0)
        graph_set_syncs (ops);
    }
  push_permute (ops, ls, TRUE);
  push_all_to_all (ops, ls, "ep_dispatch", shared, TRUE);
  expert_tp (ops, ls, GOP_TP_ALL_GATHER, "etp_allgather");
  push_fp8_padding (ops, ls, "fp8_padding", le * n * ls->h);
  push_expert_gemm (ops, ls, "fp8_cast_expert_fc1_input", "expert_fc1",
                    (int64_t) n, expert_fc1 (ls), ls->h);
  graph_push_elementwise (ops, ls, ls->gated ? "expert_swiglu" : "expert_gelu",
                          le * n * ls->moe_ffn / ls->etp, ls->gated ? 2 : 1, 1, 0);
  push_expert_gemm (ops, ls, "fp8_cast_expert_fc2_input", "expert_fc2",
                    (int64_t) n, ls->h, ls->moe_ffn / ls->etp);
  push_fp8_padding (ops, ls, "fp8_unpadding", le * n * ls->h);
  expert_tp (ops, ls, GOP_TP_REDUCE_SCATTER, "etp_reducescatter");
  push_all_to_all (ops, ls, "ep_combine", shared, FALSE);
  push_unpermute (ops, ls, TRUE);
  if (ls->shared_experts > 0 && !overlapped (ls))
    g_array_append_vals (ops, shared->data, shared->len);
}

void
moe_layer_forward (const LayerShape *ls, GArray *ops)
{
  transformer_layer_forward_attention (ls, ops);
  moe_mlp_forward (ls, ops);
  graph_push_elementwise (ops, ls, "residual2", graph_token_elems (ls), 2, 1, 1);
}

void
moe_layer_backward (const LayerShape *ls, GArray *ops)
{
  double t = local_tokens (ls), n = moe_tokens_per_expert (ls);
  int64_t le = local_experts (ls);
  g_autoptr (GArray) shared = shared_mlp (ls, FALSE);
  graph_push_elementwise (ops, ls, "residual2_bwd", graph_token_elems (ls), 1, 1, 1);
  graph_set_launches (ops, 2);
  if (ls->shared_experts > 0 && !overlapped (ls))
    g_array_append_vals (ops, shared->data, shared->len);
  push_unpermute (ops, ls, FALSE);
  push_all_to_all (ops, ls, "ep_combine_bwd", shared, TRUE);
  expert_tp (ops, ls, GOP_TP_ALL_GATHER, "etp_allgather_bwd");
  push_fp8_padding (ops, ls, "fp8_unpadding_bwd", le * n * ls->h);
  push_expert_gemm_backward (ops, ls, "expert_fc2_dgrad", "expert_fc2_wgrad",
                             (int64_t) n, ls->h, ls->moe_ffn / ls->etp);
  graph_push_elementwise (ops, ls, ls->gated ? "expert_swiglu_bwd" : "expert_gelu_bwd",
                          le * n * ls->moe_ffn / ls->etp, ls->gated ? 3 : 2,
                          ls->gated ? 2 : 1, 0);
  push_expert_gemm_backward (ops, ls, "expert_fc1_dgrad", "expert_fc1_wgrad",
                             (int64_t) n, expert_fc1 (ls), ls->h);
  push_fp8_padding (ops, ls, "fp8_padding_bwd", le * n * ls->h);
  expert_tp (ops, ls, GOP_TP_REDUCE_SCATTER, "etp_reducescatter_bwd");
  push_all_to_all (ops, ls, "ep_dispatch_bwd", shared, FALSE);
  push_permute (ops, ls, FALSE);
  graph_push_elementwise (ops, ls, "router_topk_bwd", t * ls->experts, 3, 1, 0);
  graph_push_gemm_backward (ops, ls, "router_dgrad", "router_wgrad", 1, (int64_t) t,
                            ls->experts, ls->h);
  transformer_layer_backward_attention (ls, ops);
}

void
moe_layer_backward_accumulating (const LayerShape *ls, GArray *ops)
{
  moe_layer_backward (ls, ops);
  /* Fused accumulation (Megatron-LM's) adds the weights' gradients in
   * the weight-gradient GEMMs; the other ways add every parameter. */
  if (ls->grad_accumulation != GRAD_ACC_FUSED)
    graph_push_grad_accumulate (ops, ls, moe_layer_dense_params (ls)
                                         + moe_layer_expert_params (ls), 12);
}

/* ---- parameters and FLOPs ------------------------------------------------ */

/* The shared experts' two weight matrices (none without them). */
static double
shared_weights (const LayerShape *ls)
{
  if (ls->shared_experts == 0)
    return 0;
  LayerShape sh = shared_shape (ls);
  return ls->h * (double) (sh.gated ? 2 : 1) * sh.ffn / ls->t
         + (double) sh.ffn / ls->t * ls->h;
}

double
moe_layer_dense_params (const LayerShape *ls)
{
  LayerShape attn = *ls;
  attn.ffn = 0;   /* transformer_layer_params without its MLP's weights */
  return transformer_layer_params (&attn) + (double) ls->h * ls->experts
         + shared_weights (ls);
}

double
moe_layer_expert_params (const LayerShape *ls)
{
  return local_experts (ls) * (ls->h * (double) expert_fc1 (ls)
                               + (double) ls->moe_ffn / ls->etp * ls->h);
}

/* The weights of an MoE layer's TE linear layers besides the experts:
 * QKV's and the projection's, the shared experts'. */
static double
linear_weights (const LayerShape *ls)
{
  LayerShape attn = *ls;
  attn.ffn = 0;   /* transformer_layer_weights without its MLP's */
  return transformer_layer_weights (&attn) + shared_weights (ls);
}

double
moe_fp8_weights (const LayerShape *ls)
{
  return linear_weights (ls) + (ls->gshard ? 0 : moe_layer_expert_params (ls));
}

/* TE caches each weight's cast for the step's later micro-batches
 * (is_first_microbatch, which TEGroupedLinear passes on): a launch a
 * weight tensor, two a local expert (GroupedLinear's cache_name weight0,
 * weight1, ...). */
void
moe_fp8_weight_casts (const LayerShape *ls, GArray *ops)
{
  fp8_push_weight_casts (ops, ls, "fp8_cast_weights", linear_weights (ls),
                         ls->shared_experts > 0 ? 4 : 2);
  if (fp8_experts (ls))
    fp8_push_weight_casts (ops, ls, "fp8_cast_expert_weights",
                           moe_layer_expert_params (ls),
                           2 * (int) local_experts (ls));
}

/* TE's GroupedLinear (1.11 to 1.13, grouped_linear.py) saves an FP8
 * expert GEMM's input for its weight gradient in FP8 (its transpose, or
 * itself with sequence parallelism), not the 16-bit tokens; the router
 * (a plain F.linear) keeps its 16-bit input. The shared experts' inputs
 * are counted at 16 bits, as moe_activation_bytes's callers count them
 * (a slight over-count with fp8). */
/* The elements of the local experts' GEMM inputs a micro-batch: the
 * routed tokens into FC1 (h wide) and the activation's output into FC2
 * (moe_ffn / etp wide). */
static double
expert_gemm_inputs (const LayerShape *ls)
{
  double n = moe_tokens_per_expert (ls) * local_experts (ls);
  return n * (ls->h + ls->moe_ffn / ls->etp);
}

double
moe_fp8_activation_saving (const LayerShape *ls, double w)
{
  double experts = ls->gshard ? 0 : expert_gemm_inputs (ls) * (w - 1);
  return fp8_attention_saving (ls, w) + experts;
}

double
moe_activation_bytes (const LayerShape *ls)
{
  double w = ls->cm->bytes_per_element;
  double n = moe_tokens_per_expert (ls) * local_experts (ls);
  double t = local_tokens (ls);
  /* The dispatched tokens (FC1's input), FC1's output and the
   * activation's (FC2's input), the combined output kept for
   * un-permutation (unpermute's input, which it saves to apply the probs:
   * core_r0.10.0 to core_v0.12.0), the router's fp32 scores. Neither the
   * permutation nor the all-to-alls keep their tokens: index_select's
   * backward (and TE's fused moe_permute's) needs only the indices, an
   * all-to-all's only its splits (megatron/core/tensor_parallel/
   * mappings.py _AllToAll). GShard's einsums keep besides the dispatch
   * mask's and the combine weights' 16-bit copies over S x E C. */
  double routing = ls->gshard ? 2 * w * t * gshard_slots (ls) : 0;
  return routing + moe_dispatch_bytes (ls)
         + w * (expert_gemm_inputs (ls) + n * expert_fc1 (ls))
         + 4.0 * t * ls->experts;
}
