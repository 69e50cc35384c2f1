/* SPDX-License-Identifier: MIT */
/*
 * Instructions per operation of every `iopt-bench iova` case, under
 * callgrind: the same workloads as bench/bench_iova.c (the same domains,
 * seeds, sizes, limits and call sequences), with each case's measured
 * loop in its own out-of-line function named icount_loop_*, so that
 *
 *   valgrind --tool=callgrind --collect-atstart=no \
 *            --toggle-collect='icount_loop_*' iova_icount CASE [ARG]
 *
 * counts exactly the measured calls (setup and warm-up left out). It
 * uses only the public API, so one source builds against any version of
 * the library (scripts/icount/iova builds it against two and compares).
 * That is why it carries its own copy of the bench's workloads (the
 * fragmented domain's build, the pair and exhaust32 loops): the bench
 * reads the allocator's internals and builds only against its own tree.
 * It prints the number of operations the collected loops did; the
 * instructions per operation are callgrind's total over that.
 *
 * Cases (ARG):
 *   cached_pair T   T threads, alloc_cached+free_cached of one page
 *   tree_pair T     T threads, alloc+free of one page, range allocator
 *   fragmented L    2-page allocations after fragmentation at L live
 *   exhaust32 P     P = every_retry | last_retry | never
 *   invalidation P  P = strict | lazy | single_32768_1000ms |
 *                   single_8192_100ms | exhaust
 * Per operation: a pair (pairs), an allocation (fragmented, exhaust32),
 * a free+alloc (invalidation, with its share of the poll every 1000).
 * exhaust32 also prints its loop's wall time per allocation (ns_per_op),
 * timed as the bench times it, for a timed comparison on one harness.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iopgtable/iova.h>

#define NOINLINE __attribute__((noinline, noclone))

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- pairs (bench: pair_worker) ---------------------------------------- */

struct pair_ctx {
	struct iopt_iova *d;
	unsigned cpu;
	bool cached;
	long n;
	pthread_barrier_t *bar;
};

NOINLINE static void icount_loop_cached(struct iopt_iova *d, unsigned cpu,
					long n)
{
	uint64_t p, limit = (1ull << 36) - 1;

	for (long i = 0; i < n; i++) {
		iopt_iova_alloc_cached(d, 1, limit, cpu, true, &p);
		iopt_iova_free_cached(d, p, 1, cpu);
	}
}

NOINLINE static void icount_loop_tree(struct iopt_iova *d, long n)
{
	uint64_t p, limit = (1ull << 36) - 1;

	for (long i = 0; i < n; i++) {
		iopt_iova_alloc(d, 1, limit, &p);
		iopt_iova_free(d, p, 1);
	}
}

static void *pair_worker(void *arg)
{
	struct pair_ctx *c = arg;
	uint64_t p, limit = (1ull << 36) - 1;

	for (int i = 0; i < 1000; i++) {
		if (c->cached) {
			iopt_iova_alloc_cached(c->d, 1, limit, c->cpu, true, &p);
			iopt_iova_free_cached(c->d, p, 1, c->cpu);
		}
	}
	pthread_barrier_wait(c->bar);
	if (c->cached)
		icount_loop_cached(c->d, c->cpu, c->n);
	else
		icount_loop_tree(c->d, c->n);
	return NULL;
}

static long case_pairs(bool cached, unsigned threads, long n)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 36, .nr_cpus = threads };
	struct iopt_iova *d;
	struct pair_ctx c[8];
	pthread_t th[8];
	pthread_barrier_t bar;

	if (threads < 1 || threads > 8 || iopt_iova_create(&cfg, &d))
		exit(2);
	pthread_barrier_init(&bar, NULL, threads);
	for (unsigned i = 0; i < threads; i++) {
		c[i] = (struct pair_ctx){ d, i, cached, n, &bar };
		pthread_create(&th[i], NULL, pair_worker, &c[i]);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	iopt_iova_destroy(d);
	return n * threads;
}

/* ---- fragmented (bench: frag_build, frag_pass) -------------------------- */

static struct iopt_iova *frag_build(long live, uint64_t *end_out)
{
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
	free(pfn);
	free(sz);
	*end_out = end;
	return d;
}

NOINLINE static long icount_loop_frag(struct iopt_iova *d, uint64_t end,
				      long m, uint64_t *got)
{
	long failed = 0;

	for (long i = 0; i < m; i++)
		failed += iopt_iova_alloc(d, 2, end - 1, &got[i]) != 0;
	return failed;
}

static long case_fragmented(long live)
{
	const long m = 20000;
	uint64_t end, *got = calloc((size_t)m, sizeof(uint64_t));
	struct iopt_iova *d = frag_build(live, &end);
	long failed = icount_loop_frag(d, end, m, got);

	printf("failed %ld\n", failed);
	iopt_iova_destroy(d);
	free(got);
	return m;
}

/* ---- exhaust32 (bench: case_exhaust32) ---------------------------------- */

NOINLINE static void icount_loop_exhaust(struct iopt_iova *d, long n,
					 unsigned cpus)
{
	uint64_t p, full = (1ull << 36) - 1;

	for (long i = 0; i < n; i++) {
		unsigned c = (unsigned)i % cpus;

		if (iopt_iova_alloc_dma(d, 1, full, IOPT_IOVA_DEV_PCI, c, &p) == 0)
			iopt_iova_free_cached(d, p, 1, c);
	}
}

static long case_exhaust32(const char *name)
{
	enum iopt_iova_flush pol;
	const unsigned cpus = 128;

	if (!strcmp(name, "every_retry"))
		pol = IOPT_IOVA_FLUSH_EVERY_RETRY;
	else if (!strcmp(name, "last_retry"))
		pol = IOPT_IOVA_FLUSH_LAST_RETRY;
	else if (!strcmp(name, "never"))
		pol = IOPT_IOVA_FLUSH_NEVER;
	else
		exit(2);
	struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 36, .nr_cpus = cpus,
				     .flush = pol };
	struct iopt_iova *d;
	uint64_t p, limit32 = (1ull << 20) - 1, full = (1ull << 36) - 1;

	iopt_iova_create(&cfg, &d);
	while (iopt_iova_alloc(d, 512, limit32, &p) == 0)
		;
	while (iopt_iova_alloc(d, 1, limit32, &p) == 0)
		;
	for (unsigned c = 0; c < cpus; c++)
		for (int i = 0; i < 64; i++) {
			iopt_iova_alloc_dma(d, 1, full, IOPT_IOVA_FORCE_64, c, &p);
			iopt_iova_free_cached(d, p, 1, c);
		}
	const long n = pol == IOPT_IOVA_FLUSH_EVERY_RETRY ? 2000 : 200000;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	icount_loop_exhaust(d, n, cpus);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ns_per_op %.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 +
				    (t1.tv_nsec - t0.tv_nsec)) / n);
	iopt_iova_destroy(d);
	return n;
}

/* ---- invalidation (bench: case_invalidation) ---------------------------- */

static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void count_flush_all(void *ctx)
{
	(void)ctx;
}

static void count_flush_range(uint64_t i, uint64_t s, void *ctx)
{
	(void)i;
	(void)s;
	(void)ctx;
}

NOINLINE static void icount_loop_inval(struct iopt_fq *q, uint64_t *live,
				       long unmaps, unsigned cpus)
{
	for (long i = 0; i < unmaps; i++) {
		unsigned c = (unsigned)i % cpus, slot = (unsigned)(i % 64);
		uint64_t size = 1 + (uint64_t)(slot % 16);

		fake_now += 2000;
		iopt_fq_free(q, live[slot], size, c);
		iopt_fq_alloc(q, size, (1ull << 20) - 1, 0, c, &live[slot]);
		if (i % 1000 == 0)
			iopt_fq_poll(q);
	}
}

static long case_invalidation(const char *name)
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
	unsigned k;

	for (k = 0; k < sizeof(p) / sizeof(p[0]); k++)
		if (!strcmp(name, p[k].name))
			break;
	if (k == sizeof(p) / sizeof(p[0]))
		exit(2);
	struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 20, .nr_cpus = cpus,
				     .clock = fake_clock };
	struct iopt_fq_cfg fcfg = { .policy = p[k].pol, .entries = p[k].entries,
				    .timeout_ns = p[k].timeout,
				    .flush_all = count_flush_all,
				    .flush_range = count_flush_range,
				    .clock = fake_clock };
	struct iopt_iova *d;
	struct iopt_fq *q;
	uint64_t live[64], rng = 9;

	iopt_iova_create(&cfg, &d);
	iopt_fq_create(d, &fcfg, &q);
	for (int i = 0; i < 64; i++)
		iopt_fq_alloc(q, 1 + rnd(&rng) % 16, (1ull << 20) - 1, 0, 0, &live[i]);
	icount_loop_inval(q, live, unmaps, cpus);
	iopt_fq_destroy(q);
	iopt_iova_destroy(d);
	return unmaps;
}

int main(int argc, char **argv)
{
	long ops;

	if (argc != 3)
		goto usage;
	if (!strcmp(argv[1], "cached_pair"))
		ops = case_pairs(true, (unsigned)atoi(argv[2]), 2000000);
	else if (!strcmp(argv[1], "tree_pair"))
		ops = case_pairs(false, (unsigned)atoi(argv[2]), 500000);
	else if (!strcmp(argv[1], "fragmented"))
		ops = case_fragmented(atol(argv[2]));
	else if (!strcmp(argv[1], "exhaust32"))
		ops = case_exhaust32(argv[2]);
	else if (!strcmp(argv[1], "invalidation"))
		ops = case_invalidation(argv[2]);
	else
		goto usage;
	printf("ops %ld\n", ops);
	return 0;
usage:
	fprintf(stderr, "usage: iova_icount cached_pair|tree_pair T | fragmented L | "
			"exhaust32 POLICY | invalidation POLICY\n");
	return 2;
}
