/* SPDX-License-Identifier: MIT */
/*
 * The configuration matrix: every LPAE format x granule x ias/oas pair. For
 * each: an empty table translates nothing; every page size maps at a stride and
 * translates (checked by iopt_pgtable_iova_to_phys() and by the reference
 * walker, which starts from the reported registers); overlapping maps fail and
 * change nothing; unmap removes; remapping with other permissions takes effect;
 * the largest page maps at the very top of the input and output ranges. Table
 * memory sits at non-host physical addresses and must all be returned.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

static const char *cur;


static struct tcfg cfgs[256];
static size_t ncfg;

static int setup(void **state)
{
	(void)state;
	ncfg = tu_lpae_matrix(cfgs, 256);
	return 0;
}

/* Translate va both ways and check it maps to pa with prot. */
static void expect_mapped(struct iopt_pgtable *pt, struct tmem *m,
			  const struct iopt_pgtable_cfg *cfg, uint64_t va, uint64_t pa,
			  unsigned prot)
{
	struct iopt_pgtable_info info;
	struct ref_walk w;
	uint64_t got = 0;

	iopt_pgtable_get_info(pt, &info);
	TU_CHK(cur, iopt_pgtable_iova_to_phys(pt, va, &got) == 0);
	TU_CHK(cur, got == pa);
	ref_walk(&info, cfg->quirks, tmem_host_p2v, m, va, &w);
	TU_CHK(cur, w.mapped);
	TU_CHK(cur, w.oa == pa);
	TU_CHK(cur, w.prot == tu_expect_prot(cfg->fmt, cfg->quirks, prot));
}

static void expect_unmapped(struct iopt_pgtable *pt, struct tmem *m,
			    const struct iopt_pgtable_cfg *cfg, uint64_t va)
{
	struct iopt_pgtable_info info;
	struct ref_walk w;
	uint64_t got;

	iopt_pgtable_get_info(pt, &info);
	TU_CHK(cur, iopt_pgtable_iova_to_phys(pt, va, &got) == -ENOENT);
	ref_walk(&info, cfg->quirks, tmem_host_p2v, m, va, &w);
	TU_CHK(cur, !w.mapped);
}

static struct iopt_pgtable *make(struct tcfg *t, struct tmem *m)
{
	struct iopt_pgtable *pt = NULL;

	tmem_init(m, 0x10000000ull, 256u << 20);
	t->cfg.mem = &tmem_ops;
	t->cfg.mem_ctx = m;
	cur = t->name;
	TU_CHK(cur, iopt_pgtable_alloc(&t->cfg, &pt) == 0);
	return pt;
}

static void destroy(struct iopt_pgtable *pt, struct tmem *m)
{
	iopt_pgtable_free(pt);
	TU_CHK(cur, m->live == 0);
	tmem_destroy(m);
}

static void test_empty(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncfg; i++) {
		struct tmem m;
		struct iopt_pgtable *pt = make(&cfgs[i], &m);
		struct iopt_pgtable_info info;
		uint64_t top = (1ull << cfgs[i].cfg.ias) - 1;

		iopt_pgtable_get_info(pt, &info);
		TU_CHK(cur, info.pgsize_bitmap & cfgs[i].cfg.granule);
		TU_CHK(cur, info.levels >= 1 && info.levels <= 4);
		TU_CHK(cur, info.start_level + info.levels == 4);
		expect_unmapped(pt, &m, &cfgs[i].cfg, 0);
		expect_unmapped(pt, &m, &cfgs[i].cfg, top);
		expect_unmapped(pt, &m, &cfgs[i].cfg, top / 3);
		destroy(pt, &m);
	}
}

/* Choose an output address for a page of size sz, or report none fits. */
static bool pick_pa(const struct iopt_pgtable_cfg *cfg, uint64_t sz, unsigned n,
		    uint64_t *pa)
{
	uint64_t space = cfg->oas >= 64 ? ~0ull : 1ull << cfg->oas;

	if (sz > space / n)
		return false;
	/* Highest aligned run that fits: exercises the top output bits. */
	*pa = (space - sz * n) & ~(sz - 1);
	return true;
}

static void test_every_size(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncfg; i++) {
		struct tmem m;
		struct tcfg *t = &cfgs[i];
		struct iopt_pgtable *pt = make(t, &m);
		struct iopt_pgtable_info info;

		iopt_pgtable_get_info(pt, &info);
		for (unsigned b = 0; b < 64; b++) {
			uint64_t sz = 1ull << b, pa, mapped = 1;
			uint64_t space = 1ull << t->cfg.ias;
			unsigned n = sz * 8 <= space ? 3 : 1;
			uint64_t stride = n > 1 ? sz * 2 : sz;
			uint64_t va = n > 1 ? sz * 2 : 0;
			unsigned prot = IOPT_READ | IOPT_WRITE | IOPT_CACHE;

			if (!(info.pgsize_bitmap & sz))
				continue;
			if (!pick_pa(&t->cfg, sz, 2 * n, &pa)) {
				/* No output address fits: must be refused. */
				TU_CHK(cur, iopt_pgtable_map_pages(pt, 0, 0, sz, 1, prot, &mapped) ==
				    -ERANGE);
				TU_CHK(cur, mapped == 0);
				continue;
			}
			for (unsigned k = 0; k < n; k++) {
				int r = iopt_pgtable_map_pages(pt, va + k * stride,
							       pa + k * sz, sz, 1, prot,
							       &mapped);

				if (r)
					print_error("size %#llx va %#llx pa %#llx: %d\n",
						    (unsigned long long)sz,
						    (unsigned long long)(va + k * stride),
						    (unsigned long long)(pa + k * sz), r);
				TU_CHK(cur, r == 0);
				TU_CHK(cur, mapped == sz);
			}
			for (unsigned k = 0; k < n; k++) {
				uint64_t v = va + k * stride, p = pa + k * sz;

				expect_mapped(pt, &m, &t->cfg, v, p, prot);
				expect_mapped(pt, &m, &t->cfg, v + sz / 2 + 8,
					      p + sz / 2 + 8, prot);
				expect_mapped(pt, &m, &t->cfg, v + sz - 1,
					      p + sz - 1, prot);
				if (n > 1)
					expect_unmapped(pt, &m, &t->cfg, v + sz);
			}
			/* Overlaps fail and change nothing. */
			long allocs = m.allocs;

			TU_CHK(cur, iopt_pgtable_map_pages(pt, va, 0, sz, 1, IOPT_READ, &mapped) ==
			    -EEXIST);
			TU_CHK(cur, mapped == 0);
			TU_CHK(cur, iopt_pgtable_map_pages(pt, va + sz - t->cfg.granule, 0,
					   t->cfg.granule, 1, IOPT_READ,
					   NULL) == -EEXIST);
			if (n > 1) {
				/* Spans a hole then a mapping: all or nothing. */
				TU_CHK(cur, iopt_pgtable_map_pages(pt, va - sz, 0, sz, 2, IOPT_READ,
						   NULL) == -EEXIST);
				expect_unmapped(pt, &m, &t->cfg, va - sz);
			}
			expect_mapped(pt, &m, &t->cfg, va, pa, prot);
			(void)allocs;

			/* Unmap removes. */
			for (unsigned k = 0; k < n; k++)
				TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va + k * stride, sz, 1,
						     NULL) == (int64_t)sz);
			for (unsigned k = 0; k < n; k++)
				expect_unmapped(pt, &m, &t->cfg,
						va + k * stride + sz / 2);
			/* Remap with other permissions. */
			unsigned prot2 = IOPT_READ | IOPT_NOEXEC | IOPT_PRIV |
					 IOPT_MMIO;

			TU_CHK(cur, iopt_pgtable_map_pages(pt, va, pa, sz, 1, prot2, NULL) == 0);
			expect_mapped(pt, &m, &t->cfg, va + sz - 1, pa + sz - 1,
				      prot2);
			TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va, sz, 1, NULL) == (int64_t)sz);
			unsigned prot3 = IOPT_WRITE;

			TU_CHK(cur, iopt_pgtable_map_pages(pt, va, pa, sz, 1, prot3, NULL) == 0);
			expect_mapped(pt, &m, &t->cfg, va, pa, prot3);
			TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va, sz, 1, NULL) == (int64_t)sz);
			expect_unmapped(pt, &m, &t->cfg, va);
		}
		destroy(pt, &m);
	}
}

static void test_top_of_range(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncfg; i++) {
		struct tmem m;
		struct tcfg *t = &cfgs[i];
		struct iopt_pgtable *pt = make(t, &m);
		struct iopt_pgtable_info info;
		uint64_t space = 1ull << t->cfg.ias, big = 0, pa;

		iopt_pgtable_get_info(pt, &info);
		for (unsigned b = 0; b < 64; b++)
			if ((info.pgsize_bitmap >> b) & 1 && (1ull << b) < space &&
			    pick_pa(&t->cfg, 1ull << b, 1, &pa))
				big = 1ull << b;
		TU_CHK(cur, big);
		pick_pa(&t->cfg, big, 1, &pa);
		TU_CHK(cur, iopt_pgtable_map_pages(pt, space - big, pa, big, 1, IOPT_READ, NULL) ==
		    0);
		expect_mapped(pt, &m, &t->cfg, space - 1, pa + big - 1, IOPT_READ);
		expect_mapped(pt, &m, &t->cfg, space - big, pa, IOPT_READ);
		/* One page past the top is out of range. */
		TU_CHK(cur, iopt_pgtable_map_pages(pt, space, 0, t->cfg.granule, 1, IOPT_READ,
				   NULL) == -ERANGE);
		TU_CHK(cur, iopt_pgtable_map_pages(pt, space - big, 0, big, 2, IOPT_READ, NULL) ==
		    -ERANGE);
		TU_CHK(cur, iopt_pgtable_unmap_pages(pt, space - big, big, 1, NULL) ==
		    (int64_t)big);
		expect_unmapped(pt, &m, &t->cfg, space - 1);
		destroy(pt, &m);
	}
}

/* ---- page sizes and start levels against the architecture -------------- */

/*
 * What the architecture allows at each level of each granule, written from
 * the Arm ARM: leaves (D8.3; the pseudocode's BlockDescSupported(): 4K
 * blocks at levels 1 and 2, 16K at level 2, 64K at level 2 and at level 1
 * only with a 52-bit PA; level 0 (4K) and level 1 (16K) blocks need TCR.DS,
 * which the library does not use) and contiguous runs (D8.7.1 Table D8-104:
 * 4K 16 items at levels 1-3; 16K 32 at level 2, 128 at level 3; 64K 32 at
 * levels 2 and 3; at a 64K level 1 block the bit is RES0). VMSAv7 LPAE
 * (4K only): blocks at levels 1 and 2, runs of 16 at every level.
 */
struct arch_level {
	bool leaf;
	unsigned run;		/* items in a contiguous run, 0: none */
};

static const struct arch_level arch_4k[4] = {
	{ false, 0 }, { true, 16 }, { true, 16 }, { true, 16 } };
static const struct arch_level arch_16k[4] = {
	{ false, 0 }, { false, 0 }, { true, 32 }, { true, 128 } };
static const struct arch_level arch_64k[4] = {
	{ false, 0 }, { false, 0 }, { true, 32 }, { true, 32 } };

static unsigned lg2u(uint64_t v)
{
	return (unsigned)__builtin_ctzll(v);
}

/* Item size lg2 of level lvl with granule g (lg2): g + (3 - lvl)(g - 3). */
static unsigned item_lg2(unsigned g, unsigned lvl)
{
	return g + (3 - lvl) * (g - 3);
}

/* The page sizes a table with this geometry may offer. */
static uint64_t arch_bitmap(unsigned g, unsigned start, unsigned ias,
			    unsigned oas)
{
	const struct arch_level *t = g == 12 ? arch_4k : g == 14 ? arch_16k :
						       arch_64k;
	uint64_t bm = 0;

	for (unsigned lvl = start; lvl <= 3; lvl++) {
		unsigned s = item_lg2(g, lvl);
		bool leaf = t[lvl].leaf || (g == 16 && lvl == 1 && oas == 52);

		if (!leaf)
			continue;
		bm |= 1ull << s;
		/* A run larger than the input range is a programming error
		 * (D8.7.1.3). */
		if (t[lvl].run && s + lg2u(t[lvl].run) <= ias)
			bm |= 1ull << (s + lg2u(t[lvl].run));
	}
	return bm;
}

/*
 * May a stage 2 walk start at lvl? VMSAv7/AArch32 VTCR.SL0: levels 1 and
 * 2. AArch64 (stage 2 start-level checks of the translation table walk
 * pseudocode): 4K levels 1 and 2, level 0 only with a PA size above 42
 * bits; 16K and 64K levels 2 and 3, level 1 only with a PA size above 40
 * (16K) or 42 (64K) bits. The library's oas stands for the PA size. The
 * input size must then be covered by 1 to 16 tables at that level.
 */
static bool s2_start_ok(bool aa32, unsigned g, unsigned oas, unsigned lvl,
			unsigned ias)
{
	bool enc;
	int rest = (int)ias - (int)item_lg2(g, lvl);

	if (lvl > 3)
		return false;
	if (aa32)
		enc = lvl == 1 || lvl == 2;
	else if (g == 12)
		enc = lvl == 1 || lvl == 2 || (lvl == 0 && oas > 42);
	else if (g == 14)
		enc = lvl == 2 || lvl == 3 || (lvl == 1 && oas > 40);
	else
		enc = lvl == 2 || lvl == 3 || (lvl == 1 && oas > 42);
	return enc && rest >= 1 && rest <= (int)(g - 3) + 4;
}

static void test_pgsize_bitmap_vs_architecture(void **state)
{
	static const enum iopt_pgtable_fmt fmts[] = {
		IOPT_ARM_64_LPAE_S1, IOPT_ARM_64_LPAE_S2,
		IOPT_ARM_32_LPAE_S1, IOPT_ARM_32_LPAE_S2,
	};
	static const unsigned oases[] = { 32, 40, 42, 44, 48, 52 };
	unsigned accepted = 0;

	(void)state;
	for (unsigned f = 0; f < 4; f++)
		for (unsigned g = 12; g <= 16; g += 2)
			for (unsigned o = 0; o < 6; o++)
				for (unsigned ias = 0; ias <= 64; ias++) {
		enum iopt_pgtable_fmt fmt = fmts[f];
		bool aa32 = fmt == IOPT_ARM_32_LPAE_S1 ||
			    fmt == IOPT_ARM_32_LPAE_S2;
		bool s2 = fmt == IOPT_ARM_64_LPAE_S2 ||
			  fmt == IOPT_ARM_32_LPAE_S2;
		unsigned oas = oases[o];
		char name[64];

		/* Output sizes the format has (TCR.IPS/VTCR.PS up to 48, 52
		 * with 64K; VMSAv7 40): the others are tested elsewhere. */
		if (aa32 ? (g != 12 || oas > 40) : (oas == 52 && g != 16) ||
							   oas < 40)
			continue;
		snprintf(name, sizeof(name), "%s g%u oas%u ias%u",
			 iopt_pgtable_fmt_name(fmt), 1u << g, oas, ias);
		cur = name;

		/* Input sizes: TnSZ 16-39 (25-48 bits; 52 with the 64K
		 * granule, FEAT_LVA); VMSAv7 stage 1 T0SZ 0-7, stage 2 T0SZ
		 * -8 to 7. Stage 2 also needs an encodable start level. */
		unsigned lo = 25, hi = aa32 ? (s2 ? 40 : 32) : g == 16 ? 52 : 48;
		bool ok = ias >= lo && ias <= hi;

		if (ok && s2) {
			bool any = false;

			for (unsigned l = 0; l <= 3; l++)
				any |= s2_start_ok(aa32, g, oas, l, ias);
			ok = any;
		}
		struct iopt_pgtable_cfg cfg = { .fmt = fmt, .granule = 1u << g,
					.ias = ias, .oas = oas,
					.coherent_walk = true };
		struct iopt_pgtable *pt = NULL;
		int ret = iopt_pgtable_alloc(&cfg, &pt);

		TU_CHK(cur, ret == (ok ? 0 : -EINVAL));
		if (ret)
			continue;
		accepted++;

		struct iopt_pgtable_info i;
		unsigned start;

		iopt_pgtable_get_info(pt, &i);
		if (s2) {
			/* The start level the VTCR names: SL0, bits 7:6. */
			unsigned sl0 = (unsigned)(i.regs.tcr >> 6) & 3;

			start = (aa32 || g == 12 ? 2 : 3) - sl0;
			TU_CHK(cur, s2_start_ok(aa32, g, oas, start, ias));
			TU_CHK(cur, i.concat ==
				    1u << (ias - item_lg2(g, start) > g - 3 ?
						   ias - item_lg2(g, start) - (g - 3) :
						   0));
		} else {
			/* Stage 1 starts where the fewest levels cover ias
			 * (levels = ceil((ias - g) / (g - 3))). */
			start = 4 - (ias - g + g - 4) / (g - 3);
			TU_CHK(cur, i.concat == 1);
		}
		TU_CHK(cur, i.start_level == start);
		TU_CHK(cur, i.pgsize_bitmap == arch_bitmap(g, start, ias, oas));
		iopt_pgtable_free(pt);
	}
	/* Guard against a loop that skipped everything. */
	assert_true(accepted > 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_every_size),
		cmocka_unit_test(test_top_of_range),
		cmocka_unit_test(test_pgsize_bitmap_vs_architecture),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
