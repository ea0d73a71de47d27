/* eventq.c: an indexed 4-ary min-heap on (time, seq); see eventq.h. */
#include "engine/eventq.h"

#define ARITY 4
#define NOT_QUEUED UINT32_MAX

typedef struct {
  SimTime time;
  uint64_t seq;
  uint32_t id;
} Entry;

struct EventQ {
  Entry *heap;          /* owned: heap[0] is the minimum */
  size_t n, cap;
  uint32_t *pos;        /* owned: pos[id] = index in heap, or NOT_QUEUED */
  size_t pos_cap;
  uint64_t next_seq;
};

static inline gboolean
entry_less (const Entry *a, const Entry *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

EventQ *
eventq_new (void)
{
  return g_new0 (EventQ, 1);
}

void
eventq_free (EventQ *q)
{
  if (q == NULL)
    return;
  g_free (q->heap);
  g_free (q->pos);
  g_free (q);
}

size_t
eventq_size (const EventQ *q)
{
  return q->n;
}

static void
ensure_pos (EventQ *q, uint32_t id)
{
  if (id < q->pos_cap)
    return;
  size_t cap = MAX (q->pos_cap * 2, (size_t) id + 1);
  cap = MAX (cap, 64);
  q->pos = g_renew (uint32_t, q->pos, cap);
  for (size_t i = q->pos_cap; i < cap; i++)
    q->pos[i] = NOT_QUEUED;
  q->pos_cap = cap;
}

static inline void
place (EventQ *q, size_t i, const Entry *e)
{
  q->heap[i] = *e;
  q->pos[e->id] = (uint32_t) i;
}

static void
sift_up (EventQ *q, size_t i)
{
  Entry e = q->heap[i];
  while (i > 0)
    {
      size_t parent = (i - 1) / ARITY;
      if (!entry_less (&e, &q->heap[parent]))
        break;
      place (q, i, &q->heap[parent]);
      i = parent;
    }
  place (q, i, &e);
}

static void
sift_down (EventQ *q, size_t i)
{
  Entry e = q->heap[i];
  for (;;)
    {
      size_t first = i * ARITY + 1;
      if (first >= q->n)
        break;
      size_t last = MIN (first + ARITY, q->n);
      size_t best = first;
      for (size_t c = first + 1; c < last; c++)
        if (entry_less (&q->heap[c], &q->heap[best]))
          best = c;
      if (!entry_less (&q->heap[best], &e))
        break;
      place (q, i, &q->heap[best]);
      i = best;
    }
  place (q, i, &e);
}

void
eventq_push (EventQ *q, uint32_t id, SimTime time)
{
  ensure_pos (q, id);
  g_assert (q->pos[id] == NOT_QUEUED);
  if (q->n == q->cap)
    {
      q->cap = MAX (64, q->cap * 2);
      q->heap = g_renew (Entry, q->heap, q->cap);
    }
  Entry e = { time, q->next_seq++, id };
  q->heap[q->n] = e;
  q->pos[id] = (uint32_t) q->n;
  q->n++;
  sift_up (q, q->n - 1);
}

/* Removes the entry at heap index i, keeping the heap ordered. */
static void
remove_at (EventQ *q, size_t i)
{
  q->pos[q->heap[i].id] = NOT_QUEUED;
  q->n--;
  if (i == q->n)
    return;
  Entry moved = q->heap[q->n];
  place (q, i, &moved);
  if (i > 0 && entry_less (&moved, &q->heap[(i - 1) / ARITY]))
    sift_up (q, i);
  else
    sift_down (q, i);
}

gboolean
eventq_pop (EventQ *q, uint32_t *id, SimTime *time)
{
  if (q->n == 0)
    return FALSE;
  *id = q->heap[0].id;
  *time = q->heap[0].time;
  remove_at (q, 0);
  return TRUE;
}

SimTime
eventq_peek_time (const EventQ *q)
{
  return q->n ? q->heap[0].time : SIM_TIME_MAX;
}

uint32_t
eventq_peek_id (const EventQ *q)
{
  return q->n ? q->heap[0].id : UINT32_MAX;
}

gboolean
eventq_contains (const EventQ *q, uint32_t id)
{
  return id < q->pos_cap && q->pos[id] != NOT_QUEUED;
}

void
eventq_update (EventQ *q, uint32_t id, SimTime time)
{
  g_assert (eventq_contains (q, id));
  size_t i = q->pos[id];
  q->heap[i].time = time;
  q->heap[i].seq = q->next_seq++;
  if (i > 0 && entry_less (&q->heap[i], &q->heap[(i - 1) / ARITY]))
    sift_up (q, i);
  else
    sift_down (q, i);
}

void
eventq_remove (EventQ *q, uint32_t id)
{
  g_assert (eventq_contains (q, id));
  remove_at (q, q->pos[id]);
}

void
eventq_check_invariants (const EventQ *q)
{
  for (size_t i = 0; i < q->n; i++)
    {
      g_assert_cmpuint (q->pos[q->heap[i].id], ==, i);
      if (i > 0)
        g_assert (!entry_less (&q->heap[i], &q->heap[(i - 1) / ARITY]));
    }
}
