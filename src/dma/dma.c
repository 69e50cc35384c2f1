/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer: IOVA allocation + page table + driver + invalidation
 * policy, as Linux's dma-iommu joins them (docs/dma.md).
 *
 * The page table is created with this file's TLB ops (cookie: the DMA
 * domain), which route to the driver's ops table:
 *   flush_walk  -> inv_range(leaf = false) + sync: walk caches,
 *                  synchronous under every policy;
 *   add_page    -> with the unmap caller's gather: nothing here (the unmap
 *                  path invalidates the gathered range under strict, and
 *                  leaves it to the flush-all under the lazy policies);
 *                  without a gather (a failed map cleaning up, a split):
 *                  inv_range(leaf = true) + sync;
 *   sync        -> none (see dma_tlb_ops); flush_all -> flush_all.
 * Every inv_range and flush_all goes through drv_inv_range()/
 * drv_flush_all(), where cfg.viommu_trap_ns/_page_ns take their trap.
 *
 * Kernel variants (dma.h, docs/dma.md "Kernel variants"): IOPT_DMA_DIRECT
 * domains have none of the parts and leave map and unmap's common cases
 * (fast_cpus 0, fast_unmap false) for direct_map()/direct_unmap();
 * cfg.domain_lock leaves them for map_locked(), unmap_strict() and
 * unmap_lazy_locked(), which hold dom_lock around the table changes (and
 * the strict unmap's invalidation and sync). Neither adds work to the
 * common cases of a translated, unlocked domain but one test of locked.
 *
 * Ordering contract (docs/dma.md "Concurrency"):
 *  D1. An unmapped range reaches the policy (iopt_fq_free) only after
 *      iopt_pgtable_unmap_pages() returned, so the flush-all that releases it
 *      (which begins after the queueing, iova.h) invalidates a TLB that can no
 *      longer refill the old translation from the table.
 *  D2. A failed invalidation (driver error, sync timeout) increments
 *      fail_seq (acq_rel RMW) before the IOVA it concerns can be freed. A
 *      map that later gets that IOVA got it through the allocator's locks,
 *      which order the increment before its acquire load of fail_seq; it
 *      then flushes everything (recover_stale) before it maps, so no
 *      stale translation survives into a new mapping.
 *  D3. clean_seq only grows (CAS loop); it is set to the fail_seq read
 *      before a flush-all that then completed: every failure up to that
 *      count happened before the flush began.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/dma.h>

#include "../platform/platform.h"
#include "../platform/plat_lock.h"

#define DMA_MAX_SIDS	64
#define DMA_4G		(1ull << 32)

/* Successful maps, and unmaps under the strict policy: the other
 * policies' unmaps are the flush queue's accepted frees (counted under
 * its ring lock, iopt_fq_get_stats()), so a lazy unmap makes no counter
 * RMW of its own. */
struct dma_pcpu {
	uint64_t maps, unmaps;
} __attribute__((aligned(64)));

struct iopt_dma {
	struct iopt_dma_cfg cfg;
	const struct iopt_dma_drv_ops *ops;
	void *ddom;			/* driver domain */
	struct iopt_pgtable *pt;
	struct iopt_iova *iova;
	struct iopt_fq *fq;
	unsigned granule_lg2;
	unsigned iova_flags;		/* IOPT_IOVA_* for the allocator */
	uint64_t granule;
	uint64_t pgsizes;		/* the page table's page sizes */
	/* What one last-level table maps: no block is smaller (unmap). */
	uint64_t leaf_span;
	uint64_t start, end;		/* IOVA space, bytes [start, end) */
	/* The fast paths' constants (set at create): the last pfn of the
	 * space (the limit of a mask that covers it), the largest va -
	 * start of a granule inside it, and whether an unmap is lazy and
	 * unchecked (no check_unmap). */
	uint64_t last_pfn, va_span;
	bool fast_unmap;
	unsigned nr_cpus;
	/* The CPUs of map's common case: nr_cpus, or 0 (IOPT_DMA_DIRECT)
	 * so that every map of a direct domain takes the general path. */
	unsigned fast_cpus;
	bool direct;			/* IOPT_DMA_DIRECT */
	bool locked;			/* cfg.domain_lock */
	/* No PCI first try and a flush allowed: one cached allocation. */
	bool one_try;
	/* cfg.viommu_trap_ns and _page_ns; trap: either is set. */
	uint64_t trap_ns, trap_page_ns;
	uint64_t space_pages;		/* the IOVA space's: a flush-all's */
	bool trap;
	bool trap_map;			/* cfg.viommu_trap_map (with trap) */
	uint64_t fail_seq, clean_seq;	/* D2, D3 */
	/* statistics: relaxed, pair with nothing; the hot ones per CPU so
	 * that CPUs do not share a cache line on every call */
	struct dma_pcpu *pcpu;
	uint64_t n_map_errors, n_bad_unmaps, n_inv_errors;
	struct plat_lock dom_lock;	/* cfg.domain_lock */
	/* The hypervisor's serialisation of trapped refreshes: the end of
	 * the last one booked (ns, plat_clock_ns()), and their counts, all
	 * under trap_lock. */
	struct plat_spinlock trap_lock;
	uint64_t trap_end;
	uint64_t n_traps, n_trap_pages;
	struct plat_spinlock sid_lock;
	uint32_t sids[DMA_MAX_SIDS];
	unsigned nr_sids;
};

static void dma_count(uint64_t *c)
{
	/* Pairs with nothing: a statistic. */
	plat_fetch_add_rlx64(c, 1);
}

/* cpu's own counters (IOPT_IOVA_CPU_SELF: the one it runs on). */
static struct dma_pcpu *dma_pcpu(struct iopt_dma *d, unsigned cpu)
{
	/* An explicit cpu passed cpu_ok(): no division on the hot path. */
	if (cpu == IOPT_IOVA_CPU_SELF)
		cpu = plat_cpu_id() % d->nr_cpus;
	return &d->pcpu[cpu];
}

/* An invalidation failed: stale translations may survive (D2). */
static void dma_inv_failed(struct iopt_dma *d)
{
	dma_count(&d->n_inv_errors);
	/* acq_rel RMW: ordered before the free of any IOVA it concerns
	 * (the caller frees after this returns); pairs with the acquire
	 * load in recover_stale(). */
	plat_fetch_add_acq_rel64(&d->fail_seq, 1);
}

static int dma_check(struct iopt_dma *d, int ret)
{
	if (ret)
		dma_inv_failed(d);
	return ret;
}

/* ---- the driver's invalidations, through the vIOMMU trap --------------- */

/*
 * cfg.viommu_trap_*: a trapped refresh of pages pages. The hypervisor
 * takes one refresh at a time, in the order they arrive, each costing
 * trap_ns + trap_page_ns x its pages (it walks every page of the range).
 * The trap lock is held only to book that time: this refresh begins when
 * the last one booked ends (or now, if that is past), and the CPU stays
 * in the trap, busy, until its own ends, with interrupts and preemption
 * held off as in the lock's section (an intercepted instruction
 * completes before the guest CPU does anything else). So the waiting
 * costs the CPU what spinning on the lock would, and the refreshes
 * cannot overlap: each booked interval starts at or after the previous
 * one's end. A range never counts more than the IOVA space's pages (the
 * most a refresh can name), which bounds the cost at create.
 */
static __attribute__((noinline)) void viommu_trap(struct iopt_dma *d,
						  uint64_t pages)
{
	uint64_t now, end;

	if (pages > d->space_pages)
		pages = d->space_pages;
	plat_spin_lock(&d->trap_lock);
	now = plat_clock_ns();
	end = (d->trap_end > now ? d->trap_end : now) + d->trap_ns +
	      d->trap_page_ns * pages;
	d->trap_end = end;
	d->n_traps++;
	d->n_trap_pages += pages;
	plat_spin_hold();		/* the trap's section outlasts the lock */
	plat_spin_unlock(&d->trap_lock);
	plat_delay_ns(end - now);
	plat_spin_unhold();
}

/* The granules [iova, iova + size) touches. */
static inline uint64_t dma_pages(const struct iopt_dma *d, uint64_t iova,
				 uint64_t size)
{
	uint64_t first = iova >> d->granule_lg2;

	return ((iova + size - 1) >> d->granule_lg2) - first + 1;
}

static inline int drv_inv_range(struct iopt_dma *d, uint64_t iova,
				uint64_t size, uint64_t granule, bool leaf)
{
	if (plat_unlikely(d->trap))
		viommu_trap(d, dma_pages(d, iova, size));
	return d->ops->inv_range(d->ddom, iova, size, granule, leaf);
}

static inline int drv_flush_all(struct iopt_dma *d)
{
	if (plat_unlikely(d->trap))
		viommu_trap(d, d->space_pages);
	return d->ops->flush_all(d->ddom);
}

/* cfg.domain_lock around a page-table change (and a strict unmap's
 * invalidation and sync). */
static inline void dom_lock(struct iopt_dma *d)
{
	if (d->locked)
		plat_lock(&d->dom_lock);
}

static inline void dom_unlock(struct iopt_dma *d)
{
	if (d->locked)
		plat_unlock(&d->dom_lock);
}

/* ---- TLB ops the page table calls ------------------------------------- */

static void tlb_flush_all(void *cookie)
{
	struct iopt_dma *d = cookie;

	dma_check(d, drv_flush_all(d));
}

/* Invalidate and wait: the ops complete what they issue (see below). */
static void inv_sync(struct iopt_dma *d, uint64_t iova, uint64_t size,
		     uint64_t granule, bool leaf)
{
	int ret = drv_inv_range(d, iova, size, granule, leaf);

	dma_check(d, ret ? ret : d->ops->sync(d->ddom));
}

static void tlb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			   void *cookie)
{
	inv_sync(cookie, iova, size, granule, false);
}

static void tlb_add_page(struct iopt_pgtable_gather *gather, uint64_t iova,
			 uint64_t granule, void *cookie)
{
	struct iopt_dma *d = cookie;

	if (gather)
		return;		/* the unmap path handles the gather */
	inv_sync(d, iova, granule ? granule : d->granule, granule, true);
}

/*
 * No sync op: every op above has completed its invalidation when it
 * returns, so the page table has nothing to wait for — and skips its
 * pending-sync bookkeeping, an atomic RMW on one word of the table shared
 * by every CPU, on every unmap. The ops that issue without waiting are
 * called only from the unmap path, which syncs itself (strict) or leaves
 * the leaves to the flush-all (lazy); a walk-cache invalidation or a
 * failed map's cleanup (rare) pays a sync each.
 */
static const struct iopt_pgtable_tlb_ops dma_tlb_ops = {
	.flush_all = tlb_flush_all,
	.flush_walk = tlb_flush_walk,
	.add_page = tlb_add_page,
	.sync = NULL,
};

/* ---- policy callbacks (iopt_fq) ---------------------------------------- */

static void fq_flush_all_cb(void *ctx)
{
	struct iopt_dma *d = ctx;

	dma_check(d, drv_flush_all(d));
}

static void fq_flush_range_cb(uint64_t iova, uint64_t size, void *ctx)
{
	struct iopt_dma *d = ctx;

	/* Not used: strict unmaps invalidate their gather themselves. */
	if (dma_check(d, drv_inv_range(d, iova, size, 0, true)) == 0)
		dma_check(d, d->ops->sync(d->ddom));
}

/* ---- create / destroy ------------------------------------------------- */

/* The allocator's flags for a device (computed once, at create). */
static unsigned iova_flags(unsigned dev_flags)
{
	unsigned f = 0;

	if (dev_flags & IOPT_DMA_DEV_PCI)
		f |= IOPT_IOVA_DEV_PCI;
	if (dev_flags & IOPT_DMA_FORCEDAC)
		f |= IOPT_IOVA_FORCE_64;
	return f;
}

void iopt_dma_default_cfg(struct iopt_dma_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pt.fmt = IOPT_ARM_64_LPAE_S1;
	cfg->pt.granule = 4096;
	cfg->pt.ias = 48;
	cfg->pt.oas = 48;
	cfg->pt.coherent_walk = true;
	cfg->policy = IOPT_INVAL_STRICT;
}

static void dma_free_parts(struct iopt_dma *d)
{
	iopt_fq_destroy(d->fq);
	iopt_pgtable_free(d->pt);
	iopt_iova_destroy(d->iova);
	if (d->ddom)
		d->ops->domain_free(d->ddom);
	free(d->pcpu);
	free(d);
}

int iopt_dma_create(const struct iopt_dma_cfg *cfg, struct iopt_dma **out)
{
	struct iopt_dma *d;
	struct iopt_pgtable_cfg pc;
	struct iopt_pgtable_info info;
	enum plat_lock_kind lk = PLAT_LOCK_TICKET;
	int ret;

	if (!cfg || !out || (unsigned)cfg->mode > IOPT_DMA_DIRECT)
		return -EINVAL;
	if (cfg->mode == IOPT_DMA_TRANSLATE &&
	    (!cfg->ops || !cfg->drv ||
	     (unsigned)cfg->policy > IOPT_INVAL_EXHAUST ||
	     (cfg->dev_flags & ~(IOPT_DMA_DEV_PCI | IOPT_DMA_FORCEDAC)) ||
	     plat_lock_kind(cfg->domain_lock_kind, PLAT_LOCK_TICKET, &lk) ||
	     (unsigned)cfg->rcache_flush > IOPT_IOVA_FLUSH_EVERY_RETRY ||
	     cfg->viommu_trap_ns > IOPT_DMA_TRAP_NS_MAX ||
	     cfg->viommu_trap_page_ns > IOPT_DMA_TRAP_PAGE_NS_MAX))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	d->ops = cfg->ops;
	plat_spin_init(&d->sid_lock);
	plat_spin_init(&d->trap_lock);
	d->nr_cpus = cfg->nr_cpus ? cfg->nr_cpus : plat_cpu_count();
	if (d->nr_cpus > 65536) {
		ret = -EINVAL;
		goto fail;
	}
	d->pcpu = aligned_alloc(64, sizeof(*d->pcpu) * d->nr_cpus);
	if (!d->pcpu) {
		ret = -ENOMEM;
		goto fail;
	}
	memset(d->pcpu, 0, sizeof(*d->pcpu) * d->nr_cpus);
	if (cfg->mode == IOPT_DMA_DIRECT) {
		/* Nothing to build: no table, IOVA, policy or driver. */
		d->direct = true;
		*out = d;
		return 0;
	}
	d->fast_cpus = d->nr_cpus;
	d->locked = cfg->domain_lock;
	if (d->locked)
		plat_lock_init(&d->dom_lock, lk);
	d->trap_ns = cfg->viommu_trap_ns;
	d->trap_page_ns = cfg->viommu_trap_page_ns;
	d->trap = cfg->viommu_trap_ns || cfg->viommu_trap_page_ns;
	d->trap_map = d->trap && cfg->viommu_trap_map;

	pc = cfg->pt;
	pc.tlb = &dma_tlb_ops;
	pc.tlb_cookie = d;
	/* Validate the table before taking an ASID/VMID. */
	ret = iopt_pgtable_alloc(&pc, &d->pt);
	if (ret)
		goto fail;
	iopt_pgtable_get_info(d->pt, &info);
	if (info.fmt == IOPT_ARM_V7S && !d->ops->v7s) {
		ret = -EINVAL;	/* a driver without AArch32-S contexts */
		goto fail;
	}
	ret = d->ops->domain_alloc(cfg->drv,
				   info.fmt == IOPT_ARM_64_LPAE_S2 ||
				   info.fmt == IOPT_ARM_32_LPAE_S2 ? 2 : 1,
				   &d->ddom);
	if (ret) {
		d->ddom = NULL;
		goto fail;
	}
	d->granule = info.granule;
	d->granule_lg2 = (unsigned)__builtin_ctzll(info.granule);
	d->iova_flags = iova_flags(cfg->dev_flags);
	d->pgsizes = info.pgsize_bitmap;
	/* A last-level table: one granule of 8-byte descriptors (LPAE, Arm
	 * ARM D8.2), or 256 small-page entries (v7s level 2, B3.5.1). */
	d->leaf_span = info.fmt == IOPT_ARM_V7S ? 256ull * info.granule :
			info.granule * (info.granule / 8);
	d->start = cfg->iova_start ? cfg->iova_start : d->granule;
	d->end = cfg->iova_end ? cfg->iova_end :
		 (info.ias >= 64 ? ~0ull & ~(d->granule - 1) : 1ull << info.ias);
	if ((d->start | d->end) & (d->granule - 1) || d->start >= d->end ||
	    (info.ias < 64 && d->end > 1ull << info.ias)) {
		ret = -EINVAL;
		goto fail;
	}
	/* A flush-all's trap names the whole space: bounded (dma.h), by a
	 * division, so that no product can wrap; every trap's cost is then
	 * at most IOPT_DMA_TRAP_FLUSH_NS_MAX (viommu_trap() clamps its pages
	 * to the space's). trap_ns <= IOPT_DMA_TRAP_NS_MAX, far below it. */
	d->space_pages = (d->end - d->start) >> d->granule_lg2;
	if (d->trap_page_ns &&
	    d->space_pages > (IOPT_DMA_TRAP_FLUSH_NS_MAX - d->trap_ns) /
			     d->trap_page_ns) {
		ret = -EINVAL;
		goto fail;
	}

	d->last_pfn = (d->end - 1) >> d->granule_lg2;
	d->va_span = d->end - d->start - d->granule;
	d->fast_unmap = cfg->policy != IOPT_INVAL_STRICT && !cfg->check_unmap &&
			!d->locked;
	d->one_try = !(d->iova_flags & IOPT_IOVA_DEV_PCI) &&
		     cfg->rcache_flush != IOPT_IOVA_FLUSH_NEVER;

	struct iopt_iova_cfg ic = {
		.granule = d->granule,
		.start_pfn = d->start >> d->granule_lg2,
		.end_pfn = d->end >> d->granule_lg2,
		.nr_cpus = d->nr_cpus,
		.flush = cfg->rcache_flush,
		.search = cfg->iova_search,
		.walk_node_ns = cfg->iova_walk_node_ns,
	};

	ret = iopt_iova_create(&ic, &d->iova);
	if (ret)
		goto fail;

	struct iopt_fq_cfg fc = {
		.policy = cfg->policy,
		.entries = cfg->fq_entries,
		.timeout_ns = cfg->fq_timeout_ns,
		.flush_range = fq_flush_range_cb,
		.flush_all = fq_flush_all_cb,
		.ctx = d,
		.timer_thread = cfg->fq_timer,
		.clock = cfg->fq_clock,
		.clock_ctx = cfg->fq_clock_ctx,
	};

	ret = iopt_fq_create(d->iova, &fc, &d->fq);
	if (ret) {
		d->fq = NULL;
		goto fail;
	}
	*out = d;
	return 0;
fail:
	dma_free_parts(d);
	return ret;
}

void iopt_dma_destroy(struct iopt_dma *d)
{
	if (!d)
		return;
	iopt_fq_destroy(d->fq);
	d->fq = NULL;
	for (unsigned i = 0; i < d->nr_sids; i++)
		d->ops->detach(d->ddom, d->sids[i]);
	dma_free_parts(d);
}

int iopt_dma_attach(struct iopt_dma *d, uint32_t sid)
{
	int ret;

	if (!d)
		return -EINVAL;
	if (d->direct)
		return 0;	/* no IOMMU: the stream is not translated */
	plat_spin_lock(&d->sid_lock);
	ret = d->nr_sids == DMA_MAX_SIDS ? -ENOSPC : 0;
	plat_spin_unlock(&d->sid_lock);
	if (ret)
		return ret;
	ret = d->ops->attach(d->ddom, d->pt, sid);
	if (ret)
		return ret;
	plat_spin_lock(&d->sid_lock);
	if (d->nr_sids < DMA_MAX_SIDS) {
		d->sids[d->nr_sids++] = sid;
	} else {
		ret = -ENOSPC;	/* a concurrent attach took the last slot */
	}
	plat_spin_unlock(&d->sid_lock);
	if (ret)
		d->ops->detach(d->ddom, sid);
	return ret;
}

int iopt_dma_detach(struct iopt_dma *d, uint32_t sid)
{
	int ret;

	if (!d)
		return -EINVAL;
	if (d->direct)
		return 0;
	ret = d->ops->detach(d->ddom, sid);
	if (ret == -EINVAL)
		return ret;	/* not attached: nothing changed */
	plat_spin_lock(&d->sid_lock);
	for (unsigned i = 0; i < d->nr_sids; i++) {
		if (d->sids[i] == sid) {
			d->sids[i] = d->sids[--d->nr_sids];
			break;
		}
	}
	plat_spin_unlock(&d->sid_lock);
	return ret;
}

struct iopt_pgtable *iopt_dma_pgtable(struct iopt_dma *d)
{
	return d ? d->pt : NULL;
}

/* ---- helpers ------------------------------------------------------------ */

static bool cpu_ok(const struct iopt_dma *d, unsigned cpu)
{
	return cpu == IOPT_IOVA_CPU_SELF || cpu < d->nr_cpus;
}

/* D3: a flush-all that began after fail_seq read f has completed. */
static void mark_clean(struct iopt_dma *d, uint64_t f)
{
	uint64_t c = plat_load_acq64(&d->clean_seq);

	/* clean_seq only grows; a failed CAS reloads c. Pairs with the
	 * acquire loads in recover_stale(). */
	while (c < f && !plat_cas_acq_rel64(&d->clean_seq, &c, f))
		;
}

/* recover_stale()'s flush-all, f the fail_seq it read (D3). */
static __attribute__((noinline, cold)) int recover_flush(struct iopt_dma *d,
							  uint64_t f)
{
	int ret = drv_flush_all(d);

	if (ret) {
		dma_inv_failed(d);
		return ret;
	}
	mark_clean(d, f);
	return 0;
}

/*
 * D2/D3: if an invalidation has failed since the last completed
 * flush-all, flush everything before a new mapping can use an IOVA whose
 * old translation may still be cached.
 */
static inline int recover_stale(struct iopt_dma *d)
{
	/* Acquire: pairs with dma_inv_failed()'s RMW (D2). */
	uint64_t f = plat_load_acq64(&d->fail_seq);
	uint64_t c = plat_load_acq64(&d->clean_seq);

	if (plat_likely(f == c))
		return 0;
	return recover_flush(d, f);	/* fail_seq read before the flush */
}

/* Largest page size for [va, va + len) -> pa, and how many of it. */
static uint64_t pick_pgsize(const struct iopt_dma *d, uint64_t va, uint64_t pa,
			    uint64_t len, size_t *count)
{
	uint64_t sizes = d->pgsizes, pg = 0, bigger;

	/* One granule (the common DMA case): nothing to choose. */
	if (len == d->granule) {
		*count = 1;
		return len;
	}
	for (uint64_t m = sizes; m; m &= m - 1) {
		uint64_t s = m & -m;

		if (s <= len && !((va | pa) & (s - 1)))
			pg = s;
	}
	/* Stop where a larger size could start (same congruence). */
	bigger = sizes & ~(pg | (pg - 1));
	*count = len / pg;
	if (bigger) {
		uint64_t b = bigger & -bigger;

		if (!((va ^ pa) & (b - 1))) {
			uint64_t to = ((va + b) & ~(b - 1)) - va;

			if (to / pg < *count && to / pg)
				*count = to / pg;
		}
	}
	return pg;
}

/*
 * The page size and count of the next iopt_pgtable_unmap_pages() call of a
 * multi-call clear at va, left bytes to go (0: va is not mapped). A block (or
 * run of blocks) that starts at va and ends inside the range goes whole, one
 * per call: the size the walk finds is the size the map wrote, so nothing is
 * split and no table memory is needed. Anything else goes in granule pages up
 * to the end of the last-level table that holds va, where a block could start:
 * pages and runs of pages of that table go with their own descriptors (no
 * tables are unlinked, so no host memory is needed either), and a block the
 * range covers only in part is split, as iopt_pgtable_unmap_pages() documents.
 */
static uint64_t clear_step(struct iopt_dma *d, uint64_t va, uint64_t left,
			   size_t *count)
{
	struct iopt_pgtable_walk w;
	uint64_t s, to;

	if (iopt_pgtable_walk(d->pt, va, &w) || !w.mapped)
		return 0;
	s = w.leaf_size;
	if (s >= d->leaf_span && (s & d->pgsizes) && !(va & (s - 1)) &&
	    s <= left) {
		*count = 1;
		return s;
	}
	to = d->leaf_span - (va & (d->leaf_span - 1));
	*count = (to < left ? to : left) >> d->granule_lg2;
	return d->granule;
}

static __attribute__((noinline)) int64_t
clear_blocks(struct iopt_dma *d, uint64_t va, uint64_t len,
	     struct iopt_pgtable_gather *g)
{
	uint64_t done = 0;

	while (done < len) {
		size_t count;
		uint64_t pg = clear_step(d, va + done, len - done, &count);
		int64_t n;

		if (!pg)
			break;		/* not mapped: stop, as the page table does */
		n = iopt_pgtable_unmap_pages(d->pt, va + done, pg, count, g);
		if (n < 0)
			return done ? (int64_t)done : n;
		done += (uint64_t)n;
		if ((uint64_t)n != pg * count)
			break;
	}
	return (int64_t)done;
}

/*
 * Clear [va, va + len) into gather g: the bytes cleared from va on
 * (stopping at the first address not mapped), or the page table's
 * error. Every leaf goes with the size it was mapped with. Linux's
 * iommu_unmap() gets there by passing the largest size the IOVA's
 * alignment allows; here a walk finds the size, so that a range mapped in
 * pages smaller than its alignment allows (a PA less aligned than the
 * IOVA) is not unlinked table by table either. A range shorter than a
 * last-level table holds no whole block: granule pages in one call; a
 * longer one in steps (clear_step()).
 */
static inline int64_t clear_range(struct iopt_dma *d, uint64_t va,
				  uint64_t len, struct iopt_pgtable_gather *g)
{
	if (plat_likely(len < d->leaf_span))
		return iopt_pgtable_unmap_pages(d->pt, va, d->granule,
						len >> d->granule_lg2, g);
	return clear_blocks(d, va, len, g);
}

/*
 * Clear [va, va + len) (every page of it mapped by us), invalidate the
 * leaves and sync, whatever the policy. Returns 0 or the driver's error.
 */
static int clear_strict(struct iopt_dma *d, uint64_t va, uint64_t len,
			int64_t *cleared)
{
	struct iopt_pgtable_gather g;
	int64_t n;
	int ret = 0;

	iopt_pgtable_gather_init(&g);
	n = clear_range(d, va, len, &g);
	if (cleared)
		*cleared = n;
	if (g.start <= g.last) {
		uint64_t hint = g.sizes && !(g.sizes & (g.sizes - 1)) ? g.sizes : 0;

		ret = drv_inv_range(d, g.start, g.last - g.start + 1,
					hint, true);
		if (!ret)
			ret = d->ops->sync(d->ddom);
		dma_check(d, ret);
	}
	return ret;
}

/* Map [va, va + len) -> pa; all or nothing. */
static int map_range(struct iopt_dma *d, uint64_t va, uint64_t pa, uint64_t len,
		     unsigned prot)
{
	uint64_t done = 0;
	int ret = 0;

	while (done < len) {
		size_t count;
		uint64_t pg = pick_pgsize(d, va + done, pa + done, len - done,
					  &count);

		ret = iopt_pgtable_map_pages(d->pt, va + done, pa + done, pg, count,
					     prot, NULL);
		if (ret)
			break;
		done += pg * count;
	}
	if (ret && done)
		clear_strict(d, va, done, NULL);
	return ret;
}

static int check_prot(unsigned prot)
{
	if (!(prot & (IOPT_READ | IOPT_WRITE)) || (prot & ~IOPT_PROT_MASK))
		return -EINVAL;
	return 0;
}

/* dma_mask must be 2^n - 1 and reach into the IOVA space. */
static int limit_of(const struct iopt_dma *d, uint64_t mask, uint64_t *limit_pfn)
{
	if (mask & (mask + 1))
		return -EINVAL;
	if (mask < d->start)
		return -EINVAL;
	if (mask > d->end - 1)
		mask = d->end - 1;
	*limit_pfn = mask >> d->granule_lg2;
	return 0;
}

/* Allocate npages, then make sure no stale translation is left (D2). */
static inline __attribute__((always_inline)) int
alloc_iova(struct iopt_dma *d, uint64_t npages, uint64_t limit_pfn,
		      unsigned cpu, uint64_t *pfn)
{
	unsigned flags = d->iova_flags;
	/* The allocator first; only when it is out of space does the policy
	 * (iopt_fq_alloc: release what the flush queues hold, try again)
	 * come in. Same result as calling iopt_fq_alloc() alone, one call
	 * layer less on the common path. Without IOPT_IOVA_DEV_PCI,
	 * iopt_iova_alloc_dma() is one cached allocation with the caches
	 * flushed before its last try (unless cfg.rcache_flush is
	 * IOPT_IOVA_FLUSH_NEVER): called directly here (one_try). */
	int ret = d->one_try ?
		iopt_iova_alloc_cached(d->iova, npages, limit_pfn, cpu, true,
				       pfn) :
		iopt_iova_alloc_dma(d->iova, npages, limit_pfn, flags, cpu, pfn);

	if (plat_unlikely(ret == -ENOMEM))
		ret = iopt_fq_alloc(d->fq, npages, limit_pfn, flags, cpu, pfn);
	if (ret)
		return ret;
	ret = recover_stale(d);
	if (ret)
		iopt_iova_free_cached(d->iova, *pfn, npages, cpu);
	return ret;
}

/* ---- map / unmap -------------------------------------------------------- */

/* A map refused or failed before anything was allocated: count it. */
static __attribute__((noinline, cold)) int map_refused(struct iopt_dma *d,
							int ret)
{
	dma_count(&d->n_map_errors);
	return ret;
}

/* A map failed after its IOVA was allocated (the page table changed
 * nothing): give the IOVA back, count it. */
static __attribute__((noinline, cold)) int
map_failed(struct iopt_dma *d, uint64_t pfn, uint64_t npages, unsigned cpu,
	   int ret)
{
	iopt_iova_free_cached(d->iova, pfn, npages, cpu);
	return map_refused(d, ret);
}

/* map_range() under cfg.domain_lock (when set). */
static __attribute__((noinline)) int map_locked(struct iopt_dma *d, uint64_t va,
						uint64_t pa, uint64_t len,
						unsigned prot)
{
	int ret;

	dom_lock(d);
	ret = map_range(d, va, pa, len, prot);
	dom_unlock(d);
	return ret;
}

/* The DMA address of [paddr, paddr + len) with no IOMMU (IOPT_DMA_DIRECT):
 * paddr itself, if the whole buffer lies at or below the mask, as
 * dma-direct's dma_capable(); the general argument checks as for a
 * translated map (no IOVA space to check the mask against). */
static int direct_addr(struct iopt_dma *d, uint64_t paddr, uint64_t len,
		       unsigned prot, uint64_t dma_mask, unsigned cpu)
{
	if (!len || paddr + len - 1 < paddr || !cpu_ok(d, cpu) ||
	    check_prot(prot) || (dma_mask & (dma_mask + 1)))
		return -EINVAL;
	if (paddr + len - 1 > dma_mask)
		return -EIO;
	return 0;
}

static __attribute__((noinline)) int
direct_map(struct iopt_dma *d, uint64_t paddr, uint64_t size, unsigned prot,
	   uint64_t dma_mask, unsigned cpu, uint64_t *iova)
{
	int ret = direct_addr(d, paddr, size, prot, dma_mask, cpu);

	if (ret)
		return map_refused(d, ret);
	dma_count(&dma_pcpu(d, cpu)->maps);
	*iova = paddr;
	return 0;
}

int iopt_dma_map(struct iopt_dma *d, uint64_t paddr, uint64_t size,
		 unsigned prot, uint64_t dma_mask, unsigned cpu, uint64_t *iova)
{
	uint64_t gmask, off, len, npages, limit_pfn, pfn;
	int ret;

	if (!d)
		return -EINVAL;
	if (plat_unlikely(!iova))
		return map_refused(d, -EINVAL);
	gmask = d->granule - 1;
	off = paddr & gmask;
	/* The common case in a few compares, each implying the general
	 * checks below: 1 <= size <= granule - off (one granule; paddr +
	 * size cannot wrap), a CPU by number, R and/or W with known bits,
	 * a mask 2^n - 1 that covers the whole IOVA space. */
	if (plat_likely(size - 1 < d->granule - off && cpu < d->fast_cpus &&
			(prot & (IOPT_READ | IOPT_WRITE)) &&
			!(prot & ~IOPT_PROT_MASK) && dma_mask >= d->end - 1 &&
			!(dma_mask & (dma_mask + 1)))) {
		len = d->granule;
		npages = 1;
		limit_pfn = d->last_pfn;
	} else {
		if (plat_unlikely(d->direct))
			return direct_map(d, paddr, size, prot, dma_mask, cpu,
					  iova);
		len = (off + size + gmask) & ~gmask;
		/* len < off + size: the rounding wrapped. */
		if (!size || paddr + size - 1 < paddr || len < off + size ||
		    !cpu_ok(d, cpu) || check_prot(prot) ||
		    limit_of(d, dma_mask, &limit_pfn))
			return map_refused(d, -EINVAL);
		npages = len >> d->granule_lg2;
	}
	ret = alloc_iova(d, npages, limit_pfn, cpu, &pfn);
	if (plat_unlikely(ret))
		return map_refused(d, ret);
	if (plat_likely(npages == 1 && !d->locked)) {
		/* One granule (the common case): one page of the smallest
		 * size, nothing to choose and nothing to undo on failure
		 * (iopt_pgtable_map_pages of one page maps it or changes
		 * nothing). */
		ret = iopt_pgtable_map_pages(d->pt, pfn << d->granule_lg2, paddr - off,
					     d->granule, 1, prot, NULL);
	} else {
		/* All or nothing: a failure has unmapped what it mapped. */
		ret = map_locked(d, pfn << d->granule_lg2, paddr - off, len, prot);
	}
	if (plat_unlikely(ret))
		return map_failed(d, pfn, npages, cpu, ret);
	if (plat_unlikely(d->trap_map))
		viommu_trap(d, npages);	/* the hypervisor shadows the new entries */
	dma_count(&dma_pcpu(d, cpu)->maps);
	*iova = (pfn << d->granule_lg2) + off;
	return 0;
}

/* Does [pfn, pfn + npages) match an allocation of that size? */
static bool is_allocation(struct iopt_dma *d, uint64_t pfn, uint64_t npages)
{
	uint64_t start, size, p2 = 1;

	if (iopt_iova_find(d->iova, pfn, &start, &size))
		return false;
	while (p2 < npages)
		p2 <<= 1;
	return start == pfn && (size == npages || size == p2);
}

/* Strict: clear, invalidate, sync, free [va, va + len) (checked). */
static int unmap_strict(struct iopt_dma *d, uint64_t va, uint64_t len,
			unsigned cpu)
{
	int64_t n;
	int ret;

	dom_lock(d);
	ret = clear_strict(d, va, len, &n);
	dom_unlock(d);

	if (n != (int64_t)len) {
		dma_count(&d->n_bad_unmaps);
		return n < 0 ? (int)n : -ENOENT;
	}
	iopt_iova_free_cached(d->iova, va >> d->granule_lg2,
			      len >> d->granule_lg2, cpu);
	dma_count(&dma_pcpu(d, cpu)->unmaps);
	return ret;
}

/* A lazy unmap found [va, va + len) not (wholly) mapped: n bytes of it
 * were cleared, or n is the page table's error. */
static __attribute__((noinline, cold)) int
unmap_lazy_bad(struct iopt_dma *d, uint64_t va, int64_t n)
{
	dma_count(&d->n_bad_unmaps);
	if (n > 0) {
		/* Part was mapped: make sure it is gone. */
		int ret = drv_inv_range(d, va, (uint64_t)n, 0, true);

		dma_check(d, ret ? ret : d->ops->sync(d->ddom));
	}
	return n < 0 ? (int)n : -ENOENT;
}

/* A lazy unmap under cfg.domain_lock: the clear (and a bad unmap's
 * invalidation) locked, the queueing after it (D1). */
static __attribute__((noinline)) int
unmap_lazy_locked(struct iopt_dma *d, uint64_t va, uint64_t len, unsigned cpu)
{
	struct iopt_pgtable_gather g;
	int64_t n;
	int ret = 0;

	iopt_pgtable_gather_init(&g);
	dom_lock(d);
	n = clear_range(d, va, len, &g);
	if (n != (int64_t)len)
		ret = unmap_lazy_bad(d, va, n);
	dom_unlock(d);
	if (ret)
		return ret;
	return iopt_fq_free(d->fq, va >> d->granule_lg2, len >> d->granule_lg2,
			    cpu);
}

/* An unmap with no IOMMU: the checks of iopt_dma_unmap(), nothing to
 * undo (dma-direct's unmap does nothing without a bounce buffer). */
static __attribute__((noinline)) int direct_unmap(struct iopt_dma *d,
						   uint64_t iova, uint64_t size,
						   unsigned cpu)
{
	if (!size || iova + size - 1 < iova || !cpu_ok(d, cpu)) {
		dma_count(&d->n_bad_unmaps);
		return -EINVAL;
	}
	dma_count(&dma_pcpu(d, cpu)->unmaps);
	return 0;
}

int iopt_dma_unmap(struct iopt_dma *d, uint64_t iova, uint64_t size,
		   unsigned cpu)
{
	uint64_t off, len, va, npages;
	struct iopt_pgtable_gather g;
	int64_t n;

	if (!d)
		return -EINVAL;
	off = iova & (d->granule - 1);
	va = iova - off;
	/* The common case in a few compares, each implying the general
	 * checks below: 1 <= size <= granule - off (one granule, no wrap),
	 * a CPU by number, start <= va and va + granule <= end, a lazy
	 * policy without check_unmap. */
	if (plat_likely(size - 1 < d->granule - off && cpu < d->nr_cpus &&
			va - d->start <= d->va_span && d->fast_unmap)) {
		len = d->granule;
		npages = 1;
		/* Lazy policies: clear; the gather tells tlb_add_page that
		 * the leaves are taken care of (by the flush-all, D1). */
		iopt_pgtable_gather_init(&g);
		n = iopt_pgtable_unmap_pages(d->pt, va, d->granule, 1, &g);
	} else {
		if (plat_unlikely(d->direct))
			return direct_unmap(d, iova, size, cpu);
		len = (off + size + d->granule - 1) & ~(d->granule - 1);
		npages = len >> d->granule_lg2;
		if (!size || iova + size - 1 < iova || len < off + size ||
		    !cpu_ok(d, cpu) || va < d->start || va > d->end ||
		    len > d->end - va ||
		    (d->cfg.check_unmap &&
		     !is_allocation(d, va >> d->granule_lg2, npages))) {
			dma_count(&d->n_bad_unmaps);
			return -EINVAL;
		}
		if (d->cfg.policy == IOPT_INVAL_STRICT)
			return unmap_strict(d, va, len, cpu);
		if (d->locked)
			return unmap_lazy_locked(d, va, len, cpu);
		iopt_pgtable_gather_init(&g);	/* as above */
		n = clear_range(d, va, len, &g);
	}
	if (plat_unlikely(n != (int64_t)len))
		return unmap_lazy_bad(d, va, n);
	/* D1: queued after the clear returned. Counted by the policy when
	 * it accepts the range (struct dma_pcpu). */
	return iopt_fq_free(d->fq, va >> d->granule_lg2, npages, cpu);
}

/* A scatter list with no IOMMU: one DMA range only where the segments
 * are one physical range (each starts where the one before ended). */
static int direct_map_sg(struct iopt_dma *d, const struct iopt_dma_seg *sg,
			 size_t n, unsigned prot, uint64_t dma_mask,
			 unsigned cpu, uint64_t *iova, uint64_t *total)
{
	uint64_t len = 0;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		if (!sg[i].len || sg[i].paddr != sg[0].paddr + len ||
		    len + sg[i].len < len)
			ret = -EINVAL;
		len += sg[i].len;
	}
	if (!ret)
		ret = direct_addr(d, sg[0].paddr, len, prot, dma_mask, cpu);
	if (ret)
		return map_refused(d, ret);
	dma_count(&dma_pcpu(d, cpu)->maps);
	*iova = sg[0].paddr;
	*total = len;
	return 0;
}

int iopt_dma_map_sg(struct iopt_dma *d, const struct iopt_dma_seg *sg,
		    size_t n, unsigned prot, uint64_t dma_mask, unsigned cpu,
		    uint64_t *iova, uint64_t *total)
{
	uint64_t mask, off, len = 0, limit_pfn, pfn, va, done = 0;
	int ret;

	if (!d)
		return -EINVAL;
	if (!sg || !n || !iova || !total)
		return map_refused(d, -EINVAL);
	if (d->direct)
		return direct_map_sg(d, sg, n, prot, dma_mask, cpu, iova, total);
	mask = d->granule - 1;
	off = sg[0].paddr & mask;
	ret = (!cpu_ok(d, cpu) || check_prot(prot) ||
	       limit_of(d, dma_mask, &limit_pfn)) ? -EINVAL : 0;
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t p = sg[i].paddr, l = sg[i].len;
		uint64_t span = ((p & mask) + l + mask) & ~mask;

		if (!l || p + l - 1 < p || span < l ||
		    (i && (p & mask)) || (i + 1 < n && ((p + l) & mask)) ||
		    len + span < len)
			ret = -EINVAL;
		else
			len += span;
	}
	if (ret)
		return map_refused(d, ret);
	ret = alloc_iova(d, len >> d->granule_lg2, limit_pfn, cpu, &pfn);
	if (ret)
		return map_refused(d, ret);
	va = pfn << d->granule_lg2;
	dom_lock(d);
	for (size_t i = 0; i < n; i++) {
		uint64_t p = sg[i].paddr & ~mask;
		uint64_t span = ((sg[i].paddr & mask) + sg[i].len + mask) & ~mask;

		ret = map_range(d, va + done, p, span, prot);
		if (ret)
			break;
		done += span;
	}
	/* All or nothing: what the earlier segments mapped goes. */
	if (ret && done)
		clear_strict(d, va, done, NULL);
	dom_unlock(d);
	if (ret)
		return map_failed(d, pfn, len >> d->granule_lg2, cpu, ret);
	if (plat_unlikely(d->trap_map))
		viommu_trap(d, len >> d->granule_lg2);
	dma_count(&dma_pcpu(d, cpu)->maps);
	*iova = va + off;
	/* From the first byte to the end of the last segment. */
	{
		uint64_t lo = sg[n - 1].paddr & mask;
		uint64_t lspan = (lo + sg[n - 1].len + mask) & ~mask;

		*total = done - lspan + lo + sg[n - 1].len - off;
	}
	return 0;
}

int iopt_dma_unmap_sg(struct iopt_dma *d, uint64_t iova, uint64_t total,
		      unsigned cpu)
{
	return iopt_dma_unmap(d, iova, total, cpu);
}

int iopt_dma_flush(struct iopt_dma *d)
{
	uint64_t f, errs;
	int ret = 0;

	if (!d)
		return -EINVAL;
	if (d->direct)
		return 0;
	/* Acquire: pairs with dma_inv_failed() (D3: failures up to f
	 * happened before the flush below begins). */
	f = plat_load_acq64(&d->fail_seq);
	errs = plat_load_acq64(&d->n_inv_errors);
	if (d->cfg.policy == IOPT_INVAL_STRICT) {
		ret = dma_check(d, drv_flush_all(d));
	} else {
		iopt_fq_flush(d->fq);
		/* The policy's callback returns nothing: a failure shows in
		 * the counter (conservatively, anyone's failure). */
		if (plat_load_acq64(&d->n_inv_errors) != errs)
			ret = -ETIMEDOUT;
	}
	if (!ret)
		mark_clean(d, f);
	return ret;
}

void iopt_dma_poll(struct iopt_dma *d)
{
	if (d && d->fq)
		iopt_fq_poll(d->fq);
}

void iopt_dma_get_stats(struct iopt_dma *d, struct iopt_dma_stats *st)
{
	struct iopt_fq_stats fs = { 0 };
	struct iopt_iova_stats is = { 0 };

	if (!d->direct) {
		iopt_fq_get_stats(d->fq, &fs);
		iopt_iova_get_stats(d->iova, &is);
	}
	st->maps = st->unmaps = 0;
	for (unsigned i = 0; i < d->nr_cpus; i++) {
		st->maps += plat_load_rlx64(&d->pcpu[i].maps);
		st->unmaps += plat_load_rlx64(&d->pcpu[i].unmaps);
	}
	/* The queued policies' unmaps: the frees the policy accepted (the
	 * DMA layer calls iopt_fq_free() only from a lazy unmap). */
	if (!d->direct && d->cfg.policy != IOPT_INVAL_STRICT)
		st->unmaps += fs.frees;
	st->map_errors = plat_load_rlx64(&d->n_map_errors);
	st->bad_unmaps = plat_load_rlx64(&d->n_bad_unmaps);
	st->inv_errors = plat_load_rlx64(&d->n_inv_errors);
	st->flush_alls = fs.flush_alls;
	st->held = fs.held;
	plat_spin_lock(&d->trap_lock);
	st->viommu_traps = d->n_traps;
	st->viommu_trap_pages = d->n_trap_pages;
	plat_spin_unlock(&d->trap_lock);
	st->iova_cache_flushes = is.cache_flushes;
}
