/* sim-comm.c: the builder's process groups and the flows its
 * communication puts on the NICs, uplinks and PCIe links: which ranks a
 * group holds and its shape on the nodes, each node's resources in the
 * flow net, and the Comm of a collective or a send; see sim-private.h. */
#include "parallel/sim-private.h"

/* ---- groups ----------------------------------------------------------------- */

/* The ranks of a group of kind g in the job. */
int
sim_group_size (const Sim *sim, Group g)
{
  const Plan *p = sim->plan;
  switch (g)
    {
    case GROUP_TP: return p->tp;
    case GROUP_DP: return p->dp;
    case GROUP_MODEL: return p->tp * p->pp;
    case GROUP_WORLD: return p->gpus;
    case GROUP_PIPE: return p->pp;
    case GROUP_EMBEDDING: return MIN (p->pp, 2);
    case GROUP_STAGE: return p->tp * p->dp;
    case GROUP_N:
    default: g_assert_not_reached ();
    }
}

int
sim_group_members (const Sim *sim, Group g)
{
  if (sim->options->full)
    return sim_group_size (sim, g);
  /* One rank for each stage. */
  return g == GROUP_TP || g == GROUP_DP || g == GROUP_STAGE ? 1
         : g == GROUP_EMBEDDING ? sim_group_size (sim, g) : sim->plan->pp;
}

/* The groups of kind g that have other simulated members (in symmetric
 * mode, the one of the representatives: replica 0, tp rank 0). */
int
sim_group_count (const Sim *sim, Group g)
{
  const Plan *p = sim->plan;
  if (sim_group_members (sim, g) <= 1)
    return 0;
  if (!sim->options->full)
    return 1;
  switch (g)
    {
    case GROUP_TP: return p->pp * p->dp;
    case GROUP_DP: return p->pp * p->tp;
    case GROUP_MODEL: return p->dp;
    case GROUP_WORLD: return 1;
    case GROUP_PIPE:
    case GROUP_EMBEDDING: return p->dp * p->tp;
    case GROUP_STAGE: return p->pp;
    case GROUP_N:
    default: g_assert_not_reached ();
    }
}

/* Which of them rank (stage, replica, tp_rank) is in. */
int
sim_group_index (const Sim *sim, Group g, int stage, int replica, int tp_rank)
{
  const Plan *p = sim->plan;
  switch (g)
    {
    case GROUP_TP: return stage * p->dp + replica;
    case GROUP_DP: return stage * p->tp + tp_rank;
    case GROUP_MODEL: return replica;
    case GROUP_WORLD: return 0;
    case GROUP_PIPE:
    case GROUP_EMBEDDING: return replica * p->tp + tp_rank;
    case GROUP_STAGE: return stage;
    case GROUP_N:
    default: g_assert_not_reached ();
    }
}

/* The DP group of a stage's representative rank: it starts at the stage's
 * first rank (both modes use it, so they cost collectives alike). */
static GroupShape
dp_shape (const Sim *sim, int stage)
{
  const Plan *p = sim->plan;
  return net_group_shape (&sim->net, stage * p->dp * p->tp, p->dp, p->tp);
}

/* The shape of STAGE's group of kind g (but the embedding's, whose
 * exchange is a send), taken from its first replica and tp rank in both
 * modes so that they cost collectives alike. A model-parallel group is a
 * pipe group's stages with the tp ranks of each, tp apart in a node. */
GroupShape
sim_group_shape (const Sim *sim, Group g, int stage)
{
  const Plan *p = sim->plan;
  int gpn = sim->net.gpus_per_node;
  GroupShape pipe = net_group_shape (&sim->net, 0, p->pp, p->dp * p->tp);
  switch (g)
    {
    case GROUP_TP: return net_group_shape (&sim->net, 0, p->tp, 1);
    case GROUP_DP: return dp_shape (sim, stage);
    case GROUP_MODEL:
      return (GroupShape) { p->tp * p->pp,
                            MIN (MIN (gpn, p->tp * pipe.per_node), p->tp * p->pp) };
    case GROUP_WORLD: return (GroupShape) { p->gpus, MIN (gpn, p->gpus) };
    case GROUP_PIPE: return pipe;
    case GROUP_STAGE:
      return net_group_shape (&sim->net, stage * p->dp * p->tp, p->dp * p->tp, 1);
    case GROUP_EMBEDDING:
    case GROUP_N:
    default: g_assert_not_reached ();
    }
}

/* ---- communication over the NICs -------------------------------------------- */

void
sim_add_use (GArray *uses, guint first, uint32_t resource, double coef)
{
  for (guint i = first; i < uses->len; i++)
    {
      FlowUse *u = &g_array_index (uses, FlowUse, i);
      if (u->resource == resource)
        {
          u->coef += coef;
          return;
        }
    }
  FlowUse u = { resource, coef };
  g_array_append_val (uses, u);
}

/* The first of NODE's resources in the flow net, added on first use:
 * each NIC's send and receive sides, then the uplinks into the fabric,
 * out and in; with offload, each PCIe switch's link to the host, towards
 * the host and towards the GPUs, then each GPU's own link, out and in. */
uint32_t
sim_node_resources (Sim *sim, int node)
{
  gpointer found = g_hash_table_lookup (sim->node_resources,
                                        GINT_TO_POINTER (node));
  if (found != NULL)
    return (uint32_t) (GPOINTER_TO_UINT (found) - 1);
  const NetModel *net = &sim->net;
  double pcie = sim->plan->spec->topology.host.pcie_bandwidth;
  uint32_t first = UINT32_MAX;
  for (int k = 0; k < sim->resources_per_node; k++)
    {
      /* Ids come one after another: the node's are first + k. */
      uint32_t id = flow_net_add_resource (sim->flows,
        k >= sim->pcie_base ? pcie
        : k < 2 * net->nics ? net->nic_bandwidth
        : net->uplink_fraction * net->nics * net->nic_bandwidth);
      if (k == 0)
        first = id;
      uint32_t none = NONE;
      g_array_append_val (sim->use_at, none);
      g_assert (sim->use_at->len == id + 1);
    }
  g_hash_table_insert (sim->node_resources, GINT_TO_POINTER (node),
                       GUINT_TO_POINTER (first + 1));
  return first;
}

/* The PCIe link of GPU g of the node at BASE, in the direction out of
 * the GPU (out) or into it. */
uint32_t
sim_gpu_link (const Sim *sim, uint32_t base, int g, gboolean out)
{
  return base + (uint32_t) (sim->gpu_link_base + 2 * g + (out ? 0 : 1));
}

/* The GPU whose PCIe link NIC n's traffic crosses when it comes over
 * NVLink from elsewhere in the node: the first GPU next to that NIC. */
static int
gpu_of_nic (const NetModel *net, int n)
{
  for (int g = 0; g < net->gpus_per_node; g++)
    if (net->nics >= net->gpus_per_node
        ? g == n * net->gpus_per_node / net->nics : net->nic_of_gpu[g] == n)
      return g;
  g_assert_not_reached ();
}

/* What GPU `rank` loads, k times its NIC bytes of cost c, when they leave
 * (out) or arrive (!out): its node's NICs, all of them evenly over NVLink
 * or its own over PCIe (and always its own for point-to-point and
 * all-to-all), and the node's uplink for the share that leaves its
 * fabric group. With offload, the PCIe link between each NIC and its GPU
 * too (GPUDirect RDMA), which the host copies share. */
static void
add_gpu_uses (Sim *sim, GArray *uses, guint first, int rank, const CollCost *c,
              gboolean out, double k)
{
  const NetModel *net = &sim->net;
  int gpn = net->gpus_per_node, nics = net->nics, g = rank % gpn;
  uint32_t base = sim_node_resources (sim, rank / gpn);
  uint32_t side = out ? 0 : (uint32_t) nics;
  gboolean links = sim->gpu_link_base >= 0;
  if (!c->own_nic && net->nic_path == NIC_PATH_NVLINK)
    for (int n = 0; n < nics; n++)
      {
        sim_add_use (uses, first, base + side + (uint32_t) n, k / nics);
        if (links)
          sim_add_use (uses, first,
                       sim_gpu_link (sim, base, gpu_of_nic (net, n), out),
                       k / nics);
      }
  else
    {
      if (nics >= gpn)
        {
          /* GPU g's own NICs: nics / gpn of them from g * nics / gpn. */
          int own = nics / gpn;
          for (int n = 0; n < own; n++)
            sim_add_use (uses, first, base + side + (uint32_t) (g * own + n),
                         k / own);
        }
      else
        sim_add_use (uses, first, base + side + (uint32_t) net->nic_of_gpu[g], k);
      if (links)
        sim_add_use (uses, first, sim_gpu_link (sim, base, g, out), k);
    }
  if (c->uplink_share > 0)
    sim_add_use (uses, first, base + sim_uplink (sim, out), k * c->uplink_share);
}

/* A Comm for cost c, for the GPUs ranks[0..n) sending (and receiving,
 * for a collective) and, for a send, peers[0..n) receiving; NONE when
 * nothing crosses a NIC. A send between GPUs of one node loads no NIC. */
uint32_t
sim_make_comm (Sim *sim, const CollCost *c, const int *ranks, const int *peers,
               const double *scale, int n)
{
  if (sim->flows == NULL || c->nic_bytes <= 0)
    return NONE;
  int gpn = sim->net.gpus_per_node;
  Comm comm = { *c, sim->uses->len, 0 };
  for (int i = 0; i < n; i++)
    {
      if (peers && ranks[i] / gpn == peers[i] / gpn)
        continue;
      double k = scale ? scale[i] : 1;
      add_gpu_uses (sim, sim->uses, comm.first, ranks[i], c, TRUE, k);
      add_gpu_uses (sim, sim->uses, comm.first, peers ? peers[i] : ranks[i], c,
                    FALSE, k);
    }
  comm.n = sim->uses->len - comm.first;
  if (comm.n == 0)
    return NONE;
  g_array_append_val (sim->comms, comm);
  return sim->comms->len - 1;
}

/* The ranks a representative of STAGE stands for in its first node (in
 * full mode, the rank itself); returns how many, written to out. */
int
sim_stage_ranks_in_node (const Sim *sim, int rank, int stage, int *out)
{
  const Plan *p = sim->plan;
  if (sim->options->full)
    {
      out[0] = rank;
      return 1;
    }
  int per_stage = p->dp * p->tp, gpn = sim->net.gpus_per_node;
  int first = stage * per_stage, n = 0;
  for (int r = first; r < first + per_stage && r / gpn == first / gpn; r++)
    out[n++] = r;
  return n;
}

/* The global rank of simulated rank `rank` (stage, replica, tp_rank). */
int
sim_global_rank (const Sim *sim, int stage, int replica, int tp_rank)
{
  const Plan *p = sim->plan;
  return (stage * p->dp + replica) * p->tp + tp_rank;
}
