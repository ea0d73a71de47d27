/* test-family.c: a family's rule (sweep/family.h) rebuilds the family's
 * published shapes from its largest (GPT-3's eight, Brown et al. 2020
 * Table 2.1; Chinchilla's, LLaMA 1, 2 and 3, MPT: models/, each file
 * citing its source), and refuses sizes beyond its reach. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "parallel/plan.h"
#include "sweep/family.h"

static char *experiment;   /* $srcdir/experiments/gpt3-175b-selene.yaml */

/* The shipped model NAME, loaded into *E as the experiment's. */
static void
load_model (const char *name, ExperimentSpec *e)
{
  g_autofree char *set = g_strconcat ("model=", name, NULL);
  const char *sets[] = { set, NULL };
  g_autoptr (GError) error = NULL;
  ck_assert_msg (config_load_experiment (experiment, sets, e, &error),
                 "%s", error ? error->message : "");
}

/* Each family's published shapes, smallest first: its largest is the
 * rule's model. */
static const char *const families[][9] = {
  { "gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b",
    "gpt3-6.7b", "gpt3-13b", "gpt3-175b", NULL },
  { "chinchilla-1.02b", "chinchilla-2.01b", "chinchilla-4.52b",
    "chinchilla-6.8b", "chinchilla-9.29b", "chinchilla-16.2b",
    "chinchilla-70b", NULL },
  { "llama-7b", "llama-13b", "llama-33b", "llama-65b", NULL },
  { "llama2-7b", "llama2-13b", "llama2-70b", NULL },
  { "llama3-8b", "llama3-70b", "llama3-405b", NULL },
  { "mpt-7b", "mpt-30b", NULL },
};

/* The rule rebuilds every published size of each family from its largest
 * within 3 % of its parameters (half a layer of the rule's shape, with
 * the head counts the rule allows). */
START_TEST (rebuilds_published)
{
  const char *const *sizes = families[_i];
  guint n = 0;
  while (sizes[n])
    n++;
  ExperimentSpec largest;
  load_model (sizes[n - 1], &largest);
  for (guint i = 0; i < n; i++)
    {
      ExperimentSpec e;
      ModelSpec built;
      g_autofree char *why = NULL;
      load_model (sizes[i], &e);
      double published = plan_model_params (&e.model);
      ck_assert_msg (family_rule_build (&largest.model, published, &built, &why),
                     "%s: %s", sizes[i], why);
      double got = plan_model_params (&built);
      ck_assert_msg (fabs (got / published - 1) < 0.03,
                     "%s: %.4g parameters, the rule %.4g (%d layers, hidden %d, "
                     "%d heads)", sizes[i], published, got, built.layers,
                     built.hidden, built.heads);
      ck_assert_int_eq (built.heads % (largest.model.heads
                                       / largest.model.kv_heads), 0);
      ck_assert_int_eq (built.hidden / built.heads,
                        largest.model.hidden / largest.model.heads);
      experiment_spec_clear (&e);
    }
  experiment_spec_clear (&largest);
}
END_TEST

/* From 6.7B up GPT-3's published shapes are the rule's own. */
START_TEST (gpt3_shapes_exact)
{
  static const char *const sizes[] = { "gpt3-6.7b", "gpt3-13b", "gpt3-175b" };
  ExperimentSpec largest;
  load_model ("gpt3-175b", &largest);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      ExperimentSpec e;
      ModelSpec built;
      g_autofree char *why = NULL;
      load_model (sizes[i], &e);
      ck_assert (family_rule_build (&largest.model, plan_model_params (&e.model),
                                    &built, &why));
      ck_assert_msg (built.layers == e.model.layers
                     && built.hidden == e.model.hidden
                     && built.heads == e.model.heads,
                     "%s: %d layers, hidden %d, %d heads; the rule %d, %d, %d",
                     sizes[i], e.model.layers, e.model.hidden, e.model.heads,
                     built.layers, built.hidden, built.heads);
      experiment_spec_clear (&e);
    }
  experiment_spec_clear (&largest);
}
END_TEST

START_TEST (refuses_beyond_reach)
{
  ExperimentSpec largest;
  ModelSpec built;
  load_model ("gpt3-175b", &largest);
  double n = plan_model_params (&largest.model);
  char *why = NULL;
  ck_assert (!family_rule_build (&largest.model, 11 * n, &built, &why));
  ck_assert_msg (strstr (why, "beyond what the rule builds") != NULL, "%s", why);
  g_clear_pointer (&why, g_free);
  ck_assert (!family_rule_build (&largest.model, 1e6, &built, &why));
  ck_assert_msg (strstr (why, "below what the rule builds") != NULL, "%s", why);
  g_free (why);
  ck_assert (family_rule_build (&largest.model, 9 * n, &built, &why));
  experiment_spec_clear (&largest);
}
END_TEST

int
main (void)
{
  const char *srcdir = g_getenv ("srcdir");
  experiment = g_build_filename (srcdir ? srcdir : ".", "experiments",
                                 "gpt3-175b-selene.yaml", NULL);
  Suite *s = suite_create ("family");
  TCase *tc = tcase_create ("rule");
  tcase_add_loop_test (tc, rebuilds_published, 0, G_N_ELEMENTS (families));
  tcase_add_test (tc, gpt3_shapes_exact);
  tcase_add_test (tc, refuses_beyond_reach);
  suite_add_tcase (s, tc);
  SRunner *runner = srunner_create (s);
  srunner_run_all (runner, CK_NORMAL);
  int failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  g_free (experiment);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
