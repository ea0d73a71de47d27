# src/local.mk: the simulator, as a convenience library (linked by the
# program and by the tests) plus a main.c of a few lines.
noinst_LTLIBRARIES += libtrainsim.la
libtrainsim_la_SOURCES = \
	src/base/simtime.h \
	src/base/errors.h src/base/errors.c \
	src/base/text.h src/base/text.c \
	src/base/units.h src/base/units.c \
	src/base/ledger.h src/base/ledger.def src/base/ledger.c \
	src/base/input.h src/base/input.c \
	src/base/progress.h src/base/progress.c \
	src/base/outfile.h src/base/outfile.c \
	src/base/stats.h src/base/stats.c \
	src/engine/eventq.h src/engine/eventq.c \
	src/engine/engine.h src/engine/engine.c \
	src/hw/device.h src/hw/device.c \
	src/hw/host.h src/hw/host.c \
	src/net/net.h src/net/net.c \
	src/net/flow.h src/net/flow.c \
	src/graph/transformer.h src/graph/transformer.c \
	src/graph/graph-private.h src/graph/moe.h src/graph/moe.c \
	src/graph/fp8.h src/graph/fp8.c \
	src/graph/cp.h src/graph/cp.c \
	src/parallel/result.h \
	src/parallel/plan.h src/parallel/plan.c \
	src/parallel/sim.h src/parallel/sim-private.h src/parallel/sim.c \
	src/parallel/sim-build.c src/parallel/sim-prepare.c src/parallel/sim-program.c \
	src/parallel/sim-comm.c \
	src/parallel/sim-epilogue.c src/parallel/sim-moe.c src/parallel/sim-fp8.c \
	src/parallel/sim-cp.c src/parallel/sim-store.c src/parallel/sim-bound.c \
	src/parallel/budget.h src/parallel/budget.c \
	src/config/spec.h src/config/spec.c \
	src/config/framework.h src/config/framework.c \
	src/config/yamltree.h src/config/yamltree.c \
	src/config/config.h src/config/config-private.h src/config/config.c \
	src/config/config-topology.c src/config/config-experiment.c \
	src/config/config-validation.c \
	src/output/report.h src/output/report.c \
	src/output/trace.h src/output/trace.c \
	src/sweep/sweep.h src/sweep/sweep-private.h src/sweep/sweep.c \
	src/sweep/sweep-output.c \
	src/sweep/plansearch.h src/sweep/plansearch.c \
	src/sweep/goodput.h src/sweep/goodput.c \
	src/sweep/energy.h src/sweep/energy.c \
	src/sweep/family.h src/sweep/family.c \
	src/output/plot.h src/output/plot-table.h src/output/plot-private.h src/output/plot-figure.h \
	src/output/plot-table.c \
	src/output/plot.c src/output/plot-gnuplot.c src/output/plot-xy.c \
	src/output/plot-stack.c src/output/plot-heatmap.c \
	src/cli/cli.h src/cli/cli.c src/cli/cmd-run.c src/cli/run-hints.h src/cli/run-hints.c src/cli/cmd-validate.c \
	src/cli/cmd-sweep.c src/cli/cmd-merge.c src/cli/cmd-plot.c \
	src/cli/cmd-search.c src/cli/cmd-collective.c src/cli/cmd-plan.c \
	src/cli/cmd-plan-budget.c \
	src/cli/plan-private.h \
	src/cli/cmd-constants.c \
	src/cli/cmd-calibrate.c \
	src/calib/nccllog.h src/calib/nccllog.c \
	src/calib/calib.h src/calib/calib.c
libtrainsim_la_LIBADD = $(GLIB_LIBS) $(YAML_LIBS) -lm
# Built with --with-mpi only: the default build has no MPI code at all.
if WITH_MPI
libtrainsim_la_SOURCES += src/sweep/sweep-mpi.h src/sweep/sweep-mpi.c
libtrainsim_la_LIBADD += $(MPI_LIBS)
endif

bin_PROGRAMS += trainsim
trainsim_SOURCES = src/main.c
trainsim_LDADD = libtrainsim.la $(GLIB_LIBS) $(YAML_LIBS) $(MPI_LIBS) -lm
