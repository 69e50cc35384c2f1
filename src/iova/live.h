/* SPDX-License-Identifier: MIT */
/*
 * A record of live allocations (a stripe's of more than FMAP_REC_MAX
 * pages, the domain's above a chunk): start -> size in an open-
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
#include <stddef.h>

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
	uint64_t move_pos;		/* old slots below it are moved */
	uintptr_t page, released;	/* old's pages below released: given back */
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
/* The home slot of key in a table of cap slots (a power of two). */
static inline uint64_t live_hash(uint64_t key, uint64_t cap)
{
	return (key * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

void live_add_slow(struct iova_live *l, uint64_t key, uint64_t val);

/* Add a key that is absent; after live_reserve() (cannot fail). In line
 * where its home slot is empty (the current table has no tombstones):
 * the allocator adds a record on every allocation. */
static inline void live_add(struct iova_live *l, uint64_t key, uint64_t val)
{
	struct live_slot *s = &l->cur.slot[live_hash(key, l->cur.cap)];

	if (s->key) {
		live_add_slow(l, key, val);
		return;
	}
	s->key = key + 1;
	s->val = val;
	l->cur.n++;
	l->pages += val & l->value_mask;
}
/* The value of key, or 0 if absent. */
uint64_t live_get(struct iova_live *l, uint64_t key);
/* Replace the value of a present key. */
void live_set(struct iova_live *l, uint64_t key, uint64_t val);
void live_del(struct iova_live *l, uint64_t key);
bool live_del_if_slow(struct iova_live *l, uint64_t key, uint64_t want);

/* If key's value is want: delete it and return true (one lookup). In
 * line where no move is in progress, key sits in its home slot and the
 * next slot is empty (no probe chain to shift back): the allocator
 * deletes a record on every free. */
static inline bool live_del_if(struct iova_live *l, uint64_t key, uint64_t want)
{
	uint64_t m = l->cur.cap - 1, i = live_hash(key, l->cur.cap);
	struct live_slot *s = l->cur.slot;

	if (l->old.slot || s[i].key != key + 1 || s[i].val != want ||
	    s[(i + 1) & m].key)
		return live_del_if_slow(l, key, want);
	s[i].key = 0;
	l->cur.n--;
	l->pages -= want & l->value_mask;
	return true;
}
/* The entry whose [key, key + (val & mask)) holds x, among keys aligned
 * to 2^j for j <= max_order with x - key < 2^j (at most one lookup per
 * set bit of x below 2^max_order, plus one). */
bool live_find(struct iova_live *l, uint64_t x, unsigned max_order,
	       uint64_t *key, uint64_t *val);
/* How many slots past its hash position key lies (the probes a lookup of
 * it makes, less one), or -1 if absent. For tests and iopt-bench. */
long live_probe_dist(const struct iova_live *l, uint64_t key);

#endif
