/* SPDX-License-Identifier: MIT */
/*
 * The configuration matrix: every LPAE format x granule x ias/oas pair.
 * For each: an empty table translates nothing; every page size maps at a
 * stride and translates (checked by iopt_iova_to_phys() and by the
 * reference walker, which starts from the reported registers); overlapping
 * maps fail and change nothing; unmap removes; remapping with other
 * permissions takes effect; the largest page maps at the very top of the
 * input and output ranges. Table memory sits at non-host physical
 * addresses and must all be returned.
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
			  const struct iopt_cfg *cfg, uint64_t va, uint64_t pa,
			  unsigned prot)
{
	struct iopt_info info;
	struct ref_walk w;
	uint64_t got = 0;

	iopt_get_info(pt, &info);
	TU_CHK(cur, iopt_iova_to_phys(pt, va, &got) == 0);
	TU_CHK(cur, got == pa);
	ref_walk(&info, cfg->quirks, tmem_host_p2v, m, va, &w);
	TU_CHK(cur, w.mapped);
	TU_CHK(cur, w.oa == pa);
	TU_CHK(cur, w.prot == tu_expect_prot(cfg->fmt, cfg->quirks, prot));
}

static void expect_unmapped(struct iopt_pgtable *pt, struct tmem *m,
			    const struct iopt_cfg *cfg, uint64_t va)
{
	struct iopt_info info;
	struct ref_walk w;
	uint64_t got;

	iopt_get_info(pt, &info);
	TU_CHK(cur, iopt_iova_to_phys(pt, va, &got) == -ENOENT);
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
	TU_CHK(cur, iopt_alloc(&t->cfg, &pt) == 0);
	return pt;
}

static void destroy(struct iopt_pgtable *pt, struct tmem *m)
{
	iopt_free(pt);
	TU_CHK(cur, m->live == 0);
	tmem_destroy(m);
}

static void test_empty(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncfg; i++) {
		struct tmem m;
		struct iopt_pgtable *pt = make(&cfgs[i], &m);
		struct iopt_info info;
		uint64_t top = (1ull << cfgs[i].cfg.ias) - 1;

		iopt_get_info(pt, &info);
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
static bool pick_pa(const struct iopt_cfg *cfg, uint64_t sz, unsigned n,
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
		struct iopt_info info;

		iopt_get_info(pt, &info);
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
				TU_CHK(cur, iopt_map_pages(pt, 0, 0, sz, 1, prot, &mapped) ==
				    -ERANGE);
				TU_CHK(cur, mapped == 0);
				continue;
			}
			for (unsigned k = 0; k < n; k++) {
				int r = iopt_map_pages(pt, va + k * stride,
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

			TU_CHK(cur, iopt_map_pages(pt, va, 0, sz, 1, IOPT_READ, &mapped) ==
			    -EEXIST);
			TU_CHK(cur, mapped == 0);
			TU_CHK(cur, iopt_map_pages(pt, va + sz - t->cfg.granule, 0,
					   t->cfg.granule, 1, IOPT_READ,
					   NULL) == -EEXIST);
			if (n > 1) {
				/* Spans a hole then a mapping: all or nothing. */
				TU_CHK(cur, iopt_map_pages(pt, va - sz, 0, sz, 2, IOPT_READ,
						   NULL) == -EEXIST);
				expect_unmapped(pt, &m, &t->cfg, va - sz);
			}
			expect_mapped(pt, &m, &t->cfg, va, pa, prot);
			(void)allocs;

			/* Unmap removes. */
			for (unsigned k = 0; k < n; k++)
				TU_CHK(cur, iopt_unmap_pages(pt, va + k * stride, sz, 1,
						     NULL) == (int64_t)sz);
			for (unsigned k = 0; k < n; k++)
				expect_unmapped(pt, &m, &t->cfg,
						va + k * stride + sz / 2);
			/* Remap with other permissions. */
			unsigned prot2 = IOPT_READ | IOPT_NOEXEC | IOPT_PRIV |
					 IOPT_MMIO;

			TU_CHK(cur, iopt_map_pages(pt, va, pa, sz, 1, prot2, NULL) == 0);
			expect_mapped(pt, &m, &t->cfg, va + sz - 1, pa + sz - 1,
				      prot2);
			TU_CHK(cur, iopt_unmap_pages(pt, va, sz, 1, NULL) == (int64_t)sz);
			unsigned prot3 = IOPT_WRITE;

			TU_CHK(cur, iopt_map_pages(pt, va, pa, sz, 1, prot3, NULL) == 0);
			expect_mapped(pt, &m, &t->cfg, va, pa, prot3);
			TU_CHK(cur, iopt_unmap_pages(pt, va, sz, 1, NULL) == (int64_t)sz);
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
		struct iopt_info info;
		uint64_t space = 1ull << t->cfg.ias, big = 0, pa;

		iopt_get_info(pt, &info);
		for (unsigned b = 0; b < 64; b++)
			if ((info.pgsize_bitmap >> b) & 1 && (1ull << b) < space &&
			    pick_pa(&t->cfg, 1ull << b, 1, &pa))
				big = 1ull << b;
		TU_CHK(cur, big);
		pick_pa(&t->cfg, big, 1, &pa);
		TU_CHK(cur, iopt_map_pages(pt, space - big, pa, big, 1, IOPT_READ, NULL) ==
		    0);
		expect_mapped(pt, &m, &t->cfg, space - 1, pa + big - 1, IOPT_READ);
		expect_mapped(pt, &m, &t->cfg, space - big, pa, IOPT_READ);
		/* One page past the top is out of range. */
		TU_CHK(cur, iopt_map_pages(pt, space, 0, t->cfg.granule, 1, IOPT_READ,
				   NULL) == -ERANGE);
		TU_CHK(cur, iopt_map_pages(pt, space - big, 0, big, 2, IOPT_READ, NULL) ==
		    -ERANGE);
		TU_CHK(cur, iopt_unmap_pages(pt, space - big, big, 1, NULL) ==
		    (int64_t)big);
		expect_unmapped(pt, &m, &t->cfg, space - 1);
		destroy(pt, &m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_every_size),
		cmocka_unit_test(test_top_of_range),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
