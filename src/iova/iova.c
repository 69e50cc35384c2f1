/* SPDX-License-Identifier: MIT */
/*
 * The IOVA domain: stripes, each with a free map (fmap.h) and a record of
 * live allocations (those of at most FMAP_REC_MAX pages in the free map's
 * leaves, larger ones in a table, live.h), and the allocation policies
 * (cached, DMA). See
 * include/iopgtable/iova.h for the contract and docs/iova.md for the
 * design.
 *
 * The space is cut into chunks of 2^chunk_order pages; chunk c belongs to
 * stripe c mod nr_stripes. A stripe's free map indexes its own pages only,
 * its chunks one after the other (to_local()): chunk boundaries and every
 * alignment up to a chunk are kept, and the part of any range of the
 * space that falls in one stripe is one run of indices. A request of up
 * to a chunk is served inside one stripe (aligned blocks never cross a
 * chunk), under that stripe's lock alone. A larger request locks every
 * stripe (in index order, the only order in which several are ever taken)
 * and looks for whole free chunks.
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
	return d->chunk_mask + 1;
}

static unsigned nr_stripes(const struct iopt_iova *d)
{
	return 1u << d->stripe_shift;
}

/*
 * The three below are the stripe arithmetic of every allocation and free
 * (a tenth of a two-stripe pair's instructions when they
 * rebuilt their masks from the orders each time): the masks are kept in
 * the domain. One stripe keeps its early return: the identity, cheaper
 * than the general formula (to which it reduces: stripe_shift 0,
 * stripe_mask 0, s 0).
 */

/* Page pfn of the space as an index in its stripe's free map. */
static uint64_t to_local(const struct iopt_iova *d, uint64_t pfn)
{
	if (!d->stripe_shift)
		return pfn;
	return ((pfn >> d->stripe_shift) & ~d->chunk_mask) | (pfn & d->chunk_mask);
}

/* Index l of stripe s's free map as a page of the space. */
static uint64_t to_global(const struct iopt_iova *d, unsigned s, uint64_t l)
{
	if (!d->stripe_shift)
		return l;
	/* l's chunk number times the stripe count, plus s, in chunks: one
	 * multiplication instead of three shifts by variable counts. */
	return l + (l & ~d->chunk_mask) * d->stripe_mask +
	       ((uint64_t)s << d->chunk_order);
}

/* How many of stripe s's pages lie below page x: the index of its first
 * page at or above x. */
static uint64_t local_ceil(const struct iopt_iova *d, unsigned s, uint64_t x)
{
	uint64_t g = x >> d->chunk_order, l;
	unsigned gs = (unsigned)g & d->stripe_mask;

	if (!d->stripe_shift)
		return x;
	l = ((g >> d->stripe_shift) + (gs > s)) << d->chunk_order;
	return gs == s ? l + (x & d->chunk_mask) : l;
}

/* Mark [pfn, pfn + n) free or allocated in every stripe it touches: one
 * run of each stripe's map (locks held; the stripes prepared, else an
 * -ENOMEM may leave earlier stripes changed). */
static int span_set(struct iopt_iova *d, uint64_t pfn, uint64_t n, bool free)
{
	for (unsigned s = 0; s < nr_stripes(d); s++) {
		uint64_t lo = local_ceil(d, s, pfn), hi = local_ceil(d, s, pfn + n);

		if (lo < hi && fmap_set(&d->stripes[s].fmap, lo, hi - lo, free))
			return -ENOMEM;
	}
	return 0;
}

/* Is [pfn, pfn + n) free in every stripe it touches? (Locks held.) */
static bool span_free(struct iopt_iova *d, uint64_t pfn, uint64_t n)
{
	for (unsigned s = 0; s < nr_stripes(d); s++) {
		uint64_t lo = local_ceil(d, s, pfn), hi = local_ceil(d, s, pfn + n);

		if (lo < hi && !fmap_is_free(&d->stripes[s].fmap, lo, hi - lo))
			return false;
	}
	return true;
}

/*
 * Creation costs O(stripes x log space), not O(space): the space's part
 * in each stripe is one run of its free map, marked free in
 * O(64 x height) (whole subtrees stay unmaterialised).
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
	/* 4.13's walk: one tree under one lock, so one stripe (top-down). */
	if (!c.nr_stripes && c.search == IOPT_IOVA_SEARCH_RBTREE_WALK)
		c.nr_stripes = 1;
	if (!c.nr_stripes) {
		c.nr_stripes = 1;
		while (c.nr_stripes < c.nr_cpus && c.nr_stripes < 16)
			c.nr_stripes *= 2;
	}
	if ((c.granule & (c.granule - 1)) || c.granule < 512 ||
	    c.end_pfn <= c.start_pfn || (c.nr_stripes & (c.nr_stripes - 1)) ||
	    c.nr_stripes > 1024 || c.max_cached_order >= IOVA_MAX_CLASSES ||
	    c.nr_cpus > 65536 || (unsigned)c.flush > IOPT_IOVA_FLUSH_EVERY_RETRY ||
	    (unsigned)c.search > IOPT_IOVA_SEARCH_RBTREE_WALK ||
	    c.walk_node_ns > IOPT_IOVA_WALK_NODE_NS_MAX ||
	    (c.walk_node_ns && c.search != IOPT_IOVA_SEARCH_RBTREE_WALK))
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
	if (co > FMAP_ORDERS - 1)
		co = FMAP_ORDERS - 1;
	if (co < (int)c.max_cached_order)
		co = (int)c.max_cached_order;
	d->chunk_order = (unsigned)co;
	d->chunk_mask = (1ull << co) - 1;
	d->stripe_mask = c.nr_stripes - 1;

	d->stripes = aligned_alloc(64, sizeof(*d->stripes) * c.nr_stripes);
	if (!d->stripes)
		goto nomem;
	memset(d->stripes, 0, sizeof(*d->stripes) * c.nr_stripes);
	for (unsigned s = 0; s < c.nr_stripes; s++) {
		struct iova_stripe *st = &d->stripes[s];

		uint64_t n = local_ceil(d, s, c.end_pfn);

		plat_spin_init(&st->lock);
		st->top_cap = UINT64_MAX;	/* no cap: a limit is below it */
		if (fmap_init(&st->fmap, n > 1 ? 64 - (unsigned)__builtin_clzll(n - 1) : 1,
			      d->chunk_order) ||
		    live_init(&st->live, ~IOVA_IN_CACHE))
			goto nomem;
	}
	plat_spin_init(&d->big_lock);
	if (live_init(&d->big, ~IOVA_IN_CACHE) ||
	    span_set(d, c.start_pfn, c.end_pfn - c.start_pfn, true))
		goto nomem;
	if (iova_rcache_init(d))
		goto nomem;
	if (c.search == IOPT_IOVA_SEARCH_RBTREE_WALK && iova_walk_init(d))
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
	iova_walk_fini(d);
	if (d->stripes) {
		for (unsigned s = 0; s < d->cfg.nr_stripes; s++) {
			live_fini(&d->stripes[s].live);
			fmap_destroy(&d->stripes[s].fmap);
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

/* Every lock held: make every stripe's map able to take 'ops' range
 * operations (span_set() calls) without host memory. */
static int prepare_all(struct iopt_iova *d, unsigned ops)
{
	for (unsigned s = 0; s < nr_stripes(d); s++) {
		struct fmap *f = &d->stripes[s].fmap;

		if (fmap_prepare(f, (ops - 1) * f->pool_min))
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
 * The highest p <= cap aligned to 2^order with [p, p + size) free, where
 * size is below 2^order and the whole block at p need not be free. It
 * looks at every free block of 2^(order - 1) pages at or below cap in the
 * worst case (not O(log)): callers use it only after fmap_find() found no
 * whole block in any stripe.
 */
static __attribute__((noinline, cold)) bool
find_run(struct fmap *f, uint64_t size, unsigned order, uint64_t cap,
	 uint64_t *out)
{
	uint64_t blk = 1ull << order, half = blk >> 1, s, x = cap;

	if (!order)
		return false;
	while (fmap_find(f, order - 1, x, &s)) {
		if (s & (blk - 1)) {
			x = s & ~(blk - 1);	/* the aligned start below */
			continue;
		}
		if (fmap_is_free(f, s + half, size - half)) {
			*out = s;
			return true;
		}
		if (!s)
			break;
		x = s - 1;
	}
	return false;
}

/*
 * Within stripe s: size pages at a start aligned to 2^order, at or below
 * cap; with run set, also a run whose rounded-up block is not all free
 * (find_run(), not O(log)). 0; -ENOSPC (no room); -ENOMEM (no host
 * memory; nothing changed). Adds the stripe's frees32 to *seen (if not
 * NULL).
 */
static inline __attribute__((always_inline)) int
stripe_alloc(struct iopt_iova *d, unsigned s, uint64_t size, unsigned order,
	     uint64_t cap, bool run, uint64_t *pfn, uint64_t *seen)
{
	struct iova_stripe *st = &d->stripes[s];
	uint64_t l, top;
	int ret = -ENOMEM;

	plat_spin_lock(&st->lock);
	/* Its pages at or below cap are the indices below top: with more
	 * than one stripe, kept from the last allocation, whose cap a
	 * device's next one mostly shares. */
	if (!d->stripe_shift) {
		top = cap + 1;
	} else if (cap == st->top_cap) {
		top = st->top;
	} else {
		top = local_ceil(d, s, cap + 1);
		st->top_cap = cap;
		st->top = top;
	}
	if (seen)	/* only a search below the 32-bit limit needs it */
		*seen += plat_load_rlx64(&st->frees32);
	if ((size > FMAP_REC_MAX && live_reserve(&st->live)) ||
	    fmap_prepare(&st->fmap, 0))
		goto out;
	ret = -ENOSPC;
	if (!top)
		goto out;
	if (!fmap_take(&st->fmap, order, top - 1, size, &l)) {
		if (!run || !find_run(&st->fmap, size, order, top - 1, &l))
			goto out;
		fmap_set(&st->fmap, l, size, false);	/* prepared */
	}
	*pfn = to_global(d, s, l);
	/* The record: in the free map's leaf for a small allocation (it is
	 * the finger leaf now), else in the stripe's table. */
	if (size <= FMAP_REC_MAX)
		fmap_rec_add(&st->fmap, l, size);
	else
		live_add(&st->live, *pfn, size);
	st->allocated += size;
	ret = 0;
out:
	plat_spin_unlock(&st->lock);
	return ret;
}

/*
 * Larger than a chunk, every lock held: the highest start p >= start_pfn
 * aligned to 2^ceil_log2(size) whose size pages are free and end at or
 * below limit. Only those pages need be free, not the rounded-up block
 * nor the whole chunks they touch. A scan over the aligned starts below
 * the limit, each checked in its first chunk, then in one run per stripe
 * (span_free(): O(stripes x 64 x height) whatever the size): linear in
 * the space, not O(log), for rare huge ranges. A size above 2^63 has no
 * aligned start that is a page (0 is never one): -ENOMEM, as any size
 * that does not fit.
 */
static __attribute__((noinline, cold)) int
global_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit, uint64_t *pfn)
{
	unsigned order = ceil_log2(size);
	uint64_t blk, p, cp = chunk_pages(d);
	int ret = -ENOMEM;

	if (order > 63 || limit + 1 < size)
		return -ENOMEM;
	blk = 1ull << order;
	p = (limit + 1 - size) & ~(blk - 1);
	if (p < d->cfg.start_pfn)
		return -ENOMEM;
	lock_all(d);
	plat_fetch_add_acq_rel64(&d->st_global, 1);
	/* Its pages in each stripe are one run: one operation each. */
	if (live_reserve(&d->big) || prepare_all(d, 1))
		goto out;
	for (;; p -= blk) {
		/* Its first chunk (p starts one, size exceeds one), then the
		 * rest: where the scan passes a fragmented part, one check
		 * rejects most starts. */
		struct fmap *f = &d->stripes[iova_stripe_of(d, p)].fmap;

		if (fmap_is_free(f, to_local(d, p), cp) &&
		    span_free(d, p + cp, size - cp)) {
			live_add(&d->big, p, size);
			span_set(d, p, size, false);	/* prepared */
			*pfn = p;
			ret = 0;
			break;
		}
		if (p - d->cfg.start_pfn < blk)	/* p - blk < start_pfn */
			break;
	}
out:
	unlock_all(d);
	return ret;
}

/* iova_alloc() after the first stripe found no whole block: every stripe
 * in turn, then runs for sizes that are not powers of two. */
static __attribute__((noinline)) int
iova_alloc_rest(struct iopt_iova *d, uint64_t size, unsigned order,
		uint64_t cap, bool is32, unsigned first, uint64_t *pfn)
{
	unsigned n = nr_stripes(d);
	uint64_t seen = 0;
	bool nomem = false;
	/* Whole blocks in every stripe first (O(log) each); only then, for
	 * a size that is not a power of two, the slower search for a run. */
	bool pow2 = size == 1ull << order;

	for (unsigned pass = 0; pass < (pow2 ? 1u : 2u); pass++) {
		seen = 0;
		nomem = false;
		for (unsigned k = 0; k < n; k++) {
			int r = stripe_alloc(d, (first + k) & (n - 1), size,
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

/* iova_alloc() for a size of at most a chunk that may fit below limit;
 * cpu IOPT_IOVA_CPU_SELF: the calling CPU's stripe first. In line in
 * iopt_iova_alloc() (a cache miss calls iova_alloc_stripes()): one call
 * and its saved registers less per allocation. */
static inline __attribute__((always_inline)) int
iova_alloc_stripes_in(struct iopt_iova *d, uint64_t size, uint64_t limit,
		      unsigned cpu, uint64_t *pfn)
{
	if (cpu == IOPT_IOVA_CPU_SELF)	/* only the first stripe: ask
					 * only when there is a choice */
		cpu = d->stripe_shift ? plat_cpu_id() : 0;
	unsigned order = ceil_log2(size);
	/* The highest start aligned to 2^order whose size pages end at or
	 * below the limit: only size pages need to fit, not 2^order. */
	uint64_t cap = (limit + 1 - size) & ~((1ull << order) - 1);
	unsigned first = cpu & d->stripe_mask;
	bool is32 = limit == d->limit32;

	/* The common case: a whole block in the CPU's own stripe. */
	if (!stripe_alloc(d, first, size, order, cap, false, pfn, NULL))
		return 0;
	return iova_alloc_rest(d, size, order, cap, is32, first, pfn);
}

/* iova_alloc_stripes_in() out of line, for the cached paths: their fast
 * paths then save no registers for it. */
static __attribute__((noinline)) int
iova_alloc_stripes(struct iopt_iova *d, uint64_t size, uint64_t limit,
		   unsigned cpu, uint64_t *pfn)
{
	return iova_alloc_stripes_in(d, size, limit, cpu, pfn);
}

/* Allocate, trying cpu's stripe first (IOPT_IOVA_CPU_SELF: the caller's).
 * Inline, so that a try below a 32-bit limit already known to be full (a
 * PCI device's first try) fails without a call; in_line: the stripes'
 * search in line too (iopt_iova_alloc()). */
static inline __attribute__((always_inline)) int
iova_alloc_try(struct iopt_iova *d, uint64_t size, uint64_t limit,
	       unsigned cpu, uint64_t *pfn, bool in_line)
{
	if (!size || limit < d->cfg.start_pfn)
		return -EINVAL;
	if (limit > d->cfg.end_pfn - 1)
		limit = d->cfg.end_pfn - 1;
	if (size > chunk_pages(d))
		return global_alloc(d, size, limit, pfn);
	if (limit + 1 < size)
		return -ENOMEM;
	if (limit == d->limit32 && size >= plat_load_rlx64(&d->fail32_size))
		return -ENOMEM;
	if (in_line)
		return iova_alloc_stripes_in(d, size, limit, cpu, pfn);
	return iova_alloc_stripes(d, size, limit, cpu, pfn);
}

/* IOPT_IOVA_SEARCH_RBTREE_WALK: the tree's note of a try's outcome (the
 * walk charged on a failure). Out of line: off the path without it. */
static __attribute__((noinline, cold)) void
iova_walk_note(struct iopt_iova *d, int ret, uint64_t limit, uint64_t pfn)
{
	if (!ret)
		iova_walk_alloced(d, pfn, limit);
	else if (ret == -ENOMEM)
		iova_walk_failed(d, limit);
}

/* iova_alloc_try(), and with the walk's cost model its note. */
static inline __attribute__((always_inline)) int
iova_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit, unsigned cpu,
	   uint64_t *pfn, bool in_line)
{
	int ret = iova_alloc_try(d, size, limit, cpu, pfn, in_line);

	if (plat_unlikely(d->walk != NULL))
		iova_walk_note(d, ret, limit, ret ? 0 : *pfn);
	return ret;
}

int iopt_iova_alloc(struct iopt_iova *d, uint64_t size, uint64_t limit_pfn,
		    uint64_t *pfn)
{
	return iova_alloc(d, size, limit_pfn, IOPT_IOVA_CPU_SELF, pfn, true);
}

/*
 * Could size pages be an allocation? Not 0, and below 2^63: an allocation
 * of 2^63 pages or more would start at 2^63 or above (aligned, and page 0
 * is never handed out) and end past the last page; and the record's values
 * keep that bit for the in-cache mark (IOVA_IN_CACHE), which such a size
 * would match. One compare.
 */
static inline bool iova_size_ok(uint64_t size)
{
	return size - 1 < IOVA_IN_CACHE - 1;
}

/* Free [pfn, pfn + size) whose record holds want (size, maybe flagged).
 * 0; -EINVAL (no such record); -ENOMEM (no host memory: no change). In
 * line in iopt_iova_free(); the cached paths call iova_free_rec(). */
static inline __attribute__((always_inline)) int
iova_free_in(struct iopt_iova *d, uint64_t pfn, uint64_t size, uint64_t want)
{
	int ret = -EINVAL;
	bool low = pfn <= d->limit32;

	if (!iova_size_ok(size) || pfn < d->cfg.start_pfn ||
	    pfn >= d->cfg.end_pfn || size > d->cfg.end_pfn - pfn)
		return -EINVAL;
	if (size > chunk_pages(d)) {
		lock_all(d);
		if (live_get(&d->big, pfn) == want) {
			ret = -ENOMEM;
			if (!prepare_all(d, 1)) {
				live_del(&d->big, pfn);
				span_set(d, pfn, size, true);
				if (low)
					for (unsigned s = 0; s < nr_stripes(d); s++)
						note_free32(&d->stripes[s]);
				ret = 0;
			}
		}
		unlock_all(d);
		if (!ret && low)
			iova_reset_fail32(d);
		if (!ret && d->walk)
			iova_walk_freed(d, pfn);
		return ret;
	}
	struct iova_stripe *st = &d->stripes[iova_stripe_of(d, pfn)];
	uint64_t l = to_local(d, pfn);
	bool mark = want & IOVA_IN_CACHE;

	plat_spin_lock(&st->lock);
	if (size <= FMAP_REC_MAX) {
		/* Its record's leaf exists: the free needs no node, and never
		 * fails for host memory. */
		if (fmap_rec_free(&st->fmap, l, size, mark))
			ret = 0;
	} else if (fmap_prepare(&st->fmap, 0)) {
		/* No host memory: nothing changed (a bad free still gets
		 * -EINVAL). */
		ret = live_get(&st->live, pfn) == want ? -ENOMEM : -EINVAL;
	} else if (live_del_if(&st->live, pfn, want)) {
		fmap_set(&st->fmap, l, size, true);	/* prepared */
		ret = 0;
	}
	if (!ret) {
		st->allocated -= size;
		if (low)
			note_free32(st);
	}
	plat_spin_unlock(&st->lock);
	if (!ret && low)
		iova_reset_fail32(d);
	if (plat_unlikely(d->walk != NULL) && !ret)
		iova_walk_freed(d, pfn);
	return ret;
}

static __attribute__((noinline)) int
iova_free_rec(struct iopt_iova *d, uint64_t pfn, uint64_t size, uint64_t want)
{
	return iova_free_in(d, pfn, size, want);
}

int iopt_iova_free(struct iopt_iova *d, uint64_t pfn, uint64_t size)
{
	return iova_free_in(d, pfn, size, size);
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
	uint64_t size = from & ~IOVA_IN_CACHE;

	plat_spin_lock(&st->lock);
	if (size <= FMAP_REC_MAX) {
		if (fmap_rec_mark(&st->fmap, to_local(d, pfn), size,
				  from & IOVA_IN_CACHE, to & IOVA_IN_CACHE))
			ret = 0;
	} else if (live_get(&st->live, pfn) == from) {
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

	uint64_t l = to_local(d, pfn), ls;

	plat_spin_lock(&st->lock);
	/* A small allocation lies in one chunk: its offset from pfn is the
	 * same in the stripe's indices and in the space. */
	found = fmap_rec_find(&st->fmap, l, &ls, size);
	if (found)
		*start = pfn - (l - ls);
	else
		found = live_find(&st->live, pfn, d->chunk_order, start, size);
	plat_spin_unlock(&st->lock);
	if (found)
		return 0;
	plat_spin_lock(&d->big_lock);
	found = live_find(&d->big, pfn, 64, start, size);
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
	/* Check all of it first, then the memory: all or nothing. */
	if (!span_free(d, pfn, size))
		ret = -EBUSY;
	else if (prepare_all(d, 1))
		ret = -ENOMEM;
	else
		span_set(d, pfn, size, false);
	unlock_all(d);
	if (!ret && d->walk)	/* 4.13's reserve_iova() inserts a node */
		iova_walk_alloced(d, pfn, UINT64_MAX);
	return ret;
}

/* ---- cached and DMA allocation ------------------------------------------ */

/* The retry of a cached allocation that found no room: flush the caches
 * (cfg.flush allowing) and allocate again. EVERY_RETRY is Linux to 4.14,
 * whose flush (free_cpu_cached_iovas() on every CPU) left the depots
 * alone; they joined it later (5.11), as in iopt_iova_flush_caches(). */
static __attribute__((noinline, cold)) int
alloc_after_flush(struct iopt_iova *d, uint64_t size, uint64_t limit_pfn,
		  unsigned cpu, uint64_t *pfn)
{
	iova_rcache_flush(d, d->cfg.flush != IOPT_IOVA_FLUSH_EVERY_RETRY);
	return iova_alloc(d, size, limit_pfn, cpu, pfn, false);
}

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
	int ret = iova_alloc(d, size, limit_pfn, c, pfn, false);

	if (ret != -ENOMEM || !flush_ok)
		return ret;
	return alloc_after_flush(d, size, limit_pfn, c, pfn);
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
	if (!iova_size_ok(size) || pfn < d->cfg.start_pfn ||
	    pfn >= d->cfg.end_pfn || size > d->cfg.end_pfn - pfn)
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

/* iopt_iova_free_cached() but for its common case: checked frees, sizes
 * above the caches, a CPU not given by number. */
static __attribute__((noinline)) int
free_cached_slow(struct iopt_iova *d, uint64_t pfn, uint64_t size,
		 unsigned cpu)
{
	bool marked;
	int ret = iova_free_check(d, pfn, size, &marked);

	if (ret)
		return ret;
	ret = iova_free_checked(d, pfn, size, iova_cpu(d, cpu), marked);
	if (ret && marked)	/* -ENOMEM: still allocated, unmark it */
		iova_free_check_undo(d, pfn, size);
	return ret;
}

int iopt_iova_free_cached(struct iopt_iova *d, uint64_t pfn, uint64_t size,
			  unsigned cpu)
{
	/* The common case, unchecked, cached and a CPU given by number
	 * (iova_free_check() and iova_free_checked() in one), without a
	 * call but the last: bounds and alignment, then the CPU's magazine
	 * (or the allocator). */
	if (size && size <= (1ull << d->cfg.max_cached_order) &&
	    !d->cfg.check_cached_frees && cpu < d->cfg.nr_cpus) {
		unsigned cls = ceil_log2(size);

		size = 1ull << cls;
		if (pfn < d->cfg.start_pfn || pfn >= d->cfg.end_pfn ||
		    size > d->cfg.end_pfn - pfn || (pfn & (size - 1)))
			return -EINVAL;
		return iova_rcache_free(d, cls, pfn, cpu);
	}
	return free_cached_slow(d, pfn, size, cpu);
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
		st->free_pages += d->stripes[s].fmap.free_pages;
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
	if (d->walk)
		iova_walk_stats(d, &st->tree_walks, &st->tree_visits);
}
