/* cmd-validate.c: `trainsim validate`: predictions against published
 * measurements, with the error of each case and per file the MAPE, the
 * largest and the mean signed error, checked against the file's goal
 * (tolerance) or, for a known gap, against its known_gap bounds; totals by
 * role (calibration apart from validation) when several files are given. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/text.h"
#include "base/progress.h"
#include "config/config.h"
#include "graph/transformer.h"
#include "hw/device.h"
#include "net/net.h"
#include "output/report.h"
#include "parallel/sim.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A set of comparisons: a file's, or all of one role's. Errors in
 * percent; negative means predicted faster (or smaller) than measured. */
typedef struct {
  double sum_abs, sum_signed, max_abs;
  int n;
} Score;

static void
score_add (Score *score, double err)
{
  score->sum_abs += fabs (err);
  score->sum_signed += err;
  score->max_abs = MAX (score->max_abs, fabs (err));
  score->n++;
}

static void
score_merge (Score *into, const Score *score)
{
  into->sum_abs += score->sum_abs;
  into->sum_signed += score->sum_signed;
  into->max_abs = MAX (into->max_abs, score->max_abs);
  into->n += score->n;
}

static double
score_mape (const Score *score)
{
  return score->n ? score->sum_abs / score->n : 0;
}

static double
score_mean_signed (const Score *score)
{
  return score->n ? score->sum_signed / score->n : 0;
}

/* The files of one role, for the closing summary. */
typedef struct {
  Score score;
  int files;
} RoleTotal;

/* What a file's bounds (ValidationBounds) apply to. */
typedef struct {
  double mape, max, mean_signed;  /* percent */
  int misordered, memory_misses;
} Scores;

/* A CSV row's first two cells, the file's name and the case's id, quoted
 * where they hold a comma, a quote or a line break. */
static void
csv_names (GString *out, const char *file, const char *id)
{
  report_append_csv_cell (out, file);
  g_string_append_c (out, ',');
  report_append_csv_cell (out, id);
}

/* Scores one comparison and writes its row; seconds in both. NOTE ends
 * the row. (A run that ran out of memory has no time: its row is not
 * written here, and only its rows have "oom" in the CSV.) */
static void
compare (GString *out, gboolean csv, const char *file, const char *id,
         double meas, double pred, const SimResult *r, const char *note,
         Score *score)
{
  double err = (pred - meas) / meas * 100;
  score_add (score, err);
  if (csv)
    {
      csv_names (out, file, id);
      g_string_append_printf (out, ",%.6g,%.6g,%.2f,%d,%d,%d,\n", meas, pred, err,
                              r->micro_batch, r->virtual_stages,
                              r->fits_memory ? 1 : 0);
    }
  else
    {
      /* A row stays a row: a time past a million seconds, or an error
       * past 100,000 % (a measured rate near zero or huge gives such),
       * is written in exponent form. */
      double longest = MAX (meas, pred);
      char err_text[32];
      g_snprintf (err_text, sizeof err_text,
                  fabs (err) < 1e5 ? "%+7.1f%%" : "%+7.0e%%", err);
      double scale = longest < 1 ? 1e3 : 1;
      g_autofree char *shown = text_shown (id);   /* base/text.h */
      g_string_append_printf (out, longest < 1 ? "  %-28s %8.2fms %8.2fms %s%s%s\n"
                              : longest < 1e6 ? "  %-28s %9.3fs %9.3fs %s%s%s\n"
                              : "  %-28s %9.3es %9.3es %s%s%s\n", shown,
                              meas * scale, pred * scale, err_text,
                              r->fits_memory ? "" : "  (memory model: does not fit)",
                              note);
    }
}

/* The published figures a measured TFLOP/s and iteration time were taken
 * from are rounded (138 TFLOP/s, 31.92 s): within this they agree. */
#define TFLOPS_AGREEMENT 0.01

/* The TFLOP/s of R that a measured figure counted under CONVENTION. */
static double
predicted_tflops (const SimResult *r, FlopsConvention convention)
{
  switch (convention)
    {
    case FLOPS_MODEL: return r->model_tflops_per_gpu;
    case FLOPS_HARDWARE: return r->hardware_tflops_per_gpu;
    case FLOPS_MEGATRON:
    case FLOPS_N:
    default: return r->megatron_tflops_per_gpu;
    }
}

/* The measured time of case C, run as R: its iteration time, or the time
 * its TFLOP/s gives (the same FLOPs over both times: t = F / (gpus X));
 * SPEC_UNSET when it has neither. When both are given they must agree.
 * Appends to NOTE what a time from TFLOP/s came from. */
static gboolean
measured_time (const ValidationSpec *v, const ValidationCase *c,
               const SimResult *r, double *time, GString *note,
               GError **error)
{
  double x = c->measured_tflops_per_gpu, from_tflops;
  const char *flops;

  *time = c->measured_iteration_time_s;
  if (x == SPEC_UNSET)
    return TRUE;
  flops = spec_enum_name (SPEC_ENUM_FLOPS, v->flops);
  from_tflops = r->iteration_time_s * predicted_tflops (r, v->flops) / x;
  if (*time == SPEC_UNSET)
    {
      *time = from_tflops;
      g_string_append_printf (note, "  (%.4g TFLOP/s, %s FLOPs)", x, flops);
    }
  else if (fabs (from_tflops / *time - 1) > TFLOPS_AGREEMENT)
    {
      g_autofree char *id = text_shown (c->id);   /* a message: base/text.h */
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: case %s: "
                   "tflops_per_gpu %g counts as %.4g s under flops: %s, but "
                   "iteration_time_s is %g s; they must agree within %g %% "
                   "(check the flops convention or the figures)",
                   c->tflops_where, id, x, from_tflops, flops, *time,
                   TFLOPS_AGREEMENT * 100);
      return FALSE;
    }
  return TRUE;
}

/* Whether SCORE is above its bound: GAP where set (the file is a known
 * gap and GAP is not NULL), else GOAL; an unset bound is negative. FRACTION
 * bounds are fractions of percent scores, the others counts. Says which
 * in SUMMARY. */
static gboolean
over (GString *summary, const char *what, double score, double goal,
      const double *gap, gboolean fraction)
{
  gboolean by_gap = gap != NULL && *gap >= 0;
  double bound = by_gap ? *gap : goal;
  double scale = fraction ? 100 : 1;
  if (bound < 0 || score <= bound * scale)
    return FALSE;
  if (fraction)
    g_string_append_printf (summary, "; FAIL: %s above the %s %.1f%%", what,
                            by_gap ? "known gap" : "goal", bound * 100);
  else
    g_string_append_printf (summary, "; FAIL: %s above the %s %g", what,
                            by_gap ? "known gap" : "goal", bound);
  return TRUE;
}

/* The number of bounds S is above (see over); GAP may be NULL. */
static int
bounds_over (GString *summary, const Scores *s, const ValidationBounds *goal,
             const ValidationBounds *gap)
{
  double misordered = gap ? gap->misordered : -1;
  double memory_misses = gap ? gap->memory_misses : -1;
  return over (summary, "MAPE", s->mape, goal->mape, gap ? &gap->mape : NULL, TRUE)
         + over (summary, "max", s->max, goal->max, gap ? &gap->max : NULL, TRUE)
         + over (summary, "|mean signed error|", fabs (s->mean_signed),
                 goal->mean_signed, gap ? &gap->mean_signed : NULL, TRUE)
         + over (summary, "groups out of measured order", s->misordered,
                 goal->misordered, gap ? &misordered : NULL, FALSE)
         + over (summary, "memory misses", s->memory_misses,
                 goal->memory_misses, gap ? &memory_misses : NULL, FALSE);
}

/* "MAPE 10.0%, max 35.0%": the bounds B sets. */
static void
bounds_text (GString *s, const ValidationBounds *b)
{
  const char *sep = "";
  if (b->mape >= 0)
    g_string_append_printf (s, "%sMAPE %.1f%%", sep, b->mape * 100), sep = ", ";
  if (b->max >= 0)
    g_string_append_printf (s, "%smax %.1f%%", sep, b->max * 100), sep = ", ";
  if (b->mean_signed >= 0)
    g_string_append_printf (s, "%s|mean signed error| %.1f%%", sep,
                            b->mean_signed * 100), sep = ", ";
  if (b->misordered >= 0)
    g_string_append_printf (s, "%sgroups out of measured order %d", sep,
                            b->misordered), sep = ", ";
  if (b->memory_misses >= 0)
    g_string_append_printf (s, "%smemory misses %d", sep, b->memory_misses);
}

/* Appends the percentage V to S, with its sign when SIGNED: one decimal,
 * or past 100,000 % (a measured figure near zero gives such) three
 * digits in exponent form, so that the summary stays a line. */
static void
append_percent (GString *s, double v, gboolean sign)
{
  if (fabs (v) < 1e5)
    g_string_append_printf (s, sign ? "%+.1f%%" : "%.1f%%", v);
  else
    g_string_append_printf (s, sign ? "%+.3g%%" : "%.3g%%", v);
}

/* A time for a line of text: milliseconds below a second, as the table. */
static void
seconds_text (char *buf, gsize size, double s)
{
  g_snprintf (buf, size, s < 1 ? "%.2fms" : s < 1e6 ? "%.3fs" : "%.3es",
              s < 1 ? s * 1e3 : s);
}

/* Groups of V's cases (order_within) whose predicted times are not in the
 * order of their measured ones; a time of 0 is a case without one. A line
 * per such group, added to OUT, names the two cases that show it best: of
 * the pairs predicted in the wrong order, the one whose measured times
 * differ most, faster first. */
static int
misordered_groups (const ValidationSpec *v, const double *meas,
                   const double *pred, GString *out)
{
  if (v->order_groups == 0)
    return 0;   /* pairs of every two cases: none to look at */
  g_autofree int *faster = g_new (int, v->order_groups);
  g_autofree int *slower = g_new (int, v->order_groups);
  int n = 0;
  for (int g = 0; g < v->order_groups; g++)
    faster[g] = -1;
  for (guint i = 0; i < v->cases->len; i++)
    for (guint j = 0; j < v->cases->len; j++)
      {
        int g = ((ValidationCase *) g_ptr_array_index (v->cases, i))->order_group;
        if (g < 0 || g != ((ValidationCase *) g_ptr_array_index (v->cases, j))->order_group
            || meas[i] <= 0 || meas[j] <= 0 || meas[i] >= meas[j] || pred[i] < pred[j])
          continue;
        if (faster[g] < 0)
          n++;
        if (faster[g] < 0 || meas[j] / meas[i] > meas[slower[g]] / meas[faster[g]])
          faster[g] = (int) i, slower[g] = (int) j;
      }
  for (int g = 0; g < v->order_groups; g++)
    if (faster[g] >= 0)
      {
        int i = faster[g], j = slower[g];
        char mi[32], mj[32], pi[32], pj[32];
        seconds_text (mi, sizeof mi, meas[i]);
        seconds_text (mj, sizeof mj, meas[j]);
        seconds_text (pi, sizeof pi, pred[i]);
        seconds_text (pj, sizeof pj, pred[j]);
        g_autofree char *id_i = text_shown (
          ((ValidationCase *) g_ptr_array_index (v->cases, i))->id);
        g_autofree char *id_j = text_shown (
          ((ValidationCase *) g_ptr_array_index (v->cases, j))->id);
        g_string_append_printf (out, "  out of order: %s ran in %s, %s in %s; "
                                "predicted %s and %s\n", id_i, mi, id_j, mj,
                                pi, pj);
      }
  return n;
}

/* Validates one file, its training cases with SETS over them (NULL for
 * none), adding its comparisons to its role's in BY_ROLE; returns its exit
 * status. */
static int
validate_file (const char *path, const char *const *sets, gboolean full, gboolean csv,
               GString *out, RoleTotal by_role[VALIDATION_KIND_N][ROLE_N])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ValidationSpec) v = config_load_validation (path, sets, &error);
  if (v == NULL)
    return cli_fail (error);
  Score score = { 0 }, memory = { 0 };
  int oom_but_ran = 0, fit_but_oom = 0;
  /* Per case with layer times: measured and predicted forward + backward,
   * whose order across the cases must agree (Korthikanti's settings). */
  guint n = v->cases->len;
  g_autofree double *layer_meas = g_new0 (double, n);
  g_autofree double *layer_pred = g_new0 (double, n);
  /* Per case with a run's time, for the order of order_within's groups. */
  g_autofree double *time_meas = g_new0 (double, n);
  g_autofree double *time_pred = g_new0 (double, n);
  g_autoptr (GString) note = g_string_new (NULL);
  /* The table's and the summary's names from the input, shown
   * (base/text.h); the CSV's cells are its own. */
  g_autofree char *shown_path = text_shown (path);
  if (!csv)
    {
      g_autofree char *name = text_shown (v->name);
      g_autofree char *source = text_shown (v->source);
      g_string_append_printf (out, "%s: %s%s%s\n  %-28s %10s %10s %8s\n",
                              shown_path, name, v->source ? " -- " : "", source,
                              "case", "measured", "predicted", "error");
    }
  Progress progress;
  progress_init (&progress, "cases", n, 0);
  for (guint i = 0; i < n; i++)
    {
      const ValidationCase *c = g_ptr_array_index (v->cases, i);
      progress_draw (&progress, i, c->id);
      SimOptions options = { full, NULL };
      SimResult r;
      double meas;
      g_string_truncate (note, 0);
      if (v->kind == VALIDATION_COLLECTIVES)
        {
          /* Scored on time, as the runs are: the measured bus bandwidth
           * is a time for the same bytes. */
          NetModel net;
          CollCost cost;
          net_model_init (&net, &c->experiment.topology,
                          c->experiment.collectives.algorithm);
          double pred = net_benchmark_time (&net, c->op, c->bytes, c->experiment.gpus,
                                            c->per_node, &cost);
          double unit = net_bus_bandwidth (c->op, c->bytes, c->experiment.gpus, 1.0);
          /* A million GB/s and beyond, a mistake, in exponent form. */
          g_string_printf (note, c->measured_bus_bandwidth < 1e15
                           ? "  (%.1f GB/s bus bandwidth, predicted %.1f, %s %s)"
                           : "  (%.3e GB/s bus bandwidth, predicted %.1f, %s %s)",
                           c->measured_bus_bandwidth / 1e9, unit / pred / 1e9,
                           net_algo_name (cost.algo), net_proto_name (cost.proto));
          r = (SimResult) { .fits_memory = TRUE };
          compare (out, csv, v->name, c->id, unit / c->measured_bus_bandwidth, pred, &r,
                   note->str, &score);
          continue;
        }
      if (v->kind == VALIDATION_GEMM)
        {
          /* Scored on time: the measured rate is a time for the same
           * FLOPs. The device's compute model, as a run prices a GEMM. */
          ComputeModel cm;
          compute_model_init (&cm, &c->experiment.topology.gpu,
                              &c->experiment.compute,
                              c->experiment.training.precision);
          Kernel g = compute_gemm (&cm, c->batch, c->m, c->n, c->k);
          double pred = compute_kernel_time (&cm, &g);
          g_string_printf (note, "  (%.1f TFLOP/s, predicted %.1f)",
                           c->measured_flops / 1e12, g.flops / pred / 1e12);
          r = (SimResult) { .fits_memory = TRUE };
          compare (out, csv, v->name, c->id, g.flops / c->measured_flops, pred, &r,
                   note->str, &score);
          continue;
        }
      if (v->kind == VALIDATION_MLP)
        {
          /* Scored on time: the MLP block's kernels as a layer's forward
           * prices them, on one device. */
          ComputeModel cm;
          compute_model_init (&cm, &c->experiment.topology.gpu,
                              &c->experiment.compute,
                              c->experiment.training.precision);
          LayerShape ls;
          transformer_layer_shape (&ls, &c->experiment.model, 1,
                                   c->experiment.parallel.micro_batch, FALSE,
                                   ATTENTION_UNFUSED, &cm);
          g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (GraphOp));
          transformer_mlp_forward (&ls, ops);
          double pred = 0, flops = 0;
          for (guint k = 0; k < ops->len; k++)
            {
              const GraphOp *op = &g_array_index (ops, GraphOp, k);
              pred += compute_kernel_time (&cm, &op->kernel);
              flops += op->kernel.flops;
            }
          double meas_s = c->measured_forward_ms / 1e3;
          g_string_printf (note, "  (%.1f TFLOP/s, predicted %.1f)",
                           flops / meas_s / 1e12, flops / pred / 1e12);
          r = (SimResult) { .fits_memory = TRUE };
          compare (out, csv, v->name, c->id, meas_s, pred, &r, note->str, &score);
          continue;
        }
      if (!sim_run (&c->experiment, &options, &r, &error))
        {
          progress_clear (&progress);
          g_autofree char *id = text_shown (c->id);   /* base/text.h */
          g_prefix_error (&error, "%s: case %s: ", c->where, id);
          return cli_fail (error);
        }
      if (!measured_time (v, c, &r, &meas, note, &error))
        {
          progress_clear (&progress);
          return cli_fail (error);
        }
      if (c->measured_memory_gib != SPEC_UNSET)
        {
          double err = (r.memory_per_gpu_gib - c->measured_memory_gib)
                       / c->measured_memory_gib * 100;
          score_add (&memory, err);
          g_string_append_printf (note, "  memory %.1f GiB, predicted %.1f GiB "
                                  "(%+.1f%%)", c->measured_memory_gib,
                                  r.memory_per_gpu_gib, err);
        }
      if (meas != SPEC_UNSET)
        {
          compare (out, csv, v->name, c->id, meas, r.iteration_time_s, &r,
                   note->str, &score);
          time_meas[i] = meas;
          time_pred[i] = r.iteration_time_s;
          oom_but_ran += !r.fits_memory;
        }
      if (c->measured_layer_forward_ms != SPEC_UNSET)
        {
          g_autofree char *fwd = g_strconcat (c->id, " fwd", NULL);
          g_autofree char *bwd = g_strconcat (c->id, " bwd", NULL);
          compare (out, csv, v->name, fwd, c->measured_layer_forward_ms / 1e3,
                   r.layer_forward_s, &r, meas == SPEC_UNSET ? note->str : "",
                   &score);
          compare (out, csv, v->name, bwd, c->measured_layer_backward_ms / 1e3,
                   r.layer_backward_s, &r, "", &score);
          layer_meas[i] = c->measured_layer_forward_ms
                          + c->measured_layer_backward_ms;
          layer_pred[i] = r.layer_forward_s + r.layer_backward_s;
        }
      if (c->measured_oom)
        {
          /* A run that did not fit has no time: the memory model is
           * scored on whether it agrees. */
          fit_but_oom += r.fits_memory;
          if (csv)
            {
              csv_names (out, v->name, c->id);
              g_string_append_printf (out, ",,%.6g,,%d,%d,%d,oom\n",
                                      r.iteration_time_s, r.micro_batch,
                                      r.virtual_stages, r.fits_memory ? 1 : 0);
            }
          else
            {
              g_autofree char *id = text_shown (c->id);
              g_string_append_printf (out, "  %-28s ran out of memory; predicted "
                                      "%.1f GiB of %.1f: %s%s\n", id,
                                    r.memory_per_gpu_gib,
                                    r.memory.capacity / (1024.0 * 1024 * 1024),
                                      r.fits_memory ? "fits" : "agrees", note->str);
            }
        }
    }
  progress_clear (&progress);
  /* The groups out of order: in the table, or beside the summaries on
   * stderr with --format csv. */
  g_autoptr (GString) order_lines = g_string_new (NULL);
  Scores s = { score_mape (&score), score.max_abs, score_mean_signed (&score),
               misordered_groups (v, time_meas, time_pred, order_lines),
               oom_but_ran + fit_but_oom };
  if (csv)
    fputs (order_lines->str, stderr);
  else
    g_string_append (out, order_lines->str);
  int status = 0;
  GString *summary = g_string_new (NULL);
  /* The contract line first (trainsim(1), validate: tests and hooks grep it). */
  g_string_append (summary, "MAPE ");
  append_percent (summary, s.mape, FALSE);
  g_string_append (summary, " max ");
  append_percent (summary, s.max, FALSE);
  g_string_append_printf (summary, " over %d cases, mean signed error ", score.n);
  append_percent (summary, s.mean_signed, TRUE);
  g_string_append_printf (summary, ", role %s", spec_enum_name (SPEC_ENUM_ROLE, v->role));
  /* Predictions under overrides say so: they are not the file's score. */
  for (size_t i = 0; sets && sets[i]; i++)
    {
      g_autofree char *set = text_shown (sets[i]);
      g_string_append_printf (summary, "%s--set %s", i ? " " : ", with ", set);
    }
  if (v->order_groups > 0)
    g_string_append_printf (summary, ", in measured order: %d of %d groups",
                            v->order_groups - s.misordered, v->order_groups);
  if (memory.n > 0)
    /* Not "over N cases": scripts read that as the file's case count. */
    g_string_append_printf (summary, ", memory MAPE %.1f%% (%d cases, mean "
                            "signed error %+.1f%%)", score_mape (&memory),
                            memory.n, score_mean_signed (&memory));
  if (oom_but_ran > 0)
    g_string_append_printf (summary, ", predicted out of memory but ran: %d",
                            oom_but_ran);
  if (fit_but_oom > 0)
    g_string_append_printf (summary, ", predicted to fit but ran out of "
                            "memory: %d", fit_but_oom);
  /* Only the cases with layer times are paired: a file of thousands of
   * runs has none. */
  for (guint i = 0; i < n; i++)
    for (guint j = 0; layer_meas[i] > 0 && j < n; j++)
      if (layer_meas[j] > 0
          && layer_meas[i] < layer_meas[j] && layer_pred[i] >= layer_pred[j]
          && status == 0)
        {
          g_autofree char *id_i = text_shown (
            ((ValidationCase *) g_ptr_array_index (v->cases, i))->id);
          g_autofree char *id_j = text_shown (
            ((ValidationCase *) g_ptr_array_index (v->cases, j))->id);
          g_string_append_printf (summary, "; FAIL: %s is faster than %s per "
                                  "layer, but predicted not", id_i, id_j);
          status = 1;
        }
  /* Missing the goal fails, unless the file is a known gap and stays
   * within the gap's bounds. */
  g_autoptr (GString) goal_missed = g_string_new (NULL);
  g_autoptr (GString) goal = g_string_new (NULL);
  bounds_text (goal, &v->tolerance);
  if (bounds_over (goal_missed, &s, &v->tolerance, NULL) == 0)
    {
      if (goal->len > 0)
        g_string_append (summary, "; goal met");
    }
  else if (!v->has_known_gap)
    {
      g_string_append (summary, goal_missed->str);
      status = 1;
    }
  else if (bounds_over (summary, &s, &v->tolerance, &v->known_gap) > 0)
    status = 1;
  else
    g_string_append_printf (summary, "; KNOWN GAP (goal: %s)", goal->str);
  if (csv)
    cli_printerr ("%s: %s", shown_path, summary->str);
  else
    g_string_append_printf (out, "%s: %s\n", shown_path, summary->str);
  g_string_free (summary, TRUE);
  score_merge (&by_role[v->kind][v->role].score, &score);
  by_role[v->kind][v->role].files++;
  return status;
}

int
cli_validate (int argc, char **argv)
{
  g_autofree char *format_name = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean full = FALSE;
  GOptionEntry entries[] = {
    /* FILENAME: the value's bytes as typed, as run's --set. */
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of every case of files of training runs (repeatable), "
      "e.g. training.recompute=none: what the runs would take so", "KEY=VALUE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      "table (default) or csv (file,id,measured_s,predicted_s,error_pct,"
      "micro_batch,virtual_stages,fits,oom; summaries and out-of-order lines "
      "on stderr)", "FORMAT" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full,
      "Simulate every rank, not one per pipeline stage", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("FILE...");
  g_option_context_set_summary (context,
    "Predicts every case of each validation file and compares the iteration\n"
    "time with the measured one: a row per case, a line per group of\n"
    "order_within out of measured order (the two cases that show it), then\n"
    "per file the line 'MAPE x.x% max y.y% over N cases', with the mean\n"
    "signed error, the file's role and whether it meets its goal; given\n"
    "several files, the totals of each role (calibration, validation) close\n"
    "the output.\n"
    "A file of kind: collectives holds nccl-tests-like runs of one\n"
    "collective, predicted as 'trainsim collective' does and totalled apart;\n"
    "one of kind: gemm holds matrix multiplications timed alone on a device,\n"
    "predicted as a training step prices its GEMMs, and totalled apart; one\n"
    "of kind: mlp holds a transformer's MLP block timed alone, predicted as a\n"
    "layer's forward prices it, and totalled apart.");
  g_option_context_set_description (context,
    "Exit status: 0 every file meets its goal (tolerance), or stays within\n"
    "its known_gap; 1 a file does not; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc < 2)
    {
      cli_printerr ("trainsim validate: expected one or more validation files");
      cli_try_help ("validate");
      return 2;
    }
  gboolean csv = FALSE;
  if (format_name != NULL)
    {
      if (strcmp (format_name, "csv") == 0)
        csv = TRUE;
      else if (strcmp (format_name, "table") != 0)
        {
          cli_printerr ("trainsim validate: unknown format '%s' (valid: "
                        "table or csv)", format_name);
          return 2;
        }
    }
  int status = 0;
  RoleTotal by_role[VALIDATION_KIND_N][ROLE_N] = { 0 };
  g_autoptr (GString) out = g_string_new (NULL);
  if (csv)
    g_string_append (out, "file,id,measured_s,predicted_s,error_pct,"
                          "micro_batch,virtual_stages,fits,oom\n");
  for (int i = 1; i < argc; i++)
    {
      g_autofree char *file = cli_find_input (argv[i], "experiments/validation");
      int s = validate_file (file, (const char *const *) sets, full, csv, out, by_role);
      /* Rows are printed as each file finishes. */
      fputs (out->str, stdout);
      fflush (stdout);
      g_string_truncate (out, 0);
      if (s == 2)
        return 2;
      status = MAX (status, s);
    }
  /* Only validation files show how well the model predicts: the roles
   * apart, every case of a role counting once; collectives apart from
   * training runs, whose totals they would blur. */
  for (int kind = 0; argc > 2 && kind < VALIDATION_KIND_N; kind++)
    for (int role = 0; role < ROLE_N; role++)
      {
        const RoleTotal *t = &by_role[kind][role];
        if (t->files > 0)
          fprintf (csv ? stderr : stdout, "%s%srole %s: %d files, %d cases: MAPE "
                   "%.1f%%, max %.1f%%, mean signed error %+.1f%%\n",
                   kind == VALIDATION_TRAINING ? ""
                   : spec_enum_name (SPEC_ENUM_VALIDATION_KIND, kind),
                   kind == VALIDATION_TRAINING ? "" : ", ",
                   spec_enum_name (SPEC_ENUM_ROLE, role), t->files, t->score.n,
                   score_mape (&t->score), t->score.max_abs,
                   score_mean_signed (&t->score));
      }
  return status;
}
