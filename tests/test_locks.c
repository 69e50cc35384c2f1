/* SPDX-License-Identifier: MIT */
/*
 * The platform locks (src/platform/plat_lock.h) under contention: for
 * every kind, threads increment a counter with a plain read and write
 * inside the lock, and the final count is exactly threads x rounds (a
 * lost update, or under ThreadSanitizer a data race, if the lock ever
 * admits two holders or its acquire/release pairing is wrong). The
 * reader-writer lock: writers keep two plain words equal, readers check
 * the pair they see is equal and count their sections exactly.
 * MCS locks are also nested two deep (the per-CPU node pool), and the
 * page table's serialised mode runs on each kind. Rounds are modest: a
 * FIFO lock handed to a descheduled thread stalls every other one until
 * it runs again, which an oversubscribed host turns into seconds. Also built
 * as test_locks_sim (simulated CPUs, seeds swept).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <iopgtable/pgtable.h>

#include "../src/platform/plat_lock.h"
#include "tthread.h"

#define MAX_THREADS 16

static unsigned rounds(void)
{
	const char *e = getenv("IOPT_STRESS_OPS");

	return e && atol(e) > 0 ? (unsigned)atol(e) : 2000;
}

struct counter {
	struct plat_lock lock, inner;
	_Alignas(64) uint64_t count;	/* plain: the lock orders it */
	uint64_t inner_count;
	unsigned rounds;
	bool nest;
};

static void *counter_thread(void *arg)
{
	struct counter *c = arg;

	for (unsigned i = 0; i < c->rounds; i++) {
		plat_lock(&c->lock);
		c->count = c->count + 1;
		if (c->nest) {
			plat_lock(&c->inner);
			c->inner_count = c->inner_count + 1;
			plat_unlock(&c->inner);
		}
		plat_unlock(&c->lock);
	}
	return NULL;
}

static void run_counter(enum plat_lock_kind kind, bool nest)
{
	static struct counter c;
	struct plat_thread t[MAX_THREADS];
	unsigned n = tu_threads(4, MAX_THREADS);

	plat_lock_init(&c.lock, kind);
	plat_lock_init(&c.inner, kind);
	c.count = 0;
	c.inner_count = 0;
	c.rounds = rounds();
	c.nest = nest;
	for (unsigned i = 0; i < n; i++)
		TU_THREAD_START(&t[i], counter_thread, &c);
	for (unsigned i = 0; i < n; i++)
		plat_thread_join(&t[i]);
	assert_int_equal(c.count, (uint64_t)n * c.rounds);
	assert_int_equal(c.inner_count, nest ? (uint64_t)n * c.rounds : 0);
}

static void test_tas(void **state)
{
	(void)state;
	run_counter(PLAT_LOCK_TAS, false);
}

static void test_ttas(void **state)
{
	(void)state;
	run_counter(PLAT_LOCK_TTAS, false);
}

static void test_ticket(void **state)
{
	(void)state;
	run_counter(PLAT_LOCK_TICKET, false);
}

static void test_mcs(void **state)
{
	(void)state;
	run_counter(PLAT_LOCK_MCS, false);
}

static void test_mcs_nested(void **state)
{
	(void)state;
	run_counter(PLAT_LOCK_MCS, true);
}

/* ---- reader-writer lock ------------------------------------------------ */

struct rw {
	struct plat_rwlock lock;
	_Alignas(64) uint64_t a, b;	/* plain: equal outside a write */
	uint64_t reads[MAX_THREADS];	/* each reader's own */
	uint64_t torn;
	unsigned rounds;
};

struct rw_arg {
	struct rw *rw;
	unsigned id;
	bool writer;
};

static void *rw_thread(void *arg)
{
	struct rw_arg *ra = arg;
	struct rw *rw = ra->rw;

	for (unsigned i = 0; i < rw->rounds; i++) {
		if (ra->writer) {
			plat_write_lock(&rw->lock);
			rw->a = rw->a + 1;
			plat_cpu_relax();	/* a window for a reader */
			rw->b = rw->b + 1;
			plat_write_unlock(&rw->lock);
		} else {
			plat_read_lock(&rw->lock);
			uint64_t a = rw->a;

			plat_cpu_relax();
			if (rw->b != a)
				plat_fetch_add_rlx64(&rw->torn, 1);
			rw->reads[ra->id]++;
			plat_read_unlock(&rw->lock);
		}
	}
	return NULL;
}

static void test_rwlock(void **state)
{
	static struct rw rw;
	struct plat_thread t[MAX_THREADS];
	struct rw_arg ra[MAX_THREADS];
	unsigned n = tu_threads(4, MAX_THREADS), writers = n > 1 ? n / 2 : 1;

	(void)state;
	plat_rwlock_init(&rw.lock);
	rw.rounds = rounds() / 4;
	for (unsigned i = 0; i < n; i++) {
		ra[i] = (struct rw_arg){ &rw, i, i < writers };
		TU_THREAD_START(&t[i], rw_thread, &ra[i]);
	}
	for (unsigned i = 0; i < n; i++)
		plat_thread_join(&t[i]);
	assert_int_equal(rw.torn, 0);
	assert_int_equal(rw.a, (uint64_t)writers * rw.rounds);
	assert_int_equal(rw.b, rw.a);
	for (unsigned i = writers; i < n; i++)
		assert_int_equal(rw.reads[i], rw.rounds);
	/* Every section left: the word is back to zero. */
	assert_int_equal(plat_load_rlx64(&rw.lock.cnts), 0);
}

/* ---- the page table's serialised mode ----------------------------------- */

struct pt_arg {
	struct iopt_pgtable *pt;
	unsigned id, rounds;
	int err;
};

/* Each thread maps and unmaps its own 4K pages: every operation takes the
 * table's lock; the translations read back must be the thread's own. */
static void *pt_thread(void *arg)
{
	struct pt_arg *a = arg;
	uint64_t iova = (uint64_t)(a->id + 1) << 30, pa = 0;

	for (unsigned i = 0; i < a->rounds && !a->err; i++) {
		uint64_t va = iova + (uint64_t)(i % 64) * 4096, mapped = 0;

		if (iopt_pgtable_map_pages(a->pt, va, va + 0x1000000000ull, 4096,
					   1, IOPT_READ, &mapped) ||
		    iopt_pgtable_iova_to_phys(a->pt, va, &pa) ||
		    pa != va + 0x1000000000ull ||
		    iopt_pgtable_unmap_pages(a->pt, va, 4096, 1, NULL) != 4096)
			a->err = 1;
	}
	return NULL;
}

static void test_pgtable_lock_kind(void **state)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .ias = 48, .oas = 48,
		.coherent_walk = true, .serialised = true,
	};
	struct iopt_pgtable *pt = NULL;
	struct plat_thread t[4];
	struct pt_arg a[4];

	(void)state;
	cfg.lock_kind = IOPT_LOCK_MCS + 1;
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), -EINVAL);
	assert_null(pt);
	for (unsigned k = IOPT_LOCK_DEFAULT; k <= IOPT_LOCK_MCS; k++) {
		cfg.lock_kind = k;
		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		for (unsigned i = 0; i < 4; i++) {
			a[i] = (struct pt_arg){ pt, i, rounds() / 8, 0 };
			TU_THREAD_START(&t[i], pt_thread, &a[i]);
		}
		for (unsigned i = 0; i < 4; i++) {
			plat_thread_join(&t[i]);
			assert_int_equal(a[i].err, 0);
		}
		iopt_pgtable_free(pt);
		pt = NULL;
	}
}

/* ---- kind selection ----------------------------------------------------- */

static void test_kind(void **state)
{
	enum plat_lock_kind k = PLAT_LOCK_TAS;

	(void)state;
	assert_int_equal(plat_lock_kind(IOPT_LOCK_DEFAULT, PLAT_LOCK_TICKET, &k), 0);
	assert_int_equal(k, PLAT_LOCK_TICKET);
	assert_int_equal(plat_lock_kind(IOPT_LOCK_MCS, PLAT_LOCK_TTAS, &k), 0);
	assert_int_equal(k, PLAT_LOCK_MCS);
	assert_int_equal(plat_lock_kind(IOPT_LOCK_MCS + 1, PLAT_LOCK_TTAS, &k),
			 -EINVAL);
	assert_int_equal(k, PLAT_LOCK_MCS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_tas),
		cmocka_unit_test(test_ttas),
		cmocka_unit_test(test_ticket),
		cmocka_unit_test(test_mcs),
		cmocka_unit_test(test_mcs_nested),
		cmocka_unit_test(test_rwlock),
		cmocka_unit_test(test_pgtable_lock_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
