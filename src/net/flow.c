/* flow.c: max-min fair flows; see flow.h. */
#include "net/flow.h"

#include <math.h>

typedef struct {
  double remaining;     /* bytes */
  double rate;          /* bytes/s */
  double old_rate;      /* before the last reshare */
  SimTime since;        /* when remaining was last brought up to date */
  FlowUse *uses;        /* owned; NULL for a free slot */
  guint n_uses;
  SimEventId event;
  SimEventFn fn;
  void *ctx;
  uint64_t arg;
  gboolean frozen;      /* during progressive filling */
} Flow;

struct FlowNet {
  SimEngine *engine;
  uint32_t n_resources;
  size_t resources_cap;
  double *capacity;     /* owned */
  double *left;         /* owned: capacity not yet handed out */
  double *load;         /* owned: coefficients of unfrozen flows */
  GArray *flows;        /* Flow, slots reused */
  GArray *free_slots;   /* uint32_t */
  GArray *active;       /* uint32_t ids of running flows */
};

FlowNet *
flow_net_new (SimEngine *engine, guint resources, const double *capacity)
{
  FlowNet *net = g_new0 (FlowNet, 1);
  net->engine = engine;
  net->flows = g_array_new (FALSE, TRUE, sizeof (Flow));
  net->free_slots = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  net->active = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  for (guint r = 0; r < resources; r++)
    flow_net_add_resource (net, capacity[r]);
  return net;
}

uint32_t
flow_net_add_resource (FlowNet *net, double capacity)
{
  g_assert (capacity > 0 && net->n_resources < UINT32_MAX);
  if (net->n_resources == net->resources_cap)
    {
      net->resources_cap = MAX (16, net->resources_cap * 2);
      /* size_t: the doubling cannot wrap before n_resources reaches the
       * assertion's bound. */
      net->capacity = g_renew (double, net->capacity, net->resources_cap);
      net->left = g_renew (double, net->left, net->resources_cap);
      net->load = g_renew (double, net->load, net->resources_cap);
    }
  net->capacity[net->n_resources] = capacity;
  net->left[net->n_resources] = net->load[net->n_resources] = 0;
  return net->n_resources++;
}

void
flow_net_free (FlowNet *net)
{
  if (!net)
    return;
  for (guint i = 0; i < net->flows->len; i++)
    g_free (g_array_index (net->flows, Flow, i).uses);
  g_free (net->capacity);
  g_free (net->left);
  g_free (net->load);
  g_array_unref (net->flows);
  g_array_unref (net->free_slots);
  g_array_unref (net->active);
  g_free (net);
}

static Flow *
flow_at (const FlowNet *net, uint32_t id)
{
  return &g_array_index (net->flows, Flow, id);
}

/* Progressive filling over the active flows. */
static void
share (FlowNet *net)
{
  guint n = net->active->len;
  for (guint i = 0; i < n; i++)
    {
      Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
      f->frozen = FALSE;
      f->rate = 0;
      for (guint u = 0; u < f->n_uses; u++)
        {
          net->left[f->uses[u].resource] = net->capacity[f->uses[u].resource];
          net->load[f->uses[u].resource] = 0;
        }
    }
  for (guint i = 0; i < n; i++)
    {
      Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
      for (guint u = 0; u < f->n_uses; u++)
        net->load[f->uses[u].resource] += f->uses[u].coef;
    }
  for (guint unfrozen = n; unfrozen > 0;)
    {
      /* The smallest equal increment that fills some resource. */
      double step = INFINITY;
      for (guint i = 0; i < n; i++)
        {
          Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
          if (f->frozen)
            continue;
          for (guint u = 0; u < f->n_uses; u++)
            {
              uint32_t r = f->uses[u].resource;
              if (net->load[r] > 0)
                step = MIN (step, MAX (net->left[r], 0) / net->load[r]);
            }
        }
      g_assert (isfinite (step));   /* every flow uses some resource */
      for (guint i = 0; i < n; i++)
        {
          Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
          if (!f->frozen)
            f->rate += step;
        }
      /* Take the increment from every loaded resource, then freeze the
       * flows through a full one. */
      for (guint i = 0; i < n; i++)
        {
          Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
          if (f->frozen)
            continue;
          for (guint u = 0; u < f->n_uses; u++)
            net->left[f->uses[u].resource] -= step * f->uses[u].coef;
        }
      for (guint i = 0; i < n; i++)
        {
          Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
          if (f->frozen)
            continue;
          gboolean full = FALSE;
          for (guint u = 0; u < f->n_uses && !full; u++)
            {
              uint32_t r = f->uses[u].resource;
              full = net->left[r] <= 1e-9 * net->capacity[r];
            }
          if (!full)
            continue;
          f->frozen = TRUE;
          unfrozen--;
          for (guint u = 0; u < f->n_uses; u++)
            net->load[f->uses[u].resource] -= f->uses[u].coef;
        }
    }
}

static void on_flow_done (SimEngine *engine, void *ctx, uint64_t arg);

/* Brings every active flow's bytes up to now, shares the resources again
 * and re-keys the completion of each flow whose rate changed. NEW is a
 * flow just started (no event yet), or UINT32_MAX. */
static void
reshare (FlowNet *net, uint32_t new_flow)
{
  SimTime now = sim_engine_now (net->engine);
  guint n = net->active->len;
  for (guint i = 0; i < n; i++)
    {
      Flow *f = flow_at (net, g_array_index (net->active, uint32_t, i));
      f->remaining = MAX (0, f->remaining - f->rate * sim_time_to_s (now - f->since));
      f->since = now;
      f->old_rate = f->rate;
    }
  share (net);
  for (guint i = 0; i < n; i++)
    {
      uint32_t id = g_array_index (net->active, uint32_t, i);
      Flow *f = flow_at (net, id);
      if (id != new_flow && f->rate == f->old_rate)
        continue;
      /* A flow starved to a crawl by absurd inputs ends at SIM_TIME_MAX,
       * where the engine stops (simtime.h), rather than overflowing. */
      SimTime at = sim_time_add (now, sim_time_from_ps (
        ceil (f->remaining / f->rate * SIM_TIME_PS_PER_S)));
      if (id == new_flow)
        f->event = sim_engine_schedule (net->engine, at, on_flow_done, net, id);
      else
        sim_engine_reschedule (net->engine, f->event, at);
    }
}

static void
on_flow_done (SimEngine *engine, void *ctx, uint64_t arg)
{
  FlowNet *net = ctx;
  uint32_t id = (uint32_t) arg;
  Flow *f = flow_at (net, id);
  SimEventFn fn = f->fn;
  void *fctx = f->ctx;
  uint64_t farg = f->arg;

  for (guint i = 0; i < net->active->len; i++)
    if (g_array_index (net->active, uint32_t, i) == id)
      {
        g_array_remove_index_fast (net->active, i);
        break;
      }
  g_clear_pointer (&f->uses, g_free);
  g_array_append_val (net->free_slots, id);
  reshare (net, UINT32_MAX);
  fn (engine, fctx, farg);
}

uint32_t
flow_start (FlowNet *net, double bytes, const FlowUse *uses, guint n_uses,
            SimEventFn fn, void *ctx, uint64_t arg)
{
  g_assert (n_uses > 0 && bytes > 0);
  uint32_t id;
  if (net->free_slots->len > 0)
    {
      id = g_array_index (net->free_slots, uint32_t, net->free_slots->len - 1);
      g_array_set_size (net->free_slots, net->free_slots->len - 1);
    }
  else
    {
      id = net->flows->len;
      g_array_set_size (net->flows, id + 1);
    }
  for (guint u = 0; u < n_uses; u++)
    g_assert (uses[u].resource < net->n_resources && uses[u].coef > 0);
  Flow *f = flow_at (net, id);
  *f = (Flow) { bytes, 0, 0, sim_engine_now (net->engine),
                g_memdup2 (uses, n_uses * sizeof *uses), n_uses, 0, fn, ctx,
                arg, FALSE };
  g_array_append_val (net->active, id);
  reshare (net, id);
  return id;
}

double
flow_rate (const FlowNet *net, uint32_t flow)
{
  return flow_at (net, flow)->rate;
}
