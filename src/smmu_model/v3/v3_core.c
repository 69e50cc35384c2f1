/* SPDX-License-Identifier: MIT */
/*
 * A register-level SMMUv3 (IHI0070), split by concern (v3_model.h lists
 * the files): here its creation and default parameters, its statistics
 * and the free-running adapter (common/runner.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../common/runner.h"
#include "v3_model.h"

void iopt_smmuv3_default_params(struct iopt_smmuv3_params *p)
{
	memset(p, 0, sizeof(*p));
	p->s1 = p->s2 = true;
	p->msi = p->sev = p->ril = p->strtab_2lvl = true;
	p->httu = 2;
	p->asid16 = p->vmid16 = true;
	p->sidsize = 16;
	p->ssidsize = 10;
	p->cmdqs = 19;
	p->evtqs = 19;
	p->oas = 48;
	p->gran4k = p->gran16k = p->gran64k = true;
	p->tlb = (struct iopt_smmu_cache_params){ true, 2048, 4, IOPT_SMMU_REPL_LRU, 3 };
	p->walk = (struct iopt_smmu_cache_params){ true, 256, 4, IOPT_SMMU_REPL_LRU, 0 };
	p->cfg = (struct iopt_smmu_cache_params){ true, 64, 4, IOPT_SMMU_REPL_LRU, 2 };
	p->seed = 1;
	p->translation_slots = 16;
	p->walk_slots = 16;
	p->cmd_cycles = 4;
	p->tlbi_cycles = 16;
	p->cfgi_cycles = 8;
	p->sync_cycles = 8;
	p->msi_cycles = 20;
	p->event_cycles = 20;
}

/* ---- creation ----------------------------------------------------------- */

int iopt_smmuv3_create(const struct iopt_smmuv3_params *p,
		       const struct iopt_smmu_mem *mem,
		       void (*irq)(void *ctx, unsigned line, uint64_t cycle),
		       void *irq_ctx, struct iopt_smmuv3 **out)
{
	struct iopt_smmuv3 *s;
	int err;

	if (!p || !out || p->sidsize > 32 || p->ssidsize > 20 ||
	    p->cmdqs > 19 || p->evtqs > 19 || p->oas < 32 || p->oas > 52 ||
	    !p->translation_slots || !p->walk_slots || p->httu > 2 ||
	    !smmu_cache_params_ok(&p->tlb) || !smmu_cache_params_ok(&p->walk) ||
	    !smmu_cache_params_ok(&p->cfg) ||
	    (!p->s1 && !p->s2) || (!p->gran4k && !p->gran16k && !p->gran64k))
		return -EINVAL;
	s = smmu_model_new(sizeof(*s), offsetof(struct iopt_smmuv3, core), mem, irq,
			   irq_ctx, &SMMU_CORE_PARAMS(p), &err);
	if (!s)
		return err;
	s->p = *p;
	/* The caches' flags say what exists (and what translation uses). */
	s->p.tlb.enable = s->core.tlb_on;
	s->p.walk.enable = s->core.wc.enabled;
	s->ncfg = p->cfg.enable ? p->cfg.entries : 0;
	s->cfg_set_mask = s->ncfg ? s->ncfg / p->cfg.ways - 1 : 0;
	if (s->ncfg) {
		s->cfg = calloc(s->ncfg, sizeof(*s->cfg));
		if (!s->cfg) {
			iopt_smmuv3_destroy(s);
			return -ENOMEM;
		}
	}
	v3_regs_reset(s);
	*out = s;
	return 0;
}

void iopt_smmuv3_destroy(struct iopt_smmuv3 *s)
{
	if (s)
		free(s->cfg);
	smmu_model_free(s, offsetof(struct iopt_smmuv3, core));
}

void iopt_smmuv3_get_stats(struct iopt_smmuv3 *s, struct iopt_smmuv3_stats *st)
{
	struct smmu_hit_stats hs;

	plat_mutex_lock(&s->core.lock);
	*st = s->st;
	st->walk_cache_hits = s->core.wc.hits;
	st->walk_cache_misses = s->core.wc.misses;
	/* Lock-free hits: each a translation, a configuration cache hit
	 * and a TLB hit. */
	smmu_core_hit_stats(&s->core, &hs);
	st->translations += hs.n;
	st->cfg_hits += hs.n;
	st->tlb_hits += hs.n;
	st->lat_sum += hs.lat_sum;
	if (hs.lat_max > st->lat_max)
		st->lat_max = hs.lat_max;
	for (unsigned i = 0; i < 16; i++)
		st->lat_hist[i] += hs.hist[i];
	plat_mutex_unlock(&s->core.lock);
}

/* ---- free-running adapter ------------------------------------------------ */

SMMU_RUNNER_DEFINE(iopt_smmuv3, struct iopt_smmuv3)
