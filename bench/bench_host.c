/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench host: what this machine gives two threads at once, measured
 * with code that is not the library's. Read it beside any two-thread
 * figure of the other suites (translate_hit_threads, the page-table and
 * IOVA thread scaling) taken on a shared or virtual machine.
 *
 * Two loops, each run by one thread and by two threads pinned to CPUs 0
 * and 1 (each its own copy, sharing nothing), in the same series:
 *  - alu: a dependent chain of 64-bit multiplies and adds in registers.
 *    Each step waits on the multiplier's latency, so the loop issues
 *    about one instruction a cycle and leaves most of the core idle: it
 *    scales 2x on two whole cores and should stay near 2x even on two
 *    hardware threads of one core;
 *  - mem: a load and a store over the thread's own 8 KiB (L1-resident)
 *    among about eight integer operations an iteration, with no long
 *    dependency: it issues several instructions a cycle, as the model's
 *    hit path does, so two of it on one core's two hardware threads, or
 *    on a core shared with someone else's busy thread, should get little
 *    more than one core's worth.
 * When alu holds at 2x while mem falls, the two CPUs were then not two
 * whole cores' worth for code that keeps a core busy; a CPU taken away
 * altogether would stop alu too. Each two-thread run also times each
 * thread's loop alone: in a pair under ONE_CORE, both threads slowed
 * alike points at the two CPUs sharing a core, one of them near full
 * speed at the other CPU's core being shared or taken
 * (docs/history/smmu_model.md, "what the machine gives two threads").
 *
 * Each pair is one two-thread run beside the one-thread runs before and
 * after it (shared with the neighbouring pairs; they alternate between
 * CPU 0 and CPU 1), its ratio taken against their mean, as
 * translate_hit_threads takes its ratios; the pairs of the two loops
 * alternate. Each run is about --run-ms long (the fastest of three
 * one-thread runs of the loop calibrates its length first).
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum loop { LOOP_ALU, LOOP_MEM, NLOOPS };

static const char *const loop_name[NLOOPS] = { "alu", "mem" };

#define MEM_WORDS	1024		/* 8 KiB a thread */
/* Two threads at under this much one thread's rate got about one core's
 * worth between them; at AT_TWO or more, about two cores'. */
#define ONE_CORE	1.3
#define AT_TWO		1.8

struct worker {
	enum loop loop;
	int64_t n;
	unsigned cpu, nthreads;
	struct bench_barrier *go;
	uint64_t *ready;		/* threads spinning to start */
	uint64_t *mem;			/* LOOP_MEM's words: its own pages */
	uint64_t t0, t1, sink;
	struct plat_thread th;
};

static uint64_t loop_alu(int64_t n, uint64_t x)
{
	for (int64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* The empty asm hides x from the compiler, so the chain can
		 * be neither folded into a closed form nor reassociated. */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static uint64_t loop_mem(int64_t n, uint64_t *a)
{
	uint64_t q = 0;

	for (int64_t i = 0; i < n; i++) {
		q += a[(uint64_t)i * 7 % MEM_WORDS];
		a[(uint64_t)i * 5 % MEM_WORDS] = q ^ (uint64_t)i;
	}
	return q;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	bench_pin(w->cpu);
	bench_barrier_wait(w->go);
	bench_spin_start(w->ready, w->nthreads);
	w->t0 = bench_now_ns();
	w->sink = w->loop == LOOP_ALU ? loop_alu(w->n, w->cpu + 1)
				      : loop_mem(w->n, w->mem);
	w->t1 = bench_now_ns();
	return NULL;
}

/* The result of one run: iterations per ns over the wall time from the
 * first loop's start to the last one's end, and each thread's own. */
struct run_rate {
	double all, thread[2];
};

/*
 * One run of loop, n iterations on each of nthreads threads: two on CPUs
 * 0 and 1, or one on CPU cpu. A thread that cannot be started ends the
 * program: those already started wait at the barrier for it, so there is
 * no returning.
 */
static struct run_rate run(enum loop loop, unsigned nthreads, unsigned cpu,
			   int64_t n, uint64_t **mem)
{
	struct worker w[2];
	struct bench_barrier go;
	uint64_t ready = 0, t0 = UINT64_MAX, t1 = 0;
	struct run_rate r = { 0 };

	bench_barrier_init(&go, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		unsigned c = nthreads == 1 ? cpu : i;

		w[i] = (struct worker){ .loop = loop, .n = n, .cpu = c,
					.nthreads = nthreads, .go = &go,
					.ready = &ready, .mem = mem[c] };
		if (plat_thread_start(&w[i].th, worker_main, &w[i])) {
			fprintf(stderr, "host: cannot start a thread\n");
			exit(1);
		}
	}
	bench_barrier_wait(&go);
	for (unsigned i = 0; i < nthreads; i++) {
		plat_thread_join(&w[i].th);
		t0 = w[i].t0 < t0 ? w[i].t0 : t0;
		t1 = w[i].t1 > t1 ? w[i].t1 : t1;
		/* A clock that did not move (a VM's coarse clock source):
		 * count one ns rather than divide by zero. */
		r.thread[i] = (double)n / (double)(w[i].t1 > w[i].t0 ? w[i].t1 - w[i].t0 : 1);
	}
	bench_barrier_destroy(&go);
	r.all = (double)n * nthreads / (double)(t1 > t0 ? t1 - t0 : 1);
	return r;
}

/* Iterations of loop for a run of run_ms: from the fastest of three
 * one-thread runs of a million (one VM stall cannot inflate it), at least
 * a thousand and at most 16 a ns (beyond any core: a clock that did not
 * move cannot make a run endless). */
static int64_t calibrate(enum loop loop, double run_ms, uint64_t **mem)
{
	double best = 0;

	for (unsigned k = 0; k < 3; k++) {
		struct run_rate r = run(loop, 1, k % 2, 1000000, mem);

		best = r.all > best ? r.all : best;
	}
	double n = best * run_ms * 1e6;

	double most = 16 * run_ms * 1e6;

	return (int64_t)(n < 1e3 ? 1e3 : n > most ? most : n);
}

/* What a loop's series gave: per pair, the two threads' ratio to one
 * thread, and each thread's own rate to one thread's (slower, faster). */
struct series {
	double *ratio, *slow, *fast;
};

static void report(enum loop l, const struct series *s, long pairs,
		   double run_ms, bool json)
{
	long below = 0, above = 0, nbad = 0;

	for (long k = 0; k < pairs; k++) {
		below += s->ratio[k] < ONE_CORE;
		above += s->ratio[k] >= AT_TWO;
		if (s->ratio[k] < ONE_CORE) {	/* the bad pairs' threads, packed */
			s->slow[nbad] = s->slow[k];
			s->fast[nbad++] = s->fast[k];
		}
	}
	/* bench_median() sorts: quartiles from the sorted ratios. */
	double med = bench_median(s->ratio, (size_t)pairs);
	double q1 = s->ratio[pairs / 4], q3 = s->ratio[pairs - 1 - pairs / 4];
	double slow = nbad ? bench_median(s->slow, (size_t)nbad) : NAN;
	double fast = nbad ? bench_median(s->fast, (size_t)nbad) : NAN;
	double fb = (double)below / (double)pairs, fa = (double)above / (double)pairs;

	if (json) {
		printf("{\"suite\":\"host\",\"case\":\"pair_%s\",\"pairs\":%ld,"
		       "\"run_ms\":%.2f,\"vs_one_thread\":%.2f,"
		       "\"vs_one_thread_q1\":%.2f,\"vs_one_thread_q3\":%.2f,"
		       "\"pairs_below_1_3\":%.3f,\"pairs_at_1_8\":%.3f",
		       loop_name[l], pairs, run_ms, med, q1, q3, fb, fa);
		if (nbad)
			printf(",\"below_1_3_slower_thread\":%.2f,"
			       "\"below_1_3_faster_thread\":%.2f}\n", slow, fast);
		else	/* no such pair: nothing to say of their threads */
			printf(",\"below_1_3_slower_thread\":null,"
			       "\"below_1_3_faster_thread\":null}\n");
	} else {
		printf("pair_%s  2 threads / 1: %.2fx (quartiles %.2f-%.2f); pairs "
		       "under %.1fx %4.1f%%, at %.1fx or more %4.1f%%", loop_name[l],
		       med, q1, q3, ONE_CORE, 100 * fb, AT_TWO, 100 * fa);
		if (nbad)
			printf("; in those under %.1fx each thread ran at %.2f "
			       "and %.2f of one alone", ONE_CORE, slow, fast);
		printf("\n");
	}
}

static const struct bench_case host_cases[] = {
	{ "pair_alu", "a dependent multiply-add chain in registers: scales 2x\n"
	  "even on two hardware threads of one core" },
	{ "pair_mem", "loads and stores over the thread's own 8 KiB: little\n"
	  "more than 1x where the two CPUs share a core" },
	{ 0 },
};

/* Options into *pairs, *run_ms, *json and run[]: true to run, else false
 * with the exit status in *status (0 after --help, 2 after a message). */
static bool parse(int argc, char **argv, long *pairs, double *run_ms,
		  bool *json, bool run[NLOOPS], int *status)
{
	uint64_t n = (uint64_t)*pairs;
	const char *only = NULL;
	const struct bench_opt opts[] = {
		{ "pairs", BENCH_U64, &n, "N", "pairs of each loop (101)",
		  .min = 1, .max = 100000 },
		{ "run-ms", BENCH_REAL, run_ms, "MS", "each run's length in ms (5)",
		  .lo = 0.01, .hi = 1000 },
		{ "json", BENCH_FLAG, json, .help = "one JSON object per line" },
		{ 0 },
	};
	const struct bench_cli cli = {
		.suite = "host",
		.about = "What this machine gives two threads: each loop run by "
			 "two threads pinned to\nCPUs 0 and 1 against one thread, "
			 "in pairs (read beside any thread-scaling\nfigure).",
		.opts = opts, .cases = host_cases, .only = &only, .no_sim = true,
	};

	if (!bench_parse(&cli, argc, argv, status))
		return false;
	*pairs = (long)n;
	for (int l = 0; l < NLOOPS; l++)
		run[l] = !only || !strcmp(only + strlen("pair_"), loop_name[l]);
	return true;
}

int bench_host_main(int argc, char **argv)
{
	long pairs = 101;
	double run_ms = 5;
	bool json = false, run_loop[NLOOPS];
	int ret;
	cpu_set_t allowed;

	if (!parse(argc, argv, &pairs, &run_ms, &json, run_loop, &ret))
		return ret;
	if (bench_sim_cpus()) {
		fprintf(stderr, "host: measures the host's CPUs; not on simulated ones\n");
		return 2;
	}
	/* bench_pin() ignores a failed pin; here it would make the series
	 * measure threads placed anywhere. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) ||
	    !CPU_ISSET(0, &allowed) || !CPU_ISSET(1, &allowed)) {
		fprintf(stderr, "host: needs CPUs 0 and 1 in this process's affinity\n");
		return 2;
	}

	uint64_t *mem[2] = { 0 };
	struct series s[NLOOPS] = { 0 };
	int64_t n[NLOOPS];
	double prev[NLOOPS];

	ret = 1;
	for (unsigned i = 0; i < 2; i++) {
		mem[i] = aligned_alloc(4096, MEM_WORDS * sizeof(uint64_t));
		if (!mem[i])
			goto out;
		memset(mem[i], 0, MEM_WORDS * sizeof(uint64_t));
	}
	for (int l = 0; l < NLOOPS; l++) {
		s[l].ratio = calloc((size_t)pairs, sizeof(double));
		s[l].slow = calloc((size_t)pairs, sizeof(double));
		s[l].fast = calloc((size_t)pairs, sizeof(double));
		if (!s[l].ratio || !s[l].slow || !s[l].fast)
			goto out;
		if (!run_loop[l])
			continue;
		n[l] = calibrate((enum loop)l, run_ms, mem);
		prev[l] = run((enum loop)l, 1, 0, n[l], mem).all;
	}
	for (long k = 0; k < pairs; k++)
		for (int l = 0; l < NLOOPS; l++) {
			if (!run_loop[l])
				continue;
			struct run_rate two = run((enum loop)l, 2, 0, n[l], mem);
			double one = run((enum loop)l, 1, (unsigned)(k + 1) % 2, n[l], mem).all;
			double base = (prev[l] + one) / 2;
			double a = two.thread[0] / base, b = two.thread[1] / base;

			s[l].ratio[k] = two.all / base;
			s[l].slow[k] = a < b ? a : b;
			s[l].fast[k] = a < b ? b : a;
			prev[l] = one;
		}
	for (int l = 0; l < NLOOPS; l++)
		if (run_loop[l])
			report((enum loop)l, &s[l], pairs, run_ms, json);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "host: out of memory\n");
	for (int l = 0; l < NLOOPS; l++) {
		free(s[l].ratio);
		free(s[l].slow);
		free(s[l].fast);
	}
	free(mem[0]);
	free(mem[1]);
	return ret;
}
