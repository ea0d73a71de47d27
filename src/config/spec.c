/* spec.c: the name tables of the spec enumerations and the ownership
 * helpers (clear, deep copy, free) of the spec structs (spec.h). */
#include "config/spec.h"
#include "base/stats.h"

#include <math.h>
#include <string.h>

static const char *const precision_names[PRECISION_N] = {
  [PRECISION_FP32] = "fp32", [PRECISION_TF32] = "tf32",
  [PRECISION_FP16] = "fp16", [PRECISION_BF16] = "bf16",
  [PRECISION_FP8] = "fp8",
};
static const char *const fp8_recipe_names[FP8_RECIPE_N] = {
  [FP8_RECIPE_DELAYED] = "delayed", [FP8_RECIPE_CURRENT] = "current",
};
static const char *const recompute_names[RECOMPUTE_N] = {
  [RECOMPUTE_NONE] = "none", [RECOMPUTE_SELECTIVE] = "selective",
  [RECOMPUTE_FULL] = "full",
};
static const char *const schedule_names[SCHEDULE_N] = {
  [SCHEDULE_GPIPE] = "gpipe", [SCHEDULE_1F1B] = "1f1b",
  [SCHEDULE_INTERLEAVED] = "interleaved",
};
static const char *const offload_names[OFFLOAD_N] = {
  [OFFLOAD_NONE] = "none", [OFFLOAD_OPTIMIZER] = "optimizer",
  [OFFLOAD_OPTIMIZER_PARAMS] = "optimizer+params",
};
static const char *const link_names[LINK_N] = {
  [LINK_NVSWITCH] = "nvswitch", [LINK_NVLINK] = "nvlink", [LINK_PCIE] = "pcie",
  [LINK_INFINIBAND_HDR] = "infiniband-hdr", [LINK_INFINIBAND_NDR] = "infiniband-ndr",
  [LINK_SLINGSHOT_11] = "slingshot-11", [LINK_ROCE] = "roce",
  [LINK_OMNI_PATH] = "omni-path",
};
static const char *const fabric_names[FABRIC_N] = {
  [FABRIC_FAT_TREE] = "fat-tree", [FABRIC_DRAGONFLY] = "dragonfly",
};

static const char *const placement_names[PLACEMENT_N] = {
  [PLACEMENT_PACKED] = "packed", [PLACEMENT_SPREAD] = "spread",
};
static const char *const background_names[BACKGROUND_N] = {
  [BACKGROUND_STEADY] = "steady", [BACKGROUND_BURSTY] = "bursty",
};
static const char *const generation_names[GENERATION_N] = {
  [GENERATION_AMPERE] = "ampere", [GENERATION_HOPPER] = "hopper",
};

static const char *const mlp_names[MLP_N] = {
  [MLP_GELU] = "gelu", [MLP_SWIGLU] = "swiglu",
};
static const char *const nic_path_names[NIC_PATH_N] = {
  [NIC_PATH_NVLINK] = "nvlink", [NIC_PATH_PCIE] = "pcie",
};
static const char *const algorithm_names[ALGORITHM_N] = {
  [ALGORITHM_AUTO] = "auto", [ALGORITHM_RING] = "ring", [ALGORITHM_TREE] = "tree",
  [ALGORITHM_HIERARCHICAL] = "hierarchical", [ALGORITHM_NVLS] = "nvls",
  [ALGORITHM_NVLS_TREE] = "nvls_tree", [ALGORITHM_COLLNET_DIRECT] = "collnet_direct",
  [ALGORITHM_COLLNET_CHAIN] = "collnet_chain",
};
static const char *const role_names[ROLE_N] = {
  [ROLE_CALIBRATION] = "calibration", [ROLE_VALIDATION] = "validation",
};
static const char *const flops_names[FLOPS_N] = {
  [FLOPS_MEGATRON] = "megatron", [FLOPS_MODEL] = "model",
  [FLOPS_HARDWARE] = "hardware",
};

static const char *const attention_names[ATTENTION_N] = {
  [ATTENTION_UNFUSED] = "unfused", [ATTENTION_FLASH1] = "flash1",
  [ATTENTION_FLASH1_TRITON] = "flash1-triton", [ATTENTION_FLASH2] = "flash2",
  [ATTENTION_FLASH3] = "flash3", [ATTENTION_CUDNN] = "cudnn",
};

static const char *const grad_accumulation_names[GRAD_ACC_N] = {
  [GRAD_ACC_FUSED] = "fused", [GRAD_ACC_MAIN_GRAD] = "main-grad",
  [GRAD_ACC_AUTOGRAD] = "autograd",
};

static const char *const collective_names[COLL_N] = {
  [COLL_ALL_REDUCE] = "all_reduce", [COLL_REDUCE_SCATTER] = "reduce_scatter",
  [COLL_ALL_GATHER] = "all_gather", [COLL_ALL_TO_ALL] = "alltoall",
  [COLL_SEND] = "sendrecv",
};

static const char *const validation_kind_names[VALIDATION_KIND_N] = {
  [VALIDATION_TRAINING] = "training", [VALIDATION_COLLECTIVES] = "collectives",
  [VALIDATION_GEMM] = "gemm", [VALIDATION_MLP] = "mlp",
};

static const char *const position_names[POSITION_N] = {
  [POSITION_LEARNED] = "learned", [POSITION_ROTARY] = "rotary",
  [POSITION_ALIBI] = "alibi",
};
static const char *const router_names[ROUTER_N] = {
  [ROUTER_SOFTMAX] = "softmax", [ROUTER_SIGMOID] = "sigmoid",
};

static const char *const cp_kind_names[CP_KIND_N] = {
  [CP_P2P] = "p2p", [CP_ULYSSES] = "ulysses",
};

static const struct {
  const char *const *names;
  int n;
} enum_tables[] = {
  [SPEC_ENUM_PRECISION] = { precision_names, PRECISION_N },
  [SPEC_ENUM_RECOMPUTE] = { recompute_names, RECOMPUTE_N },
  [SPEC_ENUM_SCHEDULE] = { schedule_names, SCHEDULE_N },
  [SPEC_ENUM_OFFLOAD] = { offload_names, OFFLOAD_N },
  [SPEC_ENUM_LINK] = { link_names, LINK_N },
  [SPEC_ENUM_FABRIC] = { fabric_names, FABRIC_N },
  [SPEC_ENUM_MLP] = { mlp_names, MLP_N },
  [SPEC_ENUM_NIC_PATH] = { nic_path_names, NIC_PATH_N },
  [SPEC_ENUM_ALGORITHM] = { algorithm_names, ALGORITHM_N },
  [SPEC_ENUM_ATTENTION] = { attention_names, ATTENTION_N },
  [SPEC_ENUM_ROLE] = { role_names, ROLE_N },
  [SPEC_ENUM_FLOPS] = { flops_names, FLOPS_N },
  [SPEC_ENUM_GRAD_ACCUMULATION] = { grad_accumulation_names, GRAD_ACC_N },
  [SPEC_ENUM_COLLECTIVE] = { collective_names, COLL_N },
  [SPEC_ENUM_VALIDATION_KIND] = { validation_kind_names, VALIDATION_KIND_N },
  [SPEC_ENUM_PLACEMENT] = { placement_names, PLACEMENT_N },
  [SPEC_ENUM_BACKGROUND] = { background_names, BACKGROUND_N },
  [SPEC_ENUM_GENERATION] = { generation_names, GENERATION_N },
  [SPEC_ENUM_ROUTER] = { router_names, ROUTER_N },
  [SPEC_ENUM_FP8_RECIPE] = { fp8_recipe_names, FP8_RECIPE_N },
  [SPEC_ENUM_CP_KIND] = { cp_kind_names, CP_KIND_N },
  [SPEC_ENUM_POSITION] = { position_names, POSITION_N },
};

gboolean
spec_layer_is_moe (const ModelSpec *m, int l)
{
  if (m->experts <= 0 || l < m->dense_layers)
    return FALSE;
  return (l - m->dense_layers) % MAX (m->moe_layer_frequency, 1) == 0;
}

int
spec_head_dim (const ModelSpec *m)
{
  /* A kind: mlp or gemm validation case has no heads. */
  if (m->head_dim > 0 || m->heads <= 0)
    return m->head_dim;
  return m->hidden / m->heads;
}

int
spec_moe_layers (const ModelSpec *m)
{
  int n = 0;
  for (int l = 0; l < m->layers; l++)
    n += spec_layer_is_moe (m, l);
  return n;
}

double
spec_background_keep (double load, double exponent)
{
  return load > 0 ? pow (1 - load, exponent) : 1.0;
}

/* The GPUs on slow nodes, and the others. */
static void
slow_split (const VariabilitySpec *v, int64_t gpus, int gpus_per_node,
            int64_t *slow, int64_t *rest)
{
  *slow = MIN ((int64_t) v->slow_nodes * MIN (gpus_per_node, gpus), gpus);
  *rest = gpus - *slow;
}

double
spec_slowest_expected (const VariabilitySpec *v, int64_t gpus, int gpus_per_node)
{
  int64_t slow, rest;
  slow_split (v, gpus, gpus_per_node, &slow, &rest);
  double f = stats_expected_slowest (rest, v->gpu_speed_spread);
  if (slow > 0)
    f = MAX (f, (1 + v->slow_node_slowdown)
                * stats_expected_slowest (slow, v->gpu_speed_spread));
  return f;
}

double
spec_slowest_draw (const VariabilitySpec *v, int64_t gpus, int gpus_per_node,
                   double u1, double u2)
{
  int64_t slow, rest;
  slow_split (v, gpus, gpus_per_node, &slow, &rest);
  double f = rest > 0 ? stats_slowest_draw (rest, v->gpu_speed_spread, u1) : 1;
  if (slow > 0)
    f = MAX (f, (1 + v->slow_node_slowdown)
                * stats_slowest_draw (slow, v->gpu_speed_spread, u2));
  return f;
}

int
spec_precision_bytes (Precision p)
{
  return p == PRECISION_FP8 ? 1
         : p == PRECISION_FP16 || p == PRECISION_BF16 ? 2 : 4;
}

const char *
spec_enum_name (SpecEnum e, int value)
{
  g_return_val_if_fail ((size_t) e < G_N_ELEMENTS (enum_tables), NULL);
  g_return_val_if_fail (value >= 0 && value < enum_tables[e].n, NULL);
  return enum_tables[e].names[value];
}

int
spec_enum_parse (SpecEnum e, const char *name)
{
  g_return_val_if_fail ((size_t) e < G_N_ELEMENTS (enum_tables), -1);
  for (int i = 0; name && i < enum_tables[e].n; i++)
    if (strcmp (enum_tables[e].names[i], name) == 0)
      return i;
  /* all_to_all, as the other collectives are spelt, for nccl-tests'
   * alltoall (alltoall_perf). */
  if (e == SPEC_ENUM_COLLECTIVE && name && strcmp (name, "all_to_all") == 0)
    return COLL_ALL_TO_ALL;
  return -1;
}

int
spec_enum_count (SpecEnum e)
{
  g_return_val_if_fail ((size_t) e < G_N_ELEMENTS (enum_tables), 0);
  return enum_tables[e].n;
}

char *
spec_enum_list (SpecEnum e)
{
  GString *s = g_string_new (NULL);
  int n;

  g_return_val_if_fail ((size_t) e < G_N_ELEMENTS (enum_tables), NULL);
  n = enum_tables[e].n;
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                            enum_tables[e].names[i]);
  return g_string_free (s, FALSE);
}

/* --- ownership ----------------------------------------------------------- */

/* Each clear frees what the struct owns and zeroes it, so clearing twice
 * is harmless and a cleared struct can be filled again. */

void
model_spec_clear (ModelSpec *m)
{
  g_free (m->name);
  memset (m, 0, sizeof *m);
}

void
device_spec_clear (DeviceSpec *d)
{
  g_free (d->name);
  memset (d, 0, sizeof *d);
}

void
topology_spec_clear (TopologySpec *t)
{
  g_free (t->name);
  device_spec_clear (&t->gpu);
  memset (t, 0, sizeof *t);
}

/* The SpecMarks strings, in one list so that clear and copy agree. */
#define SPEC_MARKS_FOREACH(m, X) \
  X ((m)->file) X ((m)->gpus) X ((m)->tp) X ((m)->pp) X ((m)->dp) \
  X ((m)->micro_batch) X ((m)->global_batch) X ((m)->virtual_stages) \
  X ((m)->layers) X ((m)->heads) X ((m)->zero_stage) X ((m)->offload) \
  X ((m)->offload_delayed_update) X ((m)->stage_layers) X ((m)->framework) \
  X ((m)->schedule) X ((m)->sequence_parallel) X ((m)->recompute) \
  X ((m)->activation_checkpointing) X ((m)->param_gather_overlap) \
  X ((m)->moe_shared_expert_overlap) X ((m)->tp_comm_overlap) \
  X ((m)->experts) X ((m)->top_k) X ((m)->ep) X ((m)->etp) \
  X ((m)->cp) X ((m)->cp_kind) \
  X ((m)->topology) X ((m)->training) \
  X ((m)->placement) X ((m)->slow_nodes) X ((m)->sweep)

void
experiment_spec_clear (ExperimentSpec *e)
{
#define FREE_MARK(field) g_free (field);
  SPEC_MARKS_FOREACH (&e->marks, FREE_MARK)
#undef FREE_MARK
  model_spec_clear (&e->model);
  topology_spec_clear (&e->topology);
  memset (e, 0, sizeof *e);
}

/* DST is overwritten: it must not own anything. */
void
experiment_spec_copy (ExperimentSpec *dst, const ExperimentSpec *src)
{
  *dst = *src;
  dst->model.name = g_strdup (src->model.name);
  dst->topology.name = g_strdup (src->topology.name);
  dst->topology.gpu.name = g_strdup (src->topology.gpu.name);
#define DUP_MARK(field) field = g_strdup (field);
  SPEC_MARKS_FOREACH (&dst->marks, DUP_MARK)
#undef DUP_MARK
}

/* The cases array has no free function of its own (spec.h declares no
 * case destructor), so the cases are freed here. */
void
validation_spec_free (ValidationSpec *v)
{
  if (v == NULL)
    return;
  if (v->cases)
    {
      for (guint i = 0; i < v->cases->len; i++)
        {
          ValidationCase *c = g_ptr_array_index (v->cases, i);
          g_free (c->id);
          g_free (c->where);
          g_free (c->tflops_where);
          experiment_spec_clear (&c->experiment);
          g_free (c);
        }
      g_ptr_array_unref (v->cases);
    }
  g_free (v->name);
  g_free (v->source);
  g_free (v);
}
