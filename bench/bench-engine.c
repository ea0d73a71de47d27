/* bench-engine.c: how fast the event core runs, in events per second.
 *
 * The hold model (Vaucher and Duval's classic priority-queue benchmark):
 * N events pending, and each firing schedules one successor at now plus a
 * random delay, so the queue stays at N while the pool recycles ids. It
 * is measured through the engine (schedule + pop + dispatch) and on the
 * bare queue (push + pop), and the queue's re-key is measured on its own.
 * Prints figures only: timing depends on the machine, so nothing here
 * asserts.
 *
 * Usage: bench-engine [EVENTS]   (default 1e7 per case) */
#include <stdio.h>
#include <stdlib.h>
#include <glib.h>

#include "engine/engine.h"
#include "engine/eventq.h"

/* Delays uniform in [0, 2 * MEAN_DELAY) ps. The spread matters more than
 * the scale; a microsecond is the order of one kernel. */
#define MEAN_DELAY 1000000

/* xorshift64*: a few cycles per draw, so the benchmark measures the
 * queue rather than the generator (GRand's Mersenne Twister is slower). */
static inline uint64_t
rng_next (uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C (2685821657736338717);
}

static inline SimTime
rng_delay (uint64_t *state)
{
  return (SimTime) (rng_next (state) >> 32) % (2 * MEAN_DELAY);
}

static double
seconds_since (gint64 start_us)
{
  return (double) (g_get_monotonic_time () - start_us) / 1e6;
}

static void
report (const char *what, size_t n, uint64_t count, const char *unit,
        double s)
{
  printf ("%s n=%zu: %" G_GUINT64_FORMAT " %s in %.2f s = %.1f M %s/s\n",
          what, n, count, unit, s, (double) count / s / 1e6, unit);
  fflush (stdout);
}

/* ---- the engine ---- */

typedef struct {
  uint64_t rng;
  uint64_t budget;   /* successors still to schedule */
} Hold;

static void
hold_fire (SimEngine *engine, void *ctx, uint64_t arg)
{
  Hold *h = ctx;

  if (h->budget == 0)
    return;
  h->budget--;
  sim_engine_schedule (engine, sim_engine_now (engine) + rng_delay (&h->rng),
                       hold_fire, h, arg);
}

static void
bench_engine_hold (size_t n, uint64_t events)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Hold h = { UINT64_C (0x9E3779B97F4A7C15), events > n ? events - n : 0 };

  /* Filling the queue is set-up, but cheap next to the run; it is timed
   * with the run because those n firings are counted too. */
  gint64 start = g_get_monotonic_time ();
  for (size_t i = 0; i < n; i++)
    sim_engine_schedule (engine, rng_delay (&h.rng), hold_fire, &h, i);
  uint64_t fired = sim_engine_run (engine);
  report ("engine hold", n, fired, "events", seconds_since (start));
}

/* ---- the bare queue ---- */

static EventQ *
fill_queue (size_t n, uint64_t *rng)
{
  EventQ *q = eventq_new ();

  for (size_t i = 0; i < n; i++)
    eventq_push (q, (uint32_t) i, rng_delay (rng));
  return q;
}

/* One op is a pop and the push of its successor. */
static void
bench_eventq_hold (size_t n, uint64_t ops)
{
  uint64_t rng = UINT64_C (0x2545F4914F6CDD1D);
  EventQ *q = fill_queue (n, &rng);
  uint32_t id;
  SimTime t;

  gint64 start = g_get_monotonic_time ();
  for (uint64_t i = 0; i < ops; i++)
    {
      eventq_pop (q, &id, &t);
      eventq_push (q, id, t + rng_delay (&rng));
    }
  report ("eventq push+pop", n, ops, "ops", seconds_since (start));
  eventq_free (q);
}

/* Re-keys a random queued id to a random time around the head, as a
 * flow's completion moves when bandwidth shares change: some updates
 * move up, some down. */
static void
bench_eventq_update (size_t n, uint64_t ops)
{
  uint64_t rng = UINT64_C (0xD1B54A32D192ED03);
  EventQ *q = fill_queue (n, &rng);

  gint64 start = g_get_monotonic_time ();
  for (uint64_t i = 0; i < ops; i++)
    {
      uint32_t id = (uint32_t) ((rng_next (&rng) >> 32) % n);
      eventq_update (q, id, rng_delay (&rng));
    }
  report ("eventq update", n, ops, "ops", seconds_since (start));
  eventq_free (q);
}

int
main (int argc, char **argv)
{
  static const size_t sizes[] = { 1000, 100000 };
  uint64_t events = 10000000;

  if (argc > 1)
    {
      events = g_ascii_strtoull (argv[1], NULL, 10);
      if (events == 0)
        {
          fprintf (stderr, "usage: %s [EVENTS]\n", argv[0]);
          return EXIT_FAILURE;
        }
    }

  for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
    bench_engine_hold (sizes[i], events);
  for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
    bench_eventq_hold (sizes[i], events);
  for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
    bench_eventq_update (sizes[i], events);
  return EXIT_SUCCESS;
}
