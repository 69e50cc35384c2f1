/* SPDX-License-Identifier: MIT */
/*
 * iopt_pgtable_read_and_clear_dirty() through a split in flight
 * (docs/pgtable.md, concurrency guarantee 10): thread A unmaps one page of a
 * dirty 2M block that the SMMU model has cached and is held inside its add_page
 * for the block; the harvest of another page of that block, through A's new
 * table, must report the block too, so that after the harvest and its sync the
 * device's next write to the page sets the dirty state again instead of going
 * through the cached writable-dirty block.
 */
#define _POSIX_C_SOURCE 200809L
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

#include <pthread.h>
#include "tutil.h"

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
};

/* The splitter's add_page for the 2M block is held until released. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t a;
	bool armed, held, release;
} ctl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };


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

	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC });
	q_drain(e);
}
static void cb_flush_all(void *cookie)
{
	struct env *e = cookie;

	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID,
					  .asid = ASID });
	cb_sync(cookie);
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	struct env *e = cookie;

	(void)granule;
	for (uint64_t a = iova; a - iova < size; a += 0x1000)
		q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA,
						  .asid = ASID, .addr = a });
}

/* As the SMMUv3 driver does (smmuv3_tlb.c op_add_page): one range
 * TLBI_NH_VA, Leaf = 1, TTL from the granule (the level hint). */
static void cb_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t granule,
			void *cookie)
{
	struct env *e = cookie;
	unsigned lg = (unsigned)__builtin_ctzll(granule);

	(void)g;
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
	q_cmd(e, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA,
					  .asid = ASID, .addr = iova,
					  .leaf = true, .tg = 1,
					  .ttl = 4 - (lg - 3) / 9,
					  .scale = lg - 12, .num = 0 });
}

static const struct iopt_pgtable_tlb_ops tlb_ops = {
	cb_flush_all, cb_flush_walk, cb_add_page, cb_sync,
};

static void env_init(struct env *e, bool tlb)
{
	struct iopt_testbed_cfg c;
	uint64_t pa, w[8];

	memset(e, 0, sizeof(*e));
	/* Memory and the model alone: the test programs it. */
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV3, MEM_BASE, 64u << 20);
	c.v3.httu = 2;			/* access flag and dirty state */
	c.v3.tlb.enable = tlb;
	c.v3.ril = true;
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
	env_init(&e, true);
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
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(e.pt, p2, 0x1000, 0, &g, rec,
							   &n), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_harvest_through_split_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
