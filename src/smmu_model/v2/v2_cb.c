/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 context banks: each bank's register page, the translation of a
 * transaction routed to a bank (CBARn type, CBA2Rn format, SCTLR, TCR,
 * TTBRn, MAIRn decoded into the shared walker's stage configuration,
 * walk.h), the TLB (tlb.h), and the fault path (FSR, FAR, FSYNR0,
 * IPAFAR; terminate, or stall until RESUME). One file over 600 lines on
 * purpose: the bank's decoded configuration (ctx_of) and the access,
 * fault and stall helpers are static, so that the compiler inlines the
 * small ones into the translation path.
 */
#include <string.h>

#include "v2_model.h"

/* ---- configuration ------------------------------------------------------- */

static uint64_t fld(uint64_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((1ull << (hi - lo + 1)) - 1);
}

/* What the SMMU implements, for the shared decoders' legality rules. */
static struct smmu_caps caps_of(const struct iopt_smmuv2 *s)
{
	return (struct smmu_caps){
		.oas = s->p.oas, .httu = 0,
		.grans = (s->p.gran4k ? 1u << 12 : 0) | (s->p.gran16k ? 1u << 14 : 0) |
			 (s->p.gran64k ? 1u << 16 : 0),
	};
}

/* ID2 / TCR2.PASIZE / VTCR.PS codes 0..5. */
static unsigned ps_code_ok(unsigned code)
{
	return code <= 5;
}

/*
 * Stage 1 of bank b, by CBA2R.VA64 and TCR.EAE:
 *  - AArch64: TCR as TCR_EL1's low word (T0SZ 5:0, EPD0 7, TG0 15:14,
 *    T1SZ 21:16, A1 22, EPD1 23, TG1 31:30) and TCR2.PASIZE; TTBR0 below
 *    VA[55] = 0, TTBR1 above; ASID TTBR0[63:48], or TTBR1's with TCR.A1.
 *  - AArch32 LPAE (TTBCR.EAE = 1, Arm ARM G5.5): T0SZ 2:0, EPD0 7, T1SZ
 *    18:16, A1 22, EPD1 23; 4K granule, 32-bit VAs, 40-bit output. TTBR0
 *    covers [0, 2^(32-T0SZ)), TTBR1 the top 2^(32-T1SZ) bytes; with T1SZ
 *    = 0 and T0SZ > 0, TTBR1 covers everything above TTBR0's region (32-bit
 *    walk), and with both 0 TTBR0 covers all (G5.5, selecting between
 *    TTBR0 and TTBR1). ASID TTBRn[55:48] by TCR.A1. TTBR bits 47:40 are
 *    ignored (a 40-bit base).
 *  - AArch32 short descriptor (TTBCR.EAE = 0): TTBCR.N 2:0, PD0 4, PD1
 *    5; TTBR0's level 1 table (16 KiB >> N aligned) covers [0, 2^(32-N)),
 *    TTBR1's (16 KiB aligned) the rest when N > 0; ASID CONTEXTIDR[7:0];
 *    SCTLR.AFE and TRE, with PRRR at the MAIR0 offset and NMRR at MAIR1
 *    (as Linux's arm-smmu programs an AArch32-S bank).
 * The shared CD decoder checks the long-descriptor values: the model
 * builds the CD the registers describe. false: the bank's configuration
 * cannot translate (a translation fault: docs).
 */
static bool s1_cfg(const struct iopt_smmuv2 *s, const struct v2_cb *cb,
		   struct v2_ctx *x)
{
	const struct smmu_caps caps = caps_of(s);
	struct iopt_smmuv3_cd cd;
	bool va64 = cb->cba2r & CBA2R_VA64;
	uint64_t ttb_mask = (1ull << 48) - 1;

	memset(&cd, 0, sizeof(cd));
	cd.valid = cd.aa64 = true;	/* the decoder's AArch64 LPAE walk */
	cd.affd = cb->sctlr & SCTLR_AFFD;
	cd.wxn = cb->sctlr & SCTLR_WXN;
	cd.mair = (uint64_t)cb->mair[1] << 32 | cb->mair[0];
	if (va64) {
		if (!s->p.aarch64 || !ps_code_ok(fld(cb->tcr2, 2, 0)))
			return false;
		cd.t0sz = (unsigned)fld(cb->tcr, 5, 0);
		cd.epd0 = cb->tcr >> 7 & 1;
		cd.tg0 = (unsigned)fld(cb->tcr, 15, 14);
		cd.t1sz = (unsigned)fld(cb->tcr, 21, 16);
		cd.epd1 = cb->tcr >> 23 & 1;
		cd.tg1 = (unsigned)fld(cb->tcr, 31, 30);
		cd.ips = (unsigned)fld(cb->tcr2, 2, 0);
		x->asid = (uint16_t)(cb->ttbr[cb->tcr >> 22 & 1] >> 48);
	} else if (!(cb->tcr & TCR_EAE)) {
		unsigned nn = (unsigned)fld(cb->tcr, 2, 0);
		const struct smmu_stage_cfg v = {
			.stage = 1, .g = 12, .start = 1, .v7s = true, .va32 = true,
			.oas = s->p.oas < 40 ? s->p.oas : 40,
			.wxn = cb->sctlr & SCTLR_WXN,
			.afe = cb->sctlr & SCTLR_AFE, .tre = cb->sctlr & SCTLR_TRE,
			.mair = cd.mair,	/* NMRR << 32 | PRRR */
		};

		if (!s->p.aarch32s)
			return false;
		x->s1c[0] = x->s1c[1] = v;
		x->s1c[0].ias = 32 - nn;
		x->s1c[0].ttb = cb->ttbr[0] & 0xffffffffu & ~((1ull << (14 - nn)) - 1);
		x->s1c[1].ias = 32;
		x->s1c[1].upper = true;
		x->s1c[1].ttb = cb->ttbr[1] & 0xffffc000u;
		smmu_cfg_set_region(&x->s1c[0]);
		smmu_cfg_set_region(&x->s1c[1]);
		x->ttb_ok[0] = !(cb->tcr >> 4 & 1);
		x->ttb_ok[1] = nn && !(cb->tcr >> 5 & 1);
		x->va32 = true;
		x->t0_end = 1ull << (32 - nn);
		x->t1_start = nn ? x->t0_end : 1ull << 32;
		x->asid = (uint16_t)(cb->contextidr & 0xffu);
		return true;
	} else {
		unsigned t0 = (unsigned)fld(cb->tcr, 2, 0), t1 = (unsigned)fld(cb->tcr, 18, 16);
		const uint64_t top = 1ull << 32;

		if (!s->p.aarch32l)
			return false;
		cd.t0sz = 32 + t0;
		cd.epd0 = cb->tcr >> 7 & 1;
		cd.tg0 = 0;		/* 4K */
		cd.t1sz = 32 + t1;
		cd.epd1 = cb->tcr >> 23 & 1;
		cd.tg1 = 2;		/* 4K in the TG1 encoding */
		cd.ips = 2;		/* 40 bits */
		ttb_mask = (1ull << 40) - 1;
		x->asid = (uint16_t)fld(cb->ttbr[cb->tcr >> 22 & 1], 55, 48);
		x->va32 = true;
		x->t0_end = t0 ? top >> t0 : t1 ? top - (top >> t1) : top;
		x->t1_start = t1 ? top - (top >> t1) : t0 ? top >> t0 : top;
	}
	cd.ttb0 = cb->ttbr[0] & ttb_mask;
	cd.ttb1 = cb->ttbr[1] & ttb_mask;
	x->ttb_ok[0] = !cd.epd0 && !smmu_cfg_from_cd(&cd, false, &caps, &x->s1c[0]);
	x->ttb_ok[1] = !cd.epd1 && !smmu_cfg_from_cd(&cd, true, &caps, &x->s1c[1]);
	x->s1c[0].va32 = x->s1c[1].va32 = x->va32;
	smmu_cfg_set_region(&x->s1c[0]);
	smmu_cfg_set_region(&x->s1c[1]);
	return true;
}

/*
 * Stage 2 of bank b, TTBR0 as VTTBR:
 *  - AArch64 (CBA2R.VA64): TCR as VTCR (T0SZ 5:0, SL0 7:6, TG0 15:14, PS
 *    18:16).
 *  - AArch32 LPAE: TCR as the AArch32 VTCR (Arm ARM G5.5: T0SZ 3:0, a
 *    signed value, S 4 its sign copy, SL0 7:6: 0 level 2, 1 level 1);
 *    4K granule, IPA 32 - T0SZ bits (25..40), 40-bit output, base
 *    VTTBR[39:x]. S != T0SZ[3], SL0 >= 2 or an SL0 inconsistent with
 *    T0SZ make the regime unusable (a translation fault: docs).
 */
static bool s2_cfg(const struct iopt_smmuv2 *s, const struct v2_cb *cb,
		   struct v2_ctx *x)
{
	struct smmu_caps caps = caps_of(s);
	struct iopt_smmuv3_ste ste;

	memset(&ste, 0, sizeof(ste));
	ste.s2_aa64 = true;	/* the decoder's LPAE walk */
	ste.s2_affd = cb->sctlr & SCTLR_AFFD;
	if (cb->cba2r & CBA2R_VA64) {
		if (!s->p.aarch64 || !ps_code_ok(fld(cb->tcr, 18, 16)))
			return false;
		ste.s2_t0sz = (unsigned)fld(cb->tcr, 5, 0);
		ste.s2_sl0 = (unsigned)fld(cb->tcr, 7, 6);
		ste.s2_tg = (unsigned)fld(cb->tcr, 15, 14);
		ste.s2_ps = (unsigned)fld(cb->tcr, 18, 16);
		ste.s2_ttb = cb->ttbr[0] & ((1ull << 48) - 1);
		return !smmu_cfg_from_ste_s2(&ste, &caps, &x->s2c);
	}
	int t0sz = (int)(cb->tcr & 7) - (int)(cb->tcr & 8);	/* 4-bit signed */

	if (!s->p.aarch32l || !s->p.gran4k || (cb->tcr >> 4 & 1) != (cb->tcr >> 3 & 1) ||
	    fld(cb->tcr, 7, 6) > 1)
		return false;
	ste.s2_t0sz = (unsigned)(64 - (32 - t0sz));
	ste.s2_sl0 = (unsigned)fld(cb->tcr, 7, 6);
	ste.s2_tg = 0;
	ste.s2_ps = 2;		/* 40 bits */
	ste.s2_ttb = cb->ttbr[0] & ((1ull << 40) - 1);
	caps.oas = 40;		/* the IPA and the walk's output: 40 bits */
	if (smmu_cfg_from_ste_s2(&ste, &caps, &x->s2c))
		return false;
	if (x->s2c.oas > s->p.oas)
		x->s2c.oas = s->p.oas;
	return true;
}

/*
 * The translation regime of bank n (CBAR.TYPE: 0 stage 2, 1 stage 1
 * with stage 2 bypass, 2 stage 1 with stage 2 fault, 3 stage 1 then the
 * stage 2 of bank CBAR[15:8]). A stage whose bank has SCTLR.M = 0 is
 * bypassed. false: no usable configuration (translation fault).
 */
static bool ctx_decode(const struct iopt_smmuv2 *s, unsigned n, struct v2_ctx *x)
{
	const struct v2_cb *cb = &s->cb[n];

	memset(x, 0, sizeof(*x));
	x->type = (unsigned)fld(cb->cbar, 17, 16);
	x->vmid = (uint16_t)(cb->cbar & CBAR_VMID);
	switch (x->type) {
	case CBAR_TYPE_S2:
		if (!s->p.s2)
			return false;
		x->s2 = cb->sctlr & SCTLR_M;
		return !x->s2 || s2_cfg(s, cb, x);
	case CBAR_TYPE_S1_BYPASS:
	case CBAR_TYPE_S1_FAULT:
		if (!s->p.s1)
			return false;
		x->s1 = cb->sctlr & SCTLR_M;
		return !x->s1 || s1_cfg(s, cb, x);
	default: {			/* nested */
		unsigned m = (unsigned)fld(cb->cbar, 15, 8);

		if (!s->p.s1 || !s->p.s2 || m >= s->p.num_cb ||
		    fld(s->cb[m].cbar, 17, 16) != CBAR_TYPE_S2)
			return false;
		x->s1 = cb->sctlr & SCTLR_M;
		x->s2 = s->cb[m].sctlr & SCTLR_M;
		/* Nested entries are tagged with the stage 2 bank's VMID,
		 * so TLBIVMID of the guest's VMID reaches them (docs). */
		x->vmid = (uint16_t)(s->cb[m].cbar & CBAR_VMID);
		return (!x->s1 || s1_cfg(s, cb, x)) &&
		       (!x->s2 || s2_cfg(s, &s->cb[m], x));
	}
	}
}

/* Bank n's regime, decoded once per configuration generation. */
static const struct v2_ctx *ctx_of(struct iopt_smmuv2 *s, unsigned n)
{
	struct v2_cb *cb = &s->cb[n];

	if (cb->ctx_gen != s->cfg_gen + 1) {
		cb->ctx.ok = ctx_decode(s, n, &cb->ctx);
		cb->ctx_gen = s->cfg_gen + 1;
	}
	return &cb->ctx;
}

static unsigned acc_of(const struct iopt_smmuv2_txn *t)
{
	return (t->write ? SMMU_ACC_WRITE : 0) | (t->exec ? SMMU_ACC_EXEC : 0) |
	       (t->priv ? SMMU_ACC_PRIV : 0);
}

static uint32_t fsr_of(enum smmu_fault f)
{
	switch (f) {
	case SMMU_F_TRANSLATION: return FSR_TF;
	case SMMU_F_ACCESS: return FSR_AFF;
	case SMMU_F_PERMISSION: return FSR_PF;
	case SMMU_F_ADDR_SIZE: return FSR_ASF;
	default: return FSR_EF;
	}
}

/* ---- translation through a bank ------------------------------------------ */

/*
 * The Shareability of a translation (PAR.SH encoding): Device memory and
 * Normal Inner and Outer Non-cacheable memory are Outer Shareable (Arm ARM
 * G5.7.4.1); otherwise the more shareable of the stages' SH[1:0] (Outer
 * over Inner over Non-shareable, as the stages combine, G5.7.5). desc is
 * the stage 1 leaf (or the stage 2 leaf when only stage 2 translates),
 * desc2 the nested stage 2 leaf, attr the stage 1 MAIR byte.
 */
static unsigned sh_of(bool s1, bool s2, uint64_t desc, uint64_t desc2, unsigned attr)
{
	unsigned sh = 0, shs[2] = { 0, 0 };
	bool dev = false, inc = false, onc = false;

	if (s1) {
		dev = !(attr & 0xf0);
		inc = (attr & 0xf) == 4;
		onc = (attr >> 4) == 4;
		shs[0] = (unsigned)(desc >> 8 & 3);
	}
	if (s2) {
		uint64_t d2 = s1 ? desc2 : desc;
		unsigned ma = (unsigned)(d2 >> 2 & 0xf);	/* MemAttr */

		dev = dev || !(ma >> 2);
		onc = onc || (ma >> 2) == 1;
		inc = inc || (ma & 3) == 1;
		shs[1] = (unsigned)(d2 >> 8 & 3);
	}
	if (dev || (inc && onc))
		return 2;
	for (unsigned i = 0; i < 2; i++)
		if (shs[i] == 2 || (shs[i] == 3 && sh != 2))
			sh = shs[i];
	return sh;
}

uint32_t v2_cb_walk(struct iopt_smmuv2 *s, unsigned n,
		    const struct iopt_smmuv2_txn *t, uint64_t *tcur,
		    struct iopt_smmuv2_resp *r, uint32_t *fsynr0, uint64_t *ipa)
{
	const unsigned acc = acc_of(t);
	struct smmu_walk_res w;
	const struct v2_ctx *x = ctx_of(s, n);
	uint64_t ia = t->addr;

	*fsynr0 = 0;
	*ipa = 0;
	r->oa = 0;
	r->attr = 0;
	r->sh = 0;
	if (!x->ok)
		return FSR_TF;
	if (x->type == CBAR_TYPE_S1_FAULT && x->s1) {
		/* Stage 2 "fault" after stage 1: reported as a stage 2
		 * translation fault at the IPA (docs). */
		*ipa = ia;
		return FSR_TF | V2_F_STAGE2;
	}
	if (!x->s1 && !x->s2) {
		if (ia >> s->p.oas)
			return FSR_ASF;
		r->oa = ia;	/* both stages bypassed */
		return 0;
	}
	const struct smmu_stage_cfg *first = &x->s2c;

	if (x->s1) {
		int u = v2_ttb_select(x, ia);

		if (u < 0 || !x->ttb_ok[u])
			return FSR_TF;
		first = &x->s1c[u];
		if (!smmu_in_region(first, ia))
			return FSR_TF;
	} else if (ia >> x->s2c.ias) {
		*ipa = ia;
		return FSR_TF | V2_F_STAGE2;	/* beyond the stage 2 input range */
	}
	const uint8_t stage = x->s1 ? 1 : 2;
	const bool nested = x->s1 && x->s2;

	const struct smmu_stage_cfg *s2 = nested ? &x->s2c : NULL;
	bool looked;
	struct tlb_entry *e = smmu_core_tlb_hit(&s->core, first, s2, x->vmid,
						x->asid, stage, ia, acc, tcur,
						&looked);

	if (e) {
		s->st.tlb_hits++;
		r->oa = e->oa | (ia & ((1ull << e->size_lg2) - 1));
		r->attr = e->attr & 0xffu;	/* as the fill below packs it */
		r->sh = e->attr >> 8 & 3u;
		return 0;
	}
	if (looked)
		s->st.tlb_misses++;
	smmu_core_walk(&s->core, first, s2, x->vmid, x->asid, ia, acc, tcur, &w);
	s->st.walks++;
	s->st.fetches += w.fetches;
	if (w.fault) {
		/* FSYNR0: PLVL 1:0 the level, PTWF 10 a fault on a stage 1
		 * table access (nested). */
		*fsynr0 = (w.level & FSYNR0_PLVL) | (w.s2_on_walk ? FSYNR0_PTWF : 0);
		if (w.fault_stage == 2)
			*ipa = nested ? w.ipa : ia;
		return fsr_of(w.fault) | (w.fault_stage == 2 ? V2_F_STAGE2 : 0);
	}
	/* Another entry of another size already holds ia (the tables
	 * changed without break-before-make): a TLB match conflict fault,
	 * FSR.TLBMCF; nothing is cached until software invalidates. */
	if (smmu_core_tlb_conflict(&s->core, x->vmid, x->asid, stage, ia,
				   w.size_lg2))
		return FSR_TLBMCF;
	r->oa = w.oa;
	r->attr = x->s1 ? w.attr : 0;
	r->sh = sh_of(x->s1, x->s2, w.desc, w.desc2, w.attr);
	/* The TLB entry keeps what a hit answers: the stage 1 MAIR byte in
	 * attr 7:0 and the Shareability in 9:8 (this model's entries only). */
	w.attr = r->attr | r->sh << 8;
	smmu_core_tlb_fill(&s->core, first, stage, x->vmid, x->asid,
			   x->s1 && !(w.desc >> 11 & 1), ia, &w);
	return 0;
}

/* ---- faults and stall ------------------------------------------------------ */

static bool stalled(const struct v2_cb *cb)
{
	return cb->fsr & FSR_SS;
}

uint32_t v2_cb_format(const struct v2_cb *cb)
{
	if (cb->cba2r & CBA2R_VA64)
		return V2_FMT_AARCH64;
	/* Stage 2 banks (CBAR.TYPE 0) are LPAE; stage 1 by TTBCR.EAE. */
	if (fld(cb->cbar, 17, 16) != CBAR_TYPE_S2 && !(cb->tcr & TCR_EAE))
		return V2_FMT_AARCH32_S;
	return V2_FMT_AARCH32_L;
}

/*
 * Record a context fault in bank n: FSR (MULTI when a fault is already
 * recorded, whose syndrome is then kept; FORMAT 10:9 the bank's table
 * format), FAR, FSYNR0 (WNR 4, PNU 5, IND 6 = write, privileged,
 * instruction; fsynr0 brings PLVL, PTWF and S1CBNDX), IPAFAR for stage 2
 * faults, CBFRSYNRA the StreamID; the context interrupt when SCTLR.CFIE.
 */
static void cb_fault(struct iopt_smmuv2 *s, unsigned n, uint32_t fsr,
		     uint32_t fsynr0, uint64_t ipa, const struct iopt_smmuv2_txn *t,
		     uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];

	s->st.faults++;
	if (cb->fsr & FSR_FAULTS) {
		cb->fsr |= FSR_MULTI;
	} else {
		cb->fsr = (cb->fsr & ~FSR_FORMAT) | (fsr & FSR_FAULTS) |
			  v2_cb_format(cb) << FSR_FORMAT_SHIFT;
		cb->far = t->addr;
		cb->fsynr0 = fsynr0 | (t->write ? FSYNR0_WNR : 0) |
			     (t->priv ? FSYNR0_PNU : 0) |
			     (t->exec && !t->write ? FSYNR0_IND : 0);
		cb->ipafar = ipa;
		cb->cbfrsynra = t->sid & 0xffffu;
	}
	if ((cb->sctlr & SCTLR_CFIE) && s->core.irq)
		s->core.irq(s->core.irq_ctx, IOPT_SMMUV2_IRQ_CONTEXT(n), cycle);
}

/* Hold t in bank n behind the stalled fault: false when full. */
static bool hold(struct v2_cb *cb, const struct iopt_smmuv2_txn *t, uint64_t cycle,
		 bool front)
{
	if (cb->nheld == V2_STALL_MAX)
		return false;
	if (front) {
		memmove(&cb->held[1], &cb->held[0], cb->nheld * sizeof(cb->held[0]));
		cb->held[0] = (struct v2_held){ *t, cycle };
	} else {
		cb->held[cb->nheld] = (struct v2_held){ *t, cycle };
	}
	cb->nheld++;
	return true;
}

/*
 * Translate t through bank n at tcur: 0 with r filled (OK or ABORT), or
 * 1 when the transaction stalled (held; front: at the head of the queue,
 * a retried transaction).
 */
static int bank_translate(struct iopt_smmuv2 *s, unsigned n,
			  const struct iopt_smmuv2_txn *t, uint64_t *tcur,
			  uint64_t cycle, struct iopt_smmuv2_resp *r, bool front)
{
	struct v2_cb *cb = &s->cb[n];
	uint32_t fsynr0;
	uint64_t ipa;

	r->cb = n;
	/* An instruction fetch that writes is no transaction the SMMU
	 * supports: an unsupported upstream transaction fault (FSR.UUT),
	 * terminated whatever SCTLR.CFCFG says, as a retry could only fault
	 * again (docs). */
	if (t->write && t->exec) {
		cb_fault(s, n, FSR_UUT, 0, 0, t, *tcur);
		r->result = IOPT_SMMUV2_ABORT;
		return 0;
	}
	/* SCTLR.HUPCF = 0: nothing passes a stalled fault (held in order). */
	if (stalled(cb) && !(cb->sctlr & SCTLR_HUPCF) && !front) {
		if (hold(cb, t, cycle, false))
			return 1;
		r->result = IOPT_SMMUV2_ABORT;	/* queue full (docs) */
		return 0;
	}
	uint32_t fsr = v2_cb_walk(s, n, t, tcur, r, &fsynr0, &ipa);

	if (!fsr) {
		r->result = IOPT_SMMUV2_OK;
		return 0;
	}
	/* A stage 2 fault of a nested bank is reported in the stage 2
	 * bank, whose FSYNR0.S1CBNDX [23:16] names the stage 1 bank
	 * (SMMUv2 FSYNR0; Linux reads it when it reports the fault). */
	unsigned fb = n;

	if ((fsr & V2_F_STAGE2) && fld(cb->cbar, 17, 16) == CBAR_TYPE_NESTED) {
		fb = (unsigned)fld(cb->cbar, 15, 8);
		fsynr0 |= n << FSYNR0_S1CBNDX_SHIFT;
	}
	fsr &= ~V2_F_STAGE2;
	cb_fault(s, fb, fsr, fsynr0, ipa, t, *tcur);
	struct v2_cb *fcb = &s->cb[fb];

	if ((fcb->sctlr & SCTLR_CFCFG) && hold(cb, t, cycle, front)) {
		/* Stall: FSR.SS until RESUME; the response waits. */
		fcb->fsr |= FSR_SS;
		s->st.stalls++;
		v2_sync_block(s, fb);
		return 1;
	}
	r->result = IOPT_SMMUV2_ABORT;
	return 0;
}

/* One translation, the model's lock held (v2_translate_locked: inlined
 * there, its one caller, so that a locked translation is one call level
 * and one register save). */
static inline __attribute__((always_inline)) void
v2_translate(struct iopt_smmuv2 *s, const struct iopt_smmuv2_txn *t,
	     uint64_t cycle, struct iopt_smmuv2_resp *r)
{
	uint64_t tcur;
	uint64_t *ts = smmu_core_slot(&s->core, cycle, &tcur);
	bool conflict;
	int m;

	memset(r, 0, sizeof(*r));
	r->cb = ~0u;
	r->result = IOPT_SMMUV2_OK;
	s->st.translations++;
	if (s->scr0 & SCR0_CLIENTPD) {
		r->oa = t->addr;	/* client port disabled: bypass */
		goto done;
	}
	/* A StreamID wider than ID0.NUMSIDB matches no SMR (docs). */
	if (t->sid >> s->p.numsidb) {
		m = -1;
	} else {
		struct v2_smc *c = &s->smc[t->sid % V2_SMC_SIZE];

		if (c->gen != s->cfg_gen + 1 || c->sid != t->sid) {
			c->m = v2_stream_match(s, t->sid, &c->conflict);
			c->sid = t->sid;
			c->gen = s->cfg_gen + 1;
		}
		m = c->m;
		conflict = c->conflict;
	}
	if (m >= 0 && conflict && (s->scr0 & SCR0_SMCFCFG)) {
		v2_global_fault(s, SGFSR_SMCF, t, tcur);
		r->result = IOPT_SMMUV2_ABORT;
		goto done;
	}
	if (m < 0) {
		if (s->scr0 & SCR0_USFCFG) {
			v2_global_fault(s, SGFSR_USF, t, tcur);
			r->result = IOPT_SMMUV2_ABORT;
		} else {
			r->oa = t->addr;
		}
		goto done;
	}
	uint32_t s2cr = s->s2cr[m];
	unsigned type = (unsigned)fld(s2cr, 17, 16), n = s2cr & S2CR_CBNDX;

	if (type == S2CR_TYPE_BYPASS) {
		r->oa = t->addr;
		goto done;
	}
	if (type != S2CR_TYPE_TRANS) {
		/* Fault (and the reserved type 3): invalid context. */
		v2_global_fault(s, SGFSR_ICF, t, tcur);
		r->result = IOPT_SMMUV2_ABORT;
		goto done;
	}
	if (n >= s->p.num_cb) {
		v2_global_fault(s, SGFSR_UCBF, t, tcur);
		r->result = IOPT_SMMUV2_ABORT;
		goto done;
	}
	if (bank_translate(s, n, t, &tcur, cycle, r, false)) {
		r->result = IOPT_SMMUV2_STALLED;
		r->oa = 0;
		r->ready = UINT64_MAX;
		smmu_core_slot_done(ts, tcur);
		return;
	}
done:
	if (r->result == IOPT_SMMUV2_ABORT)
		r->oa = 0;
	r->ready = tcur;
	smmu_core_slot_done(ts, tcur);
	smmu_lat_account(tcur - cycle, &s->st.lat_sum, &s->st.lat_max, NULL);
}

int v2_translate_locked(struct iopt_smmuv2 *s, const struct iopt_smmuv2_txn *t,
			uint64_t cycle, struct iopt_smmuv2_resp *r)
{
	int ret;

	plat_mutex_lock(&s->core.lock);
	ret = smmu_core_time_at(&s->core, &cycle);
	if (!ret) {
		smmu_core_time_set(&s->core, cycle);
		v2_translate(s, t, cycle, r);
		/* A pure TLB hit that did not fault can be replayed without
		 * the lock; anything else retires the memo. */
		if (smmu_core_memo_pure(&s->core) && r->result == IOPT_SMMUV2_OK)
			smmu_core_memo_keep(&s->core, v2_memo_key(t), t->addr, r->oa,
					    r->attr, r->cb, r->ready);
		else
			smmu_core_gen_bump(&s->core);
	}
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

/* Pass an outcome to iopt_smmuv2_stalled() (the oldest is dropped when
 * software has not collected V2_STALL_MAX of them). */
static void deliver(struct v2_cb *cb, const struct iopt_smmuv2_resp *r)
{
	if (cb->ndone == V2_STALL_MAX) {
		cb->done_head = (cb->done_head + 1) % V2_STALL_MAX;
		cb->ndone--;
	}
	cb->done[(cb->done_head + cb->ndone) % V2_STALL_MAX] = *r;
	cb->ndone++;
}

/*
 * RESUME (TERMINATE bit 0; 0 = retry) with FSR.SS set: the stalled
 * transaction is terminated or translated again at this cycle, then the
 * transactions held behind it, in order, until one stalls again.
 * Without FSR.SS the write is ignored.
 */
static void resume(struct iopt_smmuv2 *s, unsigned n, uint32_t val, uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];
	bool terminate = val & RESUME_TERMINATE;

	if (!stalled(cb))
		return;
	cb->fsr &= ~FSR_SS;
	/* Held transactions live in the bank their StreamID routes to; a
	 * nested stage 2 fault stalls the stage 1 bank's queue. Resume
	 * them all where they are held: this bank and any bank whose
	 * stage 2 is n. */
	for (unsigned b = 0; b < s->p.num_cb; b++) {
		struct v2_cb *hb = &s->cb[b];

		if (b != n && !(fld(hb->cbar, 17, 16) == CBAR_TYPE_NESTED &&
				fld(hb->cbar, 15, 8) == n))
			continue;
		bool first = true;

		while (hb->nheld && !stalled(cb) && !stalled(hb)) {
			struct v2_held h = hb->held[0];
			struct iopt_smmuv2_resp r;
			uint64_t tcur;
			uint64_t *ts = smmu_core_slot(&s->core, cycle, &tcur);

			memmove(&hb->held[0], &hb->held[1],
				(hb->nheld - 1) * sizeof(hb->held[0]));
			hb->nheld--;
			memset(&r, 0, sizeof(r));
			if (first && terminate) {
				r.cb = b;
				r.result = IOPT_SMMUV2_ABORT;
			} else if (bank_translate(s, b, &h.txn, &tcur, cycle, &r, true)) {
				smmu_core_slot_done(ts, tcur);
				break;	/* stalled again, at the head */
			}
			first = false;
			if (r.result == IOPT_SMMUV2_ABORT)
				r.oa = 0;
			r.ready = tcur;
			smmu_core_slot_done(ts, tcur);
			deliver(hb, &r);
		}
	}
	if (!stalled(cb))
		v2_sync_unblock(s, cycle);
}

/* ---- registers -------------------------------------------------------------- */

/* A 64-bit register written whole (size 8) or by one half (size 4, the
 * half at offset & 4). */
static void wr64(uint64_t *reg, uint32_t off, unsigned size, uint64_t val)
{
	if (size == 8)
		*reg = val;
	else if (off & 4)
		*reg = (*reg & 0xffffffffull) | val << 32;
	else
		*reg = (*reg & ~0xffffffffull) | (uint32_t)val;
}

uint64_t v2_cb_read(struct iopt_smmuv2 *s, unsigned n, uint32_t off,
		    unsigned size, uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];

	(void)size;
	switch (off) {
	case CB_SCTLR: return cb->sctlr;
	case CB_ACTLR: return cb->actlr;
	case CB_TCR2: return cb->tcr2;
	case CB_TTBR0: return cb->ttbr[0];
	case CB_TTBR1: return cb->ttbr[1];
	case CB_TCR: return cb->tcr;
	case CB_CONTEXTIDR: return cb->contextidr;
	case CB_MAIR0: return cb->mair[0];
	case CB_MAIR1: return cb->mair[1];
	case CB_PAR: return v2_par(s, n, cycle);
	case CB_FSR: return cb->fsr;
	case CB_FAR: return cb->far;
	case CB_FSYNR0: return cb->fsynr0;
	case CB_FSYNR1: return cb->fsynr1;
	case CB_IPAFAR: return cb->ipafar;
	case CB_TLBSTATUS:
		return v2_status_read(s, (int)n, cycle);
	case CB_ATSR: return cycle < cb->ats_done ? ATSR_ACTIVE : 0;
	default: return 0;	/* write-only and unimplemented: RAZ */
	}
}

void v2_cb_write(struct iopt_smmuv2 *s, unsigned n, uint32_t off, unsigned size,
		 uint64_t val, uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];

	switch (off) {
	case CB_SCTLR: case CB_TCR2: case CB_TCR: case CB_MAIR0: case CB_MAIR1:
	case CB_CONTEXTIDR: case CB_TTBR0: case CB_TTBR0 + 4: case CB_TTBR1: case CB_TTBR1 + 4:
		s->cfg_gen++;	/* the decoded regime is stale */
		break;
	default:
		break;
	}
	switch (off & ~(size == 4 ? 4u : 0u)) {
	case CB_TTBR0: wr64(&cb->ttbr[0], off, size, val); return;
	case CB_TTBR1: wr64(&cb->ttbr[1], off, size, val); return;
	case CB_FAR: wr64(&cb->far, off, size, val); return;
	case CB_IPAFAR: wr64(&cb->ipafar, off, size, val); return;
	case CB_PAR: wr64(&cb->par, off, size, val); return;
	default: break;
	}
	switch (off) {
	case CB_SCTLR: cb->sctlr = (uint32_t)val & SCTLR_RW; break;
	case CB_ACTLR: cb->actlr = (uint32_t)val; break;
	case CB_RESUME: resume(s, n, (uint32_t)val, cycle); break;
	case CB_TCR2: cb->tcr2 = (uint32_t)val; break;
	case CB_TCR: cb->tcr = (uint32_t)val; break;
	case CB_CONTEXTIDR: cb->contextidr = (uint32_t)val; break;
	case CB_MAIR0: cb->mair[0] = (uint32_t)val; break;
	case CB_MAIR1: cb->mair[1] = (uint32_t)val; break;
	case CB_FSR:
		/* Write 1 to clear the fault bits and MULTI; SS is cleared
		 * by RESUME only (docs). */
		cb->fsr &= ~((uint32_t)val & (FSR_FAULTS | FSR_MULTI));
		/* FORMAT describes the recorded fault: gone with it. */
		if (!(cb->fsr & (FSR_FAULTS | FSR_MULTI)))
			cb->fsr &= ~FSR_FORMAT;
		break;
	case CB_FSRRESTORE:
		cb->fsr = (cb->fsr & FSR_SS) |
			  ((uint32_t)val & (FSR_FAULTS | FSR_MULTI | FSR_FORMAT));
		break;
	case CB_FSYNR0: cb->fsynr0 = (uint32_t)val; break;
	case CB_FSYNR1: cb->fsynr1 = (uint32_t)val; break;
	case CB_TLBIVA: case CB_TLBIVAA: case CB_TLBIASID: case CB_TLBIALL:
	case CB_TLBIVAL: case CB_TLBIVAAL: case CB_TLBIIPAS2: case CB_TLBIIPAS2L:
		v2_tlbi(s, (int)n, off, val, size, cycle);
		break;
	case CB_TLBSYNC:
		v2_sync_start(s, (int)n, cycle);
		break;
	case CB_ATS1PR: case CB_ATS1PW: case CB_ATS1UR: case CB_ATS1UW:
		v2_ats(s, n, off, val, size, cycle);
		break;
	default:
		break;	/* RO and unimplemented: WI */
	}
}
