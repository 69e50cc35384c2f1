/* SPDX-License-Identifier: MIT */
/*
 * IOVA allocation: a striped range allocator with per-CPU caches, and the
 * invalidation policies that decide when a freed range may be reused.
 *
 * Addresses are in pages ("pfn") of the domain's granule. Ranges are
 * [pfn, pfn + size). Limits are inclusive: limit_pfn is the highest page
 * an allocation may include (for a 32-bit DMA mask, 2^32 / granule - 1).
 *
 * Allocator (iopt_iova_*): allocation is top-down below a limit (within
 * the stripe that serves it); every range starts aligned to the power of
 * two at or above its size, and only its size pages need be free and at
 * or below the limit. Worst case O(log space) per allocation and free for
 * sizes up to a stripe chunk, whatever the fragmentation (a buddy system
 * over 64-ary radix bitmaps); a size that is not a power of two, when no
 * whole rounded-up block is free, falls back to visiting free blocks of
 * half that size. Creation is O(stripes x log space) whatever the size of
 * the space. The space is interleaved in chunks among stripes, each with
 * its own lock, so that CPUs rarely share one and every stripe has space
 * below every limit. Larger requests lock every stripe and scan the
 * aligned starts below the limit (linear in the space).
 *
 * Host memory: the allocator's radix nodes come from per-stripe pools
 * refilled before each change, so an operation either completes or fails
 * with -ENOMEM having changed nothing; frees of more than 64 pages too
 * (the range then stays allocated and the free may be retried). A free of
 * at most 64 pages needs no host memory and never fails for it.
 *
 * Per-CPU caches: freed ranges of 1 to 2^max_cached_order pages (sizes
 * rounded up to powers of two) go to a per-CPU magazine (127 entries by
 * default) with a spare; full magazines go to a per-size depot that is
 * trimmed back over time. "cpu" arguments name the CPU whose cache is used:
 * IOPT_IOVA_CPU_SELF for the caller's, or any number below nr_cpus, so
 * that one thread can act as any of many CPUs.
 *
 * Concurrency: every function except create/destroy may be called from any
 * thread at any time. Each stripe, each CPU cache and each depot has a
 * lock; none is held across calls. See docs/iova.md.
 */
#ifndef IOPGTABLE_IOVA_H
#define IOPGTABLE_IOVA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOPT_IOVA_CPU_SELF (~0u)

/* When a cached allocation fails in the tree, flush the caches back
 * into it and try again. */
enum iopt_iova_flush {
	/* Only before the last try; every CPU's cache and the depots
	 * (Linux today; the default). */
	IOPT_IOVA_FLUSH_LAST_RETRY,
	IOPT_IOVA_FLUSH_NEVER,
	/* After every failed try, a PCI device's 32-bit first try included;
	 * every CPU's cache, the depots left as they are (Linux to 4.14). */
	IOPT_IOVA_FLUSH_EVERY_RETRY,
};

/*
 * What a try costs beyond this allocator's own search (cfg.search).
 *
 * IOPT_IOVA_SEARCH_RBTREE_WALK prices every failed try as Linux 4.13's
 * allocator did (drivers/iommu/iova.c of that release: one red-black tree
 * of every allocated range, cached ones included, under one lock): its
 * __alloc_and_insert_iova_range() walks the tree leftwards with rb_prev()
 * from a start node until a gap fits, so a try that finds none visits
 * every node below its start. The start (__get_cached_rbnode()) is the
 * node below cached32 when the try's limit is at or below the 32-bit
 * limit (2^32 / granule - 1) and cached32 is set, else the highest node
 * of the tree. cached32 is set to the new range by every successful
 * allocation whose requested limit is the 32-bit limit; the free of a
 * range from the allocator at or above it (private_free_iova()'s
 * __cached_rbnode_delete_update()) moves it to the next range above the
 * freed one if that starts below the 32-bit limit, else clears it. A
 * failed try therefore visits the ranges below cached32, or every range
 * in the domain (cached ones included, reserved ones too) when cached32
 * is clear or the limit is above 32 bits. A visit of the k-th lowest
 * node reads line k of IOPT_IOVA_WALK_LINES 64-byte lines standing for
 * the nodes, the first time the calling CPU visits it (on simulated CPUs
 * a miss or a fetch from another CPU's cache; later visits would be hits
 * in an engine that models no cache capacity, and are not read), and
 * every visit adds walk_node_ns of busy time (plat_delay_ns(), once per
 * walk: the latency of a node that a real cache no longer holds; 0:
 * none; walks beyond that many nodes read no further lines). Successful
 * tries are not
 * charged a walk (4.13's stops at the first gap, next to its start in
 * the top-down patterns it serves). A flush of the CPU caches then takes
 * and releases the tree's lock once per CPU magazine, loaded and spare,
 * empty or not (4.13's free_cpu_cached_iovas() calling
 * iova_magazine_free_pfns() for each). Where this allocator and 4.13's
 * disagree on whether a try fits, this one's answer stands: only the
 * cost is 4.13's. The tree's counts are kept under that lock after each
 * change of the allocator (a Fenwick tree of the range starts below 4
 * GiB: O(log) per change; host memory at create: 4 bytes a page of the
 * 32-bit space, 8 bytes a CPU and the lines' 8 MiB). Counted in iopt_iova_stats.tree_walks and tree_visits.
 * With it, cfg.nr_stripes 0 means one stripe (4.13's single tree and
 * lock), so that allocation is top-down as 4.13's was.
 */
enum iopt_iova_search {
	IOPT_IOVA_SEARCH_FMAP,		/* the free map's search alone */
	IOPT_IOVA_SEARCH_RBTREE_WALK,	/* also 4.13's walk on failure */
};

#define IOPT_IOVA_WALK_LINES	(1u << 17)	/* 8 MiB of node lines */
#define IOPT_IOVA_WALK_NODE_NS_MAX 1000000u	/* 1 ms a node */

struct iopt_iova_cfg {
	uint64_t granule;	/* bytes per page, a power of two (0: 4096) */
	uint64_t start_pfn;	/* first usable page, >= 1 (0: 1) */
	uint64_t end_pfn;	/* one past the last usable page */
	unsigned nr_stripes;	/* power of two; 0: from nr_cpus, at most 16
				 * (1 with IOPT_IOVA_SEARCH_RBTREE_WALK) */
	unsigned nr_cpus;	/* CPU caches; 0: the machine's CPUs */
	unsigned mag_size;	/* entries per magazine; 0: 127 */
	unsigned max_cached_order; /* cache sizes 1..2^order pages; 0: 5 */
	unsigned depot_max;	/* full magazines per size in the depot; 0: 32 */
	uint64_t trim_ns;	/* depot trim interval; 0: 100 ms */
	enum iopt_iova_flush flush;
	/* Check cached frees against the record of live allocations (double
	 * frees, never-allocated ranges, a range freed again while it waits
	 * in a flush queue), at the cost of the stripe lock on every cached
	 * free and cache hit. Off: cached frees of cached sizes check bounds
	 * and alignment only, as the kernel's do; larger sizes and
	 * iopt_iova_free always check. */
	bool check_cached_frees;
	/* The cost of a failed try (above): 0, IOPT_IOVA_SEARCH_FMAP. */
	enum iopt_iova_search search;
	/* With IOPT_IOVA_SEARCH_RBTREE_WALK: busy ns per node a failed try
	 * visits, at most IOPT_IOVA_WALK_NODE_NS_MAX; must be 0 otherwise. */
	uint32_t walk_node_ns;
	/* Time for depot trimming; NULL: the monotonic host clock. */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
};

struct iopt_iova;

/* Create. 0, -EINVAL (bad geometry: granule, start >= end, ...; an
 * unknown flush or search; walk_node_ns above its maximum or without
 * IOPT_IOVA_SEARCH_RBTREE_WALK), -ENOMEM. */
IOPT_API int iopt_iova_create(const struct iopt_iova_cfg *cfg,
			      struct iopt_iova **out);
/* Destroy; no other call may be running. Live ranges are simply dropped. */
IOPT_API void iopt_iova_destroy(struct iopt_iova *d);

/*
 * Reserve [pfn, pfn + size): never handed out (MSI windows and such).
 * 0; -EINVAL (size 0, outside the domain); -EBUSY (part of it is
 * allocated or reserved: nothing is reserved then); -ENOMEM.
 */
IOPT_API int iopt_iova_reserve(struct iopt_iova *d, uint64_t pfn,
			       uint64_t size);

/*
 * Allocate size pages at or below limit_pfn (inclusive) from the range
 * allocator alone (no caches), at a start aligned to the power of two at
 * or above size. 0 and *pfn; -EINVAL (size 0, or limit_pfn below
 * start_pfn); -ENOMEM (no room: no such start at or above start_pfn whose
 * size pages are free and end at or below the limit, as for any size too
 * large for the space; or no host memory; no change). Whenever such a
 * start exists, the allocation succeeds (host memory allowing).
 */
IOPT_API int iopt_iova_alloc(struct iopt_iova *d, uint64_t size,
			     uint64_t limit_pfn, uint64_t *pfn);

/* Free an allocation exactly as it was made: 0; -EINVAL (not an
 * allocation of this size: double free, wrong size or address, a size of
 * 0 or of 2^63 pages or more; nothing changes); -ENOMEM (more than 64 pages only: no host memory for the free
 * map, nothing changes, the range stays allocated and the call may be
 * repeated). */
IOPT_API int iopt_iova_free(struct iopt_iova *d, uint64_t pfn, uint64_t size);

/* The allocation containing pfn: 0 and its start and size, or -ENOENT. */
IOPT_API int iopt_iova_find(struct iopt_iova *d, uint64_t pfn,
			    uint64_t *start, uint64_t *size);

/*
 * Cached allocation: sizes up to 2^max_cached_order are rounded up to a
 * power of two and taken from cpu's cache when it has one below the limit;
 * otherwise from the allocator, and on failure the caches are flushed per
 * cfg.flush (when flush_ok) and the allocator tried again. Errors as
 * iopt_iova_alloc(). A cached range lies wholly at or below limit_pfn.
 * Free with iopt_iova_free_cached() and the same size: 0; -EINVAL (out of
 * the domain, misaligned for its size class, or, where checked, not a
 * live allocation of that size); -ENOMEM (as iopt_iova_free()).
 */
IOPT_API int iopt_iova_alloc_cached(struct iopt_iova *d, uint64_t size,
				    uint64_t limit_pfn, unsigned cpu,
				    bool flush_ok, uint64_t *pfn);
IOPT_API int iopt_iova_free_cached(struct iopt_iova *d, uint64_t pfn,
				   uint64_t size, unsigned cpu);

/* Device kinds for iopt_iova_alloc_dma(). */
#define IOPT_IOVA_DEV_PCI	(1u << 0) /* try below 32 bits first */
#define IOPT_IOVA_FORCE_64	(1u << 1) /* skip that first try */

/*
 * The DMA layer's allocation: a PCI-like device first tries below 32 bits
 * without flushing caches (unless cfg.flush is EVERY_RETRY), then the whole
 * dma_limit_pfn, flushing before that last try unless cfg.flush is NEVER.
 */
IOPT_API int iopt_iova_alloc_dma(struct iopt_iova *d, uint64_t size,
				 uint64_t dma_limit_pfn, unsigned flags,
				 unsigned cpu, uint64_t *pfn);

/* Return every cached range to the allocator (what it cannot take for
 * lack of host memory stays cached). */
IOPT_API void iopt_iova_flush_caches(struct iopt_iova *d);

/* Give one depot magazine per size class back if the trim interval has
 * passed since the last trim (called from the free path too). */
IOPT_API void iopt_iova_trim(struct iopt_iova *d);

struct iopt_iova_stats {
	uint64_t allocated_pages;	/* live in the allocator, cached too */
	uint64_t free_pages;		/* free in the allocator */
	uint64_t cached_ranges;		/* in CPU magazines and depots */
	uint64_t cache_hits, cache_misses;
	uint64_t cache_flushes;		/* whole-cache flushes */
	uint64_t global_allocs;		/* requests that locked every stripe */
	/* IOPT_IOVA_SEARCH_RBTREE_WALK: failed tries, and the tree nodes
	 * their walks visited (0 in the other mode). */
	uint64_t tree_walks, tree_visits;
};

IOPT_API void iopt_iova_get_stats(struct iopt_iova *d,
				  struct iopt_iova_stats *st);

/* ---- invalidation policies ------------------------------------------- */

enum iopt_inval {
	IOPT_INVAL_STRICT,	/* invalidate + sync before the range returns */
	IOPT_INVAL_LAZY,	/* per-CPU flush queues, one flush-all a batch */
	IOPT_INVAL_SINGLE,	/* one shared queue (expensive invalidation) */
	IOPT_INVAL_EXHAUST,	/* hold everything until allocation fails */
};

struct iopt_fq_cfg {
	enum iopt_inval policy;
	unsigned entries;	/* ring size; 0: 256 (LAZY), 32768 (SINGLE) */
	uint64_t timeout_ns;	/* 0: 10 ms (LAZY), 1000 ms (SINGLE) */
	/* Invalidate [iova, iova + size) and wait (STRICT). */
	void (*flush_range)(uint64_t iova, uint64_t size, void *ctx);
	/* Invalidate everything and wait (LAZY, SINGLE, EXHAUST). */
	void (*flush_all)(void *ctx);
	void *ctx;
	/* Time; NULL: the monotonic host clock. Called with a ring lock held
	 * (docs/iova.md, concurrency contract 2): it must not call the queue. */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	/* Start a thread that flushes expired queues (needs the host clock). */
	bool timer_thread;
};

struct iopt_fq;

/* Create a policy over domain d (which must outlive it). 0, -EINVAL,
 * -ENOMEM, or the thread library's error (e.g. -EAGAIN) when the timer
 * thread cannot start; nothing is left allocated on error. */
IOPT_API int iopt_fq_create(struct iopt_iova *d, const struct iopt_fq_cfg *cfg,
			    struct iopt_fq **out);
/* Flush and release everything queued, stop the timer, free. A range the
 * allocator cannot take for lack of host memory stays allocated in the
 * domain (destroying the domain frees it). */
IOPT_API void iopt_fq_destroy(struct iopt_fq *q);

/*
 * The range [pfn, pfn + size) (from iopt_iova_alloc_cached/_dma) was just
 * unmapped from the page tables: give it back according to the policy. A
 * range is never handed out again while an IOTLB may still hold a
 * translation for it. Call it after the page-table entries are cleared:
 * it issues a full fence before it reads the flush generation, so that
 * the clears are visible before any flush that does not cover the range
 * begins (docs/iova.md, concurrency contract). 0; -EINVAL (what
 * iopt_iova_free_cached() would refuse, checked now, before queueing;
 * with check_cached_frees or sizes above the caches, also a range already
 * waiting in a queue); -ENOMEM (only when the range had to be freed at
 * once and the allocator had no host memory: nothing changes).
 */
IOPT_API int iopt_fq_free(struct iopt_fq *q, uint64_t pfn, uint64_t size,
			  unsigned cpu);

/*
 * Allocate as iopt_iova_alloc_dma(); when that fails with -ENOMEM while
 * ranges wait in the queues (any policy but STRICT), one flush-all
 * releases everything held and it is tried again (under
 * IOPT_INVAL_EXHAUST the only release there is).
 */
IOPT_API int iopt_fq_alloc(struct iopt_fq *q, uint64_t size,
			   uint64_t dma_limit_pfn, unsigned flags, unsigned cpu,
			   uint64_t *pfn);

/* Release queued ranges whose timeout has expired (flushing first). The
 * timer thread calls it; callers with their own clock call it. A range
 * the allocator cannot take for lack of host memory stays queued (its
 * flush done) until a later release. */
IOPT_API void iopt_fq_poll(struct iopt_fq *q);

/* Flush now and release everything queued. */
IOPT_API void iopt_fq_flush(struct iopt_fq *q);

struct iopt_fq_stats {
	uint64_t flush_alls;	/* flush_all calls */
	uint64_t flush_ranges;	/* flush_range calls */
	uint64_t frees;		/* iopt_fq_free calls that returned 0 */
	uint64_t held;		/* ranges waiting now */
};

IOPT_API void iopt_fq_get_stats(struct iopt_fq *q, struct iopt_fq_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_IOVA_H */
