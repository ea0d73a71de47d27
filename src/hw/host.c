/* host.c: the CPU-Adam rate of a node's CPUs; see host.h.
 *
 * DeepSpeed's CPU-Adam (csrc/includes/cpu_adam.h and
 * csrc/adam/cpu_adam_impl.cpp, Step_AVX, DeepSpeed v0.16.4) handles a
 * vector of parameters (8 fp32 lanes with AVX2, 16 with AVX-512) with 16
 * vector instructions: 4 loads (gradient, exp_avg, exp_avg_sq,
 * parameter), 9 arithmetic (3 mul, 4 fma, a sqrt, a div) and 3 stores
 * (parameter, exp_avg, exp_avg_sq), on OpenMP threads over every core.
 * Per parameter it reads 16 bytes and writes 12, and each written cache
 * line is read first (write-allocate): 40 bytes through memory.
 *
 * Two roofs, the lower wins:
 * - issue: each core issues one of the 16 vector instructions a cycle,
 *   cores x clock x lanes / 16 parameters a second. A bound, not a
 *   measurement: sqrt and div take longer, so a CPU with few cores is
 *   slower than this.
 * - memory: the node's peak bandwidth at the fraction CPU-Adam reached in
 *   the one published measurement, divided by 40 bytes.
 *
 * The measurement: Ren et al. 2021, ZeRO-Offload (USENIX ATC), Table 4,
 * CPU-Adam updates 10B parameters in 2.57 s (3.89e9 a second; 1B-8B give
 * 3.3e9-4.5e9) on a DGX-2 (Table 2: two Xeon Platinum 8168, 24 cores at
 * 2.7 GHz with AVX-512 each, six channels of DDR4-2666 a socket: 256 GB/s
 * peak). Its issue roof is 130e9 a second, so that run was bound by
 * memory, at 3.89e9 x 40 / 256e9 = 61 % of peak (STREAM-like kernels
 * reach 60-80 %). That fraction is the one constant fitted here, to that
 * one row, which is not a training measurement of trainsim's. */
#include "hw/host.h"

#include "base/ledger.h"

/* The values: the ledger's ADAM_VECTOR_INSTRUCTIONS,
 * ADAM_CPU_BYTES_PER_PARAM, CPU_ADAM_REF_PARAMS_PER_S and
 * CPU_ADAM_REF_MEMORY_BANDWIDTH (src/base/ledger.def). */
static double
memory_efficiency (void)
{
  return LEDGER (CPU_ADAM_REF_PARAMS_PER_S) * LEDGER (ADAM_CPU_BYTES_PER_PARAM)
         / LEDGER (CPU_ADAM_REF_MEMORY_BANDWIDTH);
}

double
host_cpu_adam_rate (const HostSpec *host)
{
  if (host->cpu_adam_params_per_s != SPEC_UNSET)
    return host->cpu_adam_params_per_s;
  const CpuSpec *c = &host->cpu;
  if (c->sockets <= 0)
    return SPEC_UNSET;
  double issue = c->sockets * (double) c->cores * c->frequency
                 * (c->simd_bits / 32.0) / LEDGER (ADAM_VECTOR_INSTRUCTIONS);
  double memory = c->memory_bandwidth * memory_efficiency ()
                  / LEDGER (ADAM_CPU_BYTES_PER_PARAM);
  return MIN (issue, memory);
}
