/* graph-private.h: the op builders transformer.c and moe.c share. */
#pragma once

#include "graph/transformer.h"

/* Appends a kernel K, one launch. */
void graph_push_kernel (GArray *ops, const char *name, Kernel k);
/* Appends a collective of KIND over BYTES (the whole buffer). */
void graph_push_comm (GArray *ops, GraphOpKind kind, const char *name,
                      double bytes);
/* The last op pushed launches n kernels. */
void graph_set_launches (GArray *ops, int n);
/* The host reads the last op pushed back (GraphOp.syncs). */
void graph_set_syncs (GArray *ops);
/* BATCH products of (m x k) by (k x n). */
void graph_push_gemm (GArray *ops, const LayerShape *ls, const char *name,
                      int64_t batch, int64_t m, int64_t n, int64_t k);
/* The input and weight gradients of that product. */
void graph_push_gemm_backward (GArray *ops, const LayerShape *ls,
                               const char *dgrad, const char *wgrad,
                               int64_t batch, int64_t m, int64_t n, int64_t k);
/* An element-wise kernel over elems elements reading `reads` and writing
 * `writes` tensors of the run's precision, and mask_bytes per element. */
void graph_push_elementwise (GArray *ops, const LayerShape *ls,
                             const char *name, double elems, double reads,
                             int writes, double mask_bytes);
/* The hidden-state elements a rank's element-wise kernels touch: b s h,
 * or 1/t of them with sequence parallelism. */
double graph_token_elems (const LayerShape *ls);
/* Adds ELEMS parameters' gradients of TENSORS tensors into the step's,
 * as the run's GradAccumulation does. */
void graph_push_grad_accumulate (GArray *ops, const LayerShape *ls,
                                 double elems, int tensors);
