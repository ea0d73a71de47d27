/* cmd-search.c: `trainsim search`: the fastest plans for a model, a GPU
 * count and a topology (the walk is sweep/plansearch.h's), printed with
 * their breakdowns and what sets each apart from the next. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/text.h"
#include "config/config.h"
#include "config/framework.h"
#include "output/report.h"
#include "sweep/plansearch.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Why a plan beats the next one: the breakdown parts that differ most. */
static void
append_why (GString *out, const PlanCandidate *a, const PlanCandidate *b)
{
  g_string_append (out, "      vs the next:");
  int shown = 0;
  for (guint i = 0; i < REPORT_BREAKDOWN_PARTS; i++)
    {
      double x = G_STRUCT_MEMBER (double, &a->result.breakdown_s,
                                  report_breakdown_parts[i].offset);
      double y = G_STRUCT_MEMBER (double, &b->result.breakdown_s,
                                  report_breakdown_parts[i].offset);
      /* Parts within 1 % of the iteration are noise for this purpose. */
      if (fabs (x - y) < 0.01 * b->result.iteration_time_s)
        continue;
      g_string_append_printf (out, "%s %s %+.3g s", shown++ ? "," : "",
                              report_breakdown_parts[i].name, x - y);
    }
  if (shown == 0)
    g_string_append (out, " the same breakdown within 1 %");
  g_string_append_c (out, '\n');
}

/* The ranked plans as a table: each plan's time, model TFLOP/s and MFU
 * first, Megatron's eq. 3 TFLOP/s labelled as such, memory and the
 * headroom left, the breakdown and what sets it apart from the next. */
static void
append_table (GString *out, const GArray *cands, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      const PlanCandidate *c = &g_array_index (cands, PlanCandidate, i);
      const SimResult *r = &c->result;
      const double gib = 1024.0 * 1024 * 1024;
      g_autofree char *label = plansearch_label (c);
      g_string_append_printf (out, "%2u. %s\n", i + 1, label);
      g_string_append_printf (out, "      %.3f s, model %.1f TFLOP/s per GPU "
                              "(MFU %.1f %%), %.1f GiB per GPU (%.1f GiB "
                              "free); Megatron's eq. 3: %.1f TFLOP/s\n",
                              r->iteration_time_s, r->model_tflops_per_gpu,
                              100 * r->mfu, r->memory_per_gpu_gib,
                              r->memory.capacity / gib - r->memory_per_gpu_gib,
                              r->megatron_tflops_per_gpu);
      /* Every part but those that are 0, compute always: they add up. */
      g_string_append (out, "     ");
      for (guint k = 0; k < REPORT_BREAKDOWN_PARTS; k++)
        {
          const ReportPart *part = &report_breakdown_parts[k];
          double x = G_STRUCT_MEMBER (double, &r->breakdown_s, part->offset);
          if (k == 0 || x != 0)
            g_string_append_printf (out, "%s %s %.3g s", k ? "," : "", part->name, x);
        }
      g_string_append_c (out, '\n');
      if (i + 1 < n)
        append_why (out, c, &g_array_index (cands, PlanCandidate, i + 1));
    }
}

/* The ranked plans as CSV or JSON: rank, label, the --set arguments that
 * replay the plan, then run's columns or members (report.h). */
static void
append_rows (GString *out, const GArray *cands, guint n, ReportFormat format,
             const ExperimentSpec *base, guint n_ok)
{
  static const char *const skip[] = { NULL };
  g_autofree char *fw = framework_label (base->framework);
  if (format == REPORT_CSV)
    {
      g_string_append (out, "rank,plan,set,");
      report_append_csv_header (out, skip);
    }
  else
    {
      g_string_append (out, "{\"search\": {\"model\": ");
      report_append_json_string (out, base->model.name ? base->model.name : "");
      g_string_append (out, ", \"topology\": ");
      report_append_json_string (out, base->topology.name ? base->topology.name
                                                          : "");
      g_string_append_printf (out, ", \"gpus\": %d, \"global_batch\": %d, "
                              "\"framework\": ", base->gpus,
                              base->parallel.global_batch);
      report_append_json_string (out, fw);
      g_string_append_printf (out, ", \"plans_fit\": %u},\n \"plans\": [",
                              n_ok);
    }
  for (guint i = 0; i < n; i++)
    {
      const PlanCandidate *c = &g_array_index (cands, PlanCandidate, i);
      g_autofree char *label = plansearch_label (c);
      g_autoptr (GPtrArray) sets = plansearch_sets (c);
      if (format == REPORT_CSV)
        {
          /* Labels and --set lists hold commas: quoted. */
          g_string_append_printf (out, "%u,\"%s\",\"", i + 1, label);
          for (guint k = 0; k < sets->len; k++)
            g_string_append_printf (out, "%s--set %s", k ? " " : "",
                                    (const char *) g_ptr_array_index (sets, k));
          g_string_append (out, "\",");
          report_append_csv_row (out, &c->result, skip);
          continue;
        }
      g_string_append_printf (out, "%s\n  {\"rank\": %u, \"plan\": ",
                              i ? "," : "", i + 1);
      report_append_json_string (out, label);
      g_string_append (out, ", \"set\": [");
      for (guint k = 0; k < sets->len; k++)
        {
          if (k)
            g_string_append (out, ", ");
          report_append_json_string (out, g_ptr_array_index (sets, k));
        }
      g_string_append (out, "], ");
      report_append_json_members (out, &c->result, skip);
      g_string_append_c (out, '}');
    }
  if (format == REPORT_JSON)
    g_string_append (out, "\n]}\n");
}

int
cli_search (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *format_name = NULL;
  int top = 5, jobs = G_MININT;   /* not given: the core count */
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      PLANSEARCH_SET_HELP, "KEY=VALUE" },
    { "top", 'n', 0, G_OPTION_ARG_INT, &top, "Plans to print (default 5)",
      "N" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "Output format: table (default), json or csv", "FORMAT" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
      "Worker threads (default: the core count)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("EXPERIMENT.yaml");
  g_option_context_set_summary (context,
    "Finds the fastest plans that fit in memory for the experiment's model,\n"
    "GPU count, topology and global batch, over tp, pp, dp, micro-batch,\n"
    "virtual stages, recompute and ZeRO stage, among the plans the\n"
    "experiment's framework runs, and prints the best with their time\n"
    "breakdown and what sets each apart from the next. Each JSON or CSV row\n"
    "carries the --set arguments with which `trainsim run` replays it.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 no plan fits; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  int format;
  if (!cli_report_format ("search", format_name, &format))
    return 2;
  if (argc != 2 || top < 1 || (jobs != G_MININT && (jobs < 1 || jobs > 4096)))
    {
      cli_printerr ("trainsim search: expected one experiment file, "
                    "--top >= 1 and --jobs from 1 to 4096");
      cli_try_help ("search");
      return 2;
    }
  g_autofree char *experiment = cli_find_input (argv[1], "experiments");
  argv[1] = experiment;
  g_autoptr (GError) error = NULL;
  ExperimentSpec base;
  if (!config_load_experiment (argv[1], (const char *const *) sets, &base,
                               &error))
    return cli_fail (error);

  guint n_ok, n_valid;
  g_autoptr (GArray) cands = plansearch_run (
    &base, (const char *const *) sets,
    jobs > 0 ? jobs : (int) g_get_num_processors (), (guint) top, &n_ok,
    &n_valid, NULL);
  int status = 0;
  g_autofree char *fw = framework_label (base.framework);
  if (n_valid == 0)
    {
      /* Not one plan to weigh: the values held rule them all out. */
      cli_printerr ("trainsim search: no plan that %s runs can hold the "
                    "experiment's GPUs, batch and --set values; trainsim run "
                    "with those values says why", fw);
      status = 2;
    }
  else if (n_ok == 0)
    {
      cli_printerr ("trainsim search: none of %u plans that %s runs fits "
                    "in memory", n_valid, fw);
      status = 1;
    }
  else
    {
      g_autoptr (GString) out = g_string_new (NULL);
      guint n = MIN ((guint) top, n_ok);
      if (format == REPORT_TABLE)
        {
          /* The names from the input, shown (base/text.h). */
          g_autoptr (GString) head = g_string_new (NULL);
          g_string_printf (head, "trainsim search: %s on %s, %d GPUs, "
                           "global batch %d, framework %s: %u plans fit",
                           base.model.name ? base.model.name : "model",
                           base.topology.name ? base.topology.name : "topology",
                           base.gpus, base.parallel.global_batch, fw, n_ok);
          text_append_shown (out, head->str);
          g_string_append_c (out, '\n');
          append_table (out, cands, n);
        }
      else
        append_rows (out, cands, n, format, &base, n_ok);
      if (fputs (out->str, stdout) == EOF || fflush (stdout) != 0)
        {
          cli_printerr ("trainsim search: cannot write the results: %s",
                        g_strerror (errno));
          status = 1;
        }
    }
  experiment_spec_clear (&base);
  return status;
}
