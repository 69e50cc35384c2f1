/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench sim: the simulation engine's own speed (docs/sim.md, "Engine
 * speed"). Runs in iopt-bench-sim, the benchmarks linked against the
 * simulation build; the host iopt-bench hands `sim` (and any --sim run)
 * over to it.
 *
 * Cases:
 *   switch   the coroutine switch alone: two contexts handing over, ns
 *   ops      simulated platform operations per host second: N CPUs each
 *            doing loads, stores and RMWs on private and shared lines
 *   pgtable  N CPUs (default 64) each mapping and unmapping 10^4 pages of
 *            one LPAE page table: host seconds, the engine's speed, the
 *            simulated time per operation and the trace hash
 *   locks    N CPUs (default 8) each taking one lock 2000 times, per kind
 *            (tas, ttas, ticket, mcs; src/platform/plat_lock.h): handoffs
 *            per simulated microsecond, the lock line's transfers per
 *            acquisition and the longest run of acquisitions by one CPU
 *            while others waited (1 for a FIFO lock)
 * Every case prints one JSON object per line with --json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/sim.h>

#include "bench.h"

#ifdef IOPT_PLATFORM_SIM

#include "../src/platform/platform.h"
#include "../src/platform/plat_lock.h"
#include "../src/sim/sim_ctx.h"

static bool json;

/* ---- switch ---------------------------------------------------------------- */

static struct sim_ctx sw_main, sw_a, sw_b;
static uint64_t sw_left;

static void sw_entry(void *arg)
{
	struct sim_ctx *self = arg, *other = self == &sw_a ? &sw_b : &sw_a;

	for (;;) {
		if (!sw_left--)
			sim_ctx_switch(self, &sw_main);
		else
			sim_ctx_switch(self, other);
	}
}

static void case_switch(void)
{
	enum { STACK = 64 * 1024 };
	static char sa[STACK] __attribute__((aligned(64)));
	static char sb[STACK] __attribute__((aligned(64)));
	uint64_t n = 10000000, t0, t1;

	sim_ctx_init(&sw_a, sa, STACK, sw_entry, &sw_a);
	sim_ctx_init(&sw_b, sb, STACK, sw_entry, &sw_b);
	sw_left = n;
	t0 = bench_now_ns();
	sim_ctx_switch(&sw_main, &sw_a);
	t1 = bench_now_ns();
	double ns = (double)(t1 - t0) / (double)n;

	if (json)
		printf("{\"suite\":\"sim\",\"case\":\"switch\",\"switches\":%llu,"
		       "\"ctx_switch_ns\":%.2f}\n", (unsigned long long)n, ns);
	else
		printf("switch    %.2f ns per context switch (%llu switches)\n",
		       ns, (unsigned long long)n);
}

/* ---- ops --------------------------------------------------------------------- */

struct ops_line {
	_Alignas(64) uint64_t v;
	char pad[56];
};

struct ops_arg {
	struct ops_line shared[4];
	struct ops_line *priv;
	uint64_t iters;
};

static void ops_cpu(unsigned cpu, void *p)
{
	struct ops_arg *a = p;
	uint64_t *mine = &a->priv[cpu].v;

	for (uint64_t i = 0; i < a->iters; i++) {
		uint64_t *sh = &a->shared[i & 3].v;

		plat_store_rlx64(mine, plat_load_rlx64(mine) + 1);
		(void)plat_load_acq64(sh);
		if ((i & 7) == 0)
			(void)plat_fetch_add_acq_rel64(sh, 1);
	}
}

static void print_run(const char *name, unsigned cpus, uint64_t seed,
		      const struct iopt_sim_params *p,
		      const struct iopt_sim_stats *st, uint64_t ops_done,
		      const char *extra)
{
	double rate = st->host_s > 0 ? (double)st->total_ops / st->host_s : 0;
	double sim_ns = (double)st->end_cycles / p->cpu_ghz;

	if (json)
		printf("{\"suite\":\"sim\",\"case\":\"%s\",\"sim_cpus\":%u,"
		       "\"seed\":%llu,\"memmodel\":\"%s\",\"ops\":%llu,"
		       "\"sim_ops\":%llu,\"switches\":%llu,"
		       "\"trace_hash\":\"%016llx\",\"host_s\":%.3f,"
		       "\"sim_threads\":%u,\"sim_instructions\":%llu,"
		       "\"sim_insns_per_host_sec\":%.0f,"
		       "\"sim_ops_per_host_sec\":%.0f,\"sim_ns\":%.0f,"
		       "\"sim_ns_per_op\":%.2f,\"ops_per_sim_sec\":%.0f%s}\n",
		       name, cpus, (unsigned long long)seed,
		       p->memmodel == IOPT_SIM_TSO ? "tso" : "sc",
		       (unsigned long long)ops_done,
		       (unsigned long long)st->total_ops,
		       (unsigned long long)st->switches,
		       (unsigned long long)st->trace_hash, st->host_s, cpus,
		       (unsigned long long)st->instructions,
		       st->host_s > 0 ? (double)st->instructions / st->host_s : 0,
		       rate,
		       sim_ns, ops_done ? sim_ns * cpus / (double)ops_done : 0,
		       sim_ns > 0 ? (double)ops_done / sim_ns * 1e9 : 0, extra);
	else
		printf("%-8s cpus %3u seed %llu  %llu platform ops, %llu switches "
		       "in %.2f host s: %.2f M ops/host s; trace %016llx; "
		       "%.1f simulated ns per op per CPU\n",
		       name, cpus, (unsigned long long)seed,
		       (unsigned long long)st->total_ops,
		       (unsigned long long)st->switches, st->host_s, rate / 1e6,
		       (unsigned long long)st->trace_hash,
		       ops_done ? sim_ns * cpus / (double)ops_done : 0);
}

static int case_ops(unsigned cpus, uint64_t seed, enum iopt_sim_memmodel mm)
{
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct iopt_sim *s;
	struct ops_arg *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return -ENOMEM;
	a->priv = calloc(cpus, sizeof(*a->priv));
	a->iters = 4000000 / cpus;
	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = seed;
	p.memmodel = mm;
	err = a->priv ? iopt_sim_create(&p, &s) : -ENOMEM;
	if (!err) {
		err = iopt_sim_run(s, ops_cpu, a);
		iopt_sim_stats(s, &st);
		if (!err)
			print_run("ops", cpus, seed, &p, &st,
				  st.total_ops, "");
		iopt_sim_destroy(s);
	}
	free(a->priv);
	free(a);
	return err;
}

/* ---- pgtable ---------------------------------------------------------------- */

static void nf_all(void *c) { (void)c; }
static void nf_walk(uint64_t i, uint64_t s, uint64_t g, void *c)
{
	(void)i; (void)s; (void)g; (void)c;
}
static void nf_page(struct iopt_pgtable_gather *gt, uint64_t i, uint64_t g, void *c)
{
	(void)gt; (void)i; (void)g; (void)c;
}
static const struct iopt_pgtable_tlb_ops nf_tlb = {
	.flush_all = nf_all, .flush_walk = nf_walk, .add_page = nf_page,
};

struct pg_arg {
	struct iopt_pgtable *pt;
	uint64_t pages;
	uint64_t errors;
};

static void pg_cpu(unsigned cpu, void *p)
{
	struct pg_arg *a = p;
	struct iopt_pgtable_gather g;
	/* Each CPU its own 1 GiB of IOVA: its own leaf tables, shared upper
	 * levels (as per-CPU IOVA caches hand out). */
	uint64_t base = (uint64_t)(cpu + 1) << 30;

	iopt_pgtable_gather_init(&g);
	for (uint64_t i = 0; i < a->pages; i++) {
		uint64_t va = base + i * 4096;

		if (iopt_pgtable_map_pages(a->pt, va, va, 4096, 1,
					   IOPT_READ | IOPT_WRITE, NULL))
			a->errors++;
		if (iopt_pgtable_unmap_pages(a->pt, va, 4096, 1, &g) != 4096)
			a->errors++;
	}
}

static int case_pgtable(unsigned cpus, uint64_t seed, uint64_t pages,
			enum iopt_sim_memmodel mm)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = 48, .coherent_walk = true, .tlb = &nf_tlb,
	};
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct iopt_sim *s;
	struct pg_arg a = { .pages = pages };
	char extra[160];
	int err;

	err = iopt_pgtable_alloc(&cfg, &a.pt);
	if (err)
		return err;
	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = seed;
	p.memmodel = mm;
	err = iopt_sim_create(&p, &s);
	if (!err) {
		err = iopt_sim_run(s, pg_cpu, &a);
		iopt_sim_stats(s, &st);
		if (!err && a.errors)
			err = -EIO;
		snprintf(extra, sizeof(extra),
			 ",\"pages_per_cpu\":%llu,\"hot_line_wait_cycles\":%llu",
			 (unsigned long long)pages,
			 (unsigned long long)st.hot[0].wait_cycles);
		if (!err)
			print_run("pgtable", cpus, seed, &p, &st,
				  2 * pages * cpus, extra);
		for (unsigned i = 0; !err && !json && i < 4 && st.hot[i].line; i++)
			printf("  hot line %d: %llu transfers, %llu cycles queued, "
			       "last writer at %p\n", i,
			       (unsigned long long)st.hot[i].transfers,
			       (unsigned long long)st.hot[i].wait_cycles,
			       st.hot[i].last_writer_pc);
		iopt_sim_destroy(s);
	}
	iopt_pgtable_free(a.pt);
	return err;
}

/* ---- locks ------------------------------------------------------------------ */

struct lk_arg {
	_Alignas(64) struct plat_lock lock;
	_Alignas(64) unsigned last;	/* plain, under the lock: last holder */
	unsigned streak, longest;	/* same holder in a row */
	uint64_t waiting;		/* CPUs between arrival and acquisition */
	unsigned rounds;
};

static void lk_cpu(unsigned cpu, void *p)
{
	struct lk_arg *a = p;

	for (unsigned i = 0; i < a->rounds; i++) {
		plat_fetch_add_rlx64(&a->waiting, 1);
		plat_lock(&a->lock);
		plat_fetch_sub_rel64(&a->waiting, 1);
		/* A run counts only while another CPU waits for the lock. */
		if (a->last == cpu + 1 && plat_load_rlx64(&a->waiting))
			a->streak++;
		else
			a->streak = 1;
		if (a->streak > a->longest)
			a->longest = a->streak;
		a->last = cpu + 1;
		iopt_sim_work(100);
		plat_unlock(&a->lock);
		iopt_sim_work(50);
	}
}

static int case_locks(unsigned cpus, uint64_t seed, enum iopt_sim_memmodel mm)
{
	static const char *const names[] = { "", "tas", "ttas", "ticket", "mcs" };
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct iopt_sim *s;
	struct lk_arg *a = aligned_alloc(64, sizeof(*a));
	int err = a ? 0 : -ENOMEM;

	for (unsigned k = PLAT_LOCK_TAS; !err && k <= PLAT_LOCK_MCS; k++) {
		uint64_t acq, moved = 0;
		bool listed = false;
		double sim_ns;
		char line[64];

		memset(a, 0, sizeof(*a));
		plat_lock_init(&a->lock, (enum plat_lock_kind)k);
		a->rounds = 2000;
		iopt_sim_params_default(&p);
		p.cpus = cpus;
		p.seed = seed;
		p.memmodel = mm;
		err = iopt_sim_create(&p, &s);
		if (err)
			break;
		err = iopt_sim_run(s, lk_cpu, a);
		iopt_sim_stats(s, &st);
		iopt_sim_destroy(s);
		if (err)
			break;
		/* A line not among the hottest moved at most as often as the
		 * least hot listed: then only that bound is known. */
		for (unsigned i = 0; i < 8 && st.hot[i].line; i++) {
			moved = st.hot[i].transfers;
			if (st.hot[i].line == (uintptr_t)&a->lock) {
				listed = true;
				break;
			}
		}
		acq = (uint64_t)cpus * a->rounds;
		sim_ns = (double)st.end_cycles / p.cpu_ghz;
		snprintf(line, sizeof(line), json ? "%.3f" : "%.2f",
			 (double)moved / (double)acq);
		if (json)
			printf("{\"suite\":\"sim\",\"case\":\"locks\","
			       "\"kind\":\"%s\",\"sim_cpus\":%u,\"seed\":%llu,"
			       "\"memmodel\":\"%s\",\"acquisitions\":%llu,"
			       "\"sim_ns\":%.0f,\"handoffs_per_sim_us\":%.3f,"
			       "\"lock_line_transfers_per_acq\":%s%s%s,"
			       "\"longest_run\":%u}\n", names[k], cpus,
			       (unsigned long long)seed,
			       mm == IOPT_SIM_TSO ? "tso" : "sc",
			       (unsigned long long)acq, sim_ns,
			       sim_ns > 0 ? (double)acq / sim_ns * 1e3 : 0,
			       listed ? "" : "{\"at_most\":", line,
			       listed ? "" : "}", a->longest);
		else
			printf("locks %-6s cpus %3u: %.3f handoffs per simulated us, "
			       "lock line moved %s%s times per acquisition, "
			       "longest run %u\n", names[k], cpus,
			       sim_ns > 0 ? (double)acq / sim_ns * 1e3 : 0,
			       listed ? "" : "at most ", line, a->longest);
	}
	free(a);
	return err;
}

static const struct bench_case sim_cases[] = {
	{ "switch", "the coroutine switch alone: ns per switch" },
	{ "ops", "simulated platform operations per host second: N CPUs\n"
	  "(8) each doing loads, stores and RMWs" },
	{ "pgtable", "N CPUs (64) each mapping and unmapping --pages pages of\n"
	  "one LPAE page table" },
	{ "locks", "N CPUs (8) each taking one lock 2000 times, per lock kind:\n"
	  "handoff rate, lock-line transfers, longest run by one CPU" },
	{ 0 },
};

int bench_sim_main(int argc, char **argv)
{
	const char *only = NULL;
	unsigned cpus = 0;
	uint64_t seed = 1, pages = 10000;
	bool tso = false;
	enum iopt_sim_memmodel mm = IOPT_SIM_SC;
	int status, err = 0;
	const struct bench_opt opts[] = {
		{ "sim", BENCH_UINT, &cpus, "N", "simulated CPUs (ops, locks: 8, "
		  "pgtable: 64)",
		  .min = 1, .max = IOPT_SIM_MAX_CPUS },
		{ "seed", BENCH_U64, &seed, "S", "the simulation's seed (1)",
		  .max = UINT64_MAX },
		{ "tso", BENCH_FLAG, &tso, .help = "TSO memory (default: SC)" },
		/* Each CPU maps in its own 1 GiB (pg_cpu()). */
		{ "pages", BENCH_U64, &pages, "N", "pages each CPU maps and unmaps "
		  "(pgtable; 10000)", .min = 1, .max = 1u << 18 },
		{ "json", BENCH_FLAG, &json, .help = "one JSON object per line" },
		{ 0 },
	};
	const struct bench_cli cli = {
		.suite = "sim",
		.about = "The simulation engine's own speed (docs/sim.md, \"Engine "
			 "speed\"); runs in\niopt-bench-sim, to which iopt-bench "
			 "hands it.",
		.opts = opts, .cases = sim_cases, .only = &only, .no_sim = true,
	};

	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	if (tso)
		mm = IOPT_SIM_TSO;
	if (!only || !strcmp(only, "switch"))
		case_switch();
	if (!err && (!only || !strcmp(only, "ops")))
		err = case_ops(cpus ? cpus : 8, seed, mm);
	if (!err && (!only || !strcmp(only, "pgtable")))
		err = case_pgtable(cpus ? cpus : 64, seed, pages, mm);
	if (!err && (!only || !strcmp(only, "locks")))
		err = case_locks(cpus ? cpus : 8, seed, mm);
	if (err) {
		fprintf(stderr, "sim: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

#else /* the host build: the simulation suite lives in iopt-bench-sim */

int bench_sim_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "sim: this iopt-bench is the host build; run "
		"iopt-bench-sim (built beside it when sanitizers are off)\n");
	return 2;
}

#endif
