/* config-private.h: what the loader's files share: the Field tables that
 * describe each kind of mapping, the Loader a file is decoded with, and
 * what each file lends the others.
 *
 * config.c decodes a tree against a table of its keys, finds the files
 * that names point to, and loads experiments; config-topology.c and
 * config-experiment.c hold the tables of a topology's and an
 * experiment's keys, the checks across their fields and every default;
 * config-validation.c loads validation files through them. The
 * dependencies run one way: validation on config.c and the tables,
 * config.c on the tables, the experiment's table on the topology's, and
 * the tables on nothing here but this header's types. Nothing outside
 * src/config includes this header. */
#pragma once

#include <stddef.h>

#include "config/config.h"

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
  F_SHARE,      /* double in [0, 1) */
  F_NUMBER,     /* positive double */
  F_MAP,        /* a nested mapping of the fields in sub */
  F_REF,        /* arg: RefKind; a name, a path or a mapping of the fields in sub */
  F_SWEEP,      /* experiment.sweep: only its shape is checked here */
  F_INT_LIST,   /* SpecIntList of integers from arg, such as example */
  F_SKIP,       /* read by the caller (validation defaults and cases) */
  F_FRAMEWORK,  /* const FrameworkProfile *: "name" or "name@version" */
  F_TOKENS,     /* positive double, or chinchilla -> SPEC_CHINCHILLA */
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
  gboolean may_be_empty;  /* F_INT_LIST: [] is the key left out */
};

typedef enum { REF_MODEL, REF_TOPOLOGY, REF_DEVICE } RefKind;

#define F(k, t, st, member, ...) \
  { .key = (k), .type = (t), .offset = offsetof (st, member), __VA_ARGS__ }
#define END { .key = NULL }
#define REQUIRED .required = TRUE
#define MARK(m) .mark = offsetof (SpecMarks, m)
/* Keys every file-level mapping accepts. */
#define FILE_KEYS \
  { .key = "schema_version", .type = F_SCHEMA }, \
  { .key = "description", .type = F_LABEL }

/* --- the tables (config-topology.c, config-experiment.c) -------------------- */

/* A device's keys and a topology's (config-topology.c). */
extern const Field config_device_fields[];
extern const Field config_topology_fields[];
/* The checks across a topology's fields, and nic_path's default. */
gboolean config_topology_finish (const YNode *map, const char *path, void *base,
                                 GError **error);

/* An experiment's keys (config-experiment.c). */
extern const Field config_experiment_fields[];
/* A model's derived counts and caps; an MLP validation case's too. */
gboolean config_model_finish (const YNode *map, const char *path, void *base,
                              GError **error);
/* Every default, into *E (zeroed). */
void config_experiment_defaults (ExperimentSpec *e);
/* The framework's defaults for the keys ROOT (an experiment's tree)
 * leaves out, once *E is decoded. */
/* training.precision: fp8 checked against the device, then kept as bf16
 * with TrainingSpec.fp8 set (config-experiment.c). */
gboolean config_fp8 (const YNode *root, ExperimentSpec *e, GError **error);
gboolean config_attention (const YNode *root, ExperimentSpec *e,
                           GError **error);
gboolean config_framework_defaults (const YNode *root, ExperimentSpec *e,
                                    GError **error);

/* --- decoding (config.c) --------------------------------------------------- */

/* What a document is decoded with: where the names it holds are looked
 * up from, what messages call it, and where its marks go. */
typedef struct {
  const char *root_file;  /* the experiment or validation file */
  const char *doc_what;   /* "the experiment": names the top-level mapping */
  SpecMarks *marks;       /* where to record marks, or NULL */
  const char *const *overrides;  /* a validation file's cases' --set, or NULL */
} Loader;

/* "'text'" for a scalar (an excerpt), its kind otherwise. Owned. */
char *config_got (const YNode *v);
/* Whether ROOT, a whole file given as WHAT, is a mapping of SUCH_AS. */
gboolean config_check_document (const YNode *root, const char *what,
                                const char *such_as, const Field *fields,
                                GError **error);
/* The field of FIELDS named KEY, or NULL. */
const Field *config_find_field (const Field *fields, const char *key);
/* Decodes MAP against FIELDS into BASE; STRICT refuses other keys. */
gboolean config_decode_fields (const Loader *ld, const YNode *map, const char *path,
                               const Field *fields, void *base, gboolean strict,
                               GError **error);
/* config_decode_fields, strict. */
gboolean config_decode_map (const Loader *ld, const YNode *map, const char *path,
                            const Field *fields, void *base, GError **error);
/* Applies one --set "dotted.key=value" to ROOT. */
gboolean config_apply_set (YNode *root, const char *assignment, GError **error);
