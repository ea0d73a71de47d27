/* fuzz-config.c: the YAML loader (config/, yamltree.c) on any text, as
 * `trainsim run` and `trainsim validate` read it: the text is loaded as
 * an experiment (with its "#--set " lines as overrides) and as a
 * validation file. Either may fail, with an error; neither may crash,
 * leak or take long. Seeds: tests/fuzz/corpus/config/. */
#include "fuzz.h"

#include "base/errors.h"
#include "config/config.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ExperimentSpec spec;
  g_autoptr (ValidationSpec) validation = NULL;
  g_autoptr (GError) error = NULL;

  fuzz_init ();
  if (fuzz_load_experiment (data, size, &spec))
    experiment_spec_clear (&spec);
  validation = config_load_validation (fuzz_file (data, size), NULL, &error);
  g_assert ((validation != NULL) == (error == NULL));
  g_assert (error == NULL || error->domain == TS_ERROR);
  return 0;
}
