/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer's kernel variants (dma.h, docs/dma.md "Variants"), each
 * against what the kernel it stands for did, seen from outside the layer:
 *  - IOPT_DMA_DIRECT (no IOMMU, dma-direct): the DMA address is the
 *    physical address; a buffer past the mask is -EIO by dma_capable()'s
 *    rule (last byte <= mask), written here as constants; nothing reaches
 *    a driver; bad input is -EINVAL and counted;
 *  - domain_lock (arm-smmu's pgtbl_lock before 4.13): the instrumented
 *    driver (dma_probe.h) never sees two of its calls at once and no map
 *    runs wholly inside a sync, with threads mapping and unmapping;
 *    TSan-clean (scripts/test tsan). On simulated CPUs, where the
 *    schedule is deterministic, test_sim_dma_variants.c also shows the
 *    lock-free default overlapping;
 *  - rcache_flush (seed 003): 128 CPUs each hold one cached range above
 *    4 GiB, the allocator is full: a PCI map flushes every CPU's cache
 *    once under EVERY_RETRY (counted by taking the flushed ranges back
 *    from the allocator alone: 127 of the 128 are there) and none under
 *    LAST_RETRY (its own CPU's cached range satisfies the second try);
 *    the old flush leaves the depots' ranges cached, today's drains them;
 *  - viommu_trap_ns: every driver inv_range and flush_all is one trap
 *    (the driver's count against the layer's), whatever issued it;
 *  - non-coherent walks: over a table memory that models a write-back
 *    CPU cache (the device sees only what was cleaned), a device
 *    translates every mapping and faults after its strict unmap; with
 *    coherent_walk set over the same memory it does not (so the cache
 *    model is what the test checks).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/iova.h>
#include <iopgtable/testbed.h>

#include "dma_probe.h"

#define PAGE	4096ull
#define G4	(1ull << 32)

static struct iopt_dma *mk_probe(struct probe *p, void (*tweak)(struct iopt_dma_cfg *))
{
	struct iopt_dma_cfg c;
	struct iopt_dma *d = NULL;

	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = p;
	c.nr_cpus = 4;
	if (tweak)
		tweak(&c);
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	return d;
}

/* ---- IOPT_DMA_DIRECT --------------------------------------------------- */

static struct iopt_dma *mk_direct(void)
{
	struct iopt_dma_cfg c;
	struct iopt_dma *d = NULL;

	iopt_dma_default_cfg(&c);
	c.mode = IOPT_DMA_DIRECT;	/* no ops, no driver needed */
	c.nr_cpus = 2;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	return d;
}

static void test_direct_identity(void **state)
{
	static const struct { uint64_t pa, size; } cases[] = {
		{ 0x80000000ull, 1 }, { 0x80000123ull, 100 },
		{ 0x123456789ull, 3 * PAGE + 7 }, { 0xfffff000ull, PAGE },
		{ 0, 1 }, { ~0ull - PAGE + 1, PAGE },
	};
	struct iopt_dma *d = mk_direct();
	struct iopt_dma_stats st;
	uint64_t iova;

	(void)state;
	assert_null(iopt_dma_pgtable(d));
	assert_int_equal(iopt_dma_attach(d, 5), 0);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(iopt_dma_map(d, cases[i].pa, cases[i].size,
					      IOPT_READ, ~0ull, i & 1, &iova), 0);
		assert_int_equal(iova, cases[i].pa);
		assert_int_equal(iopt_dma_unmap(d, iova, cases[i].size, i & 1), 0);
	}
	/* A scatter list that is one physical range is that range. */
	struct iopt_dma_seg sg[2] = { { 0x90000800ull, 0x800 },
				      { 0x90001000ull, 0x2000 } };
	uint64_t total;

	assert_int_equal(iopt_dma_map_sg(d, sg, 2, IOPT_WRITE, ~0ull, 0, &iova,
					 &total), 0);
	assert_int_equal(iova, 0x90000800ull);
	assert_int_equal(total, 0x2800);
	assert_int_equal(iopt_dma_unmap_sg(d, iova, total, 0), 0);
	assert_int_equal(iopt_dma_flush(d), 0);
	iopt_dma_poll(d);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.maps, 7);
	assert_int_equal(st.unmaps, 7);
	assert_int_equal(st.map_errors, 0);
	assert_int_equal(st.flush_alls + st.viommu_traps + st.held, 0);
	assert_int_equal(iopt_dma_detach(d, 5), 0);
	iopt_dma_destroy(d);
}

/* dma_capable(): dma_addr + size - 1 <= mask, else DMA_MAPPING_ERROR
 * (the scatter-list map and dma_map_sgtable(): -EIO). */
static void test_direct_mask(void **state)
{
	const uint64_t m32 = 0xffffffffull;
	struct iopt_dma *d = mk_direct();
	struct iopt_dma_stats st;
	uint64_t iova = 7;

	(void)state;
	assert_int_equal(iopt_dma_map(d, 0xfffff000ull, PAGE, IOPT_READ, m32, 0,
				      &iova), 0);
	assert_int_equal(iova, 0xfffff000ull);
	iova = 7;
	assert_int_equal(iopt_dma_map(d, 0xfffff000ull, PAGE + 1, IOPT_READ, m32,
				      0, &iova), -EIO);
	assert_int_equal(iopt_dma_map(d, G4, 1, IOPT_READ, m32, 0, &iova), -EIO);
	assert_int_equal(iopt_dma_map(d, 0xffffffffull, 1, IOPT_READ, m32, 0,
				      &iova), 0);
	assert_int_equal(iopt_dma_map(d, 0xffffffffull, 2, IOPT_READ, m32, 0,
				      &iova), -EIO);
	/* 24-bit ISA-style mask. */
	assert_int_equal(iopt_dma_map(d, 0xfff000ull, PAGE, IOPT_READ, 0xffffff,
				      0, &iova), 0);
	assert_int_equal(iopt_dma_map(d, 0x1000000ull, 1, IOPT_READ, 0xffffff, 0,
				      &iova), -EIO);
	/* Scatter lists: the whole range against the mask. */
	struct iopt_dma_seg sg[2] = { { 0xffffe000ull, PAGE },
				      { 0xfffff000ull, PAGE + 1 } };
	uint64_t total = 9;

	assert_int_equal(iopt_dma_map_sg(d, sg, 2, IOPT_READ, m32, 0, &iova,
					 &total), -EIO);
	assert_int_equal(total, 9);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.maps, 3);
	assert_int_equal(st.map_errors, 5);
	iopt_dma_destroy(d);
}

static void test_direct_bad_input(void **state)
{
	struct iopt_dma *d = mk_direct();
	struct iopt_dma_stats st;
	uint64_t iova = 7, total = 7;
	struct iopt_dma_seg gap[2] = { { 0x90000000ull, PAGE },
				       { 0x90002000ull, PAGE } };
	struct iopt_dma_seg zero[1] = { { 0x90000000ull, 0 } };

	(void)state;
	assert_int_equal(iopt_dma_map(d, 0x1000, 0, IOPT_READ, ~0ull, 0, &iova),
			 -EINVAL);
	assert_int_equal(iopt_dma_map(d, ~0ull, 2, IOPT_READ, ~0ull, 0, &iova),
			 -EINVAL);
	assert_int_equal(iopt_dma_map(d, 0x1000, 1, 0, ~0ull, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(d, 0x1000, 1, IOPT_CACHE, ~0ull, 0, &iova),
			 -EINVAL);
	assert_int_equal(iopt_dma_map(d, 0x1000, 1, IOPT_READ, 0xfffe, 0, &iova),
			 -EINVAL);
	assert_int_equal(iopt_dma_map(d, 0x1000, 1, IOPT_READ, ~0ull, 2, &iova),
			 -EINVAL);
	assert_int_equal(iopt_dma_map(d, 0x1000, 1, IOPT_READ, ~0ull, 0, NULL),
			 -EINVAL);
	assert_int_equal(iopt_dma_map_sg(d, gap, 2, IOPT_READ, ~0ull, 0, &iova,
					 &total), -EINVAL);
	assert_int_equal(iopt_dma_map_sg(d, zero, 1, IOPT_READ, ~0ull, 0, &iova,
					 &total), -EINVAL);
	assert_int_equal(iova, 7);
	assert_int_equal(total, 7);
	assert_int_equal(iopt_dma_unmap(d, 0x1000, 0, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(d, ~0ull, 2, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(d, 0x1000, 1, 3), -EINVAL);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.maps, 0);
	assert_int_equal(st.unmaps, 0);
	assert_int_equal(st.map_errors, 9);
	assert_int_equal(st.bad_unmaps, 3);
	iopt_dma_destroy(d);
	/* An unknown mode is refused. */
	struct iopt_dma_cfg c;

	iopt_dma_default_cfg(&c);
	c.mode = (enum iopt_dma_mode)2;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
}

/* The same map in a translating domain gets an IOVA, not the PA: what the
 * direct mode changes. */
static void test_direct_vs_translate(void **state)
{
	struct probe p = { 0 };
	struct iopt_dma *d = mk_probe(&p, NULL);
	uint64_t iova;

	(void)state;
	assert_int_equal(iopt_dma_map(d, 0x80000000ull, PAGE, IOPT_READ, ~0ull, 0,
				      &iova), 0);
	assert_true(iova != 0x80000000ull);
	assert_int_equal(iopt_dma_unmap(d, iova, PAGE, 0), 0);
	assert_int_equal(atomic_load(&p.inv_ranges), 1);
	iopt_dma_destroy(d);
}

/* ---- bad configurations -------------------------------------------------- */

static void test_variant_cfg_errors(void **state)
{
	struct probe p = { 0 };
	struct iopt_dma_cfg c;
	struct iopt_dma *d = (struct iopt_dma *)&p;

	(void)state;
	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = &p;
	c.domain_lock = true;
	c.domain_lock_kind = IOPT_LOCK_MCS + 1;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	c.domain_lock_kind = IOPT_LOCK_MCS;
	c.rcache_flush = (enum iopt_iova_flush)(IOPT_IOVA_FLUSH_EVERY_RETRY + 1);
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	c.rcache_flush = IOPT_IOVA_FLUSH_EVERY_RETRY;
	c.viommu_trap_ns = IOPT_DMA_TRAP_NS_MAX + 1;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	assert_ptr_equal(d, (struct iopt_dma *)&p);	/* untouched */
	c.viommu_trap_ns = IOPT_DMA_TRAP_NS_MAX;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	iopt_dma_destroy(d);
	d = (struct iopt_dma *)&p;

	/* A page cost: at most 1 ms a page, and a flush-all (the whole IOVA
	 * space) at most 60 s. The default 2^48-byte space is 2^36 pages:
	 * 68.7 s at 1 ns a page. */
	c.viommu_trap_ns = 0;
	c.viommu_trap_page_ns = IOPT_DMA_TRAP_PAGE_NS_MAX + 1;
	c.iova_start = PAGE;
	c.iova_end = 2 * PAGE;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	c.iova_start = c.iova_end = 0;
	c.viommu_trap_page_ns = 1;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	assert_ptr_equal(d, (struct iopt_dma *)&p);	/* untouched */
	/* 60000 pages at 1 ms: 60 s exactly; one page more, or 1 ns of
	 * fixed cost more, is too much. */
	c.viommu_trap_page_ns = IOPT_DMA_TRAP_PAGE_NS_MAX;
	c.iova_start = PAGE;
	c.iova_end = PAGE + 60001 * PAGE;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	c.iova_end = PAGE + 60000 * PAGE;
	c.viommu_trap_ns = 1;
	assert_int_equal(iopt_dma_create(&c, &d), -EINVAL);
	assert_ptr_equal(d, (struct iopt_dma *)&p);
	c.viommu_trap_ns = 0;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	iopt_dma_destroy(d);
}

/* ---- domain_lock ------------------------------------------------------- */

#define LOCK_THREADS	3
#define LOCK_OPS	1500

struct lock_run {
	struct probe *p;
	struct iopt_dma *d;
	unsigned cpu;
	unsigned errors;
};

static void spin_2us(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000l + t.tv_nsec - t0.tv_nsec < 2000);
}

static void *lock_worker(void *arg)
{
	struct lock_run *r = arg;

	for (unsigned i = 0; i < LOCK_OPS; i++) {
		uint64_t pa = 0x80000000ull + ((uint64_t)r->cpu << 24) +
			      (i % 64) * PAGE, iova;

		if (probe_map(r->p, r->d, pa, r->cpu, &iova) ||
		    iopt_dma_unmap(r->d, iova, PAGE, r->cpu))
			r->errors++;
	}
	return NULL;
}

static void run_locked(enum iopt_inval policy, unsigned kind)
{
	struct probe p = { .spend = spin_2us };
	struct iopt_dma_cfg c;
	struct iopt_dma *d;
	pthread_t t[LOCK_THREADS];
	struct lock_run r[LOCK_THREADS];

	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = &p;
	c.nr_cpus = LOCK_THREADS;
	c.policy = policy;
	c.domain_lock = true;
	c.domain_lock_kind = kind;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	for (unsigned i = 0; i < LOCK_THREADS; i++) {
		r[i] = (struct lock_run){ .p = &p, .d = d, .cpu = i };
		assert_int_equal(pthread_create(&t[i], NULL, lock_worker, &r[i]), 0);
	}
	for (unsigned i = 0; i < LOCK_THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].errors, 0);
	}
	iopt_dma_destroy(d);
	/* Strict: one invalidation and one sync per unmap, each inside its
	 * unmap's section; never two driver calls at once. */
	if (policy == IOPT_INVAL_STRICT) {
		assert_int_equal(atomic_load(&p.syncs), LOCK_THREADS * LOCK_OPS);
		assert_int_equal(atomic_load(&p.inv_ranges), LOCK_THREADS * LOCK_OPS);
	}
	assert_int_equal(atomic_load(&p.max_active), 1);
	assert_int_equal(atomic_load(&p.maps_inside_sync), 0);
}

static void test_domain_lock_strict(void **state)
{
	(void)state;
	for (unsigned k = IOPT_LOCK_DEFAULT; k <= IOPT_LOCK_MCS; k++)
		run_locked(IOPT_INVAL_STRICT, k);
}

static void test_domain_lock_lazy(void **state)
{
	(void)state;
	run_locked(IOPT_INVAL_LAZY, IOPT_LOCK_TICKET);
}

/* ---- rcache_flush (seed 003) --------------------------------------------- */

#define FLUSH_CPUS	128
#define BELOW4G		16	/* pages of IOVA space below 4 GiB */

/*
 * The IOVA allocator alone: 16 pages below 4 GiB and 128 above, all
 * allocated; then each of 128 CPUs frees one page above 4 GiB into its
 * cache. CPU 0, a PCI device, allocates one page. How many of the other
 * CPUs' cached pages are back in the allocator afterwards is counted by
 * allocating from the allocator alone (no caches) until it is full: each
 * one found was flushed out of its CPU's cache.
 */
static unsigned caches_flushed(enum iopt_iova_flush mode, uint64_t *flushes)
{
	const uint64_t lo = (G4 >> 12) - BELOW4G, hi = (G4 >> 12) + FLUSH_CPUS;
	struct iopt_iova_cfg cfg = { .start_pfn = lo, .end_pfn = hi,
				     .nr_cpus = FLUSH_CPUS, .flush = mode };
	struct iopt_iova *v;
	struct iopt_iova_stats st;
	uint64_t above[FLUSH_CPUS], p;
	unsigned n = 0, back = 0;

	assert_int_equal(iopt_iova_create(&cfg, &v), 0);
	while (iopt_iova_alloc(v, 1, hi - 1, &p) == 0)
		if (p >= G4 >> 12)
			above[n++] = p;
	assert_int_equal(n, FLUSH_CPUS);
	for (unsigned c = 0; c < FLUSH_CPUS; c++)
		assert_int_equal(iopt_iova_free_cached(v, above[c], 1, c), 0);
	assert_int_equal(iopt_iova_alloc_dma(v, 1, hi - 1, IOPT_IOVA_DEV_PCI, 0,
					     &p), 0);
	assert_true(p >= G4 >> 12);
	iopt_iova_get_stats(v, &st);
	*flushes = st.cache_flushes;
	while (iopt_iova_alloc(v, 1, hi - 1, &p) == 0)
		back++;
	iopt_iova_destroy(v);
	return back;
}

static void test_rcache_flush_every_retry(void **state)
{
	uint64_t f;

	(void)state;
	/* Linux to 4.14: the failed 32-bit try flushed all 128 CPUs'
	 * caches (one pass over every CPU); the retry below 4 GiB failed
	 * again, and the full-mask try took one of the flushed pages: the
	 * other 127 are in the allocator. */
	assert_int_equal(caches_flushed(IOPT_IOVA_FLUSH_EVERY_RETRY, &f),
			 FLUSH_CPUS - 1);
	assert_int_equal(f, 1);
	/* Since: no flush; CPU 0's own cached page served the second try. */
	assert_int_equal(caches_flushed(IOPT_IOVA_FLUSH_LAST_RETRY, &f), 0);
	assert_int_equal(f, 0);
	assert_int_equal(caches_flushed(IOPT_IOVA_FLUSH_NEVER, &f), 0);
	assert_int_equal(f, 0);
}

/*
 * What a flush drains: Linux to 4.14 (EVERY_RETRY) returned every CPU's
 * magazines only, the depots stayed; today's flush (LAST_RETRY) takes the
 * depots too. Magazines of 2: CPU 1 frees 5 pages above 4 GiB, so 3 stay
 * in its magazines and 2 go to the depot; then, everything allocated, CPU
 * 0 (PCI) allocates one page. EVERY_RETRY: its 32-bit try flushes CPU
 * 1's 3 (one serves the last try), the depot's 2 stay cached; LAST_RETRY:
 * the last try flushes all 5 (one serves it), none stay.
 */
static void depot_run(enum iopt_iova_flush mode, uint64_t *cached_after,
		      unsigned *back)
{
	const uint64_t lo = (G4 >> 12) - BELOW4G, hi = (G4 >> 12) + 8;
	struct iopt_iova_cfg cfg = { .start_pfn = lo, .end_pfn = hi,
				     .nr_cpus = 2, .mag_size = 2, .flush = mode };
	struct iopt_iova *v;
	struct iopt_iova_stats st;
	uint64_t above[8], p;
	unsigned n = 0;

	assert_int_equal(iopt_iova_create(&cfg, &v), 0);
	while (iopt_iova_alloc(v, 1, hi - 1, &p) == 0)
		if (p >= G4 >> 12)
			above[n++] = p;
	assert_int_equal(n, 8);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(iopt_iova_free_cached(v, above[i], 1, 1), 0);
	iopt_iova_get_stats(v, &st);
	assert_int_equal(st.cached_ranges, 5);
	assert_int_equal(iopt_iova_alloc_dma(v, 1, hi - 1, IOPT_IOVA_DEV_PCI, 0,
					     &p), 0);
	iopt_iova_get_stats(v, &st);
	assert_int_equal(st.cache_flushes, 1);
	*cached_after = st.cached_ranges;
	*back = 0;
	while (iopt_iova_alloc(v, 1, hi - 1, &p) == 0)
		(*back)++;
	iopt_iova_destroy(v);
}

static void test_rcache_flush_depots(void **state)
{
	uint64_t cached;
	unsigned back;

	(void)state;
	depot_run(IOPT_IOVA_FLUSH_EVERY_RETRY, &cached, &back);
	assert_int_equal(cached, 2);
	assert_int_equal(back, 2);
	depot_run(IOPT_IOVA_FLUSH_LAST_RETRY, &cached, &back);
	assert_int_equal(cached, 0);
	assert_int_equal(back, 4);
}

/* The same through the DMA layer's cfg.rcache_flush: a PCI domain whose
 * 32-bit space is full; per failed 32-bit try one flush (EVERY_RETRY) or
 * none, and then CPU 0's own last-unmapped IOVA. */
static void dma_rcache_run(enum iopt_iova_flush mode)
{
	struct probe p = { 0 };
	struct iopt_dma_cfg c;
	struct iopt_dma *d;
	struct iopt_dma_stats st;
	uint64_t low[BELOW4G], above[FLUSH_CPUS], iova;
	uint64_t f0;

	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = &p;
	c.nr_cpus = FLUSH_CPUS;
	c.dev_flags = IOPT_DMA_DEV_PCI;
	c.rcache_flush = mode;
	c.iova_start = G4 - BELOW4G * PAGE;
	c.iova_end = G4 + (1ull << 30);
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	for (unsigned i = 0; i < BELOW4G; i++) {
		assert_int_equal(iopt_dma_map(d, 0x80000000ull, PAGE, IOPT_READ,
					      ~0ull, 0, &low[i]), 0);
		assert_true(low[i] < G4);
	}
	for (unsigned k = 0; k < FLUSH_CPUS; k++) {
		assert_int_equal(iopt_dma_map(d, 0x80000000ull, PAGE, IOPT_READ,
					      ~0ull, k, &above[k]), 0);
		assert_true(above[k] >= G4);
	}
	for (unsigned k = 0; k < FLUSH_CPUS; k++)
		assert_int_equal(iopt_dma_unmap(d, above[k], PAGE, k), 0);
	iopt_dma_get_stats(d, &st);
	f0 = st.iova_cache_flushes;
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(iopt_dma_map(d, 0x80000000ull, PAGE, IOPT_READ,
					      ~0ull, 0, &iova), 0);
		iopt_dma_get_stats(d, &st);
		assert_int_equal(st.iova_cache_flushes - f0,
				 mode == IOPT_IOVA_FLUSH_EVERY_RETRY ? i + 1 : 0);
		if (mode != IOPT_IOVA_FLUSH_EVERY_RETRY)
			assert_int_equal(iova, above[0]);
		assert_int_equal(iopt_dma_unmap(d, iova, PAGE, 0), 0);
	}
	iopt_dma_destroy(d);
}

static void test_dma_rcache_flush(void **state)
{
	(void)state;
	dma_rcache_run(IOPT_IOVA_FLUSH_EVERY_RETRY);
	dma_rcache_run(IOPT_IOVA_FLUSH_LAST_RETRY);
	dma_rcache_run(IOPT_IOVA_FLUSH_NEVER);
}

/* ---- viommu_trap_ns --------------------------------------------------- */

static void trap_cfg(struct iopt_dma_cfg *c)
{
	c->viommu_trap_ns = 1000;
}

static void test_viommu_trap_count(void **state)
{
	struct probe p = { 0 };
	struct iopt_dma *d = mk_probe(&p, trap_cfg);
	struct iopt_dma_stats st;
	uint64_t iova[8];

	(void)state;
	/* Strict unmaps (inv_range), a multi-table unmap that unlinks
	 * nothing, a flush (flush_all). */
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(iopt_dma_map(d, 0x80000000ull + i * PAGE, PAGE,
					      IOPT_READ, ~0ull, i % 4, &iova[i]), 0);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(iopt_dma_unmap(d, iova[i], PAGE, i % 4), 0);
	assert_int_equal(iopt_dma_flush(d), 0);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.viommu_traps,
			 atomic_load(&p.inv_ranges) + atomic_load(&p.flush_alls));
	assert_int_equal(atomic_load(&p.inv_ranges), 8);
	assert_int_equal(atomic_load(&p.flush_alls), 1);
	iopt_dma_destroy(d);
}

/*
 * Host threads through the trap booking (the trap lock guards only the
 * booked end time and the counters): every strict unmap's refresh and
 * every flush-all is booked once, with the pages it names (one page an
 * unmap; the whole space, iova_end - iova_start, a flush-all), whatever
 * the threads' interleaving. Run under ThreadSanitizer by scripts/test.
 */
static void test_viommu_trap_threads(void **state)
{
	const uint64_t space = 4096;	/* pages */
	struct probe p = { 0 };
	struct iopt_dma_cfg c;
	struct iopt_dma *d;
	struct iopt_dma_stats st;
	pthread_t t[LOCK_THREADS];
	struct lock_run r[LOCK_THREADS];

	(void)state;
	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = &p;
	c.nr_cpus = LOCK_THREADS;
	c.policy = IOPT_INVAL_STRICT;
	c.iova_start = 1ull << 32;
	c.iova_end = c.iova_start + space * PAGE;
	c.viommu_trap_ns = 100;
	c.viommu_trap_page_ns = 1;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	for (unsigned i = 0; i < LOCK_THREADS; i++) {
		r[i] = (struct lock_run){ .p = &p, .d = d, .cpu = i };
		assert_int_equal(pthread_create(&t[i], NULL, lock_worker, &r[i]), 0);
	}
	for (unsigned i = 0; i < LOCK_THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].errors, 0);
	}
	assert_int_equal(iopt_dma_flush(d), 0);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(atomic_load(&p.inv_ranges), LOCK_THREADS * LOCK_OPS);
	assert_int_equal(st.viommu_traps,
			 atomic_load(&p.inv_ranges) + atomic_load(&p.flush_alls));
	assert_int_equal(st.viommu_trap_pages,
			 atomic_load(&p.inv_ranges) +
			 atomic_load(&p.flush_alls) * space);
	iopt_dma_destroy(d);
}

/* cfg.viommu_trap_map: each successful map (single or scatter list)
 * traps once more; a refused map does not. */
static void trap_map_cfg(struct iopt_dma_cfg *c)
{
	c->viommu_trap_ns = 100;
	c->viommu_trap_map = true;
}

static void test_viommu_trap_map(void **state)
{
	struct probe p = { 0 };
	struct iopt_dma *d = mk_probe(&p, trap_map_cfg);
	struct iopt_dma_seg sg[2] = { { 0x90000000ull, PAGE }, { 0x90002000ull, PAGE } };
	struct iopt_dma_stats st;
	uint64_t iova[8], sgva, total;

	(void)state;
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(iopt_dma_map(d, 0x80000000ull + i * PAGE, 3 * PAGE,
					      IOPT_READ, ~0ull, i % 4, &iova[i]), 0);
	assert_int_equal(iopt_dma_map_sg(d, sg, 2, IOPT_READ, ~0ull, 0, &sgva,
					 &total), 0);
	assert_int_equal(iopt_dma_map(d, 0x80000000ull, 0, IOPT_READ, ~0ull, 0,
				      &iova[0]), -EINVAL);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.viommu_traps, 9);	/* 8 maps + 1 list, no inv yet */
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(iopt_dma_unmap(d, iova[i], 3 * PAGE, i % 4), 0);
	assert_int_equal(iopt_dma_unmap_sg(d, sgva, total, 0), 0);
	iopt_dma_get_stats(d, &st);
	assert_int_equal(st.viommu_traps, 9 + atomic_load(&p.inv_ranges) +
					  atomic_load(&p.flush_alls));
	iopt_dma_destroy(d);
}

/* The lazy policy's flush-alls trap too. */
static void lazy_trap_cfg(struct iopt_dma_cfg *c)
{
	c->viommu_trap_ns = 100;
	c->policy = IOPT_INVAL_LAZY;
	c->fq_entries = 4;
}

static void test_viommu_trap_lazy(void **state)
{
	struct probe p = { 0 };
	struct iopt_dma *d = mk_probe(&p, lazy_trap_cfg);
	struct iopt_dma_stats st;
	uint64_t iova;

	(void)state;
	for (unsigned i = 0; i < 64; i++) {
		assert_int_equal(iopt_dma_map(d, 0x80000000ull, PAGE, IOPT_READ,
					      ~0ull, 0, &iova), 0);
		assert_int_equal(iopt_dma_unmap(d, iova, PAGE, 0), 0);
	}
	iopt_dma_destroy(d);	/* flushes what is queued */
	assert_true(atomic_load(&p.flush_alls) > 1);
	(void)st;
}

/* ---- non-coherent walks -------------------------------------------------- */

/*
 * Table memory behind a write-back CPU cache: the page table writes a
 * shadow (what the CPU's cache holds); the device's memory gets a line
 * only when the page table cleans it (sync). An unmodelled clean leaves
 * the device reading the old bytes.
 */
#define WB_MAX 64

struct wb {
	const struct iopt_pgtable_mem_ops *inner;
	void *inner_ctx;
	struct { uint64_t pa; size_t size; uint8_t *shadow; void *dev; } t[WB_MAX];
	unsigned n;
	uint64_t cleaned;	/* bytes */
};

static void *wb_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct wb *w = ctx;
	void *dev;
	uint8_t *sh;

	if (w->n == WB_MAX)
		return NULL;
	dev = w->inner->alloc(size, pa, w->inner_ctx);
	if (!dev)
		return NULL;
	sh = aligned_alloc(size, size);
	assert_non_null(sh);
	memcpy(sh, dev, size);
	w->t[w->n].pa = *pa;
	w->t[w->n].size = size;
	w->t[w->n].shadow = sh;
	w->t[w->n].dev = dev;
	w->n++;
	return sh;
}

static void wb_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	struct wb *w = ctx;

	for (unsigned i = 0; i < w->n; i++) {
		if (w->t[i].shadow != va)
			continue;
		w->inner->free(w->t[i].dev, pa, size, w->inner_ctx);
		free(w->t[i].shadow);
		w->t[i] = w->t[--w->n];
		return;
	}
	fail_msg("free of a table the memory did not allocate");
}

static void *wb_p2v(uint64_t pa, void *ctx)
{
	struct wb *w = ctx;

	for (unsigned i = 0; i < w->n; i++)
		if (pa - w->t[i].pa < w->t[i].size)
			return w->t[i].shadow + (pa - w->t[i].pa);
	return NULL;
}

static void wb_sync(void *va, size_t size, void *ctx)
{
	struct wb *w = ctx;
	uint8_t *p = va;

	for (unsigned i = 0; i < w->n; i++) {
		if ((size_t)(p - w->t[i].shadow) < w->t[i].size) {
			memcpy((uint8_t *)w->t[i].dev + (p - w->t[i].shadow), p,
			       size);
			w->cleaned += size;
			return;
		}
	}
	fail_msg("clean outside the tables");
}

static const struct iopt_pgtable_mem_ops wb_ops = {
	.alloc = wb_alloc, .free = wb_free, .phys_to_virt = wb_p2v,
	.sync = wb_sync,
};

/* Map, translate, unmap, translate again, with coherent_walk as given:
 * how many of n device reads got the mapped PA, and how many reads
 * after the strict unmaps faulted. */
static void wb_run(enum iopt_testbed_smmu smmu, bool coherent, unsigned n,
		   unsigned *good, unsigned *faulted, uint64_t *cleaned)
{
	struct iopt_testbed_cfg tc;
	struct iopt_testbed *tb;
	struct iopt_dma_cfg c;
	struct iopt_dma *d;
	struct wb *w = calloc(1, sizeof(*w));
	uint64_t iova[16], pa;

	assert_non_null(w);
	assert_true(n <= 16);
	iopt_testbed_default_cfg(&tc, smmu);
	tc.dma = false;
	tc.attach = false;
	assert_int_equal(iopt_testbed_create(&tc, &tb), 0);
	assert_int_equal(iopt_testbed_dma_cfg(tb, &c), 0);
	w->inner = c.pt.mem;
	w->inner_ctx = c.pt.mem_ctx;
	c.pt.mem = &wb_ops;
	c.pt.mem_ctx = w;
	c.pt.coherent_walk = coherent;
	c.policy = IOPT_INVAL_STRICT;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	assert_int_equal(iopt_dma_attach(d, 1), 0);
	*good = *faulted = 0;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(iopt_dma_map(d, 0x80000000ull + i * 0x10000, PAGE,
					      IOPT_READ | IOPT_WRITE, ~0ull, 0,
					      &iova[i]), 0);
	for (unsigned i = 0; i < n; i++)
		if (iopt_testbed_dev_access(tb, 1, iova[i], i & 1, &pa, NULL) == 0 &&
		    pa == 0x80000000ull + i * 0x10000)
			(*good)++;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(iopt_dma_unmap(d, iova[i], PAGE, 0), 0);
	for (unsigned i = 0; i < n; i++)
		if (iopt_testbed_dev_access(tb, 1, iova[i], false, &pa, NULL) ==
		    -EFAULT)
			(*faulted)++;
	*cleaned = w->cleaned;
	iopt_dma_destroy(d);
	iopt_testbed_destroy(tb);
	assert_int_equal(w->n, 0);
	free(w);
}

static void test_noncoherent_walk(void **state)
{
	static const enum iopt_testbed_smmu smmus[] = { IOPT_TESTBED_SMMUV3,
							IOPT_TESTBED_SMMUV2 };
	unsigned good, faulted;
	uint64_t cleaned;

	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		wb_run(smmus[s], false, 16, &good, &faulted, &cleaned);
		assert_int_equal(good, 16);
		assert_int_equal(faulted, 16);
		assert_true(cleaned >= 2 * 16 * 8);	/* each map, each unmap */
		/* A coherent walk over the same memory cleans nothing: the
		 * device sees empty tables. */
		wb_run(smmus[s], true, 4, &good, &faulted, &cleaned);
		assert_int_equal(good, 0);
		assert_int_equal(cleaned, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_identity),
		cmocka_unit_test(test_direct_mask),
		cmocka_unit_test(test_direct_bad_input),
		cmocka_unit_test(test_direct_vs_translate),
		cmocka_unit_test(test_variant_cfg_errors),
		cmocka_unit_test(test_domain_lock_strict),
		cmocka_unit_test(test_domain_lock_lazy),
		cmocka_unit_test(test_rcache_flush_every_retry),
		cmocka_unit_test(test_rcache_flush_depots),
		cmocka_unit_test(test_dma_rcache_flush),
		cmocka_unit_test(test_viommu_trap_count),
		cmocka_unit_test(test_viommu_trap_threads),
		cmocka_unit_test(test_viommu_trap_map),
		cmocka_unit_test(test_viommu_trap_lazy),
		cmocka_unit_test(test_noncoherent_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
