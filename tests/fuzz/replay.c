/* replay.c: a main() for a fuzz target without libFuzzer, so that any
 * compiler builds it and `make check` replays saved inputs
 * (tests/fuzz/regress.sh). Each argument is an input file, or a directory
 * whose files are inputs; each is fed once to LLVMFuzzerTestOneInput and
 * named on stdout before it runs, so that a crash names its input. */
#include "fuzz.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

static void
replay (const char *path)
{
  g_autofree char *data = NULL;
  gsize size = 0;
  g_autoptr (GError) error = NULL;

  printf ("%s\n", path);
  fflush (stdout);
  if (!g_file_get_contents (path, &data, &size, &error))
    {
      fprintf (stderr, "replay: %s\n", error->message);
      exit (2);
    }
  LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      g_autoptr (GDir) dir = NULL;
      g_autoptr (GPtrArray) files = NULL;
      const char *name;

      if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
        {
          replay (argv[i]);
          continue;
        }
      /* In name order, so that two runs replay alike. */
      dir = g_dir_open (argv[i], 0, NULL);
      files = g_ptr_array_new_with_free_func (g_free);
      while (dir && (name = g_dir_read_name (dir)))
        g_ptr_array_add (files, g_build_filename (argv[i], name, NULL));
      g_ptr_array_sort (files, compare_names);
      for (guint k = 0; k < files->len; k++)
        replay (g_ptr_array_index (files, k));
    }
  return 0;
}
