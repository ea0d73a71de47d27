/* errors.c: the trainsim GError domain and its exit statuses (errors.h). */
#include "base/errors.h"

G_DEFINE_QUARK (ts-error-quark, ts_error)

int
ts_error_exit_status (const GError *error)
{
  g_return_val_if_fail (error != NULL, 1);

  if (error->domain == TS_ERROR)
    switch ((TsErrorCode) error->code)
      {
      case TS_ERROR_INPUT:
      case TS_ERROR_USAGE:
      case TS_ERROR_PLAN:
        return 2;
      case TS_ERROR_NO_FIT:
      case TS_ERROR_IO:
        return 1;
      }
  return 1;
}
