/* SPDX-License-Identifier: MIT */
/*
 * STE and CD encoders and decoders (IHI0070 5.2, 5.4), as one table of
 * field positions per structure read both ways. Field positions are given
 * as in the specification: absolute bit numbers within the 512-bit
 * structure.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <iopgtable/smmu.h>

enum fkind { F_BOOL, F_UINT, F_U16, F_U64 };

struct field {
	uint16_t lo;		/* absolute lowest bit */
	uint8_t width;
	uint8_t kind;
	uint8_t shift;		/* value >> shift is stored (addresses) */
	size_t off;
};

#define FB(lo, s, m) { lo, 1, F_BOOL, 0, offsetof(s, m) }
#define FU(lo, w, s, m) { lo, w, F_UINT, 0, offsetof(s, m) }
#define F16(lo, w, s, m) { lo, w, F_U16, 0, offsetof(s, m) }
#define FA(lo, w, sh, s, m) { lo, w, F_U64, sh, offsetof(s, m) }

static const struct field ste_fields[] = {
	FB(0, struct iopt_ste, valid),
	FU(1, 3, struct iopt_ste, config),
	FU(4, 2, struct iopt_ste, s1_fmt),
	FA(6, 50, 6, struct iopt_ste, s1_context_ptr),	/* [55:6] */
	FU(59, 5, struct iopt_ste, s1_cd_max),
	FU(64, 2, struct iopt_ste, s1_dss),
	FU(92, 2, struct iopt_ste, eats),
	F16(128, 16, struct iopt_ste, s2_vmid),
	FU(160, 6, struct iopt_ste, s2_t0sz),
	FU(166, 2, struct iopt_ste, s2_sl0),
	FU(168, 2, struct iopt_ste, s2_ir0),
	FU(170, 2, struct iopt_ste, s2_or0),
	FU(172, 2, struct iopt_ste, s2_sh0),
	FU(174, 2, struct iopt_ste, s2_tg),
	FU(176, 3, struct iopt_ste, s2_ps),
	FB(179, struct iopt_ste, s2_aa64),
	FB(181, struct iopt_ste, s2_affd),
	FB(182, struct iopt_ste, s2_ptw),
	FB(183, struct iopt_ste, s2_hd),
	FB(184, struct iopt_ste, s2_ha),
	FB(185, struct iopt_ste, s2_s),
	FB(186, struct iopt_ste, s2_r),
	FA(196, 48, 4, struct iopt_ste, s2_ttb),	/* [247:196] = addr[51:4] */
};

static const struct field cd_fields[] = {
	FU(0, 6, struct iopt_cd, t0sz),
	FU(6, 2, struct iopt_cd, tg0),
	FU(8, 2, struct iopt_cd, ir0),
	FU(10, 2, struct iopt_cd, or0),
	FU(12, 2, struct iopt_cd, sh0),
	FB(14, struct iopt_cd, epd0),
	FU(16, 6, struct iopt_cd, t1sz),
	FU(22, 2, struct iopt_cd, tg1),
	FU(24, 2, struct iopt_cd, ir1),
	FU(26, 2, struct iopt_cd, or1),
	FU(28, 2, struct iopt_cd, sh1),
	FB(30, struct iopt_cd, epd1),
	FB(31, struct iopt_cd, valid),
	FU(32, 3, struct iopt_cd, ips),
	FB(35, struct iopt_cd, affd),
	FB(36, struct iopt_cd, wxn),
	FB(38, struct iopt_cd, tbi0),
	FB(39, struct iopt_cd, tbi1),
	FB(40, struct iopt_cd, pan),
	FB(41, struct iopt_cd, aa64),
	FB(42, struct iopt_cd, hd),
	FB(43, struct iopt_cd, ha),
	FB(44, struct iopt_cd, s),
	FB(45, struct iopt_cd, r),
	FB(46, struct iopt_cd, a),
	FB(47, struct iopt_cd, aset),
	F16(48, 16, struct iopt_cd, asid),
	FA(68, 48, 4, struct iopt_cd, ttb0),	/* [119:68] = addr[51:4] */
	FA(132, 48, 4, struct iopt_cd, ttb1),	/* [183:132] = addr[51:4] */
	FA(192, 64, 0, struct iopt_cd, mair),	/* MAIR0 [223:192], MAIR1 [255:224] */
};

static uint64_t mask_of(unsigned width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

static uint64_t get_val(const void *s, const struct field *f)
{
	const char *p = (const char *)s + f->off;

	switch (f->kind) {
	case F_BOOL: return *(const bool *)(const void *)p;
	case F_UINT: return *(const unsigned *)(const void *)p;
	case F_U16: return *(const uint16_t *)(const void *)p;
	default: return *(const uint64_t *)(const void *)p >> f->shift;
	}
}

static void set_val(void *s, const struct field *f, uint64_t v)
{
	char *p = (char *)s + f->off;

	switch (f->kind) {
	case F_BOOL: *(bool *)(void *)p = v != 0; break;
	case F_UINT: *(unsigned *)(void *)p = (unsigned)v; break;
	case F_U16: *(uint16_t *)(void *)p = (uint16_t)v; break;
	default: *(uint64_t *)(void *)p = v << f->shift; break;
	}
}

/* Fields never straddle a 64-bit word in these tables. */
static void encode(const struct field *fs, size_t n, const void *s,
		   uint64_t w[8])
{
	memset(w, 0, 8 * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		const struct field *f = &fs[i];

		w[f->lo / 64] |= (get_val(s, f) & mask_of(f->width)) << (f->lo % 64);
	}
}

static void decode(const struct field *fs, size_t n, const uint64_t w[8],
		   void *s)
{
	for (size_t i = 0; i < n; i++) {
		const struct field *f = &fs[i];

		set_val(s, f, (w[f->lo / 64] >> (f->lo % 64)) & mask_of(f->width));
	}
}

void iopt_ste_encode(const struct iopt_ste *ste, uint64_t words[8])
{
	encode(ste_fields, sizeof(ste_fields) / sizeof(ste_fields[0]), ste, words);
}

void iopt_ste_decode(const uint64_t words[8], struct iopt_ste *ste)
{
	memset(ste, 0, sizeof(*ste));
	decode(ste_fields, sizeof(ste_fields) / sizeof(ste_fields[0]), words, ste);
}

void iopt_cd_encode(const struct iopt_cd *cd, uint64_t words[8])
{
	encode(cd_fields, sizeof(cd_fields) / sizeof(cd_fields[0]), cd, words);
}

void iopt_cd_decode(const uint64_t words[8], struct iopt_cd *cd)
{
	memset(cd, 0, sizeof(*cd));
	decode(cd_fields, sizeof(cd_fields) / sizeof(cd_fields[0]), words, cd);
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

int iopt_cd_from_pgtable(const struct iopt_pgtable *pt, uint16_t asid,
			 struct iopt_cd *cd)
{
	struct iopt_info i;

	iopt_get_info(pt, &i);
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

int iopt_ste_s2_from_pgtable(const struct iopt_pgtable *pt, uint16_t vmid,
			     struct iopt_ste *ste)
{
	struct iopt_info i;

	iopt_get_info(pt, &i);
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
