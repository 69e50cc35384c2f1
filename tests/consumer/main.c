/* SPDX-License-Identifier: MIT */
/* A program built against the installed library only. */
#include <stdio.h>
#include <string.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/sim.h>
#include <iopgtable/version.h>

int main(void)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true };
	struct iopt_pgtable *pt;
	uint64_t pa = 0;

	/* The installed header and the installed library are one version. */
	if (strcmp(iopt_version(), IOPT_VERSION_STRING) ||
	    iopt_version_number() != IOPT_VERSION_NUMBER) {
		fprintf(stderr, "consumer: header %s, library %s\n",
			IOPT_VERSION_STRING, iopt_version());
		return 1;
	}
	/* The host library is not the simulation (tests/consumer/sim.c). */
	if (iopt_sim_available() != 0) {
		fprintf(stderr, "consumer: the host library says it simulates\n");
		return 1;
	}
	if (iopt_pgtable_alloc(&cfg, &pt))
		return 1;
	if (iopt_pgtable_map_pages(pt, 0x200000, 0x40000000, 0x200000, 1, IOPT_READ,
				   NULL) ||
	    iopt_pgtable_iova_to_phys(pt, 0x212345, &pa) || pa != 0x40012345) {
		iopt_pgtable_free(pt);
		return 1;
	}
	iopt_pgtable_free(pt);
	printf("consumer: ok (%s, %s)\n", iopt_version(),
	       iopt_pgtable_fmt_name(IOPT_ARM_64_LPAE_S1));
	return 0;
}
