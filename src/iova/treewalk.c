/* SPDX-License-Identifier: MIT */
/*
 * The cost of Linux 4.13's tree search, IOPT_IOVA_SEARCH_RBTREE_WALK
 * (include/iopgtable/iova.h has the rule this follows): the counts a
 * failed try's walk needs, kept beside the free map, and the walk's
 * charge.
 *
 * 4.13's tree holds every allocated range, those in CPU caches included
 * (they stay allocated here too), so its nodes are this allocator's live
 * allocations and reservations: 'total' of them. A failed try visits
 * either all of them or those below cached32; the second needs the
 * number of range starts below a page of the 32-bit space, and the free
 * rule needs the next start above a freed one there. A Fenwick tree over
 * the pages of the 32-bit space counts the starts (one per range) and
 * answers both in O(log pages). Ranges above the 32-bit space only count
 * in 'total': no walk needs their order (cached32 is always below 4 GiB,
 * and a free above it clears cached32 whatever lies beyond).
 *
 * Everything is under w->lock, 4.13's iova_rbtree_lock, taken after the
 * allocator's change (never with another lock of the domain held), so a
 * leaf in the lock order. Counts are sums of +1 and -1 and commute: a
 * concurrent free and re-allocation of one range may be applied in
 * either order and leave the same counts.
 */
#include <errno.h>
#include <stdlib.h>

#include "iova_internal.h"

#define WALK_NONE UINT64_MAX

struct walk_line {
	uint64_t w[8];
} __attribute__((aligned(64)));

struct iova_walk {
	struct plat_spinlock lock;
	uint64_t base;		/* first page indexed */
	uint64_t n32;		/* pages indexed: [base, base + n32) */
	unsigned top_bit;	/* highest power of two <= n32 (0: none) */
	uint32_t *fen;		/* Fenwick tree, entry i - 1 for index i */
	uint64_t total;		/* nodes in the tree */
	uint64_t total32;	/* of which start in the index */
	uint64_t cached32;	/* page of the cached node, or WALK_NONE */
	uint64_t walks, visits;
	struct walk_line *lines;
	/* Per CPU cache: lines [0, seen[c]) already read by that CPU. */
	uint64_t *seen;
};

int iova_walk_init(struct iopt_iova *d)
{
	struct iova_walk *w = calloc(1, sizeof(*w));
	uint64_t hi = d->cfg.end_pfn - 1 < d->limit32 ? d->cfg.end_pfn - 1 :
		      d->limit32;

	if (!w)
		return -ENOMEM;
	plat_spin_init(&w->lock);
	w->base = d->cfg.start_pfn;
	w->n32 = d->cfg.start_pfn <= hi ? hi - d->cfg.start_pfn + 1 : 0;
	w->cached32 = WALK_NONE;
	while (w->n32 >> w->top_bit > 1)
		w->top_bit++;
	w->fen = calloc(w->n32 ? w->n32 : 1, sizeof(*w->fen));
	w->lines = aligned_alloc(64, sizeof(*w->lines) * IOPT_IOVA_WALK_LINES);
	w->seen = calloc(d->cfg.nr_cpus, sizeof(*w->seen));
	d->walk = w;
	if (!w->fen || !w->lines || !w->seen)
		return -ENOMEM;	/* iova_walk_fini() frees what exists */
	/* Defined content: the walk reads a line only to be charged. */
	for (unsigned i = 0; i < IOPT_IOVA_WALK_LINES; i++)
		w->lines[i].w[0] = 0;
	return 0;
}

void iova_walk_fini(struct iopt_iova *d)
{
	if (!d->walk)
		return;
	free(d->walk->fen);
	free(d->walk->lines);
	free(d->walk->seen);
	free(d->walk);
	d->walk = NULL;
}

static void fen_add(struct iova_walk *w, uint64_t pfn, int delta)
{
	for (uint64_t i = pfn - w->base + 1; i <= w->n32; i += i & (~i + 1))
		w->fen[i - 1] += (uint32_t)delta;
}

/* Starts at index 1 .. i (i <= n32). */
static uint64_t fen_prefix(const struct iova_walk *w, uint64_t i)
{
	uint64_t s = 0;

	for (; i; i &= i - 1)
		s += w->fen[i - 1];
	return s;
}

/* The smallest index i with fen_prefix(i) >= k, for 1 <= k <= total32. */
static uint64_t fen_lower_bound(const struct iova_walk *w, uint64_t k)
{
	uint64_t i = 0;

	for (uint64_t b = w->n32 ? 1ull << w->top_bit : 0; b; b >>= 1) {
		if (i + b <= w->n32 && w->fen[i + b - 1] < k) {
			i += b;
			k -= w->fen[i - 1];
		}
	}
	return i + 1;
}

static bool in_index(const struct iova_walk *w, uint64_t pfn)
{
	return pfn >= w->base && pfn - w->base < w->n32;
}

/* Ranges of the index that start below pfn. */
static uint64_t rank_below(const struct iova_walk *w, uint64_t pfn)
{
	if (pfn <= w->base)
		return 0;
	return fen_prefix(w, pfn - w->base < w->n32 ? pfn - w->base : w->n32);
}

/* The lowest start above pfn in the index, or WALK_NONE. */
static uint64_t next_above(const struct iova_walk *w, uint64_t pfn)
{
	uint64_t c = pfn == UINT64_MAX ? w->total32 : rank_below(w, pfn + 1);

	if (c >= w->total32)
		return WALK_NONE;
	return w->base + fen_lower_bound(w, c + 1) - 1;
}

void iova_walk_alloced(struct iopt_iova *d, uint64_t pfn, uint64_t limit)
{
	struct iova_walk *w = d->walk;

	plat_spin_lock(&w->lock);
	w->total++;
	if (in_index(w, pfn)) {
		fen_add(w, pfn, 1);
		w->total32++;
	}
	/* __cached_rbnode_insert_update(): a try whose limit was the 32-bit
	 * one caches its new node. */
	if (limit == d->limit32)
		w->cached32 = pfn;
	plat_spin_unlock(&w->lock);
}

void iova_walk_freed(struct iopt_iova *d, uint64_t pfn)
{
	struct iova_walk *w = d->walk;

	plat_spin_lock(&w->lock);
	w->total--;
	if (in_index(w, pfn)) {
		fen_add(w, pfn, -1);
		w->total32--;
	}
	/* __cached_rbnode_delete_update(): the node after the freed one if it
	 * starts below the 32-bit limit, else none. A freed range above the
	 * index has no next node in it. */
	if (w->cached32 != WALK_NONE && pfn >= w->cached32) {
		uint64_t next = in_index(w, pfn) ? next_above(w, pfn) : WALK_NONE;

		w->cached32 = next != WALK_NONE && next < d->limit32 ? next :
			      WALK_NONE;
	}
	plat_spin_unlock(&w->lock);
}

void iova_walk_failed(struct iopt_iova *d, uint64_t limit)
{
	struct iova_walk *w = d->walk;
	uint64_t *seen = &w->seen[iova_cpu(d, IOPT_IOVA_CPU_SELF)];
	uint64_t v, t;

	/* The lock is held for the whole walk, as 4.13 held the tree's. */
	plat_spin_lock(&w->lock);
	if (limit > d->limit32 || w->cached32 == WALK_NONE)
		v = w->total;		/* from rb_last(): every node */
	else
		v = rank_below(w, w->cached32);	/* from rb_prev(cached32) */
	/*
	 * The lines this CPU has not read yet: a miss each, or a fetch from
	 * another CPU's cache. Those it has read are still its own (nothing
	 * writes them and the engine evicts nothing): reading them again
	 * would cost a hit each, and an engine operation each on the host
	 * (65536 a walk in the seed's set-up); they are left out, and
	 * walk_node_ns stands for a node a real cache no longer holds.
	 */
	t = v < IOPT_IOVA_WALK_LINES ? v : IOPT_IOVA_WALK_LINES;
	for (uint64_t k = *seen; k < t; k++)
		(void)plat_load_rlx64(&w->lines[k].w[0]);
	if (t > *seen)
		*seen = t;
	if (v && d->cfg.walk_node_ns)
		plat_delay_ns(v * d->cfg.walk_node_ns);
	w->walks++;
	w->visits += v;
	plat_spin_unlock(&w->lock);
}

void iova_walk_mag(struct iopt_iova *d)
{
	plat_spin_lock(&d->walk->lock);
	plat_spin_unlock(&d->walk->lock);
}

void iova_walk_stats(struct iopt_iova *d, uint64_t *walks, uint64_t *visits)
{
	struct iova_walk *w = d->walk;

	plat_spin_lock(&w->lock);
	*walks = w->walks;
	*visits = w->visits;
	plat_spin_unlock(&w->lock);
}
