/* SPDX-License-Identifier: MIT */
/*
 * Non-coherent walks. struct tmem keeps a "device view" of table memory
 * that only changes when the sync callback covers it, and fills freshly
 * allocated tables' device view with garbage (0xa5). A walker over the
 * device view must never follow a table descriptor into unsynced content,
 * must see every completed map and unmap, runs of leaves must cost one
 * sync each, and every TLB callback must come after the entries it
 * reports, removed or replaced, reach the device (or the walker could
 * refill the TLB or walk cache from the old ones).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_1M 0x100000ull
#define SZ_2M 0x200000ull
#define SZ_16M 0x1000000ull
#define SZ_64K 0x10000ull
#define SZ_1G 0x40000000ull
#define GARBAGE 0xa5a5a5a5a5a5a5a5ull

static struct iopt_pgtable *make(struct tmem *m, enum iopt_pgtable_fmt fmt,
				 uint32_t granule)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = granule, .ias = 40, .oas = 40,
		.coherent_walk = false, .mem = &tmem_ops, .mem_ctx = m,
	};
	struct iopt_pgtable *pt = NULL;

	tmem_init(m, 0x80000000ull, 64u << 20);
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

/*
 * Scan every table reachable in the device view from the top; fail if a
 * descriptor holds garbage (a table followed before its contents synced).
 * Returns the number of tables seen.
 */
static unsigned dev_scan(struct tmem *m, const struct iopt_pgtable_info *info,
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
	struct iopt_pgtable_info info;
	unsigned g, shift, nbits;

	iopt_pgtable_get_info(pt, &info);
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
	struct iopt_pgtable_info info;
	struct ref_walk w;

	iopt_pgtable_get_info(pt, &info);
	ref_walk(&info, 0, tmem_dev_p2v, m, va, &w);
	assert_int_equal(w.mapped, mapped);
	if (mapped)
		assert_int_equal(w.oa, pa);
}

static void test_device_view_follows(void **state)
{
	static const struct {
		enum iopt_pgtable_fmt fmt;
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
			if (iopt_pgtable_map_pages(pt, va, pa, g, n, IOPT_READ, NULL))
				continue;
			for (unsigned j = 0; j < n; j++)
				expect_dev(pt, &m, va + j * g + 3, true,
					   pa + j * g + 3);
			if (i % 3 == 0) {
				assert_int_equal(iopt_pgtable_unmap_pages(pt, va, g, n, NULL),
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

		if (iopt_pgtable_map_pages(pt, 0, 0, blk, 1, IOPT_READ, NULL) == 0) {
			assert_int_equal(iopt_pgtable_unmap_pages(pt, g, g, 1, NULL),
					 (int64_t)g);
			expect_dev(pt, &m, 0, true, 0);
			expect_dev(pt, &m, g, false, 0);
			expect_dev(pt, &m, 2 * g + 1, true, 2 * g + 1);
		}
		dev_scan_all(&m, pt);
		iopt_pgtable_free(pt);
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
	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_2M, 0, SZ_4K, 1, IOPT_READ, NULL),
			 0);
	s = m.syncs;
	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_2M + SZ_4K, 0, SZ_4K, 256,
						IOPT_READ, NULL), 0);
	assert_int_equal(m.syncs - s, 1);
	s = m.syncs;
	assert_int_equal(iopt_pgtable_unmap_pages(pt, SZ_2M + SZ_4K, SZ_4K, 256, NULL),
			 256 * SZ_4K);
	assert_int_equal(m.syncs - s, 1);
	/* Across two leaf tables: one sync each. */
	assert_int_equal(iopt_pgtable_map_pages(pt, 2 * SZ_2M, 0, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 2 * SZ_2M - 8 * SZ_4K, 0, SZ_4K, 8,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 2 * SZ_2M + SZ_4K, 0, SZ_4K, 8,
						IOPT_READ, NULL), 0);
	s = m.syncs;
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 2 * SZ_2M - 8 * SZ_4K, SZ_4K, 17,
						  NULL), 17 * SZ_4K);
	assert_int_equal(m.syncs - s, 2);
	iopt_pgtable_free(pt);
	tmem_destroy(&m);
}

/* Every mem_ops.sync call recorded (calls, bytes, 64-byte lines touched),
 * then passed to tmem. */
struct sync_log {
	struct tmem m;
	long calls, lines;
	uint64_t bytes;
};

static void log_sync(void *va, size_t size, void *ctx)
{
	struct sync_log *l = ctx;
	uintptr_t a = (uintptr_t)va;

	l->calls++;
	l->bytes += size;
	l->lines += (long)((a + size + 63) / 64 - a / 64);
	tmem_ops.sync(va, size, &l->m);
}

static void *log_alloc(size_t size, uint64_t *pa, void *ctx)
{
	return tmem_ops.alloc(size, pa, &((struct sync_log *)ctx)->m);
}

static void log_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	tmem_ops.free(va, pa, size, &((struct sync_log *)ctx)->m);
}

static void *log_p2v(uint64_t pa, void *ctx)
{
	return tmem_host_p2v(pa, &((struct sync_log *)ctx)->m);
}

static const struct iopt_pgtable_mem_ops log_ops = {
	.alloc = log_alloc, .free = log_free, .phys_to_virt = log_p2v,
	.sync = log_sync,
};

/* 64-byte lines that entries [idx, idx + n) of a table (its base aligned
 * to its size, so to a line) occupy, esize bytes each. */
static long lines_of(uint64_t idx, uint64_t n, unsigned esize)
{
	return (long)(((idx + n) * esize + 63) / 64 - idx * esize / 64);
}

/*
 * Unmap of N contiguous leaves on a non-coherent walk. Expected from the
 * geometry alone (a leaf table of E entries of esize bytes): batched (the
 * default), one sync per leaf table the range touches, over the entries
 * it cleared there (bytes N * esize, lines per table as lines_of()); with
 * IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH, N syncs of esize bytes, one line
 * each (Linux's io-pgtable-arm before its 2024 change: a dma_sync per
 * PTE). Map syncs the same either way (LPAE: once per table); the device
 * view shows the range unmapped after either; a coherent walk syncs
 * nothing.
 */
static void test_unmap_sync_each(void **state)
{
	static const struct {
		enum iopt_pgtable_fmt fmt;
		uint64_t pgsize, va;	/* leaf size, first leaf */
		unsigned n, entries, esize;	/* leaves; per table; bytes */
	} c[] = {
		/* 4K pages, 300 of them from entry 400 of a leaf table:
		 * 112 in it, 188 in the next. */
		{ IOPT_ARM_64_LPAE_S1, SZ_4K, 0x40000000 + 400 * SZ_4K, 300, 512, 8 },
		/* 2M blocks: 5 from entry 509 of a level 2 table: 3 + 2. */
		{ IOPT_ARM_64_LPAE_S1, SZ_2M, 0x80000000ull - 3 * SZ_2M, 5, 512, 8 },
		/* v7s small pages (256 per 4-byte level 2 table): 40 from 230. */
		{ IOPT_ARM_V7S, SZ_4K, 0x40000000 + 230 * SZ_4K, 40, 256, 4 },
		{ IOPT_ARM_64_LPAE_S2, SZ_4K, 0x10000000, 64, 512, 8 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		uint64_t idx = (c[k].va / c[k].pgsize) % c[k].entries;
		uint64_t first = c[k].entries - idx < c[k].n ? c[k].entries - idx : c[k].n;
		long tables = first < c[k].n ? 2 : 1;
		long batch_lines = lines_of(idx, first, c[k].esize) +
				   (tables == 2 ? lines_of(0, c[k].n - first, c[k].esize) : 0);
		long map_calls = 0;

		for (int mode = 0; mode < 3; mode++) {
			bool each = mode == 1, coherent = mode == 2;
			bool v7s = c[k].fmt == IOPT_ARM_V7S;
			struct sync_log l;
			struct iopt_pgtable_cfg cfg = {
				.fmt = c[k].fmt, .granule = 4096,
				.ias = v7s ? 32 : 40, .oas = v7s ? 32 : 40,
				.coherent_walk = coherent, .mem = &log_ops,
				.mem_ctx = &l,
				.quirks = mode ? IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH : 0,
			};
			struct iopt_pgtable *pt = NULL;

			memset(&l, 0, sizeof(l));
			tmem_init(&l.m, 0x80000000ull, 64u << 20);
			assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
			/* Tables first (one leaf each side), so that the map
			 * below writes leaves only. */
			assert_int_equal(iopt_pgtable_map_pages(pt, c[k].va - c[k].pgsize,
								0, c[k].pgsize, 1,
								IOPT_READ, NULL), 0);
			assert_int_equal(iopt_pgtable_map_pages(pt,
								c[k].va + c[k].n * c[k].pgsize,
								0, c[k].pgsize, 1,
								IOPT_READ, NULL), 0);
			long c0 = l.calls;

			assert_int_equal(iopt_pgtable_map_pages(pt, c[k].va, 0, c[k].pgsize,
								c[k].n, IOPT_READ, NULL), 0);
			/* LPAE: one per table; v7s also syncs each table
			 * entry it follows (no "synced" bit). The quirk
			 * changes nothing here. */
			if (coherent)
				assert_int_equal(l.calls - c0, 0);
			else if (each)
				assert_int_equal(l.calls - c0, map_calls);
			else
				map_calls = l.calls - c0;
			if (!coherent && !v7s)
				assert_int_equal(l.calls - c0, tables);
			c0 = l.calls;
			long l0 = l.lines;
			uint64_t b0 = l.bytes;

			assert_int_equal(iopt_pgtable_unmap_pages(pt, c[k].va, c[k].pgsize,
								  c[k].n, NULL),
					 (int64_t)(c[k].n * c[k].pgsize));
			/* v7s: the walk also syncs the table entry of each
			 * leaf table it reaches (one entry, one line). */
			long x = v7s ? tables : 0;

			if (coherent) {
				assert_int_equal(l.calls - c0, 0);
			} else if (each) {
				assert_int_equal(l.calls - c0, c[k].n + x);
				assert_int_equal(l.bytes - b0,
						 (uint64_t)(c[k].n + x) * c[k].esize);
				assert_int_equal(l.lines - l0, c[k].n + x);
			} else {
				assert_int_equal(l.calls - c0, tables + x);
				assert_int_equal(l.bytes - b0,
						 (uint64_t)(c[k].n + x) * c[k].esize);
				assert_int_equal(l.lines - l0, batch_lines + x);
			}
			if (!coherent)
				for (unsigned j = 0; j < c[k].n; j++)
					expect_dev(pt, &l.m, c[k].va + j * c[k].pgsize,
						   false, 0);
			iopt_pgtable_free(pt);
			tmem_destroy(&l.m);
		}
	}
}

struct inv_check {
	struct iopt_pgtable *pt;
	struct tmem *m;
	unsigned pages;		/* add_page calls seen */
	unsigned walks;		/* flush_walk calls seen */
	unsigned alls;		/* flush_all calls seen */
	unsigned stale;		/* addresses the device still saw differently */
	unsigned misaligned;	/* reported ranges not aligned to their size */
	uint64_t lo, hi;	/* what flush_all checks: the case's range */
};

/*
 * The device's view of [iova, iova + size) must already be the CPU's: a
 * walk that refills the TLB after the invalidation must find the new
 * entries, never the removed or replaced ones. Checks up to 257 addresses
 * spread over the range (its first and last included).
 */
static void inv_range(struct inv_check *c, uint64_t iova, uint64_t size)
{
	struct iopt_pgtable_info info;
	uint64_t step = size / 256 > SZ_4K ? size / 256 : SZ_4K;

	iopt_pgtable_get_info(c->pt, &info);
	for (uint64_t off = 0;; off += step) {
		uint64_t va = iova + (off < size ? off : size - 1);
		struct ref_walk dev, host;

		ref_walk(&info, 0, tmem_dev_p2v, c->m, va, &dev);
		ref_walk(&info, 0, tmem_host_p2v, c->m, va, &host);
		if (dev.mapped != host.mapped ||
		    (dev.mapped && (dev.oa != host.oa || dev.level != host.level ||
				    dev.desc != host.desc)))
			c->stale++;
		if (off >= size)
			break;
	}
}

static void inv_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
			 void *cookie)
{
	struct inv_check *c = cookie;

	(void)g;
	c->misaligned += !gran || (iova & (gran - 1)) != 0;
	inv_range(c, iova, gran);
	c->pages++;
}

static void inv_flush_walk(uint64_t iova, uint64_t size, uint64_t gran,
			   void *cookie)
{
	struct inv_check *c = cookie;

	c->misaligned += !size || (size & (size - 1)) || (iova & (size - 1)) ||
			 (gran & (gran - 1)) || gran > size;
	inv_range(c, iova, size);
	c->walks++;
}

static void inv_flush_all(void *cookie)
{
	struct inv_check *c = cookie;

	inv_range(c, c->lo, c->hi - c->lo);
	c->alls++;
}

enum { OP_END, OP_MAP, OP_UNMAP };

/*
 * Every TLB callback (add_page, flush_walk, flush_all) finds the entries
 * it reports already replaced in the device view: pages, a run across two
 * leaf tables, blocks, contiguous runs (whole and broken), a split block,
 * a table removed by a larger unmap, a block mapped over an empty table
 * (the old table must be unlinked from the device's view before its walk
 * is invalidated), and a map that fails part-way; LPAE and v7s.
 */
static void test_invalidate_after_sync(void **state)
{
	static const struct iopt_pgtable_tlb_ops ops = {
		.flush_all = inv_flush_all, .flush_walk = inv_flush_walk,
		.add_page = inv_add_page,
	};
	static const struct {
		enum iopt_pgtable_fmt fmt;
		struct {
			int op;
			uint64_t va, size;
			unsigned count;
			int64_t ret;	/* map: 0 or -errno; unmap: bytes */
		} ops[4];
		unsigned pages, walks;	/* add_page, flush_walk calls */
	} c[] = {
#define M(va, sz, n) { OP_MAP, va, sz, n, 0 }
#define MF(va, sz, n, e) { OP_MAP, va, sz, n, e }
#define U(va, sz, n) { OP_UNMAP, va, sz, n, (int64_t)((sz) * (n)) }
		{ IOPT_ARM_64_LPAE_S1, { M(0x40000000, SZ_4K, 1),
					 U(0x40000000, SZ_4K, 1) }, 1, 0 },
		{ IOPT_ARM_64_LPAE_S1, { M(0x40000000, SZ_4K, 40),
					 U(0x40000000, SZ_4K, 40) }, 40, 0 },
		{ IOPT_ARM_64_LPAE_S1, { M(SZ_2M - 8 * SZ_4K, SZ_4K, 16),
					 U(SZ_2M - 8 * SZ_4K, SZ_4K, 16) }, 16, 0 },
		{ IOPT_ARM_64_LPAE_S1, { M(0x80000000, SZ_2M, 3),
					 U(0x80000000, SZ_2M, 3) }, 3, 0 },
		/* A contiguous run may be cached as 16 single entries: one
		 * add_page per item. */
		{ IOPT_ARM_64_LPAE_S1, { M(0xc0000000, SZ_64K, 2),
					 U(0xc0000000, SZ_64K, 2) }, 32, 0 },
		/* One page out of a run: the run is broken (flush_walk),
		 * then the page removed. */
		{ IOPT_ARM_64_LPAE_S1, { M(0xc0000000, SZ_64K, 1),
					 U(0xc0000000 + SZ_4K, SZ_4K, 1) }, 1, 1 },
		/* One page out of a block: the block (replaced) and the page. */
		{ IOPT_ARM_64_LPAE_S1, { M(0x100000000ull, SZ_2M, 1),
					 U(0x100000000ull, SZ_4K, 1) }, 2, 0 },
		/* A block-sized unmap removes the leaf table under it. */
		{ IOPT_ARM_64_LPAE_S1, { M(0x40000000, SZ_4K, 5),
					 U(0x40000000, SZ_2M, 1) }, 0, 1 },
		/* A 1G unmap removes a level-2 table holding blocks. */
		{ IOPT_ARM_64_LPAE_S1, { M(0x40000000, SZ_2M, 2),
					 U(0x40000000, SZ_1G, 1) }, 0, 1 },
		/* A block over the empty table a page left behind. */
		{ IOPT_ARM_64_LPAE_S1, { M(SZ_2M, SZ_4K, 1), U(SZ_2M, SZ_4K, 1),
					 M(SZ_2M, SZ_2M, 1) }, 1, 1 },
		/* A map that fails on its sixth page undoes five. */
		{ IOPT_ARM_64_LPAE_S1, { M(0x40005000, SZ_4K, 1),
					 MF(0x40000000, SZ_4K, 8, -EEXIST) }, 5, 0 },
		{ IOPT_ARM_V7S, { M(0x40000000, SZ_4K, 40),
				  U(0x40000000, SZ_4K, 40) }, 40, 0 },
		{ IOPT_ARM_V7S, { M(SZ_1M - 8 * SZ_4K, SZ_4K, 16),
				  U(SZ_1M - 8 * SZ_4K, SZ_4K, 16) }, 16, 0 },
		{ IOPT_ARM_V7S, { M(0x50000000, SZ_1M, 3),
				  U(0x50000000, SZ_1M, 3) }, 3, 0 },
		{ IOPT_ARM_V7S, { M(0x60000000, SZ_64K, 2),
				  U(0x60000000, SZ_64K, 2) }, 32, 0 },
		{ IOPT_ARM_V7S, { M(0x60000000, SZ_64K, 1),
				  U(0x60000000 + SZ_4K, SZ_4K, 1) }, 1, 1 },
		{ IOPT_ARM_V7S, { M(0x70000000, SZ_16M, 1),
				  U(0x70000000, SZ_16M, 1) }, 16, 0 },
		{ IOPT_ARM_V7S, { M(0x70000000, SZ_16M, 1),
				  U(0x70000000 + SZ_1M, SZ_1M, 1) }, 1, 1 },
		{ IOPT_ARM_V7S, { M(0x50000000, SZ_1M, 1),
				  U(0x50000000 + SZ_4K, SZ_4K, 1) }, 2, 0 },
		{ IOPT_ARM_V7S, { M(0x50000000, SZ_4K, 3),
				  U(0x50000000, SZ_1M, 1) }, 0, 1 },
		{ IOPT_ARM_V7S, { M(SZ_1M, SZ_4K, 1), U(SZ_1M, SZ_4K, 1),
				  M(SZ_1M, SZ_1M, 1) }, 1, 1 },
		{ IOPT_ARM_V7S, { M(0x40005000, SZ_4K, 1),
				  MF(0x40000000, SZ_4K, 8, -EEXIST) }, 5, 0 },
#undef M
#undef MF
#undef U
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct tmem m;
		struct inv_check chk = { .m = &m };
		bool v7s = c[k].fmt == IOPT_ARM_V7S;
		struct iopt_pgtable_cfg cfg = {
			.fmt = c[k].fmt, .granule = 4096, .ias = v7s ? 32 : 40,
			.oas = v7s ? 32 : 40, .coherent_walk = false,
			.mem = &tmem_ops, .mem_ctx = &m, .tlb = &ops,
			.tlb_cookie = &chk,
		};
		struct iopt_pgtable *pt = NULL;
		char name[32];

		snprintf(name, sizeof(name), "case %u", k);
		tmem_init(&m, 0x80000000ull, 64u << 20);
		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		chk.pt = pt;
		chk.lo = c[k].ops[0].va;
		chk.hi = c[k].ops[0].va + SZ_2M;
		for (unsigned i = 0; i < 4 && c[k].ops[i].op != OP_END; i++) {
			uint64_t va = c[k].ops[i].va, sz = c[k].ops[i].size;
			unsigned n = c[k].ops[i].count;
			struct iopt_pgtable_gather g;

			if (c[k].ops[i].op == OP_MAP) {
				TU_CHK(name, iopt_pgtable_map_pages(pt, va, va, sz, n,
								    IOPT_READ, NULL) ==
					     c[k].ops[i].ret);
			} else {
				iopt_pgtable_gather_init(&g);
				TU_CHK(name, iopt_pgtable_unmap_pages(pt, va, sz, n, &g) ==
					     c[k].ops[i].ret);
			}
		}
		TU_CHK(name, chk.pages == c[k].pages);
		TU_CHK(name, chk.walks == c[k].walks);
		TU_CHK(name, chk.alls == 0);	/* never called by the tables */
		TU_CHK(name, chk.stale == 0);
		TU_CHK(name, chk.misaligned == 0);
		iopt_pgtable_free(pt);
		assert_int_equal(m.live, 0);
		tmem_destroy(&m);
	}
}

static void *map_one(void *arg)
{
	struct iopt_pgtable *pt = arg;

	return (void *)(intptr_t)iopt_pgtable_map_pages(pt, SZ_2M + SZ_4K, 0, SZ_4K, 1,
							IOPT_READ, NULL);
}

/* An entry installed by another thread but not yet marked synced (its
 * installer is slow): the next user syncs it himself, and marks it. */
static void test_unsynced_entry_is_kicked(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&m, IOPT_ARM_64_LPAE_S1, 4096);
	struct iopt_pgtable_walk w;

	(void)state;
	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_2M, 0, SZ_4K, 1, IOPT_READ, NULL),
			 0);
	assert_int_equal(iopt_pgtable_walk(pt, SZ_2M, &w), 0);
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
	iopt_pgtable_free(pt);
	tmem_destroy(&m);
}

/*
 * A dirty harvest through an entry another thread has just published and
 * not yet synced: a split in flight, the device view still holding the
 * writable-dirty block. The harvest cleans the page's leaf in the new
 * table and invalidates it; the device's next walk must reach that clean
 * leaf, so the harvest syncs the entry before it relies on it (the sync
 * bit protocol), or the device keeps writing through the old dirty block
 * and the dirty state of those writes is lost.
 */
static void test_dirty_harvest_kicks_unsynced_entry(void **state)
{
	struct tmem m;
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 40,
		.oas = 40, .coherent_walk = false, .quirks = IOPT_PGTABLE_QUIRK_HD,
		.mem = &tmem_ops, .mem_ctx = &m,
	};
	struct iopt_pgtable *pt = NULL;
	struct iopt_pgtable_info info;
	struct iopt_pgtable_gather g;
	struct iopt_pgtable_walk w;
	struct ref_walk r;
	const uint64_t va = SZ_1G, page = SZ_1G + 0x42000;

	(void)state;
	tmem_init(&m, 0x80000000ull, 64u << 20);
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	iopt_pgtable_get_info(pt, &info);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, va, SZ_2M, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	/* The device wrote to the block: writable-dirty, AP[2] cleared
	 * (Arm ARM D8.5), in memory as the CPU sees it. */
	memset(&w, 0, sizeof(w));
	assert_int_equal(iopt_pgtable_walk(pt, va, &w), 0);
	struct iopt_pgtable_walk_level *bl = &w.level[w.nr_levels - 1];
	uint64_t *host = tmem_host_p2v(bl->table_pa, &m);
	uint64_t *dev = tmem_dev_p2v(bl->table_pa, &m);
	uint64_t block = bl->desc & ~(1ull << 7);

	assert_int_equal(bl->level, 2);
	host[bl->index] = dev[bl->index] = block;
	ref_walk(&info, 0, tmem_dev_p2v, &m, page, &r);
	assert_true(r.mapped && r.dirty && r.size == SZ_2M);

	/* Split it (its leaves keep the block's dirty state), then put the
	 * entry back to where the splitter was between its publishing
	 * compare-and-swap and its sync: sync bit clear, device view still
	 * the block. */
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, SZ_4K, 1, &g), (int64_t)SZ_4K);
	uint64_t tpte = host[bl->index];

	assert_true(tpte & 2 && tpte >> 55 & 1);
	host[bl->index] = tpte & ~(1ull << 55);
	dev[bl->index] = block;

	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, page, SZ_4K, 0, &g,
							   NULL, NULL), 0);
	iopt_pgtable_tlb_sync(pt);
	/* The device's next walk reaches the cleaned 4K leaf. */
	ref_walk(&info, 0, tmem_dev_p2v, &m, page, &r);
	assert_true(r.mapped);
	assert_int_equal(r.size, SZ_4K);
	assert_false(r.dirty);
	assert_int_equal(r.oa, page);
	assert_true(host[bl->index] >> 55 & 1);
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);
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
		if (iopt_pgtable_map_pages(c->pt, va, page * SZ_4K, SZ_4K, 1, IOPT_READ,
					   NULL) == 0 && (i & 1))
			iopt_pgtable_unmap_pages(c->pt, va, SZ_4K, 1, NULL);
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
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);
	tmem_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_view_follows),
		cmocka_unit_test(test_one_sync_per_run),
		cmocka_unit_test(test_unmap_sync_each),
		cmocka_unit_test(test_invalidate_after_sync),
		cmocka_unit_test(test_unsynced_entry_is_kicked),
		cmocka_unit_test(test_dirty_harvest_kicks_unsynced_entry),
		cmocka_unit_test(test_concurrent_install_never_exposes_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
