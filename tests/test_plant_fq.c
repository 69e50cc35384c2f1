/* SPDX-License-Identifier: MIT */
/*
 * Unmap against flush: no IOVA is handed out again while the IOTLB may
 * still hold its old translation.
 *
 * Threads (4, or IOPT_SIM_CPUS), one per CPU, loop: allocate a page of
 * IOVA through a lazy flush queue, map it (a page-table word set to 1,
 * release), let the device use it (the shadow IOTLB caches it), unmap it
 * (the word cleared, a relaxed store, as a page-table clear is) and free
 * it through the queue (iopt_fq_free(), which must order the clear before
 * its read of the flush generation: docs/iova.md, ordering 1 in
 * src/iova/fq.c). The flush-all callback is the invalidation: it empties
 * the shadow IOTLB and then lets the walker refill it at once from every
 * page-table word it can read in memory, the worst a walker may do.
 *
 * The checker is the shadow IOTLB, not the queue's bookkeeping: an
 * allocation that returns a page the IOTLB still holds is a reuse before
 * the flush that covers it. The race it looks for needs a store buffer:
 * the clear still buffered while the free reads the old generation and a
 * flush on another CPU refills from memory. So it shows on the simulation
 * in TSO mode (tests/sim_harness.c) when iopt_fq_free() lacks its fence
 * (IOPT_PLANT_FQ_FENCE, src/iova/fq.c), never in SC mode, and only under
 * PCT scheduling: the window is the one operation between the free's
 * generation read and its next read-modify-write (which drains the store
 * buffer), and a flush's increment, fence and refill cost more simulated
 * time than that, so time-ordered scheduling never fits them in; a PCT
 * priority change right after the read does (docs/sim.md).
 * Exit status: 0 clean, TU_RACE_EXIT on a reuse, 1 on other errors.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <iopgtable/iova.h>

#include "tthread.h"
#include "tutil.h"

#define SPACE 64		/* pages of IOVA space */
#define MAXT 16
#define TU_RACE_EXIT 3

static struct {
	struct plat_spinlock lock;	/* the shadow IOTLB */
	uint8_t tlb[SPACE];		/* page may be cached, under lock */
	uint64_t pte[SPACE];		/* the "page table": platform atomics */
	uint64_t flushes, violations, first_pfn;
} sh;

/* Invalidate everything, then refill from what is in memory. */
static void flush_all(void *ctx)
{
	(void)ctx;
	plat_spin_lock(&sh.lock);
	for (unsigned p = 0; p < SPACE; p++)
		sh.tlb[p] = plat_load_acq64(&sh.pte[p]) != 0;
	sh.flushes++;
	plat_spin_unlock(&sh.lock);
}

struct fq_ctx {
	struct iopt_fq *q;
	unsigned cpu;
	long ops, errors, full;
};

static void *cpu_main(void *arg)
{
	struct fq_ctx *c = arg;

	for (long i = 0; i < c->ops; i++) {
		uint64_t p;

		/* Other CPUs' caches may hold every free page: not an
		 * error here. */
		if (iopt_fq_alloc(c->q, 1, SPACE - 1, 0, c->cpu, &p)) {
			c->full++;
			continue;
		}
		plat_spin_lock(&sh.lock);
		if (sh.tlb[p] && !sh.violations++)
			sh.first_pfn = p;
		plat_spin_unlock(&sh.lock);
		plat_store_rel64(&sh.pte[p], 1);	/* map */
		/* The device uses it (its walk sees the map: the lock's
		 * read-modify-write has made the map visible). */
		plat_spin_lock(&sh.lock);
		sh.tlb[p] = 1;
		plat_spin_unlock(&sh.lock);
		plat_store_rlx64(&sh.pte[p], 0);	/* unmap */
		if (iopt_fq_free(c->q, p, 1, c->cpu))
			c->errors++;
	}
	return NULL;
}

int main(void)
{
	unsigned n = tu_threads(4, MAXT);
	long ops = tu_stress_ops(2000);
	struct iopt_iova_cfg icfg = { .end_pfn = SPACE, .nr_cpus = n };
	struct iopt_fq_cfg fcfg = { .policy = IOPT_INVAL_LAZY, .entries = 8,
				    .timeout_ns = ~0ull >> 1,
				    .flush_all = flush_all };
	struct fq_ctx c[MAXT];
	struct plat_thread th[MAXT];
	struct iopt_iova *d;
	struct iopt_fq *q;
	long errors = 0, full = 0;

	plat_spin_init(&sh.lock);
	if (iopt_iova_create(&icfg, &d) || iopt_fq_create(d, &fcfg, &q)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		c[i] = (struct fq_ctx){ q, i, ops, 0, 0 };
		if (plat_thread_start(&th[i], cpu_main, &c[i])) {
			fprintf(stderr, "thread start failed\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		plat_thread_join(&th[i]);
		errors += c[i].errors;
		full += c[i].full;
	}
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
	printf("%u CPUs, %ld ops each: %llu flushes, %llu reuses before "
	       "the covering flush, %ld allocations found the space held, "
	       "%ld errors\n", n, ops, (unsigned long long)sh.flushes,
	       (unsigned long long)sh.violations, full, errors);
	if (sh.violations) {
		fprintf(stderr, "RACE: IOVA page %llu handed out again while "
			"the IOTLB held it (%llu times)\n",
			(unsigned long long)sh.first_pfn,
			(unsigned long long)sh.violations);
		return TU_RACE_EXIT;
	}
	return errors ? 1 : 0;
}
