/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE		/* madvise() */
#include "live.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define DELETED UINT64_MAX
/*
 * Old slots examined per operation while a move lasts. Each entry moved
 * lands at a random slot of the new table, whose pages the kernel gives
 * on first touch (2-7 us each on the development VM): at 32 an
 * operation could take 16 such faults, 30-80 us; at 8, a few.
 */
#define MOVE_SCAN 8
/* The old table's pages behind the move are given back to the kernel in
 * runs of this many bytes (one madvise() per run), so that freeing the
 * old table at the end of the move does not unmap tens of MiB of touched
 * pages in one operation (about 10 ms for 64 MiB on that VM). */
#define RELEASE_RUN (64u << 10)

static uint64_t hash(uint64_t key, uint64_t cap)
{
	return live_hash(key, cap);
}

static int tab_init(struct live_tab *t, uint64_t cap)
{
	/* calloc: large tables come as untouched zero pages, so creating one
	 * costs no pass over it. */
	t->slot = calloc(cap, sizeof(*t->slot));
	t->cap = cap;
	t->n = 0;
	return t->slot ? 0 : -ENOMEM;
}

static void tab_free(struct live_tab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}

/* Slot holding key, or UINT64_MAX. */
static uint64_t tab_find(const struct live_tab *t, uint64_t key)
{
	if (!t->slot)
		return UINT64_MAX;
	for (uint64_t i = hash(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->slot[i].key == key + 1)
			return i;
		if (!t->slot[i].key)
			return UINT64_MAX;
	}
}

/*
 * Slot of key in the old table, or UINT64_MAX. The slots below move_pos
 * have been moved (their pages may have been given back and read as
 * empty): they count as deleted, so a probe that reaches one goes on at
 * move_pos. A probe examines each slot at or above move_pos at most once.
 */
static uint64_t old_find(const struct iova_live *l, uint64_t key)
{
	const struct live_tab *t = &l->old;
	uint64_t mask = t->cap - 1, i, n;

	if (!t->slot)
		return UINT64_MAX;
	i = hash(key, t->cap);
	for (n = t->cap - l->move_pos; n--; i = (i + 1) & mask) {
		if (i < l->move_pos)
			i = l->move_pos;
		if (t->slot[i].key == key + 1)
			return i;
		if (!t->slot[i].key)
			return UINT64_MAX;
	}
	return UINT64_MAX;
}

static void tab_put(struct live_tab *t, uint64_t key, uint64_t val)
{
	uint64_t i = hash(key, t->cap);

	while (t->slot[i].key && t->slot[i].key != DELETED)
		i = (i + 1) & (t->cap - 1);
	t->slot[i].key = key + 1;
	t->slot[i].val = val;
	t->n++;
}

/* Delete from the current table: shift the probe chain back. */
static inline __attribute__((always_inline)) void
tab_del_shift(struct live_tab *t, uint64_t i)
{
	uint64_t mask = t->cap - 1;

	t->slot[i].key = 0;
	t->n--;
	for (i = (i + 1) & mask; t->slot[i].key; i = (i + 1) & mask) {
		uint64_t k = t->slot[i].key - 1, v = t->slot[i].val;

		t->slot[i].key = 0;
		t->n--;
		tab_put(t, k, v);
	}
}

static void live_step_move(struct iova_live *l);

/* Move a few entries from the old table to the current one, if one is
 * left. */
static inline void live_step(struct iova_live *l)
{
	if (l->old.slot)
		live_step_move(l);
}

static void live_step_move(struct iova_live *l)
{
	uint64_t end = l->move_pos + MOVE_SCAN;

	for (; l->move_pos < end && l->move_pos < l->old.cap; l->move_pos++) {
		uint64_t k = l->old.slot[l->move_pos].key;

		if (k && k != DELETED) {
			tab_put(&l->cur, k - 1, l->old.slot[l->move_pos].val);
			l->old.slot[l->move_pos].key = DELETED;
			l->old.n--;
		}
	}
	if (l->move_pos == l->old.cap) {
		tab_free(&l->old);
		return;
	}
	/* Give back the whole pages behind move_pos, a run at a time. The
	 * pages read as zero afterwards (private anonymous memory): old_find()
	 * never reads below move_pos. A failed madvise() leaves them. */
	uintptr_t hi = ((uintptr_t)l->old.slot + l->move_pos * sizeof(*l->old.slot)) &
		       ~(uintptr_t)(l->page - 1);

	if (hi >= l->released + RELEASE_RUN) {
		madvise((void *)l->released, hi - l->released, MADV_DONTNEED);
		l->released = hi;
	}
}

int live_init(struct iova_live *l, uint64_t value_mask)
{
	l->old.slot = NULL;
	l->old.cap = l->old.n = 0;
	l->move_pos = 0;
	l->page = 0;
	l->released = 0;
	l->pages = 0;
	l->value_mask = value_mask;
	return tab_init(&l->cur, 64);
}

void live_fini(struct iova_live *l)
{
	tab_free(&l->cur);
	tab_free(&l->old);
}

int live_reserve_slow(struct iova_live *l)
{
	live_step(l);
	if ((l->cur.n + 1) * 2 <= l->cur.cap || l->old.slot)
		return 0;
	/* Start moving into a table twice as large. While the move lasts
	 * (cap / MOVE_SCAN operations, each an allocation or a free, with at
	 * most one insertion) the new table stays under half full. */
	struct live_tab t;

	if (tab_init(&t, l->cur.cap * 2))
		return -ENOMEM;
	l->old = l->cur;
	l->cur = t;
	l->move_pos = 0;
	if (!l->page) {
		long pg = sysconf(_SC_PAGESIZE);

		l->page = pg > 0 ? (uintptr_t)pg : 4096;
	}
	l->released = ((uintptr_t)l->old.slot + l->page - 1) & ~(uintptr_t)(l->page - 1);
	live_step(l);
	return 0;
}

void live_add_slow(struct iova_live *l, uint64_t key, uint64_t val)
{
	tab_put(&l->cur, key, val);
	l->pages += val & l->value_mask;
}

uint64_t live_get(struct iova_live *l, uint64_t key)
{
	uint64_t i = tab_find(&l->cur, key);

	if (i != UINT64_MAX)
		return l->cur.slot[i].val;
	i = old_find(l, key);
	return i != UINT64_MAX ? l->old.slot[i].val : 0;
}

void live_set(struct iova_live *l, uint64_t key, uint64_t val)
{
	uint64_t i = tab_find(&l->cur, key);
	struct live_tab *t = &l->cur;

	if (i == UINT64_MAX) {
		i = old_find(l, key);
		t = &l->old;
	}
	if (i == UINT64_MAX)
		return;
	l->pages += (val & l->value_mask) - (t->slot[i].val & l->value_mask);
	t->slot[i].val = val;
}

void live_del(struct iova_live *l, uint64_t key)
{
	uint64_t i = tab_find(&l->cur, key);

	if (i != UINT64_MAX) {
		l->pages -= l->cur.slot[i].val & l->value_mask;
		tab_del_shift(&l->cur, i);
	} else if ((i = old_find(l, key)) != UINT64_MAX) {
		l->pages -= l->old.slot[i].val & l->value_mask;
		l->old.slot[i].key = DELETED;	/* keeps old probe chains whole */
		l->old.n--;
	} else {
		return;
	}
	live_step(l);
}

bool live_del_if_slow(struct iova_live *l, uint64_t key, uint64_t want)
{
	uint64_t i = tab_find(&l->cur, key);

	if (i == UINT64_MAX || l->cur.slot[i].val != want) {
		if (!l->old.slot || live_get(l, key) != want)
			return false;
		live_del(l, key);
		return true;
	}
	l->pages -= want & l->value_mask;
	tab_del_shift(&l->cur, i);
	live_step(l);
	return true;
}

bool live_find(struct iova_live *l, uint64_t x, unsigned max_order,
	       uint64_t *key, uint64_t *val)
{
	uint64_t s = x, below = max_order >= 64 ? ~0ull : (1ull << max_order) - 1;

	/* s: x with its low j bits cleared, for j = 0, 1, ..., max_order;
	 * it changes only where x has a set bit. */
	for (;;) {
		uint64_t v = live_get(l, s);

		if (v && x - s < (v & l->value_mask)) {
			*key = s;
			*val = v & l->value_mask;
			return true;
		}
		if (!(s & below))
			return false;
		s &= s - 1;
	}
}

long live_probe_dist(const struct iova_live *l, uint64_t key)
{
	const struct live_tab *t = &l->cur;
	uint64_t i = tab_find(t, key);

	if (i == UINT64_MAX) {
		t = &l->old;
		i = old_find(l, key);
	}
	if (i == UINT64_MAX)
		return -1;
	return (long)((i - hash(key, t->cap)) & (t->cap - 1));
}
