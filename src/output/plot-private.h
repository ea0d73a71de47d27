/* plot-private.h: what plot-table.c (the CSV) and plot.c (the figure)
 * share: the table's layout and its look-ups. Not for use outside them. */
#pragma once

#include "output/plot.h"

typedef struct {
  GPtrArray *cells;  /* owned: char *, one per header column */
  guint line;        /* where the record starts in the file, from 1 */
} PlotRow;

struct _PlotTable {
  char *name;         /* owned: the file, for messages */
  GPtrArray *header;  /* owned: char * */
  GPtrArray *rows;    /* owned: PlotRow * */
};

/* The cell of column @col in row @row, never NULL. */
const char *plot_table_cell (const PlotTable *table, guint row, int col);

/* The line of the file where row @row starts, for messages. */
guint plot_table_line (const PlotTable *table, guint row);

/* TRUE when @s is a whole finite number (an empty cell is not). */
gboolean plot_cell_number (const char *s, double *v);

/* The column @name: exact, or the one column ending in ".@name". Returns
 * -1 when there is none, -2 when the suffix is ambiguous. */
int plot_table_find (const PlotTable *table, const char *name);

/* The column named exactly `status` (a sweep's: ok, infeasible, oom), or
 * -1: a CSV without one has only rows to draw. */
int plot_table_status (const PlotTable *table);

/* The header as "a, b, c", for a message that lists the columns. */
char *plot_table_columns (const PlotTable *table);

/* The column @name that option @option (e.g. "--y") asks for, or a
 * TS_ERROR_USAGE error that lists the columns there are. */
gboolean plot_table_resolve (const PlotTable *table, const char *name,
                             const char *option, int *col, GError **error);
