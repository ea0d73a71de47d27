/* sim.c: the executor; see sim.h.
 *
 * An op's life:
 *
 *   created --(all deps done and heads its stream)--> ready
 *   ready --(no peers, or the last peer arrives)--> running
 *   running --(completion event)--> done: the stream moves to its next op,
 *                                   successors lose one wait
 *
 * The ops come from the builder, sim-build.c.
 *
 * The host's ops (SIM_STREAM_HOST: issuing the next compute-stream op)
 * wait for nothing but the host op before them and the GPU or receive
 * they were built to wait for, and lead only to the op they issue: once
 * free to start, a host op's start and end are known, so it is run at
 * once without an event (run_host), and what it issues takes its end as
 * the earliest time it can start (Op.start, until it starts). An op whose
 * other waits are over before that starts at that time through an event
 * (on_deferred), as it started on the host op's end before; where the
 * host runs ahead of the GPU, as it mostly does, no event is needed. Half
 * of a replay's ops are the host's (issue 36). */
#include "parallel/sim-private.h"
#include "base/errors.h"
#include "base/text.h"
#include "config/framework.h"

static const char *const op_kind_category[OPK_N] = {
  "compute", "tp", "pp", "dp", "optimizer", "offload", "host", "epilogue", "ep",
  "cp",
};

static const char *const stream_names[SIM_N_STREAMS] = {
  "compute", "pp send", "dp", "zero gather", "to host", "from host", "cpu adam",
  "host", "ep",
};

/* ---- running ---------------------------------------------------------------- */

static void on_op_done (SimEngine *engine, void *ctx, uint64_t arg);

static void try_start (Sim *sim, uint32_t stream);
static void on_emit (SimEngine *engine, void *ctx, uint64_t arg);

/* RANK's trigger op starts at AT: the rank's next item is built then
 * (sim-build.c), before anything scheduled for that time later on (the
 * trigger's own end among it). */
static void
trigger_at (Sim *sim, int rank, SimTime at)
{
  sim->trigger[rank] = NONE;
  sim_engine_schedule (sim->engine, at, on_emit, sim, (uint64_t) rank);
}

/* A rank's trigger op started: its next item is built (sim-build.c).
 * Its host may have run the next trigger already (run_host): that one's
 * start builds the item after, as if it started now. Then the host runs
 * what it can of the item built. */
static void
on_emit (SimEngine *engine, void *ctx, uint64_t arg)
{
  Sim *sim = ctx;
  int rank = (int) arg;
  sim_emit (sim, rank);
  uint32_t t = sim->trigger[rank];
  if (t != NONE && (op_at (sim, t)->flags & OP_DONE))
    trigger_at (sim, rank, MAX (op_at (sim, t)->start, sim_engine_now (engine)));
  try_start (sim, (uint32_t) rank * SIM_N_STREAMS + SIM_STREAM_HOST);
}

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
  SimTime end = c->pipelined ? MAX (now, sim_time_add (op->start, intra))
                              : sim_time_add (now, intra);
  sim_engine_schedule (engine,
                       sim_time_add (end, sim_time_from_s (c->latency_s)),
                       on_op_done, sim, arg);
}

/* A bursty background (net.h): the flow net's uplinks hold what the job
 * keeps on average over the bursts, so a flow that starts in an on window
 * weighs more on them, and one in an off window less, by what the job
 * keeps in that window over the mean. A flow keeps its first window's
 * share for its life: a DP bucket or a pipeline send lasts well under the
 * NET_BURST_WINDOW_S of a window. The uses are rewritten in place in
 * sim->coll_uses, copied there first when they are not already. */
static const FlowUse *
burst_uses (Sim *sim, const FlowUse *uses, guint n, SimTime now)
{
  const NetModel *net = &sim->net;
  if (net->background_pattern != BACKGROUND_BURSTY || net->background_load <= 0)
    return uses;
  if (uses != (const FlowUse *) (void *) sim->coll_uses->data)
    {
      g_array_set_size (sim->coll_uses, 0);
      g_array_append_vals (sim->coll_uses, uses, n);
    }
  int64_t window = now / sim_time_from_s (NET_BURST_WINDOW_S);
  double scale = net->background_keep
    / net_background_keep_at (net, net_background_load_in (net, window));
  FlowUse *out = (FlowUse *) (void *) sim->coll_uses->data;
  for (guint u = 0; u < n; u++)
    {
      uint32_t k = out[u].resource % (uint32_t) sim->resources_per_node;
      if (k == sim_uplink (sim, TRUE) || k == sim_uplink (sim, FALSE))
        out[u].coef *= scale;
    }
  return out;
}

/* Starts op id (or the collective instance in arg) at its start: as a
 * flow when its bytes cross NICs (at now), else for its fixed duration. */
static void
launch (Sim *sim, uint32_t id, uint64_t arg)
{
  Op *op = op_at (sim, id);
  SimTime now = sim_engine_now (sim->engine);
  if (op->comm == NONE)
    {
#if defined __GNUC__
      /* Its fused parts are read when it ends (account). */
      if (sim->fused != NULL && !(arg & COLL_FLAG))
        __builtin_prefetch (&g_array_index (sim->fused, FusedParts, id));
#endif
      /* From its start, which a host op may have put past now. */
      sim_engine_schedule_touching (sim->engine, sim_time_add (op->start,
                                                               op->dur),
                                    on_op_done, sim, arg, op);
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
              /* One entry per resource, found through use_at: members
               * share NICs, and a scan of the entries made a ring of
               * hundreds of nodes quadratic. */
              uint32_t *at = &g_array_index (sim->use_at, uint32_t,
                                             use->resource);
              if (*at == NONE)
                {
                  *at = sim->coll_uses->len;
                  g_array_append_val (sim->coll_uses, *use);
                }
              else
                g_array_index (sim->coll_uses, FlowUse, *at).coef += use->coef;
            }
        }
      uses = (const FlowUse *) (void *) sim->coll_uses->data;
      n = sim->coll_uses->len;
      for (guint u = 0; u < n; u++)
        g_array_index (sim->use_at, uint32_t, uses[u].resource) = NONE;
    }
  uses = burst_uses (sim, uses, n, now);
  flow_start (sim->flows, comm->cost.nic_bytes, uses, n, on_flow_done, sim,
              arg);
}

static void run_host (Sim *sim, uint32_t stream);

/* Stream ARG's head op may start: the host has issued it. */
static void
on_deferred (SimEngine *engine, void *ctx, uint64_t arg)
{
  (void) engine;
  Sim *sim = ctx;
  sim->streams[arg].busy = FALSE;
  try_start (sim, (uint32_t) arg);
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
  if (op->kind == OPK_HOST)
    {
      run_host (sim, stream);
      return;
    }
  SimTime now = sim_engine_now (sim->engine);
  st->busy = TRUE;
  /* Issued by the host later (Op.start): an op of fixed length takes its
   * start then and nothing can come between, for the stream is held; a
   * collective's peers and a flow's sharers see it start then through
   * an event. */
  if (op->start > now && (op->coll != NONE || op->comm != NONE))
    {
      sim_engine_schedule (sim->engine, op->start, on_deferred, sim, stream);
      return;
    }
  SimTime at = MAX (now, op->start);
  st->ready = at;
  int rank = (int) (stream / SIM_N_STREAMS);
  if (id == sim->trigger[rank])
    trigger_at (sim, rank, at);
  if (op->coll == NONE)
    {
      op->start = at;
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
account (Sim *sim, uint32_t id, Stream *st)
{
  const Op *op = op_at (sim, id);
  int rank = (int) (op->stream / SIM_N_STREAMS);
  Breakdown *bd = &sim->breakdown[rank];
  SimTime ready = st->ready;
  const Op *dep = op->released_by == NONE ? NULL
                  : op_at (sim, op->released_by);
  if (ready > st->last_end && dep != NULL && dep->kind == OPK_HOST)
    {
      /* Idle while the host issued this op is host-bound; before that
       * the host itself waited (for a receive, or the GPU at a sync):
       * that part goes to what it waited for. */
      SimTime from = MAX (dep->start, st->last_end);
      bd->host += sim_time_to_s (ready - from);
      ready = from;
      dep = dep->released_by == NONE ? NULL : op_at (sim, dep->released_by);
    }
  double gap = sim_time_to_s (ready - st->last_end);
  if (gap > 0)
    {
      if (dep != NULL && dep->kind == OPK_PP)
        {
          SimTime lo = MAX (dep->start, st->last_end);
          SimTime hi = MIN (dep->end, ready);
          double exposed = hi > lo ? sim_time_to_s (hi - lo) : 0;
          bd->pp_comm += exposed;
          bd->bubble += gap - exposed;
        }
      else if (dep != NULL && dep->kind == OPK_DP)
        bd->dp_comm += gap;
      else if (dep != NULL && dep->kind == OPK_OFFLOAD)
        bd->offload += gap;
      else if (dep != NULL && dep->kind == OPK_EP)
        bd->ep_comm += gap;
      else
        bd->bubble += gap;
    }
  double busy = sim_time_to_s (op->end - st->ready);
  switch ((OpKind) op->kind)
    {
    case OPK_TP: bd->tp_comm += busy; break;
    case OPK_PP: bd->pp_comm += busy; break;
    /* A copy to or from the host on the compute stream (cpu_checkpointing). */
    case OPK_OFFLOAD: bd->offload += busy; break;
    case OPK_OPTIMIZER:
      {
        double slow = busy * (1 - 1 / sim_gpu_factor (sim, rank, st->finished));
        bd->variability += slow;
        bd->optimizer += busy - slow;
      }
      break;
    case OPK_EPILOGUE: bd->epilogue += busy; break;
    case OPK_EP: bd->ep_comm += busy; break;
    case OPK_CP: bd->cp_comm += busy; break;
    case OPK_COMPUTE:
      {
        FusedParts f = sim->fused != NULL
          ? g_array_index (sim->fused, FusedParts, id) : (FusedParts) { 0 };
        double gpu = busy - sim_time_to_s (f.tp);
        double slow = gpu * (1 - 1 / sim_gpu_factor (sim, rank, st->finished));
        bd->tp_comm += sim_time_to_s (f.tp - f.ep - f.cp);
        bd->ep_comm += sim_time_to_s (f.ep);
        bd->cp_comm += sim_time_to_s (f.cp);
        bd->variability += slow;
        bd->compute += gpu - slow;
      }
      break;
    case OPK_DP:
    case OPK_N:
    default: bd->compute += busy; break;
    }
  st->last_end = op->end;
  st->finished++;
  /* Offload that ran past this op ran past no later one yet. */
  sim->offload_tail[rank] = 0;
}

/* Op TO has one wait fewer, FROM done; at none it may start, but not
 * before FROM's end (a host op's, run ahead of time). What released it
 * is the dependency that ends last, the later one released of a tie: a
 * host op run ahead is released first, so at an equal end the GPU op or
 * receive it ties with is named (the breakdown charges the wait to it
 * rather than to the host; only exact ties differ from an event order). */
static void
release (Sim *sim, uint32_t to, uint32_t from)
{
  Op *op = op_at (sim, to);
  op_depends (op, from, op_at (sim, from)->end);
  if (--op->waits == 0)
    try_start (sim, op->stream);
}

/* Op ID is done at END: its stream moves on, what waits for it loses a
 * wait. The caller starts the stream's next op. */
static void
complete_op (Sim *sim, uint32_t id, SimTime end)
{
  Op *op = op_at (sim, id);
  Stream *st = &sim->streams[op->stream];
  int rank = (int) (op->stream / SIM_N_STREAMS);
  op->end = end;
  op->flags |= OP_DONE;
  st->busy = FALSE;
  st->head = op->next;
  /* The step ends with its last op; the critical rank is the lowest
   * that ends it. */
  if (op->end > sim->end || (op->end == sim->end && rank < sim->critical))
    {
      sim->end = op->end;
      sim->critical = rank;
    }
  if (op->stream % SIM_N_STREAMS == SIM_STREAM_COMPUTE)
    account (sim, id, st);
  else if (op->kind == OPK_OFFLOAD)
    {
      /* Its time past the rank's last compute op so far (fill_result
       * keeps what is past the last of all). */
      SimTime compute_end = sim->streams[rank * SIM_N_STREAMS
                                         + SIM_STREAM_COMPUTE].last_end;
      if (op->end > compute_end)
        sim->offload_tail[rank] += sim_time_to_s (
          op->end - MAX (op->start, compute_end));
    }
  if (sim->options->trace != NULL)
    {
      const OpInfo *info = &g_array_index (sim->op_info, OpInfo, id);
      TraceSpan span = { info->name, op_kind_category[op->kind],
                         (int) (op->stream / SIM_N_STREAMS),
                         (int) (op->stream % SIM_N_STREAMS), info->mb,
                         op->start, op->end, info->group };
      sim->options->trace (sim->options->trace_ctx, &span);
    }
  /* Each edge is read once, here, and then free for another: the later
   * ones first, newest first, then the first (sim-build.c, push_edge). */
  for (uint32_t e = op->edges; e != NONE;)
    {
      Edge *edge = (Edge *) (void *)
        sim->edges.blocks[e >> sim->edges.shift] + (e & sim->edges.mask);
      release (sim, edge->to, id);
      uint32_t next = edge->next;
      edge->next = sim->free_edges;
      sim->free_edges = e;
      e = next;
    }
  if (op->to != NONE)
    release (sim, op->to, id);
  op->edges = op->to = NONE;
}

static void
finish_op (Sim *sim, uint32_t id)
{
  complete_op (sim, id, sim_engine_now (sim->engine));
  try_start (sim, op_at (sim, id)->stream);
}

/* Runs host stream STREAM's ops that are free to start, each once the
 * one before it ends (Stream.last_end) and not before now: their times
 * are known (the file's head says why no event is needed). A trigger
 * among them has the rank's next item built at its start, as any
 * trigger's start does. */
static void
run_host (Sim *sim, uint32_t stream)
{
  Stream *st = &sim->streams[stream];
  SimTime now = sim_engine_now (sim->engine);
  int rank = (int) (stream / SIM_N_STREAMS);
  while (st->head != NONE)
    {
      uint32_t id = st->head;
      Op *op = op_at (sim, id);
      if (op->waits > 0)
        return;
      op->start = MAX (op->start, MAX (now, st->last_end));
      if (id == sim->trigger[rank])
        trigger_at (sim, rank, op->start);
      SimTime end = sim_time_add (op->start, op->dur);
      /* A saturated time ends the run as an event would (engine.h): the
       * first op that reaches it schedules one that never fires. */
      if (end == SIM_TIME_MAX && st->last_end != SIM_TIME_MAX)
        sim_engine_schedule (sim->engine, end, on_emit, sim, (uint64_t) rank);
      st->last_end = end;
      complete_op (sim, id, end);
    }
}

#if defined __GNUC__
/* The engine's warm hook (engine.h): what finishing op TOUCH reads past
 * it, asked for while the events before it run: its stream, the op after
 * it there (which starts next) and the op its first edge releases. A
 * replay of many ranks waited on these misses in finish_op and
 * try_start. */
static void
warm_op (const void *touch, void *ctx)
{
  Sim *sim = ctx;
  const Op *op = touch;
  __builtin_prefetch (&sim->streams[op->stream]);
  if (op->next != NONE)
    __builtin_prefetch (op_at (sim, op->next));
  if (op->to != NONE)
    __builtin_prefetch (op_at (sim, op->to));
}
#endif

static void
on_op_done (SimEngine *engine, void *ctx, uint64_t arg)
{
  Sim *sim = ctx;
  if (!(arg & COLL_FLAG))
    {
      finish_op (sim, (uint32_t) arg);
      return;
    }
  uint32_t cid = (uint32_t) arg;
  const Coll *c = &g_array_index (sim->colls, Coll, cid);
  for (uint32_t i = 0; i < c->n; i++)
    finish_op (sim, g_array_index (sim->members, uint32_t, c->members + i));
  sim_free_coll (sim, cid);
}

/* ---- results ---------------------------------------------------------------- */

/* Copies the name SRC into a result's field, cut (beyond
 * SIM_RESULT_NAME - 1 bytes) at a whole UTF-8 character, not inside one:
 * names come from YAML, which is UTF-8, and a broken character would make
 * the CSV and table invalid text. */
static void
copy_name (char dst[SIM_RESULT_NAME], const char *src)
{
  const char *end;
  if (g_strlcpy (dst, src, SIM_RESULT_NAME) >= SIM_RESULT_NAME
      && !g_utf8_validate (dst, -1, &end))
    dst[end - dst] = '\0';
}

static void
fill_result (Sim *sim, SimResult *r)
{
  const Plan *p = sim->plan;
  const ExperimentSpec *e = p->spec;
  SimTime end = sim->end;
  int critical = sim->critical;
  g_assert (critical < sim->ranks);
  for (int i = 0; i < sim->ranks * SIM_N_STREAMS; i++)
    g_assert (sim->streams[i].head == NONE);   /* nothing deadlocked */
  for (int i = 0; i < sim->ranks; i++)
    g_assert (sim->trigger[i] == NONE);   /* every item built */

  double t = sim_time_to_s (end);
  int64_t gb = e->parallel.global_batch;
  /* With fp8 the peak is the bf16 one (training.precision holds bf16):
   * MFU counts against the dense bf16 rate, not the FP8 GEMMs' rate. */
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
    transformer_megatron_flops (&e->model, gb, p->tp) / t / gpus / 1e12;
  r->mfu = model / t / gpus / peak;
  r->hfu = hw / t / gpus / peak;
  r->params = plan_model_params (&e->model);
  r->active_params = plan_active_params (&e->model);
  copy_name (r->model, e->model.name ? e->model.name : "(inline)");
  copy_name (r->topology, e->topology.name ? e->topology.name : "(inline)");
  g_autofree char *framework = framework_label (e->framework);
  copy_name (r->framework, framework);
  r->schedule = spec_enum_name (SPEC_ENUM_SCHEDULE, e->parallel.schedule);
  r->recompute = spec_enum_name (SPEC_ENUM_RECOMPUTE, e->training.recompute);
  r->offload = spec_enum_name (SPEC_ENUM_OFFLOAD, e->zero.offload);
  r->precision = spec_enum_name (SPEC_ENUM_PRECISION, e->training.fp8
                                 ? PRECISION_FP8 : e->training.precision);
  r->attention = spec_enum_name (SPEC_ENUM_ATTENTION, e->training.attention);
  r->zero_stage = e->zero.stage;
  r->gpus = p->gpus;
  r->tp = p->tp;
  r->pp = p->pp;
  r->dp = p->dp / p->cp;
  r->cp = p->cp;
  r->ep = e->parallel.ep;
  r->moe = e->model.experts > 0;
  r->etp = r->moe ? e->parallel.etp : 1;
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
  double tail = t - sim_time_to_s (compute_end);
  double offload = sim->offload_tail[critical];
  offload = MIN (offload, tail);
  r->breakdown_s.offload += offload;
  r->breakdown_s.dp_comm += tail - offload;
  r->layer_forward_s = sim_time_to_s (sim->layer_fwd.time);
  r->layer_backward_s = sim_time_to_s (
    sim->layer_bwd.time
    + (sim->recompute != NULL ? sim->recompute->time : 0));
  r->events = sim_engine_events (sim->engine);
  r->graph_bytes = sim_store_bytes (sizeof (Op), sim->ops.len)
    + sim_store_bytes (sizeof (Edge), sim->edges.len)
    + (uint64_t) sim->colls->len * sizeof (Coll)
    + (uint64_t) sim->members->len * sizeof (uint32_t)
    + (uint64_t) sim->comms->len * sizeof (Comm)
    + (uint64_t) sim->uses->len * sizeof (FlowUse)
    + (sim->fused != NULL ? (uint64_t) sim->fused->len * sizeof (FusedParts) : 0)
    + (sim->op_info != NULL ? (uint64_t) sim->op_info->len * sizeof (OpInfo) : 0);
  if (e->training.tokens > 0 || e->training.tokens == SPEC_CHINCHILLA)
    {
      double iterations = plan_training_tokens (e) / ((double) gb * e->model.seq_len);
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
sim_choose_mode (const Plan *plan, const SimOptions *options,
                 SimOptions *chosen)
{
  /* Where stages share nodes, one rank per stage misses their sharing
   * of the NICs: every rank is replayed instead when that costs little
   * (SIM_FULL_AUTO_EVENTS), and the result says so when it does not. */
  *chosen = *options;
  gboolean shared = !options->full && plan_stages_share_nodes (plan);
  if (shared)
    {
      SimCost full_cost;
      chosen->full = TRUE;
      sim_plan_cost (plan, chosen, &full_cost);
      chosen->full = full_cost.events + full_cost.host_ops
                     <= SIM_FULL_AUTO_EVENTS;
    }
  return shared;
}

gboolean
sim_run_plan (const Plan *plan, const SimOptions *options, SimResult *result,
              GError **error)
{
  const ExperimentSpec *e = plan->spec;
  /* For messages: the file's name shown (base/text.h). */
  g_autofree char *file = text_shown (e->marks.file ? e->marks.file : "experiment");
  SimOptions chosen;
  gboolean shared = sim_choose_mode (plan, options, &chosen);
  Sim sim = { plan, &chosen };
  sim_prepare (&sim);
  /* Nothing that grows with the plan is allocated before the budget
   * allows it. */
  SimCost cost;
  sim_estimate (&sim, &cost);
  if (!sim_budget_check (&cost, file, error))
    {
      sim_clear (&sim);
      return FALSE;
    }
  sim_build (&sim, &cost);
  gboolean ok = sim.absurd == 0;
  if (ok)
    {
#if defined __GNUC__
      /* Where every rank is replayed, its data outgrows the cache; a
       * replay of one rank a stage fits, and the hook would only cost. */
      if (sim.options->full)
        sim_engine_set_warm (sim.engine, warm_op, &sim);
#endif
      for (int i = 0; i < sim.ranks * SIM_N_STREAMS; i++)
        try_start (&sim, (uint32_t) i);
      /* In slices of a quarter million events (tens of milliseconds)
       * when someone follows the progress. */
      if (options->progress == NULL)
        sim_engine_run (sim.engine);
      else
        while (sim_engine_run_for (sim.engine, 1 << 18) == 1 << 18)
          options->progress (options->progress_ctx,
                             sim_engine_events (sim.engine), cost.events);
      ok = !sim_engine_overflowed (sim.engine);
      if (ok)
        {
          fill_result (&sim, result);
          result->full_auto = shared && chosen.full;
          result->shared_nodes_missed = shared && !chosen.full;
        }
      else
        g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                     "%s: the step would last longer than simulated time "
                     "can count (2^63 ps, about 106 days): check "
                     "compute.mfu and the bandwidths", file);
    }
  else
    g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                 "%s: one operation of this plan (%s) would take %.3g s (more "
                 "than a day): check the sizes (model, micro_batch), compute.mfu and "
                 "the bandwidths", file, sim.absurd_what, sim.absurd);

  sim_clear (&sim);
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
                                   explicit ? options->trace : NULL,
                                   options->trace_ctx, options->progress,
                                   options->progress_ctx };

  int b_max = ps->micro_batch > 0 ? ps->micro_batch
              : MIN (per_replica, AUTO_MAX_MICRO_BATCH);
  for (int b = ps->micro_batch > 0 ? ps->micro_batch : 1; b <= b_max; b++)
    {
      if (per_replica % b != 0 && ps->micro_batch == 0)
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
      g_autofree char *file = text_shown (e->marks.file ? e->marks.file
                                                        : "experiment");
      g_set_error (error, TS_ERROR, TS_ERROR_PLAN,
                   "%s: no micro-batch size and virtual stage count fit the "
                   "batch and the layers (per-replica batch %d, %d layers "
                   "per stage)", file, per_replica, chunk_max);
      return FALSE;
    }
  if (options->trace != NULL && !explicit
      && !sim_run_plan (&best, options, &best_result, error))
    return FALSE;
  *result = best_result;
  return TRUE;
}
