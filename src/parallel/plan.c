/* plan.c: plan rules and the memory model; see plan.h. */
#include "parallel/plan.h"
#include "base/errors.h"
#include "base/ledger.h"
#include "base/text.h"
#include "config/framework.h"
#include "graph/cp.h"
#include "graph/moe.h"
#include "graph/fp8.h"
#include "graph/transformer.h"
#include "hw/host.h"

/* ---- rules ------------------------------------------------------------ */

/* Appends one violated rule to the list, prefixed by where the value was
 * written when it came from a file. */
static void G_GNUC_PRINTF (3, 4)
violation (GString *list, const char *where, const char *fmt, ...)
{
  va_list ap;
  g_string_append (list, "\n  ");
  if (where != NULL)
    g_string_append_printf (list, "%s: ", where);
  va_start (ap, fmt);
  g_autofree char *rule = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  /* The message keeps its lines; a name in a rule is the input's, shown
   * (base/text.h) on the rule's line. */
  text_append_shown (list, rule);
}

double
plan_training_tokens (const ExperimentSpec *e)
{
  const TrainingSpec *t = &e->training;
  if (t->tokens > 0)
    return t->tokens;
  return t->tokens == SPEC_CHINCHILLA
         ? t->tokens_per_parameter * plan_model_params (&e->model) : 0;
}

/* A run of plan's is whole steps, checkpointed between them: fewer
 * tokens than one step (1e-320) printed 0 days and a NaN closed form.
 * (run's days to train stay a plain proportion: 0.0 days.) */
char *
plan_tokens_problem (const ExperimentSpec *e)
{
  double step_tokens = (double) e->parallel.global_batch * e->model.seq_len;
  double tokens = plan_training_tokens (e);
  if (e->training.tokens == SPEC_UNSET || tokens >= step_tokens)
    return NULL;
  return g_strdup_printf ("training.tokens (%.3g) is less than one step's %.0f "
                          "(global_batch %d x seq_len %d): a run trains at least "
                          "a step", tokens, step_tokens, e->parallel.global_batch,
                          e->model.seq_len);
}

int
plan_dp (const ExperimentSpec *e)
{
  if (e->parallel.dp > 0)
    return e->parallel.dp;
  return e->gpus / MAX (1, e->parallel.tp * e->parallel.pp
                          * MAX (e->parallel.cp, 1));
}

static gboolean
fail_if_any (GString *list, const SpecMarks *marks, GError **error)
{
  if (list->len == 0)
    return TRUE;
  g_autofree char *file = text_shown (marks->file);   /* base/text.h */
  g_set_error (error, TS_ERROR, TS_ERROR_PLAN,
               "%s%sthis plan cannot run:%s",
               file, marks->file ? ": " : "", list->str);
  return FALSE;
}

/* One rule of the framework broken: where the value was written, the
 * framework, what it cannot run, why (its code), and what would run. */
static void
refuse (GString *list, const ExperimentSpec *e, const char *where,
        const char *what, const char *why, const char *valid)
{
  g_autofree char *label = framework_label (e->framework);
  violation (list, where, "framework %s (%s) cannot run %s: %s; valid: %s",
             label, e->framework->what, what, why, valid);
}

/* A parallel.KEY flag set to true (written at WHERE) that RULE of the
 * framework allows; else refused, why being RULE's or, unset, that the
 * flag is FLAG of Megatron-Core's VERSION. */
static gboolean
flag_allowed (GString *list, const ExperimentSpec *e, const FrameworkRule *rule,
              const char *where, const char *key, const char *flag,
              const char *version)
{
  if (rule->allowed)
    return TRUE;
  g_autofree char *what = g_strdup_printf ("parallel.%s", key);
  g_autofree char *why = g_strdup_printf (
    "it is Megatron-Core's %s (megatron/training/arguments.py, %s)", flag,
    version);
  g_autofree char *valid = g_strdup_printf ("%s: false", key);
  refuse (list, e, where, what, rule->why ? rule->why : why, valid);
  return FALSE;
}

/* The options of training.activation_checkpointing set, as
 * "partition_activations, cpu_checkpointing" (owned); NULL when none. */
static char *
checkpointing_options (const ActivationCheckpointing *ac)
{
  const struct { gboolean on; const char *key; } options[] = {
    { ac->partition_activations, "partition_activations" },
    { ac->cpu_checkpointing, "cpu_checkpointing" },
    { ac->contiguous_memory_optimization, "contiguous_memory_optimization" },
    { ac->synchronize_checkpoint_boundary, "synchronize_checkpoint_boundary" },
  };
  GString *s = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    if (options[i].on)
      {
        s = s ? g_string_append (s, ", ") : g_string_new (NULL);
        g_string_append (s, options[i].key);
      }
  return s ? g_string_free (s, FALSE) : NULL;
}

/* What the experiment's framework cannot run (framework.h). */
static void
framework_rules (GString *list, const ExperimentSpec *e)
{
  const FrameworkProfile *f = e->framework;
  const ParallelSpec *p = &e->parallel;
  const SpecMarks *mk = &e->marks;
  int zs = e->zero.stage;
  char what[96];

  if (f->max_tp > 0 && p->tp > f->max_tp)
    {
      g_snprintf (what, sizeof what, "tp %d", p->tp);
      refuse (list, e, mk->tp, what, f->tp_why, "tp 1");
    }
  if (p->pp > 1 && !f->pipeline.allowed)
    {
      g_snprintf (what, sizeof what, "pp %d", p->pp);
      refuse (list, e, mk->pp, what, f->pipeline.why, "pp 1");
    }
  if ((p->virtual_stages > 1 || p->schedule == SCHEDULE_INTERLEAVED)
      && !f->interleaved.allowed)
    refuse (list, e, p->virtual_stages > 1 && mk->virtual_stages ? mk->virtual_stages
                                                                 : mk->schedule,
            "the interleaved schedule", f->interleaved.why,
            "schedule 1f1b, virtual_stages 1");
  if (p->sequence_parallel && p->tp > 1 && !f->sequence_parallel.allowed)
    refuse (list, e, mk->sequence_parallel, "sequence parallelism",
            f->sequence_parallel.why, "sequence_parallel: false");
  if (p->param_gather_overlap
      && flag_allowed (list, e, &f->param_gather_overlap,
                       mk->param_gather_overlap, "param_gather_overlap",
                       "--overlap-param-gather", "core_r0.8.0")
      && (zs != 1 || !plan_dp_overlaps (e)))
    violation (list, mk->param_gather_overlap, "param_gather_overlap "
               "needs the distributed optimizer and --overlap-grad-reduce "
               "(megatron/training/arguments.py, core_r0.8.0): valid: "
               "zero.stage 1 with gradient_bucketing: true, or "
               "param_gather_overlap: false");
  if (p->tp_comm_overlap
      && flag_allowed (list, e, &f->tp_comm_overlap, mk->tp_comm_overlap,
                       "tp_comm_overlap", "--tp-comm-overlap", "core_v0.12.0")
      && !(p->sequence_parallel && p->tp > 1))
    violation (list, mk->tp_comm_overlap, "tp_comm_overlap overlaps the "
               "sequence-parallel all-gathers and reduce-scatters with the "
               "GEMMs (megatron/training/arguments.py asserts "
               "sequence_parallel, core_v0.12.0): valid: tp > 1 with "
               "sequence_parallel: true, or tp_comm_overlap: false");
  if (p->moe_shared_expert_overlap
      && flag_allowed (list, e, &f->moe_shared_expert_overlap,
                       mk->moe_shared_expert_overlap, "moe_shared_expert_overlap",
                       "--moe-shared-expert-overlap", "core_r0.10.0")
      && (e->model.experts == 0 || e->model.shared_experts == 0))
    violation (list, mk->moe_shared_expert_overlap,
               "moe_shared_expert_overlap overlaps an MoE layer's shared "
               "experts with its all-to-alls (megatron/core/transformer/moe/"
               "shared_experts.py, core_r0.10.0): valid: a model with "
               "shared_experts, or moe_shared_expert_overlap: false");
  if (e->training.recompute == RECOMPUTE_SELECTIVE
      && !f->selective_recompute.allowed)
    refuse (list, e, mk->recompute, "selective recompute", f->selective_recompute.why,
            "recompute none or full");
  if (zs > f->max_zero || (zs == 1 && !f->zero1))
    {
      /* The stages it runs: 0 to max_zero, but 1 where it has none (FSDP). */
      g_autoptr (GString) valid = g_string_new ("zero.stage 0");
      int last = f->max_zero;
      for (int s = 1; s <= last; s++)
        if (s != 1 || f->zero1)
          g_string_append_printf (valid, "%s%d", s == last ? " or " : ", ", s);
      g_snprintf (what, sizeof what, "ZeRO stage %d", zs);
      refuse (list, e, mk->zero_stage, what, f->zero_why, valid->str);
    }
  else if (p->pp > 1 && zs > f->max_zero_with_pp)
    {
      g_snprintf (what, sizeof what, "ZeRO stage %d with pp %d", zs, p->pp);
      refuse (list, e, mk->zero_stage, what, f->zero_pp_why,
              "zero.stage 0 or 1 with pp > 1, or pp 1");
    }
  g_autofree char *checkpointing = checkpointing_options (
    &e->training.activation_checkpointing);
  if (checkpointing && !f->deepspeed_checkpointing)
    {
      g_autofree char *options = g_strdup_printf (
        "training.activation_checkpointing (%s)", checkpointing);
      refuse (list, e, mk->activation_checkpointing, options,
              "the options are those of DeepSpeed's CheckpointFunction "
              "(deepspeed/runtime/activation_checkpointing/checkpointing.py)",
              "framework megatron-deepspeed or deepspeed, or the options "
              "all false");
    }
  if (e->model.experts > 0 && !f->moe.allowed)
    refuse (list, e, mk->experts, "a mixture of experts", f->moe.why,
            "a dense model (no model.experts)");
  else if (e->model.experts > 0 && p->etp != 1 && p->etp != p->tp
           && !f->expert_tp.allowed)
    {
      g_snprintf (what, sizeof what, "etp %d with tp %d", p->etp, p->tp);
      refuse (list, e, mk->etp, what, f->expert_tp.why, "etp 1 or tp");
    }
  if (e->zero.offload != OFFLOAD_NONE && !f->offload.allowed)
    refuse (list, e, mk->offload, "CPU offload", f->offload.why,
            "zero.offload none");
  else if (e->zero.offload != OFFLOAD_NONE && f->offload_whole
           && (e->zero.offload != OFFLOAD_OPTIMIZER_PARAMS || zs != 3))
    refuse (list, e, mk->offload, "the optimizer offloaded alone",
            f->offload_whole, "zero.offload optimizer+params with "
            "zero.stage 3, or none");
}

/* Expert parallelism's sizes. Megatron-Core (megatron/core/parallel_state.py,
 * initialize_model_parallel, core_r0.10.0) builds the expert groups over
 * the same ranks in the order etp, ep, expert-dp, pp: etp x ep must divide
 * a stage's tp x dp ranks, the rest of which form the expert-data-parallel
 * group (the ranks that hold the same experts); moe_layer.py asserts that
 * ep divides the experts. DeepSpeed-MoE (deepspeed/utils/groups.py,
 * _create_expert_and_data_parallel, v0.9.5) carves ep out of dp. */
static void
moe_rules (GString *list, const ExperimentSpec *e, int dp)
{
  const ParallelSpec *p = &e->parallel;
  const ModelSpec *m = &e->model;
  const SpecMarks *mk = &e->marks;

  if (m->experts == 0)
    {
      if (p->ep > 1)
        violation (list, mk->ep, "parallel.ep %d needs a mixture of experts "
                   "(model.experts); valid for a dense model: ep 1", p->ep);
      return;
    }
  if (m->experts % p->ep != 0)
    violation (list, mk->ep, "ep %d must divide the %d experts (valid ep: a "
               "divisor of %d)", p->ep, m->experts, m->experts);
  if (m->moe_ffn_hidden % p->etp != 0)
    violation (list, mk->etp, "etp %d must divide moe_ffn_hidden %d",
               p->etp, m->moe_ffn_hidden);
  if (dp <= 0)
    return;
  if (e->framework->deepspeed_moe)
    {
      if (dp % p->ep != 0)
        violation (list, mk->ep, "ep %d must divide dp %d: DeepSpeed-MoE's "
                   "expert-parallel groups are carved out of the data-parallel "
                   "ranks (valid ep: a divisor of %d and of the %d experts)",
                   p->ep, dp, dp, m->experts);
    }
  else if (((int64_t) p->tp * dp) % ((int64_t) p->etp * p->ep) != 0)
    violation (list, mk->ep, "etp x ep = %d x %d must divide a stage's tp x dp "
               "= %d x %d ranks, which Megatron-Core's expert groups partition "
               "(valid: etp x ep a divisor of %d)", p->etp, p->ep, p->tp, dp,
               p->tp * dp);
}

/* Megatron-Core's MoE layer will not train with tensor parallelism but
 * without sequence parallelism: MoELayer.forward raises ValueError
 * ("performance may degrade if MoE and tensor parallelism are enabled
 * without also enabling sequence parallelism", megatron/core/transformer/
 * moe/moe_layer.py, core_r0.8.0 to core_v0.14.0). DeepSpeed-MoE's layers
 * have no sequence parallelism to ask for. */
static void
moe_sp_rule (GString *list, const ExperimentSpec *e)
{
  const ParallelSpec *p = &e->parallel;
  if (e->model.experts == 0 || e->framework->deepspeed_moe
      || !e->framework->moe.allowed || p->tp <= 1 || p->sequence_parallel)
    return;
  violation (list, e->marks.sequence_parallel ? e->marks.sequence_parallel
                                              : e->marks.tp,
             "a mixture of experts with tp %d needs sequence parallelism: "
             "Megatron-Core's MoE layer raises an error in training "
             "without it (megatron/core/transformer/moe/moe_layer.py, "
             "core_r0.8.0 to core_v0.14.0); valid: sequence_parallel: "
             "true, or tp 1", p->tp);
}

/* Context parallelism (graph/cp.h, Megatron-Core's
 * --context-parallel-size, core_r0.10.0): the sequence splits into 2 cp
 * equal chunks (TransformerEngine's ring attention gives each rank chunks
 * r and 2cp - 1 - r), attention must be a fused kernel (TransformerEngine
 * runs context parallelism only in its flash and fused backends,
 * transformer_engine/pytorch/attention.py v1.11), Ulysses needs the
 * heads of a TP rank to divide by cp (DeepSpeed's DistributedAttention
 * scatters them), and a mixture of experts with cp is not modelled. DP
 * (given or derived) is checked against tp x cp x pp by plan_check. */
static void
cp_rules (GString *list, const ExperimentSpec *e)
{
  const ParallelSpec *p = &e->parallel;
  const ModelSpec *m = &e->model;
  const SpecMarks *mk = &e->marks;
  int cp = MAX (p->cp, 1);
  if (cp == 1)
    return;
  if (m->seq_len % (2 * cp) != 0)
    {
      g_autoptr (GString) valid = g_string_new (NULL);
      for (int c = 1, n = 0; c <= MIN (e->gpus, m->seq_len / 2) && n < 6; c++)
        if (m->seq_len % (2 * c) == 0)
          g_string_append_printf (valid, "%s%d", n++ ? ", " : "", c);
      violation (list, mk->cp, "cp %d must split seq_len %d into 2 x cp = %d "
                 "equal chunks (valid cp: %s, ...)", cp, m->seq_len, 2 * cp,
                 valid->str);
    }
  if (e->training.attention == ATTENTION_UNFUSED)
    violation (list, mk->training ? mk->training : mk->cp, "cp %d needs a "
               "fused attention kernel (training.attention: flash1, flash2, "
               "flash3 or cudnn; valid with unfused attention: cp 1)", cp);
  if (p->cp_kind == CP_ULYSSES && (m->heads / p->tp) % cp != 0)
    violation (list, mk->cp_kind ? mk->cp_kind : mk->cp, "cp_kind ulysses "
               "needs cp %d to divide a TP rank's %d heads (heads %d / tp "
               "%d); valid: cp a divisor of %d, or cp_kind p2p", cp,
               m->heads / p->tp, m->heads, p->tp, m->heads / p->tp);
  else if (p->cp_kind == CP_ULYSSES && (m->kv_heads / p->tp) % cp != 0)
    violation (list, mk->cp_kind ? mk->cp_kind : mk->cp, "cp_kind ulysses "
               "needs cp %d to divide a TP rank's %d key/value heads; "
               "valid: cp a divisor of %d, or cp_kind p2p", cp,
               m->kv_heads / p->tp, m->kv_heads / p->tp);
  if (m->experts > 0)
    violation (list, mk->cp, "cp %d with a mixture of experts is not "
               "modelled yet (valid for an MoE model: cp 1)", cp);
}

gboolean
plan_check (const ExperimentSpec *e, GError **error)
{
  const ParallelSpec *p = &e->parallel;
  const ModelSpec *m = &e->model;
  const TopologySpec *t = &e->topology;
  const SpecMarks *mk = &e->marks;
  g_autoptr (GString) list = g_string_new (NULL);

  /* No size may exceed the GPU count it splits: this also keeps every
   * product below in range. */
  /* Context parallelism (cp_rules) multiplies the ranks of a stage's
   * tensor-parallel groups: its rules speak of tp x cp, where cp is 1
   * they read as before. */
  int cp = MAX (p->cp, 1);
  const char *tpc = cp > 1 ? "tp x cp" : "tp";
  g_autofree char *tpc_value = cp > 1 ? g_strdup_printf ("%d x %d", p->tp, cp)
                                      : g_strdup_printf ("%d", p->tp);
  if (p->tp > e->gpus || p->pp > e->gpus || p->dp > e->gpus || cp > e->gpus
      || (int64_t) p->tp * cp * p->pp * MAX (p->dp, 1) > e->gpus)
    {
      violation (list, mk->gpus, "%s x pp x dp = %s x %d x %d is more than "
                 "the %d GPUs", tpc, tpc_value, p->pp,
                 MAX (p->dp, 1), e->gpus);
      return fail_if_any (list, mk, error);
    }
  if ((int64_t) p->micro_batch * MAX (p->dp, 1) > p->global_batch)
    {
      violation (list, mk->micro_batch, "micro_batch x dp = %d x %d is more "
                 "than global_batch %d", p->micro_batch, MAX (p->dp, 1),
                 p->global_batch);
      return fail_if_any (list, mk, error);
    }
  /* A dp derived from gpus that do not divide says nothing more. */
  int dp = p->dp > 0 || e->gpus % (p->tp * cp * p->pp) == 0 ? plan_dp (e) : 0;

  /* Without head_dim a head is hidden / heads wide. */
  if (m->head_dim == 0 && m->hidden % m->heads != 0)
    violation (list, mk->heads, "the %d heads must divide hidden %d (or "
               "give model.head_dim)", m->heads, m->hidden);
  if (m->heads % p->tp != 0)
    violation (list, mk->tp, "tp %d must divide the %d attention heads "
               "(valid tp: a divisor of %d)", p->tp, m->heads, m->heads);
  else if (m->kv_heads % p->tp != 0)
    violation (list, mk->tp, "tp %d must divide the %d key/value heads",
               p->tp, m->kv_heads);
  if (m->ffn_hidden % p->tp != 0)
    violation (list, mk->tp, "tp %d must divide ffn_hidden %d", p->tp,
               m->ffn_hidden);
  moe_rules (list, e, dp);
  moe_sp_rule (list, e);
  const SpecIntList *sl = &p->stage_layers;
  if (sl->len > 0)
    {
      int64_t sum = 0;
      for (int i = 0; i < sl->len; i++)
        sum += sl->v[i];
      if (sl->len != p->pp)
        violation (list, mk->stage_layers, "stage_layers lists %d stages; "
                   "pp is %d", sl->len, p->pp);
      else if (sum != m->layers)
        violation (list, mk->stage_layers, "stage_layers add up to %"
                   G_GINT64_FORMAT " layers; the model has %d", sum,
                   m->layers);
      if (p->virtual_stages > 1)
        violation (list, mk->stage_layers, "stage_layers needs "
                   "virtual_stages: 1 (each stage is one chunk of layers)");
    }
  else if (m->layers % p->pp != 0)
    violation (list, mk->pp, "pp %d must divide the %d layers "
               "(valid pp: a divisor of %d; or list each stage's layers "
               "in parallel.stage_layers)", p->pp, m->layers, m->layers);
  if (p->dp > 0 && p->tp * cp * p->pp * p->dp != e->gpus)
    violation (list, mk->dp, "gpus %d must equal %s x pp x dp = %s x %d x %d"
               " = %d", e->gpus, tpc, tpc_value, p->pp, p->dp,
               p->tp * cp * p->pp * p->dp);
  else if (p->dp == 0 && e->gpus % (p->tp * cp * p->pp) != 0)
    violation (list, cp > 1 ? mk->cp : mk->gpus, "gpus %d must be a multiple "
               "of %s x pp = %d", e->gpus, tpc, p->tp * cp * p->pp);
  cp_rules (list, e);
  if (dp > 0 && p->global_batch % dp != 0)
    violation (list, mk->global_batch, "global_batch %d must be a multiple "
               "of dp %d", p->global_batch, dp);
  else if (dp > 0 && p->micro_batch > 0
           && p->global_batch % ((int64_t) p->micro_batch * dp) != 0)
    violation (list, mk->global_batch, "global_batch %d must be a multiple "
               "of micro_batch x dp = %d x %d", p->global_batch,
               p->micro_batch, dp);
  if (p->tp > t->gpus_per_node && !p->tp_across_nodes)
    violation (list, mk->tp, "tp %d is larger than a node (%d GPUs): set "
               "parallel.tp_across_nodes: true to allow it", p->tp,
               t->gpus_per_node);
  else if (p->tp <= t->gpus_per_node && t->gpus_per_node % p->tp != 0)
    violation (list, mk->tp, "tp %d must divide gpus_per_node %d", p->tp,
               t->gpus_per_node);
  else if (p->tp > t->gpus_per_node && p->tp % t->gpus_per_node != 0)
    violation (list, mk->tp, "tp %d across nodes must be a multiple of "
               "gpus_per_node %d", p->tp, t->gpus_per_node);
  if (e->gpus > t->gpus_per_node && t->inter_node.nics_per_node == 0)
    violation (list, mk->gpus, "%d GPUs need more than one node, but the "
               "topology has no inter_node section", e->gpus);
  if (e->gpus > t->gpus_per_node && e->gpus % t->gpus_per_node != 0)
    violation (list, mk->gpus, "gpus %d must fill whole nodes of %d",
               e->gpus, t->gpus_per_node);
  /* Spread placement deals the nodes over the fabric's groups: they must
   * hold them (config-topology.c has checked that the groups are given). */
  const FabricSpec *f = &t->inter_node.fabric;
  int64_t nodes = (e->gpus + t->gpus_per_node - 1) / t->gpus_per_node;
  if (f->placement == PLACEMENT_SPREAD && nodes > 1
      && nodes > (int64_t) f->groups * f->nodes_per_group)
    violation (list, mk->placement, "placement spread deals the job's %" G_GINT64_FORMAT
               " nodes (gpus %d) over the fabric's %d groups of %d nodes, which hold "
               "%" G_GINT64_FORMAT ": use at most %" G_GINT64_FORMAT " GPUs, more "
               "groups, or placement: packed", nodes, e->gpus, f->groups,
               f->nodes_per_group, (int64_t) f->groups * f->nodes_per_group,
               (int64_t) f->groups * f->nodes_per_group * t->gpus_per_node);
  if (t->variability.slow_nodes > nodes)
    violation (list, mk->slow_nodes, "variability.slow_nodes %d is more than the "
               "job's %" G_GINT64_FORMAT " nodes (gpus %d, %d a node): give at most %"
               G_GINT64_FORMAT, t->variability.slow_nodes, nodes, e->gpus,
               t->gpus_per_node, nodes);
  if (p->virtual_stages > 1 && p->schedule != SCHEDULE_INTERLEAVED)
    violation (list, mk->virtual_stages, "virtual_stages %d needs "
               "schedule: interleaved", p->virtual_stages);
  if (p->virtual_stages > 1 && p->pp == 1)
    violation (list, mk->virtual_stages, "virtual_stages %d needs a "
               "pipeline (pp > 1)", p->virtual_stages);
  /* With stage_layers, virtual stages are refused above. */
  if (p->virtual_stages > 1 && sl->len == 0
      && m->layers % (p->pp * p->virtual_stages) != 0)
    violation (list, mk->virtual_stages, "pp x virtual_stages = %d x %d "
               "must divide the %d layers", p->pp, p->virtual_stages,
               m->layers);
  /* ZeRO-Offload keeps the optimizer partitions on the host: DeepSpeed
   * offloads the optimizer from stage 1 and the parameters only with
   * stage 3 (ZeRO-Infinity). */
  const HostSpec *h = &t->host;
  if (e->zero.offload != OFFLOAD_NONE && e->zero.stage == 0)
    violation (list, mk->offload, "zero.offload %s needs zero.stage 1, 2 or "
               "3 (the offloaded optimizer is partitioned)",
               spec_enum_name (SPEC_ENUM_OFFLOAD, e->zero.offload));
  else if (e->zero.offload == OFFLOAD_OPTIMIZER_PARAMS && e->zero.stage != 3)
    violation (list, mk->offload, "zero.offload optimizer+params needs "
               "zero.stage 3 (valid with stage %d: none or optimizer)",
               e->zero.stage);
  gboolean no_cpu = host_cpu_adam_rate (h) == SPEC_UNSET;
  if (e->zero.offload != OFFLOAD_NONE
      && (h->pcie_bandwidth == SPEC_UNSET || h->memory_bytes == SPEC_UNSET
          || no_cpu))
    violation (list, mk->offload, "zero.offload %s needs the topology's host "
               "section with pcie_bandwidth, memory and cpu (or "
               "cpu_adam_params_per_s) (topology %s lacks%s%s%s)",
               spec_enum_name (SPEC_ENUM_OFFLOAD, e->zero.offload),
               t->name ? t->name : "(inline)",
               h->pcie_bandwidth == SPEC_UNSET ? " pcie_bandwidth" : "",
               h->memory_bytes == SPEC_UNSET ? " memory" : "",
               no_cpu ? " cpu" : "");
  if (e->zero.offload_delayed_update && e->zero.offload == OFFLOAD_NONE)
    violation (list, mk->offload_delayed_update, "zero.offload_delayed_update "
               "delays the CPU's optimizer step: it needs zero.offload "
               "optimizer or optimizer+params (or leave it false)");
  /* DeepSpeed's options act on the checkpoints of full recompute; its
   * configure() asserts partitioning for contiguous checkpointing, and
   * before 0.5.2 for CPU checkpointing too (framework.c). */
  const ActivationCheckpointing *ac = &e->training.activation_checkpointing;
  g_autofree char *checkpointing = checkpointing_options (ac);
  if (checkpointing && e->training.recompute != RECOMPUTE_FULL)
    violation (list, mk->activation_checkpointing, "training."
               "activation_checkpointing (%s) acts on the layers' checkpoints: "
               "it needs training.recompute: full, got %s (or set them all "
               "false)", checkpointing,
               spec_enum_name (SPEC_ENUM_RECOMPUTE, e->training.recompute));
  if (!ac->partition_activations
      && (ac->contiguous_memory_optimization
          || (ac->cpu_checkpointing
              && e->framework->cpu_checkpointing_partitioned)))
    {
      g_autofree char *label = framework_label (e->framework);
      violation (list, mk->activation_checkpointing, "%s needs "
                 "partition_activations: true under framework %s (DeepSpeed's "
                 "configure() asserts it, activation_checkpointing/"
                 "checkpointing.py)", ac->contiguous_memory_optimization
                 ? "contiguous_memory_optimization" : "cpu_checkpointing",
                 label);
    }
  if (ac->cpu_checkpointing
      && (h->pcie_bandwidth == SPEC_UNSET || h->memory_bytes == SPEC_UNSET))
    violation (list, mk->activation_checkpointing, "cpu_checkpointing needs "
               "the topology's host section with pcie_bandwidth and memory "
               "(topology %s lacks%s%s)", t->name ? t->name : "(inline)",
               h->pcie_bandwidth == SPEC_UNSET ? " pcie_bandwidth" : "",
               h->memory_bytes == SPEC_UNSET ? " memory" : "");
  framework_rules (list, e);
  return fail_if_any (list, mk, error);
}

gboolean
plan_make (Plan *plan, const ExperimentSpec *e, int micro_batch,
           int virtual_stages, GError **error)
{
  const ParallelSpec *p = &e->parallel;
  g_autoptr (GString) list = g_string_new (NULL);
  int cp = MAX (p->cp, 1), dp = plan_dp (e);
  *plan = (Plan) { e, e->gpus, p->tp, p->pp, dp * cp, micro_batch,
                   virtual_stages, 0, 0, cp };
  if (p->global_batch % ((int64_t) micro_batch * dp) != 0)
    violation (list, e->marks.micro_batch, "global_batch %d must be a "
               "multiple of micro_batch x dp = %d x %d", p->global_batch,
               micro_batch, dp);
  else
    plan->micro_batches = p->global_batch / (micro_batch * dp);
  if (p->stage_layers.len > 0 && virtual_stages != 1)
    violation (list, e->marks.virtual_stages, "stage_layers needs "
               "virtual_stages: 1, got %d", virtual_stages);
  else if (p->stage_layers.len == 0
           && e->model.layers % (p->pp * virtual_stages) != 0)
    violation (list, e->marks.virtual_stages, "pp x virtual_stages = %d x %d"
               " must divide the %d layers", p->pp, virtual_stages,
               e->model.layers);
  else
    plan->layers_per_chunk = e->model.layers / (p->pp * virtual_stages);
  /* Megatron's interleaved schedule walks micro-batches in groups of pp. */
  if (virtual_stages > 1 && plan->micro_batches % p->pp != 0)
    violation (list, e->marks.virtual_stages, "the interleaved schedule "
               "needs the %d micro-batches per replica to be a multiple of "
               "pp %d", plan->micro_batches, p->pp);
  return fail_if_any (list, &e->marks, error);
}

void
plan_balanced_stages (int layers, int pp, SpecIntList *out)
{
  g_return_if_fail (pp >= 1 && pp <= SPEC_MAX_LIST && pp <= layers);
  int base = layers / pp, extra = layers % pp;
  out->len = pp;
  /* The extra layers go to stages 1, 2, ... and, when every middle stage
   * has one, to stage 0: the embedding costs less than the head. */
  for (int s = 0; s < pp; s++)
    out->v[s] = base;
  for (int s = 1; s < pp - 1 && extra > 0; s++, extra--)
    out->v[s]++;
  if (extra > 0)
    out->v[0]++;
}

gboolean
plan_dp_overlaps (const ExperimentSpec *e)
{
  if (e->parallel.gradient_bucketing >= 0)
    return e->parallel.gradient_bucketing;
  return e->framework->dp_overlap || e->zero.stage == 3;
}

gboolean
plan_stages_share_nodes (const Plan *p)
{
  int gpn = p->spec->topology.gpus_per_node;
  return p->pp > 1 && p->gpus > gpn && ((int64_t) p->tp * p->dp) % gpn != 0;
}

int
plan_chunk_layers (const Plan *p, int stage)
{
  const SpecIntList *sl = &p->spec->parallel.stage_layers;
  return sl->len > 0 ? sl->v[stage] : p->layers_per_chunk;
}

int
plan_chunk_first_layer (const Plan *p, int stage, int chunk)
{
  const SpecIntList *sl = &p->spec->parallel.stage_layers;
  if (sl->len == 0)
    return (chunk * p->pp + stage) * p->layers_per_chunk;
  int first = 0;
  for (int s = 0; s < stage; s++)
    first += sl->v[s];
  return first;
}

/* ---- memory ------------------------------------------------------------
 * Korthikanti et al. 2022 (arXiv:2205.05198) section 4 and the ZeRO paper
 * (Rajbhandari 2020) section 3: mixed-precision Adam keeps 2 bytes of
 * weights, 2 of gradients and 12 of optimizer state (fp32 master, m, v)
 * per parameter. FRAMEWORK_BYTES: the CUDA context, cuBLAS workspace and
 * NCCL buffers, about 1 GiB in nvidia-smi on an idle PyTorch+NCCL process.
 * FRAGMENTATION: PyTorch's caching allocator reserves about 5 % more than
 * it hands out in steady-state training (torch.cuda.memory_reserved vs
 * memory_allocated). Both are assumptions (the ledger's rows). */

/* Activation bytes one layer keeps for one micro-batch until its backward
 * (Korthikanti eq. 1-2 and Table 2), for elements of w bytes: their 34 s b
 * h + 5 a s^2 b count 2-byte elements and three 1-byte dropout masks (two
 * of s b h, one of a s^2 b). With TP alone, the layer norms, the inputs of
 * QKV and FC1 and the masks (10 s b h) stay whole; SP splits them too.
 * A model without dropout keeps no masks, and of the scores only the
 * softmax's output (2 a s^2 b): the dropout's output is the same tensor.
 * Without Megatron's fused softmax (framework_fused_softmax), PyTorch's
 * softmax of 16-bit scores keeps its fp32 output (4 a s^2 b) and the copy
 * back to w bytes is kept too, as the dropout's output or for the next
 * GEMM; of fp32 scores, the same tensors as the fused kernel. */
static double
layer_activation_bytes (const ExperimentSpec *e, int b, double w,
                        gboolean whole)
{
  /* A context-parallel rank keeps its seq_len / cp tokens' (graph/cp.h). */
  double s = (double) e->model.seq_len / MAX (e->parallel.cp, 1);
  double h = e->model.hidden, a = e->model.heads;
  int t = e->parallel.tp;
  gboolean sp = e->parallel.sequence_parallel && t > 1;
  double k = w / 2;
  Recompute r = whole ? RECOMPUTE_NONE : e->training.recompute;
  /* Full recompute keeps the layer's input; DeepSpeed's
   * partition_activations keeps this rank's 1/t of it (checkpointing.py
   * partition_activations: a narrow of the flattened input, cloned). */
  if (r == RECOMPUTE_FULL)
    return 2 * k * s * b * h
           / (sp || e->training.activation_checkpointing.partition_activations
              ? t : 1);
  double masks = e->model.dropout ? 2 : 0;
  /* Of the 24 split by t, Q, K, V and the context (8) follow the query's
   * width (model.head_dim): p = heads x head_dim / h, 1 unless given.
   * K and V are counted query-wide, as the formula counts them without
   * head_dim too (grouped-query attention's narrower K and V are not
   * taken off). */
  double attn = e->model.head_dim > 0
    ? 8 * k * ((double) e->model.heads * e->model.head_dim / h - 1) : 0;
  double linear = sp ? (32 * k + masks + attn) / t
                     : 8 * k + masks + (24 * k + attn) / t;
  gboolean copy = w < 4 && !framework_fused_softmax (
    e->framework, e->training.precision, (int64_t) b * e->model.heads / t,
    e->model.seq_len);
  double kept = copy ? 4 + 2 * k + (e->model.dropout ? 1 : 0)
                     : e->model.dropout ? 4 * k + 1 : 2 * k;
  double scores = (r == RECOMPUTE_SELECTIVE
                   || e->training.attention != ATTENTION_UNFUSED)
                  ? 0 : kept * a * s / (h * t);
  return s * b * h * (linear + scores);
}

/* What an MoE layer keeps for backward beyond the dense layer of
 * layer_activation_bytes (none under full recompute, which keeps the
 * layer's input alone): the dense MLP's FC1 and activation outputs
 * (16 s b h / t bytes in 16 bits at ffn 4h: Korthikanti's 8 + 8) give way
 * to the experts' (moe_activation_bytes) and the shared experts'. */
static double
moe_extra_activations (const ExperimentSpec *e, const LayerShape *ls)
{
  if (ls->experts == 0 || e->training.recompute == RECOMPUTE_FULL)
    return 0;
  double sbh = (double) ls->s * ls->b * ls->h;
  double k = ls->cm->bytes_per_element / 2;
  double shared = (double) ls->shared_experts * ls->moe_ffn / (4.0 * ls->h);
  return moe_activation_bytes (ls) + (shared - 1) * 16 * k * sbh / ls->t;
}

/* Chunks of layers (plan_chunk_layers) whose activations stage s holds
 * at its peak, under the schedule. */
static int
chunks_in_flight (const Plan *p, int s)
{
  switch (p->spec->parallel.schedule)
    {
    case SCHEDULE_GPIPE:
      return p->micro_batches * p->virtual_stages;
    case SCHEDULE_INTERLEAVED:
      if (p->virtual_stages > 1)
        return p->micro_batches == p->pp
          ? p->micro_batches * p->virtual_stages
          : MIN ((p->pp - s - 1) * 2 + (p->virtual_stages - 1) * p->pp + 1,
                 p->micro_batches * p->virtual_stages);
      /* One chunk per stage is plain 1F1B. */
      G_GNUC_FALLTHROUGH;
    case SCHEDULE_1F1B:
    case SCHEDULE_N:
    default:
      return MIN (p->pp - s, p->micro_batches);
    }
}

/* The shape of the plan's layers, with the compute model CM it points
 * to (the run's precision gives the bytes of an element). */
static void
layer_shape (const Plan *p, ComputeModel *cm, LayerShape *ls)
{
  const ExperimentSpec *e = p->spec;
  compute_model_init (cm, &e->topology.gpu, &e->compute,
                      e->training.precision);
  transformer_layer_shape (ls, &e->model, p->tp, p->micro_batch,
                           e->parallel.sequence_parallel,
                           e->training.attention, cm);
  ls->ep = MAX (e->parallel.ep, 1);
  ls->etp = MAX (e->parallel.etp, 1);
  ls->imbalance = MAX (e->training.moe_imbalance, 1);
  ls->gshard = e->framework->deepspeed_moe;
  cp_layer_shape (ls, p->cp, e->parallel.cp_kind);
}

/* Of a model's layers, the share that are MoE layers (0 for a dense
 * model): a stage's layers count that share of MoE layers, whichever
 * they are (the dense layers a model puts first sit in the first stage:
 * a gap of a few percent of that stage's parameters). */
static double
moe_share (const ModelSpec *m)
{
  return m->experts > 0 ? (double) spec_moe_layers (m) / m->layers : 0;
}

/* The routed experts' parameters one rank of stage S holds: E / ep
 * experts, 1/etp of each, in each of its MoE layers. */
static double
stage_expert_params (const Plan *p, const LayerShape *ls, int s)
{
  if (ls->experts == 0)
    return 0;
  return plan_chunk_layers (p, s) * p->virtual_stages
         * moe_share (&p->spec->model) * moe_layer_expert_params (ls);
}

/* The ranks that hold the same experts (the expert-data-parallel group),
 * over which the experts' gradients are reduced and ZeRO shards their
 * state: Megatron-Core's tp x dp / (etp x ep) (parallel_state.py,
 * core_r0.10.0), DeepSpeed-MoE's dp / ep (groups.py, v0.9.5). */
int
plan_expert_dp (const Plan *p)
{
  const ParallelSpec *ps = &p->spec->parallel;
  int ep = MAX (ps->ep, 1), etp = MAX (ps->etp, 1);
  if (p->spec->model.experts == 0)
    return p->dp;
  if (p->spec->framework->deepspeed_moe)
    return MAX (p->dp / ep, 1);
  return MAX (p->tp * p->dp / (etp * ep), 1);
}

/* The parameters one TP rank of stage S holds: its layers, the
 * embedding on the first stage, the head on the last with the output
 * layer's weight (its own where untied; with pp > 1 its copy of a tied
 * word embedding: transformer_output_params). Of an MoE model's layers, the
 * MoE layers' replicated part (moe.h) and their experts
 * (stage_expert_params). */
static double
stage_params (const Plan *p, const LayerShape *ls, int s)
{
  double share = moe_share (&p->spec->model);
  double layer = (1 - share) * transformer_layer_params (ls)
                 + (share > 0 ? share * moe_layer_dense_params (ls) : 0);
  double params = plan_chunk_layers (p, s) * p->virtual_stages * layer
                  + stage_expert_params (p, ls, s);
  if (s == 0)
    params += transformer_embedding_params (ls);
  if (s == p->pp - 1)
    params += transformer_head_params (ls) + transformer_output_params (ls, p->pp);
  return params;
}

/* HOST_OPTIMIZER_BYTES, the host bytes per offloaded parameter (ZeRO-Offload, Ren 2021 section
 * 4.1): the fp32 master weight, Adam's m and v (12) and the fp32
 * gradient the CPU step reads (4); with the parameters offloaded too,
 * their half-precision copy (2) as well. */

/* DS03_LIVE_ELEMENTS: DeepSpeed 0.3's stage3_max_live_parameters and stage3_max_reuse_distance
 * defaults (v0.3.16 zero/stage3.py, FP16_DeepSpeedZeroOptimizer_Stage3),
 * in elements. */

void
plan_memory (const Plan *p, MemoryBreakdown *out)
{
  const ExperimentSpec *e = p->spec;
  ComputeModel cm;
  LayerShape ls;
  layer_shape (p, &cm, &ls);
  double w = cm.bytes_per_element;
  int zs = e->zero.stage;
  Offload off = e->zero.offload;
  /* Megatron-LM's mixed precision (its README's table of bytes a
   * parameter, NVIDIA/Megatron-LM 23.04, "distributed optimizer": 18 for
   * bf16 parameters with fp32 gradients, 20 for fp16 with fp16, against
   * the 16 above): its main_grad buffer has the reduction's precision
   * (fp32 in bf16, as arguments.py forces, model/distributed.py), and
   * where that is 16 bits its optimizer copies the gradients to fp32
   * beside the fp32 parameters for the step (optimizer.py
   * _copy_model_grads_to_main_grads: .float(), a copy only of a 16-bit
   * main_grad), which the distributed optimizer shards with them. That
   * copy lives from the step to the next zero_grad (set_to_none, at the
   * start of train_step), when the activations are gone: it raises the
   * peak only by what it exceeds them. */
  gboolean main_grad = e->framework->main_grad_buffer && w == 2;
  double grad_w = main_grad
    ? spec_precision_bytes (e->parallel.grad_reduce_precision) : w;
  double grad_copy = main_grad && grad_w < 4 ? 4 : 0;
  *out = (MemoryBreakdown) { 0 };
  out->capacity = e->topology.gpu.memory_bytes;
  /* ZeRO-3 holds the module being computed and the one prefetched (see
   * sim-build.c) whole, besides its shard of everything. */
  double module = MAX (transformer_layer_params (&ls),
                       MAX (transformer_embedding_params (&ls),
                            transformer_head_params (&ls)
                            + transformer_output_params (&ls, p->pp)));
  double live = 2 * module;
  if (e->framework->zero3_per_tensor)
    /* DeepSpeed 0.3 gathers tensor by tensor and frees each after its
     * linear layer (v0.3.16 zero/stage3.py, fetch_sub_module and
     * release_sub_module): whole at once are the tensor in use and what
     * its coordinator holds beside it, prefetched only while fewer than
     * max_live_parameters elements are whole and kept only when reused
     * within max_reuse_distance elements, both 1e9 by default. */
    live = MIN (live, LEDGER (DS03_LIVE_ELEMENTS) + transformer_largest_tensor (&ls));
  live = zs >= 3 && p->dp > 1 ? live * w : 0;
  gboolean to_host = e->training.activation_checkpointing.cpu_checkpointing;
  double host = 0;
  /* With fp8, TE saves the linear layers' inputs in FP8 (module/linear.py
   * _Linear.forward: the quantized input, its column-wise data kept for
   * the weight gradient), a byte an element instead of w: a dense
   * layer's, or in the share of MoE layers their attention's and
   * experts' (graph/moe.h). */
  double share = moe_share (&e->model);
  double fp8_saving = !e->training.fp8 ? 0
    : (1 - share) * fp8_activation_saving (&ls, w)
      + (share > 0 ? share * moe_fp8_activation_saving (&ls, w) : 0);

  for (int s = 0; s < p->pp; s++)
    {
      gboolean last = s == p->pp - 1;
      double params = stage_params (p, &ls, s);
      /* The experts' part is shared by the expert-data-parallel group. */
      double experts = stage_expert_params (p, &ls, s);
      int edp = plan_expert_dp (p);
      double dense = params - experts;
      double shard = dense / (zs >= 1 ? p->dp : 1)
                     + experts / (zs >= 1 ? edp : 1);
      MemoryBreakdown m = { 0 };
      /* Offloaded, the optimizer and (from stage 2) the gradient
       * partitions live on the host; with optimizer+params the weights
       * too, but for the live modules. */
      m.weights = off == OFFLOAD_OPTIMIZER_PARAMS ? live
                  : (dense / (zs >= 3 ? p->dp : 1)
                     + experts / (zs >= 3 ? edp : 1)) * w + live;
      /* With fp8, TE's FP8 copies of the linear weights (graph/fp8.h),
       * row-wise and transposed, in an MoE layer of its experts' too
       * (graph/moe.h). */
      if (e->training.fp8)
        {
          double copy = share > 0 ? share * 2 * moe_fp8_weights (&ls)
                                    + (1 - share) * fp8_weight_copy_bytes (&ls)
                                  : fp8_weight_copy_bytes (&ls);
          m.weights += plan_chunk_layers (p, s) * p->virtual_stages * copy;
        }
      m.gradients = off != OFFLOAD_NONE && zs >= 2 ? 0
                    : (dense / (zs >= 2 ? p->dp : 1)
                       + experts / (zs >= 2 ? edp : 1)) * grad_w;
      double checkpoint = layer_activation_bytes (e, p->micro_batch, w, FALSE)
                          - (e->training.recompute != RECOMPUTE_FULL
                             ? fp8_saving : 0)
                          + share * moe_extra_activations (e, &ls);
      double kept = chunks_in_flight (p, s) * plan_chunk_layers (p, s)
                    * checkpoint;
      /* DeepSpeed's cpu_checkpointing keeps the checkpoints on the host
       * (checkpointing.py: .cpu() in forward, back to the device before
       * the recompute): the GPU holds the one in flight. */
      m.activations = to_host ? checkpoint : kept;
      if (e->training.recompute != RECOMPUTE_NONE)
        /* The layer being recomputed holds its whole activations. */
        m.activations += layer_activation_bytes (e, p->micro_batch, w, TRUE)
                         - fp8_saving;
      m.optimizer = off != OFFLOAD_NONE ? 0
        : shard * (16 - 2 * w) + MAX (0, shard * grad_copy - m.activations);
      double other = LEDGER (FRAMEWORK_BYTES);
      if (last)
        /* At the loss's peak (CrossEntropy): Megatron's fp32 copy, which
         * becomes the softmax backward reads, and the logits' gradient it
         * returns; flash-attn's saved logits and the gradient its
         * backward (inplace_backward=False, llm-foundry's) allocates. */
        other += (double) p->micro_batch * ls.s * ls.vocab / p->tp
                 * (e->framework->cross_entropy
                    == CROSS_ENTROPY_VOCAB_PARALLEL ? w + 4 : 2 * w);
      if (plan_dp_overlaps (e) && p->dp > 1)
        other += 2 * e->parallel.bucket_bytes;
      double sum = m.weights + m.gradients + m.optimizer + m.activations
                   + other;
      m.other = other + LEDGER (FRAGMENTATION) * sum;
      m.total = sum + LEDGER (FRAGMENTATION) * sum;
      /* Every GPU of the node keeps its shard (and its checkpoints) on
       * the host; the stage with the largest stands for them all. */
      double on_host = to_host ? kept : 0;
      if (off != OFFLOAD_NONE)
        on_host += shard * (LEDGER (HOST_OPTIMIZER_BYTES)
                            + (off == OFFLOAD_OPTIMIZER_PARAMS ? w : 0));
      host = MAX (host, e->topology.gpus_per_node * on_host);
      if (m.total > out->total)
        {
          m.capacity = out->capacity;
          *out = m;
        }
    }
  out->host = host;
  if (off != OFFLOAD_NONE || to_host)
    out->host_capacity = e->topology.host.memory_bytes;
}

gboolean
plan_memory_fits (const MemoryBreakdown *m)
{
  return m->total <= m->capacity && m->host <= m->host_capacity;
}

char *
plan_memory_shortfall (const MemoryBreakdown *m)
{
  const double gib = 1024.0 * 1024 * 1024;
  char need[G_ASCII_DTOSTR_BUF_SIZE], have[G_ASCII_DTOSTR_BUF_SIZE];
  gboolean gpu = m->total > m->capacity;
  if (!gpu && m->host <= m->host_capacity)
    return NULL;
  g_ascii_formatd (need, sizeof need, "%.1f", (gpu ? m->total : m->host) / gib);
  g_ascii_formatd (have, sizeof have, "%.1f",
                   (gpu ? m->capacity : m->host_capacity) / gib);
  return gpu ? g_strdup_printf ("needs %s GiB per GPU, more than the GPU's "
                                "%s GiB", need, have)
             : g_strdup_printf ("needs %s GiB of host memory per node for "
                                "CPU offload, more than the node's %s GiB",
                                need, have);
}

double
plan_model_params (const ModelSpec *m)
{
  LayerShape ls;
  /* Counts need no compute model, and one TP rank of tp 1 holds all. */
  transformer_layer_shape (&ls, m, 1, 1, FALSE, ATTENTION_UNFUSED, NULL);
  double layers = m->layers * transformer_layer_params (&ls);
  if (m->experts > 0)
    {
      /* A dense layer's MLP, replaced in the MoE layers by theirs. */
      double mlp = (m->mlp == MLP_SWIGLU ? 3.0 : 2.0) * m->hidden * m->ffn_hidden;
      layers += transformer_mlp_params (m, FALSE) - m->layers * mlp;
    }
  return layers + transformer_embedding_params (&ls) + transformer_head_params (&ls)
         + transformer_output_params (&ls, 1);
}

double
plan_active_params (const ModelSpec *m)
{
  if (m->experts == 0)
    return plan_model_params (m);
  return plan_model_params (m) - transformer_mlp_params (m, FALSE) + transformer_mlp_params (m, TRUE);
}

/* A checkpoint holds what the optimizer needs to go on: the weights in
 * the run's precision and the optimizer's state (plan_memory's 16 - 2 w
 * bytes a parameter: the fp32 master and Adam's m and v), of every
 * stage and TP rank once (ZeRO's shards of a replica add up to one
 * copy), not the gradients. Mixed precision: 14 bytes a parameter;
 * Narayanan et al. 2021 (arXiv:2104.04473, section 5.10) report a
 * 13.8 TB checkpoint for their 1T model (1.008T parameters, Table 1: 13.7
 * bytes a parameter). */
double
plan_checkpoint_bytes (const Plan *p)
{
  ComputeModel cm;
  LayerShape ls;
  layer_shape (p, &cm, &ls);
  double params = 0;
  for (int s = 0; s < p->pp; s++)
    params += stage_params (p, &ls, s) * p->tp;
  return params * (16 - cm.bytes_per_element);
}
