/* config.h: the loader, from YAML files and --set overrides to the typed
 * specs of spec.h, with every error citing file:line:col (or the --set). */
#pragma once

#include "config/spec.h"
#include "config/yamltree.h"

/* Loads the experiment file PATH. OVERRIDES: NULL or a NULL-terminated list
 * of "dotted.key=value" strings (from --set; the value is YAML, so
 * 'model={name: gpt3-175b, layers: 4}' works), applied to the file's tree
 * before names are resolved. On success fills *OUT, which must own
 * nothing; on failure leaves it zeroed. Errors are TS_ERROR_INPUT, or
 * TS_ERROR_IO when a file cannot be read. */
/* The directory of shipped data searched after TRAINSIM_DATA_PATH and
 * the experiment's directory and its ancestors: the install directory, or
 * the source tree for the binary built there. Owned by the caller. */
char *config_data_dir (void);
/* Appends TRAINSIM_DATA_PATH's directories (':'-separated, empty parts
 * skipped), in order, to DIRS, an array of owned strings. */
void config_env_data_dirs (GPtrArray *dirs);

/* The family of the model NAME (owned): its part before its size, the
 * first '-' a digit follows ("qwen3" of qwen3-30b-a3b, "gpt3" of
 * gpt3-175b), else before its last '-'; "" without one. */
char *config_model_family_of (const char *name);
/* The models of FAMILY, the names "FAMILY-*" found where the experiment
 * PATH's names are looked up, sorted by name (the caller orders them by
 * size); *FAMILIES (owned) lists the families found, for an error. */
GPtrArray *config_model_family (const char *path, const char *family,
                                char **families);

gboolean config_load_experiment (const char *path, const char *const *overrides,
                                 ExperimentSpec *out, GError **error);

/* Loads a topology alone (for `trainsim collective`): REF is a name from
 * topologies/ or a path; OVERRIDES are "dotted.key=value" strings on the
 * topology's own keys (inter_node.nics_per_node=4). On success fills *OUT
 * (which must own nothing; topology_spec_clear frees it). */
gboolean config_load_topology (const char *ref, const char *const *overrides,
                               TopologySpec *out, GError **error);
/* Loads a device profile alone (for `trainsim calibrate gemm`): REF is a
 * name from topologies/devices/ or a path. On success fills *OUT (which
 * must own nothing; device_spec_clear frees it). */
gboolean config_load_device (const char *ref, DeviceSpec *out, GError **error);

/* The `description:` of the topology NAME, looked for as an experiment
 * written at NEAR (a file's path) would look for it (TRAINSIM_DATA_PATH,
 * NEAR's directory and its ancestors, the data directory), or NULL when
 * NAME is not a plain name (a path is never opened), names no topology
 * file, or the file has no description. Owned by the caller. */
char *config_topology_description (const char *name, const char *near);

/* Loads a validation file: each case is its `defaults` with the case
 * merged over them, loaded as an experiment written in PATH, and with
 * OVERRIDES ("dotted.key=value", as for `run --set`; NULL for none) set
 * over that: a diagnostic, "what if these runs had...". Overrides are
 * for files of training runs only, and not for a key that order_within
 * groups the cases by. */
ValidationSpec *config_load_validation (const char *path, const char *const *overrides,
                                        GError **error);

/* The two halves of config_load_experiment, for `trainsim sweep`, which
 * reads a file once and then loads one experiment per point:
 *
 *   g_autoptr (YNode) tree = config_read_tree (path, overrides, &error);
 *   const YPair *sweep = ytree_map_find (tree, "sweep");
 *   for each point: copy = ytree_copy (tree);
 *                   ytree_set_path (copy, key, ytree_copy (value), &error);
 *                   config_experiment_from_tree (copy, path, &spec, &error);
 *
 * config_read_tree parses PATH, checks that it is a mapping and applies the
 * overrides; config_experiment_from_tree resolves names and paths (relative
 * to PATH) and decodes ROOT into *OUT, as config_load_experiment does. */
YNode *config_read_tree (const char *path, const char *const *overrides,
                         GError **error);
gboolean config_experiment_from_tree (const YNode *root, const char *path,
                                      ExperimentSpec *out, GError **error);

/* Checks that the dotted KEY names a value of an experiment, as --set and
 * a sweep's axes write them (parallel.tp, model, model.layers,
 * topology.gpu.memory), so that a typo in an axis is caught before any
 * point runs. Errors (TS_ERROR_INPUT) cite MARK, with a did-you-mean. */
gboolean config_check_key (const char *key, YMark mark, GError **error);
