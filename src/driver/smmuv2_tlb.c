/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 driver: register access on the shared timeline, the TLB sync poll
 * loop, TLB maintenance behind struct iopt_pgtable_tlb_ops, ATS1PR and RESUME.
 *
 * The sync loops are the Linux arm-smmu driver's (cfg.sync_poll).
 * BACKOFF, from 4.13 (__arm_smmu_tlb_sync of "Poll for TLB sync
 * completion more effectively"): write the sync register, then for delay
 * = 1, 2, 4 ... while below 1,000,000 us (TLB_LOOP_TIMEOUT): read the
 * status register up to 10 times (TLB_SPIN_COUNT, a relax between), then
 * wait delay us (model time: cfg.cycles_per_sec / 1e6 cycles per us; at
 * most cfg.sync_delay_cap_us when set). After the 20th burst's wait,
 * "TLB sync timed out" without another read, as Linux: 200 reads all
 * active, the 20 bursts spread over about 1.05 s.
 * UDELAY1, to 4.12 (TLB_LOOP_TIMEOUT = 1,000,000): read; while active,
 * relax and count, report at the 1,000,000th read, else wait 1 us.
 * cfg.sync_timeout_cycles can end either loop earlier; that bound is a
 * time, not Linux's count, so then the status is read once more before
 * the report: a poller descheduled past it (host time moves an external
 * clock) must not report a sync that has completed.
 */
#include <errno.h>
#include <string.h>

#include "smmuv2_drv_internal.h"

#define V2_SPIN_POLLS		10
#define V2_LOOP_LIMIT_US	1000000u	/* also UDELAY1's read count */
#define V2_ATS_STEP_US		5
#define V2_ATS_LIMIT_US		50
/* A udelay at least this long sleeps instead of spinning (v2_udelay). */
#define V2_SLEEP_MIN_US		64

/* Register access on the timeline (drv_timeline.h, contract T1-T4): no
 * driver lock with an external clock; the model's lock orders accesses
 * from different CPUs, as the device does. */
int v2_read(struct iopt_smmuv2_drv *drv, uint64_t off, unsigned size,
	    uint64_t *val)
{
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	int ret = iopt_smmuv2_mmio_read(drv->smmu, off, size, val, c);

	drv_tl_exit(&drv->tl);
	return ret;
}

int v2_write(struct iopt_smmuv2_drv *drv, uint64_t off, unsigned size,
	     uint64_t val)
{
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	int ret = iopt_smmuv2_mmio_write(drv->smmu, off, size, val, c);

	drv_tl_exit(&drv->tl);
	return ret;
}

static uint64_t v2_now(struct iopt_smmuv2_drv *drv)
{
	return drv_tl_now(&drv->tl);
}

static uint64_t us_cycles(const struct iopt_smmuv2_drv *drv, uint64_t us)
{
	uint64_t per_us = drv->cfg.cycles_per_sec / 1000000u;

	return us * (per_us ? per_us : 1);
}

/*
 * udelay in model time, but not past deadline. Virtual clock: the time
 * moves on by the delay and the model runs up to it (a sync blocked by a
 * stalled fault has no next event; its time still passes). External
 * clock: relax until it reads the target (host bound: host_timeout_ns).
 */
static void v2_udelay(struct iopt_smmuv2_drv *drv, uint64_t cycles,
		      uint64_t deadline)
{
	if (!drv->tl.clock) {
		uint64_t now = drv_tl_enter(&drv->tl, 0);
		uint64_t adv = deadline > now && deadline - now < cycles ?
			       deadline - now : cycles;

		/* Under tl.lock (virtual clock): the relaxed store of T4. */
		plat_store_rlx64(&drv->tl.last, now + adv);
		iopt_smmuv2_run_until(drv->smmu, now + adv);
		drv_tl_exit(&drv->tl);
		return;
	}
	uint64_t now = v2_now(drv), to = now + cycles;
	uint64_t start_ns = plat_clock_ns(), per_us = us_cycles(drv, 1);

	if (to > deadline)
		to = deadline;
	while (now < to && plat_clock_ns() - start_ns < drv->cfg.host_timeout_ns) {
		/* udelay: a busy wait. What is left of a long one is slept
		 * (no CPU taken from the runner and the other threads on the
		 * host; on the simulation one charge instead of a relax
		 * loop), then the clock is read again. */
		if (to - now >= V2_SLEEP_MIN_US * per_us)
			plat_delay_ns((to - now) * 1000 / per_us);
		else
			plat_cpu_relax();
		now = v2_now(drv);
	}
}

/*
 * UDELAY1: 1 while SACTIVE still reads 1 after V2_LOOP_LIMIT_US reads, 0
 * when it read 0, 2 when the deadline (or the host bound) came first;
 * negative: a register access failed.
 */
static int v2_poll_udelay1(struct iopt_smmuv2_drv *drv, uint64_t status_reg,
			   uint64_t deadline, uint64_t start_ns)
{
	uint64_t v = 0;

	for (uint64_t count = 0;;) {
		int ret = v2_read(drv, status_reg, 4, &v);

		if (ret)
			return ret;
		if (!(v & 1))
			return 0;
		plat_cpu_relax();
		if (++count == V2_LOOP_LIMIT_US)
			return 1;
		if (v2_now(drv) >= deadline ||
		    plat_clock_ns() - start_ns > drv->cfg.host_timeout_ns)
			return 2;
		v2_udelay(drv, us_cycles(drv, 1), deadline);
	}
}

/* BACKOFF: as UDELAY1's return values; 1 after the 20th burst's wait. */
static int v2_poll_backoff(struct iopt_smmuv2_drv *drv, uint64_t status_reg,
			   uint64_t deadline, uint64_t start_ns)
{
	uint64_t v = 0, cap = drv->cfg.sync_delay_cap_us;
	unsigned k = 0;

	for (uint64_t delay = 1; delay < V2_LOOP_LIMIT_US; delay *= 2, k++) {
		for (unsigned i = 0; i < V2_SPIN_POLLS; i++) {
			int ret = v2_read(drv, status_reg, 4, &v);

			if (ret)
				return ret;
			if (!(v & 1))
				return 0;
			plat_cpu_relax();
		}
		if (v2_now(drv) >= deadline ||
		    plat_clock_ns() - start_ns > drv->cfg.host_timeout_ns)
			return 2;
		v2_count(drv, sync_waits[k], 1);
		v2_udelay(drv, us_cycles(drv, cap && cap < delay ? cap : delay),
			  deadline);
	}
	return 1;
}

/* This CPU's word of drv->polling. */
static uint64_t *polling_word(struct iopt_smmuv2_drv *drv)
{
	unsigned b = plat_cpu_id() % drv->polling.nblk;

	return &drv->polling.blk[(size_t)b * drv->polling.words];
}

/* The reference loop; dom (may be NULL) for the stall diagnosis. */
static int v2_sync_poll(struct iopt_smmuv2_drv *drv, uint64_t sync_reg,
			uint64_t status_reg, struct iopt_smmuv2_drv_domain *dom)
{
	uint64_t v = 0, start, start_ns, deadline, *polling = NULL;
	int ret;

	/* Without a sync lock the poll runs with interrupts on: a handler
	 * on this CPU can sync inside it (Will Deacon's first case). This
	 * CPU alone touches its word (an interrupt returns before the
	 * poll it interrupted goes on), so relaxed loads and stores. */
	if (drv->cfg.count_nested && drv->cfg.sync == IOPT_SMMUV2_DRV_SYNC_NONE) {
		polling = polling_word(drv);
		if (plat_load_rlx64(polling))
			v2_count(drv, nested_syncs, 1);
		plat_store_rlx64(polling, plat_load_rlx64(polling) + 1);
	}
	ret = v2_write(drv, sync_reg, 4, 0);
	if (ret)
		goto out;
	v2_count(drv, syncs, 1);
	start = v2_now(drv);
	start_ns = plat_clock_ns();
	deadline = drv->timeout_cycles ? start + drv->timeout_cycles : UINT64_MAX;
	if (drv->cfg.sync_poll == IOPT_SMMUV2_DRV_POLL_UDELAY1)
		ret = v2_poll_udelay1(drv, status_reg, deadline, start_ns);
	else
		ret = v2_poll_backoff(drv, status_reg, deadline, start_ns);
	if (ret <= 0)
		goto out;
	if (ret == 2) {
		/* Stopped by a time: one more look. */
		ret = v2_read(drv, status_reg, 4, &v);
		if (ret || !(v & 1))
			goto out;
	}
	/* "TLB sync timed out": a counter and -ETIMEDOUT. */
	v2_count(drv, sync_timeouts, 1);
	if (dom && !v2_read(drv, v2_cb_off(drv, dom->cb, V2_CB_FSR), 4, &v) &&
	    (v & V2_FSR_SS))
		v2_count(drv, stalled_timeouts, 1);
	ret = -ETIMEDOUT;
out:
	if (polling)
		plat_store_rlx64(polling, plat_load_rlx64(polling) - 1);
	return ret;
}

static struct plat_lock *sync_lock(struct iopt_smmuv2_drv_domain *dom)
{
	switch (dom->drv->cfg.sync) {
	case IOPT_SMMUV2_DRV_SYNC_BANK:
		return &dom->lock;
	case IOPT_SMMUV2_DRV_SYNC_GLOBAL:
		return &dom->drv->global_sync;
	default:
		return NULL;
	}
}

int v2_global_sync(struct iopt_smmuv2_drv *drv)
{
	bool lock = drv->cfg.sync != IOPT_SMMUV2_DRV_SYNC_NONE;
	int ret;
	unsigned long flags = 0;

	/* spin_lock_irqsave, as Linux's: no interrupt while it polls. */
	if (lock) {
		flags = plat_irq_save();
		plat_lock(&drv->global_sync);
	}
	ret = v2_sync_poll(drv, V2_STLBGSYNC, V2_STLBGSTATUS, NULL);
	if (lock) {
		plat_unlock(&drv->global_sync);
		plat_irq_restore(flags);
	}
	return ret;
}

/*
 * Has no attach bound a table to dom yet? Then its bank is not
 * programmed and no stream reaches it, so no TLB can hold a translation
 * of it: the invalidations below succeed and do nothing, as the SMMUv3
 * driver's do. A table once bound stays until the domain is freed, so a
 * non-NULL acquire load (pairing with bind_table()'s release) is final.
 * NULL is checked again under cfg_lock, which the first attach holds from
 * binding the table until the SMR routes a stream to the bank: seen NULL
 * there, that attach has not begun, and it begins after the caller's
 * page-table change (made before this call), so no walk can fetch the
 * entry it replaced.
 */
static bool dom_unbound(struct iopt_smmuv2_drv_domain *dom)
{
	bool none;

	if (plat_load_acq64(&dom->pt))
		return false;
	plat_mutex_lock(&dom->drv->cfg_lock);
	/* Relaxed: written only under cfg_lock, held here. */
	none = !plat_load_rlx64(&dom->pt);
	plat_mutex_unlock(&dom->drv->cfg_lock);
	return none;
}

int iopt_smmuv2_drv_tlb_sync(struct iopt_smmuv2_drv_domain *dom)
{
	unsigned long flags = 0;
	struct plat_lock *l;
	int ret;

	if (!dom)
		return -EINVAL;
	l = sync_lock(dom);
	/* spin_lock_irqsave, as Linux's: no interrupt while it polls. With
	 * no lock (sync none, the 4.13-rc driver) an interrupt can come in
	 * mid-poll and its handler sync again. */
	if (l) {
		flags = plat_irq_save();
		plat_lock(l);
	}
	ret = v2_sync_poll(dom->drv, v2_cb_off(dom->drv, dom->cb, V2_CB_TLBSYNC),
			   v2_cb_off(dom->drv, dom->cb, V2_CB_TLBSTATUS), dom);
	if (l) {
		plat_unlock(l);
		plat_irq_restore(flags);
	}
	/* A stage 2 that nested stage 1 banks translate through: by-IPA
	 * operations need not reach the combined stage 1 + 2 entries (Arm
	 * ARM: TLBI IPAS2 is followed by a stage 1 invalidation for them),
	 * so the whole VMID goes too. Relaxed: nr_nested changes under
	 * cfg_lock while no table of the nested banks is in use yet. */
	if (!ret && dom->stage == 2 && plat_load_rlx32(&dom->nr_nested)) {
		v2_count(dom->drv, tlbis, 1);
		ret = v2_write(dom->drv, V2_TLBIVMID, 4, dom->vmid);
		if (!ret)
			ret = v2_global_sync(dom->drv);
	}
	return ret;
}

/* The domain if it has been attached (bound to a table), else NULL. */
static struct iopt_smmuv2_drv_domain *dom_bound(void *cookie)
{
	struct iopt_smmuv2_drv_domain *dom = cookie;

	/* Acquire pairs with the release in bind_table() (smmuv2_probe.c):
	 * pgsizes, granule and va64 are set. */
	return dom && plat_load_acq64(&dom->pt) ? dom : NULL;
}

/* One by-address invalidation (reg: TLBIVA(L) or TLBIIPAS2(L)). */
static int inv_one(struct iopt_smmuv2_drv_domain *dom, uint64_t reg,
		   uint64_t addr)
{
	struct iopt_smmuv2_drv *drv = dom->drv;
	uint64_t off = v2_cb_off(drv, dom->cb, reg);

	v2_count(drv, tlbis, 1);
	if (dom->stage == 2)
		return v2_write(drv, off, 8, addr >> 12);
	if (dom->va64)
		return v2_write(drv, off, 8,
				(addr >> 12) | ((uint64_t)dom->asid << 48));
	return v2_write(drv, off, 4, (addr & ~0xfffull & 0xffffffffull) | dom->asid);
}

static int inv_all(struct iopt_smmuv2_drv_domain *dom)
{
	struct iopt_smmuv2_drv *drv = dom->drv;
	int ret;

	v2_count(drv, flush_alls, 1);
	v2_count(drv, tlbis, 1);
	if (dom->stage == 2) {
		ret = v2_write(drv, V2_TLBIVMID, 4, dom->vmid);
		return ret ? ret : v2_global_sync(drv);
	}
	uint64_t val, reg = v2_inv_all_reg(dom, &val);

	ret = v2_write(drv, v2_cb_off(drv, dom->cb, reg), 4, val);
	return ret ? ret : iopt_smmuv2_drv_tlb_sync(dom);
}

static uint64_t step_of(const struct iopt_smmuv2_drv_domain *dom,
			uint64_t granule)
{
	if (granule && !(granule & (granule - 1)) && (granule & dom->pgsizes))
		return granule;
	return dom->granule;
}

static void tlb_flush_all(void *cookie)
{
	struct iopt_smmuv2_drv_domain *dom = dom_bound(cookie);

	/* A timed-out sync is counted by the poll loop. */
	if (dom)
		inv_all(dom);
}

/*
 * By-address invalidation of [iova, iova + size) without a sync (leaf:
 * the L forms). More than V2_INV_MAX_STEPS steps: the whole ASID
 * (TLBIASID, completed by the bank's next sync) or, at stage 2, the whole
 * VMID with its global sync done here (a bank's sync does not cover
 * TLBIVMID in the model).
 */
static int inv_range(struct iopt_smmuv2_drv_domain *dom, uint64_t iova,
		     uint64_t size, uint64_t granule, bool leaf)
{
	struct iopt_smmuv2_drv *drv = dom->drv;
	uint64_t step = step_of(dom, granule);
	uint64_t start = iova & ~(step - 1), end = iova + size - 1;
	uint64_t reg = dom->stage == 2 ? (leaf ? V2_CB_TLBIIPAS2L : V2_CB_TLBIIPAS2) :
					 (leaf ? V2_CB_TLBIVAL : V2_CB_TLBIVA);
	int ret;

	if ((end - start) / step >= V2_INV_MAX_STEPS) {
		v2_count(drv, flush_alls, 1);
		v2_count(drv, tlbis, 1);
		if (dom->stage == 2) {
			ret = v2_write(drv, V2_TLBIVMID, 4, dom->vmid);
			return ret ? ret : v2_global_sync(drv);
		}
		uint64_t val, all = v2_inv_all_reg(dom, &val);

		return v2_write(drv, v2_cb_off(drv, dom->cb, all), 4, val);
	}
	for (uint64_t a = start;; a += step) {
		ret = inv_one(dom, reg, a);
		if (ret || end - a < step)
			return ret;
	}
}

int iopt_smmuv2_drv_inv_range(struct iopt_smmuv2_drv_domain *dom,
			      uint64_t iova, uint64_t size, uint64_t granule,
			      bool leaf)
{
	if (!dom || !size || iova + size - 1 < iova)
		return -EINVAL;
	if (dom_unbound(dom))
		return 0;
	return inv_range(dom, iova, size, granule, leaf);
}

int iopt_smmuv2_drv_flush_all(struct iopt_smmuv2_drv_domain *dom)
{
	if (!dom)
		return -EINVAL;
	if (dom_unbound(dom))
		return 0;
	return inv_all(dom);
}

static void tlb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			   void *cookie)
{
	struct iopt_smmuv2_drv_domain *dom = dom_bound(cookie);

	if (!dom || !size || iova + size - 1 < iova)
		return;
	/* A failure is counted by the poll loop (timeouts); a register
	 * write cannot fail for offsets the driver computed. */
	if (!inv_range(dom, iova, size, granule, false))
		iopt_smmuv2_drv_tlb_sync(dom);
}

static void tlb_add_page(struct iopt_pgtable_gather *gather, uint64_t iova,
			 uint64_t granule, void *cookie)
{
	struct iopt_smmuv2_drv_domain *dom = dom_bound(cookie);

	(void)gather;
	(void)granule;
	if (dom)
		inv_one(dom, dom->stage == 2 ? V2_CB_TLBIIPAS2L : V2_CB_TLBIVAL, iova);
}

static void tlb_sync(void *cookie)
{
	struct iopt_smmuv2_drv_domain *dom = dom_bound(cookie);

	if (dom)
		iopt_smmuv2_drv_tlb_sync(dom);
}

static const struct iopt_pgtable_tlb_ops v2_tlb_ops = {
	.flush_all = tlb_flush_all,
	.flush_walk = tlb_flush_walk,
	.add_page = tlb_add_page,
	.sync = tlb_sync,
};

const struct iopt_pgtable_tlb_ops *iopt_smmuv2_drv_tlb_ops(void)
{
	return &v2_tlb_ops;
}

int iopt_smmuv2_drv_iova_to_phys(struct iopt_smmuv2_drv_domain *dom,
				 uint64_t iova, uint64_t *pa)
{
	struct iopt_smmuv2_drv *drv;
	uint64_t v = 0, par = 0, start;
	int ret;

	if (!pa || !dom_bound(dom))
		return -EINVAL;
	drv = dom->drv;
	/* The bank's lock, as Linux's cb_lock: one ATS1* at a time per bank
	 * (a write while ATSR.ACTIVE would be ignored by the model). */
	plat_lock(&dom->lock);
	v2_count(drv, ats_ops, 1);
	ret = v2_write(drv, v2_cb_off(drv, dom->cb, V2_CB_ATS1PR), 8,
		       iova & ~0xfffull);
	start = v2_now(drv);
	while (!ret) {
		ret = v2_read(drv, v2_cb_off(drv, dom->cb, V2_CB_ATSR), 4, &v);
		if (ret || !(v & 1))
			break;
		if (v2_now(drv) - start > us_cycles(drv, V2_ATS_LIMIT_US)) {
			ret = -ETIMEDOUT;
			break;
		}
		v2_udelay(drv, us_cycles(drv, V2_ATS_STEP_US), UINT64_MAX);
	}
	if (!ret)
		ret = v2_read(drv, v2_cb_off(drv, dom->cb, V2_CB_PAR), 8, &par);
	plat_unlock(&dom->lock);
	if (ret)
		return ret;
	if (par & 1)
		return -ENOENT;
	*pa = (par & 0x0000fffffffff000ull) | (iova & 0xfff);
	return 0;
}

int iopt_smmuv2_drv_resume(struct iopt_smmuv2_drv_domain *dom, bool terminate)
{
	int ret;

	if (!dom)
		return -EINVAL;
	ret = v2_write(dom->drv, v2_cb_off(dom->drv, dom->cb, V2_CB_FSR), 4,
		       V2_FSR_FAULT);
	return ret ? ret : v2_write(dom->drv, v2_cb_off(dom->drv, dom->cb,
							V2_CB_RESUME), 4,
				    terminate ? 1 : 0);
}

int iopt_smmuv2_drv_translate(struct iopt_smmuv2_drv *drv,
			      const struct iopt_smmuv2_txn *txn,
			      struct iopt_smmuv2_resp *resp)
{
	int ret;

	if (!drv || !txn || !resp)
		return -EINVAL;
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);

	ret = iopt_smmuv2_translate(drv->smmu, txn, c, resp);
	drv_tl_exit(&drv->tl);
	return ret;
}

int iopt_smmuv2_drv_read(struct iopt_smmuv2_drv *drv, uint64_t off,
			 unsigned size, uint64_t *val)
{
	if (!drv || !val)
		return -EINVAL;
	return v2_read(drv, off, size, val);
}

uint64_t iopt_smmuv2_drv_cycle(struct iopt_smmuv2_drv *drv)
{
	return drv_tl_now(&drv->tl);
}
