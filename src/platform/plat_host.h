/* SPDX-License-Identifier: MIT */
/*
 * The host backend of the platform layer (the default build): C11/GCC
 * atomics on the machine's memory, POSIX threads and liburcu's bulletproof
 * flavour. Included by platform.h only; see there for the contract of
 * each operation. Everything here is inline because it sits on every
 * map/unmap path; the out-of-line rest is in platform.c.
 */
#ifndef IOPT_PLAT_HOST_H
#define IOPT_PLAT_HOST_H

#ifndef IOPT_PLATFORM_H
#error "include platform.h, not plat_host.h"
#endif

#include <pthread.h>

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

static inline uint32_t plat_xchg_acq32(uint32_t *p, uint32_t v)
{
	PLAT_YIELD();
	return __atomic_exchange_n(p, v, __ATOMIC_ACQUIRE);
}

static inline uint32_t plat_fetch_add_rlx32(uint32_t *p, uint32_t v)
{
	PLAT_YIELD();
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* ---- preemption and local interrupts: nothing to do on the host ------- */

static inline void plat_spin_hold(void)
{
}

static inline void plat_spin_unhold(void)
{
}

static inline unsigned long plat_irq_save(void)
{
	return 0;
}

static inline void plat_irq_restore(unsigned long flags)
{
	(void)flags;
}

static inline void plat_preempt_disable(void)
{
}

static inline void plat_preempt_enable(void)
{
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

/* A driver's call into a device model: nothing to do here (the model's
 * own lock orders concurrent calls). */
static inline void plat_mmio_begin(const void *dev)
{
	(void)dev;
}

static inline void plat_mmio_end(const void *dev)
{
	(void)dev;
}

/* A device model's access to memory: nothing to do here (the CPUs'
 * caches are the hardware's own, and host memory is what a device sees). */
static inline void plat_dev_read(const void *p, void *buf, size_t len)
{
	(void)p;
	(void)buf;
	(void)len;
}

static inline void plat_dev_write(const void *p, size_t len)
{
	(void)p;
	(void)len;
}

/* Cache maintenance: nothing. The host's table memory is what the walker
 * (a model reading host memory) sees, so there is nothing to clean. */
static inline void plat_cache_clean(const void *p, size_t len)
{
	(void)p;
	(void)len;
}

/* ---- per-CPU storage -------------------------------------------------- */

/* Host: one instance per thread (a host thread is the unit that runs on a
 * CPU and never migrates inside a library call's use of it). */
#define PLAT_CPU_LOCAL(type, name) static _Thread_local type name##_plat_local
#define plat_cpu_local(name) (&name##_plat_local)

struct plat_mutex {
	pthread_mutex_t m;
};

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

struct plat_thread {
	pthread_t t;
};

/* ---- RCU read side (liburcu bulletproof flavour: no registration) --- */

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

#endif /* IOPT_PLAT_HOST_H */
