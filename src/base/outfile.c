/* outfile.c: atomic, write-through result files; see outfile.h. */
#define _POSIX_C_SOURCE 200809L  /* sigaction, fsync, lstat */
#include "base/outfile.h"
#include "base/progress.h"
#include "base/text.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

/* Symbolic links followed at most, as the kernel's own limit (40). */
#define MAX_LINK_HOPS 40

char *
outfile_target (const char *path, gboolean *in_place)
{
  char *target = g_strdup (path);
  *in_place = FALSE;
  for (int hops = 0; hops < MAX_LINK_HOPS; hops++)
    {
      GStatBuf st;
      if (g_lstat (target, &st) != 0)
        return target;          /* a new file, or an error the write meets */
      if (S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode) || S_ISFIFO (st.st_mode)
          || S_ISSOCK (st.st_mode))
        *in_place = TRUE;
      if (!S_ISLNK (st.st_mode))
        return target;
      g_autofree char *link = g_file_read_link (target, NULL);
      if (link == NULL)
        return target;
      /* A relative link is relative to the link's own directory. */
      g_autofree char *dir = g_path_get_dirname (target);
      char *next = g_path_is_absolute (link) ? g_strdup (link)
                   : g_build_filename (dir, link, NULL);
      g_free (target);
      target = next;
    }
  return target;                /* a loop: the write reports ELOOP */
}

static gboolean
fail (GError **error, int saved_errno, const char *path)
{
  g_autofree char *shown = text_shown (path);   /* a message: base/text.h */
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
               "cannot write %s: %s", shown, g_strerror (saved_errno));
  return FALSE;
}

struct OutFile {
  FILE *f;
  char *path;           /* the caller's, for messages */
  char *target;         /* what is written or replaced */
  char *tmp;            /* the temporary file; NULL when written in place */
};

static void
outfile_free (OutFile *out)
{
  if (out->tmp != NULL)
    {
      g_unlink (out->tmp);
      outfile_temp_unregister (out->tmp);
    }
  g_free (out->path);
  g_free (out->target);
  g_free (out->tmp);
  g_free (out);
}

OutFile *
outfile_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  gboolean in_place;
  OutFile *out = g_new0 (OutFile, 1);
  out->path = g_strdup (path);
  out->target = outfile_target (path, &in_place);
  int fd;
  if (in_place)
    fd = g_open (out->target, O_WRONLY | O_NOCTTY, 0);
  else
    {
      g_autofree char *dir = g_path_get_dirname (out->target);
      g_autofree char *base = g_path_get_basename (out->target);
      g_autofree char *tmp_name = g_strdup_printf (".%s.XXXXXX", base);
      out->tmp = g_build_filename (dir, tmp_name, NULL);
      fd = g_mkstemp_full (out->tmp, O_WRONLY, 0666);   /* the umask applies */
      if (fd >= 0)
        outfile_temp_register (out->tmp);
      else
        g_clear_pointer (&out->tmp, g_free);
    }
  if (fd >= 0 && (out->f = fdopen (fd, "w")) == NULL)
    close (fd);
  if (out->f == NULL)
    {
      fail (error, errno, path);
      outfile_free (out);
      return NULL;
    }
  return out;
}

FILE *
outfile_stream (OutFile *out)
{
  return out->f;
}

gboolean
outfile_commit (OutFile *out, GError **error)
{
  /* Like g_file_set_contents: sync before replacing an existing file, so
   * a crash leaves the old contents or the new, never an empty file. */
  gboolean replaces = out->tmp != NULL
                      && g_file_test (out->target, G_FILE_TEST_EXISTS);
  gboolean ok = fflush (out->f) == 0 && (!replaces || fsync (fileno (out->f)) == 0);
  int saved_errno = errno;
  if (fclose (out->f) != 0 && ok)
    ok = FALSE, saved_errno = errno;
  if (ok && out->tmp != NULL)
    {
      if (g_rename (out->tmp, out->target) != 0)
        ok = FALSE, saved_errno = errno;
      else
        {
          outfile_temp_unregister (out->tmp);
          g_clear_pointer (&out->tmp, g_free);
        }
    }
  if (!ok)
    fail (error, saved_errno, out->path);
  outfile_free (out);
  return ok;
}

void
outfile_abort (OutFile *out)
{
  if (out == NULL)
    return;
  fclose (out->f);
  outfile_free (out);
}

gboolean
outfile_write (const char *path, const char *data, gsize len, GError **error)
{
  OutFile *out = outfile_open (path, error);
  if (out == NULL)
    return FALSE;
  if (len > 0 && fwrite (data, 1, len, out->f) != len)
    {
      fail (error, errno, path);
      outfile_abort (out);
      return FALSE;
    }
  return outfile_commit (out, error);
}

/* ---- removal on signals -------------------------------------------------- */

/* The handler may only read these: each slot's path is complete before
 * its flag is set and stays until the flag is cleared. */
static char temps[OUTFILE_MAX_TEMPS][4096];
static volatile sig_atomic_t temp_used[OUTFILE_MAX_TEMPS];
static GMutex temps_lock;

void
outfile_temp_register (const char *path)
{
  if (strlen (path) >= sizeof temps[0])
    return;
  g_mutex_lock (&temps_lock);
  for (int i = 0; i < OUTFILE_MAX_TEMPS; i++)
    if (!temp_used[i])
      {
        strcpy (temps[i], path);
        temp_used[i] = 1;
        break;
      }
  g_mutex_unlock (&temps_lock);
}

void
outfile_temp_unregister (const char *path)
{
  g_mutex_lock (&temps_lock);
  for (int i = 0; i < OUTFILE_MAX_TEMPS; i++)
    if (temp_used[i] && strcmp (temps[i], path) == 0)
      {
        temp_used[i] = 0;
        break;
      }
  g_mutex_unlock (&temps_lock);
}

/* outfile_set_interrupt_note's line, with its line break. */
static char *interrupt_note;

void
outfile_set_interrupt_note (const char *note)
{
  char *old = interrupt_note;
  interrupt_note = note ? g_strconcat (note, "\n", NULL) : NULL;
  g_free (old);
}

/* Async-signal-safe: unlink, erase the progress line, say what was kept,
 * then the default action of the signal. */
static void
on_signal (int sig)
{
  for (int i = 0; i < OUTFILE_MAX_TEMPS; i++)
    if (temp_used[i])
      unlink (temps[i]);
  progress_erase_from_signal ();
  if (interrupt_note != NULL && write (STDERR_FILENO, interrupt_note,
                                       strlen (interrupt_note)) < 0)
    interrupt_note = NULL;
  signal (sig, SIG_DFL);
  raise (sig);
}

void
outfile_install_signal_handlers (void)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  for (guint i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      struct sigaction old, sa;
      /* A signal the caller ignores (nohup's SIGHUP) stays ignored. */
      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = on_signal;
      sigemptyset (&sa.sa_mask);
      sigaction (sigs[i], &sa, NULL);
    }
}
