/* SPDX-License-Identifier: MIT */
/*
 * The ARMv7 short-descriptor format (v7s), Arm ARM (ARMv7-A/R) B3.5.
 *
 * Level 1: 4096 32-bit entries (16 KiB), index VA[31:20]:
 *   bits 1:0  0b00 fault, 0b01 level-2 table, 0b10 section / supersection
 *   table:        [31:10] L2 base, [3] NS
 *   section:      [31:20] base, [19] NS, [18] 0, [17] nG, [16] S, [15] AP[2],
 *                 [14:12] TEX, [11:10] AP[1:0], [4] XN, [3] C, [2] B
 *   supersection: [31:24] base, [18] 1, other fields as a section; 16
 *                 identical entries map 16 MiB
 * Level 2: 256 entries (1 KiB), index VA[19:12]:
 *   small page:   [31:12] base, [11] nG, [10] S, [9] AP[2], [8:6] TEX,
 *                 [5:4] AP[1:0], [3] C, [2] B, [1] 1, [0] XN
 *   large page:   [31:16] base, [15] XN, [14:12] TEX, [11] nG, [10] S,
 *                 [9] AP[2], [5:4] AP[1:0], [3] C, [2] B, [1:0] 0b01; 16
 *                 identical entries map 64 KiB
 *
 * Attributes use the simplified access model with the access flag
 * (SCTLR.AFE=1: AP[0] is AF, AP[1] unprivileged access, AP[2] read-only)
 * and TEX remap (SCTLR.TRE=1): the memory type is the index {TEX[0],C,B}
 * into PRRR/NMRR, which this file programs: index 0 normal non-cacheable,
 * 1 device, 3 normal write-back write-allocate.
 *
 * MediaTek extension (IOPT_PGTABLE_QUIRK_MTK_EXT, needs NO_PERMS): output
 * address bits 32, 33 and 34 are held in descriptor bits 9, 4 and 5 (AP[2],
 * AP[1:0] of a small page, unused without permissions). With
 * IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT table descriptors and the TTBR may hold table
 * addresses up to 35 bits the same way (TTBR: PA[34:32] in bits 2:0).
 *
 * Internally a leaf's attributes are carried in "section layout"
 * (canonical) and moved to the page layouts on encoding, so that splitting
 * a section into small pages, or a run into single items, keeps them.
 */
#include <errno.h>
#include <stdlib.h>

#include "pt_algo.h"

#define V7S_TYPE_MASK		3u
#define V7S_L1_TABLE		1u
#define V7S_L1_SECTION		2u
#define V7S_L1_SUPER		(1u << 18)
#define V7S_L2_LARGE		1u
#define V7S_L2_SMALL		2u	/* bit 1 set; bit 0 is XN */

/* Canonical (section layout) attribute bits. */
#define V7S_B			(1u << 2)
#define V7S_C			(1u << 3)
#define V7S_XN			(1u << 4)
#define V7S_AP0_AF		(1u << 10)
#define V7S_AP1_UNPRIV		(1u << 11)
#define V7S_TEX_MASK		(7u << 12)
#define V7S_AP2_RDONLY		(1u << 15)
#define V7S_S			(1u << 16)
#define V7S_NG			(1u << 17)
#define V7S_NS			(1u << 19)
#define V7S_TABLE_NS		(1u << 3)
/* Canonical bits that move down by 6 into the page layouts. */
#define V7S_SHIFTED		(V7S_AP0_AF | V7S_AP1_UNPRIV | V7S_AP2_RDONLY | \
				 V7S_S | V7S_NG)
#define V7S_L2_XN_LARGE		(1u << 15)

/* MediaTek PA bits 32, 33, 34. */
#define V7S_MTK_PA32		(1u << 9)
#define V7S_MTK_PA33		(1u << 4)
#define V7S_MTK_PA34		(1u << 5)
#define V7S_MTK_BITS		(V7S_MTK_PA32 | V7S_MTK_PA33 | V7S_MTK_PA34)

/* TEX-remap indices {TEX[0], C, B}. */
#define V7S_IDX_NC		0u
#define V7S_IDX_DEV		V7S_B
#define V7S_IDX_WB		(V7S_C | V7S_B)

static inline bool v7s_mtk(const struct iopt_pgtable *pt)
{
	return pt->cfg.quirks & IOPT_PGTABLE_QUIRK_MTK_EXT;
}

static inline uint32_t v7s_mtk_encode(uint64_t pa)
{
	return ((pa >> 32) & 1 ? V7S_MTK_PA32 : 0) |
	       ((pa >> 33) & 1 ? V7S_MTK_PA33 : 0) |
	       ((pa >> 34) & 1 ? V7S_MTK_PA34 : 0);
}

static inline uint64_t v7s_mtk_decode(uint32_t pte)
{
	return (pte & V7S_MTK_PA32 ? 1ull << 32 : 0) |
	       (pte & V7S_MTK_PA33 ? 1ull << 33 : 0) |
	       (pte & V7S_MTK_PA34 ? 1ull << 34 : 0);
}

static enum pt_kind v7s_kind(const struct iopt_pgtable *pt, uint64_t pte,
			     bool last)
{
	unsigned t = (unsigned)pte & V7S_TYPE_MASK;

	(void)pt;
	if (last)
		return t ? PT_LEAF : PT_EMPTY;
	return t == V7S_L1_TABLE ? PT_TABLE :
	       t == V7S_L1_SECTION ? PT_LEAF : PT_EMPTY;
}

static bool v7s_is_run(const struct iopt_pgtable *pt, uint64_t pte,
		       unsigned lvl)
{
	(void)pt;
	if (lvl == 1)
		return pte & V7S_L1_SUPER;
	return (pte & V7S_TYPE_MASK) == V7S_L2_LARGE;
}

static uint64_t v7s_table_pa(const struct iopt_pgtable *pt, uint64_t pte,
			     unsigned lvl)
{
	uint64_t pa = pte & 0xfffffc00u;

	(void)lvl;
	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT)
		pa |= v7s_mtk_decode((uint32_t)pte);
	return pa;
}

static uint64_t v7s_make_table(const struct iopt_pgtable *pt, uint64_t pa,
			       unsigned lvl)
{
	uint32_t pte = ((uint32_t)pa & 0xfffffc00u) | V7S_L1_TABLE |
		       (uint32_t)pt->table_attr_base;

	(void)lvl;
	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT)
		pte |= v7s_mtk_encode(pa);
	return pte;
}

/* Encode canonical attributes attrs as a leaf at lvl. */
static uint32_t v7s_encode(const struct iopt_pgtable *pt, uint32_t attrs,
			   unsigned lvl, bool run, uint64_t pa)
{
	uint32_t pte;

	if (lvl == 1) {
		pte = attrs | V7S_L1_SECTION;
		pte |= run ? ((uint32_t)pa & 0xff000000u) | V7S_L1_SUPER :
			     (uint32_t)pa & 0xfff00000u;
	} else {
		pte = ((attrs & V7S_SHIFTED) >> 6) | (attrs & (V7S_B | V7S_C));
		if (run)
			pte |= ((uint32_t)pa & 0xffff0000u) | V7S_L2_LARGE |
			       (attrs & V7S_TEX_MASK) |
			       (attrs & V7S_XN ? V7S_L2_XN_LARGE : 0);
		else
			pte |= ((uint32_t)pa & 0xfffff000u) | V7S_L2_SMALL |
			       ((attrs & V7S_TEX_MASK) >> 6) |
			       (attrs & V7S_XN ? 1u : 0);
	}
	if (v7s_mtk(pt))
		pte |= v7s_mtk_encode(pa);
	return pte;
}

/* Canonical attributes of leaf pte at lvl. */
static uint32_t v7s_attrs(const struct iopt_pgtable *pt, uint32_t pte,
			  unsigned lvl)
{
	uint32_t a;

	if (v7s_mtk(pt))
		pte &= ~V7S_MTK_BITS;
	if (lvl == 1)
		return pte & (V7S_B | V7S_C | V7S_XN | V7S_AP0_AF | V7S_AP1_UNPRIV |
			      V7S_TEX_MASK | V7S_AP2_RDONLY | V7S_S | V7S_NG |
			      V7S_NS);
	a = ((pte << 6) & V7S_SHIFTED) | (pte & (V7S_B | V7S_C));
	if ((pte & V7S_TYPE_MASK) == V7S_L2_LARGE)
		a |= (pte & V7S_TEX_MASK) | (pte & V7S_L2_XN_LARGE ? V7S_XN : 0);
	else
		a |= ((pte & (7u << 6)) << 6) | (pte & 1 ? V7S_XN : 0);
	/* Level-2 leaves take NS from their table; keep it for re-encoding
	 * at level 1 (never happens: runs break at their own level). */
	return a;
}

static uint64_t v7s_make_leaf(const struct iopt_pgtable *pt, uint64_t pa,
			      unsigned lvl, unsigned prot, bool run)
{
	uint32_t attrs = (uint32_t)pt->prot_bits[prot];

	if (lvl == 2)
		attrs &= ~V7S_NS;
	return v7s_encode(pt, attrs, lvl, run, pa);
}

/*
 * A small page holds PA[31:12] in bits 31:12 (Arm ARM (ARMv7-A/R)
 * B3.5.1, "Short-descriptor translation table format descriptors") and
 * pa fits in 32 bits, so consecutive small pages differ by
 * the page size. A large page holds its base in every item, and the MTK
 * extension encodes PA[33:32] in low bits: neither is linear.
 */
static bool v7s_leaf_linear(const struct iopt_pgtable *pt, bool run)
{
	return !run && !v7s_mtk(pt);
}

static uint64_t v7s_relevel_leaf(const struct iopt_pgtable *pt, uint64_t pte,
				 unsigned from_lvl, unsigned to_lvl,
				 uint64_t pa)
{
	uint32_t attrs = v7s_attrs(pt, (uint32_t)pte, from_lvl);

	if (to_lvl == 2)
		attrs &= ~V7S_NS;	/* the table entry carries NS */
	return v7s_encode(pt, attrs, to_lvl, false, pa);
}

static uint64_t v7s_leaf_oa(const struct iopt_pgtable *pt, uint64_t pte,
			    unsigned lvl, unsigned *size_lg2)
{
	uint32_t p = (uint32_t)pte;
	uint64_t pa;

	if (lvl == 1) {
		*size_lg2 = p & V7S_L1_SUPER ? 24 : 20;
	} else {
		*size_lg2 = (p & V7S_TYPE_MASK) == V7S_L2_LARGE ? 16 : 12;
	}
	pa = p & ~((1u << *size_lg2) - 1);
	if (v7s_mtk(pt))
		pa |= v7s_mtk_decode(p);
	return pa;
}

static unsigned v7s_leaf_prot(const struct iopt_pgtable *pt, uint64_t pte,
			      unsigned lvl)
{
	uint32_t a = v7s_attrs(pt, (uint32_t)pte, lvl);
	uint32_t idx = a & (V7S_B | V7S_C);
	unsigned prot = 0;

	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_NO_PERMS) {
		prot = IOPT_READ | IOPT_WRITE;
	} else {
		prot = IOPT_READ;
		if (!(a & V7S_AP2_RDONLY))
			prot |= IOPT_WRITE;
		if (!(a & V7S_AP1_UNPRIV))
			prot |= IOPT_PRIV;
		if (a & V7S_XN)
			prot |= IOPT_NOEXEC;
	}
	if (idx == V7S_IDX_DEV)
		prot |= IOPT_MMIO;
	else if (idx == V7S_IDX_WB)
		prot |= IOPT_CACHE;
	return prot;
}

static unsigned v7s_run_items(const struct iopt_pgtable *pt, unsigned lvl)
{
	(void)pt;
	(void)lvl;
	return 16;
}

static const struct pt_fmt v7s_fmt = {
	.entry_lg2 = 2,
	.sync_bit = 0,		/* no spare bit: table entries always synced */
	.kind = v7s_kind,
	.is_run = v7s_is_run,
	/* A level 2 small page (0b1x; bit 0 is XN), not a large page
	 * (0b01) or a fault (0b00). */
	.plain_mask = V7S_L2_SMALL,
	.plain_val = V7S_L2_SMALL,
	.table_pa = v7s_table_pa,
	.make_table = v7s_make_table,
	.make_leaf = v7s_make_leaf,
	.leaf_linear = v7s_leaf_linear,
	.relevel_leaf = v7s_relevel_leaf,
	.leaf_oa = v7s_leaf_oa,
	.leaf_prot = v7s_leaf_prot,
	.run_items = v7s_run_items,
	.leaf_dirty = NULL,
	.dirty_clean_bits = 0,
};

PT_DEFINE_IMPL(v7s, &v7s_fmt);

/* ---- configuration ---------------------------------------------------- */

static uint32_t v7s_prot_bits(const struct iopt_pgtable *pt, unsigned prot)
{
	uint32_t a = V7S_S;

	if (prot & IOPT_MMIO)
		a |= V7S_IDX_DEV;
	else if (prot & IOPT_CACHE)
		a |= V7S_IDX_WB;
	if (!(pt->cfg.quirks & IOPT_PGTABLE_QUIRK_NO_PERMS)) {
		a |= V7S_AP0_AF;
		if (!(prot & IOPT_PRIV))
			a |= V7S_AP1_UNPRIV;
		if (!(prot & IOPT_WRITE))
			a |= V7S_AP2_RDONLY;
		if (prot & IOPT_NOEXEC)
			a |= V7S_XN;
	}
	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_NS)
		a |= V7S_NS;
	return a;
}

int pt_v7s_setup(struct iopt_pgtable *pt)
{
	const struct iopt_pgtable_cfg *cfg = &pt->cfg;
	uint32_t ok = IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_NO_PERMS | IOPT_PGTABLE_QUIRK_MTK_EXT |
		      IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT | PT_QUIRKS_ANY_FMT;
	bool mtk = cfg->quirks & IOPT_PGTABLE_QUIRK_MTK_EXT;

	if (cfg->quirks & ~ok)
		return -EINVAL;
	/* The MediaTek PA bits overlay the permission bits. */
	if (mtk && !(cfg->quirks & IOPT_PGTABLE_QUIRK_NO_PERMS))
		return -EINVAL;
	if (cfg->granule != 4096)
		return -EINVAL;
	/*
	 * ias: TTBCR.N (3 bits, 0-7) shortens the TTBR0 range to 2^(32 - N)
	 * bytes and its level-1 table to 16 KiB >> N (Arm ARM G8.2.165,
	 * TTBCR; short-descriptor format, "Selecting between TTBR0 and
	 * TTBR1"), so the format expresses 25 to 32 bits; the MediaTek
	 * extension also indexes 33 and 34 bits with a larger level-1 table
	 * (not an Arm format: TTBCR is not used there).
	 */
	if (cfg->ias < 25 || cfg->ias > (mtk ? 34u : 32u) || cfg->oas < 21 ||
	    cfg->oas > (mtk ? 35u : 32u))
		return -EINVAL;

	pt->start_level = 1;
	pt->levels = 2;
	pt->shift[0] = 20;
	pt->bits[0] = (uint8_t)(cfg->ias - 20);
	pt->shift[1] = 12;
	pt->bits[1] = 8;
	pt->table_bytes[0] = (size_t)4 << pt->bits[0];
	pt->table_bytes[1] = 1024;

	static const struct pt_size sizes[] = {
		{ .lg2 = 12, .depth = 1 }, { .lg2 = 16, .depth = 1, .run_lg2 = 4 },
		{ .lg2 = 20, .depth = 0 }, { .lg2 = 24, .depth = 0, .run_lg2 = 4 },
	};
	for (unsigned i = 0; i < 4; i++) {
		if (sizes[i].lg2 >= cfg->ias ||
		    (cfg->pgsize_bitmap && !(cfg->pgsize_bitmap >> sizes[i].lg2 & 1)))
			continue;
		pt->sizes[pt->nr_sizes++] = sizes[i];
	}
	if (!pt->nr_sizes)
		return -EINVAL;
	for (unsigned p = 0; p <= IOPT_PROT_MASK; p++)
		pt->prot_bits[p] = v7s_prot_bits(pt, p);
	pt->table_attr_base = (cfg->quirks & IOPT_PGTABLE_QUIRK_NS) ? V7S_TABLE_NS : 0;
	pt->impl = &v7s_impl;
	return 0;
}

/* PRRR/NMRR (B4.1.120, B4.1.152) for the TEX-remap indices above. */
#define PRRR_TR(n, t)		((uint32_t)(t) << (2 * (n)))
#define PRRR_DEVICE		1u
#define PRRR_NORMAL		2u
#define PRRR_DS0		(1u << 16)
#define PRRR_DS1		(1u << 17)
#define PRRR_NS0		(1u << 18)
#define PRRR_NS1		(1u << 19)
#define PRRR_NOS(n)		(1u << (24 + (n)))
#define NMRR_IR(n, r)		((uint32_t)(r) << (2 * (n)))
#define NMRR_OR(n, r)		((uint32_t)(r) << (16 + 2 * (n)))
#define RGN_NC			0u
#define RGN_WBWA		1u
/* TTBR0 (B4.1.154, multiprocessing extensions layout). */
#define TTBR_IRGN1		(1u << 0)
#define TTBR_S			(1u << 1)
#define TTBR_RGN_WBWA		(1u << 3)
#define TTBR_NOS		(1u << 5)
#define TTBR_IRGN0		(1u << 6)
/* TTBCR (B4.1.153). */
#define TTBCR_PD1		(1u << 5)

void pt_v7s_regs(struct iopt_pgtable *pt)
{
	struct iopt_pgtable_regs *r = &pt->info.regs;
	uint64_t pa = pt->top_pa;

	if (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT) {
		r->ttbr = (pa & 0xffffff80u) | ((pa >> 32) & 7);
	} else {
		r->ttbr = (pa & 0xffffffffu) | TTBR_S;
		if (pt->cfg.coherent_walk)
			r->ttbr |= TTBR_NOS | TTBR_IRGN0 | TTBR_RGN_WBWA;
	}
	/* TTBCR.N = 32 - ias (0-7, checked in pt_v7s_setup()) shortens the
	 * TTBR0 range; PD1: addresses above it fault instead of walking
	 * TTBR1. EAE (bit 31) = 0 selects this format. */
	r->tcr = (pt->cfg.ias < 32 ? 32 - pt->cfg.ias : 0) | TTBCR_PD1;
	r->prrr = PRRR_TR(0, PRRR_NORMAL) | PRRR_TR(1, PRRR_DEVICE) |
		  PRRR_TR(3, PRRR_NORMAL) | PRRR_DS0 | PRRR_DS1 | PRRR_NS1 |
		  PRRR_NOS(0) | PRRR_NOS(3);
	r->nmrr = NMRR_IR(0, RGN_NC) | NMRR_OR(0, RGN_NC) |
		  NMRR_IR(3, RGN_WBWA) | NMRR_OR(3, RGN_WBWA);
	r->mair = 0;
}
