/* config-topology.c: the keys of a topology (config-private.h's Field
 * tables): its device, the links within and between nodes, the fabric
 * and its background traffic, the host and storage; and the checks
 * across their fields once a topology is decoded. Their defaults are
 * config_experiment_defaults()'s (config-experiment.c). */
#include "config/config-private.h"

#include "base/units.h"

static const Field peak_fields[] = {
  { "fp32", F_UNIT, .offset = PRECISION_FP32 * sizeof (double), .arg = UNIT_FLOPS },
  { "tf32", F_UNIT, .offset = PRECISION_TF32 * sizeof (double), .arg = UNIT_FLOPS },
  { "fp16", F_UNIT, REQUIRED, .offset = PRECISION_FP16 * sizeof (double), .arg = UNIT_FLOPS },
  { "bf16", F_UNIT, REQUIRED, .offset = PRECISION_BF16 * sizeof (double), .arg = UNIT_FLOPS },
  { "fp8", F_UNIT, .offset = PRECISION_FP8 * sizeof (double), .arg = UNIT_FLOPS },
  END
};

const Field config_device_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, DeviceSpec, name),
  F ("peak", F_MAP, DeviceSpec, peak_flops, REQUIRED, .sub = peak_fields),
  F ("memory", F_UNIT, DeviceSpec, memory_bytes, REQUIRED, .arg = UNIT_BYTES),
  F ("hbm_bandwidth", F_UNIT, DeviceSpec, hbm_bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("matmul_efficiency", F_FRACTION, DeviceSpec, matmul_efficiency),
  F ("hbm_efficiency", F_FRACTION, DeviceSpec, hbm_efficiency),
  F ("sms", F_INT, DeviceSpec, sms),
  F ("generation", F_ENUM, DeviceSpec, generation, .arg = SPEC_ENUM_GENERATION),
  END
};

static const Field intra_node_fields[] = {
  F ("link", F_ENUM, IntraNodeSpec, link, .arg = SPEC_ENUM_LINK),
  F ("bandwidth", F_UNIT, IntraNodeSpec, bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("latency", F_UNIT, IntraNodeSpec, latency, .arg = UNIT_TIME),
  F ("efficiency", F_FRACTION, IntraNodeSpec, efficiency),
  F ("sharp", F_BOOL, IntraNodeSpec, sharp),
  END
};

static const Field background_fields[] = {
  F ("load", F_SHARE, BackgroundSpec, load),
  F ("pattern", F_ENUM, BackgroundSpec, pattern, .arg = SPEC_ENUM_BACKGROUND),
  F ("seed", F_INT, BackgroundSpec, seed),
  F ("congestion_exponent", F_NUMBER, BackgroundSpec, congestion_exponent),
  END
};

static const Field fabric_fields[] = {
  F ("kind", F_ENUM, FabricSpec, kind, .arg = SPEC_ENUM_FABRIC),
  F ("taper", F_FRACTION, FabricSpec, taper),
  F ("nodes_per_group", F_INT, FabricSpec, nodes_per_group),
  F ("groups", F_INT, FabricSpec, groups),
  F ("routing_efficiency", F_FRACTION, FabricSpec, routing_efficiency),
  F ("placement", F_ENUM, FabricSpec, placement, .arg = SPEC_ENUM_PLACEMENT,
     MARK (placement)),
  F ("background", F_MAP, FabricSpec, background, .sub = background_fields),
  END
};

static const Field inter_node_fields[] = {
  F ("link", F_ENUM, InterNodeSpec, link, .arg = SPEC_ENUM_LINK),
  F ("nics_per_node", F_INT, InterNodeSpec, nics_per_node, REQUIRED),
  F ("nic_bandwidth", F_UNIT, InterNodeSpec, nic_bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("latency", F_UNIT, InterNodeSpec, latency, .arg = UNIT_TIME),
  F ("efficiency", F_FRACTION, InterNodeSpec, efficiency),
  F ("fabric", F_MAP, InterNodeSpec, fabric, .sub = fabric_fields),
  F ("nic_path", F_ENUM, InterNodeSpec, nic_path, .arg = SPEC_ENUM_NIC_PATH),
  F ("nic_of_gpu", F_INT_LIST, InterNodeSpec, nic_of_gpu, .arg = 0,
     .example = "[0, 0, 1, 1] (the NIC of each GPU)"),
  F ("sharp", F_BOOL, InterNodeSpec, sharp),
  END
};

static const Field cpu_fields[] = {
  F ("sockets", F_INT, CpuSpec, sockets, REQUIRED),
  F ("cores", F_INT, CpuSpec, cores, REQUIRED),
  F ("frequency", F_UNIT, CpuSpec, frequency, REQUIRED, .arg = UNIT_FREQUENCY),
  F ("simd_bits", F_INT, CpuSpec, simd_bits, REQUIRED),
  F ("memory_bandwidth", F_UNIT, CpuSpec, memory_bandwidth, REQUIRED,
     .arg = UNIT_BANDWIDTH),
  END
};

static const Field host_fields[] = {
  F ("pcie_bandwidth", F_UNIT, HostSpec, pcie_bandwidth, .arg = UNIT_BANDWIDTH),
  F ("memory", F_UNIT, HostSpec, memory_bytes, .arg = UNIT_BYTES),
  F ("cpu_adam_params_per_s", F_NUMBER, HostSpec, cpu_adam_params_per_s),
  F ("cpu", F_MAP, HostSpec, cpu, .sub = cpu_fields),
  F ("gpus_per_pcie_switch", F_INT, HostSpec, gpus_per_pcie_switch),
  F ("kernel_launch", F_UNIT, HostSpec, kernel_launch_s, .arg = UNIT_TIME),
  END
};

/* A megabyte a second is slower than any disk a checkpoint is written
 * to: below it a 125M model's checkpoint (1.75 GB) takes half an hour to
 * write or read, and a large one's times overflow the closed forms into
 * inf and NaN. Write and read are held to the same floor. */
#define MIN_STORAGE_BANDWIDTH 1e6
static gboolean
storage_finish (const YNode *map, const char *path, void *base, GError **error)
{
  const StorageSpec *st = base;
  const struct { const char *key; double v; } rates[] = {
    { "bandwidth", st->bandwidth }, { "read_bandwidth", st->read_bandwidth },
    { "node_bandwidth", st->node_bandwidth },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (rates); i++)
    {
      const YPair *r = ytree_map_find (map, rates[i].key);
      if (r && rates[i].v < MIN_STORAGE_BANDWIDTH)
        {
          ytree_set_error (error, r->value->mark, "%s.%s must be at least 1MB/s (a "
                           "file system's aggregate, such as 273GB/s), got %g B/s",
                           path, rates[i].key, rates[i].v);
          return FALSE;
        }
    }
  return TRUE;
}

static const Field storage_fields[] = {
  F ("bandwidth", F_UNIT, StorageSpec, bandwidth, REQUIRED, .arg = UNIT_BANDWIDTH),
  F ("read_bandwidth", F_UNIT, StorageSpec, read_bandwidth, .arg = UNIT_BANDWIDTH),
  F ("node_bandwidth", F_UNIT, StorageSpec, node_bandwidth, .arg = UNIT_BANDWIDTH),
  END
};

/* A slow-node count past any cluster's is refused as a typo; the plan
 * checks it against the job's nodes (parallel/plan.c). */
#define MAX_SLOW_NODES 1000000
static const Field variability_fields[] = {
  F ("gpu_speed_spread", F_SHARE, VariabilitySpec, gpu_speed_spread),
  F ("jitter", F_SHARE, VariabilitySpec, jitter),
  F ("slow_nodes", F_INT_RANGE, VariabilitySpec, slow_nodes, .arg = MAX_SLOW_NODES,
     MARK (slow_nodes)),
  F ("slow_node_slowdown", F_SHARE, VariabilitySpec, slow_node_slowdown),
  F ("seed", F_INT, VariabilitySpec, seed),
  END
};

const Field config_topology_fields[] = {
  FILE_KEYS,
  F ("name", F_NAME, TopologySpec, name),
  F ("gpus_per_node", F_INT, TopologySpec, gpus_per_node, REQUIRED),
  F ("gpu", F_REF, TopologySpec, gpu, REQUIRED, .arg = REF_DEVICE, .sub = config_device_fields),
  F ("intra_node", F_MAP, TopologySpec, intra_node, REQUIRED, .sub = intra_node_fields),
  F ("inter_node", F_MAP, TopologySpec, inter_node, .sub = inter_node_fields),
  F ("host", F_MAP, TopologySpec, host, .sub = host_fields),
  F ("storage", F_MAP, TopologySpec, storage, .sub = storage_fields,
     .finish = storage_finish),
  F ("variability", F_MAP, TopologySpec, variability, .sub = variability_fields),
  END
};

/* Checks across a fabric's fields (INTER, the inter_node mapping, may be
 * NULL): spread placement deals nodes over the groups, so it needs their
 * count; bursts run at the mean load over SPEC_BURST_DUTY, which must stay
 * under the whole link. */
static gboolean
fabric_finish (const YNode *inter, const char *path, const FabricSpec *f,
               GError **error)
{
  const YPair *kv = inter ? ytree_map_find (inter, "fabric") : NULL;
  const YNode *fabric = kv ? kv->value : NULL;

  if (f->placement == PLACEMENT_SPREAD && f->groups == 0)
    {
      const YPair *p = ytree_map_find (fabric, "placement");
      ytree_set_error (error, p->value->mark, "%s.inter_node.fabric.placement: spread "
                       "deals the nodes round robin over the fabric's groups, but the "
                       "fabric does not say how many it has: set inter_node.fabric.groups "
                       "(and nodes_per_group), or use placement: packed", path);
      return FALSE;
    }
  if (f->background.pattern == BACKGROUND_BURSTY
      && f->background.load >= SPEC_BURST_DUTY)
    {
      const YPair *b = ytree_map_find (fabric, "background");
      const YPair *l = ytree_map_find (b->value, "load");
      ytree_set_error (error, (l ? l->value : b->value)->mark,
                       "%s.inter_node.fabric.background.load (%g) must be under %g with "
                       "pattern: bursty (its bursts carry the load over %g of the time), "
                       "or use pattern: steady", path, f->background.load, SPEC_BURST_DUTY,
                       SPEC_BURST_DUTY);
      return FALSE;
    }
  /* The link kinds' own exponents are at most 1, so only a given one can
   * take the kept share to nothing (a capacity of 0 the flow model cannot
   * hold); the peak is a burst's load, load / duty. */
  double e = f->background.congestion_exponent;
  double peak = f->background.load
    / (f->background.pattern == BACKGROUND_BURSTY ? SPEC_BURST_DUTY : 1);
  if (e != SPEC_UNSET && spec_background_keep (peak, e) < SPEC_MIN_BACKGROUND_KEEP)
    {
      const YPair *b = ytree_map_find (fabric, "background");
      const YPair *x = ytree_map_find (b->value, "congestion_exponent");
      ytree_set_error (error, x->value->mark,
                       "%s.inter_node.fabric.background: load %.12g with congestion_exponent "
                       "%g leaves the job %.3g of each shared link, less than the %g a "
                       "prediction needs: lower the exponent (measured: 0.017 to 0.70) or "
                       "the load", path, f->background.load, e,
                       spec_background_keep (peak, e), SPEC_MIN_BACKGROUND_KEEP);
      return FALSE;
    }
  return TRUE;
}

/* NVLink SHARP is the third-generation NVSwitch's (NVIDIA, "The
 * third-generation NVSwitch", Hot Chips 34, 2022: the switch reduces and
 * multicasts), which only Hopper GPUs reach: an NVLink bridge, PCIe or an
 * A100's second-generation NVSwitch cannot reduce, and NCCL's NVLS needs
 * compute capability 9.0 (the NVLS graph's search stops below it,
 * ncclTopoCompute, src/graph/search.cc; multicast support,
 * ncclNvlsInit, src/transport/nvls.cc; NCCL v2.21.5-1). */
static gboolean
sharp_finish (const YNode *map, const char *path, const TopologySpec *t,
              GError **error)
{
  if (!t->intra_node.sharp)
    return TRUE;
  const YPair *i = ytree_map_find (map, "intra_node");
  const YPair *s = ytree_map_find (i->value, "sharp");
  if (t->intra_node.link != LINK_NVSWITCH)
    {
      ytree_set_error (error, s->value->mark, "%s.intra_node.sharp: NVLink SHARP "
                       "reduces in NVSwitches; this node's link is %s: use link: "
                       "nvswitch or sharp: false", path,
                       spec_enum_name (SPEC_ENUM_LINK, t->intra_node.link));
      return FALSE;
    }
  if (t->gpu.generation < GENERATION_HOPPER)
    {
      ytree_set_error (error, s->value->mark, "%s.intra_node.sharp: NVLink SHARP "
                       "needs third-generation NVSwitches and Hopper GPUs; %s is "
                       "generation %s: use a device with generation: hopper or "
                       "sharp: false", path, t->gpu.name,
                       spec_enum_name (SPEC_ENUM_GENERATION, t->gpu.generation));
      return FALSE;
    }
  return TRUE;
}

/* InfiniBand SHARP is the switches' (Mellanox/NVIDIA Quantum HDR and
 * Quantum-2 NDR switches reduce in the network, SHARPv2 and v3), reached
 * by NCCL through the SHARP plugin as CollNet: no other fabric here has
 * it. */
static gboolean
ib_sharp_finish (const YNode *map, const char *path, const TopologySpec *t,
                 GError **error)
{
  LinkKind link = t->inter_node.link;
  if (!t->inter_node.sharp || link == LINK_INFINIBAND_HDR
      || link == LINK_INFINIBAND_NDR)
    return TRUE;
  const YPair *i = ytree_map_find (map, "inter_node");
  const YPair *s = ytree_map_find (i->value, "sharp");
  ytree_set_error (error, s->value->mark, "%s.inter_node.sharp: InfiniBand SHARP "
                   "reduces in InfiniBand switches; this fabric's link is %s: use "
                   "link: infiniband-hdr or infiniband-ndr, or sharp: false", path,
                   spec_enum_name (SPEC_ENUM_LINK, link));
  return FALSE;
}

/* Checks across a topology's fields: the NICs divide among the GPUs (or
 * nic_of_gpu says who shares which), and nic_path's default. */
gboolean
config_topology_finish (const YNode *map, const char *path, void *base, GError **error)
{
  TopologySpec *t = base;
  InterNodeSpec *in = &t->inter_node;
  const YNode *inter = NULL, *list = NULL;
  const YPair *kv = ytree_map_find (map, "inter_node");
  int gpn = t->gpus_per_node, nics = in->nics_per_node;

  if (gpn > SPEC_MAX_GPUS_PER_NODE)
    {
      const YPair *g = ytree_map_find (map, "gpus_per_node");
      ytree_set_error (error, g->value->mark, "%s.gpus_per_node (%d) is more than the %d "
                       "GPUs per node trainsim models", path, gpn, SPEC_MAX_GPUS_PER_NODE);
      return FALSE;
    }
  if (kv)
    {
      inter = kv->value;
      const YPair *l = ytree_map_find (inter, "nic_of_gpu");
      list = l ? l->value : NULL;
    }
  if (gpn % t->host.gpus_per_pcie_switch != 0)
    {
      const YPair *h = ytree_map_find (map, "host");
      const YPair *g = ytree_map_find (h->value, "gpus_per_pcie_switch");
      ytree_set_error (error, g->value->mark, "%s.host.gpus_per_pcie_switch (%d) must "
                       "divide gpus_per_node %d", path, t->host.gpus_per_pcie_switch, gpn);
      return FALSE;
    }
  if (t->host.cpu.sockets > 0 && t->host.cpu.simd_bits != 128
      && t->host.cpu.simd_bits != 256 && t->host.cpu.simd_bits != 512)
    {
      const YPair *h = ytree_map_find (map, "host");
      const YPair *c = ytree_map_find (h->value, "cpu");
      const YPair *b = ytree_map_find (c->value, "simd_bits");
      ytree_set_error (error, b->value->mark, "%s.host.cpu.simd_bits (%d) must be "
                       "128 (SSE, NEON), 256 (AVX2) or 512 (AVX-512)", path,
                       t->host.cpu.simd_bits);
      return FALSE;
    }
  if (!fabric_finish (inter, path, &in->fabric, error))
    return FALSE;
  if (!sharp_finish (map, path, t, error) || !ib_sharp_finish (map, path, t, error))
    return FALSE;
  if (!inter || !ytree_map_find (inter, "nic_path"))
    in->nic_path = t->intra_node.link == LINK_NVSWITCH || t->intra_node.link == LINK_NVLINK
                   ? NIC_PATH_NVLINK : NIC_PATH_PCIE;
  if (nics == 0)
    return TRUE;
  if (nics > SPEC_MAX_GPUS_PER_NODE)
    {
      const YPair *n = ytree_map_find (inter, "nics_per_node");
      ytree_set_error (error, n->value->mark, "%s.inter_node.nics_per_node (%d) is more "
                       "than the %d NICs per node trainsim models", path, nics,
                       SPEC_MAX_GPUS_PER_NODE);
      return FALSE;
    }
  if (list)
    {
      gboolean used[SPEC_MAX_GPUS_PER_NODE] = { FALSE };
      if (in->nic_of_gpu.len != gpn)
        {
          ytree_set_error (error, list->mark, "%s.inter_node.nic_of_gpu lists %d GPUs; the "
                           "node has gpus_per_node: %d", path, in->nic_of_gpu.len, gpn);
          return FALSE;
        }
      for (int g = 0; g < gpn; g++)
        {
          if (in->nic_of_gpu.v[g] >= nics)
            {
              const YNode *item = g_ptr_array_index (list->items, g);
              ytree_set_error (error, item->mark, "%s.inter_node.nic_of_gpu[%d] is NIC %d; "
                               "the node has NICs 0 to %d (nics_per_node: %d)", path, g,
                               in->nic_of_gpu.v[g], nics - 1, nics);
              return FALSE;
            }
          used[in->nic_of_gpu.v[g]] = TRUE;
        }
      for (int n = 0; n < nics; n++)
        if (!used[n])
          {
            ytree_set_error (error, list->mark, "%s.inter_node.nic_of_gpu puts no GPU next "
                             "to NIC %d of %d; every NIC needs one", path, n, nics);
            return FALSE;
          }
      return TRUE;
    }
  /* Over NVLink any GPU reaches any NIC, so an uneven count still
   * spreads evenly; over PCIe each GPU is tied to one NIC and an uneven
   * count must say which GPUs share which. */
  if (in->nic_path == NIC_PATH_PCIE && gpn % nics != 0 && nics % gpn != 0)
    {
      const YPair *n = ytree_map_find (inter, "nics_per_node");
      ytree_set_error (error, n->value->mark, "%s.inter_node.nics_per_node (%d) does not "
                       "divide among %d GPUs per node behind PCIe (nic_path: pcie): use a "
                       "count that divides %d or that %d divides, or say which GPUs share "
                       "which NIC with nic_of_gpu, such as [0, 0, 0, 1, 1, 1, 2, 2]", path,
                       nics, gpn, gpn, gpn);
      return FALSE;
    }
  return TRUE;
}
