/* SPDX-License-Identifier: MIT */
/*
 * Host implementation of the platform layer: POSIX threads, the monotonic
 * clock, sched_getcpu() and liburcu's bulletproof flavour.
 */
#define _GNU_SOURCE
#include "platform.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

/* glibc 2.35 and later register an rseq area for every thread; it lies
 * at __rseq_offset from the thread pointer. */
#if defined(__GLIBC__) && defined(__has_include) && defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_builtin(__builtin_thread_pointer)
#include <sys/rseq.h>
#define PLAT_HAVE_RSEQ 1
#endif
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

_Static_assert(sizeof(((struct plat_rcu_head *)0)->urcu) >=
		       sizeof(struct rcu_head),
	       "plat_rcu_head too small for liburcu's rcu_head");

void plat_cpu_relax(void)
{
	PLAT_YIELD();
#if defined(__x86_64__) || defined(__i386__)
	_mm_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

int plat_mutex_init(struct plat_mutex *m)
{
	return -pthread_mutex_init(&m->m, NULL);
}

void plat_mutex_destroy(struct plat_mutex *m)
{
	pthread_mutex_destroy(&m->m);
}

int plat_thread_start(struct plat_thread *t, void *(*fn)(void *), void *arg)
{
	return -pthread_create(&t->t, NULL, fn, arg);
}

void plat_thread_join(struct plat_thread *t)
{
	pthread_join(t->t, NULL);
}

void plat_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts))
		;
}

void plat_delay_ns(uint64_t ns)
{
	struct timespec ts;
	uint64_t end;

	/* A long delay sleeps: the host's other threads (a runner) keep
	 * their CPU, and nanosleep's granularity no longer matters. */
	if (ns >= PLAT_DELAY_SLEEP_NS) {
		plat_sleep_ns(ns);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ns;
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec < end);
}

uint64_t plat_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The CPU the calling thread runs on. Where glibc registered the thread's
 * rseq area, the kernel keeps the current CPU in its cpu_id field (written
 * by the kernel on the thread's return to user space, read here with a
 * relaxed load: any value it holds was the thread's CPU at some point,
 * which is all sched_getcpu() promises too). glibc 2.36's sched_getcpu()
 * asks the vDSO instead: 4-5 ns on this VM against under 1 ns, and the
 * IOVA allocator asks on every allocation (the 2-thread tree pair
 * measured it).
 */
unsigned plat_cpu_id(void)
{
#ifdef PLAT_HAVE_RSEQ
	if (__rseq_size >= 8) {
		const struct rseq *r = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);
		uint32_t c = __atomic_load_n(&r->cpu_id, __ATOMIC_RELAXED);

		if ((int32_t)c >= 0)	/* RSEQ_CPU_ID_UNINITIALIZED: -1 */
			return c;
	}
#endif
	int cpu = sched_getcpu();

	return cpu < 0 ? 0u : (unsigned)cpu;
}

unsigned plat_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1u : (unsigned)n;
}

#ifdef IOPT_DEBUG_YIELD
void plat_debug_yield(void)
{
	static _Thread_local uint64_t state;

	if (!state)
		state = (uint64_t)(uintptr_t)&state | 1;
	/* xorshift64: about one access in 64 yields. */
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	if ((state & 63) == 0)
		sched_yield();
}
#endif

/*
 * ThreadSanitizer cannot see liburcu's grace periods (the library is not
 * instrumented). A grace period orders every read-side section that ended
 * before a callback runs ahead of that callback; we tell TSan exactly that:
 * each unlock releases a token that each callback acquires, and queueing a
 * callback releases its head, which the callback acquires.
 */
#ifdef PLAT_TSAN
char plat_rcu_tsan_token;
#endif

static void plat_rcu_trampoline(struct rcu_head *urcu_head)
{
	struct plat_rcu_head *head = (struct plat_rcu_head *)(void *)urcu_head;

#ifdef PLAT_TSAN
	__tsan_acquire(head);
	__tsan_acquire(&plat_rcu_tsan_token);
#endif
	head->fn(head);
}

void plat_call_rcu(struct plat_rcu_head *head, plat_rcu_fn fn)
{
	head->fn = fn;
#ifdef PLAT_TSAN
	__tsan_release(head);
#endif
	urcu_bp_call_rcu((struct rcu_head *)(void *)head->urcu,
			 plat_rcu_trampoline);
}

void plat_rcu_barrier(void)
{
	urcu_bp_barrier();
}
