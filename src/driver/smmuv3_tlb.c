/* SPDX-License-Identifier: MIT */
/*
 * TLB maintenance for page tables attached through the SMMUv3 driver: struct
 * iopt_pgtable_tlb_ops over the command queue.
 *
 * Stage 1: TLBI_NH_VA (by ASID, VMID 0) and TLBI_NH_ASID; stage 2:
 * TLBI_S2_IPA and TLBI_S12_VMALL (IHI0070 4.4). With IDR3.RIL a range
 * becomes range commands (4.4.1.1: TG = translation granule, the range
 * is (NUM + 1) << SCALE pages of it, TTL the leaf level); without it, one
 * command per step. A range above the configured size, or (with RIL) one
 * of 2^36 granules or more, becomes one TLBI of the whole ASID/VMID.
 */
#include <errno.h>
#include <string.h>

#include "smmuv3_drv_internal.h"

#define RANGE_NUM_MAX	31	/* NUM is 5 bits: 1 to 32 pages; 31 as Linux */
/* SCALE is 5 bits with SMMU_IDR5.DS = 0 (4.4.1.1): at most 2^31 granules
 * a step, so one command covers less than 2^36 granules. */
#define RANGE_SCALE_MAX	31

/* The domain if it has been attached (bound to a table), else NULL. */
static struct iopt_smmuv3_drv_domain *dom_bound(void *cookie)
{
	struct iopt_smmuv3_drv_domain *dom = cookie;

	/* Acquire pairs with domain_bind()'s release: pgsizes and
	 * granule_lg2 are set. */
	return dom && plat_load_acq64(&dom->pt) ? dom : NULL;
}

/*
 * TTL (4.4.1.1): the level of the leaves, from the granule hint. 0 (no
 * hint) when granule is 0, not a leaf size of the table, or not a size
 * some level's descriptors have.
 */
static unsigned ttl_of(const struct iopt_smmuv3_drv_domain *dom, uint64_t granule)
{
	unsigned tg = dom->granule_lg2, lg;

	if (!granule || (granule & (granule - 1)) || !(granule & dom->pgsizes))
		return 0;
	lg = (unsigned)__builtin_ctzll(granule);
	if (lg < tg || (lg - 3) % (tg - 3))
		return 0;
	/* Level n descriptors map 2^(tg + (3 - n)(tg - 3)) bytes. */
	unsigned level = 4 - (lg - 3) / (tg - 3);

	return level >= 1 && level <= 3 ? level : 0;
}

struct batch {
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv3_cmd cmds[DRV_BATCH_MAX];
	unsigned n;
	int ret;
};

static void batch_add(struct batch *b, const struct iopt_smmuv3_cmd *c)
{
	if (b->n == DRV_BATCH_MAX) {
		int ret = iopt_smmuv3_drv_submit(b->drv, b->cmds, b->n, false);

		if (ret && !b->ret)
			b->ret = ret;
		b->n = 0;
	}
	b->cmds[b->n++] = *c;
}

static int batch_end(struct batch *b, bool sync)
{
	int ret = 0;

	if (b->n)
		ret = iopt_smmuv3_drv_submit(b->drv, b->cmds, b->n, sync);
	else if (sync)
		ret = iopt_smmuv3_drv_sync(b->drv);
	return b->ret ? b->ret : ret;
}

static int inv_range(struct iopt_smmuv3_drv_domain *dom, uint64_t iova,
		     uint64_t size, uint64_t granule, bool leaf, bool sync)
{
	struct iopt_smmuv3_drv *drv = dom->drv;
	struct batch b = { .drv = drv };
	struct iopt_smmuv3_cmd c = { 0 };
	unsigned tg_lg2 = dom->granule_lg2;
	uint64_t limit = drv->cfg.inv_all_bytes;
	uint64_t start = iova & ~((1ull << tg_lg2) - 1);
	uint64_t pages = (iova + size - start + (1ull << tg_lg2) - 1) >> tg_lg2;
	unsigned ttl = leaf ? ttl_of(dom, granule) : 0;

	if (!limit)
		limit = drv->info.ril ? UINT64_MAX :
			(uint64_t)512 << (ttl ? (unsigned)__builtin_ctzll(granule) : tg_lg2);
	/* With RIL, a count of 2^36 granules or more would need more
	 * commands at the largest SCALE than one of the ASID/VMID is worth. */
	if (size > limit ||
	    (drv->info.ril && pages >> RANGE_SCALE_MAX > RANGE_NUM_MAX)) {
		drv_domain_inv_all_cmd(dom, &c);
		drv_count(drv, flush_alls, 1);
		return iopt_smmuv3_drv_submit(drv, &c, 1, sync);
	}
	c.opcode = dom->stage == 1 ? IOPT_SMMUV3_CMD_TLBI_NH_VA : IOPT_SMMUV3_CMD_TLBI_S2_IPA;
	if (dom->stage == 1)
		c.asid = dom->id;
	else
		c.vmid = dom->id;
	c.leaf = leaf;
	if (drv->info.ril) {
		/*
		 * Range commands (4.4.1.1). TG 0b00 is "not a range", and
		 * TG != 0 with TTL = NUM = SCALE = 0 is reserved: a count
		 * whose low five bits are exactly 1 would start with such a
		 * one-page command when there is no TTL, so it is rounded
		 * up by one page first (the reference does the same).
		 */
		c.tg = (tg_lg2 - 10) / 2;
		c.ttl = ttl;
		if (!ttl && (pages & RANGE_NUM_MAX) == 1)
			pages++;
		c.addr = start;
		while (pages) {
			/* The lowest set bit's five-bit group of the count,
			 * or, from bit 31 up, all of it (fewer than 32, as
			 * checked above): SCALE never exceeds its field. */
			unsigned scale = (unsigned)__builtin_ctzll(pages);
			uint64_t num;

			if (scale > RANGE_SCALE_MAX)
				scale = RANGE_SCALE_MAX;
			num = pages >> scale;
			if (scale < RANGE_SCALE_MAX)
				num &= RANGE_NUM_MAX;
			uint64_t span = num << scale;

			c.scale = scale;
			c.num = (unsigned)num - 1;
			batch_add(&b, &c);
			c.addr += span << tg_lg2;
			pages -= span;
		}
	} else {
		/* One command per leaf (the hint's size) or per page. */
		unsigned step_lg2 = ttl ? (unsigned)__builtin_ctzll(granule) : tg_lg2;
		uint64_t end = start + (pages << tg_lg2);

		for (uint64_t a = iova & ~((1ull << step_lg2) - 1); a < end;
		     a += 1ull << step_lg2) {
			c.addr = a;
			batch_add(&b, &c);
			if (a + (1ull << step_lg2) < a)
				break;	/* top of the address space */
		}
	}
	return batch_end(&b, sync);
}

int iopt_smmuv3_drv_inv_range(struct iopt_smmuv3_drv_domain *dom,
			      uint64_t iova, uint64_t size, uint64_t granule,
			      bool leaf)
{
	if (!dom || !size || iova + size - 1 < iova)
		return -EINVAL;
	/* 4.1.6: an IPA field holds bits [51:12]. */
	if (dom->stage == 2 && (iova + size - 1) >> 52)
		return -EINVAL;
	if (!dom_bound(dom))
		return 0;
	return inv_range(dom, iova, size, granule, leaf, false);
}

static void tlb_failed(struct iopt_smmuv3_drv_domain *dom, int ret)
{
	if (ret)
		drv_count(dom->drv, tlb_errors, 1);
}

static void op_flush_all(void *cookie)
{
	struct iopt_smmuv3_drv_domain *dom = dom_bound(cookie);
	struct iopt_smmuv3_cmd c;

	if (!dom)
		return;
	drv_domain_inv_all_cmd(dom, &c);
	drv_count(dom->drv, flush_alls, 1);
	tlb_failed(dom, iopt_smmuv3_drv_submit(dom->drv, &c, 1, true));
}

static void op_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	struct iopt_smmuv3_drv_domain *dom = dom_bound(cookie);

	if (dom && size && iova + size - 1 >= iova)
		tlb_failed(dom, inv_range(dom, iova, size, granule, false, false));
}

static void op_add_page(struct iopt_pgtable_gather *gather, uint64_t iova,
			uint64_t granule, void *cookie)
{
	struct iopt_smmuv3_drv_domain *dom = dom_bound(cookie);

	if (dom)
		tlb_failed(dom, inv_range(dom, iova,
					  granule ? granule : 1ull << dom->granule_lg2,
					  granule, true, false));
}

static void op_sync(void *cookie)
{
	struct iopt_smmuv3_drv_domain *dom = dom_bound(cookie);

	if (dom)
		tlb_failed(dom, iopt_smmuv3_drv_sync(dom->drv));
}

static const struct iopt_pgtable_tlb_ops drv_tlb_ops = {
	.flush_all = op_flush_all,
	.flush_walk = op_flush_walk,
	.add_page = op_add_page,
	.sync = op_sync,
};

const struct iopt_pgtable_tlb_ops *iopt_smmuv3_drv_tlb_ops(void)
{
	return &drv_tlb_ops;
}
