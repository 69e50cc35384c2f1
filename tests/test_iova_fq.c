/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
/*
 * Invalidation policies against a shadow IOTLB: every allocated range is
 * assumed cached by the device's TLB as soon as it is handed out, and
 * stays there after unmap until a flush covers it. The safety property —
 * no range is handed out again while the TLB may hold its old translation —
 * is checked on every allocation, single-threaded and with threads acting
 * as many CPUs. Also: ring sizes, timeouts (fake clock and timer thread),
 * flush-on-exhaustion, and bad input.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <iopgtable/iova.h>

#include "tthread.h"
#include "tutil.h"

#define SPACE (1u << 16)
#define MAXT 16

struct tlb {
	pthread_mutex_t lock;
	uint8_t stale[SPACE];	/* page may still be in the IOTLB */
	uint64_t flush_alls, flush_ranges, violations;
};

static struct tlb tlb;
static uint64_t now_ns;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return __atomic_load_n(&now_ns, __ATOMIC_RELAXED);
}

static void tlb_flush_all(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&tlb.lock);
	memset(tlb.stale, 0, sizeof(tlb.stale));
	tlb.flush_alls++;
	pthread_mutex_unlock(&tlb.lock);
}

static void tlb_flush_range(uint64_t iova, uint64_t size, void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&tlb.lock);
	memset(tlb.stale + iova / 4096, 0, size / 4096);
	tlb.flush_ranges++;
	pthread_mutex_unlock(&tlb.lock);
}

/* [pfn, pfn + size) was handed out: none of it may be stale. The device
 * maps its first 'mapped' pages and its TLB caches them at once. */
static void tlb_use(uint64_t pfn, uint64_t size, uint64_t mapped)
{
	pthread_mutex_lock(&tlb.lock);
	for (uint64_t i = 0; i < size; i++)
		if (tlb.stale[pfn + i])
			tlb.violations++;
	memset(tlb.stale + pfn, 1, mapped);
	pthread_mutex_unlock(&tlb.lock);
}

static void setup_tlb(void)
{
	pthread_mutex_init(&tlb.lock, NULL);
	memset(tlb.stale, 0, sizeof(tlb.stale));
	tlb.flush_alls = tlb.flush_ranges = tlb.violations = 0;
	now_ns = 0;
}

static struct iopt_iova *make_domain(unsigned cpus)
{
	struct iopt_iova_cfg cfg = { .end_pfn = SPACE, .nr_cpus = cpus,
				     .clock = fake_clock };
	struct iopt_iova *d;

	assert_int_equal(iopt_iova_create(&cfg, &d), 0);
	return d;
}

static struct iopt_fq *make_fq(struct iopt_iova *d, enum iopt_inval pol,
			       unsigned entries, uint64_t timeout)
{
	struct iopt_fq_cfg cfg = { .policy = pol, .entries = entries,
				   .timeout_ns = timeout,
				   .flush_all = tlb_flush_all,
				   .flush_range = tlb_flush_range,
				   .clock = fake_clock };
	struct iopt_fq *q;

	assert_int_equal(iopt_fq_create(d, &cfg, &q), 0);
	return q;
}

/* Random alloc/free through a policy; the safety property throughout. */
static void run_random(enum iopt_inval pol, unsigned entries)
{
	setup_tlb();
	struct iopt_iova *d = make_domain(4);
	struct iopt_fq *q = make_fq(d, pol, entries, 1000000);
	struct {
		uint64_t pfn, size;
	} live[4096];
	size_t n = 0;
	uint64_t rng = 5 + (uint64_t)pol, failed = 0;

	for (int op = 0; op < 30000; op++) {
		unsigned cpu = (unsigned)(tu_rand(&rng) % 4);

		now_ns += tu_rand(&rng) % 20000;
		if (n && (tu_rand(&rng) % 2 || n == 4096)) {
			size_t k = tu_rand(&rng) % n;

			assert_int_equal(iopt_fq_free(q, live[k].pfn, live[k].size, cpu),
					 0);
			live[k] = live[--n];
		} else {
			uint64_t size = 1 + tu_rand(&rng) % 32, pfn;

			if (iopt_fq_alloc(q, size, SPACE - 1, 0, cpu, &pfn)) {
				failed++;
				continue;
			}
			uint64_t sz = size;

			if (sz <= 32)	/* cached sizes are powers of two */
				while (sz & (sz - 1))
					sz++;
			tlb_use(pfn, sz, size);
			live[n].pfn = pfn;
			live[n++].size = size;
		}
		if (op % 97 == 0)
			iopt_fq_poll(q);
	}
	assert_int_equal(tlb.violations, 0);
	struct iopt_fq_stats st;

	iopt_fq_get_stats(q, &st);
	if (pol == IOPT_INVAL_STRICT)
		assert_int_equal(st.flush_ranges, st.frees);
	else
		assert_int_equal(st.flush_ranges, 0);
	print_message("  policy %d: %lu frees, %lu flush-alls, %lu flush-ranges, "
		      "%lu failed allocations\n", (int)pol, (unsigned long)st.frees,
		      (unsigned long)st.flush_alls, (unsigned long)st.flush_ranges,
		      (unsigned long)failed);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

static void test_random_all_policies(void **state)
{
	(void)state;
	run_random(IOPT_INVAL_STRICT, 0);
	run_random(IOPT_INVAL_LAZY, 0);
	run_random(IOPT_INVAL_LAZY, 16);
	run_random(IOPT_INVAL_SINGLE, 0);
	run_random(IOPT_INVAL_SINGLE, 64);
	run_random(IOPT_INVAL_EXHAUST, 0);
}

/* A full ring costs one flush-all; ranges wait for it. */
static void test_lazy_ring_and_timeout(void **state)
{
	setup_tlb();
	struct iopt_iova *d = make_domain(2);
	struct iopt_fq *q = make_fq(d, IOPT_INVAL_LAZY, 0, 0);
	struct iopt_fq_stats st;
	struct iopt_iova_stats is;
	uint64_t p[600];

	(void)state;
	setup_tlb();
	for (int i = 0; i < 600; i++)
		assert_int_equal(iopt_fq_alloc(q, 1, SPACE - 1, 0, 0, &p[i]), 0);
	for (int i = 0; i < 256; i++)
		assert_int_equal(iopt_fq_free(q, p[i], 1, 0), 0);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 0);	/* 256 fit the default ring */
	assert_int_equal(st.held, 256);
	assert_int_equal(iopt_fq_free(q, p[256], 1, 0), 0);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 1);	/* full: one flush for all */
	assert_int_equal(st.held, 1);
	/* Another CPU has its own ring. */
	assert_int_equal(iopt_fq_free(q, p[257], 1, 1), 0);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.held, 2);
	/* Timeout (10 ms default): not yet at 5 ms, flushed at 11 ms. */
	now_ns += 5000000;
	iopt_fq_poll(q);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 1);
	now_ns += 6000000;
	iopt_fq_poll(q);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 2);
	assert_int_equal(st.held, 0);
	iopt_iova_get_stats(d, &is);
	assert_int_equal(is.cached_ranges, 258);	/* back in the caches */
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

/*
 * Timeouts against a shadow of the rings: random frees on two CPUs (many
 * per ring between flushes, so that every clock-reading path of the
 * queue runs) and polls on a fake clock. The expectation is the policy's
 * rule, kept by the test: a poll at time T flushes (and releases every
 * ring) exactly when some ring's oldest held range was queued at or
 * before T - timeout. Single-threaded, every release drains a ring.
 */
static void test_lazy_timeout_shadow(void **state)
{
	const uint64_t timeout = 10000000;
	struct iopt_iova *d;
	struct iopt_fq *q;
	struct iopt_fq_stats st;
	uint64_t held[2] = { 0, 0 }, oldest[2] = { 0, 0 }, flushes = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull, most = 0;

	(void)state;
	setup_tlb();
	d = make_domain(2);
	q = make_fq(d, IOPT_INVAL_LAZY, 4096, timeout);
	for (int step = 0; step < 20000; step++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		now_ns += rng % 40000;		/* 0 to 40 us */
		if (rng % 8 == 0) {
			bool expired = false;

			for (int c = 0; c < 2; c++)
				expired |= held[c] && now_ns - oldest[c] >= timeout;
			iopt_fq_poll(q);
			if (expired) {
				flushes++;
				held[0] = held[1] = 0;
			}
		} else {
			unsigned c = (unsigned)(rng >> 32) & 1;
			uint64_t p;

			assert_int_equal(iopt_fq_alloc(q, 1, SPACE - 1, 0, c, &p), 0);
			assert_int_equal(iopt_fq_free(q, p, 1, c), 0);
			if (!held[c])
				oldest[c] = now_ns;
			held[c]++;
			most = held[c] > most ? held[c] : most;
		}
		iopt_fq_get_stats(q, &st);
		assert_int_equal(st.flush_alls, flushes);
		assert_int_equal(st.held, held[0] + held[1]);
	}
	/* Both paths ran: rings of more than 64 ranges, and many flushes. */
	assert_true(most > 3 * 64);
	assert_true(flushes > 20);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

static void test_single_queue_defaults(void **state)
{
	setup_tlb();
	struct iopt_iova *d = make_domain(4);
	struct iopt_fq *q = make_fq(d, IOPT_INVAL_SINGLE, 0, 0);
	struct iopt_fq_stats st;
	uint64_t p;

	(void)state;
	setup_tlb();
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(iopt_fq_alloc(q, 1, SPACE - 1, 0, (unsigned)i % 4, &p),
				 0);
		assert_int_equal(iopt_fq_free(q, p, 1, (unsigned)i % 4), 0);
	}
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 0);	/* 32768 entries */
	assert_int_equal(st.held, 2000);
	now_ns += 999000000;
	iopt_fq_poll(q);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 0);	/* 1000 ms */
	now_ns += 2000000;
	iopt_fq_poll(q);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.flush_alls, 1);
	assert_int_equal(st.held, 0);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

/* Flush on exhaustion: nothing until an allocation fails, then one flush
 * recycles everything. */
static void test_exhaustion(void **state)
{
	setup_tlb();
	struct iopt_iova *d = make_domain(2);
	struct iopt_fq *q = make_fq(d, IOPT_INVAL_EXHAUST, 0, 0);
	struct iopt_fq_stats st;
	uint64_t p, got = 0;

	(void)state;
	setup_tlb();
	for (unsigned i = 0; i < 3 * SPACE; i++) {
		assert_int_equal(iopt_fq_alloc(q, 1, SPACE - 1, 0, 0, &p), 0);
		tlb_use(p, 1, 1);
		assert_int_equal(iopt_fq_free(q, p, 1, 0), 0);
		got++;
	}
	iopt_fq_get_stats(q, &st);
	assert_int_equal(tlb.violations, 0);
	/* About one flush per pass over the space. */
	assert_true(st.flush_alls >= 2 && st.flush_alls <= 4);
	print_message("  exhaustion: %lu allocations, %lu flush-alls\n",
		      (unsigned long)got, (unsigned long)st.flush_alls);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

static void *wait_released(void *arg)
{
	struct iopt_fq_stats st;

	for (iopt_fq_get_stats(arg, &st); st.held; iopt_fq_get_stats(arg, &st))
		plat_sleep_ns(100000);
	return NULL;
}

static void test_bad_input_and_timer(void **state)
{
	struct iopt_iova *d = make_domain(2);
	struct iopt_fq_cfg cfg = { .policy = IOPT_INVAL_LAZY };
	struct iopt_fq *q;

	(void)state;
	assert_int_equal(iopt_fq_create(d, &cfg, &q), -EINVAL);	/* no flush_all */
	cfg.policy = IOPT_INVAL_STRICT;
	cfg.flush_all = tlb_flush_all;
	assert_int_equal(iopt_fq_create(d, &cfg, &q), -EINVAL);	/* no range op */
	cfg = (struct iopt_fq_cfg){ .policy = 9, .flush_all = tlb_flush_all };
	assert_int_equal(iopt_fq_create(d, &cfg, &q), -EINVAL);
	iopt_iova_destroy(d);

	/* The timer thread, on the host clock. */
	struct iopt_iova_cfg icfg = { .end_pfn = SPACE, .nr_cpus = 2 };

	assert_int_equal(iopt_iova_create(&icfg, &d), 0);
	cfg = (struct iopt_fq_cfg){ .policy = IOPT_INVAL_LAZY,
				    .timeout_ns = 2000000,
				    .flush_all = tlb_flush_all,
				    .timer_thread = true };
	setup_tlb();
	assert_int_equal(iopt_fq_create(d, &cfg, &q), 0);
	uint64_t p;

	assert_int_equal(iopt_fq_alloc(q, 1, SPACE - 1, 0, 0, &p), 0);
	assert_int_equal(iopt_fq_free(q, 0, 1, 0), -EINVAL);
	assert_int_equal(iopt_fq_free(q, p, 0, 0), -EINVAL);
	assert_int_equal(iopt_fq_free(q, p, 1, 0), 0);
	struct iopt_fq_stats st;

	/* The timer thread releases it once the timeout has passed on the
	 * platform clock. No deadline here: however slow the host, the wait
	 * ends when the thread has run (ctest's timeout bounds a thread that
	 * never does); the check is that it happens, not how soon. The wait
	 * is a thread of its own, so that simulated CPUs run during it. */
	struct plat_thread waiter;

	TU_THREAD_START(&waiter, wait_released, q);
	plat_thread_join(&waiter);
	iopt_fq_get_stats(q, &st);
	assert_int_equal(st.held, 0);
	assert_true(st.flush_alls >= 1);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
}

/* Threads (4, or IOPT_SIM_CPUS) acting as twice as many CPUs, lazy queues, the safety property, no range
 * handed out twice. */
struct cctx {
	struct iopt_fq *q;
	int id, n;
	long ops;
	uint8_t *owner;
	long errors;
};

static void *worker(void *arg)
{
	struct cctx *c = arg;
	uint64_t rng = 0x1234 + (uint64_t)c->id, mine[256], sizes[256];
	int n = 0;

	for (long i = 0; i < c->ops; i++) {
		unsigned cpu = (unsigned)(c->id + c->n * (int)(i & 1));

		if (n && (tu_rand(&rng) % 2 || n == 256)) {
			int k = (int)(tu_rand(&rng) % (uint64_t)n);

			for (uint64_t j = 0; j < sizes[k]; j++)
				__atomic_store_n(&c->owner[mine[k] + j], 0, __ATOMIC_RELEASE);
			if (iopt_fq_free(c->q, mine[k], sizes[k], cpu))
				c->errors++;
			mine[k] = mine[--n];
			sizes[k] = sizes[n];
		} else {
			uint64_t size = 1u << (tu_rand(&rng) % 4), p;

			if (iopt_fq_alloc(c->q, size, SPACE - 1, 0, cpu, &p))
				continue;
			tlb_use(p, size, size);
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
		iopt_fq_free(c->q, mine[n], sizes[n], (unsigned)c->id);
	}
	return NULL;
}

static void test_concurrent_cpus(void **state)
{
	static const enum iopt_inval pols[] = { IOPT_INVAL_LAZY, IOPT_INVAL_SINGLE,
						IOPT_INVAL_EXHAUST, IOPT_INVAL_STRICT };
	const char *e = getenv("IOPT_STRESS_OPS");
	long ops = e ? atol(e) / 4 : 25000;
	unsigned n = tu_threads(4, MAXT);

	(void)state;
	for (unsigned k = 0; k < 4; k++) {
		setup_tlb();
		struct iopt_iova *d = make_domain(2 * n);
		struct iopt_fq *q = make_fq(d, pols[k], 64, 0);
		uint8_t *owner = calloc(SPACE, 1);
		struct cctx c[MAXT];
		struct plat_thread th[MAXT];

		setup_tlb();
		for (unsigned i = 0; i < n; i++) {
			c[i] = (struct cctx){ q, (int)i, (int)n, ops, owner, 0 };
			TU_THREAD_START(&th[i], worker, &c[i]);
		}
		for (unsigned i = 0; i < n; i++)
			plat_thread_join(&th[i]);
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(c[i].errors, 0);
		assert_int_equal(tlb.violations, 0);
		iopt_fq_destroy(q);
		/* Everything came back: the whole space allocates again. */
		iopt_iova_flush_caches(d);
		struct iopt_iova_stats st;

		iopt_iova_get_stats(d, &st);
		assert_int_equal(st.allocated_pages, 0);
		assert_int_equal(st.free_pages, SPACE - 1);
		iopt_iova_destroy(d);
		free(owner);
	}
}

/*
 * Two CPUs, each allocating a page and freeing it lazily in turn, as the
 * DMA benchmark's threads do: every ring release spills a full magazine
 * into the depot, and the CPU that runs dry next takes one from it. A
 * range must go back to the CPU that freed it: handed to the other CPU,
 * the two CPUs' ranges end up side by side, and their page-table entries
 * in the cache lines both CPUs then write (docs/dma.md, "Two threads"). The
 * expectation: the first CPU each page was handed to, recorded here.
 */
static void test_lazy_ranges_stay_with_cpu(void **state)
{
	uint8_t *first = calloc(SPACE, 1);	/* 0: never handed out */

	(void)state;
	assert_non_null(first);
	setup_tlb();
	struct iopt_iova *d = make_domain(2);
	struct iopt_fq *q = make_fq(d, IOPT_INVAL_LAZY, 256, 0);
	unsigned crossed = 0;

	for (unsigned k = 0; k < 4000; k++) {
		for (unsigned c = 0; c < 2; c++) {
			uint64_t pfn;

			assert_int_equal(iopt_iova_alloc_cached(d, 1, SPACE - 1, c,
								true, &pfn), 0);
			assert_true(pfn < SPACE);
			if (!first[pfn])
				first[pfn] = (uint8_t)(c + 1);
			else if (first[pfn] != c + 1)
				crossed++;
			assert_int_equal(iopt_fq_free(q, pfn, 1, c), 0);
		}
	}
	assert_int_equal(crossed, 0);
	assert_true(tlb.flush_alls > 0);	/* the depot was used */
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
	free(first);
}

/*
 * The depot's other side: a CPU with none of its own magazines there
 * takes another CPU's only once the depot is at least half full (32 by
 * default: 16 magazines); before that it allocates from its own stripe.
 * 127 ranges a magazine (the default); CPU 0 frees 2 magazines' worth
 * beyond its own two, then 20 more.
 */
static void test_depot_shared_when_half_full(void **state)
{
	enum { MAG = 127 };
	static uint64_t pfns[MAG * 24];
	uint8_t *mine = calloc(SPACE, 1);	/* freed by CPU 0 */
	uint64_t pfn;

	(void)state;
	assert_non_null(mine);
	struct iopt_iova *d = make_domain(2);

	for (unsigned i = 0; i < MAG * 24; i++)
		assert_int_equal(iopt_iova_alloc_cached(d, 1, SPACE - 1, 0, true,
							&pfns[i]), 0);
	/* Two magazines fill CPU 0's loaded and spare; the third spills
	 * one into the depot (and starts a new loaded one). */
	for (unsigned i = 0; i < MAG * 3; i++) {
		assert_int_equal(iopt_iova_free_cached(d, pfns[i], 1, 0), 0);
		mine[pfns[i]] = 1;
	}
	/* One magazine of CPU 0's in the depot: CPU 1 does not take it. */
	for (unsigned i = 0; i < MAG; i++) {
		assert_int_equal(iopt_iova_alloc_cached(d, 1, SPACE - 1, 1, true,
							&pfn), 0);
		assert_false(mine[pfn]);
		assert_int_equal(iopt_iova_free_cached(d, pfn, 1, 1), 0);
	}
	/* 15 more: 16 of CPU 0's in the depot, half of depot_max. CPU 1
	 * holds one range of its own (the one it kept reusing above); once
	 * that is gone it takes CPU 0's. */
	for (unsigned i = MAG * 3; i < MAG * 18; i++) {
		assert_int_equal(iopt_iova_free_cached(d, pfns[i], 1, 0), 0);
		mine[pfns[i]] = 1;
	}
	unsigned got_mine = 0;

	for (unsigned i = 0; i < MAG * 3; i++) {
		assert_int_equal(iopt_iova_alloc_cached(d, 1, SPACE - 1, 1, true,
							&pfn), 0);
		got_mine += mine[pfn];
	}
	assert_true(got_mine > 0);
	iopt_iova_destroy(d);
	free(mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_all_policies),
		cmocka_unit_test(test_lazy_ring_and_timeout),
		cmocka_unit_test(test_lazy_timeout_shadow),
		cmocka_unit_test(test_single_queue_defaults),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_bad_input_and_timer),
		cmocka_unit_test(test_concurrent_cpus),
		cmocka_unit_test(test_lazy_ranges_stay_with_cpu),
		cmocka_unit_test(test_depot_shared_when_half_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
