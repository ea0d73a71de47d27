/* cli.c: subcommand dispatch and the helpers the subcommands share. */
#include "config.h"
#include "cli/cli.h"
#include "base/errors.h"
#include "base/text.h"
#include "config/config.h"
#include "output/report.h"
#include <locale.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
} Subcommand;

static const Subcommand subcommands[] = {
  { "run", cli_run, "predict one training step of an experiment" },
  { "validate", cli_validate,
    "score predictions against published measurements" },
  { "sweep", cli_sweep, "predict every point of a design space, a row each" },
  { "merge", cli_merge, "join the outputs of sharded sweeps" },
  { "plot", cli_plot, "turn a sweep's CSV into a gnuplot figure" },
  { "search", cli_search, "find the fastest plans that fit in memory" },
  { "plan", cli_plan,
    "plan a whole training run: days, cost, failures and checkpoints" },
  { "collective", cli_collective,
    "time a collective over message sizes, as nccl-tests prints it" },
  { "calibrate", cli_calibrate,
    "fit link, GEMM and launch constants to a cluster's own measurements" },
  { "constants", cli_constants,
    "list the models' constants, their sources and how each was chosen" },
};

static void
usage (FILE *out)
{
  fprintf (out, "Usage: trainsim COMMAND [OPTION...] FILE...\n\n"
                "Predicts how fast a transformer trains on a GPU cluster.\n\n"
                "Commands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    fprintf (out, "  %-10s %s\n", subcommands[i].name,
             subcommands[i].summary);
  fprintf (out, "\n'trainsim COMMAND --help' describes a command's options;"
                " man trainsim has the rest.\n");
}

int
cli_fail (const GError *error)
{
  g_autofree char *shown = text_shown_lines (error->message);
  fprintf (stderr, "trainsim: %s\n", shown);
  return error->domain == TS_ERROR ? ts_error_exit_status (error) : 1;
}

void
cli_printerr (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autoptr (GString) line = g_string_new (NULL);
  text_append_shown (line, message);
  g_string_append_c (line, '\n');
  fputs (line->str, stderr);
}

void
cli_try_help (const char *command)
{
  if (command != NULL)
    cli_printerr ("Try 'trainsim %s --help'.", command);
  else
    cli_printerr ("Try 'trainsim --help'.");
}

char *
cli_find_input (const char *arg, const char *subdir)
{
  if (g_path_is_absolute (arg) || g_file_test (arg, G_FILE_TEST_EXISTS))
    return g_strdup (arg);
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  config_env_data_dirs (dirs);
  g_ptr_array_add (dirs, config_data_dir ());
  g_autofree char *with_yaml = g_str_has_suffix (arg, ".yaml")
                                 ? g_strdup (arg) : g_strconcat (arg, ".yaml", NULL);
  gboolean bare = strchr (arg, G_DIR_SEPARATOR) == NULL;
  for (guint i = 0; i < dirs->len; i++)
    {
      char *path = bare ? g_build_filename (dirs->pdata[i], subdir, with_yaml, NULL)
                        : g_build_filename (dirs->pdata[i], arg, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
    }
  return g_strdup (arg);
}

char *
cli_output_over_input (const char *output, const char *input)
{
  if (output == NULL || strcmp (output, "-") == 0 || strcmp (input, "-") == 0
      || !report_same_file (output, input))
    return NULL;
  /* A message: the names shown (base/text.h), for sweep's as for ours. */
  g_autofree char *shown_output = text_shown (output);
  g_autofree char *shown_input = text_shown (input);
  return g_strdup_printf ("%s would be written over %s, which it reads: name the "
                          "output otherwise", shown_output, shown_input);
}

gboolean
cli_output_is_input (const char *command, const char *output, const char *input)
{
  g_autofree char *why = cli_output_over_input (output, input);
  if (why != NULL)
    cli_printerr ("trainsim %s: %s", command, why);
  return why != NULL;
}

/* The entry of ENTRIES whose short name is C, or whose long name is NAME
 * (up to an '='), or NULL. */
static const GOptionEntry *
find_entry (const GOptionEntry *entries, char c, const char *name)
{
  for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
    if (name != NULL ? strncmp (e->long_name, name, strcspn (name, "=")) == 0
                       && e->long_name[strcspn (name, "=")] == '\0'
                     : c != '\0' && e->short_name == c)
      return e;
  return NULL;
}

static gboolean
parse (GOptionContext *context, const GOptionEntry *entries, int *argc,
       char ***argv, gboolean quiet)
{
  g_autoptr (GError) error = NULL;
  /* GOption reads "-j 2" and "--jobs=2" but not "-j2": a short option
   * glued to its value becomes its long form with the value. A value
   * given apart is skipped, so that "-o -j2" keeps "-j2" as the output's
   * name. GOption copies the values it parses, so the strings made here
   * need only outlive the parse. */
  g_autoptr (GPtrArray) made = g_ptr_array_new_with_free_func (g_free);
  gboolean help = FALSE;
  for (int i = 1; i < *argc; i++)
    {
      const char *a = (*argv)[i];
      const GOptionEntry *e = NULL;
      help = help || strcmp (a, "--help") == 0 || strcmp (a, "-h") == 0;
      if (strcmp (a, "--") == 0 || a[0] != '-' || a[1] == '\0')
        {
          if (strcmp (a, "--") == 0)
            break;
          continue;
        }
      if (a[1] == '-')
        e = strchr (a, '=') == NULL ? find_entry (entries, '\0', a + 2) : NULL;
      else if ((e = find_entry (entries, a[1], NULL)) != NULL && a[2] != '\0'
               && e->arg != G_OPTION_ARG_NONE)
        {
          char *joined = g_strdup_printf ("--%s=%s", e->long_name, a + 2);
          g_ptr_array_add (made, joined);
          (*argv)[i] = joined;
          continue;
        }
      if (e != NULL && e->arg != G_OPTION_ARG_NONE)
        i++;
    }
  /* --help's usage line names the command as it is typed. */
  if (g_get_prgname () == NULL)
    {
      g_autofree char *name = g_strconcat ("trainsim ", (*argv)[0], NULL);
      g_set_prgname (name);
    }
  /* Every command reads input files, under the same limits: said once
   * here, at the end of each command's --help. */
  const char *described = g_option_context_get_description (context);
  g_autofree char *description = g_strconcat (
    described ? described : "", described ? "\n\n" : "",
    "Limits: an input file is read up to 64MiB (TRAINSIM_MAX_INPUT, such as\n"
    "1GiB, raises it), and YAML may nest at most 64 levels.", NULL);

  g_option_context_set_description (context, description);
  g_clear_pointer (&description, g_free);   /* copied; --help exits below */
  /* --help printed here rather than by GOption, which writes its usage
   * line's "[OPTION…]" through the C locale as "[OPTION?]". */
  if (help)
    {
      /* Freed before exit, which leaves automatic cleanups undone. */
      char *text = g_option_context_get_help (context, TRUE, NULL);
      char **parts = g_strsplit (text, "\xe2\x80\xa6", -1);
      char *ascii = g_strjoinv ("...", parts);
      fputs (ascii, stdout);
      g_free (ascii);
      g_strfreev (parts);
      g_free (text);
      exit (fflush (stdout) == 0 && !ferror (stdout) ? 0 : 1);
    }
  if (g_option_context_parse (context, argc, argv, &error))
    {
      /* A file option (FILE, FIG) given "" names no file: usage, not a
       * write error. (Other raw-byte options are column names.) */
      for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
        if (e->arg == G_OPTION_ARG_FILENAME && e->arg_description != NULL
            && (strcmp (e->arg_description, "FILE") == 0
                || strcmp (e->arg_description, "FIG") == 0)
            && *(char **) e->arg_data != NULL && **(char **) e->arg_data == '\0')
          {
            if (!quiet)
              {
                cli_printerr ("trainsim %s: --%s needs a file name", (*argv)[0],
                              e->long_name);
                cli_try_help ((*argv)[0]);
              }
            return FALSE;
          }
      return TRUE;
    }
  /* GOption's message quotes the option as typed. */
  if (!quiet)
    {
      cli_printerr ("trainsim %s: %s", (*argv)[0], error->message);
      cli_try_help ((*argv)[0]);
    }
  return FALSE;
}

gboolean
cli_report_format (const char *command, const char *name, int *format)
{
  *format = REPORT_TABLE;
  if (name == NULL || (*format = report_format_parse (name)) >= 0)
    return TRUE;
  cli_printerr ("trainsim %s: unknown format '%s' (valid: %s)", command, name,
                report_format_names ());
  cli_try_help (command);
  return FALSE;
}

gboolean
cli_parse (GOptionContext *context, const GOptionEntry *entries, int *argc,
           char ***argv)
{
  return parse (context, entries, argc, argv, FALSE);
}

gboolean
cli_parse_quietly (GOptionContext *context, const GOptionEntry *entries,
                   int *argc, char ***argv)
{
  return parse (context, entries, argc, argv, TRUE);
}

/* The command argv[1] names, or usage. */
static int
run_command (int argc, char **argv)
{
  /* Numbers are written with g_ascii_* and never depend on the locale;
   * the C locale keeps libyaml and strtod the same everywhere too. */
  setlocale (LC_ALL, "C");
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  const char *cmd = argv[1];
  if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0
      || strcmp (cmd, "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (cmd, "--version") == 0)
    {
#ifdef HAVE_MPI
      printf ("%s (with MPI)\n", PACKAGE_STRING);
#else
      printf ("%s\n", PACKAGE_STRING);
#endif
      /* Where names such as gpt3-175b are looked up (config.c). */
      g_autofree char *data = config_data_dir ();
      const char *env = g_getenv ("TRAINSIM_DATA_PATH");
      g_autofree char *shown = text_shown (env);
      printf ("data: TRAINSIM_DATA_PATH%s%s%s, the experiment's directory and "
              "its parents, then %s\n", env ? " (" : " (unset)", shown,
              env ? ")" : "", data);
      return 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    if (strcmp (cmd, subcommands[i].name) == 0)
      return subcommands[i].fn (argc - 1, argv + 1);
  g_autoptr (GString) known = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    g_string_append_printf (known, "%s%s", i ? ", " : "", subcommands[i].name);
  cli_printerr ("trainsim: unknown command '%s' (known: %s)", cmd, known->str);
  cli_try_help (NULL);
  return 2;
}

int
cli_main (int argc, char **argv)
{
  int status = run_command (argc, argv);
  /* Every command's printed output is only delivered once stdout is
   * flushed: output that could not be written (a full disk) makes a
   * command that thought it succeeded an I/O failure. One that failed
   * already has said why. */
  if ((fflush (stdout) != 0 || ferror (stdout)) && status == 0)
    {
      cli_printerr ("trainsim: cannot write standard output: %s",
                    g_strerror (errno));
      return 1;
    }
  return status;
}
