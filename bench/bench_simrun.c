/* SPDX-License-Identifier: MIT */
/*
 * Running a suite on simulated CPUs: `iopt-bench SUITE --sim N [--seed S]
 * [--sim-mem sc|tso] [--sim-ipc X] [options]` (--sim-ipc: iopt_sim_params.ipc).
 *
 * iopt-bench (host library) finds --sim and execs iopt-bench-sim from its
 * own directory with the same arguments (iopt_bench.c). iopt-bench-sim
 * (the same bench sources on the simulation library) strips the
 * simulation's options, gives the suite --threads N (pgtable, iova, smmu)
 * and --runs 1 (pgtable, iova: a simulated run is deterministic) unless
 * the command line has them, and runs the suite as simulated CPU 0 of a simulation with that
 * seed: the suite's
 * workers, started with plat_thread_start(), are further simulated CPUs,
 * and bench_now_ns() reads simulated time, so every time figure a suite
 * prints is simulated ns per operation and operations per simulated
 * second. Every JSON line the suite prints gains
 *   "sim_cpus":N,"sim_threads":N,"seed":S,"sim_mem":"sc|tso",
 *   "trace_hash":"<hex>","sim_instructions":I,"sim_ops_per_host_sec":X,
 *   "sim_insns_per_host_sec":Z,"host_s":Y
 * where trace_hash is the simulation's running hash of the interleaving
 * and its cycle counts when the line was printed (the same command
 * prints the same hashes), sim_instructions the instructions charged so
 * far on all CPUs (setup included), sim_threads the software threads
 * (one per CPU), and the last three the engine's speed over the host
 * time since the previous JSON line.
 *
 * The dma suite differs: it gets --threads N but no --runs, and runs on the
 * simulation's host context (outside any run), because it attaches its SMMU
 * model to the simulation (iopt_sim_attach_smmuv3(), which a simulated CPU may
 * not call; bench_sim()) before its workers start; the workers, started from
 * the host context, are the N simulated CPUs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iopgtable/sim.h>

#include "bench.h"

static unsigned sim_cpus;	/* --sim N, 0: host */
static struct iopt_sim *sim_now;	/* the simulation; NULL on the host */

struct iopt_sim *bench_sim(void)
{
	return sim_now;
}

unsigned bench_sim_cpus(void)
{
	return sim_cpus;
}

/*
 * IOPT_BENCH_ITERS_DIV=D (environment) divides by D instead, on the host
 * as on the simulation: the same iteration counts on both, for an
 * instruction count of the host run under callgrind to set beside the
 * simulation's (docs/sim.md, "Calibration").
 */
long bench_iters(long n, long div)
{
	const char *e = getenv("IOPT_BENCH_ITERS_DIV");

	if (e && *e)
		div = strtol(e, NULL, 10);
	else if (!sim_cpus)
		return n;
	if (div <= 1)
		return n;
	return n / div > 0 ? n / div : 1;
}

bool bench_wants_sim(int argc, char **argv)
{
	/* The sim suite runs simulations of its own: its --sim N is its
	 * CPU count. */
	if (argc > 1 && !strcmp(argv[1], "sim"))
		return false;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--sim") || !strncmp(argv[i], "--sim=", 6))
			return true;
	return false;
}

#ifdef IOPT_PLATFORM_SIM

static struct {
	struct iopt_sim *sim;
	uint64_t seed;
	const char *mem;
	FILE *out;		/* the real stdout */
	char line[1 << 16];
	size_t len;
	uint64_t last_ops, last_insns;
	double last_host;
} sr;

static double host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A whole line: a JSON object gains the simulation's fields. */
static void sr_line(void)
{
	char *s = sr.line;
	size_t n = sr.len;

	if (n >= 2 && s[0] == '{' && s[n - 2] == '}' && s[n - 1] == '\n') {
		struct iopt_sim_stats st;
		double now = host_now(), dt = now - sr.last_host;

		iopt_sim_stats(sr.sim, &st);
		fwrite(s, 1, n - 2, sr.out);
		fprintf(sr.out, ",\"sim_cpus\":%u,\"sim_threads\":%u,\"seed\":%llu,"
			"\"sim_mem\":\"%s\",\"trace_hash\":\"%016llx\","
			"\"sim_instructions\":%llu,\"sim_ops_per_host_sec\":%.0f,"
			"\"sim_insns_per_host_sec\":%.0f,\"host_s\":%.3f}\n",
			sim_cpus, sim_cpus, (unsigned long long)sr.seed, sr.mem,
			(unsigned long long)st.trace_hash,
			(unsigned long long)st.instructions,
			dt > 0 ? (double)(st.total_ops - sr.last_ops) / dt : 0.0,
			dt > 0 ? (double)(st.instructions - sr.last_insns) / dt : 0.0,
			dt);
		sr.last_ops = st.total_ops;
		sr.last_insns = st.instructions;
		sr.last_host = now;
	} else {
		fwrite(s, 1, n, sr.out);
	}
	sr.len = 0;
}

static ssize_t sr_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	for (size_t i = 0; i < size; i++) {
		if (sr.len == sizeof(sr.line))
			sr_line();	/* too long for JSON: pass it on */
		sr.line[sr.len++] = buf[i];
		if (buf[i] == '\n')
			sr_line();
	}
	fflush(sr.out);
	return (ssize_t)size;
}

struct sr_run {
	int argc;
	char **argv;
	bench_dispatch_fn dispatch;
	int ret;
};

static void sr_cpu0(unsigned cpu, void *arg)
{
	struct sr_run *r = arg;

	(void)cpu;
	r->ret = r->dispatch(r->argc, r->argv);
	fflush(stdout);
}

static bool has_opt(int argc, char **argv, const char *name)
{
	size_t l = strlen(name);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], name, l) && (!argv[i][l] || argv[i][l] == '='))
			return true;
	return false;
}

int bench_simrun_main(int argc, char **argv, bench_dispatch_fn dispatch)
{
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	/* A fixed size: an allocation that grew with argc would move every
	 * later heap object, so the same run with one option more (or
	 * spelled out at its default) would share other cache lines and
	 * print another trace hash. */
	enum { SR_MAX_ARGS = 512 };
	char **av = argc + 8 <= SR_MAX_ARGS ? calloc(SR_MAX_ARGS, sizeof(char *)) : NULL;
	static const char *const mem_names[] = { "sc", "tso", NULL };
	static const char *const sched_names[] = { "random", "pct", NULL };
	char nbuf[16];
	int ac = 0, err;
	unsigned mem = 0, sched_k = 0;
	bool hot = false;
	const struct bench_opt opts[] = {
		{ "sim", BENCH_UINT, &sim_cpus, .min = 1,
		  .max = IOPT_SIM_MAX_CPUS - 1 },
		{ "seed", BENCH_U64, &p.seed, .max = UINT64_MAX },
		{ "sim-mem", BENCH_CHOICE, &mem, .choices = mem_names },
		{ "sim-sched", BENCH_CHOICE, &sched_k, .choices = sched_names },
		{ "sim-hot", BENCH_FLAG, &hot, .help = "" },
		{ "sim-ipc", BENCH_REAL, &p.ipc, .lo = 0, .hi = 64 },
		{ 0 },
	};
	const char *who = argc > 1 ? argv[1] : "";

	if (!av) {
		fprintf(stderr, "iopt-bench-sim: too many arguments or no memory\n");
		return 2;
	}
	iopt_sim_params_default(&p);
	/* The simulation's options out, the suite's passed on. */
	for (int i = 0; i < argc; i++) {
		int r = bench_take_opt(who, opts, argc, argv, &i);

		if (r < 0) {
			free(av);
			return 2;
		}
		if (!r)
			av[ac++] = argv[i];
	}
	sr.mem = mem_names[mem];
	const char *sched = sched_names[sched_k];

	/* The suite's workers are the N CPUs; it runs one pass. */
	snprintf(nbuf, sizeof(nbuf), "%u", sim_cpus);
	bool on_host = ac > 1 && !strcmp(av[1], "dma");

	bool has_runs = ac > 1 && (!strcmp(av[1], "pgtable") ||
				   !strcmp(av[1], "iova"));

	if (ac > 1 && (has_runs || on_host || !strcmp(av[1], "smmu")) &&
	    !has_opt(ac, av, "--threads")) {
		av[ac++] = "--threads";
		av[ac++] = nbuf;
	}
	if (has_runs && !has_opt(ac, av, "--runs")) {
		av[ac++] = "--runs";
		av[ac++] = "1";
	}
	av[ac] = NULL;
	sr.seed = p.seed;
	p.cpus = 1;		/* the suite; its workers join as they start */
	p.memmodel = strcmp(sr.mem, "tso") ? IOPT_SIM_SC : IOPT_SIM_TSO;
	p.sched = strcmp(sched, "pct") ? IOPT_SIM_SCHED_RANDOM : IOPT_SIM_SCHED_PCT;
	p.stack_bytes = 4u << 20;	/* the suite's main runs on CPU 0 */
	err = iopt_sim_create(&p, &sr.sim);
	if (err) {
		fprintf(stderr, "iopt-bench-sim: iopt_sim_create: %s\n", strerror(-err));
		return 1;
	}
	/* Our stdout adds the simulation's fields to JSON lines. */
	sr.out = stdout;
	stdout = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = sr_write });
	setvbuf(stdout, NULL, _IONBF, 0);
	sr.last_host = host_now();

	struct sr_run run = { ac, av, dispatch, 0 };

	sim_now = sr.sim;
	if (on_host) {
		/* Its workers are started from here into sr.sim (the ambient
		 * simulation: the newest live one). */
		run.ret = dispatch(ac, av);
		err = 0;
	} else {
		err = iopt_sim_run(sr.sim, sr_cpu0, &run);
	}
	fflush(stdout);
	stdout = sr.out;
	iopt_sim_stats(sr.sim, &st);
	fprintf(stderr, "iopt-bench-sim: %u worker CPUs (%u ran), seed %llu, "
		"%s, %s: %llu platform operations, %llu instructions, %llu "
		"switches, %.0f simulated "
		"us, trace hash %016llx, %.2f host s, %.0f operations per host "
		"second%s\n", sim_cpus, st.cpus, (unsigned long long)p.seed,
		sr.mem, sched, (unsigned long long)st.total_ops,
		(unsigned long long)st.instructions,
		(unsigned long long)st.switches,
		(double)st.end_cycles / p.cpu_ghz / 1e3,
		(unsigned long long)st.trace_hash, st.host_s,
		st.host_s > 0 ? (double)st.total_ops / st.host_s : 0.0,
		err ? " (deadlock)" : "");
	/* --sim-hot: the most contended lines, each with its last writer
	 * as object file + offset (addr2line -f -e FILE OFFSET). */
	for (unsigned i = 0; hot && i < sizeof(st.hot) / sizeof(st.hot[0]); i++) {
		const struct iopt_sim_line_stat *h = &st.hot[i];
		Dl_info di = { 0 };

		if (!h->transfers)
			break;
		if (h->last_writer_pc && !dladdr(h->last_writer_pc, &di))
			di.dli_fname = NULL;
		fprintf(stderr, "iopt-bench-sim: hot line %d: %llu transfers, %llu "
			"cycles queued, last writer %s+0x%llx\n", (int)i,
			(unsigned long long)h->transfers,
			(unsigned long long)h->wait_cycles,
			di.dli_fname ? di.dli_fname : "?",
			(unsigned long long)((uintptr_t)h->last_writer_pc -
					     (uintptr_t)di.dli_fbase));
	}
	sim_now = NULL;
	iopt_sim_destroy(sr.sim);
	free(av);
	return err ? 1 : run.ret;
}

#endif
