/* SPDX-License-Identifier: MIT */
/*
 * Non-coherent walks. struct tmem keeps a "device view" of table memory
 * that only changes when the sync callback covers it, and fills freshly
 * allocated tables' device view with garbage (0xa5). A walker over the
 * device view must never follow a table descriptor into unsynced content,
 * must see every completed map and unmap, runs of leaves must cost one
 * sync each, and a leaf's invalidation must come after its cleared entry
 * reaches the device (or the walker could refill the TLB from it).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_1M 0x100000ull
#define SZ_2M 0x200000ull
#define SZ_16M 0x1000000ull
#define GARBAGE 0xa5a5a5a5a5a5a5a5ull

static struct iopt_pgtable *make(struct tmem *m, enum iopt_fmt fmt,
				 uint32_t granule)
{
	struct iopt_cfg cfg = {
		.fmt = fmt, .granule = granule, .ias = 40, .oas = 40,
		.coherent_walk = false, .mem = &tmem_ops, .mem_ctx = m,
	};
	struct iopt_pgtable *pt = NULL;

	tmem_init(m, 0x80000000ull, 64u << 20);
	assert_int_equal(iopt_alloc(&cfg, &pt), 0);
	return pt;
}

/*
 * Scan every table reachable in the device view from the top; fail if a
 * descriptor holds garbage (a table followed before its contents synced).
 * Returns the number of tables seen.
 */
static unsigned dev_scan(struct tmem *m, const struct iopt_info *info,
			 uint64_t table_pa, unsigned lvl, unsigned nbits)
{
	uint64_t *t = tmem_dev_p2v(table_pa, m);
	unsigned seen = 1;
	unsigned g = __builtin_ctz(info->granule);

	for (unsigned i = 0; i < (1u << nbits); i++) {
		uint64_t d = __atomic_load_n(&t[i], __ATOMIC_RELAXED);

		assert_true(d != GARBAGE);
		if (lvl < 3 && (d & 3) == 3)
			seen += dev_scan(m, info,
					 d & ((1ull << 48) - 1) & ~((1ull << g) - 1),
					 lvl + 1, g - 3);
	}
	return seen;
}

static unsigned dev_scan_all(struct tmem *m, struct iopt_pgtable *pt)
{
	struct iopt_info info;
	unsigned g, shift, nbits;

	iopt_get_info(pt, &info);
	g = __builtin_ctz(info.granule);
	shift = g + (3 - info.start_level) * (g - 3);
	nbits = info.ias - shift;
	pthread_mutex_lock(&m->lock);
	unsigned n = dev_scan(m, &info, info.regs.ttbr, info.start_level, nbits);
	pthread_mutex_unlock(&m->lock);
	return n;
}

static void expect_dev(struct iopt_pgtable *pt, struct tmem *m, uint64_t va,
		       bool mapped, uint64_t pa)
{
	struct iopt_info info;
	struct ref_walk w;

	iopt_get_info(pt, &info);
	ref_walk(&info, 0, tmem_dev_p2v, m, va, &w);
	assert_int_equal(w.mapped, mapped);
	if (mapped)
		assert_int_equal(w.oa, pa);
}

static void test_device_view_follows(void **state)
{
	static const struct {
		enum iopt_fmt fmt;
		uint32_t granule;
	} c[] = { { IOPT_ARM_64_LPAE_S1, 4096 }, { IOPT_ARM_64_LPAE_S2, 16384 },
		  { IOPT_ARM_64_LPAE_S1, 65536 }, { IOPT_ARM_32_LPAE_S2, 4096 } };
	uint64_t rng = 88172645463325252ull;

	(void)state;
	for (unsigned k = 0; k < 4; k++) {
		struct tmem m;
		struct iopt_pgtable *pt = make(&m, c[k].fmt, c[k].granule);
		uint64_t g = c[k].granule;

		for (int i = 0; i < 300; i++) {
			uint64_t va = (tu_rand(&rng) % (1ull << 40)) & ~(g - 1);
			unsigned n = 1 + tu_rand(&rng) % 8;
			uint64_t pa = (tu_rand(&rng) % (1ull << 39)) & ~(g - 1);

			if (va + n * g > (1ull << 40))
				continue;
			if (iopt_map_pages(pt, va, pa, g, n, IOPT_READ, NULL))
				continue;
			for (unsigned j = 0; j < n; j++)
				expect_dev(pt, &m, va + j * g + 3, true,
					   pa + j * g + 3);
			if (i % 3 == 0) {
				assert_int_equal(iopt_unmap_pages(pt, va, g, n, NULL),
						 (int64_t)(n * g));
				for (unsigned j = 0; j < n; j++)
					expect_dev(pt, &m, va + j * g, false, 0);
			}
			if (i % 50 == 0)
				dev_scan_all(&m, pt);
		}
		/* A split: the device sees the block's pieces. */
		uint64_t blk = g == 4096 ? SZ_2M : g == 16384 ? 32ull << 20 :
								512ull << 20;

		if (iopt_map_pages(pt, 0, 0, blk, 1, IOPT_READ, NULL) == 0) {
			assert_int_equal(iopt_unmap_pages(pt, g, g, 1, NULL),
					 (int64_t)g);
			expect_dev(pt, &m, 0, true, 0);
			expect_dev(pt, &m, g, false, 0);
			expect_dev(pt, &m, 2 * g + 1, true, 2 * g + 1);
		}
		dev_scan_all(&m, pt);
		iopt_free(pt);
		assert_int_equal(m.live, 0);
		tmem_destroy(&m);
	}
}

/* Batched clears: one sync per run of leaves, for map and for unmap. */
static void test_one_sync_per_run(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m, IOPT_ARM_64_LPAE_S1, 4096);
	long s;

	(void)state;
	assert_int_equal(iopt_map_pages(pt, SZ_2M, 0, SZ_4K, 1, IOPT_READ, NULL),
			 0);
	s = m.syncs;
	assert_int_equal(iopt_map_pages(pt, SZ_2M + SZ_4K, 0, SZ_4K, 256,
					IOPT_READ, NULL), 0);
	assert_int_equal(m.syncs - s, 1);
	s = m.syncs;
	assert_int_equal(iopt_unmap_pages(pt, SZ_2M + SZ_4K, SZ_4K, 256, NULL),
			 256 * SZ_4K);
	assert_int_equal(m.syncs - s, 1);
	/* Across two leaf tables: one sync each. */
	assert_int_equal(iopt_map_pages(pt, 2 * SZ_2M, 0, SZ_4K, 1, IOPT_READ,
					NULL), 0);
	assert_int_equal(iopt_map_pages(pt, 2 * SZ_2M - 8 * SZ_4K, 0, SZ_4K, 8,
					IOPT_READ, NULL), 0);
	assert_int_equal(iopt_map_pages(pt, 2 * SZ_2M + SZ_4K, 0, SZ_4K, 8,
					IOPT_READ, NULL), 0);
	s = m.syncs;
	assert_int_equal(iopt_unmap_pages(pt, 2 * SZ_2M - 8 * SZ_4K, SZ_4K, 17,
					  NULL), 17 * SZ_4K);
	assert_int_equal(m.syncs - s, 2);
	iopt_free(pt);
	tmem_destroy(&m);
}

struct inv_check {
	struct iopt_pgtable *pt;
	struct tmem *m;
	unsigned pages;		/* add_page calls seen */
	unsigned stale;		/* ... of which the device still maps */
};

static void inv_add_page(struct iopt_gather *g, uint64_t iova, uint64_t gran,
			 void *cookie)
{
	struct inv_check *c = cookie;
	struct iopt_info info;
	struct ref_walk w;

	(void)g;
	iopt_get_info(c->pt, &info);
	for (uint64_t off = 0; off < gran; off += info.granule) {
		ref_walk(&info, 0, tmem_dev_p2v, c->m, iova + off, &w);
		c->stale += w.mapped;
	}
	c->pages++;
}

/* Every add_page finds its leaf already cleared in the device view: pages,
 * a run across two leaf tables, blocks, contiguous runs (whole and broken)
 * and a page out of a split block; LPAE and v7s. */
static void test_invalidate_after_sync(void **state)
{
	static const struct iopt_tlb_ops ops = { .add_page = inv_add_page };
	static const struct {
		enum iopt_fmt fmt;
		uint64_t va, size;
		unsigned count;		/* mapped */
		uint64_t uva, usize;
		unsigned ucount;	/* unmapped */
		unsigned leaves;	/* add_page calls expected */
	} c[] = {
		{ IOPT_ARM_64_LPAE_S1, 0x40000000, SZ_4K, 1, 0x40000000, SZ_4K, 1, 1 },
		{ IOPT_ARM_64_LPAE_S1, 0x40000000, SZ_4K, 40, 0x40000000, SZ_4K, 40, 40 },
		{ IOPT_ARM_64_LPAE_S1, SZ_2M - 8 * SZ_4K, SZ_4K, 16, SZ_2M - 8 * SZ_4K,
		  SZ_4K, 16, 16 },
		{ IOPT_ARM_64_LPAE_S1, 0x80000000, SZ_2M, 3, 0x80000000, SZ_2M, 3, 3 },
		/* A contiguous run may be cached as 16 single entries: one
		 * add_page per item. */
		{ IOPT_ARM_64_LPAE_S1, 0xc0000000, 0x10000, 2, 0xc0000000, 0x10000, 2,
		  32 },
		/* One page out of a contiguous run: the run's other 15 pages
		 * stay mapped; the page's own clear reaches the device first. */
		{ IOPT_ARM_64_LPAE_S1, 0xc0000000, 0x10000, 1, 0xc0000000 + SZ_4K,
		  SZ_4K, 1, 1 },
		{ IOPT_ARM_64_LPAE_S1, 0x100000000ull, SZ_2M, 1, 0x100000000ull, SZ_4K,
		  1, 1 },
		{ IOPT_ARM_V7S, 0x40000000, SZ_4K, 40, 0x40000000, SZ_4K, 40, 40 },
		{ IOPT_ARM_V7S, SZ_1M - 8 * SZ_4K, SZ_4K, 16, SZ_1M - 8 * SZ_4K, SZ_4K,
		  16, 16 },
		{ IOPT_ARM_V7S, 0x50000000, SZ_1M, 3, 0x50000000, SZ_1M, 3, 3 },
		{ IOPT_ARM_V7S, 0x60000000, 0x10000, 2, 0x60000000, 0x10000, 2, 32 },
		{ IOPT_ARM_V7S, 0x60000000, 0x10000, 1, 0x60000000 + SZ_4K, SZ_4K, 1,
		  1 },
		{ IOPT_ARM_V7S, 0x70000000, SZ_16M, 1, 0x70000000, SZ_16M, 1, 16 },
		{ IOPT_ARM_V7S, 0x70000000, SZ_16M, 1, 0x70000000 + SZ_1M, SZ_1M, 1,
		  1 },
		{ IOPT_ARM_V7S, 0x50000000, SZ_1M, 1, 0x50000000 + SZ_4K, SZ_4K, 1, 1 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct tmem m;
		struct inv_check chk = { .m = &m };
		bool v7s = c[k].fmt == IOPT_ARM_V7S;
		struct iopt_cfg cfg = {
			.fmt = c[k].fmt, .granule = 4096, .ias = v7s ? 32 : 40,
			.oas = v7s ? 32 : 40, .coherent_walk = false,
			.mem = &tmem_ops, .mem_ctx = &m, .tlb = &ops,
			.tlb_cookie = &chk,
		};
		struct iopt_pgtable *pt = NULL;
		struct iopt_gather g;

		tmem_init(&m, 0x80000000ull, 64u << 20);
		assert_int_equal(iopt_alloc(&cfg, &pt), 0);
		chk.pt = pt;
		assert_int_equal(iopt_map_pages(pt, c[k].va, c[k].va, c[k].size,
						c[k].count, IOPT_READ, NULL), 0);
		iopt_gather_init(&g);
		assert_int_equal(iopt_unmap_pages(pt, c[k].uva, c[k].usize,
						  c[k].ucount, &g),
				 (int64_t)(c[k].usize * c[k].ucount));
		assert_int_equal(chk.pages, c[k].leaves);
		assert_int_equal(chk.stale, 0);
		assert_true(g.start == c[k].uva &&
			    g.last == c[k].uva + c[k].usize * c[k].ucount - 1);
		iopt_free(pt);
		assert_int_equal(m.live, 0);
		tmem_destroy(&m);
	}
}

static void *map_one(void *arg)
{
	struct iopt_pgtable *pt = arg;

	return (void *)(intptr_t)iopt_map_pages(pt, SZ_2M + SZ_4K, 0, SZ_4K, 1,
						IOPT_READ, NULL);
}

/* An entry installed by another thread but not yet marked synced (its
 * installer is slow): the next user syncs it himself, and marks it. */
static void test_unsynced_entry_is_kicked(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m, IOPT_ARM_64_LPAE_S1, 4096);
	struct iopt_walk w;

	(void)state;
	assert_int_equal(iopt_map_pages(pt, SZ_2M, 0, SZ_4K, 1, IOPT_READ, NULL),
			 0);
	assert_int_equal(iopt_walk(pt, SZ_2M, &w), 0);
	/* Every table entry on the way carries the software sync bit. */
	for (unsigned l = 0; l + 1 < w.nr_levels; l++)
		assert_true(w.level[l].desc >> 55 & 1);

	/* Simulate the race: bit clear, device view of the entry stale. */
	uint64_t *host = tmem_host_p2v(w.level[0].table_pa, &m);
	uint64_t *dev = tmem_dev_p2v(w.level[0].table_pa, &m);
	unsigned idx = w.level[0].index;

	__atomic_fetch_and(&host[idx], ~(1ull << 55), __ATOMIC_RELAXED);
	dev[idx] = 0;
	expect_dev(pt, &m, SZ_2M, false, 0);
	/* A thread that has never walked there (no cached leaf table). */
	pthread_t th;
	void *ret;

	pthread_create(&th, NULL, map_one, pt);
	pthread_join(th, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_true(host[idx] >> 55 & 1);
	expect_dev(pt, &m, SZ_2M, true, 0);
	expect_dev(pt, &m, SZ_2M + SZ_4K, true, 0);
	iopt_free(pt);
	tmem_destroy(&m);
}

struct conc {
	struct iopt_pgtable *pt;
	struct tmem *m;
	int id;
	volatile int *stop;
};

static void *mapper(void *arg)
{
	struct conc *c = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(c->id + 1);

	for (int i = 0; i < 3000; i++) {
		/* Pages owned by thread id: interleaved 4K, shared tables. */
		uint64_t page = (tu_rand(&rng) % (1u << 16)) * 2 + (uint64_t)c->id;
		uint64_t va = page * SZ_4K * 37;

		if (va >= (1ull << 40))
			continue;
		if (iopt_map_pages(c->pt, va, page * SZ_4K, SZ_4K, 1, IOPT_READ,
				   NULL) == 0 && (i & 1))
			iopt_unmap_pages(c->pt, va, SZ_4K, 1, NULL);
	}
	return NULL;
}

/* Two mappers racing to install shared tables while a device-view scanner
 * checks that no table is ever followed into unsynced content. */
static void test_concurrent_install_never_exposes_garbage(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m, IOPT_ARM_64_LPAE_S1, 4096);
	volatile int stop = 0;
	struct conc c[2] = { { pt, &m, 0, &stop }, { pt, &m, 1, &stop } };
	pthread_t th[2];

	(void)state;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, mapper, &c[i]);
	for (int i = 0; i < 200; i++)
		dev_scan_all(&m, pt);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	dev_scan_all(&m, pt);
	iopt_free(pt);
	assert_int_equal(m.live, 0);
	tmem_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_view_follows),
		cmocka_unit_test(test_one_sync_per_run),
		cmocka_unit_test(test_invalidate_after_sync),
		cmocka_unit_test(test_unsynced_entry_is_kicked),
		cmocka_unit_test(test_concurrent_install_never_exposes_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
