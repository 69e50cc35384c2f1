/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer's driver ops over the SMMUv2 driver (iopgtable/smmuv2_drv.h).
 * sync is the domain's context-bank TLBSYNC (every by-address invalidation of a
 * domain is written to its bank); flush_all is TLBIASID + TLBSYNC, or TLBIVMID
 * + sTLBGSYNC at stage 2.
 *
 * Before its first attach a domain's invalidations succeed and do
 * nothing, as struct iopt_dma_drv_ops asks: the driver does that itself
 * (iopgtable/smmuv2_drv.h), as the SMMUv3 driver does; its sync writes
 * the bank's TLBSYNC, which completes as on an attached bank.
 */
#include <errno.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv2_drv.h>


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

static int v2_inv_range(void *dom, uint64_t iova, uint64_t size,
			uint64_t granule, bool leaf)
{
	return iopt_smmuv2_drv_inv_range(dom, iova, size, granule, leaf);
}

static int v2_sync(void *dom)
{
	return iopt_smmuv2_drv_tlb_sync(dom);
}

static int v2_flush_all(void *dom)
{
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
