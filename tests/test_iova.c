/* SPDX-License-Identifier: MIT */
/*
 * The IOVA allocator: the live record against a reference; the range
 * allocator against a shadow (no overlap, alignment, limits,
 * reserved ranges untouched, every page accounted for) through a random
 * stress; bad input; the per-CPU caches, depot and trimming; the cache-
 * flush policies; striping; allocations larger than a chunk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/iova.h>

#include "../src/iova/iova_internal.h"	/* chunk_order */
#include "../src/iova/live.h"
#include "../src/platform/platform.h"
#include "tthread.h"
#include "tutil.h"

/* ---- the CPU a stripe is chosen by -------------------------------------- */

/* plat_cpu_id() (the rseq area's cpu_id where glibc registered one) names
 * the CPU the kernel runs the thread on: pinned to each CPU it may use in
 * turn, it must answer that CPU, as sched_getcpu() (the kernel's own
 * answer) does. */
static void test_cpu_id_is_the_pinned_cpu(void **state)
{
	cpu_set_t all, one;
	unsigned tried = 0;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		assert_int_equal(sched_getcpu(), c);
		assert_int_equal(plat_cpu_id(), (unsigned)c);
		tried++;
	}
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_true(tried > 0);
}

/* ---- the live record ------------------------------------------------- */

/*
 * A move gives the old table's pages behind it back to the kernel (they
 * read as empty afterwards), so a lookup in the old table must pass over
 * every slot below the move's position, not stop at one: keys j << 40 all
 * hash to slot 0 (the multiplicative hash keeps bits 17 and up of the
 * product, all zero for them), so they form one probe chain from slot 0,
 * longer than the part of the old table given back. Through the growth
 * from 16384 to 32768 slots, every key still waiting in the old table
 * (those beyond the move's position) must be found with its value.
 */
static void test_live_lookup_behind_move(void **state)
{
	const uint64_t n = 8192 + 3000;
	struct iova_live l;
	uint64_t checked = 0;

	(void)state;
	assert_int_equal(live_init(&l, ~0ull), 0);
	for (uint64_t j = 1; j <= n; j++) {
		assert_int_equal(live_reserve(&l), 0);
		live_add(&l, j << 40, j);
		if (l.old.slot && l.old.cap == 16384) {
			/* Key j' sits at slot j' - 1 of the old chain; those
			 * from the move's position on are still there. */
			uint64_t k = l.move_pos + 1 + j % 512;

			if (k < 8192) {
				assert_int_equal(live_get(&l, k << 40), k);
				checked++;
			}
		}
	}
	assert_true(checked > 100);
	for (uint64_t j = 1; j <= n; j += 97)
		assert_int_equal(live_get(&l, j << 40), j);
	live_fini(&l);
}

/* The live record resizes incrementally: check it against a plain array
 * through many growths, with deletions from the old and new tables; and
 * live_find() (which looks up the aligned starts that could hold a page)
 * against a scan of the array. Records are aligned to the power of two at
 * or above their size, as the allocator makes them. */
static void test_live_record_against_reference(void **state)
{
	const uint64_t universe = 1u << 18;
	uint64_t *ref = calloc(universe, sizeof(uint64_t));	/* 0: absent */
	struct iova_live l;
	uint64_t rng = 3, n = 0;

	(void)state;
	assert_int_equal(live_init(&l, ~0ull), 0);
	for (int i = 0; i < 400000; i++) {
		uint64_t v = 1 + tu_rand(&rng) % 7;
		uint64_t a = v <= 1 ? 1 : v <= 2 ? 2 : v <= 4 ? 4 : 8;
		uint64_t k = tu_rand(&rng) % universe & ~(a - 1);
		bool clash = false;

		/* Records do not overlap (as allocations). */
		for (uint64_t j = k >= 8 ? k - 7 : 0; j < k + v && j < universe; j++)
			clash |= ref[j] && j + ref[j] > k;
		if (tu_rand(&rng) % 3 && !ref[k] && !clash) {
			assert_int_equal(live_reserve(&l), 0);
			live_add(&l, k, v);
			ref[k] = v;
			n++;
		} else if (ref[k]) {
			live_del(&l, k);
			ref[k] = 0;
			n--;
		}
		uint64_t q = tu_rand(&rng) % universe, fk, fv, hk = UINT64_MAX;

		assert_int_equal(live_get(&l, q), ref[q]);
		for (uint64_t j = q >= 7 ? q - 7 : 0; j <= q; j++)
			if (ref[j] && q < j + ref[j])
				hk = j;
		assert_int_equal(live_find(&l, q, 3, &fk, &fv), hk != UINT64_MAX);
		if (hk != UINT64_MAX) {
			assert_int_equal(fk, hk);
			assert_int_equal(fv, ref[hk]);
		}
	}
	uint64_t pages = 0;

	for (uint64_t k = 0; k < universe; k++) {
		assert_int_equal(live_get(&l, k), ref[k]);
		pages += ref[k];
	}
	assert_int_equal(l.pages, pages);
	assert_int_equal(l.cur.n + (l.old.slot ? l.old.n : 0), n);
	live_fini(&l);
	free(ref);
}

/* ---- the range allocator ---------------------------------------------- */

static struct iopt_iova *make(uint64_t end, unsigned stripes, unsigned cpus)
{
	struct iopt_iova_cfg cfg = { .end_pfn = end, .nr_stripes = stripes,
				     .nr_cpus = cpus, .check_cached_frees = true };
	struct iopt_iova *d = NULL;

	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	return d;
}

static void test_basic_and_bad_input(void **state)
{
	struct iopt_iova *d = make(1u << 20, 4, 4);
	struct iopt_iova_stats st;
	uint64_t p, q, s, n;

	(void)state;
	/* Top-down below the limit, aligned to the size's power of two. */
	assert_int_equal(iopt_iova_alloc(d, 1, (1u << 20) - 1, &p), 0);
	assert_true(p > (1u << 19));
	assert_int_equal(iopt_iova_alloc(d, 5, 0xfffff, &q), 0);
	assert_int_equal(q & 7, 0);
	assert_int_equal(iopt_iova_alloc(d, 3, 1000, &q), 0);
	assert_true(q + 3 - 1 <= 1000 && q >= 1);
	assert_int_equal(iopt_iova_find(d, q + 2, &s, &n), 0);
	assert_int_equal(s, q);
	assert_int_equal(n, 3);
	assert_int_equal(iopt_iova_find(d, q + 3, &s, &n) == 0 && s == q, 0);

	iopt_iova_get_stats(d, &st);
	uint64_t before_free = st.free_pages, before_alloc = st.allocated_pages;

	/* Bad input changes nothing. */
	assert_int_equal(iopt_iova_alloc(d, 0, 1000, &p), -EINVAL);
	assert_int_equal(iopt_iova_alloc(d, 1, 0, &p), -EINVAL); /* below start */
	assert_int_equal(iopt_iova_free(d, q, 4), -EINVAL);	/* wrong size */
	assert_int_equal(iopt_iova_free(d, q + 1, 3), -EINVAL); /* not a start */
	assert_int_equal(iopt_iova_free(d, 0, 1), -EINVAL);	/* page 0 */
	assert_int_equal(iopt_iova_free(d, 1u << 20, 1), -EINVAL);
	assert_int_equal(iopt_iova_free(d, 12345, 1), -EINVAL); /* never */
	assert_int_equal(iopt_iova_free(d, q, 0), -EINVAL);
	assert_int_equal(iopt_iova_reserve(d, 0, 5), -EINVAL);
	assert_int_equal(iopt_iova_reserve(d, q, 2), -EBUSY);	/* allocated */
	assert_int_equal(iopt_iova_free_cached(d, 3, 2, 0), -EINVAL); /* align */
	assert_int_equal(iopt_iova_free_cached(d, 4, 4, 0), -EINVAL); /* never */
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.free_pages, before_free);
	assert_int_equal(st.allocated_pages, before_alloc);

	assert_int_equal(iopt_iova_free(d, q, 3), 0);
	assert_int_equal(iopt_iova_free(d, q, 3), -EINVAL);	/* double */
	assert_int_equal(iopt_iova_find(d, q, &s, &n), -ENOENT);

	/* Cached: double free and freeing a cached range are refused. */
	assert_int_equal(iopt_iova_alloc_cached(d, 4, 0xfffff, 1, true, &p), 0);
	assert_int_equal(iopt_iova_free_cached(d, p, 4, 1), 0);
	assert_int_equal(iopt_iova_free_cached(d, p, 4, 2), -EINVAL);
	assert_int_equal(iopt_iova_free(d, p, 4), -EINVAL);
	iopt_iova_destroy(d);

	struct iopt_iova_cfg bad = { .end_pfn = 10, .start_pfn = 10 };

	assert_int_equal(iopt_iova_create(&bad, &d), -EINVAL);
	bad = (struct iopt_iova_cfg){ .end_pfn = 100, .granule = 3000 };
	assert_int_equal(iopt_iova_create(&bad, &d), -EINVAL);
	bad = (struct iopt_iova_cfg){ .end_pfn = 100, .nr_stripes = 3 };
	assert_int_equal(iopt_iova_create(&bad, &d), -EINVAL);
}

/* Random stress against a shadow, invariants after every operation. */
static void test_random_against_shadow(void **state)
{
	const uint64_t end = 1u << 16;
	struct iopt_iova *d = make(end, 4, 4);
	uint8_t *owner = calloc(end, 1);	/* 0 free, 1 allocated, 2 reserved */
	struct {
		uint64_t pfn, size;
	} *live = calloc(end, sizeof(*live));
	size_t nlive = 0;
	uint64_t rng = 7, reserved = 0, allocated = 0;

	(void)state;
	/* Holes that must never be handed out. */
	assert_int_equal(iopt_iova_reserve(d, 0x8000, 0x100), 0);
	assert_int_equal(iopt_iova_reserve(d, 0xfff0, 0x10), 0);
	memset(owner + 0x8000, 2, 0x100);
	memset(owner + 0xfff0, 2, 0x10);
	reserved = 0x110;
	assert_int_equal(iopt_iova_reserve(d, 0x80ff, 2), -EBUSY);

	for (int op = 0; op < 60000; op++) {
		if (nlive && (tu_rand(&rng) % 100 < 45 || nlive > 3000)) {
			size_t k = tu_rand(&rng) % nlive;

			assert_int_equal(iopt_iova_free(d, live[k].pfn, live[k].size), 0);
			memset(owner + live[k].pfn, 0, live[k].size);
			allocated -= live[k].size;
			live[k] = live[--nlive];
		} else {
			uint64_t size = 1 + tu_rand(&rng) % (tu_rand(&rng) % 8 ? 16 : 700);
			uint64_t limit = tu_rand(&rng) % 4 ? end - 1 : tu_rand(&rng) % end;
			uint64_t p;
			int r = iopt_iova_alloc(d, size, limit, &p);
			unsigned align = 1;

			while (align < size)
				align <<= 1;
			if (r) {
				assert_int_equal(r, limit < 1 ? -EINVAL : -ENOMEM);
				continue;
			}
			assert_true(p >= 1 && p + size - 1 <= limit);
			assert_int_equal(p & (align - 1), 0);
			for (uint64_t i = 0; i < size; i++) {
				assert_int_equal(owner[p + i], 0);
				owner[p + i] = 1;
			}
			live[nlive].pfn = p;
			live[nlive++].size = size;
			allocated += size;
		}
		struct iopt_iova_stats st;

		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.allocated_pages, allocated);
		assert_int_equal(st.free_pages + st.allocated_pages + reserved,
				 end - 1);
		if (op % 5000 == 0) {
			for (uint64_t pfn = 1; pfn < end; pfn += 7) {
				uint64_t s, n;
				int r = iopt_iova_find(d, pfn, &s, &n);

				assert_int_equal(r == 0, owner[pfn] == 1);
			}
		}
	}
	/* Reserved space was never handed out (checked above); all frees
	 * give every page back. */
	while (nlive) {
		nlive--;
		assert_int_equal(iopt_iova_free(d, live[nlive].pfn, live[nlive].size), 0);
	}
	struct iopt_iova_stats st;

	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.free_pages, end - 1 - reserved);
	/* Whole space allocatable again: the buddies merged back. */
	uint64_t p;

	assert_int_equal(iopt_iova_alloc(d, 0x4000, end - 1, &p), 0);
	iopt_iova_destroy(d);
	free(owner);
	free(live);
}

/*
 * The record of live allocations, exactly: small ones (at most 64 pages)
 * are recorded by start and end bits in the free map's leaves, larger
 * ones in a table. Against a shadow of which allocation holds each page:
 * iopt_iova_find() answers every page's start and size, and a free that
 * names anything but one whole live allocation -- a wrong size, a start
 * inside one, two neighbours as one, a free page, a reserved page --
 * fails with -EINVAL and changes nothing.
 */
static void test_record_exact_against_shadow(void **state)
{
	const uint64_t end = 1u << 15;
	struct iopt_iova *d = make(end, 2, 2);
	uint64_t *start = malloc(end * sizeof(*start));	/* UINT64_MAX: none */
	uint64_t *len = calloc(end, sizeof(*len));
	struct {
		uint64_t pfn, size;
	} *live = calloc(end, sizeof(*live));
	size_t nlive = 0;
	uint64_t rng = 11, allocated = 0, bad = 0;

	(void)state;
	for (uint64_t p = 0; p < end; p++)
		start[p] = UINT64_MAX;
	/* A reserved hole: no record, never freed. */
	assert_int_equal(iopt_iova_reserve(d, 0x4000, 0x40), 0);
	for (int op = 0; op < 40000; op++) {
		if (nlive && (tu_rand(&rng) % 100 < 48 || nlive > 1500)) {
			size_t k = tu_rand(&rng) % nlive;
			uint64_t p = live[k].pfn, n = live[k].size;

			assert_int_equal(iopt_iova_free(d, p, n), 0);
			for (uint64_t i = 0; i < n; i++)
				start[p + i] = UINT64_MAX;
			allocated -= n;
			live[k] = live[--nlive];
		} else {
			/* Mostly small, a few above the leaf record's 64. */
			uint64_t size = 1 + tu_rand(&rng) % (tu_rand(&rng) % 8 ? 64 : 200);
			uint64_t p;

			if (iopt_iova_alloc(d, size, end - 1, &p))
				continue;
			for (uint64_t i = 0; i < size; i++) {
				assert_int_equal(start[p + i], UINT64_MAX);
				start[p + i] = p;
				len[p + i] = size;
			}
			live[nlive].pfn = p;
			live[nlive++].size = size;
			allocated += size;
		}
		if (!nlive)
			continue;
		/* A bad free next to a live allocation a. */
		size_t k = tu_rand(&rng) % nlive;
		uint64_t a = live[k].pfn, an = live[k].size, fp = a, fn = an;

		switch (tu_rand(&rng) % 6) {
		case 0:	/* one page more */
			fn = an + 1;
			break;
		case 1:	/* one page less, or a page past the end */
			if (an > 1)
				fn = an - 1;
			else
				fp = a + 1;
			break;
		case 2:	/* from its second page */
			fp = a + 1;
			fn = an > 1 ? an - 1 : 1;
			break;
		case 3:	/* with the allocation after it, as one */
			if (a + an < end && start[a + an] == a + an)
				fn = an + len[a + an];
			else
				fn = an + 1;
			break;
		case 4:	/* with the allocation before it, as one */
			if (a > 1 && start[a - 1] != UINT64_MAX) {
				fp = start[a - 1];
				fn = len[a - 1] + an;
			} else {
				fp = a - 1;
				fn = an + 1;
			}
			break;
		default: /* a page no allocation starts at: free or reserved */
			fp = tu_rand(&rng) % 2 ? 0x4000 + tu_rand(&rng) % 0x40 :
						 1 + tu_rand(&rng) % (end - 1);
			fn = 1 + tu_rand(&rng) % 64;
			break;
		}
		/* A page past a one-page allocation may start another. */
		if (fp < end && start[fp] == fp && len[fp] == fn)
			continue;
		struct iopt_iova_stats before, after;
		uint64_t s, n;

		iopt_iova_get_stats(d, &before);
		assert_int_equal(iopt_iova_free(d, fp, fn), -EINVAL);
		bad++;
		iopt_iova_get_stats(d, &after);
		assert_int_equal(after.free_pages, before.free_pages);
		assert_int_equal(after.allocated_pages, allocated);
		assert_int_equal(iopt_iova_find(d, a + an - 1, &s, &n), 0);
		assert_int_equal(s, a);
		assert_int_equal(n, an);
		if (op % 4000 == 0)
			for (uint64_t p = 1; p < end; p++) {
				int r = iopt_iova_find(d, p, &s, &n);

				if (start[p] == UINT64_MAX) {
					assert_int_equal(r, -ENOENT);
					continue;
				}
				assert_int_equal(r, 0);
				assert_int_equal(s, start[p]);
				assert_int_equal(n, len[p]);
			}
	}
	assert_true(bad > 30000);
	while (nlive) {
		nlive--;
		assert_int_equal(iopt_iova_free(d, live[nlive].pfn, live[nlive].size), 0);
		assert_int_equal(iopt_iova_free(d, live[nlive].pfn, live[nlive].size),
				 -EINVAL);
	}
	struct iopt_iova_stats st;

	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.allocated_pages, 0);
	assert_int_equal(st.free_pages, end - 1 - 0x40);
	iopt_iova_destroy(d);
	free(start);
	free(len);
	free(live);
}

/* Larger than a chunk: the global path, and a request no stripe can
 * satisfy alone. */
static void test_larger_than_chunk(void **state)
{
	struct iopt_iova *d = make(1u << 22, 8, 8);
	struct iopt_iova_stats st;
	uint64_t p, q;

	(void)state;
	assert_int_equal(iopt_iova_alloc(d, 1u << 20, (1u << 22) - 1, &p), 0);
	assert_int_equal(p & ((1u << 20) - 1), 0);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.global_allocs, 1);
	assert_int_equal(st.allocated_pages, 1u << 20);
	/* Small allocations cannot land inside it. */
	uint64_t small[1000];

	for (int i = 0; i < 1000; i++) {
		assert_int_equal(iopt_iova_alloc(d, 1, (1u << 22) - 1, &q), 0);
		assert_true(q < p || q >= p + (1u << 20));
		small[i] = q;
	}
	/* With them in the top half, 2^21 aligned pages no longer fit: the
	 * bottom half holds page 0, which is never handed out. */
	assert_int_equal(iopt_iova_alloc(d, 3u << 19, (1u << 22) - 1, &q), -ENOMEM);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(iopt_iova_free(d, small[i], 1), 0);
	assert_int_equal(iopt_iova_free(d, p, 1u << 20), 0);
	assert_int_equal(iopt_iova_free(d, p, 1u << 20), -EINVAL);
	/* 3M pages: not a power of two, above a chunk. */
	assert_int_equal(iopt_iova_alloc(d, 3u << 19, (1u << 22) - 1, &p), 0);
	assert_int_equal(iopt_iova_free(d, p, 3u << 19), 0);
	iopt_iova_destroy(d);
}

/* Every stripe has space below a 32-bit limit: CPUs spread out. */
static void test_stripes_below_32bit(void **state)
{
	struct iopt_iova *d = make(1ull << 36, 8, 8);	/* 48-bit, 4K pages */
	uint64_t limit32 = (1ull << 20) - 1, chunk_seen[8] = { 0 };

	(void)state;
	for (unsigned cpu = 0; cpu < 8; cpu++) {
		uint64_t p;

		assert_int_equal(iopt_iova_alloc_cached(d, 1, limit32, cpu, false, &p),
				 0);
		assert_true(p <= limit32);
		chunk_seen[cpu] = p;
	}
	/* Different CPUs got different stripes' chunks. */
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = a + 1; b < 8; b++)
			assert_true(chunk_seen[a] >> 15 != chunk_seen[b] >> 15);
	iopt_iova_destroy(d);
}

/*
 * Within the stripe it starts in, an allocation takes the highest free
 * block aligned to its size at or below its limit, whatever limit the
 * stripe's last allocation had (stripe_alloc() keeps the last cap's local
 * bound per stripe: a stale one would hand out a block above the limit
 * or below the highest). A cached allocation with empty caches starts in
 * the stripe of the CPU it names; chunk c of 2^chunk_order pages belongs
 * to stripe c mod 4 (docs/iova.md). The expectation is a scan of a
 * shadow bitmap.
 */
static void test_stripe_highest_under_changing_limits(void **state)
{
	const uint64_t end = 1u << 16;
	struct iopt_iova_cfg cfg = { .end_pfn = end, .nr_stripes = 4,
				     .nr_cpus = 4, .max_cached_order = 2 };
	struct iopt_iova *d = NULL;
	uint8_t *used = calloc(end, 1);
	struct {
		uint64_t pfn, size;
	} *live = calloc(4096, sizeof(*live));
	size_t nlive = 0;
	uint64_t rng = 13, exact = 0;

	(void)state;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	unsigned co = d->chunk_order;

	assert_true(co < 14);	/* several chunks per stripe */
	for (int op = 0; op < 40000; op++) {
		if (nlive && (tu_rand(&rng) % 100 < 40 || nlive == 4096)) {
			size_t k = tu_rand(&rng) % nlive;

			assert_int_equal(iopt_iova_free(d, live[k].pfn, live[k].size), 0);
			memset(used + live[k].pfn, 0, live[k].size);
			live[k] = live[--nlive];
			continue;
		}
		uint64_t size = 1ull << (tu_rand(&rng) % 3);
		uint64_t limit = tu_rand(&rng) % 2 ? end - 1 :
				 size + tu_rand(&rng) % (end - size);
		unsigned cpu = (unsigned)(tu_rand(&rng) % 4);
		uint64_t want = 0, p;

		/* The highest aligned block of stripe cpu at or below limit
		 * whose pages are all free (0: none; page 0 is not usable). */
		for (uint64_t q = (limit + 1 - size) & ~(size - 1); q; q -= size) {
			uint64_t i = 0;

			if (((q >> co) & 3) != cpu)
				continue;
			while (i < size && !used[q + i])
				i++;
			if (i == size) {
				want = q;
				break;
			}
		}
		int r = iopt_iova_alloc_cached(d, size, limit, cpu, false, &p);

		if (!want) {	/* another stripe, or none */
			if (r)
				continue;
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(p, want);
			exact++;
		}
		assert_true(p + size - 1 <= limit);
		for (uint64_t i = 0; i < size; i++) {
			assert_int_equal(used[p + i], 0);
			used[p + i] = 1;
		}
		live[nlive].pfn = p;
		live[nlive++].size = size;
	}
	assert_true(exact > 10000);
	iopt_iova_destroy(d);
	free(used);
	free(live);
}

/* ---- caches ----------------------------------------------------------- */

static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void test_magazines_depot_trim(void **state)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 1u << 16, .nr_cpus = 2,
				     .nr_stripes = 2, .mag_size = 4,
				     .depot_max = 2, .trim_ns = 1000,
				     .clock = fake_clock, .check_cached_frees = true };
	struct iopt_iova *d;
	struct iopt_iova_stats st;
	uint64_t p[64];

	(void)state;
	fake_now = 0;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(iopt_iova_alloc_cached(d, 2, 0xffff, 0, false, &p[i]),
				 0);
	/* 20 frees: 4 loaded + 4 spare + 2 depot magazines of 4 = 16 cached;
	 * with the depot full, a further full pair drains to the allocator. */
	for (int i = 0; i < 20; i++)
		assert_int_equal(iopt_iova_free_cached(d, p[i], 2, 0), 0);
	iopt_iova_get_stats(d, &st);
	assert_true(st.cached_ranges >= 12 && st.cached_ranges <= 16);
	uint64_t cached = st.cached_ranges;

	/* CPU 1 sees nothing in its magazines but takes a depot magazine. */
	assert_int_equal(iopt_iova_alloc_cached(d, 2, 0xffff, 1, false, &p[30]), 0);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.cached_ranges, cached - 1);
	assert_int_equal(st.cache_hits, 1);
	/* A limit below every cached range misses, and allocates below it. */
	assert_int_equal(iopt_iova_alloc_cached(d, 2, 100, 0, false, &p[31]), 0);
	assert_true(p[31] + 1 <= 100);
	/* Trimming: one depot magazine per interval. */
	iopt_iova_get_stats(d, &st);
	cached = st.cached_ranges;
	fake_now = 500;
	iopt_iova_trim(d);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.cached_ranges, cached);
	fake_now = 5000;
	iopt_iova_trim(d);
	iopt_iova_get_stats(d, &st);
	assert_true(st.cached_ranges < cached);
	/* Flushing returns every cached range to the allocator. */
	iopt_iova_flush_caches(d);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.cached_ranges, 0);
	assert_int_equal(st.allocated_pages, 4);	/* p[30], p[31] */
	iopt_iova_destroy(d);
}

/*
 * Threads sharing one CPU number (unchecked cached frees): every cache
 * operation contends for the same CPU-cache lock, so the hit and the free
 * that take it with one exchange (iova_trylock()) fail that try and go on
 * to the slow paths, which take it themselves; small magazines and depot
 * make them spill, refill from the depot and drain to the allocator too.
 * No page may be handed out twice (an owner byte per page, set by
 * exchange), every range lies below its limit and is aligned to its
 * rounded size, and everything is back in the allocator at the end.
 */
#define SHARED_SPACE (1u << 14)
#define SHARED_MAXT 8

struct shared_ctx {
	struct iopt_iova *d;
	uint8_t *owner;
	long ops, errors;
	int id;
};

static void *shared_worker(void *arg)
{
	struct shared_ctx *c = arg;
	uint64_t rng = 0x5eed + (uint64_t)c->id, mine[64], sizes[64];
	int n = 0;

	for (long i = 0; i < c->ops; i++) {
		if (n && (tu_rand(&rng) % 2 || n == 64)) {
			int k = (int)(tu_rand(&rng) % (uint64_t)n);

			for (uint64_t j = 0; j < sizes[k]; j++)
				__atomic_store_n(&c->owner[mine[k] + j], 0, __ATOMIC_RELEASE);
			if (iopt_iova_free_cached(c->d, mine[k], sizes[k], 0))
				c->errors++;
			mine[k] = mine[--n];
			sizes[k] = sizes[n];
			continue;
		}
		/* 1, 2 or 3 pages (3 is rounded up to 4), below a limit that
		 * is sometimes low enough to miss what the cache holds. */
		uint64_t size = 1 + tu_rand(&rng) % 3, p;
		uint64_t round = size == 3 ? 4 : size;
		uint64_t limit = tu_rand(&rng) % 4 ? SHARED_SPACE - 1 : SHARED_SPACE / 2 - 1;

		if (iopt_iova_alloc_cached(c->d, size, limit, 0, false, &p))
			continue;
		if (p + round - 1 > limit || (p & (round - 1)))
			c->errors++;
		for (uint64_t j = 0; j < round; j++)
			if (__atomic_exchange_n(&c->owner[p + j], 1, __ATOMIC_ACQ_REL))
				c->errors++;
		mine[n] = p;
		sizes[n++] = round;
	}
	while (n--) {
		for (uint64_t j = 0; j < sizes[n]; j++)
			__atomic_store_n(&c->owner[mine[n] + j], 0, __ATOMIC_RELEASE);
		if (iopt_iova_free_cached(c->d, mine[n], sizes[n], 0))
			c->errors++;
	}
	return NULL;
}

static void test_cache_shared_cpu(void **state)
{
	struct iopt_iova_cfg cfg = { .end_pfn = SHARED_SPACE, .nr_cpus = 1,
				     .mag_size = 4, .depot_max = 2 };
	const char *e = getenv("IOPT_STRESS_OPS");
	long ops = e ? atol(e) / 4 : 20000;
	unsigned n = tu_threads(4, SHARED_MAXT);
	struct shared_ctx c[SHARED_MAXT];
	struct plat_thread th[SHARED_MAXT];
	struct iopt_iova_stats st;
	struct iopt_iova *d;
	uint8_t *owner = calloc(SHARED_SPACE, 1);

	(void)state;
	assert_non_null(owner);
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	for (unsigned i = 0; i < n; i++) {
		c[i] = (struct shared_ctx){ d, owner, ops, 0, (int)i };
		TU_THREAD_START(&th[i], shared_worker, &c[i]);
	}
	for (unsigned i = 0; i < n; i++)
		plat_thread_join(&th[i]);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(c[i].errors, 0);
	iopt_iova_flush_caches(d);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.cached_ranges, 0);
	assert_int_equal(st.allocated_pages, 0);
	assert_int_equal(st.free_pages, SHARED_SPACE - 1);	/* pfn 0 unused */
	iopt_iova_destroy(d);
	free(owner);
}

/* Fill everything below limit with single pages; *last: one of them. */
static void fill(struct iopt_iova *d, uint64_t limit, uint64_t *last)
{
	uint64_t p, blk = 0;

	while (iopt_iova_alloc(d, 1024, limit, &p) == 0)
		blk = p;
	if (blk)
		assert_int_equal(iopt_iova_free(d, blk, 1024), 0);
	while (iopt_iova_alloc(d, 1, limit, &p) == 0)
		*last = p;
}

/* The cache-flush policies on 32-bit exhaustion of a PCI-like device. */
static void test_flush_policies(void **state)
{
	static const enum iopt_iova_flush pol[] = {
		IOPT_IOVA_FLUSH_NEVER, IOPT_IOVA_FLUSH_LAST_RETRY,
		IOPT_IOVA_FLUSH_EVERY_RETRY };
	/* Everything full: the 32-bit try of EVERY_RETRY flushes, which
	 * releases the cached range for the full-limit try. */
	static const uint64_t want_flushes[] = { 0, 1, 1 };

	(void)state;
	for (unsigned k = 0; k < 3; k++) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1u << 22, .nr_cpus = 4,
					     .flush = pol[k] };
		struct iopt_iova *d;
		struct iopt_iova_stats st;
		uint64_t limit32 = (1u << 20) - 1, p;

		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		/* Fill the 32-bit space, and leave one range in CPU 3's cache. */
		fill(d, limit32, &p);
		assert_int_equal(iopt_iova_free_cached(d, p, 1, 3), 0);
		/* CPU 0 allocates: below 32 bits fails, then above. */
		assert_int_equal(iopt_iova_alloc_dma(d, 1, (1u << 22) - 1,
						     IOPT_IOVA_DEV_PCI, 0, &p), 0);
		iopt_iova_get_stats(d, &st);
		/* Every-retry flushed after the 32-bit failure (and the range
		 * from CPU 3 then satisfied it); last-retry flushed only once
		 * the full-limit try failed: it did not. */
		if (pol[k] == IOPT_IOVA_FLUSH_EVERY_RETRY) {
			assert_int_equal(st.cache_flushes, 1);
			assert_true(p <= limit32);
		} else {
			assert_int_equal(st.cache_flushes, 0);
			assert_true(p > limit32);
		}
		/* Fill everything: the last retry flushes per policy. */
		uint64_t hi, junk = 0;

		assert_int_equal(iopt_iova_alloc(d, 1, (1u << 22) - 1, &hi), 0);
		assert_true(hi > limit32);
		fill(d, (1u << 22) - 1, &junk);
		assert_int_equal(iopt_iova_free_cached(d, hi, 1, 3), 0);
		uint64_t before = st.cache_flushes;
		int r = iopt_iova_alloc_dma(d, 1, (1u << 22) - 1, IOPT_IOVA_DEV_PCI,
					    0, &p);

		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.cache_flushes - before, want_flushes[k]);
		assert_int_equal(r, pol[k] == IOPT_IOVA_FLUSH_NEVER ? -ENOMEM : 0);
		/* FORCE_64 skips the 32-bit try. */
		iopt_iova_destroy(d);
	}
}

/* ---- Linux 4.13's tree walk (IOPT_IOVA_SEARCH_RBTREE_WALK) ------------- */

/* 4K pages: the 32-bit limit is page 2^20 - 1. */
#define W_L	((1ull << 20) - 1)

static struct iopt_iova *make_walk(uint64_t start, uint64_t end, unsigned cpus,
				   enum iopt_iova_flush flush)
{
	struct iopt_iova_cfg cfg = { .start_pfn = start, .end_pfn = end,
				     .nr_cpus = cpus, .flush = flush,
				     .search = IOPT_IOVA_SEARCH_RBTREE_WALK };
	struct iopt_iova *d;

	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	return d;
}

static void want_walks(struct iopt_iova *d, uint64_t walks, uint64_t visits)
{
	struct iopt_iova_stats st;

	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.tree_walks, walks);
	assert_int_equal(st.tree_visits, visits);
}

/*
 * A script whose walks are counted by hand from 4.13's rules (iova.c of
 * that release: __get_cached_rbnode(), __cached_rbnode_insert_update(),
 * __cached_rbnode_delete_update(), alloc_iova_fast()): four pages below
 * 4 GiB (L-3 .. L), the space up to page E - 1 above. In the comments,
 * "c32" is cached32 and "n" the nodes in the tree.
 */
static void test_tree_walk_hand_counted(void **state)
{
	const uint64_t L = W_L, E = 1ull << 21, dma = E - 1;
	uint64_t p;

	(void)state;
	for (unsigned every = 0; every < 2; every++) {
		struct iopt_iova *d = make_walk(L - 3, E, 2, every ?
						IOPT_IOVA_FLUSH_EVERY_RETRY :
						IOPT_IOVA_FLUSH_LAST_RETRY);
		struct iopt_iova_stats st;

		/* Four PCI maps fill the 32-bit space top-down; each 32-bit
		 * try succeeds and caches its node: c32 = L-3, n = 4. */
		for (unsigned i = 0; i < 4; i++) {
			assert_int_equal(iopt_iova_alloc_dma(d, 1, dma, IOPT_IOVA_DEV_PCI,
							     0, &p), 0);
			assert_int_equal(p, L - i);
		}
		want_walks(d, 0, 0);
		/* The fifth: the 32-bit try fails from below c32 = L-3,
		 * nothing below it: 0 visits; every-retry flushes (an empty
		 * cache: c32 stays) and fails again, 0. Then E-1 from the
		 * whole mask; n = 5. */
		assert_int_equal(iopt_iova_alloc_dma(d, 1, dma, IOPT_IOVA_DEV_PCI, 0,
						     &p), 0);
		assert_int_equal(p, E - 1);
		want_walks(d, every ? 2 : 1, 0);
		/* E-1 into CPU 0's cache: still a node of the tree. */
		assert_int_equal(iopt_iova_free_cached(d, E - 1, 1, 0), 0);
		assert_int_equal(iopt_iova_alloc_dma(d, 1, dma, IOPT_IOVA_DEV_PCI, 0,
						     &p), 0);
		if (every) {
			/* 32-bit: 0 (below L-3). The flush frees E-1 to the
			 * tree: at or above c32, its next node is none below
			 * 4 GiB: c32 cleared. Retry from the top: all 4.
			 * Whole mask from an empty cache: E-1 again, n = 5. */
			assert_int_equal(p, E - 1);
			want_walks(d, 4, 4);
			/* Now every 32-bit try starts at the top: 5 and, after
			 * a flush that frees nothing, 5 again; then E-2. */
			assert_int_equal(iopt_iova_alloc_dma(d, 1, dma,
							     IOPT_IOVA_DEV_PCI, 0, &p), 0);
			assert_int_equal(p, E - 2);
			want_walks(d, 6, 14);
			iopt_iova_get_stats(d, &st);
			assert_int_equal(st.cache_flushes, 3);
			iopt_iova_destroy(d);
			continue;
		}
		/* Last-retry: 0 below L-3, and E-1 from the cache. */
		assert_int_equal(p, E - 1);
		want_walks(d, 2, 0);
		/* 0 again, and E-2 from the allocator (E-1 is live). */
		assert_int_equal(iopt_iova_alloc_dma(d, 1, dma, IOPT_IOVA_DEV_PCI, 0,
						     &p), 0);
		assert_int_equal(p, E - 2);
		want_walks(d, 3, 0);
		/* Free L-2 (at or above c32 = L-3): c32 = its next, L-1. A
		 * 32-bit allocation takes L-2 back and caches it. */
		assert_int_equal(iopt_iova_free(d, L - 2, 1), 0);
		assert_int_equal(iopt_iova_alloc(d, 1, L, &p), 0);
		assert_int_equal(p, L - 2);
		want_walks(d, 3, 0);
		/* Full: from below c32 = L-2, one node (L-3); a lower limit
		 * starts there too (4.13 took c32 for any limit up to 32
		 * bits). */
		assert_int_equal(iopt_iova_alloc(d, 1, L, &p), -ENOMEM);
		want_walks(d, 4, 1);
		assert_int_equal(iopt_iova_alloc(d, 1, L - 1, &p), -ENOMEM);
		want_walks(d, 5, 2);
		/* Free L, above c32: no next node, c32 cleared. A try below
		 * L - 1 now walks all 5 (L-3, L-2, L-1, E-2, E-1). */
		assert_int_equal(iopt_iova_free(d, L, 1), 0);
		assert_int_equal(iopt_iova_alloc(d, 1, L - 1, &p), -ENOMEM);
		want_walks(d, 6, 7);
		/* A reservation is a node too (reserve_iova()): 6. A try
		 * above 32 bits starts at the top whatever c32: take every
		 * page, then fail. */
		assert_int_equal(iopt_iova_reserve(d, E - 10, 1), 0);
		assert_int_equal(iopt_iova_alloc(d, 1, L - 1, &p), -ENOMEM);
		want_walks(d, 7, 13);
		iopt_iova_destroy(d);
	}
}

/*
 * The seed's steady state (seed 003): the 32-bit space full of N ranges
 * (a receive ring's buffers), one sender that maps and unmaps on its CPU
 * of 128. Flushing only before the last try, the failing 32-bit try
 * starts below the lowest range every time: no node visited, whatever N.
 * Flushing on every failure: from the second map the flush returns the
 * cached range above 4 GiB and clears cached32, so each later map walks
 * N + 1 nodes (the cached range is still in the tree) before the flush
 * and N after: N + (I - 2)(2N + 1) for I maps, by hand.
 */
static void test_tree_walk_steady_state(void **state)
{
	const unsigned N = 512, I = 50;
	const uint64_t E = 1ull << 22;

	(void)state;
	for (unsigned every = 0; every < 2; every++) {
		struct iopt_iova *d = make_walk(W_L + 1 - N, E, 128, every ?
						IOPT_IOVA_FLUSH_EVERY_RETRY :
						IOPT_IOVA_FLUSH_LAST_RETRY);
		struct iopt_iova_stats st;
		uint64_t p;

		for (unsigned i = 0; i < N; i++)
			assert_int_equal(iopt_iova_alloc_dma(d, 1, E - 1,
							     IOPT_IOVA_DEV_PCI, 0, &p), 0);
		assert_int_equal(p, W_L + 1 - N);
		for (unsigned i = 0; i < I; i++) {
			assert_int_equal(iopt_iova_alloc_dma(d, 1, E - 1,
							     IOPT_IOVA_DEV_PCI, 0, &p), 0);
			assert_true(p > W_L);
			assert_int_equal(iopt_iova_free_cached(d, p, 1, 0), 0);
		}
		iopt_iova_get_stats(d, &st);
		if (every) {
			assert_int_equal(st.tree_walks, 2 * I);
			assert_int_equal(st.tree_visits,
					 N + (uint64_t)(I - 2) * (2 * N + 1));
			assert_int_equal(st.cache_flushes, I);
		} else {
			assert_int_equal(st.tree_walks, I);
			assert_int_equal(st.tree_visits, 0);
			assert_int_equal(st.cache_flushes, 0);
		}
		iopt_iova_destroy(d);
	}
}

/* Bad configurations are refused; the default mode counts no walk. */
static void test_tree_walk_bad_input(void **state)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 1u << 21, .nr_cpus = 2 };
	struct iopt_iova *d = NULL;
	uint64_t p;

	(void)state;
	cfg.search = (enum iopt_iova_search)2;
	assert_int_equal(iopt_iova_create(&cfg, &d), -EINVAL);
	cfg.search = IOPT_IOVA_SEARCH_FMAP;
	cfg.walk_node_ns = 10;		/* without the walk */
	assert_int_equal(iopt_iova_create(&cfg, &d), -EINVAL);
	cfg.search = IOPT_IOVA_SEARCH_RBTREE_WALK;
	cfg.walk_node_ns = IOPT_IOVA_WALK_NODE_NS_MAX + 1;
	assert_int_equal(iopt_iova_create(&cfg, &d), -EINVAL);
	assert_null(d);
	cfg.walk_node_ns = IOPT_IOVA_WALK_NODE_NS_MAX;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	iopt_iova_destroy(d);
	/* A domain that starts above 4 GiB has no 32-bit index: every
	 * failed try walks every node. */
	cfg.start_pfn = W_L + 1;
	cfg.end_pfn = W_L + 3;
	cfg.walk_node_ns = 0;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	assert_int_equal(iopt_iova_alloc(d, 2, W_L + 2, &p), 0);
	assert_int_equal(iopt_iova_alloc(d, 1, W_L + 2, &p), -ENOMEM);
	want_walks(d, 1, 1);
	iopt_iova_destroy(d);
	/* The default mode: no walk counted. */
	cfg = (struct iopt_iova_cfg){ .end_pfn = 1u << 21, .nr_cpus = 2 };
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	while (iopt_iova_alloc(d, 1, W_L, &p) == 0)
		;
	want_walks(d, 0, 0);
	iopt_iova_destroy(d);
}

/* Four threads map and unmap at once, as four CPUs, under the old flush
 * rule (flushes and walks racing with allocations and frees): once every
 * range is back in the allocator, the tree's counts are the allocator's
 * again, whatever order the threads' changes reached them in: a failed
 * 32-bit try walks exactly the N ranges still held. */
struct walk_worker {
	struct iopt_iova *d;
	unsigned cpu;
	int err;
	struct plat_thread t;
};

static void *walk_worker_main(void *arg)
{
	struct walk_worker *w = arg;
	uint64_t ring[4] = { 0 };

	for (unsigned i = 0; i < 3000; i++) {
		uint64_t *slot = &ring[i % 4], p;

		if (*slot && iopt_iova_free_cached(w->d, *slot, 1, w->cpu))
			w->err++;
		*slot = 0;
		if (iopt_iova_alloc_dma(w->d, 1, (1ull << 22) - 1, IOPT_IOVA_DEV_PCI,
					w->cpu, &p))
			w->err++;
		else
			*slot = p;
	}
	for (unsigned i = 0; i < 4; i++)
		if (ring[i] && iopt_iova_free_cached(w->d, ring[i], 1, w->cpu))
			w->err++;
	return NULL;
}

static void test_tree_walk_concurrent(void **state)
{
	const unsigned N = 64;
	struct iopt_iova *d = make_walk(W_L + 1 - N, 1ull << 22, 4,
					IOPT_IOVA_FLUSH_EVERY_RETRY);
	struct walk_worker w[4];
	struct iopt_iova_stats st;
	uint64_t p, before;

	(void)state;
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(iopt_iova_alloc(d, 1, W_L, &p), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct walk_worker){ .d = d, .cpu = i };
		assert_int_equal(plat_thread_start(&w[i].t, walk_worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		plat_thread_join(&w[i].t);
		assert_int_equal(w[i].err, 0);
	}
	iopt_iova_flush_caches(d);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.allocated_pages, N);
	assert_true(st.tree_visits > 0);
	before = st.tree_visits;
	/* The flush returned ranges above 4 GiB: cached32 is clear. */
	assert_int_equal(iopt_iova_alloc(d, 1, W_L, &p), -ENOMEM);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.tree_visits - before, N);
	iopt_iova_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_record_against_reference),
		cmocka_unit_test(test_live_lookup_behind_move),
		cmocka_unit_test(test_basic_and_bad_input),
		cmocka_unit_test(test_random_against_shadow),
		cmocka_unit_test(test_record_exact_against_shadow),
		cmocka_unit_test(test_larger_than_chunk),
		cmocka_unit_test(test_stripes_below_32bit),
		cmocka_unit_test(test_stripe_highest_under_changing_limits),
		cmocka_unit_test(test_magazines_depot_trim),
		cmocka_unit_test(test_cache_shared_cpu),
		cmocka_unit_test(test_flush_policies),
		cmocka_unit_test(test_cpu_id_is_the_pinned_cpu),
		cmocka_unit_test(test_tree_walk_hand_counted),
		cmocka_unit_test(test_tree_walk_steady_state),
		cmocka_unit_test(test_tree_walk_bad_input),
		cmocka_unit_test(test_tree_walk_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
