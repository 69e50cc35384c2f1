/* SPDX-License-Identifier: MIT */
/*
 * dma_map_benchmark (iopt_wl_mapbench_run(), docs/workload.md
 * "dma_map_benchmark"): the loop of Linux's kernel/dma/map_benchmark.c
 * and its statistics, in the kernel's integer arithmetic (latencies in
 * 100 ns units, truncated; variance as the mean of squares less the
 * square of the mean; the tool prints unit / 10.0 as us).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

struct mb_model {
	struct iopt_dma *d;
	const struct iopt_wl_mapbench_params *p;
	uint64_t end_ns;
	bool started;
	/* The kernel's atomics (one CPU runs at a time: plain sums). */
	uint64_t loops, sum_map, sum_unmap, sq_map, sq_unmap;
	uint64_t ns_map, ns_unmap;
	struct wl_err err;
};

static void mb_thread(unsigned t, void *arg)
{
	struct mb_model *m = arg;
	const struct iopt_wl_mapbench_params *p = m->p;
	uint64_t size = (uint64_t)p->npages * 4096;
	uint64_t paddr = p->paddr + (uint64_t)t * (size + 4096);
	double frac = 0;

	if (!m->started) {
		m->started = true;
		m->end_ns = iopt_sim_now_ns() + p->duration_ns;
	}
	/* The kernel's kthread_should_stop(): a flag, no clock read. */
	while (iopt_sim_now_ns() < m->end_ns) {
		uint64_t t1, t2, t3, t4, iova, map100, unmap100;
		int err;

		/* The buffer is written unless the device only writes it. */
		if (p->prot & IOPT_READ)
			wl_work(p->memset_byte_cycles * (double)size, &frac);
		t1 = plat_clock_ns();
		err = wl_map(m->d, paddr, size, p->prot, p->dma_mask, &iova);
		t2 = plat_clock_ns();
		if (err) {
			/* The kernel's thread stops at a failed map. */
			wl_err_note(&m->err, err);
			return;
		}
		plat_delay_ns(p->dma_trans_ns);
		t3 = plat_clock_ns();
		err = wl_unmap(m->d, iova, size);
		t4 = plat_clock_ns();
		if (err)
			wl_err_note(&m->err, err);
		map100 = (t2 - t1) / 100;
		unmap100 = (t4 - t3) / 100;
		m->sum_map += map100;
		m->sum_unmap += unmap100;
		m->sq_map += map100 * map100;
		m->sq_unmap += unmap100 * unmap100;
		m->ns_map += t2 - t1;
		m->ns_unmap += t4 - t3;
		m->loops++;
	}
}

/* The kernel's int_sqrt64(): the largest x with x * x <= v. */
static uint64_t isqrt(uint64_t v)
{
	uint64_t x = 0, bit = 1ull << 62;

	while (bit > v)
		bit >>= 2;
	for (; bit; bit >>= 2) {
		if (v >= x + bit) {
			v -= x + bit;
			x = (x >> 1) + bit;
		} else {
			x >>= 1;
		}
	}
	return x;
}

static void stats(uint64_t sum, uint64_t sq, uint64_t loops, double *avg_us,
		  double *sd_us)
{
	uint64_t avg = sum / loops, mean_sq = sq / loops;

	*avg_us = (double)avg / 10.0;
	*sd_us = (double)isqrt(mean_sq > avg * avg ? mean_sq - avg * avg : 0) / 10.0;
}

int iopt_wl_mapbench_run(struct iopt_sim *sim, struct iopt_dma *d,
			 const struct iopt_wl_mapbench_params *p,
			 struct iopt_wl_mapbench_result *r)
{
	struct mb_model m;
	int ret;

	if (!sim || !p || !r)
		return -EINVAL;
	ret = wl_mapbench_check(p);
	if (ret)
		return ret;
	memset(&m, 0, sizeof(m));
	m.d = d;
	m.p = p;
	ret = iopt_sim_run_threads(sim, p->threads, mb_thread, &m);
	if (ret)
		return ret;
	memset(r, 0, sizeof(*r));
	r->loops = m.loops;
	if (m.loops) {
		stats(m.sum_map, m.sq_map, m.loops, &r->map_us, &r->map_stddev_us);
		stats(m.sum_unmap, m.sq_unmap, m.loops, &r->unmap_us,
		      &r->unmap_stddev_us);
		r->map_ns = (double)m.ns_map / (double)m.loops;
		r->unmap_ns = (double)m.ns_unmap / (double)m.loops;
	}
	r->dma_errors = m.err.n;
	r->first_dma_error = m.err.first;
	return 0;
}
