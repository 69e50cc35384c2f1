/* SPDX-License-Identifier: MIT */
/*
 * The simulation backend's out-of-line platform operations (plat_sim.h):
 * mutexes, threads, time, CPU identity, spin-waits and per-CPU storage, as
 * calls into the engine (src/sim/, docs/sim.md). In the host context (no
 * running simulated CPU) each behaves like a single-threaded host's, and
 * where it would wait for a simulated CPU (a join, a sleep, a mutex a
 * suspended CPU holds) it runs the ambient simulation until it need not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform.h"
#include "../sim/sim_internal.h"

#define HOST_HOLDER (IOPT_SIM_MAX_CPUS + 1)

/* ---- per-CPU storage ------------------------------------------------------ */

static unsigned local_keys;
/* The host context's instances (no simulated CPU). */
static struct sim_cpu host_locals;

void *sim_cpu_local(struct sim_local_key *key)
{
	struct sim_cpu *c = sim_cur ? sim_cur : &host_locals;
	unsigned id = key->id;

	if (plat_unlikely(!id))
		id = key->id = ++local_keys;
	if (plat_unlikely(id >= c->nlocals || !c->locals[id])) {
		if (id >= c->nlocals) {
			unsigned n = id + 8;
			void **l = realloc(c->locals, n * sizeof(*l));

			if (!l)
				abort();	/* no way to report it */
			memset(l + c->nlocals, 0, (n - c->nlocals) * sizeof(*l));
			c->locals = l;
			c->nlocals = n;
		}
		c->locals[id] = calloc(1, key->size);
		if (!c->locals[id])
			abort();
	}
	return c->locals[id];
}

/* ---- mutex ------------------------------------------------------------------ */

int plat_mutex_init(struct plat_mutex *m)
{
	memset(m, 0, sizeof(*m));
	return 0;
}

void plat_mutex_destroy(struct plat_mutex *m)
{
	(void)m;
}

static bool mutex_free(void *m)
{
	return !((struct plat_mutex *)m)->word;
}

void plat_mutex_lock(struct plat_mutex *m);

/*
 * Inside a device call (plat_mmio_begin(), raw mode) the model's mutex is
 * held by a simulated CPU that called the model directly and was switched
 * out inside it: the device call's CPU leaves raw mode, waits for the
 * mutex as any CPU does, and goes on with the call in raw mode.
 */
static void mmio_mutex_wait(struct plat_mutex *m)
{
	struct sim_cpu *c = sim_mmio_cpu;

	sim_mmio_cpu = NULL;
	sim_raw--;
	sim_cur = c;
	sim_icount = 0;		/* the model's instructions: not c's */
	plat_mutex_lock(m);
	sim_cur = NULL;
	sim_raw++;
	sim_mmio_cpu = c;
}

void plat_mutex_lock(struct plat_mutex *m)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (!c) {
		if (m->word && sim_raw && sim_raw_escape)
			longjmp(*sim_raw_escape, 1);
		if (m->word && sim_mmio_cpu) {
			mmio_mutex_wait(m);
			return;
		}
		if (m->word) {
			s = sim_raw ? NULL : sim_ambient(false);
			if (!s) {
				fprintf(stderr, "iopt sim: the host context locks "
					"a mutex that is held\n");
				abort();
			}
			sim_host_until(s, mutex_free, m);
		}
		m->word = 1;
		m->holder = HOST_HOLDER;
		return;
	}
	s = sim_cur_sim;
	sim_ipoint(s, c);
	/* The lock word's line, as an atomic exchange would touch it, near
	 * or far (a full barrier: the store buffer drains first). */
	sim_charge(s, c, IOPT_SIM_OP_LOCK,
		   sim_sb_drain_all(s, c) +
		   sim_rmw_access(s, c, &m->word, __builtin_return_address(0)));
	if (!m->word) {
		m->word = 1;
		m->holder = c->idx + 1;
		return;
	}
	/* Held: wait in FIFO order; the unlocker hands the lock over. */
	sim_no_block_in_irq(c, "a sleeping mutex held elsewhere");
	c->wait_next = NULL;
	if (m->tail)
		m->tail->wait_next = c;
	else
		m->head = c;
	m->tail = c;
	c->state = SIM_BLOCKED;
	sim_block(s, c);
	/* Handed over: the lock word's line comes to this CPU. */
	sim_charge(s, c, IOPT_SIM_OP_LOCK,
		   sim_line_access(s, c, &m->word, true, NULL));
}

void plat_mutex_unlock(struct plat_mutex *m)
{
	struct sim_cpu *c = sim_cur;
	struct sim_cpu *w;
	struct iopt_sim *s;

	if (c)
		sim_ipoint(sim_cur_sim, c);
	w = m->head;
	if (w) {
		m->head = w->wait_next;
		if (!m->head)
			m->tail = NULL;
		m->holder = w->idx + 1;
	} else {
		m->word = 0;
		m->holder = 0;
	}
	if (!c) {
		/* The host context's time, or a device call's CPU's. */
		if (w)
			sim_wake(sim_ambient(false), w, sim_mmio_cpu ?
				 sim_mmio_cpu->now : sim_ambient(false)->now);
		return;
	}
	s = sim_cur_sim;
	/* What the section stored is visible before the next holder runs. */
	sim_charge(s, c, IOPT_SIM_OP_LOCK,
		   sim_sb_drain_all(s, c) +
		   sim_line_access(s, c, &m->word, true,
				   __builtin_return_address(0)));
	if (w)
		sim_wake(s, w, c->now);
}

/* ---- threads ---------------------------------------------------------------- */

int plat_thread_start(struct plat_thread *t, void *(*fn)(void *), void *arg)
{
	struct sim_cpu *c = sim_cur, *n;
	struct iopt_sim *s;
	int err;

	if (sim_raw)
		return -EPERM;
	s = c ? sim_cur_sim : sim_ambient(true);
	err = sim_thread_new(s, false, &n);
	if (err)
		return err;
	n->thread_fn = fn;
	n->arg = arg;
	if (s->p.share_cpus)
		n->hw = sim_sched_place(s);
	sim_cpu_launch(s, n, c ? c->now : s->now);
	t->sim = s;
	t->cpu = n->idx;
	t->gen = n->gen;
	/* Starting a thread orders what the starter stored before it. */
	if (c)
		sim_charge(s, c, IOPT_SIM_OP_OTHER,
			   s->p.call + sim_sb_drain_all(s, c));
	return 0;
}

void plat_thread_join(struct plat_thread *t)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s = t->sim;
	struct sim_cpu *th = s->cpu[t->cpu];

	if (th->gen != t->gen || th->joined)
		return;
	if (!c) {
		sim_host_join(s, th);
		return;
	}
	sim_charge(s, c, IOPT_SIM_OP_OTHER, s->p.call);
	if (th->state != SIM_DONE) {
		sim_no_block_in_irq(c, "a thread join");
		th->joiner = c;
		c->state = SIM_BLOCKED;
		sim_block(s, c);
	}
	th->joined = true;
	th->state = SIM_FREE;
}

/* ---- time ---------------------------------------------------------------- */

void plat_sleep_ns(uint64_t ns)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (c) {
		s = sim_cur_sim;
		sim_ipoint(s, c);
		sim_charge(s, c, IOPT_SIM_OP_OTHER, s->p.call);
		if (ns)
			sim_sleep_until(s, c, c->now + sim_ns_to_cycles(s, ns));
		return;
	}
	s = sim_raw ? NULL : sim_ambient(false);
	if (s) {
		sim_host_sleep(s, ns);
	} else {
		struct timespec ts = { (time_t)(ns / 1000000000u),
				       (long)(ns % 1000000000u) };

		while (nanosleep(&ts, &ts))
			;
	}
}

void plat_delay_ns(uint64_t ns)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (c) {
		s = sim_cur_sim;
		sim_ipoint(s, c);
		sim_spend(s, c, IOPT_SIM_OP_WORK, sim_ns_to_cycles(s, ns));
		return;
	}
	plat_sleep_ns(ns);
}

uint64_t plat_clock_ns(void)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	struct timespec ts;

	if (c) {
		s = sim_cur_sim;
		sim_ipoint(s, c);
		sim_charge(s, c, IOPT_SIM_OP_CLOCK, s->p.clock_read);
		return (uint64_t)((double)c->now / s->p.cpu_ghz);
	}
	s = sim_raw ? NULL : sim_ambient(false);
	if (s)
		return (uint64_t)((double)s->now / s->p.cpu_ghz);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- CPU -------------------------------------------------------------------- */

unsigned plat_cpu_id(void)
{
	struct sim_cpu *c = sim_cur;

	if (!c)
		return 0;
	sim_charge(sim_cur_sim, c, IOPT_SIM_OP_OTHER, sim_cur_sim->p.call);
	return c->hw;
}

unsigned plat_cpu_count(void)
{
	struct iopt_sim *s;

	if (sim_cur)
		return sim_cur_sim->p.cpus;
	s = sim_raw ? NULL : sim_ambient(true);
	return s ? s->p.cpus : 1;
}

void plat_cpu_relax(void)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (c) {
		s = sim_cur_sim;
		sim_charge(s, c, IOPT_SIM_OP_RELAX, s->p.relax);
		return;
	}
	/* The host context spins on something a simulated CPU will do:
	 * let the simulation run a little. */
	s = sim_raw ? NULL : sim_ambient(false);
	if (s)
		sim_host_sleep(s, 100);
}
