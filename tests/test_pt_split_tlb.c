/* SPDX-License-Identifier: MIT */
/*
 * A split another thread started must not leave the block cached for an unmap
 * that passes through the new table (pgtable.h, iopt_pgtable_unmap_pages;
 * docs/pgtable.md "TLB maintenance"): the block's invalidation is part of every
 * such unmap.
 *
 * The interleaving is forced through the TLB callbacks: thread A unmaps a page
 * out of a block, and its add_page for the block it split blocks until thread B
 * (the test's main thread) has unmapped another page of that block through A's
 * new table and called iopt_pgtable_tlb_sync(). The device is a shadow TLB
 * written from the contract, not from the library: it caches the block (and a
 * run as one entry) and drops an entry only for an invalidation that was issued
 * and then synced, honouring the level hint as an SMMUv3 range invalidation
 * with TTL does (IHI0070 4.4.1.1: an invalidation with a level hint removes
 * only leaves of that level). When B's sync returns, B's page must not
 * translate, in the TLB or the table, and each unmap of B's must have reported
 * the block (gather and add_page).
 *
 * B also maps a page of the block before unmapping it (the map's walk
 * must not cache the new table, or the unmap would take the cached path
 * past the split), and unmaps two pages (nor may the first unmap's walk).
 * And A is held, instead, right after the compare-and-swap that publishes
 * its table, through a hook compiled only into this test
 * (IOPT_PT_TEST_HOOKS, pt_test_published()): the block's slot must be
 * claimed by then.
 *
 * Matrix: LPAE 4K granule 2M, 1G and 32M (contiguous) blocks split by 4K
 * and 64K (contiguous) unmaps; 16K granule 32M blocks; 64K granule 512M
 * and 16G (contiguous) blocks split by 64K unmaps; stage 1 and stage 2;
 * 32-bit LPAE; v7s sections and supersections split by 4K and 64K.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <iopgtable/pgtable.h>

#define SZ_4K 0x1000ull
#define SZ_16K 0x4000ull
#define SZ_64K 0x10000ull
#define SZ_1M 0x100000ull
#define SZ_2M 0x200000ull
#define SZ_16M 0x1000000ull
#define SZ_32M 0x2000000ull
#define SZ_512M 0x20000000ull
#define SZ_1G 0x40000000ull
#define SZ_16G 0x400000000ull

/* ---- shadow TLB ------------------------------------------------------- */

/* A cached translation: [base, base + size), made of items of item bytes
 * (size > item for a run cached as one entry). */
struct tlb_entry {
	uint64_t base, size, item;
};

/* An issued invalidation: leaves in [va, va + size) of items of granule
 * bytes (0: any). */
struct tlb_inv {
	uint64_t va, size, granule;
};

#define TLB_MAX 16
#define INV_MAX 64

static struct {
	pthread_mutex_t lock;
	struct tlb_entry e[TLB_MAX];
	unsigned n;
	struct tlb_inv q[INV_MAX];	/* issued, not yet synced */
	unsigned nq;
	bool overflow;
} tlb = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void tlb_reset(void)
{
	tlb.n = tlb.nq = 0;
	tlb.overflow = false;
}

static void tlb_fill(uint64_t base, uint64_t size, uint64_t item)
{
	pthread_mutex_lock(&tlb.lock);
	if (tlb.n < TLB_MAX)
		tlb.e[tlb.n++] = (struct tlb_entry){ base, size, item };
	else
		tlb.overflow = true;
	pthread_mutex_unlock(&tlb.lock);
}

static void tlb_issue(uint64_t va, uint64_t size, uint64_t granule)
{
	pthread_mutex_lock(&tlb.lock);
	if (tlb.nq < INV_MAX)
		tlb.q[tlb.nq++] = (struct tlb_inv){ va, size, granule };
	else
		tlb.overflow = true;
	pthread_mutex_unlock(&tlb.lock);
}

/* Complete every issued invalidation: an entry goes when it overlaps the
 * range and, with a level hint, its items have the hinted size. */
static void tlb_sync(void)
{
	pthread_mutex_lock(&tlb.lock);
	for (unsigned k = 0; k < tlb.nq; k++) {
		const struct tlb_inv *v = &tlb.q[k];

		for (unsigned i = 0; i < tlb.n;) {
			const struct tlb_entry *e = &tlb.e[i];
			bool hit = v->va < e->base + e->size &&
				   e->base < v->va + v->size &&
				   (!v->granule || v->granule == e->item);

			if (hit)
				tlb.e[i] = tlb.e[--tlb.n];
			else
				i++;
		}
	}
	tlb.nq = 0;
	pthread_mutex_unlock(&tlb.lock);
}

static bool tlb_translates(uint64_t va)
{
	bool hit = false;

	pthread_mutex_lock(&tlb.lock);
	for (unsigned i = 0; i < tlb.n; i++)
		hit |= va - tlb.e[i].base < tlb.e[i].size;
	pthread_mutex_unlock(&tlb.lock);
	return hit;
}

/* ---- the forced interleaving ------------------------------------------ */

/* Where A is held: in its add_page for the block (the report), or right
 * after the compare-and-swap that published the block's table (the test
 * hook, pt_test_published()), before anything else A does. */
enum hold_at { HOLD_REPORT, HOLD_PUBLISH };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t a;
	enum hold_at at;
	uint64_t hold_va, hold_gran;	/* A's split block to hold */
	bool published, b_done, held;
	unsigned b_reports;	/* add_page calls for the block by B */
} ctl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Wait (at most 10 s) until *flag; returns whether it became true. */
static bool ctl_wait(bool *flag)
{
	struct timespec t;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&ctl.lock);
	while (!*flag && r == 0)
		r = pthread_cond_timedwait(&ctl.cond, &ctl.lock, &t);
	bool ok = *flag;

	pthread_mutex_unlock(&ctl.lock);
	return ok;
}

static void ctl_set(bool *flag)
{
	pthread_mutex_lock(&ctl.lock);
	*flag = true;
	pthread_cond_broadcast(&ctl.cond);
	pthread_mutex_unlock(&ctl.lock);
}

/* On A: hold A until B is done. The device may have cached the block up
 * to the publication of its table. */
static void ctl_hold(void)
{
	ctl.held = true;
	tlb_fill(ctl.hold_va, ctl.hold_gran, ctl.hold_gran);
	ctl_set(&ctl.published);
	ctl_wait(&ctl.b_done);
}

static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
			void *cookie)
{
	(void)g;
	(void)cookie;
	bool block = iova == ctl.hold_va && gran == ctl.hold_gran;

	if (!pthread_equal(pthread_self(), ctl.a))
		ctl.b_reports += block;
	else if (ctl.at == HOLD_REPORT && !ctl.held && block)
		ctl_hold();	/* A split has published and reports the block */
	tlb_issue(iova, gran, gran);
}

/*
 * The library's test hook (pt_algo.h, IOPT_PT_TEST_HOOKS): a table whose
 * entry covers span bytes was just published by the calling thread. A's
 * split of the block is held there, before it syncs or reports anything:
 * its slot must be claimed already.
 */
struct iopt_pgtable;
void pt_test_published(struct iopt_pgtable *pt, uint64_t span);

void pt_test_published(struct iopt_pgtable *pt, uint64_t span)
{
	(void)pt;
	if (ctl.at == HOLD_PUBLISH && pthread_equal(pthread_self(), ctl.a) &&
	    !ctl.held && span == ctl.hold_gran)
		ctl_hold();
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t gran,
			  void *cookie)
{
	(void)cookie;
	tlb_issue(iova, size, gran);
}

static void cb_sync(void *cookie)
{
	(void)cookie;
	tlb_sync();
}

static const struct iopt_pgtable_tlb_ops shadow_ops = {
	.flush_walk = cb_flush_walk, .add_page = cb_add_page, .sync = cb_sync,
};

/* ---- the matrix ------------------------------------------------------- */

struct scase {
	const char *name;
	enum iopt_pgtable_fmt fmt;
	uint32_t granule;
	unsigned ias;
	uint64_t va, block;	/* the mapping: one page of block bytes */
	uint64_t item;		/* its items (block, or a run's item size) */
	uint64_t unmap;		/* page size of A's and B's unmaps */
	uint64_t a_off, b_off;	/* A's and B's pages in the mapping */
	uint64_t hold;		/* the split block whose report A holds */
};

#define LPAE64(name_, fmt_, gr, va_, blk, it, um, ao, bo, hd)               \
	{ name_, fmt_, gr, 48, va_, blk, it, um, ao, bo, hd }

static const struct scase cases[] = {
	/* 4K granule: 2M and 1G blocks, a 32M run of 2M blocks. */
	LPAE64("s1 4K: 2M by 4K", IOPT_ARM_64_LPAE_S1, 4096, SZ_1G, SZ_2M, SZ_2M,
	       SZ_4K, 0x1000, 0x101000, SZ_2M),
	LPAE64("s1 4K: 2M by 64K", IOPT_ARM_64_LPAE_S1, 4096, SZ_1G, SZ_2M, SZ_2M,
	       SZ_64K, 0x10000, 0x1f0000, SZ_2M),
	LPAE64("s1 4K: 1G by 4K", IOPT_ARM_64_LPAE_S1, 4096, 4 * SZ_1G, SZ_1G,
	       SZ_1G, SZ_4K, 0x12345000, 0x2a000000, SZ_1G),
	LPAE64("s1 4K: 1G by 4K, same 2M", IOPT_ARM_64_LPAE_S1, 4096, 4 * SZ_1G,
	       SZ_1G, SZ_1G, SZ_4K, 0x12345000, 0x12346000, SZ_1G),
	LPAE64("s1 4K: 1G by 64K", IOPT_ARM_64_LPAE_S1, 4096, 4 * SZ_1G, SZ_1G,
	       SZ_1G, SZ_64K, 0x30000000, 0x3fff0000, SZ_1G),
	LPAE64("s1 4K: 32M run by 4K", IOPT_ARM_64_LPAE_S1, 4096, 2 * SZ_1G,
	       SZ_32M, SZ_2M, SZ_4K, 0x601000, 0x700000, SZ_2M),
	LPAE64("s1 4K: 32M run by 64K", IOPT_ARM_64_LPAE_S1, 4096, 2 * SZ_1G,
	       SZ_32M, SZ_2M, SZ_64K, 0x1e10000, 0x1ff0000, SZ_2M),
	LPAE64("s2 4K: 2M by 4K", IOPT_ARM_64_LPAE_S2, 4096, SZ_1G, SZ_2M, SZ_2M,
	       SZ_4K, 0x1000, 0x1ff000, SZ_2M),
	LPAE64("s2 4K: 1G by 64K", IOPT_ARM_64_LPAE_S2, 4096, 4 * SZ_1G, SZ_1G,
	       SZ_1G, SZ_64K, 0x10000, 0x20000000, SZ_1G),
	LPAE64("s2 4K: 32M run by 4K", IOPT_ARM_64_LPAE_S2, 4096, 2 * SZ_1G,
	       SZ_32M, SZ_2M, SZ_4K, 0x1000, 0x80000, SZ_2M),
	/* 16K granule: 32M blocks. */
	LPAE64("s1 16K: 32M by 16K", IOPT_ARM_64_LPAE_S1, 16384, SZ_1G, SZ_32M,
	       SZ_32M, SZ_16K, 0x4000, 0x1000000, SZ_32M),
	/* 64K granule: 512M blocks, a 16G run of 512M blocks. */
	LPAE64("s1 64K: 512M by 64K", IOPT_ARM_64_LPAE_S1, 65536, 4 * SZ_1G,
	       SZ_512M, SZ_512M, SZ_64K, 0x10000, 0x1fff0000, SZ_512M),
	LPAE64("s2 64K: 512M by 64K", IOPT_ARM_64_LPAE_S2, 65536, 4 * SZ_1G,
	       SZ_512M, SZ_512M, SZ_64K, 0x100000, 0x110000, SZ_512M),
	LPAE64("s1 64K: 16G run by 64K", IOPT_ARM_64_LPAE_S1, 65536, SZ_16G,
	       SZ_16G, SZ_512M, SZ_64K, 0x60010000, 0x70000000, SZ_512M),
	/* 32-bit LPAE. */
	{ "s1 32-bit: 2M by 4K", IOPT_ARM_32_LPAE_S1, 4096, 32, SZ_1G, SZ_2M,
	  SZ_2M, SZ_4K, 0x3000, 0x100000, SZ_2M },
	{ "s1 32-bit: 1G by 64K", IOPT_ARM_32_LPAE_S1, 4096, 32, SZ_1G, SZ_1G,
	  SZ_1G, SZ_64K, 0x10000, 0x3ff00000, SZ_1G },
	/* v7s: 1M sections, a 16M supersection (a run of 16 sections). */
	{ "v7s: 1M by 4K", IOPT_ARM_V7S, 4096, 32, 0x10000000, SZ_1M, SZ_1M,
	  SZ_4K, 0x1000, 0x80000, SZ_1M },
	{ "v7s: 1M by 64K", IOPT_ARM_V7S, 4096, 32, 0x10000000, SZ_1M, SZ_1M,
	  SZ_64K, 0x0, 0xf0000, SZ_1M },
	{ "v7s: 16M by 4K", IOPT_ARM_V7S, 4096, 32, 0x20000000, SZ_16M, SZ_1M,
	  SZ_4K, 0x301000, 0x3ff000, SZ_1M },
};

struct a_arg {
	struct iopt_pgtable *pt;
	uint64_t va, size;
	int64_t ret;
	bool is_a;	/* the thread whose block report is held */
};

static void *thread_a(void *p)
{
	struct a_arg *a = p;
	struct iopt_pgtable_gather g;

	/* Ordered before B's callbacks by ctl.published. */
	if (a->is_a)
		ctl.a = pthread_self();
	iopt_pgtable_gather_init(&g);
	a->ret = iopt_pgtable_unmap_pages(a->pt, a->va, a->size, 1, &g);
	iopt_pgtable_tlb_sync(a->pt);
	return NULL;
}

/*
 * What B does in the window where A is held, each a way to reach A's new
 * table that must still report A's block:
 *   B_UNMAP:     unmap a page of the block;
 *   B_MAP_UNMAP: map that page first (-EEXIST: the split left nothing
 *                free), a map that reaches the new leaf table and must not
 *                cache it, then unmap it (the cached path would skip the
 *                block);
 *   B_TWO:       unmap two pages of the block: the first walk must not
 *                cache the table either, so the second reports it too.
 */
enum b_mode { B_UNMAP, B_MAP_UNMAP, B_TWO };

static const char *const hold_name[] = { "held in add_page",
					 "held after publish" };
static const char *const mode_name[] = { "unmap", "map+unmap", "two unmaps" };

/* Does g cover the held block, with its size among its sizes? A driver
 * that invalidates from the gather alone must get it too. */
static bool gather_has_block(const struct iopt_pgtable_gather *g)
{
	return g->start <= ctl.hold_va &&
	       g->last >= ctl.hold_va + ctl.hold_gran - 1 &&
	       (g->sizes & ctl.hold_gran);
}

/* B unmaps va in the window; returns whether the unmap reported A's
 * block (gather and add_page). */
static bool b_unmap(const struct scase *c, struct iopt_pgtable *pt,
		    uint64_t va)
{
	struct iopt_pgtable_gather g;
	unsigned before = ctl.b_reports;

	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, c->unmap, 1, &g),
			 (int64_t)c->unmap);
	return gather_has_block(&g) && ctl.b_reports > before;
}

/* B's second page: next to its first, in the same held block, not A's. */
static uint64_t second_page(const struct scase *c)
{
	uint64_t b = c->va + c->b_off, up = b + c->unmap, down = b - c->unmap;
	uint64_t a = c->va + c->a_off;
	bool up_ok = (up & ~(ctl.hold_gran - 1)) == ctl.hold_va && up != a;
	uint64_t b2 = up_ok ? up : down;

	assert_int_equal(b2 & ~(ctl.hold_gran - 1), ctl.hold_va);
	assert_true(b2 != a);
	return b2;
}

/* Returns whether B's requests completed with a page of theirs still
 * cached, or without reporting the block. */
static bool run_case(const struct scase *c, enum hold_at at, enum b_mode mode)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = c->fmt, .granule = c->granule, .ias = c->ias,
		.oas = c->fmt == IOPT_ARM_V7S || c->fmt == IOPT_ARM_32_LPAE_S1 ?
			       32 : 48,
		.coherent_walk = true, .tlb = &shadow_ops,
	};
	struct iopt_pgtable *pt = NULL;
	uint64_t b_va = c->va + c->b_off, pa;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	/* Output address = input address: mapped below 4G for v7s and
	 * 32-bit LPAE, whose outputs are 32 bits. */
	assert_int_equal(iopt_pgtable_map_pages(pt, c->va, c->va, c->block, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	tlb_reset();
	tlb_fill(c->va, c->block, c->item);	/* the device used the block */

	ctl.published = ctl.b_done = ctl.held = false;
	ctl.at = at;
	ctl.b_reports = 0;
	ctl.hold_va = b_va & ~(c->hold - 1);
	ctl.hold_gran = c->hold;
	uint64_t b2 = mode == B_TWO ? second_page(c) : b_va;
	struct a_arg a = { pt, c->va + c->a_off, c->unmap, 0, true };
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, thread_a, &a), 0);
	bool published = ctl_wait(&ctl.published);
	bool reported = false, b_tlb = false;
	int b_map = 0, b_walk = 0;

	if (published) {
		/* B: A has published its table and not yet reported the
		 * block. */
		if (mode == B_MAP_UNMAP)
			b_map = iopt_pgtable_map_pages(pt, b_va, b_va, c->unmap, 1,
						       IOPT_READ | IOPT_WRITE, NULL);
		reported = b_unmap(c, pt, b_va);
		if (mode == B_TWO)
			reported &= b_unmap(c, pt, b2);
		iopt_pgtable_tlb_sync(pt);
		b_tlb = tlb_translates(b_va) || tlb_translates(b2);
		b_walk = iopt_pgtable_iova_to_phys(pt, b_va, &pa) |
			 iopt_pgtable_iova_to_phys(pt, b2, &pa);
	}
	ctl_set(&ctl.b_done);
	pthread_join(th, NULL);
	ctl.at = HOLD_REPORT;	/* the hook holds nothing outside run_case() */

	if (!published)
		print_error("[%s, %s] A never got to the block\n", c->name,
			    hold_name[at]);
	assert_true(published);
	if (mode == B_MAP_UNMAP)
		assert_int_equal(b_map, -EEXIST);
	assert_int_equal(b_walk, -ENOENT);
	if (b_tlb || !reported)
		print_error("[%s, %s, B %s] after B's unmaps and sync:%s%s\n",
			    c->name, hold_name[at], mode_name[mode],
			    b_tlb ? " B's page still translates through the "
				    "cached block;" : "",
			    !reported ? " an unmap of B's did not report the "
					"block" : "");
	/* A completed as well; the rest of the block still maps. */
	assert_int_equal(a.ret, (int64_t)c->unmap);
	assert_false(tlb_translates(c->va + c->a_off));
	assert_int_equal(iopt_pgtable_iova_to_phys(pt, c->va + c->a_off, &pa), -ENOENT);
	uint64_t other = c->va + c->block - c->unmap;

	if (other != b_va && other != b2 && other != c->va + c->a_off) {
		assert_int_equal(iopt_pgtable_iova_to_phys(pt, other, &pa), 0);
		assert_int_equal(pa, other);
	}
	assert_false(tlb.overflow);
	iopt_pgtable_free(pt);
	return b_tlb || !reported;
}

/* Every case, A held at at, B doing mode. */
static void split_matrix(enum hold_at at, enum b_mode mode)
{
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		bad += run_case(&cases[i], at, mode);
	assert_int_equal(bad, 0);
}

static void test_split_in_flight(void **state)
{
	(void)state;
	split_matrix(HOLD_REPORT, B_UNMAP);
}

/* A map that reaches the new table does not cache it. */
static void test_split_in_flight_map(void **state)
{
	(void)state;
	split_matrix(HOLD_REPORT, B_MAP_UNMAP);
}

/* Nor does an unmap's walk: B's second unmap reports the block too. */
static void test_split_in_flight_two_unmaps(void **state)
{
	(void)state;
	split_matrix(HOLD_REPORT, B_TWO);
}

/* The slot is claimed before the table is published: B, running through
 * the table right after A's compare-and-swap, already finds it. */
static void test_split_claimed_before_publish(void **state)
{
	(void)state;
	split_matrix(HOLD_PUBLISH, B_UNMAP);
	split_matrix(HOLD_PUBLISH, B_MAP_UNMAP);
	split_matrix(HOLD_PUBLISH, B_TWO);
}

/* ---- more splits in flight than slots ---------------------------------- */

#define NSPLIT 8	/* one more than the table's split slots */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned held;
	bool open;
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER,
	    .cond = PTHREAD_COND_INITIALIZER };

/* Every block report waits until the gate opens (at most 10 s). */
static void gate_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gran,
			  void *cookie)
{
	struct timespec t;

	(void)g;
	(void)iova;
	(void)cookie;
	if (gran != SZ_2M)
		return;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&gate.lock);
	gate.held++;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.open &&
	       pthread_cond_timedwait(&gate.cond, &gate.lock, &t) == 0)
		;
	pthread_mutex_unlock(&gate.lock);
}

static const struct iopt_pgtable_tlb_ops gate_ops = { .add_page = gate_add_page };

static unsigned gate_held(void)
{
	pthread_mutex_lock(&gate.lock);
	unsigned n = gate.held;

	pthread_mutex_unlock(&gate.lock);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* Blocks of the 8 that are still one 2M leaf. */
static unsigned blocks_left(struct iopt_pgtable *pt, uint64_t va)
{
	unsigned n = 0;

	for (unsigned k = 0; k < NSPLIT; k++) {
		struct iopt_pgtable_walk w;

		memset(&w, 0, sizeof(w));
		assert_int_equal(iopt_pgtable_walk(pt, va + k * SZ_2M + SZ_1M, &w), 0);
		n += w.mapped && w.leaf_size == SZ_2M;
	}
	return n;
}

/*
 * Eight threads split eight blocks at once while every block report is
 * held: seven splits claim the table's slots and publish; the eighth
 * waits for a slot and leaves its block whole (a walk still finds the 2M
 * leaf) until a report returns. Then all eight complete.
 */
static void test_split_slots_full(void **state)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = 48, .coherent_walk = true, .tlb = &gate_ops,
	};
	struct iopt_pgtable *pt = NULL;
	struct a_arg a[NSPLIT];
	pthread_t th[NSPLIT];
	uint64_t va = SZ_1G;

	(void)state;
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, va, SZ_2M, NSPLIT,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	gate.held = 0;
	gate.open = false;
	for (unsigned k = 0; k < NSPLIT; k++) {
		a[k] = (struct a_arg){ pt, va + k * SZ_2M + k * SZ_4K, SZ_4K, 0,
				       false };
		assert_int_equal(pthread_create(&th[k], NULL, thread_a, &a[k]),
				 0);
	}
	for (int i = 0; i < 1000 && gate_held() < NSPLIT - 1; i++)
		sleep_ms(10);
	sleep_ms(50);	/* room for an eighth that should not come */
	unsigned held = gate_held(), whole = blocks_left(pt, va);

	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	for (unsigned k = 0; k < NSPLIT; k++)
		pthread_join(th[k], NULL);
	assert_int_equal(held, NSPLIT - 1);
	assert_int_equal(whole, 1);
	assert_int_equal(gate_held(), NSPLIT);
	for (unsigned k = 0; k < NSPLIT; k++) {
		uint64_t pa;

		assert_int_equal(a[k].ret, (int64_t)SZ_4K);
		assert_int_equal(iopt_pgtable_iova_to_phys(pt, a[k].va, &pa), -ENOENT);
		assert_int_equal(iopt_pgtable_iova_to_phys(pt, a[k].va + SZ_4K, &pa), 0);
	}
	assert_int_equal(blocks_left(pt, va), 0);
	iopt_pgtable_free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_in_flight),
		cmocka_unit_test(test_split_in_flight_map),
		cmocka_unit_test(test_split_in_flight_two_unmaps),
		cmocka_unit_test(test_split_claimed_before_publish),
		cmocka_unit_test(test_split_slots_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
