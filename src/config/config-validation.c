/* config-validation.c: validation files (config_load_validation): the
 * keys of a file and of its cases, each kind of case loaded and checked
 * against what a run could measure, known gaps, order_within's groups,
 * and which --set overrides a file takes. */
#include "config/config-private.h"

#include <limits.h>
#include <string.h>

#include "base/errors.h"
#include "base/text.h"
#include "base/units.h"

/* --- the keys of validation files ------------------------------------------ */

/* A file's goal (tolerance) and its known gap bound the same scores. */
static const Field bounds_fields[] = {
  F ("mape", F_FRACTION, ValidationBounds, mape),
  F ("max", F_FRACTION, ValidationBounds, max),
  F ("mean_signed", F_FRACTION, ValidationBounds, mean_signed),
  F ("misordered", F_INT_RANGE, ValidationBounds, misordered, .arg = INT_MAX),
  F ("memory_misses", F_INT_RANGE, ValidationBounds, memory_misses, .arg = INT_MAX),
  END
};

/* role is required, but checked last by config_load_validation, whose
 * message says what each role means. */
static const Field validation_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, ValidationSpec, name, REQUIRED),
  F ("source", F_NAME, ValidationSpec, source),
  F ("role", F_ENUM, ValidationSpec, role, .arg = SPEC_ENUM_ROLE),
  F ("kind", F_ENUM, ValidationSpec, kind, .arg = SPEC_ENUM_VALIDATION_KIND),
  F ("flops", F_ENUM, ValidationSpec, flops, .arg = SPEC_ENUM_FLOPS),
  F ("tolerance", F_MAP, ValidationSpec, tolerance, .sub = bounds_fields),
  F ("known_gap", F_MAP, ValidationSpec, known_gap, .sub = bounds_fields),
  { .key = "order_within", .type = F_SKIP },
  { .key = "defaults", .type = F_SKIP },
  { .key = "cases", .type = F_SKIP, .required = TRUE },
  END
};

static const Field measured_fields[] = {
  F ("iteration_time_s", F_NUMBER, ValidationCase, measured_iteration_time_s),
  F ("layer_forward_ms", F_NUMBER, ValidationCase, measured_layer_forward_ms),
  F ("layer_backward_ms", F_NUMBER, ValidationCase, measured_layer_backward_ms),
  F ("tflops_per_gpu", F_NUMBER, ValidationCase, measured_tflops_per_gpu),
  F ("memory_gib", F_NUMBER, ValidationCase, measured_memory_gib),
  F ("oom", F_BOOL, ValidationCase, measured_oom),
  END
};

/* A case's own keys; the others are experiment keys. */
static const Field case_fields[] = {
  F ("id", F_NAME, ValidationCase, id, REQUIRED),
  { .key = "measured", .type = F_MAP, .required = TRUE, .sub = measured_fields },
  END
};
/* A case of a collectives file (kind: collectives), the file's defaults
 * merged under it: one collective as nccl-tests runs it, and the bus
 * bandwidth it reached. */
static const Field collective_measured_fields[] = {
  F ("bus_bandwidth", F_UNIT, ValidationCase, measured_bus_bandwidth, REQUIRED,
     .arg = UNIT_BANDWIDTH),
  END
};
static const Field collective_case_fields[] = {
  F ("id", F_NAME, ValidationCase, id, REQUIRED),
  F ("topology", F_REF, ValidationCase, experiment.topology, REQUIRED,
     .arg = REF_TOPOLOGY, .sub = config_topology_fields, .finish = config_topology_finish),
  F ("gpus", F_INT, ValidationCase, experiment.gpus, REQUIRED),
  F ("per_node", F_INT, ValidationCase, per_node),
  F ("op", F_ENUM, ValidationCase, op, REQUIRED, .arg = SPEC_ENUM_COLLECTIVE),
  F ("size", F_UNIT, ValidationCase, bytes, REQUIRED, .arg = UNIT_BYTES),
  /* The run's NCCL_ALGO, where it forced one (default auto). */
  F ("algorithm", F_ENUM, ValidationCase, experiment.collectives.algorithm,
     .arg = SPEC_ENUM_ALGORITHM),
  { .key = "measured", .type = F_MAP, .required = TRUE,
    .sub = collective_measured_fields },
  END
};

/* A case of a GEMM file (kind: gemm), the file's defaults merged under
 * it: one matrix multiplication on a device, as torch.mm or torch.bmm
 * runs it, and the FLOP/s it reached. */
static const Field gemm_measured_fields[] = {
  F ("throughput", F_UNIT, ValidationCase, measured_flops, REQUIRED,
     .arg = UNIT_FLOPS),
  END
};
/* The keys that open a case timed alone on one device (kind gemm, mlp). */
#define DEVICE_CASE_FIELDS \
  F ("id", F_NAME, ValidationCase, id, REQUIRED), \
  F ("device", F_REF, ValidationCase, experiment.topology.gpu, REQUIRED, \
     .arg = REF_DEVICE, .sub = config_device_fields), \
  F ("precision", F_ENUM, ValidationCase, experiment.training.precision, \
     .arg = SPEC_ENUM_PRECISION)
static const Field gemm_case_fields[] = {
  DEVICE_CASE_FIELDS,
  F ("batch", F_INT, ValidationCase, batch),
  F ("m", F_INT, ValidationCase, m, REQUIRED),
  F ("n", F_INT, ValidationCase, n, REQUIRED),
  F ("k", F_INT, ValidationCase, k, REQUIRED),
  { .key = "measured", .type = F_MAP, .required = TRUE,
    .sub = gemm_measured_fields },
  END
};

/* A case of an MLP file (kind: mlp), the file's defaults merged under it:
 * a transformer's MLP block alone (the two GEMMs and the activation
 * between them, as Megatron's ParallelMLP runs its forward) on a device,
 * and the time its forward took. */
static const Field mlp_measured_fields[] = {
  F ("forward_ms", F_NUMBER, ValidationCase, measured_forward_ms, REQUIRED),
  END
};
static const Field mlp_case_fields[] = {
  DEVICE_CASE_FIELDS,
  F ("hidden", F_INT, ValidationCase, experiment.model.hidden, REQUIRED),
  F ("ffn_hidden", F_INT_AUTO, ValidationCase, experiment.model.ffn_hidden),
  F ("mlp", F_ENUM, ValidationCase, experiment.model.mlp, .arg = SPEC_ENUM_MLP),
  F ("seq_len", F_INT, ValidationCase, experiment.model.seq_len, REQUIRED),
  F ("micro_batch", F_INT, ValidationCase, experiment.parallel.micro_batch,
     REQUIRED),
  { .key = "measured", .type = F_MAP, .required = TRUE,
    .sub = mlp_measured_fields },
  END
};

/* --- validation files ----------------------------------------------------- */

/* The mark of measured.KEY in CASE_NODE, or CASE_NODE's own where the
 * file's defaults gave it. */
static YMark
measured_mark (const YNode *case_node, const char *key)
{
  const YPair *measured = ytree_map_find (case_node, "measured");
  const YPair *at = measured && measured->value->kind == YNODE_MAPPING
                    ? ytree_map_find (measured->value, key) : NULL;
  /* Given in the file's defaults, not in the case: the case is where. */
  return at ? at->value->mark : case_node->mark;
}

/* Checks that every measured key of C can be scored (cmd-validate.c
 * scores each): a time, a throughput the file's FLOP convention says how
 * to count, one layer's two times, or a run that did not fit. */
static gboolean
check_measured (const ValidationSpec *v, const YNode *case_node, ValidationCase *c,
                GError **error)
{
  gboolean fwd = c->measured_layer_forward_ms != SPEC_UNSET;
  gboolean bwd = c->measured_layer_backward_ms != SPEC_UNSET;
  gboolean timed = c->measured_iteration_time_s != SPEC_UNSET
                   || c->measured_tflops_per_gpu != SPEC_UNSET;

  if (fwd != bwd)
    {
      ytree_set_error (error, measured_mark (case_node, fwd ? "layer_forward_ms"
                                                            : "layer_backward_ms"),
                       "case %s: layer_forward_ms and layer_backward_ms are scored "
                       "together; give both", c->id);
      return FALSE;
    }
  if (c->measured_oom && (timed || fwd))
    {
      ytree_set_error (error, measured_mark (case_node, "oom"),
                       "case %s: a run that ran out of memory has no time; give oom: "
                       "true alone, or the time of a run that fitted", c->id);
      return FALSE;
    }
  if (!timed && !fwd && !c->measured_oom)
    {
      ytree_set_error (error, ytree_map_find (case_node, "measured")->value->mark,
                       "case %s: measured needs iteration_time_s, tflops_per_gpu, both "
                       "layer_forward_ms and layer_backward_ms, or oom: true", c->id);
      return FALSE;
    }
  if (c->measured_tflops_per_gpu != SPEC_UNSET)
    {
      YMark mark = measured_mark (case_node, "tflops_per_gpu");
      if (v->flops < 0)
        {
          g_autofree char *valid = spec_enum_list (SPEC_ENUM_FLOPS);
          ytree_set_error (error, mark, "case %s: measured.tflops_per_gpu needs the file's "
                           "flops key, which FLOPs the figure counts: %s", c->id, valid);
          return FALSE;
        }
      c->tflops_where = ytree_mark_format (mark);
    }
  return TRUE;
}

/* A training case's measurements must be ones a run could make: no GPU
 * runs faster than its peak in the case's precision, and no step takes
 * less than its layers' weight GEMMs need at that peak (a lower bound:
 * forward and backward, 6 FLOPs a weight and token; the query and output
 * projections, 2 h^2, and the MLP, 2 h ffn or 3 h ffn gated, a layer;
 * attention's scores, the key and value projections and the logits come
 * on top). A figure beyond either is a mistake in the data, and would
 * score as an error of thousands of percent. */
static gboolean
check_physical (const YNode *case_node, const ValidationCase *c, GError **error)
{
  const ExperimentSpec *e = &c->experiment;
  const ModelSpec *m = &e->model;
  const char *precision = spec_enum_name (SPEC_ENUM_PRECISION, e->training.precision);
  double peak = e->topology.gpu.peak_flops[e->training.precision];
  if (peak <= 0)
    return TRUE;   /* the run itself says the device has no such peak */
  if (c->measured_tflops_per_gpu != SPEC_UNSET && c->measured_tflops_per_gpu * 1e12 > peak)
    {
      ytree_set_error (error, measured_mark (case_node, "tflops_per_gpu"),
                       "case %s: measured.tflops_per_gpu (%.4g) is above the device's "
                       "%s peak (%.4g TFLOP/s)", c->id, c->measured_tflops_per_gpu,
                       precision, peak / 1e12);
      return FALSE;
    }
  double weights = 2.0 * m->hidden * m->hidden
                   + (m->mlp == MLP_SWIGLU ? 3.0 : 2.0) * m->hidden * m->ffn_hidden;
  double least = 6.0 * weights * m->layers * (double) e->parallel.global_batch
                 * m->seq_len / (e->gpus * peak);
  if (c->measured_iteration_time_s != SPEC_UNSET && c->measured_iteration_time_s < least)
    {
      ytree_set_error (error, measured_mark (case_node, "iteration_time_s"),
                       "case %s: measured.iteration_time_s (%.4g) is less than its "
                       "layers' GEMMs alone take at the device's %s peak (%.4g s)",
                       c->id, c->measured_iteration_time_s, precision, least);
      return FALSE;
    }
  return TRUE;
}

/* A case's tree: DEFAULTS (may be NULL) with CASE_KEYS merged over them. */
static YNode *
case_tree (const YNode *defaults, const YNode *case_keys)
{
  YNode *tree = ytree_copy (defaults ? defaults : case_keys);
  if (defaults)
    ytree_merge (&tree, case_keys);
  return tree;
}

/* Loads CASE_NODE of V into C: its id and measurements, and the experiment
 * that is DEFAULTS (may be NULL) with the rest of the case merged over
 * them; that experiment's tree goes to *TREE. */
static gboolean
load_case (const Loader *ld, const ValidationSpec *v, const YNode *defaults,
           const YNode *case_node, ValidationCase *c, YNode **tree, GError **error)
{
  g_autoptr (YNode) rest = ytree_copy (case_node);
  g_autoptr (YNode) experiment = NULL;

  c->measured_iteration_time_s = SPEC_UNSET;
  c->measured_layer_forward_ms = c->measured_layer_backward_ms = SPEC_UNSET;
  c->measured_tflops_per_gpu = SPEC_UNSET;
  c->measured_memory_gib = SPEC_UNSET;
  c->order_group = -1;
  c->where = ytree_mark_format (case_node->mark);
  if (!config_decode_fields (ld, case_node, "case", case_fields, c, FALSE, error)
      || !check_measured (v, case_node, c, error))
    return FALSE;
  ytree_map_remove (rest, "id");
  ytree_map_remove (rest, "measured");
  experiment = case_tree (defaults, rest);
  /* The figures are the runs' as the file states them: checked against
   * its experiment, before any --set of validate's what-ifs. */
  if (!config_experiment_from_tree (experiment, ld->root_file, &c->experiment, error)
      || !check_physical (case_node, c, error))
    return FALSE;
  if (ld->overrides && ld->overrides[0])
    {
      experiment_spec_clear (&c->experiment);
      for (size_t i = 0; ld->overrides[i]; i++)
        if (!config_apply_set (experiment, ld->overrides[i], error))
          return FALSE;
      if (!config_experiment_from_tree (experiment, ld->root_file, &c->experiment, error))
        return FALSE;
    }
  *tree = g_steal_pointer (&experiment);
  return TRUE;
}

/* Loads CASE_NODE of a file of one collective, GEMM or MLP block a case
 * (kind: collectives, gemm or mlp) into C by FIELDS, DEFAULTS (may be
 * NULL) merged under it; the merged tree goes to *TREE. */
static gboolean
load_alone_case (const Loader *ld, const YNode *defaults, const YNode *case_node,
                 const Field *fields, ValidationCase *c, YNode **tree, GError **error)
{
  g_autoptr (YNode) merged = case_tree (defaults, case_node);

  c->order_group = -1;
  c->where = ytree_mark_format (case_node->mark);
  config_experiment_defaults (&c->experiment);
  if (!config_decode_fields (ld, merged, "case", fields, c, TRUE, error))
    return FALSE;
  *tree = g_steal_pointer (&merged);
  return TRUE;
}

/* A collectives file's case: the ranks must make whole nodes of the
 * topology, and more than one node needs its network. */
static gboolean
load_collective_case (const Loader *ld, const YNode *defaults, const YNode *case_node,
                      ValidationCase *c, YNode **tree, GError **error)
{
  const TopologySpec *t = &c->experiment.topology;

  if (!load_alone_case (ld, defaults, case_node, collective_case_fields, c, tree,
                        error))
    return FALSE;
  int gpus = c->experiment.gpus, gpn = t->gpus_per_node;
  if (c->per_node == 0)
    c->per_node = MIN (gpus, gpn);
  const char *problem = NULL;
  if (c->per_node > gpn)
    problem = "per_node must be at most the topology's gpus_per_node";
  else if (gpus < 2 || gpus % c->per_node != 0)
    problem = "gpus must be at least 2 and a multiple of per_node";
  else if (gpus > c->per_node && t->inter_node.nics_per_node == 0)
    problem = "the topology has no inter_node network, so gpus must fit in one node";
  if (problem != NULL)
    {
      const YPair *at = ytree_map_find (case_node, "gpus");
      g_clear_pointer (tree, ytree_free);
      ytree_set_error (error, at ? at->value->mark : case_node->mark,
                       "case %s: %s (gpus %d, per_node %d, gpus_per_node %d)", c->id,
                       problem, gpus, c->per_node, gpn);
      return FALSE;
    }
  return TRUE;
}

/* The device's peak in a case's precision, or 0 with *ERROR set (and
 * *TREE freed) where the device gives none: a GEMM would take forever. */
static double
case_peak (const ValidationCase *c, const YNode *case_node, YNode **tree, GError **error)
{
  Precision precision = c->experiment.training.precision;
  double peak = c->experiment.topology.gpu.peak_flops[precision];
  if (peak <= 0)
    {
      const YPair *at = ytree_map_find (case_node, "precision");
      g_clear_pointer (tree, ytree_free);
      ytree_set_error (error, at ? at->value->mark : case_node->mark,
                       "case %s: the device gives no %s peak; give it one "
                       "(peak.%s) or choose another precision", c->id,
                       spec_enum_name (SPEC_ENUM_PRECISION, precision),
                       spec_enum_name (SPEC_ENUM_PRECISION, precision));
    }
  return peak;
}

/* A GEMM file's case: no product runs faster than the device's peak in its
 * precision, so a measured rate above it is a mistake in the data. */
static gboolean
load_gemm_case (const Loader *ld, const YNode *defaults, const YNode *case_node,
                ValidationCase *c, YNode **tree, GError **error)
{
  if (!load_alone_case (ld, defaults, case_node, gemm_case_fields, c, tree, error))
    return FALSE;
  Precision precision = c->experiment.training.precision;
  double peak = case_peak (c, case_node, tree, error);
  if (peak <= 0)
    return FALSE;
  if (c->measured_flops > peak)
    {
      g_clear_pointer (tree, ytree_free);
      ytree_set_error (error, measured_mark (case_node, "throughput"),
                       "case %s: measured.throughput (%.4g TFLOP/s) is above the "
                       "device's %s peak (%.4g TFLOP/s); no GEMM runs faster than that",
                       c->id, c->measured_flops / 1e12,
                       spec_enum_name (SPEC_ENUM_PRECISION, precision), peak / 1e12);
      return FALSE;
    }
  return TRUE;
}

/* An MLP file's case: ffn_hidden defaults as a model's does, and no MLP
 * runs its GEMMs faster than the device's peak, so a measured time that
 * would take more is a mistake in the data. */
static gboolean
load_mlp_case (const Loader *ld, const YNode *defaults, const YNode *case_node,
               ValidationCase *c, YNode **tree, GError **error)
{
  if (!load_alone_case (ld, defaults, case_node, mlp_case_fields, c, tree, error))
    return FALSE;
  ModelSpec *m = &c->experiment.model;
  if (!config_model_finish (*tree, "case", m, error))
    {
      g_clear_pointer (tree, ytree_free);
      return FALSE;
    }
  Precision precision = c->experiment.training.precision;
  double peak = case_peak (c, case_node, tree, error);
  if (peak <= 0)
    return FALSE;
  /* FC1 (twice as wide when gated) and FC2, 2 FLOPs a multiply-add. */
  double flops = 2.0 * c->experiment.parallel.micro_batch * m->seq_len * m->hidden
                 * m->ffn_hidden * (m->mlp == MLP_SWIGLU ? 3 : 2);
  if (flops / (c->measured_forward_ms / 1e3) > peak)
    {
      g_clear_pointer (tree, ytree_free);
      ytree_set_error (error, measured_mark (case_node, "forward_ms"),
                       "case %s: measured.forward_ms (%.4g) is less than its GEMMs "
                       "take at the device's %s peak (%.4g TFLOP/s: %.4g ms)", c->id,
                       c->measured_forward_ms,
                       spec_enum_name (SPEC_ENUM_PRECISION, precision), peak / 1e12,
                       flops / peak * 1e3);
      return FALSE;
    }
  return TRUE;
}

/* A known gap loosens the goal where the file falls short of it: it needs
 * the goal, and each of its bounds must be looser than the goal's. */
static gboolean
check_known_gap (const YNode *root, const ValidationSpec *v, GError **error)
{
  const YPair *gap = ytree_map_find (root, "known_gap");

  if (!gap)
    return TRUE;
  if (!ytree_map_find (root, "tolerance"))
    {
      ytree_set_error (error, gap->key_mark, "known_gap needs the goal it falls short "
                       "of: add tolerance: {mape: ..., max: ...}");
      return FALSE;
    }
  if (ytree_is_null (gap->value) || gap->value->items->len == 0)
    {
      ytree_set_error (error, gap->value->mark, "known_gap must give at least one bound: "
                       "mape, max, mean_signed, misordered or memory_misses");
      return FALSE;
    }
  for (guint i = 0; i < gap->value->items->len; i++)
    {
      const YPair *pair = g_ptr_array_index (gap->value->items, i);
      const Field *f = config_find_field (bounds_fields, pair->key);
      const void *goal_slot = (const char *) &v->tolerance + f->offset;
      const void *gap_slot = (const char *) &v->known_gap + f->offset;
      gboolean count = f->type == F_INT_RANGE;
      double goal = count ? *(const int *) goal_slot : *(const double *) goal_slot;
      double bound = count ? *(const int *) gap_slot : *(const double *) gap_slot;

      if (goal < 0)
        {
          ytree_set_error (error, pair->key_mark, "known_gap.%s bounds a goal the file "
                           "does not set; add tolerance.%s", pair->key, pair->key);
          return FALSE;
        }
      if (bound <= goal)
        {
          ytree_set_error (error, pair->value->mark, "known_gap.%s (%g) must be looser "
                           "than tolerance.%s (%g): it bounds how far the file may fall "
                           "short of its goal", pair->key, bound, pair->key, goal);
          return FALSE;
        }
    }
  return TRUE;
}

/* order_within: a non-empty list of the dotted experiment keys in which
 * the cases of one group differ. */
static gboolean
check_order_within (const YNode *root, const YNode **list, GError **error)
{
  const YPair *pair = ytree_map_find (root, "order_within");
  gboolean ok = pair && pair->value->kind == YNODE_SEQUENCE && pair->value->items->len > 0;

  for (guint i = 0; ok && i < pair->value->items->len; i++)
    {
      const YNode *item = g_ptr_array_index (pair->value->items, i);
      ok = item->kind == YNODE_SCALAR && !ytree_is_null (item);
    }
  *list = ok ? pair->value : NULL;
  if (pair && !ok)
    {
      g_autofree char *g = config_got (pair->value);
      ytree_set_error (error, pair->value->mark, "order_within must be a list of the "
                       "experiment keys in which a group's cases differ, such as "
                       "[parallel.micro_batch], got %s", g);
      return FALSE;
    }
  for (int k = 0; !pair && k < 2; k++)
    {
      const char *bounds = k ? "known_gap" : "tolerance";
      const YPair *b = ytree_map_find (root, bounds);
      const YPair *m = b ? ytree_map_find (b->value, "misordered") : NULL;
      if (m)
        {
          ytree_set_error (error, m->key_mark, "%s.misordered bounds the groups of "
                           "order_within, which the file does not give", bounds);
          return FALSE;
        }
    }
  return TRUE;
}

static int
compare_pairs (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(YPair *const *) a)->key, (*(YPair *const *) b)->key);
}

/* Appends to S a text of NODE that is the same for equal trees whatever
 * the order of their keys. */
static void
tree_text (GString *s, const YNode *node)
{
  g_autoptr (GPtrArray) items = NULL;

  if (node->kind == YNODE_SCALAR)
    {
      g_string_append_printf (s, "%zu:%s", strlen (node->text), node->text);
      return;
    }
  items = g_ptr_array_sized_new (node->items->len);    /* borrows the items */
  for (guint i = 0; i < node->items->len; i++)
    g_ptr_array_add (items, g_ptr_array_index (node->items, i));
  if (node->kind == YNODE_MAPPING)
    g_ptr_array_sort (items, compare_pairs);
  g_string_append_c (s, node->kind == YNODE_MAPPING ? '{' : '[');
  for (guint i = 0; i < items->len; i++)
    if (node->kind == YNODE_MAPPING)
      {
        const YPair *pair = g_ptr_array_index (items, i);
        g_string_append_printf (s, "%zu:%s=", strlen (pair->key), pair->key);
        tree_text (s, pair->value);
      }
    else
      tree_text (s, g_ptr_array_index (items, i));
  g_string_append_c (s, node->kind == YNODE_MAPPING ? '}' : ']');
}

/* Removes the dotted PATH from the mapping ROOT; returns whether it was
 * there. */
static gboolean
remove_path (YNode *root, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  YNode *node = root;
  int i;

  for (i = 0; parts[i + 1]; i++)
    {
      const YPair *pair = ytree_map_find (node, parts[i]);
      if (!pair)
        return FALSE;
      node = pair->value;
    }
  if (!ytree_map_find (node, parts[i]))
    return FALSE;
  ytree_map_remove (node, parts[i]);
  return TRUE;
}

/* Puts the cases of V whose experiments (TREES) differ only in the keys
 * of ORDER into groups: order_group numbers each group of two or more
 * runs with a time (a layer's times or a run out of memory are not
 * ordered). */
static gboolean
group_cases (ValidationSpec *v, GPtrArray *trees, const YNode *order, GError **error)
{
  g_autoptr (GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                         g_free, NULL);
  g_autofree gboolean *found = g_new0 (gboolean, order->items->len);
  g_autoptr (GArray) sizes = g_array_new (FALSE, TRUE, sizeof (int));
  g_autofree int *number = NULL;

  /* Each an experiment's key ('' and 'a..b' are none), and once. */
  for (guint i = 0; i < order->items->len; i++)
    {
      const YNode *item = g_ptr_array_index (order->items, i);
      if (!config_check_key (item->text, item->mark, error))
        return FALSE;
      for (guint j = 0; j < i; j++)
        if (strcmp (item->text, ((const YNode *) g_ptr_array_index (order->items,
                                                                    j))->text) == 0)
          {
            ytree_set_error (error, item->mark, "order_within names %s twice",
                             item->text);
            return FALSE;
          }
    }
  for (guint i = 0; i < v->cases->len; i++)
    {
      ValidationCase *c = g_ptr_array_index (v->cases, i);
      g_autoptr (YNode) rest = ytree_copy (g_ptr_array_index (trees, i));
      GString *text;
      gpointer group;

      for (guint k = 0; k < order->items->len; k++)
        found[k] |= remove_path (rest, ((const YNode *) g_ptr_array_index (order->items, k))->text);
      if (c->measured_iteration_time_s == SPEC_UNSET && c->measured_tflops_per_gpu == SPEC_UNSET)
        continue;
      text = g_string_new (NULL);
      tree_text (text, rest);
      if (!g_hash_table_lookup_extended (groups, text->str, NULL, &group))
        {
          group = GINT_TO_POINTER (sizes->len);
          g_array_set_size (sizes, sizes->len + 1);
          g_hash_table_insert (groups, g_string_free (text, FALSE), group);
        }
      else
        g_string_free (text, TRUE);
      c->order_group = GPOINTER_TO_INT (group);
      g_array_index (sizes, int, c->order_group)++;
    }
  for (guint k = 0; k < order->items->len; k++)
    if (!found[k])
      {
        const YNode *item = g_ptr_array_index (order->items, k);
        ytree_set_error (error, item->mark, "order_within: no case sets '%s'; name the "
                         "experiment keys in which a group's cases differ, such as "
                         "parallel.micro_batch", item->text);
        return FALSE;
      }
  /* A case alone in its group has nothing to be ordered against. */
  number = g_new (int, sizes->len);
  for (guint g = 0; g < sizes->len; g++)
    number[g] = g_array_index (sizes, int, g) > 1 ? v->order_groups++ : -1;
  for (guint i = 0; i < v->cases->len; i++)
    {
      ValidationCase *c = g_ptr_array_index (v->cases, i);
      if (c->order_group >= 0)
        c->order_group = number[c->order_group];
    }
  return TRUE;
}

/* Refuses OVERRIDES where they cannot apply: in a file of another kind
 * than training runs, and on a key of ORDER (order_within's list, may be
 * NULL) or a mapping holding one, which would merge the groups it
 * orders. */
static gboolean
check_overrides (const ValidationSpec *v, const YNode *order,
                 const char *const *overrides, GError **error)
{
  for (size_t i = 0; overrides && overrides[i]; i++)
    {
      const char *eq = strchr (overrides[i], '=');
      g_autofree char *key = g_strndup (overrides[i], eq ? (size_t) (eq - overrides[i])
                                                         : strlen (overrides[i]));
      g_autofree char *shown = text_shown (key);   /* as the messages quote it */
      if (v->kind != VALIDATION_TRAINING)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "--set %s: overrides apply to "
                       "files of training runs, not to a file of kind: %s", shown,
                       spec_enum_name (SPEC_ENUM_VALIDATION_KIND, v->kind));
          return FALSE;
        }
      for (guint j = 0; order && j < order->items->len; j++)
        {
          const char *o = ((const YNode *) g_ptr_array_index (order->items, j))->text;
          size_t n = MIN (strlen (key), strlen (o));
          if (strncmp (key, o, n) == 0 && (key[n] == '\0' || key[n] == '.')
              && (o[n] == '\0' || o[n] == '.'))
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "--set %s: the file orders "
                           "its cases by %s (order_within); setting it would merge "
                           "the groups it orders", shown, o);
              return FALSE;
            }
        }
    }
  return TRUE;
}

ValidationSpec *
config_load_validation (const char *path, const char *const *overrides, GError **error)
{
  g_autoptr (YNode) root = ytree_parse_file (path, error);
  g_autoptr (ValidationSpec) v = NULL;
  g_autoptr (GHashTable) ids = NULL;
  g_autoptr (GPtrArray) trees = NULL;
  Loader ld = { .root_file = path, .doc_what = "the validation file",
                .overrides = overrides };
  const ValidationBounds unset = { SPEC_UNSET, SPEC_UNSET, SPEC_UNSET, -1, -1 };
  const YPair *defaults, *cases;
  const YNode *order = NULL;

  if (!root)
    return NULL;
  v = g_new0 (ValidationSpec, 1);
  v->flops = -1;
  v->tolerance = v->known_gap = unset;
  v->cases = g_ptr_array_new ();
  if (!config_check_document (root, "a validation", "name, defaults and cases",
                              validation_fields, error))
    return NULL;
  if (!config_decode_map (&ld, root, "", validation_fields, v, error)
      || !check_known_gap (root, v, error) || !check_order_within (root, &order, error)
      || !check_overrides (v, order, overrides, error))
    return NULL;
  v->has_known_gap = ytree_map_find (root, "known_gap") != NULL;
  /* flops and order_within describe training runs: a file of collectives,
   * GEMMs or MLPs that gives them says something validate would not use. */
  static const char *const training_only[] = { "flops", "order_within" };
  for (size_t i = 0; v->kind != VALIDATION_TRAINING && i < G_N_ELEMENTS (training_only); i++)
    {
      const YPair *pair = ytree_map_find (root, training_only[i]);
      if (pair)
        {
          ytree_set_error (error, pair->key_mark, "%s applies to training runs only, not "
                           "to a file of kind: %s", training_only[i],
                           spec_enum_name (SPEC_ENUM_VALIDATION_KIND, v->kind));
          return NULL;
        }
    }
  /* Nor does a bound on runs that ran out of memory, which only training
   * runs have. */
  for (int k = 0; v->kind != VALIDATION_TRAINING && k < 2; k++)
    {
      const char *bounds = k ? "known_gap" : "tolerance";
      const YPair *b = ytree_map_find (root, bounds);
      const YPair *m = b ? ytree_map_find (b->value, "memory_misses") : NULL;
      if (m)
        {
          ytree_set_error (error, m->key_mark, "%s.memory_misses applies to training "
                           "runs only, not to a file of kind: %s", bounds,
                           spec_enum_name (SPEC_ENUM_VALIDATION_KIND, v->kind));
          return NULL;
        }
    }

  defaults = ytree_map_find (root, "defaults");
  if (defaults && ytree_is_null (defaults->value))
    defaults = NULL;
  if (defaults && defaults->value->kind != YNODE_MAPPING)
    {
      g_autofree char *g = config_got (defaults->value);
      ytree_set_error (error, defaults->value->mark, "defaults must be a mapping of "
                       "experiment keys, got %s", g);
      return NULL;
    }
  cases = ytree_map_find (root, "cases");
  if (cases->value->kind != YNODE_SEQUENCE || cases->value->items->len == 0)
    {
      g_autofree char *g = config_got (cases->value);
      ytree_set_error (error, cases->value->mark, "cases must be a non-empty list of "
                       "mappings, each with id, measured and experiment keys, got %s", g);
      return NULL;
    }

  ids = g_hash_table_new (g_str_hash, g_str_equal);
  trees = g_ptr_array_new_with_free_func ((GDestroyNotify) ytree_free);
  for (guint i = 0; i < cases->value->items->len; i++)
    {
      const YNode *node = g_ptr_array_index (cases->value->items, i);
      ValidationCase *c;
      YNode *tree = NULL;

      if (node->kind != YNODE_MAPPING)
        {
          g_autofree char *g = config_got (node);
          ytree_set_error (error, node->mark, "a case must be a mapping with id, measured "
                           "and experiment keys, got %s", g);
          return NULL;
        }
      c = g_new0 (ValidationCase, 1);
      g_ptr_array_add (v->cases, c);
      const YNode *dv = defaults ? defaults->value : NULL;
      c->batch = 1;   /* a GEMM case's, unless given */
      if (v->kind == VALIDATION_COLLECTIVES
          ? !load_collective_case (&ld, dv, node, c, &tree, error)
          : v->kind == VALIDATION_GEMM
          ? !load_gemm_case (&ld, dv, node, c, &tree, error)
          : v->kind == VALIDATION_MLP
          ? !load_mlp_case (&ld, dv, node, c, &tree, error)
          : !load_case (&ld, v, dv, node, c, &tree, error))
        return NULL;
      g_ptr_array_add (trees, tree);
      if (g_hash_table_contains (ids, c->id))
        {
          const YPair *id = ytree_map_find (node, "id");
          ytree_set_error (error, id->value->mark, "duplicate case id '%s' (ids must be "
                           "unique in a file)", c->id);
          return NULL;
        }
      g_hash_table_add (ids, c->id);
    }
  if (order && !group_cases (v, trees, order, error))
    return NULL;
  if (!ytree_map_find (root, "role"))
    {
      ytree_set_error (error, root->mark, "the validation file must say its role: "
                       "calibration (constants were fitted to it) or validation (never "
                       "used to fit anything)");
      return NULL;
    }
  return g_steal_pointer (&v);
}
