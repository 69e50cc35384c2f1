/* SPDX-License-Identifier: MIT */
/*
 * The driver's timeline and register access, and the poll loop every wait
 * uses.
 *
 * The model takes a cycle with every call and never goes back in time, so
 * each model call the driver makes is made under drv->tl.lock at a cycle no
 * earlier than the one before (drv->tl.last). The cycle comes from
 * cfg.clock when there is one (the free-running runner's clock, say), or
 * from the virtual clock: last_cycle + cfg.mmio_cycles per access, and the
 * poll delays while the driver waits — the model is then run up to the new
 * cycle so that it makes progress although nothing else drives it (only
 * as far as its next internal event: see bus_wait()).
 */
#include <errno.h>

#include "smmuv3_drv_internal.h"
#include "smmuv3_regs.h"

/* The cycle of the next model call. Call with the bus (tl.lock) held. */
static uint64_t bus_cycle(struct iopt_smmuv3_drv *drv, uint64_t advance)
{
	return drv_tl_cycle(&drv->tl, advance);
}

uint64_t drv_now(struct iopt_smmuv3_drv *drv)
{
	uint64_t c;

	plat_spin_lock(&drv->tl.lock);
	c = drv->tl.clock ? bus_cycle(drv, 0) : drv->tl.last;
	plat_spin_unlock(&drv->tl.lock);
	return c;
}

int drv_read32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t *val)
{
	uint64_t v = 0;
	int ret;

	plat_spin_lock(&drv->tl.lock);
	plat_mmio_cost();
	ret = iopt_smmu_mmio_read(drv->smmu, off, 4, &v,
				  bus_cycle(drv, drv->cfg.mmio_cycles));
	plat_spin_unlock(&drv->tl.lock);
	*val = (uint32_t)v;
	return ret;
}

int drv_write32(struct iopt_smmuv3_drv *drv, uint64_t off, uint32_t val)
{
	int ret;

	plat_spin_lock(&drv->tl.lock);
	plat_mmio_cost();
	ret = iopt_smmu_mmio_write(drv->smmu, off, 4, val,
				   bus_cycle(drv, drv->cfg.mmio_cycles));
	plat_spin_unlock(&drv->tl.lock);
	return ret;
}

int drv_write64(struct iopt_smmuv3_drv *drv, uint64_t off, uint64_t val)
{
	int ret;

	plat_spin_lock(&drv->tl.lock);
	plat_mmio_cost();
	ret = iopt_smmu_mmio_write(drv->smmu, off, 8, val,
				   bus_cycle(drv, drv->cfg.mmio_cycles));
	plat_spin_unlock(&drv->tl.lock);
	return ret;
}

/*
 * Let up to delay cycles pass. With an external clock the CPU relaxes.
 * With the virtual clock, time moves on only as far as the model's next
 * internal event (the next command completing): a wait for other CPUs
 * (an owner that has not written PROD yet) costs no model time, and a
 * stopped command queue, which has no next event, stops time — the host
 * bound (cfg.host_timeout_ns) ends that wait.
 */
static void bus_wait(struct iopt_smmuv3_drv *drv, uint64_t delay)
{
	if (drv->cfg.clock) {
		for (uint64_t i = 0; i < delay && i < 1024; i++)
			plat_cpu_relax();
		return;
	}
	plat_spin_lock(&drv->tl.lock);
	uint64_t now = drv->tl.last;
	uint64_t next = iopt_smmu_next_event(drv->smmu);
	uint64_t to = now;

	if (next != UINT64_MAX && next > now)
		to = next - now < delay ? next : now + delay;
	iopt_smmu_run_until(drv->smmu, bus_cycle(drv, to - now));
	plat_spin_unlock(&drv->tl.lock);
	plat_cpu_relax();
}

int iopt_smmuv3_drv_translate(struct iopt_smmuv3_drv *drv,
			      const struct iopt_smmu_txn *txn,
			      struct iopt_smmu_resp *resp)
{
	int ret;

	if (!drv || !txn || !resp)
		return -EINVAL;
	plat_spin_lock(&drv->tl.lock);
	ret = iopt_smmu_translate(drv->smmu, txn,
				  bus_cycle(drv, drv->cfg.mmio_cycles), resp);
	plat_spin_unlock(&drv->tl.lock);
	return ret;
}

uint64_t iopt_smmuv3_drv_cycle(struct iopt_smmuv3_drv *drv)
{
	return drv_tl_last(&drv->tl);
}

void drv_poll_init(struct iopt_smmuv3_drv *drv, struct drv_poll *p)
{
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
		/* A stopped queue never completes anything: recover it. */
		drv_cmdq_recover(drv);
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
	drv_poll_init(drv, &p);
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
