/* engine.h: the discrete-event core: a clock, an event pool and the run loop.
 *
 * The engine knows nothing about GPUs or networks: an event is a callback
 * with a context pointer and a 64-bit argument, fired at its time. Events
 * come from a pool and are recycled when they fire (ROSS's rule), so a run
 * allocates nothing per event once the pool has grown. Scheduling in the
 * past is a bug and asserts. An event at SIM_TIME_MAX stands for a time
 * that saturated (simtime.h): the run stops when it comes up, and
 * sim_engine_overflowed() says so. All state lives in the SimEngine: no globals,
 * so sweeps can run engines in parallel threads. */
#pragma once

#include <stdint.h>
#include <glib.h>
#include "base/simtime.h"

typedef struct SimEngine SimEngine;
typedef void (*SimEventFn) (SimEngine *engine, void *ctx, uint64_t arg);
typedef uint32_t SimEventId;

SimEngine *sim_engine_new (void);
void sim_engine_free (SimEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimEngine, sim_engine_free)

SimTime sim_engine_now (const SimEngine *engine);
/* Fires fn (engine, ctx, arg) at time at (>= now). O(log n). */
SimEventId sim_engine_schedule (SimEngine *engine, SimTime at, SimEventFn fn,
                                void *ctx, uint64_t arg);
/* The same, for an fn that first reads TOUCH: the run loop asks the CPU
 * to fetch it into the cache while the event before it runs. A replay of
 * many ranks is bound by such misses (its events' data spread over more
 * than the cache holds). */
SimEventId sim_engine_schedule_touching (SimEngine *engine, SimTime at,
                                         SimEventFn fn, void *ctx,
                                         uint64_t arg, const void *touch);
/* What an event's fn reads after its touch, fetched ahead: WARM (TOUCH,
 * CTX) runs for the event after the next, whose touch the CPU was asked
 * for one event earlier, and asks for the data that touch leads to (an
 * op's stream and the ops after it). Every touch given to this engine is
 * of the kind WARM reads; WARM must only read and prefetch. */
typedef void (*SimWarmFn) (const void *touch, void *ctx);
void sim_engine_set_warm (SimEngine *engine, SimWarmFn warm, void *ctx);
/* Moves a pending event to a new time (>= now). O(log n). */
void sim_engine_reschedule (SimEngine *engine, SimEventId id, SimTime at);
/* Drops a pending event. O(log n). */
void sim_engine_cancel (SimEngine *engine, SimEventId id);
/* Runs until no event is left, or until the next one is due at
 * SIM_TIME_MAX (dropped unfired, the rest left queued); returns the number of events
 * fired by this call. */
uint64_t sim_engine_run (SimEngine *engine);
/* The same, firing at most N events: a caller that reports progress runs
 * the engine in slices. Fewer than N fired means the run is over. */
uint64_t sim_engine_run_for (SimEngine *engine, uint64_t n);
/* Whether a run stopped at an event due at SIM_TIME_MAX: some time went
 * past what int64 picoseconds hold, and the run's times mean nothing. */
gboolean sim_engine_overflowed (const SimEngine *engine);
/* Events fired since the engine was made. */
uint64_t sim_engine_events (const SimEngine *engine);
