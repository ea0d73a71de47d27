/* yamltree.h: a YAML document as a small tree whose every node and key
 * remembers where it was written, so that errors found long after parsing
 * (after merges and --set overrides) still cite file:line:col.
 *
 * Only plain data is accepted: one document, no anchors or aliases, no
 * tags, scalar and unique mapping keys. */
#pragma once

#include <glib.h>

/* Where a node was written. FILE is interned (g_intern_string): marks are
 * copied freely and compared by pointer. LINE and COL are 1-based; LINE 0
 * means the text had no lines worth citing (a --set value), and the mark
 * prints as FILE alone, e.g. "--set parallel.tp". */
typedef struct {
  const char *file;
  int line, col;
} YMark;

typedef enum {
  YNODE_SCALAR,
  YNODE_MAPPING,
  YNODE_SEQUENCE,
} YNodeKind;

typedef struct YNode YNode;

typedef struct {
  char *key;          /* owned */
  YMark key_mark;
  YNode *value;       /* owned */
} YPair;

struct YNode {
  YNodeKind kind;
  YMark mark;
  char *text;         /* scalar: its text (owned); NULL otherwise */
  gboolean plain;     /* scalar: written without quotes (so "~" is null) */
  GPtrArray *items;   /* mapping: YPair* in order; sequence: YNode*; owned */
};

/* The deepest nesting of mappings and sequences a document may have. The
 * deepest trainsim input nests 5 levels (a validation case's topology's
 * inter_node.fabric); the cap keeps the recursive parse, copy, merge and
 * free of a tree far from the stack's end, and stops libyaml early on a
 * hostile file of thousands of '[' or '{' (whose scanner slows down with
 * the depth) instead of after it has read them all. A dotted path given
 * to ytree_set_path may have as many keys, no more. */
#define YTREE_MAX_DEPTH 64

/* Parse a file (read with input_read: its size is capped, a NUL byte is
 * an error), or TEXT under the name ORIGIN. With POSITIONS false, every
 * mark gets line 0 (see YMark). Errors: those of input_read (a file that
 * cannot be opened is TS_ERROR_INPUT, a failed read TS_ERROR_IO), and
 * TS_ERROR_INPUT with "file:line:col: " for anything else, nesting
 * deeper than YTREE_MAX_DEPTH included. An empty document is a null
 * scalar. */
YNode *ytree_parse_file (const char *path, GError **error);
YNode *ytree_parse_string (const char *text, const char *origin,
                           gboolean positions, GError **error);

/* A new plain scalar, e.g. a value made by the program rather than read. */
YNode *ytree_scalar_new (const char *text, YMark mark);
YNode *ytree_copy (const YNode *node);
void ytree_free (YNode *node);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (YNode, ytree_free)

/* Merges OVERLAY into *BASE: mapping over mapping merges key by key,
 * recursively, and takes the overlay's mark (the writer a user edits last);
 * a mapping without a name over a name (a model, topology or device
 * named) is merged over {name: that name}; anything else replaces *BASE
 * with a copy of OVERLAY. */
void ytree_merge (YNode **base, const YNode *overlay);

/* Sets the dotted PATH under the mapping ROOT to VALUE (consumed), creating
 * mappings on the way. A scalar on the way, such as "model: gpt3-175b"
 * under "model.layers", first becomes {name: gpt3-175b}: a mapping made by
 * the setter, so it takes VALUE's mark, and an error about it (such as
 * "parallel.tp must be an integer, got a mapping" after parallel.tp.x=4)
 * blames the setter, not the file. Errors cite VALUE's mark; a PATH of
 * more than YTREE_MAX_DEPTH keys is one. */
gboolean ytree_set_path (YNode *root, const char *path, YNode *value,
                         GError **error);

/* The pair with KEY in MAP, or NULL; MAP may be any node. */
YPair *ytree_map_find (const YNode *map, const char *key);
/* Removes KEY from MAP if present. */
void ytree_map_remove (YNode *map, const char *key);

/* A plain "", "~" or "null": YAML's null, as in "compute:" with no value. */
gboolean ytree_is_null (const YNode *node);

/* "file:line:col", or "file" for a mark without a line, for a message:
 * the file's name shown as base/text.h says. Owned. */
char *ytree_mark_format (YMark mark);
/* Sets *ERROR to TS_ERROR_INPUT with the message "MARK: " + FORMAT, one
 * line: what FORMAT quotes of the input is shown as base/text.h says. */
void ytree_set_error (GError **error, YMark mark, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

/* "a scalar", "a mapping", "a sequence": for "expected X, got Y". */
const char *ytree_kind_name (YNodeKind kind);
