/* SPDX-License-Identifier: MIT */
/*
 * The simulation's scheduler and interrupts (src/sim/sim_sched.c,
 * docs/sim.md "Threads and the scheduler", "Interrupts"), each against a
 * timeline computed by hand from the parameters: slice S, context switch
 * cs, interrupt entry E. Instructions cost nothing here (ipc 0), so the
 * only costs are the named ones and a few cycles of platform calls and
 * line accesses, which the tolerances (SLACK) cover.
 *   - two threads on one CPU, 2.5 S of work each: T0 runs [0, S), T1
 *     [S+cs, 2S+cs), T0 [2S+2cs, 3S+2cs), T1 [3S+3cs, 4S+3cs), T0 ends at
 *     4.5S+4cs, T1 at 5S+5cs; four preemptions, five switches.
 *   - a spinlock holder preempted (preempt_spin 0): CPU 0 runs the holder
 *     (1.5 S inside) and another thread (2 S), CPU 1 spins for the lock:
 *     it gets it at 2.5S+2cs, a slice later than the 1.5 S it gets it at
 *     when spinlocks disable preemption; a sleeping mutex's waiter waits
 *     the same slice.
 *   - an interrupt at X on a CPU spinning on a flag runs its handler there,
 *     at X+E, in interrupt context, on the spinning thread; the handler's
 *     work holds the spinner past the flag's store.
 *   - interrupts raised inside an irq-save section run at its restore.
 *   - an interrupt for an idle CPU runs there at X+E.
 *   - a sleeping thread gives its CPU to another; a timer wakes it.
 *   - a handler calls the library: a timer on CPU 0 frees the IOVAs the
 *     thread it interrupts allocates (the kernel's TX-completion pattern);
 *     a shadow of the live ranges sees none handed out twice, every free
 *     succeeds and nothing is left live.
 *   - a run beside a thread started from the host context: its threads
 *     take the free slots and number 0 .. n-1;
 *   - the same seed gives the same trace; bad arguments are -EINVAL;
 *     blocking inside a handler aborts.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <iopgtable/iova.h>
#include <iopgtable/sim.h>

#include "../src/platform/platform.h"

#define S 1000000ull		/* slice */
#define CS 4000ull		/* context switch */
#define E 1000ull		/* interrupt entry and return */
#define SLACK 1000ull		/* platform calls, line accesses */

static struct iopt_sim *mk(unsigned cpus, unsigned preempt_spin)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = 7;
	p.ipc = 0;
	p.sched_slice = S;
	p.ctx_switch = CS;
	p.irq_entry = E;
	p.preempt_spin = preempt_spin;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	return s;
}

static void near(uint64_t got, uint64_t want)
{
	if (got < want || got > want + SLACK)
		fail_msg("at %llu, wanted %llu (+%llu)", (unsigned long long)got,
			 (unsigned long long)want, (unsigned long long)SLACK);
}

/* ---- time slices -------------------------------------------------------- */

static uint64_t end_at[8];

static void work_fn(unsigned t, void *arg)
{
	iopt_sim_work((uint64_t)(uintptr_t)arg);
	end_at[t] = iopt_sim_now();
}

static void test_slices(void **state)
{
	struct iopt_sim *s = mk(1, 1);
	struct iopt_sim_stats st;

	assert_int_equal(iopt_sim_run_threads(s, 2, work_fn,
					      (void *)(uintptr_t)(5 * S / 2)), 0);
	near(end_at[0], 9 * S / 2 + 4 * CS);
	near(end_at[1], 5 * S + 5 * CS);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.preemptions, 4);
	assert_int_equal(st.ctx_switches, 5);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.cpus, 1);
	iopt_sim_destroy(s);
}

/* One thread per CPU: no slice ever ends with someone waiting. */
static void test_no_waiters_no_preemption(void **state)
{
	struct iopt_sim *s = mk(4, 1);
	struct iopt_sim_stats st;

	assert_int_equal(iopt_sim_run(s, work_fn, (void *)(uintptr_t)(10 * S)), 0);
	for (int i = 0; i < 4; i++)
		near(end_at[i], 10 * S);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.preemptions, 0);
	assert_int_equal(st.ctx_switches, 0);
	iopt_sim_destroy(s);
}

/* ---- a lock holder preempted ------------------------------------------- */

struct holder {
	_Alignas(64) struct plat_spinlock spin;
	_Alignas(64) struct plat_mutex mutex;
	bool use_mutex;
	uint64_t acquired;		/* when thread 1 got it */
};

static void holder_fn(unsigned t, void *arg)
{
	struct holder *h = arg;

	switch (t) {
	case 0:		/* CPU 0: holds it 1.5 S */
		if (h->use_mutex)
			plat_mutex_lock(&h->mutex);
		else
			plat_spin_lock(&h->spin);
		iopt_sim_work(3 * S / 2);
		if (h->use_mutex)
			plat_mutex_unlock(&h->mutex);
		else
			plat_spin_unlock(&h->spin);
		break;
	case 1:		/* CPU 1: asks for it just after */
		iopt_sim_work(1000);
		if (h->use_mutex)
			plat_mutex_lock(&h->mutex);
		else
			plat_spin_lock(&h->spin);
		h->acquired = iopt_sim_now();
		if (h->use_mutex)
			plat_mutex_unlock(&h->mutex);
		else
			plat_spin_unlock(&h->spin);
		break;
	default:	/* CPU 0 too: queued behind thread 0 */
		iopt_sim_work(2 * S);
		break;
	}
}

static uint64_t holder_run(unsigned preempt_spin, bool use_mutex)
{
	struct iopt_sim *s = mk(2, preempt_spin);
	struct holder *h = calloc(1, sizeof(*h));
	uint64_t t;

	assert_non_null(h);
	plat_spin_init(&h->spin);
	plat_mutex_init(&h->mutex);
	h->use_mutex = use_mutex;
	assert_int_equal(iopt_sim_run_threads(s, 3, holder_fn, h), 0);
	t = h->acquired;
	plat_mutex_destroy(&h->mutex);
	free(h);
	iopt_sim_destroy(s);
	return t;
}

static void test_spin_holder_preempted(void **state)
{
	/* Preempted at S holding it; the other thread's slice; back at
	 * 2S+2cs with 0.5 S to go. */
	near(holder_run(0, false), 5 * S / 2 + 2 * CS);
	/* Not preemptible while it holds it: released at 1.5 S. */
	near(holder_run(1, false), 3 * S / 2);
}

static void test_mutex_holder_preempted(void **state)
{
	/* A sleeping lock never holds off preemption. */
	near(holder_run(1, true), 5 * S / 2 + 2 * CS);
}

/* ---- interrupts ------------------------------------------------------------ */

struct spin {
	_Alignas(64) uint64_t flag;
	uint64_t handler_work;
	uint64_t h_at, h_end, exit_at, restore_at;
	unsigned h_cpu, h_thread, h_count;
	int h_irq;
	bool spinning, h_spinning;
	bool h_cpu_ok;
};

static void handler(unsigned cpu, void *arg)
{
	struct spin *sp = arg;

	sp->h_at = iopt_sim_now();
	sp->h_cpu = cpu;
	sp->h_thread = iopt_sim_thread();
	sp->h_irq = iopt_sim_in_irq();
	sp->h_count++;
	/* No cmocka assertion on a simulated CPU: recorded, checked after. */
	sp->h_cpu_ok = iopt_sim_cpu() == cpu;
	sp->h_spinning = sp->spinning;
	if (sp->handler_work)
		iopt_sim_work(sp->handler_work);
	sp->h_end = iopt_sim_now();
}

static void spin_fn(unsigned t, void *arg)
{
	struct spin *sp = arg;

	if (t == 0) {
		sp->spinning = true;
		while (!plat_load_acq64(&sp->flag))
			plat_cpu_relax();
		sp->spinning = false;
		sp->exit_at = iopt_sim_now();
	} else {
		iopt_sim_work(200000);
		plat_store_rel64(&sp->flag, 1);
	}
}

static void test_irq_mid_spin(void **state)
{
	struct iopt_sim *s = mk(2, 1);
	struct spin sp = { .handler_work = 300000 };
	struct iopt_sim_stats st;

	assert_int_equal(iopt_sim_irq_at(s, 0, 50000, handler, &sp), 0);
	assert_int_equal(iopt_sim_run(s, spin_fn, &sp), 0);
	assert_int_equal(sp.h_count, 1);
	near(sp.h_at, 50000 + E);
	assert_int_equal(sp.h_cpu, 0);
	assert_int_equal(sp.h_thread, 0);	/* on the spinner's stack */
	assert_true(sp.h_spinning && sp.h_cpu_ok);
	assert_true(sp.h_irq);
	/* The flag came at 200000, while the handler ran: the spin ends
	 * only when the handler returns. */
	near(sp.exit_at, sp.h_end);
	near(sp.h_end, 50000 + E + 300000);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.interrupts, 1);
	assert_int_equal(st.ops[IOPT_SIM_OP_IRQ], 1);
	iopt_sim_destroy(s);
}

static void irqsave_fn(unsigned t, void *arg)
{
	struct spin *sp = arg;
	unsigned long f = iopt_sim_irq_save();

	iopt_sim_work(100000);
	sp->restore_at = iopt_sim_now();
	iopt_sim_irq_restore(f);
	iopt_sim_work(10);
}

static void test_irqsave_defers(void **state)
{
	struct iopt_sim *s = mk(1, 1);
	struct spin sp = { 0 };

	assert_int_equal(iopt_sim_irq_at(s, 0, 10000, handler, &sp), 0);
	assert_int_equal(iopt_sim_run(s, irqsave_fn, &sp), 0);
	assert_int_equal(sp.h_count, 1);
	near(sp.restore_at, 100000);
	near(sp.h_at, sp.restore_at + E);
	iopt_sim_destroy(s);
}

static void test_irq_idle_cpu(void **state)
{
	struct iopt_sim *s = mk(2, 1);
	struct spin sp = { .flag = 1 };

	assert_int_equal(iopt_sim_irq_at(s, 1, 20000, handler, &sp), 0);
	assert_int_equal(iopt_sim_run_threads(s, 1, work_fn,
					      (void *)(uintptr_t)100000), 0);
	assert_int_equal(sp.h_count, 1);
	assert_int_equal(sp.h_cpu, 1);
	assert_true(sp.h_cpu_ok && sp.h_irq);
	near(sp.h_at, 20000 + E);
	iopt_sim_destroy(s);
}

static unsigned order_seen[4], order_n;

static void order_handler(unsigned cpu, void *arg)
{
	order_seen[order_n++] = (unsigned)(uintptr_t)arg;
}

static uint64_t early_at[2];

static void early_handler(unsigned cpu, void *arg)
{
	early_at[(uintptr_t)arg] = iopt_sim_now();
}

static void raise_fn(unsigned t, void *arg)
{
	struct iopt_sim *s = arg;

	/* CPU 1 idles; the later interrupt is raised first. */
	iopt_sim_irq_at(s, 1, 10000, early_handler, (void *)1);
	iopt_sim_irq_at(s, 1, 5000, early_handler, (void *)0);
	iopt_sim_work(50000);
}

/* An idle CPU armed for a later interrupt takes an earlier one on time. */
static void test_irq_earlier_on_idle_cpu(void **state)
{
	struct iopt_sim *s = mk(2, 1);

	assert_int_equal(iopt_sim_run_threads(s, 1, raise_fn, s), 0);
	near(early_at[0], 5000 + E);
	near(early_at[1], 10000 + E);
	iopt_sim_destroy(s);
}

static void test_irq_order(void **state)
{
	struct iopt_sim *s = mk(1, 1);

	order_n = 0;
	assert_int_equal(iopt_sim_irq_at(s, 0, 5000, order_handler, (void *)2), 0);
	assert_int_equal(iopt_sim_irq_at(s, 0, 3000, order_handler, (void *)1), 0);
	assert_int_equal(iopt_sim_irq_at(s, 0, 5000, order_handler, (void *)3), 0);
	assert_int_equal(iopt_sim_run_threads(s, 1, work_fn,
					      (void *)(uintptr_t)100000), 0);
	assert_int_equal(order_n, 3);
	assert_int_equal(order_seen[0], 1);
	assert_int_equal(order_seen[1], 2);
	assert_int_equal(order_seen[2], 3);
	iopt_sim_destroy(s);
}

/* ---- a handler that calls the library ------------------------------------ */

#define LIB_N 3000
#define LIB_SPACE 4096

struct libirq {
	struct iopt_iova *d;
	struct iopt_sim *sim;
	uint64_t ring[LIB_N];
	unsigned head, tail;		/* pushed by the thread, popped by the handler */
	unsigned char live[LIB_SPACE];
	unsigned dup, bad_free, handler_frees, not_irq;
	bool done;
};

static void lib_free(struct libirq *l, uint64_t pfn)
{
	if (pfn >= LIB_SPACE || !l->live[pfn])
		l->bad_free++;
	else
		l->live[pfn] = 0;
	if (iopt_iova_free_cached(l->d, pfn, 1, IOPT_IOVA_CPU_SELF))
		l->bad_free++;
}

static void lib_timer(unsigned cpu, void *arg)
{
	struct libirq *l = arg;

	if (!iopt_sim_in_irq())
		l->not_irq++;
	while (l->tail != l->head) {
		lib_free(l, l->ring[l->tail++]);
		l->handler_frees++;
	}
	if (!l->done)
		iopt_sim_irq_at(l->sim, cpu, iopt_sim_now() + 2000, lib_timer, l);
}

static void lib_fn(unsigned t, void *arg)
{
	struct libirq *l = arg;

	for (unsigned i = 0; i < LIB_N; i++) {
		uint64_t pfn;
		unsigned long f;

		if (iopt_iova_alloc_cached(l->d, 1, LIB_SPACE - 1,
					   IOPT_IOVA_CPU_SELF, true, &pfn)) {
			l->bad_free++;
			continue;
		}
		if (pfn >= LIB_SPACE || l->live[pfn])
			l->dup++;
		else
			l->live[pfn] = 1;
		/* The ring is shared with the handler: a kernel would
		 * disable interrupts around it too. */
		f = iopt_sim_irq_save();
		l->ring[l->head++] = pfn;
		iopt_sim_irq_restore(f);
		iopt_sim_work(300);
	}
	l->done = true;
	unsigned long f = iopt_sim_irq_save();

	while (l->tail != l->head)
		lib_free(l, l->ring[l->tail++]);
	iopt_sim_irq_restore(f);
}

static void test_handler_calls_library(void **state)
{
	struct iopt_iova_cfg cfg = { .granule = 4096, .start_pfn = 1,
				     .end_pfn = LIB_SPACE, .nr_cpus = 2,
				     .check_cached_frees = true };
	struct iopt_sim *s = mk(2, 1);
	struct libirq *l = calloc(1, sizeof(*l));
	unsigned live = 0;

	assert_non_null(l);
	l->sim = s;
	assert_int_equal(iopt_iova_create(&cfg, &l->d), 0);
	assert_int_equal(iopt_sim_irq_at(s, 0, 5000, lib_timer, l), 0);
	assert_int_equal(iopt_sim_run_threads(s, 1, lib_fn, l), 0);
	for (unsigned i = 0; i < LIB_SPACE; i++)
		live += l->live[i];
	assert_int_equal(l->dup, 0);
	assert_int_equal(l->bad_free, 0);
	assert_int_equal(l->not_irq, 0);
	assert_int_equal(live, 0);
	/* The thread works 300 cycles an allocation, the timer fires every
	 * 2000: most frees are the handler's. */
	assert_true(l->handler_frees > LIB_N / 2);
	iopt_iova_destroy(l->d);
	free(l);
	iopt_sim_destroy(s);
}

/* ---- sleeping ---------------------------------------------------------------- */

static void sleep_fn(unsigned t, void *arg)
{
	if (t == 0) {
		plat_sleep_ns(400000);		/* 1e6 cycles at 2.5 GHz */
		end_at[0] = iopt_sim_now();
	} else {
		iopt_sim_work(500000);
		end_at[1] = iopt_sim_now();
	}
}

static void test_sleep_yields(void **state)
{
	struct iopt_sim *s = mk(1, 1);

	assert_int_equal(iopt_sim_run_threads(s, 2, sleep_fn, NULL), 0);
	/* T1 gets the CPU as T0 sleeps: done at 500000 + cs. */
	near(end_at[1], 500000 + CS);
	/* The timer at 1e6 wakes T0 on the idle CPU: the interrupt, then
	 * the switch from T1's context. */
	near(end_at[0], 1000000 + E + CS);
	iopt_sim_destroy(s);
}

/* ---- determinism, bad input, blocking in a handler --------------------- */

static void mix_fn(unsigned t, void *arg)
{
	struct holder *h = arg;

	for (int i = 0; i < 50; i++) {
		plat_spin_lock(&h->spin);
		iopt_sim_work(1000 + 100 * t);
		plat_spin_unlock(&h->spin);
		if (i % 7 == (int)(t % 7))
			plat_sleep_ns(1000);
		iopt_sim_work(300000);
	}
}

static uint64_t mix_hash(uint64_t seed)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	struct holder *h = calloc(1, sizeof(*h));
	struct iopt_sim_stats st;

	iopt_sim_params_default(&p);
	p.cpus = 3;
	p.seed = seed;
	p.sched_slice = 200000;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	plat_spin_init(&h->spin);
	assert_int_equal(iopt_sim_run_threads(s, 10, mix_fn, h), 0);
	iopt_sim_stats(s, &st);
	assert_true(st.preemptions > 0);
	assert_true(st.interrupts >= 10 * 7);
	iopt_sim_destroy(s);
	free(h);
	return st.trace_hash;
}

static void test_deterministic(void **state)
{
	assert_true(mix_hash(11) == mix_hash(11));
}

static void nop(unsigned cpu, void *arg)
{
}

/* ---- a run beside a thread started from the host context ---------------- */

static uint64_t side_stop;
static unsigned seen_tid[4], seen_n;

static void *side_thread(void *arg)
{
	while (!plat_load_acq64(&side_stop))
		plat_sleep_ns(1000);
	return NULL;
}

static void tid_fn(unsigned t, void *arg)
{
	if (t < 4 && iopt_sim_thread() == t)
		seen_tid[t] = 1;
	seen_n++;
}

/* The side thread (a flush-queue timer, say) keeps its slot; the run's
 * threads take the free ones and still number 0 .. n-1. */
static void test_run_beside_host_thread(void **state)
{
	struct iopt_sim *s = mk(2, 1);
	struct plat_thread th;

	assert_int_equal(plat_thread_start(&th, side_thread, NULL), 0);
	seen_n = 0;
	assert_int_equal(iopt_sim_run_threads(s, 4, tid_fn, NULL), 0);
	assert_int_equal(seen_n, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen_tid[i], 1);
	plat_store_rel64(&side_stop, 1);
	plat_thread_join(&th);
	iopt_sim_destroy(s);
}

static void test_bad_args(void **state)
{
	struct iopt_sim *s = mk(2, 1);

	assert_int_equal(iopt_sim_irq_at(NULL, 0, 0, nop, NULL), -EINVAL);
	assert_int_equal(iopt_sim_irq_at(s, 0, 0, NULL, NULL), -EINVAL);
	assert_int_equal(iopt_sim_irq_at(s, 2, 0, nop, NULL), -EINVAL);
	assert_int_equal(iopt_sim_run_threads(s, 0, nop, NULL), -EINVAL);
	assert_int_equal(iopt_sim_run_threads(s, IOPT_SIM_MAX_CPUS + 1, nop,
					      NULL), -EINVAL);
	assert_int_equal(iopt_sim_run_threads(s, 1, NULL, NULL), -EINVAL);
	assert_int_equal(iopt_sim_run_threads(NULL, 1, nop, NULL), -EINVAL);
	{
		struct iopt_sim_params q;

		iopt_sim_get_params(s, &q);
		assert_int_equal(q.cpus, 2);
		assert_int_equal(q.sched_slice, S);
		assert_int_equal(q.irq_entry, E);
		iopt_sim_get_params(NULL, &q);
		assert_int_equal(q.cpus, 0);
	}
	/* Nothing changed: a run still works and takes no interrupt. */
	assert_int_equal(iopt_sim_run(s, nop, NULL), 0);
	{
		struct iopt_sim_stats st;

		iopt_sim_stats(s, &st);
		assert_int_equal(st.interrupts, 0);
		assert_int_equal(st.threads, 2);	/* the one run's */
	}
	iopt_sim_destroy(s);
}

static struct plat_mutex held;

static void blocking_handler(unsigned cpu, void *arg)
{
	plat_mutex_lock(&held);		/* held by thread 1: must abort */
}

static void block_fn(unsigned t, void *arg)
{
	if (t == 1) {
		plat_mutex_lock(&held);
		iopt_sim_work(1000000);
		plat_mutex_unlock(&held);
	} else {
		iopt_sim_work(2000000);
	}
}

static void test_block_in_handler_aborts(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct iopt_sim *s = mk(2, 1);

		/* The child's abort message is expected: keep it off. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		plat_mutex_init(&held);
		iopt_sim_irq_at(s, 0, 100000, blocking_handler, NULL);
		iopt_sim_run(s, block_fn, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_no_waiters_no_preemption),
		cmocka_unit_test(test_spin_holder_preempted),
		cmocka_unit_test(test_mutex_holder_preempted),
		cmocka_unit_test(test_irq_mid_spin),
		cmocka_unit_test(test_irqsave_defers),
		cmocka_unit_test(test_irq_idle_cpu),
		cmocka_unit_test(test_irq_order),
		cmocka_unit_test(test_irq_earlier_on_idle_cpu),
		cmocka_unit_test(test_handler_calls_library),
		cmocka_unit_test(test_sleep_yields),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_run_beside_host_thread),
		cmocka_unit_test(test_block_in_handler_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
