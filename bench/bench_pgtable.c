/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench pgtable: multithreaded map/unmap throughput of one page table.
 *
 * Each thread maps, then unmaps, its own pages, one call per --pgcount
 * pages. Threads' ranges interleave in chunks of max(2 MiB, one call) so
 * that they share every table above the leaves, as concurrent DMA mappings
 * do. --pattern random gives every call its own chunk, scattered over
 * 1 TiB (or the whole input range if smaller). One warm-up run builds the
 * tables; the measured runs reuse the same addresses, so the figures are
 * the steady state (no table allocation). TLB callbacks are no-ops, so
 * the figures are the page table's own cost.
 *
 * Figures: map_ns and unmap_ns are the median over runs of the mean over
 * threads of (thread's phase time / its pages); ops_per_sec is the median
 * of (map + unmap calls of all threads) / (map wall time + unmap wall time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/pgtable.h>

#include "bench.h"

#define MAX_THREADS 256
#define MAX_LIST 16

struct pg_opts {
	enum iopt_pgtable_fmt fmt;
	uint32_t granule;
	unsigned threads[MAX_LIST];
	unsigned nthreads;
	bool modes[2];		/* [0] lockless, [1] locked */
	bool random;
	bool no_gather;		/* unmap with a NULL gather */
	uint64_t pages;
	uint64_t pgcount;
	unsigned runs;
	bool json;
};

struct pg_variant;

struct pg_thread {
	struct plat_thread th;
	unsigned id;
	struct pg_variant *v;
	uint64_t *calls;	/* iova of each call */
	uint64_t ncalls;
	uint64_t map_t0, map_t1, unmap_t0, unmap_t1;
	int err;
};

/* One configuration measured side by side with the others. */
struct pg_variant {
	struct iopt_pgtable *pt;
	const struct pg_opts *o;
	unsigned nthreads;
	bool locked;
	struct bench_barrier bar;
	struct pg_thread *th;
	double *map_ns, *unmap_ns, *ops;
	unsigned done;		/* measured passes so far */
};

static void noop_flush_all(void *c) { (void)c; }
static void noop_flush_walk(uint64_t i, uint64_t s, uint64_t g, void *c)
{
	(void)i; (void)s; (void)g; (void)c;
}
static void noop_add_page(struct iopt_pgtable_gather *gt, uint64_t i, uint64_t g,
			  void *c)
{
	(void)gt; (void)i; (void)g; (void)c;
}

static const struct iopt_pgtable_tlb_ops noop_tlb = {
	.flush_all = noop_flush_all,
	.flush_walk = noop_flush_walk,
	.add_page = noop_add_page,
};

/* One pass: every thread maps all its pages, then unmaps them. */
static void *pg_worker(void *arg)
{
	struct pg_thread *t = arg;
	struct pg_variant *v = t->v;
	uint64_t g = v->o->granule, n = v->o->pgcount;
	struct iopt_pgtable_gather gather;

	bench_pin(t->id);
	bench_barrier_wait(&v->bar);
	t->map_t0 = bench_now_ns();
	for (uint64_t c = 0; c < t->ncalls; c++)
		if (iopt_pgtable_map_pages(v->pt, t->calls[c], t->calls[c], g, n,
					   IOPT_READ | IOPT_WRITE, NULL))
			t->err = 1;
	t->map_t1 = bench_now_ns();
	bench_barrier_wait(&v->bar);
	t->unmap_t0 = bench_now_ns();
	iopt_pgtable_gather_init(&gather);
	struct iopt_pgtable_gather *gp = v->o->no_gather ? NULL : &gather;

	for (uint64_t c = 0; c < t->ncalls; c++)
		if (iopt_pgtable_unmap_pages(v->pt, t->calls[c], g, n, gp) !=
		    (int64_t)(g * n))
			t->err = 1;
	t->unmap_t1 = bench_now_ns();
	return NULL;
}

static int pg_pass(struct pg_variant *v, bool record)
{
	struct pg_thread *all = v->th;
	uint64_t m0 = UINT64_MAX, m1 = 0, u0 = UINT64_MAX, u1 = 0;
	double ms = 0, us = 0;

	for (unsigned i = 0; i < v->nthreads; i++)
		if (plat_thread_start(&all[i].th, pg_worker, &all[i]))
			return -1;
	for (unsigned i = 0; i < v->nthreads; i++)
		plat_thread_join(&all[i].th);
	for (unsigned i = 0; i < v->nthreads; i++) {
		double pages = (double)(all[i].ncalls * v->o->pgcount);

		if (all[i].err)
			return -1;
		m0 = all[i].map_t0 < m0 ? all[i].map_t0 : m0;
		m1 = all[i].map_t1 > m1 ? all[i].map_t1 : m1;
		u0 = all[i].unmap_t0 < u0 ? all[i].unmap_t0 : u0;
		u1 = all[i].unmap_t1 > u1 ? all[i].unmap_t1 : u1;
		ms += (double)(all[i].map_t1 - all[i].map_t0) / pages;
		us += (double)(all[i].unmap_t1 - all[i].unmap_t0) / pages;
	}
	if (record) {
		v->map_ns[v->done] = ms / v->nthreads;
		v->unmap_ns[v->done] = us / v->nthreads;
		v->ops[v->done] = 2.0 * (double)(all[0].ncalls * v->nthreads) /
				  ((double)(m1 - m0 + u1 - u0) * 1e-9);
		v->done++;
	}
	return 0;
}

/* Addresses of thread t's calls. */
static void pg_layout(const struct pg_opts *o, unsigned ias, unsigned T,
		      unsigned t, uint64_t *calls, uint64_t ncalls)
{
	uint64_t run = o->granule * o->pgcount;
	uint64_t chunk = run > (2u << 20) ? run : (2u << 20);
	uint64_t space = ias >= 40 ? 1ull << 40 : 1ull << ias;
	uint64_t nchunks = space / chunk;

	if (!o->random) {
		uint64_t per_chunk = chunk / run;

		for (uint64_t c = 0; c < ncalls; c++) {
			uint64_t k = c / per_chunk;

			calls[c] = (k * T + t) * chunk + (c % per_chunk) * run;
		}
		return;
	}
	/* Random: a bijection of chunk indices (odd multiplier modulo a power
	 * of two), thread t taking every T-th; a random slot in each chunk. */
	uint64_t rng = 0x2545f4914f6cdd1dull ^ (t * 0x9e3779b97f4a7c15ull);

	for (uint64_t c = 0; c < ncalls; c++) {
		uint64_t j = c * T + t;
		uint64_t idx = (j * 0x9e3779b97f4a7c15ull + 12345) & (nchunks - 1);

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		calls[c] = idx * chunk + (rng % (chunk / run)) * run;
	}
}

static unsigned fmt_ias(enum iopt_pgtable_fmt f)
{
	switch (f) {
	case IOPT_ARM_32_LPAE_S1:
	case IOPT_ARM_V7S:
		return 32;
	case IOPT_ARM_32_LPAE_S2:
		return 40;
	default:
		return 48;
	}
}

static int pg_variant_init(struct pg_variant *v, const struct pg_opts *o,
			   unsigned T, bool locked)
{
	unsigned ias = fmt_ias(o->fmt);
	struct iopt_pgtable_cfg cfg = {
		.fmt = o->fmt, .granule = o->granule, .ias = ias,
		.oas = o->fmt == IOPT_ARM_V7S ? 32 : ias < 40 ? 40 : ias,
		.coherent_walk = true, .serialised = locked, .tlb = &noop_tlb,
	};
	uint64_t ncalls = o->pages / o->pgcount;
	uint64_t run = o->granule * o->pgcount;
	uint64_t chunk = run > (2u << 20) ? run : (2u << 20);
	uint64_t space = ias >= 40 ? 1ull << 40 : 1ull << ias;
	int ret;

	memset(v, 0, sizeof(*v));
	if (o->fmt == IOPT_ARM_V7S)
		cfg.granule = 0;
	if (!ncalls || (o->random ? ncalls * T > space / chunk :
				    (ncalls * run / chunk + 1) * T * chunk > space)) {
		fprintf(stderr, "pgtable: --pages too large for the input range\n");
		return -EINVAL;
	}
	ret = iopt_pgtable_alloc(&cfg, &v->pt);
	if (ret) {
		fprintf(stderr, "pgtable: iopt_pgtable_alloc: %s\n", strerror(-ret));
		return ret;
	}
	v->o = o;
	v->nthreads = T;
	v->locked = locked;
	v->th = bench_calloc(T, sizeof(*v->th));
	v->map_ns = bench_calloc(o->runs, sizeof(double));
	v->unmap_ns = bench_calloc(o->runs, sizeof(double));
	v->ops = bench_calloc(o->runs, sizeof(double));
	bench_barrier_init(&v->bar, T);
	for (unsigned t = 0; t < T; t++) {
		v->th[t].id = t;
		v->th[t].v = v;
		v->th[t].ncalls = ncalls;
		v->th[t].calls = bench_calloc(ncalls, sizeof(uint64_t));
		pg_layout(o, ias, T, t, v->th[t].calls, ncalls);
	}
	return 0;
}

static void pg_variant_fini(struct pg_variant *v)
{
	for (unsigned t = 0; t < v->nthreads; t++)
		free(v->th[t].calls);
	bench_barrier_destroy(&v->bar);
	iopt_pgtable_free(v->pt);
	free(v->th);
	free(v->map_ns);
	free(v->unmap_ns);
	free(v->ops);
}

static const char *const fmt_names[IOPT_PGTABLE_FMT_COUNT + 1] = {
	[IOPT_ARM_64_LPAE_S1] = "arm64-lpae-s1", [IOPT_ARM_64_LPAE_S2] = "arm64-lpae-s2",
	[IOPT_ARM_32_LPAE_S1] = "arm32-lpae-s1", [IOPT_ARM_32_LPAE_S2] = "arm32-lpae-s2",
	[IOPT_ARM_V7S] = "v7s",
};

static bool granule_ok(uint64_t v)
{
	return v == 4096 || v == 16384 || v == 65536;
}

static const char *const mode_names[] = { "lockless", "locked", NULL };
static const char *const pattern_names[] = { "seq", "random", NULL };
static const char *const gather_names[] = { "caller", "null", NULL };

int bench_pgtable_main(int argc, char **argv)
{
	struct pg_opts o = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			     .threads = { 1 }, .nthreads = 1,
			     .modes = { true, false }, .pages = 65536,
			     .pgcount = 1, .runs = 5 };
	unsigned fmt = o.fmt, modes = 1, pattern = 0, gather = 0;
	uint64_t granule = o.granule;
	const struct bench_opt opts[] = {
		{ "format", BENCH_CHOICE, &fmt, "F", "arm64-lpae-s1 (default), "
		  "arm64-lpae-s2,\narm32-lpae-s1, arm32-lpae-s2, v7s",
		  .choices = fmt_names },
		{ "granule", BENCH_SIZE, &granule, "G", "4k (default), 16k, 64k "
		  "(64-bit LPAE only)", .min = 4096, .max = 65536, .check = granule_ok,
		  .rule = "a granule (4k, 16k or 64k)" },
		{ "threads", BENCH_LIST, o.threads, "N,N,...", "thread counts, "
		  "each a variant (1)", .min = 1, .max = MAX_THREADS, .count = &o.nthreads,
		  .cap = MAX_LIST },
		{ "mode", BENCH_CHOICES, &modes, "M,M", "lockless, locked, or "
		  "lockless,locked (lockless)", .choices = mode_names },
		{ "pattern", BENCH_CHOICE, &pattern, .choices = pattern_names,
		  .help = "seq (default), or random: calls scattered over\n"
			  "1 TiB" },
		{ "gather", BENCH_CHOICE, &gather, .choices = gather_names,
		  .help = "unmap's gather: caller (default: one per thread,\n"
			  "as a driver's unmap path passes) or null (JSON adds\n"
			  "\"gather\":\"null\")" },
		{ "pages", BENCH_SIZE, &o.pages, "N", "pages per thread (65536)",
		  .min = 1, .max = 1ull << 32 },
		{ "pgcount", BENCH_SIZE, &o.pgcount, "N", "pages per map/unmap call, "
		  "a power of two (1)", .min = 1, .max = 1u << 24, .check = bench_is_pow2,
		  .rule = "a power of two" },
		{ "runs", BENCH_UINT, &o.runs, "N", "measured runs after one "
		  "warm-up (5)", .min = 1, .max = 1000 },
		{ "json", BENCH_FLAG, &o.json, .help = "one JSON object per line" },
		{ 0 },
	};
	const struct bench_cli cli = {
		.suite = "pgtable",
		.about = "Each thread maps, then unmaps, its own pages, one call per "
			 "--pgcount pages:\nns per page and calls per second, each "
			 "variant (mode x threads) the median\nof --runs; one line "
			 "per variant (no --case).",
		.opts = opts,
	};
	struct pg_variant var[2 * MAX_LIST];
	unsigned nvar = 0;
	int status;

	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	o.fmt = (enum iopt_pgtable_fmt)fmt;
	o.granule = (uint32_t)granule;
	o.modes[0] = modes & 1;
	o.modes[1] = modes & 2;
	o.random = pattern == 1;
	o.no_gather = gather == 1;
	if (o.fmt == IOPT_ARM_V7S || o.fmt == IOPT_ARM_32_LPAE_S1 ||
	    o.fmt == IOPT_ARM_32_LPAE_S2) {
		if (o.granule != 4096) {
			fprintf(stderr, "pgtable: %s has only the 4k granule\n",
				fmt_names[o.fmt]);
			return 2;
		}
	}
	if (o.pages < o.pgcount)
		o.pages = o.pgcount;

	if (!o.json)
		printf("%-14s %-8s %-7s %-8s %8s %8s %10s %10s %14s %9s\n", "format",
		       "granule", "pattern", "mode", "threads", "pgcount",
		       "map ns/pg", "unmap ns/pg", "ops/s", "speed-up");
	for (unsigned m = 0; m < 2; m++) {
		if (!o.modes[m])
			continue;
		for (unsigned i = 0; i < o.nthreads; i++) {
			if (pg_variant_init(&var[nvar], &o, o.threads[i], m == 1))
				return 1;
			/* Warm-up: builds the tables the measured passes reuse. */
			if (pg_pass(&var[nvar], false))
				goto failed;
			nvar++;
		}
	}
	/* Variants interleave run by run, so drift on a shared machine hits
	 * them all alike. */
	for (unsigned r = 0; r < o.runs; r++)
		for (unsigned k = 0; k < nvar; k++)
			if (pg_pass(&var[k], true))
				goto failed;

	double base = 0;

	for (unsigned k = 0; k < nvar; k++)
		if (var[k].nthreads == 1 && !var[k].locked && base == 0)
			base = bench_median(var[k].ops, o.runs);
	for (unsigned k = 0; k < nvar; k++) {
		struct pg_variant *v = &var[k];
		double map_ns = bench_median(v->map_ns, o.runs);
		double unmap_ns = bench_median(v->unmap_ns, o.runs);
		double ops = bench_median(v->ops, o.runs);

		if (o.json) {
			/* No one-thread lockless variant: no speed-up (null). */
			char su[24] = "null";

			if (base > 0)
				snprintf(su, sizeof(su), "%.3f", ops / base);
			printf("{\"suite\":\"pgtable\",\"format\":\"%s\","
			       "\"granule\":%u,\"mode\":\"%s\",\"threads\":%u,"
			       "\"pattern\":\"%s\",\"pages\":%llu,"
			       "\"pgcount\":%llu,\"runs\":%u,\"map_ns\":%.2f,"
			       "\"unmap_ns\":%.2f,\"ops_per_sec\":%.0f,"
			       "\"speedup\":%s%s}\n",
			       fmt_names[o.fmt], o.granule,
			       v->locked ? "locked" : "lockless", v->nthreads,
			       o.random ? "random" : "seq",
			       (unsigned long long)o.pages,
			       (unsigned long long)o.pgcount, o.runs, map_ns,
			       unmap_ns, ops, su,
			       o.no_gather ? ",\"gather\":\"null\"" : "");
		} else {
			char su[16] = "-";

			if (base > 0)
				snprintf(su, sizeof(su), "%.2fx", ops / base);
			printf("%-14s %-8u %-7s %-8s %8u %8llu %10.2f %10.2f %14.0f %9s\n",
			       fmt_names[o.fmt], o.granule,
			       o.random ? "random" : "seq",
			       v->locked ? "locked" : "lockless", v->nthreads,
			       (unsigned long long)o.pgcount, map_ns, unmap_ns, ops,
			       su);
		}
	}
	for (unsigned k = 0; k < nvar; k++)
		pg_variant_fini(&var[k]);
	fflush(stdout);
	return 0;
failed:
	fprintf(stderr, "pgtable: a map or unmap failed\n");
	return 1;
}
