/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 driver internals shared by its files: the instance, the command
 * queue state, the timeline ("bus") and the poll loop.
 *   smmuv3_bus.c    timeline, register access, the poll/backoff loop
 *   smmuv3_cmdq.c   command insertion (both algorithms), sync waits,
 *                   command-error recovery
 *   smmuv3_probe.c  probe/remove, stream table, domains, attach/detach
 *   smmuv3_tlb.c    struct iopt_pgtable_tlb_ops over the command queue
 *   smmuv3_evtq.c   event queue, GERROR, interrupts
 */
#ifndef IOPT_SMMUV3_DRV_INTERNAL_H
#define IOPT_SMMUV3_DRV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

#include "../platform/platform.h"
#include "../platform/plat_lock.h"
#include "drv_alloc.h"
#include "drv_stats.h"
#include "drv_timeline.h"
#include "drv_wait.h"

#define DRV_BATCH_MAX		64	/* commands per submission */
#define DRV_CMD_BYTES		16
#define DRV_EVT_BYTES		32
#define DRV_PROD_OWNED		(1u << 31)	/* shadow prod: a batch has an owner */
#define DRV_SPIN_POLLS		10	/* polls before backing off */
#define DRV_BACKOFF_MAX		65536	/* cycles/relaxes per backoff step */

/* A queue in simulated physical memory. */
struct drv_queue {
	uint64_t pa;
	uint64_t *ring;		/* host view, n * words_per_entry words */
	unsigned log2;
	uint32_t n;		/* entries */
	size_t bytes;		/* allocation size */
};

/* Pointer arithmetic on {wrap, index} values of a queue of n entries. */
static inline uint32_t q_idx(const struct drv_queue *q, uint32_t p)
{
	return p & (q->n - 1);
}

static inline uint32_t q_inc(const struct drv_queue *q, uint32_t p, uint32_t k)
{
	return (p + k) & (2 * q->n - 1);
}

/* Entries in use between cons and prod. */
static inline uint32_t q_used(const struct drv_queue *q, uint32_t prod,
			      uint32_t cons)
{
	return (prod - cons) & (2 * q->n - 1);
}

/*
 * Has the command at position p been consumed, given a CONS value that
 * is at most one lap ahead of p (guaranteed by the shared lock)?
 */
static inline bool q_consumed(const struct drv_queue *q, uint32_t cons,
			      uint32_t p)
{
	uint32_t ahead = (cons - p) & (2 * q->n - 1);

	return ahead != 0 && ahead <= q->n;
}

/*
 * Layout: what every producer reads and nobody writes after probe (the
 * queue's geometry, the bitmap's address, live) shares no cache line with
 * a word producers write, and the written words each have a line of their
 * own (as Linux keeps llq alone on its line): a CAS on llq then moves
 * only llq's line, the owners spinning on owner_prod do not pull llq's
 * line away from the reservers, and the CONS lock's shared count is apart
 * from both. The struct is allocated 64-byte aligned (struct
 * iopt_smmuv3_drv, smmuv3_probe.c).
 */
struct drv_cmdq {
	struct drv_queue q;
	uint64_t *valid;	/* one bit per slot, polarity = wrap bit */
	uint32_t live;		/* queue enabled: recovery may run */
	/*
	 * Shadow of the queue pointers: [31:0] prod (with DRV_PROD_OWNED),
	 * [63:32] cons. Written only by CAS (reservations, cons refresh).
	 */
	_Alignas(64) uint64_t llq;
	_Alignas(64) uint32_t owner_prod;	/* where the last owner's batch ended */
	_Alignas(64) uint64_t lock;	/* CONS lock: shared count, or bit 63 exclusive */
	_Alignas(64) struct plat_lock ins_lock;	/* locked insertion */
	uint32_t err_busy;	/* command-error recovery in progress */
};

struct iopt_smmuv3_drv {
	struct iopt_smmuv3_drv_cfg cfg;
	struct iopt_smmuv3_drv_info info;
	struct iopt_smmuv3 *smmu;
	struct iopt_physmem *pm;

	/* Timeline: the model calls' cycles and order (drv_timeline.h,
	 * contract T1-T4, shared with the SMMUv2 driver). */
	struct drv_timeline tl;
	uint64_t timeout_cycles;

	struct drv_cmdq cmdq;
	/* CONS waits with SEV (smmuv3_cmdq.c wait_sync_wfe()): the event
	 * standing in for the SMMU's SEV, and the one waiter polling. */
	struct drv_event sev;
	uint32_t sev_poller;

	struct drv_queue evtq;
	uint32_t evtq_cons;	/* owned by the drainer */
	uint64_t irq_pending;	/* bitmap of IOPT_SMMUV3_IRQ_* lines */
	/* EVTQ_BUSY: a thread drains; EVTQ_AGAIN: a poll asked it to look
	 * again (smmuv3_evtq.c E1-E3). */
	uint64_t evtq_state;

	/* Stream table. */
	uint64_t strtab_pa;
	uint64_t *strtab;	/* linear: STEs; 2-level: L1 descriptors */
	size_t strtab_bytes;
	uint64_t *l2_pa;	/* 2-level: leaf table per L1 entry (0: none) */
	void **owner;		/* per StreamID: attached domain or NULL */
	struct plat_mutex cfg_lock;	/* stream table, identifier maps */

	uint64_t *asid_map, *vmid_map;	/* allocated identifiers */
	unsigned asid_bits, vmid_bits;

	/* struct iopt_smmuv3_drv_stats, per CPU (drv_stats.h). */
	struct drv_stats st;
};

struct iopt_smmuv3_drv_domain {
	struct iopt_smmuv3_drv *drv;
	unsigned stage;		/* 1 or 2 */
	uint16_t id;		/* ASID or VMID */
	uint64_t pt;		/* struct iopt_pgtable *, bound at first
				 * attach: store release, load acquire */
	uint64_t pgsizes;	/* page sizes of pt */
	unsigned granule_lg2;	/* translation granule of pt */
	uint64_t cd_pa;		/* stage 1: its one CD */
	unsigned nr_sids;	/* under cfg_lock */
};

/* Add n to statistic field (of struct iopt_smmuv3_drv_stats): relaxed,
 * on this CPU's copy (drv_stats.h). */
#define drv_count(drv, field, n)					\
	drv_stats_add(&(drv)->st,					\
		      offsetof(struct iopt_smmuv3_drv_stats, field), (n))

/* ---- smmuv3_bus.c ---- */
int drv_read32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t *val);
int drv_write32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t val);
int drv_write64(struct iopt_smmuv3_drv *drv, uint64_t off, uint64_t val);
uint64_t drv_now(struct iopt_smmuv3_drv *drv);

/* The spin-then-backoff poll loop shared by every wait. */
struct drv_poll {
	uint64_t start_cycle, start_ns;
	unsigned spins;
	uint64_t delay;
	/* Called after each backoff wait, or NULL: what the waiter does
	 * while its wait is long (the command queue: drv_cmdq_recover). */
	void (*backoff)(struct iopt_smmuv3_drv *drv);
};
void drv_poll_init(struct iopt_smmuv3_drv *drv, struct drv_poll *p,
		   void (*backoff)(struct iopt_smmuv3_drv *drv));
/* One wait step; -ETIMEDOUT once the limit has passed. Backoff steps
 * call p->backoff first. */
int drv_poll_step(struct iopt_smmuv3_drv *drv, struct drv_poll *p);
/* Write CR0 (or IRQ_CTRL) and wait until its ACK register matches. */
int drv_write_ack(struct iopt_smmuv3_drv *drv, uint64_t reg, uint64_t ack,
		  uint32_t val);

/* ---- smmuv3_probe.c ---- */
/* The TLBI of the domain's whole ASID (stage 1) or VMID (stage 2). */
void drv_domain_inv_all_cmd(const struct iopt_smmuv3_drv_domain *dom,
			    struct iopt_smmuv3_cmd *c);

/* ---- smmuv3_cmdq.c ---- */
int drv_cmdq_init(struct iopt_smmuv3_drv *drv, unsigned log2);
void drv_cmdq_fini(struct iopt_smmuv3_drv *drv);
/* Insert n encoded commands (+ a sync) and wait for the sync. */
int drv_cmdq_issue(struct iopt_smmuv3_drv *drv, const uint64_t (*cmds)[2],
		   unsigned n, bool sync);
/* The GERROR handler: if CMDQ_ERR is active, fix the queue; acknowledge
 * every active error (GERRORN). At most one thread at a time; others
 * return at once. */
void drv_cmdq_recover(struct iopt_smmuv3_drv *drv);


#endif /* IOPT_SMMUV3_DRV_INTERNAL_H */
