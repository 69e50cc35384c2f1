/* SPDX-License-Identifier: MIT */
#include "buddy.h"

#include <errno.h>
#include <stddef.h>

#define RSET_RARE_FAIL(x) __builtin_expect(!!(x), 0)

/* The member that stands for the block (start pfn, order o). */
static uint64_t blk_idx(const struct buddy *b, unsigned o, uint64_t pfn)
{
	if (o == b->max_order)
		return pfn >> o >> b->stripe_shift;
	return pfn >> o;
}

static uint64_t blk_start(const struct buddy *b, unsigned o, uint64_t idx)
{
	if (o == b->max_order)
		return ((idx << b->stripe_shift) | b->stripe) << o;
	return idx << o;
}

/* Highest free block of order o starting at or below pfn x. */
static bool blk_pred(struct buddy *b, unsigned o, uint64_t x,
		     uint64_t *start)
{
	uint64_t idx, key = x >> o;

	if (o == b->max_order) {
		uint64_t mask = (1ull << b->stripe_shift) - 1;

		if ((key & mask) >= b->stripe)
			key >>= b->stripe_shift;
		else if (key >> b->stripe_shift)
			key = (key >> b->stripe_shift) - 1;
		else
			return false;
	}
	if (!rset_pred(&b->free[o], key, &idx))
		return false;
	*start = blk_start(b, o, idx);
	return true;
}

void buddy_init(struct buddy *b, unsigned space_bits, unsigned max_order,
		unsigned stripe, unsigned stripe_shift)
{
	unsigned sum = 0;

	b->max_order = max_order;
	b->stripe = stripe;
	b->stripe_shift = stripe_shift;
	b->free_pages = 0;
	b->pool.head = NULL;
	b->pool.n = 0;
	for (unsigned k = 0; k <= max_order; k++) {
		unsigned bits = space_bits > k ? space_bits - k : 1;

		if (k == max_order)
			bits = bits > stripe_shift + 1 ? bits - stripe_shift : 1;
		rset_init(&b->free[k], bits);
		b->free[k].pool = &b->pool;
		sum += rset_path_nodes(&b->free[k]);
	}
	/* A take_range of one chunk adds at most two blocks per order (the
	 * parts before and after the range) and materialises one top-order
	 * path; a take or a release needs less. */
	b->pool_min = 2 * sum + rset_path_nodes(&b->free[max_order]);
}

void buddy_destroy(struct buddy *b)
{
	for (unsigned k = 0; k <= b->max_order; k++)
		rset_destroy(&b->free[k]);
	rset_pool_drain(&b->pool);
}

unsigned buddy_chunk_run_nodes(const struct buddy *b, uint64_t chunks)
{
	const struct rset *s = &b->free[b->max_order];
	unsigned n = 0;

	/* Below each level, a run of members spans at most its length over
	 * the level's span plus two partial nodes. */
	for (unsigned h = 0; h <= s->height; h++) {
		unsigned sh = 12 + 6 * h;
		uint64_t k = (sh < 64 ? chunks >> sh : 0) + 2;

		n += k > 1u << 20 ? 1u << 20 : (unsigned)k;
	}
	return n;
}

int buddy_add_chunks(struct buddy *b, uint64_t first, uint64_t end)
{
	uint64_t mask = (1ull << b->stripe_shift) - 1;
	/* This stripe's chunk numbers c = l << shift | stripe in the run. */
	uint64_t lo = (first + ((b->stripe - first) & mask)) >> b->stripe_shift;
	uint64_t hi = (end + ((b->stripe - end) & mask)) >> b->stripe_shift;

	if (lo >= hi)
		return 0;
	if (rset_add_range(&b->free[b->max_order], lo, hi))
		return -ENOMEM;
	b->free_pages += (hi - lo) << b->max_order;
	return 0;
}

/* Free one aligned block, merging with its buddy while it is free. If the
 * final add fails (no node), the merged buddies go back: their nodes
 * exist (emptied nodes are kept), so nothing changes. */
static int buddy_free_block(struct buddy *b, uint64_t pfn, unsigned order)
{
	uint64_t pages = 1ull << order, p = pfn;
	unsigned o = order;

	/* Lower orders hold no whole subtrees: these deletes cannot fail. */
	while (o < b->max_order) {
		uint64_t bud = (p >> o) ^ 1;

		if (!rset_test(&b->free[o], bud))
			break;
		rset_del(&b->free[o], bud);
		p &= ~(1ull << o);
		o++;
	}
	if (RSET_RARE_FAIL(rset_add(&b->free[o], blk_idx(b, o, p)))) {
		for (unsigned k = order; k < o; k++)
			rset_add(&b->free[k], (pfn >> k) ^ 1);
		return -ENOMEM;
	}
	b->free_pages += pages;
	return 0;
}

/* Largest order of an aligned block starting at pfn within n pages. */
static unsigned fit_order(uint64_t pfn, uint64_t n, unsigned max)
{
	unsigned o = pfn ? (unsigned)__builtin_ctzll(pfn) : 63;
	unsigned s = 63 - (unsigned)__builtin_clzll(n);

	o = o < s ? o : s;
	return o < max ? o : max;
}

int buddy_release(struct buddy *b, uint64_t pfn, uint64_t n)
{
	while (n) {
		unsigned o = fit_order(pfn, n, b->max_order);

		if (buddy_free_block(b, pfn, o))
			return -ENOMEM;
		pfn += 1ull << o;
		n -= 1ull << o;
	}
	return 0;
}

/*
 * Split the free block (start, order from) down to the block of order to
 * that contains target; the other halves go back to the free sets. Only
 * after buddy_prepare(): each step may need nodes.
 */
static bool buddy_split(struct buddy *b, uint64_t start, unsigned from,
			unsigned to, uint64_t target)
{
	if (rset_del(&b->free[from], blk_idx(b, from, start)))
		return false;
	b->free_pages -= 1ull << from;
	while (from > to) {
		from--;
		uint64_t lo = start, hi = start + (1ull << from);
		uint64_t other = target >= hi ? lo : hi;

		start = target >= hi ? hi : lo;
		if (rset_add(&b->free[from], other >> from) == 0)
			b->free_pages += 1ull << from;
	}
	return true;
}

bool buddy_take(struct buddy *b, unsigned order, uint64_t cap, uint64_t *pfn)
{
	uint64_t size = 1ull << order, best = 0, best_start = 0, start, idx;
	unsigned best_order = 0;
	bool found = false;

	if (order > b->max_order)
		return false;
	/*
	 * Largest orders first, and stop at a block that holds cap itself:
	 * its candidate is cap, and no other free block can reach as high
	 * (a candidate of cap means the block holds page cap, and free
	 * blocks are disjoint), so the result is the same as asking every
	 * order. An allocation below a free chunk or a large free block
	 * thus costs one radix query, not one per order.
	 */
	if (blk_pred(b, b->max_order, cap, &start)) {
		uint64_t top = start + (1ull << b->max_order) - size;

		found = true;
		best = top < cap ? top : cap;
		best_start = start;
		best_order = b->max_order;
	}
	/* Below the top order the member is start >> j: no conversion. */
	for (unsigned j = b->max_order; !(found && best == cap) && j-- > order;) {
		if (!b->free[j].count || !rset_pred(&b->free[j], cap >> j, &idx))
			continue;
		start = idx << j;
		uint64_t top = start + (1ull << j) - size;
		uint64_t cand = top < cap ? top : cap;

		if (!found || cand > best) {
			found = true;
			best = cand;
			best_start = start;
			best_order = j;
		}
	}
	if (!found || !buddy_split(b, best_start, best_order, order, best))
		return false;
	*pfn = best;
	return true;
}

bool buddy_take_run(struct buddy *b, uint64_t size, unsigned order,
		    uint64_t cap, uint64_t *pfn)
{
	uint64_t start, x = cap;

	if (!order || order > b->max_order)
		return false;
	unsigned half = order - 1;

	/* [p, p + 2^half) must be a free block of its own (a larger one
	 * would hold the whole aligned block, which buddy_take() found
	 * absent), and p aligned to 2^order: the lower half of its pair. */
	while (blk_pred(b, half, x, &start)) {
		uint64_t rest = start + (1ull << half);

		if (!(start & ((1ull << order) - 1)) &&
		    buddy_take_range(b, rest, size - (1ull << half), false)) {
			if (!buddy_take_range(b, start, size, true))
				return false;
			*pfn = start;
			return true;
		}
		if (!start)
			break;
		x = start - 1;
	}
	return false;
}

/* The free block containing pfn: its order, or -1. */
static int containing(const struct buddy *b, uint64_t pfn, uint64_t *start)
{
	for (unsigned j = 0; j <= b->max_order; j++) {
		uint64_t s = pfn & ~((1ull << j) - 1);

		if (rset_test(&b->free[j], blk_idx(b, j, s))) {
			*start = s;
			return (int)j;
		}
	}
	return -1;
}

bool buddy_take_range(struct buddy *b, uint64_t pfn, uint64_t n, bool take)
{
	uint64_t end = pfn + n;

	for (uint64_t p = pfn; p < end;) {
		uint64_t s = 0;
		int j = containing(b, p, &s);

		if (j < 0)
			return false;
		p = s + (1ull << j);
	}
	if (!take)
		return true;
	for (uint64_t p = pfn; p < end;) {
		uint64_t s = 0;
		int j = containing(b, p, &s);

		if (j < 0)
			return false;	/* checked above: cannot happen */
		uint64_t bend = s + (1ull << j);

		/* Take the whole block, give back what lies outside. After
		 * buddy_prepare() none of this can fail. */
		if (rset_del(&b->free[j], blk_idx(b, (unsigned)j, s)))
			return false;
		b->free_pages -= 1ull << j;
		if (s < pfn)
			buddy_release(b, s, pfn - s);
		if (bend > end)
			buddy_release(b, end, bend - end);
		p = bend;
	}
	return true;
}

bool buddy_chunk_free(const struct buddy *b, uint64_t chunk_pfn)
{
	return rset_test(&b->free[b->max_order],
			 blk_idx(b, b->max_order, chunk_pfn));
}
