/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 TLB sync serialisation on simulated CPUs, with the "mmu-500"
 * model at its own timing (8-cycle syncs, restart on write) attached to
 * the simulation and the driver on the simulation's clock, as
 * `iopt-bench dma --sim N --smmu v2` runs it.
 *
 * 32 simulated CPUs each invalidate a page of one context bank and sync
 * it (flush_walk: TLBIVA + TLBSYNC + the reference poll loop), 40 times.
 * The expectation comes from the model's documented sync rule (a TLBSYNC
 * written while the bank's sync is active restarts it, counted in its
 * sync_restarts) and from what each serialisation allows:
 *  - none: nothing keeps one CPU's TLBSYNC from reaching the bank while
 *    another's is active, so with 32 CPUs some do: sync_restarts > 0 —
 *    the mechanism behind the published timeouts. A driver that
 *    serialises its register accesses (one lock around every model call)
 *    spaces the writes further apart than the 8-cycle sync and gets none;
 *  - bank, global: one TLBSYNC per bank at a time, written only after
 *    the previous one completed: sync_restarts == 0 exactly, and no
 *    timeout.
 * Every sync is counted (32 x 40 by the driver and by the model).
 *
 * Will Deacon's first case, on one simulated CPU: a thread's sync is
 * interrupted mid-poll by a handler that invalidates and syncs the same
 * bank. Without a sync lock the poll runs with interrupts on: the handler
 * runs inside it (nested_syncs 1), its TLBSYNC restarts the active sync
 * (sync_restarts 1), it polls that to completion, and the interrupted
 * poll then reads the sync done: no timeout, as the backoff loop bounds
 * its bursts by count, not by time. With the bank lock (irqsave) the
 * handler waits for the poll's end: no nesting, no restart.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/sim.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(16ull << 20)
#define CPUS		32
#define ROUNDS		40
#define SID		3

struct run {
	struct iopt_smmuv2_drv_domain *dom;
};

static void cpu_main(unsigned cpu, void *arg)
{
	struct run *r = arg;
	const struct iopt_pgtable_tlb_ops *ops = iopt_smmuv2_drv_tlb_ops();

	for (unsigned i = 0; i < ROUNDS; i++)
		ops->flush_walk(0x100000ull * (cpu + 1), 4096, 4096, r->dom);
}

static void contend(enum iopt_smmuv2_drv_sync mode,
		    struct iopt_smmuv2_drv_stats *dst,
		    struct iopt_smmuv2_stats *mst)
{
	struct iopt_sim_params sp;
	struct iopt_sim *sim;
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2 *s;
	struct iopt_smmuv2_drv *drv;
	struct iopt_pgtable *pt;
	struct iopt_smmuv2_stats m0;
	struct run r;

	iopt_sim_params_default(&sp);
	sp.cpus = CPUS;
	sp.seed = 1;
	assert_int_equal(iopt_sim_create(&sp, &sim), 0);
	/* The "mmu-500" model on the simulation's timeline, its driver. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	assert_int_equal(c.v2.sync_mode, IOPT_SMMUV2_SYNC_RESTART);
	c.clock = IOPT_TESTBED_CLOCK_SIM;	/* sets shared_clock */
	c.sim = sim;
	c.drv2.sync = mode;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	pm = iopt_testbed_physmem(tb);
	s = iopt_testbed_smmuv2(tb);
	drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(drv, 1, &r.dom), 0);
	struct iopt_pgtable_cfg pc = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48, .oas = 40,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = r.dom, .mem = iopt_physmem_mem_ops(), .mem_ctx = pm,
	};

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(r.dom, pt, SID), 0);
	iopt_smmuv2_get_stats(s, &m0);
	iopt_smmuv2_drv_get_stats(drv, dst);
	uint64_t d0 = dst->syncs;

	assert_int_equal(iopt_sim_run(sim, cpu_main, &r), 0);
	iopt_smmuv2_drv_get_stats(drv, dst);
	iopt_smmuv2_get_stats(s, mst);
	dst->syncs -= d0;
	mst->syncs -= m0.syncs;
	mst->sync_restarts -= m0.sync_restarts;
	print_message("sync=%d: %llu syncs, %llu restarts, %llu timeouts\n",
		      (int)mode, (unsigned long long)dst->syncs,
		      (unsigned long long)mst->sync_restarts,
		      (unsigned long long)dst->sync_timeouts);
	assert_int_equal(iopt_smmuv2_drv_detach(r.dom, SID), 0);
	iopt_smmuv2_drv_domain_free(r.dom);
	iopt_pgtable_free(pt);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(sim);
}

static void test_none_restarts(void **state)
{
	struct iopt_smmuv2_drv_stats d;
	struct iopt_smmuv2_stats m;

	(void)state;
	contend(IOPT_SMMUV2_DRV_SYNC_NONE, &d, &m);
	assert_int_equal(d.syncs, CPUS * ROUNDS);
	assert_int_equal(m.syncs, CPUS * ROUNDS);
	assert_true(m.sync_restarts > 0);
}

static void serialised(enum iopt_smmuv2_drv_sync mode)
{
	struct iopt_smmuv2_drv_stats d;
	struct iopt_smmuv2_stats m;

	contend(mode, &d, &m);
	assert_int_equal(d.syncs, CPUS * ROUNDS);
	assert_int_equal(m.syncs, CPUS * ROUNDS);
	assert_int_equal(m.sync_restarts, 0);
	assert_int_equal(d.sync_timeouts, 0);
}

static void test_bank_no_restart(void **state)
{
	(void)state;
	serialised(IOPT_SMMUV2_DRV_SYNC_BANK);
}

static void test_global_no_restart(void **state)
{
	(void)state;
	serialised(IOPT_SMMUV2_DRV_SYNC_GLOBAL);
}

/* Will Deacon's first case (above). */
#define NEST_SYNC	200000		/* model cycles: a 200 us sync */
#define NEST_IRQ_AFTER	30000		/* CPU cycles after the thread's start */

struct nest {
	struct iopt_sim *sim;
	struct iopt_smmuv2_drv_domain *dom;
	unsigned irqs;
};

static void nest_irq(unsigned cpu, void *arg)
{
	struct nest *n = arg;

	(void)cpu;
	n->irqs++;
	iopt_smmuv2_drv_tlb_ops()->flush_walk(0x200000ull, 4096, 4096, n->dom);
}

static void nest_main(unsigned cpu, void *arg)
{
	struct nest *n = arg;

	assert_int_equal(iopt_sim_irq_at(n->sim, cpu, iopt_sim_now() +
					 NEST_IRQ_AFTER, nest_irq, n), 0);
	iopt_smmuv2_drv_tlb_ops()->flush_walk(0x100000ull, 4096, 4096, n->dom);
}

static void nested(enum iopt_smmuv2_drv_sync mode, uint64_t want_nested,
		   uint64_t want_restarts)
{
	struct iopt_smmuv2_drv_stats d0, d;
	struct iopt_smmuv2_stats m0, m;
	struct iopt_sim_params sp;
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv2_drv *drv;
	struct iopt_pgtable *pt;
	struct nest n = { .irqs = 0 };

	iopt_sim_params_default(&sp);
	sp.cpus = 1;
	sp.seed = 1;
	assert_int_equal(iopt_sim_create(&sp, &n.sim), 0);
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	c.v2.sync_cycles = NEST_SYNC;
	c.clock = IOPT_TESTBED_CLOCK_SIM;
	c.sim = n.sim;
	c.drv2.sync = mode;
	c.drv2.count_nested = true;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(drv, 1, &n.dom), 0);
	struct iopt_pgtable_cfg pc = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48, .oas = 40,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = n.dom, .mem = iopt_physmem_mem_ops(),
		.mem_ctx = iopt_testbed_physmem(tb),
	};

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(n.dom, pt, SID), 0);
	iopt_smmuv2_drv_get_stats(drv, &d0);
	iopt_smmuv2_get_stats(iopt_testbed_smmuv2(tb), &m0);
	assert_int_equal(iopt_sim_run(n.sim, nest_main, &n), 0);
	iopt_smmuv2_drv_get_stats(drv, &d);
	iopt_smmuv2_get_stats(iopt_testbed_smmuv2(tb), &m);
	assert_int_equal(n.irqs, 1);
	assert_int_equal(d.syncs - d0.syncs, 2);
	assert_int_equal(d.sync_timeouts - d0.sync_timeouts, 0);
	assert_int_equal(d.nested_syncs - d0.nested_syncs, want_nested);
	assert_int_equal(m.sync_restarts - m0.sync_restarts, want_restarts);
	assert_int_equal(iopt_smmuv2_drv_detach(n.dom, SID), 0);
	iopt_smmuv2_drv_domain_free(n.dom);
	iopt_pgtable_free(pt);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(n.sim);
}

static void test_irq_sync_in_poll(void **state)
{
	(void)state;
	nested(IOPT_SMMUV2_DRV_SYNC_NONE, 1, 1);
	nested(IOPT_SMMUV2_DRV_SYNC_BANK, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_restarts),
		cmocka_unit_test(test_bank_no_restart),
		cmocka_unit_test(test_global_no_restart),
		cmocka_unit_test(test_irq_sync_in_poll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
