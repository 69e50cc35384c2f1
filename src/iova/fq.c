/* SPDX-License-Identifier: MIT */
/*
 * Invalidation policies: when may an unmapped range be allocated again?
 *
 *  STRICT:  invalidate the range and wait, then free it.
 *  LAZY:    queue it on the freeing CPU's ring; one flush-all releases a
 *           whole ring (when it is full, or its oldest entry is older than
 *           the timeout).
 *  SINGLE:  the same with one ring for everyone (expensive invalidation).
 *  EXHAUST: hold every range, never invalidate, until an allocation fails;
 *           then one flush-all releases them all.
 * Whatever the policy, an allocation that fails releases what is held
 * (after a flush) and tries once more.
 *
 * Safety: every queued entry records the flush generation begun when it
 * was queued (flush_start); it is released only once flush_finish has
 * passed it, i.e. after a flush that began after the entry was queued has
 * completed. The orderings, pair by pair:
 *
 *  1. Unmap vs. flush (store buffering). The caller clears the page-table
 *     entry (a relaxed store) and calls iopt_fq_free(), which issues a full
 *     fence and then reads flush_start. A flusher increments flush_start,
 *     issues a full fence, and only then calls flush_all(), after which
 *     the walker refills from what it reads in memory. The two fences pair:
 *     either the free reads the incremented flush_start (the entry waits
 *     for a later flush), or the clear is visible before the invalidation
 *     begins (the walker cannot refill the old entry after it). With only
 *     an acquire load on the free side, the clear could become visible
 *     after the load, and the entry be released after a flush that did
 *     not cover it.
 *  2. Flush completion vs. release. flush_finish is incremented (release)
 *     after flush_all() returns; fq_release() reads it with acquire. Its
 *     pairing makes the invalidation happen-before the range's reuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iova_internal.h"

struct fq_entry {
	uint64_t pfn, size, gen;
	/* Queued no earlier than this (fq_push()); only the head's is
	 * read, by iopt_fq_poll(). */
	uint64_t time;
	unsigned cpu;
	/* The size's cache class, or FQ_UNCACHED: sizes above the caches,
	 * and every range whose live record iova_free_check() marked. */
	unsigned cls;
};

/* Fill a ring entry (the ring's lock held). */
static inline void fq_entry_set(struct fq_entry *e, uint64_t pfn,
				uint64_t size, uint64_t gen, uint64_t time,
				unsigned cpu, unsigned cls)
{
	e->pfn = pfn;
	e->size = size;
	e->gen = gen;
	e->time = time;
	e->cpu = cpu;
	e->cls = cls;
}

#define FQ_UNCACHED (~0u)

struct fq_ring {
	struct plat_spinlock lock;
	struct fq_entry *e;
	unsigned cap;		/* 0: unbounded (EXHAUST) */
	unsigned head, n;	/* circular when bounded */
	unsigned alloc;		/* allocated entries (EXHAUST grows) */
	uint64_t n_frees;	/* statistic: frees accepted here, under
				 * the lock (no shared atomic per unmap) */
	uint64_t time;		/* the last clock reading (fq_push()) */
} __attribute__((aligned(64)));

struct iopt_fq {
	struct iopt_iova *d;
	/* The fast paths of fq_check() and iopt_fq_free(), from d's
	 * configuration: the largest size they take (check_max: fq_check(),
	 * 0 with check_cached_frees; fast_max: iopt_fq_free()'s inline
	 * path, also 0 under STRICT), the pfn bounds, the CPUs. */
	uint64_t check_max, fast_max, start_pfn, end_pfn;
	unsigned nr_cpus;
	struct iopt_fq_cfg cfg;
	unsigned nrings;
	struct fq_ring *rings;
	uint64_t flush_start, flush_finish;
	/* n_frees: STRICT frees; the queued ones
	 * count in their ring. Both count calls that returned 0. */
	uint64_t n_flush_all, n_flush_range, n_frees;
	struct plat_thread timer;
	bool timer_running;
	uint64_t stop;
};

static uint64_t fq_now(const struct iopt_fq *q)
{
	return q->cfg.clock ? q->cfg.clock(q->cfg.clock_ctx) : plat_clock_ns();
}

static void fq_flush_all(struct iopt_fq *q)
{
	plat_fetch_add_acq_rel64(&q->flush_start, 1);
	/* Full fence: pairs with the one in iopt_fq_free() (ordering 1 at the
	 * top): the invalidation starts after the increment is visible. */
	plat_fence_seq_cst();
	if (q->cfg.flush_all)
		q->cfg.flush_all(q->cfg.ctx);
	plat_fetch_add_acq_rel64(&q->n_flush_all, 1);
	/* Release: pairs with the acquire load in fq_release(). */
	plat_fetch_add_acq_rel64(&q->flush_finish, 1);
}

/* ceil(log2(size)), size >= 1: the cache class of a size. */
static inline unsigned fq_cls(uint64_t size)
{
	return size > 1 ? 64u - (unsigned)__builtin_clzll(size - 1) : 0;
}

/*
 * The checks of iopt_iova_free_cached(), now (iova_free_check()), so that
 * a queued range is one the later free accepts. The common case inline:
 * a cached size without check_cached_frees is checked for bounds and
 * alignment only (as the kernel's cached free, and as iova_free_check()
 * does for it), and nothing is marked. 0 and *cls (FQ_UNCACHED: the later
 * free goes through iova_free_checked() with the mark), or -EINVAL.
 */
static inline __attribute__((always_inline)) int
fq_check(const struct iopt_fq *q, uint64_t pfn, uint64_t size, unsigned *cls)
{
	bool marked;
	int ret;

	if (plat_likely(size - 1 < q->check_max)) {	/* 1 <= size <= max */
		unsigned c = fq_cls(size);
		uint64_t n = 1ull << c;

		if (pfn < q->start_pfn || pfn >= q->end_pfn ||
		    n > q->end_pfn - pfn || (pfn & (n - 1)))
			return -EINVAL;
		*cls = c;
		return 0;
	}
	ret = iova_free_check(q->d, pfn, size, &marked);
	if (ret)
		return ret;
	/* Unmarked: a size above the caches is always marked, so this is a
	 * cached size (checked mode marks those too). */
	*cls = marked ? FQ_UNCACHED : fq_cls(size);
	return 0;
}

/* Complete the free of an entry fq_check() accepted: 0 or -ENOMEM (no
 * host memory: nothing changed). An unmarked cached range goes straight
 * to cpu's cache (what iova_free_checked() does first for it). */
static inline int fq_complete(struct iopt_iova *d, const struct fq_entry *e)
{
	if (plat_likely(e->cls != FQ_UNCACHED) &&
	    iova_rcache_put(d, e->cls, e->pfn, e->cpu))
		return 0;
	return iova_free_checked(d, e->pfn, e->size, e->cpu,
				 e->cls == FQ_UNCACHED);
}

/* Ranges handed to the cache per lock hold by fq_release_from(). */
#define FQ_BATCH 64u

/* fq_release() once its head entry is covered by flush done. */
static void fq_release_from(struct iopt_fq *q, struct fq_ring *r,
			    uint64_t done)
{
	/* In locals: the frees below are calls, after which the ring's
	 * fields would be loaded again (the lock keeps them ours). */
	struct fq_entry *ring = r->e;
	unsigned head = r->head, n = r->n, cap = r->cap;

	while (n) {
		const struct fq_entry *e = &ring[head];

		if (e->gen >= done)
			break;
		if (plat_likely(e->cls != FQ_UNCACHED)) {
			/* A run of covered cached ranges of one class and
			 * CPU goes into the cache under one hold of its lock
			 * (what fq_complete() does for each); the first that
			 * it does not take continues below. */
			uint64_t pfns[FQ_BATCH];
			unsigned k = 0, h = head, took;

			while (k < FQ_BATCH && k < n && ring[h].gen < done &&
			       ring[h].cls == e->cls && ring[h].cpu == e->cpu) {
				pfns[k++] = ring[h].pfn;
				if (++h == cap)
					h = 0;
			}
			took = iova_rcache_put_many(q->d, e->cls, pfns, k,
						    e->cpu);
			n -= took;
			head += took;		/* < 2 * cap when bounded */
			if (cap && head >= cap)
				head -= cap;
			if (took == k)
				continue;
			e = &ring[head];
		}
		/* No host memory: the entry stays (flushed) for a later try. */
		if (fq_complete(q->d, e))
			break;
		/* Bounded: wrap without a division (head < cap). */
		if (++head == cap)
			head = 0;
		n--;
	}
	r->head = !cap && !n ? 0 : head;
	r->n = n;
}

/* Free the ring's entries from its head that a completed flush covers.
 * Ring lock held. Inline: on most calls (between two flush-alls) nothing
 * is due, and the test is two loads. */
static inline __attribute__((always_inline)) void
fq_release(struct iopt_fq *q, struct fq_ring *r)
{
	/* Acquire: pairs with the release increment in fq_flush_all()
	 * (ordering 2 at the top). */
	uint64_t done = plat_load_acq64(&q->flush_finish);

	if (r->n && r->e[r->head].gen < done)
		fq_release_from(q, r, done);
}

static void *fq_timer_main(void *arg);

int iopt_fq_create(struct iopt_iova *d, const struct iopt_fq_cfg *cfg,
		   struct iopt_fq **out)
{
	struct iopt_fq *q;

	if (!d || !cfg || (unsigned)cfg->policy > IOPT_INVAL_EXHAUST)
		return -EINVAL;
	if (cfg->policy == IOPT_INVAL_STRICT ? !cfg->flush_range : !cfg->flush_all)
		return -EINVAL;
	if (cfg->timer_thread && cfg->clock)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->d = d;
	q->cfg = *cfg;
	q->check_max = d->cfg.check_cached_frees ? 0 :
		       1ull << d->cfg.max_cached_order;
	q->fast_max = cfg->policy == IOPT_INVAL_STRICT ? 0 : q->check_max;
	q->nr_cpus = d->cfg.nr_cpus;
	q->start_pfn = d->cfg.start_pfn;
	q->end_pfn = d->cfg.end_pfn;
	switch (cfg->policy) {
	case IOPT_INVAL_LAZY:
		q->nrings = d->cfg.nr_cpus;
		if (!q->cfg.entries)
			q->cfg.entries = 256;
		if (!q->cfg.timeout_ns)
			q->cfg.timeout_ns = 10000000ull;
		break;
	case IOPT_INVAL_SINGLE:
		q->nrings = 1;
		if (!q->cfg.entries)
			q->cfg.entries = 32768;
		if (!q->cfg.timeout_ns)
			q->cfg.timeout_ns = 1000000000ull;
		break;
	case IOPT_INVAL_EXHAUST:
		q->nrings = 1;
		q->cfg.entries = 0;
		q->cfg.timeout_ns = 0;
		break;
	default:
		q->nrings = 0;
		break;
	}
	if (q->nrings) {
		q->rings = aligned_alloc(64, sizeof(*q->rings) * q->nrings);
		if (!q->rings)
			goto nomem;
		memset(q->rings, 0, sizeof(*q->rings) * q->nrings);
		for (unsigned i = 0; i < q->nrings; i++) {
			struct fq_ring *r = &q->rings[i];

			plat_spin_init(&r->lock);
			r->cap = q->cfg.entries;
			r->alloc = r->cap ? r->cap : 1024;
			r->e = malloc(sizeof(*r->e) * r->alloc);
			if (!r->e)
				goto nomem;
		}
	}
	if (cfg->timer_thread && q->cfg.timeout_ns) {
		int ret = plat_thread_start(&q->timer, fq_timer_main, q);

		if (ret) {	/* the thread library's reason, e.g. -EAGAIN */
			iopt_fq_destroy(q);
			return ret;
		}
		q->timer_running = true;
	}
	*out = q;
	return 0;
nomem:
	iopt_fq_destroy(q);
	return -ENOMEM;
}

void iopt_fq_destroy(struct iopt_fq *q)
{
	if (!q)
		return;
	if (q->timer_running) {
		plat_store_rel64(&q->stop, 1);
		plat_thread_join(&q->timer);
	}
	if (q->rings) {
		bool any = false;

		for (unsigned i = 0; i < q->nrings; i++)
			any |= q->rings[i].e && q->rings[i].n;
		if (any)
			iopt_fq_flush(q);
		for (unsigned i = 0; i < q->nrings; i++)
			free(q->rings[i].e);
		free(q->rings);
	}
	free(q);
}

/*
 * Append an entry for [pfn, pfn + size) to ring r (lock held); false if
 * it is full and cannot grow. Its time: only the head entry's time is
 * read (iopt_fq_poll(): a ring expires when its oldest entry is older
 * than the timeout), so the clock is read when the ring is empty and
 * then once every FQ_CLOCK_EVERY entries; the entries in between take
 * the last reading, which is never after their queueing. A head's time
 * can only be early: a ring may be flushed before its timeout, never
 * after. (Linux arms its flush-queue timer once, at the first entry
 * queued while it is not pending, and flushes when it fires, whatever
 * was queued since.)
 */
#define FQ_CLOCK_EVERY 64u

static inline __attribute__((always_inline)) bool
fq_push(const struct iopt_fq *q, struct fq_ring *r, uint64_t pfn,
	uint64_t size, uint64_t gen, unsigned cpu, unsigned cls)
{
	struct fq_entry *e;

	if (r->cap) {
		if (r->n == r->cap)
			return false;
		unsigned i = r->head + r->n;	/* < 2 * cap */

		e = &r->e[i >= r->cap ? i - r->cap : i];
	} else {
		if (r->head + r->n == r->alloc) {
			struct fq_entry *ne = realloc(r->e,
						      sizeof(*ne) * r->alloc * 2);

			if (!ne)
				return false;
			r->e = ne;
			r->alloc *= 2;
		}
		e = &r->e[r->head + r->n];
	}
	if (q->cfg.timeout_ns && !(r->n & (FQ_CLOCK_EVERY - 1)))
		r->time = fq_now(q);	/* empty, or every 64th */
	fq_entry_set(e, pfn, size, gen, r->time, cpu, cls);
	r->n++;
	return true;
}

/*
 * Queue [pfn, pfn + size), checked (cls from fq_check()), on ring r of
 * CPU c, gen read after the fence (ordering 1): r is locked by the caller
 * and unlocked here. Releases what is due first. 0, or -ENOMEM (the
 * ring cannot grow and the allocator has no memory: nothing changed).
 */
static __attribute__((noinline)) int
fq_queue(struct iopt_fq *q, struct fq_ring *r, uint64_t pfn, uint64_t size,
	 uint64_t gen, unsigned c, unsigned cls)
{
	int ret;

	fq_release(q, r);
	if (plat_unlikely(!fq_push(q, r, pfn, size, gen, c, cls))) {
		/* Full: one flush-all covers the whole ring. */
		fq_flush_all(q);
		fq_release(q, r);
		gen = plat_load_acq64(&q->flush_start);
		if (!fq_push(q, r, pfn, size, gen, c, cls)) {
			struct fq_entry e = { .pfn = pfn, .size = size,
					      .cpu = c, .cls = cls };

			plat_spin_unlock(&r->lock);
			/* Cannot queue (no memory): be strict about it. */
			fq_flush_all(q);
			ret = fq_complete(q->d, &e);
			if (!ret) {
				plat_spin_lock(&r->lock);
				r->n_frees++;
				plat_spin_unlock(&r->lock);
			} else if (cls == FQ_UNCACHED) {
				/* The range stays the caller's. */
				iova_free_check_undo(q->d, pfn, size);
			}
			return ret;
		}
	}
	r->n_frees++;		/* under the ring's lock, as stats reads it */
	plat_spin_unlock(&r->lock);
	return 0;
}

/* fq_queue() for iopt_fq_free(), which found r's lock taken. */
static __attribute__((noinline)) int
fq_lock_queue(struct iopt_fq *q, struct fq_ring *r, uint64_t pfn,
	      uint64_t size, uint64_t gen, unsigned c, unsigned cls)
{
	plat_spin_lock(&r->lock);
	return fq_queue(q, r, pfn, size, gen, c, cls);
}

/* iopt_fq_free() whatever the case: CPU IOPT_IOVA_CPU_SELF or out of
 * range, sizes above the caches, checked frees, STRICT. */
static __attribute__((noinline)) int
fq_free_slow(struct iopt_fq *q, uint64_t pfn, uint64_t size, unsigned cpu)
{
	struct iopt_iova *d = q->d;
	unsigned c = iova_cpu(d, cpu);
	unsigned cls;
	int ret;

	/* The checks of iopt_iova_free_cached(), now: a queued range is one
	 * the later free will accept, and (checked mode, sizes above the
	 * caches) a second free of it fails while it waits. */
	ret = fq_check(q, pfn, size, &cls);
	if (ret)
		return ret;
	if (q->cfg.policy == IOPT_INVAL_STRICT) {
		q->cfg.flush_range(pfn * d->cfg.granule, size * d->cfg.granule,
				   q->cfg.ctx);
		plat_fetch_add_acq_rel64(&q->n_flush_range, 1);
		/* A cached size fq_check() did not mark (so not checked
		 * mode): straight to the CPU's cache, or the allocator, as
		 * iova_free_checked() would, without its checks again. */
		if (cls != FQ_UNCACHED)
			ret = iova_rcache_free(d, cls, pfn, c);
		else
			ret = iova_free_checked(d, pfn, size, c, true);	/* marked */
		if (!ret)	/* A statistic: pairs with the acquire load
				 * in iopt_fq_get_stats(). */
			plat_fetch_add_acq_rel64(&q->n_frees, 1);
		else if (cls == FQ_UNCACHED)	/* -ENOMEM: still the caller's */
			iova_free_check_undo(d, pfn, size);
		return ret;
	}
	struct fq_ring *r = &q->rings[q->nrings == 1 ? 0 : c];
	uint64_t gen;

	/* Ordering 1 (see iopt_fq_free()). */
#ifndef IOPT_PLANT_FQ_FENCE
	plat_fence_seq_cst();
#endif
	gen = plat_load_acq64(&q->flush_start);
	plat_spin_lock(&r->lock);
	return fq_queue(q, r, pfn, size, gen, c, cls);
}

/*
 * The common case inline, without a call: a CPU given by number, a cached
 * size without checked frees (fq_check()'s fast path), a queued policy
 * (fast_max is 0 under STRICT), a bounded ring with room, nothing due for
 * release and no clock reading due (fq_push()). Anything else goes on,
 * locked, in fq_queue(), or from the start in fq_free_slow().
 */
int iopt_fq_free(struct iopt_fq *q, uint64_t pfn, uint64_t size, unsigned cpu)
{
	struct fq_ring *r;
	uint64_t gen, n;
	unsigned cls, k;

	if (plat_unlikely(cpu >= q->nr_cpus || size - 1 >= q->fast_max))
		return fq_free_slow(q, pfn, size, cpu);
	cls = fq_cls(size);
	n = 1ull << cls;
	if (pfn < q->start_pfn || pfn >= q->end_pfn || n > q->end_pfn - pfn ||
	    (pfn & (n - 1)))
		return -EINVAL;
	r = &q->rings[q->nrings == 1 ? 0 : cpu];
	/* Full fence between the caller's page-table clear and the read of
	 * flush_start: pairs with the fence in fq_flush_all() (ordering 1 at
	 * the top of this file). */
#ifndef IOPT_PLANT_FQ_FENCE
	/* (Planted race, compiled only into tests/test_plant_fq.c: no full
	 * barrier between the caller's clear and this read.) */
	plat_fence_seq_cst();
#endif
	gen = plat_load_acq64(&q->flush_start);
	if (plat_unlikely(!iova_trylock(&r->lock)))
		return fq_lock_queue(q, r, pfn, size, gen, cpu, cls);
	k = r->n;
	/* k % 64 != 0: not empty, no clock reading due; k < cap: room (and
	 * bounded); the head not yet covered by a completed flush (the
	 * acquire load pairs with the release increment in fq_flush_all(),
	 * ordering 2): nothing to release, as fq_release() would find. */
	if (plat_likely((k & (FQ_CLOCK_EVERY - 1)) && k < r->cap &&
			r->e[r->head].gen >= plat_load_acq64(&q->flush_finish))) {
		unsigned i = r->head + k;	/* < 2 * cap */
		struct fq_entry *e = &r->e[i >= r->cap ? i - r->cap : i];

		fq_entry_set(e, pfn, size, gen, r->time, cpu, cls);
		r->n = k + 1;
		r->n_frees++;	/* under the ring's lock, as stats reads it */
		plat_spin_unlock(&r->lock);
		return 0;
	}
	return fq_queue(q, r, pfn, size, gen, cpu, cls);
}

void iopt_fq_flush(struct iopt_fq *q)
{
	if (!q->nrings)
		return;
	fq_flush_all(q);
	for (unsigned i = 0; i < q->nrings; i++) {
		plat_spin_lock(&q->rings[i].lock);
		fq_release(q, &q->rings[i]);
		plat_spin_unlock(&q->rings[i].lock);
	}
}

void iopt_fq_poll(struct iopt_fq *q)
{
	bool expired = false;

	if (!q->nrings || !q->cfg.timeout_ns)
		return;
	uint64_t now = fq_now(q);

	for (unsigned i = 0; i < q->nrings && !expired; i++) {
		struct fq_ring *r = &q->rings[i];

		plat_spin_lock(&r->lock);
		expired = r->n && now - r->e[r->head].time >= q->cfg.timeout_ns;
		plat_spin_unlock(&r->lock);
	}
	if (expired)
		iopt_fq_flush(q);
	iopt_iova_trim(q->d);
}

static void *fq_timer_main(void *arg)
{
	struct iopt_fq *q = arg;
	uint64_t tick = q->cfg.timeout_ns / 2 ? q->cfg.timeout_ns / 2 : 1;

	while (!plat_load_acq64(&q->stop)) {
		plat_sleep_ns(tick < 5000000u ? tick : 5000000u);
		iopt_fq_poll(q);
	}
	return NULL;
}

int iopt_fq_alloc(struct iopt_fq *q, uint64_t size, uint64_t dma_limit_pfn,
		  unsigned flags, unsigned cpu, uint64_t *pfn)
{
	int ret = iopt_iova_alloc_dma(q->d, size, dma_limit_pfn, flags, cpu, pfn);
	bool held = false;

	if (ret != -ENOMEM || !q->nrings)
		return ret;
	for (unsigned i = 0; i < q->nrings; i++) {
		plat_spin_lock(&q->rings[i].lock);
		held |= q->rings[i].n != 0;
		plat_spin_unlock(&q->rings[i].lock);
	}
	if (!held)
		return ret;
	iopt_fq_flush(q);
	return iopt_iova_alloc_dma(q->d, size, dma_limit_pfn, flags, cpu, pfn);
}

void iopt_fq_get_stats(struct iopt_fq *q, struct iopt_fq_stats *st)
{
	/*
	 * Rings first, counters after: a flush counts itself (the increment
	 * in fq_flush_all) before it drains a ring under the ring's lock, so
	 * a caller that sees an entry gone also sees the flush that released
	 * it (the lock orders the drain before our acquire loads below).
	 */
	uint64_t frees = 0;

	st->held = 0;
	for (unsigned i = 0; i < q->nrings; i++) {
		plat_spin_lock(&q->rings[i].lock);
		st->held += q->rings[i].n;
		frees += q->rings[i].n_frees;
		plat_spin_unlock(&q->rings[i].lock);
	}
	st->flush_alls = plat_load_acq64(&q->n_flush_all);
	st->flush_ranges = plat_load_acq64(&q->n_flush_range);
	st->frees = frees + plat_load_acq64(&q->n_frees);
}
