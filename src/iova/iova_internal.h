/* SPDX-License-Identifier: MIT */
/* IOVA domain internals shared by iova.c, rcache.c and fq.c. */
#ifndef IOPT_IOVA_INTERNAL_H
#define IOPT_IOVA_INTERNAL_H

#include <iopgtable/iova.h>

#include "../platform/platform.h"
#include "buddy.h"
#include "live.h"
#include "rset.h"

#define IOVA_MAX_CLASSES 16


struct iova_stripe {
	struct plat_spinlock lock;
	struct buddy buddy;
	struct iova_live live;
	uint64_t allocated;	/* pages */
	/* Pad to its own cache lines: stripes are taken by different CPUs. */
	char pad[64];
} __attribute__((aligned(64)));

struct iova_mag {
	unsigned n;
	uint64_t pfn[];
};

struct iova_cpu_cache {
	struct plat_spinlock lock;
	struct iova_mag *loaded, *prev;
	uint64_t hits, misses;		/* under lock */
} __attribute__((aligned(64)));

/* Bit of a live record's size: the range sits in a cache (checked mode). */
#define IOVA_IN_CACHE (1ull << 63)

struct iova_depot {
	struct plat_spinlock lock;
	struct iova_mag **mags;
	unsigned n;
	uint64_t last_trim;
} __attribute__((aligned(64)));

struct iopt_iova {
	struct iopt_iova_cfg cfg;
	unsigned space_bits;		/* pfns are below 2^space_bits */
	unsigned chunk_order;		/* stripe interleave unit */
	unsigned stripe_shift;		/* log2(nr_stripes) */
	struct iova_stripe *stripes;
	/* Allocations larger than a chunk (global path). */
	struct plat_spinlock big_lock;
	struct iova_live big;

	/* Caches: classes x cpus, and a depot per class. */
	unsigned nr_classes;
	struct iova_cpu_cache *cpu;	/* [class * nr_cpus + cpu] */
	struct iova_depot *depot;	/* [class] */

	uint64_t st_flushes, st_global;
	/*
	 * Smallest order known to fail below the 32-bit limit (64: none), as
	 * Linux's max32_alloc_size: a PCI device's first try on a full 32-bit
	 * space then fails at once instead of searching every stripe. Set
	 * after a failed search, reset by any free below the limit; a race
	 * between the two can only cost one futile search or one early
	 * failure of the 32-bit try (which falls back to the full limit).
	 */
	uint64_t fail32_order;
	uint64_t limit32;
};

/* Free a range the caches held (its record may carry IOVA_IN_CACHE). */
void iova_free_from_cache(struct iopt_iova *d, uint64_t pfn, uint64_t size);

/* The stripe owning pfn's chunk. */
static inline unsigned iova_stripe_of(const struct iopt_iova *d, uint64_t pfn)
{
	return (unsigned)(pfn >> d->chunk_order) & ((1u << d->stripe_shift) - 1);
}

static inline uint64_t iova_now(const struct iopt_iova *d)
{
	return d->cfg.clock ? d->cfg.clock(d->cfg.clock_ctx) : plat_clock_ns();
}

static inline unsigned iova_cpu(const struct iopt_iova *d, unsigned cpu)
{
	if (cpu == IOPT_IOVA_CPU_SELF)
		cpu = plat_cpu_id();
	/* A division costs more than the rest of a cache hit: avoid it. */
	return plat_likely(cpu < d->cfg.nr_cpus) ? cpu : cpu % d->cfg.nr_cpus;
}

/* rcache.c */
int iova_rcache_init(struct iopt_iova *d);
void iova_rcache_fini(struct iopt_iova *d);
bool iova_rcache_get(struct iopt_iova *d, unsigned cls, uint64_t limit_pfn,
		     unsigned cpu, uint64_t *pfn);
/* false: not cached (the caller frees to the allocator). */
bool iova_rcache_put(struct iopt_iova *d, unsigned cls, uint64_t pfn,
		     unsigned cpu);
uint64_t iova_rcache_count(struct iopt_iova *d);

#endif
