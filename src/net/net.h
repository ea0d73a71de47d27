/* net.h: links and collective algorithms, alpha-beta style.
 *
 * A collective's time is latency per algorithm step plus bytes over the
 * bandwidth of the slowest link it crosses: NVSwitch inside a node, the
 * node's NICs between nodes. Inside a node a ring; across nodes
 * hierarchical, as NCCL does on multi-NIC nodes: reduce-scatter inside the
 * node, a ring across nodes on 1/p_local of the buffer (each GPU on its
 * share of the node's NICs), all-gather inside the node. That is why the
 * node's NIC count, not one NIC, sets multi-node all-reduce bandwidth. The
 * network knows nothing about transformers. */
#pragma once

#include "config/spec.h"

typedef enum {
  COLL_ALL_REDUCE,
  COLL_REDUCE_SCATTER,
  COLL_ALL_GATHER,
  COLL_SEND,          /* point-to-point, one rank to one rank */
  COLL_N
} CollKind;

/* A communicating group, as laid out on nodes: size ranks, per_node of
 * them in each node it touches. */
typedef struct {
  int size;
  int per_node;
} GroupShape;

typedef struct {
  int gpus_per_node;
  double intra_bandwidth;    /* effective bytes/s per GPU inside a node */
  double intra_latency;      /* s per ring step inside a node */
  double nic_share;          /* effective bytes/s of NIC per GPU when every
                              * GPU of the node talks across nodes at once */
  double inter_latency;      /* s per ring step across nodes */
  gboolean has_network;
} NetModel;

void net_model_init (NetModel *net, const TopologySpec *topology);
/* The shape of the group of count ranks first, first + stride, ...
 * (Megatron's rank order puts TP fastest, then DP, then PP). A group that
 * straddles nodes unevenly takes its fewest members in one node: that node
 * carries the most bytes per GPU across the network. */
GroupShape net_group_shape (const NetModel *net, int first, int count,
                            int stride);
/* Seconds for one collective on a buffer of bytes per rank (for a send,
 * the bytes sent; for all-gather, the gathered result's size). */
double net_collective_time (const NetModel *net, CollKind kind, double bytes,
                            GroupShape group);
/* Seconds for a point-to-point transfer between ranks a and b. */
double net_send_time (const NetModel *net, double bytes, int rank_a,
                      int rank_b);
/* Bus bandwidth (nccl-tests' definition) of a collective, bytes/s. */
double net_bus_bandwidth (CollKind kind, double bytes, int size,
                          double seconds);
