/* SPDX-License-Identifier: MIT */
/*
 * A property checker for the IOVA module: random operations on the public
 * API (allocation of every kind, frees, flush-queue frees and polls, cache
 * flushes and trims, reservations, bad calls) against a shadow of every
 * page, on random geometries with inclusive limits that are not 2^n - 1,
 * CPUs interleaved from a seeded log, allocation failure injected inside
 * the library, and a threaded phase. What the shadow checks:
 *
 *  - every allocation lies at or above start, at or below its limit,
 *    aligned to its size rounded up to a power of two, on pages that are
 *    free or were freed through a cache (never owned, reserved, or queued
 *    for invalidation);
 *  - a failed allocation of any size, with no injected failure, means no
 *    aligned run of that size is free below the limit (brute force);
 *  - the range allocator's answer for a power-of-two size is the highest
 *    free aligned block below the limit in the stripe that served it
 *    (brute force over that stripe's chunks);
 *  - free + allocated + reserved pages account for the whole space after
 *    every operation, and exactly (caches and queues flushed) at the end;
 *  - a bad free gets -EINVAL and changes nothing; the flush-queue free
 *    gives the verdict iopt_iova_free_cached() gives;
 *  - an operation that fails with -ENOMEM changes nothing.
 *
 * And one test per defect found this way (issue 9, items 6 and 11a-f),
 * each failing on the code before its fix.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/iova.h>

#include "../src/iova/iova_internal.h"
#include "iova_failinj.h"
#include "tthread.h"
#include "tutil.h"

static unsigned ceil_lg2(uint64_t n)
{
	return n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(n - 1);
}

/* ---- defect 6: the caches honour an inclusive limit ------------------ */

static void test_cached_alloc_respects_limit(void **state)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 0x1000000, .nr_cpus = 1,
				     .nr_stripes = 1 };
	struct iopt_iova *d;
	uint64_t p;

	(void)state;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	/* The top 32 pages go through CPU 0's cache. */
	assert_int_equal(iopt_iova_alloc_cached(d, 32, 0xffffff, 0, false, &p), 0);
	assert_int_equal(p, 0xffffe0);
	assert_int_equal(iopt_iova_free_cached(d, p, 32, 0), 0);
	/* Limit 0xffffe5: the highest page the allocation may include. */
	assert_int_equal(iopt_iova_alloc_cached(d, 32, 0xffffe5, 0, false, &p), 0);
	assert_true(p + 31 <= 0xffffe5);
	assert_int_equal(p, 0xffffc0);		/* as the uncached path */
	assert_int_equal(iopt_iova_free_cached(d, p, 32, 0), 0);

	/* Every class, limits of every residue: the last page fits. */
	for (unsigned cls = 0; cls <= 5; cls++) {
		for (uint64_t lim = 0xffffc0; lim <= 0xffffff; lim += 3) {
			uint64_t q;

			/* Seed the cache with the top range of the class. */
			assert_int_equal(iopt_iova_alloc_cached(d, 1ull << cls,
								0xffffff, 0, false,
								&q), 0);
			assert_int_equal(iopt_iova_free_cached(d, q, 1ull << cls, 0), 0);
			if (iopt_iova_alloc_cached(d, 1ull << cls, lim, 0, false, &q))
				continue;
			assert_true(q + (1ull << cls) - 1 <= lim);
			assert_int_equal(q & ((1ull << cls) - 1), 0);
			assert_int_equal(iopt_iova_free_cached(d, q, 1ull << cls, 0), 0);
		}
	}
	iopt_iova_destroy(d);
}

/* ---- 11a: a free racing a failing 32-bit search ---------------------- */

struct race {
	struct iopt_iova *d;
	uint64_t victim;
	int freed;
};

/* Runs inside an allocation of the library: once the searching thread
 * holds stripe 1's lock (stripe 0 already searched), free a page of
 * stripe 0 below the limit, as another CPU would. */
static void race_free(void *arg)
{
	struct race *r = arg;

	if (!__atomic_load_n(&r->d->stripes[1].lock.v, __ATOMIC_ACQUIRE)) {
		fi_on_next_alloc(race_free, r);
		return;
	}
	r->freed = iopt_iova_free(r->d, r->victim, 1) == 0 ? 1 : -1;
}

static void test_fail32_hint_survives_no_racing_free(void **state)
{
	/* 4 MiB pages: the 32-bit limit is page 1023; chunks of 128 pages,
	 * even chunks in stripe 0, odd in stripe 1. */
	struct iopt_iova_cfg cfg = { .granule = 1u << 22, .end_pfn = 4096,
				     .nr_cpus = 2, .nr_stripes = 2 };
	struct iopt_iova *d;
	struct race r = { 0 };
	uint64_t p, lim = 1023, first = 0;
	int n = 0;

	(void)state;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	assert_int_equal(d->limit32, lim);
	assert_int_equal(d->chunk_order, 7);
	/* Fill every page below the limit (CPU 0: stripe 0 first). */
	while (iopt_iova_alloc(d, 1, lim, &p) == 0) {
		if (!n++)
			first = p;
	}
	assert_int_equal(n, 1023);
	/* That last failure set the hint; a free and a re-allocation of
	 * the same page leave the space full and the hint clear. */
	assert_int_equal(iopt_iova_free(d, first, 1), 0);
	assert_int_equal(iopt_iova_alloc_cached(d, 1, lim, 0, false, &p), 0);
	assert_int_equal(p, first);
	/* Make stripe 1's next search refill its free map's node pool (one
	 * allocation inside the search, while its lock is held). */
	fmap_pool_drain(&d->stripes[1].fmap);
	/* A page of stripe 0 below the limit, allocated. */
	r.d = d;
	r.victim = 895;
	assert_int_equal(iova_stripe_of(d, r.victim), 0);
	assert_int_equal(iopt_iova_find(d, r.victim, &p, &(uint64_t){ 0 }), 0);
	fi_on_next_alloc(race_free, &r);
	assert_int_equal(iopt_iova_alloc_cached(d, 1, lim, 0, false, &p), -ENOMEM);
	fi_on_next_alloc(NULL, NULL);
	assert_int_equal(r.freed, 1);		/* the race did happen */
	/* Page 895 is free: the next 32-bit allocation must find it... */
	assert_int_equal(iopt_iova_alloc_cached(d, 1, lim, 0, false, &p), 0);
	assert_int_equal(p, 895);
	assert_int_equal(iopt_iova_free(d, p, 1), 0);
	/* ...and so must a PCI device's first try, not go above 4 GiB. */
	assert_int_equal(iopt_iova_alloc_dma(d, 1, 4095, IOPT_IOVA_DEV_PCI, 0, &p), 0);
	assert_true(p <= lim);
	iopt_iova_destroy(d);
}

/* ---- 11b, 11c: the flush-queue free checks as the cached free -------- */

static long nflush;

static void count_flush_all(void *ctx)
{
	(void)ctx;
	__atomic_fetch_add(&nflush, 1, __ATOMIC_RELAXED);
}

static uint64_t fixed_clock(void *ctx)
{
	(void)ctx;
	return 0;
}

static void test_fq_free_checks(void **state)
{
	for (int checked = 0; checked < 2; checked++) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1u << 16, .nr_cpus = 4,
					     .nr_stripes = 2,
					     .check_cached_frees = checked };
		struct iopt_fq_cfg fcfg = { .policy = IOPT_INVAL_LAZY,
					    .entries = 8, .timeout_ns = 1000,
					    .flush_all = count_flush_all,
					    .clock = fixed_clock,
					    .clock_ctx = NULL };
		struct iopt_iova *d;
		struct iopt_fq *q;
		struct iopt_fq_stats st;
		uint64_t p, big, other;

		(void)state;
		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		assert_int_equal(iopt_fq_create(d, &fcfg, &q), 0);
		assert_int_equal(iopt_fq_alloc(q, 4, 0xffff, 0, 0, &p), 0);
		assert_int_equal(iopt_fq_alloc(q, 100, 0xffff, 0, 0, &big), 0);
		/* 11c: what the cached free rejects, the queue rejects. */
		const uint64_t bad[][2] = {
			{ p + 1, 4 },		/* misaligned for its class */
			{ p + 1, 2 },
			{ 0, 1 },		/* page 0 */
			{ 1u << 16, 4 },	/* past the end */
			{ UINT64_MAX - 3, 4 },
			{ p, 0 },
			{ big + 1, 100 },	/* not an allocation */
			{ big, 99 },		/* wrong size */
			{ (1u << 16) - 50, 100 }, /* runs past the end */
		};
		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int want = iopt_iova_free_cached(d, bad[i][0], bad[i][1], 1);

			assert_int_equal(want, -EINVAL);
			assert_int_equal(iopt_fq_free(q, bad[i][0], bad[i][1], 1), want);
		}
		iopt_fq_get_stats(q, &st);
		assert_int_equal(st.held, 0);
		/* 11b: the same range freed lazily from two CPUs. Checked
		 * mode (or a size above the caches): the second is refused. */
		assert_int_equal(iopt_fq_free(q, p, 4, 0), 0);
		assert_int_equal(iopt_fq_free(q, p, 4, 1), checked ? -EINVAL : 0);
		assert_int_equal(iopt_fq_free(q, big, 100, 0), 0);
		assert_int_equal(iopt_fq_free(q, big, 100, 1), -EINVAL);
		assert_int_equal(iopt_iova_free(d, big, 100), -EINVAL);
		if (checked) {
			/* Once released, the range has one owner at a time. */
			iopt_fq_flush(q);
			assert_int_equal(iopt_fq_alloc(q, 4, 0xffff, 0, 0, &other), 0);
			assert_int_equal(other, p);	/* CPU 0's cache */
			uint64_t again;

			assert_int_equal(iopt_fq_alloc(q, 4, 0xffff, 0, 1, &again), 0);
			assert_int_not_equal(again, p);
			assert_int_equal(iopt_fq_free(q, other, 4, 0), 0);
			assert_int_equal(iopt_fq_free(q, again, 4, 1), 0);
		}
		iopt_fq_destroy(q);
		iopt_iova_destroy(d);
	}
}

/* ---- 11e: a size that is not a power of two -------------------------- */

static void test_nonpow2_run_below_limit(void **state)
{
	static const unsigned stripes[] = { 1, 2 };

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1u << 14, .nr_cpus = 2,
					     .nr_stripes = stripes[k] };
		struct iopt_iova *d;
		uint64_t p;

		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		/* Below the limit 1023 only [512, 517) is free: aligned to 8,
		 * 5 pages long; its rounded-up block [512, 520) is not. */
		assert_int_equal(iopt_iova_reserve(d, 1, 511), 0);
		assert_int_equal(iopt_iova_reserve(d, 517, 507), 0);
		assert_int_equal(iopt_iova_alloc(d, 5, 1023, &p), 0);
		assert_int_equal(p, 512);
		assert_int_equal(iopt_iova_alloc(d, 1, 1023, &p), -ENOMEM);
		assert_int_equal(iopt_iova_free(d, 512, 5), 0);
		iopt_iova_destroy(d);
		/* Near the limit: [1016, 1023) free, limit 1021; 5 pages at
		 * 1016 fit although [1016, 1024) neither is free nor fits. */
		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		assert_int_equal(iopt_iova_reserve(d, 1, 1015), 0);
		assert_int_equal(iopt_iova_reserve(d, 1023, 1), 0);
		assert_int_equal(iopt_iova_alloc(d, 5, 1021, &p), 0);
		assert_int_equal(p, 1016);
		assert_int_equal(iopt_iova_alloc(d, 2, 1021, &p), -ENOMEM);
		assert_int_equal(iopt_iova_alloc(d, 1, 1022, &p), 0);
		assert_int_equal(p, 1022);
		iopt_iova_destroy(d);
	}
}

/* ---- 11f: creating a domain does not grow with the space -------------- */

static void test_create_independent_of_space(void **state)
{
	static const unsigned lg2[] = { 30, 40, 52, 63 };
	uint64_t bytes[4];

	(void)state;
	for (unsigned k = 0; k < 4; k++) {
		/* One stripe: allocation is top-down over the whole space. */
		struct iopt_iova_cfg cfg = { .end_pfn = (1ull << lg2[k]) - 3,
					     .nr_cpus = 4, .nr_stripes = 1 };
		struct iopt_iova *d;
		struct iopt_iova_stats st;
		uint64_t p;

		fi_count_reset();
		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		bytes[k] = fi_bytes();
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.free_pages, cfg.end_pfn - 1);
		/* The whole space works: the top, a 64-bit mask, page 1. */
		assert_int_equal(iopt_iova_alloc(d, 1, UINT64_MAX, &p), 0);
		assert_int_equal(p, cfg.end_pfn - 1);
		assert_int_equal(iopt_iova_alloc(d, 8, UINT64_MAX, &p), 0);
		assert_int_equal(p, (cfg.end_pfn - 8) & ~7ull);
		assert_int_equal(iopt_iova_alloc(d, 1, 1, &p), 0);
		assert_int_equal(p, 1);
		iopt_iova_destroy(d);
		/* Memory at creation (the measure of its work: the old code
		 * filled a bitmap over every chunk of the space) grows only
		 * with the radix trees' height: 2^63 pages cost at most 3x
		 * what 2^30 pages cost. */
		print_message("create 2^%u pages: %llu bytes\n", lg2[k],
			      (unsigned long long)bytes[k]);
		assert_true(bytes[k] <= 3 * bytes[0]);
	}
}

/* Seeds per run (IOPT_PROP_SEEDS overrides): a few seconds in each
 * build; the sanitizers (and TSan's debug-yield) cost 15-100x. */
#if defined(__SANITIZE_THREAD__)
#define PROP_SEEDS 12
#define PROP_THREAD_OPS 4000
#elif defined(__SANITIZE_ADDRESS__)
#define PROP_SEEDS 60
#define PROP_THREAD_OPS 20000
#else
#define PROP_SEEDS 300
#define PROP_THREAD_OPS 40000
#endif

static long env_long(const char *name, long dflt)
{
	const char *e = getenv(name);

	return e ? atol(e) : dflt;
}

/* ---- a size above a chunk: only its pages need be free --------------- */

/*
 * Is there p aligned to 2^ceil_lg2(size), start <= p, p + size - 1 <=
 * limit (at most end - 1), with none of [p, p + size) taken? taken NULL:
 * every page of [start, end) is free. Written for any 64-bit size.
 */
static bool free_run(const uint8_t *taken, uint64_t start, uint64_t end,
		     uint64_t size, uint64_t limit)
{
	unsigned o = ceil_lg2(size);
	uint64_t align, top;

	if (limit > end - 1)
		limit = end - 1;
	if (!size || o > 63 || size > limit + 1)
		return false;
	align = 1ull << o;
	top = limit + 1 - size;			/* the highest start that fits */
	if (!taken)
		return (top & ~(align - 1)) >= start;
	for (uint64_t p = (start + align - 1) & ~(align - 1); p <= top; p += align) {
		uint64_t j = 0;

		while (j < size && !taken[p + j])
			j++;
		if (j == size)
			return true;
		if (p > top - align)
			break;
	}
	return false;
}

/* The run is free but its chunk [0x120, 0x140) is not: 53 pages at 0x100
 * fit (aligned to 64) below 0x1ff, with 0x13f taken. */
static void test_global_run_not_whole_chunks(void **state)
{
	/* 4 stripes of 32-page chunks. */
	struct iopt_iova_cfg cfg = { .end_pfn = 512, .nr_cpus = 4,
				     .nr_stripes = 4 };
	struct iopt_fq_cfg fcfg = { .policy = IOPT_INVAL_LAZY,
				    .flush_all = count_flush_all,
				    .clock = fixed_clock };
	struct iopt_iova *d;
	struct iopt_fq *q;
	struct iopt_iova_stats st;
	uint64_t p, fs, fz;

	(void)state;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	assert_int_equal(d->chunk_order, 5);
	assert_int_equal(iopt_fq_create(d, &fcfg, &q), 0);
	/* Every page taken but [0x100, 0x13f). */
	assert_int_equal(iopt_iova_reserve(d, 1, 0xff), 0);
	assert_int_equal(iopt_iova_reserve(d, 0x140, 512 - 0x140), 0);
	assert_int_equal(iopt_iova_reserve(d, 0x13f, 1), 0);
	for (int api = 0; api < 4; api++) {
		int r;

		p = 0;
		switch (api) {
		case 0:
			r = iopt_iova_alloc(d, 53, 0x1ff, &p);
			break;
		case 1:
			r = iopt_iova_alloc_cached(d, 53, 0x1ff, 0, true, &p);
			break;
		case 2:
			r = iopt_iova_alloc_dma(d, 53, 0x1ff, IOPT_IOVA_DEV_PCI, 1, &p);
			break;
		default:
			r = iopt_fq_alloc(q, 53, 0x1ff, 0, 2, &p);
			break;
		}
		assert_int_equal(r, 0);
		assert_int_equal(p, 0x100);
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.allocated_pages, 53);
		assert_int_equal(iopt_iova_find(d, 0x134, &fs, &fz), 0);
		assert_int_equal(fs, 0x100);
		assert_int_equal(fz, 53);
		/* The 10 pages after it stay free; nothing else is. */
		assert_int_equal(iopt_iova_alloc(d, 11, 0x1ff, &p), -ENOMEM);
		assert_int_equal(iopt_iova_alloc(d, 2, 0x1ff, &p), 0);
		assert_true(p >= 0x135 && p + 1 < 0x13f);
		assert_int_equal(iopt_iova_free(d, p, 2), 0);
		assert_int_equal(iopt_iova_free(d, 0x100, 53), 0);
	}
	/* 63 pages fit too; 64 (the whole block) and 65 do not. */
	assert_int_equal(iopt_iova_alloc(d, 63, 0x1ff, &p), 0);
	assert_int_equal(p, 0x100);
	assert_int_equal(iopt_iova_free(d, p, 63), 0);
	assert_int_equal(iopt_iova_alloc(d, 64, 0x1ff, &p), -ENOMEM);
	assert_int_equal(iopt_iova_alloc(d, 65, 0x1ff, &p), -ENOMEM);
	/* Below 0x133 the 53 pages do not fit. */
	assert_int_equal(iopt_iova_alloc(d, 53, 0x133, &p), -ENOMEM);
	assert_int_equal(iopt_iova_alloc(d, 53, 0x134, &p), 0);
	assert_int_equal(iopt_iova_free(d, p, 53), 0);
	iopt_iova_get_stats(d, &st);
	assert_int_equal(st.allocated_pages, 0);
	assert_int_equal(st.free_pages, 63);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

/* ---- the class: success iff a free aligned run exists --------------- */

struct bf_alloc {
	uint64_t pfn, size;
};

struct bf {
	struct iopt_iova *d;
	uint64_t start, end, chunk;
	uint8_t *taken;		/* shadow: allocated or reserved */
	struct bf_alloc *live;
	unsigned nlive;
	uint64_t rng;
};

static uint64_t bf_rand(struct bf *b, uint64_t n)
{
	return n ? tu_rand(&b->rng) % n : 0;
}

static void bf_free(struct bf *b, unsigned k)
{
	struct bf_alloc a = b->live[k];

	assert_int_equal(iopt_iova_free(b->d, a.pfn, a.size), 0);
	memset(b->taken + a.pfn, 0, a.size);
	b->live[k] = b->live[--b->nlive];
}

/* A size of every kind: powers of two and not, up to a chunk and above,
 * up to the whole space and past it. */
static uint64_t bf_size(struct bf *b)
{
	uint64_t c = b->chunk;

	switch (bf_rand(b, 6)) {
	case 0:
		return 1ull << bf_rand(b, ceil_lg2(c) + 1);	/* pow2 <= chunk */
	case 1:
		return 1 + bf_rand(b, c);			/* <= chunk */
	case 2:
		return c + 1 + bf_rand(b, 3 * c);		/* above */
	case 3:
		return (2 * c) << bf_rand(b, 3);		/* pow2 above */
	case 4:
		return 1 + bf_rand(b, b->end + 2);
	default:
		/* 2^k - 1, 2^k, 2^k + 1, alone or above a chunk */
		return (2ull << bf_rand(b, 4)) + bf_rand(b, 3) - 1 + (bf_rand(b, 2) ? c : 0);
	}
}

static uint64_t bf_limit(struct bf *b)
{
	switch (bf_rand(b, 4)) {
	case 0:
		return UINT64_MAX;
	case 1:
		return b->end - 1 - bf_rand(b, 40);
	default:
		return b->start + bf_rand(b, b->end - b->start);
	}
}

/*
 * Fragment the space at random (single pages and runs freed out of a full
 * space, reservations, allocations of every size), then for random sizes
 * and limits: iopt_iova_alloc() succeeds exactly when a brute-force search
 * of the shadow finds a free run of the size, aligned to the size rounded
 * up to a power of two, ending at or below the limit; and what it returns
 * is such a run.
 */
static void test_alloc_iff_run_exists(void **state)
{
	static const struct {
		unsigned stripes, max_cached, granule_lg2;
		uint64_t end;
	} geo[] = {
		{ 1, 0, 12, 300 },	/* one stripe, 128-page chunks */
		{ 2, 0, 12, 1000 },
		{ 4, 0, 12, 512 },	/* 32-page chunks */
		{ 8, 1, 12, 256 },	/* 8-page chunks */
		{ 8, 0, 12, 2048 + 77 },
		{ 4, 0, 22, 3000 },	/* 64-page chunks, a 32-bit limit */
		{ 2, 2, 12, 130 },
	};
	long rounds = env_long("IOPT_PROP_SEEDS", PROP_SEEDS) / 10 + 2;

	(void)state;
	for (unsigned g = 0; g < sizeof(geo) / sizeof(geo[0]); g++) {
		for (long round = 0; round < rounds; round++) {
			struct iopt_iova_cfg cfg = {
				.granule = 1ull << geo[g].granule_lg2,
				.start_pfn = 1 + (uint64_t)(round % 3),
				.end_pfn = geo[g].end, .nr_cpus = 4,
				.nr_stripes = geo[g].stripes,
				.max_cached_order = geo[g].max_cached,
			};
			struct bf b = { .start = cfg.start_pfn, .end = cfg.end_pfn,
					.rng = 0x5eed + g * 1000 + (uint64_t)round };
			uint64_t p;

			assert_int_equal(iopt_iova_create(&cfg, &b.d), 0);
			b.chunk = 1ull << b.d->chunk_order;
			b.taken = calloc(b.end, 1);
			b.live = calloc(b.end, sizeof(*b.live));
			memset(b.taken, 1, b.start);	/* below start: never */
			/* Fill the space page by page, then free a share of
			 * the pages one by one and some runs whole. */
			while (iopt_iova_alloc(b.d, 1, UINT64_MAX, &p) == 0) {
				assert_false(b.taken[p]);
				b.taken[p] = 1;
				b.live[b.nlive++] = (struct bf_alloc){ p, 1 };
			}
			assert_int_equal(b.nlive, b.end - b.start);
			uint64_t share = bf_rand(&b, 16);

			for (unsigned k = 0; k < b.nlive;) {
				if (bf_rand(&b, 16) < share)
					bf_free(&b, k);
				else
					k++;
			}
			for (unsigned r = 0, n = (unsigned)bf_rand(&b, 6); r < n; r++) {
				uint64_t x = b.start + bf_rand(&b, b.end - b.start);
				uint64_t len = 1 + bf_rand(&b, 3 * b.chunk);

				for (unsigned k = 0; k < b.nlive;) {
					if (b.live[k].pfn >= x && b.live[k].pfn < x + len)
						bf_free(&b, k);
					else
						k++;
				}
			}
			for (int op = 0; op < 400; op++) {
				uint64_t size = bf_size(&b), limit = bf_limit(&b);
				bool want;
				int ret;

				if (op % 8 == 7 && b.nlive) {
					bf_free(&b, (unsigned)bf_rand(&b, b.nlive));
					continue;
				}
				want = free_run(b.taken, b.start, b.end, size, limit);
				p = 0;
				ret = iopt_iova_alloc(b.d, size, limit, &p);
				if (ret != (want ? 0 : -ENOMEM))
					print_error("geometry %u round %ld op %d: size %llu "
						    "limit %llx: %d, brute force %d\n",
						    g, round, op, (unsigned long long)size,
						    (unsigned long long)limit, ret, want);
				assert_int_equal(ret, want ? 0 : -ENOMEM);
				if (ret)
					continue;
				assert_true(p >= b.start);
				assert_true(p + size - 1 <= limit && p + size <= b.end);
				assert_int_equal(p & ((1ull << ceil_lg2(size)) - 1), 0);
				for (uint64_t j = 0; j < size; j++)
					assert_false(b.taken[p + j]);
				if (bf_rand(&b, 3)) {
					memset(b.taken + p, 1, size);
					b.live[b.nlive++] = (struct bf_alloc){ p, size };
				} else {
					assert_int_equal(iopt_iova_free(b.d, p, size), 0);
				}
			}
			while (b.nlive)
				bf_free(&b, b.nlive - 1);
			struct iopt_iova_stats st;

			iopt_iova_get_stats(b.d, &st);
			assert_int_equal(st.allocated_pages, 0);
			assert_int_equal(st.free_pages, b.end - b.start);
			iopt_iova_destroy(b.d);
			free(b.taken);
			free(b.live);
		}
	}
}

/* ---- sizes at every boundary: a verdict, no change, no UB ------------ */

enum { EK_TREE, EK_CACHED, EK_FQ, EK_QUEUED };

struct edge_known {
	uint64_t pfn, real;	/* as recorded: cached sizes rounded up */
	int kind;		/* EK_QUEUED: waiting in the flush queue */
};

struct edge {
	struct iopt_iova *d;
	struct iopt_fq *q;
	uint64_t start, end, maxc;
	bool checked;
	uint8_t *taken;		/* shadow; NULL: nothing allocated */
	struct edge_known k[8];
	unsigned nk;
	struct iopt_iova_stats st;	/* the state every call must keep */
	uint64_t held;
	const char *what;
	uint64_t size, arg;
};

#define ECHECK(e, cond)							\
	do {								\
		if (!(cond)) {						\
			print_error("%s size %#llx arg %#llx: %s\n", (e)->what, \
				    (unsigned long long)(e)->size,	\
				    (unsigned long long)(e)->arg, #cond);	\
			fail();						\
		}							\
	} while (0)

static void edge_snap(struct edge *e)
{
	struct iopt_fq_stats fs;

	iopt_iova_get_stats(e->d, &e->st);
	iopt_fq_get_stats(e->q, &fs);
	e->held = fs.held;
}

/* Nothing changed since edge_snap(): the page accounts, the caches, the
 * queue, and every known allocation is still recorded as it was. */
static void edge_same(struct edge *e)
{
	struct iopt_iova_stats st;
	struct iopt_fq_stats fs;
	uint64_t fp, fz;

	iopt_iova_get_stats(e->d, &st);
	iopt_fq_get_stats(e->q, &fs);
	ECHECK(e, st.allocated_pages == e->st.allocated_pages);
	ECHECK(e, st.free_pages == e->st.free_pages);
	ECHECK(e, st.cached_ranges == e->st.cached_ranges);
	ECHECK(e, fs.held == e->held);
	for (unsigned i = 0; i < e->nk; i++) {
		ECHECK(e, iopt_iova_find(e->d, e->k[i].pfn, &fp, &fz) == 0);
		ECHECK(e, fp == e->k[i].pfn && fz == e->k[i].real);
	}
}

/* 0, 1, 2^k - 1, 2^k, 2^k + 1 for k up to 64, and a - 1, a, a + 1 and
 * a + 2^63 for each a of around[]. */
static unsigned edge_sizes(uint64_t *v, const uint64_t *around, unsigned na)
{
	unsigned n = 0;

	for (unsigned k = 0; k <= 64; k++) {
		uint64_t x = k < 64 ? 1ull << k : 0;	/* 2^64 wraps to 0 */

		v[n++] = x - 1;
		if (k < 64) {
			v[n++] = x;
			v[n++] = x + 1;
		}
	}
	for (unsigned i = 0; i < na; i++) {
		v[n++] = around[i] - 1;
		v[n++] = around[i];
		v[n++] = around[i] + 1;
		v[n++] = around[i] + (1ull << 63);
	}
	return n;
}

/* What a free of size at a known allocation frees, as recorded. */
static uint64_t edge_rounded(const struct edge *e, uint64_t size)
{
	return size && size <= e->maxc ? 1ull << ceil_lg2(size) : size;
}

/* The allocation entry points (the first napi of alloc, alloc_cached,
 * alloc_dma, fq_alloc), with every size and limit: -EINVAL (size 0, limit
 * below start), else 0 exactly when a run fits (then it is freed again),
 * else -ENOMEM; nothing changes. */
static void edge_allocs(struct edge *e, const uint64_t *sz, unsigned nsz,
			unsigned napi)
{
	const uint64_t limits[] = {
		0, e->start - 1, e->start, e->start + 1, e->d->limit32,
		(1ull << 40) + 3, e->end - 2, e->end - 1, e->end,
		UINT64_MAX - 1, UINT64_MAX,
	};
	static const char *names[] = { "alloc", "alloc_cached", "alloc_dma",
				       "fq_alloc" };

	for (unsigned api = 0; api < napi; api++) {
		for (unsigned li = 0; li < sizeof(limits) / sizeof(limits[0]); li++) {
			for (unsigned i = 0; i < nsz; i++) {
				uint64_t size = sz[i], lim = limits[li], p = 0;
				uint64_t real = api ? edge_rounded(e, size) : size;
				int want, r;

				e->what = names[api];
				e->size = size;
				e->arg = lim;
				if (!size || lim < e->start)
					want = -EINVAL;
				else
					want = free_run(e->taken, e->start, e->end,
							real, lim) ? 0 : -ENOMEM;
				edge_snap(e);
				switch (api) {
				case 0:
					r = iopt_iova_alloc(e->d, size, lim, &p);
					break;
				case 1:
					r = iopt_iova_alloc_cached(e->d, size, lim, 1,
								   true, &p);
					break;
				case 2:
					r = iopt_iova_alloc_dma(e->d, size, lim,
								IOPT_IOVA_DEV_PCI, 2, &p);
					break;
				default:
					r = iopt_fq_alloc(e->q, size, lim,
							  IOPT_IOVA_DEV_PCI, 3, &p);
					break;
				}
				ECHECK(e, r == want);
				if (r)
					goto same;
				ECHECK(e, p >= e->start && p - 1 + real <= lim &&
					  real <= e->end - p);
				ECHECK(e, !(p & ((1ull << ceil_lg2(real)) - 1)));
				for (uint64_t j = 0; e->taken && j < real; j++)
					ECHECK(e, !e->taken[p + j]);
				if (!api) {
					ECHECK(e, iopt_iova_free(e->d, p, size) == 0);
				} else {
					ECHECK(e, iopt_iova_free_cached(e->d, p, size, 1) == 0);
					iopt_iova_flush_caches(e->d);
				}
same:
				edge_same(e);
			}
		}
	}
}

/* Would this free of [pfn, +size) be accepted, by design? A known
 * allocation's own size (rounded as the free rounds it) unless it waits
 * in the queue marked; unchecked, any cached size at a start aligned for
 * it (the kernel's cached free). */
static bool edge_free_ok(const struct edge *e, uint64_t pfn, uint64_t size,
			 const struct edge_known *k, bool cached)
{
	uint64_t r = cached ? edge_rounded(e, size) : size;

	if (cached && !e->checked && size && size <= e->maxc &&
	    !(pfn & (r - 1)) && pfn >= e->start && pfn < e->end &&
	    r <= e->end - pfn)
		return true;
	if (!k || r != k->real)
		return false;
	/* A queued range is marked (refused) where frees are checked and
	 * for sizes above the caches. */
	return k->kind != EK_QUEUED || (!e->checked && k->real <= e->maxc);
}

/* Every freeing entry point and reservation, at known allocations, a free
 * page and outside the domain, with every size that would not be
 * accepted: -EINVAL (-EBUSY for a reservation over an allocation),
 * nothing changes. */
static void edge_frees(struct edge *e, const uint64_t *sz, unsigned nsz,
		       uint64_t free_pfn)
{
	uint64_t at[12];
	unsigned nat = 0;

	for (unsigned i = 0; i < e->nk; i++)
		at[nat++] = e->k[i].pfn;
	at[nat++] = free_pfn;
	at[nat++] = 0;
	at[nat++] = e->end;
	at[nat++] = UINT64_MAX;
	for (unsigned a = 0; a < nat; a++) {
		const struct edge_known *k = a < e->nk ? &e->k[a] : NULL;
		uint64_t pfn = at[a];

		for (unsigned i = 0; i < nsz; i++) {
			uint64_t size = sz[i];
			bool inside = size && pfn >= e->start && pfn < e->end &&
				      size <= e->end - pfn;

			e->size = size;
			e->arg = pfn;
			edge_snap(e);
			if (!edge_free_ok(e, pfn, size, k, false)) {
				e->what = "free";
				ECHECK(e, iopt_iova_free(e->d, pfn, size) == -EINVAL);
				edge_same(e);
			}
			if (!edge_free_ok(e, pfn, size, k, true)) {
				e->what = "free_cached";
				ECHECK(e, iopt_iova_free_cached(e->d, pfn, size, 1) == -EINVAL);
				edge_same(e);
				e->what = "fq_free";
				ECHECK(e, iopt_fq_free(e->q, pfn, size, 2) == -EINVAL);
				edge_same(e);
				e->what = "fq_free (other CPU)";
				ECHECK(e, iopt_fq_free(e->q, pfn, size, 99) == -EINVAL);
				edge_same(e);
			}
			if (k || !inside) {
				e->what = "reserve";
				ECHECK(e, iopt_iova_reserve(e->d, pfn, size) ==
					  (inside ? -EBUSY : -EINVAL));
				edge_same(e);
			}
		}
	}
}

static void edge_known_add(struct edge *e, uint64_t pfn, uint64_t real, int kind)
{
	e->k[e->nk++] = (struct edge_known){ pfn, real, kind };
	if (e->taken)
		memset(e->taken + pfn, 1, real);
}

/*
 * Two domains: a small one (4 MiB pages: a 32-bit limit at page 1023,
 * 128-page chunks) fragmented against a shadow, and one of 2^64 - 1
 * pages; checked and unchecked cached frees. Sizes 0, 1, 2^k - 1, 2^k,
 * 2^k + 1 up to 2^64 - 1, and around every limit, the space, the chunk
 * and each live allocation's size (and those plus 2^63), through every
 * entry point that takes a size.
 */
static void test_edge_sizes(void **state)
{
	(void)state;
	for (unsigned run = 0; run < 4; run++) {
		bool huge = run & 1;
		struct iopt_iova_cfg cfg = {
			.granule = huge ? 4096 : 1u << 22, .start_pfn = huge ? 1 : 3,
			.end_pfn = huge ? UINT64_MAX : 4096 + 123, .nr_cpus = 4,
			.nr_stripes = huge ? 4 : 2, .check_cached_frees = run & 2,
			.clock = fixed_clock,
		};
		struct iopt_fq_cfg fcfg = { .policy = IOPT_INVAL_LAZY,
					    .flush_all = count_flush_all,
					    .clock = fixed_clock };
		struct edge e = { .start = cfg.start_pfn, .end = cfg.end_pfn,
				  .checked = cfg.check_cached_frees };
		uint64_t sz[256], p, chunk, free_pfn;
		unsigned nsz;

		assert_int_equal(iopt_iova_create(&cfg, &e.d), 0);
		assert_int_equal(iopt_fq_create(e.d, &fcfg, &e.q), 0);
		e.maxc = 1ull << e.d->cfg.max_cached_order;
		chunk = 1ull << e.d->chunk_order;
		if (!huge) {
			/* Fragment: reservations and allocations, each in
			 * the shadow. */
			e.taken = calloc(e.end, 1);
			memset(e.taken, 1, e.start);
			const uint64_t res[][2] = {
				{ 3, 500 }, { 700, 3 }, { 1000, 24 },
				{ 2200, 300 }, { 4096, 60 },
			};
			for (unsigned i = 0; i < 5; i++) {
				assert_int_equal(iopt_iova_reserve(e.d, res[i][0],
								   res[i][1]), 0);
				memset(e.taken + res[i][0], 1, res[i][1]);
			}
			for (int i = 0; i < 40; i++) {
				uint64_t n = 1 + (uint64_t)i % 7, lim = 600 + (uint64_t)i * 41;

				assert_int_equal(iopt_iova_alloc(e.d, n, lim, &p), 0);
				assert_true(!e.taken[p]);
				memset(e.taken + p, 1, n);
			}
		}
		/* The allocation sweep first: in the huge domain nothing is
		 * allocated yet, so every run that fits is free. */
		const uint64_t around0[] = {
			e.start, e.d->limit32, e.d->limit32 + 1, e.end - e.start,
			e.end, chunk, (1ull << 40) + 4, e.end - 1,
		};
		nsz = edge_sizes(sz, around0, 8);
		edge_allocs(&e, sz, nsz, 4);
		/* Known allocations of every kind, low in the space (so that a
		 * size plus 2^63 still fits in the huge domain). */
		uint64_t lim = huge ? 1u << 20 : 4095;

		assert_int_equal(iopt_iova_alloc(e.d, 1, lim, &p), 0);
		edge_known_add(&e, p, 1, EK_TREE);
		assert_int_equal(iopt_iova_alloc(e.d, 5, lim, &p), 0);
		edge_known_add(&e, p, 5, EK_TREE);
		assert_int_equal(iopt_iova_alloc(e.d, 2 * chunk + 3, lim, &p), 0);
		edge_known_add(&e, p, 2 * chunk + 3, EK_TREE);
		assert_int_equal(iopt_iova_alloc_cached(e.d, 3, lim, 0, false, &p), 0);
		edge_known_add(&e, p, 4, EK_CACHED);
		assert_int_equal(iopt_fq_alloc(e.q, 40, lim, 0, 0, &p), 0);
		edge_known_add(&e, p, 40, EK_FQ);
		assert_int_equal(iopt_fq_alloc(e.q, chunk + 9, lim, 0, 0, &p), 0);
		edge_known_add(&e, p, chunk + 9, EK_QUEUED);
		assert_int_equal(iopt_fq_free(e.q, p, chunk + 9, 0), 0);
		assert_int_equal(iopt_fq_alloc(e.q, 24, lim, 0, 0, &p), 0);
		edge_known_add(&e, p, 32, EK_QUEUED);	/* rounded up */
		assert_int_equal(iopt_fq_free(e.q, p, 24, 0), 0);
		/* A free page (the top one of the huge domain, else any). */
		for (free_pfn = e.end - 1; e.taken && e.taken[free_pfn];)
			free_pfn--;
		uint64_t around[8 + 8];

		memcpy(around, around0, sizeof(around0));
		for (unsigned i = 0; i < e.nk; i++)
			around[8 + i] = e.k[i].real;
		nsz = edge_sizes(sz, around, 8 + e.nk);
		assert_true(nsz <= sizeof(sz) / sizeof(sz[0]));
		edge_frees(&e, sz, nsz, free_pfn);
		/* With them live, allocation again (the shadow knows them;
		 * the huge domain's answers assume it empty), but for
		 * iopt_fq_alloc(), whose failure would release the queue. */
		if (!huge)
			edge_allocs(&e, sz, nsz, 3);
		/* Everything back: the frees that are right still work. */
		iopt_fq_flush(e.q);
		for (unsigned i = 0; i < e.nk; i++) {
			if (e.k[i].kind == EK_TREE)
				assert_int_equal(iopt_iova_free(e.d, e.k[i].pfn,
								e.k[i].real), 0);
			else if (e.k[i].kind != EK_QUEUED)
				assert_int_equal(iopt_iova_free_cached(e.d, e.k[i].pfn,
								       e.k[i].real, 0), 0);
		}
		iopt_iova_flush_caches(e.d);
		struct iopt_iova_stats st;

		iopt_iova_get_stats(e.d, &st);
		assert_int_equal(st.cached_ranges, 0);
		if (huge) {
			assert_int_equal(st.allocated_pages, 0);
			assert_int_equal(st.free_pages, e.end - e.start);
		}
		iopt_fq_destroy(e.q);
		iopt_iova_destroy(e.d);
		free(e.taken);
	}
}

/* ---- the random property checker ------------------------------------- */

/*
 * Page states: free in the allocator; owned by the test; reserved; queued
 * for invalidation (must not be handed out); covered by a flush but maybe
 * still in a queue (may be handed out, may not be free); limbo: in a CPU
 * cache or free (a cache flush makes it free).
 */
enum { PF = 0, PO, PR, PQ, PC, PL };

struct own {
	uint64_t pfn, size, real;
	int api;		/* 0 iova_alloc, 1 cached, 2 fq */
	unsigned cpu;
};

struct pstate {
	uint64_t seed, rng, op;
	struct iopt_iova_cfg cfg;
	struct iopt_iova *d;
	struct iopt_fq *q;
	enum iopt_inval policy;
	uint64_t chunk, total;
	uint8_t *pg;
	struct own *own;
	unsigned nown;
	struct own *queued;	/* ranges in state PQ */
	unsigned nqueued;
	struct own *gone;	/* recently freed ranges, for double frees */
	unsigned ngone;
	uint64_t clock;
	uint64_t nflushes;
};

#define MAXOWN 4096

static bool trace;

#define TRACE(...)							\
	do {								\
		if (trace)						\
			fprintf(stderr, __VA_ARGS__);			\
	} while (0)

static uint64_t prand(struct pstate *s, uint64_t n)
{
	return n ? tu_rand(&s->rng) % n : 0;
}

#define PCHECK(s, cond)							\
	do {								\
		if (!(cond)) {						\
			print_error("seed %llu op %llu: %s\n",		\
				    (unsigned long long)(s)->seed,	\
				    (unsigned long long)(s)->op, #cond);	\
			fail();						\
		}							\
	} while (0)

static uint64_t pclock(void *ctx)
{
	return ((struct pstate *)ctx)->clock;
}

/* The flush covers every range queued before this moment; each ring
 * releases them when it is next visited. */
static void pflush_all(void *ctx)
{
	struct pstate *s = ctx;

	s->nflushes++;
	for (unsigned i = 0; i < s->nqueued; i++)
		for (uint64_t j = 0; j < s->queued[i].real; j++)
			if (s->pg[s->queued[i].pfn + j] == PQ)
				s->pg[s->queued[i].pfn + j] = PC;
	s->nqueued = 0;
}

/* After iopt_fq_flush(): every ring released what the flushes covered. */
static void all_released(struct pstate *s)
{
	for (uint64_t i = 0; i < s->cfg.end_pfn; i++)
		if (s->pg[i] == PC)
			s->pg[i] = PL;
}

static void pflush_range(uint64_t iova, uint64_t size, void *ctx)
{
	(void)iova;
	(void)size;
	(void)ctx;
}

static void set_pages(struct pstate *s, uint64_t pfn, uint64_t n, uint8_t v)
{
	memset(s->pg + pfn, v, n);
}

static uint64_t count_state(const struct pstate *s, uint8_t v)
{
	uint64_t n = 0;

	for (uint64_t i = s->cfg.start_pfn; i < s->cfg.end_pfn; i++)
		n += s->pg[i] == v;
	return n;
}

/* Is there p aligned to 2^ceil_lg2(size), start <= p, p + size - 1 <=
 * limit, with every page in an allowed state? */
static bool run_exists(const struct pstate *s, uint64_t size, uint64_t limit,
		       bool limbo_ok)
{
	uint64_t align = 1ull << ceil_lg2(size);

	if (limit >= s->cfg.end_pfn)
		limit = s->cfg.end_pfn - 1;
	for (uint64_t p = (s->cfg.start_pfn + align - 1) & ~(align - 1);
	     p + size - 1 <= limit; p += align) {
		uint64_t j = 0;

		while (j < size && (s->pg[p + j] == PF ||
				    (limbo_ok && s->pg[p + j] == PL)))
			j++;
		if (j == size)
			return true;
	}
	return false;
}

static void check_accounts(struct pstate *s)
{
	struct iopt_iova_stats st;
	uint64_t reserved = count_state(s, PR);

	iopt_iova_get_stats(s->d, &st);
	PCHECK(s, st.free_pages + st.allocated_pages + reserved == s->total);
	PCHECK(s, st.free_pages >= count_state(s, PF));
	PCHECK(s, st.free_pages <= count_state(s, PF) + count_state(s, PL) +
		  count_state(s, PC));
}

static void check_new_range(struct pstate *s, uint64_t p, uint64_t real,
			    uint64_t size, uint64_t limit)
{
	uint64_t align = 1ull << ceil_lg2(size);

	PCHECK(s, p >= s->cfg.start_pfn);
	PCHECK(s, p + real - 1 <= limit && p + real <= s->cfg.end_pfn);
	PCHECK(s, (p & (align - 1)) == 0);
	for (uint64_t j = 0; j < real; j++)
		PCHECK(s, s->pg[p + j] == PF || s->pg[p + j] == PL ||
			  s->pg[p + j] == PC);
}

/*
 * The range allocator is top-down within the stripe that serves it: a
 * power-of-two size up to a chunk came from the highest aligned block of
 * that stripe's chunks, at or below the limit, that is free (brute force
 * over the shadow; pages that may sit in a cache count as taken).
 */
static void check_highest(struct pstate *s, uint64_t p, uint64_t size,
			  uint64_t limit)
{
	uint64_t mask = s->cfg.nr_stripes - 1, stripe = (p / s->chunk) & mask;

	if (size & (size - 1) || size > s->chunk)
		return;
	if (limit > s->cfg.end_pfn - 1)
		limit = s->cfg.end_pfn - 1;
	for (uint64_t q = p + size; q + size - 1 <= limit; q += size) {
		uint64_t j = 0;

		if (((q / s->chunk) & mask) != stripe)
			continue;
		while (j < size && s->pg[q + j] == PF)
			j++;
		PCHECK(s, j < size);
	}
}

static uint64_t pick_limit(struct pstate *s)
{
	switch (prand(s, 4)) {
	case 0:
		return UINT64_MAX;
	case 1:
		return s->d->limit32;
	case 2:
		return s->cfg.end_pfn - 1 - prand(s, 64);
	default:
		return s->cfg.start_pfn + prand(s, s->cfg.end_pfn - s->cfg.start_pfn);
	}
}

static uint64_t pick_size(struct pstate *s)
{
	switch (prand(s, 8)) {
	case 0:
		return 1 + prand(s, s->chunk * 2);	/* some beyond a chunk */
	case 1:
	case 2:
		return 1ull << prand(s, 6);
	default:
		return 1 + prand(s, 40);
	}
}

static void remember_gone(struct pstate *s, const struct own *o)
{
	if (s->ngone < 64)
		s->gone[s->ngone++] = *o;
	else
		s->gone[prand(s, 64)] = *o;
}

static void op_alloc(struct pstate *s, bool injected)
{
	uint64_t size = pick_size(s), limit = pick_limit(s), p = 0, real;
	unsigned cpu = (unsigned)prand(s, s->cfg.nr_cpus);
	int api = (int)prand(s, 4), r;
	bool cached = size <= (1ull << s->cfg.max_cached_order);
	bool limbo_ok;

	if (s->nown >= MAXOWN)
		return;
	real = api && cached ? 1ull << ceil_lg2(size) : size;
	switch (api) {
	case 0:
		r = iopt_iova_alloc(s->d, size, limit, &p);
		limbo_ok = false;
		break;
	case 1:
		r = iopt_iova_alloc_cached(s->d, size, limit, cpu, true, &p);
		limbo_ok = true;
		break;
	case 2:
		r = iopt_iova_alloc_dma(s->d, size, limit, IOPT_IOVA_DEV_PCI, cpu, &p);
		limbo_ok = s->cfg.flush != IOPT_IOVA_FLUSH_NEVER;
		api = 1;
		break;
	default: {
		uint64_t flushes = s->nflushes;

		r = iopt_fq_alloc(s->q, size, limit, IOPT_IOVA_DEV_PCI, cpu, &p);
		if (s->nflushes != flushes)	/* it called iopt_fq_flush() */
			all_released(s);
		limbo_ok = s->cfg.flush != IOPT_IOVA_FLUSH_NEVER;
		api = 2;
		break;
	}
	}
	if (fi_fired())
		injected = true;
	TRACE("%llu alloc api %d size %llu limit %llx cpu %u -> %d %llx\n",
	      (unsigned long long)s->op, api, (unsigned long long)size,
	      (unsigned long long)limit, cpu, r, (unsigned long long)p);
	if (limit < s->cfg.start_pfn) {
		PCHECK(s, r == -EINVAL);
		return;
	}
	if (r) {
		PCHECK(s, r == -ENOMEM);
		/* No run of the rounded size (cached) or of size (not) free
		 * below the limit, unless host memory ran out. */
		if (!injected)
			PCHECK(s, !run_exists(s, real, limit, limbo_ok));
		return;
	}
	check_new_range(s, p, real, size, limit);
	if (api == 0 && !injected)
		check_highest(s, p, size, limit);
	set_pages(s, p, real, PO);
	s->own[s->nown++] = (struct own){ p, size, real, api, cpu };
	/* The allocation is what iopt_iova_find() reports. */
	uint64_t fs, fz;

	PCHECK(s, iopt_iova_find(s->d, p + prand(s, real), &fs, &fz) == 0);
	PCHECK(s, fs == p && fz == real);
}

static void op_free(struct pstate *s)
{
	if (!s->nown)
		return;
	unsigned k = (unsigned)prand(s, s->nown);
	struct own o = s->own[k];
	unsigned cpu = prand(s, 2) ? o.cpu : (unsigned)prand(s, s->cfg.nr_cpus);
	uint64_t flushes = s->nflushes;
	bool queue_free = false;
	int r;

	if (o.api == 0) {
		r = iopt_iova_free(s->d, o.pfn, o.size);
	} else if (o.api == 1 || prand(s, 4) == 0) {
		r = iopt_iova_free_cached(s->d, o.pfn, o.size, cpu);
	} else {
		r = iopt_fq_free(s->q, o.pfn, o.size, cpu);
		queue_free = true;
	}
	bool fired = fi_fired();

	TRACE("%llu free api %d %llx size %llu cpu %u queue %d -> %d\n",
	      (unsigned long long)s->op, o.api, (unsigned long long)o.pfn,
	      (unsigned long long)o.size, cpu, queue_free, r);
	if (fired && r == -ENOMEM)
		return;			/* nothing changed: still ours */
	PCHECK(s, r == 0);
	s->own[k] = s->own[--s->nown];
	if (o.api == 2 && queue_free && s->policy != IOPT_INVAL_STRICT &&
	    !(fired && s->nflushes != flushes)) {
		/* Queued: may come back only after a flush. A flush inside
		 * the call (ring full) covered only older entries. (With an
		 * injected failure, a flush in the call may instead have been
		 * the strict fallback that freed this range at once.) */
		set_pages(s, o.pfn, o.real, PQ);
		s->queued[s->nqueued++] = o;
	} else {
		set_pages(s, o.pfn, o.real, o.api == 0 ? PF : PL);
	}
	remember_gone(s, &o);
}

/* A free that must be refused: -EINVAL, nothing changes. */
static void op_bad_free(struct pstate *s)
{
	struct iopt_fq_stats before, after;
	struct own o;
	int r1, r2;

	iopt_fq_get_stats(s->q, &before);
	switch (prand(s, 3)) {
	case 0:		/* a range freed before and not re-allocated */
		if (!s->ngone)
			return;
		o = s->gone[prand(s, s->ngone)];
		/* Still free (uncached frees), or at least nobody's (the
		 * others: in a cache, a queue or the allocator). An uncached
		 * range now in a cache may be a cached allocation's: the
		 * allocator cannot tell it from a live one, as in the kernel. */
		for (uint64_t j = 0; j < o.real; j++)
			if (o.api == 0 ? s->pg[o.pfn + j] != PF :
			    s->pg[o.pfn + j] == PO || s->pg[o.pfn + j] == PR)
				return;
		TRACE("%llu bad free api %d %llx size %llu\n",
		      (unsigned long long)s->op, o.api,
		      (unsigned long long)o.pfn, (unsigned long long)o.size);
		if (o.api == 0) {
			PCHECK(s, iopt_iova_free(s->d, o.pfn, o.size) == -EINVAL);
			break;
		}
		/* Kernel semantics: unchecked cached frees are not checked. */
		if (o.real <= (1ull << s->cfg.max_cached_order) &&
		    !s->cfg.check_cached_frees)
			return;
		r1 = iopt_iova_free_cached(s->d, o.pfn, o.size, o.cpu);
		r2 = iopt_fq_free(s->q, o.pfn, o.size, o.cpu);
		PCHECK(s, r1 == -EINVAL && r2 == -EINVAL);
		break;
	case 1: {	/* misaligned for its size class */
		uint64_t size = 2ull << prand(s, s->cfg.max_cached_order);
		uint64_t pfn = (s->cfg.start_pfn + prand(s, s->total - size)) | 1;

		r1 = iopt_iova_free_cached(s->d, pfn, size, 0);
		r2 = iopt_fq_free(s->q, pfn, size, 0);
		PCHECK(s, r1 == -EINVAL && r2 == -EINVAL);
		break;
	}
	default: {	/* outside the domain */
		uint64_t pfn = prand(s, 2) ? 0 : s->cfg.end_pfn + prand(s, 100);

		PCHECK(s, iopt_iova_free(s->d, pfn, 1) == -EINVAL);
		PCHECK(s, iopt_iova_free_cached(s->d, pfn, 1, 0) == -EINVAL);
		PCHECK(s, iopt_fq_free(s->q, pfn, 1, 0) == -EINVAL);
		break;
	}
	}
	iopt_fq_get_stats(s->q, &after);
	PCHECK(s, after.held == before.held);
}

static void op_reserve(struct pstate *s, bool injected)
{
	uint64_t n = 1 + prand(s, prand(s, 4) ? 8 : s->chunk + 3);
	uint64_t pfn = s->cfg.start_pfn + prand(s, s->total);
	bool anyfree = true, anybusy = false;
	int r;

	if (n > s->cfg.end_pfn - pfn)
		n = s->cfg.end_pfn - pfn;
	for (uint64_t j = 0; j < n; j++) {
		uint8_t v = s->pg[pfn + j];

		anyfree &= v == PF;
		anybusy |= v == PO || v == PR || v == PQ;
	}
	r = iopt_iova_reserve(s->d, pfn, n);
	TRACE("%llu reserve %llx %llu -> %d\n", (unsigned long long)s->op,
	      (unsigned long long)pfn, (unsigned long long)n, r);
	if (fi_fired() || injected) {
		if (r == -ENOMEM)
			return;
	}
	if (anybusy)
		PCHECK(s, r == -EBUSY);
	else if (anyfree)
		PCHECK(s, r == 0);
	else
		PCHECK(s, r == 0 || r == -EBUSY);
	if (!r)
		set_pages(s, pfn, n, PR);
}

static void make_domain(struct pstate *s)
{
	static const uint64_t granules[] = { 4096, 1u << 20, 1u << 22 };
	struct iopt_fq_cfg f = { 0 };

	memset(&s->cfg, 0, sizeof(s->cfg));
	s->cfg.granule = granules[prand(s, 3)];
	s->cfg.start_pfn = 1 + prand(s, 5);
	s->cfg.end_pfn = (1u << (10 + prand(s, 4))) + prand(s, 1000) + 2;
	s->cfg.nr_stripes = 1u << prand(s, 3);
	s->cfg.nr_cpus = 1 + (unsigned)prand(s, 4);
	s->cfg.mag_size = 1 + (unsigned)prand(s, 6);
	s->cfg.max_cached_order = 1 + (unsigned)prand(s, 4);
	s->cfg.depot_max = 1 + (unsigned)prand(s, 3);
	s->cfg.trim_ns = 50;
	s->cfg.flush = (enum iopt_iova_flush)prand(s, 3);
	s->cfg.check_cached_frees = prand(s, 2);
	s->cfg.clock = pclock;
	s->cfg.clock_ctx = s;
	int r = iopt_iova_create(&s->cfg, &s->d);
	bool fired = fi_fired();

	if (r) {
		PCHECK(s, r == -ENOMEM && fired);	/* only an injected failure */
		s->d = NULL;
		return;
	}
	s->chunk = 1ull << s->d->chunk_order;
	TRACE("domain start %llu end %llu stripes %u cpus %u mag %u order %u "
	      "flush %d checked %d chunk %llu\n",
	      (unsigned long long)s->cfg.start_pfn,
	      (unsigned long long)s->cfg.end_pfn, s->cfg.nr_stripes,
	      s->cfg.nr_cpus, s->cfg.mag_size, s->cfg.max_cached_order,
	      (int)s->cfg.flush, (int)s->cfg.check_cached_frees,
	      (unsigned long long)s->chunk);
	s->total = s->cfg.end_pfn - s->cfg.start_pfn;
	s->policy = (enum iopt_inval)prand(s, 4);
	f.policy = s->policy;
	f.entries = 1 + (unsigned)prand(s, 8);
	f.timeout_ns = 100;
	f.flush_all = pflush_all;
	f.flush_range = pflush_range;
	f.ctx = s;
	f.clock = pclock;
	f.clock_ctx = s;
	PCHECK(s, iopt_fq_create(s->d, &f, &s->q) == 0);
}

/* Flush everything; then every limbo page is free, and freeing what we
 * own gives back the whole space, which single-page allocations take to
 * the last page. */
static void final_accounts(struct pstate *s)
{
	struct iopt_iova_stats st;
	uint64_t p, n = 0, reserved;

	iopt_fq_flush(s->q);
	all_released(s);
	iopt_iova_flush_caches(s->d);
	PCHECK(s, s->nqueued == 0 || s->policy == IOPT_INVAL_STRICT);
	iopt_iova_get_stats(s->d, &st);
	PCHECK(s, st.cached_ranges == 0);
	PCHECK(s, st.free_pages == count_state(s, PF) + count_state(s, PL));
	while (s->nown) {
		struct own o = s->own[--s->nown];

		PCHECK(s, (o.api == 0 ? iopt_iova_free(s->d, o.pfn, o.size) :
			   iopt_iova_free_cached(s->d, o.pfn, o.size, o.cpu)) == 0);
		set_pages(s, o.pfn, o.real, PF);
	}
	iopt_iova_flush_caches(s->d);
	reserved = count_state(s, PR);
	iopt_iova_get_stats(s->d, &st);
	PCHECK(s, st.allocated_pages == 0);
	PCHECK(s, st.free_pages == s->total - reserved);
	while (iopt_iova_alloc(s->d, 1, UINT64_MAX, &p) == 0) {
		PCHECK(s, p >= s->cfg.start_pfn && p < s->cfg.end_pfn);
		PCHECK(s, s->pg[p] != PR && s->pg[p] != PO);
		s->pg[p] = PO;
		n++;
	}
	PCHECK(s, n == s->total - reserved);
}

static void run_seed(uint64_t seed, int nops, bool inject)
{
	struct pstate *s = calloc(1, sizeof(*s));

	s->seed = seed;
	s->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	s->own = calloc(MAXOWN, sizeof(*s->own));
	s->queued = calloc(MAXOWN, sizeof(*s->queued));
	s->gone = calloc(64, sizeof(*s->gone));
	if (inject)
		fi_fail_nth(1 + (long)prand(s, 40));
	make_domain(s);
	fi_fired();
	if (!s->d)
		goto out;
	s->pg = calloc(s->cfg.end_pfn, 1);
	for (s->op = 0; s->op < (uint64_t)nops; s->op++) {
		bool injected = false;

		if (inject && prand(s, 6) == 0) {
			fi_fail_nth(1 + (long)prand(s, 4));
			injected = true;
		}
		switch (prand(s, 16)) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			op_alloc(s, injected);
			break;
		case 6: case 7: case 8: case 9: case 10:
			op_free(s);
			break;
		case 11:
			op_bad_free(s);
			break;
		case 12:
			op_reserve(s, injected);
			break;
		case 13:
			s->clock += prand(s, 120);
			iopt_fq_poll(s->q);
			break;
		case 14:
			if (prand(s, 4) == 0)
				iopt_iova_flush_caches(s->d);
			else
				iopt_iova_trim(s->d);
			break;
		default:
			iopt_fq_flush(s->q);
			if (!fi_fired())
				all_released(s);
			break;
		}
		fi_fired();
		check_accounts(s);
	}
	final_accounts(s);
	iopt_fq_destroy(s->q);
	iopt_iova_destroy(s->d);
out:
	free(s->pg);
	free(s->own);
	free(s->queued);
	free(s->gone);
	free(s);
}

static void test_property_random(void **state)
{
	long seeds = env_long("IOPT_PROP_SEEDS", PROP_SEEDS);
	uint64_t base = (uint64_t)env_long("IOPT_PROP_SEED", 1);

	(void)state;
	trace = getenv("IOPT_PROP_TRACE") != NULL;
	for (long i = 0; i < seeds; i++)
		run_seed(base + (uint64_t)i, 400, false);
}

static void test_property_allocfail(void **state)
{
	long seeds = env_long("IOPT_PROP_SEEDS", PROP_SEEDS);
	uint64_t base = (uint64_t)env_long("IOPT_PROP_SEED", 1) + 100000;

	(void)state;
	for (long i = 0; i < seeds; i++)
		run_seed(base + (uint64_t)i, 400, true);
}

/* ---- concurrent CPUs --------------------------------------------------- */

struct tctx {
	struct iopt_fq *q;
	struct iopt_iova *d;
	uint8_t *owner;
	uint64_t rng, limit32;
	long ops, errors;
	unsigned cpu0;
};

static void *tworker(void *arg)
{
	struct tctx *c = arg;
	uint64_t mine[64], sizes[64];
	int n = 0;

	for (long i = 0; i < c->ops; i++) {
		unsigned cpu = c->cpu0 + (unsigned)(i & 1) * 2;

		if (n && (tu_rand(&c->rng) % 2 || n == 64)) {
			int k = (int)(tu_rand(&c->rng) % (uint64_t)n);

			for (uint64_t j = 0; j < sizes[k]; j++)
				__atomic_store_n(&c->owner[mine[k] + j], 0, __ATOMIC_RELEASE);
			if (iopt_fq_free(c->q, mine[k], sizes[k], cpu))
				c->errors++;
			mine[k] = mine[--n];
			sizes[k] = sizes[n];
		} else {
			uint64_t size = 1 + tu_rand(&c->rng) % 8, p;

			if (iopt_fq_alloc(c->q, size, UINT64_MAX, IOPT_IOVA_DEV_PCI,
					  cpu, &p))
				continue;
			size = 1ull << ceil_lg2(size);
			for (uint64_t j = 0; j < size; j++)
				if (__atomic_exchange_n(&c->owner[p + j], 1, __ATOMIC_ACQ_REL))
					c->errors++;
			mine[n] = p;
			sizes[n++] = size;
		}
	}
	while (n--) {
		for (uint64_t j = 0; j < sizes[n]; j++)
			__atomic_store_n(&c->owner[mine[n] + j], 0, __ATOMIC_RELEASE);
		if (iopt_fq_free(c->q, mine[n], sizes[n], c->cpu0))
			c->errors++;
	}
	return NULL;
}

/* Two threads as four CPUs on a nearly full 32-bit space, checked frees,
 * lazy queues: no page has two owners; afterwards everything is back and
 * the 32-bit space allocates to its last page (no stale hint). */
static void test_property_threads(void **state)
{
	long ops = env_long("IOPT_STRESS_OPS", PROP_THREAD_OPS) / 2;

	(void)state;
	for (unsigned round = 0; round < 4; round++) {
		struct iopt_iova_cfg cfg = { .granule = 1u << 22, .end_pfn = 3000,
					     .nr_cpus = 4, .nr_stripes = 2,
					     .mag_size = 4, .depot_max = 2,
					     .check_cached_frees = round & 1 };
		struct iopt_fq_cfg f = { .policy = round & 2 ? IOPT_INVAL_LAZY
							     : IOPT_INVAL_SINGLE,
					 .entries = 16, .timeout_ns = ~0ull >> 1,
					 .flush_all = count_flush_all };
		struct iopt_iova *d;
		struct iopt_fq *q;
		struct iopt_iova_stats st;
		uint8_t *owner = calloc(cfg.end_pfn, 1);
		struct tctx c[2];
		struct plat_thread th[2];
		uint64_t p, n = 0;

		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		assert_int_equal(iopt_fq_create(d, &f, &q), 0);
		/* Leave 48 pages below the 32-bit limit (1023). */
		assert_int_equal(iopt_iova_reserve(d, 1, 975), 0);
		for (int i = 0; i < 2; i++) {
			c[i] = (struct tctx){ q, d, owner, 77 + round * 2 + (uint64_t)i,
					      d->limit32, ops, 0, (unsigned)i };
			TU_THREAD_START(&th[i], tworker, &c[i]);
		}
		for (int i = 0; i < 2; i++)
			plat_thread_join(&th[i]);
		for (int i = 0; i < 2; i++)
			assert_int_equal(c[i].errors, 0);
		iopt_fq_destroy(q);
		iopt_iova_flush_caches(d);
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.allocated_pages, 0);
		assert_int_equal(st.free_pages, cfg.end_pfn - 1 - 975);
		while (iopt_iova_alloc_dma(d, 1, 2999, IOPT_IOVA_DEV_PCI, 0, &p) == 0 &&
		       p <= 1023)
			n++;
		assert_int_equal(n, 1023 - 975);
		iopt_iova_destroy(d);
		free(owner);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached_alloc_respects_limit),
		cmocka_unit_test(test_fail32_hint_survives_no_racing_free),
		cmocka_unit_test(test_fq_free_checks),
		cmocka_unit_test(test_nonpow2_run_below_limit),
		cmocka_unit_test(test_create_independent_of_space),
		cmocka_unit_test(test_global_run_not_whole_chunks),
		cmocka_unit_test(test_alloc_iff_run_exists),
		cmocka_unit_test(test_edge_sizes),
		cmocka_unit_test(test_property_random),
		cmocka_unit_test(test_property_allocfail),
		cmocka_unit_test(test_property_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
