/* SPDX-License-Identifier: MIT */
/*
 * What every SMMU model is built on (SMMUv3 in smmuv3.c, SMMUv2 in v2/):
 * the memory and interrupt callbacks, the model's lock and clock
 * (model_time.h), the translation and walk slots of the timing core, the
 * TLB and the walk cache, and the translation steps both models take the
 * same way: a TLB lookup that checks the cached leaf's permissions, a
 * table walk in a walk slot charged by walk-cache probes and descriptor
 * fetches, and the TLB fill from the walk. Not thread-safe: callers hold
 * core.lock (taken by every public entry point of a model).
 */
#ifndef IOPT_SMMU_MODEL_CORE_H
#define IOPT_SMMU_MODEL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/smmu.h>

#include "../../platform/platform.h"
#include "../tlb.h"
#include "../walk.h"
#include "model_time.h"
#include "walk_cache.h"

struct smmu_core {
	struct iopt_smmu_mem mem;
	void (*irq)(void *ctx, unsigned line, uint64_t cycle);
	void *irq_ctx;
	struct plat_mutex lock;
	struct smmu_clock clk;
	uint64_t *slot_free, *walk_free;	/* each slot free from */
	unsigned nslot, nwalk, next_slot, next_walk;
	unsigned tlb_latency, walk_latency;	/* cycles per lookup, per probe */
	struct tlb tlb;
	bool tlb_on;
	bool locked;			/* lock initialised */
	struct smmu_wcache wc;
};

/* What a model's parameters give its core. */
struct smmu_core_params {
	unsigned translation_slots, walk_slots;
	const struct iopt_smmu_cache_params *tlb, *walk;
	uint64_t seed;
	bool shared_clock;
};

/* The core parameters of a model's parameter struct *p (both models'
 * structs name these fields alike). */
#define SMMU_CORE_PARAMS(p)							\
	((const struct smmu_core_params){ (p)->translation_slots, (p)->walk_slots, \
					  &(p)->tlb, &(p)->walk, (p)->seed,	\
					  (p)->shared_clock })

/*
 * Create a model: size zeroed bytes (sizeof the model's struct) whose
 * struct smmu_core sits at core_off, with the core set up from mem, the
 * irq callback and cp: the model, or NULL with *err -EINVAL (mem lacks a
 * callback: nothing allocated), -ENOMEM or the mutex's negative errno
 * (nothing left allocated). The model then adds its own state; on a later
 * failure smmu_model_free() releases the core and the model.
 */
void *smmu_model_new(size_t size, size_t core_off, const struct iopt_smmu_mem *mem,
		     void (*irq)(void *, unsigned, uint64_t), void *irq_ctx,
		     const struct smmu_core_params *cp, int *err);
/* Release the core of a model from smmu_model_new() (whatever of it was
 * set up) and the model's memory. NULL: nothing. */
void smmu_model_free(void *model, size_t core_off);

/* The next translation slot and the cycle a translation arriving at
 * cycle starts in it. */
static inline uint64_t *smmu_core_slot(struct smmu_core *c, uint64_t cycle,
				       uint64_t *start)
{
	uint64_t *ts = smmu_slot_next(c->slot_free, c->nslot, &c->next_slot);

	*start = cycle > *ts ? cycle : *ts;
	return ts;
}

/*
 * TLB lookup at *tcur (charged tlb_latency): the entry for ia under
 * (vmid, asid, stage) when its leaf (and, nested, its stage 2 leaf)
 * allows acc; NULL otherwise (a miss, or a hit the walk must redo).
 * *looked: the TLB was consulted (hit or miss is then the caller's to
 * count).
 */
struct tlb_entry *smmu_core_tlb_hit(struct smmu_core *c,
				    const struct smmu_stage_cfg *first,
				    const struct smmu_stage_cfg *s2, uint16_t vmid,
				    uint16_t asid, uint8_t stage, uint64_t ia,
				    unsigned acc, uint64_t *tcur, bool *looked);

/*
 * Walk ia through first (then s2 when nested) in the next walk slot,
 * starting no earlier than *tcur; *tcur becomes the walk's completion:
 * walk_latency per walk-cache probe plus the memory's desc_latency per
 * descriptor fetched.
 */
void smmu_core_walk(struct smmu_core *c, const struct smmu_stage_cfg *first,
		    const struct smmu_stage_cfg *s2, uint16_t vmid, uint16_t asid,
		    uint64_t ia, unsigned acc, uint64_t *tcur,
		    struct smmu_walk_res *w);

/*
 * Would caching a walk's leaf of 2^size_lg2 bytes for ia under (vmid,
 * asid, stage) make two entries match ia? true when the TLB holds an entry
 * for those tags holding ia with another block size (a TLB match
 * conflict: the tables changed size at ia without the invalidation
 * break-before-make requires). Touches no replacement state.
 */
bool smmu_core_tlb_conflict(const struct smmu_core *c, uint16_t vmid,
			    uint16_t asid, uint8_t stage, uint64_t ia,
			    unsigned size_lg2);

/* Cache a successful walk's leaf (global: stage 1 nG = 0). */
void smmu_core_tlb_fill(struct smmu_core *c, const struct smmu_stage_cfg *first,
			uint8_t stage, uint16_t vmid, uint16_t asid, bool global,
			uint64_t ia, const struct smmu_walk_res *w);

#endif
