/* framework.c: the framework profiles (framework.h), each read from the
 * framework's code at the versions named; the comments say where. */
#include "config/framework.h"
#include "base/ledger.h"

#include <string.h>

/* Megatron-LM v2.x, 2021 (NVIDIA/Megatron-LM v2.6, the code of Narayanan
 * et al. 2021): megatron/training.py train_step all-reduces the gradients
 * once forward_backward_func has run every micro-batch (the local DDP of
 * megatron/model/distributed.py, allreduce_gradients: no overlap with
 * backward); megatron/mpu/layers.py runs backward's tensor-parallel
 * all-reduce after the GEMMs; the DDP hook adds every gradient into a
 * main_grad on every micro-batch. In bf16 megatron/arguments.py forces
 * --accumulate-allreduce-grads-in-fp32, so main_grad and its all-reduce
 * are fp32 (distributed.py: torch.float, else the parameter's type, which
 * fp16 runs keep by default; trainsim costs the fp32 add in both, an
 * upper bound in fp16). megatron/model/fused_softmax.py runs its fused
 * softmax for 16 < keys <= 2048. Its step ends with the embedding's
 * all-reduce, optimizer.py's found-inf flag and clip_grads.py's norm over
 * the model-parallel group, and pretrain_gpt.py averages each
 * micro-batch's loss over data parallelism: EPILOGUE_MEGATRON, cited in
 * src/parallel/sim-build.c, sim_epilogue_ops (23.04 too). */
#define MEGATRON_V2 "NVIDIA/Megatron-LM v2.6: megatron/training.py, " \
  "megatron/model/distributed.py, megatron/mpu/layers.py, " \
  "megatron/model/fused_softmax.py"
/* Megatron-LM after v2.6 (2022 on): sequence parallelism and selective
 * recompute (Korthikanti et al. 2022, megatron/mpu/layers.py and
 * --recompute-granularity), the asynchronous tensor-parallel all-reduce
 * in backward (--async-tensor-model-parallel-allreduce, on by default),
 * gradient-accumulation fusion (83b1e42f, 2022-02-13) and the distributed
 * optimizer, which shards the optimizer state only
 * (megatron/optimizer/distrib_optimizer.py). bf16 gradients still
 * accumulate and reduce in fp32 (megatron/arguments.py at 23.04;
 * megatron/training/arguments.py at core_v0.12.0, unless
 * --grad-reduce-in-bf16). By default its gradient reduction runs after
 * the last backward, not under it: --DDP-impl defaults to local
 * (megatron/arguments.py at 23.04), whose reduce_model_grads train_step
 * calls once forward_backward_func is done (megatron/training.py,
 * optimizer/optimizer.py), and which bf16 requires; Megatron-core's
 * DistributedDataParallel overlaps backward bucket by bucket only with
 * --overlap-grad-reduce, off by default (store_true, core_r0.4.0 to
 * core_v0.12.0), as does --DDP-impl torch (PyTorch DDP, fp16 only):
 * parallel.gradient_bucketing: true states either.
 * Its fused softmax takes up to 4,096 keys: megatron/model/fused_softmax.py
 * from 7a77abd9 (2022-01-12), and megatron/core/fusions/fused_softmax.py
 * from its start (9dce1fdb, 2023-01-12) to this day (d98e8a64); the
 * megatron/model copy alone went to 16,384 (cd126362, 2023-07-18) before
 * its move out of the main namespace (38644dd7, 2024-03-26). Until
 * 6753e8bf (2023-05-05) the causal kernel itself asserted 2,048 keys, so
 * causal runs of 2,049-4,096 keys ran PyTorch's path then
 * (--no-masked-softmax-fusion); and since 94a3749f (2023-11-02) the
 * query-key layer scaling that put that path in fp32 is off by default.
 * trainsim takes 4,096 and fp32. */
#define MEGATRON_V3 "NVIDIA/Megatron-LM after v2.6: megatron/mpu/layers.py, " \
  "megatron/optimizer/distrib_optimizer.py, megatron/arguments.py, " \
  "megatron/core/fusions/fused_softmax.py"
/* DeepSpeed's engine (microsoft/DeepSpeed deepspeed/runtime/): the
 * PipelineEngine asserts zero_optimization_stage() < 2 (pipe/engine.py);
 * its TrainSchedule (pipe/schedule.py) runs one model chunk per stage;
 * without ZeRO-2 the gradients are reduced once, at the accumulation
 * boundary, after backward (engine.py allreduce_gradients; the pipeline's
 * ReduceGrads instruction); ZeRO-2 reduces each micro-batch's gradients
 * into their partitions from backward hooks (zero/stage_1_and_2.py,
 * reduce_ready_partitions_and_remove_grads), on the compute stream as
 * overlap_comm defaults to false (zero/config.py). Its reductions move
 * the engine's communication_data_type: the run's precision in fp16, and
 * in 16 bits from v0.6 to v0.8 (named fp16 for bf16 runs with ZeRO) and
 * in bf16 from v0.10 on (engine.py); v0.9 alone sent bf16 gradients in
 * fp32, as a config's communication_data_type may
 * (parallel.grad_reduce_precision). From v0.7 its pipeline all-reduces
 * the tied embedding's gradient as the bf16 optimizer's fp32 _hp_grad
 * (pipe/engine.py _exec_reduce_tied_grads). Its PipelineEngine ends each
 * step with ReduceTiedGrads, ReduceGrads and OptimizerStep (its
 * optimizer's overflow and norm checks) and _aggregate_total_loss
 * (pipe/schedule.py, pipe/engine.py): EPILOGUE_DEEPSPEED_PIPE, cited in
 * src/parallel/sim-build.c, sim_epilogue_ops. It has no tensor-parallel
 * layers of its own: a model brings them (Megatron's mpu). */
#define DEEPSPEED "microsoft/DeepSpeed: deepspeed/runtime/engine.py, " \
  "pipe/engine.py, pipe/schedule.py, zero/stage_1_and_2.py, zero/config.py"
/* DeepSpeed 0.3.x-0.4.x ZeRO-3 (zero/stage3.py, partition_parameters.py of
 * April 2021): one all-gather per parameter tensor, a device synchronize
 * before each and at each module, and a gather again for the recomputed
 * forward; PRs #1170, #1188 and #1453 (0.5) coalesced and overlapped them.
 * Under ZeRO-2 and 3 its gradients are all-reduced whole, each rank
 * keeping its partition: with contiguous_gradients off, the default until
 * 0.5 (zero/constants.py), reduce_ipg_grads (stage2.py, stage3.py) runs
 * buffered_reduce_fallback, whose allreduce_bucket all-reduces each
 * bucket flattened; with it on, average_tensor reduce-scatters only if
 * reduce_scatter is on, off by default in 0.3.x (v0.3.16
 * zero/constants.py; on from 0.4.0). Twice a reduce-scatter's bytes.
 * (ZeRO-1, stage1.py, reduce-scatters.) */
#define DEEPSPEED_03 "microsoft/DeepSpeed v0.3.16: deepspeed/runtime/zero/" \
  "stage3.py, partition_parameters.py; issue #1069, PRs #1170, #1188, #1453"
/* Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed f01c9e6e, 2023-06-30;
 * its train_step hands each batch to DeepSpeed's PipelineEngine, pp 1
 * included, unless --no-pipeline-parallel: megatron/training.py;
 * bigscience-workshop's fork does not hold that commit): the Megatron-LM
 * v2 model (megatron/mpu/layers.py: no sequence
 * parallelism; ColumnParallelLinear.forward runs F.linear after
 * copy_to_tensor_model_parallel_region, whose backward all-reduces after
 * the GEMMs; full recompute only)
 * under DeepSpeed's engine and pipeline; its BF16_Optimizer
 * (deepspeed/runtime/bf16_optimizer.py) adds each micro-batch's bf16
 * gradients into fp32 ones, its fp16 path leaves autograd to accumulate.
 * Its fused softmax (megatron/model/fused_softmax.py) takes up to 2,048
 * keys, as v2.6's. The DeepSpeed of its day (0.9.3 to 0.13.2) reads the
 * loss back in each DeepSpeedEngine.backward, which the pipeline runs
 * on the last stage (engine.py; pipe/engine.py _exec_backward_pass);
 * BLOOM's of 2022 (0.6) did not, a synchronize a micro-batch that GPU-
 * bound runs like BLOOM's do not feel. Since its MoE support (50b32515,
 * 2022-06-07) each ParallelTransformerLayer's forward makes two scalars
 * on the GPU before its MLP (megatron/model/transformer.py: moe_loss and
 * mlp_bias, torch.tensor (0.0, device=...)), each a copy from the host
 * that PyTorch completes before returning (non_blocking=False): the host
 * waits for the device there, in every forward and recomputed forward.
 * BLOOM's fork predates it; its runs, GPU-bound, move by 0.1 %. */
#define MEGATRON_DEEPSPEED "microsoft/Megatron-DeepSpeed f01c9e6e: " \
  "megatron/mpu/layers.py, megatron/arguments.py; " DEEPSPEED
/* PyTorch FSDP (torch.distributed.fsdp, 1.12 on, as llm-foundry ran it in
 * 2023): ShardingStrategy NO_SHARD, SHARD_GRAD_OP and FULL_SHARD are ZeRO
 * 0, 2 and 3; each backward reduce-scatters on its own stream from post-
 * backward hooks (outside no_sync, every micro-batch); CPUOffload(
 * offload_params=True) moves parameters, gradients and the optimizer step
 * to the host together; activation checkpointing wraps whole modules. It
 * shards over data parallelism only: no tensor or pipeline parallelism.
 * Its gradients reduce in MixedPrecision's reduce_dtype, the parameters'
 * precision unless set: Composer's mixed_precision PURE keeps bf16,
 * DEFAULT left it unset (bf16) until v0.16.4 set fp32 (d745fcb1b,
 * composer/trainer/mosaic_fsdp_utils.py get_mixed_precision):
 * parallel.grad_reduce_precision: fp32 states that.
 * The loss is llm-foundry's default, flash-attn's fused cross entropy
 * (CrossEntropy in spec.h); Megatron's code computes the others'. Its
 * unfused attention is MPT's (attn_impl: torch, llmfoundry/models/layers/
 * attention.py scaled_multihead_dot_product_attention, v0.3.0, under
 * autocast as llm-foundry's amp_bf16 runs it; mpt_attention, costed in
 * transformer.c push_softmax), with no fused kernel; with flash-attn's
 * CUDA kernels (attn_impl: flash) MPT unpads q, k and v and pads the
 * output back around each call (push_mpt_unpad). Composer's Trainer
 * updates MPT's two train metrics (LanguageCrossEntropy,
 * LanguagePerplexity: llmfoundry/models/mpt/modeling_mpt.py,
 * use_train_metrics on by default, v0.3.0 and 5e85bd62d) every
 * micro-batch, each a cross entropy over the logits: train_metrics. Its
 * models embed the vocabulary as configured (MPT: nn.Embedding
 * (config.vocab_size, ...), llmfoundry/models/mpt/modeling_mpt.py; its
 * yamls pad by hand, 50368), not padded as Megatron's. */
#define FSDP "pytorch/pytorch: torch/distributed/fsdp/api.py " \
  "(ShardingStrategy, CPUOffload), _runtime_utils.py (post-backward hooks)"

/* Gradient buckets (the ledger's rows): PyTorch DDP's bucket_cap_mb = 25
 * (MiB), TORCH_DDP_BUCKET_BYTES, which Megatron-LM's --DDP-impl torch
 * wraps; DeepSpeed's reduce_bucket_size default, 5e8 elements
 * (deepspeed/runtime/zero/config.py), DEEPSPEED_BUCKET_ELEMENTS. */
double
framework_bucket_bytes (const FrameworkProfile *f, Precision grad)
{
  switch (f->bucket)
    {
    case BUCKET_TORCH_DDP:
      return LEDGER (TORCH_DDP_BUCKET_BYTES);
    case BUCKET_DEEPSPEED:
      return LEDGER (DEEPSPEED_BUCKET_ELEMENTS) * spec_precision_bytes (grad);
    case BUCKET_PER_MODULE:
    default:
      return 0;
    }
}

/* DeepSpeed's activation checkpointing (microsoft/DeepSpeed deepspeed/
 * runtime/activation_checkpointing/checkpointing.py, CheckpointFunction,
 * v0.3.16 to v0.13.2): the frameworks built on its engine checkpoint each
 * layer through it (its PipelineModule's activation_checkpoint_func,
 * pipe/module.py; Megatron-DeepSpeed's mpu.checkpoint, set in
 * megatron/initialize.py at f01c9e6e), with the options its config or
 * configure() gives (training.activation_checkpointing). Until 0.5.2
 * (PR #1254) configure() asserts PARTITION_ACTIVATIONS for CPU
 * checkpointing as for contiguous checkpointing. */
#define NO(why) { FALSE, why }
#define YES { TRUE, NULL }

/* DeepSpeed-MoE (Rajbhandari et al. 2022; deepspeed/moe/layer.py MoE,
 * deepspeed/utils/groups.py _create_expert_and_data_parallel, v0.9.5):
 * experts split over expert-parallel groups carved out of the data-
 * parallel ranks, and with enable_expert_tensor_parallelism sliced over
 * the whole TP group (Megatron-DeepSpeed's --enable-expert-tensor-
 * parallelism), off by default. */
#define DEEPSPEED_MOE YES
#define DEEPSPEED_ETP NO ("DeepSpeed-MoE slices experts over the whole tensor-" \
                          "parallel group or not at all (deepspeed/moe/layer.py, " \
                          "enable_expert_tensor_parallelism, v0.9.5)")

/* What DeepSpeed runs, in every version modelled. */
#define DEEPSPEED_RULES \
    .max_tp = 1, \
    .tp_why = "DeepSpeed has no tensor-parallel layers of its own (a model " \
              "brings them: framework megatron-deepspeed)", \
    .pipeline = YES, \
    .interleaved = NO ("DeepSpeed's TrainSchedule runs one model chunk per " \
                       "stage (deepspeed/runtime/pipe/schedule.py)"), \
    .sequence_parallel = NO ("sequence parallelism is Megatron-LM's"), \
    .selective_recompute = NO ("DeepSpeed's activation checkpointing " \
                               "recomputes whole layers"), \
    .max_zero = 3, .max_zero_with_pp = 1, .zero1 = TRUE, \
    .zero_pp_why = "DeepSpeed's PipelineEngine asserts ZeRO stage < 2 " \
                   "(deepspeed/runtime/pipe/engine.py)", \
    .offload = YES, \
    .moe = DEEPSPEED_MOE, .expert_tp = DEEPSPEED_ETP, \
    .deepspeed_moe = TRUE, \
    .bucket = BUCKET_DEEPSPEED, .epilogue = EPILOGUE_DEEPSPEED_PIPE, \
    .deepspeed_checkpointing = TRUE, \
    .tp_overlap = FALSE, .grad_acc_fp16 = GRAD_ACC_AUTOGRAD, \
    .fused_softmax_keys = 2048   /* the Megatron model it runs, as v2.6 */

static const FrameworkProfile profiles[] = {
  {
    FRAMEWORK_MEGATRON_LM, "megatron-lm", "2", { 2, 0, 0 },
    "Megatron-LM v2.x, 2021",
    .max_tp = 0, .pipeline = YES, .interleaved = YES,
    .sequence_parallel = NO ("sequence parallelism came after v2.6, with "
                             "Korthikanti et al. 2022"),
    .selective_recompute = NO ("v2.6's --checkpoint-activations recomputes "
                               "whole layers (megatron/arguments.py)"),
    .max_zero = 0, .max_zero_with_pp = 0, .zero1 = FALSE,
    .zero_why = "v2.6 has no partitioned optimizer (megatron/optimizer/)",
    .offload = NO ("Megatron-LM has no CPU offload (DeepSpeed's ZeRO-Offload)"),
    .moe = NO ("v2.6 has no mixture-of-experts layer: it came with Megatron-"
               "Core's megatron/core/transformer/moe/ (core_r0.5.0, 2024)"),
    .expert_tp = NO ("v2.6 has no mixture-of-experts layer"),
    .tp_overlap = FALSE, .grad_acc_fp16 = GRAD_ACC_MAIN_GRAD,
    .grad_acc_bf16 = GRAD_ACC_MAIN_GRAD, .main_grad_buffer = TRUE,
    .dp_overlap = FALSE,
    .bucket = BUCKET_TORCH_DDP, .fused_softmax_keys = 2048,
    .epilogue = EPILOGUE_MEGATRON,
    .source = MEGATRON_V2,
  },
  {
    FRAMEWORK_MEGATRON_LM, "megatron-lm", "3", { 3, 0, 0 },
    "Megatron-LM after v2.6, 2022 on",
    .max_tp = 0, .pipeline = YES, .interleaved = YES,
    .sequence_parallel = YES, .selective_recompute = YES,
    .max_zero = 1, .max_zero_with_pp = 1, .zero1 = TRUE,
    .zero_why = "its distributed optimizer shards the optimizer state only "
                "(megatron/optimizer/distrib_optimizer.py): ZeRO-1",
    .offload = NO ("Megatron-LM has no CPU offload (DeepSpeed's ZeRO-Offload)"),
    /* Megatron-Core's MoE layer with its own expert groups
     * (megatron/core/parallel_state.py, initialize_model_parallel's
     * expert_tensor_parallel_size and expert_model_parallel_size,
     * core_r0.10.0). */
    .moe = YES, .expert_tp = YES,
    /* --overlap-param-gather (megatron/training/arguments.py, core_r0.8.0). */
    .param_gather_overlap = YES,
    /* --moe-shared-expert-overlap (megatron/training/arguments.py,
     * core_r0.10.0; not in core_r0.9.0). */
    .moe_shared_expert_overlap = YES,
    /* --tp-comm-overlap (megatron/training/arguments.py, core_r0.10.0 and
     * core_v0.12.0: it asserts sequence parallelism). */
    .tp_comm_overlap = YES,
    .tp_overlap = TRUE, .grad_acc_fp16 = GRAD_ACC_FUSED,
    .grad_acc_bf16 = GRAD_ACC_FUSED, .main_grad_buffer = TRUE,
    .dp_overlap = FALSE,
    .bucket = BUCKET_TORCH_DDP, .fused_softmax_keys = 4096,
    .epilogue = EPILOGUE_MEGATRON,
    /* Its layers are TransformerEngine's by default (--transformer-impl
     * transformer_engine, megatron/training/arguments.py, core_r0.8.0 to
     * core_v0.14.0; --attention-backend auto from core_v0.10.0), and TE
     * gives cuDNN's fused attention preference on Hopper
     * (transformer_engine/pytorch/attention.py get_attention_backend,
     * v1.11: "Disabling FlashAttention to give FusedAttention preference
     * on Hopper+"). Hopper came after Megatron-LM v3.0 (2022), whose own
     * layers ran the unfused path that A100 runs keep. */
    .hopper_attention = ATTENTION_CUDNN,
    .source = MEGATRON_V3,
  },
  {
    FRAMEWORK_MEGATRON_DEEPSPEED, "megatron-deepspeed", "0", { 0, 0, 0 },
    "Megatron-DeepSpeed",
    .max_tp = 0, .pipeline = YES,
    .interleaved = NO ("DeepSpeed's TrainSchedule runs one model chunk per "
                       "stage (deepspeed/runtime/pipe/schedule.py)"),
    .sequence_parallel = NO ("its Megatron-LM v2 layers have no sequence "
                             "parallelism (megatron/mpu/layers.py)"),
    .selective_recompute = NO ("its --checkpoint-activations recomputes whole "
                               "layers (megatron/arguments.py)"),
    .max_zero = 3, .max_zero_with_pp = 1, .zero1 = TRUE,
    .zero_pp_why = "DeepSpeed's PipelineEngine asserts ZeRO stage < 2 "
                   "(deepspeed/runtime/pipe/engine.py)",
    .offload = YES, .bucket = BUCKET_DEEPSPEED,
    .moe = DEEPSPEED_MOE, .expert_tp = DEEPSPEED_ETP,
    .deepspeed_moe = TRUE,
    .tp_overlap = FALSE, .grad_acc_fp16 = GRAD_ACC_AUTOGRAD,
    .grad_acc_bf16 = GRAD_ACC_MAIN_GRAD, .dp_overlap = FALSE,
    .zero2_every_micro_batch = TRUE, .tied_hp_grad = TRUE,
    .deepspeed_pipe_syncs = TRUE, .loss_item_sync = TRUE,
    .layer_sync = TRUE, .epilogue = EPILOGUE_DEEPSPEED_PIPE,
    .deepspeed_checkpointing = TRUE,
    .fused_softmax_keys = 2048,
    .source = MEGATRON_DEEPSPEED,
  },
  {
    FRAMEWORK_DEEPSPEED, "deepspeed", "0.3", { 0, 3, 0 },
    "DeepSpeed 0.3.x-0.4.x, 2021",
    DEEPSPEED_RULES,
    .grad_acc_bf16 = GRAD_ACC_AUTOGRAD, .dp_overlap = FALSE,
    .zero2_every_micro_batch = TRUE, .zero3_per_tensor = TRUE,
    .zero_allreduce = TRUE, .cpu_checkpointing_partitioned = TRUE,
    .source = DEEPSPEED_03 "; " DEEPSPEED,
  },
  {
    FRAMEWORK_DEEPSPEED, "deepspeed", "0.5", { 0, 5, 0 },
    "DeepSpeed 0.5 on",
    DEEPSPEED_RULES,
    .grad_acc_bf16 = GRAD_ACC_MAIN_GRAD, .dp_overlap = FALSE,
    .zero2_every_micro_batch = TRUE, .tied_hp_grad = TRUE,
    .source = DEEPSPEED,
  },
  {
    FRAMEWORK_PYTORCH_FSDP, "pytorch-fsdp", "1.12", { 1, 12, 0 },
    "PyTorch FSDP",
    .max_tp = 1,
    .tp_why = "FSDP shards over data parallelism only",
    .pipeline = NO ("FSDP has no pipeline schedule"),
    .interleaved = NO ("FSDP has no pipeline schedule"),
    .sequence_parallel = NO ("sequence parallelism is Megatron-LM's"),
    .selective_recompute = NO ("FSDP's activation checkpointing wraps whole "
                               "modules"),
    .max_zero = 3, .max_zero_with_pp = 3, .zero1 = FALSE,
    .zero_why = "its ShardingStrategy NO_SHARD, SHARD_GRAD_OP and FULL_SHARD "
                "are ZeRO 0, 2 and 3: it cannot shard the optimizer alone",
    .offload = YES,
    .moe = NO ("FSDP has no expert-parallel layer"),
    .expert_tp = NO ("FSDP has no expert-parallel layer"),
    .offload_whole = "CPUOffload(offload_params=True) moves parameters, "
                     "gradients and the optimizer step to the host together",
    .tp_overlap = TRUE, .grad_acc_fp16 = GRAD_ACC_AUTOGRAD,
    .grad_acc_bf16 = GRAD_ACC_AUTOGRAD, .dp_overlap = TRUE,
    .zero2_every_micro_batch = TRUE,
    .cross_entropy = CROSS_ENTROPY_FUSED, .mpt_attention = TRUE,
    .vocab_as_given = TRUE, .epilogue = EPILOGUE_COMPOSER,
    .train_metrics = 2,
    .source = FSDP,
  },
};

const FrameworkProfile *
framework_profiles (int *n)
{
  *n = G_N_ELEMENTS (profiles);
  return profiles;
}

const FrameworkProfile *
framework_default (void)
{
  return &profiles[1];
}

char *
framework_label (const FrameworkProfile *f)
{
  return g_strdup_printf ("%s@%s", f->name, f->version);
}

/* FusedScaleMaskSoftmax.is_kernel_available (megatron/model/fused_softmax.py,
 * Megatron-LM v2.6; the same in megatron/core/fusions): 16-bit input,
 * 16 < keys <= the framework's limit, queries a multiple of 4, and for a
 * causal mask the score matrices a multiple of the kernel's batches per
 * 128-thread block (get_batch_per_block, megatron/fused_kernels/
 * scaled_masked_softmax.h: a warp of min(32, next power of two of keys)
 * threads handles 2 rows up to 128 keys, 1 beyond). Megatron-DeepSpeed
 * f01c9e6e asks for a multiple of 4, the same beyond 128 keys. */
gboolean
framework_fused_softmax (const FrameworkProfile *f, Precision precision,
                         int64_t attn_batches, int64_t keys)
{
  if ((precision != PRECISION_FP16 && precision != PRECISION_BF16)
      || keys <= 16 || keys > f->fused_softmax_keys || keys % 4 != 0)
    return FALSE;
  int64_t pow2 = 1;
  while (pow2 < keys)
    pow2 *= 2;
  int64_t warp = MIN (pow2, 32);
  int64_t per_block = 128 / warp * (pow2 <= 128 ? 2 : 1);
  return attn_batches % per_block == 0;
}

/* Megatron-DeepSpeed hands every step to DeepSpeed's PipelineEngine, pp 1
 * included, unless --no-pipeline-parallel, which ZeRO 2-3 need: the engine
 * asserts a stage below 2 (f01c9e6e megatron/training.py train_step:
 * args.ds_pipeline_enabled; pretrain_gpt.py builds GPTModelPipe unless
 * args.no_pipeline_parallel). DeepSpeed alone runs it for a
 * PipelineModule, which a model is cut into for pp > 1; at pp 1 it is
 * DeepSpeedEngine, whose step trainsim ends at the optimizer. */
FrameworkEpilogue
framework_epilogue (const FrameworkProfile *f, int pp, int zero)
{
  if (f->epilogue == EPILOGUE_DEEPSPEED_PIPE
      && (zero >= 2 || (f->id == FRAMEWORK_DEEPSPEED && pp == 1)))
    return EPILOGUE_NONE;
  return f->epilogue;
}

Precision
framework_grad_reduce_precision (const FrameworkProfile *f, Precision precision)
{
  return precision == PRECISION_BF16 && f->main_grad_buffer ? PRECISION_FP32
                                                           : precision;
}

GradAccumulation
framework_grad_accumulation (const FrameworkProfile *f, Precision precision)
{
  return precision == PRECISION_BF16 ? f->grad_acc_bf16 : f->grad_acc_fp16;
}

/* "1", "0.3" or "2.6.1" as three numbers; FALSE for anything else. */
static gboolean
parse_version (const char *text, int v[3])
{
  g_auto (GStrv) parts = g_strsplit (text, ".", -1);
  int n = (int) g_strv_length (parts);
  if (n < 1 || n > 3)
    return FALSE;
  v[0] = v[1] = v[2] = 0;
  for (int i = 0; i < n; i++)
    {
      guint64 x;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, 100000, &x, NULL))
        return FALSE;
      v[i] = (int) x;
    }
  return TRUE;
}

static int
compare_versions (const int a[3], const int b[3])
{
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* "megatron-lm@2, megatron-lm@3, ..." */
static char *
valid_list (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (profiles); i++)
    g_string_append_printf (s, "%s%s@%s", i ? ", " : "", profiles[i].name,
                            profiles[i].version);
  return g_string_free (s, FALSE);
}

const FrameworkProfile *
framework_parse (const char *text, char **why)
{
  const char *at = strchr (text, '@');
  g_autofree char *name = at ? g_strndup (text, (gsize) (at - text))
                             : g_strdup (text);
  g_autofree char *valid = valid_list ();
  const FrameworkProfile *best = NULL, *first = NULL;
  int version[3] = { G_MAXINT, G_MAXINT, G_MAXINT };

  if (at && !parse_version (at + 1, version))
    {
      *why = g_strdup_printf ("version '%s' is not a version such as 0.3 or "
                              "2.6.1; valid frameworks: %s (a version picks "
                              "the newest profile it reaches)", at + 1, valid);
      return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (profiles); i++)
    {
      const FrameworkProfile *f = &profiles[i];
      if (strcmp (f->name, name) != 0)
        continue;
      if (first == NULL)
        first = f;
      if (compare_versions (f->since, version) <= 0)
        best = f;
    }
  if (first == NULL)
    *why = g_strdup_printf ("unknown framework '%s'; valid: megatron-lm, "
                            "megatron-deepspeed, deepspeed or pytorch-fsdp, "
                            "each optionally @VERSION (profiles: %s)", name,
                            valid);
  else if (best == NULL)
    *why = g_strdup_printf ("%s before %s is not modelled; the earliest "
                            "profile is %s@%s", name, first->version, name,
                            first->version);
  return best;
}
