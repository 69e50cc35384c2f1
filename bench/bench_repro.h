/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench repro: the published experiments of the design brief
 * (sections 6 and 8) run on the simulation, our figure beside the
 * published one (docs/experiments.md).
 *
 * A case is one entry of repro_cases[] (bench_repro_cases.c): its
 * published rows, the set-up it runs, its sweep and one run function.
 * The harness (bench_repro.c) turns a case into points, point 0 the
 * preset and one point per sweep value, runs each point's simulations as
 * child processes (iopt-bench-sim SUITE --sim N ...), and prints tables
 * and JSON lines.
 */
#ifndef IOPT_BENCH_REPRO_H
#define IOPT_BENCH_REPRO_H

#include <stdbool.h>
#include <stdint.h>

#define REPRO_MAX_ROWS	48
#define REPRO_MAX_ARGS	48

/*
 * One published row. A measured row (num < 0) is a figure a run function
 * fills; a derived row is rows[num] / rows[den] of the same point, ours
 * and published alike (published, when set, is the source's own ratio
 * and wins over the quotient of the two published figures). Headline
 * rows are the verdict: ratios between the case's own variants or to its
 * own no-IOMMU run. published NAN: the source gives no figure for the
 * row (ours is printed beside "null" and never judged).
 */
struct repro_row {
	const char *metric;	/* no '"' or '\\' (it goes into JSON as is) */
	const char *unit;
	double published;
	int num, den;		/* derived: rows[num] / rows[den]; else -1 */
	bool headline;
};

#define REPRO_ROW(m, u, p) { (m), (u), (p), -1, -1, false }
#define REPRO_RATIO(m, n, d) { (m), "x", 0, (n), (d), true }

/* One swept parameter: the option that sets it and its values beside
 * the preset's. "sim-param" and "smmu-param" pass --sim-param NAME=VALUE
 * (--smmu-param) to every simulation of the point; "option" is a suite
 * option (a rig setting such as viommu-trap-ns) that the run function
 * passes, as --NAME VALUE, to the runs it applies to (repro_point.option). */
struct repro_sweep {
	const char *opt;	/* "sim-param", "smmu-param", "option" */
	const char *name;
	const char *values[4];	/* the full run's, NULL-terminated */
	const char *quick[4];	/* --quick's */
	const char *why;	/* where the range comes from */
};

/* What a point's run function is given and fills. */
struct repro_point {
	bool quick;
	uint64_t seed;
	/* The point's parameter setting ("--sim-param", "name=value"), or
	 * none for point 0 and "option" sweeps: passed to every simulation
	 * of the point. */
	const char *set_opt, *set_val;
	/* An "option" sweep's setting ("--name", "value"), or NULL: for the
	 * run function to pass to the runs it applies to. */
	const char *option, *option_val;
	double ours[REPRO_MAX_ROWS];	/* measured rows; NAN: not measured */
	uint64_t hash[REPRO_MAX_ROWS];	/* each row's trace hash */
	uint64_t params[REPRO_MAX_ROWS];	/* each row's sim_params */
	unsigned runs, runs_total;	/* progress */
	const char *label;		/* "cmdq-contention 1/7" */
};

/* A simulation's figures: one JSON line of iopt-bench-sim (the dma
 * suite's ops_per_sec ..., the workload suite's gbps, iops and the cost
 * in force, calibrated or given; NAN where the line has none). */
struct repro_sim {
	double ops_per_sec, map_ns, unmap_ns;
	double gbps, iops, byte_cycles, submit_cycles;
	unsigned threads;
	uint64_t errors, sync_timeouts, sync_restarts, trace_hash, sim_params;
	/* SMMUv2: the backoff loop's status reads, those that saw the sync
	 * active, the most waits one sync took, nested syncs. */
	uint64_t sync_polls, sync_polls_active, nested_syncs;
	unsigned sync_waits_max;
};

enum repro_status {
	REPRO_RUNS,		/* the run function runs it */
	REPRO_NEEDS_WORKLOAD,	/* registered: needs the workload models */
};

struct repro_case {
	const char *name, *title;
	const char *source;	/* where the published figures are */
	const char *preset;	/* the parameter preset, as options */
	const char *setup;	/* what runs, in one line */
	enum repro_status status;
	const struct repro_row *rows;
	unsigned nrows;
	const struct repro_sweep *sweep;
	unsigned nsweep;
	/* Simulations per point (progress); run the point: 0, or -1 after
	 * a message on stderr. */
	unsigned runs_per_point;
	int (*run)(const struct repro_case *c, struct repro_point *p);
	/* NULL, or why the case cannot run in this build (a missing
	 * option or parameter): then the case reports that and no figure. */
	const char *(*missing)(void);
};

extern const struct repro_case repro_cases[];
extern const unsigned repro_ncases;

/*
 * Run `iopt-bench-sim SUITE --sim CPUS --seed S [the preset's options]
 * [the point's setting] ARGS... --json` (args NULL-terminated) and read
 * its last JSON line into *out. 0, or -1 after a message on stderr with
 * the child's own. Counts the run in p->runs and reports progress.
 */
int repro_sim(const struct repro_case *c, struct repro_point *p,
	      const char *suite, unsigned cpus, const char *const *args,
	      struct repro_sim *out);
/* The options of `iopt-bench SUITE --help` include "--OPT": the probe
 * for pieces other branches add. */
bool repro_suite_has_opt(const char *suite, const char *opt);
/* The simulation knows parameter NAME (kind "sim-param" or "smmu-param"). */
bool repro_has_param(const char *kind, const char *name);

#endif
