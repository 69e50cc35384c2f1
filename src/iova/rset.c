/* SPDX-License-Identifier: MIT */
#include "rset.h"

#include <errno.h>
#include <stdlib.h>

/* A leaf node (height 0) uses words[] as member bits; others use child[]. */
struct rset_node {
	uint64_t map;		/* bit c: child/word c non-empty */
	union {
		struct rset_node *child[64];
		uint64_t words[64];
	};
};

/* Members covered by one child of a node at height h. */
static unsigned child_shift(unsigned h)
{
	return 6 + 6 * h;
}

void rset_init(struct rset *s, unsigned bits)
{
	s->root = NULL;
	s->count = 0;
	s->height = bits > 12 ? (bits - 12 + 5) / 6 : 0;
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
}

int rset_add(struct rset *s, uint64_t i)
{
	struct rset_node **slot = &s->root;
	struct rset_node *path[16];
	unsigned depth = 0;

	for (unsigned h = s->height;; h--) {
		if (!*slot) {
			*slot = calloc(1, sizeof(**slot));
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
		slot = &n->child[c];
	}
	/* Mark the path non-empty. */
	for (unsigned k = 0; k + 1 < depth; k++) {
		unsigned h = s->height - k;

		path[k]->map |= 1ull << ((i >> child_shift(h)) & 63);
	}
	return 0;
nomem:
	/* Drop nodes this call created that stayed empty. */
	while (depth > 0) {
		struct rset_node *n = path[depth - 1];

		if (n->map)
			break;
		depth--;
		if (depth == 0) {
			free(n);
			s->root = NULL;
		} else {
			unsigned h = s->height - (depth - 1);
			unsigned c = (unsigned)(i >> child_shift(h)) & 63;

			path[depth - 1]->child[c] = NULL;
			free(n);
		}
	}
	return -ENOMEM;
}

bool rset_test(const struct rset *s, uint64_t i)
{
	const struct rset_node *n = s->root;

	for (unsigned h = s->height; n; h--) {
		unsigned c = (unsigned)(i >> child_shift(h)) & 63;

		if (!h)
			return n->words[c] >> (i & 63) & 1;
		n = n->child[c];
	}
	return false;
}

void rset_del(struct rset *s, uint64_t i)
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

			if (!(n->words[c] & bit))
				return;
			n->words[c] &= ~bit;
			s->count--;
			if (n->words[c])
				return;
			n->map &= ~(1ull << c);
			break;
		}
		n = n->child[c];
	}
	if (!n)
		return;
	/* Clear the map bits of emptied nodes bottom-up. The nodes stay (an
	 * empty node is skipped by its parent's map), so that a buddy system
	 * splitting and merging the same blocks does not allocate and free
	 * memory each time; memory is bounded by the most ever occupied. */
	for (unsigned k = depth - 1; k-- > 0;) {
		if (path[k + 1]->map)
			return;
		path[k]->map &= ~(1ull << cs[k]);
	}
}

/* Largest member in the subtree of n (height h), which is non-empty. */
static uint64_t max_in(const struct rset_node *n, unsigned h, uint64_t base)
{
	for (;; h--) {
		unsigned c = 63 - (unsigned)__builtin_clzll(n->map);

		base += (uint64_t)c << child_shift(h);
		if (!h)
			return base + 63 - (unsigned)__builtin_clzll(n->words[c]);
		n = n->child[c];
	}
}

static bool pred_in(const struct rset_node *n, unsigned h, uint64_t base,
		    uint64_t x, uint64_t *out)
{
	unsigned c = (unsigned)((x - base) >> child_shift(h)) & 63;
	uint64_t cbase = base + ((uint64_t)c << child_shift(h));

	if (!h) {
		uint64_t w = n->words[c] & (~0ull >> (63 - (x & 63)));

		if (w) {
			*out = cbase + 63 - (unsigned)__builtin_clzll(w);
			return true;
		}
	} else if (n->map >> c & 1 && pred_in(n->child[c], h - 1, cbase, x, out)) {
		return true;
	}
	uint64_t below = n->map & ((1ull << c) - 1);

	if (!below)
		return false;
	unsigned b = 63 - (unsigned)__builtin_clzll(below);
	uint64_t bbase = base + ((uint64_t)b << child_shift(h));

	if (!h) {
		*out = bbase + 63 - (unsigned)__builtin_clzll(n->words[b]);
		return true;
	}
	*out = max_in(n->child[b], h - 1, bbase);
	return true;
}

bool rset_pred(const struct rset *s, uint64_t x, uint64_t *out)
{
	if (!s->root)
		return false;
	uint64_t span_lg2 = child_shift(s->height) + 6;

	if (span_lg2 < 64 && x >> span_lg2)
		x = (1ull << span_lg2) - 1;	/* beyond the set's range */
	return pred_in(s->root, s->height, 0, x, out);
}
