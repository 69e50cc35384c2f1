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
 * (model_core.h smmu_core_fast_hit) takes the time and a translation slot
 * without it. So the model's time is not one word: it is the largest of
 * now here, which only the lock holder stores, and the cycle each hit
 * block (one per device thread, model_core.h) last started a hit at,
 * which only that block's thread stores; smmu_core_now() and
 * smmu_core_time_at() (the locked path) take the maximum. A lock-free
 * hit applies the rule to the larger of now and its own thread's latest
 * hit only, so hits of different device threads are not ordered by
 * time among themselves (docs/smmu_model.md, "Lock-free TLB hits").
 * runners is read by lock-free hits.
 */
#ifndef IOPT_SMMU_MODEL_TIME_H
#define IOPT_SMMU_MODEL_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "../../platform/platform.h"

struct smmu_clock {
	/* The locked entry points' part of the model's time: relaxed
	 * stores by the lock holder only (smmu_core_time_set), relaxed
	 * loads anywhere (the lock-free hits pair with the stores by value:
	 * they need the number, nothing it orders). */
	uint64_t now;
	bool shared;		/* params.shared_clock */
	/* Free-running adapters attached: relaxed stores under the model's
	 * lock (runner.c), relaxed loads (lock-free hits). */
	uint32_t runners;
};

/* May a call at a cycle behind the model's time take its time instead? */
static inline bool smmu_clock_lenient(const struct smmu_clock *c)
{
	/* Relaxed: pairs with the relaxed store in runner.c attach(). */
	return c->shared || plat_load_rlx32(&c->runners);
}

/* The next of n slots in turn; *slot is the cycle it is free from. */
static inline uint64_t *smmu_slot_next(uint64_t *slots, unsigned n, unsigned *next)
{
	uint64_t *p = &slots[*next];

	*next = *next + 1 == n ? 0 : *next + 1;
	return p;
}

/* The log2 histogram bucket of a latency (the last holds the rest). */
static inline unsigned smmu_lat_bucket(uint64_t lat)
{
	unsigned b = lat ? 63 - (unsigned)__builtin_clzll(lat) : 0;

	return b < 15 ? b : 15;
}

/* Translation latency statistics: sum, maximum, log2 histogram (NULL:
 * none kept). */
static inline void smmu_lat_account(uint64_t lat, uint64_t *sum, uint64_t *max,
				    uint64_t *hist16)
{
	*sum += lat;
	if (lat > *max)
		*max = lat;
	if (hist16)
		hist16[smmu_lat_bucket(lat)]++;
}

#endif
