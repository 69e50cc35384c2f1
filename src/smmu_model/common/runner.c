/* SPDX-License-Identifier: MIT */
/* The free-running adapter shared by the SMMU models (runner.h). */
#include "runner.h"

uint64_t smmu_runner_now(const struct smmu_runner *r)
{
	return (uint64_t)((double)(plat_clock_ns() - r->t0) * r->cpns);
}

static void *runner_main(void *arg)
{
	struct smmu_runner *r = arg;

	/* Acquire: pairs with the release store in smmu_runner_stop(). */
	while (!plat_load_acq64(&r->stop)) {
		uint64_t now = smmu_runner_now(r);

		r->run_until(r->model, now);
		uint64_t next = r->next_event(r->model);
		uint64_t wait = 100000;	/* ns: poll for new work */

		if (next != UINT64_MAX && next > now &&
		    (double)(next - now) / r->cpns < (double)wait)
			wait = (uint64_t)((double)(next - now) / r->cpns) + 1;
		else if (next != UINT64_MAX && next <= now)
			wait = 0;
		if (wait)
			plat_sleep_ns(wait);
	}
	return NULL;
}

int smmu_runner_start(struct smmu_runner *r)
{
	r->t0 = plat_clock_ns();
	r->stop = 0;
	return plat_thread_start(&r->th, runner_main, r);
}

void smmu_runner_stop(struct smmu_runner *r)
{
	/* Release: pairs with the thread's acquire load of stop. */
	plat_store_rel64(&r->stop, 1);
	plat_thread_join(&r->th);
}
