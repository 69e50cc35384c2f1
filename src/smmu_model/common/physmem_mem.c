/* SPDX-License-Identifier: MIT */
/*
 * Memory callbacks over a simulated physical memory (iopt_smmu_physmem,
 * <iopgtable/smmu_common.h>), the memory interface of both SMMU models.
 */
#include <errno.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmu_common.h>

#include "../../platform/platform.h"

/*
 * A structure fetch (an STE, a CD, a command, a level-1 descriptor) reads
 * each aligned doubleword single-copy atomically: IHI0070 3.21.3 makes the
 * SMMU's single-copy atomicity size for configuration structures at least
 * 64 bits, and lets it read a structure's doublewords in any order, not
 * atomically as a whole. A driver may rewrite an STE or CD while a device
 * translates through it (the update procedure of 3.21.3.1); relaxed loads
 * give the model that, ordered by the CMD_CFGI and CMD_SYNC that follow.
 * Other sizes and alignments are plain copies.
 */
static int64_t pm_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct iopt_physmem *pm = ctx;
	uint8_t *p = iopt_physmem_ptr(pm, pa, len);

	if (!p)
		return -EFAULT;
	if (((pa | len) & 7) == 0 && len) {
		const uint64_t *src = (const uint64_t *)(void *)p;
		uint64_t *dst = buf;

		for (size_t i = 0; i < len / 8; i++)
			dst[i] = plat_load_rlx64(&src[i]);
	} else {
		memcpy(buf, p, len);
	}
	plat_dev_read(p, buf, len);
	return 0;
}

static int64_t pm_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	uint8_t *p = iopt_physmem_ptr(ctx, pa, len);

	if (!p)
		return -EFAULT;
	plat_dev_write(p, len);
	if (len == 4 && !(pa & 3)) {
		/* An MSI: one single-copy-atomic store, as on a bus; pairs
		 * with the pollers' acquire loads. */
		uint32_t v;

		memcpy(&v, buf, 4);
		plat_store_rel32((uint32_t *)(void *)p, v);
		return 0;
	}
	memcpy(p, buf, len);
	return 0;
}

static int pm_load64(void *ctx, uint64_t pa, uint64_t *v)
{
	uint64_t *p = iopt_physmem_ptr(ctx, pa, 8);

	if (!p || (pa & 7))
		return -EFAULT;
	/* Acquire: pairs with the page tables' release stores of a
	 * descriptor, so the table it points to is seen initialised. */
	*v = plat_load_acq64(p);
	plat_dev_read(p, v, 8);
	return 0;
}

static int pm_cas64(void *ctx, uint64_t pa, uint64_t *old, uint64_t v)
{
	uint64_t *p = iopt_physmem_ptr(ctx, pa, 8);

	if (!p || (pa & 7))
		return -EFAULT;
	/* Acquire-release: a hardware AF/dirty update, paired with the page
	 * tables' own compare-and-swaps and acquire loads of the entry. */
	plat_dev_write(p, 8);
	return plat_cas_acq_rel64(p, old, v) ? 0 : -EAGAIN;
}

void iopt_smmu_physmem(struct iopt_physmem *pm, unsigned latency,
		       struct iopt_smmu_mem *mem)
{
	/* read/write report no latency of their own; the models add
	 * desc_latency per access. */
	mem->read = pm_read;
	mem->write = pm_write;
	mem->load64 = pm_load64;
	mem->cas64 = pm_cas64;
	mem->desc_latency = latency;
	mem->ctx = pm;
}
