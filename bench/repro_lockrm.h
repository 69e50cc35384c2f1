/* SPDX-License-Identifier: MIT */
/*
 * The repro cases of seed 000, the io-pgtable lock-removal thread
 * (bench/repro_lockrm.c; docs/experiments.md): lock-removal (50GbE TX/RX
 * and NVMf with no IOMMU, the 4.12 page-table lock and the lock-free
 * table) and v2-sync-timeout (iperf -P64's "TLB sync timed out" without
 * the sync lock). Their rows, sweeps and run functions, for the case
 * table in bench_repro_cases.c.
 */
#ifndef IOPT_REPRO_LOCKRM_H
#define IOPT_REPRO_LOCKRM_H

#include "bench_repro.h"

#define REPRO_LR_NROWS	38
#define REPRO_LR_NSWEEP	3
#define REPRO_LR_RUNS	21
extern const struct repro_row repro_lr_rows[REPRO_LR_NROWS];
extern const struct repro_sweep repro_lr_sweep[REPRO_LR_NSWEEP];
int repro_lr_run(const struct repro_case *c, struct repro_point *p);

#define REPRO_VS_NROWS	20
#define REPRO_VS_NSWEEP	3
#define REPRO_VS_RUNS	8
extern const struct repro_row repro_vs_rows[REPRO_VS_NROWS];
extern const struct repro_sweep repro_vs_sweep[REPRO_VS_NSWEEP];
int repro_vs_run(const struct repro_case *c, struct repro_point *p);

#endif
