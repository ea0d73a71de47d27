/* cp.c: context parallelism's attention; see cp.h. */
#include "graph/cp.h"

#include "graph/graph-private.h"

void
cp_layer_shape (LayerShape *ls, int cp, CpKind kind)
{
  ls->cp = MAX (cp, 1);
  ls->cp_kind = kind;
  ls->s /= ls->cp;
}

double
cp_kv_block_bytes (const LayerShape *ls)
{
  int64_t d = ls->d;
  return 2.0 * ls->cm->bytes_per_element * ls->b * ls->s * d
         * (ls->kv_heads / ls->t);
}

/* One ring step's attention: the rank's queries (s tokens) against one
 * KV block. Step 0 is the causal kernel over the rank's own two chunks;
 * each later step is, by TransformerEngine's split, either all the
 * queries against the block's first chunk or the second query chunk
 * against the whole block, unmasked: s x s / 2 scores either way, as
 * many as the causal kernel over s tokens. So every step is costed as
 * the causal kernel over s tokens, and the cp steps together do 1 / cp
 * of the causal attention over the whole sequence. */
static Kernel
ring_step (const LayerShape *ls, gboolean backward)
{
  int64_t heads = ls->heads / ls->t, d = ls->d;
  return compute_attention (ls->cm, ls->attention, ls->b * heads, ls->s, d,
                            backward);
}

/* Ulysses' attention: all seq_len tokens, heads / (t cp) heads. */
static Kernel
ulysses_attention (const LayerShape *ls, gboolean backward)
{
  int64_t heads = ls->heads / ls->t / ls->cp, d = ls->d;
  return compute_attention (ls->cm, ls->attention, ls->b * heads,
                            ls->s * ls->cp, d, backward);
}

/* The attention output's correction after a ring step (TransformerEngine's
 * flash_attn_fwd_out_correction and softmax_lse_correction): the step's
 * output rescaled and added into the rank's, reading two and writing one
 * tensor of the rank's b s h / t elements. */
static void
push_correction (GArray *ops, const LayerShape *ls)
{
  graph_push_elementwise (ops, ls, "cp_out_correction",
                          (double) ls->b * ls->s * (ls->heads * ls->d) / ls->t,
                          2, 1, 0);
}

/* Ulysses' four all-to-alls of a direction: q, k and v (or their
 * gradients) and the output. A rank sends its tokens of all its heads,
 * (cp - 1) / cp of them to the others: net/ counts the whole buffer. */
static void
push_ulysses_all_to_all (GArray *ops, const LayerShape *ls, const char *name,
                         gboolean kv)
{
  double w = ls->cm->bytes_per_element;
  int64_t heads = kv ? ls->kv_heads : ls->heads;
  graph_push_comm (ops, GOP_CP_ALL_TO_ALL, name,
                   w * ls->b * ls->s * ls->d * heads / ls->t);
}

void
cp_attention_forward (const LayerShape *ls, GArray *ops)
{
  if (ls->cp_kind == CP_ULYSSES)
    {
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_q", FALSE);
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_k", TRUE);
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_v", TRUE);
      graph_push_kernel (ops, "flash_attention", ulysses_attention (ls, FALSE));
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_out", FALSE);
      return;
    }
  /* cp steps; before each but the last, the next block's transfer starts
   * and runs under the step's kernel (overlap: only what outlasts the
   * kernel is exposed, and the next step waits for it). */
  for (int i = 0; i < ls->cp; i++)
    {
      if (i < ls->cp - 1)
        {
          graph_push_comm (ops, GOP_CP_SEND_RECV, "cp_kv_send_recv",
                           cp_kv_block_bytes (ls));
          g_array_index (ops, GraphOp, ops->len - 1).overlap = TRUE;
        }
      graph_push_kernel (ops, "flash_attention_cp", ring_step (ls, FALSE));
      if (i > 0)
        push_correction (ops, ls);
    }
}

void
cp_attention_backward (const LayerShape *ls, GArray *ops)
{
  if (ls->cp_kind == CP_ULYSSES)
    {
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_out_bwd", FALSE);
      graph_push_kernel (ops, "flash_attention_bwd",
                         ulysses_attention (ls, TRUE));
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_q_bwd", FALSE);
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_k_bwd", TRUE);
      push_ulysses_all_to_all (ops, ls, "cp_all_to_all_v_bwd", TRUE);
      return;
    }
  /* Backward walks the ring again: at each step but the last the KV block
   * goes on to the next rank together with the gradient of the block
   * accumulated so far (dKV, as many bytes), under the step's kernel;
   * after the last step the gradients go home, exposed. */
  double kv = cp_kv_block_bytes (ls);
  for (int i = 0; i < ls->cp; i++)
    {
      if (i < ls->cp - 1)
        {
          graph_push_comm (ops, GOP_CP_SEND_RECV, "cp_kv_dkv_send_recv",
                           2 * kv);
          g_array_index (ops, GraphOp, ops->len - 1).overlap = TRUE;
        }
      graph_push_kernel (ops, "flash_attention_cp_bwd", ring_step (ls, TRUE));
    }
  graph_push_comm (ops, GOP_CP_SEND_RECV, "cp_dkv_send_recv", kv);
}
