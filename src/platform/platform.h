/* SPDX-License-Identifier: MIT */
/*
 * The platform layer: every point where two CPUs can interact.
 *
 * Atomic operations, fences, locks, the clock, the current-CPU query, RCU
 * and spin-waits go through this header and nowhere else. A later
 * deterministic multi-CPU simulation build replaces this file's bodies to
 * run the library's real code as many simulated CPUs; nothing outside
 * src/platform/ may include <stdatomic.h> or call pthread locks directly.
 *
 * Memory orders are spelled in the function names (acq, rel, rlx, acq_rel)
 * so that every call site reads as the ordering it relies on. The
 * descriptor accessors work on plain uint64_t/uint32_t storage, because
 * page-table memory comes from a user allocator and is also read by the
 * SMMU model's walker.
 *
 * Debug-yield (cmake -DIOPT_DEBUG_YIELD=ON): every atomic access and lock
 * may call sched_yield() at random, widening race windows in stress tests.
 */
#ifndef IOPT_PLATFORM_H
#define IOPT_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

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

/* ---- 64-bit atomics on plain storage ---------------------------------- */

static inline uint64_t plat_load_rlx64(const uint64_t *p)
{
	PLAT_YIELD();
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint64_t plat_load_acq64(const uint64_t *p)
{
	PLAT_YIELD();
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void plat_store_rlx64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void plat_store_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Returns true on success; on failure *old receives the current value. */
static inline bool plat_cas_rel64(uint64_t *p, uint64_t *old, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_compare_exchange_n(p, old, v, false, __ATOMIC_RELEASE,
					   __ATOMIC_ACQUIRE);
}

static inline bool plat_cas_acq_rel64(uint64_t *p, uint64_t *old, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_compare_exchange_n(p, old, v, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

static inline uint64_t plat_xchg_acq_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
}

static inline uint64_t plat_fetch_or_rlx64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t plat_fetch_or_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_or(p, v, __ATOMIC_RELEASE);
}

static inline uint64_t plat_fetch_add_acq_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}

static inline uint64_t plat_fetch_sub_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_sub(p, v, __ATOMIC_RELEASE);
}

/* Statistics counters: no ordering. */
static inline uint64_t plat_fetch_add_rlx64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t plat_fetch_and_acq_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL);
}

static inline uint64_t plat_fetch_xor_rel64(uint64_t *p, uint64_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_xor(p, v, __ATOMIC_RELEASE);
}

/* ---- 32-bit atomics on plain storage ---------------------------------- */

static inline uint32_t plat_load_rlx32(const uint32_t *p)
{
	PLAT_YIELD();
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t plat_load_acq32(const uint32_t *p)
{
	PLAT_YIELD();
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void plat_store_rlx32(uint32_t *p, uint32_t v)
{
	PLAT_YIELD();
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void plat_store_rel32(uint32_t *p, uint32_t v)
{
	PLAT_YIELD();
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline bool plat_cas_rel32(uint32_t *p, uint32_t *old, uint32_t v)
{
	PLAT_YIELD();
	return __atomic_compare_exchange_n(p, old, v, false, __ATOMIC_RELEASE,
					   __ATOMIC_ACQUIRE);
}

static inline uint32_t plat_xchg_acq_rel32(uint32_t *p, uint32_t v)
{
	PLAT_YIELD();
	return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
}

/* ---- fences and waiting ---------------------------------------------- */

static inline void plat_fence_seq_cst(void)
{
	PLAT_YIELD();
#ifdef PLAT_TSAN
	/* ThreadSanitizer does not model fences (GCC rejects them under
	 * -Wtsan): a seq_cst read-modify-write of one word per translation
	 * unit stands in, ordering every fencing thread of that unit. */
	static uint32_t plat_fence_word;

	__atomic_fetch_add(&plat_fence_word, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* One iteration of a spin-wait: the only way the library busy-waits. */
void plat_cpu_relax(void);

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
	for (;;) {
		/* Acquire pairs with the release store in plat_spin_unlock(). */
		if (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) == 0)
			return;
		while (plat_load_rlx32(&l->v))
			plat_cpu_relax();
	}
}

static inline void plat_spin_unlock(struct plat_spinlock *l)
{
	plat_store_rel32(&l->v, 0);
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
	PLAT_YIELD();
	/* Relaxed: the ticket only orders waiters; the acquire is below. */
	uint32_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);

	/* Acquire pairs with the release store in plat_ticket_unlock(). */
	while (plat_load_acq32(&l->owner) != ticket)
		plat_cpu_relax();
}

static inline void plat_ticket_unlock(struct plat_ticketlock *l)
{
	/* Only the holder writes owner. */
	plat_store_rel32(&l->owner, plat_load_rlx32(&l->owner) + 1);
}

/* Sleeping mutex for rare, possibly long sections. */
struct plat_mutex {
	pthread_mutex_t m;
};

int plat_mutex_init(struct plat_mutex *m);
void plat_mutex_destroy(struct plat_mutex *m);

static inline void plat_mutex_lock(struct plat_mutex *m)
{
	PLAT_YIELD();
	pthread_mutex_lock(&m->m);
}

static inline void plat_mutex_unlock(struct plat_mutex *m)
{
	pthread_mutex_unlock(&m->m);
	PLAT_YIELD();
}

/* ---- threads ---------------------------------------------------------- */

struct plat_thread {
	pthread_t t;
};

/* Start fn(arg) on a new thread. 0 or a negative errno. */
int plat_thread_start(struct plat_thread *t, void *(*fn)(void *), void *arg);
void plat_thread_join(struct plat_thread *t);
/* Sleep the calling thread (timer threads only). */
void plat_sleep_ns(uint64_t ns);

/* ---- time and CPU ----------------------------------------------------- */

/* Monotonic nanoseconds. */
uint64_t plat_clock_ns(void);

/* The calling thread's current CPU (0-based; 0 if unknown). */
unsigned plat_cpu_id(void);

/* Number of CPUs the platform has online (at least 1). */
unsigned plat_cpu_count(void);

/* ---- RCU (liburcu, bulletproof flavour: no thread registration) ------- */

struct plat_rcu_head;
typedef void (*plat_rcu_fn)(struct plat_rcu_head *head);

struct plat_rcu_head {
	void *urcu[2];		/* storage for liburcu's struct rcu_head */
	plat_rcu_fn fn;
};

/*
 * Read-side sections are inline: they sit on every map/unmap call. They
 * may nest and may block; no registration is needed (urcu-bp).
 */
#if !defined(IOPT_URCU_OUT_OF_LINE) && !defined(_LGPL_SOURCE)
#define _LGPL_SOURCE	/* inline read side; see CMakeLists.txt for when not */
#endif
#include <urcu-bp.h>

#ifdef PLAT_TSAN
extern char plat_rcu_tsan_token;
#endif

static inline void plat_rcu_read_lock(void)
{
	urcu_bp_read_lock();
}

static inline void plat_rcu_read_unlock(void)
{
#ifdef PLAT_TSAN
	/* Pairs with the acquire in every RCU callback (platform.c). */
	__tsan_release(&plat_rcu_tsan_token);
#endif
	urcu_bp_read_unlock();
}

/*
 * Queue fn(head) to run after every read-side section that has begun
 * before this call has ended. Must not be called with head already queued.
 */
void plat_call_rcu(struct plat_rcu_head *head, plat_rcu_fn fn);

/* Wait until every callback queued so far has run. Not from a read section. */
void plat_rcu_barrier(void);

#endif /* IOPT_PLATFORM_H */
