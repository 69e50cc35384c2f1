/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench: libiopgtable's benchmarks. One suite per subcommand; every
 * suite prints a readable table, or one JSON object per line with --json.
 * Built twice: iopt-bench (host) and iopt-bench-sim (simulated CPUs,
 * bench_simrun.c).
 */
#define _GNU_SOURCE
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
		"run 'iopt-bench SUITE --help' for a suite's options\n"
		"--sim N [--seed S] [--sim-mem sc|tso] [--sim-sched random|pct]:\n"
		"  run the suite on N simulated CPUs (iopt-bench-sim, docs/sim.md)\n");
}

static int dispatch(int argc, char **argv)
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

int main(int argc, char **argv)
{
#ifdef IOPT_PLATFORM_SIM
	return bench_sim_main(argc, argv, dispatch);
#else
	if (bench_wants_sim(argc, argv))
		return bench_exec_sim(argc, argv);
	return dispatch(argc, argv);
#endif
}
