/* simtime.h: simulated time as integer picoseconds.
 *
 * Integer time (as ns-3 does) keeps event order exact and runs
 * deterministic across machines; 2^63 ps is about 106 days of simulated
 * time, far beyond one training step. sim_time_from_s() is the one place
 * where seconds become ticks. */
#pragma once

#include <stdint.h>
#include <math.h>

typedef int64_t SimTime;

#define SIM_TIME_PS_PER_S 1000000000000.0
#define SIM_TIME_MAX INT64_MAX

/* Rounds to the nearest picosecond; negative durations are a bug. */
static inline SimTime
sim_time_from_s (double seconds)
{
  return (SimTime) llround (seconds * SIM_TIME_PS_PER_S);
}

static inline double
sim_time_to_s (SimTime t)
{
  return (double) t / SIM_TIME_PS_PER_S;
}
