/* SPDX-License-Identifier: MIT */
/*
 * A buddy system over the chunks of one stripe: free blocks are naturally
 * aligned powers of two, kept per order in radix sets (rset.h), never
 * larger than a chunk. Whole free chunks (the top order) are indexed by
 * their number within the stripe, so that the stripe's chunks of a run of
 * the space are one run of members, added in O(log) (buddy_add_chunks()).
 *
 * Memory: every operation that changes the free sets may need radix nodes.
 * buddy_prepare() first makes sure the stripe's node pool holds enough for
 * one operation of any kind (plus 'extra'); after it succeeds, the next
 * buddy_release(), buddy_take() or buddy_take_range() of at most one chunk
 * cannot fail. Not thread-safe: the stripe's lock is held.
 */
#ifndef IOPT_BUDDY_H
#define IOPT_BUDDY_H

#include <stdbool.h>
#include <stdint.h>

#include "rset.h"

#define BUDDY_MAX_ORDER 40

struct buddy {
	unsigned max_order;		/* a chunk */
	unsigned stripe, stripe_shift;	/* this stripe's chunks: c % 2^shift */
	unsigned pool_min;		/* nodes one operation may need */
	struct rset_pool pool;
	struct rset free[BUDDY_MAX_ORDER + 1];	/* block start >> order;
						 * top: chunk >> stripe_shift */
	uint64_t free_pages;
};

void buddy_init(struct buddy *b, unsigned space_bits, unsigned max_order,
		unsigned stripe, unsigned stripe_shift);
void buddy_destroy(struct buddy *b);

/* Nodes for one operation plus extra: 0 or -ENOMEM (nothing changed). */
static inline int buddy_prepare(struct buddy *b, unsigned extra)
{
	if (b->pool.n >= b->pool_min + extra)
		return 0;
	return rset_pool_fill(&b->pool, b->pool_min + extra);
}

/* Nodes that taking 'chunks' whole consecutive chunks of this stripe may
 * need (materialising a run added whole). */
unsigned buddy_chunk_run_nodes(const struct buddy *b, uint64_t chunks);

/* This stripe's chunks whose numbers lie in [first, end): all free. They
 * must not be free already. 0 or -ENOMEM (on a new buddy only). */
int buddy_add_chunks(struct buddy *b, uint64_t first, uint64_t end);

/* Give [pfn, pfn + n) (free, inside this stripe's chunks) to the free sets,
 * merging buddies. 0 or -ENOMEM (without buddy_prepare(): part of the
 * range may then be lost). */
int buddy_release(struct buddy *b, uint64_t pfn, uint64_t n);

/*
 * Take the highest block of 2^order pages that starts at or below cap
 * (aligned to 2^order) and return its start; the rest of the split block
 * goes back to the free sets. false if none.
 */
bool buddy_take(struct buddy *b, unsigned order, uint64_t cap, uint64_t *pfn);

/*
 * The highest start p <= cap, aligned to 2^order, such that [p, p + size)
 * is free although the whole block [p, p + 2^order) is not (size below
 * 2^order, above half of it); take [p, p + size). false if none. The
 * search visits every free block of order - 1 at or below cap in the
 * worst case: callers use it only after buddy_take() failed.
 */
bool buddy_take_run(struct buddy *b, uint64_t size, unsigned order,
		    uint64_t cap, uint64_t *pfn);

/* Is [pfn, pfn + n) entirely free? If so, and take is set, take it. */
bool buddy_take_range(struct buddy *b, uint64_t pfn, uint64_t n, bool take);

/* Does the chunk starting at pfn consist of one free block? */
bool buddy_chunk_free(const struct buddy *b, uint64_t chunk_pfn);

#endif
