/* eventq.h: the pending-event set, an indexed 4-ary min-heap; past a
 * thousand events, a heap of the times with the events at each in a list.
 *
 * Keys are (time, seq): seq is the insertion counter, so events at the same
 * picosecond pop in the order they were scheduled and a run is
 * deterministic (ns-3's rule). An event can be re-keyed or removed in
 * place (SimGrid's heap does this to move a flow's completion when its
 * bandwidth share changes); a re-keyed event takes a new seq.
 *
 * In `--full`, thousands of events are queued and most share their time
 * with others: the same op of every rank of a stage ends at one
 * picosecond. There the queue groups them: the heap holds a list per
 * time, and an event joins the list of its time (found among the lists
 * made last) at its end, in seq order; popping one from a list that
 * stays non-empty moves nothing in the heap (issue 36's profile of
 * `--full` at 16,384 GPUs spent a fifth of its time in the heap). A
 * short queue, as in symmetric mode, or one with few ties (`--full` with
 * GPU variability) is cheaper as a plain heap, and stays one. The order
 * of pops is the same either way.
 *
 * Ids are small dense integers chosen by the caller (the engine's event
 * pool); each id is in the queue at most once.
 *
 * Complexity, n events queued (grouped: at d distinct times):
 *   eventq_push      O(log4 n); grouped O(1) at a time queued last, else
 *                    O(log4 d)
 *   eventq_pop       O(4 log4 n); grouped O(1), or O(4 log4 d) when its
 *                    list empties
 *   eventq_update    a removal and a push
 *   eventq_remove    as eventq_pop
 *   eventq_peek_time O(1)
 * bench/bench-engine.c measures it. */
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
/* The id that pops after it, or UINT32_MAX when there is none. O(1). */
uint32_t eventq_peek_second (const EventQ *q);
gboolean eventq_contains (const EventQ *q, uint32_t id);
/* Gives a queued id a new time (and a new seq: it orders after events
 * already queued at that time). */
void eventq_update (EventQ *q, uint32_t id, SimTime time);
void eventq_remove (EventQ *q, uint32_t id);
/* Asserts the heap order and the index; for tests and debug builds. */
void eventq_check_invariants (const EventQ *q);
