/* SPDX-License-Identifier: MIT */
#include "rset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * A leaf node (height 0) uses words[] as member bits; others use child[].
 * Invariant at height >= 1: full bit c => map bit c, and child[c] == NULL.
 */
struct rset_node {
	uint64_t map;		/* bit c: child/word c non-empty */
	uint64_t full;		/* bit c: child c holds every member (h >= 1) */
	union {
		struct rset_node *child[64];
		uint64_t words[64];
	};
};

/*
 * Each operation is written once with a 'runs' argument and compiled
 * twice: sets that never held a whole subtree (every set but a buddy
 * system's top order) take the copy without the 'full' tests.
 */
#define RSET_INLINE static inline __attribute__((always_inline))
#define RSET_RARE(x) __builtin_expect(!!(x), 0)

/* Members covered by one child of a node at height h. */
static unsigned child_shift(unsigned h)
{
	return 6 + 6 * h;
}

int rset_pool_fill(struct rset_pool *p, unsigned n)
{
	while (p->n < n) {
		struct rset_node *nd = calloc(1, sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		nd->child[0] = p->head;
		p->head = nd;
		p->n++;
	}
	return 0;
}

void rset_pool_drain(struct rset_pool *p)
{
	while (p->head) {
		struct rset_node *nd = p->head;

		p->head = nd->child[0];
		free(nd);
	}
	p->n = 0;
}

/* A zeroed node, or NULL. */
static struct rset_node *node_new(struct rset *s)
{
	struct rset_pool *p = s->pool;

	if (p && p->head) {
		struct rset_node *nd = p->head;

		p->head = nd->child[0];
		p->n--;
		nd->child[0] = NULL;
		return nd;
	}
	return calloc(1, sizeof(struct rset_node));
}

/* Give back a node this call created and that stayed empty. */
static void node_put(struct rset *s, struct rset_node *nd)
{
	struct rset_pool *p = s->pool;

	if (!p) {
		free(nd);
		return;
	}
	memset(nd, 0, sizeof(*nd));
	nd->child[0] = p->head;
	p->head = nd;
	p->n++;
}

void rset_init(struct rset *s, unsigned bits)
{
	s->root = NULL;
	s->pool = NULL;
	s->runs = false;
	s->count = 0;
	s->height = bits > 12 ? (bits - 12 + 5) / 6 : 0;
	s->hi = 0;
	s->hi_exact = false;
	s->fkey = 0;
	s->fpath[0] = NULL;
}

/* After adding i (count was 'before'): raise the bound. */
static inline void hi_added(struct rset *s, uint64_t i, uint64_t before)
{
	if (!before || i > s->hi) {
		s->hi = i;
		s->hi_exact = true;
	}
}

/* ---- the finger (rset.h) --------------------------------------------- */

/* Does the finger cover member i? */
static inline bool finger_hit(const struct rset *s, uint64_t i)
{
	return s->fpath[0] && s->fkey == i >> 12;
}

/* Keep path[k] (height s->height - k, from the root down to a leaf node)
 * as the finger for the members of that leaf. */
static inline void finger_set(struct rset *s, struct rset_node *const *path,
			      uint64_t i)
{
	for (unsigned h = 0; h <= s->height; h++)
		s->fpath[h] = path[s->height - h];
	s->fkey = i >> 12;
}

/* Add i through the finger: the leaf, then the map bits of the ancestors
 * while each was empty before (a non-empty node's bit in its parent is
 * already set). Needs no memory. */
static void finger_add(struct rset *s, uint64_t i)
{
	struct rset_node *n = s->fpath[0];
	unsigned c = (unsigned)(i >> 6) & 63;
	uint64_t bit = 1ull << (i & 63), was;

	if (n->words[c] & bit)
		return;
	n->words[c] |= bit;
	s->count++;
	was = n->map;
	n->map |= 1ull << c;
	for (unsigned h = 1; !was && h <= s->height; h++) {
		n = s->fpath[h];
		was = n->map;
		n->map |= 1ull << ((i >> child_shift(h)) & 63);
	}
}

/* Delete i through the finger: clear map bits upwards while nodes empty. */
static void finger_del(struct rset *s, uint64_t i)
{
	struct rset_node *n = s->fpath[0];
	unsigned c = (unsigned)(i >> 6) & 63;
	uint64_t bit = 1ull << (i & 63);

	if (!(n->words[c] & bit))
		return;
	n->words[c] &= ~bit;
	s->count--;
	if (n->words[c])
		return;
	n->map &= ~(1ull << c);
	for (unsigned h = 1; !n->map && h <= s->height; h++) {
		n = s->fpath[h];
		n->map &= ~(1ull << ((i >> child_shift(h)) & 63));
	}
}

unsigned rset_path_nodes(const struct rset *s)
{
	return s->height + 1;
}

static void free_node(struct rset_node *n, unsigned h)
{
	if (!n)
		return;
	if (h)	/* every child, empty ones included (they are kept) */
		for (unsigned c = 0; c < 64; c++)
			free_node(n->child[c], h - 1);
	free(n);
}

void rset_destroy(struct rset *s)
{
	free_node(s->root, s->height);
	s->root = NULL;
	s->count = 0;
	s->fpath[0] = NULL;
}

RSET_INLINE int add_impl(struct rset *s, uint64_t i, bool runs)
{
	struct rset_node **slot = &s->root;
	struct rset_node *path[16];
	unsigned depth = 0;

	for (unsigned h = s->height;; h--) {
		if (!*slot) {
			*slot = node_new(s);
			if (!*slot)
				goto nomem;
		}
		struct rset_node *n = *slot;
		unsigned c = (unsigned)(i >> child_shift(h)) & 63;

		path[depth++] = n;
		if (!h) {
			uint64_t bit = 1ull << (i & 63);

			if (!(n->words[c] & bit))
				s->count++;
			n->words[c] |= bit;
			n->map |= 1ull << c;
			break;
		}
		if (runs && RSET_RARE(n->full >> c & 1))
			return 0;	/* inside a whole subtree: present */
		slot = &n->child[c];
	}
	/* Mark the path non-empty. */
	for (unsigned k = 0; k + 1 < depth; k++) {
		unsigned h = s->height - k;

		path[k]->map |= 1ull << ((i >> child_shift(h)) & 63);
	}
	finger_set(s, path, i);
	return 0;
nomem:
	/* Drop nodes this call created that stayed empty (and kept empty
	 * ones at the end of the path: the finger may hold them). */
	s->fpath[0] = NULL;
	while (depth > 0) {
		struct rset_node *n = path[depth - 1];

		if (n->map)
			break;
		depth--;
		if (depth == 0) {
			s->root = NULL;
		} else {
			unsigned h = s->height - (depth - 1);
			unsigned c = (unsigned)(i >> child_shift(h)) & 63;

			path[depth - 1]->child[c] = NULL;
		}
		node_put(s, n);
	}
	return -ENOMEM;
}

/* The copies for sets with whole subtrees stay out of line, so that the
 * plain copies keep the register allocation of a leaf function. */
static __attribute__((noinline)) int add_runs(struct rset *s, uint64_t i)
{
	return add_impl(s, i, true);
}

int rset_add(struct rset *s, uint64_t i)
{
	uint64_t before = s->count;
	int ret;

	if (finger_hit(s, i)) {
		finger_add(s, i);
		ret = 0;
	} else if (RSET_RARE(s->runs)) {
		ret = add_runs(s, i);
	} else {
		ret = add_impl(s, i, false);
	}
	if (!ret)
		hi_added(s, i, before);
	return ret;
}

/* Members [lo, hi) into the subtree of n (height h, first member base). */
static int range_add(struct rset *s, struct rset_node *n, unsigned h,
		     uint64_t base, uint64_t lo, uint64_t hi)
{
	unsigned sh = child_shift(h);
	uint64_t span = 1ull << sh;

	for (uint64_t cb = base + ((lo - base) >> sh << sh); cb < hi; cb += span) {
		unsigned c = (unsigned)((cb - base) >> sh);
		uint64_t a = lo > cb ? lo : cb;
		uint64_t e = hi < cb + span ? hi : cb + span;

		if (!h) {
			uint64_t w = ~0ull;

			if (e - cb < 64)
				w &= (1ull << (e - cb)) - 1;
			w &= ~0ull << (a - cb);
			n->words[c] |= w;
			n->map |= 1ull << c;
			continue;
		}
		if (a == cb && e == cb + span) {
			free_node(n->child[c], h - 1);
			n->child[c] = NULL;
			n->full |= 1ull << c;
			n->map |= 1ull << c;
			continue;
		}
		if (!n->child[c]) {
			n->child[c] = node_new(s);
			if (!n->child[c])
				return -ENOMEM;
		}
		n->map |= 1ull << c;
		if (range_add(s, n->child[c], h - 1, cb, a, e))
			return -ENOMEM;
	}
	return 0;
}

int rset_add_range(struct rset *s, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	s->fpath[0] = NULL;	/* may free nodes on the kept path */
	hi_added(s, hi - 1, s->count);
	if (!s->root) {
		s->root = node_new(s);
		if (!s->root)
			return -ENOMEM;
	}
	s->runs = true;
	if (range_add(s, s->root, s->height, 0, lo, hi))
		return -ENOMEM;
	s->count += hi - lo;
	return 0;
}

RSET_INLINE bool test_impl(const struct rset *s, uint64_t i, bool runs)
{
	const struct rset_node *n = s->root;

	for (unsigned h = s->height; n; h--) {
		unsigned c = (unsigned)(i >> child_shift(h)) & 63;

		if (!h)
			return n->words[c] >> (i & 63) & 1;
		if (runs && RSET_RARE(n->full >> c & 1))
			return true;
		n = n->child[c];
	}
	return false;
}

static __attribute__((noinline)) bool test_runs(const struct rset *s,
						 uint64_t i)
{
	return test_impl(s, i, true);
}

bool rset_test(const struct rset *s, uint64_t i)
{
	if (finger_hit(s, i))
		return s->fpath[0]->words[(i >> 6) & 63] >> (i & 63) & 1;
	if (RSET_RARE(s->runs))
		return test_runs(s, i);
	return test_impl(s, i, false);
}

/* Replace the whole child c of n (height h >= 1) by a node holding the
 * same members. -ENOMEM: nothing changed. */
static __attribute__((noinline, cold)) int materialise(struct rset *s,
							struct rset_node *n,
							unsigned c, unsigned h)
{
	struct rset_node *ch = node_new(s);

	if (!ch)
		return -ENOMEM;
	ch->map = ~0ull;
	if (h - 1)
		ch->full = ~0ull;
	else
		memset(ch->words, 0xff, sizeof(ch->words));
	n->child[c] = ch;
	n->full &= ~(1ull << c);
	return 0;
}

RSET_INLINE int del_impl(struct rset *s, uint64_t i, bool runs)
{
	struct rset_node *path[16];
	unsigned cs[16], depth = 0;
	struct rset_node *n = s->root;

	for (unsigned h = s->height; n; h--) {
		unsigned c = (unsigned)(i >> child_shift(h)) & 63;

		path[depth] = n;
		cs[depth++] = c;
		if (!h) {
			uint64_t bit = 1ull << (i & 63);

			finger_set(s, path, i);
			if (!(n->words[c] & bit))
				return 0;
			n->words[c] &= ~bit;
			s->count--;
			if (n->words[c])
				return 0;
			n->map &= ~(1ull << c);
			break;
		}
		/* Inside a whole child: give it nodes, one level at a time. */
		if (runs && RSET_RARE(n->full >> c & 1) && materialise(s, n, c, h))
			return -ENOMEM;
		n = n->child[c];
	}
	if (!n)
		return 0;
	/* Clear the map bits of emptied nodes bottom-up. The nodes stay (an
	 * empty node is skipped by its parent's map), so that a buddy system
	 * splitting and merging the same blocks does not allocate and free
	 * memory each time; memory is bounded by the most ever occupied. */
	for (unsigned k = depth - 1; k-- > 0;) {
		if (path[k + 1]->map)
			return 0;
		path[k]->map &= ~(1ull << cs[k]);
	}
	return 0;
}

static __attribute__((noinline)) int del_runs(struct rset *s, uint64_t i)
{
	return del_impl(s, i, true);
}

int rset_del(struct rset *s, uint64_t i)
{
	if (i == s->hi)	/* the bound stays a bound */
		s->hi_exact = false;
	if (finger_hit(s, i)) {
		finger_del(s, i);
		return 0;
	}
	if (RSET_RARE(s->runs))
		return del_runs(s, i);
	return del_impl(s, i, false);
}

/* Largest member in the subtree of n (height h), which is non-empty. */
RSET_INLINE uint64_t max_in(const struct rset_node *n, unsigned h,
			     uint64_t base, bool runs)
{
	for (;; h--) {
		unsigned c = 63 - (unsigned)__builtin_clzll(n->map);

		base += (uint64_t)c << child_shift(h);
		if (!h)
			return base + 63 - (unsigned)__builtin_clzll(n->words[c]);
		if (runs && RSET_RARE(n->full >> c & 1))
			return base + (1ull << child_shift(h)) - 1;
		n = n->child[c];
	}
}

/*
 * The climb of a predecessor search: path[h] .. path[height] are x's
 * ancestors; the deepest with a non-empty child below x's holds the
 * answer, the largest member under that child.
 */
RSET_INLINE bool climb(const struct rset *s,
		       const struct rset_node *const *path, unsigned h,
		       uint64_t x, uint64_t *out, bool runs)
{
	for (; h <= s->height; h++) {
		unsigned sh = child_shift(h);
		unsigned c = (unsigned)(x >> sh) & 63;
		uint64_t below = path[h]->map & ((1ull << c) - 1);

		if (!below)
			continue;
		/* The node's first member and the child follow from x. */
		unsigned b = 63 - (unsigned)__builtin_clzll(below);
		uint64_t base = sh + 6 < 64 ? x >> (sh + 6) << (sh + 6) : 0;
		uint64_t bbase = base + ((uint64_t)b << sh);
		const struct rset_node *n = path[h];

		if (!h) {
			*out = bbase + 63 - (unsigned)__builtin_clzll(n->words[b]);
			return true;
		}
		if (runs && RSET_RARE(n->full >> b & 1)) {
			*out = bbase + (1ull << sh) - 1;
			return true;
		}
		*out = max_in(n->child[b], h - 1, bbase, runs);
		return true;
	}
	return false;
}

/*
 * Predecessor: follow x down, keeping the path; if x's own path holds no
 * member at or below x, climb back to the deepest node with a non-empty
 * child below x's, and take the largest member under that child.
 */
RSET_INLINE bool pred_impl(const struct rset *s, uint64_t x, uint64_t *out,
			   bool runs)
{
	const struct rset_node *path[16], *n = s->root;
	unsigned h = s->height;

	for (;; h--) {
		unsigned c = (unsigned)(x >> child_shift(h)) & 63;

		path[h] = n;
		if (!h) {
			uint64_t w = n->words[c] & (~0ull >> (63 - (x & 63)));

			if (w) {
				*out = (x & ~63ull) + 63 - (unsigned)__builtin_clzll(w);
				return true;
			}
			break;
		}
		if (runs && RSET_RARE(n->full >> c & 1)) {
			*out = x;
			return true;
		}
		if (!(n->map >> c & 1))
			break;
		n = n->child[c];
	}
	return climb(s, path, h, x, out, runs);
}

static __attribute__((noinline)) bool pred_runs(const struct rset *s,
						 uint64_t x, uint64_t *out)
{
	return pred_impl(s, x, out, true);
}

static bool pred_walk(const struct rset *s, uint64_t x, uint64_t *out);

bool rset_pred(struct rset *s, uint64_t x, uint64_t *out)
{
	if (!s->root || !s->count)
		return false;
	if (x >= s->hi) {
		/* Every member is <= hi <= x: the answer is the largest. */
		if (!s->hi_exact) {
			if (!pred_walk(s, x, &s->hi))
				return false;	/* cannot happen: count > 0 */
			s->hi_exact = true;
		}
		*out = s->hi;
		return true;
	}
	return pred_walk(s, x, out);
}

static bool pred_walk(const struct rset *s, uint64_t x, uint64_t *out)
{
	uint64_t span_lg2 = child_shift(s->height) + 6;

	if (span_lg2 < 64 && x >> span_lg2)
		x = (1ull << span_lg2) - 1;	/* beyond the set's range */
	if (finger_hit(s, x)) {
		/* In the finger's leaf at or below x, else fall back. */
		const struct rset_node *n = s->fpath[0];
		unsigned c = (unsigned)(x >> 6) & 63;
		uint64_t w = n->words[c] & (~0ull >> (63 - (x & 63)));
		uint64_t below = n->map & ((1ull << c) - 1);

		if (w) {
			*out = (x & ~63ull) + 63 - (unsigned)__builtin_clzll(w);
			return true;
		}
		if (below) {
			unsigned b = 63 - (unsigned)__builtin_clzll(below);

			*out = (x & ~4095ull) + ((uint64_t)b << 6) + 63 -
			       (unsigned)__builtin_clzll(n->words[b]);
			return true;
		}
		/* The finger's path is x's: climb it, no descent. */
		return climb(s, (const struct rset_node *const *)s->fpath, 1, x,
			     out, s->runs);
	}
	if (RSET_RARE(s->runs))
		return pred_runs(s, x, out);
	return pred_impl(s, x, out, false);
}
