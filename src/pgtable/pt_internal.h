/* SPDX-License-Identifier: MIT */
/*
 * Page-table internals shared by the generic algorithm (pt_algo.h), the
 * format files (lpae.c, v7s.c) and the common entry points (pt_api.c).
 *
 * Three layers, as in the glossary (docs/glossary.md):
 *  - format:    how one descriptor is encoded (struct pt_fmt, per format);
 *  - geometry:  levels, index bits, page sizes (struct iopt_pgtable);
 *  - algorithm: map, unmap, walk, written once in pt_algo.h and compiled
 *               per format so that every format primitive inlines.
 *
 * Naming: "depth" counts levels from the top table (0); "level" is the
 * architectural level number (LPAE 0-3, v7s 1-2): level = start + depth.
 * An "item" is one descriptor slot; a "run" is a naturally aligned group
 * of identical-attribute items mapped as one page size (LPAE contiguous
 * hint, v7s large pages and supersections). Values ending in _lg2 are
 * log2 of the quantity.
 */
#ifndef IOPT_PT_INTERNAL_H
#define IOPT_PT_INTERNAL_H

#include <iopgtable/pgtable.h>

#include <iopgtable/physmem.h>

#include "../platform/platform.h"
#include "../platform/plat_lock.h"

#define PT_MAX_DEPTH 4
#define PT_MAX_SIZES 16
/* Splits that may be between publication and report at once; one more
 * waits for a slot (pt_split_claim()). */
#define PT_SPLIT_SLOTS 7

/*
 * The value written into every item of a run while it is being broken
 * (break-before-make). It is an invalid descriptor in every format (bits
 * 1:0 = 0b00), so walkers fault on it; software that finds it waits for
 * the split lock and reads the item again.
 */
#define PT_BUSY_MARKER 0x5a5a5a58u

enum pt_kind {
	PT_EMPTY,	/* invalid: nothing mapped */
	PT_TABLE,	/* points to the next level */
	PT_LEAF,	/* block, page, or item of a run */
	PT_BUSY,	/* PT_BUSY_MARKER: a run is being broken */
};

/* One page size the table accepts. */
struct pt_size {
	uint8_t lg2;		/* page size */
	uint8_t depth;		/* depth of the items that map it */
	uint8_t run_lg2;	/* items per page (0: one item) */
	bool one_leaf;		/* one last-level item: the cached fast path */
};

struct iopt_pgtable;

/*
 * Format primitives. Each takes the table (for its geometry and quirks) and
 * the architectural level of the descriptor. Pure functions of their
 * arguments: no memory access.
 */
struct pt_fmt {
	unsigned entry_lg2;	/* 3: 64-bit descriptors, 2: 32-bit */
	uint64_t sync_bit;	/* software "table entry synced" bit, or 0 */
	/* last: the descriptor is at the last level (no tables there). */
	enum pt_kind (*kind)(const struct iopt_pgtable *pt, uint64_t pte,
			     bool last);
	/* The leaf is an item of a run (contiguous hint, large page, ...). */
	bool (*is_run)(const struct iopt_pgtable *pt, uint64_t pte,
		       unsigned lvl);
	/* A last-level descriptor is a plain leaf (kind() PT_LEAF and not
	 * is_run()) exactly when (pte & plain_mask) == plain_val: one test
	 * for the unmap's per-page loop (pt_clear_leaves()). */
	uint64_t plain_mask, plain_val;
	uint64_t (*table_pa)(const struct iopt_pgtable *pt, uint64_t pte,
			     unsigned lvl);
	uint64_t (*make_table)(const struct iopt_pgtable *pt, uint64_t pa,
			       unsigned lvl);
	/* Leaf for the item whose output address is item_pa. */
	uint64_t (*make_leaf)(const struct iopt_pgtable *pt, uint64_t item_pa,
			      unsigned lvl, unsigned prot, bool run);
	/* make_leaf() at the last level is linear in item_pa for this
	 * table: the leaf for item_pa + k * item equals the leaf for item_pa
	 * plus k * item, as an integer, for every k whose address the table
	 * accepts (the output-address field holds the address unshifted and
	 * nothing else depends on it), so a run of leaves is written by
	 * adding the item size. */
	bool (*leaf_linear)(const struct iopt_pgtable *pt, bool run);
	/* The same attributes as leaf pte at from_lvl, as a single (non-run)
	 * item at to_lvl with output address item_pa. */
	uint64_t (*relevel_leaf)(const struct iopt_pgtable *pt, uint64_t pte,
				 unsigned from_lvl, unsigned to_lvl,
				 uint64_t item_pa);
	/* Output address of the leaf's mapping and its size (an item, or the
	 * whole run where the descriptor holds the run's base). */
	uint64_t (*leaf_oa)(const struct iopt_pgtable *pt, uint64_t pte,
			    unsigned lvl, unsigned *size_lg2);
	unsigned (*leaf_prot)(const struct iopt_pgtable *pt, uint64_t pte,
			      unsigned lvl);
	/* Items in a run at lvl (1 if runs are impossible there). */
	unsigned (*run_items)(const struct iopt_pgtable *pt, unsigned lvl);
	/* Hardware dirty tracking (formats without it: never called). */
	bool (*leaf_dirty)(const struct iopt_pgtable *pt, uint64_t pte,
			   unsigned lvl);
	uint64_t dirty_clean_bits;	/* OR these to make a leaf clean */
};

/* Per-format compiled algorithm (see pt_algo.h). */
struct pt_impl {
	/* The public map and unmap, argument checks and section included
	 * (pt_entry.h), compiled with the format's algorithm. */
	int (*map_pages)(struct iopt_pgtable *pt, uint64_t iova,
			 uint64_t paddr, uint64_t pgsize, size_t pgcount,
			 unsigned prot, uint64_t *mapped);
	int64_t (*unmap_pages)(struct iopt_pgtable *pt, uint64_t iova,
			       uint64_t pgsize, size_t pgcount,
			       struct iopt_pgtable_gather *gather);
	int (*iova_to_phys)(struct iopt_pgtable *pt, uint64_t va,
			    uint64_t *pa);
	void (*walk)(struct iopt_pgtable *pt, uint64_t va,
		     struct iopt_pgtable_walk *w);
	int (*dirty)(struct iopt_pgtable *pt, uint64_t va, uint64_t size,
		     unsigned flags, struct iopt_pgtable_gather *gather,
		     void (*record)(uint64_t, uint64_t, void *), void *arg);
	/* Free every table below table (at depth), not table itself. */
	void (*free_subtree)(struct iopt_pgtable *pt, void *table,
			     unsigned depth);
};

struct iopt_pgtable {
	const struct pt_impl *impl;
	struct iopt_pgtable_cfg cfg;
	struct iopt_pgtable_info info;

	/* Geometry, by depth. */
	unsigned levels;
	unsigned start_level;
	uint8_t shift[PT_MAX_DEPTH];	/* item size lg2 */
	uint8_t bits[PT_MAX_DEPTH];	/* index bits */
	uint32_t idx_mask[PT_MAX_DEPTH];	/* (1 << bits) - 1 */
	size_t table_bytes[PT_MAX_DEPTH];
	struct pt_size sizes[PT_MAX_SIZES];
	unsigned nr_sizes;

	/* Address ranges. */
	uint64_t va_first;		/* lowest valid input address */
	uint64_t va_last;		/* highest valid input address */
	uint64_t oa_last;		/* highest valid output address */

	/* Format data set by the format's setup. */
	uint64_t prot_bits[IOPT_PROT_MASK + 1];	/* leaf attributes by prot */
	uint64_t table_attr_base;	/* bits every table entry carries */
	uint64_t addr_mask;		/* LPAE: output address field */
	bool oa52;			/* LPAE: OA[51:48] in bits 15:12 */
	uint8_t size_idx[64];		/* page size lg2 -> sizes[] + 1 */

	void *top;
	uint64_t top_pa;
	bool identity;			/* default allocator: pa == va */
	struct iopt_physmem *own_mem;	/* default v7s table memory */
	struct pt_pool *own_pool;	/* default LPAE table memory */

	struct plat_lock lock;		/* serialised mode only */
	struct plat_mutex split_lock;	/* breaking runs only */

	uint64_t id;			/* unique per table ever created */
	unsigned leaf_tag_shift;	/* va bits above one leaf table */
	uint64_t unlink_gen;		/* bumped when any table is unlinked */

	/*
	 * Written often: each group on cache lines of its own, away from the
	 * read-mostly fields above (unlink_gen is read by every map). A
	 * 64-CPU simulation (docs/sim.md) named the counters' line, which
	 * shared unlink_gen, as the most contended one.
	 */
	/* Splits between publication and report (pt_algo.h item 9):
	 * split_live counts the slots in use; a slot holds the block's base
	 * va | (depth + 1), 0 when free. Read by every unmap that walks,
	 * written by splits only. */
	_Alignas(64) uint64_t split_live;
	uint64_t split_slot[PT_SPLIT_SLOTS];

	/* TLB sync state (see pt_tlb_sync()): bit 0 = invalidations pending,
	 * bits 63:1 = syncs begun; sync_done = highest completed sync. */
	_Alignas(64) uint64_t sync_state;
	uint64_t sync_done;

	/* Counters, updated atomically. */
	_Alignas(64) uint64_t deferred;	/* RCU frees not yet run */
	uint64_t n_alloc;
	uint64_t n_free;
	uint64_t n_split;
	uint64_t n_run_break;
};

/* ---- table memory (pt_mem.c) ----------------------------------------- */

void *pt_table_alloc(struct iopt_pgtable *pt, unsigned depth, uint64_t *pa);
/* Free a table no walker can have seen (never published). */
void pt_table_free_now(struct iopt_pgtable *pt, void *va, uint64_t pa,
		       unsigned depth);
/*
 * Free an unlinked table and everything under it after an RCU grace
 * period. rec comes from pt_defer_prepare() (allocated before unlinking,
 * so that unlinking never fails for memory).
 */
struct pt_deferred;
struct pt_deferred *pt_defer_prepare(void);
void pt_defer_cancel(struct pt_deferred *rec);
void pt_defer_free(struct iopt_pgtable *pt, struct pt_deferred *rec,
		   void *va, uint64_t pa, unsigned depth);

static inline void *pt_virt(const struct iopt_pgtable *pt, uint64_t pa)
{
	if (plat_likely(pt->identity))
		return (void *)(uintptr_t)pa;
	return pt->cfg.mem->phys_to_virt(pa, pt->cfg.mem_ctx);
}

/* Make [p, p + bytes) visible to a non-coherent walker. */
static inline void pt_sync(const struct iopt_pgtable *pt, void *p,
			   size_t bytes)
{
	if (!pt->cfg.coherent_walk && bytes)
		pt->cfg.mem->sync(p, bytes, pt->cfg.mem_ctx);
}

/* Quirks every format takes (the formats' checks allow them). */
#define PT_QUIRKS_ANY_FMT	IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH

/* pt_sync_cleared() for a non-coherent walker (pt_mem.c). */
void pt_sync_cleared_nc(const struct iopt_pgtable *pt, void *p, size_t bytes);

/*
 * Make [p, p + bytes), leaf entries that an unmap cleared, visible to a
 * non-coherent walker: one sync, or one per entry (its format's
 * descriptor size) with IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH. A coherent
 * walk pays one test; the rest is out of line, so that the unmap path
 * inlines no more than that.
 */
static inline void pt_sync_cleared(const struct iopt_pgtable *pt, void *p,
				   size_t bytes)
{
	if (!pt->cfg.coherent_walk)
		pt_sync_cleared_nc(pt, p, bytes);
}

/* ---- TLB maintenance (pt_api.c) -------------------------------------- */

/* Record that invalidations were issued; pairs with pt_tlb_sync(). */
static inline void pt_tlb_mark_pending(struct iopt_pgtable *pt)
{
	if (!pt->cfg.tlb || !pt->cfg.tlb->sync)
		return;
	/* Release: the invalidations issued before this OR are ordered
	 * before the sync of whichever thread's CAS in pt_tlb_sync() clears
	 * the bit. */
	plat_fetch_or_rel64(&pt->sync_state, 1);
}

void pt_tlb_sync(struct iopt_pgtable *pt);

/* ---- format setup ----------------------------------------------------- */

/* Check cfg, set geometry, sizes and impl; then, once the top table
 * exists, the register values. */
int pt_lpae_setup(struct iopt_pgtable *pt);
void pt_lpae_regs(struct iopt_pgtable *pt);
int pt_v7s_setup(struct iopt_pgtable *pt);
void pt_v7s_regs(struct iopt_pgtable *pt);

extern const struct iopt_pgtable_mem_ops pt_default_mem;
/* The default allocator's per-table pool (its ctx), pt_mem.c. */
struct pt_pool;
struct pt_pool *pt_pool_create(void);
void pt_pool_destroy(struct pt_pool *pool);

#endif /* IOPT_PT_INTERNAL_H */
