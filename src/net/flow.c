/* flow.c: max-min fair flows; see flow.h.
 *
 * Each resource lists the running flows that use it, so the flows whose
 * rates a start or an end can change are found by walking from it: the
 * connected component of the flow-resource graph around it. Only that
 * component is filled again; the rates of every other flow stay as they
 * are, since max-min fairness on one component does not depend on any
 * other. A step costs the size of the components it touches, not the
 * number of running flows (re-solving every flow made `--full` quadratic
 * in the GPU count).
 *
 * A flow's life:
 *
 *   flow_start --> running (in its resources' lists; rate from the last
 *   fill of its component; completion event keyed at remaining / rate)
 *   --(completion event)--> done: off the lists, its slot free, its
 *   component's rest filled again, then its callback. */
#include "net/flow.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  double remaining;     /* bytes */
  double rate;          /* bytes/s */
  double old_rate;      /* before the last fill */
  SimTime since;        /* when remaining was last brought up to date */
  FlowUse *uses;        /* owned; NULL for a free slot */
  guint n_uses;
  SimEventId event;
  SimEventFn fn;
  void *ctx;
  uint64_t arg;
  uint64_t mark;        /* the walk that last reached it */
  uint32_t bottleneck;  /* a full resource on which no flow runs faster */
} Flow;

/* A running flow on a resource, and its coefficient there. */
typedef struct {
  uint32_t flow;
  double coef;
} User;

typedef struct {
  double capacity;
  double left;          /* during filling: capacity not yet handed out */
  double load;          /* during filling: coefficients of unfrozen flows */
  User *users;          /* owned: the running flows that use it */
  uint32_t n_users, users_cap;
  uint64_t mark;        /* the walk that last reached it */
  uint64_t filled;      /* the fill that last set left */
} Resource;

/* A list of flow or resource ids, grown by doubling. */
typedef struct {
  uint32_t *v;          /* owned */
  guint len, cap;
} IdList;

static inline void
ids_push (IdList *l, uint32_t id)
{
  if (l->len == l->cap)
    {
      l->cap = MAX (16, 2 * l->cap);
      l->v = g_renew (uint32_t, l->v, l->cap);
    }
  l->v[l->len++] = id;
}

struct FlowNet {
  SimEngine *engine;
  Resource *resources;  /* owned */
  uint32_t n_resources;
  size_t resources_cap;
  GArray *flows;        /* Flow, slots reused */
  IdList free_slots;
  uint64_t walk;        /* the current walk's mark (64 bits: never wraps) */
  uint64_t fills;       /* the current fill's mark */
  /* Scratch for one fill: the component's flows and the resources left
   * to visit. */
  IdList component, unfrozen, stack;
};

FlowNet *
flow_net_new (SimEngine *engine, guint resources, const double *capacity)
{
  FlowNet *net = g_new0 (FlowNet, 1);
  net->engine = engine;
  net->flows = g_array_new (FALSE, TRUE, sizeof (Flow));
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
      /* size_t: the doubling cannot wrap before n_resources reaches the
       * assertion's bound. */
      net->resources_cap = MAX (16, net->resources_cap * 2);
      net->resources = g_renew (Resource, net->resources,
                                net->resources_cap);
    }
  net->resources[net->n_resources] = (Resource) { .capacity = capacity };
  return net->n_resources++;
}

void
flow_net_free (FlowNet *net)
{
  if (!net)
    return;
  for (guint i = 0; i < net->flows->len; i++)
    g_free (g_array_index (net->flows, Flow, i).uses);
  for (uint32_t r = 0; r < net->n_resources; r++)
    g_free (net->resources[r].users);
  g_free (net->resources);
  g_array_unref (net->flows);
  g_free (net->free_slots.v);
  g_free (net->component.v);
  g_free (net->unfrozen.v);
  g_free (net->stack.v);
  g_free (net);
}

static Flow *
flow_at (const FlowNet *net, uint32_t id)
{
  return &g_array_index (net->flows, Flow, id);
}

static void
add_user (Resource *r, uint32_t id, double coef)
{
  if (r->n_users == r->users_cap)
    {
      r->users_cap = MAX (4, r->users_cap * 2);
      r->users = g_renew (User, r->users, r->users_cap);
    }
  r->users[r->n_users++] = (User) { id, coef };
}

static void
remove_user (Resource *r, uint32_t id)
{
  for (uint32_t i = 0; i < r->n_users; i++)
    if (r->users[i].flow == id)
      {
        r->users[i] = r->users[--r->n_users];
        return;
      }
  g_assert_not_reached ();
}

static int
by_id (gconstpointer a, gconstpointer b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

/* Collects into net->component the running flows connected to the
 * resources of SEEDS[0 .. n), in id order: the order of a fill depends
 * on which flows it fills, not on how they were reached. FALSE as soon
 * as they hold more than MAX_USES uses (the list is then partial). */
static gboolean
walk_components (FlowNet *net, const FlowUse *seeds, guint n,
                 uint64_t max_uses)
{
  uint64_t uses = 0;
  net->component.len = 0;
  net->stack.len = 0;
  for (guint k = 0; k < n; k++)
    if (net->resources[seeds[k].resource].mark != net->walk)
      {
        net->resources[seeds[k].resource].mark = net->walk;
        ids_push (&net->stack, seeds[k].resource);
      }
  while (net->stack.len > 0)
    {
      uint32_t r = net->stack.v[--net->stack.len];
      const Resource *res = &net->resources[r];
      for (uint32_t i = 0; i < res->n_users; i++)
        {
          uint32_t id = res->users[i].flow;
          Flow *f = flow_at (net, id);
          if (f->mark == net->walk)
            continue;
          f->mark = net->walk;
          ids_push (&net->component, id);
          uses += f->n_uses;
          if (uses > max_uses)
            return FALSE;
          for (guint u = 0; u < f->n_uses; u++)
            {
              uint32_t next = f->uses[u].resource;
              if (net->resources[next].mark != net->walk)
                {
                  net->resources[next].mark = net->walk;
                  ids_push (&net->stack, next);
                }
            }
        }
    }
  if (net->component.len > 1)
    qsort (net->component.v, net->component.len, sizeof (uint32_t), by_id);
  return TRUE;
}

/* Spare capacity below this share of a resource counts as full (the
 * fill's test). */
#define FULL_SHARE 1e-9
/* Rates closer than this share are too close to tell apart. */
#define SAME_RATE 1e-9
/* A local settling that grows past this many uses gives up for the fill
 * of whole components: it costs about as much by then. */
#define LOCAL_MAX_USES 4096
/* Components of at most this many uses are filled whole at once: cheaper
 * than settling them, and all there is in symmetric mode. */
#define SMALL_COMPONENT 64

/* Progressive filling over the flows of net->component: every unfrozen
 * flow's rate grows by the same step until a resource is full, and the
 * flows through it freeze there (their bottleneck). With LOCAL, the flows
 * not in the component (not marked with the current walk) keep their
 * rates and what they take of each resource. */
static void
fill (FlowNet *net, gboolean local)
{
  Resource *res = net->resources;
  IdList *comp = &net->component, *live = &net->unfrozen;
  net->fills++;
  for (guint i = 0; i < comp->len; i++)
    {
      Flow *f = flow_at (net, comp->v[i]);
      f->rate = 0;
      for (guint u = 0; u < f->n_uses; u++)
        {
          Resource *r = &res[f->uses[u].resource];
          if (r->filled == net->fills)
            continue;
          r->filled = net->fills;
          r->left = r->capacity;
          r->load = 0;
          for (uint32_t k = 0; local && k < r->n_users; k++)
            {
              const Flow *g = flow_at (net, r->users[k].flow);
              if (g->mark != net->walk)
                r->left -= r->users[k].coef * g->rate;
            }
        }
    }
  for (guint i = 0; i < comp->len; i++)
    {
      Flow *f = flow_at (net, comp->v[i]);
      for (guint u = 0; u < f->n_uses; u++)
        res[f->uses[u].resource].load += f->uses[u].coef;
    }
  live->len = 0;
  for (guint i = 0; i < comp->len; i++)
    ids_push (live, comp->v[i]);
  while (live->len > 0)
    {
      /* The smallest equal increment that fills some resource. */
      double step = INFINITY;
      for (guint i = 0; i < live->len; i++)
        {
          const Flow *f = flow_at (net, live->v[i]);
          for (guint u = 0; u < f->n_uses; u++)
            {
              const Resource *r = &res[f->uses[u].resource];
              if (r->load > 0)
                step = MIN (step, MAX (r->left, 0) / r->load);
            }
        }
      g_assert (isfinite (step));   /* every flow uses some resource */
      /* Take the increment from every loaded resource, then freeze the
       * flows through a full one; the others stay, in order. */
      for (guint i = 0; i < live->len; i++)
        {
          Flow *f = flow_at (net, live->v[i]);
          f->rate += step;
          for (guint u = 0; u < f->n_uses; u++)
            res[f->uses[u].resource].left -= step * f->uses[u].coef;
        }
      guint kept = 0;
      for (guint i = 0; i < live->len; i++)
        {
          uint32_t id = live->v[i];
          Flow *f = flow_at (net, id);
          gboolean full = FALSE;
          for (guint u = 0; u < f->n_uses && !full; u++)
            {
              const Resource *r = &res[f->uses[u].resource];
              full = r->left <= FULL_SHARE * r->capacity;
              if (full)
                f->bottleneck = f->uses[u].resource;
            }
          if (!full)
            {
              live->v[kept++] = id;
              continue;
            }
          for (guint u = 0; u < f->n_uses; u++)
            res[f->uses[u].resource].load -= f->uses[u].coef;
        }
      live->len = kept;
    }
}

static void on_flow_done (SimEngine *engine, void *ctx, uint64_t arg);

/* Keys flow ID's completion at its remaining bytes over its rate from
 * NOW: a new event when FRESH, else its event moved. */
static void
key_end (FlowNet *net, uint32_t id, SimTime now, gboolean fresh)
{
  Flow *f = flow_at (net, id);
  /* A flow starved to a crawl by absurd inputs ends at SIM_TIME_MAX,
   * where the engine stops (simtime.h), rather than overflowing. */
  SimTime at = sim_time_add (now, sim_time_from_ps (
    ceil (f->remaining / f->rate * SIM_TIME_PS_PER_S)));
  if (fresh)
    f->event = sim_engine_schedule (net->engine, at, on_flow_done, net, id);
  else
    sim_engine_reschedule (net->engine, f->event, at);
}

/* Brings the bytes of the flows in net->component up to now at the rates
 * they had (old_rate), and re-keys the completion of each whose rate
 * changed since; NEW_FLOW (or UINT32_MAX) gets its first event. */
static void
commit (FlowNet *net, uint32_t new_flow)
{
  SimTime now = sim_engine_now (net->engine);
  for (guint i = 0; i < net->component.len; i++)
    {
      uint32_t id = net->component.v[i];
      Flow *f = flow_at (net, id);
      f->remaining = MAX (0, f->remaining
                             - f->old_rate * sim_time_to_s (now - f->since));
      f->since = now;
      if (id == new_flow || f->rate != f->old_rate)
        key_end (net, id, now, id == new_flow);
    }
}

/* ---- settling a change locally --------------------------------------------
 * Max-min fairness has a local test (Bertsekas and Gallager, Data
 * Networks, section 6.5.2; it holds with coefficients too): rates are
 * max-min fair when they fit every resource and each flow crosses a full
 * resource on which no flow runs faster, its bottleneck. Each flow keeps
 * the bottleneck its last fill found. A start or an end can only move
 * the rates of the flows whose bottleneck it touches, and of those whose
 * bottleneck they touch in turn: settle() fills only that set, holding
 * every other flow at its rate, and grows it until the test passes.
 * Most starts and ends of pipeline sends settle with a flow or two,
 * where a fill of the component would take every data-parallel ring
 * across every node of a stage in `--full`. */

static void
join (FlowNet *net, uint32_t id)
{
  Flow *f = flow_at (net, id);
  f->mark = net->walk;
  f->old_rate = f->rate;
  ids_push (&net->component, id);
}

/* Whether resource R is full and no flow on it runs faster than G. */
static gboolean
is_bottleneck (const FlowNet *net, uint32_t r_id, const Flow *g)
{
  const Resource *r = &net->resources[r_id];
  double taken = 0;
  for (uint32_t k = 0; k < r->n_users; k++)
    {
      const Flow *h = flow_at (net, r->users[k].flow);
      if (h->rate > g->rate * (1 + SAME_RATE))
        return FALSE;
      taken += r->users[k].coef * h->rate;
    }
  return r->capacity - taken <= FULL_SHARE * r->capacity;
}

/* Whether flow ID (not being filled) still has a bottleneck: its own,
 * or another of its resources, which becomes its own. A ring whose
 * bottleneck NIC loses a send is often held as much by another. */
static gboolean
rebottleneck (FlowNet *net, uint32_t id)
{
  Flow *g = flow_at (net, id);
  if (is_bottleneck (net, g->bottleneck, g))
    return TRUE;
  for (guint u = 0; u < g->n_uses; u++)
    if (is_bottleneck (net, g->uses[u].resource, g))
      {
        g->bottleneck = g->uses[u].resource;
        return TRUE;
      }
  return FALSE;
}

/* Joins to the set the flows on resource R that are not in it and whose
 * rates it may move: those that ran faster than FILLED (a flow of the
 * set that has R as its bottleneck), and those whose bottleneck R was
 * but is no longer. Returns how many. */
static guint
join_moved (FlowNet *net, uint32_t r, const Flow *filled)
{
  const Resource *res = &net->resources[r];
  guint joined = 0;
  for (uint32_t k = 0; k < res->n_users; k++)
    {
      uint32_t id = res->users[k].flow;
      const Flow *g = flow_at (net, id);
      if (g->mark == net->walk)
        continue;
      if ((filled != NULL && g->rate > filled->rate * (1 + SAME_RATE))
          || (g->bottleneck == r && !rebottleneck (net, id)))
        {
          join (net, id);
          joined++;
        }
    }
  return joined;
}

/* Settles the rates after NEW_FLOW started (it is on its resources'
 * lists) or after a flow over GONE[0 .. n_gone) ended (it is off them):
 * fills the set of flows it may move, grown until every flow keeps a
 * bottleneck, and commits. Returns FALSE, every rate as it was, when the
 * set outgrows LOCAL_MAX_USES. */
static gboolean
settle (FlowNet *net, uint32_t new_flow, const FlowUse *gone, guint n_gone)
{
  IdList *set = &net->component;
  net->walk++;
  set->len = 0;
  if (new_flow != UINT32_MAX)
    join (net, new_flow);
  for (guint u = 0; u < n_gone; u++)
    join_moved (net, gone[u].resource, NULL);
  for (;;)
    {
      guint uses = 0;
      for (guint i = 0; i < set->len; i++)
        uses += flow_at (net, set->v[i])->n_uses;
      if (uses > LOCAL_MAX_USES)
        {
          for (guint i = 0; i < set->len; i++)
            {
              Flow *f = flow_at (net, set->v[i]);
              f->rate = f->old_rate;
            }
          return FALSE;
        }
      /* The order of a fill depends on which flows it fills. */
      if (set->len > 1)
        qsort (set->v, set->len, sizeof (uint32_t), by_id);
      fill (net, TRUE);
      guint joined = 0, before = set->len;
      for (guint i = 0; i < before; i++)
        {
          const Flow *f = flow_at (net, set->v[i]);
          for (guint u = 0; u < f->n_uses; u++)
            joined += join_moved (net, f->uses[u].resource,
                                  f->uses[u].resource == f->bottleneck
                                  ? f : NULL);
        }
      if (joined == 0)
        break;
    }
  commit (net, new_flow);
  return TRUE;
}

/* ---- filling components ------------------------------------------------ */

/* Fills the flows of net->component again and commits them. */
static void
refill (FlowNet *net, uint32_t new_flow)
{
  IdList *comp = &net->component;
  for (guint i = 0; i < comp->len; i++)
    {
      Flow *f = flow_at (net, comp->v[i]);
      f->old_rate = f->rate;
    }
  fill (net, FALSE);
  commit (net, new_flow);
}

/* ---- a flow alone -----------------------------------------------------------
 * In symmetric mode 99.5 % of starts and ends (a pipeline send, a DP
 * bucket) find no other flow on any of their resources (sweep-175b's
 * plans). A start's component is then the flow alone and an end's is
 * empty: no walk and no fill is needed, and these give what they would. */

/* Whether every resource of USES holds USERS running flows. */
static gboolean
alone (const FlowNet *net, const FlowUse *uses, guint n_uses, uint32_t users)
{
  for (guint u = 0; u < n_uses; u++)
    if (net->resources[uses[u].resource].n_users != users)
      return FALSE;
  return TRUE;
}

/* fill() of flow F alone, the same arithmetic in the same order: its
 * rate the least capacity over coefficient, its bottleneck the first
 * resource that leaves full. FALSE, F untouched, if rounding leaves none
 * full (fill() would step again). */
static gboolean
fill_alone (FlowNet *net, Flow *f)
{
  const Resource *res = net->resources;
  double step = INFINITY;
  for (guint u = 0; u < f->n_uses; u++)
    step = MIN (step, MAX (res[f->uses[u].resource].capacity, 0)
                      / f->uses[u].coef);
  for (guint u = 0; u < f->n_uses; u++)
    {
      const Resource *r = &res[f->uses[u].resource];
      if (r->capacity - step * f->uses[u].coef <= FULL_SHARE * r->capacity)
        {
          f->rate = step;
          f->bottleneck = f->uses[u].resource;
          return TRUE;
        }
    }
  return FALSE;
}

/* Works out the rates again after NEW_FLOW started over USES, or a flow
 * over USES ended (NEW_FLOW UINT32_MAX): a flow alone takes the short
 * path above, a small neighbourhood is filled whole at once, a large one
 * settled locally, and filled whole when that gives up. */
static void
reshare (FlowNet *net, const FlowUse *uses, guint n_uses, uint32_t new_flow)
{
  if (new_flow == UINT32_MAX ? alone (net, uses, n_uses, 0)
      : alone (net, uses, n_uses, 1)
        && fill_alone (net, flow_at (net, new_flow)))
    {
      if (new_flow != UINT32_MAX)
        key_end (net, new_flow, sim_engine_now (net->engine), TRUE);
      return;
    }
  net->walk++;
  gboolean small = walk_components (net, uses, n_uses, SMALL_COMPONENT);
  if (!small && settle (net, new_flow, new_flow == UINT32_MAX ? uses : NULL,
                        new_flow == UINT32_MAX ? n_uses : 0))
    return;
  if (!small)
    {
      net->walk++;
      walk_components (net, uses, n_uses, UINT64_MAX);
    }
  refill (net, new_flow);
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
  FlowUse *uses = g_steal_pointer (&f->uses);
  guint n_uses = f->n_uses;

  for (guint u = 0; u < n_uses; u++)
    remove_user (&net->resources[uses[u].resource], id);
  ids_push (&net->free_slots, id);
  reshare (net, uses, n_uses, UINT32_MAX);
  g_free (uses);
  fn (engine, fctx, farg);
}

uint32_t
flow_start (FlowNet *net, double bytes, const FlowUse *uses, guint n_uses,
            SimEventFn fn, void *ctx, uint64_t arg)
{
  g_assert (n_uses > 0 && bytes > 0);
  uint32_t id;
  if (net->free_slots.len > 0)
    id = net->free_slots.v[--net->free_slots.len];
  else
    {
      id = net->flows->len;
      g_array_set_size (net->flows, id + 1);
    }
  net->walk++;
  for (guint u = 0; u < n_uses; u++)
    {
      g_assert (uses[u].resource < net->n_resources && uses[u].coef > 0);
      Resource *r = &net->resources[uses[u].resource];
      g_assert (r->mark != net->walk);   /* each resource once */
      r->mark = net->walk;
    }
  Flow *f = flow_at (net, id);
  SimTime now = sim_engine_now (net->engine);
  *f = (Flow) { bytes, 0, 0, now, g_memdup2 (uses, n_uses * sizeof *uses),
                n_uses, 0, fn, ctx, arg, net->walk, 0 };
  for (guint u = 0; u < n_uses; u++)
    add_user (&net->resources[uses[u].resource], id, uses[u].coef);
  reshare (net, uses, n_uses, id);
  return id;
}

double
flow_rate (const FlowNet *net, uint32_t flow)
{
  return flow_at (net, flow)->rate;
}
