/* run-hints.c: what `trainsim run` suggests when the plan as written
 * cannot run or does not fit (issue 34, item 5). Each suggestion is a
 * change of a few keys, tried by running it: only changes that run and
 * fit are named, the nearest (fewest keys) first, then the fastest. */
#include "cli/run-hints.h"
#include "cli/cli.h"
#include "config/config.h"
#include "parallel/sim.h"
#include <string.h>

/* The changes named at most: a user reads a line, not a search. */
#define HINTS_MAX 3

typedef struct {
  char *sets;     /* the change, as --set arguments */
  int keys;       /* how many keys it changes */
  double time_s;  /* its step */
} Hint;

static void
hint_clear (gpointer data)
{
  g_free (((Hint *) data)->sets);
}

/* The nearest first (fewest keys changed), then the fastest. */
static int
by_keys_then_time (gconstpointer a, gconstpointer b)
{
  const Hint *p = a, *q = b;
  if (p->keys != q->keys)
    return p->keys - q->keys;
  return (p->time_s > q->time_s) - (p->time_s < q->time_s);
}

/* Runs PATH with SETS and then the KEY=VALUE pairs of CHANGE (separated
 * by spaces); adds it to HINTS when it runs and fits. */
static void
try_change (const char *path, const char *const *sets, const char *change, GArray *hints)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  g_auto (GStrv) parts = g_strsplit (change, " ", -1);
  g_autoptr (GError) error = NULL;
  ExperimentSpec spec;
  SimOptions options = { FALSE, NULL };
  SimResult result;

  for (int i = 0; sets && sets[i]; i++)
    g_ptr_array_add (all, (gpointer) sets[i]);
  for (int i = 0; parts[i]; i++)
    g_ptr_array_add (all, parts[i]);
  g_ptr_array_add (all, NULL);
  if (!config_load_experiment (path, (const char *const *) all->pdata, &spec, &error))
    return;
  gboolean ok = sim_run (&spec, &options, &result, &error);
  experiment_spec_clear (&spec);
  if (!ok || !result.fits_memory)
    return;
  g_autoptr (GString) shown = g_string_new (NULL);
  for (int i = 0; parts[i]; i++)
    g_string_append_printf (shown, "%s--set %s", i ? " " : "", parts[i]);
  Hint h = { g_string_free (g_steal_pointer (&shown), FALSE), (int) g_strv_length (parts),
             result.iteration_time_s };
  g_array_append_val (hints, h);
}

void
run_hints_print (const char *path, const char *const *sets, gboolean for_memory,
                 int tp, int pp, int micro_batch)
{
  g_autoptr (GPtrArray) changes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) hints = g_array_new (FALSE, FALSE, sizeof (Hint));

  g_array_set_clear_func (hints, hint_clear);
  if (for_memory)
    {
      g_ptr_array_add (changes, g_strdup ("training.recompute=selective"));
      g_ptr_array_add (changes, g_strdup ("training.recompute=full"));
      for (int z = 1; z <= 3; z++)
        g_ptr_array_add (changes, g_strdup_printf ("zero.stage=%d", z));
      if (micro_batch > 1)
        g_ptr_array_add (changes, g_strdup_printf ("parallel.micro_batch=%d",
                                                   micro_batch / 2));
    }
  else
    {
      g_ptr_array_add (changes, g_strdup ("parallel.dp=auto"));
      /* Megatron-Core's MoE and tp_comm_overlap ask for it. */
      g_ptr_array_add (changes, g_strdup ("parallel.sequence_parallel=true"));
    }
  /* The nearest layouts, dp following the GPU count: tp halved or
   * doubled, or any power of two up to a node of eight (the tp an NVLink
   * node takes), each with pp as written, halved or doubled. */
  if (tp > 0 && pp > 0)
    {
      int tps[] = { 1, 2, 4, 8, tp / 2, tp * 2 }, pps[] = { pp, pp / 2, pp * 2 };
      for (guint i = 0; i < G_N_ELEMENTS (tps); i++)
        for (guint j = 0; j < G_N_ELEMENTS (pps); j++)
          {
            gboolean seen = tps[i] < 1 || pps[j] < 1 || (tps[i] == tp && pps[j] == pp);
            for (guint k = 0; k < i && !seen; k++)
              seen = tps[k] == tps[i];
            if (!seen)
              g_ptr_array_add (changes,
                               g_strdup_printf ("parallel.tp=%d parallel.pp=%d parallel.dp=auto",
                                                tps[i], pps[j]));
          }
    }
  for (guint i = 0; i < changes->len; i++)
    try_change (path, sets, changes->pdata[i], hints);
  if (hints->len == 0)
    {
      cli_printerr ("trainsim run: hint: no nearby change %s; `trainsim search` "
                    "finds the plans that do", for_memory ? "fits" : "runs and fits");
      return;
    }
  g_array_sort (hints, by_keys_then_time);
  cli_printerr ("trainsim run: hint: %s, each tried:", for_memory
                ? "these fit" : "these run and fit");
  for (guint i = 0; i < hints->len && i < HINTS_MAX; i++)
    {
      const Hint *h = &g_array_index (hints, Hint, i);
      cli_printerr ("  %s  (%.3g s a step)", h->sets, h->time_s);
    }
}
