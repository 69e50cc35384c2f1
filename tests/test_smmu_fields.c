/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 model's STE, CD, translation and event records against
 * IHI0070, with an oracle independent of the library:
 *  - STEs and CDs are assembled here bit by bit from the field positions of
 *    IHI0070 5.2 and 5.4 (the constants below, typed from the specification),
 *    never with iopt_smmuv3_ste_encode()/iopt_smmuv3_cd_encode();
 *  - translation tables are written here descriptor by descriptor from
 *    the Arm ARM's VMSAv8-64 formats (D8.3), and every translation is
 *    compared with the physical address the test put in the leaf;
 *  - each field is checked by its effect on a translation, a fault or an
 *    event record (7.3), and every ILLEGAL encoding by the C_BAD_STE /
 *    C_BAD_CD the ID registers imply (5.2.2, 5.4.2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "evt_layout.h"
#include "tutil.h"

/* ---- IHI0070 field positions: {lowest bit, width} ----------------------- */

/* STE, 5.2. */
#define STE_V		0, 1
#define STE_CONFIG	1, 3
#define STE_S1FMT	4, 2
#define STE_S1CTXPTR	6, 50		/* address bits [55:6] */
#define STE_S1CDMAX	59, 5
#define STE_S1DSS	64, 2
#define STE_S1STALLD	91, 1
#define STE_EATS	92, 2
#define STE_S2VMID	128, 16
#define STE_S2T0SZ	160, 6
#define STE_S2SL0	166, 2
#define STE_S2TG	174, 2
#define STE_S2PS	176, 3
#define STE_S2AA64	179, 1
#define STE_S2ENDI	180, 1
#define STE_S2AFFD	181, 1
#define STE_S2PTW	182, 1
#define STE_S2HD	183, 1
#define STE_S2HA	184, 1
#define STE_S2S		185, 1
#define STE_S2R		186, 1
#define STE_S2TTB	196, 48		/* address bits [51:4] */

/* CD, 5.4. */
#define CD_T0SZ		0, 6
#define CD_TG0		6, 2
#define CD_EPD0		14, 1
#define CD_ENDI		15, 1
#define CD_T1SZ		16, 6
#define CD_TG1		22, 2
#define CD_EPD1		30, 1
#define CD_V		31, 1
#define CD_IPS		32, 3
#define CD_AFFD		35, 1
#define CD_WXN		36, 1
#define CD_TBI0		38, 1
#define CD_TBI1		39, 1
#define CD_PAN		40, 1
#define CD_AA64		41, 1
#define CD_HD		42, 1
#define CD_HA		43, 1
#define CD_S		44, 1
#define CD_R		45, 1
#define CD_A		46, 1
#define CD_ASID		48, 16
#define CD_TTB0		68, 48		/* address bits [51:4] */
#define CD_TTB1		132, 48
#define CD_MAIR0	192, 32
#define CD_MAIR1	224, 32

/* Event record (7.3): word 1 bits. */
#define EV_PNU		(1ull << 33)
#define EV_IND		(1ull << 34)
#define EV_RNW		(1ull << 35)
#define EV_S2		(1ull << 39)
#define EV_CLASS(w1)	((unsigned)((w1) >> 40 & 3))
#define EV_TTRNW	(1ull << 44)
#define CLASS_CD	0
#define CLASS_TT	1
#define CLASS_IN	2

/* The fields type defines; fails for a type the table does not list. */
static uint32_t ev_fields(unsigned type)
{
	uint32_t f = evt_layout_fields(type);

	if (!f)
		fail_msg("event type 0x%02x is not one the model may produce", type);
	return f;
}

/* Every bit outside the fields of the record's type is 0 (7.3 RES0). */
static void ev_assert_res0(const uint64_t ev[4])
{
	uint64_t res0[4];

	ev_fields((unsigned)(ev[0] & 0xff));
	assert_true(evt_layout_res0(ev, res0));
	for (unsigned i = 0; i < 4; i++)
		if (res0[i])
			fail_msg("event 0x%02x word %u: RES0 bits 0x%016llx set",
				 (unsigned)(ev[0] & 0xff), i,
				 (unsigned long long)res0[i]);
}

/* VMSAv8-64 descriptors (Arm ARM D8.3). */
#define D_TABLE		3ull		/* table (levels 0-2) or page (level 3) */
#define D_BLOCK		1ull
#define D_AF		(1ull << 10)
#define D_AP1		(1ull << 6)	/* stage 1: EL0 access; stage 2: S2AP read */
#define D_AP2		(1ull << 7)	/* stage 1: read-only; stage 2: S2AP write */
#define D_NG		(1ull << 11)	/* stage 1: not global */
#define D_DBM		(1ull << 51)
#define D_PXN		(1ull << 53)
#define T_PXNTABLE	(1ull << 59)	/* table descriptors, stage 1 */
#define T_UXNTABLE	(1ull << 60)
#define T_APTABLE0	(1ull << 61)
#define T_APTABLE1	(1ull << 62)
#define D_ATTRIDX(n)	((uint64_t)(n) << 2)
#define S2_NORMAL	(0xfull << 2)	/* MemAttr: Normal, Write-Back */
#define S2_DEVICE	(0x1ull << 2)	/* MemAttr: Device-nGnRE */
#define S1_RW		(D_AF)		/* AP = 0b00: EL1 read/write */
#define S2_RW		(D_AF | D_AP1 | D_AP2 | S2_NORMAL)

static void setf(uint64_t w[8], unsigned lo, unsigned width, uint64_t v)
{
	uint64_t m = width == 64 ? ~0ull : (1ull << width) - 1;

	/* No field used here straddles a 64-bit word. */
	assert_true(lo / 64 == (lo + width - 1) / 64);
	w[lo / 64] = (w[lo / 64] & ~(m << lo % 64)) | (v & m) << lo % 64;
}

/* ---- the rig ------------------------------------------------------------ */

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)	/* 256 STEs */
#define CMDQ	(MEM_BASE + 0x010000)
#define EVTQ	(MEM_BASE + 0x020000)	/* 64 records */
#define CDTAB	(MEM_BASE + 0x030000)	/* 64-byte CDs */
#define TABLES	(MEM_BASE + 0x100000)	/* translation tables from here */
#define HOLE	0x10000000000ull	/* no memory: accesses abort */

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	uint64_t cycle, brk;
};

/* Default parameters, caches off so that every translation walks. */
static void params(struct iopt_smmuv3_params *p)
{
	iopt_smmuv3_default_params(p);
	p->tlb.enable = p->walk.enable = p->cfg.enable = false;
}

static void mmio_w(struct rig *r, uint64_t off, unsigned size, uint64_t v)
{
	assert_int_equal(iopt_smmuv3_mmio_write(r->s, off, size, v, r->cycle), 0);
}

static uint64_t mmio_r(struct rig *r, uint64_t off, unsigned size)
{
	uint64_t v;

	assert_int_equal(iopt_smmuv3_mmio_read(r->s, off, size, &v, r->cycle), 0);
	return v;
}

static void setup(struct rig *r, const struct iopt_smmuv3_params *p)
{
	struct iopt_testbed_cfg c;
	uint64_t pa;

	memset(r, 0, sizeof(*r));
	/* Memory (1-cycle accesses) and the model alone. */
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV3, MEM_BASE, 32u << 20);
	c.mem_latency = 1;
	if (p)
		c.v3 = *p;
	else
		params(&c.v3);
	r->tb = tu_testbed(&c);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv3(r->tb);
	/* The first 16 MiB are the test's, in 2 MiB frames. */
	for (uint64_t f = 0; f < 8; f++) {
		assert_int_equal(iopt_physmem_alloc(r->pm, IOPT_PHYSMEM_FRAME, &pa), 0);
		assert_int_equal(pa, MEM_BASE + f * IOPT_PHYSMEM_FRAME);
		memset(iopt_physmem_ptr(r->pm, pa, IOPT_PHYSMEM_FRAME), 0,
		       IOPT_PHYSMEM_FRAME);
	}
	r->brk = TABLES;
	/* 2^8 STEs, 2^8 commands, 2^6 records; SMMUEN, EVENTQEN, CMDQEN. */
	tu_smmuv3_bringup(r->s, &(struct tu_v3_bringup){
		.strtab = STRTAB, .sid_bits = 8, .cmdq = CMDQ, .cmdq_log2 = 8,
		.evtq = EVTQ, .evtq_log2 = 6, .cr0 = 0x1 | 0x4 | 0x8 }, r->cycle);
}

static void teardown(struct rig *r)
{
	iopt_testbed_destroy(r->tb);
}

static uint64_t *ptr(struct rig *r, uint64_t pa)
{
	return iopt_physmem_ptr(r->pm, pa, 8);
}

static void put(struct rig *r, uint64_t pa, const uint64_t w[8])
{
	memcpy(iopt_physmem_ptr(r->pm, pa, 64), w, 64);
}

static void put_ste(struct rig *r, uint32_t sid, const uint64_t w[8])
{
	put(r, STRTAB + 64ull * sid, w);
}

/* ---- translation tables, written here (Arm ARM D8.2, D8.3) ------------- */

struct tt {
	uint64_t root;
	unsigned g;		/* granule lg2 */
	unsigned start;		/* start level */
	unsigned ias;		/* input bits */
};

static uint64_t alloc_table(struct rig *r, unsigned g)
{
	uint64_t pa = (r->brk + (1ull << g) - 1) & ~((1ull << g) - 1);

	r->brk = pa + (1ull << g);
	assert_true(r->brk <= MEM_BASE + (16u << 20));
	memset(iopt_physmem_ptr(r->pm, pa, 1u << g), 0, 1u << g);
	return pa;
}

static struct tt new_tt(struct rig *r, unsigned g, unsigned start, unsigned ias)
{
	struct tt t = { 0, g, start, ias };

	t.root = alloc_table(r, g);
	return t;
}

static unsigned lvl_shift(const struct tt *t, unsigned l)
{
	return t->g + (3 - l) * (t->g - 3);
}

/* The descriptor for va at level leaf, creating tables down to it. */
static uint64_t *slot_of(struct rig *r, const struct tt *t, uint64_t va,
			 unsigned leaf)
{
	uint64_t table = t->root;

	for (unsigned l = t->start;; l++) {
		unsigned shift = lvl_shift(t, l);
		unsigned bits = l == t->start ? t->ias - shift : t->g - 3;
		uint64_t *e = ptr(r, table + ((va >> shift) & ((1ull << bits) - 1)) * 8);

		if (l == leaf)
			return e;
		if (!(*e & 1))
			*e = alloc_table(r, t->g) | D_TABLE;
		table = *e & ((1ull << 48) - 1) & ~((1ull << t->g) - 1);
	}
}

/* Map va to pa with a leaf at level leaf (3: a page, else a block). */
static uint64_t *tmap(struct rig *r, const struct tt *t, uint64_t va,
		      uint64_t pa, uint64_t attrs, unsigned leaf)
{
	uint64_t *e = slot_of(r, t, va, leaf);

	*e = (pa & ~((1ull << lvl_shift(t, leaf)) - 1)) | attrs |
	     (leaf == 3 ? D_TABLE : D_BLOCK);
	return e;
}

/* The address of the table descriptor at level l on the walk for va. */
static uint64_t desc_pa(struct rig *r, const struct tt *t, uint64_t va, unsigned l)
{
	return (uint64_t)((uint8_t *)slot_of(r, t, va, l) -
			  (uint8_t *)iopt_physmem_ptr(r->pm, MEM_BASE, 8)) + MEM_BASE;
}

/* ---- STEs and CDs, bit by bit ------------------------------------------- */

/* A stage 2 STE (Config 0b110) over t: 4K/16K/64K S2TG from t, S2PS 48
 * bits, S2AA64, S2R; S2SL0 from the start level (VTCR.SL0 encoding). */
static void ste_s2(uint64_t w[8], const struct tt *t)
{
	unsigned tg = t->g == 12 ? 0 : t->g == 16 ? 1 : 2;
	unsigned sl0 = t->g == 12 ? 2 - t->start : 3 - t->start;

	memset(w, 0, 64);
	setf(w, STE_V, 1);
	setf(w, STE_CONFIG, 6);
	setf(w, STE_S2T0SZ, 64 - t->ias);
	setf(w, STE_S2SL0, sl0);
	setf(w, STE_S2TG, tg);
	setf(w, STE_S2PS, 5);
	setf(w, STE_S2AA64, 1);
	setf(w, STE_S2R, 1);
	setf(w, STE_S2TTB, t->root >> 4);
}

/* A stage 1 STE (Config 0b101) pointing at one CD. */
static void ste_s1(uint64_t w[8], uint64_t cd)
{
	memset(w, 0, 64);
	setf(w, STE_V, 1);
	setf(w, STE_CONFIG, 5);
	setf(w, STE_S1CTXPTR, cd >> 6);
}

/* A CD translating TTB0 through t (TG0 from t), TTB1 disabled, IPS 48
 * bits, AA64, R and A set, MAIR from mair. */
static void cd_of(uint64_t w[8], const struct tt *t, uint16_t asid, uint64_t mair)
{
	memset(w, 0, 64);
	setf(w, CD_T0SZ, 64 - t->ias);
	setf(w, CD_TG0, t->g == 12 ? 0 : t->g == 16 ? 1 : 2);
	setf(w, CD_EPD1, 1);
	setf(w, CD_V, 1);
	setf(w, CD_IPS, 5);
	setf(w, CD_AA64, 1);
	setf(w, CD_R, 1);
	setf(w, CD_A, 1);
	setf(w, CD_ASID, asid);
	setf(w, CD_TTB0, t->root >> 4);
	setf(w, CD_MAIR0, (uint32_t)mair);
	setf(w, CD_MAIR1, mair >> 32);
}

/* ---- transactions and their records ------------------------------------ */

struct out {
	unsigned fault;
	uint64_t oa;
	unsigned attr;
	bool rec;		/* an event record was written */
	uint64_t ev[4];
};

static struct out go_txn(struct rig *r, struct iopt_smmuv3_txn t)
{
	struct iopt_smmuv3_resp resp;
	struct out o;
	uint32_t p0 = (uint32_t)mmio_r(r, 0x100a8, 4), p1;

	memset(&o, 0, sizeof(o));
	assert_int_equal(iopt_smmuv3_translate(r->s, &t, r->cycle, &resp), 0);
	r->cycle = resp.ready + 1;
	o.fault = resp.fault;
	o.oa = resp.oa;
	o.attr = resp.attr;
	p1 = (uint32_t)mmio_r(r, 0x100a8, 4);
	if ((p1 & 127) != (p0 & 127)) {
		assert_int_equal(p1 & 127, (p0 + 1) & 127);	/* one record */
		memcpy(o.ev, iopt_physmem_ptr(r->pm, EVTQ + (p0 & 63) * 32ull, 32), 32);
		o.rec = true;
		assert_int_equal(o.ev[0] & 0xff, o.fault);
		assert_int_equal(o.ev[0] >> 32, t.sid);
		ev_assert_res0(o.ev);		/* every record of this file */
		mmio_w(r, 0x100ac, 4, p1 & 127);		/* consume */
	}
	return o;
}

static struct out go(struct rig *r, uint32_t sid, uint64_t addr, bool write)
{
	struct iopt_smmuv3_txn t = { .sid = sid, .addr = addr, .write = write,
				   .priv = true };

	return go_txn(r, t);
}

/* A translated transaction gives exactly pa. */
static void expect_pa(struct rig *r, uint32_t sid, uint64_t addr, uint64_t pa)
{
	struct out o = go(r, sid, addr, false);

	assert_int_equal(o.fault, 0);
	assert_int_equal(o.oa, pa);
	assert_false(o.rec);
}

/* A fault: its type, and the record's S2 and CLASS (a record expected). */
static struct out expect_fault(struct rig *r, uint32_t sid, uint64_t addr,
			       bool write, unsigned type, bool s2, unsigned cls)
{
	struct out o = go(r, sid, addr, write);

	assert_int_equal(o.fault, type);
	assert_true(o.rec);
	assert_int_equal(!!(o.ev[1] & EV_S2), s2);
	assert_int_equal(EV_CLASS(o.ev[1]), cls);
	assert_int_equal(o.ev[2], addr);		/* InputAddr */
	return o;
}

/* A configuration error: its type; recorded unless type is an abort. */
static void expect_bad(struct rig *r, uint32_t sid, unsigned type)
{
	struct out o = go(r, sid, 0x1000, false);

	assert_int_equal(o.fault, type);
	assert_int_equal(o.rec, type != IOPT_SMMUV3_EVT_ABORT);
}

/* ---- the walker against the addresses the test mapped ------------------- */

/*
 * Random pages and blocks in hand-written tables of every granule, at
 * stage 1 and at stage 2: each translation must give the physical address
 * the test wrote in the leaf, and an unmapped address a translation fault.
 */
static void test_walker_vs_mapped(void **state)
{
	static const struct { unsigned g, start, ias; } geo[] = {
		{ 12, 0, 48 }, { 12, 1, 39 }, { 14, 1, 47 }, { 14, 2, 36 },
		{ 16, 1, 48 }, { 16, 2, 42 },
	};
	uint64_t rng = 0x5eed;

	(void)state;
	for (unsigned k = 0; k < sizeof(geo) / sizeof(geo[0]); k++) {
		for (unsigned stage = 1; stage <= 2; stage++) {
			struct rig r;
			uint64_t w[8], cd[8];
			uint64_t va[64], pa[64];
			unsigned n = 0;

			setup(&r, NULL);
			struct tt t = new_tt(&r, geo[k].g, geo[k].start, geo[k].ias);

			if (stage == 2) {
				ste_s2(w, &t);
			} else {
				cd_of(cd, &t, 1, 0);
				put(&r, CDTAB, cd);
				ste_s1(w, CDTAB);
			}
			put_ste(&r, 1, w);
			/* Leaves never share the entry of the largest
			 * leaf level used (1 with 4K, else 2). */
			const unsigned region = lvl_shift(&t, t.g == 12 ? 1 : 2);

			while (n < 64) {
				/* Leaves at levels 1 (4K only), 2 and 3. */
				unsigned leaf = 3 - (unsigned)(tu_rand(&rng) % (t.g == 12 ? 3 : 2));
				unsigned shift = lvl_shift(&t, leaf);
				uint64_t v = tu_rand(&rng) & ((1ull << t.ias) - 1) &
					     ~((1ull << shift) - 1);
				uint64_t p = tu_rand(&rng) & ((1ull << 48) - 1) &
					     ~((1ull << shift) - 1);
				bool clash = false;

				for (unsigned i = 0; i < n; i++)
					clash |= (va[i] >> region) == (v >> region);
				if (clash)
					continue;
				tmap(&r, &t, v, p, stage == 1 ? S1_RW : S2_RW, leaf);
				va[n] = v | (tu_rand(&rng) & ((1ull << shift) - 1));
				pa[n] = p | (va[n] & ((1ull << shift) - 1));
				n++;
			}
			for (unsigned i = 0; i < n; i++)
				expect_pa(&r, 1, va[i], pa[i]);
			/* An address in no mapped region. */
			uint64_t hole = 0;

			for (bool used = true; used;) {
				hole = tu_rand(&rng) & ((1ull << t.ias) - 1);
				used = false;
				for (unsigned i = 0; i < n; i++)
					used |= (va[i] >> region) == (hole >> region);
			}

			expect_fault(&r, 1, hole, false, IOPT_SMMUV3_EVT_F_TRANSLATION,
				     stage == 2, CLASS_IN);
			teardown(&r);
		}
	}
}

/* ---- STE fields ------------------------------------------------------------ */

/*
 * Every STE field that shapes a stage 2 translation, by its effect:
 * S2T0SZ, S2SL0, S2TG, S2PS, S2AFFD, S2HA, S2HD, S2R, S2TTB (aligned
 * before use), V and Config.
 */
static void test_ste_stage2_fields(void **state)
{
	struct rig r;
	uint64_t w[8], base[8];
	const uint64_t ipa = 0x40001000, pa = 0x12345000;

	(void)state;
	setup(&r, NULL);
	/* 39-bit IPA, 4K granule, start level 1 (S2SL0 = 0b01). */
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, ipa, pa, S2_RW, 3);
	ste_s2(base, &t);
	put_ste(&r, 1, base);
	expect_pa(&r, 1, ipa + 0x234, pa + 0x234);
	/* S2T0SZ: beyond 2^39, a stage 2 Translation fault with the IPA. */
	struct out o = expect_fault(&r, 1, 1ull << 39, false,
				    IOPT_SMMUV3_EVT_F_TRANSLATION, true, CLASS_IN);

	assert_int_equal(o.ev[3], 1ull << 39);			/* IPA */
	assert_int_equal(o.ev[1] & (EV_RNW | EV_PNU), EV_RNW | EV_PNU);
	/* Stage 1 bypassed: beyond the IAS (48 bits), a stage 1 Address
	 * Size fault (3.4, 7.3.14). */
	expect_fault(&r, 1, 1ull << 50, false, IOPT_SMMUV3_EVT_F_ADDR_SIZE, false, CLASS_IN);
	/* S2PS: 40 bits; an output at 2^41 is an Address Size fault. */
	tmap(&r, &t, ipa + 0x1000, 1ull << 41, S2_RW, 3);
	memcpy(w, base, 64);
	setf(w, STE_S2PS, 2);
	put_ste(&r, 2, w);
	expect_pa(&r, 2, ipa, pa);
	o = expect_fault(&r, 2, ipa + 0x1000, false, IOPT_SMMUV3_EVT_F_ADDR_SIZE, true,
			 CLASS_IN);
	assert_int_equal(o.ev[3], ipa + 0x1000);
	expect_pa(&r, 1, ipa + 0x1000, 1ull << 41);		/* S2PS 48 */
	/* S2AFFD: AF = 0 is an Access fault, or is taken as 1. */
	uint64_t *leaf = tmap(&r, &t, ipa + 0x2000, pa + 0x2000, S2_RW & ~D_AF, 3);

	expect_fault(&r, 1, ipa + 0x2000, false, IOPT_SMMUV3_EVT_F_ACCESS, true, CLASS_IN);
	memcpy(w, base, 64);
	setf(w, STE_S2AFFD, 1);
	put_ste(&r, 3, w);
	expect_pa(&r, 3, ipa + 0x2000, pa + 0x2000);
	assert_int_equal(*leaf & D_AF, 0);			/* not written */
	/* S2HA (bit 184) alone: hardware sets AF. */
	memcpy(w, base, 64);
	setf(w, STE_S2HA, 1);
	put_ste(&r, 4, w);
	expect_pa(&r, 4, ipa + 0x2000, pa + 0x2000);
	assert_int_equal(*leaf & D_AF, D_AF);
	/* S2HD (bit 183) with S2HA: a write to a writable-clean page (DBM,
	 * S2AP write clear) sets S2AP[1]; S2HA alone faults it. */
	leaf = tmap(&r, &t, ipa + 0x3000, pa + 0x3000, (S2_RW & ~D_AP2) | D_DBM, 3);
	expect_fault(&r, 4, ipa + 0x3000, true, IOPT_SMMUV3_EVT_F_PERMISSION, true, CLASS_IN);
	assert_int_equal(*leaf & D_AP2, 0);
	setf(w, STE_S2HD, 1);
	put_ste(&r, 5, w);
	assert_int_equal(go(&r, 5, ipa + 0x3000, true).fault, 0);
	assert_int_equal(*leaf & D_AP2, D_AP2);
	/* S2R = 0: the fault is reported to the device, not recorded. */
	memcpy(w, base, 64);
	setf(w, STE_S2R, 0);
	put_ste(&r, 6, w);
	o = go(&r, 6, 1ull << 39, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_false(o.rec);
	/* S2TTB bits below the table's alignment are taken as zero. */
	memcpy(w, base, 64);
	setf(w, STE_S2TTB, (t.root | 0x40) >> 4);
	put_ste(&r, 7, w);
	expect_pa(&r, 7, ipa, pa);
	/* S2SL0 = 0b00 (start level 2) cannot resolve 39 bits: ILLEGAL. */
	memcpy(w, base, 64);
	setf(w, STE_S2SL0, 0);
	put_ste(&r, 8, w);
	expect_bad(&r, 8, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2TG = 0b11: Reserved, ILLEGAL. */
	memcpy(w, base, 64);
	setf(w, STE_S2TG, 3);
	put_ste(&r, 9, w);
	expect_bad(&r, 9, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* V = 0: C_BAD_STE. Config 0b000: abort, no event; 0b001-0b011
	 * are Reserved and behave as 0b000 (5.2 Config). */
	memcpy(w, base, 64);
	setf(w, STE_V, 0);
	put_ste(&r, 10, w);
	expect_bad(&r, 10, IOPT_SMMUV3_EVT_C_BAD_STE);
	for (unsigned cfg = 0; cfg < 4; cfg++) {
		memcpy(w, base, 64);
		setf(w, STE_CONFIG, cfg);
		put_ste(&r, 11 + cfg, w);
		expect_bad(&r, 11 + cfg, IOPT_SMMUV3_EVT_ABORT);
	}
	/* Config 0b100, bypass: the address passes; beyond the OAS it is a
	 * stage 1 Address Size fault, recorded (3.4). */
	memcpy(w, base, 64);
	setf(w, STE_CONFIG, 4);
	put_ste(&r, 15, w);
	expect_pa(&r, 15, 0xabc123, 0xabc123);
	expect_fault(&r, 15, 1ull << 49, false, IOPT_SMMUV3_EVT_F_ADDR_SIZE, false, CLASS_IN);
	teardown(&r);
}

/*
 * STE encodings that are ILLEGAL given what this SMMU advertises (5.2.2
 * SteIllegal()), and fields IGNORED where the ID registers say so.
 */
static void test_ste_illegal(void **state)
{
	struct iopt_smmuv3_params p;
	struct rig r;
	uint64_t w[8], base[8], cd[8];

	(void)state;
	/* HTTU = 0b01 (Access flag only), no 64K granule, 40-bit OAS. */
	params(&p);
	p.httu = 1;
	p.gran64k = false;
	p.oas = 40;
	setup(&r, &p);
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, 0x1000, 0x2000, S2_RW, 3);
	ste_s2(base, &t);
	setf(base, STE_S2PS, 2);
	put_ste(&r, 1, base);
	expect_pa(&r, 1, 0x1000, 0x2000);
	/* S2HA is allowed with HTTU = 0b01, S2HD is not. */
	memcpy(w, base, 64);
	setf(w, STE_S2HA, 1);
	put_ste(&r, 2, w);
	expect_pa(&r, 2, 0x1000, 0x2000);
	setf(w, STE_S2HD, 1);
	put_ste(&r, 3, w);
	expect_bad(&r, 3, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* A granule IDR5 does not advertise. */
	struct tt t64 = new_tt(&r, 16, 2, 36);

	ste_s2(w, &t64);
	setf(w, STE_S2PS, 2);
	put_ste(&r, 4, w);
	expect_bad(&r, 4, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2T0SZ below 64 - IAS (IAS = OAS = 40 here): ILLEGAL. */
	struct tt t41 = new_tt(&r, 12, 1, 41);

	ste_s2(w, &t41);
	setf(w, STE_S2PS, 2);
	put_ste(&r, 5, w);
	expect_bad(&r, 5, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2TTB beyond the effective S2PS: ILLEGAL. */
	memcpy(w, base, 64);
	setf(w, STE_S2TTB, (1ull << 40) >> 4);
	put_ste(&r, 6, w);
	expect_bad(&r, 6, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2ENDI = 1 with IDR0.TTENDIAN = 0b10 (little-endian only). */
	assert_int_equal(mmio_r(&r, 0, 4) >> 21 & 3, 2);
	memcpy(w, base, 64);
	setf(w, STE_S2ENDI, 1);
	put_ste(&r, 7, w);
	expect_bad(&r, 7, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2S = 1 with IDR0.STALL_MODEL = 0b01. */
	assert_int_equal(mmio_r(&r, 0, 4) >> 24 & 3, 1);
	memcpy(w, base, 64);
	setf(w, STE_S2S, 1);
	put_ste(&r, 8, w);
	expect_bad(&r, 8, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* S2AA64 = 0: VMSAv8-32 LPAE, not implemented (IDR0.TTF = 0b10). */
	assert_int_equal(mmio_r(&r, 0, 4) >> 2 & 3, 2);
	memcpy(w, base, 64);
	setf(w, STE_S2AA64, 0);
	put_ste(&r, 9, w);
	expect_bad(&r, 9, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* Stage 1: S1STALLD = 1 with STALL_MODEL = 0b01 is ILLEGAL; so is an
	 * S1ContextPtr beyond the OAS; S1CDMax above IDR1.SSIDSIZE. */
	cd_of(cd, &t, 1, 0);
	put(&r, CDTAB, cd);
	ste_s1(w, CDTAB);
	put_ste(&r, 10, w);
	expect_pa(&r, 10, 0x1000, 0x2000);
	setf(w, STE_S1STALLD, 1);
	put_ste(&r, 11, w);
	expect_bad(&r, 11, IOPT_SMMUV3_EVT_C_BAD_STE);
	ste_s1(w, 1ull << 40);
	put_ste(&r, 12, w);
	expect_bad(&r, 12, IOPT_SMMUV3_EVT_C_BAD_STE);
	ste_s1(w, CDTAB);
	setf(w, STE_S1CDMAX, p.ssidsize + 1);
	put_ste(&r, 13, w);
	expect_bad(&r, 13, IOPT_SMMUV3_EVT_C_BAD_STE);
	teardown(&r);

	/* No substreams (IDR1.SSIDSIZE = 0): S1CDMax is IGNORED, the STE
	 * points at one CD, and a SubstreamID is refused. */
	params(&p);
	p.ssidsize = 0;
	setup(&r, &p);
	t = new_tt(&r, 12, 1, 39);
	tmap(&r, &t, 0x1000, 0x2000, S1_RW, 3);
	cd_of(cd, &t, 1, 0);
	put(&r, CDTAB, cd);
	ste_s1(w, CDTAB);
	setf(w, STE_S1CDMAX, 3);
	put_ste(&r, 1, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	struct iopt_smmuv3_txn sub = { .sid = 1, .ssv = true, .ssid = 1, .addr = 0x1000 };

	assert_int_equal(go_txn(&r, sub).fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	/* IDR0.CD2L: two-level CD tables are implemented, so advertised. */
	assert_int_equal(mmio_r(&r, 0, 4) >> 19 & 1, 1);
	teardown(&r);
}

/* S1CDMax, S1DSS and the CD table (5.2): substreams and the default one. */
static void test_ste_substreams(void **state)
{
	struct rig r;
	uint64_t w[8], cd[8];

	(void)state;
	setup(&r, NULL);
	/* Four CDs (S1CDMax = 2), CD n maps 0x1000 to 0x10000 * (n + 1). */
	for (unsigned n = 0; n < 4; n++) {
		struct tt t = new_tt(&r, 12, 1, 39);

		tmap(&r, &t, 0x1000, 0x10000ull * (n + 1), S1_RW, 3);
		cd_of(cd, &t, (uint16_t)(n + 1), 0);
		put(&r, CDTAB + 64 * n, cd);
	}
	for (unsigned dss = 0; dss < 4; dss++) {
		ste_s1(w, CDTAB);
		setf(w, STE_S1CDMAX, 2);
		setf(w, STE_S1DSS, dss);
		put_ste(&r, 1 + dss, w);
	}
	struct iopt_smmuv3_txn t = { .sid = 1, .addr = 0x1000, .priv = true };

	/* With a SubstreamID: that CD; beyond 2^S1CDMax, refused. */
	for (unsigned n = 1; n < 4; n++) {
		t.ssv = true;
		t.ssid = n;
		struct out o = go_txn(&r, t);

		assert_int_equal(o.fault, 0);
		assert_int_equal(o.oa, 0x10000ull * (n + 1));
	}
	t.ssid = 4;
	assert_int_equal(go_txn(&r, t).fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	/* Without one: S1DSS 0b00 terminates, 0b01 bypasses stage 1, 0b10
	 * uses substream 0, 0b11 is Reserved and behaves as 0b00. */
	t.ssv = false;
	t.ssid = 0;
	static const unsigned want[4] = { IOPT_SMMUV3_EVT_F_STREAM_DISABLED, 0, 0,
					  IOPT_SMMUV3_EVT_F_STREAM_DISABLED };
	static const uint64_t oa[4] = { 0, 0x1000, 0x10000, 0 };

	for (unsigned dss = 0; dss < 4; dss++) {
		t.sid = 1 + dss;
		struct out o = go_txn(&r, t);

		assert_int_equal(o.fault, want[dss]);
		if (!want[dss])
			assert_int_equal(o.oa, oa[dss]);
		else
			assert_true(o.rec);
	}
	/* S1DSS = 0b10: substream 0 is no longer available with an SSID. */
	t.sid = 3;
	t.ssv = true;
	t.ssid = 0;
	assert_int_equal(go_txn(&r, t).fault, IOPT_SMMUV3_EVT_F_STREAM_DISABLED);
	t.sid = 1;
	assert_int_equal(go_txn(&r, t).oa, 0x10000);
	teardown(&r);
}

/* ---- CD fields ------------------------------------------------------------- */

/*
 * Every CD field that shapes a stage 1 translation, by its effect: T0SZ,
 * TG0, EPD0, T1SZ, TG1, EPD1, IPS, AFFD, WXN, TBI0, PAN, HA, HD, R, ASID
 * (through MAIR's attribute), TTB0 (aligned before use), MAIR.
 */
static void test_cd_fields(void **state)
{
	struct rig r;
	uint64_t w[8], base[8], ste[8];
	const uint64_t mair = 0x0011223344556677ull;

	(void)state;
	setup(&r, NULL);
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, 0x5000, 0x9000, S1_RW | D_ATTRIDX(3), 3);
	cd_of(base, &t, 7, mair);
	/* StreamID n uses the CD at CDTAB + 64n. */
#define USE_CD(n, cdw)                                                      \
	do {                                                                \
		put(&r, CDTAB + 64 * (n), cdw);                             \
		ste_s1(ste, CDTAB + 64 * (n));                              \
		put_ste(&r, n, ste);                                        \
	} while (0)
	USE_CD(1, base);
	struct out o = go(&r, 1, 0x5123, false);

	assert_int_equal(o.fault, 0);
	assert_int_equal(o.oa, 0x9123);
	assert_int_equal(o.attr, (mair >> 24) & 0xff);		/* MAIR, AttrIndx 3 */
	/* T0SZ: 2^39 is outside TTB0's region: stage 1 Translation fault,
	 * CLASS = IN, S2 = 0. */
	expect_fault(&r, 1, 1ull << 39, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* EPD0: TTB0 walks disabled. */
	memcpy(w, base, 64);
	setf(w, CD_EPD0, 1);
	USE_CD(2, w);
	expect_fault(&r, 2, 0x5000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* TTB1: T1SZ 25, TG1 = 0b10 (4K), EPD1 = 0; the top of the address
	 * space goes through TTB1. */
	struct tt t1 = new_tt(&r, 12, 1, 39);
	const uint64_t hi = 0xffffff8000007000ull;

	tmap(&r, &t1, hi, 0xa000, S1_RW, 3);
	memcpy(w, base, 64);
	setf(w, CD_EPD1, 0);
	setf(w, CD_T1SZ, 25);
	setf(w, CD_TG1, 2);
	setf(w, CD_TTB1, t1.root >> 4);
	USE_CD(3, w);
	expect_pa(&r, 3, hi + 0x45, 0xa045);
	expect_pa(&r, 3, 0x5000, 0x9000);
	expect_fault(&r, 1, hi, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* TBI1: a tagged upper address goes through TTB1. */
	setf(w, CD_TBI1, 1);
	USE_CD(22, w);
	expect_pa(&r, 22, 0x5affff8000007010ull, 0xa010);
	expect_fault(&r, 3, 0x5affff8000007010ull, false, IOPT_SMMUV3_EVT_F_TRANSLATION,
		     false, CLASS_IN);
	/* TG1 = 0b11 is the 64K granule (TG0's encoding differs): T1SZ 22,
	 * start level 2. */
	struct tt t1k = new_tt(&r, 16, 2, 42);
	const uint64_t hi64 = 0xfffffc0000070000ull;

	tmap(&r, &t1k, hi64, 0x7770000, S1_RW, 3);
	setf(w, CD_TBI1, 0);
	setf(w, CD_T1SZ, 22);
	setf(w, CD_TG1, 3);
	setf(w, CD_TTB1, t1k.root >> 4);
	USE_CD(23, w);
	expect_pa(&r, 23, hi64 + 0x1234, 0x7771234);
	/* TG1 = 0b00 is Reserved: ILLEGAL while TTB1 is enabled. */
	setf(w, CD_TG1, 0);
	USE_CD(4, w);
	expect_bad(&r, 4, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* IPS: 36 bits; an output at 2^37 is an Address Size fault. */
	tmap(&r, &t, 0x6000, 1ull << 37, S1_RW, 3);
	expect_pa(&r, 1, 0x6000, 1ull << 37);
	memcpy(w, base, 64);
	setf(w, CD_IPS, 1);
	USE_CD(5, w);
	expect_fault(&r, 5, 0x6000, false, IOPT_SMMUV3_EVT_F_ADDR_SIZE, false, CLASS_IN);
	/* AFFD and HA on a page with AF = 0. */
	uint64_t *leaf = tmap(&r, &t, 0x7000, 0xb000, S1_RW & ~D_AF, 3);

	expect_fault(&r, 1, 0x7000, false, IOPT_SMMUV3_EVT_F_ACCESS, false, CLASS_IN);
	memcpy(w, base, 64);
	setf(w, CD_AFFD, 1);
	USE_CD(6, w);
	expect_pa(&r, 6, 0x7000, 0xb000);
	assert_int_equal(*leaf & D_AF, 0);
	memcpy(w, base, 64);
	setf(w, CD_HA, 1);
	USE_CD(7, w);
	expect_pa(&r, 7, 0x7000, 0xb000);
	assert_int_equal(*leaf & D_AF, D_AF);
	/* HD: a write to a writable-clean page (DBM, AP[2] = 1) clears
	 * AP[2]; without HD it is a Permission fault. */
	leaf = tmap(&r, &t, 0x8000, 0xc000, S1_RW | D_AP2 | D_DBM, 3);
	expect_fault(&r, 7, 0x8000, true, IOPT_SMMUV3_EVT_F_PERMISSION, false, CLASS_IN);
	setf(w, CD_HD, 1);
	USE_CD(8, w);
	assert_int_equal(go(&r, 8, 0x8000, true).fault, 0);
	assert_int_equal(*leaf & D_AP2, 0);
	/* WXN: a writable page does not execute. */
	memcpy(w, base, 64);
	setf(w, CD_WXN, 1);
	USE_CD(9, w);
	struct iopt_smmuv3_txn x = { .sid = 9, .addr = 0x5000, .exec = true, .priv = true };

	assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
	x.sid = 1;
	assert_int_equal(go_txn(&r, x).fault, 0);
	/* A page EL0 may write (AP = 0b01) is privileged execute-never;
	 * EL0 may execute it, and EL1 may execute one EL0 can only read
	 * (AP = 0b11). */
	tmap(&r, &t, 0xa000, 0xe000, S1_RW | D_AP1, 3);
	tmap(&r, &t, 0xb000, 0xf000, S1_RW | D_AP1 | D_AP2, 3);
	x.addr = 0xa000;
	assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
	x.priv = false;
	assert_int_equal(go_txn(&r, x).fault, 0);
	x.priv = true;
	x.addr = 0xb000;
	assert_int_equal(go_txn(&r, x).fault, 0);
	/* PAN: no privileged data access to an EL0-accessible page. */
	tmap(&r, &t, 0x9000, 0xd000, S1_RW | D_AP1, 3);
	memcpy(w, base, 64);
	setf(w, CD_PAN, 1);
	USE_CD(10, w);
	assert_int_equal(go(&r, 10, 0x9000, false).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
	expect_pa(&r, 1, 0x9000, 0xd000);
	/* TBI0: the top byte is a tag. */
	memcpy(w, base, 64);
	setf(w, CD_TBI0, 1);
	USE_CD(11, w);
	expect_pa(&r, 11, 0x5a00000000005010ull, 0x9010);
	expect_fault(&r, 1, 0x5a00000000005010ull, false, IOPT_SMMUV3_EVT_F_TRANSLATION,
		     false, CLASS_IN);
	/* R = 0: the stage 1 fault is not recorded. */
	memcpy(w, base, 64);
	setf(w, CD_R, 0);
	USE_CD(12, w);
	o = go(&r, 12, 1ull << 39, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_false(o.rec);
	/* TTB0 bits below the start table's alignment are taken as zero. */
	memcpy(w, base, 64);
	setf(w, CD_TTB0, (t.root | 0x80) >> 4);
	USE_CD(13, w);
	expect_pa(&r, 13, 0x5000, 0x9000);
	/* V = 0, S = 1 (no stall model), A = 0 (TERM_MODEL = 1), AA64 = 0
	 * (no VMSAv8-32), ENDI = 1 (TTENDIAN = 0b10): C_BAD_CD. */
	static const unsigned bad_lo[] = { 31, 44, 46, 41, 15 };
	static const uint64_t bad_val[] = { 0, 1, 0, 0, 1 };

	for (unsigned i = 0; i < 5; i++) {
		memcpy(w, base, 64);
		setf(w, bad_lo[i], 1, bad_val[i]);
		USE_CD(14 + i, w);
		expect_bad(&r, 14 + i, IOPT_SMMUV3_EVT_C_BAD_CD);
	}
	/* ENDI is IGNORED when both TTBs are disabled. */
	memcpy(w, base, 64);
	setf(w, CD_ENDI, 1);
	setf(w, CD_EPD0, 1);
	USE_CD(19, w);
	expect_fault(&r, 19, 0x5000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* T0SZ 12 with the 64K granule: IDR5.VAX = 0 allows 48-bit VAs
	 * only (T0SZ >= 16). */
	assert_int_equal(mmio_r(&r, 0x14, 4) >> 10 & 3, 0);
	struct tt t64 = new_tt(&r, 16, 1, 48);

	tmap(&r, &t64, 0x10000, 0x30000, S1_RW, 3);
	cd_of(w, &t64, 1, 0);
	USE_CD(20, w);
	expect_pa(&r, 20, 0x10010, 0x30010);
	setf(w, CD_T0SZ, 12);
	USE_CD(21, w);
	expect_bad(&r, 21, IOPT_SMMUV3_EVT_C_BAD_CD);
	teardown(&r);
#undef USE_CD
}

/* CD encodings ILLEGAL given the ID registers (5.4.2 CdIllegal()). */
static void test_cd_illegal(void **state)
{
	struct iopt_smmuv3_params p;
	struct rig r;
	uint64_t w[8], ste[8];

	(void)state;
	/* HTTU = 0b01, no 16K granule, a 52-bit OAS. */
	params(&p);
	p.httu = 1;
	p.gran16k = false;
	p.oas = 52;
	setup(&r, &p);
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, 0x1000, 0x2000, S1_RW, 3);
	ste_s1(ste, CDTAB);
	put_ste(&r, 1, ste);
	cd_of(w, &t, 1, 0);
	put(&r, CDTAB, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	/* HA is allowed with HTTU = 0b01; HD is not. */
	setf(w, CD_HA, 1);
	put(&r, CDTAB, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	setf(w, CD_HD, 1);
	put(&r, CDTAB, w);
	expect_bad(&r, 1, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* TG0 = 16K, not advertised. */
	cd_of(w, &t, 1, 0);
	setf(w, CD_TG0, 2);
	put(&r, CDTAB, w);
	expect_bad(&r, 1, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* TTB0 above 48 bits with a 4K granule (CD.DS = 0), IPS 52 bits. */
	cd_of(w, &t, 1, 0);
	setf(w, CD_IPS, 6);
	put(&r, CDTAB, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	setf(w, CD_TTB0, (1ull << 49) >> 4);
	put(&r, CDTAB, w);
	expect_bad(&r, 1, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* TTB0 beyond the effective IPS (40 bits). */
	cd_of(w, &t, 1, 0);
	setf(w, CD_IPS, 2);
	setf(w, CD_TTB0, (1ull << 41) >> 4);
	put(&r, CDTAB, w);
	expect_bad(&r, 1, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* 52-bit PAs implemented, the 64K granule (Arm ARM D8.3, FEAT_LPA):
	 * descriptor bits [15:12] are OA[51:48] whatever the IPS, so with
	 * IPS 48 bits such an output is an Address Size fault; level 1
	 * blocks exist (AArch64.BlockDescSupported() asks PAMax = 52). */
	struct tt t64 = new_tt(&r, 16, 1, 48);

	*slot_of(&r, &t64, 0x10000, 3) = 0x20000 | 3ull << 12 | S1_RW | D_TABLE;
	*slot_of(&r, &t64, 1ull << 42, 1) = 5ull << 42 | S1_RW | D_BLOCK;
	cd_of(w, &t64, 1, 0);
	put(&r, CDTAB, w);
	expect_fault(&r, 1, 0x10008, false, IOPT_SMMUV3_EVT_F_ADDR_SIZE, false, CLASS_IN);
	expect_pa(&r, 1, (1ull << 42) + 0x1234, (5ull << 42) + 0x1234);
	setf(w, CD_IPS, 6);
	put(&r, CDTAB, w);
	expect_pa(&r, 1, 0x10008, 3ull << 48 | 0x20008);
	teardown(&r);
}

/*
 * Hierarchical permissions (Arm ARM D8.4.2): IDR3.HAD = 0, so the
 * APTable, UXNTable and PXNTable bits of stage 1 table descriptors limit
 * every leaf below them, also when the walk starts from a walk cache
 * entry below the table that set them; a write to a writable-clean page
 * made read-only by APTable[1] is a Permission fault, never a dirty-state
 * update (IHI0070 3.13.3.1).
 */
static void test_hierarchical_permissions(void **state)
{
	struct iopt_smmuv3_params p;
	struct rig r;
	uint64_t w[8], ste[8];

	(void)state;
	for (int wc = 0; wc < 2; wc++) {
		params(&p);
		p.walk.enable = wc;
		setup(&r, &p);
		assert_int_equal(mmio_r(&r, 0xc, 4) >> 2 & 1, 0);	/* IDR3.HAD */
		struct tt t = new_tt(&r, 12, 1, 39);
		/* Four 2 MiB regions, each under its own level 2 table, all
		 * pages EL0 read/write, writable-clean with DBM at 0x...3000. */
		static const uint64_t tbits[4] = { T_APTABLE0, T_APTABLE1, T_UXNTABLE,
						   T_PXNTABLE };

		for (unsigned k = 0; k < 4; k++) {
			uint64_t va = (k + 1) << 21;

			tmap(&r, &t, va + 0x1000, 0x100000 * (k + 1), S1_RW | D_AP1, 3);
			tmap(&r, &t, va + 0x3000, 0x100000 * (k + 1) + 0x3000,
			     S1_RW | D_AP1 | D_AP2 | D_DBM, 3);
			*slot_of(&r, &t, va, 2) |= tbits[k];
		}
		cd_of(w, &t, 1, 0);
		setf(w, CD_HA, 1);
		setf(w, CD_HD, 1);
		put(&r, CDTAB, w);
		ste_s1(ste, CDTAB);
		put_ste(&r, 1, ste);
		for (int pass = 0; pass < 2; pass++) {	/* the second from the walk cache */
			struct iopt_smmuv3_txn x = { .sid = 1, .priv = true };
			unsigned want;

			/* APTable[0]: no EL0 access; EL1 may read, write, and
			 * (the page is no longer EL0-writable) execute. */
			x.addr = (1 << 21) + 0x1000;
			x.priv = false;
			assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
			x.priv = true;
			x.write = true;
			assert_int_equal(go_txn(&r, x).fault, 0);
			x.write = false;
			x.exec = true;
			assert_int_equal(go_txn(&r, x).fault, 0);
			x.exec = false;
			/* APTable[1]: no write, and no dirty-state update. */
			x.addr = (2 << 21) + 0x1000;
			assert_int_equal(go_txn(&r, x).fault, 0);
			x.write = true;
			assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
			x.addr = (2 << 21) + 0x3000;
			assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
			assert_int_equal(*slot_of(&r, &t, x.addr, 3) & D_AP2, D_AP2);
			x.write = false;
			/* UXNTable: no EL0 execution; PXNTable: no EL1. */
			x.exec = true;
			x.priv = false;
			x.addr = (3 << 21) + 0x1000;
			assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
			x.addr = (4 << 21) + 0x1000;
			assert_int_equal(go_txn(&r, x).fault, 0);
			x.priv = true;
			x.addr = (4 << 21) + 0x3000;	/* EL0 read-only: not implicit PXN */
			assert_int_equal(go_txn(&r, x).fault, IOPT_SMMUV3_EVT_F_PERMISSION);
			x.addr = (3 << 21) + 0x3000;
			want = 0;
			assert_int_equal(go_txn(&r, x).fault, want);
		}
		struct iopt_smmuv3_stats st;

		iopt_smmuv3_get_stats(r.s, &st);
		assert_int_equal(st.walk_cache_hits > 0, wc == 1);
		teardown(&r);
	}
}

/* ---- nested translation: event records ---------------------------------- */

struct nest {
	struct tt s1, s2;
	uint64_t cd_ipa;
};

/*
 * Stage 2 maps the stage 1 tables and the CD to themselves (4K pages,
 * IPA = PA) and IPA 0x40000000 + n * 4K to PA 0x50000000 + n * 4K; stage
 * 1 maps VA 0x1000 to IPA 0x40000000 and VA 0x2000 to IPA 0x40001000.
 */
static void nest_setup(struct rig *r, struct nest *n, uint64_t ste[8])
{
	n->s2 = new_tt(r, 12, 1, 39);
	n->s1 = new_tt(r, 12, 1, 39);
	tmap(r, &n->s1, 0x1000, 0x40000000, S1_RW, 3);
	tmap(r, &n->s1, 0x2000, 0x40001000, S1_RW, 3);
	for (uint64_t a = TABLES; a < r->brk + 0x4000; a += 0x1000)
		tmap(r, &n->s2, a, a, S2_RW, 3);
	for (uint64_t k = 0; k < 4; k++)
		tmap(r, &n->s2, 0x40000000 + k * 0x1000, 0x50000000 + k * 0x1000,
		     S2_RW, 3);
	n->cd_ipa = CDTAB;
	tmap(r, &n->s2, CDTAB, CDTAB, S2_RW, 3);
	ste_s2(ste, &n->s2);
	setf(ste, STE_CONFIG, 7);
	setf(ste, STE_S1CTXPTR, CDTAB >> 6);
}

/*
 * Which stage, which CLASS, which IPA and TTRnW each nested fault path
 * records (7.3.12-16), and which configuration decides that it is
 * recorded (5.5: CD.R for stage 1, STE.S2R for stage 2, CD fetch and
 * table walk included); F_WALK_EABT is always recorded.
 */
static void test_nested_records(void **state)
{
	struct rig r;
	struct nest n;
	uint64_t ste[8], cd[8];

	(void)state;
	setup(&r, NULL);
	nest_setup(&r, &n, ste);
	cd_of(cd, &n.s1, 1, 0);
	put(&r, CDTAB, cd);
	put_ste(&r, 1, ste);
	expect_pa(&r, 1, 0x1234, 0x50000234);
	expect_pa(&r, 1, 0x2010, 0x50001010);
	/* Stage 1 fault: S2 = 0, CLASS = IN. */
	expect_fault(&r, 1, 0x3000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* Stage 2 fault on the output IPA: S2 = 1, CLASS = IN, IPA. */
	tmap(&r, &n.s1, 0x4000, 0x40100000, S1_RW, 3);
	struct out o = expect_fault(&r, 1, 0x4008, true, IOPT_SMMUV3_EVT_F_TRANSLATION,
				    true, CLASS_IN);

	assert_int_equal(o.ev[3], 0x40100000);
	assert_int_equal(o.ev[1] & (EV_RNW | EV_IND), 0);	/* a write */
	/* Stage 2 fault on a stage 1 table read: CLASS = TT, TTRnW = 1, IPA
	 * = the descriptor's address (page of it: IPA[51:12]). */
	uint64_t l3 = desc_pa(&r, &n.s1, 0x5000, 3);
	uint64_t *s2l = slot_of(&r, &n.s2, l3, 3), keep = *s2l;

	*s2l = 0;
	o = expect_fault(&r, 1, 0x5000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, true, CLASS_TT);
	assert_int_equal(o.ev[3], l3 & ~0xfffull);
	assert_true(o.ev[1] & EV_TTRNW);
	*s2l = keep;
	/* Stage 2 fault on the CD fetch: CLASS = CD, IPA = the CD's. */
	uint64_t *s2cd = slot_of(&r, &n.s2, CDTAB, 3);

	keep = *s2cd;
	*s2cd = 0;
	o = expect_fault(&r, 1, 0x1000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, true, CLASS_CD);
	assert_int_equal(o.ev[3], CDTAB);
	/* ... recorded as STE.S2R says, whatever the CD. */
	setf(ste, STE_S2R, 0);
	put_ste(&r, 2, ste);
	o = go(&r, 2, 0x1000, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_false(o.rec);
	*s2cd = keep;
	/* S2R = 0, CD.R = 1: stage 2 faults (IN and TT) silent, stage 1
	 * faults recorded. */
	o = go(&r, 2, 0x4000, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_false(o.rec);
	expect_fault(&r, 2, 0x3000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, false, CLASS_IN);
	/* S2R = 1, CD.R = 0: the other way round. */
	setf(ste, STE_S2R, 1);
	setf(ste, STE_S1CTXPTR, (CDTAB + 64) >> 6);
	put_ste(&r, 3, ste);
	tmap(&r, &n.s2, CDTAB + 64, CDTAB + 64, S2_RW, 3);
	setf(cd, CD_R, 0);
	put(&r, CDTAB + 64, cd);
	o = go(&r, 3, 0x3000, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_false(o.rec);
	expect_fault(&r, 3, 0x4000, false, IOPT_SMMUV3_EVT_F_TRANSLATION, true, CLASS_IN);
	/* F_WALK_EABT on a stage 1 descriptor (its IPA maps to a hole):
	 * S2 = 0, CLASS = TT, FetchAddr = the PA read; recorded although
	 * CD.R = 0. */
	uint64_t l3b = desc_pa(&r, &n.s1, 0x6000, 3);

	*slot_of(&r, &n.s2, l3b, 3) = HOLE | S2_RW | D_TABLE;
	o = expect_fault(&r, 3, 0x6000, false, IOPT_SMMUV3_EVT_F_WALK_EABT, false, CLASS_TT);
	assert_int_equal(o.ev[3], HOLE + (l3b & 0xfff));
	teardown(&r);
}

/*
 * Hardware updates of stage 1 descriptors are writes through stage 2
 * (3.13): a stage 2 mapping that does not permit writing the table gives
 * a stage 2 Permission fault, CLASS = TT, TTRnW = 0, and the descriptor
 * stays as it was; a writable one is updated. S2PTW: a table in Device
 * memory is a stage 2 Permission fault, CLASS = TT, TTRnW = 1.
 */
static void test_nested_httu_and_ptw(void **state)
{
	struct rig r;
	struct nest n;
	uint64_t ste[8], cd[8];

	(void)state;
	setup(&r, NULL);
	nest_setup(&r, &n, ste);
	cd_of(cd, &n.s1, 1, 0);
	setf(cd, CD_HA, 1);
	put(&r, CDTAB, cd);
	put_ste(&r, 1, ste);
	uint64_t *leaf = slot_of(&r, &n.s1, 0x1000, 3);
	uint64_t l3 = desc_pa(&r, &n.s1, 0x1000, 3);
	uint64_t *s2l = slot_of(&r, &n.s2, l3, 3);

	*leaf &= ~D_AF;
	*s2l &= ~D_AP2;				/* stage 2: read-only */
	uint64_t before = *leaf;
	struct out o = expect_fault(&r, 1, 0x1000, false, IOPT_SMMUV3_EVT_F_PERMISSION,
				    true, CLASS_TT);

	assert_false(o.ev[1] & EV_TTRNW);		/* a descriptor write */
	assert_true(o.ev[1] & EV_RNW);			/* the input: a read */
	assert_int_equal(o.ev[3], l3 & ~0xfffull);
	assert_int_equal(*leaf, before);
	/* Writable stage 2: AF is set. */
	*s2l |= D_AP2;
	expect_pa(&r, 1, 0x1000, 0x50000000);
	assert_int_equal(*leaf & D_AF, D_AF);
	/* Stage 2 writable-clean (DBM) with S2HA/S2HD: the update makes the
	 * stage 2 page dirty. */
	*leaf &= ~D_AF;
	*s2l = (*s2l & ~D_AP2) | D_DBM;
	setf(ste, STE_S2HA, 1);
	setf(ste, STE_S2HD, 1);
	put_ste(&r, 2, ste);
	expect_pa(&r, 2, 0x1000, 0x50000000);
	assert_int_equal(*leaf & D_AF, D_AF);
	assert_int_equal(*s2l & D_AP2, D_AP2);
	/* The stage 2 translation of a CD fetch: with S2HA its AF is set
	 * (3.13.2), but S2AP[1] is never set for it (3.13.3.1), even with
	 * S2HD and DBM. */
	uint64_t *s2cdl = slot_of(&r, &n.s2, CDTAB, 3);

	*s2cdl = (*s2cdl & ~(D_AF | D_AP2)) | D_DBM;
	put_ste(&r, 4, ste);
	expect_pa(&r, 4, 0x1000, 0x50000000);
	assert_int_equal(*s2cdl & (D_AF | D_AP2), D_AF);
	/* S2PTW: the stage 1 level 3 table's page as Device memory. */
	*s2l = (*s2l & ~(0xfull << 2)) | S2_DEVICE;
	setf(ste, STE_S2PTW, 1);
	put_ste(&r, 3, ste);
	o = expect_fault(&r, 3, 0x1000, false, IOPT_SMMUV3_EVT_F_PERMISSION, true, CLASS_TT);
	assert_true(o.ev[1] & EV_TTRNW);
	assert_int_equal(o.ev[3], l3 & ~0xfffull);
	expect_pa(&r, 2, 0x1000, 0x50000000);			/* without S2PTW */
	/* ... and a CD in Device memory: CLASS = CD. */
	uint64_t *s2cd = slot_of(&r, &n.s2, CDTAB, 3);

	*s2cd = (*s2cd & ~(0xfull << 2)) | S2_DEVICE;
	o = expect_fault(&r, 3, 0x1000, false, IOPT_SMMUV3_EVT_F_PERMISSION, true, CLASS_CD);
	assert_int_equal(o.ev[3], CDTAB);
	teardown(&r);
}

/* F_WALK_EABT without stage 2: S2 = 0, CLASS = TT (7.3.12). SMMUEN = 0
 * with bypass: an input address beyond the OAS aborts silently (3.4). */
static void test_stage1_eabt_and_disabled(void **state)
{
	struct rig r;
	uint64_t w[8], ste[8];

	(void)state;
	setup(&r, NULL);
	struct tt t = new_tt(&r, 12, 1, 39);

	cd_of(w, &t, 1, 0);
	setf(w, CD_TTB0, HOLE >> 4);
	put(&r, CDTAB, w);
	ste_s1(ste, CDTAB);
	put_ste(&r, 1, ste);
	struct out o = expect_fault(&r, 1, 0x5008, false, IOPT_SMMUV3_EVT_F_WALK_EABT,
				    false, CLASS_TT);

	assert_int_equal(o.ev[3], HOLE);
	/* SMMUEN = 0, GBPA.ABORT = 0. */
	mmio_w(&r, 0x20, 4, 0x4 | 0x8);
	mmio_w(&r, 0x44, 4, 1u << 31);			/* GBPA: Update, bypass */
	o = go(&r, 1, 0x1234, false);
	assert_int_equal(o.fault, 0);
	assert_int_equal(o.oa, 0x1234);
	o = go(&r, 1, 1ull << 48, false);
	assert_int_equal(o.fault, IOPT_SMMUV3_EVT_ABORT);
	assert_false(o.rec);
	teardown(&r);
}

/* ---- event record layouts ------------------------------------------------ */

/* One provoked event: the transaction, the type it must record, and the
 * values the record's fields must hold ({field + 1, value}, 0 ends); the
 * StreamID is always checked, every RES0 bit by go_txn(). Defined fields
 * left out are UNKNOWN or IMPLEMENTATION DEFINED here. */
struct ev_case {
	struct iopt_smmuv3_txn t;
	unsigned type;
	struct { unsigned f; uint64_t v; } want[12];
};

#define W(f, v)		{ EVF_##f + 1, (v) }

static void ev_check(struct rig *r, const struct ev_case *c)
{
	struct out o = go_txn(r, c->t);

	assert_int_equal(o.fault, c->type);
	assert_true(o.rec);
	assert_int_equal(evf_get(o.ev, EVF_TYPE), c->type);
	assert_int_equal(evf_get(o.ev, EVF_SID), c->t.sid);
	for (unsigned i = 0; i < 12 && c->want[i].f; i++) {
		enum evf f = (enum evf)(c->want[i].f - 1);

		assert_true(ev_fields(c->type) & 1u << f);	/* a field of it */
		if (evf_get(o.ev, f) != c->want[i].v)
			fail_msg("event 0x%02x field %u: 0x%llx, expected 0x%llx",
				 c->type, f, (unsigned long long)evf_get(o.ev, f),
				 (unsigned long long)c->want[i].v);
	}
}

/* CR2.RECINVSID (6.3.12), written with SMMUEN = 0 as CR2 is guarded. */
static void rec_invsid(struct rig *r)
{
	mmio_w(r, 0x20, 4, 0x4 | 0x8);
	mmio_w(r, 0x2c, 4, 1u << 1);
	mmio_w(r, 0x20, 4, 0x1 | 0x4 | 0x8);
}

/*
 * Every event type the model produces, provoked through the model, against
 * the record layouts of IHI0070 7.3.2-7.3.16 above: each defined field
 * carries the value the transaction and the configuration imply, and
 * every other bit is 0 -- SSV in C_BAD_SUBSTREAMID (7.3.9: no SSV
 * qualifier) and F_STREAM_DISABLED (7.3.7: no SubstreamID) included, and
 * C_BAD_SUBSTREAMID's SubstreamID 0 for a transaction without one whose
 * CD 0 (S1DSS = 0b10) met an invalid L1CD.
 */
static void test_event_layouts(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	uint64_t w[8], cd[8];
	const uint64_t l1cd = CDTAB + 0x1000, big = 0x7654321000ull;

	(void)state;
	setup(&r, NULL);
	rec_invsid(&r);
	/* CDs 0, 1: TTB0 maps 0x1000 RW, 0x2000 read-only, 0x3000 without
	 * AF; CD 2 invalid; CD 3's TTB0 is in a hole. */
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, 0x1000, 0x10000, S1_RW, 3);
	tmap(&r, &t, 0x2000, 0x11000, S1_RW | D_AP2, 3);
	tmap(&r, &t, 0x3000, 0x12000, 0, 3);
	cd_of(cd, &t, 1, 0);
	put(&r, CDTAB, cd);
	put(&r, CDTAB + 64, cd);
	memset(w, 0, sizeof(w));
	put(&r, CDTAB + 128, w);
	setf(cd, CD_TTB0, HOLE >> 4);
	put(&r, CDTAB + 192, cd);
	ste_s1(w, CDTAB);			/* 1: four CDs, S1DSS 0b10 */
	setf(w, STE_S1CDMAX, 2);
	setf(w, STE_S1DSS, 2);
	put_ste(&r, 1, w);
	setf(w, STE_S1DSS, 0);			/* 2: S1DSS 0b00 */
	put_ste(&r, 2, w);
	ste_s1(w, l1cd);			/* 3: two-level, no valid L1CD */
	setf(w, STE_S1FMT, 1);
	setf(w, STE_S1CDMAX, 7);
	setf(w, STE_S1DSS, 2);
	put_ste(&r, 3, w);
	memset(w, 0, sizeof(w));		/* 4: V = 0 */
	put_ste(&r, 4, w);
	ste_s1(w, HOLE);			/* 5: the CD table in a hole */
	setf(w, STE_S1CDMAX, 2);
	put_ste(&r, 5, w);
	memset(w, 0, sizeof(w));		/* 6: bypass */
	setf(w, STE_V, 1);
	setf(w, STE_CONFIG, 4);
	put_ste(&r, 6, w);
	struct tt t2 = new_tt(&r, 12, 1, 39);	/* 7: stage 2 only, empty */

	ste_s2(w, &t2);
	put_ste(&r, 7, w);

	const struct ev_case cases[] = {
		/* No ATS: a Translated transaction is unsupported (7.3.2),
		 * with the incoming InD/PnU. */
		{ { .sid = 1, .ssv = true, .ssid = 5, .addr = big + 0x10,
		    .priv = true, .exec = true, .translated = true },
		  IOPT_SMMUV3_EVT_F_UUT,
		  { W(SSV, 1), W(SSID, 5), W(RNW, 1), W(IND, 1), W(PNU, 1),
		    W(INPUTADDR, big + 0x10) } },
		{ { .sid = 300, .ssv = true, .ssid = 7, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_STREAMID, { W(SSV, 1), W(SSID, 7) } },
		{ { .sid = 4, .ssv = true, .ssid = 6, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_STE, { W(SSV, 1), W(SSID, 6) } },
		{ { .sid = 1, .ssv = true, .ssid = 0, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_F_STREAM_DISABLED, { { 0, 0 } } },
		{ { .sid = 2, .ssid = 0x55, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_F_STREAM_DISABLED, { { 0, 0 } } },
		{ { .sid = 1, .ssv = true, .ssid = 4, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID, { W(SSID, 4) } },
		{ { .sid = 7, .ssv = true, .ssid = 9, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID, { W(SSID, 9) } },
		{ { .sid = 3, .ssv = true, .ssid = 0x45, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID, { W(SSID, 0x45) } },
		{ { .sid = 3, .ssid = 0x55, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID, { W(SSID, 0) } },
		{ { .sid = 5, .ssv = true, .ssid = 1, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_F_CD_FETCH,
		  { W(SSV, 1), W(SSID, 1), W(GPCF, 0),
		    W(FETCHADDR, (HOLE + 64) >> 3) } },
		{ { .sid = 1, .ssv = true, .ssid = 2, .addr = 0x1000 },
		  IOPT_SMMUV3_EVT_C_BAD_CD, { W(SSV, 1), W(SSID, 2) } },
		{ { .sid = 1, .ssv = true, .ssid = 3, .addr = 0x5008, .priv = true },
		  IOPT_SMMUV3_EVT_F_WALK_EABT,
		  { W(SSV, 1), W(SSID, 3), W(RNW, 1), W(IND, 0), W(PNU, 1),
		    W(S2, 0), W(CLASS, CLASS_TT), W(GPCF, 0),
		    W(INPUTADDR, 0x5008), W(FETCHADDR, HOLE >> 3) } },
		/* A write: RnW = 0 and so InD = 0 (7.3.13-16). */
		{ { .sid = 1, .ssv = true, .ssid = 1, .addr = 0x7010, .write = true,
		    .exec = true },
		  IOPT_SMMUV3_EVT_F_TRANSLATION,
		  { W(SSV, 1), W(SSID, 1), W(RNW, 0), W(IND, 0), W(PNU, 0),
		    W(S2, 0), W(CLASS, CLASS_IN), W(STALL, 0), W(NSIPA, 0),
		    W(INPUTADDR, 0x7010) } },
		{ { .sid = 1, .addr = 0x2008, .write = true, .priv = true },
		  IOPT_SMMUV3_EVT_F_PERMISSION,
		  { W(SSV, 0), W(RNW, 0), W(PNU, 1), W(S2, 0), W(CLASS, CLASS_IN),
		    W(STALL, 0), W(INPUTADDR, 0x2008) } },
		{ { .sid = 1, .ssv = true, .ssid = 1, .addr = 0x3004, .exec = true },
		  IOPT_SMMUV3_EVT_F_ACCESS,
		  { W(SSV, 1), W(SSID, 1), W(RNW, 1), W(IND, 1), W(PNU, 0),
		    W(S2, 0), W(CLASS, CLASS_IN), W(INPUTADDR, 0x3004) } },
		/* Both stages bypassed, beyond the OAS: stage 1 Address Size,
		 * CLASS = IN (7.3.14). */
		{ { .sid = 6, .addr = 1ull << 50, .priv = true },
		  IOPT_SMMUV3_EVT_F_ADDR_SIZE,
		  { W(RNW, 1), W(PNU, 1), W(S2, 0), W(CLASS, CLASS_IN),
		    W(INPUTADDR, 1ull << 50) } },
		/* Stage 2 only: a stage 2 fault, CLASS = IN, IPA the input. */
		{ { .sid = 7, .addr = big + 0x24, .priv = true },
		  IOPT_SMMUV3_EVT_F_TRANSLATION,
		  { W(RNW, 1), W(S2, 1), W(CLASS, CLASS_IN), W(NSIPA, 0),
		    W(INPUTADDR, big + 0x24), W(IPA, big >> 12) } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ev_check(&r, &cases[i]);
	/* F_STE_FETCH: the stream table moved into a hole (SMMUEN = 0 to
	 * move it); FetchAddr the STE's address (7.3.4). */
	mmio_w(&r, 0x20, 4, 0x4 | 0x8);
	mmio_w(&r, 0x80, 8, HOLE);
	mmio_w(&r, 0x20, 4, 0x1 | 0x4 | 0x8);
	const struct ev_case ste_fetch = {
		{ .sid = 9, .ssv = true, .ssid = 3, .addr = 0x1000 },
		IOPT_SMMUV3_EVT_F_STE_FETCH,
		{ W(SSV, 1), W(SSID, 3), W(GPCF, 0),
		  W(FETCHADDR, (HOLE + 9 * 64) >> 3) } };

	ev_check(&r, &ste_fetch);
	teardown(&r);

	/* ATS with ATSCHK = 1 and a bypass STE: F_TRANSL_FORBIDDEN, with
	 * the StreamID, RnW and InputAddr only (7.3.8). */
	params(&p);
	p.ats = true;
	setup(&r, &p);
	mmio_w(&r, 0x20, 4, 0x1 | 0x4 | 0x8 | 0x10);
	memset(w, 0, sizeof(w));
	setf(w, STE_V, 1);
	setf(w, STE_CONFIG, 4);
	put_ste(&r, 1, w);
	const struct ev_case forbidden = {
		{ .sid = 1, .ssid = 0x55, .addr = big + 0x30,
		  .priv = true, .exec = true, .translated = true },
		IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN,
		{ W(RNW, 1), W(INPUTADDR, big + 0x30) } };

	ev_check(&r, &forbidden);
	teardown(&r);

	/* Nested: stage 2 faults with CLASS = TT (the IPA of the stage 1
	 * descriptor, TTRnW = 1) and CLASS = CD (the CD's IPA). */
	struct nest n;

	setup(&r, NULL);
	nest_setup(&r, &n, w);
	cd_of(cd, &n.s1, 1, 0);
	put(&r, CDTAB, cd);
	put_ste(&r, 1, w);
	uint64_t l3 = desc_pa(&r, &n.s1, 0x5000, 3);
	uint64_t *s2l = slot_of(&r, &n.s2, l3, 3);

	*s2l = 0;
	const struct ev_case tt = {
		{ .sid = 1, .addr = 0x5000 },
		IOPT_SMMUV3_EVT_F_TRANSLATION,
		{ W(RNW, 1), W(S2, 1), W(CLASS, CLASS_TT), W(TTRNW, 1),
		  W(INPUTADDR, 0x5000), W(IPA, l3 >> 12) } };

	ev_check(&r, &tt);
	*slot_of(&r, &n.s2, CDTAB, 3) = 0;
	const struct ev_case cdf = {
		{ .sid = 1, .addr = 0x1000, .write = true },
		IOPT_SMMUV3_EVT_F_TRANSLATION,
		{ W(RNW, 0), W(S2, 1), W(CLASS, CLASS_CD), W(INPUTADDR, 0x1000),
		  W(IPA, CDTAB >> 12) } };

	ev_check(&r, &cdf);
	teardown(&r);
}

/* Queue one command and run the model until it has completed. */
static void command(struct rig *r, const struct iopt_smmuv3_cmd *c)
{
	uint32_t prod = (uint32_t)mmio_r(r, 0x98, 4);
	uint64_t w[2];

	assert_int_equal(iopt_smmuv3_cmd_encode(c, w), 0);
	memcpy(iopt_physmem_ptr(r->pm, CMDQ + (prod & 255) * 16ull, 16), w, 16);
	mmio_w(r, 0x98, 4, (prod + 1) & 511);
	for (uint64_t next; (next = iopt_smmuv3_next_event(r->s)) != UINT64_MAX;) {
		r->cycle = next;
		iopt_smmuv3_run_until(r->s, r->cycle);
	}
	assert_int_equal(mmio_r(r, 0x9c, 4), (prod + 1) & 511);	/* consumed */
}

/*
 * ASID and VMID widths (5.4 ASID, 5.2.2 IgnoreSTES2VMID()): with 8-bit
 * ASIDs and VMIDs, ASID[15:8] != 0 and S2VMID[15:8] != 0 are ILLEGAL,
 * the latter also in a stage 1-only STE (S2VMID is not IGNORED there when
 * stage 2 is implemented). And S2VMID tags stage 1-only translations
 * (5.2 S2VMID): a TLBI by ASID reaches them only with that VMID.
 */
static void test_asid_vmid(void **state)
{
	struct iopt_smmuv3_params p;
	struct rig r;
	uint64_t w[8], cd[8];

	(void)state;
	params(&p);
	p.asid16 = p.vmid16 = false;
	setup(&r, &p);
	struct tt t = new_tt(&r, 12, 1, 39);

	tmap(&r, &t, 0x1000, 0x2000, S1_RW, 3);
	cd_of(cd, &t, 0xff, 0);
	put(&r, CDTAB, cd);
	ste_s1(w, CDTAB);
	setf(w, STE_S2VMID, 0xff);
	put_ste(&r, 1, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	setf(w, STE_S2VMID, 0x100);
	put_ste(&r, 2, w);
	expect_bad(&r, 2, IOPT_SMMUV3_EVT_C_BAD_STE);
	setf(cd, CD_ASID, 0x100);
	put(&r, CDTAB + 64, cd);
	ste_s1(w, CDTAB + 64);
	put_ste(&r, 3, w);
	expect_bad(&r, 3, IOPT_SMMUV3_EVT_C_BAD_CD);
	ste_s2(w, &t);
	setf(w, STE_S2VMID, 0x100);
	put_ste(&r, 4, w);
	expect_bad(&r, 4, IOPT_SMMUV3_EVT_C_BAD_STE);
	teardown(&r);

	/* With a TLB: stage 1 only, S2VMID 5, ASID 1. */
	params(&p);
	p.tlb.enable = true;
	setup(&r, &p);
	t = new_tt(&r, 12, 1, 39);
	uint64_t *leaf = tmap(&r, &t, 0x1000, 0x2000, S1_RW | D_NG, 3);

	cd_of(cd, &t, 1, 0);
	put(&r, CDTAB, cd);
	ste_s1(w, CDTAB);
	setf(w, STE_S2VMID, 5);
	put_ste(&r, 1, w);
	expect_pa(&r, 1, 0x1000, 0x2000);
	*leaf = 0x3000 | S1_RW | D_NG | D_TABLE;	/* changed, not invalidated */
	expect_pa(&r, 1, 0x1000, 0x2000);		/* the TLB's */
	struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID, .vmid = 0,
				   .asid = 1 };

	command(&r, &c);
	expect_pa(&r, 1, 0x1000, 0x2000);		/* VMID 0: not these */
	c.vmid = 5;
	command(&r, &c);
	expect_pa(&r, 1, 0x1000, 0x3000);
	teardown(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walker_vs_mapped),
		cmocka_unit_test(test_ste_stage2_fields),
		cmocka_unit_test(test_ste_illegal),
		cmocka_unit_test(test_ste_substreams),
		cmocka_unit_test(test_cd_fields),
		cmocka_unit_test(test_cd_illegal),
		cmocka_unit_test(test_hierarchical_permissions),
		cmocka_unit_test(test_nested_records),
		cmocka_unit_test(test_nested_httu_and_ptw),
		cmocka_unit_test(test_stage1_eabt_and_disabled),
		cmocka_unit_test(test_event_layouts),
		cmocka_unit_test(test_asid_vmid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
