/* text.h: text from the input made safe to show a person.
 *
 * A name in an input file (a model's, a validation case's id, a CSV
 * column's) or a file's name may hold any bytes. Written raw to a
 * terminal, an escape (ESC, 8-bit CSI U+009B) drives it, a BEL rings it, a
 * line break splits a table row or forges a message line, and invalid
 * UTF-8 garbles what follows. Every human-readable output (the tables of
 * run, search, plan and validate, their summary lines, and the errors,
 * warnings and notes on stderr) shows such text through these functions:
 * each control character (C0, U+0000-U+001F, line breaks and tabs
 * included; DEL, U+007F; C1, U+0080-U+009F, C2 80-9F in UTF-8) and each
 * byte of invalid UTF-8 becomes one '?'. The result is valid UTF-8.
 *
 * A line of trainsim's may be shown whole (cli_printerr); a message or
 * a table that trainsim composes over several lines keeps its own line
 * breaks: the pieces in it from outside are shown where it is composed,
 * and text_shown_lines shows the whole as a last guard (cli_fail).
 * Machine formats (JSON, CSV) escape their text instead
 * (output/report.h): a name comes back from them byte for byte. */
#pragma once

#include <glib.h>

/* Appends TEXT to OUT, shown: one line, control characters and invalid
 * UTF-8 as '?'. TEXT may be NULL (nothing appended). */
void text_append_shown (GString *out, const char *text);
/* TEXT shown as by text_append_shown, newly allocated ("" for NULL). */
char *text_shown (const char *text);
/* The same, but a line break ('\n') stays one: for a whole message that
 * trainsim wrote over several lines, its pieces from the input shown with
 * text_shown already. */
char *text_shown_lines (const char *text);
