/* net.h: links, collective algorithms and their tuner.
 *
 * A collective is costed as NCCL's own model costs it (src/graph/tuning.cc):
 * a latency per algorithm step plus bytes over the bandwidth of the links
 * it crosses. The registry has four algorithms:
 *
 *   ring          one ring through every rank; inside a node over NVLink,
 *                 between nodes through the NICs, with the ring's channels
 *                 spread over every NIC of the node. The two levels run
 *                 pipelined, so the slower one sets the time: that is why
 *                 8 x HDR reach 192 GB/s of bus bandwidth (DGX A100, as
 *                 NVIDIA measured it: NVIDIA/nccl issue #812, 2023).
 *   tree          NCCL's double binary tree between nodes, a chain inside:
 *                 log-depth latency, the choice at scale for small buffers.
 *   hierarchical  reduce-scatter inside the node, all-reduce of 1/local of
 *                 the buffer between nodes, all-gather inside the node, one
 *                 phase after the other.
 *   direct        all-to-all: every rank sends to every other at once; a
 *                 GPU's traffic leaves by its own NIC (no aggregation).
 *
 * and, where the switches reduce (SHARP), NCCL's all-reduces over them:
 *
 *   nvls          NVLink SHARP inside a node (intra_node.sharp); across
 *                 nodes with InfiniBand SHARP below it (both).
 *   nvls_tree     NVLS inside each node, NCCL's tree between nodes.
 *   collnet_direct, collnet_chain
 *                 InfiniBand SHARP (inter_node.sharp): the nodes' sums
 *                 reduced in the switches, each node's bytes crossing its
 *                 NICs once each way; the node's GPUs reach its NICs
 *                 directly (NVSwitch nodes) or in a chain.
 *
 * The tuner picks the algorithm and protocol (LL, LL128, Simple) with the
 * least predicted time for a size and a group, as NCCL does; a topology or
 * experiment may force one algorithm, as NCCL_ALGO does.
 *
 * What crosses the NICs is returned apart (CollCost.nic_bytes) so that the
 * executor can run it as a flow that shares the NICs with other flows
 * (net/flow.h); net_cost_time gives the time at a given NIC rate. The
 * network knows nothing about transformers. */
#pragma once

#include "config/spec.h"

typedef enum {
  NET_ALGO_RING,
  NET_ALGO_TREE,
  NET_ALGO_HIERARCHICAL,
  NET_ALGO_DIRECT,
  NET_ALGO_NVLS,          /* NVLink SHARP (with IB SHARP across nodes) */
  NET_ALGO_NVLS_TREE,     /* NVLS in each node, a tree between nodes */
  NET_ALGO_COLLNET_DIRECT, /* InfiniBand SHARP, NVSwitch nodes */
  NET_ALGO_COLLNET_CHAIN, /* InfiniBand SHARP, a chain in each node */
  NET_ALGO_N
} NetAlgo;

typedef enum {
  NET_PROTO_LL,
  NET_PROTO_LL128,
  NET_PROTO_SIMPLE,
  NET_PROTO_N
} NetProto;

/* A communicating group, as laid out on nodes: size ranks, per_node of
 * them in each node it touches. */
typedef struct {
  int size;
  int per_node;
} GroupShape;

typedef struct {
  int gpus_per_node;
  gboolean has_network;
  gboolean ll128;            /* NCCL enables LL128 on NVLink nodes only */
  double intra_bandwidth;    /* effective bytes/s per GPU inside a node */
  double intra_latency;      /* s per step inside a node (Simple protocol) */
  double nvls_bandwidth;     /* NVLS all-reduce's algorithm bytes/s per GPU;
                              * 0: no NVLink SHARP (intra_node.sharp) */
  gboolean hopper;           /* the GPUs' generation is Hopper or later:
                              * NCCL's Hopper rows (net.c, channel_cap) */
  gboolean collnet;          /* InfiniBand SHARP (inter_node.sharp) */
  gboolean collnet_direct;   /* its Direct form: NVSwitch nodes */
  double collnet_fraction;   /* what CollNet Direct keeps of its links and
                              * NICs (NCCL_COLLNET_HOPPER_FRACTION on
                              * Hopper) */
  int nics;                  /* per node */
  double nic_bandwidth;      /* effective bytes/s of one NIC, per direction */
  double inter_latency;      /* s per step across nodes (Simple protocol) */
  NicPath nic_path;
  int nic_of_gpu[SPEC_MAX_GPUS_PER_NODE];  /* as the topology places them */
  int gpus_on_nic[SPEC_MAX_GPUS_PER_NODE];
  /* The fabric: traffic that leaves a group of nodes_per_group nodes (a
   * leaf switch's, a dragonfly group's) crosses links of uplink_fraction
   * of the bandwidth those nodes inject. */
  int nodes_per_group;
  double uplink_fraction;    /* taper x routing efficiency x what other
                              * jobs leave (background_keep) */
  /* Where the job's nodes sit: packed, node n in fabric group
   * n / nodes_per_group; spread, in group n mod groups. */
  Placement placement;
  int groups;
  /* Other jobs' traffic on the links out of the groups: its mean load,
   * how it varies, and what the job keeps of such a link, on average over
   * the bursts (1 on an idle fabric). */
  double background_load;
  BackgroundPattern background_pattern;
  guint32 background_seed;
  double congestion_exponent;
  double background_keep;
  AlgorithmChoice algorithm; /* auto, or the one the user forces */
} NetModel;

/* A collective's cost, split into what the node's own links take and what
 * crosses the NICs (per member GPU, per direction). */
typedef struct {
  NetAlgo algo;
  NetProto proto;
  double latency_s;      /* the steps' latencies */
  double intra_s;        /* on NVLink/NVSwitch at full speed, or at NCCL's
                          * limit per channel where lower (a GPU-side bound) */
  double nic_bytes;      /* through the NICs, per member GPU (protocol
                          * overhead included) */
  double uplink_share;   /* of nic_bytes, the share that leaves the leaf
                          * switch or dragonfly group */
  gboolean pipelined;    /* the two levels overlap (else they add) */
  gboolean own_nic;      /* each GPU uses only its own NIC (no PXN) */
  int per_node;          /* member GPUs in each node */
} CollCost;

void net_model_init (NetModel *net, const TopologySpec *topology,
                     AlgorithmChoice algorithm);
/* The shape of the group of count ranks first, first + stride, ...
 * (Megatron's rank order puts TP fastest, then DP, then PP). A group that
 * straddles nodes unevenly takes its fewest members in one node: that node
 * carries the most bytes per GPU across the network. O(gpus_per_node),
 * whatever the count. */
GroupShape net_group_shape (const NetModel *net, int first, int count,
                            int stride);
/* How many of the count ranks first, first + stride, ... are in node
 * (0 when none). O(1). */
int net_group_members_in_node (const NetModel *net, int first, int count,
                               int stride, int64_t node);
/* The cost of one collective on a buffer of bytes per rank (for a send,
 * the bytes sent; for all-gather, the gathered result's size; for
 * all-to-all, what each rank sends in all), with the algorithm and
 * protocol the tuner picks when `active` GPUs of each node communicate
 * (0: all of them), or the given one (algo >= 0). A cost whose algorithm
 * does not apply (tree for reduce-scatter) is the ring's. */
CollCost net_collective_cost (const NetModel *net, CollKind kind, double bytes,
                              GroupShape group, int algo, int active);
/* The NIC rate each member GPU gets when `active` GPUs of every node
 * send at once, spread over the NICs as the cost says (NVLink path: every
 * NIC; own NIC: the NIC's share), with the fabric's uplink bound. */
double net_static_rate (const NetModel *net, const CollCost *cost, int active);
/* Seconds for a cost whose NIC part runs at rate bytes/s per GPU. */
double net_cost_time (const CollCost *cost, double rate);
/* Seconds for a cost when `active` GPUs of every node communicate at once
 * (0: all of them): its NIC part at net_static_rate. */
double net_static_time (const NetModel *net, const CollCost *cost, int active);
/* Seconds for one collective when every GPU of each node communicates at
 * once (the static share): what TP collectives and the benchmark use. */
double net_collective_time (const NetModel *net, CollKind kind, double bytes,
                            GroupShape group);
/* The cost of a point-to-point transfer between ranks a and b. */
CollCost net_send_cost (const NetModel *net, double bytes, int rank_a,
                        int rank_b);
/* The time of one collective of bytes per rank over gpus ranks, per_node
 * of them in each node, in an nccl-tests run (one process per GPU, every
 * rank of a node communicating at once; a send goes from each rank to the
 * next, one GPU of each node crossing to the next node). Its cost, with
 * the algorithm and protocol the tuner picked, goes to *cost. */
double net_benchmark_time (const NetModel *net, CollKind kind, double bytes,
                           int gpus, int per_node, CollCost *cost);
/* Bus bandwidth (nccl-tests' definition) of a collective, bytes/s. */
double net_bus_bandwidth (CollKind kind, double bytes, int size,
                          double seconds);
/* What a job keeps of a link out of its group while other jobs load it
 * `load` (a share in [0, 1)): (1 - load)^congestion_exponent, the
 * exponent measured per link kind (net.c: 0.70 for InfiniBand HDR on
 * Leonardo, 0.017 for Slingshot-11 on LUMI, both fitted at load 0.5).
 * Exactly 1 on an idle fabric. O(1). */
double net_background_keep_at (const NetModel *net, double load);
/* The length of a burst window of a bursty background, seconds. */
#define NET_BURST_WINDOW_S LEDGER (NET_BURST_WINDOW_S)   /* an assumption */
/* The other jobs' load in burst window `window` (the window of time t is
 * floor(t / NET_BURST_WINDOW_S)): for a bursty background, load / duty
 * in a window the seed draws as on, with probability SPEC_BURST_DUTY, 0
 * otherwise; for a steady one its load. The same seed and window give
 * the same answer on every machine. O(1). */
double net_background_load_in (const NetModel *net, int64_t window);
const char *net_algo_name (NetAlgo algo);
const char *net_proto_name (NetProto proto);
