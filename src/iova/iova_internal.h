/* SPDX-License-Identifier: MIT */
/* IOVA domain internals shared by iova.c, rcache.c and fq.c. */
#ifndef IOPT_IOVA_INTERNAL_H
#define IOPT_IOVA_INTERNAL_H

#include <iopgtable/iova.h>

#include "../platform/platform.h"
#include "fmap.h"
#include "live.h"

#define IOVA_MAX_CLASSES 16


struct iova_stripe {
	struct plat_spinlock lock;
	struct fmap fmap;	/* its pages, as indices of to_local() */
	/* Its live allocations of more than FMAP_REC_MAX pages (smaller
	 * ones are recorded in the free map's leaves). */
	struct iova_live live;
	uint64_t allocated;	/* pages */
	/* Frees below the 32-bit limit so far: written under the lock
	 * (relaxed store), read without it by a failed 32-bit search after
	 * its hint store and a full fence (see iova_alloc()). */
	uint64_t frees32;
	/* Under the lock: the last allocation's cap and its local_ceil(cap
	 * + 1) in this stripe (iova.c stripe_alloc()); top_cap UINT64_MAX:
	 * none. */
	uint64_t top_cap, top;
	/* Pad to its own cache lines: stripes are taken by different CPUs. */
	char pad[64];
} __attribute__((aligned(64)));

struct iova_mag {
	unsigned n;
	unsigned owner;		/* the CPU that spilled it to the depot */
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
	/* Derived, for the stripe arithmetic (iova.c): 2^chunk_order - 1,
	 * nr_stripes - 1. */
	uint64_t chunk_mask;
	unsigned stripe_mask;
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
	 * Smallest size (pages) known to fail below the 32-bit limit
	 * (IOVA_FAIL32_NONE: none), as Linux's max32_alloc_size: a PCI
	 * device's first try on a full 32-bit space then fails at once
	 * instead of searching every stripe. Set after a failed search,
	 * reset by any free below the limit. The two sides form a store-
	 * buffering pair, each with a full fence: the searcher stores the
	 * hint, fences, and re-reads the stripes' frees32 (resetting the hint
	 * if any moved since it searched that stripe); a free bumps frees32,
	 * fences, and reads the hint (resetting it if set). One of the two
	 * sees the other, so a hint never outlives a free it raced with.
	 */
	uint64_t fail32_size;
	uint64_t limit32;
	/* IOPT_IOVA_SEARCH_RBTREE_WALK's counts (treewalk.c); NULL otherwise. */
	struct iova_walk *walk;
};

#define IOVA_FAIL32_NONE UINT64_MAX

/* Free a range the caches held (its record may carry IOVA_IN_CACHE).
 * 0, or -ENOMEM (no host memory: nothing changed, the caller keeps it). */
int iova_free_from_cache(struct iopt_iova *d, uint64_t pfn, uint64_t size);

/*
 * The checks of iopt_iova_free_cached() without the free: 0 or -EINVAL.
 * *marked: the live record now carries IOVA_IN_CACHE (checked mode, or a
 * size above the caches), so that a second free of the same range fails
 * until iova_free_checked() has run.
 */
int iova_free_check(struct iopt_iova *d, uint64_t pfn, uint64_t size,
		    bool *marked);
/* Complete a free that iova_free_check() accepted: 0 or -ENOMEM (no host
 * memory: nothing changed, the range is still held by the caller). */
int iova_free_checked(struct iopt_iova *d, uint64_t pfn, uint64_t size,
		      unsigned cpu, bool marked);
/* Undo the mark of an accepted free that then failed with -ENOMEM. */
void iova_free_check_undo(struct iopt_iova *d, uint64_t pfn, uint64_t size);

/* The stripe owning pfn's chunk. */
static inline unsigned iova_stripe_of(const struct iopt_iova *d, uint64_t pfn)
{
	return (unsigned)(pfn >> d->chunk_order) & d->stripe_mask;
}

static inline uint64_t iova_now(const struct iopt_iova *d)
{
	return d->cfg.clock ? d->cfg.clock(d->cfg.clock_ctx) : plat_clock_ns();
}

/* One try at a spinlock, plat_spin_lock()'s first step, so that an
 * uncontended fast path makes no call: true if now held. Acquire: pairs
 * with the release store in plat_spin_unlock(). */
static inline bool iova_trylock(struct plat_spinlock *l)
{
	plat_spin_hold();
	if (plat_xchg_acq32(&l->v, 1) == 0)
		return true;
	plat_spin_unhold();
	return false;
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
/* iova_rcache_put(), and when the range is not cached,
 * iova_free_from_cache(): 0 or -ENOMEM (nothing changed). Only for a
 * range of class cls whose live record carries no IOVA_IN_CACHE mark
 * (cfg.check_cached_frees false). */
int iova_rcache_free(struct iopt_iova *d, unsigned cls, uint64_t pfn,
		     unsigned cpu);
/* Put pfns[0, n) (class cls) in cpu's cache under one lock hold, while
 * its magazines have room: how many it took, from the front. */
unsigned iova_rcache_put_many(struct iopt_iova *d, unsigned cls,
			      const uint64_t *pfns, unsigned n, unsigned cpu);
uint64_t iova_rcache_count(struct iopt_iova *d);
/* Return every CPU's cached ranges to the allocator, and with depots the
 * depots' too (iopt_iova_flush_caches()); counted in st_flushes. */
void iova_rcache_flush(struct iopt_iova *d, bool depots);

/* treewalk.c: the cost of 4.13's tree walk (IOPT_IOVA_SEARCH_RBTREE_WALK).
 * init: 0 or -ENOMEM (d->walk set either way; fini frees it). The notes
 * follow a change of the allocator: a range allocated at pfn by a try
 * whose requested limit was limit (UINT64_MAX: none, a reservation), a
 * range at pfn freed to it, a try under limit that failed (the walk is
 * charged here). mag: the tree lock's pair of one magazine's flush. */
int iova_walk_init(struct iopt_iova *d);
void iova_walk_fini(struct iopt_iova *d);
void iova_walk_alloced(struct iopt_iova *d, uint64_t pfn, uint64_t limit);
void iova_walk_freed(struct iopt_iova *d, uint64_t pfn);
void iova_walk_failed(struct iopt_iova *d, uint64_t limit);
void iova_walk_mag(struct iopt_iova *d);
void iova_walk_stats(struct iopt_iova *d, uint64_t *walks, uint64_t *visits);

#endif
