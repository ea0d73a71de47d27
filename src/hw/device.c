/* device.c: the compute cost model and its calibration; see device.h. */
#include "hw/device.h"
#include <math.h>

/* ---- calibration: one set for every case ------------------------------
 *
 * MATMUL_EFFICIENCY: the fraction of peak that Megatron's large GEMMs
 *   sustain in training. The best A100 BF16 GEMM benchmark reaches 86 %
 *   (268 of 312 TFLOPS; DESIGN.md section 4), but the transformer shapes
 *   run in a training step, with their epilogues, sustain less: 0.76 is
 *   fitted jointly, once, to experiments/validation/narayanan2021-table1.yaml
 *   and vtrain-multinode.yaml (hence role: calibration there), together
 *   with GEMM_K_HALF below.
 * HBM_EFFICIENCY: memory-bound kernels reach 85-90 % of HBM bandwidth
 *   (DESIGN.md section 4): the low end, as Megatron's fused kernels also
 *   do arithmetic.
 * ATTENTION_EFFICIENCY: FlashAttention-2 reaches 50-73 % of peak in the
 *   forward pass on A100 and less in the backward (Dao 2023, fig. 5).
 * GEMM_TILE_M/N: a 256 x 128 output tile, cuBLAS/CUTLASS's usual tile for
 *   large half-precision GEMMs on A100; with 108 SMs it sets the waves.
 * GEMM_K_HALF: the inner size at which a GEMM runs at half its large-k
 *   rate: short-k GEMMs (attention's per-head products, k = 64..128) are
 *   dominated by loading tiles. Fitted with MATMUL_EFFICIENCY to the same
 *   two files (its first value, 64, was fitted to Narayanan 2021 Table 1
 *   and Korthikanti 2022 Table 4, and replaced by this one).
 * LAUNCH_FLOOR_S: no kernel takes less than a launch, about 4 us on a
 *   busy CUDA stream (nsys traces of Megatron show 3-5 us gaps). */
#define MATMUL_EFFICIENCY     0.76
#define HBM_EFFICIENCY        0.85
#define ATTENTION_EFFICIENCY  0.60
#define GEMM_TILE_M           256
#define GEMM_TILE_N           128
#define GEMM_K_HALF           256.0
#define LAUNCH_FLOOR_S        4e-6
#define A100_SMS              108

void
compute_model_init (ComputeModel *cm, const DeviceSpec *device,
                    const ComputeSpec *compute, Precision precision)
{
  cm->peak_flops = device->peak_flops[precision];
  cm->hbm_bandwidth = device->hbm_bandwidth;
  cm->matmul_efficiency = device->matmul_efficiency > 0
    ? device->matmul_efficiency : MATMUL_EFFICIENCY;
  cm->hbm_efficiency = device->hbm_efficiency > 0
    ? device->hbm_efficiency : HBM_EFFICIENCY;
  if (compute->matmul_efficiency > 0)
    cm->matmul_efficiency = compute->matmul_efficiency;
  if (compute->hbm_efficiency > 0)
    cm->hbm_efficiency = compute->hbm_efficiency;
  cm->attention_efficiency = ATTENTION_EFFICIENCY;
  cm->mfu = compute->mfu > 0 ? compute->mfu : 0;
  cm->launch_floor_s = LAUNCH_FLOOR_S;
  cm->sms = A100_SMS;
  cm->bytes_per_element =
    (precision == PRECISION_FP16 || precision == PRECISION_BF16) ? 2 : 4;
}

/* Fraction of the large-GEMM rate this shape reaches: the last wave of
 * output tiles leaves SMs idle, and a short inner dimension cannot hide
 * the cost of loading each tile. */
static double
gemm_shape_efficiency (const ComputeModel *cm, const Kernel *g)
{
  int64_t big = MAX (g->m, g->n), small = MIN (g->m, g->n);
  int64_t tiles = g->batch * ((big + GEMM_TILE_M - 1) / GEMM_TILE_M)
                           * ((small + GEMM_TILE_N - 1) / GEMM_TILE_N);
  int64_t waves = (tiles + cm->sms - 1) / cm->sms;
  double wave_eff = (double) tiles / (double) (waves * cm->sms);
  double k_eff = (double) g->k / ((double) g->k + GEMM_K_HALF);
  return wave_eff * k_eff;
}

double
compute_kernel_time (const ComputeModel *cm, const Kernel *k)
{
  double t;
  if (cm->mfu > 0)
    t = k->flops / (cm->peak_flops * cm->mfu);
  else
    {
      double eff;
      switch (k->kind)
        {
        case KERNEL_GEMM:
          eff = cm->matmul_efficiency * gemm_shape_efficiency (cm, k);
          break;
        case KERNEL_ATTENTION:
          eff = cm->attention_efficiency;
          break;
        case KERNEL_MEMORY:
        default:
          eff = cm->matmul_efficiency;
          break;
        }
      double t_flops = k->flops / (cm->peak_flops * eff);
      double t_bytes = k->bytes / (cm->hbm_bandwidth * cm->hbm_efficiency);
      t = MAX (t_flops, t_bytes);
    }
  return MAX (t, cm->launch_floor_s);
}

Kernel
compute_gemm (const ComputeModel *cm, int64_t batch, int64_t m, int64_t n,
              int64_t k)
{
  double w = cm->bytes_per_element;
  Kernel g = { KERNEL_GEMM, 2.0 * batch * m * n * k,
               w * batch * ((double) m * k + (double) k * n + (double) m * n),
               batch, m, n, k };
  return g;
}

Kernel
compute_memory_op (double bytes, double flops)
{
  Kernel g = { KERNEL_MEMORY, flops, bytes, 0, 0, 0, 0 };
  return g;
}

double
compute_memory_time (const ComputeModel *cm, double bytes)
{
  /* HBM-bound even under the flat MFU model, which prices FLOPs only. */
  return MAX (bytes / (cm->hbm_bandwidth * cm->hbm_efficiency),
              cm->launch_floor_s);
}
