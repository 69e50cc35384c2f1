/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench: libiopgtable's benchmarks. One suite per subcommand; every
 * suite prints a readable table, or one JSON object per line with --json.
 * Built twice: iopt-bench (host library) and iopt-bench-sim (simulation
 * library), which runs the sim suite and any suite given --sim N
 * (bench_simrun.c).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iopt-bench SUITE [options]\n"
		"suites:\n"
		"  pgtable   multithreaded map/unmap of the page tables\n"
		"  iova      the IOVA allocator, caches and invalidation policies\n"
		"  smmu      the SMMUv3 model: host speed and modelled cycles\n"
		"  dma       the DMA path: IOVA + page table + driver + policy\n"
		"  workload  network TX/RX, NVMe, dma_map_benchmark models over\n"
		"            the dma suite's rig (--sim N only)\n"
		"  sim       the simulation engine's speed (docs/sim.md)\n"
		"  host      what this machine gives two threads (read beside\n"
		"            any thread-scaling figure)\n"
		"  repro     the published experiments on the simulation, ours\n"
		"            beside the published (docs/experiments.md)\n"
		"run 'iopt-bench SUITE --help' for a suite's options and cases\n"
		"any suite but sim and host: --sim N [--seed S] [--sim-mem sc|tso]\n"
		"  [--sim-sched random|pct] [--sim-hot] runs it on N simulated CPUs\n"
		"  (iopt-bench-sim, docs/sim.md)\n");
}

#ifndef IOPT_PLATFORM_SIM
/*
 * The simulated runs (suite sim, any suite's --sim N) need the library's
 * simulation build, which iopt-bench-sim beside this binary links: hand
 * the whole command line over to it.
 */
static void run_sim_binary(char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n <= 0)
		return;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) + sizeof("/iopt-bench-sim") > sizeof(path))
		return;
	strcpy(slash, "/iopt-bench-sim");
	execv(path, argv);
}
#endif

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "pgtable"))
		return bench_pgtable_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "iova"))
		return bench_iova_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "smmu"))
		return bench_smmu_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dma"))
		return bench_dma_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "workload"))
		return bench_workload_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sim"))
		return bench_sim_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "host"))
		return bench_host_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "repro"))
		return bench_repro_main(argc - 1, argv + 1);
	fprintf(stderr, "iopt-bench: unknown suite '%s'; see 'iopt-bench --help'\n",
		argv[1]);
	return 2;
}

int main(int argc, char **argv)
{
	bool sim_run = argc >= 2 && bench_wants_sim(argc, argv);

#ifdef IOPT_PLATFORM_SIM
	if (sim_run)
		return bench_simrun_main(argc, argv, dispatch);
#else
	if (sim_run || (argc >= 2 && !strcmp(argv[1], "sim"))) {
		run_sim_binary(argv);	/* returns only if it cannot */
		fprintf(stderr, "iopt-bench: this needs iopt-bench-sim, built "
			"beside iopt-bench with the simulation library "
			"(docs/sim.md)\n");
		return 2;
	}
#endif
	return dispatch(argc, argv);
}
