/* sim-private.h: what the executor's two halves share: the op graph's
 * structs and the Sim that carries a replay's state.
 *
 * sim-prepare.c makes a plan's programs and settings once; sim-build.c
 * turns its schedule into ops on streams (the builder); sim.c replays
 * them as engine events and reads the result off them (the executor).
 * Nothing outside src/parallel includes this header. */
#pragma once

#include "parallel/sim.h"
#include "parallel/budget.h"
#include "config/framework.h"
#include "engine/engine.h"
#include "graph/transformer.h"
#include "hw/device.h"
#include "net/flow.h"
#include "net/net.h"

#define NONE UINT32_MAX
#define COLL_FLAG (UINT64_C (1) << 63)

typedef enum {
  OPK_COMPUTE,
  OPK_TP,
  OPK_PP,
  OPK_DP,
  OPK_OPTIMIZER,
  OPK_OFFLOAD,          /* PCIe copies and the CPU's Adam */
  OPK_HOST,             /* the host issuing the next compute-stream op */
  OPK_EPILOGUE,         /* a collective of the step's epilogue: the tied
                         * embedding, the optimizer's overflow and norm
                         * checks, the loss (sim-build.c, emit_epilogue) */
  OPK_EP,               /* an MoE layer's dispatch or combine all-to-all
                         * over the expert-parallel group (sim-moe.c) */
  OPK_CP,               /* context parallelism's KV transfer or all-to-all
                         * over the CP group (sim-cp.c) */
  OPK_N
} OpKind;

/* The process groups a rank's collectives run over, as Megatron's mpu
 * (megatron/mpu/initialize.py, v2.6) and DeepSpeed's PipelineParallelGrid
 * (deepspeed/runtime/pipe/topology.py, v0.9.5) build them over the ranks
 * in the order (stage, replica, tp_rank). */
typedef enum {
  GROUP_TP,             /* a replica's tp ranks of one stage */
  GROUP_DP,             /* one tp rank of a stage in every replica */
  GROUP_MODEL,          /* a replica's tp x pp ranks: model parallel */
  GROUP_WORLD,          /* every rank */
  GROUP_PIPE,           /* one tp rank of a replica in every stage */
  GROUP_EMBEDDING,      /* of those, the first and last stage's */
  GROUP_STAGE,          /* a stage's tp x dp ranks (dp counting cp):
                         * TransformerEngine's amax reduction group */
  GROUP_N
} Group;

/* Where an op of the step's epilogue runs: in each forward of the last
 * virtual stage, before the data-parallel reduction that follows the last
 * backward, between it and the optimizer, or after the optimizer; or, for
 * FP8's amaxes, as each chunk's forward or backward of every micro-batch
 * ends, before the scaling update (sim-fp8.c). */
typedef enum {
  EPILOGUE_IN_FORWARD,
  EPILOGUE_BEFORE_REDUCTION,
  EPILOGUE_BEFORE_OPTIMIZER,
  EPILOGUE_AFTER_OPTIMIZER,
  EPILOGUE_FP8_FORWARD,
  EPILOGUE_FP8_BACKWARD,
} EpiloguePlace;

/* One collective of the epilogue, on the compute stream, which a
 * synchronous torch.distributed call holds until it is done, over its
 * group (sim-build.c, sim_epilogue_ops, lists them with their sources). */
typedef struct {
  const char *name;
  EpiloguePlace place;
  Group group;
  CollKind kind;          /* over the group; the embedding's is a send */
  double bytes;
  int serial;             /* kernels issued before it in a loop that reads
                           * the device back after each check */
  int launches;           /* kernels and calls the host issues for it */
  gboolean read_before;   /* the host reads the device back before it */
  gboolean read_after;    /* and its result after it (.item ()) */
  int repeat;             /* it runs 1 + repeat times in a row */
} EpilogueOp;

/* The most ops sim_epilogue_ops gives: Composer's 7 and FP8's 2. */
#define EPILOGUE_MAX 10

/* Of a fused op's dur, the communication fused into it (Sim.fused). */
typedef struct {
  SimTime tp;             /* TP collectives, EP all-to-alls, CP transfers */
  SimTime ep;             /* of tp: the EP all-to-alls */
  SimTime cp;             /* of tp: the CP transfers */
} FusedParts;

/* Op.flags. */
#define OP_DONE 1u      /* finished: its edges are gone, it starts nothing */
#define OP_FREE 2u      /* on the free list, for add_op to reuse */
#define OP_MARK 4u      /* reached by the collector's roots (sim-build.c) */
#define OP_PINNED 8u    /* a send in send_op, its receiver not yet built */

/* An op: 64 bytes, a cache line, as --full holds millions of them. What
 * only some runs need lives beside it (Sim.fused, Sim.op_info). Its
 * first out-edge is in it (to): most ops have one, and a replay of many
 * ranks is bound by the cache misses of reading them. */
typedef struct {
  SimTime dur;
  SimTime start, end;   /* until it starts, start is the latest end of
                         * its dependencies so far (op_depends), the
                         * earliest it may start; 0 before any */
  uint32_t next;        /* next op on the same stream */
  uint32_t to;          /* the op its first out-edge goes to, or NONE */
  uint32_t edges;       /* its later out-edges (Sim.edges), or NONE */
  uint32_t waits;       /* unfinished dependencies */
  uint32_t coll;        /* collective instance, or NONE */
  uint32_t stream;      /* rank * SIM_N_STREAMS + SimStream */
  uint32_t released_by; /* the dependency that finished last */
  uint32_t comm;        /* Comm whose NIC bytes run as a flow, or NONE */
  uint8_t kind;
  uint8_t flags;        /* OP_* */
} Op;

/* Op T's dependency FROM ends at END (done, or a host op run ahead of
 * time, sim.c run_host): T starts no earlier, and FROM is what released
 * it if it ends last, the later one of a tie. T's start holds the latest
 * end so far, so no other op is read. The builder (add_edge, a
 * dependency already done) and the executor (release) both use it. */
static inline void
op_depends (Op *t, uint32_t from, SimTime end)
{
  if (end >= t->start)
    {
      t->released_by = from;
      t->start = end;
    }
}

/* What a trace shows of an op besides its times. */
typedef struct {
  const char *name;     /* static */
  int32_t mb;           /* micro-batch, or -1 */
  int32_t group;        /* TraceSpan.group */
} OpInfo;

typedef struct {
  uint32_t to, next;
} Edge;

typedef struct {
  uint32_t head, tail;
  gboolean busy;
  SimTime ready;        /* when the op running (busy) could start */
  SimTime last_end;
  /* Ops added to the stream, and finished: the k-th GPU op of a rank is
   * the key of its jitter draw (sim_gpu_factor), which op ids, reused,
   * cannot be. */
  uint32_t added, finished;
} Stream;

typedef struct {
  uint32_t n, arrived;
  uint32_t members;     /* offset of n op ids in Sim.members */
  uint32_t filled;
} Coll;

/* The collective instances of one group, in the order its members join
 * them: ids[head ..] are those some member has still to join (the k-th
 * of the group is ids[head + k - base]). */
typedef struct {
  GArray *ids;          /* uint32_t */
  guint head;
  uint32_t base;        /* how many instances left the queue */
} CollQueue;

/* A rank's builder between emissions (sim-build.c), and its size. */
typedef struct RankBuild RankBuild;
gsize sim_rank_build_bytes (void);

/* How many schedule items full mode builds each rank ahead of the one it
 * runs (sim_emit): an item's ops all wait, through their streams and
 * edges, for the first host op (or compute op, without a host model) of
 * the item before them, and a ZeRO-3 gather for the module two before,
 * which lies at most two items back; three keeps one item to spare. */
#define SIM_WINDOW 3
/* The items whose ops a rank's share of the store holds at its peak:
 * those built ahead and the one running, what is done but still read,
 * and the free ops the collector lets the store double into (collect in
 * sim-build.c). Measured: 8.4-8.7 items on GPT-3 175B with --full at
 * 256 and 1,024 GPUs, 12 to 192 micro-batches per pipeline. */
#define SIM_HELD_ITEMS 9
/* The ops the store reaches before the collector first runs: a small
 * replay never collects (and pays no pass over its ops for it). */
#define SIM_COLLECT_MIN (1u << 16)

/* A communication op whose bytes cross NICs: its cost, and the resources
 * its flow loads (uses[first .. first + n) in Sim.uses), for the GPUs it
 * stands for. */
typedef struct {
  CollCost cost;
  uint32_t first, n;
} Comm;

/* A step of a chunk's program: a stretch of kernels or a TP collective,
 * and the host's time to issue it. */
typedef struct {
  OpKind kind;          /* OPK_COMPUTE or OPK_TP */
  SimTime dur;
  int launches;         /* kernels (NCCL calls) the host issues for it */
  const char *name;
  double bytes;         /* an EP all-to-all's, per rank (OPK_EP) */
  int alongside;        /* of an EP all-to-all: the pieces after it that
                         * run beside it (GraphOp.alongside), its dur
                         * what outlasts them */
  gboolean syncs;       /* the host waits for it (GraphOp.syncs) */
} Piece;

/* A program: its pieces, and their time on their own (kernels and TP
 * collectives in turn) with the TP collectives' part of it, which is all
 * a fused build needs. */
typedef struct {
  GArray *pieces;         /* owned: Piece */
  SimTime time, tp_time;
  SimTime ep_time;        /* of tp_time: EP all-to-alls (OPK_EP) */
  SimTime cp_time;        /* of tp_time: CP transfers (OPK_CP) */
  guint tp_pieces;        /* of pieces: TP collectives and CP transfers */
  guint ep_pieces;        /* of pieces: EP all-to-alls */
  guint sync_pieces;      /* of pieces: those the host waits for, after
                           * which the builder cuts the program */
  SimTime host, lead;     /* the host's time to issue it, and its lead
                           * (sim-build.c's Builder) from its start */
} Program;

/* An array of fixed-size items in blocks (sim-store.c): it grows a block
 * at a time, never copies, reserves nothing ahead. A block holds
 * 2^shift items, the shift chosen when the store is made from the items
 * expected (the budget's estimate): at most 2^SIM_BLOCK_SHIFT, at least
 * 2^SIM_BLOCK_MIN_SHIFT. 2^20 ops are 56 MiB of address space, of which
 * the pages not yet filled take no memory (unless malloc fills them:
 * glibc's MALLOC_PERTURB_, which the tests set, writes every byte of a
 * block, and a 56 MiB block for a plan of a thousand ops made validate
 * four times slower). Blocks of 2^16 (3.5 MiB) made GPT-3 175B's --full
 * replay on 1,024 GPUs half as slow again as one reserved array (12.2 s
 * of CPU against 8.1); 2^20 and 2^22 both cost about 10 % (9.3 s),
 * measured side by side on the same machine. */
#define SIM_BLOCK_SHIFT 20
#define SIM_BLOCK_MIN_SHIFT 10

typedef struct {
  char **blocks;          /* owned, each owned */
  uint32_t len;           /* items */
  guint cap;              /* entries of blocks */
  guint item;             /* bytes of an item */
  guint shift;            /* a block holds 2^shift items */
  uint32_t mask;          /* 2^shift - 1 */
} SimStore;

/* An empty store of items of ITEM bytes, in blocks for EXPECTED of them. */
void sim_store_init (SimStore *s, guint item, uint64_t expected);
/* Allocates the block that item s->len starts. */
void sim_store_grow (SimStore *s);
/* Frees the items, leaving an empty store of the same item and block
 * size. */
void sim_store_clear (SimStore *s);
/* The bytes a store of N items of ITEM bytes, made for N, touches: its
 * items and its table of blocks (the untouched tail of its last block
 * takes no memory). */
gsize sim_store_bytes (guint item, uint64_t n);

static inline void *
sim_store_at (const SimStore *s, uint32_t i)
{
  return s->blocks[i >> s->shift] + (gsize) (i & s->mask) * s->item;
}

/* Appends an item, for the caller to write through sim_store_at (a
 * typed store there is inlined; a memcpy of the store's run-time size
 * was a library call for each op); returns its index. */
static inline uint32_t
sim_store_add (SimStore *s)
{
  if ((s->len & s->mask) == 0)
    sim_store_grow (s);
  return s->len++;
}

typedef struct {
  const Plan *plan;
  const SimOptions *options;
  SimEngine *engine;      /* owned */
  ComputeModel cm;
  ComputeModel cm_fp8;    /* the linear GEMMs' with fp8 (sim-fp8.c) */
  NetModel net;
  LayerShape ls;
  int ranks;              /* simulated ranks */
  SimStore ops;           /* Op */
  SimStore edges;         /* Edge */
  /* Ops and edges are built a few schedule items ahead of where each
   * rank stands (sim_emit), and reused once done and out of reach
   * (sim-build.c, collect): what a replay holds is bounded by the ranks
   * times that window, not the step. */
  uint32_t free_ops;      /* free list through Op.next, or NONE */
  uint32_t free_edges;    /* free list through Edge.next, or NONE */
  uint32_t collect_at;    /* ops in the store at which to collect next */
  int window;             /* items built ahead of each rank's current one:
                           * SIM_WINDOW in full mode; all of them in
                           * symmetric mode, which is small, with
                           * offload, whose CPU Adam may wait for nothing
                           * and run from the step's start (the delayed
                           * update), and with param_prefetch over model
                           * chunks (sim-prepare.c) */
  RankBuild *builds;      /* owned: per rank */
  GArray **stage_items;   /* owned: per stage, its schedule (Item) */
  uint32_t *trigger;      /* per rank: the op whose start has the rank's
                           * next item built, or NONE */
  SimTime end;            /* the latest end of an op so far */
  int critical;           /* the lowest rank whose op ends at end */
  double *offload_tail;   /* per rank: offload time past its last compute
                           * op so far (fill_result) */
  GArray *colls;          /* Coll */
  GArray *members;        /* uint32_t */
  GHashTable *free_colls; /* member count -> GArray of finished Coll ids */
  Stream *streams;        /* owned: ranks * SIM_N_STREAMS */
  Breakdown *breakdown;   /* owned: per rank */
  /* Each program, built once. */
  Program layer_fwd, layer_bwd, layer_bwd_acc, attn_fwd, emb_fwd, emb_bwd,
          emb_bwd_acc, head_fwd, head_bwd, head_bwd_acc;
  /* An MoE model's dense layers (model.dense_layers, moe_layer_frequency;
   * sim-moe.c): the dense layer's programs, the layer_* above being the
   * MoE layer's. Pieces NULL when every layer is alike. */
  Program dense_fwd, dense_bwd, dense_bwd_acc;
  double dense_params, dense_weights;
  /* What a layer's backward runs again first: layer_fwd (full
   * recompute), attn_fwd (selective) or NULL. */
  const Program *recompute;
  /* DeepSpeed's activation checkpointing options on full recompute
   * (sim-build.c begin_checkpoint), or NULL: the kernels that set each
   * layer's input aside in forward (ckpt_save) and bring it back before
   * its recompute (ckpt_load, with the TP all-gather), and the bytes
   * of a checkpoint, which cpu_checkpointing copies to the host and
   * back. */
  const ActivationCheckpointing *ckpt;
  Program ckpt_save, ckpt_load;
  /* training.precision: fp8 (sim-fp8.c): a layer's weight casts, on a
   * chunk's first micro-batch; delayed scaling's update after a chunk's
   * forward [0] and backward [1]. Pieces NULL when not run. */
  Program fp8_weights, fp8_update[2];
  Program dense_fp8_weights;   /* an MoE model's dense layers' casts */
  double ckpt_bytes;
  double layer_params, emb_params, head_params;
  double layer_weights;   /* of layer_params, the four weight matrices */
  double grad_bytes;      /* a gradient's bytes in DP reductions and buckets
                           * (parallel.grad_reduce_precision) */
  SimTime pp_gather;      /* TP all-gather of a received activation */
  double pp_bytes;        /* sent by each GPU of a stage */
  FlowNet *flows;         /* owned; NULL without a network */
  int resources_per_node; /* NIC send and receive sides, uplink out, in */
  /* Node -> 1 + its first resource in flows: a node's resources are
   * added when a flow first needs them, so a symmetric plan of a million
   * GPUs holds those of a few nodes (and no product of the node count
   * and the resources per node has to fit 32 bits). */
  GHashTable *node_resources;
  GArray *comms;          /* Comm */
  GArray *uses;           /* FlowUse */
  GArray *coll_uses;      /* FlowUse: scratch for a collective's members */
  GArray *use_at;         /* uint32_t per flow resource: its entry in
                           * coll_uses, NONE outside launch() */
  uint32_t *pp_comm;      /* per rank and direction: the send's Comm, or
                           * NONE inside a node */
  SimTime *pp_dur;        /* per rank and direction: the send's duration;
                           * -1 until build_pp_comm has costed it */
  double absurd;          /* the longest op over MAX_OP_SECONDS, or 0 */
  const char *absurd_what;  /* and its name */
  /* In symmetric mode a TP collective waits for no other simulated rank:
   * it can join the compute op around it, which cuts the events of a
   * tp > 1 plan several-fold. Kept apart for a trace, which shows them,
   * and in full mode, where peers synchronize on them. */
  gboolean fuse_tp;
  /* The EP all-to-alls cross NICs: each is an op of its own whose bytes
   * run as a flow (sim-moe.c), never fused. */
  gboolean ep_flows;
  GArray *fused;          /* FusedParts per op, fused builds only (else
                           * NULL) */
  GArray *op_info;        /* OpInfo per op, traced runs only (else NULL) */
  /* Per rank, direction and micro-batch x chunk: the chunk's first op and
   * its outgoing send. */
  uint32_t *first_op, *send_op;
  /* Per group kind and group of it (sim-build.c, group_at): its
   * collectives in order, where the group has other simulated members:
   * in full mode every group, in symmetric mode those across stages. */
  CollQueue *colls_of[GROUP_N];
  int groups_of[GROUP_N];   /* how many groups colls_of[g] holds */
  FrameworkEpilogue epilogue;   /* framework_epilogue of the plan */
  double *dp_traffic;     /* per rank: bytes sent in DP/ZeRO collectives */
  gboolean zero3;         /* ZeRO stage 3 over a DP group of 2 or more */
  /* ZeRO-1's parameters all-gathered under the first forward
   * (parallel.param_gather_overlap) over a DP group of 2 or more. */
  gboolean param_prefetch;
  /* Gradients move after every micro-batch's backward, not only after
   * the last: ZeRO-3, and ZeRO-2 where the framework reduces each
   * micro-batch's gradients into their partitions (DeepSpeed, FSDP). */
  gboolean grads_each;
  /* ZeRO-3 gathers tensor by tensor, synchronizing (DeepSpeed 0.3). */
  gboolean zero3_per_tensor;
  /* ZeRO-2 or 3 all-reduces its gradients (DeepSpeed 0.3-0.4). */
  gboolean zero_allreduce;
  Offload offload;
  int pcie_base;          /* the node's first PCIe resource: per switch,
                           * towards the host then towards the GPUs */
  /* With host copies (sim_host_copies), each GPU's own PCIe link (out
   * of the GPU, into it), after the switches' links: its host copies and
   * the NIC traffic GPUDirect RDMA moves through it share it. -1
   * without. */
  int gpu_link_base;
  double adam_s_per_param;   /* CPU Adam, per GPU's share of the CPUs */
  SimTime host_launch;    /* the host's time to issue one kernel; 0: no
                           * host ops (the flat MFU model) */
  /* topology.variability (sim.h): symmetric mode scales every GPU time
   * by gpu_factor; full mode by its rank's rank_factor (NULL without a
   * spread or slow nodes) and by a jitter factor drawn for each op. */
  double gpu_factor;
  double *rank_factor;
  double jitter;
  guint64 seed;           /* the draws' streams: 2 seed, 2 seed + 1 */
} Sim;

/* Whether copies cross PCIe to and from the host (ZeRO-Offload, or
 * cpu_checkpointing): then each node's PCIe links are flow resources. */
static inline gboolean
sim_host_copies (const Sim *sim)
{
  return sim->offload != OFFLOAD_NONE
         || (sim->ckpt != NULL && sim->ckpt->cpu_checkpointing);
}

static inline Op *
op_at (Sim *sim, uint32_t id)
{
  return (Op *) (void *) sim->ops.blocks[id >> sim->ops.shift]
         + (id & sim->ops.mask);
}

/* A node's uplink into the fabric, out of the node (out) or into it: its
 * place among the node's resources, after its NICs' send and receive
 * sides (node_resources in sim-build.c). */
static inline uint32_t
sim_uplink (const Sim *sim, gboolean out)
{
  return 2 * (uint32_t) sim->net.nics + (out ? 0 : 1);
}

/* The factor topology.variability puts on the nominal time of RANK's
 * K-th compute-stream op (sim.h): 1 without variability. */
double sim_gpu_factor (const Sim *sim, int rank, uint32_t k);

/* Adds coef to RESOURCE in the uses being built from FIRST (one entry per
 * resource keeps the flows short). */
void sim_add_use (GArray *uses, guint first, uint32_t resource, double coef);

/* Makes sim's engine, models and programs for sim->plan and
 * sim->options (sim->plan, sim->options set, the rest zero): nothing
 * that grows with the plan's sizes (sim-prepare.c). */
void sim_prepare (Sim *sim);
/* Seconds to ticks of the op WHAT, noting in sim->absurd the longest op
 * that no sane plan has (over a day: 0 ticks then) (sim-program.c). */
SimTime sim_ticks (Sim *sim, double seconds, const char *what);
/* The lead of a piece of n launches and GPU time dur, issued from
 * host_before after gpu_before of GPU work (sim-build.c's Builder): its
 * first launch, or its last when the host is the slower (sim-program.c). */
SimTime sim_piece_lead (SimTime h, int n, SimTime dur, SimTime host_before,
                        SimTime gpu_before);
/* A program from a graph emitter over sim->ls (sim-program.c). */
Program sim_program_from_graph (Sim *sim,
                                void (*emit) (const LayerShape *, GArray *));
/* A program of the GraphOps OPS (what sim_program_from_graph builds
 * from its emitter's). */
Program sim_program_from_ops (Sim *sim, const GArray *ops);
/* An MoE model's layer programs, parameters and EP group (sim-moe.c):
 * replaces the dense layer's, kept in dense_* where the model has dense
 * layers too; nothing for a dense model. */
void sim_moe_programs (Sim *sim);
/* Whether layer L of STAGE's chunk CHUNK runs the dense layer's programs
 * (dense_*) rather than layer_* (sim-moe.c). */
gboolean sim_layer_is_dense (const Sim *sim, int stage, int chunk, int l);
/* training.precision: fp8 (sim-fp8.c): the FP8 compute model in sim->ls,
 * before the layer programs are built; then TE's programs around them. */
void sim_fp8_init (Sim *sim);
void sim_fp8_programs (Sim *sim);
/* The time of an EP all-to-all of BYTES per rank at the static share
 * (sim-moe.c). */
double sim_moe_all_to_all_time (const Sim *sim, double bytes);
/* Megatron-Core's all-gather of the token counts (GOP_EP_ALL_GATHER) of
 * BYTES gathered, over the expert TP x EP group. */
double sim_moe_counts_time (const Sim *sim, double bytes);
/* The Comm of the EP all-to-all of BYTES per rank that simulated rank
 * RANK (global rank GLOBAL, of STAGE) runs: the NICs and uplinks of its
 * GPUs, or of the GPUs of its stage in its node in symmetric mode; NONE
 * when it crosses no NIC. */
uint32_t sim_moe_comm (Sim *sim, int global, int stage, double bytes);
/* The time of a context-parallel transfer (sim-cp.c): a ring step's
 * send and receive (GOP_CP_SEND_RECV) or Ulysses' all-to-all
 * (GOP_CP_ALL_TO_ALL) over the CP group. */
double sim_cp_comm_time (const Sim *sim, const GraphOp *g);
/* Then its op graph, its stores made for the estimate's COST: each
 * rank's first sim->window schedule items (all of them where the window
 * covers the step). */
void sim_build (Sim *sim, const SimCost *cost);
/* Builds RANK's next schedule item (and the step's end after its last):
 * sim.c calls it, from an event at the time the rank's trigger op
 * starts. */
void sim_emit (Sim *sim, int rank);
/* Returns finished collective instance CID to the free list. */
void sim_free_coll (Sim *sim, uint32_t cid);
/* What sim_build will make and the replay fire, estimated (budget.c). */
void sim_estimate (const Sim *sim, SimCost *cost);
/* The simulated members of a group of kind g: in full mode all of its
 * ranks; in symmetric mode one rank stands for each stage, so a group
 * inside a stage has no other member and one across stages has one a
 * stage. */
int sim_group_members (const Sim *sim, Group g);

/* sim-comm.c: the groups and the NICs' flows. */
/* The ranks of a group of kind g in the job. */
int sim_group_size (const Sim *sim, Group g);
/* The groups of kind g that have other simulated members (in symmetric
 * mode, the one of the representatives: replica 0, tp rank 0). */
int sim_group_count (const Sim *sim, Group g);
/* Which of them rank (stage, replica, tp_rank) is in. */
int sim_group_index (const Sim *sim, Group g, int stage, int replica,
                     int tp_rank);
/* The shape of STAGE's group of kind g on the nodes. */
GroupShape sim_group_shape (const Sim *sim, Group g, int stage);
/* The first of NODE's resources in the flow net, added on first use. */
uint32_t sim_node_resources (Sim *sim, int node);
/* The PCIe link of GPU g of the node at BASE, out of the GPU or into it. */
uint32_t sim_gpu_link (const Sim *sim, uint32_t base, int g, gboolean out);
/* A Comm for cost c, for the GPUs ranks[0..n) sending (and receiving, for
 * a collective) and, for a send, peers[0..n) receiving; NONE when nothing
 * crosses a NIC. */
uint32_t sim_make_comm (Sim *sim, const CollCost *c, const int *ranks,
                        const int *peers, const double *scale, int n);
/* The ranks a representative of STAGE stands for in its first node (in
 * full mode, the rank itself); returns how many, written to out. */
int sim_stage_ranks_in_node (const Sim *sim, int rank, int stage, int *out);
/* The global rank of simulated rank (stage, replica, tp_rank). */
int sim_global_rank (const Sim *sim, int stage, int replica, int tp_rank);
/* The epilogue of STAGE, whose parameters are TENSORS tensors, in order,
 * into out; returns how many (at most EPILOGUE_MAX). */
int sim_epilogue_ops (const Sim *sim, int stage, int tensors,
                      EpilogueOp *out);
/* Frees what sim_prepare and sim_build made (sim-prepare.c). */
void sim_clear (Sim *sim);
/* The options sim_run_plan replays PLAN with: OPTIONS, but every rank
 * (full) where stages share nodes and that costs little. Returns whether
 * the stages share nodes. */
gboolean sim_choose_mode (const Plan *plan, const SimOptions *options,
                          SimOptions *chosen);
