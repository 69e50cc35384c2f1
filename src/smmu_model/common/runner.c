/* SPDX-License-Identifier: MIT */
/* The free-running adapter shared by the SMMU models (runner.h). */
#include <errno.h>
#include <stdlib.h>

#include "runner.h"

uint64_t smmu_runner_now(const struct smmu_runner *r)
{
	return (uint64_t)((double)(plat_clock_ns() - r->t0) * r->cpns);
}

static void *runner_main(void *arg)
{
	struct smmu_runner *r = arg;

	/* Acquire: pairs with the release store in smmu_runner_free(). */
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

static void attach(struct smmu_runner *r, int delta)
{
	plat_mutex_lock(r->lock);
	/* Relaxed: pairs with the relaxed load in smmu_clock_lenient() (a
	 * lock-free hit needs only the value); other readers hold the
	 * model's lock, as here. */
	plat_store_rlx32(&r->clk->runners, (uint32_t)((int)r->clk->runners + delta));
	plat_mutex_unlock(r->lock);
}

int smmu_runner_new(void *model, int (*run_until)(void *, uint64_t),
		    uint64_t (*next_event)(void *), struct plat_mutex *lock,
		    struct smmu_clock *clk, double cycles_per_ns, void **out)
{
	struct smmu_runner *r;
	int err;

	if (!(cycles_per_ns > 0) || cycles_per_ns > 1e3)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct smmu_runner){ .model = model, .run_until = run_until,
				   .next_event = next_event, .lock = lock,
				   .clk = clk, .cpns = cycles_per_ns,
				   .t0 = plat_clock_ns() };
	attach(r, 1);
	err = plat_thread_start(&r->th, runner_main, r);
	if (err) {
		attach(r, -1);
		free(r);
		return err;	/* the thread library's error, e.g. -EAGAIN */
	}
	*out = r;
	return 0;
}

void smmu_runner_free(struct smmu_runner *r)
{
	if (!r)
		return;
	/* Release: pairs with the thread's acquire load of stop. */
	plat_store_rel64(&r->stop, 1);
	plat_thread_join(&r->th);
	attach(r, -1);
	free(r);
}
