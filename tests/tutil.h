/* SPDX-License-Identifier: MIT */
/*
 * Test helpers. Everything here is written from the architecture, not
 * from the library's code, so that tests compare the library against an
 * independent expectation:
 *  - ref_walk(): a reference table walker that starts from the register
 *    values the library reports (TTBR, TCR/VTCR, MAIR) and decodes
 *    descriptors by the Arm ARM's field definitions;
 *  - struct tmem: table memory at non-host physical addresses, counting
 *    allocations, with failure injection and a "device view" that only
 *    changes when the sync callback covers it;
 *  - struct shadow: a sorted list of the mappings a test made.
 */
#ifndef IOPT_TUTIL_H
#define IOPT_TUTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/testbed.h>

/* ---- configuration matrix --------------------------------------------- */

struct tcfg {
	char name[64];
	struct iopt_pgtable_cfg cfg;
};

/* Fill out[] with the LPAE matrix; returns the count. */
size_t tu_lpae_matrix(struct tcfg *out, size_t max);
/* A handful of representative configurations (every format, every LPAE
 * granule, v7s with and without the MediaTek extension) for the longer
 * suites. */
size_t tu_sample(struct tcfg *out, size_t max);

/* ---- reference walker ------------------------------------------------- */

struct ref_walk {
	bool mapped;
	int fault_level;	/* level of the fault when !mapped */
	unsigned level;		/* level of the leaf */
	uint64_t oa;		/* output address of va */
	uint64_t size;		/* leaf size */
	unsigned prot;		/* IOPT_* decoded from the descriptor */
	bool cont;		/* contiguous hint (LPAE) / run (v7s) */
	bool dirty;		/* HD writable-dirty */
	bool ns;		/* NS bit (leaf) */
	bool nstable_all;	/* every table descriptor had NSTable */
	uint64_t desc;		/* the leaf descriptor */
	unsigned tables;	/* table descriptors followed */
};

typedef void *(*tu_p2v_fn)(uint64_t pa, void *ctx);

/* Walk va from the registers of info, reading memory through p2v. */
void ref_walk(const struct iopt_pgtable_info *info, uint32_t quirks, tu_p2v_fn p2v,
	      void *ctx, uint64_t va, struct ref_walk *w);

/* p2v for the default (identity) allocator. */
void *tu_identity_p2v(uint64_t pa, void *ctx);

/* ---- table memory ----------------------------------------------------- */

struct tmem {
	pthread_mutex_t lock;
	uint8_t *host;		/* what the CPU writes */
	uint8_t *dev;		/* what a non-coherent walker sees */
	uint64_t base_pa;
	size_t bytes;
	size_t brk;
	void *free_lists[32];	/* by size lg2 */
	long allocs, frees, live, syncs;
	uint64_t synced_bytes;
	long fail_at;		/* fail the fail_at-th alloc from now (1-based); 0: never */
	bool strict_free;	/* abort on freeing unknown memory */
};

extern const struct iopt_pgtable_mem_ops tmem_ops;

/* bytes of arena at physical base_pa. */
void tmem_init(struct tmem *m, uint64_t base_pa, size_t bytes);
void tmem_destroy(struct tmem *m);
void *tmem_host_p2v(uint64_t pa, void *ctx);
void *tmem_dev_p2v(uint64_t pa, void *ctx);

/* ---- simulated physical memory with failure injection ------------------ */

struct iopt_physmem;

/* Table memory from an iopt_physmem (iopt_physmem_mem_ops()), whose
 * allocations can be made to fail. */
struct fpm {
	struct iopt_physmem *pm;
	long fail_at, count;	/* fail the fail_at-th allocation (1-based) */
	bool fail_all;		/* fail every allocation */
	long failed;		/* allocations refused */
};

extern const struct iopt_pgtable_mem_ops fpm_ops;

/* ---- SMMU models on the testbed ----------------------------------------- */

/* *c for a testbed of memory [base, base + size) and the smmu model alone
 * (defaults of iopt_testbed_default_cfg(), no driver, domain or attach):
 * the test sets the model's parameters and programs it itself. */
void tu_model_cfg(struct iopt_testbed_cfg *c, enum iopt_testbed_smmu smmu,
		  uint64_t base, uint64_t size);
/* The testbed of c; a cmocka failure when create does not return 0. */
struct iopt_testbed *tu_testbed(const struct iopt_testbed_cfg *c);

/* SMMUv3 bring-up at register level, as a driver does it (IHI0070 6.3):
 * a linear stream table of 2^sid_bits STEs, the command and event
 * queues of 2^log2 entries, CR2, IRQ_CTRL, then CR0, whose value CR0ACK
 * must then read. The bases are the queues' physical addresses. */
struct tu_v3_bringup {
	uint64_t strtab;
	unsigned sid_bits;
	uint64_t cmdq;
	unsigned cmdq_log2;
	uint64_t evtq;
	unsigned evtq_log2;
	uint32_t cr2, irq_ctrl, cr0;
};

struct iopt_smmuv3;

/* Program s with b, every access at cycle; cmocka failures on error. */
void tu_smmuv3_bringup(struct iopt_smmuv3 *s, const struct tu_v3_bringup *b,
		       uint64_t cycle);

struct iopt_smmuv3_drv;
struct iopt_smmuv3_drv_domain;
struct iopt_physmem;

/* A stage 1 domain (ASID 1) on drv with a 48-bit, 4K LPAE table in pm
 * behind the driver's TLB ops, attached to sid; cmocka failures on
 * error. The caller frees the table and the domain. */
void tu_smmuv3_s1_domain(struct iopt_smmuv3_drv *drv, struct iopt_physmem *pm,
			 uint32_t sid, struct iopt_smmuv3_drv_domain **dom,
			 struct iopt_pgtable **pt);

/* ---- shadow of mappings ----------------------------------------------- */

struct smap {
	uint64_t va, size, pa;
	unsigned prot;
};

struct shadow {
	struct smap *m;
	size_t n, cap;
};

void shadow_init(struct shadow *s);
void shadow_free(struct shadow *s);
/* Does [va, va + size) overlap any mapping? */
bool shadow_overlaps(const struct shadow *s, uint64_t va, uint64_t size);
void shadow_add(struct shadow *s, uint64_t va, uint64_t size, uint64_t pa,
		unsigned prot);
/* Remove [va, va + size), splitting mappings it covers in part. */
void shadow_remove(struct shadow *s, uint64_t va, uint64_t size);
/* Mapping containing va, or NULL. */
const struct smap *shadow_find(const struct shadow *s, uint64_t va);
/* Bytes from va that are mapped without a hole (up to max). */
uint64_t shadow_mapped_prefix(const struct shadow *s, uint64_t va,
			      uint64_t max);

/* ---- misc ------------------------------------------------------------- */

/* Operations per stress phase: IOPT_STRESS_OPS, or dflt. */
static inline long tu_stress_ops(long dflt)
{
	const char *e = getenv("IOPT_STRESS_OPS");

	return e ? atol(e) : dflt;
}

static inline uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* Expected prot after encoding: what a format can express of prot. */
unsigned tu_expect_prot(enum iopt_pgtable_fmt fmt, uint32_t quirks, unsigned prot);

/* A cmocka check that names the case (a string) it failed in. */
#define TU_CHK(name, c)                                                     \
	do {                                                                \
		if (!(c)) {                                                 \
			print_error("[%s] check failed: %s\n", name, #c);   \
			fail();                                             \
		}                                                           \
	} while (0)

/* Assert (cmocka) that va translates to pa, or is not mapped. */
void tu_expect_pa(struct iopt_pgtable *pt, uint64_t va, uint64_t pa);
void tu_expect_none(struct iopt_pgtable *pt, uint64_t va);
/* Every 4K page p of [va, va + bytes): unmapped if gone[p], else mapped
 * to its address + pa_off (checked at byte offset off in the page). */
void tu_expect_pages(struct iopt_pgtable *pt, uint64_t va, uint64_t bytes,
		     const uint8_t *gone, uint64_t off, uint64_t pa_off);

#endif
