/* SPDX-License-Identifier: MIT */
/*
 * Concurrency stress, meant to run clean under ThreadSanitizer:
 *  A. threads map and unmap interleaved pages and 2M chunks that share
 *     every level of table, with concurrent translating readers;
 *  B. threads unmap different pages of the same blocks (racing splits);
 *  C. threads unmap different pages of the same contiguous runs;
 *  D. threads overlap their requests on purpose: results are unspecified,
 *     but nothing may crash, race on freed memory or leak;
 *  E. the TLB sync protocol: after iopt_pgtable_tlb_sync() returns, every
 *     invalidation the caller issued has completed.
 * Every mapping's output address is a function of its input address, so
 * readers can check any translation they see. IOPT_STRESS_OPS scales the
 * work (default 100000 operations per phase).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tthread.h"
#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_64K 0x10000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define PA_OFF 0x10000000000ull	/* pa = va + PA_OFF */
#define MAXT 16

static long ops_total(void)
{
	return tu_stress_ops(100000);
}

struct ctx {
	struct iopt_pgtable *pt;
	struct tmem *m;
	unsigned nthreads;
	int id;
	long ops;
	uint64_t base;		/* region start */
	uint64_t npages;	/* 4K pages in the region */
	uint8_t *mine;		/* per-page state of this thread's pages */
	volatile int *stop;
	long bad;		/* translations that disagreed with f(va) */
};

static struct iopt_pgtable *make(struct tmem *m)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = 48, .coherent_walk = true, .mem = &tmem_ops,
		.mem_ctx = m,
	};
	struct iopt_pgtable *pt = NULL;

	tmem_init(m, 0x100000000ull, 512u << 20);
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static void *reader(void *arg)
{
	struct ctx *c = arg;
	uint64_t rng = 0xabcdef12345ull + (uint64_t)c->id;

	while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t va = c->base + (tu_rand(&rng) % (c->npages * SZ_4K));
		uint64_t pa;

		if (iopt_pgtable_iova_to_phys(c->pt, va, &pa) == 0 && pa != va + PA_OFF)
			c->bad++;
	}
	return NULL;
}

/* A: interleaved pages (shared leaf tables) and interleaved 2M chunks
 * (shared level-2 tables), mapped as blocks or as pages. */
static void *phase_a(void *arg)
{
	struct ctx *c = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(c->id + 1);
	uint64_t half = c->npages / 2, chunks = half / 512;

	for (long i = 0; i < c->ops; i++) {
		if (tu_rand(&rng) % 4) {
			/* One of my pages in the lower half. */
			uint64_t p = (tu_rand(&rng) % (half / c->nthreads)) *
					     c->nthreads + (uint64_t)c->id;
			uint64_t va = c->base + p * SZ_4K;

			if (c->mine[p]) {
				assert_int_equal(iopt_pgtable_unmap_pages(c->pt, va, SZ_4K,
									  1, NULL), SZ_4K);
				c->mine[p] = 0;
			} else {
				assert_int_equal(iopt_pgtable_map_pages(c->pt, va,
									va + PA_OFF, SZ_4K,
									1, IOPT_READ, NULL),
						 0);
				c->mine[p] = 1;
			}
		} else {
			/* One of my 2M chunks in the upper half. */
			uint64_t k = (tu_rand(&rng) % (chunks / c->nthreads)) *
					     c->nthreads + (uint64_t)c->id;
			uint64_t p = half + k * 512;
			uint64_t va = c->base + p * SZ_4K;
			bool as_block = tu_rand(&rng) & 1;

			if (c->mine[p]) {
				uint64_t sz = c->mine[p] == 2 ? SZ_2M : SZ_4K;

				assert_int_equal(iopt_pgtable_unmap_pages(c->pt, va, sz,
									  SZ_2M / sz, NULL),
						 SZ_2M);
				c->mine[p] = 0;
			} else {
				uint64_t sz = as_block ? SZ_2M : SZ_4K;

				assert_int_equal(iopt_pgtable_map_pages(c->pt, va,
									va + PA_OFF, sz,
									SZ_2M / sz, IOPT_READ,
									NULL), 0);
				c->mine[p] = as_block ? 2 : 1;
			}
		}
	}
	return NULL;
}

static void run_threads(struct ctx *c, unsigned n, void *(*fn)(void *),
			bool readers)
{
	struct plat_thread th[MAXT], rd[2];
	volatile int stop = 0;

	for (unsigned i = 0; i < n; i++) {
		c[i].stop = &stop;
		TU_THREAD_START(&th[i], fn, &c[i]);
	}
	if (readers)
		for (unsigned i = 0; i < 2; i++) {
			c[MAXT + i] = c[0];
			c[MAXT + i].id = 100 + (int)i;
			c[MAXT + i].stop = &stop;
			c[MAXT + i].bad = 0;
			TU_THREAD_START(&rd[i], reader, &c[MAXT + i]);
		}
	for (unsigned i = 0; i < n; i++)
		plat_thread_join(&th[i]);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	if (readers)
		for (unsigned i = 0; i < 2; i++) {
			plat_thread_join(&rd[i]);
			assert_int_equal(c[MAXT + i].bad, 0);
		}
}

static void test_phase_a_shared_tables(void **state)
{
	static const unsigned counts[] = { 2, 4, 8 };

	(void)state;
	for (unsigned k = 0; k < (tu_threads_fixed() ? 1u : 3u); k++) {
		unsigned n = tu_threads(counts[k], MAXT);
		struct tmem m;
		struct iopt_pgtable *pt = make(&m);
		struct ctx c[MAXT + 2];
		uint64_t npages = 1u << 16;
		uint8_t *state_all = calloc(npages, 1);

		for (unsigned i = 0; i < n; i++)
			c[i] = (struct ctx){ pt, &m, n, (int)i, ops_total() / n,
					     0x7f00000000ull, npages, state_all,
					     NULL, 0 };
		run_threads(c, n, phase_a, true);
		/* Final state against the merged shadows. */
		for (uint64_t p = 0; p < npages; p++) {
			uint64_t va = 0x7f00000000ull + p * SZ_4K, pa;
			int r = iopt_pgtable_iova_to_phys(pt, va, &pa);
			uint64_t head = p < npages / 2 ? p : npages / 2 +
					((p - npages / 2) & ~511ull);
			bool want = state_all[head] != 0;
			assert_int_equal(r, want ? 0 : -ENOENT);
			if (want)
				assert_int_equal(pa, va + PA_OFF);
		}
		iopt_pgtable_free(pt);
		assert_int_equal(m.live, 0);
		tmem_destroy(&m);
		free(state_all);
	}
}

/* B and C: threads unmap their own pages of shared blocks or runs. */
struct split_ctx {
	struct iopt_pgtable *pt;
	unsigned n;
	int id;
	uint64_t va, size;	/* the shared mappings */
	uint8_t *gone;
	uint64_t seed;
};

static void *split_worker(void *arg)
{
	struct split_ctx *c = arg;
	uint64_t rng = c->seed + (uint64_t)c->id;
	uint64_t pages = c->size / SZ_4K;

	for (uint64_t p = (uint64_t)c->id; p < pages; p += c->n) {
		if (tu_rand(&rng) % 8)
			continue;
		assert_int_equal(iopt_pgtable_unmap_pages(c->pt, c->va + p * SZ_4K, SZ_4K,
							  1, NULL), SZ_4K);
		c->gone[p] = 1;
	}
	return NULL;
}

static void split_round(uint64_t mapsz, uint64_t total, unsigned n,
			uint64_t seed)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m);
	struct split_ctx c[MAXT];
	struct plat_thread th[MAXT];
	uint64_t va = 0x4000000000ull;
	uint8_t *gone = calloc(total / SZ_4K, 1);

	n = tu_threads(n, MAXT);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, va + PA_OFF, mapsz,
						total / mapsz, IOPT_READ, NULL), 0);
	for (unsigned i = 0; i < n; i++) {
		c[i] = (struct split_ctx){ pt, n, (int)i, va, total, gone, seed };
		TU_THREAD_START(&th[i], split_worker, &c[i]);
	}
	for (unsigned i = 0; i < n; i++)
		plat_thread_join(&th[i]);
	tu_expect_pages(pt, va, total, gone, 7, PA_OFF);
	/* Racing splitters leave exactly one table per split entry. */
	struct iopt_pgtable_stats st;

	iopt_pgtable_get_stats(pt, &st);
	if (mapsz == SZ_1G) {
		uint64_t touched = 0;

		for (uint64_t c2 = 0; c2 < total / SZ_2M; c2++) {
			bool any = false;

			for (uint64_t p = 0; p < 512; p++)
				any |= gone[c2 * 512 + p];
			touched += any;
		}
		/* top, level 1, one level-2 table per 1G, one leaf table
		 * per touched 2M. */
		assert_int_equal(st.tables_allocated - st.tables_freed,
				 2 + total / SZ_1G + touched);
	}
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);
	tmem_destroy(&m);
	free(gone);
}

static void test_phase_b_racing_splits(void **state)
{
	long rounds = ops_total() / 25000 + 1;

	(void)state;
	for (long r = 0; r < rounds; r++) {
		split_round(SZ_1G, 2 * SZ_1G, 2 + (unsigned)(r % 3) * 3, 77 + (uint64_t)r);
		split_round(SZ_2M, 32 * SZ_2M, 4, 99 + (uint64_t)r);
	}
}

static void test_phase_c_racing_run_breaks(void **state)
{
	long rounds = ops_total() / 25000 + 1;

	(void)state;
	for (long r = 0; r < rounds; r++) {
		split_round(SZ_64K, 256 * SZ_64K, 2 + (unsigned)(r % 7), 5 + (uint64_t)r);
		split_round(16 * SZ_2M, 2 * 16 * SZ_2M, 4, 11 + (uint64_t)r);
	}
}

/* D: overlapping requests on purpose. */
static void *chaos(void *arg)
{
	struct ctx *c = arg;
	uint64_t rng = 0x51ed27ull * (uint64_t)(c->id + 3);
	static const uint64_t sizes[] = { SZ_4K, SZ_64K, SZ_2M, 16 * SZ_2M, SZ_1G };

	for (long i = 0; i < c->ops; i++) {
		uint64_t sz = sizes[tu_rand(&rng) % 5];
		uint64_t va = (tu_rand(&rng) % (4 * SZ_1G)) & ~(sz - 1);
		uint64_t pa;

		switch (tu_rand(&rng) % 3) {
		case 0:
			iopt_pgtable_map_pages(c->pt, va, va + PA_OFF, sz,
					       1 + tu_rand(&rng) % 2, IOPT_READ, NULL);
			break;
		case 1:
			iopt_pgtable_unmap_pages(c->pt, va + (tu_rand(&rng) % 4) * SZ_4K,
						 tu_rand(&rng) & 1 ? SZ_4K : sz, 1, NULL);
			break;
		default:
			if (iopt_pgtable_iova_to_phys(c->pt, va, &pa) == 0 &&
			    pa != va + PA_OFF)
				c->bad++;
			break;
		}
	}
	return NULL;
}

static void test_phase_d_overlapping_chaos(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m);
	struct ctx c[MAXT + 2];
	unsigned n = tu_threads(4, MAXT);

	(void)state;
	for (unsigned i = 0; i < n; i++)
		c[i] = (struct ctx){ pt, &m, n, (int)i, ops_total() / 4 / n, 0,
				     0, NULL, NULL, 0 };
	run_threads(c, n, chaos, false);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(c[i].bad, 0);
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);	/* nothing leaked */
	tmem_destroy(&m);
}

/* E: the sync protocol. */
static uint64_t issued, completed, sync_calls;
PLAT_CPU_LOCAL(uint64_t, my_last);

static void e_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
		       void *cookie)
{
	(void)g;
	(void)iova;
	(void)gran;
	(void)cookie;
	*plat_cpu_local(my_last) = __atomic_add_fetch(&issued, 1, __ATOMIC_ACQ_REL);
}

static void e_sync(void *cookie)
{
	uint64_t snap = __atomic_load_n(&issued, __ATOMIC_ACQUIRE);
	uint64_t cur = __atomic_load_n(&completed, __ATOMIC_ACQUIRE);

	(void)cookie;
	__atomic_add_fetch(&sync_calls, 1, __ATOMIC_RELAXED);
	for (volatile int i = 0; i < 200; i++)
		;
	plat_cpu_relax();	/* simulated CPUs: others may run meanwhile */
	while (cur < snap && !__atomic_compare_exchange_n(&completed, &cur, snap,
							  false, __ATOMIC_ACQ_REL,
							  __ATOMIC_ACQUIRE))
		;
}

static const struct iopt_pgtable_tlb_ops e_ops = { .add_page = e_add_page,
					   .sync = e_sync };

static void *syncer(void *arg)
{
	struct ctx *c = arg;

	for (long i = 0; i < c->ops; i++) {
		uint64_t va = c->base + ((uint64_t)i % 64) * SZ_4K;

		assert_int_equal(iopt_pgtable_map_pages(c->pt, va, va, SZ_4K, 1, IOPT_READ,
							NULL), 0);
		assert_int_equal(iopt_pgtable_unmap_pages(c->pt, va, SZ_4K, 1, NULL), SZ_4K);
		iopt_pgtable_tlb_sync(c->pt);
		if (__atomic_load_n(&completed, __ATOMIC_ACQUIRE) < *plat_cpu_local(my_last))
			c->bad++;
		if (i % 16 == 0)
			iopt_pgtable_tlb_sync(c->pt);	/* nothing pending: no call */
	}
	return NULL;
}

static void test_phase_e_sync_protocol(void **state)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true,
				.tlb = &e_ops };
	struct iopt_pgtable *pt;
	struct ctx c[MAXT + 2];
	unsigned n = tu_threads(4, MAXT);
	long per = ops_total() / 10 / n;

	(void)state;
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	for (unsigned i = 0; i < n; i++)
		c[i] = (struct ctx){ pt, NULL, n, (int)i, per,
				     (uint64_t)(i + 1) * SZ_1G, 0, NULL, NULL, 0 };
	run_threads(c, n, syncer, false);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(c[i].bad, 0);
	/* Syncs are shared or skipped, never more than one per request. */
	assert_true(sync_calls <= (uint64_t)(per * n));
	assert_int_equal(completed, issued);
	print_message("  %lu syncs for %ld sync requests\n",
		      (unsigned long)sync_calls, per * n + per * n / 16);
	iopt_pgtable_free(pt);
}

/* F: serialised mode. Its lock excludes: callbacks made inside it from
 * different threads never overlap, and every thread's work lands. */
static unsigned f_inside, f_overlaps;

static void f_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
		       void *cookie)
{
	(void)g;
	(void)iova;
	(void)gran;
	(void)cookie;
	if (__atomic_fetch_add(&f_inside, 1, __ATOMIC_ACQ_REL))
		__atomic_fetch_add(&f_overlaps, 1, __ATOMIC_RELAXED);
	for (volatile int i = 0; i < 400; i++)
		;
	plat_cpu_relax();	/* simulated CPUs: others may run meanwhile */
	__atomic_fetch_sub(&f_inside, 1, __ATOMIC_ACQ_REL);
}

static void *f_worker(void *arg)
{
	struct ctx *c = arg;

	for (long i = 0; i < c->ops; i++) {
		uint64_t va = c->base + ((uint64_t)i % 1024) * SZ_4K;

		assert_int_equal(iopt_pgtable_map_pages(c->pt, va, va + PA_OFF, SZ_4K, 1,
							IOPT_READ, NULL), 0);
		if (i % 4 != 3)
			assert_int_equal(iopt_pgtable_unmap_pages(c->pt, va, SZ_4K, 1,
								  NULL), SZ_4K);
		else
			c->npages++;	/* left mapped */
	}
	return NULL;
}

static void test_phase_f_serialised(void **state)
{
	static const struct iopt_pgtable_tlb_ops ops = { .add_page = f_add_page };
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true,
				.serialised = true, .tlb = &ops };
	struct iopt_pgtable *pt;
	struct ctx c[MAXT + 2];
	unsigned n = tu_threads(4, MAXT);
	/* Below 1024 ops per thread, so that no page is mapped twice. */
	long per = ops_total() / 100 / n < 1000 ? ops_total() / 100 / n : 1000;

	(void)state;
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	for (unsigned i = 0; i < n; i++)
		c[i] = (struct ctx){ pt, NULL, n, (int)i, per,
				     (uint64_t)i * 2 * SZ_2M + SZ_1G, 0, NULL, NULL,
				     0 };
	run_threads(c, n, f_worker, false);
	assert_int_equal(f_overlaps, 0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(c[i].npages, (uint64_t)(per / 4));
		for (long k = 0; k < per; k++) {
			uint64_t va = c[i].base + (uint64_t)k * SZ_4K;

			if (k % 4 == 3)
				tu_expect_pa(pt, va, va + PA_OFF);
			else
				tu_expect_none(pt, va);
		}
	}
	iopt_pgtable_free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_a_shared_tables),
		cmocka_unit_test(test_phase_b_racing_splits),
		cmocka_unit_test(test_phase_c_racing_run_breaks),
		cmocka_unit_test(test_phase_d_overlapping_chaos),
		cmocka_unit_test(test_phase_e_sync_protocol),
		cmocka_unit_test(test_phase_f_serialised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
