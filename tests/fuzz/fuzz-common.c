/* fuzz-common.c: the set-up and the input file that the fuzz targets
 * share (fuzz.h). */
#define _GNU_SOURCE   /* memfd_create */
#include "fuzz.h"

#include "base/errors.h"
#include "config/config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef FUZZ_SRCDIR
#error "FUZZ_SRCDIR must name the source tree (its models/ and topologies/)"
#endif

void
fuzz_init (void)
{
  static gboolean done;

  if (done)
    return;
  done = TRUE;
  g_log_set_always_fatal (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
  /* The input file's directory (/proc/self/fd) holds no data, so names
   * resolve here alone: the shipped data first, so that
   * tests/data/topologies/selene.yaml does not hide the real one. */
  g_setenv ("TRAINSIM_DATA_PATH",
            FUZZ_SRCDIR G_SEARCHPATH_SEPARATOR_S FUZZ_SRCDIR "/tests/data", TRUE);
}

/* Writes all of DATA at the start of FD, which it truncates first. */
static void
rewrite (int fd, const uint8_t *data, size_t size)
{
  if (ftruncate (fd, 0) != 0)
    g_error ("fuzz: ftruncate: %s", g_strerror (errno));
  for (size_t done = 0; done < size;)
    {
      ssize_t n = pwrite (fd, data + done, size - done, (off_t) done);
      if (n < 0 && errno != EINTR)
        g_error ("fuzz: pwrite: %s", g_strerror (errno));
      if (n > 0)
        done += (size_t) n;
    }
}

const char *
fuzz_file (const uint8_t *data, size_t size)
{
  static int fd = -1;
  static char *path;   /* one name for every input: the loader interns it */

  if (fd < 0)
    {
      if ((fd = memfd_create ("fuzz-input.yaml", MFD_CLOEXEC)) < 0)
        g_error ("fuzz: memfd_create: %s", g_strerror (errno));
      path = g_strdup_printf ("/proc/self/fd/%d", fd);
    }
  rewrite (fd, data, size);
  return path;
}

/* The text after "#--set " on each line of DATA that begins with it,
 * NULL-terminated. */
static char **
overrides (const uint8_t *data, size_t size)
{
  static const char prefix[] = "#--set ";
  const size_t skip = sizeof prefix - 1;
  GPtrArray *sets = g_ptr_array_new ();

  for (const uint8_t *line = data, *end = data + size; line < end;)
    {
      const uint8_t *nl = memchr (line, '\n', (size_t) (end - line));
      const uint8_t *stop = nl ? nl : end;

      if ((size_t) (stop - line) >= skip && memcmp (line, prefix, skip) == 0)
        g_ptr_array_add (sets, g_strndup ((const char *) line + skip,
                                          (gsize) (stop - line) - skip));
      line = stop + 1;
    }
  g_ptr_array_add (sets, NULL);
  return (char **) g_ptr_array_free (sets, FALSE);
}

gboolean
fuzz_load_experiment (const uint8_t *data, size_t size, ExperimentSpec *out)
{
  g_auto (GStrv) sets = overrides (data, size);
  g_autoptr (GError) error = NULL;
  const char *path = fuzz_file (data, size);

  if (config_load_experiment (path, (const char *const *) sets, out, &error))
    return TRUE;
  g_assert (error != NULL && error->domain == TS_ERROR && error->message[0]);
  return FALSE;
}
