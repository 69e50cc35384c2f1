/* SPDX-License-Identifier: MIT */
/*
 * The testbed (iopgtable/testbed.h): for both SMMUs and every policy the
 * chain it builds maps through the DMA domain and the device translates
 * through the model to the buffer's physical address; after the unmap
 * (and, for the deferred policies, the flush that ends the deferral) the
 * device faults. Bad configurations give -EINVAL, the parts' errors come
 * through, and a failed create leaves the caller's memory as it was (the
 * ASan build checks the host side).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/sim.h>
#include <iopgtable/testbed.h>

#define PAGE	4096ull
#define BUF_PA	0x123456000ull		/* outside the testbed's memory */

static const enum iopt_testbed_smmu smmus[] = {
	IOPT_TESTBED_SMMUV3, IOPT_TESTBED_SMMUV2,
};
static const enum iopt_inval policies[] = {
	IOPT_INVAL_STRICT, IOPT_INVAL_LAZY, IOPT_INVAL_SINGLE,
	IOPT_INVAL_EXHAUST,
};

struct events {
	unsigned n;
	struct iopt_smmuv3_drv_event ev;
};

static void on_event(void *ctx, const struct iopt_smmuv3_drv_event *ev)
{
	struct events *e = ctx;

	e->n++;
	e->ev = *ev;
}

/* The defaults, with the SMMUv3 driver's events recorded in *e. */
static void cfg_events(struct iopt_testbed_cfg *c, enum iopt_testbed_smmu smmu,
		       struct events *e)
{
	iopt_testbed_default_cfg(c, smmu);
	c->drv3.event = on_event;
	c->drv3.event_ctx = e;
}

/* Map a 3-page buffer at BUF_PA + 0x10; every byte offset the device
 * touches lands at the same offset from BUF_PA + 0x10; after the unmap
 * the device faults (strict at once, the others after the flush). */
static void map_translate_unmap(struct iopt_testbed *tb, enum iopt_inval pol,
				struct events *e)
{
	struct iopt_dma *d = iopt_testbed_dma(tb);
	uint32_t sid = iopt_testbed_sid(tb);
	uint64_t iova, pa, len = 3 * PAGE;
	unsigned fault;

	assert_non_null(d);
	assert_int_equal(iopt_dma_map(d, BUF_PA + 0x10, len, IOPT_READ | IOPT_WRITE,
				      ~0ull, 0, &iova), 0);
	assert_int_equal(iova & (PAGE - 1), 0x10);
	for (uint64_t off = 0; off < len; off += PAGE / 2) {
		assert_int_equal(iopt_testbed_dev_access(tb, sid, iova + off,
							 off & PAGE, &pa, NULL), 0);
		assert_int_equal(pa, BUF_PA + 0x10 + off);
	}
	assert_int_equal(iopt_dma_unmap(d, iova, len, 0), 0);
	if (pol != IOPT_INVAL_STRICT)
		assert_int_equal(iopt_dma_flush(d), 0);
	pa = 0;
	assert_int_equal(iopt_testbed_dev_access(tb, sid, iova, false, &pa, &fault),
			 -EFAULT);
	assert_int_equal(pa, 0);
	if (iopt_testbed_smmu(tb) == IOPT_TESTBED_SMMUV3) {
		/* The translation fault's record, read from the event queue
		 * (IHI0070 7.3.12: F_TRANSLATION, InputAddr the IOVA). */
		assert_int_equal(fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
		assert_true(iopt_smmuv3_drv_poll(iopt_testbed_smmuv3_drv(tb)) >= 1);
		assert_int_equal(e->ev.type, IOPT_SMMUV3_EVT_F_TRANSLATION);
		assert_int_equal(e->ev.sid, sid);
		assert_int_equal(e->ev.addr, iova);
		assert_true(e->ev.read);
	} else {
		assert_int_equal(fault, IOPT_SMMUV2_ABORT);
	}
}

static void t_every_smmu_and_policy(void **state)
{
	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		for (unsigned p = 0; p < 4; p++) {
			struct iopt_testbed_cfg c;
			struct iopt_testbed *tb = NULL;
			struct events e = { 0 };

			cfg_events(&c, smmus[s], &e);
			c.dma_cfg.policy = policies[p];
			c.dma_cfg.nr_cpus = 2;
			c.sid = 7;
			assert_int_equal(iopt_testbed_create(&c, &tb), 0);
			assert_int_equal(iopt_testbed_smmu(tb), smmus[s]);
			assert_non_null(iopt_testbed_physmem(tb));
			if (smmus[s] == IOPT_TESTBED_SMMUV3) {
				assert_non_null(iopt_testbed_smmuv3(tb));
				assert_non_null(iopt_testbed_smmuv3_drv(tb));
				assert_null(iopt_testbed_smmuv2(tb));
				assert_null(iopt_testbed_smmuv2_drv(tb));
			} else {
				assert_non_null(iopt_testbed_smmuv2(tb));
				assert_non_null(iopt_testbed_smmuv2_drv(tb));
				assert_null(iopt_testbed_smmuv3(tb));
				assert_null(iopt_testbed_smmuv3_drv(tb));
			}
			map_translate_unmap(tb, policies[p], &e);
			iopt_testbed_destroy(tb);
		}
	}
}

/* Stage 2 domains and the free-running clock, on both SMMUs. */
static void t_stage2_runner(void **state)
{
	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		struct iopt_testbed_cfg c;
		struct iopt_testbed *tb;
		struct events e = { 0 };

		cfg_events(&c, smmus[s], &e);
		c.clock = IOPT_TESTBED_CLOCK_RUNNER;
		c.dma_cfg.pt.fmt = IOPT_ARM_64_LPAE_S2;
		c.dma_cfg.pt.ias = 40;
		c.dma_cfg.pt.oas = 40;
		assert_int_equal(iopt_testbed_create(&c, &tb), 0);
		map_translate_unmap(tb, IOPT_INVAL_STRICT, &e);
		iopt_testbed_destroy(tb);
	}
}

/* No domain, then one of the caller's from iopt_testbed_dma_cfg(). */
static void t_caller_domain(void **state)
{
	(void)state;
	for (unsigned s = 0; s < 2; s++) {
		struct iopt_testbed_cfg c;
		struct iopt_testbed *tb;
		struct iopt_dma_cfg dc;
		struct iopt_dma *d;
		uint64_t iova, pa;

		iopt_testbed_default_cfg(&c, smmus[s]);
		c.dma = false;
		c.attach = false;
		assert_int_equal(iopt_testbed_create(&c, &tb), 0);
		assert_null(iopt_testbed_dma(tb));
		assert_int_equal(iopt_testbed_dma_cfg(tb, &dc), 0);
		assert_int_equal(iopt_dma_create(&dc, &d), 0);
		assert_int_equal(iopt_dma_attach(d, 3), 0);
		assert_int_equal(iopt_dma_map(d, BUF_PA, PAGE, IOPT_READ, ~0ull, 0,
					      &iova), 0);
		assert_int_equal(iopt_testbed_dev_access(tb, 3, iova + 8, false,
							 &pa, NULL), 0);
		assert_int_equal(pa, BUF_PA + 8);
		/* Read-only: the write faults. */
		assert_int_equal(iopt_testbed_dev_access(tb, 3, iova, true, &pa,
							 NULL), -EFAULT);
		iopt_dma_destroy(d);
		iopt_testbed_destroy(tb);
	}
}

/* Model only: no driver, and a device access says so. */
static void t_model_only(void **state)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_dma_cfg dc;

	(void)state;
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.probe = c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	assert_non_null(iopt_testbed_smmuv3(tb));
	assert_null(iopt_testbed_smmuv3_drv(tb));
	assert_int_equal(iopt_testbed_dma_cfg(tb, &dc), -EINVAL);
	assert_int_equal(iopt_testbed_dev_access(tb, 1, 0, false, NULL, NULL),
			 -EINVAL);
	iopt_testbed_destroy(tb);
	iopt_testbed_destroy(NULL);
	assert_null(iopt_testbed_dma(NULL));
	assert_int_equal(iopt_testbed_sid(NULL), 0);
}

/* A create that must fail with want, on the caller's memory: the memory
 * holds as much afterwards as before and *out is untouched. */
static void expect_fail(struct iopt_testbed_cfg *c, struct iopt_physmem *pm,
			int want)
{
	struct iopt_testbed *tb = (struct iopt_testbed *)(uintptr_t)0x1;
	uint64_t before = iopt_physmem_used(pm);

	c->pm = pm;
	assert_int_equal(iopt_testbed_create(c, &tb), want);
	assert_ptr_equal(tb, (struct iopt_testbed *)(uintptr_t)0x1);
	assert_int_equal(iopt_physmem_used(pm), before);
}

static void t_bad_cfg(void **state)
{
	struct iopt_physmem *pm;
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;

	(void)state;
	assert_int_equal(iopt_physmem_create(0x80000000ull, 64ull << 20, &pm), 0);
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	assert_int_equal(iopt_testbed_create(NULL, &tb), -EINVAL);
	assert_int_equal(iopt_testbed_create(&c, NULL), -EINVAL);

	for (unsigned s = 0; s < 2; s++) {
		/* The testbed's own checks. */
		iopt_testbed_default_cfg(&c, 4);
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.clock = 7;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.clock = IOPT_TESTBED_CLOCK_SIM;	/* no sim */
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.clock = IOPT_TESTBED_CLOCK_RUNNER;
		c.model_ghz = 0;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.probe = false;			/* a domain needs a driver */
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.dma = false;				/* attach needs a domain */
		expect_fail(&c, pm, -EINVAL);

		/* The parts' errors, each after the parts before it were
		 * built: the memory window (own memory), the model, the
		 * driver, the domain, the attach. */
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.mem_size = 4096;			/* not a frame multiple */
		assert_int_equal(iopt_testbed_create(&c, &tb), -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.v3.tlb.ways = 3;
		c.v2.num_cb = 0;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.drv2.sync = 9;
		c.drv3.cmdq_log2 = 40;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.dma_cfg.pt.granule = 12345;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.dma_cfg.policy = 99;
		expect_fail(&c, pm, -EINVAL);
		iopt_testbed_default_cfg(&c, smmus[s]);
		c.sid = 1u << 20;	/* beyond the stream table / NUMSIDB */
		expect_fail(&c, pm, -EINVAL);
	}
	/* irq_to_driver: the SMMUv2 driver takes no interrupts. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.irq_to_driver = true;
	expect_fail(&c, pm, -EINVAL);
	iopt_physmem_destroy(pm);
}

/* Each simulated CPU maps, lets the device read, and unmaps. */
static void sim_worker(unsigned cpu, void *arg)
{
	struct iopt_testbed *tb = arg;
	struct iopt_dma *d = iopt_testbed_dma(tb);
	uint64_t buf = BUF_PA + cpu * 0x100000ull, iova, pa = 0;

	for (int i = 0; i < 50; i++) {
		assert_int_equal(iopt_dma_map(d, buf, PAGE, IOPT_READ, ~0ull, cpu,
					      &iova), 0);
		assert_int_equal(iopt_testbed_dev_access(tb, 1, iova + 4, false,
							 &pa, NULL), 0);
		assert_int_equal(pa, buf + 4);
		assert_int_equal(iopt_dma_unmap(d, iova, PAGE, cpu), 0);
	}
}

/* The simulation's clock (simulation library only): more testbeds, one
 * after the other, than a simulation holds models, so each destroy must
 * have taken its model off the timeline (else -ENOSPC). In the host
 * library the simulation is a stub, whose error comes through. */
static void t_sim_clock(void **state)
{
	struct iopt_sim_params sp;
	struct iopt_sim *sim;

	(void)state;
	iopt_sim_params_default(&sp);
	sp.cpus = 2;
	if (!iopt_sim_available()) {
		assert_int_equal(iopt_sim_create(&sp, &sim), -ENOTSUP);
		return;
	}
	assert_int_equal(iopt_sim_create(&sp, &sim), 0);
	for (unsigned k = 0; k < 6; k++) {
		struct iopt_testbed_cfg c;
		struct iopt_testbed *tb;

		iopt_testbed_default_cfg(&c, smmus[k & 1]);
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = sim;
		c.dma_cfg.policy = policies[k % 4];
		c.dma_cfg.nr_cpus = 2;
		assert_int_equal(iopt_testbed_create(&c, &tb), 0);
		assert_int_equal(iopt_sim_run(sim, sim_worker, tb), 0);
		iopt_testbed_destroy(tb);
	}
	iopt_sim_destroy(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_smmu_and_policy),
		cmocka_unit_test(t_stage2_runner),
		cmocka_unit_test(t_caller_domain),
		cmocka_unit_test(t_model_only),
		cmocka_unit_test(t_bad_cfg),
		cmocka_unit_test(t_sim_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
