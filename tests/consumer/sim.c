/* SPDX-License-Identifier: MIT */
/*
 * A program built against the installed simulation library only: it
 * links the engine, not the host library's stubs, and runs the library's
 * page tables on simulated CPUs, deterministically.
 */
#include <stdio.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/sim.h>

#define SIMC_CPUS 4
#define SIMC_PAGES 16

struct simc_run {
	struct iopt_pgtable *pt;
	int bad;
};

/* Each CPU maps, checks and unmaps a range of its own in the shared table. */
static void simc_cpu(unsigned cpu, void *arg)
{
	struct simc_run *r = arg;
	uint64_t iova = 0x100000ull * (cpu + 1), pa = 0x40000000ull + iova;
	uint64_t got = 0;

	if (iopt_pgtable_map_pages(r->pt, iova, pa, 4096, SIMC_PAGES,
				   IOPT_READ | IOPT_WRITE, NULL) ||
	    iopt_pgtable_iova_to_phys(r->pt, iova + 5 * 4096 + 0x123, &got) ||
	    got != pa + 5 * 4096 + 0x123 ||
	    iopt_pgtable_unmap_pages(r->pt, iova, 4096, SIMC_PAGES, NULL) !=
		    SIMC_PAGES * 4096)
		r->bad = 1;
}

/* One simulation from a fixed seed; its trace hash in *hash. */
static int simc_once(uint64_t *hash)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true };
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct simc_run r = { 0 };
	struct iopt_sim *sim;
	int err;

	iopt_sim_params_default(&p);
	p.cpus = SIMC_CPUS;
	p.seed = 7;
	err = iopt_sim_create(&p, &sim);
	if (err) {
		fprintf(stderr, "consumer_sim: iopt_sim_create: %d\n", err);
		return 1;
	}
	err = iopt_pgtable_alloc(&cfg, &r.pt);
	if (!err)
		err = iopt_sim_run(sim, simc_cpu, &r);
	iopt_sim_stats(sim, &st);
	if (r.pt)
		iopt_pgtable_free(r.pt);
	iopt_sim_destroy(sim);
	if (err || r.bad || st.cpus != SIMC_CPUS || !st.total_ops) {
		fprintf(stderr, "consumer_sim: run %d, bad %d, %u CPUs, %llu ops\n",
			err, r.bad, st.cpus, (unsigned long long)st.total_ops);
		return 1;
	}
	*hash = st.trace_hash;
	return 0;
}

int main(void)
{
	uint64_t h1, h2;

	if (iopt_sim_available() != 1) {
		fprintf(stderr, "consumer_sim: linked the host library's stubs\n");
		return 1;
	}
	if (simc_once(&h1) || simc_once(&h2))
		return 1;
	/* The same seed gives the same interleaving. */
	if (h1 != h2) {
		fprintf(stderr, "consumer_sim: trace %llx then %llx\n",
			(unsigned long long)h1, (unsigned long long)h2);
		return 1;
	}
	printf("consumer_sim: ok (%d CPUs, trace %llx)\n", SIMC_CPUS,
	       (unsigned long long)h1);
	return 0;
}
