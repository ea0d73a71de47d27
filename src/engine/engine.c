/* engine.c: the event pool and the run loop; see engine.h. */
#include "engine/engine.h"
#include "engine/eventq.h"

typedef struct {
  SimEventFn fn;
  void *ctx;
  uint64_t arg;
  const void *touch;    /* what fn reads first, or NULL */
} Event;

struct SimEngine {
  EventQ *queue;        /* owned */
  Event *pool;          /* owned: indexed by SimEventId */
  uint32_t pool_len, pool_cap;
  uint32_t *free_ids;   /* owned: recycled ids, used as a stack */
  uint32_t n_free, free_cap;
  SimTime now;
  uint64_t fired;
  gboolean overflowed;
  SimWarmFn warm;       /* or NULL */
  void *warm_ctx;
};

SimEngine *
sim_engine_new (void)
{
  SimEngine *e = g_new0 (SimEngine, 1);
  e->queue = eventq_new ();
  return e;
}

void
sim_engine_free (SimEngine *engine)
{
  if (engine == NULL)
    return;
  eventq_free (engine->queue);
  g_free (engine->pool);
  g_free (engine->free_ids);
  g_free (engine);
}

void
sim_engine_set_warm (SimEngine *engine, SimWarmFn warm, void *ctx)
{
  engine->warm = warm;
  engine->warm_ctx = ctx;
}

SimTime
sim_engine_now (const SimEngine *engine)
{
  return engine->now;
}

static uint32_t
alloc_id (SimEngine *e)
{
  if (e->n_free > 0)
    return e->free_ids[--e->n_free];
  if (e->pool_len == e->pool_cap)
    {
      e->pool_cap = MAX (256, e->pool_cap * 2);
      e->pool = g_renew (Event, e->pool, e->pool_cap);
    }
  return e->pool_len++;
}

static void
release_id (SimEngine *e, uint32_t id)
{
  if (e->n_free == e->free_cap)
    {
      e->free_cap = MAX (256, e->free_cap * 2);
      e->free_ids = g_renew (uint32_t, e->free_ids, e->free_cap);
    }
  e->free_ids[e->n_free++] = id;
}

SimEventId
sim_engine_schedule_touching (SimEngine *engine, SimTime at, SimEventFn fn,
                              void *ctx, uint64_t arg, const void *touch)
{
  g_assert (at >= engine->now);
  uint32_t id = alloc_id (engine);
  engine->pool[id] = (Event) { fn, ctx, arg, touch };
  eventq_push (engine->queue, id, at);
  return id;
}

SimEventId
sim_engine_schedule (SimEngine *engine, SimTime at, SimEventFn fn, void *ctx,
                     uint64_t arg)
{
  return sim_engine_schedule_touching (engine, at, fn, ctx, arg, NULL);
}

void
sim_engine_reschedule (SimEngine *engine, SimEventId id, SimTime at)
{
  g_assert (at >= engine->now);
  eventq_update (engine->queue, id, at);
}

void
sim_engine_cancel (SimEngine *engine, SimEventId id)
{
  eventq_remove (engine->queue, id);
  release_id (engine, id);
}

uint64_t
sim_engine_run (SimEngine *engine)
{
  return sim_engine_run_for (engine, UINT64_MAX);
}

uint64_t
sim_engine_run_for (SimEngine *engine, uint64_t n)
{
  uint64_t before = engine->fired;
  uint32_t id;
  SimTime t;
  while (engine->fired - before < n && eventq_pop (engine->queue, &id, &t))
    {
      if (t == SIM_TIME_MAX)
        {
          /* A saturated time: nothing after it is meaningful. */
          release_id (engine, id);
          engine->overflowed = TRUE;
          break;
        }
      g_assert (t >= engine->now);
      engine->now = t;
      Event ev = engine->pool[id];
      /* Release first: the handler may schedule and reuse this id. */
      release_id (engine, id);
#if defined __GNUC__
      /* The next event's touch is on its way while this one runs; with
       * a warm hook, two events ahead: the second's touch, and what the
       * first's leads to (its touch was asked for one event ago). A
       * prefetch is a hint: NULL or a stale pointer cannot fault, and the
       * order of events may change before they fire. */
      uint32_t next = eventq_peek_id (engine->queue);
      const void *touch = next != UINT32_MAX ? engine->pool[next].touch : NULL;
      if (engine->warm == NULL)
        __builtin_prefetch (touch);
      else if (next != UINT32_MAX)
        {
          uint32_t second = eventq_peek_second (engine->queue);
          if (second != UINT32_MAX)
            __builtin_prefetch (engine->pool[second].touch);
          if (touch != NULL)
            engine->warm (touch, engine->warm_ctx);
        }
#endif
      engine->fired++;
      ev.fn (engine, ev.ctx, ev.arg);
    }
  return engine->fired - before;
}

gboolean
sim_engine_overflowed (const SimEngine *engine)
{
  return engine->overflowed;
}

uint64_t
sim_engine_events (const SimEngine *engine)
{
  return engine->fired;
}
