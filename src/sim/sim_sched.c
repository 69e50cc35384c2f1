/* SPDX-License-Identifier: MIT */
/*
 * Threads on CPUs: the operating-system scheduler model and interrupts
 * (iopgtable/sim.h, docs/sim.md "Threads and the scheduler" and
 * "Interrupts").
 *
 * A simulated thread (struct sim_cpu) runs on one CPU (struct sim_hw,
 * thread->hw). The engine's heap holds at most one thread per CPU, the
 * one that has it (hw->cur); the others wait in the CPU's FIFO run queue
 * with their times frozen. So the heap orders CPUs, as it did when every
 * thread had a CPU of its own, and nothing here costs anything then: the
 * run queues stay empty and no event is due but interrupts.
 *
 * Each CPU keeps one cycle, hw->event, at which its thread must be looked
 * at: the earliest pending interrupt, or the end of the time slice while
 * others wait. sim_charge_more() compares the running thread's time with
 * it after every charge (one comparison) and calls sim_sched_event() when
 * it has passed:
 *  - interrupts due are delivered, one after another, unless the thread
 *    has them disabled (explicitly, or by holding a library spinlock:
 *    those are spin_lock_irqsave's) or a handler already runs on it: each charges
 *    irq_entry and runs its handler on the thread's stack, in interrupt
 *    context (not preemptible, no nesting, no blocking);
 *  - a thread whose slice ended while others wait, and that can be
 *    preempted (no preemption or interrupt disabling, no handler, not a
 *    spinlock holder under preempt_spin), drains its store buffer (the
 *    switch is a full barrier), goes to the tail of the queue, and the
 *    head gets the CPU.
 * A CPU changing threads charges ctx_switch to the thread switched in; a
 * thread resuming on a CPU that nothing else ran on since pays nothing
 * (the idle exit is the wake-up's).
 *
 * An interrupt raised for an idle CPU is run by that CPU's idle context,
 * a thread created on first need that sits in the heap ("armed") at the
 * interrupt's cycle while the CPU stays idle; a thread that takes the CPU
 * first disarms it and takes the interrupt itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

#define NEVER UINT64_MAX

/* c's CPU has an event due (an interrupt, a slice's end). */
static inline bool event_due(const struct sim_cpu *c)
{
	return sim_cur_sim->hw[c->hw].event <= c->now;
}

static void hw_event(struct sim_hw *h)
{
	uint64_t e = h->irqs ? h->irqs->at : NEVER;

	if (h->rq_n && h->slice_end < e)
		e = h->slice_end;
	h->event = e;
}

static void rq_push(struct sim_hw *h, struct sim_cpu *c)
{
	c->rq_next = NULL;
	if (h->rq_tail)
		h->rq_tail->rq_next = c;
	else
		h->rq_head = c;
	h->rq_tail = c;
	h->rq_n++;
}

static struct sim_cpu *rq_pop(struct sim_hw *h)
{
	struct sim_cpu *c = h->rq_head;

	h->rq_head = c->rq_next;
	if (!h->rq_head)
		h->rq_tail = NULL;
	h->rq_n--;
	return c;
}

/* The slice of a thread that gets its CPU at cycle t. */
static uint64_t slice_from(const struct iopt_sim *s, uint64_t t)
{
	return s->p.sched_slice ? t + s->p.sched_slice : NEVER;
}

/* n gets CPU h at cycle t (not before its own time). */
static void dispatch(struct iopt_sim *s, struct sim_hw *h, struct sim_cpu *n,
		     uint64_t t)
{
	if (n->now < t)
		n->now = t;
	if (h->last && h->last != n) {
		n->now += s->p.ctx_switch;
		n->cycles += s->p.ctx_switch;
		s->ctx_switches++;
	}
	h->last = n;
	h->cur = n;
	h->slice_end = slice_from(s, n->now);
	n->hw = (unsigned)(h - s->hw);
	n->state = SIM_RUNNABLE;
	n->key = sim_rand(s) | 1;
	sim_heap_push(s, n);
	hw_event(h);
}

/* ---- idle contexts ------------------------------------------------------- */

static void idle_main_loop(struct iopt_sim *s, struct sim_cpu *me);

static void *idle_main(void *arg)
{
	idle_main_loop(sim_cur_sim, arg);
	return NULL;
}

/* The idle CPU h has an interrupt pending: its idle context waits in the
 * heap for it (created on first need). */
static void idle_arm(struct iopt_sim *s, struct sim_hw *h)
{
	struct sim_cpu *t = h->idle;
	uint64_t at = h->irqs->at;

	if (at < h->idle_at)
		at = h->idle_at;
	if (!t) {
		if (sim_thread_new(s, true, &t)) {
			fprintf(stderr, "iopt sim: no thread slot left for CPU "
				"%u's idle context\n", (unsigned)(h - s->hw));
			abort();
		}
		t->thread_fn = idle_main;
		t->arg = t;
		t->idle_task = true;
		t->hw = (unsigned)(h - s->hw);
		h->idle = t;
		sim_cpu_launch(s, t, at);	/* arms it (sim_sched_wake) */
		return;
	}
	if (t->heap_pos >= 0) {
		/* Armed for a later one: this one comes first. Its time may
		 * go back to this one's, never before the CPU went idle
		 * (after the context's last run). */
		if (at < t->now) {
			sim_heap_remove(s, t);
			t->now = at;
			t->key = sim_rand(s) | 1;
			sim_heap_push(s, t);
		}
		return;
	}
	if (t->state != SIM_IDLE)
		return;			/* running: it delivers it */
	if (t->now < at)
		t->now = at;
	t->state = SIM_RUNNABLE;
	t->key = sim_rand(s) | 1;
	sim_heap_push(s, t);
}

/* A thread takes idle CPU h: its idle context stands down. */
static void idle_disarm(struct iopt_sim *s, struct sim_hw *h)
{
	struct sim_cpu *t = h->idle;

	if (t && t->heap_pos >= 0 && !h->cur) {
		sim_heap_remove(s, t);
		t->state = SIM_IDLE;
	}
}

static void irq_deliver(struct iopt_sim *s, struct sim_cpu *c,
			struct sim_hw *h);

static void idle_main_loop(struct iopt_sim *s, struct sim_cpu *me)
{
	struct sim_hw *h = &s->hw[me->hw];

	for (;;) {
		/* Armed and resumed: nobody took the CPU meanwhile. */
		h->cur = me;
		irq_deliver(s, me, h);
		/* Give the CPU to whoever queued, or idle (re-armed by
		 * sim_sched_release() if more is pending). */
		me->state = SIM_IDLE;
		sim_block(s, me);
	}
}

/* ---- the CPU a thread holds ------------------------------------------- */

void sim_sched_release(struct iopt_sim *s, struct sim_cpu *c)
{
	struct sim_hw *h = &s->hw[c->hw];

	if (h->cur != c)
		return;
	h->cur = NULL;
	if (h->rq_n) {
		dispatch(s, h, rq_pop(h), c->now);
		return;
	}
	h->idle_at = c->now;
	if (h->irqs)
		idle_arm(s, h);
	hw_event(h);
}

/* No thread of its own runs on h (its idle context may, for a handler). */
static bool hw_idle(const struct sim_hw *h)
{
	return !h->cur || h->cur->idle_task;
}

/* The lowest-numbered idle CPU of the run's CPUs, or NULL. */
static struct sim_hw *idle_cpu(struct iopt_sim *s)
{
	for (unsigned i = 0; i < s->p.cpus; i++)
		if (hw_idle(&s->hw[i]))
			return &s->hw[i];
	return NULL;
}

void sim_sched_wake(struct iopt_sim *s, struct sim_cpu *c, uint64_t at)
{
	struct sim_hw *h = &s->hw[c->hw];

	if (c->now < at)
		c->now = at;
	if (c->idle_task) {
		/* Launched for an interrupt: armed, the CPU stays idle. */
		c->state = SIM_RUNNABLE;
		c->key = sim_rand(s) | 1;
		sim_heap_push(s, c);
		return;
	}
	if (!hw_idle(h) && s->p.wake_idle && c->hw < s->p.cpus) {
		struct sim_hw *q = idle_cpu(s);

		if (q)
			h = q;
	}
	if (!h->cur) {
		uint64_t t = c->now > h->idle_at ? c->now : h->idle_at;

		idle_disarm(s, h);
		dispatch(s, h, c, t);
		return;
	}
	/* Busy: wait for it. A slice that ran out while the CPU's thread
	 * was alone ends at the next slice boundary from its start. */
	c->state = SIM_QUEUED;
	c->hw = (unsigned)(h - s->hw);
	rq_push(h, c);
	if (h->slice_end != NEVER && h->slice_end < c->now) {
		uint64_t behind = c->now - h->slice_end;

		h->slice_end += (behind / s->p.sched_slice + 1) * s->p.sched_slice;
	}
	hw_event(h);
}

/* params.share_cpus: the run's CPU with the fewest unfinished threads. */
unsigned sim_sched_place(const struct iopt_sim *s)
{
	unsigned load[IOPT_SIM_MAX_CPUS] = { 0 }, best = 0;

	for (unsigned i = 0; i < s->nslots; i++) {
		const struct sim_cpu *c = s->cpu[i];

		if (c && !c->idle_task && c != s->rcu_cpu && c->hw < s->p.cpus &&
		    c->state != SIM_FREE && c->state != SIM_DONE)
			load[c->hw]++;
	}
	for (unsigned i = 1; i < s->p.cpus; i++)
		if (load[i] < load[best])
			best = i;
	return best;
}

/* ---- interrupts ------------------------------------------------------------ */

static bool irq_ok(const struct sim_cpu *c)
{
	return !c->in_irq && !c->irq_off && !c->spin_held && !sim_raw;
}

static void irq_deliver(struct iopt_sim *s, struct sim_cpu *c, struct sim_hw *h)
{
	while (h->irqs && h->irqs->at <= c->now && irq_ok(c)) {
		struct sim_irq *q = h->irqs;

		h->irqs = q->next;
		hw_event(h);
		c->in_irq = true;
		s->interrupts++;
		sim_charge(s, c, IOPT_SIM_OP_IRQ, s->p.irq_entry);
		q->fn(c->hw, q->arg);
		c->in_irq = false;
		q->next = s->irq_free;
		s->irq_free = q;
	}
}

static bool preemptible(const struct sim_cpu *c)
{
	return !c->preempt && !c->irq_off && !c->in_irq && !c->idle_task &&
	       !(c->spin_held && sim_cur_sim->p.preempt_spin) && !sim_raw;
}

void sim_sched_event(struct iopt_sim *s, struct sim_cpu *c)
{
	struct sim_hw *h = &s->hw[c->hw];
	uint64_t drain;

	irq_deliver(s, c, h);
	if (!h->rq_n || c->now < h->slice_end || !preemptible(c) ||
	    h->cur != c) {
		hw_event(h);
		return;
	}
	/* Preempted: the switch orders what it stored (a full barrier). */
	drain = sim_sb_drain_all(s, c);
	c->now += drain;
	c->cycles += drain;
	s->preemptions++;
	c->state = SIM_QUEUED;
	rq_push(h, c);
	h->cur = NULL;
	dispatch(s, h, rq_pop(h), c->now);
	sim_block(s, c);
}

void sim_spend(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
	       uint64_t cycles)
{
	bool first = true;

	do {
		uint64_t e = s->hw[c->hw].event, step = cycles;

		if (e > c->now && e - c->now < cycles)
			step = e - c->now;
		if (first)
			sim_charge(s, c, op, step);
		else
			sim_charge_more(s, c, op, step);
		first = false;
		cycles -= step;
	} while (cycles);
}

static int irq_raise(struct iopt_sim *s, unsigned cpu, uint64_t at,
		     iopt_sim_irq_fn fn, void *arg)
{
	struct sim_hw *h = &s->hw[cpu];
	struct sim_irq *q = s->irq_free, **pp;

	if (q)
		s->irq_free = q->next;
	else if (!(q = malloc(sizeof(*q))))
		return -ENOMEM;
	*q = (struct sim_irq){ at, s->irq_seq++, fn, arg, NULL };
	for (pp = &h->irqs; *pp && (*pp)->at <= at; pp = &(*pp)->next)
		;
	q->next = *pp;
	*pp = q;
	hw_event(h);
	if (!h->cur)
		idle_arm(s, h);
	return 0;
}

void sim_no_block_in_irq(const struct sim_cpu *c, const char *what)
{
	if (plat_likely(!c->in_irq))
		return;
	fprintf(stderr, "iopt sim: %s inside an interrupt handler on CPU %u\n",
		what, c->hw);
	abort();
}

/* plat_sleep_ns(): a timer interrupt at the deadline wakes the sleeper. */
static void sleep_wake(unsigned cpu, void *arg)
{
	struct sim_cpu *t = arg;
	struct iopt_sim *s = sim_cur_sim;

	(void)cpu;
	t->sleeping = false;
	sim_sched_wake(s, t, sim_cur->now);
}

void sim_sleep_until(struct iopt_sim *s, struct sim_cpu *c, uint64_t until)
{
	sim_no_block_in_irq(c, "plat_sleep_ns()");
	if (irq_raise(s, c->hw, until, sleep_wake, c)) {
		/* No memory for the timer: spend the time instead. */
		sim_spend(s, c, IOPT_SIM_OP_WORK, until > c->now ? until - c->now : 0);
		return;
	}
	c->sleeping = true;
	c->state = SIM_BLOCKED;
	sim_block(s, c);
}

void sim_sched_fini(struct iopt_sim *s)
{
	struct sim_irq *q, *n;

	for (unsigned i = 0; i < IOPT_SIM_MAX_CPUS; i++)
		for (q = s->hw[i].irqs; q; q = n) {
			n = q->next;
			free(q);
		}
	for (q = s->irq_free; q; q = n) {
		n = q->next;
		free(q);
	}
}

/* ---- public API ------------------------------------------------------------ */

int iopt_sim_irq_at(struct iopt_sim *sim, unsigned cpu, uint64_t at,
		    iopt_sim_irq_fn fn, void *arg)
{
	if (!sim || !fn || cpu >= sim->p.cpus)
		return -EINVAL;
	return irq_raise(sim, cpu, at, fn, arg);
}

unsigned long iopt_sim_irq_save(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c || sim_raw)
		return 0;
	return c->irq_off++ ? 1 : 0;
}

void iopt_sim_irq_restore(unsigned long flags)
{
	struct sim_cpu *c = sim_cur;

	if (!c || sim_raw || !c->irq_off)
		return;
	(void)flags;
	if (--c->irq_off == 0 && event_due(c))
		sim_sched_event(sim_cur_sim, c);
}

void iopt_sim_preempt_disable(void)
{
	if (sim_cur && !sim_raw)
		sim_cur->preempt++;
}

void iopt_sim_preempt_enable(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c || sim_raw || !c->preempt)
		return;
	if (--c->preempt == 0 && event_due(c))
		sim_sched_event(sim_cur_sim, c);
}

/* A library spinlock section: irqsave always, non-preemptible under
 * preempt_spin. */
void sim_spin_hold(void)
{
	if (sim_cur && !sim_raw)
		sim_cur->spin_held++;
}

void sim_spin_unhold(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c || sim_raw || !c->spin_held)
		return;
	if (--c->spin_held == 0 && event_due(c))
		sim_sched_event(sim_cur_sim, c);
}

int iopt_sim_in_irq(void)
{
	return sim_cur && sim_cur->in_irq;
}

unsigned iopt_sim_thread(void)
{
	return sim_cur ? sim_cur->tid : 0;
}
