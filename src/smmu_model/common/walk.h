/* SPDX-License-Identifier: MIT */
/*
 * The SMMU's translation table walker (IHI0070 3.4, 3.13; Arm ARM D8),
 * a component shared by the SMMUv3 and SMMUv2 models: a function
 * of (stage configuration, memory, input address, access) that returns an
 * output address with its permissions and attributes, or a fault record.
 *
 * Descriptors are read with single-copy-atomic 64-bit loads inside an RCU
 * read-side section (the page tables change under the walker, and free
 * unlinked tables only after a grace period). Hardware access-flag and
 * dirty-state updates are compare-and-swaps on the descriptor.
 */
#ifndef IOPT_SMMU_WALK_H
#define IOPT_SMMU_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv3.h>

/*
 * Walk caches (optional): table addresses the walker may start from. An
 * entry maps (stage, level, the input address above the level's index
 * bits) to the table for that level and the hierarchical attributes the
 * walk gathered above it (stage 1: APTable, UXNTable, PXNTable); tags
 * beyond stage (VMID, ASID) are the cache owner's context.
 */
struct smmu_walk_cache {
	bool (*lookup)(void *ctx, unsigned stage, unsigned level, uint64_t ia,
		       unsigned shift, uint64_t *table, uint64_t *hier);
	void (*insert)(void *ctx, unsigned stage, unsigned level, uint64_t ia,
		       unsigned shift, unsigned g, uint64_t table, uint64_t hier);
	void *ctx;
};

/* Memory as the walker sees it: physical addresses. */
struct smmu_mem {
	/* Single-copy-atomic read: 0, or -EFAULT (external abort). */
	int (*load64)(void *ctx, uint64_t pa, uint64_t *val);
	/* Compare-and-swap: 0, -EAGAIN (*old updated), or -EFAULT. */
	int (*cas64)(void *ctx, uint64_t pa, uint64_t *old, uint64_t val);
	void *ctx;
	const struct smmu_walk_cache *wc;	/* NULL: none */
};

/* One stage's decoded configuration (from a CD or an STE). */
struct smmu_stage_cfg {
	unsigned stage;		/* 1 or 2 */
	unsigned g;		/* granule lg2: 12, 14, 16 */
	unsigned ias;		/* input address bits */
	unsigned start;		/* start level */
	unsigned oas;		/* effective output address bits */
	bool pa52;		/* the SMMU implements 52-bit PAs (IDR5.OAS):
				 * with the 64K granule, descriptor bits
				 * [15:12] are OA[51:48] and level 1 blocks
				 * exist, whatever the stage's own PS */
	uint64_t ttb;		/* start table address */
	bool upper;		/* stage 1: the TTB1 (upper) region */
	bool affd, ha, hd;
	bool wxn, pan;		/* stage 1: writable implies XN; PAN (D8.4) */
	bool tbi;		/* stage 1: top byte ignored (address tagging) */
	bool ptw;		/* stage 2: protected table walk (S2PTW) */
	uint64_t mair;		/* stage 1; v7s: NMRR << 32 | PRRR */
	/* AArch32 regime: input addresses are 32 bits, and the upper
	 * (TTBR1) region is the top 2^ias bytes of the 4 GiB space (Arm ARM
	 * G5.5, TTBR0/TTBR1 selection by TTBCR.T0SZ/T1SZ or N). */
	bool va32;
	/* Stage 1 in the short-descriptor format (v7s, Arm ARM G5.4;
	 * ARMv7-A B3.5): ttb is the TTBRn table, ias 32 - TTBCR.N (TTBR0) or
	 * 32 (TTBR1); g 12, start 1. afe: SCTLR.AFE (AP[0] is the access
	 * flag and AP[2:1] the permissions, G5.6.1.1), else AP[2:0] are the
	 * permissions (G5.6.1.2, no access flag). tre: SCTLR.TRE, TEX remap
	 * through PRRR/NMRR (mair) (G5.7.3), else TEX[2:0]/C/B give the
	 * attributes directly (G5.7.2). The walk reports the leaf as the
	 * equivalent long descriptor (AF, AP[2:1], XN/PXN, SH, nG at their
	 * LPAE positions) so that TLB checks are format-independent, and
	 * attr as a MAIR attribute byte. No walk cache. */
	bool v7s, afe, tre;
	/* The input region of ias, upper, va32 and tbi as a mask and a
	 * value: va is in it when (va & region_mask) == region_val
	 * (smmu_in_region). Derived by smmu_cfg_set_region(), which
	 * whoever sets those four fields calls last. */
	uint64_t region_mask, region_val;
};

/* Access kinds. */
#define SMMU_ACC_WRITE	(1u << 0)
#define SMMU_ACC_EXEC	(1u << 1)
#define SMMU_ACC_PRIV	(1u << 2)

enum smmu_fault {
	SMMU_OK,
	SMMU_F_TRANSLATION,
	SMMU_F_ADDR_SIZE,
	SMMU_F_ACCESS,
	SMMU_F_PERMISSION,
	SMMU_F_WALK_EABT,
};

struct smmu_walk_res {
	enum smmu_fault fault;
	unsigned fault_stage;	/* 1 or 2 */
	unsigned level;		/* of the leaf, or of the fault */
	uint64_t ipa;		/* stage 2 faults: the IPA being translated */
	bool s2_on_walk;	/* stage 2 fault on a stage 1 table access */
	bool tt_write;		/* ... on its update (HTTU), not its read:
				 * the event's TTRnW = 0 (7.3.16) */
	uint64_t oa;
	unsigned size_lg2;	/* leaf size; a contiguous run's when hinted */
	unsigned attr;		/* stage 1: MAIR byte; stage 2: MemAttr */
	uint64_t desc;		/* the leaf descriptor (stage 1 when nested) */
	uint64_t desc2;		/* nested: the stage 2 leaf of the output */
	unsigned fetches;	/* descriptors read, all stages */
	unsigned probes;	/* walk cache lookups, all stages */
	uint64_t fetch_pa;	/* F_WALK_EABT: the descriptor's address */
};

/* What the SMMU implements, as its ID registers advertise it: the rules
 * that make a CD or STE ILLEGAL depend on these (IHI0070 5.2.2, 5.4.2). */
struct smmu_caps {
	unsigned oas;		/* SMMU_IDR5.OAS, in bits; also the IAS (no
				 * VMSAv8-32 LPAE: IDR0.TTF = 0b10, 3.4) */
	unsigned httu;		/* SMMU_IDR0.HTTU: 0 none, 1 AF, 2 AF + dirty */
	unsigned grans;		/* SMMU_IDR5.GRAN*: bit lg2 set per granule */
};

/* Decode one translation table of a CD (upper: the TTB1 one) or the stage
 * 2 fields of an STE. -EINVAL: ILLEGAL for an SMMU with caps (C_BAD_CD /
 * C_BAD_STE). */
int smmu_cfg_from_cd(const struct iopt_smmuv3_cd *cd, bool upper,
		     const struct smmu_caps *caps, struct smmu_stage_cfg *c);
int smmu_cfg_from_ste_s2(const struct iopt_smmuv3_ste *ste,
			 const struct smmu_caps *caps, struct smmu_stage_cfg *c);
/* Derive c's region_mask and region_val from its ias, upper, va32 and
 * tbi (the two decoders above call it; a regime they do not build calls
 * it after setting those fields). */
void smmu_cfg_set_region(struct smmu_stage_cfg *c);

/* Descriptor bits the walker and the TLB-hit checks read (Arm ARM D8.3). */
#define D_VALID		1ull
#define D_AP_UNPRIV	(1ull << 6)	/* stage 1 AP[1]; stage 2 S2AP read */
#define D_AP_RDONLY	(1ull << 7)	/* stage 1 AP[2]; stage 2: S2AP write */
#define D_AF		(1ull << 10)
#define D_DBM		(1ull << 51)
#define D_CONT		(1ull << 52)
#define D_PXN		(1ull << 53)
#define D_UXN		(1ull << 54)	/* stage 2: XN */
/* Stage 1 table descriptor hierarchical attributes (Arm ARM D8.4.2);
 * they apply as IDR3.HAD = 0 (no CD.HADx). */
#define T_PXNTABLE	(1ull << 59)
#define T_UXNTABLE	(1ull << 60)
#define T_APTABLE0	(1ull << 61)	/* no EL0 access below */
#define T_APTABLE1	(1ull << 62)	/* no write access below */
#define T_HIER		(T_PXNTABLE | T_UXNTABLE | T_APTABLE0 | T_APTABLE1)

/* A stage 1 leaf as the table attributes above it restrict it: APTable[0]
 * removes EL0 access, APTable[1] write access (which DBM then cannot
 * give back, IHI0070 3.13.3.1), XNTable/PXNTable execution. */
static inline uint64_t smmu_apply_hier(uint64_t d, uint64_t hier)
{
	if (hier & T_APTABLE0)
		d &= ~D_AP_UNPRIV;
	if (hier & T_APTABLE1)
		d = (d | D_AP_RDONLY) & ~D_DBM;
	if (hier & T_UXNTABLE)
		d |= D_UXN;
	if (hier & T_PXNTABLE)
		d |= D_PXN;
	return d;
}

/* An address with its top byte replaced by copies of bit 55 (TBI). */
static inline uint64_t smmu_untag(uint64_t va)
{
	return (va & ((1ull << 56) - 1)) | ((va >> 55 & 1) ? 0xffull << 56 : 0);
}

/* Does va belong to the region of c (TTB0: below 2^ias; TTB1: the top
 * 2^ias bytes of the 64-bit, or with va32 the 32-bit, space; under TBI
 * of the address untagged)? One mask and compare, worked out once per
 * configuration by smmu_cfg_set_region(): every walk and every
 * translation of a stage 1 checks it. */
static inline bool smmu_in_region(const struct smmu_stage_cfg *c, uint64_t va)
{
	return (va & c->region_mask) == c->region_val;
}

/*
 * Stage 1 access permissions other than write (D8.4): AP[1] for
 * unprivileged access; PAN denies privileged data access to what EL0 may
 * access; execute needs PXN/UXN clear, for privileged execute a page EL0
 * cannot write, and with WXN a read-only page (writable-clean DBM pages
 * count as read-only until written).
 */
static inline bool smmu_stage1_allows(const struct smmu_stage_cfg *c, uint64_t d,
				      unsigned acc)
{
	const bool exec = acc & SMMU_ACC_EXEC, priv = acc & SMMU_ACC_PRIV;

	if (!priv && !(d & D_AP_UNPRIV))
		return false;
	if (priv && !exec && c->pan && (d & D_AP_UNPRIV))
		return false;
	if (exec && (d & (priv ? D_PXN : D_UXN)))
		return false;
	/* A page EL0 may write is privileged execute-never (Arm ARM D8.4;
	 * IHI0070 5.4 UWXN: "all EL0-writable regions are treated as being
	 * PXN"). */
	if (exec && priv && (d & D_AP_UNPRIV) && !(d & D_AP_RDONLY))
		return false;
	return !(exec && c->wxn && !(d & D_AP_RDONLY));
}

/* Would a cached leaf descriptor of this stage allow acc (no HTTU)? */
static inline bool smmu_leaf_allows(const struct smmu_stage_cfg *c, uint64_t d,
				    unsigned acc)
{
	const bool write = acc & SMMU_ACC_WRITE, exec = acc & SMMU_ACC_EXEC;

	if (!(d & D_AF))
		return false;
	if (c->stage == 1)
		return smmu_stage1_allows(c, d, acc) && (!write || !(d & D_AP_RDONLY));
	if (exec)
		return !(d & D_UXN);
	return write ? (d & D_AP_RDONLY) : (d & D_AP_UNPRIV);
}

/*
 * Translate ia through one stage, or through stage 1 then stage 2 when s2
 * is given (nested: stage 1 table addresses are IPAs too).
 */
void smmu_walk(const struct smmu_stage_cfg *c, const struct smmu_stage_cfg *s2,
	       const struct smmu_mem *m, uint64_t ia, unsigned acc,
	       struct smmu_walk_res *r);

#endif
