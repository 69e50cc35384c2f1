/* SPDX-License-Identifier: MIT */
/*
 * Running a suite on simulated CPUs: `iopt-bench SUITE --sim N [--seed S]
 * [--sim-mem sc|tso] [--sim-ipc X] [--sim-platform NAME] [--sim-param N=V]...
 * [--smmu-preset NAME] [--smmu-param N=V]... [options]` (--sim-ipc:
 * iopt_sim_params.ipc).
 *
 * Parameters (docs/sim.md, "Platforms"): the engine's start from
 * iopt_sim_params_default() with stack_bytes 4 MiB (the suite's main runs
 * on CPU 0), then --sim-platform NAME (iopt_sim_platform_apply()), then
 * every --sim-param name=value in command-line order
 * (iopt_sim_param_set()), then --seed, --sim-mem, --sim-sched and
 * --sim-ipc where given; cpus is --sim N's and cannot be set. The SMMU
 * models' start from iopt_sim_smmu_params_default() (the testbed's
 * defaults), then --smmu-preset NAME, then every --smmu-param; the suites
 * that create a model through the testbed copy them into their
 * configuration right after iopt_testbed_default_cfg()
 * (bench_model_params()), so a suite's own options (dma --no-sev, say)
 * still apply over them. Each of these options prints what it changed
 * on stderr; an unknown name or a bad value ends the program with exit 2
 * and a message naming it.
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
 *   "sim_insns_per_host_sec":Z,"host_s":Y,"sim_preemptions":P,
 *   "sim_interrupts":Q,"sim_params":"<hex>"
 * where trace_hash is the simulation's running hash of the interleaving
 * and its cycle counts when the line was printed (the same command
 * prints the same hashes), sim_instructions the instructions charged so
 * far on all CPUs (setup included), sim_threads the suite's worker
 * threads (--threads; with more threads than CPUs they share the CPUs,
 * params.share_cpus, else each has its own), sim_preemptions and
 * sim_interrupts the time slices that ended with a thread waiting and
 * the interrupt handlers run so far, and the three speed figures over
 * the host time since the previous JSON line; sim_params is
 * iopt_sim_smmu_params_hash(models, iopt_sim_params_hash(engine)) of the
 * parameters in force (the same for the same parameters in every process).
 *
 * The dma suite differs: it gets --threads N but no --runs, and runs on the
 * simulation's host context (outside any run), because it attaches its SMMU
 * model to the simulation (iopt_sim_attach_smmuv3(), which a simulated CPU may
 * not call; bench_sim()) before its workers start; the workers, started from
 * the host context, are the N simulated CPUs. The workload suite runs on
 * the host context too (a workload model's run is an
 * iopt_sim_run_threads(), which only the host context may call), gets no
 * --threads, and its simulation has the N CPUs from the start (the models
 * run on the simulation's CPUs).
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
#include <iopgtable/testbed.h>

#include "bench.h"

static unsigned sim_cpus;	/* --sim N, 0: host */
static struct iopt_sim *sim_now;	/* the simulation; NULL on the host */
/*
 * The parameters in force: the SMMU models' (--smmu-preset, --smmu-param)
 * and the hash of all of them, in bench_simrun_main()'s frame while the
 * suite runs. Only a pointer here: the bench's static data keeps its
 * layout, and with it which objects share a cache line in the simulation.
 */
struct sr_params {
	struct iopt_sim_smmu_params models;
	uint64_t hash;			/* engine and models */
};
static const struct sr_params *sim_params;

void bench_model_params(struct iopt_testbed_cfg *c)
{
	if (!sim_params)
		return;
	c->v3 = sim_params->models.v3;
	c->v2 = sim_params->models.v2;
}

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
static unsigned sim_threads;	/* the suite's workers (--threads) */

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
			"\"sim_insns_per_host_sec\":%.0f,\"host_s\":%.3f,"
			"\"sim_preemptions\":%llu,\"sim_interrupts\":%llu,"
			"\"sim_params\":\"%016llx\"}\n",
			sim_cpus, sim_threads, (unsigned long long)sr.seed, sr.mem,
			(unsigned long long)st.trace_hash,
			(unsigned long long)st.instructions,
			dt > 0 ? (double)(st.total_ops - sr.last_ops) / dt : 0.0,
			dt > 0 ? (double)(st.instructions - sr.last_insns) / dt : 0.0,
			dt, (unsigned long long)st.preemptions,
			(unsigned long long)st.interrupts,
			(unsigned long long)sim_params->hash);
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

/*
 * The parameter options: --sim-platform, --sim-param, --smmu-preset,
 * --smmu-param, each "--opt V" or "--opt=V". Platforms and presets go
 * first, then the name=value settings in their order.
 */
enum sr_pkind { SR_PLATFORM, SR_PARAM, SR_SMMU_PRESET, SR_SMMU_PARAM, SR_PKINDS };

static const char *const sr_pnames[SR_PKINDS] = {
	"sim-platform", "sim-param", "smmu-preset", "smmu-param",
};

/* argv[*i] is one of them: its kind, *val its value (*i past it); -1:
 * none; -2: one without a value (message printed). */
static int sr_popt(const char *who, int argc, char **argv, int *i,
		   const char **val)
{
	const char *a = argv[*i];

	if (strncmp(a, "--", 2))
		return -1;
	for (int k = 0; k < SR_PKINDS; k++) {
		size_t l = strlen(sr_pnames[k]);

		if (strncmp(a + 2, sr_pnames[k], l))
			continue;
		if (a[2 + l] == '=') {
			*val = a + 3 + l;
			return k;
		}
		if (a[2 + l])
			continue;
		if (*i + 1 >= argc) {
			fprintf(stderr, "iopt-bench %s: --%s needs a value\n", who,
				sr_pnames[k]);
			return -2;
		}
		*val = argv[++*i];
		return k;
	}
	return -1;
}

/* Print what changed between two parameter sets, by name. */
static void sr_changes(const char *who, const char *opt, const char *val,
		       const char *(*name)(unsigned),
		       int (*get)(const void *, const char *, char *, size_t),
		       const void *before, const void *after)
{
	char b[64], a[64];
	bool any = false;

	fprintf(stderr, "iopt-bench-sim %s: --%s %s:", who, opt, val);
	for (unsigned i = 0; name(i); i++) {
		get(before, name(i), b, sizeof(b));
		get(after, name(i), a, sizeof(a));
		if (strcmp(a, b)) {
			fprintf(stderr, " %s=%s (was %s)", name(i), a, b);
			any = true;
		}
	}
	fprintf(stderr, "%s\n", any ? "" : " nothing changed");
}

static int sr_get_engine(const void *p, const char *n, char *buf, size_t len)
{
	return iopt_sim_param_get(p, n, buf, len);
}

static int sr_get_smmu(const void *m, const char *n, char *buf, size_t len)
{
	return iopt_sim_smmu_param_get(m, n, buf, len);
}

/* Apply one setting "name=value" or preset name of kind k; false after a
 * message naming the bad part. */
static bool sr_apply(const char *who, int k, const char *val,
		     struct iopt_sim_params *p, struct iopt_sim_smmu_params *m)
{
	struct iopt_sim_params p0 = *p;
	struct iopt_sim_smmu_params m0 = *m;
	const char *eq = strchr(val, '=');
	char name[64], tmp[64];
	int err;

	if (k == SR_PLATFORM || k == SR_SMMU_PRESET) {
		err = k == SR_PLATFORM ? iopt_sim_platform_apply(p, val) :
					 iopt_sim_smmu_preset(m, val);
		if (err) {
			fprintf(stderr, "iopt-bench %s: --%s '%s' is not a %s (",
				who, sr_pnames[k], val, k == SR_PLATFORM ?
				"platform" : "preset");
			for (unsigned i = 0; ; i++) {
				const char *n = k == SR_PLATFORM ?
					iopt_sim_platform_name(i) :
					iopt_sim_smmu_preset_name(i);

				if (!n)
					break;
				fprintf(stderr, "%s%s", i ? ", " : "", n);
			}
			fprintf(stderr, ")\n");
			return false;
		}
	} else {
		size_t l = eq ? (size_t)(eq - val) : 0;
		bool known;

		if (!eq || l >= sizeof(name)) {
			fprintf(stderr, "iopt-bench %s: --%s '%s' is not "
				"name=value\n", who, sr_pnames[k], val);
			return false;
		}
		memcpy(name, val, l);
		name[l] = '\0';
		if (k == SR_PARAM && !strcmp(name, "cpus")) {
			fprintf(stderr, "iopt-bench %s: --%s '%s': cpus is "
				"--sim N's\n", who, sr_pnames[k], val);
			return false;
		}
		known = (k == SR_PARAM ?
			 iopt_sim_param_get(p, name, tmp, sizeof(tmp)) :
			 iopt_sim_smmu_param_get(m, name, tmp, sizeof(tmp))) == 0;
		err = k == SR_PARAM ? iopt_sim_param_set(p, name, eq + 1) :
				      iopt_sim_smmu_param_set(m, name, eq + 1);
		if (err) {
			if (known)
				fprintf(stderr, "iopt-bench %s: --%s '%s': '%s' is "
					"not a valid value of %s (docs/sim.md, "
					"\"Parameters by name\")\n", who,
					sr_pnames[k], val, eq + 1, name);
			else
				fprintf(stderr, "iopt-bench %s: --%s '%s': no "
					"parameter '%s' (iopt-bench %s --help "
					"lists them)\n", who, sr_pnames[k], val,
					name, who);
			return false;
		}
	}
	if (k == SR_PLATFORM || k == SR_PARAM)
		sr_changes(who, sr_pnames[k], val, iopt_sim_param_name,
			   sr_get_engine, &p0, p);
	else
		sr_changes(who, sr_pnames[k], val, iopt_sim_smmu_param_name,
			   sr_get_smmu, &m0, m);
	return true;
}

/*
 * Take the parameter options out of argv (what remains in *argc, in
 * order) and apply them to p and m: 0, or 2 after a message.
 */
static int sr_take_params(const char *who, int *argc, char **argv,
		     struct iopt_sim_params *p, struct iopt_sim_smmu_params *m)
{
	const char *val;
	int n = 0;

	/* Pass 0: platforms and presets; pass 1: name=value settings. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < *argc; i++) {
			int k = sr_popt(who, *argc, argv, &i, &val);

			if (k == -2)
				return 2;
			if (k < 0)
				continue;
			if ((k == SR_PLATFORM || k == SR_SMMU_PRESET) == !pass &&
			    !sr_apply(who, k, val, p, m))
				return 2;
		}
	}
	for (int i = 0; i < *argc; i++) {
		int start = i;

		if (sr_popt(who, *argc, argv, &i, &val) < 0)
			argv[n++] = argv[start];
	}
	*argc = n;
	argv[n] = NULL;
	return 0;
}

static bool has_opt(int argc, char **argv, const char *name)
{
	size_t l = strlen(name);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], name, l) && (!argv[i][l] || argv[i][l] == '='))
			return true;
	return false;
}

/* The value of --threads N / --threads=N, or 0. */
static unsigned opt_threads(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			v = argv[i + 1];
		else if (!strncmp(argv[i], "--threads=", 10))
			v = argv[i] + 10;
		if (v)
			return (unsigned)strtoul(v, NULL, 10);
	}
	return 0;
}

int bench_simrun_main(int argc, char **argv, bench_dispatch_fn dispatch)
{
	struct iopt_sim_params p;
	struct sr_params in_force;
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
	p.stack_bytes = 4u << 20;	/* the suite's main runs on CPU 0 */
	iopt_sim_smmu_params_default(&in_force.models);
	/* The parameter options first: --sim-mem and the rest win. */
	err = sr_take_params(who, &argc, argv, &p, &in_force.models);
	if (err) {
		free(av);
		return err;
	}
	mem = p.memmodel == IOPT_SIM_TSO;
	sched_k = p.sched == IOPT_SIM_SCHED_PCT;
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
	bool workload = ac > 1 && !strcmp(av[1], "workload");
	bool on_host = ac > 1 && (!strcmp(av[1], "dma") || workload);

	bool has_runs = ac > 1 && (!strcmp(av[1], "pgtable") ||
				   !strcmp(av[1], "iova"));

	if (ac > 1 && (has_runs || (on_host && !workload) ||
			 !strcmp(av[1], "smmu")) &&
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
	sim_threads = opt_threads(ac, av);
	if (sim_threads > sim_cpus) {
		/* More workers than CPUs: they share the N CPUs under the
		 * scheduler model, the suite's thread on CPU 0. */
		p.cpus = sim_cpus;
		p.share_cpus = 1;
	} else {
		p.cpus = 1;	/* the suite; its workers join as they start */
		sim_threads = sim_cpus;
	}
	/* The workload models run their threads on the simulation's own
	 * CPUs (iopt_sim_run_threads()), as many as it was made with. */
	if (workload)
		p.cpus = sim_cpus;
	p.memmodel = strcmp(sr.mem, "tso") ? IOPT_SIM_SC : IOPT_SIM_TSO;
	p.sched = strcmp(sched, "pct") ? IOPT_SIM_SCHED_RANDOM : IOPT_SIM_SCHED_PCT;
	err = iopt_sim_create(&p, &sr.sim);
	if (err) {
		fprintf(stderr, "iopt-bench-sim: iopt_sim_create: %s\n", strerror(-err));
		return 1;
	}
	in_force.hash = iopt_sim_smmu_params_hash(&in_force.models,
						  iopt_sim_params_hash(&p));
	/* Our stdout adds the simulation's fields to JSON lines. */
	sr.out = stdout;
	stdout = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = sr_write });
	setvbuf(stdout, NULL, _IONBF, 0);
	sr.last_host = host_now();

	struct sr_run run = { ac, av, dispatch, 0 };

	sim_now = sr.sim;
	sim_params = &in_force;
	if (on_host) {
		/* Its workers are started from here into sr.sim (the ambient
		 * simulation: the newest live one). */
		run.ret = dispatch(ac, av);
		err = 0;
	} else {
		err = iopt_sim_run_threads(sr.sim, 1, sr_cpu0, &run);
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
	Dl_info self = { 0 };
	char self_path[4096] = "?";

	if (hot) {
		ssize_t n = readlink("/proc/self/exe", self_path,
				     sizeof(self_path) - 1);

		if (n > 0)
			self_path[n] = 0;
		if (!dladdr((void *)(uintptr_t)&bench_simrun_main, &self))
			self.dli_fbase = NULL;
	}
	for (unsigned i = 0; hot && i < sizeof(st.hot) / sizeof(st.hot[0]); i++) {
		const struct iopt_sim_line_stat *h = &st.hot[i];
		Dl_info di = { 0 };

		char far[48] = "";

		if (!h->transfers && !h->far_atomics)
			break;
		if (h->last_writer_pc && !dladdr(h->last_writer_pc, &di))
			di.dli_fname = NULL;
		else if (h->last_writer_pc && di.dli_fbase == self.dli_fbase)
			di.dli_fname = self_path;	/* dladdr names it by argv[0] */
		if (h->far_atomics)
			snprintf(far, sizeof(far), ", %llu far atomics",
				 (unsigned long long)h->far_atomics);
		fprintf(stderr, "iopt-bench-sim: hot line %d: %llu transfers%s, %llu "
			"cycles queued, last writer %s+0x%llx\n", (int)i,
			(unsigned long long)h->transfers, far,
			(unsigned long long)h->wait_cycles,
			di.dli_fname ? di.dli_fname : "?",
			(unsigned long long)((uintptr_t)h->last_writer_pc -
					     (uintptr_t)di.dli_fbase));
	}
	sim_now = NULL;
	sim_params = NULL;
	iopt_sim_destroy(sr.sim);
	free(av);
	return err ? 1 : run.ret;
}

#endif
