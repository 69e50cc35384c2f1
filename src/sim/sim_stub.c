/* SPDX-License-Identifier: MIT */
/*
 * The host library's iopgtable/sim.h: the simulation exists only in the
 * simulation build (iopgtable_sim, docs/sim.md). Here iopt_sim_create()
 * fails with -ENOTSUP, so one program source links against either library
 * and asks iopt_sim_available() which one it has.
 */
#include <errno.h>
#include <string.h>

#include <iopgtable/sim.h>

int iopt_sim_create(const struct iopt_sim_params *p, struct iopt_sim **out)
{
	return -ENOTSUP;
}

void iopt_sim_destroy(struct iopt_sim *sim)
{
}

int iopt_sim_run(struct iopt_sim *sim, void (*fn)(unsigned cpu, void *arg),
		 void *arg)
{
	return -ENOTSUP;
}

int iopt_sim_run_threads(struct iopt_sim *sim, unsigned threads,
			 void (*fn)(unsigned thread, void *arg), void *arg)
{
	return -ENOTSUP;
}

unsigned iopt_sim_cpu(void)
{
	return 0;
}

unsigned iopt_sim_thread(void)
{
	return 0;
}

int iopt_sim_irq_at(struct iopt_sim *sim, unsigned cpu, uint64_t at,
		    iopt_sim_irq_fn fn, void *arg)
{
	return -ENOTSUP;
}

unsigned long iopt_sim_irq_save(void)
{
	return 0;
}

void iopt_sim_irq_restore(unsigned long flags)
{
}

void iopt_sim_preempt_disable(void)
{
}

void iopt_sim_preempt_enable(void)
{
}

int iopt_sim_in_irq(void)
{
	return 0;
}

uint64_t iopt_sim_now(void)
{
	return 0;
}

uint64_t iopt_sim_now_ns(void)
{
	return 0;
}

void iopt_sim_work(uint64_t cycles)
{
}

int iopt_sim_attach_smmuv3(struct iopt_sim *sim, struct iopt_smmuv3 *smmu,
			   double model_ghz)
{
	return -ENOTSUP;
}

int iopt_sim_attach_smmuv2(struct iopt_sim *sim, struct iopt_smmuv2 *smmu,
			   double model_ghz)
{
	return -ENOTSUP;
}

int iopt_sim_detach_smmuv3(struct iopt_sim *sim, struct iopt_smmuv3 *smmu)
{
	return -ENOTSUP;
}

int iopt_sim_detach_smmuv2(struct iopt_sim *sim, struct iopt_smmuv2 *smmu)
{
	return -ENOTSUP;
}

struct iopt_sim *iopt_sim_ambient(void)
{
	return NULL;
}

uint64_t iopt_sim_model_cycles(void *model)
{
	return 0;
}

void iopt_sim_stats(const struct iopt_sim *sim, struct iopt_sim_stats *st)
{
	memset(st, 0, sizeof(*st));
}

void iopt_sim_get_params(const struct iopt_sim *sim, struct iopt_sim_params *p)
{
	if (p)
		memset(p, 0, sizeof(*p));
}

uint64_t iopt_sim_cpu_cycles(const struct iopt_sim *sim, unsigned cpu)
{
	return 0;
}

int iopt_sim_available(void)
{
	return 0;
}
