/* sim-prepare.c: a Sim's life around its build (sim-build.c): what
 * every rank will run, made once from the plan before any op is built
 * (the programs of a layer, the embedding and the head from the graph,
 * DeepSpeed's checkpointing programs, topology.variability's factors,
 * the settings the builder reads), and sim_clear, which frees what both
 * made. See sim-private.h. */
#include "parallel/sim-private.h"
#include "base/stats.h"
#include "config/framework.h"
#include "graph/cp.h"

/* DeepSpeed's activation checkpointing (begin_checkpoint) on the input
 * of each layer that full recompute checkpoints, of B bytes: the
 * partition (B/t) is cloned (read and written) and copied into the
 * contiguous buffer on the device (or to the host and back); before the
 * recompute, a zeroed buffer of B, the partition copied in, and the TP
 * all-gather of B (none at tp 1: a group of one moves nothing, and 0.9 on
 * skips the call). The copies on the device are HBM-bound kernels. */
static void
checkpoint_programs (Sim *sim)
{
  const Plan *plan = sim->plan;
  const ExperimentSpec *e = plan->spec;
  const ActivationCheckpointing *ac = &e->training.activation_checkpointing;
  if (sim->recompute != &sim->layer_fwd
      || !(ac->partition_activations || ac->cpu_checkpointing
           || ac->contiguous_memory_optimization
           || ac->synchronize_checkpoint_boundary))
    return;
  double whole = sim->cm.bytes_per_element * plan->micro_batch
                 * (double) e->model.seq_len * e->model.hidden;
  double part = ac->partition_activations ? whole / plan->tp : whole;
  gboolean partition = ac->partition_activations;
  gboolean on_gpu = !ac->cpu_checkpointing;
  const struct { gboolean save, on; GraphOp op; } ops[] = {
    { TRUE, partition, { GOP_COMPUTE, "partition_checkpoint",
                         compute_memory_op (2 * part, 0), 0, FALSE, 1 } },
    { TRUE, partition && on_gpu && ac->contiguous_memory_optimization,
      { GOP_COMPUTE, "contiguous_checkpoint", compute_memory_op (2 * part, 0),
        0, FALSE, 1 } },
    { FALSE, partition, { GOP_COMPUTE, "checkpoint_buffer",
                          compute_memory_op (whole, 0), 0, FALSE, 1 } },
    { FALSE, partition && on_gpu, { GOP_COMPUTE, "checkpoint_partition",
                                    compute_memory_op (2 * part, 0), 0, FALSE,
                                    1 } },
    { FALSE, partition && plan->tp > 1, { GOP_TP_ALL_GATHER,
                                          "gather_checkpoint", { 0 }, whole,
                                          FALSE, 1 } },
  };
  sim->ckpt = ac;
  sim->ckpt_bytes = part;
  g_autoptr (GArray) save = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  g_autoptr (GArray) load = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (ops[i].on)
      g_array_append_val (ops[i].save ? save : load, ops[i].op);
  sim->ckpt_save = sim_program_from_ops (sim, save);
  sim->ckpt_load = sim_program_from_ops (sim, load);
}

/* topology.variability's factors (sim.h). Full mode's slow nodes are
 * drawn from the seed, a partial Fisher-Yates over the job's nodes. */
static void
variability_init (Sim *sim)
{
  const Plan *plan = sim->plan;
  const TopologySpec *t = &plan->spec->topology;
  const VariabilitySpec *v = &t->variability;
  int64_t gpn = MIN (t->gpus_per_node, plan->gpus);
  int64_t nodes = plan->gpus / gpn, slow = v->slow_nodes;
  double x = 1 + v->slow_node_slowdown, s = v->gpu_speed_spread;
  sim->gpu_factor = 1;
  sim->rank_factor = NULL;
  sim->jitter = v->jitter;
  sim->seed = (guint64) v->seed;
  if (!sim->options->full)
    {
      sim->gpu_factor = spec_slowest_expected (v, plan->gpus, t->gpus_per_node)
                        * stats_expected_slowest (plan->tp, v->jitter);
      return;
    }
  if (s == 0 && (slow == 0 || x == 1))
    return;
  sim->rank_factor = g_new (double, (gsize) plan->gpus);
  for (int r = 0; r < plan->gpus; r++)
    sim->rank_factor[r] = stats_factor_of (stats_key (2 * sim->seed, (guint64) r), s);
  g_autofree int *order = g_new (int, (gsize) nodes);
  g_autoptr (GRand) rng = g_rand_new_with_seed ((guint32) v->seed);
  for (int i = 0; i < nodes; i++)
    order[i] = i;
  for (int i = 0; i < slow; i++)
    {
      int j = g_rand_int_range (rng, i, (gint32) nodes);
      int node = order[j];
      order[j] = order[i], order[i] = node;
      for (int64_t g = 0; g < gpn; g++)
        sim->rank_factor[node * gpn + g] *= x;
    }
}

void
sim_prepare (Sim *sim)
{
  const Plan *plan = sim->plan;
  const SimOptions *options = sim->options;
  const ExperimentSpec *e = plan->spec;
  sim->engine = sim_engine_new ();
  compute_model_init (&sim->cm, &e->topology.gpu, &e->compute,
                      e->training.precision);
  /* The flat MFU model has no host; a topology may say what its host's
   * issuing costs. */
  sim->host_launch = sim_ticks (sim, sim->cm.host_launch_s > 0
                                 && e->topology.host.kernel_launch_s > 0
                                 ? e->topology.host.kernel_launch_s
                                 : sim->cm.host_launch_s, "kernel_launch");
  net_model_init (&sim->net, &e->topology, e->collectives.algorithm);
  transformer_layer_shape (&sim->ls, &e->model, plan->tp, plan->micro_batch,
                           e->parallel.sequence_parallel,
                           e->training.attention, &sim->cm);
  sim_fp8_init (sim);
  cp_layer_shape (&sim->ls, plan->cp, e->parallel.cp_kind);
  sim->ls.tp_overlap = e->parallel.tp_overlap;
  sim->ls.tp_comm_overlap = e->parallel.tp_comm_overlap;
  sim->ls.grad_accumulation = e->parallel.grad_accumulation;
  sim->ls.cross_entropy = e->framework->cross_entropy;
  sim->ls.train_metrics = e->framework->train_metrics;
  sim->ls.mpt_attention = e->framework->mpt_attention;
  sim->ls.layer_sync = e->framework->layer_sync;
  sim->ls.fp16 = e->training.precision == PRECISION_FP16;
  sim->ls.fused_softmax = framework_fused_softmax (
    e->framework, e->training.precision,
    (int64_t) plan->micro_batch * e->model.heads / plan->tp, e->model.seq_len);
  sim->layer_params = transformer_layer_params (&sim->ls);
  sim->layer_weights = transformer_layer_weights (&sim->ls);
  sim->grad_bytes = spec_precision_bytes (e->parallel.grad_reduce_precision);
  sim->emb_params = transformer_embedding_params (&sim->ls);
  /* The last stage holds the output layer's weight: its own, or with
   * pp > 1 its copy of the tied word embedding (Megatron's shared
   * embedding). */
  sim->head_params = transformer_head_params (&sim->ls)
    + transformer_output_params (&sim->ls, plan->pp);
  sim->layer_fwd = sim_program_from_graph (sim, transformer_layer_forward);
  sim->layer_bwd = sim_program_from_graph (sim, transformer_layer_backward);
  sim->layer_bwd_acc = sim_program_from_graph (
    sim, transformer_layer_backward_accumulating);
  sim->attn_fwd = sim_program_from_graph (sim, transformer_attention_core_forward);
  sim->recompute = e->training.recompute == RECOMPUTE_FULL ? &sim->layer_fwd
                  : e->training.recompute == RECOMPUTE_SELECTIVE ? &sim->attn_fwd
                  : NULL;
  sim_moe_programs (sim);
  sim_fp8_programs (sim);
  checkpoint_programs (sim);
  sim->emb_fwd = sim_program_from_graph (sim, transformer_embedding_forward);
  sim->emb_bwd = sim_program_from_graph (sim, transformer_embedding_backward);
  sim->emb_bwd_acc = sim_program_from_graph (
    sim, transformer_embedding_backward_accumulating);
  sim->head_fwd = sim_program_from_graph (sim, transformer_head_forward);
  sim->head_bwd = sim_program_from_graph (sim, transformer_head_backward);
  sim->head_bwd_acc = sim_program_from_graph (
    sim, transformer_head_backward_accumulating);

  /* Pipeline transfers: Megatron's scatter/gather optimisation sends 1/t
   * of the activations from each TP rank and all-gathers them over
   * NVLink on arrival (with sequence parallelism they are split already). */
  sim->pp_bytes = sim->cm.bytes_per_element * plan->micro_batch
                 * (double) e->model.seq_len * e->model.hidden / plan->tp;
  if (plan->tp > 1 && !sim->ls.sequence_parallel)
    sim->pp_gather = sim_ticks (sim, net_collective_time (
      &sim->net, COLL_ALL_GATHER, sim->pp_bytes * plan->tp,
      net_group_shape (&sim->net, 0, plan->tp, 1)), "gather_activations");

  sim->fuse_tp = !options->full && options->trace == NULL;
  if (sim->fuse_tp)
    sim->fused = g_array_new (FALSE, FALSE, sizeof (FusedParts));
  if (options->trace != NULL)
    sim->op_info = g_array_new (FALSE, FALSE, sizeof (OpInfo));
  sim->ranks = options->full ? plan->gpus : plan->pp;
  variability_init (sim);
  /* A ZeRO stage with one replica partitions nothing: it runs as DP. */
  sim->zero3 = e->zero.stage == 3 && plan->dp > 1;
  sim->param_prefetch = e->parallel.param_gather_overlap
                        && e->zero.stage == 1 && plan->dp > 1;
  sim->epilogue = framework_epilogue (e->framework, plan->pp, e->zero.stage);
  sim->offload = e->zero.offload;
  /* --overlap-param-gather with model chunks gathers each chunk's
   * modules in its first forward, an item up to m v items into the stage's
   * schedule, once the module two before is done (sim-build.c,
   * begin_module): such a gather waits for nothing the few items built
   * ahead begin, so the whole step is built, as with offload. */
  sim->window = sim->options->full && sim->offload == OFFLOAD_NONE
                && !(sim->param_prefetch && plan->virtual_stages > 1)
                ? SIM_WINDOW : G_MAXINT;
  sim->gpu_link_base = -1;
  sim->zero3_per_tensor = sim->zero3 && e->framework->zero3_per_tensor;
  sim->zero_allreduce = e->zero.stage >= 2 && e->framework->zero_allreduce;
  sim->grads_each = sim->zero3
    || (e->zero.stage == 2 && e->framework->zero2_every_micro_batch
        && (plan->dp > 1 || sim->offload != OFFLOAD_NONE));
}

void
sim_clear (Sim *sim)
{
  for (int g = 0; g < GROUP_N; g++)
    {
      for (int i = 0; sim->colls_of[g] != NULL && i < sim->groups_of[g]; i++)
        g_array_unref (sim->colls_of[g][i].ids);
      g_free (sim->colls_of[g]);
    }
  g_free (sim->first_op);
  g_free (sim->send_op);
  for (int s = 0; sim->stage_items != NULL && s < sim->plan->pp; s++)
    g_array_unref (sim->stage_items[s]);
  g_free (sim->stage_items);
  g_free (sim->builds);
  g_free (sim->trigger);
  g_free (sim->offload_tail);
  g_clear_pointer (&sim->free_colls, g_hash_table_unref);
  g_free (sim->pp_comm);
  g_free (sim->pp_dur);
  flow_net_free (sim->flows);
  g_clear_pointer (&sim->node_resources, g_hash_table_unref);
  g_free (sim->streams);
  g_free (sim->breakdown);
  g_free (sim->dp_traffic);
  g_free (sim->rank_factor);
  sim_store_clear (&sim->ops);
  sim_store_clear (&sim->edges);
  GArray **arrays[] = { &sim->colls, &sim->members,
                        &sim->comms, &sim->uses, &sim->coll_uses,
                        &sim->use_at, &sim->layer_fwd.pieces,
                        &sim->layer_bwd.pieces, &sim->layer_bwd_acc.pieces,
                        &sim->dense_fwd.pieces,
                        &sim->dense_bwd.pieces, &sim->dense_bwd_acc.pieces,
                        &sim->attn_fwd.pieces, &sim->ckpt_save.pieces,
                        &sim->ckpt_load.pieces, &sim->fp8_weights.pieces,
                        &sim->dense_fp8_weights.pieces,
                        &sim->fp8_update[0].pieces, &sim->fp8_update[1].pieces,
                        &sim->emb_fwd.pieces, &sim->emb_bwd.pieces,
                        &sim->emb_bwd_acc.pieces, &sim->head_fwd.pieces,
                        &sim->head_bwd.pieces, &sim->head_bwd_acc.pieces,
                        &sim->fused, &sim->op_info };
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    g_clear_pointer (arrays[i], g_array_unref);
  sim_engine_free (sim->engine);
}
