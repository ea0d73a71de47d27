/* net.c: link calibration and collective algorithms; see net.h. */
#include "net/net.h"

/* ---- link calibration: one row per link kind ---------------------------
 * efficiency: the fraction of the line rate a large collective reaches.
 * latency: a default per ring step when the topology gives none.
 * Sources:
 *  nvswitch/nvlink: 8 x A100 all-reduce bus bandwidth measured at 230-233
 *    GB/s by nccl-tests against 300 GB/s NVLink3 per direction (DESIGN.md
 *    section 4): 230 / 300 = 0.77; NCCL's tuning.cc NVLink hop latency is
 *    0.6 us (LL) to 3.4 us (Simple): 2 us is between.
 *  pcie: Gen4 x16, 25 GB/s nominal, ~21 GB/s measured by bandwidthTest.
 *  infiniband-hdr/ndr: multi-node all-reduce bus bandwidth about 24 GB/s
 *    per 200 Gb/s NIC (DESIGN.md section 4): 24 / 25 = 0.96; a network
 *    step costs 2.7-14 us by protocol (NCCL tuning.cc): 5 us.
 *  slingshot-11: the same 200 Gb/s line rate; its differences are fabric,
 *    latency and contention (DESIGN.md section 4), so the same efficiency.
 *  roce, omni-path: assumed equal to HDR until measured. */
typedef struct {
  double efficiency;
  double latency_s;
} LinkCalibration;

static const LinkCalibration link_calibration[LINK_N] = {
  [LINK_NVSWITCH]       = { 0.77, 2e-6 },
  [LINK_NVLINK]         = { 0.77, 2e-6 },
  [LINK_PCIE]           = { 0.84, 2e-6 },
  [LINK_INFINIBAND_HDR] = { 0.96, 5e-6 },
  [LINK_INFINIBAND_NDR] = { 0.96, 5e-6 },
  [LINK_SLINGSHOT_11]   = { 0.96, 3e-6 },
  [LINK_ROCE]           = { 0.96, 5e-6 },
  [LINK_OMNI_PATH]      = { 0.96, 5e-6 },
};

void
net_model_init (NetModel *net, const TopologySpec *t)
{
  const LinkCalibration *intra = &link_calibration[t->intra_node.link];
  net->gpus_per_node = t->gpus_per_node;
  net->intra_bandwidth = t->intra_node.bandwidth * intra->efficiency;
  net->intra_latency = t->intra_node.latency > 0 ? t->intra_node.latency
                                                 : intra->latency_s;
  net->has_network = t->inter_node.nics_per_node > 0;
  if (net->has_network)
    {
      const LinkCalibration *inter = &link_calibration[t->inter_node.link];
      /* Every GPU of a node talks across nodes at once in the symmetric
       * plans simulated here, so each gets an equal share of the NICs. A
       * fabric taper scales what crosses the core. */
      net->nic_share = t->inter_node.nics_per_node * t->inter_node.nic_bandwidth
                       * inter->efficiency * t->inter_node.fabric.taper
                       / t->gpus_per_node;
      net->inter_latency = t->inter_node.latency > 0 ? t->inter_node.latency
                                                     : inter->latency_s;
    }
}

GroupShape
net_group_shape (const NetModel *net, int first, int count, int stride)
{
  GroupShape g = { count, count };
  int64_t gpn = net->gpus_per_node;
  int in_node = 0;
  int64_t node = (int64_t) first / gpn;
  for (int i = 0; i < count; i++)
    {
      int64_t n = ((int64_t) first + (int64_t) i * stride) / gpn;
      if (n != node)
        {
          g.per_node = MIN (g.per_node, in_node);
          node = n;
          in_node = 0;
        }
      in_node++;
    }
  g.per_node = MIN (g.per_node, in_node);
  return g;
}

/* A ring of p ranks over one kind of link: steps of latency, and the
 * fraction of the buffer each rank moves. */
static double
ring_time (CollKind kind, double bytes, int p, double bandwidth,
           double latency)
{
  if (p <= 1)
    return 0;
  double frac = (double) (p - 1) / p;
  switch (kind)
    {
    case COLL_ALL_REDUCE:
      return 2 * (p - 1) * latency + 2 * frac * bytes / bandwidth;
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_GATHER:
      return (p - 1) * latency + frac * bytes / bandwidth;
    case COLL_SEND:
    case COLL_N:
    default:
      g_assert_not_reached ();
    }
}

double
net_collective_time (const NetModel *net, CollKind kind, double bytes,
                     GroupShape g)
{
  g_assert (kind != COLL_SEND);
  if (g.size <= 1 || bytes <= 0)
    return 0;
  int local = MIN (g.per_node, g.size);
  int nodes = (g.size + local - 1) / local;
  double t = 0;
  if (local > 1)
    /* Inside the node: all-reduce is reduce-scatter then all-gather; for
     * reduce-scatter and all-gather alone, one of the two. */
    t += ring_time (kind, bytes, local, net->intra_bandwidth,
                    net->intra_latency);
  if (nodes > 1)
    {
      g_assert (net->has_network);
      t += ring_time (kind, bytes / local, nodes, net->nic_share,
                      net->inter_latency);
    }
  return t;
}

double
net_send_time (const NetModel *net, double bytes, int rank_a, int rank_b)
{
  if (bytes <= 0)
    return 0;
  if (rank_a / net->gpus_per_node == rank_b / net->gpus_per_node)
    return net->intra_latency + bytes / net->intra_bandwidth;
  g_assert (net->has_network);
  return net->inter_latency + bytes / net->nic_share;
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
      return algbw * frac;
    case COLL_SEND:
    case COLL_N:
    default:
      return algbw;
    }
}
