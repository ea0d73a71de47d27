/* sweep.c: `trainsim sweep` (sweep.h): the axes, the points of their
 * product, a point's row, and the threaded run. Where the rows go, resume
 * and merge are sweep-output.c's (sweep-private.h).
 *
 * The experiment file is parsed once; each point copies the tree, sets its
 * axis values with ytree_set_path, and loads and replays it as `run` does.
 * Workers of a GThreadPool take points in order; the main thread writes
 * their rows through a reorder buffer, a ring of WINDOW slots indexed by a
 * point's slot (its rank in the shard) modulo WINDOW:
 *
 *   written ... next-1 | next ... next+WINDOW-1 | not yet queued
 *                        queued or running; a finished row waits in its
 *                        ring slot until every row before it is written
 *
 * The main thread queues slot s only once s < next + WINDOW, so a slot is
 * never reused before its row is written, memory stays bounded by WINDOW
 * rows whatever the size of the sweep, and a slow point holds back at most
 * WINDOW finished ones.
 *
 * Built with MPI, sweep-mpi.c runs the points on the ranks of an MPI job
 * instead of threads: it makes the same rows (sweep_point_row) and writes
 * them through the same output (sweep_output_*, sweep-private.h). */
#include "sweep/sweep.h"
#include "sweep/sweep-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "config/config.h"
#include "output/report.h"
#include "parallel/sim.h"

/* ------------------------------------------------------------------ axes */

typedef struct {
  char *key;            /* dotted, as written: the column's name; owned */
  YMark mark;           /* of the key in the file, or "--sweep KEY", "--zip KEY" */
  GPtrArray *values;    /* YNode *, scalars; owned */
  gboolean zipped;      /* advances with the other zipped axes */
  guint64 stride;       /* points between two of its values (sweep_check) */
} Axis;

struct Sweep {
  char *path;           /* the experiment file; owned */
  YNode *base;          /* the experiment without its sweep; owned */
  GPtrArray *axes;      /* Axis *; owned */
  guint64 max_points;
  guint64 n_points;     /* set by sweep_check */
  int csv_columns;      /* report's CSV columns (an infeasible row's empty
                         * cells); set by sweep_check */
  char **skip;          /* top-level axis keys: result columns (CSV) and
                         * members (JSON) not repeated; owned */
  char *settings;       /* SHA-256 of the settings (sweep_check); owned */
};

static void
axis_free (gpointer data)
{
  Axis *axis = data;

  g_free (axis->key);
  g_ptr_array_unref (axis->values);
  g_free (axis);
}

static Axis *
axis_new (const char *key, YMark mark, gboolean zipped)
{
  Axis *axis = g_new0 (Axis, 1);

  axis->key = g_strdup (key);
  axis->mark = mark;
  axis->values = g_ptr_array_new_with_free_func ((GDestroyNotify) ytree_free);
  axis->zipped = zipped;
  return axis;
}

/* The index of the axis with KEY, or the number of axes. */
static guint
find_axis (const Sweep *sweep, const char *key)
{
  guint at = 0;

  while (at < sweep->axes->len
         && strcmp (((const Axis *) g_ptr_array_index (sweep->axes, at))->key, key) != 0)
    at++;
  return at;
}

/* Refuses a key given both zipped and crossed, at MARK (WHAT as for
 * axis_add_value): its points would need two values at once. OTHER is
 * the axis already there. */
static gboolean
both_zipped_and_swept (const Axis *other, YMark mark, const char *what, GError **error)
{
  g_autofree char *where = ytree_mark_format (other->mark);

  ytree_set_error (error, mark, "%s%s is both zipped and swept (%s gives it too): an axis "
                   "either advances with the zipped axes or is crossed with the others; "
                   "give it once", what, other->key, where);
  return FALSE;
}

void
sweep_free (Sweep *sweep)
{
  if (sweep == NULL)
    return;
  g_free (sweep->path);
  ytree_free (sweep->base);
  g_ptr_array_unref (sweep->axes);
  g_strfreev (sweep->skip);
  g_free (sweep->settings);
  g_free (sweep);
}

/* "NUMBER.." or "..NUMBER": meant as a range (an integer one, or refused
 * as none), and nothing else a value would be (a path such as
 * ../models/x.yaml has no number before its ".." and none after). A
 * number is one strtod reads whole and that starts with a digit, a sign
 * or a point: 1.5, +1, .5, 1e3, 0x1, not inf or nan (units_number's
 * rule); a sign alone before ".." and a digit, as -..5, is a range too. */
static gboolean
looks_like_range (const char *text)
{
  const char *dots = strstr (text, "..");
  if (dots == NULL)
    return FALSE;
  gsize n = (gsize) (dots - text);
  if (n == 0 || (n == 1 && (text[0] == '-' || text[0] == '+')))
    return g_ascii_isdigit (dots[2]) || dots[2] == '-' || dots[2] == '+';
  if (!g_ascii_isdigit (text[0]) && !strchr ("+-.", text[0]))
    return FALSE;
  g_autofree char *head = g_strndup (text, n);
  char *end;
  double x = g_ascii_strtod (head, &end);
  return end != head && *end == '\0' && isfinite (x);
}

/* Parses a decimal integer at *P, moving *P past it. */
static gboolean
parse_int64 (const char **p, gint64 *out)
{
  const char *start = *p;
  char *end;

  if (!g_ascii_isdigit (start[start[0] == '-']))
    return FALSE;
  errno = 0;
  *out = g_ascii_strtoll (start, &end, 10);
  if (errno != 0)
    return FALSE;
  *p = end;
  return TRUE;
}

gboolean
sweep_expand_range (const char *text, guint64 max_values, GArray *out,
                    GError **error)
{
  const char *p = text;
  gint64 start, end, by = 1;
  char kind = '+';
  guint64 count = 0;
  gboolean ok;

  if (!looks_like_range (text))
    return FALSE;
  ok = parse_int64 (&p, &start) && g_str_has_prefix (p, "..");
  if (ok)
    {
      p += 2;
      ok = parse_int64 (&p, &end);
    }
  if (ok && (*p == '+' || *p == 'x'))
    {
      kind = *p++;
      ok = parse_int64 (&p, &by);
    }
  if (!ok || *p != '\0')
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "'%s' is not a range: write "
                   "A..B (step 1), A..B+STEP or A..BxFACTOR, such as 1..8, 0..64+16 "
                   "or 64..4096x2", text);
      return FALSE;
    }
  if (kind == '+' && by < 1)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "the range %s needs a step of at "
                   "least 1", text);
      return FALSE;
    }
  if (kind == 'x' && (by < 2 || start < 1))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "the range %s needs a factor of at "
                   "least 2 and a start of at least 1", text);
      return FALSE;
    }
  if (end < start)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "the range %s is empty: its end is "
                   "below its start (write %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT ")",
                   text, end, start);
      return FALSE;
    }
  if (kind == '+')
    {
      guint64 steps = ((guint64) end - (guint64) start) / (guint64) by;
      /* The + 1 would wrap to 0 for a full 2^64 span. */
      count = steps == G_MAXUINT64 ? G_MAXUINT64 : steps + 1;
    }
  else
    for (gint64 v = start;; v *= by)
      {
        count++;
        if (v > end / by)
          break;
      }
  if (count > MIN (max_values, SWEEP_MAX_AXIS_VALUES))
    {
      if (count > max_values)
        g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "the range %s has %" G_GUINT64_FORMAT
                     " values, more than --max-points %" G_GUINT64_FORMAT, text, count,
                     max_values);
      else
        g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "the range %s has %" G_GUINT64_FORMAT
                     " values, more than the %d an axis may hold: narrow it", text, count,
                     SWEEP_MAX_AXIS_VALUES);
      return FALSE;
    }
  for (guint64 i = 0; i < count; i++)
    {
      gint64 v = kind == '+' ? start + (gint64) (i * (guint64) by)
                             : (i == 0 ? start : g_array_index (out, gint64, out->len - 1) * by);
      g_array_append_val (out, v);
    }
  return TRUE;
}

/* Adds VALUE (a scalar; a range is expanded) to AXIS. Errors cite the
 * value's mark, then WHAT: "sweep.KEY: " when the mark is a file's, ""
 * when it already names the axis ("--sweep KEY"). */
static gboolean
axis_add_value (Axis *axis, const YNode *value, const char *what, guint64 max_points,
                GError **error)
{
  g_autoptr (GArray) range = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GError) local = NULL;

  if (value->kind != YNODE_SCALAR)
    {
      ytree_set_error (error, value->mark, "%seach value must be a scalar such as 4, "
                       "true or gpt3-175b, got %s", what, ytree_kind_name (value->kind));
      return FALSE;
    }
  /* Refused since a row had to be a line. Resume and merge now read a
   * line break in a quoted cell (a model's name may hold one), so this
   * rule could go; it stays until that is decided on its own, as a
   * change of what a sweep accepts. */
  if (strpbrk (value->text, "\r\n") != NULL)
    {
      ytree_set_error (error, value->mark, "%sa swept value cannot hold a line break",
                       what);
      return FALSE;
    }
  if (!value->plain || !sweep_expand_range (value->text, max_points, range, &local))
    {
      if (local != NULL)
        {
          ytree_set_error (error, value->mark, "%s%s", what, local->message);
          return FALSE;
        }
      g_ptr_array_add (axis->values, ytree_copy (value));
      return TRUE;
    }
  for (guint i = 0; i < range->len; i++)
    {
      char text[32];

      g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, g_array_index (range, gint64, i));
      g_ptr_array_add (axis->values, ytree_scalar_new (text, value->mark));
    }
  return TRUE;
}

/* Fills AXIS from LIST, a sequence of values or a scalar range, written
 * at LIST->mark; WHAT as for axis_add_value. */
static gboolean
axis_add_list (Axis *axis, const YNode *list, const char *what, guint64 max_points,
               GError **error)
{
  if (list->kind == YNODE_SEQUENCE)
    {
      for (guint i = 0; i < list->items->len; i++)
        if (!axis_add_value (axis, g_ptr_array_index (list->items, i), what, max_points,
                             error))
          return FALSE;
    }
  else if (list->kind == YNODE_SCALAR && list->plain && looks_like_range (list->text))
    {
      if (!axis_add_value (axis, list, what, max_points, error))
        return FALSE;
    }
  else if (!ytree_is_null (list))
    {
      ytree_set_error (error, list->mark, "%sthe axis must be a list of values such as [1, 2, 4] "
                       "or a range such as 1..8, 64..4096x2 or 0..64+16, got %s", what,
                       list->kind == YNODE_SCALAR ? "a single value"
                       : ytree_kind_name (list->kind));
      return FALSE;
    }
  if (axis->values->len == 0)
    {
      ytree_set_error (error, list->mark, "%sthe axis is empty: give it at least one value, "
                       "such as [1, 2, 4]", what);
      return FALSE;
    }
  return TRUE;
}

/* Adds the axis of PAIR, an item of the file's sweep (PATH "sweep") or
 * of its zip ("sweep.zip", ZIPPED). */
static gboolean
add_file_axis (Sweep *sweep, const YPair *pair, const char *path, gboolean zipped,
               GError **error)
{
  g_autofree char *what = g_strconcat (path, ".", pair->key, ": ", NULL);
  guint at = find_axis (sweep, pair->key);
  Axis *axis;

  /* Within one mapping YAML keys are unique: a key found is the other
   * mapping's. */
  if (at < sweep->axes->len)
    return both_zipped_and_swept (g_ptr_array_index (sweep->axes, at), pair->key_mark,
                                  what, error);
  axis = axis_new (pair->key, pair->key_mark, zipped);
  g_ptr_array_add (sweep->axes, axis);
  return axis_add_list (axis, pair->value, what, sweep->max_points, error);
}

Sweep *
sweep_new (const char *path, const char *const *overrides, guint64 max_points,
           GError **error)
{
  g_autoptr (Sweep) sweep = g_new0 (Sweep, 1);
  const YPair *axes;

  sweep->path = g_strdup (path);
  sweep->max_points = max_points;
  sweep->axes = g_ptr_array_new_with_free_func (axis_free);
  if (!(sweep->base = config_read_tree (path, overrides, error)))
    return NULL;
  axes = ytree_map_find (sweep->base, "sweep");
  if (axes != NULL && !ytree_is_null (axes->value))
    {
      const YNode *map = axes->value;
      const YPair *zip = ytree_map_find (map, "zip");

      if (map->kind != YNODE_MAPPING)
        {
          ytree_set_error (error, map->mark, "sweep must map dotted keys to lists "
                           "of values, such as {parallel.micro_batch: [1, 2, 4]}, got %s",
                           ytree_kind_name (map->kind));
          return NULL;
        }
      /* zip is no key of an experiment: its axes are the zipped ones,
       * placed where it is written. */
      if (zip != NULL && (zip->value->kind != YNODE_MAPPING || zip->value->items->len == 0))
        {
          ytree_set_error (error, zip->value->mark, "sweep.zip must map the keys of the "
                           "axes that advance together to lists of as many values each, "
                           "such as {gpus: 64..512x2, parallel.global_batch: 192..1536x2}, "
                           "got %s",
                           zip->value->kind == YNODE_MAPPING ? "an empty mapping"
                           : ytree_is_null (zip->value) ? "nothing"
                           : ytree_kind_name (zip->value->kind));
          return NULL;
        }
      for (guint i = 0; i < map->items->len; i++)
        {
          const YPair *pair = g_ptr_array_index (map->items, i);

          if (pair != zip && !add_file_axis (sweep, pair, "sweep", FALSE, error))
            return NULL;
          for (guint j = 0; pair == zip && j < zip->value->items->len; j++)
            if (!add_file_axis (sweep, g_ptr_array_index (zip->value->items, j),
                                "sweep.zip", TRUE, error))
              return NULL;
        }
    }
  ytree_map_remove (sweep->base, "sweep");
  return g_steal_pointer (&sweep);
}

gboolean
sweep_add_axis (Sweep *sweep, const char *arg, gboolean zip, GError **error)
{
  const char *option = zip ? "--zip" : "--sweep";
  const char *eq = strchr (arg, '=');
  g_autofree char *key = NULL, *origin = NULL;
  const char *list;
  Axis *axis, *old;
  YMark mark;
  guint at;

  if (eq == NULL || eq == arg)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "%s %s: expected KEY=V1,V2,..., "
                   "such as %s", option, arg, zip
                   ? "--zip gpus=64..512x2 --zip parallel.global_batch=192..1536x2"
                   : "--sweep parallel.micro_batch=1,2,4, --sweep gpus=64..4096x2 or "
                     "--sweep parallel.pp=1..8");
      return FALSE;
    }
  key = g_strndup (arg, (gsize) (eq - arg));
  origin = g_strconcat (option, " ", key, NULL);
  mark = (YMark) { g_intern_string (origin), 0, 0 };
  list = eq + 1;
  /* An axis of the command line (a mark without a line) given again is a
   * contradiction, with the other option or the same one; the file's axes
   * are there to be replaced. */
  at = find_axis (sweep, key);
  old = at < sweep->axes->len ? g_ptr_array_index (sweep->axes, at) : NULL;
  if (old != NULL && old->mark.line == 0)
    {
      if (old->zipped != zip)
        return both_zipped_and_swept (old, mark, "", error);
      /* The same option twice for one key: which values did the user mean? */
      ytree_set_error (error, mark, "%s is given twice on the command line (%s): give its "
                       "values once, as one list", key, old->mark.file);
      return FALSE;
    }
  /* Replace in place, or append: the order of the columns is the order
   * the axes were first given in. */
  axis = axis_new (key, mark, zip);
  if (old == NULL)
    g_ptr_array_add (sweep->axes, axis);
  else
    {
      axis_free (old);
      sweep->axes->pdata[at] = axis;
    }

  if (list[0] == '[')
    {
      g_autoptr (YNode) node = ytree_parse_string (list, origin, FALSE, error);
      return node != NULL && axis_add_list (axis, node, "", sweep->max_points, error);
    }
  g_auto (GStrv) items = g_strsplit (list, ",", -1);
  if (items[0] == NULL)
    {
      ytree_set_error (error, mark, "the axis is empty: give it values, such as "
                       "%s %s=1,2,4 or %s %s=1..8", option, key, option, key);
      return FALSE;
    }
  for (int i = 0; items[i] != NULL; i++)
    {
      g_autoptr (YNode) node = NULL;

      g_strstrip (items[i]);
      if (items[i][0] == '\0')
        {
          ytree_set_error (error, mark, "value %d of '%s' is empty: separate values "
                           "with single commas, such as %s=1,2,4", i + 1, list, key);
          return FALSE;
        }
      if (!(node = ytree_parse_string (items[i], origin, FALSE, error))
          || !axis_add_value (axis, node, "", sweep->max_points, error))
        return FALSE;
    }
  return TRUE;
}

/* ----------------------------------------------------------------- points */

/* The value of axis A at POINT (the strides are sweep_check's). */
static const YNode *
point_value (const Sweep *sweep, guint a, guint64 point)
{
  const Axis *axis = g_ptr_array_index (sweep->axes, a);
  return g_ptr_array_index (axis->values, (point / axis->stride) % axis->values->len);
}

/* The experiment tree of POINT: the base with each axis's value set. */
static YNode *
point_tree (const Sweep *sweep, guint64 point, GError **error)
{
  g_autoptr (YNode) tree = ytree_copy (sweep->base);

  for (guint a = 0; a < sweep->axes->len; a++)
    {
      const Axis *axis = g_ptr_array_index (sweep->axes, a);

      if (!ytree_set_path (tree, axis->key, ytree_copy (point_value (sweep, a, point)),
                           error))
        return NULL;
    }
  return g_steal_pointer (&tree);
}

guint64
sweep_n_points (const Sweep *sweep)
{
  return sweep->n_points;
}

/* Feeds NODE to SUM unambiguously: each kind, text and key is tagged and
 * length-prefixed, so that no two trees feed the same bytes. */
static void
digest_node (GChecksum *sum, const YNode *node)
{
  char tag[32];
  int len = g_snprintf (tag, sizeof tag, "%c%u:", "SMQ"[node->kind],
                        node->kind == YNODE_SCALAR ? (guint) strlen (node->text)
                                                   : node->items->len);
  g_checksum_update (sum, (const guchar *) tag, len);
  if (node->kind == YNODE_SCALAR)
    {
      g_checksum_update (sum, (const guchar *) node->text, -1);
      g_checksum_update (sum, (const guchar *) (node->plain ? "p" : "q"), 1);
      return;
    }
  for (guint i = 0; i < node->items->len; i++)
    if (node->kind == YNODE_MAPPING)
      {
        const YPair *pair = g_ptr_array_index (node->items, i);
        len = g_snprintf (tag, sizeof tag, "K%u:", (guint) strlen (pair->key));
        g_checksum_update (sum, (const guchar *) tag, len);
        g_checksum_update (sum, (const guchar *) pair->key, -1);
        digest_node (sum, pair->value);
      }
    else
      digest_node (sum, g_ptr_array_index (node->items, i));
}

/* What identifies the rows a sweep writes: the experiment as the points
 * start from it (after every --set, without its sweep) and the axes with
 * their values and whether they are zipped, in order. Models and
 * topologies named by the experiment count by name. Recursion is bounded:
 * a tree nests YTREE_MAX_DEPTH levels at most. */
static char *
settings_digest (const Sweep *sweep)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  digest_node (sum, sweep->base);
  for (guint a = 0; a < sweep->axes->len; a++)
    {
      const Axis *axis = g_ptr_array_index (sweep->axes, a);
      char tag[32];
      /* A crossed axis is tagged as before zips were, so that the
       * outputs of earlier sweeps can still be resumed and merged. */
      int len = g_snprintf (tag, sizeof tag, "%c%u:%u:", axis->zipped ? 'Z' : 'A',
                            (guint) strlen (axis->key), axis->values->len);
      g_checksum_update (sum, (const guchar *) tag, len);
      g_checksum_update (sum, (const guchar *) axis->key, -1);
      for (guint v = 0; v < axis->values->len; v++)
        digest_node (sum, g_ptr_array_index (axis->values, v));
    }
  return g_strdup (g_checksum_get_string (sum));
}

gboolean
sweep_check (Sweep *sweep, GError **error)
{
  g_autoptr (GString) sizes = g_string_new (NULL), columns = g_string_new (NULL);
  g_autoptr (GPtrArray) skip = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) local = NULL;
  g_autoptr (YNode) tree = NULL;
  guint64 n = 1;
  gboolean overflow = FALSE;
  Axis *zip = NULL;    /* the first zipped axis */
  ExperimentSpec spec;

  for (guint a = 0; a < sweep->axes->len; a++)
    {
      Axis *axis = g_ptr_array_index (sweep->axes, a);

      if (!config_check_key (axis->key, axis->mark, error))
        return FALSE;
      if (axis->zipped && zip != NULL && axis->values->len != zip->values->len)
        {
          /* Blamed: the later axis, unless the first is the command
           * line's (a mark without a line) and changed the file's zip. */
          const Axis *blame = zip->mark.line == 0 && axis->mark.line > 0 ? zip : axis;
          ytree_set_error (error, blame->mark, "%sthe zipped axes differ in length: %s has "
                           "%u value%s, %s has %u; zipped axes advance together, the i-th "
                           "point taking the i-th value of each, so give each as many",
                           blame->mark.line > 0 ? "sweep.zip: " : "", zip->key,
                           zip->values->len, zip->values->len == 1 ? "" : "s", axis->key,
                           axis->values->len);
          return FALSE;
        }
      if (axis->zipped && zip == NULL)
        zip = axis;
      if (!axis->zipped || axis == zip)
        g_string_append_printf (sizes, "%s%u%s", sizes->len ? " x " : "", axis->values->len,
                                axis->zipped ? " zipped" : "");
      if (strchr (axis->key, '.') == NULL)
        g_ptr_array_add (skip, g_strdup (axis->key));
    }
  /* The points run through the product of the dimensions, the last
   * varying fastest: each crossed axis is a dimension, and the zipped
   * axes together are one, in the place of the first of them. */
  for (guint a = sweep->axes->len; a-- > 0;)
    {
      Axis *axis = g_ptr_array_index (sweep->axes, a);
      guint64 len = axis->values->len;

      if (axis->zipped && axis != zip)
        continue;
      axis->stride = n;
      overflow = overflow || n > G_MAXUINT64 / len;
      n *= len;
    }
  for (guint a = 0; a < sweep->axes->len; a++)
    {
      Axis *axis = g_ptr_array_index (sweep->axes, a);
      if (axis->zipped)
        axis->stride = zip->stride;
    }
  if (overflow || n > sweep->max_points)
    {
      g_autofree char *count = overflow ? g_strdup ("more than 2^64")
                               : g_strdup_printf ("%" G_GUINT64_FORMAT, n);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: the sweep has %s points (%s), "
                   "more than --max-points %" G_GUINT64_FORMAT ": raise --max-points, "
                   "or narrow the axes", sweep->path, count, sizes->str, sweep->max_points);
      return FALSE;
    }
  sweep->n_points = n;
  g_free (sweep->settings);
  sweep->settings = settings_digest (sweep);
  g_ptr_array_add (skip, NULL);
  g_strfreev (sweep->skip);
  sweep->skip = (char **) g_ptr_array_steal (skip, NULL);
  report_append_csv_header (columns, (const char *const *) sweep->skip);
  sweep->csv_columns = 1;
  for (const char *p = columns->str; *p; p++)
    sweep->csv_columns += *p == ',';

  /* The first point's loading: a failure that cites none of its swept
   * values is the file's or --set's, and would fail every point alike. */
  if ((tree = point_tree (sweep, 0, &local))
      && config_experiment_from_tree (tree, sweep->path, &spec, &local))
    {
      experiment_spec_clear (&spec);
      return TRUE;
    }
  if (local->domain == TS_ERROR && local->code == TS_ERROR_INPUT)
    for (guint a = 0; a < sweep->axes->len; a++)
      {
        g_autofree char *where = ytree_mark_format (point_value (sweep, a, 0)->mark);
        g_autofree char *prefix = g_strconcat (where, ": ", NULL);

        if (g_str_has_prefix (local->message, prefix))
          return TRUE;
      }
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

/* ------------------------------------------------------------------- rows */

typedef enum {
  STATUS_OK,
  STATUS_INFEASIBLE,
  STATUS_OOM,
} Status;

static const char *const status_names[] = { "ok", "infeasible", "oom" };



/* TEXT is a number as JSON writes them (RFC 8259 section 6). */
static gboolean
is_json_number (const char *p)
{
  p += *p == '-';
  if (*p == '0')
    p++;
  else if (g_ascii_isdigit (*p))
    while (g_ascii_isdigit (*p))
      p++;
  else
    return FALSE;
  if (*p == '.')
    {
      if (!g_ascii_isdigit (*++p))
        return FALSE;
      while (g_ascii_isdigit (*p))
        p++;
    }
  if (*p == 'e' || *p == 'E')
    {
      p++;
      p += *p == '+' || *p == '-';
      if (!g_ascii_isdigit (*p))
        return FALSE;
      while (g_ascii_isdigit (*p))
        p++;
    }
  return *p == '\0';
}

/* A swept value as the YAML scalar looks: a number, true, false, null,
 * or else a string. */
static void
append_json_value (GString *out, const YNode *v)
{
  if (v->plain && (is_json_number (v->text) || strcmp (v->text, "true") == 0
                   || strcmp (v->text, "false") == 0))
    g_string_append (out, v->text);
  else if (ytree_is_null (v))
    g_string_append (out, "null");
  else
    report_append_json_string (out, v->text);
}

/* An error message as one line: without the experiment's path in front
 * (every row has it), and with the rules a plan breaks, which plan_check
 * puts on lines of their own, joined by "; ". */
static char *
reason_line (const char *message, const char *path)
{
  g_auto (GStrv) lines = NULL;
  GString *out = g_string_new (NULL);

  if (g_str_has_prefix (message, path) && g_str_has_prefix (message + strlen (path), ": "))
    message += strlen (path) + 2;
  lines = g_strsplit (message, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      g_strstrip (lines[i]);
      if (lines[i][0] == '\0')
        continue;
      if (out->len > 0)
        g_string_append (out, out->str[out->len - 1] == ':' ? " " : "; ");
      g_string_append (out, lines[i]);
    }
  return g_string_free (out, FALSE);
}

/* The CSV header: the axis keys, status, reason, then report's columns. */
static void
append_csv_header (const Sweep *sweep, GString *out)
{
  for (guint a = 0; a < sweep->axes->len; a++)
    {
      report_append_csv_cell (out, ((const Axis *) g_ptr_array_index (sweep->axes, a))->key);
      g_string_append_c (out, ',');
    }
  g_string_append (out, "status,reason,");
  report_append_csv_header (out, (const char *const *) sweep->skip);
}

gboolean
sweep_point_row (const Sweep *sweep, guint64 point, const SweepOptions *o, GString *row,
                 int *status_out, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (YNode) tree = point_tree (sweep, point, &local);
  g_autofree char *reason = NULL;
  ExperimentSpec spec;
  SimOptions options = { FALSE, NULL };
  SimResult result;
  gboolean ok = FALSE;
  Status status;

  if (tree && config_experiment_from_tree (tree, sweep->path, &spec, &local))
    {
      ok = sim_run (&spec, &options, &result, &local);
      experiment_spec_clear (&spec);
    }
  if (!ok && (local->domain != TS_ERROR || local->code == TS_ERROR_IO))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  status = !ok ? STATUS_INFEASIBLE : result.fits_memory ? STATUS_OK : STATUS_OOM;
  if (status_out != NULL)
    *status_out = (int) status;
  if (status == STATUS_INFEASIBLE && o->feasible_only)
    return TRUE;
  if (status == STATUS_INFEASIBLE)
    reason = reason_line (local->message, sweep->path);
  else if (status == STATUS_OOM)
    reason = plan_memory_shortfall (&result.memory);

  if (o->format == SWEEP_CSV)
    {
      for (guint a = 0; a < sweep->axes->len; a++)
        {
          report_append_csv_cell (row, point_value (sweep, a, point)->text);
          g_string_append_c (row, ',');
        }
      g_string_append_printf (row, "%s,", status_names[status]);
      report_append_csv_cell (row, reason ? reason : "");
      g_string_append_c (row, ',');
      if (status == STATUS_INFEASIBLE)
        {
          /* The empty cells of a result there is not. */
          for (int i = 1; i < sweep->csv_columns; i++)
            g_string_append_c (row, ',');
          g_string_append_c (row, '\n');
        }
      else
        report_append_csv_row (row, &result, (const char *const *) sweep->skip);
      return TRUE;
    }

  g_string_append_c (row, '{');
  for (guint a = 0; a < sweep->axes->len; a++)
    {
      report_append_json_string (row, ((const Axis *) g_ptr_array_index (sweep->axes, a))->key);
      g_string_append (row, ": ");
      append_json_value (row, point_value (sweep, a, point));
      g_string_append (row, ", ");
    }
  g_string_append_printf (row, "\"status\": \"%s\", \"reason\": ", status_names[status]);
  if (reason)
    report_append_json_string (row, reason);
  else
    g_string_append (row, "null");
  if (status != STATUS_INFEASIBLE)
    {
      g_string_append (row, ", ");
      report_append_json_members (row, &result, (const char *const *) sweep->skip);
    }
  g_string_append (row, "}\n");
  return TRUE;
}

/* ---------------------------------------------------------------- output */

gboolean
sweep_output_open (SweepOutput *output, const Sweep *sweep, const SweepOptions *o,
                   GError **error)
{
  g_autoptr (GString) header = g_string_new (NULL);
  SweepHead head = { sweep->settings, sweep->n_points, NULL };

  if (o->format == SWEEP_CSV)
    {
      append_csv_header (sweep, header);
      head.header = header->str;
    }
  return sweep_output_start (output, &head, o, error);
}

/* ------------------------------------------------------------------ run */

typedef struct {
  const Sweep *sweep;
  const SweepOptions *options;
  guint window;           /* ring slots */
  GMutex lock;            /* guards the fields below */
  GCond finished;         /* a point's row is in the ring, or it failed */
  GString **ring;         /* slot % window -> finished row; owned */
  GError *fatal;          /* the failure of the lowest failed slot; owned */
  guint64 fatal_slot;
  guint64 awaited;        /* the slot the writer waits for: only its row
                           * (or a failure) wakes it, not every row, which
                           * woke it once a point and cost a tenth of a
                           * two-core sweep in wake-ups */
} Run;

/* GThreadPool's function: DATA is the slot plus one (a task is never NULL). */
static void
run_slot (gpointer data, gpointer user_data)
{
  Run *run = user_data;
  guint64 slot = GPOINTER_TO_SIZE (data) - 1;
  GString *row = g_string_new (NULL);
  GError *error = NULL;
  int status = STATUS_OK;
  gboolean ok = sweep_point_row (run->sweep, sweep_slot_point (run->options, slot),
                                 run->options, row, &status, &error);

  g_mutex_lock (&run->lock);
  if (ok && run->options->counts != NULL)
    {
      SweepCounts *c = run->options->counts;
      if (status == STATUS_OK)
        c->ok++;
      else if (status == STATUS_OOM)
        c->oom++;
      else
        c->infeasible++;
    }
  if (ok)
    run->ring[slot % run->window] = row;
  else
    {
      g_string_free (row, TRUE);
      if (run->fatal == NULL || slot < run->fatal_slot)
        {
          g_clear_error (&run->fatal);
          run->fatal = error;
          run->fatal_slot = slot;
        }
      else
        g_error_free (error);
    }
  if (!ok || slot == run->awaited)
    g_cond_signal (&run->finished);
  g_mutex_unlock (&run->lock);
}

gboolean
sweep_run (const Sweep *sweep, const SweepOptions *o, GError **error)
{
  g_autoptr (GString) batch = g_string_new (NULL);
  guint64 next, queued;
  gboolean ok = TRUE, stopping = FALSE;
  SweepOutput output;
  GThreadPool *pool;
  Run run = { sweep, o };

  g_return_val_if_fail (o->threads >= 1, FALSE);
  if (!sweep_output_open (&output, sweep, o, error))
    return FALSE;

  next = queued = output.resumed;
  run.window = sweep_window (o->threads);
  run.ring = g_new0 (GString *, run.window);
  g_mutex_init (&run.lock);
  g_cond_init (&run.finished);
  pool = g_thread_pool_new (run_slot, &run, (gint) o->threads, TRUE, NULL);
  while (ok && next < output.end)
    {
      gboolean fatal_here;

      for (; !stopping && queued < output.end && queued < next + run.window; queued++)
        g_thread_pool_push (pool, GSIZE_TO_POINTER (queued + 1), NULL);
      g_mutex_lock (&run.lock);
      run.awaited = next;
      while (run.ring[next % run.window] == NULL
             && !(run.fatal != NULL && run.fatal_slot == next))
        if (!output.progress.on)
          g_cond_wait (&run.finished, &run.lock);
        else if (!g_cond_wait_until (&run.finished, &run.lock,
                                     output.progress.redraw_at))
          break;
      for (; next < output.end && run.ring[next % run.window] != NULL; next++)
        {
          GString *row = g_steal_pointer (&run.ring[next % run.window]);
          g_string_append_len (batch, row->str, (gssize) row->len);
          g_string_free (row, TRUE);
        }
      fatal_here = run.fatal != NULL && run.fatal_slot == next;
      stopping = run.fatal != NULL;
      /* Taken under the lock: workers still running read run.fatal. */
      GError *fatal = fatal_here ? g_error_copy (run.fatal) : NULL;
      g_mutex_unlock (&run.lock);

      ok = sweep_output_write (&output, batch, next, error);
      g_string_truncate (batch, 0);
      if (fatal != NULL && ok)
        {
          g_propagate_error (error, fatal);
          ok = FALSE;
        }
      else if (fatal != NULL)
        g_error_free (fatal);
    }
  /* Queued points are dropped; running ones finish into the ring. */
  g_thread_pool_free (pool, TRUE, TRUE);
  for (guint i = 0; i < run.window; i++)
    if (run.ring[i] != NULL)
      g_string_free (run.ring[i], TRUE);
  g_free (run.ring);
  g_clear_error (&run.fatal);
  g_cond_clear (&run.finished);
  g_mutex_clear (&run.lock);
  return sweep_output_close (&output, ok, error);
}
