/* cmd-constants.c: `trainsim constants`: the ledger (src/base/ledger.def),
 * every constant of the models that sets a predicted time or memory, with
 * its value, unit, source and how it was chosen, as a table, CSV or JSON.
 * What a user reads to check a prediction's numbers, and what the README's
 * accuracy section is checked against (tests/ledger.sh). */
#include "cli/cli.h"
#include "base/ledger.h"
#include "output/report.h"
#include <stdio.h>
#include <string.h>

/* A value as the table shows it: 6 significant digits, as typed. */
static void
append_number (GString *out, double v, gboolean exact)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, exact ? "%.17g" : "%g", v));
}

/* A row's value, or a table's values separated by SEP. */
static void
append_values (GString *out, const LedgerEntry *e, const char *sep,
               gboolean exact)
{
  for (int i = 0; i < e->n_values; i++)
    {
      if (i > 0)
        g_string_append (out, sep);
      append_number (out, e->values ? e->values[i] : e->value, exact);
    }
}

/* TEXT after LABEL, folded at spaces to lines of at most 78 columns,
 * each indented by 4. */
static void
append_folded (GString *out, const char *label, const char *text)
{
  gsize col = 4 + strlen (label);
  g_string_append_printf (out, "    %s", label);
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  for (char **w = words; *w; w++)
    {
      gsize n = strlen (*w);
      if (col + 1 + n > 78 && col > 4 + strlen (label))
        {
          g_string_append (out, "\n     ");
          col = 5;
        }
      else if (w != words)
        {
          g_string_append_c (out, ' ');
          col++;
        }
      g_string_append (out, *w);
      col += n;
    }
  g_string_append_c (out, '\n');
}

static void
append_table (GString *out)
{
  int count[LEDGER_KIND_N] = { 0 };
  for (int i = 0; i < LEDGER_N; i++)
    {
      const LedgerEntry *e = &ledger_entries[i];
      count[e->kind]++;
      g_string_append_printf (out, "%s = ", e->name);
      append_values (out, e, ", ", FALSE);
      if (g_strcmp0 (e->unit, "1") != 0)
        g_string_append_printf (out, " %s", e->unit);
      g_string_append_printf (out, "  (%s; %s; %s)\n",
                              ledger_kind_name (e->kind),
                              ledger_affects_name (e->affects), e->module);
      append_folded (out, "", e->what);
      append_folded (out, "source: ", e->source);
      if (e->fitted_to)
        append_folded (out, "fitted to: ", e->fitted_to);
      if (e->sensitivity)
        append_folded (out, "sensitivity: ", e->sensitivity);
    }
  g_string_append_printf (out, "%d constants: %d published, %d measured, %d fitted, "
                          "%d assumed\n", (int) LEDGER_N, count[LEDGER_PUBLISHED],
                          count[LEDGER_MEASURED], count[LEDGER_FITTED],
                          count[LEDGER_ASSUMED]);
}

static void
append_csv (GString *out)
{
  g_string_append (out, "name,value,unit,kind,affects,module,what,source,"
                        "fitted_to,sensitivity\n");
  for (int i = 0; i < LEDGER_N; i++)
    {
      const LedgerEntry *e = &ledger_entries[i];
      g_autoptr (GString) values = g_string_new (NULL);
      append_values (values, e, " ", TRUE);
      const char *cells[] = {
        e->name, values->str, e->unit, ledger_kind_name (e->kind),
        ledger_affects_name (e->affects), e->module, e->what, e->source,
        e->fitted_to ? e->fitted_to : "", e->sensitivity ? e->sensitivity : "",
      };
      for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
        {
          if (c > 0)
            g_string_append_c (out, ',');
          report_append_csv_cell (out, cells[c]);
        }
      g_string_append_c (out, '\n');
    }
}

/* One object a line inside {"constants": [...]}; a table's "value" is an
 * array, a missing source field null. */
static void
append_json (GString *out)
{
  g_string_append (out, "{\"constants\": [\n");
  for (int i = 0; i < LEDGER_N; i++)
    {
      const LedgerEntry *e = &ledger_entries[i];
      const struct { const char *key, *text; } fields[] = {
        { "unit", e->unit }, { "kind", ledger_kind_name (e->kind) },
        { "affects", ledger_affects_name (e->affects) }, { "module", e->module },
        { "what", e->what }, { "source", e->source },
        { "fitted_to", e->fitted_to }, { "sensitivity", e->sensitivity },
      };
      g_string_append (out, "{\"name\": ");
      report_append_json_string (out, e->name);
      g_string_append (out, ", \"value\": ");
      if (e->values)
        g_string_append_c (out, '[');
      append_values (out, e, ", ", TRUE);
      if (e->values)
        g_string_append_c (out, ']');
      for (gsize f = 0; f < G_N_ELEMENTS (fields); f++)
        {
          g_string_append_printf (out, ", \"%s\": ", fields[f].key);
          if (fields[f].text)
            report_append_json_string (out, fields[f].text);
          else
            g_string_append (out, "null");
        }
      g_string_append_printf (out, "}%s\n", i + 1 < LEDGER_N ? "," : "");
    }
  g_string_append (out, "]}\n");
}

int
cli_constants (int argc, char **argv)
{
  g_autofree char *format_name = NULL;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "table (default), csv or json", "FORMAT" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
    "Prints the ledger: every constant of trainsim's models that sets a\n"
    "predicted time or memory, with its value, unit, the file that uses it,\n"
    "its source, and how it was chosen: published (a source's number),\n"
    "measured (a published measurement of a component), fitted (to the data\n"
    "named: a validation file so named has role: calibration) or assumed\n"
    "(nothing measured fixes it; its sensitivity says what +-50 % does).\n"
    "Device, topology and model files carry their own sources.");
  g_option_context_set_description (context,
    "Example: trainsim constants --format csv > constants.csv\n\n"
    "Exit status: 0 success; 2 bad usage.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc != 1)
    {
      cli_printerr ("trainsim constants: takes no file (got '%s')", argv[1]);
      cli_try_help ("constants");
      return 2;
    }
  int format;
  if (!cli_report_format ("constants", format_name, &format))
    return 2;
  g_autoptr (GString) out = g_string_new (NULL);
  if (format == REPORT_CSV)
    append_csv (out);
  else if (format == REPORT_JSON)
    append_json (out);
  else
    append_table (out);
  fwrite (out->str, 1, out->len, stdout);
  return 0;
}
