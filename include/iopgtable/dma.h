/* SPDX-License-Identifier: MIT */
/*
 * DMA layer: the whole path a DMA mapping takes, as Linux's dma-iommu
 * does it — allocate an IOVA, map it in the page table, let the device
 * translate it, unmap it, invalidate, sync, hand the IOVA out again.
 *
 * A DMA domain joins
 *  - a page table (any LPAE format the driver accepts; iopgtable/pgtable.h)
 *    that the domain creates, with the domain's own TLB ops;
 *  - an IOVA domain with its per-CPU caches (iopgtable/iova.h);
 *  - an invalidation policy (strict, per-CPU flush queues, one flush queue,
 *    flush on exhaustion: iopt_fq_*);
 *  - a driver instance behind a small ops table (struct iopt_dma_drv_ops):
 *    the SMMUv3 driver (iopt_dma_smmuv3_ops()) or the SMMUv2 one.
 * Or no IOMMU at all (IOPT_DMA_DIRECT). Options make it behave as older
 * or virtualised kernels' DMA paths did (docs/dma.md "Kernel variants").
 *
 * Concurrency: iopt_dma_map/unmap/map_sg/unmap_sg/flush/get_stats may run
 * from any number of threads on one domain at once; each passes the CPU it
 * runs as (its IOVA cache and flush queue). Create/destroy must not race
 * with anything on the domain; attach/detach of one StreamID must not race
 * with each other. Full description: docs/dma.md.
 */
#ifndef IOPGTABLE_DMA_H
#define IOPGTABLE_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/iova.h>
#include <iopgtable/pgtable.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What the DMA layer needs from an IOMMU driver. drv is the driver
 * instance given in iopt_dma_cfg.drv; dom is a driver domain from
 * domain_alloc. Every function returns 0 or a negative errno and may be
 * called from any thread (attach/detach of one sid excepted).
 *
 * domain_alloc: a translation context of stage 1 or 2 (ASID/VMID).
 * domain_free:  release it (no stream attached).
 * attach:       point stream sid at page table pt through dom.
 * detach:       make stream sid abort.
 * inv_range:    queue the invalidation of [iova, iova + size): leaf
 *               entries only when leaf, walk caches too otherwise; granule is a
 *               leaf-size hint as for struct iopt_pgtable_tlb_ops (0: none).
 *               Completes at the next sync.
 * sync:         wait until every invalidation queued so far completed.
 * flush_all:    invalidate every translation of dom and wait.
 * v7s:          the driver can use v7s (AArch32 short-descriptor)
 *               tables; false: iopt_dma_create() refuses them.
 * Before the first attach of dom no stream has reached it and no TLB can
 * hold its translations: inv_range, sync and flush_all then succeed (and
 * need do nothing), so that a domain maps and unmaps the same way before
 * its first attach as after it, over every driver.
 */
struct iopt_dma_drv_ops {
	const char *name;
	int (*domain_alloc)(void *drv, unsigned stage, void **dom);
	int (*domain_free)(void *dom);
	int (*attach)(void *dom, struct iopt_pgtable *pt, uint32_t sid);
	int (*detach)(void *dom, uint32_t sid);
	int (*inv_range)(void *dom, uint64_t iova, uint64_t size,
			 uint64_t granule, bool leaf);
	int (*sync)(void *dom);
	int (*flush_all)(void *dom);
	bool v7s;
};

/* The SMMUv3 driver (iopgtable/smmuv3_drv.h); drv is a struct iopt_smmuv3_drv. */
IOPT_API const struct iopt_dma_drv_ops *iopt_dma_smmuv3_ops(void);
/* The SMMUv2 driver (iopgtable/smmuv2_drv.h); drv is a struct iopt_smmuv2_drv. */
IOPT_API const struct iopt_dma_drv_ops *iopt_dma_smmuv2_ops(void);

/* Device kinds (iopt_dma_cfg.dev_flags). */
#define IOPT_DMA_DEV_PCI	(1u << 0) /* try below 4 GiB first ... */
#define IOPT_DMA_FORCEDAC	(1u << 1) /* ... unless forcedac */

/* What a DMA domain does with a mapping (iopt_dma_cfg.mode). */
enum iopt_dma_mode {
	/* Through the IOMMU: IOVA, page table, driver, policy. */
	IOPT_DMA_TRANSLATE,
	/*
	 * No IOMMU, as Linux's dma-direct without a bounce buffer: map
	 * returns the physical address as the DMA address; nothing is
	 * allocated, mapped or invalidated, and no driver is used (every
	 * field but mode and nr_cpus is ignored). A buffer that does not
	 * lie wholly at or below dma_mask is -EIO, where dma-direct's map
	 * returns DMA_MAPPING_ERROR (its scatter-list map, and so
	 * dma_map_sgtable(), -EIO); no swiotlb is modelled. The calls keep their argument checks and
	 * counters, so that a workload runs the same code with the IOMMU off.
	 */
	IOPT_DMA_DIRECT,
};

struct iopt_dma_cfg {
	const struct iopt_dma_drv_ops *ops;	/* required (TRANSLATE) */
	void *drv;				/* the driver instance */
	/* The page table: fmt, granule, ias, oas, quirks, coherent_walk,
	 * mem/mem_ctx (table memory the IOMMU can read), pgsize_bitmap,
	 * serialised and its lock_kind. tlb and tlb_cookie are ignored: the
	 * domain installs its own. */
	struct iopt_pgtable_cfg pt;
	/* Invalidation policy and its flush queues (0: iova.h defaults). */
	enum iopt_inval policy;
	unsigned fq_entries;
	uint64_t fq_timeout_ns;
	bool fq_timer;		/* a thread flushes expired queues */
	/* The flush queues' clock (ns; NULL: the monotonic host clock).
	 * The lazy policies stamp every unmap with it, so a cheap one
	 * (a coarse clock, like the kernel's jiffies) saves a host clock
	 * read per unmap. Not with fq_timer. */
	uint64_t (*fq_clock)(void *ctx);
	void *fq_clock_ctx;
	/* IOVA space: [start, end) in bytes, multiples of the granule;
	 * 0/0: [granule, 2^ias). */
	uint64_t iova_start, iova_end;
	unsigned nr_cpus;	/* CPU caches and queues; 0: the machine's */
	unsigned dev_flags;	/* IOPT_DMA_DEV_PCI, IOPT_DMA_FORCEDAC */
	/* Check every unmap's size against the IOVA allocator's record of
	 * the allocation (a lookup under a stripe lock per unmap). */
	bool check_unmap;
	/*
	 * One lock per domain around every page-table change, as arm-smmu's
	 * pgtbl_lock before Linux 4.13 (spin_lock_irqsave around io-pgtable's
	 * map and unmap): a map's table writes; an unmap's clear and, under
	 * the strict policy, its leaf invalidation and sync (io-pgtable's
	 * unmap synced before it returned), also on the error paths; a
	 * failed map's cleanup. The IOVA allocation and free, the flush
	 * queues' flush-alls and the recovery flush-all stay outside it, as
	 * they were outside pgtbl_lock. domain_lock_kind is its kind (enum
	 * iopt_lock_kind; 0: the ticket lock, arm64's spinlock to 4.18);
	 * create refuses another value with -EINVAL. Independent of
	 * pt.serialised, the page table's own lock, which does not cover
	 * the DMA layer's invalidations.
	 */
	bool domain_lock;
	unsigned domain_lock_kind;
	/*
	 * When a failed IOVA allocation flushes every CPU's IOVA cache
	 * (iova.h enum iopt_iova_flush, the allocator's cfg.flush): 0,
	 * IOPT_IOVA_FLUSH_LAST_RETRY, before the last try only (Linux since
	 * "iommu/iova: Make rcache flush optional on IOVA allocation
	 * failure", 4.15); IOPT_IOVA_FLUSH_EVERY_RETRY, after every failed
	 * try, the 32-bit first try of a PCI device included, the depots
	 * left alone (Linux to 4.14); IOPT_IOVA_FLUSH_NEVER. Another value:
	 * -EINVAL at create.
	 */
	enum iopt_iova_flush rcache_flush;
	/*
	 * The IOVA allocator's price of a failed try (iova.h enum
	 * iopt_iova_search, cfg.search and cfg.walk_node_ns): 0,
	 * IOPT_IOVA_SEARCH_FMAP, its own search alone;
	 * IOPT_IOVA_SEARCH_RBTREE_WALK, also Linux 4.13's walk of its
	 * rbtree, iova_walk_node_ns of busy time per node visited. Bad
	 * values: -EINVAL at create (from the allocator).
	 */
	enum iopt_iova_search iova_search;
	uint32_t iova_walk_node_ns;
	/*
	 * A virtualised IOMMU whose invalidations trap to the hypervisor, as
	 * s390's RPCIT: every invalidation the domain issues (a driver
	 * inv_range or flush_all, whatever the caller: unmap, policy, page
	 * table, recovery) is first a trapped refresh of the range it names,
	 * costing viommu_trap_ns + viommu_trap_page_ns x its pages (in
	 * granules; a flush_all names the domain's whole IOVA space
	 * [iova_start, iova_end), as s390's flush-all refreshes its whole
	 * aperture and the hypervisor walks every page of it). The
	 * hypervisor takes one refresh at a time, in arrival order: the CPU
	 * waits for the refreshes booked before its own, then spends its own
	 * cost, busy (plat_delay_ns(): simulated time on simulated CPUs),
	 * with interrupts and preemption held off as in a spinlock section;
	 * then the driver is called. Syncs do not trap (the trap completes
	 * the invalidation). 0/0: no trap. Counted in stats.viommu_traps and
	 * stats.viommu_trap_pages. Limits (-EINVAL at create above them):
	 * viommu_trap_ns at most IOPT_DMA_TRAP_NS_MAX (1 s),
	 * viommu_trap_page_ns at most IOPT_DMA_TRAP_PAGE_NS_MAX (1 ms), and a
	 * flush_all's cost (viommu_trap_ns + viommu_trap_page_ns x the IOVA
	 * space's pages) at most IOPT_DMA_TRAP_FLUSH_NS_MAX (60 s): the
	 * default 2^48-byte space with any page cost is refused.
	 */
	uint64_t viommu_trap_ns;
	uint64_t viommu_trap_page_ns;
	/*
	 * With a trap cost (viommu_trap_ns or viommu_trap_page_ns): every
	 * successful map traps too, once per call, a refresh of the mapped
	 * pages, after the page table holds the new entries and before it
	 * returns (the hypervisor shadowing the new translation, as s390's
	 * iotlb_sync_map issues RPCIT under z/VM or KVM: seed 004's "reduces
	 * them [the flushes] by almost half" is unmap's share of map + unmap).
	 * Ignored without a trap cost and in IOPT_DMA_DIRECT mode.
	 */
	bool viommu_trap_map;
	enum iopt_dma_mode mode;		/* 0: IOPT_DMA_TRANSLATE */
};

#define IOPT_DMA_TRAP_NS_MAX 1000000000ull
#define IOPT_DMA_TRAP_PAGE_NS_MAX 1000000ull
#define IOPT_DMA_TRAP_FLUSH_NS_MAX 60000000000ull

struct iopt_dma;

/* Default configuration: 64-bit LPAE stage 1, 4K granule, 48-bit ias
 * and oas, coherent walk, strict policy. ops/drv/pt.mem are left NULL.
 * Never fails; any thread. */
IOPT_API void iopt_dma_default_cfg(struct iopt_dma_cfg *cfg);

/*
 * Create a DMA domain: a driver domain (stage 2 for the S2 formats, else
 * stage 1), the page table, the IOVA domain and the policy. Returns 0 and
 * *out, or -EINVAL (NULL cfg/ops/drv, bad page-table or IOVA geometry,
 * unknown mode, policy, domain_lock_kind, rcache_flush or iova_search,
 * iova_walk_node_ns above IOPT_IOVA_WALK_NODE_NS_MAX or without the walk,
 * viommu_trap_ns above IOPT_DMA_TRAP_NS_MAX, viommu_trap_page_ns above
 * IOPT_DMA_TRAP_PAGE_NS_MAX, a flush-all's trap above
 * IOPT_DMA_TRAP_FLUSH_NS_MAX), -ENOMEM, or the driver's error from
 * domain_alloc (-ENOSPC: no ASID/VMID left, -ETIMEDOUT). IOPT_DMA_DIRECT
 * needs only cfg and nr_cpus (-EINVAL above 65536; -ENOMEM). On failure
 * nothing is left allocated and *out is untouched. Not concurrently with
 * other calls on the same driver domain.
 */
IOPT_API int iopt_dma_create(const struct iopt_dma_cfg *cfg,
			     struct iopt_dma **out);

/*
 * Flush and release every queued IOVA, detach every stream still
 * attached, free the page table (mappings still present are simply
 * dropped), the IOVA domain and the driver domain. No other call on the
 * domain may be running. NULL: no-op.
 */
IOPT_API void iopt_dma_destroy(struct iopt_dma *d);

/*
 * Attach stream sid to the domain's page table / detach it (with
 * IOPT_DMA_DIRECT: 0, nothing to do). 0, -ENOSPC
 * (more than 64 streams), or the driver's error (-EINVAL, -EBUSY,
 * -ETIMEDOUT: see iopt_smmuv3_drv_attach/detach). Not concurrently with
 * another attach/detach of the same sid. Map and unmap work before the
 * first attach as after it, over both drivers (nothing to invalidate
 * yet: struct iopt_dma_drv_ops); what is mapped then translates once a
 * stream is attached.
 */
IOPT_API int iopt_dma_attach(struct iopt_dma *d, uint32_t sid);
IOPT_API int iopt_dma_detach(struct iopt_dma *d, uint32_t sid);

/* The page table (read-only use: iopt_pgtable_iova_to_phys,
 * iopt_pgtable_get_info). NULL for NULL and for IOPT_DMA_DIRECT. Never
 * fails; any thread. */
IOPT_API struct iopt_pgtable *iopt_dma_pgtable(struct iopt_dma *d);

/*
 * Map [paddr, paddr + size) for a device with DMA mask dma_mask, with
 * prot (IOPT_READ / IOPT_WRITE, optionally IOPT_CACHE, IOPT_NOEXEC,
 * IOPT_MMIO, IOPT_PRIV), as CPU cpu (< nr_cpus, or IOPT_IOVA_CPU_SELF).
 * The IOVA range covers the granule-aligned pages of the buffer, rounded
 * to a power of two below 32 pages (the caches' sizes); the returned
 * *iova keeps paddr's offset in its page. A PCI-like domain first tries
 * below 4 GiB (unless IOPT_DMA_FORCEDAC), then the whole mask.
 * The largest page sizes that the alignment allows are used.
 * Returns 0 and *iova, or, with nothing mapped and the IOVA freed:
 *   -EINVAL  size 0, paddr + size wraps, prot 0 or with unknown bits or
 *            without READ/WRITE, dma_mask not 2^n - 1 or below the
 *            IOVA space, cpu out of range, NULL iova;
 *   -ERANGE  paddr beyond the page table's output size;
 *   -ENOMEM  no IOVA space below the mask (after the policy's flush), or
 *            no memory for a page table: the tables the call added
 *            before that may stay, empty (a lock-free table cannot free
 *            a table another CPU may be descending into); a later map of
 *            that range uses them and iopt_dma_destroy() frees them
 *            (docs/dma.md, "Map");
 *   -ETIMEDOUT an earlier invalidation had timed out and the flush-all
 *            that must precede reuse timed out too (docs/dma.md).
 * IOPT_DMA_DIRECT: *iova = paddr; -EINVAL as above (no IOVA space: a
 * mask 2^n - 1 is enough); -EIO when paddr + size - 1 > dma_mask.
 * Any thread, concurrently with every call but create/destroy.
 */
IOPT_API int iopt_dma_map(struct iopt_dma *d, uint64_t paddr, uint64_t size,
			  unsigned prot, uint64_t dma_mask, unsigned cpu,
			  uint64_t *iova);

/*
 * Unmap what iopt_dma_map returned: iova and the same size. Each leaf
 * goes with the size it was mapped with: a block (or run) that lies in
 * the range is removed whole, never split, so an unmap of what was
 * mapped needs no table memory. Strict:
 * clear, invalidate the range, sync, then free the IOVA. Lazy/single:
 * clear, queue the IOVA with the queue's flush generation; it is handed
 * out again only after a flush-all that began after the unmap completed.
 * Exhaust: clear and hold the IOVA until an allocation fails, then one
 * flush-all releases everything held. Walk-cache invalidations (tables
 * removed) are synchronous under every policy. Returns 0, or:
 *   -EINVAL  size 0 or wrapping, cpu out of range, or (check_unmap) the
 *            range is not an IOVA allocation of that size; nothing changed;
 *   -ENOENT  iova is not mapped (nothing changed), or only part of the
 *            range was (that part is cleared and invalidated; the IOVA is
 *            not freed); counted in stats.bad_unmaps;
 *   -ETIMEDOUT strict: the sync timed out. The entries are cleared and
 *            the IOVA freed, and no map succeeds until a flush-all has
 *            completed (the next map does one).
 * IOPT_DMA_DIRECT: 0, or -EINVAL for size 0, a wrapping range or a CPU
 * out of range; nothing else is checked (nothing was mapped).
 * Any thread; two unmaps of the same mapping must not race.
 */
IOPT_API int iopt_dma_unmap(struct iopt_dma *d, uint64_t iova, uint64_t size,
			    unsigned cpu);

/* One physical segment of a scatter list. */
struct iopt_dma_seg {
	uint64_t paddr;
	uint64_t len;
};

/*
 * Map n segments, in order, into one contiguous IOVA range: segment k
 * starts where segment k - 1 ended. Every segment but the first must
 * start on a granule boundary and every one but the last must end on one
 * (else -EINVAL); *iova is the first segment's address, *total the length
 * from it to the end of the last. All or nothing: errors as iopt_dma_map
 * (also -EINVAL for n 0, NULL sg, iova or total, or a zero-length
 * segment), and on any error no segment stays mapped and the IOVA is
 * freed (tables as for iopt_dma_map's -ENOMEM). IOPT_DMA_DIRECT: the
 * segments must form one physical range (each starting where the one
 * before ended; else -EINVAL), which is returned, -EIO past the mask.
 * Any thread.
 */
IOPT_API int iopt_dma_map_sg(struct iopt_dma *d, const struct iopt_dma_seg *sg,
			     size_t n, unsigned prot, uint64_t dma_mask,
			     unsigned cpu, uint64_t *iova, uint64_t *total);

/* Unmap what iopt_dma_map_sg returned (iova, total): as iopt_dma_unmap. */
IOPT_API int iopt_dma_unmap_sg(struct iopt_dma *d, uint64_t iova,
			       uint64_t total, unsigned cpu);

/*
 * Flush-all now and release every IOVA the policy holds (IOPT_DMA_DIRECT:
 * 0, nothing held). 0, or the
 * driver's error (-ETIMEDOUT; the IOVAs stay safe: maps refuse to reuse
 * space until a flush-all completes). Any thread.
 */
IOPT_API int iopt_dma_flush(struct iopt_dma *d);

/* Release flush queues whose timeout expired (without fq_timer); a
 * flush-all first when any has. NULL: no-op. Never fails (a failed
 * flush-all shows in stats.inv_errors and makes the next map flush).
 * Any thread. */
IOPT_API void iopt_dma_poll(struct iopt_dma *d);

struct iopt_dma_stats {
	uint64_t maps, unmaps;		/* successful calls (sg counts one) */
	uint64_t map_errors;		/* failed map/map_sg calls, refused
					 * ones included (but for a NULL d) */
	uint64_t bad_unmaps;		/* -ENOENT / -EINVAL unmaps */
	uint64_t inv_errors;		/* driver inv/sync/flush failures */
	uint64_t flush_alls;		/* policy flush-alls (iopt_fq) */
	uint64_t held;			/* IOVAs waiting for a flush now */
	uint64_t viommu_traps;		/* cfg.viommu_trap_*: trapped
					 * inv_range, flush_all (and, with
					 * viommu_trap_map, map) calls */
	uint64_t viommu_trap_pages;	/* the pages those traps named */
	uint64_t iova_cache_flushes;	/* failed IOVA tries that flushed
					 * every CPU's cache (cfg.rcache_flush) */
};

/* Counters (relaxed snapshots). Any thread. */
IOPT_API void iopt_dma_get_stats(struct iopt_dma *d, struct iopt_dma_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_DMA_H */
