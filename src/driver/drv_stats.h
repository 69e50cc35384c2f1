/* SPDX-License-Identifier: MIT */
/*
 * A driver instance's statistics counters (both drivers), kept per CPU.
 *
 * One shared counter block would be a cache line every CPU writes on every
 * TLBI and sync: under contention its hand-overs space the CPUs' register
 * accesses as a lock would (on the simulation: one line transfer, 48 ns,
 * per count), which is what the driver must not add. So each counter has
 * one copy per CPU, in 64-byte-aligned blocks of its own; adding is a
 * relaxed fetch-add on the calling CPU's copy (atomic: two threads may run
 * on one CPU id; pairs with nothing, a statistic), and reading sums the
 * copies (relaxed loads: a snapshot).
 */
#ifndef IOPT_DRV_STATS_H
#define IOPT_DRV_STATS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "../platform/platform.h"
#include "drv_alloc.h"

#define DRV_STATS_BLOCKS 256	/* IOPT_SIM_MAX_CPUS */

struct drv_stats {
	uint64_t *blk;		/* nblk blocks of words counters */
	unsigned nblk, words;
};

/* Counters for a stats struct of bytes (uint64_t fields only). 0 or
 * -ENOMEM (nothing allocated). */
static inline int drv_stats_init(struct drv_stats *s, size_t bytes)
{
	s->words = (unsigned)((bytes / sizeof(uint64_t) + 7) & ~(size_t)7);
	/* At least DRV_STATS_BLOCKS: CPU ids can pass plat_cpu_count()
	 * (simulated CPUs started as threads); beyond, ids share blocks. */
	s->nblk = plat_cpu_count();
	if (s->nblk < DRV_STATS_BLOCKS)
		s->nblk = DRV_STATS_BLOCKS;
	s->blk = drv_zalloc((size_t)s->nblk * s->words * sizeof(uint64_t), 64);
	return s->blk ? 0 : -ENOMEM;
}

static inline void drv_stats_fini(struct drv_stats *s)
{
	free(s->blk);
	s->blk = NULL;
}

/* Add n to the counter at byte offset off of the stats struct. */
static inline void drv_stats_add(struct drv_stats *s, size_t off, uint64_t n)
{
	unsigned b = plat_cpu_id() % s->nblk;

	/* Pairs with nothing: a statistic (drv_stats_sum's loads). */
	plat_fetch_add_rlx64(&s->blk[(size_t)b * s->words + off / sizeof(uint64_t)], n);
}

/* The sums, into a stats struct of bytes. */
static inline void drv_stats_sum(const struct drv_stats *s, void *out,
				 size_t bytes)
{
	uint64_t *dst = out;

	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++) {
		dst[i] = 0;
		for (unsigned b = 0; b < s->nblk; b++)
			/* Relaxed: pairs with drv_stats_add()'s adds. */
			dst[i] += plat_load_rlx64(&s->blk[(size_t)b * s->words + i]);
	}
}

#endif /* IOPT_DRV_STATS_H */
