/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 model's state and the register map it implements, shared by
 * the files of src/smmu_model/v3/ (one concern each):
 *   v3_core.c       creation, parameters, statistics, runner
 *   v3_evtq.c       global errors (GERROR), interrupts, MSIs, the event queue
 *   v3_strtab.c     stream table and CD fetch and checks, configuration cache
 *   v3_cmdq.c       command queue: checks, costs, effects, visibility, engine
 *   v3_translate.c  translation: configuration, TLB, walk, faults, hit memo
 *   v3_regs.c       register file (6.3): ID registers, MMIO reads and writes
 *   v3_structs.c    STE and CD encoders and decoders (5.2, 5.4)
 *   v3_cmd.c        command encoders and decoders (4)
 *   v3_fields.h     the bit-field helpers of the two codecs
 *
 * A register-level SMMUv3 (IHI0070): the register file (6.3), stream and
 * context tables (5.1-5.4), translation through the walker
 * (common/walk.c) and the TLB (common/tlb.c), the command queue (4) and
 * the event queue (7), with a deterministic timing model
 * (docs/smmu_model.md).
 *
 * Time: the model's time (smmu_core_now: s->core.clk.now, or a later
 * lock-free hit's cycle) is the cycle up to which internal events
 * (command completions) have been performed. Every entry point first runs
 * the model up to its cycle. The command engine is sequential: command k
 * completes at max(its visibility, completion of k - 1) + its cost, so a
 * CMD_SYNC completes only after every earlier command has.
 *
 * Register offsets and fields are IHI0070's (section numbers beside them). Not
 * thread-safe: the entry points (iopt_smmuv3_translate, the MMIO accessors,
 * iopt_smmuv3_run_until) take the model's lock around every call declared here.
 */
#ifndef IOPT_SMMUV3_MODEL_H
#define IOPT_SMMUV3_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv3.h>

#include "../../platform/platform.h"
#include "../common/model_core.h"
#include "../common/tlb.h"
#include "../common/walk.h"

/* Register offsets (6.3). */
#define R_IDR0		0x00
#define R_IDR1		0x04
#define R_IDR2		0x08
#define R_IDR3		0x0c
#define R_IDR4		0x10
#define R_IDR5		0x14
#define R_IIDR		0x18
#define R_AIDR		0x1c
#define R_CR0		0x20
#define R_CR0ACK	0x24
#define R_CR1		0x28
#define R_CR2		0x2c
#define R_GBPA		0x44
#define R_IRQ_CTRL	0x50
#define R_IRQ_CTRLACK	0x54
#define R_GERROR	0x60
#define R_GERRORN	0x64
#define R_GERROR_IRQ_CFG0 0x68
#define R_GERROR_IRQ_CFG1 0x70
#define R_GERROR_IRQ_CFG2 0x74
#define R_STRTAB_BASE	0x80
#define R_STRTAB_BASE_CFG 0x88
#define R_CMDQ_BASE	0x90
#define R_CMDQ_PROD	0x98
#define R_CMDQ_CONS	0x9c
#define R_EVENTQ_BASE	0xa0
#define R_EVENTQ_IRQ_CFG0 0xb0
#define R_EVENTQ_IRQ_CFG1 0xb8
#define R_EVENTQ_IRQ_CFG2 0xbc
#define R_EVENTQ_PROD	0x100a8
#define R_EVENTQ_CONS	0x100ac

#define CR0_SMMUEN	(1u << 0)
#define CR0_EVENTQEN	(1u << 2)
#define CR0_CMDQEN	(1u << 3)
#define CR0_ATSCHK	(1u << 4)
#define CR2_RECINVSID	(1u << 1)
#define GBPA_ABORT	(1u << 20)
#define GBPA_UPDATE	(1u << 31)
#define IRQ_GERROR_EN	(1u << 0)
#define IRQ_EVENTQ_EN	(1u << 2)
#define GERROR_CMDQ_ERR	(1u << 0)
#define GERROR_EVENTQ_ABT (1u << 2)
#define GERROR_SFM	(1u << 8)
#define CR1_TABLE	0xfc0u		/* TABLE_SH, TABLE_OC, TABLE_IC */
#define CR1_QUEUE	0x03fu		/* QUEUE_SH, QUEUE_OC, QUEUE_IC */
#define GBPA_FIELDS	0x1f3f1fu	/* ABORT ... MemAttr, no RES0 bits */
#define GERROR_MSI_CMDQ_ABT (1u << 4)
#define GERROR_MSI_EVTQ_ABT (1u << 5)
#define GERROR_MSI_GERROR_ABT (1u << 7)
#define CONS_ERR_SHIFT	24
#define FETCH_MASK	(((1ull << 56) - 1) & ~7ull)	/* FetchAddr[55:3] */
#define CERROR_ILL	1u
#define CERROR_ABT	2u
#define CMD_SSEC_BIT	10		/* SSec, 4.1.6 */
#define Q_OVFLG		(1u << 31)
/* PROD writes remembered while their commands wait (see vis below). */
#define CMD_VIS_MARKS	64

/* A configuration cache entry: what an STE (and CD) decode to for one
 * StreamID and SubstreamID, ready for the walker. */
struct cfg_entry {
	bool valid;
	uint32_t sid, ssid;
	bool ssv;
	bool s1, s2;		/* stages that translate */
	bool ats_pass;		/* Translated traffic may pass (EATS 1, not bypass) */
	/* Record translation-related faults (F_TRANSLATION, F_ADDR_SIZE,
	 * F_ACCESS, F_PERMISSION) of stage 1 (CD.R) and of stage 2, the
	 * CD fetch and stage 1 table walk included (STE.S2R) (5.5). */
	bool rec_s1, rec_s2;
	uint16_t vmid, asid;
	bool ttb_ok[2];		/* TTB0, TTB1 walks enabled */
	struct smmu_stage_cfg s1c[2], s2c;
	uint64_t stamp;
};

struct iopt_smmuv3 {
	struct iopt_smmuv3_params p;
	/* Memory, irq callback, lock, clock, slots, TLB and walk cache
	 * (common/model_core.h, shared with the SMMUv2 model). */
	struct smmu_core core;

	uint32_t idr[6];
	uint32_t cr0, cr1, cr2, gbpa, irq_ctrl, gerror, gerrorn;
	/* *_IRQ_CFG0/1/2 (6.3.20-22, 6.3.30-32): MSI address, data, MemAttr. */
	struct { uint64_t addr; uint32_t data, attr; } msi[2];	/* by IRQ line */
	uint64_t strtab_base;
	uint32_t strtab_cfg;
	uint64_t cmdq_base, evtq_base;
	uint32_t cmdq_prod, cmdq_cons, evtq_prod, evtq_cons;

	uint64_t cmd_free;		/* engine free from this cycle */
	uint64_t fetch_pa;		/* last STE/CD fetch address (F_*_FETCH) */
	uint64_t cmd_visible;		/* cycle PROD last moved */
	/*
	 * When each waiting command became visible: a FIFO of PROD writes
	 * that moved PROD forward, oldest first. The commands up to vis[i].prod
	 * (not covered by an older mark) became visible at vis[i].cycle.
	 */
	struct { uint32_t prod; uint64_t cycle; } vis[CMD_VIS_MARKS];
	unsigned vis_head, vis_n;
	/*
	 * The command at CONS as the engine last fetched and checked it
	 * (v3_cmdq.c, next_cmd()), taken again while CONS, cmd_free and
	 * reg_gen are what they were: a command that waits for its cycle is
	 * then read from memory once, not at every look (3.21.2 lets the SMMU
	 * cache a command until it is consumed; software must not change it
	 * meanwhile). Any register write bumps reg_gen: a PROD that moves the
	 * visibility marks, a CONS or base write, CMDQEN, an acknowledged
	 * error all drop it.
	 */
	struct v3_cmd_step {
		uint64_t w[2];
		struct iopt_smmuv3_cmd cmd;
		uint32_t err;		/* 0, CERROR_ILL or CERROR_ABT */
		uint64_t done;		/* its completion cycle */
	} cstep;
	uint64_t cstep_free, reg_gen, cstep_gen;
	uint32_t cstep_cons;
	bool cstep_ok;

	struct cfg_entry *cfg;
	unsigned ncfg;
	uint32_t cfg_set_mask;		/* sets - 1 */
	uint64_t cfg_tick;
	bool cfg_pure;			/* the last v3_cfg_lookup hit changed nothing */

	struct iopt_smmuv3_stats st;
};

/* Bits [hi:lo] of v. */
static inline uint64_t v3_fld(uint64_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((hi - lo == 63) ? ~0ull : (1ull << (hi - lo + 1)) - 1);
}

/* A queue's effective base (6.3.26, 6.3.29): ADDR [51:5], aligned down to
 * the larger of the queue's size in bytes and 32. */
static inline uint64_t v3_q_base(uint64_t reg, uint64_t bytes)
{
	uint64_t align = bytes > 32 ? bytes : 32;

	return reg & ((1ull << 52) - 1) & ~(align - 1);
}

static inline unsigned v3_q_log2(uint64_t base, unsigned max)
{
	unsigned l = (unsigned)v3_fld(base, 4, 0);

	return l > max ? max : l;
}

/* Does the command queue stand still: disabled, or stopped by an error
 * (CMDQ_ERR active, 7.1)? Inline: the MMIO write path asks it twice. */
static inline bool v3_cmdq_stopped(const struct iopt_smmuv3 *s)
{
	return !(s->cr0 & CR0_CMDQEN) || ((s->gerror ^ s->gerrorn) & GERROR_CMDQ_ERR);
}

void v3_gerror_raise(struct iopt_smmuv3 *s, uint32_t bit, uint64_t cycle);
void v3_event(struct iopt_smmuv3 *s, unsigned type, const struct iopt_smmuv3_txn *t,
	      uint64_t w1, uint64_t w2, uint64_t w3, uint64_t cycle);

/* The configuration cache is set-associative: a StreamID/SubstreamID pair
 * lives in one set of cfg.ways entries, replaced least recently used. */
static inline struct cfg_entry *v3_cfg_set(struct iopt_smmuv3 *s, uint32_t sid,
					   uint32_t ssid)
{
	uint32_t h = (sid * 0x9e3779b1u) ^ (ssid * 0x85ebca6bu);

	/* sets is a power of two (checked at creation): a mask, no divide. */
	return &s->cfg[(size_t)((h >> 7) & s->cfg_set_mask) * s->p.cfg.ways];
}

/* The entry for (sid, ssv, ssid), or NULL. Inline: every locked
 * translation looks its configuration up here (v3_translate.c); the rest
 * of the cache is in v3_strtab.c. */
static inline struct cfg_entry *v3_cfg_lookup(struct iopt_smmuv3 *s, uint32_t sid,
					      bool ssv, uint32_t ssid)
{
	if (!s->ncfg)
		return NULL;
	struct cfg_entry *set = v3_cfg_set(s, sid, ssid);

	for (unsigned i = 0; i < s->p.cfg.ways; i++) {
		struct cfg_entry *e = &set[i];

		if (e->valid && e->sid == sid && e->ssv == ssv && e->ssid == ssid) {
			/* LRU: only the order of a set's stamps matters; the
			 * most recent entry of its set stays as it is (so that
			 * a hit on it changes nothing: common/hit_memo.h). */
			s->cfg_pure = true;
			if (e->stamp == s->cfg_tick)
				return e;	/* the newest stamp of all */
			for (unsigned k = 0; k < s->p.cfg.ways; k++)
				if (set[k].valid && set[k].stamp > e->stamp) {
					e->stamp = ++s->cfg_tick;
					s->cfg_pure = false;
					break;
				}
			return e;
		}
	}
	return NULL;
}

void v3_cfg_insert(struct iopt_smmuv3 *s, const struct cfg_entry *in);
void v3_cfg_invalidate(struct iopt_smmuv3 *s, bool all, uint32_t sid_lo,
		       uint32_t sid_hi, bool by_ssid, uint32_t ssid);
unsigned v3_build_cfg(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *t,
		      struct cfg_entry *c, int64_t *lat,
		      struct smmu_walk_res *w);

unsigned v3_walk_fault_event(enum smmu_fault f);

void v3_run_cmds(struct iopt_smmuv3 *s, uint64_t until);
void v3_cmd_publish(struct iopt_smmuv3 *s, uint32_t prod, uint64_t cycle);

void v3_regs_reset(struct iopt_smmuv3 *s);

#endif
