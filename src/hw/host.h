/* host.h: the node's CPUs as ZeRO-Offload uses them.
 *
 * DeepSpeed's CPU-Adam streams the optimizer's fp32 state through the
 * cores' vector units: it is bound by the node's memory bandwidth, or with
 * few cores by the rate they issue its vector instructions. The constants
 * and their sources are in host.c. */
#pragma once

#include "config/spec.h"

/* Parameters per second the node's CPUs update with Adam, all of its GPUs'
 * shares together: host.cpu_adam_params_per_s when given, else the rate
 * host.cpu implies, else SPEC_UNSET (offload cannot be costed). */
double host_cpu_adam_rate (const HostSpec *host);
