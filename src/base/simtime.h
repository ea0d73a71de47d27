/* simtime.h: simulated time as integer picoseconds, and the checked
 * arithmetic of the times, counts and sizes that grow with a plan.
 *
 * Integer time (as ns-3 does) keeps event order exact and runs
 * deterministic across machines; 2^63 ps is about 106 days of simulated
 * time, far beyond one training step, but absurd inputs (compute.mfu:
 * 1e-6, a 1 b/s link) reach it. Every sum of times and every conversion
 * from seconds saturates at SIM_TIME_MAX instead of wrapping into the
 * past: the engine stops at that instant and the executor reports the
 * step as too long (sim_engine_overflowed). sim_time_from_s() is the one
 * place where seconds become ticks.
 *
 * Counts and byte sizes that are products of plan sizes (ranks x
 * micro-batches x ops, nodes x NICs) saturate at UINT64_MAX the same way,
 * so a budget comparison sees "too many" rather than a wrapped small
 * number. */
#pragma once

#include <stdint.h>
#include <math.h>

typedef int64_t SimTime;

#define SIM_TIME_PS_PER_S 1000000000000.0
#define SIM_TIME_MAX INT64_MAX

/* A whole number of picoseconds as a SimTime: SIM_TIME_MAX when it does
 * not fit (or is NaN). */
static inline SimTime
sim_time_from_ps (double ps)
{
  /* 2^63 as a double: the first value that does not fit. */
  return ps < 9223372036854775808.0 ? (SimTime) ps : SIM_TIME_MAX;
}

/* Rounds to the nearest picosecond, saturating. Negative durations are
 * a bug. */
static inline SimTime
sim_time_from_s (double seconds)
{
  return sim_time_from_ps (round (seconds * SIM_TIME_PS_PER_S));
}

static inline double
sim_time_to_s (SimTime t)
{
  return (double) t / SIM_TIME_PS_PER_S;
}

/* t + d for d >= 0, saturating at SIM_TIME_MAX. */
static inline SimTime
sim_time_add (SimTime t, SimTime d)
{
  return d > SIM_TIME_MAX - t ? SIM_TIME_MAX : t + d;
}

/* a + b and a x b, saturating at UINT64_MAX. */
static inline uint64_t
sat_add_u64 (uint64_t a, uint64_t b)
{
  uint64_t r;
  return __builtin_add_overflow (a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t
sat_mul_u64 (uint64_t a, uint64_t b)
{
  uint64_t r;
  return __builtin_mul_overflow (a, b, &r) ? UINT64_MAX : r;
}
