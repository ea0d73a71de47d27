/* framework.h: what each training framework can run and how it runs it
 * (the experiment's `framework:` key).
 *
 * A profile is one framework over a range of versions in which the
 * behaviours trainsim models stay the same. It says what the framework
 * can run (plan.c refuses the rest, citing the rule and where the
 * framework's code says so) and how it communicates and accumulates
 * gradients (defaults for the parallel keys a file does not set, and
 * switches the step builder reads). Every value names its source beside
 * it in framework.c. */
#pragma once

#include "config/spec.h"

typedef enum {
  FRAMEWORK_MEGATRON_LM,
  FRAMEWORK_MEGATRON_DEEPSPEED,
  FRAMEWORK_DEEPSPEED,
  FRAMEWORK_PYTORCH_FSDP,
  FRAMEWORK_N
} FrameworkId;

/* A rule a framework's code enforces or lacks the code for: ALLOWED says
 * whether it runs the thing, WHY cites where its code says so. */
typedef struct {
  gboolean allowed;
  const char *why;
} FrameworkRule;

/* The gradient bucket a framework reduces by default: one per module (as
 * FSDP reduces each unit's gradients), PyTorch DDP's bytes, or
 * DeepSpeed's elements (the ledger's rows, framework.c). */
typedef enum {
  BUCKET_PER_MODULE,
  BUCKET_TORCH_DDP,
  BUCKET_DEEPSPEED,
} FrameworkBucket;

/* How a step ends after its last backward: the collectives and reads
 * back that the framework's code runs around the optimizer (sim-build.c,
 * emit_epilogue, cites them). */
typedef enum {
  EPILOGUE_NONE,            /* none modelled: the reduction and the
                             * optimizer only (DeepSpeed's engine
                             * without its pipeline) */
  EPILOGUE_MEGATRON,        /* Megatron-LM's train_step */
  EPILOGUE_DEEPSPEED_PIPE,  /* DeepSpeed's PipelineEngine.train_batch */
  EPILOGUE_COMPOSER,        /* MosaicML Composer's Trainer around FSDP,
                             * as llm-foundry runs it */
} FrameworkEpilogue;

struct FrameworkProfile {
  FrameworkId id;
  const char *name;          /* as written in `framework:` */
  const char *version;       /* the first version this profile holds for */
  int since[3];              /* that version, as numbers */
  const char *what;          /* "Megatron-LM v2.x (2021)", for messages */

  /* What it runs. */
  int max_tp;                /* 0: any tensor-parallel size */
  const char *tp_why;
  FrameworkRule pipeline, interleaved, sequence_parallel, selective_recompute;
  int max_zero;              /* highest ZeRO stage (0..3) */
  int max_zero_with_pp;      /* highest with pipeline parallelism */
  const char *zero_why, *zero_pp_why;
  gboolean zero1;            /* FSDP has stages 0, 2 and 3 but no 1 */
  FrameworkRule offload;
  /* Mixtures of experts (model.experts) with expert parallelism, and
   * tensor parallelism inside an expert of its own size (parallel.etp
   * other than 1 and tp): where its code says so. deepspeed_moe: its
   * groups are DeepSpeed-MoE's, expert-parallel groups carved out of the
   * data-parallel ranks (ep divides dp) and etp 1 unless given; else
   * Megatron-Core's, whose expert groups partition a stage's tp x dp
   * ranks (etp x ep divides it) and whose etp defaults to tp. */
  FrameworkRule moe, expert_tp;
  /* parallel.param_gather_overlap: Megatron-Core's; unset (no why) where
   * the framework has no such flag. */
  FrameworkRule param_gather_overlap;
  /* parallel.moe_shared_expert_overlap: Megatron-Core's; unset (no why)
   * where the framework has no such flag. */
  FrameworkRule moe_shared_expert_overlap;
  /* parallel.tp_comm_overlap: Megatron-Core's; unset (no why) where the
   * framework has no such flag. */
  FrameworkRule tp_comm_overlap;
  gboolean deepspeed_moe;
  /* Set where offload moves the parameters with the optimizer or not at
   * all (zero.offload optimizer+params only): why. */
  const char *offload_whole;

  /* How it runs it: defaults for parallel keys a file leaves out. */
  gboolean tp_overlap;                 /* parallel.tp_overlap */
  GradAccumulation grad_acc_fp16;      /* parallel.grad_accumulation, fp16/fp32 */
  GradAccumulation grad_acc_bf16;      /* the same in bf16 */
  /* TRUE where the framework accumulates the gradients into a main_grad
   * buffer of the reduction's precision, which it reduces, which bf16
   * runs keep in fp32 (parallel.grad_reduce_precision), and which in 16
   * bits the optimizer copies to fp32 for its step (Megatron-LM; plan.c
   * plan_memory counts it); FALSE where bf16 runs reduce in bf16 and
   * the gradients are held in the run's precision. */
  gboolean main_grad_buffer;
  gboolean dp_overlap;                 /* parallel.gradient_bucketing */
  /* parallel.bucket_size's default (framework_bucket_bytes). */
  FrameworkBucket bucket;
  /* And what the step builder does. */
  gboolean zero2_every_micro_batch;    /* ZeRO-2 reduces every micro-batch */
  gboolean zero3_per_tensor;           /* ZeRO-3 gathers tensor by tensor,
                                        * synchronizing (DeepSpeed 0.3.x) */
  gboolean zero_allreduce;             /* ZeRO-2 and 3 all-reduce the
                                        * gradients and keep their partition
                                        * (DeepSpeed 0.3.x-0.4.x defaults) */
  gboolean deepspeed_pipe_syncs;       /* the host waits for the device
                                        * where DeepSpeed's pipeline engine
                                        * reads it back, not at every
                                        * chunk (sim-build.c, emit_chunk) */
  gboolean layer_sync;                 /* a layer's forward waits for the
                                        * device before its MLP (blocking
                                        * copies: Megatron-DeepSpeed) */
  gboolean loss_item_sync;             /* and before the last stage's
                                        * backward, to read the loss
                                        * (DeepSpeed 0.9.3-0.13.2) */
  gboolean tied_hp_grad;               /* the pipeline all-reduces the tied
                                        * embedding's fp32 gradient in bf16
                                        * (DeepSpeed 0.7 on) */
  FrameworkEpilogue epilogue;          /* how its steps end
                                        * (framework_epilogue) */
  /* It checkpoints layers with DeepSpeed's CheckpointFunction, whose
   * options training.activation_checkpointing gives; before 0.5.2 its
   * cpu_checkpointing needs partition_activations (plan.c). */
  gboolean deepspeed_checkpointing;
  gboolean cpu_checkpointing_partitioned;
  CrossEntropy cross_entropy;          /* the loss over the logits */
  /* The longest key sequence its attention's fused softmax kernel takes
   * (Megatron's FusedScaleMaskSoftmax); beyond it, or always when 0,
   * unfused attention runs PyTorch's softmax in fp32. */
  int fused_softmax_keys;
  /* Its attention is MPT's code (transformer.c): unfused, its PyTorch
   * softmax (push_softmax) rather than Megatron's; with flash-attn's CUDA
   * kernels, the unpadding around them (push_mpt_unpad). */
  gboolean mpt_attention;
  /* training.attention's default on a Hopper device: the kernel its
   * default layers pick there (unfused, the enum's first, elsewhere and
   * on older GPUs). */
  Attention hopper_attention;
  /* Cross entropies over the logits its trainer's metrics add each
   * micro-batch (transformer.c transformer_head_forward). */
  int train_metrics;
  /* Its models take the vocabulary as configured, where Megatron's pad it
   * to a multiple of 128 x tp (model.vocab_divisible_by left out). */
  gboolean vocab_as_given;
  const char *source;                  /* the code and docs it is read from */
};

/* The profile of "NAME" or "NAME@VERSION" (such as deepspeed@0.3.16): the
 * newest of NAME's profiles that VERSION reaches, the newest of all
 * without a version. NULL with *WHY (owned) saying what is valid. */
const FrameworkProfile *framework_parse (const char *text, char **why);

/* The default: today's Megatron-LM. */
const FrameworkProfile *framework_default (void);

/* "deepspeed@0.3": the profile's name and first version. Owned. */
char *framework_label (const FrameworkProfile *f);

/* Every profile, in order; *N gets the count. */
const FrameworkProfile *framework_profiles (int *n);

/* Whether unfused causal self-attention over KEYS keys, ATTN_BATCHES
 * (micro-batch x heads on the rank) score matrices in PRECISION, runs the
 * framework's fused softmax kernel (fused_softmax_keys and the kernel's
 * other conditions). */
gboolean framework_fused_softmax (const FrameworkProfile *f,
                                  Precision precision, int64_t attn_batches,
                                  int64_t keys);

/* The precision the framework reduces a PRECISION run's gradients in
 * across data parallelism (main_grad_buffer). */
Precision framework_grad_reduce_precision (const FrameworkProfile *f,
                                           Precision precision);

/* The gradient accumulation the framework uses at PRECISION. */
GradAccumulation framework_grad_accumulation (const FrameworkProfile *f,
                                              Precision precision);

/* The epilogue F's step runs with PP stages and ZeRO stage ZERO: its
 * profile's, but DeepSpeed's PipelineEngine only where the framework runs
 * one (framework.c). */
FrameworkEpilogue framework_epilogue (const FrameworkProfile *f, int pp,
                                      int zero);

/* parallel.bucket_size's default under F, in bytes, for gradients
 * reduced in GRAD precision; 0: a bucket per module. */
double framework_bucket_bytes (const FrameworkProfile *f, Precision grad);
