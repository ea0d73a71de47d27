/* test-net.c: the network layer: max-min fair flows (flow.h) against
 * rates and finish times worked out by hand, and the collective model
 * (net.h) against published nccl-tests bus bandwidths on A100 (their
 * sources in net.c and README, "collective") and relations the tuner must
 * keep. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "config/config.h"
#include "engine/engine.h"
#include "net/flow.h"
#include "net/net.h"
#include "base/ledger.h"

/* ---- flows ------------------------------------------------------------ */

typedef struct {
  double done_at[4];
} Finish;

static void
record (SimEngine *engine, void *ctx, uint64_t arg)
{
  ((Finish *) ctx)->done_at[arg] = sim_time_to_s (sim_engine_now (engine));
}

START_TEST (test_two_flows_share_a_nic)
{
  /* One NIC of 10 B/s. Flows of 10 and 30 bytes start together: 5 B/s
   * each; the first ends at 2 s, having moved 10, the second has 20 left
   * and the whole NIC from then on: it ends at 2 + 20 / 10 = 4 s. */
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double capacity[] = { 10 };
  g_autoptr (FlowNet) net = flow_net_new (engine, 1, capacity);
  Finish fin = { { 0 } };
  FlowUse nic = { 0, 1 };
  uint32_t a = flow_start (net, 10, &nic, 1, record, &fin, 0);
  uint32_t b = flow_start (net, 30, &nic, 1, record, &fin, 1);
  ck_assert_double_eq_tol (flow_rate (net, a), 5, 1e-12);
  ck_assert_double_eq_tol (flow_rate (net, b), 5, 1e-12);
  sim_engine_run (engine);
  ck_assert_double_eq_tol (fin.done_at[0], 2, 1e-9);
  ck_assert_double_eq_tol (fin.done_at[1], 4, 1e-9);
}
END_TEST

typedef struct {
  FlowNet *net;
  Finish *fin;
} Late;

static void
start_late (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) engine;
  (void) arg;
  Late *late = ctx;
  FlowUse nic = { 0, 1 };
  flow_start (late->net, 10, &nic, 1, record, late->fin, 1);
}

START_TEST (test_late_flow_slows_the_first)
{
  /* A 20-byte flow alone on 10 B/s; at 1 s a 10-byte flow joins: both at
   * 5 B/s. The first has 10 left, the second 10: both end at 3 s. */
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double capacity[] = { 10 };
  g_autoptr (FlowNet) net = flow_net_new (engine, 1, capacity);
  Finish fin = { { 0 } };
  FlowUse nic = { 0, 1 };
  Late late = { net, &fin };
  flow_start (net, 20, &nic, 1, record, &fin, 0);
  sim_engine_schedule (engine, sim_time_from_s (1), start_late, &late, 0);
  sim_engine_run (engine);
  ck_assert_double_eq_tol (fin.done_at[0], 3, 1e-9);
  ck_assert_double_eq_tol (fin.done_at[1], 3, 1e-9);
}
END_TEST

START_TEST (test_flow_alone)
{
  /* Flows alone on their resources take flow.c's short path (no walk, no
   * fill). Flow 0 crosses r0 (10 B/s, coefficient 4: 2.5 B/s) and r1
   * (4 B/s): 2.5 B/s, so its 5 bytes end at 2 s. Flow 1, 6 bytes alone on
   * r2 (3 B/s), ends at 2 s too. At 2 s both leave their resources
   * empty. */
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double capacity[] = { 10, 4, 3 };
  g_autoptr (FlowNet) net = flow_net_new (engine, 3, capacity);
  Finish fin = { { 0 } };
  FlowUse f0_uses[] = { { 0, 4 }, { 1, 1 } }, r2 = { 2, 1 };
  uint32_t f0 = flow_start (net, 5, f0_uses, 2, record, &fin, 0);
  uint32_t f1 = flow_start (net, 6, &r2, 1, record, &fin, 1);
  ck_assert_double_eq (flow_rate (net, f0), 2.5);
  ck_assert_double_eq (flow_rate (net, f1), 3);
  sim_engine_run (engine);
  ck_assert_double_eq_tol (fin.done_at[0], 2, 1e-12);
  ck_assert_double_eq_tol (fin.done_at[1], 2, 1e-12);

  /* Two flows on r1 (4 B/s): the second is not alone; 2 B/s each. When
   * the first ends the second is alone again and takes all 4. */
  FlowUse r1 = { 1, 1 };
  uint32_t f2 = flow_start (net, 2, &r1, 1, record, &fin, 2);
  ck_assert_double_eq (flow_rate (net, f2), 4);
  uint32_t f3 = flow_start (net, 6, &r1, 1, record, &fin, 3);
  ck_assert_double_eq_tol (flow_rate (net, f2), 2, 1e-12);
  ck_assert_double_eq_tol (flow_rate (net, f3), 2, 1e-12);
  sim_engine_run (engine);
  /* f2: 2 bytes at 2 B/s, 1 s; f3: 2 moved by then, 4 left at 4 B/s. */
  ck_assert_double_eq_tol (fin.done_at[2], 3, 1e-9);
  ck_assert_double_eq_tol (fin.done_at[3], 4, 1e-9);
}
END_TEST

START_TEST (test_max_min_bottlenecks)
{
  /* Flow 0 crosses r0 (10 B/s) and r1 (4 B/s); flow 1 only r0. Max-min:
   * flow 0 is held to 4 by r1, and flow 1 takes the 6 left on r0. A
   * coefficient of 2 (two GPUs' worth) halves what a flow gets alone. */
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double capacity[] = { 10, 4, 10 };
  g_autoptr (FlowNet) net = flow_net_new (engine, 3, capacity);
  Finish fin = { { 0 } };
  FlowUse both[] = { { 0, 1 }, { 1, 1 } }, r0 = { 0, 1 }, twice = { 2, 2 };
  uint32_t f0 = flow_start (net, 100, both, 2, record, &fin, 0);
  uint32_t f1 = flow_start (net, 100, &r0, 1, record, &fin, 1);
  uint32_t f2 = flow_start (net, 100, &twice, 1, record, &fin, 2);
  ck_assert_double_eq_tol (flow_rate (net, f0), 4, 1e-9);
  ck_assert_double_eq_tol (flow_rate (net, f1), 6, 1e-9);
  ck_assert_double_eq_tol (flow_rate (net, f2), 5, 1e-9);
  sim_engine_run (engine);
}
END_TEST

/* Random flow sets: flows over a few of 16 resources start at random
 * times and end as their bytes go through. After every start and every
 * end, each running flow's rate (which the net worked out only for the
 * component the change touched) must equal a brute-force progressive
 * filling over every running flow at once, and be max-min fair: each
 * flow crosses a full resource on which no flow runs faster. */
#define RS_RESOURCES 16
#define RS_FLOWS 200

typedef struct {
  FlowUse uses[3];
  guint n_uses;
  double bytes;
  uint32_t id;
  gboolean running, done;
} RsFlow;

typedef struct {
  FlowNet *net;
  double capacity[RS_RESOURCES];
  RsFlow flows[RS_FLOWS];
  int checks;
} RsSet;

/* Rates by filling every running flow at once, as the net did before it
 * filled components. */
static void
rs_brute_rates (const RsSet *s, double *rate)
{
  double left[RS_RESOURCES], load[RS_RESOURCES];
  gboolean frozen[RS_FLOWS];
  for (int r = 0; r < RS_RESOURCES; r++)
    left[r] = s->capacity[r];
  for (int i = 0; i < RS_FLOWS; i++)
    {
      rate[i] = 0;
      frozen[i] = !s->flows[i].running;
    }
  for (;;)
    {
      gboolean any = FALSE;
      for (int r = 0; r < RS_RESOURCES; r++)
        load[r] = 0;
      for (int i = 0; i < RS_FLOWS; i++)
        for (guint u = 0; !frozen[i] && u < s->flows[i].n_uses; u++)
          {
            load[s->flows[i].uses[u].resource] += s->flows[i].uses[u].coef;
            any = TRUE;
          }
      if (!any)
        return;
      double step = INFINITY;
      for (int r = 0; r < RS_RESOURCES; r++)
        if (load[r] > 0)
          step = MIN (step, MAX (left[r], 0) / load[r]);
      for (int r = 0; r < RS_RESOURCES; r++)
        left[r] -= step * load[r];
      for (int i = 0; i < RS_FLOWS; i++)
        if (!frozen[i])
          rate[i] += step;
      for (int i = 0; i < RS_FLOWS; i++)
        for (guint u = 0; !frozen[i] && u < s->flows[i].n_uses; u++)
          {
            int r = (int) s->flows[i].uses[u].resource;
            frozen[i] = left[r] <= 1e-9 * s->capacity[r];
          }
    }
}

static void
rs_check (RsSet *s)
{
  double want[RS_FLOWS], got[RS_FLOWS], used[RS_RESOURCES] = { 0 };
  rs_brute_rates (s, want);
  for (int i = 0; i < RS_FLOWS; i++)
    {
      const RsFlow *f = &s->flows[i];
      if (!f->running)
        continue;
      got[i] = flow_rate (s->net, f->id);
      ck_assert_msg (fabs (got[i] - want[i]) <= 1e-9 * want[i],
                     "check %d, flow %d: rate %.17g, a full fill gives %.17g",
                     s->checks, i, got[i], want[i]);
      for (guint u = 0; u < f->n_uses; u++)
        used[f->uses[u].resource] += f->uses[u].coef * got[i];
    }
  for (int r = 0; r < RS_RESOURCES; r++)
    ck_assert_msg (used[r] <= s->capacity[r] * (1 + 1e-9),
                   "resource %d: %g of %g", r, used[r], s->capacity[r]);
  for (int i = 0; i < RS_FLOWS; i++)
    {
      const RsFlow *f = &s->flows[i];
      gboolean bottleneck = FALSE;
      for (guint u = 0; f->running && u < f->n_uses && !bottleneck; u++)
        {
          int r = (int) f->uses[u].resource;
          if (used[r] < s->capacity[r] * (1 - 1e-6))
            continue;
          bottleneck = TRUE;
          for (int j = 0; j < RS_FLOWS && bottleneck; j++)
            for (guint v = 0; s->flows[j].running
                              && v < s->flows[j].n_uses; v++)
              if ((int) s->flows[j].uses[v].resource == r
                  && got[j] > got[i] * (1 + 1e-9))
                bottleneck = FALSE;
        }
      ck_assert_msg (!f->running || bottleneck,
                     "check %d: flow %d has no bottleneck", s->checks, i);
    }
  s->checks++;
}

static void
rs_done (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) engine;
  RsSet *s = ctx;
  s->flows[arg].running = FALSE;
  s->flows[arg].done = TRUE;
  rs_check (s);
}

static void
rs_start (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) engine;
  RsSet *s = ctx;
  RsFlow *f = &s->flows[arg];
  f->id = flow_start (s->net, f->bytes, f->uses, f->n_uses, rs_done, s, arg);
  f->running = TRUE;
  rs_check (s);
}

START_TEST (test_components_equal_full_fill)
{
  GRand *rand = g_rand_new_with_seed (11);
  for (int round = 0; round < 5; round++)
    {
      g_autoptr (SimEngine) engine = sim_engine_new ();
      RsSet *s = g_new0 (RsSet, 1);
      for (int r = 0; r < RS_RESOURCES; r++)
        s->capacity[r] = g_rand_double_range (rand, 1, 20);
      s->net = flow_net_new (engine, RS_RESOURCES, s->capacity);
      /* Flows mostly within groups of four resources, some across, so
       * that components form, merge and split. */
      for (int i = 0; i < RS_FLOWS; i++)
        {
          RsFlow *f = &s->flows[i];
          int group = g_rand_int_range (rand, 0, RS_RESOURCES / 4);
          f->n_uses = (guint) g_rand_int_range (rand, 1, 4);
          for (guint u = 0; u < f->n_uses; u++)
            {
              int r;
              gboolean again;
              do        /* each resource once in a flow */
                {
                  r = g_rand_int_range (rand, 0, 10) == 0
                    ? g_rand_int_range (rand, 0, RS_RESOURCES)
                    : group * 4 + g_rand_int_range (rand, 0, 4);
                  again = FALSE;
                  for (guint v = 0; v < u; v++)
                    again |= f->uses[v].resource == (uint32_t) r;
                }
              while (again);
              f->uses[u] = (FlowUse) { (uint32_t) r,
                                       g_rand_int_range (rand, 1, 4) * 0.5 };
            }
          f->bytes = g_rand_double_range (rand, 1, 100);
          sim_engine_schedule (engine, sim_time_from_s (
                                 g_rand_double_range (rand, 0, 50)),
                               rs_start, s, (uint64_t) i);
        }
      sim_engine_run (engine);
      for (int i = 0; i < RS_FLOWS; i++)
        ck_assert (s->flows[i].done);
      ck_assert_int_eq (s->checks, 2 * RS_FLOWS);
      flow_net_free (s->net);
      g_free (s);
    }
  g_rand_free (rand);
}
END_TEST

/* ---- collectives -------------------------------------------------------- */

static char *topologies;   /* $srcdir/topologies */

/* Topology NAME with the --set overrides a and b (either may be NULL; b
 * only with a). */
static void
load_sets (const char *name, const char *a, const char *b, TopologySpec *t)
{
  g_autofree char *path = g_strconcat (topologies, "/", name, ".yaml", NULL);
  const char *sets[] = { a, b, NULL };
  GError *error = NULL;
  ck_assert_msg (config_load_topology (path, a ? sets : NULL, t, &error),
                 "%s", error ? error->message : "?");
}

static void
load (const char *name, const char *set, TopologySpec *t)
{
  load_sets (name, set, NULL, t);
}

/* The network of topology NAME with the overrides a and b (load_sets). */
static void
load_net (const char *name, const char *a, const char *b, NetModel *net)
{
  TopologySpec t;
  load_sets (name, a, b, &t);
  net_model_init (net, &t, ALGORITHM_AUTO);
  topology_spec_clear (&t);
}

/* nccl-tests' bus bandwidth of a 1 GiB all-reduce, GB/s. */
static double
allreduce_busbw (const char *topology, const char *set, int gpus)
{
  TopologySpec t;
  NetModel net;
  load (topology, set, &t);
  net_model_init (&net, &t, ALGORITHM_AUTO);
  double bytes = 1 << 30;
  double s = net_collective_time (&net, COLL_ALL_REDUCE, bytes,
                                  (GroupShape) { gpus, MIN (gpus, t.gpus_per_node) });
  topology_spec_clear (&t);
  return net_bus_bandwidth (COLL_ALL_REDUCE, bytes, gpus, s) / 1e9;
}

#define WITHIN(got, lo, hi) \
  ck_assert_msg ((got) >= (lo) && (got) <= (hi), "%s = %.1f GB/s, want %g-%g", \
                 #got, (got), (double) (lo), (double) (hi))

/* Worked by hand, not held to the figures the constants came from (which
 * would test the constants against themselves): a 1 GiB all-reduce on
 * Selene's 8 GPUs runs NCCL's ring with the Simple protocol: 2 x 7/8 of
 * the buffer over NVSwitch at 300 GB/s x NVLINK_EFFICIENCY, plus the
 * ring's base latency (8.4 us) and 14 steps at the topology's 2 us. Two
 * nodes of 8 are NIC-bound: a ring's bus bandwidth is the node's NICs x
 * 25 GB/s x IB_EFFICIENCY, less the latency's share (under 2 % at 1 GiB),
 * so four NICs carry four times one's. */
START_TEST (test_nccl_tests_bars)
{
  TopologySpec t;
  NetModel net;
  load ("selene", NULL, &t);
  net_model_init (&net, &t, ALGORITHM_AUTO);
  double bytes = 1 << 30;
  double got = net_collective_time (&net, COLL_ALL_REDUCE, bytes, (GroupShape) { 8, 8 });
  double expect = (8.4 + 14 * 2.0) * 1e-6
                  + 2 * 7.0 / 8 * bytes / (300e9 * LEDGER (NVLINK_EFFICIENCY));
  ck_assert_msg (fabs (got / expect - 1) < 1e-9, "8 GPUs: %.9g s, expected %.9g",
                 got, expect);
  topology_spec_clear (&t);
  double nic_rate = 25 * LEDGER (IB_EFFICIENCY);
  double nic1 = allreduce_busbw ("apollo-a100-1ib", NULL, 16);
  double nic4 = allreduce_busbw ("apollo-a100-4ib", NULL, 16);
  WITHIN (nic1, nic_rate * 0.98, nic_rate);
  WITHIN (nic4, 4 * nic_rate * 0.98, 4 * nic_rate);
}
END_TEST

/* The cost the tuner picks for an all-reduce of bytes over gpus ranks,
 * per_node of them a node, on topology name (algo -1: the tuner's). */
static CollCost
allreduce_cost (const char *name, double bytes, int gpus, int per_node, int algo,
                NetModel *net)
{
  TopologySpec t;
  load (name, NULL, &t);
  net_model_init (net, &t, ALGORITHM_AUTO);
  topology_spec_clear (&t);
  return net_collective_cost (net, COLL_ALL_REDUCE, bytes,
                              (GroupShape) { gpus, per_node }, algo, 0);
}

/* The same, picked by the tuner, which must pick algo with proto. */
static CollCost
tuner_pick (const char *name, double bytes, int gpus, int per_node, NetAlgo algo,
            NetProto proto, NetModel *net)
{
  CollCost c = allreduce_cost (name, bytes, gpus, per_node, -1, net);
  ck_assert_msg (c.algo == algo && c.proto == proto, "%d ranks, %d a node: %s %s",
                 gpus, per_node, net_algo_name (c.algo), net_proto_name (c.proto));
  return c;
}

#define CLOSE(got, expect) \
  ck_assert_msg (fabs ((got) / (expect) - 1) < 1e-9, "%s = %.9g, expected %.9g", \
                 #got, (double) (got), (double) (expect))

/* Worked by hand from NCCL v2.21.5-1's tables (ledger.def): a 1 MiB
 * all-reduce on the 8 GPUs of one NVSwitch A100 node (dgx-a100-40gb:
 * 300 GB/s x NVLINK_EFFICIENCY 0.77 = 231 GB/s, 2 us a Simple ring step).
 * The ring's 2 x 7 = 14 steps cost, by protocol, NCCL's NVLink step
 * scaled by 2 / 3.4 (the topology's over NCCL's Simple ring step):
 *   LL     6.6 + 14 x 0.6 x 2/3.4 = 11.54 us
 *          + 1.75 MiB / (231 / 4 GB/s) = 31.78 us: 43.3 us
 *   LL128  14 + 14 x 1.9 x 2/3.4 = 29.65 us
 *          + 1.75 MiB / (231 x 0.92 GB/s) = 8.63 us: 38.3 us
 *   Simple 8.4 + 14 x 2 = 36.4 us + 1.75 MiB / 231 GB/s = 7.94 us: 44.3 us
 * and the tree is slower still (at 1 MiB NCCL's size correction leaves it
 * 0.5-0.6 of its bandwidth: LL128 24.3 + 21.6 us). So LL128's ring: NCCL's
 * latency floor of 29.65 us plus 8.63 us of bytes. */
START_TEST (test_one_node_1mib_by_hand)
{
  NetModel net;
  double bytes = 1 << 20;
  CollCost c = tuner_pick ("dgx-a100-40gb", bytes, 8, 8, NET_ALGO_RING,
                           NET_PROTO_LL128, &net);
  double expect = (14.0 + 14 * 1.9 * 2.0 / 3.4) * 1e-6
                  + 2 * 7.0 / 8 * bytes / (300e9 * 0.77 * 0.92);
  CLOSE (net_static_time (&net, &c, 8), expect);
}
END_TEST

/* NCCL's two-node tree (net.c): on Leonardo (4 GPUs and 4 x HDR100 a node,
 * 12 GB/s a GPU at IB_EFFICIENCY 0.96) a 1 GiB all-reduce on 2 nodes sends
 * each GPU's 1/4 of the buffer once through the NICs, at TREE_FRACTION
 * 0.9: 2^30 / (4 x 0.9 x 12e9) = 24.86 ms; its side inside the node, 2 x
 * 2^30 at the channels' limit of 4 x 23.6 GB/s, takes 22.75 ms, and the
 * steps 2 x 3 x 28 x 2/3.4 us inside and 2 x 1 x 28 x 5/14 us across: the
 * tree, Simple, beats the ring's 2 x 7/8 x 2^30 / 4 / 12e9 = 39.1 ms. On
 * 4 nodes the tree's NICs carry the whole twice and the ring wins. */
START_TEST (test_two_node_tree)
{
  NetModel net;
  double bytes = 1 << 30;
  CollCost c = tuner_pick ("leonardo", bytes, 8, 4, NET_ALGO_TREE, NET_PROTO_SIMPLE,
                           &net);
  double expect = (2 * 3 * 28 * 2.0 / 3.4 + 2 * 1 * 28 * 5.0 / 14) * 1e-6
                  + bytes / (4 * 0.9 * 12.5e9 * 0.96);
  CLOSE (net_static_time (&net, &c, 4), expect);
  CLOSE (c.intra_s, 2 * bytes / (4 * 23.6e9));
  CollCost four = allreduce_cost ("leonardo", bytes, 16, 4, NET_ALGO_TREE, &net);
  CLOSE (four.nic_bytes, 2 * c.nic_bytes);
  tuner_pick ("leonardo", bytes, 16, 4, NET_ALGO_RING, NET_PROTO_SIMPLE, &net);
}
END_TEST

/* NCCL's limits per channel (net.c, channel_cap): on apollo-a100-4ib (4 x
 * HDR a node: 4 channels) the tree on 2 nodes is held to 4 x 23.6 GB/s of
 * bus bandwidth on the GPU's side, under its NICs' halved bytes (8 GPUs
 * sharing 4 x 24 GB/s), and on more nodes to 4 x 17.8; the LL128 ring to
 * 4 x 20 GB/s, under the 0.92 x 231 GB/s of the node's links; inside
 * one node there is no limit. A Hopper node takes Hopper's limits. */
START_TEST (test_per_channel_cap)
{
  NetModel net;
  double bytes = 1 << 30;
  CollCost c = allreduce_cost ("apollo-a100-4ib", bytes, 16, 8, NET_ALGO_TREE, &net);
  ck_assert_int_eq (c.proto, NET_PROTO_SIMPLE);
  CLOSE (c.intra_s, 2 * bytes / (4 * 23.6e9));
  double nic_s = c.nic_bytes / net_static_rate (&net, &c, 8);
  ck_assert_msg (nic_s < c.intra_s, "NICs %g s, the GPU's side %g s", nic_s, c.intra_s);
  c = allreduce_cost ("apollo-a100-4ib", bytes, 32, 8, NET_ALGO_TREE, &net);
  CLOSE (c.intra_s, 2 * bytes / (4 * 17.8e9));
  /* A forced ring of 4 MiB on 8 nodes runs LL128. */
  double mib4 = 4 << 20;
  c = allreduce_cost ("apollo-a100-4ib", mib4, 64, 8, NET_ALGO_RING, &net);
  ck_assert_int_eq (c.proto, NET_PROTO_LL128);
  CLOSE (c.intra_s, 2 * 63.0 / 64 * mib4 / (4 * 20e9));
  c = allreduce_cost ("apollo-a100-4ib", bytes, 8, 8, NET_ALGO_TREE, &net);
  CLOSE (c.intra_s, 2 * bytes / (300e9 * 0.77 * 0.9 * 1.0));
  /* Hopper's rows (dgx-h100, 8 NDR NICs, 8 channels): the tree 41.4 GB/s
   * a channel on two nodes, over the node's links (450 GB/s x 0.81 x 0.9:
   * they bind), and 36.0 on more, under them; the LL128 ring 36.7. */
  c = allreduce_cost ("dgx-h100", bytes, 16, 8, NET_ALGO_TREE, &net);
  ck_assert_int_eq (c.proto, NET_PROTO_SIMPLE);
  ck_assert (8 * 41.4e9 > 450e9 * 0.81 * 0.9);
  CLOSE (c.intra_s, 2 * bytes / (450e9 * 0.81 * 0.9));
  c = allreduce_cost ("dgx-h100", bytes, 256, 8, NET_ALGO_TREE, &net);
  CLOSE (c.intra_s, 2 * bytes / (8 * 36.0e9));
  c = allreduce_cost ("dgx-h100", mib4, 64, 8, NET_ALGO_RING, &net);
  ck_assert_int_eq (c.proto, NET_PROTO_LL128);
  CLOSE (c.intra_s, 2 * 63.0 / 64 * mib4 / (8 * 36.7e9));
}
END_TEST

/* A ring's latency grows with its nodes: NCCL v2.21.5-1 counts 2 x nodes
 * network steps of an all-reduce, and its steps inside a node cost at
 * least the 1 us net overhead (3 us with Simple) once it spans nodes. On
 * apollo-a100-4ib (8 GPUs a node, 2 and 5 us steps) a 64 KiB LL ring
 * on 2 nodes takes 2 x 15 steps: 4 network steps of 2.7 x 5/14 us and 26
 * inside at the 1 us overhead (above 0.6 x 2/3.4 us), after the base
 * 6.6 us; each further node adds 14 steps inside and 2 network steps. */
START_TEST (test_ring_latency_grows_with_nodes)
{
  NetModel net;
  double prev = 0;
  for (int nodes = 1; nodes <= 64; nodes++)
    {
      CollCost c = allreduce_cost ("apollo-a100-4ib", 65536, 8 * nodes, 8,
                                   NET_ALGO_RING, &net);
      ck_assert_msg (c.latency_s > prev, "%d nodes: %g s, not above %g", nodes,
                     c.latency_s, prev);
      if (nodes == 2)
        {
          ck_assert_int_eq (c.proto, NET_PROTO_LL);
          CLOSE (c.latency_s, (6.6 + 26 * 1.0 + 4 * 2.7 * 5.0 / 14) * 1e-6);
        }
      if (nodes >= 3 && nodes <= 8)
        {
          ck_assert_int_eq (c.proto, NET_PROTO_LL);
          CLOSE (c.latency_s - prev, (14 * 1.0 + 2 * 2.7 * 5.0 / 14) * 1e-6);
        }
      prev = c.latency_s;
    }
}
END_TEST

START_TEST (test_more_nics_never_slower)
{
  /* On 2 to 64 nodes and 1 KiB to 1 GiB, a fifth NIC never slows an
   * all-reduce, and a second doubles a large one across nodes. */
  const char *sets[] = { "inter_node.nics_per_node=1", "inter_node.nics_per_node=2",
                         "inter_node.nics_per_node=3", "inter_node.nics_per_node=4" };
  for (int nodes = 2; nodes <= 64; nodes *= 2)
    for (double bytes = 1024; bytes <= (1 << 30); bytes *= 32)
      {
        double prev = INFINITY;
        for (int n = 0; n < 4; n++)
          {
            TopologySpec t;
            NetModel net;
            load ("apollo-a100-4ib", sets[n], &t);
            net_model_init (&net, &t, ALGORITHM_AUTO);
            double s = net_collective_time (&net, COLL_ALL_REDUCE, bytes,
                                            (GroupShape) { 8 * nodes, 8 });
            ck_assert_msg (s <= prev * (1 + 1e-12), "%d NICs slower: %g > %g s "
                           "(%d nodes, %.0f bytes)", n + 1, s, prev, nodes, bytes);
            prev = s;
            topology_spec_clear (&t);
          }
      }
  double one = allreduce_busbw ("apollo-a100-1ib", NULL, 64);
  double two = allreduce_busbw ("apollo-a100-2ib", NULL, 64);
  ck_assert_msg (fabs (two / one - 2) < 0.05, "1 NIC %.1f, 2 NICs %.1f GB/s", one, two);
}
END_TEST

/* dgx-h100's network with NVLink SHARP on and as shipped (off). */
static void
dgx_h100_sharp (NetModel *on, NetModel *off)
{
  load_net ("dgx-h100", "intra_node.sharp=true", NULL, on);
  load_net ("dgx-h100", NULL, NULL, off);
}

/* NVLink SHARP (intra_node.sharp) on dgx-h100, worked by hand: a 1 GiB
 * all-reduce on its 8 GPUs runs NVLS, one step at NCCL's 25 us scaled by
 * the topology's 2 us over NCCL's 3.4 us ring step (14.71 us), and the
 * buffer once at 450 GB/s x NVLS_EFFICIENCY 0.61 = 274.5 GB/s (3.912 ms):
 * 3.926 ms, a bus bandwidth of 2^30 / 3.926 ms x 1.75 = 478.6 GB/s; the
 * ring without it, 2 x 7/8 x 2^30 / (450 x 0.81 GB/s) + (8.4 + 14 x 2) us
 * = 5.191 ms (362 GB/s). Across nodes NVLS itself does not apply without
 * InfiniBand SHARP (NCCL runs the NVLS tree there instead): forced, it is
 * the ring. */
START_TEST (test_nvls_by_hand)
{
  NetModel on, off;
  double bytes = 1 << 30;
  dgx_h100_sharp (&on, &off);
  CollCost c = net_collective_cost (&on, COLL_ALL_REDUCE, bytes,
                                    (GroupShape) { 8, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_NVLS);
  ck_assert_int_eq (c.proto, NET_PROTO_SIMPLE);
  CLOSE (net_static_time (&on, &c, 8),
         25e-6 * 2.0 / 3.4 + bytes / (450e9 * LEDGER (NVLS_EFFICIENCY)));
  CLOSE (net_collective_time (&off, COLL_ALL_REDUCE, bytes, (GroupShape) { 8, 8 }),
         (8.4 + 14 * 2.0) * 1e-6 + 2 * 7.0 / 8 * bytes / (450e9 * 0.81));
  c = net_collective_cost (&on, COLL_ALL_REDUCE, bytes, (GroupShape) { 16, 8 },
                           NET_ALGO_NVLS, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_RING);
  /* Reduce-scatter is not NVLS here (only all-reduce is modelled). */
  c = net_collective_cost (&on, COLL_REDUCE_SCATTER, bytes, (GroupShape) { 8, 8 }, -1, 0);
  ck_assert_int_ne (c.algo, NET_ALGO_NVLS);
}
END_TEST

/* Relations: on one node of 4 or 8 GPUs, NVLS is faster than the ring
 * for every large all-reduce (64 MiB to 8 GiB); with SHARP on, the tuner
 * is never slower than without it, at any size or group; on 2 GPUs NCCL
 * does not run NVLS (ncclNvlsInit: more than 2 GPUs), and forced it is the
 * ring. */
START_TEST (test_nvls_relations)
{
  NetModel on, off;
  dgx_h100_sharp (&on, &off);
  for (double bytes = 1 << 10; bytes <= 8.0 * (1 << 30); bytes *= 4)
    for (int n = 2; n <= 16; n *= 2)
      {
        GroupShape g = { n, MIN (n, 8) };
        double with = net_collective_time (&on, COLL_ALL_REDUCE, bytes, g);
        double without = net_collective_time (&off, COLL_ALL_REDUCE, bytes, g);
        ck_assert_msg (with <= without, "%d GPUs, %g B: %g > %g s", n, bytes, with,
                       without);
        if (bytes < 64.0 * (1 << 20) || n > 8)
          continue;
        CollCost nvls = net_collective_cost (&on, COLL_ALL_REDUCE, bytes, g,
                                             NET_ALGO_NVLS, 0);
        CollCost ring = net_collective_cost (&on, COLL_ALL_REDUCE, bytes, g,
                                             NET_ALGO_RING, 0);
        double tn = net_static_time (&on, &nvls, n), tr = net_static_time (&on, &ring, n);
        ck_assert_int_eq (nvls.algo, n == 2 ? NET_ALGO_RING : NET_ALGO_NVLS);
        if (n > 2)
          ck_assert_msg (tn < tr, "%d GPUs, %g B: nvls %g, ring %g s", n, bytes, tn, tr);
      }
}
END_TEST

/* The algorithm that runs an all-reduce of bytes over g when a is forced
 * (the ring where a does not apply). */
static NetAlgo
forced (const NetModel *net, double bytes, GroupShape g, NetAlgo a)
{
  return net_collective_cost (net, COLL_ALL_REDUCE, bytes, g, a, 0).algo;
}

/* The NVLS tree (intra_node.sharp across nodes) on dgx-h100, by hand, for
 * a 1 GiB all-reduce:
 * - 2 nodes of 8: NVLS in each node, the buffer once at 450 GB/s x
 *   NVLS_EFFICIENCY (3.912 ms), beside the tree's NIC bytes, once the
 *   buffer a node on two nodes: 2^30 / 8 at 400 Gb/s x 0.96 a GPU's NIC
 *   (2.796 ms); the slower, plus NVLS's step 25 x 2/3.4 us and the tree's
 *   2 x log2 2 network steps at 14 x 5/14 us: 3.912 ms + 24.71 us.
 * - 8 nodes: the NICs carry the buffer twice, 5.592 ms, now the slower,
 *   + 14.71 + 2 x 3 x 5 us. The ring's latency across 8 nodes (126 steps,
 *   16 of them on the network, x 1.4) makes it the slower there. */
START_TEST (test_nvls_tree_by_hand)
{
  NetModel on;
  double bytes = 1 << 30, nvls = bytes / (450e9 * LEDGER (NVLS_EFFICIENCY));
  double nic = 400e9 / 8 * LEDGER (IB_EFFICIENCY);
  load_net ("dgx-h100", "intra_node.sharp=true", NULL, &on);
  CollCost c = net_collective_cost (&on, COLL_ALL_REDUCE, bytes,
                                    (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_NVLS_TREE);
  ck_assert_int_eq (c.proto, NET_PROTO_SIMPLE);
  ck_assert (nvls > bytes / 8 / nic);
  CLOSE (net_static_time (&on, &c, 8), nvls + (25 * 2 / 3.4 + 2 * 1 * 5.0) * 1e-6);
  c = net_collective_cost (&on, COLL_ALL_REDUCE, bytes, (GroupShape) { 64, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_NVLS_TREE);
  CLOSE (net_static_time (&on, &c, 8),
         2 * bytes / 8 / nic + (25 * 2 / 3.4 + 2 * 3 * 5.0) * 1e-6);
  /* Not in one node (NVLS is), nor on 2 GPUs a node. */
  ck_assert_int_eq (forced (&on, bytes, (GroupShape) { 8, 8 }, NET_ALGO_NVLS_TREE),
                    NET_ALGO_RING);
  ck_assert_int_eq (forced (&on, bytes, (GroupShape) { 16, 2 }, NET_ALGO_NVLS_TREE),
                    NET_ALGO_RING);
}
END_TEST

/* InfiniBand SHARP (inter_node.sharp) on selene, by hand, for a 1 GiB
 * all-reduce over 16 nodes of 8 A100s:
 * - CollNet Direct: each GPU's buffer scattered to the node's heads and
 *   the sum gathered back over NVLink, 2 x 7/8 x 2^30 at 300 GB/s x 0.77
 *   (8.134 ms), beside the node's sum once through the NICs, 2^30 / 8 at
 *   200 Gb/s x 0.96 (5.592 ms); NCCL's latency 2 (3.7 x 2/3.4 + 7 x 0.4)
 *   + 31 x 5/14 us = 21.02 us. The switches reduce: the same on 2 nodes.
 * - CollNet Chain, the nodes' GPUs on NVLink without NVSwitches (no
 *   Direct): twice the buffer along the chain, 2 x 2^30 at 231 GB/s
 *   (9.296 ms), + 2 x 7 x 2.8 x 2/3.4 + 30 x 5/14 us = 33.77 us. */
START_TEST (test_collnet_by_hand)
{
  NetModel net;
  double bytes = 1 << 30, nvlink = 300e9 * LEDGER (NVLINK_EFFICIENCY);
  load_net ("selene", "inter_node.sharp=true", NULL, &net);
  CollCost c = net_collective_cost (&net, COLL_ALL_REDUCE, bytes,
                                    (GroupShape) { 128, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_COLLNET_DIRECT);
  ck_assert (bytes / 8 / (25e9 * LEDGER (IB_EFFICIENCY)) < 1.75 * bytes / nvlink);
  double direct = 1.75 * bytes / nvlink
                  + (2 * (3.7 * 2 / 3.4 + 7 * 0.4) + 31 * 5 / 14.0) * 1e-6;
  CLOSE (net_static_time (&net, &c, 8), direct);
  CLOSE (net_collective_time (&net, COLL_ALL_REDUCE, bytes, (GroupShape) { 16, 8 }),
         direct);
  /* Not inside one node, and not for reduce-scatter. */
  ck_assert_int_eq (forced (&net, bytes, (GroupShape) { 8, 8 },
                            NET_ALGO_COLLNET_DIRECT), NET_ALGO_RING);
  c = net_collective_cost (&net, COLL_REDUCE_SCATTER, bytes, (GroupShape) { 128, 8 },
                           -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_RING);
  load_net ("selene", "inter_node.sharp=true", "intra_node.link=nvlink", &net);
  c = net_collective_cost (&net, COLL_ALL_REDUCE, bytes, (GroupShape) { 128, 8 },
                           -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_COLLNET_CHAIN);
  CLOSE (net_static_time (&net, &c, 8),
         2 * bytes / nvlink + (2 * 7 * 2.8 * 2 / 3.4 + 30 * 5 / 14.0) * 1e-6);
}
END_TEST

/* Relations: with InfiniBand SHARP, NVLink SHARP or both, the tuner is
 * never slower than without, at any size (1 KiB to 8 GiB) on 1 to 16
 * nodes of 1 to 8 GPUs each; the switches reduce, so a large CollNet
 * Direct all-reduce takes the same time on 2 and on 16 nodes, where the
 * ring's grows; with both, across nodes NVLS runs over CollNet. */
START_TEST (test_sharp_relations)
{
  NetModel off, ib, nvl, both;
  load_net ("dgx-h100", NULL, NULL, &off);
  load_net ("dgx-h100", "inter_node.sharp=true", NULL, &ib);
  load_net ("dgx-h100", "intra_node.sharp=true", NULL, &nvl);
  load_net ("dgx-h100", "intra_node.sharp=true", "inter_node.sharp=true", &both);
  const NetModel *with[] = { &ib, &nvl, &both };
  for (double bytes = 1 << 10; bytes <= 8.0 * (1 << 30); bytes *= 8)
    for (int local = 1; local <= 8; local *= 2)
      for (int nodes = 1; nodes <= 16; nodes *= 2)
        {
          GroupShape g = { local * nodes, local };
          double without = net_collective_time (&off, COLL_ALL_REDUCE, bytes, g);
          for (int i = 0; i < 3; i++)
            {
              double t = net_collective_time (with[i], COLL_ALL_REDUCE, bytes, g);
              ck_assert_msg (t <= without, "%d: %d x %d GPUs, %g B: %g > %g s", i,
                             nodes, local, bytes, t, without);
            }
        }
  double bytes = 1 << 30;
  for (int i = 0; i < 2; i++)
    {
      const NetModel *net = i == 0 ? &ib : &off;
      int a = i == 0 ? NET_ALGO_COLLNET_DIRECT : NET_ALGO_RING;
      CollCost c2 = net_collective_cost (net, COLL_ALL_REDUCE, bytes,
                                         (GroupShape) { 16, 8 }, a, 0);
      CollCost c16 = net_collective_cost (net, COLL_ALL_REDUCE, bytes,
                                          (GroupShape) { 128, 8 }, a, 0);
      double two = net_static_time (net, &c2, 8), sixteen = net_static_time (net, &c16, 8);
      ck_assert_msg (i == 0 ? two == sixteen : sixteen > two, "%s: %g and %g s",
                     i == 0 ? "collnet" : "ring", two, sixteen);
    }
  CollCost c = net_collective_cost (&both, COLL_ALL_REDUCE, bytes,
                                    (GroupShape) { 64, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_NVLS);
  /* All-reduce only: reduce-scatter and all-gather of 1 MiB, where the
   * switches would win, in a node and across 8, run no SHARP algorithm,
   * chosen or forced. */
  static const CollKind split[] = { COLL_REDUCE_SCATTER, COLL_ALL_GATHER };
  for (guint k = 0; k < G_N_ELEMENTS (split); k++)
    for (int nodes = 1; nodes <= 8; nodes *= 8)
      for (int a = -1; a < NET_ALGO_N; a++)
        {
          if (a >= 0 && a < NET_ALGO_NVLS)
            continue;
          c = net_collective_cost (&both, split[k], 1 << 20,
                                   (GroupShape) { 8 * nodes, 8 }, a, 0);
          ck_assert_msg (c.algo < NET_ALGO_NVLS, "kind %d, %d nodes, algo %d: %s",
                         split[k], nodes, a, net_algo_name (c.algo));
        }
}
END_TEST

/* CollNet Direct on Hopper keeps NCCL_COLLNET_HOPPER_FRACTION (0.85) of
 * its bandwidth (ncclTopoTuneModel, minCompCap >= 90): a 1 GiB all-reduce
 * over 16 dgx-h100 nodes scatters and gathers 2 x 7/8 of the buffer on
 * NVLink at 450 GB/s x 0.81 x 0.85 (6.065 ms, above the NICs' 2^30 / 8 at
 * 48 GB/s x 0.85, 3.290 ms), + NCCL's 21.02 us: 6.086 ms. So the chain,
 * twice the buffer at 364.5 GB/s (5.891 ms) + 2 x 7 x 2.8 x 2/3.4 + 30 x
 * 5/14 us, 5.925 ms, is the tuner's pick there. And NCCL turns CollNet
 * off for more than 8 GPUs of a communicator in a node: on nodes of 16, a
 * group of all 16 a node runs no CollNet, one of 8 a node does. */
START_TEST (test_collnet_hopper_and_arity)
{
  NetModel net;
  double bytes = 1 << 30;
  load_net ("dgx-h100", "inter_node.sharp=true", NULL, &net);
  CollCost c = net_collective_cost (&net, COLL_ALL_REDUCE, bytes,
                                    (GroupShape) { 128, 8 },
                                    NET_ALGO_COLLNET_DIRECT, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_COLLNET_DIRECT);
  CLOSE (net_static_time (&net, &c, 8),
         1.75 * bytes / (450e9 * 0.81 * LEDGER (NCCL_COLLNET_HOPPER_FRACTION))
         + (2 * (3.7 * 2 / 3.4 + 7 * 0.4) + 31 * 5 / 14.0) * 1e-6);
  c = net_collective_cost (&net, COLL_ALL_REDUCE, bytes, (GroupShape) { 128, 8 },
                           -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_COLLNET_CHAIN);
  CLOSE (net_static_time (&net, &c, 8),
         2 * bytes / (450e9 * 0.81) + (2 * 7 * 2.8 * 2 / 3.4 + 30 * 5 / 14.0) * 1e-6);
  load_net ("dgx-h100", "inter_node.sharp=true", "gpus_per_node=16", &net);
  ck_assert_int_eq (forced (&net, bytes, (GroupShape) { 32, 16 },
                            NET_ALGO_COLLNET_DIRECT), NET_ALGO_RING);
  ck_assert_int_eq (forced (&net, bytes, (GroupShape) { 32, 8 },
                            NET_ALGO_COLLNET_DIRECT), NET_ALGO_COLLNET_DIRECT);
}
END_TEST

START_TEST (test_tuner_choices)
{
  /* As NCCL: on many nodes a small all-reduce takes the tree (log-depth
   * latency) with a low-latency protocol; a large one on two nodes takes
   * the ring with Simple; forcing an algorithm is obeyed where it applies,
   * and reduce-scatter, which has no tree, stays a ring. */
  TopologySpec t;
  NetModel net;
  load ("selene", NULL, &t);
  net_model_init (&net, &t, ALGORITHM_AUTO);
  CollCost c = net_collective_cost (&net, COLL_ALL_REDUCE, 4096,
                                    (GroupShape) { 1024, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_TREE);
  ck_assert_int_eq (c.proto, NET_PROTO_LL);
  c = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30, (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_RING);
  ck_assert_int_eq (c.proto, NET_PROTO_SIMPLE);
  net_model_init (&net, &t, ALGORITHM_HIERARCHICAL);
  c = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30, (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_HIERARCHICAL);
  ck_assert (!c.pipelined);
  net_model_init (&net, &t, ALGORITHM_TREE);
  c = net_collective_cost (&net, COLL_REDUCE_SCATTER, 1 << 30, (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_int_eq (c.algo, NET_ALGO_RING);
  /* The pipelined ring is never slower than the phases one after another. */
  net_model_init (&net, &t, ALGORITHM_AUTO);
  CollCost ring = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30,
                                       (GroupShape) { 64, 8 }, NET_ALGO_RING, 0);
  CollCost hier = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30,
                                       (GroupShape) { 64, 8 }, NET_ALGO_HIERARCHICAL, 0);
  double rate = net_static_rate (&net, &ring, 8);
  ck_assert (net_cost_time (&ring, rate) < net_cost_time (&hier, rate));
  topology_spec_clear (&t);
}
END_TEST

START_TEST (test_all_to_all_does_not_aggregate)
{
  /* All-to-all leaves by each GPU's own NIC: with 1 NIC for 8 GPUs behind
   * PCIe every GPU gets 1/8 of it; over NVLink an all-reduce spreads over
   * every NIC, but the all-to-all still does not. */
  TopologySpec t;
  NetModel net;
  load ("apollo-a100-4ib", NULL, &t);
  net_model_init (&net, &t, ALGORITHM_AUTO);
  CollCost a2a = net_collective_cost (&net, COLL_ALL_TO_ALL, 1 << 30,
                                      (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_int_eq (a2a.algo, NET_ALGO_DIRECT);
  ck_assert (a2a.own_nic);
  /* 2 GPUs per NIC: a GPU alone reaches one NIC, not four. */
  ck_assert_double_eq_tol (net_static_rate (&net, &a2a, 1), 25e9 * 0.96, 1);
  CollCost ar = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30,
                                     (GroupShape) { 16, 8 }, -1, 0);
  ck_assert_double_eq_tol (net_static_rate (&net, &ar, 1), 4 * 25e9 * 0.96, 1);
  topology_spec_clear (&t);
}
END_TEST

START_TEST (test_fabric_taper)
{
  /* A fat tree with 2:1 taper and 4 nodes per leaf: a ring over 8 nodes
   * leaves each leaf once (1/4 of a node's NIC bytes), so the taper does
   * not bind; an all-to-all sends 4/7 of its bytes out of the leaf and is
   * held to 0.5 / (4/7) of the NICs. */
  TopologySpec t;
  NetModel net;
  load ("apollo-a100-4ib", NULL, &t);
  t.inter_node.fabric.taper = 0.5;
  t.inter_node.fabric.nodes_per_group = 4;
  net_model_init (&net, &t, ALGORITHM_RING);
  CollCost ring = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30,
                                       (GroupShape) { 64, 8 }, -1, 0);
  ck_assert_double_eq_tol (ring.uplink_share, 0.25, 1e-12);
  ck_assert_double_eq_tol (net_static_rate (&net, &ring, 8), 100e9 * 0.96 / 8, 1);
  CollCost a2a = net_collective_cost (&net, COLL_ALL_TO_ALL, 1 << 30,
                                      (GroupShape) { 64, 8 }, -1, 0);
  ck_assert_double_eq_tol (a2a.uplink_share, 4.0 / 7, 1e-12);
  ck_assert_double_eq_tol (net_static_rate (&net, &a2a, 8),
                           0.5 * 100e9 * 0.96 / (8 * 4.0 / 7), 1);
  topology_spec_clear (&t);
}
END_TEST

/* The group shape in O(gpus per node) equals the walk over every member
 * it replaced (which took minutes for a DP group of 2^27 GPUs). */
START_TEST (test_group_shape_matches_walk)
{
  GRand *rand = g_rand_new_with_seed (14);
  NetModel net = { 0 };
  for (int trial = 0; trial < 20000; trial++)
    {
      net.gpus_per_node = g_rand_int_range (rand, 1, 17);
      int first = g_rand_int_range (rand, 0, 200);
      int count = g_rand_int_range (rand, 0, 60);
      int stride = g_rand_int_range (rand, 1, 40);
      int per_node = count, in_node = 0;
      int64_t node = first / net.gpus_per_node;
      for (int i = 0; i < count; i++)
        {
          int64_t n = (first + (int64_t) i * stride) / net.gpus_per_node;
          if (n != node)
            {
              per_node = MIN (per_node, in_node);
              node = n;
              in_node = 0;
            }
          in_node++;
        }
      per_node = MIN (per_node, in_node);
      GroupShape g = net_group_shape (&net, first, count, stride);
      ck_assert_msg (g.size == count && g.per_node == per_node,
                     "first %d count %d stride %d gpn %d: %d per node, "
                     "want %d", first, count, stride, net.gpus_per_node,
                     g.per_node, per_node);
    }
  g_rand_free (rand);
}
END_TEST

/* ---- other jobs on the fabric, and placement ------------------------------ */

/* The static time of a collective on topology name, with its fabric as
 * the sets say (NULL-terminated), forcing algo (-1: the tuner). */
static double
fabric_time (const char *name, const char *const *sets, CollKind kind,
             double bytes, int gpus, int algo)
{
  g_autofree char *path = g_strconcat (topologies, "/", name, ".yaml", NULL);
  GError *error = NULL;
  TopologySpec t;
  NetModel net;
  ck_assert_msg (config_load_topology (path, sets, &t, &error), "%s",
                 error ? error->message : "?");
  net_model_init (&net, &t, ALGORITHM_AUTO);
  GroupShape g = { gpus, MIN (gpus, t.gpus_per_node) };
  CollCost c = net_collective_cost (&net, kind, bytes, g, algo, 0);
  topology_spec_clear (&t);
  return net_static_time (&net, &c, 0);
}

START_TEST (test_background_hand_worked)
{
  /* A dragonfly of 2 groups of 2 nodes, global links at half the
   * injection (taper 0.5), 4 NICs of 25 GB/s at Slingshot-11's 0.907 per
   * node of 8 GPUs: 11.3375 GB/s per GPU. Other jobs load the global links
   * by 0.5 and the job keeps (1 - 0.5)^1 of them (exponent 1, set): 0.5 x
   * 0.5 x 90.7 / 8 = 2.834375 GB/s per GPU when every ring step crosses a
   * group (spread), twice that
   * packed (a ring leaves each group of 2 nodes once per 2 steps). A send
   * between the first two nodes crosses groups only when spread. */
  TopologySpec t;
  NetModel net;
  load ("apollo-a100-4ss", NULL, &t);
  t.inter_node.fabric.groups = 2;
  t.inter_node.fabric.nodes_per_group = 2;
  t.inter_node.fabric.background.load = 0.5;
  t.inter_node.fabric.background.congestion_exponent = 1;
  for (int placement = 0; placement < PLACEMENT_N; placement++)
    {
      t.inter_node.fabric.placement = placement;
      net_model_init (&net, &t, ALGORITHM_RING);
      CollCost ring = net_collective_cost (&net, COLL_ALL_REDUCE, 1 << 30,
                                           (GroupShape) { 32, 8 }, -1, 0);
      double want = placement == PLACEMENT_SPREAD ? 2.834375e9 : 5.66875e9;
      ck_assert_double_eq_tol (net_static_rate (&net, &ring, 8), want, 1);
      /* Bus bandwidth: the NIC part of a 1 GiB ring all-reduce over 4
       * nodes at that rate, plus the latency the model adds. */
      double nic_s = 2 * 31.0 / 32 * (1 << 30) / 8 / want;
      double bus = net_bus_bandwidth (COLL_ALL_REDUCE, 1 << 30, 32,
                                      nic_s + ring.latency_s);
      double got = net_bus_bandwidth (COLL_ALL_REDUCE, 1 << 30, 32,
                                      net_static_time (&net, &ring, 8));
      ck_assert_msg (fabs (got - bus) < 1e-6 * bus, "%s: bus bandwidth %.6g, "
                     "by hand %.6g", placement ? "spread" : "packed", got, bus);
      CollCost send = net_send_cost (&net, 1e6, 0, 8);
      ck_assert_double_eq (send.uplink_share, placement == PLACEMENT_SPREAD ? 1 : 0);
    }
  topology_spec_clear (&t);
}
END_TEST

START_TEST (test_background_measured_loss)
{
  /* De Sensi et al., SC24: at 1,024 GPUs, a 1 GiB all-reduce on Leonardo's
   * InfiniBand lost 0.384 of its goodput to other jobs, Slingshot-11 on
   * LUMI at most 0.012 (net.c). With the job's nodes interleaved with the
   * others' (spread) and the reference load 0.5, the links out of the
   * groups run at 1 - 0.384 of their idle rate; the steps' latency, which
   * others' traffic does not lengthen here, dilutes the loss a little, and
   * the tuner may move to a tree: the stated tolerance is 0.05 either
   * way. It is checked on Leonardo's own nodes (4 x HDR100), where the NICs
   * bound the ring: on nodes of 4 x HDR 200 Gb/s NCCL's limit per channel
   * of an LL128 ring (net.c, channel_cap) would hold the idle ring below its
   * NICs and hide part of the loss. leonardo.yaml does not give its
   * Dragonfly+ groups; those of apollo-a100-4ib stand in. Packed, the ring
   * barely leaves its groups and loses nothing, as Leonardo's victims in
   * one block ("linear") lost nothing. */
#define GROUPS "inter_node.fabric.nodes_per_group=20", "inter_node.fabric.groups=32"
  const char *idle[] = { GROUPS, "inter_node.fabric.placement=spread", NULL };
  const char *busy[] = { GROUPS, "inter_node.fabric.placement=spread",
                         "inter_node.fabric.background.load=0.5", NULL };
  const char *idle_packed[] = { GROUPS, NULL };
  const char *packed[] = { GROUPS, "inter_node.fabric.background.load=0.5", NULL };
#undef GROUPS
  double ib = fabric_time ("leonardo", idle, COLL_ALL_REDUCE, 1 << 30, 1024,
                           NET_ALGO_RING)
              / fabric_time ("leonardo", busy, COLL_ALL_REDUCE, 1 << 30,
                             1024, NET_ALGO_RING);
  ck_assert_msg (fabs (1 - ib - 0.384) < 0.05, "InfiniBand ring loses %.3f", 1 - ib);
  double ib_auto = fabric_time ("leonardo", idle, COLL_ALL_REDUCE, 1 << 30,
                                1024, -1)
                   / fabric_time ("leonardo", busy, COLL_ALL_REDUCE, 1 << 30,
                                  1024, -1);
  ck_assert_msg (fabs (1 - ib_auto - 0.384) < 0.05, "InfiniBand loses %.3f",
                 1 - ib_auto);
  const char *ss_idle[] = { "inter_node.fabric.placement=spread", NULL };
  const char *ss_busy[] = { "inter_node.fabric.placement=spread",
                            "inter_node.fabric.background.load=0.5", NULL };
  double ss = fabric_time ("apollo-a100-4ss", ss_idle, COLL_ALL_REDUCE, 1 << 30,
                           1024, -1)
              / fabric_time ("apollo-a100-4ss", ss_busy, COLL_ALL_REDUCE, 1 << 30,
                             1024, -1);
  ck_assert_msg (1 - ss >= 0 && 1 - ss <= 0.02, "Slingshot loses %.3f", 1 - ss);
  double ib_packed = fabric_time ("leonardo", idle_packed, COLL_ALL_REDUCE, 1 << 30,
                                  1024, -1)
                     / fabric_time ("leonardo", packed, COLL_ALL_REDUCE,
                                    1 << 30, 1024, -1);
  ck_assert_double_eq (ib_packed, 1);
}
END_TEST

START_TEST (test_background_never_faster)
{
  /* More load on the fabric never speeds a collective up, steady or
   * bursty, packed or spread, on every shipped network type. */
  static const char *const topos[] = { "apollo-a100-4ib", "apollo-a100-4ss",
                                       "perlmutter" };
  static const CollKind kinds[] = { COLL_ALL_REDUCE, COLL_ALL_GATHER,
                                    COLL_ALL_TO_ALL };
  for (size_t ti = 0; ti < G_N_ELEMENTS (topos); ti++)
    for (int placement = 0; placement < PLACEMENT_N; placement++)
      for (int pattern = 0; pattern < BACKGROUND_N; pattern++)
        for (size_t k = 0; k < G_N_ELEMENTS (kinds); k++)
          for (double bytes = 4096; bytes <= (1 << 30); bytes *= 64)
            {
              double prev = 0;
              double top = pattern == BACKGROUND_BURSTY ? 0.45 : 0.95;
              for (double l = 0; l <= top + 1e-9; l += 0.15)
                {
                  g_autofree char *p = g_strdup_printf (
                    "inter_node.fabric.placement=%s",
                    spec_enum_name (SPEC_ENUM_PLACEMENT, placement));
                  g_autofree char *b = g_strdup_printf (
                    "inter_node.fabric.background={load: %g, pattern: %s}", l,
                    spec_enum_name (SPEC_ENUM_BACKGROUND, pattern));
                  const char *sets[] = { p, b, NULL };
                  double s = fabric_time (topos[ti], sets, kinds[k], bytes, 512, -1);
                  ck_assert_msg (s >= prev * (1 - 1e-12), "%s %s %s: load %g "
                                 "%g s, less load %g s (kind %d, %.0f bytes)",
                                 topos[ti], p, b, l, s, prev, kinds[k], bytes);
                  prev = s;
                }
            }
}
END_TEST

START_TEST (test_spread_never_beats_packed)
{
  /* On a tapered fabric, dealing the nodes over the groups never makes a
   * collective faster than filling groups one after another, idle or
   * busy, at any size the fabric holds. */
  static const char *const topos[] = { "apollo-a100-4ss", "perlmutter" };
  static const CollKind kinds[] = { COLL_ALL_REDUCE, COLL_REDUCE_SCATTER,
                                    COLL_ALL_TO_ALL };
  for (size_t ti = 0; ti < G_N_ELEMENTS (topos); ti++)
    for (size_t k = 0; k < G_N_ELEMENTS (kinds); k++)
      for (int gpus = 16; gpus <= 2048; gpus *= 4)
        for (double bytes = 4096; bytes <= (1 << 30); bytes *= 64)
          for (int busy = 0; busy < 2; busy++)
            {
              const char *load = busy ? "inter_node.fabric.background.load=0.3"
                                      : "inter_node.fabric.background.load=0";
              const char *packed[] = { load, NULL };
              const char *spread[] = { load, "inter_node.fabric.placement=spread",
                                       NULL };
              double p = fabric_time (topos[ti], packed, kinds[k], bytes, gpus, -1);
              double s = fabric_time (topos[ti], spread, kinds[k], bytes, gpus, -1);
              ck_assert_msg (s >= p * (1 - 1e-12), "%s: spread %g s < packed %g s "
                             "(kind %d, %d GPUs, %.0f bytes, %s)", topos[ti], s, p,
                             kinds[k], gpus, bytes, load);
            }
}
END_TEST

START_TEST (test_idle_fabric_is_today)
{
  /* A background of load 0, whatever its pattern, seed or exponent, is no
   * background: every time is the same to the bit. */
  const char *idle[] = { "inter_node.fabric.background={load: 0, pattern: bursty, "
                         "seed: 7, congestion_exponent: 3}", NULL };
  static const char *const topos[] = { "apollo-a100-4ib", "apollo-a100-4ss",
                                       "perlmutter", "selene" };
  for (size_t ti = 0; ti < G_N_ELEMENTS (topos); ti++)
    for (int kind = 0; kind < COLL_SEND; kind++)
      for (double bytes = 8; bytes <= (1 << 30); bytes *= 32)
        {
          double a = fabric_time (topos[ti], NULL, kind, bytes, 256, -1);
          double b = fabric_time (topos[ti], idle, kind, bytes, 256, -1);
          ck_assert_msg (a == b, "%s kind %d %.0f bytes: %.17g against %.17g",
                         topos[ti], kind, bytes, a, b);
        }
}
END_TEST

START_TEST (test_bursts_deterministic)
{
  /* Bursts come from the seed and the window alone: asked twice, or in
   * another order, the same; their mean is the load; another seed draws
   * other windows. */
  TopologySpec t;
  NetModel a, b;
  load ("perlmutter", "inter_node.fabric.background={load: 0.3, pattern: bursty, "
        "seed: 5}", &t);
  net_model_init (&a, &t, ALGORITHM_AUTO);
  t.inter_node.fabric.background.seed = 6;
  net_model_init (&b, &t, ALGORITHM_AUTO);
  double sum = 0;
  int differ = 0, n = 20000;
  for (int w = n - 1; w >= 0; w--)
    {
      double l = net_background_load_in (&a, w);
      ck_assert (l == 0 || l == 0.3 / SPEC_BURST_DUTY);
      ck_assert (l == net_background_load_in (&a, w));
      differ += l != net_background_load_in (&b, w);
      sum += l;
    }
  ck_assert_msg (fabs (sum / n - 0.3) < 0.01, "mean load %.4f", sum / n);
  ck_assert (differ > n / 4);
  /* The mean share kept over the bursts is what the uplinks carry. */
  ck_assert_double_eq_tol (a.background_keep,
                           SPEC_BURST_DUTY * net_background_keep_at (&a, 0.6)
                           + 1 - SPEC_BURST_DUTY, 1e-15);
  topology_spec_clear (&t);
}
END_TEST

static Suite *
net_suite (void)
{
  Suite *s = suite_create ("net");
  TCase *tc = tcase_create ("flows");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_two_flows_share_a_nic);
  tcase_add_test (tc, test_late_flow_slows_the_first);
  tcase_add_test (tc, test_flow_alone);
  tcase_add_test (tc, test_max_min_bottlenecks);
  tcase_add_test (tc, test_components_equal_full_fill);
  suite_add_tcase (s, tc);
  tc = tcase_create ("collectives");
  tcase_add_test (tc, test_nccl_tests_bars);
  tcase_add_test (tc, test_one_node_1mib_by_hand);
  tcase_add_test (tc, test_two_node_tree);
  tcase_add_test (tc, test_per_channel_cap);
  tcase_add_test (tc, test_ring_latency_grows_with_nodes);
  tcase_add_test (tc, test_more_nics_never_slower);
  tcase_add_test (tc, test_tuner_choices);
  tcase_add_test (tc, test_nvls_by_hand);
  tcase_add_test (tc, test_nvls_relations);
  tcase_add_test (tc, test_nvls_tree_by_hand);
  tcase_add_test (tc, test_collnet_by_hand);
  tcase_add_test (tc, test_sharp_relations);
  tcase_add_test (tc, test_collnet_hopper_and_arity);
  tcase_add_test (tc, test_all_to_all_does_not_aggregate);
  tcase_add_test (tc, test_fabric_taper);
  tcase_add_test (tc, test_group_shape_matches_walk);
  suite_add_tcase (s, tc);
  tc = tcase_create ("fabric");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_background_hand_worked);
  tcase_add_test (tc, test_background_measured_loss);
  tcase_add_test (tc, test_background_never_faster);
  tcase_add_test (tc, test_spread_never_beats_packed);
  tcase_add_test (tc, test_idle_fabric_is_today);
  tcase_add_test (tc, test_bursts_deterministic);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  const char *srcdir = g_getenv ("srcdir");
  topologies = g_build_filename (srcdir ? srcdir : ".", "topologies", NULL);
  SRunner *sr = srunner_create (net_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  g_free (topologies);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
