/* SPDX-License-Identifier: MIT */
/*
 * The page-table algorithm, written once over the format primitives of
 * struct pt_fmt and compiled per format: a format file includes this
 * header and instantiates PT_DEFINE_IMPL(name, &fmt), so that every
 * primitive call through the constant fmt inlines.
 *
 * Lock-free design (docs/pgtable.md, "Concurrency contract"):
 *
 *  1. Tables are published with one release compare-and-swap on the parent
 *     entry, from the value read (empty for a new table, the block for a
 *     split). Walkers load entries with acquire, which pairs with that CAS,
 *     so a walker that sees a table entry sees the table's contents. The
 *     loser of a race frees its own (never published) table and continues
 *     in the winner's.
 *  2. Items at the last level can only hold a page or nothing, so they are
 *     written with plain (relaxed, single-copy-atomic) stores: no write
 *     there can drop a table. Items above the last level may hold a table,
 *     so every write there is a compare-and-swap against the value read,
 *     and an unexpected table is never overwritten (never leaked).
 *  3. A block that an unmap covers only in part is replaced, by CAS, with
 *     ONE table of items covering the whole block with the block's
 *     attributes; the unmap then continues in it (and splits again one
 *     level down if it is smaller still).
 *  4. A run (contiguous hint, v7s large page or supersection) cannot be
 *     rewritten atomically. Breaking it is serialised by pt->split_lock,
 *     which no other path takes: the breaker writes PT_BUSY_MARKER into
 *     every item (break), syncs and invalidates the TLB, then writes the
 *     single items (make). Anyone who reads the marker takes and drops the
 *     lock and reads again.
 *  5. Every table is unlinked by pt_unlink_table() (break-before-make:
 *     empty the entry, sync it, invalidate, then free) and freed after an
 *     RCU grace period; every operation runs inside a read-side section,
 *     so no thread ever touches freed table memory, even when callers
 *     overlap their requests.
 *  6. Non-coherent walkers: a table's contents are synced before the entry
 *     that publishes it; the entry is synced after, and then marked with the
 *     format's software sync bit. Whoever finds the bit clear syncs the
 *     entry itself before relying on it (formats without a spare bit always
 *     sync). Runs of leaves and cleared leaves are synced once per run.
 *  7. A per-thread leaf-table cache lets consecutive calls into one leaf
 *     table skip the descent; unlinking any table invalidates it.
 *  8. TLB reports carry what was replaced (pt_gather_range(),
 *     pt_flush_walk_sync()): granule is a level hint (pgtable.h), so a
 *     split reports the block and a run break the aligned run. A failed
 *     map unmaps what it wrote through the unmap path and syncs; a run is
 *     written only once all its items are free.
 *  9. A split block stays reportable until its splitter has reported it: the
 *     splitter claims a slot naming the block (pt->split_slot, acq_rel) before
 *     it publishes the table, and frees it (release) only after its add_page
 *     for the block returned and the invalidation was marked pending. Every
 *     unmap that reached its leaves by a walk (acquire loads, so it sees every
 *     slot claimed before the tables it followed) reports each claimed block
 *     that covers its address as its own, and a leaf table is not cached while
 *     any split is in flight. So an unmap that passes through a freshly split
 *     table either reports the block itself or finds its slot free, and then
 *     the block's add_page happened before: the unmap's iopt_pgtable_tlb_sync()
 *     waits for both.
 */
#ifndef IOPT_PT_ALGO_H
#define IOPT_PT_ALGO_H

#include <errno.h>
#include <stdlib.h>

#include "pt_entry.h"

#define PT_ALGO static inline __attribute__((always_inline))
/* Rare paths (allocation, splits, run breaks) stay out of the hot loops. */
#define PT_COLD static __attribute__((noinline, cold))
/*
 * Out-of-line functions that hold a loop run once per page of a call
 * start on a cache line, so that where their loops fall against 32- and
 * 64-byte fetch boundaries is set by their own code, not by the size of
 * whatever is linked before them (docs/pgtable.md, "Code layout").
 */
#define PT_LOOP_ALIGN __attribute__((aligned(64)))

/* ---- entry access ----------------------------------------------------- */

PT_ALGO void *pt_entry(const struct pt_fmt *F, void *tbl, unsigned idx)
{
	return (char *)tbl + ((size_t)idx << F->entry_lg2);
}

PT_ALGO uint64_t pt_load_acq(const struct pt_fmt *F, void *tbl, unsigned idx)
{
	if (F->entry_lg2 == 3)
		return plat_load_acq64(pt_entry(F, tbl, idx));
	return plat_load_acq32(pt_entry(F, tbl, idx));
}

PT_ALGO uint64_t pt_load_rlx(const struct pt_fmt *F, void *tbl, unsigned idx)
{
	if (F->entry_lg2 == 3)
		return plat_load_rlx64(pt_entry(F, tbl, idx));
	return plat_load_rlx32(pt_entry(F, tbl, idx));
}

PT_ALGO void pt_store_rlx(const struct pt_fmt *F, void *tbl, unsigned idx,
			  uint64_t v)
{
	if (F->entry_lg2 == 3)
		plat_store_rlx64(pt_entry(F, tbl, idx), v);
	else
		plat_store_rlx32(pt_entry(F, tbl, idx), (uint32_t)v);
}

PT_ALGO void pt_store_rel(const struct pt_fmt *F, void *tbl, unsigned idx,
			  uint64_t v)
{
	if (F->entry_lg2 == 3)
		plat_store_rel64(pt_entry(F, tbl, idx), v);
	else
		plat_store_rel32(pt_entry(F, tbl, idx), (uint32_t)v);
}

/* Release CAS; on failure *old is the current value (acquired). */
PT_ALGO bool pt_cas(const struct pt_fmt *F, void *tbl, unsigned idx,
		    uint64_t *old, uint64_t v)
{
	if (F->entry_lg2 == 3)
		return plat_cas_rel64(pt_entry(F, tbl, idx), old, v);
	uint32_t o = (uint32_t)*old;
	bool ok = plat_cas_rel32(pt_entry(F, tbl, idx), &o, (uint32_t)v);
	*old = o;
	return ok;
}

PT_ALGO uint64_t pt_xchg(const struct pt_fmt *F, void *tbl, unsigned idx,
			 uint64_t v)
{
	if (F->entry_lg2 == 3)
		return plat_xchg_acq_rel64(pt_entry(F, tbl, idx), v);
	return plat_xchg_acq_rel32(pt_entry(F, tbl, idx), (uint32_t)v);
}

PT_ALGO void pt_sync_entries(const struct pt_fmt *F, struct iopt_pgtable *pt,
			     void *tbl, unsigned idx, unsigned n)
{
	pt_sync(pt, pt_entry(F, tbl, idx), (size_t)n << F->entry_lg2);
}

/* Leaves tbl[idx, idx + n) were cleared by an unmap: pt_sync_cleared(). */
PT_ALGO void pt_sync_cleared_entries(const struct pt_fmt *F,
				     struct iopt_pgtable *pt, void *tbl,
				     unsigned idx, unsigned n)
{
	pt_sync_cleared(pt, pt_entry(F, tbl, idx), (size_t)n << F->entry_lg2);
}

/* ---- geometry --------------------------------------------------------- */

PT_ALGO unsigned pt_index(const struct iopt_pgtable *pt, uint64_t va,
			  unsigned d)
{
	return (unsigned)(va >> pt->shift[d]) & pt->idx_mask[d];
}

PT_ALGO unsigned pt_lvl(const struct iopt_pgtable *pt, unsigned d)
{
	return pt->start_level + d;
}

PT_ALGO bool pt_last(const struct iopt_pgtable *pt, unsigned d)
{
	return d + 1 == pt->levels;
}

PT_ALGO enum pt_kind pt_kind_of(const struct pt_fmt *F,
				const struct iopt_pgtable *pt, uint64_t pte,
				unsigned d)
{
	enum pt_kind k = F->kind(pt, pte, pt_last(pt, d));

	if (plat_unlikely(k == PT_EMPTY && pte == PT_BUSY_MARKER))
		return PT_BUSY;
	return k;
}

/* Kind of an entry known not to be at the last level (descents). */
PT_ALGO enum pt_kind pt_kind_upper(const struct pt_fmt *F,
				   const struct iopt_pgtable *pt, uint64_t pte)
{
	enum pt_kind k = F->kind(pt, pte, false);

	if (plat_unlikely(k == PT_EMPTY && pte == PT_BUSY_MARKER))
		return PT_BUSY;
	return k;
}

/*
 * Make the table entry pte, read from tbl[idx], visible to a non-coherent
 * walker unless it carries the sync bit (item 6): "even if it's not ours,
 * there's no point waiting; just kick it".
 */
PT_ALGO void pt_sync_table_entry(const struct pt_fmt *F, struct iopt_pgtable *pt,
				 void *tbl, unsigned idx, uint64_t pte)
{
	if (!pt->cfg.coherent_walk && !(pte & F->sync_bit)) {
		pt_sync_entries(F, pt, tbl, idx, 1);
		if (F->sync_bit) {
			uint64_t old = pte;

			/* Release: the sync above happens before any thread
			 * that reads the bit (acquire) skips its own sync.
			 * Failure means the entry changed: its new owner
			 * syncs it. */
			pt_cas(F, tbl, idx, &old, pte | F->sync_bit);
		}
	}
}

/* Follow a table entry read from tbl[idx] at depth d, syncing it first. */
PT_ALGO void *pt_follow(const struct pt_fmt *F, struct iopt_pgtable *pt,
			void *tbl, unsigned idx, uint64_t pte, unsigned d)
{
	pt_sync_table_entry(F, pt, tbl, idx, pte);
	return pt_virt(pt, F->table_pa(pt, pte, pt_lvl(pt, d)));
}

/*
 * Leaf-table cache (item 7): each thread remembers the last leaf table it
 * reached, so that runs of calls into one table skip the descent. An entry
 * is valid while the table's unlink generation is unchanged: every path
 * that unlinks a table bumps it (release) before returning, and a lookup
 * reads it (acquire) before using the entry. Using a stale entry is only
 * possible for a request that overlaps a concurrent unlinking one, which
 * the contract leaves unspecified; the table itself stays readable (RCU).
 */
struct pt_leaf_cache {
	uint64_t pt_id;
	uint64_t gen;
	uint64_t tag;
	void *tbl;
};

PLAT_CPU_LOCAL(struct pt_leaf_cache, pt_lc);

PT_ALGO uint64_t pt_lc_tag(const struct iopt_pgtable *pt, uint64_t va)
{
	return va >> pt->leaf_tag_shift;
}

/* The unlink generation to fill the cache with after a walk. */
PT_ALGO uint64_t pt_lc_gen(const struct iopt_pgtable *pt)
{
	/* Acquire: pairs with the release increment in pt_unlinked(). */
	return plat_load_acq64(&pt->unlink_gen);
}

/* Returns the cached leaf table for va, or NULL and the generation to
 * fill with after a walk. */
PT_ALGO void *pt_lc_lookup(const struct iopt_pgtable *pt, uint64_t va,
			   uint64_t *gen)
{
	const struct pt_leaf_cache *lc = plat_cpu_local(pt_lc);
	uint64_t g = pt_lc_gen(pt);

	*gen = g;
	if (lc->pt_id == pt->id && lc->tag == pt_lc_tag(pt, va) && lc->gen == g)
		return lc->tbl;
	return NULL;
}

PT_ALGO void pt_lc_fill(const struct iopt_pgtable *pt, uint64_t va, void *tbl,
			uint64_t gen)
{
	struct pt_leaf_cache *lc = plat_cpu_local(pt_lc);

	lc->pt_id = pt->id;
	lc->gen = gen;
	lc->tag = pt_lc_tag(pt, va);
	lc->tbl = tbl;
}

/* A table was unlinked: invalidate every thread's cached leaf tables. */
static inline void pt_unlinked(struct iopt_pgtable *pt)
{
	plat_fetch_add_acq_rel64(&pt->unlink_gen, 1);
}

/* Wait for a run break in progress (item 4). */
static inline void pt_wait_busy(struct iopt_pgtable *pt)
{
	plat_mutex_lock(&pt->split_lock);
	plat_mutex_unlock(&pt->split_lock);
}

#ifdef IOPT_PT_TEST_HOOKS
/*
 * Test builds only (tests/CMakeLists.txt compiles the formats once more
 * with IOPT_PT_TEST_HOOKS for tests/test_pt_split_tlb.c, which defines
 * it): called on the publishing thread right after its compare-and-swap
 * published a table whose entry covers span bytes, before anything else
 * that thread does, so that a test can run another thread through the
 * new table at that point (item 9: a split's slot is claimed by then).
 * The library's own builds compile it out.
 */
void pt_test_published(struct iopt_pgtable *pt, uint64_t span);
#define PT_TEST_PUBLISHED(pt, d) pt_test_published(pt, 1ull << (pt)->shift[d])
#else
#define PT_TEST_PUBLISHED(pt, d) ((void)0)
#endif

/*
 * Publish child (already filled and synced) in tbl[idx] if it still holds
 * *pte. Returns true if published; otherwise frees child and sets *pte to
 * the entry's current value (item 1).
 */
PT_ALGO bool pt_publish(const struct pt_fmt *F, struct iopt_pgtable *pt,
			void *tbl, unsigned idx, uint64_t *pte, void *child,
			uint64_t child_pa, unsigned d)
{
	uint64_t tpte = F->make_table(pt, child_pa, pt_lvl(pt, d));
	uint64_t old = *pte;

	/* Release: publishes the child's contents; pairs with the acquire
	 * loads of every walker that reads this entry. */
	if (pt_cas(F, tbl, idx, &old, tpte)) {
		PT_TEST_PUBLISHED(pt, d);
		*pte = tpte;
		return true;
	}
	pt_table_free_now(pt, child, child_pa, d + 1);
	*pte = old;
	return false;
}

/* Install an empty table below the empty entry tbl[idx] at depth d. */
PT_COLD int pt_install_table(const struct pt_fmt *F, struct iopt_pgtable *pt,
			     void *tbl, unsigned idx, unsigned d,
			     uint64_t *pte)
{
	uint64_t pa;
	void *child = pt_table_alloc(pt, d + 1, &pa);

	if (!child)
		return -ENOMEM;
	pt_sync(pt, child, pt->table_bytes[d + 1]);
#ifdef IOPT_PLANT_TABLE_INSTALL
	/* Planted race, compiled only into tests (tests/test_plant_pt.c): a
	 * plain store instead of pt_publish()'s compare-and-swap, so that of
	 * two racing installers the later one overwrites the other's table. */
	*pte = F->make_table(pt, pa, pt_lvl(pt, d));
	pt_store_rel(F, tbl, idx, *pte);
	return 0;
#endif
	pt_publish(F, pt, tbl, idx, pte, child, pa, d);
	return 0;
}

/* ---- TLB maintenance reports (docs/pgtable.md, "TLB maintenance") ----- */

/*
 * The callbacks' granule is a promise about the leaves of the range (struct
 * iopt_pgtable_tlb_ops): every leaf removed or replaced in it was an item of
 * exactly that size, at the level that holds items of that size, so a driver
 * may derive the range invalidation's TTL level hint from it; 0 promises
 * nothing (leaves of any level may be cached there). Each report is made once
 * the replacing entry is synced to a non-coherent walker, so that a walk after
 * the invalidation cannot refill the TLB from the old entry.
 */

/*
 * add(g, va, size, cookie) for each leaf of size bytes in [va, end), at
 * least two. Out of line and aligned to a cache line, so that where this
 * loop lies does not depend on the code around it: an unmap of a whole
 * leaf table runs it once per page, and each round is three taken
 * branches (the call, the return, the branch back). Inline in the unmap
 * walk it moved with every change in the code linked before it, and
 * where it straddled a 32-byte boundary a --pgcount 512 unmap took 11-16%
 * longer per page than where it did not (docs/pgtable.md, "Code layout").
 * Six values live across the call, one per callee-saved register, and the
 * loop is entered at the top: a short prologue, so that the loop starts
 * in the first 32 bytes after it and ends before the next boundary.
 */
static __attribute__((noinline)) PT_LOOP_ALIGN void
pt_add_pages(void (*add)(struct iopt_pgtable_gather *, uint64_t, uint64_t, void *),
	     struct iopt_pgtable_gather *g, uint64_t va, uint64_t end, uint64_t size,
	     void *cookie)
{
	do {
		add(g, va, size, cookie);
		va += size;
	} while (va != end);
}

/* Extend g (may be NULL) over n leaves of size bytes from va, n >= 1. */
PT_ALGO void pt_gather_add(struct iopt_pgtable_gather *g, uint64_t va, uint64_t n,
			   uint64_t size)
{
	if (g) {
		uint64_t last = va + (n * size - 1);

		if (va < g->start)
			g->start = va;
		if (last > g->last)
			g->last = last;
		if (!g->pgsize || size < g->pgsize)
			g->pgsize = size;
		g->sizes |= size;
	}
}

/* add_page for each of n removed or replaced leaves of size bytes from
 * va, which g already covers. */
PT_ALGO void pt_add_leaves(struct iopt_pgtable *pt, struct iopt_pgtable_gather *g,
			   uint64_t va, uint64_t n, uint64_t size)
{
	const struct iopt_pgtable_tlb_ops *tlb = pt->cfg.tlb;

	if (tlb && tlb->add_page) {
		void (*add)(struct iopt_pgtable_gather *, uint64_t, uint64_t, void *) =
			tlb->add_page;
		void *cookie = pt->cfg.tlb_cookie;

		if (n == 1)
			add(g, va, size, cookie);
		else if (n)
			pt_add_pages(add, g, va, va + n * size, size, cookie);
	}
}

/* n removed or replaced leaves of size bytes from va: one gather update
 * for all, one add_page each. */
PT_ALGO void pt_gather_range(struct iopt_pgtable *pt, struct iopt_pgtable_gather *g,
			     uint64_t va, uint64_t n, uint64_t size)
{
	pt_gather_add(g, va, n, size);
	pt_add_leaves(pt, g, va, n, size);
}

/*
 * Leaves and table entries in [va, va + size) were replaced; granule is the
 * level hint (above) or 0. Invalidates them and waits for completion.
 */
PT_COLD void pt_flush_walk_sync(struct iopt_pgtable *pt, uint64_t va,
				uint64_t size, uint64_t granule)
{
	if (pt->cfg.tlb && pt->cfg.tlb->flush_walk) {
		pt->cfg.tlb->flush_walk(va, size, granule, pt->cfg.tlb_cookie);
		pt_tlb_mark_pending(pt);
	}
	pt_tlb_sync(pt);
}

/*
 * Level hint for a table at depth d that is being unlinked: a last-level
 * table holds only last-level items (single or runs); a higher one may
 * hold leaves of several sizes, so there is no hint.
 */
PT_ALGO uint64_t pt_table_hint(const struct iopt_pgtable *pt, unsigned d)
{
	return pt_last(pt, d) ? 1ull << pt->shift[d] : 0;
}

/* ---- splits in flight (item 9) ---------------------------------------- */

/* Passes over the slots with a relax between them before a waiting
 * claim starts to sleep, and how long it sleeps between later passes. */
#define PT_SPLIT_SPINS 64
#define PT_SPLIT_NAP_NS 10000

/*
 * Claim a slot for the split of the block at base (depth d), before its
 * table is published. Waits while all PT_SPLIT_SLOTS are held: their
 * holders are between publication and report, a few steps that wait for
 * nothing but the driver's add_page. That call is the driver's and may
 * take long (a full command queue) or its thread may be descheduled, so
 * the wait spins PT_SPLIT_SPINS passes (plat_cpu_relax()) and then sleeps
 * PT_SPLIT_NAP_NS between passes (plat_sleep_ns(): the host gives the CPU
 * to the holders, the simulation charges the time and runs the other
 * CPUs). The caller is inside its RCU read section, where blocking is
 * allowed (platform.h); a waiter holds nothing that a holder waits for.
 * Returns the slot.
 */
PT_COLD unsigned pt_split_claim(struct iopt_pgtable *pt, uint64_t base,
				unsigned d)
{
	for (unsigned pass = 0;; pass++) {
		for (unsigned i = 0; i < PT_SPLIT_SLOTS; i++) {
			uint64_t empty = 0;

			/* Acquire: pairs with the release in pt_split_done()
			 * of the slot's last holder. Release (and the
			 * increment after it): pairs with the acquire loads
			 * of pt_splits_idle() and pt_split_report_slots(),
			 * through the publishing CAS that follows. */
			if (!plat_load_rlx64(&pt->split_slot[i]) &&
			    plat_cas_acq_rel64(&pt->split_slot[i], &empty,
					       base | (d + 1))) {
				plat_fetch_add_acq_rel64(&pt->split_live, 1);
				return i;
			}
		}
		if (pass < PT_SPLIT_SPINS)
			plat_cpu_relax();
		else
			plat_sleep_ns(PT_SPLIT_NAP_NS);
	}
}

/* The split in slot i was reported (add_page returned, pending marked). */
PT_COLD void pt_split_done(struct iopt_pgtable *pt, unsigned i)
{
	/* Release, both: the report happens before any thread that reads
	 * the free slot or the lower count (acquire) skips the block. */
	plat_store_rel64(&pt->split_slot[i], 0);
	plat_fetch_sub_rel64(&pt->split_live, 1);
}

/* Is no split in flight? Call after the acquire loads of a walk. */
PT_ALGO bool pt_splits_idle(struct iopt_pgtable *pt)
{
	/* Acquire: pairs with pt_split_done()'s release decrement, and the
	 * increment of every claim made before a table this thread
	 * followed. */
	return plat_likely(!plat_load_acq64(&pt->split_live));
}

/* Report (gather g, add_page) every block in flight that covers va;
 * returns whether there was one. */
PT_COLD bool pt_split_report_slots(struct iopt_pgtable *pt, uint64_t va,
				   struct iopt_pgtable_gather *g)
{
	bool any = false;

	for (unsigned i = 0; i < PT_SPLIT_SLOTS; i++) {
		/* Acquire: pairs with the release claim and free of the
		 * slot; a free slot (or another block's) means this block's
		 * report happened before. */
		uint64_t tag = plat_load_acq64(&pt->split_slot[i]);
		unsigned d = (unsigned)(tag & 0xf) - 1;
		uint64_t base = tag & ~0xfull;

		if (tag && va - base < 1ull << pt->shift[d]) {
			pt_gather_range(pt, g, base, 1, 1ull << pt->shift[d]);
			any = true;
		}
	}
	return any;
}

/* ---- splits, run breaks, unlinking ------------------------------------ */

/*
 * Replace the block *pte in tbl[idx] (depth d, va inside it) with one
 * table of items at depth d + 1 that map the whole block with its
 * attributes (item 3). The block itself was replaced: it is reported
 * (add_page with the block's size, gather g) so that the TLB drops an
 * entry that caches the whole block, and the invalidation is marked
 * pending. Between publication and that report the block is in flight
 * (item 9): unmaps that pass through the new table report it too. A
 * thread that loses the race reports the block as well: its own unmap
 * must not complete before the block's invalidation does. Returns 0
 * whether this thread or a racing one split it, -ENOMEM.
 */
PT_COLD int pt_split_block(const struct pt_fmt *F, struct iopt_pgtable *pt,
			   void *tbl, unsigned idx, uint64_t pte, unsigned d,
			   uint64_t va, struct iopt_pgtable_gather *g)
{
	unsigned lvl = pt_lvl(pt, d), size_lg2;
	uint64_t oa = F->leaf_oa(pt, pte, lvl, &size_lg2);
	unsigned n = 1u << pt->bits[d + 1];
	uint64_t step = 1ull << pt->shift[d + 1];
	uint64_t block = 1ull << pt->shift[d], base = va & ~(block - 1);
	uint64_t pa;
	unsigned slot;
	void *child = pt_table_alloc(pt, d + 1, &pa);

	if (!child)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		pt_store_rlx(F, child, i,
			     F->relevel_leaf(pt, pte, lvl, lvl + 1,
					     oa + i * step));
	pt_sync(pt, child, pt->table_bytes[d + 1]);
	slot = pt_split_claim(pt, base, d);
	if (pt_publish(F, pt, tbl, idx, &pte, child, pa, d))
		plat_fetch_add_acq_rel64(&pt->n_split, 1);
	/* pte is now the entry's value, ours or the winner's: the device
	 * must see it before the old block's invalidation is issued. */
	if (pt_kind_upper(F, pt, pte) == PT_TABLE)
		pt_sync_table_entry(F, pt, tbl, idx, pte);
	else
		pt_sync_entries(F, pt, tbl, idx, 1);
	pt_gather_range(pt, g, base, 1, block);
	pt_tlb_mark_pending(pt);
	pt_split_done(pt, slot);
	return 0;
}

/*
 * Break the run containing item idx of tbl (depth d) into single items
 * (item 4). va is any input address inside item idx. The run's items were
 * replaced: flush_walk over the whole run, naturally aligned, with the
 * items' size as the level hint, and waited for before the make step.
 */
PT_COLD void pt_break_run(const struct pt_fmt *F, struct iopt_pgtable *pt,
			  void *tbl, unsigned idx, unsigned d, uint64_t va)
{
	unsigned lvl = pt_lvl(pt, d);
	unsigned n = F->run_items(pt, lvl);
	unsigned base = idx & ~(n - 1);
	uint64_t item = 1ull << pt->shift[d];
	/* Runs are naturally aligned in the input address space. */
	uint64_t base_va = va & ~((uint64_t)n * item - 1);
	uint64_t old[128];

	plat_mutex_lock(&pt->split_lock);
	uint64_t pte = pt_load_acq(F, tbl, idx);

	if (pt_kind_of(F, pt, pte, d) != PT_LEAF || !F->is_run(pt, pte, lvl)) {
		/* Someone broke (or removed) it first; its invalidation
		 * completed before it released the lock. */
		plat_mutex_unlock(&pt->split_lock);
		return;
	}
	/* Break: exchange keeps any hardware dirty update to the items. */
	for (unsigned j = 0; j < n; j++)
		old[j] = pt_xchg(F, tbl, base + j, PT_BUSY_MARKER);
	pt_sync_entries(F, pt, tbl, base, n);
	pt_flush_walk_sync(pt, base_va, n * item, item);
	/* Make: single items with the run's attributes. */
	for (unsigned j = 0; j < n; j++) {
		uint64_t v = old[j];

		if (pt_kind_of(F, pt, v, d) == PT_LEAF && F->is_run(pt, v, lvl)) {
			unsigned size_lg2;
			uint64_t oa = F->leaf_oa(pt, v, lvl, &size_lg2);

			oa += ((uint64_t)j * item) & ((1ull << size_lg2) - 1);
			v = F->relevel_leaf(pt, v, lvl, lvl, oa);
		}
		/* Release: pairs with the acquire reload after pt_wait_busy(). */
		pt_store_rel(F, tbl, base + j, v);
	}
	pt_sync_entries(F, pt, tbl, base, n);
	plat_fetch_add_acq_rel64(&pt->n_run_break, 1);
	plat_mutex_unlock(&pt->split_lock);
}

/*
 * Unlink the table that entry tbl[idx] (depth d, covering va's item)
 * points to: the one mechanism for every path that drops a table (an
 * unmap of a larger size removes it with its contents, a map of a block
 * replaces an empty one). Break-before-make, in this order:
 *   1. compare-and-swap the entry from pte to empty (release);
 *   2. invalidate every thread's cached leaf tables (pt_unlinked());
 *   3. sync the entry, so that the device no longer sees the table;
 *   4. flush_walk over the entry's range and wait for it, so that no TLB
 *      or walk cache still holds the table or a leaf under it (3 before 4:
 *      a walk after the invalidation reads the empty entry);
 *   5. free the table and everything under it after a grace period.
 * A map then writes its leaf into the empty entry (make).
 * Returns 0, 1 if the entry no longer held pte (nothing done; reload), or
 * -ENOMEM (nothing done).
 */
PT_COLD int pt_unlink_table(const struct pt_fmt *F, struct iopt_pgtable *pt,
			    void *tbl, unsigned idx, uint64_t pte, unsigned d,
			    uint64_t va)
{
	struct pt_deferred *rec = pt_defer_prepare();
	uint64_t old = pte, span = 1ull << pt->shift[d];
	uint64_t cpa = F->table_pa(pt, pte, pt_lvl(pt, d));

	if (!rec)
		return -ENOMEM;
	/* Release: pairs with the acquire loads of walkers that read this
	 * entry (item 1). */
	if (!pt_cas(F, tbl, idx, &old, 0)) {
		pt_defer_cancel(rec);
		return 1;
	}
	pt_unlinked(pt);
	pt_sync_entries(F, pt, tbl, idx, 1);
	pt_flush_walk_sync(pt, va & ~(span - 1), span, pt_table_hint(pt, d + 1));
	pt_defer_free(pt, rec, pt_virt(pt, cpa), cpa, d + 1);
	return 0;
}

/* ---- unmap ------------------------------------------------------------ */

/* Leaves cleared in tbl[*from, idx) (the last gn of them from gva on):
 * sync the entries, then gather the leaves (item 6, then pt_gather_range). */
PT_ALGO void pt_retire(const struct pt_fmt *F, struct iopt_pgtable *pt,
		       void *tbl, unsigned *from, unsigned idx, uint64_t gva,
		       uint64_t *gn, uint64_t item, struct iopt_pgtable_gather *gather)
{
	pt_sync_cleared_entries(F, pt, tbl, *from, idx - *from);
	if (*gn)
		pt_gather_range(pt, gather, gva, *gn, item);
	*from = idx;
	*gn = 0;
}

/*
 * Item 2, fast path: clear the plain (non-run) leaves of the last-level
 * table tbl from idx up to end, stopping at anything else. Returns the
 * number cleared; the caller syncs and gathers them (pt_retire()).
 */
PT_ALGO uint64_t pt_clear_leaves(const struct pt_fmt *F, struct iopt_pgtable *pt,
				 void *tbl, unsigned idx, uint64_t end)
{
	unsigned i = idx;

	(void)pt;
	/* F->plain_*: kind() PT_LEAF and not is_run() in one compare, so
	 * that the loop is one branch out and one back. */
	for (; i < end; i++) {
		if ((pt_load_rlx(F, tbl, i) & F->plain_mask) != F->plain_val)
			break;
		pt_store_rlx(F, tbl, i, 0);
	}
	return i - idx;
}

/*
 * pt_clear_leaves() for the walk, where it clears up to a whole leaf
 * table per call: out of line and on a cache line of its own
 * (PT_LOOP_ALIGN), so that the loop is laid out compactly, in as few
 * fetch blocks as its code needs, wherever the walk lies.
 */
static __attribute__((noinline)) PT_LOOP_ALIGN uint64_t
pt_clear_leaves_loop(const struct pt_fmt *F, struct iopt_pgtable *pt,
		     void *tbl, unsigned idx, uint64_t end)
{
	return pt_clear_leaves(F, pt, tbl, idx, end);
}

/*
 * The leaf table of va, reached through table entries only: NULL where
 * the descent meets anything else (nothing mapped, a block, a run being
 * broken), which the full walk handles.
 */
PT_ALGO void *pt_leaf_table(const struct pt_fmt *F, struct iopt_pgtable *pt,
			    uint64_t va)
{
	void *tbl = pt->top;

	for (unsigned d = 0; !pt_last(pt, d); d++) {
		unsigned idx = pt_index(pt, va, d);
		/* Acquire: pairs with the release CAS in pt_publish(). */
		uint64_t pte = pt_load_acq(F, tbl, idx);

		if (pt_kind_upper(F, pt, pte) != PT_TABLE)
			return NULL;
		tbl = pt_follow(F, pt, tbl, idx, pte, d);
	}
	return tbl;
}

/*
 * Item 7, the common case: unmap count single last-level items through
 * this thread's cached leaf table or, on a miss, the leaf table that a
 * descent through tables alone reaches (then cached). The gather is
 * extended from the request before the leaves are loaded, so that
 * nothing a call does after its last miss waits for it, and the next
 * call's walk overlaps it (docs/pgtable.md, "Random unmap"). Returns the
 * number cleared; the caller walks for the rest (a split in flight, end
 * of table, or anything but a plain leaf).
 */
PT_ALGO size_t pt_unmap_cached(const struct pt_fmt *F, struct iopt_pgtable *pt,
			       uint64_t va, size_t count,
			       struct iopt_pgtable_gather *gather)
{
	const unsigned D = pt->levels - 1;
	uint64_t gen;
	void *tbl = pt_lc_lookup(pt, va, &gen);

	if (!tbl) {
		tbl = pt_leaf_table(F, pt, va);
		/* Item 9: the full walk reports a split in flight. */
		if (!tbl || !pt_splits_idle(pt))
			return 0;
		pt_lc_fill(pt, va, tbl, gen);
	}
	unsigned idx = pt_index(pt, va, D);
	uint64_t room = (uint64_t)pt->idx_mask[D] + 1 - idx;
	uint64_t want = count < room ? count : room;
	uint64_t item = 1ull << pt->shift[D];

	/* From the request, before the loads: if the clear stops early the
	 * gather covers the rest of this table's part (pgtable.h). */
	pt_gather_add(gather, va, want, item);
	uint64_t n = want == 1 ?
		pt_clear_leaves(F, pt, tbl, idx, idx + 1) :
		pt_clear_leaves_loop(F, pt, tbl, idx, idx + want);

	if (n) {
		pt_sync_cleared_entries(F, pt, tbl, idx, (unsigned)n);
		pt_add_leaves(pt, gather, va, n, item);
		pt_tlb_mark_pending(pt);
	}
	return (size_t)n;
}

PT_ALGO int64_t pt_unmap_algo(const struct pt_fmt *F, struct iopt_pgtable *pt,
			      uint64_t va, const struct pt_size *sz,
			      size_t count, struct iopt_pgtable_gather *gather)
{
	const unsigned D = sz->depth;
	const unsigned run_lg2 = sz->run_lg2;
	const uint64_t item = 1ull << pt->shift[D];
	const uint64_t entries = 1ull << pt->bits[D];
	uint64_t left = (uint64_t)count << run_lg2;	/* items to unmap */
	uint64_t unmapped = 0;
	bool cleared_leaf = false, nomem = false;

	while (left) {
		void *tbl = pt->top;
		unsigned d = 0, idx;
		uint64_t pte, gen = 0;
		enum pt_kind kind;
		void *leaf_tbl = pt_last(pt, D) ? pt_lc_lookup(pt, va, &gen) : NULL;

		if (leaf_tbl) {
			tbl = leaf_tbl;
			d = D;
		}
		/* Descend to depth D, splitting larger leaves on the way. */
		for (;;) {
			idx = pt_index(pt, va, d);
			pte = pt_load_acq(F, tbl, idx);
			kind = pt_kind_of(F, pt, pte, d);
			if (kind == PT_BUSY) {
				pt_wait_busy(pt);
				continue;
			}
			if (kind == PT_EMPTY || d == D)
				break;
			if (kind == PT_TABLE) {
				tbl = pt_follow(F, pt, tbl, idx, pte, d);
				d++;
				continue;
			}
			/* A leaf larger than the request: split it. */
			if (F->is_run(pt, pte, pt_lvl(pt, d))) {
				pt_break_run(F, pt, tbl, idx, d, va);
				continue;
			}
			if (pt_split_block(F, pt, tbl, idx, pte, d, va, gather)) {
				nomem = true;
				break;
			}
			cleared_leaf = true;	/* the block's add_page */
		}
		if (kind == PT_EMPTY || nomem)
			break;
		if (!leaf_tbl) {
			/* Item 9, after the walk's acquire loads. */
			if (!pt_splits_idle(pt)) {
				if (pt_split_report_slots(pt, va, gather))
					cleared_leaf = true;
			} else if (pt_last(pt, D)) {
				pt_lc_fill(pt, va, tbl, gen);
			}
		}

		/* Clear items [idx, end) of this table at depth D; entries
		 * [from, idx) are cleared but not yet synced, the last gn of
		 * them leaves from gva not yet gathered. */
		unsigned first = idx, from = idx;
		uint64_t end = idx + (left < entries - idx ? left : entries - idx);
		uint64_t gva = va, gn = 0;
		unsigned lvl = pt_lvl(pt, D);
		bool hole = false;

		if (pt_last(pt, D)) {
			uint64_t n = pt_clear_leaves_loop(F, pt, tbl, idx, end);

			if (n) {
				cleared_leaf = true;
				gn = n;
				unmapped += n * item;
				left -= n;
				va += n * item;
				idx += (unsigned)n;
			}
		}
		while (idx < end) {
			pte = pt_load_acq(F, tbl, idx);
			kind = pt_kind_of(F, pt, pte, D);
			if (kind == PT_EMPTY) {
				hole = true;
				break;
			}
			if (kind == PT_BUSY) {
				pt_wait_busy(pt);
				continue;
			}
			if (kind == PT_TABLE) {
				pt_retire(F, pt, tbl, &from, idx, gva, &gn, item,
					  gather);
				int r = pt_unlink_table(F, pt, tbl, idx, pte, D, va);

				if (r > 0)
					continue;
				if (r < 0) {
					nomem = true;
					break;
				}
				from = idx + 1;	/* synced by pt_unlink_table() */
			} else {
				if (F->is_run(pt, pte, lvl)) {
					unsigned n = F->run_items(pt, lvl);
					unsigned base = idx & ~(n - 1);

					if (base < first || base + n > end) {
						pt_retire(F, pt, tbl, &from, idx,
							  gva, &gn, item, gather);
						pt_break_run(F, pt, tbl, idx, D, va);
						continue;
					}
				}
				if (pt_last(pt, D)) {
					pt_store_rlx(F, tbl, idx, 0);
				} else {
					uint64_t old = pte;

					if (!pt_cas(F, tbl, idx, &old, 0))
						continue;
				}
				if (!gn)
					gva = va;
				gn++;
				cleared_leaf = true;
			}
			unmapped += item;
			left--;
			idx++;
			va += item;
		}
		pt_retire(F, pt, tbl, &from, idx, gva, &gn, item, gather);
		if (hole || nomem)
			break;
	}
	if (cleared_leaf)
		pt_tlb_mark_pending(pt);
	return (int64_t)unmapped;
}

/* ---- map -------------------------------------------------------------- */

/* Does the subtree under tbl (depth d) map nothing? */
static bool pt_subtree_empty(const struct pt_fmt *F, struct iopt_pgtable *pt,
			     void *tbl, unsigned d)
{
	for (unsigned i = 0, n = 1u << pt->bits[d]; i < n; i++) {
		uint64_t pte = pt_load_acq(F, tbl, i);

		switch (pt_kind_of(F, pt, pte, d)) {
		case PT_EMPTY:
			break;
		case PT_TABLE:
			if (!pt_subtree_empty(F, pt,
					      pt_virt(pt, F->table_pa(pt, pte,
								      pt_lvl(pt, d))),
					      d + 1))
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* Can a leaf be written into tbl[idx] above the last level: is it empty,
 * or a table that maps nothing (left behind by earlier unmaps)? */
PT_COLD bool pt_upper_free(const struct pt_fmt *F, struct iopt_pgtable *pt,
			   void *tbl, unsigned idx, unsigned d)
{
	uint64_t pte = pt_load_acq(F, tbl, idx);

	switch (pt_kind_of(F, pt, pte, d)) {
	case PT_EMPTY:
		return true;
	case PT_TABLE:
		return pt_subtree_empty(F, pt,
					pt_virt(pt, F->table_pa(pt, pte,
								pt_lvl(pt, d))),
					d + 1);
	default:
		return false;
	}
}

/*
 * Write leaf into tbl[idx] above the last level (va inside the item). The
 * entry must be empty, or hold a table that maps nothing: that table is
 * unlinked first (pt_unlink_table(), break-before-make), then the leaf is
 * written. Returns 0, -EEXIST or -ENOMEM.
 */
PT_COLD int pt_write_upper_leaf(const struct pt_fmt *F, struct iopt_pgtable *pt,
				void *tbl, unsigned idx, unsigned d,
				uint64_t leaf, uint64_t va)
{
	for (;;) {
		uint64_t old = 0;

		/* Release: pairs with walkers' acquire loads (item 2). */
		if (pt_cas(F, tbl, idx, &old, leaf))
			return 0;
		if (pt_kind_of(F, pt, old, d) != PT_TABLE)
			return -EEXIST;
		if (!pt_subtree_empty(F, pt,
				      pt_virt(pt, F->table_pa(pt, old, pt_lvl(pt, d))),
				      d + 1))
			return -EEXIST;
		int r = pt_unlink_table(F, pt, tbl, idx, old, d, va);

		if (r < 0)
			return r;
	}
}

/*
 * Number of empty items at the start of tbl[idx, idx + n) (last level):
 * eight at a time (one cache line of 64-bit entries) while all are empty.
 */
PT_ALGO unsigned pt_free_prefix(const struct pt_fmt *F, void *tbl,
				unsigned idx, unsigned n)
{
	void *base = pt_entry(F, tbl, idx);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t any = pt_load_rlx(F, base, (unsigned)i) |
			       pt_load_rlx(F, base, (unsigned)i + 1) |
			       pt_load_rlx(F, base, (unsigned)i + 2) |
			       pt_load_rlx(F, base, (unsigned)i + 3) |
			       pt_load_rlx(F, base, (unsigned)i + 4) |
			       pt_load_rlx(F, base, (unsigned)i + 5) |
			       pt_load_rlx(F, base, (unsigned)i + 6) |
			       pt_load_rlx(F, base, (unsigned)i + 7);

		if (any)
			break;
	}
	for (; i < n && !pt_load_rlx(F, base, (unsigned)i); i++)
		;
	return (unsigned)i;
}

/* Write k leaves from tbl[idx]: pte, pte + step, ... (pt_fmt.leaf_linear). */
PT_ALGO void pt_store_linear(const struct pt_fmt *F, void *tbl, unsigned idx,
			     unsigned k, uint64_t pte, uint64_t step)
{
	char *base = pt_entry(F, tbl, idx);
	const size_t sz = (size_t)1 << F->entry_lg2;
	size_t i = 0;

	/* Four a round: four independent stores, one add for the next. */
	for (; i + 4 <= k; i += 4, pte += 4 * step) {
		char *p = base + i * sz;

		pt_store_rlx(F, p, 0, pte);
		pt_store_rlx(F, p, 1, pte + step);
		pt_store_rlx(F, p, 2, pte + 2 * step);
		pt_store_rlx(F, p, 3, pte + 3 * step);
	}
	for (; i < k; i++, pte += step)
		pt_store_rlx(F, base + i * sz, 0, pte);
}

/*
 * Item 2, the tight loop for many last-level items: find how many are
 * free, then write them with one encoded leaf stepped by the item size
 * (pt_fmt.leaf_linear). Stopping at the first occupied item is what the
 * per-item loop of pt_write_leaves() does too. Out of line, so that the
 * single-page path keeps its short code; the call is paid once per run.
 */
static __attribute__((noinline)) PT_LOOP_ALIGN unsigned
pt_write_linear(const struct pt_fmt *F, struct iopt_pgtable *pt, void *tbl,
		unsigned idx, unsigned n, uint64_t *pa, unsigned lvl,
		uint64_t item, unsigned prot, bool run, int *ret)
{
	unsigned k = pt_free_prefix(F, tbl, idx, n);
	uint64_t pte = F->make_leaf(pt, *pa, lvl, prot, run);

	pt_store_linear(F, tbl, idx, k, pte, item);
	*pa += (uint64_t)k * item;
	if (k < n)
		*ret = -EEXIST;
	return k;
}

/*
 * Write n items of leaves from tbl[idx] (depth D) for *pa on, advancing
 * *pa past what was written. Returns the number written: n, or fewer when
 * an item was occupied (-EEXIST) or, above the last level, an empty table
 * could not be unlinked (*ret).
 */
PT_ALGO unsigned pt_write_leaves(const struct pt_fmt *F, struct iopt_pgtable *pt,
				 void *tbl, unsigned idx, unsigned n, unsigned D,
				 uint64_t *pa, uint64_t va, unsigned prot, bool run,
				 int *ret)
{
	const unsigned lvl = pt_lvl(pt, D);
	const uint64_t item = 1ull << pt->shift[D];
	unsigned i = 0;

	if (n >= 8 && pt_last(pt, D) && F->leaf_linear(pt, run))
		return pt_write_linear(F, pt, tbl, idx, n, pa, lvl, item, prot, run,
				       ret);
	if (pt_last(pt, D)) {
		/* Item 2: plain stores, nothing here can be a table. */
		uint64_t a = *pa;

		for (; i < n; i++, a += item) {
			if (pt_load_rlx(F, tbl, idx + i)) {
				*ret = -EEXIST;
				break;
			}
			pt_store_rlx(F, tbl, idx + i,
				     F->make_leaf(pt, a, lvl, prot, run));
		}
		*pa = a;
		return i;
	}
	for (; i < n; i++, *pa += item) {
		*ret = pt_write_upper_leaf(F, pt, tbl, idx + i, D,
					   F->make_leaf(pt, *pa, lvl, prot, run),
					   va + i * item);
		if (*ret)
			break;
	}
	return i;
}

/*
 * Is every item of tbl[idx, idx + n) (whole runs at depth D) free to map?
 * A run is checked whole before any of it is written: a walker may cache
 * a run as one TLB entry from any of its items, so writing part of a run
 * over a live mapping would let that mapping translate to this run's
 * addresses even if the call then fails.
 */
PT_COLD bool pt_run_free(const struct pt_fmt *F, struct iopt_pgtable *pt,
			 void *tbl, unsigned idx, unsigned n, unsigned D)
{
	for (unsigned i = idx; i < idx + n; i++)
		if (pt_last(pt, D) ? pt_load_rlx(F, tbl, i) != 0 :
				     !pt_upper_free(F, pt, tbl, i, D))
			return false;
	return true;
}

/*
 * A map failed: unmap the items it wrote, [va0, va0 + items * item) at
 * depth D, as an unmap would: each leaf's clear is synced, then
 * invalidated (add_page), and the invalidations are waited for before the
 * error returns.
 */
PT_COLD void pt_map_undo(const struct pt_fmt *F, struct iopt_pgtable *pt,
			 uint64_t va0, unsigned D, uint64_t items)
{
	struct iopt_pgtable_gather g;
	struct pt_size item_sz = { .lg2 = pt->shift[D], .depth = (uint8_t)D };

	iopt_pgtable_gather_init(&g);
	pt_unmap_algo(F, pt, va0, &item_sz, items, &g);
	pt_tlb_sync(pt);
}

/*
 * Item 7 for map, the common case: write count single last-level pages
 * for va on (pa on) into this thread's cached leaf table, up to its end.
 * Returns the number written: 0 on a cache miss, fewer than count at the
 * table's end (the caller walks for the rest) or at an occupied item
 * (*ret = -EEXIST; the caller undoes what was written).
 */
PT_ALGO size_t pt_map_cached(const struct pt_fmt *F, struct iopt_pgtable *pt,
			     uint64_t va, uint64_t pa, size_t count,
			     unsigned prot, int *ret)
{
	const unsigned D = pt->levels - 1;
	uint64_t gen;
	void *tbl = pt_lc_lookup(pt, va, &gen);

	if (!tbl)
		return 0;
	unsigned idx = pt_index(pt, va, D);
	uint64_t room = (uint64_t)pt->idx_mask[D] + 1 - idx;
	unsigned n = (unsigned)(count < room ? count : room);
	unsigned done = pt_write_leaves(F, pt, tbl, idx, n, D, &pa, va, prot,
					false, ret);

	pt_sync_entries(F, pt, tbl, idx, done);
	return done;
}

/* Map count pages of size sz for va on; on failure unmap [va0, va'),
 * where va' is how far this call got (va0 <= va: the caller's own part
 * already written from va0). */
PT_ALGO int pt_map_algo(const struct pt_fmt *F, struct iopt_pgtable *pt,
			uint64_t va, uint64_t pa, const struct pt_size *sz,
			size_t count, unsigned prot, uint64_t va0)
{
	const unsigned D = sz->depth;
	const unsigned run_lg2 = sz->run_lg2;
	const bool run = run_lg2 != 0;
	const uint64_t item = 1ull << pt->shift[D];
	const uint64_t entries = 1ull << pt->bits[D];
	uint64_t left = (uint64_t)count << run_lg2;	/* items to map */
	int ret = 0;

	while (left) {
		void *tbl = pt->top;
		unsigned idx;
		uint64_t pte, gen = 0;
		void *leaf_tbl = NULL;

		/* Single pages: the caller has just missed the cache
		 * (pt_map_cached()), and every later table of this call is
		 * a new one; only the generation is needed, to fill it. */
		if (pt_last(pt, D) && sz->one_leaf)
			gen = pt_lc_gen(pt);
		else if (pt_last(pt, D))
			leaf_tbl = pt_lc_lookup(pt, va, &gen);

		for (unsigned d = 0; d < D && !leaf_tbl; d++) {
			idx = pt_index(pt, va, d);
			/* Acquire: pairs with the release CAS in pt_publish(). */
			pte = pt_load_acq(F, tbl, idx);
			enum pt_kind kind = pt_kind_upper(F, pt, pte);

			if (kind == PT_EMPTY) {
				ret = pt_install_table(F, pt, tbl, idx, d, &pte);
				if (ret)
					goto undo;
				kind = pt_kind_upper(F, pt, pte);
			}
			if (kind != PT_TABLE) {
				ret = -EEXIST;
				goto undo;
			}
			tbl = pt_follow(F, pt, tbl, idx, pte, d);
		}
		if (leaf_tbl)
			tbl = leaf_tbl;
		else if (pt_last(pt, D) && pt_splits_idle(pt))
			pt_lc_fill(pt, va, tbl, gen);	/* item 9 */

		idx = pt_index(pt, va, D);
		uint64_t n = left < entries - idx ? left : entries - idx;

		if (plat_unlikely(run) &&
		    !pt_run_free(F, pt, tbl, idx, (unsigned)n, D)) {
			ret = -EEXIST;
			goto undo;
		}
		uint64_t done = pt_write_leaves(F, pt, tbl, idx, (unsigned)n, D,
						&pa, va, prot, run, &ret);

		pt_sync_entries(F, pt, tbl, idx, (unsigned)done);
		left -= done;
		va += done * item;
		if (plat_unlikely(done < n))
			goto undo;
	}
	return 0;

undo:
	/* All or nothing: unmap what this call wrote, [va0, va). */
	if (va != va0)
		pt_map_undo(F, pt, va0, D, (va - va0) >> pt->shift[D]);
	return ret;
}

/* ---- translation and walk --------------------------------------------- */

PT_ALGO int pt_iova_to_phys_algo(const struct pt_fmt *F,
				 struct iopt_pgtable *pt, uint64_t va,
				 uint64_t *pa)
{
	void *tbl = pt->top;

	for (unsigned d = 0; d < pt->levels; d++) {
		unsigned idx = pt_index(pt, va, d);
		uint64_t pte = pt_load_acq(F, tbl, idx);

		switch (pt_kind_of(F, pt, pte, d)) {
		case PT_TABLE:
			tbl = pt_virt(pt, F->table_pa(pt, pte, pt_lvl(pt, d)));
			break;
		case PT_LEAF: {
			unsigned size_lg2;
			uint64_t oa = F->leaf_oa(pt, pte, pt_lvl(pt, d), &size_lg2);

			*pa = oa + (va & ((1ull << size_lg2) - 1));
			return 0;
		}
		default:
			return -ENOENT;
		}
	}
	return -ENOENT;
}

PT_ALGO void pt_walk_algo(const struct pt_fmt *F, struct iopt_pgtable *pt,
			  uint64_t va, struct iopt_pgtable_walk *w)
{
	void *tbl = pt->top;
	uint64_t tpa = pt->top_pa;

	for (unsigned d = 0; d < pt->levels; d++) {
		unsigned idx = pt_index(pt, va, d), lvl = pt_lvl(pt, d);
		uint64_t pte = pt_load_acq(F, tbl, idx);
		struct iopt_pgtable_walk_level *wl = &w->level[w->nr_levels++];

		wl->level = lvl;
		wl->table_pa = tpa;
		wl->index = idx;
		wl->desc = pte;
		switch (pt_kind_of(F, pt, pte, d)) {
		case PT_TABLE:
			tpa = F->table_pa(pt, pte, lvl);
			tbl = pt_virt(pt, tpa);
			break;
		case PT_LEAF: {
			unsigned size_lg2;
			uint64_t oa = F->leaf_oa(pt, pte, lvl, &size_lg2);

			w->mapped = true;
			w->oa = oa + (va & ((1ull << size_lg2) - 1));
			w->leaf_size = 1ull << size_lg2;
			w->prot = F->leaf_prot(pt, pte, lvl);
			return;
		}
		default:
			return;
		}
	}
}

/*
 * Clean the writable-dirty leaf tbl[idx] (value pte): compare-and-swap to
 * the same descriptor with dirty_clean_bits set, never a plain OR, so that
 * an entry a concurrent unmap, split or run break has changed is left
 * alone. The hardware's own dirty and access-flag updates are atomic
 * read-modify-writes of the descriptor (Arm ARM D8.5, "Hardware updates to
 * the translation tables"); the release CAS here is ordered with them on
 * the entry. It fails only when the entry changed; a leaf still dirty is
 * cleaned on the retry. Returns whether this call cleaned it.
 */
PT_ALGO bool pt_dirty_clean(const struct pt_fmt *F, struct iopt_pgtable *pt,
			    void *tbl, unsigned idx, uint64_t pte, unsigned d)
{
	unsigned lvl = pt_lvl(pt, d);

	for (;;) {
		if (pt_kind_of(F, pt, pte, d) != PT_LEAF ||
		    !F->leaf_dirty(pt, pte, lvl))
			return false;
		if (pt_cas(F, tbl, idx, &pte, pte | F->dirty_clean_bits))
			return true;
	}
}

/*
 * Report and clean writable-dirty leaves in [va, va + size).
 *
 * A run (contiguous hint) is one unit: the hardware may have set the dirty
 * state of any one of its items for a write to another, because a TLB may
 * hold the run as one entry (Arm ARM D8.5.5, "Use of the Contiguous bit
 * with hardware updates to the translation tables": software combines the
 * dirty state of all items of the group). So if any item is dirty, the
 * whole run is recorded and every item of it cleaned.
 *
 * Cleaning must reach the TLB: an entry cached writable-dirty lets later writes
 * through without setting the bit again. Every cleaned item is synced to a
 * non-coherent walker and then reported like a removed leaf (the gather, and
 * add_page per item), and the table's invalidations are marked pending; the
 * caller's iopt_pgtable_tlb_sync() completes them. A write that completes after
 * that sync sets the dirty state again.
 */
PT_ALGO int pt_dirty_algo(const struct pt_fmt *F, struct iopt_pgtable *pt,
			  uint64_t va, uint64_t size, unsigned flags,
			  struct iopt_pgtable_gather *gather,
			  void (*record)(uint64_t, uint64_t, void *),
			  void *arg)
{
	uint64_t left = size;
	bool cleaned = false;

	if (!F->leaf_dirty || F->entry_lg2 != 3)
		return -EINVAL;
	while (left) {
		void *tbl = pt->top;
		unsigned d = 0;

		for (;;) {
			unsigned idx = pt_index(pt, va, d), lvl = pt_lvl(pt, d);
			uint64_t pte = pt_load_acq(F, tbl, idx);
			enum pt_kind kind = pt_kind_of(F, pt, pte, d);

			if (kind == PT_TABLE) {
				/* Synced first (item 6): the leaves cleaned
				 * below are invalidated for the device, whose
				 * next walk must reach them, not the block a
				 * split in flight replaced, still in its view
				 * while the entry is unsynced. */
				tbl = pt_follow(F, pt, tbl, idx, pte, d);
				d++;
				continue;
			}
			if (kind == PT_BUSY) {
				/* A run break keeps the items' dirty state:
				 * wait for it and read the items again. */
				pt_wait_busy(pt);
				continue;
			}
			uint64_t item = 1ull << pt->shift[d];
			unsigned n = 1, base = idx;

			if (kind == PT_LEAF && F->is_run(pt, pte, lvl)) {
				n = F->run_items(pt, lvl);
				base = idx & ~(n - 1);
			}
			uint64_t base_va = (va & ~(item - 1)) -
					   (uint64_t)(idx - base) * item;
			uint64_t skip = base_va + n * item - va;

			if (kind == PT_LEAF) {
				bool dirty = false;

				for (unsigned j = 0; j < n && !dirty; j++)
					dirty = F->leaf_dirty(pt, pt_load_acq(F, tbl,
									      base + j),
							      lvl);
				if (dirty && record)
					record(base_va, n * item, arg);
				if (dirty && !(flags & IOPT_PGTABLE_DIRTY_NO_CLEAR)) {
					for (unsigned j = 0; j < n; j++)
						pt_dirty_clean(F, pt, tbl, base + j,
							       pt_load_acq(F, tbl,
									   base + j),
							       d);
					/* Synced before the invalidations, as
					 * for unmap (item 6). */
					pt_sync_entries(F, pt, tbl, base, n);
					pt_gather_range(pt, gather, base_va, n,
							item);
					/* Item 9: a block split in flight may
					 * still be cached writable-dirty. */
					if (!pt_splits_idle(pt))
						pt_split_report_slots(pt, base_va,
								      gather);
					cleaned = true;
				}
			}
			if (skip > left)
				skip = left;
			va += skip;
			left -= skip;
			break;
		}
	}
	if (cleaned)
		pt_tlb_mark_pending(pt);
	return 0;
}

/* Free every table below tbl (depth d); no walker can reach them any more.
 * The caller frees tbl itself. */
static void pt_free_children(const struct pt_fmt *F, struct iopt_pgtable *pt,
			     void *tbl, unsigned d)
{
	if (pt_last(pt, d))
		return;
	for (unsigned i = 0, n = 1u << pt->bits[d]; i < n; i++) {
		uint64_t pte = pt_load_acq(F, tbl, i);

		if (pt_kind_of(F, pt, pte, d) == PT_TABLE) {
			uint64_t cpa = F->table_pa(pt, pte, pt_lvl(pt, d));
			void *child = pt_virt(pt, cpa);

			pt_free_children(F, pt, child, d + 1);
			pt_table_free_now(pt, child, cpa, d + 1);
		}
	}
}

#define PT_DEFINE_IMPL(name, fmtp)					\
	static __attribute__((flatten, noinline)) PT_LOOP_ALIGN int64_t	\
	name##_unmap_walk(							\
		struct iopt_pgtable *pt, uint64_t va,				\
		const struct pt_size *sz, size_t count,				\
		struct iopt_pgtable_gather *g)						\
	{									\
		return pt_unmap_algo(fmtp, pt, va, sz, count, g);		\
	}									\
	PT_ALGO int name##_map_body(struct iopt_pgtable *pt, uint64_t va,	\
				    uint64_t pa, uint64_t pgsize,		\
				    size_t count, unsigned prot,		\
				    uint64_t *mapped)				\
	{									\
		const struct pt_size *sz;					\
		uint64_t bytes;							\
		int ret;							\
										\
		if (mapped)							\
			*mapped = 0;						\
		ret = pt_map_args(pt, va, pa, pgsize, count, prot, &sz,		\
				  &bytes);					\
		if (ret)							\
			return ret;						\
		size_t done = 0;						\
										\
		plat_rcu_read_lock();						\
		if (sz->one_leaf)						\
			done = pt_map_cached(fmtp, pt, va, pa, count, prot,	\
					     &ret);				\
		if (plat_unlikely(ret)) {					\
			if (done)						\
				pt_map_undo(fmtp, pt, va, sz->depth, done);	\
		} else if (done < count)					\
			ret = pt_map_algo(fmtp, pt, va + done * pgsize,		\
					  pa + done * pgsize, sz, count - done,	\
					  prot, va);				\
		plat_rcu_read_unlock();						\
		if (!ret && mapped)						\
			*mapped = bytes;					\
		return ret;							\
	}									\
	PT_ALGO int64_t name##_unmap_body(struct iopt_pgtable *pt, uint64_t va,	\
					  uint64_t pgsize, size_t count,	\
					  struct iopt_pgtable_gather *g)		\
	{									\
		const struct pt_size *sz;					\
		int64_t ret = pt_unmap_args(pt, va, pgsize, count, &sz);	\
		size_t done = 0;						\
										\
		if (ret)							\
			return ret;						\
		plat_rcu_read_lock();						\
		if (sz->one_leaf)						\
			done = pt_unmap_cached(fmtp, pt, va, count, g);		\
		ret = (int64_t)(done * pgsize);					\
		if (done < count)						\
			ret += name##_unmap_walk(pt, va + done * pgsize, sz,	\
						 count - done, g);		\
		plat_rcu_read_unlock();						\
		return ret;							\
	}									\
	/* Serialised mode: the same, inside the table's lock. */		\
	static __attribute__((flatten, noinline, cold)) int			\
	name##_map_serialised(struct iopt_pgtable *pt, uint64_t va,		\
			      uint64_t pa, uint64_t pgsize, size_t count,	\
			      unsigned prot, uint64_t *mapped)			\
	{									\
		plat_lock(&pt->lock);						\
		int ret = name##_map_body(pt, va, pa, pgsize, count, prot,	\
					  mapped);				\
		plat_unlock(&pt->lock);						\
		return ret;							\
	}									\
	static __attribute__((flatten, noinline, cold)) int64_t		\
	name##_unmap_serialised(struct iopt_pgtable *pt, uint64_t va,		\
				uint64_t pgsize, size_t count,			\
				struct iopt_pgtable_gather *g)				\
	{									\
		plat_lock(&pt->lock);						\
		int64_t ret = name##_unmap_body(pt, va, pgsize, count, g);	\
		plat_unlock(&pt->lock);						\
		return ret;							\
	}									\
	static __attribute__((flatten)) int name##_map_pages(			\
		struct iopt_pgtable *pt, uint64_t va, uint64_t pa,		\
		uint64_t pgsize, size_t count, unsigned prot,			\
		uint64_t *mapped)						\
	{									\
		if (__builtin_expect(pt->cfg.serialised, 0))			\
			return name##_map_serialised(pt, va, pa, pgsize, count,	\
						     prot, mapped);		\
		return name##_map_body(pt, va, pa, pgsize, count, prot,		\
				       mapped);					\
	}									\
	static __attribute__((flatten)) int64_t name##_unmap_pages(		\
		struct iopt_pgtable *pt, uint64_t va, uint64_t pgsize,		\
		size_t count, struct iopt_pgtable_gather *g)				\
	{									\
		if (__builtin_expect(pt->cfg.serialised, 0))			\
			return name##_unmap_serialised(pt, va, pgsize, count,	\
						       g);			\
		return name##_unmap_body(pt, va, pgsize, count, g);		\
	}									\
	static __attribute__((flatten)) int name##_iova_to_phys(		\
		struct iopt_pgtable *pt, uint64_t va, uint64_t *pa)		\
	{									\
		return pt_iova_to_phys_algo(fmtp, pt, va, pa);			\
	}									\
	static void name##_walk(struct iopt_pgtable *pt, uint64_t va,		\
				struct iopt_pgtable_walk *w)				\
	{									\
		pt_walk_algo(fmtp, pt, va, w);					\
	}									\
	static int name##_dirty(struct iopt_pgtable *pt, uint64_t va,		\
				uint64_t size, unsigned flags,			\
				struct iopt_pgtable_gather *g,				\
				void (*rec)(uint64_t, uint64_t, void *),	\
				void *arg)					\
	{									\
		return pt_dirty_algo(fmtp, pt, va, size, flags, g, rec, arg);	\
	}									\
	static void name##_free_subtree(struct iopt_pgtable *pt, void *t,	\
					unsigned d)				\
	{									\
		pt_free_children(fmtp, pt, t, d);				\
	}									\
	static const struct pt_impl name##_impl = {					\
		.map_pages = name##_map_pages,					\
		.unmap_pages = name##_unmap_pages,				\
		.iova_to_phys = name##_iova_to_phys,				\
		.walk = name##_walk,						\
		.dirty = name##_dirty,						\
		.free_subtree = name##_free_subtree,				\
	}

#endif /* IOPT_PT_ALGO_H */
