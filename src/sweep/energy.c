/* energy.c: a run's energy (energy.h). */
#include "sweep/energy.h"

double
energy_gpu_step_w (const Breakdown *b, double step_s, const EnergySpec *e)
{
  double compute = b->compute + b->optimizer + b->variability;
  double comm = b->tp_comm + b->ep_comm + b->cp_comm + b->pp_comm + b->dp_comm
                + b->epilogue + b->offload;
  double idle = b->bubble + b->host;
  return (compute * e->gpu_compute_w + comm * e->gpu_communication_w
          + idle * e->gpu_idle_w) / step_s;
}

double
energy_joules (const EnergySpec *e, int gpus, int nodes, double gpu_w,
               double seconds)
{
  return (gpus * gpu_w + nodes * e->node_w) * seconds * e->pue;
}
