/* eventq.h: the pending-event set, an indexed 4-ary min-heap.
 *
 * Keys are (time, seq): seq is the insertion counter, so events at the same
 * picosecond pop in the order they were scheduled and a run is
 * deterministic (ns-3's rule). The heap knows where each id sits, so an
 * event can be re-keyed or removed in place (SimGrid's heap does this to
 * move a flow's completion when its bandwidth share changes).
 *
 * Ids are small dense integers chosen by the caller (the engine's event
 * pool); each id is in the queue at most once.
 *
 * Complexity, n events queued:
 *   eventq_push      O(log4 n)
 *   eventq_pop       O(4 log4 n)
 *   eventq_update    O(4 log4 n)   (either direction)
 *   eventq_remove    O(4 log4 n)
 *   eventq_peek_time O(1)
 * A 4-ary heap halves the depth of a binary one and keeps a node's
 * children in one cache line; bench/bench-engine.c measures it. */
#pragma once

#include <stdint.h>
#include <stddef.h>
#include <glib.h>
#include "base/simtime.h"

typedef struct EventQ EventQ;

EventQ *eventq_new (void);
void eventq_free (EventQ *q);

size_t eventq_size (const EventQ *q);
void eventq_push (EventQ *q, uint32_t id, SimTime time);
/* Pops the smallest key; returns FALSE when empty. */
gboolean eventq_pop (EventQ *q, uint32_t *id, SimTime *time);
SimTime eventq_peek_time (const EventQ *q);   /* SIM_TIME_MAX when empty */
/* The id with the smallest key, or UINT32_MAX when empty. */
uint32_t eventq_peek_id (const EventQ *q);
gboolean eventq_contains (const EventQ *q, uint32_t id);
/* Gives a queued id a new time (and a new seq: it orders after events
 * already queued at that time). */
void eventq_update (EventQ *q, uint32_t id, SimTime time);
void eventq_remove (EventQ *q, uint32_t id);
/* Asserts the heap order and the index; for tests and debug builds. */
void eventq_check_invariants (const EventQ *q);
