/* progress.c: see progress.h. */
#include "base/progress.h"
#include "base/text.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A label is cut to this many characters, so that the line fits 80
 * columns. */
#define LABEL_MAX 24
/* The items, and the seconds, before the time left is shown (progress.h). */
#define PROGRESS_ETA_ITEMS 10
#define PROGRESS_ETA_SECONDS 1.0

/* The width of the line on screen, for a signal handler to erase it. */
static volatile sig_atomic_t on_screen;

void
progress_init (Progress *p, const char *unit, guint64 total, guint64 skipped)
{
  *p = (Progress) { isatty (STDERR_FILENO), unit, total, skipped,
                    g_get_monotonic_time (), 0, 0 };
}

void
progress_draw (Progress *p, guint64 done, const char *label)
{
  gint64 now = g_get_monotonic_time ();
  if (!p->on || now < p->redraw_at)
    return;
  p->redraw_at = now + G_TIME_SPAN_SECOND / 5;
  double elapsed = (now - p->start_us) / 1e6;
  double rate = elapsed > 0 && done > p->skipped
                ? (done - p->skipped) / elapsed : 0;
  int filled = p->total ? (int) (20 * MIN (done, p->total) / p->total) : 20;
  char bar[21], left[32] = "";
  memset (bar, '#', (gsize) filled);
  memset (bar + filled, '.', (gsize) (20 - filled));
  bar[20] = '\0';
  if (rate > 0 && done < p->total && done - p->skipped >= PROGRESS_ETA_ITEMS
      && elapsed >= PROGRESS_ETA_SECONDS)
    {
      gint64 s = (gint64) ((p->total - done) / rate + 0.5);
      if (s < 60)
        g_snprintf (left, sizeof left, ", %d s left", (int) s);
      else if (s < 3600)
        g_snprintf (left, sizeof left, ", %dm %02ds left", (int) (s / 60),
                    (int) (s % 60));
      else
        g_snprintf (left, sizeof left, ", %dh %02dm left", (int) (s / 3600),
                    (int) (s / 60 % 60));
    }
  /* The label is the input's (a case's id): shown (base/text.h), and cut
   * at a whole character. */
  g_autofree char *shown = text_shown (label);
  if (g_utf8_strlen (shown, -1) > LABEL_MAX)
    *g_utf8_offset_to_pointer (shown, LABEL_MAX) = '\0';
  g_autofree char *line = g_strdup_printf (
    "[%s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " %s, %.1f/s%s%s%s",
    bar, done, p->total, p->unit, rate, left, label ? "  " : "", shown);
  int width = (int) strlen (line);
  /* Spaces over what is left of a longer line before. */
  fprintf (stderr, "\r%s%*s", line, MAX (p->width - width, 0), "");
  fflush (stderr);
  p->width = width;
  on_screen = MAX (width, on_screen);
}

void
progress_clear (Progress *p)
{
  if (p->on && p->width > 0)
    fprintf (stderr, "\r%*s\r", p->width, "");
  p->width = 0;
  on_screen = 0;
}

void
progress_erase_from_signal (void)
{
  static const char blanks[] = "                                                                ";
  int n = on_screen;

  if (n <= 0)
    return;
  if (write (STDERR_FILENO, "\r", 1) < 0)
    return;
  for (; n > 0; n -= (int) sizeof blanks - 1)
    if (write (STDERR_FILENO, blanks, (size_t) MIN (n, (int) sizeof blanks - 1)) < 0)
      return;
  if (write (STDERR_FILENO, "\r", 1) < 0)
    return;
}
