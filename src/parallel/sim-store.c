/* sim-store.c: the op graph's arrays in fixed blocks; see sim-private.h.
 *
 * A GArray doubles (and copies) as it grows, so it holds both copies at
 * once, and reserving it up front to avoid that reserves the estimate's
 * worth of address space before anything is built, which makes
 * `ulimit -v` useless as a cap on the simulator. Blocks of
 * SIM_BLOCK_ITEMS items are allocated as the build reaches them: nothing
 * is copied, an element never moves (a pointer to it stays valid while
 * the store lives), and what is allocated is what is used, to within a
 * block (whose pages past the last item are never touched, and so take
 * no memory). */
#include "parallel/sim-private.h"

void
sim_store_init (SimStore *s, guint item)
{
  *s = (SimStore) { NULL, 0, 0, item };
}

void
sim_store_grow (SimStore *s)
{
  g_assert (s->len < UINT32_MAX);
  guint block = s->len >> SIM_BLOCK_SHIFT;
  if (block == s->cap)
    {
      s->cap = MAX (16u, 2 * s->cap);
      s->blocks = g_renew (char *, s->blocks, s->cap);
    }
  s->blocks[block] = g_malloc ((gsize) s->item << SIM_BLOCK_SHIFT);
}

void
sim_store_clear (SimStore *s)
{
  guint used = (s->len + SIM_BLOCK_MASK) >> SIM_BLOCK_SHIFT;
  for (guint b = 0; b < used; b++)
    g_free (s->blocks[b]);
  g_free (s->blocks);
  sim_store_init (s, s->item);
}

gsize
sim_store_bytes (guint item, uint64_t n)
{
  uint64_t blocks = (n + SIM_BLOCK_MASK) >> SIM_BLOCK_SHIFT;
  return (gsize) (n * item + blocks * sizeof (char *));
}
