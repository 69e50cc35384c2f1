/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure injected at every allocation point of map and of the
 * splits of unmap: each failure returns -ENOMEM (map) or a short count
 * (unmap), leaves every translation as it was, and leaks nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

struct op {
	const char *name;
	bool unmap;
	uint64_t va, pa, pgsize;
	size_t count;
};

static void check_shadow(struct iopt_pgtable *pt, const struct shadow *s,
			 uint64_t lo, uint64_t hi, uint64_t step)
{
	for (uint64_t va = lo; va < hi; va += step) {
		const struct smap *m = shadow_find(s, va);
		uint64_t pa;
		int r = iopt_pgtable_iova_to_phys(pt, va, &pa);

		if (m) {
			assert_int_equal(r, 0);
			assert_int_equal(pa, m->pa + (va - m->va));
		} else {
			assert_int_equal(r, -ENOENT);
		}
	}
}

/* Returns how many allocation points the operation has. */
static long run(const struct tcfg *t, const struct op *setup, size_t nsetup,
		const struct op *op, uint64_t lo, uint64_t hi, uint64_t step)
{
	for (long n = 1;; n++) {
		struct tmem m;
		struct iopt_pgtable_cfg cfg = t->cfg;
		struct iopt_pgtable *pt;
		struct shadow s;
		bool hit;

		tmem_init(&m, 0x40000000ull, 64u << 20);
		cfg.mem = &tmem_ops;
		cfg.mem_ctx = &m;
		assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
		shadow_init(&s);
		for (size_t i = 0; i < nsetup; i++) {
			const struct op *o = &setup[i];

			if (o->unmap) {
				iopt_pgtable_unmap_pages(pt, o->va, o->pgsize, o->count, NULL);
				shadow_remove(&s, o->va, o->pgsize * o->count);
			} else {
				assert_int_equal(iopt_pgtable_map_pages(pt, o->va, o->pa,
									o->pgsize, o->count,
									IOPT_READ, NULL), 0);
				shadow_add(&s, o->va, o->pgsize * o->count, o->pa,
					   IOPT_READ);
			}
		}
		m.fail_at = n;
		if (op->unmap) {
			int64_t r = iopt_pgtable_unmap_pages(pt, op->va, op->pgsize,
							     op->count, NULL);

			hit = m.fail_at == 0;
			if (hit) {
				assert_true(r >= 0 &&
					    r < (int64_t)(op->pgsize * op->count));
				shadow_remove(&s, op->va, (uint64_t)r);
			} else {
				assert_int_equal(r, op->pgsize * op->count);
				shadow_remove(&s, op->va, op->pgsize * op->count);
			}
		} else {
			uint64_t mapped = 1;
			int r = iopt_pgtable_map_pages(pt, op->va, op->pa, op->pgsize,
						       op->count, IOPT_READ, &mapped);

			hit = m.fail_at == 0;
			if (hit) {
				assert_int_equal(r, -ENOMEM);
				assert_int_equal(mapped, 0);
			} else {
				assert_int_equal(r, 0);
				shadow_add(&s, op->va, op->pgsize * op->count, op->pa,
					   IOPT_READ);
			}
		}
		m.fail_at = 0;
		check_shadow(pt, &s, lo, hi, step);
		/* The tables still work after the failure. */
		if (hit && !op->unmap) {
			assert_int_equal(iopt_pgtable_map_pages(pt, op->va, op->pa,
								op->pgsize, op->count,
								IOPT_READ, NULL), 0);
			shadow_add(&s, op->va, op->pgsize * op->count, op->pa,
				   IOPT_READ);
			check_shadow(pt, &s, lo, hi, step);
		}
		iopt_pgtable_free(pt);
		assert_int_equal(m.live, 0);
		shadow_free(&s);
		tmem_destroy(&m);
		if (!hit)
			return n - 1;
	}
}

static void test_every_allocation_point(void **state)
{
	struct tcfg t[16];
	size_t nt = tu_sample(t, 16);

	(void)state;
	for (size_t i = 0; i < nt; i++) {
		uint64_t g = t[i].cfg.granule;
		uint64_t l2 = g << (__builtin_ctzll(g) - 3);	/* level-2 item */
		uint64_t top = 1ull << t[i].cfg.ias;
		uint64_t base = top / 2;

		/* Map needing a full path of tables, spanning two leaf tables. */
		struct op map_fresh = { "map", false, base + l2 - 4 * g, 0, g, 9 };

		/* At least one table per level below the top, and two leaf
		 * tables. */
		assert_true(run(&t[i], NULL, 0, &map_fresh, base, base + 2 * l2,
				g) >= 2);

		/* Map into a partly built tree. */
		struct op pre[] = { { "pre", false, base, 0x1000000, g, 1 } };
		struct op map_more = { "map", false, base + 3 * l2 - g, 0, g, 2 };

		assert_int_equal(run(&t[i], pre, 1, &map_more, base,
				     base + 4 * l2, g), 2);

		/* Splitting a block on unmap (two levels where possible). */
		struct iopt_pgtable_info info;
		struct iopt_pgtable *probe;
		uint64_t big = 0;

		assert_int_equal(iopt_pgtable_alloc(&t[i].cfg, &probe), 0);
		iopt_pgtable_get_info(probe, &info);
		iopt_pgtable_free(probe);
		for (unsigned b = 0; b < 64; b++)
			if ((info.pgsize_bitmap >> b & 1) && (1ull << b) <= top / 4 &&
			    (1ull << b) <= (1ull << t[i].cfg.oas) / 4 &&
			    (1ull << b) <= (1ull << 31))
				big = 1ull << b;
		struct op blk[] = { { "blk", false, base, big, big, 1 } };
		struct op split = { "split", true, base + big / 2 + g, 0, g, 1 };

		if (big > g)
			assert_true(run(&t[i], blk, 1, &split, base, base + big,
					big / 64 > g ? big / 64 : g) >= 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
