/* SPDX-License-Identifier: MIT */
/*
 * The simulation's scheduler, CPUs and public API (iopgtable/sim.h,
 * docs/sim.md).
 *
 * Scheduling. The runnable CPUs wait in a binary min-heap ordered by
 * (time, key); the running CPU is outside it. sim_charge() adds an
 * operation's cycles to the running CPU and then, in random mode, keeps
 * running it while it is strictly earlier than the heap's top; on a tie
 * it draws a fresh key, so equal times are broken by a seeded coin; else
 * it enters the heap with a fresh key and the top resumes. Keys are drawn
 * from the simulation's seeded generator only, so a seed fixes every
 * decision. In PCT mode every charge instead picks, among the CPUs within
 * pct_quantum cycles of the earliest, the one with the highest priority.
 *
 * The host context (the caller of iopt_sim_run(), or of a thread join or
 * sleep outside a run) waits in sim_host_run() until its condition holds;
 * a CPU returns to it when it finishes, when nothing is runnable (a
 * deadlock if anything is blocked), when the RCU callback CPU runs out of
 * work, or when the host's sleep deadline (the host as a heap entry with
 * key 0) comes up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"

struct sim_cpu *sim_cur;
struct iopt_sim *sim_cur_sim;
unsigned sim_raw;

static struct iopt_sim *sim_live;	/* newest live simulation */
static struct iopt_sim *sim_implicit;	/* created by sim_ambient() */

/* ---- random numbers: splitmix64 ------------------------------------------ */

uint64_t sim_rand(struct iopt_sim *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static double host_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t sim_ns_to_cycles(const struct iopt_sim *s, uint64_t ns)
{
	return (uint64_t)((double)ns * s->p.cpu_ghz);
}

/* ---- heap --------------------------------------------------------------- */

static inline bool cpu_before(const struct sim_cpu *a, const struct sim_cpu *b)
{
	return a->now < b->now || (a->now == b->now && a->key < b->key);
}

static void heap_set(struct iopt_sim *s, unsigned i, struct sim_cpu *c)
{
	s->heap[i] = c;
	c->heap_pos = (int)i;
}

static void heap_up(struct iopt_sim *s, unsigned i)
{
	struct sim_cpu *c = s->heap[i];

	while (i) {
		unsigned parent = (i - 1) / 2;

		if (!cpu_before(c, s->heap[parent]))
			break;
		heap_set(s, i, s->heap[parent]);
		i = parent;
	}
	heap_set(s, i, c);
}

static void heap_down(struct iopt_sim *s, unsigned i)
{
	struct sim_cpu *c = s->heap[i];

	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		struct sim_cpu *best = c;

		if (l < s->heap_n && cpu_before(s->heap[l], best)) {
			m = l;
			best = s->heap[l];
		}
		if (l + 1 < s->heap_n && cpu_before(s->heap[l + 1], best)) {
			m = l + 1;
			best = s->heap[l + 1];
		}
		if (m == i)
			break;
		heap_set(s, i, best);
		i = m;
	}
	heap_set(s, i, c);
}

static void heap_push(struct iopt_sim *s, struct sim_cpu *c)
{
	heap_set(s, s->heap_n++, c);
	heap_up(s, s->heap_n - 1);
}

void sim_heap_push(struct iopt_sim *s, struct sim_cpu *c)
{
	heap_push(s, c);
}

static void heap_remove(struct iopt_sim *s, struct sim_cpu *c)
{
	unsigned i = (unsigned)c->heap_pos;

	c->heap_pos = -1;
	if (--s->heap_n == i)
		return;
	heap_set(s, i, s->heap[s->heap_n]);
	heap_up(s, i);
	heap_down(s, (unsigned)s->heap[i]->heap_pos);
}

void sim_heap_remove(struct iopt_sim *s, struct sim_cpu *c)
{
	heap_remove(s, c);
}

static struct sim_cpu *heap_pop(struct iopt_sim *s)
{
	struct sim_cpu *c = s->heap[0];

	heap_remove(s, c);
	return c;
}

/* ---- switching ------------------------------------------------------------ */

static void switch_to(struct iopt_sim *s, struct sim_cpu *from,
		      struct sim_cpu *to)
{
	/* What the host context ran is nobody's; a CPU that blocks or ends
	 * has had its instructions folded by its last charge. */
	if (from == &s->host || sim_raw)
		sim_icount = 0;
	else if (sim_icount)
		sim_ifold(s, from);
	s->switches++;
	if (to == &s->host) {
		/* Its deadline came (popped from the heap), or a CPU went
		 * idle or ended before it: then the host looks again. */
		if (s->host.heap_pos < 0)
			s->host_in_heap = false;
		sim_cur = NULL;
	} else {
		to->state = SIM_RUNNING;
		sim_cur = to;
	}
	sim_ctx_switch(&from->ctx, &to->ctx);
}

/* PCT: the CPU to run among the heap and cur (NULL: cur is not a
 * candidate). The host, when its deadline is the earliest, first. */
static struct sim_cpu *pct_pick(struct iopt_sim *s, struct sim_cpu *cur)
{
	uint64_t min = cur ? cur->now : UINT64_MAX;
	struct sim_cpu *best = cur;

	for (unsigned i = 0; i < s->heap_n; i++)
		if (s->heap[i] != &s->host && s->heap[i]->now < min)
			min = s->heap[i]->now;
	if (s->host_in_heap && s->host.now <= min)
		return &s->host;
	for (unsigned i = 0; i < s->heap_n; i++) {
		struct sim_cpu *c = s->heap[i];

		if (c == &s->host || c->now > min + s->p.pct_quantum)
			continue;
		if (!best || best->now > min + s->p.pct_quantum ||
		    c->prio > best->prio)
			best = c;
	}
	return best;
}

/* The next CPU to resume from the heap (not empty). */
static struct sim_cpu *next_from_heap(struct iopt_sim *s)
{
	struct sim_cpu *n;

	if (s->p.sched == IOPT_SIM_SCHED_PCT) {
		n = pct_pick(s, NULL);
		heap_remove(s, n);
		return n;
	}
	return heap_pop(s);
}

static void trace(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op)
{
	/* FNV-1a over 64-bit words: (cpu, op), then the CPU's time. */
	uint64_t h = s->trace_hash;

	h = (h ^ (((uint64_t)c->idx << 8) | (uint64_t)op)) * 0x100000001b3u;
	h = (h ^ c->now) * 0x100000001b3u;
	s->trace_hash = h;
}

static void resched(struct iopt_sim *s, struct sim_cpu *c);

void sim_ifold(struct iopt_sim *s, struct sim_cpu *c)
{
	uint64_t n = sim_icount, q = s->cyc_per_insn_q16, cyc;

	sim_icount = 0;
	c->insns += n;
	s->insns += n;
	/* insns x q / 65536 without overflow, rounded down; the remainder
	 * carries over to the next fold, so the sum is exact. */
	cyc = (c->insns >> 16) * q + (((c->insns & 0xffff) * q) >> 16) -
	      c->icycles;
	c->icycles += cyc;
	c->now += cyc;
	c->cycles += cyc;
}

void sim_ipoint(struct iopt_sim *s, struct sim_cpu *c)
{
	uint64_t before = c->now;

	if (!sim_icount)
		return;
	sim_ifold(s, c);
	if (c->now != before && c->now <= s->limit)
		resched(s, c);
}

void sim_charge(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
		uint64_t cycles)
{
	s->ops[op]++;
	sim_charge_more(s, c, op, cycles);
}

void sim_charge_more(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
		     uint64_t cycles)
{
	if (sim_icount)
		sim_ifold(s, c);
	c->now += cycles;
	c->cycles += cycles;
	s->nops++;
	trace(s, c, op);
	if (plat_unlikely(c->now > s->limit)) {
		/* Livelock guard: stop here, suspended, for inspection. */
		s->timed_out = true;
		c->key = sim_rand(s) | 1;
		c->state = SIM_RUNNABLE;
		heap_push(s, c);
		switch_to(s, c, &s->host);
		return;
	}
	if (s->p.sched == IOPT_SIM_SCHED_PCT)
		for (unsigned i = 0; i < s->pct_nchange; i++)
			if (s->pct_change[i] == s->nops)
				c->prio = s->pct_low--;
	/* An interrupt due, a slice over (sim_sched.c). */
	if (plat_unlikely(c->now >= s->hw[c->hw].event))
		sim_sched_event(s, c);
	resched(s, c);
}

void sim_stall(struct iopt_sim *s, struct sim_cpu *c, uint64_t cycles)
{
	c->now += cycles;
	c->cycles += cycles;
	if (c->now <= s->limit)
		resched(s, c);
}

/* c's time has just grown: it goes on while it is the earliest, else the
 * earliest CPU runs. */
static void resched(struct iopt_sim *s, struct sim_cpu *c)
{
	struct sim_cpu *n;

	if (s->p.sched == IOPT_SIM_SCHED_PCT) {
		n = pct_pick(s, c);
		if (n == c)
			return;
		heap_remove(s, n);
	} else {
		if (!s->heap_n)
			return;
		n = s->heap[0];
		if (n->now > c->now)
			return;
		c->key = sim_rand(s) | 1;
		if (n->now == c->now && n->key > c->key)
			return;
		heap_pop(s);
	}
	c->key = sim_rand(s) | 1;
	c->state = SIM_RUNNABLE;
	heap_push(s, c);
	switch_to(s, c, n);
}

/* c is runnable from cycle at: on its CPU, or queued for it. */
void sim_wake(struct iopt_sim *s, struct sim_cpu *c, uint64_t at)
{
	sim_sched_wake(s, c, at);
}

/* c has set its state (blocked, queued, idle or done): it gives up its
 * CPU, someone else runs. An idle or finished thread (and a CPU's idle
 * context, which may have re-armed itself) returns to the host context,
 * which resumes the heap's top. */
void sim_block(struct iopt_sim *s, struct sim_cpu *c)
{
	bool to_host = c->state == SIM_IDLE || c->state == SIM_DONE ||
		       c->idle_task;

	sim_sched_release(s, c);
	if (s->heap_n && !to_host)
		switch_to(s, c, next_from_heap(s));
	else
		switch_to(s, c, &s->host);
}

/* ---- CPUs ------------------------------------------------------------------ */

static void cpu_main(void *arg)
{
	struct sim_cpu *c = arg;
	struct iopt_sim *s = sim_cur_sim;

	if (c->run_fn)
		c->run_fn(c->tid, c->arg);
	else
		c->thread_fn(c->arg);
	sim_ifold(s, c);
	/* Finished: what it buffered becomes visible, its read sections
	 * count as ended, its joiner resumes. */
	sim_sb_drain_all(s, c);
	sim_rcu_cpu_done(s, c);
	c->state = SIM_DONE;
	if (c->in_run)
		s->run_left--;
	if (s->now < c->now)
		s->now = c->now;
	if (c->joiner) {
		sim_wake(s, c->joiner, c->now);
		c->joiner = NULL;
	}
	sim_sched_release(s, c);
	switch_to(s, c, &s->host);
	abort();	/* a finished CPU is never resumed */
}

static int cpu_slot(struct iopt_sim *s, unsigned idx, struct sim_cpu **out)
{
	struct sim_cpu *c = s->cpu[idx];

	if (!c) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t size = (s->p.stack_bytes + page - 1) / page * page;
		void *st;

		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		if (s->p.memmodel == IOPT_SIM_TSO) {
			c->sb = calloc(s->p.sb_entries, sizeof(*c->sb));
			if (!c->sb) {
				free(c);
				return -ENOMEM;
			}
		}
		/* A guard page below the stack catches an overflow. */
		st = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (st == MAP_FAILED) {
			free(c->sb);
			free(c);
			return -ENOMEM;
		}
		mprotect(st, page, PROT_NONE);
		c->stack = st;
		c->stack_size = size + page;
		c->idx = idx;
		c->tid = idx;
		c->hw = idx;
		c->heap_pos = -1;
		c->state = SIM_FREE;
		s->cpu[idx] = c;
		if (s->nslots <= idx)
			s->nslots = idx + 1;
	}
	*out = c;
	return 0;
}

static void cpu_free_locals(struct sim_cpu *c)
{
	for (unsigned i = 0; i < c->nlocals; i++) {
		free(c->locals[i]);
		c->locals[i] = NULL;
	}
}

/* Start c at cycle at: its context begins at cpu_main(). */
void sim_cpu_launch(struct iopt_sim *s, struct sim_cpu *c, uint64_t at)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	c->gen++;
	c->joined = false;
	c->joiner = NULL;
	c->rcu_nest = 0;
	c->gp_wait = false;
	c->preempt = 0;
	c->irq_off = 0;
	c->spin_held = 0;
	c->in_irq = false;
	c->sleeping = false;
	if (!c->idle_task)
		s->threads_ran++;
	if (c->now < at)
		c->now = at;
	/* PCT: distinct seeded priorities above every lowered one. */
	if (c->prio == 0)
		c->prio = 1000000 + (int)(sim_rand(s) % 1000000u) * 256 +
			  (int)c->idx;
	sim_ctx_init(&c->ctx, (char *)c->stack + page, c->stack_size - page,
		     cpu_main, c);
	s->cpus_ran++;
	sim_wake(s, c, at);
}

/* A free slot for a new thread: the lowest unused or joined one (from
 * the top: the highest, kept clear of iopt_sim_run()'s CPUs). */
int sim_thread_new(struct iopt_sim *s, bool from_top, struct sim_cpu **out)
{
	for (unsigned n = 0; n < IOPT_SIM_MAX_CPUS; n++) {
		unsigned i = from_top ? IOPT_SIM_MAX_CPUS - 1 - n : n;
		struct sim_cpu *c = s->cpu[i];
		int err;

		if (c && c->state != SIM_FREE)
			continue;
		err = cpu_slot(s, i, &c);
		if (err)
			return err;
		cpu_free_locals(c);
		c->in_run = false;
		c->run_fn = NULL;
		c->hw = i;
		c->tid = i;
		*out = c;
		return 0;
	}
	return -EAGAIN;
}

/* ---- the host context --------------------------------------------------- */

static bool any_blocked(const struct iopt_sim *s)
{
	for (unsigned i = 0; i < s->nslots; i++)
		if (s->cpu[i] && s->cpu[i]->state == SIM_BLOCKED)
			return true;
	return false;
}

/*
 * Run the simulation from the host context until done(s, ctx). 0, or
 * -EDEADLK when nothing can run and done() does not hold.
 */
static int host_run(struct iopt_sim *s, bool (*done)(struct iopt_sim *, void *),
		    void *ctx)
{
	struct iopt_sim *outer = sim_cur_sim;
	double t0 = host_seconds();
	int ret = 0;

	sim_cur_sim = s;
	s->in_host_wait = true;
	while (!done(s, ctx)) {
		struct sim_cpu *n;

		if (s->timed_out) {
			ret = -ETIMEDOUT;
			break;
		}
		if (s->deadlock || !s->heap_n) {
			s->deadlock = any_blocked(s);
			ret = -EDEADLK;
			break;
		}
		n = next_from_heap(s);
		if (n == &s->host) {
			s->host_in_heap = false;
			continue;
		}
		switch_to(s, &s->host, n);
	}
	s->in_host_wait = false;
	s->host_s += host_seconds() - t0;
	sim_cur_sim = outer;
	return ret;
}

static bool done_run(struct iopt_sim *s, void *ctx)
{
	return s->run_left == 0 && !sim_rcu_pending(s);
}

static bool done_sleep(struct iopt_sim *s, void *ctx)
{
	return !s->host_in_heap;
}

static bool done_join(struct iopt_sim *s, void *ctx)
{
	return ((struct sim_cpu *)ctx)->state == SIM_DONE;
}

static bool done_rcu(struct iopt_sim *s, void *ctx)
{
	return s->rcu_done >= *(uint64_t *)ctx;
}

static void host_fail(struct iopt_sim *s, const char *what)
{
	fprintf(stderr, "iopt sim: %s while the host context %s (seed %llu)\n",
		s->timed_out ? "time limit (max_cycles) passed" :
			       "deadlock: every simulated CPU left waits",
		what, (unsigned long long)s->p.seed);
	abort();
}

/* The host context sleeps ns: the simulation runs that long. */
void sim_host_sleep(struct iopt_sim *s, uint64_t ns)
{
	s->host.now = s->now + sim_ns_to_cycles(s, ns);
	s->host.key = 0;
	s->host_in_heap = true;
	heap_push(s, &s->host);
	if (host_run(s, done_sleep, NULL) && s->host_in_heap) {
		/* Nothing runnable: time simply passes. */
		heap_remove(s, &s->host);
		s->host_in_heap = false;
		if (any_blocked(s) && s->deadlock)
			s->deadlock = false;
	}
	if (s->now < s->host.now)
		s->now = s->host.now;
}

void sim_host_join(struct iopt_sim *s, struct sim_cpu *c)
{
	if (c->state != SIM_DONE && host_run(s, done_join, c))
		host_fail(s, "joins a thread");
	c->joined = true;
	c->state = SIM_FREE;
}

void sim_host_rcu_wait(struct iopt_sim *s, uint64_t target)
{
	if (s->rcu_done < target && host_run(s, done_rcu, &target))
		host_fail(s, "waits for RCU callbacks");
}

/* Until cond() holds, e.g. a mutex a suspended CPU holds. */
void sim_host_until(struct iopt_sim *s, bool (*cond)(void *), void *ctx)
{
	while (!cond(ctx)) {
		if (!s->heap_n)
			host_fail(s, "waits on a lock");
		sim_host_sleep(s, 100);
	}
}

/* ---- ambient simulation (threads started outside a run) ---------------- */

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

struct iopt_sim *sim_ambient(bool create)
{
	struct iopt_sim_params p;
	const char *v;

	if (sim_live || !create)
		return sim_live;
	iopt_sim_params_default(&p);
	p.cpus = (unsigned)env_u64("IOPT_SIM_CPUS", p.cpus);
	p.seed = env_u64("IOPT_SIM_SEED", p.seed);
	v = getenv("IOPT_SIM_MEM");
	if (v && !strcmp(v, "tso"))
		p.memmodel = IOPT_SIM_TSO;
	v = getenv("IOPT_SIM_SCHED");
	if (v && !strcmp(v, "pct"))
		p.sched = IOPT_SIM_SCHED_PCT;
	if (iopt_sim_create(&p, &sim_implicit)) {
		fprintf(stderr, "iopt sim: cannot create the ambient simulation\n");
		abort();
	}
	return sim_implicit;
}

/* ---- public API ------------------------------------------------------------ */

int iopt_sim_create(const struct iopt_sim_params *p, struct iopt_sim **out)
{
	struct iopt_sim *s;

	if (!p || !out || !p->cpus || p->cpus > IOPT_SIM_MAX_CPUS ||
	    p->sb_drain_min > p->sb_drain_max || !(p->cpu_ghz > 0) ||
	    (p->memmodel != IOPT_SIM_SC && p->memmodel != IOPT_SIM_TSO) ||
	    (p->sched != IOPT_SIM_SCHED_RANDOM && p->sched != IOPT_SIM_SCHED_PCT) ||
	    (p->memmodel == IOPT_SIM_TSO && !p->sb_entries) ||
	    p->stack_bytes < 16384 || !(p->ipc >= 0) || p->ipc > 64)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->heap = calloc(IOPT_SIM_MAX_CPUS + 1, sizeof(*s->heap));
	if (!s->heap || sim_mem_init(s)) {
		free(s->heap);
		free(s);
		return -ENOMEM;
	}
	s->p = *p;
	s->rng = p->seed;
	s->trace_hash = 0xcbf29ce484222325u;	/* FNV-1a offset basis */
	s->sb_next = UINT64_MAX;
	s->limit = p->max_cycles ? p->max_cycles : UINT64_MAX;
	s->cyc_per_insn_q16 = p->ipc > 0 ? (uint64_t)(65536.0 / p->ipc + 0.5) : 0;
	s->host.heap_pos = -1;
	s->host.state = SIM_RUNNING;
	s->host.idx = IOPT_SIM_MAX_CPUS;
	if (p->sched == IOPT_SIM_SCHED_PCT) {
		/* d-1 change points, uniform over the first k operations;
		 * lowered priorities sit below every initial one. */
		unsigned d = p->pct_depth ? p->pct_depth : 1;

		s->pct_nchange = d - 1 < 16 ? d - 1 : 16;
		for (unsigned i = 0; i < s->pct_nchange; i++)
			s->pct_change[i] = 1 + sim_rand(s) % (p->pct_steps ? p->pct_steps : 1);
		s->pct_low = 999999;
	}
	s->prev_live = sim_live;
	sim_live = s;
	*out = s;
	return 0;
}

void iopt_sim_destroy(struct iopt_sim *sim)
{
	struct iopt_sim **pp;

	if (!sim)
		return;
	for (pp = &sim_live; *pp; pp = &(*pp)->prev_live)
		if (*pp == sim) {
			*pp = sim->prev_live;
			break;
		}
	if (sim_implicit == sim)
		sim_implicit = NULL;
	for (unsigned i = 0; i < IOPT_SIM_MAX_CPUS; i++) {
		struct sim_cpu *c = sim->cpu[i];

		if (!c)
			continue;
		cpu_free_locals(c);
		free(c->locals);
		free(c->sb);
		munmap(c->stack, c->stack_size);
		free(c);
	}
	sim_sched_fini(sim);
	sim_mem_fini(sim);
	free(sim->heap);
	free(sim);
}

int iopt_sim_run_threads(struct iopt_sim *sim, unsigned threads,
			 void (*fn)(unsigned thread, void *arg), void *arg)
{
	unsigned slot[IOPT_SIM_MAX_CPUS], n = 0;
	int ret;

	if (!sim || !fn || !threads || threads > IOPT_SIM_MAX_CPUS)
		return -EINVAL;
	if (sim_cur || sim->in_host_wait)
		return -EBUSY;
	if (sim->deadlock)
		return -EDEADLK;
	if (sim->timed_out)
		return -ETIMEDOUT;
	/* The lowest free slots: threads started from the host context
	 * (a timer thread, say) keep theirs. */
	for (unsigned i = 0; i < IOPT_SIM_MAX_CPUS && n < threads; i++)
		if (!sim->cpu[i] || sim->cpu[i]->state == SIM_FREE)
			slot[n++] = i;
	if (n < threads)
		return -EBUSY;
	for (unsigned i = 0; i < threads; i++) {
		struct sim_cpu *c;

		ret = cpu_slot(sim, slot[i], &c);
		if (ret)
			return ret;
	}
	for (unsigned i = 0; i < threads; i++) {
		struct sim_cpu *c = sim->cpu[slot[i]];

		cpu_free_locals(c);
		c->in_run = true;
		c->run_fn = fn;
		c->arg = arg;
		c->tid = i;
		c->hw = i % sim->p.cpus;
		sim_cpu_launch(sim, c, sim->now);
	}
	sim->run_left = threads;
	ret = host_run(sim, done_run, NULL);
	if (ret)
		return ret;
	for (unsigned i = 0; i < threads; i++)
		sim->cpu[slot[i]]->state = SIM_FREE;
	return 0;
}

int iopt_sim_run(struct iopt_sim *sim, void (*fn)(unsigned cpu, void *arg),
		 void *arg)
{
	return iopt_sim_run_threads(sim, sim ? sim->p.cpus : 1, fn, arg);
}

unsigned iopt_sim_cpu(void)
{
	return sim_cur ? sim_cur->hw : 0;
}

uint64_t iopt_sim_now(void)
{
	struct iopt_sim *s;

	if (sim_cur) {
		if (sim_icount && !sim_raw)
			sim_ifold(sim_cur_sim, sim_cur);
		return sim_cur->now;
	}
	s = sim_ambient(false);
	return s ? s->now : 0;
}

uint64_t iopt_sim_now_ns(void)
{
	struct iopt_sim *s = sim_cur ? sim_cur_sim : sim_ambient(false);

	return s ? (uint64_t)((double)iopt_sim_now() / s->p.cpu_ghz) : 0;
}

void iopt_sim_work(uint64_t cycles)
{
	if (sim_cur && !sim_raw)
		sim_spend(sim_cur_sim, sim_cur, IOPT_SIM_OP_WORK, cycles);
}

static int attach(struct iopt_sim *sim, int kind, void *m, double ghz)
{
	if (!sim || !m || !(ghz > 0))
		return -EINVAL;
	if (sim_cur || sim->in_host_wait)
		return -EBUSY;
	if (sim->nmodels == sizeof(sim->models) / sizeof(sim->models[0]))
		return -ENOSPC;
	sim->models[sim->nmodels++] = (struct sim_model){ kind, m, ghz, 0, 0 };
	return 0;
}

int iopt_sim_attach_smmuv3(struct iopt_sim *sim, struct iopt_smmuv3 *smmu,
			   double model_ghz)
{
	return attach(sim, 3, smmu, model_ghz);
}

int iopt_sim_attach_smmuv2(struct iopt_sim *sim, struct iopt_smmuv2 *smmu,
			   double model_ghz)
{
	return attach(sim, 2, smmu, model_ghz);
}

/* A simulated CPU other than the RCU callback CPU that has not finished:
 * a thread started from the host context and still running. */
static bool sim_host_threads(const struct iopt_sim *sim)
{
	for (unsigned i = 0; i < sim->nslots; i++) {
		const struct sim_cpu *c = sim->cpu[i];

		if (c && c != sim->rcu_cpu && !c->idle_task &&
		    c->state != SIM_FREE && c->state != SIM_DONE)
			return true;
	}
	return false;
}

static int detach(struct iopt_sim *sim, void *m)
{
	if (!sim || !m)
		return -EINVAL;
	if (sim_cur || sim->in_host_wait || sim_host_threads(sim))
		return -EBUSY;
	for (unsigned i = 0; i < sim->nmodels; i++) {
		if (sim->models[i].model != m)
			continue;
		/* Keep the others in attach order (the engine runs them in
		 * that order: part of the trace). */
		memmove(&sim->models[i], &sim->models[i + 1],
			(sim->nmodels - i - 1) * sizeof(sim->models[0]));
		sim->nmodels--;
		return 0;
	}
	return -ENOENT;
}

int iopt_sim_detach_smmuv3(struct iopt_sim *sim, struct iopt_smmuv3 *smmu)
{
	return detach(sim, smmu);
}

int iopt_sim_detach_smmuv2(struct iopt_sim *sim, struct iopt_smmuv2 *smmu)
{
	return detach(sim, smmu);
}

struct iopt_sim *iopt_sim_ambient(void)
{
	return sim_cur ? NULL : sim_ambient(true);
}

void iopt_sim_get_params(const struct iopt_sim *sim, struct iopt_sim_params *p)
{
	if (!p)
		return;
	if (!sim)
		memset(p, 0, sizeof(*p));
	else
		*p = sim->p;
}

uint64_t iopt_sim_cpu_cycles(const struct iopt_sim *sim, unsigned cpu)
{
	if (!sim || cpu >= IOPT_SIM_MAX_CPUS || !sim->cpu[cpu])
		return 0;
	return sim->cpu[cpu]->cycles;
}

void iopt_sim_stats(const struct iopt_sim *sim, struct iopt_sim_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!sim)
		return;
	for (unsigned i = 0; i < IOPT_SIM_MAX_CPUS; i++)
		st->cpus += sim->hw[i].last != NULL;
	st->threads = sim->threads_ran;
	st->preemptions = sim->preemptions;
	st->ctx_switches = sim->ctx_switches;
	st->interrupts = sim->interrupts;
	for (unsigned i = 0; i < sim->nslots; i++)
		if (sim->cpu[i] && sim->cpu[i]->now > st->end_cycles)
			st->end_cycles = sim->cpu[i]->now;
	for (unsigned i = 0; i < IOPT_SIM_OP_COUNT; i++) {
		st->ops[i] = sim->ops[i];
		st->total_ops += sim->ops[i];
	}
	st->switches = sim->switches;
	st->instructions = sim->insns;
	st->grace_periods = sim->grace_periods;
	st->rcu_callbacks = sim->rcu_callbacks;
	st->trace_hash = sim->trace_hash;
	st->host_s = sim->host_s;
	sim_mem_hot(sim, st->hot, sizeof(st->hot) / sizeof(st->hot[0]));
}

int iopt_sim_available(void)
{
	return 1;
}
