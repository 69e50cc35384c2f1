/* SPDX-License-Identifier: MIT */
/*
 * The timeline a driver keeps toward a model (SMMUv3 or SMMUv2), shared
 * by both drivers: at which cycle each model call is made, and how calls
 * from several CPUs are ordered.
 *
 * A model takes a cycle with every call and never goes back in time. Two
 * clocks:
 *
 *  - External (cfg.clock, e.g. a free-running runner's clock or the
 *    simulation's iopt_sim_model_cycles()): no driver lock. Each call reads
 *    the clock (never earlier than cfg.start_cycle) and calls the model;
 *    the model's own lock orders the calls that reach it, as a device
 *    orders the register accesses that reach it — on hardware no CPU-side
 *    lock serialises MMIO. Two CPUs may read the clock in one order and
 *    reach the model in the other, so the model must take a cycle behind
 *    its time as its time (params.shared_clock, or a runner attached);
 *    the clock must be thread-safe and never go back. One CPU's calls
 *    reach the model in its program order at cycles that never decrease.
 *  - Virtual (cfg.clock NULL): the driver's own counter, tl->last, moved
 *    by the caller's advance on every call. Taking a tick and calling the
 *    model at it must be one step (a model that refuses late cycles would
 *    refuse a call that lost the race to a later tick), so every model call
 *    is made with tl->lock held, and the calls are totally ordered by it.
 *
 * Ordering contract:
 *  T1. Model calls of one CPU reach the model in program order (each is a
 *      synchronous call; the model's lock is released before it returns).
 *  T2. Model calls of different CPUs are ordered by the model's lock (its
 *      plat_mutex; a lock-free TLB hit is ordered after the locked
 *      path's time and its own CPU's earlier hits, not other CPUs' hits,
 *      and every locked call after all hits:
 *      src/smmu_model/common/model_core.h); a call that a CPU starts after
 *      another CPU's call returned is ordered after it (the unlock's
 *      release pairs with the next lock's acquire). The driver adds no
 *      order of its own with an external clock: whatever must reach the
 *      model in a given order across CPUs is ordered by the driver's
 *      algorithm (the command queue's owner_prod hand-off, G3 in
 *      smmuv3_cmdq.c; the SMMUv2 sync locks), never by the timeline.
 *  T3. Memory a CPU wrote before a model call (a cleared descriptor
 *      before its TLBI, say) is visible to the model in that call: the
 *      model runs on the calling CPU, after those stores in program
 *      order. Memory other CPUs wrote is the driver algorithm's to order
 *      before the call (the cmdq's valid-bit release and its owner's
 *      acquire before the PROD write, G2 in smmuv3_cmdq.c).
 *  T4. Virtual clock: tl->last is written only with tl->lock held (a
 *      relaxed store), and read without it as a snapshot (relaxed; the
 *      lock's release/acquire orders it for the next holder).
 *
 * Every call is bracketed by plat_mmio_begin()/plat_mmio_end() on the
 * model (platform.h): nothing on the host; on the simulation the device's
 * register port serialises the accesses (a busy-until time per model)
 * and the model call runs as one step, with the clock read inside the
 * bracket so that it gives the time the access reaches the device.
 */
#ifndef IOPT_DRV_TIMELINE_H
#define IOPT_DRV_TIMELINE_H

#include <stdint.h>

#include "../platform/platform.h"

struct drv_timeline {
	struct plat_spinlock lock;	/* virtual clock: held around every model call */
	uint64_t last;			/* virtual clock: under lock (T4) */
	uint64_t start;			/* external clock: never earlier */
	uint64_t (*clock)(void *ctx);	/* NULL: the virtual clock */
	void *clock_ctx;
	const void *dev;		/* the model (plat_mmio_begin()) */
};

static inline void drv_tl_init(struct drv_timeline *tl, const void *dev,
			       uint64_t (*clock)(void *ctx), void *ctx,
			       uint64_t start)
{
	plat_spin_init(&tl->lock);
	tl->last = start;
	tl->start = start;
	tl->clock = clock;
	tl->clock_ctx = ctx;
	tl->dev = dev;
}

/* The external clock, read without a lock (any thread: it is thread-safe
 * by the contract above). */
static inline uint64_t drv_tl_read(const struct drv_timeline *tl)
{
	uint64_t c = tl->clock(tl->clock_ctx);

	return c < tl->start ? tl->start : c;
}

/*
 * Start a model call: returns the cycle to make it at. Virtual clock:
 * takes tl->lock and moves the clock by advance. Pair with drv_tl_exit().
 */
static inline uint64_t drv_tl_enter(struct drv_timeline *tl, uint64_t advance)
{
	uint64_t c;

	if (tl->clock) {
		plat_mmio_begin(tl->dev);
		return drv_tl_read(tl);
	}
	plat_spin_lock(&tl->lock);
	plat_mmio_begin(tl->dev);
	c = tl->last + advance;
	/* Relaxed: under tl->lock; read as a snapshot by drv_tl_now() (T4). */
	plat_store_rlx64(&tl->last, c);
	return c;
}

static inline void drv_tl_exit(struct drv_timeline *tl)
{
	plat_mmio_end(tl->dev);
	if (!tl->clock)
		plat_spin_unlock(&tl->lock);
}

/*
 * The current cycle, any thread, no lock: a reading of the external clock,
 * or the virtual clock's latest tick (a snapshot: relaxed, pairs with the
 * relaxed store in drv_tl_enter(), T4).
 */
static inline uint64_t drv_tl_now(const struct drv_timeline *tl)
{
	if (tl->clock)
		return drv_tl_read(tl);
	return plat_load_rlx64(&tl->last);
}

#endif /* IOPT_DRV_TIMELINE_H */
