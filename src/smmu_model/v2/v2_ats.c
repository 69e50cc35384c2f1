/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 address translation operations: a context bank's ATS1PR, ATS1PW,
 * ATS1UR and ATS1UW registers, ATSR and PAR.
 */
#include <string.h>

#include "v2_model.h"

/*
 * ATS1PR/PW/UR/UW: translate the VA through bank n's stage 1 (and stage
 * 2 when nested) as a privileged or user read or write, without recording
 * a fault; ATSR.ACTIVE reads 1 until the walk and ats_cycles have passed,
 * then PAR holds the result. PAR success: PA 47:12, SH 8:7 (the
 * translation's Shareability), NS 9 (1: the model has no Secure state,
 * ID0.SES = 0, so every output is a Non-secure PA), MATTR 63:56; fault (F
 * = 1): the FSR-style fault bit (TF 1, AFF 2, PF 3, EF 4), FORMAT 9:8
 * (the bank's format, as FSR.FORMAT), PLVL 33:32, STAGE 35. The same
 * 64-bit layout for every bank format (docs). A write while ATSR.ACTIVE
 * is ignored (docs).
 */
void v2_ats(struct iopt_smmuv2 *s, unsigned n, uint32_t off, uint64_t val,
	    unsigned size, uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];
	struct iopt_smmuv2_txn t = { 0 };
	struct iopt_smmuv2_resp r;
	uint32_t fsr, fsynr0;
	uint64_t ipa, tcur = cycle + s->p.ats_cycles;

	if (cycle < cb->ats_done)
		return;
	s->st.ats_ops++;
	/* The stage 1 VA: 64 bits for AArch64 banks, 32 for AArch32. */
	t.addr = size == 8 && (cb->cba2r & CBA2R_VA64) ? val : (uint32_t)val;
	t.addr &= ~0xfffull;
	t.write = off == CB_ATS1PW || off == CB_ATS1UW;
	t.priv = off == CB_ATS1PR || off == CB_ATS1PW;
	memset(&r, 0, sizeof(r));
	fsr = v2_cb_walk(s, n, &t, &tcur, &r, &fsynr0, &ipa);
	if (fsr) {
		uint32_t f = fsr & (FSR_TF | FSR_AFF | FSR_PF | FSR_EF);

		/* An address size fault has no PAR bit of its own in the
		 * sources: reported as TF (docs). */
		cb->ats_par = PAR_F | (f ? f : FSR_TF) |
			      (uint64_t)v2_cb_format(cb) << PAR_FORMAT_SHIFT |
			      (uint64_t)(fsynr0 & FSYNR0_PLVL) << 32 |
			      ((fsr & V2_F_STAGE2) ? 1ull << 35 : 0);
	} else {
		cb->ats_par = (r.oa & 0x0000fffffffff000ull) |
			      (uint64_t)(r.sh & 3) << PAR_SH_SHIFT | PAR_NS |
			      (uint64_t)(r.attr & 0xffu) << 56;
	}
	cb->ats_done = tcur;
}

uint64_t v2_par(struct iopt_smmuv2 *s, unsigned n, uint64_t cycle)
{
	struct v2_cb *cb = &s->cb[n];

	if (cb->ats_done && cycle >= cb->ats_done) {
		cb->par = cb->ats_par;
		cb->ats_done = 0;	/* delivered; idle */
	}
	return cb->par;
}
