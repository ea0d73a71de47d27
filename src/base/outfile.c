/* outfile.c: atomic, write-through result files; see outfile.h. */
#define _POSIX_C_SOURCE 200809L  /* sigaction, fsync, lstat */
#include "base/outfile.h"

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
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
               "cannot write %s: %s", path, g_strerror (saved_errno));
  return FALSE;
}

/* Writes all of data to fd; FALSE with errno set on failure. */
static gboolean
write_all (int fd, const char *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;
          return FALSE;
        }
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

gboolean
outfile_write (const char *path, const char *data, gsize len, GError **error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  gboolean in_place;
  g_autofree char *target = outfile_target (path, &in_place);
  if (in_place)
    {
      int fd = g_open (target, O_WRONLY | O_NOCTTY, 0);
      if (fd < 0)
        return fail (error, errno, path);
      gboolean ok = write_all (fd, data, len);
      int saved_errno = errno;
      if (close (fd) != 0 && ok)
        ok = FALSE, saved_errno = errno;
      return ok || fail (error, saved_errno, path);
    }

  g_autofree char *dir = g_path_get_dirname (target);
  g_autofree char *base = g_path_get_basename (target);
  g_autofree char *tmp_name = g_strdup_printf (".%s.XXXXXX", base);
  g_autofree char *tmp = g_build_filename (dir, tmp_name, NULL);
  int fd = g_mkstemp_full (tmp, O_WRONLY, 0666);    /* the umask applies */
  if (fd < 0)
    return fail (error, errno, path);
  outfile_temp_register (tmp);
  /* Like g_file_set_contents: sync before replacing an existing file, so
   * a crash leaves the old contents or the new, never an empty file. */
  gboolean exists = g_file_test (target, G_FILE_TEST_EXISTS);
  gboolean ok = write_all (fd, data, len) && (!exists || fsync (fd) == 0);
  int saved_errno = errno;
  if (close (fd) != 0 && ok)
    ok = FALSE, saved_errno = errno;
  if (ok && g_rename (tmp, target) != 0)
    ok = FALSE, saved_errno = errno;
  if (!ok)
    g_unlink (tmp);
  outfile_temp_unregister (tmp);
  return ok || fail (error, saved_errno, path);
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

/* Async-signal-safe: unlink, then the default action of the signal. */
static void
on_signal (int sig)
{
  for (int i = 0; i < OUTFILE_MAX_TEMPS; i++)
    if (temp_used[i])
      unlink (temps[i]);
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
