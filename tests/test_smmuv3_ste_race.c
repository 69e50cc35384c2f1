/* SPDX-License-Identifier: MIT */
/*
 * A device translating through a stream while the driver rewrites the
 * stream's STE (detach: Config = abort; attach: Config = S1 and the CD).
 * IHI0070 3.21.3: the SMMU may read a reachable STE at any time, each
 * doubleword single-copy atomically. Every access either translates to the
 * mapped page or faults, never anything else; and the model's structure
 * reads and the driver's writes are atomic on both sides, so the
 * ThreadSanitizer build reports no race (the model used to copy the STE
 * with plain loads).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <iopgtable/testbed.h>

#define PAGE	4096ull
#define BUF_PA	0x200000000ull
#define ROUNDS	300

struct flipper {
	struct iopt_dma *d;
	uint32_t sid;
	int ret;
	int started;		/* the device's first access is done */
	int done;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;

	while (!__atomic_load_n(&f->started, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < ROUNDS && !f->ret; i++) {
		f->ret = iopt_dma_detach(f->d, f->sid);
		if (!f->ret)
			f->ret = iopt_dma_attach(f->d, f->sid);
	}
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_translate_while_ste_rewritten(void **state)
{
	struct iopt_testbed_cfg cfg;
	struct iopt_testbed *tb;
	struct flipper f = { 0 };
	unsigned long ok = 0, faults = 0;
	uint64_t iova, pa;
	pthread_t t;

	(void)state;
	iopt_testbed_default_cfg(&cfg, IOPT_TESTBED_SMMUV3);
	assert_int_equal(iopt_testbed_create(&cfg, &tb), 0);
	f.d = iopt_testbed_dma(tb);
	f.sid = iopt_testbed_sid(tb);
	assert_int_equal(iopt_dma_map(f.d, BUF_PA, PAGE, IOPT_READ, ~0ull, 0,
				      &iova), 0);
	assert_int_equal(pthread_create(&t, NULL, flip, &f), 0);
	do {
		unsigned fault = 0;
		int r = iopt_testbed_dev_access(tb, f.sid, iova + 8, false, &pa,
						&fault);

		if (r == 0) {
			assert_int_equal(pa, BUF_PA + 8);
			ok++;
		} else {
			assert_int_equal(r, -EFAULT);
			faults++;
		}
		__atomic_store_n(&f.started, 1, __ATOMIC_RELEASE);
	} while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE));
	pthread_join(t, NULL);
	assert_int_equal(f.ret, 0);
	/* Attached again at the end: the translation is back. */
	assert_int_equal(iopt_testbed_dev_access(tb, f.sid, iova + 8, false,
						 &pa, NULL), 0);
	assert_int_equal(pa, BUF_PA + 8);
	/* The first access came before any flip: it translated. */
	assert_true(ok > 0);
	assert_int_equal(iopt_dma_unmap(f.d, iova, PAGE, 0), 0);
	iopt_testbed_destroy(tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate_while_ste_rewritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
