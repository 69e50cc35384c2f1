/* SPDX-License-Identifier: MIT */
/*
 * The IOVA domain: stripes of a buddy allocator, the record of live
 * allocations, and the allocation policies (cached, DMA). See
 * include/iopgtable/iova.h for the contract and docs/iova.md for the
 * design.
 *
 * The space is cut into chunks of 2^chunk_order pages; chunk c belongs to
 * stripe c mod nr_stripes. A request of up to a chunk is served inside one
 * stripe (aligned blocks never cross a chunk), under that stripe's lock
 * alone. A larger request locks every stripe (in index order, the only
 * order in which several are ever taken) and looks for whole free chunks.
 * Lock order: CPU cache, then depot, then stripes in index order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iova_internal.h"

/* ---- geometry --------------------------------------------------------- */

static unsigned ceil_log2(uint64_t n)
{
	return n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(n - 1);
}

static uint64_t chunk_pages(const struct iopt_iova *d)
{
	return 1ull << d->chunk_order;
}

static unsigned nr_stripes(const struct iopt_iova *d)
{
	return 1u << d->stripe_shift;
}

/* Return [pfn, pfn + n) to the stripes owning it (locks held by caller). */
static void release_span(struct iopt_iova *d, uint64_t pfn, uint64_t n)
{
	while (n) {
		uint64_t cend = (pfn | (chunk_pages(d) - 1)) + 1;
		uint64_t k = cend - pfn < n ? cend - pfn : n;

		buddy_release(&d->stripes[iova_stripe_of(d, pfn)].buddy, pfn, k);
		pfn += k;
		n -= k;
	}
}

int iopt_iova_create(const struct iopt_iova_cfg *cfg, struct iopt_iova **out)
{
	struct iopt_iova *d;
	struct iopt_iova_cfg c = *cfg;

	if (!c.granule)
		c.granule = 4096;
	if (!c.start_pfn)
		c.start_pfn = 1;
	if (!c.nr_cpus)
		c.nr_cpus = plat_cpu_count();
	if (!c.mag_size)
		c.mag_size = 127;
	if (!c.max_cached_order)
		c.max_cached_order = 5;
	if (!c.depot_max)
		c.depot_max = 32;
	if (!c.trim_ns)
		c.trim_ns = 100000000ull;
	if (!c.nr_stripes) {
		c.nr_stripes = 1;
		while (c.nr_stripes < c.nr_cpus && c.nr_stripes < 16)
			c.nr_stripes *= 2;
	}
	if ((c.granule & (c.granule - 1)) || c.granule < 512 ||
	    c.end_pfn <= c.start_pfn || (c.nr_stripes & (c.nr_stripes - 1)) ||
	    c.nr_stripes > 1024 || c.max_cached_order >= IOVA_MAX_CLASSES ||
	    c.nr_cpus > 65536 || (unsigned)c.flush > IOPT_IOVA_FLUSH_EVERY_RETRY)
		return -EINVAL;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = c;
	d->space_bits = 64 - (unsigned)__builtin_clzll(c.end_pfn - 1);
	if (d->space_bits < 1)
		d->space_bits = 1;
	d->stripe_shift = (unsigned)__builtin_ctz(c.nr_stripes);
	d->limit32 = (1ull << 32) / c.granule - 1;
	d->fail32_order = 64;

	/* Chunks: at least four per stripe below 4 GiB, and a few per stripe
	 * in the whole space. */
	unsigned glg2 = (unsigned)__builtin_ctzll(c.granule);
	int co = (int)(32 - glg2) - (int)d->stripe_shift - 2;
	int cap = (int)d->space_bits - (int)d->stripe_shift - 2;

	if (co > cap)
		co = cap;
	if (co > BUDDY_MAX_ORDER)
		co = BUDDY_MAX_ORDER;
	if (co < (int)c.max_cached_order)
		co = (int)c.max_cached_order;
	d->chunk_order = (unsigned)co;

	d->stripes = aligned_alloc(64, sizeof(*d->stripes) * c.nr_stripes);
	if (!d->stripes)
		goto nomem;
	memset(d->stripes, 0, sizeof(*d->stripes) * c.nr_stripes);
	for (unsigned s = 0; s < c.nr_stripes; s++) {
		plat_spin_init(&d->stripes[s].lock);
		buddy_init(&d->stripes[s].buddy, d->space_bits, d->chunk_order);
		if (live_init(&d->stripes[s].live, d->space_bits, ~IOVA_IN_CACHE))
			goto nomem;
	}
	plat_spin_init(&d->big_lock);
	if (live_init(&d->big, d->space_bits, ~IOVA_IN_CACHE))
		goto nomem;
	release_span(d, c.start_pfn, c.end_pfn - c.start_pfn);
	if (iova_rcache_init(d))
		goto nomem;
	*out = d;
	return 0;
nomem:
	iopt_iova_destroy(d);
	return -ENOMEM;
}

void iopt_iova_destroy(struct iopt_iova *d)
{
	if (!d)
		return;
	iova_rcache_fini(d);
	if (d->stripes) {
		for (unsigned s = 0; s < d->cfg.nr_stripes; s++) {
			buddy_destroy(&d->stripes[s].buddy);
			live_fini(&d->stripes[s].live);
		}
		free(d->stripes);
	}
	live_fini(&d->big);
	free(d);
}

static void lock_all(struct iopt_iova *d)
{
	for (unsigned s = 0; s < nr_stripes(d); s++)
		plat_spin_lock(&d->stripes[s].lock);
	plat_spin_lock(&d->big_lock);
}

static void unlock_all(struct iopt_iova *d)
{
	plat_spin_unlock(&d->big_lock);
	for (unsigned s = nr_stripes(d); s-- > 0;)
		plat_spin_unlock(&d->stripes[s].lock);
}

/* Within one stripe: an aligned block of 2^order pages, size used. */
static int stripe_alloc(struct iopt_iova *d, struct iova_stripe *st,
			uint64_t size, unsigned order, uint64_t limit,
			uint64_t *pfn)
{
	uint64_t p;
	int ret = -ENOMEM;

	plat_spin_lock(&st->lock);
	if (live_reserve(&st->live))
		goto out;
	if (!buddy_take(&st->buddy, order, limit, &p))
		goto out;
	if (live_add(&st->live, p, size)) {
		buddy_release(&st->buddy, p, 1ull << order);
		goto out;
	}
	if (size < (1ull << order))
		buddy_release(&st->buddy, p + size, (1ull << order) - size);
	st->allocated += size;
	*pfn = p;
	ret = 0;
out:
	plat_spin_unlock(&st->lock);
	return ret;
}

/* Larger than a chunk: whole free chunks, every lock held. */
static int global_alloc(struct iopt_iova *d, uint64_t size, unsigned order,
			uint64_t limit, uint64_t *pfn)
{
	uint64_t blk = 1ull << order, cp = chunk_pages(d);
	int ret = -ENOMEM;

	if (order >= 63 || limit + 1 < blk)
		return -ENOMEM;
	lock_all(d);
	plat_fetch_add_acq_rel64(&d->st_global, 1);
	if (live_reserve(&d->big))
		goto out;
	for (uint64_t p = (limit + 1 - blk) & ~(blk - 1);; p -= blk) {
		bool ok = p >= d->cfg.start_pfn;

		for (uint64_t c = p; ok && c < p + blk; c += cp)
			ok = buddy_chunk_free(&d->stripes[iova_stripe_of(d, c)].buddy, c);
		if (ok) {
			if (live_add(&d->big, p, size))
				break;
			for (uint64_t c = p; c < p + blk; c += cp)
				buddy_take_range(&d->stripes[iova_stripe_of(d, c)].buddy,
						 c, cp, true);
			if (size < blk)
				release_span(d, p + size, blk - size);
			*pfn = p;
			ret = 0;
			break;
		}
		if (p < blk || p - blk < d->cfg.start_pfn)
			break;
	}
out:
	unlock_all(d);
	return ret;
}

/* Allocate, trying cpu's stripe first. */
static int iova_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit,
		      unsigned cpu, uint64_t *pfn)
{
	if (!size || limit < d->cfg.start_pfn)
		return -EINVAL;
	if (limit > d->cfg.end_pfn - 1)
		limit = d->cfg.end_pfn - 1;
	unsigned order = ceil_log2(size);

	if (order > d->chunk_order)
		return global_alloc(d, size, order, limit, pfn);
	unsigned n = nr_stripes(d), first = cpu & (n - 1);
	bool is32 = limit == d->limit32;

	if (is32 && order >= plat_load_rlx64(&d->fail32_order))
		return -ENOMEM;
	for (unsigned k = 0; k < n; k++)
		if (!stripe_alloc(d, &d->stripes[(first + k) & (n - 1)], size, order,
				  limit, pfn))
			return 0;
	if (is32 && order < plat_load_rlx64(&d->fail32_order))
		plat_store_rlx64(&d->fail32_order, order);
	return -ENOMEM;
}

int iopt_iova_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit_pfn,
		    uint64_t *pfn)
{
	return iova_alloc(d, size, limit_pfn, plat_cpu_id(), pfn);
}

static void iova_reset_fail32(struct iopt_iova *d)
{
	if (plat_load_rlx64(&d->fail32_order) != 64)
		plat_store_rlx64(&d->fail32_order, 64);
}

/* Free [pfn, pfn + size) whose record holds want (size, maybe flagged). */
static int iova_free_rec(struct iopt_iova *d, uint64_t pfn, uint64_t size,
			 uint64_t want)
{
	int ret = -EINVAL;

	if (!size || pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn)
		return -EINVAL;
	if (size > chunk_pages(d)) {
		lock_all(d);
		if (live_get(&d->big, pfn) == want) {
			live_del(&d->big, pfn);
			release_span(d, pfn, size);
			ret = 0;
		}
		unlock_all(d);
		if (!ret && pfn <= d->limit32)
			iova_reset_fail32(d);
		return ret;
	}
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];

	plat_spin_lock(&st->lock);
	if (live_get(&st->live, pfn) == want) {
		live_del(&st->live, pfn);
		buddy_release(&st->buddy, pfn, size);
		st->allocated -= size;
		ret = 0;
	}
	plat_spin_unlock(&st->lock);
	if (!ret && pfn <= d->limit32)
		iova_reset_fail32(d);
	return ret;
}

int iopt_iova_free(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	return iova_free_rec(d, pfn, size, size);
}

void iova_free_from_cache(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	iova_free_rec(d, pfn, size,
		      d->cfg.check_cached_frees ? size | IOVA_IN_CACHE : size);
}

/* Checked mode: flip the in-cache mark of a live record from 'from'. */
static int iova_mark(struct iopt_iova *d, uint64_t pfn, uint64_t from,
		     uint64_t to)
{
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];
	int ret = -EINVAL;

	plat_spin_lock(&st->lock);
	if (live_get(&st->live, pfn) == from) {
		live_set(&st->live, pfn, to);
		ret = 0;
	}
	plat_spin_unlock(&st->lock);
	return ret;
}

int iopt_iova_find(struct iopt_iova *d, uint64_t pfn, uint64_t *start,
		   uint64_t *size)
{
	bool found;

	if (pfn >= d->cfg.end_pfn)
		return -ENOENT;
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];

	plat_spin_lock(&st->lock);
	found = live_find(&st->live, pfn, start, size);
	plat_spin_unlock(&st->lock);
	if (found)
		return 0;
	plat_spin_lock(&d->big_lock);
	found = live_find(&d->big, pfn, start, size);
	plat_spin_unlock(&d->big_lock);
	return found ? 0 : -ENOENT;
}

int iopt_iova_reserve(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	int ret = 0;

	if (!size || pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
	    size > d->cfg.end_pfn - pfn)
		return -EINVAL;
	lock_all(d);
	/* Check every piece first: all or nothing. */
	for (uint64_t p = pfn; p < pfn + size && !ret;) {
		uint64_t cend = (p | (chunk_pages(d) - 1)) + 1;
		uint64_t e = cend < pfn + size ? cend : pfn + size;

		if (!buddy_take_range(&d->stripes[iova_stripe_of(d, p)].buddy, p,
				      e - p, false))
			ret = -EBUSY;
		p = e;
	}
	for (uint64_t p = pfn; p < pfn + size && !ret;) {
		uint64_t cend = (p | (chunk_pages(d) - 1)) + 1;
		uint64_t e = cend < pfn + size ? cend : pfn + size;

		buddy_take_range(&d->stripes[iova_stripe_of(d, p)].buddy, p, e - p,
				 true);
		p = e;
	}
	unlock_all(d);
	return ret;
}

/* ---- cached and DMA allocation ------------------------------------------ */

int iopt_iova_alloc_cached(struct iopt_iova *d, uint64_t size,
			   uint64_t limit_pfn, unsigned cpu, bool flush_ok,
			   uint64_t *pfn)
{
	unsigned c = iova_cpu(d, cpu);

	if (!size || limit_pfn < d->cfg.start_pfn)
		return -EINVAL;
	if (size <= (1ull << d->cfg.max_cached_order)) {
		unsigned cls = ceil_log2(size);

		size = 1ull << cls;
		if (iova_rcache_get(d, cls, limit_pfn, c, pfn)) {
			if (d->cfg.check_cached_frees)
				iova_mark(d, *pfn, size | IOVA_IN_CACHE, size);
			return 0;
		}
	}
	int ret = iova_alloc(d, size, limit_pfn, c, pfn);

	if (ret != -ENOMEM || !flush_ok)
		return ret;
	iopt_iova_flush_caches(d);
	return iova_alloc(d, size, limit_pfn, c, pfn);
}

int iopt_iova_free_cached(struct iopt_iova *d, uint64_t pfn, uint64_t size,
			  unsigned cpu)
{
	if (!size)
		return -EINVAL;
	if (size <= (1ull << d->cfg.max_cached_order)) {
		unsigned cls = ceil_log2(size);

		size = 1ull << cls;
		if (pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
		    (pfn & (size - 1)))
			return -EINVAL;
		if (d->cfg.check_cached_frees &&
		    iova_mark(d, pfn, size, size | IOVA_IN_CACHE))
			return -EINVAL;
		if (iova_rcache_put(d, cls, pfn, iova_cpu(d, cpu)))
			return 0;
		if (d->cfg.check_cached_frees)
			iova_mark(d, pfn, size | IOVA_IN_CACHE, size);
	}
	return iopt_iova_free(d, pfn, size);
}

int iopt_iova_alloc_dma(struct iopt_iova *d, uint64_t size,
			uint64_t dma_limit_pfn, unsigned flags, unsigned cpu,
			uint64_t *pfn)
{
	uint64_t limit32 = d->limit32;

	if ((flags & IOPT_IOVA_DEV_PCI) && !(flags & IOPT_IOVA_FORCE_64) &&
	    dma_limit_pfn > limit32 &&
	    iopt_iova_alloc_cached(d, size, limit32, cpu,
				   d->cfg.flush == IOPT_IOVA_FLUSH_EVERY_RETRY,
				   pfn) == 0)
		return 0;
	return iopt_iova_alloc_cached(d, size, dma_limit_pfn, cpu,
				      d->cfg.flush != IOPT_IOVA_FLUSH_NEVER, pfn);
}

void iopt_iova_get_stats(struct iopt_iova *d, struct iopt_iova_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned s = 0; s < nr_stripes(d); s++) {
		plat_spin_lock(&d->stripes[s].lock);
		st->allocated_pages += d->stripes[s].allocated;
		st->free_pages += d->stripes[s].buddy.free_pages;
		plat_spin_unlock(&d->stripes[s].lock);
	}
	plat_spin_lock(&d->big_lock);
	st->allocated_pages += d->big.pages;
	plat_spin_unlock(&d->big_lock);
	st->cached_ranges = iova_rcache_count(d);
	for (unsigned i = 0; i < d->nr_classes * d->cfg.nr_cpus; i++) {
		plat_spin_lock(&d->cpu[i].lock);
		st->cache_hits += d->cpu[i].hits;
		st->cache_misses += d->cpu[i].misses;
		plat_spin_unlock(&d->cpu[i].lock);
	}
	st->cache_flushes = plat_load_acq64(&d->st_flushes);
	st->global_allocs = plat_load_acq64(&d->st_global);
}
