/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer's driver ops over the SMMUv3 driver (iopgtable/smmuv3_drv.h).
 * It uses the driver's public calls, and its internal header only for the
 * domain's instance and the whole-domain TLBI command (so that flush_all
 * reports its error, which the page-table TLB op cannot).
 */
#include <errno.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>

#include "../driver/smmuv3_drv_internal.h"

static int v3_domain_alloc(void *drv, unsigned stage, void **dom)
{
	struct iopt_smmuv3_drv_domain *d;
	int ret = iopt_smmuv3_drv_domain_alloc(drv, stage, &d);

	if (!ret)
		*dom = d;
	return ret;
}

static int v3_domain_free(void *dom)
{
	return iopt_smmuv3_drv_domain_free(dom);
}

static int v3_attach(void *dom, struct iopt_pgtable *pt, uint32_t sid)
{
	return iopt_smmuv3_drv_attach(dom, pt, sid);
}

static int v3_detach(void *dom, uint32_t sid)
{
	return iopt_smmuv3_drv_detach(dom, sid);
}

static int v3_inv_range(void *dom, uint64_t iova, uint64_t size,
			uint64_t granule, bool leaf)
{
	return iopt_smmuv3_drv_inv_range(dom, iova, size, granule, leaf);
}

static int v3_sync(void *dom)
{
	struct iopt_smmuv3_drv_domain *d = dom;

	return iopt_smmuv3_drv_sync(d->drv);
}

/* TLBI_NH_ASID (stage 1) / TLBI_S12_VMALL (stage 2) + CMD_SYNC (IHI0070
 * 4.4.2, 4.4.3; completion by the sync, 3.21.1). */
static int v3_flush_all(void *dom)
{
	struct iopt_smmuv3_drv_domain *d = dom;
	struct iopt_smmuv3_cmd c;

	drv_domain_inv_all_cmd(d, &c);
	drv_count(d->drv, flush_alls, 1);
	return iopt_smmuv3_drv_submit(d->drv, &c, 1, true);
}

static const struct iopt_dma_drv_ops v3_ops = {
	.name = "smmuv3",
	.domain_alloc = v3_domain_alloc,
	.domain_free = v3_domain_free,
	.attach = v3_attach,
	.detach = v3_detach,
	.inv_range = v3_inv_range,
	.sync = v3_sync,
	.flush_all = v3_flush_all,
};

const struct iopt_dma_drv_ops *iopt_dma_smmuv3_ops(void)
{
	return &v3_ops;
}
