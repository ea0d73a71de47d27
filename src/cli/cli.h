/* cli.h: the subcommands. main.c hands its arguments to cli_main; each
 * subcommand returns its exit status (0 success, 1 a plan that does not
 * fit or an I/O failure, 2 bad usage or input). */
#pragma once

#include <glib.h>

int cli_main (int argc, char **argv);

/* Subcommands, each in its own file. argv[0] is the subcommand's name. */
int cli_run (int argc, char **argv);
int cli_validate (int argc, char **argv);
int cli_sweep (int argc, char **argv);
int cli_merge (int argc, char **argv);
int cli_plot (int argc, char **argv);
int cli_search (int argc, char **argv);
int cli_plan (int argc, char **argv);
int cli_collective (int argc, char **argv);
int cli_constants (int argc, char **argv);
int cli_calibrate (int argc, char **argv);

/* Shared by the subcommands: prints "trainsim: MESSAGE" on stderr and
 * returns the exit status the error maps to. The message is shown as
 * base/text.h says (control characters and invalid UTF-8 as '?') but for
 * its line breaks, which a message trainsim composes over several lines
 * keeps ("this plan cannot run:" and its rules); a name from the input
 * is shown where the message is composed (ytree_set_error, input.c,
 * plan.c), so that a line break in it does not come through. */
int cli_fail (const GError *error);
/* Every other message of the commands on stderr (an error, a warning, a
 * note): FORMAT's text as one line, every control character in it, line
 * breaks included, and invalid UTF-8 shown as '?' (base/text.h), so that
 * a name it quotes can neither drive the terminal nor forge a line; then
 * a line break. A message of several lines is several calls. */
void cli_printerr (const char *format, ...) G_GNUC_PRINTF (1, 2);
/* "Try 'trainsim COMMAND --help'." on stderr, the line after a usage
 * error ("Try 'trainsim --help'." for a NULL COMMAND). */
void cli_try_help (const char *command);
/* Parses a subcommand's options, ENTRIES (those of CONTEXT's main group);
 * on bad usage prints the error and a pointer to --help and returns
 * FALSE. Takes a short option glued to its value ("-j2") as GOption takes
 * "-j 2", names the command "trainsim COMMAND" in --help's usage, and
 * adds the input limits (the size and nesting caps) to the end of
 * CONTEXT's description. */
gboolean cli_parse (GOptionContext *context, const GOptionEntry *entries,
                    int *argc, char ***argv);
/* The input file ARG names: ARG itself when it exists or is absolute;
 * else, in TRAINSIM_DATA_PATH's directories, then the data directory
 * (config_data_dir), the first that holds it: a bare name (no '/'), with
 * ".yaml" added when it lacks it, in their SUBDIR ("experiments",
 * "experiments/validation"); a relative path under them
 * ("experiments/tiny.yaml"). So the installed binary runs a shipped
 * experiment by its name, or by its path in the source tree, from any
 * directory. ARG when none holds it, for the loader to say so. Owned. */
char *cli_find_input (const char *arg, const char *subdir);
/* Why OUTPUT (a file an option names; NULL and "-" are standard output)
 * may not be written: it is INPUT, the file the command reads, which
 * writing it would replace; NULL when it is not. Owned. */
char *cli_output_over_input (const char *output, const char *input);
/* The same for COMMAND, said on stderr; TRUE when so, and the caller
 * exits 2. */
gboolean cli_output_is_input (const char *command, const char *output,
                              const char *input);
/* Reads --format's NAME (NULL: table) into *FORMAT, a ReportFormat; on
 * an unknown name says so for COMMAND, with the valid ones, and returns
 * FALSE. */
gboolean cli_report_format (const char *command, const char *name,
                            int *format);
/* The same, printing nothing (the MPI ranks but the first). */
gboolean cli_parse_quietly (GOptionContext *context, const GOptionEntry *entries,
                            int *argc, char ***argv);
