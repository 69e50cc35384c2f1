/* SPDX-License-Identifier: MIT */
/* Shared helpers for iopt-bench suites. */
#ifndef IOPT_BENCH_H
#define IOPT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
