/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 driver: what a kernel arm-smmu driver does to an SMMUv2, done to
 * the SMMUv2 model (iopgtable/smmuv2.h) through its registers only.
 * - Probe: read ID0/ID1, reset in the Linux driver's order (clear sGFSR,
 *   every S2CR then SMR, every bank disabled with its FSR cleared,
 *   TLBIALLH + TLBIALLNSNH, sTLBGSYNC, then sCR0).
 * - Domains: one context bank each (stage 1: ASID = bank index; stage 2: VMID =
 *   bank index + 1), programmed at the first attach from the page table's
 *   registers (iopt_pgtable_get_info: CBAR, CBA2R, TCR2, TTBR0, TCR, MAIR0/1,
 *   then SCTLR.M; a v7s table: CBA2R.VA64 = 0, TTBCR with EAE = 0, CONTEXTIDR =
 *   ASID, MAIR0/1 = PRRR/NMRR); each attached stream group gets an SMR (ID and
 *   MASK) and an S2CR pointing at the bank; an SMR that would overlap another
 *   is refused (-EBUSY).
 * - TLB maintenance behind struct iopt_pgtable_tlb_ops; TLBSYNC polled with the
 *   Linux driver's loop (10 polls, then delays of 1, 2, 4 ... us, about 1 s of
 *   model time) or its loop to 4.12 (one poll per 1 us delay, 1,000,000
 *   polls); the loop and the sync serialisation are selectable.
 * - iova_to_phys through ATS1PR/PAR under the bank's lock.
 * A header of its own, not a section of smmuv3_drv.h: the two drivers share no
 * type in their API (v2 has no queues, stream table or events; v3 no context
 * banks), as smmuv2.h is a sibling of smmuv3.h. What they share is inside: the
 * timeline toward the model (src/driver/drv_timeline.h). Time: as the SMMUv3
 * driver — with cfg.clock (thread-safe, never going back) no driver lock around
 * model calls (the model's lock orders them; more than one thread needs a model
 * that takes late cycles: params.shared_clock or a runner); without it a
 * virtual clock that moves cfg.mmio_cycles per access and by every delay of the
 * poll loop (and runs the model up to it), every model call under one driver
 * lock. Other code calls the model through iopt_smmuv2_drv_translate() while
 * the driver is live. docs/driver.md, section "SMMUv2 driver".
 */
#ifndef IOPGTABLE_SMMUV2_DRV_H
#define IOPGTABLE_SMMUV2_DRV_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/pgtable.h>
#include <iopgtable/smmuv2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Who may write a context bank's TLBSYNC and poll TLBSTATUS at once. */
enum iopt_smmuv2_drv_sync {
	IOPT_SMMUV2_DRV_SYNC_NONE,	/* every CPU syncs concurrently */
	IOPT_SMMUV2_DRV_SYNC_BANK,	/* one lock per context bank (Linux) */
	IOPT_SMMUV2_DRV_SYNC_GLOBAL,	/* one lock for every bank */
};

/*
 * How a sync's completion is polled (cfg.sync_poll). Both write the sync
 * register, then read the status register until SACTIVE/GSACTIVE reads 0,
 * and give up with "TLB sync timed out" (-ETIMEDOUT). Delays are in model
 * time (cfg.cycles_per_sec), through the driver's clock.
 *  BACKOFF (Linux 4.13 on): for delay = 1, 2, 4 ... us while below
 *    1,000,000: a burst of up to 10 reads (a relax between), then wait
 *    delay us (at most cfg.sync_delay_cap_us when set). After the 20th
 *    burst and its wait, "TLB sync timed out" with no further read, as
 *    Linux: a timeout is SACTIVE read 1 at all 200 reads of the 20
 *    bursts. Against a sync that never completes: 200 reads and
 *    1,048,575 us of delays.
 *  UDELAY1 (Linux to 4.12): read, relax, count; after the 1,000,000th
 *    read report, else wait 1 us and read again. Against a sync that
 *    never completes: 1,000,000 reads and 999,999 us of delays.
 * cfg.sync_timeout_cycles ends either earlier (a time, not a count:
 * then the status is read once more before the report).
 */
enum iopt_smmuv2_drv_sync_poll {
	IOPT_SMMUV2_DRV_POLL_BACKOFF,
	IOPT_SMMUV2_DRV_POLL_UDELAY1,
};

struct iopt_smmuv2_drv_cfg {
	struct iopt_smmuv2 *smmu;		/* the model (required) */
	enum iopt_smmuv2_drv_sync sync;
	bool stall;				/* SCTLR.CFCFG = 1: faults stall */
	/* Cycle source: NULL selects the virtual clock. Must never go back
	 * and be safe to call from any thread at once (no driver lock). */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	unsigned mmio_cycles;			/* virtual clock: per access (0: 10) */
	uint64_t start_cycle;			/* virtual clock: first cycle */
	uint64_t cycles_per_sec;		/* model clock rate (0: 1e9) */
	/* Sync timeout; 0: the reference loop's own bound (delays doubling
	 * from 1 us while below 1 s: about 1.05 s of model time). */
	uint64_t sync_timeout_cycles;
	uint64_t host_timeout_ns;		/* host bound on a wait (0: 10 s) */
	/* The sync locks' and the bank lock's kind (enum iopt_lock_kind);
	 * 0: test-and-test-and-set. Linux's are spinlocks: ticket locks on
	 * arm64 to 4.18, queued (IOPT_LOCK_MCS) from 4.19 (docs/driver.md,
	 * "Locks"; added with the selectable locks). */
	unsigned lock_kind;
	enum iopt_smmuv2_drv_sync_poll sync_poll;	/* 0: BACKOFF */
	/* BACKOFF: the longest wait between two bursts, us; 0: none (Linux,
	 * up to 524,288 us). A cap keeps the loop's 20 bursts of 10 reads,
	 * and so what a timeout needs, while shortening the gaps between
	 * them: all 20 fit in a short simulation (with 64: 1,023 us, about
	 * 1/1000 of Linux's 1.05 s). Any value is valid. */
	uint64_t sync_delay_cap_us;
	/* Count stats.nested_syncs (sync NONE only): a word per CPU read and
	 * written around every sync, which moves a simulation's timing, so
	 * off by default. */
	bool count_nested;
};

/* BACKOFF's bursts: delay 1, 2, 4 ... 524,288 us, one wait after each. */
#define IOPT_SMMUV2_DRV_SYNC_WAITS	20

struct iopt_smmuv2_drv_stats {
	uint64_t tlbis;			/* TLBI register writes */
	uint64_t flush_alls;		/* TLBIASID / TLBIVMID */
	uint64_t syncs;			/* TLBSYNC / sTLBGSYNC writes */
	uint64_t sync_timeouts;		/* "TLB sync timed out" (-ETIMEDOUT) */
	uint64_t stalled_timeouts;	/* of those, with the bank's FSR.SS set */
	uint64_t ats_ops;		/* ATS1PR translations */
	/* BACKOFF: sync_waits[k], syncs whose first k + 1 bursts all read
	 * the status active (10 reads each) and so took the (k + 1)th wait;
	 * a sync ends after its first burst unless counted in [0]. With no
	 * cfg.sync_timeout_cycles, sync_waits[19] are the timeouts. */
	uint64_t sync_waits[IOPT_SMMUV2_DRV_SYNC_WAITS];
	/* With cfg.count_nested: syncs begun on a CPU while a sync of that
	 * CPU was still polling: an interrupt's handler syncing inside the
	 * poll it interrupted (or a thread preempted mid-poll; needs sync
	 * NONE, whose poll runs with interrupts on). On the host, where
	 * threads share CPU ids, only a hint. */
	uint64_t nested_syncs;
};

struct iopt_smmuv2_drv;
struct iopt_smmuv2_drv_domain;

IOPT_API void iopt_smmuv2_drv_default_cfg(struct iopt_smmuv2_drv_cfg *cfg);

/*
 * Probe and reset (the order above). 0 and *out, or -EINVAL (NULL cfg,
 * model or out, sync, sync_poll or lock_kind out of range), -ENODEV (neither stage, or no
 * AArch64 banks), -ENOMEM, -ETIMEDOUT (the reset's global sync). Nothing
 * allocated on failure. Not thread-safe against other calls on the model.
 */
IOPT_API int iopt_smmuv2_drv_probe(const struct iopt_smmuv2_drv_cfg *cfg,
				   struct iopt_smmuv2_drv **out);
/* Set sCR0.CLIENTPD and free. Every domain must be freed. NULL: no-op. */
IOPT_API void iopt_smmuv2_drv_remove(struct iopt_smmuv2_drv *drv);
IOPT_API void iopt_smmuv2_drv_get_stats(const struct iopt_smmuv2_drv *drv,
					struct iopt_smmuv2_drv_stats *st);

/*
 * A domain of stage 1 or 2 with a free context bank. 0, -EINVAL (bad
 * stage, or the SMMU lacks it), -ENOSPC (no free bank), -ENOMEM. Any
 * thread.
 */
IOPT_API int iopt_smmuv2_drv_domain_alloc(struct iopt_smmuv2_drv *drv,
					  unsigned stage,
					  struct iopt_smmuv2_drv_domain **out);
/*
 * A stage 1 domain nested over the stage 2 domain s2: its bank is CBAR
 * TYPE 3 (stage 1, then the stage 2 of s2's bank), so a transaction's VA
 * goes through the stage 1 table to an IPA and through s2's table to a
 * PA — and so do the stage 1 table's own descriptor fetches: its table
 * memory must be mapped (IPA) in s2. Tables: AArch64 LPAE stage 1. TLB
 * entries carry s2's VMID. s2 must have its table (attach or
 * iopt_smmuv2_drv_bind()); while nested domains exist it cannot be freed
 * (-EBUSY), and its invalidations end with TLBIVMID + sTLBGSYNC (by-IPA
 * operations need not reach combined entries). 0, -EINVAL (NULL, s2 not
 * a stage 2 domain with a table, no stage 1), -ENOSPC, -ENOMEM. Any
 * thread.
 */
IOPT_API int iopt_smmuv2_drv_domain_alloc_nested(struct iopt_smmuv2_drv_domain *s2,
						 struct iopt_smmuv2_drv_domain **out);

/*
 * Program the domain's bank from pt without routing a stream (a stage 2
 * that nested domains use, say). The checks of attach; 0 if pt is bound
 * already, -EINVAL for another table. Any thread.
 */
IOPT_API int iopt_smmuv2_drv_bind(struct iopt_smmuv2_drv_domain *dom,
				  struct iopt_pgtable *pt);

/*
 * Disable the bank (SCTLR = 0), invalidate it (TLBIASID / TLBIVMID and
 * sync), free it. -EBUSY (nothing freed) while streams are attached
 * or nested domains use it;
 * -ETIMEDOUT (the sync; freed anyway). NULL: 0.
 */
IOPT_API int iopt_smmuv2_drv_domain_free(struct iopt_smmuv2_drv_domain *dom);
IOPT_API unsigned iopt_smmuv2_drv_domain_cb(const struct iopt_smmuv2_drv_domain *dom);

/*
 * Route the StreamIDs s with ((s ^ id) & ~mask) == 0 to the domain's
 * bank (SMR ID = id, MASK = mask: a set mask bit ignores that StreamID
 * bit). The first attach binds pt and programs the bank; then a free SMR
 * and its S2CR (translate, CBNDX), S2CR written first. Returns 0, or
 *   -EINVAL  NULL; id or mask wider than ID0.NUMSIDB; id & mask != 0
 *            (only the canonical form is taken); another pt than the
 *            one bound; a table the bank cannot use (stage 1:
 *            AArch64 LPAE, AArch32 LPAE where ID0 allows it, v7s
 *            where ID0 allows AArch32-S; stage 2: AArch64 LPAE S2);
 *   -EBUSY   the entry would match a StreamID that another valid SMR
 *            (of any domain) matches — a stream match conflict;
 *   -ENOSPC  no free SMR.
 * Nothing changes on an error. Any thread (the SMR table is under one
 * mutex).
 */
IOPT_API int iopt_smmuv2_drv_attach_masked(struct iopt_smmuv2_drv_domain *dom,
					   struct iopt_pgtable *pt, uint32_t id,
					   uint32_t mask);
/* iopt_smmuv2_drv_attach_masked(dom, pt, sid, 0): one StreamID. */
IOPT_API int iopt_smmuv2_drv_attach(struct iopt_smmuv2_drv_domain *dom,
				    struct iopt_pgtable *pt, uint32_t sid);
/* The domain's SMR with exactly this id and mask invalid, then its S2CR
 * back to fault. 0 or -EINVAL (no such entry of this domain). */
IOPT_API int iopt_smmuv2_drv_detach_masked(struct iopt_smmuv2_drv_domain *dom,
					   uint32_t id, uint32_t mask);
/* iopt_smmuv2_drv_detach_masked(dom, sid, 0). */
IOPT_API int iopt_smmuv2_drv_detach(struct iopt_smmuv2_drv_domain *dom,
				    uint32_t sid);

/*
 * TLB ops for tables created with cfg.tlb = these and cfg.tlb_cookie =
 * the domain. Stage 1: add_page TLBIVAL (no sync); flush_walk TLBIVA per
 * granule step of the range + TLBSYNC; flush_all TLBIASID (a v7s
 * bank: TLBIALL, its leaves being global) + TLBSYNC;
 * sync TLBSYNC. Stage 2: TLBIIPAS2L / TLBIIPAS2 + TLBSYNC; flush_all
 * TLBIVMID + sTLBGSYNC. granule is the step when it is a page size of the
 * table, else the table's granule. Before the first attach they do
 * nothing. A timed-out sync is counted (stats.sync_timeouts).
 */
IOPT_API const struct iopt_pgtable_tlb_ops *iopt_smmuv2_drv_tlb_ops(void);

/*
 * Invalidate [iova, iova + size) of the domain without a sync (leaf:
 * TLBIVAL / TLBIIPAS2L, else TLBIVA / TLBIIPAS2; step as for flush_walk).
 * Above 512 steps: TLBIASID (completed by the next sync) or, at stage 2,
 * TLBIVMID + sTLBGSYNC here. For callers that gathered an unmap. 0,
 * -EINVAL (NULL, size 0, wrap), -ETIMEDOUT (stage 2 global sync). Before
 * the domain's first attach no TLB can hold its translations: this and
 * flush_all succeed and do nothing, as the SMMUv3 driver's do.
 */
IOPT_API int iopt_smmuv2_drv_inv_range(struct iopt_smmuv2_drv_domain *dom,
				       uint64_t iova, uint64_t size,
				       uint64_t granule, bool leaf);
/* flush_all with its result: 0 (also before the first attach, doing
 * nothing), -EINVAL (NULL), -ETIMEDOUT. */
IOPT_API int iopt_smmuv2_drv_flush_all(struct iopt_smmuv2_drv_domain *dom);

/*
 * Write the bank's TLBSYNC and poll TLBSTATUS.SACTIVE (serialised as
 * cfg.sync says): 0, or -ETIMEDOUT ("TLB sync timed out": SACTIVE still
 * read 1 after the limit; counted, and counted in stalled_timeouts when
 * the bank's FSR.SS was set — a stalled fault blocks the sync until
 * iopt_smmuv2_drv_resume()). -EINVAL: NULL. Also before the first attach
 * (the bank is the domain's from its allocation). Any thread.
 */
IOPT_API int iopt_smmuv2_drv_tlb_sync(struct iopt_smmuv2_drv_domain *dom);

/*
 * Hardware iova_to_phys: ATS1PR under the bank's lock, poll ATSR.ACTIVE
 * (as Linux: 50 us), read PAR. 0 and *pa; -ENOENT (PAR.F: no
 * translation); -ETIMEDOUT; -EINVAL (NULL, not attached). Any thread.
 */
IOPT_API int iopt_smmuv2_drv_iova_to_phys(struct iopt_smmuv2_drv_domain *dom,
					  uint64_t iova, uint64_t *pa);

/* Write RESUME (terminate, or retry) and clear FSR. 0 or -EINVAL. */
IOPT_API int iopt_smmuv2_drv_resume(struct iopt_smmuv2_drv_domain *dom,
				    bool terminate);

/* A device transaction on the driver's timeline; iopt_smmuv2_translate's
 * return. Any thread. */
IOPT_API int iopt_smmuv2_drv_translate(struct iopt_smmuv2_drv *drv,
				       const struct iopt_smmuv2_txn *txn,
				       struct iopt_smmuv2_resp *resp);
/* Register read on the driver's timeline (for tests/diagnostics). */
IOPT_API int iopt_smmuv2_drv_read(struct iopt_smmuv2_drv *drv, uint64_t off,
				  unsigned size, uint64_t *val);
/* The driver's current cycle: a reading of cfg.clock, or the virtual
 * clock's latest cycle passed to the model. Any thread, no lock. */
IOPT_API uint64_t iopt_smmuv2_drv_cycle(struct iopt_smmuv2_drv *drv);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SMMUV2_DRV_H */
