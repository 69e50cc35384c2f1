/* SPDX-License-Identifier: MIT */
/*
 * Register values and descriptor bits, field by field against the Arm
 * ARM's definitions (TCR_EL1, VTCR_EL2, TTBCR, VTCR, MAIR; descriptor
 * attribute fields), including the quirks that change them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

static uint64_t f(uint64_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((1ull << (hi - lo + 1)) - 1);
}

static struct iopt_pgtable *make(enum iopt_pgtable_fmt fmt, uint32_t granule,
				 unsigned ias, unsigned oas, uint32_t quirks,
				 bool coherent, struct iopt_pgtable_info *info)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = granule, .ias = ias, .oas = oas,
		.quirks = quirks, .coherent_walk = coherent,
	};
	struct iopt_pgtable *pt = NULL;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	iopt_pgtable_get_info(pt, info);
	return pt;
}

static uint64_t top_pa(struct iopt_pgtable *pt)
{
	struct iopt_pgtable_walk w;

	iopt_pgtable_walk(pt, 0, &w);
	return w.level[0].table_pa;
}

static void test_s1_tcr_mair(void **state)
{
	struct iopt_pgtable_info i;
	struct iopt_pgtable *pt;

	(void)state;
	pt = make(IOPT_ARM_64_LPAE_S1, 4096, 48, 48, 0, true, &i);
	assert_int_equal(f(i.regs.tcr, 5, 0), 16);	/* T0SZ */
	assert_int_equal(f(i.regs.tcr, 7, 7), 0);	/* EPD0 */
	assert_int_equal(f(i.regs.tcr, 9, 8), 1);	/* IRGN0 WBWA */
	assert_int_equal(f(i.regs.tcr, 11, 10), 1);	/* ORGN0 WBWA */
	assert_int_equal(f(i.regs.tcr, 13, 12), 3);	/* SH0 inner */
	assert_int_equal(f(i.regs.tcr, 15, 14), 0);	/* TG0 4K */
	assert_int_equal(f(i.regs.tcr, 23, 23), 1);	/* EPD1 */
	assert_int_equal(f(i.regs.tcr, 34, 32), 5);	/* IPS 48 */
	assert_int_equal(i.regs.ttbr, top_pa(pt));
	assert_int_equal(i.levels, 4);
	assert_int_equal(i.start_level, 0);
	/* MAIR: indices 0 NC, 1 WB RWA, 2 Device-nGnRE, 3 inner NC outer WB. */
	assert_int_equal(f(i.regs.mair, 7, 0), 0x44);
	assert_int_equal(f(i.regs.mair, 15, 8), 0xff);
	assert_int_equal(f(i.regs.mair, 23, 16), 0x04);
	assert_int_equal(f(i.regs.mair, 31, 24), 0xf4);
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_64_LPAE_S1, 16384, 36, 42, 0, false, &i);
	assert_int_equal(f(i.regs.tcr, 5, 0), 28);
	assert_int_equal(f(i.regs.tcr, 15, 14), 2);	/* TG0 16K */
	assert_int_equal(f(i.regs.tcr, 9, 8), 0);	/* non-coherent: NC */
	assert_int_equal(f(i.regs.tcr, 11, 10), 0);
	assert_int_equal(f(i.regs.tcr, 13, 12), 2);	/* outer shareable */
	assert_int_equal(f(i.regs.tcr, 34, 32), 3);	/* IPS 42 */
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_64_LPAE_S1, 65536, 48, 48,
		  IOPT_PGTABLE_QUIRK_OUTER_WBWA, false, &i);
	assert_int_equal(f(i.regs.tcr, 15, 14), 1);	/* TG0 64K */
	assert_int_equal(f(i.regs.tcr, 9, 8), 0);
	assert_int_equal(f(i.regs.tcr, 11, 10), 1);	/* outer WBWA */
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_64_LPAE_S1, 4096, 39, 40,
		  IOPT_PGTABLE_QUIRK_TTBR1 | IOPT_PGTABLE_QUIRK_HD, true, &i);
	assert_int_equal(f(i.regs.tcr, 7, 7), 1);	/* EPD0 */
	assert_int_equal(f(i.regs.tcr, 21, 16), 25);	/* T1SZ */
	assert_int_equal(f(i.regs.tcr, 23, 23), 0);	/* EPD1 clear */
	assert_int_equal(f(i.regs.tcr, 25, 24), 1);	/* IRGN1 */
	assert_int_equal(f(i.regs.tcr, 27, 26), 1);	/* ORGN1 */
	assert_int_equal(f(i.regs.tcr, 29, 28), 3);	/* SH1 */
	assert_int_equal(f(i.regs.tcr, 31, 30), 2);	/* TG1 4K */
	assert_int_equal(f(i.regs.tcr, 34, 32), 2);	/* IPS 40 */
	assert_int_equal(f(i.regs.tcr, 39, 39), 1);	/* HA */
	assert_int_equal(f(i.regs.tcr, 40, 40), 1);	/* HD */
	assert_int_equal(i.start_level, 1);
	iopt_pgtable_free(pt);
}

static void test_s2_vtcr_concat(void **state)
{
	static const struct {
		uint32_t granule;
		unsigned ias, oas, sl0, start, concat, ps;
	} c[] = {
		/* 4K, 40-bit output: level 0 start is not allowed below 44
		 * bits, so two level-1 tables are concatenated. */
		{ 4096, 40, 40, 1, 1, 2, 2 },
		{ 4096, 42, 42, 1, 1, 8, 3 },
		{ 4096, 44, 44, 2, 0, 1, 4 },
		{ 4096, 48, 48, 2, 0, 1, 5 },
		{ 4096, 32, 48, 0, 2, 4, 5 },	/* 4 entries -> 4 x level 2 */
		{ 4096, 36, 36, 1, 1, 1, 1 },
		{ 16384, 48, 48, 2, 1, 2, 5 },	/* no 16K level-0 start */
		{ 16384, 40, 40, 1, 2, 16, 2 },
		{ 16384, 36, 40, 1, 2, 1, 2 },
		{ 65536, 48, 48, 2, 1, 1, 5 },
		{ 65536, 32, 32, 0, 3, 8, 0 },
		{ 65536, 52, 52, 2, 1, 1, 6 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct iopt_pgtable_info i;
		struct iopt_pgtable *pt = make(IOPT_ARM_64_LPAE_S2, c[k].granule,
					       c[k].ias, c[k].oas, 0, true, &i);

		assert_int_equal(f(i.regs.tcr, 5, 0), 64 - c[k].ias);
		assert_int_equal(f(i.regs.tcr, 7, 6), c[k].sl0);
		assert_int_equal(f(i.regs.tcr, 18, 16), c[k].ps);
		assert_int_equal(f(i.regs.tcr, 15, 14),
				 c[k].granule == 4096 ? 0 :
				 c[k].granule == 65536 ? 1 : 2);
		assert_int_equal(i.start_level, c[k].start);
		assert_int_equal(i.concat, c[k].concat);
		assert_int_equal(i.regs.ttbr & ((1ull << 48) - 1),
				 top_pa(pt) & ((1ull << 48) - 1));
		iopt_pgtable_free(pt);
	}
}

static void test_32bit_regs(void **state)
{
	struct iopt_pgtable_info i;
	struct iopt_pgtable *pt;

	(void)state;
	pt = make(IOPT_ARM_32_LPAE_S1, 4096, 32, 40, 0, true, &i);
	assert_int_equal(f(i.regs.tcr, 2, 0), 0);	/* T0SZ */
	assert_int_equal(f(i.regs.tcr, 31, 31), 1);	/* EAE */
	assert_int_equal(f(i.regs.tcr, 23, 23), 1);	/* EPD1 */
	assert_int_equal(f(i.regs.tcr, 13, 12), 3);
	assert_int_equal(i.start_level, 1);
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_32_LPAE_S2, 4096, 40, 40, 0, true, &i);
	assert_int_equal(f(i.regs.tcr, 3, 0), 8);	/* T0SZ = -8 */
	assert_int_equal(f(i.regs.tcr, 4, 4), 1);	/* S: sign */
	assert_int_equal(f(i.regs.tcr, 7, 6), 1);	/* SL0: level 1 */
	assert_int_equal(i.concat, 2);
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_32_LPAE_S2, 4096, 32, 40, 0, true, &i);
	assert_int_equal(f(i.regs.tcr, 3, 0), 0);
	assert_int_equal(f(i.regs.tcr, 4, 4), 0);
	assert_int_equal(f(i.regs.tcr, 7, 6), 0);	/* 4 entries: level 2 */
	assert_int_equal(i.concat, 4);
	iopt_pgtable_free(pt);
}

static uint64_t leaf_desc(struct iopt_pgtable *pt, uint64_t va,
			  uint64_t *table_desc)
{
	struct iopt_pgtable_walk w;

	assert_int_equal(iopt_pgtable_walk(pt, va, &w), 0);
	assert_true(w.mapped);
	*table_desc = w.level[0].desc;
	return w.level[w.nr_levels - 1].desc;
}

static void test_descriptor_bits(void **state)
{
	struct iopt_pgtable_info i;
	struct iopt_pgtable *pt;
	uint64_t d, t;

	(void)state;
	/* Stage 1, NS quirk. */
	pt = make(IOPT_ARM_64_LPAE_S1, 4096, 48, 48, IOPT_PGTABLE_QUIRK_NS, true, &i);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x1000, 0x5000, 0x1000, 1,
						IOPT_READ | IOPT_CACHE, NULL), 0);
	d = leaf_desc(pt, 0x1000, &t);
	assert_int_equal(f(d, 1, 0), 3);	/* page */
	assert_int_equal(f(d, 4, 2), 1);	/* AttrIndx: cacheable */
	assert_int_equal(f(d, 5, 5), 1);	/* NS */
	assert_int_equal(f(d, 6, 6), 1);	/* AP[1]: unprivileged too */
	assert_int_equal(f(d, 7, 7), 1);	/* AP[2]: read-only */
	assert_int_equal(f(d, 9, 8), 3);	/* inner shareable */
	assert_int_equal(f(d, 10, 10), 1);	/* AF */
	assert_int_equal(f(d, 11, 11), 1);	/* nG */
	assert_int_equal(f(d, 47, 12), 5);
	assert_int_equal(f(d, 54, 53), 0);
	assert_int_equal(f(t, 1, 0), 3);	/* table */
	assert_int_equal(f(t, 63, 63), 1);	/* NSTable */
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_64_LPAE_S1, 4096, 48, 48, 0, true, &i);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x200000, 0x400000, 0x200000, 1,
						IOPT_WRITE | IOPT_MMIO | IOPT_PRIV |
						IOPT_NOEXEC, NULL), 0);
	d = leaf_desc(pt, 0x200000, &t);
	assert_int_equal(f(d, 1, 0), 1);	/* block */
	assert_int_equal(f(d, 4, 2), 2);	/* device */
	assert_int_equal(f(d, 5, 5), 0);
	assert_int_equal(f(d, 7, 6), 0);	/* RW, privileged only */
	assert_int_equal(f(d, 9, 8), 2);	/* outer shareable */
	assert_int_equal(f(d, 54, 53), 3);	/* UXN and PXN */
	assert_int_equal(f(t, 63, 63), 0);
	iopt_pgtable_free(pt);

	/* Stage 2, plain and with S2FWB. */
	pt = make(IOPT_ARM_64_LPAE_S2, 4096, 48, 48, 0, true, &i);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x1000, 0x1000, 0x1000, 1,
						IOPT_READ | IOPT_CACHE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x2000, 0x1000, 0x1000, 1,
						IOPT_WRITE | IOPT_NOEXEC, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x3000, 0x1000, 0x1000, 1,
						IOPT_READ | IOPT_MMIO, NULL), 0);
	d = leaf_desc(pt, 0x1000, &t);
	assert_int_equal(f(d, 5, 2), 0xf);	/* MemAttr outer/inner WB */
	assert_int_equal(f(d, 7, 6), 1);	/* S2AP read */
	assert_int_equal(f(d, 10, 10), 1);
	d = leaf_desc(pt, 0x2000, &t);
	assert_int_equal(f(d, 5, 2), 0x5);	/* normal non-cacheable */
	assert_int_equal(f(d, 7, 6), 2);	/* S2AP write */
	assert_int_equal(f(d, 54, 54), 1);	/* XN */
	d = leaf_desc(pt, 0x3000, &t);
	assert_int_equal(f(d, 5, 2), 0x1);	/* Device-nGnRE */
	iopt_pgtable_free(pt);

	pt = make(IOPT_ARM_64_LPAE_S2, 4096, 48, 48, IOPT_PGTABLE_QUIRK_S2FWB, true, &i);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x1000, 0x1000, 0x1000, 1,
						IOPT_READ | IOPT_CACHE, NULL), 0);
	d = leaf_desc(pt, 0x1000, &t);
	assert_int_equal(f(d, 5, 2), 0x6);	/* FWB: stage 1 type, WB */
	iopt_pgtable_free(pt);
}

/* 52-bit output: PA[51:48] in bits 15:12 of leaves, tables and TTBR. */
static void test_52bit_output(void **state)
{
	struct tmem m;
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 65536, .ias = 48,
		.oas = 52, .coherent_walk = true, .mem = &tmem_ops, .mem_ctx = &m,
	};
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info i;
	struct ref_walk w;
	const uint64_t base = 0xa000000000000ull;	/* tables above 2^48 */
	const uint64_t pa = 0xfedc000010000ull;

	(void)state;
	tmem_init(&m, base, 16u << 20);
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	iopt_pgtable_get_info(pt, &i);
	assert_int_equal(f(i.regs.tcr, 34, 32), 6);	/* IPS 52 */
	assert_int_equal(f(i.regs.ttbr, 5, 2), 0xa);	/* BADDR[51:48] */
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x10000, pa, 0x10000, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 1ull << 42, 0xf000000000000ull,
						4ull << 40, 1, IOPT_READ, NULL), 0);
	ref_walk(&i, 0, tmem_host_p2v, &m, 0x10000 + 0x1234, &w);
	assert_true(w.mapped);
	assert_int_equal(w.oa, pa + 0x1234);
	assert_int_equal(f(w.desc, 15, 12), 0xf);
	ref_walk(&i, 0, tmem_host_p2v, &m, (1ull << 42) + 5, &w);
	assert_true(w.mapped);
	assert_int_equal(w.level, 1);		/* 4T block */
	assert_int_equal(w.oa, 0xf000000000005ull);
	uint64_t got;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, 0x10000 + 0x1234, &got), 0);
	assert_int_equal(got, pa + 0x1234);
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);
	tmem_destroy(&m);
}

/*
 * One call maps several pages whose output addresses cross 2^48 with a
 * 52-bit OA: PA[51:48] live in descriptor bits 15:12 (Arm ARM D8.3, "Translation table descriptor formats"), so
 * the page after the crossing is not the previous descriptor plus the page
 * size. Each page must translate, by the reference walk, to its own
 * address, and its descriptor must hold PA[47:16] in bits 47:16 and
 * PA[51:48] in bits 15:12.
 */
static void test_52bit_output_run_crosses_2p48(void **state)
{
	struct tmem m;
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 65536, .ias = 48,
		.oas = 52, .coherent_walk = true, .mem = &tmem_ops, .mem_ctx = &m,
	};
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info i;
	struct ref_walk w;
	const uint64_t pa = (1ull << 48) - 2 * 0x10000;
	const uint64_t va = 0x40000000;

	(void)state;
	tmem_init(&m, 0x1000000, 16u << 20);
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	iopt_pgtable_get_info(pt, &i);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, pa, 0x10000, 4,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	for (unsigned k = 0; k < 4; k++) {
		uint64_t want = pa + k * 0x10000ull;

		ref_walk(&i, 0, tmem_host_p2v, &m, va + k * 0x10000ull + 8, &w);
		assert_true(w.mapped);
		assert_int_equal(w.level, 3);
		assert_int_equal(w.oa, want + 8);
		assert_int_equal(f(w.desc, 47, 16), f(want, 47, 16));
		assert_int_equal(f(w.desc, 15, 12), f(want, 51, 48));
	}
	iopt_pgtable_free(pt);
	assert_int_equal(m.live, 0);
	tmem_destroy(&m);
}

/* ---- reserved bits of every register value ------------------------------ */

/*
 * Reserved-as-zero and reserved-as-one bits, from the Arm ARM register
 * descriptions, and the fields a configuration may set at all (anything
 * else is a feature this library does not use, so must be 0):
 *  TCR_EL1 (D24.2.194): bits 6, 35, 63:62 RES0; the library may set T0SZ,
 *    EPD0, IRGN0, ORGN0, SH0, TG0, T1SZ, EPD1, IRGN1, ORGN1, SH1, TG1,
 *    IPS, HA, HD.
 *  VTCR_EL2 and AArch32 VTCR (G8.2.172, mapped to VTCR_EL2[31:0]): bit 31
 *    RES1; AArch32 bits 30:29, 24:14, 5 RES0; the library may set T0SZ,
 *    SL0, IRGN0, ORGN0, SH0, (AArch64) TG0 and PS, (AArch32) S.
 *  TTBCR with EAE (G8.2.165): bits 5:3, 15:14, 21:19 RES0; T2E (6) and the
 *    IMPLEMENTATION DEFINED bit 30 left 0.
 *  TTBCR without EAE: bit 3 and 30:6 RES0, EAE 0.
 *  MAIR: every attribute byte a defined encoding (Device 0b0000dd00, or
 *    Normal with both nibbles non-zero).
 *  PRRR: bits 23:20 RES0, no TRn = 0b11 (reserved).
 *  TTBR: see check_regs().
 */
#define TCR_RES0	(1ull << 6 | 1ull << 35 | 3ull << 62)
#define TCR_FIELDS	(0x3full | 1ull << 7 | 0xffull << 8 | 0x3full << 16 | \
			 1ull << 23 | 0xffull << 24 | 7ull << 32 | 3ull << 39)
#define VTCR_RES1	(1ull << 31)
#define VTCR64_FIELDS	(0x3ffffull | 7ull << 16 | VTCR_RES1)
#define VTCR32_RES0	(3ull << 29 | 0x7ffull << 14 | 1ull << 5)
#define VTCR32_FIELDS	(0xfull | 1ull << 4 | 0xffull << 6 | VTCR_RES1)
#define TTBCR_EAE	(1ull << 31)
#define TTBCR_L_RES0	(7ull << 3 | 3ull << 14 | 7ull << 19)
#define TTBCR_L_FIELDS	(7ull | 1ull << 7 | 0x7full << 8 | 7ull << 16 | \
			 0xffull << 22 | TTBCR_EAE)
#define TTBCR_S_FIELDS	(7ull | 1ull << 4 | 1ull << 5)

static bool mair_byte_ok(unsigned b)
{
	unsigned hi = b >> 4, lo = b & 0xf;

	return hi == 0 ? (lo & 3) == 0 : lo != 0;
}

static void check_regs(const char *name, const struct iopt_pgtable_info *i)
{
	uint64_t t = i->regs.tcr;

	switch (i->fmt) {
	case IOPT_ARM_64_LPAE_S1:
		TU_CHK(name, !(t & TCR_RES0));
		TU_CHK(name, !(t & ~TCR_FIELDS));
		break;
	case IOPT_ARM_64_LPAE_S2:
		TU_CHK(name, (t & VTCR_RES1) == VTCR_RES1);
		TU_CHK(name, !(t & ~VTCR64_FIELDS));
		break;
	case IOPT_ARM_32_LPAE_S1:
		TU_CHK(name, t & TTBCR_EAE);
		TU_CHK(name, !(t & TTBCR_L_RES0));
		TU_CHK(name, !(t & ~TTBCR_L_FIELDS));
		break;
	case IOPT_ARM_32_LPAE_S2:
		TU_CHK(name, (t & VTCR_RES1) == VTCR_RES1);
		TU_CHK(name, !(t & VTCR32_RES0));
		TU_CHK(name, !(t & ~VTCR32_FIELDS));
		break;
	case IOPT_ARM_V7S:
		TU_CHK(name, !(t & ~TTBCR_S_FIELDS));	/* EAE 0, RES0 */
		TU_CHK(name, !(i->regs.prrr & (0xfu << 20)));
		for (unsigned n = 0; n < 8; n++)
			TU_CHK(name, (i->regs.prrr >> (2 * n) & 3) != 3);
		break;
	default:
		fail();
	}
	/* TTBR (D24.2.210 and the VMSAv8-32 64-bit TTBR0): ASID/VMID
	 * (63:48) left to the driver, CnP (bit 0) clear; with a 52-bit OA
	 * bits 5:2 hold BADDR[51:48] and bit 1 is RES0; VMSAv8-32 LPAE
	 * holds a 40-bit base (bits 47:40 RES0). */
	if (i->fmt != IOPT_ARM_V7S) {
		TU_CHK(name, !(i->regs.ttbr >> 48) && !(i->regs.ttbr & 1));
		if (i->oas > 48)
			TU_CHK(name, !(i->regs.ttbr & 2));
		if (i->fmt == IOPT_ARM_32_LPAE_S1 || i->fmt == IOPT_ARM_32_LPAE_S2)
			TU_CHK(name, !(i->regs.ttbr >> 40));
	}
	if (i->fmt == IOPT_ARM_64_LPAE_S1 || i->fmt == IOPT_ARM_32_LPAE_S1)
		for (unsigned n = 0; n < 8; n++)
			TU_CHK(name, mair_byte_ok((unsigned)(i->regs.mair >> (8 * n)) &
						  0xff));
}

static void test_reserved_bits(void **state)
{
	static const struct {
		enum iopt_pgtable_fmt fmt;
		uint32_t quirks;
	} fq[] = {
		{ IOPT_ARM_64_LPAE_S1, 0 },
		{ IOPT_ARM_64_LPAE_S1, IOPT_PGTABLE_QUIRK_TTBR1 | IOPT_PGTABLE_QUIRK_HD },
		{ IOPT_ARM_64_LPAE_S1, IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_OUTER_WBWA },
		{ IOPT_ARM_64_LPAE_S2, 0 },
		{ IOPT_ARM_64_LPAE_S2, IOPT_PGTABLE_QUIRK_S2FWB | IOPT_PGTABLE_QUIRK_OUTER_WBWA },
		{ IOPT_ARM_32_LPAE_S1, 0 },
		{ IOPT_ARM_32_LPAE_S1, IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_OUTER_WBWA },
		{ IOPT_ARM_32_LPAE_S2, 0 },
		{ IOPT_ARM_V7S, 0 },
		{ IOPT_ARM_V7S, IOPT_PGTABLE_QUIRK_NS },
	};
	unsigned n = 0;

	(void)state;
	for (unsigned k = 0; k < sizeof(fq) / sizeof(fq[0]); k++)
		for (uint32_t g = 4096; g <= 65536; g *= 2)
			for (unsigned ias = 25; ias <= 52; ias++)
				for (unsigned oas = 32; oas <= 52; oas += 4)
					for (int coh = 0; coh < 2; coh++) {
		struct iopt_pgtable_cfg cfg = {
			.fmt = fq[k].fmt, .granule = g, .ias = ias, .oas = oas,
			.quirks = fq[k].quirks, .coherent_walk = coh,
			.mem = &tmem_ops,
		};
		struct iopt_pgtable *pt;
		struct iopt_pgtable_info i;
		struct tmem m;
		char name[80];

		if (g == 8192)
			continue;
		tmem_init(&m, 0x10000000ull, 1u << 20);
		cfg.mem_ctx = &m;
		if (iopt_pgtable_alloc(&cfg, &pt)) {
			tmem_destroy(&m);
			continue;
		}
		snprintf(name, sizeof(name), "%s q%#x g%u ias%u oas%u coh%d",
			 iopt_pgtable_fmt_name(cfg.fmt), cfg.quirks, g, ias, oas, coh);
		iopt_pgtable_get_info(pt, &i);
		check_regs(name, &i);
		iopt_pgtable_free(pt);
		tmem_destroy(&m);
		n++;
	}
	assert_true(n > 500);
}

/*
 * Table addresses fit the format (Arm ARM D8.3: a table address above the
 * output size is an Address size fault; 32-bit LPAE TTBRs and table
 * descriptors hold bits 39:x, v7s 31:x): with the default allocator every
 * table a walk reads, and the TTBR, sit below 2^oas (v7s: 2^32), for
 * every output size, not only when host addresses happen to be low.
 */
static void test_table_addresses_fit_oas(void **state)
{
	static const struct { enum iopt_pgtable_fmt fmt; unsigned ias, oas; } c[] = {
		{ IOPT_ARM_64_LPAE_S1, 32, 32 }, { IOPT_ARM_64_LPAE_S1, 36, 36 },
		{ IOPT_ARM_64_LPAE_S1, 40, 40 }, { IOPT_ARM_64_LPAE_S1, 42, 42 },
		{ IOPT_ARM_64_LPAE_S1, 44, 44 }, { IOPT_ARM_64_LPAE_S1, 48, 48 },
		{ IOPT_ARM_64_LPAE_S2, 40, 40 }, { IOPT_ARM_64_LPAE_S2, 44, 44 },
		{ IOPT_ARM_32_LPAE_S1, 32, 40 }, { IOPT_ARM_32_LPAE_S1, 32, 32 },
		{ IOPT_ARM_32_LPAE_S2, 40, 40 }, { IOPT_ARM_V7S, 32, 32 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct iopt_pgtable_cfg cfg = { .fmt = c[i].fmt, .granule = 4096,
					.ias = c[i].ias, .oas = c[i].oas,
					.coherent_walk = true };
		unsigned bits = c[i].fmt == IOPT_ARM_V7S ? 32 : c[i].oas;
		uint64_t lim = 1ull << bits;
		struct iopt_pgtable *pt;
		struct iopt_pgtable_info info;

		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		iopt_pgtable_get_info(pt, &info);
		for (uint64_t va = 0; va < (1ull << 30); va += 0x10001000ull) {
			struct iopt_pgtable_walk w;

			assert_int_equal(iopt_pgtable_map_pages(pt, va, va, 4096, 1,
								IOPT_READ, NULL), 0);
			assert_int_equal(iopt_pgtable_walk(pt, va, &w), 0);
			assert_true(w.nr_levels >= 2);
			for (unsigned l = 0; l < w.nr_levels; l++)
				TU_CHK(iopt_pgtable_fmt_name(c[i].fmt),
				       w.level[l].table_pa < lim);
		}
		TU_CHK(iopt_pgtable_fmt_name(c[i].fmt), (info.regs.ttbr & ~0xfffull) < lim);
		iopt_pgtable_free(pt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s1_tcr_mair),
		cmocka_unit_test(test_s2_vtcr_concat),
		cmocka_unit_test(test_32bit_regs),
		cmocka_unit_test(test_descriptor_bits),
		cmocka_unit_test(test_52bit_output),
		cmocka_unit_test(test_52bit_output_run_crosses_2p48),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_table_addresses_fit_oas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
