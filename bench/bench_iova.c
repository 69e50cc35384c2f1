/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench iova: the IOVA allocator.
 *
 * cached_pair   alloc+free of one page through the per-CPU caches, 1 and
 *               2 threads (--threads: other counts), each its own CPU: ns
 *               per pair, pairs/s, and scaling: pairs/s over the first
 *               count's per-thread pairs/s.
 * tree_pair     the same through the range allocator alone. Both also in
 *               the threads' CPU time (cpu_ns_per_pair; cached_vs_tree's
 *               cpu_speedup): the shared machine's other processes left
 *               out.
 * fragmented    ns per 2-page allocation (mean, median, p99.9, worst; the
 *               worst of those during which the thread was not switched
 *               out; the worst of each call's least time over three
 *               passes, against a control that times a spin instead;
 *               the work the slowest calls did; the means over a
 *               cached pair timed around them) after random fragmentation, at
 *               live = 10^4 and 10^6 ranges (--live N: only that one, e.g.
 *               for callgrind); timed one by one, and again timed in
 *               blocks as the pairs are (see case_fragmented()).
 * exhaust32     brief 5.2: a PCI device, 32-bit space full, 128 CPUs (one
 *               thread acting as each in turn): ns per allocation for each
 *               cache-flush policy.
 * invalidation  flush-alls per million unmaps for each invalidation
 *               policy, on a DMA map/unmap stream over 16 CPUs.
 * record        the record of live allocations (src/iova/live.c) against
 *               liburcu's lock-free hash table (rculfhash) doing the same
 *               work: ns per add + check-and-delete pair with 1 and 10^4
 *               (--live N: N) records live (rculfhash only where the build
 *               found liburcu-cds).
 * Every case prints one JSON object per line with --json.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iopgtable/iova.h>

#include "../src/iova/iova_internal.h"
#include "bench.h"

#ifdef IOPT_BENCH_LFHT
#include <urcu-bp.h>
#include <urcu/rculfhash.h>
#endif

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
	uint64_t cpu_time;	/* the thread's CPU time over the timed loop */
};

/* The calling thread's CPU time: it leaves out the time the guest's
 * scheduler gave the CPU to another process (the machine is shared). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* n pairs on d as CPU cpu: through its cache (cached) or the range
 * allocator alone. */
static void pair_loop(struct iopt_iova *d, unsigned cpu, bool cached, long n)
{
	uint64_t p, limit = (1ull << 36) - 1;

	if (cached) {
		for (long i = 0; i < n; i++) {
			iopt_iova_alloc_cached(d, 1, limit, cpu, true, &p);
			iopt_iova_free_cached(d, p, 1, cpu);
		}
	} else {
		for (long i = 0; i < n; i++) {
			iopt_iova_alloc(d, 1, limit, &p);
			iopt_iova_free(d, p, 1);
		}
	}
}

static void *pair_worker(void *arg)
{
	struct pair_ctx *c = arg;

	bench_pin(c->cpu);
	if (c->cached)	/* warm the cache */
		pair_loop(c->d, c->cpu, true, 1000);
	bench_barrier_wait(c->bar);
	uint64_t cpu0 = thread_cpu_ns();

	c->t0 = bench_now_ns();
	pair_loop(c->d, c->cpu, c->cached, c->n);
	c->t1 = bench_now_ns();
	c->cpu_time = thread_cpu_ns() - cpu0;
	return NULL;
}

/* ns per pair (mean over threads), the same in CPU time, and pairs/s
 * (all threads). */
static void pair_run(bool cached, unsigned threads, long n, double *ns,
		     double *cpu_ns, double *pps)
{
	struct iopt_iova_cfg cfg = { .end_pfn = 1ull << 36, .nr_cpus = threads };
	struct iopt_iova *d;
	struct pair_ctx *c = bench_calloc(threads, sizeof(*c));
	struct plat_thread *th = bench_calloc(threads, sizeof(*th));
	struct bench_barrier bar;

	bench_must(iopt_iova_create(&cfg, &d), "iopt_iova_create");
	bench_barrier_init(&bar, threads);
	for (unsigned i = 0; i < threads; i++) {
		c[i] = (struct pair_ctx){ d, i, cached, n, &bar, 0, 0, 0 };
		if (plat_thread_start(&th[i], pair_worker, &c[i])) {
			fprintf(stderr, "iova: cannot start thread %u\n", i);
			exit(1);
		}
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	double sum = 0, csum = 0;

	for (unsigned i = 0; i < threads; i++) {
		plat_thread_join(&th[i]);
		sum += (double)(c[i].t1 - c[i].t0) / (double)n;
		csum += (double)c[i].cpu_time / (double)n;
		lo = c[i].t0 < lo ? c[i].t0 : lo;
		hi = c[i].t1 > hi ? c[i].t1 : hi;
	}
	*ns = sum / threads;
	*cpu_ns = csum / threads;
	*pps = (double)n * threads / ((double)(hi - lo) * 1e-9);
	bench_barrier_destroy(&bar);
	iopt_iova_destroy(d);
	free(c);
	free(th);
}

/* The median over runs of tree / cached at thread count index k. */
static double pair_ratio(double v[2][8][64], unsigned k, unsigned n)
{
	double r[64];

	for (unsigned i = 0; i < n; i++)
		r[i] = v[0][k][i] / v[1][k][i];
	return bench_median(r, n);
}

static void case_pairs(void)
{
	const char *names[2] = { "tree_pair", "cached_pair" };
	static double ns[2][8][64], cns[2][8][64], pps[2][8][64];

	/* Interleave variants run by run (shared, noisy machine), the tree
	 * and the cached pair of one thread count one right after the other:
	 * their ratio is taken run by run. */
	for (unsigned r = 0; r < runs; r++)
		for (unsigned k = 0; k < pair_nthreads; k++)
			for (int cached = 0; cached < 2; cached++)
				pair_run(cached, pair_threads[k],
					 bench_iters(cached ? 2000000 : 500000, 100),
					 &ns[cached][k][r], &cns[cached][k][r],
					 &pps[cached][k][r]);
	/* tree / cached at the first and (when there is one) the second
	 * count: the median of each run's own ratio, its two sides timed
	 * within the same fraction of a second (before the medians below
	 * sort the runs). */
	unsigned k2 = pair_nthreads > 1 ? 1 : 0;
	double r1 = pair_ratio(ns, 0, runs), r2 = pair_ratio(ns, k2, runs);
	double cr1 = pair_ratio(cns, 0, runs), cr2 = pair_ratio(cns, k2, runs);
	double base[2] = { 0, 0 };

	for (int cached = 0; cached < 2; cached++)
		for (unsigned k = 0; k < pair_nthreads; k++) {
			unsigned t = pair_threads[k];
			double m = bench_median(ns[cached][k], runs);
			double cm = bench_median(cns[cached][k], runs);
			double p = bench_median(pps[cached][k], runs);

			if (k == 0)
				base[cached] = p / pair_threads[0];
			if (json)
				printf("{\"suite\":\"iova\",\"case\":\"%s\",\"threads\":%u,"
				       "\"ns_per_pair\":%.2f,\"cpu_ns_per_pair\":%.2f,"
				       "\"pairs_per_sec\":%.0f,"
				       "\"scaling\":%.3f,\"runs\":%u}\n",
				       names[cached], t, m, cm, p, p / base[cached], runs);
			else
				printf("%-12s threads %u  %8.2f ns/pair (%.2f in CPU time)  "
				       "%12.0f pairs/s  %.2fx\n",
				       names[cached], t, m, cm, p, p / base[cached]);
		}
	if (json)
		printf("{\"suite\":\"iova\",\"case\":\"cached_vs_tree\","
		       "\"threads\":%u,\"speedup\":%.2f,\"threads_2\":%u,"
		       "\"speedup_2\":%.2f,\"cpu_speedup\":%.2f,"
		       "\"cpu_speedup_2\":%.2f}\n", pair_threads[0], r1,
		       pair_threads[k2], r2, cr1, cr2);
	else
		printf("cached pair is %.1fx faster than the tree pair at %u threads "
		       "(%.1fx at %u); in CPU time %.1fx (%.1fx)\n", r1,
		       pair_threads[0], r2, pair_threads[k2], cr1, cr2);
}

/* ---- fragmentation ------------------------------------------------------ */

/*
 * A one-stripe domain about four times as large as 'live' ranges of 1-8
 * pages: 2 x live allocated, then a random half freed (holes everywhere).
 * The same seed gives the same domain every time.
 */
static struct iopt_iova *frag_build(long live, uint64_t *end_out)
{
	uint64_t end = 1;

	while (end < (uint64_t)live * 4 * 8)
		end <<= 1;
	struct iopt_iova_cfg cfg = { .end_pfn = end, .nr_cpus = 1 };
	struct iopt_iova *d;
	uint64_t rng = 42, *pfn = bench_calloc(2 * (size_t)live, sizeof(uint64_t));
	uint64_t *sz = bench_calloc(2 * (size_t)live, sizeof(uint64_t));

	bench_must(iopt_iova_create(&cfg, &d), "iopt_iova_create");
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

static long ctx_switches(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw + u.ru_nivcsw;
}

/* What one allocation did, counted by the free map (the domain has one
 * stripe; a 2-page allocation's record is in the free map's leaf):
 * nodes a search visited, ancestors an ascent rewrote, page faults and
 * host allocations of nodes inside the call. */
struct frag_work {
	uint64_t visits, climbs, pool_allocs;
	long faults;
};

/* The longest interval between two consecutive clock reads of a thread
 * that does nothing else for ns nanoseconds, in slices of 1 ms of which
 * those with a context switch are left out: what the VM (interrupts, the
 * host preempting the vCPU, which the guest does not see as a context
 * switch) can take from any timed call, whatever the call does. */
static uint64_t clock_gap_max(uint64_t ns)
{
	uint64_t t0 = bench_now_ns(), gap = 0;

	for (;;) {
		long cs = ctx_switches();
		uint64_t s0 = bench_now_ns(), last = s0, g = 0, t;

		do {
			t = bench_now_ns();
			g = t - last > g ? t - last : g;
			last = t;
		} while (t - s0 < 1000000);
		if (ctx_switches() == cs && g > gap)
			gap = g;
		if (t - t0 >= ns)
			return gap;
	}
}

/*
 * One pass of the m 2-page allocations on a fresh copy of the fragmented
 * domain, each timed on its own (t[i]); with w, also each one's work. The
 * getrusage() calls around each allocation flag the ones during which the
 * thread was switched out (sw[i]) and count page faults.
 */
static void frag_pass(long live, long m, double *t, bool *sw,
		      struct frag_work *w, uint64_t *got, long *failed)
{
	uint64_t end;
	struct iopt_iova *d = frag_build(live, &end);
	struct fmap *f = &d->stripes[0].fmap;

	*failed = 0;
	for (long i = 0; i < m; i++) {
		struct rusage u0, u1;
		uint64_t v = f->visits, c = f->climbs, pa = f->pool_allocs;

		getrusage(RUSAGE_THREAD, &u0);
		uint64_t t0 = bench_now_ns();
		int r = iopt_iova_alloc(d, 2, end - 1, &got[i]);
		uint64_t dt = bench_now_ns() - t0;

		getrusage(RUSAGE_THREAD, &u1);
		t[i] = (double)dt;
		sw[i] = u1.ru_nvcsw + u1.ru_nivcsw != u0.ru_nvcsw + u0.ru_nivcsw;
		if (r) {
			got[i] = 0;
			(*failed)++;
		}
		if (w)
			w[i] = (struct frag_work){
				f->visits - v, f->climbs - c, f->pool_allocs - pa,
				(u1.ru_minflt + u1.ru_majflt) - (u0.ru_minflt + u0.ru_majflt)
			};
	}
	iopt_iova_destroy(d);
}

/*
 * The control for frag_pass(): the same loop, with its getrusage() call
 * on each side, timing a spin of spin_ns instead of an allocation (t[i],
 * every call, as over_50us counts every call of the first pass).
 */
static void frag_control_pass(long m, uint64_t spin_ns, double *t)
{
	for (long i = 0; i < m; i++) {
		(void)ctx_switches();
		uint64_t t0 = bench_now_ns(), dt;

		do
			dt = bench_now_ns() - t0;
		while (dt < spin_ns);
		(void)ctx_switches();
		t[i] = (double)dt;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * FRAG_PASSES passes over the same 2-page allocations, each on a fresh
 * copy of the same fragmented domain (the same seed: the same allocations,
 * with the same work, in each), timed one by one; then a control pass and
 * a pass timed in blocks:
 *  - the mean, median, p99.9 and worst are of the first pass; each figure
 *    includes one clock read, clock_ns, the median of an empty timed
 *    interval, and the getrusage() calls that detect a context switch run
 *    between allocations. The first also counts each allocation's work
 *    (struct frag_work). The worst single allocation is reported three
 *    ways: of all calls (worst_ns); of the calls not switched out
 *    (worst_not_switched_ns); and the largest, over the calls, of a call's
 *    smallest time over the passes (worst_repeat_ns). An allocation slow
 *    because of its work is slow in every pass; one that lost the
 *    processor to the VM (an interrupt or the host preempting the vCPU,
 *    which the guest does not see as a context switch) is not, in every
 *    pass, at the same call. over_50us counts the calls over 50 us in the
 *    first pass, over_50us_every_pass those over 50 us in all passes;
 *  - the control pass times, in the same loop, a spin of the first pass's
 *    median length instead of the allocation: its worst (control_worst_ns)
 *    and its calls over 50 us (control_over_50us) are what the VM adds to
 *    any call of that length over as many calls, whatever the call does;
 *    clock_gap_max_ns is the longest gap between two clock reads of a
 *    thread doing nothing else;
 *  - the pass timed in blocks of FRAG_BLOCK (mean_batch_ns): the clock is
 *    read once per block, as the pair cases read it once per run, so this
 *    mean and the cached pair's are taken the same way. The cached pair
 *    (one thread, as case_pairs() times it) is timed just before this
 *    pass's domain is built and just after the pass, and both means are
 *    given against the mean of the two (cached_pair_ns;
 *    mean_vs_cached_pair, mean_batch_vs_cached_pair): the same machine
 *    state, where a cached pair timed seconds earlier
 *    may have run in another (this VM changes speed by up to 2x for
 *    seconds at a time). Blocks during which the thread was switched out
 *    are counted apart (mean_batch_not_switched_ns leaves them out).
 */
#define FRAG_PASSES 3
#define FRAG_BLOCK 100

/* ns per cached pair on d (one CPU, its cache warm), the loop
 * pair_worker() times, in the calling thread. */
static double frag_cached_pair_ns(struct iopt_iova *d)
{
	const long n = bench_iters(500000, 100);
	uint64_t t0 = bench_now_ns();

	pair_loop(d, 0, true, n);
	return (double)(bench_now_ns() - t0) / (double)n;
}

static void case_fragmented(void)
{
	static const long lives[2] = { 10000, 1000000 };
	double clk[1001];

	for (int i = 0; i < 1001; i++) {
		uint64_t t0 = bench_now_ns();

		clk[i] = (double)(bench_now_ns() - t0);
	}
	double clock_ns = bench_median(clk, 1001);
	/* The cached pair's domain, as case_pairs()' one-thread one: made
	 * and warmed before any fragmented domain, so that timing it between
	 * passes allocates nothing. */
	struct iopt_iova_cfg ccfg = { .end_pfn = 1ull << 36, .nr_cpus = 1 };
	struct iopt_iova *cd;

	bench_must(iopt_iova_create(&ccfg, &cd), "iopt_iova_create");
	pair_loop(cd, 0, true, 1000);
	for (int k = 0; k < 2; k++) {
		long live = lives[k];

		if (only_live && live != only_live)
			continue;
		const long m = bench_iters(20000, 1);
		uint64_t *got = bench_calloc((size_t)m, sizeof(uint64_t)), end;
		double *t[FRAG_PASSES], *rep = bench_calloc((size_t)m, sizeof(double));
		double *srt = bench_calloc((size_t)m, sizeof(double));
		bool *sw[FRAG_PASSES];
		struct frag_work *w = bench_calloc((size_t)m, sizeof(*w)), wmax = { 0 };
		long failed = 0, switched = 0, iw = 0, irun = -1, irep = 0;
		long over = 0, over_all = 0, ctl_over = 0;
		double total = 0, total_run = 0, ctl_worst = 0;

		for (int p = 0; p < FRAG_PASSES; p++) {
			t[p] = bench_calloc((size_t)m, sizeof(double));
			sw[p] = bench_calloc((size_t)m, sizeof(bool));
			/* Touched before: their first-touch page faults are
			 * not the allocator's. */
			memset(t[p], 0, sizeof(double) * (size_t)m);
		}
		memset(got, 0, sizeof(uint64_t) * (size_t)m);
		memset(rep, 0, sizeof(double) * (size_t)m);
		memset(srt, 0, sizeof(double) * (size_t)m);
		uint64_t p0 = bench_now_ns();

		for (int p = 0; p < FRAG_PASSES; p++) {
			long f;

			frag_pass(live, m, t[p], sw[p], p ? NULL : w, got, &f);
			if (!p)
				failed = f;
		}
		uint64_t pass_ns = (bench_now_ns() - p0) / FRAG_PASSES;
		uint64_t gap = clock_gap_max(pass_ns);
		long faulted = 0;
		uint64_t pool_allocs = 0;
		const double limit = 50000;
		const double *t1 = t[0];

		for (long i = 0; i < m; i++) {
			bool all = true;

			rep[i] = t1[i];
			for (int p = 0; p < FRAG_PASSES; p++) {
				rep[i] = t[p][i] < rep[i] ? t[p][i] : rep[i];
				all = all && t[p][i] > limit;
			}
			over += t1[i] > limit;
			over_all += all;
			total += t1[i];
			srt[i] = t1[i];
			if (t1[i] > t1[iw])
				iw = i;
			if (sw[0][i]) {
				switched++;
			} else {
				total_run += t1[i];
				if (irun < 0 || t1[i] > t1[irun])
					irun = i;
			}
			if (rep[i] > rep[irep])
				irep = i;
			wmax.visits = w[i].visits > wmax.visits ? w[i].visits : wmax.visits;
			wmax.climbs = w[i].climbs > wmax.climbs ? w[i].climbs : wmax.climbs;
			faulted += w[i].faults > 0;
			pool_allocs += w[i].pool_allocs;
		}
		qsort(srt, (size_t)m, sizeof(double), cmp_double);
		double median = srt[m / 2], p999 = srt[m - 1 - m / 1000];
		double worst = t1[iw], worst_run = irun >= 0 ? t1[irun] : 0;
		double worst_rep = rep[irep];

		/* The control: the same number of calls of the median's length. */
		frag_control_pass(m, (uint64_t)median, srt);
		for (long i = 0; i < m; i++) {
			ctl_over += srt[i] > limit;
			ctl_worst = srt[i] > ctl_worst ? srt[i] : ctl_worst;
		}

		/* The same allocations again, timed in blocks right after
		 * the domain is built (as warm as the pair runs' domains),
		 * between two cached pair runs: one before the build, one
		 * after the pass. */
		double btotal = 0, btotal_run = 0, cached_ns = frag_cached_pair_ns(cd);
		struct iopt_iova *d = frag_build(live, &end);
		long bswitched = 0, brun = 0;

		for (long i = 0; i < m; i += FRAG_BLOCK) {
			long n = m - i < FRAG_BLOCK ? m - i : FRAG_BLOCK, cs = ctx_switches();
			uint64_t t0 = bench_now_ns();

			for (long j = i; j < i + n; j++)
				iopt_iova_alloc(d, 2, end - 1, &got[j]);
			double bt = (double)(bench_now_ns() - t0);

			btotal += bt;
			if (ctx_switches() != cs) {
				bswitched++;
			} else {
				btotal_run += bt;
				brun += n;
			}
		}
		cached_ns = (cached_ns + frag_cached_pair_ns(cd)) / 2;
		unsigned height = d->stripes[0].fmap.height;

		iopt_iova_destroy(d);
		/* Against the cached pairs timed around the block pass. */
		double vs = total / m / cached_ns, bvs = btotal / m / cached_ns;
		double mean_run = m > switched ? total_run / (double)(m - switched) : 0;
		double bmean_run = brun ? btotal_run / (double)brun : 0;
		const struct frag_work *ww = &w[iw], *wr = &w[irep];

		if (json)
			printf("{\"suite\":\"iova\",\"case\":\"fragmented\",\"live\":%ld,"
			       "\"space_pages\":%llu,\"allocs\":%ld,\"failed\":%ld,"
			       "\"mean_ns\":%.1f,\"median_ns\":%.0f,\"p999_ns\":%.0f,"
			       "\"worst_ns\":%.0f,\"switched\":%ld,"
			       "\"mean_not_switched_ns\":%.1f,"
			       "\"worst_not_switched_ns\":%.0f,"
			       "\"worst_repeat_ns\":%.0f,\"passes\":%d,"
			       "\"over_50us\":%ld,\"over_50us_every_pass\":%ld,"
			       "\"control_worst_ns\":%.0f,\"control_over_50us\":%ld,"
			       "\"clock_gap_max_ns\":%llu,"
			       "\"worst_call\":{\"visits\":%llu,\"climbs\":%llu,"
			       "\"faults\":%ld,\"pool_allocs\":%llu},"
			       "\"worst_repeat_call\":{\"visits\":%llu,\"climbs\":%llu,"
			       "\"faults\":%ld,\"pool_allocs\":%llu},"
			       "\"height\":%u,\"max_visits\":%llu,\"max_climbs\":%llu,"
			       "\"calls_faulted\":%ld,\"pool_allocs\":%llu,"
			       "\"cached_pair_ns\":%.2f,\"mean_vs_cached_pair\":%.2f,"
			       "\"clock_ns\":%.0f,\"mean_batch_ns\":%.1f,"
			       "\"batch_blocks_switched\":%ld,"
			       "\"mean_batch_not_switched_ns\":%.1f,"
			       "\"mean_batch_vs_cached_pair\":%.2f}\n",
			       live, (unsigned long long)end, m, failed, total / m, median,
			       p999, worst, switched, mean_run, worst_run, worst_rep,
			       FRAG_PASSES, over, over_all, ctl_worst, ctl_over,
			       (unsigned long long)gap,
			       (unsigned long long)ww->visits, (unsigned long long)ww->climbs,
			       ww->faults, (unsigned long long)ww->pool_allocs,
			       (unsigned long long)wr->visits, (unsigned long long)wr->climbs,
			       wr->faults, (unsigned long long)wr->pool_allocs,
			       height, (unsigned long long)wmax.visits,
			       (unsigned long long)wmax.climbs, faulted,
			       (unsigned long long)pool_allocs, cached_ns, vs, clock_ns,
			       btotal / m,
			       bswitched, bmean_run, bvs);
		else
			printf("fragmented   live %-8ld mean %7.1f ns  median %6.0f ns  "
			       "p99.9 %7.0f ns  worst %8.0f ns  failed %ld  mean/cached "
			       "%.1fx\n             %ld switched out; the others: mean "
			       "%.1f ns, worst %.0f ns (each includes a clock read, %.0f ns)\n"
			       "             worst of a call's least time over %d passes "
			       "%.0f ns; calls over 50 us %ld, in every pass %ld\n"
			       "             control (a spin of the median's length, "
			       "as many calls): worst %.0f ns, %ld over 50 us; the VM's "
			       "longest gap between two clock reads %llu ns\n"
			       "             work: worst call %llu visits %llu climbs "
			       "faults %ld; worst over the passes %llu visits "
			       "%llu climbs faults %ld; most of any call (height %u) "
			       "%llu visits %llu climbs; %ld calls faulted\n"
			       "             timed in blocks of %d: mean %.1f ns "
			       "(%ld blocks switched out; the others %.1f ns)  "
			       "mean/cached %.1fx\n",
			       live, total / m, median, p999, worst,
			       failed, vs, switched, mean_run, worst_run, clock_ns,
			       FRAG_PASSES, worst_rep, over, over_all, ctl_worst, ctl_over,
			       (unsigned long long)gap,
			       (unsigned long long)ww->visits, (unsigned long long)ww->climbs,
			       ww->faults, (unsigned long long)wr->visits,
			       (unsigned long long)wr->climbs, wr->faults, height,
			       (unsigned long long)wmax.visits,
			       (unsigned long long)wmax.climbs, faulted,
			       FRAG_BLOCK, btotal / m, bswitched, bmean_run, bvs);
		free(got);
		for (int p = 0; p < FRAG_PASSES; p++) {
			free(t[p]);
			free(sw[p]);
		}
		free(rep);
		free(srt);
		free(w);
	}
	iopt_iova_destroy(cd);
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

		bench_must(iopt_iova_create(&cfg, &d), "iopt_iova_create");
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
		const long n = bench_iters(k == 0 ? 2000 : 200000, 1);
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
	const long unmaps = bench_iters(1000000, 1);

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
		bench_must(iopt_iova_create(&cfg, &d), "iopt_iova_create");
		bench_must(iopt_fq_create(d, &fcfg, &q), "iopt_fq_create");
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

/* ---- the live record against rculfhash ---------------------------------- */

#ifdef IOPT_BENCH_LFHT
struct lf_rec {
	uint64_t key, val;
	struct cds_lfht_node node;
	struct rcu_head rcu;
};

static int lf_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct lf_rec, node)->key ==
	       *(const uint64_t *)key;
}

static void lf_free(struct rcu_head *head)
{
	free(caa_container_of(head, struct lf_rec, rcu));
}

static unsigned long lf_hash(uint64_t key)
{
	return (unsigned long)(key * 0x9e3779b97f4a7c15ull >> 17);
}

/* What the allocator would do with rculfhash as its record: a node per
 * allocation, added; on free, looked up, its size checked, deleted and
 * freed after a grace period. With table_only, the nodes come from a
 * ring of 64 and are never freed (one thread, reused after 64 pairs: the
 * table's own cost, without the allocation and the grace period that any
 * real use needs). */
static double lf_pairs(long live, long n, bool table_only)
{
	static struct lf_rec ring[64];
	struct cds_lfht *ht = cds_lfht_new(64, 64, 0, CDS_LFHT_AUTO_RESIZE, NULL);
	uint64_t base = 1ull << 30;

	if (!ht)
		bench_must(-ENOMEM, "cds_lfht_new");
	for (long i = 0; i < live; i++) {
		struct lf_rec *r = bench_calloc(1, sizeof(*r));

		r->key = base + 16 * (uint64_t)i;
		r->val = 4;
		cds_lfht_node_init(&r->node);
		urcu_bp_read_lock();
		cds_lfht_add(ht, lf_hash(r->key), &r->node);
		urcu_bp_read_unlock();
	}
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < n; i++) {
		uint64_t key = base - 8 - 8 * (uint64_t)(i & 63);
		struct lf_rec *r = table_only ? &ring[i & 63] : malloc(sizeof(*r));
		struct cds_lfht_iter it;
		struct cds_lfht_node *node;

		if (!r)
			bench_must(-ENOMEM, "malloc");
		r->key = key;
		r->val = 8;
		cds_lfht_node_init(&r->node);
		urcu_bp_read_lock();
		cds_lfht_add(ht, lf_hash(key), &r->node);
		urcu_bp_read_unlock();
		urcu_bp_read_lock();
		cds_lfht_lookup(ht, lf_hash(key), lf_match, &key, &it);
		node = cds_lfht_iter_get_node(&it);
		if (node && caa_container_of(node, struct lf_rec, node)->val == 8 &&
		    !cds_lfht_del(ht, node) && !table_only)
			urcu_bp_call_rcu(&caa_container_of(node, struct lf_rec, node)->rcu,
					 lf_free);
		urcu_bp_read_unlock();
	}
	double ns = (double)(bench_now_ns() - t0) / (double)n;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	urcu_bp_read_lock();
	cds_lfht_for_each(ht, &it, node) {
		if (!cds_lfht_del(ht, node))
			urcu_bp_call_rcu(&caa_container_of(node, struct lf_rec, node)->rcu,
					 lf_free);
	}
	urcu_bp_read_unlock();
	urcu_bp_barrier();
	cds_lfht_destroy(ht, NULL);
	return ns;
}
#endif

/* The same with the allocator's record (under its stripe lock in the
 * allocator; no lock here, as none above). */
static double live_pairs(long live, long n)
{
	struct iova_live l;
	uint64_t base = 1ull << 30;

	bench_must(live_init(&l, ~0ull), "live_init");
	for (long i = 0; i < live; i++) {
		bench_must(live_reserve(&l), "live_reserve");
		live_add(&l, base + 16 * (uint64_t)i, 4);
	}
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < n; i++) {
		uint64_t key = base - 8 - 8 * (uint64_t)(i & 63);

		if (live_reserve(&l))
			break;
		live_add(&l, key, 8);
		live_del_if(&l, key, 8);
	}
	double ns = (double)(bench_now_ns() - t0) / (double)n;

	live_fini(&l);
	return ns;
}

static void case_record(void)
{
	static const long lives[2] = { 1, 10000 };

	for (int k = 0; k < 2; k++) {
		long live = only_live ? only_live : lives[k];
		double a[64], b[64], c[64];
		const long n = bench_iters(1000000, 1);

		if (only_live && k)
			break;
		for (unsigned r = 0; r < runs; r++) {
			a[r] = live_pairs(live, n);
#ifdef IOPT_BENCH_LFHT
			b[r] = lf_pairs(live, n, false);
			c[r] = lf_pairs(live, n, true);
#else
			b[r] = c[r] = 0;
#endif
		}
		double ma = bench_median(a, runs), mb = bench_median(b, runs);
		double mc = bench_median(c, runs);

		if (json)
			printf("{\"suite\":\"iova\",\"case\":\"record\",\"live\":%ld,"
			       "\"live_c_ns_per_pair\":%.1f,\"rculfhash_ns_per_pair\":%.1f,"
			       "\"rculfhash_table_only_ns_per_pair\":%.1f,\"runs\":%u}\n",
			       live, ma, mb, mc, runs);
		else
			printf("record       live %-8ld live.c %7.1f ns/pair  rculfhash %7.1f "
			       "(table alone %7.1f) ns/pair%s\n", live, ma, mb, mc,
#ifdef IOPT_BENCH_LFHT
			       ""
#else
			       " (not built: no liburcu-cds)"
#endif
			       );
	}
}

static const struct bench_case iova_cases[] = {
	{ "cached_pair", "alloc+free of one page through the per-CPU caches,\n"
	  "beside tree_pair (both run; cached_vs_tree compares)" },
	{ "tree_pair", "the same through the range allocator alone" },
	{ "fragmented", "ns per 2-page allocation after random fragmentation,\n"
	  "at 10^4 and 10^6 live ranges" },
	{ "exhaust32", "32-bit space full, 128 CPUs: ns per allocation for\n"
	  "each cache-flush policy" },
	{ "invalidation", "flush-alls per million unmaps for each policy" },
	{ "record", "the record of live allocations against rculfhash" },
	{ 0 },
};

int bench_iova_main(int argc, char **argv)
{
	unsigned live = 0;
	const struct bench_opt opts[] = {
		{ "runs", BENCH_UINT, &runs, "N", "runs per figure, its median (5)",
		  .min = 1, .max = 64 },
		{ "live", BENCH_UINT, &live, "N", "fragmented: only 10000 or 1000000 "
		  "live;\nrecord: N records live (1 and 10000)",
		  .min = 1, .max = 1000000 },
		{ "threads", BENCH_LIST, pair_threads, "N,N,...", "the pair cases' "
		  "thread counts (1,2)", .min = 1, .max = PAIR_MAX_THREADS,
		  .count = &pair_nthreads, .cap = 8 },
		{ "json", BENCH_FLAG, &json, .help = "one JSON object per line" },
		{ 0 },
	};
	const char *only = NULL;
	const struct bench_cli cli = {
		.suite = "iova",
		.about = "The IOVA allocator, its caches and invalidation policies "
			 "(docs/iova.md).",
		.opts = opts, .cases = iova_cases, .only = &only,
	};
	int status;

	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	only_live = live;
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
	RUN("record", case_record);
	return 0;
}
