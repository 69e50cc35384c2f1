/* SPDX-License-Identifier: MIT */
/* Simulated physical memory: windows, sparse frames, the allocator. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>

#define FR IOPT_PHYSMEM_FRAME

static void test_window(void **state)
{
	struct iopt_physmem *pm = NULL;

	(void)state;
	assert_int_equal(iopt_physmem_create(0, 0, &pm), -EINVAL);
	assert_int_equal(iopt_physmem_create(4096, FR, &pm), -EINVAL);
	assert_int_equal(iopt_physmem_create(0, FR + 1, &pm), -EINVAL);
	assert_int_equal(iopt_physmem_create(~0ull - FR + 1, 2 * FR, &pm), -EINVAL);
	assert_int_equal(iopt_physmem_create(1ull << 50, 8 * FR, &pm), 0);
	uint8_t *a = iopt_physmem_ptr(pm, (1ull << 50) + 100, 8);

	assert_non_null(a);
	assert_int_equal(a[0], 0);		/* frames start zeroed */
	a[0] = 7;
	assert_ptr_equal(iopt_physmem_ptr(pm, (1ull << 50) + 100, 1), a);
	assert_null(iopt_physmem_ptr(pm, (1ull << 50) - 1, 1));	/* below */
	assert_null(iopt_physmem_ptr(pm, (1ull << 50) + 8 * FR, 1)); /* above */
	assert_null(iopt_physmem_ptr(pm, (1ull << 50) + FR - 4, 8)); /* crosses */
	assert_null(iopt_physmem_ptr(pm, (1ull << 50), 0));
	iopt_physmem_destroy(pm);
	iopt_physmem_destroy(NULL);
}

static void test_alloc_free(void **state)
{
	struct iopt_physmem *pm;
	uint64_t pa[64], x;

	(void)state;
	assert_int_equal(iopt_physmem_create(0x80000000ull, 4 * FR, &pm), 0);
	assert_int_equal(iopt_physmem_alloc(pm, 3000, &x), -EINVAL);
	assert_int_equal(iopt_physmem_alloc(pm, 32, &x), -EINVAL);
	assert_int_equal(iopt_physmem_alloc(pm, 2 * FR, &x), -EINVAL);
	for (int i = 0; i < 64; i++) {
		size_t sz = (size_t)1024 << (i % 5);

		assert_int_equal(iopt_physmem_alloc(pm, sz, &pa[i]), 0);
		assert_int_equal(pa[i] & (sz - 1), 0);		/* aligned */
		assert_true(pa[i] >= 0x80000000ull);
		uint8_t *p = iopt_physmem_ptr(pm, pa[i], sz);

		for (size_t k = 0; k < sz; k++)
			assert_int_equal(p[k], 0);
		memset(p, 0xee, sz);
		/* No overlap with earlier blocks. */
		for (int j = 0; j < i; j++) {
			size_t sj = (size_t)1024 << (j % 5);

			assert_true(pa[i] + sz <= pa[j] || pa[j] + sj <= pa[i]);
		}
	}
	assert_int_equal(iopt_physmem_free(pm, pa[3], 512), -EINVAL);	/* size */
	assert_int_equal(iopt_physmem_free(pm, pa[3] + 64, 8192), -EINVAL);
	assert_int_equal(iopt_physmem_free(pm, pa[3], (size_t)1024 << 3), 0);
	assert_int_equal(iopt_physmem_free(pm, pa[3], (size_t)1024 << 3), -EINVAL);
	/* A freed block is reused, zeroed. */
	assert_int_equal(iopt_physmem_alloc(pm, (size_t)1024 << 3, &x), 0);
	assert_int_equal(x, pa[3]);
	assert_int_equal(*(uint8_t *)iopt_physmem_ptr(pm, x, 1), 0);
	/* The window runs out. */
	uint64_t big;
	int r;

	while ((r = iopt_physmem_alloc(pm, FR, &big)) == 0)
		;
	assert_int_equal(r, -ENOMEM);
	iopt_physmem_destroy(pm);
}

struct pctx {
	struct iopt_physmem *pm;
	uint8_t *seen[64];
};

static void *toucher(void *arg)
{
	struct pctx *c = arg;

	for (int i = 0; i < 64; i++)
		c->seen[i] = iopt_physmem_ptr(c->pm, (uint64_t)i * FR + 8, 8);
	return NULL;
}

/* Threads creating the same frames at once all get the same memory. */
static void test_concurrent_frames(void **state)
{
	struct pctx c[4];
	pthread_t th[4];
	struct iopt_physmem *pm;

	(void)state;
	assert_int_equal(iopt_physmem_create(0, 64 * FR, &pm), 0);
	for (int i = 0; i < 4; i++) {
		c[i].pm = pm;
		pthread_create(&th[i], NULL, toucher, &c[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int f = 0; f < 64; f++)
		for (int i = 1; i < 4; i++)
			assert_ptr_equal(c[i].seen[f], c[0].seen[f]);
	iopt_physmem_destroy(pm);
}

/*
 * A physical address and its host address have the same offset in their
 * 4 KiB page (physmem.h), so the host cache lines a table spans are the
 * physical ones: a 4 KiB table is 64 lines, not 65 (what the simulation's
 * coherence model and cache maintenance count by).
 */
static void test_page_offsets(void **state)
{
	struct iopt_physmem *pm;

	(void)state;
	assert_int_equal(iopt_physmem_create(1ull << 32, 4 * FR, &pm), 0);
	for (uint64_t f = 0; f < 4; f++) {
		for (uint64_t off = 0; off < FR; off += 4096 + 8) {
			uint64_t pa = (1ull << 32) + f * FR + off;
			uintptr_t va = (uintptr_t)iopt_physmem_ptr(pm, pa, 8);

			assert_true(va != 0);
			assert_int_equal(va & 4095, pa & 4095);
		}
	}
	iopt_physmem_destroy(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_alloc_free),
		cmocka_unit_test(test_concurrent_frames),
		cmocka_unit_test(test_page_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
