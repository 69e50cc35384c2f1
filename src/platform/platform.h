/* SPDX-License-Identifier: MIT */
/*
 * The platform layer: every point where two CPUs can interact.
 *
 * Atomic operations, fences, locks, the clock, the current-CPU query,
 * per-CPU storage, threads, RCU and spin-waits go through this header and
 * nowhere else: nothing outside src/platform/ may include <stdatomic.h>,
 * call pthread functions or use _Thread_local.
 *
 * Two backends implement it from the same library sources, selected at
 * build time (one library target each, so a program links one):
 *   host (plat_host.h, platform.c): the machine's atomics, POSIX threads,
 *        liburcu. The default; nothing here may cost the host build.
 *   sim  (IOPT_PLATFORM_SIM, plat_sim.h): every operation is a call into
 *        the deterministic multi-CPU simulation (src/sim/, docs/sim.md),
 *        which charges it simulated cycles and may switch to another
 *        simulated CPU. Outside a simulation run the sim backend behaves
 *        like a single-threaded host.
 * A backend provides, inline or not, every function and type declared or
 * described below; the spinlocks at the end are built on its atomics, as
 * are the selectable kinds and the reader-writer lock of plat_lock.h.
 *
 * Memory orders are spelled in the function names (acq, rel, rlx, acq_rel)
 * so that every call site reads as the ordering it relies on. The
 * descriptor accessors work on plain uint64_t/uint32_t storage, because
 * page-table memory comes from a user allocator and is also read by the
 * SMMU model's walker. Plain (non-platform) accesses are only for data
 * that one CPU owns or that a lock or an acquire/release pair orders.
 *
 * Atomics (64- and 32-bit, on naturally aligned plain storage):
 *   plat_load_{rlx,acq}{64,32}, plat_store_{rlx,rel}{64,32},
 *   plat_cas_rel{64,32}, plat_cas_acq_rel64 (true on success; on failure
 *   *old receives the current value), plat_xchg_acq_rel{64,32},
 *   plat_fetch_{or,add,sub,and,xor}_<order>64 as spelled,
 *   plat_fence_seq_cst().
 * Per-CPU storage: PLAT_CPU_LOCAL(type, name) defines, at file scope, one
 *   zero-initialised instance of type per CPU (host: per thread);
 *   plat_cpu_local(name) is the calling CPU's instance.
 * Sleeping mutex: struct plat_mutex, plat_mutex_{init,destroy,lock,unlock}.
 * Threads: struct plat_thread, plat_thread_start/join (below).
 * RCU read side: plat_rcu_read_lock/unlock (may nest, may block, no
 *   registration).
 * MMIO: plat_mmio_begin(dev) and plat_mmio_end(dev) bracket every call a
 *   driver makes into a device model dev (a register access, a device
 *   transaction or a run of the model on the driver's behalf). Host:
 *   nothing (the model's own lock orders concurrent calls, as a device
 *   serialises the accesses that reach it). Sim: begin waits for the CPU's
 *   earlier stores to drain (a device access is ordered after them, as
 *   writel's barrier orders them) and for the device's register port
 *   (busy until the previous access has occupied it for params.mmio_port
 *   cycles), and brings attached models up to the caller's time; the call
 *   then runs as one step (no other CPU runs inside it, its own platform
 *   operations cost nothing); end charges the access's latency
 *   (params.mmio). Between them nothing may wait for another CPU except
 *   through the model's own mutex.
 * Device memory: a device model's memory callbacks call
 *   plat_dev_read(p, buf, len) after copying [p, p + len) into buf and
 *   plat_dev_write(p, len) before writing (or compare-and-swapping) it.
 *   Host: nothing. Sim, inside a device call or an engine run of a model:
 *   a read sees memory without the stores still in CPUs' store buffers
 *   (TSO is multi-copy atomic: a device sees only what every CPU sees); a
 *   write first drains the CPUs' buffered stores to the lines it touches,
 *   then takes the lines from every CPU (a DMA write from outside them:
 *   the next CPU access of the line misses, params.miss_mem).
 * Cache maintenance: plat_cache_clean(p, len) cleans every cache line of
 *   [p, p + len) to the point of coherency and waits until that is done
 *   (Arm: DC CVAC per line, then DSB), so that a non-coherent observer (a
 *   table walker that does not snoop) reads the data from memory; a table
 *   memory's sync callback calls it. Host: nothing. Sim: the calling CPU
 *   pays params.cmo_line per line and params.cmo_barrier, after its
 *   store buffer drains (TSO); a line it holds modified stays with it,
 *   clean. Outside a run, nothing.
 *
 * Debug-yield (cmake -DIOPT_DEBUG_YIELD=ON, host): every atomic access and
 * lock may call sched_yield() at random, widening race windows in stress
 * tests.
 */
#ifndef IOPT_PLATFORM_H
#define IOPT_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define PLAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PLAT_TSAN 1
#endif
#endif

#ifdef PLAT_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#ifdef IOPT_DEBUG_YIELD
void plat_debug_yield(void);
#define PLAT_YIELD() plat_debug_yield()
#else
#define PLAT_YIELD() ((void)0)
#endif

#define plat_likely(x) __builtin_expect(!!(x), 1)
#define plat_unlikely(x) __builtin_expect(!!(x), 0)

/* ---- RCU callbacks ----------------------------------------------------- */

struct plat_rcu_head;
typedef void (*plat_rcu_fn)(struct plat_rcu_head *head);

struct plat_rcu_head {
	void *urcu[2];		/* the backend's (host: liburcu's struct rcu_head) */
	plat_rcu_fn fn;
};

#ifdef IOPT_PLATFORM_SIM
#include "plat_sim.h"
#else
#include "plat_host.h"
#endif

/* One iteration of a spin-wait: the only way the library busy-waits. */
void plat_cpu_relax(void);

/*
 * Preemption and local interrupts, as a kernel sees them (plat_host.h,
 * plat_sim.h; docs/sim.md "Threads and the scheduler", "Interrupts").
 * plat_spin_hold()/plat_spin_unhold() bracket every spinlock section (the
 * lock functions here and in plat_lock.h take them): in the simulation a
 * holder is not preempted while it holds one when params.preempt_spin is
 * set, as in a non-RT kernel. plat_irq_save()/plat_irq_restore(flags)
 * bracket sections a kernel ran with local interrupts off
 * (spin_lock_irqsave): in the simulation interrupts due meanwhile wait
 * for the restore. plat_preempt_disable()/enable() likewise for
 * preemption. All nest. The host build: no-ops.
 */

/* ---- locks ------------------------------------------------------------ */

/* Test-and-test-and-set spinlock: cheap, unfair, and tolerant of a
 * descheduled waiter. */
struct plat_spinlock {
	uint32_t v;
};

#define PLAT_SPINLOCK_INIT { 0 }

static inline void plat_spin_init(struct plat_spinlock *l)
{
	plat_store_rlx32(&l->v, 0);
}

static inline void plat_spin_lock(struct plat_spinlock *l)
{
	plat_spin_hold();
	for (;;) {
		/* Acquire pairs with the release store in plat_spin_unlock(). */
		if (plat_xchg_acq32(&l->v, 1) == 0)
			return;
		while (plat_load_rlx32(&l->v))
			plat_cpu_relax();
	}
}

static inline void plat_spin_unlock(struct plat_spinlock *l)
{
	plat_store_rel32(&l->v, 0);
	plat_spin_unhold();
}

/*
 * FIFO ticket spinlock, the lock a kernel driver takes around a domain's
 * page table (arm64 spinlocks were ticket locks, then queued spinlocks:
 * both hand the lock to the longest waiter). Under contention it changes
 * hands, and its cache line moves, at every release, where the unfair lock
 * above lets the releasing CPU take it straight back. Used where the
 * kernel's behaviour is what is being reproduced (the page tables'
 * serialised mode); a waiter whose turn comes while it is descheduled
 * holds everyone up, so oversubscribed userspace paths use the lock above.
 */
struct plat_ticketlock {
	uint32_t next;		/* next ticket to hand out */
	uint32_t owner;		/* ticket now holding the lock */
};

static inline void plat_ticket_init(struct plat_ticketlock *l)
{
	plat_store_rlx32(&l->next, 0);
	plat_store_rlx32(&l->owner, 0);
}

static inline void plat_ticket_lock(struct plat_ticketlock *l)
{
	/* Relaxed: the ticket only orders waiters; the acquire is below. */
	uint32_t ticket;

	plat_spin_hold();
	ticket = plat_fetch_add_rlx32(&l->next, 1);

	/* Acquire pairs with the release store in plat_ticket_unlock(). */
	while (plat_load_acq32(&l->owner) != ticket)
		plat_cpu_relax();
}

static inline void plat_ticket_unlock(struct plat_ticketlock *l)
{
	/* Only the holder writes owner. */
	plat_store_rel32(&l->owner, plat_load_rlx32(&l->owner) + 1);
	plat_spin_unhold();
}

/* ---- mutex, threads, time, CPU ---------------------------------------- */

/* Sleeping mutex for rare, possibly long sections. 0 or a negative errno. */
int plat_mutex_init(struct plat_mutex *m);
void plat_mutex_destroy(struct plat_mutex *m);

/* Start fn(arg) on a new thread. 0 or a negative errno. */
int plat_thread_start(struct plat_thread *t, void *(*fn)(void *), void *arg);
void plat_thread_join(struct plat_thread *t);
/* Sleep the calling thread: give up the CPU for ns (the host; in the
 * simulation the thread blocks and a timer interrupt wakes it, so other
 * threads of its CPU run meanwhile). For timer threads, the runner's
 * back-off and cold waits that must not spin for ever (a split waiting
 * for a slot, src/pgtable/pt_algo.h). */
void plat_sleep_ns(uint64_t ns);
/* Busy-wait ns, as udelay() does: the CPU stays taken. On the host a
 * wait of PLAT_DELAY_SLEEP_NS or more sleeps instead (its other threads,
 * a runner, keep their CPUs); on a simulated CPU ns of its time are spent
 * (a scheduling point, split at interrupts; never a block). For the
 * delays of polling loops (the SMMUv2 sync poll) and modelled costs that
 * are time, not instructions (a hypervisor trap, dma.c
 * cfg.viommu_trap_ns). */
#define PLAT_DELAY_SLEEP_NS 50000u
void plat_delay_ns(uint64_t ns);

/* ---- time and CPU ----------------------------------------------------- */

/* Monotonic nanoseconds. */
uint64_t plat_clock_ns(void);

/* The calling thread's current CPU (0-based; 0 if unknown). */
unsigned plat_cpu_id(void);

/* Number of CPUs the platform has online (at least 1). */
unsigned plat_cpu_count(void);

/*
 * Queue fn(head) to run after every read-side section that has begun
 * before this call has ended. Must not be called with head already queued.
 */
void plat_call_rcu(struct plat_rcu_head *head, plat_rcu_fn fn);

/* Wait until every callback queued so far has run. Not from a read section. */
void plat_rcu_barrier(void);

#endif /* IOPT_PLATFORM_H */
