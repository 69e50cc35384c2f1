/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 global register space: GR0 (sCR0, ID0-ID7, global fault
 * status, global TLB maintenance and sync, SMRn, S2CRn) and GR1 (CBARn,
 * CBFRSYNRAn, CBA2Rn). Field positions per the project's reference notes
 * (Linux arm-smmu.h, OpenBSD smmureg.h); reset values this model chose
 * where the sources leave them UNKNOWN are listed in docs/smmuv2_model.md.
 */
#include <string.h>

#include "v2_model.h"

/* ID2 size codes 0..5 = 32, 36, 40, 42, 44, 48 bits. */
static uint32_t size_code(unsigned bits)
{
	static const unsigned b[] = { 32, 36, 40, 42, 44, 48 };

	for (uint32_t i = 0; i < 6; i++)
		if (bits == b[i])
			return i;
	return 5;
}

void v2_regs_reset(struct iopt_smmuv2 *s)
{
	const struct iopt_smmuv2_params *p = &s->p;

	/* ID0: S1TS 30, S2TS 29, NTS 28, SMS 27, ATOSNS 26 (0: ATS1*
	 * implemented), PTFS 25:24 as Linux reads it (NO_AARCH32 25,
	 * NO_AARCH32S 24), NUMIRPT 23:16, CTTW 14, NUMSIDB 12:9, NUMSMRG 7:0. */
	s->id[0] = (p->s1 ? 1u << 30 : 0) | (p->s2 ? 1u << 29 : 0) |
		   (p->s1 && p->s2 ? 1u << 28 : 0) | 1u << 27 |
		   (p->aarch32l ? 0 : 1u << 25) | (p->aarch32s ? 0 : 1u << 24) |
		   (p->num_cb & 0xffu) << 16 | 1u << 14 | p->numsidb << 9 |
		   (p->num_smrg & 0xffu);
	/* ID1: PAGESIZE 31, NUMPAGENDXB 30:28, NUMS2CB 23:16, NUMCB 7:0. */
	s->id[1] = (p->pagesize_64k ? 1u << 31 : 0) | p->numpagendxb << 28 |
		   (p->num_s2cb & 0xffu) << 16 | (p->num_cb & 0xffu);
	/* ID2: PTFS_64K 14, PTFS_16K 13, PTFS_4K 12, UBS 11:8, OAS 7:4,
	 * IAS 3:0. Granules are those of AArch64 banks. */
	s->id[2] = (p->aarch64 && p->gran64k ? 1u << 14 : 0) |
		   (p->aarch64 && p->gran16k ? 1u << 13 : 0) |
		   (p->aarch64 && p->gran4k ? 1u << 12 : 0) |
		   size_code(p->ubs) << 8 | size_code(p->oas) << 4 |
		   size_code(p->ias);
	/* Reset: client port disabled (bypass, no faults) until software
	 * enables it; no SMR valid; every S2CR faults. The sources leave
	 * these UNKNOWN or IMPLEMENTATION DEFINED; this is the model's
	 * choice (docs/smmuv2_model.md). */
	s->scr0 = SCR0_CLIENTPD;
	for (unsigned i = 0; i < 128; i++) {
		s->smr[i] = 0;
		s->s2cr[i] = S2CR_TYPE_FAULT << S2CR_TYPE_SHIFT;
	}
}

/* Configuration faults follow sCR0.GCFGFRE/GCFGFIE, the others
 * GFRE/GFIE (the model's reading of the two pairs). */
#define SGFSR_CFG_FAULTS (SGFSR_ICF | SGFSR_USF | SGFSR_SMCF | SGFSR_UCBF | \
			  SGFSR_UCIF | SGFSR_CAF)

void v2_global_fault(struct iopt_smmuv2 *s, uint32_t bit,
		     const struct iopt_smmuv2_txn *t, uint64_t cycle)
{
	s->st.global_faults++;
	if (s->sgfsr & SGFSR_FAULTS) {
		/* A fault already recorded: syndrome kept, MULTI set. */
		s->sgfsr |= SGFSR_MULTI | bit;
	} else {
		s->sgfsr |= bit;
		s->sgfar = t->addr;
		/* sGFSYNR0: WNR 1, PNU 2, IND 3 (1 = write, privileged,
		 * instruction). sGFSYNR1[15:0]: the StreamID. */
		s->sgfsynr0 = (t->write ? SGFSYNR0_WNR : 0) |
			      (t->priv ? SGFSYNR0_PNU : 0) |
			      (t->exec && !t->write ? SGFSYNR0_IND : 0);
		s->sgfsynr1 = t->sid & 0xffffu;
		s->sgfsynr2 = 0;
	}
	uint32_t ie = (bit & SGFSR_CFG_FAULTS) ? SCR0_GCFGFIE : SCR0_GFIE;

	if ((s->scr0 & ie) && s->core.irq)
		s->core.irq(s->core.irq_ctx, IOPT_SMMUV2_IRQ_GLOBAL, cycle);
}

uint64_t v2_gr0_read(struct iopt_smmuv2 *s, uint32_t off, uint64_t cycle)
{
	if (off >= V2_SMR(0) && off < V2_SMR(s->p.num_smrg))
		return s->smr[(off - V2_SMR(0)) / 4];
	if (off >= V2_S2CR(0) && off < V2_S2CR(s->p.num_smrg))
		return s->s2cr[(off - V2_S2CR(0)) / 4];
	if (off >= V2_ID(0) && off <= V2_ID(7))
		return s->id[(off - V2_ID(0)) / 4];
	switch (off) {
	case V2_SCR0: return s->scr0;
	case V2_SACR: return s->sacr;
	case V2_SGFAR: return s->sgfar;
	case V2_SGFSR: return s->sgfsr;
	case V2_SGFSYNR0: return s->sgfsynr0;
	case V2_SGFSYNR1: return s->sgfsynr1;
	case V2_SGFSYNR2: return s->sgfsynr2;
	case V2_STLBGSTATUS:
		return v2_status_read(s, -1, cycle);
	default: return 0;	/* RAZ, the write-only registers included */
	}
}

void v2_gr0_write(struct iopt_smmuv2 *s, uint32_t off, uint32_t val, uint64_t cycle)
{
	if (off >= V2_SMR(0) && off < V2_S2CR(s->p.num_smrg))
		s->cfg_gen++;	/* cached stream matches are stale */
	if (off >= V2_SMR(0) && off < V2_SMR(s->p.num_smrg)) {
		/* VALID 31, MASK 30:16, ID 14:0; bits beyond NUMSIDB are
		 * kept as written (they can never match a StreamID that
		 * wide, so a mask must cover them: docs). */
		s->smr[(off - V2_SMR(0)) / 4] =
			val & (SMR_VALID | SMR_FIELD << SMR_MASK_SHIFT | SMR_FIELD);
		return;
	}
	if (off >= V2_S2CR(0) && off < V2_S2CR(s->p.num_smrg)) {
		s->s2cr[(off - V2_S2CR(0)) / 4] = val & S2CR_RW;
		return;
	}
	switch (off) {
	case V2_SCR0:
		s->scr0 = val & SCR0_RW;
		break;
	case V2_SACR:
		s->sacr = val;
		break;
	case V2_SGFSR:		/* write 1 to clear */
		s->sgfsr &= ~val;
		break;
	case V2_SGFSRRESTORE:
		s->sgfsr = val & (SGFSR_FAULTS | SGFSR_MULTI);
		break;
	case V2_TLBIVMID:
	case V2_TLBIALLNSNH:
	case V2_TLBIALLH:
		v2_tlbi(s, -1, off, val, 4, cycle);
		break;
	case V2_STLBGSYNC:
		v2_sync_start(s, -1, cycle);
		break;
	default:
		break;	/* RO and unimplemented: WI */
	}
}

uint64_t v2_gr1_read(struct iopt_smmuv2 *s, uint32_t off)
{
	unsigned n = (off & 0x3ffu) / 4;

	if (n >= s->p.num_cb)
		return 0;
	switch (off & ~0x3ffu) {
	case V2_CBAR(0): return s->cb[n].cbar;
	case V2_CBFRSYNRA(0): return s->cb[n].cbfrsynra;
	case V2_CBA2R(0): return s->cb[n].cba2r;
	default: return 0;
	}
}

void v2_gr1_write(struct iopt_smmuv2 *s, uint32_t off, uint32_t val)
{
	unsigned n = (off & 0x3ffu) / 4;

	if (n >= s->p.num_cb)
		return;
	s->cfg_gen++;		/* decoded regimes are stale */
	switch (off & ~0x3ffu) {
	case V2_CBAR(0):
		s->cb[n].cbar = val & CBAR_RW;
		break;
	case V2_CBA2R(0):
		/* VA64 only where AArch64 banks exist; VMID16 31:16 kept. */
		s->cb[n].cba2r = val & ((s->p.aarch64 ? CBA2R_VA64 : 0) |
					0xffff0000u);
		break;
	default:
		break;	/* CBFRSYNRA: written by the SMMU */
	}
}
