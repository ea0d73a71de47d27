/* main.c: the trainsim program; everything happens in cli/. */
#include "base/outfile.h"
#include "cli/cli.h"

int
main (int argc, char **argv)
{
  /* A killed run leaves no temporary file behind. */
  outfile_install_signal_handlers ();
  return cli_main (argc, argv);
}
