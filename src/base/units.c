/* units.c: parse quantities with units into SI base units (see units.h). */
#include "base/units.h"
#include "base/text.h"

#include <math.h>
#include <string.h>

typedef struct {
  const char *name;
  double factor;      /* to the SI base unit */
} Unit;

/* The names are case-sensitive: "b" is a bit and "B" a byte. */
static const Unit bytes_units[] = {
  { "B", 1.0 },
  { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 }, { "PB", 1e15 },
  { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
  { "TiB", 1099511627776.0 }, { "PiB", 1125899906842624.0 },
  { NULL, 0 }
};

/* Bits per second: a byte is eight bits. The byte rates are bytes_units
 * followed by "/s" and are not listed here. */
static const Unit bit_rate_units[] = {
  { "b/s", 1.0 / 8 }, { "Kb/s", 1e3 / 8 }, { "Mb/s", 1e6 / 8 },
  { "Gb/s", 1e9 / 8 }, { "Tb/s", 1e12 / 8 },
  { "bps", 1.0 / 8 }, { "Kbps", 1e3 / 8 }, { "Mbps", 1e6 / 8 },
  { "Gbps", 1e9 / 8 }, { "Tbps", 1e12 / 8 },
  { NULL, 0 }
};

static const Unit time_units[] = {
  { "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 } /* µs */, { "ms", 1e-3 },
  { "s", 1.0 }, { "min", 60.0 }, { "h", 3600.0 },
  { NULL, 0 }
};

static const Unit flops_units[] = {
  { "FLOPS", 1.0 }, { "GFLOPS", 1e9 }, { "TFLOPS", 1e12 }, { "PFLOPS", 1e15 },
  { "FLOP/s", 1.0 }, { "GFLOP/s", 1e9 }, { "TFLOP/s", 1e12 }, { "PFLOP/s", 1e15 },
  { NULL, 0 }
};

static const Unit frequency_units[] = {
  { "Hz", 1.0 }, { "kHz", 1e3 }, { "MHz", 1e6 }, { "GHz", 1e9 },
  { NULL, 0 }
};

static const char *
kind_example (UnitKind kind)
{
  switch (kind)
    {
    case UNIT_BYTES: return "an amount of memory such as 80GiB or 40GB";
    case UNIT_BANDWIDTH: return "a bandwidth such as 200Gb/s or 25GB/s";
    case UNIT_TIME: return "a time such as 1.5us or 2ms";
    case UNIT_FLOPS: return "a compute rate such as 312TFLOPS";
    case UNIT_FREQUENCY: return "a clock frequency such as 2.25GHz";
    }
  g_assert_not_reached ();
}

static gboolean
lookup (const Unit *table, const char *name, double *factor)
{
  for (const Unit *u = table; u->name; u++)
    if (strcmp (u->name, name) == 0)
      {
        *factor = u->factor;
        return TRUE;
      }
  return FALSE;
}

static gboolean
unit_factor (UnitKind kind, const char *name, double *factor)
{
  switch (kind)
    {
    case UNIT_BYTES:
      return lookup (bytes_units, name, factor);
    case UNIT_BANDWIDTH:
      {
        size_t n = strlen (name);
        if (lookup (bit_rate_units, name, factor))
          return TRUE;
        if (n > 2 && strcmp (name + n - 2, "/s") == 0)
          {
            g_autofree char *bytes = g_strndup (name, n - 2);
            return lookup (bytes_units, bytes, factor);
          }
        return FALSE;
      }
    case UNIT_TIME:
      return lookup (time_units, name, factor);
    case UNIT_FLOPS:
      return lookup (flops_units, name, factor);
    case UNIT_FREQUENCY:
      return lookup (frequency_units, name, factor);
    }
  g_assert_not_reached ();
}

/* "B, KB, ..." for the message about an unknown unit. */
static char *
unit_names (UnitKind kind)
{
  GString *s = g_string_new (NULL);
  const Unit *tables[2] = { NULL, NULL };
  const char *suffix = "";

  switch (kind)
    {
    case UNIT_BYTES: tables[0] = bytes_units; break;
    case UNIT_BANDWIDTH: tables[0] = bit_rate_units; tables[1] = bytes_units; suffix = "/s"; break;
    case UNIT_TIME: tables[0] = time_units; break;
    case UNIT_FLOPS: tables[0] = flops_units; break;
    case UNIT_FREQUENCY: tables[0] = frequency_units; break;
    }
  for (int t = 0; t < 2 && tables[t]; t++)
    for (const Unit *u = tables[t]; u->name; u++)
      g_string_append_printf (s, "%s%s%s", s->len ? ", " : "", u->name,
                              t == 1 ? suffix : "");
  return g_string_free (s, FALSE);
}

/* Written out rather than left to strtod, which would also take "inf",
 * "nan" and hexadecimal. */
size_t
units_number_length (const char *p)
{
  const char *s = p;
  gboolean digits = FALSE;

  if (*s == '+' || *s == '-')
    s++;
  while (g_ascii_isdigit (*s))
    s++, digits = TRUE;
  if (*s == '.')
    for (s++; g_ascii_isdigit (*s); s++)
      digits = TRUE;
  if (!digits)
    return 0;
  if (*s == 'e' || *s == 'E')
    {
      const char *e = s + 1;
      if (*e == '+' || *e == '-')
        e++;
      if (g_ascii_isdigit (*e))
        {
          while (g_ascii_isdigit (*e))
            e++;
          s = e;
        }
    }
  return (size_t) (s - p);
}

gboolean
units_number (const char *text, double *out)
{
  size_t n = units_number_length (text);

  if (n == 0 || text[n] != '\0')
    return FALSE;
  *out = g_ascii_strtod (text, NULL);
  return isfinite (*out);
}

gboolean
units_parse (const char *text, UnitKind kind, double *out, char **why)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (text ? text : ""));
  size_t n = units_number_length (trimmed);
  const char *unit = trimmed + n;
  double factor, value;

  if (n == 0)
    {
      *why = g_strdup_printf ("expected %s", kind_example (kind));
      return FALSE;
    }
  while (*unit == ' ')
    unit++;
  if (*unit == '\0')
    {
      /* The example names the unit it lacks. */
      *why = g_strdup_printf ("expected %s", kind_example (kind));
      return FALSE;
    }
  if (!unit_factor (kind, unit, &factor))
    {
      g_autofree char *names = unit_names (kind);
      /* A mistyped unit is short; longer text, or text with control
       * characters or invalid UTF-8 (what base/text.h would show as '?'),
       * is not quoted back: the input may be a file that is not one
       * (config.c's rule on quoting an input). */
      g_autofree char *shown = text_shown (unit);
      gboolean quote = strlen (unit) <= 12 && strcmp (shown, unit) == 0;
      *why = g_strdup_printf ("unknown unit%s%s%s; expected %s, with one of the units %s",
                              quote ? " '" : "", quote ? unit : "", quote ? "'" : "",
                              kind_example (kind), names);
      return FALSE;
    }
  {
    g_autofree char *number = g_strndup (trimmed, n);
    value = g_ascii_strtod (number, NULL) * factor;
  }
  if (!isfinite (value) || value <= 0)
    {
      *why = g_strdup_printf ("expected a positive, finite amount: %s", kind_example (kind));
      return FALSE;
    }
  *out = value;
  return TRUE;
}
