/* cmd-plan-budget.c: `trainsim plan`'s budget mode (the family's
 * compute-optimal model for a budget, simulated) and its cost table (the
 * ideal cost of compute-optimal models as cost tables compute it, beside
 * the simulated one). */
#include "cli/cli.h"
#include "cli/plan-private.h"
#include "base/text.h"
#include "config/config.h"
#include "parallel/plan.h"
#include "sweep/family.h"
#include <math.h>
#include <string.h>


static double
budget_spent (const Budget *b, const Outcome *o)
{
  return G_STRUCT_MEMBER (double, o, b->spent);
}

static int
by_parameters (gconstpointer a, gconstpointer b)
{
  const Outcome *x = a, *y = b;
  return (x->parameters > y->parameters) - (x->parameters < y->parameters);
}

/* The --set lines of one size of budget mode, NULL-terminated: the model
 * NAME on Chinchilla's tokens, then SETS, which apply to every size
 * (model.seq_len, say; set before the size, they were dropped with the
 * model they changed), then SHAPE's, where the family's rule built it. */
static GPtrArray *
size_sets (const char *name, const char *const *sets, const ModelSpec *shape)
{
  GPtrArray *all = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (all, g_strconcat ("model=", name, NULL));
  g_ptr_array_add (all, g_strdup ("training.tokens=chinchilla"));
  for (int k = 0; sets && sets[k]; k++)
    g_ptr_array_add (all, g_strdup (sets[k]));
  if (shape)
    {
      g_ptr_array_add (all, g_strdup_printf ("model.layers=%d", shape->layers));
      g_ptr_array_add (all, g_strdup_printf ("model.hidden=%d", shape->hidden));
      g_ptr_array_add (all, g_strdup_printf ("model.heads=%d", shape->heads));
      g_ptr_array_add (all, g_strdup_printf ("model.kv_heads=%d",
                                             shape->kv_heads));
      g_ptr_array_add (all, g_strdup_printf ("model.ffn_hidden=%d",
                                             shape->ffn_hidden));
    }
  g_ptr_array_add (all, NULL);
  return all;
}

/* Plans one size of budget mode under its --set lines ALL (size_sets)
 * into *O, whose own --set lines then replay it: ALL first, as planned. */
static gboolean
plan_size (const char *path, GPtrArray *all, int jobs, Outcome *o,
           int *status)
{
  *o = (Outcome) { NULL };
  if (!plan_run (path, (const char *const *) all->pdata, jobs, FALSE, TRUE, o,
                 status))
    {
      outcome_clear (o);
      return FALSE;
    }
  for (guint k = 0; k + 1 < all->len; k++)
    g_ptr_array_insert (o->sets, (gint) k, g_strdup (g_ptr_array_index (all, k)));
  return TRUE;
}

/* The compute-optimal size for the budget B at O's FLOPs per unit of it:
 * C = 6 N D with D = TPP N, so N* = sqrt (C / (6 TPP)). */
static double
optimum_at (const Budget *b, const Outcome *o, double tpp)
{
  double rate = 6 * o->parameters * o->tokens / budget_spent (b, o);
  return sqrt (rate * b->limit / (6 * tpp));
}

/* Into *SHAPE, the size of N parameters that the family's rule builds
 * from LARGEST; FALSE, said on stderr, when it builds none. */
static gboolean
rule_builds (const Budget *b, const ModelSpec *largest, double n,
             ModelSpec *shape)
{
  g_autofree char *why = NULL;
  if (family_rule_build (largest, n, shape, &why))
    return TRUE;
  cli_printerr ("trainsim plan: %s %.15g: the compute-optimal size: %s",
                b->flag, b->limit, why);
  return FALSE;
}

/* Budget mode's compute-optimal run: the family's rule (sweep/family.h)
 * builds N* from LARGEST, the size is planned, and its simulated FLOPs
 * per unit of budget give the next N*, until the rule builds a shape
 * planned already, at most 8 rounds. The speed moves little with the
 * size, but with the layers that the stages divide: on selene the rounds
 * for $1M circle among 65 to 68 layers, within 4 % of the budget. N0
 * starts it. *CHOSEN: of the sizes planned, the largest whose run fits
 * the budget, else the cheapest; *N_STAR the optimum at its speed;
 * *ROUNDS the sizes planned. FALSE with *STATUS the exit status, said on
 * stderr. */
static gboolean
plan_optimum (const char *path, const char *const *sets, int jobs,
              const Budget *b, const ModelSpec *largest, double tpp,
              double n0, Outcome *chosen, double *n_star, int *rounds,
              int *status)
{
  g_autoptr (GArray) planned = g_array_new (FALSE, TRUE, sizeof (Outcome));
  g_autoptr (GArray) shapes = g_array_new (FALSE, TRUE, sizeof (ModelSpec));
  double n = n0;
  gboolean ok = TRUE;
  while (ok && planned->len < 8)
    {
      ModelSpec shape;
      if (!rule_builds (b, largest, n, &shape))
        {
          *status = 2;
          ok = FALSE;
          break;
        }
      gboolean seen = FALSE;
      for (guint i = 0; i < shapes->len; i++)
        {
          const ModelSpec *s = &g_array_index (shapes, ModelSpec, i);
          seen = seen || (s->layers == shape.layers && s->hidden == shape.hidden);
        }
      if (seen)
        break;
      g_array_append_val (shapes, shape);
      g_autoptr (GPtrArray) all = size_sets (largest->name, sets, &shape);
      Outcome o;
      if (!plan_size (path, all, jobs, &o, status))
        {
          if (*status == 1 || *status == PLAN_NONE_HOLDS)
            cli_printerr ("trainsim plan: %s %.15g: the compute-optimal size, "
                          "%.3g parameters (%d layers, hidden %d), %s",
                          b->flag, b->limit, n, shape.layers, shape.hidden,
                          *status == 1 ? "fits in memory on no plan"
                          : "no plan can hold with the --set values");
          *status = MIN (*status, 2);
          ok = FALSE;
          break;
        }
      g_array_append_val (planned, o);
      n = optimum_at (b, &o, tpp);
    }
  int pick = -1;
  for (guint i = 0; ok && i < planned->len; i++)
    {
      const Outcome *o = &g_array_index (planned, Outcome, i);
      const Outcome *p = pick < 0 ? NULL : &g_array_index (planned, Outcome, pick);
      gboolean fits = budget_spent (b, o) <= b->limit;
      gboolean p_fits = p && budget_spent (b, p) <= b->limit;
      if (p == NULL
          || (fits && (!p_fits || o->parameters > p->parameters))
          || (!fits && !p_fits && budget_spent (b, o) < budget_spent (b, p)))
        pick = (int) i;
    }
  for (guint i = 0; i < planned->len; i++)
    if ((int) i == pick)
      *chosen = g_array_index (planned, Outcome, i);
    else
      outcome_clear (&g_array_index (planned, Outcome, i));
  if (ok)
    {
      *n_star = optimum_at (b, chosen, tpp);
      *rounds = (int) planned->len;
    }
  return ok;
}

/* A size the family's rule built, named by its family and size
 * ("gpt3-53.6b"), in place of the template's name in O. */
static void
name_built (Outcome *o, const char *family)
{
  g_autofree char *size = report_fmt_count (o->parameters);
  g_autofree char *lower = g_ascii_strdown (size, -1);
  g_free (o->model);
  o->model = g_strconcat (family, "-", lower, NULL);
}

/* The published models of FAMILY (models/FAMILY-*), sorted by name; NULL,
 * said on stderr, for a family with none, or --set lines that WHAT (a
 * budget, the cost table), which sets each size's model and tokens,
 * cannot take. */
static GPtrArray *
family_names (const char *path, const char *const *sets, const char *family,
              const char *what)
{
  g_autofree char *families = NULL;
  g_autoptr (GPtrArray) names = config_model_family (path, family, &families);
  if (names->len == 0)
    {
      g_autofree char *shown = text_shown (family);
      cli_printerr ("trainsim plan: --family %s: no models named %s-* "
                    "(families: %s)", shown, shown, families);
      return NULL;
    }
  for (int k = 0; sets && sets[k]; k++)
    if (g_str_has_prefix (sets[k], "model=")
        || g_str_has_prefix (sets[k], "training.tokens="))
      {
        cli_printerr ("trainsim plan: --set %s: %s plans each size of the "
                      "family (--family) on Chinchilla's tokens; --set model.KEY "
                      "changes every size, training.tokens_per_parameter the "
                      "tokens", sets[k], what);
        return NULL;
      }
  return g_steal_pointer (&names);
}

/* Into *LARGEST, the largest of the published NAMES under SETS (zeroed
 * when none loads: one that does not fails its plan, saying why), whose
 * shape the family's rule keeps. FALSE, said on stderr, for a family of
 * mixtures of experts: Chinchilla's 20 tokens a parameter and the rule's
 * shapes are dense models' (Hoffmann et al. 2022 trained dense models
 * only). */
static gboolean
family_largest (const char *path, const char *const *sets,
                const GPtrArray *names, ExperimentSpec *largest)
{
  double largest_n = 0;
  *largest = (ExperimentSpec) { 0 };
  for (guint i = 0; i < names->len; i++)
    {
      g_autoptr (GPtrArray) all = size_sets (g_ptr_array_index (names, i),
                                             sets, NULL);
      ExperimentSpec e;
      if (!config_load_experiment (path, (const char *const *) all->pdata, &e,
                                   NULL))
        continue;
      if (plan_model_params (&e.model) > largest_n)
        {
          largest_n = plan_model_params (&e.model);
          experiment_spec_clear (largest);
          *largest = e;
        }
      else
        experiment_spec_clear (&e);
    }
  if (largest->model.experts > 0)
    {
      g_autofree char *shown = text_shown (largest->model.name);
      cli_printerr ("trainsim plan: %s is a mixture of experts: budget mode "
                    "and the cost table size dense models (Chinchilla's "
                    "tokens, the family's dense rule); plan one MoE model "
                    "with trainsim plan instead", shown);
      experiment_spec_clear (largest);
      return FALSE;
    }
  return TRUE;
}

/* Budget mode: each published model of FAMILY (models/FAMILY-*) planned
 * on Chinchilla's tokens (the experiment's tokens_per_parameter, default
 * 20: D = 20 N), beside the compute-optimal one that the family's rule
 * builds (plan_optimum). With compute C = 6 N D = 120 N^2 growing as N^2,
 * the optimum for the compute the budget buys is N* = sqrt (C / 120)
 * (Hoffmann et al. 2022, Table 3: its FLOPs are 6 N D, and sqrt (C / 120)
 * is within 4 % above its N at every size, 400M to 10T); the search
 * starts at the largest published size within the budget, its FLOPs per
 * unit of budget, and goes on at the built size's own. */
int
plan_budget (const char *path, const char *const *sets, int jobs,
             const char *family, const Budget *b, ReportFormat format,
             const char *output)
{
  g_autoptr (GPtrArray) names = family_names (path, sets, family, "a budget");
  if (names == NULL)
    return 2;
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (Outcome));
  g_autoptr (GPtrArray) unfit = g_ptr_array_new_with_free_func (g_free);
  guint held = 0;   /* of UNFIT, sizes no plan can hold with the --set values */
  ExperimentSpec largest;
  if (!family_largest (path, sets, names, &largest))
    return 2;
  /* The largest first: within the budget it is where the search starts
   * (below), and an optimum beyond what the rule builds from it is said
   * before the other sizes are planned. */
  for (guint i = 0; largest.model.name && i < names->len; i++)
    if (g_strcmp0 (g_ptr_array_index (names, i), largest.model.name) == 0)
      {
        gpointer first = g_ptr_array_steal_index (names, i);
        g_ptr_array_insert (names, 0, first);
        break;
      }
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autoptr (GPtrArray) all = size_sets (name, sets, NULL);
      Outcome o;
      int status;
      if (plan_size (path, all, jobs, &o, &status))
        {
          g_array_append_val (rows, o);
          ModelSpec shape;
          if (i == 0 && budget_spent (b, &o) <= b->limit
              && !rule_builds (b, &largest.model,
                               optimum_at (b, &o, o.tokens / o.parameters),
                               &shape))
            {
              for (guint k = 0; k < rows->len; k++)
                outcome_clear (&g_array_index (rows, Outcome, k));
              experiment_spec_clear (&largest);
              return 2;
            }
        }
      else
        {
          if (status != 1 && status != PLAN_NONE_HOLDS)
            {
              experiment_spec_clear (&largest);
              return status;
            }
          held += status == PLAN_NONE_HOLDS;
          g_autofree char *shown = text_shown (name);
          g_ptr_array_add (unfit, g_strdup_printf (
            "%-12s %s", shown, status == 1 ? "no plan fits in memory"
            : "no plan can hold the --set values (trainsim run says why)"));
        }
    }
  g_array_sort (rows, by_parameters);
  int best = -1;
  for (guint i = 0; i < rows->len; i++)
    if (budget_spent (b, &g_array_index (rows, Outcome, i)) <= b->limit)
      best = (int) i;
  if (best < 0)
    {
      const Outcome *least = rows->len ? &g_array_index (rows, Outcome, 0) : NULL;
      if (least)
        cli_printerr ("trainsim plan: %s %.15g is too small for any model of "
                      "family %s: the smallest, %s, needs %.4g %s",
                      b->flag, b->limit, family, least->model,
                      budget_spent (b, least), b->unit);
      else if (held == 0)
        cli_printerr ("trainsim plan: no model of family %s fits in "
                      "memory", family);
      else
        cli_printerr ("trainsim plan: no model of family %s fits in memory "
                      "or can hold the --set values (%u of them cannot); trainsim "
                      "run with those values says why", family, held);
      for (guint i = 0; i < rows->len; i++)
        outcome_clear (&g_array_index (rows, Outcome, i));
      experiment_spec_clear (&largest);
      return 2;
    }
  const Outcome *start = &g_array_index (rows, Outcome, best);
  double tpp = start->tokens / start->parameters;
  Outcome chosen;
  double n_star;
  int rounds, status;
  gboolean ok = plan_optimum (path, sets, jobs, b, &largest.model, tpp,
                              optimum_at (b, start, tpp), &chosen, &n_star,
                              &rounds, &status);
  g_autofree char *template = g_strdup (largest.model.name);
  experiment_spec_clear (&largest);
  if (!ok)
    {
      for (guint i = 0; i < rows->len; i++)
        outcome_clear (&g_array_index (rows, Outcome, i));
      return status;
    }
  /* The built size, named by its family and size, among the published;
   * where the rule built a published shape (the same parameters), that
   * row is the chosen one. */
  const GPtrArray *chosen_sets = chosen.sets;
  gboolean published = FALSE;
  for (guint i = 0; i < rows->len && !published; i++)
    if (g_array_index (rows, Outcome, i).parameters == chosen.parameters)
      {
        chosen_sets = g_array_index (rows, Outcome, i).sets;
        published = TRUE;
      }
  if (published)
    outcome_clear (&chosen);
  else
    {
      name_built (&chosen, family);
      g_array_append_val (rows, chosen);
      g_array_sort (rows, by_parameters);
    }
  const Outcome *below = NULL, *above = NULL, *c = NULL;
  int width = 12;   /* the model column: its longest name */
  for (guint i = 0; i < rows->len; i++)
    {
      const Outcome *r = &g_array_index (rows, Outcome, i);
      g_autofree char *shown = text_shown (r->model);
      width = MAX (width, (int) strlen (shown));
      if (r->sets == chosen_sets)
        c = r;
      else if (c == NULL)
        below = r;
      else if (above == NULL)
        above = r;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  if (format == REPORT_TABLE)
    {
      /* The names from the input, shown (base/text.h). */
      g_autofree char *family_shown = text_shown (family);
      g_autofree char *topology = text_shown (c->topology);
      g_string_append_printf (out, "trainsim plan %s %.15g: family %s, %.3g "
                              "tokens a parameter, on %s, %d GPUs\n", b->flag,
                              b->limit, family_shown, tpp, topology, c->gpus);
      g_string_append_printf (out, "  %-*s %10s %10s %9s %9s %11s %15s\n",
                              width, "model", "params", "tokens", "days",
                              "+failures", "GPU-hours", "cost");
      for (guint i = 0; i < rows->len; i++)
        {
          const Outcome *r = &g_array_index (rows, Outcome, i);
          g_autofree char *usd = report_fmt_usd (r->cost_usd_with_failures);
          g_autofree char *gpuh = report_fmt_si (r->gpu_hours_with_failures);
          g_autofree char *params = report_fmt_count (r->parameters);
          g_autofree char *tokens = report_fmt_count (r->tokens);
          g_autofree char *model = text_shown (r->model);
          g_string_append_printf (out, "%s %-*s %10s %10s %9.*g %9.*g "
                                  "%11s %15s\n", r == c ? "*" : " ",
                                  width, model, params, tokens,
                                  r->days < 1000 ? 3 : 4, r->days,
                                  r->days_with_failures < 1000 ? 3 : 4,
                                  r->days_with_failures, gpuh, usd);
        }
      for (guint i = 0; i < unfit->len; i++)
        g_string_append_printf (out, "  %s\n", (const char *) g_ptr_array_index (unfit, i));
      g_autofree char *params_star = report_fmt_count (n_star);
      g_autofree char *tokens_star = report_fmt_count (tpp * n_star);
      g_autofree char *model = text_shown (c->model);
      g_autofree char *shown_template = text_shown (template);
      g_autofree char *label = text_shown (c->label);
      g_string_append_printf (out, "  compute-optimal at %s's simulated FLOPs "
                              "per %s: %s parameters on %s tokens (%d round%s)\n",
                              model, b->unit, params_star, tokens_star, rounds,
                              rounds == 1 ? "" : "s");
      g_string_append_printf (out, "  * %s: %s %s (%s), %.1f %% of the "
                              "budget;\n", model, published
                              ? "the published shape, which the rule builds from"
                              : "built by the family's rule from",
                              shown_template, label,
                              100 * budget_spent (b, c) / b->limit);
      g_autofree char *near_below = below ? text_shown (below->model) : NULL;
      g_autofree char *near_above = above ? text_shown (above->model) : NULL;
      g_string_append_printf (out, "    the nearest published: %s below, %s "
                              "above\n", below ? near_below : "none",
                              above ? near_above : "none");
    }
  else
    {
      for (guint i = 0; i < rows->len; i++)
        {
          g_autoptr (GString) row = g_string_new (NULL);
          append_rows (row, &g_array_index (rows, Outcome, i), format);
          /* CSV: the header once, then a row per size; JSON: a line each. */
          const char *body = format == REPORT_CSV && i > 0
                             ? strchr (row->str, '\n') + 1 : row->str;
          g_string_append (out, body);
        }
      /* JSON: a last line, the optimum and the size chosen for it. */
      if (format == REPORT_JSON)
        {
          g_string_append (out, "{\"optimum\": {\"parameters\": ");
          report_append_number (out, n_star);
          g_string_append (out, ", \"tokens\": ");
          report_append_number (out, tpp * n_star);
          g_string_append_printf (out, ", \"rounds\": %d}, \"chosen\": "
                                  "{\"model\": ", rounds);
          report_append_json_string (out, c->model);
          g_string_append (out, ", \"built_from\": ");
          report_append_json_string (out, template);
          const struct { const char *key; double v; } fields[] = {
            { "parameters", c->parameters }, { "tokens", c->tokens },
            { "cost_usd", c->cost_usd_with_failures },
            { "gpu_hours", c->gpu_hours_with_failures },
            { "days", c->days_with_failures },
          };
          for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
            {
              g_string_append_printf (out, ", \"%s\": ", fields[i].key);
              report_append_number (out, fields[i].v);
            }
          g_string_append (out, "}, \"nearest\": {\"below\": ");
          if (below)
            report_append_json_string (out, below->model);
          else
            g_string_append (out, "null");
          g_string_append (out, ", \"above\": ");
          if (above)
            report_append_json_string (out, above->model);
          else
            g_string_append (out, "null");
          g_string_append (out, "}}\n");
        }
    }
  g_autoptr (GError) error = NULL;
  status = report_write (output, out, &error) ? 0 : cli_fail (error);
  for (guint i = 0; i < rows->len; i++)
    outcome_clear (&g_array_index (rows, Outcome, i));
  return status;
}

/* ---- the cost table ----------------------------------------------------
 *
 * Cost tables of compute-optimal training price a model of N parameters on
 * D = 20 N tokens (Hoffmann et al. 2022) at 6 N D FLOPs, run at a flat MFU
 * of the GPU's peak, at a price per GPU-hour: no recomputation, no
 * checkpoints, no failures. The table prints that ideal cost beside the
 * published figures and beside trainsim's own: the model built by the
 * family's rule, its fastest plan on the experiment's cluster, its
 * simulated speed, then checkpoints and failures (the goodput model).
 *
 * The published rows: the seed material of this project prints, at $1.5
 * per A100-hour, GPT-30B at about $326k and GPT-70B at about $1.75M, and
 * beside them MosaicML's quoted $450k and $2.5M (A. Venigalla and L. Li,
 * "Mosaic LLMs: GPT-3 quality for <$500k", MosaicML blog, 2022-09-29: "it
 * costs about $450K to train a model that reaches GPT-3 quality", its
 * 30B). The seed's table does not state its MFU; under 6 N D FLOPs and
 * D = 20 N its rows imply 0.442 and 0.449 of the A100's 312 TFLOP/s, and
 * PLAN_TABLE_MFU (plan-private.h), 0.45, gives both within 2 %
 * (tests/plan.sh). */

typedef struct {
  double parameters;
  double seed_usd, mosaicml_usd;   /* 0: none published */
} TableRow;

static const TableRow table_rows[] = {
  { 1.3e9, 0, 0 }, { 2.7e9, 0, 0 }, { 6.7e9, 0, 0 }, { 13e9, 0, 0 },
  { 30e9, 326e3, 450e3 }, { 70e9, 1.75e6, 2.5e6 }, { 175e9, 0, 0 },
  { 1e12, 0, 0 },
};

/* One row of the table: the nominal size, the ideal run, the simulated
 * one (NULL MODEL where it could not be planned, WHY saying so). */
typedef struct {
  TableRow row;
  double tokens, ideal_gpu_hours, ideal_usd;
  Outcome sim;
  char *why;   /* owned */
} TableLine;

static void
append_money (GString *out, double usd, int width)
{
  g_autofree char *text = usd > 0 ? report_fmt_usd (usd) : g_strdup ("-");
  g_string_append_printf (out, " %*s", width, text);
}

static void
append_table_text (GString *out, const char *family, const ExperimentSpec *e,
                   double mfu, double tpp, const GArray *lines)
{
  g_autofree char *family_shown = text_shown (family);
  g_autofree char *topology = text_shown (e->topology.name);
  g_string_append_printf (out, "trainsim plan --table: compute-optimal models "
                          "of family %s on %s, %d GPUs\n", family_shown,
                          topology, e->gpus);
  g_string_append_printf (out, "  ideal: 6 N D FLOPs, D = %.3g N tokens, at "
                          "MFU %.3g of %.4g TFLOP/s (%s), $%.3g per GPU-hour\n",
                          tpp, mfu,
                          e->topology.gpu.peak_flops[e->training.precision] / 1e12,
                          spec_enum_name (SPEC_ENUM_PRECISION,
                                          e->training.precision),
                          e->cost.gpu_hour_usd);
  g_string_append (out, "  simulated: the family's rule, the fastest plan, "
                   "checkpoints and failures\n");
  g_string_append_printf (out, "  %-8s %8s %12s %12s %12s %12s %9s %5s  %s\n",
                          "params", "tokens", "ideal", "seed table",
                          "MosaicML", "simulated", "days", "MFU", "plan");
  for (guint i = 0; i < lines->len; i++)
    {
      const TableLine *l = &g_array_index (lines, TableLine, i);
      g_autofree char *params = report_fmt_count (l->row.parameters);
      g_autofree char *tokens = report_fmt_count (l->tokens);
      g_string_append_printf (out, "  %-8s %8s", params, tokens);
      append_money (out, l->ideal_usd, 12);
      append_money (out, l->row.seed_usd, 12);
      append_money (out, l->row.mosaicml_usd, 12);
      if (l->sim.model == NULL)
        {
          g_string_append_printf (out, " %12s  %s\n", "-", l->why);
          continue;
        }
      append_money (out, l->sim.cost_usd_with_failures, 12);
      g_autofree char *label = text_shown (l->sim.label);
      g_string_append_printf (out, " %9.*g %5.3f  %s\n",
                              l->sim.days_with_failures < 1000 ? 3 : 4,
                              l->sim.days_with_failures, l->sim.mfu, label);
    }
}

/* One field of a table row: its key in JSON, a comma before all but the
 * first. */
static void
append_key (GString *out, gboolean csv, gboolean first, const char *key)
{
  if (!first)
    g_string_append (out, csv ? "," : ", ");
  if (!csv)
    g_string_append_printf (out, "\"%s\": ", key);
}

/* A number, NAN an empty CSV cell or JSON's null. */
static void
append_num (GString *out, gboolean csv, const char *key, double v)
{
  append_key (out, csv, FALSE, key);
  if (!report_append_number (out, v) && !csv)
    g_string_append (out, "null");
}

/* A text, NULL an empty CSV cell or JSON's null. */
static void
append_text (GString *out, gboolean csv, const char *key, const char *text)
{
  append_key (out, csv, FALSE, key);
  if (csv)
    report_append_csv_cell (out, text ? text : "");
  else if (text)
    report_append_json_string (out, text);
  else
    g_string_append (out, "null");
}

/* JSON: a line a row; CSV: a header and a row each. Each row says the
 * ideal's assumptions: MFU, the GPU's peak FLOP/s, the price. */
static void
append_table_rows (GString *out, const GArray *lines, double mfu, double peak,
                   double price, ReportFormat format)
{
  gboolean csv = format == REPORT_CSV;
  if (csv)
    g_string_append (out, "parameters,tokens,ideal_mfu,peak_flops,"
                     "gpu_hour_usd,ideal_gpu_hours,ideal_cost_usd,"
                     "seed_cost_usd,mosaicml_cost_usd,model,model_parameters,"
                     "plan,mfu,days,days_with_failures,cost_usd,"
                     "cost_usd_with_failures,why\n");
  for (guint i = 0; i < lines->len; i++)
    {
      const TableLine *l = &g_array_index (lines, TableLine, i);
      const Outcome *o = &l->sim;
      gboolean sim = o->model != NULL;
      g_string_append (out, csv ? "" : "{");
      append_key (out, csv, TRUE, "parameters");
      report_append_number (out, l->row.parameters);
      append_num (out, csv, "tokens", l->tokens);
      append_num (out, csv, "ideal_mfu", mfu);
      append_num (out, csv, "peak_flops", peak);
      append_num (out, csv, "gpu_hour_usd", price);
      append_num (out, csv, "ideal_gpu_hours", l->ideal_gpu_hours);
      append_num (out, csv, "ideal_cost_usd", l->ideal_usd);
      append_num (out, csv, "seed_cost_usd",
                  l->row.seed_usd > 0 ? l->row.seed_usd : NAN);
      append_num (out, csv, "mosaicml_cost_usd",
                  l->row.mosaicml_usd > 0 ? l->row.mosaicml_usd : NAN);
      append_text (out, csv, "model", o->model);
      append_num (out, csv, "model_parameters", sim ? o->parameters : NAN);
      append_text (out, csv, "plan", o->label);
      append_num (out, csv, "mfu", sim ? o->mfu : NAN);
      append_num (out, csv, "days", sim ? o->days : NAN);
      append_num (out, csv, "days_with_failures",
                  sim ? o->days_with_failures : NAN);
      append_num (out, csv, "cost_usd", sim ? o->cost_usd : NAN);
      append_num (out, csv, "cost_usd_with_failures",
                  sim ? o->cost_usd_with_failures : NAN);
      append_text (out, csv, "why", l->why);
      g_string_append (out, csv ? "\n" : "}\n");
    }
}

int
plan_table (const char *path, const char *const *sets, int jobs,
            const char *family, double mfu, ReportFormat format,
            const char *output)
{
  g_autoptr (GPtrArray) names = family_names (path, sets, family,
                                              "the cost table");
  if (names == NULL)
    return 2;
  ExperimentSpec largest;
  if (!family_largest (path, sets, names, &largest))
    return 2;
  if (largest.model.name == NULL)
    {
      /* None loads: the first one's error says why. */
      g_autoptr (GPtrArray) all = size_sets (g_ptr_array_index (names, 0),
                                             sets, NULL);
      g_autoptr (GError) error = NULL;
      ExperimentSpec e;
      if (!config_load_experiment (path, (const char *const *) all->pdata, &e,
                                   &error))
        return cli_fail (error);
      experiment_spec_clear (&e);
      return 2;
    }
  double peak = largest.topology.gpu.peak_flops[largest.training.precision];
  double tpp = largest.training.tokens_per_parameter;
  double price = largest.cost.gpu_hour_usd;
  g_autoptr (GArray) lines = g_array_new (FALSE, TRUE, sizeof (TableLine));
  int status = 0;
  for (guint i = 0; i < G_N_ELEMENTS (table_rows) && status == 0; i++)
    {
      TableLine l = { .row = table_rows[i] };
      double n = l.row.parameters;
      l.tokens = tpp * n;
      l.ideal_gpu_hours = 6 * n * l.tokens / (mfu * peak) / 3600;
      l.ideal_usd = l.ideal_gpu_hours * price;
      ModelSpec shape;
      g_autofree char *why = NULL;
      if (!family_rule_build (&largest.model, n, &shape, &why))
        l.why = g_steal_pointer (&why);
      else
        {
          g_autoptr (GPtrArray) all = size_sets (largest.model.name, sets,
                                                 &shape);
          int st;
          if (!plan_size (path, all, jobs, &l.sim, &st))
            {
              if (st != 1 && st != PLAN_NONE_HOLDS)
                status = st;
              l.why = g_strdup (st == 1 ? "no plan fits in memory"
                                : "no plan can hold the --set values");
            }
          else
            name_built (&l.sim, family);
        }
      g_array_append_val (lines, l);
    }
  if (status == 0)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      if (format == REPORT_TABLE)
        append_table_text (out, family, &largest, mfu, tpp, lines);
      else
        append_table_rows (out, lines, mfu, peak, price, format);
      g_autoptr (GError) error = NULL;
      status = report_write (output, out, &error) ? 0 : cli_fail (error);
    }
  for (guint i = 0; i < lines->len; i++)
    {
      TableLine *l = &g_array_index (lines, TableLine, i);
      outcome_clear (&l->sim);
      g_free (l->why);
    }
  experiment_spec_clear (&largest);
  return status;
}
