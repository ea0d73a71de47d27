/* flow.h: flows sharing links max-min fairly (SimGrid's flow model).
 *
 * A resource is a link direction with a capacity in bytes/s (a NIC's send
 * side, a node's uplinks into the fabric). A flow moves a number of bytes
 * and uses resources with coefficients: a coefficient of 2 on a NIC means
 * two GPUs' worth of the flow's rate cross it (a representative rank that
 * stands for two GPUs behind that NIC). Rates are the max-min fair
 * allocation, by progressive filling: every unfinished flow's rate grows
 * at the same pace until some resource is full; the flows through it are
 * frozen, and the others go on.
 *
 * Whenever a flow starts or ends, the rates of the flows it shares
 * resources with (transitively) are worked out again and every flow whose
 * rate changed has its completion event re-keyed in the engine: two
 * flows on one NIC each get half, and when one ends the other gets all of
 * it from that moment. */
#pragma once

#include <glib.h>
#include "engine/engine.h"

typedef struct FlowNet FlowNet;

typedef struct {
  uint32_t resource;
  double coef;
} FlowUse;

/* A net of `resources` resources (ids 0 ..) of the given capacities,
 * bytes/s; more may be added. */
FlowNet *flow_net_new (SimEngine *engine, guint resources,
                       const double *capacity);
/* Adds a resource; returns its id, the next one. */
uint32_t flow_net_add_resource (FlowNet *net, double capacity);
void flow_net_free (FlowNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FlowNet, flow_net_free)

/* Starts a flow of bytes over uses (copied; each resource at most once);
 * fn (engine, ctx, arg) fires when its last byte is through. Returns the
 * flow's id, valid until then. */
uint32_t flow_start (FlowNet *net, double bytes, const FlowUse *uses,
                     guint n_uses, SimEventFn fn, void *ctx, uint64_t arg);
/* The flow's current rate, bytes/s. */
double flow_rate (const FlowNet *net, uint32_t flow);
