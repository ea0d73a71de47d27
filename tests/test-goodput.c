/* test-goodput.c: the goodput model of sweep/goodput.h against numbers
 * worked out by hand: Young/Daly's interval, the exact expected time and
 * the first-order model on simple cases (constant rates, a fixed
 * interval), the Monte Carlo's mean within 2 % of them, and its
 * determinism per seed. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "base/stats.h"
#include "sweep/goodput.h"

#define HOUR 3600.0

/* 1000 h of work, a checkpoint every hour that takes 6 min, a failure
 * every 10 h (GPUs 1 in 20 h, nodes 1 in 20 h), 12 min to recover. */
static const GoodputModel simple = {
  .work_s = 1000 * HOUR,
  .gpu_rate = 1 / (20 * HOUR),
  .node_rate = 1 / (20 * HOUR),
  .checkpoint_s = 0.1 * HOUR,
  .interval_s = 1 * HOUR,
  .recovery_s = 0.2 * HOUR,
};

START_TEST (young_daly_by_hand)
{
  /* sqrt (2 x 9 s x 49.5 h): GPT-3 175B's on Selene, 29.8 min. */
  ck_assert_double_eq_tol (goodput_young_daly (9, 49.5 * HOUR),
                           sqrt (2 * 9 * 49.5 * HOUR), 1e-9);
  ck_assert_double_eq_tol (goodput_young_daly (9, 49.5 * HOUR) / 60, 29.85,
                           0.01);
}
END_TEST

START_TEST (closed_forms_by_hand)
{
  /* Each 1.1 h segment: (10 h + 0.2 h) (e^0.11 - 1) = 1.18604 h; 1000 of
   * them. First order: 1000 h x 1.1 / (1 - (0.2 + 0.55) / 10) = 1189.19 h. */
  double exact = goodput_expected_s (&simple) / HOUR;
  double first = goodput_first_order_s (&simple) / HOUR;
  ck_assert_double_eq_tol (exact, 1000 * 10.2 * expm1 (0.11), 1e-6);
  ck_assert_double_eq_tol (exact, 1186.04, 0.01);
  ck_assert_double_eq_tol (first, 1189.19, 0.01);
  /* A last, shorter segment: 2.5 h of work is two of 1.1 h and one of
   * 0.6 h. */
  GoodputModel m = simple;
  m.work_s = 2.5 * HOUR;
  ck_assert_double_eq_tol (goodput_expected_s (&m) / HOUR,
                           10.2 * (2 * expm1 (0.11) + expm1 (0.06)), 1e-9);
}
END_TEST

/* The Monte Carlo's mean within 2 % of the closed forms, on the simple
 * case and on one where failures are rarer against a segment (where the
 * first-order model holds best). */
START_TEST (monte_carlo_matches_closed_form)
{
  GoodputModel rare = simple;
  rare.gpu_rate = rare.node_rate = 1 / (200 * HOUR);
  const GoodputModel *cases[] = { &simple, &rare };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GoodputStats st;
      char *why = NULL;
      ck_assert (goodput_monte_carlo (cases[i], 400, 7, &st, &why));
      double exact = goodput_expected_s (cases[i]);
      double first = goodput_first_order_s (cases[i]);
      ck_assert_msg (fabs (st.mean_s / exact - 1) < 0.02,
                     "case %u: mean %g h, closed form %g h", i,
                     st.mean_s / HOUR, exact / HOUR);
      ck_assert_msg (fabs (st.mean_s / first - 1) < 0.02,
                     "case %u: mean %g h, first order %g h", i,
                     st.mean_s / HOUR, first / HOUR);
      ck_assert (st.p10_s <= st.mean_s && st.mean_s <= st.p90_s);
      /* Failures come at the summed rate over the wall time, less the
       * recoveries, during which none strikes. */
      double lambda = cases[i]->gpu_rate + cases[i]->node_rate;
      double expected = lambda * (exact - st.failures * cases[i]->recovery_s);
      ck_assert_msg (fabs (st.failures / expected - 1) < 0.05,
                     "case %u: %g failures, expected %g", i, st.failures,
                     expected);
    }
}
END_TEST

START_TEST (monte_carlo_is_deterministic_per_seed)
{
  GoodputStats a, b, c;
  char *why = NULL;
  ck_assert (goodput_monte_carlo (&simple, 50, 1, &a, &why));
  ck_assert (goodput_monte_carlo (&simple, 50, 1, &b, &why));
  ck_assert (goodput_monte_carlo (&simple, 50, 2, &c, &why));
  ck_assert (a.mean_s == b.mean_s && a.p10_s == b.p10_s
             && a.p90_s == b.p90_s && a.failures == b.failures);
  ck_assert (a.mean_s != c.mean_s);
}
END_TEST

START_TEST (too_many_segments_refused)
{
  GoodputModel m = simple;
  GoodputStats st;
  char *why = NULL;
  m.interval_s = m.work_s / (GOODPUT_MAX_SEGMENTS * 2);
  ck_assert (!goodput_monte_carlo (&m, 1, 1, &st, &why));
  ck_assert_ptr_nonnull (why);
  free (why);
}
END_TEST

/* The slowest of n (base/stats.h): the mean largest of n standard
 * normals from Tippett's (1925) table, 0.5642 for 2, 1.4236 for 8,
 * 3.2414 for 1,000 (read off 1 + s E[M_n] at a tiny s); the draws,
 * averaged over a fine grid of u, give the expectation; a keyed factor
 * has mean 1 and standard deviation s. */
START_TEST (slowest_of_n_by_hand)
{
  const struct { int64_t n; double mean; } tippett[] = {
    { 2, 0.5642 }, { 8, 1.4236 }, { 1000, 3.2414 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (tippett); i++)
    ck_assert_double_eq_tol ((stats_expected_slowest (tippett[i].n, 1e-7) - 1) / 1e-7,
                             tippett[i].mean, 1e-3);
  ck_assert (stats_expected_slowest (1, 0.5) == 1);
  ck_assert (stats_expected_slowest (100, 0) == 1);
  const int grid = 20000;
  double sum = 0;
  for (int k = 0; k < grid; k++)
    sum += stats_slowest_draw (16384, 0.05, (k + 0.5) / grid);
  ck_assert_double_eq_tol (sum / grid, stats_expected_slowest (16384, 0.05), 1e-4);
  double m = 0, v = 0;
  const int n = 100000;
  for (int k = 0; k < n; k++)
    {
      double f = stats_factor_of (stats_key (3, (guint64) k), 0.05);
      m += f, v += f * f;
    }
  m /= n;
  ck_assert_double_eq_tol (m, 1, 1e-3);
  ck_assert_double_eq_tol (sqrt (v / n - m * m), 0.05, 1e-3);
}
END_TEST

/* With a spread among the GPUs, each trial draws the run's slowest GPU:
 * the runs spread wider, and their mean stays with the expectation the
 * steps were replayed at (within the draws' error). */
START_TEST (monte_carlo_draws_the_slowest)
{
  GoodputModel m = simple;
  m.gpu_rate = m.node_rate = 1 / (1e6 * HOUR);   /* failures aside */
  GoodputStats plain, spread;
  char *why = NULL;
  ck_assert (goodput_monte_carlo (&m, 2000, 1, &plain, &why));
  VariabilitySpec v = { .gpu_speed_spread = 0.05 };
  m.variability = &v;
  m.gpus = 1024;
  m.gpus_per_node = 8;
  m.varied = 0.9;
  ck_assert (goodput_monte_carlo (&m, 2000, 1, &spread, &why));
  ck_assert_msg (spread.p90_s - spread.p10_s > 10 * (plain.p90_s - plain.p10_s + 1),
                 "p10 %g p90 %g against %g %g", spread.p10_s, spread.p90_s,
                 plain.p10_s, plain.p90_s);
  ck_assert_double_eq_tol (spread.mean_s / plain.mean_s, 1, 2e-3);
}
END_TEST

static Suite *
goodput_suite (void)
{
  Suite *s = suite_create ("goodput");
  TCase *tc = tcase_create ("goodput");
  tcase_add_test (tc, young_daly_by_hand);
  tcase_add_test (tc, closed_forms_by_hand);
  tcase_add_test (tc, monte_carlo_matches_closed_form);
  tcase_add_test (tc, monte_carlo_is_deterministic_per_seed);
  tcase_add_test (tc, too_many_segments_refused);
  tcase_add_test (tc, slowest_of_n_by_hand);
  tcase_add_test (tc, monte_carlo_draws_the_slowest);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *runner = srunner_create (goodput_suite ());
  srunner_run_all (runner, CK_NORMAL);
  int failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
