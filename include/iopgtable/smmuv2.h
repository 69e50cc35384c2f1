/* SPDX-License-Identifier: MIT */
/*
 * A register-level SMMUv2 model (MMU-400/MMU-500 class): the global
 * register space (ID registers, sCR0, global faults, global TLB
 * maintenance and sync), stream matching (SMRn/S2CRn), context banks
 * (CBARn, CBA2Rn and each bank's page: SCTLR, TCR, TTBRn, MAIRn, fault
 * syndrome, TLB maintenance, TLBSYNC/TLBSTATUS, ATS1*), translation
 * through the table walker and TLB shared with the SMMUv3 model.
 *
 * A sibling of the SMMUv3 model in <iopgtable/smmuv3.h>; what both use
 * unchanged, the memory interface (struct iopt_smmu_mem, iopt_smmu_physmem())
 * and cache geometry (struct iopt_smmu_cache_params), is in
 * <iopgtable/smmu_common.h>. It has its own header because almost nothing else
 * is common: SMMUv2 is programmed through registers only (no stream table, no
 * queues), its faults are syndrome registers and interrupts, not event records.
 *
 * The SMMUv2 architecture document (IHI0062) is not among the sources this
 * model was written from; register offsets and field positions come from
 * the facts collected in the project's reference notes (the Linux and
 * OpenBSD drivers' headers, the MMU-500 TRM). docs/smmuv2_model.md lists
 * the register map implemented and every behaviour chosen where those
 * sources are silent.
 *
 * Time follows the SMMUv3 model's rules exactly (it is the same code):
 * every entry point takes the current cycle; a cycle earlier than the
 * model's time gives -EINVAL and changes nothing, unless
 * params.shared_clock is set or a runner is attached, when it is taken as
 * the model's time. TLB invalidations and syncs complete at cycles the
 * timing parameters decide; iopt_smmuv2_next_event() says when the next
 * one is due and iopt_smmuv2_run_until() performs it. The same calls at
 * the same cycles always give the same results.
 *
 * Thread safety: every entry point takes the model's lock; callbacks run
 * with it held and must not call the model.
 */
#ifndef IOPGTABLE_SMMUV2_H
#define IOPGTABLE_SMMUV2_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/smmu_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What a sync written while another sync is active on the same register
 * does. The architecture says only that the status register reports the
 * invalidations issued before the most recent sync; both modes honour
 * that, and differ where it is silent (docs/smmuv2_model.md):
 *  RESTART: the active sync restarts: it completes sync_cycles after the
 *    newest write, and after every maintenance operation issued before
 *    that write. Many CPUs syncing in turn keep SACTIVE at 1, the
 *    behaviour behind the published "TLB sync timed out" reports.
 *  JOIN: the new write joins the active sync if no maintenance was
 *    issued since it started; otherwise completion moves only as far as
 *    that maintenance requires.
 */
enum iopt_smmuv2_sync_mode { IOPT_SMMUV2_SYNC_RESTART, IOPT_SMMUV2_SYNC_JOIN };

struct iopt_smmuv2_params {
	/* Features, as ID0-ID2 advertise them. */
	unsigned num_smrg;		/* ID0.NUMSMRG: SMR/S2CR pairs, 1..128 */
	unsigned num_cb;		/* ID1.NUMCB: context banks, 1..128 */
	unsigned num_s2cb;		/* ID1.NUMS2CB: banks 0..n-1 are stage 2
					 * capable only (0..num_cb) */
	unsigned numsidb;		/* ID0.NUMSIDB: StreamID bits, 1..15 */
	bool s1, s2;			/* ID0.S1TS, S2TS; both: ID0.NTS */
	bool aarch64;			/* AArch64 (VA64) context banks */
	bool aarch32l, aarch32s;	/* AArch32 LPAE, short descriptor (v7s) */
	bool gran4k, gran16k, gran64k;	/* ID2.PTFS_4K/16K/64K */
	unsigned ias, oas, ubs;		/* ID2: bits (32, 36, 40, 42, 44, 48) */
	bool pagesize_64k;		/* ID1.PAGESIZE: register pages of 64K */
	unsigned numpagendxb;		/* ID1.NUMPAGENDXB: 2^(n+1) global pages */
	/* Caches (the walk cache holds table descriptors). */
	struct iopt_smmu_cache_params tlb, walk;
	uint64_t seed;			/* random replacement */
	/* Timing, in cycles. */
	unsigned translation_slots, walk_slots;
	unsigned tlbi_cycles;		/* one TLB invalidation */
	unsigned sync_cycles;		/* a sync, after what it waits for */
	unsigned ats_cycles;		/* an ATS1* operation, plus its walk */
	enum iopt_smmuv2_sync_mode sync_mode;
	/* A sync does not complete while a context fault is stalled
	 * (MMU-500: "the sync just doesn't proceed until the fault is
	 * cleared"). */
	bool sync_blocked_by_stall;
	/* Callers share one clock across threads: a cycle behind the
	 * model's time is taken as the model's time instead of -EINVAL. */
	bool shared_clock;
};

/*
 * Fill *p from a preset: "mmu-500" (the Arm MMU-500 TRM's figures where
 * it gives them, restart-on-write syncs, syncs blocked by stalled faults)
 * or "generic" (a small SMMUv2 with joining syncs). 0, or -EINVAL for an
 * unknown name or NULL argument (*p unchanged).
 */
IOPT_API int iopt_smmuv2_preset(const char *name, struct iopt_smmuv2_params *p);

/* Interrupt lines for the irq callback: the global fault interrupt and one
 * context interrupt per bank (CBARn.IRPTNDX is not used to share lines). */
#define IOPT_SMMUV2_IRQ_GLOBAL		0u
#define IOPT_SMMUV2_IRQ_CONTEXT(n)	(1u + (unsigned)(n))

struct iopt_smmuv2;

/*
 * irq (may be NULL) is called with the model's lock held, at the cycle
 * the fault is recorded, and must not call the model. 0; -EINVAL: bad
 * parameters (nothing allocated); -ENOMEM (nothing leaked); or the host
 * mutex's own negative errno.
 */
IOPT_API int iopt_smmuv2_create(const struct iopt_smmuv2_params *p,
				const struct iopt_smmu_mem *mem,
				void (*irq)(void *ctx, unsigned line, uint64_t cycle),
				void *irq_ctx, struct iopt_smmuv2 **out);
IOPT_API void iopt_smmuv2_destroy(struct iopt_smmuv2 *s);

/* Size of the register space: 2 * 2^(NUMPAGENDXB + 1) pages. */
IOPT_API uint64_t iopt_smmuv2_mmio_size(const struct iopt_smmuv2 *s);

/*
 * Register access at offset, 4 or 8 bytes (8 only for the 64-bit
 * registers; their halves are accessible as 4 bytes each), at cycle.
 * Unimplemented offsets read as zero and ignore writes.
 * -EINVAL: bad size, alignment or offset beyond the register space, or a
 * cycle before the model's time (nothing read or changed).
 */
IOPT_API int iopt_smmuv2_mmio_read(struct iopt_smmuv2 *s, uint64_t offset,
				   unsigned size, uint64_t *val, uint64_t cycle);
IOPT_API int iopt_smmuv2_mmio_write(struct iopt_smmuv2 *s, uint64_t offset,
				    unsigned size, uint64_t val, uint64_t cycle);

struct iopt_smmuv2_txn {
	uint32_t sid;			/* StreamID */
	uint64_t addr;
	bool write, exec, priv;
};

/* Outcome of a transaction. */
enum iopt_smmuv2_result {
	IOPT_SMMUV2_OK,			/* translated or bypassed: oa */
	IOPT_SMMUV2_ABORT,		/* terminated (a fault, or RESUME.TERMINATE) */
	IOPT_SMMUV2_STALLED,		/* held: see iopt_smmuv2_stalled() */
};

struct iopt_smmuv2_resp {
	enum iopt_smmuv2_result result;
	uint64_t oa;
	unsigned attr;			/* stage 1 memory type as a MAIR
					 * attribute byte (short-descriptor
					 * banks: converted from TEX/C/B or
					 * PRRR/NMRR), if any */
	unsigned cb;			/* the context bank, or ~0u (none) */
	uint64_t ready;			/* cycle the response is ready
					 * (UINT64_MAX while stalled) */
	unsigned sh;			/* Shareability of the output, as
					 * PAR.SH: 0 Non-, 2 Outer, 3 Inner
					 * Shareable (0 when untranslated) */
};

/* 0 (the outcome in *resp, faults included); -EINVAL: a cycle before the
 * model's time or a NULL argument (nothing changed). */
IOPT_API int iopt_smmuv2_translate(struct iopt_smmuv2 *s,
				   const struct iopt_smmuv2_txn *txn,
				   uint64_t cycle, struct iopt_smmuv2_resp *resp);

/*
 * The stalled transaction of bank cb once software has written RESUME:
 * 0 with its final outcome (retried: translated again at the RESUME
 * write's cycle; terminated: IOPT_SMMUV2_ABORT), the ready cycle set;
 * -EAGAIN while it is still stalled; -ENOENT: no stalled transaction of
 * that bank has completed since the last call; -EINVAL: bad bank.
 */
IOPT_API int iopt_smmuv2_stalled(struct iopt_smmuv2 *s, unsigned cb,
				 struct iopt_smmuv2_resp *resp);

/* Cycle of the next internal event, or UINT64_MAX if none is pending. */
IOPT_API uint64_t iopt_smmuv2_next_event(struct iopt_smmuv2 *s);
/* Perform every internal event due at or before cycle. 0; -EINVAL: a
 * cycle before the model's time (nothing changed). */
IOPT_API int iopt_smmuv2_run_until(struct iopt_smmuv2 *s, uint64_t cycle);

/*
 * Free-running adapter, as iopt_smmuv3_runner_start() for SMMUv3: a thread runs
 * the model at cycle = (host ns since start) * cycles_per_ns. 0; -EINVAL;
 * -ENOMEM; or the thread library's negative errno. Nothing is left attached on
 * failure.
 */
struct iopt_smmuv2_runner;
IOPT_API int iopt_smmuv2_runner_start(struct iopt_smmuv2 *s, double cycles_per_ns,
				      struct iopt_smmuv2_runner **out);
IOPT_API uint64_t iopt_smmuv2_runner_now(const struct iopt_smmuv2_runner *r);
IOPT_API void iopt_smmuv2_runner_stop(struct iopt_smmuv2_runner *r);

struct iopt_smmuv2_stats {
	uint64_t translations, faults, global_faults, stalls;
	uint64_t tlb_hits, tlb_misses, walks, fetches;
	uint64_t walk_cache_hits, walk_cache_misses;
	uint64_t tlbis, syncs, sync_restarts, ats_ops;
	uint64_t lat_sum, lat_max;	/* translation latency, cycles */
	uint64_t sync_polls;		/* TLBSTATUS / sTLBGSTATUS reads */
	uint64_t sync_polls_active;	/* of those, SACTIVE / GSACTIVE 1 */
};

IOPT_API void iopt_smmuv2_get_stats(struct iopt_smmuv2 *s,
				    struct iopt_smmuv2_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SMMUV2_H */
