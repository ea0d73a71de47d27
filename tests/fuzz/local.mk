# tests/fuzz/local.mk: the fuzz targets (tests/fuzz/fuzz-*.c). Every
# build makes a replay-TARGET program of each, which feeds saved inputs
# to it without libFuzzer, and `make check` replays the seed corpus and
# the regression cases (tests/fuzz-regress.sh). With --enable-fuzz
# (clang) the targets are also linked with libFuzzer as fuzz-TARGET, and
# `make fuzz` runs each for FUZZ_TIME seconds (tests/fuzz/run.sh).
FUZZ_TARGETS = config run csv
FUZZ_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_SRCDIR=\"$(abs_top_srcdir)\"
FUZZ_LIBS = libtrainsim.la $(GLIB_LIBS) $(YAML_LIBS) $(MPI_LIBS) -lm
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz-common.c

check_PROGRAMS += tests/fuzz/replay-config tests/fuzz/replay-run tests/fuzz/replay-csv
tests_fuzz_replay_config_SOURCES = tests/fuzz/replay.c $(FUZZ_COMMON) tests/fuzz/fuzz-config.c
tests_fuzz_replay_config_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_config_LDADD = $(FUZZ_LIBS)
tests_fuzz_replay_run_SOURCES = tests/fuzz/replay.c $(FUZZ_COMMON) tests/fuzz/fuzz-run.c
tests_fuzz_replay_run_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_run_LDADD = $(FUZZ_LIBS)
tests_fuzz_replay_csv_SOURCES = tests/fuzz/replay.c $(FUZZ_COMMON) tests/fuzz/fuzz-csv.c
tests_fuzz_replay_csv_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_csv_LDADD = $(FUZZ_LIBS)

TESTS += tests/fuzz-regress.sh
EXTRA_DIST += tests/fuzz-regress.sh tests/fuzz/run.sh tests/fuzz/yaml.dict \
	tests/fuzz/csv.dict tests/fuzz/corpus tests/fuzz/regress

if ENABLE_FUZZ
# libFuzzer brings its own main(); the library is instrumented for it by
# configure (TS_SAN_CFLAGS).
FUZZER_LINK_FLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
noinst_PROGRAMS += tests/fuzz/fuzz-config tests/fuzz/fuzz-run tests/fuzz/fuzz-csv
tests_fuzz_fuzz_config_SOURCES = $(FUZZ_COMMON) tests/fuzz/fuzz-config.c
tests_fuzz_fuzz_config_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_config_LDFLAGS = $(FUZZER_LINK_FLAGS)
tests_fuzz_fuzz_config_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_run_SOURCES = $(FUZZ_COMMON) tests/fuzz/fuzz-run.c
tests_fuzz_fuzz_run_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_run_LDFLAGS = $(FUZZER_LINK_FLAGS)
tests_fuzz_fuzz_run_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_csv_SOURCES = $(FUZZ_COMMON) tests/fuzz/fuzz-csv.c
tests_fuzz_fuzz_csv_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_csv_LDFLAGS = $(FUZZER_LINK_FLAGS)
tests_fuzz_fuzz_csv_LDADD = $(FUZZ_LIBS)

# FUZZ_TIME: seconds per target; FUZZ_TARGETS: which ones.
FUZZ_TIME = 60
fuzz: tests/fuzz/fuzz-config tests/fuzz/fuzz-run tests/fuzz/fuzz-csv
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)
else
fuzz:
	@echo "make fuzz: the fuzz targets need clang's libFuzzer:" \
	  "./configure --enable-fuzz CC=clang" >&2; exit 1
endif
.PHONY: fuzz

# What `make fuzz` leaves: the grown corpus and the findings.
clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/work tests/fuzz/crashes
.PHONY: clean-fuzz
