/* family.c: the rule that builds a family's model of any size.
 *
 * The rule keeps what the family's published shapes hold fixed as they
 * grow, read from its largest published model: the head size (GPT-3:
 * 128 from 6.7B up, Brown et al. 2020 Table 2.1; Llama 2 70B: 128), the
 * width per layer, hidden / layers (GPT-3 6.7B, 13B and 175B: 128), the
 * FFN's width per hidden (GPT-3: 4; Llama 2 70B: 3.5) and the query heads
 * per key/value head (Llama 2 70B: 8). For N parameters it takes the head
 * count whose width, with the layers that bring the model to N, comes
 * nearest that width per layer, then rounds the layers. From 32 heads up
 * the count is a multiple of 8 (as the published GPT-3 and Llama shapes
 * from 6.7B up are), so that tensor parallelism over a node's 8 GPUs
 * divides it; it is always a multiple of the query heads per key/value
 * head. The layers are rounded, so the size is within half a layer's
 * parameters of N. The rule reproduces GPT-3's eight published sizes
 * within 3 % of their parameters (tests/test-family.c). */
#include "sweep/family.h"
#include "parallel/plan.h"
#include <math.h>

/* M's parameters with LAYERS layers. */
static double
params_at (ModelSpec m, int layers)
{
  m.layers = layers;
  return plan_model_params (&m);
}

gboolean
family_rule_build (const ModelSpec *largest, double parameters,
                   ModelSpec *out, char **why)
{
  /* A size keeps the largest's head_dim where it gives one (hidden /
   * heads is the head's share of the width either way). */
  int head = largest->hidden / largest->heads;
  int group = largest->heads / largest->kv_heads;
  double ffn_per_hidden = (double) largest->ffn_hidden / largest->hidden;
  double width_per_layer = (double) largest->hidden / largest->layers;
  double reach = FAMILY_RULE_REACH * plan_model_params (largest);
  *out = *largest;
  if (!(parameters <= reach))
    {
      *why = g_strdup_printf ("%.3g parameters is beyond what the rule builds "
                              "from %s: up to %g times its size, %.3g",
                              parameters, largest->name, FAMILY_RULE_REACH,
                              reach);
      return FALSE;
    }
  /* The head counts in turn, widest last: the layers that make N fall and
   * the width per layer grows, so the nearest is where it crosses. */
  double best_miss = INFINITY, best_layers = 0;
  for (int heads = group; heads * (double) head < 1e6; heads += group)
    {
      if (heads >= 32 && heads % 8 != 0)
        continue;
      ModelSpec m = *largest;
      m.heads = heads;
      m.kv_heads = heads / group;
      m.hidden = heads * head;
      m.ffn_hidden = (int) lround (ffn_per_hidden * m.hidden);
      double base = 2 * params_at (m, 1) - params_at (m, 2);
      double per_layer = params_at (m, 1) - base;
      double layers = (parameters - base) / per_layer;
      if (layers < 1.5)
        break;
      double miss = fabs (log (m.hidden / layers / width_per_layer));
      if (miss > best_miss)
        break;
      best_miss = miss;
      best_layers = layers;
      *out = m;
    }
  if (best_layers == 0)
    {
      *why = g_strdup_printf ("%.3g parameters is below what the rule builds "
                              "from %s: two layers of %d heads of %d",
                              parameters, largest->name, group, head);
      return FALSE;
    }
  out->layers = (int) lround (best_layers);
  return TRUE;
}
