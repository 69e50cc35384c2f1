/* SPDX-License-Identifier: MIT */
/*
 * RCU in simulated time (the sim backend's plat_rcu_* and plat_call_rcu).
 *
 * Read side: a nesting count per simulated CPU. A CPU outside every read
 * section is quiescent. Callbacks queued by plat_call_rcu() wait in
 * "next"; a grace period takes them all ("wait") and notes every CPU that
 * is inside a read section at that moment; it ends when each of those has
 * left its outermost section (or finished). Its callbacks then move to
 * "ready", and the callback CPU, a simulated CPU of its own like liburcu's
 * call_rcu thread, runs them in queue order at its simulated time: the
 * points where callbacks run are fixed by the seed like everything else.
 * plat_rcu_barrier() waits, in simulated time, until every callback queued
 * before it has run.
 *
 * The host context (no simulated CPU) has a nesting count of its own that
 * no grace period waits for; its callbacks join the ambient simulation's
 * queue, or, with no simulation, wait for the host's plat_rcu_barrier().
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

static unsigned host_nest;
static struct plat_rcu_head *host_queue, *host_queue_tail;

static void list_append(struct plat_rcu_head **head, struct plat_rcu_head **tail,
			struct plat_rcu_head *h)
{
	h->urcu[0] = NULL;
	if (*head)
		(*tail)->urcu[0] = h;
	else
		*head = h;
	*tail = h;
}

static void list_splice(struct plat_rcu_head **head, struct plat_rcu_head **tail,
			struct plat_rcu_head **from, struct plat_rcu_head **from_tail)
{
	if (!*from)
		return;
	if (*head)
		(*tail)->urcu[0] = *from;
	else
		*head = *from;
	*tail = *from_tail;
	*from = *from_tail = NULL;
}

bool sim_rcu_pending(const struct iopt_sim *s)
{
	return s->rcu_done < s->rcu_queued;
}

static void *rcu_cpu_main(void *arg);
static void gp_start(struct iopt_sim *s, uint64_t now);

static void gp_end(struct iopt_sim *s, uint64_t now)
{
	struct sim_cpu *cb = s->rcu_cpu;

	s->grace_periods++;
	s->gp_active = false;
	list_splice(&s->rcu_ready, &s->rcu_ready_tail, &s->rcu_wait,
		    &s->rcu_wait_tail);
	if (cb && cb->state == SIM_IDLE)
		sim_wake(s, cb, now);
	if (s->rcu_next)
		gp_start(s, now);
}

static void gp_start(struct iopt_sim *s, uint64_t now)
{
	list_splice(&s->rcu_wait, &s->rcu_wait_tail, &s->rcu_next,
		    &s->rcu_next_tail);
	s->gp_active = true;
	s->gp_left = 0;
	for (unsigned i = 0; i < s->nslots; i++) {
		struct sim_cpu *c = s->cpu[i];

		if (c && c->rcu_nest && c->state != SIM_FREE &&
		    c->state != SIM_DONE) {
			c->gp_wait = true;
			s->gp_left++;
		}
	}
	if (!s->gp_left)
		gp_end(s, now);
}

/* c leaves its outermost read section (or finishes). */
static void rcu_quiescent(struct iopt_sim *s, struct sim_cpu *c)
{
	if (c->gp_wait) {
		c->gp_wait = false;
		if (--s->gp_left == 0)
			gp_end(s, c->now);
	}
}

void sim_rcu_cpu_done(struct iopt_sim *s, struct sim_cpu *c)
{
	c->rcu_nest = 0;
	rcu_quiescent(s, c);
}

void sim_rcu_queue(struct iopt_sim *s, struct plat_rcu_head *head)
{
	uint64_t now = sim_cur ? sim_cur->now : s->now;

	if (!s->rcu_cpu) {
		struct sim_cpu *cb;

		if (sim_thread_new(s, true, &cb)) {
			fprintf(stderr, "iopt sim: no CPU left for RCU callbacks\n");
			abort();
		}
		cb->thread_fn = rcu_cpu_main;
		cb->arg = s;
		s->rcu_cpu = cb;
		sim_cpu_launch(s, cb, now);
	}
	list_append(&s->rcu_next, &s->rcu_next_tail, head);
	s->rcu_queued++;
	if (!s->gp_active)
		gp_start(s, now);
}

/* The callback CPU: runs ready callbacks, idles when there are none. */
static void *rcu_cpu_main(void *arg)
{
	struct iopt_sim *s = arg;
	struct sim_cpu *c = s->rcu_cpu;

	for (;;) {
		while (s->rcu_ready) {
			struct plat_rcu_head *h = s->rcu_ready;
			struct sim_cpu **pw;

			s->rcu_ready = h->urcu[0];
			if (!s->rcu_ready)
				s->rcu_ready_tail = NULL;
			sim_charge(s, c, IOPT_SIM_OP_RCU, s->p.call);
			h->fn(h);
			s->rcu_callbacks++;
			s->rcu_done++;
			for (pw = &s->rcu_waiters; *pw;) {
				struct sim_cpu *w = *pw;

				if (w->rcu_target <= s->rcu_done) {
					*pw = w->wait_next;
					sim_wake(s, w, c->now);
				} else {
					pw = &w->wait_next;
				}
			}
		}
		c->state = SIM_IDLE;
		sim_block(s, c);
	}
	return NULL;
}

void plat_rcu_read_lock(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c) {
		host_nest++;
		return;
	}
	c->rcu_nest++;
	sim_charge(sim_cur_sim, c, IOPT_SIM_OP_RCU, sim_cur_sim->p.call);
}

void plat_rcu_read_unlock(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c) {
		host_nest--;
		return;
	}
	if (--c->rcu_nest == 0)
		rcu_quiescent(sim_cur_sim, c);
	sim_charge(sim_cur_sim, c, IOPT_SIM_OP_RCU, sim_cur_sim->p.call);
}

void plat_call_rcu(struct plat_rcu_head *head, plat_rcu_fn fn)
{
	struct iopt_sim *s;

	head->fn = fn;
	if (sim_cur) {
		sim_rcu_queue(sim_cur_sim, head);
		sim_charge(sim_cur_sim, sim_cur, IOPT_SIM_OP_RCU,
			   sim_cur_sim->p.call);
		return;
	}
	s = sim_raw ? NULL : sim_ambient(false);
	if (s)
		sim_rcu_queue(s, head);
	else
		list_append(&host_queue, &host_queue_tail, head);
}

void plat_rcu_barrier(void)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (c) {
		s = sim_cur_sim;
		sim_charge(s, c, IOPT_SIM_OP_RCU, s->p.call);
		if (s->rcu_done >= s->rcu_queued)
			return;
		sim_no_block_in_irq(c, "plat_rcu_barrier()");
		c->rcu_target = s->rcu_queued;
		c->wait_next = s->rcu_waiters;
		s->rcu_waiters = c;
		c->state = SIM_BLOCKED;
		sim_block(s, c);
		return;
	}
	s = sim_raw ? NULL : sim_ambient(false);
	if (s)
		sim_host_rcu_wait(s, s->rcu_queued);
	while (host_queue) {
		struct plat_rcu_head *h = host_queue;

		host_queue = h->urcu[0];
		h->fn(h);
	}
	host_queue_tail = NULL;
}
