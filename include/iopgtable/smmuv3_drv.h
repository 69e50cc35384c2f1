/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 driver: what a kernel driver does to an SMMUv3, done to the SMMUv3
 * model (iopgtable/smmuv3.h) through its MMIO registers and the simulated
 * physical memory (iopgtable/physmem.h) only.
 *
 * - Probe: read SMMU_IDR0/1/3/5, allocate the command queue, event queue
 *   and stream table (linear, or 2-level when IDR0.ST_LEVEL offers it) in
 *   physical memory, enable with the CR0/CR0ACK handshake.
 * - Domains: a stage 1 (STE + CD, one ASID) or stage 2 (STE, one VMID)
 *   translation context for one page table; attach installs the STE of a
 *   stream, detach makes it abort (STE + CMD_CFGI_STE + CMD_SYNC).
 * - Command queue: two insertion algorithms (lock-free, as Linux
 *   arm-smmu-v3 since v5.4, or one spinlock), two ways of waiting for a
 *   CMD_SYNC (an MSI written into the sync's own slot, or polling CONS),
 *   command-error recovery (CERROR_ILL: the bad command becomes a
 *   CMD_SYNC, GERRORN acknowledges).
 * - TLB maintenance behind struct iopt_pgtable_tlb_ops
 *   (iopt_smmuv3_drv_tlb_ops()).
 * - Event queue: faults decoded and handed to a callback.
 *
 * Time: the model takes a cycle on every call and never goes back in time.
 * With cfg.clock (thread-safe, never going back) each model call reads it
 * and the driver takes no lock of its own around the call: the model's
 * lock orders calls from different threads, as a device orders the
 * register accesses that reach it, so when more than one thread uses the
 * driver the model must take a late cycle as its time
 * (params.shared_clock, or a runner attached). Without cfg.clock, a
 * virtual clock that advances by cfg.mmio_cycles per access and by the
 * poll delays while the driver waits (and runs the model up to that
 * cycle), every model call made under one driver lock at a cycle no
 * earlier than the last. Other code that calls the model while the driver
 * is live goes through iopt_smmuv3_drv_translate() or reads
 * iopt_smmuv3_drv_cycle(). The ordering contract: docs/driver.md, "Time".
 *
 * Full description, the command queue's ordering contract and what is not
 * yet done: docs/driver.md.
 */
#ifndef IOPGTABLE_SMMUV3_DRV_H
#define IOPGTABLE_SMMUV3_DRV_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/pgtable.h>
#include <iopgtable/smmuv3.h>

#ifdef __cplusplus
extern "C" {
#endif

struct iopt_physmem;

/* Command-queue insertion algorithm. */
enum iopt_smmuv3_drv_cmdq {
	IOPT_SMMUV3_DRV_CMDQ_LOCKFREE,	/* CAS reservation, valid bitmap, owner */
	/* Linux 5.3: each command inserted on its own under a spinlock
	 * (wait for space + write + PROD); a CONS-polled CMD_SYNC awaited
	 * under it, an MSI one after it (docs/driver.md "locked"). */
	IOPT_SMMUV3_DRV_CMDQ_LOCKED,
};

/* How a CMD_SYNC's completion is awaited. */
enum iopt_smmuv3_drv_sync {
	IOPT_SMMUV3_DRV_SYNC_MSI,	/* MSI (data 0) into the sync's own slot */
	/* Poll SMMU_CMDQ_CONS. With IDR0.SEV the sync asks for SIG_SEV and
	 * only one waiter polls; the others wait for the event it signals
	 * when CONS moves (a WFE-like wait: docs/driver.md "CMD_SYNC"). */
	IOPT_SMMUV3_DRV_SYNC_CONS,
};

/* A decoded event record (IHI0070 7.3). */
struct iopt_smmuv3_drv_event {
	unsigned type;		/* IOPT_SMMUV3_EVT_* */
	uint32_t sid;		/* StreamID */
	bool ssv;		/* SubstreamID valid (C_BAD_SUBSTREAMID: always) */
	uint32_t ssid;		/* SubstreamID; 0 when not valid */
	bool read;		/* RnW = 1: read (faults 0x10-0x13) */
	bool ind;		/* InD: instruction fetch */
	bool pnu;		/* PnU: privileged */
	bool s2;		/* fault at stage 2 */
	uint64_t addr;		/* InputAddr */
	uint64_t ipa;		/* IPA (stage 2 faults) */
	uint64_t raw[4];	/* the record as read */
};

struct iopt_smmuv3_drv_cfg {
	struct iopt_smmuv3 *smmu;		/* the model (required) */
	struct iopt_physmem *pm;	/* memory the model reads (required) */
	enum iopt_smmuv3_drv_cmdq cmdq;
	enum iopt_smmuv3_drv_sync sync;	/* MSI needs IDR0.MSI, else CONS */
	/* log2 of the queue sizes (entries); 0: min(IDR1 maximum, 8).
	 * Larger than IDR1 allows, or a queue over 2 MiB: -EINVAL. */
	unsigned cmdq_log2, evtq_log2;
	/* StreamID bits the stream table covers; 0: min(IDR1.SIDSIZE, 8)
	 * linear, min(IDR1.SIDSIZE, 16) 2-level. */
	unsigned sid_bits;
	bool linear_strtab;		/* never use a 2-level table */
	/* Cycle source: NULL selects the virtual clock. Must never go back
	 * and be safe to call from any thread at once (no driver lock is
	 * held around it); readings earlier than start_cycle count as
	 * start_cycle. */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	unsigned mmio_cycles;		/* virtual clock: cycles per access (0: 10) */
	/* The first cycle (virtual clock), the earliest (external clock).
	 * A model that has been called before (by an earlier driver
	 * instance, say) rejects earlier cycles: pass the latest cycle it
	 * was called at. */
	uint64_t start_cycle;
	uint64_t cycles_per_sec;	/* model clock rate (0: 1e9) */
	uint64_t sync_timeout_cycles;	/* 0: one second of model time */
	/* Host-time bound on any one wait (0: 10 s), so that a clock that
	 * has stopped cannot hang the driver. */
	uint64_t host_timeout_ns;
	/* Invalidate the whole ASID/VMID instead of by address when a range
	 * is larger than this (bytes); 0: 512 commands' worth without
	 * IDR3.RIL, with it only for ranges of 2^36 granules or more (more
	 * than one range command at the largest SCALE). */
	uint64_t inv_all_bytes;
	/* Fault callback (event queue); called from iopt_smmuv3_drv_poll()
	 * by the one thread draining. It may make the device fault again
	 * (the drain delivers that record too); a poll it makes returns 0. */
	void (*event)(void *ctx, const struct iopt_smmuv3_drv_event *ev);
	void *event_ctx;
	/* The locked command queue's lock (cmdq LOCKED; enum
	 * iopt_lock_kind); 0: test-and-test-and-set. Linux before 5.4 took
	 * a spinlock: a ticket lock on arm64 to 4.18, queued (IOPT_LOCK_MCS)
	 * from 4.19, so a 5.3 reproduction sets IOPT_LOCK_MCS; the default
	 * is not FIFO because host threads outnumbering host CPUs make a
	 * FIFO lock crawl (docs/driver.md "locked", "Locks"). */
	unsigned lock_kind;
};

/* What probe found and chose. */
struct iopt_smmuv3_drv_info {
	bool s1, s2, ril, msi, sev, st_2lvl, asid16, vmid16;
	unsigned oas;			/* bits */
	unsigned cmdq_log2, evtq_log2, sid_bits;
	enum iopt_smmuv3_drv_cmdq cmdq;
	enum iopt_smmuv3_drv_sync sync;	/* the mode in use */
};

struct iopt_smmuv3_drv_stats {
	uint64_t commands;		/* inserted, syncs included */
	uint64_t batches;		/* submissions */
	uint64_t syncs;			/* CMD_SYNCs inserted */
	uint64_t sync_timeouts;		/* waits that gave up (-ETIMEDOUT) */
	uint64_t cas_retries;		/* failed reservation CAS (lock-free) */
	uint64_t full_waits;		/* reservations that found the queue full */
	uint64_t flush_alls;		/* TLBI by ASID/VMID */
	uint64_t tlb_errors;		/* TLB callbacks whose submission failed */
	uint64_t cmd_errors;		/* CERROR_ILL recovered */
	uint64_t gerrors;		/* other GERROR bits acknowledged */
	uint64_t events;		/* event records delivered */
	uint64_t event_overflows;	/* EVENTQ overflow acknowledged */
	/* CONS syncs with IDR0.SEV: waits for the event (WFE) and the
	 * events the polling waiter signalled (SEV stand-in). */
	uint64_t wfe_waits;
	uint64_t sev_signals;
};

struct iopt_smmuv3_drv;
struct iopt_smmuv3_drv_domain;

/* Defaults: lock-free, MSI, sizes from the model, virtual clock. */
IOPT_API void iopt_smmuv3_drv_default_cfg(struct iopt_smmuv3_drv_cfg *cfg);

/*
 * Probe and enable: reset sequence of IHI0070 3.3 / Linux arm-smmu-v3
 * (CR0 off, tables and queues programmed, CMDQEN, CFGI_ALL + TLBI_NSNH_ALL
 * + SYNC, EVENTQEN, IRQ_CTRL, SMMUEN), each CR0 write confirmed through
 * CR0ACK. Returns 0 and *out, or:
 *   -EINVAL     bad cfg (NULL model or memory, sizes, modes or lock_kind
 *               out of range);
 *   -ENODEV     the SMMU lacks what the driver needs (AArch64 tables,
 *               a little-endian queue format, a usable queue size);
 *   -ENOMEM     host or simulated physical memory exhausted;
 *   -ETIMEDOUT  CR0ACK (or IRQ_CTRLACK) never matched, or the initial
 *               CMD_SYNC never completed.
 * On failure the SMMU is left disabled and nothing is allocated.
 * Not thread-safe against other calls on the same model.
 */
IOPT_API int iopt_smmuv3_drv_probe(const struct iopt_smmuv3_drv_cfg *cfg,
				   struct iopt_smmuv3_drv **out);

/*
 * Disable the SMMU (CR0 = 0, acknowledged) and free everything. Every
 * domain must have been freed; no other call may be running. NULL is a
 * no-op.
 */
IOPT_API void iopt_smmuv3_drv_remove(struct iopt_smmuv3_drv *drv);

/* Never fails. Any context. */
IOPT_API void iopt_smmuv3_drv_get_info(const struct iopt_smmuv3_drv *drv,
				       struct iopt_smmuv3_drv_info *info);
IOPT_API void iopt_smmuv3_drv_get_stats(const struct iopt_smmuv3_drv *drv,
					struct iopt_smmuv3_drv_stats *st);

/*
 * Submit n (1 to 64) commands, in order, as one batch; with sync, append a
 * CMD_SYNC and wait for it: on return 0 every command of the batch, and every
 * command any thread inserted before it, has completed. Commands are encoded
 * with iopt_smmuv3_cmd_encode(); a CMD_SYNC among them is sent as given (the
 * driver does not wait for it). Waits while the queue is full. Returns 0, or:
 *   -EINVAL     n out of range, a NULL pointer, a command the encoder
 *               refuses: an unknown opcode or a field value too wide for
 *               its field (nothing inserted);
 *   -ETIMEDOUT  the queue stayed full (nothing inserted) or the sync did
 *               not complete within the limit (commands inserted;
 *               stats.sync_timeouts counts it).
 * Any thread, concurrently with every other call except remove.
 */
IOPT_API int iopt_smmuv3_drv_submit(struct iopt_smmuv3_drv *drv,
				    const struct iopt_smmuv3_cmd *cmds,
				    unsigned n, bool sync);

/* Insert a CMD_SYNC and wait for it: 0 or -ETIMEDOUT. Any thread. */
IOPT_API int iopt_smmuv3_drv_sync(struct iopt_smmuv3_drv *drv);

/*
 * Allocate a domain of stage 1 or 2 with a fresh ASID (stage 1) or VMID
 * (stage 2), invalidated before use. Returns 0 and *out, or -EINVAL (stage
 * not 1 or 2, or not implemented by the SMMU), -ENOSPC (identifiers
 * exhausted), -ENOMEM, -ETIMEDOUT (the invalidation's sync). Any thread.
 */
IOPT_API int iopt_smmuv3_drv_domain_alloc(struct iopt_smmuv3_drv *drv,
					  unsigned stage,
					  struct iopt_smmuv3_drv_domain **out);

/*
 * Free a domain: invalidate its ASID/VMID, sync, release it. -EBUSY (and
 * nothing freed) while streams are attached; -ETIMEDOUT if the sync timed
 * out (the domain is freed anyway). NULL: 0. Not concurrently with other
 * calls on the same domain.
 */
IOPT_API int iopt_smmuv3_drv_domain_free(struct iopt_smmuv3_drv_domain *dom);

/* The domain's ASID (stage 1) or VMID (stage 2). */
IOPT_API unsigned iopt_smmuv3_drv_domain_id(const struct iopt_smmuv3_drv_domain *dom);

/*
 * Point stream sid at the domain's translation of page table pt (the first
 * attach binds pt to the domain; later attaches must pass the same pt): stage 1
 * writes the CD (iopt_smmuv3_cd_from_pgtable) and an STE with Config = S1,
 * stage 2 an STE with Config = S2 (iopt_smmuv3_ste_s2_from_pgtable); then
 * CMD_CFGI_STE + CMD_SYNC. Returns 0, or -EINVAL (sid outside the stream table,
 * a table format the stage cannot use, another pt), -EBUSY (sid attached
 * elsewhere), -ENOMEM (a 2-level leaf table), -ETIMEDOUT (the sync; the STE is
 * written). Any thread; attach/detach of the same sid must not race.
 */
IOPT_API int iopt_smmuv3_drv_attach(struct iopt_smmuv3_drv_domain *dom,
				    struct iopt_pgtable *pt, uint32_t sid);

/*
 * Make stream sid abort (STE Config = abort) + CMD_CFGI_STE + CMD_SYNC.
 * 0, -EINVAL (not attached to dom), -ETIMEDOUT (sync).
 */
IOPT_API int iopt_smmuv3_drv_detach(struct iopt_smmuv3_drv_domain *dom,
				    uint32_t sid);

/*
 * TLB maintenance for page tables created with cfg.tlb = these ops and
 * cfg.tlb_cookie = the domain:
 *   add_page   TLBI_NH_VA Leaf=1 (stage 2: TLBI_S2_IPA Leaf=1), no sync;
 *   flush_walk TLBI_NH_VA / TLBI_S2_IPA Leaf=0 over the range, no sync
 *              (range commands with IDR3.RIL; one per step otherwise; the
 *              whole ASID/VMID above cfg.inv_all_bytes, and with RIL from
 *              2^36 granules);
 *   flush_all  TLBI_NH_ASID (stage 2: TLBI_S12_VMALL) + CMD_SYNC;
 *   sync       CMD_SYNC.
 * The level hint (TTL) comes from granule; granule 0, or one that is not
 * a leaf size of the table, gives TTL = 0. Calls made before the domain's
 * first attach do nothing (its identifier was invalidated at allocation).
 * A failed submission is counted (stats) — the callbacks return nothing.
 */
IOPT_API const struct iopt_pgtable_tlb_ops *iopt_smmuv3_drv_tlb_ops(void);

/*
 * Invalidate [iova, iova + size) of the domain (leaf: leaf entries only,
 * else walk caches too; granule as for flush_walk), without a sync — for
 * callers that gathered an unmap. 0, -EINVAL (size 0, wrap, a stage 2
 * range past the 52 bits of an IPA; nothing sent), -ETIMEDOUT (queue full
 * too long).
 */
IOPT_API int iopt_smmuv3_drv_inv_range(struct iopt_smmuv3_drv_domain *dom,
				       uint64_t iova, uint64_t size,
				       uint64_t granule, bool leaf);

/*
 * Forward the model's interrupt callback here (line IOPT_SMMUV3_IRQ_*). It only
 * records the interrupt, because the model calls it with its own lock held;
 * iopt_smmuv3_drv_poll() does the work.
 */
IOPT_API void iopt_smmuv3_drv_irq(struct iopt_smmuv3_drv *drv, unsigned line);

/*
 * Drain the event queue until it is empty (delivering each record to
 * cfg.event, counting overflows; records written meanwhile included) and
 * handle GERROR (command errors recovered, other errors acknowledged and
 * counted). Returns the number of events this call delivered, -EINVAL for
 * a NULL drv. Any thread; one drains at a time: another returns 0 at
 * once, and the drain in progress makes one more pass for it before it
 * returns, so no interrupt's poll is lost (docs/driver.md).
 */
IOPT_API int iopt_smmuv3_drv_poll(struct iopt_smmuv3_drv *drv);

/*
 * A device transaction on the driver's timeline (iopt_smmuv3_translate at the
 * driver's next cycle). Returns what iopt_smmuv3_translate returns. Any thread.
 */
IOPT_API int iopt_smmuv3_drv_translate(struct iopt_smmuv3_drv *drv,
				       const struct iopt_smmuv3_txn *txn,
				       struct iopt_smmuv3_resp *resp);

/* The driver's current cycle: a reading of cfg.clock, or the virtual
 * clock's latest cycle passed to the model. Any thread, no lock. */
IOPT_API uint64_t iopt_smmuv3_drv_cycle(struct iopt_smmuv3_drv *drv);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SMMUV3_DRV_H */
