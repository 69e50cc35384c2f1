/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 register file (IHI0070 6.2, 6.3): the ID registers from the
 * model's parameters, and the MMIO reads and writes with each register's
 * access rules.
 */
#include <errno.h>

#include "v3_model.h"

/*
 * ID register fields (IHI0070 6.3.1-6.3.6), each at its bit position; the
 * values this model advertises whatever its parameters are given here.
 */
#define IDR0_S2P		(1u << 0)	/* stage 2 */
#define IDR0_S1P		(1u << 1)	/* stage 1 */
#define IDR0_TTF_AARCH64	(2u << 2)	/* TTF [3:2]: AArch64 tables only */
#define IDR0_COHACC		(1u << 4)	/* coherent table and queue access */
#define IDR0_HTTU_SHIFT		6		/* HTTU [7:6] */
#define IDR0_ATS		(1u << 10)
#define IDR0_NS1ATS		(1u << 11)	/* split-stage ATS not supported */
#define IDR0_ASID16		(1u << 12)
#define IDR0_MSI		(1u << 13)
#define IDR0_SEV		(1u << 14)
#define IDR0_VMID16		(1u << 18)
#define IDR0_CD2L		(1u << 19)	/* 2-level CD tables (S1Fmt 1, 2) */
#define IDR0_TTENDIAN_LE	(2u << 21)	/* TTENDIAN [22:21]: little-endian */
#define IDR0_STALL_MODEL_NONE	(1u << 24)	/* STALL_MODEL [25:24]: no stall */
#define IDR0_TERM_MODEL		(1u << 26)	/* terminate always aborts */
#define IDR0_ST_LEVEL_2LVL	(1u << 27)	/* ST_LEVEL [28:27]: 2-level too */

#define IDR1_SIDSIZE_SHIFT	0		/* SIDSIZE [5:0] */
#define IDR1_SSIDSIZE_SHIFT	6		/* SSIDSIZE [10:6] */
#define IDR1_EVENTQS_SHIFT	16		/* EVENTQS [20:16] */
#define IDR1_CMDQS_SHIFT	21		/* CMDQS [25:21] */

#define IDR3_RIL		(1u << 10)	/* range invalidation */

#define IDR5_OAS_SHIFT		0		/* OAS [2:0] */
#define IDR5_GRAN4K		(1u << 4)
#define IDR5_GRAN16K		(1u << 5)
#define IDR5_GRAN64K		(1u << 6)

static unsigned oas_code(unsigned oas)
{
	static const unsigned bits[] = { 32, 36, 40, 42, 44, 48, 52 };

	for (unsigned i = 0; i < 7; i++)
		if (oas <= bits[i])
			return i;
	return 6;
}

/* The registers' values at creation: the ID registers from the parameters,
 * GBPA aborting; everything else 0. */
void v3_regs_reset(struct iopt_smmuv3 *s)
{
	const struct iopt_smmuv3_params *p = &s->p;

	/* ID registers (6.3.1-6.3.6); IDR2 and IDR4 read 0. */
	s->idr[0] = (p->s2 ? IDR0_S2P : 0) | (p->s1 ? IDR0_S1P : 0) |
		    IDR0_TTF_AARCH64 | IDR0_COHACC |
		    (uint32_t)p->httu << IDR0_HTTU_SHIFT |
		    (p->ats ? IDR0_ATS : 0) |
		    /* No split-stage ATS: RES0 unless ATS, S1P and S2P. */
		    (p->ats && p->s1 && p->s2 ? IDR0_NS1ATS : 0) |
		    (p->asid16 ? IDR0_ASID16 : 0) | (p->msi ? IDR0_MSI : 0) |
		    (p->sev ? IDR0_SEV : 0) | (p->vmid16 ? IDR0_VMID16 : 0) |
		    IDR0_CD2L | IDR0_TTENDIAN_LE | IDR0_STALL_MODEL_NONE |
		    IDR0_TERM_MODEL | (p->strtab_2lvl ? IDR0_ST_LEVEL_2LVL : 0);
	s->idr[1] = p->sidsize << IDR1_SIDSIZE_SHIFT |
		    p->ssidsize << IDR1_SSIDSIZE_SHIFT |
		    p->evtqs << IDR1_EVENTQS_SHIFT | p->cmdqs << IDR1_CMDQS_SHIFT;
	s->idr[3] = p->ril ? IDR3_RIL : 0;
	s->idr[5] = oas_code(p->oas) << IDR5_OAS_SHIFT |
		    (p->gran4k ? IDR5_GRAN4K : 0) | (p->gran16k ? IDR5_GRAN16K : 0) |
		    (p->gran64k ? IDR5_GRAN64K : 0);
	s->gbpa = GBPA_ABORT;
}

/* ---- registers ------------------------------------------------------------ */

/* The 64-bit registers (6.2.1): each has two separately accessible
 * 32-bit halves, [63:32] at offset + 4. */
static bool is_reg64(uint64_t off)
{
	return off == R_GERROR_IRQ_CFG0 || off == R_STRTAB_BASE ||
	       off == R_CMDQ_BASE || off == R_EVENTQ_BASE || off == R_EVENTQ_IRQ_CFG0;
}

static uint64_t reg64(const struct iopt_smmuv3 *s, uint64_t off)
{
	switch (off) {
	case R_GERROR_IRQ_CFG0: return s->msi[IOPT_SMMUV3_IRQ_GERROR].addr;
	case R_STRTAB_BASE: return s->strtab_base;
	case R_CMDQ_BASE: return s->cmdq_base;
	case R_EVENTQ_BASE: return s->evtq_base;
	default: return s->msi[IOPT_SMMUV3_IRQ_EVTQ].addr;
	}
}

int iopt_smmuv3_mmio_read(struct iopt_smmuv3 *s, uint64_t off, unsigned size,
			  uint64_t *val, uint64_t cycle)
{
	uint64_t v = 0;
	unsigned half = 0;

	if ((size != 4 && size != 8) || (off & (size - 1)))
		return -EINVAL;
	/* 6.2: a 32-bit access to the upper half of a 64-bit register. */
	if (size == 4 && (off & 4) && is_reg64(off - 4)) {
		off -= 4;
		half = 32;
	}
	plat_mutex_lock(&s->core.lock);
	if (smmu_core_time_at(&s->core, &cycle)) {
		plat_mutex_unlock(&s->core.lock);
		return -EINVAL;
	}
	v3_run_cmds(s, cycle);
	switch (off) {
	case R_IDR0: case R_IDR1: case R_IDR2: case R_IDR3: case R_IDR4:
	case R_IDR5:
		v = s->idr[off / 4];
		break;
	case R_AIDR: v = 0x2; break;		/* SMMUv3.2 */
	case R_CR0: v = s->cr0; break;
	case R_CR0ACK: v = s->cr0; break;	/* updates take effect at once */
	case R_CR1: v = s->cr1; break;
	case R_CR2: v = s->cr2; break;
	case R_GBPA: v = s->gbpa; break;
	case R_IRQ_CTRL: case R_IRQ_CTRLACK: v = s->irq_ctrl; break;
	case R_GERROR: v = s->gerror; break;
	case R_GERRORN: v = s->gerrorn; break;
	case R_GERROR_IRQ_CFG0: v = s->msi[IOPT_SMMUV3_IRQ_GERROR].addr; break;
	case R_GERROR_IRQ_CFG1: v = s->msi[IOPT_SMMUV3_IRQ_GERROR].data; break;
	case R_GERROR_IRQ_CFG2: v = s->msi[IOPT_SMMUV3_IRQ_GERROR].attr; break;
	case R_STRTAB_BASE: v = s->strtab_base; break;
	case R_STRTAB_BASE_CFG: v = s->strtab_cfg; break;
	case R_CMDQ_BASE: v = s->cmdq_base; break;
	case R_CMDQ_PROD: v = s->cmdq_prod; break;
	case R_CMDQ_CONS: v = s->cmdq_cons; break;
	case R_EVENTQ_BASE: v = s->evtq_base; break;
	case R_EVENTQ_IRQ_CFG0: v = s->msi[IOPT_SMMUV3_IRQ_EVTQ].addr; break;
	case R_EVENTQ_IRQ_CFG1: v = s->msi[IOPT_SMMUV3_IRQ_EVTQ].data; break;
	case R_EVENTQ_IRQ_CFG2: v = s->msi[IOPT_SMMUV3_IRQ_EVTQ].attr; break;
	case R_EVENTQ_PROD: v = s->evtq_prod; break;
	case R_EVENTQ_CONS: v = s->evtq_cons; break;
	default: break;				/* RAZ */
	}
	plat_mutex_unlock(&s->core.lock);
	/* An 8-byte read of two 32-bit registers returns the lower one
	 * (one of the behaviours 6.2 permits). */
	v >>= half;
	*val = size == 4 ? (uint32_t)v : v;
	return 0;
}

/* GERROR/GERRORN bits this SMMU has (6.3.19): CMDQ_ERR, EVENTQ_ABT_ERR,
 * SFM_ERR, and the MSI abort bits with IDR0.MSI (no PRI: bits 3, 6 RES0). */
static uint32_t gerror_fields(const struct iopt_smmuv3 *s)
{
	return GERROR_CMDQ_ERR | GERROR_EVENTQ_ABT | GERROR_SFM |
	       (s->p.msi ? GERROR_MSI_CMDQ_ABT | GERROR_MSI_EVTQ_ABT |
			   GERROR_MSI_GERROR_ABT : 0);
}

static bool msi_cfg_writable(const struct iopt_smmuv3 *s, uint32_t irqen)
{
	return s->p.msi && !(s->irq_ctrl & irqen);
}

int iopt_smmuv3_mmio_write(struct iopt_smmuv3 *s, uint64_t off, unsigned size,
			   uint64_t val, uint64_t cycle)
{
	uint32_t v32 = (uint32_t)val;
	bool stopped;

	if ((size != 4 && size != 8) || (off & (size - 1)))
		return -EINVAL;
	plat_mutex_lock(&s->core.lock);
	if (smmu_core_time_at(&s->core, &cycle)) {
		plat_mutex_unlock(&s->core.lock);
		return -EINVAL;
	}
	v3_run_cmds(s, cycle);
	stopped = v3_cmdq_stopped(s);
	/* 6.2: a 32-bit write to one half of a 64-bit register leaves the
	 * other half; it is then written as the whole register. An 8-byte
	 * write to two 32-bit registers writes the lower one only (one of
	 * the behaviours 6.2 permits). */
	if (size == 4 && is_reg64(off & ~7ull)) {
		uint64_t cur = reg64(s, off & ~7ull);

		val = off & 4 ? (cur & 0xffffffffull) | (uint64_t)v32 << 32 :
				(cur & ~0xffffffffull) | v32;
		off &= ~7ull;
		v32 = (uint32_t)val;
	}
	switch (off) {
	case R_CR0:
		/* 6.3.9: SMMUEN, EVENTQEN, CMDQEN, and ATSCHK with IDR0.ATS;
		 * PRIQEN, VMW and DPT_WALK_EN are RES0 here (no PRI, VMW, DPT).
		 * Updates complete at once: CR0ACK reads the same fields. */
		s->cr0 = v32 & (CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN |
				(s->p.ats ? CR0_ATSCHK : 0));
		if (!(s->cr0 & CR0_SMMUEN)) {
			struct tlb_match all = { 0 };

			if (s->p.tlb.enable)
				tlb_invalidate(&s->core.tlb, &all);
			if (s->p.walk.enable)
				tlb_invalidate(&s->core.wc.t, &all);
		}
		break;
	case R_CR1:
		/* 6.3.11: TABLE_* [11:6] Guarded by SMMUEN, QUEUE_* [5:0] by
		 * EVENTQEN and CMDQEN; a write while guarded is IGNORED (the
		 * only SMMUv3.2 behaviour), field by field. */
		if (!(s->cr0 & CR0_SMMUEN))
			s->cr1 = (s->cr1 & ~CR1_TABLE) | (v32 & CR1_TABLE);
		if (!(s->cr0 & (CR0_EVENTQEN | CR0_CMDQEN)))
			s->cr1 = (s->cr1 & ~CR1_QUEUE) | (v32 & CR1_QUEUE);
		break;
	case R_CR2:
		/* 6.3.12: read-only while SMMUEN; only RECINVSID exists here
		 * (E2H needs IDR0.Hyp, PTM IDR0.BTM, REC_CFG_ATS ATSRECERR). */
		if (!(s->cr0 & CR0_SMMUEN))
			s->cr2 = v32 & CR2_RECINVSID;
		break;
	case R_GBPA:
		/* 6.3.14: a write without UPDATE is IGNORED (SMMUv3.2); with
		 * it the update completes at once, so UPDATE reads 0. */
		if (v32 & GBPA_UPDATE)
			s->gbpa = v32 & GBPA_FIELDS;
		break;
	case R_IRQ_CTRL:
		/* 6.3.17: GERROR_IRQEN, EVENTQ_IRQEN (PRIQ_IRQEN is RES0
		 * without PRI); acknowledged at once in IRQ_CTRLACK. */
		s->irq_ctrl = v32 & (IRQ_GERROR_EN | IRQ_EVENTQ_EN);
		break;
	case R_GERRORN: s->gerrorn = v32 & gerror_fields(s); break;
	/* MSI configuration (6.3.21-23, 6.3.31-33): present only with
	 * IDR0.MSI; ADDR [51:2] (OAS <= 52), data, MemAttr [3:0] and SH
	 * [5:4]; Guarded by the matching IRQ_CTRL enable (writes IGNORED
	 * while it is set, as SMMUv3.2 requires). */
	case R_GERROR_IRQ_CFG0:
		if (msi_cfg_writable(s, IRQ_GERROR_EN))
			s->msi[IOPT_SMMUV3_IRQ_GERROR].addr = val & (((1ull << 52) - 1) & ~3ull);
		break;
	case R_GERROR_IRQ_CFG1:
		if (msi_cfg_writable(s, IRQ_GERROR_EN))
			s->msi[IOPT_SMMUV3_IRQ_GERROR].data = v32;
		break;
	case R_GERROR_IRQ_CFG2:
		if (msi_cfg_writable(s, IRQ_GERROR_EN))
			s->msi[IOPT_SMMUV3_IRQ_GERROR].attr = v32 & 0x3f;
		break;
	/* Base registers are writable only while their unit is off. */
	case R_STRTAB_BASE:
		if (!(s->cr0 & CR0_SMMUEN))
			s->strtab_base = val & ((1ull << 62) | (((1ull << 52) - 1) & ~0x3full));
		break;
	case R_STRTAB_BASE_CFG:
		/* FMT [17:16] and SPLIT [10:6] exist with IDR0.ST_LEVEL. */
		if (!(s->cr0 & CR0_SMMUEN))
			s->strtab_cfg = v32 & (s->p.strtab_2lvl ? 0x307ffu : 0x3fu);
		break;
	case R_CMDQ_BASE:
		if (!(s->cr0 & CR0_CMDQEN)) {
			s->cmdq_base = val & ((1ull << 62) | (((1ull << 52) - 1) & ~0x1full) | 0x1f);
			s->vis_n = 0;
		}
		break;
	case R_CMDQ_PROD:
		s->cmdq_prod = v32 & ((2u << v3_q_log2(s->cmdq_base, s->p.cmdqs)) - 1);
		v3_cmd_publish(s, s->cmdq_prod, cycle);
		break;
	case R_CMDQ_CONS:
		/* 6.3.28: RD and its wrap bit; a written ERR is ignored (one
		 * of the two behaviours permitted). */
		if (!(s->cr0 & CR0_CMDQEN))
			s->cmdq_cons = (s->cmdq_cons & (0x7fu << CONS_ERR_SHIFT)) |
				       (v32 & ((2u << v3_q_log2(s->cmdq_base, s->p.cmdqs)) - 1));
		break;
	case R_EVENTQ_BASE:
		if (!(s->cr0 & CR0_EVENTQEN))
			s->evtq_base = val & ((1ull << 62) | (((1ull << 52) - 1) & ~0x1full) | 0x1f);
		break;
	case R_EVENTQ_IRQ_CFG0:
		if (msi_cfg_writable(s, IRQ_EVENTQ_EN))
			s->msi[IOPT_SMMUV3_IRQ_EVTQ].addr = val & (((1ull << 52) - 1) & ~3ull);
		break;
	case R_EVENTQ_IRQ_CFG1:
		if (msi_cfg_writable(s, IRQ_EVENTQ_EN))
			s->msi[IOPT_SMMUV3_IRQ_EVTQ].data = v32;
		break;
	case R_EVENTQ_IRQ_CFG2:
		if (msi_cfg_writable(s, IRQ_EVENTQ_EN))
			s->msi[IOPT_SMMUV3_IRQ_EVTQ].attr = v32 & 0x3f;
		break;
	case R_EVENTQ_PROD:
		if (!(s->cr0 & CR0_EVENTQEN))
			s->evtq_prod = v32 & (Q_OVFLG |
					      ((2u << v3_q_log2(s->evtq_base, s->p.evtqs)) - 1));
		break;
	case R_EVENTQ_CONS:
		s->evtq_cons = v32 & (Q_OVFLG |
				      ((2u << v3_q_log2(s->evtq_base, s->p.evtqs)) - 1));
		break;
	default:
		break;				/* WI */
	}
	/* A queue restarted (CMDQEN set, CMDQ_ERR acknowledged) takes its
	 * next command no earlier than now; other writes leave the command
	 * engine's timing alone. */
	if (stopped && !v3_cmdq_stopped(s) && s->cmd_free < cycle)
		s->cmd_free = cycle;
	/* Any register may change what a translation does (CR0, the
	 * tables' bases, PROD with commands to wait for): retire the hit
	 * memo (common/hit_memo.h), and the command fetched at CONS. */
	smmu_core_gen_bump(&s->core);
	s->reg_gen++;
	plat_mutex_unlock(&s->core.lock);
	return 0;
}
