/* plot-table.h: trainsim's one CSV reader, for what reads a table outside
 * `trainsim plot` too (`trainsim calibrate`'s measurements): reading a
 * file of measurements, and the look-ups on a row and a column that say
 * where a bad cell is.
 *
 * The table itself, PlotTable, with plot_table_parse() (a sweep's CSV, as
 * `trainsim plot` reads it) and plot_table_free(), is declared in plot.h,
 * included here. What only the figure needs (the suffix look-up of a
 * column, the --where filter's helpers, the layout) stays in
 * plot-private.h. */
#pragma once

#include "output/plot.h"

/* Reads @path (base/input.h's limits) as a table of measurements written
 * by hand or exported from a spreadsheet, of which the caller reads the
 * columns @columns (NULL-terminated). The CSV of plot_table_parse(), read
 * more leniently: a line starting with '#' is a comment anywhere, not only
 * above the header, and blanks around a field are dropped (a quoted
 * field's are its own); no column is derived. Fails with TS_ERROR_INPUT,
 * "PATH:LINE: ...", on a malformed CSV, an empty file ("not @what"), a
 * header naming a column twice or an empty one, or a header naming none of
 * @columns ("PATH:LINE: not @what", quoting nothing of a file that is some
 * other file); what the header lacks of @columns is the caller's to say. */
PlotTable *plot_table_read (const char *path, const char *const *columns,
                            const char *what, GError **error);

/* The file's name, as given, for messages. */
const char *plot_table_name (const PlotTable *table);

/* The line of the file that holds the header, for messages. */
guint plot_table_header_line (const PlotTable *table);

/* The rows after the header, blank lines and comments left out. */
guint plot_table_n_rows (const PlotTable *table);

/* The column named exactly @name (the first such), or -1. */
int plot_table_column (const PlotTable *table, const char *name);

/* The name of column @col, for messages. */
const char *plot_table_column_name (const PlotTable *table, int col);

/* The header as "a, b, c", for a message that lists the columns. */
char *plot_table_columns (const PlotTable *table);

/* The cell of column @col in row @row, never NULL. */
const char *plot_table_cell (const PlotTable *table, guint row, int col);

/* The line of the file where row @row starts, for messages. */
guint plot_table_line (const PlotTable *table, guint row);

/* The cell of column @col in row @row as a finite number above 0 into
 * *@out (blanks around it let pass), or a TS_ERROR_INPUT error
 * "PATH:LINE: expected @what in column NAME, a number above 0" (and
 * "; the cell is empty" where it is). */
gboolean plot_table_positive (const PlotTable *table, guint row, int col,
                              const char *what, double *out, GError **error);
