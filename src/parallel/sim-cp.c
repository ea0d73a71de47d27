/* sim-cp.c: context parallelism's transfers in the simulated step.
 *
 * The CP group: Megatron-Core orders ranks tp fastest, then cp, then
 * (ep,) dp, then pp (megatron/core/parallel_state.py, RankGenerator
 * order "tp-cp-ep-dp-pp", core_r0.10.0), so a CP group is cp ranks tp
 * apart; the simulator lays ranks out as (stage, replica, tp_rank) with
 * a stage's dp x cp replicas (plan.h), cp consecutive replicas a
 * sequence's. Every CP group of a node transfers at once, so a transfer
 * is costed at the static share of the node's links, as the TP
 * collectives are. */
#include "parallel/sim-private.h"

double
sim_cp_comm_time (const Sim *sim, const GraphOp *g)
{
  const Plan *p = sim->plan;
  const NetModel *net = &sim->net;
  if (p->cp <= 1)
    return 0;
  if (g->kind == GOP_CP_ALL_TO_ALL)
    return net_collective_time (net, COLL_ALL_TO_ALL, g->comm_bytes,
                                net_group_shape (net, 0, p->cp, p->tp));
  g_assert (g->kind == GOP_CP_SEND_RECV);
  /* Each rank sends to the next of the ring and receives from the
   * previous at once (TransformerEngine's batched isend and irecv): the
   * slowest hop sets the step. A ring of more GPUs than a node crosses
   * between nodes, where a node's tp GPUs (one per TP rank's ring) send
   * out at once; inside a node the hop is NVLink. */
  int gpn = net->gpus_per_node, span = p->cp * p->tp;
  int from = span > gpn && p->tp < gpn ? gpn - p->tp : 0;
  CollCost c = net_send_cost (net, g->comm_bytes, from, from + p->tp);
  return net_static_time (net, &c, span > gpn ? MIN (p->tp, gpn) : 0);
}
