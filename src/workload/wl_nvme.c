/* SPDX-License-Identifier: MIT */
/*
 * NVMe random reads (iopt_wl_nvme_run(), docs/workload.md "NVMe").
 *
 * A job submits while fewer than iodepth of its I/Os are in flight and
 * sleeps otherwise (fio's io_getevents); each I/O maps its pages and
 * rings the doorbell, where the device fixes its completion cycle:
 *   c = max(submit + latency, c_prev + 1 / max_iops)
 * (c_prev the device's previous completion, in submission order), and
 * the completion interrupt is raised at c. The handler unmaps, spends
 * complete_cycles, returns the I/O to its job and wakes the job if it
 * sleeps. A job's free list and counters are under its lock, taken with
 * interrupts off by the job (the handler runs with them off).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

#define PAGE 4096ull
#define MAX_PAGES 256			/* 1 MiB */

struct nvme_io {
	struct nvme_job *j;
	struct nvme_io *next;		/* free list */
	uint64_t slot;			/* its buffer */
	uint64_t submitted;		/* cycle */
	uint64_t iova, total;		/* the scatter list's mapping */
	uint64_t *pages;		/* map_per_page: each page's IOVA */
};

struct nvme_job {
	struct nvme_model *m;
	struct plat_spinlock lock;
	struct wl_wait wait;
	struct nvme_io *free;
	unsigned inflight;
	unsigned cpu;			/* its completions' */
	double frac;
} WL_LINE_ALIGNED;

struct nvme_model {
	struct iopt_sim *sim;
	struct iopt_dma *d;
	const struct iopt_wl_nvme_params *p;
	struct wl_machine mc;
	struct nvme_job *job;
	struct nvme_io *ios;
	uint64_t *pages;
	unsigned npages;
	uint64_t lat_cyc;
	double gap_cyc;			/* 1 / max_iops in cycles; 0: none */
	double dev_last;		/* the device's last completion */
	bool started;
	uint64_t w0, w1, end;
	uint64_t ios_n, lat_sum, maps_n, unmaps_n;
	struct wl_err err;
};

/* Page i of an I/O's buffer: every other page of its own region, so the
 * pages are physically discontiguous. */
static uint64_t page_paddr(const struct nvme_model *m, const struct nvme_io *io,
			   unsigned i)
{
	return m->p->paddr + (io->slot * m->npages + i) * 2 * PAGE;
}

static int io_map(struct nvme_model *m, struct nvme_io *io)
{
	struct iopt_dma_seg sg[MAX_PAGES];
	unsigned i;
	int err = 0;

	if (m->p->map_per_page) {
		for (i = 0; i < m->npages && !err; i++) {
			err = wl_map(m->d, page_paddr(m, io, i), PAGE, IOPT_WRITE,
				     m->p->dma_mask, &io->pages[i]);
			if (!err)
				m->maps_n++;
		}
		if (!err)
			return 0;
		for (i--; i-- > 0;) {
			wl_unmap(m->d, io->pages[i], PAGE);
			m->unmaps_n++;
		}
		return err;
	}
	for (i = 0; i < m->npages; i++) {
		sg[i].paddr = page_paddr(m, io, i);
		sg[i].len = PAGE;
	}
	err = wl_map_sg(m->d, sg, m->npages, IOPT_WRITE, m->p->dma_mask,
			&io->iova, &io->total);
	if (!err)
		m->maps_n++;
	return err;
}

static void io_unmap(struct nvme_model *m, struct nvme_io *io)
{
	int err = 0;

	if (m->p->map_per_page) {
		for (unsigned i = 0; i < m->npages; i++) {
			int e = wl_unmap(m->d, io->pages[i], PAGE);

			if (e)
				err = e;
			else
				m->unmaps_n++;
		}
	} else {
		err = wl_unmap_sg(m->d, io->iova, io->total);
		if (!err)
			m->unmaps_n++;
	}
	if (err)
		wl_err_note(&m->err, err);
}

static void io_put(struct nvme_job *j, struct nvme_io *io)
{
	io->next = j->free;
	j->free = io;
	j->inflight--;
	if (j->wait.waiting) {
		j->wait.waiting = false;
		wl_wait_kick(&j->wait);
	}
}

static void nvme_irq(unsigned cpu, void *arg)
{
	struct nvme_io *io = arg;
	struct nvme_job *j = io->j;
	struct nvme_model *m = j->m;
	double frac = 0;
	uint64_t now;

	(void)cpu;
	io_unmap(m, io);
	wl_work((double)m->p->complete_cycles, &frac);
	now = iopt_sim_now();
	if (now >= m->w0 && now < m->w1) {
		m->ios_n++;
		m->lat_sum += now - io->submitted;
	}
	plat_spin_lock(&j->lock);
	io_put(j, io);
	plat_spin_unlock(&j->lock);
}

/* The device takes the I/O at cycle now: its completion cycle. */
static uint64_t dev_submit(struct nvme_model *m, uint64_t now)
{
	double c = (double)(now + m->lat_cyc);

	if (m->gap_cyc > 0 && c < m->dev_last + m->gap_cyc)
		c = m->dev_last + m->gap_cyc;
	if (c > m->dev_last)
		m->dev_last = c;
	return (uint64_t)(c + 0.5);
}

/* Sleep until the job has fewer than limit I/Os in flight. Returns with
 * the lock held and interrupts off (*flags). */
static void wait_below(struct nvme_job *j, unsigned limit, unsigned long *flags)
{
	*flags = plat_irq_save();
	plat_spin_lock(&j->lock);
	while (j->inflight >= limit) {
		j->wait.waiting = true;
		plat_spin_unlock(&j->lock);
		plat_irq_restore(*flags);
		wl_wait_sleep(&j->wait);
		*flags = plat_irq_save();
		plat_spin_lock(&j->lock);
	}
}

static void nvme_thread(unsigned ji, void *arg)
{
	struct nvme_model *m = arg;
	const struct iopt_wl_nvme_params *p = m->p;
	struct nvme_job *j = &m->job[ji];
	unsigned long flags;
	struct nvme_io *io;
	int err;

	if (!m->started) {
		uint64_t t0 = iopt_sim_now();

		m->started = true;
		m->w0 = t0 + wl_ns_to_cyc(&m->mc, p->warmup_ns);
		m->w1 = m->end = t0 + wl_ns_to_cyc(&m->mc, p->duration_ns);
	}
	wl_wait_init(&j->wait);
	while (iopt_sim_now() < m->end) {
		wait_below(j, p->iodepth, &flags);
		io = j->free;
		j->free = io->next;
		j->inflight++;
		plat_spin_unlock(&j->lock);
		plat_irq_restore(flags);

		wl_work((double)p->submit_cycles, &j->frac);
		err = io_map(m, io);
		if (err) {
			wl_err_note(&m->err, err);
			flags = plat_irq_save();
			plat_spin_lock(&j->lock);
			io_put(j, io);
			plat_spin_unlock(&j->lock);
			plat_irq_restore(flags);
			continue;
		}
		io->submitted = iopt_sim_now();
		if (iopt_sim_irq_at(m->sim, j->cpu, dev_submit(m, io->submitted),
				    nvme_irq, io))
			abort();	/* checked arguments: only host memory fails */
	}
	/* Reap what is still in flight. */
	wait_below(j, 1, &flags);
	plat_spin_unlock(&j->lock);
	plat_irq_restore(flags);
}

int iopt_wl_nvme_run(struct iopt_sim *sim, struct iopt_dma *d,
		     const struct iopt_wl_nvme_params *p,
		     struct iopt_wl_nvme_result *r)
{
	struct nvme_model m;
	struct wl_usage u;
	size_t n;
	int ret;

	if (!sim || !p || !r)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	wl_machine(sim, &m.mc);
	ret = wl_nvme_check(p, m.mc.cpus);
	if (ret)
		return ret;
	m.sim = sim;
	m.d = d;
	m.p = p;
	m.npages = (unsigned)(p->io_bytes / PAGE);
	m.lat_cyc = wl_ns_to_cyc(&m.mc, p->latency_ns);
	m.gap_cyc = p->max_iops > 0 ? 1e9 / p->max_iops * m.mc.ghz : 0;
	n = (size_t)p->jobs * p->iodepth;
	m.job = wl_calloc_lines(p->jobs, sizeof(*m.job));
	m.ios = calloc(n, sizeof(*m.ios));
	m.pages = p->map_per_page ? calloc(n * m.npages, sizeof(*m.pages)) : NULL;
	ret = -ENOMEM;
	if (!m.job || !m.ios || (p->map_per_page && !m.pages))
		goto out;
	for (unsigned i = 0; i < p->jobs; i++) {
		struct nvme_job *j = &m.job[i];

		j->m = &m;
		j->cpu = wl_irq_cpu(p->irq_cpu, i, m.mc.cpus);
		plat_spin_init(&j->lock);
		for (unsigned k = 0; k < p->iodepth; k++) {
			struct nvme_io *io = &m.ios[(size_t)i * p->iodepth + k];

			io->j = j;
			io->slot = (uint64_t)i * p->iodepth + k;
			if (m.pages)
				io->pages = &m.pages[io->slot * m.npages];
			io->next = j->free;
			j->free = io;
		}
	}
	wl_usage_begin(sim, &u);
	ret = iopt_sim_run_threads(sim, p->jobs, nvme_thread, &m);
	if (ret)
		goto out;
	memset(r, 0, sizeof(*r));
	r->iops = (double)m.ios_n / ((double)(p->duration_ns - p->warmup_ns) * 1e-9);
	r->lat_us = m.ios_n ? (double)m.lat_sum / (double)m.ios_n / m.mc.ghz * 1e-3 : 0;
	r->cpu_util = wl_usage_end(sim, &u, m.mc.cpus);
	r->ios = m.ios_n;
	r->maps = m.maps_n;
	r->unmaps = m.unmaps_n;
	r->dma_errors = m.err.n;
	r->first_dma_error = m.err.first;
out:
	free(m.job);
	free(m.ios);
	free(m.pages);
	return ret;
}
