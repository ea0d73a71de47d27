/* report.h: one simulated step as a table, a JSON object or a CSV row.
 *
 * The JSON field names and their order are a contract, documented in
 * trainsim(1), OUTPUT (doc/trainsim.1) and README, "What it prints"; the
 * CSV columns are the same names, nested objects flattened
 * with '.' (breakdown_s.compute, memory.weights_gib). Numbers are written
 * with g_ascii_* so the bytes do not depend on the locale, and identical
 * results give identical bytes. */
#pragma once

#include <glib.h>
#include "parallel/result.h"

/* The writers, in the order of report_format_names(). */
typedef enum {
  REPORT_TABLE,
  REPORT_JSON,
  REPORT_CSV,
  REPORT_N
} ReportFormat;

/* The format called @name ("table", "json" or "csv"), or -1 if unknown. */
int report_format_parse (const char *name);

/* The known names, for an error message: "table, json or csv". */
const char *report_format_names (void);

/* Appends one result to @out.
 *   REPORT_TABLE: a readable table, lines of at most 100 columns, headed
 *                 "trainsim: @title, N GPUs" (@title may be NULL);
 *   REPORT_JSON:  one object on one line, then "\n"; non-finite numbers are
 *                 null; days_to_train and cost_usd only when has_training;
 *   REPORT_CSV:   the header line, then one row. */
void report_append (GString *out, const SimResult *r, ReportFormat format,
                    const char *title);

/* Multi-row CSV (sweeps, validation): the header once, then a row per
 * result. Every row has the header's columns: a number that is not finite,
 * and days_to_train and cost_usd without has_training, are empty cells. */
/* The CSV header and a row, without the top-level columns named in SKIP
 * (NULL-terminated, or NULL for none): a sweep's axes, already columns. */
void report_append_csv_header (GString *out, const char *const *skip);
void report_append_csv_row (GString *out, const SimResult *r,
                            const char *const *skip);

/* The members of REPORT_JSON's object, without its braces, for a writer
 * that puts members of its own before them (a sweep's rows). Top-level
 * members named in @skip (NULL-terminated, or NULL) are left out: a
 * swept key such as "gpus" already holds them. */
/* The parts of a step's time breakdown, which add up to it, in order and
 * as the tables name them: OFFSET is the part's in Breakdown. */
typedef struct {
  const char *name;
  gsize offset;
} ReportPart;
#define REPORT_BREAKDOWN_PARTS 12
extern const ReportPart report_breakdown_parts[REPORT_BREAKDOWN_PARTS];

void report_append_json_members (GString *out, const SimResult *r,
                                 const char *const *skip);

/* Appends @v in the C locale with the fewest significant digits that
 * read back as the same double; FALSE, appending nothing, when @v is not
 * finite (JSON has no NaN). */
gboolean report_append_number (GString *out, double v);

/* For tables: V with FMT (one double conversion, such as "%.1f") in the C
 * locale, or "n/a"; from a quadrillion on in exponent form, as a hostile
 * input's 1e50 would overrun the buffer (and print wrong digits) in fixed
 * form. Owned by the caller. */
char *report_fmt_num (const char *fmt, double v);
/* For tables: "97.9k", "1.23M" (about three significant digits and an
 * SI prefix), and "$1,234,567". Owned by the caller. */
char *report_fmt_si (double v);
char *report_fmt_usd (double usd);
/* For tables: parameters and tokens, "126M", "12.9B", "3.49T" (three
 * significant digits). Owned by the caller. */
char *report_fmt_count (double n);

/* Appends @s as a JSON string literal, escaped; invalid UTF-8 is repaired
 * first (one bad byte makes a reader reject the whole document). */
void report_append_json_string (GString *out, const char *s);
/* A CSV cell, quoted (RFC 4180) when it holds a separator, a quote, a
 * line break, or spaces at an end that a reader might trim, or starts
 * with '#': a row that starts so would read as a comment (sweep's own
 * first line is one; gnuplot and pandas' comment='#' skip such rows);
 * or when it is text that starts as a spreadsheet formula does ('=', '+',
 * '-', '@', a tab), such as a case id "=HYPERLINK(...)": quoted, a
 * reader that honours quotes takes it as text. A number ("-3", "+1e-5")
 * stays bare, and reads as one. The text itself is kept as given. */
void report_append_csv_cell (GString *out, const char *text);

/* Whether @a and @b name the same file (by device and inode when both
 * exist): an output must never be written over an input. */
gboolean report_same_file (const char *a, const char *b);

/* Writes @contents to @path as outfile_write does (atomically, through a
 * link, in place on a device or FIFO), or to stdout when @path is NULL or
 * "-". Fails with a G_FILE_ERROR. */
gboolean report_write (const char *path, const GString *contents,
                       GError **error);
