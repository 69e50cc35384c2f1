/* SPDX-License-Identifier: MIT */
/*
 * What every SMMU model is built on (SMMUv3 in smmuv3.c, SMMUv2 in v2/):
 * the memory and interrupt callbacks, the model's lock and clock
 * (model_time.h), the translation and walk slots of the timing core, the
 * TLB and the walk cache, and the translation steps both models take the
 * same way: a TLB lookup that checks the cached leaf's permissions, a
 * table walk in a walk slot charged by walk-cache probes and descriptor
 * fetches, and the TLB fill from the walk. Callers hold core.lock (taken
 * by every public entry point of a model), except for the lock-free TLB
 * hit (smmu_core_fast_hit), which replays a hit memo (hit_memo.h) and
 * takes the time (model_time.h) and a translation slot with atomics, and
 * counts into its thread's statistics block.
 */
#ifndef IOPT_SMMU_MODEL_CORE_H
#define IOPT_SMMU_MODEL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <iopgtable/smmu.h>

#include "../../platform/platform.h"
#include "../tlb.h"
#include "../walk.h"
#include "hit_memo.h"
#include "model_time.h"
#include "walk_cache.h"

#define SMMU_HIT_OWNED	8

/* The calling CPU's (host: thread's) number for the statistics blocks
 * (1..SMMU_HIT_OWNED: its own; SMMU_HIT_OWNED + 1: the shared one),
 * taken on its first call (smmu_core_fast_hit). */
unsigned smmu_hit_ticket(void);

struct smmu_core {
	struct iopt_smmu_mem mem;
	void (*irq)(void *ctx, unsigned line, uint64_t cycle);
	void *irq_ctx;
	struct plat_mutex lock;
	struct smmu_clock clk;
	/* Each translation slot free from (an atomic maximum), and how many
	 * translations have taken one (slots go round robin: the next is
	 * slot_ctr % nslot): atomics, since lock-free hits take slots too. */
	uint64_t *slot_free;
	uint64_t slot_ctr;
	/* The slot a locked translation holds: claimed (smmu_core_slot),
	 * written through the pointer it returned, given back
	 * (smmu_core_slot_commit). Model lock. */
	uint64_t slot_held, slot_start;
	unsigned slot_held_i;
	bool slot_holding;
	uint64_t *walk_free;			/* each walk slot free from */
	unsigned nslot, nwalk, next_walk;
	unsigned tlb_latency, walk_latency;	/* cycles per lookup, per probe */
	struct tlb tlb;
	bool tlb_on;
	bool locked;			/* lock initialised */
	struct smmu_wcache wc;
	/* The last TLB lookup (smmu_core_tlb_hit) was a hit that changed no
	 * replacement state; the block mask of the entry. Model lock. */
	bool hit_pure;
	uint64_t hit_mask;
	/* Hit-memo generation: see hit_memo.h and smmu_core_gen_bump. */
	uint64_t gen;
	struct smmu_memo memo[1u << SMMU_MEMO_LG2];
	/* What lock-free hits count, merged into each model's statistics:
	 * one block per thread for the first SMMU_HIT_OWNED threads that
	 * take one (relaxed loads and stores: the thread alone writes it),
	 * the last shared by the others (relaxed atomic adds). */
	struct smmu_hit_stats {
		uint64_t n, lat_sum, lat_max, hist[16];
		uint64_t pad[5];	/* 192 bytes: threads' blocks apart */
	} hs[SMMU_HIT_OWNED + 1];
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

/* The slot of the next translation in turn. */
static inline uint64_t *smmu_core_slot_take(struct smmu_core *c)
{
	/* Relaxed: only distinct, consecutive numbers matter. */
	return &c->slot_free[plat_fetch_add_rlx64(&c->slot_ctr, 1) % c->nslot];
}

/* *slot = max(*slot, until): an atomic maximum (lock-free hits too). */
static inline void smmu_core_slot_busy(uint64_t *slot, uint64_t until)
{
	uint64_t old = plat_load_rlx64(slot);

	/* Pairs by value with the loads in smmu_core_slot() and
	 * smmu_core_fast_hit(); orders nothing else. */
	while (until > old && !plat_cas_rel64(slot, &old, until))
		;
}

/* Give back the slot a locked translation holds: busy until the cycle
 * written to it. Model lock held. */
static inline void smmu_core_slot_commit(struct smmu_core *c)
{
	if (!c->slot_holding)
		return;
	c->slot_holding = false;
	smmu_core_slot_busy(&c->slot_free[c->slot_held_i], c->slot_held);
}

/* The next translation slot and the cycle a translation arriving at
 * cycle starts in it; the caller writes the cycle the slot is busy until
 * through the pointer, and the slot is given back by the next claim or
 * smmu_core_slot_commit(), which every entry point that claims calls
 * before it returns. Model lock held. */
static inline uint64_t *smmu_core_slot(struct smmu_core *c, uint64_t cycle,
				       uint64_t *start)
{
	smmu_core_slot_commit(c);
	uint64_t *ts = smmu_core_slot_take(c);
	uint64_t free = plat_load_rlx64(ts);

	c->slot_held_i = (unsigned)(ts - c->slot_free);
	*start = cycle > free ? cycle : free;
	c->slot_start = c->slot_held = *start;
	c->slot_holding = true;
	c->hit_pure = false;		/* until this translation's TLB hit */
	return &c->slot_held;
}

/*
 * Retire every hit memo: call, with the model's lock held, before
 * releasing it after anything that may change what a translation
 * returns or what a TLB hit changes (hit_memo.h).
 */
static inline void smmu_core_gen_bump(struct smmu_core *c)
{
	/* Release: pairs with the relaxed load in smmu_memo_find() (a
	 * reader that reads the new value must not use an older entry;
	 * hit_memo.h). Only lock holders store gen: the plain read is no
	 * race. */
	plat_store_rel64(&c->gen, c->gen + 1);
}

/*
 * A locked translation that started in the slot of smmu_core_slot() and
 * is ready at ready: record it as a hit memo for (key, addr) if it was a
 * pure TLB hit (hit_pure), else retire every memo. The caller says
 * whether its own part changed nothing either (ok: no configuration
 * fill, no fault, nothing outstanding that a later translation must act
 * on first). Model lock held.
 */
static inline void smmu_core_memo_note(struct smmu_core *c, bool ok, uint64_t key,
				       uint64_t addr, uint64_t oa, unsigned attr,
				       unsigned cb, uint64_t ready)
{
	if (ok && c->hit_pure)
		smmu_memo_store(c->memo, c->gen, key, addr, c->hit_mask, oa,
				ready - c->slot_start, attr, cb);
	else
		smmu_core_gen_bump(c);
}

/*
 * A TLB hit without the model's lock: true when the memo holds one for
 * (key, addr) and the time rule accepts cycle, with *h and *ready filled
 * and the time, a translation slot and the hit statistics taken as the
 * locked path takes them; false (nothing changed) when the locked path
 * must decide. Any thread, no lock held; linearised at the memo lookup.
 */
static inline bool smmu_core_fast_hit(struct smmu_core *c, uint64_t key,
				      uint64_t addr, uint64_t cycle,
				      struct smmu_memo_hit *h, uint64_t *ready)
{
	if (!smmu_memo_find(c->memo, &c->gen, key, addr, h))
		return false;
	/* The time rule, as smmu_clock_at() and smmu_clock_advance(). */
	uint64_t now = smmu_clock_now(&c->clk);

	if (cycle < now) {
		if (plat_unlikely(!smmu_clock_lenient(&c->clk)))
			return false;		/* the locked path refuses it */
		cycle = now;
	} else if (cycle > now) {
		smmu_clock_advance(&c->clk, cycle);
	}
	/* The next slot in turn: start when it is free, busy until done. */
	uint64_t *slot = smmu_core_slot_take(c);
	uint64_t old = plat_load_rlx64(slot), done;

	do
		done = (cycle > old ? cycle : old) + h->lat;
	while (!plat_cas_rel64(slot, &old, done));	/* as smmu_core_slot_busy */
	*ready = done;
	/* Statistics: this thread's block. */
	unsigned tix = smmu_hit_ticket();
	uint64_t lat = done - cycle;
	unsigned b = lat ? 63 - (unsigned)__builtin_clzll(lat) : 0;

	b = b < 15 ? b : 15;
	if (plat_likely(tix <= SMMU_HIT_OWNED)) {
		/* Relaxed: this thread alone stores the block; pairs with
		 * the relaxed loads of smmu_core_hit_stats(). */
		struct smmu_hit_stats *hs = &c->hs[tix - 1];

		plat_store_rlx64(&hs->n, hs->n + 1);
		plat_store_rlx64(&hs->lat_sum, hs->lat_sum + lat);
		plat_store_rlx64(&hs->hist[b], hs->hist[b] + 1);
		if (plat_unlikely(lat > hs->lat_max))
			plat_store_rlx64(&hs->lat_max, lat);
	} else {
		/* Shared by the other threads: relaxed atomic adds (pair with
		 * the relaxed loads of smmu_core_hit_stats()). */
		struct smmu_hit_stats *hs = &c->hs[SMMU_HIT_OWNED];
		uint64_t max = plat_load_rlx64(&hs->lat_max);

		plat_fetch_add_rlx64(&hs->n, 1);
		plat_fetch_add_rlx64(&hs->lat_sum, lat);
		plat_fetch_add_rlx64(&hs->hist[b], 1);
		while (lat > max && !plat_cas_rel64(&hs->lat_max, &max, lat))
			;
	}
	return true;
}

/* The lock-free hits' statistics, summed over the threads' blocks (any
 * context; a snapshot while hits run). */
static inline void smmu_core_hit_stats(struct smmu_core *c, struct smmu_hit_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i <= SMMU_HIT_OWNED; i++) {
		struct smmu_hit_stats *hs = &c->hs[i];
		uint64_t m = plat_load_rlx64(&hs->lat_max);

		/* Relaxed: pair with the stores and adds of the hits. */
		sum->n += plat_load_rlx64(&hs->n);
		sum->lat_sum += plat_load_rlx64(&hs->lat_sum);
		sum->lat_max = m > sum->lat_max ? m : sum->lat_max;
		for (unsigned k = 0; k < 16; k++)
			sum->hist[k] += plat_load_rlx64(&hs->hist[k]);
	}
}

/*
 * TLB lookup at *tcur (charged tlb_latency): the entry for ia under
 * (vmid, asid, stage) when its leaf (and, nested, its stage 2 leaf)
 * allows acc; NULL otherwise (a miss, or a hit the walk must redo).
 * *looked: the TLB was consulted (hit or miss is then the caller's to
 * count). hit_pure: an entry was returned and the lookup changed no
 * replacement state.
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
