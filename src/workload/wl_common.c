/* SPDX-License-Identifier: MIT */
/*
 * The workload models' shared parts (wl_internal.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

void wl_machine(const struct iopt_sim *sim, struct wl_machine *m)
{
	struct iopt_sim_params p;

	iopt_sim_get_params(sim, &p);
	m->ghz = p.cpu_ghz;
	m->cpus = p.cpus;
}

int wl_map(struct iopt_dma *d, uint64_t paddr, uint64_t size, unsigned prot,
	   uint64_t mask, uint64_t *iova)
{
	unsigned long flags;
	int ret;

	if (!d) {
		*iova = paddr;
		return 0;
	}
	flags = plat_irq_save();
	ret = iopt_dma_map(d, paddr, size, prot, mask, iopt_sim_cpu(), iova);
	plat_irq_restore(flags);
	return ret;
}

int wl_unmap(struct iopt_dma *d, uint64_t iova, uint64_t size)
{
	unsigned long flags;
	int ret;

	if (!d)
		return 0;
	flags = plat_irq_save();
	ret = iopt_dma_unmap(d, iova, size, iopt_sim_cpu());
	plat_irq_restore(flags);
	return ret;
}

int wl_map_sg(struct iopt_dma *d, const struct iopt_dma_seg *sg, size_t n,
	      unsigned prot, uint64_t mask, uint64_t *iova, uint64_t *total)
{
	unsigned long flags;
	int ret;

	if (!d) {
		/* No IOMMU: a device sees every segment at its own address;
		 * the model keeps the first (the list is unmapped whole). */
		*iova = sg[0].paddr;
		*total = 0;
		for (size_t i = 0; i < n; i++)
			*total += sg[i].len;
		return 0;
	}
	flags = plat_irq_save();
	ret = iopt_dma_map_sg(d, sg, n, prot, mask, iopt_sim_cpu(), iova,
			      total);
	plat_irq_restore(flags);
	return ret;
}

int wl_unmap_sg(struct iopt_dma *d, uint64_t iova, uint64_t total)
{
	unsigned long flags;
	int ret;

	if (!d)
		return 0;
	flags = plat_irq_save();
	ret = iopt_dma_unmap_sg(d, iova, total, iopt_sim_cpu());
	plat_irq_restore(flags);
	return ret;
}

void wl_wait_init(struct wl_wait *w)
{
	plat_mutex_init(&w->m);
	w->waiting = false;
	plat_mutex_lock(&w->m);		/* held by its thread from now on */
}

void wl_wait_sleep(struct wl_wait *w)
{
	/* Blocks until a kick unlocks it, which hands it back to us. */
	plat_mutex_lock(&w->m);
}

void wl_wait_kick(struct wl_wait *w)
{
	plat_mutex_unlock(&w->m);
}

void *wl_calloc_lines(size_t n, size_t size)
{
	size_t bytes = (n * size + WL_LINE - 1) & ~(size_t)(WL_LINE - 1);
	void *p;

	if (size && n > SIZE_MAX / size - WL_LINE)
		return NULL;
	p = aligned_alloc(WL_LINE, bytes ? bytes : WL_LINE);
	if (p)
		memset(p, 0, bytes ? bytes : WL_LINE);
	return p;
}

void wl_sleep_until(const struct wl_machine *m, uint64_t at)
{
	uint64_t now = iopt_sim_now();

	if (at > now)
		plat_sleep_ns((uint64_t)((double)(at - now) / m->ghz) + 1);
}

void wl_work(double cycles, double *frac)
{
	uint64_t whole;

	*frac += cycles;
	whole = (uint64_t)*frac;
	*frac -= (double)whole;
	if (whole)
		iopt_sim_work(whole);
}

static uint64_t busy_cycles(const struct iopt_sim *sim)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < IOPT_SIM_MAX_CPUS; i++)
		sum += iopt_sim_cpu_cycles(sim, i);
	return sum;
}

void wl_usage_begin(const struct iopt_sim *sim, struct wl_usage *u)
{
	struct iopt_sim_stats st;

	iopt_sim_stats(sim, &st);
	u->busy = busy_cycles(sim);
	u->start = st.end_cycles;
}

double wl_usage_end(const struct iopt_sim *sim, const struct wl_usage *u,
		    unsigned cpus)
{
	struct iopt_sim_stats st;
	uint64_t span;

	iopt_sim_stats(sim, &st);
	span = st.end_cycles - u->start;
	if (!span)
		return 0;
	return (double)(busy_cycles(sim) - u->busy) / ((double)span * cpus);
}
