/* SPDX-License-Identifier: MIT */
/*
 * A buddy system over the chunks of one stripe: free blocks are naturally
 * aligned powers of two, kept per order in radix sets (rset.h), never
 * larger than a chunk. Not thread-safe: the stripe's lock is held.
 */
#ifndef IOPT_BUDDY_H
#define IOPT_BUDDY_H

#include <stdbool.h>
#include <stdint.h>

#include "rset.h"

#define BUDDY_MAX_ORDER 40

struct buddy {
	unsigned max_order;		/* a chunk */
	struct rset free[BUDDY_MAX_ORDER + 1];	/* block start >> order */
	uint64_t free_pages;
};

void buddy_init(struct buddy *b, unsigned space_bits, unsigned max_order);
void buddy_destroy(struct buddy *b);

/* Give [pfn, pfn + n) (free, inside this stripe's chunks) to the free sets,
 * merging buddies. 0 or -ENOMEM (then part of the range may be lost). */
int buddy_release(struct buddy *b, uint64_t pfn, uint64_t n);

/*
 * Take the highest block of 2^order pages that ends at or below limit_pfn
 * (inclusive) and return its start; the rest of the split block goes back
 * to the free sets. false if none.
 */
bool buddy_take(struct buddy *b, unsigned order, uint64_t limit_pfn,
		uint64_t *pfn);

/* Is [pfn, pfn + n) entirely free? If so, and take is set, take it. */
bool buddy_take_range(struct buddy *b, uint64_t pfn, uint64_t n, bool take);

/* Does the chunk starting at pfn consist of one free block? */
bool buddy_chunk_free(const struct buddy *b, uint64_t chunk_pfn);

#endif
