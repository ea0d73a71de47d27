/* ledger.c: the ledger's table, built from ledger.def; see ledger.h. */
#include "base/ledger.h"

/* A table's values, each in an array of its own. */
#define LEDGER_ROW(...)
#define LEDGER_TABLE(id, unit, kind, affects, module, what, source, fitted, \
                     sensitivity, ...) \
  static const double ledger_values_##id[] = { __VA_ARGS__ };
#include "base/ledger.def"
#undef LEDGER_ROW
#undef LEDGER_TABLE

#define LEDGER_FIRST(x, ...) (x)
const LedgerEntry ledger_entries[LEDGER_N] = {
#define LEDGER_ROW(id, v, unit, kind, affects, module, what, source, fitted, \
                   sensitivity) \
  [LEDGER_##id] = { #id, (v), NULL, 1, unit, LEDGER_##kind, LEDGER_##affects, \
                    module, what, source, fitted, sensitivity },
#define LEDGER_TABLE(id, unit, kind, affects, module, what, source, fitted, \
                     sensitivity, ...) \
  [LEDGER_##id] = { #id, LEDGER_FIRST (__VA_ARGS__), ledger_values_##id, \
                    (int) G_N_ELEMENTS (ledger_values_##id), unit, \
                    LEDGER_##kind, LEDGER_##affects, module, what, source, \
                    fitted, sensitivity },
#include "base/ledger.def"
#undef LEDGER_ROW
#undef LEDGER_TABLE
#undef LEDGER_FIRST
};

const char *
ledger_kind_name (LedgerKind kind)
{
  static const char *const names[LEDGER_KIND_N] = {
    [LEDGER_PUBLISHED] = "published", [LEDGER_MEASURED] = "measured",
    [LEDGER_FITTED] = "fitted", [LEDGER_ASSUMED] = "assumed",
  };
  g_return_val_if_fail (kind < LEDGER_KIND_N, NULL);
  return names[kind];
}

const char *
ledger_affects_name (LedgerAffects affects)
{
  return affects == LEDGER_MEMORY ? "memory" : "time";
}
