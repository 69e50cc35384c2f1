/* SPDX-License-Identifier: MIT */
/*
 * A host program that has functions and a variable of its own with the
 * names of the library's module internals, as a simulator would (QEMU has
 * a tlb_init). Linked with the static library, its definitions and the
 * library's must not meet: the link succeeds, each side calls its own, and
 * every module of the library (page tables, IOVA allocator, SMMU model,
 * physical memory, platform layer) still works.
 */
#include <stdio.h>

#include <iopgtable/iova.h>
#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

/* The host's own symbols; the numbers prove which definition ran. */
int tlb_init(void);
int tlb_insert(void);
int tlb_lookup_level(void);
int fmap_init(void);
int fmap_take(void);
int fmap_set(void);
int live_add(void);
int iova_rcache_get(void);
int plat_cpu_id(void);
int plat_clock_ns(void);
int pt_table_alloc(void);
int smmu_walk(void);
int tlb_init(void) { return 1; }
int tlb_insert(void) { return 2; }
int tlb_lookup_level(void) { return 3; }
int fmap_init(void) { return 4; }
int fmap_take(void) { return 5; }
int fmap_set(void) { return 6; }
int live_add(void) { return 7; }
int iova_rcache_get(void) { return 8; }
int plat_cpu_id(void) { return 9; }
int plat_clock_ns(void) { return 10; }
int pt_table_alloc(void) { return 11; }
int smmu_walk(void) { return 12; }
int pt_default_mem = 13;

static int library_works(void)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true };
	struct iopt_iova_cfg icfg = { .start_pfn = 1, .end_pfn = 1 << 20 };
	struct iopt_smmuv3_params p;
	struct iopt_smmu_mem mem;
	struct iopt_physmem *pm;
	struct iopt_pgtable *pt;
	struct iopt_iova *iova;
	struct iopt_smmuv3 *smmu;
	uint64_t pa = 0, pfn = 0, id0 = 0;
	int bad;

	if (iopt_pgtable_alloc(&cfg, &pt))
		return 0;
	bad = iopt_pgtable_map_pages(pt, 0x200000, 0x40000000, 4096, 1, IOPT_READ, NULL) ||
	      iopt_pgtable_iova_to_phys(pt, 0x200123, &pa) || pa != 0x40000123;
	iopt_pgtable_free(pt);
	if (bad || iopt_iova_create(&icfg, &iova))
		return 0;
	bad = iopt_iova_alloc(iova, 4, (1 << 20) - 1, &pfn) ||
	      iopt_iova_free(iova, pfn, 4);
	iopt_iova_destroy(iova);
	if (bad || iopt_physmem_create(0, 1 << 24, &pm))
		return 0;
	iopt_smmuv3_default_params(&p);
	iopt_smmu_physmem(pm, 100, &mem);
	bad = iopt_smmuv3_create(&p, &mem, NULL, NULL, &smmu);
	if (!bad) {
		bad = iopt_smmuv3_mmio_read(smmu, 0, 4, &id0, 0); /* SMMU_IDR0 */
		iopt_smmuv3_destroy(smmu);
	}
	iopt_physmem_destroy(pm);
	return !bad && id0 != 0;
}

int main(void)
{
	if (tlb_init() + tlb_insert() + tlb_lookup_level() + fmap_init() +
	    fmap_take() + fmap_set() + live_add() + iova_rcache_get() +
	    plat_cpu_id() + plat_clock_ns() + pt_table_alloc() + smmu_walk() +
	    pt_default_mem != 91) {
		fprintf(stderr, "clash: the host's own functions did not run\n");
		return 1;
	}
	if (!library_works()) {
		fprintf(stderr, "clash: the library failed beside the host's symbols\n");
		return 1;
	}
	printf("clash: ok, host and library keep their own tlb_init & co\n");
	return 0;
}
