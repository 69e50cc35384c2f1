/* SPDX-License-Identifier: MIT */
/*
 * The reproductions that run a workload model (iopt-bench workload) over
 * the dma suite's rig: cmd-sync (seed 002), rcache-flush (seed 003) and
 * flush-policy (seed 004). Their table entries, rows and sweeps are in
 * bench_repro_cases.c; the row numbers below are the order of those rows,
 * which the run functions (repro_more.c) fill.
 */
#ifndef IOPT_BENCH_REPRO_MORE_H
#define IOPT_BENCH_REPRO_MORE_H

#include "bench_repro.h"

/* cmd-sync: measured rows, then the derived ones. */
enum {
	CS_MSI, CS_SEV, CS_NOSEV, CS_OFF,
	CS_SEV_MSI, CS_MSI_NOSEV, CS_MSI_OFF, CS_SEV_OFF,
	CS_NROWS
};

/* rcache-flush */
enum {
	RF_OFF, RF_EVERY, RF_LAST, RF_OFF_GBPS,
	RF_EVERY_OFF, RF_LAST_OFF, RF_LAST_EVERY,
	RF_NROWS
};

/* flush-policy */
enum {
	FP_EXHAUST, FP_STRICT, FP_FQ32K, FP_FQ8K, FP_FQ256, FP_SINGLE, FP_OFF,
	FP_EXH_STRICT, FP_FQ32K_EXH, FP_FQ8K_EXH, FP_FQ256_STRICT,
	FP_FQ256_EXH, FP_SINGLE_EXH, FP_EXH_OFF,
	FP_NROWS
};

int repro_cmd_sync(const struct repro_case *c, struct repro_point *p);
int repro_rcache_flush(const struct repro_case *c, struct repro_point *p);
int repro_flush_policy(const struct repro_case *c, struct repro_point *p);
/* NULL, or what this build lacks for the three cases. */
const char *repro_more_missing(void);

#endif
