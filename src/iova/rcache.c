/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU range caches (magazines), after Bonwick's magazines as used by
 * Linux's IOVA rcaches (ATC 2015): each CPU and size class has a loaded
 * and a spare magazine of cfg.mag_size ranges; a full pair spills one full
 * magazine into the class's depot (at most cfg.depot_max); the depot gives
 * one back to a CPU whose magazines are empty; and the depot is trimmed by
 * one magazine per class each cfg.trim_ns, returning its ranges to the
 * allocator. Ranges in a class are exactly 2^class pages.
 *
 * Locks: a CPU cache's lock, then its class's depot lock, then stripe
 * locks (through iova_free_from_cache) — never the other way round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iova_internal.h"

static struct iova_mag *mag_new(const struct iopt_iova *d)
{
	struct iova_mag *m = malloc(sizeof(*m) + d->cfg.mag_size * sizeof(uint64_t));

	if (m) {
		m->n = 0;
		m->owner = 0;
	}
	return m;
}

/* Return m's ranges to the allocator, last first. false if the allocator
 * had no host memory: the ranges not returned stay in m. */
static bool mag_drain(struct iopt_iova *d, struct iova_mag *m, unsigned cls)
{
	while (m->n) {
		if (iova_free_from_cache(d, m->pfn[m->n - 1], 1ull << cls))
			return false;
		m->n--;
	}
	return true;
}

/* Pop a range that starts at or below 'highest' (the highest start whose
 * whole range lies at or below the caller's limit): the last one if it
 * fits, else the highest-indexed one that does (a bounded scan of one
 * magazine). */
static bool mag_pop(struct iova_mag *m, uint64_t highest, uint64_t *pfn)
{
	for (unsigned i = m->n; i-- > 0;) {
		if (m->pfn[i] <= highest) {
			*pfn = m->pfn[i];
			m->pfn[i] = m->pfn[--m->n];
			return true;
		}
	}
	return false;
}

/*
 * Take a full magazine from the depot (its lock held) for cpu: the one
 * cpu spilled last if it has one there; else, once the depot is at least
 * half full, the one spilled last by anyone; else NULL (the caller
 * allocates from its own stripe). Ranges go back to the CPU that freed
 * them: each CPU's ranges then stay in the part of the space its stripe
 * allocated them from, and so do the page-table entries that map them.
 * Handed from CPU to CPU at every turn, as a depot shared without
 * preference does when a CPU runs dry just after another spilled, two
 * CPUs' ranges end up side by side, and their mappings in the same cache
 * lines of a last-level table, which then move between the CPUs on every
 * map and unmap (docs/dma.md, "Two threads"). A CPU that only allocates still
 * gets the others' magazines, once they pile up. The scan is bounded by
 * depot_max, once a magazine.
 */
static struct iova_mag *depot_take(const struct iopt_iova *d,
				   struct iova_depot *dp, unsigned cpu)
{
	struct iova_mag *m;
	unsigned i = dp->n;

	if (!i)
		return NULL;
	while (i-- > 0 && dp->mags[i]->owner != cpu)
		;
	if (i == ~0u) {		/* none of cpu's */
		if (2ull * dp->n < d->cfg.depot_max)
			return NULL;
		i = dp->n - 1;	/* the last spilled */
	}
	m = dp->mags[i];
	/* Keep the others' order (last spilled on top). */
	memmove(&dp->mags[i], &dp->mags[i + 1],
		(dp->n - 1 - i) * sizeof(dp->mags[0]));
	dp->n--;
	return m;
}

int iova_rcache_init(struct iopt_iova *d)
{
	unsigned ncpu = d->cfg.nr_cpus;
	size_t ncc = (size_t)(d->cfg.max_cached_order + 1) * ncpu;

	/* Zeroed before anything can fail, so that iova_rcache_fini() after
	 * a failure frees only what was allocated. */
	d->cpu = aligned_alloc(64, sizeof(*d->cpu) * ncc);
	if (d->cpu)
		memset(d->cpu, 0, sizeof(*d->cpu) * ncc);
	d->depot = aligned_alloc(64, sizeof(*d->depot) *
				 (d->cfg.max_cached_order + 1));
	if (d->depot)
		memset(d->depot, 0, sizeof(*d->depot) * (d->cfg.max_cached_order + 1));
	if (!d->cpu || !d->depot)
		return -ENOMEM;
	d->nr_classes = d->cfg.max_cached_order + 1;
	for (unsigned i = 0; i < ncc; i++) {
		plat_spin_init(&d->cpu[i].lock);
		d->cpu[i].loaded = mag_new(d);
		d->cpu[i].prev = mag_new(d);
		if (!d->cpu[i].loaded || !d->cpu[i].prev)
			return -ENOMEM;
	}
	for (unsigned c = 0; c < d->nr_classes; c++) {
		plat_spin_init(&d->depot[c].lock);
		d->depot[c].last_trim = iova_now(d);
		d->depot[c].mags = calloc(d->cfg.depot_max, sizeof(struct iova_mag *));
		if (!d->depot[c].mags)
			return -ENOMEM;
	}
	return 0;
}

void iova_rcache_fini(struct iopt_iova *d)
{
	if (d->cpu) {
		/* nr_classes is set only once both arrays exist (zeroed). */
		for (unsigned i = 0; i < d->nr_classes * d->cfg.nr_cpus; i++) {
			free(d->cpu[i].loaded);
			free(d->cpu[i].prev);
		}
		free(d->cpu);
	}
	if (d->depot) {
		for (unsigned c = 0; c < d->nr_classes; c++) {
			if (!d->depot[c].mags)
				continue;
			for (unsigned k = 0; k < d->depot[c].n; k++)
				free(d->depot[c].mags[k]);
			free(d->depot[c].mags);
		}
		free(d->depot);
	}
}

/*
 * iova_rcache_get() past its common case: the lock was contended (locked
 * false: taken here), or the top of the loaded magazine did not fit.
 * Out of line, so that the common case saves no registers.
 */
static __attribute__((noinline)) bool
rcache_get_slow(struct iopt_iova *d, unsigned cls, uint64_t highest,
		unsigned cpu, uint64_t *pfn, bool locked)
{
	/* Six arguments, all in registers: the caller's call is a jump. */
	struct iova_cpu_cache *cc = &d->cpu[cls * d->cfg.nr_cpus + cpu];
	bool hit = false;

	if (!locked)
		plat_spin_lock(&cc->lock);
	if (mag_pop(cc->loaded, highest, pfn)) {
		hit = true;
	} else if (mag_pop(cc->prev, highest, pfn)) {
		struct iova_mag *t = cc->loaded;

		cc->loaded = cc->prev;
		cc->prev = t;
		hit = true;
	} else if (cc->loaded->n == 0) {
		struct iova_depot *dp = &d->depot[cls];
		struct iova_mag *full = NULL;

		plat_spin_lock(&dp->lock);
		full = depot_take(d, dp, cpu);
		plat_spin_unlock(&dp->lock);
		if (full) {
			free(cc->loaded);
			cc->loaded = full;
			hit = mag_pop(cc->loaded, highest, pfn);
		}
	}
	if (hit)
		cc->hits++;
	else
		cc->misses++;
	plat_spin_unlock(&cc->lock);
	return hit;
}

bool iova_rcache_get(struct iopt_iova *d, unsigned cls, uint64_t limit_pfn,
		     unsigned cpu, uint64_t *pfn)
{
	struct iova_cpu_cache *cc = &d->cpu[cls * d->cfg.nr_cpus + cpu];
	uint64_t last = (1ull << cls) - 1;
	bool locked;

	/* The limit is inclusive and bounds the range's last page, not only
	 * its first: a cached range fits if it starts at or below this. */
	if (limit_pfn < last)
		return false;
	limit_pfn -= last;
	/* The common case, without a call: the lock free at the first try
	 * and the last range of the loaded magazine below the limit (what
	 * mag_pop() tries first). */
	locked = iova_trylock(&cc->lock);
	if (plat_likely(locked)) {
		struct iova_mag *m = cc->loaded;
		unsigned n = m->n;

		if (plat_likely(n && m->pfn[n - 1] <= limit_pfn)) {
			*pfn = m->pfn[n - 1];
			m->n = n - 1;
			cc->hits++;
			plat_spin_unlock(&cc->lock);
			return true;
		}
	}
	return rcache_get_slow(d, cls, limit_pfn, cpu, pfn, locked);
}

/* iova_rcache_put() past its common case: the lock was contended (locked
 * false: taken here), or the loaded magazine was full. Out of line, as
 * rcache_get_slow(). */
static __attribute__((noinline)) bool
rcache_put_slow(struct iopt_iova *d, struct iova_cpu_cache *cc, unsigned cls,
		uint64_t pfn, unsigned cpu, bool locked)
{
	bool cached = true, spilled = false;

	if (!locked)
		plat_spin_lock(&cc->lock);
	if (cc->loaded->n == d->cfg.mag_size) {
		if (cc->prev->n < d->cfg.mag_size) {
			struct iova_mag *t = cc->loaded;

			cc->loaded = cc->prev;
			cc->prev = t;
		} else {
			/* Both full: one goes to the depot, or back to the
			 * allocator when the depot is full. */
			struct iova_depot *dp = &d->depot[cls];
			struct iova_mag *fresh = mag_new(d);
			bool stored = false;

			if (fresh) {
				plat_spin_lock(&dp->lock);
				if (dp->n < d->cfg.depot_max) {
					cc->loaded->owner = cpu;
					dp->mags[dp->n++] = cc->loaded;
					stored = true;
				}
				plat_spin_unlock(&dp->lock);
			}
			spilled = true;
			if (stored) {
				cc->loaded = fresh;
			} else {
				/* On a failed drain (no host memory) the rest
				 * stays cached and pfn goes to the allocator. */
				free(fresh);
				mag_drain(d, cc->loaded, cls);
			}
		}
	}
	if (cc->loaded->n < d->cfg.mag_size)
		cc->loaded->pfn[cc->loaded->n++] = pfn;
	else
		cached = false;
	plat_spin_unlock(&cc->lock);
	/* The depot is trimmed as it is used (and by iopt_iova_trim() callers
	 * such as the flush-queue timer): reading the clock on every free
	 * would cost more than the cache saves. */
	if (spilled)
		iopt_iova_trim(d);
	return cached;
}

/* The common case of a put, without a call: the lock free at the first
 * try and room in the loaded magazine. false: not done, *locked says
 * whether the lock is held. */
static inline __attribute__((always_inline)) bool
rcache_put_fast(struct iopt_iova *d, struct iova_cpu_cache *cc, uint64_t pfn,
		bool *locked)
{
	*locked = iova_trylock(&cc->lock);
	if (plat_likely(*locked)) {
		struct iova_mag *m = cc->loaded;
		unsigned n = m->n;

		if (plat_likely(n < d->cfg.mag_size)) {
			m->pfn[n] = pfn;
			m->n = n + 1;
			plat_spin_unlock(&cc->lock);
			return true;
		}
	}
	return false;
}

bool iova_rcache_put(struct iopt_iova *d, unsigned cls, uint64_t pfn,
		     unsigned cpu)
{
	struct iova_cpu_cache *cc = &d->cpu[cls * d->cfg.nr_cpus + cpu];
	bool locked;

	if (rcache_put_fast(d, cc, pfn, &locked))
		return true;
	return rcache_put_slow(d, cc, cls, pfn, cpu, locked);
}

/* iova_rcache_free() past the common case: the put, else the allocator. */
static __attribute__((noinline)) int
rcache_free_slow(struct iopt_iova *d, struct iova_cpu_cache *cc, unsigned cls,
		 uint64_t pfn, unsigned cpu, bool locked)
{
	if (rcache_put_slow(d, cc, cls, pfn, cpu, locked))
		return 0;
	return iova_free_from_cache(d, pfn, 1ull << cls);
}

int iova_rcache_free(struct iopt_iova *d, unsigned cls, uint64_t pfn,
		     unsigned cpu)
{
	struct iova_cpu_cache *cc = &d->cpu[cls * d->cfg.nr_cpus + cpu];
	bool locked;

	if (rcache_put_fast(d, cc, pfn, &locked))
		return 0;
	return rcache_free_slow(d, cc, cls, pfn, cpu, locked);
}

void iopt_iova_trim(struct iopt_iova *d)
{
	uint64_t now = iova_now(d);

	for (unsigned c = 0; c < d->nr_classes; c++) {
		struct iova_depot *dp = &d->depot[c];

		/* Unlocked peek: a stale value only delays or repeats a
		 * check; the decision is made under the lock. */
		if (now - plat_load_rlx64(&dp->last_trim) < d->cfg.trim_ns)
			continue;
		plat_spin_lock(&dp->lock);
		if (now - dp->last_trim >= d->cfg.trim_ns) {
			plat_store_rlx64(&dp->last_trim, now);
			/* Drained under the depot lock (depot before stripes):
			 * a magazine the allocator cannot take whole (no host
			 * memory) goes back where it was. */
			if (dp->n) {
				struct iova_mag *m = dp->mags[dp->n - 1];

				if (mag_drain(d, m, c)) {
					dp->n--;
					free(m);
				}
			}
		}
		plat_spin_unlock(&dp->lock);
	}
}

void iopt_iova_flush_caches(struct iopt_iova *d)
{
	iova_rcache_flush(d, true);
}

void iova_rcache_flush(struct iopt_iova *d, bool depots)
{
	plat_fetch_add_acq_rel64(&d->st_flushes, 1);
	for (unsigned c = 0; c < d->nr_classes; c++) {
		for (unsigned cpu = 0; cpu < d->cfg.nr_cpus; cpu++) {
			struct iova_cpu_cache *cc = &d->cpu[c * d->cfg.nr_cpus + cpu];

			plat_spin_lock(&cc->lock);
			/* 4.13 took the tree's lock for each magazine, empty
			 * or not (iova_magazine_free_pfns()). */
			if (d->walk) {
				iova_walk_mag(d);
				iova_walk_mag(d);
			}
			if (mag_drain(d, cc->loaded, c))
				mag_drain(d, cc->prev, c);
			plat_spin_unlock(&cc->lock);
		}
		if (!depots)
			continue;
		struct iova_depot *dp = &d->depot[c];

		plat_spin_lock(&dp->lock);
		/* What the allocator cannot take (no host memory) stays. */
		while (dp->n && mag_drain(d, dp->mags[dp->n - 1], c))
			free(dp->mags[--dp->n]);
		plat_spin_unlock(&dp->lock);
	}
}

uint64_t iova_rcache_count(struct iopt_iova *d)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < d->nr_classes; c++) {
		for (unsigned cpu = 0; cpu < d->cfg.nr_cpus; cpu++) {
			struct iova_cpu_cache *cc = &d->cpu[c * d->cfg.nr_cpus + cpu];

			plat_spin_lock(&cc->lock);
			n += cc->loaded->n + cc->prev->n;
			plat_spin_unlock(&cc->lock);
		}
		plat_spin_lock(&d->depot[c].lock);
		for (unsigned k = 0; k < d->depot[c].n; k++)
			n += d->depot[c].mags[k]->n;
		plat_spin_unlock(&d->depot[c].lock);
	}
	return n;
}

/*
 * Put pfns[0, n), ranges of class cls, in cpu's cache under one hold of
 * its lock: as iova_rcache_put() of each in turn while the loaded or the
 * spare magazine has room, stopping where a magazine would go to the
 * depot. Returns how many it took, from the front; the caller puts the
 * rest with iova_rcache_put() (for the flush queue's release of a ring).
 */
unsigned iova_rcache_put_many(struct iopt_iova *d, unsigned cls,
			      const uint64_t *pfns, unsigned n, unsigned cpu)
{
	struct iova_cpu_cache *cc = &d->cpu[cls * d->cfg.nr_cpus + cpu];
	unsigned done = 0;

	plat_spin_lock(&cc->lock);
	while (done < n) {
		struct iova_mag *m = cc->loaded;

		if (m->n == d->cfg.mag_size) {
			if (cc->prev->n == d->cfg.mag_size)
				break;
			cc->loaded = cc->prev;
			cc->prev = m;
			m = cc->loaded;
		}
		while (done < n && m->n < d->cfg.mag_size)
			m->pfn[m->n++] = pfns[done++];
	}
	plat_spin_unlock(&cc->lock);
	return done;
}
