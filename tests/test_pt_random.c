/* SPDX-License-Identifier: MIT */
/*
 * Random differential stress: random maps, unmaps (whole, partial,
 * splitting, across holes) and translations, each compared with a shadow
 * map of intervals, on representative configurations. IOPT_STRESS_OPS
 * sets the operations per configuration (default 100000).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

static long nops(void)
{
	const char *e = getenv("IOPT_STRESS_OPS");

	return e ? atol(e) : 100000;
}

static void check_va(struct iopt_pgtable *pt, const struct shadow *s,
		     uint64_t va)
{
	const struct smap *m = shadow_find(s, va);
	uint64_t pa = 0;
	int r = iopt_pgtable_iova_to_phys(pt, va, &pa);

	if (m) {
		if (r != 0 || pa != m->pa + (va - m->va))
			print_error("va %#llx: r %d pa %#llx want %#llx\n",
				    (unsigned long long)va, r,
				    (unsigned long long)pa,
				    (unsigned long long)(m->pa + (va - m->va)));
		assert_int_equal(r, 0);
		assert_int_equal(pa, m->pa + (va - m->va));
	} else {
		assert_int_equal(r, -ENOENT);
	}
}

static void full_check(struct iopt_pgtable *pt, const struct shadow *s,
		       uint64_t *rng, uint64_t window)
{
	for (size_t i = 0; i < s->n; i++) {
		check_va(pt, s, s->m[i].va);
		check_va(pt, s, s->m[i].va + s->m[i].size - 1);
		check_va(pt, s, s->m[i].va + tu_rand(rng) % s->m[i].size);
		if (s->m[i].va)
			check_va(pt, s, s->m[i].va - 1);
	}
	for (int i = 0; i < 256; i++)
		check_va(pt, s, tu_rand(rng) % window);
}

static void stress_one(const struct tcfg *t, long ops, uint64_t seed)
{
	struct iopt_pgtable *pt;
	struct iopt_pgtable_info info;
	struct shadow s;
	uint64_t rng = seed, g = t->cfg.granule;
	uint64_t l2 = g << (__builtin_ctzll(g) - 3);
	uint64_t window = l2 * 1024;
	uint64_t sizes[16];
	unsigned nsizes = 0;
	long n_map = 0, n_unmap = 0, n_split = 0;

	if (window > (1ull << t->cfg.ias))
		window = 1ull << t->cfg.ias;
	assert_int_equal(iopt_pgtable_alloc(&t->cfg, &pt), 0);
	iopt_pgtable_get_info(pt, &info);
	for (unsigned b = 0; b < 64; b++)
		if ((info.pgsize_bitmap >> b & 1) && (1ull << b) <= window / 4 &&
		    (1ull << b) <= (1ull << t->cfg.oas) / 4)
			sizes[nsizes++] = 1ull << b;
	shadow_init(&s);

	for (long op = 0; op < ops; op++) {
		unsigned kind = (unsigned)(tu_rand(&rng) % 100);

		/* Keep the live set bounded: past 2048 mappings, every other
		 * operation unmaps one whole mapping, granule by granule. */
		if (s.n > 2048 && (op & 1)) {
			struct smap m = s.m[tu_rand(&rng) % s.n];

			assert_int_equal(iopt_pgtable_unmap_pages(pt, m.va, g, m.size / g,
								  NULL), (int64_t)m.size);
			shadow_remove(&s, m.va, m.size);
			check_va(pt, &s, m.va);
			continue;
		}
		uint64_t sz = (tu_rand(&rng) & 1) ? sizes[0] :
				sizes[tu_rand(&rng) % nsizes];

		if (kind < 45) {
			/* Map. */
			unsigned cnt = 1 + (unsigned)(tu_rand(&rng) % (sz <= l2 ? 4 : 1));
			uint64_t va = (tu_rand(&rng) % window) & ~(sz - 1);
			uint64_t pa = (tu_rand(&rng) % (1ull << t->cfg.oas)) &
				      ~(sz - 1);
			unsigned prot = IOPT_READ | (tu_rand(&rng) & 1 ? IOPT_WRITE : 0);

			if (va + cnt * sz > window ||
			    pa + cnt * sz - 1 > (1ull << t->cfg.oas) - 1)
				continue;
			bool clash = shadow_overlaps(&s, va, cnt * sz);
			int r = iopt_pgtable_map_pages(pt, va, pa, sz, cnt, prot, NULL);

			assert_int_equal(r, clash ? -EEXIST : 0);
			if (!clash) {
				shadow_add(&s, va, cnt * sz, pa, prot);
				n_map++;
			}
			check_va(pt, &s, va);
		} else if (kind < 80 && s.n) {
			/* Unmap a range that is entirely mapped. */
			const struct smap *m = &s.m[tu_rand(&rng) % s.n];

			if (sz > m->size)
				sz = sizes[0];
			uint64_t first = (m->va + sz - 1) & ~(sz - 1);

			if (first + sz > m->va + m->size)
				continue;
			uint64_t avail = (m->va + m->size - first) / sz;
			uint64_t k = tu_rand(&rng) % avail;
			uint64_t cnt = 1 + tu_rand(&rng) % (avail - k < 4 ? avail - k : 4);
			uint64_t va = first + k * sz;
			bool partial = sz < m->size;

			assert_int_equal(iopt_pgtable_unmap_pages(pt, va, sz, cnt, NULL),
					 (int64_t)(cnt * sz));
			shadow_remove(&s, va, cnt * sz);
			check_va(pt, &s, va);
			check_va(pt, &s, va + cnt * sz - 1);
			if (va > 0)
				check_va(pt, &s, va - 1);
			n_unmap++;
			n_split += partial;
		} else if (kind < 90) {
			/* Unmap granules from a random place: stops at holes. */
			uint64_t va = (tu_rand(&rng) % window) & ~(g - 1);
			uint64_t cnt = 1 + tu_rand(&rng) % 8;

			if (va + cnt * g > window)
				continue;
			uint64_t want = shadow_mapped_prefix(&s, va, cnt * g);

			assert_int_equal(iopt_pgtable_unmap_pages(pt, va, g, cnt, NULL),
					 (int64_t)want);
			if (want)
				shadow_remove(&s, va, want);
		} else {
			check_va(pt, &s, tu_rand(&rng) % window);
		}
		if (op % 5000 == 0)
			full_check(pt, &s, &rng, window);
	}
	full_check(pt, &s, &rng, window);
	print_message("  %-28s %ld ops: %ld maps, %ld unmaps (%ld partial), "
		      "%zu live mappings\n", t->name, ops, n_map, n_unmap, n_split,
		      s.n);
	/* Everything unmaps, and then nothing translates. */
	while (s.n) {
		struct smap m = s.m[s.n - 1];

		assert_int_equal(iopt_pgtable_unmap_pages(pt, m.va, g, m.size / g, NULL),
				 (int64_t)m.size);
		shadow_remove(&s, m.va, m.size);
	}
	full_check(pt, &s, &rng, window);
	iopt_pgtable_free(pt);
	shadow_free(&s);
}

static void test_random_differential(void **state)
{
	struct tcfg t[16];
	size_t n = tu_sample(t, 16);

	(void)state;
	for (size_t i = 0; i < n; i++)
		stress_one(&t[i], nops(), 0x1234567ull + i * 7919);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_differential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
