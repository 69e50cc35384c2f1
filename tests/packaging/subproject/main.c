/* SPDX-License-Identifier: MIT */
/* The parent's program: maps a page through the embedded library. */
#include <stdio.h>
#include <string.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/version.h>

int main(void)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true };
	struct iopt_pgtable *pt;
	uint64_t pa = 0;
	int bad;

	if (strcmp(iopt_version(), IOPT_VERSION_STRING) || iopt_pgtable_alloc(&cfg, &pt))
		return 1;
	bad = iopt_pgtable_map_pages(pt, 0x1000, 0x80000000, 4096, 1, IOPT_READ, NULL) ||
	      iopt_pgtable_iova_to_phys(pt, 0x1234, &pa) || pa != 0x80000234;
	iopt_pgtable_free(pt);
	if (bad)
		return 1;
	printf("parent: ok (%s)\n", iopt_version());
	return 0;
}
