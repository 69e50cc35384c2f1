/* SPDX-License-Identifier: MIT */
/*
 * The free-running adapter both SMMU models offer: a host thread that
 * runs a model against host time, cycle = (host ns since start) *
 * cycles_per_ns, sleeping until the model's next internal event (or
 * 100 us, to notice new work). The model is reached through two
 * callbacks, which take its lock.
 */
#ifndef IOPT_SMMU_RUNNER_H
#define IOPT_SMMU_RUNNER_H

#include <stdint.h>

#include "../../platform/platform.h"

struct smmu_runner {
	void *model;
	int (*run_until)(void *model, uint64_t cycle);
	uint64_t (*next_event)(void *model);
	double cpns;
	uint64_t t0;
	uint64_t stop;		/* release store by stop, acquire by the thread */
	struct plat_thread th;
};

/* Start r's thread (model, callbacks and cpns filled in by the caller):
 * 0 or the thread library's negative errno. */
int smmu_runner_start(struct smmu_runner *r);
/* The runner's current cycle. */
uint64_t smmu_runner_now(const struct smmu_runner *r);
/* Stop and join the thread. */
void smmu_runner_stop(struct smmu_runner *r);

#endif
