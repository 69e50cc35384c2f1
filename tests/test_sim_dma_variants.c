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
 *    inv_range + flush_all calls.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_domain_lock_serialises),
		cmocka_unit_test(test_lock_free_overlaps),
		cmocka_unit_test(test_viommu_traps_serialised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
