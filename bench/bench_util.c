/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "bench.h"

#include <ctype.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	return plat_clock_ns();
}

#ifdef IOPT_PLATFORM_SIM
void bench_barrier_init(struct bench_barrier *b, unsigned n)
{
	b->n = n;
	b->count = 0;
	b->gen = 0;
}

void bench_barrier_wait(struct bench_barrier *b)
{
	uint64_t gen = plat_load_acq64(&b->gen);

	/* The last to arrive opens the next generation; its release store
	 * pairs with the waiters' acquire loads. */
	if (plat_fetch_add_acq_rel64(&b->count, 1) + 1 == b->n) {
		plat_store_rlx64(&b->count, 0);
		plat_store_rel64(&b->gen, gen + 1);
		return;
	}
	while (plat_load_acq64(&b->gen) == gen)
		plat_cpu_relax();
}

void bench_barrier_destroy(struct bench_barrier *b)
{
	(void)b;
}
#else
void bench_barrier_init(struct bench_barrier *b, unsigned n)
{
	b->host = malloc(sizeof(pthread_barrier_t));
	if (!b->host || pthread_barrier_init(b->host, NULL, n)) {
		fprintf(stderr, "iopt-bench: cannot create a barrier\n");
		exit(1);
	}
}

void bench_barrier_wait(struct bench_barrier *b)
{
	pthread_barrier_wait(b->host);
}

void bench_barrier_destroy(struct bench_barrier *b)
{
	pthread_barrier_destroy(b->host);
	free(b->host);
}
#endif

void bench_spin_start(uint64_t *ready, unsigned nthreads)
{
	/* The acq_rel add pairs with the other threads' acquire loads. */
	plat_fetch_add_acq_rel64(ready, 1);
	while (plat_load_acq64(ready) < nthreads)
		plat_cpu_relax();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (bench_sim_cpus())
		return bench_sim_cpus();
	return n < 1 ? 1u : (unsigned)n;
}

void bench_pin(unsigned cpu)
{
	cpu_set_t set;

	if (bench_sim_cpus())
		return;		/* a simulated CPU is its own CPU */

	CPU_ZERO(&set);
	CPU_SET(cpu % bench_ncpus(), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

bool bench_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return false;
	switch (tolower((unsigned char)*end)) {
	case 'k': v <<= 10; end++; break;
	case 'm': v <<= 20; end++; break;
	case 'g': v <<= 30; end++; break;
	case 't': v <<= 40; end++; break;
	default: break;
	}
	if (*end)
		return false;
	*out = v;
	return true;
}
