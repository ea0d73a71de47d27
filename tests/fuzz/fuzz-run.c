/* fuzz-run.c: an experiment loaded from any text (as fuzz-config.c does)
 * and, when its plan is small, replayed by the simulator in symmetric
 * mode (the default of `trainsim run`) and reported in every format.
 * Small means milliseconds per input, so that the fuzzer spends its time
 * on varied plans rather than on one large one; the sizes that make a
 * plan large (GPUs, layers, batch, NICs) are the simulator's scale
 * concerns, for bench/. Seeds: tests/fuzz/corpus/run/. */
#include "fuzz.h"

#include "base/errors.h"
#include "output/report.h"
#include "parallel/sim.h"

/* The event count of a symmetric replay grows with the stages, the
 * micro-batches (at most the global batch), the layers, and the
 * candidates of an `auto` micro-batch or virtual stage count; the flow
 * network's resources grow with the nodes times the NICs. */
static gboolean
small_plan (const ExperimentSpec *e)
{
  return e->gpus <= 512 && e->parallel.pp <= 8 && e->parallel.global_batch <= 64
         && e->model.layers <= 32 && e->topology.inter_node.nics_per_node <= 16;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ExperimentSpec spec;
  SimOptions options = { FALSE, NULL };
  SimResult result;
  g_autoptr (GError) error = NULL;

  fuzz_init ();
  if (!fuzz_load_experiment (data, size, &spec))
    return 0;
  if (small_plan (&spec))
    {
      if (sim_run (&spec, &options, &result, &error))
        for (ReportFormat format = 0; format < REPORT_N; format++)
          {
            g_autoptr (GString) out = g_string_new (NULL);
            report_append (out, &result, format, "fuzz");
          }
      else
        g_assert (error != NULL && error->domain == TS_ERROR);
    }
  experiment_spec_clear (&spec);
  return 0;
}
