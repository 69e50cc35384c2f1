/* SPDX-License-Identifier: MIT */
/*
 * A wake-up event: the driver's stand-in for the Arm event register that
 * an SMMU's SEV sets and a CPU's WFE waits on (IHI0070 4.7.3: a CMD_SYNC
 * with CS = SIG_SEV "generates a system-wide event" on completion, when
 * IDR0.SEV = 1; Arm ARM D1.6.1 / B1.8.13 WFE, SEV and the event register).
 * Built only on the platform layer's atomics, relax and clock, so that a
 * simulation backend sees every step.
 *
 * Contract (one event, any number of waiters and signallers):
 *  1. drv_event_seq() returns a token: load acquire of the sequence.
 *     A waiter takes the token BEFORE it checks its condition.
 *  2. drv_event_signal() is called AFTER the signaller has made some
 *     waiter's condition observable (here: after it read a newer
 *     SMMU_CMDQ_CONS). It is a release increment, pairing with the
 *     acquire in 1 and 3.
 *  3. drv_event_wait(ev, token, timeout_ns) returns 0 as soon as the
 *     sequence differs from token (a signal happened after the token was
 *     taken, so the condition may have changed: check it again), or
 *     -ETIMEDOUT when timeout_ns of host time have passed without one
 *     (the backstop a real CPU gets from the generic timer's event
 *     stream). It never returns 0 without a signal since the token, so
 *     a signal between 1 and 3 is never lost: a missed wake-up costs at
 *     most one timeout, never a hang.
 * While it waits it only reads the sequence (one cache line, no lock,
 * no register access) with plat_cpu_relax() between reads.
 */
#ifndef IOPT_DRV_WAIT_H
#define IOPT_DRV_WAIT_H

#include <errno.h>
#include <stdint.h>

#include "../platform/platform.h"

struct drv_event {
	uint64_t seq;
};

static inline void drv_event_init(struct drv_event *ev)
{
	plat_store_rlx64(&ev->seq, 0);
}

/* Contract 1: acquire, pairs with drv_event_signal()'s release. */
static inline uint64_t drv_event_seq(const struct drv_event *ev)
{
	return plat_load_acq64(&ev->seq);
}

/* Contract 2: release, pairs with the acquires in drv_event_seq() and
 * drv_event_wait(). */
static inline void drv_event_signal(struct drv_event *ev)
{
	plat_fetch_add_acq_rel64(&ev->seq, 1);
}

/* Relaxes between host clock reads while waiting. */
#define DRV_EVENT_RELAX_PER_CLOCK	64

/* Contract 3. */
static inline int drv_event_wait(const struct drv_event *ev, uint64_t token,
				 uint64_t timeout_ns)
{
	uint64_t start = plat_clock_ns();

	for (;;) {
		for (unsigned i = 0; i < DRV_EVENT_RELAX_PER_CLOCK; i++) {
			/* Acquire pairs with drv_event_signal(). */
			if (plat_load_acq64(&ev->seq) != token)
				return 0;
			plat_cpu_relax();
		}
		if (plat_clock_ns() - start >= timeout_ns)
			return -ETIMEDOUT;
	}
}

#endif /* IOPT_DRV_WAIT_H */
