/* sim.c: the executor; see sim.h.
 *
 * An op's life:
 *
 *   created --(all deps done and heads its stream)--> ready
 *   ready --(no peers, or the last peer arrives)--> running
 *   running --(completion event)--> done: the stream moves to its next op,
 *                                   successors lose one wait
 *
 * Kernels between two communication points of a rank are fused into one
 * compute op (their durations add: they run back to back on one stream),
 * which keeps a 3072-GPU plan at a few hundred thousand events. */
#include "parallel/sim.h"
#include "base/errors.h"
#include "engine/engine.h"
#include "graph/transformer.h"
#include "hw/device.h"
#include "net/flow.h"
#include "net/net.h"

#define NONE UINT32_MAX
#define COLL_FLAG (UINT64_C (1) << 63)

/* Adam in Megatron's mixed precision touches per parameter: the fp32 grad
 * (read twice: norm for clipping, then the update: 8), the fp32 master
 * weight, m and v (read and write: 24), and the half-precision copy it
 * writes back (2). */
#define ADAM_BYTES_PER_PARAM 34.0

typedef enum {
  OPK_COMPUTE,
  OPK_TP,
  OPK_PP,
  OPK_DP,
  OPK_OPTIMIZER,
  OPK_OFFLOAD,          /* PCIe copies and the CPU's Adam */
  OPK_N
} OpKind;

static const char *const op_kind_category[OPK_N] = {
  "compute", "tp", "pp", "dp", "optimizer", "offload",
};

static const char *const stream_names[SIM_N_STREAMS] = {
  "compute", "pp send", "dp", "zero gather", "to host", "from host",
};

typedef struct {
  SimTime dur;
  SimTime ready, start, end;
  const char *name;
  uint32_t next;        /* next op on the same stream */
  uint32_t edges;       /* first out-edge, or NONE */
  uint32_t waits;       /* unfinished dependencies */
  uint32_t coll;        /* collective instance, or NONE */
  uint32_t stream;      /* rank * SIM_N_STREAMS + SimStream */
  uint32_t released_by; /* the dependency that finished last */
  int32_t mb;
  uint8_t kind;
  SimTime tp_part;      /* of dur: TP collectives fused into a compute op */
  uint32_t comm;        /* Comm whose NIC bytes run as a flow, or NONE */
} Op;

typedef struct {
  uint32_t to, next;
} Edge;

typedef struct {
  uint32_t head, tail;
  gboolean busy;
  SimTime last_end;
} Stream;

typedef struct {
  uint32_t n, arrived;
  uint32_t members;     /* offset of n op ids in Sim.members */
  uint32_t filled;
} Coll;

/* A communication op whose bytes cross NICs: its cost, and the resources
 * its flow loads (uses[first .. first + n) in Sim.uses), for the GPUs it
 * stands for. */
typedef struct {
  CollCost cost;
  uint32_t first, n;
} Comm;

/* A step of a chunk's program: a stretch of kernels or a TP collective. */
typedef struct {
  OpKind kind;          /* OPK_COMPUTE or OPK_TP */
  SimTime dur;
  const char *name;
} Piece;

typedef struct {
  const Plan *plan;
  const SimOptions *options;
  SimEngine *engine;      /* owned */
  ComputeModel cm;
  NetModel net;
  LayerShape ls;
  int ranks;              /* simulated ranks */
  GArray *ops;            /* Op */
  GArray *edges;          /* Edge */
  GArray *colls;          /* Coll */
  GArray *members;        /* uint32_t */
  Stream *streams;        /* owned: ranks * SIM_N_STREAMS */
  Breakdown *breakdown;   /* owned: per rank */
  /* Pieces of each program, built once. */
  GArray *layer_fwd, *layer_bwd, *attn_fwd, *emb_fwd, *emb_bwd, *head_fwd,
         *head_bwd;
  /* What a layer's backward runs again first: layer_fwd (full
   * recompute), attn_fwd (selective) or NULL. */
  const GArray *recompute;
  double layer_params, emb_params, head_params;
  SimTime pp_gather;      /* TP all-gather of a received activation */
  double pp_bytes;        /* sent by each GPU of a stage */
  FlowNet *flows;         /* owned; NULL without a network */
  int resources_per_node; /* NIC send and receive sides, uplink out, in */
  GArray *comms;          /* Comm */
  GArray *uses;           /* FlowUse */
  GArray *coll_uses;      /* FlowUse: scratch for a collective's members */
  uint32_t *pp_comm;      /* per rank and direction: the send's Comm, or
                           * NONE inside a node */
  SimTime *pp_dur;        /* per rank and direction: the send's duration;
                           * -1 until build_pp_comm has costed it */
  double absurd;          /* the longest op over MAX_OP_SECONDS, or 0 */
  /* In symmetric mode a TP collective waits for no other simulated rank:
   * it can join the compute op around it, which cuts the events of a
   * tp > 1 plan several-fold. Kept apart for a trace, which shows them,
   * and in full mode, where peers synchronize on them. */
  gboolean fuse_tp;
  /* Per rank, direction and micro-batch x chunk: the chunk's first op and
   * its outgoing send. */
  uint32_t *first_op, *send_op;
  /* Full mode: per TP group and per DP group, its collectives in order. */
  GArray **tp_colls, **dp_colls;
  double *dp_traffic;     /* per rank: bytes sent in DP/ZeRO collectives */
  gboolean zero3;         /* ZeRO stage 3 over a DP group of 2 or more */
  Offload offload;
  int pcie_base;          /* the node's first PCIe resource: per switch,
                           * towards the host then towards the GPUs */
  double adam_s_per_param;   /* CPU Adam, per GPU's share of the CPUs */
} Sim;

/* ---- building ops --------------------------------------------------------- */

/* No op may last longer than this: a step of days means an input such as
 * compute.mfu: 1e-9 or a 1 b/s link, and int64 picoseconds would overflow
 * on the way to the end of the run. */
#define MAX_OP_SECONDS (24 * 3600.0)

/* Seconds to ticks, noting any op that no sane plan has. */
static SimTime
ticks (Sim *sim, double seconds)
{
  if (!(seconds <= MAX_OP_SECONDS))
    {
      sim->absurd = MAX (sim->absurd, isnan (seconds) ? INFINITY : seconds);
      return 0;
    }
  return sim_time_from_s (seconds);
}

/* The DP group of a stage's representative rank: it starts at the stage's
 * first rank (both modes use it, so they cost collectives alike). */
static GroupShape
dp_shape (const Sim *sim, int stage)
{
  const Plan *p = sim->plan;
  return net_group_shape (&sim->net, stage * p->dp * p->tp, p->dp, p->tp);
}

static Op *
op_at (Sim *sim, uint32_t id)
{
  return &g_array_index (sim->ops, Op, id);
}

static uint32_t
add_op (Sim *sim, int rank, SimStream s, OpKind kind, SimTime dur,
        const char *name, int mb)
{
  uint32_t id = sim->ops->len;
  Op op = { dur, 0, 0, 0, name, NONE, NONE, 0, NONE,
            (uint32_t) (rank * SIM_N_STREAMS + s), NONE, mb, kind, 0, NONE };
  g_array_append_val (sim->ops, op);
  Stream *st = &sim->streams[op.stream];
  if (st->tail == NONE)
    st->head = id;
  else
    op_at (sim, st->tail)->next = id;
  st->tail = id;
  return id;
}

static void
add_edge (Sim *sim, uint32_t from, uint32_t to)
{
  Edge e = { to, op_at (sim, from)->edges };
  op_at (sim, from)->edges = sim->edges->len;
  g_array_append_val (sim->edges, e);
  op_at (sim, to)->waits++;
}

/* In full mode, the k-th collective of a group is one instance shared by
 * its members; in symmetric mode a collective has no peers to wait for. */
static void
join_coll (Sim *sim, uint32_t op, GArray **groups, int group, int size,
           uint32_t *counter)
{
  if (!sim->options->full || size <= 1)
    return;
  GArray *list = groups[group];
  uint32_t k = (*counter)++;
  if (k == list->len)
    {
      Coll c = { (uint32_t) size, 0, sim->members->len, 0 };
      g_array_set_size (sim->members, sim->members->len + size);
      g_array_append_val (sim->colls, c);
      uint32_t cid = sim->colls->len - 1;
      g_array_append_val (list, cid);
    }
  uint32_t cid = g_array_index (list, uint32_t, k);
  Coll *c = &g_array_index (sim->colls, Coll, cid);
  g_array_index (sim->members, uint32_t, c->members + c->filled++) = op;
  op_at (sim, op)->coll = cid;
}

/* ---- communication over the NICs -------------------------------------------- */

/* Adds coef to RESOURCE in the uses being built from FIRST (one entry per
 * resource keeps the flows short). */
static void
add_use (GArray *uses, guint first, uint32_t resource, double coef)
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

/* What GPU `rank` loads, k times its NIC bytes of cost c, when they leave
 * (out) or arrive (!out): its node's NICs, all of them evenly over NVLink
 * or its own over PCIe (and always its own for point-to-point and
 * all-to-all), and the node's uplink for the share that leaves its
 * fabric group. */
static void
add_gpu_uses (Sim *sim, GArray *uses, guint first, int rank, const CollCost *c,
              gboolean out, double k)
{
  const NetModel *net = &sim->net;
  int gpn = net->gpus_per_node, nics = net->nics;
  uint32_t base = (uint32_t) (rank / gpn) * (uint32_t) sim->resources_per_node;
  uint32_t side = out ? 0 : (uint32_t) nics;
  if (!c->own_nic && net->nic_path == NIC_PATH_NVLINK)
    for (int n = 0; n < nics; n++)
      add_use (uses, first, base + side + (uint32_t) n, k / nics);
  else if (nics >= gpn)
    {
      /* GPU g's own NICs: nics / gpn of them from g * nics / gpn. */
      int own = nics / gpn, g = rank % gpn;
      for (int n = 0; n < own; n++)
        add_use (uses, first, base + side + (uint32_t) (g * own + n), k / own);
    }
  else
    add_use (uses, first, base + side + (uint32_t) net->nic_of_gpu[rank % gpn], k);
  if (c->uplink_share > 0)
    add_use (uses, first, base + 2 * (uint32_t) nics + (out ? 0 : 1),
             k * c->uplink_share);
}

/* A Comm for cost c, for the GPUs ranks[0..n) sending (and receiving,
 * for a collective) and, for a send, peers[0..n) receiving; NONE when
 * nothing crosses a NIC. A send between GPUs of one node loads no NIC. */
static uint32_t
make_comm (Sim *sim, const CollCost *c, const int *ranks, const int *peers,
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
static int
stage_ranks_in_node (const Sim *sim, int rank, int stage, int *out)
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
static int
global_rank (const Sim *sim, int stage, int replica, int tp_rank)
{
  const Plan *p = sim->plan;
  return (stage * p->dp + replica) * p->tp + tp_rank;
}

/* ---- pieces ---------------------------------------------------------------- */

/* A graph op's piece: a kernel, or a TP collective over the TP group. */
static Piece
piece_of (Sim *sim, const GraphOp *g)
{
  Piece p = { OPK_COMPUTE, 0, g->name };
  if (g->kind == GOP_COMPUTE)
    {
      p.dur = ticks (sim, compute_kernel_time (&sim->cm, &g->kernel));
      return p;
    }
  CollKind ck = g->kind == GOP_TP_ALL_REDUCE ? COLL_ALL_REDUCE
                : g->kind == GOP_TP_REDUCE_SCATTER ? COLL_REDUCE_SCATTER
                : COLL_ALL_GATHER;
  p.kind = OPK_TP;
  p.dur = ticks (sim, net_collective_time (
    &sim->net, ck, g->comm_bytes, net_group_shape (&sim->net, 0, sim->plan->tp, 1)));
  return p;
}

static GArray *
pieces_from_graph (Sim *sim, void (*emit) (const LayerShape *, GArray *))
{
  g_autoptr (GArray) gops = g_array_new (FALSE, FALSE, sizeof (GraphOp));
  GArray *pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  emit (&sim->ls, gops);
  for (guint i = 0; i < gops->len; i++)
    {
      const GraphOp *g = &g_array_index (gops, GraphOp, i);
      Piece p = piece_of (sim, g);
      if (g->overlap)
        {
          /* The next op (a GEMM) runs alongside: it comes first, then
           * what of the collective outlasts it. */
          const GraphOp *next = &g_array_index (gops, GraphOp, ++i);
          g_assert (next->kind == GOP_COMPUTE);
          Piece k = piece_of (sim, next);
          g_array_append_val (pieces, k);
          p.dur = MAX (p.dur - k.dur, 0);
        }
      g_array_append_val (pieces, p);
    }
  return pieces;
}

/* A program's time on its own: its kernels and TP collectives in turn. */
static SimTime
pieces_time (const GArray *pieces)
{
  SimTime t = 0;
  for (guint i = 0; i < pieces->len; i++)
    t += g_array_index (pieces, Piece, i).dur;
  return t;
}

/* ---- emitting a rank's program ---------------------------------------------- */

/* A rank being built: its coordinates and the compute op being fused. */
typedef struct {
  Sim *sim;
  int rank;               /* simulated rank index */
  int stage, replica, tp_rank;
  SimTime pending;        /* fused compute not yet emitted */
  SimTime pending_tp;     /* of pending: fused TP collectives */
  const char *pending_name;
  gboolean has_pending;
  uint32_t last;          /* last op on the compute stream */
  uint32_t first_of_chunk;
  int mb;
  uint32_t tp_count, dp_count;
  /* ZeRO-3: the gather of the module being emitted, the module's first
   * op, and the last ops of the two modules before it. */
  uint32_t gather, module_first, module_last[2];
} Builder;

static void
flush (Builder *b)
{
  if (!b->has_pending)
    return;
  b->last = add_op (b->sim, b->rank, SIM_STREAM_COMPUTE, OPK_COMPUTE,
                    b->pending, b->pending_name, b->mb);
  op_at (b->sim, b->last)->tp_part = b->pending_tp;
  if (b->first_of_chunk == NONE)
    b->first_of_chunk = b->last;
  b->has_pending = FALSE;
  b->pending = b->pending_tp = 0;
}

static void
emit_pieces (Builder *b, const GArray *pieces, const char *phase)
{
  Sim *sim = b->sim;
  for (guint i = 0; i < pieces->len; i++)
    {
      const Piece *p = &g_array_index (pieces, Piece, i);
      if (p->kind == OPK_COMPUTE || sim->fuse_tp)
        {
          if (!b->has_pending)
            b->pending_name = phase;
          b->pending += p->dur;
          if (p->kind == OPK_TP)
            b->pending_tp += p->dur;
          b->has_pending = TRUE;
          continue;
        }
      flush (b);
      b->last = add_op (sim, b->rank, SIM_STREAM_COMPUTE, OPK_TP, p->dur,
                        p->name, b->mb);
      if (b->first_of_chunk == NONE)
        b->first_of_chunk = b->last;
      join_coll (sim, b->last, sim->tp_colls,
                 b->stage * sim->plan->dp + b->replica, sim->plan->tp,
                 &b->tp_count);
    }
}

/* How many of the count ranks first, first + stride, ... are in node. */
static int
group_members_in_node (const Sim *sim, int first, int count, int stride,
                       int node)
{
  int64_t gpn = sim->net.gpus_per_node;
  int64_t lo = node * gpn - first, hi = (node + 1) * gpn - 1 - first;
  int64_t j_lo = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  int64_t j_hi = hi < 0 ? -1 : MIN (count - 1, hi / stride);
  return (int) MAX (j_hi - j_lo + 1, 1);
}

/* A data-parallel collective op on the rank's DP stream: its duration
 * at the static NIC share, and a Comm when its bytes cross NICs. */
static uint32_t
add_dp_op (Builder *b, SimStream stream, CollKind kind, double bytes,
           const char *name)
{
  Sim *sim = b->sim;
  CollCost c = net_collective_cost (&sim->net, kind, bytes,
                                    dp_shape (sim, b->stage), -1, 0);
  uint32_t id = add_op (sim, b->rank, stream, OPK_DP,
                        ticks (sim, net_static_time (&sim->net, &c, 0)), name,
                        stream == SIM_STREAM_GATHER ? b->mb : -1);
  /* What a ring sends per GPU (Rajbhandari 2020 section 7): an
   * all-reduce twice what a reduce-scatter or an all-gather does. */
  const Plan *p = sim->plan;
  sim->dp_traffic[b->rank] += (kind == COLL_ALL_REDUCE ? 2 : 1)
                              * (double) (p->dp - 1) / p->dp * bytes;
  join_coll (sim, id, sim->dp_colls, b->stage * p->tp + b->tp_rank, p->dp,
             &b->dp_count);
  int ranks[SPEC_MAX_GPUS_PER_NODE];
  double scale[SPEC_MAX_GPUS_PER_NODE];
  int n = stage_ranks_in_node (sim, global_rank (sim, b->stage, b->replica,
                                                 b->tp_rank), b->stage, ranks);
  /* nic_bytes is per member where the group has the fewest members in a
   * node (c.per_node); a node with more members carries the same ring
   * traffic, each of them a share of it. */
  for (int i = 0; i < n; i++)
    scale[i] = (double) c.per_node
               / group_members_in_node (sim, b->stage * p->dp * p->tp
                                        + ranks[i] % p->tp, p->dp, p->tp,
                                        ranks[i] / sim->net.gpus_per_node);
  op_at (sim, id)->comm = make_comm (sim, &c, ranks, NULL, scale, n);
  return id;
}

/* A copy of `bytes` over PCIe between this rank's GPU and the host
 * (to_host: gradients down; else parameters up) on the offload stream of
 * that direction. The GPUs behind one PCIe switch share its link to the
 * host (host.gpus_per_pcie_switch); in symmetric mode the representative
 * loads it for the GPUs of its stage there. A copy's launch costs a few
 * microseconds, nothing next to a bucket's milliseconds: no latency. */
static uint32_t
add_pcie_op (Builder *b, gboolean to_host, double bytes, const char *name)
{
  Sim *sim = b->sim;
  const HostSpec *h = &sim->plan->spec->topology.host;
  int gpn = sim->net.gpus_per_node, per = h->gpus_per_pcie_switch;
  int ranks[SPEC_MAX_GPUS_PER_NODE];
  int n = stage_ranks_in_node (sim, global_rank (sim, b->stage, b->replica,
                                                 b->tp_rank), b->stage, ranks);
  Comm comm = { { .nic_bytes = bytes }, sim->uses->len, 0 };
  for (int i = 0; i < n; i++)
    add_use (sim->uses, comm.first,
             (uint32_t) ((ranks[i] / gpn) * sim->resources_per_node
                         + sim->pcie_base + 2 * ((ranks[i] % gpn) / per)
                         + (to_host ? 0 : 1)), 1);
  comm.n = sim->uses->len - comm.first;
  double shared = 1;
  for (guint u = comm.first; u < sim->uses->len; u++)
    shared = MAX (shared, g_array_index (sim->uses, FlowUse, u).coef);
  g_array_append_val (sim->comms, comm);
  uint32_t id = add_op (sim, b->rank, to_host ? SIM_STREAM_TO_HOST
                                              : SIM_STREAM_FROM_HOST,
                        OPK_OFFLOAD, ticks (sim, bytes * shared
                                                 / h->pcie_bandwidth),
                        name, b->mb);
  op_at (sim, id)->comm = sim->comms->len - 1;
  return id;
}

/* The gradients of `params` parameters, complete after op `after`: the
 * data-parallel reduction (an all-reduce, or a reduce-scatter from ZeRO
 * stage 1), then with CPU offload the copy of this rank's partition to
 * the host. Returns the last op, NONE when nothing moves. */
static uint32_t
emit_grads (Builder *b, double params, uint32_t after)
{
  Sim *sim = b->sim;
  const Plan *plan = sim->plan;
  double bytes = params * sim->cm.bytes_per_element;
  uint32_t last = NONE;
  if (plan->dp > 1)
    {
      CollKind kind = plan->spec->zero.stage >= 1 ? COLL_REDUCE_SCATTER
                                                  : COLL_ALL_REDUCE;
      last = add_dp_op (b, SIM_STREAM_DP, kind, bytes,
                        kind == COLL_ALL_REDUCE ? "dp_allreduce"
                                                : "dp_reduce_scatter");
      add_edge (sim, after, last);
    }
  if (sim->offload != OFFLOAD_NONE)
    {
      uint32_t down = add_pcie_op (b, TRUE, bytes / plan->dp,
                                   "offload_gradients");
      add_edge (sim, last != NONE ? last : after, down);
      last = down;
    }
  return last;
}

/* ZeRO-3 (Rajbhandari 2020 section 5.3, DeepSpeed stage 3): a module's
 * parameters are all-gathered before its forward and again before its
 * backward, on their own stream. DeepSpeed's prefetcher issues module k's
 * gather as module k-1 starts, so it hides behind k-1's compute and two
 * modules at most are whole at once (plan.c counts them). With the
 * parameters offloaded, the shard comes up over PCIe first. */
static void
begin_module (Builder *b, double params)
{
  Sim *sim = b->sim;
  if (!sim->zero3)
    return;
  flush (b);
  double bytes = params * sim->cm.bytes_per_element;
  uint32_t up = sim->offload == OFFLOAD_OPTIMIZER_PARAMS
    ? add_pcie_op (b, FALSE, bytes / sim->plan->dp, "offload_fetch") : NONE;
  b->gather = add_dp_op (b, SIM_STREAM_GATHER, COLL_ALL_GATHER, bytes,
                         "zero3_gather");
  if (up != NONE)
    add_edge (sim, up, b->gather);
  /* The fetch (or the gather) starts once module k-2 is done. */
  if (b->module_last[1] != NONE)
    add_edge (sim, b->module_last[1], up != NONE ? up : b->gather);
  b->module_first = sim->ops->len;
}

static void
end_module (Builder *b)
{
  if (!b->sim->zero3)
    return;
  flush (b);
  add_edge (b->sim, b->gather, b->module_first);
  b->module_last[1] = b->module_last[0];
  b->module_last[0] = b->last;
}

/* One module's program (its recomputed forward first, if any) between
 * ZeRO-3's gather of its parameters and the next module's. */
static void
emit_module (Builder *b, double params, const GArray *recompute,
             const GArray *pieces, const char *phase)
{
  begin_module (b, params);
  if (recompute != NULL)
    emit_pieces (b, recompute, phase);
  emit_pieces (b, pieces, phase);
  end_module (b);
}

/* The cost of this rank's pipeline sends in direction dir (0: forward to
 * the next stage, 1: backward to the previous), once per rank. The stage
 * is as slow as its slowest sender: across nodes if any of its ranks'
 * peers is in another node. Megatron's scatter/gather sends 1/t of the
 * activation from each TP rank and all-gathers it over NVLink on arrival. */
static void
build_pp_comm (Builder *b, int dir)
{
  Sim *sim = b->sim;
  const Plan *plan = sim->plan;
  size_t k = (size_t) b->rank * 2 + dir;
  if (sim->pp_dur[k] >= 0)
    return;
  int peer_stage = dir == 0 ? (b->stage + 1) % plan->pp
                            : (b->stage + plan->pp - 1) % plan->pp;
  int stride = plan->dp * plan->tp, gpn = sim->net.gpus_per_node;
  int across = -1;
  for (int r = 0; r < stride && across < 0; r++)
    if ((b->stage * stride + r) / gpn != (peer_stage * stride + r) / gpn)
      across = r;
  CollCost c = net_send_cost (&sim->net, sim->pp_bytes, b->stage * stride
                              + MAX (across, 0), peer_stage * stride
                              + MAX (across, 0));
  c.intra_s += sim_time_to_s (sim->pp_gather);
  c.pipelined = FALSE;
  sim->pp_dur[k] = ticks (sim, net_static_time (&sim->net, &c, 0));
  int ranks[SPEC_MAX_GPUS_PER_NODE], peers[SPEC_MAX_GPUS_PER_NODE];
  int n = stage_ranks_in_node (sim, global_rank (sim, b->stage, b->replica,
                                                 b->tp_rank), b->stage, ranks);
  for (int i = 0; i < n; i++)
    peers[i] = ranks[i] + (peer_stage - b->stage) * stride;
  sim->pp_comm[k] = make_comm (sim, &c, ranks, peers, NULL, n);
}

/* Index of (direction, micro-batch, chunk) in first_op / send_op. */
static size_t
slot (const Sim *sim, int rank, int dir, int mb, int chunk)
{
  const Plan *p = sim->plan;
  return (((size_t) rank * 2 + dir) * p->micro_batches + mb)
         * p->virtual_stages + chunk;
}

/* One chunk: forward (dir 0) or backward (dir 1) of micro-batch mb on
 * model chunk `chunk` of this stage. final: the chunk's last backward,
 * when its gradients are complete and data parallelism may start. */
static void
emit_chunk (Builder *b, int dir, int mb, int chunk, gboolean final,
            uint32_t *last_dp)
{
  Sim *sim = b->sim;
  const Plan *plan = sim->plan;
  const ExperimentSpec *e = plan->spec;
  int vstage = chunk * plan->pp + b->stage;
  int vstages = plan->pp * plan->virtual_stages;
  gboolean first = vstage == 0, last = vstage == vstages - 1;
  /* Gradients move after the last backward of the step, or after every
   * backward when ZeRO-3 keeps only a shard of them. */
  gboolean moves = plan->dp > 1 || sim->offload != OFFLOAD_NONE;
  gboolean bucketing = (final || sim->zero3) && e->parallel.gradient_bucketing
                       && moves;
  double bucket = 0, bucket_cap = e->parallel.bucket_bytes
                                  / sim->cm.bytes_per_element;

  b->mb = mb;
  b->first_of_chunk = NONE;
  if (dir == 0)
    {
      if (first)
        emit_module (b, sim->emb_params, NULL, sim->emb_fwd, "forward");
      for (int l = 0; l < plan_chunk_layers (plan, b->stage); l++)
        emit_module (b, sim->layer_params, NULL, sim->layer_fwd, "forward");
      if (last)
        emit_module (b, sim->head_params, NULL, sim->head_fwd, "forward");
    }
  else
    {
      if (last)
        {
          emit_module (b, sim->head_params, NULL, sim->head_bwd, "backward");
          bucket += sim->head_params;
        }
      for (int l = 0; l < plan_chunk_layers (plan, b->stage); l++)
        {
          emit_module (b, sim->layer_params, sim->recompute, sim->layer_bwd,
                       "backward");
          bucket += sim->layer_params;
          if (bucketing && bucket >= bucket_cap)
            {
              flush (b);
              *last_dp = emit_grads (b, bucket, b->last);
              bucket = 0;
            }
        }
      if (first)
        {
          emit_module (b, sim->emb_params, NULL, sim->emb_bwd, "backward");
          bucket += sim->emb_params;
        }
    }
  flush (b);
  /* Without buckets, ZeRO-3 still reduces each backward's gradients. */
  if ((bucketing || (dir == 1 && sim->zero3)) && bucket > 0)
    *last_dp = emit_grads (b, bucket, b->last);

  g_assert (b->first_of_chunk != NONE);
  sim->first_op[slot (sim, b->rank, dir, mb, chunk)] = b->first_of_chunk;
  /* Activations go to the next virtual stage, gradients to the previous. */
  gboolean sends = dir == 0 ? !last : !first;
  if (sends)
    {
      /* Megatron's p2p_communication waits for its isend/irecv requests
       * (and synchronizes the device) before the next compute: a send
       * blocks the sender's compute stream. */
      build_pp_comm (b, dir);
      size_t k = (size_t) b->rank * 2 + dir;
      b->last = add_op (sim, b->rank, SIM_STREAM_COMPUTE, OPK_PP,
                        sim->pp_dur[k],
                        dir == 0 ? "send_activations" : "send_gradients", mb);
      op_at (sim, b->last)->comm = sim->pp_comm[k];
      sim->send_op[slot (sim, b->rank, dir, mb, chunk)] = b->last;
    }
}

/* ---- schedules ------------------------------------------------------------ */

typedef struct {
  int dir, mb, chunk;
} Item;

/* The order in which stage s runs forward and backward chunks. GPipe:
 * every forward, then every backward. 1F1B (Narayanan 2021, fig. 4):
 * pp - s - 1 warm-up forwards, then alternate, then drain. Interleaved:
 * Megatron's forward_backward_pipelining_with_interleaving: micro-batches
 * in groups of pp walk the model chunks in turn, with a longer warm-up. */
static void
schedule_items (const Plan *p, int s, GArray *items)
{
  int m = p->micro_batches, v = p->virtual_stages, pp = p->pp;
  int total = m * v;
  if (p->spec->parallel.schedule == SCHEDULE_GPIPE)
    {
      for (int c = 0; c < v; c++)
        for (int mb = 0; mb < m; mb++)
          g_array_append_val (items, ((Item) { 0, mb, c }));
      for (int c = v - 1; c >= 0; c--)
        for (int mb = 0; mb < m; mb++)
          g_array_append_val (items, ((Item) { 1, mb, c }));
      return;
    }
  int warmup = v == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (v - 1) * pp;
  /* Megatron runs every forward first when m == pp with interleaving. */
  if (v > 1 && m == pp)
    warmup = total;
  warmup = MIN (warmup, total);
  int f = 0, bk = 0;
  /* k-th forward / backward unit -> micro-batch and chunk. */
#define UNIT_MB(k) (v == 1 ? (k) : ((k) / (pp * v)) * pp + (k) % pp)
#define FWD_CHUNK(k) (v == 1 ? 0 : ((k) / pp) % v)
#define BWD_CHUNK(k) (v == 1 ? 0 : v - 1 - ((k) / pp) % v)
  for (; f < warmup; f++)
    g_array_append_val (items, ((Item) { 0, UNIT_MB (f), FWD_CHUNK (f) }));
  for (; f < total; f++, bk++)
    {
      g_array_append_val (items, ((Item) { 0, UNIT_MB (f), FWD_CHUNK (f) }));
      g_array_append_val (items, ((Item) { 1, UNIT_MB (bk), BWD_CHUNK (bk) }));
    }
  for (; bk < total; bk++)
    g_array_append_val (items, ((Item) { 1, UNIT_MB (bk), BWD_CHUNK (bk) }));
#undef UNIT_MB
#undef FWD_CHUNK
#undef BWD_CHUNK
}

static void
build_rank (Sim *sim, int rank, int stage, int replica, int tp_rank)
{
  const Plan *plan = sim->plan;
  const ExperimentSpec *e = plan->spec;
  Builder b = { .sim = sim, .rank = rank, .stage = stage, .replica = replica,
                .tp_rank = tp_rank, .last = NONE, .first_of_chunk = NONE,
                .mb = -1, .gather = NONE, .module_last = { NONE, NONE } };
  g_autoptr (GArray) items = g_array_new (FALSE, FALSE, sizeof (Item));
  schedule_items (plan, stage, items);

  /* Each chunk's last backward completes its gradients. */
  int v = plan->virtual_stages;
  g_assert (v >= 1);
  g_autofree int *last_bwd = g_new (int, (guint) v);
  for (guint i = 0; i < items->len; i++)
    {
      const Item *it = &g_array_index (items, Item, i);
      if (it->dir == 1)
        last_bwd[it->chunk] = (int) i;
    }

  uint32_t last_dp = NONE;
  double stage_params = 0;
  for (int c = 0; c < v; c++)
    {
      int vstage = c * plan->pp + stage;
      stage_params += plan_chunk_layers (plan, stage) * sim->layer_params;
      if (vstage == 0)
        stage_params += sim->emb_params;
      if (vstage == plan->pp * v - 1)
        stage_params += sim->head_params;
    }
  for (guint i = 0; i < items->len; i++)
    {
      const Item *it = &g_array_index (items, Item, i);
      emit_chunk (&b, it->dir, it->mb, it->chunk,
                  it->dir == 1 && last_bwd[it->chunk] == (int) i, &last_dp);
    }
  if (!e->parallel.gradient_bucketing && !sim->zero3)
    last_dp = emit_grads (&b, stage_params, b.last);

  /* The optimizer updates this rank's share of the parameters once every
   * gradient is reduced: on the GPU, or with offload on the host's CPUs
   * (ZeRO-Offload's CPU-Adam, which DeepSpeed runs after backward), whose
   * updated half-precision shard then comes back up. ZeRO 1-2 then
   * all-gather the updated parameters; ZeRO-3 gathers them as the next
   * step needs them. */
  b.mb = -1;
  double opt_params = stage_params / (e->zero.stage >= 1 ? plan->dp : 1);
  uint32_t opt, updated;
  if (sim->offload == OFFLOAD_NONE)
    opt = updated = add_op (sim, rank, SIM_STREAM_COMPUTE, OPK_OPTIMIZER,
                            ticks (sim, compute_memory_time (
                              &sim->cm, opt_params * ADAM_BYTES_PER_PARAM)),
                            "optimizer", -1);
  else
    {
      opt = updated = add_op (sim, rank, SIM_STREAM_TO_HOST, OPK_OFFLOAD,
                              ticks (sim, opt_params * sim->adam_s_per_param),
                              "cpu_adam", -1);
      if (sim->offload == OFFLOAD_OPTIMIZER)
        {
          updated = add_pcie_op (&b, FALSE, opt_params * sim->cm.bytes_per_element,
                                 "offload_parameters");
          add_edge (sim, opt, updated);
        }
    }
  if (last_dp != NONE)
    add_edge (sim, last_dp, opt);
  if (e->zero.stage >= 1 && e->zero.stage <= 2 && plan->dp > 1)
    {
      double bytes = stage_params * sim->cm.bytes_per_element;
      uint32_t id = add_dp_op (&b, SIM_STREAM_DP, COLL_ALL_GATHER, bytes,
                               "dp_allgather_params");
      add_edge (sim, updated, id);
    }
}

/* Links each chunk to the send of the chunk it consumes. */
static void
link_pipeline (Sim *sim, int rank, int stage, int replica, int tp_rank)
{
  const Plan *p = sim->plan;
  int vstages = p->pp * p->virtual_stages;
  for (int dir = 0; dir < 2; dir++)
    for (int mb = 0; mb < p->micro_batches; mb++)
      for (int c = 0; c < p->virtual_stages; c++)
        {
          int vstage = c * p->pp + stage;
          int from = dir == 0 ? vstage - 1 : vstage + 1;
          if (from < 0 || from >= vstages)
            continue;
          int from_stage = from % p->pp, from_chunk = from / p->pp;
          int from_rank = sim->options->full
            ? (from_stage * p->dp + replica) * p->tp + tp_rank : from_stage;
          uint32_t send = sim->send_op[slot (sim, from_rank, dir, mb,
                                             from_chunk)];
          add_edge (sim, send, sim->first_op[slot (sim, rank, dir, mb, c)]);
        }
}

/* ---- running ---------------------------------------------------------------- */

static void on_op_done (SimEngine *engine, void *ctx, uint64_t arg);

/* The NIC bytes of an op (or of collective instance, COLL_FLAG | id) are
 * through: the op ends once its part on the node's links is done too
 * (they overlap in a pipelined algorithm, and follow otherwise) and the
 * steps' latencies are paid. */
static void
on_flow_done (SimEngine *engine, void *ctx, uint64_t arg)
{
  Sim *sim = ctx;
  uint32_t id = arg & COLL_FLAG
    ? g_array_index (sim->members, uint32_t,
                     g_array_index (sim->colls, Coll, (uint32_t) arg).members)
    : (uint32_t) arg;
  const Op *op = op_at (sim, id);
  const CollCost *c = &g_array_index (sim->comms, Comm, op->comm).cost;
  SimTime now = sim_engine_now (engine);
  SimTime intra = sim_time_from_s (c->intra_s);
  SimTime end = c->pipelined ? MAX (now, op->start + intra) : now + intra;
  sim_engine_schedule (engine, end + sim_time_from_s (c->latency_s),
                       on_op_done, sim, arg);
}

/* Starts op id (or the collective instance in arg) at now: as a flow when
 * its bytes cross NICs, else for its fixed duration. */
static void
launch (Sim *sim, uint32_t id, uint64_t arg)
{
  Op *op = op_at (sim, id);
  SimTime now = sim_engine_now (sim->engine);
  if (op->comm == NONE)
    {
      sim_engine_schedule (sim->engine, now + op->dur, on_op_done, sim, arg);
      return;
    }
  const Comm *comm = &g_array_index (sim->comms, Comm, op->comm);
  const FlowUse *uses = &g_array_index (sim->uses, FlowUse, comm->first);
  guint n = comm->n;
  if (arg & COLL_FLAG)
    {
      /* One flow for the whole instance: every member's GPUs. */
      const Coll *c = &g_array_index (sim->colls, Coll, (uint32_t) arg);
      g_array_set_size (sim->coll_uses, 0);
      for (uint32_t i = 0; i < c->n; i++)
        {
          const Op *m = op_at (sim, g_array_index (sim->members, uint32_t,
                                                   c->members + i));
          const Comm *mc = &g_array_index (sim->comms, Comm, m->comm);
          for (uint32_t u = 0; u < mc->n; u++)
            {
              const FlowUse *use = &g_array_index (sim->uses, FlowUse,
                                                   mc->first + u);
              add_use (sim->coll_uses, 0, use->resource, use->coef);
            }
        }
      uses = (const FlowUse *) (void *) sim->coll_uses->data;
      n = sim->coll_uses->len;
    }
  flow_start (sim->flows, comm->cost.nic_bytes, uses, n, on_flow_done, sim,
              arg);
}

static void
try_start (Sim *sim, uint32_t stream)
{
  Stream *st = &sim->streams[stream];
  if (st->busy || st->head == NONE)
    return;
  uint32_t id = st->head;
  Op *op = op_at (sim, id);
  if (op->waits > 0)
    return;
  SimTime now = sim_engine_now (sim->engine);
  st->busy = TRUE;
  op->ready = now;
  if (op->coll == NONE)
    {
      op->start = now;
      launch (sim, id, id);
      return;
    }
  Coll *c = &g_array_index (sim->colls, Coll, op->coll);
  if (++c->arrived < c->n)
    return;
  for (uint32_t i = 0; i < c->n; i++)
    op_at (sim, g_array_index (sim->members, uint32_t, c->members + i))->start
      = now;
  launch (sim, id, COLL_FLAG | op->coll);
}

/* Charges a finished compute-stream op to the rank's breakdown: its own
 * time to its kind, and the idle gap before it to what it waited for. */
static void
account (Sim *sim, const Op *op, Stream *st)
{
  Breakdown *bd = &sim->breakdown[op->stream / SIM_N_STREAMS];
  double gap = sim_time_to_s (op->ready - st->last_end);
  if (gap > 0)
    {
      const Op *dep = op->released_by == NONE ? NULL
                      : op_at (sim, op->released_by);
      if (dep != NULL && dep->kind == OPK_PP)
        {
          SimTime lo = MAX (dep->start, st->last_end);
          SimTime hi = MIN (dep->end, op->ready);
          double exposed = hi > lo ? sim_time_to_s (hi - lo) : 0;
          bd->pp_comm += exposed;
          bd->bubble += gap - exposed;
        }
      else if (dep != NULL && dep->kind == OPK_DP)
        bd->dp_comm += gap;
      else if (dep != NULL && dep->kind == OPK_OFFLOAD)
        bd->offload += gap;
      else
        bd->bubble += gap;
    }
  double busy = sim_time_to_s (op->end - op->ready);
  switch ((OpKind) op->kind)
    {
    case OPK_TP: bd->tp_comm += busy; break;
    case OPK_PP: bd->pp_comm += busy; break;
    case OPK_OPTIMIZER: bd->optimizer += busy; break;
    case OPK_COMPUTE:
      bd->tp_comm += sim_time_to_s (op->tp_part);
      bd->compute += busy - sim_time_to_s (op->tp_part);
      break;
    case OPK_DP:
    case OPK_N:
    default: bd->compute += busy; break;
    }
  st->last_end = op->end;
}

static void
finish_op (Sim *sim, uint32_t id)
{
  Op *op = op_at (sim, id);
  Stream *st = &sim->streams[op->stream];
  op->end = sim_engine_now (sim->engine);
  st->busy = FALSE;
  st->head = op->next;
  if (op->stream % SIM_N_STREAMS == SIM_STREAM_COMPUTE)
    account (sim, op, st);
  if (sim->options->trace != NULL)
    {
      TraceSpan span = { op->name, op_kind_category[op->kind],
                         (int) (op->stream / SIM_N_STREAMS),
                         (int) (op->stream % SIM_N_STREAMS), op->mb,
                         op->start, op->end };
      g_array_append_val (sim->options->trace, span);
    }
  for (uint32_t e = op->edges; e != NONE;)
    {
      const Edge *edge = &g_array_index (sim->edges, Edge, e);
      Op *to = op_at (sim, edge->to);
      if (--to->waits == 0)
        {
          to->released_by = id;
          try_start (sim, to->stream);
        }
      e = edge->next;
    }
  try_start (sim, op->stream);
}

static void
on_op_done (SimEngine *engine, void *ctx, uint64_t arg)
{
  Sim *sim = ctx;
  if (!(arg & COLL_FLAG))
    {
      finish_op (sim, (uint32_t) arg);
      return;
    }
  const Coll *c = &g_array_index (sim->colls, Coll, (uint32_t) arg);
  for (uint32_t i = 0; i < c->n; i++)
    finish_op (sim, g_array_index (sim->members, uint32_t, c->members + i));
}

/* ---- results ---------------------------------------------------------------- */

static void
fill_result (Sim *sim, SimResult *r)
{
  const Plan *p = sim->plan;
  const ExperimentSpec *e = p->spec;
  SimTime end = 0;
  int critical = 0;
  for (guint i = 0; i < sim->ops->len; i++)
    {
      const Op *op = op_at (sim, i);
      g_assert (op->waits == 0 && op->end >= op->start);
      if (op->end > end)
        {
          end = op->end;
          critical = (int) (op->stream / SIM_N_STREAMS);
        }
    }
  for (int i = 0; i < sim->ranks * SIM_N_STREAMS; i++)
    g_assert (sim->streams[i].head == NONE);   /* nothing deadlocked */

  double t = sim_time_to_s (end);
  int64_t gb = e->parallel.global_batch;
  double gpus = p->gpus, peak = e->topology.gpu.peak_flops[e->training.precision];
  double model = transformer_model_flops (&e->model, gb);
  double hw = model;
  if (e->training.recompute == RECOMPUTE_FULL)
    hw += e->model.layers * transformer_layer_forward_flops (&e->model, gb);
  else if (e->training.recompute == RECOMPUTE_SELECTIVE)
    hw += e->model.layers * transformer_attention_core_flops (&e->model, gb);

  *r = (SimResult) { 0 };
  r->iteration_time_s = t;
  r->samples_per_s = gb / t;
  r->tokens_per_s = gb * (double) e->model.seq_len / t;
  r->model_tflops_per_gpu = model / t / gpus / 1e12;
  r->hardware_tflops_per_gpu = hw / t / gpus / 1e12;
  r->megatron_tflops_per_gpu =
    transformer_megatron_flops (&e->model, gb) / t / gpus / 1e12;
  r->mfu = model / t / gpus / peak;
  r->hfu = hw / t / gpus / peak;
  r->gpus = p->gpus;
  r->tp = p->tp;
  r->pp = p->pp;
  r->dp = p->dp;
  r->micro_batch = p->micro_batch;
  r->global_batch = e->parallel.global_batch;
  r->virtual_stages = p->virtual_stages;
  plan_memory (p, &r->memory);
  r->memory_per_gpu_gib = r->memory.total / (1024.0 * 1024 * 1024);
  r->fits_memory = plan_memory_fits (&r->memory);
  r->breakdown_s = sim->breakdown[critical];
  r->dp_traffic = sim->dp_traffic[critical];
  /* Whatever ran after the critical rank's last compute op is exposed:
   * offload while a copy or the CPU's Adam ran (one after another on the
   * host streams), data-parallel for the rest (a ZeRO all-gather). */
  SimTime compute_end =
    sim->streams[critical * SIM_N_STREAMS + SIM_STREAM_COMPUTE].last_end;
  double tail = t - sim_time_to_s (compute_end), offload = 0;
  for (guint i = 0; sim->offload != OFFLOAD_NONE && i < sim->ops->len; i++)
    {
      const Op *op = op_at (sim, i);
      if (op->kind == OPK_OFFLOAD
          && (int) (op->stream / SIM_N_STREAMS) == critical
          && op->end > compute_end)
        offload += sim_time_to_s (op->end - MAX (op->start, compute_end));
    }
  offload = MIN (offload, tail);
  r->breakdown_s.offload += offload;
  r->breakdown_s.dp_comm += tail - offload;
  r->layer_forward_s = sim_time_to_s (pieces_time (sim->layer_fwd));
  r->layer_backward_s = sim_time_to_s (
    pieces_time (sim->layer_bwd)
    + (sim->recompute != NULL ? pieces_time (sim->recompute) : 0));
  r->events = sim_engine_events (sim->engine);
  if (e->training.tokens > 0)
    {
      double iterations = e->training.tokens
                          / ((double) gb * e->model.seq_len);
      r->has_training = TRUE;
      r->days_to_train = iterations * t / 86400.0;
      r->cost_usd = r->days_to_train * 24 * gpus * e->cost.gpu_hour_usd;
    }
}

/* ---- entry points ------------------------------------------------------------ */

const char *const *
sim_stream_names (void)
{
  return stream_names;
}

gboolean
sim_run_plan (const Plan *plan, const SimOptions *options, SimResult *result,
              GError **error)
{
  const ExperimentSpec *e = plan->spec;
  Sim sim = { plan, options };
  sim.engine = sim_engine_new ();
  compute_model_init (&sim.cm, &e->topology.gpu, &e->compute,
                      e->training.precision);
  net_model_init (&sim.net, &e->topology, e->collectives.algorithm);
  transformer_layer_shape (&sim.ls, &e->model, plan->tp, plan->micro_batch,
                           e->parallel.sequence_parallel,
                           e->training.attention, &sim.cm);
  sim.ls.tp_overlap = e->parallel.tp_overlap;
  sim.layer_params = transformer_layer_params (&sim.ls);
  sim.emb_params = transformer_embedding_params (&sim.ls);
  /* With pp > 1 the last stage keeps its own copy of the tied word
   * embedding (Megatron's shared embedding). */
  sim.head_params = transformer_head_params (&sim.ls)
    + (plan->pp > 1 ? (double) sim.ls.vocab / plan->tp * sim.ls.h : 0);
  sim.layer_fwd = pieces_from_graph (&sim, transformer_layer_forward);
  sim.layer_bwd = pieces_from_graph (&sim, transformer_layer_backward);
  sim.attn_fwd = pieces_from_graph (&sim, transformer_attention_core_forward);
  sim.recompute = e->training.recompute == RECOMPUTE_FULL ? sim.layer_fwd
                  : e->training.recompute == RECOMPUTE_SELECTIVE ? sim.attn_fwd
                  : NULL;
  sim.emb_fwd = pieces_from_graph (&sim, transformer_embedding_forward);
  sim.emb_bwd = pieces_from_graph (&sim, transformer_embedding_backward);
  sim.head_fwd = pieces_from_graph (&sim, transformer_head_forward);
  sim.head_bwd = pieces_from_graph (&sim, transformer_head_backward);

  /* Pipeline transfers: Megatron's scatter/gather optimisation sends 1/t
   * of the activations from each TP rank and all-gathers them over
   * NVLink on arrival (with sequence parallelism they are split already). */
  sim.pp_bytes = sim.cm.bytes_per_element * plan->micro_batch
                 * (double) e->model.seq_len * e->model.hidden / plan->tp;
  if (plan->tp > 1 && !sim.ls.sequence_parallel)
    sim.pp_gather = ticks (&sim, net_collective_time (
      &sim.net, COLL_ALL_GATHER, sim.pp_bytes * plan->tp,
      net_group_shape (&sim.net, 0, plan->tp, 1)));

  sim.fuse_tp = !options->full && options->trace == NULL;
  sim.ranks = options->full ? plan->gpus : plan->pp;
  sim.ops = g_array_new (FALSE, FALSE, sizeof (Op));
  sim.edges = g_array_new (FALSE, FALSE, sizeof (Edge));
  sim.colls = g_array_new (FALSE, FALSE, sizeof (Coll));
  sim.members = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  sim.comms = g_array_new (FALSE, FALSE, sizeof (Comm));
  sim.uses = g_array_new (FALSE, FALSE, sizeof (FlowUse));
  sim.coll_uses = g_array_new (FALSE, FALSE, sizeof (FlowUse));
  sim.pp_comm = g_new (uint32_t, (gsize) sim.ranks * 2);
  sim.pp_dur = g_new (SimTime, (gsize) sim.ranks * 2);
  for (int i = 0; i < sim.ranks * 2; i++)
    sim.pp_dur[i] = -1;
  /* A ZeRO stage with one replica partitions nothing: it runs as DP. */
  sim.zero3 = e->zero.stage == 3 && plan->dp > 1;
  sim.offload = e->zero.offload;
  const HostSpec *host = &e->topology.host;
  if (sim.offload != OFFLOAD_NONE)
    sim.adam_s_per_param = e->topology.gpus_per_node
                           / host->cpu_adam_params_per_s;
  if (sim.net.has_network || sim.offload != OFFLOAD_NONE)
    {
      /* Per node: each NIC's send and receive sides, then the uplinks
       * into the fabric, out and in; with offload, each PCIe switch's
       * link to the host, towards the host and towards the GPUs. */
      int nodes = (plan->gpus + sim.net.gpus_per_node - 1)
                  / sim.net.gpus_per_node;
      int nic_side = sim.net.has_network ? 2 * sim.net.nics + 2 : 0;
      int switches = sim.offload != OFFLOAD_NONE
        ? sim.net.gpus_per_node / host->gpus_per_pcie_switch : 0;
      sim.pcie_base = nic_side;
      sim.resources_per_node = nic_side + 2 * switches;
      guint n = (guint) nodes * (guint) sim.resources_per_node;
      g_autofree double *capacity = g_new (double, n);
      for (guint i = 0; i < n; i++)
        {
          int k = (int) (i % (guint) sim.resources_per_node);
          capacity[i] = k >= nic_side ? host->pcie_bandwidth
            : k < 2 * sim.net.nics ? sim.net.nic_bandwidth
            : sim.net.uplink_fraction * sim.net.nics * sim.net.nic_bandwidth;
        }
      sim.flows = flow_net_new (sim.engine, n, capacity);
    }
  sim.streams = g_new (Stream, (gsize) sim.ranks * SIM_N_STREAMS);
  for (int i = 0; i < sim.ranks * SIM_N_STREAMS; i++)
    sim.streams[i] = (Stream) { NONE, NONE, FALSE, 0 };
  sim.breakdown = g_new0 (Breakdown, (gsize) sim.ranks);
  sim.dp_traffic = g_new0 (double, (gsize) sim.ranks);
  size_t slots = (size_t) sim.ranks * 2 * plan->micro_batches
                 * plan->virtual_stages;
  sim.first_op = g_new (uint32_t, slots);
  sim.send_op = g_new (uint32_t, slots);
  for (size_t i = 0; i < slots; i++)
    sim.first_op[i] = sim.send_op[i] = NONE;
  int tp_groups = plan->pp * plan->dp, dp_groups = plan->pp * plan->tp;
  sim.tp_colls = g_new (GArray *, (gsize) tp_groups);
  sim.dp_colls = g_new (GArray *, (gsize) dp_groups);
  for (int i = 0; i < tp_groups; i++)
    sim.tp_colls[i] = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  for (int i = 0; i < dp_groups; i++)
    sim.dp_colls[i] = g_array_new (FALSE, FALSE, sizeof (uint32_t));

  /* Rank r is (stage, replica, tp_rank) in Megatron's order; symmetric
   * mode builds rank (stage, 0, 0) of each stage. */
  for (int r = 0; r < sim.ranks; r++)
    {
      int stage = options->full ? r / (plan->dp * plan->tp) : r;
      int replica = options->full ? (r / plan->tp) % plan->dp : 0;
      int tp_rank = options->full ? r % plan->tp : 0;
      build_rank (&sim, r, stage, replica, tp_rank);
    }
  for (int r = 0; r < sim.ranks; r++)
    {
      int stage = options->full ? r / (plan->dp * plan->tp) : r;
      int replica = options->full ? (r / plan->tp) % plan->dp : 0;
      int tp_rank = options->full ? r % plan->tp : 0;
      link_pipeline (&sim, r, stage, replica, tp_rank);
    }
  gboolean ok = sim.absurd == 0;
  if (ok)
    {
      for (int i = 0; i < sim.ranks * SIM_N_STREAMS; i++)
        try_start (&sim, (uint32_t) i);
      sim_engine_run (sim.engine);
      fill_result (&sim, result);
    }
  else
    g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                 "%s: one operation of this plan would take %.3g s (more "
                 "than a day): check compute.mfu and the bandwidths",
                 e->marks.file ? e->marks.file : "experiment", sim.absurd);

  for (int i = 0; i < tp_groups; i++)
    g_array_unref (sim.tp_colls[i]);
  for (int i = 0; i < dp_groups; i++)
    g_array_unref (sim.dp_colls[i]);
  g_free (sim.tp_colls);
  g_free (sim.dp_colls);
  g_free (sim.first_op);
  g_free (sim.send_op);
  g_free (sim.pp_comm);
  g_free (sim.pp_dur);
  flow_net_free (sim.flows);
  g_free (sim.streams);
  g_free (sim.breakdown);
  g_free (sim.dp_traffic);
  GArray *arrays[] = { sim.ops, sim.edges, sim.colls, sim.members,
                       sim.comms, sim.uses, sim.coll_uses,
                       sim.layer_fwd, sim.layer_bwd, sim.attn_fwd, sim.emb_fwd,
                       sim.emb_bwd, sim.head_fwd, sim.head_bwd };
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    g_array_unref (arrays[i]);
  sim_engine_free (sim.engine);
  return ok;
}

/* Micro-batch sizes worth trying for `auto`: the divisors of the
 * per-replica batch up to 16 (Narayanan 2021 tuned within 1-8). */
#define AUTO_MAX_MICRO_BATCH 16

gboolean
sim_run (const ExperimentSpec *e, const SimOptions *options, SimResult *result,
         GError **error)
{
  if (!plan_check (e, error))
    return FALSE;
  const ParallelSpec *ps = &e->parallel;
  int per_replica = ps->global_batch / plan_dp (e);
  int chunk_max = e->model.layers / ps->pp;
  gboolean found = FALSE;
  Plan best = { 0 };
  MemoryBreakdown best_mem = { 0 };
  SimResult best_result = { 0 };
  gboolean best_fits = FALSE;
  /* With both values given there is one candidate: it is replayed once,
   * with the trace if one is asked for. Otherwise candidates replay
   * without it and the winner is replayed again to record it. */
  gboolean explicit = ps->micro_batch > 0 && ps->virtual_stages > 0;
  SimOptions candidate_options = { options->full,
                                   explicit ? options->trace : NULL };

  for (int b = 1; b <= per_replica; b++)
    {
      if (ps->micro_batch > 0 ? b != ps->micro_batch
          : (b > AUTO_MAX_MICRO_BATCH || per_replica % b != 0))
        continue;
      for (int v = 1; v <= chunk_max; v++)
        {
          if (ps->virtual_stages > 0 ? v != ps->virtual_stages
              : (v > 1 && (ps->schedule != SCHEDULE_INTERLEAVED
                           || chunk_max % v != 0 || ps->pp == 1)))
            continue;
          Plan plan;
          g_autoptr (GError) local = NULL;
          if (!plan_make (&plan, e, b, v, explicit ? error : &local))
            {
              if (explicit)
                return FALSE;
              continue;
            }
          MemoryBreakdown mem;
          plan_memory (&plan, &mem);
          gboolean fits = plan_memory_fits (&mem);
          /* A plan that fits beats one that does not; among those that
           * fit the fastest wins, among those that do not (only while
           * none fits) the smallest footprint. Memory is known before
           * the replay, so a candidate that cannot win is not replayed. */
          if (found && ((best_fits && !fits)
                        || (!best_fits && !fits
                            && mem.total >= best_mem.total)))
            continue;
          SimResult r;
          if (!sim_run_plan (&plan, &candidate_options, &r, error))
            return FALSE;
          if (found && fits && best_fits
              && r.iteration_time_s >= best_result.iteration_time_s)
            continue;
          found = TRUE;
          best = plan;
          best_mem = mem;
          best_fits = fits;
          best_result = r;
        }
    }
  if (!found)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_PLAN,
                   "%s: no micro-batch size and virtual stage count fit the "
                   "batch and the layers (per-replica batch %d, %d layers "
                   "per stage)", e->marks.file ? e->marks.file : "experiment",
                   per_replica, chunk_max);
      return FALSE;
    }
  if (options->trace != NULL && !explicit
      && !sim_run_plan (&best, options, &best_result, error))
    return FALSE;
  *result = best_result;
  return TRUE;
}
