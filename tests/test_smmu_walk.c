/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 structures and the table walker:
 *  - STE and CD encoders field by field at the bit positions of IHI0070
 *    5.2 and 5.4 (typed here from the specification), and round trips;
 *  - the walker against the library's page tables (which it must read as an
 *    SMMU would, from a simulated physical memory): random mappings of every
 *    page size and permission translated through a CD or STE built from the
 *    table's registers, compared with the physical address the test mapped (and
 *    iopt_pgtable_iova_to_phys() with it) and with the permissions asked for;
 *    stage 2; nested stage 1 + 2 with the stage 1 tables in IPA space; hardware
 *    dirty-state and access-flag updates; faults and their levels; ILLEGAL
 *    structures refused;
 *  - the input region check against the regions as address ranges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

#include "../src/smmu_model/common/walk.h"
#include "tutil.h"

/* An SMMU with an OAS of oas bits, HTTU level httu and every granule. */
#define CAPS(oas, httu)                                                     \
	(&(const struct smmu_caps){ (oas), (httu),                          \
				   1u << 12 | 1u << 14 | 1u << 16 })

/* ---- encoders ----------------------------------------------------------- */

static uint64_t bitsat(const uint64_t w[8], unsigned lo, unsigned width)
{
	return (w[lo / 64] >> (lo % 64)) & (width == 64 ? ~0ull : (1ull << width) - 1);
}

static void test_ste_fields(void **state)
{
	struct iopt_smmuv3_ste s;
	uint64_t w[8];

	(void)state;
#define STE_ONE(field, val, lo, width, want)                                \
	do {                                                                \
		memset(&s, 0, sizeof(s));                                   \
		s.field = val;                                              \
		iopt_smmuv3_ste_encode(&s, w);                                     \
		assert_int_equal(bitsat(w, lo, width), want);               \
		uint64_t all = 0;                                           \
		for (int k = 0; k < 8; k++)                                 \
			all |= (uint64_t)__builtin_popcountll(w[k]);        \
		assert_int_equal(all != 0, (want) != 0);                    \
	} while (0)
	STE_ONE(valid, true, 0, 1, 1);
	STE_ONE(config, 7, 1, 3, 7);
	STE_ONE(s1_fmt, 2, 4, 2, 2);
	STE_ONE(s1_context_ptr, 0xfedcba9876540ull, 6, 50, 0xfedcba9876540ull >> 6);
	STE_ONE(s1_cd_max, 20, 59, 5, 20);
	STE_ONE(s1_dss, 2, 64, 2, 2);
	STE_ONE(eats, 1, 92, 2, 1);
	STE_ONE(s2_vmid, 0xbeef, 128, 16, 0xbeef);
	STE_ONE(s2_t0sz, 25, 160, 6, 25);
	STE_ONE(s2_sl0, 2, 166, 2, 2);
	STE_ONE(s2_ir0, 1, 168, 2, 1);
	STE_ONE(s2_or0, 3, 170, 2, 3);
	STE_ONE(s2_sh0, 3, 172, 2, 3);
	STE_ONE(s2_tg, 2, 174, 2, 2);
	STE_ONE(s2_ps, 5, 176, 3, 5);
	STE_ONE(s2_aa64, true, 179, 1, 1);
	STE_ONE(s2_affd, true, 181, 1, 1);
	STE_ONE(s2_ptw, true, 182, 1, 1);
	STE_ONE(s2_hd, true, 183, 1, 1);
	STE_ONE(s2_ha, true, 184, 1, 1);
	STE_ONE(s2_s, true, 185, 1, 1);
	STE_ONE(s2_r, true, 186, 1, 1);
	STE_ONE(s2_ttb, 0xabcdef123450ull, 196, 48, 0xabcdef123450ull >> 4);
}

static void test_cd_fields(void **state)
{
	struct iopt_smmuv3_cd c;
	uint64_t w[8];

	(void)state;
#define CD_ONE(field, val, lo, width, want)                                 \
	do {                                                                \
		memset(&c, 0, sizeof(c));                                   \
		c.field = val;                                              \
		iopt_smmuv3_cd_encode(&c, w);                                      \
		assert_int_equal(bitsat(w, lo, width), want);               \
	} while (0)
	CD_ONE(t0sz, 33, 0, 6, 33);
	CD_ONE(tg0, 2, 6, 2, 2);
	CD_ONE(ir0, 1, 8, 2, 1);
	CD_ONE(or0, 1, 10, 2, 1);
	CD_ONE(sh0, 3, 12, 2, 3);
	CD_ONE(epd0, true, 14, 1, 1);
	CD_ONE(t1sz, 17, 16, 6, 17);
	CD_ONE(tg1, 3, 22, 2, 3);
	CD_ONE(epd1, true, 30, 1, 1);
	CD_ONE(valid, true, 31, 1, 1);
	CD_ONE(ips, 5, 32, 3, 5);
	CD_ONE(affd, true, 35, 1, 1);
	CD_ONE(aa64, true, 41, 1, 1);
	CD_ONE(hd, true, 42, 1, 1);
	CD_ONE(ha, true, 43, 1, 1);
	CD_ONE(s, true, 44, 1, 1);
	CD_ONE(r, true, 45, 1, 1);
	CD_ONE(a, true, 46, 1, 1);
	CD_ONE(aset, true, 47, 1, 1);
	CD_ONE(asid, 0x1234, 48, 16, 0x1234);
	CD_ONE(ttb0, 0x876543210ff0ull, 68, 48, 0x876543210ff0ull >> 4);
	CD_ONE(ttb1, 0x123456789ab0ull, 132, 48, 0x123456789ab0ull >> 4);
	CD_ONE(mair, 0x0123456789abcdefull, 192, 64, 0x0123456789abcdefull);
}

static void test_round_trips(void **state)
{
	uint64_t rng = 17, w[8], w2[8];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		for (int k = 0; k < 8; k++)
			w[k] = tu_rand(&rng);
		struct iopt_smmuv3_ste s;
		struct iopt_smmuv3_cd c;

		/* decode(w) keeps the named fields; encoding that again and
		 * decoding gives the same structure. */
		iopt_smmuv3_ste_decode(w, &s);
		iopt_smmuv3_ste_encode(&s, w2);
		struct iopt_smmuv3_ste s2;

		iopt_smmuv3_ste_decode(w2, &s2);
		assert_memory_equal(&s, &s2, sizeof(s));
		iopt_smmuv3_cd_decode(w, &c);
		iopt_smmuv3_cd_encode(&c, w2);
		struct iopt_smmuv3_cd c2;

		iopt_smmuv3_cd_decode(w2, &c2);
		assert_memory_equal(&c, &c2, sizeof(c));
	}
}

/* ---- memory for the walker ---------------------------------------------- */

static int pm_load(void *ctx, uint64_t pa, uint64_t *v)
{
	uint64_t *p = iopt_physmem_ptr(ctx, pa, 8);

	if (!p)
		return -EFAULT;
	*v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	return 0;
}

static int pm_cas(void *ctx, uint64_t pa, uint64_t *old, uint64_t v)
{
	uint64_t *p = iopt_physmem_ptr(ctx, pa, 8);

	if (!p)
		return -EFAULT;
	return __atomic_compare_exchange_n(p, old, v, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) ? 0 : -EAGAIN;
}

static struct iopt_pgtable *make_pt(struct iopt_physmem *pm, enum iopt_pgtable_fmt fmt,
				    uint32_t granule, unsigned ias,
				    unsigned oas, uint32_t quirks)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = granule, .ias = ias, .oas = oas,
		.quirks = quirks, .coherent_walk = true,
		.mem = iopt_physmem_mem_ops(), .mem_ctx = pm,
	};
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

/* Check the walker on va against the table and the prot asked for. */
/* Walk va and check the result against want_pa, the physical address
 * the test mapped there (not the library's iova_to_phys, which must
 * agree too), and against the permissions prot asked for. */
static void check_va(struct iopt_pgtable *pt, const struct smmu_stage_cfg *c,
		     const struct smmu_mem *m, uint64_t va, unsigned prot,
		     bool mapped, uint64_t want_pa)
{
	struct smmu_walk_res r;
	uint64_t pa;
	bool s1 = c->stage == 1;

	smmu_walk(c, NULL, m, va, SMMU_ACC_PRIV, &r);
	if (!mapped) {
		assert_int_equal(iopt_pgtable_iova_to_phys(pt, va, &pa), -ENOENT);
		assert_int_equal(r.fault, SMMU_F_TRANSLATION);
		return;
	}
	assert_int_equal(iopt_pgtable_iova_to_phys(pt, va, &pa), 0);
	assert_int_equal(pa, want_pa);
	if (!s1 && !(prot & IOPT_READ)) {
		assert_int_equal(r.fault, SMMU_F_PERMISSION);
	} else {
		assert_int_equal(r.fault, SMMU_OK);
		assert_int_equal(r.oa, want_pa);
	}
	smmu_walk(c, NULL, m, va, SMMU_ACC_PRIV | SMMU_ACC_WRITE, &r);
	assert_int_equal(r.fault, prot & IOPT_WRITE ? SMMU_OK : SMMU_F_PERMISSION);
	smmu_walk(c, NULL, m, va, SMMU_ACC_PRIV | SMMU_ACC_EXEC, &r);
	/* Stage 1: a page EL0 may write (no IOPT_PRIV) is privileged
	 * execute-never (Arm ARM D8.4). */
	assert_int_equal(r.fault, (prot & IOPT_NOEXEC) ||
				  (s1 && (prot & IOPT_WRITE) && !(prot & IOPT_PRIV)) ?
				  SMMU_F_PERMISSION : SMMU_OK);
	if (s1) {
		smmu_walk(c, NULL, m, va, 0, &r);	/* unprivileged read */
		assert_int_equal(r.fault, prot & IOPT_PRIV ? SMMU_F_PERMISSION :
							   SMMU_OK);
	}
}

static void walk_vs_pgtable(enum iopt_pgtable_fmt fmt, uint32_t granule, unsigned ias,
			    unsigned oas, uint64_t pm_base)
{
	struct iopt_physmem *pm;
	struct smmu_mem m = { pm_load, pm_cas, NULL, NULL };
	struct smmu_stage_cfg c;
	struct iopt_pgtable_info info;
	uint64_t w[8], rng = 99 + granule + ias;

	assert_int_equal(iopt_physmem_create(pm_base, 64u << 20, &pm), 0);
	m.ctx = pm;
	struct iopt_pgtable *pt = make_pt(pm, fmt, granule, ias, oas, 0);

	iopt_pgtable_get_info(pt, &info);
	if (fmt == IOPT_ARM_64_LPAE_S1) {
		struct iopt_smmuv3_cd cd, cd2;

		assert_int_equal(iopt_smmuv3_cd_from_pgtable(pt, 7, &cd), 0);
		iopt_smmuv3_cd_encode(&cd, w);
		iopt_smmuv3_cd_decode(w, &cd2);
		assert_int_equal(smmu_cfg_from_cd(&cd2, false, CAPS(52, 2), &c), 0);
	} else {
		struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S2 }, st2;

		assert_int_equal(iopt_smmuv3_ste_s2_from_pgtable(pt, 3, &ste), 0);
		iopt_smmuv3_ste_encode(&ste, w);
		iopt_smmuv3_ste_decode(w, &st2);
		assert_int_equal(smmu_cfg_from_ste_s2(&st2, CAPS(52, 2), &c), 0);
	}
	assert_int_equal(c.start, info.start_level);

	uint64_t window = 1ull << (ias < 40 ? ias : 40);
	static const unsigned prots[] = {
		IOPT_READ | IOPT_WRITE, IOPT_READ, IOPT_READ | IOPT_NOEXEC,
		IOPT_READ | IOPT_WRITE | IOPT_PRIV, IOPT_WRITE | IOPT_CACHE,
	};

	for (int i = 0; i < 300; i++) {
		uint64_t sizes = info.pgsize_bitmap & (window / 8 - 1);
		unsigned nb = (unsigned)__builtin_popcountll(sizes);
		unsigned k = (unsigned)(tu_rand(&rng) % nb);
		uint64_t sz = sizes;

		while (k--)
			sz &= sz - 1;
		sz &= -sz;
		uint64_t va = (tu_rand(&rng) % window) & ~(sz - 1);
		uint64_t pa = (tu_rand(&rng) % (1ull << oas)) & ~(sz - 1);
		unsigned prot = prots[tu_rand(&rng) % 5];

		if (pa + sz > (1ull << oas) || va + sz > window)
			continue;
		if (iopt_pgtable_map_pages(pt, va, pa, sz, 1, prot, NULL))
			continue;
		unsigned want = tu_expect_prot(fmt, 0, prot);

		check_va(pt, &c, &m, va, want, true, pa);
		check_va(pt, &c, &m, va + sz - 1, want, true, pa + sz - 1);
		if (tu_rand(&rng) % 3 == 0) {
			assert_int_equal(iopt_pgtable_unmap_pages(pt, va, sz, 1, NULL),
					 (int64_t)sz);
			check_va(pt, &c, &m, va + sz / 2, 0, false, 0);
		}
	}
	/* Outside the input range: a translation fault, no fetch. */
	if (ias < 64) {
		struct smmu_walk_res r;

		smmu_walk(&c, NULL, &m, 1ull << ias, 0, &r);
		assert_int_equal(r.fault, SMMU_F_TRANSLATION);
		assert_int_equal(r.fetches, 0);
	}
	iopt_pgtable_free(pt);
	iopt_physmem_destroy(pm);
}

static void test_walk_stage1(void **state)
{
	(void)state;
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S1, 4096, 48, 48, 0x40000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S1, 16384, 47, 44, 0x80000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S1, 65536, 42, 52, 0xa000000000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S1, 4096, 32, 40, 0x40000000ull);
}

static void test_walk_stage2(void **state)
{
	(void)state;
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S2, 4096, 40, 40, 0x40000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S2, 16384, 48, 48, 0x40000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S2, 65536, 32, 36, 0x40000000ull);
	walk_vs_pgtable(IOPT_ARM_64_LPAE_S2, 4096, 44, 44, 0x40000000ull);
}

/* Nested: stage 1 tables allocated in IPA space (IPA = PA + DELTA), which
 * a stage 2 table maps back. */
#define DELTA 0x100000000ull

struct ipa_mem {
	struct iopt_physmem *pm;
};

static void *ipa_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct ipa_mem *im = ctx;
	void *p = iopt_physmem_mem_ops()->alloc(size, pa, im->pm);

	*pa += DELTA;
	return p;
}

static void ipa_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	struct ipa_mem *im = ctx;

	iopt_physmem_mem_ops()->free(va, pa - DELTA, size, im->pm);
}

static void *ipa_p2v(uint64_t pa, void *ctx)
{
	struct ipa_mem *im = ctx;

	return iopt_physmem_ptr(im->pm, pa - DELTA, 1);
}

static void ipa_sync(void *va, size_t size, void *ctx)
{
	(void)va;
	(void)size;
	(void)ctx;
}

static void test_walk_nested(void **state)
{
	const uint64_t base = 0x40000000ull, len = 64u << 20;
	struct iopt_physmem *pm;
	struct ipa_mem im;
	const struct iopt_pgtable_mem_ops ipa_ops = { ipa_alloc, ipa_free, ipa_p2v, ipa_sync };
	struct smmu_mem m = { pm_load, pm_cas, NULL, NULL };
	struct smmu_stage_cfg s1, s2;
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_NESTED };

	(void)state;
	assert_int_equal(iopt_physmem_create(base, len, &pm), 0);
	im.pm = pm;
	m.ctx = pm;
	struct iopt_pgtable *t2 = make_pt(pm, IOPT_ARM_64_LPAE_S2, 4096, 40, 40, 0);
	struct iopt_pgtable_cfg c1 = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 40, .coherent_walk = true,
			       .mem = &ipa_ops, .mem_ctx = &im };
	struct iopt_pgtable *t1;

	assert_int_equal(iopt_pgtable_alloc(&c1, &t1), 0);
	/* Stage 2: the table window (IPA base+DELTA) and guest RAM
	 * (IPA 0x2_0000_0000 + n -> PA 0x3_0000_0000 + n). */
	assert_int_equal(iopt_pgtable_map_pages(t2, base + DELTA, base, 0x200000,
						len / 0x200000, IOPT_READ | IOPT_WRITE,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(t2, 0x200000000ull, 0x300000000ull,
						0x200000, 8, IOPT_READ | IOPT_WRITE, NULL),
			 0);
	/* Stage 1: VA -> IPA in guest RAM. */
	assert_int_equal(iopt_pgtable_map_pages(t1, 0x7000000000ull, 0x200001000ull,
						0x1000, 4, IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(t1, 0x7000200000ull, 0x2ff000000ull,
						0x1000, 1, IOPT_READ, NULL), 0);

	assert_int_equal(iopt_smmuv3_cd_from_pgtable(t1, 1, &cd), 0);
	assert_int_equal(iopt_smmuv3_ste_s2_from_pgtable(t2, 9, &ste), 0);
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 2), &s1), 0);
	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 2), &s2), 0);

	struct smmu_walk_res r;

	smmu_walk(&s1, &s2, &m, 0x7000002345ull, SMMU_ACC_WRITE | SMMU_ACC_PRIV,
		  &r);
	assert_int_equal(r.fault, SMMU_OK);
	assert_int_equal(r.oa, 0x300003345ull);	/* IPA 0x2_0000_3345 */
	/* 4 stage 1 levels, each table fetch through a stage 2 walk (2
	 * levels: 4K, 40 bits, start at level 1, 2M blocks), plus the
	 * output's stage 2 walk. */
	assert_int_equal(r.fetches, 4 + 4 * 2 + 2);
	/* A stage 1 output outside stage 2's mappings: a stage 2 fault on
	 * the output IPA. */
	smmu_walk(&s1, &s2, &m, 0x7000200000ull, SMMU_ACC_PRIV, &r);
	assert_int_equal(r.fault, SMMU_F_TRANSLATION);
	assert_int_equal(r.fault_stage, 2);
	assert_int_equal(r.ipa, 0x2ff000000ull);
	assert_false(r.s2_on_walk);
	/* Unmap the stage 2 window that holds the stage 1 tables: the walk
	 * faults at stage 2 on a table fetch. */
	assert_true(iopt_pgtable_unmap_pages(t2, base + DELTA, 0x200000, len / 0x200000,
					     NULL) > 0);
	smmu_walk(&s1, &s2, &m, 0x7000002345ull, SMMU_ACC_PRIV, &r);
	assert_int_equal(r.fault, SMMU_F_TRANSLATION);
	assert_int_equal(r.fault_stage, 2);
	assert_true(r.s2_on_walk);
	iopt_pgtable_free(t1);
	iopt_pgtable_free(t2);
	iopt_physmem_destroy(pm);
}

struct dlog {
	unsigned n;
	uint64_t va;
};

static void rec(uint64_t va, uint64_t size, void *arg)
{
	struct dlog *l = arg;

	(void)size;
	l->n++;
	l->va = va;
}

/* HTTU: a write to a writable-clean page makes it dirty, as the page
 * tables' dirty tracking then reports; the access flag. */
static void test_httu(void **state)
{
	struct iopt_physmem *pm;
	struct smmu_mem m = { pm_load, pm_cas, NULL, NULL };
	struct smmu_stage_cfg c;
	struct iopt_smmuv3_cd cd;
	struct smmu_walk_res r;
	struct dlog log = { 0, 0 };

	(void)state;
	assert_int_equal(iopt_physmem_create(0x40000000ull, 16u << 20, &pm), 0);
	m.ctx = pm;
	struct iopt_pgtable *pt = make_pt(pm, IOPT_ARM_64_LPAE_S1, 4096, 48, 48,
					  IOPT_PGTABLE_QUIRK_HD);

	assert_int_equal(iopt_pgtable_map_pages(pt, 0x5000, 0x9000, 0x1000, 2,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_smmuv3_cd_from_pgtable(pt, 1, &cd), 0);
	assert_true(cd.ha && cd.hd);
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 2), &c), 0);
	smmu_walk(&c, NULL, &m, 0x5000, SMMU_ACC_PRIV, &r);	/* read */
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, 0x5000, 0x2000, 0, NULL, rec,
							   &log), 0);
	assert_int_equal(log.n, 0);
	smmu_walk(&c, NULL, &m, 0x6008, SMMU_ACC_PRIV | SMMU_ACC_WRITE, &r);
	assert_int_equal(r.fault, SMMU_OK);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, 0x5000, 0x2000, 0, NULL, rec,
							   &log), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.va, 0x6000);
	/* Without HD a write to the (clean, read-only) page faults. */
	c.hd = false;
	smmu_walk(&c, NULL, &m, 0x6008, SMMU_ACC_PRIV | SMMU_ACC_WRITE, &r);
	assert_int_equal(r.fault, SMMU_F_PERMISSION);

	/* Access flag: clear it by hand; fault, ignore (AFFD), or set (HA). */
	struct iopt_pgtable_walk w;

	assert_int_equal(iopt_pgtable_walk(pt, 0x5000, &w), 0);
	uint64_t *d = iopt_physmem_ptr(pm, w.level[w.nr_levels - 1].table_pa +
						   8 * w.level[w.nr_levels - 1].index, 8);

	*d &= ~(1ull << 10);
	c.ha = false;
	c.affd = false;
	smmu_walk(&c, NULL, &m, 0x5000, SMMU_ACC_PRIV, &r);
	assert_int_equal(r.fault, SMMU_F_ACCESS);
	assert_int_equal(r.level, 3);
	c.affd = true;
	smmu_walk(&c, NULL, &m, 0x5000, SMMU_ACC_PRIV, &r);
	assert_int_equal(r.fault, SMMU_OK);
	assert_false(*d >> 10 & 1);
	c.ha = true;
	smmu_walk(&c, NULL, &m, 0x5000, SMMU_ACC_PRIV, &r);
	assert_int_equal(r.fault, SMMU_OK);
	assert_true(*d >> 10 & 1);
	iopt_pgtable_free(pt);
	iopt_physmem_destroy(pm);
}

static void test_illegal_structures(void **state)
{
	struct iopt_smmuv3_cd cd = { .valid = true, .aa64 = true, .t0sz = 16, .tg0 = 0,
			      .ips = 5, .ttb0 = 0x1000 };
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S2,
				.s2_aa64 = true, .s2_t0sz = 24, .s2_sl0 = 1,
				.s2_tg = 0, .s2_ps = 2, .s2_ttb = 0x2000 };
	struct smmu_stage_cfg c;

	(void)state;
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), 0);
	assert_int_equal(c.start, 0);
	cd.valid = false;
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);
	cd.valid = true;
	cd.tg0 = 3;					/* reserved granule */
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);
	cd.tg0 = 0;
	cd.t0sz = 40;					/* too small a range */
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);
	cd.t0sz = 16;
	cd.aa64 = false;				/* AArch32 tables */
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);
	cd.aa64 = true;
	cd.ttb0 = 1ull << 45;				/* beyond IPS (40) */
	cd.ips = 2;
	assert_int_equal(smmu_cfg_from_cd(&cd, false, CAPS(48, 0), &c), -EINVAL);

	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 0), &c), 0);
	assert_int_equal(c.start, 1);
	ste.s2_sl0 = 0;	/* level 2 start for 40 bits: 512 tables */
	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 0), &c), -EINVAL);
	ste.s2_sl0 = 3;
	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 0), &c), -EINVAL);
	ste.s2_sl0 = 1;
	ste.s2_hd = ste.s2_ha = true;			/* no HTTU */
	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 0), &c), -EINVAL);
	ste.s2_hd = ste.s2_ha = false;
	ste.s2_tg = 3;
	assert_int_equal(smmu_cfg_from_ste_s2(&ste, CAPS(48, 0), &c), -EINVAL);
}

/*
 * The input region check (smmu_in_region after smmu_cfg_set_region)
 * against the regions written as address ranges: TTB0 [0, 2^ias), TTB1
 * the top 2^ias bytes of the 64-bit space or (AArch32, Arm ARM G5.5) of
 * the 32-bit one; with TBI the address with bits [63:56] replaced by
 * copies of bit 55 (D8.8). Every IAS, region and TBI, at the boundaries
 * and at random addresses.
 */
static bool region_ref(unsigned ias, bool upper, bool va32, bool tbi, uint64_t va)
{
	if (tbi)
		va = (va << 8 >> 8) | (va & 0x0080000000000000ull ?
				       0xff00000000000000ull : 0);
	if (ias >= 64)
		return true;
	uint64_t size = 1ull << ias, top = va32 ? 0xffffffffull : UINT64_MAX;

	return upper ? va <= top && va >= top - (size - 1) : va < size;
}

static void test_region_check(void **state)
{
	uint64_t rng = 5150;

	(void)state;
	for (unsigned ias = 1; ias <= 64; ias++) {
		for (unsigned k = 0; k < 8; k++) {
			bool upper = k & 1, va32 = k & 2, tbi = k & 4;

			if (va32 && ias > 32)
				continue;
			struct smmu_stage_cfg c = { .stage = 1, .ias = ias, .upper = upper,
						    .va32 = va32, .tbi = tbi };
			uint64_t size = ias >= 64 ? 0 : 1ull << ias;
			uint64_t top = va32 ? 0xffffffffull : UINT64_MAX;
			const uint64_t edge[] = { 0, size - 1, size, top - size,
						  top - size + 1, top, top + 1,
						  0x0080000000000000ull, 0x007fffffffffffffull };

			smmu_cfg_set_region(&c);
			for (unsigned i = 0; i < 300; i++) {
				uint64_t va = i < 9 ? edge[i] : tu_rand(&rng);

				if (i >= 9 && i % 3 == 0)	/* near the boundaries */
					va = edge[i % 9] + (va % 5) - 2;
				for (unsigned tag = 0; tag < 3; tag++) {
					uint64_t v = tag ? (va << 8 >> 8) |
						 (uint64_t)(tag == 1 ? 0xab : 0xff) << 56 : va;

					assert_int_equal(smmu_in_region(&c, v),
							 region_ref(ias, upper, va32, tbi, v));
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ste_fields),
		cmocka_unit_test(test_cd_fields),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_walk_stage1),
		cmocka_unit_test(test_walk_stage2),
		cmocka_unit_test(test_walk_nested),
		cmocka_unit_test(test_httu),
		cmocka_unit_test(test_illegal_structures),
		cmocka_unit_test(test_region_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
