/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 command queue producer: two insertion algorithms sharing
 * everything else (queue memory, the shadow pointers, the CONS lock, the
 * sync waits, error recovery). One file of a little over 600 lines on
 * purpose: the two algorithms and the waits they share are read side by
 * side, and split apart the shared static helpers would become an
 * internal interface of their own.
 *
 * Lock-free (the published scheme of Linux arm-smmu-v3, v5.4 on):
 *  1. Reserve: one compare-and-swap on the shadow word llq = {prod, cons}
 *     moves prod past the batch (+ its CMD_SYNC) and sets OWNED in prod.
 *     The producer whose swap found OWNED clear owns the batch that starts
 *     at its slots; the others join it.
 *  2. Write the commands (and the CMD_SYNC) into the reserved slots.
 *  3. With a sync: take the CONS lock shared.
 *  4. Mark the slots valid: toggle their bits in the valid bitmap. The
 *     bit that means "valid" is the slot's wrap bit inverted (1 on even
 *     laps, 0 on odd laps), so bits never need clearing.
 *  5. The owner: waits until the previous owner has written PROD
 *     (owner_prod == its first slot); clears OWNED with an atomic and,
 *     which closes the batch at the prod value it returns; waits for every
 *     slot of [first, end) to be valid; writes SMMU_CMDQ_PROD = end;
 *     publishes owner_prod = end.
 *  6. With a sync: wait for it (MSI or CONS, below), then release the
 *     CONS lock; the last shared holder first writes the cons it saw into
 *     the shadow word.
 * When the shadow says the queue is full, one producer takes the CONS
 * lock exclusively (try-lock) and refreshes the shadow cons from
 * SMMU_CMDQ_CONS; the others re-read the shadow and back off.
 *
 * Locked (the design it replaced, Linux 5.3's arm_smmu_cmdq_issue_cmd and
 * arm_smmu_cmdq_issue_sync): each command goes in on its own, a CMD_SYNC
 * after them on its own, each under one hold of a spinlock around waiting
 * for space, the slot write and the PROD write (reservation on the same
 * shadow word, so that the sync waiters' cons updates still apply). A
 * sync awaited by polling CONS is awaited inside the lock, as 5.3 did
 * (__arm_smmu_cmdq_issue_sync: queue_poll_cons under cmdq.lock); with
 * MSIs it is awaited outside (5.3: __arm_smmu_sync_poll_msi after the
 * unlock). The MSI itself lands in the sync's own slot as in the
 * lock-free scheme (5.3 wrote a sequence number to one shared word
 * instead: docs/driver.md "locked").
 *
 * Ordering contract (numbered; docs/driver.md repeats it):
 *  G1. A producer writes its slots only after its reservation CAS
 *      (acquire), which reads a cons that was stored (release CAS in
 *      cons_publish) after that cons had been read from SMMU_CMDQ_CONS;
 *      the SMMU read those slots before it advanced CONS. So no slot is
 *      overwritten before the SMMU has consumed it.
 *  G2. Slot writes happen before the producer's valid-bit toggle
 *      (release fetch-xor); the owner polls the bits with acquire loads,
 *      so every command of the batch is in memory before the owner's PROD
 *      write, which the owner makes itself: the model reads the slots in
 *      that call, after the acquire (drv_timeline.h T3).
 *  G3. PROD writes are in queue order: an owner writes PROD only after
 *      loading (acquire) owner_prod == its first slot, which the previous
 *      owner stored (release) after its own PROD write.
 *  G4. A batch contains exactly the reservations made between its owner's
 *      CAS and its owner's fetch-and on OWNED (both on llq, so totally
 *      ordered): each later reservation sees OWNED clear and owns the next
 *      batch. Every reserved slot is therefore in exactly one batch, and
 *      every batch has one owner.
 *  G5. A sync waiter holds the CONS lock shared from before it marks its
 *      slots valid until its sync has completed. The shadow cons can then
 *      only be refreshed by the last shared holder, with a cons at or
 *      before every waiter's sync + 1, so the shadow cons never passes an
 *      unconsumed sync slot and no producer can reuse it: CONS cannot
 *      overtake a waiter across a wrap, and an MSI slot is not rewritten
 *      before its waiter has seen the 0.
 *  G6. A CMD_SYNC completes after every command inserted before it
 *      (IHI0070 4.7.3 / 3.21.1): a waiter that sees its MSI (acquire load,
 *      pairing with the SMMU's release store of the MSI) or a CONS past
 *      its slot knows that every earlier command has completed.
 *  G7. Waits never hang: space, owner-less work and sync waits all go
 *      through drv_poll_step(), which times out; the owner's waits (5.)
 *      depend only on other producers' non-blocking steps 2-5. Their
 *      backoff steps run drv_cmdq_recover(): a queue stopped by an error
 *      (GERROR.CMDQ_ERR) never completes anything until recovered.
 */
#include <errno.h>
#include <stdlib.h>

#include "smmuv3_drv_internal.h"
#include "smmuv3_regs.h"

#define LOCK_EXCL	(1ull << 63)
#define LLQ_PROD(v)	((uint32_t)(v) & ~DRV_PROD_OWNED)
#define LLQ_CONS(v)	((uint32_t)((v) >> 32))

/* ---- the CONS lock ------------------------------------------------------ */

static void cons_shared_lock(struct drv_cmdq *cq)
{
	/* Acquire pairs with the release store in cons_exclusive_unlock():
	 * a shared holder sees the refreshed cons. */
	if (!(plat_fetch_add_acq_rel64(&cq->lock, 1) & LOCK_EXCL))
		return;
	for (;;) {
		uint64_t v = plat_load_rlx64(&cq->lock);

		if (v & LOCK_EXCL) {
			plat_cpu_relax();
			continue;
		}
		/* Pairs as the fetch-add above. */
		if (plat_cas_acq_rel64(&cq->lock, &v, v + 1))
			return;
	}
}

static void cons_shared_unlock(struct drv_cmdq *cq)
{
	/* Release pairs with the acquire CAS in cons_exclusive_trylock(). */
	plat_fetch_sub_rel64(&cq->lock, 1);
}

/* Unlock unless we are the only holder (then the caller updates the
 * shadow cons and unlocks). */
static bool cons_shared_tryunlock(struct drv_cmdq *cq)
{
	/* Relaxed: a hint; two holders that both see 2 both unlock and
	 * neither updates the shadow, which only delays a refresh. */
	if (plat_load_rlx64(&cq->lock) == 1)
		return false;
	cons_shared_unlock(cq);
	return true;
}

static bool cons_exclusive_trylock(struct drv_cmdq *cq)
{
	uint64_t zero = 0;

	/* Acquire pairs with cons_shared_unlock()'s release. */
	return plat_cas_acq_rel64(&cq->lock, &zero, LOCK_EXCL);
}

static void cons_exclusive_unlock(struct drv_cmdq *cq)
{
	/* Release pairs with cons_shared_lock()'s acquire; drops the
	 * increments of shared lockers that found the lock exclusive. */
	plat_store_rel64(&cq->lock, 0);
}

/* Store cons into the shadow word, keeping prod and OWNED. */
static void cons_publish(struct drv_cmdq *cq, uint32_t cons)
{
	uint64_t cur = plat_load_rlx64(&cq->llq);

	/* Release pairs with the reservation CAS's acquire (G1). */
	while (!plat_cas_rel64(&cq->llq, &cur,
			       (uint64_t)cons << 32 | (uint32_t)cur))
		;
}

/* ---- slots and the valid bitmap ----------------------------------------- */

static void write_slot(struct drv_cmdq *cq, uint32_t pos, const uint64_t w[2])
{
	uint64_t *s = cq->q.ring + (size_t)q_idx(&cq->q, pos) * 2;

	/* Relaxed: published by the valid-bit toggle (G2) or the locked
	 * path's PROD write; atomic because an MSI waiter polls word 0. */
	plat_store_rlx64(&s[0], w[0]);
	plat_store_rlx64(&s[1], w[1]);
}

/* Call fn(word, mask, pos) for each bitmap word covering [pos, pos + n). */
static uint32_t valid_chunk(const struct drv_cmdq *cq, uint32_t pos,
			    uint32_t n, uint64_t *mask)
{
	uint32_t idx = q_idx(&cq->q, pos), bit = idx % 64;
	uint32_t cnt = 64 - bit;

	if (cnt > n)
		cnt = n;
	if (cnt > cq->q.n - idx)
		cnt = cq->q.n - idx;
	*mask = (cnt == 64 ? ~0ull : ((1ull << cnt) - 1)) << bit;
	return cnt;
}

static void valid_set(struct drv_cmdq *cq, uint32_t pos, uint32_t n)
{
	while (n) {
		uint64_t mask;
		uint32_t cnt = valid_chunk(cq, pos, n, &mask);

		/* Release pairs with the owner's acquire load in
		 * valid_wait(): the slots are written (G2). */
		plat_fetch_xor_rel64(&cq->valid[q_idx(&cq->q, pos) / 64], mask);
		pos = q_inc(&cq->q, pos, cnt);
		n -= cnt;
	}
}

static void valid_wait(struct drv_cmdq *cq, uint32_t pos, uint32_t end)
{
	uint32_t n = q_used(&cq->q, end, pos);

	while (n) {
		uint64_t mask;
		uint32_t cnt = valid_chunk(cq, pos, n, &mask);
		uint64_t want = (pos & cq->q.n) ? 0 : mask;
		uint64_t *w = &cq->valid[q_idx(&cq->q, pos) / 64];

		/* Acquire pairs with valid_set()'s release (G2). */
		while ((plat_load_acq64(w) & mask) != want)
			plat_cpu_relax();
		pos = q_inc(&cq->q, pos, cnt);
		n -= cnt;
	}
}

/* ---- reservation -------------------------------------------------------- */

/*
 * The shadow says the queue is full: refresh its cons from the SMMU if
 * no one else is (exclusive try-lock), else wait a step. *old is
 * reloaded. 0 or -ETIMEDOUT.
 */
static int wait_not_full(struct iopt_smmuv3_drv *drv, struct drv_poll *p,
			 uint32_t need, uint64_t *old)
{
	struct drv_cmdq *cq = &drv->cmdq;

	if (cons_exclusive_trylock(cq)) {
		uint32_t cons;

		if (drv_read32(drv, SMMU_CMDQ_CONS, &cons) == 0)
			cons_publish(cq, cons & (2 * cq->q.n - 1));
		cons_exclusive_unlock(cq);
	}
	/* Acquire pairs with cons_publish()'s release. */
	*old = plat_load_acq64(&cq->llq);
	if (cq->q.n - q_used(&cq->q, LLQ_PROD(*old), LLQ_CONS(*old)) >= need)
		return 0;
	return drv_poll_step(drv, p);
}

/*
 * Reserve need slots: *start is the first, *owner whether this producer
 * owns the batch (lock-free only; set_owned false for the locked path).
 */
static inline __attribute__((always_inline)) int
reserve(struct iopt_smmuv3_drv *drv, uint32_t need, bool set_owned,
	uint32_t *start, bool *owner)
{
	struct drv_cmdq *cq = &drv->cmdq;
	uint64_t old = plat_load_rlx64(&cq->llq);	/* checked by the CAS */
	struct drv_poll p;
	bool polling = false;

	for (;;) {
		uint32_t prod = LLQ_PROD(old), cons = LLQ_CONS(old);
		uint64_t new;

		if (cq->q.n - q_used(&cq->q, prod, cons) < need) {
			int ret;

			if (!polling) {
				drv_poll_init(drv, &p, drv_cmdq_recover);
				drv_count(drv, full_waits, 1);
				polling = true;
			}
			ret = wait_not_full(drv, &p, need, &old);
			if (ret)
				return ret;
			continue;
		}
		new = (uint64_t)cons << 32 | q_inc(&cq->q, prod, need) |
		      (set_owned ? DRV_PROD_OWNED : 0);
		/* Acquire pairs with cons_publish()'s release (G1) and with
		 * the other producers' CAS; G4. */
		if (plat_cas_acq_rel64(&cq->llq, &old, new)) {
			*start = prod;
			*owner = !((uint32_t)old & DRV_PROD_OWNED);
			return 0;
		}
		drv_count(drv, cas_retries, 1);
	}
}

/* ---- CMD_SYNC ----------------------------------------------------------- */

static void build_sync(struct iopt_smmuv3_drv *drv, uint32_t pos, uint64_t w[2])
{
	struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_SYNC };

	if (drv->info.sync == IOPT_SMMUV3_DRV_SYNC_MSI) {
		/* 4.7.3: the MSI (data 0) lands on the sync's own first
		 * word; inner shareable, write-back (MSIAttr 0xf). */
		c.cs = IOPT_SMMUV3_SYNC_CS_IRQ;
		c.msi_addr = drv->cmdq.q.pa + (uint64_t)q_idx(&drv->cmdq.q, pos) *
					      DRV_CMD_BYTES;
		c.msi_data = 0;
		c.msh = 3;
		c.msi_attr = 0xf;
	} else {
		c.cs = drv->info.sev ? IOPT_SMMUV3_SYNC_CS_SEV : IOPT_SMMUV3_SYNC_CS_NONE;
	}
	iopt_smmuv3_cmd_encode(&c, w);
}

/* Host time a WFE waits before it looks again by itself (the generic
 * timer's event stream in Linux: 10 kHz). */
#define DRV_WFE_SLICE_NS	100000u

static uint32_t read_cons(struct iopt_smmuv3_drv *drv, uint32_t *c)
{
	int ret = drv_read32(drv, SMMU_CMDQ_CONS, c);

	*c &= 2 * drv->cmdq.q.n - 1;
	return (uint32_t)ret;
}

/*
 * The CONS wait with SEV (IDR0.SEV = 1: the sync is sent with CS =
 * SIG_SEV). The SMMU model has no event output a CPU could wait on, so
 * the SEV is stood in for by the one waiter that polls (the "poller",
 * drv->sev_poller): it reads SMMU_CMDQ_CONS with the spin-then-backoff
 * loop (which also runs the model on the virtual clock) and signals
 * drv->sev whenever CONS has moved — where a CMD_SYNC with SIG_SEV would
 * have completed. Every other waiter waits for that event (drv_wait.h,
 * WFE) and reads CONS once per wake-up: one thread polls the register
 * instead of all of them. When the poller's own sync has completed it
 * gives the role up and signals, so that a waiter wakes and takes it.
 * Timeouts as the polling wait: model time (timeout_cycles) and host
 * time (cfg.host_timeout_ns), checked by the poller at every step and by
 * a waiter at every WFE slice.
 */
static int wait_sync_wfe(struct iopt_smmuv3_drv *drv, uint32_t pos,
			 uint32_t *cons)
{
	struct drv_cmdq *cq = &drv->cmdq;
	struct drv_poll p;
	int ret;

	drv_poll_init(drv, &p, drv_cmdq_recover);
	for (;;) {
		/* Token before the condition (drv_wait.h contract 1). */
		uint64_t tok = drv_event_seq(&drv->sev);
		uint32_t c;

		if ((ret = (int)read_cons(drv, &c)))
			return ret;
		if (q_consumed(&cq->q, c, pos)) {
			*cons = c;
			return 0;
		}
		/* Acquire pairs with the poller's release store below: the
		 * new poller starts after the old one has finished. */
		if (plat_xchg_acq_rel32(&drv->sev_poller, 1) == 0) {
			uint32_t last = c;

			for (;;) {
				ret = drv_poll_step(drv, &p);
				if (!ret)
					ret = (int)read_cons(drv, &c);
				if (ret)
					break;
				if (c != last) {
					last = c;
					drv_event_signal(&drv->sev);
					drv_count(drv, sev_signals, 1);
				}
				if (q_consumed(&cq->q, c, pos)) {
					*cons = c;
					break;
				}
			}
			/* Release pairs with the next poller's xchg. */
			plat_store_rel32(&drv->sev_poller, 0);
			drv_event_signal(&drv->sev);	/* hand the role on */
			return ret;
		}
		drv_count(drv, wfe_waits, 1);
		if (drv_event_wait(&drv->sev, tok, DRV_WFE_SLICE_NS) == -ETIMEDOUT &&
		    (drv_now(drv) - p.start_cycle > drv->timeout_cycles ||
		     plat_clock_ns() - p.start_ns > drv->cfg.host_timeout_ns))
			return -ETIMEDOUT;
	}
}

/* Wait for the sync at pos; *cons: a cons value at or past pos + 1. */
static inline __attribute__((always_inline)) int
wait_sync(struct iopt_smmuv3_drv *drv, uint32_t pos, uint32_t *cons)
{
	struct drv_cmdq *cq = &drv->cmdq;
	struct drv_poll p;
	int ret = 0;

	if (drv->info.sync == IOPT_SMMUV3_DRV_SYNC_CONS && drv->info.sev)
		return wait_sync_wfe(drv, pos, cons);
	/* A timed-out step is followed by one more look at the sync, as
	 * Linux's readx_poll_timeout() does: the wait may have lost the
	 * host CPU (or the bus) past the timeout while the sync completed. */
	drv_poll_init(drv, &p, drv_cmdq_recover);
	if (drv->info.sync == IOPT_SMMUV3_DRV_SYNC_MSI) {
		const uint32_t *w = (const uint32_t *)(const void *)
			(cq->q.ring + (size_t)q_idx(&cq->q, pos) * 2);

		for (;;) {
			/* Acquire pairs with the SMMU's release store of the
			 * MSI (G6). Word 0 is little-endian: its first 32
			 * bits hold the opcode, never 0 until the MSI. */
			if (plat_load_acq32(w) == 0) {
				*cons = q_inc(&cq->q, pos, 1);
				return 0;
			}
			if (ret)
				return ret;
			ret = drv_poll_step(drv, &p);
		}
	}
	for (;;) {
		uint32_t c;
		int err = (int)read_cons(drv, &c);

		if (err)
			return err;
		if (q_consumed(&cq->q, c, pos)) {
			*cons = c;
			return 0;
		}
		if (ret)
			return ret;
		ret = drv_poll_step(drv, &p);
	}
}

/* ---- insertion ---------------------------------------------------------- */

/*
 * The end of an insertion with a CMD_SYNC at sync_pos, whose inserter holds
 * the CONS lock shared (G5): wait for the sync, then release the lock; the
 * last holder first publishes the cons it saw.
 */
static inline __attribute__((always_inline)) int
sync_finish(struct iopt_smmuv3_drv *drv, uint32_t sync_pos)
{
	struct drv_cmdq *cq = &drv->cmdq;
	uint32_t cons = 0;
	int ret;

	drv_count(drv, syncs, 1);
	ret = wait_sync(drv, sync_pos, &cons);
	if (ret) {
		drv_count(drv, sync_timeouts, 1);
		cons_shared_unlock(cq);
	} else if (!cons_shared_tryunlock(cq)) {
		cons_publish(cq, cons);		/* G5: last holder */
		cons_shared_unlock(cq);
	}
	return ret;
}

/* Lock-free insertion of n commands and, with sync, a CMD_SYNC. */
static int cmdq_insert_irqs_off(struct iopt_smmuv3_drv *drv,
				const uint64_t (*cmds)[2], unsigned n, bool sync)
{
	struct drv_cmdq *cq = &drv->cmdq;
	uint32_t need = n + (sync ? 1 : 0), start, sync_pos = 0;
	uint64_t sw[2];
	bool owner;
	int ret;

	ret = reserve(drv, need, true, &start, &owner);
	if (ret)
		return ret;	/* nothing reserved */
	for (unsigned i = 0; i < n; i++)
		write_slot(cq, q_inc(&cq->q, start, i), cmds[i]);
	if (sync) {
		sync_pos = q_inc(&cq->q, start, n);
		build_sync(drv, sync_pos, sw);
		write_slot(cq, sync_pos, sw);
		cons_shared_lock(cq);		/* G5: before the slots go live */
	}
	valid_set(cq, start, need);
	if (owner) {
		uint32_t end;

		/* G3: acquire pairs with the previous owner's release store
		 * below. */
		while (plat_load_acq32(&cq->owner_prod) != start)
			plat_cpu_relax();
		/* G4: acq_rel pairs with the producers' reservation CAS; the
		 * returned prod closes the batch. */
		end = LLQ_PROD(plat_fetch_and_acq_rel64(
			&cq->llq, ~(uint64_t)DRV_PROD_OWNED));
		valid_wait(cq, start, end);
		drv_write32(drv, SMMU_CMDQ_PROD, end);
		/* G3: release pairs with the next owner's acquire. */
		plat_store_rel32(&cq->owner_prod, end);
	}
	drv_count(drv, commands, need);
	drv_count(drv, batches, 1);
	return sync ? sync_finish(drv, sync_pos) : 0;
}

/*
 * One lock-free batch, with local interrupts off from reservation to the
 * sync's completion, as Linux's arm_smmu_cmdq_issue_cmdlist() runs: a CPU
 * that has reserved slots, or owns the queue, is never preempted or
 * interrupted before it publishes them (in the simulation; on the host a
 * no-op). The locked queue's lock is irqsave already (plat_lock).
 */
static int cmdq_insert(struct iopt_smmuv3_drv *drv, const uint64_t (*cmds)[2],
		       unsigned n, bool sync)
{
	unsigned long flags = plat_irq_save();
	int ret = cmdq_insert_irqs_off(drv, cmds, n, sync);

	plat_irq_restore(flags);
	return ret;
}

/*
 * Locked insertion of one command, or with cmd NULL of a CMD_SYNC, under
 * ins_lock (Linux 5.3: arm_smmu_cmdq_insert_cmd under cmdq.lock). A sync
 * awaited by polling CONS is awaited before the unlock.
 */
static int locked_insert(struct iopt_smmuv3_drv *drv, const uint64_t *cmd)
{
	struct drv_cmdq *cq = &drv->cmdq;
	bool in_lock = !cmd && drv->info.sync == IOPT_SMMUV3_DRV_SYNC_CONS;
	uint32_t start;
	uint64_t sw[2];
	bool owner;
	int ret;

	plat_lock(&cq->ins_lock);
	ret = reserve(drv, 1, false, &start, &owner);
	if (ret) {
		plat_unlock(&cq->ins_lock);
		return ret;	/* nothing reserved */
	}
	if (!cmd) {
		build_sync(drv, start, sw);
		cmd = sw;
	}
	write_slot(cq, start, cmd);
	if (cmd == sw)
		cons_shared_lock(cq);		/* G5: before the slot goes live */
	drv_write32(drv, SMMU_CMDQ_PROD, q_inc(&cq->q, start, 1));
	drv_count(drv, commands, 1);
	drv_count(drv, batches, 1);
	if (!in_lock)
		plat_unlock(&cq->ins_lock);
	ret = cmd == sw ? sync_finish(drv, start) : 0;
	if (in_lock)
		plat_unlock(&cq->ins_lock);
	return ret;
}

/* The locked queue's drv_cmdq_issue(): each command, then the sync. */
static __attribute__((noinline)) int
locked_issue(struct iopt_smmuv3_drv *drv, const uint64_t (*cmds)[2],
	     unsigned n, bool sync)
{
	for (unsigned i = 0; i < n; i++) {
		int ret = locked_insert(drv, cmds[i]);

		if (ret)
			return ret;
	}
	return sync ? locked_insert(drv, NULL) : 0;
}

/*
 * Lock-free: a batch that does not fit the queue with its sync goes in
 * pieces. Locked: one command per insertion, then the sync, as Linux 5.3
 * issued them (no batches before 5.4).
 */
int drv_cmdq_issue(struct iopt_smmuv3_drv *drv, const uint64_t (*cmds)[2],
		   unsigned n, bool sync)
{
	unsigned max = drv->cmdq.q.n - 1;

	if (drv->info.cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED)
		return locked_issue(drv, cmds, n, sync);

	while (n > max) {
		int ret = cmdq_insert(drv, cmds, max, false);

		if (ret)
			return ret;
		cmds += max;
		n -= max;
	}
	return cmdq_insert(drv, cmds, n, sync);
}

int iopt_smmuv3_drv_submit(struct iopt_smmuv3_drv *drv,
			   const struct iopt_smmuv3_cmd *cmds, unsigned n,
			   bool sync)
{
	uint64_t w[DRV_BATCH_MAX][2];

	if (!drv || !cmds || n == 0 || n > DRV_BATCH_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (iopt_smmuv3_cmd_encode(&cmds[i], w[i]))
			return -EINVAL;
	return drv_cmdq_issue(drv, (const uint64_t (*)[2])w, n, sync);
}

int iopt_smmuv3_drv_sync(struct iopt_smmuv3_drv *drv)
{
	if (!drv)
		return -EINVAL;
	return drv_cmdq_issue(drv, NULL, 0, true);
}

/* ---- errors ------------------------------------------------------------- */

void drv_cmdq_recover(struct iopt_smmuv3_drv *drv)
{
	struct drv_cmdq *cq = &drv->cmdq;
	uint32_t gerror, gerrorn, active;

	/* Acquire pairs with the release store at the end of probe. */
	if (!plat_load_acq32(&cq->live))
		return;
	/* Acquire pairs with the release store below: one handler. */
	if (plat_xchg_acq_rel32(&cq->err_busy, 1))
		return;
	if (drv_read32(drv, SMMU_GERROR, &gerror) ||
	    drv_read32(drv, SMMU_GERRORN, &gerrorn))
		goto out;
	active = gerror ^ gerrorn;
	if (active & GERROR_CMDQ_ERR) {
		uint32_t cons;

		if (drv_read32(drv, SMMU_CMDQ_CONS, &cons))
			goto out;
		switch (CMDQ_CONS_ERR(cons)) {
		case CERROR_NONE:
		case CERROR_ABT:	/* fetch abort: retry the fetch */
		case CERROR_ATC_INV_SYNC:	/* no ATS here: retry */
			break;
		case CERROR_ILL:
		default: {
			/*
			 * 7.1: the queue stopped with CONS at the command.
			 * As the reference driver does, turn it into a
			 * CMD_SYNC (signal none) so that the queue goes on
			 * and every later command still runs.
			 */
			struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_SYNC };
			uint64_t w[2];

			iopt_smmuv3_cmd_encode(&c, w);
			write_slot(cq, cons & (2 * cq->q.n - 1), w);
			drv_count(drv, cmd_errors, 1);
			break;
		}
		}
	}
	if (active & ~GERROR_CMDQ_ERR)
		drv_count(drv, gerrors, 1);
	if (active)
		drv_write32(drv, SMMU_GERRORN, gerror);	/* 7.5: acknowledge */
out:
	plat_store_rel32(&cq->err_busy, 0);
}

/* ---- setup -------------------------------------------------------------- */

int drv_cmdq_init(struct iopt_smmuv3_drv *drv, unsigned log2)
{
	struct drv_cmdq *cq = &drv->cmdq;
	size_t bytes = (size_t)DRV_CMD_BYTES << log2;
	int ret;

	if (bytes < 64)
		bytes = 64;	/* smallest block; still size-aligned */
	ret = iopt_physmem_alloc(drv->pm, bytes, &cq->q.pa);
	if (ret)
		return ret;
	cq->q.ring = iopt_physmem_ptr(drv->pm, cq->q.pa, bytes);
	cq->q.bytes = bytes;
	cq->q.log2 = log2;
	cq->q.n = 1u << log2;
	cq->valid = calloc((cq->q.n + 63) / 64, sizeof(uint64_t));
	if (!cq->q.ring || !cq->valid) {
		drv_cmdq_fini(drv);
		return -ENOMEM;
	}
	plat_lock_init(&cq->ins_lock, (enum plat_lock_kind)drv->cfg.lock_kind);
	return 0;
}

void drv_cmdq_fini(struct iopt_smmuv3_drv *drv)
{
	struct drv_cmdq *cq = &drv->cmdq;

	if (cq->q.bytes)
		iopt_physmem_free(drv->pm, cq->q.pa, cq->q.bytes);
	free(cq->valid);
	cq->valid = NULL;
	cq->q.bytes = 0;
}
