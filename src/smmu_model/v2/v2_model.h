/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv2 model's state and the register map it implements, shared by
 * the files of src/smmu_model/v2/ (one concern each):
 *   v2_core.c     creation, presets, time, entry points, stats, runner
 *   v2_regs.c     global register space (GR0, GR1) and ID registers
 *   v2_stream.c   stream matching (SMRn, S2CRn)
 *   v2_cb.c       context bank registers, translation, faults, stall
 *   v2_tlbi.c     TLB maintenance, syncs
 *   v2_ats.c      ATS1* address translation operations, PAR
 *
 * Register offsets and field positions are those of the project's
 * reference notes (Linux arm-smmu.h, OpenBSD smmureg.h, MMU-500 TRM
 * DDI0517); IHI0062 itself was not available. Not thread-safe: the entry
 * points in v2_core.c take the model's lock around every call here.
 */
#ifndef IOPT_SMMUV2_MODEL_H
#define IOPT_SMMUV2_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv2.h>

#include "../../platform/platform.h"
#include "../common/model_core.h"

/* ---- GR0 (global register space 0) ---- */
#define V2_SCR0		0x000
#define V2_SCR1		0x004
#define V2_SACR		0x010
#define V2_ID(n)	(0x020 + 4 * (n))	/* ID0..ID7 */
#define V2_SGFAR	0x040			/* 64-bit */
#define V2_SGFSR	0x048
#define V2_SGFSRRESTORE	0x04c
#define V2_SGFSYNR0	0x050
#define V2_SGFSYNR1	0x054
#define V2_SGFSYNR2	0x058
#define V2_STLBIALL	0x060
#define V2_TLBIVMID	0x064
#define V2_TLBIALLNSNH	0x068
#define V2_TLBIALLH	0x06c
#define V2_STLBGSYNC	0x070
#define V2_STLBGSTATUS	0x074
#define V2_SMR(n)	(0x800 + 4 * (n))
#define V2_S2CR(n)	(0xc00 + 4 * (n))

/* sCR0 fields. */
#define SCR0_CLIENTPD	(1u << 0)
#define SCR0_GFRE	(1u << 1)
#define SCR0_GFIE	(1u << 2)
#define SCR0_GCFGFRE	(1u << 4)
#define SCR0_GCFGFIE	(1u << 5)
#define SCR0_STALLD	(1u << 8)
#define SCR0_USFCFG	(1u << 10)
#define SCR0_VMIDPNE	(1u << 11)
#define SCR0_PTM	(1u << 12)
#define SCR0_FB		(1u << 13)
#define SCR0_BSU	(3u << 14)
#define SCR0_SMCFCFG	(1u << 21)
#define SCR0_VMID16EN	(1u << 31)
/* The sCR0 bits this model keeps (the others are RAZ/WI here). */
#define SCR0_RW		(SCR0_CLIENTPD | SCR0_GFRE | SCR0_GFIE | SCR0_GCFGFRE | \
			 SCR0_GCFGFIE | SCR0_STALLD | SCR0_USFCFG | SCR0_VMIDPNE | \
			 SCR0_PTM | SCR0_FB | SCR0_BSU | SCR0_SMCFCFG)

/* sGFSR (write 1 to clear). */
#define SGFSR_ICF	(1u << 0)
#define SGFSR_USF	(1u << 1)
#define SGFSR_SMCF	(1u << 2)
#define SGFSR_UCBF	(1u << 3)
#define SGFSR_UCIF	(1u << 4)
#define SGFSR_CAF	(1u << 5)
#define SGFSR_EF	(1u << 6)
#define SGFSR_PF	(1u << 7)
#define SGFSR_UUT	(1u << 8)
#define SGFSR_MULTI	(1u << 31)
#define SGFSR_FAULTS	0x1ffu

/* sGFSYNR0. */
#define SGFSYNR0_WNR	(1u << 1)
#define SGFSYNR0_PNU	(1u << 2)
#define SGFSYNR0_IND	(1u << 3)

/* SMR / S2CR. */
#define SMR_VALID	(1u << 31)
#define SMR_MASK_SHIFT	16
#define SMR_FIELD	0x7fffu			/* ID 14:0, MASK 30:16 */
#define S2CR_CBNDX	0xffu
#define S2CR_TYPE_SHIFT	16
#define S2CR_TYPE_TRANS	0u
#define S2CR_TYPE_BYPASS 1u
#define S2CR_TYPE_FAULT	2u
#define S2CR_RW		(0xffu | 3u << 16 | 3u << 24)	/* CBNDX, TYPE, PRIVCFG */

/* ---- GR1 ---- */
#define V2_CBAR(n)	(0x000 + 4 * (n))
#define V2_CBFRSYNRA(n)	(0x400 + 4 * (n))
#define V2_CBA2R(n)	(0x800 + 4 * (n))
#define CBAR_VMID	0xffu
#define CBAR_TYPE_SHIFT	16
#define CBAR_TYPE_S2	0u
#define CBAR_TYPE_S1_BYPASS 1u
#define CBAR_TYPE_S1_FAULT 2u
#define CBAR_TYPE_NESTED 3u
#define CBAR_RW		(0xffu | 0xffu << 8 | 3u << 16 | 0xffu << 24)
#define CBA2R_VA64	(1u << 0)

/* ---- a context bank's page ---- */
#define CB_SCTLR	0x000
#define CB_ACTLR	0x004
#define CB_RESUME	0x008
#define CB_TCR2		0x010
#define CB_TTBR0	0x020		/* 64-bit */
#define CB_TTBR1	0x028		/* 64-bit */
#define CB_TCR		0x030
#define CB_CONTEXTIDR	0x034
#define CB_MAIR0	0x038
#define CB_MAIR1	0x03c
#define CB_PAR		0x050		/* 64-bit */
#define CB_FSR		0x058
#define CB_FSRRESTORE	0x05c
#define CB_FAR		0x060		/* 64-bit */
#define CB_FSYNR0	0x068
#define CB_FSYNR1	0x06c
#define CB_IPAFAR	0x070		/* 64-bit */
#define CB_TLBIVA	0x600		/* 64-bit */
#define CB_TLBIVAA	0x608		/* 64-bit */
#define CB_TLBIASID	0x610
#define CB_TLBIALL	0x618
#define CB_TLBIVAL	0x620		/* 64-bit */
#define CB_TLBIVAAL	0x628		/* 64-bit */
#define CB_TLBIIPAS2	0x630		/* 64-bit */
#define CB_TLBIIPAS2L	0x638		/* 64-bit */
#define CB_TLBSYNC	0x7f0
#define CB_TLBSTATUS	0x7f4
#define CB_ATS1PR	0x800		/* 64-bit */
#define CB_ATS1PW	0x808		/* 64-bit */
#define CB_ATS1UR	0x810		/* 64-bit */
#define CB_ATS1UW	0x818		/* 64-bit */
#define CB_ATSR		0x8f0

#define SCTLR_M		(1u << 0)
#define SCTLR_TRE	(1u << 1)
#define SCTLR_AFE	(1u << 2)
#define SCTLR_AFFD	(1u << 3)
#define SCTLR_E		(1u << 4)
#define SCTLR_CFRE	(1u << 5)
#define SCTLR_CFIE	(1u << 6)
#define SCTLR_CFCFG	(1u << 7)	/* 1: stall */
#define SCTLR_HUPCF	(1u << 8)
#define SCTLR_WXN	(1u << 9)
#define SCTLR_UWXN	(1u << 10)
#define SCTLR_ASIDPNE	(1u << 12)
#define SCTLR_RW	0x17ffu		/* bits 0..10 and 12 kept */

#define FSR_TF		(1u << 1)
#define FSR_AFF		(1u << 2)
#define FSR_PF		(1u << 3)
#define FSR_EF		(1u << 4)
#define FSR_TLBMCF	(1u << 5)
#define FSR_TLBLKF	(1u << 6)
#define FSR_ASF		(1u << 7)
#define FSR_UUT		(1u << 8)
#define FSR_FORMAT_SHIFT 9
#define FSR_FORMAT	(3u << FSR_FORMAT_SHIFT)
/* FSR.FORMAT and the fault PAR's FORMAT: the translation table format of
 * the bank that recorded the fault (the sources give the field, not its
 * encoding: this model's choice, docs/smmuv2_model.md). */
#define V2_FMT_AARCH32_S 0u		/* short descriptor (v7s) */
#define V2_FMT_AARCH32_L 1u		/* AArch32 LPAE (VMSAv8-32 long) */
#define V2_FMT_AARCH64	2u
#define FSR_SS		(1u << 30)
#define FSR_MULTI	(1u << 31)
#define FSR_FAULTS	0x1feu		/* TF .. UUT */
/* Not an FSR bit: v2_cb_walk()'s mark of a stage 2 fault. */
#define V2_F_STAGE2	(1u << 0)

#define FSYNR0_PLVL	0x3u
#define FSYNR0_WNR	(1u << 4)
#define FSYNR0_PNU	(1u << 5)
#define FSYNR0_IND	(1u << 6)
#define FSYNR0_PTWF	(1u << 10)
#define FSYNR0_S1CBNDX_SHIFT 16	/* S1CBNDX 23:16 */

#define RESUME_TERMINATE (1u << 0)
#define SACTIVE		(1u << 0)	/* TLBSTATUS, sTLBGSTATUS.GSACTIVE */
#define ATSR_ACTIVE	(1u << 0)
#define PAR_F		(1ull << 0)
#define PAR_SH_SHIFT	7		/* success: SH 8:7 */
#define PAR_NS		(1ull << 9)	/* success: NS */
#define PAR_FORMAT_SHIFT 8		/* fault: FORMAT 9:8 */
/* TCR as TTBCR (AArch32): EAE 31 selects the long-descriptor format. */
#define TCR_EAE		(1u << 31)

/* Transactions held behind a stalled fault, per bank. */
#define V2_STALL_MAX	8

/* A sync register's state: active until done (UINT64_MAX while blocked by
 * a stalled fault). */
struct v2_sync {
	uint64_t done;		/* SACTIVE reads 1 before this cycle */
	bool blocked;		/* ... and while a stalled fault holds it */
};

struct v2_held {
	struct iopt_smmuv2_txn txn;
	uint64_t cycle;		/* when it arrived */
};

/* A bank's translation regime as the walker needs it, decoded from its
 * registers (v2_cb.c) and cached until a configuration write. */
struct v2_ctx {
	bool ok;			/* the registers describe a usable regime */
	unsigned type;			/* CBAR.TYPE */
	bool s1, s2;			/* stages that translate */
	uint16_t vmid, asid;
	bool ttb_ok[2];
	/* Stage 1 TTBR selection: AArch64 by VA[55]; AArch32 (va32) by
	 * range: TTBR0 below t0_end, TTBR1 from t1_start (Arm ARM G5.5). */
	bool va32;
	uint64_t t0_end, t1_start;
	struct smmu_stage_cfg s1c[2], s2c;
};

/* The TTBR (0 or 1) translating stage 1 address va of x, or -1 when va
 * is in neither region (a translation fault). */
static inline int v2_ttb_select(const struct v2_ctx *x, uint64_t va)
{
	if (!x->va32)
		return (int)(va >> 55 & 1);
	if (va >> 32)
		return -1;
	if (va < x->t0_end)
		return 0;
	return va >= x->t1_start ? 1 : -1;
}

/* A stream match result, cached until an SMR or S2CR write. */
struct v2_smc {
	uint64_t gen;			/* cfg_gen + 1 when filled; 0 empty */
	uint32_t sid;
	int m;
	bool conflict;
};
#define V2_SMC_SIZE	256

struct v2_cb {
	struct v2_ctx ctx;
	uint64_t ctx_gen;		/* cfg_gen + 1 when ctx is valid */
	/* GR1 */
	uint32_t cbar, cba2r, cbfrsynra;
	/* bank page */
	uint32_t sctlr, actlr, tcr, tcr2, contextidr, mair[2];
	uint64_t ttbr[2], par, far, ipafar;
	uint32_t fsr, fsynr0, fsynr1;
	uint32_t atsr;
	uint64_t ats_done;		/* ATSR.ACTIVE until this cycle */
	uint64_t ats_par;		/* PAR from then on */
	uint64_t maint_done;		/* latest completion of this bank's TLBIs */
	struct v2_sync sync;
	/* Stall: held[0] is the faulting transaction, the others arrived
	 * behind it (HUPCF = 0). */
	struct v2_held held[V2_STALL_MAX];
	unsigned nheld;
	/* Outcomes after RESUME, for iopt_smmuv2_stalled(). */
	struct iopt_smmuv2_resp done[V2_STALL_MAX];
	unsigned ndone, done_head;
};

struct iopt_smmuv2 {
	struct iopt_smmuv2_params p;
	/* Memory, irq callback, lock, clock, slots, TLB and walk cache
	 * (common/model_core.h, shared with the SMMUv3 model). */
	struct smmu_core core;

	uint32_t id[8];
	uint32_t scr0, scr1, sacr;
	uint32_t sgfsr, sgfsynr0, sgfsynr1, sgfsynr2;
	uint64_t sgfar;
	uint32_t smr[128], s2cr[128];
	struct v2_cb *cb;

	/* Bumped by every configuration write (SMRn, S2CRn, GR1, a bank's
	 * SCTLR/TCR/TCR2/TTBRn/MAIRn): the caches below and each bank's
	 * ctx are valid only for the generation they were filled in. */
	uint64_t cfg_gen;
	struct v2_smc smc[V2_SMC_SIZE];
	uint64_t maint_free;		/* the invalidation engine is free from */
	uint64_t maint_done;		/* latest completion of any TLBI */
	struct v2_sync gsync;

	struct iopt_smmuv2_stats st;
};

/* Page size and layout of the register space. */
static inline unsigned v2_page_shift(const struct iopt_smmuv2 *s)
{
	return s->p.pagesize_64k ? 16 : 12;
}
static inline uint64_t v2_numpage(const struct iopt_smmuv2 *s)
{
	return 1ull << (s->p.numpagendxb + 1);
}

/* v2_regs.c */
void v2_regs_reset(struct iopt_smmuv2 *s);
uint64_t v2_gr0_read(struct iopt_smmuv2 *s, uint32_t off, uint64_t cycle);
void v2_gr0_write(struct iopt_smmuv2 *s, uint32_t off, uint32_t val, uint64_t cycle);
uint64_t v2_gr1_read(struct iopt_smmuv2 *s, uint32_t off);
void v2_gr1_write(struct iopt_smmuv2 *s, uint32_t off, uint32_t val);
void v2_global_fault(struct iopt_smmuv2 *s, uint32_t bit,
		     const struct iopt_smmuv2_txn *t, uint64_t cycle);

/* v2_stream.c: the index of the lowest SMR matching sid, -1 when none
 * does; *conflict: more than one matches. */
int v2_stream_match(const struct iopt_smmuv2 *s, uint32_t sid, bool *conflict);

/* v2_cb.c */
uint64_t v2_cb_read(struct iopt_smmuv2 *s, unsigned n, uint32_t off,
		    unsigned size, uint64_t cycle);
void v2_cb_write(struct iopt_smmuv2 *s, unsigned n, uint32_t off, unsigned size,
		 uint64_t val, uint64_t cycle);
/* A translation under the model's lock (iopt_smmuv2_translate without a
 * replayed hit): takes the lock, applies the time rule (0 or -EINVAL,
 * nothing changed), translates, records a pure TLB hit in the hit memo
 * or retires the memo (common/hit_memo.h), releases the lock. Out of
 * line (the entry point and the replayed hit save no registers for it). */
int v2_translate_locked(struct iopt_smmuv2 *s, const struct iopt_smmuv2_txn *t,
			uint64_t cycle, struct iopt_smmuv2_resp *r);

/* The hit memo's key of a transaction (common/hit_memo.h): StreamID and
 * the access (write 32, exec 33, privileged 34). */
static inline uint64_t v2_memo_key(const struct iopt_smmuv2_txn *t)
{
	return (uint64_t)t->sid | (uint64_t)t->write << 32 |
	       (uint64_t)t->exec << 33 | (uint64_t)t->priv << 34;
}
/* FSR.FORMAT of bank cb (V2_FMT_*). */
uint32_t v2_cb_format(const struct v2_cb *cb);
/* Translate through bank n without faulting: 0 with *r, or the FSR fault
 * bit (ATS1*). *fsynr0 gets the syndrome. */
uint32_t v2_cb_walk(struct iopt_smmuv2 *s, unsigned n,
		    const struct iopt_smmuv2_txn *t, uint64_t *tcur,
		    struct iopt_smmuv2_resp *r, uint32_t *fsynr0, uint64_t *ipa);

/* v2_tlbi.c */
void v2_tlbi(struct iopt_smmuv2 *s, int cb, uint32_t off, uint64_t val,
	     unsigned size, uint64_t cycle);
void v2_sync_start(struct iopt_smmuv2 *s, int cb, uint64_t cycle);
bool v2_sync_active(struct iopt_smmuv2 *s, int cb, uint64_t cycle);
/* A status register read: SACTIVE or 0, counted in sync_polls(_active). */
uint32_t v2_status_read(struct iopt_smmuv2 *s, int cb, uint64_t cycle);
/* A stalled fault in bank n holds the syncs it covers; with no stall
 * left, held syncs complete sync_cycles after cycle at the earliest. */
void v2_sync_block(struct iopt_smmuv2 *s, unsigned n);
void v2_sync_unblock(struct iopt_smmuv2 *s, uint64_t cycle);
uint64_t v2_next_event(const struct iopt_smmuv2 *s);

/* v2_ats.c */
void v2_ats(struct iopt_smmuv2 *s, unsigned n, uint32_t off, uint64_t val,
	    unsigned size, uint64_t cycle);
/* PAR as read at cycle (an ATS1* result becomes visible as it completes). */
uint64_t v2_par(struct iopt_smmuv2 *s, unsigned n, uint64_t cycle);

#endif
