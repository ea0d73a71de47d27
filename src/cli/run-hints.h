/* run-hints.h: `trainsim run`'s suggestions for a plan that cannot run
 * (FOR_MEMORY false: the layout breaks a rule) or does not fit (FOR_MEMORY
 * true): the experiment PATH with SETS and each of a few changes of one
 * or two keys (recompute, ZeRO stage, a halved micro-batch; dp=auto; tp
 * or pp halved or doubled from TP and PP, 0 when unknown), each run; the
 * ones that run and fit, at most three, fastest first, on stderr. */
#pragma once

#include <glib.h>

void run_hints_print (const char *path, const char *const *sets, gboolean for_memory,
                      int tp, int pp, int micro_batch);
