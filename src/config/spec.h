/* spec.h: the typed form of every input file (schema_version 1).
 *
 * The loader (config.h) turns YAML into these structs; nothing below the
 * loader looks up a string key. All quantities are in SI base units:
 * bytes, bytes per second, seconds, FLOP per second. A field that the user
 * may leave out and that has no fixed default holds a sentinel noted
 * beside it (SPEC_UNSET for doubles, 0 for counts that must be positive). */
#pragma once

#include <glib.h>
#include "base/ledger.h"

#define SPEC_UNSET (-1.0)

/* --- enumerations, each with a name table in spec.c ------------------ */

typedef enum {
  PRECISION_FP32,
  PRECISION_TF32,
  PRECISION_FP16,
  PRECISION_BF16,
  PRECISION_FP8,   /* training.precision: fp8 (graph/fp8.h): bf16 mixed
                    * precision with the linear layers' GEMMs in fp8; the
                    * loader keeps bf16 in `precision` and sets
                    * TrainingSpec.fp8 */
  PRECISION_N
} Precision;

/* Bytes an element of that precision takes in memory: 2 for fp16 and
 * bf16, 4 for fp32 and tf32 (whose tensors are stored in fp32), 1 for
 * fp8. */
int spec_precision_bytes (Precision p);

typedef enum {
  RECOMPUTE_NONE,
  RECOMPUTE_SELECTIVE,
  RECOMPUTE_FULL,
  RECOMPUTE_N
} Recompute;

typedef enum {
  SCHEDULE_GPIPE,
  SCHEDULE_1F1B,
  SCHEDULE_INTERLEAVED,
  SCHEDULE_N
} Schedule;

/* How context parallelism splits attention (parallel.cp_kind, graph/cp.h):
 * p2p, Megatron-Core's default cp_comm_type (TransformerEngine's ring
 * attention, AttnFuncWithCPAndKVP2P), or ulysses (DeepSpeed-Ulysses:
 * all-to-alls over the heads around attention). */
typedef enum {
  CP_P2P,
  CP_ULYSSES,
  CP_KIND_N
} CpKind;

typedef enum {
  OFFLOAD_NONE,
  OFFLOAD_OPTIMIZER,
  OFFLOAD_OPTIMIZER_PARAMS,
  OFFLOAD_N
} Offload;

typedef enum {
  LINK_NVSWITCH,
  LINK_NVLINK,
  LINK_PCIE,
  LINK_INFINIBAND_HDR,
  LINK_INFINIBAND_NDR,
  LINK_SLINGSHOT_11,
  LINK_ROCE,
  LINK_OMNI_PATH,
  LINK_N
} LinkKind;

typedef enum {
  MLP_GELU,           /* GPT: FC1, GeLU, FC2 */
  MLP_SWIGLU,         /* LLaMA: a gated FC1 of twice the width, SwiGLU, FC2 */
  MLP_N
} MlpKind;

/* Where a model's positions come from (model.position_embedding): a
 * learned table added to the word embeddings (GPT-2 and GPT-3; Megatron's
 * learned_absolute), rotary embeddings applied to queries and keys in
 * every layer (RoPE, Su et al. 2021: LLaMA, Mixtral, Qwen), or ALiBi's
 * biases on the attention scores (Press et al. 2022: BLOOM, MPT). Only
 * the learned kind holds parameters (a table of seq_len x hidden). */
typedef enum {
  POSITION_LEARNED,
  POSITION_ROTARY,
  POSITION_ALIBI,
  POSITION_N
} PositionKind;

/* How a mixture-of-experts layer's router scores its experts
 * (model.router): a softmax over the experts' logits then the top k
 * (Mixtral, Jiang et al. 2024; Megatron-Core's --moe-router-score-function
 * softmax), or a sigmoid of each logit then the top k, renormalised
 * (DeepSeek-V3, DeepSeek-AI 2024, section 2.1.2; score-function sigmoid). */
typedef enum {
  ROUTER_SOFTMAX,
  ROUTER_SIGMOID,
  ROUTER_N
} RouterKind;

/* How TransformerEngine scales an FP8 tensor (graph/fp8.h): from the amax
 * history of earlier steps (DelayedScaling, its default recipe) or from
 * the tensor's own amax, reduced just before its cast (Float8CurrentScaling). */
typedef enum {
  FP8_RECIPE_DELAYED,
  FP8_RECIPE_CURRENT,
  FP8_RECIPE_N
} Fp8Recipe;

typedef enum {
  FABRIC_FAT_TREE,
  FABRIC_DRAGONFLY,
  FABRIC_N
} FabricKind;

/* Where the job's nodes sit on the fabric (inter_node.fabric.placement):
 * packed fills one leaf switch or dragonfly group after another; spread
 * deals them round robin over the fabric's groups, as a scheduler on a
 * busy machine may, so that neighbouring nodes sit in different groups. */
typedef enum {
  PLACEMENT_PACKED,
  PLACEMENT_SPREAD,
  PLACEMENT_N
} Placement;

/* How other jobs' traffic on the fabric varies (fabric.background.pattern):
 * steady at its load, or in seeded on/off bursts of the same mean. */
typedef enum {
  BACKGROUND_STEADY,
  BACKGROUND_BURSTY,
  BACKGROUND_N
} BackgroundPattern;

/* A GPU's generation: which kernel measurements (GEMM and fused
 * attention, hw/device.c) price its kernels. */
typedef enum {
  GENERATION_AMPERE,   /* A100: the default */
  GENERATION_HOPPER,   /* H100, H200 */
  GENERATION_N
} Generation;

/* How a GPU's collective traffic reaches the NICs: over NVLink to any NIC
 * of the node (NCCL's PXN, and rings whose channels leave by every NIC), or
 * over PCIe to its own NIC only. */
typedef enum {
  NIC_PATH_NVLINK,
  NIC_PATH_PCIE,
  NIC_PATH_N
} NicPath;

/* The collective algorithm: auto lets the NCCL-like tuner of net/ pick per
 * message size and scale, as NCCL does unless NCCL_ALGO is set. */
/* The attention kernel (training.attention): Megatron's unfused path
 * (batched GEMMs around a fused scale-mask-softmax and dropout), or one
 * fused FlashAttention kernel: v1 (CUDA), v1 in Triton, or v2; on Hopper
 * also v3 and cuDNN's (TransformerEngine's FusedAttention, which TE picks
 * on Hopper: hw/device.c). */
typedef enum {
  ATTENTION_UNFUSED,
  ATTENTION_FLASH1,
  ATTENTION_FLASH1_TRITON,
  ATTENTION_FLASH2,
  ATTENTION_FLASH3,
  ATTENTION_CUDNN,
  ATTENTION_N
} Attention;

/* How the framework adds each micro-batch's gradients into the step's
 * (parallel.grad_accumulation), with ZeRO 0-1 where every rank holds them
 * whole:
 * - fused: Megatron-LM since 2022 (--gradient-accumulation-fusion, on by
 *   default since NVIDIA/Megatron-LM 83b1e42f, 2022-02-13): the weight-
 *   gradient GEMM accumulates into the fp32 main_grad itself; a hook adds
 *   the biases' and layer norms' gradients, on every micro-batch;
 * - main-grad: Megatron-LM of 2021 (v2.6, megatron/model/distributed.py,
 *   local DDP's param hook): main_grad.add_(grad) for every parameter
 *   tensor, in fp32, on every micro-batch;
 * - autograd: DeepSpeed's engine and Megatron-DeepSpeed (f01c9e6e has no
 *   main_grad path under DeepSpeed): autograd's AccumulateGrad adds into
 *   .grad, in the run's precision, on every micro-batch but the first. */
typedef enum {
  GRAD_ACC_FUSED,
  GRAD_ACC_MAIN_GRAD,
  GRAD_ACC_AUTOGRAD,
  GRAD_ACC_N
} GradAccumulation;

/* How the framework computes the loss over the logits (FrameworkProfile):
 * - vocab-parallel: Megatron's vocab-parallel cross entropy
 *   (megatron/mpu/cross_entropy.py, Megatron-LM v2.6 and Megatron-DeepSpeed
 *   f01c9e6e) on an fp32 copy of the logits (gpt_model.py: output.float(),
 *   or GPTModelPipe's float16_to_fp32), in place pass by pass;
 * - fused: one kernel over the logits in their own precision, flash-attn's
 *   CrossEntropyLoss (flash_attn/losses/cross_entropy.py, the xentropy
 *   kernel of csrc/xentropy, v1.0.4), llm-foundry's default loss_fn
 *   fused_crossentropy (llmfoundry/models/mpt/modeling_mpt.py, v0.3.0). */
typedef enum {
  CROSS_ENTROPY_VOCAB_PARALLEL,
  CROSS_ENTROPY_FUSED,
  CROSS_ENTROPY_N
} CrossEntropy;

typedef enum {
  ALGORITHM_AUTO,
  ALGORITHM_RING,
  ALGORITHM_TREE,
  ALGORITHM_HIERARCHICAL,
  ALGORITHM_NVLS,
  ALGORITHM_NVLS_TREE,
  ALGORITHM_COLLNET_DIRECT,
  ALGORITHM_COLLNET_CHAIN,
  ALGORITHM_N
} AlgorithmChoice;

/* The collectives the network model costs, by nccl-tests' names
 * (all_reduce, reduce_scatter, all_gather, alltoall, sendrecv). */
typedef enum {
  COLL_ALL_REDUCE,
  COLL_REDUCE_SCATTER,
  COLL_ALL_GATHER,
  COLL_ALL_TO_ALL,
  COLL_SEND,          /* point-to-point, one rank to one rank */
  COLL_N
} CollKind;

/* What a validation file measured: training runs, collectives alone
 * (nccl-tests-like runs of one collective on a topology), matrix
 * multiplications alone (one GEMM on one device), or a transformer's MLP
 * block alone (its forward on one device). */
typedef enum {
  VALIDATION_TRAINING,
  VALIDATION_COLLECTIVES,
  VALIDATION_GEMM,
  VALIDATION_MLP,
  VALIDATION_KIND_N
} ValidationKind;

/* What a validation file is for: constants were fitted to a calibration
 * file; a validation file was never used to fit anything, so only it shows
 * how well the model predicts. */
typedef enum {
  ROLE_CALIBRATION,
  ROLE_VALIDATION,
  ROLE_N
} ValidationRole;

/* Which FLOPs a measured tflops_per_gpu counts, i.e. which of trainsim's
 * TFLOP/s (result.h) it is compared with: Narayanan 2021 eq. 3 (what
 * Megatron and DeepSpeed print), the model's FLOPs, or those executed. */
typedef enum {
  FLOPS_MEGATRON,
  FLOPS_MODEL,
  FLOPS_HARDWARE,
  FLOPS_N
} FlopsConvention;

/* Name tables: spec_enum_name (SPEC_ENUM_PRECISION, PRECISION_BF16) gives
 * "bf16"; spec_enum_parse gives -1 for an unknown name. The names are the
 * words users write in YAML. */
typedef enum {
  SPEC_ENUM_PRECISION,
  SPEC_ENUM_RECOMPUTE,
  SPEC_ENUM_SCHEDULE,
  SPEC_ENUM_OFFLOAD,
  SPEC_ENUM_LINK,
  SPEC_ENUM_FABRIC,
  SPEC_ENUM_MLP,
  SPEC_ENUM_NIC_PATH,
  SPEC_ENUM_ALGORITHM,
  SPEC_ENUM_ATTENTION,
  SPEC_ENUM_ROLE,
  SPEC_ENUM_FLOPS,
  SPEC_ENUM_GRAD_ACCUMULATION,
  SPEC_ENUM_COLLECTIVE,
  SPEC_ENUM_VALIDATION_KIND,
  SPEC_ENUM_PLACEMENT,
  SPEC_ENUM_BACKGROUND,
  SPEC_ENUM_GENERATION,
  SPEC_ENUM_ROUTER,
  SPEC_ENUM_FP8_RECIPE,
  SPEC_ENUM_CP_KIND,
  SPEC_ENUM_POSITION,
} SpecEnum;

const char *spec_enum_name (SpecEnum e, int value);
int spec_enum_parse (SpecEnum e, const char *name);
/* The number of values of E (PRECISION_N for SPEC_ENUM_PRECISION, ...). */
int spec_enum_count (SpecEnum e);
/* "a, b or c": the valid names, for error messages. Owned by the caller. */
char *spec_enum_list (SpecEnum e);

/* --- model ------------------------------------------------------------ */

typedef struct {
  char *name;          /* owned; may be NULL for an anonymous inline model */
  int layers;
  int hidden;
  int heads;
  int kv_heads;        /* default: heads */
  int ffn_hidden;      /* default: 4 * hidden */
  int vocab;
  int seq_len;
  MlpKind mlp;         /* default: gelu */
  gboolean dropout;    /* hidden and attention dropout on (default) or off */
  int vocab_divisible_by; /* Megatron's --make-vocab-size-divisible-by:
                           * the vocabulary is padded to a multiple of it
                           * times tp; 0 (auto): the framework's, 128 or 1
                           * (config_framework_defaults, config-experiment.c) */
  /* A mixture of experts (Shazeer et al. 2017; Megatron-Core's MoE layer,
   * megatron/core/transformer/moe/, core_r0.10.0): 0 experts is a dense
   * model, and then none of the keys below is used. */
  int experts;         /* routed experts of an MoE layer */
  int top_k;           /* experts each token goes to; default 2 */
  int moe_ffn_hidden;  /* an expert's FFN width; default ffn_hidden */
  int shared_experts;  /* experts every token goes to (DeepSeekMoE); 0 */
  int dense_layers;    /* leading layers with a dense MLP; 0 */
  int moe_layer_frequency;  /* every n-th layer after them is MoE; 1 */
  double capacity_factor;   /* 0: dropless (absent) */
  RouterKind router;   /* default softmax */
  /* An attention head's width (Megatron's --kv-channels); 0: hidden /
   * heads. Qwen3's, 128 at hidden 2048 and 32 heads, is not. */
  int head_dim;
  /* The output layer has weights of its own rather than the word
   * embedding's (Megatron's --untie-embeddings-and-output-weights; Hugging
   * Face's tie_word_embeddings false): LLaMA, Mixtral, Qwen. FALSE, the
   * default, ties them as GPT-3 and Megatron's GPT do. */
  gboolean untied_embeddings;
  PositionKind position_embedding;   /* default learned */
} ModelSpec;

/* M's attention head width: model.head_dim, or hidden / heads (0
 * without heads). */
int spec_head_dim (const ModelSpec *m);
/* MoE layers of the model M: 0 for a dense model. */
int spec_moe_layers (const ModelSpec *m);
/* Whether layer L (from 0) of M has an MoE MLP. */
gboolean spec_layer_is_moe (const ModelSpec *m, int l);

/* --- device profile (a GPU) -------------------------------------------- */

typedef struct {
  char *name;                    /* owned */
  double peak_flops[PRECISION_N];/* dense FLOP/s per precision */
  double memory_bytes;
  double hbm_bandwidth;          /* bytes/s */
  /* Calibrated efficiencies; SPEC_UNSET means "use the calibration in
   * hw/device.c". A profile file may set them to model another device. */
  double matmul_efficiency;      /* fraction of peak reached by large GEMMs */
  double hbm_efficiency;         /* fraction of HBM bandwidth reached */
  int sms;                       /* streaming multiprocessors; 0: an A100's 108 */
  Generation generation;         /* default ampere */
} DeviceSpec;

/* --- topology ------------------------------------------------------------ */

typedef struct {
  LinkKind link;
  double bandwidth;   /* bytes/s per GPU per direction */
  double latency;     /* seconds per hop */
  /* The fraction of the bandwidth a large collective reaches; 0: the link
   * kind's (the ledger's; `trainsim calibrate` fits one). Last, so that
   * positional initializers leave it unset. */
  double efficiency;
  /* NVLink SHARP (NCCL's NVLS): the NVSwitches reduce, so NCCL may run an
   * all-reduce within a node as NVLS (net/net.c). Needs link: nvswitch on
   * a Hopper device; default false. */
  gboolean sharp;
} IntraNodeSpec;

/* Other jobs' traffic on the fabric (inter_node.fabric.background). A
 * bursty load is on in SPEC_BURST_DUTY of the time, at load / duty, and
 * off otherwise: the same mean. The duty is an ASSUMPTION (no published
 * trace of other jobs' traffic fixes it; the ledger's BURST_DUTY): half
 * the time, so a burst is twice the mean load and the mean must stay
 * under 0.5. */
#define SPEC_BURST_DUTY LEDGER (BURST_DUTY)

/* What a job keeps of a link that other jobs load by `load` (in [0, 1)):
 * (1 - load)^exponent; exactly 1 at load 0 (net/net.c gives the measured
 * exponents). O(1). */
double spec_background_keep (double load, double exponent);

/* The least share of a shared link a fabric's background may leave a job:
 * below a millionth no plan trains in any time worth predicting, and
 * (1 - load)^exponent of a large exponent reaches 0, a link that carries
 * nothing (config refuses it at the exponent's line:col). */
#define SPEC_MIN_BACKGROUND_KEEP 1e-6

typedef struct {
  /* The share of each uplink or global link's bandwidth that it keeps
   * busy, in [0, 1); 0, the default, is an idle fabric. */
  double load;
  BackgroundPattern pattern;  /* default steady */
  int seed;                   /* of the bursts; default 1 */
  /* What the job keeps of a link it shares, (1 - load)^exponent
   * (net/net.h); SPEC_UNSET: the link kind's calibration. */
  double congestion_exponent;
} BackgroundSpec;

typedef struct {
  FabricKind kind;
  /* The bandwidth out of a leaf switch (fat tree) or a dragonfly group,
   * over the bandwidth its nodes inject: 1 is full bisection. */
  double taper;
  int nodes_per_group;  /* nodes under one leaf switch / in one dragonfly
                         * group; default 1: every node its own group, so
                         * every byte between nodes crosses the taper */
  int groups;           /* leaf switches or dragonfly groups; 0 = unset
                         * (no limit; placement: spread needs it) */
  /* Dragonfly: the fraction of its global links' bandwidth that adaptive
   * routing keeps for traffic between groups under load (non-minimal
   * paths cross two global links); default 1. */
  double routing_efficiency;
  Placement placement;  /* default packed */
  BackgroundSpec background;
} FabricSpec;

/* The largest node whose NIC placement can be written out. */
#define SPEC_MAX_GPUS_PER_NODE 128

/* A YAML list of integers (nic_of_gpu, stage_layers); len 0 when not
 * given. Inline, so that copying a spec copies it. It holds a node's GPUs
 * or up to as many pipeline stages. */
#define SPEC_MAX_LIST SPEC_MAX_GPUS_PER_NODE
typedef struct {
  int len;
  int v[SPEC_MAX_LIST];
} SpecIntList;

typedef struct {
  LinkKind link;
  int nics_per_node;
  double nic_bandwidth; /* bytes/s per NIC per direction */
  double latency;       /* seconds, one network traversal */
  FabricSpec fabric;
  NicPath nic_path;     /* default: nvlink on NVLink/NVSwitch nodes, else pcie */
  /* nic_of_gpu[g]: the NIC next to GPU g (on its PCIe switch), for the
   * node's gpus_per_node GPUs; 0 entries given: GPUs split evenly over
   * the NICs in order, which needs the one count to divide the other. */
  SpecIntList nic_of_gpu;
  double efficiency;    /* as IntraNodeSpec's, for the NICs */
  /* InfiniBand SHARP (NCCL's CollNet, with the SHARP plugin and
   * NCCL_COLLNET_ENABLE=1): the switches reduce, so NCCL may run an
   * all-reduce across nodes as CollNet (net/net.c). Needs an InfiniBand
   * link; default false. Last, as efficiency was. */
  gboolean sharp;
} InterNodeSpec;

/* A node's CPUs, from which the CPU's Adam rate follows (hw/host.h). */
typedef struct {
  int sockets;                  /* 0: not described */
  int cores;                    /* per socket */
  double frequency;             /* Hz, the all-core clock */
  int simd_bits;                /* the widest vector unit: 256 (AVX2), 512 */
  double memory_bandwidth;      /* bytes/s, the node's peak (all channels) */
} CpuSpec;

typedef struct {
  double pcie_bandwidth;        /* bytes/s per GPU, SPEC_UNSET if unknown */
  double memory_bytes;          /* host memory per node, SPEC_UNSET if unknown */
  double cpu_adam_params_per_s; /* the node's CPUs together; SPEC_UNSET:
                                 * derived from cpu when described */
  int gpus_per_pcie_switch;     /* GPUs sharing one PCIe link to the host;
                                 * default 1 */
  double kernel_launch_s;       /* a host thread's time to issue one kernel;
                                 * SPEC_UNSET: the calibrated default */
  CpuSpec cpu;
} HostSpec;

/* Where checkpoints go (storage:), for `trainsim plan`: a shared file
 * system's aggregate write and read bandwidth, and what one node can move
 * to it. bandwidth is SPEC_UNSET when the topology has no storage:. */
typedef struct {
  double bandwidth;        /* bytes/s, aggregate write */
  double read_bandwidth;   /* bytes/s, aggregate read; SPEC_UNSET: bandwidth */
  double node_bandwidth;   /* bytes/s per node; SPEC_UNSET: no limit */
} StorageSpec;

/* How identical GPUs differ (topology.variability; the model is in
 * parallel/sim.h, its statistics in base/stats.h). Each is a relative
 * standard deviation of a time, as a log-normal factor of mean 1. */
typedef struct {
  double gpu_speed_spread;   /* a GPU's sustained speed, for the whole run */
  double jitter;             /* an op's time, drawn afresh every op */
  int slow_nodes;            /* nodes whose GPUs all run slower ... */
  double slow_node_slowdown; /* ... taking this much longer, in [0, 1) */
  int seed;                  /* --full's draws */
} VariabilitySpec;

/* The time factor of the slowest GPU of a job of GPUS GPUs, GPUS_PER_NODE
 * a node, under V (parallel/sim.h): the larger of the slowest of the
 * nominal GPUs and the slowest of the slow nodes' GPUs times their
 * slowdown. _expected is its expectation (the larger of the two
 * expectations, a slight underestimate where both are close); _draw a
 * draw from the uniforms U1 and U2 in (0, 1), as plan's Monte Carlo takes
 * one for each run. */
double spec_slowest_expected (const VariabilitySpec *v, int64_t gpus,
                              int gpus_per_node);
double spec_slowest_draw (const VariabilitySpec *v, int64_t gpus,
                          int gpus_per_node, double u1, double u2);

typedef struct {
  char *name;          /* owned; may be NULL for an inline topology */
  int gpus_per_node;
  DeviceSpec gpu;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  HostSpec host;
  StorageSpec storage;
  VariabilitySpec variability;
} TopologySpec;

/* --- experiment ------------------------------------------------------- */

typedef struct {
  int tp, pp;
  int dp;                  /* 0 = gpus / (tp * pp) */
  int micro_batch;         /* 0 = auto: the fastest feasible */
  int global_batch;
  Schedule schedule;       /* default 1f1b */
  int virtual_stages;      /* default 1; 0 = auto */
  gboolean sequence_parallel;   /* default false */
  /* Whether the DP reduction overlaps backward, bucket by bucket: TRUE,
   * FALSE, or -1 when not given: then the framework's way (plan.h,
   * plan_dp_overlaps), which depends on the ZeRO stage. */
  int gradient_bucketing;
  double bucket_bytes;          /* default: the framework's; 0: a bucket
                                 * per module (FSDP's units) */
  gboolean tp_across_nodes;     /* allow tp > gpus_per_node; default false */
  /* Megatron's asynchronous TP communication in backward (ColumnParallel
   * Linear, --async-tensor-model-parallel-allreduce, on by default since
   * 2022): the input gradient's all-reduce (or reduce-scatter) runs under
   * the weight-gradient GEMM, and with SP the input's all-gather under
   * the input-gradient GEMM. Default true. */
  gboolean tp_overlap;
  /* Megatron-Core's --tp-comm-overlap (megatron/training/arguments.py and
   * megatron/core/model_parallel_config.py, core_v0.12.0): with sequence
   * parallelism, TransformerEngine's userbuffers split each linear
   * layer's GEMM and run its TP all-gather or reduce-scatter beside it,
   * forward and backward (graph/transformer.c). Default false, as the
   * flag. */
  gboolean tp_comm_overlap;
  /* Megatron-Core's --overlap-param-gather (core_r0.8.0, megatron/core/
   * optimizer/distrib_optimizer.py): the distributed optimizer's
   * all-gather of the updated parameters runs under the next step's first
   * forward, bucket by bucket, instead of after the optimizer. Default
   * false, as Megatron-LM's flag; it needs zero.stage 1 and
   * gradient_bucketing (its --overlap-grad-reduce), as arguments.py
   * asserts. */
  gboolean param_gather_overlap;
  /* Megatron-Core's --moe-shared-expert-overlap (megatron/training/
   * arguments.py, core_r0.10.0): an MoE layer's shared experts run on a
   * side stream beside the dispatch and combine all-to-alls (graph/moe.c).
   * Default false, as the flag; it needs model.shared_experts. */
  gboolean moe_shared_expert_overlap;
  GradAccumulation grad_accumulation;   /* default fused (Megatron-LM's) */
  /* The precision of the gradients the data-parallel reduction moves
   * (parallel.grad_reduce_precision): fp32 or the run's own. Left out,
   * the framework's (framework_grad_reduce_precision): Megatron-LM
   * reduces bf16 runs' gradients in fp32, the others in the run's
   * precision. It sets the bytes of the DP all-reduce or reduce-scatter,
   * of the tied embedding's all-reduce and of gradient buckets, and under
   * Megatron-LM the bytes its main_grad holds (plan.c plan_memory). */
  Precision grad_reduce_precision;
  /* The layers of each pipeline stage, first to last, when they are not
   * layers / pp: Megatron-DeepSpeed's BLOOM put 5 layers and the
   * embedding on each end stage and 6 on the others (70 on 12). */
  SpecIntList stage_layers;
  /* Expert parallelism (Megatron-Core's --expert-model-parallel-size and
   * --expert-tensor-parallel-size, core_r0.10.0): the ranks an MoE
   * layer's experts are split over, and the tensor parallelism inside an
   * expert. ep 0 is 1; etp 0 is tp (Megatron-Core's default). */
  int ep, etp;
  /* Context parallelism (Megatron-Core's --context-parallel-size): the
   * ranks a sequence is split over, and how (graph/cp.h). cp 0 is 1. */
  int cp;
  CpKind cp_kind;          /* default p2p */
} ParallelSpec;

typedef struct {
  int stage;               /* 0..3 */
  Offload offload;
  /* ZeRO-Offload's one-step delayed parameter update (Ren et al. 2021,
   * section 5): the CPU's step n overlaps step n + 1 on the GPUs. */
  gboolean offload_delayed_update;
} ZeroSpec;

/* DeepSpeed's activation checkpointing options, its config's
 * activation_checkpointing section (deepspeed/runtime/activation_checkpointing/
 * checkpointing.py; training.activation_checkpointing): what its
 * CheckpointFunction does with each layer's input, the checkpoint that
 * full recompute keeps. All false by default, as DeepSpeed's own
 * (_configure_defaults) and Megatron-DeepSpeed's flags. */
typedef struct {
  gboolean partition_activations;   /* split over TP, all-gathered back */
  gboolean cpu_checkpointing;       /* kept in host memory */
  gboolean contiguous_memory_optimization;  /* copied into one buffer */
  gboolean synchronize_checkpoint_boundary; /* the host waits for the device
                                             * as each layer starts and ends */
} ActivationCheckpointing;

typedef struct {
  Precision precision;     /* default bf16; never fp8 once loaded (fp8) */
  gboolean fp8;            /* training.precision: fp8 was given */
  Fp8Recipe fp8_recipe;    /* training.fp8_recipe; default delayed */
  Recompute recompute;     /* default none */
  ActivationCheckpointing activation_checkpointing;
  /* default unfused; flash_attention: true, the older key, means flash2 */
  Attention attention;
  gboolean flash_attention;
  double tokens;           /* SPEC_UNSET when not given, SPEC_CHINCHILLA */
  /* tokens: chinchilla trains on this many tokens per parameter (default
   * 20, Hoffmann et al. 2022). */
  double tokens_per_parameter;
  /* The tokens the busiest expert gets over the mean (a router's load
   * imbalance): 1, balanced, unless set (training.moe_imbalance). */
  double moe_imbalance;
} TrainingSpec;

/* training.tokens: chinchilla: tokens_per_parameter times the model's
 * parameters, counted by the simulator (parallel/plan.h). */
#define SPEC_CHINCHILLA (-2.0)

/* What the run draws from the grid (energy:), for `trainsim plan`, in
 * watts; defaults in config-experiment.c, with sources. */
typedef struct {
  double gpu_compute_w;         /* a GPU running kernels */
  double gpu_communication_w;   /* waiting on a collective or a send */
  double gpu_idle_w;            /* the bubble, the host, recovery */
  double node_w;                /* a node's CPUs, switches, NICs and fans */
  double pue;                   /* the facility's power usage effectiveness */
  double grid_g_co2_per_kwh;    /* SPEC_UNSET: no CO2 reported */
} EnergySpec;

/* How often the cluster fails and what a failure costs (reliability:),
 * for `trainsim plan`'s goodput; defaults in config-experiment.c, with sources. */
typedef struct {
  double gpu_failures_per_hour;    /* per GPU */
  double node_failures_per_hour;   /* per node, besides its GPUs */
  double detection_s;              /* from the failure to the job's end */
  double restart_s;                /* requeue, start, NCCL init; the
                                    * checkpoint's load comes on top */
  double checkpoint_interval_s;    /* work between checkpoints; SPEC_UNSET:
                                    * Young/Daly's optimum */
  int trials;                      /* Monte Carlo runs */
  int seed;
} ReliabilitySpec;

typedef struct {
  double mfu;                 /* SPEC_UNSET, or every FLOP at this fraction of peak */
  double matmul_efficiency;   /* SPEC_UNSET, or overrides the device's */
  double hbm_efficiency;      /* SPEC_UNSET, or overrides the device's */
} ComputeSpec;

typedef struct {
  double gpu_hour_usd;     /* default 1.5 */
} CostSpec;

typedef struct {
  AlgorithmChoice algorithm;   /* default auto */
} CollectivesSpec;

/* A framework's profile (config/framework.h): static, never owned. */
typedef struct FrameworkProfile FrameworkProfile;

/* Where some values were written, "file:line:col" (owned, NULL when the
 * value was defaulted or derived): the plan checks in parallel/plan.c
 * cite them when sizes do not divide. */
typedef struct {
  char *file;           /* the experiment (or validation) file itself */
  char *gpus, *tp, *pp, *dp, *micro_batch, *global_batch, *virtual_stages;
  char *layers, *heads;
  char *zero_stage, *offload, *offload_delayed_update, *stage_layers;
  char *framework;
  char *schedule, *sequence_parallel, *recompute, *activation_checkpointing;
  char *param_gather_overlap, *moe_shared_expert_overlap, *tp_comm_overlap;
  char *experts, *top_k, *ep, *etp, *cp, *cp_kind;
  char *topology, *training;  /* where each is given (a missing key's place) */
  char *placement;      /* topology.inter_node.fabric.placement */
  char *slow_nodes;     /* topology.variability.slow_nodes */
  char *sweep;          /* a sweep: section, which only `sweep` runs */
} SpecMarks;

typedef struct {
  ModelSpec model;
  TopologySpec topology;
  int gpus;
  ParallelSpec parallel;
  ZeroSpec zero;
  TrainingSpec training;
  ComputeSpec compute;
  CostSpec cost;
  CollectivesSpec collectives;
  ReliabilitySpec reliability;
  EnergySpec energy;
  /* What runs the plan (framework:), default today's Megatron-LM: what
   * it can run (plan.c) and how (its defaults, the step builder). */
  const FrameworkProfile *framework;
  SpecMarks marks;
} ExperimentSpec;

/* --- validation file ------------------------------------------------- */

typedef struct {
  char *id;                     /* owned */
  ExperimentSpec experiment;    /* owned */
  double measured_iteration_time_s;   /* SPEC_UNSET when not given */
  /* One transformer layer's forward and backward (Korthikanti 2022
   * Table 4): SPEC_UNSET when not given; a case gives these or the
   * iteration time. */
  double measured_layer_forward_ms, measured_layer_backward_ms;
  /* Counted as the file's FlopsConvention says; scored alone, or checked
   * against the iteration time when both are given. */
  double measured_tflops_per_gpu;     /* SPEC_UNSET when not given */
  double measured_memory_gib;         /* SPEC_UNSET when not given */
  gboolean measured_oom;              /* the run did not fit: no time */
  int order_group;              /* index of its order_within group, or -1
                                 * when no other case differs only there */
  char *where;                  /* owned: "file:line:col" of the case */
  char *tflops_where;           /* owned: that of tflops_per_gpu, or NULL */
  /* A collectives file's case: op on bytes per rank over experiment.gpus
   * ranks of experiment.topology, per_node of them in each node (0: every
   * GPU of a node), and the bus bandwidth it measured (bytes/s). */
  CollKind op;
  double bytes;
  int per_node;
  double measured_bus_bandwidth;
  /* A GEMM file's case: batch products of (m x k) by (k x n) on
   * experiment.topology.gpu in experiment.training.precision, and the
   * FLOP/s (2 batch m n k a second) it measured. */
  int batch, m, n, k;
  double measured_flops;
  /* An MLP file's case: the MLP block alone (transformer_mlp_forward) of
   * experiment.model (hidden, ffn_hidden, mlp) over experiment.parallel.
   * micro_batch sequences of experiment.model.seq_len tokens, and the
   * forward time it measured. */
  double measured_forward_ms;
} ValidationCase;

/* Bounds on a file's scores: fractions (SPEC_UNSET when not given) and
 * counts (-1 when not given). */
typedef struct {
  double mape, max;
  double mean_signed;           /* on the absolute mean signed error */
  int misordered;               /* order_within groups not in measured order */
  int memory_misses;            /* runs the memory model calls wrongly */
} ValidationBounds;

typedef struct {
  char *name;                   /* owned */
  char *source;                 /* owned, may be NULL */
  ValidationRole role;
  ValidationKind kind;
  int flops;                    /* FlopsConvention, or -1 when not given */
  ValidationBounds tolerance;   /* the goal the file must meet */
  /* A documented gap: bounds, looser than the goal, that the file may not
   * exceed while it misses the goal. Only with has_known_gap. */
  ValidationBounds known_gap;
  gboolean has_known_gap;
  int order_groups;             /* groups of two or more cases (order_group) */
  GPtrArray *cases;             /* owned, of ValidationCase* */
} ValidationSpec;

void model_spec_clear (ModelSpec *m);
void device_spec_clear (DeviceSpec *d);
void topology_spec_clear (TopologySpec *t);
void experiment_spec_clear (ExperimentSpec *e);
void experiment_spec_copy (ExperimentSpec *dst, const ExperimentSpec *src);
void validation_spec_free (ValidationSpec *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ValidationSpec, validation_spec_free)
