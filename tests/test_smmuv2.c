/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv2 model at register level, driven as a driver would, with
 * every register offset and field position written here as constants
 * from the reference facts (Linux arm-smmu.h, OpenBSD smmureg.h,
 * MMU-500 TRM), independently of the model's own definitions:
 *  - ID registers against the parameters, every bank register's and the
 *    global registers' reset values, read/write masks, RAZ/WI, bad
 *    accesses and the time rule;
 *  - stream matching against a brute-force reference (mask arithmetic,
 *    conflicts, unmatched streams both ways);
 *  - translation through stage 1 (AArch64 and AArch32 LPAE), stage 2 and
 *    nested banks of tables the library built, checked against the PA and
 *    permissions the test mapped;
 *  - faults (FSR/FAR/FSYNR0/IPAFAR, MULTI, context interrupt), terminate
 *    and stall with RESUME retry/terminate, HUPCF;
 *  - TLB maintenance scope (stale until invalidated, other ASIDs/VMIDs
 *    untouched), sync timing (restart vs join, blocked by a stall);
 *  - ATS1PR/ATS1PW results; determinism;
 *  - thread-safe entry points: translators and a syncing thread on one
 *    model under the free-running adapter (run under TSan too).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>

#include "tutil.h"

#define MEM_BASE 0x80000000ull

/* Register map (reference facts). */
#define SCR0		0x000
#define ID0		0x020
#define ID1		0x024
#define ID2		0x028
#define SGFAR		0x040
#define SGFSR		0x048
#define SGFSYNR0	0x050
#define SGFSYNR1	0x054
#define TLBIVMID	0x064
#define TLBIALLNSNH	0x068
#define STLBGSYNC	0x070
#define STLBGSTATUS	0x074
#define SMR(n)		(0x800 + 4 * (n))
#define S2CR(n)		(0xc00 + 4 * (n))
#define CBAR(n)		(0x000 + 4 * (n))	/* in GR1 */
#define CBA2R(n)	(0x800 + 4 * (n))	/* in GR1 */
#define CB_SCTLR	0x00
#define CB_RESUME	0x08
#define CB_TCR2		0x10
#define CB_TTBR0	0x20
#define CB_TCR		0x30
#define CB_MAIR0	0x38
#define CB_MAIR1	0x3c
#define CB_PAR		0x50
#define CB_FSR		0x58
#define CB_FAR		0x60
#define CB_FSYNR0	0x68
#define CB_IPAFAR	0x70
#define CB_TLBIVA	0x600
#define CB_TLBIVAA	0x608
#define CB_TLBIASID	0x610
#define CB_TLBIALL	0x618
#define CB_TLBIVAL	0x620
#define CB_TLBIIPAS2	0x630
#define CB_TLBSYNC	0x7f0
#define CB_TLBSTATUS	0x7f4
#define CB_ATS1PR	0x800
#define CB_ATS1PW	0x808
#define CB_ATSR		0x8f0

#define SCR0_CLIENTPD	(1u << 0)
#define SCR0_GFRE	(1u << 1)
#define SCR0_GFIE	(1u << 2)
#define SCR0_GCFGFIE	(1u << 5)
#define SCR0_USFCFG	(1u << 10)
#define SCR0_SMCFCFG	(1u << 21)
#define SGFSR_ICF	(1u << 0)
#define SGFSR_USF	(1u << 1)
#define SGFSR_SMCF	(1u << 2)
#define SGFSR_UCBF	(1u << 3)
#define SMR_VALID	(1u << 31)
#define S2CR_BYPASS	(1u << 16)
#define S2CR_FAULT	(2u << 16)
#define CBAR_S2		(0u << 16)
#define CBAR_S1		(1u << 16)
#define CBAR_NESTED	(3u << 16)
#define CBA2R_VA64	1u
#define SCTLR_M		(1u << 0)
#define SCTLR_AFFD	(1u << 3)
#define SCTLR_CFRE	(1u << 5)
#define SCTLR_CFIE	(1u << 6)
#define SCTLR_CFCFG	(1u << 7)
#define SCTLR_HUPCF	(1u << 8)
#define FSR_TF		(1u << 1)
#define FSR_AFF		(1u << 2)
#define FSR_PF		(1u << 3)
#define FSR_UUT		(1u << 8)
/* FSR.FORMAT 10:9 (Linux ARM_SMMU_CB_FSR_FORMAT); the encoding is the
 * model's documented choice (docs/smmuv2_model.md). */
#define FSR_FMT_A32S	(0u << 9)
#define FSR_FMT_A32L	(1u << 9)
#define FSR_FMT_A64	(2u << 9)
#define FSR_SS		(1u << 30)
#define FSR_MULTI	(1u << 31)
#define FSYNR0_WNR	(1u << 4)
#define FSYNR0_PNU	(1u << 5)
#define FSYNR0_IND	(1u << 6)
#define FSYNR0_PTWF	(1u << 10)
#define FSYNR0_S1CBNDX(v) ((unsigned)((v) >> 16 & 0xff))	/* 23:16 */
/* FSYNR0's defined fields: PLVL 1:0, WNR 4 .. AFR 11, S1CBNDX 23:16. */
#define FSYNR0_DEFINED	(0x3u | 0xff0u | 0xff0000u)
#define RESUME_TERMINATE 1u
/* TCR (AArch64 stage 1): T0SZ 5:0, TG0 15:14 (0 = 4K), EPD1 23. */
#define TCR_T0SZ(n)	((uint32_t)(n))
#define TCR_EPD1	(1u << 23)
#define TCR_EAE		(1u << 31)

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2_params p;
	struct iopt_smmuv2 *s;
	uint64_t cycle;
	uint64_t cb0;			/* offset of context bank 0's page */
	unsigned irqs[1 + 128];
};

static void on_irq(void *ctx, unsigned line, uint64_t cycle)
{
	struct rig *r = ctx;

	(void)cycle;
	r->irqs[line]++;
}

/* Memory and the preset's model alone (its interrupts counted here), on
 * a clock of its own or a shared one. */
static void setup_clock(struct rig *r, const char *preset, bool shared_clock)
{
	struct iopt_testbed_cfg c;

	memset(r, 0, sizeof(*r));
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV2, MEM_BASE, 64u << 20);
	assert_int_equal(iopt_smmuv2_preset(preset, &c.v2), 0);
	/* Timing the tests compute with. */
	c.v2.tlbi_cycles = 16;
	c.v2.sync_cycles = 8;
	c.v2.ats_cycles = 4;
	c.v2.shared_clock = shared_clock;
	c.irq = on_irq;
	c.irq_ctx = r;
	r->tb = tu_testbed(&c);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv2(r->tb);
	r->p = c.v2;
	/* 4K pages; context banks from page 2^(NUMPAGENDXB + 1). */
	r->cb0 = (1ull << (r->p.numpagendxb + 1)) << 12;
	r->cycle = 1;
}

static void setup(struct rig *r, const char *preset)
{
	setup_clock(r, preset, false);
}

static void teardown(struct rig *r)
{
	iopt_testbed_destroy(r->tb);
}

static uint64_t rd(struct rig *r, uint64_t off)
{
	uint64_t v;

	assert_int_equal(iopt_smmuv2_mmio_read(r->s, off, 4, &v, r->cycle), 0);
	return v;
}

static uint64_t rd64(struct rig *r, uint64_t off)
{
	uint64_t v;

	assert_int_equal(iopt_smmuv2_mmio_read(r->s, off, 8, &v, r->cycle), 0);
	return v;
}

static void wr(struct rig *r, uint64_t off, uint32_t v)
{
	assert_int_equal(iopt_smmuv2_mmio_write(r->s, off, 4, v, r->cycle), 0);
}

static void wr64(struct rig *r, uint64_t off, uint64_t v)
{
	assert_int_equal(iopt_smmuv2_mmio_write(r->s, off, 8, v, r->cycle), 0);
}

static uint64_t gr1(uint64_t off)
{
	return 0x1000 + off;
}

static uint64_t cbo(struct rig *r, unsigned n, uint64_t off)
{
	return r->cb0 + ((uint64_t)n << 12) + off;
}

static struct iopt_smmuv2_resp xlate(struct rig *r, uint32_t sid, uint64_t va,
				     bool write)
{
	struct iopt_smmuv2_txn t = { .sid = sid, .addr = va, .write = write,
				     .priv = true };
	struct iopt_smmuv2_resp resp;

	assert_int_equal(iopt_smmuv2_translate(r->s, &t, r->cycle, &resp), 0);
	if (resp.result != IOPT_SMMUV2_STALLED)
		r->cycle = resp.ready + 1;
	return resp;
}

/* Enable the client port, fault on unmatched streams. */
static void enable(struct rig *r, uint32_t extra)
{
	wr(r, SCR0, SCR0_GFRE | SCR0_GFIE | SCR0_GCFGFIE | SCR0_USFCFG | extra);
}

/* Route StreamID sid (exactly) through SMR/S2CR group g to bank n. */
static void route(struct rig *r, unsigned g, uint32_t sid, unsigned n)
{
	wr(r, S2CR(g), n);
	wr(r, SMR(g), SMR_VALID | sid);
}

static struct iopt_pgtable *table(struct rig *r, enum iopt_pgtable_fmt fmt, unsigned ias,
				  unsigned oas)
{
	struct iopt_pgtable_cfg pc = { .fmt = fmt, .granule = 4096, .ias = ias, .oas = oas,
			       .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	return pt;
}

/* Bank n as AArch64 stage 1 (stage 2 bypass) over a 48-bit table. */
static void bank_s1(struct rig *r, unsigned n, struct iopt_pgtable *pt,
		    uint16_t asid, uint8_t vmid, uint32_t sctlr)
{
	struct iopt_pgtable_info info;

	iopt_pgtable_get_info(pt, &info);
	wr(r, gr1(CBAR(n)), CBAR_S1 | vmid);
	wr(r, gr1(CBA2R(n)), CBA2R_VA64);
	wr(r, cbo(r, n, CB_TCR), TCR_T0SZ(16) | TCR_EPD1);
	wr(r, cbo(r, n, CB_TCR2), 5);		/* PASIZE: 48 bits */
	wr64(r, cbo(r, n, CB_TTBR0), info.regs.ttbr | (uint64_t)asid << 48);
	wr(r, cbo(r, n, CB_MAIR0), (uint32_t)info.regs.mair);
	wr(r, cbo(r, n, CB_MAIR1), (uint32_t)(info.regs.mair >> 32));
	wr(r, cbo(r, n, CB_SCTLR), SCTLR_M | sctlr);
}

/* ---- registers ------------------------------------------------------------ */

static void test_id_reset_and_access(void **state)
{
	struct rig r;
	uint64_t v;

	(void)state;
	setup(&r, "mmu-500");
	v = rd(&r, ID0);
	assert_int_equal(v & 0xff, 128 & 0xff);		/* NUMSMRG */
	assert_int_equal(v >> 9 & 0xf, 15);		/* NUMSIDB */
	assert_int_equal(v >> 30 & 1, 1);		/* S1TS */
	assert_int_equal(v >> 29 & 1, 1);		/* S2TS */
	assert_int_equal(v >> 28 & 1, 1);		/* NTS */
	assert_int_equal(v >> 27 & 1, 1);		/* SMS */
	assert_int_equal(v >> 26 & 1, 0);		/* ATOSNS: ATS1* exist */
	assert_int_equal(v >> 25 & 1, 0);		/* AArch32 LPAE supported */
	assert_int_equal(v >> 24 & 1, 1);		/* no AArch32 short desc */
	assert_int_equal(v >> 16 & 0xff, 128);		/* NUMIRPT */
	v = rd(&r, ID1);
	assert_int_equal(v & 0xff, 128);		/* NUMCB */
	assert_int_equal(v >> 31, 0);			/* PAGESIZE 4K */
	assert_int_equal(v >> 28 & 7, 7);		/* NUMPAGENDXB */
	v = rd(&r, ID2);
	assert_int_equal(v & 0xf, 5);			/* IAS 48 */
	assert_int_equal(v >> 4 & 0xf, 5);		/* OAS 48 */
	assert_int_equal(v >> 12 & 7, 7);		/* PTFS 4K, 16K, 64K */
	/* Reset: client port disabled, no SMR valid, S2CR fault. */
	assert_int_equal(rd(&r, SCR0), SCR0_CLIENTPD);
	assert_int_equal(rd(&r, SMR(0)), 0);
	assert_int_equal(rd(&r, S2CR(5)), S2CR_FAULT);
	assert_int_equal(rd(&r, cbo(&r, 3, CB_SCTLR)), 0);
	assert_int_equal(rd(&r, cbo(&r, 3, CB_FSR)), 0);
	/* With the port disabled everything bypasses. */
	struct iopt_smmuv2_resp resp = xlate(&r, 7, 0x1234, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x1234);
	/* Read/write: SMR keeps VALID/MASK/ID, drops bit 15; S2CR its
	 * fields; TTBR0 as two halves. */
	wr(&r, SMR(1), 0xffffffffu);
	assert_int_equal(rd(&r, SMR(1)), 0xffff7fffu);
	wr(&r, cbo(&r, 2, CB_TTBR0), 0x11112000u);
	wr(&r, cbo(&r, 2, CB_TTBR0 + 4), 0x00050000u);
	assert_int_equal(rd64(&r, cbo(&r, 2, CB_TTBR0)), 0x0005000011112000ull);
	/* RAZ/WI: an unimplemented register and a bank beyond NUMCB. */
	wr(&r, 0x0f0, 5);
	assert_int_equal(rd(&r, 0x0f0), 0);
	/* Bad accesses: misaligned, 8 bytes on a 32-bit register, beyond
	 * the space, 2 bytes. */
	assert_int_equal(iopt_smmuv2_mmio_read(r.s, 2, 4, &v, r.cycle), -EINVAL);
	assert_int_equal(iopt_smmuv2_mmio_read(r.s, SCR0, 8, &v, r.cycle), -EINVAL);
	assert_int_equal(iopt_smmuv2_mmio_read(r.s, iopt_smmuv2_mmio_size(r.s), 4,
					       &v, r.cycle), -EINVAL);
	assert_int_equal(iopt_smmuv2_mmio_write(r.s, SCR0, 2, 0, r.cycle), -EINVAL);
	/* Time never goes back: nothing changes. */
	r.cycle = 100;
	wr(&r, SMR(2), 0x5);
	assert_int_equal(iopt_smmuv2_mmio_write(r.s, SMR(2), 4, 6, 99), -EINVAL);
	assert_int_equal(rd(&r, SMR(2)), 0x5);
	assert_int_equal(iopt_smmuv2_run_until(r.s, 50), -EINVAL);
	teardown(&r);

	/* A shared clock takes a late cycle as the model's time. */
	setup_clock(&r, "generic", true);
	r.cycle = 100;
	wr(&r, SMR(0), 3);
	assert_int_equal(iopt_smmuv2_mmio_write(r.s, SMR(0), 4, 4, 10), 0);
	assert_int_equal(rd(&r, SMR(0)), 4);
	v = rd(&r, ID0);
	assert_int_equal(v & 0xff, 16);
	assert_int_equal(v >> 24 & 3, 0);		/* AArch32 L and S */
	assert_int_equal(rd(&r, ID1) & 0xff, 8);
	assert_int_equal(rd(&r, ID2) & 0xf, 2);		/* IAS 40 */
	/* Bad parameters and presets. */
	struct iopt_smmuv2_params p = r.p;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv2 *s2;

	iopt_smmu_physmem(r.pm, 10, &mem);
	p.num_cb = 0;
	assert_int_equal(iopt_smmuv2_create(&p, &mem, NULL, NULL, &s2), -EINVAL);
	p = r.p;
	p.ias = 47;
	assert_int_equal(iopt_smmuv2_create(&p, &mem, NULL, NULL, &s2), -EINVAL);
	assert_int_equal(iopt_smmuv2_preset("mmu-400x", &p), -EINVAL);
	teardown(&r);
}

/* ---- stream matching -------------------------------------------------------- */

/* Reference: the lowest valid SMR whose unmasked ID bits equal the
 * StreamID's, bit by bit; *n the number of matches. */
static int ref_match(const uint32_t *smr, unsigned count, uint32_t sid, unsigned *n)
{
	int first = -1;

	*n = 0;
	for (unsigned i = 0; i < count; i++) {
		bool ok = smr[i] >> 31;

		for (unsigned b = 0; b < 15 && ok; b++) {
			bool masked = smr[i] >> (16 + b) & 1;

			if (!masked && ((smr[i] >> b & 1) != (sid >> b & 1)))
				ok = false;
		}
		if (ok) {
			if (first < 0)
				first = (int)i;
			++*n;
		}
	}
	return first;
}

static void test_stream_matching(void **state)
{
	struct rig r;
	uint64_t seed = 42;
	uint32_t smr[16];

	(void)state;
	setup(&r, "generic");
	for (unsigned round = 0; round < 40; round++) {
		bool smcf = round & 1, usf = round & 2;

		wr(&r, SCR0, (smcf ? SCR0_SMCFCFG : 0) | (usf ? SCR0_USFCFG : 0));
		for (unsigned i = 0; i < 16; i++) {
			/* Narrow IDs and sparse masks so that matches and
			 * conflicts both happen. */
			uint32_t id = (uint32_t)tu_rand(&seed) & 0x3f;
			uint32_t mask = (uint32_t)tu_rand(&seed) & 0x7fff &
					(uint32_t)tu_rand(&seed) & (uint32_t)tu_rand(&seed);

			smr[i] = (tu_rand(&seed) % 4 ? SMR_VALID : 0) | mask << 16 | id;
			wr(&r, SMR(i), smr[i]);
			/* Group i -> bank i % 8, translation off: the bank
			 * number says which group matched. */
			wr(&r, S2CR(i), i % 8);
		}
		for (uint32_t sid = 0; sid < 0x80; sid++) {
			unsigned n;
			int g = ref_match(smr, 16, sid, &n);

			wr(&r, SGFSR, 0xffffffffu);
			struct iopt_smmuv2_resp resp = xlate(&r, sid, 0x4000, true);

			if (n == 0 && usf) {
				assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
				assert_int_equal(rd(&r, SGFSR), SGFSR_USF);
				assert_int_equal(rd(&r, SGFSYNR1) & 0xffff, sid);
			} else if (n == 0) {
				assert_int_equal(resp.result, IOPT_SMMUV2_OK);
				assert_int_equal(resp.oa, 0x4000);
				assert_int_equal(resp.cb, ~0u);
			} else if (n > 1 && smcf) {
				assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
				assert_int_equal(rd(&r, SGFSR), SGFSR_SMCF);
			} else {
				assert_int_equal(resp.result, IOPT_SMMUV2_OK);
				assert_int_equal(resp.cb, (unsigned)g % 8);
				assert_int_equal(rd(&r, SGFSR), 0);
			}
		}
	}
	/* S2CR bypass, fault (ICF, with syndrome), bank beyond NUMCB (UCBF),
	 * and MULTI on a second global fault. */
	wr(&r, SCR0, SCR0_GFIE | SCR0_GCFGFIE);
	for (unsigned i = 0; i < 16; i++)
		wr(&r, SMR(i), 0);
	wr(&r, SGFSR, 0xffffffffu);
	wr(&r, S2CR(0), S2CR_BYPASS);
	wr(&r, SMR(0), SMR_VALID | 1);
	wr(&r, S2CR(1), S2CR_FAULT);
	wr(&r, SMR(1), SMR_VALID | 2);
	wr(&r, S2CR(2), 9);
	wr(&r, SMR(2), SMR_VALID | 3);
	assert_int_equal(xlate(&r, 1, 0x777000, false).oa, 0x777000);
	unsigned irqs = r.irqs[0];
	struct iopt_smmuv2_txn t = { .sid = 2, .addr = 0xabc000, .write = true,
				     .priv = true };
	struct iopt_smmuv2_resp resp;

	assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, SGFSR), SGFSR_ICF);
	assert_int_equal(rd64(&r, SGFAR), 0xabc000);
	assert_int_equal(rd(&r, SGFSYNR0), (1u << 1) | (1u << 2));	/* WNR, PNU */
	assert_int_equal(rd(&r, SGFSYNR1), 2);
	assert_int_equal(r.irqs[0], irqs + 1);
	assert_int_equal(xlate(&r, 3, 0x1000, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, SGFSR), SGFSR_ICF | SGFSR_UCBF | (1u << 31));
	assert_int_equal(rd(&r, SGFSYNR1), 2);		/* first fault's */
	teardown(&r);
}

/* ---- translation ------------------------------------------------------------- */

static void test_translate_s1(void **state)
{
	struct rig r;
	uint64_t seed = 7, va[64], pa[64];
	struct iopt_pgtable *pt;

	(void)state;
	setup(&r, "generic");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	for (unsigned i = 0; i < 64; i++) {
		va[i] = ((tu_rand(&seed) & 0xffffff) << 12) | (uint64_t)i << 36;
		pa[i] = (tu_rand(&seed) & 0xfffffff) << 12;
		assert_int_equal(iopt_pgtable_map_pages(pt, va[i], pa[i], 4096, 1,
							i % 4 ? IOPT_READ | IOPT_WRITE : IOPT_READ,
							NULL), 0);
	}
	enable(&r, 0);
	route(&r, 0, 0x10, 1);
	bank_s1(&r, 1, pt, 3, 1, SCTLR_CFRE | SCTLR_CFIE);
	for (unsigned i = 0; i < 64; i++) {
		struct iopt_smmuv2_resp resp = xlate(&r, 0x10, va[i] | 0x123, false);

		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, pa[i] | 0x123);
		assert_int_equal(resp.cb, 1);
	}
	/* A write to a read-only page: permission fault, syndrome, irq. */
	struct iopt_smmuv2_resp resp = xlate(&r, 0x10, va[0] + 8, true);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), FSR_PF | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 1, CB_FAR)) >> 12, va[0] >> 12);
	uint64_t syn = rd(&r, cbo(&r, 1, CB_FSYNR0));

	assert_int_equal(syn & FSYNR0_WNR, FSYNR0_WNR);
	assert_int_equal(syn & FSYNR0_PNU, FSYNR0_PNU);
	assert_int_equal(syn & FSYNR0_IND, 0);
	assert_int_equal(syn & 3, 3);			/* PLVL: level 3 leaf */
	assert_int_equal(r.irqs[1 + 1], 1);
	/* A second fault: MULTI, the first syndrome kept. */
	resp = xlate(&r, 0x10, 0x7000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), FSR_PF | FSR_MULTI | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 1, CB_FAR)) >> 12, va[0] >> 12);
	wr(&r, cbo(&r, 1, CB_FSR), 0xffffffffu);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), 0);
	resp = xlate(&r, 0x10, 0x7000, false);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 1, CB_FAR)), 0x7000);
	/* Beyond the 48-bit TTBR0 region: translation fault. */
	wr(&r, cbo(&r, 1, CB_FSR), 0xffffffffu);
	resp = xlate(&r, 0x10, 1ull << 50, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), FSR_TF | FSR_FMT_A64);
	/* SCTLR.M = 0: the bank bypasses. */
	wr(&r, cbo(&r, 1, CB_SCTLR), 0);
	resp = xlate(&r, 0x10, 0x7000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x7000);
	iopt_pgtable_free(pt);
	teardown(&r);
}

/* Bank n as stage 2 over table s2 (VTCR and VTTBR as the table says). */
static void bank_s2(struct rig *r, unsigned n, struct iopt_pgtable *s2, uint8_t vmid)
{
	struct iopt_pgtable_info info;

	iopt_pgtable_get_info(s2, &info);
	wr(r, gr1(CBAR(n)), CBAR_S2 | vmid);
	wr(r, gr1(CBA2R(n)), CBA2R_VA64);
	wr(r, cbo(r, n, CB_TCR), (uint32_t)info.regs.tcr);
	wr64(r, cbo(r, n, CB_TTBR0), info.regs.ttbr);
	wr(r, cbo(r, n, CB_SCTLR), SCTLR_M | SCTLR_CFRE);
}

static void test_translate_s2_and_nested(void **state)
{
	struct rig r;
	struct iopt_pgtable *s1, *s2;
	const uint64_t ipa0 = 0x40000000ull, pa0 = MEM_BASE + (32u << 20);

	(void)state;
	setup(&r, "generic");
	s2 = table(&r, IOPT_ARM_64_LPAE_S2, 40, 40);
	s1 = table(&r, IOPT_ARM_64_LPAE_S1, 48, 40);
	/* Stage 2: the table memory at IPA = PA (2M blocks), and 16 pages
	 * of IPA ipa0 + i * 4K to scattered PAs. */
	for (uint64_t a = MEM_BASE; a < MEM_BASE + (32u << 20); a += 2u << 20)
		assert_int_equal(iopt_pgtable_map_pages(s2, a, a, 2u << 20, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(iopt_pgtable_map_pages(s2, ipa0 + i * 4096ull,
							pa0 + (15 - i) * 8192ull, 4096, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	/* Stage 1: VA 0x100000 + i * 4K -> IPA ipa0 + i * 4K for i < 16,
	 * and one page to an IPA stage 2 does not map. */
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(iopt_pgtable_map_pages(s1, 0x100000 + i * 4096ull,
							ipa0 + i * 4096ull, 4096, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s1, 0x200000, 0x7000000000ull >> 4, 4096, 1,
						IOPT_READ, NULL), 0);
	enable(&r, 0);
	/* Stage 2 only: bank 0, StreamID 1. */
	route(&r, 0, 1, 0);
	bank_s2(&r, 0, s2, 5);
	for (unsigned i = 0; i < 16; i++) {
		struct iopt_smmuv2_resp resp = xlate(&r, 1, ipa0 + i * 4096ull + 4, true);

		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, pa0 + (15 - i) * 8192ull + 4);
	}
	struct iopt_smmuv2_resp resp = xlate(&r, 1, ipa0 + 0x100000, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 0, CB_IPAFAR)), ipa0 + 0x100000);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* Nested: bank 2 stage 1 then bank 0's stage 2, StreamID 2. */
	route(&r, 1, 2, 2);
	bank_s1(&r, 2, s1, 9, 0, SCTLR_CFRE);
	wr(&r, gr1(CBAR(2)), CBAR_NESTED | 0u << 8);
	for (unsigned i = 0; i < 16; i++) {
		resp = xlate(&r, 2, 0x100000 + i * 4096ull + 0x10, false);
		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, pa0 + (15 - i) * 8192ull + 0x10);
	}
	/* Stage 2 fault on the output: reported in the stage 2 bank. */
	resp = xlate(&r, 2, 0x200000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 0, CB_IPAFAR)), 0x7000000000ull >> 4);
	assert_int_equal(rd(&r, cbo(&r, 2, CB_FSR)), 0);
	iopt_pgtable_free(s1);
	iopt_pgtable_free(s2);
	teardown(&r);
}

/*
 * A nested walk's stage 2 faults land in the stage 2 bank, whose
 * FSYNR0.S1CBNDX (23:16) names the stage 1 bank: on the output address
 * (stage 1 bank 3 over stage 2 bank 1) and on a stage 1 table access
 * (PTWF; bank 4 over bank 5, which maps nothing). A stage 1 fault stays in
 * the stage 1 bank. Bits outside FSYNR0's fields read 0 throughout.
 */
static void test_nested_fault_s1cbndx(void **state)
{
	struct rig r;
	struct iopt_pgtable *s1, *s2, *s2_empty;
	const uint64_t ipa0 = 0x40000000ull;
	uint32_t syn;

	(void)state;
	setup(&r, "mmu-500");
	s2 = table(&r, IOPT_ARM_64_LPAE_S2, 40, 40);
	s2_empty = table(&r, IOPT_ARM_64_LPAE_S2, 40, 40);
	s1 = table(&r, IOPT_ARM_64_LPAE_S1, 48, 40);
	for (uint64_t a = MEM_BASE; a < MEM_BASE + (32u << 20); a += 2u << 20)
		assert_int_equal(iopt_pgtable_map_pages(s2, a, a, 2u << 20, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, ipa0, MEM_BASE + (32u << 20), 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s1, 0x100000, ipa0, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s1, 0x200000, 0x7000000000ull >> 4, 4096, 1,
						IOPT_READ, NULL), 0);
	enable(&r, 0);
	bank_s2(&r, 1, s2, 7);
	bank_s1(&r, 3, s1, 9, 0, SCTLR_CFRE);
	wr(&r, gr1(CBAR(3)), CBAR_NESTED | 1u << 8);
	route(&r, 0, 2, 3);
	bank_s2(&r, 5, s2_empty, 8);
	bank_s1(&r, 4, s1, 10, 0, SCTLR_CFRE);
	wr(&r, gr1(CBAR(4)), CBAR_NESTED | 5u << 8);
	route(&r, 1, 6, 4);

	struct iopt_smmuv2_resp resp = xlate(&r, 2, 0x100010, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	/* Stage 2 fault on the output address: bank 1, S1CBNDX 3. */
	resp = xlate(&r, 2, 0x200000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_int_equal(rd(&r, cbo(&r, 3, CB_FSR)), 0);
	syn = (uint32_t)rd(&r, cbo(&r, 1, CB_FSYNR0));
	assert_int_equal(FSYNR0_S1CBNDX(syn), 3);
	assert_int_equal(syn & FSYNR0_PTWF, 0);
	assert_int_equal(syn & FSYNR0_PNU, FSYNR0_PNU);
	assert_int_equal(syn & ~FSYNR0_DEFINED, 0);
	/* Stage 2 fault on the stage 1 walk: bank 5, PTWF, S1CBNDX 4. */
	resp = xlate(&r, 6, 0x100000, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 5, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_int_equal(rd(&r, cbo(&r, 4, CB_FSR)), 0);
	syn = (uint32_t)rd(&r, cbo(&r, 5, CB_FSYNR0));
	assert_int_equal(FSYNR0_S1CBNDX(syn), 4);
	assert_int_equal(syn & (FSYNR0_PTWF | FSYNR0_WNR), FSYNR0_PTWF | FSYNR0_WNR);
	assert_int_equal(syn & ~FSYNR0_DEFINED, 0);
	/* A stage 1 fault of the nested bank: bank 3 itself, S1CBNDX 0. */
	resp = xlate(&r, 2, 0x300000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 3, CB_FSR)), FSR_TF | FSR_FMT_A64);
	syn = (uint32_t)rd(&r, cbo(&r, 3, CB_FSYNR0));
	assert_int_equal(FSYNR0_S1CBNDX(syn), 0);
	assert_int_equal(syn & ~FSYNR0_DEFINED, 0);
	iopt_pgtable_free(s1);
	iopt_pgtable_free(s2);
	iopt_pgtable_free(s2_empty);
	teardown(&r);
}

static void test_translate_aarch32_lpae(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info info;

	(void)state;
	setup(&r, "generic");
	pt = table(&r, IOPT_ARM_32_LPAE_S1, 32, 40);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0xc0001000, 0x9876543000ull, 4096, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x00200000, 0x80000000ull, 2u << 20, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	iopt_pgtable_get_info(pt, &info);
	enable(&r, 0);
	route(&r, 0, 4, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S1 | 1);
	wr(&r, gr1(CBA2R(0)), 0);			/* AArch32 */
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE);		/* T0SZ 0: 4 GiB */
	wr64(&r, cbo(&r, 0, CB_TTBR0), info.regs.ttbr);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M);
	struct iopt_smmuv2_resp resp = xlate(&r, 4, 0xc0001abc, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x9876543abcull);
	resp = xlate(&r, 4, 0x00312344, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x80112344ull);
	resp = xlate(&r, 4, 0xc0001000, true);		/* read-only */
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32L);
	iopt_pgtable_free(pt);
	teardown(&r);
}

/* Short-descriptor (v7s) tables built by the library, SCTLR.AFE = 1 as
 * those tables need: sections, supersections, large and small pages,
 * read-only and privileged-only pages, checked against the mapping. */
static void test_translate_v7s(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info info;

	(void)state;
	setup(&r, "generic");
	pt = table(&r, IOPT_ARM_V7S, 32, 32);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x00100000, 0x40300000, 1u << 20, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x01000000, 0x5f000000, 16u << 20, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x00210000, 0x60050000, 64u << 10, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x00203000, 0x7abcd000, 4096, 1,
						IOPT_READ | IOPT_PRIV, NULL), 0);
	iopt_pgtable_get_info(pt, &info);
	enable(&r, 0);
	route(&r, 0, 4, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S1 | 1);
	wr(&r, gr1(CBA2R(0)), 0);			/* AArch32 */
	wr(&r, cbo(&r, 0, CB_TCR), (uint32_t)info.regs.tcr);	/* TTBCR, EAE 0 */
	assert_int_equal(info.regs.tcr >> 31, 0);
	wr64(&r, cbo(&r, 0, CB_TTBR0), info.regs.ttbr);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M | (1u << 2) /* AFE */ | (1u << 1) /* TRE */);
	static const struct { uint64_t va, pa; bool write; } ok[] = {
		{ 0x00100004, 0x40300004, true }, { 0x001fffff, 0x403fffff, false },
		{ 0x01abcdef, 0x5fabcdef, false }, { 0x0021fff0, 0x6005fff0, true },
		{ 0x00203abc, 0x7abcdabc, false },
	};
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct iopt_smmuv2_resp resp = xlate(&r, 4, ok[i].va, ok[i].write);

		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, ok[i].pa);
	}
	/* Read-only supersection: a write is a permission fault (level 1). */
	struct iopt_smmuv2_resp resp = xlate(&r, 4, 0x01000000, true);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32S);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSYNR0)) & 3, 1);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* Privileged-only page, unprivileged read. */
	struct iopt_smmuv2_txn t = { .sid = 4, .addr = 0x00203000 };

	assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32S);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* Unmapped: translation fault at level 2 (a table exists there). */
	resp = xlate(&r, 4, 0x00205000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32S);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSYNR0)) & 3, 2);
	iopt_pgtable_free(pt);
	teardown(&r);

	/* Without ID0 short-descriptor support ("mmu-500" here): TF. */
	setup(&r, "mmu-500");
	enable(&r, 0);
	route(&r, 0, 4, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S1 | 1);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M);
	resp = xlate(&r, 4, 0x1000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32S);
	teardown(&r);
}

/* AArch32 LPAE stage 2 (CBA2R.VA64 = 0, CBAR type 0): the AArch32 VTCR
 * (T0SZ 3:0 signed with its sign in S 4, SL0 7:6: 0 level 2, 1 level 1;
 * Arm ARM G5.5) over the library's 32-bit stage 2 tables, alone and under
 * an AArch32 LPAE stage 1 bank (nested); misconfigured VTCRs fault. */
#define VTCR32_T0SZ(n)	((uint32_t)(n) & 0xfu)
#define VTCR32_S	(1u << 4)
#define VTCR32_SL0(n)	((uint32_t)(n) << 6)

static void test_translate_aarch32_s2(void **state)
{
	struct rig r;
	struct iopt_pgtable *s1, *s2;
	struct iopt_pgtable_info info;
	const uint64_t pa0 = MEM_BASE + (40u << 20), ipa_hi = 0xffffe00000ull;

	(void)state;
	setup(&r, "generic");
	s2 = table(&r, IOPT_ARM_32_LPAE_S2, 40, 40);
	s1 = table(&r, IOPT_ARM_32_LPAE_S1, 32, 40);
	/* Stage 2: the table memory at IPA = PA, a RW page, a read-only
	 * 2M block at the top of the 40-bit IPA space. */
	for (uint64_t a = MEM_BASE; a < MEM_BASE + (32u << 20); a += 2u << 20)
		assert_int_equal(iopt_pgtable_map_pages(s2, a, a, 2u << 20, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, 0x7000, pa0 + 0x3000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, ipa_hi, pa0 + (2u << 20), 2u << 20, 1,
						IOPT_READ, NULL), 0);
	/* Stage 1: VA 0xc0000000 -> IPA 0x7000. */
	assert_int_equal(iopt_pgtable_map_pages(s1, 0xc0000000, 0x7000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	iopt_pgtable_get_info(s2, &info);
	/* IPA 40 bits: T0SZ -8 (S = 1), start at level 1 (SL0 1). */
	const uint32_t vtcr = VTCR32_T0SZ(-8) | VTCR32_S | VTCR32_SL0(1);

	assert_int_equal(info.regs.tcr & 0xdf, vtcr);
	enable(&r, 0);
	route(&r, 0, 1, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S2 | 3);
	wr(&r, gr1(CBA2R(0)), 0);			/* AArch32 */
	wr(&r, cbo(&r, 0, CB_TCR), vtcr);
	wr64(&r, cbo(&r, 0, CB_TTBR0), info.regs.ttbr);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M);
	struct iopt_smmuv2_resp resp = xlate(&r, 1, 0x7abc, true);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa0 + 0x3abc);
	/* No stage 1 attributes in a stage 2 bank, walked or from the TLB. */
	assert_int_equal(resp.attr, 0);
	resp = xlate(&r, 1, 0x7abc, false);
	assert_int_equal(resp.oa, pa0 + 0x3abc);
	assert_int_equal(resp.attr, 0);
	resp = xlate(&r, 1, ipa_hi + 0x12345, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa0 + (2u << 20) + 0x12345);
	/* Read-only at stage 2: a write is a permission fault, IPAFAR. */
	resp = xlate(&r, 1, ipa_hi + 0x5000, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32L);
	assert_int_equal(rd64(&r, cbo(&r, 0, CB_IPAFAR)) >> 12, (ipa_hi + 0x5000) >> 12);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* Beyond the 40-bit IPA: a translation fault. */
	resp = xlate(&r, 1, 1ull << 40, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32L);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* Nested: bank 1 AArch32 LPAE stage 1, then bank 0. */
	iopt_pgtable_get_info(s1, &info);
	route(&r, 1, 2, 1);
	wr(&r, gr1(CBAR(1)), CBAR_NESTED | 0u << 8 | 3);
	wr(&r, gr1(CBA2R(1)), 0);
	wr(&r, cbo(&r, 1, CB_TCR), TCR_EAE);
	wr64(&r, cbo(&r, 1, CB_TTBR0), info.regs.ttbr);
	wr(&r, cbo(&r, 1, CB_MAIR0), (uint32_t)info.regs.mair);
	wr(&r, cbo(&r, 1, CB_SCTLR), SCTLR_M);
	resp = xlate(&r, 2, 0xc0000010, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa0 + 0x3010);
	/* Misconfigured VTCRs: S not T0SZ[3]; SL0 2 (reserved); SL0 0
	 * (level 2) cannot start a 40-bit IPA. Each is a translation fault
	 * in the stage 2 bank, nothing translates; the good value again
	 * translates. */
	static const uint32_t bad[] = {
		VTCR32_T0SZ(-8) | VTCR32_SL0(1), VTCR32_T0SZ(0) | VTCR32_S | VTCR32_SL0(1),
		VTCR32_T0SZ(-8) | VTCR32_S | VTCR32_SL0(2),
		VTCR32_T0SZ(-8) | VTCR32_S | VTCR32_SL0(0),
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wr(&r, cbo(&r, 0, CB_TCR), bad[i]);
		resp = xlate(&r, 1, 0x7000, false);
		assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
		assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32L);
		wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	}
	wr(&r, cbo(&r, 0, CB_TCR), vtcr);
	resp = xlate(&r, 1, 0x7000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa0 + 0x3000);
	iopt_pgtable_free(s1);
	iopt_pgtable_free(s2);
	teardown(&r);
}

static bool missed(struct rig *r, uint32_t sid, uint64_t va, uint64_t pa);

/* AArch32 LPAE stage 1 with both TTBRs (TTBCR T0SZ 2:0, T1SZ 18:16, A1
 * 22, EPD1 23; Arm ARM G5.5): TTBR0 below 2^(32-T0SZ), TTBR1 at the top
 * 2^(32-T1SZ) bytes, a translation fault between; EPD1 disables TTBR1;
 * the ASID comes from TTBR0[55:48], or TTBR1's with A1 (seen through
 * TLBIASID's scope). */
#define TTBCR_T0SZ(n)	((uint32_t)(n))
#define TTBCR_T1SZ(n)	((uint32_t)(n) << 16)
#define TTBCR_A1	(1u << 22)
#define TTBCR_EPD1	(1u << 23)

static void test_aarch32_lpae_ttbr1(void **state)
{
	struct rig r;
	struct iopt_pgtable *lo, *hi;
	struct iopt_pgtable_info i0, i1;

	(void)state;
	setup(&r, "generic");
	lo = table(&r, IOPT_ARM_32_LPAE_S1, 31, 40);	/* T0SZ 1: 2 GiB */
	hi = table(&r, IOPT_ARM_32_LPAE_S1, 30, 40);	/* T1SZ 2: top 1 GiB */
	assert_int_equal(iopt_pgtable_map_pages(lo, 0x1000, 0x11111000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	/* VA 0xc0000000 + X is IOVA X of the upper table. */
	assert_int_equal(iopt_pgtable_map_pages(hi, 0x2000, 0x22222000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(hi, 0x3fe00000, 0x33200000, 2u << 20, 1,
						IOPT_READ, NULL), 0);
	iopt_pgtable_get_info(lo, &i0);
	iopt_pgtable_get_info(hi, &i1);
	enable(&r, 0);
	route(&r, 0, 4, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S1 | 1);
	wr(&r, gr1(CBA2R(0)), 0);
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE | TTBCR_T0SZ(1) | TTBCR_T1SZ(2));
	wr64(&r, cbo(&r, 0, CB_TTBR0), i0.regs.ttbr | 7ull << 48);
	wr64(&r, cbo(&r, 0, CB_TTBR0 + 8), i1.regs.ttbr | 9ull << 48);	/* TTBR1 */
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M);
	static const struct { uint64_t va, pa; } ok[] = {
		{ 0x00001abc, 0x11111abc }, { 0xc0002010, 0x22222010 },
		{ 0xfffffff8, 0x333ffff8 }, { 0xffe00000, 0x33200000 },
	};
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct iopt_smmuv2_resp resp = xlate(&r, 4, ok[i].va, false);

		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, ok[i].pa);
	}
	/* The gap between the regions, and beyond 32 bits: TF. */
	static const uint64_t gap[] = { 0x80000000, 0xbffff000, 1ull << 32 };

	for (unsigned i = 0; i < 3; i++) {
		struct iopt_smmuv2_resp resp = xlate(&r, 4, gap[i], false);

		assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
		assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32L);
		wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	}
	/* The read-only block through TTBR1: a write faults. */
	struct iopt_smmuv2_resp resp = xlate(&r, 4, 0xffe00000, true);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32L);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* ASID: A1 = 0 takes TTBR0's (7). TLBIASID 9 leaves the entries,
	 * TLBIASID 7 removes them (AArch32 operand: the ASID in 7:0). */
	assert_false(missed(&r, 4, 0xc0002000, 0x22222000));
	wr(&r, cbo(&r, 0, CB_TLBIASID), 9);
	assert_false(missed(&r, 4, 0xc0002000, 0x22222000));
	wr(&r, cbo(&r, 0, CB_TLBIASID), 7);
	r.cycle += 1000;
	assert_true(missed(&r, 4, 0xc0002000, 0x22222000));
	/* A1 = 1: TTBR1's ASID (9). */
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE | TTBCR_T0SZ(1) | TTBCR_T1SZ(2) | TTBCR_A1);
	assert_true(missed(&r, 4, 0x00001000, 0x11111000));
	wr(&r, cbo(&r, 0, CB_TLBIASID), 7);
	r.cycle += 1000;
	assert_false(missed(&r, 4, 0x00001000, 0x11111000));
	wr(&r, cbo(&r, 0, CB_TLBIASID), 9);
	r.cycle += 1000;
	assert_true(missed(&r, 4, 0x00001000, 0x11111000));
	/* EPD1: the TTBR1 region faults; TTBR0's still translates. */
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE | TTBCR_T0SZ(1) | TTBCR_T1SZ(2) | TTBCR_EPD1);
	resp = xlate(&r, 4, 0xc0002000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	resp = xlate(&r, 4, 0x00001000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	/* T1SZ = 0 with T0SZ = 1: TTBR1 covers [2 GiB, 4 GiB) with a 32-bit
	 * walk of a 4 GiB table; TTBR0 still the low 2 GiB. */
	struct iopt_pgtable *full = table(&r, IOPT_ARM_32_LPAE_S1, 32, 40);
	struct iopt_pgtable_info i2;

	assert_int_equal(iopt_pgtable_map_pages(full, 0x80001000, 0x44444000, 4096, 1,
						IOPT_READ, NULL), 0);
	iopt_pgtable_get_info(full, &i2);
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE | TTBCR_T0SZ(1));
	wr64(&r, cbo(&r, 0, CB_TTBR0 + 8), i2.regs.ttbr | 9ull << 48);
	resp = xlate(&r, 4, 0x80001abc, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x44444abc);
	resp = xlate(&r, 4, 0x00001abc, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x11111abc);
	iopt_pgtable_free(full);
	iopt_pgtable_free(lo);
	iopt_pgtable_free(hi);
	teardown(&r);
}

/* ---- short-descriptor (v7s) bank behaviour --------------------------------------- */

/* Short-descriptor section fields (Arm ARM G5.4; ARMv7-A B3.5.1). */
#define SEC		2u
#define SEC_B		(1u << 2)
#define SEC_C		(1u << 3)
#define SEC_XN		(1u << 4)
#define SEC_AP01(n)	((uint32_t)(n) << 10)
#define SEC_TEX(n)	((uint32_t)(n) << 12)
#define SEC_AP2		(1u << 15)
#define SEC_S		(1u << 16)
#define SCTLR_TRE	(1u << 1)
#define SCTLR_AFE	(1u << 2)

/* Entry i of the level 1 table at tbl (16 KiB): the section for VA i MiB. */
static void v7s_section(struct rig *r, uint64_t tbl, unsigned i, uint32_t desc)
{
	uint32_t *e = iopt_physmem_ptr(r->pm, tbl + 4ull * i, 4);

	assert_non_null(e);
	*e = desc;
}

static void v7s_bank(struct rig *r, unsigned n, uint64_t ttbr0, uint32_t ttbcr,
		     uint32_t sctlr)
{
	wr(r, gr1(CBAR(n)), CBAR_S1 | 1);
	wr(r, gr1(CBA2R(n)), 0);
	wr(r, cbo(r, n, CB_TCR), ttbcr);
	wr64(r, cbo(r, n, CB_TTBR0), ttbr0);
	wr(r, cbo(r, n, CB_SCTLR), SCTLR_M | sctlr);
}

/* SCTLR.AFE = 0: AP[2:0] are permissions, Table G5-9 (PL1 / unprivileged:
 * 000 none; 001 RW/none; 010 RW/RO; 011 RW/RW; 100 reserved (no access
 * here, docs); 101 RO/none; 110, 111 RO/RO), and AP[0] = 0 is no Access
 * flag fault. With AFE = 1 the same AP[0] = 0 section is an Access flag
 * fault. Each access twice: the second may hit the TLB and must answer
 * the same. */
static void test_v7s_afe0(void **state)
{
	/* Allowed: bit 0 PL1 read, 1 PL1 write, 2 user read, 3 user write. */
	static const uint8_t allow[8] = { 0x0, 0x3, 0x7, 0xf, 0x0, 0x1, 0x5, 0x5 };
	struct rig r;
	uint64_t tbl;

	(void)state;
	setup(&r, "generic");
	assert_int_equal(iopt_physmem_alloc(r.pm, 16384, &tbl), 0);
	for (unsigned ap = 0; ap < 8; ap++)
		v7s_section(&r, tbl, ap, (uint32_t)(0x40000000u + (ap << 20)) | SEC |
			    SEC_AP01(ap & 3) | (ap & 4 ? SEC_AP2 : 0));
	enable(&r, 0);
	route(&r, 0, 4, 0);
	v7s_bank(&r, 0, tbl, 0, 0);			/* AFE = 0 */
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned ap = 0; ap < 8; ap++)
			for (unsigned k = 0; k < 4; k++) {
				bool priv = !(k & 2), write = k & 1;
				unsigned bit = (priv ? 0 : 2) + (write ? 1 : 0);
				struct iopt_smmuv2_txn t = {
					.sid = 4, .addr = ((uint64_t)ap << 20) | 0x123,
					.write = write, .priv = priv };
				struct iopt_smmuv2_resp resp;

				assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle,
								       &resp), 0);
				r.cycle = resp.ready + 1;
				if (allow[ap] >> bit & 1) {
					assert_int_equal(resp.result, IOPT_SMMUV2_OK);
					assert_int_equal(resp.oa, 0x40000123u + (ap << 20));
				} else {
					assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
					assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)),
							 FSR_PF | FSR_FMT_A32S);
					wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
				}
			}
	/* AFE = 1: AP[0] = 0 is the access flag clear (a section not yet
	 * cached: SCTLR changes do not invalidate the TLB). */
	v7s_section(&r, tbl, 8, 0x48000000u | SEC | SEC_AP01(2));
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M | SCTLR_AFE);
	struct iopt_smmuv2_resp resp = xlate(&r, 4, 8u << 20, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_AFF | FSR_FMT_A32S);
	teardown(&r);
}

/* Memory attributes of short-descriptor leaves as MAIR bytes and
 * Shareability (resp.attr, resp.sh; PAR.SH and MATTR after ATS1PR):
 * SCTLR.TRE = 0 from TEX/C/B/S (Table G5-12, G5-13, G5.7.2.2); TRE = 1
 * through PRRR (MAIR0 offset) and NMRR (MAIR1 offset) (Tables G5-14,
 * G5-15). MAIR bytes: Device-nGnRnE 0x00, Device-nGnRE 0x04; Normal
 * nibbles NC 4, WB-RW-Allocate f, WT-R-Allocate a, WB-R-Allocate e. SH:
 * 0 Non-, 2 Outer, 3 Inner Shareable. */
#define PRRR_TR(n, t)	((uint32_t)(t) << (2 * (n)))
#define PRRR_NS0	(1u << 18)
#define PRRR_NS1	(1u << 19)
#define PRRR_NOS(n)	(1u << (24 + (n)))
#define NMRR_IR(n, c)	((uint32_t)(c) << (2 * (n)))
#define NMRR_OR(n, c)	((uint32_t)(c) << (16 + 2 * (n)))

static void test_v7s_tex_remap(void **state)
{
	static const struct { uint32_t bits; unsigned attr, sh; } tre0[] = {
		{ 0, 0x00, 2 },					/* Device-nGnRnE */
		{ SEC_B | SEC_S, 0x04, 2 },			/* Device-nGnRE */
		{ SEC_C, 0xaa, 0 },				/* WT, S = 0 */
		{ SEC_C | SEC_S, 0xaa, 2 },			/* WT, S = 1 */
		{ SEC_C | SEC_B | SEC_S, 0xee, 2 },		/* WB no WA */
		{ SEC_TEX(1), 0x44, 2 },			/* NC: Outer Sh. */
		{ SEC_TEX(1) | SEC_C | SEC_B, 0xff, 0 },	/* WB WA, S = 0 */
		{ SEC_TEX(2), 0x04, 2 },			/* Device-nGnRE */
		{ SEC_TEX(5) | SEC_C | SEC_S, 0xfa, 2 },	/* outer WBWA, inner WT */
		{ SEC_TEX(6) | SEC_B, 0xaf, 0 },		/* outer WT, inner WBWA */
		{ SEC_TEX(1) | SEC_B, 0x00, 2 },		/* reserved (docs) */
	};
	/* TRE = 1: index n = {TEX[0], C, B}. */
	const uint32_t prrr = PRRR_TR(0, 0) | PRRR_TR(1, 1) | PRRR_TR(2, 2) |
			      PRRR_TR(3, 2) | PRRR_TR(4, 2) | PRRR_TR(5, 3) |
			      PRRR_TR(7, 2) | PRRR_NS1 | PRRR_NOS(3);
	const uint32_t nmrr = NMRR_IR(2, 0) | NMRR_OR(2, 0) | NMRR_IR(3, 1) |
			      NMRR_OR(3, 1) | NMRR_IR(4, 2) | NMRR_OR(4, 3) |
			      NMRR_IR(7, 3) | NMRR_OR(7, 1);
	static const struct { uint32_t bits; unsigned attr, sh; } tre1[] = {
		{ 0, 0x00, 2 },					/* TR0 00 */
		{ SEC_B, 0x04, 2 },				/* TR1 01 */
		{ SEC_C | SEC_S, 0x44, 2 },			/* n 2: NC/NC */
		{ SEC_C | SEC_B | SEC_S, 0xff, 3 },		/* n 3: NS1, NOS3 */
		{ SEC_C | SEC_B, 0xff, 0 },			/* n 3, S = 0: NS0 0 */
		{ SEC_TEX(1) | SEC_S, 0xea, 2 },		/* n 4: NS1, !NOS4 */
		{ SEC_TEX(1) | SEC_B, 0x00, 2 },		/* TR5 11: reserved */
		{ SEC_TEX(7) | SEC_C | SEC_B | SEC_S, 0xfe, 2 },	/* n 7; TEX[2:1] ignored */
	};
	struct rig r;
	uint64_t tbl;

	(void)state;
	setup(&r, "generic");
	assert_int_equal(iopt_physmem_alloc(r.pm, 16384, &tbl), 0);
	enable(&r, 0);
	route(&r, 0, 4, 0);
	for (unsigned tre = 0; tre < 2; tre++) {
		unsigned n = tre ? sizeof(tre1) / sizeof(tre1[0]) : sizeof(tre0) / sizeof(tre0[0]);

		for (unsigned i = 0; i < n; i++)
			v7s_section(&r, tbl, 16 * tre + i, (uint32_t)(0x40000000u + (i << 20)) |
				    SEC | SEC_AP01(3) | (tre ? tre1[i].bits : tre0[i].bits));
		v7s_bank(&r, 0, tbl, 0, SCTLR_AFE | (tre ? SCTLR_TRE : 0));
		wr(&r, cbo(&r, 0, CB_MAIR0), prrr);
		wr(&r, cbo(&r, 0, CB_MAIR1), nmrr);
		for (unsigned i = 0; i < n; i++) {
			unsigned attr = tre ? tre1[i].attr : tre0[i].attr;
			unsigned sh = tre ? tre1[i].sh : tre0[i].sh;
			uint64_t va = ((uint64_t)(16 * tre + i) << 20) | 0x40;
			struct iopt_smmuv2_resp resp = xlate(&r, 4, va, false);

			assert_int_equal(resp.result, IOPT_SMMUV2_OK);
			assert_int_equal(resp.oa, 0x40000040u + (i << 20));
			assert_int_equal(resp.attr, attr);
			assert_int_equal(resp.sh, sh);
			/* Again (a TLB hit), then through ATS1PR: PAR.SH 8:7,
			 * NS 9, MATTR 63:56. */
			resp = xlate(&r, 4, va, false);
			assert_int_equal(resp.attr, attr);
			assert_int_equal(resp.sh, sh);
			wr64(&r, cbo(&r, 0, CB_ATS1PR), va);
			while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
				r.cycle++;
			uint64_t par = rd64(&r, cbo(&r, 0, CB_PAR));

			assert_int_equal(par & 1, 0);
			assert_int_equal(par & 0xfffff000u, 0x40000000u + (i << 20));
			assert_int_equal(par >> 7 & 3, sh);
			assert_int_equal(par >> 9 & 1, 1);
			assert_int_equal(par >> 56, attr);
		}
	}
	teardown(&r);
}

/* v7s TTBR1: TTBCR.N 2:0 splits the space at 2^(32-N), PD1 5 disables
 * TTBR1 (translation fault), PD0 4 TTBR0; tables built by the library. */
#define TTBCR_PD0	(1u << 4)
#define TTBCR_PD1	(1u << 5)

static void test_v7s_ttbr1(void **state)
{
	struct rig r;
	struct iopt_pgtable *lo, *hi;
	struct iopt_pgtable_info i0, i1;

	(void)state;
	setup(&r, "generic");
	lo = table(&r, IOPT_ARM_V7S, 31, 32);		/* N = 1 */
	hi = table(&r, IOPT_ARM_V7S, 32, 32);
	assert_int_equal(iopt_pgtable_map_pages(lo, 0x00345000, 0x12345000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(hi, 0x80100000, 0x23400000, 1u << 20, 1,
						IOPT_READ, NULL), 0);
	iopt_pgtable_get_info(lo, &i0);
	iopt_pgtable_get_info(hi, &i1);
	enable(&r, 0);
	route(&r, 0, 4, 0);
	v7s_bank(&r, 0, i0.regs.ttbr, 1, SCTLR_AFE);
	wr64(&r, cbo(&r, 0, CB_TTBR0 + 8), i1.regs.ttbr);
	struct iopt_smmuv2_resp resp = xlate(&r, 4, 0x00345678, true);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x12345678);
	resp = xlate(&r, 4, 0x801abcde, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x234abcde);
	resp = xlate(&r, 4, 0x801abcde, true);		/* read-only */
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_PF | FSR_FMT_A32S);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* PD1: TTBR1's region faults, TTBR0's translates; PD0 the reverse. */
	wr(&r, cbo(&r, 0, CB_TCR), 1 | TTBCR_PD1);
	resp = xlate(&r, 4, 0x80100000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A32S);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	resp = xlate(&r, 4, 0x00345000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	wr(&r, cbo(&r, 0, CB_TCR), 1 | TTBCR_PD0);
	resp = xlate(&r, 4, 0x00345000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	resp = xlate(&r, 4, 0x80100000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x23400000);
	iopt_pgtable_free(lo);
	iopt_pgtable_free(hi);
	teardown(&r);
}

/* ---- fault syndrome details ------------------------------------------------------- */

/* FSR.UUT (bit 8): an instruction fetch that writes is unsupported; it is
 * terminated even in stall mode, with the syndrome of the transaction.
 * FSR.FORMAT (10:9) clears with the last fault bit. PAR after ATS1PR on
 * hand-built AArch64 level 2 blocks: SH 8:7 from the descriptor's SH
 * (9:8) for cacheable Normal memory, Outer Shareable (2) for Device and
 * Normal Non-cacheable whatever SH says; NS 9 set; MATTR 63:56; a fault
 * PAR has FORMAT 9:8. */
#define FSR_FORMAT_MASK	(3u << 9)
#define BLK		1ull			/* level 2 block */
#define BLK_IDX(n)	((uint64_t)(n) << 2)	/* AttrIndx 4:2 */
#define BLK_SH(n)	((uint64_t)(n) << 8)
#define BLK_AF		(1ull << 10)

static void test_fault_syndrome_details(void **state)
{
	struct rig r;
	uint64_t tbl;

	(void)state;
	setup(&r, "generic");
	/* A 30-bit VA (T0SZ 34): one level 2 table of 2M blocks. MAIR:
	 * 0 Device-nGnRE, 1 Normal NC, 2 Normal WB, 3 Normal WT inner, WB
	 * outer. */
	assert_int_equal(iopt_physmem_alloc(r.pm, 4096, &tbl), 0);
	static const struct { uint64_t d; unsigned sh, attr; } blk[] = {
		{ BLK_IDX(0) | BLK_SH(3), 2, 0x04 }, { BLK_IDX(1) | BLK_SH(0), 2, 0x44 },
		{ BLK_IDX(2) | BLK_SH(3), 3, 0xff }, { BLK_IDX(2) | BLK_SH(0), 0, 0xff },
		{ BLK_IDX(3) | BLK_SH(2), 2, 0xfa },
	};
	for (unsigned i = 0; i < 5; i++) {
		uint64_t *e = iopt_physmem_ptr(r.pm, tbl + 8 * i, 8);

		*e = (0x40000000ull + ((uint64_t)i << 21)) | BLK | BLK_AF | blk[i].d;
	}
	enable(&r, 0);
	route(&r, 0, 4, 0);
	wr(&r, gr1(CBAR(0)), CBAR_S1 | 1);
	wr(&r, gr1(CBA2R(0)), CBA2R_VA64);
	wr(&r, cbo(&r, 0, CB_TCR), TCR_T0SZ(34) | TCR_EPD1);
	wr(&r, cbo(&r, 0, CB_TCR2), 2);			/* 40 bits */
	wr64(&r, cbo(&r, 0, CB_TTBR0), tbl);
	wr(&r, cbo(&r, 0, CB_MAIR0), 0xfaff4404u);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M | SCTLR_CFCFG | SCTLR_CFIE);
	for (unsigned i = 0; i < 5; i++) {
		wr64(&r, cbo(&r, 0, CB_ATS1PR), ((uint64_t)i << 21) | 0x5000);
		while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
			r.cycle++;
		uint64_t par = rd64(&r, cbo(&r, 0, CB_PAR));

		assert_int_equal(par & 1, 0);
		assert_int_equal(par & 0x0000fffffffff000ull,
				 0x40005000ull + ((uint64_t)i << 21));
		assert_int_equal(par >> 7 & 3, blk[i].sh);
		assert_int_equal(par >> 9 & 1, 1);
		assert_int_equal(par >> 56, blk[i].attr);
	}
	/* A fault through ATS1PR: F, TF, FORMAT 9:8 = AArch64 (2). */
	wr64(&r, cbo(&r, 0, CB_ATS1PR), 0x3fe00000);
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	uint64_t par = rd64(&r, cbo(&r, 0, CB_PAR));

	assert_int_equal(par & 0x3ff, 1 | FSR_TF | 2u << 8);
	/* UUT: write + exec. Terminated although CFCFG stalls; FSYNR0.WNR. */
	struct iopt_smmuv2_txn t = { .sid = 4, .addr = 0x1000, .write = true,
				     .exec = true, .priv = true };
	struct iopt_smmuv2_resp resp;

	assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_UUT | FSR_FMT_A64);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSYNR0)) & (FSYNR0_WNR | FSYNR0_IND),
			 FSYNR0_WNR);
	assert_int_equal(rd64(&r, cbo(&r, 0, CB_FAR)) >> 12, 1);
	assert_int_equal(r.irqs[1], 1);
	assert_int_equal(rd(&r, SGFSR), 0);
	/* FORMAT goes with the last fault bit. */
	wr(&r, cbo(&r, 0, CB_FSR), FSR_UUT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)) & FSR_FORMAT_MASK, 0);
	/* The same fault in an AArch32 LPAE bank reads FORMAT 1. */
	wr(&r, gr1(CBA2R(0)), 0);
	wr(&r, cbo(&r, 0, CB_TCR), TCR_EAE);
	assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_UUT | FSR_FMT_A32L);
	teardown(&r);
}

/* FSR.TLBMCF (bit 5): a read-only 2M block is cached, then replaced by
 * writable 4K pages without invalidation (no break-before-make); a write
 * misses the block's permissions, walks to a 4K page, and two entries
 * would hold the address: a TLB match conflict fault. After TLBIVA and
 * TLBSYNC the write translates through the page. */
#define FSR_TLBMCF	(1u << 5)

static void test_tlb_match_conflict(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;

	(void)state;
	setup(&r, "generic");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x200000, 0x40000000, 2u << 20, 1,
						IOPT_READ, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 8, 0);
	bank_s1(&r, 0, pt, 3, 1, 0);
	struct iopt_smmuv2_resp resp = xlate(&r, 8, 0x201040, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x40001040);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, 0x200000, 2u << 20, 1, NULL), 2u << 20);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x201000, 0x50001000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	resp = xlate(&r, 8, 0x201040, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TLBMCF | FSR_FMT_A64);
	assert_int_equal(rd64(&r, cbo(&r, 0, CB_FAR)) >> 12, 0x201);
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	/* The stale block still answers reads (it allows them). */
	resp = xlate(&r, 8, 0x201040, false);
	assert_int_equal(resp.oa, 0x40001040);
	wr64(&r, cbo(&r, 0, CB_TLBIVA), 0x201ull | 3ull << 48);
	wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
	while (rd(&r, cbo(&r, 0, CB_TLBSTATUS)) & 1)
		r.cycle++;
	resp = xlate(&r, 8, 0x201040, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x50001040);
	iopt_pgtable_free(pt);
	teardown(&r);
}

/* ---- stall and RESUME ---------------------------------------------------------- */

static void test_stall_resume(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv2_resp resp, out;

	(void)state;
	setup(&r, "mmu-500");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x1000, 0x5000, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 8, 0);
	bank_s1(&r, 0, pt, 1, 1, SCTLR_CFCFG | SCTLR_CFIE);
	/* A fault stalls: FSR.SS, no response, the interrupt. */
	resp = xlate(&r, 8, 0x9000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_STALLED);
	assert_true(resp.ready == UINT64_MAX);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_SS | FSR_FMT_A64);
	assert_int_equal(r.irqs[1], 1);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), -EAGAIN);
	/* HUPCF = 0: a good transaction waits behind it. */
	resp = xlate(&r, 8, 0x1000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_STALLED);
	/* FSR write clears the fault bits, not SS. */
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_SS);
	/* Software maps the page and retries at cycle 5000. */
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x9000, 0x3000, 4096, 1, IOPT_READ,
						NULL), 0);
	r.cycle = 5000;
	wr(&r, cbo(&r, 0, CB_RESUME), 0);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), 0);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), 0);
	assert_int_equal(out.result, IOPT_SMMUV2_OK);
	assert_int_equal(out.oa, 0x3000);
	assert_true(out.ready >= 5000);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), 0);
	assert_int_equal(out.result, IOPT_SMMUV2_OK);
	assert_int_equal(out.oa, 0x5000);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), -ENOENT);
	/* Terminate. */
	resp = xlate(&r, 8, 0xa000, true);
	assert_int_equal(resp.result, IOPT_SMMUV2_STALLED);
	wr(&r, cbo(&r, 0, CB_RESUME), RESUME_TERMINATE);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), 0);
	assert_int_equal(out.result, IOPT_SMMUV2_ABORT);
	/* HUPCF = 1: a hit passes the stalled fault. */
	wr(&r, cbo(&r, 0, CB_FSR), 0xffffffffu);
	wr(&r, cbo(&r, 0, CB_SCTLR), SCTLR_M | SCTLR_CFCFG | SCTLR_HUPCF);
	resp = xlate(&r, 8, 0xb000, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_STALLED);
	resp = xlate(&r, 8, 0x1008, false);
	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, 0x5008);
	/* RESUME without a stall is ignored; bad bank. */
	wr(&r, cbo(&r, 0, CB_RESUME), RESUME_TERMINATE);
	wr(&r, cbo(&r, 0, CB_RESUME), 0);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), 0);
	assert_int_equal(out.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 0, &out), -ENOENT);
	assert_int_equal(iopt_smmuv2_stalled(r.s, 128, &out), -EINVAL);
	iopt_pgtable_free(pt);
	teardown(&r);
}

/* ---- TLB maintenance ------------------------------------------------------------ */

static uint64_t walks(struct rig *r)
{
	struct iopt_smmuv2_stats st;

	iopt_smmuv2_get_stats(r->s, &st);
	return st.walks;
}

/* Translate and report whether it needed a walk (a TLB miss). */
static bool missed(struct rig *r, uint32_t sid, uint64_t va, uint64_t pa)
{
	uint64_t w = walks(r);
	struct iopt_smmuv2_resp resp = xlate(r, sid, va, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa);
	return walks(r) != w;
}

static void test_tlbi_scope(void **state)
{
	struct rig r;
	struct iopt_pgtable *a, *b;

	(void)state;
	setup(&r, "generic");
	a = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	b = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(iopt_pgtable_map_pages(a, 0x10000 + i * 4096ull,
							0x100000 + i * 4096ull, 4096, 1,
							IOPT_READ, NULL), 0);
		assert_int_equal(iopt_pgtable_map_pages(b, 0x10000 + i * 4096ull,
							0x200000 + i * 4096ull, 4096, 1,
							IOPT_READ, NULL), 0);
	}
	enable(&r, 0);
	/* Bank 0: ASID 1 VMID 1 (SID 1); bank 1: ASID 2 VMID 1 (SID 2);
	 * bank 2: table b again, ASID 2 VMID 2 (SID 3). */
	route(&r, 0, 1, 0);
	route(&r, 1, 2, 1);
	route(&r, 2, 3, 2);
	bank_s1(&r, 0, a, 1, 1, 0);
	bank_s1(&r, 1, b, 2, 1, 0);
	bank_s1(&r, 2, b, 2, 2, 0);
#define ALL_WARM() do {							\
		for (unsigned i = 0; i < 4; i++) {			\
			missed(&r, 1, 0x10000 + i * 4096ull, 0x100000 + i * 4096ull); \
			missed(&r, 2, 0x10000 + i * 4096ull, 0x200000 + i * 4096ull); \
			missed(&r, 3, 0x10000 + i * 4096ull, 0x200000 + i * 4096ull); \
		}							\
	} while (0)
	ALL_WARM();
	assert_false(missed(&r, 1, 0x11000, 0x101000));	/* hits now */
	/* A stale entry stays until invalidated. */
	assert_int_equal(iopt_pgtable_unmap_pages(a, 0x11000, 4096, 1, NULL), 4096);
	assert_false(missed(&r, 1, 0x11000, 0x101000));
	/* TLBIVA (AArch64 operand: VA >> 12 | ASID << 48) on bank 0: only
	 * that page of ASID 1 goes. */
	wr64(&r, cbo(&r, 0, CB_TLBIVA), (0x11000ull >> 12) | 1ull << 48);
	struct iopt_smmuv2_resp resp = xlate(&r, 1, 0x11000, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), FSR_TF | FSR_FMT_A64);
	assert_false(missed(&r, 1, 0x10000, 0x100000));
	assert_false(missed(&r, 2, 0x11000, 0x201000));
	assert_false(missed(&r, 3, 0x11000, 0x201000));
	assert_int_equal(iopt_pgtable_map_pages(a, 0x11000, 0x101000, 4096, 1, IOPT_READ,
						NULL), 0);
	/* TLBIASID 2 on bank 1 (VMID 1): bank 1's entries go, bank 2's
	 * (VMID 2) and ASID 1's stay. */
	ALL_WARM();
	wr(&r, cbo(&r, 1, CB_TLBIASID), 2);
	assert_true(missed(&r, 2, 0x12000, 0x202000));
	assert_false(missed(&r, 3, 0x12000, 0x202000));
	assert_false(missed(&r, 1, 0x12000, 0x102000));
	/* TLBIALL on bank 2: VMID 2 only. */
	ALL_WARM();
	wr(&r, cbo(&r, 2, CB_TLBIALL), 0);
	assert_true(missed(&r, 3, 0x13000, 0x203000));
	assert_false(missed(&r, 2, 0x13000, 0x203000));
	/* TLBIVAA on bank 0: the page for every ASID of VMID 1. */
	ALL_WARM();
	wr64(&r, cbo(&r, 0, CB_TLBIVAA), 0x10000ull >> 12);
	assert_true(missed(&r, 1, 0x10000, 0x100000));
	assert_true(missed(&r, 2, 0x10000, 0x200000));
	assert_false(missed(&r, 3, 0x10000, 0x200000));
	/* Global TLBIVMID 1 and TLBIALLNSNH. */
	ALL_WARM();
	wr(&r, TLBIVMID, 1);
	assert_true(missed(&r, 1, 0x12000, 0x102000));
	assert_true(missed(&r, 2, 0x12000, 0x202000));
	assert_false(missed(&r, 3, 0x12000, 0x202000));
	ALL_WARM();
	wr(&r, TLBIALLNSNH, 0);
	assert_true(missed(&r, 3, 0x12000, 0x202000));
	assert_true(missed(&r, 1, 0x13000, 0x103000));
	/* TLBIVAL: the leaf goes, the walk cache stays (one fetch, the
	 * leaf); TLBIVA: both go (a full 4-level walk). The walk just
	 * before refills the walk cache for ASID 1 (three contexts near VA
	 * 0 share one walk-cache set). */
	struct iopt_smmuv2_stats st0, st1;

	wr64(&r, cbo(&r, 0, CB_TLBIVA), (0x10000ull >> 12) | 1ull << 48);
	assert_true(missed(&r, 1, 0x10000, 0x100000));
	wr64(&r, cbo(&r, 0, CB_TLBIVAL), (0x10000ull >> 12) | 1ull << 48);
	iopt_smmuv2_get_stats(r.s, &st0);
	assert_true(missed(&r, 1, 0x10000, 0x100000));
	iopt_smmuv2_get_stats(r.s, &st1);
	assert_int_equal(st1.fetches - st0.fetches, 1);
	wr64(&r, cbo(&r, 0, CB_TLBIVA), (0x10000ull >> 12) | 1ull << 48);
	iopt_smmuv2_get_stats(r.s, &st0);
	assert_true(missed(&r, 1, 0x10000, 0x100000));
	iopt_smmuv2_get_stats(r.s, &st1);
	assert_int_equal(st1.fetches - st0.fetches, 4);
#undef ALL_WARM
	iopt_pgtable_free(a);
	iopt_pgtable_free(b);
	teardown(&r);
}

static void test_tlbi_ipas2(void **state)
{
	struct rig r;
	struct iopt_pgtable *s2;

	(void)state;
	setup(&r, "generic");
	s2 = table(&r, IOPT_ARM_64_LPAE_S2, 40, 40);
	assert_int_equal(iopt_pgtable_map_pages(s2, 0x40000000, 0x300000, 4096, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, 0x40001000, 0x301000, 4096, 1,
						IOPT_READ, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 1, 0);
	bank_s2(&r, 0, s2, 3);
	missed(&r, 1, 0x40000000, 0x300000);
	missed(&r, 1, 0x40001000, 0x301000);
	assert_false(missed(&r, 1, 0x40000000, 0x300000));
	wr64(&r, cbo(&r, 0, CB_TLBIIPAS2), 0x40000000ull >> 12);
	assert_true(missed(&r, 1, 0x40000000, 0x300000));
	assert_false(missed(&r, 1, 0x40001000, 0x301000));
	iopt_pgtable_free(s2);
	teardown(&r);
}

/* ---- sync ---------------------------------------------------------------------------- */

/* The first cycle from `from` at which the status register reads 0
 * (bounded search; UINT64_MAX if still active at limit). */
static uint64_t sync_done(struct rig *r, uint64_t status, uint64_t from,
			  uint64_t limit)
{
	for (uint64_t c = from; c < limit; c++) {
		uint64_t v;

		assert_int_equal(iopt_smmuv2_mmio_read(r->s, status, 4, &v, c), 0);
		if (!(v & 1)) {
			r->cycle = c;
			return c;
		}
	}
	r->cycle = limit;
	return UINT64_MAX;
}

static void test_sync_timing(void **state)
{
	struct rig r;

	(void)state;
	/* tlbi_cycles 16, sync_cycles 8 (setup). */
	for (int mode = 0; mode < 2; mode++) {
		setup(&r, mode ? "generic" : "mmu-500");	/* join : restart */
		enable(&r, 0);
		uint64_t st = cbo(&r, 0, CB_TLBSTATUS);

		/* Idle: SACTIVE 0. A sync alone: active for sync_cycles. */
		r.cycle = 100;
		assert_int_equal(rd(&r, st), 0);
		wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		assert_int_equal(rd(&r, st), 1);
		assert_int_equal(sync_done(&r, st, 100, 1000), 108);
		/* Two invalidations at 200, a sync at 201: the engine runs
		 * them back to back (200..216, 216..232), then the sync. */
		r.cycle = 200;
		wr64(&r, cbo(&r, 0, CB_TLBIVA), 1);
		wr64(&r, cbo(&r, 0, CB_TLBIVA), 2);
		r.cycle = 201;
		wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		assert_int_equal(sync_done(&r, st, 201, 1000), 232 + 8);
		/* Another bank's sync does not wait for bank 0's work. */
		r.cycle = 300;
		wr64(&r, cbo(&r, 0, CB_TLBIVA), 1);
		wr(&r, cbo(&r, 1, CB_TLBSYNC), 0);
		assert_int_equal(sync_done(&r, cbo(&r, 1, CB_TLBSTATUS), 300, 1000),
				 308);
		/* A second sync written at 400 + 5 while one is active. */
		r.cycle = 400;
		wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		r.cycle = 405;
		wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		assert_int_equal(sync_done(&r, st, 405, 1000), mode ? 408 : 413);
		/* A sync every 5 cycles: restart keeps SACTIVE at 1 all
		 * along (completion 8 after the newest write); join lets
		 * each sync complete 8 after the one that started it. */
		unsigned active = 0;

		r.cycle = 500;
		for (unsigned i = 0; i < 10; i++) {
			if (i)
				active += (unsigned)rd(&r, st);
			wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
			r.cycle += 5;
		}
		assert_int_equal(active, mode ? 5 : 9);
		r.cycle = 545;
		assert_int_equal(sync_done(&r, st, 545, 1000), mode ? 548 : 553);
		/* Global: sTLBGSYNC waits for bank and global operations. */
		r.cycle = 600;
		wr64(&r, cbo(&r, 3, CB_TLBIVA), 1);
		wr(&r, TLBIVMID, 1);
		wr(&r, STLBGSYNC, 0);
		assert_int_equal(sync_done(&r, STLBGSTATUS, 600, 1000), 632 + 8);
		teardown(&r);
	}
}

/*
 * TLBSTATUS reports "the status of any TLB maintenance operations issued
 * before the most recent TLBSYNC" (the SMMUv2 register description): two
 * CPUs that keep writing TLBIVA + TLBSYNC to a bank keep a third CPU's
 * poll of that bank's TLBSTATUS at 1 for as long as invalidations arrive
 * faster than the engine retires them, in both sync modes. Expected from
 * the timing parameters alone (tlbi_cycles 16, sync_cycles 8): TLBIs
 * every 10 cycles from T pile up on the sequential engine, the k-th
 * (from 0) completes at T + 16 (k + 1); the last sync follows the last
 * TLBI, so SACTIVE first reads 0 at T + 16 n + 8. Issued every 40 cycles
 * instead, each round drains (16 + 8 < 40) and the poller sees 0 at
 * w + 24 after each round's write w.
 * Then the interrupt case: a poller's sync is joined by a handler's TLBI +
 * TLBSYNC; the completion moves to the handler's (T' + 1 + 16 + 8) and the
 * poller reads 0 from there, in both modes.
 */
static void test_sync_interleaved_writers(void **state)
{
	struct rig r;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		setup(&r, mode ? "generic" : "mmu-500");
		enable(&r, 0);
		uint64_t st = cbo(&r, 0, CB_TLBSTATUS), sync = cbo(&r, 0, CB_TLBSYNC);
		const uint64_t T = 1000, n = 40;
		uint64_t zeros = 0;

		for (uint64_t k = 0; k < n; k++) {
			/* CPU A on even k, CPU B on odd: TLBIVA + TLBSYNC
			 * in the same cycle, then the poller reads in each
			 * cycle up to the next writer's. */
			r.cycle = T + 10 * k;
			wr64(&r, cbo(&r, 0, CB_TLBIVA), 0x100 + k);
			wr(&r, sync, 0);
			for (uint64_t c = T + 10 * k; c < T + 10 * (k + 1); c++) {
				r.cycle = c;
				zeros += !(rd(&r, st) & 1);
			}
		}
		assert_int_equal(zeros, 0);
		assert_int_equal(sync_done(&r, st, T + 10 * n, T + 10000),
				 T + 16 * n + 8);

		/* Slower writers: every round drains before the next. */
		const uint64_t T2 = 20000;

		for (uint64_t k = 0; k < 8; k++) {
			uint64_t w = T2 + 40 * k;

			r.cycle = w;
			wr64(&r, cbo(&r, 0, CB_TLBIVA), 0x200 + k);
			wr(&r, sync, 0);
			assert_int_equal(sync_done(&r, st, w, w + 40), w + 24);
		}

		/* Interrupt: the poller's sync at T3 (nothing outstanding:
		 * done T3 + 8); at T3 + 1 the handler writes TLBIVA +
		 * TLBSYNC and polls to its completion; the poller then
		 * reads 0. */
		const uint64_t T3 = 30000;

		r.cycle = T3;
		wr(&r, sync, 0);
		r.cycle = T3 + 1;
		wr64(&r, cbo(&r, 0, CB_TLBIVA), 0x300);
		wr(&r, sync, 0);
		assert_int_equal(rd(&r, st), 1);
		assert_int_equal(sync_done(&r, st, T3 + 1, T3 + 1000),
				 T3 + 1 + 16 + 8);
		assert_int_equal(rd(&r, st), 0);
		teardown(&r);
	}
}

static void test_sync_blocked_by_stall(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv2_resp out;

	(void)state;
	for (int preset = 0; preset < 2; preset++) {
		setup(&r, preset ? "generic" : "mmu-500");
		pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
		enable(&r, 0);
		route(&r, 0, 8, 0);
		bank_s1(&r, 0, pt, 1, 1, SCTLR_CFCFG);
		r.cycle = 100;
		assert_int_equal(xlate(&r, 8, 0x9000, false).result,
				 IOPT_SMMUV2_STALLED);
		wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		wr(&r, STLBGSYNC, 0);
		uint64_t done = sync_done(&r, cbo(&r, 0, CB_TLBSTATUS), r.cycle, 3000);

		if (preset) {		/* generic: not blocked */
			assert_true(done < 3000);
		} else {		/* MMU-500: blocked until RESUME */
			assert_true(done == UINT64_MAX);
			assert_int_equal(rd(&r, STLBGSTATUS), 1);
			r.cycle = 5000;
			wr(&r, cbo(&r, 0, CB_RESUME), RESUME_TERMINATE);
			assert_int_equal(sync_done(&r, cbo(&r, 0, CB_TLBSTATUS),
						   5000, 6000), 5008);
			assert_int_equal(sync_done(&r, STLBGSTATUS, 5008, 6000), 5008);
		}
		(void)iopt_smmuv2_stalled(r.s, 0, &out);
		iopt_pgtable_free(pt);
		teardown(&r);
	}
}

/* ---- ATS1* ------------------------------------------------------------------------------ */

static void test_ats(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;

	(void)state;
	setup(&r, "generic");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x4000, 0x12345000, 4096, 1,
						IOPT_READ | IOPT_CACHE, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 8, 0);
	bank_s1(&r, 0, pt, 1, 1, SCTLR_CFIE);
	r.cycle = 100;
	wr64(&r, cbo(&r, 0, CB_ATS1PR), 0x4abc);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_ATSR)), 1);	/* ACTIVE */
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	uint64_t par = rd64(&r, cbo(&r, 0, CB_PAR));

	assert_int_equal(par & 1, 0);				/* F */
	assert_int_equal(par & 0x0000fffffffff000ull, 0x12345000);
	assert_true(r.cycle > 100 + 4);
	/* A write to a read-only page: PAR.F with PF (bit 3), level 3 in
	 * PLVL 33:32, and no context fault recorded. */
	wr64(&r, cbo(&r, 0, CB_ATS1PW), 0x4000);
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	par = rd64(&r, cbo(&r, 0, CB_PAR));
	assert_int_equal(par & 1, 1);
	assert_int_equal(par >> 1 & 0xf, FSR_PF >> 1);
	assert_int_equal(par >> 32 & 3, 3);
	assert_int_equal(rd(&r, cbo(&r, 0, CB_FSR)), 0);
	assert_int_equal(r.irqs[1], 0);
	/* Unmapped: TF. */
	wr64(&r, cbo(&r, 0, CB_ATS1PR), 0x8000);
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	par = rd64(&r, cbo(&r, 0, CB_PAR));
	assert_int_equal(par & 3, 3);				/* F, TF */
	iopt_pgtable_free(pt);
	teardown(&r);
}

/* ---- determinism ---------------------------------------------------------------------------- */

static void trace(uint64_t *out, unsigned n)
{
	struct rig r;
	struct iopt_pgtable *pt;
	uint64_t seed = 99;

	setup(&r, "mmu-500");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(iopt_pgtable_map_pages(pt, i * 0x200000ull, i * 0x10000ull,
							4096, 1, IOPT_READ, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 8, 0);
	bank_s1(&r, 0, pt, 1, 1, 0);
	for (unsigned i = 0; i < n; i++) {
		unsigned k = (unsigned)(tu_rand(&seed) % 64);
		struct iopt_smmuv2_txn t = { .sid = 8, .addr = k * 0x200000ull };
		struct iopt_smmuv2_resp resp;

		assert_int_equal(iopt_smmuv2_translate(r.s, &t, r.cycle, &resp), 0);
		out[i] = resp.ready;
		r.cycle += tu_rand(&seed) % 8;
		if (i % 16 == 0) {
			wr64(&r, cbo(&r, 0, CB_TLBIVA), k * 0x200ull | 1ull << 48);
			wr(&r, cbo(&r, 0, CB_TLBSYNC), 0);
		}
	}
	iopt_pgtable_free(pt);
	teardown(&r);
}

static void test_determinism(void **state)
{
	uint64_t a[400], b[400];

	(void)state;
	trace(a, 400);
	trace(b, 400);
	assert_memory_equal(a, b, sizeof(a));
}

/* Reset values of every bank register and of the global registers this
 * model keeps, and write-only registers reading as zero. */
static void test_reset_values(void **state)
{
	static const uint16_t cb_regs[] = {
		CB_SCTLR, 0x04 /* ACTLR */, CB_TCR2, CB_TTBR0, CB_TTBR0 + 4,
		0x28 /* TTBR1 */, 0x2c, CB_TCR, 0x34 /* CONTEXTIDR */, CB_MAIR0,
		CB_MAIR1, CB_PAR, CB_PAR + 4, CB_FSR, CB_FAR, CB_FAR + 4, CB_FSYNR0,
		0x6c /* FSYNR1 */, CB_IPAFAR, CB_TLBSTATUS, CB_ATSR,
		/* write-only: RESUME, TLBI*, TLBSYNC, ATS1* */
		CB_RESUME, CB_TLBIVA, CB_TLBIASID, CB_TLBIALL, CB_TLBSYNC, CB_ATS1PR,
	};
	struct rig r;

	(void)state;
	setup(&r, "generic");
	for (unsigned n = 0; n < r.p.num_cb; n++) {
		for (unsigned i = 0; i < sizeof(cb_regs) / sizeof(cb_regs[0]); i++)
			assert_int_equal(rd(&r, cbo(&r, n, cb_regs[i])), 0);
		assert_int_equal(rd(&r, gr1(CBAR(n))), 0);
		assert_int_equal(rd(&r, gr1(CBA2R(n))), 0);
		assert_int_equal(rd(&r, gr1(0x400 + 4 * n)), 0);	/* CBFRSYNRA */
	}
	for (unsigned g = 0; g < r.p.num_smrg; g++) {
		assert_int_equal(rd(&r, SMR(g)), 0);
		assert_int_equal(rd(&r, S2CR(g)), S2CR_FAULT);
	}
	assert_int_equal(rd(&r, SGFSR), 0);
	assert_int_equal(rd64(&r, SGFAR), 0);
	assert_int_equal(rd(&r, SGFSYNR0), 0);
	assert_int_equal(rd(&r, SGFSYNR1), 0);
	assert_int_equal(rd(&r, STLBGSTATUS), 0);
	/* Write-only registers stay RAZ after writes; read/write ones keep
	 * their value; CBA2R.VA64 and SCTLR keep only their fields. */
	wr(&r, cbo(&r, 1, CB_TLBIASID), 5);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_TLBIASID)), 0);
	wr(&r, cbo(&r, 1, 0x34), 0x1234);
	assert_int_equal(rd(&r, cbo(&r, 1, 0x34)), 0x1234);
	wr(&r, cbo(&r, 1, CB_SCTLR), 0xffffffffu);
	assert_int_equal(rd(&r, cbo(&r, 1, CB_SCTLR)), 0x17ff);	/* 10:0, 12 */
	wr(&r, gr1(CBA2R(1)), 0xffffffffu);
	assert_int_equal(rd(&r, gr1(CBA2R(1))), 0xffff0001u);
	wr(&r, S2CR(1), 0xffffffffu);
	assert_int_equal(rd(&r, S2CR(1)), 0x030300ffu);	/* CBNDX, TYPE, PRIVCFG */
	teardown(&r);
}

/* TLBIVAAL keeps the walk cache, TLBIIPAS2L too; ATS1UR honours AP[1]. */
static void test_tlbi_leaf_forms_and_ats_user(void **state)
{
	struct rig r;
	struct iopt_pgtable *s1, *s2;
	struct iopt_smmuv2_stats st0, st1;

	(void)state;
	setup(&r, "generic");
	s1 = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	s2 = table(&r, IOPT_ARM_64_LPAE_S2, 40, 40);
	assert_int_equal(iopt_pgtable_map_pages(s1, 0x10000, 0x100000, 4096, 1,
						IOPT_READ | IOPT_PRIV, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, 0x40000000, 0x300000, 4096, 1,
						IOPT_READ, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 1, 0);
	route(&r, 1, 2, 1);
	bank_s1(&r, 0, s1, 1, 1, 0);
	bank_s2(&r, 1, s2, 2);
	missed(&r, 1, 0x10000, 0x100000);
	missed(&r, 2, 0x40000000, 0x300000);
	wr64(&r, cbo(&r, 0, 0x628 /* TLBIVAAL */), 0x10000ull >> 12);
	iopt_smmuv2_get_stats(r.s, &st0);
	assert_true(missed(&r, 1, 0x10000, 0x100000));
	iopt_smmuv2_get_stats(r.s, &st1);
	assert_int_equal(st1.fetches - st0.fetches, 1);
	wr64(&r, cbo(&r, 1, 0x638 /* TLBIIPAS2L */), 0x40000000ull >> 12);
	iopt_smmuv2_get_stats(r.s, &st0);
	assert_true(missed(&r, 2, 0x40000000, 0x300000));
	iopt_smmuv2_get_stats(r.s, &st1);
	assert_int_equal(st1.fetches - st0.fetches, 1);
	/* ATS1UR on a privileged-only page: PAR.F with PF. */
	wr64(&r, cbo(&r, 0, 0x810 /* ATS1UR */), 0x10000);
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	uint64_t par = rd64(&r, cbo(&r, 0, CB_PAR));

	assert_int_equal(par & 0xf, 1 | FSR_PF);
	wr64(&r, cbo(&r, 0, CB_ATS1PR), 0x10000);
	while (rd(&r, cbo(&r, 0, CB_ATSR)) & 1)
		r.cycle++;
	par = rd64(&r, cbo(&r, 0, CB_PAR));
	assert_int_equal(par & 1, 0);
	assert_int_equal(par & 0x0000fffffffff000ull, 0x100000);
	iopt_pgtable_free(s1);
	iopt_pgtable_free(s2);
	teardown(&r);
}

/* ---- concurrency ------------------------------------------------------------------------------ */

struct conc {
	struct rig *r;
	struct iopt_smmuv2_runner *run;
	unsigned id;
	unsigned bad, syncs;
};

/* Translators check every page against what was mapped; the syncer
 * invalidates and syncs, polling TLBSTATUS until it reads 0. */
static void *conc_main(void *arg)
{
	struct conc *c = arg;
	struct rig *r = c->r;
	uint64_t seed = 1 + c->id;

	for (unsigned i = 0; i < 3000; i++) {
		if (c->id == 0) {
			uint64_t v = 1;

			if (iopt_smmuv2_mmio_write(r->s, cbo(r, 0, CB_TLBIVA), 8,
						   (i % 64) | 1ull << 48,
						   iopt_smmuv2_runner_now(c->run)) ||
			    iopt_smmuv2_mmio_write(r->s, cbo(r, 0, CB_TLBSYNC), 4, 0,
						   iopt_smmuv2_runner_now(c->run)))
				c->bad++;
			while (v & 1)
				if (iopt_smmuv2_mmio_read(r->s, cbo(r, 0, CB_TLBSTATUS), 4,
							  &v, iopt_smmuv2_runner_now(c->run)))
					c->bad++, v = 0;
			c->syncs++;
		} else {
			unsigned k = (unsigned)(tu_rand(&seed) % 64);
			struct iopt_smmuv2_txn t = { .sid = 8, .addr = k * 4096ull + 4,
						     .priv = true };
			struct iopt_smmuv2_resp resp;

			if (iopt_smmuv2_translate(r->s, &t, iopt_smmuv2_runner_now(c->run),
						  &resp) ||
			    resp.result != IOPT_SMMUV2_OK ||
			    resp.oa != 0x10000000ull + k * 8192ull + 4)
				c->bad++;
		}
	}
	return NULL;
}

static void test_concurrent_entry_points(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv2_runner *run;
	struct conc c[3];
	pthread_t th[3];

	(void)state;
	setup(&r, "mmu-500");
	pt = table(&r, IOPT_ARM_64_LPAE_S1, 48, 48);
	for (unsigned k = 0; k < 64; k++)
		assert_int_equal(iopt_pgtable_map_pages(pt, k * 4096ull, 0x10000000ull + k * 8192ull,
							4096, 1, IOPT_READ, NULL), 0);
	enable(&r, 0);
	route(&r, 0, 8, 0);
	bank_s1(&r, 0, pt, 1, 1, 0);
	assert_int_equal(iopt_smmuv2_runner_start(r.s, 1.0, &run), 0);
	for (unsigned i = 0; i < 3; i++) {
		c[i] = (struct conc){ .r = &r, .run = run, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, conc_main, &c[i]), 0);
	}
	for (unsigned i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].bad, 0);
	}
	assert_int_equal(c[0].syncs, 3000);
	iopt_smmuv2_runner_stop(run);
	/* Bad runner arguments. */
	assert_int_equal(iopt_smmuv2_runner_start(r.s, 0.0, &run), -EINVAL);
	assert_int_equal(iopt_smmuv2_runner_start(NULL, 1.0, &run), -EINVAL);
	iopt_pgtable_free(pt);
	teardown(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_reset_and_access),
		cmocka_unit_test(test_reset_values),
		cmocka_unit_test(test_stream_matching),
		cmocka_unit_test(test_translate_s1),
		cmocka_unit_test(test_translate_s2_and_nested),
		cmocka_unit_test(test_nested_fault_s1cbndx),
		cmocka_unit_test(test_translate_aarch32_lpae),
		cmocka_unit_test(test_translate_v7s),
		cmocka_unit_test(test_translate_aarch32_s2),
		cmocka_unit_test(test_aarch32_lpae_ttbr1),
		cmocka_unit_test(test_v7s_afe0),
		cmocka_unit_test(test_v7s_tex_remap),
		cmocka_unit_test(test_v7s_ttbr1),
		cmocka_unit_test(test_fault_syndrome_details),
		cmocka_unit_test(test_tlb_match_conflict),
		cmocka_unit_test(test_stall_resume),
		cmocka_unit_test(test_tlbi_scope),
		cmocka_unit_test(test_tlbi_ipas2),
		cmocka_unit_test(test_tlbi_leaf_forms_and_ats_user),
		cmocka_unit_test(test_sync_timing),
		cmocka_unit_test(test_sync_interleaved_writers),
		cmocka_unit_test(test_sync_blocked_by_stall),
		cmocka_unit_test(test_ats),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_concurrent_entry_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
