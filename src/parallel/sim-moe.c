/* sim-moe.c: a mixture of experts in the simulated step: the MoE layer's
 * programs (graph/moe.h) in place of the dense layer's, and its
 * all-to-alls over the expert-parallel group.
 *
 * The EP group: Megatron-Core orders the expert ranks etp fastest, then
 * ep, then expert-dp (megatron/core/parallel_state.py, RankGenerator
 * order "tp-ep-dp-pp" for experts, core_r0.10.0), so an EP group is ep
 * ranks etp apart; DeepSpeed-MoE carves it out of the data-parallel ranks
 * (deepspeed/utils/groups.py, _create_expert_and_data_parallel, v0.9.5),
 * which are tp apart. As net/ models an all-to-all, each rank sends
 * (n - 1)/n of its buffer, over NVLink within a node, through its own
 * NIC and the fabric between nodes. A group inside a node is timed at
 * NVLink's static share and fused with the kernels around it; one that
 * spans nodes is an op of its own whose NIC bytes run as a flow
 * (sim_moe_comm) on the NICs and uplinks the DP and pipeline traffic
 * also load, so that they contend and more NICs a node speed it up. */
#include "parallel/sim-private.h"

#include "config/framework.h"
#include "graph/moe.h"

/* The EP group's shape on the nodes. */
static GroupShape
ep_shape (const Sim *sim)
{
  const ExperimentSpec *e = sim->plan->spec;
  int stride = e->framework->deepspeed_moe ? sim->plan->tp : sim->ls.etp;
  return net_group_shape (&sim->net, 0, MAX (e->parallel.ep, 1), stride);
}

double
sim_moe_all_to_all_time (const Sim *sim, double bytes)
{
  if (sim->plan->spec->parallel.ep <= 1)
    return 0;
  return net_collective_time (&sim->net, COLL_ALL_TO_ALL, bytes, ep_shape (sim));
}

double
sim_moe_counts_time (const Sim *sim, double bytes)
{
  /* The group is etp x ep consecutive expert ranks (the order above). */
  int n = sim->ls.etp * sim->ls.ep;
  return net_collective_time (&sim->net, COLL_ALL_GATHER, bytes,
                              net_group_shape (&sim->net, 0, n, 1));
}

uint32_t
sim_moe_comm (Sim *sim, int global, int stage, double bytes)
{
  CollCost c = net_collective_cost (&sim->net, COLL_ALL_TO_ALL, bytes,
                                    ep_shape (sim), -1, 0);
  int ranks[SPEC_MAX_GPUS_PER_NODE];
  int n = sim_stage_ranks_in_node (sim, global, stage, ranks);
  return sim_make_comm (sim, &c, ranks, NULL, NULL, n);
}

static void
replace (Sim *sim, Program *prog, void (*emit) (const LayerShape *, GArray *))
{
  g_clear_pointer (&prog->pieces, g_array_unref);
  *prog = sim_program_from_graph (sim, emit);
}

void
sim_moe_programs (Sim *sim)
{
  const ExperimentSpec *e = sim->plan->spec;
  if (e->model.experts == 0)
    return;
  sim->ls.ep = MAX (e->parallel.ep, 1);
  sim->ls.etp = MAX (e->parallel.etp, 1);
  sim->ls.imbalance = MAX (e->training.moe_imbalance, 1);
  sim->ls.shared_overlap = e->parallel.moe_shared_expert_overlap;
  sim->ls.gshard = e->framework->deepspeed_moe;
  GroupShape g = ep_shape (sim);
  sim->ep_flows = sim->net.has_network && g.size > g.per_node;
  /* The dense layers a model puts first (model.dense_layers) or between
   * its MoE layers (moe_layer_frequency) keep the dense layer's programs,
   * as Megatron-Core builds them (TransformerLayer with an MLP where
   * moe_layer_freq's pattern has 0: gpt_layer_specs.py
   * get_gpt_decoder_block_spec, core_r0.10.0); the layer_attn half and
   * the selective recompute are the same for both. */
  if (spec_moe_layers (&e->model) < e->model.layers)
    {
      sim->dense_fwd = sim->layer_fwd;
      sim->dense_bwd = sim->layer_bwd;
      sim->dense_bwd_acc = sim->layer_bwd_acc;
      sim->dense_params = sim->layer_params;
      sim->dense_weights = sim->layer_weights;
      sim->layer_fwd.pieces = NULL;
      sim->layer_bwd.pieces = sim->layer_bwd_acc.pieces = NULL;
    }
  replace (sim, &sim->layer_fwd, moe_layer_forward);
  replace (sim, &sim->layer_bwd, moe_layer_backward);
  replace (sim, &sim->layer_bwd_acc, moe_layer_backward_accumulating);
  sim->layer_params = moe_layer_dense_params (&sim->ls)
                      + moe_layer_expert_params (&sim->ls);
  sim->layer_weights = sim->layer_params;
}

gboolean
sim_layer_is_dense (const Sim *sim, int stage, int chunk, int l)
{
  if (sim->dense_fwd.pieces == NULL)
    return FALSE;
  return !spec_layer_is_moe (&sim->plan->spec->model,
                             plan_chunk_first_layer (sim->plan, stage, chunk) + l);
}
