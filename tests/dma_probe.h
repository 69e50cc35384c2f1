/* SPDX-License-Identifier: MIT */
/*
 * An instrumented DMA driver for the DMA layer's variant tests (host and
 * simulated CPUs): an ops table (struct iopt_dma_drv_ops) that translates
 * nothing and records, from the driver's side, what the DMA layer asked of
 * it and when:
 *   - every inv_range, sync and flush_all, counted;
 *   - how many of those calls were in progress at once (max_active);
 *   - syncs begun and syncs done, so that a caller can tell whether one of
 *     its calls ran wholly inside a sync (probe_map());
 *   - a sync spends time (spend(), when set: a host spin or simulated
 *     work), so that another CPU has a window to run into it.
 * The counters are C11 atomics: the tests read them from other threads.
 */
#ifndef IOPT_TEST_DMA_PROBE_H
#define IOPT_TEST_DMA_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/dma.h>

struct probe {
	atomic_uint active, max_active;
	atomic_uint_fast64_t inv_ranges, syncs, flush_alls;
	atomic_uint_fast64_t syncs_begun, syncs_done;
	/* probe_map() calls that began after a sync had begun and returned
	 * before that sync was done. */
	atomic_uint_fast64_t maps_inside_sync;
	void (*spend)(void);
};

static inline void probe_enter(struct probe *p)
{
	unsigned a = atomic_fetch_add(&p->active, 1) + 1;
	unsigned m = atomic_load(&p->max_active);

	while (a > m && !atomic_compare_exchange_weak(&p->max_active, &m, a))
		;
}

static inline void probe_leave(struct probe *p)
{
	atomic_fetch_sub(&p->active, 1);
}

static inline int probe_domain_alloc(void *drv, unsigned stage, void **dom)
{
	(void)stage;
	*dom = drv;
	return 0;
}

static inline int probe_domain_free(void *dom)
{
	(void)dom;
	return 0;
}

static inline int probe_attach(void *dom, struct iopt_pgtable *pt, uint32_t sid)
{
	(void)dom;
	(void)pt;
	(void)sid;
	return 0;
}

static inline int probe_detach(void *dom, uint32_t sid)
{
	(void)dom;
	(void)sid;
	return 0;
}

static inline int probe_inv_range(void *dom, uint64_t iova, uint64_t size,
				  uint64_t granule, bool leaf)
{
	struct probe *p = dom;

	(void)iova;
	(void)size;
	(void)granule;
	(void)leaf;
	probe_enter(p);
	atomic_fetch_add(&p->inv_ranges, 1);
	probe_leave(p);
	return 0;
}

static inline int probe_sync(void *dom)
{
	struct probe *p = dom;

	atomic_fetch_add(&p->syncs_begun, 1);
	probe_enter(p);
	atomic_fetch_add(&p->syncs, 1);
	if (p->spend)
		p->spend();
	probe_leave(p);
	atomic_fetch_add(&p->syncs_done, 1);
	return 0;
}

static inline int probe_flush_all(void *dom)
{
	struct probe *p = dom;

	probe_enter(p);
	atomic_fetch_add(&p->flush_alls, 1);
	probe_leave(p);
	return 0;
}

static const struct iopt_dma_drv_ops probe_ops = {
	.name = "probe",
	.domain_alloc = probe_domain_alloc,
	.domain_free = probe_domain_free,
	.attach = probe_attach,
	.detach = probe_detach,
	.inv_range = probe_inv_range,
	.sync = probe_sync,
	.flush_all = probe_flush_all,
};

/*
 * iopt_dma_map() of one page, and whether it ran wholly inside a sync:
 * fewer syncs done when it returned than had begun when it was called
 * means a sync that had begun before the map was still running after it.
 * Under the domain lock that cannot be: the sync runs inside an unmap's
 * (or a cleanup's) locked section, and the map's table write waits for it.
 */
static inline int probe_map(struct probe *p, struct iopt_dma *d, uint64_t pa,
			    unsigned cpu, uint64_t *iova)
{
	uint_fast64_t begun = atomic_load(&p->syncs_begun);
	int ret = iopt_dma_map(d, pa, 4096, IOPT_READ | IOPT_WRITE, ~0ull, cpu,
			       iova);

	if (atomic_load(&p->syncs_done) < begun)
		atomic_fetch_add(&p->maps_inside_sync, 1);
	return ret;
}

#endif
