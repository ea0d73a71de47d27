/* sim-epilogue.c: what each framework's step runs around its
 * optimizer (sim_epilogue_ops), op by op with its source; sim-build.c
 * emits them on the ranks' compute streams. See sim-private.h. */
#include "parallel/sim-private.h"

#include "graph/fp8.h"

/* ---- the step's epilogue ---------------------------------------------------- */

/* What a framework's step runs around its optimizer besides the
 * gradients' reduction: small collectives over their groups, each waiting
 * for the whole group, and the host's reads of their results, as the code
 * at the versions of its profile (framework.c) runs them. Each is
 * costed by the network model over its group's shape; all but the tied
 * embedding's move a few bytes, their NICs' share nothing next to their
 * latency, so they run for their static time rather than as flows.
 *
 * Megatron-LM (v2.6 for megatron-lm@2, 23.04 for @3):
 * - with sequence parallelism (23.04), the layer norms' and the
 *   row-parallel linears' bias gradients (sequence_parallel: fused_layer_norm.py,
 *   core/tensor_parallel/layers.py) all-reduced over the TP group, before
 *   the data-parallel reduction: megatron/optimizer/optimizer.py
 *   allreduce_layernorm_grads, first in reduce_model_grads (a cat, the
 *   call, a copy_ back per tensor);
 * - with pp > 1, after the reduction, the tied word embedding's gradient
 *   all-reduced between the first and last stage (megatron/training.py
 *   train_step at v2.6, optimizer.py allreduce_word_embedding_grads at
 *   23.04), in the reduction's precision (it is main_grad);
 * - the optimizer (optimizer.py MixedPrecisionOptimizer.step, 23.04;
 *   Float16OptimizerWithFloat16Params.step, v2.6): in fp16 alone (bf16
 *   has no grad scaler: optimizer/__init__.py), the unscale and the
 *   found-inf flag, an fp32 scalar, all-reduced (MAX) over the model-
 *   parallel group and read back (_unscale_main_grads_and_check_for_nan:
 *   found_inf.item ()); then, as --clip-grad defaults to 1.0
 *   (arguments.py), the gradients' L2 norm, an fp32 scalar, all-reduced
 *   (SUM) over the same group and read back (clip_grads.py
 *   clip_grad_norm_fp32: multi_tensor_l2norm, total_norm.item ()). The
 *   model-parallel group is a replica's tp x pp ranks (mpu/initialize.py);
 *   with the distributed optimizer (ZeRO-1, 23.04) the whole world
 *   (distrib_optimizer.py get_model_parallel_group returns None);
 * - the loss, on the last stage, is averaged over the data-parallel group
 *   in every micro-batch's forward, not after the optimizer:
 *   pretrain_gpt.py loss_func calls average_losses_across_data_parallel_group
 *   (megatron/utils.py: a clone, a cat, the all-reduce of one fp32, a
 *   division) from schedules.py forward_step, v2.6 and 23.04 alike
 *   (core_v0.12.0's loss_func still all-reduces its reporting loss there).
 *
 * DeepSpeed's PipelineEngine (megatron-deepspeed; deepspeed with pp > 1):
 * the TrainSchedule ends each step with ReduceTiedGrads, ReduceGrads and
 * OptimizerStep, in that order (deepspeed/runtime/pipe/schedule.py, the
 * same from v0.3.16 to v0.9.5), then train_batch calls
 * _aggregate_total_loss (pipe/engine.py):
 * - ReduceTiedGrads, with pp > 1: the tied embedding's gradient (fp32
 *   _hp_grad in bf16 from v0.7, tied_hp_grad) all-reduced between the
 *   first and last stage, before the data-parallel reduction
 *   (_exec_reduce_tied_grads);
 * - OptimizerStep, v0.9.5 (Megatron-DeepSpeed f01c9e6e hands DeepSpeed
 *   its bare optimizer, which the engine wraps by precision: engine.py
 *   _do_optimizer_sanity_check). In fp16 without ZeRO, FP16_Optimizer.step
 *   (fp16/fused_optimizer.py): has_overflow (runtime/utils.py CheckOverflow)
 *   checks the tensors one at a time, float (x.float ().sum ()) each (two
 *   kernels and a read back), then all-reduces a one-byte flag (MAX) over
 *   the grid's model-parallel group (pipe x model ranks of a replica,
 *   pipe/topology.py ds_model_proc_group) and reads it; get_grad_norm
 *   takes the norm of each of the two flat parameter groups (Megatron's
 *   weight-decay split) with a read each, then all-reduces the fp32 sum
 *   (SUM) over that group and reads it. In fp16 with ZeRO-1,
 *   DeepSpeedZeroOptimizer.step (zero/stage_1_and_2.py): has_overflow checks
 *   the rank's partition tensor by tensor, all-reduces the flag over the
 *   data-parallel group, then over the model-parallel group
 *   (_model_parallel_all_reduce: where it has more than one rank), and
 *   reads it; get_grad_norm_direct reads each partition tensor's norm
 *   (a cast to double and the norm), then all-reduces the sum over the
 *   same two groups and reads it. In bf16, BF16_Optimizer.step
 *   (bf16_optimizer.py; ZeRO 0-1 with fp32 accumulation):
 *   get_global_norm_of_tensors reads each tensor's norm, then all-reduces
 *   the sum over the model-parallel group and reads it; no overflow check.
 *   In fp32 no wrapper checks anything (and gradient_clipping defaults
 *   to 0). Every rank counts its stage's tensors as its tp rank 0 does
 *   (a tp rank above skips the replicated ones, then waits for rank 0 at
 *   the all-reduce);
 * - _aggregate_total_loss: the last stage divides its loss and clones it
 *   twice, all-reduces it over the data-parallel group where there is one
 *   (is_data_parallel) and divides it, reads both values back to build
 *   a tensor of two fp32, copies it up and broadcasts it over the pipe
 *   group, whose other stages copy up a tensor to receive it and clone
 *   its two values.
 *   A broadcast is costed as an all-gather of its bytes: NCCL's tuner
 *   gives a broadcast the ring alone and one step more (nRanks steps
 *   against nRanks - 1: src/graph/tuning.cc, v2.21.5-1).
 *
 * The optimizer's own kernels (Adam, the clip, the copies) stay in the
 * optimizer op; kernels of a read-back loop are left out of the device's
 * time (a pass over the gradients at most, under the host's loop). */
int
sim_epilogue_ops (const Sim *sim, int stage, int tensors, EpilogueOp *out)
{
  const Plan *p = sim->plan;
  const ExperimentSpec *e = p->spec;
  Precision precision = e->training.precision;
  double fp32 = spec_precision_bytes (PRECISION_FP32), flag = 1;
  /* A tied word embedding's two copies, on the end stages. */
  gboolean tied = p->pp > 1 && (stage == 0 || stage == p->pp - 1)
                  && !e->model.untied_embeddings;
  gboolean last = stage == p->pp - 1;
  /* The optimizer's checks run where the optimizer runs on the GPU:
   * ZeRO-Offload's CPU-Adam checks on the host, not modelled. */
  gboolean gpu_step = sim->offload == OFFLOAD_NONE;
  gboolean hp = e->framework->tied_hp_grad && precision == PRECISION_BF16;
  EpilogueOp embedding = { "embedding_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                           GROUP_EMBEDDING, COLL_SEND,
                           (double) sim->ls.vocab / p->tp * sim->ls.h
                           * (hp ? fp32 : sim->grad_bytes), 0, 1, FALSE, FALSE };
  int n = 0;
  if (sim->epilogue == EPILOGUE_MEGATRON)
    {
      if (last)
        out[n++] = (EpilogueOp) { "loss_allreduce", EPILOGUE_IN_FORWARD,
                                  GROUP_DP, COLL_ALL_REDUCE, fp32, 0, 4, FALSE,
                                  FALSE };
      if (e->parallel.sequence_parallel && p->tp > 1)
        {
          /* A layer's two norms' weights and biases and its two
           * row-parallel biases, and the final norm's two on the last
           * stage: tensors of hidden elements, whole on every tp rank. */
          int ln = 6 * p->virtual_stages * plan_chunk_layers (p, stage)
                   + (last ? 2 : 0);
          out[n++] = (EpilogueOp) { "layernorm_allreduce",
                                    EPILOGUE_BEFORE_REDUCTION, GROUP_TP,
                                    COLL_ALL_REDUCE,
                                    (double) ln * sim->ls.h * sim->grad_bytes,
                                    0, 2 + ln, FALSE, FALSE };
        }
      if (tied)
        out[n++] = embedding;
      Group mp = e->zero.stage >= 1 ? GROUP_WORLD : GROUP_MODEL;
      if (gpu_step && precision == PRECISION_FP16)
        out[n++] = (EpilogueOp) { "found_inf_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                  mp, COLL_ALL_REDUCE, fp32, 0, 2, FALSE, TRUE };
      if (gpu_step)
        out[n++] = (EpilogueOp) { "grad_norm_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                  mp, COLL_ALL_REDUCE, fp32, 0, 2, FALSE, TRUE };
    }
  else if (sim->epilogue == EPILOGUE_DEEPSPEED_PIPE)
    {
      if (tied)
        {
          out[n] = embedding;
          out[n++].place = EPILOGUE_BEFORE_REDUCTION;
        }
      gboolean mp = p->tp * p->pp > 1;
      if (gpu_step && precision == PRECISION_FP16 && e->zero.stage == 0)
        {
          out[n++] = (EpilogueOp) { "overflow_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                    GROUP_MODEL, COLL_ALL_REDUCE, flag,
                                    2 * tensors, 2, FALSE, TRUE };
          out[n++] = (EpilogueOp) { "grad_norm_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                    GROUP_MODEL, COLL_ALL_REDUCE, fp32,
                                    2, 2, FALSE, TRUE };
        }
      else if (gpu_step && precision == PRECISION_FP16)
        {
          /* Over the rank's partition, its share of the stage's tensors,
           * the overflow flag then the norm: each over the data-parallel
           * group, then the model-parallel group. */
          static const char *const names[2][2] = {
            { "overflow_allreduce_dp", "overflow_allreduce" },
            { "grad_norm_allreduce_dp", "grad_norm_allreduce" },
          };
          int part = (tensors + p->dp - 1) / p->dp;
          for (int k = 0; k < 2; k++)
            {
              out[n++] = (EpilogueOp) { names[k][0], EPILOGUE_BEFORE_OPTIMIZER,
                                        GROUP_DP, COLL_ALL_REDUCE,
                                        k ? fp32 : flag, 2 * part, 2, FALSE,
                                        !mp };
              if (mp)
                out[n++] = (EpilogueOp) { names[k][1], EPILOGUE_BEFORE_OPTIMIZER,
                                          GROUP_MODEL, COLL_ALL_REDUCE,
                                          k ? fp32 : flag, 0, 1, FALSE, TRUE };
            }
        }
      else if (gpu_step && precision == PRECISION_BF16)
        out[n++] = (EpilogueOp) { "grad_norm_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                  GROUP_MODEL, COLL_ALL_REDUCE, fp32,
                                  tensors, 2, FALSE, TRUE };
      if (last && p->dp > 1)
        out[n++] = (EpilogueOp) { "loss_allreduce", EPILOGUE_AFTER_OPTIMIZER,
                                  GROUP_DP, COLL_ALL_REDUCE, fp32, 0, 5, FALSE,
                                  TRUE };
      out[n++] = (EpilogueOp) { "loss_broadcast", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_PIPE, COLL_ALL_GATHER, 2 * fp32, 0,
                                !last ? 4 : p->dp > 1 ? 2 : 5,
                                last && p->dp == 1, FALSE };
    }
  else if (sim->epilogue == EPILOGUE_COMPOSER)
    {
      /* MosaicML Composer's Trainer around FSDP, as llm-foundry runs it
       * (Composer v0.17.2, 7e0e40a7, which llm-foundry 5e85bd62d pins;
       * torchmetrics v1.0.3, which it allows), each over the world (FSDP's
       * default group; pp is 1). Before the optimizer, the gradient
       * clipping its yamls ask for (gradient_clipping: norm 1.0;
       * algorithms/gradient_clipping.py, FSDP.clip_grad_norm_): a norm
       * per local gradient, their stack, the fp32 sum all-reduced, a
       * scale per gradient, no read back. After it (trainer.py): the
       * loss all-reduced and read back (2073-2077); the batch's samples
       * and tokens all-reduced and rank 0's batch time broadcast, read
       * back three times (_accumulate_time_across_ranks, 1972-1992; the
       * broadcast costed as an all-gather of its bytes); the train
       * metrics computed every batch (2101-2106): MPT's two
       * (LanguageCrossEntropy, LanguagePerplexity: metrics/nlp.py) sync
       * two scalar states each through torchmetrics'
       * gather_all_tensors (utilities/distributed.py 90-121): a barrier
       * (ProcessGroupNCCL's: an all-reduce, then the device
       * synchronized), N zeros_like from a Python list, the list
       * all_gather, whose N outputs are copied out one by one, each of
       * the 2 N ops at a bare op's launch cost (OP_LAUNCH_S), then a
       * stack: the four barriers and the four gathers are costed in two
       * runs of four; the speed monitor's FLOPs all-reduced and read back
       * (callbacks/speed_monitor.py 299-305). Each waits for the whole
       * world, and the metrics' launches grow with it. */
      int n_ranks = p->gpus;
      out[n++] = (EpilogueOp) { "grad_norm_allreduce", EPILOGUE_BEFORE_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_REDUCE, fp32, 0,
                                2 * tensors + 2, FALSE, FALSE, 0 };
      out[n++] = (EpilogueOp) { "loss_allreduce", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_REDUCE, fp32, 0, 2,
                                FALSE, TRUE, 0 };
      out[n++] = (EpilogueOp) { "samples_allreduce", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_REDUCE, 2 * 8, 0, 3,
                                FALSE, FALSE, 0 };
      out[n++] = (EpilogueOp) { "time_broadcast", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_GATHER, 8, 0, 4,
                                FALSE, TRUE, 0 };
      out[n++] = (EpilogueOp) { "metric_barrier", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_REDUCE, fp32, 0, 1,
                                FALSE, TRUE, 3 };
      out[n++] = (EpilogueOp) { "metric_allgather", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_GATHER, fp32,
                                2 * n_ranks, 2, FALSE, FALSE, 3 };
      out[n++] = (EpilogueOp) { "speed_allreduce", EPILOGUE_AFTER_OPTIMIZER,
                                GROUP_WORLD, COLL_ALL_REDUCE, fp32, 0, 2,
                                FALSE, TRUE, 0 };
    }
  /* FP8's delayed scaling: before each update of the scaling factors
   * (sim-fp8.c), as a chunk's forward and its backward end, TE all-
   * reduces (MAX) the concatenated amaxes over the fp8_group its autocast
   * was given, synchronously (reduce_tensor_across_group_op_max:
   * async_op=False; quantization.py reduce_and_update_fp8_tensors at
   * TE d0067d0d, fp8.py global_amax_reduction at v0.10), where the group
   * has more than one rank. Megatron-Core gives its amax reduction group,
   * a stage's tp x cp x dp ranks (fp8_utils.py get_fp8_context,
   * parallel_state.py get_amax_reduction_group with_context_parallel,
   * tp_only_amax_red off by default: NVIDIA/Megatron-LM d98e8a64);
   * Composer's amp_fp8 gives none, so the world (composer/core/
   * precision.py get_precision_context, v0.16.4), which is FSDP's one
   * stage. */
  int layers = plan_chunk_layers (p, stage);
  if (p->tp * p->dp > 1 && fp8_amax_bytes (&sim->ls, layers, FALSE) > 0)
    for (int back = 0; back < 2; back++)
      out[n++] = (EpilogueOp) { back ? "amax_allreduce_bwd" : "amax_allreduce",
                                back ? EPILOGUE_FP8_BACKWARD
                                     : EPILOGUE_FP8_FORWARD,
                                GROUP_STAGE, COLL_ALL_REDUCE,
                                fp8_amax_bytes (&sim->ls, layers, back),
                                0, 1, FALSE, FALSE };
  g_assert (n <= EPILOGUE_MAX);
  return n;
}
