/* SPDX-License-Identifier: MIT */
/* Shared helpers for iopt-bench suites. */
#ifndef IOPT_BENCH_H
#define IOPT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/platform/platform.h"

/*
 * The same sources build two programs: iopt-bench on the host library and
 * iopt-bench-sim on the simulation library (IOPT_PLATFORM_SIM; docs/sim.md),
 * where every worker a suite starts with plat_thread_start() is a
 * simulated CPU and the suite itself runs on simulated CPU 0. So suites
 * start workers through the platform layer, wait with bench_barrier, and
 * take time only through bench_now_ns() (the platform clock: simulated ns
 * in iopt-bench-sim).
 */

/* A barrier for a suite's workers (pthread's on the host; a spin barrier
 * on platform atomics on simulated CPUs, which must not block the host
 * thread they share). */
struct bench_barrier {
	uint64_t n, count, gen;	/* simulated CPUs */
	void *host;		/* host threads: a pthread barrier */
};
void bench_barrier_init(struct bench_barrier *b, unsigned n);
void bench_barrier_wait(struct bench_barrier *b);
void bench_barrier_destroy(struct bench_barrier *b);
/* After a barrier: count the calling thread in *ready and spin until
 * nthreads threads have. A barrier wakes its waiters one by one (a
 * halted vCPU wakes slowly); timed loops that must overlap from their
 * start call this between the barrier and the clock read. */
void bench_spin_start(uint64_t *ready, unsigned nthreads);

/*
 * --sim N [--seed S] [--sim-mem sc|tso] on any suite's command line: run
 * it on N simulated CPUs. iopt-bench hands the whole command to
 * iopt-bench-sim (next to it), where bench_simrun_main() strips these
 * options, runs
 * the suite on a simulation and adds sim_cpus, seed, sim_mem, trace_hash,
 * sim_ops_per_host_sec and host_s to every JSON line (bench_simrun.c).
 */
typedef int (*bench_dispatch_fn)(int argc, char **argv);
bool bench_wants_sim(int argc, char **argv);
int bench_simrun_main(int argc, char **argv, bench_dispatch_fn dispatch);
/* In iopt-bench-sim: the simulated worker count (--sim N); 0 on the host. */
unsigned bench_sim_cpus(void);
/* In iopt-bench-sim: the simulation the suite runs in; NULL on the host. */
struct iopt_sim;
struct iopt_sim *bench_sim(void);
/* Iterations for a loop sized for host speed: n on the host, n / div
 * (at least 1) on the simulation, whose engine runs about a hundred
 * times slower than the host. */
long bench_iters(long n, long div);

/* Monotonic ns: host time, or the calling simulated CPU's time. */
uint64_t bench_now_ns(void);
double bench_median(double *v, size_t n);
/* Pin the calling thread to CPU (modulo the CPUs online); ignore errors. */
void bench_pin(unsigned cpu);
unsigned bench_ncpus(void);
/* Parse "123", "64k", "2m", "1g" into a number; false if malformed. */
bool bench_parse_size(const char *s, uint64_t *out);

int bench_pgtable_main(int argc, char **argv);
int bench_smmu_main(int argc, char **argv);
int bench_iova_main(int argc, char **argv);
int bench_dma_main(int argc, char **argv);
int bench_sim_main(int argc, char **argv);
int bench_host_main(int argc, char **argv);

#endif
