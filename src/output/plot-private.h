/* plot-private.h: what plot-table.c (the CSV) and plot.c (the figure)
 * share: the table's layout and the look-ups only the figure needs. Not
 * for use outside them; the reader's public side is plot-table.h. */
#pragma once

#include "output/plot-table.h"

typedef struct {
  GPtrArray *cells;  /* owned: char *, one per header column */
  guint line;        /* where the record starts in the file, from 1 */
} PlotRow;

struct _PlotTable {
  char *name;         /* owned: the file, for messages */
  GPtrArray *header;  /* owned: char * */
  guint header_line;  /* where the header is in the file, from 1 */
  GPtrArray *rows;    /* owned: PlotRow * */
};

/* TRUE when @s is a whole finite number (an empty cell is not). */
gboolean plot_cell_number (const char *s, double *v);

/* The column @name: exact, or the one column ending in ".@name". Returns
 * -1 when there is none, -2 when the suffix is ambiguous. */
int plot_table_find (const PlotTable *table, const char *name);

/* The column named exactly `status` (a sweep's: ok, infeasible, oom), or
 * -1: a CSV without one has only rows to draw. */
int plot_table_status (const PlotTable *table);

/* The column @name that option @option (e.g. "--y") asks for, or a
 * TS_ERROR_USAGE error that lists the columns there are. */
gboolean plot_table_resolve (const PlotTable *table, const char *name,
                             const char *option, int *col, GError **error);
