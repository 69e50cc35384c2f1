/* SPDX-License-Identifier: MIT */
/*
 * An external clock that can hold the thread reading it, for the drivers'
 * "no driver lock around model calls" tests (src/driver/drv_timeline.h).
 *
 * Thread A arms the gate and makes a driver call; the call's clock read
 * holds A inside the callback until thread B (started with the gate)
 * reports that its own driver call got through, or 5 s pass. A driver
 * that held one lock across the clock read and the model call would keep
 * B out: A's hold ends at the limit with b_done_in_hold = 0.
 */
#ifndef IOPT_TESTS_HOLD_CLOCK_H
#define IOPT_TESTS_HOLD_CLOCK_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

struct hold_clock_gate {
	uint64_t cycle;			/* atomic */
	uint32_t armed;			/* the next reading holds */
	uint32_t holding;		/* A is inside the clock */
	uint32_t b_done;		/* B's call returned */
	uint32_t b_done_in_hold;	/* seen by A before its hold ended */
};

static inline uint64_t hold_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock callback: ctx points to a struct starting with the gate. */
static inline uint64_t hold_clock_read(void *ctx)
{
	struct hold_clock_gate *g = ctx;

	if (__atomic_exchange_n(&g->armed, 0, __ATOMIC_ACQ_REL)) {
		uint64_t t0 = hold_clock_ns();

		/* Release: pairs with the acquire in hold_clock_wait_held(). */
		__atomic_store_n(&g->holding, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&g->b_done, __ATOMIC_ACQUIRE) &&
		       hold_clock_ns() - t0 < 5000000000ull)
			sched_yield();
		__atomic_store_n(&g->b_done_in_hold,
				 __atomic_load_n(&g->b_done, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELAXED);
	}
	return __atomic_add_fetch(&g->cycle, 10, __ATOMIC_RELAXED);
}

/* B: wait until A is held inside the clock. */
static inline void hold_clock_wait_held(struct hold_clock_gate *g)
{
	while (!__atomic_load_n(&g->holding, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* B: its call returned (release: pairs with A's acquire loads). */
static inline void hold_clock_b_done(struct hold_clock_gate *g)
{
	__atomic_store_n(&g->b_done, 1, __ATOMIC_RELEASE);
}

#endif /* IOPT_TESTS_HOLD_CLOCK_H */
