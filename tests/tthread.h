/* SPDX-License-Identifier: MIT */
/*
 * Test threads through the platform layer, so that one stress test runs
 * on host threads (linked with iopgtable_internal) and on simulated CPUs
 * (the _sim variant, linked with iopgtable_sim: plat_thread_start and
 * plat_thread_join called from the test's main thread create simulated
 * CPUs and run the simulation until the joined one ends; docs/sim.md).
 *
 * What a test must not do for that: wait on something only another thread
 * changes without a platform call in the loop (spin with tu_yield(),
 * plat_cpu_relax() or plat_sleep_ns(), never sched_yield() alone), hold a
 * pthread mutex across library calls (a simulated CPU may switch inside
 * them: use plat_mutex), keep per-thread state in _Thread_local (use
 * PLAT_CPU_LOCAL), read wall-clock time (use plat_clock_ns), or do
 * concurrent work on the main thread between starting and joining its
 * threads (the simulation does not run then).
 */
#ifndef IOPT_TTHREAD_H
#define IOPT_TTHREAD_H

#include <sched.h>
#include <stdlib.h>

#include "../src/platform/platform.h"

/*
 * Worker threads a stress test starts: dflt, or IOPT_SIM_CPUS clamped to
 * [1, max] when set (the simulation harness sets it; by hand it sizes a
 * host run the same way).
 */
static inline unsigned tu_threads(unsigned dflt, unsigned max)
{
	const char *e = getenv("IOPT_SIM_CPUS");
	long n = e ? atol(e) : 0;

	if (n <= 0)
		return dflt;
	return n > (long)max ? max : (unsigned)n;
}

/* True when IOPT_SIM_CPUS fixes the thread count (one count, not a list). */
static inline int tu_threads_fixed(void)
{
	return getenv("IOPT_SIM_CPUS") != NULL;
}

/*
 * Let other threads run, in a loop that has no other reason to stop
 * (a device thread throttling itself, a wait): the host thread yields
 * its core; a simulated CPU reaches a scheduling point.
 */
static inline void tu_yield(void)
{
#ifdef IOPT_PLATFORM_SIM
	plat_cpu_relax();
#else
	sched_yield();
#endif
}

/* Start fn(arg) through the platform layer; aborts the test on failure. */
#define TU_THREAD_START(t, fn, arg)                                         \
	assert_int_equal(plat_thread_start((t), (fn), (arg)), 0)

#endif
