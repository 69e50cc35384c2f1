/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv2 driver over the SMMUv2 model ("mmu-500" preset):
 *  - reset: the registers the model ends up with, checked against the
 *    SMMUv2 field positions written here as constants;
 *  - attach + map: a device transaction translates to the mapped PA
 *    (constants below); the bank and stream registers as programmed;
 *    ATS1PR iova_to_phys; unmap + sync: the transaction faults (the
 *    model's TLB, not a shadow); stage 1 and stage 2;
 *  - a stalled context fault blocks TLBSYNC: the driver gives up with
 *    -ETIMEDOUT after about 1.05 s of model time and says the bank was
 *    stalled; after RESUME the sync completes;
 *  - bad arguments.
 * The concurrent sync-serialisation test is tests/test_driver_v2_sync.c.
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
#include <sched.h>
#include <time.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>
#include "hold_clock.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define IOVA		0x12345000ull
#define PA		0x83456000ull	/* inside the physmem window */
#define SID		0x15

/* SMMUv2 registers (reference notes: Linux arm-smmu.h, MMU-500 TRM). */
#define R_SCR0		0x000
#define R_SGFSR		0x048
#define R_SMR(n)	(0x800 + 4 * (n))
#define R_S2CR(n)	(0xc00 + 4 * (n))
#define R_CBAR(n)	(0x1000 + 4 * (n))	/* GR1 = page 1, 4K pages */
#define R_CBA2R(n)	(0x1800 + 4 * (n))
#define CB_SCTLR	0x00
#define CB_TTBR0	0x20
#define CB_FSR		0x58
#define CB_TLBIASID	0x610
#define SCR0_CLIENTPD	(1u << 0)
#define SCR0_GFRE	(1u << 1)
#define SCR0_USFCFG	(1u << 10)
#define SMR_VALID	(1u << 31)
#define S2CR_TYPE_FAULT	(2u << 16)
#define FSR_TF		(1u << 1)
#define FSR_SS		(1u << 30)
#define SCTLR_M		(1u << 0)
#define SCTLR_CFCFG	(1u << 7)

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2_params p;
	struct iopt_smmuv2 *s;
	struct iopt_smmuv2_drv *drv;
	uint64_t cb0;
};

/* The testbed's defaults: memory, the "mmu-500" model, the driver; no
 * domain (the tests make their own). */
static void rig_cfg(struct iopt_testbed_cfg *c)
{
	iopt_testbed_default_cfg(c, IOPT_TESTBED_SMMUV2);
	c->mem_base = MEM_BASE;
	c->mem_size = MEM_SIZE;
	c->dma = c->attach = false;
}

static void rig_up_cfg(struct rig *r, const struct iopt_testbed_cfg *c)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(iopt_testbed_create(c, &r->tb), 0);
	r->pm = iopt_testbed_physmem(r->tb);
	r->p = c->v2;
	r->s = iopt_testbed_smmuv2(r->tb);
	r->drv = iopt_testbed_smmuv2_drv(r->tb);
	r->cb0 = (1ull << (r->p.numpagendxb + 1)) << 12;
}

static void rig_up(struct rig *r, bool stall)
{
	struct iopt_testbed_cfg c;

	rig_cfg(&c);
	c.drv2.stall = stall;
	rig_up_cfg(r, &c);
}

static void rig_down(struct rig *r)
{
	iopt_testbed_destroy(r->tb);
}

static uint64_t reg(struct rig *r, uint64_t off)
{
	uint64_t v = 0;

	assert_int_equal(iopt_smmuv2_drv_read(r->drv, off, 4, &v), 0);
	return v;
}

static struct iopt_pgtable *make_pt(struct rig *r, enum iopt_pgtable_fmt fmt,
				    unsigned ias,
				    struct iopt_smmuv2_drv_domain *dom)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = 4096, .ias = ias, .oas = 40,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = dom, .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm,
	};
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static struct iopt_smmuv2_resp dev(struct rig *r, uint32_t sid, uint64_t addr)
{
	struct iopt_smmuv2_txn t = { .sid = sid, .addr = addr };
	struct iopt_smmuv2_resp resp;

	assert_int_equal(iopt_smmuv2_drv_translate(r->drv, &t, &resp), 0);
	return resp;
}

static void test_reset(void **state)
{
	struct rig r;

	(void)state;
	rig_up(&r, false);
	uint64_t scr0 = reg(&r, R_SCR0);

	assert_int_equal(scr0 & SCR0_CLIENTPD, 0);
	assert_int_not_equal(scr0 & SCR0_GFRE, 0);
	assert_int_not_equal(scr0 & SCR0_USFCFG, 0);
	for (unsigned i = 0; i < r.p.num_smrg; i += 17) {
		assert_int_equal(reg(&r, R_SMR(i)), 0);
		assert_int_equal(reg(&r, R_S2CR(i)) & (3u << 16), S2CR_TYPE_FAULT);
	}
	assert_int_equal(reg(&r, r.cb0 + CB_SCTLR), 0);
	/* An unmatched stream aborts (USFCFG) and records sGFSR.USF (bit 1). */
	assert_int_equal(dev(&r, SID, IOVA).result, IOPT_SMMUV2_ABORT);
	assert_int_not_equal(reg(&r, R_SGFSR) & 2, 0);
	rig_down(&r);
}

static void map_translate_unmap(enum iopt_pgtable_fmt fmt, unsigned stage, unsigned ias)
{
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_smmuv2_drv_stats st;
	struct iopt_pgtable *pt;
	struct iopt_pgtable_gather g;
	uint64_t pa = 0;
	struct rig r;

	rig_up(&r, false);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, stage, &dom), 0);
	unsigned cb = iopt_smmuv2_drv_domain_cb(dom);
	uint64_t cbp = r.cb0 + (uint64_t)cb * 4096;

	pt = make_pt(&r, fmt, ias, dom);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, SID), 0);
	/* SMR: VALID, MASK 0, ID = SID; S2CR: translate (TYPE 0) to cb. */
	assert_int_equal(reg(&r, R_SMR(0)), SMR_VALID | SID);
	assert_int_equal(reg(&r, R_S2CR(0)), cb);
	/* CBAR TYPE 17:16: 1 = stage 1 with stage 2 bypass, 0 = stage 2. */
	assert_int_equal((reg(&r, R_CBAR(cb)) >> 16) & 3, stage == 1 ? 1 : 0);
	assert_int_equal(reg(&r, R_CBA2R(cb)) & 1, 1);	/* VA64 */
	assert_int_not_equal(reg(&r, cbp + CB_SCTLR) & SCTLR_M, 0);
	if (stage == 1) {
		uint64_t ttbr = 0;

		assert_int_equal(iopt_smmuv2_drv_read(r.drv, cbp + CB_TTBR0, 8,
						      &ttbr), 0);
		assert_int_equal(ttbr >> 48, cb);	/* ASID = bank */
	}

	assert_int_equal(dev(&r, SID, IOVA + 0x123).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_drv_resume(dom, true), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, IOVA, PA, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	struct iopt_smmuv2_resp resp = dev(&r, SID, IOVA + 0x123);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, PA + 0x123);
	assert_int_equal(resp.cb, cb);
	/* Hardware iova_to_phys (ATS1PR). */
	assert_int_equal(iopt_smmuv2_drv_iova_to_phys(dom, IOVA + 0x77, &pa), 0);
	assert_int_equal(pa, PA + 0x77);
	assert_int_equal(iopt_smmuv2_drv_iova_to_phys(dom, IOVA + 0x100000, &pa),
			 -ENOENT);

	/* The entry is in the model's TLB now; unmap + sync removes it. */
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, IOVA, 4096, 1, &g), 4096);
	iopt_pgtable_tlb_sync(pt);
	resp = dev(&r, SID, IOVA + 0x123);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_not_equal(reg(&r, cbp + CB_FSR) & FSR_TF, 0);
	iopt_smmuv2_drv_get_stats(r.drv, &st);
	assert_true(st.tlbis >= 1);
	assert_true(st.syncs >= 2);	/* reset's global sync + this one */
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(st.ats_ops, 2);

	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), -EBUSY);
	assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
	assert_int_equal(reg(&r, R_SMR(0)), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_down(&r);
}

static void test_s1(void **state)
{
	(void)state;
	map_translate_unmap(IOPT_ARM_64_LPAE_S1, 1, 48);
}

static void test_s2(void **state)
{
	(void)state;
	map_translate_unmap(IOPT_ARM_64_LPAE_S2, 2, 40);
}

/*
 * The TLB entry survives an unmap without a TLB op (the model really
 * caches it): the check above would fail if the driver's invalidation
 * did nothing.
 */
static void test_unmap_needs_invalidation(void **state)
{
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_pgtable *pt;
	struct iopt_pgtable_cfg cfg;
	struct rig r;

	(void)state;
	rig_up(&r, false);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = IOPT_ARM_64_LPAE_S1;
	cfg.granule = 4096;
	cfg.ias = 48;
	cfg.oas = 40;
	cfg.coherent_walk = true;
	cfg.mem = iopt_physmem_mem_ops();
	cfg.mem_ctx = r.pm;
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);	/* no TLB ops */
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, SID), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, IOVA, PA, 4096, 1, IOPT_READ, NULL), 0);
	assert_int_equal(dev(&r, SID, IOVA).result, IOPT_SMMUV2_OK);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, IOVA, 4096, 1, NULL), 4096);
	assert_int_equal(dev(&r, SID, IOVA).oa, PA);	/* stale TLB hit */
	assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_down(&r);
}

/*
 * MMU-500: a sync does not complete while a context fault is stalled; the
 * driver's loop gives up (-ETIMEDOUT, no hang) and says the bank was
 * stalled; after RESUME (terminate) the sync completes. The two poll
 * loops against that sync that never completes, counted by the model (stats.sync_polls: status reads)
 * and timed by the virtual clock (one access = mmio_cycles, 1 us = 1000
 * cycles at 1 GHz). Expected from the Linux loops' constants:
 *  4.13 on (BACKOFF): delays 1, 2, 4 ... 2^19 us, 10 reads before each:
 *    200 reads, 2^20 - 1 us; then this driver's one last read: 201.
 *  to 4.12 (UDELAY1): TLB_LOOP_TIMEOUT = 1,000,000 reads, a 1 us delay
 *    between consecutive ones: 999,999 us.
 * Accesses besides the reads: the TLBSYNC write and the FSR read of the
 * stall diagnosis. After RESUME either loop completes with one read.
 */
/* The rig of c with 10-cycle accesses at 1 cycle per ns, and one stage
 * 1 domain attached to SID: *dom and its table. */
static struct iopt_pgtable *timed_bank_up(struct rig *r,
					  struct iopt_testbed_cfg *c,
					  struct iopt_smmuv2_drv_domain **dom)
{
	struct iopt_pgtable *pt;

	c->drv2.mmio_cycles = 10;
	c->drv2.cycles_per_sec = 1000000000u;
	rig_up_cfg(r, c);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r->drv, 1, dom), 0);
	pt = make_pt(r, IOPT_ARM_64_LPAE_S1, 48, *dom);
	assert_int_equal(iopt_smmuv2_drv_attach(*dom, pt, SID), 0);
	return pt;
}

static void test_sync_poll_loops(void **state)
{
	static const struct {
		enum iopt_smmuv2_drv_sync_poll poll;
		uint64_t reads, delay_us;
	} want[] = {
		{ IOPT_SMMUV2_DRV_POLL_BACKOFF, 200, (1ull << 20) - 1 },
		{ IOPT_SMMUV2_DRV_POLL_UDELAY1, 1000000, 999999 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct iopt_smmuv2_drv_domain *dom;
		struct iopt_smmuv2_drv_stats st;
		struct iopt_smmuv2_stats m0, m1;
		struct iopt_smmuv2_resp resp;
		struct iopt_testbed_cfg c;
		struct iopt_pgtable *pt;
		struct rig r;

		rig_cfg(&c);
		c.drv2.stall = true;
		c.drv2.sync_poll = want[k].poll;
		pt = timed_bank_up(&r, &c, &dom);
		uint64_t cbp = r.cb0 + (uint64_t)iopt_smmuv2_drv_domain_cb(dom) * 4096;

		assert_true(r.p.sync_blocked_by_stall);
		assert_int_not_equal(reg(&r, cbp + CB_SCTLR) & SCTLR_CFCFG, 0);
		assert_int_equal(dev(&r, SID, IOVA).result, IOPT_SMMUV2_STALLED);
		assert_int_not_equal(reg(&r, cbp + CB_FSR) & FSR_SS, 0);

		iopt_smmuv2_get_stats(r.s, &m0);
		uint64_t c0 = iopt_smmuv2_drv_cycle(r.drv);

		assert_int_equal(iopt_smmuv2_drv_tlb_sync(dom), -ETIMEDOUT);
		uint64_t waited = iopt_smmuv2_drv_cycle(r.drv) - c0;

		iopt_smmuv2_get_stats(r.s, &m1);
		assert_int_equal(m1.sync_polls - m0.sync_polls, want[k].reads);
		assert_int_equal(waited, (want[k].reads + 2) * 10 +
					 want[k].delay_us * 1000);
		iopt_smmuv2_drv_get_stats(r.drv, &st);
		assert_int_equal(st.sync_timeouts, 1);
		assert_int_equal(st.stalled_timeouts, 1);

		assert_int_equal(iopt_smmuv2_drv_resume(dom, true), 0);
		assert_int_equal(iopt_smmuv2_stalled(r.s, iopt_smmuv2_drv_domain_cb(dom),
						     &resp), 0);
		assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
		/* The RESUME lets the held sync complete sync_cycles later;
		 * a new sync then completes within the first spins. */
		iopt_smmuv2_get_stats(r.s, &m0);
		assert_int_equal(iopt_smmuv2_drv_tlb_sync(dom), 0);
		iopt_smmuv2_get_stats(r.s, &m1);
		assert_true(m1.sync_polls - m0.sync_polls >= 1);
		assert_true(m1.sync_polls - m0.sync_polls <= 10);
		iopt_smmuv2_drv_get_stats(r.drv, &st);
		assert_int_equal(st.sync_timeouts, 1);

		assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
		assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
		iopt_pgtable_free(pt);
		rig_down(&r);
	}
}

/*
 * The backoff loop's samples against syncs the model completes at a
 * scripted time: before the sync, TLBIASIDs written straight to the model
 * fill its invalidation engine (10 us each) up to the time the sync is to
 * complete (1 cycle per ns, 10-cycle accesses, an 8-cycle sync). Bursts
 * of 10 reads begin at T(1) = 0 and T(k + 1) = T(k) + w(k) + 100 cycles,
 * w(k) = 2^(k-1) us, or at most the cap. Worked out by hand:
 *  - done at 400 ms, inside w(19) (T(19) = 262.14 ms, T(20) = 524.29 ms):
 *    seen at burst 20's first read, 191 reads, 19 waits;
 *  - done at 800 ms, inside w(20), after the last burst: Linux reports
 *    "TLB sync timed out" at the end of w(20) without reading again,
 *    200 reads, 20 waits, -ETIMEDOUT;
 *  - cap 64 us (w = 1 ... 32, then 64): T(7) = 63 us, T(k) = 63 + 64 (k -
 *    7) us; done at 500 us: burst 14 (T = 511 us), 131 reads, 13 waits;
 *    done at 930 us, inside w(20) (T(20) = 895 us, end 959 us): 200
 *    reads, 20 waits, -ETIMEDOUT. Without the cap 930 us is burst 11
 *    (T(11) = 1023 us): 101 reads.
 */
#define TLBI_US 10

static void test_sync_backoff_samples(void **state)
{
	static const struct {
		uint64_t done_us, cap_us, reads, waits;
		int ret;
	} want[] = {
		{ 400000, 0, 191, 19, 0 },
		{ 800000, 0, 200, 20, -ETIMEDOUT },
		{ 500, 64, 131, 13, 0 },
		{ 930, 64, 200, 20, -ETIMEDOUT },
		{ 930, 0, 101, 10, 0 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct iopt_smmuv2_drv_domain *dom;
		struct iopt_smmuv2_drv_stats st;
		struct iopt_smmuv2_stats m0, m1;
		struct iopt_testbed_cfg c;
		struct iopt_pgtable *pt;
		struct rig r;

		rig_cfg(&c);
		c.v2.tlbi_cycles = TLBI_US * 1000;
		c.drv2.sync_poll = IOPT_SMMUV2_DRV_POLL_BACKOFF;
		c.drv2.sync_delay_cap_us = want[k].cap_us;
		pt = timed_bank_up(&r, &c, &dom);
		iopt_smmuv2_drv_get_stats(r.drv, &st);
		assert_int_equal(st.sync_timeouts, 0);
		uint64_t waits0[IOPT_SMMUV2_DRV_SYNC_WAITS];

		memcpy(waits0, st.sync_waits, sizeof(waits0));
		uint64_t at = iopt_smmuv2_drv_cycle(r.drv);
		uint64_t asid = r.cb0 + (uint64_t)iopt_smmuv2_drv_domain_cb(dom) *
				4096 + CB_TLBIASID;

		for (uint64_t n = 0; n < want[k].done_us / TLBI_US; n++)
			assert_int_equal(iopt_smmuv2_mmio_write(r.s, asid, 4, 0, at), 0);
		iopt_smmuv2_get_stats(r.s, &m0);
		assert_int_equal(iopt_smmuv2_drv_tlb_sync(dom), want[k].ret);
		iopt_smmuv2_get_stats(r.s, &m1);
		assert_int_equal(m1.sync_polls - m0.sync_polls, want[k].reads);
		/* Every read but a completed sync's last saw it active. */
		assert_int_equal(m1.sync_polls_active - m0.sync_polls_active,
				 want[k].reads - (want[k].ret == 0));
		iopt_smmuv2_drv_get_stats(r.drv, &st);
		for (unsigned w = 0; w < IOPT_SMMUV2_DRV_SYNC_WAITS; w++)
			assert_int_equal(st.sync_waits[w] - waits0[w],
					 w < want[k].waits);
		assert_int_equal(st.sync_timeouts, want[k].ret != 0);
		assert_int_equal(st.stalled_timeouts, 0);
		assert_int_equal(st.nested_syncs, 0);

		assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
		assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
		iopt_pgtable_free(pt);
		rig_down(&r);
	}
}

static void test_bad_args(void **state)
{
	struct iopt_smmuv2_drv_domain *dom, *dom2, *d3;
	struct iopt_smmuv2_drv_cfg c;
	struct iopt_smmuv2_drv *drv = NULL;
	struct iopt_pgtable *pt, *pt2, *v7s, *s2;
	uint64_t pa;
	struct rig r;

	(void)state;
	rig_up(&r, false);
	iopt_smmuv2_drv_default_cfg(&c);
	assert_int_equal(iopt_smmuv2_drv_probe(NULL, &drv), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_probe(&c, &drv), -EINVAL);	/* no model */
	c.smmu = r.s;
	c.sync = (enum iopt_smmuv2_drv_sync)7;
	assert_int_equal(iopt_smmuv2_drv_probe(&c, &drv), -EINVAL);
	assert_null(drv);
	c.sync = IOPT_SMMUV2_DRV_SYNC_BANK;
	c.sync_poll = (enum iopt_smmuv2_drv_sync_poll)2;
	assert_int_equal(iopt_smmuv2_drv_probe(&c, &drv), -EINVAL);
	assert_null(drv);
	c.sync_poll = IOPT_SMMUV2_DRV_POLL_BACKOFF;
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 3, &dom), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(NULL, 1, &dom), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom2), 0);
	assert_int_not_equal(iopt_smmuv2_drv_domain_cb(dom),
			     iopt_smmuv2_drv_domain_cb(dom2));
	pt = make_pt(&r, IOPT_ARM_64_LPAE_S1, 48, dom);
	pt2 = make_pt(&r, IOPT_ARM_64_LPAE_S1, 48, dom2);
	s2 = make_pt(&r, IOPT_ARM_64_LPAE_S2, 40, dom);
	struct iopt_pgtable_cfg vc = {
		.fmt = IOPT_ARM_V7S, .granule = 4096, .ias = 32, .oas = 32,
		.coherent_walk = true,
	};

	assert_int_equal(iopt_pgtable_alloc(&vc, &v7s), 0);
	/* Not attached: no hardware walk. */
	assert_int_equal(iopt_smmuv2_drv_iova_to_phys(dom, IOVA, &pa), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, v7s, SID), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, s2, SID), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, NULL, SID), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, 1u << 15), -EINVAL);
	assert_int_equal(reg(&r, R_SMR(0)), 0);		/* nothing routed */
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, SID), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, SID), -EBUSY);
	assert_int_equal(iopt_smmuv2_drv_attach(dom2, pt2, SID), -EBUSY);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt2, SID + 1), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_detach(dom2, SID), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_detach(dom, SID + 1), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_tlb_sync(NULL), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_resume(NULL, true), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_iova_to_phys(dom, IOVA, NULL), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), -EBUSY);
	assert_int_equal(iopt_smmuv2_drv_domain_free(NULL), 0);
	/* Stage 2 domain rejects a stage 1 table. */
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 2, &d3), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(d3, pt2, SID + 2), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_domain_free(d3), 0);
	assert_int_equal(iopt_smmuv2_drv_detach(dom, SID), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom2), 0);
	iopt_pgtable_free(pt);
	iopt_pgtable_free(pt2);
	iopt_pgtable_free(s2);
	iopt_pgtable_free(v7s);
	rig_down(&r);
}

/*
 * The DMA layer over the SMMUv2 driver (iopt_dma_smmuv2_ops): map → the
 * device reads the buffer's PA; strict unmap → it faults (the model's
 * TLB was invalidated and synced before unmap returned).
 */
static void test_dma_strict(void **state)
{
	struct iopt_smmuv2_drv_stats st;
	struct iopt_dma_cfg dc;
	struct iopt_dma *d;
	uint64_t iova = 0;
	struct rig r;

	(void)state;
	rig_up(&r, false);
	assert_int_equal(iopt_testbed_dma_cfg(r.tb, &dc), 0);
	dc.pt.oas = 40;
	dc.nr_cpus = 1;
	assert_int_equal(iopt_dma_create(&dc, &d), 0);
	assert_int_equal(iopt_dma_attach(d, SID), 0);
	assert_int_equal(iopt_dma_map(d, PA, 4096, IOPT_READ | IOPT_WRITE,
				      ~0ull, 0, &iova), 0);
	struct iopt_smmuv2_resp resp = dev(&r, SID, iova + 0x10);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, PA + 0x10);
	assert_int_equal(iopt_dma_unmap(d, iova, 4096, 0), 0);
	assert_int_equal(dev(&r, SID, iova + 0x10).result, IOPT_SMMUV2_ABORT);
	iopt_smmuv2_drv_get_stats(r.drv, &st);
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(iopt_dma_detach(d, SID), 0);
	iopt_dma_destroy(d);
	rig_down(&r);
}

/*
 * No driver lock around model calls with an external clock (as the SMMUv3
 * driver's test_clock_no_driver_lock, src/driver/drv_timeline.h): thread
 * A's register read is held inside the clock callback until thread B's
 * register read has got through the driver and the model and returned; a
 * driver that held one lock across the clock read and the model call
 * would keep B out, and A's hold would end at its 5 s limit.
 */
struct hold_clock {
	struct hold_clock_gate g;	/* first: the clock's ctx */
	struct iopt_smmuv2_drv *drv;
};

static void *hold_other(void *arg)
{
	struct hold_clock *h = arg;
	uint64_t v;

	hold_clock_wait_held(&h->g);
	if (iopt_smmuv2_drv_read(h->drv, R_SCR0, 4, &v) == 0)
		hold_clock_b_done(&h->g);
	return NULL;
}

static void test_clock_no_driver_lock(void **state)
{
	struct iopt_testbed_cfg c;
	struct hold_clock h = { 0 };
	struct rig r;
	pthread_t b;
	uint64_t v;

	(void)state;
	rig_cfg(&c);
	c.v2.shared_clock = true;	/* the contract for an external clock */
	c.drv2.clock = hold_clock_read;
	c.drv2.clock_ctx = &h;
	rig_up_cfg(&r, &c);
	h.drv = r.drv;
	assert_int_equal(pthread_create(&b, NULL, hold_other, &h), 0);
	__atomic_store_n(&h.g.armed, 1, __ATOMIC_RELEASE);
	assert_int_equal(iopt_smmuv2_drv_read(r.drv, R_SCR0, 4, &v), 0);
	pthread_join(b, NULL);
	assert_int_equal(h.g.b_done, 1);
	assert_int_equal(h.g.b_done_in_hold, 1);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_s1),
		cmocka_unit_test(test_s2),
		cmocka_unit_test(test_unmap_needs_invalidation),
		cmocka_unit_test(test_sync_poll_loops),
		cmocka_unit_test(test_sync_backoff_samples),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_dma_strict),
		cmocka_unit_test(test_clock_no_driver_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
