/* SPDX-License-Identifier: MIT */
/*
 * The record of live allocations of a stripe: start -> size in an open-
 * addressed hash table. It grows incrementally (a new table twice the
 * size; every later operation moves a few entries from the old one), so no
 * single operation pays for rehashing everything: every operation is O(1)
 * expected. "Which allocation holds this address" needs no second index:
 * every allocation starts aligned to the power of two at or above its
 * size, so the one holding x starts at x with its low j bits cleared for
 * some j, and live_find() looks those starts up. Not thread-safe.
 */
#ifndef IOPT_LIVE_H
#define IOPT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

/* A key and its value side by side: a lookup touches one cache line, not
 * one in each of two arrays (at 10^6 records, each a cache and TLB miss). */
struct live_slot {
	uint64_t key;		/* key + 1; 0 empty; UINT64_MAX deleted */
	uint64_t val;
};

struct live_tab {
	struct live_slot *slot;
	uint64_t cap, n;
};

struct iova_live {
	struct live_tab cur, old;	/* old.slot != NULL while moving */
	uint64_t move_pos;
	uint64_t pages;			/* sum of values (flag bits masked) */
	uint64_t value_mask;
};

int live_init(struct iova_live *l, uint64_t value_mask);
void live_fini(struct iova_live *l);
int live_reserve_slow(struct iova_live *l);

/* Make sure the next live_add() needs no table memory. 0 or -ENOMEM. */
static inline int live_reserve(struct iova_live *l)
{
	/* Not growing, and room for one more below half full. */
	if (!l->old.slot && (l->cur.n + 1) * 2 <= l->cur.cap)
		return 0;
	return live_reserve_slow(l);
}
/* Add a key that is absent; after live_reserve() (cannot fail). */
void live_add(struct iova_live *l, uint64_t key, uint64_t val);
/* The value of key, or 0 if absent. */
uint64_t live_get(struct iova_live *l, uint64_t key);
/* Replace the value of a present key. */
void live_set(struct iova_live *l, uint64_t key, uint64_t val);
void live_del(struct iova_live *l, uint64_t key);
/* If key's value is want: delete it and return true (one lookup). */
bool live_del_if(struct iova_live *l, uint64_t key, uint64_t want);
/* The entry whose [key, key + (val & mask)) holds x, among keys aligned
 * to 2^j for j <= max_order with x - key < 2^j (at most one lookup per
 * set bit of x below 2^max_order, plus one). */
bool live_find(struct iova_live *l, uint64_t x, unsigned max_order,
	       uint64_t *key, uint64_t *val);
/* How many slots past its hash position key lies (the probes a lookup of
 * it makes, less one), or -1 if absent. For tests and iopt-bench. */
long live_probe_dist(const struct iova_live *l, uint64_t key);

#endif
