/* eventq.c: a 4-ary min-heap of events, or, once many are queued, of
 * lists of the events at one time; see eventq.h. */
#include "engine/eventq.h"

#define ARITY 4
#define NONE UINT32_MAX
/* Past this many queued events the queue looks at how many share their
 * time, and groups them by time (for good: a queue this long belongs to a
 * run of many ranks) when they average TIED_AT a time; else it looks
 * again after CHECK_EVERY more pushes. Symmetric mode's queues hold a few
 * dozen; `--full`'s hold tens of thousands, mostly tied, or, with GPU
 * variability, seldom tied, where lists cost more than they save. */
#define GROUP_AT 1024
#define TIED_AT 4
#define CHECK_EVERY (1u << 22)
/* How many of the newest lists a push looks at for its time. */
#define RECENT 8

/* A heap entry, keyed by (time, seq): an event (ref is its id), or when
 * grouped a list of the events at one time (ref is the list's id, seq
 * its making's). */
typedef struct {
  SimTime time;
  uint64_t seq;
  uint32_t ref;
} Entry;

/* The events at one time, oldest first: a list through the links, so an
 * event can leave from anywhere. */
typedef struct {
  uint32_t head, tail;
  uint32_t heap;        /* its index in the heap */
  gboolean live;
} Bucket;

/* A grouped event's neighbours in its list. */
typedef struct {
  uint32_t next, prev;
} Link;

struct EventQ {
  Entry *heap;          /* owned: heap[0] is the minimum */
  size_t heap_len, heap_cap;
  uint32_t *pos;        /* owned, by event id: its heap index, or when
                         * grouped its list; NONE when not queued */
  Link *links;          /* owned, by event id, when grouped */
  size_t ids_cap;
  size_t n;             /* events queued */
  uint64_t next_seq;
  uint32_t until_check; /* pushes before the next look at the ties */
  gboolean grouped;
  Bucket *buckets;      /* owned; free ones are a list through head */
  uint32_t n_buckets, buckets_cap, free_bucket;
  uint32_t recent[RECENT];       /* the lists made last, newest at recent_at */
  SimTime recent_time[RECENT];   /* their times */
  guint recent_at;
};

EventQ *
eventq_new (void)
{
  EventQ *q = g_new0 (EventQ, 1);
  q->free_bucket = NONE;
  for (guint i = 0; i < RECENT; i++)
    q->recent[i] = NONE;
  return q;
}

void
eventq_free (EventQ *q)
{
  if (q == NULL)
    return;
  g_free (q->heap);
  g_free (q->pos);
  g_free (q->links);
  g_free (q->buckets);
  g_free (q);
}

size_t
eventq_size (const EventQ *q)
{
  return q->n;
}

static void
ensure_id (EventQ *q, uint32_t id)
{
  if (id < q->ids_cap)
    return;
  size_t cap = MAX (MAX (q->ids_cap * 2, (size_t) id + 1), 64);
  q->pos = g_renew (uint32_t, q->pos, cap);
  if (q->grouped)
    q->links = g_renew (Link, q->links, cap);
  for (size_t i = q->ids_cap; i < cap; i++)
    q->pos[i] = NONE;
  q->ids_cap = cap;
}

/* ---- the heap ---------------------------------------------------------------- */

static inline gboolean
entry_less (const Entry *a, const Entry *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* The heap's functions are inlined with GROUPED a constant at each call:
 * the plain heap's are the hot loop of symmetric mode, where a test of
 * the mode inside them cost a tenth of its time. */
static inline void
place (EventQ *q, size_t i, const Entry *e, gboolean grouped)
{
  q->heap[i] = *e;
  if (grouped)
    q->buckets[e->ref].heap = (uint32_t) i;
  else
    q->pos[e->ref] = (uint32_t) i;
}

static inline void
sift_up_in (EventQ *q, size_t i, gboolean grouped)
{
  Entry e = q->heap[i];
  while (i > 0)
    {
      size_t parent = (i - 1) / ARITY;
      if (!entry_less (&e, &q->heap[parent]))
        break;
      place (q, i, &q->heap[parent], grouped);
      i = parent;
    }
  place (q, i, &e, grouped);
}

static inline void
sift_down_in (EventQ *q, size_t i, gboolean grouped)
{
  Entry e = q->heap[i];
  for (;;)
    {
      size_t first = i * ARITY + 1;
      if (first >= q->heap_len)
        break;
      size_t last = MIN (first + ARITY, q->heap_len);
      size_t best = first;
      for (size_t c = first + 1; c < last; c++)
        if (entry_less (&q->heap[c], &q->heap[best]))
          best = c;
      if (!entry_less (&q->heap[best], &e))
        break;
      place (q, i, &q->heap[best], grouped);
      i = best;
    }
  place (q, i, &e, grouped);
}

/* Moves the entry at heap index I up or down to its place. */
static inline void
sift_in (EventQ *q, size_t i, gboolean grouped)
{
  if (i > 0 && entry_less (&q->heap[i], &q->heap[(i - 1) / ARITY]))
    sift_up_in (q, i, grouped);
  else
    sift_down_in (q, i, grouped);
}

static inline void
heap_push_in (EventQ *q, SimTime time, uint32_t ref, gboolean grouped)
{
  if (q->heap_len == q->heap_cap)
    {
      q->heap_cap = MAX (64, q->heap_cap * 2);
      q->heap = g_renew (Entry, q->heap, q->heap_cap);
    }
  q->heap[q->heap_len] = (Entry) { time, q->next_seq++, ref };
  sift_up_in (q, q->heap_len++, grouped);
}

/* Removes the entry at heap index i, keeping the heap ordered. */
static inline void
heap_remove_in (EventQ *q, size_t i, gboolean grouped)
{
  q->heap_len--;
  if (i == q->heap_len)
    return;
  q->heap[i] = q->heap[q->heap_len];
  sift_in (q, i, grouped);
}

/* ---- lists of the events at one time (grouped) ---------------------------- */

/* A new, empty list at time T, after every list before it. */
static uint32_t
bucket_new (EventQ *q, SimTime t)
{
  uint32_t b = q->free_bucket;
  if (b != NONE)
    q->free_bucket = q->buckets[b].head;
  else
    {
      if (q->n_buckets == q->buckets_cap)
        {
          q->buckets_cap = MAX (64, 2 * q->buckets_cap);
          q->buckets = g_renew (Bucket, q->buckets, q->buckets_cap);
        }
      b = q->n_buckets++;
    }
  q->buckets[b] = (Bucket) { NONE, NONE, NONE, TRUE };
  heap_push_in (q, t, b, TRUE);
  q->recent_at = (q->recent_at + 1) % RECENT;
  q->recent[q->recent_at] = b;
  q->recent_time[q->recent_at] = t;
  return b;
}

/* The list an event at time T joins: the newest of the RECENT lists made
 * last that is at T, if that is still queued, else a new one. Joining it
 * keeps (time, seq) order: no list at T was made after it, and every
 * event in a list at T made before it came before it. In `--full` the
 * ranks of a stage push their next ops' ends at the same times, one
 * after another: a few lists take them all. */
static uint32_t
bucket_for (EventQ *q, SimTime t)
{
  for (guint k = 0; k < RECENT; k++)
    {
      guint at = (q->recent_at + RECENT - k) % RECENT;
      uint32_t b = q->recent[at];
      /* A list's id is reused once it empties: the time is checked too. */
      if (q->recent_time[at] == t && b != NONE && q->buckets[b].live
          && q->heap[q->buckets[b].heap].time == t)
        return b;
    }
  return bucket_new (q, t);
}

/* Appends ID to the events at TIME: it pops after those already there. */
static void
append (EventQ *q, uint32_t id, SimTime time)
{
  uint32_t b = bucket_for (q, time);
  Bucket *bk = &q->buckets[b];
  q->pos[id] = b;
  q->links[id] = (Link) { NONE, bk->tail };
  if (bk->tail == NONE)
    bk->head = id;
  else
    q->links[bk->tail].next = id;
  bk->tail = id;
}

static void
unlink_id (EventQ *q, uint32_t id)
{
  Link *l = &q->links[id];
  uint32_t b = q->pos[id];
  Bucket *bk = &q->buckets[b];
  if (l->prev == NONE)
    bk->head = l->next;
  else
    q->links[l->prev].next = l->next;
  if (l->next == NONE)
    bk->tail = l->prev;
  else
    q->links[l->next].prev = l->prev;
  q->pos[id] = NONE;
  if (bk->head != NONE)
    return;
  heap_remove_in (q, bk->heap, TRUE);
  bk->live = FALSE;
  bk->head = q->free_bucket;
  q->free_bucket = b;
}

static int
by_key (gconstpointer a, gconstpointer b)
{
  return entry_less (a, b) ? -1 : entry_less (b, a);
}

/* Moves every queued event into lists, in the order they pop, if they
 * average TIED_AT a time. */
static void
maybe_group (EventQ *q)
{
  size_t n = q->heap_len, times = 0;
  g_autofree Entry *order = g_memdup2 (q->heap, n * sizeof (Entry));
  qsort (order, n, sizeof (Entry), by_key);
  for (size_t k = 0; k < n; k++)
    times += k == 0 || order[k].time != order[k - 1].time;
  if (n < TIED_AT * times)
    {
      q->until_check = CHECK_EVERY;
      return;
    }
  q->heap_len = 0;
  q->grouped = TRUE;
  q->links = g_new (Link, q->ids_cap);
  for (size_t k = 0; k < n; k++)
    append (q, order[k].ref, order[k].time);
}

/* ---- events ----------------------------------------------------------------- */

static inline void
add (EventQ *q, uint32_t id, SimTime time)
{
  q->n++;
  if (q->grouped)
    append (q, id, time);
  else
    {
      heap_push_in (q, time, id, FALSE);
      if (q->n > GROUP_AT && q->until_check-- == 0)
        maybe_group (q);
    }
}

static void
take (EventQ *q, uint32_t id)
{
  if (q->grouped)
    unlink_id (q, id);
  else
    {
      heap_remove_in (q, q->pos[id], FALSE);
      q->pos[id] = NONE;
    }
  q->n--;
}

void
eventq_push (EventQ *q, uint32_t id, SimTime time)
{
  ensure_id (q, id);
  g_assert (q->pos[id] == NONE);
  add (q, id, time);
}

uint32_t
eventq_peek_id (const EventQ *q)
{
  if (q->n == 0)
    return UINT32_MAX;
  return q->grouped ? q->buckets[q->heap[0].ref].head : q->heap[0].ref;
}

uint32_t
eventq_peek_second (const EventQ *q)
{
  if (q->n < 2)
    return UINT32_MAX;
  if (q->grouped)
    {
      uint32_t after = q->links[q->buckets[q->heap[0].ref].head].next;
      if (after != NONE)
        return after;
    }
  /* The second smallest entry is one of the root's children. */
  size_t best = 1;
  for (size_t c = 2; c <= ARITY && c < q->heap_len; c++)
    if (entry_less (&q->heap[c], &q->heap[best]))
      best = c;
  return q->grouped ? q->buckets[q->heap[best].ref].head : q->heap[best].ref;
}

gboolean
eventq_pop (EventQ *q, uint32_t *id, SimTime *time)
{
  if (q->n == 0)
    return FALSE;
  *time = q->heap[0].time;
  if (q->grouped)
    {
      *id = q->buckets[q->heap[0].ref].head;
      unlink_id (q, *id);
    }
  else
    {
      *id = q->heap[0].ref;
      q->pos[*id] = NONE;
      heap_remove_in (q, 0, FALSE);
    }
  q->n--;
  return TRUE;
}

SimTime
eventq_peek_time (const EventQ *q)
{
  return q->n ? q->heap[0].time : SIM_TIME_MAX;
}

gboolean
eventq_contains (const EventQ *q, uint32_t id)
{
  return id < q->ids_cap && q->pos[id] != NONE;
}

void
eventq_update (EventQ *q, uint32_t id, SimTime time)
{
  g_assert (eventq_contains (q, id));
  if (q->grouped)
    {
      take (q, id);
      add (q, id, time);
      return;
    }
  size_t i = q->pos[id];
  q->heap[i].time = time;
  q->heap[i].seq = q->next_seq++;
  sift_in (q, i, FALSE);
}

void
eventq_remove (EventQ *q, uint32_t id)
{
  g_assert (eventq_contains (q, id));
  take (q, id);
}

void
eventq_check_invariants (const EventQ *q)
{
  size_t events = 0;
  for (size_t i = 0; i < q->heap_len; i++)
    {
      const Entry *e = &q->heap[i];
      if (i > 0)
        g_assert (!entry_less (e, &q->heap[(i - 1) / ARITY]));
      if (!q->grouped)
        {
          g_assert_cmpuint (q->pos[e->ref], ==, i);
          events++;
          continue;
        }
      const Bucket *bk = &q->buckets[e->ref];
      g_assert_cmpuint (bk->heap, ==, i);
      g_assert (bk->live && bk->head != NONE);
      uint32_t prev = NONE;
      for (uint32_t id = bk->head; id != NONE; id = q->links[id].next)
        {
          g_assert_cmpuint (q->pos[id], ==, e->ref);
          g_assert_cmpuint (q->links[id].prev, ==, prev);
          prev = id;
          events++;
        }
      g_assert_cmpuint (bk->tail, ==, prev);
    }
  g_assert_cmpuint (events, ==, q->n);
}
