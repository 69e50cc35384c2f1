/* SPDX-License-Identifier: MIT */
/*
 * The free map of one stripe: a 64-ary tree of bitmaps over the stripe's
 * pages (bit set: the page is free), whose inner levels summarise their
 * children by the largest free aligned block each holds.
 *
 * Layout. Leaf nodes (height 0) hold 64 words of 64 page bits: 4096
 * pages. A node at height h has 64 children (words for h = 0) of
 * 2^(6h + 6) pages each. Searches ask for blocks of at most 2^max_order
 * pages (the stripe's chunk), and every summary is capped there: above
 * it, all answers are the same. For every node it keeps
 *   full    children that are entirely free (kept where the child order is
 *           at most max_order, the only place a search reads it; above, set
 *           for NULL children only);
 *   has[k]  children that hold a free block of 2^k pages aligned to 2^k,
 *           for k below the child's order and up to max_order (has[k]
 *           includes has[k+1]);
 *   mo      its own summary: the largest order of a free aligned block in
 *           it, capped at max_order; -1 for none.
 * A child pointer may be NULL: the child is then uniform, entirely free if
 * its full bit is set, else entirely allocated. Range operations that
 * cover a child whole make it uniform this way (and give its nodes back
 * to the pool), so marking a run of any length costs O(64 x height).
 *
 * Search. "The highest start p <= cap, aligned to 2^k, with [p, p + 2^k)
 * free" descends from the root: at each node it takes the highest child
 * at or below cap's child whose has[k] bit is set (for blocks of a child's
 * size or more, the highest aligned group of full children). Only the
 * child holding cap itself can fail (its block may lie above cap); then
 * the next lower candidate cannot. So a search visits at most two nodes
 * per level whatever the fragmentation: O(height) = O(log64 space). A
 * take first lowers its cap to the order's search hint (struct fmap), so
 * that successive allocations under one limit start in the last one's
 * leaf.
 *
 * Update. Setting or clearing the bits of one word changes that word's
 * summary and the leaf's masks; each ancestor's summary changes only while
 * the one below it does. The ancestors of the finger leaf (below) may lag
 * and are brought up to date by one ascent (fmap_sync()) before anything
 * reads them. No splitting or merging of blocks.
 *
 * Memory: a range operation materialises at most two paths of nodes (its
 * two ends). fmap_prepare() keeps the pool at what one operation may need,
 * so that after it the next operation cannot fail; the free map never
 * frees a node before fmap_destroy() (uniform subtrees go back to the
 * pool). Not thread-safe: the stripe's lock is held.
 */
#ifndef IOPT_FMAP_H
#define IOPT_FMAP_H

#include <stdbool.h>
#include <stdint.h>

/* Searchable block orders: 0 .. FMAP_ORDERS - 1 (a chunk is at most
 * 2^21 pages: see iopt_iova_create()). */
#define FMAP_ORDERS 22
#define FMAP_MAX_HEIGHT 10	/* 6 * (10 + 2) >= 64 bits of pages */

struct fmap_node {
	uint64_t full;
	uint64_t has[FMAP_ORDERS];
	int mo;
	union {
		uint64_t w[64];			/* height 0: page bits */
		struct fmap_node *child[64];	/* NULL: uniform */
	} u;
} __attribute__((aligned(64)));

struct fmap {
	struct fmap_node *root;
	unsigned height;	/* the root's */
	unsigned max_order;	/* the largest order searched */
	unsigned pool_min;	/* nodes one range operation may need */
	struct fmap_node *pool;	/* spare nodes, linked through u.child[0] */
	unsigned pool_n;
	uint64_t free_pages;
	uint64_t visits;	/* nodes visited by searches (for tests) */
	/* Work counters read by tests and iopt-bench (fragmented), outside
	 * the hot path: ancestors whose summary an ascent rewrote, and nodes
	 * taken from the host allocator (fmap_pool_fill()). */
	uint64_t climbs;
	uint64_t pool_allocs;
	/*
	 * Finger: the path (by height) to the leaf of the last word change,
	 * which holds pages fkey << 12 ..; UINT64_MAX: none. An allocation
	 * whose cap lies in that leaf searches the leaf alone, and a free in
	 * it starts there instead of descending. The finger leaf's ancestors
	 * may lag: they hold its summary as frec, and fmap_sync() brings them
	 * up to date (one ascent); every operation that reads above the leaf
	 * calls it first. So an allocation and a free in the same leaf touch
	 * that leaf alone. Nodes leave a path only through range operations,
	 * which sync and drop the finger.
	 */
	uint64_t fkey;
	int frec;
	struct fmap_node *fpath[FMAP_MAX_HEIGHT + 1];
	/*
	 * Search hints: no free aligned block of 2^k pages starts above
	 * hint[k] (the map starts with every page allocated: 0). A take whose
	 * cap is at or above hint[k] searches at or below hint[k] instead, and
	 * lowers it to the start it took (the highest free block, now taken:
	 * nothing above it is free); a free raises every hint[k] to the last
	 * aligned start of 2^k its run reaches. A free whose last page lies
	 * at or below hint_cover would raise no hint, and checks none (the
	 * free of a block just taken). Successive allocations under one limit then
	 * start in the leaf of the last one, the finger, instead of at the
	 * root. A hint only lowers a search's cap: the search stays O(height)
	 * (unlike Linux's cached node, which starts a walk that is linear in
	 * the worst case).
	 */
	uint64_t hint[FMAP_ORDERS];
	uint64_t hint_cover;
};

/* An empty map (every page allocated) of 2^bits pages, searched for
 * blocks of at most 2^max_order pages. 0 or -ENOMEM. */
int fmap_init(struct fmap *f, unsigned bits, unsigned max_order);
void fmap_destroy(struct fmap *f);

int fmap_pool_fill(struct fmap *f, unsigned n);

/* Make the pool hold what one range operation needs plus extra nodes:
 * 0 or -ENOMEM (the pool keeps what it got). */
static inline int fmap_prepare(struct fmap *f, unsigned extra)
{
	if (f->pool_n >= f->pool_min + extra)
		return 0;
	return fmap_pool_fill(f, f->pool_min + extra);
}
/* Give back every spare node (tests: make the next operation allocate). */
void fmap_pool_drain(struct fmap *f);

/*
 * The highest p <= cap, aligned to 2^k (k <= max_order), such that
 * [p, p + 2^k) is free: true and *p, or false. O(height).
 */
bool fmap_find(struct fmap *f, unsigned k, uint64_t cap, uint64_t *p);


/* Bring the finger leaf's ancestors up to date (O(height)). Called by
 * every operation that needs them; tests call it before reading nodes. */
void fmap_sync(struct fmap *f);

/* Is every page of [lo, lo + n) free? */
bool fmap_is_free(struct fmap *f, uint64_t lo, uint64_t n);


/* ---- in line: the fast paths of fmap_take() and fmap_set() -------------
 * A pair's allocation and free in the finger leaf change one word and
 * that leaf's masks; in line in the allocator they save the two calls'
 * saved registers and argument moves (a sixth of a pair's instructions).
 * The rest is in fmap_take_slow() and fmap_set_slow(). */

/* fmap_take() and fmap_set() beyond their common case. */
bool fmap_take_slow(struct fmap *f, unsigned k, uint64_t cap, uint64_t size,
		    uint64_t *p);
int fmap_set_slow(struct fmap *f, uint64_t lo, uint64_t n, bool free);

/* fmap_pat[j]: one bit at every multiple of 2^j. */
static const uint64_t fmap_pat[7] = {
	~0ull, 0x5555555555555555ull, 0x1111111111111111ull,
	0x0101010101010101ull, 0x0001000100010001ull, 0x0000000100000001ull,
	1ull,
};

/* Bits at the multiples i of 2^j where m[i .. i + 2^j) are all set. */
static inline uint64_t fmap_groups(uint64_t m, unsigned j)
{
	for (unsigned s = 0; s < j && m; s++)
		m &= (m >> (1u << s)) & fmap_pat[s + 1];
	return m;
}

/* The largest j with fmap_groups(m, j) non-zero, for m != 0. */
static inline int fmap_group_order(uint64_t m)
{
	int j = 0;

	/* Mostly free words and nodes first: one or two compares. */
	if (m == ~0ull)
		return 6;
	if ((uint32_t)m == UINT32_MAX || (m >> 32) == UINT32_MAX)
		return 5;
	while (j < 4) {
		m &= (m >> (1u << j)) & fmap_pat[j + 1];
		if (!m)
			break;
		j++;
	}
	return j;
}

/* A summary as kept: orders above the largest searched one are all the
 * same to a search. */
static inline int fmap_cap_mo(unsigned M, int v)
{
	return v < (int)M ? v : (int)M;
}

/* A word's summary: the largest free aligned block order in it, -1. */
static inline int fmap_word_mo(unsigned M, uint64_t w)
{
	return w ? fmap_cap_mo(M, fmap_group_order(w)) : -1;
}

/* Bits 0 .. i, for i <= 63. */
static inline uint64_t fmap_upto(uint64_t i)
{
	return (2ull << i) - 1;
}

/* Bits lo .. hi - 1, for lo < hi <= 64. */
static inline uint64_t fmap_bits_mask(uint64_t lo, uint64_t hi)
{
	return ~0ull >> (64 - (hi - lo)) << lo;
}

/* Level 0 of ascend(): the leaf's masks for its word holding page lo. */
static inline __attribute__((always_inline)) void
fmap_ascend_leaf(struct fmap *f, struct fmap_node *n, uint64_t lo, int a,
			int b)
{
	const int M = (int)f->max_order;
	uint64_t bit = 1ull << ((lo >> 6) & 63), full = n->full;
	int m = n->mo, nm, k, top;

	if (a > b) {
		if (a == 6)
			full &= ~bit;
		k = b + 1;
		top = a;
	} else {
		if (b == 6)
			full |= bit;
		k = a + 1;
		top = b;
	}
	n->full = full;
	if (top > 5)
		top = 5;
	if (top > M)
		top = M;
	for (; k <= top; k++)
		n->has[k] ^= bit;
	if (full)
		nm = 6 >= M ? M : fmap_cap_mo((unsigned)M, 6 + fmap_group_order(full));
	else if (b > a)
		nm = m > b ? m : b;
	else if (m > a)
		nm = m;
	else
		for (nm = m < 5 ? m : 5; nm >= 0 && !n->has[nm];)
			nm--;
	n->mo = nm;
}

/* Set or clear 'mask' in the word of leaf n holding page lo: the word and
 * the leaf's own masks now, its ancestors at fmap_sync(). In line: it is
 * most of a pair's alloc and free in the finger leaf, and a call costs
 * the pair a tenth of its instructions in saved registers and arguments. */
static inline __attribute__((always_inline)) void
fmap_leaf_set(struct fmap *f, struct fmap_node *n, uint64_t lo,
	      uint64_t mask, bool free)
{
	uint64_t *wp = &n->u.w[(lo >> 6) & 63], w = *wp;
	uint64_t nw = free ? w | mask : w & ~mask;
	/* The summaries uncapped: a word's order is at most 6, and a map
	 * searched for blocks of 2^6 pages or more (every domain but tiny
	 * test ones) would cap nothing. */
	int a = w ? fmap_group_order(w) : -1, b = nw ? fmap_group_order(nw) : -1;

	*wp = nw;
	if (a == b)
		return;
	if (__builtin_expect(f->max_order < 6, 0)) {
		a = fmap_cap_mo(f->max_order, a);
		b = fmap_cap_mo(f->max_order, b);
		if (a == b)
			return;
	}
	fmap_ascend_leaf(f, n, lo, a, b);
}

/* The search of fmap_take() when cap lies in the finger's leaf (k < 6):
 * a block there at or below cap is the answer, whatever lies elsewhere. */
static inline __attribute__((always_inline)) bool
fmap_finger_find(struct fmap *f, unsigned k, uint64_t cap, uint64_t *p)
{
	const struct fmap_node *leaf = f->fpath[0];
	uint64_t ci = (cap >> 6) & 63, m = leaf->has[k] & fmap_upto(ci);

	while (m) {
		unsigned i = 63 - (unsigned)__builtin_clzll(m);
		uint64_t g = fmap_groups(leaf->u.w[i], k);

		if (i == ci)
			g &= fmap_upto(cap & 63);
		if (g) {
			*p = (cap & ~4095ull) + 64 * i + 63 - (uint64_t)__builtin_clzll(g);
			f->visits++;
			return true;
		}
		m &= ~(1ull << i);
	}
	return false;
}

/*
 * Mark [lo, lo + n) free (free set) or allocated; every page of it must be
 * in the other state. 0, or -ENOMEM (no node for the pool: nothing
 * changed). Cannot fail after fmap_prepare() succeeded.
 *
 * The common case in line (a run inside one word of the finger leaf that
 * raises no hint: a pair's free), the rest in fmap_set_slow(): the fast path
 * then saves no registers for the slow one. */
static inline __attribute__((always_inline)) int
fmap_set(struct fmap *f, uint64_t lo, uint64_t n, bool free)
{
	if (n && (lo & 63) + n <= 64 && lo >> 12 == f->fkey &&
	    f->pool_n >= f->pool_min && !(free && lo + n - 1 > f->hint_cover)) {
		fmap_leaf_set(f, f->fpath[0], lo, fmap_bits_mask(lo & 63, (lo & 63) + n), free);
		if (free)
			f->free_pages += n;
		else
			f->free_pages -= n;
		return 0;
	}
	return fmap_set_slow(f, lo, n, free);
}

/*
 * fmap_find(), then mark [*p, *p + size) allocated (size <= 2^k), after
 * fmap_prepare() (cannot fail then).
 *
 * The common case in line (cap in the finger leaf, a block of at most 32
 * pages there at or below it: one word changes), the rest in fmap_take_slow().
 * A block of 2^k pages, k < 6, aligned to 2^k lies in one word, and size
 * is at most 2^k. */
static inline __attribute__((always_inline)) bool
fmap_take(struct fmap *f, unsigned k, uint64_t cap, uint64_t size,
	  uint64_t *p)
{
	if (cap >> 12 == f->fkey && k < 6 && fmap_finger_find(f, k, cap, p)) {
		fmap_leaf_set(f, f->fpath[0], *p, fmap_bits_mask(*p & 63, (*p & 63) + size),
			 false);
		f->free_pages -= size;
		return true;
	}
	return fmap_take_slow(f, k, cap, size, p);
}

#endif
