/* test-output.c: Check suite of the output layer (report.c, trace.c).
 *
 * JSON is checked with a small validator below (no JSON library is a
 * dependency) and with substring assertions on the contract's field names,
 * their order and their values. */
#define _POSIX_C_SOURCE 200809L  /* fork, waitpid, kill */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/outfile.h"
#include "base/text.h"
#include "output/report.h"
#include "output/trace.h"

/* ------------------------------------------------------- a JSON validator */

/* Recursive descent over RFC 8259; each parser advances *p past one value
 * and returns FALSE at the first byte that cannot belong to it. */
static gboolean json_value (const char **p);

static void
json_ws (const char **p)
{
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
    (*p)++;
}

static gboolean
json_string (const char **p)
{
  if (**p != '"')
    return FALSE;
  for ((*p)++; **p != '"'; (*p)++)
    {
      if ((unsigned char) **p < 0x20)
        return FALSE;
      if (**p == '\\')
        {
          (*p)++;
          if (**p == 'u')
            {
              for (int i = 0; i < 4; i++)
                if (!g_ascii_isxdigit (*++(*p)))
                  return FALSE;
            }
          else if (strchr ("\"\\/bfnrt", **p) == NULL || **p == '\0')
            return FALSE;
        }
    }
  (*p)++;
  return TRUE;
}

static gboolean
json_digits (const char **p)
{
  if (!g_ascii_isdigit (**p))
    return FALSE;
  while (g_ascii_isdigit (**p))
    (*p)++;
  return TRUE;
}

static gboolean
json_number (const char **p)
{
  if (**p == '-')
    (*p)++;
  if (**p == '0')
    (*p)++;
  else if (!json_digits (p))
    return FALSE;
  if (**p == '.')
    {
      (*p)++;
      if (!json_digits (p))
        return FALSE;
    }
  if (**p == 'e' || **p == 'E')
    {
      (*p)++;
      if (**p == '+' || **p == '-')
        (*p)++;
      if (!json_digits (p))
        return FALSE;
    }
  return TRUE;
}

static gboolean
json_members (const char **p, char close, gboolean keyed)
{
  (*p)++;
  json_ws (p);
  if (**p == close)
    {
      (*p)++;
      return TRUE;
    }
  for (;;)
    {
      json_ws (p);
      if (keyed)
        {
          if (!json_string (p))
            return FALSE;
          json_ws (p);
          if (**p != ':')
            return FALSE;
          (*p)++;
        }
      if (!json_value (p))
        return FALSE;
      json_ws (p);
      if (**p == close)
        {
          (*p)++;
          return TRUE;
        }
      if (**p != ',')
        return FALSE;
      (*p)++;
    }
}

static gboolean
json_value (const char **p)
{
  json_ws (p);
  switch (**p)
    {
    case '{': return json_members (p, '}', TRUE);
    case '[': return json_members (p, ']', FALSE);
    case '"': return json_string (p);
    case 't': return g_str_has_prefix (*p, "true") ? (*p += 4, TRUE) : FALSE;
    case 'f': return g_str_has_prefix (*p, "false") ? (*p += 5, TRUE) : FALSE;
    case 'n': return g_str_has_prefix (*p, "null") ? (*p += 4, TRUE) : FALSE;
    default: return json_number (p);
    }
}

/* TRUE when @text is exactly one JSON value, surrounded by white space. */
static gboolean
json_valid (const char *text)
{
  const char *p = text;

  if (!json_value (&p))
    return FALSE;
  json_ws (&p);
  return *p == '\0';
}

/* ---------------------------------------------------------------- helpers */

#define GIB 1073741824.0

static int
count_substr (const char *hay, const char *needle)
{
  int n = 0;

  for (const char *p = strstr (hay, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

static int
count_char (const char *s, char c)
{
  int n = 0;

  for (; *s != '\0'; s++)
    n += *s == c;
  return n;
}

/* A plausible gpt3-175b on 1024 A100s, every field distinct and nonzero. */
static SimResult
sample_result (void)
{
  SimResult r = {
    .iteration_time_s = 32.1234567,
    .samples_per_s = 47.8,
    .tokens_per_s = 97894.4,
    .model_tflops_per_gpu = 103.7,
    .hardware_tflops_per_gpu = 138.25,
    .megatron_tflops_per_gpu = 138.2,
    .mfu = 0.3324,
    .hfu = 0.4431,
    .params = 174.56e9, .active_params = 174.56e9,
    .gpus = 1024, .tp = 8, .pp = 16, .dp = 8, .cp = 1, .ep = 1, .etp = 1,
    .micro_batch = 1, .global_batch = 1536, .virtual_stages = 1,
    .memory_per_gpu_gib = 61.25,
    .fits_memory = TRUE,
    .memory = { .weights = 4 * GIB, .gradients = 4.5 * GIB, .optimizer = 24 * GIB,
                .activations = 20.25 * GIB, .other = 8.5 * GIB,
                .total = 61.25 * GIB, .capacity = 80 * GIB },
    .breakdown_s = { .compute = 26.1, .tp_comm = 2.0, .bubble = 3.1, .pp_comm = 0.4,
                     .dp_comm = 0.3, .epilogue = 0.0125, .optimizer = 0.2,
                     .offload = 0.0234567 },
    .events = G_GUINT64_CONSTANT (18446744073709551615),
    .has_training = TRUE,
    .days_to_train = 34.2,
    .cost_usd = 1234567.0,
    .model = "gpt3-175b", .topology = "a, \"quoted\" cluster",
    .framework = "megatron-lm@3", .schedule = "1f1b", .recompute = "full",
    .zero_stage = 1, .offload = "none", .precision = "bf16",
    .attention = "flash2",
  };

  return r;
}

static char *
render (const SimResult *r, ReportFormat format)
{
  GString *s = g_string_new (NULL);

  report_append (s, r, format, "gpt3-175b on selene");
  return g_string_free (s, FALSE);
}

/* The contract's JSON keys, in order (trainsim(1), OUTPUT). */
static const char *const json_keys[] = {
  "\"iteration_time_s\": ", "\"samples_per_s\": ", "\"tokens_per_s\": ",
  "\"model_tflops_per_gpu\": ", "\"hardware_tflops_per_gpu\": ",
  "\"megatron_tflops_per_gpu\": ", "\"mfu\": ", "\"hfu\": ", "\"params\": ",
  "\"active_params\": ", "\"gpus\": ",
  "\"tp\": ", "\"pp\": ", "\"dp\": ", "\"cp\": ", "\"ep\": ", "\"etp\": ",
  "\"micro_batch\": ", "\"global_batch\": ",
  "\"virtual_stages\": ", "\"memory_per_gpu_gib\": ", "\"fits_memory\": ",
  "\"memory\": {", "\"weights_gib\": ", "\"gradients_gib\": ", "\"optimizer_gib\": ",
  "\"activations_gib\": ", "\"other_gib\": ", "\"total_gib\": ", "\"capacity_gib\": ",
  "\"host_gib\": ", "\"host_capacity_gib\": ", "\"breakdown_s\": {", "\"compute\": ", "\"tp_comm\": ", "\"ep_comm\": ", "\"cp_comm\": ",
  "\"bubble\": ",
  "\"pp_comm\": ", "\"dp_comm\": ", "\"epilogue\": ", "\"optimizer\": ",
  "\"offload\": ",
  "\"host\": ", "\"variability\": ", "\"dp_traffic_gib\": ", "\"events\": ", "\"days_to_train\": ", "\"cost_usd\": ",
  "\"model\": ", "\"topology\": ", "\"framework\": ", "\"schedule\": ",
  "\"recompute\": ", "\"zero_stage\": ", "\"zero_offload\": ", "\"precision\": ",
  "\"attention\": ",
};

/* ---------------------------------------------------------------- formats */

START_TEST (test_format_parse)
{
  ck_assert_int_eq (report_format_parse ("table"), REPORT_TABLE);
  ck_assert_int_eq (report_format_parse ("json"), REPORT_JSON);
  ck_assert_int_eq (report_format_parse ("csv"), REPORT_CSV);
  ck_assert_int_eq (report_format_parse ("JSON"), -1);
  ck_assert_int_eq (report_format_parse ("yaml"), -1);
  ck_assert_int_eq (report_format_parse (""), -1);
  ck_assert_int_eq (report_format_parse (NULL), -1);
  ck_assert_str_eq (report_format_names (), "table, json or csv");
}
END_TEST

/* ------------------------------------------------------------------- JSON */

START_TEST (test_json_fields_in_order)
{
  SimResult r = sample_result ();
  g_autofree char *json = render (&r, REPORT_JSON);
  const char *prev = json;

  ck_assert_msg (json_valid (json), "invalid JSON: %s", json);
  ck_assert_msg (g_str_has_suffix (json, "}\n"), "no final newline: %s", json);
  ck_assert_int_eq (count_char (json, '\n'), 1);
  for (gsize i = 0; i < G_N_ELEMENTS (json_keys); i++)
    {
      const char *at = strstr (json, json_keys[i]);

      ck_assert_msg (count_substr (json, json_keys[i]) == 1,
                     "%s appears %d times in %s", json_keys[i],
                     count_substr (json, json_keys[i]), json);
      ck_assert_msg (at >= prev, "%s out of order in %s", json_keys[i], json);
      prev = at;
    }
  /* No other key: every "key": of the document is in the list. */
  ck_assert_int_eq (count_substr (json, "\": "), (int) G_N_ELEMENTS (json_keys));
}
END_TEST

START_TEST (test_json_values)
{
  SimResult r = sample_result ();
  g_autofree char *json = render (&r, REPORT_JSON);
  static const char *const expected[] = {
    "{\"iteration_time_s\": 32.1234567, ",
    "\"tokens_per_s\": 97894.4, ",
    "\"mfu\": 0.3324, ",
    "\"params\": 174560000000, \"active_params\": 174560000000, ",
    "\"gpus\": 1024, \"tp\": 8, \"pp\": 16, \"dp\": 8, \"cp\": 1, \"ep\": 1, \"etp\": 1, "
    "\"micro_batch\": 1, "
    "\"global_batch\": 1536, \"virtual_stages\": 1, ",
    "\"fits_memory\": true, ",
    "\"memory\": {\"weights_gib\": 4, \"gradients_gib\": 4.5, \"optimizer_gib\": 24, "
    "\"activations_gib\": 20.25, \"other_gib\": 8.5, \"total_gib\": 61.25, "
    "\"capacity_gib\": 80, \"host_gib\": 0, \"host_capacity_gib\": 0}, ",
    "\"breakdown_s\": {\"compute\": 26.1, ",
    "\"offload\": 0.0234567, \"host\": 0, \"variability\": 0}, ",
    "\"events\": 18446744073709551615, ",
    "\"days_to_train\": 34.2, \"cost_usd\": 1234567, ",
    "\"model\": \"gpt3-175b\", \"topology\": \"a, \\\"quoted\\\" cluster\", "
    "\"framework\": \"megatron-lm@3\", \"schedule\": \"1f1b\", \"recompute\": \"full\", "
    "\"zero_stage\": 1, \"zero_offload\": \"none\", \"precision\": \"bf16\", "
    "\"attention\": \"flash2\"}\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (expected); i++)
    ck_assert_msg (strstr (json, expected[i]) != NULL, "missing [%s] in %s",
                   expected[i], json);

  r.fits_memory = FALSE;
  g_free (json);
  json = render (&r, REPORT_JSON);
  ck_assert_msg (strstr (json, "\"fits_memory\": false, ") != NULL, "%s", json);
}
END_TEST

START_TEST (test_json_training_toggle)
{
  SimResult r = sample_result ();
  g_autofree char *json = NULL;

  r.has_training = FALSE;
  json = render (&r, REPORT_JSON);
  ck_assert_msg (json_valid (json), "invalid JSON: %s", json);
  ck_assert_msg (strstr (json, "days_to_train") == NULL, "%s", json);
  ck_assert_msg (strstr (json, "cost_usd") == NULL, "%s", json);
  ck_assert_msg (strstr (json, "\"events\": 18446744073709551615, \"model\"") != NULL,
                 "%s", json);
  ck_assert_int_eq (count_substr (json, "\": "), (int) G_N_ELEMENTS (json_keys) - 2);
}
END_TEST

START_TEST (test_json_non_finite_is_null)
{
  SimResult r = sample_result ();
  g_autofree char *json = NULL;

  r.iteration_time_s = NAN;
  r.mfu = INFINITY;
  r.hfu = -INFINITY;
  r.memory.weights = NAN;
  r.breakdown_s.offload = NAN;
  r.cost_usd = INFINITY;
  json = render (&r, REPORT_JSON);
  ck_assert_msg (json_valid (json), "invalid JSON: %s", json);
  ck_assert_msg (strstr (json, "{\"iteration_time_s\": null, ") != NULL, "%s", json);
  ck_assert_msg (strstr (json, "\"mfu\": null, \"hfu\": null, ") != NULL, "%s", json);
  ck_assert_msg (strstr (json, "\"weights_gib\": null, ") != NULL, "%s", json);
  ck_assert_msg (strstr (json, "\"offload\": null, ") != NULL, "%s", json);
  ck_assert_msg (strstr (json, "\"cost_usd\": null, ") != NULL, "%s", json);
  ck_assert_msg (strstr (json, "nan") == NULL && strstr (json, "inf") == NULL,
                 "%s", json);
}
END_TEST

/* A negative zero is written "0", and exponents stay valid JSON numbers. */
START_TEST (test_json_number_edges)
{
  SimResult r = sample_result ();
  g_autofree char *json = NULL;

  r.iteration_time_s = -0.0;
  r.samples_per_s = 1.5e-12;
  r.tokens_per_s = 3.25e15;
  json = render (&r, REPORT_JSON);
  ck_assert_msg (json_valid (json), "invalid JSON: %s", json);
  ck_assert_msg (strstr (json, "{\"iteration_time_s\": 0, \"samples_per_s\": 1.5e-12, "
                         "\"tokens_per_s\": 3.25e+15, ") != NULL, "%s", json);
}
END_TEST

/* -------------------------------------------------------------------- CSV */

START_TEST (test_csv_columns)
{
  SimResult r = sample_result ();
  g_autoptr (GString) header = g_string_new (NULL);
  g_autoptr (GString) row = g_string_new (NULL);
  g_autoptr (GString) bare = g_string_new (NULL);
  g_autofree char *both = render (&r, REPORT_CSV);
  g_autofree char *joined = NULL;
  g_auto (GStrv) columns = NULL;

  report_append_csv_header (header, NULL);
  report_append_csv_row (row, &r, NULL);
  r.has_training = FALSE;
  r.mfu = NAN;
  report_append_csv_row (bare, &r, NULL);

  ck_assert_msg (g_str_has_prefix (header->str,
                   "iteration_time_s,samples_per_s,tokens_per_s,"), "%s", header->str);
  ck_assert_msg (strstr (header->str, ",fits_memory,memory.weights_gib,") != NULL,
                 "%s", header->str);
  ck_assert_msg (strstr (header->str, ",memory.host_capacity_gib,breakdown_s.compute,") != NULL,
                 "%s", header->str);
  ck_assert_msg (g_str_has_suffix (header->str,
                   ",breakdown_s.offload,breakdown_s.host,breakdown_s.variability,dp_traffic_gib,events,days_to_train,cost_usd,"
                   "model,topology,framework,schedule,recompute,zero_stage,zero_offload,precision,"
                   "attention\n"), "%s", header->str);
  ck_assert_int_eq (count_char (header->str, '\n'), 1);
  ck_assert_int_eq (count_char (row->str, '\n'), 1);

  /* A column per JSON key but the two objects, and as many cells in
   * every row. */
  columns = g_strsplit (header->str, ",", -1);
  ck_assert_int_eq (g_strv_length (columns), G_N_ELEMENTS (json_keys) - 2);
  ck_assert_msg (g_str_has_prefix (row->str, "32.1234567,47.8,97894.4,"), "%s", row->str);
  ck_assert_msg (strstr (row->str, ",true,4,4.5,24,") != NULL, "%s", row->str);
  /* Names are CSV cells, quoted when they hold a comma or a quote. */
  static const char *const tail = ",gpt3-175b,\"a, \"\"quoted\"\" cluster\",megatron-lm@3,1f1b,"
                                  "full,1,none,bf16,flash2\n";
  g_autofree char *row_tail = g_strconcat (",18446744073709551615,34.2,1234567", tail, NULL);
  g_autofree char *bare_tail = g_strconcat (",18446744073709551615,,", tail, NULL);
  ck_assert_msg (g_str_has_suffix (row->str, row_tail), "%s", row->str);
  ck_assert_msg (g_str_has_suffix (bare->str, bare_tail), "%s", bare->str);
  ck_assert_msg (strstr (bare->str, ",138.2,,0.4431,") != NULL, "%s", bare->str);

  /* report_append writes the header, then the row. */
  joined = g_strconcat (header->str, row->str, NULL);
  ck_assert_str_eq (both, joined);
}
END_TEST

/* A cell is quoted exactly where a reader would misread it bare. */
START_TEST (test_csv_cell)
{
  static const char *const cases[][2] = {
    { "plain", "plain" }, { "", "" }, { "a#b", "a#b" },
    { "a,b", "\"a,b\"" }, { "say \"hi\"", "\"say \"\"hi\"\"\"" },
    { "two\nlines", "\"two\nlines\"" }, { " lead", "\" lead\"" },
    { "trail ", "\"trail \"" },
    /* A row starting with '#' reads as a comment (sweep's first line). */
    { "#x", "\"#x\"" },
    /* Text a spreadsheet would take for a formula (OWASP, CSV
     * Injection) is quoted, as is; a number stays bare. */
    { "=1+2", "\"=1+2\"" }, { "+cmd", "\"+cmd\"" }, { "-x", "\"-x\"" },
    { "@SUM(A1)", "\"@SUM(A1)\"" }, { "\tx", "\"\tx\"" },
    { "\r=x", "\"\r=x\"" }, { "-2+3+cmd|' /C calc'!A0", "\"-2+3+cmd|' /C calc'!A0\"" },
    { "--set a=1", "\"--set a=1\"" }, { "-", "\"-\"" }, { "-inf", "\"-inf\"" },
    { "-1e", "\"-1e\"" }, { "-0x10", "\"-0x10\"" },
    { "-3", "-3" }, { "+5", "+5" }, { "-0.25", "-0.25" }, { "-.5", "-.5" },
    { "-1.5e-3", "-1.5e-3" }, { "+2E+10", "+2E+10" }, { "a=b", "a=b" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      report_append_csv_cell (out, cases[i][0]);
      ck_assert_msg (strcmp (out->str, cases[i][1]) == 0, "cell [%s]: [%s], expected [%s]",
                     cases[i][0], out->str, cases[i][1]);
    }
}
END_TEST

/* What the tables and messages show of the input's text (base/text.h):
 * control characters and invalid UTF-8 as '?', one each; the rest as
 * it is. */
START_TEST (test_text_shown)
{
  static const char *const cases[][3] = {
    /* text, shown as one line, shown keeping line breaks */
    { "plain", "plain", "plain" }, { "", "", "" },
    { "a\033[31mb\007", "a?[31mb?", "a?[31mb?" },
    { "two\nlines", "two?lines", "two\nlines" },
    { "cr\r\ttab", "cr??tab", "cr??tab" }, { "\x01\x1f\x7f", "???", "???" },
    /* C1 (U+0080-U+009F, C2 80-9F) is one '?'; U+00A0 on is text. */
    { "x\xc2\x9b" "31m", "x?31m", "x?31m" }, { "\xc2\x80\xc2\x9f", "??", "??" },
    { "caf\xc3\xa9 \xc2\xa0\xe2\x80\xa6", "caf\xc3\xa9 \xc2\xa0\xe2\x80\xa6",
      "caf\xc3\xa9 \xc2\xa0\xe2\x80\xa6" },
    /* Invalid UTF-8: a '?' a byte (a lone continuation byte, a cut
     * sequence, an overlong '/', a surrogate, a byte never in UTF-8). */
    { "a\x80z", "a?z", "a?z" }, { "\xc3", "?", "?" }, { "\xe2\x80z", "??z", "??z" },
    { "\xc0\xaf", "??", "??" }, { "\xed\xa0\x80", "???", "???" }, { "\xff", "?", "?" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *line = text_shown (cases[i][0]);
      g_autofree char *lines = text_shown_lines (cases[i][0]);
      g_autoptr (GString) appended = g_string_new (">");
      text_append_shown (appended, cases[i][0]);
      ck_assert_msg (strcmp (line, cases[i][1]) == 0, "case %" G_GSIZE_FORMAT ": [%s]",
                     i, line);
      ck_assert_msg (strcmp (lines, cases[i][2]) == 0, "case %" G_GSIZE_FORMAT ": [%s]",
                     i, lines);
      ck_assert_msg (strcmp (appended->str + 1, cases[i][1]) == 0, "case %" G_GSIZE_FORMAT,
                     i);
      ck_assert (g_utf8_validate (line, -1, NULL));
    }
  /* NULL is nothing. */
  g_autofree char *none = text_shown (NULL);
  ck_assert_str_eq (none, "");
}
END_TEST

/* ------------------------------------------------------------------ table */

static void
assert_width (const char *table)
{
  g_auto (GStrv) lines = g_strsplit (table, "\n", -1);

  for (int i = 0; lines[i] != NULL; i++)
    ck_assert_msg (g_utf8_strlen (lines[i], -1) <= 100, "line of %ld columns: [%s]",
                   (long) g_utf8_strlen (lines[i], -1), lines[i]);
}

START_TEST (test_table)
{
  SimResult r = sample_result ();
  g_autofree char *table = render (&r, REPORT_TABLE);
  static const char *const expected[] = {
    "trainsim: gpt3-175b on selene, 1024 GPUs\n",
    "  plan             tp 8 x pp 16 x dp 8, micro-batch 1, global batch 1536, virtual stages 1\n",
    "  iteration        32.1 s (47.8 samples/s, 97.9k tokens/s)\n",
    "  TFLOP/s per GPU  138.2 megatron, 103.7 model, 138.2 hardware\n",
    "  MFU / HFU        33.2 % / 44.3 %\n",
    "  parameters       175B\n",
    "  memory per GPU   61.2 GiB of 80.0 GiB (fits)\n",
    "weights 4.0, gradients 4.5, optimizer 24.0, activations 20.2, other 8.5 GiB\n",
    "  breakdown        compute 26.1 s (81.2 %), TP comm 2.00 s (6.2 %), bubble 3.10 s (9.7 %),",
    "DP comm 300 ms (0.9 %), epilogue 12.5 ms (0.0 %),\n",
    "offload 23.5 ms (0.1 %)\n",
    "  training         34.2 days, $1,234,567\n",
    "  events           18446744073709551615 engine events\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (expected); i++)
    ck_assert_msg (strstr (table, expected[i]) != NULL, "missing [%s] in\n%s",
                   expected[i], table);
  ck_assert_msg (strstr (table, "DOES NOT FIT") == NULL, "%s", table);
  assert_width (table);
  /* A mixture of experts: its active parameters beside the total, and
   * its expert groups in the plan. */
  g_free (table);
  r.params = 46.57e9;
  r.active_params = 12.75e9;
  r.moe = TRUE;
  r.ep = 8;
  r.etp = 2;
  table = render (&r, REPORT_TABLE);
  ck_assert_msg (strstr (table, "  parameters       46.6B, 12.8B active a token\n")
                 != NULL, "%s", table);
  ck_assert_msg (strstr (table, "  plan             tp 8 x pp 16 x dp 8, ep 8 etp 2, "
                         "micro-batch 1,") != NULL, "%s", table);
}
END_TEST

START_TEST (test_table_no_fit)
{
  SimResult r = sample_result ();
  g_autofree char *table = NULL;

  r.fits_memory = FALSE;
  r.memory_per_gpu_gib = 95.5;
  r.has_training = FALSE;
  r.breakdown_s.bubble = 0.0;
  r.iteration_time_s = NAN;
  table = render (&r, REPORT_TABLE);
  ck_assert_msg (strstr (table, "95.5 GiB of 80.0 GiB: *** DOES NOT FIT *** (15.5 GiB over)")
                 != NULL, "%s", table);
  ck_assert_msg (strstr (table, "training") == NULL, "%s", table);
  ck_assert_msg (strstr (table, "bubble") == NULL, "zero part shown:\n%s", table);
  ck_assert_msg (strstr (table, "iteration        n/a (") != NULL, "%s", table);
  ck_assert_msg (strstr (table, "compute 26.1 s (n/a)") != NULL, "%s", table);
  assert_width (table);
}
END_TEST

/* Long items wrap under the first one and never pass column 100. */
START_TEST (test_table_wraps)
{
  SimResult r = sample_result ();
  GString *s = g_string_new (NULL);
  g_autofree char *table = NULL;

  r.iteration_time_s = 1e-4;
  r.breakdown_s = (Breakdown) { 1e-5, 2e-5, 3e-5, 4e-5, 5e-5, 6e-5, 7e-5 };
  r.gpus = 1;
  r.tokens_per_s = 2.5e9;
  r.cost_usd = -1234.4;
  report_append (s, &r, REPORT_TABLE, NULL);
  table = g_string_free (s, FALSE);
  ck_assert_msg (g_str_has_prefix (table, "trainsim: 1 GPU\n"), "%s", table);
  ck_assert_msg (strstr (table, "iteration        100 us (") != NULL, "%s", table);
  ck_assert_msg (strstr (table, "2.50G tokens/s") != NULL, "%s", table);
  ck_assert_msg (strstr (table, "compute 10.0 us (10.0 %), TP comm 20.0 us (20.0 %),") != NULL,
                 "%s", table);
  ck_assert_msg (strstr (table, ",\n                   ") != NULL, "no wrap:\n%s", table);
  ck_assert_msg (strstr (table, "-$1,234\n") != NULL, "%s", table);
  assert_width (table);
}
END_TEST

/* ------------------------------------------------------------ determinism */

START_TEST (test_deterministic)
{
  SimResult r = sample_result ();

  for (int f = 0; f < REPORT_N; f++)
    {
      g_autofree char *a = render (&r, f);
      g_autofree char *b = render (&r, f);
      g_autofree char *c = NULL;

      ck_assert_str_eq (a, b);
      /* A locale with a decimal comma must not change a byte. */
      if (setlocale (LC_NUMERIC, "de_DE.UTF-8") != NULL
          || setlocale (LC_NUMERIC, "fr_FR.UTF-8") != NULL)
        {
          c = render (&r, f);
          setlocale (LC_NUMERIC, "C");
          ck_assert_str_eq (a, c);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ trace */

static const char *const stream_names[] = { "compute", "tp", "pp send", NULL };

static const TraceSpan sample_spans[] = {
  { "fwd \"qkv\"\\\n", "compute", 1, 0, 0, 0, 1500000 },
  { "all-reduce", "tp", 0, 1, 3, 2000000, 2000001, 8 },
  { "step", NULL, 0, 0, -1, 7, 1000007, 2 },
  { "odd", "pp", 0, 3, 2, 5000000000, 5012345678 },
};

static char *
render_trace (const TraceSpan *spans, gsize n)
{
  GString *s = g_string_new (NULL);

  trace_append (s, spans, n, stream_names, 3);
  return g_string_free (s, FALSE);
}

START_TEST (test_trace_events)
{
  g_autofree char *doc = render_trace (sample_spans, G_N_ELEMENTS (sample_spans));
  static const char *const expected[] = {
    "{\"traceEvents\": [\n",
    "{\"name\": \"fwd \\\"qkv\\\"\\\\\\n\", \"cat\": \"compute\", \"ph\": \"X\", "
    "\"ts\": 0, \"dur\": 1.5, \"pid\": 1, \"tid\": 0, \"args\": {\"micro_batch\": 0}},\n",
    "{\"name\": \"all-reduce\", \"cat\": \"tp\", \"ph\": \"X\", \"ts\": 2, "
    "\"dur\": 0.000001, \"pid\": 0, \"tid\": 1, \"args\": {\"micro_batch\": 3, "
    "\"group\": 8}},\n",
    "{\"name\": \"step\", \"ph\": \"X\", \"ts\": 0.000007, \"dur\": 1, "
    "\"pid\": 0, \"tid\": 0, \"args\": {\"group\": 2}},\n",
    "\"ts\": 5000, \"dur\": 12.345678, \"pid\": 0, \"tid\": 3, ",
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, "
    "\"args\": {\"name\": \"rank 0\"}},\n",
    "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
    "\"args\": {\"name\": \"rank 1\"}},\n",
    "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
    "\"args\": {\"sort_index\": 1}},\n",
    "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 1, "
    "\"args\": {\"name\": \"tp\"}},\n",
    "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, \"tid\": 1, "
    "\"args\": {\"sort_index\": 1}},\n",
    "\"tid\": 3, \"args\": {\"name\": \"stream 3\"}},\n",
    "\"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"compute\"}},\n",
  };

  ck_assert_msg (json_valid (doc), "invalid JSON:\n%s", doc);
  for (gsize i = 0; i < G_N_ELEMENTS (expected); i++)
    ck_assert_msg (strstr (doc, expected[i]) != NULL, "missing [%s] in\n%s",
                   expected[i], doc);
  ck_assert_int_eq (count_substr (doc, "\"ph\": \"X\""), G_N_ELEMENTS (sample_spans));
  /* Two ranks; rank 0 uses streams 0, 1 and 3, rank 1 stream 0. */
  ck_assert_int_eq (count_substr (doc, "\"process_name\""), 2);
  ck_assert_int_eq (count_substr (doc, "\"process_sort_index\""), 2);
  ck_assert_int_eq (count_substr (doc, "\"thread_name\""), 4);
  ck_assert_int_eq (count_substr (doc, "\"thread_sort_index\""), 4);
  ck_assert_int_eq (count_substr (doc, "\"micro_batch\""), 3);
  ck_assert_int_eq (count_substr (doc, "\"group\""), 2);
  /* Ranks in order: rank 0's name before rank 1's. */
  ck_assert_msg (strstr (doc, "\"rank 0\"") < strstr (doc, "\"rank 1\""), "%s", doc);
  ck_assert_msg (g_str_has_suffix (doc, "}\n]}\n"), "%s", doc);
}
END_TEST

START_TEST (test_trace_empty_and_deterministic)
{
  g_autofree char *empty = render_trace (NULL, 0);
  g_autofree char *a = render_trace (sample_spans, G_N_ELEMENTS (sample_spans));
  g_autofree char *b = render_trace (sample_spans, G_N_ELEMENTS (sample_spans));

  ck_assert_str_eq (empty, "{\"traceEvents\": [\n]}\n");
  ck_assert (json_valid (empty));
  ck_assert_str_eq (a, b);
}
END_TEST

/* Invalid UTF-8 in a name is repaired, and control bytes escaped. */
START_TEST (test_trace_escapes)
{
  const TraceSpan spans[] = { { "bad \xff\x01 name\t", "c", 0, 0, -1, 0, 1 } };
  g_autofree char *doc = render_trace (spans, 1);

  ck_assert_msg (json_valid (doc), "invalid JSON:\n%s", doc);
  ck_assert_msg (g_utf8_validate (doc, -1, NULL), "invalid UTF-8:\n%s", doc);
  ck_assert_msg (strstr (doc, "\"name\": \"bad \xef\xbf\xbd\\u0001 name\\t\"") != NULL,
                 "%s", doc);
}
END_TEST

/* ------------------------------------------------------------------ files */

/* The names in @dir, sorted and joined by spaces. */
static char *
list_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  const char *name;

  ck_assert_ptr_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  g_ptr_array_add (names, NULL);
  {
    g_auto (GStrv) v = (GStrv) g_ptr_array_free (g_steal_pointer (&names), FALSE);
    return g_strjoinv (" ", v);
  }
}

static char *tmpdir;

static void
setup_tmpdir (void)
{
  GError *error = NULL;

  tmpdir = g_dir_make_tmp ("test-output-XXXXXX", &error);
  ck_assert_msg (tmpdir != NULL, "%s", error != NULL ? error->message : "");
}

static void
teardown_tmpdir (void)
{
  g_autoptr (GDir) d = g_dir_open (tmpdir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmpdir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
}

START_TEST (test_report_write)
{
  SimResult r = sample_result ();
  g_autoptr (GString) s = g_string_new (NULL);
  g_autofree char *path = g_build_filename (tmpdir, "out.json", NULL);
  g_autofree char *read = NULL;
  g_autofree char *names = NULL;
  GError *error = NULL;

  report_append (s, &r, REPORT_JSON, NULL);
  ck_assert_msg (report_write (path, s, &error), "%s", error ? error->message : "");
  ck_assert (g_file_get_contents (path, &read, NULL, NULL));
  ck_assert_str_eq (read, s->str);
  /* Overwriting replaces the file and leaves no temporary beside it. */
  g_string_assign (s, "second\n");
  ck_assert (report_write (path, s, NULL));
  g_clear_pointer (&read, g_free);
  ck_assert (g_file_get_contents (path, &read, NULL, NULL));
  ck_assert_str_eq (read, "second\n");
  names = list_dir (tmpdir);
  ck_assert_str_eq (names, "out.json");
}
END_TEST

START_TEST (test_write_missing_dir)
{
  g_autoptr (GString) s = g_string_new ("x\n");
  g_autofree char *path = g_build_filename (tmpdir, "no-such-dir", "out.csv", NULL);
  GError *error = NULL;

  ck_assert (!report_write (path, s, &error));
  ck_assert_ptr_nonnull (error);
  ck_assert_msg (error->domain == G_FILE_ERROR, "domain %s",
                 g_quark_to_string (error->domain));
  ck_assert_msg (strstr (error->message, "no-such-dir") != NULL, "%s", error->message);
  g_clear_error (&error);

  ck_assert (!trace_write (path, sample_spans, 1, stream_names, 3, &error));
  ck_assert_ptr_nonnull (error);
  ck_assert (error->domain == G_FILE_ERROR);
  g_clear_error (&error);
}
END_TEST

START_TEST (test_trace_write)
{
  g_autofree char *path = g_build_filename (tmpdir, "step.json", NULL);
  g_autofree char *read = NULL;
  g_autofree char *expected = render_trace (sample_spans, G_N_ELEMENTS (sample_spans));
  g_autofree char *names = NULL;
  GError *error = NULL;

  ck_assert_msg (trace_write (path, sample_spans, G_N_ELEMENTS (sample_spans),
                              stream_names, 3, &error),
                 "%s", error ? error->message : "");
  ck_assert (g_file_get_contents (path, &read, NULL, NULL));
  ck_assert_str_eq (read, expected);
  names = list_dir (tmpdir);
  ck_assert_str_eq (names, "step.json");
}
END_TEST

/* ------------------------------------------------------------------ suite */

/* A temporary file registered with outfile is gone when a signal ends
 * the process, and the signal still ends it as it would have. */
START_TEST (test_outfile_signal_removes_temps)
{
  g_autofree char *dir = g_dir_make_tmp ("trainsim-outfile-XXXXXX", NULL);
  g_autofree char *tmp = g_build_filename (dir, ".report.XXXXXX", NULL);
  ck_assert (g_file_set_contents (tmp, "half", -1, NULL));
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      outfile_install_signal_handlers ();
      outfile_temp_register (tmp);
      raise (SIGTERM);
      _exit (0);                /* not reached */
    }
  int status = 0;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGTERM);
  ck_assert_msg (!g_file_test (tmp, G_FILE_TEST_EXISTS), "%s left behind", tmp);
  /* Unregistered, it stays (outfile renamed or removed it itself). */
  ck_assert (g_file_set_contents (tmp, "whole", -1, NULL));
  pid = fork ();
  if (pid == 0)
    {
      outfile_install_signal_handlers ();
      outfile_temp_register (tmp);
      outfile_temp_unregister (tmp);
      raise (SIGTERM);
      _exit (0);
    }
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (g_file_test (tmp, G_FILE_TEST_EXISTS));
  g_unlink (tmp);
  g_rmdir (dir);
}
END_TEST

static Suite *
output_suite (void)
{
  Suite *s = suite_create ("output");
  TCase *tc;

  tc = tcase_create ("report");
  tcase_add_test (tc, test_format_parse);
  tcase_add_test (tc, test_outfile_signal_removes_temps);
  tcase_add_test (tc, test_json_fields_in_order);
  tcase_add_test (tc, test_json_values);
  tcase_add_test (tc, test_json_training_toggle);
  tcase_add_test (tc, test_json_non_finite_is_null);
  tcase_add_test (tc, test_json_number_edges);
  tcase_add_test (tc, test_csv_columns);
  tcase_add_test (tc, test_text_shown);
  tcase_add_test (tc, test_csv_cell);
  tcase_add_test (tc, test_table);
  tcase_add_test (tc, test_table_no_fit);
  tcase_add_test (tc, test_table_wraps);
  tcase_add_test (tc, test_deterministic);
  suite_add_tcase (s, tc);

  tc = tcase_create ("trace");
  tcase_add_test (tc, test_trace_events);
  tcase_add_test (tc, test_trace_empty_and_deterministic);
  tcase_add_test (tc, test_trace_escapes);
  suite_add_tcase (s, tc);

  tc = tcase_create ("files");
  tcase_add_checked_fixture (tc, setup_tmpdir, teardown_tmpdir);
  tcase_add_test (tc, test_report_write);
  tcase_add_test (tc, test_write_missing_dir);
  tcase_add_test (tc, test_trace_write);
  suite_add_tcase (s, tc);

  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (output_suite ());
  int failed;

  srunner_run_all (sr, CK_NORMAL);
  failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
