/* SPDX-License-Identifier: MIT */
#include "buddy.h"

#include <errno.h>

void buddy_init(struct buddy *b, unsigned space_bits, unsigned max_order)
{
	b->max_order = max_order;
	b->free_pages = 0;
	for (unsigned k = 0; k <= max_order; k++)
		rset_init(&b->free[k], space_bits > k ? space_bits - k : 1);
}

void buddy_destroy(struct buddy *b)
{
	for (unsigned k = 0; k <= b->max_order; k++)
		rset_destroy(&b->free[k]);
}

/* Free one aligned block, merging with its buddy while it is free. */
static int buddy_free_block(struct buddy *b, uint64_t pfn, unsigned order)
{
	uint64_t pages = 1ull << order;

	while (order < b->max_order) {
		uint64_t buddy = pfn ^ (1ull << order);

		if (!rset_test(&b->free[order], buddy >> order))
			break;
		rset_del(&b->free[order], buddy >> order);
		pfn &= ~(1ull << order);
		order++;
	}
	if (rset_add(&b->free[order], pfn >> order))
		return -ENOMEM;
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
	int ret = 0;

	while (n) {
		unsigned o = fit_order(pfn, n, b->max_order);

		if (buddy_free_block(b, pfn, o))
			ret = -ENOMEM;
		pfn += 1ull << o;
		n -= 1ull << o;
	}
	return ret;
}

/*
 * Split the free block (start, order from) down to the block of order to
 * that contains target; the other halves go back to the free sets.
 */
static void buddy_split(struct buddy *b, uint64_t start, unsigned from,
			unsigned to, uint64_t target)
{
	rset_del(&b->free[from], start >> from);
	b->free_pages -= 1ull << from;
	while (from > to) {
		from--;
		uint64_t lo = start, hi = start + (1ull << from);
		uint64_t other = target >= hi ? lo : hi;

		start = target >= hi ? hi : lo;
		/* Cannot fail: the set had a node on this path moments ago
		 * only for the parent order; on -ENOMEM the half is lost. */
		if (rset_add(&b->free[from], other >> from) == 0)
			b->free_pages += 1ull << from;
	}
}

bool buddy_take(struct buddy *b, unsigned order, uint64_t limit_pfn,
		uint64_t *pfn)
{
	uint64_t size = 1ull << order, best = 0, best_start = 0;
	unsigned best_order = 0;
	bool found = false;

	if (order > b->max_order || limit_pfn + 1 < size)
		return false;
	/* Highest aligned start whose block ends at or below the limit. */
	uint64_t cap = (limit_pfn + 1 - size) & ~(size - 1);

	for (unsigned j = order; j <= b->max_order; j++) {
		uint64_t idx;

		if (!rset_pred(&b->free[j], cap >> j, &idx))
			continue;
		uint64_t start = idx << j;
		uint64_t top = start + (1ull << j) - size;
		uint64_t cand = top < cap ? top : cap;

		if (!found || cand > best) {
			found = true;
			best = cand;
			best_start = start;
			best_order = j;
		}
	}
	if (!found)
		return false;
	buddy_split(b, best_start, best_order, order, best);
	*pfn = best;
	return true;
}

/* The free block containing pfn: its order, or -1. */
static int containing(const struct buddy *b, uint64_t pfn, uint64_t *start)
{
	for (unsigned j = 0; j <= b->max_order; j++) {
		uint64_t s = pfn & ~((1ull << j) - 1);

		if (rset_test(&b->free[j], s >> j)) {
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
			break;		/* checked above: cannot happen */
		uint64_t bend = s + (1ull << j);

		/* Take the whole block, give back what lies outside. */
		rset_del(&b->free[j], s >> j);
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
	return rset_test(&b->free[b->max_order], chunk_pfn >> b->max_order);
}
