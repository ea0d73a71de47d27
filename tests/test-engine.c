/* test-engine.c: the engine layer: the event queue (eventq.h) against a
 * sorted-array reference, and the engine's clock, pool and run loop
 * (engine.h). Every test builds its own queue or engine. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/eventq.h"

/* ------------------------------------------------------------------ */
/* Event queue                                                        */
/* ------------------------------------------------------------------ */

/* Pops everything and checks it comes out as WANT_IDS at WANT_TIMES. */
static void
assert_pops (EventQ *q, const uint32_t *want_ids, const SimTime *want_times,
             size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      uint32_t id = UINT32_MAX;
      SimTime t = -1;
      ck_assert_msg (eventq_pop (q, &id, &t), "pop %zu of %zu: queue empty", i, n);
      ck_assert_msg (id == want_ids[i] && t == want_times[i],
                     "pop %zu: got id %u at %" G_GINT64_FORMAT
                     ", want id %u at %" G_GINT64_FORMAT,
                     i, id, t, want_ids[i], want_times[i]);
      eventq_check_invariants (q);
    }
  ck_assert_uint_eq (eventq_size (q), 0);
}

START_TEST (test_eventq_empty)
{
  EventQ *q = eventq_new ();
  uint32_t id = 7;
  SimTime t = 7;

  ck_assert_uint_eq (eventq_size (q), 0);
  ck_assert (!eventq_pop (q, &id, &t));
  /* A failed pop leaves the outputs alone. */
  ck_assert_uint_eq (id, 7);
  ck_assert_int_eq (t, 7);
  ck_assert_int_eq (eventq_peek_time (q), SIM_TIME_MAX);
  ck_assert (!eventq_contains (q, 0));
  ck_assert (!eventq_contains (q, 1000000));
  eventq_check_invariants (q);
  eventq_free (q);
  eventq_free (NULL);
}
END_TEST

/* Distinct times pop sorted; equal times pop in insertion order, whatever
 * ids they carry. */
START_TEST (test_eventq_order)
{
  static const struct { uint32_t id; SimTime t; } pushes[] = {
    { 5, 30 }, { 2, 10 }, { 9, 30 }, { 0, 20 }, { 7, 10 },
    { 1, 30 }, { 3, 0 }, { 8, 10 }, { 4, 20 }, { 6, 0 },
  };
  static const uint32_t want_ids[] = { 3, 6, 2, 7, 8, 0, 4, 5, 9, 1 };
  static const SimTime want_times[] = { 0, 0, 10, 10, 10, 20, 20, 30, 30, 30 };
  EventQ *q = eventq_new ();

  for (size_t i = 0; i < G_N_ELEMENTS (pushes); i++)
    {
      eventq_push (q, pushes[i].id, pushes[i].t);
      ck_assert (eventq_contains (q, pushes[i].id));
      eventq_check_invariants (q);
    }
  ck_assert_uint_eq (eventq_size (q), G_N_ELEMENTS (pushes));
  ck_assert_int_eq (eventq_peek_time (q), 0);
  assert_pops (q, want_ids, want_times, G_N_ELEMENTS (want_ids));
  for (size_t i = 0; i < G_N_ELEMENTS (pushes); i++)
    ck_assert (!eventq_contains (q, pushes[i].id));
  eventq_free (q);
}
END_TEST

/* Many events at one time: the seq tie-break must hold across many heap
 * levels, not only among siblings. */
START_TEST (test_eventq_fifo_at_one_time)
{
  enum { N = 1000 };
  EventQ *q = eventq_new ();

  for (uint32_t i = 0; i < N; i++)
    eventq_push (q, N - 1 - i, 42);
  for (uint32_t i = 0; i < N; i++)
    {
      uint32_t id;
      SimTime t;
      ck_assert (eventq_pop (q, &id, &t));
      ck_assert_uint_eq (id, N - 1 - i);
      ck_assert_int_eq (t, 42);
    }
  eventq_free (q);
}
END_TEST

/* Ids 0..9 at times 0, 10, ..., 90. */
static EventQ *
make_ten (void)
{
  EventQ *q = eventq_new ();

  for (uint32_t i = 0; i < 10; i++)
    eventq_push (q, i, 10 * (SimTime) i);
  return q;
}

START_TEST (test_eventq_update_up)
{
  EventQ *q = make_ten ();

  /* The last id moves to the front. */
  eventq_update (q, 9, 5);
  eventq_check_invariants (q);
  /* Re-keyed to a time already queued, it orders after what is there. */
  eventq_update (q, 8, 30);
  eventq_check_invariants (q);
  ck_assert_int_eq (eventq_peek_time (q), 0);
  ck_assert_uint_eq (eventq_size (q), 10);

  static const uint32_t ids[] = { 0, 9, 1, 2, 3, 8, 4, 5, 6, 7 };
  static const SimTime times[] = { 0, 5, 10, 20, 30, 30, 40, 50, 60, 70 };
  assert_pops (q, ids, times, G_N_ELEMENTS (ids));
  eventq_free (q);
}
END_TEST

START_TEST (test_eventq_update_down)
{
  EventQ *q = make_ten ();

  /* The root moves to the back, then one moves onto another's time. */
  eventq_update (q, 0, 100);
  eventq_check_invariants (q);
  ck_assert_int_eq (eventq_peek_time (q), 10);
  eventq_update (q, 3, 60);
  eventq_check_invariants (q);
  /* Its own time with no peer there: a fresh seq changes nothing. */
  eventq_update (q, 5, 50);
  eventq_check_invariants (q);

  static const uint32_t ids[] = { 1, 2, 4, 5, 6, 3, 7, 8, 9, 0 };
  static const SimTime times[] = { 10, 20, 40, 50, 60, 60, 70, 80, 90, 100 };
  assert_pops (q, ids, times, G_N_ELEMENTS (ids));
  eventq_free (q);
}
END_TEST

/* An update at an unchanged time still refreshes the seq: the event moves
 * behind its peers at that time. */
START_TEST (test_eventq_update_same_time_requeues)
{
  EventQ *q = eventq_new ();

  eventq_push (q, 0, 10);
  eventq_push (q, 1, 10);
  eventq_push (q, 2, 10);
  eventq_update (q, 0, 10);
  eventq_check_invariants (q);

  static const uint32_t ids[] = { 1, 2, 0 };
  static const SimTime times[] = { 10, 10, 10 };
  assert_pops (q, ids, times, G_N_ELEMENTS (ids));
  eventq_free (q);
}
END_TEST

START_TEST (test_eventq_remove)
{
  EventQ *q = make_ten ();

  eventq_remove (q, 5);            /* the middle */
  eventq_check_invariants (q);
  ck_assert (!eventq_contains (q, 5));
  eventq_remove (q, 0);            /* the root */
  eventq_check_invariants (q);
  eventq_remove (q, 9);            /* the last slot of the heap */
  eventq_check_invariants (q);
  ck_assert_uint_eq (eventq_size (q), 7);
  ck_assert_int_eq (eventq_peek_time (q), 10);

  /* A removed id can be pushed again. */
  eventq_push (q, 5, 15);
  eventq_check_invariants (q);

  static const uint32_t ids[] = { 1, 5, 2, 3, 4, 6, 7, 8 };
  static const SimTime times[] = { 10, 15, 20, 30, 40, 60, 70, 80 };
  assert_pops (q, ids, times, G_N_ELEMENTS (ids));
  eventq_free (q);
}
END_TEST

/* The reference: entries kept sorted by (time, seq), so its head is the
 * answer the heap must give. Quadratic, which a few thousand ops afford. */
typedef struct {
  SimTime time;
  uint64_t seq;
  uint32_t id;
} RefEntry;

typedef struct {
  RefEntry *v;
  size_t n;
  uint64_t next_seq;   /* mirrors the queue's: push and update take one */
} Ref;

static void
ref_insert (Ref *r, uint32_t id, SimTime time)
{
  RefEntry e = { time, r->next_seq++, id };
  size_t i = r->n;

  /* Seqs only grow, so the new entry goes after every equal time. */
  while (i > 0 && r->v[i - 1].time > time)
    i--;
  memmove (&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
  r->v[i] = e;
  r->n++;
}

static void
ref_remove_at (Ref *r, size_t i)
{
  memmove (&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
  r->n--;
}

/* OPS random pushes, pops, updates and removes of ids below MAX_IDS at
 * times below TIME_RANGE, after PREFILL pushes, checked op by op against
 * the reference. */
static void
random_vs_reference (guint32 seed, int ops, uint32_t max_ids,
                     SimTime time_range, int prefill)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  EventQ *q = eventq_new ();
  Ref ref = { g_new (RefEntry, max_ids), 0, 0 };
  g_autofree gboolean *queued = g_new0 (gboolean, max_ids);
  unsigned n_ops[4] = { 0 };

  for (int op = 0; op < prefill + ops; op++)
    {
      /* A narrow time range makes ties common, so the seq rule is
       * exercised; pushes are weighted so the queue grows to ~100s. */
      int kind = op < prefill ? 0 : g_rand_int_range (rng, 0, 10);
      if (ref.n == 0 || (kind < 4 && ref.n < max_ids))
        {
          uint32_t id;
          do
            id = (uint32_t) g_rand_int_range (rng, 0, (gint32) max_ids);
          while (queued[id]);
          SimTime t = g_rand_int_range (rng, 0, (gint32) time_range);
          eventq_push (q, id, t);
          ref_insert (&ref, id, t);
          queued[id] = TRUE;
          n_ops[0]++;
        }
      else if (kind < 6)
        {
          uint32_t id;
          SimTime t;
          ck_assert (eventq_pop (q, &id, &t));
          ck_assert_msg (id == ref.v[0].id && t == ref.v[0].time,
                         "op %d: popped id %u at %" G_GINT64_FORMAT
                         ", reference has id %u at %" G_GINT64_FORMAT,
                         op, id, t, ref.v[0].id, ref.v[0].time);
          ref_remove_at (&ref, 0);
          queued[id] = FALSE;
          n_ops[1]++;
        }
      else if (kind < 8)
        {
          size_t i = (size_t) g_rand_int_range (rng, 0, (gint32) ref.n);
          uint32_t id = ref.v[i].id;
          SimTime t = g_rand_int_range (rng, 0, (gint32) time_range);
          eventq_update (q, id, t);
          ref_remove_at (&ref, i);
          ref_insert (&ref, id, t);
          n_ops[2]++;
        }
      else
        {
          size_t i = (size_t) g_rand_int_range (rng, 0, (gint32) ref.n);
          uint32_t id = ref.v[i].id;
          eventq_remove (q, id);
          ref_remove_at (&ref, i);
          queued[id] = FALSE;
          n_ops[3]++;
        }

      eventq_check_invariants (q);
      ck_assert_uint_eq (eventq_size (q), ref.n);
      ck_assert_int_eq (eventq_peek_time (q),
                        ref.n ? ref.v[0].time : SIM_TIME_MAX);
    }

  for (uint32_t id = 0; id < max_ids; id++)
    ck_assert_msg (eventq_contains (q, id) == queued[id],
                   "id %u: contains %d, reference %d",
                   id, eventq_contains (q, id), queued[id]);

  /* Drain: the whole remaining order must match. */
  for (size_t i = 0; ref.n > 0; i++)
    {
      uint32_t id;
      SimTime t;
      ck_assert (eventq_pop (q, &id, &t));
      ck_assert_msg (id == ref.v[0].id && t == ref.v[0].time,
                     "drain %zu: popped id %u at %" G_GINT64_FORMAT
                     ", reference has id %u at %" G_GINT64_FORMAT,
                     i, id, t, ref.v[0].id, ref.v[0].time);
      ref_remove_at (&ref, 0);
    }
  ck_assert_uint_eq (eventq_size (q), 0);

  /* Every kind of operation actually ran. */
  for (int k = 0; k < 4; k++)
    ck_assert_msg (n_ops[k] > (unsigned) ops / 20,
                   "op kind %d ran only %u times", k, n_ops[k]);

  g_free (ref.v);
  eventq_free (q);
}

START_TEST (test_eventq_random_vs_reference)
{
  random_vs_reference (20240611u, 5000, 300, 64, 0);
}
END_TEST

/* Past GROUP_AT (1,024) queued events averaging TIED_AT (4) or more a
 * time, the queue keeps lists of the events at each time (eventq.c):
 * 1,500 pushes first, then random operations, with as many ties (200
 * times for ~1,500 events) as `--full` makes; and with few (times up to
 * 10^6), where the queue stays a plain heap of 1,500. */
START_TEST (test_eventq_grouped_vs_reference)
{
  random_vs_reference (20261129u, 6000, 3000, 200, 1500);
  random_vs_reference (7u, 6000, 3000, 1000000, 1500);
}
END_TEST

/* Pushing an id that is already queued is a caller's bug. */
START_TEST (test_eventq_double_push_asserts)
{
  EventQ *q = eventq_new ();

  eventq_push (q, 3, 10);
  eventq_push (q, 3, 20);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Engine                                                             */
/* ------------------------------------------------------------------ */

/* What handlers write: each firing appends (arg, now). */
typedef struct {
  GArray *args;    /* owned, of uint64_t */
  GArray *times;   /* owned, of SimTime */
} Log;

static void
log_init (Log *log)
{
  log->args = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  log->times = g_array_new (FALSE, FALSE, sizeof (SimTime));
}

static void
log_clear (Log *log)
{
  g_array_unref (log->args);
  g_array_unref (log->times);
}

static void
log_fire (SimEngine *engine, void *ctx, uint64_t arg)
{
  Log *log = ctx;
  SimTime now = sim_engine_now (engine);

  g_array_append_val (log->args, arg);
  g_array_append_val (log->times, now);
}

static void
assert_log (const Log *log, const uint64_t *args, const SimTime *times,
            size_t n)
{
  ck_assert_uint_eq (log->args->len, n);
  for (size_t i = 0; i < n; i++)
    {
      uint64_t a = g_array_index (log->args, uint64_t, i);
      SimTime t = g_array_index (log->times, SimTime, i);
      ck_assert_msg (a == args[i] && t == times[i],
                     "firing %zu: got arg %" G_GUINT64_FORMAT
                     " at %" G_GINT64_FORMAT ", want arg %" G_GUINT64_FORMAT
                     " at %" G_GINT64_FORMAT, i, a, t, args[i], times[i]);
    }
}

START_TEST (test_engine_fresh)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();

  ck_assert_int_eq (sim_engine_now (engine), 0);
  ck_assert_uint_eq (sim_engine_events (engine), 0);
  ck_assert_uint_eq (sim_engine_run (engine), 0);
  ck_assert_int_eq (sim_engine_now (engine), 0);
  sim_engine_free (NULL);
}
END_TEST

START_TEST (test_engine_time_order)
{
  static const SimTime at[] = { 50, 10, 30, 20, 40, 0 };
  static const uint64_t want_args[] = { 5, 1, 3, 2, 4, 0 };
  static const SimTime want_times[] = { 0, 10, 20, 30, 40, 50 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  for (size_t i = 0; i < G_N_ELEMENTS (at); i++)
    sim_engine_schedule (engine, at[i], log_fire, &log, i);
  ck_assert_uint_eq (sim_engine_run (engine), G_N_ELEMENTS (at));
  assert_log (&log, want_args, want_times, G_N_ELEMENTS (want_args));
  ck_assert_int_eq (sim_engine_now (engine), 50);
  log_clear (&log);
}
END_TEST

START_TEST (test_engine_same_time_fifo)
{
  enum { N = 50 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  uint64_t want_args[N];
  SimTime want_times[N];
  Log log;

  log_init (&log);
  for (uint64_t i = 0; i < N; i++)
    {
      sim_engine_schedule (engine, 1000, log_fire, &log, i);
      want_args[i] = i;
      want_times[i] = 1000;
    }
  ck_assert_uint_eq (sim_engine_run (engine), N);
  assert_log (&log, want_args, want_times, N);
  log_clear (&log);
}
END_TEST

/* A handler that schedules follow-ups: arg 0 schedules arg 1 at now + 5
 * and arg 2 at now, which must fire after the event already queued at
 * now (scheduled earlier, so it has the smaller seq). */
static void
spawner (SimEngine *engine, void *ctx, uint64_t arg)
{
  log_fire (engine, ctx, arg);
  if (arg == 0)
    {
      SimTime now = sim_engine_now (engine);
      sim_engine_schedule (engine, now + 5, log_fire, ctx, 1);
      sim_engine_schedule (engine, now, log_fire, ctx, 2);
    }
}

START_TEST (test_engine_handler_schedules)
{
  static const uint64_t want_args[] = { 0, 9, 2, 1, 8 };
  static const SimTime want_times[] = { 10, 10, 10, 15, 20 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  sim_engine_schedule (engine, 10, spawner, &log, 0);
  sim_engine_schedule (engine, 10, log_fire, &log, 9);
  sim_engine_schedule (engine, 20, log_fire, &log, 8);
  ck_assert_uint_eq (sim_engine_run (engine), 5);
  assert_log (&log, want_args, want_times, G_N_ELEMENTS (want_args));
  log_clear (&log);
}
END_TEST

START_TEST (test_engine_reschedule)
{
  static const uint64_t want_args[] = { 2, 1, 3, 0 };
  static const SimTime want_times[] = { 5, 20, 20, 25 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  SimEventId a = sim_engine_schedule (engine, 10, log_fire, &log, 0);
  sim_engine_schedule (engine, 20, log_fire, &log, 1);
  SimEventId c = sim_engine_schedule (engine, 30, log_fire, &log, 2);
  SimEventId d = sim_engine_schedule (engine, 20, log_fire, &log, 3);
  sim_engine_reschedule (engine, c, 5);    /* earlier */
  sim_engine_reschedule (engine, a, 25);   /* later */
  sim_engine_reschedule (engine, d, 20);   /* same time: no reorder here */
  ck_assert_uint_eq (sim_engine_run (engine), 4);
  assert_log (&log, want_args, want_times, G_N_ELEMENTS (want_args));
  log_clear (&log);
}
END_TEST

/* Handlers that move or drop other pending events, as a flow's
 * completion moves when its bandwidth share changes. */
typedef struct {
  Log log;
  SimEventId victim;
  SimEventId moved;
} Mover;

static void
mover_fire (SimEngine *engine, void *ctx, uint64_t arg)
{
  Mover *m = ctx;

  log_fire (engine, &m->log, arg);
  if (arg == 0)
    {
      sim_engine_cancel (engine, m->victim);
      sim_engine_reschedule (engine, m->moved, sim_engine_now (engine) + 1);
    }
}

START_TEST (test_engine_cancel)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  sim_engine_schedule (engine, 10, log_fire, &log, 0);
  SimEventId mid = sim_engine_schedule (engine, 20, log_fire, &log, 1);
  sim_engine_schedule (engine, 30, log_fire, &log, 2);
  sim_engine_cancel (engine, mid);
  ck_assert_uint_eq (sim_engine_run (engine), 2);
  ck_assert_uint_eq (sim_engine_events (engine), 2);

  static const uint64_t want_args[] = { 0, 2 };
  static const SimTime want_times[] = { 10, 30 };
  assert_log (&log, want_args, want_times, G_N_ELEMENTS (want_args));
  log_clear (&log);
}
END_TEST

START_TEST (test_engine_cancel_from_handler)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Mover m;

  log_init (&m.log);
  sim_engine_schedule (engine, 10, mover_fire, &m, 0);
  m.victim = sim_engine_schedule (engine, 20, mover_fire, &m, 1);
  m.moved = sim_engine_schedule (engine, 40, mover_fire, &m, 2);
  sim_engine_schedule (engine, 30, mover_fire, &m, 3);
  ck_assert_uint_eq (sim_engine_run (engine), 3);

  static const uint64_t want_args[] = { 0, 2, 3 };
  static const SimTime want_times[] = { 10, 11, 30 };
  assert_log (&m.log, want_args, want_times, G_N_ELEMENTS (want_args));
  log_clear (&m.log);
}
END_TEST

/* A cancelled id goes back to the pool: scheduling again must not leave a
 * stale copy of the cancelled event behind. */
START_TEST (test_engine_cancel_then_reuse)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  for (uint64_t round = 0; round < 100; round++)
    {
      SimEventId id = sim_engine_schedule (engine, 10, log_fire, &log, 1000);
      sim_engine_cancel (engine, id);
    }
  sim_engine_schedule (engine, 10, log_fire, &log, 7);
  ck_assert_uint_eq (sim_engine_run (engine), 1);

  static const uint64_t want_args[] = { 7 };
  static const SimTime want_times[] = { 10 };
  assert_log (&log, want_args, want_times, 1);
  log_clear (&log);
}
END_TEST

START_TEST (test_engine_run_counts)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  for (uint64_t i = 0; i < 3; i++)
    sim_engine_schedule (engine, 100 + (SimTime) i, log_fire, &log, i);
  ck_assert_uint_eq (sim_engine_run (engine), 3);
  ck_assert_uint_eq (sim_engine_events (engine), 3);
  ck_assert_int_eq (sim_engine_now (engine), 102);

  /* A second run continues the clock and the total. */
  for (uint64_t i = 0; i < 4; i++)
    sim_engine_schedule (engine, sim_engine_now (engine), log_fire, &log, i);
  ck_assert_uint_eq (sim_engine_run (engine), 4);
  ck_assert_uint_eq (sim_engine_events (engine), 7);
  ck_assert_uint_eq (sim_engine_run (engine), 0);
  ck_assert_uint_eq (sim_engine_events (engine), 7);
  ck_assert_int_eq (sim_engine_now (engine), 102);
  ck_assert_uint_eq (log.args->len, 7);
  log_clear (&log);
}
END_TEST

/* Ping-pong: one event pending at a time, each firing schedules the next.
 * Recycled ids keep the pool to a handful of slots; an engine that never
 * recycled would hand out ids up to the event count. */
typedef struct {
  uint64_t remaining;
  SimEventId max_id;
  SimTime last;
  gboolean monotonic;
} PingPong;

static void
ping (SimEngine *engine, void *ctx, uint64_t arg);

static void
pong (SimEngine *engine, void *ctx, uint64_t arg)
{
  ping (engine, ctx, arg);
}

static void
ping (SimEngine *engine, void *ctx, uint64_t arg)
{
  PingPong *p = ctx;
  SimTime now = sim_engine_now (engine);

  if (now < p->last)
    p->monotonic = FALSE;
  p->last = now;
  if (--p->remaining == 0)
    return;
  SimEventId id = sim_engine_schedule (engine, now + 1 + (SimTime) (arg % 3),
                                       arg % 2 ? ping : pong, p, arg + 1);
  p->max_id = MAX (p->max_id, id);
}

START_TEST (test_engine_ids_recycled)
{
  enum { N = 100000 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  PingPong p = { N, 0, 0, TRUE };

  p.max_id = sim_engine_schedule (engine, 0, ping, &p, 0);
  ck_assert_uint_eq (sim_engine_run (engine), N);
  ck_assert_uint_eq (sim_engine_events (engine), N);
  ck_assert_uint_eq (p.remaining, 0);
  ck_assert (p.monotonic);
  ck_assert_uint_lt (p.max_id, 16);
}
END_TEST

/* Hold model: N events pending, each firing replaces itself at now plus a
 * pseudo-random delay, as the benchmark does; the clock must never go
 * back and every firing must be counted. */
typedef struct {
  GRand *rng;        /* owned by the test */
  uint64_t budget;   /* firings left that may schedule a successor */
  SimTime last;
  uint64_t backwards;
} Hold;

static void
hold_fire (SimEngine *engine, void *ctx, uint64_t arg)
{
  Hold *h = ctx;
  SimTime now = sim_engine_now (engine);

  if (now < h->last)
    h->backwards++;
  h->last = now;
  if (h->budget == 0)
    return;
  h->budget--;
  sim_engine_schedule (engine, now + g_rand_int_range (h->rng, 0, 1000),
                       hold_fire, h, arg);
}

START_TEST (test_engine_hold_model)
{
  enum { PENDING = 200, SUCCESSORS = 20000 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  Hold h = { rng, SUCCESSORS, 0, 0 };

  for (uint64_t i = 0; i < PENDING; i++)
    sim_engine_schedule (engine, g_rand_int_range (rng, 0, 1000), hold_fire,
                         &h, i);
  ck_assert_uint_eq (sim_engine_run (engine), PENDING + SUCCESSORS);
  ck_assert_uint_eq (h.backwards, 0);
  ck_assert_int_eq (sim_engine_now (engine), h.last);
}
END_TEST

/* Scheduling in the past is a bug (engine.h) and must assert. */
static void
noop (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) engine;
  (void) ctx;
  (void) arg;
}

static void
schedule_in_past (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) ctx;
  (void) arg;
  sim_engine_schedule (engine, sim_engine_now (engine) - 1, noop, NULL, 0);
}

START_TEST (test_engine_past_asserts)
{
  SimEngine *engine = sim_engine_new ();

  sim_engine_schedule (engine, 10, schedule_in_past, NULL, 0);
  sim_engine_run (engine);
}
END_TEST

/* A handler that schedules its successor `arg` more picoseconds on, with
 * the arithmetic of the executor: saturating, so a step past 2^63 ps
 * stays at SIM_TIME_MAX instead of wrapping into the past. */
static void
far_step (SimEngine *engine, void *ctx, uint64_t arg)
{
  log_fire (engine, ctx, arg);
  sim_engine_schedule (engine, sim_time_add (sim_engine_now (engine),
                                             (SimTime) arg),
                       far_step, ctx, arg);
}

/* Times that pass 2^63 ps stop the run with overflowed set, every event
 * before them fired; on the old engine the wrapped time failed its
 * at >= now assertion. */
START_TEST (test_engine_overflow_stops)
{
  static const uint64_t step = SIM_TIME_MAX / 2 + 1;
  static const uint64_t want_args[] = { step, step };
  static const SimTime want_times[] = { 0, SIM_TIME_MAX / 2 + 1 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Log log;

  log_init (&log);
  sim_engine_schedule (engine, 0, far_step, &log, step);
  ck_assert (!sim_engine_overflowed (engine));
  ck_assert_uint_eq (sim_engine_run (engine), 2);
  ck_assert (sim_engine_overflowed (engine));
  assert_log (&log, want_args, want_times, G_N_ELEMENTS (want_args));
  log_clear (&log);
}
END_TEST

/* The checked arithmetic of simtime.h at its edges. */
START_TEST (test_checked_arithmetic)
{
  ck_assert_int_eq (sim_time_from_s (1.5e-12), 2);
  ck_assert_int_eq (sim_time_from_s (86400), 86400 * INT64_C (1000000000000));
  ck_assert_int_eq (sim_time_from_s (1e7), SIM_TIME_MAX);     /* 116 days */
  ck_assert_int_eq (sim_time_from_s (INFINITY), SIM_TIME_MAX);
  ck_assert_int_eq (sim_time_from_s (NAN), SIM_TIME_MAX);
  ck_assert_int_eq (sim_time_from_ps (9223372036854774784.0),
                    INT64_C (9223372036854774784));
  ck_assert_int_eq (sim_time_add (SIM_TIME_MAX - 1, 1), SIM_TIME_MAX);
  ck_assert_int_eq (sim_time_add (SIM_TIME_MAX - 1, 2), SIM_TIME_MAX);
  ck_assert_int_eq (sim_time_add (5, SIM_TIME_MAX), SIM_TIME_MAX);
  ck_assert_int_eq (sim_time_add (5, 7), 12);
  ck_assert_uint_eq (sat_mul_u64 (UINT64_C (1) << 32, UINT64_C (1) << 32),
                     UINT64_MAX);
  ck_assert_uint_eq (sat_mul_u64 (UINT64_C (1) << 31, UINT64_C (1) << 32),
                     UINT64_C (1) << 63);
  ck_assert_uint_eq (sat_add_u64 (UINT64_MAX - 1, 2), UINT64_MAX);
  ck_assert_uint_eq (sat_add_u64 (3, 4), 7);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
engine_suite (void)
{
  Suite *s = suite_create ("engine");
  TCase *tc;
  /* Death tests need a child process to die in; CK_FORK=no (for a
   * debugger) drops them rather than killing the whole run. */
  gboolean fork = g_strcmp0 (g_getenv ("CK_FORK"), "no") != 0;

  tc = tcase_create ("eventq");
  tcase_add_test (tc, test_eventq_empty);
  tcase_add_test (tc, test_eventq_order);
  tcase_add_test (tc, test_eventq_fifo_at_one_time);
  tcase_add_test (tc, test_eventq_update_up);
  tcase_add_test (tc, test_eventq_update_down);
  tcase_add_test (tc, test_eventq_update_same_time_requeues);
  tcase_add_test (tc, test_eventq_remove);
  tcase_add_test (tc, test_eventq_random_vs_reference);
  tcase_add_test (tc, test_eventq_grouped_vs_reference);
  if (fork)
    tcase_add_test_raise_signal (tc, test_eventq_double_push_asserts, SIGABRT);
  suite_add_tcase (s, tc);

  tc = tcase_create ("engine");
  tcase_add_test (tc, test_engine_fresh);
  tcase_add_test (tc, test_engine_time_order);
  tcase_add_test (tc, test_engine_same_time_fifo);
  tcase_add_test (tc, test_engine_handler_schedules);
  tcase_add_test (tc, test_engine_reschedule);
  tcase_add_test (tc, test_engine_cancel);
  tcase_add_test (tc, test_engine_cancel_from_handler);
  tcase_add_test (tc, test_engine_cancel_then_reuse);
  tcase_add_test (tc, test_engine_run_counts);
  tcase_add_test (tc, test_engine_ids_recycled);
  tcase_add_test (tc, test_engine_hold_model);
  tcase_add_test (tc, test_engine_overflow_stops);
  tcase_add_test (tc, test_checked_arithmetic);
  if (fork)
    tcase_add_test_raise_signal (tc, test_engine_past_asserts, SIGABRT);
  suite_add_tcase (s, tc);

  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (engine_suite ());

  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
