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

/* Return [pfn, pfn + n) to the stripes owning it (locks held by caller).
 * Whole chunks need no memory (their nodes exist since they were taken);
 * the caller prepares the stripes of partial chunks. */
static int release_span(struct iopt_iova *d, uint64_t pfn, uint64_t n)
{
	while (n) {
		uint64_t cend = (pfn | (chunk_pages(d) - 1)) + 1;
		uint64_t k = cend - pfn < n ? cend - pfn : n;

		if (buddy_release(&d->stripes[iova_stripe_of(d, pfn)].buddy, pfn, k))
			return -ENOMEM;
		pfn += k;
		n -= k;
	}
	return 0;
}

/* At creation: free [pfn, pfn + n), at most one chunk's worth of pieces
 * per stripe between two whole-chunk runs. */
static int add_span(struct iopt_iova *d, uint64_t pfn, uint64_t n)
{
	while (n) {
		uint64_t cend = (pfn | (chunk_pages(d) - 1)) + 1;
		uint64_t k = cend - pfn < n ? cend - pfn : n;
		struct buddy *b = &d->stripes[iova_stripe_of(d, pfn)].buddy;

		if (buddy_prepare(b, 0) || buddy_release(b, pfn, k))
			return -ENOMEM;
		pfn += k;
		n -= k;
	}
	return 0;
}

/*
 * Creation costs O(stripes x log space), not O(space): each stripe's
 * whole chunks are one run of its top-order set (rset_add_range()), and
 * only the partial chunks at either end are freed block by block.
 */
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
	d->fail32_size = IOVA_FAIL32_NONE;

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
		struct iova_stripe *st = &d->stripes[s];

		plat_spin_init(&st->lock);
		buddy_init(&st->buddy, d->space_bits, d->chunk_order, s,
			   d->stripe_shift);
		if (live_init(&st->live, d->space_bits, ~IOVA_IN_CACHE))
			goto nomem;
		/* The record's radix set draws on the stripe's pool too, so
		 * that a prepared allocation cannot fail after taking space. */
		st->live.starts.pool = &st->buddy.pool;
		st->buddy.pool_min += rset_path_nodes(&st->live.starts);
	}
	plat_spin_init(&d->big_lock);
	if (live_init(&d->big, d->space_bits, ~IOVA_IN_CACHE))
		goto nomem;

	uint64_t first = (c.start_pfn + chunk_pages(d) - 1) >> d->chunk_order;
	uint64_t last = c.end_pfn >> d->chunk_order;

	if (first >= last) {
		if (add_span(d, c.start_pfn, c.end_pfn - c.start_pfn))
			goto nomem;
	} else {
		if (add_span(d, c.start_pfn, (first << d->chunk_order) - c.start_pfn) ||
		    add_span(d, last << d->chunk_order,
			     c.end_pfn - (last << d->chunk_order)))
			goto nomem;
		for (unsigned s = 0; s < c.nr_stripes; s++)
			if (buddy_add_chunks(&d->stripes[s].buddy, first, last))
				goto nomem;
	}
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
			live_fini(&d->stripes[s].live);
			buddy_destroy(&d->stripes[s].buddy);
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

/* Every lock held: make every stripe able to take 'chunks' whole chunks
 * of a run (spread over the stripes) and 'partial' pieces of chunks. */
static int prepare_all(struct iopt_iova *d, uint64_t chunks, unsigned partial)
{
	for (unsigned s = 0; s < nr_stripes(d); s++) {
		struct buddy *b = &d->stripes[s].buddy;
		uint64_t per = (chunks >> d->stripe_shift) + 1;

		if (buddy_prepare(b, buddy_chunk_run_nodes(b, per) +
				     partial * b->pool_min))
			return -ENOMEM;
	}
	return 0;
}

/* Under st's lock: note a successful free that includes pages at or below
 * the 32-bit limit. Relaxed store: read by iova_note_fail32() after its
 * full fence. */
static void note_free32(struct iova_stripe *st)
{
	plat_store_rlx64(&st->frees32, plat_load_rlx64(&st->frees32) + 1);
}

/* After note_free32() and the unlock: the 32-bit space has room again.
 * The fence pairs with the one in iova_note_fail32(): either that search
 * sees our frees32 or we see its hint. */
static void iova_reset_fail32(struct iopt_iova *d)
{
	plat_fence_seq_cst();
	if (plat_load_rlx64(&d->fail32_size) != IOVA_FAIL32_NONE)
		plat_store_rlx64(&d->fail32_size, IOVA_FAIL32_NONE);
}

/* A search below the 32-bit limit found no room for size pages in any
 * stripe; seen is the sum of frees32 read under each stripe's lock. */
static void iova_note_fail32(struct iopt_iova *d, uint64_t size, uint64_t seen)
{
	uint64_t now = 0;

	if (size >= plat_load_rlx64(&d->fail32_size))
		return;
	plat_store_rlx64(&d->fail32_size, size);
	/* Pairs with the fence in iova_reset_fail32(). */
	plat_fence_seq_cst();
	for (unsigned s = 0; s < nr_stripes(d); s++)
		now += plat_load_rlx64(&d->stripes[s].frees32);
	if (now != seen)	/* a free raced with the search */
		plat_store_rlx64(&d->fail32_size, IOVA_FAIL32_NONE);
}

/*
 * Within one stripe: size pages at a start aligned to 2^order, at or below
 * cap; with run set, also a run whose rounded-up block is not all free
 * (buddy_take_run(), not O(log)). 0; -ENOSPC (no room); -ENOMEM (no host
 * memory; nothing changed). Adds the stripe's frees32 to *seen.
 */
static int stripe_alloc(struct iova_stripe *st, uint64_t size, unsigned order,
			uint64_t cap, bool run, uint64_t *pfn, uint64_t *seen)
{
	struct buddy *b = &st->buddy;
	uint64_t p, blk = 1ull << order;
	int ret = -ENOMEM;

	plat_spin_lock(&st->lock);
	*seen += plat_load_rlx64(&st->frees32);
	if (live_reserve(&st->live) || buddy_prepare(b, 0))
		goto out;
	ret = -ENOSPC;
	if (buddy_take(b, order, cap, &p)) {
		if (size < blk)
			buddy_release(b, p + size, blk - size);
	} else if (!run || !buddy_take_run(b, size, order, cap, &p)) {
		goto out;
	}
	/* Prepared: the record's radix nodes come from the pool. */
	if (live_add(&st->live, p, size)) {
		buddy_release(b, p, size);
		ret = -ENOMEM;
		goto out;
	}
	st->allocated += size;
	*pfn = p;
	ret = 0;
out:
	plat_spin_unlock(&st->lock);
	return ret;
}

/* Larger than a chunk: whole free chunks covering size pages from a start
 * aligned to 2^order, every lock held. */
static int global_alloc(struct iopt_iova *d, uint64_t size, unsigned order,
			uint64_t limit, uint64_t *pfn)
{
	uint64_t blk = 1ull << order, cp = chunk_pages(d);
	uint64_t span = (size + cp - 1) & ~(cp - 1);
	int ret = -ENOMEM;

	if (order >= 63 || limit + 1 < size)
		return -ENOMEM;
	lock_all(d);
	plat_fetch_add_acq_rel64(&d->st_global, 1);
	if (live_reserve(&d->big) || prepare_all(d, span >> d->chunk_order, 1))
		goto out;
	for (uint64_t p = (limit + 1 - size) & ~(blk - 1);; p -= blk) {
		bool ok = p >= d->cfg.start_pfn;

		for (uint64_t c = p; ok && c < p + span; c += cp)
			ok = buddy_chunk_free(&d->stripes[iova_stripe_of(d, c)].buddy, c);
		if (ok) {
			if (live_add(&d->big, p, size))
				break;
			for (uint64_t c = p; c < p + span; c += cp)
				buddy_take_range(&d->stripes[iova_stripe_of(d, c)].buddy,
						 c, cp, true);
			if (size < span)
				release_span(d, p + size, span - size);
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
	if (limit + 1 < size)
		return -ENOMEM;
	/* The highest start aligned to 2^order whose size pages end at or
	 * below the limit: only size pages need to fit, not 2^order. */
	uint64_t cap = (limit + 1 - size) & ~((1ull << order) - 1);
	unsigned n = nr_stripes(d), first = cpu & (n - 1);
	bool is32 = limit == d->limit32, nomem = false;
	uint64_t seen = 0;

	if (is32 && size >= plat_load_rlx64(&d->fail32_size))
		return -ENOMEM;
	/* Whole blocks in every stripe first (O(log) each); only then, for
	 * a size that is not a power of two, the slower search for a run. */
	bool pow2 = size == 1ull << order;

	for (unsigned pass = 0; pass < (pow2 ? 1u : 2u); pass++) {
		seen = 0;
		nomem = false;
		for (unsigned k = 0; k < n; k++) {
			int r = stripe_alloc(&d->stripes[(first + k) & (n - 1)], size,
					     order, cap, pass, pfn, &seen);

			if (!r)
				return 0;
			nomem |= r == -ENOMEM;
		}
	}
	/* Only a search that found no room (not one short of host memory)
	 * may say that the 32-bit space is full. */
	if (is32 && !nomem)
		iova_note_fail32(d, size, seen);
	return -ENOMEM;
}

int iopt_iova_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit_pfn,
		    uint64_t *pfn)
{
	return iova_alloc(d, size, limit_pfn, plat_cpu_id(), pfn);
}

/* Free [pfn, pfn + size) whose record holds want (size, maybe flagged).
 * 0; -EINVAL (no such record); -ENOMEM (no host memory: no change). */
static int iova_free_rec(struct iopt_iova *d, uint64_t pfn, uint64_t size,
			 uint64_t want)
{
	int ret = -EINVAL;
	bool low = pfn <= d->limit32;

	if (!size || pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
	    size > d->cfg.end_pfn - pfn)
		return -EINVAL;
	if (size > chunk_pages(d)) {
		lock_all(d);
		if (live_get(&d->big, pfn) == want) {
			/* Whole chunks go back without memory; the partial
			 * chunk at the end needs its stripe prepared. */
			uint64_t tail = (pfn + size - 1) & ~(chunk_pages(d) - 1);

			ret = -ENOMEM;
			if (!buddy_prepare(&d->stripes[iova_stripe_of(d, tail)].buddy, 0)) {
				live_del(&d->big, pfn);
				release_span(d, pfn, size);
				if (low)
					for (unsigned s = 0; s < nr_stripes(d); s++)
						note_free32(&d->stripes[s]);
				ret = 0;
			}
		}
		unlock_all(d);
		if (!ret && low)
			iova_reset_fail32(d);
		return ret;
	}
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];

	plat_spin_lock(&st->lock);
	if (live_get(&st->live, pfn) == want) {
		ret = -ENOMEM;
		if (!buddy_prepare(&st->buddy, 0)) {
			live_del(&st->live, pfn);
			buddy_release(&st->buddy, pfn, size);
			st->allocated -= size;
			if (low)
				note_free32(st);
			ret = 0;
		}
	}
	plat_spin_unlock(&st->lock);
	if (!ret && low)
		iova_reset_fail32(d);
	return ret;
}

int iopt_iova_free(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	return iova_free_rec(d, pfn, size, size);
}

int iova_free_from_cache(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	return iova_free_rec(d, pfn, size,
			     d->cfg.check_cached_frees ? size | IOVA_IN_CACHE : size);
}

/* Flip the in-cache mark of a live record from 'from' to 'to'. */
static int iova_mark(struct iopt_iova *d, uint64_t pfn, uint64_t from,
		     uint64_t to)
{
	int ret = -EINVAL;

	if ((from & ~IOVA_IN_CACHE) > chunk_pages(d)) {
		plat_spin_lock(&d->big_lock);
		if (live_get(&d->big, pfn) == from) {
			live_set(&d->big, pfn, to);
			ret = 0;
		}
		plat_spin_unlock(&d->big_lock);
		return ret;
	}
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];

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
	/* Then the memory for all of it: two partial chunks and a run. */
	if (!ret && prepare_all(d, (size >> d->chunk_order) + 2, 2))
		ret = -ENOMEM;
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

/* The size a free of 'size' pages returns: cached sizes were rounded up. */
static uint64_t free_size(const struct iopt_iova *d, uint64_t size)
{
	if (size && size <= (1ull << d->cfg.max_cached_order))
		return 1ull << ceil_log2(size);
	return size;
}

int iova_free_check(struct iopt_iova *d, uint64_t pfn, uint64_t size,
		    bool *marked)
{
	bool cached = size && size <= (1ull << d->cfg.max_cached_order);

	*marked = false;
	size = free_size(d, size);
	if (!size || pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
	    size > d->cfg.end_pfn - pfn)
		return -EINVAL;
	if (cached) {
		/* Bounds and alignment only, as the kernel's cached free. */
		if (pfn & (size - 1))
			return -EINVAL;
		if (!d->cfg.check_cached_frees)
			return 0;
	}
	/* Against the record: it must be live and not already being freed;
	 * the mark makes a second free of the same range fail until this
	 * one has completed. */
	if (iova_mark(d, pfn, size, size | IOVA_IN_CACHE))
		return -EINVAL;
	*marked = true;
	return 0;
}

int iova_free_checked(struct iopt_iova *d, uint64_t pfn, uint64_t size,
		      unsigned cpu, bool marked)
{
	size = free_size(d, size);
	if (size <= (1ull << d->cfg.max_cached_order) &&
	    iova_rcache_put(d, ceil_log2(size), pfn, cpu))
		return 0;
	return iova_free_rec(d, pfn, size, marked ? size | IOVA_IN_CACHE : size);
}

int iopt_iova_free_cached(struct iopt_iova *d, uint64_t pfn, uint64_t size,
			  unsigned cpu)
{
	bool marked;
	int ret;

	/* The common case, unchecked and cached (iova_free_check() and
	 * iova_free_checked() in one): bounds and alignment, then the CPU's
	 * magazine. */
	if (size && size <= (1ull << d->cfg.max_cached_order) &&
	    !d->cfg.check_cached_frees) {
		unsigned cls = ceil_log2(size);

		size = 1ull << cls;
		if (pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
		    size > d->cfg.end_pfn - pfn || (pfn & (size - 1)))
			return -EINVAL;
		if (iova_rcache_put(d, cls, pfn, iova_cpu(d, cpu)))
			return 0;
		return iova_free_rec(d, pfn, size, size);
	}
	ret = iova_free_check(d, pfn, size, &marked);

	if (ret)
		return ret;
	ret = iova_free_checked(d, pfn, size, iova_cpu(d, cpu), marked);
	if (ret && marked)	/* -ENOMEM: still allocated, unmark it */
		iova_free_check_undo(d, pfn, size);
	return ret;
}

void iova_free_check_undo(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	size = free_size(d, size);
	iova_mark(d, pfn, size | IOVA_IN_CACHE, size);
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
