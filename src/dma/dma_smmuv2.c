/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer's driver ops over the SMMUv2 driver (iopgtable/smmuv2_drv.h).
 * sync is the domain's context-bank TLBSYNC (every by-address invalidation of a
 * domain is written to its bank); flush_all is TLBIASID + TLBSYNC, or TLBIVMID
 * + sTLBGSYNC at stage 2.
 *
 * Before its first attach a domain's bank is not programmed (the driver
 * binds the table then) and no stream reaches it, so no TLB can hold a
 * translation of it: the invalidation ops succeed and do nothing, as
 * struct iopt_dma_drv_ops asks and the SMMUv3 ops do (the driver's own
 * by-address and flush-all calls refuse such a domain with -EINVAL). The
 * internal header is used for that one check (the domain's bound table
 * and the lock its first attach takes).
 */
#include <errno.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv2_drv.h>

#include "../driver/smmuv2_drv_internal.h"

static int v2_domain_alloc(void *drv, unsigned stage, void **dom)
{
	struct iopt_smmuv2_drv_domain *d;
	int ret = iopt_smmuv2_drv_domain_alloc(drv, stage, &d);

	if (!ret)
		*dom = d;
	return ret;
}

static int v2_domain_free(void *dom)
{
	return iopt_smmuv2_drv_domain_free(dom);
}

static int v2_attach(void *dom, struct iopt_pgtable *pt, uint32_t sid)
{
	return iopt_smmuv2_drv_attach(dom, pt, sid);
}

static int v2_detach(void *dom, uint32_t sid)
{
	return iopt_smmuv2_drv_detach(dom, sid);
}

/*
 * Has no attach bound a table to dom yet? A table once bound stays until
 * the domain is freed, so a non-NULL acquire load (pairing with
 * bind_table()'s release) is final. NULL is checked again under
 * cfg_lock, which the first attach holds from binding the table until
 * the SMR routes a stream to the bank: seen NULL there, that attach has
 * not begun, and it begins after the caller's page-table change (made
 * before this call), so no walk can fetch the entry it replaced.
 */
static bool v2_unbound(struct iopt_smmuv2_drv_domain *dom)
{
	bool none;

	if (plat_load_acq64(&dom->pt))
		return false;
	plat_mutex_lock(&dom->drv->cfg_lock);
	/* Relaxed: written only under cfg_lock, held here. */
	none = !plat_load_rlx64(&dom->pt);
	plat_mutex_unlock(&dom->drv->cfg_lock);
	return none;
}

static int v2_inv_range(void *dom, uint64_t iova, uint64_t size,
			uint64_t granule, bool leaf)
{
	if (v2_unbound(dom))
		return 0;
	return iopt_smmuv2_drv_inv_range(dom, iova, size, granule, leaf);
}

static int v2_sync(void *dom)
{
	if (v2_unbound(dom))
		return 0;
	return iopt_smmuv2_drv_tlb_sync(dom);
}

static int v2_flush_all(void *dom)
{
	if (v2_unbound(dom))
		return 0;
	return iopt_smmuv2_drv_flush_all(dom);
}

static const struct iopt_dma_drv_ops v2_ops = {
	.name = "smmuv2",
	.domain_alloc = v2_domain_alloc,
	.domain_free = v2_domain_free,
	.attach = v2_attach,
	.detach = v2_detach,
	.inv_range = v2_inv_range,
	.sync = v2_sync,
	.flush_all = v2_flush_all,
	/* AArch32-S banks, where the SMMU's ID0 has them (attach says). */
	.v7s = true,
};

const struct iopt_dma_drv_ops *iopt_dma_smmuv2_ops(void)
{
	return &v2_ops;
}
