/* SPDX-License-Identifier: MIT */
/*
 * The DMA layer over both drivers: every test body runs over the SMMUv3
 * driver and model and over the SMMUv2 driver and model, and asserts the
 * same behaviour of both. Expectations are independent of the code under
 * test:
 *  - a device transaction through the model (its TLB and walker) reaches
 *    the PA the test mapped, and faults once the range is unmapped (and,
 *    under a lazy policy, flushed);
 *  - table memory: the simulated physical memory the tables live in
 *    (iopt_physmem_used), measured around each call, with table
 *    allocations failed on demand;
 *  - a shadow list of the live mappings (the randomised test).
 * What they guard: unmap removes blocks whole and needs no memory (2 MiB,
 * 1 GiB, mixed sizes, 256 GiB above 2^38, random layouts with every table
 * allocation failing); a failed map leaves nothing mapped and only tables
 * a successful map reuses; refused calls are counted; a domain maps and
 * unmaps before its first attach the same way over both drivers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "tutil.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define SID		5
#define PAGE		4096ull
#define SZ_2M		(2ull << 20)
#define SZ_1G		(1ull << 30)
#define MASK64		(~0ull)

/* ---- one rig, two drivers -------------------------------------------------- */

enum kind { V3, V2, NR_KINDS };

struct rig {
	enum kind kind;
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct fpm fm;
	struct iopt_dma *d;
};

/* Memory, the kind's model ("mmu-500" for SMMUv2) and driver; the tests
 * create the domains (dma_up()). */
static void rig_up(struct rig *r, enum kind k)
{
	struct iopt_testbed_cfg c;

	memset(r, 0, sizeof(*r));
	r->kind = k;
	iopt_testbed_default_cfg(&c, k == V3 ? IOPT_TESTBED_SMMUV3 : IOPT_TESTBED_SMMUV2);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->pm = iopt_testbed_physmem(r->tb);
	r->fm.pm = r->pm;
}

static void dma_cfg(struct rig *r, struct iopt_dma_cfg *c, enum iopt_inval pol)
{
	assert_int_equal(iopt_testbed_dma_cfg(r->tb, c), 0);
	c->pt.oas = 40;
	c->pt.mem = &fpm_ops;
	c->pt.mem_ctx = &r->fm;
	c->policy = pol;
	c->nr_cpus = 2;
	c->check_unmap = true;
}

/* A domain of policy pol, attached (or not). */
static void dma_up(struct rig *r, enum iopt_inval pol, bool attach)
{
	struct iopt_dma_cfg c;

	dma_cfg(r, &c, pol);
	assert_int_equal(iopt_dma_create(&c, &r->d), 0);
	if (attach)
		assert_int_equal(iopt_dma_attach(r->d, SID), 0);
}

static void rig_down(struct rig *r)
{
	iopt_dma_destroy(r->d);
	iopt_testbed_destroy(r->tb);
}

static uint64_t used(struct rig *r)
{
	return iopt_physmem_used(r->pm);
}

/* A device access at addr through the model: true and *oa, or a fault. */
static bool dev(struct rig *r, uint64_t addr, bool write, uint64_t *oa)
{
	int ret = iopt_testbed_dev_access(r->tb, SID, addr, write, oa, NULL);

	assert_true(ret == 0 || ret == -EFAULT);
	return ret == 0;
}

/* Sample offsets of a mapping of len bytes: both ends and every step. */
static void expect_mapped(struct rig *r, uint64_t iova, uint64_t pa,
			  uint64_t len, uint64_t step)
{
	uint64_t oa;

	for (uint64_t o = 0; o < len; o += step) {
		assert_true(dev(r, iova + o, false, &oa));
		assert_int_equal(oa, pa + o);
	}
	assert_true(dev(r, iova + len - 1, false, &oa));
	assert_int_equal(oa, pa + len - 1);
}

static void expect_fault(struct rig *r, uint64_t iova, uint64_t len,
			 uint64_t step)
{
	uint64_t oa;

	for (uint64_t o = 0; o < len; o += step)
		assert_false(dev(r, iova + o, false, &oa));
	assert_false(dev(r, iova + len - 1, false, &oa));
}

/* Unmap with every table allocation failing: it must need none, and the
 * table memory must not grow. Then (lazy) flush; the device faults. */
static void unmap_no_memory(struct rig *r, enum iopt_inval pol, uint64_t iova,
			    uint64_t len, uint64_t step)
{
	uint64_t before = used(r);

	r->fm.fail_all = true;
	assert_int_equal(iopt_dma_unmap(r->d, iova, len, 1), 0);
	r->fm.fail_all = false;
	assert_true(used(r) <= before);
	if (pol != IOPT_INVAL_STRICT)
		assert_int_equal(iopt_dma_flush(r->d), 0);
	expect_fault(r, iova, len, step);
}

/* ---- unmap removes blocks whole --------------------------------------------- */

static void block_unmap(enum kind k, enum iopt_inval pol)
{
	/* A block of each size at an aligned PA, then a range of mixed
	 * sizes (a 1 GiB block, a 2 MiB block, two pages) in one call. */
	static const struct { uint64_t pa, len; } cases[] = {
		{ 0x40200000ull, SZ_2M },
		{ 0x40000000ull, SZ_1G },
		{ 0xc0000000ull, SZ_1G + SZ_2M + 2 * PAGE },
	};
	struct iopt_dma_stats st;
	struct rig r;

	rig_up(&r, k);
	dma_up(&r, pol, true);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t pa = cases[i].pa, len = cases[i].len, iova, again, oa;
		uint64_t step = len < SZ_1G ? 64 * PAGE : SZ_2M;
		uint64_t before = used(&r);

		assert_int_equal(iopt_dma_map(r.d, pa, len, IOPT_READ | IOPT_WRITE,
					      MASK64, 0, &iova), 0);
		/* A block: at most the tables above it. */
		assert_true(used(&r) - before <= 3 * PAGE);
		expect_mapped(&r, iova, pa, len, step);	/* the TLB holds it */
		unmap_no_memory(&r, pol, iova, len, step);
		/* The IOVA is free and nothing stale is left: a new mapping
		 * of the same size translates to its own PA. */
		assert_int_equal(iopt_dma_map(r.d, pa + 2 * SZ_1G, len, IOPT_READ,
					      MASK64, 1, &again), 0);
		assert_int_equal(again & (SZ_2M - 1), 0);
		assert_true(dev(&r, again, false, &oa) && oa == pa + 2 * SZ_1G);
		assert_int_equal(iopt_dma_unmap(r.d, again, len, 1), 0);
		assert_int_equal(iopt_dma_flush(r.d), 0);
		expect_fault(&r, again, len, step);
	}
	iopt_dma_get_stats(r.d, &st);
	assert_int_equal(st.maps, 6);
	assert_int_equal(st.unmaps, 6);
	assert_int_equal(st.bad_unmaps, 0);
	assert_int_equal(st.inv_errors, 0);
	assert_int_equal(r.fm.failed, 0);	/* no unmap asked for a table */
	rig_down(&r);
}

static void test_block_unmap(void **state)
{
	(void)state;
	for (int k = 0; k < NR_KINDS; k++) {
		block_unmap(k, IOPT_INVAL_STRICT);
		block_unmap(k, IOPT_INVAL_LAZY);
	}
}

/*
 * 256 GiB, above 2^38: as contiguous runs of 1 GiB blocks (a PA aligned
 * to 256 GiB), then as 2 MiB blocks (a PA 2 MiB past that). Maps,
 * translates, unmaps with no table memory, the IOVA is freed (unmapping
 * it again is not an allocation), and a one-page map still works.
 */
static void test_unmap_256g(void **state)
{
	const uint64_t len = 256 * SZ_1G, pas[2] = { 1ull << 38, (1ull << 38) + SZ_2M };
	uint64_t iova, page;

	(void)state;
	for (int k = 0; k < NR_KINDS; k++) {
		for (int i = 0; i < 2; i++) {
			struct rig r;
			uint64_t base;

			rig_up(&r, k);
			dma_up(&r, IOPT_INVAL_STRICT, true);
			base = used(&r);
			assert_int_equal(iopt_dma_map(r.d, pas[i], len, IOPT_READ,
						      MASK64, 0, &iova), 0);
			assert_true(iova >= 1ull << 38);
			assert_int_equal(iova & (SZ_2M - 1), 0);
			{
				uint64_t oa;

				for (uint64_t o = 0; o < len; o += 7 * SZ_1G + 5 * SZ_2M + 3 * PAGE) {
					assert_true(dev(&r, iova + o, false, &oa));
					assert_int_equal(oa, pas[i] + o);
				}
			}
			unmap_no_memory(&r, IOPT_INVAL_STRICT, iova, len,
					7 * SZ_1G + 5 * SZ_2M + 3 * PAGE);
			assert_true(used(&r) - base <= (i ? 258 : 2) * PAGE);
			assert_int_equal(iopt_dma_unmap(r.d, iova, len, 0), -EINVAL);
			assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ,
						      MASK64, 0, &page), 0);
			expect_mapped(&r, page, 0x1000, PAGE, PAGE);
			rig_down(&r);
		}
	}
}

/*
 * Random layouts, the class of the block defect: buffers of many sizes
 * at PAs aligned to 4K, 64K, 2M or 1G (so pages, runs and blocks of
 * each size mix, also inside one mapping), and scatter lists whose
 * segments change the alignment part-way. Each unmap must return 0 with
 * every table allocation failing and leave the table memory no larger;
 * the unmapped range faults and every other live mapping (the shadow
 * list) still translates.
 */
struct live {
	uint64_t iova, pa, len;
	bool sg;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void random_layouts(enum kind k, enum iopt_inval pol, uint64_t seed)
{
	static const uint64_t aligns[] = { PAGE, 16 * PAGE, SZ_2M, SZ_1G };
	static const uint64_t sizes[] = {
		PAGE, 3 * PAGE, 17 * PAGE, SZ_2M, SZ_2M + PAGE, 2 * SZ_2M + 3 * PAGE,
		SZ_2M - PAGE, 34 * SZ_2M, SZ_1G, SZ_1G + SZ_2M + 5 * PAGE,
	};
	struct live lv[8];
	unsigned nr = 0;
	struct rig r;
	uint64_t s = seed, next_pa = 1ull << 36, oa;

	rig_up(&r, k);
	dma_up(&r, pol, true);
	for (int op = 0; op < 48; op++) {
		if (nr < 8 && (nr == 0 || rnd(&s) % 3)) {
			struct live *m = &lv[nr];
			uint64_t al = aligns[rnd(&s) % 4];

			next_pa = (next_pa + al) & ~(al - 1);
			m->pa = next_pa;
			m->len = sizes[rnd(&s) % (sizeof(sizes) / sizeof(sizes[0]))];
			m->sg = rnd(&s) % 4 == 0;
			if (m->sg) {
				/* The first 3 pages at this PA, the rest 2 MiB
				 * aligned at another: the IOVA after the first
				 * segment is not 2 MiB aligned. */
				struct iopt_dma_seg sg[2] = {
					{ m->pa, 3 * PAGE },
					{ (m->pa + 8 * SZ_1G) & ~(SZ_2M - 1), m->len },
				};
				uint64_t total;

				assert_int_equal(iopt_dma_map_sg(r.d, sg, 2, IOPT_READ,
								 MASK64, 0, &m->iova,
								 &total), 0);
				assert_int_equal(total, 3 * PAGE + m->len);
				assert_true(dev(&r, m->iova, false, &oa) && oa == sg[0].paddr);
				assert_true(dev(&r, m->iova + 3 * PAGE + m->len - 1, false,
						&oa) && oa == sg[1].paddr + m->len - 1);
				m->len = total;
			} else {
				assert_int_equal(iopt_dma_map(r.d, m->pa, m->len, IOPT_READ,
							      MASK64, 1, &m->iova), 0);
				expect_mapped(&r, m->iova, m->pa, m->len,
					      m->len / 5 + PAGE);
			}
			next_pa += m->len + 16 * SZ_1G;
			nr++;
			continue;
		}
		unsigned i = (unsigned)(rnd(&s) % nr);
		struct live m = lv[i];

		lv[i] = lv[--nr];
		unmap_no_memory(&r, pol, m.iova, m.len, m.len / 7 + PAGE);
		for (unsigned j = 0; j < nr; j++) {
			if (lv[j].sg) {
				assert_true(dev(&r, lv[j].iova, false, &oa) &&
					    oa == lv[j].pa);
				continue;
			}
			expect_mapped(&r, lv[j].iova, lv[j].pa, lv[j].len,
				      lv[j].len / 3 + PAGE);
		}
	}
	assert_int_equal(r.fm.failed, 0);
	rig_down(&r);
}

static void test_random_layouts(void **state)
{
	(void)state;
	for (int k = 0; k < NR_KINDS; k++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			random_layouts(k, seed == 2 ? IOPT_INVAL_LAZY :
				       IOPT_INVAL_STRICT, seed * 0x9e3779b97f4a7c15ull);
}

/* ---- a failed map: nothing mapped, only tables a success reuses -------------- */

/*
 * The tables a successful map of [pa, pa + len) needs in a fresh domain
 * (the twin), then in a domain where the n-th table allocation fails for
 * n = 1, 2, ...: each failure is -ENOMEM, the device faults over the
 * whole range, and the table memory holds no more than the twin's (the
 * tables kept are ones the map needs); the final success holds exactly
 * the twin's (they were reused, nothing leaked), and after unmap and
 * destroy the memory is what the twin's destroy left.
 */
static void map_fail_memory(enum kind k, bool sg)
{
	const uint64_t pa = 0x40003000ull, len = 2 * SZ_2M + 3 * PAGE;
	const struct iopt_dma_seg segs[2] = {
		{ 0x10000800ull, 0x800 }, { 0x40200000ull, 2 * SZ_2M + 2 * PAGE },
	};
	uint64_t iova, total = 0, need = 0, pristine = 0, base, twin_iova = 0;
	struct rig r;
	long n;
	int ret;

	rig_up(&r, k);
	for (int twin = 1; twin >= 0; twin--) {
		dma_up(&r, IOPT_INVAL_STRICT, true);
		base = used(&r);
		for (n = twin ? 0 : 1;; n++) {
			r.fm.count = 0;
			r.fm.fail_at = n;
			ret = sg ? iopt_dma_map_sg(r.d, segs, 2, IOPT_READ, MASK64, 0,
						   &iova, &total) :
				   iopt_dma_map(r.d, pa, len, IOPT_READ, MASK64, 0,
						&iova);
			r.fm.fail_at = 0;
			if (!ret)
				break;
			assert_int_equal(ret, -ENOMEM);
			assert_true(used(&r) - base <= need);
			assert_true(n < 100);
		}
		if (twin) {
			twin_iova = iova;
			need = used(&r) - base;
			assert_true(need >= 2 * PAGE);	/* it did need tables */
		} else {
			assert_true(n > 2);
			/* Every try had this range: a failure that left any
			 * of it mapped would have failed this one (-EEXIST). */
			assert_int_equal(iova, twin_iova);
			assert_int_equal(used(&r) - base, need);
		}
		if (sg) {
			uint64_t oa;

			assert_int_equal(total, 0x800 + segs[1].len);
			assert_true(dev(&r, iova, false, &oa) && oa == segs[0].paddr);
			expect_mapped(&r, iova + 0x800, segs[1].paddr, segs[1].len,
				      SZ_2M / 4);
			assert_int_equal(iopt_dma_unmap_sg(r.d, iova, total, 0), 0);
			expect_fault(&r, iova, total, SZ_2M / 4);
		} else {
			expect_mapped(&r, iova, pa, len, SZ_2M / 4);
			assert_int_equal(iopt_dma_unmap(r.d, iova, len, 0), 0);
			expect_fault(&r, iova, len, SZ_2M / 4);
		}
		if (!twin) {
			struct iopt_dma_stats st;

			iopt_dma_get_stats(r.d, &st);
			assert_int_equal(st.map_errors, (uint64_t)n - 1);
			assert_int_equal(st.maps, 1);
		}
		iopt_dma_destroy(r.d);
		r.d = NULL;
		/* The driver keeps what the first attach of SID allocated
		 * (its stream table level): compare with the twin's end. */
		if (twin)
			pristine = used(&r);
		else
			assert_int_equal(used(&r), pristine);
	}
	rig_down(&r);
}

static void test_map_fail_memory(void **state)
{
	(void)state;
	for (int k = 0; k < NR_KINDS; k++) {
		map_fail_memory(k, false);
		map_fail_memory(k, true);
	}
}

/* ---- refused calls are counted -------------------------------------------- */

static void test_refused_counted(void **state)
{
	const struct iopt_dma_seg sg[1] = { { 0x10000000, PAGE } };
	struct iopt_dma_stats st;
	uint64_t iova, total;

	(void)state;
	for (int k = 0; k < NR_KINDS; k++) {
		struct rig r;

		rig_up(&r, k);
		dma_up(&r, IOPT_INVAL_STRICT, true);
		assert_int_equal(iopt_dma_map(r.d, 0x1000, PAGE, IOPT_READ, MASK64,
					      0, NULL), -EINVAL);
		assert_int_equal(iopt_dma_map(r.d, 0x1000, 5 * PAGE, IOPT_READ, MASK64,
					      0, NULL), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, sg, 0, IOPT_READ, MASK64, 0,
						 &iova, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, NULL, 1, IOPT_READ, MASK64, 0,
						 &iova, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, sg, 1, IOPT_READ, MASK64, 0,
						 NULL, &total), -EINVAL);
		assert_int_equal(iopt_dma_map_sg(r.d, sg, 1, IOPT_READ, MASK64, 0,
						 &iova, NULL), -EINVAL);
		iopt_dma_get_stats(r.d, &st);
		assert_int_equal(st.map_errors, 6);
		assert_int_equal(st.maps, 0);
		rig_down(&r);
	}
}

/* ---- before the first attach: the same over both drivers ------------------- */

static void before_attach(enum kind k, enum iopt_inval pol)
{
	struct iopt_dma_stats st;
	uint64_t a, b, c, oa;
	struct rig r;

	rig_up(&r, k);
	dma_up(&r, pol, false);
	/* Map and unmap with no stream attached: nothing to invalidate. */
	assert_int_equal(iopt_dma_map(r.d, 0x10000000, 3 * PAGE, IOPT_READ, MASK64,
				      0, &a), 0);
	assert_int_equal(iopt_dma_unmap(r.d, a, 3 * PAGE, 0), 0);
	assert_int_equal(iopt_dma_map(r.d, 0x20000000, PAGE, IOPT_READ, MASK64,
				      0, &b), 0);
	assert_int_equal(iopt_dma_map(r.d, 0x30000000, SZ_2M, IOPT_READ, MASK64,
				      1, &c), 0);
	assert_int_equal(iopt_dma_flush(r.d), 0);
	/* Then attach: what is mapped translates, what was unmapped not. */
	assert_int_equal(iopt_dma_attach(r.d, SID), 0);
	assert_true(dev(&r, b, false, &oa) && oa == 0x20000000);
	expect_mapped(&r, c, 0x30000000, SZ_2M, SZ_2M / 4);
	for (uint64_t o = 0; o < 3 * PAGE; o += PAGE)
		if (((a + o) ^ b) & ~(PAGE - 1))
			assert_false(dev(&r, a + o, false, &oa));
	assert_int_equal(iopt_dma_unmap(r.d, b, PAGE, 0), 0);
	assert_int_equal(iopt_dma_unmap(r.d, c, SZ_2M, 1), 0);
	if (pol != IOPT_INVAL_STRICT)
		assert_int_equal(iopt_dma_flush(r.d), 0);
	expect_fault(&r, b, PAGE, PAGE);
	expect_fault(&r, c, SZ_2M, SZ_2M / 4);
	iopt_dma_get_stats(r.d, &st);
	assert_int_equal(st.maps, 3);
	assert_int_equal(st.unmaps, 3);
	assert_int_equal(st.map_errors, 0);
	assert_int_equal(st.bad_unmaps, 0);
	assert_int_equal(st.inv_errors, 0);
	rig_down(&r);
}

static void test_before_attach(void **state)
{
	(void)state;
	for (int k = 0; k < NR_KINDS; k++)
		for (int pol = 0; pol <= IOPT_INVAL_EXHAUST; pol++)
			before_attach(k, pol);
}

/*
 * The first attach racing with strict maps and unmaps (the SMMUv2 glue
 * decides per invalidation whether the bank is bound yet): one thread
 * maps, reads through the device once the attach has returned, and
 * unmaps; another attaches part-way. Every call returns 0, a mapping
 * read after the attach translates to its PA, and after every unmap
 * that the attach's end precedes or overlaps the device faults.
 */
struct race {
	struct rig *r;
	int round, attached;	/* __atomic */
	int ret;		/* the attach's */
};

static void *race_attach(void *arg)
{
	struct race *x = arg;

	while (__atomic_load_n(&x->round, __ATOMIC_ACQUIRE) < 40)
		sched_yield();
	x->ret = iopt_dma_attach(x->r->d, SID);
	__atomic_store_n(&x->attached, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_attach_race(void **state)
{
	(void)state;
	for (int k = 0; k < NR_KINDS; k++) {
		struct iopt_dma_stats st;
		struct race x = { 0 };
		struct rig r;
		pthread_t t;

		rig_up(&r, k);
		dma_up(&r, IOPT_INVAL_STRICT, false);
		x.r = &r;
		assert_int_equal(pthread_create(&t, NULL, race_attach, &x), 0);
		for (int i = 0; i < 400; i++) {
			uint64_t pa = 0x10000000ull + (uint64_t)i * 8 * PAGE;
			uint64_t len = (1 + (uint64_t)i % 3) * PAGE, iova, oa;

			assert_int_equal(iopt_dma_map(r.d, pa, len, IOPT_READ, MASK64,
						      0, &iova), 0);
			bool on = __atomic_load_n(&x.attached, __ATOMIC_ACQUIRE);

			if (on) {
				assert_true(dev(&r, iova, false, &oa));
				assert_int_equal(oa, pa);
			}
			assert_int_equal(iopt_dma_unmap(r.d, iova, len, 0), 0);
			/* The device only once the attach has returned (the
			 * device during attaches: test_smmuv3_ste_race). An
			 * unmap that began before the attach ended is checked
			 * here too. */
			if (__atomic_load_n(&x.attached, __ATOMIC_ACQUIRE))
				expect_fault(&r, iova, len, PAGE);
			__atomic_store_n(&x.round, i, __ATOMIC_RELEASE);
		}
		pthread_join(t, NULL);
		assert_int_equal(x.ret, 0);
		iopt_dma_get_stats(r.d, &st);
		assert_int_equal(st.inv_errors, 0);
		assert_int_equal(st.maps, 400);
		assert_int_equal(st.unmaps, 400);
		rig_down(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_unmap),
		cmocka_unit_test(test_unmap_256g),
		cmocka_unit_test(test_random_layouts),
		cmocka_unit_test(test_map_fail_memory),
		cmocka_unit_test(test_refused_counted),
		cmocka_unit_test(test_before_attach),
		cmocka_unit_test(test_attach_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
