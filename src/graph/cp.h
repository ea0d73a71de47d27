/* cp.h: context parallelism: a sequence split over cp ranks, and the
 * attention that then needs the other ranks' keys and values.
 *
 * Every op of the layer but attention is per token: with context
 * parallelism each rank runs them on its seq_len / cp tokens (the GEMMs,
 * norms, the embedding and the loss), and keeps those tokens'
 * activations. Attention needs every earlier token's keys and values:
 *
 *   p2p      Megatron-Core's default (cp_comm_type "p2p", TransformerEngine's
 *            ring attention, AttnFuncWithCPAndKVP2P): the sequence is cut
 *            into 2 cp chunks and rank r holds chunks r and 2 cp - 1 - r, so
 *            that under the causal mask every rank has the same work. In cp
 *            steps each rank attends its queries to one KV block, while it
 *            sends that block to the next rank of the ring and receives the
 *            next from the previous one; each step's transfer runs under
 *            that step's attention kernel.
 *   ulysses  DeepSpeed-Ulysses (Jacobs et al. 2023): all-to-alls over the
 *            CP group turn the rank's tokens of all heads into all tokens
 *            of heads / cp heads, before attention (q, k and v: three) and
 *            back after it (the output: one); backward mirrors them.
 *
 * Sources: TransformerEngine, transformer_engine/pytorch/attention/
 * dot_product_attention/context_parallel.py (AttnFuncWithCPAndKVP2P,
 * flash_attn_p2p_communicate: "KV and dKV" around the ring; pytorch/
 * attention.py in releases before 2.0); Megatron-LM,
 * docs/source/api-guide/context_parallel.rst; DeepSpeed,
 * deepspeed/sequence/layer.py (DistributedAttention). */
#pragma once

#include "graph/transformer.h"

/* Makes LS a context-parallel rank's layer: cp ranks of KIND share each
 * sequence, LS's s becomes seq_len / cp. cp 1 leaves LS as it is. */
void cp_layer_shape (LayerShape *ls, int cp, CpKind kind);
/* The bytes of one KV block a ring step passes: K and V of a rank's
 * tokens, its kv_heads / t heads, in the run's precision:
 * 2 x b x s x (h / heads) x (kv_heads / t) x w. */
double cp_kv_block_bytes (const LayerShape *ls);
/* The attention core of a context-parallel rank, forward and backward. */
void cp_attention_forward (const LayerShape *ls, GArray *ops);
void cp_attention_backward (const LayerShape *ls, GArray *ops);
