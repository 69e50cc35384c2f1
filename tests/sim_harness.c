/* SPDX-License-Identifier: MIT */
/*
 * main() of every _sim test (tests/CMakeLists.txt, iopt_add_sim_test()):
 * the test's own main() is compiled as iopt_sim_test_main() and runs on
 * simulated CPUs (its plat_thread_start()/plat_thread_join() create them
 * and run the simulation; iopgtable/sim.h, docs/sim.md "Concurrency
 * testing").
 *
 * One run: with IOPT_SIM_SEED set, create the simulation from
 *   IOPT_SIM_SEED   the seed
 *   IOPT_SIM_MEM    sc (default) or tso
 *   IOPT_SIM_SCHED  random (default) or pct
 *   IOPT_SIM_CPUS   the worker threads the test starts (tu_threads())
 *   IOPT_SIM_PCT_DEPTH, IOPT_SIM_PCT_STEPS  PCT's bug depth d and expected
 *                   operation count k (default: the engine's)
 * run the test body once, print the trace hash, and exit with its status.
 * That is the replay command a failing sweep prints.
 *
 * A sweep (no IOPT_SIM_SEED): IOPT_SIM_SEEDS runs (default 16), run i with
 * seed IOPT_SIM_SEED0 + i (default 1), cycling fastest through the memory
 * models of IOPT_SIM_MEM_LIST (default "sc,tso"), then the schedulers of
 * IOPT_SIM_SCHED_LIST (default "random,pct"), then the CPU counts of
 * IOPT_SIM_CPU_LIST (default "2,4,8,16"), so that every combination comes
 * up. Each run is the program itself run again (fork and exec: exactly
 * what the replay command runs, since the simulation's costs depend on
 * where the heap places things) with its output kept aside and a time
 * limit (IOPT_SIM_TIMEOUT_S, default 120 s). With
 * IOPT_SIM_EXPECT=race the sweep looks for a planted race: it passes at
 * the first run whose test exits with TU_RACE_EXIT (its checker found the
 * race) and fails if none does; otherwise every run must pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iopgtable/sim.h>

#include "sim_harness.h"

#define TU_RACE_EXIT 3
#define MAX_CPU_LIST 16

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static const char *env_str(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* One run, in this process, with the parameters in the environment. */
static int run_one(void)
{
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct iopt_sim *sim;
	int ret, err;

	iopt_sim_params_default(&p);
	p.seed = env_u64("IOPT_SIM_SEED", 1);
	p.memmodel = strcmp(env_str("IOPT_SIM_MEM", "sc"), "tso") ? IOPT_SIM_SC
								   : IOPT_SIM_TSO;
	p.sched = strcmp(env_str("IOPT_SIM_SCHED", "random"), "pct")
			  ? IOPT_SIM_SCHED_RANDOM : IOPT_SIM_SCHED_PCT;
	p.cpus = (unsigned)env_u64("IOPT_SIM_CPUS", p.cpus);
	p.pct_depth = (unsigned)env_u64("IOPT_SIM_PCT_DEPTH", p.pct_depth);
	p.pct_steps = env_u64("IOPT_SIM_PCT_STEPS", p.pct_steps);
	err = iopt_sim_create(&p, &sim);
	if (err) {
		fprintf(stderr, "sim harness: iopt_sim_create: %s\n", strerror(-err));
		return 1;
	}
	/* The newest simulation is the ambient one the test's threads join. */
	ret = iopt_sim_test_main();
	iopt_sim_stats(sim, &st);
	printf("sim: seed %llu mem %s sched %s cpus %u: %u CPUs ran, %llu ops, "
	       "%llu switches, trace hash %016llx, %.2f host s\n",
	       (unsigned long long)p.seed, env_str("IOPT_SIM_MEM", "sc"),
	       env_str("IOPT_SIM_SCHED", "random"), p.cpus, st.cpus,
	       (unsigned long long)st.total_ops,
	       (unsigned long long)st.switches,
	       (unsigned long long)st.trace_hash, st.host_s);
	fflush(stdout);
	iopt_sim_destroy(sim);
	return ret;
}

struct cfg {
	uint64_t seed;
	const char *mem, *sched;
	unsigned cpus;
};

static void print_replay(FILE *f, const struct cfg *c, const char *prog)
{
	static const char *const keep[] = { "IOPT_STRESS_OPS", "IOPT_SIM_PCT_DEPTH",
					    "IOPT_SIM_PCT_STEPS" };

	fprintf(f, "  replay: IOPT_SIM_SEED=%llu IOPT_SIM_MEM=%s "
		"IOPT_SIM_SCHED=%s IOPT_SIM_CPUS=%u",
		(unsigned long long)c->seed, c->mem, c->sched, c->cpus);
	for (unsigned i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (getenv(keep[i]))
			fprintf(f, " %s=%s", keep[i], getenv(keep[i]));
	fprintf(f, " %s\n", prog);
}

static void dump(FILE *out, FILE *from)
{
	char buf[4096];
	size_t n;
	long size;

	fflush(from);
	fseek(from, 0, SEEK_END);
	size = ftell(from);
	/* The end is what matters: at most the last 16 KiB. */
	fseek(from, size > 16384 ? size - 16384 : 0, SEEK_SET);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		fwrite(buf, 1, n, out);
}

/* Run c in a child. Returns its exit status, 128 + signal, or -1 (timeout). */
static int run_child(const struct cfg *c, double timeout, FILE *log,
		     const char *prog)
{
	char seed[32], cpus[16];
	pid_t pid;
	int status;
	double t0 = now_s();

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("sim harness: fork");
		exit(1);
	}
	if (pid == 0) {
		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)c->seed);
		snprintf(cpus, sizeof(cpus), "%u", c->cpus);
		setenv("IOPT_SIM_SEED", seed, 1);
		setenv("IOPT_SIM_MEM", c->mem, 1);
		setenv("IOPT_SIM_SCHED", c->sched, 1);
		setenv("IOPT_SIM_CPUS", cpus, 1);
		dup2(fileno(log), 1);
		dup2(fileno(log), 2);
		/* A fresh program, exactly as the replay command runs it: the
		 * simulation's costs depend on where the heap puts things. */
		execl("/proc/self/exe", prog, (char *)NULL);
		perror("sim harness: exec");
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			perror("sim harness: waitpid");
			exit(1);
		}
		if (now_s() - t0 > timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Split a comma list of words into out[] (at most max); returns the count. */
static unsigned words(char *buf, const char **out, unsigned max)
{
	unsigned n = 0;

	for (char *tok = strtok(buf, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

static int sweep(const char *prog)
{
	const char *mems[2], *scheds[2], *cpuw[MAX_CPU_LIST];
	unsigned list[MAX_CPU_LIST], nlist = 0, nm, ns;
	char cpu_list[128], mem_list[32], sched_list[32];
	uint64_t seeds = env_u64("IOPT_SIM_SEEDS", 16);
	uint64_t seed0 = env_u64("IOPT_SIM_SEED0", 1);
	double timeout = (double)env_u64("IOPT_SIM_TIMEOUT_S", 120);
	bool expect_race = !strcmp(env_str("IOPT_SIM_EXPECT", "none"), "race");
	double t0 = now_s();
	unsigned per_mem[2] = { 0, 0 }, nw;

	snprintf(cpu_list, sizeof(cpu_list), "%s",
		 env_str("IOPT_SIM_CPU_LIST", "2,4,8,16"));
	snprintf(mem_list, sizeof(mem_list), "%s",
		 env_str("IOPT_SIM_MEM_LIST", "sc,tso"));
	snprintf(sched_list, sizeof(sched_list), "%s",
		 env_str("IOPT_SIM_SCHED_LIST", "random,pct"));
	nw = words(cpu_list, cpuw, MAX_CPU_LIST);
	for (unsigned k = 0; k < nw; k++)
		if (atoi(cpuw[k]) > 0)
			list[nlist++] = (unsigned)atoi(cpuw[k]);
	nm = words(mem_list, mems, 2);
	ns = words(sched_list, scheds, 2);
	for (unsigned k = 0; k < nm; k++)
		if (strcmp(mems[k], "sc") && strcmp(mems[k], "tso"))
			nm = 0;
	for (unsigned k = 0; k < ns; k++)
		if (strcmp(scheds[k], "random") && strcmp(scheds[k], "pct"))
			ns = 0;
	if (!nlist || !nm || !ns) {
		fprintf(stderr, "sim harness: bad IOPT_SIM_CPU_LIST, "
			"IOPT_SIM_MEM_LIST or IOPT_SIM_SCHED_LIST\n");
		return 1;
	}

	for (uint64_t i = 0; i < seeds; i++) {
		struct cfg c = {
			.seed = seed0 + i,
			.mem = mems[i % nm],
			.sched = scheds[(i / nm) % ns],
			.cpus = list[(i / (nm * ns)) % nlist],
		};
		FILE *log = tmpfile();

		if (!log) {
			perror("sim harness: tmpfile");
			return 1;
		}
		int st = run_child(&c, timeout, log, prog);

		per_mem[strcmp(c.mem, "sc") != 0]++;
		if (expect_race && st == TU_RACE_EXIT) {
			dump(stdout, log);
			printf("sim sweep: race found by run %llu of %llu (seed %llu, "
			       "mem %s, sched %s, %u CPUs; %u sc and %u tso runs "
			       "so far), %.1f s\n",
			       (unsigned long long)(i + 1),
			       (unsigned long long)seeds,
			       (unsigned long long)c.seed, c.mem, c.sched, c.cpus,
			       per_mem[0], per_mem[1], now_s() - t0);
			print_replay(stdout, &c, prog);
			fclose(log);
			return 0;
		}
		if (st != 0) {
			dump(stderr, log);
			if (st < 0)
				fprintf(stderr, "sim sweep: run %llu timed out after "
					"%.0f s\n", (unsigned long long)(i + 1),
					timeout);
			else if (st > 128)
				fprintf(stderr, "sim sweep: run %llu killed by signal "
					"%d\n", (unsigned long long)(i + 1), st - 128);
			fprintf(stderr, "sim sweep: FAILED (status %d) at seed %llu, "
				"mem %s, sched %s, %u CPUs\n", st,
				(unsigned long long)c.seed, c.mem, c.sched, c.cpus);
			print_replay(stderr, &c, prog);
			fclose(log);
			return 1;
		}
		fclose(log);
	}
	printf("sim sweep: %llu runs (seeds %llu..%llu, memory %s, scheduler "
	       "%s, CPUs %s) %s, %.1f s\n", (unsigned long long)seeds,
	       (unsigned long long)seed0, (unsigned long long)(seed0 + seeds - 1),
	       env_str("IOPT_SIM_MEM_LIST", "sc,tso"),
	       env_str("IOPT_SIM_SCHED_LIST", "random,pct"),
	       env_str("IOPT_SIM_CPU_LIST", "2,4,8,16"),
	       expect_race ? "found no race" : "all passed", now_s() - t0);
	return expect_race ? 1 : 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("IOPT_SIM_SEED"))
		return run_one();
	return sweep(argv[0]);
}
