/* plansearch.h: the walk over plans that `trainsim search` prints and
 * `trainsim plan` takes the fastest of.
 *
 * It walks tp (divisors of the heads that fit a node), pp (that divides
 * the GPUs; when it does not divide the layers, they are split as evenly
 * as they go, plan_balanced_stages), dp (what is left of the GPUs), the
 * micro-batch (divisors of the per-replica batch up to 16) and the
 * virtual stages (interleaving, up to 8 chunks per stage, even stages).
 * For each layout it picks the least recompute that fits in memory
 * (none, selective, full: each costs compute), replays each ZeRO stage
 * that fits with it, and keeps sequence parallelism on with tp > 1 (it
 * only removes work). For a mixture of experts it walks ep (divisors of
 * the experts) with etp the framework's default. For a sequence of
 * 8192 tokens or more it walks cp (1, 2, 4, ... while 2 cp divides the
 * sequence; the experiment's cp kind), else keeps the experiment's cp. Only plans the experiment's framework runs are
 * offered (plan_check holds its rules). Candidates run on a pool of
 * threads; the ranking is deterministic whatever the threads: by
 * iteration time, then by the order of enumeration.
 *
 * Candidates replay in the order of a lower bound on their step
 * (sim_plan_bound), and one whose bound exceeds the time of the KEEP-th
 * fastest replayed so far is not replayed (pruned): it cannot rank among
 * the KEEP fastest, which come out as an unpruned walk ranks them. */
#pragma once

#include <glib.h>
#include "config/spec.h"
#include "parallel/result.h"

typedef struct {
  ExperimentSpec spec;    /* shallow: shares the base's strings */
  SimResult result;       /* unset where pruned */
  gboolean ok;            /* fits in memory, and replayed or pruned */
  gboolean pruned;        /* not replayed: its bound rules it out */
  gboolean fails;         /* its replay is sure to fail (SimBound) */
  double bound_s;         /* sim_plan_bound's step */
  guint index;            /* in the order of enumeration */
} PlanCandidate;

/* Walks the plans of BASE, holding fixed the axes that SETS (the --set
 * "key=value" strings BASE was loaded with, or NULL) name: parallel.tp,
 * pp, dp, micro_batch, virtual_stages, sequence_parallel,
 * training.recompute, zero.stage, parallel.ep, parallel.etp and
 * parallel.cp. Replays them on JOBS threads (> 0),
 * drawing the progress line in "plans" on a terminal, and returns them
 * ranked, those that fit first (*N_OK of them, of which the first
 * MIN (KEEP, *N_OK) replayed, the pruned ones after those replayed, by
 * index); *N_VALID counts the plans the framework runs, fitting in memory
 * or not (0: the values held rule out every plan); *N_PRUNED (unless
 * NULL) those not replayed. KEEP 0, or TRAINSIM_NO_PRUNE set and not
 * empty in the environment, replays every plan. A pruned plan counts
 * among those that fit: its replay could only fail on absurd inputs (an
 * op of more than a day in a collective, or a step of more than 106
 * days), which would leave it out of *N_OK in an unpruned walk. The
 * candidates share BASE's strings: BASE must outlive the array. */
/* --set's help in the commands that search. */
#define PLANSEARCH_SET_HELP \
  "Override a value of the experiment (repeatable); on an axis of the " \
  "search (parallel.tp, pp, dp, micro_batch, virtual_stages, " \
  "sequence_parallel, training.recompute, zero.stage, ep, etp, cp) it " \
  "holds the axis at that value"
GArray *plansearch_run (const ExperimentSpec *base, const char *const *sets,
                        int jobs, guint keep, guint *n_ok, guint *n_valid,
                        guint *n_pruned);

/* "tp 4 pp 12 dp 8 mb 2 v 1, recompute full, zero 1, sp", and with
 * uneven stages their layers as runs: "stages 5,6x10,5". Owned by the
 * caller. */
char *plansearch_label (const PlanCandidate *c);
/* The --set arguments ("parallel.tp=4", ...) that make `trainsim run`
 * replay the plan: every axis the search walks. */
GPtrArray *plansearch_sets (const PlanCandidate *c);
