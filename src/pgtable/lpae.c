/* SPDX-License-Identifier: MIT */
/*
 * The LPAE (long-descriptor) formats: VMSAv8-64 stage 1 and 2 with 4K, 16K
 * and 64K granules, and VMSAv7 LPAE stage 1 and 2 (4K granule).
 *
 * Descriptor layout (Arm ARM D8.3, "Translation table descriptor formats";
 * VMSAv7: B3.6.1):
 *   bits 1:0   0b11 table (levels 0-2) or page (level 3); 0b01 block
 *   bits 47:g  output / next-table address (g = granule lg2); with the 64K
 *              granule and 52-bit OA, OA[51:48] sits in bits 15:12
 *   stage 1 leaf:  AttrIndx[4:2] NS[5] AP[7:6] SH[9:8] AF[10] nG[11]
 *                  DBM[51] Contiguous[52] PXN[53] UXN/XN[54]
 *   stage 2 leaf:  MemAttr[5:2] S2AP[7:6] SH[9:8] AF[10]
 *                  Contiguous[52] XN[54]
 *   table:         NSTable[63]; bits 58:52 are ignored by hardware.
 *   bits 58:55 of leaves and tables are reserved for software: bit 55 of a
 *   table entry is this library's "synced" bit (pt_algo.h item 6).
 */
#include <errno.h>

#include "pt_algo.h"

#define LPAE_VALID		(1ull << 0)
#define LPAE_TYPE_MASK		3ull
#define LPAE_TYPE_TABLE		3ull	/* levels 0-2 */
#define LPAE_TYPE_PAGE		3ull	/* level 3 */
#define LPAE_TYPE_BLOCK		1ull

#define LPAE_ATTRIDX_SHIFT	2
#define LPAE_NS			(1ull << 5)
#define LPAE_AP_UNPRIV		(1ull << 6)	/* AP[1] */
#define LPAE_AP_RDONLY		(1ull << 7)	/* AP[2] */
#define LPAE_S2AP_READ		(1ull << 6)
#define LPAE_S2AP_WRITE		(1ull << 7)
#define LPAE_SH_SHIFT		8
#define LPAE_SH_OS		2ull
#define LPAE_SH_IS		3ull
#define LPAE_AF			(1ull << 10)
#define LPAE_NG			(1ull << 11)
#define LPAE_DBM		(1ull << 51)
#define LPAE_CONT		(1ull << 52)
#define LPAE_PXN		(1ull << 53)
#define LPAE_XN			(1ull << 54)	/* UXN at stage 1, XN[1] at 2 */
#define LPAE_SW_SYNC		(1ull << 55)
#define LPAE_NSTABLE		(1ull << 63)

#define LPAE_MEMATTR_SHIFT	2
#define LPAE_MEMATTR_DEV	0x1ull	/* Device-nGnRE */
#define LPAE_MEMATTR_NC		0x5ull	/* Normal, inner and outer NC */
#define LPAE_MEMATTR_OIWB	0xfull	/* Normal, inner and outer WB */
#define LPAE_MEMATTR_FWB_WB	0x6ull	/* S2FWB: use the stage 1 type (WB) */

/* MAIR attribute indices and their encodings. */
#define LPAE_MAIR_IDX_NC	0
#define LPAE_MAIR_IDX_CACHE	1
#define LPAE_MAIR_IDX_DEV	2
#define LPAE_MAIR_IDX_INC_OCACHE 3
#define LPAE_MAIR_ATTR_NC	0x44ull
#define LPAE_MAIR_ATTR_WBRWA	0xffull
#define LPAE_MAIR_ATTR_DEV	0x04ull
#define LPAE_MAIR_ATTR_INC_OWBRWA 0xf4ull

/* TCR/VTCR fields (Arm ARM D19.2 TCR_EL1, VTCR_EL2; VMSAv7 TTBCR, VTCR). */
#define TCR_RGN_NC		0ull
#define TCR_RGN_WBWA		1ull
#define TCR_SH_OS		2ull
#define TCR_SH_IS		3ull
#define TCR_T0SZ_SHIFT		0
#define TCR_EPD0		(1ull << 7)
#define TCR_IRGN0_SHIFT		8
#define TCR_ORGN0_SHIFT		10
#define TCR_SH0_SHIFT		12
#define TCR_TG0_SHIFT		14
#define TCR_T1SZ_SHIFT		16
#define TCR_EPD1		(1ull << 23)
#define TCR_IRGN1_SHIFT		24
#define TCR_ORGN1_SHIFT		26
#define TCR_SH1_SHIFT		28
#define TCR_TG1_SHIFT		30
#define TCR_IPS_SHIFT		32
#define TCR_HA			(1ull << 39)
#define TCR_HD			(1ull << 40)
#define VTCR_SL0_SHIFT		6
#define VTCR_PS_SHIFT		16
/* Bit 31 is RES1 in VTCR_EL2 and in the AArch32 VTCR (Arm ARM G8.2.172,
 * whose bits [31:0] map to VTCR_EL2[31:0]). */
#define VTCR_RES1		(1ull << 31)
#define TTBCR_EAE		(1ull << 31)
#define VTCR32_S		(1ull << 4)

static inline bool lpae_s2(const struct iopt_pgtable *pt)
{
	return pt->cfg.fmt == IOPT_ARM_64_LPAE_S2 ||
	       pt->cfg.fmt == IOPT_ARM_32_LPAE_S2;
}

static inline unsigned lpae_g(const struct iopt_pgtable *pt)
{
	return pt->shift[pt->levels - 1];
}

static inline bool lpae_oa52(const struct iopt_pgtable *pt)
{
	return pt->oa52;
}

/* Output-address field: bits 47:g, and 15:12 with a 52-bit OA. */
static inline uint64_t lpae_addr_mask(const struct iopt_pgtable *pt)
{
	return pt->addr_mask;
}

static inline uint64_t lpae_pa_to_field(const struct iopt_pgtable *pt,
					uint64_t pa)
{
	uint64_t f = pa & ((1ull << 48) - 1);

	if (lpae_oa52(pt))
		f |= (pa >> 36) & 0xf000ull;
	return f;
}

static inline uint64_t lpae_field_to_pa(const struct iopt_pgtable *pt,
					uint64_t pte)
{
	uint64_t pa = pte & pt->addr_mask;

	if (lpae_oa52(pt))
		pa = (pa & ~0xf000ull) | (pte & 0xf000ull) << 36;
	return pa;
}

static inline unsigned lpae_shift_of(const struct iopt_pgtable *pt,
				     unsigned lvl)
{
	return pt->shift[lvl - pt->start_level];
}

static enum pt_kind lpae_kind(const struct iopt_pgtable *pt, uint64_t pte,
			      bool last)
{
	(void)pt;
	if (!(pte & LPAE_VALID))
		return PT_EMPTY;
	if (last)
		return (pte & LPAE_TYPE_MASK) == LPAE_TYPE_PAGE ? PT_LEAF :
								  PT_EMPTY;
	return (pte & LPAE_TYPE_MASK) == LPAE_TYPE_TABLE ? PT_TABLE : PT_LEAF;
}

static bool lpae_is_run(const struct iopt_pgtable *pt, uint64_t pte,
			unsigned lvl)
{
	(void)pt;
	(void)lvl;
	return pte & LPAE_CONT;
}

static uint64_t lpae_table_pa(const struct iopt_pgtable *pt, uint64_t pte,
			      unsigned lvl)
{
	(void)lvl;
	return lpae_field_to_pa(pt, pte);
}

static uint64_t lpae_make_table(const struct iopt_pgtable *pt, uint64_t pa,
				unsigned lvl)
{
	(void)lvl;
	return lpae_pa_to_field(pt, pa) | pt->table_attr_base | LPAE_TYPE_TABLE;
}

static uint64_t lpae_make_leaf(const struct iopt_pgtable *pt, uint64_t pa,
			       unsigned lvl, unsigned prot, bool run)
{
	return lpae_pa_to_field(pt, pa) | pt->prot_bits[prot] |
	       (lvl == 3 ? LPAE_TYPE_PAGE : LPAE_TYPE_BLOCK) |
	       (run ? LPAE_CONT : 0);
}

/*
 * Without a 52-bit OA the address field is bits 47:g of the descriptor
 * holding PA[47:g] in place (Arm ARM D8.3, "Translation table descriptor
 * formats"), and pa <= oa_last < 2^48, so adding k * item to a page
 * descriptor adds it to the address and carries into nothing else. With
 * a 52-bit OA, PA[51:48] sit in bits 15:12: not linear.
 */
static bool lpae_leaf_linear(const struct iopt_pgtable *pt, bool run)
{
	(void)run;	/* each item of a run holds its own address */
	return !lpae_oa52(pt);
}

static uint64_t lpae_relevel_leaf(const struct iopt_pgtable *pt, uint64_t pte,
				  unsigned from_lvl, unsigned to_lvl,
				  uint64_t pa)
{
	uint64_t attrs = pte & ~(lpae_addr_mask(pt) | LPAE_TYPE_MASK | LPAE_CONT);

	(void)from_lvl;
	return attrs | lpae_pa_to_field(pt, pa) |
	       (to_lvl == 3 ? LPAE_TYPE_PAGE : LPAE_TYPE_BLOCK);
}

static uint64_t lpae_leaf_oa(const struct iopt_pgtable *pt, uint64_t pte,
			     unsigned lvl, unsigned *size_lg2)
{
	unsigned s = lpae_shift_of(pt, lvl);

	*size_lg2 = s;
	return lpae_field_to_pa(pt, pte) & ~((1ull << s) - 1);
}

static unsigned lpae_leaf_prot(const struct iopt_pgtable *pt, uint64_t pte,
			       unsigned lvl)
{
	unsigned prot = 0;

	(void)lvl;
	if (lpae_s2(pt)) {
		uint64_t ma = (pte >> LPAE_MEMATTR_SHIFT) & 0xf;

		if (pte & LPAE_S2AP_READ)
			prot |= IOPT_READ;
		if (pte & LPAE_S2AP_WRITE)
			prot |= IOPT_WRITE;
		if (ma == LPAE_MEMATTR_DEV)
			prot |= IOPT_MMIO;
		else if (ma == LPAE_MEMATTR_OIWB || ma == LPAE_MEMATTR_FWB_WB)
			prot |= IOPT_CACHE;
	} else {
		uint64_t idx = (pte >> LPAE_ATTRIDX_SHIFT) & 7;

		prot |= IOPT_READ;
		if (!(pte & LPAE_AP_RDONLY) || (pte & LPAE_DBM))
			prot |= IOPT_WRITE;
		if (!(pte & LPAE_AP_UNPRIV))
			prot |= IOPT_PRIV;
		if (idx == LPAE_MAIR_IDX_DEV)
			prot |= IOPT_MMIO;
		else if (idx == LPAE_MAIR_IDX_CACHE)
			prot |= IOPT_CACHE;
	}
	if (pte & LPAE_XN)
		prot |= IOPT_NOEXEC;
	return prot;
}

/*
 * Items in a contiguous-hint run at lvl, or 1 where the architecture
 * defines no run (Arm ARM D8.7.1, "The Contiguous bit", Table D8-104, and
 * VMSAv7 B3.6.2, 16 items): 4K granule levels 1-3, 16 items; 16K level 2,
 * 32, level 3, 128; 64K levels 2 and 3, 32. With the 64K granule the bit
 * is RES0 in a level 1 block (FEAT_LPA; the pseudocode's ContiguousBit()
 * returns 0 there), so 4T blocks never form runs; level 0 (4K) and level 1
 * (16K) blocks need TCR.DS, which this library does not use.
 */
static unsigned lpae_run_items_g(unsigned g, unsigned lvl)
{
	if (g == 12)
		return lvl >= 1 ? 16 : 1;
	if (g == 14)
		return lvl == 3 ? 128 : lvl == 2 ? 32 : 1;
	return lvl >= 2 ? 32 : 1;
}

static unsigned lpae_run_items(const struct iopt_pgtable *pt, unsigned lvl)
{
	return lpae_run_items_g(lpae_g(pt), lvl);
}

static bool lpae_leaf_dirty(const struct iopt_pgtable *pt, uint64_t pte,
			    unsigned lvl)
{
	(void)pt;
	(void)lvl;
	return (pte & (LPAE_AP_RDONLY | LPAE_DBM)) == LPAE_DBM;
}

static const struct pt_fmt lpae_fmt = {
	.entry_lg2 = 3,
	.sync_bit = LPAE_SW_SYNC,
	.kind = lpae_kind,
	.is_run = lpae_is_run,
	/* A level 3 page descriptor without the Contiguous bit. */
	.plain_mask = LPAE_TYPE_MASK | LPAE_CONT,
	.plain_val = LPAE_TYPE_PAGE,
	.table_pa = lpae_table_pa,
	.make_table = lpae_make_table,
	.make_leaf = lpae_make_leaf,
	.leaf_linear = lpae_leaf_linear,
	.relevel_leaf = lpae_relevel_leaf,
	.leaf_oa = lpae_leaf_oa,
	.leaf_prot = lpae_leaf_prot,
	.run_items = lpae_run_items,
	.leaf_dirty = lpae_leaf_dirty,
	.dirty_clean_bits = LPAE_AP_RDONLY,
};

PT_DEFINE_IMPL(lpae, &lpae_fmt);

/* ---- configuration ---------------------------------------------------- */

static uint64_t lpae_prot_bits(const struct iopt_pgtable *pt, unsigned prot)
{
	uint64_t pte = LPAE_AF;
	uint64_t sh = (prot & IOPT_CACHE) && !(prot & IOPT_MMIO) ? LPAE_SH_IS :
								     LPAE_SH_OS;

	pte |= sh << LPAE_SH_SHIFT;
	if (lpae_s2(pt)) {
		uint64_t ma;

		if (prot & IOPT_READ)
			pte |= LPAE_S2AP_READ;
		if (prot & IOPT_WRITE)
			pte |= LPAE_S2AP_WRITE;
		if (prot & IOPT_MMIO)
			ma = LPAE_MEMATTR_DEV;
		else if (prot & IOPT_CACHE)
			ma = (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_S2FWB) ?
				     LPAE_MEMATTR_FWB_WB : LPAE_MEMATTR_OIWB;
		else
			ma = LPAE_MEMATTR_NC;
		pte |= ma << LPAE_MEMATTR_SHIFT;
		if (prot & IOPT_NOEXEC)
			pte |= LPAE_XN;
		return pte;
	}
	uint64_t idx = (prot & IOPT_MMIO)    ? LPAE_MAIR_IDX_DEV :
		       (prot & IOPT_CACHE) ? LPAE_MAIR_IDX_CACHE :
					     LPAE_MAIR_IDX_NC;

	pte |= idx << LPAE_ATTRIDX_SHIFT | LPAE_NG;
	if (!(prot & IOPT_WRITE))
		pte |= LPAE_AP_RDONLY;
	else if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_HD)
		pte |= LPAE_AP_RDONLY | LPAE_DBM;	/* writable-clean */
	if (!(prot & IOPT_PRIV))
		pte |= LPAE_AP_UNPRIV;
	if (prot & IOPT_NOEXEC)
		pte |= LPAE_XN | LPAE_PXN;
	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_NS)
		pte |= LPAE_NS;
	return pte;
}

/* Output-size encoding of TCR.IPS / VTCR.PS (Arm ARM D19.2). */
static int lpae_ps_encoding(unsigned oas)
{
	static const unsigned sizes[] = { 32, 36, 40, 42, 44, 48, 52 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (oas <= sizes[i])
			return (int)i;
	return -1;
}

/*
 * May a stage 2 walk start at lvl (VTCR.SL0 encodable)? AArch32 VTCR: level
 * 1 or 2 (G8.2.172). AArch64 (the stage 2 start-level checks of the
 * translation table walk pseudocode, AArch64.S2InvalidSL): 4K levels 1-2,
 * and 0 only with a PA size above 42 bits; 16K and 64K levels 2-3, and 1
 * only with a PA size above 40 (16K) or 42 (64K) bits. The library takes
 * oas as the PA size, and concatenates tables at the next level instead.
 */
static bool lpae_s2_start_ok(const struct iopt_pgtable *pt, unsigned g,
			     unsigned lvl)
{
	unsigned oas = pt->cfg.oas;

	if (pt->cfg.fmt == IOPT_ARM_32_LPAE_S2)
		return lvl == 1 || lvl == 2;
	if (g == 12)
		return lvl == 1 || lvl == 2 || (lvl == 0 && oas > 42);
	if (g == 14)
		return lvl == 2 || lvl == 3 || (lvl == 1 && oas > 40);
	return lvl == 2 || lvl == 3 || (lvl == 1 && oas > 42);
}

static unsigned lpae_sl0(unsigned g, unsigned lvl)
{
	return g == 12 ? 2 - lvl : 3 - lvl;
}

static int lpae_check_cfg(const struct iopt_pgtable_cfg *cfg, unsigned g)
{
	uint32_t ok_quirks;

	switch (cfg->fmt) {
	case IOPT_ARM_64_LPAE_S1:
		ok_quirks = IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_TTBR1 |
			    IOPT_PGTABLE_QUIRK_OUTER_WBWA | IOPT_PGTABLE_QUIRK_HD;
		if (cfg->ias < 25 || cfg->ias > (g == 16 ? 52u : 48u))
			return -EINVAL;
		break;
	case IOPT_ARM_64_LPAE_S2:
		ok_quirks = IOPT_PGTABLE_QUIRK_S2FWB | IOPT_PGTABLE_QUIRK_OUTER_WBWA;
		if (cfg->ias < 25 || cfg->ias > (g == 16 ? 52u : 48u))
			return -EINVAL;
		break;
	case IOPT_ARM_32_LPAE_S1:
		ok_quirks = IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_OUTER_WBWA;
		if (g != 12 || cfg->ias < 25 || cfg->ias > 32 || cfg->oas > 40)
			return -EINVAL;
		break;
	case IOPT_ARM_32_LPAE_S2:
		ok_quirks = IOPT_PGTABLE_QUIRK_OUTER_WBWA;
		if (g != 12 || cfg->ias < 25 || cfg->ias > 40 || cfg->oas > 40)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (cfg->quirks & ~(ok_quirks | PT_QUIRKS_ANY_FMT))
		return -EINVAL;
	if (cfg->oas < 32 || cfg->oas > (g == 16 ? 52u : 48u))
		return -EINVAL;
	return 0;
}

static void lpae_add_size(struct iopt_pgtable *pt, unsigned lg2, unsigned d,
			  unsigned run_lg2)
{
	uint64_t want = pt->cfg.pgsize_bitmap;

	if (want && !(want & (1ull << lg2)))
		return;
	pt->sizes[pt->nr_sizes++] = (struct pt_size){
		.lg2 = (uint8_t)lg2, .depth = (uint8_t)d,
		.run_lg2 = (uint8_t)run_lg2 };
}

/*
 * May a block sit at lvl (levels 0-2; level 3 holds pages)? Arm ARM D8.3:
 * 4K granule levels 1 and 2 (level 0 needs TCR.DS); 16K level 2 (level 1
 * needs DS); 64K level 2, and level 1 when the PA size is 52 bits
 * (FEAT_LPA), which this library assumes exactly when oas is 52.
 */
static bool lpae_block_ok(const struct iopt_pgtable *pt, unsigned g,
			  unsigned lvl)
{
	if (lvl >= 2)
		return true;
	if (lvl == 1)
		return g == 12 || (g == 16 && pt->cfg.oas > 48);
	return false;
}

static void lpae_regs(struct iopt_pgtable *pt, unsigned g)
{
	struct iopt_pgtable_regs *r = &pt->info.regs;
	const struct iopt_pgtable_cfg *cfg = &pt->cfg;
	uint64_t irgn, orgn, sh, t0sz;
	uint64_t ps = (uint64_t)lpae_ps_encoding(cfg->oas);
	uint64_t tg0 = g == 12 ? 0 : g == 16 ? 1 : 2;

	if (cfg->coherent_walk) {
		irgn = TCR_RGN_WBWA;
		orgn = TCR_RGN_WBWA;
		sh = TCR_SH_IS;
	} else {
		irgn = TCR_RGN_NC;
		orgn = (cfg->quirks & IOPT_PGTABLE_QUIRK_OUTER_WBWA) ? TCR_RGN_WBWA :
								TCR_RGN_NC;
		sh = TCR_SH_OS;
	}
	r->ttbr = pt->top_pa & ((1ull << 48) - 1);
	if (lpae_oa52(pt))
		r->ttbr |= ((pt->top_pa >> 48) & 0xf) << 2;

	switch (cfg->fmt) {
	case IOPT_ARM_64_LPAE_S1:
		t0sz = 64 - cfg->ias;
		r->tcr = ps << TCR_IPS_SHIFT;
		if (cfg->quirks & IOPT_PGTABLE_QUIRK_TTBR1) {
			uint64_t tg1 = g == 12 ? 2 : g == 16 ? 3 : 1;

			r->tcr |= t0sz << TCR_T1SZ_SHIFT | tg1 << TCR_TG1_SHIFT |
				  irgn << TCR_IRGN1_SHIFT |
				  orgn << TCR_ORGN1_SHIFT | sh << TCR_SH1_SHIFT |
				  TCR_EPD0;
		} else {
			r->tcr |= t0sz << TCR_T0SZ_SHIFT | tg0 << TCR_TG0_SHIFT |
				  irgn << TCR_IRGN0_SHIFT |
				  orgn << TCR_ORGN0_SHIFT | sh << TCR_SH0_SHIFT |
				  TCR_EPD1;
		}
		if (cfg->quirks & IOPT_PGTABLE_QUIRK_HD)
			r->tcr |= TCR_HA | TCR_HD;
		r->mair = LPAE_MAIR_ATTR_NC << (8 * LPAE_MAIR_IDX_NC) |
			  LPAE_MAIR_ATTR_WBRWA << (8 * LPAE_MAIR_IDX_CACHE) |
			  LPAE_MAIR_ATTR_DEV << (8 * LPAE_MAIR_IDX_DEV) |
			  LPAE_MAIR_ATTR_INC_OWBRWA << (8 * LPAE_MAIR_IDX_INC_OCACHE);
		break;
	case IOPT_ARM_64_LPAE_S2:
		r->tcr = (64 - cfg->ias) << TCR_T0SZ_SHIFT |
			 (uint64_t)lpae_sl0(g, pt->start_level) << VTCR_SL0_SHIFT |
			 irgn << TCR_IRGN0_SHIFT | orgn << TCR_ORGN0_SHIFT |
			 sh << TCR_SH0_SHIFT | tg0 << TCR_TG0_SHIFT |
			 ps << VTCR_PS_SHIFT | VTCR_RES1;
		break;
	case IOPT_ARM_32_LPAE_S1:
		r->tcr = (32 - cfg->ias) << TCR_T0SZ_SHIFT |
			 irgn << TCR_IRGN0_SHIFT | orgn << TCR_ORGN0_SHIFT |
			 sh << TCR_SH0_SHIFT | TCR_EPD1 | TTBCR_EAE;
		r->mair = LPAE_MAIR_ATTR_NC << (8 * LPAE_MAIR_IDX_NC) |
			  LPAE_MAIR_ATTR_WBRWA << (8 * LPAE_MAIR_IDX_CACHE) |
			  LPAE_MAIR_ATTR_DEV << (8 * LPAE_MAIR_IDX_DEV) |
			  LPAE_MAIR_ATTR_INC_OWBRWA << (8 * LPAE_MAIR_IDX_INC_OCACHE);
		break;
	case IOPT_ARM_32_LPAE_S2: {
		/* T0SZ is a signed 4-bit value; S repeats its sign bit. */
		uint64_t t = (uint64_t)(32 - (int)cfg->ias) & 0xf;

		r->tcr = t << TCR_T0SZ_SHIFT | ((t & 8) ? VTCR32_S : 0) |
			 (uint64_t)(2 - pt->start_level) << VTCR_SL0_SHIFT |
			 irgn << TCR_IRGN0_SHIFT | orgn << TCR_ORGN0_SHIFT |
			 sh << TCR_SH0_SHIFT | VTCR_RES1;
		break;
	}
	default:
		break;
	}
}

int pt_lpae_setup(struct iopt_pgtable *pt)
{
	const struct iopt_pgtable_cfg *cfg = &pt->cfg;
	unsigned g = cfg->granule == 4096    ? 12 :
		     cfg->granule == 16384 ? 14 :
		     cfg->granule == 65536 ? 16 : 0;
	int ret;

	if (!g)
		return -EINVAL;
	ret = lpae_check_cfg(cfg, g);
	if (ret)
		return ret;

	unsigned bpl = g - 3, start = 0;
	unsigned shift[4];

	for (unsigned l = 0; l < 4; l++)
		shift[l] = g + (3 - l) * bpl;
	for (int l = 3; l >= 0; l--) {
		if (shift[l] + bpl >= cfg->ias) {
			start = (unsigned)l;
			break;
		}
	}
	unsigned top_bits = cfg->ias - shift[start];

	if (lpae_s2(pt)) {
		/* Concatenate up to 16 tables at the next level instead of a
		 * tiny top table, and where the start level is not encodable
		 * (Arm ARM D8.2.7, "Concatenated translation tables"). */
		bool small = top_bits <= 4 && start < 3 &&
			     lpae_s2_start_ok(pt, g, start + 1);

		if (small || !lpae_s2_start_ok(pt, g, start)) {
			start++;
			top_bits += bpl;
		}
		if (start > 3 || !lpae_s2_start_ok(pt, g, start) ||
		    top_bits > bpl + 4)
			return -EINVAL;
	}
	pt->start_level = start;
	pt->levels = 4 - start;
	pt->oa52 = cfg->oas > 48;
	pt->addr_mask = ((1ull << 48) - 1) & ~((1ull << g) - 1);
	if (pt->oa52)
		pt->addr_mask |= 0xf000ull;
	for (unsigned d = 0; d < pt->levels; d++) {
		pt->shift[d] = (uint8_t)shift[start + d];
		pt->bits[d] = (uint8_t)(d ? bpl : top_bits);
		pt->table_bytes[d] = (size_t)8 << pt->bits[d];
	}
	if (pt->table_bytes[0] < 64)
		pt->table_bytes[0] = 64;
	pt->info.concat = top_bits > bpl ? 1u << (top_bits - bpl) : 1;

	/* Page sizes, smallest first. */
	for (unsigned d = pt->levels; d-- > 0;) {
		unsigned lvl = start + d, s = pt->shift[d];
		unsigned run_lg2 = (unsigned)__builtin_ctz(lpae_run_items_g(g, lvl));

		if (!lpae_block_ok(pt, g, lvl))
			continue;
		lpae_add_size(pt, s, d, 0);
		/* A run must not span more than the input range (D8.7.1.3:
		 * a programming error). */
		if (run_lg2 && s + run_lg2 <= cfg->ias && run_lg2 <= pt->bits[d])
			lpae_add_size(pt, s + run_lg2, d, run_lg2);
	}
	if (!pt->nr_sizes)
		return -EINVAL;

	for (unsigned p = 0; p <= IOPT_PROT_MASK; p++)
		pt->prot_bits[p] = lpae_prot_bits(pt, p);
	if ((cfg->quirks & IOPT_PGTABLE_QUIRK_NS) && !lpae_s2(pt))
		pt->table_attr_base = LPAE_NSTABLE;
	pt->impl = &lpae_impl;
	return 0;
}

void pt_lpae_regs(struct iopt_pgtable *pt)
{
	lpae_regs(pt, lpae_g(pt));
}
