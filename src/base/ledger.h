/* ledger.h: the constants of trainsim's models, each with its value,
 * unit, source and how it was chosen (ledger.def, the one table the code
 * reads them from), for the models and for `trainsim constants`.
 *
 * A model reads a constant as LEDGER (NAME), a table's values as
 * LEDGER_VALUES (NAME) (ledger_entries[] is const: one calibration for
 * every case and thread). O(1) each. */
#pragma once

#include <glib.h>

typedef enum {
  LEDGER_PUBLISHED,   /* a source's own number (datasheet, paper, code) */
  LEDGER_MEASURED,    /* a published measurement of a component */
  LEDGER_FITTED,      /* chosen to fit the data in fitted_to */
  LEDGER_ASSUMED,     /* nothing measured fixes it: see sensitivity */
  LEDGER_KIND_N
} LedgerKind;

typedef enum { LEDGER_TIME, LEDGER_MEMORY } LedgerAffects;

typedef enum {
#define LEDGER_ROW(id, ...) LEDGER_##id,
#define LEDGER_TABLE(id, ...) LEDGER_##id,
#include "base/ledger.def"
#undef LEDGER_ROW
#undef LEDGER_TABLE
  LEDGER_N
} LedgerId;

typedef struct {
  const char *name;          /* the id, as the code spells it */
  double value;              /* a row's value; a table's first */
  const double *values;      /* a table's values; NULL for a row */
  int n_values;              /* 1 for a row */
  const char *unit;          /* "1" for a fraction or factor */
  LedgerKind kind;
  LedgerAffects affects;
  const char *module;        /* the source file that uses it */
  const char *what;
  const char *source;        /* citation or measurement */
  const char *fitted_to;     /* FITTED: what it was fitted to (files of
                              * experiments/validation/ by name, space-
                              * separated, or a benchmark named); else NULL */
  const char *sensitivity;   /* ASSUMED: what +-50 % does; else NULL */
} LedgerEntry;

extern const LedgerEntry ledger_entries[LEDGER_N];

#define LEDGER(id) (ledger_entries[LEDGER_##id].value)
#define LEDGER_VALUES(id) (ledger_entries[LEDGER_##id].values)

/* "published", "measured", "fitted" or "assumed". */
const char *ledger_kind_name (LedgerKind kind);
/* "time" or "memory". */
const char *ledger_affects_name (LedgerAffects affects);
