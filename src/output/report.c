/* report.c: the table, JSON and CSV writers of one simulated step.
 *
 * JSON and CSV are driven by one table of fields (fields[] below), so the
 * contract's names and order live in one place and the two formats cannot
 * drift apart. The human table is written by hand: it groups and rounds
 * for a reader, not for a parser. */
#include "output/report.h"
#include "base/units.h"
#include "base/outfile.h"
#include "base/text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- formats */

static const char *const format_names[] = { "table", "json", "csv" };
G_STATIC_ASSERT (G_N_ELEMENTS (format_names) == REPORT_N);

int
report_format_parse (const char *name)
{
  if (name == NULL)
    return -1;
  for (int i = 0; i < REPORT_N; i++)
    if (strcmp (name, format_names[i]) == 0)
      return i;
  return -1;
}

const char *
report_format_names (void)
{
  return "table, json or csv";
}

/* A JSON string literal. Invalid UTF-8 (a name built from user input)
 * is repaired first: one bad byte makes a viewer reject the whole file. */
void
report_append_json_string (GString *out, const char *s)
{
  g_autofree char *valid = NULL;

  if (!g_utf8_validate (s, -1, NULL))
    s = valid = g_utf8_make_valid (s, -1);
  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    switch (*p)
      {
      case '"':  g_string_append (out, "\\\""); break;
      case '\\': g_string_append (out, "\\\\"); break;
      case '\n': g_string_append (out, "\\n"); break;
      case '\r': g_string_append (out, "\\r"); break;
      case '\t': g_string_append (out, "\\t"); break;
      default:
        if (*p < 0x20)
          g_string_append_printf (out, "\\u%04x", *p);
        else
          g_string_append_c (out, (char) *p);
      }
  g_string_append_c (out, '"');
}

/* ----------------------------------------------------------------- fields */

#define GIB 1073741824.0  /* 2^30 bytes */

typedef enum {
  FIELD_DOUBLE,
  FIELD_BYTES_AS_GIB,  /* a double holding bytes, reported in GiB */
  FIELD_INT,
  FIELD_BOOL,
  FIELD_U64,
  FIELD_TEXT,          /* a char array */
  FIELD_NAME,          /* a const char * */
} FieldKind;

typedef struct {
  const char *group;       /* the nested JSON object, NULL at the top level */
  const char *name;
  FieldKind kind;
  gsize offset;            /* in SimResult */
  gboolean training_only;  /* present only when has_training */
} Field;

#define FIELD(group, name, kind, member, training) \
  { group, name, kind, G_STRUCT_OFFSET (SimResult, member), training }

/* The JSON contract of trainsim(1), OUTPUT, in its order (tests/test-output.c
 * and tests/cli.sh check it). Members of one group must
 * be adjacent: the JSON writer opens an object when the group changes. */
static const Field fields[] = {
  FIELD (NULL, "iteration_time_s", FIELD_DOUBLE, iteration_time_s, FALSE),
  FIELD (NULL, "samples_per_s", FIELD_DOUBLE, samples_per_s, FALSE),
  FIELD (NULL, "tokens_per_s", FIELD_DOUBLE, tokens_per_s, FALSE),
  FIELD (NULL, "model_tflops_per_gpu", FIELD_DOUBLE, model_tflops_per_gpu, FALSE),
  FIELD (NULL, "hardware_tflops_per_gpu", FIELD_DOUBLE, hardware_tflops_per_gpu, FALSE),
  FIELD (NULL, "megatron_tflops_per_gpu", FIELD_DOUBLE, megatron_tflops_per_gpu, FALSE),
  FIELD (NULL, "mfu", FIELD_DOUBLE, mfu, FALSE),
  FIELD (NULL, "hfu", FIELD_DOUBLE, hfu, FALSE),
  FIELD (NULL, "params", FIELD_DOUBLE, params, FALSE),
  FIELD (NULL, "active_params", FIELD_DOUBLE, active_params, FALSE),
  FIELD (NULL, "gpus", FIELD_INT, gpus, FALSE),
  FIELD (NULL, "tp", FIELD_INT, tp, FALSE),
  FIELD (NULL, "pp", FIELD_INT, pp, FALSE),
  FIELD (NULL, "dp", FIELD_INT, dp, FALSE),
  FIELD (NULL, "cp", FIELD_INT, cp, FALSE),
  FIELD (NULL, "ep", FIELD_INT, ep, FALSE),
  FIELD (NULL, "etp", FIELD_INT, etp, FALSE),
  FIELD (NULL, "micro_batch", FIELD_INT, micro_batch, FALSE),
  FIELD (NULL, "global_batch", FIELD_INT, global_batch, FALSE),
  FIELD (NULL, "virtual_stages", FIELD_INT, virtual_stages, FALSE),
  FIELD (NULL, "memory_per_gpu_gib", FIELD_DOUBLE, memory_per_gpu_gib, FALSE),
  FIELD (NULL, "fits_memory", FIELD_BOOL, fits_memory, FALSE),
  FIELD ("memory", "weights_gib", FIELD_BYTES_AS_GIB, memory.weights, FALSE),
  FIELD ("memory", "gradients_gib", FIELD_BYTES_AS_GIB, memory.gradients, FALSE),
  FIELD ("memory", "optimizer_gib", FIELD_BYTES_AS_GIB, memory.optimizer, FALSE),
  FIELD ("memory", "activations_gib", FIELD_BYTES_AS_GIB, memory.activations, FALSE),
  FIELD ("memory", "other_gib", FIELD_BYTES_AS_GIB, memory.other, FALSE),
  FIELD ("memory", "total_gib", FIELD_BYTES_AS_GIB, memory.total, FALSE),
  FIELD ("memory", "capacity_gib", FIELD_BYTES_AS_GIB, memory.capacity, FALSE),
  FIELD ("memory", "host_gib", FIELD_BYTES_AS_GIB, memory.host, FALSE),
  FIELD ("memory", "host_capacity_gib", FIELD_BYTES_AS_GIB, memory.host_capacity, FALSE),
  FIELD ("breakdown_s", "compute", FIELD_DOUBLE, breakdown_s.compute, FALSE),
  FIELD ("breakdown_s", "tp_comm", FIELD_DOUBLE, breakdown_s.tp_comm, FALSE),
  FIELD ("breakdown_s", "ep_comm", FIELD_DOUBLE, breakdown_s.ep_comm, FALSE),
  FIELD ("breakdown_s", "cp_comm", FIELD_DOUBLE, breakdown_s.cp_comm, FALSE),
  FIELD ("breakdown_s", "bubble", FIELD_DOUBLE, breakdown_s.bubble, FALSE),
  FIELD ("breakdown_s", "pp_comm", FIELD_DOUBLE, breakdown_s.pp_comm, FALSE),
  FIELD ("breakdown_s", "dp_comm", FIELD_DOUBLE, breakdown_s.dp_comm, FALSE),
  FIELD ("breakdown_s", "epilogue", FIELD_DOUBLE, breakdown_s.epilogue, FALSE),
  FIELD ("breakdown_s", "optimizer", FIELD_DOUBLE, breakdown_s.optimizer, FALSE),
  FIELD ("breakdown_s", "offload", FIELD_DOUBLE, breakdown_s.offload, FALSE),
  FIELD ("breakdown_s", "host", FIELD_DOUBLE, breakdown_s.host, FALSE),
  FIELD ("breakdown_s", "variability", FIELD_DOUBLE, breakdown_s.variability, FALSE),
  FIELD (NULL, "dp_traffic_gib", FIELD_BYTES_AS_GIB, dp_traffic, FALSE),
  FIELD (NULL, "events", FIELD_U64, events, FALSE),
  FIELD (NULL, "days_to_train", FIELD_DOUBLE, days_to_train, TRUE),
  FIELD (NULL, "cost_usd", FIELD_DOUBLE, cost_usd, TRUE),
  FIELD (NULL, "model", FIELD_TEXT, model, FALSE),
  FIELD (NULL, "topology", FIELD_TEXT, topology, FALSE),
  FIELD (NULL, "framework", FIELD_TEXT, framework, FALSE),
  FIELD (NULL, "schedule", FIELD_NAME, schedule, FALSE),
  FIELD (NULL, "recompute", FIELD_NAME, recompute, FALSE),
  FIELD (NULL, "zero_stage", FIELD_INT, zero_stage, FALSE),
  FIELD (NULL, "zero_offload", FIELD_NAME, offload, FALSE),
  FIELD (NULL, "precision", FIELD_NAME, precision, FALSE),
  FIELD (NULL, "attention", FIELD_NAME, attention, FALSE),
};

#undef FIELD

/* @v in the C locale, whatever the process's locale, with the fewest
 * significant digits that read back as the same double, so that a reader
 * gets exactly what was computed. A number whose shortest form has at
 * most 15 digits is that form under "%.15g" (the double is within half a
 * unit of its 15th digit, and %g drops trailing zeros); 17 always reads
 * back. Returns FALSE, appending nothing, when @v is not finite: JSON has
 * no NaN. */
gboolean
report_append_number (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (v))
    return FALSE;
  /* -0 prints as "-0"; a zero is a zero to every reader. */
  if (v == 0.0)
    v = 0.0;
  for (int digits = 15; digits <= 17; digits++)
    {
      char fmt[8];
      g_snprintf (fmt, sizeof fmt, "%%.%dg", digits);
      g_ascii_formatd (buf, sizeof buf, fmt, v);
      if (g_ascii_strtod (buf, NULL) == v)
        break;
    }
  g_string_append (out, buf);
  return TRUE;
}

/* Appends the value of @f in @r, or @missing when there is none to give
 * (not finite, or a training field without has_training); text as a JSON
 * string, or a CSV cell when @csv. */
static void
append_field_value (GString *out, const SimResult *r, const Field *f,
                    const char *missing, gboolean csv)
{
  const void *p = (const char *) r + f->offset;

  if (f->training_only && !r->has_training)
    {
      g_string_append (out, missing);
      return;
    }
  switch (f->kind)
    {
    case FIELD_DOUBLE:
      if (!report_append_number (out, *(const double *) p))
        g_string_append (out, missing);
      break;
    case FIELD_BYTES_AS_GIB:
      if (!report_append_number (out, *(const double *) p / GIB))
        g_string_append (out, missing);
      break;
    case FIELD_INT:
      g_string_append_printf (out, "%d", *(const int *) p);
      break;
    case FIELD_BOOL:
      g_string_append (out, *(const gboolean *) p ? "true" : "false");
      break;
    case FIELD_U64:
      g_string_append_printf (out, "%" G_GUINT64_FORMAT,
                              (guint64) *(const uint64_t *) p);
      break;
    case FIELD_TEXT:
    case FIELD_NAME:
      {
        const char *text = f->kind == FIELD_TEXT ? (const char *) p
                           : *(const char *const *) p;
        if (text == NULL || *text == '\0')
          g_string_append (out, missing);
        else if (csv)
          report_append_csv_cell (out, text);
        else
          report_append_json_string (out, text);
      }
      break;
    default:
      g_assert_not_reached ();
    }
}

/* ------------------------------------------------------------ JSON, CSV */

/* Whether a spreadsheet would take TEXT, a bare cell, for a formula:
 * text that starts with '=', '+', '-', '@', a tab or a carriage return,
 * and is not a number (OWASP, "CSV Injection"). */
static gboolean
csv_is_formula (const char *text)
{
  /* A number (-12, +0.5, -1.5e-3: units.h's form, written whole) is no
   * formula, and stays a number to a reader. */
  size_t n = units_number_length (text);
  return text[0] != '\0' && strchr ("=+-@\t\r", text[0]) != NULL
         && !(n > 0 && text[n] == '\0');
}

void
report_append_csv_cell (GString *out, const char *text)
{
  gsize n = strlen (text);

  if (text[strcspn (text, ",\"\r\n")] == '\0'
      && (n == 0 || (text[0] != ' ' && text[0] != '#' && text[n - 1] != ' '
                     && !csv_is_formula (text))))
    {
      g_string_append (out, text);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

void
report_append_json_members (GString *out, const SimResult *r,
                            const char *const *skip)
{
  const char *group = NULL;
  gboolean first = TRUE;

  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const Field *f = &fields[i];

      if (f->training_only && !r->has_training)
        continue;
      if (f->group == NULL && skip != NULL
          && g_strv_contains (skip, f->name))
        continue;
      if (g_strcmp0 (f->group, group) != 0)
        {
          if (group != NULL)
            {
              g_string_append_c (out, '}');
              first = FALSE;
            }
          if (f->group != NULL)
            {
              g_string_append_printf (out, "%s\"%s\": {",
                                      first ? "" : ", ", f->group);
              first = TRUE;
            }
          group = f->group;
        }
      g_string_append_printf (out, "%s\"%s\": ", first ? "" : ", ", f->name);
      first = FALSE;
      append_field_value (out, r, f, "null", FALSE);
    }
  if (group != NULL)
    g_string_append_c (out, '}');
}

/* One object on one line, so that a sweep's rows are JSON lines too. */
static void
append_json (GString *out, const SimResult *r)
{
  g_string_append_c (out, '{');
  report_append_json_members (out, r, NULL);
  g_string_append (out, "}\n");
}

/* Whether a CSV cell of field F is left out: a top-level field named in
 * SKIP (a sweep's axis, already a column). */
static gboolean
csv_skips (const Field *f, const char *const *skip)
{
  return f->group == NULL && skip != NULL && g_strv_contains (skip, f->name);
}

void
report_append_csv_header (GString *out, const char *const *skip)
{
  gboolean first = TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      if (csv_skips (&fields[i], skip))
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      if (fields[i].group != NULL)
        g_string_append_printf (out, "%s.", fields[i].group);
      g_string_append (out, fields[i].name);
    }
  g_string_append_c (out, '\n');
}

/* Numbers, true, false and empty cells need no quoting; names do. */
void
report_append_csv_row (GString *out, const SimResult *r,
                       const char *const *skip)
{
  gboolean first = TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      if (csv_skips (&fields[i], skip))
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      append_field_value (out, r, &fields[i], "", TRUE);
    }
  g_string_append_c (out, '\n');
}

/* ------------------------------------------------------------------ table */

#define TABLE_WIDTH 100
const ReportPart report_breakdown_parts[REPORT_BREAKDOWN_PARTS] = {
  { "compute", G_STRUCT_OFFSET (Breakdown, compute) },
  { "TP comm", G_STRUCT_OFFSET (Breakdown, tp_comm) },
  { "EP comm", G_STRUCT_OFFSET (Breakdown, ep_comm) },
  { "CP comm", G_STRUCT_OFFSET (Breakdown, cp_comm) },
  { "bubble", G_STRUCT_OFFSET (Breakdown, bubble) },
  { "PP comm", G_STRUCT_OFFSET (Breakdown, pp_comm) },
  { "DP comm", G_STRUCT_OFFSET (Breakdown, dp_comm) },
  { "epilogue", G_STRUCT_OFFSET (Breakdown, epilogue) },
  { "optimizer", G_STRUCT_OFFSET (Breakdown, optimizer) },
  { "offload", G_STRUCT_OFFSET (Breakdown, offload) },
  { "host-bound", G_STRUCT_OFFSET (Breakdown, host) },
  { "variability", G_STRUCT_OFFSET (Breakdown, variability) },
};

#define TABLE_LABEL "  %-17s"
#define TABLE_INDENT 19  /* the width TABLE_LABEL prints */

char *
report_fmt_num (const char *fmt, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (v))
    return g_strdup ("n/a");
  return g_strdup (g_ascii_formatd (buf, sizeof buf, fabs (v) >= 1e15 ? "%.3g" : fmt, v));
}

/* About three significant digits without an exponent: 0.123, 12.3, 123. */
static char *
fmt_sig3 (double v)
{
  double a = fabs (v);

  return report_fmt_num (a >= 99.95 ? "%.0f" : a >= 9.995 ? "%.1f" : "%.2f", v);
}

/* 97.9k, 1.23M: rates that span many orders of magnitude. */
char *
report_fmt_si (double v)
{
  static const char *const prefixes[] = { "", "k", "M", "G", "T", "P" };
  gsize i = 0;
  g_autofree char *num = NULL;

  while (isfinite (v) && fabs (v) >= 999.5 && i + 1 < G_N_ELEMENTS (prefixes))
    {
      v /= 1000.0;
      i++;
    }
  num = fmt_sig3 (v);
  return g_strconcat (num, prefixes[i], NULL);
}

char *
report_fmt_count (double n)
{
  double scale = n >= 1e12 ? 1e12 : n >= 1e9 ? 1e9 : 1e6;
  g_autofree char *num = report_fmt_num ("%.3g", n / scale);
  return g_strconcat (num, n >= 1e12 ? "T" : n >= 1e9 ? "B" : "M", NULL);
}

/* A duration in s, ms or us, so a 2 ms toy step does not read "0.00 s". */
static char *
fmt_duration (double seconds)
{
  double a = fabs (seconds);
  g_autofree char *num = NULL;

  if (!isfinite (seconds))
    return g_strdup ("n/a");
  if (a >= 1.0 || a == 0.0)
    {
      num = fmt_sig3 (seconds);
      return g_strconcat (num, " s", NULL);
    }
  if (a >= 1e-3)
    {
      num = fmt_sig3 (seconds * 1e3);
      return g_strconcat (num, " ms", NULL);
    }
  num = fmt_sig3 (seconds * 1e6);
  return g_strconcat (num, " us", NULL);
}

/* $1,234,567: whole dollars with thousands separators. */
char *
report_fmt_usd (double usd)
{
  g_autofree char *digits = report_fmt_num ("%.0f", usd);
  const char *p = digits;
  GString *s;
  gsize n;

  if (!isfinite (usd))
    return g_steal_pointer (&digits);
  if (strchr (digits, 'e') != NULL)   /* exponent form: no separators */
    return g_strconcat (usd < 0 ? "-$" : "$", usd < 0 ? digits + 1 : digits, NULL);
  s = g_string_new (NULL);
  if (*p == '-')
    g_string_append_c (s, *p++);
  g_string_append_c (s, '$');
  n = strlen (p);
  for (gsize i = 0; i < n; i++)
    {
      if (i > 0 && (n - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, p[i]);
    }
  return g_string_free (s, FALSE);
}

/* Adds @s (owned) to the items of the row being built. */
static void
take (GPtrArray *items, char *s)
{
  g_ptr_array_add (items, s);
}

/* One labelled row: the items joined by ", ", wrapped to TABLE_WIDTH with
 * continuation lines under the first item. Clears @items for the next row. */
static void
table_row (GString *out, const char *label, GPtrArray *items)
{
  gsize line_start = out->len;

  g_string_append_printf (out, TABLE_LABEL, label);
  for (guint i = 0; i < items->len; i++)
    {
      const char *item = g_ptr_array_index (items, i);
      gsize width = strlen (item) + (i + 1 < items->len ? 1 : 0);

      if (i > 0)
        {
          if (out->len - line_start + 1 + width > TABLE_WIDTH)
            {
              g_string_append_c (out, '\n');
              line_start = out->len;
              g_string_append_printf (out, "%*s", TABLE_INDENT, "");
            }
          else
            g_string_append_c (out, ' ');
        }
      g_string_append (out, item);
      if (i + 1 < items->len)
        g_string_append_c (out, ',');
    }
  g_string_append_c (out, '\n');
  g_ptr_array_set_size (items, 0);
}

/* @prefix, @v to one decimal, @suffix: "weights 4.1". */
static char *
fmt_with (const char *prefix, double v, const char *suffix)
{
  g_autofree char *num = report_fmt_num ("%.1f", v);

  return g_strconcat (prefix, num, suffix, NULL);
}

/* "33.2 %", or "n/a". */
static char *
fmt_percent (double fraction)
{
  g_autofree char *num = NULL;

  if (!isfinite (fraction))
    return g_strdup ("n/a");
  num = report_fmt_num ("%.1f", fraction * 100.0);
  return g_strconcat (num, " %", NULL);
}

/* "compute 26.1 s (81.3 %)": a part of the iteration. */
static char *
fmt_part (const char *name, double seconds, double iteration)
{
  g_autofree char *t = fmt_duration (seconds);
  g_autofree char *pct = fmt_percent (iteration > 0.0 ? seconds / iteration : NAN);

  return g_strdup_printf ("%s %s (%s)", name, t, pct);
}

static void
append_table (GString *out, const SimResult *r, const char *title)
{
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  const MemoryBreakdown *m = &r->memory;
  double capacity_gib = m->capacity / GIB;
  g_autofree char *t = NULL, *sps = NULL, *tps = NULL, *mem = NULL, *cap = NULL;
  g_autofree char *mfu = NULL, *hfu = NULL, *over = NULL;

  /* The title holds names from the input: a control character in one
   * would break the table or drive the terminal (base/text.h). */
  g_string_append (out, "trainsim: ");
  text_append_shown (out, title);
  g_string_append_printf (out, "%s%d GPU%s\n", title != NULL ? ", " : "",
                          r->gpus, r->gpus == 1 ? "" : "s");

  if (r->cp > 1)
    take (items, g_strdup_printf ("tp %d x cp %d x pp %d x dp %d", r->tp,
                                  r->cp, r->pp, r->dp));
  else
    take (items, g_strdup_printf ("tp %d x pp %d x dp %d", r->tp, r->pp,
                                  r->dp));
  /* A mixture of experts' expert groups, as search prints them. */
  if (r->moe)
    take (items, g_strdup_printf ("ep %d etp %d", r->ep, r->etp));
  take (items, g_strdup_printf ("micro-batch %d", r->micro_batch));
  take (items, g_strdup_printf ("global batch %d", r->global_batch));
  take (items, g_strdup_printf ("virtual stages %d", r->virtual_stages));
  table_row (out, "plan", items);

  t = fmt_duration (r->iteration_time_s);
  sps = report_fmt_si (r->samples_per_s);
  tps = report_fmt_si (r->tokens_per_s);
  take (items, g_strdup_printf ("%s (%s samples/s, %s tokens/s)", t, sps, tps));
  table_row (out, "iteration", items);

  /* Megatron's number first: it is the one users compare with their logs. */
  take (items, fmt_with ("", r->megatron_tflops_per_gpu, " megatron"));
  take (items, fmt_with ("", r->model_tflops_per_gpu, " model"));
  take (items, fmt_with ("", r->hardware_tflops_per_gpu, " hardware"));
  table_row (out, "TFLOP/s per GPU", items);

  mfu = fmt_percent (r->mfu);
  hfu = fmt_percent (r->hfu);
  take (items, g_strdup_printf ("%s / %s", mfu, hfu));
  table_row (out, "MFU / HFU", items);

  /* A mixture of experts' active parameters beside its total. */
  g_autofree char *params = report_fmt_count (r->params);
  if (r->active_params < r->params)
    {
      g_autofree char *active = report_fmt_count (r->active_params);
      take (items, g_strdup_printf ("%s, %s active a token", params, active));
    }
  else
    take (items, g_strdup (params));
  table_row (out, "parameters", items);

  mem = report_fmt_num ("%.1f", r->memory_per_gpu_gib);
  cap = report_fmt_num ("%.1f", capacity_gib);
  if (r->fits_memory)
    take (items, g_strdup_printf ("%s GiB of %s GiB (fits)", mem, cap));
  else
    {
      over = report_fmt_num ("%.1f", r->memory_per_gpu_gib - capacity_gib);
      take (items, g_strdup_printf ("%s GiB of %s GiB: *** DOES NOT FIT *** (%s GiB over)",
                                    mem, cap, over));
    }
  table_row (out, "memory per GPU", items);
  take (items, fmt_with ("weights ", m->weights / GIB, ""));
  take (items, fmt_with ("gradients ", m->gradients / GIB, ""));
  take (items, fmt_with ("optimizer ", m->optimizer / GIB, ""));
  take (items, fmt_with ("activations ", m->activations / GIB, ""));
  take (items, fmt_with ("other ", m->other / GIB, " GiB"));
  table_row (out, "", items);
  if (m->host_capacity > 0)
    {
      g_autofree char *host = report_fmt_num ("%.1f", m->host / GIB);
      g_autofree char *host_cap = report_fmt_num ("%.1f", m->host_capacity / GIB);
      take (items, g_strdup_printf ("%s GiB of %s GiB per node (CPU offload%s)",
                                    host, host_cap, m->host <= m->host_capacity
                                    ? "" : ": *** DOES NOT FIT ***"));
      table_row (out, "host memory", items);
    }

  /* Compute always, the other parts when they cost anything: a zero
   * offload or bubble is noise on the line. */
  for (gsize i = 0; i < REPORT_BREAKDOWN_PARTS; i++)
    {
      const ReportPart *part = &report_breakdown_parts[i];
      double seconds = G_STRUCT_MEMBER (double, &r->breakdown_s, part->offset);
      if (i == 0 || seconds != 0.0)
        take (items, fmt_part (part->name, seconds, r->iteration_time_s));
    }
  table_row (out, "breakdown", items);

  if (r->has_training)
    {
      g_autofree char *days = report_fmt_num ("%.1f", r->days_to_train);

      take (items, g_strconcat (days, " days", NULL));
      take (items, report_fmt_usd (r->cost_usd));
      table_row (out, "training", items);
    }

  take (items, g_strdup_printf ("%" G_GUINT64_FORMAT " engine events",
                                (guint64) r->events));
  table_row (out, "events", items);
}

/* ------------------------------------------------------------------- API */

void
report_append (GString *out, const SimResult *r, ReportFormat format,
               const char *title)
{
  g_return_if_fail (out != NULL && r != NULL);
  g_return_if_fail ((int) format >= 0 && format < REPORT_N);

  switch (format)
    {
    case REPORT_TABLE:
      append_table (out, r, title);
      break;
    case REPORT_JSON:
      append_json (out, r);
      break;
    case REPORT_CSV:
      report_append_csv_header (out, NULL);
      report_append_csv_row (out, r, NULL);
      break;
    default:
      g_assert_not_reached ();
    }
}

gboolean
report_same_file (const char *a, const char *b)
{
  struct stat sa, sb;

  return strcmp (a, b) == 0
         || (stat (a, &sa) == 0 && stat (b, &sb) == 0
             && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

gboolean
report_write (const char *path, const GString *contents, GError **error)
{
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (path == NULL || strcmp (path, "-") == 0)
    {
      gsize written = fwrite (contents->str, 1, contents->len, stdout);

      if (written != contents->len || fflush (stdout) != 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                       "Failed to write to standard output: %s",
                       g_strerror (saved_errno));
          return FALSE;
        }
      return TRUE;
    }
  return outfile_write (path, contents->str, contents->len, error);
}
