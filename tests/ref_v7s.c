/* SPDX-License-Identifier: MIT */
/*
 * Reference walker for the ARMv7 short-descriptor format, written from the
 * Arm ARM (ARMv7-A/R, B3.5 "Short-descriptor translation table format"),
 * starting from the TTBR/TTBCR/PRRR/NMRR values the library reports:
 * SCTLR.AFE=1 (AP[0] is the access flag) and SCTLR.TRE=1 (TEX remap).
 */
#include "tutil.h"

void ref_walk_v7s(const struct iopt_pgtable_info *info, uint32_t quirks, tu_p2v_fn p2v,
		  void *ctx, uint64_t va, struct ref_walk *w);

static uint64_t mtk_pa(uint32_t d)
{
	return ((uint64_t)(d >> 9 & 1) << 32) | ((uint64_t)(d >> 4 & 1) << 33) |
	       ((uint64_t)(d >> 5 & 1) << 34);
}

/* Memory type from the TEX-remap index {TEX[0], C, B}. */
static unsigned remap(const struct iopt_pgtable_info *info, unsigned idx)
{
	unsigned tr = (info->regs.prrr >> (2 * idx)) & 3;
	unsigned ir = (info->regs.nmrr >> (2 * idx)) & 3;

	if (tr == 1 || tr == 0)
		return IOPT_MMIO;	/* device or strongly ordered */
	return ir == 1 ? IOPT_CACHE : 0;
}

void ref_walk_v7s(const struct iopt_pgtable_info *info, uint32_t quirks, tu_p2v_fn p2v,
		  void *ctx, uint64_t va, struct ref_walk *w)
{
	bool mtk = quirks & IOPT_PGTABLE_QUIRK_MTK_EXT, ttbr_ext = quirks &
							   IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT;
	bool perms = !(quirks & IOPT_PGTABLE_QUIRK_NO_PERMS);
	unsigned n = (unsigned)(info->regs.tcr & 7);	/* TTBCR.N */
	unsigned l1_bits = info->ias > 32 ? info->ias - 20 : 12 - n;
	uint64_t base;

	if (va >> (20 + l1_bits)) {
		w->fault_level = -1;
		return;
	}
	if (ttbr_ext)
		base = (info->regs.ttbr & 0xffffff80u) |
		       ((info->regs.ttbr & 7) << 32);
	else
		base = info->regs.ttbr & (0xffffffffu << (14 - n));

	const uint32_t *l1 = p2v(base, ctx);
	uint32_t d = __atomic_load_n(&l1[(va >> 20) & ((1u << l1_bits) - 1)],
				     __ATOMIC_ACQUIRE);
	uint32_t attrs;		/* section-layout attribute bits */
	unsigned level, size_lg2;
	uint64_t oa;

	w->nstable_all = true;
	switch (d & 3) {
	case 1: {		/* page table */
		uint64_t t = d & 0xfffffc00u;

		if (ttbr_ext)
			t |= mtk_pa(d);
		w->nstable_all = d >> 3 & 1;
		w->tables = 1;
		const uint32_t *l2 = p2v(t, ctx);
		uint32_t e = __atomic_load_n(&l2[(va >> 12) & 0xff], __ATOMIC_ACQUIRE);

		if (!(e & 3)) {
			w->fault_level = 2;
			return;
		}
		level = 2;
		w->desc = e;
		if ((e & 3) == 1) {	/* large page */
			size_lg2 = 16;
			w->cont = true;
			attrs = (e & 0xc) | (e & 0x7000) | (e >> 15 & 1 ? 0x10 : 0);
		} else {		/* small page */
			size_lg2 = 12;
			attrs = (e & 0xc) | ((e >> 6 & 7) << 12) | (e & 1 ? 0x10 : 0);
		}
		/* AP[0] 4, AP[1] 5, AP[2] 9, S 10, nG 11 -> section layout. */
		attrs |= (e >> 4 & 1) << 10 | (e >> 5 & 1) << 11 | (e >> 9 & 1) << 15 |
			 (e >> 10 & 1) << 16 | (e >> 11 & 1) << 17;
		oa = e & ~((1u << size_lg2) - 1);
		if (mtk)
			oa |= mtk_pa(e);
		break;
	}
	case 2:			/* section or supersection */
		level = 1;
		w->desc = d;
		if (d >> 18 & 1) {
			size_lg2 = 24;
			w->cont = true;
		} else {
			size_lg2 = 20;
		}
		attrs = d & 0xbfffc;
		oa = d & ~((1u << size_lg2) - 1);
		if (mtk)
			oa |= mtk_pa(d);
		w->ns = d >> 19 & 1;
		break;
	default:
		w->fault_level = 1;
		return;
	}
	if (perms && !(attrs >> 10 & 1)) {
		w->fault_level = (int)level;	/* access flag fault */
		return;
	}
	w->mapped = true;
	w->level = level;
	w->size = 1ull << size_lg2;
	w->oa = oa + (va & (w->size - 1));
	if (perms) {
		w->prot = IOPT_READ;
		if (!(attrs >> 15 & 1))
			w->prot |= IOPT_WRITE;
		if (!(attrs >> 11 & 1))
			w->prot |= IOPT_PRIV;
		if (attrs >> 4 & 1)
			w->prot |= IOPT_NOEXEC;
	} else {
		w->prot = IOPT_READ | IOPT_WRITE;
	}
	w->prot |= remap(info, (attrs >> 12 & 1) << 2 | (attrs >> 2 & 3));
}
