/* SPDX-License-Identifier: MIT */
/* The free map of a stripe: see fmap.h. */
#include "fmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>



/* Children of a node at height h are 2^child_order(h) pages. */
static unsigned child_order(unsigned h)
{
	return 6 * h + 6;
}

/* Orders with a has[] mask at a node whose children have order c. */
static unsigned has_lim(unsigned M, unsigned c)
{
	return c < M + 1 ? c : M + 1;
}


static void node_fill(const struct fmap *f, struct fmap_node *n, unsigned h,
		      bool free)
{
	unsigned M = f->max_order, c = child_order(h), lim = has_lim(M, c);
	uint64_t v = free ? ~0ull : 0;

	/* Words are never NULL: at height 0 a full bit with c above the
	 * largest order is never read, and set_child() never sets it. */
	n->full = h == 0 && c > f->max_order ? 0 : v;
	for (unsigned k = 0; k < FMAP_ORDERS; k++)
		n->has[k] = k < lim ? v : 0;
	n->mo = free ? fmap_cap_mo(M, (int)c + 6) : -1;
	if (h == 0)
		for (unsigned i = 0; i < 64; i++)
			n->u.w[i] = (struct fmap_word){ .free = v };
	else
		memset(n->u.child, 0, sizeof(n->u.child));
}

/* ---- the pool ------------------------------------------------------------ */

int fmap_pool_fill(struct fmap *f, unsigned want)
{
	while (f->pool_n < want) {
		/* Cache-line aligned: stripes taken by different CPUs share
		 * no line through their nodes. */
		struct fmap_node *n = aligned_alloc(64, sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->pool_allocs++;
		n->u.child[0] = f->pool;
		f->pool = n;
		f->pool_n++;
	}
	return 0;
}

void fmap_pool_drain(struct fmap *f)
{
	while (f->pool) {
		struct fmap_node *n = f->pool;

		f->pool = n->u.child[0];
		free(n);
	}
	f->pool_n = 0;
}

/* A node from the pool, which fmap_prepare() filled. */
static struct fmap_node *take(struct fmap *f, unsigned h, bool free)
{
	struct fmap_node *n = f->pool;

	f->pool = n->u.child[0];
	f->pool_n--;
	node_fill(f, n, h, free);
	return n;
}

/* Give n and every node below it to the pool. */
static void drop(struct fmap *f, struct fmap_node *n, unsigned h)
{
	if (h > 0)
		for (unsigned i = 0; i < 64; i++)
			if (n->u.child[i])
				drop(f, n->u.child[i], h - 1);
	n->u.child[0] = f->pool;
	f->pool = n;
	f->pool_n++;
}

int fmap_init(struct fmap *f, unsigned bits, unsigned max_order)
{
	memset(f, 0, sizeof(*f));
	f->max_order = max_order < FMAP_ORDERS ? max_order : FMAP_ORDERS - 1;
	while (6 * f->height + 12 < bits)
		f->height++;
	f->pool_min = 2 * (f->height + 1);
	f->fkey = UINT64_MAX;
	/* Every page allocated: no free block starts above 0 (hint[] = 0),
	 * and a free of page 0 alone would raise none (hint_cover = 0). */
	f->root = aligned_alloc(64, sizeof(*f->root));
	if (!f->root)
		return -ENOMEM;
	node_fill(f, f->root, f->height, false);
	return 0;
}

void fmap_destroy(struct fmap *f)
{
	if (f->root)
		drop(f, f->root, f->height);
	f->root = NULL;
	fmap_pool_drain(f);
}

/* ---- summaries ----------------------------------------------------------- */

/*
 * What a node knows of child i: its summary, capped at max_order for
 * words and materialised children; a NULL child is uniform, c (entirely
 * free, its full bit set) or -1. Where c > max_order the full bits of
 * materialised children are not kept (no search reads them): they are 0.
 *
 * Child i changed its summary from a to b: its full bit and its has[]
 * bits for the orders in between. has[k] holds child i exactly when its
 * summary is >= k, so the bits that change are those of k in
 * (min(a, b), max(a, b)].
 */
static void set_child(unsigned M, struct fmap_node *n, unsigned c,
		      unsigned i, int a, int b)
{
	uint64_t bit = 1ull << i;
	int lo = a < b ? a : b, hi = a < b ? b : a;
	int top = (int)has_lim(M, c) - 1;

	if (a == (int)c)
		n->full &= ~bit;
	if (b == (int)c)
		n->full |= bit;
	if (hi > top)
		hi = top;
	for (int k = lo + 1; k <= hi; k++)
		n->has[k] ^= bit;
}

/* The node's summary from its masks, scanning has[] down from 'from'. */
static int node_mo_scan(unsigned M, const struct fmap_node *n,
			unsigned h, int from)
{
	if (n->full)
		return fmap_cap_mo(M, (int)child_order(h) + fmap_group_order(n->full));
	while (from >= 0 && !n->has[from])
		from--;
	return from;
}

/* ---- search -------------------------------------------------------------- */

/*
 * The highest p <= cap aligned to 2^k with [p, p + 2^k) free. On the way
 * down it keeps, per level, the candidates below the child it took; only
 * the path that holds cap can fail (its block may lie above cap), and
 * then the nearest level with a candidate left gives one that cannot: a
 * search visits at most two nodes per level. On success path[H .. *hp]
 * are the nodes down to the deepest materialised one holding p.
 */
static bool search(struct fmap *f, unsigned k, uint64_t cap,
		   struct fmap_node **path, unsigned *hp, uint64_t *p)
{
	uint64_t rest[FMAP_MAX_HEIGHT + 1], rbase[FMAP_MAX_HEIGHT + 1];
	struct fmap_node *n = f->root;
	unsigned h = f->height, c = child_order(h), i, j, visits = 0;
	uint64_t base = 0, m;

	/* cap - base stays below the node's span: a child taken below cap's
	 * own is searched up to its end. */
	for (;;) {
		path[h] = n;
		visits++;
		if (k >= c) {	/* aligned groups of full children */
			m = fmap_groups(n->full, k - c) & fmap_upto((cap - base) >> c);
			if (!m) {
				j = h + 1;
				goto back;
			}
			*p = base + ((uint64_t)(63 - __builtin_clzll(m)) << c);
			*hp = h;
			break;
		}
		m = n->has[k] & fmap_upto((cap - base) >> c);
		if (!m) {
			j = h + 1;
			goto back;
		}
pick:
		i = 63 - (unsigned)__builtin_clzll(m);
		rest[h] = m & ~(1ull << i);
		rbase[h] = base;
		base += (uint64_t)i << c;
		if (cap - base >= (1ull << c) - 1)
			cap = base + (1ull << c) - 1;
		if (h == 0) {
			uint64_t g = fmap_groups(n->u.w[i].free, k) & fmap_upto(cap - base);

			if (g) {
				*p = base + 63 - (uint64_t)__builtin_clzll(g);
				*hp = 0;
				break;
			}
			j = 0;
			goto back;
		}
		if (!n->u.child[i]) {	/* wholly free (has[k] is set) */
			*p = base + ((cap - base) & ~((1ull << k) - 1));
			*hp = h;
			break;
		}
		n = n->u.child[i];
		h--;
		c -= 6;
		continue;
back:
		/* Failed on the path holding cap: the nearest candidate left
		 * lies wholly below cap, so from here on nothing fails. */
		while (j <= f->height && !rest[j])
			j++;
		if (j > f->height) {
			f->visits += visits;
			return false;
		}
		h = j;
		n = path[h];
		c = child_order(h);
		base = rbase[h];
		m = rest[h];
		cap = UINT64_MAX;
		goto pick;
	}
	f->visits += visits;
	return true;
}

bool fmap_find(struct fmap *f, unsigned k, uint64_t cap, uint64_t *p)
{
	struct fmap_node *path[FMAP_MAX_HEIGHT + 1];
	unsigned span = child_order(f->height) + 6, hp;

	fmap_sync(f);
	if (k > f->max_order || f->root->mo < (int)k)
		return false;
	if (span < 64 && cap >> span)
		cap = (1ull << span) - 1;
	return search(f, k, cap, path, &hp, p);
}


/* [lo, hi) relative to n, not empty. */
static bool free_in(const struct fmap *f, const struct fmap_node *n,
		    unsigned h, uint64_t lo, uint64_t hi)
{
	unsigned c = child_order(h);
	uint64_t csz = 1ull << c;
	unsigned i0 = (unsigned)(lo >> c), i1 = (unsigned)((hi - 1) >> c);

	for (unsigned i = i0; i <= i1; i++) {
		uint64_t cl = i == i0 ? lo - ((uint64_t)i << c) : 0;
		uint64_t ch = i == i1 ? hi - ((uint64_t)i << c) : csz;
		const struct fmap_node *cn;

		if (h == 0) {
			uint64_t mask = fmap_bits_mask(cl, ch);

			if ((n->u.w[i].free & mask) != mask)
				return false;
			continue;
		}
		cn = n->u.child[i];
		if (!cn) {
			if (!(n->full >> i & 1))
				return false;
			continue;
		}
		/* Full bits of materialised children are kept where a search
		 * reads them (c <= max_order); above, look inside. */
		if (c <= f->max_order && cl == 0 && ch == csz) {
			if (!(n->full >> i & 1))
				return false;
			continue;
		}
		if (!free_in(f, cn, h - 1, cl, ch))
			return false;
	}
	return true;
}

bool fmap_is_free(struct fmap *f, uint64_t lo, uint64_t n)
{
	fmap_sync(f);
	return !n || free_in(f, f->root, f->height, lo, lo + n);
}

/* ---- update -------------------------------------------------------------- */

/*
 * The child holding page lo of node f->fpath[h] changed its summary from
 * a to b (both capped): up while a summary changes. This is set_child() and the node's new
 * summary written out, as it is most of a free's and an allocation's
 * work. The summary is rescanned only when the old one may have come from
 * this child: if the child grew and the full mask is empty, it was empty
 * before too (the summary was below c), so the larger of the two is it;
 * if the child shrank and another child holds more, nothing changed.
 * Where c >= max_order any full child caps the summary at max_order.
 */
static void ascend(struct fmap *f, int h, uint64_t lo, int a, int b)
{
	const int M = (int)f->max_order, H = (int)f->height;
	int c = 6 * h + 6;

	for (;; h++, c += 6) {
		struct fmap_node *n = f->fpath[h];
		uint64_t bit = 1ull << ((lo >> c) & 63), full = n->full;
		int m = n->mo, nm, k, top;

		f->climbs++;
		if (a > b) {
			if (a == c)
				full &= ~bit;
			k = b + 1;
			top = a;
		} else {
			if (b == c)
				full |= bit;
			k = a + 1;
			top = b;
		}
		n->full = full;
		if (top >= c)
			top = c - 1;
		if (top > M)
			top = M;
		for (; k <= top; k++)
			n->has[k] ^= bit;
		if (full)
			nm = c >= M ? M : fmap_cap_mo((unsigned)M, c + fmap_group_order(full));
		else if (b > a)
			nm = m > b ? m : b;
		else if (m > a)
			nm = m;
		else
			for (nm = m < c - 1 ? m : c - 1; nm >= 0 && !n->has[nm];)
				nm--;
		n->mo = nm;
		if (nm == m || h == H)
			break;
		a = m;
		b = nm;
	}
}



/*
 * Set or clear 'mask' in the word holding page lo; f->fpath[H .. h] are
 * its first nodes (from a search, the finger, or just the root). Descends,
 * materialising uniform children, then goes up while a summary changes;
 * leaves the finger on this leaf. Called after fmap_sync() (no finger word
 * pending: it repoints the finger path before fmap_leaf_set(), which
 * would otherwise bring a pending word's masks up in the new leaf).
 */
static void word_set(struct fmap *f, unsigned h, uint64_t lo, uint64_t mask,
		     bool free)
{
	struct fmap_node **path = f->fpath, *n = path[h];

	for (; h > 0; h--) {
		unsigned ch = child_order(h), i = (unsigned)(lo >> ch) & 63;
		struct fmap_node *cn = n->u.child[i];

		if (!cn) {	/* uniform: materialise it as it is */
			bool full = n->full >> i & 1;

			cn = take(f, h - 1, full);
			n->u.child[i] = cn;
			/* Where c > max_order only NULL children keep their
			 * full bit; the summary for has[] is the same. */
			if (ch > f->max_order)
				n->full &= ~(1ull << i);
		}
		n = cn;
		path[h - 1] = n;
	}
	/* A new finger: its ancestors are in sync with it. */
	f->fkey = lo >> 12;
	f->frec = n->mo;
	fmap_leaf_set(f, n, lo, mask, free);
}

void fmap_sync(struct fmap *f)
{
	if (f->fkey == UINT64_MAX)
		return;
	fmap_word_sync(f);
	if (f->fpath[0]->mo == f->frec)
		return;
	if (f->height)
		ascend(f, 1, f->fkey << 12, f->frec, f->fpath[0]->mo);
	f->frec = f->fpath[0]->mo;
}

/* [lo, hi) relative to n, not empty; children covered whole become
 * uniform (their nodes go to the pool). */
static void range_in(struct fmap *f, struct fmap_node *n, unsigned h,
		     uint64_t lo, uint64_t hi, bool free)
{
	unsigned M = f->max_order, c = child_order(h);
	uint64_t csz = 1ull << c;
	unsigned i0 = (unsigned)(lo >> c), i1 = (unsigned)((hi - 1) >> c);

	for (unsigned i = i0; i <= i1; i++) {
		uint64_t cl = i == i0 ? lo - ((uint64_t)i << c) : 0;
		uint64_t ch = i == i1 ? hi - ((uint64_t)i << c) : csz;
		int a, b;

		if (h == 0) {
			uint64_t mask = fmap_bits_mask(cl, ch), w = n->u.w[i].free;

			a = fmap_word_mo(M, w);
			w = free ? w | mask : w & ~mask;
			n->u.w[i].free = w;
			b = fmap_word_mo(M, w);
		} else {
			struct fmap_node *cn = n->u.child[i];

			a = cn ? cn->mo : (n->full >> i & 1) ? (int)c : -1;
			if (cl == 0 && ch == csz) {
				if (cn)
					drop(f, cn, h - 1);
				n->u.child[i] = NULL;
				b = free ? (int)c : -1;
			} else {
				if (!cn) {
					cn = take(f, h - 1, a == (int)c);
					n->u.child[i] = cn;
				}
				range_in(f, cn, h - 1, cl, ch, free);
				b = cn->mo;
			}
		}
		set_child(M, n, c, i, a, b);
	}
	n->mo = node_mo_scan(M, n, h, (int)has_lim(M, c) - 1);
}

/* Pages up to last became free: a free aligned block of 2^k may now start
 * at any aligned start at or below last. Afterwards no free ending at or
 * below last raises a hint. */
__attribute__((noinline)) void fmap_hints_raise(struct fmap *f, uint64_t last)
{
	for (unsigned k = 0; k <= f->max_order; k++) {
		uint64_t s = last >> k << k;

		if (f->hint[k] < s)
			f->hint[k] = s;
	}
	if (f->hint_cover < last)
		f->hint_cover = last;
}

__attribute__((noinline)) int
fmap_set_slow(struct fmap *f, uint64_t lo, uint64_t n, bool free)
{
	if (!n)
		return 0;
	if (fmap_prepare(f, 0))
		return -ENOMEM;
	if (free && lo + n - 1 > f->hint_cover)
		fmap_hints_raise(f, lo + n - 1);
	if ((lo & 63) + n <= 64) {
		uint64_t mask = fmap_bits_mask(lo & 63, (lo & 63) + n);

		if (lo >> 12 == f->fkey) {	/* in the finger's leaf */
			fmap_leaf_set(f, f->fpath[0], lo, mask, free);
		} else {			/* from the root */
			fmap_sync(f);
			f->fpath[f->height] = f->root;
			word_set(f, f->height, lo, mask, free);
		}
	} else {
		fmap_sync(f);
		f->fkey = UINT64_MAX;
		range_in(f, f->root, f->height, lo, lo + n, free);
	}
	if (free)
		f->free_pages += n;
	else
		f->free_pages -= n;
	return 0;
}



__attribute__((noinline)) bool
fmap_take_slow(struct fmap *f, unsigned k, uint64_t cap, uint64_t size,
	       uint64_t *p)
{
	unsigned hp = 0;
	bool hinted = false;

	/* No free block starts above hint[k]: a search up to it finds the
	 * highest free block of the whole map. Where cap lies in the finger
	 * leaf already the hint is left alone (it stays an upper bound), so
	 * that a pair's alloc and free in one leaf pay nothing for it. */
	if (cap >> 12 != f->fkey) {
		if (k > f->max_order)
			return false;
		if (cap >= f->hint[k]) {
			cap = f->hint[k];
			hinted = true;
		}
	}
	/* The finger leaf alone, where the hint brought cap into it: where
	 * cap lay there already, fmap_take() searched it (its only caller). */
	if (!hinted || cap >> 12 != f->fkey || k >= 6 ||
	    !fmap_finger_find(f, k, cap, p)) {
		unsigned span = child_order(f->height) + 6;

		fmap_sync(f);
		if (f->root->mo < (int)k)
			return false;
		if (span < 64 && cap >> span)
			cap = (1ull << span) - 1;
		f->fkey = UINT64_MAX;	/* the search overwrites the path */
		if (!search(f, k, cap, f->fpath, &hp, p))
			return false;
	}
	if (hinted) {	/* nothing of 2^k is free above *p, now taken */
		f->hint[k] = *p;
		/* A free ending in or below this block starts its 2^k blocks
		 * at or below *p: it would not raise hint[k]. */
		if (*p + ((1ull << k) - 1) < f->hint_cover)
			f->hint_cover = *p + ((1ull << k) - 1);
	}
	if ((*p & 63) + size <= 64) {
		uint64_t mask = fmap_bits_mask(*p & 63, (*p & 63) + size);

		if (hp == 0 && *p >> 12 == f->fkey)
			fmap_leaf_set(f, f->fpath[0], *p, mask, false);
		else
			word_set(f, hp, *p, mask, false);
	} else {
		fmap_sync(f);
		f->fkey = UINT64_MAX;
		range_in(f, f->root, f->height, *p, *p + size, false);
	}
	f->free_pages -= size;
	return true;
}


/* ---- the record ------------------------------------------------------------ */

__attribute__((noinline)) struct fmap_node *
fmap_leaf_slow(struct fmap *f, uint64_t lo, bool move)
{
	struct fmap_node *path[FMAP_MAX_HEIGHT + 1], *n = f->root;
	unsigned span = child_order(f->height) + 6;

	if (span < 64 && lo >> span)
		return NULL;
	path[f->height] = n;
	for (unsigned h = f->height; h > 0; h--) {
		n = n->u.child[(lo >> child_order(h)) & 63];
		if (!n)
			return NULL;
		path[h - 1] = n;
	}
	if (move) {
		/* The old finger's ancestors first; a leaf off the finger has
		 * ancestors in sync with it. */
		fmap_sync(f);
		memcpy(f->fpath, path, sizeof(path[0]) * (f->height + 1));
		f->fkey = lo >> 12;
		f->frec = n->mo;
	}
	return n;
}

bool fmap_rec_mark(struct fmap *f, uint64_t lo, uint64_t n, bool from,
		   bool to)
{
	struct fmap_word *w = fmap_rec_word(f, lo, n, from, false);

	if (!w)
		return false;
	if (to)
		w->mark |= 1ull << (lo & 63);
	else
		w->mark &= ~(1ull << (lo & 63));
	return true;
}

bool fmap_rec_find(struct fmap *f, uint64_t x, uint64_t *lo, uint64_t *n)
{
	const struct fmap_node *leaf = fmap_leaf(f, x, false);
	const struct fmap_word *w;
	uint64_t starts, ends;
	unsigned o = (unsigned)(x & 63), s, e;

	if (!leaf)
		return false;
	w = &leaf->u.w[(x >> 6) & 63];
	/* The last start at or below x; its allocation ends at the first
	 * end at or above that start, and holds x if that is at or above x. */
	starts = w->start & fmap_upto(o);
	if (!starts)
		return false;
	s = 63 - (unsigned)__builtin_clzll(starts);
	ends = w->end & ~((1ull << s) - 1);
	if (!ends)
		return false;
	e = (unsigned)__builtin_ctzll(ends);
	if (e < o)
		return false;
	*lo = (x & ~63ull) + s;
	*n = e - s + 1;
	return true;
}
