/* transformer.c: per-rank ops of a GPT layer, embedding and head; see
 * transformer.h. Byte counts are HBM traffic of Megatron's fused kernels:
 * each element-wise kernel reads its inputs once and writes its output
 * once; a dropout mask is one byte per element. */
#include "graph/graph-private.h"
#include "graph/fp8.h"
#include "graph/cp.h"

/* ---- helpers ----------------------------------------------------------- */

/* Kernel launches. An op is one launch unless graph_set_launches says more:
 * the counts are those of Megatron's layer as its code launches them in
 * fp16 with its fused kernels (Megatron-DeepSpeed f01c9e6e and
 * Megatron-LM v2.6: megatron/model/transformer.py, fused_softmax.py,
 * fused_bias_gelu.py; apex's layer norm backward runs three kernels,
 * csrc/layer_norm_cuda_kernel.cu): 14 in a layer's forward and 31 in
 * its backward, each TP collective one NCCL call. */
void
graph_push_kernel (GArray *ops, const char *name, Kernel k)
{
  GraphOp op = { GOP_COMPUTE, name, k, 0, FALSE, 1 };
  g_array_append_val (ops, op);
}

void
graph_push_comm (GArray *ops, GraphOpKind kind, const char *name, double bytes)
{
  GraphOp op = { kind, name, { 0 }, bytes, FALSE, 1 };
  g_array_append_val (ops, op);
}

/* The last op pushed launches n kernels. */
void
graph_set_launches (GArray *ops, int n)
{
  g_array_index (ops, GraphOp, ops->len - 1).launches = n;
}

void
graph_set_syncs (GArray *ops)
{
  g_array_index (ops, GraphOp, ops->len - 1).syncs = TRUE;
}

void
graph_push_gemm (GArray *ops, const LayerShape *ls, const char *name, int64_t batch,
           int64_t m, int64_t n, int64_t k)
{
  graph_push_kernel (ops, name, compute_gemm (ls->cm, batch, m, n, k));
}

/* An element-wise kernel over elems elements that reads `reads` and writes
 * `writes` tensors of the run's precision, plus `mask_bytes` per element
 * (a dropout mask's byte, none in a model without dropout); a fraction
 * of a read is a kernel that reads part of its input. */
void
graph_push_elementwise (GArray *ops, const LayerShape *ls, const char *name,
                  double elems, double reads, int writes, double mask_bytes)
{
  double w = ls->cm->bytes_per_element;
  if (!ls->dropout)
    mask_bytes = 0;
  /* A few FLOPs per element: negligible next to the bytes, counted so the
   * flat-MFU model gives these kernels a (tiny) time too. */
  graph_push_kernel (ops, name,
                     compute_memory_op (elems * ((reads + writes) * w + mask_bytes),
                                        4 * elems));
}

/* Tokens handled by element-wise kernels: all of them, or 1/t with
 * sequence parallelism. */
double
graph_token_elems (const LayerShape *ls)
{
  double e = (double) ls->b * ls->s * ls->h;
  return ls->sequence_parallel ? e / ls->t : e;
}

/* FC1's output columns on one rank: a gated MLP computes the gate and the
 * up projection in one GEMM of twice the width. */
static int64_t
fc1_width (const LayerShape *ls)
{
  return (ls->gated ? 2 : 1) * ls->ffn / ls->t;
}

/* The query's (and the attention output's) width, all heads: the hidden
 * size unless model.head_dim says otherwise. */
static int64_t
attn_width (const LayerShape *ls)
{
  return ls->heads * ls->d;
}

static int64_t
qkv_width (const LayerShape *ls)
{
  return (attn_width (ls) + 2 * ls->d * ls->kv_heads) / ls->t;
}

/* Rotary positions (RoPE, Su et al. 2021) turn the rank's query and key
 * heads in every layer after the QKV GEMM, and their gradients before its
 * backward: Megatron-Core's fused kernel (apply_rope_fusion, on unless
 * --no-rope-fusion, megatron/training/arguments.py core_r0.8.0 to
 * core_v0.12.0; TE's fused RoPE), called for the queries and for the keys
 * (megatron/core/transformer/attention.py, apply_rotary_pos_emb, twice),
 * each reading and writing its tensor. ALiBi's biases go into the
 * attention's scores: no kernel of their own. */
static void
push_rope (GArray *ops, const LayerShape *ls, gboolean backward)
{
  if (!ls->rotary)
    return;
  double elems = (double) ls->b * ls->s * (ls->heads + ls->kv_heads) * ls->d
                 / ls->t;
  graph_push_elementwise (ops, ls, backward ? "rope_bwd" : "rope", elems, 1,
                          1, 0);
  graph_set_launches (ops, 2);
}

/* The buffer a TP collective of the layer moves: the whole s b h
 * activations. */
static double
tp_bytes (const LayerShape *ls)
{
  return ls->cm->bytes_per_element * ls->b * ls->s * ls->h;
}

/* Entering a column-parallel block: nothing without SP (the input is
 * replicated), an all-gather of the sequence with SP. */
static void
enter_tp (GArray *ops, const LayerShape *ls, const char *name)
{
  if (ls->t > 1 && ls->sequence_parallel)
    graph_push_comm (ops, GOP_TP_ALL_GATHER, name, tp_bytes (ls));
}

/* Leaving a row-parallel block: the partial sums are all-reduced, or
 * reduce-scattered over the sequence with SP. */
static void
leave_tp (GArray *ops, const LayerShape *ls, const char *name)
{
  if (ls->t > 1)
    graph_push_comm (ops, ls->sequence_parallel ? GOP_TP_REDUCE_SCATTER
                                          : GOP_TP_ALL_REDUCE, name,
                     tp_bytes (ls));
}

/* With parallel.tp_comm_overlap: Megatron-Core's --tp-comm-overlap, where
 * TransformerEngine's userbuffers split a linear layer's GEMM into chunks
 * and pass the sequence's chunks around the TP ring between them
 * (megatron/core/model_parallel_config.py, core_v0.12.0: tp_comm_overlap_ag
 * and tp_comm_overlap_rs on by default; Megatron-Bridge's FP8 H100
 * settings, src/megatron/bridge/training/comm_overlap.py at v0.2.0, run
 * them as ring exchanges, a streaming multiprocessor at most; its bf16
 * ones run the forward reduce-scatters as pipelines on 16-24 SMs, which
 * the GEMMs lose and this model does not count). So the all-gather
 * before QKV's and FC1's GEMMs, the
 * reduce-scatter after the projection's and FC2's, and in backward the
 * gradient's all-gather before the projection's and FC2's input-gradient
 * GEMMs run beside their GEMM: each pair takes the longer of the two. The
 * other backward pair (QKV's and FC1's) TE overlaps in bulk as Megatron's
 * asynchronous backward does (tp_comm_bulk_wgrad, tp_comm_bulk_dgrad). */
static gboolean
comm_beside (const LayerShape *ls)
{
  return ls->tp_comm_overlap && ls->t > 1 && ls->sequence_parallel;
}

/* A TP collective that runs beside the GEMM pushed next (GraphOp.overlap:
 * the program takes the GEMM's time and what of the collective outlasts
 * it); a reduce-scatter is pushed before its GEMM too, as the chunks of
 * both interleave. */
static void
push_beside (GArray *ops, const LayerShape *ls, GraphOpKind kind,
             const char *name)
{
  graph_push_comm (ops, kind, name, tp_bytes (ls));
  g_array_index (ops, GraphOp, ops->len - 1).overlap = TRUE;
}

/* ---- shapes ------------------------------------------------------------ */

int64_t
transformer_padded_vocab (const ModelSpec *m, int tp)
{
  int64_t mult = (m->vocab_divisible_by > 0 ? m->vocab_divisible_by : 128)
                 * (int64_t) tp;
  return (m->vocab + mult - 1) / mult * mult;
}

void
transformer_layer_shape (LayerShape *ls, const ModelSpec *m, int tp,
                         int micro_batch, gboolean sequence_parallel,
                         Attention attention, const ComputeModel *cm)
{
  ls->b = micro_batch;
  ls->s = m->seq_len;
  ls->h = m->hidden;
  ls->heads = m->heads;
  ls->kv_heads = m->kv_heads;
  ls->d = spec_head_dim (m);
  ls->ffn = m->ffn_hidden;
  ls->gated = m->mlp == MLP_SWIGLU;
  ls->vocab = transformer_padded_vocab (m, tp);
  ls->t = tp;
  ls->sequence_parallel = sequence_parallel && tp > 1;
  ls->dropout = m->dropout;
  ls->grad_accumulation = GRAD_ACC_FUSED;
  ls->cross_entropy = CROSS_ENTROPY_VOCAB_PARALLEL;
  ls->train_metrics = 0;
  ls->fused_softmax = TRUE;
  ls->mpt_attention = FALSE;
  ls->layer_sync = FALSE;
  ls->fp16 = FALSE;
  ls->attention = attention;
  ls->tp_overlap = FALSE;
  ls->tp_comm_overlap = FALSE;
  ls->experts = m->experts;
  ls->top_k = m->top_k;
  ls->moe_ffn = m->moe_ffn_hidden;
  ls->shared_experts = m->shared_experts;
  ls->capacity_factor = m->capacity_factor;
  ls->untied = m->untied_embeddings;
  ls->position_rows = m->position_embedding == POSITION_LEARNED ? m->seq_len : 0;
  ls->rotary = m->position_embedding == POSITION_ROTARY;
  ls->fp8 = NULL;
  ls->fp8_recipe = FP8_RECIPE_DELAYED;
  ls->ep = ls->etp = 1;
  ls->imbalance = 1;
  ls->shared_overlap = FALSE;
  ls->gshard = FALSE;
  ls->cp = 1;
  ls->cp_kind = CP_P2P;
  ls->cm = cm;
}

/* ---- layer ------------------------------------------------------------- */

/* The attention's softmax over SCORES elements, forward or backward
 * (Megatron's FusedScaleMaskSoftmax, megatron/model/fused_softmax.py).
 * Fused, its causal kernel (scaled_upper_triang_masked_softmax.h,
 * Megatron-LM v2.6 and Megatron-DeepSpeed f01c9e6e) reads each row up to
 * its diagonal, half the scores, and writes the whole row; its backward
 * reads the gradient and the output up to the diagonal: 0.5 w + w and
 * w + w bytes an element. Otherwise (v2.6's forward_torch_softmax, inline
 * in Megatron-DeepSpeed's forward) PyTorch's ops in fp32, as the query-key
 * layer scaling on by default until 2023 makes softmax_in_fp32: 16-bit
 * scores are copied to fp32 (w + 4), scaled (8), masked in place (8),
 * softmaxed (8) and copied back (4 + w), 2 w + 32 bytes in 5 kernels;
 * backward the same in reverse, with softmax's backward reading its
 * output and the gradient (12): 2 w + 36. fp32 scores need no copies:
 * 24 and 28 bytes in 3 kernels. MPT's code under autocast
 * (scaled_multihead_dot_product_attention, llm-foundry v0.3.0) scales (2
 * w) and masks (2 w + the causal mask's byte) in 16 bits, and autocast
 * runs torch.softmax with dtype=float: in bf16 a copy up (w + 4), the
 * softmax (8) and the copy back of .to(v.dtype) (4 + w), 6 w + 17 bytes
 * in 5 kernels; in fp16 ATen's softmax reads the halves itself
 * (half_to_float: w + 4), 6 w + 9 in 4. Forward first builds the s x s
 * causal mask (ones in fp32, tril, to bool, not: 4 kernels, 19 bytes a
 * key pair, once a call). Backward: 6 w + 21 in 5, or 6 w + 13 in 4 (the
 * softmax's backward writes the halves). In fp32 there is nothing to
 * copy: 25 and 29 bytes in 3 kernels. */
static void
push_softmax (GArray *ops, const LayerShape *ls, double scores,
              gboolean backward)
{
  const char *name = backward ? "attn_softmax_bwd" : "attn_softmax";
  if (ls->fused_softmax)
    {
      graph_push_elementwise (ops, ls, name, scores, backward ? 1 : 0.5, 1, 0);
      return;
    }
  double w = ls->cm->bytes_per_element;
  gboolean copies = w < 4;
  if (ls->mpt_attention)
    {
      double mask = backward ? 0 : 19.0 * ls->s * ls->s;
      double per = !copies ? (backward ? 29 : 25)
                   : 6 * w + (backward ? 21 : 17) - (ls->fp16 ? 8 : 0);
      graph_push_kernel (ops, name, compute_memory_op (scores * per + mask,
                                                       4 * scores));
      graph_set_launches (ops, (!copies ? 3 : ls->fp16 ? 4 : 5) + (backward ? 0 : 4));
      return;
    }
  double bytes = copies ? 2 * w + (backward ? 36 : 32) : (backward ? 28 : 24);
  graph_push_kernel (ops, name, compute_memory_op (scores * bytes, 4 * scores));
  graph_set_launches (ops, copies ? 5 : 3);
}

/* MPT's flash path (llmfoundry/models/layers/attention.py flash_attn_fn,
 * 5e85bd62d, with flash-attn's CUDA kernels, v1 or v2, not the Triton
 * one): with no padding mask it makes one of ones and runs flash-attn's
 * bert_padding (v2.4.2) around the kernel. Before it, unpad_input of q, k
 * and v, each: the mask's sum and torch.nonzero over it, whose count the
 * host reads back to size its output; the sum's max, read back by
 * .item(); a cumsum, a pad and IndexFirstAxis's torch.gather of the
 * tensor (read and write). After it, pad_input's IndexPutFirstAxis: a
 * zeroed output and the values put into it. Backward, the other way
 * round: the put's gradient gathered, then each unpad's gradient zeroed
 * and scattered into (no reads back). BEFORE: the ops before the kernel
 * (the unpads forward, the pad's gradient backward), else those after. */
static void
push_mpt_unpad (GArray *ops, const LayerShape *ls, gboolean backward,
                gboolean before)
{
  if (!ls->mpt_attention || ls->attention == ATTENTION_FLASH1_TRITON
      || ls->attention == ATTENTION_UNFUSED)
    return;
  double q = (double) ls->b * ls->s * attn_width (ls) / ls->t;
  double qkv = q * (1 + 2.0 * ls->kv_heads / ls->heads);
  if (!backward && before)
    {
      /* The mask: b s bools read, a count and b s indices written. */
      double tokens = (double) ls->b * ls->s;
      static const char *const gather[] = { "mpt_unpad_q", "mpt_unpad_k",
                                            "mpt_unpad_v" };
      for (int i = 0; i < 3; i++)
        {
          graph_push_kernel (ops, "mpt_unpad_nonzero",
                             compute_memory_op (9 * tokens, tokens));
          graph_set_launches (ops, 2);
          graph_set_syncs (ops);
          graph_push_kernel (ops, "mpt_unpad_max", compute_memory_op (4 * ls->b, ls->b));
          graph_set_launches (ops, 2);   /* and .item()'s copy */
          graph_set_syncs (ops);
          graph_push_elementwise (ops, ls, gather[i],
                                  i == 0 ? q : q * ls->kv_heads / ls->heads, 1, 1, 0);
          graph_set_launches (ops, 3);
        }
    }
  else if (!backward)
    {
      graph_push_elementwise (ops, ls, "mpt_pad_output", q, 1, 2, 0);
      graph_set_launches (ops, 2);
    }
  else if (before)
    graph_push_elementwise (ops, ls, "mpt_pad_output_bwd", q, 1, 1, 0);
  else
    {
      graph_push_elementwise (ops, ls, "mpt_unpad_qkv_bwd", qkv, 1, 2, 0);
      graph_set_launches (ops, 3 * 2);
    }
}

void
transformer_attention_core_forward (const LayerShape *ls, GArray *ops)
{
  int64_t heads = ls->heads / ls->t, d = ls->d;
  if (ls->cp > 1)
    {
      cp_attention_forward (ls, ops);
      return;
    }
  if (ls->attention != ATTENTION_UNFUSED)
    {
      /* One fused kernel; causal masking skips half of the s x s blocks. */
      push_mpt_unpad (ops, ls, FALSE, TRUE);
      graph_push_kernel (ops, "flash_attention",
                         compute_attention (ls->cm, ls->attention, ls->b * heads,
                                            ls->s, d, FALSE));
      push_mpt_unpad (ops, ls, FALSE, FALSE);
      return;
    }
  double scores = (double) ls->b * heads * ls->s * ls->s;
  graph_push_gemm (ops, ls, "attn_qk", ls->b * heads, ls->s, ls->s, d);
  push_softmax (ops, ls, scores, FALSE);
  /* PyTorch's dropout returns its input when p is 0: no kernel. */
  if (ls->dropout)
    graph_push_elementwise (ops, ls, "attn_dropout", scores, 1, 1, 1);
  graph_push_gemm (ops, ls, "attn_v", ls->b * heads, ls->s, d, ls->s);
  graph_set_launches (ops, 2);   /* and the context's permute to [s, b, h] */
}

void
transformer_layer_forward (const LayerShape *ls, GArray *ops)
{
  transformer_layer_forward_attention (ls, ops);
  transformer_layer_forward_mlp (ls, ops);
}

void
transformer_layer_forward_attention (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  double e = graph_token_elems (ls);
  graph_push_elementwise (ops, ls, "ln1", e, 1, 1, 0);
  if (!comm_beside (ls))
    enter_tp (ops, ls, "tp_allgather_attn");
  fp8_push_cast (ops, ls, "fp8_cast_qkv_input", (double) tokens * ls->h);
  if (comm_beside (ls))
    push_beside (ops, ls, GOP_TP_ALL_GATHER, "tp_allgather_attn");
  fp8_push_gemm (ops, ls, "qkv", tokens, qkv_width (ls), ls->h);
  push_rope (ops, ls, FALSE);
  transformer_attention_core_forward (ls, ops);
  fp8_push_cast (ops, ls, "fp8_cast_proj_input",
                 (double) tokens * attn_width (ls) / ls->t);
  if (comm_beside (ls))
    push_beside (ops, ls, GOP_TP_REDUCE_SCATTER, "tp_allreduce_attn");
  fp8_push_gemm (ops, ls, "attn_proj", tokens, ls->h, attn_width (ls) / ls->t);
  if (!comm_beside (ls))
    leave_tp (ops, ls, "tp_allreduce_attn");
  graph_push_elementwise (ops, ls, "residual1", e, 2, 1, 1);
  graph_push_elementwise (ops, ls, "ln2", e, 1, 1, 0);
  /* Megatron-DeepSpeed's two scalars made on the GPU before the MLP
   * (framework.c): blocking copies from the host, which waits. */
  if (ls->layer_sync)
    graph_set_syncs (ops);
}

void
transformer_mlp_forward (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  if (!comm_beside (ls))
    enter_tp (ops, ls, "tp_allgather_mlp");
  fp8_push_cast (ops, ls, "fp8_cast_fc1_input", (double) tokens * ls->h);
  if (comm_beside (ls))
    push_beside (ops, ls, GOP_TP_ALL_GATHER, "tp_allgather_mlp");
  fp8_push_gemm (ops, ls, "fc1", tokens, fc1_width (ls), ls->h);
  /* GeLU reads and writes the FC1 output; SwiGLU reads its two halves. */
  graph_push_elementwise (ops, ls, ls->gated ? "swiglu" : "gelu",
                    (double) tokens * ls->ffn / ls->t, ls->gated ? 2 : 1, 1,
                    0);
  fp8_push_cast (ops, ls, "fp8_cast_fc2_input",
                 (double) tokens * ls->ffn / ls->t);
  if (comm_beside (ls))
    push_beside (ops, ls, GOP_TP_REDUCE_SCATTER, "tp_allreduce_mlp");
  fp8_push_gemm (ops, ls, "fc2", tokens, ls->h, ls->ffn / ls->t);
  if (!comm_beside (ls))
    leave_tp (ops, ls, "tp_allreduce_mlp");
}

void
transformer_layer_forward_mlp (const LayerShape *ls, GArray *ops)
{
  transformer_mlp_forward (ls, ops);
  graph_push_elementwise (ops, ls, "residual2", graph_token_elems (ls), 2, 1, 1);
}

/* Backward of a GEMM Y = X W (X: m x k, W: k x n): dX = dY W^T and
 * dW = X^T dY, each as many FLOPs as the forward. */
void
graph_push_gemm_backward (GArray *ops, const LayerShape *ls, const char *dgrad,
                    const char *wgrad, int64_t batch, int64_t m, int64_t n,
                    int64_t k)
{
  graph_push_gemm (ops, ls, dgrad, batch, m, k, n);
  graph_push_gemm (ops, ls, wgrad, batch, k, n, m);
}

/* Backward of a row-parallel GEMM (the projection, FC2): with SP the
 * output gradient is all-gathered first (beside the input-gradient GEMM
 * with tp_comm_overlap), then the two gradients' GEMMs. */
static void
row_parallel_backward (GArray *ops, const LayerShape *ls, const char *gather,
                       const char *dgrad, const char *wgrad, int64_t m,
                       int64_t n, int64_t k)
{
  if (!comm_beside (ls))
    {
      enter_tp (ops, ls, gather);
      fp8_push_gemm_backward (ops, ls, dgrad, wgrad, m, n, k);
      return;
    }
  fp8_push_cast (ops, ls, "fp8_cast_grad", (double) m * n);
  push_beside (ops, ls, GOP_TP_ALL_GATHER, gather);
  fp8_push_gemm (ops, ls, dgrad, m, k, n);
  fp8_push_gemm (ops, ls, wgrad, k, n, m);
}

/* Backward of a column-parallel GEMM (QKV, FC1): with SP its saved input
 * is 1/t of the sequence and is all-gathered again for the weight
 * gradient; the input gradient leaves by all-reduce (reduce-scatter with
 * SP). Megatron's LinearWithGradAccumulationAndAsyncCommunication runs
 * the gather under the input-gradient GEMM and the reduction under the
 * weight-gradient GEMM; without it they run in turn. extra_launches:
 * kernels beside each GEMM (QKV's one: the q, k, v gradients'
 * concatenation beside the input gradient, the bias gradient's reduction
 * beside the weight gradient). */
static void
column_parallel_backward (GArray *ops, const LayerShape *ls, const char *gather,
                          const char *dgrad, const char *wgrad,
                          const char *reduce, int64_t m, int64_t n, int64_t k,
                          int extra_launches)
{
  double bytes = tp_bytes (ls);
  /* With fp8 the output gradient is cast first (fp8.h). */
  fp8_push_cast (ops, ls, "fp8_cast_grad", (double) m * n);
  if (!ls->tp_overlap && !comm_beside (ls))
    {
      enter_tp (ops, ls, gather);
      fp8_push_gemm (ops, ls, dgrad, m, k, n);
      graph_set_launches (ops, 1 + extra_launches);
      fp8_push_gemm (ops, ls, wgrad, k, n, m);
      graph_set_launches (ops, 1 + extra_launches);
      leave_tp (ops, ls, reduce);
      return;
    }
  if (ls->t > 1 && ls->sequence_parallel)
    {
      graph_push_comm (ops, GOP_TP_ALL_GATHER, gather, bytes);
      g_array_index (ops, GraphOp, ops->len - 1).overlap = TRUE;
    }
  fp8_push_gemm (ops, ls, dgrad, m, k, n);
  graph_set_launches (ops, 1 + extra_launches);
  if (ls->t > 1)
    {
      leave_tp (ops, ls, reduce);
      g_array_index (ops, GraphOp, ops->len - 1).overlap = TRUE;
    }
  fp8_push_gemm (ops, ls, wgrad, k, n, m);
  graph_set_launches (ops, 1 + extra_launches);
}

void
transformer_layer_backward (const LayerShape *ls, GArray *ops)
{
  /* The mirror of forward: a row-parallel block's backward needs the
   * replicated gradient (an all-gather with SP, nothing without); a
   * column-parallel block's backward ends with the input gradient's
   * all-reduce (a reduce-scatter with SP). */
  graph_push_elementwise (ops, ls, "residual2_bwd", graph_token_elems (ls), 1, 1, 1);
  graph_set_launches (ops, 2);   /* bias-dropout-add backward */
  transformer_mlp_backward (ls, ops);
  transformer_layer_backward_attention (ls, ops);
}

void
transformer_mlp_backward (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  row_parallel_backward (ops, ls, "tp_allgather_mlp_bwd", "fc2_dgrad",
                         "fc2_wgrad", tokens, ls->h, ls->ffn / ls->t);
  graph_push_elementwise (ops, ls, ls->gated ? "swiglu_bwd" : "gelu_bwd",
                    (double) tokens * ls->ffn / ls->t, ls->gated ? 3 : 2,
                    ls->gated ? 2 : 1, 0);
  graph_set_launches (ops, 2);   /* and the bias gradient's reduction */
  column_parallel_backward (ops, ls, "tp_allgather_fc1_input", "fc1_dgrad",
                            "fc1_wgrad", "tp_allreduce_mlp_bwd", tokens,
                            fc1_width (ls), ls->h, 0);
}

void
transformer_layer_backward_attention (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  int64_t heads = ls->heads / ls->t, d = ls->d;
  double e = graph_token_elems (ls);
  graph_push_elementwise (ops, ls, "ln2_bwd", e, 2, 1, 0);
  graph_set_launches (ops, 3);
  graph_push_elementwise (ops, ls, "residual1_bwd", e, 2, 1, 1);
  graph_set_launches (ops, 3);   /* bias-dropout-add backward, residual's add */
  row_parallel_backward (ops, ls, "tp_allgather_attn_bwd", "attn_proj_dgrad",
                         "attn_proj_wgrad", tokens, ls->h,
                         attn_width (ls) / ls->t);
  if (ls->cp > 1)
    cp_attention_backward (ls, ops);
  else if (ls->attention != ATTENTION_UNFUSED)
    {
      push_mpt_unpad (ops, ls, TRUE, TRUE);
      graph_push_kernel (ops, "flash_attention_bwd",
                         compute_attention (ls->cm, ls->attention, ls->b * heads,
                                            ls->s, d, TRUE));
      push_mpt_unpad (ops, ls, TRUE, FALSE);
    }
  else
    {
      double scores = (double) ls->b * heads * ls->s * ls->s;
      graph_push_gemm_backward (ops, ls, "attn_v_dgrad", "attn_v_wgrad",
                          ls->b * heads, ls->s, d, ls->s);
      g_array_index (ops, GraphOp, ops->len - 2).launches = 2; /* permute */
      if (ls->dropout)
        graph_push_elementwise (ops, ls, "attn_dropout_bwd", scores, 1, 1, 1);
      push_softmax (ops, ls, scores, TRUE);
      graph_push_gemm_backward (ops, ls, "attn_qk_dgrad", "attn_qk_wgrad",
                          ls->b * heads, ls->s, ls->s, d);
    }
  push_rope (ops, ls, TRUE);
  column_parallel_backward (ops, ls, "tp_allgather_qkv_input", "qkv_dgrad",
                            "qkv_wgrad", "tp_allreduce_attn_bwd", tokens,
                            qkv_width (ls), ls->h, 1);
  graph_push_elementwise (ops, ls, "ln1_bwd", e, 2, 1, 0);
  graph_set_launches (ops, 4);   /* and the residual branch's gradient add */
}

/* A layer's parameter tensors: the weights and biases of QKV, the
 * projection, FC1 and FC2 (four of each), and the two layer norms' gains
 * and biases (four). */
#define LAYER_WEIGHTS 4
#define LAYER_PARAM_TENSORS 12

/* Gradient accumulation over ELEMS parameters in TENSORS tensors, one add
 * a tensor (spec.h, GradAccumulation): into .grad in the run's precision
 * (read both, write the sum), or into the fp32 main_grad (read it and the
 * new gradient, write it). */
void
graph_push_grad_accumulate (GArray *ops, const LayerShape *ls, double elems,
                      int tensors)
{
  double w = ls->cm->bytes_per_element;
  double bytes = ls->grad_accumulation == GRAD_ACC_AUTOGRAD ? 3 * w : 8 + w;
  graph_push_kernel (ops, "grad_accumulate", compute_memory_op (elems * bytes, elems));
  graph_set_launches (ops, tensors);
}

void
transformer_layer_backward_accumulating (const LayerShape *ls, GArray *ops)
{
  transformer_layer_backward (ls, ops);
  /* Fused, the weight-gradient GEMMs accumulate the weights themselves. */
  gboolean fused = ls->grad_accumulation == GRAD_ACC_FUSED;
  graph_push_grad_accumulate (ops, ls, transformer_layer_params (ls)
                                 - (fused ? transformer_layer_weights (ls) : 0),
                        LAYER_PARAM_TENSORS - (fused ? LAYER_WEIGHTS : 0));
}

/* ---- embedding and head ------------------------------------------------ */

void
transformer_embedding_forward (const LayerShape *ls, GArray *ops)
{
  double e = (double) ls->b * ls->s * ls->h;
  /* Vocab-parallel lookup: each rank gathers the rows it holds (zeros
   * elsewhere), then the ranks all-reduce (reduce-scatter with SP). */
  graph_push_elementwise (ops, ls, "embedding", e, 1, 1, 0);
  /* Word and position lookups and their sum; the words' alone where
   * positions are rotary or ALiBi (no table). */
  graph_set_launches (ops, ls->position_rows > 0 ? 3 : 1);
  leave_tp (ops, ls, "tp_allreduce_embedding");
  graph_push_elementwise (ops, ls, "embedding_dropout", graph_token_elems (ls), 2, 1, 1);
}

void
transformer_embedding_backward (const LayerShape *ls, GArray *ops)
{
  double e = (double) ls->b * ls->s * ls->h;
  enter_tp (ops, ls, "tp_allgather_embedding_bwd");
  graph_push_elementwise (ops, ls, "embedding_bwd", e, 2, 1, 0);
  /* Word (and position) embedding backward. */
  graph_set_launches (ops, ls->position_rows > 0 ? 2 : 1);
}

/* The loss over the rank's LOGITS elements, forward or backward, as the
 * framework computes it (CrossEntropy in spec.h). HBM bytes an element:
 * - vocab-parallel (megatron/mpu/cross_entropy.py): forward, the fp32
 *   copy (read w, write 4), max (read 4), sub_ (8), exp (8), sum (4) and
 *   div_ (8), the softmax kept for backward: w + 36; backward, mul_ by
 *   the loss's gradient (8) and the copy's backward to w (4 + w):
 *   w + 12. About 20 kernels forward (the copy, max, sub, the target
 *   masks, gather, exp, sum, log, div and the loss mask's mean) and 8
 *   backward; with tp > 1, three all-reduces of one fp32 a token (max,
 *   target logit, sum of exps), counted as one collective of their size.
 * - fused (flash-attn's xentropy forward reads each row twice, max then
 *   the sum of exps; backward reads it and writes the gradient): 2w and
 *   2w, a kernel each and a few for the mean and ignore_index masks. */
static void
push_cross_entropy (GArray *ops, const LayerShape *ls, double logits,
                    gboolean backward)
{
  double w = ls->cm->bytes_per_element;
  gboolean fused = ls->cross_entropy == CROSS_ENTROPY_FUSED;
  double bytes = fused ? 2 * w : backward ? w + 12 : w + 36;
  graph_push_kernel (ops, backward ? "cross_entropy_bwd" : "cross_entropy",
                     compute_memory_op (logits * bytes,
                                        (backward ? 2 : 5) * logits));
  graph_set_launches (ops, fused ? (backward ? 4 : 6) : (backward ? 8 : 20));
}

void
transformer_head_forward (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  double logits = (double) tokens * ls->vocab / ls->t;
  graph_push_elementwise (ops, ls, "final_ln", graph_token_elems (ls), 1, 1, 0);
  enter_tp (ops, ls, "tp_allgather_head");
  graph_push_gemm (ops, ls, "logits", 1, tokens, ls->vocab / ls->t, ls->h);
  push_cross_entropy (ops, ls, logits, FALSE);
  if (ls->t > 1)
    {
      graph_push_comm (ops, GOP_TP_ALL_REDUCE, "tp_allreduce_loss", 12.0 * tokens);
      graph_set_launches (ops, 3);
    }
  /* The trainer's metrics, each PyTorch's cross entropy over the 16-bit
   * logits under autocast (Composer v0.17.2 metrics/nlp.py
   * LanguageCrossEntropy.update: torch.nn.CrossEntropyLoss, which autocast
   * runs in fp32): the copy up (w + 4), log_softmax (8, as push_softmax
   * counts PyTorch's softmax), nll_loss and the sums beside it (nothing
   * next to that); the copy, log_softmax, nll_loss, the count of targets
   * and the two accumulations: 6 kernels. Composer runs them after the
   * micro-batch's backward (trainer.py _train_microbatch, AFTER_BACKWARD,
   * _eval_train_metrics); here they follow the loss, the same kernels on
   * the same stream. */
  if (ls->train_metrics > 0)
    {
      graph_push_elementwise (ops, ls, "train_metrics_cross_entropy",
                              logits * ls->train_metrics,
                              1 + 12 / ls->cm->bytes_per_element, 0, 0);
      graph_set_launches (ops, 6 * ls->train_metrics);
    }
}

void
transformer_head_backward (const LayerShape *ls, GArray *ops)
{
  int64_t tokens = ls->b * ls->s;
  double logits = (double) tokens * ls->vocab / ls->t;
  push_cross_entropy (ops, ls, logits, TRUE);
  graph_push_gemm_backward (ops, ls, "logits_dgrad", "logits_wgrad", 1, tokens,
                      ls->vocab / ls->t, ls->h);
  leave_tp (ops, ls, "tp_allreduce_head_bwd");
  graph_push_elementwise (ops, ls, "final_ln_bwd", graph_token_elems (ls), 2, 1, 0);
  graph_set_launches (ops, 3);
}

/* The word (and position) embeddings' gradients, which no GEMM produces:
 * an add a table in every mode. */
void
transformer_embedding_backward_accumulating (const LayerShape *ls,
                                             GArray *ops)
{
  transformer_embedding_backward (ls, ops);
  graph_push_grad_accumulate (ops, ls, transformer_embedding_params (ls),
                              ls->position_rows > 0 ? 2 : 1);
}

/* The final layer norm's gain and bias, and the logits' weight gradient
 * (the output layer's own, untied; tied, the word embedding's: on the
 * last stage's copy with pp > 1, or added to the embedding's own with
 * pp = 1), but where the GEMM accumulates it (fused). */
void
transformer_head_backward_accumulating (const LayerShape *ls, GArray *ops)
{
  transformer_head_backward (ls, ops);
  gboolean fused = ls->grad_accumulation == GRAD_ACC_FUSED;
  graph_push_grad_accumulate (ops, ls, transformer_head_params (ls)
                                 + (fused ? 0 : (double) ls->vocab / ls->t * ls->h),
                        fused ? 2 : 3);
}

/* ---- parameters and FLOPs ---------------------------------------------- */

double
transformer_layer_weights (const LayerShape *ls)
{
  return ls->h * (double) qkv_width (ls)
         + (double) attn_width (ls) / ls->t * ls->h
         + ls->h * (double) fc1_width (ls) + (double) ls->ffn / ls->t * ls->h;
}

double
transformer_layer_params (const LayerShape *ls)
{
  double qkv = (double) qkv_width (ls);
  double ffn = (double) ls->ffn / ls->t, fc1 = (double) fc1_width (ls);
  return ls->h * qkv + qkv              /* QKV weight and bias */
         + (double) attn_width (ls) / ls->t * ls->h + ls->h   /* projection */
         + ls->h * fc1 + fc1            /* FC1 */
         + ffn * ls->h + ls->h          /* FC2 */
         + 4.0 * ls->h;                 /* two layer norms */
}

double
transformer_embedding_params (const LayerShape *ls)
{
  return (double) ls->vocab / ls->t * ls->h + (double) ls->position_rows * ls->h;
}

double
transformer_head_params (const LayerShape *ls)
{
  return 2.0 * ls->h;
}

double
transformer_output_params (const LayerShape *ls, int pp)
{
  return ls->untied || pp > 1 ? (double) ls->vocab / ls->t * ls->h : 0;
}

double
transformer_largest_tensor (const LayerShape *ls)
{
  double h = ls->h;
  return MAX (MAX (h * qkv_width (ls), (double) attn_width (ls) / ls->t * h),
              MAX (MAX (h * fc1_width (ls), (double) ls->ffn / ls->t * h),
                   (double) ls->vocab / ls->t * h));
}

/* The query's width, all heads (attn_width of a layer). */
static double
model_attn_width (const ModelSpec *m)
{
  return (double) m->heads * spec_head_dim (m);
}

double
transformer_attention_core_flops (const ModelSpec *m, int64_t global_batch)
{
  double s = m->seq_len;
  return 4.0 * global_batch * s * s * model_attn_width (m);
}

double
transformer_mlp_params (const ModelSpec *m, gboolean active)
{
  double h = m->hidden, g = m->mlp == MLP_SWIGLU ? 3 : 2;
  double sum = 0;
  for (int l = 0; l < m->layers; l++)
    if (spec_layer_is_moe (m, l))
      sum += g * h * m->moe_ffn_hidden
             * ((active ? m->top_k : m->experts) + m->shared_experts)
             + h * m->experts;
    else
      sum += g * h * m->ffn_hidden;
  return sum;
}

double
transformer_layer_forward_flops (const ModelSpec *m, int64_t global_batch)
{
  double tokens = (double) global_batch * m->seq_len, h = m->hidden;
  double q = model_attn_width (m), kv = q / m->heads * m->kv_heads;
  /* FC1 + FC2; of an MoE model, the mean layer's active MLP (each token
   * at its top_k experts and the shared ones, and the router). */
  double mlp = m->experts > 0
    ? 2 * tokens * transformer_mlp_params (m, TRUE) / m->layers
    : (m->mlp == MLP_SWIGLU ? 6 : 4) * tokens * h * m->ffn_hidden;
  double gemm = 2 * tokens * h * (q + 2 * kv)   /* QKV */
                + 2 * tokens * q * h            /* projection */
                + mlp;
  return gemm + transformer_attention_core_flops (m, global_batch);
}

double
transformer_model_flops (const ModelSpec *m, int64_t global_batch)
{
  double tokens = (double) global_batch * m->seq_len;
  double head = 2 * tokens * m->hidden * (double) m->vocab;
  return 3 * (m->layers * transformer_layer_forward_flops (m, global_batch)
              + head);
}

/* An MoE model's FLOPs as Megatron-LM counts them
 * (num_floating_point_operations, megatron/training/training.py, the
 * MoE form since core_r0.7.0): 12 B s l h^2 ((1 + g/a + s/h) p for
 * attention, p the query's width over h (its query_projection_to_hidden_
 * size_ratio, kv_channels x heads / h, core_v0.10.0; 1 unless head_dim
 * says otherwise) + (F/h) k x 3/2 (SwiGLU) for the routed MLP + (F_shared/h)
 * x 3/2 + V / (2 l h)), the MLP term averaged over the model's dense and
 * MoE layers; the router not counted. */
static double
megatron_moe_flops (const ModelSpec *m, int64_t global_batch, int tp)
{
  double B = global_batch, s = m->seq_len, l = m->layers, h = m->hidden;
  double V = (double) transformer_padded_vocab (m, tp);
  double gated = m->mlp == MLP_SWIGLU ? 1.5 : 1;
  /* Its query_projection_to_hidden_size_ratio (kv_channels x heads / h). */
  double p = model_attn_width (m) / h;
  double mlp = 0;
  for (int i = 0; i < m->layers; i++)
    mlp += spec_layer_is_moe (m, i)
      ? (double) m->moe_ffn_hidden * (m->top_k + m->shared_experts) / h * gated
      : (double) m->ffn_hidden / h * gated;
  return 12 * B * s * l * h * h
         * ((1 + (double) m->kv_heads / m->heads + s / h) * p + mlp / l
            + V / (2 * l * h));
}

double
transformer_megatron_flops (const ModelSpec *m, int64_t global_batch, int tp)
{
  if (m->experts > 0)
    return megatron_moe_flops (m, global_batch, tp);
  double B = global_batch, s = m->seq_len, l = m->layers, h = m->hidden;
  double V = (double) transformer_padded_vocab (m, tp);
  /* Of a layer's 24 B s h^2 + 4 B s^2 h forward, the attention's 8 B s
   * h^2 and 4 B s^2 h scale with the query's width over h (p). */
  double p = model_attn_width (m) / h;
  return 96 * B * s * l * h * h
         * ((2 + p) / 3 + p * s / (6 * h) + V / (16 * l * h));
}
