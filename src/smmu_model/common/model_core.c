/* SPDX-License-Identifier: MIT */
/* The base both SMMU models are built on (model_core.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_core.h"

/* The last core id given (struct smmu_core id). */
static uint64_t smmu_core_ids;

unsigned smmu_core_hit_block(struct smmu_core *c, struct smmu_hit_tls *tls)
{
	uint64_t me = (uintptr_t)tls;
	unsigned k;

	/* The first free block, unless one is this thread's already (tls
	 * named another model). Compare-and-swap: only distinct owners
	 * matter; a block is never given back, so a thread's token names at
	 * most one block of a core. */
	for (k = 0; k < SMMU_HIT_OWNED; k++) {
		uint64_t o = plat_load_rlx64(&c->hb[k].owner);

		if (o == me)
			break;
		if (!o && plat_cas_rel64(&c->hb[k].owner, &o, me))
			break;
	}
	tls->blk = k;
	tls->id = c->id;
	/* Relaxed: set before the thread's first store to the block; the
	 * readers' relaxed loads of hb_used pair with it by value. */
	if (!(plat_load_rlx64(&c->hb_used) & 1ull << k))
		plat_fetch_or_rlx64(&c->hb_used, 1ull << k);
	return k;
}

void smmu_core_hit_flush(struct smmu_hit_block *b, uint64_t lat)
{
	/* The owner alone stores here: plain reads, relaxed stores (pair
	 * with the relaxed loads of smmu_core_hit_stats()). */
	if (b->run_n) {
		unsigned lg = smmu_lat_bucket(b->run_lat);

		plat_store_rlx64(&b->lat_sum, b->lat_sum + b->run_lat * b->run_n);
		plat_store_rlx64(&b->hist[lg], b->hist[lg] + b->run_n);
		if (b->run_lat > b->lat_max)
			plat_store_rlx64(&b->lat_max, b->run_lat);
	}
	plat_store_rlx64(&b->run_n, 0);
	plat_store_rlx64(&b->run_lat, lat);
	plat_store_rlx64(&b->run_n, 1);
}

void smmu_core_share(const struct smmu_core *c, uint64_t used, unsigned k,
		     uint64_t *off, uint64_t *step, uint64_t *cnt)
{
	uint64_t u = (uint64_t)__builtin_popcountll(used);
	uint64_t r = (uint64_t)__builtin_popcountll(used & ((1ull << k) - 1));
	uint64_t p = u < c->nslot ? u : c->nslot;

	*off = r % p;
	*step = p;
	*cnt = (c->nslot - *off + p - 1) / p;
}

void smmu_core_hit_share(struct smmu_core *c, unsigned k, uint64_t used)
{
	struct smmu_hit_block *b = &c->hb[k];

	/* The owner's own words (struct smmu_hit_block): plain. */
	smmu_core_share(c, used, k, &b->off, &b->step, &b->cnt);
	b->mask = b->cnt & (b->cnt - 1) ? UINT64_MAX : b->cnt - 1;
	b->used = used;
}

bool smmu_core_hit_shared(struct smmu_core *c, uint64_t cycle, uint64_t lat,
			  uint64_t *ready)
{
	struct smmu_hit_block *b = &c->hb[SMMU_HIT_OWNED];
	uint64_t off, step, cnt;
	/* Relaxed loads throughout: each pairs by value with the store or
	 * read-modify-write of that word's writers (the lock holder for
	 * clk.now, turn and hb_used; the sharing threads for the block's
	 * words and its slot words). */
	uint64_t used = plat_load_rlx64(&c->hb_used);
	uint64_t now = plat_load_rlx64(&c->clk.now), bnow = plat_load_rlx64(&b->now);

	/* Time: after the locked path's and the shared block's latest. */
	now = bnow > now ? bnow : now;
	if (cycle < now) {
		if (!smmu_clock_lenient(&c->clk))
			return false;		/* the locked path refuses it */
		cycle = now;
	}
	smmu_core_share(c, used, SMMU_HIT_OWNED, &off, &step, &cnt);
	uint64_t si = off + step * ((plat_load_rlx64(&c->turn) +
				     plat_load_rlx64(&b->n)) % cnt);
	uint64_t *slot = smmu_core_slot_word(c, si, 1 + SMMU_HIT_OWNED);
	uint64_t free = smmu_core_slot_free(c, used, si);
	uint64_t done = (cycle > free ? cycle : free) + lat;
	uint64_t max = plat_load_rlx64(&b->lat_max), f = plat_load_rlx64(slot);

	*ready = done;
	lat = done - cycle;
	/* Compare-and-swaps and relaxed adds: several threads store here;
	 * they pair by value with the relaxed loads of the readers (the
	 * sharing threads above, smmu_core_now, smmu_core_slot_take,
	 * smmu_core_slot_free, smmu_core_hit_stats). now and the slot keep
	 * the maximum; two sharers may take one slot in one turn, and it
	 * stays busy until the later. No runs here: run_n stays 0. */
	while (done > f && !plat_cas_rel64(slot, &f, done))
		;
	while (cycle > bnow && !plat_cas_rel64(&b->now, &bnow, cycle))
		;
	plat_fetch_add_rlx64(&b->n, 1);
	plat_fetch_add_rlx64(&b->lat_sum, lat);
	plat_fetch_add_rlx64(&b->hist[smmu_lat_bucket(lat)], 1);
	while (lat > max && !plat_cas_rel64(&b->lat_max, &max, lat))
		;
	return true;
}

/* Set up c (zeroed): 0, -ENOMEM or the mutex's errno; core_fini()
 * releases what was set up either way. */
static int core_init(struct smmu_core *c, const struct iopt_smmu_mem *mem,
		     void (*irq)(void *, unsigned, uint64_t), void *irq_ctx,
		     const struct smmu_core_params *cp)
{
	int err;

	c->mem = *mem;
	c->irq = irq;
	c->irq_ctx = irq_ctx;
	c->clk.shared = cp->shared_clock;
	/* No memo live (struct smmu_core gen): the zeroed entries, gen 0,
	 * would otherwise match key 0 at address 0. */
	c->gen = 1;
	/* Relaxed: only distinct numbers matter. */
	c->id = plat_fetch_add_rlx64(&smmu_core_ids, 1) + 1;
	c->nslot = cp->translation_slots;
	if (!(c->nslot & (c->nslot - 1)))
		c->nslot_mask = c->nslot - 1;
	c->nwalk = cp->walk_slots;
	c->tlb_latency = cp->tlb->latency;
	c->walk_latency = cp->walk->latency;
	err = plat_mutex_init(&c->lock);
	if (err)
		return err;
	c->locked = true;
	/* SMMU_SLOT_WRITERS words per slot, whole lines (struct
	 * smmu_core). */
	size_t rows = (size_t)cp->translation_slots * SMMU_SLOT_WRITERS *
		      sizeof(uint64_t);

	/* calloc (one more line, aligned by hand): zeroed, and the
	 * allocation-failure tests count callocs. */
	c->slot_mem = calloc(1, rows + 64);
	if (c->slot_mem)
		c->slot_free = (uint64_t *)(((uintptr_t)c->slot_mem + 63) & ~(uintptr_t)63);
	c->walk_free = calloc(cp->walk_slots, sizeof(uint64_t));
	if (!c->slot_free || !c->walk_free)
		return -ENOMEM;
	if (cp->tlb->enable) {
		err = tlb_init(&c->tlb, cp->tlb->entries, cp->tlb->ways,
			       (enum tlb_repl)cp->tlb->repl, cp->seed);
		if (err)
			return err;
		c->tlb_on = true;
	}
	err = smmu_wcache_init(&c->wc, cp->walk, cp->seed + 1);
	/* The walker's memory, built once (smmu_core_walk_mem): neither the
	 * callbacks nor the walk cache's being on change after this. */
	c->walk_mem = (struct smmu_mem){ mem->load64, mem->cas64, mem->ctx,
					 c->wc.enabled ? &c->wc.ops : NULL };
	return err;
}

static void core_fini(struct smmu_core *c)
{
	if (c->tlb_on)
		tlb_fini(&c->tlb);
	c->tlb_on = false;
	smmu_wcache_fini(&c->wc);
	free(c->slot_mem);
	free(c->walk_free);
	c->slot_free = c->walk_free = NULL;
	c->slot_mem = NULL;
	if (c->locked)
		plat_mutex_destroy(&c->lock);
	c->locked = false;
}

void *smmu_model_new(size_t size, size_t core_off, const struct iopt_smmu_mem *mem,
		     void (*irq)(void *, unsigned, uint64_t), void *irq_ctx,
		     const struct smmu_core_params *cp, int *err)
{
	char *m;

	*err = -EINVAL;
	if (!mem || !mem->read || !mem->write || !mem->load64 || !mem->cas64)
		return NULL;
	/* From here on every failure is the host's: -ENOMEM (or the mutex's
	 * own error), never -EINVAL. */
	*err = -ENOMEM;
	m = calloc(1, size);
	if (!m)
		return NULL;
	*err = core_init((struct smmu_core *)(m + core_off), mem, irq, irq_ctx, cp);
	if (*err) {
		smmu_model_free(m, core_off);
		return NULL;
	}
	return m;
}

void smmu_model_free(void *model, size_t core_off)
{
	if (!model)
		return;
	core_fini((struct smmu_core *)((char *)model + core_off));
	free(model);
}

bool smmu_core_tlb_conflict_scan(const struct smmu_core *c, uint16_t vmid,
				 uint16_t asid, uint8_t stage, uint64_t ia,
				 unsigned size_lg2)
{
	const struct tlb *t = &c->tlb;

	if (!c->tlb_on)
		return false;
	for (uint64_t sz = t->sizes & ~(1ull << size_lg2); sz; sz &= sz - 1) {
		unsigned lg2 = (unsigned)__builtin_ctzll(sz);
		const struct tlb_entry *set =
			&t->e[(size_t)tlb_set_of(t, ia, lg2) * t->ways];
		uint64_t base = lg2 >= 64 ? 0 : ia & ~((1ull << lg2) - 1);

		for (unsigned w = 0; w < t->ways; w++)
			if (set[w].size_lg2 == lg2 && set[w].ia == base &&
			    tlb_tags_match(&set[w], vmid, asid, stage))
				return true;
	}
	return false;
}
