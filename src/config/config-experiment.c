/* config-experiment.c: the keys of an experiment (config-private.h's
 * Field tables): the model, parallelism, ZeRO, training, compute, cost,
 * collectives, reliability and energy, with the checks across their
 * fields; the experiment's own table, which holds them and the
 * topology's; and every default, with its source. */
#include "config/config-private.h"

#include <limits.h>

#include "base/units.h"
#include "config/framework.h"

/* --- the model ------------------------------------------------------------ */

/* A sanity cap on a model's depth: the deepest models trained have a few
 * hundred layers, and a step is replayed layer by layer (2^31 of them took
 * minutes before failing for another reason). */
#define MAX_LAYERS 100000
/* A sanity cap on experts: the most fine-grained published MoE layers have
 * a few hundred (DeepSeek-V3: 256 routed, DeepSeek-AI 2024). */
#define MAX_EXPERTS 65536
/* An attention head's width: 64-256 in published models (Qwen3 128,
 * Gemma 2 256); the cap keeps heads x head_dim far inside int64. */
#define MAX_HEAD_DIM 65536

static const Field model_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, ModelSpec, name),
  F ("layers", F_INT, ModelSpec, layers, REQUIRED, MARK (layers)),
  F ("hidden", F_INT, ModelSpec, hidden, REQUIRED),
  F ("heads", F_INT, ModelSpec, heads, REQUIRED, MARK (heads)),
  F ("kv_heads", F_INT_AUTO, ModelSpec, kv_heads),
  F ("head_dim", F_INT_AUTO, ModelSpec, head_dim),
  F ("ffn_hidden", F_INT_AUTO, ModelSpec, ffn_hidden),
  F ("mlp", F_ENUM, ModelSpec, mlp, .arg = SPEC_ENUM_MLP),
  F ("vocab", F_INT, ModelSpec, vocab, REQUIRED),
  F ("vocab_divisible_by", F_INT_AUTO, ModelSpec, vocab_divisible_by),
  F ("dropout", F_BOOL, ModelSpec, dropout),
  F ("seq_len", F_INT, ModelSpec, seq_len, REQUIRED),
  F ("experts", F_INT, ModelSpec, experts, MARK (experts)),
  F ("top_k", F_INT, ModelSpec, top_k, MARK (top_k)),
  F ("moe_ffn_hidden", F_INT_AUTO, ModelSpec, moe_ffn_hidden),
  F ("shared_experts", F_INT_RANGE, ModelSpec, shared_experts, .arg = MAX_EXPERTS),
  F ("dense_layers", F_INT_RANGE, ModelSpec, dense_layers, .arg = MAX_LAYERS),
  F ("moe_layer_frequency", F_INT, ModelSpec, moe_layer_frequency),
  F ("capacity_factor", F_NUMBER, ModelSpec, capacity_factor),
  F ("router", F_ENUM, ModelSpec, router, .arg = SPEC_ENUM_ROUTER),
  F ("untied_embeddings", F_BOOL, ModelSpec, untied_embeddings),
  F ("position_embedding", F_ENUM, ModelSpec, position_embedding,
     .arg = SPEC_ENUM_POSITION),
  END
};

/* A sanity cap: Megatron pads by 128 and users by a few thousand at most. */
#define MAX_VOCAB_DIVISIBLE_BY 65536

/* The MoE keys: without experts none may be given; with them, top_k
 * defaults to 2 (Megatron-Core's --moe-router-topk, arguments.py,
 * core_r0.10.0) and must not exceed the experts, moe_ffn_hidden to
 * ffn_hidden, moe_layer_frequency to 1; the dense layers leave at least
 * one MoE layer. capacity_factor > 0 is F_NUMBER's. */
static gboolean
model_moe_finish (const YNode *map, const char *path, ModelSpec *m, GError **error)
{
  static const char *const keys[] = { "top_k", "moe_ffn_hidden", "shared_experts",
    "dense_layers", "moe_layer_frequency", "capacity_factor", "router" };
  if (m->experts == 0)
    {
      for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
        {
          const YPair *k = ytree_map_find (map, keys[i]);
          if (k != NULL)
            {
              ytree_set_error (error, k->key_mark, "%s.%s applies to a mixture of "
                               "experts only; set %s.experts (2 or more) or remove it",
                               path, keys[i], path);
              return FALSE;
            }
        }
      return TRUE;
    }
  const YPair *e = ytree_map_find (map, "experts");
  if (m->experts < 2 || m->experts > MAX_EXPERTS)
    {
      ytree_set_error (error, e->value->mark, "%s.experts must be from 2 to %d, got %d",
                       path, MAX_EXPERTS, m->experts);
      return FALSE;
    }
  if (m->top_k == 0)
    m->top_k = 2;
  if (m->top_k > m->experts)
    {
      const YPair *k = ytree_map_find (map, "top_k");
      ytree_set_error (error, k ? k->value->mark : e->value->mark,
                       "%s.top_k (%d) must be from 1 to %s.experts (%d)",
                       path, m->top_k, path, m->experts);
      return FALSE;
    }
  if (m->moe_ffn_hidden == 0)
    m->moe_ffn_hidden = m->ffn_hidden;
  if (m->moe_layer_frequency == 0)
    m->moe_layer_frequency = 1;
  if (m->dense_layers >= m->layers)
    {
      const YPair *d = ytree_map_find (map, "dense_layers");
      ytree_set_error (error, d->value->mark, "%s.dense_layers (%d) must be below "
                       "%s.layers (%d), leaving an MoE layer", path, m->dense_layers,
                       path, m->layers);
      return FALSE;
    }
  return TRUE;
}

/* Derives kv_heads and ffn_hidden, and checks that kv_heads divides heads
 * and that layers and vocab_divisible_by are within their caps. */
gboolean
config_model_finish (const YNode *map, const char *path, void *base, GError **error)
{
  ModelSpec *m = base;
  const YPair *kv = ytree_map_find (map, "kv_heads");

  if (m->kv_heads == 0)
    m->kv_heads = m->heads;
  else if (m->heads % m->kv_heads != 0)
    {
      ytree_set_error (error, kv->value->mark, "%s.kv_heads (%d) must divide %s.heads (%d)",
                       path, m->kv_heads, path, m->heads);
      return FALSE;
    }
  if (m->head_dim > MAX_HEAD_DIM)
    {
      const YPair *d = ytree_map_find (map, "head_dim");
      ytree_set_error (error, d->value->mark, "%s.head_dim must be at most "
                       "%d, got %d", path, MAX_HEAD_DIM, m->head_dim);
      return FALSE;
    }
  if (m->layers > MAX_LAYERS)
    {
      const YPair *l = ytree_map_find (map, "layers");
      ytree_set_error (error, l ? l->value->mark : map->mark, "%s.layers must be at most "
                       "%d, got %d", path, MAX_LAYERS, m->layers);
      return FALSE;
    }
  if (m->vocab_divisible_by > MAX_VOCAB_DIVISIBLE_BY)
    {
      const YPair *d = ytree_map_find (map, "vocab_divisible_by");
      ytree_set_error (error, d->value->mark, "%s.vocab_divisible_by must be at most "
                       "%d, got %d", path, MAX_VOCAB_DIVISIBLE_BY, m->vocab_divisible_by);
      return FALSE;
    }
  if (m->ffn_hidden == 0)
    {
      if (m->hidden > INT_MAX / 4)
        {
          const YPair *h = ytree_map_find (map, "hidden");
          ytree_set_error (error, h->value->mark, "%s.hidden (%d) is too large for the "
                           "default ffn_hidden of 4 * hidden; set ffn_hidden", path, m->hidden);
          return FALSE;
        }
      m->ffn_hidden = 4 * m->hidden;
    }
  return model_moe_finish (map, path, m, error);
}

/* --- parallelism and training --------------------------------------------- */

static const Field parallel_fields[] = {
  F ("tp", F_INT, ParallelSpec, tp, REQUIRED, MARK (tp)),
  F ("pp", F_INT, ParallelSpec, pp, REQUIRED, MARK (pp)),
  F ("dp", F_INT_AUTO, ParallelSpec, dp, MARK (dp)),
  F ("micro_batch", F_INT_AUTO, ParallelSpec, micro_batch, REQUIRED, MARK (micro_batch)),
  F ("global_batch", F_INT, ParallelSpec, global_batch, REQUIRED, MARK (global_batch)),
  F ("schedule", F_ENUM, ParallelSpec, schedule, .arg = SPEC_ENUM_SCHEDULE,
     MARK (schedule)),
  F ("virtual_stages", F_INT_AUTO, ParallelSpec, virtual_stages, MARK (virtual_stages)),
  F ("sequence_parallel", F_BOOL, ParallelSpec, sequence_parallel,
     MARK (sequence_parallel)),
  F ("gradient_bucketing", F_BOOL, ParallelSpec, gradient_bucketing),
  F ("bucket_size", F_UNIT, ParallelSpec, bucket_bytes, .arg = UNIT_BYTES),
  F ("tp_across_nodes", F_BOOL, ParallelSpec, tp_across_nodes),
  F ("tp_overlap", F_BOOL, ParallelSpec, tp_overlap),
  F ("tp_comm_overlap", F_BOOL, ParallelSpec, tp_comm_overlap,
     MARK (tp_comm_overlap)),
  F ("param_gather_overlap", F_BOOL, ParallelSpec, param_gather_overlap,
     MARK (param_gather_overlap)),
  F ("moe_shared_expert_overlap", F_BOOL, ParallelSpec, moe_shared_expert_overlap,
     MARK (moe_shared_expert_overlap)),
  F ("grad_accumulation", F_ENUM, ParallelSpec, grad_accumulation,
     .arg = SPEC_ENUM_GRAD_ACCUMULATION),
  F ("grad_reduce_precision", F_ENUM, ParallelSpec, grad_reduce_precision,
     .arg = SPEC_ENUM_PRECISION),
  /* [] is even stages, as no list: what a plan's --set lines say to
   * replay an even plan over a file that lists its own. */
  F ("stage_layers", F_INT_LIST, ParallelSpec, stage_layers, .arg = 1,
     .example = "[5, 6, 6, 5] (the layers of each stage)", MARK (stage_layers),
     .may_be_empty = TRUE),
  F ("ep", F_INT_AUTO, ParallelSpec, ep, MARK (ep)),
  F ("etp", F_INT_AUTO, ParallelSpec, etp, MARK (etp)),
  F ("cp", F_INT_AUTO, ParallelSpec, cp, MARK (cp)),
  F ("cp_kind", F_ENUM, ParallelSpec, cp_kind, .arg = SPEC_ENUM_CP_KIND,
     MARK (cp_kind)),
  END
};

static const Field zero_fields[] = {
  F ("stage", F_INT_RANGE, ZeroSpec, stage, .arg = 3, MARK (zero_stage)),
  F ("offload", F_ENUM, ZeroSpec, offload, .arg = SPEC_ENUM_OFFLOAD, MARK (offload)),
  F ("offload_delayed_update", F_BOOL, ZeroSpec, offload_delayed_update,
     MARK (offload_delayed_update)),
  END
};

/* DeepSpeed's activation_checkpointing section, its keys as in its
 * config (deepspeed/runtime/activation_checkpointing/config.py, v0.6.0);
 * plan.c holds the rules on when they apply. */
static const Field activation_checkpointing_fields[] = {
  F ("partition_activations", F_BOOL, ActivationCheckpointing,
     partition_activations),
  F ("cpu_checkpointing", F_BOOL, ActivationCheckpointing, cpu_checkpointing),
  F ("contiguous_memory_optimization", F_BOOL, ActivationCheckpointing,
     contiguous_memory_optimization),
  F ("synchronize_checkpoint_boundary", F_BOOL, ActivationCheckpointing,
     synchronize_checkpoint_boundary),
  END
};

static const Field training_fields[] = {
  F ("precision", F_ENUM, TrainingSpec, precision, .arg = SPEC_ENUM_PRECISION),
  F ("fp8_recipe", F_ENUM, TrainingSpec, fp8_recipe, .arg = SPEC_ENUM_FP8_RECIPE),
  F ("recompute", F_ENUM, TrainingSpec, recompute, .arg = SPEC_ENUM_RECOMPUTE,
     MARK (recompute)),
  F ("activation_checkpointing", F_MAP, TrainingSpec, activation_checkpointing,
     .sub = activation_checkpointing_fields, MARK (activation_checkpointing)),
  F ("attention", F_ENUM, TrainingSpec, attention, .arg = SPEC_ENUM_ATTENTION),
  F ("flash_attention", F_BOOL, TrainingSpec, flash_attention),
  F ("tokens", F_TOKENS, TrainingSpec, tokens),
  F ("tokens_per_parameter", F_NUMBER, TrainingSpec, tokens_per_parameter),
  F ("moe_imbalance", F_NUMBER, TrainingSpec, moe_imbalance),
  END
};

/* flash_attention, the older key, says flash2 or unfused; attention names
 * the kernel. Both may be given only when they agree. */
static gboolean
training_finish (const YNode *map, const char *path, void *base, GError **error)
{
  TrainingSpec *t = base;
  const YPair *fa = ytree_map_find (map, "flash_attention");
  const YPair *at = ytree_map_find (map, "attention");
  const YPair *im = ytree_map_find (map, "moe_imbalance");

  if (im != NULL && t->moe_imbalance < 1)
    {
      ytree_set_error (error, im->value->mark, "%s.moe_imbalance must be at least 1 "
                       "(the busiest expert's tokens over the mean; 1 is balanced), "
                       "got %g", path, t->moe_imbalance);
      return FALSE;
    }

  if (fa == NULL)
    return TRUE;
  if (at == NULL)
    {
      t->attention = t->flash_attention ? ATTENTION_FLASH2 : ATTENTION_UNFUSED;
      return TRUE;
    }
  if (t->flash_attention != (t->attention != ATTENTION_UNFUSED))
    {
      ytree_set_error (error, fa->value->mark, "%s.flash_attention: %s contradicts "
                       "%s.attention: %s; give only attention (unfused, flash1, "
                       "flash1-triton, flash2, flash3 or cudnn)", path,
                       t->flash_attention ? "true" : "false", path,
                       spec_enum_name (SPEC_ENUM_ATTENTION, t->attention));
      return FALSE;
    }
  return TRUE;
}

/* --- compute, cost, reliability, energy and collectives -------------------- */

static const Field compute_fields[] = {
  F ("mfu", F_FRACTION, ComputeSpec, mfu),
  F ("matmul_efficiency", F_FRACTION, ComputeSpec, matmul_efficiency),
  F ("hbm_efficiency", F_FRACTION, ComputeSpec, hbm_efficiency),
  END
};

static const Field cost_fields[] = {
  F ("gpu_hour_usd", F_NUMBER, CostSpec, gpu_hour_usd),
  END
};

static const Field reliability_fields[] = {
  F ("gpu_failures_per_hour", F_NUMBER, ReliabilitySpec, gpu_failures_per_hour),
  F ("node_failures_per_hour", F_NUMBER, ReliabilitySpec, node_failures_per_hour),
  F ("detection", F_UNIT, ReliabilitySpec, detection_s, .arg = UNIT_TIME),
  F ("restart", F_UNIT, ReliabilitySpec, restart_s, .arg = UNIT_TIME),
  F ("checkpoint_interval", F_UNIT, ReliabilitySpec, checkpoint_interval_s,
     .arg = UNIT_TIME),
  F ("trials", F_INT, ReliabilitySpec, trials),
  F ("seed", F_INT, ReliabilitySpec, seed),
  END
};

/* A PUE is the data centre's power over its IT load's: 1 at best, about
 * 1.1-1.6 in practice; 10 bounds a value typed wrong. A GPU draws up to
 * about a kilowatt and a node's rest a few: 100 kW bounds either. */
#define MAX_PUE 10.0
#define MAX_POWER_W 1e5
static gboolean
energy_finish (const YNode *map, const char *path, void *base, GError **error)
{
  const EnergySpec *en = base;
  const struct { const char *key; double w; } powers[] = {
    { "gpu_compute_w", en->gpu_compute_w }, { "gpu_communication_w", en->gpu_communication_w },
    { "gpu_idle_w", en->gpu_idle_w }, { "node_w", en->node_w },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (powers); i++)
    {
      const YPair *w = ytree_map_find (map, powers[i].key);
      if (w && powers[i].w > MAX_POWER_W)
        {
          ytree_set_error (error, w->value->mark, "%s.%s must be at most %g W, got %g",
                           path, powers[i].key, MAX_POWER_W, powers[i].w);
          return FALSE;
        }
    }
  const YPair *pue = ytree_map_find (map, "pue");
  if (pue && (en->pue < 1 || en->pue > MAX_PUE))
    {
      ytree_set_error (error, pue->value->mark, "%s.pue must be from 1 to %g (the "
                       "data centre's power over its IT load's, such as 1.1), got %g",
                       path, MAX_PUE, en->pue);
      return FALSE;
    }
  return TRUE;
}

static const Field energy_fields[] = {
  F ("gpu_compute_w", F_NUMBER, EnergySpec, gpu_compute_w),
  F ("gpu_communication_w", F_NUMBER, EnergySpec, gpu_communication_w),
  F ("gpu_idle_w", F_NUMBER, EnergySpec, gpu_idle_w),
  F ("node_w", F_NUMBER, EnergySpec, node_w),
  F ("pue", F_NUMBER, EnergySpec, pue),
  F ("grid_g_co2_per_kwh", F_NUMBER, EnergySpec, grid_g_co2_per_kwh),
  END
};

static const Field collectives_fields[] = {
  F ("algorithm", F_ENUM, CollectivesSpec, algorithm, .arg = SPEC_ENUM_ALGORITHM),
  END
};

/* --- the experiment ------------------------------------------------------- */

const Field config_experiment_fields[] = {
  FILE_KEYS,
  { .key = "name", .type = F_LABEL },
  F ("model", F_REF, ExperimentSpec, model, REQUIRED, .arg = REF_MODEL, .sub = model_fields,
     .finish = config_model_finish),
  F ("topology", F_REF, ExperimentSpec, topology, REQUIRED, .arg = REF_TOPOLOGY,
     .sub = config_topology_fields, .finish = config_topology_finish, MARK (topology)),
  F ("gpus", F_INT, ExperimentSpec, gpus, REQUIRED, MARK (gpus)),
  F ("parallel", F_MAP, ExperimentSpec, parallel, REQUIRED, .sub = parallel_fields),
  F ("zero", F_MAP, ExperimentSpec, zero, .sub = zero_fields),
  F ("training", F_MAP, ExperimentSpec, training, .sub = training_fields,
     .finish = training_finish, MARK (training)),
  F ("compute", F_MAP, ExperimentSpec, compute, .sub = compute_fields),
  F ("cost", F_MAP, ExperimentSpec, cost, .sub = cost_fields),
  F ("collectives", F_MAP, ExperimentSpec, collectives, .sub = collectives_fields),
  F ("reliability", F_MAP, ExperimentSpec, reliability, .sub = reliability_fields),
  F ("energy", F_MAP, ExperimentSpec, energy, .sub = energy_fields,
     .finish = energy_finish),
  F ("framework", F_FRAMEWORK, ExperimentSpec, framework, MARK (framework)),
  { .key = "sweep", .type = F_SWEEP, MARK (sweep) },
  END
};

/* --- defaults ------------------------------------------------------------- */

/* Llama 3 405B's pre-training (Dubey et al. 2024, "The Llama 3 Herd of
 * Models", arXiv:2407.21783, section 3.3.4 and Table 5): 419 unexpected
 * interruptions in "a 54-day snapshot period of pre-training"; "GPU issues
 * are the largest category, accounting for 58.7% of all unexpected
 * issues". The paper gives no GPU count for the snapshot: 16,384 is its
 * largest configuration (Table 4; "16K GPU training", section 3.3.4), 8 to
 * a server (section 3.3.1). 58.7 % is the text's figure and the sum of
 * Table 5's percentages for its GPU rows; the same rows' counts give 268
 * of 419 (64.0 %), the table's percentages not matching its counts. */
#define LLAMA3_INTERRUPTIONS 419.0
#define LLAMA3_HOURS (54.0 * 24)
#define LLAMA3_GPUS 16384.0
#define LLAMA3_GPUS_PER_NODE 8.0
#define LLAMA3_GPU_SHARE 0.587

/* Every default in one place; counts left 0 are either required or derived
 * (kv_heads, ffn_hidden in config_model_finish; dp from gpus in the plan). */
void
config_experiment_defaults (ExperimentSpec *e)
{
  e->topology.gpu.matmul_efficiency = SPEC_UNSET;
  e->topology.gpu.hbm_efficiency = SPEC_UNSET;
  e->topology.intra_node.link = LINK_NVSWITCH;
  e->topology.intra_node.latency = SPEC_UNSET;
  e->topology.inter_node.link = LINK_INFINIBAND_HDR;
  e->topology.inter_node.latency = SPEC_UNSET;
  e->topology.inter_node.fabric.kind = FABRIC_FAT_TREE;
  e->topology.inter_node.fabric.taper = 1.0;
  e->topology.inter_node.fabric.nodes_per_group = 1;
  e->topology.inter_node.fabric.routing_efficiency = 1.0;
  e->topology.inter_node.fabric.placement = PLACEMENT_PACKED;
  e->topology.inter_node.fabric.background.load = 0;
  e->topology.inter_node.fabric.background.pattern = BACKGROUND_STEADY;
  e->topology.inter_node.fabric.background.seed = 1;
  e->topology.variability.seed = 1;
  e->topology.variability.gpu_speed_spread = LEDGER (GPU_SPEED_SPREAD);
  e->topology.inter_node.fabric.background.congestion_exponent = SPEC_UNSET;
  e->topology.host.pcie_bandwidth = SPEC_UNSET;
  e->topology.host.memory_bytes = SPEC_UNSET;
  e->topology.host.cpu_adam_params_per_s = SPEC_UNSET;
  e->topology.host.gpus_per_pcie_switch = 1;
  e->topology.host.kernel_launch_s = SPEC_UNSET;
  /* GPT-3 and Megatron train with dropout (--hidden-dropout and
   * --attention-dropout 0.1); MPT does not (attn_pdrop, resid_pdrop and
   * emb_pdrop default to 0 in llm-foundry's configuration_mpt.py). */
  e->model.dropout = TRUE;
  e->parallel.schedule = SCHEDULE_1F1B;
  e->parallel.virtual_stages = 1;
  e->parallel.gradient_bucketing = -1;   /* the framework's (plan.h) */
  e->parallel.tp_overlap = TRUE;
  e->zero.stage = 0;
  e->zero.offload = OFFLOAD_NONE;
  e->training.precision = PRECISION_BF16;
  e->training.recompute = RECOMPUTE_NONE;
  /* training.activation_checkpointing stays all false: DeepSpeed's own
   * defaults (activation_checkpointing/config.py, v0.6.0) and
   * Megatron-DeepSpeed's, whose flags are store_true (megatron/
   * arguments.py, _add_activation_checkpoint_args). */
  e->training.tokens = SPEC_UNSET;
  e->compute.mfu = SPEC_UNSET;
  e->compute.matmul_efficiency = SPEC_UNSET;
  e->compute.hbm_efficiency = SPEC_UNSET;
  e->cost.gpu_hour_usd = 1.5;
  e->framework = framework_default ();
  e->topology.storage.bandwidth = SPEC_UNSET;
  e->topology.storage.read_bandwidth = SPEC_UNSET;
  e->topology.storage.node_bandwidth = SPEC_UNSET;
  /* Chinchilla's compute-optimal ratio (Hoffmann et al. 2022, "Training
   * Compute-Optimal Large Language Models", arXiv:2203.15556, Table 3:
   * Approach 1's projected tokens for 400M to 10T parameters, 20.0 to 22.4
   * a parameter, e.g. 20.2B tokens for 1B; the paper states no ratio in
   * words, and Chinchilla itself is 70B on 1.4T tokens, section 1). */
  e->training.tokens_per_parameter = 20;
  e->training.moe_imbalance = 1;
  /* Failure rates from a 54-day snapshot of Llama 3 405B's pre-training,
   * taken as on 16,384 H100 in 2,048 nodes of 8 (see LLAMA3_* above): 419
   * unexpected interruptions, 58.7 % of them GPU issues (Dubey et al.
   * 2024, "The Llama 3 Herd of Models", section 3.3.4 and Table 5). Were
   * fewer GPUs running, the rates per GPU would be higher. That is 2.0e-5
   * interruptions per GPU-hour in all (a per-GPU MTBF of 50,700 hours,
   * 5.8 years); the GPU issues give 1.16e-5 per GPU-hour, and the rest
   * (network, host, software) 6.5e-5 per node-hour. */
  e->reliability.gpu_failures_per_hour =
    LLAMA3_GPU_SHARE * LLAMA3_INTERRUPTIONS / (LLAMA3_HOURS * LLAMA3_GPUS);
  e->reliability.node_failures_per_hour =
    (1 - LLAMA3_GPU_SHARE) * LLAMA3_INTERRUPTIONS
    / (LLAMA3_HOURS * LLAMA3_GPUS / LLAMA3_GPUS_PER_NODE);
  /* A hung collective is found when the NCCL watchdog times out: 10
   * minutes, PyTorch's default for NCCL process groups since 2.2
   * (torch/distributed/constants.py's default_pg_nccl_timeout, from
   * kProcessGroupNCCLDefaultTimeout in c10d/ProcessGroupNCCL.hpp; PyTorch
   * PRs 110947 and 113094, 2023), and Megatron-LM's own
   * --distributed-timeout-minutes default (10). PyTorch 2.1 and older
   * applied default_pg_timeout, 30 minutes, to NCCL too. */
  e->reliability.detection_s = 600;
  /* An assumption, not a measurement: 10 minutes to requeue the job,
   * start its processes and build its NCCL communicators. */
  e->reliability.restart_s = 600;
  e->reliability.checkpoint_interval_s = SPEC_UNSET;
  /* Enough runs for the mean's standard error to be a small fraction of
   * the spread between p10 and p90. */
  e->reliability.trials = 1000;
  e->reliability.seed = 1;
  /* An A100 SXM4's maximum TDP, 400 W (NVIDIA A100 Tensor Core GPU
   * datasheet: "400W TDP for standard configuration"; the HGX A100-80GB
   * custom-thermal-solution SKU allows up to 500 W), drawn while it
   * computes; set 700 for an H100 SXM5 (NVIDIA H100 datasheet: "Up to
   * 700W (configurable)"). */
  e->energy.gpu_compute_w = 400;
  /* Assumptions, not measurements: half the TDP while a GPU's copy
   * engines and a few SMs move a collective, and 60 W idle (what
   * nvidia-smi shows of an idle A100 SXM4 with its memory clocked up). */
  e->energy.gpu_communication_w = 200;
  e->energy.gpu_idle_w = 60;
  /* A DGX A100 draws 6.5 kW at most (NVIDIA DGX A100 datasheet, "System
   * power usage: 6.5 kW max"), 3.2 kW of it for its eight GPUs at 400 W:
   * the other 3.3 kW (CPUs, NVSwitches, NICs, fans) taken whole, an upper
   * bound. */
  e->energy.node_w = 3300;
  /* Google's fleet-wide PUE, 1.10: "In 2022, the average annual power
   * usage effectiveness (PUE) for our global fleet of data centers was
   * 1.10", against an industry average of 1.55 (Google 2023 Environmental
   * Report, on fiscal 2022; the 2024 report gives 1.10 again for 2023,
   * against 1.58). Older or smaller facilities run higher. */
  e->energy.pue = 1.1;
  e->energy.grid_g_co2_per_kwh = SPEC_UNSET;
}

/* Where training.KEY is given in ROOT, else ROOT itself: the place of an
 * error about it. */
static YMark
training_mark (const YNode *root, const char *key)
{
  const YPair *t = ytree_map_find (root, "training");
  const YPair *at = t ? ytree_map_find (t->value, key) : NULL;
  return at ? at->value->mark : root->mark;
}

/* training.attention flash3 and cudnn are priced from H100 measurements
 * (hw/device.c), and FlashAttention-3 runs on Hopper only. Left out (and
 * flash_attention too), it is the framework's on a Hopper device in a
 * 16-bit run (FrameworkProfile.hopper_attention; fp8 is bf16 here), else
 * unfused: TransformerEngine's fused and flash backends take fp16 and
 * bf16 only, and fp32 falls back to its unfused attention
 * (get_attention_backend, v1.11). */
gboolean
config_attention (const YNode *root, ExperimentSpec *e, GError **error)
{
  const YPair *t = ytree_map_find (root, "training");
  Precision run = e->training.precision;
  if ((!t || (!ytree_map_find (t->value, "attention")
              && !ytree_map_find (t->value, "flash_attention")))
      && e->topology.gpu.generation >= GENERATION_HOPPER
      && (run == PRECISION_BF16 || run == PRECISION_FP16))
    e->training.attention = e->framework->hopper_attention;
  Attention a = e->training.attention;
  if ((a != ATTENTION_FLASH3 && a != ATTENTION_CUDNN)
      || e->topology.gpu.generation >= GENERATION_HOPPER)
    return TRUE;
  ytree_set_error (error, training_mark (root, "attention"),
                   "training.attention: %s is measured on Hopper GPUs only, "
                   "and %s is generation %s; valid here: unfused, flash1, "
                   "flash1-triton or flash2",
                   spec_enum_name (SPEC_ENUM_ATTENTION, a),
                   e->topology.gpu.name ? e->topology.gpu.name : "this device",
                   spec_enum_name (SPEC_ENUM_GENERATION,
                                   e->topology.gpu.generation));
  return FALSE;
}

/* training.precision: fp8 (graph/fp8.h) is bf16 mixed precision with the
 * linear layers' GEMMs in fp8: everything but those GEMMs sees bf16, so
 * the precision is kept as bf16 and the flag set. The device must give an
 * fp8 peak (peak.fp8): an A100 has no FP8 tensor cores. */
gboolean
config_fp8 (const YNode *root, ExperimentSpec *e, GError **error)
{
  if (e->training.precision != PRECISION_FP8)
    return TRUE;
  if (e->topology.gpu.peak_flops[PRECISION_FP8] <= 0)
    {
      ytree_set_error (error, training_mark (root, "precision"),
                       "training.precision: fp8 needs a device with an FP8 "
                       "rate (peak.fp8), and %s gives none; valid here: fp32, "
                       "tf32, fp16 or bf16, or a device such as h100-sxm5-80gb",
                       e->topology.gpu.name ? e->topology.gpu.name
                                            : "the device");
      return FALSE;
    }
  e->training.fp8 = TRUE;
  e->training.precision = PRECISION_BF16;
  return TRUE;
}

/* The framework's ways for the keys the file leaves out (ROOT, the
 * experiment's tree): how it pads the vocabulary, overlaps TP
 * communication, accumulates gradients and in what precision it reduces
 * them, and its buckets, which hold gradients in that precision. (Its DP
 * overlap depends on the ZeRO stage, which search varies: plan_dp_overlaps
 * decides it as the plan runs.) A reduction precision given must be fp32
 * or the run's: frameworks cast gradients up for the reduction, never
 * across. */
gboolean
config_framework_defaults (const YNode *root, ExperimentSpec *e, GError **error)
{
  const YPair *par = ytree_map_find (root, "parallel");
  const YNode *p = par ? par->value : NULL;
  const FrameworkProfile *f = e->framework;
  Precision run = e->training.precision;
  const YPair *reduce = p ? ytree_map_find (p, "grad_reduce_precision") : NULL;

  if (e->model.vocab_divisible_by == 0 && f->vocab_as_given)
    e->model.vocab_divisible_by = 1;
  if (!p || !ytree_map_find (p, "tp_overlap"))
    e->parallel.tp_overlap = f->tp_overlap;
  if (!p || !ytree_map_find (p, "grad_accumulation"))
    e->parallel.grad_accumulation = framework_grad_accumulation (f, run);
  if (!reduce)
    e->parallel.grad_reduce_precision = framework_grad_reduce_precision (f, run);
  else if (e->parallel.grad_reduce_precision != PRECISION_FP32
           && e->parallel.grad_reduce_precision != run)
    {
      ytree_set_error (error, reduce->value->mark,
                       "parallel.grad_reduce_precision: %s in a %s run; valid: "
                       "fp32 or the run's precision (training.precision: %s)",
                       spec_enum_name (SPEC_ENUM_PRECISION,
                                       e->parallel.grad_reduce_precision),
                       spec_enum_name (SPEC_ENUM_PRECISION, run),
                       spec_enum_name (SPEC_ENUM_PRECISION, run));
      return FALSE;
    }
  if (e->parallel.ep == 0)
    e->parallel.ep = 1;
  if (e->parallel.cp == 0)
    e->parallel.cp = 1;
  if (e->parallel.etp == 0)
    e->parallel.etp = f->deepspeed_moe ? 1 : e->parallel.tp;
  if (!p || !ytree_map_find (p, "bucket_size"))
    e->parallel.bucket_bytes
      = framework_bucket_bytes (f, e->parallel.grad_reduce_precision);
  return TRUE;
}
