/* test-config.c: units, the YAML tree and the loader, against the fixtures
 * in tests/data (found through $srcdir, as automake sets it). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "base/errors.h"
#include "base/units.h"
#include "config/config.h"
#include "parallel/plan.h"

static char *data_dir;   /* $srcdir/tests/data */
static char *tmp_dir;    /* for the YAML written by the table-driven tests */

static char *
data_path (const char *name)
{
  return g_build_filename (data_dir, name, NULL);
}

/* Writes TEXT to NAME in tmp_dir and returns its path. */
static char *
write_tmp (const char *name, const char *text)
{
  char *path = g_build_filename (tmp_dir, name, NULL);

  ck_assert_msg (g_file_set_contents (path, text, -1, NULL), "cannot write %s", path);
  return path;
}

/* Names are resolved from the fixtures wherever the experiment lies. */
static void
use_fixture_data_path (void)
{
  g_setenv ("TRAINSIM_DATA_PATH", data_dir, TRUE);
}

static void
no_data_path (void)
{
  g_unsetenv ("TRAINSIM_DATA_PATH");
}

static void
assert_close (double got, double want, const char *what)
{
  ck_assert_msg (fabs (got - want) <= 1e-12 * fabs (want),
                 "%s: got %.17g, want %.17g", what, got, want);
}

/* Checks that ERROR is TS_ERROR_INPUT, its message starts with PREFIX and
 * holds PART. */
static void
assert_input_error (const GError *error, const char *prefix, const char *part)
{
  ck_assert_msg (error != NULL, "expected an error with '%s'", part);
  ck_assert_msg (error->domain == TS_ERROR && error->code == TS_ERROR_INPUT,
                 "expected TS_ERROR_INPUT, got %s %d: %s",
                 g_quark_to_string (error->domain), error->code, error->message);
  ck_assert_msg (g_str_has_prefix (error->message, prefix),
                 "message should start with '%s': %s", prefix, error->message);
  ck_assert_msg (strstr (error->message, part) != NULL,
                 "message should contain '%s': %s", part, error->message);
}

/* --- units ------------------------------------------------------------------ */

static const struct {
  const char *text;
  UnitKind kind;
  double want;
} good_units[] = {
  { "200Gb/s", UNIT_BANDWIDTH, 25e9 },
  { "25 GB/s", UNIT_BANDWIDTH, 25e9 },
  { "100Gbps", UNIT_BANDWIDTH, 12.5e9 },
  { "10 KiB/s", UNIT_BANDWIDTH, 10240 },
  { "1.6Tb/s", UNIT_BANDWIDTH, 200e9 },
  { "80GiB", UNIT_BYTES, 80.0 * 1024 * 1024 * 1024 },
  { "40GB", UNIT_BYTES, 40e9 },
  { "512 B", UNIT_BYTES, 512 },
  { "1TiB", UNIT_BYTES, 1099511627776.0 },
  { "1.5us", UNIT_TIME, 1.5e-6 },
  { "1.5\xc2\xb5s", UNIT_TIME, 1.5e-6 },
  { "5ns", UNIT_TIME, 5e-9 },
  { "1.5e3 ms", UNIT_TIME, 1.5 },
  { "2min", UNIT_TIME, 120 },
  { "1h", UNIT_TIME, 3600 },
  { ".5s", UNIT_TIME, 0.5 },
  { "312TFLOPS", UNIT_FLOPS, 312e12 },
  { "19.5 TFLOP/s", UNIT_FLOPS, 19.5e12 },
  { "1PFLOPS", UNIT_FLOPS, 1e15 },
  { "900 GFLOPS", UNIT_FLOPS, 900e9 },
};

START_TEST (test_units_good)
{
  double got = 0;
  g_autofree char *why = NULL;

  ck_assert_msg (units_parse (good_units[_i].text, good_units[_i].kind, &got, &why),
                 "'%s' should parse: %s", good_units[_i].text, why);
  assert_close (got, good_units[_i].want, good_units[_i].text);
}
END_TEST

static const struct {
  const char *text;
  UnitKind kind;
  const char *why;   /* a part of the explanation */
} bad_units[] = {
  { "200", UNIT_BANDWIDTH, "expected a bandwidth such as 200Gb/s or 25GB/s" },
  { "", UNIT_BYTES, "expected an amount of memory such as 80GiB" },
  { "GB", UNIT_BYTES, "expected an amount of memory" },
  { "20 Gbs", UNIT_BANDWIDTH, "unknown unit 'Gbs'" },
  { "5 GB/s", UNIT_BYTES, "unknown unit 'GB/s'" },
  { "1.5 s", UNIT_FLOPS, "expected a compute rate such as 312TFLOPS" },
  { "3 gb/s", UNIT_BANDWIDTH, "unknown unit 'gb/s'" },
  { "-5GB", UNIT_BYTES, "positive" },
  { "0us", UNIT_TIME, "positive" },
  { "1e999 GB", UNIT_BYTES, "finite" },
  { "nan GB", UNIT_BYTES, "expected an amount of memory" },
  { "inf s", UNIT_TIME, "expected a time such as 1.5us" },
  { "0x10 GB", UNIT_BYTES, "unknown unit" },
  { "3 not-a-unit-but-text", UNIT_BANDWIDTH, "unknown unit; expected" },
  { "3 \x1b[2J", UNIT_TIME, "unknown unit; expected" },
};

START_TEST (test_units_bad)
{
  double got = -7;
  g_autofree char *why = NULL;

  ck_assert_msg (!units_parse (bad_units[_i].text, bad_units[_i].kind, &got, &why),
                 "'%s' should be refused, got %g", bad_units[_i].text, got);
  ck_assert_msg (why && strstr (why, bad_units[_i].why),
                 "'%s': why should contain '%s': %s", bad_units[_i].text, bad_units[_i].why, why);
  ck_assert_msg (got == -7, "'%s': *out changed on error to %g", bad_units[_i].text, got);
}
END_TEST

/* units_number: decimal numbers only; what strtod also takes is refused. */
static const struct {
  const char *text;
  gboolean ok;
  double want;
} numbers[] = {
  { "2.5", TRUE, 2.5 }, { "-3", TRUE, -3 }, { "3e11", TRUE, 3e11 }, { ".5", TRUE, 0.5 },
  { "+1E-2", TRUE, 0.01 }, { "0x1p3", FALSE, 0 }, { "0x10", FALSE, 0 }, { "inf", FALSE, 0 },
  { "nan", FALSE, 0 }, { "1e999", FALSE, 0 }, { "", FALSE, 0 }, { " 1", FALSE, 0 },
  { "1 ", FALSE, 0 }, { "1e", FALSE, 0 }, { "1_000", FALSE, 0 },
};

START_TEST (test_units_number)
{
  double got = -7;

  ck_assert_msg (units_number (numbers[_i].text, &got) == numbers[_i].ok, "'%s' should be %s",
                 numbers[_i].text, numbers[_i].ok ? "a number" : "refused");
  if (numbers[_i].ok)
    assert_close (got, numbers[_i].want, numbers[_i].text);
}
END_TEST

/* --- enums and errors ---------------------------------------------------------- */

START_TEST (test_enum_tables)
{
  static const struct { SpecEnum e; int n; const char *list; } tables[] = {
    { SPEC_ENUM_PRECISION, PRECISION_N, "fp32, tf32, fp16, bf16 or fp8" },
    { SPEC_ENUM_RECOMPUTE, RECOMPUTE_N, "none, selective or full" },
    { SPEC_ENUM_SCHEDULE, SCHEDULE_N, "gpipe, 1f1b or interleaved" },
    { SPEC_ENUM_OFFLOAD, OFFLOAD_N, "none, optimizer or optimizer+params" },
    { SPEC_ENUM_LINK, LINK_N, "nvswitch, nvlink, pcie, infiniband-hdr, infiniband-ndr, "
                              "slingshot-11, roce or omni-path" },
    { SPEC_ENUM_FABRIC, FABRIC_N, "fat-tree or dragonfly" },
  };

  for (size_t t = 0; t < G_N_ELEMENTS (tables); t++)
    {
      g_autofree char *list = spec_enum_list (tables[t].e);
      ck_assert_msg (strcmp (list, tables[t].list) == 0, "list %zu: got '%s', want '%s'",
                     t, list, tables[t].list);
      for (int i = 0; i < tables[t].n; i++)
        {
          const char *name = spec_enum_name (tables[t].e, i);
          ck_assert_msg (spec_enum_parse (tables[t].e, name) == i, "table %zu: '%s' -> %d, want %d",
                         t, name, spec_enum_parse (tables[t].e, name), i);
        }
      ck_assert_int_eq (spec_enum_parse (tables[t].e, "no-such-name"), -1);
    }
  ck_assert_str_eq (spec_enum_name (SPEC_ENUM_PRECISION, PRECISION_BF16), "bf16");
  ck_assert_int_eq (spec_enum_parse (SPEC_ENUM_LINK, "slingshot-11"), LINK_SLINGSHOT_11);
}
END_TEST

START_TEST (test_exit_status)
{
  static const struct { TsErrorCode code; int status; } rows[] = {
    { TS_ERROR_INPUT, 2 }, { TS_ERROR_USAGE, 2 }, { TS_ERROR_PLAN, 2 },
    { TS_ERROR_NO_FIT, 1 }, { TS_ERROR_IO, 1 },
  };

  for (size_t i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr (GError) e = g_error_new_literal (TS_ERROR, rows[i].code, "x");
      ck_assert_msg (ts_error_exit_status (e) == rows[i].status, "code %d: got %d, want %d",
                     rows[i].code, ts_error_exit_status (e), rows[i].status);
    }
  {
    g_autoptr (GError) e = g_error_new_literal (G_FILE_ERROR, G_FILE_ERROR_NOENT, "x");
    ck_assert_int_eq (ts_error_exit_status (e), 1);
  }
}
END_TEST

/* --- the YAML tree --------------------------------------------------------------- */

START_TEST (test_ytree_merge_and_set)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (YNode) base = ytree_parse_string ("a: {x: 1, y: [1, 2]}\nb: name\n", "base.yaml",
                                               TRUE, &error);
  g_autoptr (YNode) over = ytree_parse_string ("a: {y: [3], z: 4}\n", "over.yaml", TRUE, &error);
  const YPair *a, *y, *b;

  ck_assert_msg (base && over, "parse: %s", error ? error->message : "");
  ytree_merge (&base, over);
  a = ytree_map_find (base, "a");
  ck_assert_int_eq (a->value->items->len, 3);          /* x, y, z */
  y = ytree_map_find (a->value, "y");
  ck_assert_int_eq (y->value->items->len, 1);          /* a sequence is replaced */
  ck_assert_str_eq (y->value->mark.file, "over.yaml");
  ck_assert_str_eq (ytree_map_find (a->value, "x")->value->mark.file, "base.yaml");

  /* Through a scalar: b: name becomes {name: name, c: {d: 5}}. */
  ck_assert (ytree_set_path (base, "b.c.d", ytree_parse_string ("5", "--set b.c.d", FALSE, NULL),
                             &error));
  b = ytree_map_find (base, "b");
  ck_assert_int_eq (b->value->kind, YNODE_MAPPING);
  ck_assert_str_eq (ytree_map_find (b->value, "name")->value->text, "name");
  ck_assert_int_eq (ytree_map_find (b->value, "name")->value->mark.line, 2);
  {
    const YPair *c = ytree_map_find (b->value, "c");
    g_autofree char *m = ytree_mark_format (ytree_map_find (c->value, "d")->value->mark);
    ck_assert_str_eq (m, "--set b.c.d");
  }
  /* Not through a sequence. */
  ck_assert (!ytree_set_path (base, "a.y.q", ytree_parse_string ("1", "--set a.y.q", FALSE, NULL),
                              &error));
  assert_input_error (error, "--set a.y.q: ", "is a sequence");
}
END_TEST

/* --- good experiments -------------------------------------------------------------- */

START_TEST (test_experiment_good)
{
  g_autofree char *path = data_path ("exp-good.yaml");
  g_autofree char *want_tp = g_strconcat (path, ":9:7", NULL);
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;
  const TopologySpec *t = &e.topology;

  no_data_path ();   /* found by the search of the file's own directory */
  ck_assert_msg (config_load_experiment (path, NULL, &e, &error), "load: %s", error->message);
  ck_assert_str_eq (e.model.name, "tiny");
  ck_assert_int_eq (e.model.layers, 2);
  ck_assert_int_eq (e.model.hidden, 64);
  ck_assert_int_eq (e.model.heads, 4);
  ck_assert_int_eq (e.model.kv_heads, 4);        /* default: heads */
  ck_assert_int_eq (e.model.ffn_hidden, 256);    /* default: 4 * hidden */
  ck_assert_int_eq (e.model.vocab, 1000);
  ck_assert_int_eq (e.model.vocab_divisible_by, 0);   /* default: 128 */
  ck_assert_int_eq (e.model.seq_len, 128);
  ck_assert_str_eq (t->name, "tinycluster");
  ck_assert_int_eq (t->gpus_per_node, 2);
  ck_assert_str_eq (t->gpu.name, "tiny-gpu");
  assert_close (t->gpu.peak_flops[PRECISION_FP32], 10e12, "peak fp32");
  ck_assert (t->gpu.peak_flops[PRECISION_TF32] == 0);
  assert_close (t->gpu.peak_flops[PRECISION_BF16], 100e12, "peak bf16");
  assert_close (t->gpu.memory_bytes, 16.0 * (1 << 30), "gpu memory");
  assert_close (t->gpu.hbm_bandwidth, 1e12, "hbm bandwidth");
  assert_close (t->gpu.matmul_efficiency, 0.8, "matmul efficiency");
  ck_assert (t->gpu.hbm_efficiency == SPEC_UNSET);
  ck_assert_int_eq (t->intra_node.link, LINK_NVLINK);
  assert_close (t->intra_node.bandwidth, 100e9, "intra bandwidth");
  assert_close (t->intra_node.latency, 2e-6, "intra latency");
  ck_assert_int_eq (t->inter_node.link, LINK_ROCE);
  ck_assert_int_eq (t->inter_node.nics_per_node, 1);
  assert_close (t->inter_node.nic_bandwidth, 12.5e9, "nic bandwidth");
  assert_close (t->inter_node.latency, 5e-6, "inter latency");
  ck_assert_int_eq (t->inter_node.fabric.kind, FABRIC_DRAGONFLY);
  assert_close (t->inter_node.fabric.taper, 0.5, "taper");
  ck_assert_int_eq (t->inter_node.fabric.groups, 4);
  assert_close (t->host.pcie_bandwidth, 25e9, "pcie");
  assert_close (t->host.memory_bytes, 512.0 * (1 << 30), "host memory");
  assert_close (t->host.cpu_adam_params_per_s, 1e9, "cpu adam");
  ck_assert_int_eq (e.gpus, 8);
  ck_assert_int_eq (e.parallel.tp, 2);
  ck_assert_int_eq (e.parallel.pp, 2);
  ck_assert_int_eq (e.parallel.dp, 2);
  ck_assert_int_eq (e.parallel.micro_batch, 1);
  ck_assert_int_eq (e.parallel.global_batch, 16);
  ck_assert_int_eq (e.parallel.schedule, SCHEDULE_INTERLEAVED);
  ck_assert_int_eq (e.parallel.virtual_stages, 2);
  ck_assert (e.parallel.sequence_parallel);
  ck_assert (!e.parallel.gradient_bucketing);
  assert_close (e.parallel.bucket_bytes, 50e6, "bucket");
  ck_assert (e.parallel.tp_across_nodes);
  ck_assert_int_eq (e.zero.stage, 1);
  ck_assert_int_eq (e.zero.offload, OFFLOAD_OPTIMIZER);
  ck_assert_int_eq (e.training.precision, PRECISION_FP16);
  ck_assert_int_eq (e.training.recompute, RECOMPUTE_SELECTIVE);
  ck_assert (e.training.flash_attention);
  ck_assert_int_eq (e.training.attention, ATTENTION_FLASH2);
  assert_close (e.training.tokens, 300e9, "tokens");
  assert_close (e.compute.mfu, 0.45, "mfu");
  assert_close (e.compute.matmul_efficiency, 0.8, "compute matmul");
  assert_close (e.compute.hbm_efficiency, 0.85, "compute hbm");
  assert_close (e.cost.gpu_hour_usd, 2.25, "cost");

  ck_assert_str_eq (e.marks.file, path);
  ck_assert_str_eq (e.marks.tp, want_tp);
  ck_assert_msg (g_str_has_suffix (e.marks.layers, "models/tiny.yaml:4:9"), "layers mark %s",
                 e.marks.layers);
  ck_assert_ptr_nonnull (e.marks.gpus);
  ck_assert_ptr_nonnull (e.marks.virtual_stages);
  experiment_spec_clear (&e);
}
END_TEST

/* Each framework's gradient reduction and bucket when grad_reduce_precision
 * and bucket_size are left out: Megatron-LM reduces bf16 gradients in fp32
 * (megatron/arguments.py), fp16 ones in fp16, in 25 MiB buckets; DeepSpeed
 * reduces in the run's precision and counts elements (5e8, 2 bytes each
 * in bf16, 4 in fp32 or when it reduces in fp32); FSDP reduces in the
 * run's precision, per unit (0: a bucket per layer); given values win. */
START_TEST (test_framework_buckets)
{
  g_autofree char *path = data_path ("exp-minimal.yaml");
  static const struct { const char *sets[3]; Precision reduce; double bytes; } cases[] = {
    { { NULL }, PRECISION_FP32, 25.0 * 1024 * 1024 },
    { { "training.precision=fp16", NULL }, PRECISION_FP16, 25.0 * 1024 * 1024 },
    { { "framework=megatron-lm@2", NULL }, PRECISION_FP32, 25.0 * 1024 * 1024 },
    { { "framework=deepspeed", NULL }, PRECISION_BF16, 1e9 },
    { { "framework=deepspeed", "training.precision=fp32", NULL }, PRECISION_FP32, 2e9 },
    { { "framework=deepspeed", "parallel.grad_reduce_precision=fp32", NULL },
      PRECISION_FP32, 2e9 },
    { { "framework=pytorch-fsdp", NULL }, PRECISION_BF16, 0 },
    { { "framework=megatron-deepspeed", "parallel.bucket_size=8MiB", NULL },
      PRECISION_BF16, 8.0 * 1024 * 1024 },
  };

  use_fixture_data_path ();
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      ExperimentSpec e;
      ck_assert_msg (config_load_experiment (path, cases[i].sets, &e, &error),
                     "load: %s", error->message);
      ck_assert_msg (e.parallel.grad_reduce_precision == cases[i].reduce, "row %zu", i);
      assert_close (e.parallel.bucket_bytes, cases[i].bytes, "bucket");
      experiment_spec_clear (&e);
    }

  /* The vocabulary: Megatron's frameworks pad it (0: 128 x tp), FSDP's
   * models take it as given; a value given wins. */
  static const struct { const char *sets[3]; int by; } vocab[] = {
    { { NULL }, 0 },
    { { "framework=deepspeed", NULL }, 0 },
    { { "framework=pytorch-fsdp", NULL }, 1 },
    { { "framework=pytorch-fsdp", "model.vocab_divisible_by=64", NULL }, 64 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (vocab); i++)
    {
      g_autoptr (GError) error = NULL;
      ExperimentSpec e;
      ck_assert_msg (config_load_experiment (path, vocab[i].sets, &e, &error),
                     "load: %s", error->message);
      ck_assert_msg (e.model.vocab_divisible_by == vocab[i].by,
                     "vocabulary row %zu: %d", i, e.model.vocab_divisible_by);
      experiment_spec_clear (&e);
    }

  /* The attention left out: Megatron-Core's TransformerEngine layers
   * pick cuDNN's kernel on Hopper; on an A100, under another framework,
   * or where the file names a kernel (with either key), not that. */
  static const struct { const char *sets[4]; Attention want; } attention[] = {
    { { NULL }, ATTENTION_UNFUSED },
    { { "topology=dgx-h100", NULL }, ATTENTION_CUDNN },
    { { "topology=dgx-h100", "framework=megatron-lm@2", NULL }, ATTENTION_UNFUSED },
    { { "topology=dgx-h100", "framework=megatron-deepspeed", NULL },
      ATTENTION_UNFUSED },
    { { "topology=dgx-h100", "framework=pytorch-fsdp", NULL }, ATTENTION_UNFUSED },
    { { "topology=dgx-h100", "training.attention=unfused", NULL },
      ATTENTION_UNFUSED },
    { { "topology=dgx-h100", "training.attention=flash3", NULL }, ATTENTION_FLASH3 },
    { { "topology=dgx-h100", "training.flash_attention=false", NULL },
      ATTENTION_UNFUSED },
    { { "topology=dgx-h100", "training.flash_attention=true", NULL },
      ATTENTION_FLASH2 },
    { { "topology=dgx-h100", "training.precision=fp8", NULL }, ATTENTION_CUDNN },
    { { "topology=dgx-h100", "training.precision=fp32", NULL }, ATTENTION_UNFUSED },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (attention); i++)
    {
      g_autoptr (GError) error = NULL;
      ExperimentSpec e;
      ck_assert_msg (config_load_experiment (path, attention[i].sets, &e, &error),
                     "load: %s", error->message);
      ck_assert_msg (e.training.attention == attention[i].want,
                     "attention row %zu: %d", i, (int) e.training.attention);
      experiment_spec_clear (&e);
    }
}
END_TEST

START_TEST (test_experiment_defaults)
{
  g_autofree char *path = data_path ("exp-minimal.yaml");
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  use_fixture_data_path ();
  ck_assert_msg (config_load_experiment (path, NULL, &e, &error), "load: %s", error->message);
  ck_assert_str_eq (e.topology.gpu.name, "a100-sxm4-80gb");
  ck_assert_int_eq (e.topology.intra_node.link, LINK_NVSWITCH);
  ck_assert (e.topology.intra_node.latency == SPEC_UNSET);
  ck_assert_int_eq (e.topology.inter_node.link, LINK_INFINIBAND_HDR);
  ck_assert_int_eq (e.topology.inter_node.nics_per_node, 8);
  ck_assert (e.topology.inter_node.latency == SPEC_UNSET);
  ck_assert_int_eq (e.topology.inter_node.fabric.kind, FABRIC_FAT_TREE);
  assert_close (e.topology.inter_node.fabric.taper, 1.0, "taper");
  ck_assert_int_eq (e.topology.inter_node.fabric.groups, 0);
  ck_assert (e.topology.host.pcie_bandwidth == SPEC_UNSET);
  ck_assert (e.topology.host.memory_bytes == SPEC_UNSET);
  ck_assert (e.topology.host.cpu_adam_params_per_s == SPEC_UNSET);
  ck_assert (e.topology.gpu.matmul_efficiency == SPEC_UNSET);
  ck_assert_int_eq (e.parallel.dp, 0);
  ck_assert_int_eq (e.parallel.micro_batch, 0);          /* auto */
  ck_assert_int_eq (e.parallel.schedule, SCHEDULE_1F1B);
  ck_assert_int_eq (e.parallel.virtual_stages, 1);
  ck_assert (!e.parallel.sequence_parallel);
  ck_assert_int_eq (e.parallel.gradient_bucketing, -1);   /* the framework's */
  /* Megatron-LM's: after the last backward (local DDP; Megatron-core
   * overlaps only with --overlap-grad-reduce) */
  ck_assert (!plan_dp_overlaps (&e));
  assert_close (e.parallel.bucket_bytes, 25.0 * 1024 * 1024, "bucket");
  ck_assert (!e.parallel.tp_across_nodes);
  ck_assert_int_eq (e.zero.stage, 0);
  ck_assert_int_eq (e.zero.offload, OFFLOAD_NONE);
  ck_assert_int_eq (e.training.precision, PRECISION_BF16);
  ck_assert_int_eq (e.training.recompute, RECOMPUTE_NONE);
  ck_assert (!e.training.flash_attention);
  ck_assert_int_eq (e.training.attention, ATTENTION_UNFUSED);
  ck_assert (!e.model.untied_embeddings);
  ck_assert_int_eq (e.model.position_embedding, POSITION_LEARNED);
  ck_assert (e.training.tokens == SPEC_UNSET);
  ck_assert (e.compute.mfu == SPEC_UNSET);
  ck_assert (e.compute.matmul_efficiency == SPEC_UNSET);
  ck_assert (e.compute.hbm_efficiency == SPEC_UNSET);
  assert_close (e.cost.gpu_hour_usd, 1.5, "cost");
  ck_assert_ptr_null (e.marks.dp);
  ck_assert_ptr_null (e.marks.virtual_stages);
  experiment_spec_clear (&e);
}
END_TEST

START_TEST (test_experiment_inline_and_paths)
{
  g_autofree char *inline_path = data_path ("exp-inline.yaml");
  g_autofree char *paths_path = data_path ("exp-paths.yaml");
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  no_data_path ();
  ck_assert_msg (config_load_experiment (inline_path, NULL, &e, &error), "load: %s",
                 error->message);
  ck_assert_str_eq (e.model.name, "tiny");
  ck_assert_int_eq (e.model.layers, 4);          /* the inline value wins */
  ck_assert_int_eq (e.model.hidden, 64);         /* the rest from models/tiny.yaml */
  ck_assert_int_eq (e.model.kv_heads, 2);
  ck_assert_ptr_null (e.topology.name);          /* inline, without a name */
  ck_assert_str_eq (e.topology.gpu.name, "tiny-gpu");
  assert_close (e.topology.gpu.memory_bytes, 32.0 * (1 << 30), "merged gpu memory");
  assert_close (e.topology.gpu.hbm_bandwidth, 1e12, "named gpu hbm");
  ck_assert_int_eq (e.topology.inter_node.nics_per_node, 0);   /* no inter_node */
  ck_assert_msg (g_str_has_suffix (e.marks.layers, "exp-inline.yaml:3:29"), "layers mark %s",
                 e.marks.layers);
  ck_assert_msg (g_str_has_suffix (e.marks.heads, "models/tiny.yaml:6:8"), "heads mark %s",
                 e.marks.heads);
  experiment_spec_clear (&e);

  ck_assert_msg (config_load_experiment (paths_path, NULL, &e, &error), "load: %s",
                 error->message);
  ck_assert_str_eq (e.model.name, "tiny");
  ck_assert_str_eq (e.topology.gpu.name, "tiny-gpu");
  experiment_spec_clear (&e);
}
END_TEST

START_TEST (test_experiment_overrides)
{
  g_autofree char *path = data_path ("exp-good.yaml");
  const char *const sets[] = {
    "parallel.tp=4",
    "model.layers=6",                        /* through the scalar "model: tiny" */
    "model.vocab_divisible_by=1",
    "topology.inter_node.nics_per_node=2",   /* into the named topology */
    "training.precision=bf16",
    "compute.mfu=0.5",
    "topology.gpu={name: tiny-gpu, memory: 8GiB}",
    NULL
  };
  const char *const flow[] = { "model={name: tiny, layers: 3, heads: 8}", NULL };
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  use_fixture_data_path ();
  ck_assert_msg (config_load_experiment (path, sets, &e, &error), "load: %s", error->message);
  ck_assert_int_eq (e.parallel.tp, 4);
  ck_assert_str_eq (e.model.name, "tiny");
  ck_assert_int_eq (e.model.layers, 6);
  ck_assert_int_eq (e.model.vocab_divisible_by, 1);
  ck_assert_int_eq (e.model.hidden, 64);
  ck_assert_str_eq (e.topology.name, "tinycluster");
  ck_assert_int_eq (e.topology.inter_node.nics_per_node, 2);
  ck_assert_int_eq (e.topology.inter_node.link, LINK_ROCE);
  ck_assert_int_eq (e.training.precision, PRECISION_BF16);
  ck_assert_int_eq (e.training.recompute, RECOMPUTE_SELECTIVE);
  assert_close (e.compute.mfu, 0.5, "mfu");
  assert_close (e.topology.gpu.memory_bytes, 8.0 * (1 << 30), "gpu memory");
  ck_assert_str_eq (e.marks.tp, "--set parallel.tp");
  ck_assert_str_eq (e.marks.layers, "--set model.layers");
  experiment_spec_clear (&e);

  ck_assert_msg (config_load_experiment (path, flow, &e, &error), "load: %s", error->message);
  ck_assert_int_eq (e.model.layers, 3);
  ck_assert_int_eq (e.model.heads, 8);
  ck_assert_int_eq (e.model.vocab, 1000);
  experiment_spec_clear (&e);
}
END_TEST

/* --- bad input ---------------------------------------------------------------------- */

/* Lines 1-2 of most rows below. */
#define HEAD "model: tiny\ntopology: tinycluster\n"
#define GPUS "gpus: 8\n"
#define PAR "parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16}\n"

static const struct {
  const char *yaml;
  int line, col;         /* 0: the message has no line:col */
  const char *part;
} bad_experiments[] = {
  { HEAD GPUS "parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16, "
    "grad_reduce_precision: fp16}\n", 4, 83,
    "parallel.grad_reduce_precision: fp16 in a bf16 run; valid: fp32 or the run's "
    "precision (training.precision: bf16)" },
  { HEAD GPUS "parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16, "
    "grad_reduce_precision: fp64}\n", 4, 83,
    "parallel.grad_reduce_precision: unknown value 'fp64'" },
  { HEAD GPUS PAR "modle: tiny\n", 5, 1,
    "unknown key 'modle' in the experiment (did you mean 'model'?); valid keys: schema_version," },
  { "model: {name: tiny, layrs: 4}\ntopology: tinycluster\n" GPUS PAR, 1, 21,
    "unknown key 'layrs' in model (did you mean 'layers'?); valid keys: schema_version, "
    "description, name, layers, hidden" },
  { HEAD GPUS "parallel: {tp: -2, pp: 2, micro_batch: 1, global_batch: 16}\n", 4, 16,
    "parallel.tp must be a positive integer, got '-2'" },
  { HEAD GPUS "parallel: {tp: 0, pp: 2, micro_batch: 1, global_batch: 16}\n", 4, 16,
    "parallel.tp must be a positive integer, got '0'" },
  { HEAD GPUS "parallel: {tp: 1.5, pp: 2, micro_batch: 1, global_batch: 16}\n", 4, 16,
    "parallel.tp must be a positive integer, got '1.5'" },
  { HEAD GPUS "parallel: {tp: two, pp: 2, micro_batch: 1, global_batch: 16}\n", 4, 16,
    "parallel.tp must be a positive integer, got 'two'" },
  { HEAD "gpus: 3000000000\n" PAR, 3, 7,
    "gpus must be a positive integer no larger than 2147483647, got '3000000000'" },
  { HEAD GPUS "parallel: {tp: 2, pp: 2, micro_batch: often, global_batch: 16}\n", 4, 39,
    "parallel.micro_batch must be a positive integer or auto, got 'often'" },
  { HEAD, 1, 1, "the experiment is missing required keys: gpus, parallel" },
  { HEAD GPUS "parallel: {pp: 2, micro_batch: 1}\n", 4, 11,
    "parallel is missing required keys: tp, global_batch" },
  { HEAD GPUS "parallel:\n", 4, 10, "parallel is missing required keys: tp, pp, micro_batch" },
  { HEAD GPUS PAR "training: {precision: bf61}\n", 5, 23,
    "training.precision: unknown value 'bf61' (did you mean 'bf16'?); valid values: fp32, "
    "tf32, fp16, bf16 or fp8" },
  { HEAD GPUS PAR "parallel2: 1\nzero: {offload: cpu}\n", 5, 1, "unknown key 'parallel2'" },
  { HEAD GPUS PAR "zero: {offload: cpu}\n", 5, 17,
    "zero.offload: unknown value 'cpu'; valid values: none, optimizer or optimizer+params" },
  { HEAD GPUS PAR "zero: {stage: 4}\n", 5, 15, "zero.stage must be an integer from 0 to 3, got '4'" },
  { HEAD GPUS PAR "compute: {mfu: 1.5}\n", 5, 16, "compute.mfu must be a fraction in (0, 1]" },
  { HEAD GPUS PAR "training: {tokens: -3}\n", 5, 20,
    "training.tokens must be a positive number of tokens, such as 300e9, or chinchilla (tokens_per_parameter, default 20, times the parameters), got '-3'" },
  { HEAD GPUS PAR "parallel2: x\n", 5, 1,
    "unknown key 'parallel2' in the experiment (did you mean 'parallel'?)" },
  { HEAD GPUS "parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16, sequence_parallel: 2}\n",
    4, 79, "parallel.sequence_parallel must be true or false, got '2'" },
  { HEAD GPUS "parallel: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16, bucket_size: 25MB/s}\n",
    4, 73, "parallel.bucket_size: unknown unit 'MB/s'; expected an amount of memory" },
  { "model: tinyy\ntopology: tinycluster\n" GPUS PAR, 1, 8,
    "unknown model 'tinyy' (did you mean 'tiny'?); known models: " },
  { "model: tiny\ntopology: selen\n" GPUS PAR, 2, 11,
    "unknown topology 'selen' (did you mean 'selene'?); known topologies: " },
  { "model: [tiny]\ntopology: tinycluster\n" GPUS PAR, 1, 8,
    "model must be a model name, a path to a YAML file or a mapping of its keys, got a sequence" },
  { "model: no/such.yaml\ntopology: tinycluster\n" GPUS PAR, 1, 8,
    "model file 'no/such.yaml' not found" },
  { "model: {name: tiny, kv_heads: 3}\ntopology: tinycluster\n" GPUS PAR, 1, 31,
    "model.kv_heads (3) must divide model.heads (4)" },
  { "model: {name: tiny, head_dim: 100000}\ntopology: tinycluster\n" GPUS PAR, 1, 31,
    "model.head_dim must be at most 65536, got 100000" },
  { "model: {name: tiny, vocab_divisible_by: 100000}\ntopology: tinycluster\n" GPUS PAR, 1, 41,
    "model.vocab_divisible_by must be at most 65536, got 100000" },
  { "model: {name: tiny, vocab_divisible_by: 0}\ntopology: tinycluster\n" GPUS PAR, 1, 41,
    "model.vocab_divisible_by must be a positive integer or auto, got '0'" },
  { "model: {layers: 2, hidden: 8}\ntopology: tinycluster\n" GPUS PAR, 1, 8,
    "model is missing required keys: heads, vocab, seq_len" },
  { "model: tiny\ntopology:\n  gpus_per_node: 2\n  gpu: tiny-gpu\n  intra_node: {bandwidth: 1GB/s}\n"
    "  inter_node: {nics_per_node: 1, nic_bandwidth: 200}\n" GPUS PAR, 6, 49,
    "topology.inter_node.nic_bandwidth: expected a bandwidth such as 200Gb/s or 25GB/s, got '200'" },
  { "model: tiny\ntopology:\n  gpus_per_node: 2\n  gpu: {name: tiny-gpu, memory: 16}\n"
    "  intra_node: {bandwidth: 1GB/s, latency: 2}\n" GPUS PAR, 4, 33,
    "topology.gpu.memory: expected an amount of memory such as 80GiB or 40GB, got '16'" },
  { "model: tiny\ntopology:\n  gpus_per_node: 2\n  gpu: tiny-gpu\n"
    "  intra_node: {bandwidth: 1GB/s, link: nvlnk}\n" GPUS PAR, 5, 40,
    "topology.intra_node.link: unknown value 'nvlnk' (did you mean 'nvlink'?)" },
  { "model: tiny\ntopology:\n  gpus_per_node: 2\n  gpu: h100\n  intra_node: {bandwidth: 1GB/s}\n"
    GPUS PAR, 4, 8, "unknown device 'h100'; known devices: a100-sxm4-80gb, " },
  { "model: tiny\ntopology:\n  gpus_per_node: 2\n  gpu: {peak: {fp16: 1TFLOPS}, memory: 1GB, "
    "hbm_bandwidth: 1GB/s}\n  intra_node: {bandwidth: 1GB/s}\n" GPUS PAR, 4, 15,
    "topology.gpu.peak is missing required key: bf16" },
  { "schema_version: 2\n" HEAD GPUS PAR, 1, 17, "schema_version must be 1" },
  { HEAD GPUS PAR "sweep: {parallel.tp: 4}\n", 5, 22, "sweep.parallel.tp must be a non-empty list" },
  { HEAD GPUS PAR "sweep: {zip: {}}\n", 5, 14, "sweep.zip must map the keys of the axes that "
    "advance together to lists of values" },
  { HEAD GPUS PAR "sweep: {zip: [gpus]}\n", 5, 14, "sweep.zip must map the keys of the axes" },
  { HEAD GPUS PAR "sweep: {zip: {gpus: 4}}\n", 5, 21, "sweep.zip.gpus must be a non-empty list" },
  { HEAD GPUS PAR "gpus: 4\n", 5, 1, "duplicate key 'gpus' (first written at " },
  { HEAD GPUS "parallel: &p {tp: 2, pp: 2, micro_batch: 1, global_batch: 16}\n", 4, 11,
    "anchors (&p) are not supported" },
  { HEAD "gpus: !!int 8\n" PAR, 3, 7, "tags (tag:yaml.org,2002:int) are not supported" },
  { "a: &x 1\n", 1, 4, "anchors (&x)" },
  { HEAD GPUS PAR "---\nmodel: tiny\n", 5, 1, "a second YAML document" },
  { HEAD GPUS PAR "? [a, b]\n: 1\n", 5, 3, "a mapping key must be a plain word" },
  { HEAD GPUS "parallel: {tp: 2, pp: 2\n", 5, 1, "malformed YAML: did not find expected ',' or '}'" },
  { "model: tiny\n  topology: x\n", 2, 11, "malformed YAML: mapping values are not allowed" },
  { "", 1, 1, "an experiment file must be a mapping of keys such as model, topology" },
  { "- model\n", 1, 1, "an experiment file must be a mapping" },
};

START_TEST (test_experiment_bad)
{
  g_autofree char *path = write_tmp ("exp.yaml", bad_experiments[_i].yaml);
  g_autofree char *prefix = g_strdup_printf ("%s:%d:%d: ", path, bad_experiments[_i].line,
                                             bad_experiments[_i].col);
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  use_fixture_data_path ();
  ck_assert_msg (!config_load_experiment (path, NULL, &e, &error), "row %d should fail", _i);
  assert_input_error (error, prefix, bad_experiments[_i].part);
  ck_assert_ptr_null (e.model.name);       /* left zeroed */
  ck_assert_ptr_null (e.marks.file);
}
END_TEST

/* Errors in a referenced file point into that file, not at the reference. */
START_TEST (test_error_in_referenced_file)
{
  static const struct { const char *exp, *where, *part; } rows[] = {
    { "exp-bad-model-file.yaml", "models/bad-key.yaml:7:1: ",
      "unknown key 'seq_lenn' in model (did you mean 'seq_len'?)" },
    { "exp-bad-topology-file.yaml", "topologies/bad-bandwidth.yaml:8:18: ",
      "topology.inter_node.nic_bandwidth: expected a bandwidth such as 200Gb/s or 25GB/s, "
      "got '200'" },
  };

  no_data_path ();
  for (size_t i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = data_path (rows[i].exp);
      g_autoptr (GError) error = NULL;
      ExperimentSpec e;

      ck_assert_msg (!config_load_experiment (path, NULL, &e, &error), "%s should fail", path);
      ck_assert_msg (strstr (error->message, rows[i].where) != NULL,
                     "message should point at '%s': %s", rows[i].where, error->message);
      assert_input_error (error, "", rows[i].part);
    }
}
END_TEST

static const struct {
  const char *set;
  const char *prefix;
  const char *part;
} bad_sets[] = {
  { "parallel.tp", "--set parallel.tp: ", "expected KEY=VALUE, such as --set parallel.tp=4" },
  { "=4", "--set =4: ", "expected KEY=VALUE" },
  { "parallel..tp=4", "--set parallel..tp: ", "'parallel..tp' is not a dotted key" },
  { "parallel.tp=-2", "--set parallel.tp: ", "parallel.tp must be a positive integer, got '-2'" },
  { "parallel.tp=[1", "--set parallel.tp: ", "malformed YAML" },
  { "model.layrs=4", "--set model.layrs: ",
    "unknown key 'layrs' in model (did you mean 'layers'?)" },
  { "topology.intra_node.bandwidth=300", "--set topology.intra_node.bandwidth: ",
    "expected a bandwidth such as 200Gb/s or 25GB/s, got '300'" },
  { "model=gpt9", "--set model: ", "unknown model 'gpt9'; known models: " },
  { "parallel.schedule=1f1c", "--set parallel.schedule: ",
    "unknown value '1f1c' (did you mean '1f1b'?)" },
};

START_TEST (test_experiment_bad_set)
{
  g_autofree char *path = data_path ("exp-good.yaml");
  const char *const sets[] = { bad_sets[_i].set, NULL };
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  use_fixture_data_path ();
  ck_assert_msg (!config_load_experiment (path, sets, &e, &error), "--set %s should fail",
                 bad_sets[_i].set);
  assert_input_error (error, bad_sets[_i].prefix, bad_sets[_i].part);
}
END_TEST

START_TEST (test_missing_file)
{
  g_autoptr (GError) error = NULL;
  ExperimentSpec e;

  /* An input that is not there is bad input, as for every command. */
  ck_assert (!config_load_experiment ("/nonexistent/exp.yaml", NULL, &e, &error));
  ck_assert_msg (g_error_matches (error, TS_ERROR, TS_ERROR_INPUT), "got %s", error->message);
  ck_assert_int_eq (ts_error_exit_status (error), 2);
}
END_TEST

/* --- validation files ------------------------------------------------------------- */

START_TEST (test_validation_good)
{
  g_autofree char *path = data_path ("validation.yaml");
  g_autoptr (GError) error = NULL;
  g_autoptr (ValidationSpec) v = NULL;
  const ValidationCase *c;

  no_data_path ();
  v = config_load_validation (path, NULL, &error);
  ck_assert_msg (v != NULL, "load: %s", error ? error->message : "");
  ck_assert_str_eq (v->name, "tiny-validation");
  ck_assert_str_eq (v->source, "made up for the tests");
  assert_close (v->tolerance.mape, 0.05, "mape");
  assert_close (v->tolerance.max, 0.15, "max");
  ck_assert_int_eq (v->cases->len, 2);

  c = g_ptr_array_index (v->cases, 0);
  ck_assert_str_eq (c->id, "small");
  {
    g_autofree char *where = g_strconcat (path, ":15:5", NULL);
    ck_assert_str_eq (c->where, where);
  }
  assert_close (c->measured_iteration_time_s, 3.53, "iteration time");
  assert_close (c->measured_tflops_per_gpu, 137, "tflops");
  ck_assert (c->measured_memory_gib == SPEC_UNSET);
  ck_assert (!c->measured_oom);
  ck_assert_ptr_null (c->experiment.model.name);
  ck_assert_int_eq (c->experiment.model.layers, 24);
  ck_assert_int_eq (c->experiment.model.vocab, 51200);     /* from defaults */
  ck_assert_int_eq (c->experiment.model.seq_len, 2048);
  ck_assert_str_eq (c->experiment.topology.name, "selene");
  ck_assert_int_eq (c->experiment.gpus, 32);
  ck_assert_int_eq (c->experiment.parallel.dp, 0);
  ck_assert_int_eq (c->experiment.parallel.micro_batch, 0);
  ck_assert_int_eq (c->experiment.parallel.virtual_stages, 0);
  ck_assert_int_eq (c->experiment.parallel.schedule, SCHEDULE_INTERLEAVED);
  ck_assert_int_eq (c->experiment.training.recompute, RECOMPUTE_FULL);
  ck_assert_str_eq (c->experiment.marks.file, path);

  c = g_ptr_array_index (v->cases, 1);
  ck_assert_str_eq (c->id, "large");
  assert_close (c->measured_memory_gib, 70.5, "memory");
  ck_assert_int_eq (c->experiment.parallel.schedule, SCHEDULE_1F1B);     /* case wins */
  ck_assert_int_eq (c->experiment.parallel.virtual_stages, 0);           /* defaults kept */
  ck_assert_int_eq (c->experiment.training.recompute, RECOMPUTE_SELECTIVE);
  ck_assert_int_eq (c->experiment.training.precision, PRECISION_BF16);
  ck_assert_int_eq (c->experiment.model.hidden, 8192);
}
END_TEST

#define VHEAD "name: v\ndefaults: {topology: selene, model: {vocab: 8, seq_len: 8}}\ncases:\n"
#define VCASE "  - {id: a, model: {layers: 2, hidden: 8, heads: 2}, gpus: 8, " \
              "parallel: {tp: 8, pp: 1, micro_batch: 1, global_batch: 8}, " \
              "measured: {iteration_time_s: 1}}\n"

static const struct {
  const char *yaml;
  int line, col;
  const char *part;
} bad_validations[] = {
  { VHEAD VCASE VCASE, 5, 10, "duplicate case id 'a'" },
  { VHEAD "  - {id: b, gpus: 8}\n", 4, 5, "case is missing required key: measured" },
  { VHEAD "  - {id: b, measured: {iteration_time_s: 0}}\n", 4, 42,
    "case.measured.iteration_time_s must be a positive number" },
  { VHEAD "  - {id: b, model: {layers: 2, hidden: 8, heads: 2}, gpu: 8, "
    "measured: {iteration_time_s: 1}}\n", 4, 54,
    "unknown key 'gpu' in the experiment (did you mean 'gpus'?)" },
  { VHEAD "  - {id: b, measured: {iteration_time_s: 1, oom: maybe}}\n", 4, 50,
    "case.measured.oom must be true or false, got 'maybe'" },
  { "name: v\ncases: []\n", 2, 8, "cases must be a non-empty list" },
  { "name: v\ncases: [1]\n", 2, 9, "a case must be a mapping" },
  { "cases: [1]\n", 1, 1, "the validation file is missing required key: name" },
  { "name: v\ntolerance: {mape: 5}\ncases: [1]\n", 2, 19, "tolerance.mape must be a fraction" },
  { "name: v\ndefaults: {modle: x}\ncases:\n" VCASE, 2, 12,
    "unknown key 'modle' in the experiment (did you mean 'model'?)" },
};

START_TEST (test_validation_bad)
{
  g_autofree char *path = write_tmp ("validation.yaml", bad_validations[_i].yaml);
  g_autofree char *prefix = g_strdup_printf ("%s:%d:%d: ", path, bad_validations[_i].line,
                                             bad_validations[_i].col);
  g_autoptr (GError) error = NULL;
  g_autoptr (ValidationSpec) v = NULL;

  use_fixture_data_path ();
  v = config_load_validation (path, NULL, &error);
  ck_assert_msg (v == NULL, "row %d should fail", _i);
  assert_input_error (error, prefix, bad_validations[_i].part);
}
END_TEST

/* --- ownership ---------------------------------------------------------------------- */

START_TEST (test_copy_and_clear)
{
  g_autofree char *path = data_path ("exp-good.yaml");
  g_autoptr (GError) error = NULL;
  ExperimentSpec e, copy;

  use_fixture_data_path ();
  ck_assert_msg (config_load_experiment (path, NULL, &e, &error), "load: %s", error->message);
  experiment_spec_copy (&copy, &e);
  ck_assert_ptr_ne (copy.model.name, e.model.name);
  ck_assert_ptr_ne (copy.marks.tp, e.marks.tp);
  experiment_spec_clear (&e);
  ck_assert_ptr_null (e.model.name);
  experiment_spec_clear (&e);                  /* clearing twice is harmless */
  ck_assert_str_eq (copy.model.name, "tiny");
  ck_assert_str_eq (copy.topology.name, "tinycluster");
  ck_assert_str_eq (copy.topology.gpu.name, "tiny-gpu");
  ck_assert_str_eq (copy.marks.file, path);
  ck_assert_int_eq (copy.parallel.global_batch, 16);
  experiment_spec_clear (&copy);
  validation_spec_free (NULL);
}
END_TEST

/* A topology's description for `trainsim plot`, found as an experiment
 * beside NEAR finds a name (here the source tree's topologies/, an
 * ancestor of tests/data), and never through a path. */
START_TEST (test_topology_description)
{
  g_autofree char *near = data_path ("exp-good.yaml");
  g_autofree char *apollo = NULL;
  const char *none[] = { "tinycluster", "no-such-topology", "", ".apollo-a100-1ib",
                         "topologies/apollo-a100-1ib", "../topologies/apollo-a100-1ib",
                         "apollo-a100-1ib.yaml" };

  no_data_path ();
  apollo = config_topology_description ("apollo-a100-1ib", near);
  ck_assert_str_eq (apollo, "HPE Apollo 6500-style: 8 x A100 80GB on NVSwitch, "
                            "1 x HDR 200Gb/s per node, fat tree");
  for (size_t i = 0; i < G_N_ELEMENTS (none); i++)
    {
      g_autofree char *d = config_topology_description (none[i], near);
      ck_assert_msg (d == NULL, "'%s' has a description: %s", none[i], d);
    }
}
END_TEST

/* --- the suite ---------------------------------------------------------------------- */

/* Named files are read once a process (config.c's ref_cache), but the
 * same name written in two directories still finds each its own file:
 * two experiments, each beside a models/m.yaml of its own depth. */
START_TEST (test_same_name_in_two_directories)
{
  static const char experiment[] =
    "model: m\n"
    "topology: {gpus_per_node: 4, gpu: tiny-gpu, intra_node: {bandwidth: 50GB/s}}\n"
    "gpus: 4\n"
    "parallel: {tp: 4, pp: 1, micro_batch: 2, global_batch: 8}\n";
  const char *dirs[] = { "a", "b" };

  /* The device tiny-gpu comes from the fixtures, found under data_dir. */
  use_fixture_data_path ();
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 2; i++)
      {
        g_autofree char *models = g_build_filename (tmp_dir, dirs[i], "models", NULL);
        g_autofree char *model = g_build_filename (models, "m.yaml", NULL);
        g_autofree char *exp = g_build_filename (tmp_dir, dirs[i], "exp.yaml", NULL);
        g_autofree char *text = g_strdup_printf (
          "name: m\nlayers: %d\nhidden: 64\nheads: 4\nvocab: 1000\nseq_len: 128\n", 2 + i);
        g_autoptr (GError) error = NULL;
        ExperimentSpec e;

        ck_assert_int_eq (g_mkdir_with_parents (models, 0700), 0);
        ck_assert (g_file_set_contents (model, text, -1, NULL));
        ck_assert (g_file_set_contents (exp, experiment, -1, NULL));
        ck_assert_msg (config_load_experiment (exp, NULL, &e, &error), "load %s: %s", exp,
                       error ? error->message : "");
        ck_assert_int_eq (e.model.layers, 2 + i);
        experiment_spec_clear (&e);
        if (round == 1)
          {
            g_unlink (exp);
            g_unlink (model);
            g_rmdir (models);
            g_autofree char *dir = g_build_filename (tmp_dir, dirs[i], NULL);
            g_rmdir (dir);
          }
      }
}
END_TEST

static Suite *
config_suite (void)
{
  Suite *s = suite_create ("config");
  TCase *tc = tcase_create ("units");

  tcase_add_loop_test (tc, test_units_good, 0, G_N_ELEMENTS (good_units));
  tcase_add_loop_test (tc, test_units_bad, 0, G_N_ELEMENTS (bad_units));
  tcase_add_loop_test (tc, test_units_number, 0, G_N_ELEMENTS (numbers));
  tcase_add_test (tc, test_enum_tables);
  tcase_add_test (tc, test_exit_status);
  suite_add_tcase (s, tc);

  tc = tcase_create ("yamltree");
  tcase_add_test (tc, test_ytree_merge_and_set);
  suite_add_tcase (s, tc);

  tc = tcase_create ("experiment");
  tcase_add_test (tc, test_experiment_good);
  tcase_add_test (tc, test_experiment_defaults);
  tcase_add_test (tc, test_framework_buckets);
  tcase_add_test (tc, test_experiment_inline_and_paths);
  tcase_add_test (tc, test_experiment_overrides);
  tcase_add_loop_test (tc, test_experiment_bad, 0, G_N_ELEMENTS (bad_experiments));
  tcase_add_test (tc, test_error_in_referenced_file);
  tcase_add_loop_test (tc, test_experiment_bad_set, 0, G_N_ELEMENTS (bad_sets));
  tcase_add_test (tc, test_missing_file);
  tcase_add_test (tc, test_copy_and_clear);
  tcase_add_test (tc, test_topology_description);
  tcase_add_test (tc, test_same_name_in_two_directories);
  suite_add_tcase (s, tc);

  tc = tcase_create ("validation");
  tcase_add_test (tc, test_validation_good);
  tcase_add_loop_test (tc, test_validation_bad, 0, G_N_ELEMENTS (bad_validations));
  suite_add_tcase (s, tc);
  return s;
}

static void
remove_tmp_dir (void)
{
  const char *names[] = { "exp.yaml", "validation.yaml" };

  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *p = g_build_filename (tmp_dir, names[i], NULL);
      g_unlink (p);
    }
  g_rmdir (tmp_dir);
}

int
main (void)
{
  const char *srcdir = g_getenv ("srcdir");
  SRunner *runner;
  int failed;

  data_dir = g_build_filename (srcdir ? srcdir : ".", "tests", "data", NULL);
  tmp_dir = g_dir_make_tmp ("test-config-XXXXXX", NULL);
  g_assert (tmp_dir != NULL);
  runner = srunner_create (config_suite ());
  srunner_run_all (runner, CK_NORMAL);
  failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  remove_tmp_dir ();
  g_free (tmp_dir);
  g_free (data_dir);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
