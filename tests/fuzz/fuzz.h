/* fuzz.h: what the fuzz targets (fuzz-*.c) share with libFuzzer, with
 * replay.c (which feeds saved inputs to a target without libFuzzer, so
 * that `make check` replays tests/fuzz/regress/ with any compiler) and
 * with each other (fuzz-common.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config/spec.h"

/* libFuzzer's entry point, one per target: runs the code under test on
 * DATA and returns 0. A crash, an assertion, a sanitizer report or a GLib
 * warning (made fatal by fuzz_init) is a finding. */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Once per process: makes GLib warnings and criticals fatal, as the tests'
 * G_DEBUG=fatal-warnings does, and points TRAINSIM_DATA_PATH at the
 * source tree's models/, topologies/ and tests/data/, so that the names
 * in the seeds (gpt3-175b, selene, tiny, tinycluster) resolve. */
void fuzz_init (void);

/* DATA as the contents of a file, whose path is returned (owned by this
 * module, the same path on every call): an anonymous memory file, so a
 * run writes nothing to disk. */
const char *fuzz_file (const uint8_t *data, size_t size);

/* Loads DATA as `trainsim run` loads an experiment file, with each line
 * of DATA that begins with "#--set " (a YAML comment) as a --set
 * KEY=VALUE, so that the fuzzer reaches the overrides too. TRUE with *OUT
 * filled (experiment_spec_clear frees it) when the experiment is valid;
 * a failure must say why in trainsim's error domain. */
gboolean fuzz_load_experiment (const uint8_t *data, size_t size, ExperimentSpec *out);
