/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 driver: probe, enable and remove; the stream table; domains and
 * their STEs and CDs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "smmuv3_drv_internal.h"
#include "smmuv3_regs.h"

#define STE_BYTES	64
#define PHYS_MAX_BLOCK	IOPT_PHYSMEM_FRAME

void iopt_smmuv3_drv_default_cfg(struct iopt_smmuv3_drv_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKFREE;
	cfg->sync = IOPT_SMMUV3_DRV_SYNC_MSI;
}

void iopt_smmuv3_drv_get_info(const struct iopt_smmuv3_drv *drv,
			      struct iopt_smmuv3_drv_info *info)
{
	*info = drv->info;
}

void iopt_smmuv3_drv_get_stats(const struct iopt_smmuv3_drv *drv,
			       struct iopt_smmuv3_drv_stats *st)
{
	/* A snapshot of the per-CPU counters (drv_stats.h). */
	drv_stats_sum(&drv->st, st, sizeof(*st));
}

/* ---- stream table ------------------------------------------------------- */

static void ste_abort_words(uint64_t w[8])
{
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_ABORT };

	iopt_smmuv3_ste_encode(&ste, w);
}

/* Fill a block of STEs with "abort" (5.2: V = 1, Config = 0b000). */
static void ste_fill_abort(uint64_t *ste, size_t count)
{
	uint64_t w[8];

	ste_abort_words(w);
	for (size_t i = 0; i < count; i++)
		memcpy(ste + i * 8, w, sizeof(w));
}

/* Host pointer to sid's STE, creating its leaf table (2-level) if need
 * be. Call with cfg_lock held. NULL: -ENOMEM. */
static uint64_t *ste_ptr(struct iopt_smmuv3_drv *drv, uint32_t sid, bool create)
{
	if (!drv->info.st_2lvl)
		return drv->strtab + (size_t)sid * 8;

	uint32_t l1 = sid >> STRTAB_SPLIT;
	size_t bytes = (size_t)STE_BYTES << STRTAB_SPLIT;

	if (!drv->l2_pa[l1]) {
		uint64_t pa;
		uint64_t *l2;

		if (!create || iopt_physmem_alloc(drv->pm, bytes, &pa))
			return NULL;
		l2 = iopt_physmem_ptr(drv->pm, pa, bytes);
		if (!l2) {
			iopt_physmem_free(drv->pm, pa, bytes);
			return NULL;
		}
		ste_fill_abort(l2, (size_t)1 << STRTAB_SPLIT);
		drv->l2_pa[l1] = pa;
		/*
		 * 5.1.2: Span = SPLIT + 1 covers the whole leaf table. One
		 * 64-bit store; release orders the leaf's STEs before it for
		 * a concurrent walker (the model reads under its own lock
		 * after the CFGI_STE that attach sends).
		 */
		plat_store_rel64(&drv->strtab[l1], L1_DESC(pa, STRTAB_SPLIT + 1));
	}
	return (uint64_t *)iopt_physmem_ptr(drv->pm, drv->l2_pa[l1], bytes) +
	       (size_t)(sid & ((1u << STRTAB_SPLIT) - 1)) * 8;
}

/*
 * Write an STE whose word 0 (V, Config, S1ContextPtr) is what decides:
 * words 1-7 first, then word 0 with release, so that the SMMU never sees
 * a Config with the previous configuration's other words (the STE being
 * replaced is "abort", which ignores them).
 */
static void ste_write(uint64_t *dst, const uint64_t w[8])
{
	for (int i = 1; i < 8; i++)
		plat_store_rlx64(&dst[i], w[i]);
	/* Release: pairs with the SMMU's fetch, ordered by the CFGI_STE
	 * that follows through the command queue (G2). */
	plat_store_rel64(&dst[0], w[0]);
}

static int strtab_init(struct iopt_smmuv3_drv *drv)
{
	if (drv->info.st_2lvl) {
		size_t n = (size_t)1 << (drv->info.sid_bits - STRTAB_SPLIT);

		drv->strtab_bytes = n * 8 < 64 ? 64 : n * 8;
		drv->l2_pa = calloc(n, sizeof(uint64_t));
		if (!drv->l2_pa)
			return -ENOMEM;
	} else {
		drv->strtab_bytes = (size_t)STE_BYTES << drv->info.sid_bits;
	}
	if (iopt_physmem_alloc(drv->pm, drv->strtab_bytes, &drv->strtab_pa)) {
		drv->strtab_bytes = 0;
		return -ENOMEM;
	}
	drv->strtab = iopt_physmem_ptr(drv->pm, drv->strtab_pa, drv->strtab_bytes);
	if (!drv->strtab)
		return -ENOMEM;
	if (!drv->info.st_2lvl)
		ste_fill_abort(drv->strtab, (size_t)1 << drv->info.sid_bits);
	drv->owner = calloc((size_t)1 << drv->info.sid_bits, sizeof(void *));
	return drv->owner ? 0 : -ENOMEM;
}

/* ---- probe / remove ----------------------------------------------------- */

static void drv_free(struct iopt_smmuv3_drv *drv)
{
	if (drv->l2_pa) {
		size_t n = (size_t)1 << (drv->info.sid_bits - STRTAB_SPLIT);

		for (size_t i = 0; i < n; i++)
			if (drv->l2_pa[i])
				iopt_physmem_free(drv->pm, drv->l2_pa[i],
						  (size_t)STE_BYTES << STRTAB_SPLIT);
		free(drv->l2_pa);
	}
	if (drv->strtab_bytes)
		iopt_physmem_free(drv->pm, drv->strtab_pa, drv->strtab_bytes);
	if (drv->evtq.bytes)
		iopt_physmem_free(drv->pm, drv->evtq.pa, drv->evtq.bytes);
	drv_cmdq_fini(drv);
	free(drv->owner);
	free(drv->asid_map);
	free(drv->vmid_map);
	plat_mutex_destroy(&drv->cfg_lock);
	drv_stats_fini(&drv->st);
	free(drv);
}

static int queue_log2(unsigned want, unsigned max, unsigned entry_bytes,
		      unsigned *out)
{
	unsigned l2 = want ? want : (max < 8 ? max : 8);

	if (l2 > max || l2 < 1 || ((uint64_t)entry_bytes << l2) > PHYS_MAX_BLOCK)
		return -EINVAL;
	*out = l2;
	return 0;
}

static int probe_features(struct iopt_smmuv3_drv *drv)
{
	const struct iopt_smmuv3_drv_cfg *cfg = &drv->cfg;
	struct iopt_smmuv3_drv_info *in = &drv->info;
	uint32_t idr0, idr1, idr3, idr5;
	unsigned sidsize, ttf, endian;
	int ret;

	if ((ret = drv_read32(drv, SMMU_IDR0, &idr0)) ||
	    (ret = drv_read32(drv, SMMU_IDR1, &idr1)) ||
	    (ret = drv_read32(drv, SMMU_IDR3, &idr3)) ||
	    (ret = drv_read32(drv, SMMU_IDR5, &idr5)))
		return ret;
	ttf = (idr0 >> IDR0_TTF_SHIFT) & 3;
	endian = (idr0 >> IDR0_TTENDIAN_SHIFT) & 3;
	/* 6.3.1: TTF 2 or 3 = AArch64 tables; TTENDIAN 0 mixed, 2 LE. */
	if ((ttf & 2) == 0 || endian == 1 || endian == 3 ||
	    (idr1 & (IDR1_QUEUES_PRESET | IDR1_TABLES_PRESET)))
		return -ENODEV;
	in->s1 = idr0 & IDR0_S1P;
	in->s2 = idr0 & IDR0_S2P;
	in->msi = idr0 & IDR0_MSI;
	in->sev = idr0 & IDR0_SEV;
	in->asid16 = idr0 & IDR0_ASID16;
	in->vmid16 = idr0 & IDR0_VMID16;
	in->ril = idr3 & IDR3_RIL;
	static const unsigned oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 48 };
	in->oas = oas_bits[IDR5_OAS(idr5)];
	if (!in->s1 && !in->s2)
		return -ENODEV;
	if ((ret = queue_log2(cfg->cmdq_log2, IDR1_CMDQS(idr1), DRV_CMD_BYTES,
			      &in->cmdq_log2)) ||
	    (ret = queue_log2(cfg->evtq_log2, IDR1_EVENTQS(idr1), DRV_EVT_BYTES,
			      &in->evtq_log2)))
		return ret;
	sidsize = IDR1_SIDSIZE(idr1);
	in->st_2lvl = !cfg->linear_strtab &&
		      ((idr0 >> IDR0_ST_LEVEL_SHIFT) & 3) == 1;
	in->sid_bits = cfg->sid_bits ? cfg->sid_bits :
		       sidsize < (in->st_2lvl ? 16u : 8u) ? sidsize :
		       (in->st_2lvl ? 16u : 8u);
	if (in->sid_bits > sidsize || in->sid_bits > 24)
		return -EINVAL;
	if (in->st_2lvl && in->sid_bits <= STRTAB_SPLIT)
		in->st_2lvl = false;	/* one leaf table: linear is it */
	if (!in->st_2lvl && ((uint64_t)STE_BYTES << in->sid_bits) > PHYS_MAX_BLOCK)
		return -EINVAL;
	in->cmdq = cfg->cmdq;
	in->sync = cfg->sync == IOPT_SMMUV3_DRV_SYNC_MSI && in->msi ?
		   IOPT_SMMUV3_DRV_SYNC_MSI : IOPT_SMMUV3_DRV_SYNC_CONS;
	drv->asid_bits = in->asid16 ? 16 : 8;
	drv->vmid_bits = in->vmid16 ? 16 : 8;
	return 0;
}

/* The reset sequence (IHI0070 3.3 initialisation; the order Linux uses). */
static int drv_enable(struct iopt_smmuv3_drv *drv)
{
	struct iopt_smmuv3_cmd init[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_CFGI_STE_RANGE, .range = 31 },	/* CFGI_ALL */
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
	};
	uint32_t cr0;
	int ret;

	if ((ret = drv_read32(drv, SMMU_CR0, &cr0)))
		return ret;
	if (cr0 && (ret = drv_write_ack(drv, SMMU_CR0, SMMU_CR0ACK, 0)))
		return ret;
	if ((ret = drv_write32(drv, SMMU_CR1, CR1_WBISH)) ||
	    (ret = drv_write32(drv, SMMU_CR2, CR2_RECINVSID)) ||
	    (ret = drv_write64(drv, SMMU_STRTAB_BASE,
			       drv->strtab_pa | STRTAB_BASE_RA)) ||
	    (ret = drv_write32(drv, SMMU_STRTAB_BASE_CFG,
			       drv->info.st_2lvl ?
			       STRTAB_CFG(drv->info.sid_bits, STRTAB_SPLIT, 1) :
			       STRTAB_CFG(drv->info.sid_bits, 0, 0))) ||
	    (ret = drv_write64(drv, SMMU_CMDQ_BASE, drv->cmdq.q.pa | Q_BASE_RWA |
			       drv->info.cmdq_log2)) ||
	    (ret = drv_write32(drv, SMMU_CMDQ_PROD, 0)) ||
	    (ret = drv_write32(drv, SMMU_CMDQ_CONS, 0)))
		return ret;
	/* 6.3.9: each enable is confirmed by CR0ACK before going on. */
	if ((ret = drv_write_ack(drv, SMMU_CR0, SMMU_CR0ACK, CR0_CMDQEN)))
		return ret;
	/* Release pairs with drv_cmdq_recover()'s acquire. */
	plat_store_rel32(&drv->cmdq.live, 1);
	if (!drv->info.s1)
		init[1].opcode = IOPT_SMMUV3_CMD_TLBI_S12_VMALL;	/* VMID 0 */
	if ((ret = iopt_smmuv3_drv_submit(drv, init, 2, true)))
		return ret;
	if ((ret = drv_write64(drv, SMMU_EVENTQ_BASE, drv->evtq.pa | Q_BASE_RWA |
			       drv->info.evtq_log2)) ||
	    (ret = drv_write32(drv, SMMU_EVENTQ_PROD, 0)) ||
	    (ret = drv_write32(drv, SMMU_EVENTQ_CONS, 0)))
		return ret;
	if ((ret = drv_write_ack(drv, SMMU_CR0, SMMU_CR0ACK,
				 CR0_CMDQEN | CR0_EVENTQEN)) ||
	    (ret = drv_write_ack(drv, SMMU_IRQ_CTRL, SMMU_IRQ_CTRLACK,
				 IRQ_CTRL_GERROR_IRQEN | IRQ_CTRL_EVENTQ_IRQEN)))
		return ret;
	return drv_write_ack(drv, SMMU_CR0, SMMU_CR0ACK,
			     CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN);
}

int iopt_smmuv3_drv_probe(const struct iopt_smmuv3_drv_cfg *cfg,
			  struct iopt_smmuv3_drv **out)
{
	struct iopt_smmuv3_drv *drv;
	enum plat_lock_kind lk;
	int ret;

	if (!cfg || !out || !cfg->smmu || !cfg->pm ||
	    (cfg->cmdq != IOPT_SMMUV3_DRV_CMDQ_LOCKFREE &&
	     cfg->cmdq != IOPT_SMMUV3_DRV_CMDQ_LOCKED) ||
	    (cfg->sync != IOPT_SMMUV3_DRV_SYNC_MSI &&
	     cfg->sync != IOPT_SMMUV3_DRV_SYNC_CONS) ||
	    plat_lock_kind(cfg->lock_kind, PLAT_LOCK_TTAS, &lk))
		return -EINVAL;
	/* 64-byte aligned: the command queue's written words each have a
	 * cache line of their own (struct drv_cmdq). sizeof is a multiple of
	 * the alignment, as aligned_alloc() wants. */
	drv = drv_zalloc(sizeof(*drv), _Alignof(struct iopt_smmuv3_drv));
	if (!drv)
		return -ENOMEM;
	if (drv_stats_init(&drv->st, sizeof(struct iopt_smmuv3_drv_stats))) {
		free(drv);
		return -ENOMEM;
	}
	if (plat_mutex_init(&drv->cfg_lock)) {
		drv_stats_fini(&drv->st);
		free(drv);
		return -ENOMEM;
	}
	drv->cfg = *cfg;
	drv->cfg.lock_kind = lk;	/* resolved (drv_cmdq_init) */
	drv->smmu = cfg->smmu;
	drv->pm = cfg->pm;
	if (!drv->cfg.mmio_cycles)
		drv->cfg.mmio_cycles = 10;
	if (!drv->cfg.cycles_per_sec)
		drv->cfg.cycles_per_sec = 1000000000u;
	if (!drv->cfg.host_timeout_ns)
		drv->cfg.host_timeout_ns = 10000000000u;
	drv->timeout_cycles = drv->cfg.sync_timeout_cycles ?
			      drv->cfg.sync_timeout_cycles : drv->cfg.cycles_per_sec;
	drv_tl_init(&drv->tl, cfg->smmu, cfg->clock, cfg->clock_ctx,
		    cfg->start_cycle);
	ret = probe_features(drv);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	drv->asid_map = calloc(((size_t)1 << drv->asid_bits) / 64, sizeof(uint64_t));
	drv->vmid_map = calloc(((size_t)1 << drv->vmid_bits) / 64, sizeof(uint64_t));
	if (!drv->asid_map || !drv->vmid_map)
		goto fail;
	drv->asid_map[0] = drv->vmid_map[0] = 1;	/* 0 stays unused */
	if ((ret = drv_cmdq_init(drv, drv->info.cmdq_log2)))
		goto fail;
	drv->evtq.bytes = (size_t)DRV_EVT_BYTES << drv->info.evtq_log2;
	if (iopt_physmem_alloc(drv->pm, drv->evtq.bytes, &drv->evtq.pa)) {
		drv->evtq.bytes = 0;
		goto fail;
	}
	drv->evtq.ring = iopt_physmem_ptr(drv->pm, drv->evtq.pa, drv->evtq.bytes);
	drv->evtq.log2 = drv->info.evtq_log2;
	drv->evtq.n = 1u << drv->evtq.log2;
	if (!drv->evtq.ring || (ret = strtab_init(drv)))
		goto fail;
	ret = drv_enable(drv);
	if (ret) {
		drv_write32(drv, SMMU_CR0, 0);
		goto fail;
	}
	*out = drv;
	return 0;
fail:
	drv_free(drv);
	return ret;
}

void iopt_smmuv3_drv_remove(struct iopt_smmuv3_drv *drv)
{
	if (!drv)
		return;
	/* Errors ignored: the memory goes either way. */
	drv_write_ack(drv, SMMU_IRQ_CTRL, SMMU_IRQ_CTRLACK, 0);
	drv_write_ack(drv, SMMU_CR0, SMMU_CR0ACK, 0);
	drv_free(drv);
}

/* ---- domains ------------------------------------------------------------ */

static int id_alloc(struct iopt_smmuv3_drv *drv, uint64_t *map, unsigned bits)
{
	int id = -ENOSPC;

	plat_mutex_lock(&drv->cfg_lock);
	for (size_t w = 0; w < ((size_t)1 << bits) / 64; w++) {
		if (map[w] != ~0ull) {
			unsigned b = (unsigned)__builtin_ctzll(~map[w]);

			map[w] |= 1ull << b;
			id = (int)(w * 64 + b);
			break;
		}
	}
	plat_mutex_unlock(&drv->cfg_lock);
	return id;
}

static void id_free(struct iopt_smmuv3_drv *drv, uint64_t *map, unsigned id)
{
	plat_mutex_lock(&drv->cfg_lock);
	map[id / 64] &= ~(1ull << (id % 64));
	plat_mutex_unlock(&drv->cfg_lock);
}

void drv_domain_inv_all_cmd(const struct iopt_smmuv3_drv_domain *dom,
			    struct iopt_smmuv3_cmd *c)
{
	memset(c, 0, sizeof(*c));
	if (dom->stage == 1) {
		c->opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID;
		c->asid = dom->id;
	} else {
		c->opcode = IOPT_SMMUV3_CMD_TLBI_S12_VMALL;
		c->vmid = dom->id;
	}
}

int iopt_smmuv3_drv_domain_alloc(struct iopt_smmuv3_drv *drv, unsigned stage,
				 struct iopt_smmuv3_drv_domain **out)
{
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_cmd c;
	int id, ret;

	if (!drv || !out || (stage == 1 && !drv->info.s1) ||
	    (stage == 2 && !drv->info.s2) || (stage != 1 && stage != 2))
		return -EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -ENOMEM;
	dom->drv = drv;
	dom->stage = stage;
	id = stage == 1 ? id_alloc(drv, drv->asid_map, drv->asid_bits) :
			  id_alloc(drv, drv->vmid_map, drv->vmid_bits);
	if (id < 0) {
		free(dom);
		return id;
	}
	dom->id = (uint16_t)id;
	if (stage == 1 && iopt_physmem_alloc(drv->pm, 64, &dom->cd_pa)) {
		ret = -ENOMEM;
		goto fail;
	}
	drv_domain_inv_all_cmd(dom, &c);
	ret = iopt_smmuv3_drv_submit(drv, &c, 1, true);
	if (ret)
		goto fail;
	*out = dom;
	return 0;
fail:
	if (dom->cd_pa)
		iopt_physmem_free(drv->pm, dom->cd_pa, 64);
	id_free(drv, stage == 1 ? drv->asid_map : drv->vmid_map, dom->id);
	free(dom);
	return ret;
}

unsigned iopt_smmuv3_drv_domain_id(const struct iopt_smmuv3_drv_domain *dom)
{
	return dom->id;
}

int iopt_smmuv3_drv_domain_free(struct iopt_smmuv3_drv_domain *dom)
{
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv3_cmd c;
	unsigned busy;
	int ret;

	if (!dom)
		return 0;
	drv = dom->drv;
	plat_mutex_lock(&drv->cfg_lock);
	busy = dom->nr_sids;
	plat_mutex_unlock(&drv->cfg_lock);
	if (busy)
		return -EBUSY;
	drv_domain_inv_all_cmd(dom, &c);
	ret = iopt_smmuv3_drv_submit(drv, &c, 1, true);
	if (dom->cd_pa)
		iopt_physmem_free(drv->pm, dom->cd_pa, 64);
	id_free(drv, dom->stage == 1 ? drv->asid_map : drv->vmid_map, dom->id);
	free(dom);
	return ret;
}

/* Bind pt to dom on its first attach. Call with cfg_lock held. */
static int domain_bind(struct iopt_smmuv3_drv_domain *dom,
		       struct iopt_pgtable *pt)
{
	struct iopt_smmuv3_drv *drv = dom->drv;
	struct iopt_pgtable_info info;

	if (dom->pt)
		return dom->pt == (uint64_t)(uintptr_t)pt ? 0 : -EINVAL;
	iopt_pgtable_get_info(pt, &info);
	if (dom->stage == 1) {
		struct iopt_smmuv3_cd cd;
		uint64_t w[8];
		uint64_t *dst = iopt_physmem_ptr(drv->pm, dom->cd_pa, 64);

		if (info.fmt != IOPT_ARM_64_LPAE_S1 ||
		    iopt_smmuv3_cd_from_pgtable(pt, dom->id, &cd) || !dst ||
		    iopt_smmuv3_cd_encode(&cd, w))
			return -EINVAL;
		ste_write(dst, w);	/* same rule: word 0 (V) last */
	} else {
		struct iopt_smmuv3_ste ste = { 0 };

		if (info.fmt != IOPT_ARM_64_LPAE_S2 ||
		    iopt_smmuv3_ste_s2_from_pgtable(pt, dom->id, &ste))
			return -EINVAL;
	}
	dom->pgsizes = info.pgsize_bitmap;
	dom->granule_lg2 = (unsigned)__builtin_ctz(info.granule);
	/* Release pairs with the acquire load in the TLB ops: they see the
	 * geometry above once they see pt. */
	plat_store_rel64(&dom->pt, (uint64_t)(uintptr_t)pt);
	return 0;
}

int iopt_smmuv3_drv_attach(struct iopt_smmuv3_drv_domain *dom,
			   struct iopt_pgtable *pt, uint32_t sid)
{
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_CFGI_STE, .leaf = true };
	struct iopt_smmuv3_ste ste = { .valid = true };
	uint64_t w[8], *dst;
	int ret;

	if (!dom || !pt)
		return -EINVAL;
	drv = dom->drv;
	if (sid >> drv->info.sid_bits)
		return -EINVAL;
	plat_mutex_lock(&drv->cfg_lock);
	if (drv->owner[sid]) {
		ret = -EBUSY;
		goto out;
	}
	if ((ret = domain_bind(dom, pt)))
		goto out;
	if (dom->stage == 1) {
		ste.config = IOPT_SMMUV3_STE_S1;
		ste.s1_fmt = 0;			/* one CD, linear */
		ste.s1_context_ptr = dom->cd_pa;
		ste.s1_cd_max = 0;
	} else {
		ste.config = IOPT_SMMUV3_STE_S2;
		iopt_smmuv3_ste_s2_from_pgtable(pt, dom->id, &ste);
	}
	if (iopt_smmuv3_ste_encode(&ste, w)) {
		ret = -EINVAL;	/* a table address the STE cannot hold */
		goto out;
	}
	dst = ste_ptr(drv, sid, true);
	if (!dst) {
		ret = -ENOMEM;
		goto out;
	}
	ste_write(dst, w);
	drv->owner[sid] = dom;
	dom->nr_sids++;
out:
	plat_mutex_unlock(&drv->cfg_lock);
	if (ret)
		return ret;
	c.sid = sid;		/* 4.3.2: the SMMU drops its cached copy */
	return iopt_smmuv3_drv_submit(drv, &c, 1, true);
}

int iopt_smmuv3_drv_detach(struct iopt_smmuv3_drv_domain *dom, uint32_t sid)
{
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_CFGI_STE, .leaf = true };
	uint64_t w[8], *dst;

	if (!dom)
		return -EINVAL;
	drv = dom->drv;
	if (sid >> drv->info.sid_bits)
		return -EINVAL;
	plat_mutex_lock(&drv->cfg_lock);
	if (drv->owner[sid] != dom) {
		plat_mutex_unlock(&drv->cfg_lock);
		return -EINVAL;
	}
	dst = ste_ptr(drv, sid, false);
	ste_abort_words(w);
	/* Word 0 alone turns the STE to abort; the others are ignored. */
	plat_store_rel64(&dst[0], w[0]);
	drv->owner[sid] = NULL;
	dom->nr_sids--;
	plat_mutex_unlock(&drv->cfg_lock);
	c.sid = sid;
	return iopt_smmuv3_drv_submit(drv, &c, 1, true);
}
