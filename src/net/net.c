/* net.c: link calibration, the collective algorithms and the tuner; see
 * net.h. */
#include "net/net.h"
#include "base/stats.h"

#include <math.h>

/* ---- the fabric's response to other jobs' traffic ------------------------
 * A job keeps (1 - L)^e of a link out of its group that other jobs load
 * by a share L (net_background_keep_at). e = 1 would be a job that loses
 * exactly the share the others take; e < 1, less, as when congestion
 * control throttles the others at their source and adaptive routing
 * finds the job spare paths; e near 0, an isolated job. Only links out of
 * a group are shared with other jobs (a node's NICs are its own), so the
 * loss depends on placement: De Sensi et al. measured none on Leonardo
 * with the victim's nodes in one block ("linear"), and the losses below
 * with them interleaved with the other job's ("spread" here).
 * The measurements give a loss, not the load that caused it: each
 * exponent is fitted at a reference load, an ASSUMPTION: 0.5, another job's
 * traffic taking its fair half of every link the two share. Then
 * e = ln (1 - loss) / ln (1 - 0.5), and background.load 0.5
 * reproduces the measured losses. Sources: De Sensi et al., "Exploring
 * GPU-to-GPU Communication: Insights into Supercomputer Interconnects",
 * SC24 (arXiv 2408.14090), NCCL all-reduce of 1 GiB, from the paper's
 * raw data (github.com/DanieleDeSensi/blink, branch sc24, medians):
 *  infiniband-hdr: Leonardo (HDR100, Dragonfly+), 256 nodes, 1,024 GPUs,
 *    goodput 92.3 Gb/s on the default service level, shared with
 *    production jobs, against 149.8 on an isolated one five minutes later
 *    (the runs of Fig. 13, as the artifact's plots/plot.sh numbers the
 *    figures): a loss of 0.384, e = 0.70. (An incast aggressor
 *    interleaved with a 32-node victim, Fig. 12 there, cost 0.33.)
 *  slingshot-11: LUMI, a 64-node victim interleaved with an all-to-all
 *    aggressor on as many nodes: 212.0 Gb/s against 214.5 alone, a loss
 *    of 0.012 (an incast aggressor: none), e = 0.017; congestion control
 *    isolating victims as De Sensi et al., SC20 (arXiv 2008.08886)
 *    describe it.
 *  infiniband-ndr, roce, omni-path: assumed equal to HDR until measured. */
/* (The values: the ledger's IB_CONGESTION_EXPONENT and
 * SLINGSHOT_CONGESTION_EXPONENT, src/base/ledger.def.) */

/* ---- link calibration: one row per link kind ---------------------------
 * efficiency: the fraction of the line rate a large collective reaches.
 * latency: a default per step (Simple protocol) when the topology gives
 * none. Sources:
 *  nvswitch/nvlink: 8 x A100 all-reduce bus bandwidth measured at 230-233
 *    GB/s by nccl-tests (229-234 at 1-4 GiB: Bekman, Machine Learning
 *    Engineering Open Book, network/README.md, 2023; 232.5: NVIDIA/nccl
 *    issue #1048, 2023) against 300 GB/s NVLink3 per direction (A100
 *    whitepaper, 2020): 230 / 300 = 0.77; NCCL's tuning.cc NVLink hop
 *    latency is 0.5 us (LL) to 3.4 us (Simple): 2 us is between.
 *  pcie: Gen4 x16, 25 GB/s nominal, ~21 GB/s measured by bandwidthTest.
 *  infiniband-hdr/ndr: multi-node all-reduce bus bandwidth about 24 GB/s
 *    per 200 Gb/s NIC (nccl-tests on 2 x 8 A100 with one HDR NIC per node,
 *    NVIDIA/nccl issue #1048, 2023; the figure NCCL's developers give in
 *    NVIDIA/nccl issue #412, 2023): 24 / 25 = 0.96; a network
 *    step costs 2.7-9.6 us by protocol (NCCL tuning.cc): 5 us.
 *    Leonardo's 4 x HDR100 a node, never fitted to, reach 48.6 GB/s of a
 *    50 GB/s bound at 1 GiB on 4-32 nodes and 49.0 at 8 GiB (De Sensi et
 *    al., SC24, arXiv:2408.14090, raw data; desensi2024-leonardo.yaml):
 *    0.97-0.98, within 2 % of this.
 *  slingshot-11: fitted (experiments/validation/desensi2024-alps.yaml,
 *    a calibration file): NCCL through the libfabric CXI plugin on Alps'
 *    4 x 200 Gb/s Slingshot-11 NICs a node reaches 90.7 GB/s of all-reduce
 *    bus bandwidth at 1 GiB on 4-64 nodes, 91.3 at 8 GiB (De Sensi et al.,
 *    SC24, raw data of its Figure 10): 90.7 / 100 = 0.907. The step
 *    latency is a starting point (topology files give their own).
 *  roce, omni-path: assumed equal to HDR until measured. */
typedef struct {
  LedgerId efficiency;
  LedgerId latency_s;
  /* What a job keeps of a fabric link that other jobs load by a share L:
   * (1 - L)^congestion_exponent (net_background_keep_at; sources in the
   * fabric responses above). Links inside a node carry no other job's
   * traffic: theirs is never read. */
  LedgerId congestion_exponent;
} LinkCalibration;

/* Each link kind's rows of the ledger (src/base/ledger.def). */
static const LinkCalibration link_calibration[LINK_N] = {
  [LINK_NVSWITCH]       = { LEDGER_NVLINK_EFFICIENCY, LEDGER_NVLINK_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_NVLINK]         = { LEDGER_NVLINK_EFFICIENCY, LEDGER_NVLINK_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_PCIE]           = { LEDGER_PCIE_EFFICIENCY, LEDGER_PCIE_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_INFINIBAND_HDR] = { LEDGER_IB_EFFICIENCY, LEDGER_IB_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_INFINIBAND_NDR] = { LEDGER_IB_EFFICIENCY, LEDGER_IB_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_SLINGSHOT_11]   = { LEDGER_SLINGSHOT_EFFICIENCY, LEDGER_SLINGSHOT_STEP_LATENCY_S,
                            LEDGER_SLINGSHOT_CONGESTION_EXPONENT },
  [LINK_ROCE]           = { LEDGER_IB_EFFICIENCY, LEDGER_IB_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
  [LINK_OMNI_PATH]      = { LEDGER_IB_EFFICIENCY, LEDGER_IB_STEP_LATENCY_S,
                            LEDGER_IB_CONGESTION_EXPONENT },
};

/* ---- NCCL's cost model (src/graph/tuning.cc) ------------------------------
 * Latencies in us per algorithm and protocol (LL, LL128, Simple), from
 * NCCL v2.21.5-1's tables: a base per collective (baseLat) and one per
 * step on NVLink or on the network (hwLat). Here a topology's own latency
 * is the Simple ring's step; the other algorithms and protocols keep
 * NCCL's ratios to it.
 * Bus bandwidth the protocols keep (NCCL 2.8's fractions): LL sends a
 * flag with every 4 bytes of data and NCCL's model gives the ring 1/4 of
 * the link (1/3 inside one node for all but all-reduce; 1/3.8 for the
 * tree); LL128 keeps 120 of 128 bytes (ring 0.92, 0.7 with one GPU per
 * node, which sends and receives through the same NIC; tree 0.915, 7/9
 * inside one node).
 * The tree keeps 0.9 of the links (TREE_FRACTION); its bandwidth is
 * corrected by size as v2.21.5-1's (tree_correction). Across nodes,
 * v2.21.5-1's limits per channel bound the tree and the LL128 ring
 * (channel_cap).
 * A multi-node ring follows v2.21.5-1's rules: its network steps
 * (ring_inter_steps), the net overhead of its steps inside a node
 * (steps_latency) and its plateau (ring_plateau). The values are the
 * ledger's rows of these names. */

/* Seconds of NCCL's table TABLE (a ledger table: ring, then tree, each
 * LL, LL128, Simple) for algorithm A and protocol P; hierarchical and
 * direct collectives run rings and keep the ring's. */
static double
nccl_latency_s (LedgerId table, NetAlgo a, NetProto p)
{
  return ledger_entries[table].values[(a == NET_ALGO_TREE ? NET_PROTO_N : 0) + p]
         * 1e-6;
}

void
net_model_init (NetModel *net, const TopologySpec *t, AlgorithmChoice algorithm)
{
  const LinkCalibration *intra = &link_calibration[t->intra_node.link];
  *net = (NetModel) { 0 };
  net->gpus_per_node = t->gpus_per_node;
  net->algorithm = algorithm;
  net->ll128 = t->intra_node.link == LINK_NVSWITCH
               || t->intra_node.link == LINK_NVLINK;
  net->intra_bandwidth = t->intra_node.bandwidth
    * (t->intra_node.efficiency > 0 ? t->intra_node.efficiency
                                    : ledger_entries[intra->efficiency].value);
  net->intra_latency = t->intra_node.latency > 0 ? t->intra_node.latency
                                                 : ledger_entries[intra->latency_s].value;
  net->nvls_bandwidth = t->intra_node.sharp
    ? t->intra_node.bandwidth * LEDGER (NVLS_EFFICIENCY) : 0;
  net->has_network = t->inter_node.nics_per_node > 0;
  if (!net->has_network)
    return;
  const InterNodeSpec *in = &t->inter_node;
  /* CollNet Direct needs NVSwitches (ncclTopoGetNvsCount, else only the
   * chain: ncclTopoTuneModel, NCCL v2.21.5-1). */
  net->collnet = in->sharp;
  net->collnet_direct = in->sharp && t->intra_node.link == LINK_NVSWITCH;
  net->hopper = t->gpu.generation >= GENERATION_HOPPER;
  net->collnet_fraction = net->hopper ? LEDGER (NCCL_COLLNET_HOPPER_FRACTION) : 1;
  const LinkCalibration *inter = &link_calibration[in->link];
  int gpn = t->gpus_per_node;
  net->nics = in->nics_per_node;
  net->nic_bandwidth = in->nic_bandwidth
    * (in->efficiency > 0 ? in->efficiency : ledger_entries[inter->efficiency].value);
  net->inter_latency = in->latency > 0 ? in->latency
                                     : ledger_entries[inter->latency_s].value;
  net->nic_path = in->nic_path;
  /* The placement as written, or GPUs split evenly over the NICs in
   * order; with more NICs than GPUs, GPU g's own NICs are the nics/gpn
   * from g * nics / gpn (net_own_nics). */
  for (int g = 0; g < gpn && g < SPEC_MAX_GPUS_PER_NODE; g++)
    {
      net->nic_of_gpu[g] = in->nic_of_gpu.len > 0 ? in->nic_of_gpu.v[g]
                           : (int) ((int64_t) g * net->nics / gpn);
      if (net->nic_of_gpu[g] < SPEC_MAX_GPUS_PER_NODE)
        net->gpus_on_nic[net->nic_of_gpu[g]]++;
    }
  const FabricSpec *f = &in->fabric;
  net->nodes_per_group = f->nodes_per_group;
  net->placement = f->placement;
  net->groups = f->groups;
  net->background_load = f->background.load;
  net->background_pattern = f->background.pattern;
  net->background_seed = (guint32) f->background.seed;
  net->congestion_exponent = f->background.congestion_exponent != SPEC_UNSET
    ? f->background.congestion_exponent
    : ledger_entries[inter->congestion_exponent].value;
  /* Bursty: the mean over on and off windows of what the job keeps. */
  double l = net->background_load;
  net->background_keep = net->background_pattern == BACKGROUND_BURSTY
    ? SPEC_BURST_DUTY * net_background_keep_at (net, l / SPEC_BURST_DUTY)
      + (1 - SPEC_BURST_DUTY)
    : net_background_keep_at (net, l);
  net->uplink_fraction = f->taper * f->routing_efficiency * net->background_keep;
}

double
net_background_keep_at (const NetModel *net, double load)
{
  return spec_background_keep (load, net->congestion_exponent);
}

/* A window's draw depends on the seed and the window alone, not on the
 * order windows are asked for (stats_mix64). */
double
net_background_load_in (const NetModel *net, int64_t window)
{
  if (net->background_pattern != BACKGROUND_BURSTY)
    return net->background_load;
  guint64 x = stats_mix64 (((guint64) net->background_seed << 32)
                           ^ stats_mix64 ((guint64) window));
  double u = (double) (x >> 11) * 0x1.0p-53;   /* uniform in [0, 1) */
  return u < SPEC_BURST_DUTY ? net->background_load / SPEC_BURST_DUTY : 0;
}

int
net_group_members_in_node (const NetModel *net, int first, int count,
                           int stride, int64_t node)
{
  int64_t gpn = net->gpus_per_node;
  int64_t lo = node * gpn - first, hi = (node + 1) * gpn - 1 - first;
  int64_t j_lo = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  int64_t j_hi = hi < 0 ? -1 : MIN (count - 1, hi / stride);
  return (int) MAX (j_hi - j_lo + 1, 0);
}

GroupShape
net_group_shape (const NetModel *net, int first, int count, int stride)
{
  GroupShape g = { count, count };
  int64_t gpn = net->gpus_per_node;
  if (count <= 0)
    g.per_node = 0;
  else if (stride >= gpn)
    g.per_node = 1;     /* each member in a node of its own */
  else
    {
      /* A stride under a node skips no node from the first member's to
       * the last's. The nodes between hold full runs whose count
       * depends only on (node x gpn - first) mod stride, so it repeats
       * within stride nodes: those, and the two end nodes, give the
       * fewest members of any node. */
      int64_t n0 = first / gpn;
      int64_t n1 = ((int64_t) first + (int64_t) (count - 1) * stride) / gpn;
      g.per_node = MIN (net_group_members_in_node (net, first, count, stride, n0),
                        net_group_members_in_node (net, first, count, stride, n1));
      for (int64_t n = n0 + 1; n < n1 && n <= n0 + stride; n++)
        g.per_node = MIN (g.per_node, net_group_members_in_node (
                            net, first, count, stride, n));
    }
  return g;
}

/* ---- the algorithms ------------------------------------------------------- */

/* The fraction of link bandwidth protocol p keeps for algorithm a. */
static double
proto_fraction (NetAlgo a, NetProto p, CollKind kind, int per_node, int nodes)
{
  switch (p)
    {
    case NET_PROTO_LL:
      if (a == NET_ALGO_TREE)
        return LEDGER (TREE_LL_FRACTION);
      return nodes > 1 || kind == COLL_ALL_REDUCE ? LEDGER (RING_LL_FRACTION)
                                                  : LEDGER (RING_LL_ONE_NODE_FRACTION);
    case NET_PROTO_LL128:
      if (a == NET_ALGO_TREE)
        return nodes > 1 ? LEDGER (TREE_LL128_FRACTION) : LEDGER (TREE_LL128_ONE_NODE_FRACTION);
      return per_node < 2 ? LEDGER (RING_LL128_ONE_PER_NODE_FRACTION) : LEDGER (RING_LL128_FRACTION);
    case NET_PROTO_SIMPLE:
    case NET_PROTO_N:
    default:
      return 1.0;
    }
}

/* A topology's step latency inside a node and across nodes over NCCL's
 * Simple ring step there: the factors NCCL's tables are scaled by. */
static double
intra_scale (const NetModel *net)
{
  return net->intra_latency
         / nccl_latency_s (LEDGER_NCCL_NVLINK_STEP_LATENCY_US, NET_ALGO_RING,
                           NET_PROTO_SIMPLE);
}

static double
inter_scale (const NetModel *net)
{
  return net->has_network
    ? net->inter_latency / nccl_latency_s (LEDGER_NCCL_NET_STEP_LATENCY_US,
                                           NET_ALGO_RING, NET_PROTO_SIMPLE)
    : 0;
}

/* Seconds of latency for steps inside nodes and steps between them. A
 * multi-node ring's step inside a node costs at least the network's post
 * overhead, NCCL_NET_OVERHEAD_US (v2.21.5-1, ncclTopoTuneModel: "Inter-node
 * rings still have to launch nsteps * net overhead"); not the tree's. */
static double
steps_latency (const NetModel *net, NetAlgo a, NetProto p, double intra_steps,
               double inter_steps)
{
  double intra = nccl_latency_s (LEDGER_NCCL_NVLINK_STEP_LATENCY_US, a, p)
                 * intra_scale (net);
  if ((a == NET_ALGO_RING || a == NET_ALGO_HIERARCHICAL) && inter_steps > 0)
    intra = MAX (intra, LEDGER_VALUES (NCCL_NET_OVERHEAD_US)[p] * 1e-6);
  return nccl_latency_s (LEDGER_NCCL_BASE_LATENCY_US, a, p)
         + intra_steps * intra
         + inter_steps * nccl_latency_s (LEDGER_NCCL_NET_STEP_LATENCY_US, a, p)
           * inter_scale (net);
}

/* The fabric group of the job's node `node` (net.h: placement). */
static int64_t
group_of (const NetModel *net, int64_t node)
{
  if (net->placement == PLACEMENT_SPREAD)
    return node % net->groups;
  return node / MAX (net->nodes_per_group, 1);
}

/* The share of a group's NIC bytes that leaves its leaf switch or
 * dragonfly group, for a group of `nodes` nodes from the job's first.
 * Of them, `together` share the first node's fabric group: packed, up to
 * a group's worth; spread, one in every `groups`. A ring (and the tree
 * built over the same node order) leaves a fabric group once per run of
 * neighbours in it: packed, 1 / (its nodes there); spread, at every step.
 * An all-to-all sends out every byte for a node in another group. */
static double
uplink_share (const NetModel *net, CollKind kind, int nodes)
{
  int together = net->placement == PLACEMENT_SPREAD
    ? (nodes + net->groups - 1) / net->groups
    : MIN (MAX (net->nodes_per_group, 1), nodes);
  if (together >= nodes)
    return 0;
  if (kind == COLL_ALL_TO_ALL)
    return (double) (nodes - together) / (nodes - 1);
  return net->placement == PLACEMENT_SPREAD ? 1.0 : 1.0 / together;
}

/* NCCL's factor on the tree's bandwidth for a buffer of bytes, by its
 * power of two from 64 B to 256 MiB ("Trees are not perfectly sticking to
 * the model for medium sizes": treeCorrectionFactor, ncclTopoGetAlgoTime,
 * v2.21.5-1): log2i (bytes >> 6) indexes the row, 1 from 2^23 up. */
static double
tree_correction (NetProto p, double bytes)
{
  enum { SIZES = 23 };
  int e;   /* bytes / 64 = m x 2^e, m in [0.5, 1): log2i is e - 1 */
  frexp (bytes / 64, &e);
  int log_size = bytes >= 128 ? e - 1 : 0;
  return log_size < SIZES ? LEDGER_VALUES (NCCL_TREE_CORRECTION)[p * SIZES + log_size]
                          : 1.0;
}

/* NCCL's channels between nodes: its search (ncclTopoCompute,
 * src/graph/search.cc) gives each NIC of a node a channel at the NIC's
 * speed, which ncclTopoDupChannels does not duplicate under 25 GB/s (an
 * HDR NIC's 24), nor on Hopper under 50 GB/s with more than 4 channels
 * (8 NDR NICs' 48 each); and ncclTopoPostset (src/graph/connect.cc) runs
 * each of them twice ("Duplication should be complete now"): the graph
 * has one channel a NIC, the communicator twice that (NCCL v2.21.5-1).
 * (Nodes of at most 4 NICs of 25 GB/s or more, whose graph NCCL
 * duplicates, are counted the same: none is shipped.) */
static int
graph_channels (const NetModel *net)
{
  return MAX (net->nics, 1);
}

/* The most bus bandwidth NCCL's kernels give algorithm a with protocol p,
 * whose fraction of the links is f, across `nodes` nodes
 * (ncclTopoTuneModel, v2.21.5-1): the graph's channels x the limit per
 * channel of the GPUs' generation (NCCL_PER_CHANNEL_CAP_GBS: Ampere's, or
 * Hopper's for a device of generation hopper, as NCCL's compCapIndex
 * picks them): the tree's, then with LL128 the lower of that x f and
 * LL128's; the ring's with LL128 alone. It bounds the GPU's part of the
 * collective, whatever its NICs carry. Inside one node NCCL's graph has a
 * channel per NVLink at 20 GB/s (SM80_NVLINK_BW, src/graph/topo.h), at or
 * under every limit: they never bind there. */
static double
channel_cap (const NetModel *net, NetAlgo a, NetProto p, int nodes, double f)
{
  if (nodes <= 1)
    return INFINITY;
  const double *cap = LEDGER_VALUES (NCCL_PER_CHANNEL_CAP_GBS) + (net->hopper ? 6 : 0);
  int more = nodes > 2;
  double channels = graph_channels (net) * 1e9;   /* GB/s to B/s */
  if (a == NET_ALGO_TREE)
    {
      double tree = channels * cap[more] * f;
      return p == NET_PROTO_LL128 ? MIN (tree, channels * cap[2 + more]) : tree;
    }
  return p == NET_PROTO_LL128 ? channels * cap[4 + more] : INFINITY;
}

/* Of a ring's steps over `nodes` nodes, those NCCL counts as network steps
 * (ncclTopoTuneModel, v2.21.5-1; v2.12 on): 2 x nodes for all-reduce,
 * nodes - 1 for the others. The rest of its steps are inside nodes: for
 * an all-reduce 2 (ranks - 1) - 2 x nodes, -2 with one rank a node, as
 * NCCL counts them. */
static double
ring_inter_steps (CollKind kind, int nodes)
{
  if (nodes <= 1)
    return 0;
  return kind == COLL_ALL_REDUCE ? 2.0 * nodes : nodes - 1;
}

/* NCCL's "plateau effect of ring" (ncclTopoGetAlgoTime, v2.21.5-1): a
 * multi-node Simple ring all-reduce of bytes over `ranks` ranks pays
 * RING_PLATEAU x its latency from RING_PLATEAU_BYTES per channel and rank,
 * on the communicator's channels. */
static gboolean
ring_plateau (const NetModel *net, CollKind kind, NetProto p, double bytes,
              int ranks, int nodes)
{
  return p == NET_PROTO_SIMPLE && nodes > 1 && kind == COLL_ALL_REDUCE
         && bytes / (2.0 * graph_channels (net) * ranks)
            >= LEDGER (RING_PLATEAU_BYTES);
}

/* ---- SHARP: the switches reduce ---------------------------------------
 * NVLink SHARP. With intra_node.sharp, NCCL (2.17 on) can run an
 * all-reduce of GPUs of one node as NVLS: each GPU's share of the buffer
 * is reduced in the NVSwitches (multimem.ld_reduce) and multicast back
 * (multimem.st), so a GPU's link carries the buffer about once each way,
 * not the ring's 2 (n - 1) / n. Its cost is NCCL's form, latency + bytes
 * / algorithm bandwidth:
 * - the algorithm bandwidth, NVLS_EFFICIENCY x the link's line rate a
 *   direction, from a measurement (the ledger row: 480 GB/s of bus
 *   bandwidth on 8 GPUs of NVLink4, algbw 480 / 1.75 = 274 GB/s of 450;
 *   experiments/validation/nccl-tests-h100-nvls.yaml), the same for
 *   every group size as NCCL's model has it (one step);
 * - the latency, NCCL's NVLS step on NVLink (hwLat, 25 us Simple; baseLat
 *   0), scaled by the topology's step latency as the ring's and the
 *   tree's are (steps_latency).
 * NCCL enables NVLS only where a communicator has more than 2 GPUs in the
 * node (ncclNvlsInit, src/transport/nvls.cc), and across nodes only with
 * CollNet below it; else between nodes it runs the NVLS tree: NVLS in each
 * node and its tree between nodes (NCCL 2.18 on).
 *
 * InfiniBand SHARP. With inter_node.sharp (the SHARP plugin and
 * NCCL_COLLNET_ENABLE=1), NCCL's CollNet sends each node's sum to the
 * switches, which reduce the nodes' sums and send the total back: a node's
 * NICs carry the buffer once each way, where a ring or tree carries it
 * twice, and the latency does not grow with the nodes. CollNet Direct
 * (NVSwitch nodes) scatters each GPU's buffer to the node's NIC heads and
 * gathers the result back over NVLink; CollNet Chain passes it along a
 * chain of the node's GPUs. NCCL enables CollNet on 2 nodes or more
 * (NCCL_COLLNET_NODE_THRESHOLD 2, src/init.cc) of at most
 * COLLNET_MAX_LOCAL GPUs each (a group's members in a node are the same
 * in every node here: GroupShape's per_node).
 * A forced algorithm that does not apply runs the ring here; NCCL, asked
 * for CollNet without it, lets its tuner pick between ring and tree.
 *
 * All of them run all-reduce only here, with the Simple protocol, their
 * only one (ncclTopoTuneModel, src/graph/tuning.cc). NCCL v2.21.5-1 also
 * runs NVLS reduce-scatter and all-gather inside a node, and CollNet
 * Direct ones where each GPU has its NIC: no measurement of their rates
 * is here, so they are not modelled. Their latencies are NCCL's
 * (NCCL_SHARP_LATENCY_US), scaled as the ring's. Across nodes the NICs
 * run at the rate the ring's reach: NCCL's own model gives the NVLS ones
 * 5/6 of its graph's speed, but on 8 x H100 nodes with 8 x 400 Gb/s NICs
 * the NVLS tree's published bus bandwidth, 370-380 GB/s (NVIDIA, GTC 2024
 * S62129, as quoted in NVIDIA/nccl issue #1649), is the ring's (NVIDIA/nccl
 * issue #1221: on more than 2 nodes the same with NVLS on and off), where
 * 5/6 would give 320. CollNet Direct on Hopper keeps NCCL's
 * NCCL_COLLNET_HOPPER_FRACTION of its bandwidth: no measurement of it is
 * here. The two levels run pipelined: the slower one sets the time. */

/* CollNet's most GPUs a node (NCCL_MAX_DIRECT_ARITY + 1, src/init.cc and
 * src/include/device.h, NCCL v2.21.5-1): NCCL turns CollNet off for a
 * communicator with more in a node. */
#define COLLNET_MAX_LOCAL 8

/* Whether algorithm a applies to a collective of `local` GPUs in each of
 * `nodes` nodes, as far as SHARP goes: the others always do. */
static gboolean
sharp_applies (const NetModel *net, NetAlgo a, CollKind kind, NetProto p,
               int local, int nodes)
{
  gboolean sharp = kind == COLL_ALL_REDUCE && p == NET_PROTO_SIMPLE;
  gboolean nvls = sharp && net->nvls_bandwidth > 0 && local > 2;
  gboolean collnet = sharp && net->collnet && nodes > 1
                     && local <= COLLNET_MAX_LOCAL;
  switch (a)
    {
    case NET_ALGO_NVLS:
      return nvls && (nodes == 1 || collnet);
    case NET_ALGO_NVLS_TREE:
      return nvls && nodes > 1;
    case NET_ALGO_COLLNET_DIRECT:
      return collnet && net->collnet_direct;
    case NET_ALGO_COLLNET_CHAIN:
      return collnet;
    case NET_ALGO_RING:
    case NET_ALGO_TREE:
    case NET_ALGO_HIERARCHICAL:
    case NET_ALGO_DIRECT:
    case NET_ALGO_N:
    default:
      return TRUE;
    }
}

/* Seconds of a step of SHARP algorithm a on NVLink, or on the network
 * (NCCL_SHARP_LATENCY_US), scaled as the ring's steps are. */
static double
sharp_latency_s (const NetModel *net, NetAlgo a, gboolean network)
{
  int i = (int) a - NET_ALGO_NVLS + (network ? NET_ALGO_N - NET_ALGO_NVLS : 0);
  return LEDGER_VALUES (NCCL_SHARP_LATENCY_US)[i] * 1e-6
         * (network ? inter_scale (net) : intra_scale (net));
}

/* The cost of algorithm a with protocol p; FALSE when a does not apply. */
static gboolean
algo_cost (const NetModel *net, CollKind kind, double bytes, GroupShape g,
           NetAlgo a, NetProto p, CollCost *c)
{
  int size = g.size, local = MIN (g.per_node, g.size);
  int nodes = (size + local - 1) / local;
  double f = proto_fraction (a, p, kind, local, nodes);
  /* All-reduce moves the buffer twice (reduce, then gather). */
  double twice = kind == COLL_ALL_REDUCE ? 2 : 1;
  double frac = (double) (size - 1) / size;

  if (kind == COLL_ALL_TO_ALL ? a != NET_ALGO_DIRECT
      : (a == NET_ALGO_DIRECT || (a == NET_ALGO_TREE && kind != COLL_ALL_REDUCE)))
    return FALSE;
  if (!sharp_applies (net, a, kind, p, local, nodes))
    return FALSE;
  if (p == NET_PROTO_LL128 && !net->ll128)
    return FALSE;
  *c = (CollCost) { a, p, 0, 0, 0, 0, TRUE, FALSE, local };
  if (nodes > 1)
    c->uplink_share = uplink_share (net, kind, nodes);
  switch (a)
    {
    case NET_ALGO_RING:
      {
        double link = local > 1 ? net->intra_bandwidth * f : INFINITY;
        c->intra_s = twice * frac * bytes / MIN (link, channel_cap (net, a, p, nodes, f));
        if (nodes > 1)
          c->nic_bytes = twice * frac * bytes / local / f;
        double inter = ring_inter_steps (kind, nodes);
        c->latency_s = steps_latency (net, a, p, twice * (size - 1) - inter, inter);
        if (ring_plateau (net, kind, p, bytes, size, nodes))
          c->latency_s *= LEDGER (RING_PLATEAU);
        return TRUE;
      }
    case NET_ALGO_TREE:
      {
        /* algbw = busbw / 2: up the tree and down again. */
        double link = local > 1 ? net->intra_bandwidth * LEDGER (TREE_FRACTION) * f
                                : INFINITY;
        double corr = tree_correction (p, bytes);
        c->intra_s = 2 * bytes / (MIN (link, channel_cap (net, a, p, nodes, f)) * corr);
        /* On two nodes NCCL's search raises the tree's speed inside the
         * node to up to twice its speed across (ncclTopoCompute's second
         * pass, "increase bwIntra for trees (2 nodes or collnet)",
         * src/graph/search.cc) and the tuner takes that speed on two nodes
         * (nNodes <= 2 ? bwIntra : bwInter, ncclTopoTuneModel; v2.21.5-1):
         * the NICs carry half the bytes, the node's links and the channels'
         * limit (intra_s) the rest of the bound. */
        if (nodes > 1)
          c->nic_bytes = (nodes == 2 ? 1 : 2) * bytes / local
                         / (LEDGER (TREE_FRACTION) * f * corr);
        c->latency_s = steps_latency (net, a, p, 2.0 * (local - 1),
                                      2.0 * floor (log2 (nodes)));
        return TRUE;
      }
    case NET_ALGO_HIERARCHICAL:
      {
        double lfrac = (double) (local - 1) / local;
        double nfrac = (double) (nodes - 1) / nodes;
        /* All-reduce: reduce-scatter and all-gather inside the node
         * around it; reduce-scatter or all-gather: one of the two. */
        c->pipelined = FALSE;
        c->intra_s = twice * lfrac * bytes / (net->intra_bandwidth * f);
        c->nic_bytes = twice * nfrac * bytes / local / f;
        /* Its middle phase is a ring of one rank a node, its steps
         * counted and its plateau paid as the ring's. */
        double inter = ring_inter_steps (kind, nodes);
        c->latency_s = steps_latency (net, a, p, twice * (local - 1)
                                                 + twice * (nodes - 1) - inter,
                                      inter);
        if (ring_plateau (net, kind, p, bytes / local, nodes, nodes))
          c->latency_s *= LEDGER (RING_PLATEAU);
        return TRUE;
      }
    case NET_ALGO_NVLS:
      /* Each GPU sends the buffer to the switches once and gets the sum
       * back once: the whole buffer at NVLS's rate, whatever the group's
       * size; one step. Across nodes each node's sum goes once each way
       * through its NICs to InfiniBand SHARP, as CollNet's. */
      c->intra_s = bytes / net->nvls_bandwidth;
      c->latency_s = sharp_latency_s (net, a, FALSE);
      if (nodes > 1)
        {
          c->nic_bytes = bytes / local;
          c->latency_s += sharp_latency_s (net, a, TRUE);
        }
      return TRUE;
    case NET_ALGO_NVLS_TREE:
      /* NVLS in each node; between nodes NCCL's tree over the node's sums,
       * whose NICs carry twice the buffer each way (once on two nodes, as
       * the tree's: bwInter / 2 past 2 nodes, ncclTopoTuneModel); its
       * latency NVLS's step and two network steps a level of the tree. */
      c->intra_s = bytes / net->nvls_bandwidth;
      c->nic_bytes = (nodes == 2 ? 1 : 2) * bytes / local;
      c->latency_s = sharp_latency_s (net, a, FALSE)
                     + 2.0 * floor (log2 (nodes)) * sharp_latency_s (net, a, TRUE);
      return TRUE;
    case NET_ALGO_COLLNET_DIRECT:
      {
        /* Each GPU's buffer scattered over the node's heads and the sum
         * gathered back, over NVLink; the node's sum once each way
         * through its NICs; on Hopper both at NCCL's fraction of its
         * bandwidth. NCCL's latency: 2 (a step on NVLink, if the node has
         * two GPUs or more, + 0.4 us a further GPU) + a network step. */
        double lfrac = (double) (local - 1) / local;
        c->intra_s = 2 * lfrac * bytes / net->intra_bandwidth / net->collnet_fraction;
        c->nic_bytes = bytes / local / net->collnet_fraction;
        c->latency_s = 2 * (MIN (1, local - 1) * sharp_latency_s (net, a, FALSE)
                            + (local - 1) * LEDGER (NCCL_COLLNET_ARITY_LATENCY_US) * 1e-6)
                       + sharp_latency_s (net, a, TRUE);
        return TRUE;
      }
    case NET_ALGO_COLLNET_CHAIN:
      /* A chain through the node's GPUs carries the buffer up to the head
       * and the sum down again: twice the buffer each way on NVLink, as
       * the tree's chain; the node's sum once each way through its NICs.
       * NCCL's latency: 2 (local - 1) steps on NVLink + a network step. */
      c->intra_s = local > 1 ? 2 * bytes / net->intra_bandwidth : 0;
      c->nic_bytes = bytes / local;
      c->latency_s = 2.0 * (local - 1) * sharp_latency_s (net, a, FALSE)
                     + sharp_latency_s (net, a, TRUE);
      return TRUE;
    case NET_ALGO_DIRECT:
      /* Every rank sends bytes / size to every other rank at once. */
      c->own_nic = TRUE;
      c->intra_s = (double) (local - 1) / size * bytes / (net->intra_bandwidth * f);
      c->nic_bytes = (double) (size - local) / size * bytes / f;
      c->latency_s = steps_latency (net, a, p, local > 1 ? 1 : 0, nodes > 1 ? 1 : 0);
      return TRUE;
    case NET_ALGO_N:
    default:
      g_assert_not_reached ();
    }
}

double
net_cost_time (const CollCost *c, double rate)
{
  double nic = c->nic_bytes > 0 ? c->nic_bytes / rate : 0;
  return c->latency_s + (c->pipelined ? MAX (c->intra_s, nic) : c->intra_s + nic);
}

/* The NIC bandwidth a GPU reaches alone, by its own NIC(s). */
static double
own_nic_bandwidth (const NetModel *net)
{
  return net->nic_bandwidth * MAX (1, net->nics / net->gpus_per_node);
}

double
net_static_rate (const NetModel *net, const CollCost *c, int active)
{
  double node = net->nics * net->nic_bandwidth;
  double rate = node / active;
  if (c->own_nic || net->nic_path == NIC_PATH_PCIE)
    {
      /* The most shared NIC bounds a GPU that uses only its own. */
      int most = 1;
      for (int n = 0; n < net->nics && n < SPEC_MAX_GPUS_PER_NODE; n++)
        most = MAX (most, net->gpus_on_nic[n]);
      double worst = own_nic_bandwidth (net) / most;
      rate = MIN (own_nic_bandwidth (net),
                  worst * net->gpus_per_node / active);
    }
  if (c->uplink_share > 0)
    rate = MIN (rate, net->uplink_fraction * node / (active * c->uplink_share));
  return rate;
}

double
net_static_time (const NetModel *net, const CollCost *c, int active)
{
  if (active <= 0)
    active = net->gpus_per_node;
  return net_cost_time (c, c->nic_bytes > 0 ? net_static_rate (net, c, active)
                                            : 1);
}

CollCost
net_collective_cost (const NetModel *net, CollKind kind, double bytes,
                     GroupShape g, int algo, int active)
{
  g_assert (kind != COLL_SEND);
  CollCost best = { NET_ALGO_RING, NET_PROTO_SIMPLE, 0, 0, 0, 0, TRUE, FALSE,
                    g.per_node };
  if (g.size <= 1 || bytes <= 0)
    return best;
  if (algo < 0)
    switch (net->algorithm)
      {
      case ALGORITHM_RING: algo = NET_ALGO_RING; break;
      case ALGORITHM_TREE: algo = NET_ALGO_TREE; break;
      case ALGORITHM_HIERARCHICAL: algo = NET_ALGO_HIERARCHICAL; break;
      case ALGORITHM_NVLS: algo = NET_ALGO_NVLS; break;
      case ALGORITHM_NVLS_TREE: algo = NET_ALGO_NVLS_TREE; break;
      case ALGORITHM_COLLNET_DIRECT: algo = NET_ALGO_COLLNET_DIRECT; break;
      case ALGORITHM_COLLNET_CHAIN: algo = NET_ALGO_COLLNET_CHAIN; break;
      case ALGORITHM_AUTO:
      case ALGORITHM_N:
      default: break;
      }
  /* The tuner: every applicable algorithm (or the forced one) and
   * protocol, costed at the static NIC share; the fastest wins, ties to
   * the earlier. The hierarchical one is NCCL's CollNet-like split, not
   * in NCCL's default choice: it runs only when asked for. */
  double best_t = INFINITY;
  gboolean found = FALSE;
  for (int a = 0; a < NET_ALGO_N; a++)
    {
      if (algo >= 0 ? a != algo && !(a == NET_ALGO_DIRECT && kind == COLL_ALL_TO_ALL)
          : a == NET_ALGO_HIERARCHICAL)
        continue;
      for (int p = 0; p < NET_PROTO_N; p++)
        {
          CollCost c;
          if (!algo_cost (net, kind, bytes, g, a, p, &c))
            continue;
          double t = net_static_time (net, &c, active);
          if (!found || t < best_t)
            {
              found = TRUE;
              best_t = t;
              best = c;
            }
        }
    }
  if (!found)
    /* A forced algorithm that does not apply (tree for reduce-scatter):
     * NCCL runs its ring, and so does this. */
    return net_collective_cost (net, kind, bytes, g, NET_ALGO_RING, active);
  return best;
}

double
net_collective_time (const NetModel *net, CollKind kind, double bytes,
                     GroupShape group)
{
  CollCost c = net_collective_cost (net, kind, bytes, group, -1, 0);
  return net_static_time (net, &c, 0);
}

CollCost
net_send_cost (const NetModel *net, double bytes, int rank_a, int rank_b)
{
  CollCost c = { NET_ALGO_DIRECT, NET_PROTO_SIMPLE, 0, 0, 0, 0, TRUE, TRUE, 1 };
  if (bytes <= 0)
    return c;
  int gpn = net->gpus_per_node;
  if (rank_a / gpn == rank_b / gpn)
    {
      c.latency_s = net->intra_latency;
      c.intra_s = bytes / net->intra_bandwidth;
      return c;
    }
  g_assert (net->has_network);
  c.latency_s = net->inter_latency;
  c.nic_bytes = bytes;
  c.uplink_share = group_of (net, rank_a / gpn) != group_of (net, rank_b / gpn)
                   ? 1 : 0;
  return c;
}

double
net_benchmark_time (const NetModel *net, CollKind kind, double bytes, int gpus,
                    int per_node, CollCost *cost)
{
  if (kind == COLL_SEND)
    {
      int nodes = gpus / per_node;
      /* Across nodes, the last rank of each node sends to the first of
       * the next: one GPU a node crosses. */
      *cost = net_send_cost (net, bytes, per_node - 1,
                             nodes > 1 ? net->gpus_per_node : 0);
      return net_static_time (net, cost, 1);
    }
  GroupShape group = { gpus, per_node };
  *cost = net_collective_cost (net, kind, bytes, group, -1, per_node);
  return net_static_time (net, cost, per_node);
}

double
net_bus_bandwidth (CollKind kind, double bytes, int size, double seconds)
{
  if (seconds <= 0)
    return 0;
  double algbw = bytes / seconds;
  double frac = size > 1 ? (double) (size - 1) / size : 0;
  switch (kind)
    {
    case COLL_ALL_REDUCE:
      return algbw * 2 * frac;
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_GATHER:
    case COLL_ALL_TO_ALL:
      return algbw * frac;
    case COLL_SEND:
    case COLL_N:
    default:
      return algbw;
    }
}

const char *
net_algo_name (NetAlgo algo)
{
  static const char *const names[NET_ALGO_N] = {
    "ring", "tree", "hierarchical", "direct", "nvls", "nvls_tree",
    "collnet_direct", "collnet_chain",
  };
  return names[algo];
}

const char *
net_proto_name (NetProto proto)
{
  static const char *const names[NET_PROTO_N] = { "LL", "LL128", "Simple" };
  return names[proto];
}
