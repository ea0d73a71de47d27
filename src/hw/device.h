/* device.h: the GPU's op cost model, a roofline with calibrated efficiencies.
 *
 * A kernel takes max(flops / (peak * eff_compute), bytes / (hbm * eff_mem)),
 * and never less than the launch floor. eff_compute for a GEMM depends on
 * its shape (wave quantization over the SMs and a short-k penalty), so a
 * small or oddly shaped GEMM runs well below the 86 % a large one reaches.
 * With compute.mfu set, every FLOP runs at that fraction of peak instead
 * (the flat model of cost tables). The calibration and its sources are in
 * device.c, in one table. */
#pragma once

#include <stdint.h>
#include "config/spec.h"

typedef enum {
  KERNEL_GEMM,        /* dense matrix multiply, possibly batched */
  KERNEL_ATTENTION,   /* fused (flash) attention: batch = b x heads,
                       * m = n = sequence, k = head dimension */
  KERNEL_MEMORY,      /* element-wise / normalization / reduction: HBM-bound */
} KernelKind;

typedef struct {
  KernelKind kind;
  double flops;       /* FLOPs executed */
  double bytes;       /* HBM bytes read + written */
  /* GEMM shape: batch of (m x k) @ (k x n); for attention, see above;
   * zero for other kinds. */
  int64_t batch, m, n, k;
  Attention attention;  /* KERNEL_ATTENTION: which implementation */
} Kernel;

typedef struct {
  double peak_flops;       /* FLOP/s at the run's precision */
  double hbm_bandwidth;    /* bytes/s */
  double matmul_efficiency;
  double hbm_efficiency;
  double mfu;              /* > 0: flat model, every FLOP at mfu * peak */
  double launch_floor_s;
  double host_launch_s;    /* the host's time to issue one kernel; 0 under
                            * the flat MFU model */
  double op_launch_s;      /* the same for one op that C++ issues without
                            * Python or modules (a loop of copy_ inside
                            * PyTorch); 0 under the MFU model */
  int sms;                 /* streaming multiprocessors, for wave quantization */
  Generation generation;   /* which kernel measurements price it */
  double bytes_per_element;/* 2 for fp16/bf16, 4 for tf32/fp32 */
} ComputeModel;

void compute_model_init (ComputeModel *cm, const DeviceSpec *device,
                         const ComputeSpec *compute, Precision precision);
/* Seconds one kernel takes on one GPU. */
double compute_kernel_time (const ComputeModel *cm, const Kernel *k);
/* A GEMM of shape batch x (m x k) @ (k x n), bytes included. */
Kernel compute_gemm (const ComputeModel *cm, int64_t batch, int64_t m,
                     int64_t n, int64_t k);
/* Causal attention over batch_heads sequences of s tokens with head
 * dimension d, forward or backward, by a fused implementation. */
Kernel compute_attention (const ComputeModel *cm, Attention impl,
                          int64_t batch_heads, int64_t s, int64_t d,
                          gboolean backward);
/* A memory-bound kernel touching bytes, doing flops. */
Kernel compute_memory_op (double bytes, double flops);
/* Seconds of an HBM-bound pass over bytes (the optimizer step), also
 * under the flat MFU model, which prices FLOPs only. */
double compute_memory_time (const ComputeModel *cm, double bytes);
