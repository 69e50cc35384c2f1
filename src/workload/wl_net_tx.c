/* SPDX-License-Identifier: MIT */
/*
 * Network transmit (iopt_wl_tx_run(), docs/workload.md "Network TX").
 *
 * Senders build skbs, map them and post them on their TX queue; the NIC
 * (one link, skbs in posting order) fixes each skb's completion cycle at
 * the doorbell and schedules the queue's coalesced completion interrupt;
 * the handler unmaps what has completed and wakes the senders waiting for
 * descriptors or socket space.
 *
 * Coalescing: a queue's completions form groups. A group opens with a
 * completion at f, and its timer interrupt is raised at f + usecs; it
 * closes at its frames-th completion c < f + usecs (an interrupt raised at
 * c, and the timer's record marked void: the engine cannot withdraw an
 * interrupt, so a void one costs its entry and returns) or at its timer.
 * A handler completes every skb done by its time, whichever group it is in.
 *
 * Ordering: a queue's counters and skb ring are under its lock, taken
 * with interrupts off by the senders (the handler runs with them off).
 * The handler is a queue's only consumer (its interrupt is on one CPU and
 * handlers do not nest): it reads the completed records outside the lock,
 * since senders write only records past the ring's head.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

struct tx_map {
	uint64_t iova, len;
};

/* One posted skb: its mappings and when the NIC has sent it. */
struct tx_skb {
	uint64_t done;			/* cycle */
	uint64_t payload;
	unsigned stream;
	unsigned nmaps;
	struct tx_map *maps;		/* frags + 1 slots */
};

struct tx_irq {
	struct tx_queue *q;
	bool cancelled;
	struct tx_irq *next;		/* free list */
};

struct tx_queue {
	struct tx_model *m;
	struct plat_spinlock lock;
	unsigned cpu;			/* its interrupt's */
	unsigned used;			/* descriptors taken */
	struct tx_skb *skb;		/* ring of ring_entries */
	uint64_t head, tail;		/* posted, completed */
	/* Coalescing (under the lock). */
	unsigned grp_n;
	uint64_t grp_first;
	struct tx_irq *grp_timer;
	uint64_t last_irq;		/* latest interrupt raised */
	struct tx_irq *free_irqs;
} WL_LINE_ALIGNED;

struct tx_stream {
	struct wl_wait wait;
	uint64_t inflight;		/* payload posted, not completed */
	double frac;
} WL_LINE_ALIGNED;

struct tx_model {
	struct iopt_sim *sim;
	struct iopt_dma *d;
	const struct iopt_wl_tx_params *p;
	struct wl_machine mc;
	struct tx_queue *q;
	struct tx_stream *st;
	struct tx_map *maps;		/* every skb record's slots */
	double pkt_cyc_per_byte;	/* link cycles per wire byte */
	uint64_t usecs_cyc;
	/* The NIC's link (the device's state). */
	uint64_t link_free;
	/* The run. */
	bool started;
	uint64_t t0, w0, w1, end;
	uint64_t bytes, packets, skbs;
	uint64_t maps_n, unmaps_n, irqs, waits;
	struct wl_err err;
};

static struct tx_irq *irq_get(struct tx_queue *q)
{
	struct tx_irq *e = q->free_irqs;

	if (e) {
		q->free_irqs = e->next;
	} else {
		e = malloc(sizeof(*e));
		if (!e)
			abort();	/* host memory for a record of the model */
	}
	e->q = q;
	e->cancelled = false;
	return e;
}

static void tx_irq(unsigned cpu, void *arg);

static struct tx_irq *irq_raise(struct tx_queue *q, uint64_t at)
{
	struct tx_irq *e = irq_get(q);

	if (iopt_sim_irq_at(q->m->sim, q->cpu, at, tx_irq, e))
		abort();	/* checked arguments: only host memory fails */
	if (at > q->last_irq)
		q->last_irq = at;
	return e;
}

/* The NIC takes the skb: its completion cycle and the interrupt schedule.
 * Under q's lock. */
static uint64_t nic_post(struct tx_model *m, struct tx_queue *q, uint64_t now,
			 uint64_t payload)
{
	const struct iopt_wl_tx_params *p = m->p;
	uint64_t wire, done;

	wire = (payload + p->mss - 1) / p->mss;
	wire = payload + wire * p->wire_overhead;
	done = (m->link_free > now ? m->link_free : now) +
	       (uint64_t)((double)wire * m->pkt_cyc_per_byte + 0.5);
	m->link_free = done;

	if (q->grp_n && done > q->grp_first + m->usecs_cyc)
		q->grp_n = 0;		/* the open group's timer came first */
	if (!q->grp_n) {
		q->grp_first = done;
		q->grp_timer = irq_raise(q, done + m->usecs_cyc);
	}
	if (++q->grp_n == p->irq_frames) {
		q->grp_timer->cancelled = true;
		irq_raise(q, done);
		q->grp_n = 0;
	}
	return done;
}

static void count_done(struct tx_model *m, uint64_t done, uint64_t payload)
{
	if (done < m->w0 || done >= m->w1)
		return;
	m->bytes += payload;
	m->packets += (payload + m->p->mss - 1) / m->p->mss;
	m->skbs++;
}

/* Wake the waiting senders of q. Under q's lock. */
static void kick_streams(struct tx_model *m, struct tx_queue *q)
{
	unsigned qi = (unsigned)(q - m->q);

	for (unsigned s = qi; s < m->p->streams; s += m->p->queues) {
		if (m->st[s].wait.waiting) {
			m->st[s].wait.waiting = false;
			wl_wait_kick(&m->st[s].wait);
		}
	}
}

static void tx_irq(unsigned cpu, void *arg)
{
	struct tx_irq *e = arg;
	struct tx_queue *q = e->q;
	struct tx_model *m = q->m;
	uint64_t now, n, i;
	unsigned descs = 0;
	double frac = 0;

	(void)cpu;
	plat_spin_lock(&q->lock);
	e->next = q->free_irqs;
	q->free_irqs = e;
	if (e->cancelled) {
		plat_spin_unlock(&q->lock);
		return;
	}
	m->irqs++;
	now = iopt_sim_now();
	for (n = q->tail; n < q->head && q->skb[n % m->p->ring_entries].done <= now;)
		n++;
	plat_spin_unlock(&q->lock);

	for (i = q->tail; i < n; i++) {
		struct tx_skb *s = &q->skb[i % m->p->ring_entries];

		wl_work((double)m->p->clean_cycles, &frac);
		for (unsigned k = 0; k < s->nmaps; k++) {
			int err = wl_unmap(m->d, s->maps[k].iova, s->maps[k].len);

			if (err)
				wl_err_note(&m->err, err);
			else
				m->unmaps_n++;
		}
		descs += s->nmaps;
	}

	plat_spin_lock(&q->lock);
	for (i = q->tail; i < n; i++) {
		struct tx_skb *s = &q->skb[i % m->p->ring_entries];

		m->st[s->stream].inflight -= s->payload;
	}
	q->tail = n;
	q->used -= descs;
	kick_streams(m, q);
	plat_spin_unlock(&q->lock);
}

/* Map one skb: the head, then the payload in frags pieces. The number of
 * mappings, or a negative errno with nothing left mapped. */
static int map_skb(struct tx_model *m, uint64_t paddr, uint64_t payload,
		   struct tx_map *maps)
{
	const struct iopt_wl_tx_params *p = m->p;
	unsigned n = 0, frags = p->frags;
	uint64_t piece, off = 0;
	int err = 0;

	if (frags > payload)
		frags = (unsigned)payload;
	piece = (payload + frags - 1) / frags;
	if (p->head_bytes) {
		maps[n].len = p->head_bytes;
		err = wl_map(m->d, paddr, p->head_bytes, IOPT_READ, p->dma_mask,
			     &maps[n].iova);
		if (!err)
			n++;
		paddr += (p->head_bytes + 0xfffull) & ~0xfffull;
	}
	while (!err && off < payload) {
		uint64_t len = payload - off < piece ? payload - off : piece;

		maps[n].len = len;
		err = wl_map(m->d, paddr + off, len, IOPT_READ, p->dma_mask,
			     &maps[n].iova);
		if (!err)
			n++;
		off += len;
	}
	if (!err)
		return (int)n;
	while (n--)
		wl_unmap(m->d, maps[n].iova, maps[n].len);
	return err;
}

/* Take descriptors and socket space for an skb, sleeping until there are
 * some. Returns with q's lock held and interrupts off (*flags). */
static void reserve(struct tx_model *m, struct tx_queue *q,
		    struct tx_stream *st, unsigned descs, uint64_t payload,
		    unsigned long *flags)
{
	const struct iopt_wl_tx_params *p = m->p;

	*flags = plat_irq_save();
	plat_spin_lock(&q->lock);
	while (q->used + descs > p->ring_entries ||
	       (st->inflight && st->inflight + payload > p->sndbuf_bytes)) {
		st->wait.waiting = true;
		m->waits++;
		plat_spin_unlock(&q->lock);
		plat_irq_restore(*flags);
		wl_wait_sleep(&st->wait);
		*flags = plat_irq_save();
		plat_spin_lock(&q->lock);
	}
}

static void unlock_q(struct tx_queue *q, unsigned long flags)
{
	plat_spin_unlock(&q->lock);
	plat_irq_restore(flags);
}

static void send_skb(struct tx_model *m, unsigned si, uint64_t paddr,
		     uint64_t payload)
{
	const struct iopt_wl_tx_params *p = m->p;
	struct tx_queue *q = &m->q[si % p->queues];
	struct tx_stream *st = &m->st[si];
	struct tx_map maps[WL_TX_MAX_FRAGS + 1];
	unsigned descs = (p->head_bytes ? 1 : 0) +
		(p->frags < payload ? p->frags : (unsigned)payload);
	unsigned long flags;
	struct tx_skb *s;
	int n;

	wl_work((double)p->skb_cycles + p->byte_cycles * (double)payload,
		&st->frac);
	reserve(m, q, st, descs, payload, &flags);
	q->used += descs;
	st->inflight += payload;
	unlock_q(q, flags);

	/* The driver's xmit: map, then ring the doorbell. */
	n = map_skb(m, paddr, payload, maps);

	flags = plat_irq_save();
	plat_spin_lock(&q->lock);
	if (n < 0) {
		/* Dropped, as a driver frees an skb it cannot map. */
		wl_err_note(&m->err, n);
		q->used -= descs;
		st->inflight -= payload;
		kick_streams(m, q);
		unlock_q(q, flags);
		return;
	}
	m->maps_n += (unsigned)n;
	s = &q->skb[q->head % p->ring_entries];
	memcpy(s->maps, maps, (unsigned)n * sizeof(maps[0]));
	s->nmaps = (unsigned)n;
	s->payload = payload;
	s->stream = si;
	q->used += (unsigned)n;
	q->used -= descs;
	s->done = nic_post(m, q, iopt_sim_now(), payload);
	count_done(m, s->done, payload);
	q->head++;
	unlock_q(q, flags);
}

/* Wait until everything stream si posted has completed and its queue's
 * last interrupt (a void timer too) has passed. */
static void drain(struct tx_model *m, unsigned si)
{
	struct tx_queue *q = &m->q[si % m->p->queues];
	struct tx_stream *st = &m->st[si];
	unsigned long flags;
	uint64_t last;

	flags = plat_irq_save();
	plat_spin_lock(&q->lock);
	while (st->inflight) {
		st->wait.waiting = true;
		plat_spin_unlock(&q->lock);
		plat_irq_restore(flags);
		wl_wait_sleep(&st->wait);
		flags = plat_irq_save();
		plat_spin_lock(&q->lock);
	}
	last = q->last_irq;
	unlock_q(q, flags);
	wl_sleep_until(&m->mc, last + 1);
}

static void tx_thread(unsigned si, void *arg)
{
	struct tx_model *m = arg;
	const struct iopt_wl_tx_params *p = m->p;
	struct tx_stream *st = &m->st[si];
	/* A stream's buffers: its own 64 MiB, reused in turn. */
	uint64_t base = p->paddr + (uint64_t)si * (64ull << 20);
	uint64_t skb_span = ((p->skb_bytes + p->head_bytes) | 0xfffull) + 1 +
			    0x1000;
	uint64_t slots = (64ull << 20) / skb_span, k = 0;

	if (!m->started) {
		m->started = true;
		m->t0 = iopt_sim_now();
		m->w0 = m->t0 + wl_ns_to_cyc(&m->mc, p->warmup_ns);
		m->w1 = m->end = m->t0 + wl_ns_to_cyc(&m->mc, p->duration_ns);
	}
	wl_wait_init(&st->wait);
	while (iopt_sim_now() < m->end) {
		uint64_t left = p->send_bytes;

		wl_work((double)p->send_cycles, &st->frac);
		while (left) {
			uint64_t pl = left < p->skb_bytes ? left : p->skb_bytes;

			send_skb(m, si, base + (k++ % slots) * skb_span, pl);
			left -= pl;
		}
	}
	drain(m, si);
}

int iopt_wl_tx_run(struct iopt_sim *sim, struct iopt_dma *d,
		   const struct iopt_wl_tx_params *p, struct iopt_wl_tx_result *r)
{
	struct tx_model m;
	struct wl_usage u;
	double secs;
	int ret;

	if (!sim || !p || !r)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	wl_machine(sim, &m.mc);
	ret = wl_tx_check(p, m.mc.cpus);
	if (ret)
		return ret;
	m.sim = sim;
	m.d = d;
	m.p = p;
	m.pkt_cyc_per_byte = 8.0 / p->link_gbps * m.mc.ghz;
	m.usecs_cyc = wl_ns_to_cyc(&m.mc, p->irq_usecs_ns);
	m.q = wl_calloc_lines(p->queues, sizeof(*m.q));
	m.st = wl_calloc_lines(p->streams, sizeof(*m.st));
	m.maps = calloc((size_t)p->queues * p->ring_entries * (p->frags + 1),
			sizeof(*m.maps));
	ret = -ENOMEM;
	if (!m.q || !m.st || !m.maps)
		goto out;
	for (unsigned i = 0; i < p->queues; i++) {
		struct tx_queue *q = &m.q[i];

		q->m = &m;
		q->cpu = wl_irq_cpu(p->irq_cpu, i, m.mc.cpus);
		plat_spin_init(&q->lock);
		q->skb = calloc(p->ring_entries, sizeof(*q->skb));
		if (!q->skb)
			goto out;
		for (unsigned k = 0; k < p->ring_entries; k++)
			q->skb[k].maps = &m.maps[((size_t)i * p->ring_entries + k) *
						 (p->frags + 1)];
	}
	wl_usage_begin(sim, &u);
	ret = iopt_sim_run_threads(sim, p->streams, tx_thread, &m);
	if (ret)
		goto out;
	memset(r, 0, sizeof(*r));
	secs = (double)(m.w1 - m.w0) / m.mc.ghz * 1e-9;
	r->gbps = (double)m.bytes * 8 / secs * 1e-9;
	r->pps = (double)m.packets / secs;
	r->skbs_per_s = (double)m.skbs / secs;
	r->cpu_util = wl_usage_end(sim, &u, m.mc.cpus);
	r->bytes = m.bytes;
	r->packets = m.packets;
	r->skbs = m.skbs;
	r->maps = m.maps_n;
	r->unmaps = m.unmaps_n;
	r->irqs = m.irqs;
	r->waits = m.waits;
	r->dma_errors = m.err.n;
	r->first_dma_error = m.err.first;
out:
	for (unsigned i = 0; m.q && i < p->queues; i++) {
		struct tx_irq *e, *n;

		for (e = m.q[i].free_irqs; e; e = n) {
			n = e->next;
			free(e);
		}
		free(m.q[i].skb);
	}
	free(m.q);
	free(m.st);
	free(m.maps);
	return ret;
}
