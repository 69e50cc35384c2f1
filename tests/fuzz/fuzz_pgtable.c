/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: arbitrary bytes choose a page-table configuration
 * (any format, granule, sizes and quirks, valid or not; coherent or
 * non-coherent walks; serialised or not) and then a run of operations with
 * arbitrary arguments, some of them with an allocation failure injected.
 *
 * Oracles (every violation aborts):
 *  - a shadow of the mappings (tests/tutil.c: what every address should
 *    translate to, and with which permissions); after every operation the
 *    addresses it touched, both ends and the middle of every mapping and the
 *    addresses next to them translate as the shadow says through
 *    iopt_pgtable_iova_to_phys(), through the reference walker over the CPU's
 *    view of table memory, and (non-coherent walks) over the device's view,
 *    which changes only when the library syncs it;
 *  - error codes: a valid map succeeds, or fails with -EEXIST exactly when
 *    the shadow overlaps it, or -ENOMEM when an allocation failed; an
 *    invalid one is -EINVAL/-ERANGE; a failed map changes nothing; an
 *    unmap that stops early stops at a hole the shadow has (or for
 *    memory);
 *  - TLB callbacks: when add_page or flush_walk is called, the device view of
 *    the range being invalidated already equals the CPU view (so a walk cannot
 *    refill the TLB from a stale entry afterwards); add_page during an unmap
 *    names pages no longer mapped; no mapping outside the operation's range
 *    stops translating, even for an instant, outside the range being flushed
 *    (break-before-make covers the whole run); after an unmap and
 *    iopt_pgtable_tlb_sync() every page the shadow says was removed was covered
 *    by an invalidation reported since (checked by iova and size only), and the
 *    sync op ran after the last invalidation;
 *  - dirty tracking (coherent HD tables): pages the target dirties as an
 *    SMMU would (clearing AP[2] of writable-clean leaves) are all reported;
 *    every report overlaps a leaf that was dirtied; cleaned leaves were
 *    invalidated.
 * Also: no crash, no sanitizer report, no leak (table memory all returned).
 *
 * Input (big-endian fields, zeros past the end): configuration bytes fmt
 * (value % 6; bit 0 of value / 6: non-coherent), granule (index % 5;
 * bit 0 of index / 5: serialised), ias, oas, quirks, bitmap flag (+ 8
 * bytes); then per operation: kind (value % 6; value / 6 = e: when
 * e % 8 == 7, allocation (e / 8) % 4 + 1 from now fails), page-size
 * selector, iova (8), pa (8), count (2), prot, aligned flag.
 *
 * Built with -DIOPT_FUZZ=ON (clang). Every build also compiles it with a
 * small driver (fuzz_replay.c) that replays the committed corpus under
 * ctest, so the corpus is a regression test everywhere.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/pgtable.h>

#include "../tutil.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                            \
	do {                                                                \
		if (!(c)) {                                                 \
			fprintf(stderr, "fuzz_pgtable:%d: %s\n", __LINE__, #c); \
			abort();                                            \
		}                                                           \
	} while (0)

/* IOPT_FUZZ_TRACE=1 in the environment: print every operation and
 * callback (to turn a finding into a reproducer). */
static int trace = -1;

#define TRACE(...)                                                          \
	do {                                                                \
		if (trace < 0)                                              \
			trace = getenv("IOPT_FUZZ_TRACE") != NULL;          \
		if (trace)                                                  \
			fprintf(stderr, __VA_ARGS__);                       \
	} while (0)

#define MEM_BASE 0x80000000ull
#define MEM_BYTES (32u << 20)
#define MAX_INV 4096
#define MAX_DIRTY 256

/* Stage 1 descriptor bits (Arm ARM D8.3, D8.5): AP[2] read-only, DBM. */
#define AP2_RDONLY (1ull << 7)
#define DBM (1ull << 51)

enum op_kind { OP_NONE, OP_MAP, OP_UNMAP, OP_DIRTY };

/* A dirtied leaf: page is where the write went (UINT64_MAX: no longer
 * known), [lo, hi] the leaf it dirtied. */
struct dirt {
	uint64_t page, lo, hi;
};

struct fz {
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info info;
	struct iopt_pgtable_cfg cfg;
	struct tmem mem;
	bool oom;		/* an allocation failed (injected or full) */
	struct shadow sh;	/* the state before the current operation */
	uint64_t va_first, va_last;	/* input range */
	uint64_t gran;		/* smallest page size */
	/* The operation in progress. */
	enum op_kind op;
	uint64_t op_lo, op_hi;	/* its range, inclusive */
	/* Invalidations reported since the operation began (inclusive
	 * ranges, adjacent ones merged); inv_all: flush_all was called. */
	uint64_t inv_lo[MAX_INV], inv_hi[MAX_INV];
	unsigned n_inv;
	bool inv_all, inv_overflow;
	bool inv_since_sync;	/* an invalidation after the last sync op */
	unsigned add_pages;
	unsigned long callbacks;	/* add_page + flush_walk this op */
	/* Dirty tracking. */
	struct dirt dirt[MAX_DIRTY];
	unsigned n_dirt;
	bool dirt_lost;		/* too many: soundness no longer checked */
	uint64_t rep_lo[64], rep_hi[64];
	unsigned n_rep;
	bool rep_overflow;
};

static bool in_range(const struct fz *f, uint64_t va)
{
	return va >= f->va_first && va <= f->va_last;
}

/* ---- walks ------------------------------------------------------------ */

struct view {
	bool mapped;
	uint64_t oa;
	unsigned prot;
	uint64_t size;		/* leaf size (walk_view only) */
};

static struct view walk_view(struct fz *f, uint64_t va, bool dev)
{
	struct ref_walk w;
	struct view v = { 0 };

	ref_walk(&f->info, f->cfg.quirks, dev ? tmem_dev_p2v : tmem_host_p2v,
		 &f->mem, va, &w);
	if (w.mapped) {
		v.mapped = true;
		v.oa = w.oa;
		v.prot = w.prot;
		v.size = w.size;
	}
	return v;
}

static bool view_eq(struct view a, struct view b)
{
	return a.mapped == b.mapped &&
	       (!a.mapped || (a.oa == b.oa && a.prot == b.prot));
}

/* What the shadow says va translates to. */
static struct view shadow_view(const struct fz *f, uint64_t va)
{
	const struct smap *m = shadow_find(&f->sh, va);
	struct view v = { 0 };

	if (m) {
		v.mapped = true;
		v.oa = m->pa + (va - m->va);
		v.prot = tu_expect_prot(f->cfg.fmt, f->cfg.quirks, m->prot);
	}
	return v;
}

/* After an operation: va translates as the shadow says, every way. */
static void check_va(struct fz *f, uint64_t va)
{
	struct view want = shadow_view(f, va);
	uint64_t pa = 0;
	int r;

	if (!in_range(f, va))
		return;
	r = iopt_pgtable_iova_to_phys(f->pt, va, &pa);
	CHECK(want.mapped ? r == 0 && pa == want.oa : r == -ENOENT);
	CHECK(view_eq(walk_view(f, va, false), want));
	if (!f->cfg.coherent_walk)
		CHECK(view_eq(walk_view(f, va, true), want));
}

/* Ends, middle and neighbours of every mapping of the shadow (full) or of
 * those that touch [lo - 1, hi + 1], and samples of [lo, hi]. */
static void check_all(struct fz *f, uint64_t lo, uint64_t hi, bool full)
{
	for (size_t i = 0; i < f->sh.n; i++) {
		const struct smap *m = &f->sh.m[i];
		uint64_t last = m->va + (m->size - 1);

		if (!full && (lo > hi || (last != UINT64_MAX && last + 1 < lo) ||
			      (hi != UINT64_MAX && m->va > hi + 1)))
			continue;

		check_va(f, m->va);
		check_va(f, last);
		check_va(f, m->va + m->size / 2);
		if (m->va)
			check_va(f, m->va - 1);
		if (last != UINT64_MAX)
			check_va(f, last + 1);
	}
	if (lo > hi)
		return;
	uint64_t step = (hi - lo) / 16 + 1;

	for (uint64_t k = 0; k <= 16; k++) {
		uint64_t va = lo + k * step;

		if (va < lo || va > hi)
			break;
		check_va(f, va);
	}
	check_va(f, hi);
}

/* ---- TLB callbacks ---------------------------------------------------- */

static void inv_record(struct fz *f, uint64_t lo, uint64_t hi)
{
	f->inv_since_sync = true;
	if (f->n_inv && lo <= f->inv_hi[f->n_inv - 1] + 1 &&
	    lo >= f->inv_lo[f->n_inv - 1] && f->inv_hi[f->n_inv - 1] != UINT64_MAX) {
		if (hi > f->inv_hi[f->n_inv - 1])
			f->inv_hi[f->n_inv - 1] = hi;
		return;
	}
	if (f->n_inv == MAX_INV) {
		f->inv_overflow = true;
		return;
	}
	f->inv_lo[f->n_inv] = lo;
	f->inv_hi[f->n_inv] = hi;
	f->n_inv++;
}

/* Is [lo, hi] inside the union of the invalidations recorded? */
static bool inv_covers(const struct fz *f, uint64_t lo, uint64_t hi)
{
	if (f->inv_all || f->inv_overflow)
		return true;
	for (;;) {
		bool moved = false;

		for (unsigned i = 0; i < f->n_inv; i++)
			if (f->inv_lo[i] <= lo && f->inv_hi[i] >= lo) {
				if (f->inv_hi[i] >= hi)
					return true;
				lo = f->inv_hi[i] + 1;
				moved = true;
			}
		if (!moved)
			return false;
	}
}

/*
 * Invalidation of [lo, hi] is being issued: the device view there must
 * already be what the CPU wrote (probed at both ends and the middle), and
 * mappings just outside it that the operation does not touch must still
 * translate (whatever a break-before-make takes down must be flushed).
 */
static void check_inv_range(struct fz *f, uint64_t lo, uint64_t hi)
{
	uint64_t probes[3] = { lo, hi, lo + (hi - lo) / 2 };

	/* A call can make a million callbacks (a huge map undone): check
	 * the first 256 and then one in 1024. */
	if (f->callbacks++ >= 256 && f->callbacks % 1024)
		return;

	for (int i = 0; i < 3; i++) {
		uint64_t va = probes[i];

		if (!in_range(f, va))
			continue;
		if (!f->cfg.coherent_walk)
			CHECK(view_eq(walk_view(f, va, true),
				      walk_view(f, va, false)));
	}
	uint64_t out[2] = { lo - f->gran, hi + 1 };
	bool have[2] = { lo >= f->gran, hi != UINT64_MAX };

	for (int i = 0; i < 2; i++) {
		uint64_t va = out[i] & ~(f->gran - 1);

		if (!have[i] || !in_range(f, va))
			continue;
		if (f->op != OP_NONE && va >= f->op_lo && va <= f->op_hi)
			continue;
		struct view want = shadow_view(f, va);

		if (want.mapped)
			CHECK(view_eq(walk_view(f, va, false), want));
	}
}

static void cb_flush_all(void *cookie)
{
	struct fz *f = cookie;

	f->inv_all = true;
	f->inv_since_sync = false;	/* flush_all waits */
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	struct fz *f = cookie;

	(void)granule;
	TRACE("  flush_walk %#llx size %#llx granule %#llx\n",
	      (unsigned long long)iova, (unsigned long long)size,
	      (unsigned long long)granule);
	CHECK(size != 0 && iova + (size - 1) >= iova);
	check_inv_range(f, iova, iova + (size - 1));
	inv_record(f, iova, iova + (size - 1));
}

static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t granule,
			void *cookie)
{
	struct fz *f = cookie;
	uint64_t hi = iova + (granule - 1);

	(void)g;
	TRACE("  add_page %#llx granule %#llx\n", (unsigned long long)iova,
	      (unsigned long long)granule);
	CHECK(granule != 0 && hi >= iova);
	f->add_pages++;
	check_inv_range(f, iova, hi);
	/* An unmap's add_page names a leaf it removed, or a block it split
	 * (pgtable.h: the split reports the block's size): the CPU view no
	 * longer maps iova with a leaf that large. Cleaning dirty state
	 * leaves leaves mapped, clean. */
	if (f->op == OP_UNMAP && in_range(f, iova) &&
	    (f->callbacks <= 256 || f->callbacks % 1024 == 1)) {
		struct view v = walk_view(f, iova, false);

		CHECK(!v.mapped || v.size < granule);
	}
	inv_record(f, iova, hi);
}

static void cb_sync(void *cookie)
{
	((struct fz *)cookie)->inv_since_sync = false;
}

static const struct iopt_pgtable_tlb_ops fz_tlb = {
	cb_flush_all, cb_flush_walk, cb_add_page, cb_sync,
};

/* Table memory: tmem (tests/tutil.c: a device view that changes only on
 * sync), noting every failed allocation. */
static void *fz_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct fz *f = ctx;
	void *p = tmem_ops.alloc(size, pa, &f->mem);

	if (!p)
		f->oom = true;
	return p;
}

static void fz_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	tmem_ops.free(va, pa, size, &((struct fz *)ctx)->mem);
}

static void *fz_p2v(uint64_t pa, void *ctx)
{
	return tmem_host_p2v(pa, &((struct fz *)ctx)->mem);
}

static void fz_sync(void *va, size_t size, void *ctx)
{
	tmem_ops.sync(va, size, &((struct fz *)ctx)->mem);
}

static const struct iopt_pgtable_mem_ops fz_mem = { fz_alloc, fz_free, fz_p2v, fz_sync };

/* ---- helpers ---------------------------------------------------------- */

static void op_begin(struct fz *f, enum op_kind k, uint64_t lo, uint64_t hi)
{
	f->op = k;
	f->op_lo = lo;
	f->op_hi = hi;
	f->n_inv = 0;
	f->inv_all = false;
	f->inv_overflow = false;
	f->add_pages = 0;
	f->callbacks = 0;
	f->oom = false;
}

/* After iopt_pgtable_tlb_sync(): every invalidation was followed by a sync. */
static void sync_done(struct fz *f)
{
	CHECK(!f->inv_since_sync);
}

/* Size of the table items a page size is made of (a run's item). */
static uint64_t item_of(const struct fz *f, uint64_t pgsize)
{
	unsigned lg = (unsigned)__builtin_ctzll(pgsize), best = 0;

	if (f->cfg.fmt == IOPT_ARM_V7S)
		return lg >= 20 ? 1ull << 20 : 1ull << 12;
	unsigned g = (unsigned)__builtin_ctz(f->info.granule);

	for (unsigned l = 0; l <= 3; l++) {
		unsigned s = g + (3 - l) * (g - 3);

		if (s <= lg && s > best)
			best = s;
	}
	return 1ull << best;
}


/* Does every valid-argument check of map/unmap pass? */
static bool args_ok(const struct fz *f, uint64_t iova, uint64_t pa,
		    uint64_t pgsize, size_t count, unsigned prot, bool map,
		    uint64_t *len)
{
	if (!pgsize || (pgsize & (pgsize - 1)) ||
	    !(f->info.pgsize_bitmap & pgsize) || !count || (iova & (pgsize - 1)))
		return false;
	if (__builtin_mul_overflow(pgsize, (uint64_t)count, len))
		return false;
	uint64_t last = iova + (*len - 1);

	if (last < iova || !in_range(f, iova) || !in_range(f, last))
		return false;
	if (!map)
		return true;
	uint64_t oa_last = f->cfg.oas >= 64 ? UINT64_MAX :
					      (1ull << f->cfg.oas) - 1;

	return !(pa & (pgsize - 1)) && (prot & (IOPT_READ | IOPT_WRITE)) &&
	       !(prot & ~IOPT_PROT_MASK) && pa <= oa_last &&
	       pa + (*len - 1) >= pa && pa + (*len - 1) <= oa_last;
}

/* ---- dirty tracking --------------------------------------------------- */

static void dirt_add(struct fz *f, uint64_t page, uint64_t lo, uint64_t hi)
{
	if (f->n_dirt == MAX_DIRTY) {
		f->dirt_lost = true;
		return;
	}
	f->dirt[f->n_dirt++] = (struct dirt){ page, lo, hi };
}

/* [lo, hi] no longer dirty (cleaned or unmapped). */
static void dirt_remove(struct fz *f, uint64_t lo, uint64_t hi)
{
	unsigned n = f->n_dirt;

	for (unsigned i = 0; i < n; i++) {
		struct dirt d = f->dirt[i];

		if (d.hi < lo || d.lo > hi)
			continue;
		if (d.page != UINT64_MAX && d.page >= lo && d.page <= hi)
			d.page = UINT64_MAX;
		f->dirt[i].lo = 1;
		f->dirt[i].hi = 0;	/* empty */
		if (d.lo < lo)
			dirt_add(f, d.page < lo ? d.page : UINT64_MAX, d.lo,
				 lo - 1);
		if (d.hi > hi)
			dirt_add(f, d.page > hi && d.page != UINT64_MAX ?
					    d.page : UINT64_MAX,
				 hi + 1, d.hi);
	}
	unsigned k = 0;

	for (unsigned i = 0; i < f->n_dirt; i++)
		if (f->dirt[i].lo <= f->dirt[i].hi)
			f->dirt[k++] = f->dirt[i];
	f->n_dirt = k;
}

/* Set the dirty state of the leaf mapping va, as an SMMU with HTTU does
 * on a write: AP[2] cleared, atomically, in a writable-clean leaf. */
static void hw_write(struct fz *f, uint64_t va)
{
	struct iopt_pgtable_walk w;
	struct ref_walk rw;

	if (!in_range(f, va) || iopt_pgtable_walk(f->pt, va, &w) || !w.mapped)
		return;
	ref_walk(&f->info, f->cfg.quirks, tmem_host_p2v, &f->mem, va, &rw);
	CHECK(rw.mapped);
	/* The walk only locates the descriptor; its bits are read raw. */
	const struct iopt_pgtable_walk_level *l = &w.level[w.nr_levels - 1];
	uint64_t *d = tmem_host_p2v(l->table_pa + 8ull * l->index, &f->mem);
	uint64_t v = __atomic_load_n(d, __ATOMIC_ACQUIRE);

	if (!(v & DBM) || !(v & AP2_RDONLY))
		return;
	if (__atomic_compare_exchange_n(d, &v, v & ~AP2_RDONLY, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		dirt_add(f, va, va & ~(rw.size - 1),
			 (va & ~(rw.size - 1)) + (rw.size - 1));
}

static void rec(uint64_t va, uint64_t size, void *arg)
{
	struct fz *f = arg;

	CHECK(size && !(size & (size - 1)) && !(va & (size - 1)));
	if (f->n_rep == 64) {
		f->rep_overflow = true;
		return;
	}
	f->rep_lo[f->n_rep] = va;
	f->rep_hi[f->n_rep] = va + (size - 1);
	f->n_rep++;
}

static bool reported(const struct fz *f, uint64_t va)
{
	for (unsigned i = 0; i < f->n_rep; i++)
		if (va >= f->rep_lo[i] && va <= f->rep_hi[i])
			return true;
	return false;
}

static void op_dirty(struct fz *f, uint64_t iova, uint64_t pa, uint64_t len,
		     unsigned flags)
{
	bool hd = f->cfg.quirks & IOPT_PGTABLE_QUIRK_HD;
	struct iopt_pgtable_gather g;

	/* Writes by the device to up to four pages of the range. */
	if (hd && f->cfg.coherent_walk && len && len / f->gran)
		for (unsigned k = 0; k < 4; k++) {
			uint64_t n = len / f->gran;
			uint64_t off = ((pa >> (16 * k)) & 0xffff) % n;

			if (pa >> (16 * k) & 1)
				hw_write(f, iova + off * f->gran);
		}
	iopt_pgtable_gather_init(&g);
	f->n_rep = 0;
	f->rep_overflow = false;
	op_begin(f, OP_DIRTY, iova, len ? iova + (len - 1) : iova);
	TRACE("dirty %#llx len %#llx flags %#x\n", (unsigned long long)iova,
	      (unsigned long long)len, flags);
	int r = iopt_pgtable_read_and_clear_dirty(f->pt, iova, len, flags, &g, rec, f);
	TRACE("  = %d, %u reports\n", r, f->n_rep);

	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r) {
		CHECK(f->n_rep == 0 && f->add_pages == 0 && f->n_inv == 0);
		f->op = OP_NONE;
		return;
	}
	CHECK(hd && len);
	if (flags & IOPT_PGTABLE_DIRTY_NO_CLEAR)
		CHECK(f->add_pages == 0 && f->n_inv == 0);
	iopt_pgtable_tlb_sync(f->pt);
	sync_done(f);
	/* Complete: every page dirtied in the range is reported. */
	if (!f->rep_overflow)
		for (unsigned i = 0; i < f->n_dirt; i++) {
			uint64_t p = f->dirt[i].page;

			if (p != UINT64_MAX && p >= iova && p - iova < len)
				CHECK(reported(f, p));
		}
	/* Sound: every report overlaps a dirtied leaf; cleaned ones were
	 * invalidated and are clean now. */
	for (unsigned i = 0; i < f->n_rep; i++) {
		bool hit = f->dirt_lost;

		for (unsigned k = 0; k < f->n_dirt && !hit; k++)
			hit = !(f->dirt[k].hi < f->rep_lo[i] ||
				f->dirt[k].lo > f->rep_hi[i]);
		CHECK(hit);
		CHECK(f->rep_hi[i] >= f->rep_lo[i]);
		if (!(flags & IOPT_PGTABLE_DIRTY_NO_CLEAR)) {
			CHECK(g.start <= f->rep_lo[i] && g.last >= f->rep_hi[i]);
			CHECK(inv_covers(f, f->rep_lo[i], f->rep_hi[i]));
		}
	}
	if (!(flags & IOPT_PGTABLE_DIRTY_NO_CLEAR))
		for (unsigned i = 0; i < f->n_rep; i++)
			dirt_remove(f, f->rep_lo[i], f->rep_hi[i]);
	f->op = OP_NONE;
	check_all(f, iova, len ? iova + (len - 1) : iova, false);
}

/* ---- map and unmap ---------------------------------------------------- */

static void op_map(struct fz *f, uint64_t iova, uint64_t pa, uint64_t pgsize,
		   size_t count, unsigned prot)
{
	uint64_t len = 0, mapped = 1;
	bool ok = args_ok(f, iova, pa, pgsize, count, prot, true, &len);
	bool overlap = ok && shadow_overlaps(&f->sh, iova, len);

	op_begin(f, OP_MAP, iova, ok ? iova + (len - 1) : iova);
	TRACE("map %#llx -> %#llx pgsize %#llx count %zu prot %#x\n",
	      (unsigned long long)iova, (unsigned long long)pa,
	      (unsigned long long)pgsize, count, prot);
	int r = iopt_pgtable_map_pages(f->pt, iova, pa, pgsize, count, prot, &mapped);
	TRACE("  = %d\n", r);
	bool failed = f->oom;

	CHECK(r ? mapped == 0 : mapped == len);
	if (!ok) {
		CHECK(r == -EINVAL || r == -ERANGE);
	} else {
		CHECK(r == 0 || r == -EEXIST || r == -ENOMEM);
		if (r == 0)
			CHECK(!overlap);
		if (r == -EEXIST)
			CHECK(overlap);
		if (r == -ENOMEM)
			CHECK(failed);
		if (!overlap && !failed)
			CHECK(r == 0);
	}
	if (r)
		iopt_pgtable_tlb_sync(f->pt);	/* a failed map's undo */
	else
		shadow_add(&f->sh, iova, len, pa, prot);
	if (r)
		sync_done(f);
	f->op = OP_NONE;
	if (ok)
		check_all(f, iova, iova + (len - 1), false);
}

static void op_unmap(struct fz *f, uint64_t iova, uint64_t pgsize,
		     size_t count)
{
	uint64_t len = 0;
	bool ok = args_ok(f, iova, 0, pgsize, count, IOPT_READ, false, &len);
	struct iopt_pgtable_gather g;

	iopt_pgtable_gather_init(&g);
	op_begin(f, OP_UNMAP, iova, ok ? iova + (len - 1) : iova);
	TRACE("unmap %#llx pgsize %#llx count %zu\n", (unsigned long long)iova,
	      (unsigned long long)pgsize, count);
	int64_t u = iopt_pgtable_unmap_pages(f->pt, iova, pgsize, count, &g);
	TRACE("  = %lld\n", (long long)u);
	bool failed = f->oom;

	if (!ok) {
		CHECK(u == -EINVAL || u == -ERANGE);
		CHECK(f->n_inv == 0);
		f->op = OP_NONE;
		return;
	}
	uint64_t item = item_of(f, pgsize);

	CHECK(u >= 0 && (uint64_t)u <= len && (uint64_t)u % item == 0);
	/* Stopped early: at a hole (nothing mapped in the next item), or
	 * for memory. */
	if ((uint64_t)u < len && !failed)
		CHECK(!shadow_overlaps(&f->sh, iova + (uint64_t)u, item));
	iopt_pgtable_tlb_sync(f->pt);
	sync_done(f);
	if (u > 0) {
		uint64_t lo = iova, hi = iova + ((uint64_t)u - 1);

		/* Every removed page was covered by an invalidation. */
		for (size_t i = 0; i < f->sh.n; i++) {
			const struct smap *m = &f->sh.m[i];
			uint64_t a = m->va > lo ? m->va : lo;
			uint64_t mlast = m->va + (m->size - 1);
			uint64_t b = mlast < hi ? mlast : hi;

			if (a <= b)
				CHECK(inv_covers(f, a, b));
		}
		shadow_remove(&f->sh, iova, (uint64_t)u);
		dirt_remove(f, lo, hi);
	}
	f->op = OP_NONE;
	check_all(f, iova, iova + (len - 1), false);
}

/* ---- the target ------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	static const uint32_t granules[] = { 0, 4096, 16384, 65536, 8192 };
	unsigned b0 = (unsigned)take(&in, 1), b1 = (unsigned)take(&in, 1);
	struct fz *f = calloc(1, sizeof(*f));

	CHECK(f);
	f->cfg = (struct iopt_pgtable_cfg){
		.fmt = (enum iopt_pgtable_fmt)(b0 % (IOPT_PGTABLE_FMT_COUNT + 1)),
		.granule = granules[b1 % 5],
		.ias = (unsigned)(take(&in, 1) % 64),
		.oas = (unsigned)(take(&in, 1) % 64),
		.quirks = (uint32_t)take(&in, 1),
		.coherent_walk = !((b0 / (IOPT_PGTABLE_FMT_COUNT + 1)) & 1),
		.serialised = (b1 / 5) & 1,
		.pgsize_bitmap = take(&in, 1) & 1 ? take(&in, 8) : 0,
		.tlb = &fz_tlb,
		.tlb_cookie = f,
		.mem = &fz_mem,
		.mem_ctx = f,
	};
	tmem_init(&f->mem, MEM_BASE, MEM_BYTES);
	int r = iopt_pgtable_alloc(&f->cfg, &f->pt);

	TRACE("alloc %s granule %u ias %u oas %u quirks %#x coherent %d "
	      "serialised %d bitmap %#llx = %d\n", iopt_pgtable_fmt_name(f->cfg.fmt),
	      f->cfg.granule, f->cfg.ias, f->cfg.oas, f->cfg.quirks,
	      f->cfg.coherent_walk, f->cfg.serialised,
	      (unsigned long long)f->cfg.pgsize_bitmap, r);

	if (r) {
		CHECK(r == -EINVAL || r == -ENOMEM);
		CHECK(f->mem.live == 0);
		goto out;
	}
	iopt_pgtable_get_info(f->pt, &f->info);
	shadow_init(&f->sh);
	if (f->cfg.quirks & IOPT_PGTABLE_QUIRK_TTBR1) {
		f->va_first = ~0ull << f->cfg.ias;
		f->va_last = UINT64_MAX;
	} else {
		f->va_first = 0;
		f->va_last = (1ull << f->cfg.ias) - 1;
	}
	f->gran = f->info.pgsize_bitmap & -f->info.pgsize_bitmap;

	for (int op = 0; op < 64 && in.n; op++) {
		unsigned kb = (unsigned)take(&in, 1);
		unsigned kind = kb % 6, e = kb / 6;
		/* Page sizes mostly from the bitmap, sometimes anything. */
		unsigned b = (unsigned)take(&in, 1);
		uint64_t pgsize = b & 0x80 ? 1ull << (b % 64) : 0;

		if (!pgsize) {
			uint64_t bm = f->info.pgsize_bitmap;
			unsigned k = b % (unsigned)__builtin_popcountll(bm);

			while (k--)
				bm &= bm - 1;
			pgsize = bm & -bm;
		}
		uint64_t iova = take(&in, 8), pa = take(&in, 8);
		size_t count = (size_t)take(&in, 2);
		unsigned prot = (unsigned)take(&in, 1);

		if (take(&in, 1) & 1) {		/* mostly aligned, in range */
			iova = (iova & ((1ull << (f->cfg.ias < 64 ? f->cfg.ias : 63)) - 1)) &
			       ~(pgsize - 1);
			if (f->cfg.quirks & IOPT_PGTABLE_QUIRK_TTBR1)
				iova |= f->va_first;
			pa = (pa & ((1ull << (f->cfg.oas < 64 ? f->cfg.oas : 63)) - 1)) &
			     ~(pgsize - 1);
			count = count % 8 + 1;
		}
		if (e % 8 == 7) {
			f->mem.fail_at = (long)((e / 8) % 4 + 1);
			TRACE("fail allocation %ld from now\n", f->mem.fail_at);
		}
		switch (kind) {
		case 0:
		case 1:
			op_map(f, iova, pa, pgsize, count, prot);
			break;
		case 2:
			op_unmap(f, iova, pgsize, count);
			break;
		case 3: {
			uint64_t got;

			r = iopt_pgtable_iova_to_phys(f->pt, iova, &got);
			if (!in_range(f, iova)) {
				CHECK(r == -ERANGE);
			} else {
				struct view want = shadow_view(f, iova);

				CHECK(want.mapped ? r == 0 && got == want.oa :
						    r == -ENOENT);
			}
			break;
		}
		case 4: {
			struct iopt_pgtable_walk w;

			r = iopt_pgtable_walk(f->pt, iova, &w);
			CHECK(r == 0 || r == -ERANGE);
			CHECK(w.nr_levels <= 4);
			if (!r) {
				struct view want = shadow_view(f, iova);

				CHECK(w.mapped == want.mapped);
				CHECK(!w.mapped || w.oa == want.oa);
			}
			break;
		}
		default: {
			uint64_t len;

			if (__builtin_mul_overflow(pgsize, (uint64_t)count, &len))
				len = UINT64_MAX;
			op_dirty(f, iova, pa, len, prot & 3);
			break;
		}
		}
		f->mem.fail_at = 0;
		/* Every 8 operations, and at the end: the whole shadow. */
		if (op % 8 == 7)
			check_all(f, 1, 0, true);
	}
	check_all(f, 1, 0, true);
	iopt_pgtable_free(f->pt);
	CHECK(f->mem.live == 0);
	shadow_free(&f->sh);
out:
	tmem_destroy(&f->mem);
	free(f);
	return 0;
}
