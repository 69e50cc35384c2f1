/* SPDX-License-Identifier: MIT */
#include "iova_failinj.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* The real functions, and the wrappers the linker substitutes for them
 * (their symbol names are fixed by ld's --wrap). */
void *fi_real_malloc(size_t n) __asm__("__real_malloc");
void *fi_real_calloc(size_t k, size_t n) __asm__("__real_calloc");
void *fi_real_realloc(void *p, size_t n) __asm__("__real_realloc");
void *fi_real_aligned_alloc(size_t a, size_t n) __asm__("__real_aligned_alloc");
int fi_real_pthread_create(pthread_t *t, const pthread_attr_t *a,
			   void *(*fn)(void *), void *arg)
	__asm__("__real_pthread_create");

void *fi_malloc(size_t n) __asm__("__wrap_malloc");
void *fi_calloc(size_t k, size_t n) __asm__("__wrap_calloc");
void *fi_realloc(void *p, size_t n) __asm__("__wrap_realloc");
void *fi_aligned_alloc(size_t a, size_t n) __asm__("__wrap_aligned_alloc");
int fi_pthread_create(pthread_t *t, const pthread_attr_t *a,
		      void *(*fn)(void *), void *arg)
	__asm__("__wrap_pthread_create");

static long fail_left, calls;
static bool fired;
static uint64_t bytes;
static void (*hook)(void *);
static void *hook_arg;
static int thread_err;

void fi_fail_nth(long n)
{
	__atomic_store_n(&fail_left, n, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fired, false, __ATOMIC_SEQ_CST);
}

bool fi_fired(void)
{
	__atomic_store_n(&fail_left, 0, __ATOMIC_SEQ_CST);
	return __atomic_exchange_n(&fired, false, __ATOMIC_SEQ_CST);
}

void fi_count_reset(void)
{
	__atomic_store_n(&calls, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&bytes, 0, __ATOMIC_SEQ_CST);
}

long fi_calls(void)
{
	return __atomic_load_n(&calls, __ATOMIC_SEQ_CST);
}

uint64_t fi_bytes(void)
{
	return __atomic_load_n(&bytes, __ATOMIC_SEQ_CST);
}

void fi_on_next_alloc(void (*fn)(void *), void *arg)
{
	hook_arg = arg;
	__atomic_store_n(&hook, fn, __ATOMIC_SEQ_CST);
}

void fi_fail_thread(int err)
{
	__atomic_store_n(&thread_err, err, __ATOMIC_SEQ_CST);
}

/* Count one allocation; true if it must fail. */
static bool fi_fail(size_t n)
{
	void (*fn)(void *) = __atomic_exchange_n(&hook, NULL, __ATOMIC_SEQ_CST);

	if (fn)
		fn(hook_arg);
	__atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&bytes, n, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&fail_left, __ATOMIC_SEQ_CST) <= 0)
		return false;
	if (__atomic_sub_fetch(&fail_left, 1, __ATOMIC_SEQ_CST) != 0)
		return false;
	__atomic_store_n(&fired, true, __ATOMIC_SEQ_CST);
	return true;
}

void *fi_malloc(size_t n)
{
	return fi_fail(n) ? NULL : fi_real_malloc(n);
}

void *fi_calloc(size_t k, size_t n)
{
	return fi_fail(k * n) ? NULL : fi_real_calloc(k, n);
}

void *fi_realloc(void *p, size_t n)
{
	return fi_fail(n) ? NULL : fi_real_realloc(p, n);
}

void *fi_aligned_alloc(size_t a, size_t n)
{
	return fi_fail(n) ? NULL : fi_real_aligned_alloc(a, n);
}

int fi_pthread_create(pthread_t *t, const pthread_attr_t *a,
		      void *(*fn)(void *), void *arg)
{
	int err = __atomic_exchange_n(&thread_err, 0, __ATOMIC_SEQ_CST);

	if (err)
		return err;
	return fi_real_pthread_create(t, a, fn, arg);
}
