/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 model under concurrent use, meant to run clean under
 * ThreadSanitizer. A driver thread maps and unmaps pages and 2 MiB chunks
 * of a stage 1 table (unmapping a chunk frees its table through RCU); the
 * table's TLB callbacks drive the model as a kernel driver drives the
 * hardware: add_page queues TLBI_NH_VA (Leaf=1), flush_walk a range
 * TLBI_NH_VA (Leaf=0, so walk caches drop the table), sync queues CMD_SYNC
 * and waits for CONS to pass it. Device threads translate random addresses
 * of the same range meanwhile. The walker reads the tables while they
 * change, so every translation must either fault with F_TRANSLATION or
 * give the output address the mapping scheme assigns (OA = IA + OFF):
 * never another address, never a crash, race or use after free — a table
 * is freed only after its walk-cache invalidation completed. After the
 * last TLBI + CMD_SYNC nothing unmapped translates.
 * IOPT_STRESS_OPS scales the work (default 100000 driver operations).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmu.h>

#include "tutil.h"

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)
#define CMDQ	(MEM_BASE + 0x010000)	/* 256 commands */
#define EVTQ	(MEM_BASE + 0x020000)
#define CDTAB	(MEM_BASE + 0x030000)
#define VA0	0x40000000ull
#define SPAN	(8ull << 21)		/* eight 2 MiB chunks */
#define OFF	0x100000000ull		/* OA = IA + OFF */
#define DEVICES	2

struct shared {
	struct iopt_physmem *pm;
	struct iopt_smmu *s;
	struct iopt_pgtable *pt;
	uint64_t cycle;			/* atomic: the clock all threads share */
	int stop;			/* atomic */
	unsigned long bad;		/* atomic: wrong translations */
	unsigned long ok, faults;	/* atomic */
	uint32_t prod;			/* command queue: the driver thread's */
};

static uint64_t tick(struct shared *sh)
{
	return __atomic_add_fetch(&sh->cycle, 10, __ATOMIC_RELAXED);
}

static void *device(void *arg)
{
	struct shared *sh = arg;
	uint64_t rng = (uint64_t)(uintptr_t)&rng;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		struct iopt_smmu_txn t = { .sid = 1, .priv = true,
					   .addr = VA0 + tu_rand(&rng) % SPAN };
		struct iopt_smmu_resp r;

		if (iopt_smmu_translate(sh->s, &t, tick(sh), &r))
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
		else if (!r.fault && r.oa == t.addr + OFF)
			__atomic_add_fetch(&sh->ok, 1, __ATOMIC_RELAXED);
		else if (r.fault == IOPT_EVT_F_TRANSLATION)
			__atomic_add_fetch(&sh->faults, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Queue one command; publish and drain when the queue is half full. */
static void q_cmd(struct shared *sh, const struct iopt_smmu_cmd *c);

/* Publish PROD and run the model until it has consumed every command. */
static void q_drain(struct shared *sh)
{
	uint64_t cons;

	assert_int_equal(iopt_smmu_mmio_write(sh->s, 0x98, 4, sh->prod, tick(sh)), 0);
	do {
		uint64_t c = tick(sh) + 1000;

		iopt_smmu_run_until(sh->s, c);
		assert_int_equal(iopt_smmu_mmio_read(sh->s, 0x9c, 4, &cons, c), 0);
	} while ((cons & 0x1ff) != sh->prod);
}

static void q_cmd(struct shared *sh, const struct iopt_smmu_cmd *c)
{
	uint64_t w[2];

	assert_int_equal(iopt_smmu_cmd_encode(c, w), 0);
	memcpy(iopt_physmem_ptr(sh->pm, CMDQ + (sh->prod & 255) * 16ull, 16), w, 16);
	sh->prod = (sh->prod + 1) & 511;
	if ((sh->prod & 127) == 0)
		q_drain(sh);
}

/* The table's TLB callbacks (struct iopt_tlb_ops), as a driver's. */
static void cb_sync(void *cookie)
{
	struct shared *sh = cookie;

	q_cmd(sh, &(struct iopt_smmu_cmd){ .opcode = IOPT_CMD_SYNC });
	q_drain(sh);
}

static void cb_flush_all(void *cookie)
{
	q_cmd(cookie, &(struct iopt_smmu_cmd){ .opcode = IOPT_CMD_TLBI_NH_ASID,
					       .asid = 3 });
	cb_sync(cookie);
}

static void cb_flush_walk(uint64_t iova, uint64_t size, uint64_t granule,
			  void *cookie)
{
	/* One range command: 4K granule, 2^scale pages (size is a power
	 * of two of at least a page). */
	(void)granule;
	q_cmd(cookie, &(struct iopt_smmu_cmd){
		.opcode = IOPT_CMD_TLBI_NH_VA, .asid = 3, .addr = iova, .tg = 1,
		.scale = (unsigned)__builtin_ctzll(size) - 12, .num = 0 });
}

static void cb_add_page(struct iopt_gather *g, uint64_t iova, uint64_t granule,
			void *cookie)
{
	(void)g;
	(void)granule;
	q_cmd(cookie, &(struct iopt_smmu_cmd){ .opcode = IOPT_CMD_TLBI_NH_VA,
					       .asid = 3, .addr = iova,
					       .leaf = true });
}

static const struct iopt_tlb_ops tlb_ops = {
	cb_flush_all, cb_flush_walk, cb_add_page, cb_sync,
};

static void test_translate_while_mapping(void **state)
{
	struct shared sh;
	struct iopt_smmu_params p;
	struct iopt_smmu_mem mem;
	uint64_t pa, rng = 11, w[8];
	long ops = tu_stress_ops(100000);
	pthread_t th[DEVICES];

	(void)state;
	memset(&sh, 0, sizeof(sh));
	assert_int_equal(iopt_physmem_create(MEM_BASE, 64u << 20, &sh.pm), 0);
	assert_int_equal(iopt_physmem_alloc(sh.pm, 1u << 20, &pa), 0);
	iopt_smmu_physmem(sh.pm, 10, &mem);
	iopt_smmu_default_params(&p);
	p.tlb.entries = 64;		/* small caches: evictions and refills */
	p.walk.entries = 16;
	p.shared_clock = true;		/* threads tick one clock outside the lock */
	assert_int_equal(iopt_smmu_create(&p, &mem, NULL, NULL, &sh.s), 0);
	assert_int_equal(iopt_smmu_mmio_write(sh.s, 0x80, 8, STRTAB, 0), 0);
	assert_int_equal(iopt_smmu_mmio_write(sh.s, 0x88, 4, 4, 0), 0);
	assert_int_equal(iopt_smmu_mmio_write(sh.s, 0x90, 8, CMDQ | 8, 0), 0);
	assert_int_equal(iopt_smmu_mmio_write(sh.s, 0xa0, 8, EVTQ | 4, 0), 0);
	assert_int_equal(iopt_smmu_mmio_write(sh.s, 0x20, 4, 0x9, 0), 0); /* no EVTQ */
	struct iopt_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = sh.pm,
			       .tlb = &tlb_ops, .tlb_cookie = &sh };
	struct iopt_cd cd;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = CDTAB };

	assert_int_equal(iopt_alloc(&pc, &sh.pt), 0);
	assert_int_equal(iopt_cd_from_pgtable(sh.pt, 3, &cd), 0);
	iopt_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(sh.pm, CDTAB, 64), w, 64);
	iopt_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(sh.pm, STRTAB + 64, 64), w, 64);

	for (int i = 0; i < DEVICES; i++)
		assert_int_equal(pthread_create(&th[i], NULL, device, &sh), 0);
	for (long op = 0; op < ops; op++) {
		uint64_t chunk = VA0 + (tu_rand(&rng) % (SPAN >> 21) << 21);
		uint64_t va = chunk + (tu_rand(&rng) % 512) * 0x1000;

		switch (tu_rand(&rng) % 4) {
		case 0:		/* map one page */
		case 1:
			iopt_map_pages(sh.pt, va, va + OFF, 0x1000, 1, IOPT_READ, NULL);
			break;
		case 2:		/* unmap one page */
			if (iopt_unmap_pages(sh.pt, va, 0x1000, 1, NULL) > 0)
				iopt_tlb_sync(sh.pt);
			break;
		default:	/* unmap the chunk: its table is freed */
			if (iopt_unmap_pages(sh.pt, chunk, 0x200000, 1, NULL) > 0)
				iopt_tlb_sync(sh.pt);
			break;
		}
	}
	/* Unmap everything and invalidate: nothing translates any more. */
	for (uint64_t c = VA0; c < VA0 + SPAN; c += 0x200000)	/* stops at holes */
		iopt_unmap_pages(sh.pt, c, 0x200000, 1, NULL);
	cb_flush_all(&sh);
	for (int i = 0; i < 1000; i++) {
		struct iopt_smmu_txn t = { .sid = 1, .priv = true,
					   .addr = VA0 + tu_rand(&rng) % SPAN };
		struct iopt_smmu_resp r;

		assert_int_equal(iopt_smmu_translate(sh.s, &t, tick(&sh), &r), 0);
		assert_int_equal(r.fault, IOPT_EVT_F_TRANSLATION);
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < DEVICES; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(sh.bad, 0);
	assert_true(sh.ok > 0 && sh.faults > 0);
	iopt_free(sh.pt);
	iopt_smmu_destroy(sh.s);
	iopt_physmem_destroy(sh.pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate_while_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
