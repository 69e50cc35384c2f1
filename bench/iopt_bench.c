/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench: libiopgtable's benchmarks. One suite per subcommand; every
 * suite prints a readable table, or one JSON object per line with --json.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: iopt-bench SUITE [options]\n"
		"suites:\n"
		"  pgtable   multithreaded map/unmap of the page tables\n"
		"  iova      the IOVA allocator, caches and invalidation policies\n"
		"  smmu      the SMMUv3 model: host speed and modelled cycles\n"
		"  dma       the DMA path: IOVA + page table + driver + policy\n"
		"run 'iopt-bench SUITE --help' for a suite's options\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "pgtable"))
		return bench_pgtable_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "iova"))
		return bench_iova_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "smmu"))
		return bench_smmu_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dma"))
		return bench_dma_main(argc - 1, argv + 1);
	usage();
	return 2;
}
