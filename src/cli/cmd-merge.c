/* cmd-merge.c: `trainsim merge`: the outputs of a sweep's shards joined
 * back into the output of the whole sweep. */
#include "cli/cli.h"
#include "sweep/sweep.h"
#include <stdio.h>

int
cli_merge (int argc, char **argv)
{
  g_autofree char *output = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write to FILE ('-' for stdout); then every argument is a shard", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("[OUT] SHARD...");
  g_option_context_set_summary (context,
    "Joins the outputs of 'trainsim sweep --shard K/N', K = 1 ... N, into\n"
    "OUT: the same bytes as the sweep run unsharded. Row j of shard K is\n"
    "point j * N + K - 1, so merge needs all N shards, complete, in K order\n"
    "(1/N first); their headers must match. CSV or JSON lines, as written\n"
    "(a CSV row spans lines where a quoted cell holds a line break).\n"
    "OUT is written to a temporary file renamed into place. An existing OUT\n"
    "that looks like a sweep's shard (or a merge), of any sweep, is replaced\n"
    "only when given with -o, so that 'merge SHARD1 SHARD2', OUT forgotten,\n"
    "cannot overwrite SHARD1.");
  g_option_context_set_description (context,
    "Exit status: 0 success; 1 the output could not be written; 2 bad\n"
    "usage, a shard that cannot be read or is not a regular file, or shards\n"
    "that do not fit together (headers that differ, a line that is not a\n"
    "row, a partial last row, row counts of shards missing or out of order).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!cli_parse (context, entries, &argc, &argv))
    return 2;

  int first = output != NULL ? 1 : 2;
  if (argc - first < 1)
    {
      cli_printerr ("trainsim merge: expected %sone or more shard files",
                    output != NULL ? "" : "the output file, then ");
      cli_try_help ("merge");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  /* A positional OUT may be a shard whose name slipped in first: only -o
   * replaces a file that looks like one. */
  if (!sweep_merge (output != NULL ? output : argv[1],
                    (const char *const *) argv + first, (guint) (argc - first),
                    output != NULL, &error))
    return cli_fail (error);
  return 0;
}
