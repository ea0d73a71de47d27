/* stats.c: order statistics of the slowest of N and keyed draws
 * (stats.h). */
#include "base/stats.h"

#include <math.h>

/* log Phi (x), accurate far into both tails: erfc keeps the upper tail's
 * small complement, log1p the rest. */
static double
log_phi (double x)
{
  if (x < -5)
    return log (0.5 * erfc (-x / G_SQRT2));
  return log1p (-0.5 * erfc (x / G_SQRT2));
}

/* The density of M_n, the largest of n standard normals, at x:
 * n phi (x) Phi (x)^(n-1). */
static double
max_density (int64_t n, double x)
{
  double log_phi_pdf = -0.5 * x * x - 0.5 * log (2 * G_PI);
  return exp (log ((double) n) + log_phi_pdf + (double) (n - 1) * log_phi (x));
}

/* Simpson's rule over [-10, 10] in steps of about 1/100: M_n's density
 * for n up to 10^9 lies inside it (its mode is below 6.1, and
 * P (M_n > 10) < 10^-14), and the step is far finer than its width (a
 * standard deviation above 0.15); the sum is divided by the mass it
 * finds, so what lies outside shifts no mean. About 0.2 ms: the last few
 * results are kept, as a sweep asks for the same n and s plan after
 * plan. */
#define LO -10.0
#define HI 10.0
#define STEPS 2048
#define CACHED 4

double
stats_expected_slowest (int64_t n, double s)
{
  if (n <= 1 || s == 0)
    return 1;
  static _Thread_local struct { int64_t n; double s, v; } cache[CACHED];
  static _Thread_local int next;
  for (int i = 0; i < CACHED; i++)
    if (cache[i].n == n && cache[i].s == s)
      return cache[i].v;
  double h = (HI - LO) / STEPS, sum = 0, mass = 0;
  for (int i = 0; i <= STEPS; i++)
    {
      double x = LO + i * h;
      double w = (i == 0 || i == STEPS ? 1 : i % 2 ? 4 : 2) * max_density (n, x);
      sum += w * exp (s * x);
      mass += w;
    }
  double v = sum / mass * exp (-s * s / 2);
  cache[next].n = n, cache[next].s = s, cache[next].v = v;
  next = (next + 1) % CACHED;
  return v;
}

double
stats_slowest_draw (int64_t n, double s, double u)
{
  /* Phi (x) = u^(1/n): bisection on log Phi, which is monotonic, to
   * 2^-40 of the bracket; u^(1/n) near 1 for large n is why it works in
   * logs. */
  double target = log (u) / (double) MAX (n, 1);
  double lo = -40, hi = 40;
  for (int i = 0; i < 60; i++)
    {
      double mid = (lo + hi) / 2;
      if (log_phi (mid) < target)
        lo = mid;
      else
        hi = mid;
    }
  return exp (s * (lo + hi) / 2 - s * s / 2);
}

guint64
stats_mix64 (guint64 x)
{
  x = (x ^ (x >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return x ^ (x >> 31);
}

guint64
stats_key (guint64 stream, guint64 index)
{
  return stats_mix64 (stream) + index;
}

double
stats_uniform_of (guint64 key)
{
  /* 53 bits, offset by half a unit: never 0 nor 1. */
  return ((double) (stats_mix64 (key) >> 11) + 0.5) * 0x1.0p-53;
}

double
stats_factor_of (guint64 key, double s)
{
  if (s == 0)
    return 1;
  /* Box-Muller from two uniforms keyed apart. */
  double u1 = stats_uniform_of (key);
  double u2 = stats_uniform_of (key ^ G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  double z = sqrt (-2 * log (u1)) * cos (2 * G_PI * u2);
  return exp (s * z - s * s / 2);
}
