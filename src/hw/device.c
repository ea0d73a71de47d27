/* device.c: the compute cost model and its calibration; see device.h. */
#include "hw/device.h"
#include "base/ledger.h"
#include <math.h>

/* ---- calibration: one set for every case ------------------------------
 * The values, their sources and kinds are in the ledger
 * (src/base/ledger.def, read as LEDGER (NAME)); why each is what it is
 * stays here.
 *
 * MATMUL_EFFICIENCY: the fraction of peak that Megatron's large GEMMs
 *   sustain in training. The best A100 BF16 GEMM benchmark reaches 86 %
 *   (267.9 of 312 TFLOPS by mamf-finder.py, CUDA 12.1: S. Bekman, Machine
 *   Learning Engineering Open Book, compute/accelerator/README.md, table
 *   "Maximum Achievable Matmul FLOPS", 2024; 271.2, 86.9 %, in its 2025
 *   rerun), but the transformer shapes run in a training step, with their
 *   epilogues, sustain less. Fitted, alone, to
 *   experiments/validation/narayanan2021-table1.yaml and
 *   vtrain-multinode.yaml (hence role: calibration there), the other
 *   constants here being set first from kernel measurements: 0.785,
 *   where those files' cases come out unbiased (pooled mean signed error
 *   +0.6 % at 0.78, +0.1 % at 0.785, -0.3 % at 0.79). It was 0.78
 *   (+0.4 % there, -0.5 % at 0.79) until Megatron-DeepSpeed's host waited
 *   for the device inside each layer (framework.c, layer_sync), which
 *   slows vtrain-multinode's runs.
 * HBM_EFFICIENCY: the fraction of HBM bandwidth PyTorch's memory-bound
 *   kernels reach. Fitted to the PyTorch attention of Dao 2023,
 *   "FlashAttention-2" (arXiv:2307.08691), Figure 4 (a) and (b) (its
 *   benchmark's attention_pytorch, fp16, 16k tokens, hidden 2048, no mask:
 *   36, 40, 43, 45 and 46 TFLOP/s from 512 to 8k tokens at head dimension
 *   64, 53, 67, 76, 79 and 86 at 128), priced as trainsim prices that
 *   code (q and k copied to batched layout, the score GEMM, softmax read
 *   and written, the GEMM by v, the output copied back; backward the
 *   softmax's gradient and four GEMMs): 0.61 put those ten within 4.5 %
 *   on average with the large-GEMM efficiency of then (0.76; 4.7 % at
 *   0.78, where 0.58 would fit best; 0.85 gives 48-56 and
 *   79-104), as tests/test-sim.c checks. Checked, not fitted, on the
 *   same figure's causal bars (c) and (d), whose code adds the mask: 15.6-
 *   18.0 and 26.5-34.1 TFLOP/s against 15-18 and 23-34 measured. A read
 *   alone goes faster (1.80 of 2.04 TB/s, 88 %, in NVIDIA's developer
 *   forums, "Trouble to Reach Peak Bandwidth of A100", thread 339083), but
 *   training's kernels also reduce, mask and convert.
 * Fused attention: by implementation, the tables below (attention_rate).
 * GEMM tiles: a GEMM runs in 256 x 128 or 128 x 128 output tiles,
 *   whichever fills the 108 SMs' waves better, as cuBLAS picks one of its
 *   kernels per shape (cublasLt's tiles include TILE_256x128 and
 *   TILE_128x128, cublasLtMatmulTile_t; NVIDIA, "Matrix Multiplication
 *   Background User's Guide", DU-09799-001, 2023, sections 2.3 and 3.2).
 *   Against EleutherAI's A100 GEMMs timed alone
 *   (experiments/validation/eleutherai-a100-gemm.yaml) the second tile
 *   takes the model's error on the 112 products that are not skinny from
 *   13.1 % to 8.6 % (both at an efficiency of 0.76): the file is
 *   calibration for this choice. 128 x 64 and 64 x 64 tiles too would
 *   give 6.3 %, but at the same efficiency they would promise small
 *   products (left out of that file for their timing) nearly full waves
 *   that cuBLAS's small GEMMs do not reach, so they are not taken.
 * GEMM_K_HALF: the inner size at which a GEMM runs at half its large-k
 *   rate: short-k GEMMs (attention's per-head products, k = 64..128) are
 *   dominated by loading tiles. 256 was fitted with an earlier
 *   MATMUL_EFFICIENCY (0.76) to the same two files (its first value, 64,
 *   to Narayanan 2021 Table 1 and Korthikanti 2022 Table 4); EleutherAI's
 *   GEMMs vary k too little to settle it (with the efficiency
 *   refitted to them too, 0 to 256 fit alike: README, Accuracy), so it
 *   stays.
 * Alignment: a GEMM with a size that is not a multiple of 16 bytes (8
 *   fp16 elements) cannot use cuBLAS's 16-byte vector loads and runs a
 *   kernel for narrower alignment; one aligned to 2 bytes only (an odd
 *   fp16 or bf16 size) runs cuBLAS's slowest, an element at a time.
 *   Fitted to EleutherAI's A100 GEMMs
 *   (experiments/validation/eleutherai-a100-gemm.yaml, calibration), each
 *   against the mean of its two aligned neighbours:
 *   GEMM_UNALIGNED, a size aligned to 4 or 8 bytes: 0.673-0.674 for the
 *     8192 x 51200 by 51200 x 14272-14400 products with 2, 4 or 6
 *     columns past a multiple of 8 (16 each, 0.665-0.683), 0.668-0.676
 *     for the 27648 x 4096 by 4096 x 130-510 ones (47 each, 0.56-0.74;
 *     those of 64-126 columns lose 7-11 %, but the model times them by
 *     their bytes, which alignment does not change). An inner size so
 *     loses more at 51136-51264 (0.587-0.594 for 8192 x k by k x 14336,
 *     16 each), but the attention's products of inner size 130-510 in
 *     eleutherai-a100-layer-gemm.yaml, never fitted to, lose less: one
 *     factor serves (README, Accuracy);
 *   GEMM_ODD, a size aligned to 2 bytes: 0.279 for the odd column counts
 *     above (16 of each residue, 0.276-0.281), 0.312-0.317 for the odd
 *     inner sizes (64, 0.296-0.348).
 *   Padding GPT-2's 50257-token vocabulary to 50304 made nanoGPT "about
 *   25 % faster", its output layer being "about 40 % of latency" (A.
 *   Karpathy, karpathy/nanoGPT commit 77e7e04c, 2023-02-04, A100s): that
 *   layer ran 2 to 2.7 times slower at the odd size, against 3.2-3.6
 *   here for its GEMMs alone.
 * LAUNCH_FLOOR_S: no kernel takes less than a launch on a busy CUDA
 *   stream: 3.8 us a launch for a 2.9 us kernel launched back to back
 *   (A. Gray, "Getting Started with CUDA Graphs", NVIDIA blog, 2019).
 * HOST_LAUNCH_S: the host thread's time to issue one kernel from eager
 *   PyTorch: Python, the module and autograd layers, the dispatcher and
 *   the CUDA launch. Measured bounds: 8 us for a bare torch.add from
 *   Python on an A100 host (flagos-ai/Torch-FL PR #27, 2026, its table
 *   "Findings (NVIDIA A100)") and about 45 us per kernel for module-level
 *   eager code (facebookresearch/sam2 issue #768, 2026: 1,185 kernels in
 *   53.7 ms of host time, A6000); the CUDA runtime call alone is 5-20 us
 *   (Meta's Holistic Trace Analysis docs, cuda_kernel_launch_stats).
 *   Megatron issues its layers as module-level eager code: the upper
 *   bound was taken. Within the measured range only vtrain-single's runs
 *   constrain the choice, so the ledger counts it fitted to that file,
 *   which is calibration. A topology's host.kernel_launch overrides it.
 * OP_LAUNCH_S: one op issued below Python, through PyTorch's dispatcher
 *   and the CUDA launch: the 8 us of a bare torch.add above (its Python
 *   part included, so an upper bound). Not fitted.
 * Generations: a Hopper GPU (a device profile's `generation: hopper`)
 *   reaches a smaller fraction of its peak than an A100 in the same bare
 *   GEMM benchmark: 80.3 % against 86.9 % (MAMF_H100, MAMF_A100: Bekman's
 *   mamf-finder table, one tool, one author). Its large GEMMs in training
 *   are taken to lose the same share: MATMUL_EFFICIENCY x 0.803 / 0.869 =
 *   0.725. Its fused attention runs at its own measured rates (the H100
 *   figure of the same FlashAttention-2 paper: FlashAttention-2 reaches
 *   189 TFLOP/s of an A100's 312, 61 %, and 328 of an H100's 989, 33 %,
 *   at head dimension 128 and 16k tokens, causal). Nothing here was fitted
 *   to an H100 run. The HBM efficiency stays the A100's: no published
 *   measurement of an H100 SXM's copy bandwidth was found (an H100 PCIe
 *   reaches 0.85-0.92 of its 2 TB/s in D. Ernst's gpu-benches stream
 *   kernels, te42kyfo/gpu-benches, h100_pcie.txt, against 0.85-0.86 for an
 *   A100 80GB).
 * FP8 on Hopper (MAMF_H100_FP8): the large GEMMs of training.precision:
 *   fp8 are taken to lose to their bare benchmark what bf16's do
 *   (MATMUL_EFFICIENCY x MAMF_H100_FP8 / MAMF_A100 = 0.704 of the FP8
 *   peak, against 0.725 of the bf16 peak). No cuBLAS FP8 run of
 *   mamf-finder was found; the best published FP8 GEMM on an H100-class
 *   part found is TileLang's benchmark on an H800 SXM (the H100 SXM's
 *   SMs and clocks, 1,979 TFLOP/s dense FP8): 1,541 TFLOP/s at 8192 x
 *   8192 by K 16384 (tile-ai/tilelang benchmark/matmul_fp8/README.md,
 *   commit 6b1faf71), 77.9 %.
 * A100_SMS: an A100's streaming multiprocessors (NVIDIA A100 Tensor Core
 *   GPU Architecture whitepaper, 2020: 108 SMs), for a device profile
 *   that does not give its own `sms`. */

void
compute_model_init (ComputeModel *cm, const DeviceSpec *device,
                    const ComputeSpec *compute, Precision precision)
{
  cm->peak_flops = device->peak_flops[precision];
  cm->hbm_bandwidth = device->hbm_bandwidth;
  double matmul = LEDGER (MATMUL_EFFICIENCY);
  if (device->generation == GENERATION_HOPPER)
    matmul *= (precision == PRECISION_FP8 ? LEDGER (MAMF_H100_FP8)
                                          : LEDGER (MAMF_H100))
              / LEDGER (MAMF_A100);
  cm->generation = device->generation;
  cm->matmul_efficiency = device->matmul_efficiency > 0
    ? device->matmul_efficiency : matmul;
  cm->hbm_efficiency = device->hbm_efficiency > 0
    ? device->hbm_efficiency : LEDGER (HBM_EFFICIENCY);
  if (compute->matmul_efficiency > 0)
    cm->matmul_efficiency = compute->matmul_efficiency;
  if (compute->hbm_efficiency > 0)
    cm->hbm_efficiency = compute->hbm_efficiency;
  cm->mfu = compute->mfu > 0 ? compute->mfu : 0;
  cm->launch_floor_s = LEDGER (LAUNCH_FLOOR_S);
  /* The flat model prices FLOPs only, as cost tables do. */
  cm->host_launch_s = cm->mfu > 0 ? 0 : LEDGER (HOST_LAUNCH_S);
  cm->op_launch_s = cm->mfu > 0 ? 0 : LEDGER (OP_LAUNCH_S);
  cm->sms = device->sms > 0 ? device->sms : (int) LEDGER (A100_SMS);
  cm->bytes_per_element = spec_precision_bytes (precision);
}

/* ---- fused attention ----------------------------------------------------
 *
 * Forward + backward TFLOP/s of causal attention on an A100 SXM4 80GB in
 * fp16, by implementation, head dimension (64, 128) and sequence (512,
 * 1k, 2k, 4k, 8k, 16k): Dao 2023, "FlashAttention-2" (arXiv:2307.08691),
 * Figure 4 (c) and (d), as labelled on its bars (the figure's file is
 * assets/flash2_a100_fwd_bwd_benchmark.png in Dao-AILab/flash-attention,
 * commit 4f285b35). Batch x sequence is 16k tokens at hidden 2048. The
 * causal rates count half of the 4 s^2 d FLOPs of the forward and 2.5x
 * that in backward, as trainsim's attention kernels do. "flash1" is the
 * figure's FlashAttention (v1, CUDA); "flash2" FlashAttention-2.
 * "flash1-triton" is flash-attn 1.x's Triton kernel, flash_attn_triton.py
 * (Tri Dao, for triton 2.0.0.dev20221202; the kernel MosaicML's MPT ran as
 * attn_impl: triton). No benchmark of it is published: the figure's
 * "FlashAttention Triton" bars are another kernel, OpenAI's
 * triton.ops.flash_attention, which is what the benchmark script published
 * with the figure times as "Triton" (benchmarks/benchmark_flash_attention.py,
 * flash-attention commit 60499abc, 2023-07-28). The kernel's own
 * docstring places it: "Overall Triton forward + backward is slightly
 * slower than CUDA forward + backward" (flash_attn/flash_attn_triton.py,
 * commit 4f285b35): it runs at FlashAttention v1's rates, an upper bound.
 * A rate is used as a fraction of the peak of the GPU it was measured on
 * (the A100's 312 TFLOPS; a Hopper GPU has its own table, below), so that
 * another device of the generation scales with its peak. Measured points only: a sequence outside
 * 512-16k takes the nearest end's rate, and a head dimension between 64
 * and 128 (or outside) is interpolated (or takes the nearest). */
#define ATTN_POINTS 6
/* Query rows per thread block (ATTN_BLOCK_ROWS): FlashAttention's kernels
 * tile the queries in blocks of 128 rows, one block per (sequence, head,
 * row block). */

/* Each generation's measured rates (flash1, flash2: forward + backward)
 * and the peak of the GPU they were measured on; on Hopper also the
 * forward rates of FlashAttention-2, -3 and cuDNN's kernel, measured
 * together (FlashAttention-3's forward figure; no causal backward of v3
 * or cuDNN was published beside them). */
typedef struct {
  LedgerId flash1, flash2, peak;
  gboolean hopper;       /* the three forward tables below are measured */
  LedgerId flash2_fwd, flash3_fwd, cudnn_fwd;
} AttentionTable;

static const AttentionTable attention_tables[GENERATION_N] = {
  [GENERATION_AMPERE] = { LEDGER_ATTN_FLASH1_TFLOPS, LEDGER_ATTN_FLASH2_TFLOPS,
                          LEDGER_ATTN_BENCH_PEAK, FALSE, 0, 0, 0 },
  [GENERATION_HOPPER] = { LEDGER_ATTN_FLASH1_TFLOPS_H100,
                          LEDGER_ATTN_FLASH2_TFLOPS_H100,
                          LEDGER_ATTN_BENCH_PEAK_H100, TRUE,
                          LEDGER_ATTN_FLASH2_FWD_H100,
                          LEDGER_ATTN_FLASH3_FWD_H100,
                          LEDGER_ATTN_CUDNN_FWD_H100 },
};

/* Table ID's value at head dimension row (0: 64, 1: 128), linear in log2
 * of s between its points (0 at 512, 5 at 16k), clamped beyond them. */
static double
table_at (LedgerId id, int row, int64_t s)
{
  double x = log2 ((double) s) - 9;
  x = CLAMP (x, 0.0, ATTN_POINTS - 1.0);
  int i = MIN ((int) x, ATTN_POINTS - 2);
  const double *r = ledger_entries[id].values + row * ATTN_POINTS;
  return r[i] + (x - i) * (r[i + 1] - r[i]);
}

/* Fraction of the measured GPU's peak at head dimension row (0: 64, 1:
 * 128), linear in log2 of s. */
static double
attention_rate_at (const ComputeModel *cm, Attention impl, int row, int64_t s)
{
  /* flash1-triton runs at flash1's rates (above). */
  const AttentionTable *t = &attention_tables[cm->generation];
  gboolean v3 = impl == ATTENTION_FLASH3 || impl == ATTENTION_CUDNN;
  double rate = table_at (impl == ATTENTION_FLASH2 || v3 ? t->flash2
                          : t->flash1, row, s);
  /* FlashAttention-3 and cuDNN's kernel: FlashAttention-2's forward +
   * backward rate times their forward's speed-up over FlashAttention-2's
   * in the same benchmark: the backward taken to gain as the forward
   * does. Only Hopper's are measured (config refuses them elsewhere);
   * other devices keep FlashAttention-2's. */
  if (v3 && t->hopper)
    rate *= table_at (impl == ATTENTION_FLASH3 ? t->flash3_fwd : t->cudnn_fwd,
                      row, s)
            / table_at (t->flash2_fwd, row, s);
  return rate * 1e12 / ledger_entries[t->peak].value;
}

/* Of the SMs' waves, the fraction doing work: the last wave of a small
 * grid leaves SMs idle. BLOCKS is a count in double: a hostile shape's
 * product of tiles would overflow an integer. */
static double
wave_efficiency (const ComputeModel *cm, double blocks)
{
  double waves = ceil (blocks / cm->sms);
  return blocks / (waves * cm->sms);
}

/* Fraction of peak a fused attention kernel reaches: the published rate,
 * scaled by how well its grid fills the SMs. The benchmark's grid of
 * 16k / 128 row blocks x 16-32 heads (2048-4096 blocks) fills them to
 * 99.8 %, so its rates stand for a full grid. */
static double
attention_efficiency (const ComputeModel *cm, const Kernel *a)
{
  double dx = CLAMP (((double) a->k - 64) / 64, 0.0, 1.0);
  double rate = (1 - dx) * attention_rate_at (cm, a->attention, 0, a->m)
                + dx * attention_rate_at (cm, a->attention, 1, a->m);
  int64_t block = (int64_t) LEDGER (ATTN_BLOCK_ROWS);
  int64_t rows = (a->m + block - 1) / block;
  return rate * wave_efficiency (cm, (double) a->batch * rows);
}

/* The rate a GEMM keeps for one of its sizes: full where it is a multiple
 * of 16 bytes, GEMM_UNALIGNED where of 4 (its lowest set bit times the
 * element's bytes), GEMM_ODD below. */
static double
size_alignment (const ComputeModel *cm, int64_t size)
{
  double bytes = (double) (size & -size) * cm->bytes_per_element;
  return bytes >= LEDGER (GEMM_ALIGN_BYTES) ? 1.0
         : bytes >= 4 ? LEDGER (GEMM_UNALIGNED) : LEDGER (GEMM_ODD);
}

/* Fraction of the large-GEMM rate this shape reaches: the last wave of
 * output tiles leaves SMs idle, and a short inner dimension cannot hide
 * the cost of loading each tile. */
static double
gemm_shape_efficiency (const ComputeModel *cm, const Kernel *g)
{
  /* GEMM_TILES: long side, short side of each tile, in turn. */
  const double *tile = LEDGER_VALUES (GEMM_TILES);
  int n_tiles = ledger_entries[LEDGER_GEMM_TILES].n_values / 2;
  int64_t big = MAX (g->m, g->n), small = MIN (g->m, g->n);
  double fill = 0;   /* the better tile's wave efficiency */
  for (int i = 0; i < n_tiles; i++)
    {
      int64_t tb = (int64_t) tile[2 * i], ts = (int64_t) tile[2 * i + 1];
      double tiles = (double) g->batch * (double) ((big + tb - 1) / tb)
                     * (double) ((small + ts - 1) / ts);
      fill = MAX (fill, wave_efficiency (cm, tiles));
    }
  double k_eff = (double) g->k / ((double) g->k + LEDGER (GEMM_K_HALF));
  /* Every size counts, as a kernel does not say which are leading
   * dimensions (a weight gradient makes the tokens one); the narrowest
   * decides the kernel, and their OR's lowest set bit is the narrowest's. */
  return fill * k_eff * size_alignment (cm, g->m | g->n | g->k);
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
          eff = attention_efficiency (cm, k);
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
               batch, m, n, k, ATTENTION_UNFUSED };
  return g;
}

Kernel
compute_attention (const ComputeModel *cm, Attention impl, int64_t batch_heads,
                   int64_t s, int64_t d, gboolean backward)
{
  /* Forward: Q K^T and P V over the causal half of the s x s scores;
   * backward: 2.5 times that (five block GEMMs to the forward's two, the
   * scores recomputed). HBM: Q, K, V and O (and their gradients). */
  double fwd = 0.5 * 4.0 * (double) batch_heads * s * s * d;
  double io = 4.0 * cm->bytes_per_element * (double) batch_heads * s * d;
  Kernel a = { KERNEL_ATTENTION, backward ? 2.5 * fwd : fwd,
               backward ? 2 * io : io, batch_heads, s, s, d, impl };
  return a;
}

Kernel
compute_memory_op (double bytes, double flops)
{
  Kernel g = { KERNEL_MEMORY, flops, bytes, 0, 0, 0, 0, ATTENTION_UNFUSED };
  return g;
}

double
compute_memory_time (const ComputeModel *cm, double bytes)
{
  /* HBM-bound even under the flat MFU model, which prices FLOPs only. */
  return MAX (bytes / (cm->hbm_bandwidth * cm->hbm_efficiency),
              cm->launch_floor_s);
}
