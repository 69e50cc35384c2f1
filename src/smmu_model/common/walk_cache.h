/* SPDX-License-Identifier: MIT */
/*
 * The walk cache both SMMU models use: table descriptors the walker may
 * start from, held in a set-associative cache (tlb.c) tagged by the VMID
 * and ASID of the walk in progress, which the model sets before each walk
 * (the walker's callbacks carry no tags of their own, walk.h). Counts its
 * hits and misses for the statistics; the walker reports each walk's
 * probes (struct smmu_walk_res), which the models charge walk.latency
 * each. Not thread-safe: the model's lock covers it.
 */
#ifndef IOPT_SMMU_WALK_CACHE_H
#define IOPT_SMMU_WALK_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv3.h>

#include "tlb.h"
#include "walk.h"

struct smmu_wcache {
	bool enabled;
	struct tlb t;
	uint16_t vmid, asid;		/* tags of the walk in progress */
	uint64_t hits, misses;
	struct smmu_walk_cache ops;	/* for struct smmu_mem.wc */
};

/* A cache's geometry is usable: disabled, or ways dividing entries into a
 * power-of-two number of sets with a known replacement policy. */
bool smmu_cache_params_ok(const struct iopt_smmu_cache_params *c);

/* Set up from p (disabled: nothing allocated). 0, -EINVAL, -ENOMEM; on
 * failure wc is left disabled. */
int smmu_wcache_init(struct smmu_wcache *wc, const struct iopt_smmu_cache_params *p,
		     uint64_t seed);
void smmu_wcache_fini(struct smmu_wcache *wc);

/* The tags of the walks that follow (the walker's callbacks carry none:
 * wc_lookup and wc_insert take them from here). */
static inline void smmu_wcache_tag(struct smmu_wcache *wc, uint16_t vmid,
				   uint16_t asid)
{
	wc->vmid = vmid;
	wc->asid = asid;
}

#endif
