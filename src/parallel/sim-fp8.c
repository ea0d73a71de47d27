/* sim-fp8.c: training.precision: fp8 in the simulated step (graph/fp8.h):
 * the FP8 compute model the linear layers' GEMMs run at, and the
 * programs TransformerEngine adds around the layers: the weights' casts
 * before each chunk's first micro-batch (TE caches them for the others:
 * is_first_microbatch), and delayed scaling's update of the scaling
 * factors as a chunk's forward and its backward end, once per
 * micro-batch each (quantization.py reduce_and_update_fp8_tensors, from
 * autocast_exit in forward and from the first FP8 module's backward). */
#include "parallel/sim-private.h"

#include "graph/fp8.h"
#include "graph/moe.h"

void
sim_fp8_init (Sim *sim)
{
  const ExperimentSpec *e = sim->plan->spec;
  if (!e->training.fp8)
    return;
  compute_model_init (&sim->cm_fp8, &e->topology.gpu, &e->compute,
                      PRECISION_FP8);
  sim->ls.fp8 = &sim->cm_fp8;
  sim->ls.fp8_recipe = e->training.fp8_recipe;
}

/* A chunk's update over its layers (the plan's layers a chunk, which
 * stage_layers may vary; the update's bytes are a few hundred KB, its
 * time its launches). */
static Program
update_program (Sim *sim, gboolean backward)
{
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  fp8_scaling_update (&sim->ls, sim->plan->layers_per_chunk, backward, ops);
  return sim_program_from_ops (sim, ops);
}

void
sim_fp8_programs (Sim *sim)
{
  if (!fp8_enabled (&sim->ls))
    return;
  /* An MoE model's layers are MoE layers but for its dense ones
   * (sim-moe.c, sim_layer_is_dense). */
  sim->fp8_weights = sim_program_from_graph (
    sim, moe_layer (&sim->ls) ? moe_fp8_weight_casts : fp8_layer_weight_casts);
  if (sim->dense_fwd.pieces != NULL)
    sim->dense_fp8_weights = sim_program_from_graph (sim,
                                                     fp8_layer_weight_casts);
  for (int dir = 0; dir < 2; dir++)
    {
      sim->fp8_update[dir] = update_program (sim, dir == 1);
      if (sim->fp8_update[dir].pieces->len == 0)
        g_clear_pointer (&sim->fp8_update[dir].pieces, g_array_unref);
    }
}
