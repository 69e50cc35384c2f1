/* SPDX-License-Identifier: MIT */
/*
 * The time rules both SMMU models follow (docs/smmu_model.md):
 *  - the model never goes back in time: an entry point whose cycle is
 *    earlier than the model's time fails with -EINVAL and changes
 *    nothing, unless callers share one clock (params.shared_clock, or a
 *    free-running runner attached), when such a cycle was read before
 *    another caller moved time on and is taken as the model's time;
 *  - n slots (translations, walks) serve requests round robin, each busy
 *    until its last request completes: an in-order pipeline of n lanes.
 * Not thread-safe: the model's lock covers every call.
 */
#ifndef IOPT_SMMU_MODEL_TIME_H
#define IOPT_SMMU_MODEL_TIME_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../platform/platform.h"

struct smmu_clock {
	uint64_t now;		/* the model's time */
	bool shared;		/* params.shared_clock */
	unsigned runners;	/* free-running adapters attached */
};

/* The cycle an entry point runs at: *cycle, or the model's time under a
 * shared clock; -EINVAL if it is in the past (nothing changed). */
static inline int smmu_clock_at(const struct smmu_clock *c, uint64_t *cycle)
{
	if (plat_likely(*cycle >= c->now))
		return 0;
	if (!c->shared && !c->runners)
		return -EINVAL;
	*cycle = c->now;
	return 0;
}

/* Time moves forward to cycle (never back). */
static inline void smmu_clock_advance(struct smmu_clock *c, uint64_t cycle)
{
	if (cycle > c->now)
		c->now = cycle;
}

/* The next of n slots in turn; *slot is the cycle it is free from. */
static inline uint64_t *smmu_slot_next(uint64_t *slots, unsigned n, unsigned *next)
{
	uint64_t *p = &slots[*next];

	*next = *next + 1 == n ? 0 : *next + 1;
	return p;
}

/* Translation latency statistics: sum, maximum, log2 histogram (NULL:
 * none kept). */
static inline void smmu_lat_account(uint64_t lat, uint64_t *sum, uint64_t *max,
				    uint64_t *hist16)
{
	*sum += lat;
	if (lat > *max)
		*max = lat;
	if (hist16) {
		unsigned b = lat ? 63 - (unsigned)__builtin_clzll(lat) : 0;

		hist16[b < 15 ? b : 15]++;
	}
}

#endif
