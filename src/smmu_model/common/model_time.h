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
 * The model's lock covers every call, except that a lock-free TLB hit
 * (model_core.h smmu_core_fast_hit) moves the time and takes a
 * translation slot without it. So the time (now) only moves by an atomic
 * maximum, on both paths, and is read with relaxed loads; runners is read
 * by lock-free hits.
 */
#ifndef IOPT_SMMU_MODEL_TIME_H
#define IOPT_SMMU_MODEL_TIME_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../platform/platform.h"

struct smmu_clock {
	/* The model's time: only smmu_clock_advance() stores it (an atomic
	 * maximum, so that it never moves back whichever of a locked entry
	 * point and a lock-free hit comes last); relaxed loads anywhere. */
	uint64_t now;
	bool shared;		/* params.shared_clock */
	/* Free-running adapters attached: relaxed stores under the model's
	 * lock (runner.c), relaxed loads (lock-free hits). */
	uint32_t runners;
};

/* The model's time (relaxed: pairs with the stores in smmu_clock_advance). */
static inline uint64_t smmu_clock_now(const struct smmu_clock *c)
{
	return plat_load_rlx64(&c->now);
}

/* May a call at a cycle behind the model's time take its time instead? */
static inline bool smmu_clock_lenient(const struct smmu_clock *c)
{
	/* Relaxed: pairs with the relaxed store in runner.c attach(). */
	return c->shared || plat_load_rlx32(&c->runners);
}

static inline int smmu_clock_at(const struct smmu_clock *c, uint64_t *cycle)
{
	uint64_t now = smmu_clock_now(c);

	if (plat_likely(*cycle >= now))
		return 0;
	if (!smmu_clock_lenient(c))
		return -EINVAL;
	*cycle = now;
	return 0;
}

/* Time moves forward to cycle (never back). */
static inline void smmu_clock_advance(struct smmu_clock *c, uint64_t cycle)
{
	uint64_t now = smmu_clock_now(c);

	/* The compare-and-swap keeps the maximum; its release orders
	 * nothing the readers rely on (they pair with it by value only:
	 * relaxed loads of now). */
	while (cycle > now && !plat_cas_rel64(&c->now, &now, cycle))
		;
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
