/* SPDX-License-Identifier: MIT */
/*
 * The page tables' TLB-maintenance contract, end to end, through the
 * SMMUv3 model, under concurrency; meant to run clean under ThreadSanitizer.
 *
 * Several mapping threads map and unmap, each in its own part of one stage
 * 1 table (non-overlapping requests, so the contract is exact): 4K pages,
 * 2M blocks, 64K contiguous runs and 32M runs of 2M blocks; they split
 * blocks and break runs with 4K unmaps, remove tables with block-sized
 * unmaps, and make maps that must fail (-EEXIST) over live pages, page by
 * page and as a contiguous run. The table's TLB callbacks drive the
 * model's command queue as a driver on an SMMU with IDR3.RIL would
 * (IHI0070 4.4.1.1): add_page is one range TLBI_NH_VA (Leaf=1) over the
 * leaf with TG = 4K and TTL = the level of a leaf of that granule;
 * flush_walk one range TLBI_NH_VA (Leaf=0) over the range, TTL from the
 * granule, none when it is 0; sync a CMD_SYNC, waited for. The model's TLB
 * caches whole blocks and runs and honours TG/TTL, so a callback that
 * understates what was replaced leaves a stale entry behind.
 *
 * Every mapping has a generation g encoded in its output address:
 * OA = g << 30 | (IA & (2^30 - 1)). Each 4K page has a state word its owner
 * writes (one store per transition): the generation mapped for sure, a
 * generation in transition (being mapped, being unmapped and not yet
 * synced, or written by a map that is failing), whether a fault is
 * allowed, and a transition count. Device threads translate concurrently,
 * mostly in the range a mapping thread is working on, and check each
 * result against the states of the page before and after the translation
 * (more than one transition in between: not checked, counted): an output
 * address with a wrong offset, a generation that was neither mapped nor in
 * transition (an older one whose unmap and sync had completed, or one of a
 * map that failed and returned), a fault where the page was mapped for
 * sure, or any other fault, is an error. After each unmap and its sync the
 * owner itself translates the unmapped page and asserts a fault; before it
 * unmaps it translates a page of the mapping, so that the TLB holds it.
 * IOPT_STRESS_OPS scales the work (default 5000 operations per thread, 250
 * under ThreadSanitizer, 1000 under AddressSanitizer).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tthread.h"
#include "tutil.h"

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)
#define CMDQ	(MEM_BASE + 0x010000)	/* 256 commands */
#define EVTQ	(MEM_BASE + 0x020000)
#define CDTAB	(MEM_BASE + 0x030000)
#define ASID	3

#define SZ_4K	0x1000ull
#define SZ_64K	0x10000ull
#define SZ_2M	0x200000ull
#define SZ_32M	0x2000000ull
#define SZ_1G	0x40000000ull

/* Operations per mapping thread; ThreadSanitizer with debug-yield runs
 * this about 50 times slower, AddressSanitizer about 10 times. */
#if defined(__SANITIZE_THREAD__)
#define OPS_DEFAULT 250
#elif defined(__SANITIZE_ADDRESS__)
#define OPS_DEFAULT 1000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPS_DEFAULT 250
#elif __has_feature(address_sanitizer)
#define OPS_DEFAULT 1000
#endif
#endif
#ifndef OPS_DEFAULT
#define OPS_DEFAULT 5000
#endif

#define MAPPERS	3
#define DEVICES	2
#define VA0	SZ_1G			/* mapper t owns [VA0 + t*256M, +256M) */
#define REGION	0x10000000ull
#define NSLOT	16			/* 2M slots after the 32M run slot */
#define PAGES	(MAPPERS * REGION / SZ_4K)
#define OA_SHIFT 30
#define GEN_MAX	((1u << 18) - 1)	/* OA below 2^48 */

/* Page state word: live [17:0], pending [35:18], fault_ok [36], count
 * [63:37]. */
#define ST_LIVE(w)	((uint32_t)((w) & 0x3ffff))
#define ST_PEND(w)	((uint32_t)(((w) >> 18) & 0x3ffff))
#define ST_FOK(w)	(((w) >> 36) & 1)
#define ST_COUNT(w)	((w) >> 37)

struct bad_rec {
	const char *who;
	uint64_t va, oa, w1, w2;
	unsigned fault;
};

struct shared {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_pgtable *pt;
	struct plat_mutex lock;		/* the model and its command queue */
	uint64_t now;			/* model time, under lock */
	uint32_t prod;			/* command queue, under lock */
	uint32_t gen;			/* atomic: last generation handed out */
	uint64_t *state;		/* atomic words, one per page */
	/* atomic: where each mapper works, page number << 32 | pages */
	uint64_t hot[MAPPERS];
	int stop;			/* atomic */
	uint64_t order;			/* atomic: see full_barrier() */
	unsigned long ok, faults, unchecked, bad, contract;	/* atomic */
	unsigned long failed_calls;	/* atomic: see call_failed() */
	struct bad_rec first_bad;	/* under lock */
};

static struct shared sh;

/*
 * Checks made on the mapping and device threads: cmocka's asserts may
 * only fail on the test's own thread, so these count (and print the first
 * failure) and the test asserts the count at the end.
 */
static void call_failed(const char *what, long long got, long long want,
			int line)
{
	if (__atomic_fetch_add(&sh.failed_calls, 1, __ATOMIC_RELAXED) == 0)
		print_error("line %d: %s = %lld, expected %lld\n", line, what,
			    got, want);
}

#define CHK_EQ(a, b)                                                        \
	do {                                                                \
		long long got_ = (long long)(a), want_ = (long long)(b);    \
		if (got_ != want_)                                          \
			call_failed(#a, got_, want_, __LINE__);             \
	} while (0)

/* ---- the model, as a driver drives it --------------------------------- */

static uint64_t advance(uint64_t cycles)
{
	sh.now += cycles;
	return sh.now;
}

/* Publish PROD and run the model until it has consumed every command.
 * Called with sh.lock held. */
static void q_drain(void)
{
	uint64_t cons;

	CHK_EQ(iopt_smmuv3_mmio_write(sh.s, 0x98, 4, sh.prod, advance(10)), 0);
	for (int i = 0;; i++) {
		uint64_t c = advance(1000);

		iopt_smmuv3_run_until(sh.s, c);
		CHK_EQ(iopt_smmuv3_mmio_read(sh.s, 0x9c, 4, &cons, c), 0);
		if ((cons & 0x1ff) == sh.prod)
			break;
		if (i == 100000) {	/* the queue stopped (CERROR) */
			CHK_EQ(cons & 0x1ff, sh.prod);
			break;
		}
	}
}

/* Queue one command (sh.lock held); drain when the queue is half full. */
static void q_cmd(const struct iopt_smmuv3_cmd *c)
{
	uint64_t w[2];

	CHK_EQ(iopt_smmuv3_cmd_encode(c, w), 0);
	memcpy(iopt_physmem_ptr(sh.pm, CMDQ + (sh.prod & 255) * 16ull, 16), w, 16);
	sh.prod = (sh.prod + 1) & 511;
	if ((sh.prod & 127) == 0)
		q_drain();
}

/* TTL for a leaf of granule bytes with the 4K translation granule
 * (IHI0070 4.4.1.1: 1, 2, 3 = leaves at level 1, 2, 3), 0 for none. */
static unsigned ttl_of(uint64_t granule)
{
	switch (granule) {
	case SZ_1G: return 1;
	case SZ_2M: return 2;
	case SZ_4K: return 3;
	default: return 0;
	}
}

/* One range TLBI_NH_VA: TG = 4K, [iova, iova + size) with size a power of
 * two of at least 4K (NUM = 0, SCALE = log2(size / 4K)). */
static void tlbi_range(uint64_t iova, uint64_t size, unsigned ttl, bool leaf)
{
	if (size < SZ_4K || (size & (size - 1)) || (iova & (size - 1)) ||
	    (!ttl && size == SZ_4K)) {
		/* Outside the contract, or the reserved encoding TG != 0 with
		 * NUM = SCALE = TTL = 0: count it and invalidate all. */
		__atomic_add_fetch(&sh.contract, 1, __ATOMIC_RELAXED);
		q_cmd(&(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID,
					       .asid = ASID });
		return;
	}
	q_cmd(&(struct iopt_smmuv3_cmd){
		.opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = ASID, .addr = iova,
		.leaf = leaf, .tg = 1, .ttl = ttl, .num = 0,
		.scale = (unsigned)__builtin_ctzll(size) - 12 });
}

static void cb_sync(void *cookie)
{
	(void)cookie;
	plat_mutex_lock(&sh.lock);
	q_cmd(&(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC });
	q_drain();
	plat_mutex_unlock(&sh.lock);
}

static void cb_flush_all(void *cookie)
{
	plat_mutex_lock(&sh.lock);
	q_cmd(&(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID,
				       .asid = ASID });
	plat_mutex_unlock(&sh.lock);
	cb_sync(cookie);
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	(void)cookie;
	/* granule: the leaves' size (level hint) or 0 (none). */
	if (granule && !ttl_of(granule))
		__atomic_add_fetch(&sh.contract, 1, __ATOMIC_RELAXED);
	plat_mutex_lock(&sh.lock);
	tlbi_range(iova, size, ttl_of(granule), false);
	plat_mutex_unlock(&sh.lock);
}

static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t granule,
			void *cookie)
{
	(void)g;
	(void)cookie;
	if (!ttl_of(granule))
		__atomic_add_fetch(&sh.contract, 1, __ATOMIC_RELAXED);
	plat_mutex_lock(&sh.lock);
	tlbi_range(iova, granule, ttl_of(granule), true);
	plat_mutex_unlock(&sh.lock);
}

static const struct iopt_pgtable_tlb_ops tlb_ops = {
	cb_flush_all, cb_flush_walk, cb_add_page, cb_sync,
};

static void translate(uint64_t va, struct iopt_smmuv3_resp *r)
{
	struct iopt_smmuv3_txn t = { .sid = 1, .priv = true, .addr = va };

	plat_mutex_lock(&sh.lock);
	CHK_EQ(iopt_smmuv3_translate(sh.s, &t, advance(10), r), 0);
	plat_mutex_unlock(&sh.lock);
}

/* ---- the oracle ------------------------------------------------------- */

static uint64_t oa_of(uint32_t gen, uint64_t va)
{
	return (uint64_t)gen << OA_SHIFT | (va & ((1ull << OA_SHIFT) - 1));
}

static uint64_t *state_of(uint64_t va)
{
	return &sh.state[(va - VA0) / SZ_4K];
}

/*
 * A full barrier both sides take (ThreadSanitizer does not model fences):
 * an acquire-release read-modify-write of one shared word, through the
 * platform layer so that simulated CPUs order it too (the read-modify-
 * writes of one word are totally ordered). If the device's comes
 * after the owner's, the owner's declaration happens before the device's
 * next state load; if before, the device's table reads came before the
 * owner's table writes and cannot have seen them.
 */
static void full_barrier(void)
{
	plat_fetch_add_acq_rel64(&sh.order, 1);
}

/* One transition of every page of [va, va + size). */
static void declare(uint64_t va, uint64_t size, uint32_t live, uint32_t pend,
		    bool fault_ok)
{
	for (uint64_t off = 0; off < size; off += SZ_4K) {
		uint64_t *p = state_of(va + off);
		uint64_t w = plat_load_rlx64(p);

		/* Release: pairs with the device's acquire loads. */
		plat_store_rel64(p, (ST_COUNT(w) + 1) << 37 | (uint64_t)fault_ok << 36 |
				    (uint64_t)pend << 18 | live);
	}
	/* Orders the declaration before the table writes that follow;
	 * pairs with the device's full_barrier() calls. */
	full_barrier();
}

/* Is result r for va allowed by the state word w? */
static bool allowed(uint64_t w, uint64_t va, const struct iopt_smmuv3_resp *r)
{
	if (r->fault == IOPT_SMMUV3_EVT_F_TRANSLATION)
		return ST_FOK(w);
	if (r->fault)
		return false;
	if ((r->oa & ((1ull << OA_SHIFT) - 1)) != (va & ((1ull << OA_SHIFT) - 1)))
		return false;
	uint32_t g = (uint32_t)(r->oa >> OA_SHIFT);

	return g && (g == ST_LIVE(w) || g == ST_PEND(w));
}

static void report_bad(const char *who, uint64_t va,
		       const struct iopt_smmuv3_resp *r, uint64_t w1, uint64_t w2)
{
	if (__atomic_fetch_add(&sh.bad, 1, __ATOMIC_RELAXED) == 0) {
		plat_mutex_lock(&sh.lock);
		sh.first_bad = (struct bad_rec){ who, va, r->oa, w1, w2, r->fault };
		plat_mutex_unlock(&sh.lock);
	}
}

/* Translate va and check the result against the page's states. */
static void check(uint64_t va)
{
	uint64_t *p = state_of(va);
	struct iopt_smmuv3_resp r;

	/* Acquire: pairs with the release stores in declare(). */
	uint64_t w1 = plat_load_acq64(p);

	full_barrier();
	translate(va, &r);
	full_barrier();
	uint64_t w2 = plat_load_acq64(p);

	if (ST_COUNT(w2) - ST_COUNT(w1) > 1) {
		__atomic_add_fetch(&sh.unchecked, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!allowed(w1, va, &r) && !allowed(w2, va, &r))
		report_bad("device", va, &r, w1, w2);
	else if (r.fault)
		__atomic_add_fetch(&sh.faults, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&sh.ok, 1, __ATOMIC_RELAXED);
}

static void *device(void *arg)
{
	uint64_t rng = 0x2545f4914f6cdd1dull * (uint64_t)((uintptr_t)arg + 1);

	while (!__atomic_load_n(&sh.stop, __ATOMIC_ACQUIRE)) {
		unsigned t = (unsigned)(tu_rand(&rng) % MAPPERS);
		uint64_t va, size;

		if (tu_rand(&rng) % 4) {
			/* Where mapper t is working now (one word: a
			 * consistent pair). */
			uint64_t h = plat_load_rlx64(&sh.hot[t]);

			va = (h >> 32) * SZ_4K;
			size = (h & 0xffffffffu) * SZ_4K;
			if (!size)
				continue;
		} else {
			va = VA0 + t * REGION;
			size = SZ_32M + NSLOT * SZ_2M;
		}
		check(va + (tu_rand(&rng) % (size / SZ_4K)) * SZ_4K);
	}
	return NULL;
}

/* ---- the mapping threads ---------------------------------------------- */

enum slot_kind { K_PAGES, K_BLOCK, K_RUN64K, K_RUN32M };

struct slot {
	enum slot_kind kind;
	uint64_t base, span;	/* the slot's region */
	bool mapped;
	uint32_t gen;
	uint64_t va, size;	/* the mapping */
	uint64_t hole;		/* a 4K page unmapped out of it, or 0 */
};

struct mapper {
	unsigned id;
	uint64_t rng;
	struct slot slots[NSLOT + 1];
};

static uint32_t new_gen(void)
{
	uint32_t g = __atomic_add_fetch(&sh.gen, 1, __ATOMIC_RELAXED);

	CHK_EQ(g <= GEN_MAX, 1);
	return g;
}

static void hot(struct mapper *m, uint64_t va, uint64_t size)
{
	plat_store_rlx64(&sh.hot[m->id], (va / SZ_4K) << 32 | size / SZ_4K);
}

/* The owner's own check: va translates to generation g (0: faults). */
static void expect(uint64_t va, uint32_t g)
{
	struct iopt_smmuv3_resp r;

	translate(va, &r);
	if (g) {
		if (r.fault || r.oa != oa_of(g, va))
			report_bad("owner, mapped", va, &r, 0, 0);
	} else if (r.fault != IOPT_SMMUV3_EVT_F_TRANSLATION) {
		report_bad("owner, after unmap and sync", va, &r, 0, 0);
	}
}

static void map_slot(struct mapper *m, struct slot *s)
{
	uint32_t g = new_gen();
	uint64_t pgsize, va, size;
	size_t n;

	switch (s->kind) {
	case K_PAGES:
		n = 1 + tu_rand(&m->rng) % 16;
		pgsize = SZ_4K;
		va = s->base + (tu_rand(&m->rng) % (512 - n)) * SZ_4K;
		break;
	case K_BLOCK:
		n = 1;
		pgsize = SZ_2M;
		va = s->base;
		break;
	case K_RUN64K:
		n = 1;
		pgsize = SZ_64K;
		va = s->base + (tu_rand(&m->rng) % 32) * SZ_64K;
		break;
	default:
		n = 1;
		pgsize = SZ_32M;
		va = s->base;
		break;
	}
	size = pgsize * n;
	hot(m, va, size);
	declare(va, size, 0, g, true);
	CHK_EQ(iopt_pgtable_map_pages(sh.pt, va, oa_of(g, va), pgsize, n,
					IOPT_READ, NULL), 0);
	declare(va, size, g, 0, false);
	*s = (struct slot){ .kind = s->kind, .base = s->base, .span = s->span,
			    .mapped = true, .gen = g, .va = va, .size = size };
	/* Let the TLB hold it (a block or run as one entry). */
	expect(va + (tu_rand(&m->rng) % (size / SZ_4K)) * SZ_4K, g);
}

/* Unmap [va, va + size) of s's mapping with pgsize, sync, and check. */
static void unmap_range(struct slot *s, uint64_t va, uint64_t size,
			uint64_t pgsize)
{
	declare(va, size, 0, s->gen, true);
	CHK_EQ(iopt_pgtable_unmap_pages(sh.pt, va, pgsize, size / pgsize, NULL),
			 (int64_t)size);
	iopt_pgtable_tlb_sync(sh.pt);
	declare(va, size, 0, 0, true);
	expect(va, 0);
	expect(va + size - SZ_4K, 0);
}

/* Unmap one 4K page out of a block or run: a split, or a run break and
 * (for runs of blocks) a split. The rest keeps translating; a run's other
 * pages may fault while it is broken (break-before-make), a block's not. */
static void punch(struct mapper *m, struct slot *s)
{
	uint64_t h = s->va + (tu_rand(&m->rng) % (s->size / SZ_4K)) * SZ_4K;
	bool run = s->kind == K_RUN64K || s->kind == K_RUN32M;

	hot(m, s->va, s->size);
	expect(h, s->gen);
	if (run)
		declare(s->va, s->size, s->gen, 0, true);
	declare(h, SZ_4K, 0, s->gen, true);
	CHK_EQ(iopt_pgtable_unmap_pages(sh.pt, h, SZ_4K, 1, NULL), SZ_4K);
	iopt_pgtable_tlb_sync(sh.pt);
	declare(h, SZ_4K, 0, 0, true);
	if (run) {
		declare(s->va, h - s->va, s->gen, 0, false);
		declare(h + SZ_4K, s->va + s->size - h - SZ_4K, s->gen, 0, false);
	}
	expect(h, 0);
	if (h != s->va)
		expect(s->va, s->gen);
	s->hole = h;
}

static void unmap_slot(struct mapper *m, struct slot *s)
{
	hot(m, s->va, s->size);
	if (!s->hole) {
		unmap_range(s, s->va, s->size, s->kind == K_RUN32M ? SZ_32M :
					       s->kind == K_BLOCK ? SZ_2M :
					       s->kind == K_RUN64K ? SZ_64K : SZ_4K);
	} else if (s->kind == K_BLOCK || s->kind == K_RUN32M) {
		/* Block-sized unmaps: 2M blocks and the leaf table left by the
		 * split (unlinked as a whole). */
		uint64_t h = s->hole;

		declare(s->va, h - s->va, 0, s->gen, true);
		declare(h + SZ_4K, s->va + s->size - h - SZ_4K, 0, s->gen, true);
		CHK_EQ(iopt_pgtable_unmap_pages(sh.pt, s->va, SZ_2M,
						  s->size / SZ_2M, NULL),
				 (int64_t)s->size);
		iopt_pgtable_tlb_sync(sh.pt);
		declare(s->va, s->size, 0, 0, true);
		expect(s->va == h ? s->va + SZ_4K : s->va, 0);
		expect(s->va + s->size - SZ_4K, 0);
	} else {
		/* Pages on both sides of the hole. */
		if (s->hole > s->va)
			unmap_range(s, s->va, s->hole - s->va, SZ_4K);
		if (s->hole + SZ_4K < s->va + s->size)
			unmap_range(s, s->hole + SZ_4K,
				    s->va + s->size - s->hole - SZ_4K, SZ_4K);
	}
	s->mapped = false;
	s->hole = 0;
}

/*
 * Maps that must fail over s's live pages: 4K pages from up to 256 pages
 * before them to after them (the pages before are written, then must be removed and
 * invalidated), and a 64K run over the window holding the first live page
 * (nothing may be written: a TLB could cache the run as one entry and the
 * live page would translate to it). The live pages never change.
 */
static void fail_over(struct mapper *m, struct slot *s)
{
	/* Up to 256 pages before: the first of them stays written while the
	 * map writes the others, long enough for a device sent there to
	 * cache it. */
	uint64_t lo = s->va - s->base > 256 * SZ_4K ? s->va - 256 * SZ_4K : s->base;
	uint64_t hi = s->va + s->size + 8 * SZ_4K;
	uint64_t win = s->va & ~(SZ_64K - 1);
	uint32_t g = new_gen();

	if (hi > s->base + s->span)
		hi = s->base + s->span;
	hot(m, lo, SZ_4K);
	declare(lo, s->va - lo, 0, g, true);
	declare(s->va + s->size, hi - s->va - s->size, 0, g, true);
	CHK_EQ(iopt_pgtable_map_pages(sh.pt, lo, oa_of(g, lo), SZ_4K,
					(hi - lo) / SZ_4K, IOPT_READ, NULL),
			 -EEXIST);
	declare(lo, s->va - lo, 0, 0, true);
	declare(s->va + s->size, hi - s->va - s->size, 0, 0, true);
	if (lo < s->va)
		expect(lo, 0);
	expect(s->va, s->gen);

	g = new_gen();
	hot(m, win, SZ_64K);
	uint64_t end = s->va + s->size < win + SZ_64K ? s->va + s->size :
							win + SZ_64K;

	declare(win, s->va - win, 0, g, true);
	declare(end, win + SZ_64K - end, 0, g, true);
	CHK_EQ(iopt_pgtable_map_pages(sh.pt, win, oa_of(g, win), SZ_64K, 1,
					IOPT_READ, NULL), -EEXIST);
	declare(win, s->va - win, 0, 0, true);
	declare(end, win + SZ_64K - end, 0, 0, true);
	expect(s->va, s->gen);
}

static void *mapper(void *arg)
{
	struct mapper *m = arg;
	long ops = tu_stress_ops(OPS_DEFAULT);
	uint64_t base = VA0 + m->id * REGION;

	m->slots[0] = (struct slot){ .kind = K_RUN32M, .base = base,
				     .span = SZ_32M };
	for (unsigned i = 0; i < NSLOT; i++)
		m->slots[i + 1] = (struct slot){
			.kind = i < 8 ? K_PAGES : i < 11 ? K_BLOCK : K_RUN64K,
			.base = base + SZ_32M + i * SZ_2M, .span = SZ_2M };
	for (long op = 0; op < ops; op++) {
		/* The 32M slot a little less often: 8192 pages a step. */
		struct slot *s = &m->slots[tu_rand(&m->rng) % (NSLOT + 1)];
		unsigned r = (unsigned)(tu_rand(&m->rng) % 8);

		if (!s->mapped)
			map_slot(m, s);
		else if (r < 3 && !s->hole && s->kind != K_PAGES)
			punch(m, s);
		else if (r < 5 && !s->hole && s->kind == K_PAGES)
			fail_over(m, s);
		else
			unmap_slot(m, s);
	}
	for (unsigned i = 0; i <= NSLOT; i++)
		if (m->slots[i].mapped)
			unmap_slot(m, &m->slots[i]);
	hot(m, 0, 0);
	return NULL;
}

static void test_contract_under_translation(void **state)
{
	struct iopt_testbed_cfg c;
	struct mapper mp[MAPPERS];
	uint64_t pa, w[8];
	struct plat_thread dt[DEVICES], mt[MAPPERS];

	(void)state;
	memset(&sh, 0, sizeof(sh));
	assert_int_equal(plat_mutex_init(&sh.lock), 0);
	sh.state = calloc(PAGES, sizeof(*sh.state));
	assert_non_null(sh.state);
	for (size_t i = 0; i < PAGES; i++)
		sh.state[i] = 1ull << 36;	/* nothing mapped: faults */
	/* Memory and the model alone: the test programs it. */
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV3, MEM_BASE, 64u << 20);
	assert_true(c.v3.ril);
	c.v3.tlb.entries = 256;		/* small caches: evictions and refills */
	c.v3.walk.entries = 16;
	c.v3.shared_clock = true;	/* threads tick one clock outside the lock */
	sh.tb = tu_testbed(&c);
	sh.pm = iopt_testbed_physmem(sh.tb);
	sh.s = iopt_testbed_smmuv3(sh.tb);
	assert_int_equal(iopt_physmem_alloc(sh.pm, 1u << 20, &pa), 0);
	/* 16 STEs, 256 commands, 16 events; SMMUEN, CMDQEN (no EVTQ). */
	tu_smmuv3_bringup(sh.s, &(struct tu_v3_bringup){
		.strtab = STRTAB, .sid_bits = 4, .cmdq = CMDQ, .cmdq_log2 = 8,
		.evtq = EVTQ, .evtq_log2 = 4, .cr0 = 0x9 }, 0);
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = sh.pm,
			       .tlb = &tlb_ops, .tlb_cookie = &sh };
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };

	assert_int_equal(iopt_pgtable_alloc(&pc, &sh.pt), 0);
	assert_int_equal(iopt_smmuv3_cd_from_pgtable(sh.pt, ASID, &cd), 0);
	iopt_smmuv3_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(sh.pm, CDTAB, 64), w, 64);
	iopt_smmuv3_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(sh.pm, STRTAB + 64, 64), w, 64);

	for (int i = 0; i < DEVICES; i++)
		TU_THREAD_START(&dt[i], device, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < MAPPERS; i++) {
		mp[i] = (struct mapper){ .id = i, .rng = 0x9e3779b97f4a7c15ull * (i + 1) };
		TU_THREAD_START(&mt[i], mapper, &mp[i]);
	}
	for (unsigned i = 0; i < MAPPERS; i++)
		plat_thread_join(&mt[i]);
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < DEVICES; i++)
		plat_thread_join(&dt[i]);

	/* Everything was unmapped and synced: nothing translates. */
	uint64_t rng = 5;

	for (int i = 0; i < 2000; i++)
		expect(VA0 + (tu_rand(&rng) % (MAPPERS * REGION / SZ_4K)) * SZ_4K, 0);
	print_message("generations %u, checked %lu ok + %lu faults, %lu not "
		      "checked, %lu bad, %lu outside the callback contract\n",
		      sh.gen, sh.ok, sh.faults, sh.unchecked, sh.bad, sh.contract);
	if (sh.bad)
		print_error("first bad (%s): va %#llx fault %#x oa %#llx (gen %llu) "
			    "state before %#llx (live %u pend %u fok %u) after "
			    "%#llx (live %u pend %u fok %u)\n",
			    sh.first_bad.who, (unsigned long long)sh.first_bad.va,
			    sh.first_bad.fault,
			    (unsigned long long)sh.first_bad.oa,
			    (unsigned long long)(sh.first_bad.oa >> OA_SHIFT),
			    (unsigned long long)sh.first_bad.w1,
			    ST_LIVE(sh.first_bad.w1), ST_PEND(sh.first_bad.w1),
			    (unsigned)ST_FOK(sh.first_bad.w1),
			    (unsigned long long)sh.first_bad.w2,
			    ST_LIVE(sh.first_bad.w2), ST_PEND(sh.first_bad.w2),
			    (unsigned)ST_FOK(sh.first_bad.w2));
	assert_int_equal(sh.failed_calls, 0);
	assert_int_equal(sh.bad, 0);
	assert_int_equal(sh.contract, 0);
	/* The oracle looked at enough: most device results were checked. */
	assert_true(sh.ok > 1000 && sh.faults > 100);
	assert_true(sh.unchecked < (sh.ok + sh.faults) / 4);
	iopt_pgtable_free(sh.pt);
	iopt_testbed_destroy(sh.tb);
	free(sh.state);
	plat_mutex_destroy(&sh.lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contract_under_translation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
