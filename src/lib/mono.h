/*
 * The shells' one monotonic clock, for deadlines and durations (the pure
 * core reads no clock). Nothing is kept.
 */
#ifndef DISTENV_MONO_H
#define DISTENV_MONO_H

#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC (for deadlines; the shells' one clock). */
long long mono_ms(void);

/* Seconds since start, a clock_gettime(CLOCK_MONOTONIC) reading. */
double mono_elapsed_s(const struct timespec *start);

#endif
