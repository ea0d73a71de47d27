/* budget.c: the simulator's own cost of a plan, and its budgets; see
 * budget.h.
 *
 * The estimate follows the builder (sim-build.c) chunk by chunk without
 * making an op: per stage, the ops of a forward and of a backward chunk
 * from the programs' piece counts, times the micro-batches, plus the
 * gradient buckets, the sends and the optimizer's tail; in full mode,
 * times the stage's tp x dp ranks. tests/test-sim.c holds it to the
 * events of real replays. */
#include "parallel/budget.h"
#include "parallel/sim-private.h"
#include "base/errors.h"
#include "base/text.h"
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* One representative rank's ops, by what they cost beyond the Op. */
typedef struct {
  uint64_t compute;     /* kernels and fused stretches, the optimizer */
  uint64_t tp;          /* TP collectives apart from compute */
  uint64_t ep;          /* EP all-to-alls apart from compute (flows with
                         * ep_flows) */
  uint64_t dp;          /* DP and ZeRO collectives (flows) */
  uint64_t sends;       /* pipeline sends (flows) */
  uint64_t host;        /* offload copies (flows) */
  uint64_t issue;       /* the host thread's ops (sim-build.c's Builder) */
  uint64_t epilogue;    /* the epilogue's collectives (sim_epilogue_ops) */
  uint64_t epilogue_events;  /* their ends: in full mode one an instance */
} RankOps;

/* The edges of a rank's ops: one from each host op to the op it issues
 * (or the sync it waits for), one from each send to the chunk that
 * receives it, and one into each DP, ZeRO or host-copy op from what it
 * follows (sim-build.c, add_issued, link_receive, emit_grads). */
static uint64_t
rank_edges (const RankOps *o)
{
  return sat_add_u64 (sat_add_u64 (o->issue, o->sends),
                      sat_add_u64 (o->dp, o->host));
}

/* Adds N items of one chunk's program: MODULES modules whose programs
 * hold TP and EP pieces between them. */
static void
add_program (const Sim *sim, RankOps *o, uint64_t n, uint64_t modules,
             uint64_t tp_pieces, uint64_t ep_pieces, gboolean reads_back)
{
  /* Fused, a chunk is one compute op (but for EP all-to-alls that run as
   * flows); else each TP collective is an op and ends a stretch of
   * kernels. ZeRO-3 cuts a stretch at every module, and gathers its
   * parameters (fetched first when offloaded). A program the host reads
   * back inside is not fused: its EP all-to-alls are ops (the cuts are
   * counted as syncs). */
  uint64_t stretches = sim->zero3 ? modules : 1;
  if (!sim->fuse_tp)
    {
      o->tp = sat_add_u64 (o->tp, sat_mul_u64 (n, tp_pieces));
      stretches = sat_add_u64 (stretches, tp_pieces);
    }
  if (!sim->fuse_tp || sim->ep_flows || reads_back)
    {
      o->ep = sat_add_u64 (o->ep, sat_mul_u64 (n, ep_pieces));
      stretches = sat_add_u64 (stretches, ep_pieces);
    }
  o->compute = sat_add_u64 (o->compute, sat_mul_u64 (n, stretches));
  if (sim->zero3)
    {
      /* DeepSpeed 0.3 gathers tensor by tensor (at most a layer's 12),
       * each issued by a host op and copied out by a GPU op. */
      o->dp = sat_add_u64 (o->dp, sat_mul_u64 (n, sat_mul_u64 (
                modules, sim->zero3_per_tensor ? 36 : 1)));
      if (sim->offload == OFFLOAD_OPTIMIZER_PARAMS)
        o->host = sat_add_u64 (o->host, sat_mul_u64 (n, modules));
    }
}

/* Adds N reductions of gradients (emit_grads: a DP op, an offload copy),
 * K times each; CUTS: each after a flush that cuts a compute stretch (a
 * bucket), not at a chunk's end where the stretch ends anyway. */
static void
add_grads (const Sim *sim, RankOps *o, uint64_t n, uint64_t k, gboolean cuts)
{
  k = sat_mul_u64 (n, k);
  if (cuts)
    o->compute = sat_add_u64 (o->compute, k);
  if (sim->plan->dp > 1)
    o->dp = sat_add_u64 (o->dp, k);
  if (sim->offload != OFFLOAD_NONE)
    o->host = sat_add_u64 (o->host, k);
}

/* The buckets of a chunk's backward, as emit_chunk fills them: the head
 * first, a bucket out whenever a layer brings it to the cap, the rest
 * with the embedding at the end. */
static uint64_t
chunk_buckets (const Sim *sim, int layers, gboolean first, gboolean last)
{
  double cap = sim->plan->spec->parallel.bucket_bytes / sim->grad_bytes;
  double bucket = last ? sim->head_params : 0;
  uint64_t n = 0;
  for (int l = 0; l < layers; l++)
    {
      bucket += sim->layer_params;
      if (bucket >= cap)
        {
          n++;
          bucket = 0;
        }
    }
  bucket += first ? sim->emb_params : 0;
  return n + (bucket > 0);
}

static void
stage_ops (const Sim *sim, int stage, RankOps *o)
{
  const Plan *plan = sim->plan;
  const ExperimentSpec *e = plan->spec;
  uint64_t m = (uint64_t) plan->micro_batches;
  int v = plan->virtual_stages, vstages = plan->pp * v;
  uint64_t layers = (uint64_t) plan_chunk_layers (plan, stage);
  const Program *rc = sim->recompute;
  gboolean moves = plan->dp > 1 || sim->offload != OFFLOAD_NONE;
  gboolean bucketing = plan_dp_overlaps (e) && moves;
  double stage_params = 0;
  uint64_t syncs = 0;
  *o = (RankOps) { 0 };
  for (int c = 0; c < v; c++)
    {
      int vstage = c * plan->pp + stage;
      gboolean first = vstage == 0, last = vstage == vstages - 1;
      uint64_t modules = layers + first + last;
      uint64_t fwd_tp = layers * sim->layer_fwd.tp_pieces
        + (first ? sim->emb_fwd.tp_pieces : 0)
        + (last ? sim->head_fwd.tp_pieces : 0);
      uint64_t bwd_tp = layers * (sim->layer_bwd.tp_pieces
                                  + (rc ? rc->tp_pieces : 0)
                                  + (sim->ckpt ? sim->ckpt_load.tp_pieces : 0))
        + (first ? sim->emb_bwd.tp_pieces : 0)
        + (last ? sim->head_bwd.tp_pieces : 0);
      uint64_t fwd_ep = layers * sim->layer_fwd.ep_pieces;
      uint64_t bwd_ep = layers * (sim->layer_bwd.ep_pieces
                                  + (rc ? rc->ep_pieces : 0));
      /* The host's reads back inside a layer (GraphOp.syncs: MPT's
       * unpadding, DeepSpeed-MoE's gate, Megatron-DeepSpeed's scalars
       * before the MLP) each cut a stretch, recomputed or not. */
      uint64_t fwd_syncs = layers * sim->layer_fwd.sync_pieces;
      uint64_t bwd_syncs = layers * (sim->layer_bwd.sync_pieces
                                     + (rc ? rc->sync_pieces : 0));
      add_program (sim, o, m, modules, fwd_tp, fwd_ep, fwd_syncs > 0);
      add_program (sim, o, m, modules, bwd_tp, bwd_ep, bwd_syncs > 0);
      syncs = sat_add_u64 (syncs, sat_mul_u64 (m, sat_add_u64 (fwd_syncs,
                                                               bwd_syncs)));
      /* Megatron-Core's gathers under the first forward (param_prefetch):
       * one a module, each cutting a stretch. */
      if (sim->param_prefetch)
        {
          o->dp = sat_add_u64 (o->dp, modules);
          o->compute = sat_add_u64 (o->compute, modules);
        }
      /* DeepSpeed's checkpointing (begin_checkpoint): a layer's copy to
       * the host and back, and each synchronize at its boundaries, the
       * host waiting, cut a stretch. */
      if (sim->ckpt != NULL)
        {
          uint64_t copies = sim->ckpt->cpu_checkpointing ? 2 * m * layers : 0;
          o->host = sat_add_u64 (o->host, copies);
          syncs = sat_add_u64 (syncs, copies);
          if (sim->ckpt->synchronize_checkpoint_boundary)
            syncs = sat_add_u64 (syncs, 2 * m * layers);
        }
      /* DeepSpeed 0.3 gathers a layer again after its recomputed forward. */
      if (sim->zero3_per_tensor && rc != NULL)
        {
          o->dp = sat_add_u64 (o->dp, sat_mul_u64 (m, layers * 36));
          o->compute = sat_add_u64 (o->compute, sat_mul_u64 (m, layers));
        }
      double params = layers * sim->layer_params
        + (first ? sim->emb_params : 0) + (last ? sim->head_params : 0);
      stage_params += params;
      /* The last backward of a chunk reduces its gradients in buckets;
       * ZeRO-3 (and ZeRO-2 reducing each micro-batch) after every one. */
      if (bucketing)
        add_grads (sim, o, sim->grads_each ? m : 1,
                   chunk_buckets (sim, (int) layers, first, last), TRUE);
      else if (sim->grads_each && moves)
        add_grads (sim, o, m, 1, FALSE);
      o->sends = sat_add_u64 (o->sends, sat_mul_u64 (m, !last + !first));
    }
  if (!plan_dp_overlaps (e) && !sim->grads_each && moves)
    add_grads (sim, o, 1, 1, FALSE);
  /* The optimizer (or CPU Adam and the copy up), ZeRO 1-2's gather. */
  o->compute++;
  o->host += sim->offload == OFFLOAD_OPTIMIZER;
  o->dp += e->zero.stage >= 1 && e->zero.stage <= 2 && plan->dp > 1
           && !sim->param_prefetch;
  /* The epilogue's collectives, on the compute stream: the loss's in
   * every forward of the last stage; a read back may add a host op. */
  EpilogueOp epilogue[EPILOGUE_MAX];
  int n = sim_epilogue_ops (sim, stage, 0, epilogue);
  uint64_t reads = 0;
  for (int i = 0; i < n; i++)
    {
      EpiloguePlace at = epilogue[i].place;
      uint64_t k = at == EPILOGUE_IN_FORWARD ? m
                   : at == EPILOGUE_FP8_FORWARD || at == EPILOGUE_FP8_BACKWARD
                   ? sat_mul_u64 (m, (uint64_t) v) : 1;
      k = sat_mul_u64 (k, 1 + (uint64_t) epilogue[i].repeat);
      uint64_t members = sim->options->full
        ? (uint64_t) sim_group_members (sim, epilogue[i].group) : 1;
      o->epilogue = sat_add_u64 (o->epilogue, k);
      o->epilogue_events = sat_add_u64 (o->epilogue_events,
                                        (k + members - 1) / members);
      reads += epilogue[i].read_after;
    }
  o->compute = sat_add_u64 (o->compute, syncs);
  /* With a host model, every compute-stream op is issued by a host op,
   * and a sync (each chunk's start, a layer's, a read back, the
   * optimizer) may add one more for the issuing left over from before
   * it. */
  if (sim->host_launch > 0)
    o->issue = sat_add_u64 (sat_add_u64 (sat_add_u64 (o->compute, o->epilogue),
                                         sat_add_u64 (o->tp, o->ep)),
                            sat_add_u64 (sat_add_u64 (o->sends, syncs + reads),
                                         sat_mul_u64 (2 * m, (uint64_t) v) + 1));
}

/* Bytes beside a flow's op: a Comm with its resources, a send's NIC
 * sides and uplinks at either end. */
#define COMM_BYTES (sizeof (Comm) + 4 * sizeof (FlowUse))

/* N of which a share SHARE (below 1) is held at once, rounded up;
 * saturated counts stay so. */
static uint64_t
held_share (uint64_t n, double share)
{
  if (n == UINT64_MAX || share >= 1)
    return n;
  return (uint64_t) ceil ((double) n * share);
}

void
sim_estimate (const Sim *sim, SimCost *cost)
{
  const Plan *plan = sim->plan;
  gboolean full = sim->options->full;
  uint64_t per_stage = full ? (uint64_t) plan->tp * (uint64_t) plan->dp : 1;
  uint64_t ops = 0, events = 0, host_ops = 0, flows = 0, coll_ops = 0;
  uint64_t edges = 0;
  uint64_t ep_flows = 0, send_flows = 0;
  uint64_t colls = 0;
  /* A stage of a node or more sends to another node; a DP group wider
   * than a node spans nodes. */
  int64_t stage_gpus = (int64_t) plan->dp * plan->tp;
  gboolean pp_across = sim->net.has_network
                       && stage_gpus >= sim->net.gpus_per_node;
  gboolean dp_across = sim->net.has_network
                       && stage_gpus > sim->net.gpus_per_node;
  for (int s = 0; s < plan->pp; s++)
    {
      RankOps o;
      stage_ops (sim, s, &o);
      uint64_t rank_flows = sat_add_u64 (sat_add_u64 (o.dp, o.sends),
                                         o.host);
      uint64_t rank_ep_flows = sim->ep_flows ? o.ep : 0;
      uint64_t rank_ops = sat_add_u64 (sat_add_u64 (o.compute, o.tp),
                                       sat_add_u64 (rank_flows, o.issue));
      rank_ops = sat_add_u64 (rank_ops, o.ep);
      rank_ops = sat_add_u64 (rank_ops, o.epilogue);
      /* An op ends with an event; one whose bytes cross NICs ends them
       * first (a DP group or a pipeline neighbour in another node); in
       * full mode a collective's members end with one event. The host's
       * ops run without one (sim.c, run_host); a collective or flow op
       * that its host issues late starts through one, which is not
       * counted (a host-bound plan fires up to one more an op). */
      uint64_t dp_events = full && plan->dp > 1 ? o.dp / plan->dp : o.dp;
      uint64_t rank_events = sat_add_u64 (
        sat_add_u64 (o.compute,
                     full && plan->tp > 1 ? o.tp / plan->tp : o.tp),
        sat_add_u64 (sat_add_u64 (sat_mul_u64 (2, o.host),
                                  sat_mul_u64 (pp_across ? 2 : 1, o.sends)),
                     sat_mul_u64 (dp_across ? 2 : 1, dp_events)));
      rank_events = sat_add_u64 (rank_events, o.epilogue_events);
      /* An EP all-to-all joins no peers: an event each, and its flow's. */
      rank_events = sat_add_u64 (rank_events, sat_add_u64 (o.ep, rank_ep_flows));
      ops = sat_add_u64 (ops, sat_mul_u64 (per_stage, rank_ops));
      events = sat_add_u64 (events, sat_mul_u64 (per_stage, rank_events));
      host_ops = sat_add_u64 (host_ops, sat_mul_u64 (per_stage, o.issue));
      flows = sat_add_u64 (flows, sat_mul_u64 (per_stage, rank_flows));
      send_flows = sat_add_u64 (send_flows, sat_mul_u64 (per_stage, o.sends));
      ep_flows = sat_add_u64 (ep_flows, sat_mul_u64 (per_stage, rank_ep_flows));
      edges = sat_add_u64 (edges, sat_mul_u64 (per_stage, rank_edges (&o)));
      /* In full mode each collective's members are listed, and each
       * instance (one per group of members) is a Coll. */
      if (full)
        {
          coll_ops = sat_add_u64 (coll_ops, sat_mul_u64 (per_stage,
                                                         o.tp + o.dp
                                                         + o.epilogue));
          colls = sat_add_u64 (colls, sat_mul_u64 (per_stage, sat_add_u64 (
                    o.tp / (uint64_t) plan->tp + dp_events,
                    o.epilogue_events)));
        }
    }
  uint64_t ranks = (uint64_t) sim->ranks;
  uint64_t slots = sat_mul_u64 (sat_mul_u64 (ranks, 2),
                                sat_mul_u64 ((uint64_t) plan->micro_batches,
                                             (uint64_t) plan->virtual_stages));
  uint64_t per_rank = SIM_N_STREAMS * sizeof (Stream) + sizeof (Breakdown)
                      + sim_rank_build_bytes () + 2 * sizeof (double)
                      + 3 * sizeof (uint32_t) + 2 * sizeof (SimTime);
  /* Each node's NIC and PCIe resources, in full mode; symmetric mode
   * loads those of a few nodes a stage. */
  uint64_t gpn = (uint64_t) MAX (1, sim->net.gpus_per_node);
  uint64_t nodes = full ? ((uint64_t) plan->gpus + gpn - 1) / gpn
                        : 2 * (uint64_t) plan->pp;
  /* NIC sides and uplinks, and with host copies each PCIe switch's link to
   * the host and each GPU's own link, both ways (at most a GPU each). */
  uint64_t per_node = (uint64_t) (2 * sim->net.nics + 2)
                      + (sim_host_copies (sim) ? 4 * gpn : 0);
  uint64_t resources = sat_mul_u64 (nodes, per_node);
  /* The groups' lists of collectives (sim-build.c, group_count): in
   * full mode the TP and DP groups of each stage, the model-parallel
   * groups and the world, the pipe and embedding groups; in symmetric
   * mode one of each group across stages. */
  uint64_t groups = full ? (uint64_t) plan->pp * ((uint64_t) plan->dp
                                                  + (uint64_t) plan->tp)
                           + (uint64_t) plan->dp * (1 + 2 * (uint64_t) plan->tp)
                           + 1
                         : 4;
  /* Built a window ahead and reused once done (sim->window), a rank
   * holds the ops and edges of SIM_HELD_ITEMS of its 2 m v items at
   * most, and the collectives they join. */
  uint64_t items = sat_mul_u64 (2, sat_mul_u64 ((uint64_t) plan->micro_batches,
                                                (uint64_t) plan->virtual_stages));
  /* But no less than the store reaches before it first collects
   * (SIM_COLLECT_MIN ops, and as large a share of the rest). */
  double held = sim->window == G_MAXINT || ops <= SIM_COLLECT_MIN ? 1
                : MAX (SIM_HELD_ITEMS / (double) items,
                       SIM_COLLECT_MIN / (double) ops);
  uint64_t held_ops = held_share (ops, held);
  uint64_t held_edges = held_share (edges, held);
  coll_ops = held_share (coll_ops, held);
  colls = held_share (colls, held);
  /* The ops and edges in their blocks (sim-store.c); what only some runs
   * keep per op in a GArray, which may have doubled. */
  uint64_t per_op = (sim->fuse_tp ? sizeof (FusedParts) : 0)
    + (sim->options->trace != NULL ? 2 * sizeof (OpInfo) : 0);
  uint64_t bytes = sat_mul_u64 (held_ops, per_op);
  bytes = sat_add_u64 (bytes, held_ops >= UINT32_MAX ? UINT64_MAX
                              : sim_store_bytes (sizeof (Op), held_ops));
  bytes = sat_add_u64 (bytes, held_edges >= UINT32_MAX ? UINT64_MAX
                              : sim_store_bytes (sizeof (Edge), held_edges));
  /* A rank's sends share one Comm a direction (build_pp_comm); each DP
   * op and host copy has its own, which loads its GPU's NIC sides and its
   * node's uplinks (a collective's members' Comms are merged only as it
   * starts, in a scratch array). */
  bytes = sat_add_u64 (bytes, sat_mul_u64 (
    sat_add_u64 (flows - send_flows, sat_mul_u64 (2, ranks)), COMM_BYTES));
  /* An EP all-to-all's Comm loads the NIC sides and uplinks of the GPUs
   * it stands for: one in full mode, a node's in symmetric mode. */
  bytes = sat_add_u64 (bytes, sat_mul_u64 (ep_flows, sizeof (Comm)
                                           + (2 * (full ? 1 : gpn) + 2)
                                             * sizeof (FlowUse)));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (coll_ops, sizeof (uint32_t)));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (colls, sizeof (Coll)));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (ranks, per_rank));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (slots, 2 * sizeof (uint32_t)));
  /* Each stage's schedule: an Item (16 bytes) an item. */
  bytes = sat_add_u64 (bytes, sat_mul_u64 (sat_mul_u64 ((uint64_t) plan->pp,
                                                        items), 16));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (resources, 64));
  bytes = sat_add_u64 (bytes, sat_mul_u64 (groups, 64));
  *cost = (SimCost) { ops, edges, held_ops, held_edges, events, host_ops, bytes,
                      sat_mul_u64 (ranks, SIM_N_STREAMS),
                      sim->options->trace != NULL
                      ? sat_mul_u64 (ops, SIM_TRACE_SPAN_BYTES) : 0 };
}

void
sim_plan_cost (const Plan *plan, const SimOptions *options, SimCost *cost)
{
  Sim sim = { plan, options };
  sim_prepare (&sim);
  sim_estimate (&sim, cost);
  sim_clear (&sim);
}

/* ---- budgets ------------------------------------------------------------ */

/* The budget in variable NAME, or FALLBACK when it is unset or empty:
 * a size with its unit (bytes), or a count. */
static gboolean
budget_from_env (const char *name, gboolean bytes, double fallback,
                 double *out, GError **error)
{
  const char *text = g_getenv (name);
  if (text == NULL || *text == '\0')
    {
      *out = fallback;
      return TRUE;
    }
  /* For a message: the variable's text shown (base/text.h). */
  g_autofree char *shown = NULL;
  if (bytes)
    {
      g_autofree char *why = NULL;
      if (units_parse (text, UNIT_BYTES, out, &why))
        return TRUE;
      shown = text_shown (text);
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "%s=%s: %s", name, shown,
                   why);
      return FALSE;
    }
  char *end;
  errno = 0;
  *out = g_ascii_strtod (text, &end);
  if (errno == 0 && *end == '\0' && end != text && *out >= 1
      && *out < 1.8e19)
    return TRUE;
  shown = text_shown (text);
  g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "%s=%s: expected a count "
               "of events of at least 1, such as 2e9", name, shown);
  return FALSE;
}

/* "7.8 GiB", "64.0 KiB": in binary units with a plain space (GLib's
 * g_format_size puts a no-break space there). */
static void
format_bytes (char out[32], double bytes)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB", "EiB" };
  guint u = 0;
  while (bytes >= 1024 && u + 1 < G_N_ELEMENTS (units))
    {
      bytes /= 1024;
      u++;
    }
  g_ascii_formatd (out, 24, "%.1f", bytes);
  g_strlcat (out, " ", 32);
  g_strlcat (out, units[u], 32);
}

gboolean
sim_budget_check (const SimCost *cost, const char *where, GError **error)
{
  double memory, events, trace;
  if (!budget_from_env ("TRAINSIM_MAX_SIM_MEMORY", TRUE, SIM_BUDGET_MEMORY,
                        &memory, error)
      || !budget_from_env ("TRAINSIM_MAX_EVENTS", FALSE, SIM_BUDGET_EVENTS,
                           &events, error)
      || !budget_from_env ("TRAINSIM_MAX_TRACE", TRUE, SIM_BUDGET_TRACE,
                           &trace, error))
    return FALSE;
  /* Op ids are 32 bits, stream indices an int: beyond them no budget
   * helps. */
  if (cost->held_ops >= UINT32_MAX || cost->held_edges >= UINT32_MAX
      || cost->streams > G_MAXINT)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s: this plan has more ops (%" G_GUINT64_FORMAT ") or "
                   "ranks than the simulator can index (2^32 ops, 2^31 "
                   "streams): simulate fewer ranks (without --full) or "
                   "micro-batches", where, cost->ops);
      return FALSE;
    }
  if ((double) cost->bytes > memory)
    {
      char need[32], have[32];
      format_bytes (need, (double) cost->bytes);
      format_bytes (have, memory);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s: simulating this plan would take about %s of memory "
                   "(%" G_GUINT64_FORMAT " ops), more than the budget of "
                   "%s: simulate fewer ranks (without --full) or "
                   "micro-batches, or raise TRAINSIM_MAX_SIM_MEMORY", where,
                   need, cost->ops, have);
      return FALSE;
    }
  /* Before a byte of it is written: a trace of 4 GB came with no word. */
  if ((double) cost->trace_bytes > trace)
    {
      char need[32], have[32];
      format_bytes (need, (double) cost->trace_bytes);
      format_bytes (have, trace);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s: the trace of this plan would take about %s (%"
                   G_GUINT64_FORMAT " spans), more than the budget of %s: "
                   "trace fewer ranks (without --full) or micro-batches, or "
                   "raise TRAINSIM_MAX_TRACE", where, need, cost->ops, have);
      return FALSE;
    }
  if ((double) cost->events > events)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT,
                   "%s: simulating this plan would take about %"
                   G_GUINT64_FORMAT " events, more than the budget of %.0f:"
                   " simulate fewer ranks (without --full) or "
                   "micro-batches, or raise TRAINSIM_MAX_EVENTS", where,
                   cost->events, events);
      return FALSE;
    }
  return TRUE;
}
