/* SPDX-License-Identifier: MIT */
/*
 * Boundaries and bad input: iova 0, the last page, wraparound, the TTBR1
 * upper range, pgcount spanning tables, overflowing sizes, and every
 * invalid argument returning its documented errno with no effect.
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
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull

static struct iopt_pgtable *make_s1(unsigned ias, unsigned oas, uint32_t quirks)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = ias,
		.oas = oas, .quirks = quirks, .coherent_walk = true,
	};
	struct iopt_pgtable *pt = NULL;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static void test_invalid_args_change_nothing(void **state)
{
	struct iopt_pgtable *pt = make_s1(48, 48, 0);
	struct iopt_pgtable_stats before, after;
	uint64_t mapped = 123;

	(void)state;
	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_2M, 0x1000, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	iopt_pgtable_get_stats(pt, &before);

	struct {
		uint64_t iova, pa, pgsize;
		size_t count;
		unsigned prot;
		int err;
	} bad[] = {
		{ 0, 0, 0x2000, 1, IOPT_READ, -EINVAL },	/* not in bitmap */
		{ 0, 0, 0, 1, IOPT_READ, -EINVAL },		/* zero size */
		{ 0, 0, 0x3000, 1, IOPT_READ, -EINVAL },	/* not a power */
		{ 0, 0, SZ_4K, 0, IOPT_READ, -EINVAL },	/* zero count */
		{ 0x800, 0, SZ_4K, 1, IOPT_READ, -EINVAL },	/* iova align */
		{ 0, 0x800, SZ_4K, 1, IOPT_READ, -EINVAL },	/* pa align */
		{ SZ_2M, 0, SZ_2M, 1, IOPT_READ, -EEXIST },	/* over a map */
		{ 0, 0, SZ_4K, 1, 0, -EINVAL },		/* no perms */
		{ 0, 0, SZ_4K, 1, IOPT_CACHE, -EINVAL },	/* no R/W */
		{ 0, 0, SZ_4K, 1, IOPT_READ | 0x100, -EINVAL }, /* unknown */
		{ 1ull << 48, 0, SZ_4K, 1, IOPT_READ, -ERANGE }, /* past ias */
		{ (1ull << 48) - SZ_4K, 0, SZ_4K, 2, IOPT_READ, -ERANGE },
		{ 0, 1ull << 48, SZ_4K, 1, IOPT_READ, -ERANGE }, /* past oas */
		{ 0, (1ull << 48) - SZ_4K, SZ_4K, 2, IOPT_READ, -ERANGE },
		{ 0, 0, SZ_4K, SIZE_MAX, IOPT_READ, -ERANGE },	/* overflow */
		{ 0, 0, SZ_1G, (size_t)1 << 40, IOPT_READ, -ERANGE },
		{ ~0ull & ~(SZ_4K - 1), 0, SZ_4K, 1, IOPT_READ, -ERANGE },
		{ ~0ull & ~(SZ_4K - 1), 0, SZ_4K, 2, IOPT_READ, -ERANGE }, /* wraps */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mapped = 123;
		assert_int_equal(iopt_pgtable_map_pages(pt, bad[i].iova, bad[i].pa,
							bad[i].pgsize, bad[i].count,
							bad[i].prot, &mapped),
				 bad[i].err);
		assert_int_equal(mapped, 0);
	}
	/* Unmap's argument errors. */
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0, 0x2000, 1, NULL), -EINVAL);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0, SZ_4K, 0, NULL), -EINVAL);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0x800, SZ_4K, 1, NULL), -EINVAL);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 1ull << 48, SZ_4K, 1, NULL),
			 -ERANGE);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0, SZ_4K, SIZE_MAX, NULL), -ERANGE);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0, SZ_4K, 1, NULL), 0); /* hole */

	uint64_t pa;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, 1ull << 48, &pa), -ERANGE);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, 0, SZ_4K, 0, NULL, NULL, NULL),
			 -EINVAL);	/* no HD quirk */

	iopt_pgtable_get_stats(pt, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	tu_expect_pa(pt, SZ_2M, 0x1000);
	tu_expect_none(pt, 0);
	iopt_pgtable_free(pt);
}

static void test_bad_configs(void **state)
{
	struct iopt_pgtable *pt = NULL;
	struct iopt_pgtable_mem_ops no_sync = { .alloc = tmem_ops.alloc,
					.free = tmem_ops.free,
					.phys_to_virt = tmem_ops.phys_to_virt };
	struct iopt_pgtable_cfg good = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				 .ias = 48, .oas = 48, .coherent_walk = true };
	struct iopt_pgtable_cfg c;

	(void)state;
#define BAD(field, val)                                                     \
	do {                                                                \
		c = good;                                                   \
		c.field = val;                                              \
		assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);             \
	} while (0)
	BAD(fmt, IOPT_PGTABLE_FMT_COUNT);
	BAD(granule, 8192);
	BAD(ias, 49);
	BAD(ias, 12);
	BAD(oas, 49);
	BAD(oas, 31);
	BAD(quirks, IOPT_PGTABLE_QUIRK_S2FWB);
	BAD(quirks, IOPT_PGTABLE_QUIRK_MTK_EXT);
	BAD(quirks, 1u << 30);
	BAD(pgsize_bitmap, 0x2000);
	c = good;
	c.fmt = IOPT_ARM_64_LPAE_S2;
	c.quirks = IOPT_PGTABLE_QUIRK_HD;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c = good;
	c.fmt = IOPT_ARM_32_LPAE_S1;
	c.ias = 32;
	c.oas = 40;
	c.granule = 16384;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c.granule = 4096;
	c.ias = 33;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c = good;
	c.coherent_walk = false;
	c.mem = &no_sync;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	assert_int_equal(iopt_pgtable_alloc(NULL, &pt), -EINVAL);
	assert_null(pt);
	/* A bitmap restricts the sizes. */
	c = good;
	c.pgsize_bitmap = SZ_4K | SZ_1G;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), 0);
	struct iopt_pgtable_info info;

	iopt_pgtable_get_info(pt, &info);
	assert_int_equal(info.pgsize_bitmap, SZ_4K | SZ_1G);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0, 0, SZ_2M, 1, IOPT_READ, NULL),
			 -EINVAL);
	iopt_pgtable_free(pt);
	iopt_pgtable_free(NULL);
}

static void test_first_and_last_page(void **state)
{
	(void)state;
	for (unsigned ias = 32; ias <= 48; ias += 4) {
		struct iopt_pgtable *pt = make_s1(ias, 48, 0);
		uint64_t last = (1ull << ias) - SZ_4K;

		assert_int_equal(iopt_pgtable_map_pages(pt, 0, 0, SZ_4K, 1, IOPT_READ,
							NULL), 0);
		assert_int_equal(iopt_pgtable_map_pages(pt, last, 0x7000, SZ_4K, 1,
							IOPT_WRITE, NULL), 0);
		tu_expect_pa(pt, 0, 0);
		tu_expect_pa(pt, 0xfff, 0xfff);
		tu_expect_pa(pt, last + 0xfff, 0x7fff);
		tu_expect_none(pt, SZ_4K);
		tu_expect_none(pt, last - 1);
		assert_int_equal(iopt_pgtable_unmap_pages(pt, last, SZ_4K, 1, NULL), SZ_4K);
		assert_int_equal(iopt_pgtable_unmap_pages(pt, 0, SZ_4K, 1, NULL), SZ_4K);
		tu_expect_none(pt, 0);
		iopt_pgtable_free(pt);
	}
}

static void test_pgcount_spans_tables(void **state)
{
	struct iopt_pgtable *pt = make_s1(48, 48, 0);
	uint64_t va = 0x7fc0000000ull - 3 * SZ_4K;	/* crosses L1-L3 tables */
	const size_t n = 1030;
	uint64_t mapped;

	(void)state;
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0x100000000ull, SZ_4K, n,
						IOPT_READ | IOPT_WRITE, &mapped), 0);
	assert_int_equal(mapped, n * SZ_4K);
	for (size_t i = 0; i < n; i++)
		tu_expect_pa(pt, va + i * SZ_4K + 5, 0x100000000ull + i * SZ_4K + 5);
	tu_expect_none(pt, va - 1);
	tu_expect_none(pt, va + n * SZ_4K);
	/* Unmap stops at the first hole and reports the prefix. */
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va + 10 * SZ_4K, SZ_4K, 1, NULL),
			 SZ_4K);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, SZ_4K, n, NULL), 10 * SZ_4K);
	tu_expect_none(pt, va);
	tu_expect_pa(pt, va + 11 * SZ_4K, 0x100000000ull + 11 * SZ_4K);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va + 11 * SZ_4K, SZ_4K, n - 11,
						  NULL), (n - 11) * SZ_4K);
	for (size_t i = 0; i < n; i += 7)
		tu_expect_none(pt, va + i * SZ_4K);
	/* A failed map that spans tables leaves nothing behind. */
	assert_int_equal(iopt_pgtable_map_pages(pt, va + 600 * SZ_4K, 0, SZ_4K, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0, SZ_4K, n, IOPT_READ, NULL),
			 -EEXIST);
	for (size_t i = 0; i < n; i++)
		if (i != 600)
			tu_expect_none(pt, va + i * SZ_4K);
	tu_expect_pa(pt, va + 600 * SZ_4K, 0);
	iopt_pgtable_free(pt);
}

static void test_ttbr1_range(void **state)
{
	struct iopt_pgtable *pt = make_s1(48, 48, IOPT_PGTABLE_QUIRK_TTBR1);
	struct iopt_pgtable_info info;
	struct ref_walk w;
	uint64_t top = ~0ull & ~(SZ_4K - 1), low = ~0ull << 48;

	(void)state;
	iopt_pgtable_get_info(pt, &info);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0, 0, SZ_4K, 1, IOPT_READ, NULL),
			 -ERANGE);
	assert_int_equal(iopt_pgtable_map_pages(pt, low - SZ_4K, 0, SZ_4K, 1,
						IOPT_READ, NULL), -ERANGE);
	assert_int_equal(iopt_pgtable_map_pages(pt, top, 0x5000, SZ_4K, 2, IOPT_READ,
						NULL), -ERANGE);	/* wraps */
	assert_int_equal(iopt_pgtable_map_pages(pt, top, 0x5000, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, low, 0x9000, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	tu_expect_pa(pt, ~0ull, 0x5fff);
	tu_expect_pa(pt, low + 1, 0x9001);
	ref_walk(&info, IOPT_PGTABLE_QUIRK_TTBR1, tu_identity_p2v, NULL, ~0ull, &w);
	assert_true(w.mapped);
	assert_int_equal(w.oa, 0x5fff);
	ref_walk(&info, IOPT_PGTABLE_QUIRK_TTBR1, tu_identity_p2v, NULL, low, &w);
	assert_true(w.mapped);
	assert_int_equal(w.oa, 0x9000);
	assert_int_equal(iopt_pgtable_iova_to_phys(pt, SZ_4K, &(uint64_t){ 0 }), -ERANGE);

	struct iopt_pgtable_gather g;

	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, top, SZ_4K, 1, &g), SZ_4K);
	assert_int_equal(g.start, top);
	assert_int_equal(g.last, ~0ull);
	assert_int_equal(g.pgsize, SZ_4K);
	tu_expect_none(pt, top);
	iopt_pgtable_free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_args_change_nothing),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_first_and_last_page),
		cmocka_unit_test(test_pgcount_spans_tables),
		cmocka_unit_test(test_ttbr1_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
