/* sim-build.c: the builder: a plan's schedule as ops on streams; see
 * sim-private.h; sim-prepare.c makes what it reads.
 *
 * Kernels between two communication points of a rank are fused into one
 * compute op (their durations add: they run back to back on one stream),
 * which keeps a 3072-GPU plan at a few hundred thousand events. */
#include "parallel/sim-private.h"
#include "base/ledger.h"
#include "base/stats.h"
#include "config/framework.h"
#include "hw/host.h"

/* ADAM_GPU_BYTES_PER_PARAM: Adam in Megatron's mixed precision touches per parameter: the fp32 grad
 * (read twice: norm for clipping, then the update: 8), the fp32 master
 * weight, m and v (read and write: 24), and the half-precision copy it
 * writes back (2). */

/* A rank being built: its coordinates, the compute op being fused, and
 * where its host thread stands.
 *
 * The host issues every compute-stream op in program order, as eager
 * PyTorch does, and the GPU cannot start an op before the host has
 * issued it. For a fused op of kernels with GPU times g_i, each issued
 * in h, the GPU's first kernel waits for one issue, and kernel i cannot
 * start before h x i after the host began: started at H with the stream
 * free at G, the op ends at max (G, H + lead) + sum g, where
 * lead = max_i (h x i - (g_1 + ... + g_i-1)). So each compute-stream op
 * gets a host op of its lead before it, and the rest of its issuing
 * (carry) runs on the host while the GPU works. */
typedef struct {
  Sim *sim;
  int rank;               /* simulated rank index */
  int stage, replica, tp_rank;
  SimTime pending;        /* fused compute not yet emitted */
  SimTime pending_tp;     /* of pending: fused TP collectives */
  SimTime pending_ep;     /* of pending_tp: EP all-to-alls */
  SimTime pending_cp;     /* of pending_tp: CP transfers */
  SimTime pending_host;   /* the host's time to issue pending */
  SimTime lead;           /* pending's lead (above) */
  SimTime carry;          /* issuing left from the last op */
  uint32_t sync;          /* a GPU op the host waits for before issuing
                           * the next (a blocking call), or NONE */
  uint32_t wait;          /* an op the next compute op waits for (one on
                           * the compute stream in the framework), or NONE */
  const char *pending_name;
  gboolean has_pending;
  uint32_t last;          /* last op on the compute stream */
  uint32_t first_of_chunk;
  gboolean recv_to_gpu;   /* the chunk's receive holds its first GPU op,
                           * not the host */
  int mb;
  int dir;                /* of the chunk being emitted: 0 forward */
  gboolean dense;         /* the layer being emitted runs dense_* */
  uint32_t beside;        /* an EP all-to-all on the EP stream beside the */
  int beside_left;        /* pieces left of those it runs beside, or 0 */
  uint32_t joined[GROUP_N];  /* collectives joined, per group kind */
  EpilogueOp epilogue[EPILOGUE_MAX];   /* sim_epilogue_ops of the stage */
  int n_epilogue;
  /* ZeRO-3: the gather of the module being emitted, the module's first
   * op, and the last ops of the two modules before it. */
  uint32_t gather, module_first, module_last[2];
} Builder;

/* A rank's build between emissions: the Builder, where in the stage's
 * schedule it stands, and what the step's end (rank_end) needs. */
struct RankBuild {
  Builder b;
  guint next;             /* the next item of the stage's schedule */
  uint32_t last_dp;       /* the last gradient reduction, or NONE */
  double stage_params;
  int tensors;
  uint32_t firsts[SIM_WINDOW];   /* of the last items built, by index
                                  * modulo SIM_WINDOW */
};

gsize
sim_rank_build_bytes (void)
{
  return sizeof (RankBuild);
}

/* ---- building ops --------------------------------------------------------- */


static uint32_t
add_op (Sim *sim, int rank, SimStream s, OpKind kind, SimTime dur,
        const char *name, int mb)
{
  Op op = { dur, 0, 0, NONE, NONE, NONE, 0, NONE,
            (uint32_t) (rank * SIM_N_STREAMS + s), NONE, NONE, kind, 0 };
  uint32_t id = sim->free_ops;
  if (id != NONE)
    {
      sim->free_ops = op_at (sim, id)->next;
      *op_at (sim, id) = op;
#if defined __GNUC__
      /* The next free op, done long ago, is cold: it is on its way
       * while this one is linked (a hint; NONE's address is not read). */
      if (sim->free_ops != NONE)
        __builtin_prefetch (op_at (sim, sim->free_ops));
#endif
    }
  else
    {
      id = sim_store_add (&sim->ops);
      *op_at (sim, id) = op;
    }
  /* What lives beside an op is indexed by its id, which may be reused. */
  if (sim->fused != NULL)
    {
      if (id >= sim->fused->len)
        g_array_set_size (sim->fused, id + 1);
      g_array_index (sim->fused, FusedParts, id) = (FusedParts) { 0 };
    }
  if (sim->op_info != NULL)
    {
      if (id >= sim->op_info->len)
        g_array_set_size (sim->op_info, id + 1);
      g_array_index (sim->op_info, OpInfo, id) = (OpInfo) { name, mb, 0 };
    }
  Stream *st = &sim->streams[op.stream];
  /* A stream whose ops are all done starts again at this one (its old
   * tail may have been reused). */
  if (st->head == NONE)
    st->head = id;
  else
    op_at (sim, st->tail)->next = id;
  st->tail = id;
  st->added++;
  return id;
}

/* add_op for an op of SECONDS, which ticks checks under the op's NAME. */
static uint32_t
add_timed_op (Sim *sim, int rank, SimStream s, OpKind kind, double seconds,
              const char *name, int mb)
{
  return add_op (sim, rank, s, kind, sim_ticks (sim, seconds, name), name, mb);
}

/* Puts an edge FROM -> TO in FROM, or on its list past the first,
 * reusing a freed one. */
static void
push_edge (Sim *sim, uint32_t from, uint32_t to)
{
  Op *f = op_at (sim, from);
  if (f->to == NONE)
    {
      f->to = to;
      return;
    }
  Edge e = { to, f->edges };
  uint32_t id = sim->free_edges;
  if (id != NONE)
    sim->free_edges = ((Edge *) sim_store_at (&sim->edges, id))->next;
  else
    id = sim_store_add (&sim->edges);
  *(Edge *) sim_store_at (&sim->edges, id) = e;
  f->edges = id;
}

/* TO waits for FROM. A FROM already done (sim_emit builds ahead, and
 * some ops finish before what depends on them is built) is nothing to
 * wait for; it stands as what released TO where it ended last, as
 * finish_op would have made it, and TO starts no earlier than its end
 * (a host op's, run ahead of time: sim.c, run_host). */
static void
add_edge (Sim *sim, uint32_t from, uint32_t to)
{
  const Op *f = op_at (sim, from);
  Op *t = op_at (sim, to);
  if (f->flags & OP_DONE)
    {
      op_depends (t, from, f->end);
      return;
    }
  push_edge (sim, from, to);
  t->waits++;
}

/* ---- emitting a rank's program ---------------------------------------------- */


/* The factor of RANK's K-th compute-stream op: the expected slowest in
 * symmetric mode; in full mode the rank's factor and a jitter draw keyed
 * by the rank and K, so that the builder and the breakdown (sim.c,
 * counting the ops the stream finished) find the same draw. */
double
sim_gpu_factor (const Sim *sim, int rank, uint32_t k)
{
  double f = sim->gpu_factor;
  if (sim->rank_factor != NULL)
    f *= sim->rank_factor[rank];
  if (sim->options->full && sim->jitter > 0)
    f *= stats_factor_of (stats_key (2 * sim->seed + 1,
                                     ((guint64) rank << 32) | k), sim->jitter);
  return f;
}

/* Makes OP the rank's next collective over its group of kind g: the
 * k-th collective of a group is one instance shared by its simulated
 * members (sim_group_members), which starts when the last of them arrives. */
static void
join_group (Builder *b, uint32_t op, Group g)
{
  Sim *sim = b->sim;
  if (sim->op_info != NULL)
    g_array_index (sim->op_info, OpInfo, op).group = sim_group_size (sim, g);
  int size = sim_group_members (sim, g);
  if (size <= 1)
    return;
  CollQueue *q = &sim->colls_of[g][sim_group_index (sim, g, b->stage,
                                                    b->replica, b->tp_rank)];
  guint at = q->head + (b->joined[g]++ - q->base);
  if (at == q->ids->len)
    {
      /* A finished instance of as many members, or a new one. */
      GArray *freed = g_hash_table_lookup (sim->free_colls,
                                           GUINT_TO_POINTER (size));
      uint32_t cid;
      if (freed != NULL && freed->len > 0)
        {
          cid = g_array_index (freed, uint32_t, freed->len - 1);
          g_array_set_size (freed, freed->len - 1);
          Coll *c = &g_array_index (sim->colls, Coll, cid);
          c->arrived = c->filled = 0;
        }
      else
        {
          Coll c = { (uint32_t) size, 0, sim->members->len, 0 };
          g_array_set_size (sim->members, sim->members->len + size);
          g_array_append_val (sim->colls, c);
          cid = sim->colls->len - 1;
        }
      g_array_append_val (q->ids, cid);
    }
  uint32_t cid = g_array_index (q->ids, uint32_t, at);
  Coll *c = &g_array_index (sim->colls, Coll, cid);
  g_array_index (sim->members, uint32_t, c->members + c->filled++) = op;
  /* Instances every member has joined leave the queue; its array is
   * compacted once they are most of it. */
  while (q->head < q->ids->len
         && g_array_index (sim->colls, Coll,
                           g_array_index (q->ids, uint32_t, q->head)).filled
            == (uint32_t) size)
    q->head++, q->base++;
  if (q->head >= 64 && 2 * q->head >= q->ids->len)
    {
      g_array_remove_range (q->ids, 0, q->head);
      q->head = 0;
    }
  op_at (sim, op)->coll = cid;
}

void
sim_free_coll (Sim *sim, uint32_t cid)
{
  uint32_t n = g_array_index (sim->colls, Coll, cid).n;
  GArray *freed = g_hash_table_lookup (sim->free_colls, GUINT_TO_POINTER (n));
  if (freed == NULL)
    {
      freed = g_array_new (FALSE, FALSE, sizeof (uint32_t));
      g_hash_table_insert (sim->free_colls, GUINT_TO_POINTER (n), freed);
    }
  g_array_append_val (freed, cid);
}

/* Adds a compute-stream op and, with a host model, the host op that
 * issues it first: waiting for the sync op, if one is due. Of its DUR,
 * GPU is kernels' time, which topology.variability stretches. */
static uint32_t
add_issued (Builder *b, OpKind kind, SimTime dur, SimTime gpu,
            const char *name, SimTime lead, SimTime host)
{
  Sim *sim = b->sim;
  uint32_t issue = NONE;
  if (sim->host_launch > 0)
    {
      if (b->sync != NONE && b->carry > 0)
        {
          add_op (sim, b->rank, SIM_STREAM_HOST, OPK_HOST, b->carry, "host",
                  b->mb);
          b->carry = 0;
        }
      issue = add_op (sim, b->rank, SIM_STREAM_HOST, OPK_HOST,
                      sim_time_add (b->carry, lead), "issue", b->mb);
      if (b->sync != NONE)
        add_edge (sim, b->sync, issue);
      b->sync = NONE;
      b->carry = MAX (host - lead, 0);
    }
  double f = sim_gpu_factor (sim, b->rank, sim->streams[
    b->rank * SIM_N_STREAMS + SIM_STREAM_COMPUTE].added);
  if (f != 1)
    dur = sim_time_add (dur - gpu, sim_time_from_ps ((double) gpu * f));
  uint32_t id = add_op (sim, b->rank, SIM_STREAM_COMPUTE, kind, dur, name,
                        b->mb);
  if (issue != NONE)
    add_edge (sim, issue, id);
  if (b->wait != NONE)
    add_edge (sim, b->wait, id);
  b->wait = NONE;
  /* A chunk's receive is what its first host op waits for, or its first
   * GPU op where the host does not wait (recv_to_gpu). */
  if (b->first_of_chunk == NONE)
    b->first_of_chunk = issue != NONE && !b->recv_to_gpu ? issue : id;
  if (b->module_first == NONE)
    b->module_first = id;
  b->last = id;
  return id;
}



static void
flush (Builder *b)
{
  if (!b->has_pending)
    return;
  /* Of a fused op, only the kernels vary: its TP collectives are the
   * network's. */
  add_issued (b, OPK_COMPUTE, b->pending, b->pending - b->pending_tp,
              b->pending_name, b->lead, b->pending_host);
  if (b->sim->fused != NULL)
    g_array_index (b->sim->fused, FusedParts, b->last)
      = (FusedParts) { b->pending_tp, b->pending_ep, b->pending_cp };
  else
    g_assert (b->pending_tp == 0);   /* only fused builds fuse TP */
  b->has_pending = FALSE;
  b->pending = b->pending_tp = b->pending_ep = b->pending_cp = 0;
  b->pending_host = b->lead = 0;
}

/* An EP all-to-all's op ID, of piece P: it joins no peers (each rank's
 * runs when it arrives); across nodes its bytes are a flow on the NICs.
 * The token counts' all-gather (no bytes on the piece) keeps its time. */
static void
ep_op (Builder *b, uint32_t id, const Piece *p)
{
  Sim *sim = b->sim;
  if (sim->op_info != NULL)
    g_array_index (sim->op_info, OpInfo, id).group = sim->ls.ep;
  if (sim->ep_flows && p->bytes > 0)
    op_at (sim, id)->comm = sim_moe_comm (
      sim, sim_global_rank (sim, b->stage, b->replica, b->tp_rank), b->stage,
      p->bytes);
}

static void emit_piece (Builder *b, const Piece *p, const char *phase);

static void
emit_program (Builder *b, const Program *prog, const char *phase)
{
  Sim *sim = b->sim;
  /* Fused, but for EP all-to-alls that run as flows, and for the host's
   * reads back, which cut it (below). */
  if (sim->fuse_tp && (prog->ep_pieces == 0 || !sim->ep_flows)
      && prog->sync_pieces == 0)
    {
      /* All of it joins the compute op being fused: saturating sums of
       * non-negative times add in any order to the same total. */
      if (!b->has_pending)
        b->pending_name = phase;
      /* The program's lead, counted from where the fused op stands. */
      b->lead = MAX (b->lead, b->pending_host + prog->lead - b->pending);
      b->pending_host = sim_time_add (b->pending_host, prog->host);
      b->pending = sim_time_add (b->pending, prog->time);
      b->pending_tp = sim_time_add (b->pending_tp, prog->tp_time);
      b->pending_ep = sim_time_add (b->pending_ep, prog->ep_time);
      b->pending_cp = sim_time_add (b->pending_cp, prog->cp_time);
      b->has_pending = TRUE;
      return;
    }
  for (guint i = 0; i < prog->pieces->len; i++)
    {
      gboolean beside = b->beside_left > 0;
      const Piece *p = &g_array_index (prog->pieces, Piece, i);
      emit_piece (b, p, phase);
      /* One that the host reads back ends the op it joins, and the host
       * waits for that op before it issues the next. */
      if (p->syncs)
        {
          flush (b);
          b->sync = b->last;
        }
      /* The side stream's last piece: what follows waits for the
       * all-to-all beside them too. */
      if (beside && --b->beside_left == 0)
        {
          flush (b);
          b->wait = b->beside;
        }
    }
}

/* A piece of a program that emit_program does not fuse whole. */
static void
emit_piece (Builder *b, const Piece *p, const char *phase)
{
  Sim *sim = b->sim;
  SimTime host = p->launches * sim->host_launch;
  if (p->kind == OPK_EP && p->alongside > 0 && sim->ep_flows)
    {
      /* Its flow runs on a stream of its own beside the pieces after
       * it, from where the compute stream stands. */
      flush (b);
      uint32_t id = add_op (sim, b->rank, SIM_STREAM_EP, OPK_EP, p->dur,
                            p->name, b->mb);
      if (b->last != NONE)
        add_edge (sim, b->last, id);
      ep_op (b, id, p);
      b->beside = id;
      b->beside_left = p->alongside;
      return;
    }
  gboolean comm = p->kind == OPK_TP || p->kind == OPK_CP;
  if (p->kind == OPK_COMPUTE || (sim->fuse_tp && comm))
    {
      if (!b->has_pending)
        b->pending_name = phase;
      b->lead = MAX (b->lead, sim_piece_lead (sim->host_launch, p->launches,
                                          p->dur, b->pending_host, b->pending));
      b->pending_host = sim_time_add (b->pending_host, host);
      b->pending = sim_time_add (b->pending, p->dur);
      if (comm)
        b->pending_tp = sim_time_add (b->pending_tp, p->dur);
      if (p->kind == OPK_CP)
        b->pending_cp = sim_time_add (b->pending_cp, p->dur);
      b->has_pending = TRUE;
      return;
    }
  flush (b);
  add_issued (b, p->kind, p->dur, 0, p->name,
              sim_piece_lead (sim->host_launch, p->launches, p->dur, 0, 0), host);
  if (p->kind == OPK_TP)
    join_group (b, b->last, GROUP_TP);
  if (p->kind == OPK_EP)
    ep_op (b, b->last, p);
}

/* A data-parallel collective op on the rank's DP stream: its duration
 * at the static NIC share, and a Comm when its bytes cross NICs. */
static uint32_t
add_dp_op (Builder *b, SimStream stream, CollKind kind, double bytes,
           const char *name)
{
  Sim *sim = b->sim;
  CollCost c = net_collective_cost (&sim->net, kind, bytes,
                                    sim_group_shape (sim, GROUP_DP, b->stage),
                                    -1, 0);
  uint32_t id = add_timed_op (sim, b->rank, stream, OPK_DP,
                              net_static_time (&sim->net, &c, 0), name,
                              stream == SIM_STREAM_GATHER ? b->mb : -1);
  /* What a ring sends per GPU (Rajbhandari 2020 section 7): an
   * all-reduce twice what a reduce-scatter or an all-gather does. */
  const Plan *p = sim->plan;
  sim->dp_traffic[b->rank] += (kind == COLL_ALL_REDUCE ? 2 : 1)
                              * (double) (p->dp - 1) / p->dp * bytes;
  join_group (b, id, GROUP_DP);
  int ranks[SPEC_MAX_GPUS_PER_NODE];
  double scale[SPEC_MAX_GPUS_PER_NODE];
  int rank = sim_global_rank (sim, b->stage, b->replica, b->tp_rank);
  int n = sim_stage_ranks_in_node (sim, rank, b->stage, ranks);
  /* nic_bytes is per member where the group has the fewest members in a
   * node (c.per_node); a node with more members carries the same ring
   * traffic, each of them a share of it. */
  for (int i = 0; i < n; i++)
    scale[i] = (double) c.per_node
               / MAX (1, net_group_members_in_node (
                   &sim->net, b->stage * p->dp * p->tp + ranks[i] % p->tp,
                   p->dp, p->tp, ranks[i] / sim->net.gpus_per_node));
  op_at (sim, id)->comm = sim_make_comm (sim, &c, ranks, NULL, scale, n);
  return id;
}

/* The Comm of a copy of `bytes` over PCIe between this rank's GPU and
 * the host (to_host: gradients or checkpoints down; else parameters or
 * checkpoints up), and in *SECONDS its time at the static share: through
 * the GPU's own link, which its NIC traffic also crosses, and its
 * switch's link to the host, which the GPUs behind one PCIe switch share
 * (host.gpus_per_pcie_switch); in symmetric mode the representative
 * loads them for the GPUs of its stage there. A copy's launch costs a few
 * microseconds, nothing next to a bucket's milliseconds: no latency. */
static uint32_t
pcie_comm (Builder *b, gboolean to_host, double bytes, double *seconds)
{
  Sim *sim = b->sim;
  const HostSpec *h = &sim->plan->spec->topology.host;
  int gpn = sim->net.gpus_per_node, per = h->gpus_per_pcie_switch;
  int ranks[SPEC_MAX_GPUS_PER_NODE];
  int rank = sim_global_rank (sim, b->stage, b->replica, b->tp_rank);
  int n = sim_stage_ranks_in_node (sim, rank, b->stage, ranks);
  Comm comm = { { .nic_bytes = bytes }, sim->uses->len, 0 };
  for (int i = 0; i < n; i++)
    {
      uint32_t base = sim_node_resources (sim, ranks[i] / gpn);
      sim_add_use (sim->uses, comm.first,
                   base + (uint32_t) (sim->pcie_base + 2 * ((ranks[i] % gpn) / per)
                                      + (to_host ? 0 : 1)), 1);
      sim_add_use (sim->uses, comm.first,
                   sim_gpu_link (sim, base, ranks[i] % gpn, to_host), 1);
    }
  comm.n = sim->uses->len - comm.first;
  double shared = 1;
  for (guint u = comm.first; u < sim->uses->len; u++)
    shared = MAX (shared, g_array_index (sim->uses, FlowUse, u).coef);
  g_array_append_val (sim->comms, comm);
  *seconds = bytes * shared / h->pcie_bandwidth;
  return sim->comms->len - 1;
}

/* The copy (pcie_comm) as an op on the offload stream of its direction. */
static uint32_t
add_pcie_op (Builder *b, gboolean to_host, double bytes, const char *name)
{
  Sim *sim = b->sim;
  double seconds;
  uint32_t comm = pcie_comm (b, to_host, bytes, &seconds);
  uint32_t id = add_timed_op (sim, b->rank, to_host ? SIM_STREAM_TO_HOST
                                                    : SIM_STREAM_FROM_HOST,
                              OPK_OFFLOAD, seconds, name, b->mb);
  op_at (sim, id)->comm = comm;
  return id;
}

/* OFFLOAD_GRAD_BYTES: bytes a parameter of the gradient partition that
 * CPU offload copies to the host: the optimizer's fp32 gradient, cast on the GPU first
 * (DeepSpeed's async_inplace_copy_grad_to_fp32_buffer_from_gpu,
 * zero/stage2.py v0.3.16 and stage_1_and_2.py v0.10: src.float()), the
 * 4 bytes plan.c's HOST_OPTIMIZER_BYTES keeps for it; taken as the same
 * for FSDP. */

/* The gradients of `params` parameters, complete after op `after`: the
 * data-parallel reduction in the reduction's precision (grad_bytes), an
 * all-reduce, or from ZeRO stage 1 a reduce-scatter (but in DeepSpeed
 * 0.3's ZeRO-2 and 3); then with CPU offload the copy of this rank's
 * partition to the host. Returns the last op, NONE when nothing moves. */
static uint32_t
emit_grads (Builder *b, double params, uint32_t after)
{
  Sim *sim = b->sim;
  const Plan *plan = sim->plan;
  double bytes = params * sim->grad_bytes;
  uint32_t last = NONE;
  if (plan->dp > 1)
    {
      CollKind kind = plan->spec->zero.stage >= 1 && !sim->zero_allreduce
                      ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
      last = add_dp_op (b, SIM_STREAM_DP, kind, bytes,
                        kind == COLL_ALL_REDUCE ? "dp_allreduce"
                                                : "dp_reduce_scatter");
      add_edge (sim, after, last);
    }
  if (sim->offload != OFFLOAD_NONE)
    {
      uint32_t down = add_pcie_op (b, TRUE,
                                   params * LEDGER (OFFLOAD_GRAD_BYTES) / plan->dp,
                                   "offload_gradients");
      add_edge (sim, last != NONE ? last : after, down);
      last = down;
    }
  return last;
}

/* The parameters of the layer being emitted. */
static double
layer_params (const Builder *b)
{
  return b->dense ? b->sim->dense_params : b->sim->layer_params;
}

/* The modules ZeRO-3 gathers one at a time. */
typedef enum { MODULE_EMBEDDING, MODULE_LAYER, MODULE_HEAD } ModuleKind;

/* ZeRO-3 as DeepSpeed 0.3.x-0.4.x ran it (framework.c, DEEPSPEED_03):
 * one all-gather per parameter tensor, each with a collective's latency:
 * a layer's four weight matrices and eight vectors (biases, the layer
 * norms' gains and biases), the embedding's word (and position) tables,
 * the head's final layer norm (and the output layer's weight: its own,
 * or the tied word embedding's with pp > 1).
 * The weights are split evenly among their tensors: only the count of
 * collectives changes the cost, the bytes add up the same. Returns the
 * last gather; the first waits for AFTER. */
static uint32_t
gather_tensors (Builder *b, ModuleKind kind, double params, uint32_t after)
{
  Sim *sim = b->sim;
  double w = sim->cm.bytes_per_element;
  double big = kind == MODULE_LAYER ? (b->dense ? sim->dense_weights
                                                 : sim->layer_weights)
               : kind == MODULE_EMBEDDING ? params
               : params - 2.0 * sim->ls.h;
  int n_big = kind == MODULE_LAYER ? 4
              : kind == MODULE_EMBEDDING ? 1 + (sim->ls.position_rows > 0)
              : big > 0;
  int n_small = kind == MODULE_LAYER ? 8 : kind == MODULE_EMBEDDING ? 0 : 2;
  uint32_t last = after;
  for (int i = 0; i < n_big + n_small; i++)
    {
      double bytes = (i < n_big ? big / n_big : (params - big) / n_small) * w;
      /* It called PyTorch's list all_gather, whose ProcessGroupNCCL
       * copies the gathered buffer into each of the dp outputs
       * (ProcessGroupNCCL::allgather): dp copy_ kernels that C++ launches
       * on the host, a pass over the bytes on the GPU (read and write). */
      uint32_t issue = NONE;
      if (sim->host_launch > 0)
        {
          issue = add_timed_op (sim, b->rank, SIM_STREAM_HOST, OPK_HOST,
                                sim->cm.op_launch_s * sim->plan->dp, "issue_gather",
                                b->mb);
          if (last != NONE)
            add_edge (sim, last, issue);
        }
      uint32_t id = add_dp_op (b, SIM_STREAM_GATHER, COLL_ALL_GATHER, bytes,
                               "zero3_gather");
      add_edge (sim, issue != NONE ? issue : last, id);
      last = add_timed_op (sim, b->rank, SIM_STREAM_GATHER, OPK_DP,
                           compute_memory_time (&sim->cm, 2 * bytes), "zero3_copy_out",
                           b->mb);
      add_edge (sim, id, last);
    }
  return last;
}

/* Whether the module being emitted waits for its parameters' gather:
 * every module under ZeRO-3; with param_prefetch, each module's first
 * forward of the step (micro-batch 0 of each chunk). */
static gboolean
gathers (const Builder *b)
{
  return b->sim->zero3 || (b->sim->param_prefetch && b->dir == 0 && b->mb == 0);
}

/* ZeRO-3 (Rajbhandari 2020 section 5.3, DeepSpeed stage 3): a module's
 * parameters are all-gathered before its forward and again before its
 * backward, on their own stream. DeepSpeed's prefetcher issues module k's
 * gather as module k-1 starts, so it hides behind k-1's compute and two
 * modules at most are whole at once (plan.c counts them). With the
 * parameters offloaded, the shard comes up over PCIe first. DeepSpeed
 * 0.3 (zero3_per_tensor) instead synchronized the device before each
 * gather and at each module: its gathers, tensor by tensor, start when
 * the compute before them ends, and the host waits for them.
 *
 * Megatron-Core's distributed optimizer with --overlap-param-gather
 * (param_prefetch; megatron/core/optimizer/distrib_optimizer.py,
 * core_r0.8.0) gathers the updated parameters the same way, once, under
 * the next step's first forward: zero_grad dispatches the first bucket's
 * all-gather before the forward, and the forward pre-hook of a module
 * waits for its bucket's and dispatches the next (_make_forward_pre_hook,
 * _dispatch_gather_model_params), buckets in the forward's order. A
 * bucket is at least 40M parameters (distributed_data_parallel.py), a
 * layer or more; trainsim gathers a module at a time, so models whose
 * layers are smaller pay more latencies than Megatron does. In the
 * steady state that one step's replay stands for, the gathers of the
 * step before run under this step's first forward. */
static void
begin_module (Builder *b, ModuleKind kind)
{
  Sim *sim = b->sim;
  if (!gathers (b))
    return;
  double params = kind == MODULE_LAYER ? layer_params (b)
                  : kind == MODULE_EMBEDDING ? sim->emb_params
                  : sim->head_params;
  flush (b);
  b->module_first = NONE;   /* the module's first compute-stream op */
  double bytes = params * sim->cm.bytes_per_element;
  uint32_t up = sim->offload == OFFLOAD_OPTIMIZER_PARAMS
    ? add_pcie_op (b, FALSE, bytes / sim->plan->dp, "offload_fetch") : NONE;
  if (sim->zero3_per_tensor)
    {
      if (up != NONE && b->last != NONE)
        add_edge (sim, b->last, up);
      b->gather = gather_tensors (b, kind, params, up != NONE ? up : b->last);
      b->sync = b->gather;
      return;
    }
  b->gather = add_dp_op (b, SIM_STREAM_GATHER, COLL_ALL_GATHER, bytes,
                         sim->zero3 ? "zero3_gather" : "dp_allgather_params");
  if (up != NONE)
    add_edge (sim, up, b->gather);
  /* The fetch (or the gather) starts once module k-2 is done. */
  if (b->module_last[1] != NONE)
    add_edge (sim, b->module_last[1], up != NONE ? up : b->gather);
}

static void
end_module (Builder *b)
{
  if (!gathers (b))
    return;
  flush (b);
  add_edge (b->sim, b->gather, b->module_first);
  b->module_last[1] = b->module_last[0];
  b->module_last[0] = b->last;
}

/* A copy of a checkpoint between the GPU and the host (cpu_checkpointing)
 * as PyTorch makes it, blocking: on the compute stream, with the host
 * waiting for it (a copy between host and device with
 * non_blocking=False synchronizes the stream: .cpu() in forward, .to()
 * or copy_ from the host's pageable memory in backward, which trainsim
 * costs at the link's rate as it does offload's copies). */
static void
checkpoint_copy (Builder *b, gboolean to_host, const char *name)
{
  Sim *sim = b->sim;
  double seconds;
  flush (b);
  uint32_t comm = pcie_comm (b, to_host, sim->ckpt_bytes, &seconds);
  add_issued (b, OPK_OFFLOAD, sim_ticks (sim, seconds, name), 0, name,
              sim->host_launch, sim->host_launch);
  op_at (sim, b->last)->comm = comm;
  b->sync = b->last;
}

/* DeepSpeed's CheckpointFunction (deepspeed/runtime/activation_checkpointing/
 * checkpointing.py, v0.6.0; the same costs from v0.3.16 to v0.13.2)
 * around one layer, its checkpoint the layer's input (sim->ckpt; one
 * layer a checkpoint, Megatron-DeepSpeed's --checkpoint-num-layers and
 * the pipeline's activation_checkpoint_interval default). With
 * synchronize_checkpoint_boundary, torch.cuda.synchronize () as its
 * forward and backward begin and end: the host waits for the device (for
 * its compute stream here). Forward, before the layer runs: partition_
 * activations clones this rank's 1/t of the input, contiguous_memory_
 * optimization copies that into its buffer (or, with cpu_checkpointing,
 * into a host buffer instead of .cpu ()), cpu_checkpointing copies the
 * checkpoint to the host. Backward, before the recompute: the copy back,
 * then gather_partitioned_activations zeroes a whole buffer, copies the
 * partition in and all-gathers it over the TP group with dist.all_gather
 * (no async_op, its transport_stream commented out: the recompute waits
 * for it on the compute stream; the host does not). DIR: 0 forward, 1
 * backward. */
static void
begin_checkpoint (Builder *b, int dir)
{
  Sim *sim = b->sim;
  const ActivationCheckpointing *ac = sim->ckpt;
  if (ac == NULL)
    return;
  if (ac->synchronize_checkpoint_boundary)
    {
      flush (b);
      b->sync = b->last;
    }
  if (dir == 0 && sim->ckpt_save.pieces->len > 0)
    emit_program (b, &sim->ckpt_save, "forward");
  if (ac->cpu_checkpointing)
    checkpoint_copy (b, dir == 0, dir == 0 ? "checkpoint_to_host"
                                           : "checkpoint_from_host");
  if (dir == 1 && sim->ckpt_load.pieces->len > 0)
    emit_program (b, &sim->ckpt_load, "backward");
}

static void
end_checkpoint (Builder *b)
{
  if (b->sim->ckpt == NULL || !b->sim->ckpt->synchronize_checkpoint_boundary)
    return;
  flush (b);
  b->sync = b->last;
}

/* One module's program (its recomputed forward first, if any) between
 * ZeRO-3's gather of its parameters and the next module's. DeepSpeed 0.3
 * released the parameters after the recomputed forward and gathered them
 * again for the backward. */
static void
emit_module (Builder *b, ModuleKind kind, const Program *recompute,
             const Program *program, const char *phase)
{
  begin_module (b, kind);
  if (recompute != NULL)
    {
      emit_program (b, recompute, phase);
      if (b->sim->zero3_per_tensor)
        {
          end_module (b);
          begin_module (b, kind);
        }
    }
  emit_program (b, program, phase);
  end_module (b);
}

/* The Comm of a send of cost c from this rank's GPUs to the same GPUs of
 * PEER_STAGE (those of the stage in the rank's node in symmetric mode). */
static uint32_t
stage_send_comm (Builder *b, int peer_stage, const CollCost *c)
{
  Sim *sim = b->sim;
  int stride = sim->plan->dp * sim->plan->tp;
  int ranks[SPEC_MAX_GPUS_PER_NODE], peers[SPEC_MAX_GPUS_PER_NODE];
  int rank = sim_global_rank (sim, b->stage, b->replica, b->tp_rank);
  int n = sim_stage_ranks_in_node (sim, rank, b->stage, ranks);
  for (int i = 0; i < n; i++)
    peers[i] = ranks[i] + (peer_stage - b->stage) * stride;
  return sim_make_comm (sim, c, ranks, peers, NULL, n);
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
  sim->pp_dur[k] = sim_ticks (sim, net_static_time (&sim->net, &c, 0),
                          dir == 0 ? "send_activations" : "send_gradients");
  sim->pp_comm[k] = stage_send_comm (b, peer_stage, &c);
}

/* Index of (direction, micro-batch, chunk) in first_op / send_op. */
static size_t
slot (const Sim *sim, int rank, int dir, int mb, int chunk)
{
  const Plan *p = sim->plan;
  return (((size_t) rank * 2 + dir) * p->micro_batches + mb)
         * p->virtual_stages + chunk;
}

/* The simulated rank of virtual stage VSTAGE in this rank's pipeline
 * (its replica and tp rank), and the chunk it runs there. */
static int
pipeline_peer (const Builder *b, int vstage, int *chunk)
{
  const Sim *sim = b->sim;
  const Plan *p = sim->plan;
  int stage = vstage % p->pp;
  *chunk = vstage / p->pp;
  return sim->options->full ? (stage * p->dp + b->replica) * p->tp + b->tp_rank
                            : stage;
}

/* Links the chunk just built to the send it receives, as whichever of
 * the two is built second: a send built first waits in send_op for its
 * receiver; a receiver built first waits in first_op, its first op
 * holding one wait for the send to come. */
static void
link_receive (Builder *b, int dir, int mb, int chunk)
{
  Sim *sim = b->sim;
  const Plan *p = sim->plan;
  int from = chunk * p->pp + b->stage + (dir == 0 ? -1 : 1);
  if (from < 0 || from >= p->pp * p->virtual_stages)
    return;
  int from_chunk, from_rank = pipeline_peer (b, from, &from_chunk);
  uint32_t *send = &sim->send_op[slot (sim, from_rank, dir, mb, from_chunk)];
  if (*send != NONE)
    {
      add_edge (sim, *send, b->first_of_chunk);
      op_at (sim, *send)->flags &= ~OP_PINNED;
      *send = NONE;
      return;
    }
  sim->first_op[slot (sim, b->rank, dir, mb, chunk)] = b->first_of_chunk;
  op_at (sim, b->first_of_chunk)->waits++;
}

/* The other half: the send just built (b->last) of chunk (dir, mb,
 * chunk). */
static void
link_send (Builder *b, int dir, int mb, int chunk)
{
  Sim *sim = b->sim;
  int to_chunk, to_rank = pipeline_peer (
    b, chunk * sim->plan->pp + b->stage + (dir == 0 ? 1 : -1), &to_chunk);
  uint32_t *first = &sim->first_op[slot (sim, to_rank, dir, mb, to_chunk)];
  if (*first != NONE)
    {
      push_edge (sim, b->last, *first);   /* its wait is counted */
      *first = NONE;
      return;
    }
  sim->send_op[slot (sim, b->rank, dir, mb, chunk)] = b->last;
  op_at (sim, b->last)->flags |= OP_PINNED;
}

/* ---- the step's epilogue ---------------------------------------------------- */

/* sim-epilogue.c lists what each framework runs around its optimizer
 * (sim_epilogue_ops); here each is emitted on a rank's compute stream. */

/* Emits epilogue op o on the compute stream: the host first reads the
 * device back where o says so (waiting for what the stream waits for
 * next, the reduction, if anything), issues o's kernels (those of a
 * read-back loop one after another, which the GPU op waits for), and
 * reads o's result after it where it says so. The tied embedding's is
 * a send of the whole gradient from each of the two stages to the other,
 * and loads the NICs as a flow. */
static uint32_t
emit_epilogue_op (Builder *b, const EpilogueOp *o)
{
  Sim *sim = b->sim;
  const Plan *p = sim->plan;
  /* After the compute pieces before it. */
  flush (b);
  if (o->read_before || o->serial > 0)
    b->sync = b->wait != NONE ? b->wait : b->last;
  CollCost c;
  int peer = b->stage == 0 ? p->pp - 1 : 0;
  if (o->group == GROUP_EMBEDDING)
    {
      int stride = p->dp * p->tp;
      c = net_send_cost (&sim->net, o->bytes, b->stage * stride, peer * stride);
      c.pipelined = FALSE;
    }
  else
    c = net_collective_cost (&sim->net, o->kind, o->bytes,
                             sim_group_shape (sim, o->group, b->stage), -1, 0);
  /* A read-back loop's checks are bare tensor ops from a Python loop
   * (x.float().sum() and float(): has_overflow_serial, _has_inf_or_nan),
   * each issued at a bare op's cost (OP_LAUNCH_S, a torch.add from
   * Python), not at the 45 us a kernel of module-level code. */
  SimTime host = sim_time_add (o->serial * sim_ticks (sim, sim->cm.op_launch_s,
                                                  "op_launch"),
                               o->launches * sim->host_launch);
  uint32_t id = add_issued (b, OPK_EPILOGUE,
                            sim_ticks (sim, net_static_time (&sim->net, &c, 0), o->name),
                            0, o->name, host, host);
  if (o->group == GROUP_EMBEDDING)
    op_at (sim, id)->comm = stage_send_comm (b, peer, &c);
  join_group (b, id, o->group);
  if (o->read_after)
    b->sync = id;
  return id;
}

/* Emits the ops of the rank's epilogue at PLACE (b->epilogue), in order. */
static void
emit_epilogue (Builder *b, EpiloguePlace place)
{
  for (int i = 0; i < b->n_epilogue; i++)
    if (b->epilogue[i].place == place)
      for (int k = 0; k <= b->epilogue[i].repeat; k++)
        emit_epilogue_op (b, &b->epilogue[i]);
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
   * backward when ZeRO-2 or 3 keeps only a shard of them (grads_each). */
  gboolean moves = plan->dp > 1 || sim->offload != OFFLOAD_NONE;
  gboolean bucketing = (final || sim->grads_each)
                       && plan_dp_overlaps (e) && moves;
  double bucket = 0, bucket_cap = e->parallel.bucket_bytes / sim->grad_bytes;

  b->mb = mb;
  b->dir = dir;
  b->first_of_chunk = NONE;
  /* Megatron times each micro-batch's forward and backward with timers
   * that synchronize the device (megatron/schedules.py, forward_step and
   * backward_step; global_vars.py _Timer.start and stop: Megatron-LM
   * v2.6): the host issues a chunk only once the GPU has finished the
   * last, and it waits for the chunk's receive (p2p_communication.py
   * synchronizes after it). DeepSpeed's pipeline engine makes no such
   * call of its own (its ThroughputTimer's start() would, but only once
   * stop() has run twice, and the pipeline never calls it:
   * pipe/engine.py, utils/timer.py, v0.3.16 to v0.9.5), and its p2p.recv
   * holds the stream, not the host. The host waits where the code reads the
   * device back: on the first and last stage as a forward's batch loads
   * (Megatron-DeepSpeed's get_batch_pipe: broadcast_data copies the
   * sizes to the GPU and back, mpu/data.py); where tp > 1 partitions
   * what stages send, on a receiving stage as it reads the partition's
   * metadata back (PartitionedTensor.from_meta, runtime/utils.py), before
   * a forward but on the first stage and a backward but on the last; and
   * before the last stage's backward, which DeepSpeedEngine.backward runs
   * and which from v0.9.3 to v0.13.2 reads the loss back first
   * (loss.mean().item(): DeepSpeed PRs #3428 and #4030; #5135 took it
   * out "to improve performance"). Elsewhere (at tp 1, a middle stage's
   * forward and a backward but on the last stage) the host issues the
   * chunk at once and its receive holds only the GPU. */
  const FrameworkProfile *fw = e->framework;
  gboolean synced = !fw->deepspeed_pipe_syncs
    || (dir == 0 ? first || last || plan->tp > 1
                 : last ? fw->loss_item_sync : plan->tp > 1);
  b->sync = synced ? b->last : NONE;
  b->recv_to_gpu = !synced;
  if (dir == 0)
    {
      if (first)
        emit_module (b, MODULE_EMBEDDING, NULL, &sim->emb_fwd, "forward");
      for (int l = 0; l < plan_chunk_layers (plan, b->stage); l++)
        {
          b->dense = sim_layer_is_dense (sim, b->stage, chunk, l);
          begin_checkpoint (b, dir);
          if (mb == 0 && sim->fp8_weights.pieces != NULL)
            emit_program (b, b->dense ? &sim->dense_fp8_weights
                                      : &sim->fp8_weights, "forward");
          emit_module (b, MODULE_LAYER, NULL,
                       b->dense ? &sim->dense_fwd : &sim->layer_fwd, "forward");
          end_checkpoint (b);
        }
      emit_epilogue (b, EPILOGUE_FP8_FORWARD);
      if (sim->fp8_update[0].pieces != NULL)
        emit_program (b, &sim->fp8_update[0], "forward");
      if (last)
        emit_module (b, MODULE_HEAD, NULL, &sim->head_fwd, "forward");
    }
  else
    {
      /* Gradients accumulate in place where each rank holds them whole
       * (ZeRO 0-1; ZeRO 2-3 reduce them into partitions instead): on
       * every micro-batch, or with autograd's on all but the first. */
      gboolean accumulates = e->zero.stage < 2
        && (mb > 0 || e->parallel.grad_accumulation != GRAD_ACC_AUTOGRAD);
      if (last)
        {
          emit_module (b, MODULE_HEAD, NULL,
                       accumulates ? &sim->head_bwd_acc : &sim->head_bwd,
                       "backward");
          bucket += sim->head_params;
        }
      for (int l = 0; l < plan_chunk_layers (plan, b->stage); l++)
        {
          b->dense = sim_layer_is_dense (sim, b->stage, chunk, l);
          const Program *bwd = b->dense
            ? (accumulates ? &sim->dense_bwd_acc : &sim->dense_bwd)
            : (accumulates ? &sim->layer_bwd_acc : &sim->layer_bwd);
          const Program *rc = b->dense && sim->recompute == &sim->layer_fwd
                              ? &sim->dense_fwd : sim->recompute;
          begin_checkpoint (b, dir);
          emit_module (b, MODULE_LAYER, rc, bwd, "backward");
          end_checkpoint (b);
          bucket += layer_params (b);
          if (bucketing && bucket >= bucket_cap)
            {
              flush (b);
              *last_dp = emit_grads (b, bucket, b->last);
              bucket = 0;
            }
        }
      emit_epilogue (b, EPILOGUE_FP8_BACKWARD);
      if (sim->fp8_update[1].pieces != NULL)
        emit_program (b, &sim->fp8_update[1], "backward");
      if (first)
        {
          emit_module (b, MODULE_EMBEDDING, NULL,
                       accumulates ? &sim->emb_bwd_acc : &sim->emb_bwd,
                       "backward");
          bucket += sim->emb_params;
        }
    }
  flush (b);
  /* Megatron averages each micro-batch's loss over the data-parallel
   * group as its forward ends (sim_epilogue_ops). */
  if (dir == 0 && last)
    emit_epilogue (b, EPILOGUE_IN_FORWARD);
  /* Without buckets, ZeRO-2 and 3 still reduce each backward's gradients,
   * after it and before the next compute (DeepSpeed's overlap_comm:
   * false reduces on the compute stream). */
  if ((bucketing || (dir == 1 && sim->grads_each)) && bucket > 0)
    {
      *last_dp = emit_grads (b, bucket, b->last);
      if (!bucketing)
        b->wait = *last_dp;
    }

  g_assert (b->first_of_chunk != NONE);
  link_receive (b, dir, mb, chunk);
  /* Activations go to the next virtual stage, gradients to the previous. */
  gboolean sends = dir == 0 ? !last : !first;
  if (sends)
    {
      /* Megatron's p2p_communication waits for its isend/irecv requests
       * (and synchronizes the device) before the next compute: a send
       * blocks the sender's compute stream, and its host. DeepSpeed's
       * blocks the stream only; with tp > 1 it first partitions the
       * tensor, and copying the partition's metadata to the device
       * (PartitionedTensor.to_meta, runtime/utils.py) waits for the
       * compute before it. */
      if (e->framework->deepspeed_pipe_syncs && plan->tp > 1)
        b->sync = b->last;
      build_pp_comm (b, dir);
      size_t k = (size_t) b->rank * 2 + dir;
      add_issued (b, OPK_PP, sim->pp_dur[k], 0,
                  dir == 0 ? "send_activations" : "send_gradients",
                  sim->host_launch, sim->host_launch);
      op_at (sim, b->last)->comm = sim->pp_comm[k];
      link_send (b, dir, mb, chunk);
    }
}

/* ---- schedules ------------------------------------------------------------ */

typedef struct {
  int dir, mb, chunk;
  gboolean final;         /* the chunk's last backward: its gradients are
                           * complete */
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

/* Stage s's schedule, each chunk's last backward marked final. */
static GArray *
stage_schedule (const Plan *p, int s)
{
  GArray *items = g_array_new (FALSE, FALSE, sizeof (Item));
  schedule_items (p, s, items);
  g_autofree gboolean *seen = g_new0 (gboolean, (gsize) p->virtual_stages);
  for (guint i = items->len; i-- > 0;)
    {
      Item *it = &g_array_index (items, Item, i);
      if (it->dir == 1 && !seen[it->chunk])
        it->final = seen[it->chunk] = TRUE;
    }
  return items;
}

/* Marks op ID (or nothing, NONE) as within reach. */
static void
mark (Sim *sim, uint32_t id)
{
  if (id != NONE)
    op_at (sim, id)->flags |= OP_MARK;
}

/* Puts on the free list every op that is done and out of reach. A done
 * op is read again only as what released one not done (account in
 * sim.c, and through a host op what released that), by its rank's
 * builder (an edge from it), or as a send waiting in send_op for its
 * receiver (OP_PINNED). It runs between events (sim_emit), when nothing
 * else holds an op, in two passes in order over the store (the ops not
 * done are found in it, not by walking their streams, which misses the
 * cache at every op): sim_emit runs it when the free list is empty and
 * the store has doubled since, so the passes are paid by as many new
 * ops. */
static void
collect (Sim *sim)
{
  for (int r = 0; r < sim->ranks; r++)
    {
      const RankBuild *rb = &sim->builds[r];
      const Builder *b = &rb->b;
      uint32_t held[] = { b->sync, b->wait, b->last, b->first_of_chunk,
                          b->beside, b->gather, b->module_first,
                          b->module_last[0], b->module_last[1], rb->last_dp,
                          sim->trigger[r] };
      for (guint i = 0; i < G_N_ELEMENTS (held); i++)
        mark (sim, held[i]);
      for (int i = 0; i < SIM_WINDOW; i++)
        mark (sim, rb->firsts[i]);
    }
  for (uint32_t id = 0; id < sim->ops.len; id++)
    {
      const Op *op = op_at (sim, id);
      if ((op->flags & (OP_DONE | OP_FREE)) || op->released_by == NONE)
        continue;
      mark (sim, op->released_by);
      const Op *dep = op_at (sim, op->released_by);
      if (dep->kind == OPK_HOST)
        mark (sim, dep->released_by);
    }
  uint32_t live = 0;
  for (uint32_t id = 0; id < sim->ops.len; id++)
    {
      Op *op = op_at (sim, id);
      if ((op->flags & (OP_DONE | OP_FREE | OP_MARK | OP_PINNED)) == OP_DONE)
        {
          op->flags |= OP_FREE;
          op->next = sim->free_ops;
          sim->free_ops = id;
          continue;
        }
      live += !(op->flags & OP_FREE);
      op->flags &= ~OP_MARK;
    }
  sim->collect_at = (uint32_t) MIN (MAX ((uint64_t) sim->ops.len, 2 * (uint64_t) live),
                                    UINT32_MAX);
}

/* Begins simulated rank RANK, (stage, replica, tp_rank): its builder,
 * its parameters and its epilogue; sim_emit builds its items. */
static void
rank_begin (Sim *sim, int rank, int stage, int replica, int tp_rank)
{
  const Plan *plan = sim->plan;
  RankBuild *rb = &sim->builds[rank];
  *rb = (RankBuild) {
    .b = { .sim = sim, .rank = rank, .stage = stage, .replica = replica,
           .tp_rank = tp_rank, .last = NONE, .first_of_chunk = NONE,
           .sync = NONE, .wait = NONE, .mb = -1, .gather = NONE,
           .module_first = NONE, .beside = NONE,
           .module_last = { NONE, NONE } },
    .last_dp = NONE };
  for (int i = 0; i < SIM_WINDOW; i++)
    rb->firsts[i] = NONE;
  int v = plan->virtual_stages;
  /* Parameter tensors: a layer's 12 (QKV, projection, FC1 and FC2
   * weights and biases, two layer norms' scales and shifts), the
   * embedding's word table (and position table), the final layer norm's
   * 2 and the output layer's weight where the last stage holds one (its
   * own, or a tied copy with pp > 1). */
  for (int c = 0; c < v; c++)
    {
      int vstage = c * plan->pp + stage;
      for (int l = 0; l < plan_chunk_layers (plan, stage); l++)
        rb->stage_params += sim_layer_is_dense (sim, stage, c, l)
                            ? sim->dense_params : sim->layer_params;
      rb->tensors += 12 * plan_chunk_layers (plan, stage);
      if (vstage == 0)
        rb->stage_params += sim->emb_params,
        rb->tensors += 1 + (sim->ls.position_rows > 0);
      if (vstage == plan->pp * v - 1)
        rb->stage_params += sim->head_params,
        rb->tensors += 2 + (transformer_output_params (&sim->ls, plan->pp) > 0);
    }
  rb->b.n_epilogue = sim_epilogue_ops (sim, stage, rb->tensors,
                                       rb->b.epilogue);
}

/* The step's end on a rank, once its last item is built: the epilogue,
 * the gradients' reduction where it did not overlap, the optimizer. */
static void
rank_end (Sim *sim, RankBuild *rb)
{
  const Plan *plan = sim->plan;
  const ExperimentSpec *e = plan->spec;
  Builder *b = &rb->b;
  int rank = b->rank;
  double stage_params = rb->stage_params;
  int tensors = rb->tensors;
  b->mb = -1;
  emit_epilogue (b, EPILOGUE_BEFORE_REDUCTION);
  if (!plan_dp_overlaps (e) && !sim->grads_each)
    rb->last_dp = emit_grads (b, stage_params, b->last);
  /* The compute stream goes on once the gradients are reduced. */
  if (rb->last_dp != NONE)
    b->wait = rb->last_dp;
  emit_epilogue (b, EPILOGUE_BEFORE_OPTIMIZER);

  /* The optimizer updates this rank's share of the parameters once every
   * gradient is reduced: on the GPU, or with offload on the host's CPUs
   * (ZeRO-Offload's CPU-Adam, which DeepSpeed runs after backward), whose
   * updated half-precision shard then comes back up. ZeRO 1-2 then
   * all-gather the updated parameters; ZeRO-3 gathers them as the next
   * step needs them. With the delayed parameter update, the CPUs run
   * the previous step's update while this step's forward and backward
   * use the parameters of the step before (Ren et al. 2021, ZeRO-Offload,
   * section 5): in the steady state the replay stands for, the update
   * starts with the step and waits for no gradient; the step ends when
   * both it and the GPUs are done. */
  double opt_params = stage_params / (e->zero.stage >= 1 ? plan->dp : 1);
  gboolean delayed = sim->offload != OFFLOAD_NONE
                     && e->zero.offload_delayed_update;
  uint32_t opt, updated, gather = NONE;
  if (sim->offload == OFFLOAD_NONE)
    {
      /* Megatron's mixed-precision step (megatron/optimizer/optimizer.py
       * and clip_grads.py, v2.6), once the host has read back the
       * overflow flag and the norm (the epilogue's ops before it),
       * launches the clip and the copy to the half-precision weights
       * (apex multi_tensor_apply ops) and Adam in launches of at most 36
       * tensors (apex's depth-4 list limit). Where the framework's
       * epilogue is not modelled, the unscale, the norm and their two
       * all-reduces are launched here too, and the host waits for the
       * reduction first, as it reads them back. */
      int launches = 2 + (tensors + 35) / 36;
      if (sim->epilogue == EPILOGUE_NONE)
        {
          launches += 4;
          b->sync = rb->last_dp != NONE ? rb->last_dp : b->last;
        }
      SimTime host = launches * sim->host_launch;
      SimTime adam = sim_ticks (sim, compute_memory_time (
        &sim->cm, opt_params * LEDGER (ADAM_GPU_BYTES_PER_PARAM)), "optimizer");
      opt = updated = add_issued (b, OPK_OPTIMIZER, adam, adam,
                                  "optimizer", host, host);
    }
  else
    {
      opt = updated = add_timed_op (sim, rank, SIM_STREAM_CPU, OPK_OFFLOAD,
                                    opt_params * sim->adam_s_per_param, "cpu_adam", -1);
      if (sim->offload == OFFLOAD_OPTIMIZER)
        {
          updated = add_pcie_op (b, FALSE, opt_params * sim->cm.bytes_per_element,
                                 "offload_parameters");
          add_edge (sim, opt, updated);
        }
      if (rb->last_dp != NONE && !delayed)
        add_edge (sim, rb->last_dp, opt);
    }
  if (e->zero.stage >= 1 && e->zero.stage <= 2 && plan->dp > 1
      && !sim->param_prefetch)
    {
      double bytes = stage_params * sim->cm.bytes_per_element;
      gather = add_dp_op (b, SIM_STREAM_DP, COLL_ALL_GATHER, bytes,
                          "dp_allgather_params");
      add_edge (sim, updated, gather);
    }
  /* DeepSpeed aggregates the loss once OptimizerStep has returned: the
   * update done and ZeRO's parameters gathered (a delayed update runs
   * on). */
  uint32_t step_end = gather != NONE ? gather : updated;
  if (!delayed && step_end != b->last)
    b->wait = step_end;
  emit_epilogue (b, EPILOGUE_AFTER_OPTIMIZER);
}


/* Builds RANK's next item of its stage's schedule, and the step's end
 * after the last, and notes the item's first op on the stream that
 * starts items (its host's, or its compute stream without a host
 * model). */
static void
emit_item (Sim *sim, int rank)
{
  RankBuild *rb = &sim->builds[rank];
  const GArray *items = sim->stage_items[rb->b.stage];
  const Item *it = &g_array_index (items, Item, rb->next);
  Stream *st = &sim->streams[rank * SIM_N_STREAMS
                             + (sim->host_launch > 0 ? SIM_STREAM_HOST
                                                     : SIM_STREAM_COMPUTE)];
  uint32_t tail = st->head == NONE ? NONE : st->tail, added = st->added;
  emit_chunk (&rb->b, it->dir, it->mb, it->chunk, it->final, &rb->last_dp);
  g_assert (st->added > added);
  rb->firsts[rb->next % SIM_WINDOW] = tail == NONE ? st->head
                                                   : op_at (sim, tail)->next;
  if (++rb->next == items->len)
    rank_end (sim, rb);
}

/* The op whose start has RANK's next item built: the first of the item
 * SIM_WINDOW before it (struct RankBuild), NONE once all are built. */
static void
set_trigger (Sim *sim, int rank)
{
  const RankBuild *rb = &sim->builds[rank];
  sim->trigger[rank] = rb->next < sim->stage_items[rb->b.stage]->len
    ? rb->firsts[(rb->next - SIM_WINDOW) % SIM_WINDOW] : NONE;
}

void
sim_emit (Sim *sim, int rank)
{
  if (sim->free_ops == NONE && sim->ops.len >= sim->collect_at)
    collect (sim);
  emit_item (sim, rank);
  set_trigger (sim, rank);
#ifdef TRAINSIM_CHECKS
  /* Nothing just built can start yet: each op waits, through its stream
   * or an edge, for what the trigger began (SIM_WINDOW); one that could
   * would have started before it was built. The host's ops are the
   * exception: the trigger's host ran them ahead of time (sim.c,
   * run_host), and runs the new ones next. Checked in the sanitizers'
   * build: reading every stream's head op took a tenth of `--full`. */
  for (int i = 0; i < SIM_N_STREAMS; i++)
    {
      if (i == SIM_STREAM_HOST)
        continue;
      const Stream *st = &sim->streams[rank * SIM_N_STREAMS + i];
      g_assert (st->busy || st->head == NONE
                || op_at (sim, st->head)->waits > 0);
    }
#endif
}

/* ---- the build ------------------------------------------------------------ */

void
sim_build (Sim *sim, const SimCost *cost)
{
  const Plan *plan = sim->plan;
  const SimOptions *options = sim->options;
  const ExperimentSpec *e = plan->spec;
  sim_store_init (&sim->ops, sizeof (Op), cost->held_ops);
  sim_store_init (&sim->edges, sizeof (Edge), cost->held_edges);
  sim->colls = g_array_new (FALSE, FALSE, sizeof (Coll));
  sim->members = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  sim->comms = g_array_new (FALSE, FALSE, sizeof (Comm));
  sim->uses = g_array_new (FALSE, FALSE, sizeof (FlowUse));
  sim->coll_uses = g_array_new (FALSE, FALSE, sizeof (FlowUse));
  sim->use_at = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  sim->pp_comm = g_new (uint32_t, (gsize) sim->ranks * 2);
  sim->pp_dur = g_new (SimTime, (gsize) sim->ranks * 2);
  for (int i = 0; i < sim->ranks * 2; i++)
    sim->pp_dur[i] = -1;
  const HostSpec *host = &e->topology.host;
  if (sim->offload != OFFLOAD_NONE)
    sim->adam_s_per_param = e->topology.gpus_per_node
                           / host_cpu_adam_rate (host);
  if (sim->net.has_network || sim_host_copies (sim))
    {
      int nic_side = sim->net.has_network ? 2 * sim->net.nics + 2 : 0;
      int switches = sim_host_copies (sim)
        ? sim->net.gpus_per_node / host->gpus_per_pcie_switch : 0;
      sim->pcie_base = nic_side;
      sim->gpu_link_base = switches > 0 ? nic_side + 2 * switches : -1;
      sim->resources_per_node = nic_side + 2 * switches
        + (switches > 0 ? 2 * sim->net.gpus_per_node : 0);
      sim->flows = flow_net_new (sim->engine, 0, NULL);
      sim->node_resources = g_hash_table_new (NULL, NULL);
    }
  sim->streams = g_new (Stream, (gsize) sim->ranks * SIM_N_STREAMS);
  for (int i = 0; i < sim->ranks * SIM_N_STREAMS; i++)
    sim->streams[i] = (Stream) { NONE, NONE, FALSE, 0 };
  sim->breakdown = g_new0 (Breakdown, (gsize) sim->ranks);
  sim->dp_traffic = g_new0 (double, (gsize) sim->ranks);
  size_t slots = (size_t) sim->ranks * 2 * plan->micro_batches
                 * plan->virtual_stages;
  sim->first_op = g_new (uint32_t, slots);
  sim->send_op = g_new (uint32_t, slots);
  for (size_t i = 0; i < slots; i++)
    sim->first_op[i] = sim->send_op[i] = NONE;
  for (int g = 0; g < GROUP_N; g++)
    {
      sim->groups_of[g] = sim_group_count (sim, (Group) g);
      sim->colls_of[g] = g_new0 (CollQueue, (gsize) sim->groups_of[g]);
      for (int i = 0; i < sim->groups_of[g]; i++)
        sim->colls_of[g][i].ids = g_array_new (FALSE, FALSE, sizeof (uint32_t));
    }
  sim->free_colls = g_hash_table_new_full (NULL, NULL, NULL,
                                           (GDestroyNotify) g_array_unref);
  sim->free_ops = sim->free_edges = NONE;
  sim->stage_items = g_new (GArray *, (gsize) plan->pp);
  for (int s = 0; s < plan->pp; s++)
    sim->stage_items[s] = stage_schedule (plan, s);
  sim->builds = g_new (RankBuild, (gsize) sim->ranks);
  sim->trigger = g_new (uint32_t, (gsize) sim->ranks);
  sim->offload_tail = g_new0 (double, (gsize) sim->ranks);
  sim->critical = sim->ranks;

  /* Rank r is (stage, replica, tp_rank) in Megatron's order; symmetric
   * mode builds rank (stage, 0, 0) of each stage. Each rank's first
   * sim->window items are built now, the rest as the replay reaches
   * them (sim_emit). */
  for (int r = 0; r < sim->ranks; r++)
    {
      int stage = options->full ? r / (plan->dp * plan->tp) : r;
      int replica = options->full ? (r / plan->tp) % plan->dp : 0;
      int tp_rank = options->full ? r % plan->tp : 0;
      rank_begin (sim, r, stage, replica, tp_rank);
      guint n = sim->stage_items[stage]->len;
      for (guint k = 0; k < n && k < (guint) sim->window; k++)
        emit_item (sim, r);
      set_trigger (sim, r);
    }
  sim->collect_at = MAX (SIM_COLLECT_MIN, 2 * sim->ops.len);
}
