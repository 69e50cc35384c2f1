/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 driver: probe and reset, context-bank domains, stream routing.
 *
 * Reset order (the Linux arm-smmu driver's): clear sGFSR; every S2CR
 * (fault) then its SMR (invalid); every context bank disabled (SCTLR = 0)
 * with its FSR cleared; TLBIALLH and TLBIALLNSNH; sTLBGSYNC polled to
 * completion; then sCR0 (global fault reporting and interrupts, unmatched
 * streams fault, private VMIDs, PTM; CLIENTPD cleared).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "smmuv2_drv_internal.h"

static unsigned fld(uint64_t v, unsigned hi, unsigned lo)
{
	return (unsigned)((v >> lo) & ((1ull << (hi - lo + 1)) - 1));
}

void iopt_smmuv2_drv_default_cfg(struct iopt_smmuv2_drv_cfg *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->sync = IOPT_SMMUV2_DRV_SYNC_BANK;
}

static int reset(struct iopt_smmuv2_drv *drv)
{
	uint64_t v = 0;
	int ret = v2_read(drv, V2_SGFSR, 4, &v);

	if (!ret)
		ret = v2_write(drv, V2_SGFSR, 4, v);
	for (unsigned i = 0; !ret && i < drv->num_smrg; i++) {
		ret = v2_write(drv, V2_S2CR(i), 4, V2_S2CR_TYPE_FAULT);
		if (!ret)
			ret = v2_write(drv, V2_SMR(i), 4, 0);
	}
	for (unsigned i = 0; !ret && i < drv->num_cb; i++) {
		ret = v2_write(drv, v2_cb_off(drv, i, V2_CB_SCTLR), 4, 0);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, i, V2_CB_FSR), 4,
				       V2_FSR_FAULT);
	}
	if (!ret)
		ret = v2_write(drv, V2_TLBIALLH, 4, 0);
	if (!ret)
		ret = v2_write(drv, V2_TLBIALLNSNH, 4, 0);
	if (!ret)
		ret = v2_global_sync(drv);
	if (!ret)
		ret = v2_write(drv, V2_SCR0, 4,
			       V2_SCR0_GFRE | V2_SCR0_GFIE | V2_SCR0_GCFGFRE |
			       V2_SCR0_GCFGFIE | V2_SCR0_USFCFG |
			       V2_SCR0_VMIDPNE | V2_SCR0_PTM);
	return ret;
}

int iopt_smmuv2_drv_probe(const struct iopt_smmuv2_drv_cfg *cfg,
			  struct iopt_smmuv2_drv **out)
{
	struct iopt_smmuv2_drv *drv;
	enum plat_lock_kind lk;
	uint64_t id0 = 0, id1 = 0;
	int ret;

	if (!cfg || !cfg->smmu || !out || cfg->sync > IOPT_SMMUV2_DRV_SYNC_GLOBAL ||
	    (unsigned)cfg->sync_poll > IOPT_SMMUV2_DRV_POLL_UDELAY1)
		return -EINVAL;
	ret = plat_lock_kind(cfg->lock_kind, PLAT_LOCK_TTAS, &lk);
	if (ret)
		return ret;
	drv = drv_zalloc(sizeof(*drv), _Alignof(struct iopt_smmuv2_drv));
	if (!drv)
		return -ENOMEM;
	if (drv_stats_init(&drv->st, sizeof(struct iopt_smmuv2_drv_stats)) ||
	    drv_stats_init(&drv->polling, sizeof(uint64_t)) ||
	    plat_mutex_init(&drv->cfg_lock)) {
		drv_stats_fini(&drv->polling);
		drv_stats_fini(&drv->st);
		free(drv);
		return -ENOMEM;
	}
	drv->cfg = *cfg;
	drv->smmu = cfg->smmu;
	drv->cfg.lock_kind = lk;		/* resolved: the domains' locks too */
	if (!drv->cfg.mmio_cycles)
		drv->cfg.mmio_cycles = 10;
	if (!drv->cfg.cycles_per_sec)
		drv->cfg.cycles_per_sec = 1000000000u;
	if (!drv->cfg.host_timeout_ns)
		drv->cfg.host_timeout_ns = 10000000000u;
	drv->timeout_cycles = cfg->sync_timeout_cycles;
	drv_tl_init(&drv->tl, cfg->smmu, cfg->clock, cfg->clock_ctx,
		    cfg->start_cycle);
	plat_lock_init(&drv->global_sync, lk);
	ret = v2_read(drv, V2_ID0, 4, &id0);
	if (!ret)
		ret = v2_read(drv, V2_ID1, 4, &id1);
	if (ret)
		goto fail;
	/* ID0: S1TS 30, S2TS 29, PTFS 25:24, NUMSIDB 12:9, NUMSMRG 7:0; ID1: PAGESIZE 31,
	 * NUMPAGENDXB 30:28, NUMS2CB 23:16, NUMCB 7:0. */
	drv->s1 = id0 & (1u << 30);
	drv->s2 = id0 & (1u << 29);
	/* PTFS as Linux reads it: NO_AARCH32 25, NO_AARCH32S 24. */
	drv->aarch32l = !(id0 & (1u << 25));
	drv->aarch32s = !(id0 & (1u << 24));
	drv->numsidb = fld(id0, 12, 9);
	drv->num_smrg = fld(id0, 7, 0);
	drv->pgsize = (id1 & (1u << 31)) ? 65536 : 4096;
	drv->cb_base = drv->pgsize << (fld(id1, 30, 28) + 1);
	drv->num_s2cb = fld(id1, 23, 16);
	drv->num_cb = fld(id1, 7, 0);
	ret = -ENODEV;
	if ((!drv->s1 && !drv->s2) || !drv->num_cb || !drv->num_smrg)
		goto fail;
	if (drv->num_cb > V2_MAX_CB)
		drv->num_cb = V2_MAX_CB;
	ret = -ENOMEM;
	drv->smr_sid = malloc(drv->num_smrg * sizeof(*drv->smr_sid));
	drv->smr_mask = calloc(drv->num_smrg, sizeof(*drv->smr_mask));
	drv->smr_dom = calloc(drv->num_smrg, sizeof(*drv->smr_dom));
	if (!drv->smr_sid || !drv->smr_mask || !drv->smr_dom)
		goto fail;
	for (unsigned i = 0; i < drv->num_smrg; i++)
		drv->smr_sid[i] = UINT32_MAX;
	ret = reset(drv);
	if (ret)
		goto fail;
	*out = drv;
	return 0;
fail:
	free(drv->smr_sid);
	free(drv->smr_mask);
	free(drv->smr_dom);
	plat_mutex_destroy(&drv->cfg_lock);
	drv_stats_fini(&drv->polling);
	drv_stats_fini(&drv->st);
	free(drv);
	return ret;
}

void iopt_smmuv2_drv_remove(struct iopt_smmuv2_drv *drv)
{
	if (!drv)
		return;
	v2_write(drv, V2_SCR0, 4, V2_SCR0_CLIENTPD);
	free(drv->smr_sid);
	free(drv->smr_mask);
	free(drv->smr_dom);
	plat_mutex_destroy(&drv->cfg_lock);
	drv_stats_fini(&drv->polling);
	drv_stats_fini(&drv->st);
	free(drv);
}

void iopt_smmuv2_drv_get_stats(const struct iopt_smmuv2_drv *drv,
			       struct iopt_smmuv2_drv_stats *st)
{
	if (!drv || !st)
		return;
	/* A snapshot of the per-CPU counters (drv_stats.h). */
	drv_stats_sum(&drv->st, st, sizeof(*st));
}

/* A free bank for a domain of this stage, taken. Call with cfg_lock. */
static int take_bank(struct iopt_smmuv2_drv *drv, unsigned stage, unsigned *out)
{
	unsigned cb;

	/* Banks below NUMS2CB can do stage 2 only. */
	for (cb = stage == 1 ? drv->num_s2cb : 0; cb < drv->num_cb; cb++)
		if (!(drv->banks[cb / 64] & (1ull << (cb % 64))))
			break;
	if (cb >= drv->num_cb)
		return -ENOSPC;
	drv->banks[cb / 64] |= 1ull << (cb % 64);
	*out = cb;
	return 0;
}

int iopt_smmuv2_drv_domain_alloc(struct iopt_smmuv2_drv *drv, unsigned stage,
				 struct iopt_smmuv2_drv_domain **out)
{
	struct iopt_smmuv2_drv_domain *dom;
	unsigned cb;
	int ret;

	if (!drv || !out || (stage != 1 && stage != 2) ||
	    (stage == 1 && !drv->s1) || (stage == 2 && !drv->s2))
		return -EINVAL;
	dom = drv_zalloc(sizeof(*dom), _Alignof(struct iopt_smmuv2_drv_domain));
	if (!dom)
		return -ENOMEM;
	plat_mutex_lock(&drv->cfg_lock);
	ret = take_bank(drv, stage, &cb);
	plat_mutex_unlock(&drv->cfg_lock);
	if (ret) {
		free(dom);
		return ret;
	}
	dom->drv = drv;
	dom->stage = stage;
	dom->cb = cb;
	dom->asid = (uint16_t)cb;		/* Linux: ASID = bank */
	dom->vmid = (uint16_t)(cb + 1);		/* VMID = bank + 1 */
	plat_lock_init(&dom->lock, (enum plat_lock_kind)drv->cfg.lock_kind);
	*out = dom;
	return 0;
}

int iopt_smmuv2_drv_domain_alloc_nested(struct iopt_smmuv2_drv_domain *s2,
					struct iopt_smmuv2_drv_domain **out)
{
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_smmuv2_drv *drv;
	unsigned cb;
	int ret;

	if (!s2 || !out || s2->stage != 2 || s2->parent)
		return -EINVAL;
	drv = s2->drv;
	if (!drv->s1)
		return -EINVAL;
	dom = drv_zalloc(sizeof(*dom), _Alignof(struct iopt_smmuv2_drv_domain));
	if (!dom)
		return -ENOMEM;
	plat_mutex_lock(&drv->cfg_lock);
	/* Relaxed: s2->pt is written under cfg_lock, held here. */
	ret = plat_load_rlx64(&s2->pt) ? take_bank(drv, 1, &cb) : -EINVAL;
	/* Relaxed store under cfg_lock; pairs with the relaxed load in
	 * iopt_smmuv2_drv_tlb_sync() (a count, no data published by it). */
	if (!ret)
		plat_store_rlx32(&s2->nr_nested, plat_load_rlx32(&s2->nr_nested) + 1);
	plat_mutex_unlock(&drv->cfg_lock);
	if (ret) {
		free(dom);
		return ret;
	}
	dom->drv = drv;
	dom->stage = 1;
	dom->cb = cb;
	dom->asid = (uint16_t)cb;
	/* The model tags nested entries with the stage 2 bank's VMID. */
	dom->vmid = s2->vmid;
	dom->parent = s2;
	plat_lock_init(&dom->lock, (enum plat_lock_kind)drv->cfg.lock_kind);
	*out = dom;
	return 0;
}

unsigned iopt_smmuv2_drv_domain_cb(const struct iopt_smmuv2_drv_domain *dom)
{
	return dom ? dom->cb : ~0u;
}

int iopt_smmuv2_drv_domain_free(struct iopt_smmuv2_drv_domain *dom)
{
	struct iopt_smmuv2_drv *drv;
	int ret = 0;

	if (!dom)
		return 0;
	drv = dom->drv;
	plat_mutex_lock(&drv->cfg_lock);
	if (dom->nr_sids || plat_load_rlx32(&dom->nr_nested)) {
		plat_mutex_unlock(&drv->cfg_lock);
		return -EBUSY;
	}
	plat_mutex_unlock(&drv->cfg_lock);
	/* Acquire pairs with bind_table()'s release (nothing runs on a
	 * domain being freed: the acquire is for symmetry with dom_bound). */
	if (plat_load_acq64(&dom->pt)) {
		v2_write(drv, v2_cb_off(drv, dom->cb, V2_CB_SCTLR), 4, 0);
		if (dom->stage == 2) {
			ret = v2_write(drv, V2_TLBIVMID, 4, dom->vmid);
			if (!ret)
				ret = v2_global_sync(drv);
		} else {
			uint64_t val, all = v2_inv_all_reg(dom, &val);

			ret = v2_write(drv, v2_cb_off(drv, dom->cb, all), 4, val);
			if (!ret)
				ret = iopt_smmuv2_drv_tlb_sync(dom);
		}
	}
	plat_mutex_lock(&drv->cfg_lock);
	drv->banks[dom->cb / 64] &= ~(1ull << (dom->cb % 64));
	if (dom->parent)	/* as in domain_alloc_nested() */
		plat_store_rlx32(&dom->parent->nr_nested,
				 plat_load_rlx32(&dom->parent->nr_nested) - 1);
	plat_mutex_unlock(&drv->cfg_lock);
	free(dom);
	return ret;
}

/*
 * Program the bank from the table's registers, then enable it. Called
 * under cfg_lock at the first attach.
 */
static int bind_table(struct iopt_smmuv2_drv_domain *dom,
		      struct iopt_pgtable *pt)
{
	struct iopt_smmuv2_drv *drv = dom->drv;
	struct iopt_pgtable_info info;
	unsigned cb = dom->cb;
	uint32_t cbar, sctlr;
	int ret;

	iopt_pgtable_get_info(pt, &info);
	switch (info.fmt) {
	case IOPT_ARM_64_LPAE_S1:
		if (dom->stage != 1)
			return -EINVAL;
		break;
	case IOPT_ARM_32_LPAE_S1:
		if (dom->stage != 1 || !drv->aarch32l)
			return -EINVAL;
		break;
	case IOPT_ARM_V7S:
		if (dom->stage != 1 || !drv->aarch32s)
			return -EINVAL;
		break;
	case IOPT_ARM_64_LPAE_S2:
		if (dom->stage != 2)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	dom->va64 = info.fmt != IOPT_ARM_32_LPAE_S1 && info.fmt != IOPT_ARM_V7S;
	dom->v7s = info.fmt == IOPT_ARM_V7S;
	dom->pgsizes = info.pgsize_bitmap;
	dom->granule = info.granule;
	/* Nested: an AArch64 stage 1 over the parent's stage 2. */
	if (dom->parent && info.fmt != IOPT_ARM_64_LPAE_S1)
		return -EINVAL;
	/* CBAR: VMID 7:0, TYPE 17:16 (0 stage 2, 1 stage 1 + stage 2
	 * bypass, 3 stage 1 then the stage 2 of bank CBNDX 15:8). Stage 1
	 * banks get a VMID too (the model tags TLB entries with it): bank +
	 * 1, as stage 2; a nested bank its stage 2's. */
	cbar = dom->vmid & 0xff;
	if (dom->parent)
		cbar |= V2_CBAR_TYPE_NESTED | (dom->parent->cb & 0xff) << 8;
	else
		cbar |= dom->stage == 2 ? V2_CBAR_TYPE_S2 : V2_CBAR_TYPE_S1_BYPASS;
	ret = v2_write(drv, drv->pgsize + V2_CBA2R(cb), 4,
		       dom->va64 ? V2_CBA2R_VA64 : 0);
	if (!ret)
		ret = v2_write(drv, drv->pgsize + V2_CBAR(cb), 4, cbar);
	if (ret)
		return ret;
	if (dom->stage == 1 && dom->va64) {
		/* TCR_EL1 layout: IPS 34:32 goes to TCR2.PASIZE, the low word
		 * (TTBR1 walks off: EPD1) to TCR; ASID in TTBR0 63:48. */
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TCR2), 4,
			       fld(info.regs.tcr, 34, 32));
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TTBR0), 8,
				       info.regs.ttbr | ((uint64_t)dom->asid << 48));
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TCR), 4,
				       (uint32_t)info.regs.tcr | V2_TCR_EPD1);
	} else if (info.fmt == IOPT_ARM_V7S) {
		/* AArch32 short descriptor: TTBR0 (32 bits), TTBCR with EAE
		 * = 0 (N, PD1 from the table), the ASID in CONTEXTIDR 7:0;
		 * TEX remap: MAIR0 holds PRRR and MAIR1 NMRR (as Linux's
		 * arm-smmu programs an AArch32-S bank). */
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TTBR0), 8,
			       info.regs.ttbr & 0xffffffffu);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TCR), 4,
				       (uint32_t)info.regs.tcr & ~V2_TCR_EAE);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_CONTEXTIDR), 4,
				       dom->asid & 0xffu);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_MAIR0), 4,
				       info.regs.prrr);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_MAIR1), 4,
				       info.regs.nmrr);
	} else if (dom->stage == 1) {
		/* AArch32 LPAE: TTBCR (EAE), ASID in TTBR0 55:48. */
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TTBR0), 8,
			       info.regs.ttbr | ((uint64_t)(dom->asid & 0xff) << 48));
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TCR), 4,
				       (uint32_t)info.regs.tcr | V2_TCR_EPD1);
	} else {
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TTBR0), 8,
			       info.regs.ttbr);
		if (!ret)
			ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_TCR), 4,
				       (uint32_t)info.regs.tcr);
	}
	if (!ret && dom->stage == 1 && info.fmt != IOPT_ARM_V7S)
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_MAIR0), 4,
			       (uint32_t)info.regs.mair);
	if (!ret && dom->stage == 1 && info.fmt != IOPT_ARM_V7S)
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_MAIR1), 4,
			       (uint32_t)(info.regs.mair >> 32));
	if (!ret)
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_FSR), 4, V2_FSR_FAULT);
	sctlr = V2_SCTLR_M | V2_SCTLR_AFE | V2_SCTLR_CFRE | V2_SCTLR_CFIE;
	if (dom->stage == 1)
		sctlr |= V2_SCTLR_TRE;
	if (drv->cfg.stall)
		sctlr |= V2_SCTLR_CFCFG;
	if (!ret)
		ret = v2_write(drv, v2_cb_off(drv, cb, V2_CB_SCTLR), 4, sctlr);
	if (ret)
		return ret;
	/* Release pairs with dom_bound()'s acquire (smmuv2_tlb.c). */
	plat_store_rel64(&dom->pt, (uint64_t)(uintptr_t)pt);
	return 0;
}

/* Whether SMR entries (id, mask) and (id2, mask2) match a common
 * StreamID: the bits neither masks ignores are equal. */
static bool smr_overlap(uint32_t id, uint32_t mask, uint32_t id2,
			uint32_t mask2)
{
	return !((id ^ id2) & ~(mask | mask2));
}

int iopt_smmuv2_drv_attach_masked(struct iopt_smmuv2_drv_domain *dom,
				  struct iopt_pgtable *pt, uint32_t id,
				  uint32_t mask)
{
	struct iopt_smmuv2_drv *drv;
	unsigned free_smr = ~0u;
	uint64_t bound;
	int ret = 0;

	if (!dom || !pt)
		return -EINVAL;
	drv = dom->drv;
	/* ID and MASK are NUMSIDB bits wide (SMR ID 14:0, MASK 30:16); an
	 * ID bit under the mask is ignored by the match, so only the
	 * canonical form (id & mask == 0) is accepted. */
	if ((id | mask) >> drv->numsidb || (id & mask))
		return -EINVAL;
	plat_mutex_lock(&drv->cfg_lock);
	/* Relaxed: dom->pt is written only under cfg_lock, held here; the
	 * release in bind_table() is for the TLB ops' acquire. */
	bound = plat_load_rlx64(&dom->pt);
	if (bound && bound != (uint64_t)(uintptr_t)pt) {
		ret = -EINVAL;
		goto out;
	}
	/* An entry matching a StreamID another valid entry matches would
	 * be a stream match conflict (sGFSR.SMCF, or "at worst they go
	 * somewhere"): refused, whichever domain owns the other entry. */
	for (unsigned i = 0; i < drv->num_smrg; i++) {
		if (drv->smr_sid[i] == UINT32_MAX) {
			if (free_smr == ~0u)
				free_smr = i;
			continue;
		}
		if (smr_overlap(id, mask, drv->smr_sid[i], drv->smr_mask[i])) {
			ret = -EBUSY;
			goto out;
		}
	}
	if (free_smr == ~0u) {
		ret = -ENOSPC;
		goto out;
	}
	if (!bound && (ret = bind_table(dom, pt)))
		goto out;
	/* S2CR first (translate = TYPE 0, CBNDX 7:0), then the SMR that
	 * routes to it (VALID 31, MASK 30:16, ID 14:0). */
	ret = v2_write(drv, V2_S2CR(free_smr), 4, dom->cb);
	if (!ret)
		ret = v2_write(drv, V2_SMR(free_smr), 4,
			       V2_SMR_VALID | mask << V2_SMR_MASK_SHIFT | id);
	if (ret)
		goto out;
	drv->smr_sid[free_smr] = id;
	drv->smr_mask[free_smr] = mask;
	drv->smr_dom[free_smr] = dom;
	dom->nr_sids++;
out:
	plat_mutex_unlock(&drv->cfg_lock);
	return ret;
}

int iopt_smmuv2_drv_bind(struct iopt_smmuv2_drv_domain *dom,
			 struct iopt_pgtable *pt)
{
	uint64_t bound;
	int ret = 0;

	if (!dom || !pt)
		return -EINVAL;
	plat_mutex_lock(&dom->drv->cfg_lock);
	/* Relaxed: written under cfg_lock, held here. */
	bound = plat_load_rlx64(&dom->pt);
	if (bound != (uint64_t)(uintptr_t)pt)
		ret = bound ? -EINVAL : bind_table(dom, pt);
	plat_mutex_unlock(&dom->drv->cfg_lock);
	return ret;
}

int iopt_smmuv2_drv_attach(struct iopt_smmuv2_drv_domain *dom,
			   struct iopt_pgtable *pt, uint32_t sid)
{
	return iopt_smmuv2_drv_attach_masked(dom, pt, sid, 0);
}

int iopt_smmuv2_drv_detach_masked(struct iopt_smmuv2_drv_domain *dom,
				  uint32_t id, uint32_t mask)
{
	struct iopt_smmuv2_drv *drv;
	int ret = -EINVAL;

	if (!dom)
		return -EINVAL;
	drv = dom->drv;
	plat_mutex_lock(&drv->cfg_lock);
	for (unsigned i = 0; i < drv->num_smrg; i++) {
		if (drv->smr_sid[i] != id || drv->smr_mask[i] != mask ||
		    drv->smr_dom[i] != dom)
			continue;
		/* SMR invalid first, then S2CR back to fault. */
		ret = v2_write(drv, V2_SMR(i), 4, 0);
		if (!ret)
			ret = v2_write(drv, V2_S2CR(i), 4, V2_S2CR_TYPE_FAULT);
		drv->smr_sid[i] = UINT32_MAX;
		drv->smr_mask[i] = 0;
		drv->smr_dom[i] = NULL;
		dom->nr_sids--;
		break;
	}
	plat_mutex_unlock(&drv->cfg_lock);
	return ret;
}

int iopt_smmuv2_drv_detach(struct iopt_smmuv2_drv_domain *dom, uint32_t sid)
{
	return iopt_smmuv2_drv_detach_masked(dom, sid, 0);
}
