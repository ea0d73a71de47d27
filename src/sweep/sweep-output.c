/* sweep-output.c: where the rows of a sweep go and how they are read back:
 * the output of a run (sweep-private.h: opened, locked, resumed, written,
 * closed), the checks that tell a sweep's rows from anything else, and
 * merge (sweep.h). It knows a sweep by its head (SweepHead) alone:
 * sweep.c makes the rows, this file keeps them.
 *
 * An output is an identity line, in CSV the header, then a row per point.
 * A CSV row is a record as RFC 4180 has it: a quoted cell may hold a line
 * break (a model's name can), so a row is a line or more, and a line
 * break ends a record only outside quotes. A JSON lines row is one line
 * (JSON escapes its line breaks). What resume and merge read, a line or a
 * record, is at most MAX_ROW_BYTES, and only from a regular file: they
 * must end, and in bounded memory, whatever they are given (/dev/zero
 * never ends and has no line break).
 *
 * One process writes an output at a time: a run locks its -o file from
 * its open to its close, and a second run on it is refused (lock_output).
 * --force writes a temporary file beside the -o file and renames it over
 * it at the end, so that the finished output it replaces stays whole
 * until there is a new one. */
#define _POSIX_C_SOURCE 200809L  /* fileno, fdopen, fseeko, ftruncate, O_CLOEXEC */

#include "sweep/sweep.h"
#include "sweep/sweep-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "base/errors.h"
#include "base/outfile.h"
#include "output/report.h"

/* ------------------------------------------------------------- identity */

/* The first line of every output of a sweep says which sweep and which
 * shard wrote its rows, so that --resume and merge can refuse rows of
 * other settings: in CSV a comment line (which gnuplot, R's comment.char
 * and pandas' comment= skip), in JSON lines an object of its own. */
#define IDENTITY_CSV "# trainsim-sweep settings=%s shard=%u/%u points=%" G_GUINT64_FORMAT "\n"
#define IDENTITY_JSONL "{\"trainsim_sweep\": {\"settings\": \"%s\", \"shard\": \"%u/%u\", " \
                       "\"points\": %" G_GUINT64_FORMAT "}}\n"
/* More than an identity line takes (some 150 bytes at most). */
#define IDENTITY_MAX 256

typedef struct {
  char settings[65];    /* hex SHA-256 */
  guint k, n;           /* shard K of N */
  guint64 points;       /* of the whole sweep */
} Identity;

static void
append_identity (GString *out, SweepFormat format, const char *settings, guint k,
                 guint n, guint64 points)
{
  g_string_append_printf (out, format == SWEEP_CSV ? IDENTITY_CSV : IDENTITY_JSONL,
                          settings, k, n, points);
}

/* Reads an identity line (LINE with its newline) in either format; FALSE
 * when LINE is none. The line must be exactly what append_identity writes. */
static gboolean
parse_identity (const char *line, Identity *id, SweepFormat *format)
{
  for (int f = SWEEP_CSV; f <= SWEEP_JSONL; f++)
    {
      int end = -1;
      guint64 points = 0;
      if (f == SWEEP_CSV)
        sscanf (line, "# trainsim-sweep settings=%64[0-9a-f] shard=%u/%u points=%"
                G_GUINT64_FORMAT "%n", id->settings, &id->k, &id->n, &points, &end);
      else
        sscanf (line, "{\"trainsim_sweep\": {\"settings\": \"%64[0-9a-f]\", \"shard\": "
                "\"%u/%u\", \"points\": %" G_GUINT64_FORMAT "}}%n", id->settings, &id->k,
                &id->n, &points, &end);
      if (end < 0 || strcmp (line + end, "\n") != 0)
        continue;
      id->points = points;
      g_autoptr (GString) again = g_string_new (NULL);
      append_identity (again, (SweepFormat) f, id->settings, id->k, id->n, id->points);
      if (strcmp (again->str, line) != 0 || id->k < 1 || id->k > id->n)
        return FALSE;
      *format = (SweepFormat) f;
      return TRUE;
    }
  return FALSE;
}

/* Rows of shard K (1-based) of N of a sweep of POINTS points: its points
 * are K-1, K-1+N, ... */
static guint64
shard_rows (guint k, guint n, guint64 points)
{
  return points >= k ? (points - k) / n + 1 : 0;
}

/* -------------------------------------------------------------- records */

/* A row of a sweep is a few hundred bytes; a longer "row" is not a
 * sweep's output (a binary file, a quote left open by hand), and must not
 * fill memory. */
#define MAX_ROW_BYTES (1 << 20)

/* A sweep's output, read a line or a record at a time. */
typedef struct {
  const char *path;
  FILE *f;              /* owned by whoever opened it */
  gboolean csv;         /* reads CSV records: a line break inside quotes
                         * does not end one; else lines */
  char *text;           /* the record read last, its final line break
                         * included, NUL-terminated; owned */
  size_t size;          /* allocated for text */
  size_t len;           /* of text */
  guint64 line;         /* the number of text's first line in the file */
  guint64 lines;        /* the line breaks read so far */
} Reader;

typedef enum {
  READ_RECORD,          /* text is a whole record */
  READ_END,             /* the file has no more */
  READ_PARTIAL,         /* text is what the file ends with, and no whole
                         * record: it lacks its final line break, or (CSV)
                         * ends inside quotes */
  READ_FAILED,          /* not the output of a sweep, or unreadable: ERROR
                         * is set */
} ReadResult;

/* Reads the next record of R. Quotes are paired, not parsed: an escaped
 * quote ("") opens and closes, and what stands between quotes is
 * csv_cells's to judge, once the record is whole. */
static ReadResult
reader_next (Reader *r, GError **error)
{
  gboolean quoted = FALSE;
  int c = EOF;

  r->len = 0;
  r->line = r->lines + 1;
  errno = 0;
  while ((c = getc (r->f)) != EOF)
    {
      if (c == '\0')
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s has a NUL byte: it is not "
                       "the output of a sweep", r->path);
          return READ_FAILED;
        }
      if (r->len == MAX_ROW_BYTES)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": a %s "
                       "over %d bytes: it is not the output of a sweep", r->path, r->line,
                       quoted ? "quoted cell" : "line", MAX_ROW_BYTES);
          return READ_FAILED;
        }
      if (r->len + 2 > r->size)
        {
          r->size = MAX (2 * r->size, 256);
          r->text = g_realloc (r->text, r->size);
        }
      r->text[r->len++] = (char) c;
      if (c == '"' && r->csv)
        quoted = !quoted;
      else if (c == '\n')
        {
          r->lines++;
          if (!quoted)
            break;
        }
    }
  if (c == EOF && ferror (r->f))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot read %s: %s", r->path,
                   g_strerror (errno));
      return READ_FAILED;
    }
  if (r->len == 0)
    return READ_END;
  r->text[r->len] = '\0';
  return c == '\n' ? READ_RECORD : READ_PARTIAL;
}

/* ----------------------------------------------------------------- rows */

/* The cells of the CSV record TEXT (its final line break included, as
 * report_append_csv_cell writes them: RFC 4180 quotes, a quoted cell
 * perhaps holding line breaks), or 0 when it is not one (a quote left
 * open or inside a bare cell, text after a closing quote, a line break
 * outside quotes before the end). */
static guint
csv_cells (const char *text)
{
  guint cells = 1;
  gboolean quoted = FALSE, start = TRUE;
  const char *p = text;
  for (; *p && (quoted || *p != '\n'); p++)
    {
      if (quoted)
        {
          if (*p == '"' && p[1] == '"')
            p++;
          else if (*p == '"')
            {
              quoted = FALSE;
              if (p[1] != ',' && p[1] != '\n' && p[1] != '\0')
                return 0;
            }
          continue;
        }
      if (*p == ',')
        cells++, start = TRUE;
      else if (*p == '"' && !start)
        return 0;
      else
        quoted = *p == '"', start = FALSE;
    }
  return quoted || strcmp (p, "\n") != 0 ? 0 : cells;
}

/* Whether LINE (its newline included) is a whole JSON object as a sweep
 * writes one: braces and brackets balanced, closing at the line's end,
 * strings closed, and outside them only JSON's punctuation, numbers and
 * literals. A structural check, not a parser: it tells a row from what an
 * interrupted write, a hand edit or another file left, which is what
 * resume and merge must not carry into their output. */
static gboolean
json_row (const char *line)
{
  int depth = 0;
  const char *p = line;
  if (*p != '{')
    return FALSE;
  for (; *p && *p != '\n'; p++)
    {
      if (*p == '"')
        {
          for (p++; *p && *p != '"' && *p != '\n'; p++)
            if (*p == '\\' && p[1] != '\0' && p[1] != '\n')
              p++;
          if (*p != '"')
            return FALSE;
        }
      else if (*p == '{' || *p == '[')
        depth++;
      else if (*p == '}' || *p == ']')
        {
          if (--depth == 0 && p[1] != '\n')
            return FALSE;
        }
      else if (!strchr (" \t,:-+.0123456789eEtruefalsn", *p))
        return FALSE;
      if (depth < 0)
        return FALSE;
    }
  return depth == 0 && strcmp (p, "\n") == 0;
}

/* What the rows of a sweep's output are checked against: its format and,
 * in CSV, its header line and that header's cells (counted once). */
typedef struct {
  SweepFormat format;
  const char *header;   /* NULL in JSON lines */
  guint cells;
} RowShape;

static RowShape
row_shape (SweepFormat format, const char *header)
{
  return (RowShape) { format, format == SWEEP_CSV ? header : NULL,
                      format == SWEEP_CSV ? csv_cells (header) : 0 };
}

/* Whether RECORD is a row of a sweep's output of SHAPE: not a line that
 * comes before the rows (an identity line, the header: what two outputs
 * joined leave, which would take a point's place), and a whole record, of
 * the header's cells in CSV. */
static gboolean
row_ok (const char *record, const RowShape *shape)
{
  Identity id;
  SweepFormat f;
  if (parse_identity (record, &id, &f)
      || (shape->header != NULL && strcmp (record, shape->header) == 0))
    return FALSE;
  return shape->format == SWEEP_CSV ? csv_cells (record) == shape->cells : json_row (record);
}

/* What a record that row_ok refuses in FORMAT is. */
static const char *
row_problem (SweepFormat format)
{
  return format == SWEEP_CSV
    ? "an identity line or the header again, cells that are not the header's, or a "
      "quote left open"
    : "an identity line again, or not a whole JSON object on its line";
}

/* ---------------------------------------------------------------- files */

/* Opens PATH to read, as a shard to merge (WHAT "cannot merge") or a
 * file looked at. Only a regular file is a sweep's output: a device
 * (/dev/zero) may never end, and a FIFO no one writes would hold the open
 * for ever, hence O_NONBLOCK, cleared once the file is known to be
 * regular. NULL, with ERROR set (TS_ERROR_INPUT), when it cannot be read
 * or is not a regular file. */
static FILE *
open_regular (const char *path, const char *what, GError **error)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), flags;
  struct stat st;
  FILE *f;

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot read %s: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s %s: it is not a regular file "
                   "(the output of a sweep is one)", what, path);
      return NULL;
    }
  if ((flags = fcntl (fd, F_GETFL)) >= 0)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  if (!(f = fdopen (fd, "rb")))
    {
      int saved = errno;
      close (fd);
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot read %s: %s", path,
                   g_strerror (saved));
    }
  return f;
}

/* A -o file that is replaced between our open and our lock, again and
 * again, is given up on: it takes a --force run finishing each time. */
#define LOCK_TRIES 8

/* Opens PATH, the -o file of a run, a regular file or none yet (then
 * made, empty), to read and write, and locks it for the run; -1 with
 * ERROR set when it cannot. Two sweeps on one file would each write what
 * the other does (a --resume reads the rows so far and appends the rest,
 * while the first run appends them too), so a file another process holds
 * locked is refused at once (TS_ERROR_USAGE), not waited for.
 *
 * The lock is fcntl's, an exclusive one on the whole file, released when
 * the descriptor is closed, by the run's end or its death. fcntl rather
 * than flock: it is POSIX (flock is not, under this file's feature
 * macros) and network file systems honour it. Its catch: a process drops
 * its lock when it closes any descriptor of the file, so the run keeps
 * this one, and opens the file by no other, until its close. A file
 * system without locks runs the sweep unlocked, as before locks were
 * taken, rather than refusing it.
 *
 * The file locked must be the one PATH names: a --force run renames its
 * new output over PATH, then closes (unlocks) the file it replaced. A
 * process that opened that file before the rename and locks it after the
 * close holds a file no longer at PATH: it opens PATH again. */
static int
lock_output (const char *path, GError **error)
{
  for (int tries = 0; tries < LOCK_TRIES; tries++)
    {
      struct flock lock = { 0 };
      struct stat st, now;
      int fd = open (path, O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
      int flags, saved;

      if (fd < 0 || fstat (fd, &st) != 0)
        goto io_error;
      /* Regular or new when open_file looked at it, yet replaced
       * by something else since. */
      if (!S_ISREG (st.st_mode))
        {
          close (fd);
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s is no longer a regular file: "
                       "something else is writing there", path);
          return -1;
        }
      lock.l_type = F_WRLCK;
      lock.l_whence = SEEK_SET;   /* l_start 0, l_len 0: the whole file */
      if (fcntl (fd, F_SETLK, &lock) != 0)
        {
          saved = errno;
          if (saved == EACCES || saved == EAGAIN)
            {
              close (fd);
              g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "another trainsim sweep is "
                           "writing %s: wait for it to end, or write elsewhere", path);
              return -1;
            }
          if (saved != ENOLCK && saved != EINVAL && saved != EOPNOTSUPP)
            {
              errno = saved;
              goto io_error;
            }
        }
      if (stat (path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
        {
          if ((flags = fcntl (fd, F_GETFL)) >= 0)
            fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
          return fd;
        }
      close (fd);
      continue;

    io_error:
      saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", path,
                   g_strerror (saved));
      return -1;
    }
  g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: it was replaced while it "
               "was opened, %d times over", path, LOCK_TRIES);
  return -1;
}

/* --------------------------------------------------------------- resume */

/* Prepares F, the -o file PATH (open to read and write, locked), for the
 * rest of a sweep whose output starts with START: its identity line and,
 * in CSV, the header, LINES lines in FORMAT.
 *
 * First the file's first bytes, as many as START has and one more: a
 * file that does not start as START is refused (TS_ERROR_INPUT) before
 * anything else of it is read, however long it is. Then its records, a
 * row each (anything else is refused at its first line: a hand edit or
 * another file's lines would end up in the finished output), up to the
 * last whole one: what follows is what an interrupted write leaves of a
 * row, a partial line or a record cut inside a quoted line break, and is
 * cut away. (A quote opened by hand, never closed, would make the rest
 * of the file such a tail: cut too, and its points run again, so the
 * output still comes out as the sweep's.)
 *
 * *ROWS: the rows kept. *EMPTY: not even START is kept: the file is
 * empty, or holds the start of START alone (a write interrupted before
 * the rows), and is emptied to start over. The position of F is left
 * anywhere. */
static gboolean
resume_prepare (FILE *f, const char *path, const char *start, guint lines,
                SweepFormat format, guint64 *rows, gboolean *empty, GError **error)
{
  size_t want = strlen (start);
  g_autofree char *first = g_malloc (want + 2);
  size_t got = fread (first, 1, want + 1, f);
  GError *local = NULL;

  *rows = 0;
  *empty = TRUE;
  first[got] = '\0';
  if (ferror (f))
    goto io_error;
  if (got < want && memcmp (first, start, got) == 0)
    {
      if (got > 0 && (fflush (f) != 0 || ftruncate (fileno (f), 0) != 0))
        goto io_error;
      return TRUE;
    }
  *empty = FALSE;
  if (got < want || memcmp (first, start, want) != 0)
    {
      Identity want_id, got_id;
      SweepFormat wf, gf;
      g_autofree char *line = g_strndup (first, strcspn (first, "\n") + 1);
      g_autofree char *own = g_strndup (start, strcspn (start, "\n") + 1);
      g_assert (parse_identity (own, &want_id, &wf));
      const char *why = !parse_identity (line, &got_id, &gf)
        ? "it does not start as a sweep's output does (a file written before trainsim "
          "marked its sweeps, or not a sweep's output)"
        : gf != wf ? "its rows are in the other --format"
        : strcmp (got_id.settings, want_id.settings) != 0
          ? "its rows come from other settings (another experiment, --set or axes)"
        : got_id.k != want_id.k || got_id.n != want_id.n
          ? "it is the output of another --shard"
        : "its header is not this sweep's";
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot resume %s: %s; leave out "
                   "--resume (and give --force) to start it over", path, why);
      return FALSE;
    }

  Reader reader = { .path = path, .f = f, .csv = format == SWEEP_CSV, .lines = lines };
  RowShape shape = row_shape (format, strchr (start, '\n') + 1);
  off_t complete = (off_t) want;
  ReadResult read = READ_FAILED;
  if (fseeko (f, complete, SEEK_SET) != 0)
    goto io_error;
  while ((read = reader_next (&reader, &local)) == READ_RECORD)
    {
      if (!row_ok (reader.text, &shape))
        {
          g_set_error (&local, TS_ERROR, TS_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": not "
                       "a row of a sweep (%s)", path, reader.line, row_problem (format));
          read = READ_FAILED;
          break;
        }
      complete += (off_t) reader.len;
      (*rows)++;
    }
  g_free (reader.text);
  if (read == READ_FAILED)
    {
      g_set_error (error, local->domain, local->code, "cannot resume %s; leave out "
                   "--resume (and give --force) to start it over", local->message);
      g_error_free (local);
      return FALSE;
    }
  if (read == READ_PARTIAL && (fflush (f) != 0 || ftruncate (fileno (f), complete) != 0))
    goto io_error;
  return TRUE;

io_error:
  g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot resume %s: %s", path,
               g_strerror (errno));
  return FALSE;
}

/* --------------------------------------------------------------- output */

static gboolean
write_out (FILE *out, const char *name, const GString *text, GError **error)
{
  if ((text->len == 0 || fwrite (text->str, 1, text->len, out) == text->len)
      && fflush (out) == 0)
    return TRUE;
  g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", name,
               g_strerror (errno));
  return FALSE;
}

/* Opens OUTPUT's -o file, OPTIONS's (see sweep_output_start), whose
 * sweep starts with START; leaves nothing open when it fails. *EMPTY:
 * START is still to be written. */
static gboolean
open_file (SweepOutput *output, const SweepOptions *o, const char *start,
           gboolean *empty, GError **error)
{
  const char *path = o->output;
  GStatBuf st;
  struct stat now;
  FILE *f = NULL;
  int fd, saved;

  /* A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written
   * in place, unlocked: it keeps no rows to lose, and a lock on /dev/null
   * would refuse every other sweep written there. Nor has it rows to
   * resume; /dev/zero would be read for ever. */
  if (g_stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      if (o->resume)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "cannot resume %s: it is not a "
                       "regular file (the output of a sweep is one)", path);
          return FALSE;
        }
      if (!(output->out = fopen (path, "wb")))
        {
          g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", path,
                       g_strerror (errno));
          return FALSE;
        }
      return TRUE;
    }

  if ((fd = lock_output (path, error)) < 0)
    return FALSE;
  if (fstat (fd, &now) != 0)
    goto io_error;
  if (o->resume)
    {
      /* Read, cut and appended to through the one descriptor that holds
       * the lock. */
      if (!(f = fdopen (fd, "r+b")))
        goto io_error;
      if (!resume_prepare (f, path, start, o->format == SWEEP_CSV ? 2 : 1, o->format,
                           &output->resumed, empty, error))
        {
          fclose (f);
          return FALSE;
        }
      if (fseeko (f, 0, SEEK_END) != 0)
        goto io_error;
      output->out = f;
      return TRUE;
    }
  /* Rows are written as they finish: a file that holds some already is
   * replaced only when asked, so a slip of -o never costs a finished
   * sweep. */
  if (now.st_size > 0 && !o->force)
    {
      close (fd);
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "%s exists: give --resume to run "
                   "the points it lacks, or --force to replace it", path);
      return FALSE;
    }
  if (now.st_size > 0)
    {
      /* --force: the rows go to a temporary file beside the -o file
       * (outfile.h), renamed over it by a close that is OK, and removed
       * by one that is not, or by SIGINT, SIGTERM or SIGHUP; a SIGKILL
       * leaves it, holding the rows done, as .NAME.XXXXXX. The -o file
       * stays as it was until then, and locked (lock_fd): a sweep that
       * comes meanwhile is refused, one after the rename finds the new
       * file. The lock is released after the rename, never before: a
       * --resume could otherwise append to the old file just before it
       * is replaced. */
      GError *local = NULL;
      if (!(output->replacing = outfile_open (path, &local)))
        {
          close (fd);
          g_set_error_literal (error, TS_ERROR, TS_ERROR_IO, local->message);
          g_error_free (local);
          return FALSE;
        }
      output->out = outfile_stream (output->replacing);
      output->lock_fd = fd;
      return TRUE;
    }
  if (!(f = fdopen (fd, "wb")))
    goto io_error;
  output->out = f;
  return TRUE;

io_error:
  saved = errno;
  if (f != NULL)
    fclose (f);
  else
    close (fd);
  g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", path,
               g_strerror (saved));
  return FALSE;
}

gboolean
sweep_output_start (SweepOutput *output, const SweepHead *head, const SweepOptions *o,
                    GError **error)
{
  g_autoptr (GString) start = g_string_new (NULL);
  gboolean empty = TRUE;

  g_return_val_if_fail (o->shard_k >= 1 && o->shard_k <= o->shard_n, FALSE);
  *output = (SweepOutput) { .out = stdout, .lock_fd = -1,
                            .name = o->output ? o->output : "standard output" };
  output->end = shard_rows (o->shard_k, o->shard_n, head->points);
  append_identity (start, o->format, head->settings, o->shard_k, o->shard_n, head->points);
  if (o->format == SWEEP_CSV)
    g_string_append (start, head->header);

  if (o->output != NULL && !open_file (output, o, start->str, &empty, error))
    return FALSE;
  /* The rate counts the points run now, not those resumed. */
  progress_init (&output->progress, "points", output->end, output->resumed);
  if (output->resumed > output->end)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s has %" G_GUINT64_FORMAT " rows, "
                   "more than the %" G_GUINT64_FORMAT " points of this sweep%s: it is not "
                   "this sweep's output", o->output, output->resumed, output->end,
                   o->shard_n > 1 ? " shard" : "");
      sweep_output_close (output, FALSE, NULL);
      return FALSE;
    }
  if (empty && !write_out (output->out, output->name, start, error))
    {
      sweep_output_close (output, FALSE, NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
sweep_output_write (SweepOutput *output, const GString *rows, guint64 next,
                    GError **error)
{
  gboolean ok = write_out (output->out, output->name, rows, error);

  progress_draw (&output->progress, next, NULL);
  return ok;
}

gboolean
sweep_output_close (SweepOutput *output, gboolean ok, GError **error)
{
  progress_clear (&output->progress);
  if (output->replacing != NULL)
    {
      GError *local = NULL;
      OutFile *file = g_steal_pointer (&output->replacing);
      if (!ok)
        outfile_abort (file);
      else if (!outfile_commit (file, &local))
        {
          g_set_error_literal (error, TS_ERROR, TS_ERROR_IO, local->message);
          g_error_free (local);
          ok = FALSE;
        }
    }
  else if (output->out != NULL && output->out != stdout && fclose (output->out) != 0 && ok)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", output->name,
                   g_strerror (errno));
      ok = FALSE;
    }
  /* After the rename: see open_file. */
  if (output->lock_fd >= 0)
    close (output->lock_fd);
  output->lock_fd = -1;
  output->out = NULL;
  return ok;
}

/* ---------------------------------------------------------------- merge */

/* The next record of the shard R, for merge: TRUE for a whole one; FALSE
 * at the end, ERROR unset, or with ERROR set on what is none. */
static gboolean
merge_next (Reader *r, GError **error)
{
  switch (reader_next (r, error))
    {
    case READ_RECORD:
      return TRUE;
    case READ_END:
    case READ_FAILED:
      return FALSE;
    case READ_PARTIAL:
      break;
    }
  if (r->text[r->len - 1] != '\n')
    g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s ends in a partial row: its sweep "
                 "was interrupted; finish it with trainsim sweep --resume and the same "
                 "--shard", r->path);
  else
    /* Ends in a line break, yet inside quotes: a quote opened by hand, or
     * a write cut just after a quoted line break. */
    g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": not a row "
                 "of a sweep (a quote left open to the end of the file): a hand edit, or "
                 "an interrupted sweep (finish it with trainsim sweep --resume and the "
                 "same --shard)", r->path, r->line);
  return FALSE;
}

/* Writes the rows of SHARDS interleaved, round j taking row j of each
 * shard in turn, as the unsharded sweep would have written them; each
 * shard must have exactly the rows its identity (ID) says, each a row of
 * SHAPE. */
static gboolean
merge_rows (Reader *shards, guint n, const Identity *id, const RowShape *shape,
            FILE *out, const char *name, GError **error)
{
  g_autofree guint64 *rows = g_new0 (guint64, n);
  for (guint done = 0; done < n;)
    {
      done = 0;
      for (guint k = 0; k < n; k++)
        {
          GError *local = NULL;
          guint64 want = shard_rows (k + 1, n, id->points);
          if (!merge_next (&shards[k], &local))
            {
              if (local != NULL)
                {
                  g_propagate_error (error, local);
                  return FALSE;
                }
              if (rows[k] < want)
                {
                  g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s has %" G_GUINT64_FORMAT
                               " rows of the %" G_GUINT64_FORMAT " of shard %u/%u: its sweep "
                               "was interrupted; finish it with trainsim sweep --resume and "
                               "the same --shard", shards[k].path, rows[k], want, k + 1, n);
                  return FALSE;
                }
              done++;
              continue;
            }
          if (!row_ok (shards[k].text, shape))
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": not "
                           "a row of a sweep (%s): it is not that shard's output as its "
                           "sweep wrote it", shards[k].path, shards[k].line,
                           row_problem (shape->format));
              return FALSE;
            }
          if (++rows[k] > want)
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s has more than the %"
                           G_GUINT64_FORMAT " rows of shard %u/%u of a sweep of %"
                           G_GUINT64_FORMAT " points: it is not that shard's output",
                           shards[k].path, want, k + 1, n, id->points);
              return FALSE;
            }
          if (fwrite (shards[k].text, 1, shards[k].len, out) != shards[k].len)
            {
              g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", name,
                           g_strerror (errno));
              return FALSE;
            }
        }
    }
  return TRUE;
}

static gboolean
write_failed (const char *name, GError **error)
{
  g_set_error (error, TS_ERROR, TS_ERROR_IO, "cannot write %s: %s", name,
               g_strerror (errno));
  return FALSE;
}

/* Opens the shards and reads the lines before their rows: the identity
 * line, whose settings, shard count and points must agree and whose shard
 * numbers must be 1 .. N in the order given, and in CSV the header, the
 * same in each. *ID: the first shard's identity; *FORMAT: theirs. */
static gboolean
merge_open (Reader *shards, guint n, Identity *id, SweepFormat *format, GError **error)
{
  g_autofree char *header = NULL;
  for (guint k = 0; k < n; k++)
    {
      GError *local = NULL;
      Identity got;
      SweepFormat f;

      if (!(shards[k].f = open_regular (shards[k].path, "cannot merge", error)))
        return FALSE;
      if (!merge_next (&shards[k], &local))
        {
          if (local == NULL)
            g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s is empty: it is not the "
                         "output of a sweep", shards[k].path);
          else
            g_propagate_error (error, local);
          return FALSE;
        }
      if (!parse_identity (shards[k].text, &got, &f))
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s does not start as a sweep's "
                       "output does (its first line says which sweep and shard wrote it)",
                       shards[k].path);
          return FALSE;
        }
      if (k == 0)
        {
          *id = got;
          *format = f;
        }
      const char *why = f != *format ? "is in another --format than"
        : strcmp (got.settings, id->settings) != 0 || got.points != id->points
          ? "comes from other settings (another experiment, --set or axes) than"
        : got.n != id->n ? "is a shard of another --shard count than" : NULL;
      if (why != NULL)
        {
          g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s %s %s: merge joins the shards "
                       "of one sweep", shards[k].path, why, shards[0].path);
          return FALSE;
        }
      if (got.k != k + 1)
        {
          guint seen = 0;
          for (guint j = 0; j < k; j++)
            if (j + 1 == got.k)
              seen = j + 1;
          if (seen > 0)
            g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s and %s are both shard %u/%u: "
                         "give each shard once, 1/%u ... %u/%u in order", shards[seen - 1].path,
                         shards[k].path, got.k, got.n, got.n, got.n, got.n);
          else
            g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s is shard %u/%u, given in place "
                         "%u: give the shards in order, 1/%u ... %u/%u", shards[k].path,
                         got.k, got.n, k + 1, got.n, got.n, got.n);
          return FALSE;
        }
      /* The identity is a line; what follows is records of the format. */
      shards[k].csv = *format == SWEEP_CSV;
      if (*format == SWEEP_CSV)
        {
          if (!merge_next (&shards[k], &local))
            {
              if (local == NULL)
                g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s has no header", shards[k].path);
              else
                g_propagate_error (error, local);
              return FALSE;
            }
          if (k == 0)
            header = g_strdup (shards[0].text);
          else if (strcmp (shards[k].text, header) != 0)
            {
              g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%s: its header is not %s's: "
                           "the shards of one sweep have the same columns", shards[k].path,
                           shards[0].path);
              return FALSE;
            }
        }
    }
  if (n != id->n)
    {
      g_set_error (error, TS_ERROR, TS_ERROR_INPUT, "%u shards given, and %s is one of %u: "
                   "merge needs every shard, 1/%u ... %u/%u in order", n, shards[0].path,
                   id->n, id->n, id->n, id->n);
      return FALSE;
    }
  return TRUE;
}

/* PATH exists and is a sweep's output, of this sweep or another: a shard
 * itself, or an earlier merge (a shard named first, OUT left out). Only a
 * regular file can be, and its first line tells, read up to IDENTITY_MAX
 * bytes: /dev/zero, named as OUT, is written to, not read for ever. */
static gboolean
looks_like_output (const char *path)
{
  FILE *f = open_regular (path, "", NULL);
  char line[IDENTITY_MAX];
  Identity got;
  SweepFormat format;

  if (f == NULL)
    return FALSE;
  gboolean read = fgets (line, sizeof line, f) != NULL;
  fclose (f);
  return read && parse_identity (line, &got, &format);
}

gboolean
sweep_merge (const char *output, const char *const *inputs, guint n, gboolean replace,
             GError **error)
{
  g_autofree Reader *shards = g_new0 (Reader, n);
  gboolean to_stdout = strcmp (output, "-") == 0, ok = FALSE;
  OutFile *file = NULL;    /* the output, unless standard output */
  FILE *out = stdout;
  Identity id;
  SweepFormat format = SWEEP_CSV;
  g_autoptr (GString) start = g_string_new (NULL);
  g_autofree char *header = NULL;   /* in CSV, the shards' */

  g_return_val_if_fail (n >= 1, FALSE);
  for (guint k = 0; k < n; k++)
    {
      shards[k].path = inputs[k];
      if (!to_stdout && report_same_file (output, inputs[k]))
        {
          g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "the output %s is also a shard to "
                       "merge: name a new file first, as in trainsim merge OUT SHARD...",
                       output);
          return FALSE;
        }
    }
  if (!merge_open (shards, n, &id, &format, error))
    goto done;
  if (!replace && !to_stdout && looks_like_output (output))
    {
      g_set_error (error, TS_ERROR, TS_ERROR_USAGE, "%s exists and looks like a sweep's "
                   "shard or merge: name a new output first (trainsim merge OUT "
                   "SHARD...), or give it with -o to replace it", output);
      goto done;
    }
  /* Written as every output is (base/outfile.h): whole or not at all. */
  if (!to_stdout)
    {
      GError *local = NULL;
      if ((file = outfile_open (output, &local)) == NULL)
        {
          g_set_error_literal (error, TS_ERROR, TS_ERROR_IO, local->message);
          g_error_free (local);
          goto done;
        }
      out = outfile_stream (file);
    }
  /* What the unsharded sweep starts with: its identity as shard 1/1, and
   * the header (merge_open left the first shard's in its buffer). */
  append_identity (start, format, id.settings, 1, 1, id.points);
  if (format == SWEEP_CSV)
    g_string_append (start, shards[0].text);
  if (fwrite (start->str, 1, start->len, out) != start->len)
    {
      write_failed (output, error);
      goto done;
    }
  /* The header stays in shards[0].text only until its first row. */
  if (format == SWEEP_CSV)
    header = g_strdup (shards[0].text);
  RowShape shape = row_shape (format, header);
  if (!merge_rows (shards, n, &id, &shape, out, output, error))
    goto done;
  if (file != NULL)
    {
      GError *local = NULL;
      OutFile *done_file = g_steal_pointer (&file);
      if (!outfile_commit (done_file, &local))
        {
          g_set_error_literal (error, TS_ERROR, TS_ERROR_IO, local->message);
          g_error_free (local);
          goto done;
        }
    }
  else if (fflush (out) != 0)
    {
      write_failed (output, error);
      goto done;
    }
  ok = TRUE;

done:
  outfile_abort (file);
  for (guint k = 0; k < n; k++)
    {
      if (shards[k].f != NULL)
        fclose (shards[k].f);
      g_free (shards[k].text);
    }
  return ok;
}
