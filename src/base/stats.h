/* stats.h: the order statistics of the slowest of N, and seeded draws
 * that depend on their key alone.
 *
 * A synchronous step waits at every barrier for the slowest of the ranks
 * it joins (topology.variability, parallel/sim.h). trainsim models a
 * GPU's (or an op's) time as its nominal time times a log-normal factor
 * exp (s Z - s^2 / 2), Z a standard normal: s is, to first order, the
 * relative standard deviation of the time, the factor is never negative
 * whatever s, and its mean is 1, so a spread slows no GPU on average,
 * only the slowest. The slowest of n such factors is exp (s M_n - s^2/2)
 * with M_n the largest of n standard normals, whose distribution is
 * Phi (x)^n: its expectation and its draws below are exact up to the
 * quadrature, with no need to draw n values. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* E[max of n factors exp (s Z_i - s^2/2)]: 1 for n <= 1 or s == 0. For
 * small s, 1 + s E[M_n]: E[M_n] is 1.4236 for 8 and 3.2414 for 1,000
 * (Tippett 1925, "On the extreme individuals and the range of samples
 * taken from a normal population", Biometrika 17, the table of mean
 * largest values), 3.97 for 16,384 and 4.38 for 100,000. */
double stats_expected_slowest (int64_t n, double s);

/* The same largest factor of n, drawn: u is a uniform in (0, 1), and
 * the draw is exp (s x - s^2/2) where Phi (x)^n = u. */
double stats_slowest_draw (int64_t n, double s, double u);

/* One factor exp (s Z - s^2/2), its Z a function of KEY alone. */
double stats_factor_of (guint64 key, double s);

/* splitmix64's finalizer (Steele, Lea and Flood, OOPSLA 2014): a draw
 * keyed by it depends on its key alone, not on the order of the draws. */
guint64 stats_mix64 (guint64 x);

/* The key of draw INDEX of the stream STREAM: distinct indices of one
 * stream give distinct keys. */
guint64 stats_key (guint64 stream, guint64 index);

/* A uniform in (0, 1) from KEY. */
double stats_uniform_of (guint64 key);
