/* SPDX-License-Identifier: MIT */
/* The base both SMMU models are built on (model_core.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_core.h"

_Thread_local unsigned smmu_hit_tix;

unsigned smmu_hit_tix_take(void)
{
	static uint32_t next;
	uint32_t n = plat_load_rlx32(&next), t;

	/* Relaxed: only distinct numbers matter. The first SMMU_HIT_OWNED
	 * threads each own a block; later ones share the last. */
	do
		t = n < SMMU_HIT_OWNED ? n + 1 : SMMU_HIT_OWNED + 1;
	while (n < SMMU_HIT_OWNED && !plat_cas_rel32(&next, &n, t));
	smmu_hit_tix = t;
	return t;
}

int smmu_core_init(struct smmu_core *c, const struct iopt_smmu_mem *mem,
		   void (*irq)(void *, unsigned, uint64_t), void *irq_ctx,
		   unsigned translation_slots, unsigned walk_slots,
		   const struct iopt_smmu_cache_params *tlb,
		   const struct iopt_smmu_cache_params *walk, uint64_t seed,
		   bool shared_clock, bool *locked)
{
	int err;

	c->mem = *mem;
	c->irq = irq;
	c->irq_ctx = irq_ctx;
	c->clk.shared = shared_clock;
	c->nslot = translation_slots;
	c->nwalk = walk_slots;
	c->tlb_latency = tlb->latency;
	c->walk_latency = walk->latency;
	*locked = false;
	err = plat_mutex_init(&c->lock);
	if (err)
		return err;
	*locked = true;
	c->slot_free = calloc(translation_slots, sizeof(uint64_t));
	c->walk_free = calloc(walk_slots, sizeof(uint64_t));
	if (!c->slot_free || !c->walk_free)
		return -ENOMEM;
	if (tlb->enable) {
		err = tlb_init(&c->tlb, tlb->entries, tlb->ways,
			       (enum tlb_repl)tlb->repl, seed);
		if (err)
			return err;
		c->tlb_on = true;
	}
	return smmu_wcache_init(&c->wc, walk, seed + 1);
}

void smmu_core_fini(struct smmu_core *c, bool locked)
{
	if (c->tlb_on)
		tlb_fini(&c->tlb);
	c->tlb_on = false;
	smmu_wcache_fini(&c->wc);
	free(c->slot_free);
	free(c->walk_free);
	c->slot_free = c->walk_free = NULL;
	if (locked)
		plat_mutex_destroy(&c->lock);
}

struct tlb_entry *smmu_core_tlb_hit(struct smmu_core *c,
				    const struct smmu_stage_cfg *first,
				    const struct smmu_stage_cfg *s2, uint16_t vmid,
				    uint16_t asid, uint8_t stage, uint64_t ia,
				    unsigned acc, uint64_t *tcur, bool *looked)
{
	struct tlb_entry *e;

	*tcur += c->tlb_latency;
	*looked = c->tlb_on;
	c->hit_pure = false;
	if (!c->tlb_on)
		return NULL;
	/* The tick moves only when a lookup changes an LRU stamp (tlb.h). */
	uint64_t tick = c->tlb.tick;

	e = tlb_lookup(&c->tlb, vmid, asid, stage, ia);
	if (e && smmu_leaf_allows(first, e->desc, acc) &&
	    (!s2 || smmu_leaf_allows(s2, e->desc2, acc))) {
		c->hit_pure = c->tlb.tick == tick;
		c->hit_mask = (1ull << e->size_lg2) - 1;
		return e;
	}
	return NULL;
}

void smmu_core_walk(struct smmu_core *c, const struct smmu_stage_cfg *first,
		    const struct smmu_stage_cfg *s2, uint16_t vmid, uint16_t asid,
		    uint64_t ia, unsigned acc, uint64_t *tcur,
		    struct smmu_walk_res *w)
{
	uint64_t *ws = smmu_slot_next(c->walk_free, c->nwalk, &c->next_walk);
	uint64_t start = *tcur > *ws ? *tcur : *ws;
	struct smmu_mem m = smmu_wcache_mem(&c->wc, &c->mem, vmid, asid);
	uint64_t probes = smmu_wcache_probes(&c->wc);

	smmu_walk(first, s2, &m, ia, acc, w);
	probes = smmu_wcache_probes(&c->wc) - probes;
	*tcur = start + probes * c->walk_latency +
		(uint64_t)w->fetches * c->mem.desc_latency;
	*ws = *tcur;
}

void smmu_core_tlb_fill(struct smmu_core *c, const struct smmu_stage_cfg *first,
			uint8_t stage, uint16_t vmid, uint16_t asid, bool global,
			uint64_t ia, const struct smmu_walk_res *w)
{
	if (!c->tlb_on)
		return;
	struct tlb_entry e = {
		.global = global, .stage = stage, .g = (uint8_t)first->g,
		.level = (uint8_t)w->level, .size_lg2 = (uint8_t)w->size_lg2,
		.vmid = vmid, .asid = asid,
		.ia = ia & ~((1ull << w->size_lg2) - 1),
		.oa = w->oa & ~((1ull << w->size_lg2) - 1), .attr = w->attr,
		.desc = w->desc, .desc2 = w->desc2,
	};

	tlb_insert(&c->tlb, &e);
	smmu_core_gen_bump(c);
}
