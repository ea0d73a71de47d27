/* input.h: reading a text input file (a YAML file, a plot's CSV) whole,
 * with a size cap, so that a hostile or mistaken input fails fast and
 * clearly instead of filling memory: /dev/zero, a binary file, a log of
 * gigabytes.
 *
 * A file is read by its length (no C-string truncation at a NUL byte);
 * a NUL byte is an error at its file:line:col, since a text input has
 * none and what follows it would otherwise be lost. */
#pragma once

#include <glib.h>

/* The cap on an input's size unless TRAINSIM_MAX_INPUT says otherwise:
 * the largest shipped input is a few KiB and a sweep of a million rows is
 * about 400 MB of CSV, so 64 MiB leaves room for every real YAML file and
 * for the CSVs that plot reads, and is read in a fraction of a second. */
#define INPUT_MAX_DEFAULT ((gsize) 64 * 1024 * 1024)

/* The cap on an input's size: the size in TRAINSIM_MAX_INPUT (with a
 * unit, such as 256MiB), else INPUT_MAX_DEFAULT. Fails with
 * TS_ERROR_USAGE when the variable is not a size. */
gboolean input_max_bytes (gsize *max, GError **error);

/* Reads the file PATH (a regular file, a pipe or a device; "-" is
 * standard input) into *TEXT
 * (owned, with a NUL after the LEN bytes) and *LEN. Fails with
 * TS_ERROR_INPUT, "cannot read PATH", when it cannot be opened (an input
 * that is not there, or not readable, is bad input: exit status 2 in every
 * command), TS_ERROR_IO when a read fails (a disk error: exit status 1),
 * and TS_ERROR_INPUT, "PATH:LINE:COL: ...", when it holds a NUL byte or goes on past the
 * cap (at the position where the cap is reached). Stops reading at the
 * first of these, so /dev/zero fails at once. */
gboolean input_read (const char *path, char **text, gsize *len,
                     GError **error);

/* The 1-based line and column of byte OFFSET of TEXT (LEN bytes), the
 * column counted in UTF-8 characters as libyaml counts them. */
void input_position (const char *text, gsize len, gsize offset, int *line,
                     int *col);
