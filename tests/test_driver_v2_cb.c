/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv2 driver's stream groups and bank formats, through the model:
 *  - SMR masks: a random run of attach/detach of (ID, MASK) entries for
 *    two domains; each result is checked against a brute-force overlap
 *    test over every StreamID (two entries conflict when some StreamID
 *    matches both), then every StreamID is sent through the model and
 *    must reach the bank of the one entry that matches it, or abort;
 *  - v7s (AArch32 short-descriptor) banks: the registers as the format
 *    asks (field positions written here), and device transactions at
 *    pages, large pages and sections the test mapped translate to the
 *    addresses it chose, with read-only pages refusing writes; after a
 *    strict unmap (the driver's AArch32 TLBIVA form + TLBSYNC) the
 *    transaction faults in the model;
 *  - nested banks: a stage 1 bank over a stage 2 bank (CBAR type 3)
 *    translates VA -> IPA -> PA as the two tables say (the stage 1
 *    table fetched through stage 2), stage 2 permissions apply, and an
 *    unmap in either table followed by its TLB sync makes the cached
 *    combined translation fault.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)

/* SMMUv2 registers (reference notes: Linux arm-smmu.h, MMU-500 TRM). */
#define R_SMR(n)	(0x800 + 4 * (n))
#define R_CBAR(n)	(0x1000 + 4 * (n))	/* GR1 = page 1, 4K pages */
#define R_CBA2R(n)	(0x1800 + 4 * (n))
#define CB_SCTLR	0x00
#define CB_TTBR0	0x20
#define CB_TCR		0x30
#define CB_CONTEXTIDR	0x34
#define CB_FSR		0x58
#define SMR_VALID	(1u << 31)
#define SMR_MASK_SHIFT	16
#define SCTLR_M		(1u << 0)
#define SCTLR_TRE	(1u << 1)
#define TCR_EAE		(1u << 31)
#define CBA2R_VA64	(1u << 0)
#define FSR_TF		(1u << 1)
#define FSR_PF		(1u << 3)

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2_params p;
	struct iopt_smmuv2 *s;
	struct iopt_smmuv2_drv *drv;
	uint64_t cb0;
};

static void rig_up(struct rig *r, const char *preset, unsigned numsidb,
		   unsigned num_smrg)
{
	struct iopt_testbed_cfg c;

	memset(r, 0, sizeof(*r));
	/* Memory, the model from the preset, the driver; no domain. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	assert_int_equal(iopt_smmuv2_preset(preset, &c.v2), 0);
	if (numsidb)
		c.v2.numsidb = numsidb;
	if (num_smrg)
		c.v2.num_smrg = num_smrg;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->pm = iopt_testbed_physmem(r->tb);
	r->p = c.v2;
	r->s = iopt_testbed_smmuv2(r->tb);
	r->drv = iopt_testbed_smmuv2_drv(r->tb);
	r->cb0 = (1ull << (r->p.numpagendxb + 1)) << 12;
}

static void rig_down(struct rig *r)
{
	iopt_testbed_destroy(r->tb);
}

static uint64_t reg(struct rig *r, uint64_t off, unsigned size)
{
	uint64_t v = 0;

	assert_int_equal(iopt_smmuv2_drv_read(r->drv, off, size, &v), 0);
	return v;
}

static struct iopt_pgtable *make_pt(struct rig *r, enum iopt_pgtable_fmt fmt,
				    unsigned ias, unsigned oas, void *dom)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = 4096, .ias = ias, .oas = oas,
		.coherent_walk = true, .tlb = iopt_smmuv2_drv_tlb_ops(),
		.tlb_cookie = dom, .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm,
	};
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static struct iopt_smmuv2_resp dev(struct rig *r, uint32_t sid, uint64_t addr,
				   bool write)
{
	struct iopt_smmuv2_txn t = { .sid = sid, .addr = addr, .write = write };
	struct iopt_smmuv2_resp resp;

	assert_int_equal(iopt_smmuv2_drv_translate(r->drv, &t, &resp), 0);
	return resp;
}

/* ---- SMR masks ------------------------------------------------------------ */

#define NSIDB		8		/* 256 StreamIDs: brute force is cheap */
#define NSMR		10
#define STEPS		600

struct ent {
	uint32_t id, mask;
	int dom;			/* 0 or 1; -1: free */
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Brute force: does any StreamID match both entries? */
static bool overlap_bf(uint32_t id, uint32_t mask, uint32_t id2, uint32_t mask2)
{
	for (uint32_t s = 0; s < (1u << NSIDB); s++)
		if (!((s ^ id) & ~mask) && !((s ^ id2) & ~mask2))
			return true;
	return false;
}

static void test_smr_masks(void **state)
{
	static const uint64_t iova = 0x40000000ull;
	static const uint64_t pa[2] = { 0x81000000ull, 0x82000000ull };
	struct iopt_smmuv2_drv_domain *dom[2];
	struct iopt_pgtable *pt[2];
	struct ent e[NSMR];
	unsigned nr = 0, accepted = 0, busy = 0, nospc = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct rig r;

	(void)state;
	rig_up(&r, "mmu-500", NSIDB, NSMR);
	for (int d = 0; d < 2; d++) {
		assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom[d]), 0);
		pt[d] = make_pt(&r, IOPT_ARM_64_LPAE_S1, 48, 40, dom[d]);
		assert_int_equal(iopt_pgtable_map_pages(pt[d], iova, pa[d], 4096, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
	}
	for (unsigned i = 0; i < NSMR; i++)
		e[i].dom = -1;
	/* Non-canonical (ID bit under MASK) and too wide: refused. */
	assert_int_equal(iopt_smmuv2_drv_attach_masked(dom[0], pt[0], 0x13, 0x01),
			 -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach_masked(dom[0], pt[0], 1u << NSIDB, 0),
			 -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_attach_masked(dom[0], pt[0], 0, 1u << NSIDB),
			 -EINVAL);
	for (unsigned step = 0; step < STEPS; step++) {
		int d = (int)(rnd(&x) & 1);

		if (nr && rnd(&x) % 3 == 0) {
			/* Detach a random live entry. */
			unsigned k = (unsigned)(rnd(&x) % NSMR);

			while (e[k].dom < 0)
				k = (k + 1) % NSMR;
			assert_int_equal(iopt_smmuv2_drv_detach_masked(dom[e[k].dom],
						e[k].id, e[k].mask), 0);
			/* Not twice, and not through the other domain. */
			assert_int_equal(iopt_smmuv2_drv_detach_masked(dom[e[k].dom],
						e[k].id, e[k].mask), -EINVAL);
			e[k].dom = -1;
			nr--;
			continue;
		}
		/* Masks of 0 to 4 random bits, so that overlaps are common. */
		uint32_t mask = 0;

		for (uint64_t b = rnd(&x) % 5; b; b--)
			mask |= 1u << (rnd(&x) % NSIDB);
		uint32_t id = (uint32_t)rnd(&x) & ((1u << NSIDB) - 1) & ~mask;
		int want = 0;

		for (unsigned k = 0; k < NSMR; k++)
			if (e[k].dom >= 0 && overlap_bf(id, mask, e[k].id, e[k].mask))
				want = -EBUSY;
		if (!want && nr == NSMR)
			want = -ENOSPC;
		int got = iopt_smmuv2_drv_attach_masked(dom[d], pt[d], id, mask);

		assert_int_equal(got, want);
		if (got == -EBUSY)
			busy++;
		if (got == -ENOSPC)
			nospc++;
		if (got)
			continue;
		accepted++;
		for (unsigned k = 0; k < NSMR; k++)
			if (e[k].dom < 0) {
				e[k] = (struct ent){ id, mask, d };
				break;
			}
		nr++;
	}
	/* The run exercised every outcome. */
	assert_true(accepted > 20);
	assert_true(busy > 20);
	assert_true(nospc > 0);
	/* Every StreamID through the model: the bank of the one matching
	 * entry, translating the domain's page; no entry: abort. */
	for (uint32_t s = 0; s < (1u << NSIDB); s++) {
		int owner = -1;

		for (unsigned k = 0; k < NSMR; k++)
			if (e[k].dom >= 0 && !((s ^ e[k].id) & ~e[k].mask)) {
				assert_int_equal(owner, -1);	/* never two */
				owner = e[k].dom;
			}
		struct iopt_smmuv2_resp resp = dev(&r, s, iova + 0x10, false);

		if (owner < 0) {
			assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
			continue;
		}
		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.cb, iopt_smmuv2_drv_domain_cb(dom[owner]));
		assert_int_equal(resp.oa, pa[owner] + 0x10);
	}
	/* The SMR registers hold exactly the live entries. */
	unsigned valid = 0;

	for (unsigned i = 0; i < NSMR; i++) {
		uint64_t v = reg(&r, R_SMR(i), 4);

		if (!(v & SMR_VALID))
			continue;
		valid++;
		bool found = false;

		for (unsigned k = 0; k < NSMR; k++)
			if (e[k].dom >= 0 && (uint32_t)(v & 0x7fff) == e[k].id &&
			    (uint32_t)(v >> SMR_MASK_SHIFT & 0x7fff) == e[k].mask)
				found = true;
		assert_true(found);
	}
	assert_int_equal(valid, nr);
	for (unsigned k = 0; k < NSMR; k++)
		if (e[k].dom >= 0)
			assert_int_equal(iopt_smmuv2_drv_detach_masked(dom[e[k].dom],
						e[k].id, e[k].mask), 0);
	for (int d = 0; d < 2; d++) {
		assert_int_equal(iopt_smmuv2_drv_domain_free(dom[d]), 0);
		iopt_pgtable_free(pt[d]);
	}
	rig_down(&r);
}

/* ---- v7s banks -------------------------------------------------------------- */

struct v7s_map {
	uint64_t iova, pa, size;
	unsigned prot;
};

static void test_v7s_bank(void **state)
{
	/* A small page, a large page (64K) and a section (1M), one of them
	 * read-only. Addresses inside the physmem window. */
	static const struct v7s_map m[] = {
		{ 0x00345000ull, 0x80123000ull, 0x1000, IOPT_READ | IOPT_WRITE },
		{ 0x01230000ull, 0x80450000ull, 0x10000, IOPT_READ },
		{ 0x0a100000ull, 0x81300000ull, 0x100000, IOPT_READ | IOPT_WRITE },
	};
	struct iopt_smmuv2_drv_domain *dom, *first;
	struct iopt_pgtable *pt;
	struct iopt_pgtable_gather g;
	struct rig r;
	const uint32_t sid = 0x21;

	(void)state;
	rig_up(&r, "generic", 0, 0);
	/* Bank 0 taken, so that the ASID (= bank) is not 0. */
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &first), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom), 0);
	assert_int_not_equal(iopt_smmuv2_drv_domain_cb(dom), 0);
	unsigned cb = iopt_smmuv2_drv_domain_cb(dom);
	uint64_t cbp = r.cb0 + (uint64_t)cb * 4096;

	pt = make_pt(&r, IOPT_ARM_V7S, 32, 32, dom);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, sid), 0);
	/* An AArch32 short-descriptor bank: CBA2R.VA64 = 0, TTBCR.EAE = 0,
	 * ASID (= bank) in CONTEXTIDR 7:0, CBAR type 1, translation and TEX
	 * remap on. */
	assert_int_equal(reg(&r, R_CBA2R(cb), 4) & CBA2R_VA64, 0);
	assert_int_equal(reg(&r, cbp + CB_TCR, 4) & TCR_EAE, 0);
	assert_int_equal(reg(&r, cbp + CB_CONTEXTIDR, 4) & 0xff, cb);
	assert_int_equal(reg(&r, R_CBAR(cb), 4) >> 16 & 3, 1);
	assert_int_equal(reg(&r, cbp + CB_SCTLR, 4) & (SCTLR_M | SCTLR_TRE),
			 SCTLR_M | SCTLR_TRE);
	/* TTBR0: the 16 KiB-aligned level 1 table, inside the window. */
	uint64_t ttbr = reg(&r, cbp + CB_TTBR0, 8) & 0xffffc000u;

	assert_true(ttbr >= MEM_BASE && ttbr < MEM_BASE + MEM_SIZE);

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		assert_int_equal(iopt_pgtable_map_pages(pt, m[i].iova, m[i].pa, m[i].size, 1,
							m[i].prot, NULL), 0);
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		/* First, a middle and the last byte of each mapping. */
		const uint64_t offs[3] = { 0, m[i].size / 2 + 0x24, m[i].size - 1 };

		for (int k = 0; k < 3; k++) {
			struct iopt_smmuv2_resp resp =
				dev(&r, sid, m[i].iova + offs[k], false);

			assert_int_equal(resp.result, IOPT_SMMUV2_OK);
			assert_int_equal(resp.oa, m[i].pa + offs[k]);
			assert_int_equal(resp.cb, cb);
		}
		struct iopt_smmuv2_resp w = dev(&r, sid, m[i].iova + 8, true);

		if (m[i].prot & IOPT_WRITE) {
			assert_int_equal(w.result, IOPT_SMMUV2_OK);
			assert_int_equal(w.oa, m[i].pa + 8);
		} else {
			assert_int_equal(w.result, IOPT_SMMUV2_ABORT);
			assert_int_not_equal(reg(&r, cbp + CB_FSR, 4) & FSR_PF, 0);
			assert_int_equal(iopt_smmuv2_drv_resume(dom, true), 0);
		}
		/* Just past the mapping: nothing there. */
		assert_int_equal(dev(&r, sid, m[i].iova + m[i].size, false).result,
				 IOPT_SMMUV2_ABORT);
		assert_int_equal(iopt_smmuv2_drv_resume(dom, true), 0);
	}
	/* The hardware walk agrees (ATS1PR through the AArch32 bank). */
	uint64_t got = 0;

	assert_int_equal(iopt_smmuv2_drv_iova_to_phys(dom, m[2].iova + 0x4567, &got), 0);
	assert_int_equal(got, m[2].pa + 0x4567);
	/* Strict unmap of each: the entries are in the model's TLB; the
	 * driver's AArch32 TLBIVA (VA | ASID, 32 bits) + TLBSYNC must remove
	 * them. */
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		iopt_pgtable_gather_init(&g);
		assert_int_equal(iopt_pgtable_unmap_pages(pt, m[i].iova, m[i].size, 1, &g),
				 m[i].size);
		iopt_pgtable_tlb_sync(pt);
		struct iopt_smmuv2_resp resp = dev(&r, sid, m[i].iova, false);

		assert_int_equal(resp.result, IOPT_SMMUV2_ABORT);
		assert_int_not_equal(reg(&r, cbp + CB_FSR, 4) & FSR_TF, 0);
		assert_int_equal(iopt_smmuv2_drv_resume(dom, true), 0);
	}
	assert_int_equal(iopt_smmuv2_drv_detach(dom, sid), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(first), 0);
	iopt_pgtable_free(pt);
	rig_down(&r);
}

/* "mmu-500" says it has no AArch32-S banks (ID0.PTFS): a v7s table is
 * refused and nothing is programmed. */
static void test_v7s_refused(void **state)
{
	struct iopt_smmuv2_drv_domain *dom;
	struct iopt_pgtable *pt;
	struct rig r;

	(void)state;
	rig_up(&r, "mmu-500", 0, 0);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &dom), 0);
	pt = make_pt(&r, IOPT_ARM_V7S, 32, 32, dom);
	assert_int_equal(iopt_smmuv2_drv_attach(dom, pt, 3), -EINVAL);
	assert_int_equal(reg(&r, R_SMR(0), 4), 0);
	assert_int_equal(reg(&r, r.cb0 + 4096ull * iopt_smmuv2_drv_domain_cb(dom) +
			     CB_SCTLR, 4), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_down(&r);
}

/* ---- nested banks ---------------------------------------------------------- */

static void test_nested_bank(void **state)
{
	static const uint64_t va = 0x12345000ull, ipa = 0x40000000ull;
	static const uint64_t pa = 0x83456000ull;	/* in the window */
	static const uint64_t va_ro = 0x12346000ull, ipa_ro = 0x40001000ull;
	static const uint64_t va_hole = 0x22222000ull, ipa_hole = 0x50000000ull;
	struct iopt_smmuv2_drv_domain *s2, *s1, *other;
	struct iopt_pgtable *s2pt, *s1pt;
	struct iopt_pgtable_gather g;
	struct rig r;
	const uint32_t sid = 0x7;

	(void)state;
	rig_up(&r, "generic", 0, 0);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 2, &s2), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(r.drv, 1, &other), 0);
	/* Not before s2 has a table; not over a stage 1 domain. */
	assert_int_equal(iopt_smmuv2_drv_domain_alloc_nested(s2, &s1), -EINVAL);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc_nested(other, &s1), -EINVAL);
	s2pt = make_pt(&r, IOPT_ARM_64_LPAE_S2, 40, 40, s2);
	/* The physmem window at IPA = PA (the stage 1 table lives there and
	 * is fetched through stage 2), then the pages the test uses. */
	assert_int_equal(iopt_pgtable_map_pages(s2pt, MEM_BASE, MEM_BASE, 2ull << 20,
						MEM_SIZE >> 21, IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2pt, ipa, pa, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2pt, ipa_ro, pa + 0x1000, 4096, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(iopt_smmuv2_drv_bind(s2, s2pt), 0);
	assert_int_equal(iopt_smmuv2_drv_bind(s2, s2pt), 0);	/* again: no-op */
	assert_int_equal(iopt_smmuv2_drv_domain_alloc_nested(s2, &s1), 0);
	s1pt = make_pt(&r, IOPT_ARM_64_LPAE_S1, 48, 40, s1);
	assert_int_equal(iopt_pgtable_map_pages(s1pt, va, ipa, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s1pt, va_ro, ipa_ro, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s1pt, va_hole, ipa_hole, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_smmuv2_drv_attach(s1, s1pt, sid), 0);
	/* CBAR: TYPE 3 (17:16), the stage 2 bank in 15:8. */
	unsigned cb1 = iopt_smmuv2_drv_domain_cb(s1), cb2 = iopt_smmuv2_drv_domain_cb(s2);
	uint64_t cbar = reg(&r, R_CBAR(cb1), 4);

	assert_int_equal(cbar >> 16 & 3, 3);
	assert_int_equal(cbar >> 8 & 0xff, cb2);
	/* VA -> IPA -> PA, as the two tables say. */
	struct iopt_smmuv2_resp resp = dev(&r, sid, va + 0x321, false);

	assert_int_equal(resp.result, IOPT_SMMUV2_OK);
	assert_int_equal(resp.oa, pa + 0x321);
	assert_int_equal(dev(&r, sid, va + 8, true).oa, pa + 8);
	/* Stage 2 read-only under a writable stage 1: reads pass, writes
	 * fault; an IPA stage 2 does not map faults. */
	assert_int_equal(dev(&r, sid, va_ro + 4, false).oa, pa + 0x1004);
	assert_int_equal(dev(&r, sid, va_ro + 4, true).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_drv_resume(s1, true), 0);
	assert_int_equal(iopt_smmuv2_drv_resume(s2, true), 0);
	assert_int_equal(dev(&r, sid, va_hole, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_drv_resume(s1, true), 0);
	assert_int_equal(iopt_smmuv2_drv_resume(s2, true), 0);
	/* s2 is in use. */
	assert_int_equal(iopt_smmuv2_drv_domain_free(s2), -EBUSY);
	/* Stage 2 unmap (the combined entry is cached): its TLB ops must
	 * reach the nested entry. */
	assert_int_equal(dev(&r, sid, va, false).result, IOPT_SMMUV2_OK);
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(s2pt, ipa, 4096, 1, &g), 4096);
	iopt_pgtable_tlb_sync(s2pt);
	assert_int_equal(dev(&r, sid, va, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_drv_resume(s1, true), 0);
	assert_int_equal(iopt_smmuv2_drv_resume(s2, true), 0);
	/* Back, then a stage 1 unmap. */
	assert_int_equal(iopt_pgtable_map_pages(s2pt, ipa, pa, 4096, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(dev(&r, sid, va, false).oa, pa);
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(s1pt, va, 4096, 1, &g), 4096);
	iopt_pgtable_tlb_sync(s1pt);
	assert_int_equal(dev(&r, sid, va, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_smmuv2_drv_resume(s1, true), 0);

	assert_int_equal(iopt_smmuv2_drv_detach(s1, sid), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(s1), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(s2), 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(other), 0);
	iopt_pgtable_free(s1pt);
	iopt_pgtable_free(s2pt);
	rig_down(&r);
}

/* ---- the DMA layer over a v7s bank ------------------------------------------ */

static void dma_v7s(enum iopt_inval pol)
{
	static const uint64_t pa = 0x81234567ull;	/* unaligned, 3 pages */
	static const uint64_t size = 0x2a00;
	struct iopt_dma_cfg dc;
	struct iopt_dma *d;
	uint64_t iova = 0;
	struct rig r;
	const uint32_t sid = 0x11;

	rig_up(&r, "generic", 0, 0);
	assert_int_equal(iopt_testbed_dma_cfg(r.tb, &dc), 0);
	dc.pt.fmt = IOPT_ARM_V7S;
	dc.pt.ias = 32;
	dc.pt.oas = 32;
	dc.policy = pol;
	dc.nr_cpus = 1;
	assert_int_equal(iopt_dma_create(&dc, &d), 0);
	assert_int_equal(iopt_dma_attach(d, sid), 0);
	assert_int_equal(iopt_dma_map(d, pa, size, IOPT_READ, ~0ull, 0, &iova), 0);
	assert_true(iova + size <= 1ull << 32);
	assert_int_equal(iova & 0xfff, pa & 0xfff);
	/* Every page of the buffer, and a write refused (read-only). */
	for (uint64_t o = 0; o < size; o += 0x800) {
		struct iopt_smmuv2_resp resp = dev(&r, sid, iova + o, false);

		assert_int_equal(resp.result, IOPT_SMMUV2_OK);
		assert_int_equal(resp.oa, pa + o);
	}
	assert_int_equal(dev(&r, sid, iova, true).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_dma_unmap(d, iova, size, 0), 0);
	if (pol != IOPT_INVAL_STRICT)
		assert_int_equal(iopt_dma_flush(d), 0);
	/* Strict: before unmap returned; lazy: after the flush-all. */
	assert_int_equal(dev(&r, sid, iova, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(dev(&r, sid, iova + 0x2000, false).result, IOPT_SMMUV2_ABORT);
	assert_int_equal(iopt_dma_detach(d, sid), 0);
	iopt_dma_destroy(d);
	rig_down(&r);
}

static void test_dma_v7s(void **state)
{
	(void)state;
	dma_v7s(IOPT_INVAL_STRICT);
	dma_v7s(IOPT_INVAL_LAZY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smr_masks),
		cmocka_unit_test(test_v7s_bank),
		cmocka_unit_test(test_v7s_refused),
		cmocka_unit_test(test_nested_bank),
		cmocka_unit_test(test_dma_v7s),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
