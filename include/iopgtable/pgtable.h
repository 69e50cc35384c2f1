/* SPDX-License-Identifier: MIT */
/*
 * IOMMU page tables: the Arm LPAE and ARMv7 short-descriptor formats.
 *
 * A page table translates an input address (IOVA, "VA" in the glossary) to an
 * output address (physical or intermediate physical, "OA"). Create one with
 * iopt_pgtable_alloc(), then map and unmap ranges of pages of one size each (a
 * size from the table's page-size bitmap), translate addresses, and free it
 * with iopt_pgtable_free().
 *
 * Concurrency (full contract in docs/pgtable.md):
 * - iopt_pgtable_map_pages(), iopt_pgtable_unmap_pages(),
 *   iopt_pgtable_iova_to_phys(), iopt_pgtable_walk(),
 *   iopt_pgtable_read_and_clear_dirty() and iopt_pgtable_tlb_sync() may run
 *   concurrently from any number of threads on one table. Callers that never
 *   overlap the ranges of concurrent map/unmap calls get exactly the mappings
 *   they asked for. Callers that do overlap get unspecified mappings, but the
 *   library never reads or writes freed memory and never leaks.
 * - iopt_pgtable_free() must not run concurrently with any other call on the
 *   table.
 * - No call needs the thread to register with RCU or hold any lock.
 */
#ifndef IOPGTABLE_PGTABLE_H
#define IOPGTABLE_PGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The page-table formats. */
enum iopt_pgtable_fmt {
	IOPT_ARM_64_LPAE_S1,	/* VMSAv8-64 stage 1 */
	IOPT_ARM_64_LPAE_S2,	/* VMSAv8-64 stage 2 */
	IOPT_ARM_32_LPAE_S1,	/* VMSAv7 long-descriptor stage 1 */
	IOPT_ARM_32_LPAE_S2,	/* VMSAv7 long-descriptor stage 2 */
	IOPT_ARM_V7S,		/* VMSAv7 short-descriptor */
	IOPT_PGTABLE_FMT_COUNT
};

/* Permissions and memory type of a mapping (iopt_pgtable_map_pages' prot). */
#define IOPT_READ	(1u << 0)	/* device may read */
#define IOPT_WRITE	(1u << 1)	/* device may write */
#define IOPT_CACHE	(1u << 2)	/* normal write-back cacheable memory */
#define IOPT_NOEXEC	(1u << 3)	/* never executable */
#define IOPT_MMIO	(1u << 4)	/* device memory (nGnRE) */
#define IOPT_PRIV	(1u << 5)	/* privileged accesses only */
#define IOPT_PROT_MASK	0x3fu

/* Quirks (iopt_pgtable_cfg.quirks): behaviour some IOMMUs need. */
#define IOPT_PGTABLE_QUIRK_NS		(1u << 0) /* non-secure leaves, NSTable tables */
#define IOPT_PGTABLE_QUIRK_NO_PERMS	(1u << 1) /* v7s: AP bits not used as perms */
#define IOPT_PGTABLE_QUIRK_TTBR1	(1u << 2) /* 64-bit S1: upper (TTBR1) VA range */
#define IOPT_PGTABLE_QUIRK_OUTER_WBWA	(1u << 3) /* non-coherent walk, outer WBWA */
#define IOPT_PGTABLE_QUIRK_HD		(1u << 4) /* 64-bit S1: hardware dirty (DBM) */
#define IOPT_PGTABLE_QUIRK_S2FWB	(1u << 5) /* 64-bit S2: forced write-back */
#define IOPT_PGTABLE_QUIRK_MTK_EXT	(1u << 6) /* v7s: MediaTek PA bits 32-34 */
#define IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT	(1u << 7) /* v7s: MediaTek TTBR PA extension */
/*
 * Any format, non-coherent walk: unmap cleans each cleared leaf entry with
 * a mem_ops.sync call of its own (one descriptor's bytes), as Linux's
 * io-pgtable-arm did before its 2024 batching of unmap; without it the
 * leaves an unmap clears in one table are synced by one call covering
 * them all. Nothing else changes (table entries are synced one by one
 * either way; map syncs its run of entries in one call). No effect with
 * coherent_walk.
 */
#define IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH (1u << 8)

/*
 * A gather collects the range of leaves an unmap removed or replaced, so that
 * the caller can invalidate it in one go. [start, last] is inclusive (so that
 * the top of the address space fits); empty when start > last. It covers every
 * leaf added, and never more than the unmap's request and the blocks its pages
 * were part of; an unmap that stops early (at an address not mapped) may leave
 * it covering the rest of its request in the leaf table where it stopped, since
 * single pages are gathered from the request before their leaves are read.
 * pgsize is the smallest leaf size added (0 when empty): invalidating by
 * address every pgsize step of [start, last] reaches every such leaf. sizes is
 * the OR of the sizes of every leaf added: with one bit set, every leaf added
 * had that size, a level hint exactly as add_page's granule (struct
 * iopt_pgtable_tlb_ops); with several bits set (a split reports the block it
 * replaced and the page it removed) a range invalidation of [start, last] must
 * not carry a level hint. Initialise with iopt_pgtable_gather_init().
 */
struct iopt_pgtable_gather {
	uint64_t start;
	uint64_t last;
	uint64_t pgsize;
	uint64_t sizes;
};

/*
 * TLB maintenance: how the page table asks the IOMMU driver to invalidate.
 * Every callback may be NULL (no TLB to maintain). Callbacks may be called
 * concurrently from every thread that uses the table.
 *
 * granule (add_page, flush_walk) is a promise about every leaf removed or
 * replaced in the reported range: it was a descriptor (an item) of exactly
 * granule bytes, at the lookup level whose items have that size (LPAE 4K
 * granule: 4K level 3, 2M level 2, 1G level 1; v7s: 4K level 2, 1M level
 * 1). A driver may derive a range invalidation's level hint from it (the
 * SMMUv3 TTL field, IHI0070 4.4.1.1). An item of a contiguous run
 * (contiguous hint, v7s large page or supersection) counts as one item of
 * granule bytes at its level, although a TLB may hold the whole run as one
 * entry; an invalidation of any address of the run at that level removes
 * that entry. granule 0 promises nothing: leaves of any size may be cached
 * in the range, and the invalidation must not carry a level hint.
 * What is reported is what was replaced: splitting a block reports the
 * block (add_page with the block's size), breaking a run reports the
 * whole run (flush_walk with the items' size), unlinking a table reports
 * the table's range (flush_walk; granule = the item size if it was a
 * last-level table, else 0).
 *
 * Ordering: a callback is called after the entries it reports were replaced
 * and, for a non-coherent walker, synced (iopt_pgtable_mem_ops.sync), so that a
 * walk which starts after the invalidation reads the new entries.
 *
 * flush_all:  invalidate every translation of this table and wait (the
 *             page tables do not call it today; it is there for drivers
 *             that share these ops).
 * flush_walk: leaf and table entries in [iova, iova + size) were removed
 *             or replaced; size is a power of two and iova is aligned to
 *             it. Invalidate leaf and walk-cache (table descriptor) entries
 *             there: granule is a hint about leaves only, walk-cache
 *             entries of every level must go. Completion is awaited through
 *             sync, which the page table calls before it frees a removed
 *             table or writes a run's replacement.
 * add_page:   one leaf item of granule bytes at iova (aligned to granule)
 *             was removed or replaced, or had its dirty state cleaned by
 *             iopt_pgtable_read_and_clear_dirty(); queue the invalidation of
 *             leaf entries there (walk caches may stay). gather is the unmap
 *             caller's (NULL if none) and already includes the leaf; the
 *             invalidation completes at the next iopt_pgtable_tlb_sync() (a
 *             failed map calls it before returning). The page table counts a
 *             report as issued when add_page returns: a concurrent unmap
 *             through a split table relies on the block's invalidation from
 *             then on, and completes it only through sync.
 * sync:       wait until every invalidation issued so far has completed.
 */
struct iopt_pgtable_tlb_ops {
	void (*flush_all)(void *cookie);
	void (*flush_walk)(uint64_t iova, uint64_t size, uint64_t granule,
			   void *cookie);
	void (*add_page)(struct iopt_pgtable_gather *gather, uint64_t iova,
			 uint64_t granule, void *cookie);
	void (*sync)(void *cookie);
};

/*
 * Table memory. Tables live where the IOMMU's walker reads them by
 * physical address. NULL ops select the default: zeroed, naturally aligned
 * host memory whose physical address is its host address.
 *
 * alloc:        return zeroed memory of size bytes (a power of two),
 *               aligned to size, and its physical address in *pa; NULL on
 *               failure.
 * free:         release memory from alloc.
 * phys_to_virt: host address of physical address pa inside a table.
 * sync:         make [va, va + size) visible to a non-coherent walker
 *               (cache clean). Called only when coherent_walk is false:
 *               map once per run of entries it wrote in a table, unmap
 *               once per run of leaves it cleared in a table (once per
 *               leaf with IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH) and once per
 *               table entry it removed.
 */
struct iopt_pgtable_mem_ops {
	void *(*alloc)(size_t size, uint64_t *pa, void *ctx);
	void (*free)(void *va, uint64_t pa, size_t size, void *ctx);
	void *(*phys_to_virt)(uint64_t pa, void *ctx);
	void (*sync)(void *va, size_t size, void *ctx);
};

/* Configuration given to iopt_pgtable_alloc(). */
struct iopt_pgtable_cfg {
	enum iopt_pgtable_fmt fmt;
	/* LPAE translation granule in bytes: 4096, 16384 or 65536 (0: 4096).
	 * 32-bit LPAE and v7s support only 4096. */
	uint32_t granule;
	/* Page sizes to allow; 0 allows every size the format supports. */
	uint64_t pgsize_bitmap;
	/* Input address bits: 64-bit LPAE 25-48 (52 with the 64K granule);
	 * 32-bit LPAE stage 1 25-32, stage 2 25-40; v7s 25-32 (TTBCR.N 0-7),
	 * 33-34 with IOPT_PGTABLE_QUIRK_MTK_EXT. A stage 2 ias also needs a
	 * start level the VTCR can encode (docs/pgtable.md). */
	unsigned ias;
	unsigned oas;		/* output address bits */
	uint32_t quirks;	/* IOPT_PGTABLE_QUIRK_* */
	bool coherent_walk;	/* walker snoops CPU caches */
	bool serialised;	/* one lock around every operation (baseline) */
	const struct iopt_pgtable_tlb_ops *tlb;
	void *tlb_cookie;
	/* NULL: the default: host memory at its own address when oas >= 48,
	 * else (and for v7s) a private simulated window at 2-4 GiB, so that
	 * table addresses fit the format (docs/pgtable.md). */
	const struct iopt_pgtable_mem_ops *mem;
	void *mem_ctx;
	/* Serialised mode's lock (enum iopt_lock_kind); 0: the ticket lock,
	 * as a kernel driver's lock around its domain's table (added with
	 * the selectable locks). */
	unsigned lock_kind;
};

/*
 * What a driver programs into the IOMMU for this table. LPAE stage 1: ttbr =
 * TTBR0 (TTBR1 with IOPT_PGTABLE_QUIRK_TTBR1), tcr = TCR
 *   (AArch64 TCR_EL1 layout; 32-bit: TTBCR with EAE), mair = MAIR.
 * LPAE stage 2: ttbr = VTTBR, tcr = VTCR.
 * v7s: ttbr = TTBR0, tcr = TTBCR, nmrr/prrr = TEX-remap registers.
 */
struct iopt_pgtable_regs {
	uint64_t ttbr;
	uint64_t tcr;
	uint64_t mair;
	uint32_t nmrr;
	uint32_t prrr;
};

/* Geometry and registers of a created table (iopt_pgtable_get_info()). */
struct iopt_pgtable_info {
	enum iopt_pgtable_fmt fmt;
	/* Every page size map accepts: the blocks, pages and contiguous runs
	 * the architecture defines for this granule, start level and oas
	 * (Arm ARM D8.3, D8.7.1), none larger than 2^ias. */
	uint64_t pgsize_bitmap;
	uint32_t granule;
	unsigned ias, oas;
	unsigned levels;		/* lookup levels */
	unsigned start_level;		/* architectural number of the top */
	unsigned concat;		/* concatenated top tables (1 if none) */
	struct iopt_pgtable_regs regs;
};

/* One step of a walk: the descriptor read at one level. */
struct iopt_pgtable_walk_level {
	unsigned level;		/* architectural level */
	uint64_t table_pa;	/* physical address of the table read */
	unsigned index;		/* entry index in that table */
	uint64_t desc;		/* the descriptor value loaded */
};

/* What iopt_pgtable_walk() saw. */
struct iopt_pgtable_walk {
	unsigned nr_levels;		/* entries filled in level[] */
	struct iopt_pgtable_walk_level level[4];
	bool mapped;			/* a leaf was found */
	uint64_t oa;			/* output address of the input address */
	uint64_t leaf_size;		/* size of the leaf's page or run */
	unsigned prot;			/* decoded IOPT_* permissions */
	bool dirty;			/* HD: writable-dirty */
};

struct iopt_pgtable;

/*
 * Create a page table. Returns 0 and *out, or:
 *   -EINVAL  unknown format, unsupported granule/ias/oas/quirk combination,
 *            a page-size bitmap with no size of the format, or a
 *            lock_kind outside enum iopt_lock_kind;
 *   -ENOMEM  out of memory.
 * On failure nothing is allocated.
 */
IOPT_API int iopt_pgtable_alloc(const struct iopt_pgtable_cfg *cfg, struct iopt_pgtable **out);

/*
 * Free the table and every table under it. No other call on pt may be in
 * progress. Waits for deferred frees (RCU callbacks) of this table.
 */
IOPT_API void iopt_pgtable_free(struct iopt_pgtable *pt);

/* Geometry, page sizes and register values. Never fails. */
IOPT_API void iopt_pgtable_get_info(const struct iopt_pgtable *pt,
				    struct iopt_pgtable_info *info);

/*
 * Map pgcount pages of pgsize bytes at iova to paddr with prot.
 * All or nothing: on success *mapped (if not NULL) = pgsize * pgcount and
 * 0 is returned; on failure *mapped = 0, no translation has changed (what
 * the call wrote before it failed is removed, invalidated through the TLB
 * ops and synced before it returns; a contiguous run is written only once
 * all of its items are known to be free), and:
 *   -EINVAL  pgsize not in the bitmap, pgcount 0, iova or paddr not
 *            aligned to pgsize, prot without IOPT_READ/IOPT_WRITE or with
 *            unknown bits;
 *   -ERANGE  the range wraps, or leaves the input range (ias, or the
 *            TTBR1 upper range) or the output range (oas);
 *   -EEXIST  part of the range is already mapped;
 *   -ENOMEM  a table could not be allocated.
 * Tables allocated before a failure may stay (empty); they are valid.
 */
IOPT_API int iopt_pgtable_map_pages(struct iopt_pgtable *pt, uint64_t iova,
				    uint64_t paddr, uint64_t pgsize, size_t pgcount,
				    unsigned prot, uint64_t *mapped);

/*
 * Unmap pgcount pages of pgsize bytes at iova. Larger mappings that the range
 * covers only in part are split; smaller mappings inside the range are removed
 * with it. Removed leaves (and blocks replaced by a split) are added to gather
 * (may be NULL) and the TLB ops' add_page; the caller then calls
 * iopt_pgtable_tlb_sync(). Removed tables and broken runs are invalidated
 * (flush_walk) and synced inside the call. The unmap is not complete before the
 * invalidation of every block its pages were part of: when another thread's
 * split of that block has published its table but not yet returned from
 * add_page for the block, this call reports the block too (docs/pgtable.md,
 * "Concurrency contract", 10). Returns the bytes unmapped from iova on: it
 * stops early at the first address that is not mapped, or when a split cannot
 * get memory. Returns -EINVAL or -ERANGE (as for map) for invalid arguments,
 * changing nothing.
 */
IOPT_API int64_t iopt_pgtable_unmap_pages(struct iopt_pgtable *pt, uint64_t iova,
					  uint64_t pgsize, size_t pgcount,
					  struct iopt_pgtable_gather *gather);

/*
 * Translate iova. Returns 0 and *pa, -ENOENT if not mapped, -ERANGE if
 * iova is outside the input range.
 */
IOPT_API int iopt_pgtable_iova_to_phys(struct iopt_pgtable *pt, uint64_t iova,
				       uint64_t *pa);

/* Walk iova, reporting every descriptor read. 0, or -ERANGE. */
IOPT_API int iopt_pgtable_walk(struct iopt_pgtable *pt, uint64_t iova,
			       struct iopt_pgtable_walk *walk);

/* Do not clear dirty state in iopt_pgtable_read_and_clear_dirty(). */
#define IOPT_PGTABLE_DIRTY_NO_CLEAR (1u << 0)

/*
 * For every leaf in [iova, iova + size) that is writable-dirty, call
 * record(leaf_iova, leaf_size, arg) and, unless IOPT_PGTABLE_DIRTY_NO_CLEAR,
 * make it writable-clean again. A leaf is a page, a block, or a whole
 * contiguous run (dirty if any of its items is: the hardware may mark any item
 * of a run, Arm ARM D8.5.5); its range may extend beyond the request. Needs
 * IOPT_PGTABLE_QUIRK_HD. Returns 0, or -EINVAL (no HD, unknown flags, size 0)
 * or -ERANGE, changing nothing.
 *
 * TLB: a TLB entry cached writable-dirty lets the device keep writing without
 * setting the dirty state again, so cleaning invalidates as unmap does: each
 * cleaned item is added to gather (may be NULL) and passed to the TLB ops'
 * add_page, after the cleaned descriptor is visible to the walker. The caller
 * then calls iopt_pgtable_tlb_sync() (once for any number of calls) before it
 * relies on the report, e.g. before copying the recorded pages: every write
 * that completes after that sync sets the dirty state again and is reported by
 * a later call; a write that completed before it is in the data the caller
 * copies after it. With IOPT_PGTABLE_DIRTY_NO_CLEAR nothing is invalidated.
 *
 * Concurrency: as the other calls (see the top of this file). A cleaned
 * descriptor is changed by compare-and-swap from the value read, so an
 * entry that a concurrent call changed is never overwritten.
 */
IOPT_API int iopt_pgtable_read_and_clear_dirty(struct iopt_pgtable *pt,
					       uint64_t iova, uint64_t size,
					       unsigned flags,
					       struct iopt_pgtable_gather *gather,
					       void (*record)(uint64_t iova,
							      uint64_t size,
							      void *arg),
				       void *arg);

/*
 * Wait until every TLB invalidation this table issued before the call has
 * completed: calls the sync op if invalidations are pending, or waits for
 * a sync another thread started. Back-to-back calls with nothing pending
 * do not call sync.
 */
IOPT_API void iopt_pgtable_tlb_sync(struct iopt_pgtable *pt);

/* Make a gather empty. */
IOPT_API void iopt_pgtable_gather_init(struct iopt_pgtable_gather *gather);

/* Statistics: tables allocated and freed over the table's life. */
struct iopt_pgtable_stats {
	uint64_t tables_allocated;
	uint64_t tables_freed;
	uint64_t splits;	/* blocks split into a table */
	uint64_t run_breaks;	/* contiguous runs broken */
};

IOPT_API void iopt_pgtable_get_stats(const struct iopt_pgtable *pt,
				     struct iopt_pgtable_stats *stats);

/* Human-readable name of a format ("arm64-lpae-s1", ...). */
IOPT_API const char *iopt_pgtable_fmt_name(enum iopt_pgtable_fmt fmt);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_PGTABLE_H */
