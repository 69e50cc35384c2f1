/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 driver internals shared by its files:
 *   smmuv2_probe.c  probe/reset/remove, domains, attach/detach
 *   smmuv2_tlb.c    register access on the timeline, the sync poll loop,
 *                   struct iopt_pgtable_tlb_ops, ATS1PR, RESUME
 * Register offsets and fields: docs/driver.md "SMMUv2 driver" (from the
 * project's SMMUv2 reference notes; IHI0062 was not available).
 */
#ifndef IOPT_SMMUV2_DRV_INTERNAL_H
#define IOPT_SMMUV2_DRV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv2_drv.h>

#include "../platform/platform.h"
#include "../platform/plat_lock.h"
#include "drv_alloc.h"
#include "drv_stats.h"
#include "drv_timeline.h"

/* GR0 */
#define V2_SCR0			0x000
#define V2_SCR0_CLIENTPD	(1u << 0)
#define V2_SCR0_GFRE		(1u << 1)
#define V2_SCR0_GFIE		(1u << 2)
#define V2_SCR0_GCFGFRE		(1u << 4)
#define V2_SCR0_GCFGFIE		(1u << 5)
#define V2_SCR0_USFCFG		(1u << 10)
#define V2_SCR0_VMIDPNE		(1u << 11)
#define V2_SCR0_PTM		(1u << 12)
#define V2_ID0			0x020
#define V2_ID1			0x024
#define V2_SGFSR		0x048
#define V2_TLBIVMID		0x064
#define V2_TLBIALLNSNH		0x068
#define V2_TLBIALLH		0x06c
#define V2_STLBGSYNC		0x070
#define V2_STLBGSTATUS		0x074
#define V2_SMR(n)		(0x800u + 4u * (n))
#define V2_SMR_VALID		(1u << 31)
#define V2_SMR_MASK_SHIFT	16		/* MASK 30:16, ID 14:0 */
#define V2_S2CR(n)		(0xc00u + 4u * (n))
#define V2_S2CR_TYPE_FAULT	(2u << 16)
/* GR1 (page 1) */
#define V2_CBAR(n)		(4u * (n))
#define V2_CBAR_TYPE_S2		(0u << 16)
#define V2_CBAR_TYPE_S1_BYPASS	(1u << 16)
#define V2_CBAR_TYPE_NESTED	(3u << 16)	/* + stage 2 bank 15:8 */
#define V2_CBA2R(n)		(0x800u + 4u * (n))
#define V2_CBA2R_VA64		(1u << 0)
/* Context bank page */
#define V2_CB_SCTLR		0x00
#define V2_SCTLR_M		(1u << 0)
#define V2_SCTLR_TRE		(1u << 1)
#define V2_SCTLR_AFE		(1u << 2)
#define V2_SCTLR_CFRE		(1u << 5)
#define V2_SCTLR_CFIE		(1u << 6)
#define V2_SCTLR_CFCFG		(1u << 7)
#define V2_CB_RESUME		0x08
#define V2_CB_TCR2		0x10
#define V2_CB_TTBR0		0x20
#define V2_CB_TCR		0x30
#define V2_TCR_EPD1		(1u << 23)
#define V2_TCR_EAE		(1u << 31)
#define V2_CB_CONTEXTIDR	0x34
#define V2_CB_MAIR0		0x38
#define V2_CB_MAIR1		0x3c
#define V2_CB_PAR		0x50
#define V2_CB_FSR		0x58
#define V2_FSR_FAULT		0x800001feu	/* TF..UUT, MULTI */
#define V2_FSR_SS		(1u << 30)
#define V2_CB_TLBIVA		0x600
#define V2_CB_TLBIASID		0x610
#define V2_CB_TLBIALL		0x618
#define V2_CB_TLBIVAL		0x620
#define V2_CB_TLBIIPAS2		0x630
#define V2_CB_TLBIIPAS2L	0x638
#define V2_CB_TLBSYNC		0x7f0
#define V2_CB_TLBSTATUS		0x7f4
#define V2_CB_ATS1PR		0x800
#define V2_CB_ATSR		0x8f0

#define V2_MAX_CB		128
#define V2_INV_MAX_STEPS	512	/* above: the whole ASID/VMID */

struct iopt_smmuv2_drv {
	struct iopt_smmuv2_drv_cfg cfg;
	struct iopt_smmuv2 *smmu;
	/* The model calls' cycles and order (drv_timeline.h, T1-T4). */
	struct drv_timeline tl;
	uint64_t timeout_cycles;	/* 0: the reference loop's bound */
	uint64_t pgsize;		/* register page */
	uint64_t cb_base;		/* offset of bank 0 */
	unsigned num_cb, num_s2cb, num_smrg, numsidb;
	bool s1, s2;
	bool aarch32l, aarch32s;	/* ID0.PTFS: AArch32 LPAE, short-descriptor */
	/* sync = GLOBAL, and sTLBGSYNC: a line of its own (spinners). */
	_Alignas(64) struct plat_lock global_sync;
	struct plat_mutex cfg_lock;	/* banks, SMR table */
	uint64_t banks[V2_MAX_CB / 64];	/* allocated banks */
	uint32_t *smr_sid;		/* per SMR: ID, or UINT32_MAX (free) */
	uint32_t *smr_mask;		/* per SMR: MASK */
	void **smr_dom;			/* per SMR: owner domain */
	/* struct iopt_smmuv2_drv_stats, per CPU (drv_stats.h): every TLBI
	 * and sync adds to them. */
	struct drv_stats st;
	/* Per CPU, one word: syncs of that CPU polling now (cfg.count_nested
	 * with sync NONE; read and written by that CPU alone, relaxed). */
	struct drv_stats polling;
};

struct iopt_smmuv2_drv_domain {
	struct iopt_smmuv2_drv *drv;
	unsigned stage, cb;
	uint16_t asid, vmid;
	bool va64;
	bool v7s;		/* AArch32 short-descriptor bank */
	/* struct iopt_pgtable *, bound at the first attach: store release
	 * (after pgsizes/granule) pairs with the TLB ops' load acquire. */
	uint64_t pt;
	uint64_t pgsizes;
	uint32_t granule;
	unsigned nr_sids;		/* under cfg_lock */
	/* Nesting: the stage 2 domain a stage 1 domain translates through
	 * (NULL: none), and, on a stage 2 domain, how many do (written
	 * under cfg_lock; read relaxed by the TLB sync). */
	struct iopt_smmuv2_drv_domain *parent;
	uint32_t nr_nested;
	/* sync = BANK: TLBSYNC; always ATS1PR. A line of its own: CPUs
	 * spinning on it do not pull the line every TLB op reads (pt). */
	_Alignas(64) struct plat_lock lock;
};

/* Add n to statistic field (of struct iopt_smmuv2_drv_stats): relaxed,
 * on this CPU's copy (drv_stats.h). */
#define v2_count(drv, field, n)						\
	drv_stats_add(&(drv)->st,					\
		      offsetof(struct iopt_smmuv2_drv_stats, field), (n))

/*
 * The stage 1 "whole domain" invalidation: TLBIASID (global entries stay,
 * as the architecture says), or for a v7s bank the bank's TLBIALL — this
 * library's v7s leaves are global (nG = 0; Linux's encoder sets nG), so
 * TLBIASID would leave them. Each bank has its own VMID here, so TLBIALL
 * is the domain. Returns the register and writes its operand to *val.
 */
static inline uint64_t v2_inv_all_reg(const struct iopt_smmuv2_drv_domain *dom,
				      uint64_t *val)
{
	*val = dom->v7s ? 0 : dom->asid;
	return dom->v7s ? V2_CB_TLBIALL : V2_CB_TLBIASID;
}

static inline uint64_t v2_cb_off(const struct iopt_smmuv2_drv *drv,
				 unsigned cb, uint64_t reg)
{
	return drv->cb_base + (uint64_t)cb * drv->pgsize + reg;
}

/* ---- smmuv2_tlb.c ---- */
int v2_read(struct iopt_smmuv2_drv *drv, uint64_t off, unsigned size,
	    uint64_t *val);
int v2_write(struct iopt_smmuv2_drv *drv, uint64_t off, unsigned size,
	     uint64_t val);
/* Write sTLBGSYNC and poll (under global_sync unless sync = NONE). */
int v2_global_sync(struct iopt_smmuv2_drv *drv);

#endif /* IOPT_SMMUV2_DRV_INTERNAL_H */
