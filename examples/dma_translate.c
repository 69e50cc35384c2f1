/* SPDX-License-Identifier: MIT */
/* DMA-map a buffer through the SMMUv3 driver and model, let a device
 * read it through the SMMU, unmap it, and see the device's access fault. */
#include <errno.h>
#include <stdio.h>

#include <iopgtable/testbed.h>

static void on_fault(void *ctx, const struct iopt_smmuv3_drv_event *ev)
{
	(void)ctx;
	printf("event 0x%x: stream %u, address 0x%llx\n", ev->type, ev->sid,
	       (unsigned long long)ev->addr);
}

int main(void)
{
	struct iopt_testbed_cfg cfg;
	struct iopt_testbed *tb;
	uint64_t buf = 0x40000000, iova, pa;	/* the buffer's physical address */

	/* Memory, an SMMUv3 model, its driver, a strict DMA domain for stream 1. */
	iopt_testbed_default_cfg(&cfg, IOPT_TESTBED_SMMUV3);
	cfg.drv3.event = on_fault;		/* the driver decodes fault records */
	if (iopt_testbed_create(&cfg, &tb))
		return 1;
	struct iopt_dma *dma = iopt_testbed_dma(tb);

	/* Map 8 KiB for the device to read and write; any 64-bit address. */
	if (iopt_dma_map(dma, buf, 8192, IOPT_READ | IOPT_WRITE, ~0ull, 0, &iova))
		return 1;
	/* The device reads 100 bytes in: the SMMU walks the page table. */
	if (iopt_testbed_dev_access(tb, 1, iova + 100, false, &pa, NULL) ||
	    pa != buf + 100)
		return 1;
	printf("iova 0x%llx -> pa 0x%llx\n", (unsigned long long)(iova + 100),
	       (unsigned long long)pa);

	/* Unmap (strict: the TLB is invalidated before the call returns)... */
	iopt_dma_unmap(dma, iova, 8192, 0);
	/* ...so the same access now faults, and the SMMU records an event. */
	unsigned fault;

	if (iopt_testbed_dev_access(tb, 1, iova + 100, false, &pa, &fault) != -EFAULT)
		return 1;
	printf("after unmap: fault 0x%x (F_TRANSLATION)\n", fault);
	/* Read the event queue (an interrupt handler would). */
	if (iopt_smmuv3_drv_poll(iopt_testbed_smmuv3_drv(tb)) != 1)
		return 1;
	iopt_testbed_destroy(tb);
	return 0;
}
