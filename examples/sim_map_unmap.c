/* SPDX-License-Identifier: MIT */
/*
 * A concurrent map/unmap experiment on 4 simulated CPUs (link
 * iopgtable_sim; docs/sim.md): each CPU maps and unmaps its own buffer
 * through one lazy DMA domain on the SMMUv3 driver and model, and the
 * device translates a sample. The simulation runs the library's own code
 * on one host thread, charging each CPU cycles for every atomic, lock and
 * register access, so the figure is simulated time; the same program
 * and seed give the same interleaving (the same trace hash) every run.
 */
#include <stdio.h>

#include <iopgtable/sim.h>
#include <iopgtable/testbed.h>

#define CPUS	4
#define PAIRS	2000		/* map+unmap pairs per CPU */

static unsigned errors[CPUS];

/* What each simulated CPU runs: cpu is its index (0 .. CPUS-1). */
static void worker(unsigned cpu, void *arg)
{
	struct iopt_testbed *tb = arg;
	struct iopt_dma *dma = iopt_testbed_dma(tb);
	uint64_t buf = (uint64_t)(cpu + 1) << 32, iova, pa;

	for (int i = 0; i < PAIRS; i++) {
		if (iopt_dma_map(dma, buf, 4096, IOPT_READ | IOPT_WRITE, ~0ull,
				 cpu, &iova)) {
			errors[cpu]++;
			continue;
		}
		/* Every 64th mapping the device reads through the SMMU. */
		if (i % 64 == 0 &&
		    (iopt_testbed_dev_access(tb, 1, iova, false, &pa, NULL) ||
		     pa != buf))
			errors[cpu]++;
		iopt_sim_work(200);		/* the "DMA" itself: 200 cycles */
		if (iopt_dma_unmap(dma, iova, 4096, cpu))
			errors[cpu]++;
	}
}

/* One run with the given seed: *st gets the simulation's statistics. */
static int run(uint64_t seed, struct iopt_sim_stats *st)
{
	struct iopt_sim_params sp;
	struct iopt_sim *sim;
	struct iopt_testbed_cfg cfg;
	struct iopt_testbed *tb;
	int ret;

	iopt_sim_params_default(&sp);
	sp.cpus = CPUS;
	sp.seed = seed;
	if ((ret = iopt_sim_create(&sp, &sim)))
		return ret;
	/* The testbed on the simulation's clock: model at 1 GHz, lazy
	 * invalidation with a flush queue per CPU. */
	iopt_testbed_default_cfg(&cfg, IOPT_TESTBED_SMMUV3);
	cfg.clock = IOPT_TESTBED_CLOCK_SIM;
	cfg.sim = sim;
	cfg.dma_cfg.policy = IOPT_INVAL_LAZY;
	cfg.dma_cfg.nr_cpus = CPUS;
	if (!(ret = iopt_testbed_create(&cfg, &tb))) {
		ret = iopt_sim_run(sim, worker, tb);
		iopt_sim_stats(sim, st);
		iopt_testbed_destroy(tb);
	}
	iopt_sim_destroy(sim);
	return ret;
}

int main(void)
{
	struct iopt_sim_stats a;
	struct iopt_sim_params sp;

	if (run(1, &a))
		return 1;
	iopt_sim_params_default(&sp);
	double us = (double)a.end_cycles / sp.cpu_ghz / 1000.0;

	printf("%d CPUs x %d map+unmap pairs: %.1f simulated us, %.0f pairs per "
	       "simulated second\n", CPUS, PAIRS, us, CPUS * PAIRS / us * 1e6);
	printf("%u CPUs ran, %llu context switches, trace hash %016llx\n", a.cpus,
	       (unsigned long long)a.switches, (unsigned long long)a.trace_hash);
	for (int c = 0; c < CPUS; c++)
		if (errors[c])
			return 1;
	return a.cpus == CPUS && a.end_cycles > 0 ? 0 : 1;
}
