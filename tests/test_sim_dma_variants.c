/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer's kernel variants on simulated CPUs, where the schedule
 * and the clock are deterministic (docs/dma.md "Variants"), through the
 * instrumented driver of dma_probe.h:
 *  - domain_lock: two CPUs map and unmap (strict) while every sync spends
 *    20000 cycles. With the lock no two driver calls are ever in progress
 *    at once and no map runs wholly inside a sync (the sync is inside its
 *    unmap's locked section); without it (the lock-free default) both
 *    happen, so the check sees what the lock changes; so they do with the
 *    page table's own serialised mode (pt.serialised), whose lock does not
 *    cover the layer's invalidation and sync;
 *  - viommu_trap_ns: two CPUs issue invalidations (strict unmaps and
 *    flush-alls); the run takes at least (traps x trap_ns) of simulated
 *    time, the traps one at a time, where two CPUs that did not serialise
 *    would take about half; the layer's trap count equals the driver's
 *    inv_range + flush_all calls;
 *  - viommu_trap_page_ns: on one CPU, a strict unmap of 3 pages and a
 *    flush-all of a 16384-page IOVA space take exactly 3 x and 16384 x
 *    the page cost longer than with no page cost (the same schedule
 *    otherwise), and the trapped pages are counted; with two CPUs, one
 *    unmapping and one flushing, the run takes at least the sum of every
 *    trap's hand-computed cost (one refresh at a time).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/sim.h>

#include "dma_probe.h"

#define PAGE	4096ull
#define OPS	200

struct run {
	struct probe p;
	struct iopt_dma *d;
	bool flushes;		/* CPU 1 flushes instead of unmapping */
	uint64_t t0[2], t1[2];	/* ns */
	unsigned errors;
};

static void spend_20k(void)
{
	iopt_sim_work(20000);
}

static void cpu_main(unsigned cpu, void *arg)
{
	struct run *r = arg;

	/* Out of step: CPU 1's calls fall inside CPU 0's syncs, not
	 * beside them. */
	if (cpu == 1)
		iopt_sim_work(7000);
	r->t0[cpu] = iopt_sim_now_ns();
	for (unsigned i = 0; i < OPS; i++) {
		uint64_t iova;

		if (r->flushes && cpu == 1) {
			if (iopt_dma_flush(r->d))
				r->errors++;
			continue;
		}
		if (probe_map(&r->p, r->d, 0x80000000ull + (i % 32) * PAGE, cpu,
			      &iova) ||
		    iopt_dma_unmap(r->d, iova, PAGE, cpu))
			r->errors++;
	}
	r->t1[cpu] = iopt_sim_now_ns();
}

static void run(struct run *r, bool lock, bool pt_serialised, uint64_t trap_ns)
{
	struct iopt_sim_params sp;
	struct iopt_sim *s;
	struct iopt_dma_cfg c;

	iopt_sim_params_default(&sp);
	sp.cpus = 2;
	sp.seed = 5;
	assert_int_equal(iopt_sim_create(&sp, &s), 0);
	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = &r->p;
	c.nr_cpus = 2;
	c.policy = IOPT_INVAL_STRICT;
	c.domain_lock = lock;
	c.pt.serialised = pt_serialised;
	c.viommu_trap_ns = trap_ns;
	assert_int_equal(iopt_dma_create(&c, &r->d), 0);
	assert_int_equal(iopt_sim_run(s, cpu_main, r), 0);
	iopt_sim_destroy(s);
	assert_int_equal(r->errors, 0);
}

static void test_domain_lock_serialises(void **state)
{
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	r->p.spend = spend_20k;
	run(r, true, false, 0);
	assert_int_equal(atomic_load(&r->p.max_active), 1);
	assert_int_equal(atomic_load(&r->p.maps_inside_sync), 0);
	assert_int_equal(atomic_load(&r->p.syncs), 2 * OPS);
	iopt_dma_destroy(r->d);
	free(r);
}

static void check_overlaps(bool pt_serialised)
{
	struct run *r = calloc(1, sizeof(*r));

	r->p.spend = spend_20k;
	run(r, false, pt_serialised, 0);
	assert_int_equal(atomic_load(&r->p.max_active), 2);
	assert_true(atomic_load(&r->p.maps_inside_sync) > 0);
	iopt_dma_destroy(r->d);
	free(r);
}

/* The lock-free default, and the page table's own serialised mode, whose
 * lock is released before the layer invalidates and syncs. */
static void test_lock_free_overlaps(void **state)
{
	(void)state;
	check_overlaps(false);
	check_overlaps(true);
}

static void check_traps(bool flushes)
{
	const uint64_t trap = 50000;	/* ns */
	struct run *r = calloc(1, sizeof(*r));
	struct iopt_dma_stats st;
	uint64_t traps, t0, t1;

	r->flushes = flushes;
	run(r, false, false, trap);
	iopt_dma_get_stats(r->d, &st);
	traps = atomic_load(&r->p.inv_ranges) + atomic_load(&r->p.flush_alls);
	assert_int_equal(st.viommu_traps, traps);
	assert_int_equal(traps, 2 * OPS);
	t0 = r->t0[0] < r->t0[1] ? r->t0[0] : r->t0[1];
	t1 = r->t1[0] > r->t1[1] ? r->t1[0] : r->t1[1];
	/* One trap at a time: the two CPUs' traps add up. */
	assert_true(t1 - t0 >= traps * trap);
	/* And they did run at once: each CPU's own loop spans most of it
	 * (no CPU ran its loop before the other started). */
	assert_true(r->t1[0] - r->t0[0] > traps * trap / 2);
	assert_true(r->t1[1] - r->t0[1] > traps * trap / 2);
	iopt_dma_destroy(r->d);
	free(r);
}

static void test_viommu_traps_serialised(void **state)
{
	(void)state;
	check_traps(false);	/* strict unmaps on both CPUs */
	check_traps(true);	/* unmaps on one, flush-alls on the other */
}

/* ---- viommu_trap_page_ns ---------------------------------------------- */

#define SPACE_START	(1ull << 20)
#define SPACE_PAGES	16384ull		/* 64 MiB */
#define TRAP_NS		2000ull
#define PAGE_NS		100ull

struct page_run {
	struct iopt_dma *d;
	uint64_t unmap_ns, flush_ns;
	unsigned errors;
};

static void page_cpu_main(unsigned cpu, void *arg)
{
	struct page_run *r = arg;
	uint64_t iova, t;

	(void)cpu;
	if (iopt_dma_map(r->d, 0x80000000ull, 3 * PAGE, IOPT_READ, ~0ull, 0,
			 &iova))
		r->errors++;
	t = iopt_sim_now_ns();
	if (iopt_dma_unmap(r->d, iova, 3 * PAGE, 0))
		r->errors++;
	r->unmap_ns = iopt_sim_now_ns() - t;
	t = iopt_sim_now_ns();
	if (iopt_dma_flush(r->d))
		r->errors++;
	r->flush_ns = iopt_sim_now_ns() - t;
}

/* A simulation of cpus CPUs and a strict domain over the SPACE_PAGES
 * space on p's probe driver, trapping at TRAP_NS + page_ns a page. */
static struct iopt_sim *paged_domain(struct probe *p, unsigned cpus,
				     uint64_t page_ns, struct iopt_dma **d)
{
	struct iopt_sim_params sp;
	struct iopt_sim *s;
	struct iopt_dma_cfg c;

	iopt_sim_params_default(&sp);
	sp.cpus = cpus;
	sp.seed = 5;
	assert_int_equal(iopt_sim_create(&sp, &s), 0);
	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = p;
	c.nr_cpus = cpus;
	c.policy = IOPT_INVAL_STRICT;
	c.iova_start = SPACE_START;
	c.iova_end = SPACE_START + SPACE_PAGES * PAGE;
	c.viommu_trap_ns = TRAP_NS;
	c.viommu_trap_page_ns = page_ns;
	assert_int_equal(iopt_dma_create(&c, d), 0);
	return s;
}

/* One CPU: a strict unmap of 3 pages, then a flush-all. */
static void page_run(struct page_run *r, uint64_t page_ns)
{
	struct probe *p = calloc(1, sizeof(*p));
	struct iopt_sim *s = paged_domain(p, 1, page_ns, &r->d);
	struct iopt_dma_stats st;

	assert_int_equal(iopt_sim_run(s, page_cpu_main, r), 0);
	iopt_sim_destroy(s);
	assert_int_equal(r->errors, 0);
	iopt_dma_get_stats(r->d, &st);
	/* One inv_range of the unmap's 3 pages, one flush-all of the space;
	 * nothing else invalidated. */
	assert_int_equal(atomic_load(&p->inv_ranges), 1);
	assert_int_equal(atomic_load(&p->flush_alls), 1);
	assert_int_equal(st.viommu_traps, 2);
	assert_int_equal(st.viommu_trap_pages, 3 + SPACE_PAGES);
	iopt_dma_destroy(r->d);
	free(p);
}

/* |a - b| <= 2 ns: the clock is read in whole nanoseconds of cycles. */
static void assert_near(uint64_t a, uint64_t b)
{
	assert_true(a + 2 >= b && b + 2 >= a);
}

static void test_viommu_trap_page_cost(void **state)
{
	struct page_run base = { 0 }, paged = { 0 };

	(void)state;
	page_run(&base, 0);
	page_run(&paged, PAGE_NS);
	/* Each trap at least its fixed cost, then the pages' cost on top. */
	assert_true(base.unmap_ns >= TRAP_NS && base.flush_ns >= TRAP_NS);
	assert_near(paged.unmap_ns - base.unmap_ns, 3 * PAGE_NS);	/* 300 */
	assert_near(paged.flush_ns - base.flush_ns,
		    SPACE_PAGES * PAGE_NS);			/* 1,638,400 */
}

struct fifo_run {
	struct iopt_dma *d;
	uint64_t t0[2], t1[2];
	unsigned errors;
};

#define FIFO_OPS	20

/* CPU 0 maps and unmaps one page (strict) FIFO_OPS times, CPU 1 flushes
 * FIFO_OPS times. */
static void fifo_cpu_main(unsigned cpu, void *arg)
{
	struct fifo_run *r = arg;

	r->t0[cpu] = iopt_sim_now_ns();
	for (unsigned i = 0; i < FIFO_OPS; i++) {
		uint64_t iova;

		if (cpu == 1) {
			if (iopt_dma_flush(r->d))
				r->errors++;
		} else if (iopt_dma_map(r->d, 0x80000000ull, PAGE, IOPT_READ,
					~0ull, 0, &iova) ||
			   iopt_dma_unmap(r->d, iova, PAGE, 0)) {
			r->errors++;
		}
	}
	r->t1[cpu] = iopt_sim_now_ns();
}

static void test_viommu_trap_pages_serialised(void **state)
{
	struct fifo_run r = { 0 };
	struct probe *p = calloc(1, sizeof(*p));
	struct iopt_sim *s = paged_domain(p, 2, PAGE_NS, &r.d);
	uint64_t t0, t1, want;

	(void)state;
	assert_int_equal(iopt_sim_run(s, fifo_cpu_main, &r), 0);
	iopt_sim_destroy(s);
	assert_int_equal(r.errors, 0);
	t0 = r.t0[0] < r.t0[1] ? r.t0[0] : r.t0[1];
	t1 = r.t1[0] > r.t1[1] ? r.t1[0] : r.t1[1];
	/* FIFO_OPS one-page refreshes and FIFO_OPS whole-space ones, one at
	 * a time: 20 x 2100 + 20 x 1,640,400 ns. */
	want = FIFO_OPS * (TRAP_NS + PAGE_NS) +
	       FIFO_OPS * (TRAP_NS + SPACE_PAGES * PAGE_NS);
	assert_true(t1 - t0 >= want);
	/* CPU 0's unmaps waited behind CPU 1's flushes: its loop spans far
	 * more than its own traps' 42 us. */
	assert_true(r.t1[0] - r.t0[0] > want / 4);
	iopt_dma_destroy(r.d);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_domain_lock_serialises),
		cmocka_unit_test(test_lock_free_overlaps),
		cmocka_unit_test(test_viommu_traps_serialised),
		cmocka_unit_test(test_viommu_trap_page_cost),
		cmocka_unit_test(test_viommu_trap_pages_serialised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
