/* fp8.c: the ops TransformerEngine's FP8 adds to a layer, and the FP8
 * GEMMs; see fp8.h. Byte counts are HBM traffic: a cast reads the bf16
 * tensor (2 bytes an element) and writes its FP8 data row-wise and
 * transposed (1 + 1: TE's cast-transpose kernels, which compute the amax
 * in the same pass); current scaling reads the tensor once more first
 * (its amax kernel). */
#include "graph/fp8.h"
#include "graph/graph-private.h"
#include "base/ledger.h"

/* FP8_AMAX_HISTORY: DelayedScaling's amax_history_len default, 1,024
 * (quantization.py, class DelayedScaling, TE 2.20.0.dev0), an fp32 a
 * tensor each step. FP8_FWD_TENSORS, FP8_BWD_TENSORS: the scaling
 * factors a linear layer's GEMM keeps for its forward (input, weight,
 * output) and backward (output gradient, input gradient): module/base.py
 * init_fp8_meta_tensors, num_fp8_tensors = num_gemms x 3 forward and
 * num_gemms x 2 backward. */
#define FP8_AMAX_HISTORY 1024
#define FP8_FWD_TENSORS 3
#define FP8_BWD_TENSORS 2
#define LINEAR_GEMMS 4

gboolean
fp8_enabled (const LayerShape *ls)
{
  return ls->fp8 != NULL;
}

/* Bytes an element of a cast moves: read the 16-bit tensor (w), write
 * its FP8 data twice (row-wise and transposed); current scaling's amax
 * kernel reads it once more. */
static double
cast_bytes (const LayerShape *ls)
{
  double w = ls->cm->bytes_per_element;
  return w + 2 + (ls->fp8_recipe == FP8_RECIPE_CURRENT ? w : 0);
}

void
fp8_push_cast (GArray *ops, const LayerShape *ls, const char *name,
               double elems)
{
  if (!fp8_enabled (ls))
    return;
  graph_push_kernel (ops, name,
                     compute_memory_op (elems * cast_bytes (ls), 2 * elems));
  graph_set_launches (ops, ls->fp8_recipe == FP8_RECIPE_CURRENT ? 2 : 1);
}

void
fp8_push_grouped_gemm (GArray *ops, const LayerShape *ls, const char *name,
                       int64_t batch, int64_t m, int64_t n, int64_t k)
{
  if (!fp8_enabled (ls))
    {
      graph_push_gemm (ops, ls, name, batch, m, n, k);
      return;
    }
  graph_push_kernel (ops, name, compute_gemm (ls->fp8, batch, m, n, k));
  g_array_index (ops, GraphOp, ops->len - 1).cm = ls->fp8;
}

void
fp8_push_gemm (GArray *ops, const LayerShape *ls, const char *name,
               int64_t m, int64_t n, int64_t k)
{
  fp8_push_grouped_gemm (ops, ls, name, 1, m, n, k);
}

void
fp8_push_grouped_gemm_backward (GArray *ops, const LayerShape *ls,
                                const char *dgrad, const char *wgrad,
                                int64_t batch, int64_t m, int64_t n, int64_t k)
{
  /* One cast for all BATCH gradients (TE's multi-tensor cast). */
  fp8_push_cast (ops, ls, "fp8_cast_grad", (double) batch * m * n);
  fp8_push_grouped_gemm (ops, ls, dgrad, batch, m, k, n);
  fp8_push_grouped_gemm (ops, ls, wgrad, batch, k, n, m);
}

void
fp8_push_gemm_backward (GArray *ops, const LayerShape *ls, const char *dgrad,
                        const char *wgrad, int64_t m, int64_t n, int64_t k)
{
  fp8_push_grouped_gemm_backward (ops, ls, dgrad, wgrad, 1, m, n, k);
}

void
fp8_push_weight_casts (GArray *ops, const LayerShape *ls, const char *name,
                       double weights, int tensors)
{
  if (!fp8_enabled (ls))
    return;
  fp8_push_cast (ops, ls, name, weights);
  g_array_index (ops, GraphOp, ops->len - 1).launches *= tensors;
}

void
fp8_layer_weight_casts (const LayerShape *ls, GArray *ops)
{
  fp8_push_weight_casts (ops, ls, "fp8_cast_weights",
                         transformer_layer_weights (ls), LINEAR_GEMMS);
}

double
fp8_amax_bytes (const LayerShape *ls, int layers, gboolean backward)
{
  if (!fp8_enabled (ls) || ls->fp8_recipe != FP8_RECIPE_DELAYED)
    return 0;
  return 4.0 * layers * LINEAR_GEMMS
         * (backward ? FP8_BWD_TENSORS : FP8_FWD_TENSORS);
}

void
fp8_scaling_update (const LayerShape *ls, int layers, gboolean backward,
                    GArray *ops)
{
  double tensors = fp8_amax_bytes (ls, layers, backward) / 4;
  if (tensors == 0)
    return;
  /* The history read and written, the scales written; the cat before. */
  graph_push_kernel (ops,
                     backward ? "fp8_scaling_update_bwd" : "fp8_scaling_update",
                     compute_memory_op (tensors * 4 * (2 * FP8_AMAX_HISTORY + 2),
                                        tensors * FP8_AMAX_HISTORY));
  graph_set_launches (ops, 2);
}

double
fp8_weight_copy_bytes (const LayerShape *ls)
{
  return 2 * transformer_layer_weights (ls);
}

double
fp8_attention_saving (const LayerShape *ls, double w)
{
  double sbh = (double) ls->s * ls->b * ls->h;
  double context = (double) ls->s * ls->b * (ls->heads * ls->d);
  double whole = ls->sequence_parallel ? 1.0 / ls->t : 1;
  /* QKV's input (the layer norm's output) and the projection's (the
   * attention's context, heads x head_dim wide). */
  return (sbh * whole + context / ls->t) * (w - 1);
}

double
fp8_activation_saving (const LayerShape *ls, double w)
{
  double sbh = (double) ls->s * ls->b * ls->h;
  double whole = ls->sequence_parallel ? 1.0 / ls->t : 1;
  /* And FC1's input (the layer norm's output) and FC2's (the
   * activation's output, ffn wide). */
  return fp8_attention_saving (ls, w)
         + (sbh * whole + sbh * ls->ffn / ls->h / ls->t) * (w - 1);
}
