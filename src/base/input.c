/* input.c: reading text inputs with a size cap (input.h). */
#include "base/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/text.h"
#include "base/units.h"

gboolean
input_max_bytes (gsize *max, GError **error)
{
  const char *env = g_getenv ("TRAINSIM_MAX_INPUT");
  g_autofree char *why = NULL;
  double bytes;

  *max = INPUT_MAX_DEFAULT;
  if (env == NULL)
    return TRUE;
  /* Below G_MAXSIZE with room for the byte past the cap that tells a
   * file of exactly the cap from a longer one. */
  if (!units_parse (env, UNIT_BYTES, &bytes, &why) || bytes >= (double) (G_MAXSIZE / 2))
    {
      g_autofree char *shown = text_shown (env);   /* a message: base/text.h */
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE,
                   "TRAINSIM_MAX_INPUT='%s': %s, the largest input file to read",
                   shown, why ? why : "too large");
      return FALSE;
    }
  *max = (gsize) bytes;
  return TRUE;
}

void
input_position (const char *text, gsize len, gsize offset, int *line, int *col)
{
  *line = *col = 1;
  for (gsize i = 0; i < offset && i < len; i++)
    if (text[i] == '\n')
      *line += 1, *col = 1;
    else if (((guchar) text[i] & 0xc0) != 0x80)  /* not a continuation byte */
      *col += 1;
}

/* BYTES as one would write it in TRAINSIM_MAX_INPUT: "64MiB", "1500B".
 * (g_format_size rounds, and puts a no-break space before the unit.) */
static char *
size_text (gsize bytes)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  guint u = 0;

  while (u + 1 < G_N_ELEMENTS (units) && bytes >= 1024 && bytes % 1024 == 0)
    bytes /= 1024, u++;
  return g_strdup_printf ("%" G_GSIZE_FORMAT "%s", bytes, units[u]);
}

/* Sets the error for TEXT (LEN bytes so far) of PATH at byte OFFSET. */
static void
set_error_at (GError **error, const char *path, const char *text, gsize len, gsize offset,
              const char *what)
{
  int line, col;

  input_position (text, len, offset, &line, &col);
  g_autofree char *shown = text_shown (path);   /* a message: base/text.h */
  g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%d:%d: %s", shown, line, col, what);
}

gboolean
input_read (const char *path, char **text, gsize *len, GError **error)
{
  g_autofree char *data = NULL;
  gsize size = 0, alloc = 0, max;
  int fd;

  *text = NULL;
  *len = 0;
  if (!input_max_bytes (&max, error))
    return FALSE;
  /* "-" is standard input (a copy of it, which the close below leaves
   * open); names in it resolve from the working directory, as "-" has
   * no other. */
  if ((fd = strcmp (path, "-") == 0 ? dup (STDIN_FILENO) : open (path, O_RDONLY)) < 0)
    {
      int saved = errno;
      g_autofree char *shown = text_shown (path);   /* a message: base/text.h */
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot read %s: %s", shown,
                   g_strerror (saved));
      return FALSE;
    }
  /* Up to one byte past the cap: a file of exactly the cap is allowed.
   * The buffer keeps a byte spare for the closing NUL. */
  while (size <= max)
    {
      ssize_t n;
      const char *nul;

      if (alloc - size < 65536 + 1)
        {
          alloc = MAX (2 * alloc, 2 * 65536);
          data = g_realloc (data, alloc);
        }
      n = read (fd, data + size, MIN (alloc - size - 1, max + 1 - size));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          g_autofree char *shown = text_shown (path);
          close (fd);
          /* A directory opens but does not read: a path given wrong, bad
           * input as a missing file is; other errors are the system's. */
          g_set_error (error, TS_ERROR, saved == EISDIR ? TS_ERROR_INPUT : TS_ERROR_IO,
                       "cannot read %s: %s", shown, g_strerror (saved));
          return FALSE;
        }
      if (n == 0)
        break;
      nul = memchr (data + size, '\0', (size_t) n);
      size += (gsize) n;
      if (nul)
        {
          close (fd);
          set_error_at (error, path, data, size, (gsize) (nul - data),
                        "a NUL byte: a text input has none (is this a binary file?)");
          return FALSE;
        }
    }
  close (fd);
  if (size > max)
    {
      g_autofree char *cap = size_text (max);
      g_autofree char *what = g_strdup_printf (
        "the input goes on past %s, the most trainsim reads; if it is meant to be this "
        "large, raise the cap with TRAINSIM_MAX_INPUT (such as TRAINSIM_MAX_INPUT=1GiB)",
        cap);
      set_error_at (error, path, data, size, max, what);
      return FALSE;
    }
  data[size] = '\0';
  *len = size;
  *text = g_steal_pointer (&data);
  return TRUE;
}
