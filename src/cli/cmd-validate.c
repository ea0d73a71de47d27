/* cmd-validate.c: `trainsim validate`: predictions against published
 * measurements, with the error of each case and per file the MAPE and the
 * largest error, checked against the file's tolerance. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/progress.h"
#include "config/config.h"
#include "parallel/sim.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  double sum_abs, max_abs;
  int n;
} Score;

/* Scores one comparison and writes its row; seconds in both. */
static void
compare (GString *out, gboolean csv, const char *file, const char *id,
         double meas, double pred, const SimResult *r, gboolean oom,
         Score *score)
{
  double err = (pred - meas) / meas * 100;
  score->sum_abs += fabs (err);
  score->max_abs = MAX (score->max_abs, fabs (err));
  score->n++;
  if (csv)
    g_string_append_printf (out, "%s,%s,%.6g,%.6g,%.2f,%d,%d,%d,%s\n", file,
                            id, meas, pred, err, r->micro_batch,
                            r->virtual_stages, r->fits_memory ? 1 : 0,
                            oom ? "oom" : "");
  else if (meas < 1)
    g_string_append_printf (out, "  %-28s %8.2fms %8.2fms %+7.1f%%%s\n", id,
                            meas * 1e3, pred * 1e3, err, r->fits_memory ? ""
                            : "  (memory model: does not fit)");
  else
    g_string_append_printf (out, "  %-28s %9.3fs %9.3fs %+7.1f%%%s\n", id,
                            meas, pred, err, r->fits_memory ? ""
                            : "  (memory model: does not fit)");
}

/* Validates one file; returns its exit status. */
static int
validate_file (const char *path, gboolean full, gboolean csv, GString *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ValidationSpec) v = config_load_validation (path, &error);
  if (v == NULL)
    return cli_fail (error);
  Score score = { 0 };
  /* Per case with layer times: measured and predicted forward + backward,
   * whose order across the cases must agree (Korthikanti's settings). */
  guint n = v->cases->len;
  g_autofree double *layer_meas = g_new0 (double, n);
  g_autofree double *layer_pred = g_new0 (double, n);
  if (!csv)
    g_string_append_printf (out, "%s: %s%s%s\n  %-28s %10s %10s %8s\n", path,
                            v->name, v->source ? " -- " : "",
                            v->source ? v->source : "", "case", "measured",
                            "predicted", "error");
  Progress progress;
  progress_init (&progress, "cases", n, 0);
  for (guint i = 0; i < n; i++)
    {
      const ValidationCase *c = g_ptr_array_index (v->cases, i);
      progress_draw (&progress, i, c->id);
      SimOptions options = { full, NULL };
      SimResult r;
      if (!sim_run (&c->experiment, &options, &r, &error))
        {
          progress_clear (&progress);
          g_prefix_error (&error, "%s: case %s: ", c->where, c->id);
          return cli_fail (error);
        }
      if (c->measured_iteration_time_s != SPEC_UNSET)
        compare (out, csv, v->name, c->id, c->measured_iteration_time_s,
                 r.iteration_time_s, &r, c->measured_oom, &score);
      if (c->measured_layer_forward_ms != SPEC_UNSET)
        {
          g_autofree char *fwd = g_strconcat (c->id, " fwd", NULL);
          g_autofree char *bwd = g_strconcat (c->id, " bwd", NULL);
          compare (out, csv, v->name, fwd, c->measured_layer_forward_ms / 1e3,
                   r.layer_forward_s, &r, c->measured_oom, &score);
          compare (out, csv, v->name, bwd, c->measured_layer_backward_ms / 1e3,
                   r.layer_backward_s, &r, c->measured_oom, &score);
          layer_meas[i] = c->measured_layer_forward_ms
                          + c->measured_layer_backward_ms;
          layer_pred[i] = r.layer_forward_s + r.layer_backward_s;
        }
    }
  progress_clear (&progress);
  double mape = score.n ? score.sum_abs / score.n : 0;
  int status = 0;
  GString *summary = g_string_new (NULL);
  g_string_append_printf (summary, "MAPE %.1f%% max %.1f%% over %d cases",
                          mape, score.max_abs, score.n);
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++)
      if (layer_meas[i] > 0 && layer_meas[j] > 0
          && layer_meas[i] < layer_meas[j] && layer_pred[i] >= layer_pred[j]
          && status == 0)
        {
          g_string_append_printf (summary, "; FAIL: %s is faster than %s per "
                                  "layer, but predicted not",
                                  ((ValidationCase *) g_ptr_array_index (v->cases, i))->id,
                                  ((ValidationCase *) g_ptr_array_index (v->cases, j))->id);
          status = 1;
        }
  if (v->tolerance_mape > 0 && mape > v->tolerance_mape * 100)
    {
      g_string_append_printf (summary, "; FAIL: MAPE above the tolerance "
                              "%.1f%%", v->tolerance_mape * 100);
      status = 1;
    }
  if (v->tolerance_max > 0 && score.max_abs > v->tolerance_max * 100)
    {
      g_string_append_printf (summary, "; FAIL: max above the tolerance "
                              "%.1f%%", v->tolerance_max * 100);
      status = 1;
    }
  if (csv)
    fprintf (stderr, "%s: %s\n", path, summary->str);
  else
    g_string_append_printf (out, "%s: %s\n", path, summary->str);
  g_string_free (summary, TRUE);
  return status;
}

int
cli_validate (int argc, char **argv)
{
  g_autofree char *format_name = NULL;
  gboolean full = FALSE;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "table (default) or csv (file,id,measured_s,predicted_s,error_pct,"
      "micro_batch,virtual_stages,fits,oom; summaries on stderr)", "FORMAT" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full,
      "Simulate every rank, not one per pipeline stage", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("FILE...");
  g_option_context_set_summary (context,
    "Predicts every case of each validation file and compares the iteration\n"
    "time with the measured one: a row per case, then per file the line\n"
    "'MAPE x.x% max y.y% over N cases'.");
  g_option_context_set_description (context,
    "Exit status: 0 every file within its tolerance; 1 a file above its\n"
    "tolerance; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, &argc, &argv))
    return 2;
  if (argc < 2)
    {
      fprintf (stderr, "trainsim validate: expected one or more validation "
                       "files\nTry 'trainsim validate --help'.\n");
      return 2;
    }
  gboolean csv = FALSE;
  if (format_name != NULL)
    {
      if (strcmp (format_name, "csv") == 0)
        csv = TRUE;
      else if (strcmp (format_name, "table") != 0)
        {
          fprintf (stderr, "trainsim validate: unknown format '%s' (valid: "
                           "table or csv)\n", format_name);
          return 2;
        }
    }
  int status = 0;
  g_autoptr (GString) out = g_string_new (NULL);
  if (csv)
    g_string_append (out, "file,id,measured_s,predicted_s,error_pct,"
                          "micro_batch,virtual_stages,fits,oom\n");
  for (int i = 1; i < argc; i++)
    {
      int s = validate_file (argv[i], full, csv, out);
      /* Rows are printed as each file finishes. */
      fputs (out->str, stdout);
      fflush (stdout);
      g_string_truncate (out, 0);
      if (s == 2)
        return 2;
      status = MAX (status, s);
    }
  return status;
}
