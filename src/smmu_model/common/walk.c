/* SPDX-License-Identifier: MIT */
/*
 * The translation table walker (walk.h): stage configurations decoded
 * from CDs and STEs, the long-descriptor walk (stage 1 and 2, nested
 * fetches through stage 2, hardware access-flag and dirty updates) and
 * the short-descriptor (v7s) walk of the SMMUv2 model. One file over 600
 * lines on purpose: the two walks share the fault, abort and stage 2
 * fetch helpers, kept static so that the compiler inlines them (or
 * their fast paths) into the walks, which run on every TLB miss of both
 * models.
 */
#include "walk.h"

#include <errno.h>
#include <string.h>

#include "../../platform/platform.h"

static const unsigned ps_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 52 };

static unsigned shift_of(unsigned g, unsigned level)
{
	return g + (3 - level) * (g - 3);
}

/* Levels needed for ias bits with granule g. */
static unsigned start_level(unsigned g, unsigned ias)
{
	unsigned levels = (ias - g + (g - 3) - 1) / (g - 3);

	return 4 - levels;
}

/*
 * The start-level table address: TTB bits below the table's alignment are
 * treated as zero (5.2 S2TTB, 5.4 TTB0: "the SMMU effectively aligns the
 * value in this field before use"); the alignment is the start-level
 * table's size (concatenated tables at stage 2), at least 64 bytes with
 * a 52-bit output.
 */
static uint64_t align_ttb(const struct smmu_stage_cfg *c, uint64_t ttb)
{
	unsigned x = c->ias - shift_of(c->g, c->start) + 3;

	if (c->oas == 52 && x < 6)
		x = 6;
	return ttb & ~((1ull << x) - 1);
}

/* TG encodings (5.2 S2TG and 5.4 TG0: 4K, 64K, 16K; 5.4 TG1: -, 16K, 4K,
 * 64K) to the granule's lg2, or 0 for Reserved or one the SMMU does not
 * advertise in SMMU_IDR5.GRAN* (both ILLEGAL). */
static unsigned granule_of(unsigned tg, bool tg1, const struct smmu_caps *caps)
{
	static const unsigned tg0_g[4] = { 12, 16, 14, 0 }, tg1_g[4] = { 0, 14, 12, 16 };
	unsigned g = tg1 ? tg1_g[tg & 3] : tg0_g[tg & 3];

	return g && (caps->grans >> g & 1) ? g : 0;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

int smmu_cfg_from_cd(const struct iopt_smmuv3_cd *cd, bool upper,
		     const struct smmu_caps *caps, struct smmu_stage_cfg *c)
{
	unsigned tsz = upper ? cd->t1sz : cd->t0sz;
	uint64_t ttb = upper ? cd->ttb1 : cd->ttb0;
	unsigned g = granule_of(upper ? cd->tg1 : cd->tg0, upper, caps);

	/* 5.4.2 CdIllegal(): AA64 = 0 selects VMSAv8-32 LPAE, not
	 * implemented (IDR0.TTF = 0b10); HA needs IDR0.HTTU >= 0b01, HD
	 * needs 0b10. */
	if (!cd->valid || !cd->aa64 || (cd->ha && caps->httu < 1) ||
	    (cd->hd && caps->httu < 2) || !g)
		return -EINVAL;
	/* TxSZ: 16..39 here, as IDR5.VAX = 0 (48-bit VAs, even with the 64K
	 * granule) and IDR3.STT = 0; out of range is ILLEGAL from SMMUv3.1
	 * (CDTxSZInvalid()). */
	if (tsz > 39 || tsz < 16)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->stage = 1;
	c->g = g;
	c->ias = 64 - tsz;
	c->start = start_level(g, c->ias);
	/* eff_IPS = MIN(CD.IPS, SMMU_IDR5.OAS) (5.4 IPS). */
	c->oas = min_u(ps_bits[cd->ips], caps->oas);
	c->pa52 = caps->oas == 52;
	/* TTBx: ILLEGAL outside eff_IPS, or outside 48 bits with a 4K or
	 * 16K granule (CD.DS = 0). */
	if (ttb >> c->oas || (g < 16 && ttb >> 48))
		return -EINVAL;
	c->ttb = align_ttb(c, ttb);
	c->upper = upper;
	c->affd = cd->affd;
	c->wxn = cd->wxn;
	c->pan = cd->pan;
	c->tbi = upper ? cd->tbi1 : cd->tbi0;
	/* {HD, HA} = {1, 0} is Reserved and behaves as {0, 0}. */
	c->ha = cd->ha;
	c->hd = cd->hd && cd->ha;
	c->mair = cd->mair;
	smmu_cfg_set_region(c);
	return 0;
}

int smmu_cfg_from_ste_s2(const struct iopt_smmuv3_ste *ste,
			 const struct smmu_caps *caps, struct smmu_stage_cfg *c)
{
	unsigned g = granule_of(ste->s2_tg, false, caps);

	/* 5.2.2 SteIllegal(): S2TG Reserved or not advertised; S2AA64 = 0
	 * (VMSAv8-32 LPAE, IDR0.TTF = 0b10); S2HA above IDR0.HTTU = 0b00,
	 * S2HD above 0b01. */
	if (!g || !ste->s2_aa64 || (ste->s2_ha && caps->httu < 1) ||
	    (ste->s2_hd && caps->httu < 2))
		return -EINVAL;
	/* S2T0SZ (STES2T0SZInvalid()): at most 39 (IDR3.STT = 0), at least
	 * MAX(16, 64 - IAS), or MAX(12, 64 - IAS) with the 64K granule;
	 * IAS = OAS as VMSAv8-32 LPAE is not implemented (3.4). */
	unsigned tmin = 64 - caps->oas;

	if (tmin < (g == 16 ? 12u : 16u))
		tmin = g == 16 ? 12u : 16u;
	if (ste->s2_t0sz > 39 || ste->s2_t0sz < tmin)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->stage = 2;
	c->g = g;
	c->ias = 64 - ste->s2_t0sz;
	/* VTCR.SL0: 4K 0/1/2 = level 2/1/0; 16K and 64K 0/1/2 = 3/2/1. */
	if (ste->s2_sl0 == 3)
		return -EINVAL;
	c->start = g == 12 ? 2 - ste->s2_sl0 : 3 - ste->s2_sl0;
	/* The start level resolves 1..(bits per level + 4) bits: at most 16
	 * concatenated tables (Arm ARM D8.2.7); otherwise S2SL0 is
	 * inconsistent with S2T0SZ and S2TG: ILLEGAL. */
	unsigned top = shift_of(g, c->start);

	if (c->ias <= top || c->ias - top > (g - 3) + 4)
		return -EINVAL;
	/* eff_S2PS = MIN(S2PS, SMMU_IDR5.OAS) (5.2 S2PS). */
	c->oas = min_u(ps_bits[ste->s2_ps], caps->oas);
	c->pa52 = caps->oas == 52;
	if (ste->s2_ttb >> c->oas || (g < 16 && ste->s2_ttb >> 48))
		return -EINVAL;
	c->ttb = align_ttb(c, ste->s2_ttb);
	c->affd = ste->s2_affd;
	c->ptw = ste->s2_ptw;
	/* {S2HA, S2HD} = {0, 1} is Reserved and behaves as {0, 0}. */
	c->ha = ste->s2_ha;
	c->hd = ste->s2_hd && ste->s2_ha;
	smmu_cfg_set_region(c);
	return 0;
}

void smmu_cfg_set_region(struct smmu_stage_cfg *c)
{
	/* TTB0: va >> ias == 0. TTB1: va >> ias is the top of the space
	 * (64 or, AArch32, 32 bits) >> ias -- as masks: the bits from ias
	 * up, all clear, or set up to the top of the space. */
	uint64_t mask = c->ias >= 64 ? 0 : ~0ull << c->ias;
	uint64_t val = c->upper ? (c->va32 ? 0xffffffffull : ~0ull) & mask : 0;

	/* TBI (Arm ARM D8.8): the check is of the untagged address, whose
	 * bits [63:56] are copies of bit 55 (smmu_untag). val's bits from
	 * 55 (or from ias, when above) up to 63 are all equal: all clear,
	 * or all set for a 64-bit TTB1 region (a 32-bit space has ias <=
	 * 32). So when the mask holds tag bits, they become a check of bit
	 * 55 against val's bit 63, and va's own bits [63:56] go unread. */
	if (c->tbi && (mask >> 56)) {
		mask = (mask & ~(0xffull << 56)) | 1ull << 55;
		val = (val & ~(0x1ffull << 55)) | (val >> 63) << 55;
	}
	c->region_mask = mask;
	c->region_val = val;
}

static uint64_t desc_addr(const struct smmu_stage_cfg *c, uint64_t d)
{
	uint64_t a = d & ((1ull << 48) - 1) & ~((1ull << c->g) - 1);

	/* Arm ARM D8.3: with FEAT_LPA and the 64K granule, bits [15:12]
	 * hold OA[51:48]; an OA beyond the stage's effective PS is then an
	 * Address Size fault, not a truncation. */
	if (c->g == 16 && c->pa52)
		a |= (d & 0xf000ull) << 36;
	return a;
}

static bool block_ok(const struct smmu_stage_cfg *c, unsigned level)
{
	if (level >= 2)
		return true;
	if (level == 1)
		/* AArch64.BlockDescSupported(): 64K level 1 blocks need
		 * a 52-bit PA implementation (PAMax), not a 52-bit PS. */
		return c->g == 12 || (c->g == 16 && c->pa52);
	return false;
}

static unsigned run_lg2(unsigned g, unsigned level)
{
	if (g == 12)
		return 4;
	if (g == 14)
		return level == 3 ? 7 : 5;
	return 5;
}

/* A fault translating ia; a stage 2 fault records ia as its IPA (7.3.13:
 * F_TRANSLATION, F_ADDR_SIZE, F_ACCESS and F_PERMISSION alike). */
static void set_fault(struct smmu_walk_res *r, enum smmu_fault f,
		      unsigned stage, unsigned level, uint64_t ia)
{
	r->fault = f;
	r->fault_stage = stage;
	r->level = level;
	if (stage == 2)
		r->ipa = ia;
}

/* An external abort reading or updating the descriptor at pa. */
static void walk_abort(struct smmu_walk_res *r, uint64_t pa, unsigned stage,
		       unsigned level)
{
	set_fault(r, SMMU_F_WALK_EABT, stage, level, 0);
	r->fetch_pa = pa;
}

static void walk_stage(const struct smmu_stage_cfg *c,
		       const struct smmu_stage_cfg *s2,
		       const struct smmu_mem *m, uint64_t ia, unsigned acc,
		       struct smmu_walk_res *r);

/* A stage 1 table fetch in a nested walk: translate its IPA. */
static bool fetch_addr(const struct smmu_stage_cfg *s2, const struct smmu_mem *m,
		       uint64_t ipa, uint64_t *pa, struct smmu_walk_res *r)
{
	struct smmu_walk_res t;

	if (!s2) {
		*pa = ipa;
		return true;
	}
	memset(&t, 0, sizeof(t));
	walk_stage(s2, NULL, m, ipa, 0, &t);
	unsigned fetches = r->fetches + t.fetches, probes = r->probes + t.probes;

	/* S2PTW: a stage 1 walk may not read Device memory (stage 2
	 * MemAttr[3:2] = 0b00): a stage 2 permission fault. */
	if (!t.fault && s2->ptw && !(t.desc >> 4 & 3))
		set_fault(&t, SMMU_F_PERMISSION, 2, t.level, ipa);
	if (t.fault) {
		*r = t;
		r->ipa = ipa;
		r->s2_on_walk = true;
	} else {
		*pa = t.oa;
	}
	r->fetches = fetches;
	r->probes = probes;
	return !t.fault;
}

/*
 * Before a hardware update of a stage 1 descriptor in a nested walk: the
 * update is a write to the descriptor's IPA, so stage 2 must permit a
 * write there (updating the stage 2 dirty state if S2HD allows); if it
 * does not, the walk takes a stage 2 fault on the table access with
 * TTRnW = 0 (IHI0070 3.13, 7.3.16). true: the update may proceed.
 */
static bool tt_write_ok(const struct smmu_stage_cfg *s2, const struct smmu_mem *m,
			uint64_t ipa, struct smmu_walk_res *r)
{
	struct smmu_walk_res t;

	if (!s2)
		return true;
	memset(&t, 0, sizeof(t));
	walk_stage(s2, NULL, m, ipa, SMMU_ACC_WRITE, &t);
	unsigned fetches = r->fetches + t.fetches, probes = r->probes + t.probes;

	if (t.fault) {
		*r = t;
		r->ipa = ipa;
		r->s2_on_walk = true;
		r->tt_write = true;
	}
	r->fetches = fetches;
	r->probes = probes;
	return !t.fault;
}

static void walk_stage(const struct smmu_stage_cfg *c,
		       const struct smmu_stage_cfg *s2,
		       const struct smmu_mem *m, uint64_t ia, unsigned acc,
		       struct smmu_walk_res *r)
{
	unsigned level = c->start;
	uint64_t base = c->ttb, hier = 0;	/* stage 1 table attributes */
	const bool write = acc & SMMU_ACC_WRITE, exec = acc & SMMU_ACC_EXEC;

	if (!smmu_in_region(c, ia)) {
		set_fault(r, SMMU_F_TRANSLATION, c->stage, level, ia);
		return;
	}
	/* Start from the deepest table the walk caches know. */
	if (m->wc)
		for (unsigned l = 3; l > c->start; l--) {
			uint64_t tbl;

			r->probes++;
			if (m->wc->lookup(m->wc->ctx, c->stage, l, ia,
					  shift_of(c->g, l - 1), &tbl, &hier)) {
				level = l;
				base = tbl;
				break;
			}
		}
	for (;;) {
		unsigned shift = shift_of(c->g, level);
		unsigned bits = level == c->start ? c->ias - shift : c->g - 3;
		uint64_t idx = (ia >> shift) & ((1ull << bits) - 1);
		uint64_t pa = 0, d, ipa = base + idx * 8;
		bool wr_ok = false;	/* stage 2 allows updating it */

		if (!fetch_addr(s2, m, ipa, &pa, r))
			return;
		if (m->load64(m->ctx, pa, &d)) {
			walk_abort(r, pa, c->stage, level);
			return;
		}
		r->fetches++;
		if (!(d & D_VALID)) {
			set_fault(r, SMMU_F_TRANSLATION, c->stage, level, ia);
			return;
		}
		if (level < 3 && (d & 3) == 3) {
			uint64_t next = desc_addr(c, d);

			if (c->oas < 64 && next >> c->oas) {
				set_fault(r, SMMU_F_ADDR_SIZE, c->stage, level, ia);
				return;
			}
			base = next;
			level++;
			if (c->stage == 1)
				hier |= d & T_HIER;
			if (m->wc)
				m->wc->insert(m->wc->ctx, c->stage, level, ia, shift,
					      c->g, base, hier);
			continue;
		}
		if ((level == 3 && (d & 3) != 3) || (level < 3 && !block_ok(c, level))) {
			set_fault(r, SMMU_F_TRANSLATION, c->stage, level, ia);
			return;
		}
		uint64_t size = 1ull << shift;
		uint64_t oa = (desc_addr(c, d) & ~(size - 1)) | (ia & (size - 1));

		if (c->oas < 64 && oa >> c->oas) {
			set_fault(r, SMMU_F_ADDR_SIZE, c->stage, level, ia);
			return;
		}
		/* Access flag (D8.5): hardware update or fault. */
		while (!(d & D_AF)) {
			if (!c->ha) {
				if (!c->affd) {
					set_fault(r, SMMU_F_ACCESS, c->stage, level, ia);
					return;
				}
				/* AFFD: AF is considered to be 1, also in
				 * what a TLB caches (5.4 AFFD). */
				d |= D_AF;
				break;
			}
			if (!wr_ok && !(wr_ok = tt_write_ok(s2, m, ipa, r)))
				return;
			int e = m->cas64(m->ctx, pa, &d, d | D_AF);

			if (e == -EFAULT) {
				walk_abort(r, pa, c->stage, level);
				return;
			}
			if (!e)
				d |= D_AF;
		}
		/* Permissions (D8.4) and dirty state (D8.6). */
		bool ok;

		if (c->stage == 1) {
			ok = smmu_stage1_allows(c, smmu_apply_hier(d, hier), acc);
			while (ok && write && (smmu_apply_hier(d, hier) & D_AP_RDONLY)) {
				if (!(c->hd && (smmu_apply_hier(d, hier) & D_DBM))) {
					ok = false;
					break;
				}
				if (!wr_ok && !(wr_ok = tt_write_ok(s2, m, ipa, r)))
					return;
				int e = m->cas64(m->ctx, pa, &d, d & ~D_AP_RDONLY);

				if (e == -EFAULT) {
					walk_abort(r, pa, 1, level);
					return;
				}
				if (!e)
					d &= ~D_AP_RDONLY;
			}
			r->attr = (unsigned)(c->mair >> (8 * ((d >> 2) & 7))) & 0xff;
		} else {
			/* S2AP[0] (bit 6) reads, S2AP[1] (bit 7) writes, XN
			 * (bit 54) instruction fetches. */
			if (exec)
				ok = !(d & D_UXN);
			else
				ok = write || (d & D_AP_UNPRIV);
			while (ok && write && !(d & D_AP_RDONLY)) {
				if (!(c->hd && (d & D_DBM))) {
					ok = false;
					break;
				}
				int e = m->cas64(m->ctx, pa, &d, d | D_AP_RDONLY);

				if (e == -EFAULT) {
					walk_abort(r, pa, 2, level);
					return;
				}
				if (!e)
					d |= D_AP_RDONLY;
			}
			r->attr = (unsigned)(d >> 2) & 0xf;
		}
		if (!ok) {
			set_fault(r, SMMU_F_PERMISSION, c->stage, level, ia);
			return;
		}
		r->fault = SMMU_OK;
		r->level = level;
		r->oa = oa;
		/* What a TLB keeps: the leaf as the tables above restrict it. */
		r->desc = c->stage == 1 ? smmu_apply_hier(d, hier) : d;
		r->size_lg2 = shift + ((d & D_CONT) ? run_lg2(c->g, level) : 0);
		return;
	}
}

/* A 32-bit descriptor, read as half of the naturally aligned 64-bit
 * single-copy-atomic load that holds it (little-endian tables). */
static int load32(const struct smmu_mem *m, uint64_t pa, uint32_t *d)
{
	uint64_t v;
	int e = m->load64(m->ctx, pa & ~7ull, &v);

	*d = (uint32_t)(pa & 4 ? v >> 32 : v);
	return e;
}

/* A short-descriptor cacheability encoding (TEX[1:0] or C,B without
 * remap; NMRR.IRn/ORn with it): 00 Non-cacheable, 01 Write-Back
 * Read/Write-Allocate, 10 Write-Through Read-Allocate, 11 Write-Back
 * Read-Allocate (Arm ARM G5.7.2.1, Table G5-13), as a MAIR nibble. */
static unsigned v7s_cache_nibble(unsigned enc)
{
	static const unsigned nib[4] = { 0x4, 0xf, 0xa, 0xe };

	return nib[enc & 3];
}

#define V7S_SH_NON	0u	/* LPAE SH encodings (G5.7.4.1) */
#define V7S_SH_OUTER	2u
#define V7S_SH_INNER	3u

/*
 * The memory type of a short-descriptor leaf as a MAIR attribute byte and
 * its Shareability as an LPAE SH value. Without TEX remap (SCTLR.TRE = 0,
 * G5.7.2, Table G5-12) from TEX[2:0], C, B and S; with it (G5.7.3, Tables
 * G5-14 and G5-15) from PRRR.TRn (00 Device-nGnRnE, 01 Device-nGnRE, 10
 * Normal), NMRR.IRn/ORn, PRRR.NS0/NS1 (bits 18/19, chosen by S) and
 * PRRR.NOSn (bit 24 + n), n = {TEX[0], C, B}. Device memory and Normal
 * Inner and Outer Non-cacheable memory are Outer Shareable. Reserved and
 * IMPLEMENTATION DEFINED encodings (TRE = 0: TEX 001 with B, TEX 010 but
 * 0b010/0/0, TEX 011; TRE = 1: TRn = 11) are taken as Device-nGnRnE, the
 * most restrictive type; with TRE = 1, n = 6 uses TR6/IR6/OR6/NOS6 like
 * the others (docs/smmu_model.md).
 */
static void v7s_attrs(const struct smmu_stage_cfg *c, unsigned tex, unsigned cb,
		      bool s, unsigned *attr, unsigned *sh)
{
	const uint32_t prrr = (uint32_t)c->mair, nmrr = (uint32_t)(c->mair >> 32);
	unsigned inner, outer;

	*attr = 0x00;			/* Device-nGnRnE */
	*sh = V7S_SH_OUTER;
	if (c->tre) {
		unsigned n = (tex & 1) << 2 | cb, tr = prrr >> (2 * n) & 3;

		if (tr == 1)
			*attr = 0x04;	/* Device-nGnRE */
		if (tr != 2)
			return;
		inner = nmrr >> (2 * n) & 3;
		outer = nmrr >> (16 + 2 * n) & 3;
		*attr = v7s_cache_nibble(outer) << 4 | v7s_cache_nibble(inner);
		if (!inner && !outer)
			return;
		if (!(prrr >> (18 + (s ? 1 : 0)) & 1))
			*sh = V7S_SH_NON;
		else
			*sh = (prrr >> (24 + n) & 1) ? V7S_SH_INNER : V7S_SH_OUTER;
		return;
	}
	if (tex & 4) {			/* 1BB AA: outer BB, inner AA */
		inner = cb;
		outer = tex & 3;
	} else {
		switch (tex << 2 | cb) {
		case 0x1:		/* 000 0 1 */
		case 0x8:		/* 010 0 0 */
			*attr = 0x04;
			return;
		case 0x2:		/* 000 1 0: WT, no Write-Allocate */
			inner = outer = 2;
			break;
		case 0x3:		/* 000 1 1: WB, no Write-Allocate */
			inner = outer = 3;
			break;
		case 0x4:		/* 001 0 0: Non-cacheable */
			inner = outer = 0;
			break;
		case 0x7:		/* 001 1 1: WB, Write-Allocate */
			inner = outer = 1;
			break;
		default:		/* 000 0 0 Device-nGnRnE; reserved */
			return;
		}
	}
	*attr = v7s_cache_nibble(outer) << 4 | v7s_cache_nibble(inner);
	if (inner || outer)
		*sh = s ? V7S_SH_OUTER : V7S_SH_NON;	/* G5.7.2.2 */
}

/*
 * Short-descriptor access permissions with SCTLR.AFE = 0 (G5.6.1.2,
 * Table G5-9), by AP[2:0]: bit 0 PL1 read, 1 PL1 write, 2 unprivileged
 * read, 3 unprivileged write. AP = 0b100 is Reserved: no access here
 * (docs/smmu_model.md).
 */
static const uint8_t v7s_ap_full[8] = { 0x0, 0x3, 0x7, 0xf, 0x0, 0x1, 0x5, 0x5 };

/* Does AP[2:0] (AFE = 0) with XN/PXN allow acc? Execution needs read
 * permission at the access's level, XN clear (PXN for a privileged
 * fetch), and no write permission with WXN; a privileged fetch from a
 * page unprivileged software may write is never allowed (G5.6.3). */
static bool v7s_full_allows(const struct smmu_stage_cfg *c, unsigned ap, bool xn,
			    bool pxn, unsigned acc)
{
	const bool priv = acc & SMMU_ACC_PRIV, exec = acc & SMMU_ACC_EXEC;
	const unsigned p = v7s_ap_full[ap & 7];
	const unsigned rd = priv ? 1u : 4u, wr = priv ? 2u : 8u;

	if (!(p & ((acc & SMMU_ACC_WRITE) ? wr : rd)))
		return false;
	if (!exec)
		return true;
	if (xn || (priv && pxn) || (priv && (p & 8)))
		return false;
	return !(c->wxn && (p & 0xa));
}

/*
 * Stage 1 short-descriptor walk (Arm ARM G5.4; ARMv7-A B3.5). Level 1:
 * bits [1:0] 01 a page table (base 31:10, PXN 2), 10 a section (base
 * 31:20) or with bit 18 a supersection (base 31:24, PA[35:32] 23:20,
 * PA[39:36] 8:5), with PXN 0, B 2, C 3, XN 4, AP[1:0] 11:10, TEX 14:12,
 * AP[2] 15, S 16, nG 17; 00 and 11 fault. Level 2: 01 a large page (base
 * 31:16, XN 15, TEX 14:12), 1x a small page (base 31:12, XN 0, TEX 8:6),
 * both with B 2, C 3, AP[1:0] 5:4, AP[2] 9, S 10, nG 11. With SCTLR.AFE =
 * 1, AP[0] is the access flag, AP[1] allows unprivileged access and AP[2]
 * makes it read-only (G5.6.1.1); with AFE = 0 AP[2:0] are the permissions
 * (G5.6.1.2) and there is no Access flag fault. Out of line: inlined,
 * it would make smmu_walk save registers for every long-descriptor walk.
 */
static __attribute__((noinline)) void
walk_v7s(const struct smmu_stage_cfg *c, const struct smmu_stage_cfg *s2,
	 const struct smmu_mem *m, uint64_t ia, unsigned acc,
	 struct smmu_walk_res *r)
{
	const unsigned l1_bits = c->ias - 20;
	uint64_t pa = 0, oa;
	uint32_t d, ap, xn, pxn, ng, tex, cb, sbit;
	unsigned level = 1, size_lg2;

	if (!smmu_in_region(c, ia)) {
		set_fault(r, SMMU_F_TRANSLATION, 1, 1, ia);
		return;
	}
	uint64_t ipa = c->ttb + ((ia >> 20) & ((1ull << l1_bits) - 1)) * 4;

	if (!fetch_addr(s2, m, ipa, &pa, r))
		return;
	if (load32(m, pa, &d)) {
		walk_abort(r, pa, 1, 1);
		return;
	}
	r->fetches++;
	switch (d & 3) {
	case 1: {			/* page table */
		uint32_t e;

		pxn = d >> 2 & 1;
		level = 2;
		ipa = (d & 0xfffffc00u) + ((ia >> 12) & 0xff) * 4;
		if (!fetch_addr(s2, m, ipa, &pa, r))
			return;
		if (load32(m, pa, &e)) {
			walk_abort(r, pa, 1, 2);
			return;
		}
		r->fetches++;
		if (!(e & 3)) {
			set_fault(r, SMMU_F_TRANSLATION, 1, 2, ia);
			return;
		}
		if ((e & 3) == 1) {	/* large page */
			size_lg2 = 16;
			xn = e >> 15 & 1;
			tex = e >> 12 & 7;
		} else {		/* small page */
			size_lg2 = 12;
			xn = e & 1;
			tex = e >> 6 & 7;
		}
		oa = e & ~((1ull << size_lg2) - 1);
		ap = (e >> 4 & 3) | (e >> 9 & 1) << 2;
		ng = e >> 11 & 1;
		sbit = e >> 10 & 1;
		cb = e >> 2 & 3;
		break;
	}
	case 2:				/* section, supersection */
		if (d >> 18 & 1) {
			size_lg2 = 24;
			oa = (d & 0xff000000u) | (uint64_t)(d >> 20 & 0xf) << 32 |
			     (uint64_t)(d >> 5 & 0xf) << 36;
		} else {
			size_lg2 = 20;
			oa = d & 0xfff00000u;
		}
		pxn = d & 1;
		xn = d >> 4 & 1;
		tex = d >> 12 & 7;
		ap = (d >> 10 & 3) | (d >> 15 & 1) << 2;
		ng = d >> 17 & 1;
		sbit = d >> 16 & 1;
		cb = d >> 2 & 3;
		break;
	default:
		set_fault(r, SMMU_F_TRANSLATION, 1, 1, ia);
		return;
	}
	if (c->oas < 64 && oa >> c->oas) {
		set_fault(r, SMMU_F_ADDR_SIZE, 1, level, ia);
		return;
	}
	unsigned attr, sh;
	uint64_t ld;

	v7s_attrs(c, tex, cb, sbit, &attr, &sh);
	if (c->afe) {
		if (!(ap & 1)) {	/* AP[0]: the access flag */
			set_fault(r, SMMU_F_ACCESS, 1, level, ia);
			return;
		}
		/* The leaf as a long descriptor would say it. */
		ld = (ap & 2 ? D_AP_UNPRIV : 0) | (ap & 4 ? D_AP_RDONLY : 0);
		if (!smmu_stage1_allows(c, ld | (xn ? D_UXN | D_PXN : 0) |
					(pxn ? D_PXN : 0), acc) ||
		    ((acc & SMMU_ACC_WRITE) && (ld & D_AP_RDONLY))) {
			set_fault(r, SMMU_F_PERMISSION, 1, level, ia);
			return;
		}
	} else {
		if (!v7s_full_allows(c, ap, xn, pxn, acc)) {
			set_fault(r, SMMU_F_PERMISSION, 1, level, ia);
			return;
		}
		/* What a TLB keeps must never allow more than the walk:
		 * AP[1] (unprivileged access) only where unprivileged
		 * software may do what PL1 may; AP[2] where PL1 may not
		 * write. A hit the long form refuses walks again. */
		unsigned p = v7s_ap_full[ap];

		ld = (p & 2 ? 0 : D_AP_RDONLY) |
		     ((p & 4) && (p >> 2) == (p & 3) ? D_AP_UNPRIV : 0);
	}
	r->fault = SMMU_OK;
	r->level = level;
	r->oa = oa | (ia & ((1ull << size_lg2) - 1));
	r->desc = ld | D_VALID | D_AF | (xn ? D_UXN | D_PXN : 0) | (pxn ? D_PXN : 0) |
		  (uint64_t)sh << 8 | (uint64_t)ng << 11;
	r->size_lg2 = size_lg2;
	r->attr = attr;
}

void smmu_walk(const struct smmu_stage_cfg *c, const struct smmu_stage_cfg *s2,
	       const struct smmu_mem *m, uint64_t ia, unsigned acc,
	       struct smmu_walk_res *r)
{
	memset(r, 0, sizeof(*r));
	/* The tables may change and be unlinked under us: RCU keeps what we
	 * read alive (the page tables free after a grace period). */
	plat_rcu_read_lock();
	if (c->v7s)
		walk_v7s(c, s2, m, ia, acc, r);
	else
		walk_stage(c, s2, m, ia, acc, r);
	if (!r->fault && s2 && c->stage == 1) {
		struct smmu_walk_res t;
		unsigned fetches = r->fetches, probes = r->probes;
		unsigned attr = r->attr, lvl = r->level;
		uint64_t desc = r->desc;

		memset(&t, 0, sizeof(t));
		walk_stage(s2, NULL, m, r->oa, acc, &t);
		t.fetches += fetches;
		t.probes += probes;
		if (t.fault) {
			t.ipa = r->oa;
			*r = t;
		} else {
			r->oa = t.oa;
			r->fetches = t.fetches;
			r->probes = t.probes;
			/* The smaller of the two leaves bounds what a TLB may
			 * cache as one entry. */
			if (t.size_lg2 < r->size_lg2)
				r->size_lg2 = t.size_lg2;
			r->attr = attr;
			r->level = lvl;
			r->desc2 = t.desc;
			r->desc = desc;
		}
	}
	plat_rcu_read_unlock();
}

