/* SPDX-License-Identifier: MIT */
/*
 * Network receive (iopt_wl_rx_run(), docs/workload.md "Network RX").
 *
 * Queue q's packet k lands in ring slot k % ring_entries at
 *   a(k) = max(a(k-1) + P, posted(slot)),
 * P the wire time of one packet at the queue's share of the link and
 * posted(slot) the cycle its buffer was (re)posted: the NIC waits for a
 * buffer rather than dropping (TCP's window holds the sender back). The
 * arrival schedule is the device's: it is advanced in plain memory by
 * whoever looks at it, the queue's own handler (one CPU, never nested)
 * and, before the NIC starts and after it stops, the queue's thread.
 * Packets stop arriving at the end of the queue's duration.
 *
 * The interrupt: raised irq_delay_ns after the first arrival while it is
 * enabled; the handler (NAPI's poll) processes up to budget packets that
 * have arrived by its time, each: stack work, unmap the buffer, map a
 * fresh one and post it. A full budget re-raises the poll at once; a
 * short one enables the interrupt again, raised for the next arrival.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

struct rx_buf {
	uint64_t iova;
	uint64_t posted;		/* cycle it was posted */
	bool mapped;
};

struct rx_queue {
	struct rx_model *m;
	unsigned idx, cpu;
	struct rx_buf *ring;
	uint64_t nposted;		/* buffers ever posted */
	uint64_t arrived;		/* packets arrived */
	double last_at;			/* arrival cycle of the last one */
	uint64_t processed;
	uint64_t next_paddr;		/* buffers handed out */
	uint64_t t0, w0, w1, end;	/* the NIC's start, window, stop */
	bool done;			/* stopped and everything processed */
	double frac;
} WL_LINE_ALIGNED;

struct rx_model {
	struct iopt_sim *sim;
	struct iopt_dma *d;
	const struct iopt_wl_rx_params *p;
	struct wl_machine mc;
	struct rx_queue *q;
	double pkt_cyc;			/* P */
	uint64_t delay_cyc;
	uint64_t bytes, packets, maps_n, unmaps_n, irqs, stalls;
	struct wl_err err;
};

/* Buffers: queue q's own 256 MiB, handed out in turn. */
static uint64_t buf_paddr(struct rx_model *m, struct rx_queue *q)
{
	uint64_t per = (256ull << 20) / m->p->buf_bytes;

	return m->p->paddr + (uint64_t)q->idx * (256ull << 20) +
	       (q->next_paddr++ % per) * m->p->buf_bytes;
}

/* Map a fresh buffer into slot and post it at the caller's time. A
 * buffer that cannot be mapped is posted unmapped: the packet that lands
 * there is dropped, and its processing tries a fresh mapping again. */
static void post_buf(struct rx_model *m, struct rx_queue *q, struct rx_buf *b)
{
	int err = wl_map(m->d, buf_paddr(m, q), m->p->buf_bytes, IOPT_WRITE,
			 m->p->dma_mask, &b->iova);

	b->mapped = !err;
	if (err)
		wl_err_note(&m->err, err);
	else
		m->maps_n++;
	b->posted = iopt_sim_now();
	q->nposted++;
}

/* Arrival cycle of the next packet, or UINT64_MAX if it has no buffer or
 * would come after the NIC stops; *stalled: it waited for its buffer. */
static double next_arrival(struct rx_model *m, struct rx_queue *q,
			   bool *stalled)
{
	struct rx_buf *b;
	double at;

	*stalled = false;
	if (q->arrived >= q->nposted)
		return (double)UINT64_MAX;
	b = &q->ring[q->arrived % m->p->ring_entries];
	at = q->last_at + m->pkt_cyc;
	if ((double)b->posted > at) {
		at = (double)b->posted;
		*stalled = true;
	}
	return at >= (double)q->end ? (double)UINT64_MAX : at;
}

static void advance(struct rx_model *m, struct rx_queue *q, uint64_t now)
{
	bool stalled;
	double at;

	while ((at = next_arrival(m, q, &stalled)) <= (double)now) {
		q->last_at = at;
		q->arrived++;
		m->stalls += stalled;
	}
}

static void rx_irq(unsigned cpu, void *arg);

static void raise_at(struct rx_model *m, struct rx_queue *q, uint64_t at)
{
	if (iopt_sim_irq_at(m->sim, q->cpu, at, rx_irq, q))
		abort();	/* checked arguments: only host memory fails */
}

/* Raise the interrupt for the next arrival, or stop. */
static void rearm(struct rx_model *m, struct rx_queue *q)
{
	bool stalled;
	double at = next_arrival(m, q, &stalled);

	if (at == (double)UINT64_MAX) {
		q->done = true;
		return;
	}
	raise_at(m, q, (uint64_t)at + 1 + m->delay_cyc);
}

static void rx_packet(struct rx_model *m, struct rx_queue *q)
{
	const struct iopt_wl_rx_params *p = m->p;
	struct rx_buf *b = &q->ring[q->processed % p->ring_entries];
	bool got = b->mapped;
	uint64_t now;
	int err;

	if (got) {
		wl_work((double)p->pkt_cycles +
			p->byte_cycles * (double)p->mss, &q->frac);
		err = wl_unmap(m->d, b->iova, p->buf_bytes);
		if (err)
			wl_err_note(&m->err, err);
		else
			m->unmaps_n++;
	}
	post_buf(m, q, b);
	q->processed++;
	now = iopt_sim_now();
	if (got && now >= q->w0 && now < q->w1) {
		m->bytes += p->mss;
		m->packets++;
	}
}

static void rx_irq(unsigned cpu, void *arg)
{
	struct rx_queue *q = arg;
	struct rx_model *m = q->m;
	unsigned n = 0;

	(void)cpu;
	m->irqs++;
	while (n < m->p->budget) {
		advance(m, q, iopt_sim_now());
		if (q->processed == q->arrived)
			break;
		rx_packet(m, q);
		n++;
	}
	advance(m, q, iopt_sim_now());
	if (q->processed < q->arrived)
		raise_at(m, q, iopt_sim_now());	/* the next NAPI round */
	else
		rearm(m, q);
}

static void rx_thread(unsigned qi, void *arg)
{
	struct rx_model *m = arg;
	const struct iopt_wl_rx_params *p = m->p;
	struct rx_queue *q = &m->q[qi];
	unsigned long flags;
	bool done;

	/* Fill the ring, then start the NIC. */
	q->end = UINT64_MAX;
	for (unsigned k = 0; k < p->ring_entries; k++)
		post_buf(m, q, &q->ring[k]);
	q->t0 = iopt_sim_now();
	q->w0 = q->t0 + wl_ns_to_cyc(&m->mc, p->warmup_ns);
	q->w1 = q->end = q->t0 + wl_ns_to_cyc(&m->mc, p->duration_ns);
	q->last_at = (double)q->t0;
	/* The ring counts as posted at the start. */
	for (unsigned k = 0; k < p->ring_entries; k++)
		q->ring[k].posted = q->t0;
	flags = plat_irq_save();
	rearm(m, q);
	plat_irq_restore(flags);

	wl_sleep_until(&m->mc, q->end);
	for (;;) {
		flags = plat_irq_save();
		done = q->done;
		plat_irq_restore(flags);
		if (done)
			break;
		plat_sleep_ns(10000);
	}
	for (unsigned k = 0; k < p->ring_entries; k++) {
		struct rx_buf *b = &q->ring[k];
		int err;

		if (!b->mapped)
			continue;
		err = wl_unmap(m->d, b->iova, p->buf_bytes);
		if (err)
			wl_err_note(&m->err, err);
		else
			m->unmaps_n++;
		b->mapped = false;
	}
}

int iopt_wl_rx_run(struct iopt_sim *sim, struct iopt_dma *d,
		   const struct iopt_wl_rx_params *p, struct iopt_wl_rx_result *r)
{
	struct rx_model m;
	struct wl_usage u;
	double secs;
	int ret;

	if (!sim || !p || !r)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	wl_machine(sim, &m.mc);
	ret = wl_rx_check(p, m.mc.cpus);
	if (ret)
		return ret;
	m.sim = sim;
	m.d = d;
	m.p = p;
	m.pkt_cyc = (double)(p->mss + p->wire_overhead) * 8.0 /
		    (p->link_gbps / p->streams) * m.mc.ghz;
	m.delay_cyc = wl_ns_to_cyc(&m.mc, p->irq_delay_ns);
	m.q = wl_calloc_lines(p->streams, sizeof(*m.q));
	ret = -ENOMEM;
	if (!m.q)
		goto out;
	for (unsigned i = 0; i < p->streams; i++) {
		m.q[i].m = &m;
		m.q[i].idx = i;
		m.q[i].cpu = wl_irq_cpu(p->irq_cpu, i, m.mc.cpus);
		m.q[i].ring = calloc(p->ring_entries, sizeof(*m.q[i].ring));
		if (!m.q[i].ring)
			goto out;
	}
	wl_usage_begin(sim, &u);
	ret = iopt_sim_run_threads(sim, p->streams, rx_thread, &m);
	if (ret)
		goto out;
	memset(r, 0, sizeof(*r));
	secs = (double)(p->duration_ns - p->warmup_ns) * 1e-9;
	r->gbps = (double)m.bytes * 8 / secs * 1e-9;
	r->pps = (double)m.packets / secs;
	r->cpu_util = wl_usage_end(sim, &u, m.mc.cpus);
	r->bytes = m.bytes;
	r->packets = m.packets;
	r->maps = m.maps_n;
	r->unmaps = m.unmaps_n;
	r->irqs = m.irqs;
	r->stalls = m.stalls;
	r->dma_errors = m.err.n;
	r->first_dma_error = m.err.first;
out:
	for (unsigned i = 0; m.q && i < p->streams; i++)
		free(m.q[i].ring);
	free(m.q);
	return ret;
}
