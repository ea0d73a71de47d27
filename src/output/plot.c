/* plot.c: a sweep's CSV as a gnuplot script, its data file and a figure.
 *
 * The path from CSV to figure:
 *
 *   CSV text --parse--> PlotTable --where--> rows to plot
 *     --figure_build--> Figure: an x axis of categories, a series axis (the
 *        --by values, or the y categories of a heatmap), each value with
 *        the text it is shown by, a grid of cells, each the first (or with
 *        --best the best) row with status ok that falls on it, and the
 *        numbers drawn there (--ratio-to, --normalize applied)
 *     --kind_writers[kind]--> FIG.gp and FIG.dat --gnuplot--> FIG.pdf
 *
 * Everything a figure shows is decided here, in C, and written into the
 * script as plain gnuplot (explicit tics, ranges, styles), so that the
 * script reads like one written by hand and a paper author can restyle it
 * without knowing trainsim. The data file has one block per series,
 * separated by two blank lines, so gnuplot's `index` picks a series. */
#include "output/plot-figure.h"
#include "base/errors.h"
#include "base/outfile.h"
#include "base/units.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* The kinds' names, in PlotKind's order; their writers are at the end. */
const char *const kind_names[PLOT_N] = { "line", "bars", "heatmap", "stack" };

int
plot_kind_parse (const char *name)
{
  for (int i = 0; name != NULL && i < PLOT_N; i++)
    if (strcmp (name, kind_names[i]) == 0)
      return i;
  return -1;
}

const char *
plot_kind_names (void)
{
  return "line, bars, heatmap or stack";
}

/* ----------------------------------------------------------------- labels */

/* Axis and legend labels for the columns a sweep writes (report.h names,
 * and the keys a sweep varies), so a figure is readable without
 * --xlabel/--ylabel. @legend is the short name of a part of a stack. */
typedef struct {
  const char *column;
  const char *label;
  const char *legend;
} ColumnLabel;

static const ColumnLabel column_labels[] = {
  { "gpus", "GPUs", NULL },
  { "iteration_time_s", "iteration time (s)", NULL },
  { "samples_per_s", "samples/s", NULL },
  { "tokens_per_s", "tokens/s", NULL },
  { "model_tflops_per_gpu", "TFLOP/s per GPU (model)", NULL },
  { "hardware_tflops_per_gpu", "TFLOP/s per GPU (hardware)", NULL },
  { "megatron_tflops_per_gpu", "TFLOP/s per GPU (Megatron)", NULL },
  { "aggregate_pflops", "aggregate PFLOP/s (Megatron)", NULL },
  { "mfu", "MFU", NULL },
  { "hfu", "HFU", NULL },
  { "params", "parameters", NULL },
  { "active_params", "active parameters", NULL },
  { "tp", "tensor-parallel size", NULL },
  { "pp", "pipeline-parallel size", NULL },
  { "dp", "data-parallel size", NULL },
  { "cp", "context-parallel size", NULL },
  { "ep", "expert-parallel size", NULL },
  { "etp", "expert tensor-parallel size", NULL },
  { "micro_batch", "micro-batch size", NULL },
  { "global_batch", "global batch size", NULL },
  { "virtual_stages", "virtual pipeline stages", NULL },
  { "schedule", "pipeline schedule", NULL },
  { "memory_per_gpu_gib", "memory per GPU (GiB)", NULL },
  { "memory.weights_gib", "weights per GPU (GiB)", "weights" },
  { "memory.gradients_gib", "gradients per GPU (GiB)", "gradients" },
  { "memory.optimizer_gib", "optimizer state per GPU (GiB)", "optimizer" },
  { "memory.activations_gib", "activations per GPU (GiB)", "activations" },
  { "memory.other_gib", "other memory per GPU (GiB)", "other" },
  { "breakdown_s.compute", "compute time (s)", "compute" },
  { "breakdown_s.tp_comm", "exposed TP communication (s)", "TP comm" },
  { "breakdown_s.ep_comm", "MoE all-to-all communication (s)", "EP comm" },
  { "breakdown_s.cp_comm", "context-parallel communication (s)", "CP comm" },
  { "breakdown_s.bubble", "pipeline bubble (s)", "pipeline bubble" },
  { "breakdown_s.pp_comm", "exposed PP communication (s)", "PP comm" },
  { "breakdown_s.dp_comm", "exposed DP communication (s)", "DP comm" },
  { "breakdown_s.epilogue", "step epilogue (s)", "epilogue" },
  { "breakdown_s.optimizer", "optimizer step (s)", "optimizer" },
  { "breakdown_s.offload", "offload (s)", "offload" },
  { "breakdown_s.host", "host-bound (s)", "host-bound" },
  { "breakdown_s.variability", "waiting for the slowest GPU (s)", "variability" },
  { "days_to_train", "days to train", NULL },
  { "cost_usd", "cost (USD)", NULL },
  /* trainsim plan's columns. */
  { "parameters", "parameters", NULL },
  { "tokens", "training tokens", NULL },
  { "days", "days to train", NULL },
  { "days_with_failures", "days to train, with failures", NULL },
  { "gpu_hours", "GPU-hours", NULL },
  { "gpu_hours_with_failures", "GPU-hours, with failures", NULL },
  { "cost_usd_with_failures", "cost with failures (USD)", NULL },
  { "energy_mwh", "energy (MWh)", NULL },
  { "energy_mwh_with_failures", "energy with failures (MWh)", NULL },
  { "co2_t", "CO2 (t)", NULL },
  { "co2_t_with_failures", "CO2 with failures (t)", NULL },
  { "topology.inter_node.nics_per_node", "NICs per node", NULL },
  { "topology.inter_node.nic_bandwidth", "NIC bandwidth", NULL },
  { "topology.inter_node.link", "inter-node network", NULL },
  { "zero.stage", "ZeRO stage", NULL },
  { "training.recompute", "activation recomputation", NULL },
};

/* The entry for @column: by its full name, else by its last component
 * (a sweep's parallel.tp reads like the report's tp). */
static const ColumnLabel *
column_label_find (const char *column)
{
  const char *dot = strrchr (column, '.');

  for (gsize i = 0; i < G_N_ELEMENTS (column_labels); i++)
    if (strcmp (column_labels[i].column, column) == 0)
      return &column_labels[i];
  if (dot != NULL)
    for (gsize i = 0; i < G_N_ELEMENTS (column_labels); i++)
      if (strcmp (column_labels[i].column, dot + 1) == 0)
        return &column_labels[i];
  return NULL;
}

const char *
column_label (const PlotTable *table, int col)
{
  const char *name = g_ptr_array_index (table->header, col);
  const ColumnLabel *l = column_label_find (name);

  return l ? l->label : name;
}

const char *
column_legend (const PlotTable *table, int col)
{
  const char *name = g_ptr_array_index (table->header, col);
  const ColumnLabel *l = column_label_find (name);

  return l ? (l->legend ? l->legend : l->label) : name;
}

/* ------------------------------------------------------------------- axes */


static void
axis_clear (Axis *axis)
{
  g_clear_pointer (&axis->labels, g_ptr_array_unref);
  g_clear_pointer (&axis->shown, g_ptr_array_unref);
  g_clear_pointer (&axis->values, g_array_unref);
  g_clear_pointer (&axis->index, g_hash_table_unref);
}

/* "64" and "64.0" are one point of a numeric axis. */
static char *
axis_key (const Axis *axis, const char *s)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  double v;

  if (axis->numeric && plot_cell_number (s, &v))
    return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.10g", v));
  return g_strdup (s);
}

typedef struct {
  const char *label;
  double value;
} AxisEntry;

static int
axis_entry_cmp (gconstpointer a, gconstpointer b)
{
  double x = ((const AxisEntry *) a)->value, y = ((const AxisEntry *) b)->value;

  return (x > y) - (x < y);
}

/* The axis of column @col over @rows; @col < 0 gives one unnamed point,
 * for a figure without --by. */
static void
axis_build (Axis *axis, const PlotTable *table, const GArray *rows, int col)
{
  g_autoptr (GArray) entries = g_array_new (FALSE, FALSE, sizeof (AxisEntry));
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  axis->labels = g_ptr_array_new_with_free_func (g_free);
  axis->shown = g_ptr_array_new_with_free_func (g_free);
  axis->values = g_array_new (FALSE, FALSE, sizeof (double));
  axis->index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  axis->numeric = col >= 0;
  if (col < 0)
    {
      g_ptr_array_add (axis->labels, g_strdup (""));
      g_ptr_array_add (axis->shown, g_strdup (""));
      return;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      guint r = g_array_index (rows, guint, i);
      AxisEntry e = { plot_table_cell (table, r, col), 0 };

      if (!plot_cell_number (e.label, &e.value))
        axis->numeric = FALSE;
      if (g_hash_table_add (seen, (gpointer) e.label))
        g_array_append_val (entries, e);
    }
  if (axis->numeric)
    /* Stable, so that "64" and "64.0" keep the first one seen first. */
    g_array_sort (entries, axis_entry_cmp);
  for (guint i = 0; i < entries->len; i++)
    {
      const AxisEntry *e = &g_array_index (entries, AxisEntry, i);
      char *key = axis_key (axis, e->label);

      if (g_hash_table_contains (axis->index, key))
        {
          g_free (key);
          continue;
        }
      g_ptr_array_add (axis->labels, g_strdup (e->label));
      g_ptr_array_add (axis->shown, g_utf8_make_valid (e->label, -1));
      g_array_append_val (axis->values, e->value);
      g_hash_table_insert (axis->index, key,
                           GUINT_TO_POINTER (axis->labels->len));
    }
}

/* The position of the value @s on @axis, or -1 when it has none. */
int
axis_find (const Axis *axis, const char *s)
{
  g_autofree char *key = axis_key (axis, s);

  return (int) GPOINTER_TO_UINT (g_hash_table_lookup (axis->index, key)) - 1;
}

/* The position of @s, a value the axis was built from. */
static guint
axis_position (const Axis *axis, const char *s)
{
  int pos = axis_find (axis, s);

  g_assert (pos >= 0);
  return (guint) pos;
}

/* The largest value along a numeric axis (0 for categories). */
double
axis_max (const Axis *axis)
{
  double hi = 0;

  for (guint i = 0; axis->numeric && i < axis->values->len; i++)
    hi = MAX (hi, g_array_index (axis->values, double, i));
  return hi;
}

/* The values of @axis as "1, 2, 4", for a message that says which exist. */
static char *
axis_list (const Axis *axis)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < axis->labels->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "",
                            (const char *) g_ptr_array_index (axis->labels, i));
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Replaces the text position @i of @axis is shown by with TEXT (taken),
 * made valid UTF-8. */
static void
axis_show (Axis *axis, guint i, char *text)
{
  g_free (axis->shown->pdata[i]);
  axis->shown->pdata[i] = g_utf8_make_valid (text, -1);
  g_free (text);
}

/* The parts of a description between ", " and ": ", in order. */
static GPtrArray *
description_parts (const char *description)
{
  GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) clauses = g_strsplit (description, ", ", -1);

  for (gsize i = 0; clauses[i] != NULL; i++)
    {
      g_auto (GStrv) pieces = g_strsplit (clauses[i], ": ", -1);

      for (gsize k = 0; pieces[k] != NULL; k++)
        if (*g_strstrip (pieces[k]) != '\0')
          g_ptr_array_add (parts, g_strdup (pieces[k]));
    }
  return parts;
}

static gboolean
parts_have (const GPtrArray *parts, const char *part)
{
  for (guint i = 0; i < parts->len; i++)
    if (strcmp (g_ptr_array_index (parts, i), part) == 0)
      return TRUE;
  return FALSE;
}

/* Whether the texts of @texts at the positions of @which are all distinct
 * and none is empty. */
static gboolean
texts_distinct (const GPtrArray *texts, const GArray *which)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint k = 0; k < which->len; k++)
    {
      const char *text = g_ptr_array_index (texts,
                                            g_array_index (which, guint, k));

      if (*text == '\0' || !g_hash_table_add (seen, (gpointer) text))
        return FALSE;
    }
  return TRUE;
}

/* A topology axis (a sweep over `topology`) in words: each value that
 * names a topology file is shown by that file's description, less the
 * parts (between ", " or ": ") that all of their descriptions share, so
 * the key says what differs: apollo-a100-1ib to -4ib read "1 x HDR
 * 200Gb/s per node" to "4 x ...". Where that leaves a text empty (one
 * topology alone) or two alike, the whole descriptions stand, and where
 * those are alike, the names. @near is the CSV, whose directory is
 * searched as an experiment's is. */
static void
axis_describe_topologies (Axis *axis, const char *near)
{
  guint n = axis->labels->len;
  g_autoptr (GArray) described = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GPtrArray) parts = g_ptr_array_new_with_free_func (
    (GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GPtrArray) whole = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) brief = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < n; i++)
    {
      char *d = config_topology_description (
        g_ptr_array_index (axis->labels, i), near);

      g_ptr_array_add (whole, d);
      g_ptr_array_add (parts, d ? description_parts (d) : g_ptr_array_new ());
      g_ptr_array_add (brief, NULL);
      if (d != NULL)
        g_array_append_val (described, i);
    }
  for (guint k = 0; k < described->len; k++)
    {
      guint i = g_array_index (described, guint, k);
      g_autoptr (GString) text = g_string_new (NULL);
      const GPtrArray *mine = g_ptr_array_index (parts, i);

      for (guint p = 0; p < mine->len; p++)
        {
          const char *part = g_ptr_array_index (mine, p);
          gboolean shared = TRUE;

          for (guint j = 0; j < described->len && shared; j++)
            shared = parts_have (g_ptr_array_index (
              parts, g_array_index (described, guint, j)), part);
          if (!shared)
            g_string_append_printf (text, "%s%s", text->len ? ", " : "",
                                    part);
        }
      brief->pdata[i] = g_string_free (g_steal_pointer (&text), FALSE);
    }
  const GPtrArray *chosen = texts_distinct (brief, described) ? brief
                            : texts_distinct (whole, described) ? whole : NULL;
  for (guint k = 0; chosen != NULL && k < described->len; k++)
    {
      guint i = g_array_index (described, guint, k);

      axis_show (axis, i, g_strdup (g_ptr_array_index (chosen, i)));
    }
}

/* ----------------------------------------------------------------- figure */



static void
figure_clear (Figure *f)
{
  g_clear_pointer (&f->values, g_array_unref);
  axis_clear (&f->xs);
  axis_clear (&f->series);
  g_clear_pointer (&f->cells, g_free);
  g_clear_pointer (&f->failed, g_free);
  g_clear_pointer (&f->drawn, g_free);
  g_clear_pointer (&f->slivers, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Figure, figure_clear)

int
figure_cell (const Figure *f, guint s, guint x)
{
  return f->cells[s * f->xs.labels->len + x];
}

double
figure_drawn (const Figure *f, guint b, guint x)
{
  return f->drawn[b * f->xs.labels->len + x];
}

/* Whether row @r is a point to draw: a sweep's infeasible and
 * out-of-memory rows are not (their cells are empty, or hold a plan that
 * does not run). */
static gboolean
row_ok (const Figure *f, guint r)
{
  return f->status < 0
         || strcmp (plot_table_cell (f->table, r, f->status), "ok") == 0;
}

double
cell_value (const Figure *f, int row, int col)
{
  double v;
  gboolean number = plot_cell_number (plot_table_cell (f->table, (guint) row,
                                                      col), &v);

  g_assert (number);  /* figure_rows() kept only rows with numbers there */
  return v;
}

/* The time breakdown of report.h, the default of a stack, in its order. */
const char *const breakdown_columns[BREAKDOWN_N] = {
  "breakdown_s.compute", "breakdown_s.tp_comm", "breakdown_s.ep_comm",
  "breakdown_s.cp_comm", "breakdown_s.bubble",
  "breakdown_s.pp_comm", "breakdown_s.dp_comm", "breakdown_s.epilogue",
  "breakdown_s.optimizer", "breakdown_s.offload", "breakdown_s.host",
  "breakdown_s.variability",
};

/* The columns of a stack: --y's list, or the breakdown columns the table
 * has, less those that are zero in every row drawn (offload without
 * offload): a legend entry for nothing only makes a reader look for it. */
static gboolean
stack_columns (Figure *f, GError **error)
{
  const PlotTable *t = f->table;

  if (f->spec->y != NULL)
    {
      g_auto (GStrv) names = g_strsplit (f->spec->y, ",", -1);

      for (gsize i = 0; names[i] != NULL; i++)
        {
          int col;

          if (!plot_table_resolve (t, g_strstrip (names[i]), "--y", &col,
                                   error))
            return FALSE;
          g_array_append_val (f->values, col);
        }
      return TRUE;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (breakdown_columns); i++)
    {
      int col = plot_table_find (t, breakdown_columns[i]);
      gboolean used = FALSE;

      for (guint r = 0; col >= 0 && r < t->rows->len && !used; r++)
        {
          double v;

          used = row_ok (f, r)
                 && (!plot_cell_number (plot_table_cell (t, r, col), &v)
                     || v != 0);
        }
      if (used)
        g_array_append_val (f->values, col);
    }
  if (f->values->len == 0)
    {
      g_autofree char *list = plot_table_columns (t);
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--kind stack: %s has no breakdown_s.* columns with a "
                   "time in them; name the parts with --y A,B,C (columns: %s)",
                   t->name, list);
      return FALSE;
    }
  return TRUE;
}

/* The options that only some kinds take, each with the kinds it is for. */
static gboolean
check_kind_options (const PlotSpec *spec, GError **error)
{
  const struct {
    gboolean given;
    const char *option;
    guint kinds;       /* 1 << PlotKind */
    const char *valid; /* the kinds, in words */
  } options[] = {
    { spec->logx, "--logx", 1u << PLOT_LINE, "line" },
    { spec->ideal, "--ideal", 1u << PLOT_LINE, "line" },
    { spec->logy, "--logy", 1u << PLOT_LINE | 1u << PLOT_BARS, "line or bars" },
    { spec->ratio_to != NULL, "--ratio-to", 1u << PLOT_LINE | 1u << PLOT_BARS,
      "line or bars" },
    { spec->normalize, "--normalize", 1u << PLOT_STACK, "stack" },
    { spec->best != NULL, "--best",
      1u << PLOT_LINE | 1u << PLOT_BARS | 1u << PLOT_HEATMAP,
      "line, bars or heatmap" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (options); i++)
    if (options[i].given && !(options[i].kinds & 1u << spec->kind))
      {
        g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                     "%s is for --kind %s, not %s", options[i].option,
                     options[i].valid, kind_names[spec->kind]);
        return FALSE;
      }
  if (spec->ratio_to != NULL && spec->by == NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--ratio-to %s needs --by COLUMN: it names the series "
                   "the others are divided by", spec->ratio_to);
      return FALSE;
    }
  if (spec->ratio_to != NULL && spec->ideal)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--ideal does not go with --ratio-to: a ratio does not "
                   "scale with x");
      return FALSE;
    }
  if (spec->best != NULL && strcmp (spec->best, "max") != 0
      && strcmp (spec->best, "min") != 0)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--best '%s': expected max (the highest value: "
                   "throughput, MFU) or min (the lowest: time, memory)",
                   spec->best);
      return FALSE;
    }
  return TRUE;
}

/* The columns the kind needs, and the options it does not take. */
static gboolean
figure_columns (Figure *f, GError **error)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  const char *kind = kind_names[spec->kind];

  f->by = f->y = -1;
  f->status = plot_table_status (t);
  if (spec->x == NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "--x COLUMN is required");
      return FALSE;
    }
  if (spec->y == NULL && spec->kind != PLOT_STACK)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--y COLUMN is required with --kind %s", kind);
      return FALSE;
    }
  if (spec->kind != PLOT_STACK && strchr (spec->y, ',') != NULL)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--y '%s': a list of columns is for --kind stack; "
                   "--kind %s takes one", spec->y, kind);
      return FALSE;
    }
  if ((spec->z != NULL) != (spec->kind == PLOT_HEATMAP))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, spec->z
                   ? "--z is for --kind heatmap (the colour of a cell)"
                   : "--kind heatmap needs --z COLUMN (the colour of a cell)");
      return FALSE;
    }
  if (spec->by != NULL && (spec->kind == PLOT_HEATMAP
                           || spec->kind == PLOT_STACK))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--by does not apply to --kind %s: pick the rows with "
                   "--where COLUMN=VALUE", kind);
      return FALSE;
    }
  if (!check_kind_options (spec, error))
    return FALSE;

  f->values = g_array_new (FALSE, FALSE, sizeof (int));
  f->slivers = g_array_new (FALSE, FALSE, sizeof (int));
  if (!plot_table_resolve (t, spec->x, "--x", &f->x, error))
    return FALSE;
  if (spec->by != NULL
      && !plot_table_resolve (t, spec->by, "--by", &f->by, error))
    return FALSE;
  switch (spec->kind)
    {
    case PLOT_LINE:
    case PLOT_BARS:
      {
        int y;

        if (!plot_table_resolve (t, spec->y, "--y", &y, error))
          return FALSE;
        g_array_append_val (f->values, y);
        return TRUE;
      }
    case PLOT_HEATMAP:
      {
        int z;

        if (!plot_table_resolve (t, spec->y, "--y", &f->y, error)
            || !plot_table_resolve (t, spec->z, "--z", &z, error))
          return FALSE;
        g_array_append_val (f->values, z);
        return TRUE;
      }
    case PLOT_STACK:
      return stack_columns (f, error);
    default:
      g_assert_not_reached ();
    }
}

/* The line of @notes on the rows whose status is not ok: how many, per
 * status in the order first seen, so that the note is stable. */
static void
note_statuses (const Figure *f, GString *notes)
{
  const PlotTable *t = f->table;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  guint skipped = 0;

  for (guint r = 0; r < t->rows->len; r++)
    {
      const char *s;
      guint k;

      if (row_ok (f, r))
        continue;
      s = plot_table_cell (t, r, f->status);
      for (k = 0; k < names->len; k++)
        if (strcmp (g_ptr_array_index (names, k), s) == 0)
          break;
      if (k == names->len)
        {
          g_ptr_array_add (names, (gpointer) s);
          g_array_set_size (counts, k + 1);
        }
      g_array_index (counts, guint, k)++;
      skipped++;
    }
  if (skipped == 0)
    return;
  g_string_append_printf (notes, "skipped %u row%s whose status is not ok (",
                          skipped, skipped == 1 ? "" : "s");
  for (guint k = 0; k < names->len; k++)
    g_string_append_printf (notes, "%s%u %s", k ? ", " : "",
                            g_array_index (counts, guint, k),
                            *(const char *) names->pdata[k]
                            ? (const char *) names->pdata[k] : "empty");
  g_string_append (notes, ")\n");
}

/* The rows to draw: every ok row with its cells in the figure's columns
 * filled in, the numeric ones numbers. @placed gets them too, and for a
 * heatmap the rows whose status is not ok but that name their cell: the
 * axes are built from @placed, so that a row or column of the design
 * space that never fits still shows. */
static GArray *
figure_rows (Figure *f, GArray *placed, GString *notes, GError **error)
{
  const PlotTable *t = f->table;
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) used = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree guint *empty = g_new0 (guint, t->header->len);

  g_array_append_vals (used, f->values->data, f->values->len);
  g_array_append_val (used, f->x);
  if (f->by >= 0)
    g_array_append_val (used, f->by);
  if (f->y >= 0)
    g_array_append_val (used, f->y);
  note_statuses (f, notes);
  for (guint r = 0; r < t->rows->len; r++)
    {
      gboolean keep = TRUE;

      if (!row_ok (f, r))
        {
          if (f->spec->kind == PLOT_HEATMAP
              && *plot_table_cell (t, r, f->x) != '\0'
              && *plot_table_cell (t, r, f->y) != '\0')
            g_array_append_val (placed, r);
          continue;
        }
      for (guint i = 0; i < used->len && keep; i++)
        {
          int col = g_array_index (used, int, i);

          if (*plot_table_cell (t, r, col) == '\0')
            {
              empty[col]++;
              keep = FALSE;
            }
        }
      for (guint i = 0; i < f->values->len && keep; i++)
        {
          int col = g_array_index (f->values, int, i);
          double v;

          if (!plot_cell_number (plot_table_cell (t, r, col), &v))
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                           "%s:%u: %s is '%s', not a number", t->name,
                           plot_table_line (t, r),
                           (const char *) g_ptr_array_index (t->header, col),
                           plot_table_cell (t, r, col));
              return NULL;
            }
        }
      if (keep)
        {
          g_array_append_val (rows, r);
          g_array_append_val (placed, r);
        }
    }
  for (guint c = 0; c < t->header->len; c++)
    if (empty[c] > 0)
      g_string_append_printf (notes, "left out %u row%s with no value for "
                              "%s\n", empty[c], empty[c] == 1 ? "" : "s",
                              (const char *) g_ptr_array_index (t->header, c));
  if (rows->len == 0)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: no rows left to plot",
                   t->name);
      return NULL;
    }
  return g_steal_pointer (&rows);
}

/* The columns that tell apart two rows falling on one point: the keys a
 * sweep varied (the columns before `status`), else any column. */
static void
note_duplicates (const Figure *f, guint n, const gboolean *differ,
                 GString *notes)
{
  const PlotTable *t = f->table;
  gboolean any = FALSE;

  g_string_append_printf (notes, "left out %u %s on a point an earlier row "
                          "holds", n, n == 1 ? "row that falls" : "rows that fall");
  for (guint c = 0; c < t->header->len; c++)
    if (differ[c])
      {
        g_string_append (notes, any ? ", " : " (they differ in ");
        g_string_append (notes, g_ptr_array_index (t->header, c));
        any = TRUE;
      }
  g_string_append_printf (notes, "%s: pick one with --where COLUMN=VALUE%s"
                          "%s\n", any ? ")" : "",
                          f->spec->kind == PLOT_LINE
                          || f->spec->kind == PLOT_BARS
                          ? " or split them with --by" : "",
                          f->spec->kind != PLOT_STACK
                          ? ", or take the best with --best max|min" : "");
}

/* The texts the values of the axes are shown by: a topology's
 * description, then the texts of --label. */
static gboolean
figure_labels (Figure *f, GError **error)
{
  const PlotTable *t = f->table;
  const struct {
    int col;
    Axis *axis;
  } axes[] = { { f->x, &f->xs }, { f->y >= 0 ? f->y : f->by, &f->series } };

  for (gsize a = 0; a < G_N_ELEMENTS (axes); a++)
    if (axes[a].col >= 0
        && strcmp (g_ptr_array_index (t->header, axes[a].col), "topology") == 0)
      axis_describe_topologies (axes[a].axis, t->name);

  for (gsize i = 0; f->spec->labels != NULL && f->spec->labels[i]; i++)
    {
      const char *label = f->spec->labels[i];
      const char *eq = strchr (label, '=');
      const char *colon = eq ? strchr (eq + 1, ':') : NULL;
      gboolean found = FALSE;
      int col;

      if (eq == NULL || eq == label || colon == NULL || colon[1] == '\0')
        {
          g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                       "--label '%s': expected COLUMN=VALUE:TEXT, e.g. "
                       "topology=apollo-a100-4ib:'HDR InfiniBand'", label);
          return FALSE;
        }
      g_autofree char *name = g_strndup (label, eq - label);
      g_autofree char *value = g_strndup (eq + 1, colon - eq - 1);
      if (!plot_table_resolve (t, name, "--label", &col, error))
        return FALSE;
      for (gsize a = 0; a < G_N_ELEMENTS (axes); a++)
        {
          int pos;

          if (axes[a].col != col)
            continue;
          found = TRUE;
          pos = axis_find (axes[a].axis, value);
          if (pos < 0)
            {
              g_autofree char *list = axis_list (axes[a].axis);
              g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                           "--label '%s': no row drawn has %s = %s (it has: "
                           "%s)", label,
                           (const char *) g_ptr_array_index (t->header, col),
                           value, list);
              return FALSE;
            }
          axis_show (axes[a].axis, (guint) pos, g_strdup (colon + 1));
        }
      if (!found)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                       "--label '%s': %s is not along x (%s)%s%s%s; label a "
                       "value of %s", label,
                       (const char *) g_ptr_array_index (t->header, col),
                       (const char *) g_ptr_array_index (t->header, f->x),
                       axes[1].col >= 0 ? " nor a series (" : "",
                       axes[1].col >= 0 ? (const char *) g_ptr_array_index (
                         t->header, axes[1].col) : "",
                       axes[1].col >= 0 ? ")" : "",
                       axes[1].col >= 0 ? "one of those" : "x");
          return FALSE;
        }
    }
  return TRUE;
}

/* Divides each series by the --ratio-to series at the same x: the
 * reference is 1 wherever it has a point, and a point where it has none
 * (or a zero) is left out, with a note. */
static gboolean
figure_ratio (Figure *f, GString *notes, GError **error)
{
  const char *to = f->spec->ratio_to;
  guint nx = f->xs.labels->len, ns = f->series.labels->len, lost = 0;
  int ref = axis_find (&f->series, to);

  if (ref < 0)
    {
      g_autofree char *list = axis_list (&f->series);
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--ratio-to %s: no series has %s = %s (the series: %s)",
                   to, (const char *) g_ptr_array_index (f->table->header,
                                                         f->by), to, list);
      return FALSE;
    }
  g_autofree double *base = g_memdup2 (f->drawn + (gsize) ref * nx,
                                       nx * sizeof (double));
  for (guint s = 0; s < ns; s++)
    for (guint i = 0; i < nx; i++)
      {
        double *v = &f->drawn[s * nx + i];

        if (isnan (*v))
          continue;
        if (isnan (base[i]) || base[i] == 0)
          {
            *v = NAN;
            lost++;
          }
        else
          *v /= base[i];
      }
  if (lost > 0)
    g_string_append_printf (notes, "--ratio-to %s: left out %u point%s at "
                            "an x where %s has no value (or zero)\n", to,
                            lost, lost == 1 ? "" : "s", to);
  return TRUE;
}

/* A part of a stack this small in every bar is a sliver a reader cannot
 * measure: two or more are drawn as one block, "other", and a lone one
 * is named with how small it is. */
#define STACK_SLIVER 0.03

/* The largest share of its bar that part @b of a stack takes. */
static double
stack_part_share (const Figure *f, guint b)
{
  double share = 0;

  for (guint i = 0; i < f->xs.labels->len; i++)
    {
      double sum = 0;

      for (guint p = 0; p < f->values->len; p++)
        if (!isnan (figure_drawn (f, p, i)))
          sum += figure_drawn (f, p, i);
      if (sum > 0 && !isnan (figure_drawn (f, b, i)))
        share = MAX (share, figure_drawn (f, b, i) / sum);
    }
  return share;
}

/* Draws the stack's slivers (two or more) as one last block, their sum:
 * f->values keeps the first sliver's column for it, f->slivers lists
 * them all. */
static void
stack_merge_slivers (Figure *f)
{
  guint nx = f->xs.labels->len, np = f->values->len;
  g_autofree gboolean *small = g_new0 (gboolean, np);
  guint n = 0;

  for (guint p = 0; p < np; p++)
    n += small[p] = stack_part_share (f, p) < STACK_SLIVER;
  if (n < 2)
    return;
  g_autoptr (GArray) kept = g_array_new (FALSE, FALSE, sizeof (int));
  double *drawn = g_new (double, (gsize) (np - n + 1) * nx);
  guint k = 0;

  for (guint p = 0; p < np; p++)
    if (!small[p])
      {
        g_array_append_val (kept, g_array_index (f->values, int, p));
        memcpy (drawn + (gsize) k++ * nx, f->drawn + (gsize) p * nx, nx * sizeof *drawn);
      }
  for (guint i = 0; i < nx; i++)
    {
      double sum = NAN;

      for (guint p = 0; p < np; p++)
        if (small[p] && !isnan (figure_drawn (f, p, i)))
          sum = (isnan (sum) ? 0 : sum) + figure_drawn (f, p, i);
      drawn[(gsize) k * nx + i] = sum;
    }
  for (guint p = 0; p < np; p++)
    if (small[p])
      g_array_append_val (f->slivers, g_array_index (f->values, int, p));
  g_array_append_val (kept, g_array_index (f->slivers, int, 0));
  g_array_set_size (f->values, 0);
  g_array_append_vals (f->values, kept->data, kept->len);
  g_free (f->drawn);
  f->drawn = drawn;
}

/* Whether block @b of a stack is its merged slivers. */
gboolean
stack_block_is_slivers (const Figure *f, guint b)
{
  return f->slivers->len > 0 && b == f->values->len - 1;
}

/* The key entry of part @b of a stack: its legend; "other" for the
 * merged slivers; and "(under N %)" for a part under STACK_SLIVER of
 * every bar. */
char *
stack_part_title (const Figure *f, guint b)
{
  double share = stack_part_share (f, b);
  g_autofree char *under = g_strdup_printf (" (under %.0f %%)",
                                            MAX (ceil (share * 100), 1));

  if (stack_block_is_slivers (f, b))
    return g_strdup_printf ("other%s", share < STACK_SLIVER ? under : "");
  return g_strdup_printf ("%s%s", column_legend (f->table, g_array_index (f->values, int, b)),
                          share < STACK_SLIVER ? under : "");
}

/* Each stack's parts over their sum; a stack that sums to zero has no
 * fractions, and is left out with a note. */
static void
figure_normalize (Figure *f, GString *notes)
{
  guint nx = f->xs.labels->len, np = f->values->len, zero = 0;

  for (guint i = 0; i < nx; i++)
    {
      double sum = 0;

      for (guint p = 0; p < np; p++)
        if (!isnan (figure_drawn (f, p, i)))
          sum += figure_drawn (f, p, i);
      for (guint p = 0; p < np; p++)
        f->drawn[p * nx + i] = sum > 0 ? figure_drawn (f, p, i) / sum : NAN;
      zero += sum == 0 && figure_cell (f, 0, i) >= 0;
    }
  if (zero > 0)
    g_string_append_printf (notes, "--normalize: left out %u bar%s whose "
                            "parts sum to zero\n", zero, zero == 1 ? "" : "s");
}

/* The numbers drawn: each cell's value, over the --ratio-to series' at
 * the same x, or as a fraction of its stack (--normalize). */
static gboolean
figure_values (Figure *f, GString *notes, GError **error)
{
  const PlotSpec *spec = f->spec;
  const PlotTable *t = f->table;
  gboolean stacked = spec->kind == PLOT_STACK;
  guint nx = f->xs.labels->len;
  guint nb = stacked ? f->values->len : f->series.labels->len;

  f->drawn = g_new (double, (gsize) nb * nx);
  for (guint b = 0; b < nb; b++)
    for (guint i = 0; i < nx; i++)
      {
        int r = figure_cell (f, stacked ? 0 : b, i);
        int col = g_array_index (f->values, int, stacked ? b : 0);
        double v = r < 0 ? NAN : cell_value (f, r, col);

        if (!isnan (v) && ((spec->logy && v <= 0)
                           || (spec->normalize && v < 0)))
          {
            g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                         "%s:%u: %s is %s: %s", t->name,
                         plot_table_line (t, (guint) r),
                         (const char *) g_ptr_array_index (t->header, col),
                         plot_table_cell (t, (guint) r, col), spec->logy
                         ? "--logy draws values above zero only (leave the "
                           "row out with --where, or drop --logy)"
                         : "--normalize needs parts of zero or more");
            return FALSE;
          }
        f->drawn[b * nx + i] = v;
      }
  if (spec->ratio_to != NULL && !figure_ratio (f, notes, error))
    return FALSE;
  if (stacked)
    {
      stack_merge_slivers (f);
      nb = f->values->len;  /* the slivers are one block now */
    }
  if (spec->normalize)
    figure_normalize (f, notes);

  f->lo = INFINITY;
  f->hi = -INFINITY;
  for (gsize k = 0; k < (gsize) nb * nx; k++)
    if (!isnan (f->drawn[k]))
      {
        f->lo = MIN (f->lo, f->drawn[k]);
        f->hi = MAX (f->hi, f->drawn[k]);
      }
  if (f->lo > f->hi)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: no points left to "
                   "plot (see the notes above)", t->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
figure_build (Figure *f, GString *notes, GError **error)
{
  const PlotTable *t = f->table;

  if (!figure_columns (f, error))
    return FALSE;
  g_autoptr (GArray) placed = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) rows = figure_rows (f, placed, notes, error);
  if (rows == NULL)
    return FALSE;
  axis_build (&f->xs, t, placed, f->x);
  int scol = f->y >= 0 ? f->y : f->by;  /* what tells the series apart */
  axis_build (&f->series, t, placed, scol);

  guint nx = f->xs.labels->len, ns = f->series.labels->len;
  if (f->by >= 0 && ns > PLOT_MAX_SERIES)
    {
      const char *by = g_ptr_array_index (t->header, f->by);
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "--by %s has %u values, more than the %d series a figure "
                   "tells apart (and gnuplot would draw them for minutes): keep "
                   "some rows with --where COLUMN=VALUE, or plot by a column "
                   "with fewer values", by, ns, PLOT_MAX_SERIES);
      return FALSE;
    }
  guint keys = f->status >= 0 ? (guint) f->status : t->header->len;
  g_autofree gboolean *differ = g_new0 (gboolean, t->header->len);
  guint dropped = 0, marked = 0;
  const char *best = f->spec->best;
  int value = g_array_index (f->values, int, 0);

  f->cells = g_new (int, (gsize) nx * ns);
  f->failed = g_new (int, (gsize) nx * ns);
  for (gsize i = 0; i < (gsize) nx * ns; i++)
    f->cells[i] = f->failed[i] = -1;
  for (guint i = 0; i < placed->len; i++)
    {
      guint r = g_array_index (placed, guint, i);
      guint s = scol >= 0
                ? axis_position (&f->series, plot_table_cell (t, r, scol)) : 0;
      guint x = axis_position (&f->xs, plot_table_cell (t, r, f->x));
      gsize at = (gsize) s * nx + x;

      if (!row_ok (f, r))
        continue;
      if (f->cells[at] < 0)
        {
          f->cells[at] = (int) r;
          continue;
        }
      if (best != NULL)
        {
          double v = cell_value (f, (int) r, value);
          double held = cell_value (f, f->cells[at], value);

          /* Ties keep the first row: the same CSV, the same figure. */
          if (strcmp (best, "max") == 0 ? v > held : v < held)
            f->cells[at] = (int) r;
          continue;
        }
      dropped++;
      for (guint c = 0; c < keys; c++)
        if (strcmp (plot_table_cell (t, r, (int) c),
                    plot_table_cell (t, (guint) f->cells[at], (int) c)) != 0)
          differ[c] = TRUE;
    }
  /* A heatmap's failed rows mark the cells no ok row fills. */
  for (guint i = 0; i < placed->len; i++)
    {
      guint r = g_array_index (placed, guint, i);

      if (row_ok (f, r))
        continue;
      gsize at = (gsize) axis_position (&f->series,
                                        plot_table_cell (t, r, scol)) * nx
                 + axis_position (&f->xs, plot_table_cell (t, r, f->x));
      if (f->cells[at] < 0 && f->failed[at] < 0)
        {
          f->failed[at] = (int) r;
          marked++;
        }
    }
  if (dropped > 0)
    note_duplicates (f, dropped, differ, notes);
  if (marked > 0)
    g_string_append_printf (notes, "marked %u cell%s where no row is ok\n",
                            marked, marked == 1 ? "" : "s");
  return figure_labels (f, error) && figure_values (f, notes, error);
}

/* The writers, in PlotKind's order: each fills the script and the data. */
typedef gboolean (*KindWriter) (const Figure *f, const Page *page,
                                GString *gp, GString *dat, GError **error);
static const KindWriter kind_writers[] = {
  write_line, write_bars, write_heatmap, write_stack,
};
G_STATIC_ASSERT (G_N_ELEMENTS (kind_writers) == PLOT_N);

gboolean
plot_write_script (const PlotTable *table, const PlotSpec *spec, GString *gp,
                   GString *dat, GString *notes, GError **error)
{
  g_return_val_if_fail (table != NULL && spec != NULL, FALSE);
  g_return_val_if_fail (spec->kind >= 0 && spec->kind < PLOT_N, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  Page page;
  if (!page_parse (&page, spec, error))
    return FALSE;
  g_auto (Figure) f = { table, spec };
  if (!figure_build (&f, notes, error))
    return FALSE;
  return kind_writers[spec->kind] (&f, &page, gp, dat, error);
}

/* ---------------------------------------------------------------- gnuplot */

gboolean
plot_run_gnuplot (const char *figure, GString *notes, GError **error)
{
  g_return_val_if_fail (figure != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_autofree char *gp = plot_sibling_path (figure, ".gp");
  g_autofree char *gnuplot = g_find_program_in_path ("gnuplot");
  if (gnuplot == NULL)
    {
      g_autofree char *dat = plot_sibling_path (figure, ".dat");
      g_set_error (error, TS_ERROR, TS_ERROR_IO,
                   "gnuplot not found: install it (apt-get install "
                   "gnuplot-nox); %s and %s were written", gp, dat);
      return FALSE;
    }

  g_autofree char *dir = g_path_get_dirname (figure);
  g_autofree char *gp_base = g_path_get_basename (gp);
  g_autofree char *gp_arg = gp_file_name (gp_base);
  g_autofree char *tmp = g_build_filename (dir, ".trainsim-plot-XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_RDWR, 0666);  /* the umask applies */
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write in %s: %s",
                   dir, g_strerror (saved_errno));
      return FALSE;
    }
  close (fd);
  outfile_temp_register (tmp);

  /* gnuplot draws into a hidden file in the figure's directory (it takes
   * the format from the script's terminal, not the name), which then
   * replaces the figure as any result file does (outfile.h). */
  g_autofree char *tmp_base = g_path_get_basename (tmp);
  g_autoptr (GString) assign = g_string_new ("outfile = ");
  append_gp_string (assign, tmp_base);
  const char *argv[] = { gnuplot, "-e", assign->str, gp_arg, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  g_autoptr (GError) local = NULL;

  if (!g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                     &out, &err, &wait_status, &local)
      || !g_spawn_check_exit_status (wait_status, &local))
    {
      g_unlink (tmp);
      outfile_temp_unregister (tmp);
      g_set_error (error, TS_ERROR, TS_ERROR_IO, "gnuplot %s failed (%s)%s%s",
                   gp, local->message, err && *err ? ":\n" : "",
                   err ? g_strchomp (err) : "");
      return FALSE;
    }
  g_autofree char *drawn = NULL;
  gsize drawn_len = 0;
  gboolean ok = g_file_get_contents (tmp, &drawn, &drawn_len, NULL)
                && outfile_write (figure, drawn, drawn_len, &local);
  g_unlink (tmp);
  outfile_temp_unregister (tmp);
  if (!ok)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s%s%s", figure,
                   local ? ": " : "", local ? local->message : "");
      return FALSE;
    }
  if (out && *out)
    g_string_append_printf (notes, "gnuplot: %s\n", g_strchomp (out));
  if (err && *err)
    g_string_append_printf (notes, "gnuplot: %s\n", g_strchomp (err));
  return TRUE;
}
