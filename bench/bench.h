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
 * --sim N [--seed S] [--sim-mem sc|tso] [--sim-platform NAME]
 * [--sim-param N=V]... [--smmu-preset NAME] [--smmu-param N=V]... on any
 * suite's command line: run it on N simulated CPUs. iopt-bench hands the
 * whole command to iopt-bench-sim (next to it), where bench_simrun_main()
 * strips these options, runs the suite on a simulation and adds sim_cpus,
 * seed, sim_mem, trace_hash, sim_ops_per_host_sec, host_s and sim_params
 * to every JSON line (bench_simrun.c).
 * The sim suite is the exception: its own --sim N is the CPU count of the
 * simulations it runs (bench_wants_sim() is false for it).
 */
typedef int (*bench_dispatch_fn)(int argc, char **argv);
bool bench_wants_sim(int argc, char **argv);
int bench_simrun_main(int argc, char **argv, bench_dispatch_fn dispatch);
/* In iopt-bench-sim: the simulated worker count (--sim N); 0 on the host. */
unsigned bench_sim_cpus(void);
/* In iopt-bench-sim: the simulation the suite runs in; NULL on the host. */
struct iopt_sim;
struct iopt_sim *bench_sim(void);
/* In iopt-bench-sim: the SMMU models' parameters of --smmu-preset and
 * --smmu-param (all of them, defaults included) into c->v3 and c->v2; a
 * suite calls it right after iopt_testbed_default_cfg(). Nothing on the
 * host. */
struct iopt_testbed_cfg;
void bench_model_params(struct iopt_testbed_cfg *c);
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

/*
 * Command lines. A suite describes its options in a table of struct
 * bench_opt (the last one's name NULL) and its cases in a table of struct
 * bench_case, and bench_parse() reads argv against them:
 *  - "--name VALUE" or "--name=VALUE"; a flag takes no value; names are
 *    matched whole; every argument is an option (none positional);
 *  - integers are decimal or 0x hex digits only (no sign, no spaces), at
 *    most 2^64 - 1, in [min, max]; BENCH_SIZE takes a k, m, g or t
 *    suffix (2^10 ... 2^40); check, when set, adds a rule ("a power of
 *    two") that a value must pass;
 *  - a real is a finite number (strtod()'s, a digit or '.' first) in
 *    [lo, hi];
 *  - --case NAME (where the suite has cases) must name one of them;
 *  - --help prints the usage built from the tables on stdout.
 * A bad option or value gets one line on stderr naming it and, with
 * stdout untouched, *status 2; --help gets *status 0. Either way the
 * suite returns *status at once (bench_parse() returns false); true:
 * run. Values are stored as they are read: after an error the targets
 * may hold earlier options' values, never a half-parsed one.
 */
enum bench_opt_type {
	BENCH_FLAG,	/* bool *: set */
	BENCH_UINT,	/* unsigned *: an integer in [min, max] */
	BENCH_U64,	/* uint64_t *: an integer in [min, max] */
	BENCH_SIZE,	/* uint64_t *: an integer with a suffix, in [min, max] */
	BENCH_REAL,	/* double *: in [lo, hi] */
	BENCH_LIST,	/* unsigned[cap]: N,N,... each in [min, max]; *count */
	BENCH_CHOICE,	/* unsigned *: the index of the value in choices */
	BENCH_CHOICES,	/* unsigned *: bit i set for each choices[i] in a,b */
};

struct bench_opt {
	const char *name;		/* without the "--" */
	enum bench_opt_type type;
	void *val;
	const char *arg;		/* the value's name in the usage */
	const char *help;		/* may hold '\n's */
	uint64_t min, max;		/* UINT, U64, SIZE, LIST */
	double lo, hi;			/* REAL */
	const char *const *choices;	/* CHOICE(S), NULL-terminated */
	unsigned *count, cap;		/* LIST */
	bool (*check)(uint64_t v);	/* integers: a further rule */
	const char *rule;		/* what check wants, for messages */
};

struct bench_case {
	const char *name, *help;
};

struct bench_cli {
	const char *suite;		/* "pgtable" */
	const char *about;		/* the usage's first lines */
	const struct bench_opt *opts;
	const struct bench_case *cases;	/* NULL: no --case */
	const char **only;		/* --case NAME; left alone if absent */
	bool no_sim;			/* --sim N does not apply */
};

bool bench_parse(const struct bench_cli *cli, int argc, char **argv, int *status);
/*
 * One option of opts at argv[*i] (the name and, for a value, "=V" or
 * argv[*i + 1], *i advancing past it): 1 when it was one and its value
 * was good, 0 when argv[*i] is none of opts, -1 after a message naming a
 * bad value ("iopt-bench WHO: --name 'V': ..."). bench_parse() is a loop
 * of it; bench_simrun_main() takes the --sim options out with it.
 */
int bench_take_opt(const char *who, const struct bench_opt *opts, int argc,
		   char **argv, int *i);
/* Parse "123", "64k", "2m", "1g" into a number; false if malformed or
 * past 2^64 - 1. */
bool bench_parse_size(const char *s, uint64_t *out);
bool bench_is_pow2(uint64_t v);

/* Setup: calloc(n, size), or end the program with a message and exit 1. */
void *bench_calloc(size_t n, size_t size);
/* Setup: a library call's result; a negative errno ends the program with
 * "iopt-bench: WHAT: error" and exit 1. */
void bench_must(int err, const char *what);

int bench_pgtable_main(int argc, char **argv);
int bench_smmu_main(int argc, char **argv);
int bench_iova_main(int argc, char **argv);
int bench_dma_main(int argc, char **argv);
int bench_workload_main(int argc, char **argv);
int bench_sim_main(int argc, char **argv);
int bench_host_main(int argc, char **argv);
int bench_repro_main(int argc, char **argv);

#endif
