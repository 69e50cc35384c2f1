/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench iova: the IOVA allocator.
 *
 * cached_pair   alloc+free of one page through the per-CPU caches, 1 and
 *               2 threads (--threads: other counts), each its own CPU: ns
 *               per pair, pairs/s, and scaling: pairs/s over the first
 *               count's per-thread pairs/s.
 * tree_pair     the same through the range allocator alone.
 * fragmented    ns per 2-page allocation (mean and worst) after random
 *               fragmentation, at live = 10^4 and 10^6 ranges (--live N:
 *               only that one, e.g. for callgrind).
 * exhaust32     brief 5.2: a PCI device, 32-bit space full, 128 CPUs (one
 *               thread acting as each in turn): ns per allocation for each
 *               cache-flush policy.
 * invalidation  flush-alls per million unmaps for each invalidation
 *               policy, on a DMA map/unmap stream over 16 CPUs.
 * Every case prints one JSON object per line with --json.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/iova.h>

#include "bench.h"

static bool json;
static unsigned runs = 5;
static long only_live;	/* --live N: fragmented at N live only */
/* --threads: the pair cases' thread counts (default 1 and 2). */
#define PAIR_MAX_THREADS 256
static unsigned pair_threads[8] = { 1, 2 }, pair_nthreads = 2;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- pairs -------------------------------------------------------------- */

struct pair_ctx {
	struct iopt_iova *d;
	unsigned cpu;
	bool cached;
	long n;
	struct bench_barrier *bar;
	uint64_t t0, t1;
};

static void *pair_worker(void *arg)
{
	struct pair_ctx *c = arg;
	uint64_t p, limit = (1ull << 36) - 1;

	bench_pin(c->cpu);
	/* Warm the caches. */
	for (int i = 0; i < 1000; i++) {
		if (c->cached) {
			iopt_iova_alloc_cached(c->d, 1, limit, c->cpu, true, &p);
			iopt_iova_free_cached(c->d, p, 1, c->cpu);
		}
	}
	bench_barrier_wait(c->bar);
	c->t0 = bench_now_ns();
	if (c->cached) {
		for (long i = 0; i < c->n; i++) {
			iopt_iova_alloc_cached(c->d, 1, limit, c->cpu, true, &p);
			iopt_iova_free_cached(c->d, p, 1, c->cpu);
		}
	} else {
		for (long i = 0; i < c->n; i++) {
			iopt_iova_alloc(c->d, 1, limit, &p);
			iopt_iova_free(c->d, p, 1);
		}
	}
	c->t1 = bench_now_ns();
	return NULL;
}

/* ns per pair (mean over threads) and pairs/s (all threads). */
static void pair_run(bool cached, unsigned threads, long n, double *ns,
		     double *pps)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 36, .nr_cpus = threads };
	struct iopt_iova *d;
	struct pair_ctx *c = calloc(threads, sizeof(*c));
	struct plat_thread *th = calloc(threads, sizeof(*th));
	struct bench_barrier bar;

	iopt_iova_create(&cfg, &d);
	bench_barrier_init(&bar, threads);
	for (unsigned i = 0; i < threads; i++) {
		c[i] = (struct pair_ctx){ d, i, cached, n, &bar, 0, 0 };
		if (plat_thread_start(&th[i], pair_worker, &c[i])) {
			fprintf(stderr, "iova: cannot start thread %u\n", i);
			exit(1);
		}
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	double sum = 0;

	for (unsigned i = 0; i < threads; i++) {
		plat_thread_join(&th[i]);
		sum += (double)(c[i].t1 - c[i].t0) / (double)n;
		lo = c[i].t0 < lo ? c[i].t0 : lo;
		hi = c[i].t1 > hi ? c[i].t1 : hi;
	}
	*ns = sum / threads;
	*pps = (double)n * threads / ((double)(hi - lo) * 1e-9);
	bench_barrier_destroy(&bar);
	iopt_iova_destroy(d);
	free(c);
	free(th);
}

static void case_pairs(void)
{
	const char *names[2] = { "tree_pair", "cached_pair" };
	static double ns[2][8][64], pps[2][8][64];

	/* Interleave variants run by run (shared, noisy machine). */
	for (unsigned r = 0; r < runs; r++)
		for (int cached = 0; cached < 2; cached++)
			for (unsigned k = 0; k < pair_nthreads; k++)
				pair_run(cached, pair_threads[k],
					 bench_iters(cached ? 2000000 : 500000, 100),
					 &ns[cached][k][r], &pps[cached][k][r]);
	double base[2] = { 0, 0 };

	for (int cached = 0; cached < 2; cached++)
		for (unsigned k = 0; k < pair_nthreads; k++) {
			unsigned t = pair_threads[k];
			double m = bench_median(ns[cached][k], runs);
			double p = bench_median(pps[cached][k], runs);

			if (k == 0)
				base[cached] = p / pair_threads[0];
			if (json)
				printf("{\"suite\":\"iova\",\"case\":\"%s\",\"threads\":%u,"
				       "\"ns_per_pair\":%.2f,\"pairs_per_sec\":%.0f,"
				       "\"scaling\":%.3f,\"runs\":%u}\n",
				       names[cached], t, m, p, p / base[cached], runs);
			else
				printf("%-12s threads %u  %8.2f ns/pair  %12.0f pairs/s  %.2fx\n",
				       names[cached], t, m, p, p / base[cached]);
		}
	double tree1 = bench_median(ns[0][0], runs), cache1 = bench_median(ns[1][0], runs);


	if (json)
		printf("{\"suite\":\"iova\",\"case\":\"cached_vs_tree\","
		       "\"speedup\":%.2f}\n", tree1 / cache1);
	else
		printf("cached pair is %.1fx faster than the tree pair\n", tree1 / cache1);
}

/* ---- fragmentation ------------------------------------------------------ */

static void case_fragmented(void)
{
	static const long lives[2] = { 10000, 1000000 };

	for (int k = 0; k < 2; k++) {
		long live = lives[k];

		if (only_live && live != only_live)
			continue;
		/* A space about four times what the live ranges take. */
		uint64_t end = 1;

		while (end < (uint64_t)live * 4 * 8)
			end <<= 1;
		struct iopt_iova_cfg cfg = { .end_pfn = end, .nr_cpus = 1 };
		struct iopt_iova *d;
		uint64_t rng = 42, *pfn = malloc(sizeof(uint64_t) * 2 * live);
		uint64_t *sz = malloc(sizeof(uint64_t) * 2 * live);

		iopt_iova_create(&cfg, &d);
		for (long i = 0; i < 2 * live; i++) {
			sz[i] = 1 + rnd(&rng) % 8;
			if (iopt_iova_alloc(d, sz[i], end - 1, &pfn[i]))
				sz[i] = 0;
		}
		/* Free a random half: holes everywhere. */
		for (long i = 0; i < 2 * live; i++) {
			long j = (long)(rnd(&rng) % (uint64_t)(2 * live));
			uint64_t tp = pfn[i], ts = sz[i];

			pfn[i] = pfn[j];
			sz[i] = sz[j];
			pfn[j] = tp;
			sz[j] = ts;
		}
		for (long i = 0; i < live; i++)
			if (sz[i])
				iopt_iova_free(d, pfn[i], sz[i]);
		/* Measure 2-page allocations one by one, then free them. */
		const long m = 20000;
		uint64_t *got = malloc(sizeof(uint64_t) * m), worst = 0;
		double total = 0, *each = malloc(sizeof(double) * m);

		for (long i = 0; i < m; i++) {
			uint64_t t0 = bench_now_ns();
			int r = iopt_iova_alloc(d, 2, end - 1, &got[i]);
			uint64_t t = bench_now_ns() - t0;

			if (r)
				got[i] = 0;
			total += (double)t;
			each[i] = (double)t;
			worst = t > worst ? t : worst;
		}
		bench_median(each, (size_t)m);	/* sorts */
		double p999 = each[m - 1 - m / 1000];

		free(each);
		for (long i = 0; i < m; i++)
			if (got[i])
				iopt_iova_free(d, got[i], 2);
		if (json)
			printf("{\"suite\":\"iova\",\"case\":\"fragmented\",\"live\":%ld,"
			       "\"space_pages\":%llu,\"allocs\":%ld,\"mean_ns\":%.1f,"
			       "\"p999_ns\":%.0f,\"worst_ns\":%llu}\n", live,
			       (unsigned long long)end, m, total / m, p999,
			       (unsigned long long)worst);
		else
			printf("fragmented   live %-8ld mean %7.1f ns  p99.9 %7.0f ns  "
			       "worst %8llu ns\n", live, total / m, p999,
			       (unsigned long long)worst);
		free(got);
		free(pfn);
		free(sz);
		iopt_iova_destroy(d);
	}
}

/* ---- 32-bit exhaustion at 128 CPUs ---------------------------------------- */

static void case_exhaust32(void)
{
	static const enum iopt_iova_flush pol[3] = {
		IOPT_IOVA_FLUSH_EVERY_RETRY, IOPT_IOVA_FLUSH_LAST_RETRY,
		IOPT_IOVA_FLUSH_NEVER };
	static const char *names[3] = { "every_retry", "last_retry", "never" };
	const unsigned cpus = 128;
	double ns[3];

	for (int k = 0; k < 3; k++) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 36, .nr_cpus = cpus,
					     .flush = pol[k] };
		struct iopt_iova *d;
		uint64_t p, limit32 = (1ull << 20) - 1, full = (1ull << 36) - 1;

		iopt_iova_create(&cfg, &d);
		/* The 32-bit space is full. */
		while (iopt_iova_alloc(d, 512, limit32, &p) == 0)
			;
		while (iopt_iova_alloc(d, 1, limit32, &p) == 0)
			;
		/* Every CPU's caches hold ranges from earlier traffic. */
		for (unsigned c = 0; c < cpus; c++)
			for (int i = 0; i < 64; i++) {
				iopt_iova_alloc_dma(d, 1, full, IOPT_IOVA_FORCE_64, c, &p);
				iopt_iova_free_cached(d, p, 1, c);
			}
		const long n = k == 0 ? 2000 : 200000;
		uint64_t t0 = bench_now_ns();

		for (long i = 0; i < n; i++) {
			unsigned c = (unsigned)i % cpus;

			if (iopt_iova_alloc_dma(d, 1, full, IOPT_IOVA_DEV_PCI, c, &p) == 0)
				iopt_iova_free_cached(d, p, 1, c);
		}
		ns[k] = (double)(bench_now_ns() - t0) / (double)n;
		iopt_iova_destroy(d);
	}
	for (int k = 0; k < 3; k++) {
		if (json)
			printf("{\"suite\":\"iova\",\"case\":\"exhaust32\",\"cpus\":%u,"
			       "\"policy\":\"%s\",\"ns_per_alloc\":%.1f,"
			       "\"throughput_vs_last_retry\":%.5f}\n", cpus, names[k],
			       ns[k], ns[1] / ns[k]);
		else
			printf("exhaust32    %-12s %10.1f ns/alloc  %8.4f%% of last_retry\n",
			       names[k], ns[k], 100 * ns[1] / ns[k]);
	}
}

/* ---- invalidation policies ---------------------------------------------- */

static uint64_t flushes;

static void count_flush_all(void *ctx)
{
	(void)ctx;
	flushes++;
}

static void count_flush_range(uint64_t i, uint64_t s, void *ctx)
{
	(void)i;
	(void)s;
	(void)ctx;
}

static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void case_invalidation(void)
{
	static const struct {
		const char *name;
		enum iopt_inval pol;
		unsigned entries;
		uint64_t timeout;
	} p[] = {
		{ "strict", IOPT_INVAL_STRICT, 0, 0 },
		{ "lazy", IOPT_INVAL_LAZY, 0, 0 },
		{ "single_32768_1000ms", IOPT_INVAL_SINGLE, 0, 0 },
		{ "single_8192_100ms", IOPT_INVAL_SINGLE, 8192, 100000000 },
		{ "exhaust", IOPT_INVAL_EXHAUST, 0, 0 },
	};
	const unsigned cpus = 16;
	const long unmaps = 1000000;

	for (unsigned k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
		struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 20, .nr_cpus = cpus,
					     .clock = fake_clock };
		struct iopt_fq_cfg fcfg = { .policy = p[k].pol, .entries = p[k].entries,
					    .timeout_ns = p[k].timeout,
					    .flush_all = count_flush_all,
					    .flush_range = count_flush_range,
					    .clock = fake_clock };
		struct iopt_iova *d;
		struct iopt_fq *q;
		struct iopt_fq_stats st;
		uint64_t live[64], rng = 9;

		fake_now = 0;
		flushes = 0;
		iopt_iova_create(&cfg, &d);
		iopt_fq_create(d, &fcfg, &q);
		for (int i = 0; i < 64; i++)
			iopt_fq_alloc(q, 1 + rnd(&rng) % 16, (1ull << 20) - 1, 0, 0,
				      &live[i]);
		uint64_t t0 = bench_now_ns();

		/* 2 us of device time per map/unmap; 16 CPUs take turns. */
		for (long i = 0; i < unmaps; i++) {
			unsigned c = (unsigned)i % cpus, slot = (unsigned)(i % 64);
			uint64_t size = 1 + (uint64_t)(slot % 16);

			fake_now += 2000;
			iopt_fq_free(q, live[slot], size, c);
			iopt_fq_alloc(q, size, (1ull << 20) - 1, 0, c, &live[slot]);
			if (i % 1000 == 0)
				iopt_fq_poll(q);
		}
		double ns = (double)(bench_now_ns() - t0) / (double)unmaps;

		iopt_fq_get_stats(q, &st);
		if (json)
			printf("{\"suite\":\"iova\",\"case\":\"invalidation\","
			       "\"policy\":\"%s\",\"cpus\":%u,\"unmaps\":%ld,"
			       "\"flush_alls_per_million\":%llu,"
			       "\"flush_ranges_per_million\":%llu,\"ns_per_op\":%.1f}\n",
			       p[k].name, cpus, unmaps, (unsigned long long)st.flush_alls,
			       (unsigned long long)st.flush_ranges, ns);
		else
			printf("invalidation %-20s %8llu flush-alls %8llu flush-ranges "
			       "per 1M unmaps  %6.1f ns/op\n", p[k].name,
			       (unsigned long long)st.flush_alls,
			       (unsigned long long)st.flush_ranges, ns);
		iopt_fq_destroy(q);
		iopt_iova_destroy(d);
	}
}

int bench_iova_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, 0, 'j' },
		{ "case", required_argument, 0, 'c' },
		{ "runs", required_argument, 0, 'r' },
		{ "live", required_argument, 0, 'l' },
		{ "threads", required_argument, 0, 't' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *only = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'c':
			only = optarg;
			break;
		case 'l':
			only_live = atol(optarg);
			break;
		case 't': {
			char *s = strdup(optarg), *save, *tok;

			pair_nthreads = 0;
			for (tok = strtok_r(s, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				long v = atol(tok);

				if (v < 1 || v > PAIR_MAX_THREADS || pair_nthreads == 8) {
					free(s);
					goto bad;
				}
				pair_threads[pair_nthreads++] = (unsigned)v;
			}
			free(s);
			if (!pair_nthreads)
				goto bad;
			break;
		}
		case 'r':
			runs = (unsigned)atoi(optarg);
			if (runs < 1 || runs > 64)
				goto bad;
			break;
		case 'h':
		default:
			goto bad;
		}
	}
#define RUN(n, f)                                                       \
	do {                                                            \
		if (!only || !strcmp(only, n) ||                        \
		    (!strcmp(n, "pairs") && (!strcmp(only, "cached_pair") || \
					     !strcmp(only, "tree_pair")))) \
			f();                                            \
	} while (0)
	RUN("pairs", case_pairs);
	RUN("fragmented", case_fragmented);
	RUN("exhaust32", case_exhaust32);
	RUN("invalidation", case_invalidation);
	return 0;
bad:
	fprintf(stderr, "usage: iopt-bench iova [--json] [--runs N] [--live 10000|1000000] "
			"[--threads 1,2,...] [--case "
			"cached_pair|tree_pair|fragmented|exhaust32|invalidation]\n");
	return 2;
}
