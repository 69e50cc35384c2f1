/* SPDX-License-Identifier: MIT */
/*
 * The simulation engine's internal state (docs/sim.md).
 *
 * One host thread runs every simulated CPU as a coroutine (sim_ctx.c).
 * The scheduler (sim_core.c) keeps the runnable CPUs in a min-heap by
 * (time, seeded tie-break key); the running CPU is not in the heap. After
 * each charged operation the running CPU continues while it is still the
 * smallest, else it switches straight to the heap's top. The host context
 * (the thread that called iopt_sim_run() or a plat_thread_join() outside
 * a run) is a context of its own, entered when a CPU finishes, when the
 * heap is empty (deadlock or nothing left) or at a host sleep's deadline.
 *
 * Memory (sim_mem.c): a hash table of 64-byte lines with their coherence
 * state; TSO store buffers per CPU. RCU (sim_rcu.c): grace periods in
 * simulated time, callbacks run by a simulated callback CPU. Instructions
 * (sim_icharge.c): the instrumented code adds each basic block's count to
 * sim_icount; sim_ipoint()/sim_ifold() move it onto the running CPU's
 * time at its platform operations, and what the host context and raw-mode
 * model runs executed is dropped (switch_to(), sim_run_models(),
 * plat_mmio_end()).
 */
#ifndef IOPT_SIM_INTERNAL_H
#define IOPT_SIM_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/sim.h>

#include "../platform/platform.h"
#include "sim_ctx.h"

#define SIM_LINE_SHIFT 6
#define SIM_SET_WORDS (IOPT_SIM_MAX_CPUS / 64)
#define SIM_NONE 0xffffu		/* no CPU (line owner, store-buffer owner) */

/* A set of CPUs (sharers of a line). */
struct sim_set {
	uint64_t w[SIM_SET_WORDS];
};

struct sim_line {
	uintptr_t key;			/* line address >> 6; 0: empty slot */
	struct sim_set sharers;		/* CPUs holding it (owner included) */
	uint16_t owner;			/* CPU holding it modified, or SIM_NONE */
	uint16_t sb_owner;		/* CPU with buffered stores to it (TSO) */
	uint32_t sb_count;		/* how many */
	uint64_t free_at;		/* next cycle it may move */
	uint64_t hold_until;		/* its last taker keeps it until then */
	uint64_t transfers;
	uint64_t wait_cycles;
	uint64_t far_ops;		/* atomics executed at its home node */
	bool at_home;			/* a far atomic left it at its home node */
	const void *writer_pc;
	/*
	 * Moves that wait (docs/sim.md, "Contention"): the CPUs whose access
	 * waits for the line, in the order they asked (a list through
	 * sim_cpu.pend_next), each taking effect at its sim_cpu.pend_at.
	 * owner and sharers above already count them; until the first takes
	 * effect the line is still with held_owner and held, whose accesses
	 * hit.
	 */
	uint16_t npend;
	uint16_t pend_head, pend_tail;
	uint16_t held_owner;
	uint64_t pend_first;		/* the head's pend_at */
	uint64_t pend_last;		/* the tail's */
	struct sim_set held;
};

/* One buffered store (TSO). Memory already holds the new value (so the
 * storing CPU's own loads see it); other CPUs see old until it drains. */
struct sim_sbe {
	void *addr;
	unsigned size;
	uint64_t old;
	uint64_t deadline;		/* drains at or after this cycle */
};

enum sim_cpu_state {
	SIM_FREE,			/* slot unused (or finished and joined) */
	SIM_RUNNABLE,			/* in the heap */
	SIM_RUNNING,
	SIM_BLOCKED,			/* on a mutex, a join, the RCU barrier */
	SIM_IDLE,			/* the RCU callback CPU with nothing to do */
	SIM_DONE,			/* finished, not joined yet */
	SIM_QUEUED,			/* runnable, waits in its CPU's run queue */
};

/* An interrupt raised for a CPU, in its pending list by (at, seq). */
struct sim_irq {
	uint64_t at;
	uint64_t seq;
	iopt_sim_irq_fn fn;
	void *arg;
	struct sim_irq *next;
};

/*
 * A CPU (sim_sched.c). cur is the thread that has it: the running thread,
 * or the one in the heap (a CPU has at most one thread in the heap), or
 * NULL when the CPU is idle. Threads waiting for it queue in rq_head ..
 * rq_tail. event is the first cycle at which the scheduler must look at
 * cur again: the earliest pending interrupt, or the end of the time slice
 * while others wait (UINT64_MAX: never).
 */
struct sim_hw {
	struct sim_cpu *cur;
	struct sim_cpu *rq_head, *rq_tail;
	unsigned rq_n;
	uint64_t slice_end;
	uint64_t idle_at;		/* when it last became idle */
	uint64_t event;
	struct sim_irq *irqs;		/* pending, earliest first */
	struct sim_cpu *idle;		/* its idle context, once needed */
	struct sim_cpu *last;		/* the last thread it ran (not idle) */
};

struct sim_cpu {
	uint64_t now;			/* cycles */
	uint64_t key;			/* tie-break among equal times */
	uint64_t cycles;		/* cycles spent running (statistics) */
	uint64_t insns;			/* instructions charged (sim_icharge.c) */
	uint64_t icycles;		/* cycles charged for them */
	unsigned idx;			/* thread slot */
	unsigned tid;			/* thread number: the run's, else idx */
	unsigned hw;			/* the CPU it runs or waits on */
	enum sim_cpu_state state;
	int heap_pos;
	int prio;			/* PCT priority */
	uint64_t gen;			/* starts of this slot */
	struct sim_ctx ctx;
	void *stack;
	size_t stack_size;
	/* What it runs. */
	void *(*thread_fn)(void *);
	void (*run_fn)(unsigned cpu, void *arg);
	void *arg;
	bool in_run;			/* one of iopt_sim_run()'s CPUs */
	bool joined;			/* a join has collected it */
	struct sim_cpu *joiner;		/* CPU blocked joining it */
	bool host_joins;		/* the host context joins it */
	struct sim_cpu *wait_next;	/* mutex wait queue */
	struct sim_cpu *rq_next;	/* its CPU's run queue */
	/* A memory access waiting for its line (sim_mem.c). */
	uint16_t pend_next;		/* the next waiter's slot, or SIM_NONE */
	uint64_t pend_at;		/* when the line reaches it */
	/* Scheduler and interrupt state (sim_sched.c). */
	unsigned preempt;		/* preemption disabled this deep */
	unsigned irq_off;		/* interrupts disabled this deep */
	unsigned spin_held;		/* library spinlocks held (irqsave) */
	bool in_irq;			/* a handler runs on it */
	bool idle_task;			/* a CPU's idle context */
	bool sleeping;			/* blocked in plat_sleep_ns() */
	uint64_t rcu_target;		/* barrier: callbacks done to wait for */
	/* RCU read side. */
	unsigned rcu_nest;
	bool gp_wait;			/* the current grace period waits on it */
	/* TSO store buffer (ring of sb_entries). */
	struct sim_sbe *sb;
	unsigned sb_head, sb_n;
	/* Per-CPU storage: instance per key id. */
	void **locals;
	unsigned nlocals;
};

struct sim_model {
	int kind;			/* 3: SMMUv3, 2: SMMUv2 */
	void *model;
	double ghz;
	uint64_t at;			/* model cycle it has been run to */
	uint64_t port_free;		/* CPU cycle its register port is free from */
};

struct iopt_sim {
	struct iopt_sim_params p;
	uint64_t rng;
	uint64_t now;			/* simulation time: the largest CPU time */
	struct sim_cpu *cpu[IOPT_SIM_MAX_CPUS];
	unsigned nslots;		/* slots ever used */
	struct sim_cpu **heap;
	unsigned heap_n;
	struct sim_cpu host;		/* the host context's saved state */
	bool in_host_wait;		/* the host context waits in sim_host_run */
	bool deadlock;
	bool timed_out;			/* a CPU passed limit */
	uint64_t limit;			/* p.max_cycles, or UINT64_MAX */
	/* What the host context waits for (sim_host_run). */
	unsigned run_left;		/* run CPUs not finished */
	uint64_t sleep_until;		/* host sleep deadline, UINT64_MAX: none */
	bool host_in_heap;
	/* Memory. */
	struct sim_line *lines;
	size_t nlines, lines_cap;	/* cap a power of two */
	uint64_t sb_next;		/* smallest drain deadline, UINT64_MAX: none */
	/* PCT. */
	uint64_t pct_change[16];
	unsigned pct_nchange;
	int pct_low;			/* next lowered priority */
	/* RCU. */
	struct plat_rcu_head *rcu_next, *rcu_next_tail;	/* await a grace period */
	struct plat_rcu_head *rcu_wait, *rcu_wait_tail;	/* in the current one */
	struct plat_rcu_head *rcu_ready, *rcu_ready_tail;	/* due */
	bool gp_active;
	unsigned gp_left;		/* CPUs the current grace period waits on */
	uint64_t rcu_queued, rcu_done;
	struct sim_cpu *rcu_cpu;	/* the callback CPU, once needed */
	struct sim_cpu *rcu_waiters;	/* blocked in plat_rcu_barrier() */
	/* CPUs and interrupts (sim_sched.c). */
	struct sim_hw hw[IOPT_SIM_MAX_CPUS];
	uint64_t irq_seq;
	struct sim_irq *irq_free;	/* recycled records */
	uint64_t preemptions, ctx_switches, interrupts;
	unsigned threads_ran;
	/* Models. */
	struct sim_model models[4];
	unsigned nmodels;
	/* Statistics. */
	uint64_t ops[IOPT_SIM_OP_COUNT];
	uint64_t nops;			/* operations charged (PCT steps) */
	uint64_t switches;
	uint64_t insns;			/* instructions charged, all CPUs */
	uint64_t cyc_per_insn_q16;	/* 65536 / p.ipc; 0: not charged */
	uint64_t grace_periods, rcu_callbacks;
	uint64_t trace_hash;
	double host_s;
	unsigned cpus_ran;
	struct iopt_sim *prev_live;	/* list of live simulations, newest first */
};

/* The running simulated CPU and its simulation; NULL in the host context. */
extern struct sim_cpu *sim_cur;
extern struct iopt_sim *sim_cur_sim;
/* Nonzero while the engine runs library code on the host context's
 * behalf (an SMMU model): every operation is then a plain host one. */
extern unsigned sim_raw;
/* While the engine runs a model: where a raw-mode lock of a held mutex
 * escapes to (the model's lock, taken first thing: nothing changed). */
extern jmp_buf *sim_raw_escape;
/* The simulated CPU inside a device call (plat_mmio_begin() .. end(), in
 * raw mode: sim_cur is NULL meanwhile), or NULL. */
extern struct sim_cpu *sim_mmio_cpu;
/* The simulation whose model is running (a device call, an engine run of
 * the models), or NULL: what a device's memory access notifies. */
extern struct iopt_sim *sim_dev_sim;

/* sim_icharge.c: instructions the instrumented code executed since the
 * engine last looked (the running CPU's, the host context's or a model's). */
extern uint64_t sim_icount;

/* sim_core.c */
/* The running CPU c's pending instructions onto its time (no scheduling
 * decision: the next charge makes it). */
void sim_ifold(struct iopt_sim *s, struct sim_cpu *c);
/* At a platform operation of c, before it acts: its instructions since
 * the last one, and a switch if another CPU is now earlier (so the
 * operation takes effect at the time the instructions brought it to). */
void sim_ipoint(struct iopt_sim *s, struct sim_cpu *c);
void sim_charge(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
		uint64_t cycles);
/* sim_charge() for a further part of an operation already counted: the
 * cycles and the trace entry, not another operation in the statistics. */
void sim_charge_more(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
		     uint64_t cycles);
/* c waits cycles within an operation already counted (a memory access
 * for its line): a scheduling point, with no trace entry and no
 * interrupt or time-slice decision (the operation's charge makes them). */
void sim_stall(struct iopt_sim *s, struct sim_cpu *c, uint64_t cycles);
void sim_block(struct iopt_sim *s, struct sim_cpu *c);
void sim_wake(struct iopt_sim *s, struct sim_cpu *c, uint64_t at);
uint64_t sim_rand(struct iopt_sim *s);
struct iopt_sim *sim_ambient(bool create);
void sim_host_sleep(struct iopt_sim *s, uint64_t ns);
void sim_host_join(struct iopt_sim *s, struct sim_cpu *c);
void sim_host_rcu_wait(struct iopt_sim *s, uint64_t target);
void sim_host_until(struct iopt_sim *s, bool (*cond)(void *), void *ctx);
int sim_thread_new(struct iopt_sim *s, bool from_top, struct sim_cpu **out);
void sim_cpu_launch(struct iopt_sim *s, struct sim_cpu *c, uint64_t at);
uint64_t sim_ns_to_cycles(const struct iopt_sim *s, uint64_t ns);

/* sim_sched.c */
/* c's CPU has passed its event cycle: deliver what is due, preempt if
 * its slice ended; c is the running thread. */
void sim_sched_event(struct iopt_sim *s, struct sim_cpu *c);
/* c stops holding its CPU (it blocks, idles or ends): the next thread in
 * the CPU's queue gets it, or the CPU idles. */
void sim_sched_release(struct iopt_sim *s, struct sim_cpu *c);
/* c becomes runnable at cycle at: it takes its CPU (or an idle one) and
 * enters the heap, or queues. */
void sim_sched_wake(struct iopt_sim *s, struct sim_cpu *c, uint64_t at);
/* The CPU a thread started through the platform layer starts on, under
 * params.share_cpus. */
unsigned sim_sched_place(const struct iopt_sim *s);
/* Spend cycles of op on c, split at its CPU's events. */
void sim_spend(struct iopt_sim *s, struct sim_cpu *c, enum iopt_sim_op op,
	       uint64_t cycles);
/* plat_sleep_ns() on c: block until cycle until, woken by a timer. */
void sim_sleep_until(struct iopt_sim *s, struct sim_cpu *c, uint64_t until);
/* A blocking call inside a handler: abort with a message. */
void sim_no_block_in_irq(const struct sim_cpu *c, const char *what);
void sim_sched_fini(struct iopt_sim *s);
void sim_heap_push(struct iopt_sim *s, struct sim_cpu *c);
void sim_heap_remove(struct iopt_sim *s, struct sim_cpu *c);

/* sim_mem.c */
int sim_mem_init(struct iopt_sim *s);
void sim_mem_fini(struct iopt_sim *s);
/* Charge c one access of the line holding addr; returns its cycles. */
uint64_t sim_line_access(struct iopt_sim *s, struct sim_cpu *c,
			 const void *addr, bool write, const void *pc);
/* Charge c one atomic read-modify-write of the line holding addr, near or
 * far (params.atomic_far); returns its cycles. */
uint64_t sim_rmw_access(struct iopt_sim *s, struct sim_cpu *c,
			const void *addr, const void *pc);
uint64_t sim_sb_drain_all(struct iopt_sim *s, struct sim_cpu *c);
void sim_run_models(struct iopt_sim *s, uint64_t now);
uint64_t sim_safe_time(const struct iopt_sim *s, const struct sim_cpu *c);
void sim_mem_hot(const struct iopt_sim *s, struct iopt_sim_line_stat *hot,
		 unsigned n);

/* sim_rcu.c */
void sim_rcu_cpu_done(struct iopt_sim *s, struct sim_cpu *c);
void sim_rcu_queue(struct iopt_sim *s, struct plat_rcu_head *head);
bool sim_rcu_pending(const struct iopt_sim *s);

#endif /* IOPT_SIM_INTERNAL_H */
