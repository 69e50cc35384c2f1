/* SPDX-License-Identifier: MIT */
/*
 * The TLB-maintenance contract (struct iopt_pgtable_tlb_ops in pgtable.h,
 * docs/pgtable.md "TLB maintenance"), call by call: every scenario below lists,
 * written out by hand from the contract, the exact callbacks the page table
 * must make, in order, with their (iova, size, granule):
 *  - a split reports the block it replaced, with the block's size, so that
 *    a driver deriving a level hint (SMMUv3 TTL) from granule drops a TLB
 *    entry that caches the whole block;
 *  - a run break reports the whole run, from its naturally aligned base;
 *  - unlinking a table reports the table's range, with the items' size
 *    when it was a last-level table and 0 (no hint) otherwise;
 *  - a map that fails removes and invalidates what it wrote, then syncs;
 *    a contiguous run is never written in part.
 * And a concurrent check that a failing run map never makes any item of
 * the run visible to a walker.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_64K 0x10000ull
#define SZ_1M 0x100000ull
#define SZ_2M 0x200000ull
#define SZ_16M 0x1000000ull
#define SZ_32M 0x2000000ull
#define SZ_1G 0x40000000ull

/* One callback: P add_page(iova, granule), W flush_walk(iova, size,
 * granule), S sync, A flush_all. */
struct call {
	char kind;
	uint64_t iova, size, granule;
};

#define MAX_CALLS 64

struct log {
	struct call c[MAX_CALLS];
	unsigned n;
};

static void log_add(struct log *l, char kind, uint64_t iova, uint64_t size,
		    uint64_t granule)
{
	if (l->n < MAX_CALLS)
		l->c[l->n] = (struct call){ kind, iova, size, granule };
	l->n++;
}

static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
			void *cookie)
{
	(void)g;
	log_add(cookie, 'P', iova, gran, gran);
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t gran,
			  void *cookie)
{
	log_add(cookie, 'W', iova, size, gran);
}

static void cb_sync(void *cookie)
{
	log_add(cookie, 'S', 0, 0, 0);
}

static void cb_flush_all(void *cookie)
{
	log_add(cookie, 'A', 0, 0, 0);
}

static const struct iopt_pgtable_tlb_ops rec_ops = {
	.flush_all = cb_flush_all, .flush_walk = cb_flush_walk,
	.add_page = cb_add_page, .sync = cb_sync,
};

static struct iopt_pgtable *make(enum iopt_pgtable_fmt fmt, struct log *l)
{
	bool v7s = fmt == IOPT_ARM_V7S;
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = 4096, .ias = v7s ? 32 : 48,
		.oas = v7s ? 32 : 48, .coherent_walk = true, .tlb = &rec_ops,
		.tlb_cookie = l,
	};
	struct iopt_pgtable *pt = NULL;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

#define P(va, g) { 'P', va, g, g }
#define W(va, sz, g) { 'W', va, sz, g }
#define S { 'S', 0, 0, 0 }

/* Compare the log with want[0..n); print both on a mismatch. */
static void expect_log(const char *name, const struct log *l,
		       const struct call *want, unsigned n)
{
	bool ok = l->n == n;

	for (unsigned i = 0; ok && i < n; i++)
		ok = l->c[i].kind == want[i].kind && l->c[i].iova == want[i].iova &&
		     l->c[i].size == want[i].size &&
		     l->c[i].granule == want[i].granule;
	if (ok)
		return;
	print_error("[%s] callbacks:\n", name);
	for (unsigned i = 0; i < l->n && i < MAX_CALLS; i++)
		print_error("  got  %c %#llx %#llx %#llx\n", l->c[i].kind,
			    (unsigned long long)l->c[i].iova,
			    (unsigned long long)l->c[i].size,
			    (unsigned long long)l->c[i].granule);
	for (unsigned i = 0; i < n; i++)
		print_error("  want %c %#llx %#llx %#llx\n", want[i].kind,
			    (unsigned long long)want[i].iova,
			    (unsigned long long)want[i].size,
			    (unsigned long long)want[i].granule);
	fail();
}

#define EXPECT_LOG(name, l, ...)                                             \
	do {                                                                 \
		static const struct call want_[] = { __VA_ARGS__ };          \
		expect_log(name, l, want_, sizeof(want_) / sizeof(want_[0])); \
	} while (0)

static void map_ok(struct iopt_pgtable *pt, uint64_t va, uint64_t pa,
		   uint64_t size, size_t n)
{
	assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, size, n, IOPT_READ, NULL), 0);
}

static void unmap_ok(struct iopt_pgtable *pt, uint64_t va, uint64_t size,
		     size_t n, struct iopt_pgtable_gather *g)
{
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, size, n, g),
			 (int64_t)(size * n));
}

/* A 2M block split by a 4K unmap reports the block (granule 2M, level 2),
 * then the page; the gather covers the block and says "mixed sizes". */
static void test_split_reports_block(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);
	struct iopt_pgtable_gather g;

	(void)state;
	map_ok(pt, 0x40000000, 0x80000000, SZ_2M, 1);
	iopt_pgtable_gather_init(&g);
	unmap_ok(pt, 0x40001000, SZ_4K, 1, &g);
	EXPECT_LOG("2M split", &l, P(0x40000000, SZ_2M), P(0x40001000, SZ_4K));
	assert_int_equal(g.start, 0x40000000);
	assert_int_equal(g.last, 0x40000000 + SZ_2M - 1);
	assert_int_equal(g.pgsize, SZ_4K);
	assert_int_equal(g.sizes, SZ_2M | SZ_4K);
	iopt_pgtable_tlb_sync(pt);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.c[2].kind, 'S');

	/* 1G block: the 1G block, the 2M block split out of it, the page. */
	l.n = 0;
	map_ok(pt, 4 * SZ_1G, 2 * SZ_1G, SZ_1G, 1);
	iopt_pgtable_gather_init(&g);
	unmap_ok(pt, 4 * SZ_1G + 0x12345000, SZ_4K, 1, &g);
	EXPECT_LOG("1G split", &l, P(4 * SZ_1G, SZ_1G),
		   P(4 * SZ_1G + 0x12200000, SZ_2M),
		   P(4 * SZ_1G + 0x12345000, SZ_4K));
	assert_int_equal(g.sizes, SZ_1G | SZ_2M | SZ_4K);

	/* Pages alone: one size, a valid level hint in the gather. */
	l.n = 0;
	map_ok(pt, 0x80000000, 0, SZ_4K, 3);
	iopt_pgtable_gather_init(&g);
	unmap_ok(pt, 0x80000000, SZ_4K, 3, &g);
	EXPECT_LOG("pages", &l, P(0x80000000, SZ_4K), P(0x80001000, SZ_4K),
		   P(0x80002000, SZ_4K));
	assert_int_equal(g.sizes, SZ_4K);
	iopt_pgtable_free(pt);
}

/* A run broken by a 4K unmap at +0x1000: flush_walk from the run's aligned
 * base over the whole run with the items' size, synced before the make;
 * then the split of the 2M item and the page. */
static void test_run_break_reports_aligned_run(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);

	(void)state;
	map_ok(pt, 0x40000000, 0x80000000, SZ_32M, 1);
	unmap_ok(pt, 0x40001000, SZ_4K, 1, NULL);
	EXPECT_LOG("32M run of 2M", &l, W(0x40000000, SZ_32M, SZ_2M), S,
		   P(0x40000000, SZ_2M), P(0x40001000, SZ_4K));

	/* A 64K run of 4K pages, broken in its fourth page. */
	l.n = 0;
	map_ok(pt, 0x50010000, 0x90010000, SZ_64K, 1);
	unmap_ok(pt, 0x50013000, SZ_4K, 1, NULL);
	EXPECT_LOG("64K run", &l, W(0x50010000, SZ_64K, SZ_4K), S,
		   P(0x50013000, SZ_4K));
	iopt_pgtable_free(pt);

	/* v7s: a supersection (16 x 1M) broken by a 4K unmap inside its
	 * second section; a large page (16 x 4K). */
	pt = make(IOPT_ARM_V7S, &l);
	l.n = 0;
	map_ok(pt, 0x71000000, 0x81000000, SZ_16M, 1);
	unmap_ok(pt, 0x71101000, SZ_4K, 1, NULL);
	EXPECT_LOG("v7s supersection", &l, W(0x71000000, SZ_16M, SZ_1M), S,
		   P(0x71100000, SZ_1M), P(0x71101000, SZ_4K));
	l.n = 0;
	map_ok(pt, 0x60010000, 0x80010000, SZ_64K, 1);
	unmap_ok(pt, 0x6001f000, SZ_4K, 1, NULL);
	EXPECT_LOG("v7s large page", &l, W(0x60010000, SZ_64K, SZ_4K), S,
		   P(0x6001f000, SZ_4K));
	iopt_pgtable_free(pt);
}

/* Unlinking a table: a leaf table gives the items' size, a higher table
 * no hint (it may hold 2M blocks and 4K pages alike). The same for an
 * unmap that removes a table and a map that replaces an empty one. */
static void test_unlink_reports_table(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);

	(void)state;
	map_ok(pt, 0x40200000, 0, SZ_4K, 3);
	l.n = 0;
	unmap_ok(pt, 0x40200000, SZ_2M, 1, NULL);
	EXPECT_LOG("leaf table", &l, W(0x40200000, SZ_2M, SZ_4K), S);

	map_ok(pt, 0x80000000, 0, SZ_2M, 1);
	map_ok(pt, 0x80400000, 0, SZ_4K, 1);
	l.n = 0;
	unmap_ok(pt, 0x80000000, SZ_1G, 1, NULL);
	EXPECT_LOG("level-2 table", &l, W(0x80000000, SZ_1G, 0), S);

	/* A block over the empty table a page left behind. */
	map_ok(pt, 0xc0200000, 0, SZ_4K, 1);
	l.n = 0;
	unmap_ok(pt, 0xc0200000, SZ_4K, 1, NULL);
	map_ok(pt, 0xc0200000, 0x200000, SZ_2M, 1);
	EXPECT_LOG("block over empty table", &l, P(0xc0200000, SZ_4K),
		   W(0xc0200000, SZ_2M, SZ_4K), S);
	tu_expect_pa(pt, 0xc0200000 + 0x1234, 0x200000 + 0x1234);
	iopt_pgtable_free(pt);
}

/* A map that fails removes and invalidates what it wrote, then syncs. */
static void test_failed_map_invalidates(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);

	(void)state;
	/* Pages: five written in the failing table, then the sixth taken. */
	map_ok(pt, 0x40005000, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x40000000, 0, SZ_4K, 8, IOPT_READ,
						NULL), -EEXIST);
	EXPECT_LOG("pages", &l, P(0x40000000, SZ_4K), P(0x40001000, SZ_4K),
		   P(0x40002000, SZ_4K), P(0x40003000, SZ_4K),
		   P(0x40004000, SZ_4K), S);
	for (int i = 0; i < 5; i++)
		tu_expect_none(pt, 0x40000000 + i * SZ_4K);
	tu_expect_pa(pt, 0x40005000, 0xf0000000);

	/* Across tables: 8 pages written in the table before, 2 in this. */
	map_ok(pt, 0x40602000, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x40600000 - 8 * SZ_4K, 0, SZ_4K, 16,
						IOPT_READ, NULL), -EEXIST);
	assert_int_equal(l.n, 11);
	for (unsigned i = 0; i < 10; i++) {
		assert_int_equal(l.c[i].kind, 'P');
		assert_int_equal(l.c[i].iova, 0x40600000 - 8 * SZ_4K + i * SZ_4K);
		assert_int_equal(l.c[i].granule, SZ_4K);
	}
	assert_int_equal(l.c[10].kind, 'S');

	/* Blocks: two written, the third's place holds a page. */
	map_ok(pt, 0x80401000, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x80000000, 0, SZ_2M, 3, IOPT_READ,
						NULL), -EEXIST);
	EXPECT_LOG("blocks", &l, P(0x80000000, SZ_2M), P(0x80200000, SZ_2M), S);
	tu_expect_none(pt, 0x80000000);
	tu_expect_pa(pt, 0x80401000, 0xf0000000);
	iopt_pgtable_free(pt);
}

/* A contiguous run is checked whole before any item is written: a run
 * whose last item is taken writes nothing (and has nothing to
 * invalidate); of two runs in two leaf tables, the first (free) is
 * written, then removed and invalidated item by item when the second is
 * found taken. */
static void test_run_map_checks_whole_run(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);

	(void)state;
	map_ok(pt, 0x40000000 + 15 * SZ_4K, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x40000000, 0x10000000, SZ_64K, 1,
						IOPT_READ, NULL), -EEXIST);
	assert_int_equal(l.n, 0);
	tu_expect_none(pt, 0x40000000);
	tu_expect_pa(pt, 0x40000000 + 15 * SZ_4K, 0xf0000000);

	const uint64_t va = 0x50200000 - SZ_64K;

	map_ok(pt, 0x50200000 + 4 * SZ_4K, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0x10000000, SZ_64K, 2,
						IOPT_READ, NULL), -EEXIST);
	assert_int_equal(l.n, 17);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(l.c[i].kind, 'P');
		assert_int_equal(l.c[i].iova, va + i * SZ_4K);
		assert_int_equal(l.c[i].granule, SZ_4K);
	}
	assert_int_equal(l.c[16].kind, 'S');
	tu_expect_none(pt, va);
	tu_expect_none(pt, 0x50200000);
	tu_expect_pa(pt, 0x50200000 + 4 * SZ_4K, 0xf0000000);

	/* A run of 2M blocks whose sixth item holds a table with a live
	 * page: nothing written. Once the page is gone, the empty table is
	 * unlinked (flush_walk with the leaf table's item size, sync) and the
	 * run written. */
	map_ok(pt, 0x80000000 + 5 * SZ_2M + SZ_4K, 0xf0000000, SZ_4K, 1);
	l.n = 0;
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x80000000, 0x20000000, SZ_32M, 1,
						IOPT_READ, NULL), -EEXIST);
	assert_int_equal(l.n, 0);
	tu_expect_none(pt, 0x80000000);
	tu_expect_pa(pt, 0x80000000 + 5 * SZ_2M + SZ_4K, 0xf0000000);
	unmap_ok(pt, 0x80000000 + 5 * SZ_2M + SZ_4K, SZ_4K, 1, NULL);
	iopt_pgtable_tlb_sync(pt);
	l.n = 0;
	map_ok(pt, 0x80000000, 0x20000000, SZ_32M, 1);
	EXPECT_LOG("run over an empty table", &l,
		   W(0x80000000 + 5 * SZ_2M, SZ_2M, SZ_4K), S);
	tu_expect_pa(pt, 0x80000000 + 5 * SZ_2M + SZ_4K,
		     0x20000000 + 5 * SZ_2M + SZ_4K);
	iopt_pgtable_free(pt);
}

struct run_race {
	struct iopt_pgtable *pt;
	uint64_t *items;	/* the run's 16 descriptors (identity memory) */
	int started, done;	/* atomic */
	unsigned long seen;	/* a run item was visible */
	unsigned long looks;	/* atomic */
};

static void *run_walker(void *arg)
{
	struct run_race *r = arg;

	__atomic_store_n(&r->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 15; i++)
			if (__atomic_load_n(&r->items[i], __ATOMIC_ACQUIRE))
				r->seen++;
		__atomic_fetch_add(&r->looks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Concurrently: a walker reading the run's descriptors (as a device whose
 * TLB may cache the run as one entry from any item) never sees an item of
 * a run map that fails because the run's last item is taken. On the code
 * that wrote the run before checking it, the walker saw items in every
 * ThreadSanitizer (debug-yield) run; in a release build only when both
 * threads run at once (not on a loaded machine). */
static void test_failed_run_map_never_visible(void **state)
{
	struct log l = { .n = 0 };
	struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S1, &l);
	struct run_race r = { .pt = pt };
	struct iopt_pgtable_walk w;
	pthread_t th;
	long n = tu_stress_ops(5000);

	(void)state;
	map_ok(pt, 0x40000000 + 15 * SZ_4K, 0xf0000000, SZ_4K, 1);
	assert_int_equal(iopt_pgtable_walk(pt, 0x40000000 + 15 * SZ_4K, &w), 0);
	struct iopt_pgtable_walk_level *lv = &w.level[w.nr_levels - 1];

	r.items = (uint64_t *)(uintptr_t)lv->table_pa + lv->index - 15;
	assert_int_equal(pthread_create(&th, NULL, run_walker, &r), 0);
	while (!__atomic_load_n(&r.started, __ATOMIC_ACQUIRE))
		sched_yield();
	/* At least n maps, and on while the walker has looked less than n
	 * times (it may have been scheduled out), up to 50 n. */
	for (long i = 0; i < n || (i < 50 * n && (long)__atomic_load_n(
				&r.looks, __ATOMIC_RELAXED) < n); i++)
		assert_int_equal(iopt_pgtable_map_pages(pt, 0x40000000, 0x10000000,
							SZ_64K, 1, IOPT_READ, NULL),
				 -EEXIST);
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	print_message("run items seen %lu times in %lu looks\n", r.seen, r.looks);
	assert_int_equal(r.seen, 0);
	iopt_pgtable_free(pt);
}

/* add_page in order: each call must be the page after the previous one. */
struct seq {
	struct iopt_pgtable_gather *g;	/* the gather the unmap was given */
	uint64_t next, gran;
	unsigned n, bad;
};

static void seq_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
			 void *cookie)
{
	struct seq *s = cookie;

	if (g != s->g || iova != s->next || gran != s->gran)
		s->bad++;
	s->next = iova + gran;
	s->n++;
}

static const struct iopt_pgtable_tlb_ops seq_ops = { .add_page = seq_add_page };

/*
 * An unmap of n pages makes n add_page calls, one per page, in address
 * order, with the caller's gather and the page size, whatever n is and
 * whichever path clears them: the walk (first call, and a call that
 * starts a new leaf table) or the thread's cached leaf table (the calls
 * after it). n = 1 calls add_page directly, n >= 2 through the loop kept
 * on its own cache line (pt_add_pages()); sizes 1, 2, 3 and the rest of
 * a table, and a call across two leaf tables (v7s's hold 256 pages).
 */
static void test_unmap_reports_each_page(void **state)
{
	static const enum iopt_pgtable_fmt fmts[] = { IOPT_ARM_64_LPAE_S1,
					      IOPT_ARM_V7S };
	static const size_t pieces[] = { 1, 2, 3, 1, 505, 512 };

	(void)state;
	for (unsigned f = 0; f < 2; f++) {
		bool v7s = fmts[f] == IOPT_ARM_V7S;
		struct seq s = { .gran = SZ_4K };
		struct iopt_pgtable_cfg cfg = {
			.fmt = fmts[f], .granule = 4096, .ias = v7s ? 32 : 48,
			.oas = v7s ? 32 : 48, .coherent_walk = true,
			.tlb = &seq_ops, .tlb_cookie = &s,
		};
		struct iopt_pgtable *pt = NULL;
		struct iopt_pgtable_gather g;
		uint64_t va = 0x40000000;	/* 2 MiB aligned */

		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		map_ok(pt, va, 0x80000000, SZ_4K, 1024);
		for (unsigned i = 0; i < 6; i++) {
			iopt_pgtable_gather_init(&g);
			s = (struct seq){ .g = &g, .next = va, .gran = SZ_4K };
			unmap_ok(pt, va, SZ_4K, pieces[i], &g);
			assert_int_equal(s.n, pieces[i]);
			assert_int_equal(s.bad, 0);
			assert_int_equal(g.start, va);
			assert_int_equal(g.last, va + pieces[i] * SZ_4K - 1);
			va += pieces[i] * SZ_4K;
		}
		assert_int_equal(va, 0x40000000 + 1024 * SZ_4K);
		iopt_pgtable_free(pt);
	}
}

/* add_page must find its leaf already in the caller's gather. */
struct cover {
	unsigned n, bad;
};

static void cover_add_page(struct iopt_pgtable_gather *g, uint64_t iova,
			   uint64_t gran, void *cookie)
{
	struct cover *c = cookie;

	if (!g || g->start > iova || g->last < iova + gran - 1 ||
	    !(g->sizes & gran) || g->pgsize > gran)
		c->bad++;
	c->n++;
}

static const struct iopt_pgtable_tlb_ops cover_ops = { .add_page = cover_add_page };

/*
 * The gather of an unmap that stops early (pgtable.h, struct
 * iopt_pgtable_gather): it covers every leaf removed, each already when its
 * add_page is called, and nothing outside the request; add_page is called for
 * the removed leaves only. Pages 0-4 and 6-9 of a leaf table are mapped: an
 * unmap of 0-9 removes 0-4, one of page 5 removes nothing, one of 6-9 removes
 * them all; first each after a miss of the thread's cached leaf table, then
 * through it.
 */
static void test_unmap_gather_covers_removed(void **state)
{
	static const enum iopt_pgtable_fmt fmts[] = { IOPT_ARM_64_LPAE_S1,
					      IOPT_ARM_V7S };
	static const struct {
		unsigned first, count, removed;
	} steps[] = { { 0, 10, 5 }, { 5, 1, 0 }, { 6, 4, 4 } };

	(void)state;
	for (unsigned f = 0; f < 2; f++) {
		bool v7s = fmts[f] == IOPT_ARM_V7S;
		struct cover c = { 0, 0 };
		struct iopt_pgtable_cfg cfg = {
			.fmt = fmts[f], .granule = 4096, .ias = v7s ? 32 : 48,
			.oas = v7s ? 32 : 48, .coherent_walk = true,
			.tlb = &cover_ops, .tlb_cookie = &c,
		};
		struct iopt_pgtable *pt = NULL;
		uint64_t va = 0x40000000, far = 0x60000000;

		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		for (unsigned pass = 0; pass < 2; pass++) {
			map_ok(pt, va, 0x80000000, SZ_4K, 5);
			map_ok(pt, va + 6 * SZ_4K, 0x80006000, SZ_4K, 4);
			for (unsigned i = 0; i < 3; i++) {
				uint64_t a = va + steps[i].first * SZ_4K;
				uint64_t end = a + steps[i].count * SZ_4K;
				struct iopt_pgtable_gather g;

				if (pass == 0) {
					/* Another leaf table: the unmap
					 * below misses the cache. */
					map_ok(pt, far, 0x90000000, SZ_4K, 1);
					unmap_ok(pt, far, SZ_4K, 1, NULL);
				}
				iopt_pgtable_gather_init(&g);
				c = (struct cover){ 0, 0 };
				assert_int_equal(iopt_pgtable_unmap_pages(pt, a, SZ_4K,
									  steps[i].count,
									  &g),
						 (int64_t)(steps[i].removed * SZ_4K));
				assert_int_equal(c.n, steps[i].removed);
				assert_int_equal(c.bad, 0);
				if (steps[i].removed) {
					assert_int_equal(g.start, a);
					assert_true(g.last >= a + steps[i].removed *
								  SZ_4K - 1);
					assert_int_equal(g.sizes, SZ_4K);
				}
				if (g.start <= g.last) {
					assert_true(g.start >= a);
					assert_true(g.last <= end - 1);
				}
			}
		}
		iopt_pgtable_free(pt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_reports_block),
		cmocka_unit_test(test_run_break_reports_aligned_run),
		cmocka_unit_test(test_unlink_reports_table),
		cmocka_unit_test(test_failed_map_invalidates),
		cmocka_unit_test(test_run_map_checks_whole_run),
		cmocka_unit_test(test_failed_run_map_never_visible),
		cmocka_unit_test(test_unmap_reports_each_page),
		cmocka_unit_test(test_unmap_gather_covers_removed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
