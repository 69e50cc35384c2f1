/* SPDX-License-Identifier: MIT */
/*
 * The free-running adapter both SMMU models offer: a host thread that
 * runs a model against host time, cycle = (host ns since start) *
 * cycles_per_ns, sleeping until the model's next internal event (or
 * 100 us, to notice new work). The model is reached through two
 * callbacks, which take its lock. While a runner is attached, the
 * model's clock is shared (model_time.h): callers read the runner's clock
 * before they take the model's lock, so a cycle a little behind is
 * expected and taken as the model's time.
 *
 * The public types (struct iopt_smmuv3_runner, struct iopt_smmuv2_runner) are
 * never defined: they are this struct seen through an opaque pointer.
 */
#ifndef IOPT_SMMU_RUNNER_H
#define IOPT_SMMU_RUNNER_H

#include <stdint.h>

#include "../../platform/platform.h"
#include "model_time.h"

struct smmu_runner {
	void *model;
	int (*run_until)(void *model, uint64_t cycle);
	uint64_t (*next_event)(void *model);
	struct plat_mutex *lock;	/* the model's */
	struct smmu_clock *clk;		/* the model's, under lock */
	double cpns;
	uint64_t t0;
	uint64_t stop;		/* release store by stop, acquire by the thread */
	struct plat_thread th;
};

/*
 * Attach a runner to the model (lock, clk) and start its thread: 0;
 * -EINVAL (cycles_per_ns not in (0, 1000]); -ENOMEM; or the thread
 * library's negative errno. Nothing is left attached on failure.
 */
int smmu_runner_new(void *model, int (*run_until)(void *, uint64_t),
		    uint64_t (*next_event)(void *), struct plat_mutex *lock,
		    struct smmu_clock *clk, double cycles_per_ns, void **out);
/* The runner's current cycle. */
uint64_t smmu_runner_now(const struct smmu_runner *r);
/* Stop and join the thread, detach and free (NULL: nothing). */
void smmu_runner_free(struct smmu_runner *r);

/*
 * The public runner entry points of a model with prefix pfx (iopt_smmuv3,
 * iopt_smmuv2) and type model_t, which has a struct smmu_core `core`, and
 * pfx##_run_until / pfx##_next_event entry points: one definition for both
 * models. The public runner type is never defined: it is struct smmu_runner
 * behind an opaque pointer.
 */
#define SMMU_RUNNER_DEFINE(pfx, model_t)					\
	static int pfx##_runner_cb_run(void *m, uint64_t c)			\
	{									\
		return pfx##_run_until(m, c);					\
	}									\
	static uint64_t pfx##_runner_cb_next(void *m)				\
	{									\
		return pfx##_next_event(m);					\
	}									\
	int pfx##_runner_start(model_t *s, double cycles_per_ns,		\
			       struct pfx##_runner **out)			\
	{									\
		void *r = NULL;							\
		int err = s && out ?						\
			smmu_runner_new(s, pfx##_runner_cb_run,			\
					pfx##_runner_cb_next, &s->core.lock,	\
					&s->core.clk, cycles_per_ns, &r) :	\
			-EINVAL;						\
										\
		if (!err)							\
			*out = r;						\
		return err;							\
	}									\
	uint64_t pfx##_runner_now(const struct pfx##_runner *r)		\
	{									\
		return smmu_runner_now((const void *)r);			\
	}									\
	void pfx##_runner_stop(struct pfx##_runner *r)				\
	{									\
		smmu_runner_free((void *)r);					\
	}

#endif
