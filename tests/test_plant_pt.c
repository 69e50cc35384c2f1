/* SPDX-License-Identifier: MIT */
/*
 * Racing table installs, checked by the architecture's walker.
 *
 * Threads (4, or IOPT_SIM_CPUS) map their own 4K pages of one fresh 2M
 * region per round, all at once (a barrier starts each round), so that
 * every level's table below the top is installed by several threads
 * racing for the same empty entry. Table install is a compare-and-swap
 * (pt_publish()): the loser frees its table and follows the winner's.
 *
 * The checker does not trust the library: after the threads have ended,
 * tests/tutil.c's reference walker, which decodes descriptors by the Arm ARM's
 * field definitions from the registers the library reports, walks every page
 * the threads' shadows say they mapped, and the table memory allocator counts
 * what is still allocated after iopt_pgtable_free().
 *
 * Built three ways (tests/CMakeLists.txt): against the host library (a
 * stress test that must pass), against the simulation library over a seed
 * sweep (tests/sim_harness.c; must find nothing), and against the
 * simulation library with IOPT_PLANT_TABLE_INSTALL, which replaces the
 * compare-and-swap with a plain store (src/pgtable/pt_algo.h), where the
 * sweep must find the lost tables. Exit status: 0 clean, TU_RACE_EXIT when
 * the checker found a lost mapping or a leaked table, 1 on any other
 * error.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/pgtable.h>

#include "tthread.h"
#include "tutil.h"

#define SZ_4K 0x1000ull
#define PA_OFF 0x10000000000ull	/* pa = va + PA_OFF */
#define MAXT 16
#define PAGES 4			/* per thread and round */
#define TU_RACE_EXIT 3

struct plant_ctx {
	struct iopt_pgtable *pt;
	unsigned id, n;
	long rounds;
	uint64_t *arrived;	/* barrier: threads that reached each round */
	long errors;
};

static uint64_t round_base(long r)
{
	/* One level-0 entry per round (512 GiB apart): every table below
	 * the top is new in each round. */
	return (uint64_t)(r + 1) << 39;
}

static uint64_t page_va(long r, unsigned n, unsigned id, unsigned k)
{
	return round_base(r) + ((uint64_t)k * n + id) * SZ_4K;
}

static void *installer(void *arg)
{
	struct plant_ctx *c = arg;

	for (long r = 0; r < c->rounds; r++) {
		/* Acquire/release: only lines the threads up. */
		plat_fetch_add_acq_rel64(&c->arrived[r], 1);
		while (plat_load_acq64(&c->arrived[r]) < c->n)
			tu_yield();
		for (unsigned k = 0; k < PAGES; k++) {
			uint64_t va = page_va(r, c->n, c->id, k);

			if (iopt_pgtable_map_pages(c->pt, va, va + PA_OFF, SZ_4K, 1,
						   IOPT_READ | IOPT_WRITE, NULL))
				c->errors++;
		}
	}
	return NULL;
}

int main(void)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = 48, .coherent_walk = true, .mem = &tmem_ops,
	};
	unsigned n = tu_threads(4, MAXT);
	long rounds = tu_stress_ops(64 * 100) / 100;
	struct plant_ctx c[MAXT];
	struct plat_thread th[MAXT];
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info info;
	struct tmem m;
	long errors = 0, lost = 0;

	if (rounds < 1)
		rounds = 1;
	if (rounds > 500)
		rounds = 500;	/* level-0 entries of a 48-bit space */
	uint64_t *arrived = calloc((size_t)rounds, sizeof(uint64_t));

	tmem_init(&m, 0x100000000ull, 256u << 20);
	cfg.mem_ctx = &m;
	if (!arrived || iopt_pgtable_alloc(&cfg, &pt)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		c[i] = (struct plant_ctx){ pt, i, n, rounds, arrived, 0 };
		if (plat_thread_start(&th[i], installer, &c[i])) {
			fprintf(stderr, "thread start failed\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		plat_thread_join(&th[i]);
		errors += c[i].errors;
	}
	/* The shadow: every page every thread mapped must be there. */
	iopt_pgtable_get_info(pt, &info);
	for (long r = 0; r < rounds; r++)
		for (unsigned i = 0; i < n; i++)
			for (unsigned k = 0; k < PAGES; k++) {
				uint64_t va = page_va(r, n, i, k);
				struct ref_walk w;

				ref_walk(&info, 0, tmem_host_p2v, &m, va, &w);
				if (!w.mapped || w.oa != va + PA_OFF) {
					if (!lost)
						fprintf(stderr, "lost mapping: round %ld "
							"thread %u va %#llx\n", r, i,
							(unsigned long long)va);
					lost++;
				}
			}
	iopt_pgtable_free(pt);
	long leaked = m.live;

	tmem_destroy(&m);
	free(arrived);
	printf("%u threads, %ld rounds: %ld mappings lost, %ld tables leaked, "
	       "%ld map errors\n", n, rounds, lost, leaked, errors);
	if (lost || leaked) {
		fprintf(stderr, "RACE: table install lost %ld mappings, leaked "
			"%ld tables\n", lost, leaked);
		return TU_RACE_EXIT;
	}
	return errors ? 1 : 0;
}
