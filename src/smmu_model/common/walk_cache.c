/* SPDX-License-Identifier: MIT */
/* The tagged walk cache shared by the SMMU models (walk_cache.h). */
#include <errno.h>
#include <string.h>

#include "walk_cache.h"

bool smmu_cache_params_ok(const struct iopt_smmu_cache_params *c)
{
	unsigned sets;

	if (!c->enable)
		return true;
	if (!c->ways || !c->entries || c->entries % c->ways ||
	    (unsigned)c->repl > IOPT_SMMU_REPL_RANDOM)
		return false;
	sets = c->entries / c->ways;
	return !(sets & (sets - 1));
}

static bool wc_lookup(void *ctx, unsigned stage, unsigned level, uint64_t ia,
		      unsigned shift, uint64_t *table, uint64_t *hier)
{
	struct smmu_wcache *wc = ctx;
	struct tlb_entry *e = tlb_lookup_level(&wc->t, wc->vmid,
					       stage == 1 ? wc->asid : 0,
					       (uint8_t)stage, ia, shift, level);

	if (!e) {
		wc->misses++;
		return false;
	}
	wc->hits++;
	*table = e->oa;
	*hier = e->desc;	/* table attributes gathered above it */
	return true;
}

static void wc_insert(void *ctx, unsigned stage, unsigned level, uint64_t ia,
		      unsigned shift, unsigned g, uint64_t table, uint64_t hier)
{
	struct smmu_wcache *wc = ctx;
	struct tlb_entry e = {
		.stage = (uint8_t)stage, .level = (uint8_t)level, .g = (uint8_t)g,
		.size_lg2 = (uint8_t)shift, .vmid = wc->vmid,
		.asid = stage == 1 ? wc->asid : 0,
		.ia = ia & ~((1ull << shift) - 1), .oa = table, .desc = hier,
	};

	tlb_insert(&wc->t, &e);
}

int smmu_wcache_init(struct smmu_wcache *wc, const struct iopt_smmu_cache_params *p,
		     uint64_t seed)
{
	int err;

	memset(wc, 0, sizeof(*wc));
	wc->ops = (struct smmu_walk_cache){ wc_lookup, wc_insert, wc };
	if (!p->enable)
		return 0;
	if (!smmu_cache_params_ok(p))
		return -EINVAL;
	err = tlb_init(&wc->t, p->entries, p->ways, (enum tlb_repl)p->repl, seed);
	wc->enabled = !err;
	return err;
}

void smmu_wcache_fini(struct smmu_wcache *wc)
{
	if (wc->enabled)
		tlb_fini(&wc->t);
	wc->enabled = false;
}
