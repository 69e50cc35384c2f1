/* SPDX-License-Identifier: MIT */
/*
 * Dirty tracking seen through a TLB: a 64-bit stage 1 table with
 * IOPT_PGTABLE_QUIRK_HD behind the SMMUv3 model (HTTU with dirty state), whose
 * TLB callbacks drive the model's command queue as a driver does (add_page:
 * TLBI_NH_VA Leaf=1; flush_walk: a range TLBI_NH_VA; flush_all: TLBI_NH_ASID;
 * sync: CMD_SYNC, then wait for CONS to pass it).
 *
 * A device write to a writable-clean page makes it dirty and fills the model's
 * TLB with the writable-dirty entry. After read-and-clear and
 * iopt_pgtable_tlb_sync() the next write must set the dirty state again, which
 * it only does if cleaning invalidated that TLB entry (the model then walks and
 * updates the descriptor). Dirty state is read from the descriptors in memory
 * with the architecture's bit positions (Arm ARM D8.5, stage 1: AP[2], bit 7,
 * read-only; DBM, bit 51): writable-dirty is DBM = 1 and AP[2] = 0,
 * writable-clean DBM = 1 and AP[2] = 1. A contiguous run is one unit (D8.5.5):
 * the hardware may mark any one of its items. Cleaning racing unmaps and
 * hardware updates never leaves stray bits behind. A harvest that passes
 * through a split another thread has published but not yet reported
 * reports the block too (docs/pgtable.md, concurrency guarantee 10; host
 * build only: it holds the splitter with pthread primitives).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tthread.h"
#include "tutil.h"

#ifndef IOPT_SIM_HARNESS_H
#include <pthread.h>
#endif

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)
#define CMDQ	(MEM_BASE + 0x010000)	/* 256 commands */
#define EVTQ	(MEM_BASE + 0x020000)
#define CDTAB	(MEM_BASE + 0x030000)
#define ASID	3
#define OFF	0x100000000ull		/* OA = IA + OFF */

/* Stage 1 descriptor bits (Arm ARM D8.3, D8.5). */
#define AP2_RDONLY	(1ull << 7)
#define DBM		(1ull << 51)

struct env {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_pgtable *pt;
	uint64_t cycle;
	uint32_t prod;
	/* What the callbacks saw. */
	unsigned add_pages, syncs, flush_walks, flush_alls;
	uint64_t inv_lo, inv_hi;	/* range covered by add_page calls */
	struct iopt_pgtable_gather *last_gather;
	/* add_page as the SMMUv3 driver issues it (smmuv3_tlb.c): one
	 * range TLBI_NH_VA with the TTL level hint from the granule (RIL);
	 * false: one TLBI_NH_VA Leaf=1 per call, no hint. */
	bool ttl;
};

#ifndef IOPT_SIM_HARNESS_H
/* The splitter's add_page for a 2M block, held until released. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t a;
	bool armed, held, release;
} ctl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void hold_if_armed(uint64_t granule)
{
	pthread_mutex_lock(&ctl.lock);
	if (ctl.armed && granule == 0x200000 &&
	    pthread_equal(pthread_self(), ctl.a)) {
		ctl.armed = false;
		ctl.held = true;
		pthread_cond_broadcast(&ctl.cond);
		while (!ctl.release)
			pthread_cond_wait(&ctl.cond, &ctl.lock);
	}
	pthread_mutex_unlock(&ctl.lock);
}
#else
static void hold_if_armed(uint64_t granule)
{
	(void)granule;
}
#endif

static uint64_t tick(struct env *e)
{
	return e->cycle += 10;
}

static void q_drain(struct env *e)
{
	uint64_t cons;

	assert_int_equal(iopt_smmuv3_mmio_write(e->s, 0x98, 4, e->prod, tick(e)), 0);
	do {
		uint64_t c = tick(e) + 1000;

		e->cycle = c;
		iopt_smmuv3_run_until(e->s, c);
		assert_int_equal(iopt_smmuv3_mmio_read(e->s, 0x9c, 4, &cons, c), 0);
	} while ((cons & 0x1ff) != e->prod);
	assert_int_equal(cons >> 24 & 0x7f, 0);	/* CONS.ERR: no error */
}

static void q_cmd(struct env *e, const struct iopt_smmuv3_cmd *c)
{
	uint64_t w[2];

	assert_int_equal(iopt_smmuv3_cmd_encode(c, w), 0);
	memcpy(iopt_physmem_ptr(e->pm, CMDQ + (e->prod & 255) * 16ull, 16), w, 16);
	e->prod = (e->prod + 1) & 511;
	if ((e->prod & 127) == 0)
		q_drain(e);
}

static void cb_sync(void *cookie)
{
	struct env *e = cookie;

	e->syncs++;
	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC });
	q_drain(e);
}

static void cb_flush_all(void *cookie)
{
	struct env *e = cookie;

	e->flush_alls++;
	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID,
					  .asid = ASID });
	cb_sync(cookie);
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	struct env *e = cookie;

	(void)granule;
	e->flush_walks++;
	/* Every 4K page of the range, Leaf=0 (walk caches too). */
	for (uint64_t a = iova; a - iova < size; a += 0x1000)
		q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA,
						  .asid = ASID, .addr = a });
}

static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t granule,
			void *cookie)
{
	struct env *e = cookie;

	e->add_pages++;
	e->last_gather = g;
	if (iova < e->inv_lo)
		e->inv_lo = iova;
	if (iova + granule > e->inv_hi)
		e->inv_hi = iova + granule;
	hold_if_armed(granule);
	if (e->ttl) {
		unsigned lg = (unsigned)__builtin_ctzll(granule);

		q_cmd(e, &(struct iopt_smmuv3_cmd){
			.opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = ASID,
			.addr = iova, .leaf = true, .tg = 1,
			.ttl = 4 - (lg - 3) / 9, .scale = lg - 12, .num = 0 });
		return;
	}
	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA,
					  .asid = ASID, .addr = iova,
					  .leaf = true });
}

static const struct iopt_pgtable_tlb_ops tlb_ops = {
	cb_flush_all, cb_flush_walk, cb_add_page, cb_sync,
};

static void env_setup(struct env *e, bool tlb, bool ttl)
{
	struct iopt_testbed_cfg c;
	uint64_t pa, w[8];

	memset(e, 0, sizeof(*e));
	e->inv_lo = UINT64_MAX;
	e->ttl = ttl;
	/* Memory and the model alone: the test programs it. */
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV3, MEM_BASE, 64u << 20);
	c.v3.httu = 2;			/* access flag and dirty state */
	c.v3.tlb.enable = tlb;
	c.v3.ril = ttl;
	e->tb = tu_testbed(&c);
	e->pm = iopt_testbed_physmem(e->tb);
	e->s = iopt_testbed_smmuv3(e->tb);
	assert_int_equal(iopt_physmem_alloc(e->pm, 1u << 20, &pa), 0);
	/* 16 STEs, 256 commands, 16 events; SMMUEN, CMDQEN. */
	tu_smmuv3_bringup(e->s, &(struct tu_v3_bringup){
		.strtab = STRTAB, .sid_bits = 4, .cmdq = CMDQ, .cmdq_log2 = 8,
		.evtq = EVTQ, .evtq_log2 = 4, .cr0 = 0x9 }, 0);

	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .quirks = IOPT_PGTABLE_QUIRK_HD,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = e->pm,
			       .tlb = &tlb_ops, .tlb_cookie = e };
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };

	assert_int_equal(iopt_pgtable_alloc(&pc, &e->pt), 0);
	assert_int_equal(iopt_smmuv3_cd_from_pgtable(e->pt, ASID, &cd), 0);
	assert_true(cd.ha && cd.hd);
	iopt_smmuv3_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(e->pm, CDTAB, 64), w, 64);
	iopt_smmuv3_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(e->pm, STRTAB + 64, 64), w, 64);
}

static void env_init(struct env *e, bool tlb)
{
	env_setup(e, tlb, false);
}

static void env_fini(struct env *e)
{
	iopt_pgtable_free(e->pt);
	iopt_testbed_destroy(e->tb);
}

/* A device access through the model; it must translate to va + OFF. */
static void dev_access(struct env *e, uint64_t va, bool write)
{
	struct iopt_smmuv3_txn t = { .sid = 1, .priv = true, .addr = va,
				   .write = write };
	struct iopt_smmuv3_resp r;

	assert_int_equal(iopt_smmuv3_translate(e->s, &t, tick(e), &r), 0);
	assert_int_equal(r.fault, 0);
	assert_int_equal(r.oa, va + OFF);
	if (r.ready > e->cycle)
		e->cycle = r.ready;
}

/* The leaf descriptor of va as it sits in memory. The walk only locates
 * it (table address and index); the bits are read raw. */
static uint64_t raw_leaf(struct env *e, uint64_t va)
{
	struct iopt_pgtable_walk w;

	assert_int_equal(iopt_pgtable_walk(e->pt, va, &w), 0);
	assert_true(w.mapped);
	const struct iopt_pgtable_walk_level *l = &w.level[w.nr_levels - 1];
	uint64_t d;

	memcpy(&d, iopt_physmem_ptr(e->pm, l->table_pa + 8ull * l->index, 8), 8);
	return d;
}

static bool raw_dirty(uint64_t d)
{
	return (d & DBM) && !(d & AP2_RDONLY);
}

static bool raw_clean(uint64_t d)
{
	return (d & DBM) && (d & AP2_RDONLY);
}

struct dlog {
	unsigned n;
	uint64_t va[8], size[8];
};

static void rec(uint64_t va, uint64_t size, void *arg)
{
	struct dlog *l = arg;

	if (l->n < 8) {
		l->va[l->n] = va;
		l->size[l->n] = size;
	}
	l->n++;
}

/* Read and clear [va, va + size) with a gather, then sync as a driver
 * does before it uses the report. */
static struct dlog harvest(struct env *e, uint64_t va, uint64_t size)
{
	struct dlog log = { 0 };
	struct iopt_pgtable_gather g;

	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e->pt, va, size, 0, &g, rec,
							   &log), 0);
	if (log.n) {
		/* Every reported leaf is in the gather. */
		for (unsigned i = 0; i < log.n && i < 8; i++) {
			assert_true(g.start <= log.va[i]);
			assert_true(g.last >= log.va[i] + log.size[i] - 1);
		}
	}
	iopt_pgtable_tlb_sync(e->pt);
	return log;
}

/* The scenario, for a 4K page and a 2M block. */
static void test_second_write_is_seen(void **state)
{
	static const uint64_t sizes[] = { 0x1000, 0x200000 };

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		struct env e;
		uint64_t va = 0x40000000, sz = sizes[k];
		struct dlog log;

		env_init(&e, true);
		assert_int_equal(iopt_pgtable_map_pages(e.pt, va, va + OFF, sz, 1,
							IOPT_READ | IOPT_WRITE, NULL), 0);
		assert_true(raw_clean(raw_leaf(&e, va)));
		dev_access(&e, va + 0x10, false);		/* a read: clean */
		assert_true(raw_clean(raw_leaf(&e, va)));
		dev_access(&e, va + 0x10, true);		/* dirty */
		assert_true(raw_dirty(raw_leaf(&e, va)));

		log = harvest(&e, va, sz);
		assert_int_equal(log.n, 1);
		assert_int_equal(log.va[0], va);
		assert_int_equal(log.size[0], sz);
		assert_true(raw_clean(raw_leaf(&e, va)));

		/* The second write: seen by the descriptor, then reported. */
		dev_access(&e, va + sz - 8, true);
		assert_true(raw_dirty(raw_leaf(&e, va)));
		/* Because cleaning invalidated what it cleaned. */
		assert_true(e.add_pages >= 1);
		assert_true(e.inv_lo <= va && e.inv_hi >= va + sz);
		log = harvest(&e, va, sz);
		assert_int_equal(log.n, 1);
		assert_true(raw_clean(raw_leaf(&e, va)));

		/* Nothing written: nothing reported, nothing invalidated. */
		unsigned before = e.add_pages;

		log = harvest(&e, va, sz);
		assert_int_equal(log.n, 0);
		assert_int_equal(e.add_pages, before);
		env_fini(&e);
	}
}

/* A contiguous run (16 x 4K) is one unit: a write anywhere in it makes the
 * run dirty, and the run is reported and cleaned whole. */
static void test_run_is_one_unit(void **state)
{
	struct env e;
	uint64_t va = 0x40000000, run = 0x10000;
	struct dlog log;

	(void)state;
	env_init(&e, true);
	assert_int_equal(iopt_pgtable_map_pages(e.pt, va, va + OFF, run, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	for (unsigned round = 0; round < 3; round++) {
		uint64_t page = va + (5 + round * 4) * 0x1000ull;
		bool any = false;

		dev_access(&e, page, true);
		for (uint64_t p = va; p < va + run; p += 0x1000)
			any |= raw_dirty(raw_leaf(&e, p));
		assert_true(any);
		/* Ask about one page of the run: the whole run comes back. */
		log = harvest(&e, va + 0x3000, 0x1000);
		assert_int_equal(log.n, 1);
		assert_int_equal(log.va[0], va);
		assert_int_equal(log.size[0], run);
		for (uint64_t p = va; p < va + run; p += 0x1000)
			assert_false(raw_dirty(raw_leaf(&e, p)));
	}
	env_fini(&e);
}

/* IOPT_PGTABLE_DIRTY_NO_CLEAR reports and neither cleans nor invalidates; a
 * NULL gather is accepted; bad arguments change nothing. */
static void test_no_clear_and_args(void **state)
{
	struct env e;
	uint64_t va = 0x40000000;
	struct dlog log = { 0 };

	(void)state;
	env_init(&e, true);
	assert_int_equal(iopt_pgtable_map_pages(e.pt, va, va + OFF, 0x1000, 4,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	dev_access(&e, va + 0x2000, true);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, va, 0x4000,
							   IOPT_PGTABLE_DIRTY_NO_CLEAR, NULL, rec,
							   &log), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.va[0], va + 0x2000);
	assert_int_equal(e.add_pages, 0);
	assert_true(raw_dirty(raw_leaf(&e, va + 0x2000)));
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, va, 0x4000, 1u << 5,
							   NULL, rec, &log), -EINVAL);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, va, 0, 0, NULL, rec,
							   &log), -EINVAL);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, 1ull << 48, 0x1000, 0,
							   NULL, rec, &log), -ERANGE);
	assert_true(raw_dirty(raw_leaf(&e, va + 0x2000)));
	assert_int_equal(e.add_pages, 0);
	/* NULL gather: add_page still runs, with the NULL gather. */
	log.n = 0;
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, va, 0x4000, 0, NULL,
							   rec, &log), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(e.add_pages, 1);
	assert_null(e.last_gather);
	iopt_pgtable_tlb_sync(e.pt);
	dev_access(&e, va + 0x2000, true);
	assert_true(raw_dirty(raw_leaf(&e, va + 0x2000)));
	env_fini(&e);
}

/* ---- concurrent cleaning ------------------------------------------------ */

/*
 * Read-and-clear racing an unmapping thread and a "hardware" thread that
 * dirties leaves as an SMMU does (an atomic compare-and-swap clearing
 * AP[2]). Cleaning is a compare-and-swap from the dirty leaf it read, so it
 * never writes into an entry the unmap has just cleared: the mapping thread,
 * which alone maps and unmaps and so knows each page's state, must be able
 * to map every page it unmapped (a stray AP[2] bit left in a cleared entry
 * makes that map fail with -EEXIST). Runs under ThreadSanitizer.
 */
#define NPAGES 64
#define VA0 0x40000000ull

struct race {
	struct iopt_pgtable *pt;
	int stop;			/* atomic */
	unsigned long dirtied;		/* atomic */
	long ops;
	bool mapped[NPAGES];		/* the mapping thread's */
};

static void *race_hw(void *arg)
{
	struct race *r = arg;
	uint64_t rng = 99;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t va = VA0 + (tu_rand(&rng) % NPAGES) * 0x1000;
		struct iopt_pgtable_walk w;

		if (iopt_pgtable_walk(r->pt, va, &w) || !w.mapped)
			continue;
		/* Leaf tables are never freed here (only 4K unmaps), so the
		 * located descriptor stays table memory. */
		const struct iopt_pgtable_walk_level *l = &w.level[w.nr_levels - 1];
		uint64_t *d = (uint64_t *)(uintptr_t)(l->table_pa + 8ull * l->index);
		uint64_t v = __atomic_load_n(d, __ATOMIC_ACQUIRE);

		if ((v & 3) == 3 && (v & DBM) && (v & AP2_RDONLY) &&
		    __atomic_compare_exchange_n(d, &v, v & ~AP2_RDONLY, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&r->dirtied, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *race_harvest(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct iopt_pgtable_gather g;

		iopt_pgtable_gather_init(&g);
		assert_int_equal(iopt_pgtable_read_and_clear_dirty(r->pt, VA0,
								   NPAGES * 0x1000ull, 0,
								   &g, NULL, NULL), 0);
		iopt_pgtable_tlb_sync(r->pt);
	}
	return NULL;
}

/* The mapping thread. */
static void *race_map(void *arg)
{
	struct race *r = arg;
	bool *mapped = r->mapped;
	uint64_t rng = 7;

	/* At least ops operations, and on until the hardware thread has
	 * dirtied something: on a loaded machine it may not have run yet
	 * (no deadline here; ctest's timeout is the only bound). */
	for (long op = 0; op < r->ops ||
	     !__atomic_load_n(&r->dirtied, __ATOMIC_RELAXED); op++) {
		unsigned p = (unsigned)(tu_rand(&rng) % NPAGES);
		uint64_t va = VA0 + p * 0x1000ull;

		if (mapped[p]) {
			assert_int_equal(iopt_pgtable_unmap_pages(r->pt, va, 0x1000, 1, NULL),
					 0x1000);
		} else {
			assert_int_equal(iopt_pgtable_map_pages(r->pt, va, va, 0x1000, 1,
								IOPT_READ | IOPT_WRITE,
								NULL), 0);
		}
		mapped[p] = !mapped[p];
	}
	return NULL;
}

static void test_clean_races_unmap(void **state)
{
	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true,
				.quirks = IOPT_PGTABLE_QUIRK_HD };
	struct race r;
	bool *mapped = r.mapped;
	struct plat_thread hw, hv, mt;

	(void)state;
	r = (struct race){ .ops = tu_stress_ops(100000) };
	assert_int_equal(iopt_pgtable_alloc(&cfg, &r.pt), 0);
	/* Map every page once so that the leaf table exists. */
	assert_int_equal(iopt_pgtable_map_pages(r.pt, VA0, VA0, 0x1000, NPAGES,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	for (int i = 0; i < NPAGES; i++)
		mapped[i] = true;
	/* Every racer is a thread (simulated CPUs run only while the main
	 * thread joins). */
	TU_THREAD_START(&hw, race_hw, &r);
	TU_THREAD_START(&hv, race_harvest, &r);
	TU_THREAD_START(&mt, race_map, &r);
	plat_thread_join(&mt);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	plat_thread_join(&hw);
	plat_thread_join(&hv);
	/* Every page maps again (no stray bits in cleared entries). */
	for (unsigned p = 0; p < NPAGES; p++) {
		uint64_t va = VA0 + p * 0x1000ull;

		if (mapped[p])
			assert_int_equal(iopt_pgtable_unmap_pages(r.pt, va, 0x1000, 1, NULL),
					 0x1000);
	}
	assert_int_equal(iopt_pgtable_map_pages(r.pt, VA0, VA0, 0x1000, NPAGES,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_true(__atomic_load_n(&r.dirtied, __ATOMIC_RELAXED) > 0);
	iopt_pgtable_free(r.pt);
}

#ifndef IOPT_SIM_HARNESS_H
static void count_rec(uint64_t va, uint64_t size, void *arg)
{
	(void)va;
	(void)size;
	(*(unsigned *)arg)++;
}

struct a_arg {
	struct env *e;
	uint64_t va;
};

static void *thread_a(void *p)
{
	struct a_arg *a = p;
	struct iopt_pgtable_gather g;

	pthread_mutex_lock(&ctl.lock);
	ctl.a = pthread_self();
	ctl.armed = true;
	pthread_mutex_unlock(&ctl.lock);
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_unmap_pages(a->e->pt, a->va, 0x1000, 1, &g),
			 0x1000);
	iopt_pgtable_tlb_sync(a->e->pt);
	return NULL;
}

/*
 * A unmaps page 1 of a dirty 2M block: it splits the block and is held in
 * its add_page for the block. Meanwhile H harvests page 0x100 (another
 * page of the block, not A's) through A's new table and syncs. The device
 * then writes that page again: the write must set the dirty state (the
 * harvest's promise), but the model's TLB still holds the writable-dirty
 * 2M block -- H's invalidation had TTL = 3 and the block's own
 * invalidation has not been issued -- so the write goes through it, the
 * descriptor stays clean and the write is never reported.
 */
static void test_harvest_through_split_in_flight(void **state)
{
	struct env e;
	uint64_t va = 0x40000000, p2 = va + 0x100000;
	unsigned n = 0;
	pthread_t th;
	struct a_arg a = { &e, va + 0x1000 };
	struct iopt_pgtable_gather g;

	(void)state;
	env_setup(&e, true, true);
	assert_int_equal(iopt_pgtable_map_pages(e.pt, va, va + OFF, 0x200000, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	dev_access(&e, p2, true);	/* dirty; the TLB caches the block */
	assert_true(raw_dirty(raw_leaf(&e, p2)));

	ctl.release = ctl.held = false;
	assert_int_equal(pthread_create(&th, NULL, thread_a, &a), 0);
	pthread_mutex_lock(&ctl.lock);
	while (!ctl.held)
		pthread_cond_wait(&ctl.cond, &ctl.lock);
	pthread_mutex_unlock(&ctl.lock);

	/* H: A's table is published, its block report not yet issued. */
	iopt_pgtable_gather_init(&g);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, p2, 0x1000, 0, &g,
							   count_rec, &n), 0);
	iopt_pgtable_tlb_sync(e.pt);
	assert_int_equal(n, 1);			/* the split kept it dirty */
	assert_true(raw_clean(raw_leaf(&e, p2)));
	dev_access(&e, p2 + 8, true);		/* the second write */
	bool seen = raw_dirty(raw_leaf(&e, p2));

	pthread_mutex_lock(&ctl.lock);
	ctl.release = true;
	pthread_cond_broadcast(&ctl.cond);
	pthread_mutex_unlock(&ctl.lock);
	pthread_join(th, NULL);
	if (!seen)
		print_error("write after harvest+sync went through the cached "
			    "dirty 2M block: not recorded\n");
	assert_true(seen);
	env_fini(&e);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_write_is_seen),
		cmocka_unit_test(test_run_is_one_unit),
		cmocka_unit_test(test_no_clear_and_args),
		cmocka_unit_test(test_clean_races_unmap),
#ifndef IOPT_SIM_HARNESS_H
		cmocka_unit_test(test_harvest_through_split_in_flight),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
