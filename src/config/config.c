/* config.c: YAML trees to the typed specs of spec.h (config.h).
 *
 * Each kind of mapping is a table of its keys (Field); decode_map walks a
 * mapping against its table, so an unknown key, a missing required key and
 * a badly typed value are found in one place and reported with the mark of
 * the node that holds them. Defaults live in experiment_defaults(). */
#include "config/config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "base/errors.h"
#include "base/units.h"

#ifndef TRAINSIM_DATADIR
#error "TRAINSIM_DATADIR must name the installed data directory"
#endif

/* --- the schema ------------------------------------------------------------ */

typedef enum {
  F_LABEL,      /* text the simulator does not use (description) */
  F_NAME,       /* text kept as an owned char * */
  F_SCHEMA,     /* schema_version: must be 1 */
  F_INT,        /* positive int */
  F_INT_AUTO,   /* positive int, or auto -> 0 */
  F_INT_RANGE,  /* int from 0 to arg */
  F_BOOL,       /* gboolean */
  F_ENUM,       /* int, arg: SpecEnum */
  F_UNIT,       /* double in SI units, arg: UnitKind */
  F_FRACTION,   /* double in (0, 1] */
  F_NUMBER,     /* positive double */
  F_MAP,        /* a nested mapping of the fields in sub */
  F_REF,        /* arg: RefKind; a name, a path or a mapping of the fields in sub */
  F_SWEEP,      /* experiment.sweep: only its shape is checked here */
  F_INT_LIST,   /* SpecIntList of integers from arg, such as example */
  F_SKIP,       /* read by the caller (validation defaults and cases) */
} FieldType;

typedef struct Field Field;
struct Field {
  const char *key;
  FieldType type;
  gboolean required;
  size_t offset;        /* of the value in the struct being filled */
  int arg;
  const Field *sub;     /* F_MAP and F_REF */
  /* F_REF: checks across fields once the mapping is decoded */
  gboolean (*finish) (const YNode *map, const char *path, void *base, GError **error);
  size_t mark;          /* offset in SpecMarks to record the value's mark; 0 for
                         * none (offset 0 is marks.file, never a field's) */
  const char *example;  /* F_INT_LIST: a valid list, for the error */
};

typedef enum { REF_MODEL, REF_TOPOLOGY, REF_DEVICE } RefKind;

static const struct {
  const char *what, *plural, *subdir;
} ref_kinds[] = {
  [REF_MODEL] = { "model", "models", "models" },
  [REF_TOPOLOGY] = { "topology", "topologies", "topologies" },
  [REF_DEVICE] = { "device", "devices", "topologies/devices" },
};

#define F(k, t, st, member, ...) \
  { .key = (k), .type = (t), .offset = offsetof (st, member), __VA_ARGS__ }
#define END { .key = NULL }
#define REQUIRED .required = TRUE
#define MARK(m) .mark = offsetof (SpecMarks, m)
/* Keys every file-level mapping accepts. */
#define FILE_KEYS \
  { .key = "schema_version", .type = F_SCHEMA }, \
  { .key = "description", .type = F_LABEL }

static const Field peak_fields[] = {
  { "fp32", F_UNIT, .offset = PRECISION_FP32 * sizeof (double), .arg = UNIT_FLOPS },
  { "tf32", F_UNIT, .offset = PRECISION_TF32 * sizeof (double), .arg = UNIT_FLOPS },
  { "fp16", F_UNIT, REQUIRED, .offset = PRECISION_FP16 * sizeof (double), .arg = UNIT_FLOPS },
  { "bf16", F_UNIT, REQUIRED, .offset = PRECISION_BF16 * sizeof (double), .arg = UNIT_FLOPS },
  END
};

static const Field device_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, DeviceSpec, name),
  F ("peak", F_MAP, DeviceSpec, peak_flops, REQUIRED, .sub = peak_fields),
  F ("memory", F_UNIT, DeviceSpec, memory_bytes, REQUIRED, .arg = UNIT_BYTES),
  F ("hbm_bandwidth", F_UNIT, DeviceSpec, hbm_bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("matmul_efficiency", F_FRACTION, DeviceSpec, matmul_efficiency),
  F ("hbm_efficiency", F_FRACTION, DeviceSpec, hbm_efficiency),
  END
};

static const Field intra_node_fields[] = {
  F ("link", F_ENUM, IntraNodeSpec, link, .arg = SPEC_ENUM_LINK),
  F ("bandwidth", F_UNIT, IntraNodeSpec, bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("latency", F_UNIT, IntraNodeSpec, latency, .arg = UNIT_TIME),
  END
};

static const Field fabric_fields[] = {
  F ("kind", F_ENUM, FabricSpec, kind, .arg = SPEC_ENUM_FABRIC),
  F ("taper", F_FRACTION, FabricSpec, taper),
  F ("nodes_per_group", F_INT, FabricSpec, nodes_per_group),
  F ("groups", F_INT, FabricSpec, groups),
  F ("routing_efficiency", F_FRACTION, FabricSpec, routing_efficiency),
  END
};

static const Field inter_node_fields[] = {
  F ("link", F_ENUM, InterNodeSpec, link, .arg = SPEC_ENUM_LINK),
  F ("nics_per_node", F_INT, InterNodeSpec, nics_per_node, REQUIRED),
  F ("nic_bandwidth", F_UNIT, InterNodeSpec, nic_bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("latency", F_UNIT, InterNodeSpec, latency, .arg = UNIT_TIME),
  F ("fabric", F_MAP, InterNodeSpec, fabric, .sub = fabric_fields),
  F ("nic_path", F_ENUM, InterNodeSpec, nic_path, .arg = SPEC_ENUM_NIC_PATH),
  F ("nic_of_gpu", F_INT_LIST, InterNodeSpec, nic_of_gpu, .arg = 0,
     .example = "[0, 0, 1, 1] (the NIC of each GPU)"),
  END
};

static const Field host_fields[] = {
  F ("pcie_bandwidth", F_UNIT, HostSpec, pcie_bandwidth, .arg = UNIT_BANDWIDTH),
  F ("memory", F_UNIT, HostSpec, memory_bytes, .arg = UNIT_BYTES),
  F ("cpu_adam_params_per_s", F_NUMBER, HostSpec, cpu_adam_params_per_s),
  F ("gpus_per_pcie_switch", F_INT, HostSpec, gpus_per_pcie_switch),
  F ("kernel_launch", F_UNIT, HostSpec, kernel_launch_s, .arg = UNIT_TIME),
  END
};

static const Field topology_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, TopologySpec, name),
  F ("gpus_per_node", F_INT, TopologySpec, gpus_per_node, REQUIRED),
  F ("gpu", F_REF, TopologySpec, gpu, REQUIRED, .arg = REF_DEVICE, .sub = device_fields),
  F ("intra_node", F_MAP, TopologySpec, intra_node, REQUIRED, .sub = intra_node_fields),
  F ("inter_node", F_MAP, TopologySpec, inter_node, .sub = inter_node_fields),
  F ("host", F_MAP, TopologySpec, host, .sub = host_fields),
  END
};

static gboolean model_finish (const YNode *map, const char *path, void *base, GError **error);
static gboolean topology_finish (const YNode *map, const char *path, void *base,
                                 GError **error);

static gboolean training_finish (const YNode *map, const char *path, void *base,
                                 GError **error);

static const Field model_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, ModelSpec, name),
  F ("layers", F_INT, ModelSpec, layers, REQUIRED, MARK (layers)),
  F ("hidden", F_INT, ModelSpec, hidden, REQUIRED),
  F ("heads", F_INT, ModelSpec, heads, REQUIRED, MARK (heads)),
  F ("kv_heads", F_INT, ModelSpec, kv_heads),
  F ("ffn_hidden", F_INT, ModelSpec, ffn_hidden),
  F ("mlp", F_ENUM, ModelSpec, mlp, .arg = SPEC_ENUM_MLP),
  F ("vocab", F_INT, ModelSpec, vocab, REQUIRED),
  F ("dropout", F_BOOL, ModelSpec, dropout),
  F ("seq_len", F_INT, ModelSpec, seq_len, REQUIRED),
  END
};

static const Field parallel_fields[] = {
  F ("tp", F_INT, ParallelSpec, tp, REQUIRED, MARK (tp)),
  F ("pp", F_INT, ParallelSpec, pp, REQUIRED, MARK (pp)),
  F ("dp", F_INT, ParallelSpec, dp, MARK (dp)),
  F ("micro_batch", F_INT_AUTO, ParallelSpec, micro_batch, REQUIRED, MARK (micro_batch)),
  F ("global_batch", F_INT, ParallelSpec, global_batch, REQUIRED, MARK (global_batch)),
  F ("schedule", F_ENUM, ParallelSpec, schedule, .arg = SPEC_ENUM_SCHEDULE),
  F ("virtual_stages", F_INT_AUTO, ParallelSpec, virtual_stages, MARK (virtual_stages)),
  F ("sequence_parallel", F_BOOL, ParallelSpec, sequence_parallel),
  F ("gradient_bucketing", F_BOOL, ParallelSpec, gradient_bucketing),
  F ("bucket_size", F_UNIT, ParallelSpec, bucket_bytes, .arg = UNIT_BYTES),
  F ("tp_across_nodes", F_BOOL, ParallelSpec, tp_across_nodes),
  F ("tp_overlap", F_BOOL, ParallelSpec, tp_overlap),
  F ("grad_accumulation", F_ENUM, ParallelSpec, grad_accumulation,
     .arg = SPEC_ENUM_GRAD_ACCUMULATION),
  F ("stage_layers", F_INT_LIST, ParallelSpec, stage_layers, .arg = 1,
     .example = "[5, 6, 6, 5] (the layers of each stage)", MARK (stage_layers)),
  END
};

static const Field zero_fields[] = {
  F ("stage", F_INT_RANGE, ZeroSpec, stage, .arg = 3, MARK (zero_stage)),
  F ("offload", F_ENUM, ZeroSpec, offload, .arg = SPEC_ENUM_OFFLOAD, MARK (offload)),
  END
};

static const Field training_fields[] = {
  F ("precision", F_ENUM, TrainingSpec, precision, .arg = SPEC_ENUM_PRECISION),
  F ("recompute", F_ENUM, TrainingSpec, recompute, .arg = SPEC_ENUM_RECOMPUTE),
  F ("attention", F_ENUM, TrainingSpec, attention, .arg = SPEC_ENUM_ATTENTION),
  F ("flash_attention", F_BOOL, TrainingSpec, flash_attention),
  F ("tokens", F_NUMBER, TrainingSpec, tokens),
  END
};

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

static const Field collectives_fields[] = {
  F ("algorithm", F_ENUM, CollectivesSpec, algorithm, .arg = SPEC_ENUM_ALGORITHM),
  END
};

static const Field experiment_fields[] = {
  FILE_KEYS,
  { .key = "name", .type = F_LABEL },
  F ("model", F_REF, ExperimentSpec, model, REQUIRED, .arg = REF_MODEL, .sub = model_fields,
     .finish = model_finish),
  F ("topology", F_REF, ExperimentSpec, topology, REQUIRED, .arg = REF_TOPOLOGY,
     .sub = topology_fields, .finish = topology_finish),
  F ("gpus", F_INT, ExperimentSpec, gpus, REQUIRED, MARK (gpus)),
  F ("parallel", F_MAP, ExperimentSpec, parallel, REQUIRED, .sub = parallel_fields),
  F ("zero", F_MAP, ExperimentSpec, zero, .sub = zero_fields),
  F ("training", F_MAP, ExperimentSpec, training, .sub = training_fields,
     .finish = training_finish),
  F ("compute", F_MAP, ExperimentSpec, compute, .sub = compute_fields),
  F ("cost", F_MAP, ExperimentSpec, cost, .sub = cost_fields),
  F ("collectives", F_MAP, ExperimentSpec, collectives, .sub = collectives_fields),
  { .key = "sweep", .type = F_SWEEP, MARK (sweep) },
  END
};

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

/* Every default in one place; counts left 0 are either required or derived
 * (kv_heads, ffn_hidden in model_finish; dp from gpus in the plan). */
static void
experiment_defaults (ExperimentSpec *e)
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
  e->parallel.gradient_bucketing = TRUE;
  e->parallel.tp_overlap = TRUE;
  e->parallel.bucket_bytes = 25.0 * 1024 * 1024;  /* PyTorch DDP bucket_cap_mb = 25 (MiB) */
  e->zero.stage = 0;
  e->zero.offload = OFFLOAD_NONE;
  e->training.precision = PRECISION_BF16;
  e->training.recompute = RECOMPUTE_NONE;
  e->training.tokens = SPEC_UNSET;
  e->compute.mfu = SPEC_UNSET;
  e->compute.matmul_efficiency = SPEC_UNSET;
  e->compute.hbm_efficiency = SPEC_UNSET;
  e->cost.gpu_hour_usd = 1.5;
}

/* --- did you mean ------------------------------------------------------------ */

static size_t
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  g_autofree size_t *row = g_new (size_t, lb + 1);

  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++)
    {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= lb; j++)
        {
          size_t up = row[j];
          size_t best = MIN (up, row[j - 1]) + 1;
          row[j] = MIN (best, diag + (a[i - 1] != b[j - 1]));
          diag = up;
        }
    }
  return row[lb];
}

/* " (did you mean 'x'?)" for the closest of NAMES within two edits, or "". */
static char *
did_you_mean (const char *word, GPtrArray *names)
{
  const char *best = NULL;
  size_t best_d = 3;

  for (guint i = 0; i < names->len; i++)
    {
      size_t d = edit_distance (word, g_ptr_array_index (names, i));
      if (d < best_d)
        best = g_ptr_array_index (names, i), best_d = d;
    }
  return best ? g_strdup_printf (" (did you mean '%s'?)", best) : g_strdup ("");
}

static char *
join (GPtrArray *names)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", (const char *) g_ptr_array_index (names, i));
  return g_string_free (s, FALSE);
}

/* --- finding named files -------------------------------------------------- */

typedef struct {
  const char *root_file;  /* the experiment or validation file */
  const char *doc_what;   /* "the experiment": names the top-level mapping */
  SpecMarks *marks;       /* where to record marks, or NULL */
} Loader;

/* PATH relative to the current directory when it lies below it: marks then
 * read like the paths the user typed. */
static char *
display_path (const char *path)
{
  g_autofree char *cwd = g_get_current_dir ();
  size_t n = strlen (cwd);

  if (strncmp (path, cwd, n) == 0 && path[n] == G_DIR_SEPARATOR)
    return g_strdup (path + n + 1);
  return g_strdup (path);
}

/* The data directories searched for a name written at MARK, in order:
 * TRAINSIM_DATA_PATH, the writer's directory and its ancestors, the
 * installed data directory. A --set value has no file: the experiment's
 * directory stands in. */
static GPtrArray *
search_roots (const Loader *ld, YMark mark)
{
  GPtrArray *roots = g_ptr_array_new_with_free_func (g_free);
  const char *env = g_getenv ("TRAINSIM_DATA_PATH");
  g_autofree char *dir = g_path_get_dirname (mark.line ? mark.file : ld->root_file);
  char *d = g_canonicalize_filename (dir, NULL);

  if (env)
    {
      g_auto (GStrv) parts = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);
      for (int i = 0; parts[i]; i++)
        if (parts[i][0])
          g_ptr_array_add (roots, g_strdup (parts[i]));
    }
  for (;;)
    {
      char *parent = g_path_get_dirname (d);
      g_ptr_array_add (roots, d);
      if (strcmp (parent, d) == 0)
        {
          g_free (parent);
          break;
        }
      d = parent;
    }
  g_ptr_array_add (roots, g_strdup (TRAINSIM_DATADIR));
  return roots;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The names of KIND found in ROOTS, sorted, without repeats. */
static GPtrArray *
known_names (GPtrArray *roots, RefKind kind)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < roots->len; i++)
    {
      g_autofree char *sub = g_build_filename (g_ptr_array_index (roots, i),
                                               ref_kinds[kind].subdir, NULL);
      g_autoptr (GDir) dir = g_dir_open (sub, 0, NULL);
      const char *entry;

      while (dir && (entry = g_dir_read_name (dir)))
        if (g_str_has_suffix (entry, ".yaml"))
          {
            char *name = g_strndup (entry, strlen (entry) - strlen (".yaml"));
            if (g_hash_table_contains (seen, name))
              g_free (name);
            else
              {
                g_hash_table_add (seen, name);
                g_ptr_array_add (names, name);
              }
          }
    }
  g_ptr_array_sort (names, compare_names);
  return names;
}

static gboolean
is_path (const char *text)
{
  return strchr (text, '/') || g_str_has_suffix (text, ".yaml") || g_str_has_suffix (text, ".yml");
}

/* Whether FILE is a regular file, for the name at MARK. One that is there
 * but cannot be reached (a symbolic link loop, no permission) or is not a
 * regular file is an error saying what the system says: it is not a
 * missing name, to be answered with "did you mean" its own name. *ERROR
 * is left unset when FILE is simply not there. */
static gboolean
ref_file_usable (const char *what, const char *file, YMark mark, GError **error)
{
  GStatBuf st;
  int saved;

  if (g_stat (file, &st) == 0)
    {
      if (S_ISREG (st.st_mode))
        return TRUE;
      ytree_set_error (error, mark, "%s file %s is not a regular file", what, file);
      return FALSE;
    }
  saved = errno;
  if (saved != ENOENT && saved != ENOTDIR)
    ytree_set_error (error, mark, "cannot read %s file %s: %s", what, file,
                     g_strerror (saved));
  return FALSE;
}

/* The path of the file that REF (a scalar: a name or a path) points to,
 * relative to the current directory where it can be: marks show it. */
static char *
find_ref_file (const Loader *ld, RefKind kind, const YNode *ref, GError **error)
{
  const char *what = ref_kinds[kind].what;
  g_autoptr (GPtrArray) roots = NULL;
  g_autoptr (GPtrArray) names = NULL;
  g_autofree char *hint = NULL, *list = NULL;

  if (is_path (ref->text))
    {
      /* Relative to the file that wrote it; a --set value was typed in a
       * shell, so relative to the current directory. */
      g_autofree char *dir = ref->mark.line ? g_path_get_dirname (ref->mark.file) : g_strdup (".");
      g_autofree char *file = g_path_is_absolute (ref->text)
                                ? g_strdup (ref->text) : g_build_filename (dir, ref->text, NULL);
      g_autoptr (GError) local = NULL;

      if (ref_file_usable (what, file, ref->mark, &local))
        return g_steal_pointer (&file);
      if (local)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        ytree_set_error (error, ref->mark, "%s file '%s' not found (looked for %s)",
                         what, ref->text, file);
      return NULL;
    }

  roots = search_roots (ld, ref->mark);
  for (guint i = 0; i < roots->len; i++)
    {
      g_autofree char *base = g_strconcat (ref->text, ".yaml", NULL);
      g_autofree char *file = g_build_filename (g_ptr_array_index (roots, i),
                                                ref_kinds[kind].subdir, base, NULL);
      g_autofree char *shown = display_path (file);
      g_autoptr (GError) local = NULL;

      if (ref_file_usable (what, shown, ref->mark, &local))
        return g_steal_pointer (&shown);
      if (local)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  names = known_names (roots, kind);
  hint = did_you_mean (ref->text, names);
  list = join (names);
  if (names->len)
    ytree_set_error (error, ref->mark, "unknown %s '%s'%s; known %s: %s", what, ref->text,
                     hint, ref_kinds[kind].plural, list);
  else
    ytree_set_error (error, ref->mark,
                     "unknown %s '%s'; no %s found (set TRAINSIM_DATA_PATH to a directory "
                     "holding %s/), or write a path or an inline mapping",
                     what, ref->text, ref_kinds[kind].plural, ref_kinds[kind].subdir);
  return NULL;
}

static gboolean check_document (const YNode *root, const char *what, const char *such_as,
                                const Field *fields, GError **error);

/* Reads the file REF points to, a mapping of FIELDS that names itself. */
static YNode *
load_ref_file (const Loader *ld, RefKind kind, const Field *fields, const YNode *ref,
               GError **error)
{
  g_autofree char *file = find_ref_file (ld, kind, ref, error);
  g_autoptr (YNode) tree = NULL;

  g_autofree char *what = NULL, *such_as = NULL;

  if (!file || !(tree = ytree_parse_file (file, error)))
    return NULL;
  what = g_strconcat ("a ", ref_kinds[kind].what, NULL);
  such_as = g_strconcat (ref_kinds[kind].what, " keys", NULL);
  if (!check_document (tree, what, such_as, fields, error))
    return NULL;
  if (!ytree_map_find (tree, "name"))
    {
      /* A file without a name is known by its own name, minus .yaml. */
      g_autofree char *base = g_path_get_basename (ref->text);
      char *dot = strrchr (base, '.');
      if (dot && is_path (ref->text) && dot != base)
        *dot = '\0';
      if (!ytree_set_path (tree, "name", ytree_scalar_new (base, ref->mark), error))
        return NULL;
    }
  return g_steal_pointer (&tree);
}

/* A model, topology or device written as a name, a path, or a mapping
 * (merged over the named file when it has a name): the complete mapping. */
static YNode *
resolve_ref (const Loader *ld, RefKind kind, const Field *fields, const YNode *node,
             const char *path, GError **error)
{
  const YPair *name;
  YNode *base;

  if (node->kind == YNODE_SCALAR && !ytree_is_null (node))
    return load_ref_file (ld, kind, fields, node, error);
  if (node->kind != YNODE_MAPPING)
    {
      g_autofree char *got = node->kind == YNODE_SCALAR ? g_strdup ("nothing")
                                                         : g_strdup (ytree_kind_name (node->kind));
      ytree_set_error (error, node->mark,
                       "%s must be a %s name, a path to a YAML file or a mapping of its keys, "
                       "got %s", path, ref_kinds[kind].what, got);
      return NULL;
    }
  name = ytree_map_find (node, "name");
  if (!name || name->value->kind != YNODE_SCALAR || ytree_is_null (name->value))
    return ytree_copy (node);
  if (!(base = load_ref_file (ld, kind, fields, name->value, error)))
    return NULL;
  ytree_merge (&base, node);
  return base;
}

/* --- decoding values -------------------------------------------------------- */

/* --- quoting the input in messages ------------------------------------------
 *
 * A path given as an experiment or a model may name any file (a private
 * key, a password list, a mistyped path), and no message may print it:
 * - a document that is not a mapping is named by its kind alone;
 * - a document none of whose keys is, or is within a typo of, a key of
 *   what it was given as is "not a model file", with nothing quoted
 *   (check_document);
 * - whatever else is quoted (a value, an unknown key) is an excerpt: at
 *   most EXCERPT_CHARS characters of its first line, control characters
 *   (a terminal's escape sequences) shown as '?'. The keys and values of
 *   a real input are shorter. */
#define EXCERPT_CHARS 40

/* TEXT quoted for a message under the rule above: "'text'" or "'text...'". */
static char *
excerpt (const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);
  GString *s = g_string_new ("'");
  const char *p = valid;

  for (int n = 0; *p && *p != '\n' && n < EXCERPT_CHARS; n++)
    {
      const char *next = g_utf8_next_char (p);
      if ((guchar) *p < 0x20 || *p == 0x7f)
        g_string_append_c (s, '?');
      else
        g_string_append_len (s, p, next - p);
      p = next;
    }
  g_string_append (s, *p ? "...'" : "'");
  return g_string_free (s, FALSE);
}

/* "'text'" for a scalar, "a mapping" otherwise: the tail of "..., got X". */
static char *
got (const YNode *v)
{
  if (v->kind == YNODE_SCALAR)
    return excerpt (v->text);
  return g_strdup (ytree_kind_name (v->kind));
}

static const Field *find_field (const Field *fields, const char *key);

/* Checks that ROOT, a whole file given as WHAT ("an experiment"), is a
 * mapping of SUCH_AS, some of whose keys are FIELDS or near one (a typo):
 * anything else is some other file, reported without quoting it. */
static gboolean
check_document (const YNode *root, const char *what, const char *such_as,
                const Field *fields, GError **error)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  g_autofree char *valid = NULL;
  const YPair *first;

  if (root->kind != YNODE_MAPPING)
    {
      ytree_set_error (error, root->mark, "%s file must be a mapping of %s; this one is %s",
                       what, such_as, ytree_is_null (root) ? "empty"
                       : root->kind == YNODE_SCALAR ? "a single value" : "a list");
      return FALSE;
    }
  if (root->items->len == 0)
    return TRUE;
  for (const Field *k = fields; k->key; k++)
    g_ptr_array_add (keys, (char *) k->key);
  for (guint i = 0; i < root->items->len; i++)
    {
      const YPair *pair = g_ptr_array_index (root->items, i);
      g_autofree char *hint = did_you_mean (pair->key, keys);
      if (find_field (fields, pair->key) || hint[0])
        return TRUE;
    }
  first = g_ptr_array_index (root->items, 0);
  valid = join (keys);
  ytree_set_error (error, first->key_mark, "not %s file: none of its keys is one (they are "
                   "not shown, as this may be some other file); valid keys: %s", what, valid);
  return FALSE;
}

static gboolean
parse_int (const YNode *v, gint64 *out)
{
  return v->kind == YNODE_SCALAR
         && g_ascii_string_to_signed (v->text, 10, G_MININT64, G_MAXINT64, out, NULL);
}

/* Decimal only (units_number): 0x1p3 and inf are not numbers here. */
static gboolean
parse_double (const YNode *v, double *out)
{
  return v->kind == YNODE_SCALAR && units_number (v->text, out);
}

static gboolean
parse_bool (const YNode *v, gboolean *out)
{
  static const char *const yes[] = { "true", "yes", "on" }, *const no[] = { "false", "no", "off" };

  for (size_t i = 0; v->kind == YNODE_SCALAR && i < G_N_ELEMENTS (yes); i++)
    {
      if (g_ascii_strcasecmp (v->text, yes[i]) == 0)
        return *out = TRUE, TRUE;
      if (g_ascii_strcasecmp (v->text, no[i]) == 0)
        return *out = FALSE, TRUE;
    }
  return FALSE;
}

static gboolean decode_map (const Loader *ld, const YNode *map, const char *path,
                            const Field *fields, void *base, GError **error);

static gboolean
check_sweep (const YNode *v, const char *path, GError **error)
{
  if (ytree_is_null (v))
    return TRUE;
  if (v->kind != YNODE_MAPPING)
    {
      g_autofree char *g = got (v);
      ytree_set_error (error, v->mark, "%s must map dotted keys to lists of values, such as "
                       "{parallel.micro_batch: [1, 2, 4]}, got %s", path, g);
      return FALSE;
    }
  for (guint i = 0; i < v->items->len; i++)
    {
      const YPair *pair = g_ptr_array_index (v->items, i);
      const YNode *list = pair->value;
      /* A scalar is a range such as 1..8, which trainsim sweep expands. */
      gboolean ok = (list->kind == YNODE_SCALAR && strstr (list->text, "..") != NULL)
                    || (list->kind == YNODE_SEQUENCE && list->items->len > 0);

      for (guint j = 0; ok && list->kind == YNODE_SEQUENCE && j < list->items->len; j++)
        ok = ((const YNode *) g_ptr_array_index (list->items, j))->kind == YNODE_SCALAR;
      if (!ok)
        {
          ytree_set_error (error, list->mark, "%s.%s must be a non-empty list of values, "
                           "such as [1, 2, 4], or a range such as 1..8", path, pair->key);
          return FALSE;
        }
    }
  return TRUE;
}

/* Decodes V, the value of field F at PATH, into BASE + F->offset. */
static gboolean
decode_field (const Loader *ld, const Field *f, const YNode *v, const char *path,
              void *base, GError **error)
{
  void *slot = (char *) base + f->offset;
  g_autofree char *g = got (v);
  gint64 n;
  double x;

  switch (f->type)
    {
    case F_SKIP:
      return TRUE;
    case F_LABEL:
    case F_NAME:
      if (v->kind != YNODE_SCALAR)
        break;
      if (f->type == F_NAME)
        {
          g_free (*(char **) slot);
          *(char **) slot = g_strdup (v->text);
        }
      return TRUE;
    case F_SCHEMA:
      if (parse_int (v, &n) && n == 1)
        return TRUE;
      ytree_set_error (error, v->mark, "schema_version must be 1 (the version this trainsim "
                       "reads), got %s", g);
      return FALSE;
    case F_INT:
      if (parse_int (v, &n) && n > INT_MAX)
        {
          ytree_set_error (error, v->mark, "%s must be a positive integer no larger than %d, "
                           "got %s", path, INT_MAX, g);
          return FALSE;
        }
      if (parse_int (v, &n) && n > 0)
        return *(int *) slot = (int) n, TRUE;
      ytree_set_error (error, v->mark, "%s must be a positive integer, got %s", path, g);
      return FALSE;
    case F_INT_AUTO:
      if (v->kind == YNODE_SCALAR && strcmp (v->text, "auto") == 0)
        return *(int *) slot = 0, TRUE;
      if (parse_int (v, &n) && n > 0 && n <= INT_MAX)
        return *(int *) slot = (int) n, TRUE;
      ytree_set_error (error, v->mark, "%s must be a positive integer or auto, got %s", path, g);
      return FALSE;
    case F_INT_RANGE:
      if (parse_int (v, &n) && n >= 0 && n <= f->arg)
        return *(int *) slot = (int) n, TRUE;
      ytree_set_error (error, v->mark, "%s must be an integer from 0 to %d, got %s", path,
                       f->arg, g);
      return FALSE;
    case F_BOOL:
      if (parse_bool (v, slot))
        return TRUE;
      ytree_set_error (error, v->mark, "%s must be true or false, got %s", path, g);
      return FALSE;
    case F_ENUM:
      {
        g_autofree char *valid = spec_enum_list (f->arg);
        g_autoptr (GPtrArray) names = g_ptr_array_new ();
        g_autofree char *hint = NULL;
        int e = v->kind == YNODE_SCALAR ? spec_enum_parse (f->arg, v->text) : -1;

        if (e >= 0)
          return *(int *) slot = e, TRUE;
        for (int i = 0; i < spec_enum_count (f->arg); i++)
          g_ptr_array_add (names, (char *) spec_enum_name (f->arg, i));
        hint = v->kind == YNODE_SCALAR ? did_you_mean (v->text, names) : g_strdup ("");
        ytree_set_error (error, v->mark, "%s: unknown value %s%s; valid values: %s", path, g,
                         hint, valid);
        return FALSE;
      }
    case F_UNIT:
      {
        g_autofree char *why = NULL;
        if (v->kind == YNODE_SCALAR && units_parse (v->text, f->arg, slot, &why))
          return TRUE;
        if (!why)
          units_parse ("", f->arg, &x, &why);
        ytree_set_error (error, v->mark, "%s: %s, got %s", path, why, g);
        return FALSE;
      }
    case F_FRACTION:
      if (parse_double (v, &x) && x > 0 && x <= 1)
        return *(double *) slot = x, TRUE;
      ytree_set_error (error, v->mark, "%s must be a fraction in (0, 1], such as 0.85, got %s",
                       path, g);
      return FALSE;
    case F_NUMBER:
      if (parse_double (v, &x) && x > 0)
        return *(double *) slot = x, TRUE;
      ytree_set_error (error, v->mark, "%s must be a positive number, such as 2.5 or 3e11, "
                       "got %s", path, g);
      return FALSE;
    case F_MAP:
      return decode_map (ld, v, path, f->sub, slot, error)
             && (!f->finish || f->finish (v, path, slot, error));
    case F_REF:
      {
        g_autoptr (YNode) full = resolve_ref (ld, f->arg, f->sub, v, path, error);
        return full && decode_map (ld, full, path, f->sub, slot, error)
               && (!f->finish || f->finish (full, path, slot, error));
      }
    case F_SWEEP:
      return check_sweep (v, path, error);
    case F_INT_LIST:
      {
        SpecIntList *list = slot;
        if (v->kind != YNODE_SEQUENCE || v->items->len == 0
            || v->items->len > SPEC_MAX_LIST)
          {
            ytree_set_error (error, v->mark, "%s must be a list of 1 to %d integers, such "
                             "as %s, got %s", path, SPEC_MAX_LIST, f->example, g);
            return FALSE;
          }
        for (guint i = 0; i < v->items->len; i++)
          {
            const YNode *item = g_ptr_array_index (v->items, i);
            if (!parse_int (item, &n) || n < f->arg || n > INT_MAX)
              {
                g_autofree char *gi = got (item);
                ytree_set_error (error, item->mark, "%s[%u] must be an integer from %d, "
                                 "got %s", path, i, f->arg, gi);
                return FALSE;
              }
            list->v[i] = (int) n;
          }
        list->len = (int) v->items->len;
        return TRUE;
      }
    }
  ytree_set_error (error, v->mark, "%s must be text, got %s", path, g);
  return FALSE;
}

static const Field *
find_field (const Field *fields, const char *key)
{
  for (const Field *f = fields; f->key; f++)
    if (strcmp (f->key, key) == 0)
      return f;
  return NULL;
}

/* The error for KEY, written at MARK, that is none of FIELDS, the keys of
 * WHAT: the closest key, then every valid one (without `sweep` when only
 * the experiment's values are asked for). */
static void
unknown_key (const char *key, YMark mark, const char *what, const Field *fields,
             gboolean values_only, GError **error)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  g_autofree char *hint = NULL, *valid = NULL, *quoted = excerpt (key);

  for (const Field *k = fields; k->key; k++)
    if (!values_only || k->type != F_SWEEP)
      g_ptr_array_add (keys, (char *) k->key);
  hint = did_you_mean (key, keys);
  valid = join (keys);
  ytree_set_error (error, mark, "unknown key %s in %s%s; valid keys: %s", quoted, what, hint,
                   valid);
}

/* Decodes MAP (a mapping; null counts as empty) against FIELDS into BASE.
 * PATH is its dotted key ("" for the whole document): the prefix of every
 * message, so that a message names what --set would change. With STRICT,
 * keys not in FIELDS are errors; otherwise they are left to the caller. */
static gboolean
decode_fields (const Loader *ld, const YNode *map, const char *path, const Field *fields,
               void *base, gboolean strict, GError **error)
{
  const char *what = path[0] ? path : ld->doc_what;
  const YNode *node = map;    /* for the mark, when MAP is null */
  g_autoptr (GPtrArray) missing = g_ptr_array_new ();

  if (ytree_is_null (map))
    map = NULL;
  else if (map->kind != YNODE_MAPPING)
    {
      g_autofree char *g = got (map);
      ytree_set_error (error, map->mark, "%s must be a mapping such as {key: value}, got %s",
                       what, g);
      return FALSE;
    }

  for (guint i = 0; map && i < map->items->len; i++)
    {
      const YPair *pair = g_ptr_array_index (map->items, i);
      const Field *f = find_field (fields, pair->key);
      g_autofree char *child = path[0] ? g_strconcat (path, ".", pair->key, NULL)
                                       : g_strdup (pair->key);
      if (!f && strict)
        {
          unknown_key (pair->key, pair->key_mark, what, fields, FALSE, error);
          return FALSE;
        }
      if (!f)
        continue;
      if (!decode_field (ld, f, pair->value, child, base, error))
        return FALSE;
      if (f->mark && ld->marks)
        {
          char **m = (char **) ((char *) ld->marks + f->mark);
          g_free (*m);
          *m = ytree_mark_format (pair->value->mark);
        }
    }

  for (const Field *f = fields; f->key; f++)
    if (f->required && !ytree_map_find (map, f->key))
      g_ptr_array_add (missing, (char *) f->key);
  if (missing->len)
    {
      g_autofree char *list = join (missing);
      ytree_set_error (error, node->mark,
                       "%s is missing required key%s: %s", what,
                       missing->len > 1 ? "s" : "", list);
      return FALSE;
    }
  return TRUE;
}

static gboolean
decode_map (const Loader *ld, const YNode *map, const char *path, const Field *fields,
            void *base, GError **error)
{
  return decode_fields (ld, map, path, fields, base, TRUE, error);
}

/* Derives kv_heads and ffn_hidden, and checks that kv_heads divides heads. */
static gboolean
model_finish (const YNode *map, const char *path, void *base, GError **error)
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
  return TRUE;
}

/* flash_attention, the older key, says flash2 or unfused; attention names
 * the kernel. Both may be given only when they agree. */
static gboolean
training_finish (const YNode *map, const char *path, void *base, GError **error)
{
  TrainingSpec *t = base;
  const YPair *fa = ytree_map_find (map, "flash_attention");
  const YPair *at = ytree_map_find (map, "attention");

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
                       "flash1-triton or flash2)", path,
                       t->flash_attention ? "true" : "false", path,
                       spec_enum_name (SPEC_ENUM_ATTENTION, t->attention));
      return FALSE;
    }
  return TRUE;
}

/* Checks across a topology's fields: the NICs divide among the GPUs (or
 * nic_of_gpu says who shares which), and nic_path's default. */
static gboolean
topology_finish (const YNode *map, const char *path, void *base, GError **error)
{
  TopologySpec *t = base;
  InterNodeSpec *in = &t->inter_node;
  const YNode *inter = NULL, *list = NULL;
  const YPair *kv = ytree_map_find (map, "inter_node");
  int gpn = t->gpus_per_node, nics = in->nics_per_node;

  if (gpn > SPEC_MAX_GPUS_PER_NODE)
    {
      const YPair *g = ytree_map_find (map, "gpus_per_node");
      ytree_set_error (error, g->value->mark, "%s.gpus_per_node (%d) is more than the %d "
                       "GPUs per node trainsim models", path, gpn, SPEC_MAX_GPUS_PER_NODE);
      return FALSE;
    }
  if (kv)
    {
      inter = kv->value;
      const YPair *l = ytree_map_find (inter, "nic_of_gpu");
      list = l ? l->value : NULL;
    }
  if (gpn % t->host.gpus_per_pcie_switch != 0)
    {
      const YPair *h = ytree_map_find (map, "host");
      const YPair *g = ytree_map_find (h->value, "gpus_per_pcie_switch");
      ytree_set_error (error, g->value->mark, "%s.host.gpus_per_pcie_switch (%d) must "
                       "divide gpus_per_node %d", path, t->host.gpus_per_pcie_switch, gpn);
      return FALSE;
    }
  if (!inter || !ytree_map_find (inter, "nic_path"))
    in->nic_path = t->intra_node.link == LINK_NVSWITCH || t->intra_node.link == LINK_NVLINK
                   ? NIC_PATH_NVLINK : NIC_PATH_PCIE;
  if (nics == 0)
    return TRUE;
  if (nics > SPEC_MAX_GPUS_PER_NODE)
    {
      const YPair *n = ytree_map_find (inter, "nics_per_node");
      ytree_set_error (error, n->value->mark, "%s.inter_node.nics_per_node (%d) is more "
                       "than the %d NICs per node trainsim models", path, nics,
                       SPEC_MAX_GPUS_PER_NODE);
      return FALSE;
    }
  if (list)
    {
      gboolean used[SPEC_MAX_GPUS_PER_NODE] = { FALSE };
      if (in->nic_of_gpu.len != gpn)
        {
          ytree_set_error (error, list->mark, "%s.inter_node.nic_of_gpu lists %d GPUs; the "
                           "node has gpus_per_node: %d", path, in->nic_of_gpu.len, gpn);
          return FALSE;
        }
      for (int g = 0; g < gpn; g++)
        {
          if (in->nic_of_gpu.v[g] >= nics)
            {
              const YNode *item = g_ptr_array_index (list->items, g);
              ytree_set_error (error, item->mark, "%s.inter_node.nic_of_gpu[%d] is NIC %d; "
                               "the node has NICs 0 to %d (nics_per_node: %d)", path, g,
                               in->nic_of_gpu.v[g], nics - 1, nics);
              return FALSE;
            }
          used[in->nic_of_gpu.v[g]] = TRUE;
        }
      for (int n = 0; n < nics; n++)
        if (!used[n])
          {
            ytree_set_error (error, list->mark, "%s.inter_node.nic_of_gpu puts no GPU next "
                             "to NIC %d of %d; every NIC needs one", path, n, nics);
            return FALSE;
          }
      return TRUE;
    }
  /* Over NVLink any GPU reaches any NIC, so an uneven count still
   * spreads evenly; over PCIe each GPU is tied to one NIC and an uneven
   * count must say which GPUs share which. */
  if (in->nic_path == NIC_PATH_PCIE && gpn % nics != 0 && nics % gpn != 0)
    {
      const YPair *n = ytree_map_find (inter, "nics_per_node");
      ytree_set_error (error, n->value->mark, "%s.inter_node.nics_per_node (%d) does not "
                       "divide among %d GPUs per node behind PCIe (nic_path: pcie): use a "
                       "count that divides %d or that %d divides, or say which GPUs share "
                       "which NIC with nic_of_gpu, such as [0, 0, 0, 1, 1, 1, 2, 2]", path,
                       nics, gpn, gpn, gpn);
      return FALSE;
    }
  return TRUE;
}

/* --- experiments ------------------------------------------------------------ */

/* Applies one "dotted.key=value" to ROOT; the value's marks name the --set. */
static gboolean
apply_set (YNode *root, const char *assignment, GError **error)
{
  const char *eq = strchr (assignment, '=');
  g_autofree char *key = NULL, *origin = NULL;
  YNode *value;

  if (!eq || eq == assignment)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "--set %s: expected KEY=VALUE, such as --set parallel.tp=4", assignment);
      return FALSE;
    }
  key = g_strndup (assignment, (size_t) (eq - assignment));
  origin = g_strconcat ("--set ", key, NULL);
  if (!(value = ytree_parse_string (eq + 1, origin, FALSE, error)))
    return FALSE;
  return ytree_set_path (root, key, value, error);
}

gboolean
config_check_key (const char *key, YMark mark, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (key, ".", -1);
  g_autoptr (GString) path = g_string_new (NULL);
  const Field *fields = experiment_fields;

  for (int i = 0; parts[i]; i++)
    {
      const Field *f;

      if (parts[i][0] == '\0')
        {
          ytree_set_error (error, mark, "'%s' is not a dotted key such as parallel.tp", key);
          return FALSE;
        }
      if (fields == NULL)
        {
          ytree_set_error (error, mark, "unknown key '%s': %s is a single value, with no "
                           "keys inside it", key, path->str);
          return FALSE;
        }
      f = find_field (fields, parts[i]);
      /* The sweep itself is not a value of the experiment. */
      if (f == NULL || f->type == F_SWEEP)
        {
          unknown_key (parts[i], mark, path->len ? path->str : "the experiment", fields,
                       TRUE, error);
          return FALSE;
        }
      g_string_append_printf (path, "%s%s", i ? "." : "", parts[i]);
      fields = f->type == F_MAP || f->type == F_REF ? f->sub : NULL;
    }
  return TRUE;
}

YNode *
config_read_tree (const char *path, const char *const *overrides, GError **error)
{
  g_autoptr (YNode) root = ytree_parse_file (path, error);

  if (!root || !check_document (root, "an experiment", "keys such as model, topology, "
                                 "gpus and parallel", experiment_fields, error))
    return NULL;
  for (size_t i = 0; overrides && overrides[i]; i++)
    if (!apply_set (root, overrides[i], error))
      return NULL;
  return g_steal_pointer (&root);
}

gboolean
config_experiment_from_tree (const YNode *root, const char *path, ExperimentSpec *out,
                             GError **error)
{
  Loader ld = { .root_file = path, .doc_what = "the experiment", .marks = &out->marks };

  memset (out, 0, sizeof *out);
  experiment_defaults (out);
  out->marks.file = g_strdup (path);
  if (!decode_map (&ld, root, "", experiment_fields, out, error))
    {
      experiment_spec_clear (out);
      return FALSE;
    }
  return TRUE;
}

gboolean
config_load_experiment (const char *path, const char *const *overrides, ExperimentSpec *out,
                        GError **error)
{
  g_autoptr (YNode) root = config_read_tree (path, overrides, error);

  if (!root)
    {
      memset (out, 0, sizeof *out);
      return FALSE;
    }
  return config_experiment_from_tree (root, path, out, error);
}

gboolean
config_load_topology (const char *ref, const char *const *overrides, TopologySpec *out,
                      GError **error)
{
  static const Field fields[] = {
    F ("topology", F_REF, ExperimentSpec, topology, REQUIRED, .arg = REF_TOPOLOGY,
       .sub = topology_fields, .finish = topology_finish),
    END
  };
  YMark mark = { g_intern_string ("the command line"), 0, 0 };
  g_autoptr (YNode) root = ytree_parse_string ("{}", "the command line", FALSE, error);
  /* Relative paths resolve from the current directory. */
  Loader ld = { .root_file = "./topology", .doc_what = "the topology" };
  ExperimentSpec e;

  memset (out, 0, sizeof *out);
  if (!root || !ytree_set_path (root, "topology", ytree_scalar_new (ref, mark), error))
    return FALSE;
  for (size_t i = 0; overrides && overrides[i]; i++)
    {
      g_autofree char *full = g_strconcat ("topology.", overrides[i], NULL);
      if (!apply_set (root, full, error))
        return FALSE;
    }
  memset (&e, 0, sizeof e);
  experiment_defaults (&e);
  if (!decode_map (&ld, root, "", fields, &e, error))
    {
      experiment_spec_clear (&e);
      return FALSE;
    }
  *out = e.topology;
  memset (&e.topology, 0, sizeof e.topology);
  experiment_spec_clear (&e);
  return TRUE;
}

/* --- validation files ----------------------------------------------------- */

/* The mark of measured.KEY in CASE_NODE, whose measured mapping is known
 * to hold KEY. */
static YMark
measured_mark (const YNode *case_node, const char *key)
{
  const YNode *measured = ytree_map_find (case_node, "measured")->value;
  return ytree_map_find (measured, key)->value->mark;
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
  if (!decode_fields (ld, case_node, "case", case_fields, c, FALSE, error)
      || !check_measured (v, case_node, c, error))
    return FALSE;
  ytree_map_remove (rest, "id");
  ytree_map_remove (rest, "measured");
  if (defaults)
    {
      experiment = ytree_copy (defaults);
      ytree_merge (&experiment, rest);
    }
  else
    experiment = g_steal_pointer (&rest);
  if (!config_experiment_from_tree (experiment, ld->root_file, &c->experiment, error))
    return FALSE;
  *tree = g_steal_pointer (&experiment);
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
      const Field *f = find_field (bounds_fields, pair->key);
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
      g_autofree char *g = got (pair->value);
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

ValidationSpec *
config_load_validation (const char *path, GError **error)
{
  g_autoptr (YNode) root = ytree_parse_file (path, error);
  g_autoptr (ValidationSpec) v = NULL;
  g_autoptr (GHashTable) ids = NULL;
  g_autoptr (GPtrArray) trees = NULL;
  Loader ld = { .root_file = path, .doc_what = "the validation file" };
  const ValidationBounds unset = { SPEC_UNSET, SPEC_UNSET, SPEC_UNSET, -1, -1 };
  const YPair *defaults, *cases;
  const YNode *order = NULL;

  if (!root)
    return NULL;
  v = g_new0 (ValidationSpec, 1);
  v->flops = -1;
  v->tolerance = v->known_gap = unset;
  v->cases = g_ptr_array_new ();
  if (!check_document (root, "a validation", "name, defaults and cases", validation_fields,
                       error))
    return NULL;
  if (!decode_map (&ld, root, "", validation_fields, v, error)
      || !check_known_gap (root, v, error) || !check_order_within (root, &order, error))
    return NULL;
  v->has_known_gap = ytree_map_find (root, "known_gap") != NULL;

  defaults = ytree_map_find (root, "defaults");
  if (defaults && ytree_is_null (defaults->value))
    defaults = NULL;
  if (defaults && defaults->value->kind != YNODE_MAPPING)
    {
      g_autofree char *g = got (defaults->value);
      ytree_set_error (error, defaults->value->mark, "defaults must be a mapping of "
                       "experiment keys, got %s", g);
      return NULL;
    }
  cases = ytree_map_find (root, "cases");
  if (cases->value->kind != YNODE_SEQUENCE || cases->value->items->len == 0)
    {
      g_autofree char *g = got (cases->value);
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
          g_autofree char *g = got (node);
          ytree_set_error (error, node->mark, "a case must be a mapping with id, measured "
                           "and experiment keys, got %s", g);
          return NULL;
        }
      c = g_new0 (ValidationCase, 1);
      g_ptr_array_add (v->cases, c);
      if (!load_case (&ld, v, defaults ? defaults->value : NULL, node, c, &tree, error))
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
