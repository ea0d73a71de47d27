/* test-sweep.c: ranges, axis keys, the order and bytes of a sweep's rows
 * with 1 and N threads, zipped axes, shards merged back, and merge's
 * refusals. The
 * experiments use the fixtures of tests/data (found through $srcdir). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "base/errors.h"
#include "config/config.h"
#include "sweep/plansearch.h"
#include "sweep/sweep.h"

static char *data_dir;   /* $srcdir/tests/data */
static char *tmp_dir;    /* files written by the tests */

/* NAME in tmp_dir; written with TEXT unless TEXT is NULL. */
static char *
tmp_file (const char *name, const char *text)
{
  char *path = g_build_filename (tmp_dir, name, NULL);

  if (text != NULL)
    ck_assert_msg (g_file_set_contents (path, text, -1, NULL), "cannot write %s", path);
  return path;
}

static char *
read_all (const char *path)
{
  char *text = NULL;

  ck_assert_msg (g_file_get_contents (path, &text, NULL, NULL), "cannot read %s", path);
  return text;
}

/* --- ranges ------------------------------------------------------------------ */

static const struct {
  const char *text;
  const char *want;    /* the values joined by ',', or NULL: an error */
  const char *part;    /* with an error: part of its message; NULL: not a range */
} ranges[] = {
  { "1..8", "1,2,3,4,5,6,7,8", NULL },
  { "1..8+2", "1,3,5,7", NULL },
  { "0..64+16", "0,16,32,48,64", NULL },
  { "64..4096x2", "64,128,256,512,1024,2048,4096", NULL },
  { "3..100x3", "3,9,27,81", NULL },
  { "5..5", "5", NULL },
  { "-2..2", "-2,-1,0,1,2", NULL },
  { "8..1", NULL, "the range 8..1 is empty: its end is below its start (write 1..8)" },
  { "1..8x1", NULL, "a factor of at least 2" },
  { "0..8x2", NULL, "a start of at least 1" },
  { "1..8+0", NULL, "a step of at least 1" },
  { "1..a", NULL, "'1..a' is not a range" },
  { "1..8y2", NULL, "is not a range" },
  { "1..8x", NULL, "is not a range" },
  { "1..100", NULL, "has 100 values, more than --max-points 50" },
  { "1..2000000000000", NULL, "has 2000000000000 values, more than --max-points 50" },
  { "gpt3-175b", NULL, NULL },
  { "../models/x.yaml", NULL, NULL },
  { "1.5", NULL, NULL },
};

START_TEST (test_ranges)
{
  g_autoptr (GArray) values = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) got = g_string_new (NULL);
  gboolean ok = sweep_expand_range (ranges[_i].text, 50, values, &error);

  for (guint i = 0; i < values->len; i++)
    g_string_append_printf (got, "%s%" G_GINT64_FORMAT, i ? "," : "",
                            g_array_index (values, gint64, i));
  if (ranges[_i].want != NULL)
    {
      ck_assert_msg (ok, "%s: %s", ranges[_i].text, error ? error->message : "not a range");
      ck_assert_str_eq (got->str, ranges[_i].want);
    }
  else if (ranges[_i].part == NULL)
    ck_assert_msg (!ok && error == NULL && values->len == 0,
                   "%s should not be a range", ranges[_i].text);
  else
    {
      ck_assert_msg (!ok && error != NULL, "%s should fail", ranges[_i].text);
      ck_assert_msg (strstr (error->message, ranges[_i].part) != NULL,
                     "%s: message should contain '%s': %s", ranges[_i].text,
                     ranges[_i].part, error->message);
    }
}
END_TEST

/* --- axis keys -------------------------------------------------------------- */

static const struct {
  const char *key;
  const char *part;    /* NULL: valid */
} keys[] = {
  { "parallel.micro_batch", NULL },
  { "gpus", NULL },
  { "model", NULL },
  { "model.layers", NULL },
  { "topology.inter_node.nics_per_node", NULL },
  { "topology.gpu.peak.bf16", NULL },
  { "zero.stage", NULL },
  { "parallel.micro_bach", "unknown key 'micro_bach' in parallel (did you mean 'micro_batch'?)" },
  { "paralel.tp", "unknown key 'paralel' in the experiment (did you mean 'parallel'?)" },
  { "parallel.tp.x", "parallel.tp is a single value" },
  { "sweep", "unknown key 'sweep'" },
  { "parallel..tp", "is not a dotted key" },
};

START_TEST (test_keys)
{
  g_autoptr (GError) error = NULL;
  YMark mark = { g_intern_string ("--sweep x"), 0, 0 };
  gboolean ok = config_check_key (keys[_i].key, mark, &error);

  if (keys[_i].part == NULL)
    ck_assert_msg (ok, "%s: %s", keys[_i].key, error ? error->message : "");
  else
    {
      ck_assert_msg (!ok, "%s should be refused", keys[_i].key);
      ck_assert_msg (g_str_has_prefix (error->message, "--sweep x: ")
                     && strstr (error->message, keys[_i].part) != NULL,
                     "%s: message should be '--sweep x: ...%s...': %s", keys[_i].key,
                     keys[_i].part, error->message);
    }
}
END_TEST

/* --- runs ------------------------------------------------------------------- */

/* 3 x 3 x 4 points on the fixtures' tiny model and cluster: tp 3 never
 * divides the heads, so some points are infeasible. */
static const char experiment[] =
  "model: tiny\n"
  "topology: tinycluster\n"
  "gpus: 4\n"
  "parallel: {tp: 1, pp: 1, micro_batch: 1, global_batch: 32}\n"
  "sweep:\n"
  "  gpus: [2, 4, 8]\n"
  "  parallel.tp: [1, 2, 3]\n";

static Sweep *
new_sweep (const char *path)
{
  g_autoptr (GError) error = NULL;
  Sweep *sweep = sweep_new (path, NULL, 1000, &error);

  ck_assert_msg (sweep != NULL, "sweep_new: %s", error ? error->message : "");
  ck_assert_msg (sweep_add_axis (sweep, "parallel.micro_batch=1..4", FALSE, &error),
                 "sweep_add_axis: %s", error ? error->message : "");
  ck_assert_msg (sweep_check (sweep, &error), "sweep_check: %s", error ? error->message : "");
  ck_assert_uint_eq (sweep_n_points (sweep), 36);
  return sweep;
}

/* Runs SWEEP into OUT, replacing it, and returns the output. */
static char *
run_into (const Sweep *sweep, const char *out, guint threads, SweepFormat format,
          guint k, guint n)
{
  g_autoptr (GError) error = NULL;
  SweepOptions o = { threads, format, FALSE, k, n, out, FALSE, TRUE };

  ck_assert_msg (sweep_run (sweep, &o, &error), "sweep_run: %s", error ? error->message : "");
  return read_all (out);
}

START_TEST (test_rows_in_point_order)
{
  g_autofree char *exp = tmp_file ("exp.yaml", experiment);
  g_autofree char *out = tmp_file ("one.csv", NULL);
  g_autoptr (Sweep) sweep = new_sweep (exp);
  g_autofree char *csv = run_into (sweep, out, 1, SWEEP_CSV, 1, 1);
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);

  /* The sweep's identity, the header, 36 rows, "". */
  ck_assert_uint_eq (g_strv_length (lines), 39);
  ck_assert_msg (g_regex_match_simple ("^# trainsim-sweep settings=[0-9a-f]{64} shard=1/1 "
                                       "points=36$", lines[0], 0, 0), "%s", lines[0]);
  ck_assert_msg (g_str_has_prefix (lines[1], "gpus,parallel.tp,parallel.micro_batch,"
                                   "status,reason,iteration_time_s,"), "%s", lines[1]);
  /* The last axis varies fastest. */
  ck_assert_msg (g_str_has_prefix (lines[2], "2,1,1,ok,,"), "%s", lines[2]);
  ck_assert_msg (g_str_has_prefix (lines[3], "2,1,2,ok,,"), "%s", lines[3]);
  ck_assert_msg (g_str_has_prefix (lines[6], "2,2,1,"), "%s", lines[6]);
  ck_assert_msg (g_str_has_prefix (lines[10], "2,3,1,infeasible,this plan cannot run: "),
                 "%s", lines[10]);
  ck_assert_msg (g_str_has_prefix (lines[37], "8,3,4,infeasible,"), "%s", lines[37]);
  ck_assert_str_eq (lines[38], "");
}
END_TEST

START_TEST (test_threads_give_the_same_bytes)
{
  g_autofree char *exp = tmp_file ("exp.yaml", experiment);
  g_autofree char *a = tmp_file ("a.out", NULL), *b = tmp_file ("b.out", NULL);
  g_autoptr (Sweep) sweep = new_sweep (exp);
  SweepFormat format = _i ? SWEEP_JSONL : SWEEP_CSV;
  g_autofree char *one = run_into (sweep, a, 1, format, 1, 1);
  g_autofree char *many = run_into (sweep, b, 7, format, 1, 1);

  ck_assert_str_eq (one, many);
  if (format == SWEEP_JSONL)
    ck_assert_msg (g_str_has_prefix (strchr (one, '\n') + 1,
                                     "{\"gpus\": 2, \"parallel.tp\": 1, "
                                     "\"parallel.micro_batch\": 1, \"status\": \"ok\", "
                                     "\"reason\": null, \"iteration_time_s\": "), "%s", one);
}
END_TEST

START_TEST (test_shards_merge_back)
{
  g_autofree char *exp = tmp_file ("exp.yaml", experiment);
  g_autofree char *whole = tmp_file ("whole.out", NULL), *merged = tmp_file ("merged.out", NULL);
  g_autoptr (Sweep) sweep = new_sweep (exp);
  SweepFormat format = _i ? SWEEP_JSONL : SWEEP_CSV;
  g_autofree char *want = run_into (sweep, whole, 2, format, 1, 1);
  g_autoptr (GPtrArray) shards = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  g_autofree char *got = NULL;

  /* 5 does not divide 36: the last shards are one row short. */
  for (guint k = 1; k <= 5; k++)
    {
      char name[32];

      g_snprintf (name, sizeof name, "shard%u.out", k);
      g_ptr_array_add (shards, tmp_file (name, NULL));
      g_free (run_into (sweep, g_ptr_array_index (shards, k - 1), 2, format, k, 5));
    }
  ck_assert_msg (sweep_merge (merged, (const char *const *) shards->pdata, 5, TRUE, &error),
                 "sweep_merge: %s", error ? error->message : "");
  got = read_all (merged);
  ck_assert_str_eq (got, want);
}
END_TEST

/* --- zipped axes -------------------------------------------------------------- */

/* Zipped axes in the file, between crossed ones. */
static const char zipped[] =
  "model: tiny\n"
  "topology: tinycluster\n"
  "gpus: 4\n"
  "parallel: {tp: 1, pp: 1, micro_batch: 1, global_batch: 32}\n"
  "sweep:\n"
  "  parallel.tp: [1, 2]\n"
  "  zip:\n"
  "    gpus: [2, 4, 8]\n"
  "    parallel.global_batch: [16, 32, 64]\n";

/* The sweep of TEXT (written to a file) with the command-line axes ARGS,
 * each "--sweep KEY=VALUES" or "--zip KEY=VALUES" (NULL-terminated), up
 * to MAX_POINTS; NULL with ERROR when refused. */
static Sweep *
sweep_of (const char *text, const char *const *args, guint64 max_points, GError **error)
{
  g_autofree char *exp = tmp_file ("zip.yaml", text);
  g_autoptr (Sweep) sweep = sweep_new (exp, NULL, max_points, error);

  for (int i = 0; sweep != NULL && args[i] != NULL; i++)
    {
      gboolean zip = g_str_has_prefix (args[i], "--zip ");
      if (!sweep_add_axis (sweep, strchr (args[i], ' ') + 1, zip, error))
        return NULL;
    }
  return sweep != NULL && sweep_check (sweep, error) ? g_steal_pointer (&sweep) : NULL;
}

START_TEST (test_zip_rows)
{
  /* --zip replaces the file's zipped batch in its place, and --sweep's
   * axis comes last: tp x (gpus, batch) x micro-batch. */
  const char *args[] = { "--sweep parallel.micro_batch=1,2",
                         "--zip parallel.global_batch=8..32x2", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sweep = sweep_of (zipped, args, 1000, &error);
  g_autofree char *out = tmp_file ("zip.csv", NULL);
  g_autofree char *csv = NULL;
  g_auto (GStrv) lines = NULL, header = NULL;
  guint gpus = 0;

  ck_assert_msg (sweep != NULL, "%s", error ? error->message : "");
  ck_assert_uint_eq (sweep_n_points (sweep), 12);
  csv = run_into (sweep, out, 3, SWEEP_CSV, 1, 1);
  lines = g_strsplit (csv, "\n", -1);
  ck_assert_uint_eq (g_strv_length (lines), 15);
  ck_assert_msg (g_str_has_prefix (lines[1], "parallel.tp,gpus,parallel.global_batch,"
                                   "parallel.micro_batch,status,reason,"), "%s", lines[1]);
  /* gpus, a result column too, is one column. */
  header = g_strsplit (lines[1], ",", -1);
  for (int i = 0; header[i] != NULL; i++)
    gpus += strcmp (header[i], "gpus") == 0;
  ck_assert_uint_eq (gpus, 1);
  /* The i-th GPU count with the i-th batch, micro-batch fastest. */
  static const char *const want[] = { "1,2,8,1,", "1,2,8,2,", "1,4,16,1,", "1,4,16,2,",
                                      "1,8,32,1,", "1,8,32,2,", "2,2,8,1,", "2,8,32,2," };
  static const guint at[] = { 2, 3, 4, 5, 6, 7, 8, 13 };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    ck_assert_msg (g_str_has_prefix (lines[at[i]], want[i]), "line %u: %s, expected %s...",
                   at[i], lines[at[i]], want[i]);
}
END_TEST

/* A file axis replaced by the other option changes kind; the settings,
 * which tell --resume and merge which rows are whose, say so. */
START_TEST (test_zip_settings)
{
  const char *zip_both[] = { "--zip gpus=2", "--sweep parallel.tp=1,2",
                             "--zip parallel.global_batch=16", NULL };
  const char *cross_both[] = { "--sweep gpus=2", "--sweep parallel.tp=1,2",
                               "--sweep parallel.global_batch=16", NULL };
  const char *none[] = { NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) a = sweep_of (experiment, zip_both, 1000, &error);
  g_autoptr (Sweep) b = sweep_of (experiment, cross_both, 1000, &error);
  g_autoptr (Sweep) c = sweep_of (zipped, none, 1000, &error);
  g_autofree char *ra = tmp_file ("a.csv", NULL), *rb = tmp_file ("b.csv", NULL);
  g_autofree char *out_a = NULL, *out_b = NULL;

  ck_assert_msg (a != NULL && b != NULL && c != NULL, "%s", error ? error->message : "");
  /* The file's gpus [2, 4, 8] is replaced, zipped. */
  ck_assert_uint_eq (sweep_n_points (a), 2);
  ck_assert_uint_eq (sweep_n_points (c), 6);
  out_a = run_into (a, ra, 1, SWEEP_CSV, 1, 1);
  out_b = run_into (b, rb, 1, SWEEP_CSV, 1, 1);
  /* The same rows, not the same sweep. */
  ck_assert_str_eq (strchr (out_a, '\n'), strchr (out_b, '\n'));
  ck_assert_msg (strncmp (out_a, out_b, strcspn (out_a, "\n")) != 0, "%s", out_a);
}
END_TEST

static const struct {
  const char *sweep;         /* the file's sweep: mapping, NULL for none */
  const char *args[4];       /* command-line axes */
  const char *part;          /* part of the error */
} bad_zips[] = {
  { NULL, { "--zip gpus=2,4,8", "--zip parallel.global_batch=16,32", NULL },
    "--zip parallel.global_batch: the zipped axes differ in length: gpus has 3 values, "
    "parallel.global_batch has 2;" },
  { "  zip: {gpus: [2], parallel.global_batch: [16, 32]}\n", { NULL },
    "zip.yaml:6:20: sweep.zip: the zipped axes differ in length: gpus has 1 value, "
    "parallel.global_batch has 2;" },
  { "  zip: {gpus: [2, 4]}\n", { "--zip parallel.global_batch=16", NULL },
    "--zip parallel.global_batch: the zipped axes differ in length: gpus has 2 values" },
  { "  zip: {gpus: [2, 4], parallel.global_batch: [16, 32]}\n", { "--zip gpus=2", NULL },
    "--zip gpus: the zipped axes differ in length: gpus has 1 value, "
    "parallel.global_batch has 2" },
  { NULL, { "--zip gpus=2,4", "--sweep gpus=2", NULL },
    "--sweep gpus: gpus is both zipped and swept (--zip gpus gives it too)" },
  { NULL, { "--sweep gpus=2,4", "--zip gpus=2", NULL },
    "--zip gpus: gpus is both zipped and swept (--sweep gpus gives it too)" },
  { "  gpus: [2]\n  zip: {gpus: [4]}\n", { NULL },
    "zip.yaml:7:9: sweep.zip.gpus: gpus is both zipped and swept (" },
  { NULL, { "--zip parallel.micro_bach=1,2", NULL },
    "--zip parallel.micro_bach: unknown key 'micro_bach' in parallel (did you mean "
    "'micro_batch'?)" },
  { "  zip: {gpus: [2], paralel.tp: [1]}\n", { NULL },
    "zip.yaml:6:20: unknown key 'paralel' in the experiment (did you mean 'parallel'?)" },
  { "  zip: {}\n", { NULL }, "zip.yaml:6:8: sweep.zip must map the keys of the axes" },
  { "  zip:\n", { NULL }, "sweep.zip must map the keys of the axes that advance together" },
  { "  zip: [gpus]\n", { NULL }, "sweep.zip must map the keys of the axes" },
  { NULL, { "--zip gpus=", NULL }, "--zip gpus: the axis is empty" },
  { NULL, { "--zip gpus", NULL }, "--zip gpus: expected KEY=V1,V2,..., such as --zip " },
  /* Zips count toward --max-points: tp 3 x 3 zipped x micro-batch 2. */
  { NULL, { "--zip gpus=2,4,8", "--zip parallel.global_batch=16..64x2",
            "--sweep parallel.micro_batch=1,2", NULL },
    "the sweep has 18 points (3 x 3 zipped x 2), more than --max-points 10" },
};

START_TEST (test_zip_refuses)
{
  g_autofree char *text = g_strconcat ("model: tiny\ntopology: tinycluster\ngpus: 4\n"
                                       "parallel: {tp: 1, pp: 1, micro_batch: 1, "
                                       "global_batch: 32}\n",
                                       bad_zips[_i].sweep ? "sweep:\n" : "sweep:\n"
                                       "  parallel.tp: [1, 2, 4]\n",
                                       bad_zips[_i].sweep, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Sweep) sweep = sweep_of (text, bad_zips[_i].args, 10, &error);

  ck_assert_msg (sweep == NULL, "zip %d should be refused", _i);
  ck_assert_msg (error->domain == TS_ERROR && ts_error_exit_status (error) == 2
                 && strstr (error->message, bad_zips[_i].part) != NULL,
                 "message should contain '%s': %s", bad_zips[_i].part, error->message);
}
END_TEST

/* --- merge's refusals --------------------------------------------------------- */

/* A shard's first line: shard K of N of a sweep of P points, of the
 * settings H (or G). */
#define H "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define G "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID(h, k, n, p) "# trainsim-sweep settings=" h " shard=" #k "/" #n " points=" #p "\n"

static const struct {
  const char *shards[3];
  const char *part;
} bad_merges[] = {
  { { ID (H, 1, 2, 2) "a,b\n1,2\n", ID (H, 2, 2, 2) "a,c\n3,4\n", NULL }, "its header is not" },
  { { ID (H, 1, 2, 2) "a,b\n1,2\n", ID (H, 2, 2, 2) "a,b\n3,4", NULL }, "ends in a partial row" },
  { { ID (H, 1, 2, 2) "a,b\n1,2\n", ID (H, 2, 2, 2) "a,b\n3,4\n5,6\n", NULL }, "has more than" },
  { { ID (H, 1, 2, 4) "a,b\n1,2\n", ID (H, 2, 2, 4) "a,b\n3,4\n5,6\n", NULL },
    "its sweep was interrupted" },
  { { ID (H, 1, 3, 3) "a,b\n1,2\n", ID (H, 2, 3, 3) "a,b\n3,4\n", NULL }, "needs every shard" },
  { { ID (H, 1, 2, 2) "a,b\n1,2\n", ID (H, 1, 2, 2) "a,b\n1,2\n", NULL }, "are both shard 1/2" },
  { { ID (H, 2, 2, 2) "a,b\n3,4\n", ID (H, 1, 2, 2) "a,b\n1,2\n", NULL }, "given in place 1" },
  { { ID (H, 1, 2, 2) "a,b\n1,2\n", ID (G, 2, 2, 2) "a,b\n3,4\n", NULL }, "from other settings" },
  { { ID (H, 1, 2, 2) "a,b\n1,2\n",
      "{\"trainsim_sweep\": {\"settings\": \"" H "\", \"shard\": \"2/2\", \"points\": 2}}\n"
      "{\"a\": 1}\n", NULL }, "another --format" },
  { { "a,b\n1,2\n", NULL, NULL }, "does not start as a sweep's output" },
};

START_TEST (test_merge_refuses)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = tmp_file ("bad-merge.out", NULL);
  g_autoptr (GError) error = NULL;

  for (guint k = 0; k < 3 && bad_merges[_i].shards[k] != NULL; k++)
    {
      char name[32];

      g_snprintf (name, sizeof name, "bad%u.out", k);
      g_ptr_array_add (paths, tmp_file (name, bad_merges[_i].shards[k]));
    }
  ck_assert_msg (!sweep_merge (out, (const char *const *) paths->pdata, paths->len, TRUE,
                               &error), "merge %d should fail", _i);
  ck_assert_msg (error->domain == TS_ERROR && error->code == TS_ERROR_INPUT
                 && strstr (error->message, bad_merges[_i].part) != NULL,
                 "message should contain '%s': %s", bad_merges[_i].part, error->message);
  ck_assert_msg (!g_file_test (out, G_FILE_TEST_EXISTS), "a failed merge left %s", out);
}
END_TEST

START_TEST (test_merge_keeps_a_shard_named_first)
{
  g_autofree char *one = tmp_file ("keep1.out", ID (H, 1, 1, 1) "a,b\n1,2\n");
  g_autofree char *two = tmp_file ("keep2.out", ID (H, 1, 1, 1) "a,b\n3,4\n");
  const char *inputs[] = { two };
  g_autoptr (GError) error = NULL;
  g_autofree char *after = NULL;

  /* "trainsim merge keep1 keep2": keep1 is taken for the output. */
  ck_assert (!sweep_merge (one, inputs, 1, FALSE, &error));
  ck_assert_msg (strstr (error->message, "looks like a sweep's shard") != NULL, "%s",
                 error->message);
  after = read_all (one);
  ck_assert_str_eq (after, ID (H, 1, 1, 1) "a,b\n1,2\n");
  g_clear_error (&error);
  /* Another sweep's output is kept too. */
  g_autofree char *other = tmp_file ("keep-other.out", ID (G, 1, 1, 1) "a,b\n5,6\n");
  g_autofree char *kept = NULL;
  ck_assert (!sweep_merge (other, inputs, 1, FALSE, &error));
  kept = read_all (other);
  ck_assert_str_eq (kept, ID (G, 1, 1, 1) "a,b\n5,6\n");
  g_clear_error (&error);
  inputs[0] = one;
  ck_assert (!sweep_merge (one, inputs, 1, TRUE, &error));
  ck_assert_msg (strstr (error->message, "is also a shard") != NULL, "%s", error->message);
}
END_TEST

/* --- search's pruning ------------------------------------------------------- */

/* Pruning by the plans' bounds (plansearch.h) leaves the KEEP fastest and
 * the counts as a walk that replays every plan has them, and prunes. */
START_TEST (test_search_prunes_the_same)
{
  g_autofree char *path = tmp_file ("search.yaml",
    "schema_version: 1\nmodel: {name: tiny, layers: 8, hidden: 1024, "
    "heads: 16, seq_len: 1024}\ntopology: tinycluster\ngpus: 8\n"
    "parallel: {tp: 1, pp: 1, micro_batch: 1, global_batch: 32}\n");
  ExperimentSpec base;
  GError *error = NULL;
  ck_assert_msg (config_load_experiment (path, NULL, &base, &error), "%s",
                 error ? error->message : "?");
  guint all_ok, all_valid, none;
  g_autoptr (GArray) all = plansearch_run (&base, NULL, 1, 0, &all_ok,
                                           &all_valid, &none);
  ck_assert_uint_eq (none, 0);
  ck_assert_uint_gt (all_ok, 10);
  for (guint keep = 1; keep <= 3; keep += 2)
    for (int jobs = 1; jobs <= 2; jobs++)
      {
        guint ok, valid, pruned;
        g_autoptr (GArray) some = plansearch_run (&base, NULL, jobs, keep, &ok,
                                                  &valid, &pruned);
        ck_assert_uint_eq (ok, all_ok);
        ck_assert_uint_eq (valid, all_valid);
        ck_assert_msg (pruned > 0 && pruned < all_ok - keep + 1,
                       "keep %u: %u of %u pruned", keep, pruned, all_ok);
        for (guint i = 0; i < keep; i++)
          {
            const PlanCandidate *a = &g_array_index (all, PlanCandidate, i);
            const PlanCandidate *b = &g_array_index (some, PlanCandidate, i);
            g_autofree char *la = plansearch_label (a);
            g_autofree char *lb = plansearch_label (b);
            ck_assert_msg (!b->pruned && strcmp (la, lb) == 0
                           && a->result.iteration_time_s
                              == b->result.iteration_time_s,
                           "keep %u, rank %u: %s (%.9g s) against %s (%.9g s)",
                           keep, i + 1, lb, b->result.iteration_time_s, la,
                           a->result.iteration_time_s);
          }
      }
  experiment_spec_clear (&base);
}
END_TEST

static Suite *
sweep_suite (void)
{
  Suite *s = suite_create ("sweep");
  TCase *tc = tcase_create ("axes");

  tcase_add_loop_test (tc, test_ranges, 0, G_N_ELEMENTS (ranges));
  tcase_add_loop_test (tc, test_keys, 0, G_N_ELEMENTS (keys));
  suite_add_tcase (s, tc);

  tc = tcase_create ("runs");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_rows_in_point_order);
  tcase_add_loop_test (tc, test_threads_give_the_same_bytes, 0, 2);
  tcase_add_loop_test (tc, test_shards_merge_back, 0, 2);
  suite_add_tcase (s, tc);

  tc = tcase_create ("zip");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_zip_rows);
  tcase_add_test (tc, test_zip_settings);
  tcase_add_loop_test (tc, test_zip_refuses, 0, G_N_ELEMENTS (bad_zips));
  suite_add_tcase (s, tc);

  tc = tcase_create ("search");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_search_prunes_the_same);
  suite_add_tcase (s, tc);

  tc = tcase_create ("merge");
  tcase_add_loop_test (tc, test_merge_refuses, 0, G_N_ELEMENTS (bad_merges));
  tcase_add_test (tc, test_merge_keeps_a_shard_named_first);
  suite_add_tcase (s, tc);
  return s;
}

/* Removes DIR and the files in it. */
static void
remove_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

int
main (void)
{
  const char *srcdir = g_getenv ("srcdir");
  SRunner *runner;
  int failed;

  data_dir = g_build_filename (srcdir ? srcdir : ".", "tests", "data", NULL);
  g_setenv ("TRAINSIM_DATA_PATH", data_dir, TRUE);
  tmp_dir = g_dir_make_tmp ("test-sweep-XXXXXX", NULL);
  g_assert (tmp_dir != NULL);
  runner = srunner_create (sweep_suite ());
  srunner_run_all (runner, CK_NORMAL);
  failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  remove_dir (tmp_dir);
  g_free (tmp_dir);
  g_free (data_dir);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
