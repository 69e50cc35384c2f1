/* SPDX-License-Identifier: MIT */
/*
 * Splitting blocks (counting the tables allocated), contiguous runs and
 * their break-up, unmapping tables under a block-sized unmap, and hardware
 * dirty tracking.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_16K 0x4000ull
#define SZ_64K 0x10000ull
#define SZ_2M 0x200000ull
#define SZ_32M 0x2000000ull
#define SZ_512M 0x20000000ull
#define SZ_1G 0x40000000ull

static struct iopt_pgtable *make(enum iopt_pgtable_fmt fmt, uint32_t granule,
				 uint32_t quirks)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = granule, .ias = 48, .oas = 48,
		.quirks = quirks, .coherent_walk = true,
	};
	struct iopt_pgtable *pt = NULL;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static uint64_t tables(struct iopt_pgtable *pt)
{
	struct iopt_pgtable_stats st;

	iopt_pgtable_get_stats(pt, &st);
	return st.tables_allocated;
}

/* 4K out of a 1G block allocates exactly two tables (brief 3.3). */
static void test_split_1g_block(void **state)
{
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, 4096, 0);
	const uint64_t va = 5 * SZ_1G, pa = 7 * SZ_1G, hole = va + 300 * SZ_2M +
							      17 * SZ_4K;
	struct iopt_pgtable_info info;
	struct iopt_pgtable_stats st;
	struct ref_walk w;

	(void)state;
	iopt_pgtable_get_info(pt, &info);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, SZ_1G, 1,
						IOPT_READ | IOPT_WRITE | IOPT_CACHE,
						NULL), 0);
	uint64_t before = tables(pt);

	assert_int_equal(iopt_pgtable_unmap_pages(pt, hole, SZ_4K, 1, NULL), SZ_4K);
	assert_int_equal(tables(pt) - before, 2);
	iopt_pgtable_get_stats(pt, &st);
	assert_int_equal(st.splits, 2);
	tu_expect_none(pt, hole);
	tu_expect_none(pt, hole + SZ_4K - 1);
	/* Every other 2M of the block, and every other 4K of the split 2M. */
	for (uint64_t off = 0; off < SZ_1G; off += SZ_2M)
		if (off != 300 * SZ_2M)
			tu_expect_pa(pt, va + off + 0x123, pa + off + 0x123);
	for (uint64_t off = 300 * SZ_2M; off < 301 * SZ_2M; off += SZ_4K)
		if (va + off != hole)
			tu_expect_pa(pt, va + off, pa + off);
	/* The pieces keep the block's attributes, at the right levels. */
	ref_walk(&info, 0, tu_identity_p2v, NULL, va, &w);
	assert_true(w.mapped);
	assert_int_equal(w.level, 2);
	assert_int_equal(w.prot, IOPT_READ | IOPT_WRITE | IOPT_CACHE);
	ref_walk(&info, 0, tu_identity_p2v, NULL, hole + SZ_4K, &w);
	assert_int_equal(w.level, 3);
	assert_int_equal(w.prot, IOPT_READ | IOPT_WRITE | IOPT_CACHE);
	/* Unmapping the rest piecewise, then the hole is gone too. */
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, SZ_1G, 1, NULL), SZ_1G);
	for (uint64_t off = 0; off < SZ_1G; off += SZ_2M)
		tu_expect_none(pt, va + off);
	iopt_pgtable_free(pt);
}

/* Splits in the 16K and 64K granules, and a multi-page partial unmap. */
static void test_split_other_granules(void **state)
{
	static const struct {
		uint32_t granule;
		uint64_t block;
	} c[] = { { 4096, SZ_2M }, { 16384, SZ_32M }, { 65536, SZ_512M } };

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S2, c[i].granule, 0);
		uint64_t g = c[i].granule, blk = c[i].block;
		uint64_t va = 4 * blk, pa = 9 * blk;

		assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, blk, 2, IOPT_READ,
							NULL), 0);
		uint64_t before = tables(pt);

		/* Three granules straddling the two blocks. */
		assert_int_equal(iopt_pgtable_unmap_pages(pt, va + blk - g, g, 3, NULL),
				 3 * g);
		assert_int_equal(tables(pt) - before, 2);
		tu_expect_none(pt, va + blk - g);
		tu_expect_none(pt, va + blk + g);
		tu_expect_pa(pt, va + blk - 2 * g, pa + blk - 2 * g);
		tu_expect_pa(pt, va + blk + 2 * g, pa + blk + 2 * g);
		tu_expect_pa(pt, va, pa);
		tu_expect_pa(pt, va + 2 * blk - 1, pa + 2 * blk - 1);
		iopt_pgtable_free(pt);
	}
}

/* Contiguous runs: all items carry the hint; unmapping part of a run
 * breaks it, at the first, a middle and the last item. */
static void test_contiguous_runs(void **state)
{
	static const struct {
		uint32_t granule;
		uint64_t run, item;
	} c[] = {
		{ 4096, SZ_64K, SZ_4K }, { 4096, SZ_32M, SZ_2M },
		{ 16384, SZ_2M, SZ_16K }, { 16384, SZ_1G, SZ_32M },
		{ 65536, SZ_2M, SZ_64K },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t n = c[i].run / c[i].item;
		uint64_t pos[3] = { 0, n / 2, n - 1 };

		for (unsigned p = 0; p < 3; p++) {
			struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1,
						       c[i].granule, 0);
			struct iopt_pgtable_info info;
			struct iopt_pgtable_stats st;
			struct ref_walk w;
			uint64_t va = 3 * c[i].run, pa = 11 * c[i].run;
			uint64_t g = c[i].granule;

			iopt_pgtable_get_info(pt, &info);
			assert_true(info.pgsize_bitmap & c[i].run);
			assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, c[i].run, 1,
								IOPT_READ | IOPT_NOEXEC,
								NULL), 0);
			for (uint64_t k = 0; k < n; k++) {
				ref_walk(&info, 0, tu_identity_p2v, NULL,
					 va + k * c[i].item, &w);
				assert_true(w.mapped && w.cont);
				assert_int_equal(w.size, c[i].item);
			}
			uint64_t hole = va + pos[p] * c[i].item;

			assert_int_equal(iopt_pgtable_unmap_pages(pt, hole, g, 1, NULL), g);
			iopt_pgtable_get_stats(pt, &st);
			assert_int_equal(st.run_breaks, 1);
			tu_expect_none(pt, hole);
			for (uint64_t off = 0; off < c[i].run; off += g) {
				if (va + off == hole)
					continue;
				ref_walk(&info, 0, tu_identity_p2v, NULL, va + off,
					 &w);
				assert_true(w.mapped);
				assert_false(w.cont);
				assert_int_equal(w.oa, pa + off);
				assert_int_equal(w.prot, IOPT_READ | IOPT_NOEXEC);
			}
			/* Unmapping a whole run needs no break. */
			assert_int_equal(iopt_pgtable_map_pages(pt, va + 2 * c[i].run, pa,
								c[i].run, 1, IOPT_READ,
								NULL), 0);
			assert_int_equal(iopt_pgtable_unmap_pages(pt, va + 2 * c[i].run,
								  c[i].run, 1, NULL),
					 c[i].run);
			iopt_pgtable_get_stats(pt, &st);
			assert_int_equal(st.run_breaks, 1);
			iopt_pgtable_free(pt);
		}
	}
}

/*
 * A many-page unmap clears plain pages in one tight loop that must stop at
 * the first item of a run (pt_fmt.plain_mask/plain_val): 16 plain 4K
 * pages, then a 64K run (LPAE: 16 items with the Contiguous bit; v7s: a
 * large page, 16 identical entries, types from the Arm ARM's
 * short-descriptor format), unmapped 20 pages from the first. The run is
 * broken, not cleared as plain pages: its other 12 items stay mapped to
 * their addresses, none of them still a run item (the reference walker
 * reads the descriptors). Through the walk (the thread's cached leaf table
 * evicted by a map in another page table) and through the cache.
 */
static void test_unmap_stops_at_run(void **state)
{
	static const enum iopt_pgtable_fmt fmts[] = { IOPT_ARM_64_LPAE_S1,
					      IOPT_ARM_V7S };

	(void)state;
	for (unsigned f = 0; f < 2; f++) {
		for (unsigned cached = 0; cached < 2; cached++) {
			bool v7s = fmts[f] == IOPT_ARM_V7S;
			struct tmem m;
			struct iopt_pgtable_cfg cfg = {
				.fmt = fmts[f], .granule = 4096,
				.ias = v7s ? 32 : 48, .oas = v7s ? 32 : 48,
				.coherent_walk = true,
			};
			struct iopt_pgtable *pt = NULL, *other = NULL;
			uint64_t va = 0x40000000, pa = 0x80000000;
			struct iopt_pgtable_info info;
			struct iopt_pgtable_stats st;
			struct ref_walk w;

			assert_int_equal(iopt_pgtable_alloc(&cfg, &other), 0);
			/* Tables where the reference walker can read them. */
			tmem_init(&m, 0x10000000, 1u << 20);
			cfg.mem = &tmem_ops;
			cfg.mem_ctx = &m;
			assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
			iopt_pgtable_get_info(pt, &info);
			/* No-execute: v7s small pages 0b11 (XN in bit 0),
			 * large pages 0b01 (XN elsewhere). */
			assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, SZ_4K, 16,
								IOPT_READ | IOPT_NOEXEC,
								NULL), 0);
			assert_int_equal(iopt_pgtable_map_pages(pt, va + SZ_64K,
								pa + SZ_64K, SZ_64K, 1,
								IOPT_READ, NULL), 0);
			ref_walk(&info, 0, tmem_host_p2v, &m, va + SZ_64K, &w);
			assert_true(w.mapped && w.cont);
			if (!cached)
				assert_int_equal(iopt_pgtable_map_pages(other, va, pa,
									SZ_4K, 1,
									IOPT_READ,
									NULL), 0);
			assert_int_equal(iopt_pgtable_unmap_pages(pt, va, SZ_4K, 20,
								  NULL), 20 * SZ_4K);
			iopt_pgtable_get_stats(pt, &st);
			assert_int_equal(st.run_breaks, 1);
			for (uint64_t k = 0; k < 32; k++) {
				ref_walk(&info, 0, tmem_host_p2v, &m,
					 va + k * SZ_4K, &w);
				assert_int_equal(w.mapped, k >= 20);
				if (k < 20)
					continue;
				assert_false(w.cont);
				assert_int_equal(w.size, SZ_4K);
				assert_int_equal(w.oa, pa + k * SZ_4K);
			}
			iopt_pgtable_free(other);
			iopt_pgtable_free(pt);
			tmem_destroy(&m);
		}
	}
}

/* A block-sized unmap over smaller mappings removes the table under it;
 * a block then maps where only an empty table was left. */
static void test_unmap_table_and_replace_empty(void **state)
{
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, 4096, 0);
	uint64_t va = 8 * SZ_2M;

	(void)state;
	assert_int_equal(iopt_pgtable_map_pages(pt, va + SZ_4K, 0, SZ_4K, 5, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0, SZ_2M, 1, IOPT_READ, NULL),
			 -EEXIST);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, SZ_2M, 1, NULL), SZ_2M);
	for (int i = 0; i < 6; i++)
		tu_expect_none(pt, va + i * SZ_4K);
	/* Empty table left by page unmaps: a block replaces it. */
	assert_int_equal(iopt_pgtable_map_pages(pt, va + SZ_2M, 0, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va + SZ_2M, SZ_4K, 1, NULL), SZ_4K);
	assert_int_equal(iopt_pgtable_map_pages(pt, va + SZ_2M, SZ_2M, SZ_2M, 1,
						IOPT_READ, NULL), 0);
	tu_expect_pa(pt, va + 2 * SZ_2M - 1, 2 * SZ_2M - 1);
	iopt_pgtable_free(pt);
}

struct dirty_log {
	uint64_t va[64];
	uint64_t size[64];
	unsigned n;
};

static void record(uint64_t va, uint64_t size, void *arg)
{
	struct dirty_log *l = arg;

	if (l->n < 64) {
		l->va[l->n] = va;
		l->size[l->n] = size;
	}
	l->n++;
}

/* What the SMMU does on a write to a writable-clean page: clear AP[2]. */
static void hw_dirty(struct iopt_pgtable *pt, uint64_t va)
{
	struct iopt_pgtable_walk w;

	assert_int_equal(iopt_pgtable_walk(pt, va, &w), 0);
	assert_true(w.mapped);
	struct iopt_pgtable_walk_level *l = &w.level[w.nr_levels - 1];
	uint64_t *d = (uint64_t *)(uintptr_t)l->table_pa + l->index;

	__atomic_fetch_and(d, ~(1ull << 7), __ATOMIC_RELAXED);
}

static void test_dirty_tracking(void **state)
{
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, 4096, IOPT_PGTABLE_QUIRK_HD);
	struct iopt_pgtable_info info;
	struct dirty_log log = { 0 };
	struct ref_walk w;
	uint64_t va = 0x40000000;

	(void)state;
	iopt_pgtable_get_info(pt, &info);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0, SZ_4K, 16,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, va + SZ_2M, 0, SZ_2M, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	ref_walk(&info, IOPT_PGTABLE_QUIRK_HD, tu_identity_p2v, NULL, va, &w);
	assert_true(w.mapped);
	assert_true(w.prot & IOPT_WRITE);	/* writable-clean */
	assert_false(w.dirty);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, va, 2 * SZ_2M, 0, NULL, record,
							   &log), 0);
	assert_int_equal(log.n, 0);

	hw_dirty(pt, va + 3 * SZ_4K);
	hw_dirty(pt, va + 9 * SZ_4K);
	hw_dirty(pt, va + SZ_2M);
	/* NO_CLEAR reports and keeps. */
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, va, 2 * SZ_2M,
							   IOPT_PGTABLE_DIRTY_NO_CLEAR, NULL, record,
							   &log), 0);
	assert_int_equal(log.n, 3);
	log.n = 0;
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, va, 2 * SZ_2M, 0, NULL, record,
							   &log), 0);
	assert_int_equal(log.n, 3);
	assert_int_equal(log.va[0], va + 3 * SZ_4K);
	assert_int_equal(log.size[0], SZ_4K);
	assert_int_equal(log.va[1], va + 9 * SZ_4K);
	assert_int_equal(log.va[2], va + SZ_2M);
	assert_int_equal(log.size[2], SZ_2M);
	log.n = 0;
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, va, 2 * SZ_2M, 0, NULL, record,
							   &log), 0);
	assert_int_equal(log.n, 0);
	/* Splitting a dirty block keeps every piece dirty. */
	hw_dirty(pt, va + SZ_2M);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va + SZ_2M, SZ_4K, 1, NULL), SZ_4K);
	log.n = 0;
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, va + SZ_2M, SZ_2M, 0, NULL,
							   record, &log), 0);
	assert_int_equal(log.n, 511);
	/* A read-only page is never dirty. */
	ref_walk(&info, IOPT_PGTABLE_QUIRK_HD, tu_identity_p2v, NULL, va + SZ_2M + SZ_4K,
		 &w);
	assert_false(w.dirty);
	iopt_pgtable_free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_1g_block),
		cmocka_unit_test(test_split_other_granules),
		cmocka_unit_test(test_contiguous_runs),
		cmocka_unit_test(test_unmap_stops_at_run),
		cmocka_unit_test(test_unmap_table_and_replace_empty),
		cmocka_unit_test(test_dirty_tracking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
