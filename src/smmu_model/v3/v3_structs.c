/* SPDX-License-Identifier: MIT */
/*
 * STE and CD encoders and decoders (IHI0070 5.2, 5.4). Each structure's
 * fields are listed once, as X(lo, width, shift, member) with lo the
 * absolute bit number within the 512-bit structure, as the specification
 * gives it, and shift how far the member is shifted right to give the
 * field (addresses); the list expands into both directions (v3_fields.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <iopgtable/smmuv3.h>

#include "v3_fields.h"

#define STE_FIELDS(X)							\
	X(0, 1, 0, valid)						\
	X(1, 3, 0, config)						\
	X(4, 2, 0, s1_fmt)						\
	X(6, 50, 6, s1_context_ptr)	/* [55:6] */			\
	X(59, 5, 0, s1_cd_max)						\
	X(64, 2, 0, s1_dss)						\
	X(92, 2, 0, eats)						\
	X(128, 16, 0, s2_vmid)						\
	X(160, 6, 0, s2_t0sz)						\
	X(166, 2, 0, s2_sl0)						\
	X(168, 2, 0, s2_ir0)						\
	X(170, 2, 0, s2_or0)						\
	X(172, 2, 0, s2_sh0)						\
	X(174, 2, 0, s2_tg)						\
	X(176, 3, 0, s2_ps)						\
	X(179, 1, 0, s2_aa64)						\
	X(181, 1, 0, s2_affd)						\
	X(182, 1, 0, s2_ptw)						\
	X(183, 1, 0, s2_hd)						\
	X(184, 1, 0, s2_ha)						\
	X(185, 1, 0, s2_s)						\
	X(186, 1, 0, s2_r)						\
	X(196, 48, 4, s2_ttb)		/* [247:196] = addr[51:4] */

#define CD_FIELDS(X)							\
	X(0, 6, 0, t0sz)						\
	X(6, 2, 0, tg0)							\
	X(8, 2, 0, ir0)							\
	X(10, 2, 0, or0)						\
	X(12, 2, 0, sh0)						\
	X(14, 1, 0, epd0)						\
	X(16, 6, 0, t1sz)						\
	X(22, 2, 0, tg1)						\
	X(24, 2, 0, ir1)						\
	X(26, 2, 0, or1)						\
	X(28, 2, 0, sh1)						\
	X(30, 1, 0, epd1)						\
	X(31, 1, 0, valid)						\
	X(32, 3, 0, ips)						\
	X(35, 1, 0, affd)						\
	X(36, 1, 0, wxn)						\
	X(38, 1, 0, tbi0)						\
	X(39, 1, 0, tbi1)						\
	X(40, 1, 0, pan)						\
	X(41, 1, 0, aa64)						\
	X(42, 1, 0, hd)							\
	X(43, 1, 0, ha)							\
	X(44, 1, 0, s)							\
	X(45, 1, 0, r)							\
	X(46, 1, 0, a)							\
	X(47, 1, 0, aset)						\
	X(48, 16, 0, asid)						\
	X(68, 48, 4, ttb0)		/* [119:68] = addr[51:4] */	\
	X(132, 48, 4, ttb1)		/* [183:132] = addr[51:4] */	\
	X(192, 64, 0, mair)		/* MAIR0 [223:192], MAIR1 [255:224] */

#define ENC_FIELD(lo, width, shift, m) \
	fld_put(w, &bad, (uint64_t)s->m, lo, width, shift);
#define DEC_FIELD(lo, width, shift, m) s->m = fld_get(words, lo, width, shift);

/* words = w if every field fitted (bad == 0), else -EINVAL and words
 * untouched. */
static int store(const uint64_t w[8], uint64_t bad, uint64_t words[8])
{
	if (bad)
		return -EINVAL;
	memcpy(words, w, 8 * sizeof(uint64_t));
	return 0;
}

int iopt_smmuv3_ste_encode(const struct iopt_smmuv3_ste *s, uint64_t words[8])
{
	uint64_t w[8] = { 0 }, bad = 0;

	STE_FIELDS(ENC_FIELD)
	return store(w, bad, words);
}

void iopt_smmuv3_ste_decode(const uint64_t words[8], struct iopt_smmuv3_ste *s)
{
	memset(s, 0, sizeof(*s));
	STE_FIELDS(DEC_FIELD)
}

int iopt_smmuv3_cd_encode(const struct iopt_smmuv3_cd *s, uint64_t words[8])
{
	uint64_t w[8] = { 0 }, bad = 0;

	CD_FIELDS(ENC_FIELD)
	return store(w, bad, words);
}

void iopt_smmuv3_cd_decode(const uint64_t words[8], struct iopt_smmuv3_cd *s)
{
	memset(s, 0, sizeof(*s));
	CD_FIELDS(DEC_FIELD)
}

/* TCR/VTCR fields, as pt_lpae_regs() writes them (Arm ARM D19.2). */
static unsigned bits_of(uint64_t v, unsigned hi, unsigned lo)
{
	return (unsigned)((v >> lo) & ((1ull << (hi - lo + 1)) - 1));
}

/* TTBR to a table address: BADDR, with [51:48] in bits 5:2 for 52 bits. */
static uint64_t ttbr_addr(uint64_t ttbr, bool pa52)
{
	uint64_t a = ttbr & ((1ull << 48) - 1) & ~0x3full;

	if (pa52)
		a |= (uint64_t)bits_of(ttbr, 5, 2) << 48;
	return a;
}

int iopt_smmuv3_cd_from_pgtable(const struct iopt_pgtable *pt, uint16_t asid,
				struct iopt_smmuv3_cd *cd)
{
	struct iopt_pgtable_info i;

	iopt_pgtable_get_info(pt, &i);
	if (i.fmt != IOPT_ARM_64_LPAE_S1)
		return -EINVAL;
	uint64_t tcr = i.regs.tcr;
	bool ttbr1 = bits_of(tcr, 7, 7);	/* EPD0: the table is TTBR1's */
	bool pa52 = bits_of(tcr, 34, 32) == 6;

	memset(cd, 0, sizeof(*cd));
	cd->valid = true;
	cd->aa64 = true;
	cd->ips = bits_of(tcr, 34, 32);
	cd->asid = asid;
	cd->mair = i.regs.mair;
	cd->r = true;
	cd->a = true;
	cd->ha = bits_of(tcr, 39, 39);
	cd->hd = bits_of(tcr, 40, 40);
	if (ttbr1) {
		cd->epd0 = true;
		cd->t1sz = bits_of(tcr, 21, 16);
		cd->tg1 = bits_of(tcr, 31, 30);
		cd->ir1 = bits_of(tcr, 25, 24);
		cd->or1 = bits_of(tcr, 27, 26);
		cd->sh1 = bits_of(tcr, 29, 28);
		cd->ttb1 = ttbr_addr(i.regs.ttbr, pa52);
	} else {
		cd->epd1 = true;
		cd->t0sz = bits_of(tcr, 5, 0);
		cd->tg0 = bits_of(tcr, 15, 14);
		cd->ir0 = bits_of(tcr, 9, 8);
		cd->or0 = bits_of(tcr, 11, 10);
		cd->sh0 = bits_of(tcr, 13, 12);
		cd->ttb0 = ttbr_addr(i.regs.ttbr, pa52);
	}
	return 0;
}

int iopt_smmuv3_ste_s2_from_pgtable(const struct iopt_pgtable *pt, uint16_t vmid,
				    struct iopt_smmuv3_ste *ste)
{
	struct iopt_pgtable_info i;

	iopt_pgtable_get_info(pt, &i);
	if (i.fmt != IOPT_ARM_64_LPAE_S2)
		return -EINVAL;
	uint64_t vtcr = i.regs.tcr;

	ste->s2_vmid = vmid;
	ste->s2_t0sz = bits_of(vtcr, 5, 0);
	ste->s2_sl0 = bits_of(vtcr, 7, 6);
	ste->s2_ir0 = bits_of(vtcr, 9, 8);
	ste->s2_or0 = bits_of(vtcr, 11, 10);
	ste->s2_sh0 = bits_of(vtcr, 13, 12);
	ste->s2_tg = bits_of(vtcr, 15, 14);
	ste->s2_ps = bits_of(vtcr, 18, 16);
	ste->s2_aa64 = true;
	ste->s2_r = true;
	ste->s2_ttb = ttbr_addr(i.regs.ttbr, ste->s2_ps == 6);
	return 0;
}
