/* energy.h: the energy of a training run, from where a step's time goes
 * (result.h's breakdown on the critical rank) and what a GPU draws doing
 * each (config's energy: section). */
#pragma once

#include "config/spec.h"
#include "parallel/result.h"

/* A GPU's mean power over a step, in watts: compute and the optimizer at
 * gpu_compute_w; exposed TP, PP and DP communication, the epilogue's
 * collectives and offload at gpu_communication_w; the bubble and the host-bound time at gpu_idle_w.
 * The critical rank stands for all: the others wait for it, idle. */
double energy_gpu_step_w (const Breakdown *b, double step_s,
                          const EnergySpec *e);

/* Joules from the grid for SECONDS of GPUS GPUs in NODES nodes, each GPU
 * at GPU_W, each node at its node_w, times the PUE. */
double energy_joules (const EnergySpec *e, int gpus, int nodes, double gpu_w,
                      double seconds);
