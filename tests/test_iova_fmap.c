/* SPDX-License-Identifier: MIT */
/*
 * The IOVA free map (src/iova/fmap.c) against a brute-force bitmap: every
 * search ("the highest p <= cap, aligned to 2^k, with 2^k free pages")
 * compared with a scan of the bitmap, takes of runs shorter than their
 * block, marking runs of any length free and allocated (whole subtrees
 * made uniform and materialised again), range checks and the free-page
 * count, and every summary in the tree recomputed from the pages below
 * it, on geometries from one leaf to 2^63 pages and with the largest
 * searched order below and above a word. Each search visits at most two
 * nodes per level (an instrumented counter, not a clock). Then the
 * fragmentation worst case through the public API: half the pages free
 * and no two adjacent free ones but a single pair at the bottom; the
 * 2-page allocation below the top finds it in O(height) visits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/iova.h>

#include "../src/iova/fmap.h"
#include "../src/iova/iova_internal.h"
#include "tutil.h"

/* The reference: pages [off, off + w) in ref[], everything else allocated. */
struct ref {
	uint64_t off, w;
	unsigned char *bit;
};

static bool ref_free(const struct ref *r, uint64_t p)
{
	return p >= r->off && p - r->off < r->w && r->bit[p - r->off];
}

static bool ref_run_free(const struct ref *r, uint64_t p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (!ref_free(r, p + i))
			return false;
	return true;
}

/* Brute force: the highest p <= cap aligned to 2^k with [p, p + 2^k)
 * free, scanning every aligned start from the top of the window down. */
static bool ref_find(const struct ref *r, unsigned k, uint64_t cap, uint64_t *out)
{
	uint64_t a = 1ull << k, top = r->off + r->w - 1;
	uint64_t p = (cap < top ? cap : top) & ~(a - 1);

	for (;;) {
		if (p < r->off)
			return false;
		if (ref_run_free(r, p, a)) {
			*out = p;
			return true;
		}
		if (p < a)
			return false;
		p -= a;
	}
}

static uint64_t ref_count(const struct ref *r)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < r->w; i++)
		n += r->bit[i];
	return n;
}

/* The largest j with an aligned run of 2^j ones in w, -1: brute force. */
static int word_order(uint64_t w)
{
	for (int j = 6; j >= 0; j--)
		for (unsigned p = 0; p < 64; p += 1u << j) {
			uint64_t m = j == 6 ? ~0ull : ((1ull << (1u << j)) - 1) << p;

			if ((w & m) == m)
				return j;
		}
	return -1;
}

/*
 * Every summary of the subtree recomputed from what lies below it: has[k]
 * (children holding a free aligned 2^k block, for k below the child order
 * and up to max_order), the full mask (exact where the child order is at
 * most max_order; above, set for wholly free NULL children only) and the
 * node's summary, capped at max_order. Returns the node's summary.
 */
static int check_node(struct fmap *f, const struct fmap_node *n, unsigned h)
{
	if (n == f->root)
		fmap_sync(f);
	int c = 6 * (int)h + 6, M = (int)f->max_order, lim = c < M + 1 ? c : M + 1;
	uint64_t full = 0, has[FMAP_ORDERS] = { 0 };
	int best = -1;

	for (unsigned i = 0; i < 64; i++) {
		int mo;

		if (h == 0) {
			mo = word_order(n->u.w[i].free);
			if (mo == c && c <= M)
				full |= 1ull << i;
		} else if (!n->u.child[i]) {
			mo = n->full >> i & 1 ? c : -1;
			if (mo == c)
				full |= 1ull << i;
		} else {
			mo = check_node(f, n->u.child[i], h - 1);
			if (mo == c && c <= M)
				full |= 1ull << i;
		}
		if (mo > M && !(h > 0 && !n->u.child[i]))
			mo = M;
		for (int k = 0; k < lim; k++)
			if (mo >= k)
				has[k] |= 1ull << i;
		if (mo > best)
			best = mo;
	}
	assert_int_equal(n->full, full);
	for (int k = 0; k < FMAP_ORDERS; k++)
		assert_int_equal(n->has[k], k < lim ? has[k] : 0);
	if (full) {
		int j = 6;

		while (j > 0) {
			bool any = false;

			for (unsigned p = 0; p < 64; p += 1u << j) {
				uint64_t m = j == 6 ? ~0ull : ((1ull << (1u << j)) - 1) << p;

				any |= (full & m) == m;
			}
			if (any)
				break;
			j--;
		}
		best = c + j;
	}
	if (best > M)
		best = M;
	assert_int_equal(n->mo, best);
	return best;
}

static void check_search_bound(const struct fmap *f, uint64_t before)
{
	/* Two nodes per level at most (one failed path, one that cannot). */
	assert_true(f->visits - before <= 2 * (f->height + 1));
}

/* The search hints (fmap.h): no free aligned 2^k block starts above
 * hint[k], by brute force, and a free ending at or below hint_cover
 * would raise none of them. */
static void check_hints(const struct fmap *f, const struct ref *r)
{
	for (unsigned k = 0; k <= f->max_order; k++) {
		uint64_t q;

		assert_true((f->hint_cover >> k << k) <= f->hint[k]);
		if (ref_find(r, k, UINT64_MAX, &q))
			assert_true(q <= f->hint[k]);
	}
}

static void run_geometry(unsigned bits, unsigned max_order, uint64_t off,
			 uint64_t w, uint64_t seed)
{
	struct fmap f;
	struct ref r = { off, w, calloc(w, 1) };
	uint64_t rng = seed, p, q;

	assert_non_null(r.bit);
	assert_int_equal(fmap_init(&f, bits, max_order), 0);
	assert_false(fmap_find(&f, 0, UINT64_MAX, &p));
	/* The window free in one range operation, as creation does it. */
	assert_int_equal(fmap_set(&f, off, w, true), 0);
	memset(r.bit, 1, w);
	assert_int_equal(f.free_pages, w);
	for (int it = 0; it < 6000; it++) {
		unsigned op = (unsigned)(tu_rand(&rng) % 10);
		unsigned k = (unsigned)(tu_rand(&rng) % (max_order + 1));
		uint64_t cap = off + tu_rand(&rng) % (w + 200);
		bool got, want;

		if (tu_rand(&rng) % 4 == 0)
			cap = UINT64_MAX;	/* no limit */
		else if (cap >= 100)
			cap -= 100;	/* sometimes below the window */
		if (op < 3) {
			/* Take a run of size in (2^(k-1), 2^k] at the block. */
			uint64_t size = k ? (1ull << (k - 1)) + 1 +
					    tu_rand(&rng) % (1ull << (k - 1)) : 1;
			uint64_t v = f.visits, c = f.climbs;

			assert_int_equal(fmap_prepare(&f, 0), 0);
			want = ref_find(&r, k, cap, &q);
			got = fmap_take(&f, k, cap, size, &p);
			check_search_bound(&f, v);
			/* At most one ascent (the finger's ancestors): the
			 * take's own change waits in the finger leaf. */
			assert_true(f.climbs - c <= f.height);
			assert_int_equal(got, want);
			if (got) {
				assert_int_equal(p, q);
				memset(r.bit + (p - off), 0, size);
			}
		} else if (op < 5) {
			uint64_t v = f.visits;

			want = ref_find(&r, k, cap, &q);
			got = fmap_find(&f, k, cap, &p);
			check_search_bound(&f, v);
			assert_int_equal(got, want);
			if (got)
				assert_int_equal(p, q);
		} else if (op < 8) {
			/* Flip a run of one state: short, or up to the whole
			 * window (whole subtrees become uniform). */
			uint64_t a = tu_rand(&rng) % w;
			uint64_t max = op == 7 ? w : 1 + tu_rand(&rng) % 300;
			unsigned char st = r.bit[a];
			uint64_t n = 1;

			while (a + n < w && n < max && r.bit[a + n] == st)
				n++;
			assert_int_equal(fmap_set(&f, off + a, n, !st), 0);
			memset(r.bit + a, !st, n);
		} else {
			uint64_t a = tu_rand(&rng) % w;
			uint64_t n = 1 + tu_rand(&rng) % (op == 8 ? 70 : 5000);

			if (a + n > w)
				n = w - a;
			assert_int_equal(fmap_is_free(&f, off + a, n),
					 ref_run_free(&r, off + a, n));
		}
		if (it % 256 == 0) {
			assert_int_equal(f.free_pages, ref_count(&r));
			check_node(&f, f.root, f.height);
			check_hints(&f, &r);
		}
	}
	assert_int_equal(f.free_pages, ref_count(&r));
	check_node(&f, f.root, f.height);
	/* Everything back: one free run again, then searches agree. */
	for (uint64_t a = 0; a < w;) {
		uint64_t n = 1;

		while (a + n < w && r.bit[a + n] == r.bit[a])
			n++;
		if (!r.bit[a])
			assert_int_equal(fmap_set(&f, off + a, n, true), 0);
		a += n;
	}
	memset(r.bit, 1, w);
	assert_int_equal(f.free_pages, w);
	check_node(&f, f.root, f.height);
	for (unsigned k = 0; k <= max_order && k < 14; k++) {
		bool want = ref_find(&r, k, UINT64_MAX, &q);

		assert_int_equal(fmap_find(&f, k, UINT64_MAX, &p), want);
		if (want)
			assert_int_equal(p, q);
	}
	fmap_destroy(&f);
	free(r.bit);
}

static void test_fmap_against_bitmap(void **state)
{
	static const struct {
		unsigned bits, max_order;
		uint64_t off, w;
	} g[] = {
		{ 12, 7, 0, 4096 },			/* one leaf */
		{ 13, 12, 0, 8192 },			/* blocks of whole words */
		{ 20, 13, 5 * 4096 - 777, 3 * 4096 + 300 },
		{ 20, 3, 64 * 4096 + 5, 9000 },		/* orders below a word */
		{ 36, 18, (1ull << 36) - 12000, 12000 },	/* top of the space */
		{ 40, 21, (1ull << 39) + 123, 10000 },
		{ 63, 5, (1ull << 62) + 64 * 3, 9000 },	/* 10 levels */
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		run_geometry(g[i].bits, g[i].max_order, g[i].off, g[i].w, 11 + i);
}

/* Children a range operation made uniform (NULL), then pages taken from
 * them one at a time: they are materialised in the state they had, and
 * where the child order is above max_order their full bit is dropped. */
static void test_fmap_uniform_subtrees(void **state)
{
	const uint64_t lo = 1ull << 24, hi = 1ull << 25, mid = lo + (1ull << 23);
	struct fmap f;
	uint64_t p;

	(void)state;
	assert_int_equal(fmap_init(&f, 30, 18), 0);
	assert_int_equal(fmap_set(&f, lo, hi - lo, true), 0);
	check_node(&f, f.root, f.height);
	assert_int_equal(fmap_prepare(&f, 0), 0);
	assert_true(fmap_take(&f, 0, UINT64_MAX, 1, &p));
	assert_int_equal(p, hi - 1);
	/* The leaf of that page lags in its ancestors (the finger): a range
	 * check over the whole leaf must see it, not the ancestors' full bit. */
	assert_false(fmap_is_free(&f, hi - 4096, 4096));
	assert_true(fmap_is_free(&f, hi - 4096, 4095));
	check_node(&f, f.root, f.height);
	/* The highest whole block of 2^18 is the one below. */
	assert_int_equal(fmap_prepare(&f, 0), 0);
	assert_true(fmap_take(&f, 18, UINT64_MAX, 1ull << 18, &p));
	assert_int_equal(p, hi - (1ull << 19));
	assert_int_equal(fmap_prepare(&f, 0), 0);
	assert_true(fmap_take(&f, 0, UINT64_MAX, 1, &p));
	assert_int_equal(p, hi - 2);
	check_node(&f, f.root, f.height);
	/* Allocate all of the run but the page below the middle. */
	assert_int_equal(fmap_set(&f, lo, mid - 1 - lo, false), 0);
	assert_int_equal(fmap_set(&f, mid, hi - (1ull << 19) - mid, false), 0);
	assert_int_equal(fmap_set(&f, hi - (1ull << 18), (1ull << 18) - 2, false), 0);
	assert_int_equal(f.free_pages, 1);
	assert_true(fmap_find(&f, 0, UINT64_MAX, &p));
	assert_int_equal(p, mid - 1);
	assert_false(fmap_find(&f, 1, UINT64_MAX, &p));
	assert_false(fmap_find(&f, 0, mid - 2, &p));
	assert_true(fmap_is_free(&f, mid - 1, 1));
	assert_false(fmap_is_free(&f, mid - 1, 2));
	check_node(&f, f.root, f.height);
	fmap_destroy(&f);

	/* Searched orders below a word: leaves are children above it. */
	assert_int_equal(fmap_init(&f, 20, 3), 0);
	assert_int_equal(fmap_set(&f, 4096, 2 * 4096, true), 0);
	assert_int_equal(fmap_prepare(&f, 0), 0);
	assert_true(fmap_take(&f, 0, 4096 + 100, 1, &p));
	assert_int_equal(p, 4096 + 100);
	check_node(&f, f.root, f.height);
	assert_int_equal(fmap_prepare(&f, 0), 0);
	assert_true(fmap_take(&f, 3, UINT64_MAX, 5, &p));
	assert_int_equal(p, 3 * 4096 - 8);
	check_node(&f, f.root, f.height);
	assert_false(fmap_find(&f, 4, UINT64_MAX, &p));
	fmap_destroy(&f);
}

/*
 * The fragmentation worst case through the API: one stripe, every page
 * allocated one by one, then every other page freed (half the space free,
 * no aligned pair) and one pair at the bottom. A 2-page allocation below
 * the top must find that pair; the search visits at most two nodes per
 * level, where a list of free ranges searched from the top (the kernel's
 * rbtree walk) visits every one of the 32768 holes.
 */
static void test_fragmented_worst_case(void **state)
{
	const uint64_t end = 1u << 16;
	struct iopt_iova_cfg cfg = { .end_pfn = end, .nr_cpus = 1, .nr_stripes = 1 };
	struct iopt_iova *d;
	struct iopt_iova_stats st;
	uint64_t p, n = 0;

	(void)state;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	while (iopt_iova_alloc(d, 1, end - 1, &p) == 0)
		n++;
	assert_int_equal(n, end - 1);
	for (p = 3; p < end; p += 2)
		assert_int_equal(iopt_iova_free(d, p, 1), 0);
	assert_int_equal(iopt_iova_free(d, 2, 1), 0);	/* pair 2..3 */
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.free_pages, end / 2);

	struct fmap *f = &d->stripes[0].fmap;
	uint64_t v = f->visits;

	assert_int_equal(iopt_iova_alloc(d, 2, end - 1, &p), 0);
	assert_int_equal(p, 2);
	check_search_bound(f, v);
	/* Nothing else: no aligned pair anywhere, found as fast. */
	v = f->visits;
	assert_int_equal(iopt_iova_alloc(d, 2, end - 1, &p), -ENOMEM);
	assert_true(f->visits - v <= 2 * (f->height + 1));
	/* A 3-page run at an aligned start (not a whole free block of 4):
	 * none either, and single pages are still there at the top. */
	assert_int_equal(iopt_iova_alloc(d, 1, end - 1, &p), 0);
	assert_int_equal(p, end - 1);
	iopt_iova_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmap_against_bitmap),
		cmocka_unit_test(test_fmap_uniform_subtrees),
		cmocka_unit_test(test_fragmented_worst_case),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
