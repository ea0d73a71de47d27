/* cmd-collective.c: `trainsim collective`: one collective over a range of
 * message sizes on a topology, printed as nccl-tests prints its runs, so
 * that a user can hold the model against their own all_reduce_perf. */
#include "cli/cli.h"
#include "base/errors.h"
#include "base/text.h"
#include "base/units.h"
#include "config/config.h"
#include "net/net.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The reduction nccl-tests prints for each operation. */
static const char *const redops[COLL_N] = {
  [COLL_ALL_REDUCE] = "sum", [COLL_REDUCE_SCATTER] = "sum",
  [COLL_ALL_GATHER] = "none", [COLL_ALL_TO_ALL] = "none", [COLL_SEND] = "none",
};

/* The largest size a rank may give a collective: 1 TiB, past any GPU's
 * memory (nccl-tests' own sweeps stop at a few GiB). Larger sizes are a
 * slip of the finger, and beyond 2^53 bytes a double no longer holds
 * them exactly. */
#define MAX_SIZE 1099511627776.0

/* A size as nccl-tests writes it (8, 128M, 1G: K, M and G are powers of
 * 1024), or with the units of an input file (256MiB, 1GB), from 1 byte
 * to MAX_SIZE. */
static gboolean
parse_size (const char *text, double *out)
{
  char *end;
  double x = g_ascii_strtod (text, &end);
  g_autofree char *why = NULL;
  *out = 0;
  if (end != text && x >= 1 && isfinite (x))
    {
      const char *suffix = "KMG";
      const char *at = end[0] != '\0' && end[1] == '\0' ? strchr (suffix, end[0]) : NULL;
      if (*end == '\0')
        *out = floor (x);
      else if (at != NULL)
        *out = floor (x * pow (1024, (double) (at - suffix + 1)));
    }
  if (*out == 0 && !units_parse (text, UNIT_BYTES, out, &why))
    return FALSE;
  return *out >= 1 && *out <= MAX_SIZE;
}

/* The value of the name TEXT of E given as --FLAG, or FALLBACK when not
 * given; -1, having said what is valid, for an unknown name. */
static int
option_enum (SpecEnum e, const char *flag, const char *text, int fallback)
{
  if (text == NULL)
    return fallback;
  int value = spec_enum_parse (e, text);
  if (value < 0)
    {
      g_autofree char *valid = spec_enum_list (e);
      cli_printerr ("trainsim collective: unknown --%s '%s' (valid: %s)", flag,
                    text, valid);
    }
  return value;
}

/* The most rows one run prints: nccl-tests' sweeps have a few dozen. */
#define MAX_ROWS 10000

/* The size after size: at least one byte more, so a factor near 1 ends. */
static double
next_size (double size, double factor)
{
  return MAX (floor (size * factor), size + 1);
}

int
cli_collective (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_autofree char *op_name = NULL, *min_text = NULL, *max_text = NULL,
                  *algo_name = NULL;
  int gpus = G_MININT, per_node = G_MININT;   /* not given: one node's */
  double factor = 2;
  GOptionEntry entries[] = {
    { "op", 'o', 0, G_OPTION_ARG_STRING, &op_name,
      "all_reduce (default), reduce_scatter, all_gather, alltoall (or all_to_all) "
      "or sendrecv",
      "OP" },
    { "minbytes", 'b', 0, G_OPTION_ARG_STRING, &min_text,
      "Smallest size (default 8; K, M, G as in nccl-tests)", "SIZE" },
    { "maxbytes", 'e', 0, G_OPTION_ARG_STRING, &max_text,
      "Largest size (default 1G; at most 1 TiB)", "SIZE" },
    { "stepfactor", 'f', 0, G_OPTION_ARG_DOUBLE, &factor,
      "Multiply the size by this from one row to the next (default 2)", "F" },
    { "gpus", 'g', 0, G_OPTION_ARG_INT, &gpus,
      "Ranks in all (default: one node's GPUs)", "N" },
    { "per-node", 'p', 0, G_OPTION_ARG_INT, &per_node,
      "Ranks per node (default: every GPU of a node)", "N" },
    { "algo", 'a', 0, G_OPTION_ARG_STRING, &algo_name,
      "auto (the tuner, default), ring, tree, hierarchical, nvls, nvls_tree, "
      "collnet_direct or collnet_chain, as NCCL_ALGO",
      "ALGO" },
    { "set", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sets,
      "Override a value of the topology (repeatable), e.g. "
      "inter_node.nics_per_node=4", "KEY=VALUE" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("TOPOLOGY");
  g_option_context_set_summary (context,
    "Prints the simulated time and bus bandwidth of one collective over a\n"
    "range of message sizes on TOPOLOGY (a name from topologies/ or a file),\n"
    "in the format of nccl-tests, with the algorithm and protocol that the\n"
    "NCCL-like tuner picked for each size. Every GPU of a node communicates\n"
    "at once, as in an nccl-tests run with one process per GPU.");
  g_option_context_set_description (context,
    "Example: trainsim collective selene --gpus 64 -b 1M -e 1G\n\n"
    "Exit status: 0 success; 2 bad usage or bad input.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;
  if (argc != 2)
    {
      cli_printerr ("trainsim collective: expected one topology, got %d", argc - 1);
      cli_try_help ("collective");
      return 2;
    }
  int op = option_enum (SPEC_ENUM_COLLECTIVE, "op", op_name, COLL_ALL_REDUCE);
  if (op < 0)
    return 2;
  int algorithm = option_enum (SPEC_ENUM_ALGORITHM, "algo", algo_name,
                               ALGORITHM_AUTO);
  if (algorithm < 0)
    return 2;
  double lo = 8, hi = 1 << 30;
  if ((min_text && !parse_size (min_text, &lo))
      || (max_text && !parse_size (max_text, &hi)) || lo > hi)
    {
      cli_printerr ("trainsim collective: -b and -e take sizes from 1 byte to 1 "
                    "TiB, such as 8, 128M or 1G (K, M and G: powers of 1024) or "
                    "256MiB, with -b no larger than -e; got -b %s -e %s",
                    min_text ? min_text : "8", max_text ? max_text : "1G");
      return 2;
    }
  if (!(factor > 1))
    {
      cli_printerr ("trainsim collective: --stepfactor must be above 1, got %g",
                    factor);
      return 2;
    }
  /* A factor near 1 steps a byte at a time: count the rows first, so
   * that a slip of the finger is an error, not gigabytes of output. */
  int n_rows = 0;
  for (double size = lo; size <= hi && n_rows <= MAX_ROWS;
       size = next_size (size, factor))
    n_rows++;
  if (n_rows > MAX_ROWS)
    {
      cli_printerr ("trainsim collective: -b %.0f -e %.0f -f %.9g makes more "
                    "than %d sizes; raise -f or narrow -b and -e", lo, hi,
                    factor, MAX_ROWS);
      return 2;
    }

  g_autoptr (GError) error = NULL;
  TopologySpec t;
  if (!config_load_topology (argv[1], (const char *const *) sets, &t, &error))
    return cli_fail (error);
  int gpn = t.gpus_per_node;
  if (per_node == G_MININT)
    per_node = gpus > 0 ? MIN (gpus, gpn) : gpn;
  if (gpus == G_MININT)
    gpus = per_node;
  const char *problem = NULL;
  if (per_node < 1 || per_node > gpn)
    problem = "--per-node must be from 1 to the node's GPUs";
  else if (gpus < 2 || gpus % per_node != 0)
    problem = "--gpus must be at least 2 and a multiple of --per-node";
  else if (gpus > per_node && t.inter_node.nics_per_node == 0)
    problem = "the topology has no inter_node network, so --gpus must fit in one node";
  else if (t.inter_node.fabric.placement == PLACEMENT_SPREAD
           && gpus / per_node > (int64_t) t.inter_node.fabric.groups
                                * t.inter_node.fabric.nodes_per_group)
    problem = "with placement spread, the nodes (--gpus / --per-node) must fit in the "
              "fabric's groups x nodes_per_group";
  if (problem != NULL)
    {
      cli_printerr ("trainsim collective: %s (node of %d GPUs, --gpus %d, "
                    "--per-node %d)", problem, gpn, gpus, per_node);
      topology_spec_clear (&t);
      return 2;
    }

  NetModel net;
  net_model_init (&net, &t, (AlgorithmChoice) algorithm);
  int nodes = gpus / per_node;
  g_autofree char *name = text_shown (t.name ? t.name : argv[1]);   /* base/text.h */
  printf ("# trainsim collective: %s_perf on %s, %d ranks (%d node%s x %d)\n",
          spec_enum_name (SPEC_ENUM_COLLECTIVE, op), name, gpus, nodes,
          nodes == 1 ? "" : "s", per_node);
  /* A busy or spread fabric says so; an idle packed one prints as it
   * always has. */
  if (net.placement != PLACEMENT_PACKED || net.background_load > 0)
    printf ("# fabric: placement %s, other jobs' load %g (%s), the job keeping "
            "%.2f of the links out of its groups\n",
            spec_enum_name (SPEC_ENUM_PLACEMENT, net.placement),
            net.background_load,
            spec_enum_name (SPEC_ENUM_BACKGROUND, net.background_pattern),
            net.background_keep);
  printf ("#\n");
  printf ("# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %14s  %6s\n", "size",
          "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm",
          "proto");
  printf ("# %10s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %14s  %6s\n", "(B)",
          "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
  double sum_busbw = 0;
  int rows = 0;
  for (double size = lo; size <= hi; size = next_size (size, factor))
    {
      /* nccl-tests counts float elements: the size rounds down to 4 bytes,
       * and to a multiple of the ranks for the split collectives. */
      double count = floor (size / 4);
      if (op != COLL_ALL_REDUCE && op != COLL_SEND)
        count = floor (count / gpus) * gpus;
      if (count < 1)
        continue;
      double bytes = count * 4;
      CollCost c;
      double seconds = net_benchmark_time (&net, op, bytes, gpus, per_node, &c);
      double busbw = net_bus_bandwidth (op, bytes, gpus, seconds);
      /* The algorithm's column fits the longest name, collnet_direct. */
      printf ("  %10.0f  %12.0f  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %14s  %6s\n",
              bytes, count, "float", redops[op], -1, seconds * 1e6,
              bytes / seconds / 1e9, busbw / 1e9, net_algo_name (c.algo),
              net_proto_name (c.proto));
      sum_busbw += busbw;
      rows++;
    }
  printf ("# Avg bus bandwidth    : %g\n", rows ? sum_busbw / rows / 1e9 : 0.0);
  printf ("#\n");
  topology_spec_clear (&t);
  return 0;
}
