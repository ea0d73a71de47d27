/* run-hints.h: `trainsim run`'s suggestions for a plan that cannot run
 * (FOR_MEMORY false: the layout breaks a rule) or does not fit (FOR_MEMORY
 * true): the experiment PATH with SETS and each of a few changes (for
 * memory: recompute, ZeRO stage, a halved micro-batch; for a rule:
 * dp=auto; for both: the nearby tp and pp of TP and PP, 0 when unknown,
 * with dp=auto), each run; the ones that run and fit, at most three,
 * the fewest keys changed first, then the fastest, on stderr. */
#pragma once

#include <glib.h>

void run_hints_print (const char *path, const char *const *sets, gboolean for_memory,
                      int tp, int pp, int micro_batch);
