/* SPDX-License-Identifier: MIT */
/*
 * The timeline a driver keeps toward a model (SMMUv3 or SMMUv2), shared
 * by both drivers.
 *
 * A model takes a cycle with every call and rejects a cycle earlier than
 * its time, so each model call a driver makes is made with tl->lock held,
 * at a cycle no earlier than the one before (tl->last). The cycle comes
 * from the external clock when there is one (a free-running runner's,
 * say; a reading behind tl->last is taken as tl->last), else from the
 * virtual clock: tl->last + the caller's advance.
 */
#ifndef IOPT_DRV_TIMELINE_H
#define IOPT_DRV_TIMELINE_H

#include <stdint.h>

#include "../platform/platform.h"

struct drv_timeline {
	struct plat_spinlock lock;	/* held around every model call */
	uint64_t last;			/* under lock; read relaxed by drv_tl_last() */
	uint64_t (*clock)(void *ctx);	/* NULL: the virtual clock */
	void *clock_ctx;
};

static inline void drv_tl_init(struct drv_timeline *tl,
			       uint64_t (*clock)(void *ctx), void *ctx,
			       uint64_t start)
{
	plat_spin_init(&tl->lock);
	tl->last = start;
	tl->clock = clock;
	tl->clock_ctx = ctx;
}

/* The cycle of the next model call. Call with tl->lock held. */
static inline uint64_t drv_tl_cycle(struct drv_timeline *tl, uint64_t advance)
{
	uint64_t c;

	if (tl->clock) {
		c = tl->clock(tl->clock_ctx);
		if (c < tl->last)
			c = tl->last;
	} else {
		c = tl->last + advance;
	}
	/* Relaxed: read by drv_tl_last() as a snapshot; the model calls
	 * themselves are ordered by tl->lock. */
	plat_store_rlx64(&tl->last, c);
	return c;
}

/* The latest cycle handed to the model: any thread, a snapshot. */
static inline uint64_t drv_tl_last(const struct drv_timeline *tl)
{
	/* Pairs with the relaxed store in drv_tl_cycle(). */
	return plat_load_rlx64(&tl->last);
}

#endif /* IOPT_DRV_TIMELINE_H */
