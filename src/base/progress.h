/* progress.h: the one progress line that sweep, search and validate draw
 * on stderr while they work, when stderr is a terminal:
 *
 *   [#####...............] 512/2048 points, 85.3/s, 18 s left  gpt3-tp8
 *
 * Drawn at most five times a second, so a fast loop may call it per item;
 * nothing is drawn when stderr is not a terminal, so logs stay clean.
 * The time left is shown only once PROGRESS_ETA_ITEMS items and a second
 * have passed: a rate taken from the first few items (which include
 * starting the threads) misled by a factor of 20. */
#pragma once

#include <glib.h>

typedef struct {
  gboolean on;          /* stderr is a terminal */
  const char *unit;     /* "points", "plans", "cases" (not owned) */
  guint64 total;
  guint64 skipped;      /* done before the start (resumed): not in the rate */
  gint64 start_us;
  gint64 redraw_at;     /* monotonic time of the next line */
  int width;            /* of the line on screen, to overwrite it */
} Progress;

void progress_init (Progress *p, const char *unit, guint64 total,
                    guint64 skipped);
/* DONE of the total are finished; LABEL (or NULL) names the current item. */
void progress_draw (Progress *p, guint64 done, const char *label);
/* Erases the line, before the results or an error are printed. */
void progress_clear (Progress *p);
/* Erases the line on screen, if any, from a signal handler
 * (async-signal-safe: write(2) only), before an interrupt's message. */
void progress_erase_from_signal (void);
