/* SPDX-License-Identifier: MIT */
/*
 * The driver's register access and the poll loop every wait uses.
 *
 * Each model call is made at a cycle from the timeline (drv_timeline.h,
 * with its ordering contract T1-T4): with cfg.clock, a reading of it and
 * no driver lock — the model's lock orders the calls, as the device
 * orders the accesses that reach it; with the virtual clock, under
 * drv->tl.lock at last_cycle + cfg.mmio_cycles per access, moved on by the
 * poll delays while the driver waits — the model is then run up to the
 * new cycle so that it makes progress although nothing else drives it
 * (only as far as its next internal event: see bus_wait()).
 */
#include <errno.h>

#include "smmuv3_drv_internal.h"
#include "smmuv3_regs.h"

uint64_t drv_now(struct iopt_smmuv3_drv *drv)
{
	/* No lock: a waiter's timeout check never queues behind the thread
	 * calling the model (drv_tl_now()). */
	return drv_tl_now(&drv->tl);
}

int drv_read32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t *val)
{
	uint64_t v = 0;
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	int ret = iopt_smmuv3_mmio_read(drv->smmu, off, 4, &v, c);

	drv_tl_exit(&drv->tl);
	*val = (uint32_t)v;
	return ret;
}

int drv_write32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t val)
{
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	int ret = iopt_smmuv3_mmio_write(drv->smmu, off, 4, val, c);

	drv_tl_exit(&drv->tl);
	return ret;
}

int drv_write64(struct iopt_smmuv3_drv *drv, uint64_t off, uint64_t val)
{
	uint64_t c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	int ret = iopt_smmuv3_mmio_write(drv->smmu, off, 8, val, c);

	drv_tl_exit(&drv->tl);
	return ret;
}

/*
 * Let up to delay cycles pass. With an external clock the CPU relaxes.
 * With the virtual clock, time moves on only as far as the model's next
 * internal event (the next command completing): a wait for other CPUs
 * (an owner that has not written PROD yet) costs no model time, and a
 * stopped command queue, which has no next event, stops time — the host
 * bound (cfg.host_timeout_ns) ends that wait. Inlined into both waits of
 * drv_poll_step(), as the compiler chose while that function called no
 * function pointer.
 */
static inline __attribute__((always_inline)) void
bus_wait(struct iopt_smmuv3_drv *drv, uint64_t delay)
{
	if (drv->cfg.clock) {
		for (uint64_t i = 0; i < delay && i < 1024; i++)
			plat_cpu_relax();
		return;
	}
	uint64_t now = drv_tl_enter(&drv->tl, 0);
	uint64_t next = iopt_smmuv3_next_event(drv->smmu);
	uint64_t to = now;

	if (next != UINT64_MAX && next > now)
		to = next - now < delay ? next : now + delay;
	/* Under tl.lock (virtual clock): the relaxed store of T4. */
	plat_store_rlx64(&drv->tl.last, to);
	iopt_smmuv3_run_until(drv->smmu, to);
	drv_tl_exit(&drv->tl);
	plat_cpu_relax();
}

int iopt_smmuv3_drv_translate(struct iopt_smmuv3_drv *drv,
			      const struct iopt_smmuv3_txn *txn,
			      struct iopt_smmuv3_resp *resp)
{
	uint64_t c;
	int ret;

	if (!drv || !txn || !resp)
		return -EINVAL;
	c = drv_tl_enter(&drv->tl, drv->cfg.mmio_cycles);
	ret = iopt_smmuv3_translate(drv->smmu, txn, c, resp);
	drv_tl_exit(&drv->tl);
	return ret;
}

uint64_t iopt_smmuv3_drv_cycle(struct iopt_smmuv3_drv *drv)
{
	return drv_tl_now(&drv->tl);
}

void drv_poll_init(struct iopt_smmuv3_drv *drv, struct drv_poll *p,
		   void (*backoff)(struct iopt_smmuv3_drv *drv))
{
	p->backoff = backoff;
	p->start_cycle = drv_now(drv);
	p->start_ns = plat_clock_ns();
	p->spins = 0;
	p->delay = 1;
}

/*
 * Linux's queue_poll: a few polls with only a relax between them, then
 * waits that double up to DRV_BACKOFF_MAX; the timeout is in model time
 * (cfg.sync_timeout_cycles), bounded in host time by cfg.host_timeout_ns.
 */
int drv_poll_step(struct iopt_smmuv3_drv *drv, struct drv_poll *p)
{
	if (p->spins < DRV_SPIN_POLLS) {
		p->spins++;
		bus_wait(drv, drv->cfg.mmio_cycles);
	} else {
		bus_wait(drv, p->delay);
		if (p->delay < DRV_BACKOFF_MAX)
			p->delay *= 2;
		if (p->backoff)
			p->backoff(drv);
	}
	if (drv_now(drv) - p->start_cycle > drv->timeout_cycles ||
	    plat_clock_ns() - p->start_ns > drv->cfg.host_timeout_ns)
		return -ETIMEDOUT;
	return 0;
}

int drv_write_ack(struct iopt_smmuv3_drv *drv, uint64_t reg, uint64_t ack,
		  uint32_t val)
{
	struct drv_poll p;
	uint32_t got;
	int ret = drv_write32(drv, reg, val);

	if (ret)
		return ret;
	drv_poll_init(drv, &p, NULL);
	for (;;) {
		ret = drv_read32(drv, ack, &got);
		if (ret)
			return ret;
		if (got == val)
			return 0;
		ret = drv_poll_step(drv, &p);
		if (ret)
			return ret;
	}
}
