# tests/local.mk: one Check binary per layer, plus shell tests of the
# command line. The environment makes GLib warnings fatal and perturbs
# malloc so that a read of uninitialised or freed memory shows.
AM_TESTS_ENVIRONMENT = \
	export G_DEBUG=fatal-warnings MALLOC_PERTURB_=165 \
	TRAINSIM=$(abs_top_builddir)/trainsim \
	TRAINSIM_DATA_PATH= \
	srcdir=$(abs_top_srcdir) top_srcdir=$(abs_top_srcdir);

TEST_LIBS = libtrainsim.la $(CHECK_LIBS) $(GLIB_LIBS) $(YAML_LIBS) $(MPI_LIBS) -lm
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

check_PROGRAMS += tests/test-engine tests/test-config tests/test-output \
	tests/test-sim tests/test-sweep tests/test-net tests/test-family
tests_test_family_SOURCES = tests/test-family.c
tests_test_family_CFLAGS = $(TEST_CFLAGS)
tests_test_family_LDADD = $(TEST_LIBS)
tests_test_net_SOURCES = tests/test-net.c
tests_test_net_CFLAGS = $(TEST_CFLAGS)
tests_test_net_LDADD = $(TEST_LIBS)
tests_test_engine_SOURCES = tests/test-engine.c
tests_test_engine_CFLAGS = $(TEST_CFLAGS)
tests_test_engine_LDADD = $(TEST_LIBS)
tests_test_config_SOURCES = tests/test-config.c
tests_test_config_CFLAGS = $(TEST_CFLAGS)
tests_test_config_LDADD = $(TEST_LIBS)
tests_test_output_SOURCES = tests/test-output.c
tests_test_output_CFLAGS = $(TEST_CFLAGS)
tests_test_output_LDADD = $(TEST_LIBS)
tests_test_sim_SOURCES = tests/test-sim.c
tests_test_sim_CFLAGS = $(TEST_CFLAGS)
tests_test_sim_LDADD = $(TEST_LIBS)
tests_test_sweep_SOURCES = tests/test-sweep.c
tests_test_sweep_CFLAGS = $(TEST_CFLAGS)
tests_test_sweep_LDADD = $(TEST_LIBS)

TESTS += tests/test-engine tests/test-config tests/test-output \
	tests/test-sim tests/test-sweep tests/test-net tests/test-family tests/cli.sh tests/validate.sh \
	tests/sweep.sh tests/plot.sh tests/mpi.sh tests/figures.sh
# Hostile and malformed input (issue 14): each file on its own line, so
# that the parts of that work merge apart.
TESTS += tests/plot-hostile.sh
TESTS += tests/bad-input.sh
TESTS += tests/scale.sh
EXTRA_DIST += tests/testlib.sh tests/cli.sh tests/validate.sh tests/sweep.sh tests/plot.sh \
	tests/mpi.sh tests/figures.sh tests/data
EXTRA_DIST += tests/plot-hostile.sh
EXTRA_DIST += tests/bad-input.sh
EXTRA_DIST += tests/scale.sh


# How validate scores: roles, goals and known gaps, FLOP conventions, order.
TESTS += tests/validate-roles.sh tests/vtrain-allreduce.sh tests/cookbook-gemm.sh \
	tests/cookbook-layer-gemm.sh tests/cookbook-mlp.sh tests/llm-foundry.sh
EXTRA_DIST += tests/validate-roles.sh tests/vtrain-allreduce.sh tests/cookbook-gemm.sh \
	tests/cookbook-layer-gemm.sh tests/cookbook-mlp.sh tests/llm-foundry.sh
TESTS += tests/outputs.sh
EXTRA_DIST += tests/outputs.sh
TESTS += tests/sweep-outputs.sh
EXTRA_DIST += tests/sweep-outputs.sh
TESTS += tests/cli-habits.sh tests/frameworks.sh tests/plan-combos.sh
EXTRA_DIST += tests/cli-habits.sh tests/frameworks.sh tests/plan-combos.sh
# The README's samples are what the binary prints (tests/readme.sh --update
# rewrites them).
TESTS += tests/readme.sh
EXTRA_DIST += tests/readme.sh
# trainsim plan (issue 15): the goodput model against its closed forms,
# and the command.
check_PROGRAMS += tests/test-goodput
tests_test_goodput_SOURCES = tests/test-goodput.c
tests_test_goodput_CFLAGS = $(TEST_CFLAGS)
tests_test_goodput_LDADD = $(TEST_LIBS)
TESTS += tests/test-goodput tests/plan.sh
EXTRA_DIST += tests/plan.sh
# The ledger of constants (issue 37): sources, kinds, roles, the code.
TESTS += tests/ledger.sh
EXTRA_DIST += tests/ledger.sh
# trainsim calibrate: constants fitted to a cluster's own measurements.
TESTS += tests/calibrate.sh
EXTRA_DIST += tests/calibrate.sh
