/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer over the SMMUv3 driver and model. Every expectation is a
 * device transaction through the model (its TLB, its walker), compared
 * with the physical address and permissions the test asked for:
 *  - after map a device access at the IOVA reaches the right PA with the
 *    right permissions; after a strict unmap it faults (F_TRANSLATION,
 *    IHI0070 7.3.12) although the TLB held it; after a lazy unmap it may
 *    hit until a flush-all, and a new mapping at a reused IOVA never
 *    translates to the old PA;
 *  - PCI-like devices below 4 GiB first, forcedac, the mask;
 *  - bad arguments (nothing changes), unmapping what is not mapped,
 *    IOVA exhaustion under each policy, host and table allocation failure
 *    injected at each allocation, a sync that never completes, map_sg
 *    all-or-nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tutil.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define SID		5
#define PAGE		4096ull
#define MASK64		(~0ull)
#define MASK32		0xffffffffull

/* IHI0070 constants, written here from the architecture. */
#define A_CR0		0x20
#define A_CR0_SMMUEN	0x1
#define A_CR0_EVENTQEN	0x4
#define A_CR0_CMDQEN	0x8
#define EVT_F_TRANSLATION 0x10
#define EVT_F_PERMISSION 0x13

/* ---- host allocation failure: the n-th allocation of this thread ------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

static __thread long fail_host_at;	/* 0: never */
static __thread long host_allocs;

static bool host_fail(void)
{
	return fail_host_at && ++host_allocs == fail_host_at;
}

void *__wrap_malloc(size_t n)
{
	return host_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return host_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return host_fail() ? NULL : __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	return host_fail() ? NULL : __real_aligned_alloc(a, n);
}

/* ---- the rig ------------------------------------------------------------ */

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_smmuv3_drv *drv;
	struct fpm fm;
	struct iopt_dma *d;
};

static void rig_up(struct rig *r, enum iopt_smmuv3_drv_cmdq cq,
		   enum iopt_smmuv3_drv_sync sy, uint64_t host_timeout_ns)
{
	struct iopt_testbed_cfg c;

	memset(r, 0, sizeof(*r));
	/* Memory, model and driver; the tests create the domains. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	c.drv3.cmdq = cq;
	c.drv3.sync = sy;
	if (host_timeout_ns)
		c.drv3.host_timeout_ns = host_timeout_ns;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv3(r->tb);
	r->drv = iopt_testbed_smmuv3_drv(r->tb);
	r->fm.pm = r->pm;
}

static void dma_cfg(struct rig *r, struct iopt_dma_cfg *c, enum iopt_inval pol)
{
	assert_int_equal(iopt_testbed_dma_cfg(r->tb, c), 0);
	c->pt.mem = &fpm_ops;
	c->pt.mem_ctx = &r->fm;
	c->policy = pol;
	c->nr_cpus = 4;
	c->check_unmap = true;
}

static void dma_up(struct rig *r, const struct iopt_dma_cfg *c)
{
	assert_int_equal(iopt_dma_create(c, &r->d), 0);
	assert_int_equal(iopt_dma_attach(r->d, SID), 0);
}

static void rig_down(struct rig *r)
{
	iopt_dma_destroy(r->d);
	iopt_testbed_destroy(r->tb);
}

static struct iopt_smmuv3_resp dev(struct rig *r, uint64_t addr, bool write)
{
	struct iopt_smmuv3_txn t = { .sid = SID, .addr = addr, .write = write };
	struct iopt_smmuv3_resp resp;

	assert_int_equal(iopt_smmuv3_drv_translate(r->drv, &t, &resp), 0);
	return resp;
}

/* The device reads (and writes, if allowed) [iova, iova + len) -> pa. */
static void expect_mapped(struct rig *r, uint64_t iova, uint64_t pa,
			  uint64_t len, bool writable)
{
	for (uint64_t o = 0;; o = o + PAGE < len - 1 ? o + PAGE : len - 1) {
		struct iopt_smmuv3_resp x = dev(r, iova + o, false);

		assert_int_equal(x.fault, 0);
		assert_int_equal(x.oa, pa + o);
		x = dev(r, iova + o, true);
		if (writable) {
			assert_int_equal(x.fault, 0);
			assert_int_equal(x.oa, pa + o);
		} else {
			assert_int_equal(x.fault, EVT_F_PERMISSION);
		}
		if (o == len - 1)
			break;
	}
}

static void expect_fault(struct rig *r, uint64_t iova, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += PAGE)
		assert_int_equal(dev(r, iova + o, false).fault, EVT_F_TRANSLATION);
}

/* ---- map, device, unmap, per policy ------------------------------------- */

static void map_unmap_policy(enum iopt_inval pol, enum iopt_pgtable_fmt fmt,
			     uint32_t granule,
			     enum iopt_smmuv3_drv_cmdq cq,
			     enum iopt_smmuv3_drv_sync sy)
{
	struct iopt_dma_cfg c;
	struct iopt_dma_stats st;
	struct rig r;
	uint64_t iova, iova2, blk;
	const uint64_t pa = 0x123450123ull;	/* offset 0x123 in its page */

	rig_up(&r, cq, sy, 0);
	dma_cfg(&r, &c, pol);
	c.pt.fmt = fmt;
	c.pt.granule = granule;
	dma_up(&r, &c);

	/* Three pages' worth from an unaligned address, read-only. */
	assert_int_equal(iopt_dma_map(r.d, pa, 2 * PAGE + 5, IOPT_READ, MASK64,
				      0, &iova), 0);
	assert_int_equal(iova & (PAGE - 1), 0x123);
	expect_mapped(&r, iova, pa, 2 * PAGE + 5, false);
	/* A 2 MiB buffer, aligned: mapped (as a block) read/write. */
	assert_int_equal(iopt_dma_map(r.d, 0x40000000, 2u << 20,
				      IOPT_READ | IOPT_WRITE, MASK64, 1, &blk), 0);
	assert_int_equal(blk & ((2u << 20) - 1), 0);
	expect_mapped(&r, blk, 0x40000000, 2u << 20, true);

	assert_int_equal(iopt_dma_unmap(r.d, iova, 2 * PAGE + 5, 0), 0);
	assert_int_equal(iopt_dma_unmap(r.d, blk, 2u << 20, 1), 0);
	if (pol == IOPT_INVAL_STRICT) {
		/* The TLB held them; strict unmap invalidated and synced. */
		expect_fault(&r, iova & ~(PAGE - 1), 3 * PAGE);
		expect_fault(&r, blk, 2u << 20);
	} else {
		/* It may still hit the TLB, but only with the old PA. */
		struct iopt_smmuv3_resp x = dev(&r, iova, false);

		assert_true(x.fault == EVT_F_TRANSLATION ||
			    (x.fault == 0 && x.oa == pa));
		assert_int_equal(iopt_dma_flush(r.d), 0);
		expect_fault(&r, iova & ~(PAGE - 1), 3 * PAGE);
		expect_fault(&r, blk, 2u << 20);
	}
	/* Unmapping it again is reported and changes nothing. */
	assert_int_equal(iopt_dma_unmap(r.d, iova, 2 * PAGE + 5, 0), -ENOENT);

	/* Map again: a reused IOVA translates to the new PA only. A
	 * mapping that stays keeps the last-level table alive, so that
	 * unmaps do not remove tables (whose walk-cache invalidation would
	 * also remove the leaves from the TLB). */
	uint64_t pin;

	assert_int_equal(iopt_dma_map(r.d, 0x7000, PAGE, IOPT_READ, MASK64, 0,
				      &pin), 0);
	for (int i = 0; i < 600; i++) {
		uint64_t npa = 0x200000000ull + (uint64_t)i * PAGE;

		assert_int_equal(iopt_dma_map(r.d, npa, PAGE, IOPT_READ, MASK64,
					      (unsigned)i & 3, &iova2), 0);
		assert_int_equal(dev(&r, iova2, false).oa, npa);
		assert_int_equal(iopt_dma_unmap(r.d, iova2, PAGE, (unsigned)i & 3), 0);
	}
	assert_int_equal(dev(&r, pin, false).oa, 0x7000);
	iopt_dma_get_stats(r.d, &st);
	assert_int_equal(st.maps, 603);
	assert_int_equal(st.unmaps, 602);
	assert_int_equal(st.bad_unmaps, 1);
	assert_int_equal(st.inv_errors, 0);
	if (pol == IOPT_INVAL_LAZY || pol == IOPT_INVAL_SINGLE)
		assert_true(st.flush_alls >= 1);
	rig_down(&r);
}

static void test_map_unmap_matrix(void **state)
{
	(void)state;
	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++)
		for (int s2 = 0; s2 < 2; s2++)
			map_unmap_policy(pol, s2 ? IOPT_ARM_64_LPAE_S2 :
					 IOPT_ARM_64_LPAE_S1, 4096, IOPT_SMMUV3_DRV_CMDQ_LOCKFREE,
					 IOPT_SMMUV3_DRV_SYNC_MSI);
	map_unmap_policy(IOPT_INVAL_STRICT, IOPT_ARM_64_LPAE_S1, 4096,
			 IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_CONS);
	/* The 64K granule: a 2 MiB buffer is a contiguous run of 64K
	 * pages or 32 pages, and sizes round to 64K. */
	map_unmap_policy(IOPT_INVAL_LAZY, IOPT_ARM_64_LPAE_S1, 65536,
			 IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_CONS);
	map_unmap_policy(IOPT_INVAL_STRICT, IOPT_ARM_64_LPAE_S2, 65536,
			 IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_CONS);
}

/* ---- DMA masks, PCI devices ----------------------------------------------- */

static void test_pci_below_4g(void **state)
{
	struct iopt_dma_cfg c;
	struct rig r;
	uint64_t iova;

	(void)state;
	for (int forcedac = 0; forcedac < 2; forcedac++) {
		rig_up(&r, 0, 0, 0);
		dma_cfg(&r, &c, IOPT_INVAL_STRICT);
		c.dev_flags = IOPT_DMA_DEV_PCI | (forcedac ? IOPT_DMA_FORCEDAC : 0);
		/* 8 pages below 4 GiB, the rest above. */
		c.iova_start = (1ull << 32) - 8 * PAGE;
		c.iova_end = 1ull << 36;
		dma_up(&r, &c);
		for (int i = 0; i < 10; i++) {
			assert_int_equal(iopt_dma_map(r.d, 0x1000 * (uint64_t)i, PAGE,
						      IOPT_READ, MASK64, 0, &iova), 0);
			if (forcedac || i >= 8)
				assert_true(iova >= 1ull << 32);
			else
				assert_true(iova < 1ull << 32);
			assert_int_equal(dev(&r, iova, false).oa, 0x1000 * (uint64_t)i);
		}
		/* A 32-bit mask never gets an address above it. */
		assert_int_equal(iopt_dma_map(r.d, 0, PAGE, IOPT_READ, MASK32, 0,
					      &iova), forcedac ? 0 : -ENOMEM);
		if (forcedac)
			assert_true(iova <= MASK32);
		rig_down(&r);
	}
}

/* ---- bad arguments --------------------------------------------------------- */

static void test_bad_arguments(void **state)
{
	struct iopt_dma_cfg c;
	struct iopt_dma_stats st;
	struct iopt_dma *d2;
	struct rig r;
	uint64_t iova, used;

	(void)state;
	rig_up(&r, 0, 0, 0);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	c.ops = NULL;
	assert_int_equal(iopt_dma_create(&c, &d2), -EINVAL);
	dma_cfg(&r, &c, 9);
	assert_int_equal(iopt_dma_create(&c, &d2), -EINVAL);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	c.pt.granule = 8192;
	assert_int_equal(iopt_dma_create(&c, &d2), -EINVAL);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	c.iova_start = 0x1800;	/* not a multiple of the granule */
	assert_int_equal(iopt_dma_create(&c, &d2), -EINVAL);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	c.pt.fmt = IOPT_ARM_V7S;
	c.pt.ias = 32;
	c.pt.oas = 32;
	assert_int_equal(iopt_dma_create(&c, &d2), -EINVAL);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	dma_up(&r, &c);
	used = iopt_physmem_used(r.pm);

	assert_int_equal(iopt_dma_map(r.d, 0x1000, 0, IOPT_READ, MASK64, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, ~0ull - 10, 100, IOPT_READ, MASK64, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, 0, MASK64, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_CACHE, MASK64, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ | 0x100, MASK64, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, 0xfff0ffff, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, 0xfff, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, MASK64, 4, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, MASK64, 0, NULL), -EINVAL);
	/* Beyond the 48-bit output size: the page table's -ERANGE, and the
	 * IOVA is given back. */
	assert_int_equal(iopt_dma_map(r.d, 1ull << 48, PAGE, IOPT_READ, MASK64, 0, &iova), -ERANGE);
	assert_int_equal(iopt_physmem_used(r.pm), used);

	/* Unmapping what is not mapped, twice, or with the wrong size. */
	assert_int_equal(iopt_dma_unmap(r.d, 0x7000000, PAGE, 0), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, 0x5000, 4 * PAGE, IOPT_READ, MASK64, 0, &iova), 0);
	assert_int_equal(iopt_dma_unmap(r.d, iova, 2 * PAGE, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, iova, 0, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE, 7), -EINVAL);
	expect_mapped(&r, iova, 0x5000, 4 * PAGE, false);	/* still there */
	assert_int_equal(iopt_dma_unmap(r.d, iova, 4 * PAGE, 0), 0);
	assert_int_equal(iopt_dma_unmap(r.d, iova, 4 * PAGE, 0), -ENOENT);
	iopt_dma_get_stats(r.d, &st);
	assert_int_equal(st.maps, 1);
	assert_int_equal(st.unmaps, 1);
	assert_int_equal(st.map_errors, 10);	/* NULL iova included */
	assert_int_equal(st.bad_unmaps, 5);
	rig_down(&r);
}

/*
 * The edges of the one-granule map and unmap (the calls' fast paths),
 * lazy and without check_unmap, in a 16-page IOVA space [64 KiB, 128 KiB)
 * whose end - 1 is a mask: each argument just inside and just outside
 * what the API documents, and the space's last page. Expectations are
 * the documented errors and the device's translations.
 */
static void test_one_granule_edges(void **state)
{
	const uint64_t start = 0x10000, end = 0x20000, pa = 0x40123;
	struct iopt_dma_cfg c;
	struct iopt_dma_stats st;
	struct rig r;
	uint64_t iova, two, got[16], used;
	bool last = false;

	(void)state;
	rig_up(&r, 0, 0, 0);
	dma_cfg(&r, &c, IOPT_INVAL_LAZY);
	c.check_unmap = false;
	c.iova_start = start;
	c.iova_end = end;
	dma_up(&r, &c);
	used = iopt_physmem_used(r.pm);

	/* Refused: size 0, wrapping, CPU = nr_cpus, prot without R/W or with
	 * an unknown bit, a mask that is not 2^n - 1 or below the space. */
	assert_int_equal(iopt_dma_map(r.d, pa, 0, IOPT_READ, end - 1, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, ~0ull, 2, IOPT_READ, end - 1, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, pa, 1, IOPT_READ, end - 1, 4, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, pa, 1, IOPT_CACHE, end - 1, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, pa, 1, IOPT_READ | (IOPT_PROT_MASK + 1),
				      end - 1, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, pa, 1, IOPT_READ, end - 2, 0, &iova), -EINVAL);
	assert_int_equal(iopt_dma_map(r.d, pa, 1, IOPT_READ, start - 1, 0, &iova), -EINVAL);
	/* The last byte of the physical space, one byte: beyond the 48-bit
	 * output size (the page table's -ERANGE), nothing kept. */
	assert_int_equal(iopt_dma_map(r.d, ~0ull, 1, IOPT_READ, end - 1, 0, &iova), -ERANGE);
	assert_int_equal(iopt_physmem_used(r.pm), used);

	/* The rest of pa's page: one page; one byte more: two. */
	assert_int_equal(iopt_dma_map(r.d, pa, PAGE - 0x123, IOPT_READ | IOPT_CACHE,
				      end - 1, 3, &iova), 0);
	assert_int_equal(iova & (PAGE - 1), 0x123);
	expect_mapped(&r, iova, pa, PAGE - 0x123, false);
	assert_int_equal(iopt_dma_map(r.d, pa, PAGE - 0x123 + 1, IOPT_READ, MASK64,
				      IOPT_IOVA_CPU_SELF, &two), 0);
	expect_mapped(&r, two, pa, PAGE - 0x123 + 1, false);
	assert_true(two >= start && two + PAGE - 0x123 + 1 <= end);
	/* Unmap refused: size 0, CPU = nr_cpus, below or at the end of the
	 * space; the mapping stays. */
	assert_int_equal(iopt_dma_unmap(r.d, iova, 0, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE - 0x123, 4), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, start - PAGE, PAGE, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, end, PAGE, 0), -EINVAL);
	assert_int_equal(iopt_dma_unmap(r.d, end + 0x123, 1, 0), -EINVAL);
	expect_mapped(&r, iova, pa, PAGE - 0x123, false);
	assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE - 0x123, 3), 0);
	assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE - 0x123, 3), -ENOENT);
	assert_int_equal(iopt_dma_unmap(r.d, two, PAGE - 0x123 + 1, 0), 0);

	/* Every page of the space, one page each (the flush queue gives the
	 * two above back when the space runs out): the last page is one of
	 * them and unmaps as any other. */
	assert_int_equal(iopt_dma_flush(r.d), 0);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(iopt_dma_map(r.d, 0x80000 + (uint64_t)i * PAGE, PAGE,
					      IOPT_READ | IOPT_WRITE, end - 1,
					      (unsigned)i & 3, &got[i]), 0);
		assert_true(got[i] >= start && got[i] < end);
		last |= got[i] == end - PAGE;
	}
	assert_true(last);
	assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, end - 1, 0,
				      &iova), -ENOMEM);
	for (int i = 0; i < 16; i++) {
		expect_mapped(&r, got[i], 0x80000 + (uint64_t)i * PAGE, PAGE, true);
		assert_int_equal(iopt_dma_unmap(r.d, got[i], PAGE, (unsigned)i & 3), 0);
	}
	assert_int_equal(iopt_dma_unmap(r.d, end - PAGE, PAGE, 0), -ENOENT);
	assert_int_equal(iopt_dma_flush(r.d), 0);
	for (int i = 0; i < 16; i++)
		expect_fault(&r, got[i], PAGE);

	iopt_dma_get_stats(r.d, &st);
	assert_int_equal(st.maps, 18);
	assert_int_equal(st.unmaps, 18);
	assert_int_equal(st.map_errors, 8 + 1);
	assert_int_equal(st.bad_unmaps, 5 + 2);
	assert_int_equal(st.held, 0);
	rig_down(&r);
}

/* ---- IOVA exhaustion under each policy -------------------------------------- */

static void test_exhaustion(void **state)
{
	(void)state;
	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++) {
		struct iopt_dma_cfg c;
		struct iopt_dma_stats st;
		struct rig r;
		uint64_t iova[16], extra, flushes;

		rig_up(&r, 0, 0, 0);
		dma_cfg(&r, &c, pol);
		c.iova_start = 0x100000;
		c.iova_end = 0x100000 + 16 * PAGE;	/* 16 pages */
		c.fq_entries = 64;
		dma_up(&r, &c);
		for (int i = 0; i < 16; i++) {
			assert_int_equal(iopt_dma_map(r.d, 0x10000000 + i * PAGE, PAGE,
						      IOPT_READ, MASK64, 0, &iova[i]), 0);
			assert_int_equal(dev(&r, iova[i], false).oa,
					 0x10000000 + i * PAGE);
		}
		assert_int_equal(iopt_dma_map(r.d, 0x20000000, PAGE, IOPT_READ,
					      MASK64, 0, &extra), -ENOMEM);
		/* One unmapped: the next map gets it, after a flush-all under
		 * the lazy policies, and translates to the new PA. */
		assert_int_equal(iopt_dma_unmap(r.d, iova[3], PAGE, 1), 0);
		iopt_dma_get_stats(r.d, &st);
		flushes = st.flush_alls;
		if (pol != IOPT_INVAL_STRICT)
			assert_int_equal(st.held, 1);
		assert_int_equal(iopt_dma_map(r.d, 0x20000000, PAGE, IOPT_READ,
					      MASK64, 2, &extra), 0);
		assert_int_equal(extra, iova[3]);
		assert_int_equal(dev(&r, extra, false).oa, 0x20000000);
		iopt_dma_get_stats(r.d, &st);
		assert_int_equal(st.flush_alls,
				 flushes + (pol == IOPT_INVAL_STRICT ? 0 : 1));
		assert_int_equal(st.held, 0);
		rig_down(&r);
	}
}

/* ---- allocation failure at each allocation ---------------------------------- */

static void test_create_allocfail(void **state)
{
	struct iopt_dma_cfg c;
	struct rig r;
	int ret;

	(void)state;
	rig_up(&r, 0, 0, 0);
	uint64_t used = iopt_physmem_used(r.pm);

	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++) {
		long n;

		dma_cfg(&r, &c, pol);
		/* Host allocations. */
		for (n = 1;; n++) {
			host_allocs = 0;
			fail_host_at = n;
			ret = iopt_dma_create(&c, &r.d);
			fail_host_at = 0;
			if (!ret)
				break;
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(iopt_physmem_used(r.pm), used);
			assert_true(n < 1000);
		}
		assert_true(n > 3);	/* several allocations were failed */
		iopt_dma_destroy(r.d);
		/* Table memory. */
		for (n = 1;; n++) {
			r.fm.count = 0;
			r.fm.fail_at = n;
			ret = iopt_dma_create(&c, &r.d);
			r.fm.fail_at = 0;
			if (!ret)
				break;
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(iopt_physmem_used(r.pm), used);
		}
		assert_true(n > 1);
		iopt_dma_destroy(r.d);
		assert_int_equal(iopt_physmem_used(r.pm), used);
	}
	r.d = NULL;
	rig_down(&r);
}

static void test_map_allocfail(void **state)
{
	(void)state;
	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++) {
		struct iopt_dma_cfg c;
		struct iopt_dma_stats st;
		struct rig r;
		uint64_t iova, first = 0;
		long n;
		int ret;

		rig_up(&r, 0, 0, 0);
		dma_cfg(&r, &c, pol);
		dma_up(&r, &c);
		/* A 4 MiB + 3-page buffer at an odd page needs new tables at
		 * two levels; fail each table allocation in turn. */
		for (n = 1;; n++) {
			r.fm.count = 0;
			r.fm.fail_at = n;
			ret = iopt_dma_map(r.d, 0x40003000, (4u << 20) + 3 * PAGE,
					   IOPT_READ, MASK64, 0, &iova);
			r.fm.fail_at = 0;
			if (!ret)
				break;
			assert_int_equal(ret, -ENOMEM);
			/* The IOVA is freed and the next try gets the same
			 * range (the allocator is deterministic): anything
			 * left mapped there would fail it with -EEXIST. */
			assert_true(n < 100);
		}
		assert_true(n > 1);
		expect_mapped(&r, iova, 0x40003000, (4u << 20) + 3 * PAGE, false);
		first = iova;
		assert_int_equal(iopt_dma_unmap(r.d, iova, (4u << 20) + 3 * PAGE, 0), 0);
		/* Host allocation failures in map/unmap paths (flush queue
		 * growth under EXHAUST, caches): every call either works or
		 * fails cleanly. */
		for (n = 1; n < 40; n++) {
			host_allocs = 0;
			fail_host_at = n;
			ret = iopt_dma_map(r.d, 0x50000000, PAGE, IOPT_READ, MASK64, 1, &iova);
			fail_host_at = 0;
			if (ret) {
				assert_int_equal(ret, -ENOMEM);
				continue;
			}
			assert_int_equal(dev(&r, iova, false).oa, 0x50000000);
			host_allocs = 0;
			fail_host_at = n;
			ret = iopt_dma_unmap(r.d, iova, PAGE, 1);
			fail_host_at = 0;
			assert_int_equal(ret, 0);
		}
		(void)first;
		iopt_dma_get_stats(r.d, &st);
		assert_int_equal(st.inv_errors, 0);
		assert_int_equal(st.bad_unmaps, 0);
		rig_down(&r);
	}
}

/* ---- a sync that never completes -------------------------------------------- */

static void cmdq_enable(struct rig *r, bool on)
{
	assert_int_equal(iopt_smmuv3_mmio_write(r->s, A_CR0, 4,
						A_CR0_SMMUEN | A_CR0_EVENTQEN |
						(on ? A_CR0_CMDQEN : 0),
						iopt_smmuv3_drv_cycle(r->drv)), 0);
}

static void test_sync_timeout(void **state)
{
	(void)state;
	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++) {
		struct iopt_dma_cfg c;
		struct iopt_dma_stats st;
		struct iopt_smmuv3_drv_stats ds;
		struct rig r;
		uint64_t iova, iova2;

		rig_up(&r, 0, pol & 1, 30000000);	/* 30 ms host bound */
		dma_cfg(&r, &c, pol);
		c.iova_start = 0x100000;
		c.iova_end = 0x100000 + 2 * PAGE;
		dma_up(&r, &c);
		assert_int_equal(iopt_dma_map(r.d, 0x30000000, PAGE, IOPT_READ,
					      MASK64, 0, &iova), 0);
		assert_int_equal(dev(&r, iova, false).oa, 0x30000000);
		cmdq_enable(&r, false);
		if (pol == IOPT_INVAL_STRICT) {
			assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE, 0), -ETIMEDOUT);
		} else {
			assert_int_equal(iopt_dma_unmap(r.d, iova, PAGE, 0), 0);
			assert_int_equal(iopt_dma_flush(r.d), -ETIMEDOUT);
		}
		/* The stale translation may still be cached: no map may reuse
		 * any IOVA before a flush-all completes. */
		assert_int_equal(iopt_dma_map(r.d, 0x31000000, PAGE, IOPT_READ,
					      MASK64, 0, &iova2), -ETIMEDOUT);
		iopt_smmuv3_drv_get_stats(r.drv, &ds);
		assert_true(ds.sync_timeouts >= 2);
		cmdq_enable(&r, true);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(iopt_dma_map(r.d, 0x32000000 + i * PAGE, PAGE,
						      IOPT_READ, MASK64, 0, &iova2), 0);
			assert_int_equal(dev(&r, iova2, false).oa, 0x32000000 + i * PAGE);
		}
		iopt_dma_get_stats(r.d, &st);
		assert_true(st.inv_errors >= 2);
		rig_down(&r);
	}
}

/* ---- scatter lists --------------------------------------------------------- */

static void test_map_sg(void **state)
{
	(void)state;
	for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++) {
		struct iopt_dma_cfg c;
		struct iopt_dma_stats st;
		struct rig r;
		uint64_t iova, total;
		long n;
		int ret;
		/* Starts at an offset, ends mid-page; a 2 MiB segment between. */
		const struct iopt_dma_seg sg[4] = {
			{ 0x10000800, 0x800 },
			{ 0x20003000, 3 * PAGE },
			{ 0x40000000, 2u << 20 },
			{ 0x50007000, 0x10 },
		};
		const struct iopt_dma_seg bad1[2] = {
			{ 0x10000000, 0x800 }, { 0x20000000, PAGE } };
		const struct iopt_dma_seg bad2[2] = {
			{ 0x10000000, PAGE }, { 0x20000010, PAGE } };
		const struct iopt_dma_seg bad3[2] = {
			{ 0x10000000, PAGE }, { 0x20000000, 0 } };

		rig_up(&r, 0, 0, 0);
		dma_cfg(&r, &c, pol);
		dma_up(&r, &c);
		assert_int_equal(iopt_dma_map_sg(r.d, bad1, 2, IOPT_READ, MASK64, 0, &iova, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, bad2, 2, IOPT_READ, MASK64, 0, &iova, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, bad3, 2, IOPT_READ, MASK64, 0, &iova, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, sg, 0, IOPT_READ, MASK64, 0, &iova, &total), -EINVAL);

		/* Table allocation failing at each point: nothing stays. */
		for (n = 1;; n++) {
			r.fm.count = 0;
			r.fm.fail_at = n;
			ret = iopt_dma_map_sg(r.d, sg, 4, IOPT_READ | IOPT_WRITE,
					      MASK64, 0, &iova, &total);
			r.fm.fail_at = 0;
			if (!ret)
				break;
			assert_int_equal(ret, -ENOMEM);
			assert_true(n < 100);
		}
		assert_true(n > 1);
		assert_int_equal(iova & (PAGE - 1), 0x800);
		assert_int_equal(total, 0x800 + 3 * PAGE + (2u << 20) + 0x10);
		/* Each segment follows the previous one in IOVA space. */
		uint64_t v = iova;

		expect_mapped(&r, v, sg[0].paddr, sg[0].len, true);
		v += sg[0].len;
		expect_mapped(&r, v, sg[1].paddr, sg[1].len, true);
		v += sg[1].len;
		expect_mapped(&r, v, sg[2].paddr, sg[2].len, true);
		v += sg[2].len;
		expect_mapped(&r, v, sg[3].paddr, sg[3].len, true);
		assert_int_equal(v + sg[3].len, iova + total);
		assert_int_equal(iopt_dma_unmap_sg(r.d, iova, total, 0), 0);
		assert_int_equal(iopt_dma_flush(r.d), 0);
		expect_fault(&r, iova & ~(PAGE - 1), total);
		iopt_dma_get_stats(r.d, &st);
		assert_int_equal(st.maps, 1);
		assert_int_equal(st.unmaps, 1);
		rig_down(&r);
	}
}

/* A failed map_sg leaves no translation: fail late, then look. */
static void test_map_sg_nothing_left(void **state)
{
	struct iopt_dma_cfg c;
	struct rig r;
	uint64_t iova, total;
	/* The third segment is beyond the 40-bit output size. */
	const struct iopt_dma_seg sg[3] = {
		{ 0x10000000, 4 * PAGE },
		{ 0x20000000, 4 * PAGE },
		{ 1ull << 40, PAGE },
	};

	(void)state;
	rig_up(&r, 0, 0, 0);
	dma_cfg(&r, &c, IOPT_INVAL_STRICT);
	c.pt.oas = 40;
	dma_up(&r, &c);
	/* Learn the IOVA the next map of this size gets ... */
	assert_int_equal(iopt_dma_map(r.d, 0x30000000, 9 * PAGE, IOPT_READ, MASK64,
				      0, &iova), 0);
	expect_mapped(&r, iova, 0x30000000, 9 * PAGE, false);
	assert_int_equal(iopt_dma_unmap(r.d, iova, 9 * PAGE, 0), 0);
	/* ... and since it comes from the cache, map_sg gets it too. */
	assert_int_equal(iopt_dma_map_sg(r.d, sg, 3, IOPT_READ, MASK64, 0,
					 &iova, &total), -ERANGE);
	expect_fault(&r, iova, 9 * PAGE);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_unmap_matrix),
		cmocka_unit_test(test_pci_below_4g),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_one_granule_edges),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_create_allocfail),
		cmocka_unit_test(test_map_allocfail),
		cmocka_unit_test(test_sync_timeout),
		cmocka_unit_test(test_map_sg),
		cmocka_unit_test(test_map_sg_nothing_left),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
