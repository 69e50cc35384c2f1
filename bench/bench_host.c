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
 *    It waits on the multiplier's latency and leaves the core's ports
 *    mostly idle, so it scales 2x on two whole cores and nearly 2x on
 *    the two hardware threads of one core;
 *  - mem: loads and stores over the thread's own 8 KiB (L1-resident),
 *    which keeps a core's load and store ports busy, as the model's hit
 *    path and the allocators' fast paths do: 2x on two whole cores,
 *    about 1x on two hardware threads of one core, or on one core that
 *    the two CPUs take turns on.
 * When alu holds at 2x while mem falls to 1x in the same stretch of
 * pairs, the two CPUs this machine shows were then not two cores' worth
 * for throughput-bound code (docs/smmu_model.md, "What the machine gives
 * two threads").
 *
 * Each pair is one two-thread run beside the one-thread runs before and
 * after it (shared with the neighbouring pairs), its ratio taken against
 * their mean, as translate_hit_threads takes its ratios; the pairs of
 * the two loops alternate. Each run is about --run-ms long (a
 * one-thread run of the loop calibrates its length first).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum loop { LOOP_ALU, LOOP_MEM, NLOOPS };

static const char *const loop_name[NLOOPS] = { "alu", "mem" };

#define MEM_WORDS	1024		/* 8 KiB a thread */

struct worker {
	enum loop loop;
	long n;
	unsigned id, nthreads;
	struct bench_barrier *go;
	uint64_t *ready;		/* threads spinning to start */
	uint64_t *mem;			/* LOOP_MEM's words: its own pages */
	uint64_t t0, t1, sink;
	struct plat_thread th;
};

static uint64_t loop_alu(long n, uint64_t x)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));	/* keep the chain */
	}
	return x;
}

static uint64_t loop_mem(long n, uint64_t *a)
{
	uint64_t q = 0;

	for (long i = 0; i < n; i++) {
		q += a[(uint64_t)i * 7 % MEM_WORDS];
		a[(uint64_t)i * 5 % MEM_WORDS] = q ^ (uint64_t)i;
	}
	return q;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	bench_pin(w->id);
	bench_barrier_wait(w->go);
	bench_spin_start(w->ready, w->nthreads);
	w->t0 = bench_now_ns();
	w->sink = w->loop == LOOP_ALU ? loop_alu(w->n, w->id + 1) : loop_mem(w->n, w->mem);
	w->t1 = bench_now_ns();
	return NULL;
}

/* One run of loop on nthreads threads (1 or 2), n iterations each:
 * iterations per ns over the wall time from the first loop's start to
 * the last one's end. */
static double run(enum loop loop, unsigned nthreads, long n, uint64_t **mem)
{
	struct worker w[2];
	struct bench_barrier go;
	uint64_t ready = 0, t0 = UINT64_MAX, t1 = 0;

	bench_barrier_init(&go, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .loop = loop, .n = n, .id = i,
					.nthreads = nthreads, .go = &go,
					.ready = &ready, .mem = mem[i] };
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
	}
	bench_barrier_destroy(&go);
	return (double)n * nthreads / (double)(t1 > t0 ? t1 - t0 : 1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: iopt-bench host [--pairs N] [--run-ms MS] [--json]\n"
		"  two threads against one on CPUs 0 and 1, two loops:\n"
		"  alu (register chain) and mem (L1 loads and stores);\n"
		"  N pairs of each (default 101), runs of MS ms (default 5)\n");
}

int bench_host_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, 0, 'j' },
		{ "pairs", required_argument, 0, 'p' },
		{ "run-ms", required_argument, 0, 'r' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	bool json = false;
	long pairs = 101;
	double run_ms = 5;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'p': pairs = strtol(optarg, NULL, 0); break;
		case 'r': run_ms = strtod(optarg, NULL); break;
		default: usage(); return 2;
		}
	}
	if (optind < argc || pairs < 1 || pairs > 100000 || !(run_ms > 0 && run_ms <= 1000)) {
		usage();
		return 2;
	}
	if (bench_sim_cpus()) {
		fprintf(stderr, "host: measures the host's CPUs; not on simulated ones\n");
		return 2;
	}
	if (bench_ncpus() < 2) {
		fprintf(stderr, "host: needs two CPUs online\n");
		return 2;
	}

	uint64_t *mem[2];
	double *ratio[NLOOPS];
	long n[NLOOPS];

	for (unsigned i = 0; i < 2; i++) {
		mem[i] = aligned_alloc(4096, MEM_WORDS * sizeof(uint64_t));
		if (!mem[i]) {
			fprintf(stderr, "host: out of memory\n");
			return 1;
		}
		memset(mem[i], 0, MEM_WORDS * sizeof(uint64_t));
	}
	for (int l = 0; l < NLOOPS; l++) {
		ratio[l] = calloc((size_t)pairs, sizeof(double));
		if (!ratio[l]) {
			fprintf(stderr, "host: out of memory\n");
			return 1;
		}
		/* Calibrate: a run of a million iterations, then the count
		 * for run_ms (at least a thousand). */
		double per_ns = run((enum loop)l, 1, 1000000, mem);

		n[l] = (long)(per_ns * run_ms * 1e6);
		n[l] = n[l] < 1000 ? 1000 : n[l];
	}

	double prev[NLOOPS];

	for (int l = 0; l < NLOOPS; l++)
		prev[l] = run((enum loop)l, 1, n[l], mem);
	for (long k = 0; k < pairs; k++)
		for (int l = 0; l < NLOOPS; l++) {
			double two = run((enum loop)l, 2, n[l], mem);
			double one = run((enum loop)l, 1, n[l], mem);

			ratio[l][k] = 2 * two / (prev[l] + one);
			prev[l] = one;
		}

	for (int l = 0; l < NLOOPS; l++) {
		long below = 0, above = 0;

		for (long k = 0; k < pairs; k++) {
			below += ratio[l][k] < 1.3;
			above += ratio[l][k] >= 1.8;
		}
		double med = bench_median(ratio[l], (size_t)pairs);	/* sorts */
		double q1 = ratio[l][pairs / 4], q3 = ratio[l][3 * pairs / 4];

		if (json)
			printf("{\"suite\":\"host\",\"case\":\"pair_%s\",\"pairs\":%ld,"
			       "\"run_ms\":%.1f,\"vs_one_thread\":%.2f,"
			       "\"vs_one_thread_q1\":%.2f,\"vs_one_thread_q3\":%.2f,"
			       "\"pairs_below_1_3\":%.3f,\"pairs_at_1_8\":%.3f}\n",
			       loop_name[l], pairs, run_ms, med, q1, q3,
			       (double)below / (double)pairs, (double)above / (double)pairs);
		else
			printf("pair_%s  2 threads / 1: %.2fx (quartiles %.2f-%.2f); "
			       "pairs under 1.3x %4.1f%%, at 1.8x or more %4.1f%%\n",
			       loop_name[l], med, q1, q3, 100.0 * (double)below / (double)pairs,
			       100.0 * (double)above / (double)pairs);
		free(ratio[l]);
	}
	free(mem[0]);
	free(mem[1]);
	return 0;
}
