/* SPDX-License-Identifier: MIT */
/*
 * The platform locks' handoff order and cache traffic on the
 * deterministic simulation (src/platform/plat_lock.h, docs/sim.md
 * "Locks"), each against what the algorithm promises, not a time:
 *   - FIFO: CPU 0 holds the lock while CPUs 1..4 arrive 10000 cycles
 *     apart (far more than any lock operation costs, so their arrivals
 *     are ordered); ticket and MCS grant it in arrival order.
 *   - unfairness (fixed seed): under TAS and TTAS a later arrival of the
 *     FIFO case takes the lock before an earlier one; CPU 0 releasing
 *     and asking again at once while CPU 1 waits retakes a TTAS lock
 *     before CPU 1, where ticket and MCS hand it to CPU 1. (Under TAS
 *     the waiter's own exchanges keep pulling the line, so there the
 *     releaser does not retake it first in this run.)
 *   - MCS traffic: each acquisition touches the lock word's line with at
 *     most two accesses that can move it (the arrival's exchange, the
 *     release's compare-and-swap), so it moves at most twice per
 *     acquisition; the ticket lock's waiters all read the word, so its
 *     line moves about once per waiter per handoff, more than that bound.
 *   - the SMMUv2 driver's lock_kind reaches its bank and global locks,
 *     and under sync = bank every kind keeps TLBSYNCs one at a time (the
 *     model's restart count stays 0); a kind out of range is -EINVAL.
 *   - the SMMUv3 driver's lock_kind reaches the locked command queue's
 *     lock, and every kind completes every CPU's CMD_SYNCs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/sim.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/testbed.h>

#include "../src/platform/plat_lock.h"
#include "../src/driver/smmuv2_drv_internal.h"
#include "../src/driver/smmuv3_drv_internal.h"

#define MAX_ORDER 256

struct order {
	_Alignas(64) struct plat_lock lock;	/* a line of its own */
	_Alignas(64) uint64_t n;		/* plain: under the lock */
	unsigned who[MAX_ORDER];
	unsigned rounds0;			/* CPU 0's acquisitions */
	uint64_t hold;				/* cycles each is held */
	uint64_t gap;				/* arrival spacing */
};

static struct iopt_sim *mk(unsigned cpus, uint64_t seed)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = seed;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	return s;
}

static void take(struct order *o, unsigned cpu)
{
	plat_lock(&o->lock);
	if (o->n < MAX_ORDER)
		o->who[o->n] = cpu;
	o->n++;
	iopt_sim_work(o->hold);
	plat_unlock(&o->lock);
}

/* CPU 0 takes the lock rounds0 times back to back from cycle 0; CPU i > 0
 * arrives once, at i * gap. */
static void order_cpu(unsigned cpu, void *arg)
{
	struct order *o = arg;

	if (cpu == 0) {
		for (unsigned i = 0; i < o->rounds0; i++)
			take(o, 0);
		return;
	}
	iopt_sim_work(cpu * o->gap);
	take(o, cpu);
}

static struct order *run_order(enum plat_lock_kind kind, unsigned cpus,
			       unsigned rounds0, uint64_t hold, uint64_t gap)
{
	struct order *o = aligned_alloc(64, sizeof(*o));
	struct iopt_sim *s = mk(cpus, 11);

	memset(o, 0, sizeof(*o));
	plat_lock_init(&o->lock, kind);
	o->rounds0 = rounds0;
	o->hold = hold;
	o->gap = gap;
	assert_int_equal(iopt_sim_run(s, order_cpu, o), 0);
	iopt_sim_destroy(s);
	assert_int_equal(o->n, rounds0 + cpus - 1);
	return o;
}

/* One hold of 100000 cycles by CPU 0; CPUs 1-4 arrive at 10000, 20000,
 * 30000, 40000, all while it is held. */
static void check_fifo(enum plat_lock_kind kind)
{
	struct order *o = run_order(kind, 5, 1, 100000, 10000);

	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(o->who[i], i);
	free(o);
}

static void test_fifo_ticket(void **state)
{
	(void)state;
	check_fifo(PLAT_LOCK_TICKET);
}

static void test_fifo_mcs(void **state)
{
	(void)state;
	check_fifo(PLAT_LOCK_MCS);
}

/* CPU 0 takes the lock 4 times back to back, each held 20000 cycles; CPU
 * 1 arrives at 1000, during the first. Which CPU takes it second? */
static unsigned second_holder(enum plat_lock_kind kind)
{
	struct order *o = run_order(kind, 2, 4, 20000, 1000);
	unsigned who = o->who[1];

	assert_int_equal(o->who[0], 0);
	free(o);
	return who;
}

/* The FIFO case's arrivals under a lock with no queue: the order in which
 * CPUs 1-4 take it. */
static bool arrival_order(enum plat_lock_kind kind)
{
	struct order *o = run_order(kind, 5, 1, 100000, 10000);
	bool fifo = true;

	for (unsigned i = 0; i < 5; i++)
		fifo = fifo && o->who[i] == i;
	free(o);
	return fifo;
}

static void test_unfair_tas(void **state)
{
	(void)state;
	assert_false(arrival_order(PLAT_LOCK_TAS));
}

static void test_unfair_ttas(void **state)
{
	(void)state;
	assert_int_equal(second_holder(PLAT_LOCK_TTAS), 0);
	assert_false(arrival_order(PLAT_LOCK_TTAS));
}

static void test_fair_ticket(void **state)
{
	(void)state;
	assert_int_equal(second_holder(PLAT_LOCK_TICKET), 1);
}

static void test_fair_mcs(void **state)
{
	(void)state;
	assert_int_equal(second_holder(PLAT_LOCK_MCS), 1);
}

/* ---- the lock word's line under MCS and ticket -------------------------- */

struct hammer {
	_Alignas(64) struct plat_lock lock;
	_Alignas(64) uint64_t count;
	unsigned rounds;
};

static void hammer_cpu(unsigned cpu, void *arg)
{
	struct hammer *h = arg;

	for (unsigned i = 0; i < h->rounds; i++) {
		plat_lock(&h->lock);
		h->count++;
		iopt_sim_work(200 + cpu);
		plat_unlock(&h->lock);
		iopt_sim_work(50);
	}
}

/* Transfers of the lock's line over a run of 8 CPUs x 50 acquisitions; a
 * line not among the hottest moved at most as often as the least hot
 * listed. */
static uint64_t lock_line_transfers(enum plat_lock_kind kind, uint64_t *acq)
{
	struct hammer *h = aligned_alloc(64, sizeof(*h));
	struct iopt_sim *s = mk(8, 3);
	struct iopt_sim_stats st;
	uint64_t got = UINT64_MAX;
	unsigned k;

	memset(h, 0, sizeof(*h));
	plat_lock_init(&h->lock, kind);
	h->rounds = 50;
	assert_int_equal(iopt_sim_run(s, hammer_cpu, h), 0);
	assert_int_equal(h->count, 8 * 50);
	*acq = h->count;
	iopt_sim_stats(s, &st);
	for (k = 0; k < 8 && st.hot[k].line; k++)
		if (st.hot[k].line == (uintptr_t)&h->lock)
			got = st.hot[k].transfers;
	if (got == UINT64_MAX)
		got = k ? st.hot[k - 1].transfers : 0;
	iopt_sim_destroy(s);
	free(h);
	return got;
}

static void test_mcs_lock_line(void **state)
{
	uint64_t acq, mcs, ticket;

	(void)state;
	mcs = lock_line_transfers(PLAT_LOCK_MCS, &acq);
	assert_true(mcs <= 2 * acq);
	/* The bound is not slack: the ticket lock's spinners exceed it. */
	ticket = lock_line_transfers(PLAT_LOCK_TICKET, &acq);
	print_message("lock line transfers over %llu acquisitions: mcs %llu, "
		      "ticket %llu\n", (unsigned long long)acq,
		      (unsigned long long)mcs, (unsigned long long)ticket);
	assert_true(ticket > 2 * acq);
}

/* ---- the drivers' locks, by kind ------------------------------------------ */

/* Each lock_kind value and the lock it must give (0: the drivers' own). */
static const struct {
	unsigned kind;
	enum plat_lock_kind want;
} drv_kinds[] = {
	{ IOPT_LOCK_DEFAULT, PLAT_LOCK_TTAS }, { IOPT_LOCK_TAS, PLAT_LOCK_TAS },
	{ IOPT_LOCK_TICKET, PLAT_LOCK_TICKET }, { IOPT_LOCK_MCS, PLAT_LOCK_MCS },
};

#define V2_CPUS 8
#define V2_ROUNDS 20

static void v2_cpu(unsigned cpu, void *arg)
{
	const struct iopt_pgtable_tlb_ops *ops = iopt_smmuv2_drv_tlb_ops();

	for (unsigned i = 0; i < V2_ROUNDS; i++)
		ops->flush_walk(0x100000ull * (cpu + 1), 4096, 4096, arg);
}

/* The "mmu-500" model (a TLBSYNC written while one is active restarts it)
 * on the simulation's timeline, sync = bank, the lock of the given kind:
 * whatever the kind, one TLBSYNC at a time, so no restart and every sync
 * counted (tests/test_sim_v2_sync.c for the modes). */
static void v2_bank(unsigned lock_kind, enum plat_lock_kind want)
{
	struct iopt_sim *sim = mk(V2_CPUS, 5);
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv2_drv *drv;
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_smmuv2_drv_stats d;
	struct iopt_smmuv2_stats m0, m;
	struct iopt_pgtable *pt;

	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_base = 0x80000000ull;
	c.mem_size = 16ull << 20;
	c.clock = IOPT_TESTBED_CLOCK_SIM;
	c.sim = sim;
	c.drv2.sync = IOPT_SMMUV2_DRV_SYNC_BANK;
	c.drv2.lock_kind = lock_kind;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(drv, 1, &dom), 0);
	/* The option reaches the locks it names. */
	assert_int_equal(dom->lock.kind, want);
	assert_int_equal(drv->global_sync.kind, want);
	struct iopt_pgtable_cfg pc = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48, .oas = 40,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = dom, .mem = iopt_physmem_mem_ops(),
		.mem_ctx = iopt_testbed_physmem(tb),
	};

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, 3), 0);
	iopt_smmuv2_get_stats(iopt_testbed_smmuv2(tb), &m0);
	iopt_smmuv2_drv_get_stats(drv, &d);
	uint64_t d0 = d.syncs;

	assert_int_equal(iopt_sim_run(sim, v2_cpu, dom), 0);
	iopt_smmuv2_drv_get_stats(drv, &d);
	iopt_smmuv2_get_stats(iopt_testbed_smmuv2(tb), &m);
	assert_int_equal(d.syncs - d0, V2_CPUS * V2_ROUNDS);
	assert_int_equal(m.syncs - m0.syncs, V2_CPUS * V2_ROUNDS);
	assert_int_equal(m.sync_restarts - m0.sync_restarts, 0);
	assert_int_equal(d.sync_timeouts, 0);
	assert_int_equal(iopt_smmuv2_drv_detach(dom, 3), 0);
	iopt_smmuv2_drv_domain_free(dom);
	iopt_pgtable_free(pt);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(sim);
}

static void test_v2_bank_kinds(void **state)
{
	struct iopt_smmuv2_drv_cfg cfg;
	struct iopt_smmuv2_drv *drv = NULL;

	(void)state;
	for (unsigned i = 0; i < sizeof(drv_kinds) / sizeof(drv_kinds[0]); i++)
		v2_bank(drv_kinds[i].kind, drv_kinds[i].want);
	/* A kind beyond the enumeration: refused before the model is read. */
	iopt_smmuv2_drv_default_cfg(&cfg);
	cfg.smmu = (struct iopt_smmuv2 *)&cfg;	/* never dereferenced */
	cfg.lock_kind = IOPT_LOCK_MCS + 1;
	assert_int_equal(iopt_smmuv2_drv_probe(&cfg, &drv), -EINVAL);
	assert_null(drv);
}

/* The SMMUv3 driver's locked command queue. */

struct v3_run {
	struct iopt_smmuv3_drv *drv;
	unsigned err[V2_CPUS];		/* each CPU's own */
};

static void v3_cpu(unsigned cpu, void *arg)
{
	struct v3_run *r = arg;

	for (unsigned i = 0; i < V2_ROUNDS; i++)
		if (iopt_smmuv3_drv_sync(r->drv))
			r->err[cpu]++;
}

/* The locked queue on the simulation's clock with the given lock: every
 * CPU's CMD_SYNCs inserted and completed, none lost or timed out. */
static void v3_locked(unsigned lock_kind, enum plat_lock_kind want)
{
	struct iopt_sim *sim = mk(V2_CPUS, 5);
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv3_drv_stats d0, d;
	struct v3_run r;

	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.mem_base = 0x80000000ull;
	c.mem_size = 16ull << 20;
	c.clock = IOPT_TESTBED_CLOCK_SIM;
	c.sim = sim;
	c.drv3.cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKED;
	c.drv3.lock_kind = lock_kind;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	memset(&r, 0, sizeof(r));
	r.drv = iopt_testbed_smmuv3_drv(tb);
	assert_int_equal(r.drv->cmdq.ins_lock.kind, want);
	iopt_smmuv3_drv_get_stats(r.drv, &d0);
	assert_int_equal(iopt_sim_run(sim, v3_cpu, &r), 0);
	iopt_smmuv3_drv_get_stats(r.drv, &d);
	for (unsigned i = 0; i < V2_CPUS; i++)
		assert_int_equal(r.err[i], 0);
	assert_int_equal(d.syncs - d0.syncs, V2_CPUS * V2_ROUNDS);
	assert_int_equal(d.sync_timeouts, 0);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(sim);
}

static void test_v3_locked_kinds(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(drv_kinds) / sizeof(drv_kinds[0]); i++)
		v3_locked(drv_kinds[i].kind, drv_kinds[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_ticket),
		cmocka_unit_test(test_fifo_mcs),
		cmocka_unit_test(test_unfair_tas),
		cmocka_unit_test(test_unfair_ttas),
		cmocka_unit_test(test_fair_ticket),
		cmocka_unit_test(test_fair_mcs),
		cmocka_unit_test(test_mcs_lock_line),
		cmocka_unit_test(test_v2_bank_kinds),
		cmocka_unit_test(test_v3_locked_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
