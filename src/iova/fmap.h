/* SPDX-License-Identifier: MIT */
/*
 * The free map of one stripe: a 64-ary tree of bitmaps over the stripe's
 * pages (bit set: the page is free), whose inner levels summarise their
 * children by the largest free aligned block each holds. Its leaves also
 * record where the small allocations in them start and end (the record,
 * below).
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
 * the one below it does. The finger leaf's masks may lag for its last
 * changed word (the finger word), and its ancestors (below) may lag; one
 * ascent (fmap_sync()) brings both up to date before anything reads
 * them. No splitting or merging of blocks.
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
#include <stddef.h>
#include <stdint.h>

/* Searchable block orders: 0 .. FMAP_ORDERS - 1 (a chunk is at most
 * 2^21 pages: see iopt_iova_create()). */
#define FMAP_ORDERS 22
#define FMAP_MAX_HEIGHT 10	/* 6 * (10 + 2) >= 64 bits of pages */

/*
 * 64 pages of a leaf: their free bits, and the record of the allocations
 * of at most FMAP_REC_MAX pages among them (fmap_rec_add()). Side by side,
 * so that an allocation's or a free's record lies in the cache line of
 * its free bits.
 */
struct fmap_word {
	uint64_t free;	/* set: the page is free */
	uint64_t start;	/* set: a recorded allocation starts at the page */
	uint64_t end;	/* set: a recorded allocation ends at the page */
	uint64_t mark;	/* at a start: the allocation is marked */
};

struct fmap_node {
	uint64_t full;
	uint64_t has[FMAP_ORDERS];
	int mo;
	union {
		struct fmap_word w[64];		/* height 0: the pages */
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
	 * The finger word: one word of the finger leaf whose changes the
	 * leaf's own masks (full, has[], mo) do not show yet (fbit: its bit,
	 * 0 for none); they show it as of summary fwrec. A change of the same
	 * word again (a pair's free after its allocation) touches the word
	 * alone. fmap_finger_find() counts that word as a candidate whatever
	 * has[] says; fmap_sync() brings the leaf's masks up to date first
	 * (fmap_word_sync()). Only the finger leaf has one: the finger moves
	 * after fmap_sync() alone.
	 */
	uint64_t fbit;
	int fwrec;
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

/* A word's summary as the leaf's masks keep it (capped below 6 only in
 * maps searched for blocks under 2^6 pages: tiny test maps). */
static inline __attribute__((always_inline)) int
fmap_leaf_word_mo(const struct fmap *f, uint64_t w)
{
	int o = w ? fmap_group_order(w) : -1;

	if (__builtin_expect(f->max_order < 6, 0))
		o = fmap_cap_mo(f->max_order, o);
	return o;
}

/* The finger word's changes into the finger leaf's masks (fmap.h, struct
 * fmap: fbit). */
static inline __attribute__((always_inline)) void
fmap_word_sync(struct fmap *f)
{
	if (f->fbit) {
		struct fmap_node *n = f->fpath[0];
		uint64_t i = (uint64_t)__builtin_ctzll(f->fbit);
		int b = fmap_leaf_word_mo(f, n->u.w[i].free);

		if (b != f->fwrec)
			fmap_ascend_leaf(f, n, i << 6, f->fwrec, b);
		f->fbit = 0;
	}
}

/* Set or clear 'mask' in the word of the finger leaf n holding page lo:
 * the word now; the leaf's masks when another word changes or at
 * fmap_sync(), and its ancestors at fmap_sync(). In line: it is most of a
 * pair's alloc and free in the finger leaf. */
static inline __attribute__((always_inline)) void
fmap_leaf_set(struct fmap *f, struct fmap_node *n, uint64_t lo,
	      uint64_t mask, bool free)
{
	unsigned i = (unsigned)(lo >> 6) & 63;
	uint64_t *wp = &n->u.w[i].free, w = *wp;

	*wp = free ? w | mask : w & ~mask;
	if (f->fbit >> i & 1)
		return;
	fmap_word_sync(f);
	f->fbit = 1ull << i;
	f->fwrec = fmap_leaf_word_mo(f, w);
}

/* The search of fmap_take() when cap lies in the finger's leaf (k < 6):
 * a block there at or below cap is the answer, whatever lies elsewhere. */
static inline __attribute__((always_inline)) bool
fmap_finger_find(struct fmap *f, unsigned k, uint64_t cap, uint64_t *p)
{
	const struct fmap_node *leaf = f->fpath[0];
	/* The finger word may hold a block that has[k] does not show yet. */
	uint64_t ci = (cap >> 6) & 63, m = (leaf->has[k] | f->fbit) & fmap_upto(ci);

	while (m) {
		unsigned i = 63 - (unsigned)__builtin_clzll(m);
		uint64_t g = fmap_groups(leaf->u.w[i].free, k);

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

/* ---- the record of small allocations -------------------------------------
 * An allocation of n <= FMAP_REC_MAX pages starts aligned to the power of
 * two at or above n (the allocator's rule), so it lies in one word of one
 * leaf: the word records it by a start bit at its first page and an end
 * bit at its last, and may mark it (the mark bit at its start). The
 * allocation starting at page lo is the one ending at the first end bit at
 * or above lo, so "[lo, lo + n) is one recorded allocation" is one masked
 * compare of each word (fmap_rec_is()). Record bits lie only on allocated
 * pages: fmap_rec_free() clears them with the free bits it sets, and a
 * range operation (fmap_set() of more than a word) must never cover a
 * recorded allocation, so the leaves holding records are never made
 * uniform. Larger allocations are the caller's to record (iova.c: live.h).
 * Under the stripe's lock, as the rest.
 */
#define FMAP_REC_MAX 64

/* Can [lo, lo + n) be a recorded allocation: inside one word? */
static inline bool fmap_rec_fits(uint64_t lo, uint64_t n)
{
	return n && n <= FMAP_REC_MAX && (lo & 63) + n <= 64;
}

/*
 * Is [lo, lo + n) (fmap_rec_fits()) one recorded allocation of word w,
 * marked as 'mark' says? It is if an allocation A starts at lo, none other
 * starts in the range and one ends at its last page: that one is A (any
 * other ending there would start inside the range, as allocations do not
 * overlap), so A is the range.
 */
static inline bool fmap_rec_is(const struct fmap_word *w, uint64_t lo,
			       uint64_t n, bool mark)
{
	unsigned o = (unsigned)(lo & 63);

	return (w->start & fmap_bits_mask(o, o + n)) == 1ull << o &&
	       (w->end >> (o + n - 1) & 1) &&
	       (bool)(w->mark >> o & 1) == mark;
}

/*
 * Record [lo, lo + n) (fmap_rec_fits()), which the last fmap_take() or
 * fmap_set() of this map allocated. Such a call changes one word and
 * leaves the finger on its leaf, so the record goes to the finger leaf:
 * no lookup.
 */
static inline void fmap_rec_add(struct fmap *f, uint64_t lo, uint64_t n)
{
	struct fmap_word *w = &f->fpath[0]->u.w[(lo >> 6) & 63];

	w->start |= 1ull << (lo & 63);
	w->end |= 1ull << ((lo + n - 1) & 63);
}

/* The leaf holding page lo, or NULL where a uniform subtree holds it (it
 * records nothing). With move, the finger moves to it. O(height). */
struct fmap_node *fmap_leaf_slow(struct fmap *f, uint64_t lo, bool move);

static inline struct fmap_node *fmap_leaf(struct fmap *f, uint64_t lo,
					  bool move)
{
	if (lo >> 12 == f->fkey)
		return f->fpath[0];
	return fmap_leaf_slow(f, lo, move);
}

/* The word recording [lo, lo + n) if it is one recorded allocation,
 * marked as 'mark' says; else NULL. With move, the finger moves to its
 * leaf (fmap_leaf()). */
static inline __attribute__((always_inline)) struct fmap_word *
fmap_rec_word(struct fmap *f, uint64_t lo, uint64_t n, bool mark, bool move)
{
	struct fmap_node *leaf;
	struct fmap_word *w;

	if (!fmap_rec_fits(lo, n) || !(leaf = fmap_leaf(f, lo, move)))
		return NULL;
	w = &leaf->u.w[(lo >> 6) & 63];
	return fmap_rec_is(w, lo, n, mark) ? w : NULL;
}

/* fmap_set()'s raising of the hints for a free whose last page is last
 * (above hint_cover). */
void fmap_hints_raise(struct fmap *f, uint64_t last);

/*
 * If [lo, lo + n) is one recorded allocation marked as 'mark' says: drop
 * its record and mark its pages free, and return true; else change
 * nothing and return false. Needs no node (the leaf exists): no
 * fmap_prepare() first. The finger
 * moves to the leaf, so the free is the finger leaf's word change of
 * fmap_set()'s in-line case, without its tests: the range is one word of
 * that leaf.
 */
static inline __attribute__((always_inline)) bool
fmap_rec_free(struct fmap *f, uint64_t lo, uint64_t n, bool mark)
{
	unsigned o = (unsigned)(lo & 63);
	struct fmap_word *w = fmap_rec_word(f, lo, n, mark, true);

	if (!w)
		return false;
	w->start ^= 1ull << o;
	w->end ^= 1ull << (o + n - 1);
	if (mark)
		w->mark ^= 1ull << o;
	if (lo + n - 1 > f->hint_cover)
		fmap_hints_raise(f, lo + n - 1);
	fmap_leaf_set(f, f->fpath[0], lo, fmap_bits_mask(o, o + n), true);
	f->free_pages += n;
	return true;
}

/* If [lo, lo + n) is one recorded allocation marked as 'from' says, mark
 * it as 'to' says and return true; else return false. */
bool fmap_rec_mark(struct fmap *f, uint64_t lo, uint64_t n, bool from,
		   bool to);

/* The recorded allocation holding page x: true and its first page and
 * size, or false (x is free, reserved, or in an allocation recorded
 * elsewhere). */
bool fmap_rec_find(struct fmap *f, uint64_t x, uint64_t *lo, uint64_t *n);

#endif
