/* budget.h: what replaying a plan costs the simulator itself, estimated
 * before it builds anything, and the budgets that bound it.
 *
 * A plan's op graph is held whole while it replays: its memory grows
 * with the simulated ranks (every GPU with --full, one per stage without)
 * times micro-batches times layers. An absurd plan (268 M micro-batches,
 * a billion GPUs with --full) would ask for more memory than the machine
 * has, or run for days; the budget turns it into an error for that plan
 * (exit 2 for `run`, an infeasible row in `sweep`) before any of it is
 * allocated. The defaults suit a laptop; TRAINSIM_MAX_SIM_MEMORY (a size
 * with its unit, such as 16GiB), TRAINSIM_MAX_EVENTS (a count, such as
 * 5e9) and TRAINSIM_MAX_TRACE (a size: the trace file's) raise or lower
 * them. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "parallel/plan.h"
#include "parallel/sim.h"

/* Default budgets: 4 GiB holds about 65 million ops at once (GPT-3 175B
 * with --full and 192 micro-batches per pipeline holds some 700 a GPU:
 * 0.8 GiB on 16,384 GPUs); a billion events take some ten minutes of one
 * core. */
#define SIM_BUDGET_MEMORY (4.0 * 1024 * 1024 * 1024)
#define SIM_BUDGET_EVENTS 1e9
/* The most events and host ops (SimCost) of a replay of every rank that
 * the default mode runs in place of one rank per stage where stages
 * share nodes: about a second of one core (the engine did some 6 million
 * events a second, make bench, when each host op was an event; it runs
 * them for less now, but the replay's other work per op is the same). */
#define SIM_FULL_AUTO_EVENTS 5e6
/* A trace holds a line for every op of the replay: 139 bytes each,
 * measured (GPT-3 175B on 1,024 GPUs with --full: 4,164,445,508 bytes in
 * 29,994,114 spans; names are short, so the line is mostly its times and
 * ids). 1 GiB, about 7.7 million spans, is more than Perfetto opens in a
 * browser tab; TRAINSIM_MAX_TRACE raises or lowers it. */
#define SIM_TRACE_SPAN_BYTES 139
#define SIM_BUDGET_TRACE (1024.0 * 1024 * 1024)

typedef struct {
  uint64_t ops;         /* ops in the graph */
  uint64_t edges;       /* edges between them */
  uint64_t held_ops;    /* of them, held at once (full mode reuses what
                         * is done: sim-private.h, SIM_HELD_ITEMS) */
  uint64_t held_edges;
  uint64_t events;      /* engine events the replay fires */
  uint64_t host_ops;    /* of ops, the host's, run without an event */
  uint64_t bytes;       /* the simulator's memory for them */
  uint64_t streams;     /* simulated ranks x streams */
  uint64_t trace_bytes; /* of the trace, when one is written; else 0 */
} SimCost;

/* The cost of replaying PLAN with OPTIONS (without building it; the
 * estimate runs in time independent of the plan's sizes). Saturates at
 * UINT64_MAX. */
void sim_plan_cost (const Plan *plan, const SimOptions *options,
                    SimCost *cost);

/* Whether COST fits the budgets of the environment, and what the
 * simulator can index whatever the budgets (2^32 ops, 2^31 streams).
 * Fails with TS_ERROR_INPUT naming WHERE (the experiment's file) when it
 * does not, and with TS_ERROR_USAGE when a budget variable is not
 * valid. */
gboolean sim_budget_check (const SimCost *cost, const char *where,
                           GError **error);
