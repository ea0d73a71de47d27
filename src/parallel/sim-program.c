/* sim-program.c: the builder's programs: a layer's (or the embedding's,
 * the head's) graph ops as pieces, kernels and TP, CP and EP
 * communication timed, with the host's time to issue them; see
 * sim-private.h. */
#include "parallel/sim-private.h"

/* No op may last longer than this: a step of days means an input such as
 * compute.mfu: 1e-9 or a 1 b/s link, and int64 picoseconds would overflow
 * on the way to the end of the run. */
#define MAX_OP_SECONDS (24 * 3600.0)

/* Seconds to ticks of the op WHAT, noting the longest op that no sane
 * plan has. */
SimTime
sim_ticks (Sim *sim, double seconds, const char *what)
{
  if (!(seconds <= MAX_OP_SECONDS))
    {
      if (!(seconds <= sim->absurd))
        {
          sim->absurd = isnan (seconds) ? INFINITY : seconds;
          sim->absurd_what = what;
        }
      return 0;
    }
  return sim_time_from_s (seconds);
}

/* ---- pieces ---------------------------------------------------------------- */

/* A graph op's piece: a kernel, or a TP collective over the TP group. */
static Piece
piece_of (Sim *sim, const GraphOp *g)
{
  Piece p = { OPK_COMPUTE, 0, g->launches, g->name, .syncs = g->syncs };
  if (g->kind == GOP_COMPUTE)
    {
      p.dur = sim_ticks (sim, compute_kernel_time (g->cm ? g->cm : &sim->cm,
                                               &g->kernel), g->name);
      return p;
    }
  if (g->kind == GOP_CP_SEND_RECV || g->kind == GOP_CP_ALL_TO_ALL)
    {
      /* Its own kind, the breakdown's CP part; no group's barrier: each
       * rank's transfer is costed at the links' static share. */
      p.kind = OPK_CP;
      p.dur = sim_ticks (sim, sim_cp_comm_time (sim, g), g->name);
      return p;
    }
  if (g->kind == GOP_EP_ALL_GATHER)
    {
      /* Latency-bound (a few hundred bytes): its fixed time, no flow. */
      p.kind = OPK_EP;
      p.dur = sim_ticks (sim, sim_moe_counts_time (sim, g->comm_bytes), g->name);
      return p;
    }
  if (g->kind == GOP_EP_ALL_TO_ALL)
    {
      p.kind = OPK_EP;
      p.bytes = g->comm_bytes;
      p.dur = sim_ticks (sim, sim_moe_all_to_all_time (sim, g->comm_bytes), g->name);
      return p;
    }
  CollKind ck = g->kind == GOP_TP_ALL_REDUCE ? COLL_ALL_REDUCE
                : g->kind == GOP_TP_REDUCE_SCATTER ? COLL_REDUCE_SCATTER
                : COLL_ALL_GATHER;
  p.kind = OPK_TP;
  p.dur = sim_ticks (sim, net_collective_time (
    &sim->net, ck, g->comm_bytes, net_group_shape (&sim->net, 0, sim->plan->tp, 1)),
                 g->name);
  return p;
}

/* The lead of a piece of n launches and GPU time dur, issued from
 * host_before after gpu_before of GPU work (see Builder): its first
 * launch, or its last when the host is the slower (its kernels taken as
 * dur / n each). */
SimTime
sim_piece_lead (SimTime h, int n, SimTime dur, SimTime host_before,
            SimTime gpu_before)
{
  SimTime first = host_before + h - gpu_before;
  SimTime last = host_before + n * h - gpu_before - (n - 1) * (dur / n);
  return MAX (first, last);
}

/* Appends piece p to prog: its time, and the host's issuing of it. */
static void
program_add (Sim *sim, Program *prog, const Piece *p)
{
  prog->lead = MAX (prog->lead, sim_piece_lead (sim->host_launch, p->launches,
                                            p->dur, prog->host, prog->time));
  prog->host = sim_time_add (prog->host, p->launches * sim->host_launch);
  g_array_append_val (prog->pieces, *p);
  prog->time = sim_time_add (prog->time, p->dur);
  if (p->kind == OPK_TP || p->kind == OPK_EP || p->kind == OPK_CP)
    prog->tp_time = sim_time_add (prog->tp_time, p->dur);
  if (p->kind == OPK_CP)
    prog->cp_time = sim_time_add (prog->cp_time, p->dur);
  if (p->kind == OPK_TP || p->kind == OPK_CP)
    prog->tp_pieces++;
  if (p->kind == OPK_EP)
    {
      prog->ep_time = sim_time_add (prog->ep_time, p->dur);
      prog->ep_pieces++;
    }
  if (p->syncs)
    prog->sync_pieces++;
}

Program
sim_program_from_graph (Sim *sim, void (*emit) (const LayerShape *, GArray *))
{
  g_autoptr (GArray) gops = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  emit (&sim->ls, gops);
  return sim_program_from_ops (sim, gops);
}

Program
sim_program_from_ops (Sim *sim, const GArray *gops)
{
  Program prog = { g_array_new (FALSE, FALSE, sizeof (Piece)) };
  for (guint i = 0; i < gops->len; i++)
    {
      const GraphOp *g = &g_array_index (gops, GraphOp, i);
      Piece p = piece_of (sim, g);
      if (g->alongside > 0)
        {
          /* The ops after it run on a side stream beside it: it comes
           * first, only what of it outlasts them, then they; with flows
           * the builder runs them beside its flow (emit_program). */
          g_autoptr (GArray) side = g_array_new (FALSE, FALSE, sizeof (GraphOp));
          g_array_append_vals (side, &g_array_index (gops, GraphOp, i + 1),
                               (guint) g->alongside);
          Program sp = sim_program_from_ops (sim, side);
          p.alongside = (int) sp.pieces->len;
          p.dur = MAX (p.dur - sp.time, 0);
          program_add (sim, &prog, &p);
          for (guint k = 0; k < sp.pieces->len; k++)
            program_add (sim, &prog, &g_array_index (sp.pieces, Piece, k));
          g_array_unref (sp.pieces);
          i += (guint) g->alongside;
          continue;
        }
      if (g->overlap)
        {
          /* The next op (a GEMM) runs alongside: it comes first, then
           * what of the collective outlasts it. */
          const GraphOp *next = &g_array_index (gops, GraphOp, ++i);
          g_assert (next->kind == GOP_COMPUTE);
          Piece k = piece_of (sim, next);
          program_add (sim, &prog, &k);
          p.dur = MAX (p.dur - k.dur, 0);
        }
      program_add (sim, &prog, &p);
    }
  return prog;
}
