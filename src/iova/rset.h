/* SPDX-License-Identifier: MIT */
/*
 * A set of integers in [0, 2^bits), as a 64-ary radix tree of bitmaps:
 * every node holds a 64-bit map of its non-empty children; the lowest
 * nodes hold 64 words of member bits (4096 members). Insert, delete, test
 * and predecessor (largest member <= x) are O(bits / 6) whatever the
 * contents. Emptied nodes are kept for reuse until rset_destroy(), so
 * memory is bounded by the most members ever held at once, and a buddy
 * system splitting and merging blocks allocates nothing in steady state.
 *
 * Whole subtrees can be present without nodes: a node's 'full' map marks
 * children whose every member is present (the child pointer is then NULL).
 * rset_add_range() makes a run of members present in O(64 x height) time
 * and memory whatever its length; a later delete inside such a subtree
 * materialises the nodes on its path (and may then need memory).
 *
 * A finger speeds up operations near the last one: the set remembers the
 * path (one node per level) down to the leaf node the last add, delete,
 * test or descending predecessor reached. An operation whose member lies
 * in that leaf (the same i >> 12) works on the leaf and walks up the kept
 * path only while a node's emptiness changes, instead of descending from
 * the root: a buddy system splitting and merging the same blocks stays in
 * one leaf per order. The path stays valid because nodes are never freed
 * or moved while the set lives, except by rset_add_range() (whole
 * subtrees) and rset_destroy(), which drop the finger; a kept path never
 * passes a whole ('full') child, and only rset_add_range() makes one.
 *
 * The set also keeps a bound on its largest member (and whether it is the
 * largest member itself): a predecessor query at or above the bound is
 * answered without a walk, and after the largest member is deleted the
 * next such query walks once and makes the bound exact again. An
 * allocator asking "the highest free block below the limit" in every
 * order thus walks only the orders that changed.
 *
 * Nodes come from the set's pool when it has one (rset_pool_fill() ahead
 * of an operation makes that operation unable to fail), else from calloc.
 * Not thread-safe: callers lock.
 */
#ifndef IOPT_RSET_H
#define IOPT_RSET_H

#include <stdbool.h>
#include <stdint.h>

struct rset_node;

/* Spare zeroed nodes, shared by the sets of one owner. */
struct rset_pool {
	struct rset_node *head;
	unsigned n;
};

struct rset {
	struct rset_node *root;
	struct rset_pool *pool;	/* NULL: calloc */
	unsigned height;	/* levels above the leaf nodes */
	bool runs;		/* may hold whole subtrees (rset_add_range) */
	uint64_t count;
	uint64_t hi;		/* with count > 0: every member <= hi */
	bool hi_exact;		/* hi is a member (the largest) */
	uint64_t fkey;		/* finger: members fkey << 12 .. + 4095 */
	struct rset_node *fpath[12];	/* by height; fpath[0] NULL: none */
};

void rset_init(struct rset *s, unsigned bits);
void rset_destroy(struct rset *s);
/* 0, or -ENOMEM (nothing changed). */
int rset_add(struct rset *s, uint64_t i);
/* Make [lo, hi) present; none of it may be present already. 0 or -ENOMEM
 * (then part of the run may be present: callers use it on a new set). */
int rset_add_range(struct rset *s, uint64_t lo, uint64_t hi);
/* 0, or -ENOMEM (only inside a subtree added whole; the set then still
 * holds exactly the same members). */
int rset_del(struct rset *s, uint64_t i);
bool rset_test(const struct rset *s, uint64_t i);
/* Largest member <= x into *out: true, or false if none. */
bool rset_pred(struct rset *s, uint64_t x, uint64_t *out);
/* Nodes one rset_add() or rset_del() may need at most. */
unsigned rset_path_nodes(const struct rset *s);

/* Have at least n spare nodes: 0 or -ENOMEM (the pool keeps what it got). */
int rset_pool_fill(struct rset_pool *p, unsigned n);
void rset_pool_drain(struct rset_pool *p);

#endif
