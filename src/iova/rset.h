/* SPDX-License-Identifier: MIT */
/*
 * A set of integers in [0, 2^bits), as a 64-ary radix tree of bitmaps:
 * every node holds a 64-bit map of its non-empty children; the lowest
 * nodes hold 64 words of member bits (4096 members). Insert, delete, test
 * and predecessor (largest member <= x) are O(bits / 6) whatever the
 * contents. Emptied nodes are kept for reuse until rset_destroy(), so
 * memory is bounded by the most members ever held at once, and a buddy
 * system splitting and merging blocks allocates nothing in steady state.
 * Not thread-safe: callers lock.
 */
#ifndef IOPT_RSET_H
#define IOPT_RSET_H

#include <stdbool.h>
#include <stdint.h>

struct rset_node;

struct rset {
	struct rset_node *root;
	unsigned height;	/* levels above the leaf nodes */
	uint64_t count;
};

void rset_init(struct rset *s, unsigned bits);
void rset_destroy(struct rset *s);
/* 0, or -ENOMEM (nothing changed). */
int rset_add(struct rset *s, uint64_t i);
void rset_del(struct rset *s, uint64_t i);
bool rset_test(const struct rset *s, uint64_t i);
/* Largest member <= x into *out: true, or false if none. */
bool rset_pred(const struct rset *s, uint64_t x, uint64_t *out);

#endif
