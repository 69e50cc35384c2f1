/* SPDX-License-Identifier: MIT */
/*
 * Host allocation failure injected at every allocation the IOVA module
 * makes in each operation (creation, allocation, free, reservation, the
 * caches' spills, drains and trims, flush-queue creation, queueing and
 * release): the n-th allocation fails, for n = 1, 2, ... until the
 * operation completes without reaching it. A failed call returns -ENOMEM
 * (or the thread library's error for the timer thread) and changes
 * nothing: the free pages, the live ranges and what iopt_iova_find()
 * reports for every page are as before. Calls without a result (cache
 * flushes, trims, queue flushes) keep every range they could not return,
 * and return it on the next try. Leaks show under the ASan build.
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

#include "../src/iova/iova_internal.h"
#include "iova_failinj.h"
#include "tutil.h"

#define END 3000u

/* What a domain holds: stats and, per page, the allocation holding it. */
struct snap {
	struct iopt_iova_stats st;
	uint64_t start[END], size[END];
};

static void take_snap(struct iopt_iova *d, struct snap *s)
{
	iopt_iova_get_stats(d, &s->st);
	for (uint64_t p = 0; p < END; p++)
		if (iopt_iova_find(d, p, &s->start[p], &s->size[p]))
			s->start[p] = s->size[p] = UINT64_MAX;
}

static void same_snap(const struct snap *a, const struct snap *b)
{
	assert_int_equal(a->st.free_pages, b->st.free_pages);
	assert_int_equal(a->st.allocated_pages, b->st.allocated_pages);
	assert_int_equal(a->st.cached_ranges, b->st.cached_ranges);
	assert_memory_equal(a->start, b->start, sizeof(a->start));
	assert_memory_equal(a->size, b->size, sizeof(a->size));
}

/* Every stripe's node pool emptied: the next operation must allocate. */
static void drain_pools(struct iopt_iova *d)
{
	for (unsigned s = 0; s < d->cfg.nr_stripes; s++)
		fmap_pool_drain(&d->stripes[s].fmap);
}

static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

/* A fragmented domain: 2 stripes, chunks of 64 pages, small magazines,
 * mixed allocations, reserved holes, ranges in the caches. */
static struct iopt_iova *setup(uint64_t *live, uint64_t *lsize, int *nlive)
{
	struct iopt_iova_cfg cfg = { .granule = 1u << 22, .end_pfn = END,
				     .nr_cpus = 2, .nr_stripes = 4, .mag_size = 2,
				     .depot_max = 1, .max_cached_order = 3,
				     .trim_ns = 10, .clock = fake_clock,
				     .check_cached_frees = true };
	struct iopt_iova *d;
	uint64_t rng = 5, p;

	fake_now = 0;
	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	assert_int_equal(iopt_iova_reserve(d, 700, 37), 0);
	*nlive = 0;
	for (int i = 0; i < 300; i++) {
		uint64_t size = 1 + tu_rand(&rng) % 20;

		/* Below 2000: the pages above stay free. */
		if (iopt_iova_alloc(d, size, 1999 - tu_rand(&rng) % 500, &p))
			continue;
		if (tu_rand(&rng) % 3 == 0) {
			assert_int_equal(iopt_iova_free(d, p, size), 0);
			continue;
		}
		live[*nlive] = p;
		lsize[(*nlive)++] = size;
	}
	for (int i = 0; i < 12; i++) {
		assert_int_equal(iopt_iova_alloc_cached(d, 4, 1999, 0, false, &p), 0);
		assert_int_equal(iopt_iova_free_cached(d, p, 4, (unsigned)i & 1), 0);
	}
	return d;
}

enum op {
	OP_ALLOC1, OP_ALLOC5, OP_ALLOC64, OP_ALLOC_BIG, OP_FREE, OP_FREE_BIG,
	OP_RESERVE, OP_RESERVE_BIG, OP_ALLOC_CACHED, OP_FREE_CACHED_SPILL,
	OP_NR
};

static const char *const op_name[OP_NR] = {
	"alloc 1", "alloc 5", "alloc 64", "alloc 200 (global)", "free",
	"free 200 (global)", "reserve", "reserve 3 chunks", "alloc_cached",
	"free_cached spilling to the depot",
};

/* Run op on d; returns its result. The allocation it made (if any) in *p. */
static int run_op(struct iopt_iova *d, enum op op, const uint64_t *live,
		  const uint64_t *lsize, int nlive, uint64_t *p)
{
	switch (op) {
	case OP_ALLOC1:
		return iopt_iova_alloc(d, 1, END - 1, p);
	case OP_ALLOC5:
		return iopt_iova_alloc(d, 5, 2500, p);
	case OP_ALLOC64:
		return iopt_iova_alloc(d, 64, END - 1, p);
	case OP_ALLOC_BIG:
		return iopt_iova_alloc(d, 200, END - 1, p);
	case OP_FREE:
		return iopt_iova_free(d, live[nlive / 2], lsize[nlive / 2]);
	case OP_FREE_BIG: {
		int r = iopt_iova_alloc(d, 200, END - 1, p);

		if (r)
			return 99;	/* set-up failed: try the next n */
		drain_pools(d);
		return iopt_iova_free(d, *p, 200);
	}
	case OP_RESERVE:
		return iopt_iova_reserve(d, 2990, 5);
	case OP_RESERVE_BIG:
		return iopt_iova_reserve(d, 2700, 200);
	case OP_ALLOC_CACHED:
		return iopt_iova_alloc_cached(d, 2, END - 1, 1, true, p);
	case OP_FREE_CACHED_SPILL:
		/* CPU 0's class-4 magazines are full: this free spills. */
		return iopt_iova_free_cached(d, live[0], lsize[0], 0);
	default:
		return -1;
	}
}

static void test_every_operation(void **state)
{
	static uint64_t live[400], lsize[400];
	static struct snap before, after;
	int nlive;

	(void)state;
	for (int op = 0; op < OP_NR; op++) {
		long points = 0, refused = 0;

		for (long n = 1;; n++) {
			struct iopt_iova *d = setup(live, lsize, &nlive);
			uint64_t p = 0;
			int r;

			if (op == OP_FREE_CACHED_SPILL) {
				/* Make live[0] a size-4 cached range, and CPU 0's
				 * class full. */
				uint64_t q[8];

				for (int i = 0; i < 8; i++)
					assert_int_equal(iopt_iova_alloc_cached(d, 4, 1999, 1,
							 false, &q[i]), 0);
				for (int i = 0; i < 7; i++)
					assert_int_equal(iopt_iova_free_cached(d, q[i], 4, 0), 0);
				live[0] = q[7];
				lsize[0] = 4;
			}
			if (op != OP_FREE_BIG)
				drain_pools(d);
			take_snap(d, &before);
			fi_fail_nth(n);
			r = run_op(d, (enum op)op, live, lsize, nlive, &p);
			bool fired = fi_fired();

			if (r == 99) {		/* set-up hit the failure */
				iopt_iova_destroy(d);
				continue;
			}
			points += fired;
			refused += fired && r;
			if (fired && r) {
				assert_int_equal(r, -ENOMEM);
				take_snap(d, &after);
				if (op == OP_FREE_BIG || op == OP_FREE_CACHED_SPILL) {
					/* Still allocated; a spill may have moved
					 * ranges from the cache to the allocator. */
					uint64_t fs, fz, fp = op == OP_FREE_BIG ? p : live[0];

					assert_int_equal(iopt_iova_find(d, fp, &fs, &fz), 0);
					assert_int_equal(fs, fp);
					assert_int_equal(after.st.free_pages +
							 after.st.allocated_pages + 37, END - 1);
					assert_int_equal(op == OP_FREE_BIG ?
							 iopt_iova_free(d, p, 200) :
							 iopt_iova_free_cached(d, fp, 4, 0), 0);
					iopt_iova_destroy(d);
					continue;
				}
				same_snap(&before, &after);
				iopt_iova_destroy(d);
				continue;
			}
			/* Completed: with or without the failure (a failure the
			 * operation absorbed must lose nothing either). */
			assert_int_equal(r, 0);
			struct iopt_iova_stats st;

			iopt_iova_get_stats(d, &st);
			assert_int_equal(st.free_pages + st.allocated_pages +
					 (op == OP_RESERVE ? 42 :
					  op == OP_RESERVE_BIG ? 237 : 37),
					 END - 1);
			iopt_iova_destroy(d);
			if (!fired)
				break;
		}
		/* A failure in one stripe's search may be absorbed by the next
		 * stripe: refused counts the calls that returned -ENOMEM. */
		print_message("%-36s %3ld failure points, %3ld refused\n",
			      op_name[op], points, refused);
		/* Each of these needs memory once the pools are empty, but a
		 * free of at most 64 pages (its record's leaf exists). */
		if (op == OP_FREE)
			assert_int_equal(points, 0);
		else
			assert_true(points > 0);
	}
}

/* A free of more than 64 pages once the free map's node pool was drained
 * (it refills the pool to what one operation may need before changing
 * anything): refused whole, or done whole. One of at most 64 pages needs
 * no node: it succeeds with every host allocation failing. */
static void test_free_needing_nodes(void **state)
{
	(void)state;
	for (uint64_t size = 1; size <= 64; size += 9) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1u << 20, .nr_cpus = 1,
					     .nr_stripes = 1 };
		struct iopt_iova *d;
		struct iopt_iova_stats st;
		uint64_t p;

		assert_int_equal(iopt_iova_create(&cfg, &d), 0);
		assert_int_equal(iopt_iova_alloc(d, size, UINT64_MAX, &p), 0);
		drain_pools(d);
		fi_fail_nth(1);
		assert_int_equal(iopt_iova_free(d, p, size), 0);
		assert_false(fi_fired());
		fi_fail_nth(0);
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.free_pages, cfg.end_pfn - 1);
		iopt_iova_destroy(d);
	}
	for (uint64_t size = 65; size <= 75; size += 2) {
		long refused = 0;

		for (long n = 1;; n++) {
			struct iopt_iova_cfg cfg = { .end_pfn = 1u << 20, .nr_cpus = 1,
						     .nr_stripes = 1 };
			struct iopt_iova *d;
			struct iopt_iova_stats st;
			uint64_t p, fs, fz;
			int r;

			assert_int_equal(iopt_iova_create(&cfg, &d), 0);
			assert_int_equal(iopt_iova_alloc(d, size, UINT64_MAX, &p), 0);
			drain_pools(d);
			fi_fail_nth(n);
			r = iopt_iova_free(d, p, size);
			bool fired = fi_fired();

			iopt_iova_get_stats(d, &st);
			if (r) {
				assert_true(fired);
				assert_int_equal(r, -ENOMEM);
				/* Nothing changed: still allocated, all of it. */
				assert_int_equal(iopt_iova_find(d, p, &fs, &fz), 0);
				assert_int_equal(fs, p);
				assert_int_equal(fz, size);
				assert_int_equal(st.free_pages, cfg.end_pfn - 1 - size);
				assert_int_equal(iopt_iova_free(d, p, size), 0);
				iopt_iova_get_stats(d, &st);
				refused++;
			}
			assert_int_equal(st.free_pages, cfg.end_pfn - 1);
			iopt_iova_destroy(d);
			if (!fired)
				break;
		}
		assert_true(refused > 0);
	}
}

/* Flushes, trims and drains keep what they cannot return. */
static void test_drains_keep_ranges(void **state)
{
	static uint64_t live[400], lsize[400];
	int nlive;

	(void)state;
	for (long n = 1; n < 200; n++) {
		struct iopt_iova *d = setup(live, lsize, &nlive);
		struct iopt_iova_stats st;
		uint64_t livepages = 0;

		for (int i = 0; i < nlive; i++)
			livepages += lsize[i];
		drain_pools(d);
		fi_fail_nth(n);
		if (n & 1) {
			iopt_iova_flush_caches(d);
		} else {
			fake_now += 1000;
			iopt_iova_trim(d);
		}
		fi_fired();
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.free_pages + st.allocated_pages + 37, END - 1);
		/* Cached ranges are still allocated; one clean flush returns
		 * them all. */
		iopt_iova_flush_caches(d);
		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.cached_ranges, 0);
		assert_int_equal(st.allocated_pages, livepages);
		iopt_iova_destroy(d);
	}
}

/* Creation of domains and flush queues. */
static void flush_all(void *ctx)
{
	(void)ctx;
}

static void flush_range(uint64_t a, uint64_t s, void *ctx)
{
	(void)a;
	(void)s;
	(void)ctx;
}

static void test_create(void **state)
{
	static const struct iopt_iova_cfg cfgs[] = {
		{ .end_pfn = END, .nr_cpus = 3, .nr_stripes = 2 },
		{ .end_pfn = 1ull << 52, .nr_cpus = 8, .nr_stripes = 16 },
		{ .granule = 65536, .start_pfn = 77, .end_pfn = (1ull << 36) + 5,
		  .nr_cpus = 16, .max_cached_order = 6 },
	};

	(void)state;
	for (unsigned k = 0; k < 3; k++) {
		long points = 0;

		for (long n = 1;; n++) {
			struct iopt_iova *d = NULL;
			int r;

			fi_fail_nth(n);
			r = iopt_iova_create(&cfgs[k], &d);
			if (!fi_fired()) {
				assert_int_equal(r, 0);
				iopt_iova_destroy(d);
				break;
			}
			points++;
			if (r == 0) {	/* absorbed: the space must be whole */
				struct iopt_iova_stats st;

				iopt_iova_get_stats(d, &st);
				assert_int_equal(st.free_pages, cfgs[k].end_pfn -
						 (cfgs[k].start_pfn ? cfgs[k].start_pfn : 1));
				iopt_iova_destroy(d);
				continue;
			}
			assert_int_equal(r, -ENOMEM);
		}
		assert_true(points > 3);
	}
	for (int pol = IOPT_INVAL_STRICT; pol <= IOPT_INVAL_EXHAUST; pol++) {
		struct iopt_iova_cfg icfg = { .end_pfn = END, .nr_cpus = 4 };
		struct iopt_fq_cfg fcfg = { .policy = (enum iopt_inval)pol,
					    .flush_all = flush_all,
					    .flush_range = flush_range,
					    .timer_thread = true };
		struct iopt_iova *d;
		struct iopt_fq *q;

		assert_int_equal(iopt_iova_create(&icfg, &d), 0);
		for (long n = 1;; n++) {
			int r;

			fi_fail_nth(n);
			r = iopt_fq_create(d, &fcfg, &q);
			if (!fi_fired()) {
				assert_int_equal(r, 0);
				iopt_fq_destroy(q);
				break;
			}
			assert_int_equal(r, -ENOMEM);
		}
		/* The timer thread cannot start: the thread library's error,
		 * not -ENOMEM. */
		if (pol != IOPT_INVAL_STRICT && pol != IOPT_INVAL_EXHAUST) {
			fi_fail_thread(EAGAIN);
			assert_int_equal(iopt_fq_create(d, &fcfg, &q), -EAGAIN);
			fi_fail_thread(EPERM);
			assert_int_equal(iopt_fq_create(d, &fcfg, &q), -EPERM);
			fi_fail_thread(0);
		}
		iopt_iova_destroy(d);
	}
}

/* Flush queues: a free whose queue cannot grow is strict instead; a
 * release whose free cannot get memory keeps the entry for later. */
static void test_flush_queue(void **state)
{
	(void)state;
	for (int pol = IOPT_INVAL_LAZY; pol <= IOPT_INVAL_EXHAUST; pol++) {
		for (long n = 1; n < 60; n++) {
			struct iopt_iova_cfg icfg = { .end_pfn = END, .nr_cpus = 2,
						      .nr_stripes = 2, .mag_size = 1,
						      .depot_max = 1,
						      .check_cached_frees = n & 1 };
			struct iopt_fq_cfg fcfg = { .policy = (enum iopt_inval)pol,
						    .entries = 4,
						    .flush_all = flush_all,
						    .clock = fake_clock };
			struct iopt_iova *d;
			struct iopt_fq *q;
			struct iopt_iova_stats st;
			uint64_t p[40], sz[40];
			int r;

			assert_int_equal(iopt_iova_create(&icfg, &d), 0);
			assert_int_equal(iopt_fq_create(d, &fcfg, &q), 0);
			for (int i = 0; i < 40; i++) {
				sz[i] = i % 3 ? 1u << (i % 4) : 40 + (uint64_t)i;
				assert_int_equal(iopt_fq_alloc(q, sz[i], END - 1, 0,
							       (unsigned)i & 1, &p[i]), 0);
			}
			drain_pools(d);
			fi_fail_nth(n);
			for (int i = 0; i < 40; i++) {
				r = iopt_fq_free(q, p[i], sz[i], (unsigned)i & 1);
				if (r == -ENOMEM) {	/* still ours: again */
					fi_fired();
					r = iopt_fq_free(q, p[i], sz[i], (unsigned)i & 1);
				}
				assert_int_equal(r, 0);
			}
			iopt_fq_flush(q);
			fi_fired();
			/* Whatever failed stayed queued; a clean flush and a
			 * cache flush give back the whole space. */
			iopt_fq_flush(q);
			iopt_iova_flush_caches(d);
			iopt_iova_get_stats(d, &st);
			assert_int_equal(st.allocated_pages, 0);
			assert_int_equal(st.free_pages, END - 1);
			iopt_fq_destroy(q);
			iopt_iova_destroy(d);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_operation),
		cmocka_unit_test(test_free_needing_nodes),
		cmocka_unit_test(test_drains_keep_ranges),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_flush_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
