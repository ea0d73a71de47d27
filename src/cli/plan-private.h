/* plan-private.h: what the pieces of `trainsim plan` share: cmd-plan.c
 * (one run, and the command), cmd-plan-budget.c (budget mode and the cost
 * table). */
#pragma once

#include <glib.h>
#include "output/report.h"

/* Everything the command reports, in the order JSON and CSV give it. */
typedef struct {
  char *model, *topology, *framework, *label;
  GPtrArray *sets;
  int gpus, nodes, plans_fit, trials, seed;
  gboolean young_daly;
  double parameters, tokens;
  double iteration_time_s, tokens_per_s, model_tflops_per_gpu, mfu;
  double days, gpu_hours, cost_usd;
  double checkpoint_bytes, checkpoint_write_s, checkpoint_read_s;
  double checkpoint_interval_s, mtbf_h, gpu_failures_per_hour,
         node_failures_per_hour, detection_s, restart_s;
  double failures, days_with_failures, days_with_failures_p10,
         days_with_failures_p90, days_expected, days_first_order;
  double gpu_hours_with_failures, cost_usd_with_failures;
  double gpu_step_w, pue, energy_mwh, energy_mwh_with_failures;
  double co2_t, co2_t_with_failures;   /* NAN without a grid intensity */
} Outcome;

void outcome_clear (Outcome *o);

/* O as JSON (one object) or CSV (a header and a row), appended to OUT. */
void append_rows (GString *out, const Outcome *o, ReportFormat format);

/* Budget mode's *STATUS (never an exit status) for a size that no plan
 * can hold with the values --set holds, where 1 is one that none fits in
 * memory. */
#define PLAN_NONE_HOLDS 3

/* Plans the run of the experiment PATH under SETS into *O: FALSE, with
 * *STATUS the exit status, when it cannot (said on stderr unless QUIET
 * and no plan fits). */
gboolean plan_run (const char *path, const char *const *sets, int jobs,
                   gboolean as_written, gboolean quiet, Outcome *o,
                   int *status);

/* Budget mode: what a run may spend, in one of three measures. */
typedef struct {
  const char *flag;       /* "--budget-usd" */
  double limit;
  gsize spent;            /* the Outcome member it is held against */
  const char *unit;
} Budget;

/* Budget mode (cmd-plan-budget.c): the exit status. */
int plan_budget (const char *path, const char *const *sets, int jobs,
                 const char *family, const Budget *b, ReportFormat format,
                 const char *output);

/* The cost table's default MFU: what the seed's rows imply (cmd-plan-budget.c). */
#define PLAN_TABLE_MFU 0.45

/* The cost table (cmd-plan-budget.c): compute-optimal models of FAMILY,
 * their ideal cost at MFU, the published figures, the simulated cost; the
 * exit status. */
int plan_table (const char *path, const char *const *sets, int jobs,
                const char *family, double mfu, ReportFormat format,
                const char *output);
