/* sim-store.c: the op graph's arrays in fixed blocks; see sim-private.h.
 *
 * A GArray doubles (and copies) as it grows, so it holds both copies at
 * once, and reserving it up front to avoid that reserves the estimate's
 * worth of address space before anything is built, which makes
 * `ulimit -v` useless as a cap on the simulator. Blocks of 2^shift
 * items, sized for the items expected, are allocated as the build
 * reaches them: nothing is copied, an element never moves (a pointer to
 * it stays valid while the store lives), and what is allocated is what
 * is used, to within a block (whose pages past the last item are never
 * touched, and so take no memory). */
#include "parallel/sim-private.h"

/* The shift of blocks for N items: the least that holds them in one,
 * within [SIM_BLOCK_MIN_SHIFT, SIM_BLOCK_SHIFT]. */
static guint
block_shift (uint64_t n)
{
  guint shift = SIM_BLOCK_MIN_SHIFT;
  while (shift < SIM_BLOCK_SHIFT && ((uint64_t) 1 << shift) < n)
    shift++;
  return shift;
}

void
sim_store_init (SimStore *s, guint item, uint64_t expected)
{
  guint shift = block_shift (expected);
  *s = (SimStore) { NULL, 0, 0, item, shift, (1u << shift) - 1 };
}

void
sim_store_grow (SimStore *s)
{
  g_assert (s->len < UINT32_MAX);
  guint block = s->len >> s->shift;
  if (block == s->cap)
    {
      s->cap = MAX (16u, 2 * s->cap);
      s->blocks = g_renew (char *, s->blocks, s->cap);
    }
  s->blocks[block] = g_malloc ((gsize) s->item << s->shift);
}

void
sim_store_clear (SimStore *s)
{
  guint used = (guint) (((uint64_t) s->len + s->mask) >> s->shift);
  for (guint b = 0; b < used; b++)
    g_free (s->blocks[b]);
  g_free (s->blocks);
  *s = (SimStore) { NULL, 0, 0, s->item, s->shift, s->mask };
}

gsize
sim_store_bytes (guint item, uint64_t n)
{
  guint shift = block_shift (n);
  uint64_t blocks = (n + ((uint64_t) 1 << shift) - 1) >> shift;
  return (gsize) (n * item + blocks * sizeof (char *));
}
