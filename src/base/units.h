/* units.h: quantities with units ("200Gb/s", "80GiB", "1.5us", "312TFLOPS")
 * parsed into SI base units: bytes, bytes per second, seconds, FLOP/s.
 *
 * A bare number is refused: in an input file "200" could mean Gb/s or GB/s,
 * a factor of eight apart, so a quantity must say its unit. */
#pragma once

#include <glib.h>

typedef enum {
  UNIT_BYTES,       /* B, KB, MB, GB, TB, PB (powers of 1000); KiB .. PiB (1024) */
  UNIT_BANDWIDTH,   /* a bytes unit + "/s"; bits: b/s .. Tb/s, bps .. Tbps */
  UNIT_TIME,        /* ns, us (or µs), ms, s, min, h */
  UNIT_FLOPS,       /* FLOPS, GFLOPS, TFLOPS, PFLOPS (or FLOP/s, TFLOP/s, ...) */
  UNIT_FREQUENCY,   /* Hz, kHz, MHz, GHz */
} UnitKind;

/* Parses TEXT ("25 GB/s", "1.5e3us") as a quantity of KIND into *out in SI
 * base units. The number must be finite and positive; a space may separate
 * it from the unit. On error returns FALSE and sets *why (owned by the
 * caller) to a sentence saying what would be valid, such as "expected a
 * bandwidth such as 200Gb/s or 25GB/s"; the caller adds where and what. */
gboolean units_parse (const char *text, UnitKind kind, double *out, char **why);

/* Parses TEXT, all of it, as a finite decimal number ([+-]digits[.digits]
 * [e[+-]digits], such as 2.5, -3 or 3e11) into *out. Hexadecimal
 * (0x1p3), inf, nan, and surrounding space are refused: they are never a
 * number a person means in an input, and strtod would take them. */
gboolean units_number (const char *text, double *out);
/* The length of the decimal number at the start of P ([+-]digits[.digits]
 * [e[+-]digits], the form units_number takes), 0 if there is none: a
 * number as written, however large. */
size_t units_number_length (const char *p);
