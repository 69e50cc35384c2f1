/* SPDX-License-Identifier: MIT */
/*
 * Allocation-failure injection for the IOVA tests. Their binaries link
 * with -Wl,--wrap for malloc, calloc, realloc, aligned_alloc and
 * pthread_create, so every such call made by the library's objects (and
 * by the test itself) passes through here: counted, and failed on demand.
 * The library has no hook of its own for this.
 */
#ifndef IOPT_TEST_IOVA_FAILINJ_H
#define IOPT_TEST_IOVA_FAILINJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fail the n-th allocation from now (1: the next one); 0: none. */
void fi_fail_nth(long n);
/* Did an armed failure fire since the last fi_fail_nth()? Disarms. */
bool fi_fired(void);
/* Allocations and bytes requested since the last fi_count_reset(). */
void fi_count_reset(void);
long fi_calls(void);
uint64_t fi_bytes(void);
/* Called (once, then cleared) at the next allocation; runs with injection
 * off, so it may call the library. */
void fi_on_next_alloc(void (*fn)(void *), void *arg);
/* The next pthread_create fails with this error (0: none). */
void fi_fail_thread(int err);

#endif
