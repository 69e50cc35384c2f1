/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 TLB sync serialisation under contention (the 2017 arm-smmu lock
 * removal and its revert). Many threads invalidate a page of one context
 * bank and sync it (flush_walk: TLBIVA + TLBSYNC + the reference poll
 * loop), the model free-running on host time (1 cycle per ns) with the
 * "mmu-500" preset's restart-on-write syncs and a long sync (200 us) so
 * that this 2-core host reproduces what 32+ CPUs did. The sync timeout is
 * cut to 2 ms of model time so that a starved poller reports it quickly.
 *  - sync = none: a sync written while another CPU's is active restarts
 *    it (the model counts it in sync_restarts), and a sync written just
 *    after another completed starts a new active period the status
 *    register does not tell apart; pollers that back off keep finding
 *    SACTIVE = 1 and time out: stats.sync_timeouts rises. (Which of the
 *    two keeps a poller out depends on the host's timing: under
 *    ThreadSanitizer the threads are slow enough that a timeout was seen
 *    with no restart at all, the poller sleeping through every gap
 *    between back-to-back syncs; the restarts alone, deterministically:
 *    tests/test_sim_v2_sync.c);
 *  - sync = bank / global: one sync per bank at a time, written after the
 *    previous one completed: the model sees no restart at all, and none
 *    times out.
 * The outcome is a count, not a time: no timed assertion.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(16ull << 20)
#define THREADS		16
#define SID		3

struct ctx {
	struct iopt_smmuv2_drv_domain *dom;
	uint64_t stop_ns;
	struct iopt_smmuv2_drv *drv;
	bool until_timeout;
	unsigned id;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	struct ctx *c = arg;
	const struct iopt_pgtable_tlb_ops *ops = iopt_smmuv2_drv_tlb_ops();
	struct iopt_smmuv2_drv_stats st;

	while (now_ns() < c->stop_ns) {
		ops->flush_walk(0x100000ull * (c->id + 1), 4096, 4096, c->dom);
		if (c->until_timeout) {
			iopt_smmuv2_drv_get_stats(c->drv, &st);
			if (st.sync_timeouts)
				break;
		}
	}
	return NULL;
}

static struct iopt_smmuv2_drv_stats contend(enum iopt_smmuv2_drv_sync mode,
					    uint64_t run_ns, bool until_timeout,
					    uint64_t *restarts)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2 *s;
	struct iopt_smmuv2_drv *drv;
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_smmuv2_drv_stats st;
	struct iopt_smmuv2_stats m0, m1;
	struct iopt_pgtable *pt;
	struct ctx cx[THREADS];
	pthread_t th[THREADS];

	/* The "mmu-500" model on the free-running clock, its driver. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	assert_int_equal(c.v2.sync_mode, IOPT_SMMUV2_SYNC_RESTART);
	c.v2.sync_cycles = 200000;
	c.clock = IOPT_TESTBED_CLOCK_RUNNER;
	c.drv2.sync = mode;
	c.drv2.sync_timeout_cycles = 2000000;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	pm = iopt_testbed_physmem(tb);
	s = iopt_testbed_smmuv2(tb);
	drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(drv, 1, &dom), 0);
	struct iopt_pgtable_cfg pc = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48, .oas = 40,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = dom, .mem = iopt_physmem_mem_ops(), .mem_ctx = pm,
	};

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, SID), 0);
	iopt_smmuv2_get_stats(s, &m0);
	uint64_t stop = now_ns() + run_ns;

	for (unsigned i = 0; i < THREADS; i++) {
		cx[i] = (struct ctx){ .dom = dom, .stop_ns = stop, .drv = drv,
				      .until_timeout = until_timeout, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, worker, &cx[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	iopt_smmuv2_drv_get_stats(drv, &st);
	iopt_smmuv2_get_stats(s, &m1);
	*restarts = m1.sync_restarts - m0.sync_restarts;
	assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
	iopt_smmuv2_drv_domain_free(dom);
	iopt_pgtable_free(pt);
	iopt_testbed_destroy(tb);
	print_message("sync=%d: %llu syncs, %llu restarts, %llu timeouts\n",
		      (int)mode, (unsigned long long)st.syncs,
		      (unsigned long long)*restarts,
		      (unsigned long long)st.sync_timeouts);
	return st;
}

static void test_none_times_out(void **state)
{
	(void)state;
	uint64_t restarts;
	/* Until the first timeout, at most 20 s of host time. */
	struct iopt_smmuv2_drv_stats st =
		contend(IOPT_SMMUV2_DRV_SYNC_NONE, 20000000000ull, true,
			&restarts);

	assert_true(st.sync_timeouts > 0);
	(void)restarts;		/* printed: restarts or back-to-back syncs */
}

static void test_bank_no_timeout(void **state)
{
	(void)state;
	uint64_t restarts;
	struct iopt_smmuv2_drv_stats st =
		contend(IOPT_SMMUV2_DRV_SYNC_BANK, 300000000ull, false,
			&restarts);

	assert_true(st.syncs > THREADS);
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(restarts, 0);
}

static void test_global_no_timeout(void **state)
{
	(void)state;
	uint64_t restarts;
	struct iopt_smmuv2_drv_stats st =
		contend(IOPT_SMMUV2_DRV_SYNC_GLOBAL, 300000000ull, false,
			&restarts);

	assert_true(st.syncs > THREADS);
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(restarts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_times_out),
		cmocka_unit_test(test_bank_no_timeout),
		cmocka_unit_test(test_global_no_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
