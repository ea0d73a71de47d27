/* yamltree.c: libyaml events into a YNode tree with marks (yamltree.h). */
#include "config/yamltree.h"

#include <string.h>
#include <yaml.h>

#include "base/errors.h"
#include "base/input.h"
#include "base/text.h"

/* --- nodes ---------------------------------------------------------------- */

static void
pair_free (gpointer data)
{
  YPair *pair = data;

  g_free (pair->key);
  ytree_free (pair->value);
  g_free (pair);
}

static YNode *
node_new (YNodeKind kind, YMark mark)
{
  YNode *node = g_new0 (YNode, 1);

  node->kind = kind;
  node->mark = mark;
  if (kind == YNODE_MAPPING)
    node->items = g_ptr_array_new_with_free_func (pair_free);
  else if (kind == YNODE_SEQUENCE)
    node->items = g_ptr_array_new_with_free_func ((GDestroyNotify) ytree_free);
  return node;
}

static YNode *
scalar_new (const char *text, gboolean plain, YMark mark)
{
  YNode *node = node_new (YNODE_SCALAR, mark);

  node->text = g_strdup (text);
  node->plain = plain;
  return node;
}

YNode *
ytree_scalar_new (const char *text, YMark mark)
{
  return scalar_new (text, TRUE, mark);
}

/* Appends KEY: VALUE (VALUE consumed) to MAP. */
static YPair *
map_append (YNode *map, const char *key, YMark key_mark, YNode *value)
{
  YPair *pair = g_new0 (YPair, 1);

  pair->key = g_strdup (key);
  pair->key_mark = key_mark;
  pair->value = value;
  g_ptr_array_add (map->items, pair);
  return pair;
}

void
ytree_free (YNode *node)
{
  if (node == NULL)
    return;
  g_free (node->text);
  if (node->items)
    g_ptr_array_unref (node->items);
  g_free (node);
}

YNode *
ytree_copy (const YNode *node)
{
  YNode *copy;

  if (node->kind == YNODE_SCALAR)
    return scalar_new (node->text, node->plain, node->mark);
  copy = node_new (node->kind, node->mark);
  for (guint i = 0; i < node->items->len; i++)
    {
      if (node->kind == YNODE_MAPPING)
        {
          const YPair *pair = g_ptr_array_index (node->items, i);
          map_append (copy, pair->key, pair->key_mark, ytree_copy (pair->value));
        }
      else
        g_ptr_array_add (copy->items, ytree_copy (g_ptr_array_index (node->items, i)));
    }
  return copy;
}

YPair *
ytree_map_find (const YNode *map, const char *key)
{
  if (map == NULL || map->kind != YNODE_MAPPING)
    return NULL;
  for (guint i = 0; i < map->items->len; i++)
    {
      YPair *pair = g_ptr_array_index (map->items, i);
      if (strcmp (pair->key, key) == 0)
        return pair;
    }
  return NULL;
}

void
ytree_map_remove (YNode *map, const char *key)
{
  YPair *pair = ytree_map_find (map, key);

  if (pair)
    g_ptr_array_remove (map->items, pair);
}

gboolean
ytree_is_null (const YNode *node)
{
  return node->kind == YNODE_SCALAR && node->plain
         && (node->text[0] == '\0' || strcmp (node->text, "~") == 0
             || strcmp (node->text, "null") == 0 || strcmp (node->text, "Null") == 0
             || strcmp (node->text, "NULL") == 0);
}

char *
ytree_mark_format (YMark mark)
{
  g_autofree char *file = text_shown (mark.file);

  if (mark.line == 0)
    return g_steal_pointer (&file);
  return g_strdup_printf ("%s:%d:%d", file, mark.line, mark.col);
}

const char *
ytree_kind_name (YNodeKind kind)
{
  switch (kind)
    {
    case YNODE_SCALAR: return "a scalar";
    case YNODE_MAPPING: return "a mapping";
    case YNODE_SEQUENCE: return "a sequence";
    }
  g_assert_not_reached ();
}

void
ytree_set_error (GError **error, YMark mark, const char *format, ...)
{
  g_autofree char *where = ytree_mark_format (mark);
  g_autofree char *what = NULL;
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  /* One line, whatever of the input it quotes (a key, a name). */
  g_autofree char *shown = text_shown (what);
  g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: %s", where, shown);
}

/* --- merging and setting ---------------------------------------------------- */

void
ytree_merge (YNode **base, const YNode *overlay)
{
  /* A name ("gpu: a100-sxm4-80gb") under keys without one ("gpu: {memory:
   * 100GiB}", as --set topology.gpu.memory makes): the name stays the base
   * that the keys are merged over, as ytree_set_path keeps it. */
  if ((*base)->kind == YNODE_SCALAR && !ytree_is_null (*base)
      && overlay->kind == YNODE_MAPPING && !ytree_map_find (overlay, "name"))
    {
      YNode *named = node_new (YNODE_MAPPING, (*base)->mark);
      map_append (named, "name", (*base)->mark, *base);
      *base = named;
    }
  if ((*base)->kind != YNODE_MAPPING || overlay->kind != YNODE_MAPPING)
    {
      ytree_free (*base);
      *base = ytree_copy (overlay);
      return;
    }
  for (guint i = 0; i < overlay->items->len; i++)
    {
      const YPair *over = g_ptr_array_index (overlay->items, i);
      YPair *pair = ytree_map_find (*base, over->key);

      if (pair)
        {
          ytree_merge (&pair->value, over->value);
          pair->key_mark = over->key_mark;
        }
      else
        map_append (*base, over->key, over->key_mark, ytree_copy (over->value));
    }
  (*base)->mark = overlay->mark;
}

gboolean
ytree_set_path (YNode *root, const char *path, YNode *value, GError **error)
{
  g_autoptr (YNode) owned = value;
  g_auto (GStrv) keys = g_strsplit (path, ".", -1);
  YNode *map = root;

  if (g_strv_length (keys) > YTREE_MAX_DEPTH)
    {
      ytree_set_error (error, value->mark, "a key of more than %d parts; trainsim's "
                       "deepest, such as topology.inter_node.fabric.kind, has 4",
                       YTREE_MAX_DEPTH);
      return FALSE;
    }
  /* An empty PATH splits into no keys at all: no dotted key either. */
  for (int i = 0; keys[i] || i == 0; i++)
    if (keys[i] == NULL || keys[i][0] == '\0')
      {
        ytree_set_error (error, value->mark,
                         "'%s' is not a dotted key such as parallel.tp", path);
        return FALSE;
      }
  for (int i = 0; keys[i]; i++)
    {
      YPair *pair;

      if (map->kind != YNODE_MAPPING)
        {
          ytree_set_error (error, value->mark, "cannot set '%s': '%s' is %s, not a mapping",
                           keys[i], i ? keys[i - 1] : "the document",
                           ytree_kind_name (map->kind));
          return FALSE;
        }
      pair = ytree_map_find (map, keys[i]);
      if (keys[i + 1] == NULL)
        {
          if (pair)
            {
              ytree_free (pair->value);
              pair->value = g_steal_pointer (&owned);
              pair->key_mark = value->mark;
            }
          else
            map_append (map, keys[i], value->mark, g_steal_pointer (&owned));
          return TRUE;
        }
      if (pair == NULL)
        pair = map_append (map, keys[i], value->mark, node_new (YNODE_MAPPING, value->mark));
      else if (pair->value->kind == YNODE_SCALAR)
        {
          /* "model: gpt3-175b" set at "model.layers": the name stays the
           * base that the new keys are merged over. */
          YNode *scalar = g_steal_pointer (&pair->value);
          YNode *named = node_new (YNODE_MAPPING, value->mark);
          if (ytree_is_null (scalar))
            ytree_free (scalar);
          else
            map_append (named, "name", scalar->mark, scalar);
          pair->value = named;
        }
      map = pair->value;
    }
  g_assert_not_reached ();
}

/* --- parsing ---------------------------------------------------------------- */

typedef struct {
  yaml_parser_t parser;
  const char *file;     /* interned */
  const char *text;     /* the input, for where a reader error is */
  gsize len;
  gboolean positions;
  int depth;            /* of the collection being read; 0 at the top */
} Reader;

static YMark
reader_mark (const Reader *r, yaml_mark_t m)
{
  YMark mark = { r->file, 0, 0 };

  if (r->positions)
    {
      mark.line = (int) m.line + 1;
      mark.col = (int) m.column + 1;
    }
  return mark;
}

static gboolean
next_event (Reader *r, yaml_event_t *event, GError **error)
{
  const yaml_parser_t *p = &r->parser;
  g_autofree char *context = NULL;
  YMark mark;

  if (yaml_parser_parse (&r->parser, event))
    return TRUE;
  /* A reader error (bad UTF-8, a control character) is found as the
   * input is decoded, ahead of the scanner's marks: libyaml gives only
   * its byte offset. */
  if (p->error == YAML_READER_ERROR)
    {
      mark = reader_mark (r, p->mark);
      if (r->positions)
        input_position (r->text, r->len, p->problem_offset, &mark.line, &mark.col);
    }
  else
    mark = reader_mark (r, p->problem_mark);
  if (p->context && r->positions)
    context = g_strdup_printf (" (%s that started at line %zu, column %zu)", p->context,
                               p->context_mark.line + 1, p->context_mark.column + 1);
  else if (p->context)
    context = g_strdup_printf (" (%s)", p->context);
  ytree_set_error (error, mark, "malformed YAML: %s%s", p->problem ? p->problem : "cannot parse",
                   context ? context : "");
  return FALSE;
}

/* Refuses the YAML features that would make a file mean more than what it
 * shows: anchors and aliases (values defined elsewhere) and tags. */
static gboolean
check_plain (const Reader *r, const yaml_event_t *event, const yaml_char_t *anchor,
             const yaml_char_t *tag, GError **error)
{
  YMark mark = reader_mark (r, event->start_mark);

  if (anchor)
    {
      ytree_set_error (error, mark, "anchors (&%s) are not supported; write the value out",
                       (const char *) anchor);
      return FALSE;
    }
  if (tag)
    {
      ytree_set_error (error, mark, "tags (%s) are not supported; write a plain value",
                       (const char *) tag);
      return FALSE;
    }
  return TRUE;
}

static YNode *parse_node (Reader *r, yaml_event_t *event, GError **error);

/* Reads the events after a MAPPING_START or SEQUENCE_START into NODE. */
static gboolean
parse_children (Reader *r, YNode *node, GError **error)
{
  for (;;)
    {
      yaml_event_t event;
      YNode *child;

      if (!next_event (r, &event, error))
        return FALSE;
      if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
        {
          yaml_event_delete (&event);
          return TRUE;
        }
      if (node->kind == YNODE_SEQUENCE)
        {
          if (!(child = parse_node (r, &event, error)))
            return FALSE;
          g_ptr_array_add (node->items, child);
          continue;
        }

      /* A mapping: a scalar key, then its value. */
      {
        YMark key_mark = reader_mark (r, event.start_mark);
        g_autofree char *key = NULL;
        YPair *dup;

        if (event.type != YAML_SCALAR_EVENT)
          {
            ytree_set_error (error, key_mark, "a mapping key must be a plain word, not %s",
                             event.type == YAML_ALIAS_EVENT ? "an alias" : "a mapping or sequence");
            yaml_event_delete (&event);
            return FALSE;
          }
        if (!check_plain (r, &event, event.data.scalar.anchor, event.data.scalar.tag, error))
          {
            yaml_event_delete (&event);
            return FALSE;
          }
        key = g_strndup ((const char *) event.data.scalar.value, event.data.scalar.length);
        yaml_event_delete (&event);
        if ((dup = ytree_map_find (node, key)))
          {
            g_autofree char *first = ytree_mark_format (dup->key_mark);
            ytree_set_error (error, key_mark, "duplicate key '%s' (first written at %s)",
                             key, first);
            return FALSE;
          }
        if (!next_event (r, &event, error) || !(child = parse_node (r, &event, error)))
          return FALSE;
        map_append (node, key, key_mark, child);
      }
    }
}

/* Turns EVENT (consumed) and, for a collection, the events up to its end
 * into a node. */
static YNode *
parse_node (Reader *r, yaml_event_t *event, GError **error)
{
  YMark mark = reader_mark (r, event->start_mark);
  g_autoptr (YNode) node = NULL;
  gboolean ok = TRUE;

  switch (event->type)
    {
    case YAML_SCALAR_EVENT:
      ok = check_plain (r, event, event->data.scalar.anchor, event->data.scalar.tag, error);
      if (ok)
        {
          g_autofree char *text = g_strndup ((const char *) event->data.scalar.value,
                                             event->data.scalar.length);
          node = scalar_new (text, event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE, mark);
        }
      break;
    case YAML_SEQUENCE_START_EVENT:
      ok = check_plain (r, event, event->data.sequence_start.anchor,
                        event->data.sequence_start.tag, error);
      node = node_new (YNODE_SEQUENCE, mark);
      break;
    case YAML_MAPPING_START_EVENT:
      ok = check_plain (r, event, event->data.mapping_start.anchor,
                        event->data.mapping_start.tag, error);
      node = node_new (YNODE_MAPPING, mark);
      break;
    case YAML_ALIAS_EVENT:
      ytree_set_error (error, mark, "aliases (*%s) are not supported; write the value out",
                       (const char *) event->data.alias.anchor);
      ok = FALSE;
      break;
    default:
      ytree_set_error (error, mark, "malformed YAML: unexpected event %d", (int) event->type);
      ok = FALSE;
      break;
    }
  yaml_event_delete (event);
  if (!ok)
    return NULL;
  if (node->kind == YNODE_SCALAR)
    return g_steal_pointer (&node);
  /* Checked as each collection opens, so libyaml stops here rather than
   * after reading the rest of a deep file. */
  if (r->depth == YTREE_MAX_DEPTH)
    {
      ytree_set_error (error, mark, "nested deeper than %d levels; a trainsim input "
                       "needs a few", YTREE_MAX_DEPTH);
      return NULL;
    }
  r->depth++;
  ok = parse_children (r, node, error);
  r->depth--;
  return ok ? g_steal_pointer (&node) : NULL;
}

/* stream: STREAM_START [DOCUMENT_START node DOCUMENT_END] STREAM_END */
static YNode *
parse_stream (Reader *r, GError **error)
{
  yaml_event_t event;
  g_autoptr (YNode) root = NULL;

  if (!next_event (r, &event, error))
    return NULL;
  yaml_event_delete (&event);               /* STREAM_START */
  if (!next_event (r, &event, error))
    return NULL;
  if (event.type == YAML_STREAM_END_EVENT)
    {
      YMark mark = { r->file, r->positions ? 1 : 0, r->positions ? 1 : 0 };
      yaml_event_delete (&event);
      return scalar_new ("", TRUE, mark);
    }
  yaml_event_delete (&event);               /* DOCUMENT_START */
  if (!next_event (r, &event, error) || !(root = parse_node (r, &event, error)))
    return NULL;
  if (!next_event (r, &event, error))
    return NULL;
  yaml_event_delete (&event);               /* DOCUMENT_END */
  if (!next_event (r, &event, error))
    return NULL;
  if (event.type != YAML_STREAM_END_EVENT)
    {
      ytree_set_error (error, reader_mark (r, event.start_mark),
                       "a second YAML document; a file holds exactly one");
      yaml_event_delete (&event);
      return NULL;
    }
  yaml_event_delete (&event);
  return g_steal_pointer (&root);
}

/* Parses the LEN bytes of TEXT: by length, so nothing after a NUL byte
 * could be dropped unseen (input_read refuses those anyway). */
static YNode *
parse_text (const char *text, gsize len, const char *origin, gboolean positions,
            GError **error)
{
  Reader r = { .file = g_intern_string (origin), .text = text, .len = len,
               .positions = positions };
  YNode *root;

  if (!yaml_parser_initialize (&r.parser))
    g_error ("libyaml: out of memory");
  yaml_parser_set_input_string (&r.parser, (const unsigned char *) text, len);
  root = parse_stream (&r, error);
  yaml_parser_delete (&r.parser);
  return root;
}

YNode *
ytree_parse_string (const char *text, const char *origin, gboolean positions,
                    GError **error)
{
  return parse_text (text, strlen (text), origin, positions, error);
}

YNode *
ytree_parse_file (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;

  if (!input_read (path, &text, &len, error))
    return NULL;
  return parse_text (text, len, path, TRUE, error);
}
