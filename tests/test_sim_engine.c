/* SPDX-License-Identifier: MIT */
/*
 * The simulation engine (src/sim/, docs/sim.md), against expectations
 * that do not come from the engine: litmus outcomes the memory models
 * allow or forbid, coherence costs summed by hand from the parameters,
 * exact counts, the RCU grace-period rule, and deadlocks built on purpose.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>
#include <iopgtable/sim.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "../src/platform/platform.h"

/* Lines of their own, so that no two test variables share one. */
struct line {
	_Alignas(64) uint64_t v;
	char pad[56];
};

static struct iopt_sim *mk(unsigned cpus, uint64_t seed,
			   enum iopt_sim_memmodel mm)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = seed;
	p.memmodel = mm;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	return s;
}

/* ---- store buffering: x=1; r1=y || y=1; r2=x ----------------------------- */

struct sb_litmus {
	struct line x, y;
	uint64_t r[2];
	bool fence;
};

static void sb_cpu(unsigned cpu, void *arg)
{
	struct sb_litmus *t = arg;
	uint64_t *mine = cpu ? &t->y.v : &t->x.v;
	uint64_t *other = cpu ? &t->x.v : &t->y.v;

	plat_store_rel64(mine, 1);
	if (t->fence)
		plat_fence_seq_cst();
	t->r[cpu] = plat_load_acq64(other);
}

/* How many of nseeds runs end with r1 = r2 = 0. */
static unsigned sb_count(enum iopt_sim_memmodel mm, bool fence, unsigned nseeds)
{
	unsigned both_zero = 0;

	for (uint64_t seed = 1; seed <= nseeds; seed++) {
		struct iopt_sim *s = mk(2, seed, mm);
		struct sb_litmus t = { .fence = fence };

		assert_int_equal(iopt_sim_run(s, sb_cpu, &t), 0);
		/* Both loads read some store or the initial value. */
		assert_true(t.r[0] <= 1 && t.r[1] <= 1);
		both_zero += !t.r[0] && !t.r[1];
		iopt_sim_destroy(s);
	}
	return both_zero;
}

static void test_store_buffering(void **state)
{
	(void)state;
	/* Sequential consistency forbids r1 = r2 = 0. */
	assert_int_equal(sb_count(IOPT_SIM_SC, false, 300), 0);
	/* TSO allows it: some seed shows it. */
	assert_true(sb_count(IOPT_SIM_TSO, false, 300) > 0);
	/* A full fence between the store and the load forbids it again. */
	assert_int_equal(sb_count(IOPT_SIM_TSO, true, 300), 0);
}

/* ---- message passing with release/acquire --------------------------------- */

struct mp_litmus {
	struct line data, flag;
	uint64_t seen;
};

static void mp_cpu(unsigned cpu, void *arg)
{
	struct mp_litmus *t = arg;

	if (cpu == 0) {
		plat_store_rlx64(&t->data.v, 42);
		/* Release: pairs with the acquire load below. */
		plat_store_rel64(&t->flag.v, 1);
	} else {
		while (!plat_load_acq64(&t->flag.v))
			plat_cpu_relax();
		t->seen = plat_load_rlx64(&t->data.v);
	}
}

static void test_message_passing(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct iopt_sim *s = mk(2, seed, IOPT_SIM_TSO);
		struct mp_litmus t = { 0 };

		assert_int_equal(iopt_sim_run(s, mp_cpu, &t), 0);
		assert_int_equal(t.seen, 42);
		iopt_sim_destroy(s);
	}
}

/* ---- coherence costs by hand ------------------------------------------------ */

/* Round numbers, distinct so that a wrong case cannot hide. */
static void cost_params(struct iopt_sim_params *p, unsigned cpus)
{
	iopt_sim_params_default(p);
	p->cpus = cpus;
	p->hit = 1;
	p->miss_mem = 100;
	p->fetch_shared = 30;
	p->fetch_modified = 50;
	p->upgrade = 20;
	p->per_sharer = 7;
	p->transfer = 0;
	p->atomic_extra = 3;
}

static struct line cost_x;

/*
 * CPU i starts its access at cycle 1000 i (work() puts it there):
 *   0: store X at 0 (nobody has it: miss 100), load X (hit 1), then at
 *      5000 store X again: it and 1, 2, 3 share it: upgrade 20 + 3 x 7.
 *   1: load X at 1000: 0 has it modified: fetch_modified 50.
 *   2, 3: load X at 2000, 3000: clean in others: fetch_shared 30.
 *   4: at 6000 an RMW of X: 0 has it modified: 50, plus atomic_extra 3.
 */
static void cost_cpu(unsigned cpu, void *arg)
{
	(void)arg;
	if (cpu == 0) {
		plat_store_rlx64(&cost_x.v, 1);
		(void)plat_load_rlx64(&cost_x.v);
		iopt_sim_work(5000 - 101);
		plat_store_rlx64(&cost_x.v, 2);
		return;
	}
	iopt_sim_work(cpu == 4 ? 6000 : 1000 * cpu);
	if (cpu == 4)
		(void)plat_fetch_add_rlx64(&cost_x.v, 1);
	else
		(void)plat_load_rlx64(&cost_x.v);
}

static void test_costs(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	const uint64_t want[5] = {
		100 + 1 + (5000 - 101) + 20 + 3 * 7,
		1000 + 50,
		2000 + 30,
		3000 + 30,
		6000 + 50 + 3,
	};

	(void)state;
	cost_params(&p, 5);
	for (uint64_t seed = 1; seed <= 5; seed++) {
		p.seed = seed;
		assert_int_equal(iopt_sim_create(&p, &s), 0);
		memset(&cost_x, 0, sizeof(cost_x));
		assert_int_equal(iopt_sim_run(s, cost_cpu, NULL), 0);
		for (unsigned i = 0; i < 5; i++)
			assert_int_equal(iopt_sim_cpu_cycles(s, i), want[i]);
		iopt_sim_destroy(s);
	}
}

/* A write by a CPU that does not hold the line, with k clean sharers:
 * fetch_shared + k per_sharer; across clusters, times cross_cluster_pct. */
static void cost_topo_cpu(unsigned cpu, void *arg)
{
	(void)arg;
	/* 0 writes at 0 (miss), 1 reads at 1000 (same cluster: 50), 2 reads
	 * at 2000 (other cluster; nearest sharer in cluster 0: 30 x 1.5),
	 * 3 writes at 3000 (cluster 1; sharers 0, 1, 2; farthest in cluster
	 * 0: (30 + 3 x 7) x 1.5). */
	iopt_sim_work(1000 * cpu);
	if (cpu == 0 || cpu == 3)
		plat_store_rlx64(&cost_x.v, cpu);
	else
		(void)plat_load_rlx64(&cost_x.v);
}

static void test_costs_topology(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	const uint64_t want[4] = { 100, 1000 + 50, 2000 + 45,
				   3000 + (30 + 3 * 7) * 3 / 2 };

	(void)state;
	cost_params(&p, 4);
	p.cores_per_cluster = 2;
	p.cross_cluster_pct = 150;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	memset(&cost_x, 0, sizeof(cost_x));
	assert_int_equal(iopt_sim_run(s, cost_topo_cpu, NULL), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(iopt_sim_cpu_cycles(s, i), want[i]);
	iopt_sim_destroy(s);
}

/* M CPUs at cycle 0 each do one RMW of one line: the first finds it
 * nowhere (miss 100); the line reaches it at 100 and stays transfer (40)
 * cycles with each CPU it reaches (docs/sim.md, "Contention"), so it
 * reaches the k-th (k >= 1) at 100 + 40 k, later than the k-th's move
 * alone would bring it (its start 40 k plus the previous owner's 50):
 * plus atomic_extra 3 each. Its wait beyond the move's 50 is 50 + 40 k. */
static void cost_queue_cpu(unsigned cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	(void)plat_fetch_add_rlx64(&cost_x.v, 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_costs_queueing(void **state)
{
	enum { M = 8 };
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct iopt_sim *s;
	uint64_t got[M], want[M];

	(void)state;
	cost_params(&p, M);
	p.transfer = 40;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	memset(&cost_x, 0, sizeof(cost_x));
	assert_int_equal(iopt_sim_run(s, cost_queue_cpu, NULL), 0);
	assert_int_equal(cost_x.v, M);
	want[0] = 100 + 3;
	for (unsigned k = 1; k < M; k++)
		want[k] = 100 + 40 * k + 3;
	for (unsigned i = 0; i < M; i++)
		got[i] = iopt_sim_cpu_cycles(s, i);
	qsort(got, M, sizeof(got[0]), cmp_u64);
	qsort(want, M, sizeof(want[0]), cmp_u64);
	for (unsigned i = 0; i < M; i++)
		assert_int_equal(got[i], want[i]);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.hot[0].line, (uintptr_t)&cost_x);
	assert_int_equal(st.hot[0].transfers, M - 1);
	assert_int_equal(st.hot[0].wait_cycles,
			 50 * (M - 1) + 40 * M * (M - 1) / 2);
	assert_non_null(st.hot[0].last_writer_pc);
	iopt_sim_destroy(s);
}

/* ---- spinlock counter, determinism ----------------------------------------- */

struct counter {
	struct plat_spinlock lock;
	struct line count;
	unsigned n;
	bool locked;
	unsigned order[64 * 8];
	struct line next;
};

static void counter_cpu(unsigned cpu, void *arg)
{
	struct counter *t = arg;

	for (unsigned i = 0; i < t->n; i++) {
		if (t->locked)
			plat_spin_lock(&t->lock);
		/* A read and a write the lock must keep together. */
		uint64_t v = plat_load_rlx64(&t->count.v);

		plat_store_rlx64(&t->count.v, v + 1);
		if (t->locked) {
			uint64_t k = plat_load_rlx64(&t->next.v);

			if (k < sizeof(t->order) / sizeof(t->order[0]))
				t->order[k] = cpu;
			plat_store_rlx64(&t->next.v, k + 1);
			plat_spin_unlock(&t->lock);
		}
		iopt_sim_work(cpu % 7);
	}
}

static void test_spinlock_64(void **state)
{
	struct counter *t = calloc(1, sizeof(*t));
	struct iopt_sim *s = mk(64, 7, IOPT_SIM_SC);

	(void)state;
	t->n = 50;
	t->locked = true;
	assert_int_equal(iopt_sim_run(s, counter_cpu, t), 0);
	assert_int_equal(t->count.v, 64 * 50);
	iopt_sim_destroy(s);

	/* Without the lock, increments are lost: the engine interleaves. */
	memset(t, 0, sizeof(*t));
	t->n = 50;
	s = mk(64, 7, IOPT_SIM_SC);
	assert_int_equal(iopt_sim_run(s, counter_cpu, t), 0);
	assert_true(t->count.v < 64 * 50);
	iopt_sim_destroy(s);
	free(t);
}

static void test_determinism(void **state)
{
	struct iopt_sim_stats st[2];
	struct counter *t[2] = { calloc(1, sizeof(**t)), calloc(1, sizeof(**t)) };

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		for (int rep = 0; rep < 2; rep++) {
			struct iopt_sim *s = mk(8, seed, IOPT_SIM_SC);

			memset(t[rep], 0, sizeof(*t[rep]));
			t[rep]->n = 20;
			t[rep]->locked = true;
			assert_int_equal(iopt_sim_run(s, counter_cpu, t[rep]), 0);
			iopt_sim_stats(s, &st[rep]);
			iopt_sim_destroy(s);
		}
		/* Same seed: same interleaving, cycles and hash. */
		assert_memory_equal(t[0]->order, t[1]->order, sizeof(t[0]->order));
		assert_int_equal(st[0].trace_hash, st[1].trace_hash);
		assert_int_equal(st[0].end_cycles, st[1].end_cycles);
		assert_int_equal(st[0].total_ops, st[1].total_ops);
	}
	free(t[0]);
	free(t[1]);
}

/* Different seeds give different lock orders (the first acquisitions
 * tie at cycle 0, and ties go by the seed). */
static void test_seeds_differ(void **state)
{
	struct counter *t = calloc(1, sizeof(*t));
	unsigned first[16];
	unsigned distinct = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 16; seed++) {
		struct iopt_sim *s = mk(8, seed, IOPT_SIM_SC);

		memset(t, 0, sizeof(*t));
		t->n = 5;
		t->locked = true;
		assert_int_equal(iopt_sim_run(s, counter_cpu, t), 0);
		first[seed - 1] = t->order[0];
		iopt_sim_destroy(s);
	}
	for (unsigned i = 0; i < 16; i++) {
		unsigned j;

		for (j = 0; j < i && first[j] != first[i]; j++)
			;
		distinct += j == i;
	}
	/* 16 seeded draws among 8 CPUs: every CPU first is impossible to
	 * miss by much; one CPU always first would mean no seed effect. */
	assert_true(distinct >= 3);
	free(t);
}

/* ---- RCU ------------------------------------------------------------------- */

struct rcu_t {
	struct plat_rcu_head head;
	struct line in_section;
	uint64_t unlock_at, cb_at, barrier_at;
	unsigned cb_runs;
	bool cb_saw_reader;
};

static struct rcu_t *rcu_t_of(struct plat_rcu_head *h)
{
	return (struct rcu_t *)((char *)h - offsetof(struct rcu_t, head));
}

static void rcu_cb(struct plat_rcu_head *h)
{
	struct rcu_t *t = rcu_t_of(h);

	t->cb_runs++;
	t->cb_at = iopt_sim_now();
	t->cb_saw_reader = plat_load_rlx64(&t->in_section.v) != 0;
}

static void rcu_cpu(unsigned cpu, void *arg)
{
	struct rcu_t *t = arg;

	if (cpu == 0) {
		/* A reader that began before call_rcu and stays long. */
		plat_rcu_read_lock();
		plat_store_rlx64(&t->in_section.v, 1);
		iopt_sim_work(100000);
		plat_store_rlx64(&t->in_section.v, 0);
		t->unlock_at = iopt_sim_now();
		plat_rcu_read_unlock();
	} else if (cpu == 1) {
		iopt_sim_work(1000);
		plat_call_rcu(&t->head, rcu_cb);
		plat_rcu_barrier();
		t->barrier_at = iopt_sim_now();
		assert_int_equal(t->cb_runs, 1);
	} else {
		/* Readers that come and go do not hold the grace period. */
		for (int i = 0; i < 50; i++) {
			plat_rcu_read_lock();
			iopt_sim_work(500);
			plat_rcu_read_unlock();
		}
	}
}

static void test_rcu(void **state)
{
	struct iopt_sim_stats st;

	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct iopt_sim *s = mk(4, seed, IOPT_SIM_SC);
		struct rcu_t t = { 0 };

		assert_int_equal(iopt_sim_run(s, rcu_cpu, &t), 0);
		assert_int_equal(t.cb_runs, 1);
		assert_false(t.cb_saw_reader);
		assert_true(t.cb_at >= t.unlock_at);
		assert_true(t.barrier_at >= t.cb_at);
		iopt_sim_stats(s, &st);
		assert_int_equal(st.rcu_callbacks, 1);
		assert_true(st.grace_periods >= 1);
		iopt_sim_destroy(s);
	}
}

/* ---- deadlock ----------------------------------------------------------------- */

static struct plat_mutex dl_a, dl_b;

static void deadlock_cpu(unsigned cpu, void *arg)
{
	struct plat_mutex *first = cpu ? &dl_b : &dl_a;
	struct plat_mutex *second = cpu ? &dl_a : &dl_b;

	(void)arg;
	plat_mutex_lock(first);
	iopt_sim_work(1000);
	plat_mutex_lock(second);
	plat_mutex_unlock(second);
	plat_mutex_unlock(first);
}

static void held_forever_cpu(unsigned cpu, void *arg)
{
	(void)arg;
	if (cpu == 0) {
		plat_mutex_lock(&dl_a);	/* and never unlocks */
		return;
	}
	iopt_sim_work(1000);
	plat_mutex_lock(&dl_a);
}

static void test_deadlock(void **state)
{
	struct iopt_sim *s;

	(void)state;
	plat_mutex_init(&dl_a);
	plat_mutex_init(&dl_b);
	s = mk(2, 3, IOPT_SIM_SC);
	assert_int_equal(iopt_sim_run(s, deadlock_cpu, NULL), -EDEADLK);
	assert_int_equal(iopt_sim_run(s, deadlock_cpu, NULL), -EDEADLK);
	iopt_sim_destroy(s);

	plat_mutex_init(&dl_a);
	s = mk(2, 3, IOPT_SIM_SC);
	assert_int_equal(iopt_sim_run(s, held_forever_cpu, NULL), -EDEADLK);
	iopt_sim_destroy(s);

	/* The same mutexes, taken in one order, do not deadlock. */
	plat_mutex_init(&dl_a);
	plat_mutex_init(&dl_b);
	s = mk(2, 3, IOPT_SIM_SC);
	assert_int_equal(iopt_sim_run(s, cost_queue_cpu, NULL), 0);
	iopt_sim_destroy(s);
}

/* A spin on a flag nobody sets: no CPU blocks, so only the time limit
 * ends the run. */
static void livelock_cpu(unsigned cpu, void *arg)
{
	uint64_t *flag = arg;

	(void)cpu;
	while (!plat_load_acq64(flag))
		plat_cpu_relax();
}

static void test_time_limit(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	uint64_t flag = 0;

	(void)state;
	iopt_sim_params_default(&p);
	p.cpus = 2;
	p.max_cycles = 1000000;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	assert_int_equal(iopt_sim_run(s, livelock_cpu, &flag), -ETIMEDOUT);
	assert_true(iopt_sim_cpu_cycles(s, 0) > 1000000 ||
		    iopt_sim_cpu_cycles(s, 1) > 1000000);
	assert_int_equal(iopt_sim_run(s, livelock_cpu, &flag), -ETIMEDOUT);
	iopt_sim_destroy(s);
}

/* PCT: the lost update of an unlocked increment shows up under some seed
 * at depth 2, and a seed replays exactly. */
static void test_pct(void **state)
{
	struct counter *t = calloc(1, sizeof(*t));
	struct iopt_sim_params p;
	struct iopt_sim_stats a, b;
	struct iopt_sim *s;
	unsigned lost = 0;

	(void)state;
	iopt_sim_params_default(&p);
	p.cpus = 2;
	p.sched = IOPT_SIM_SCHED_PCT;
	p.pct_depth = 2;
	p.pct_steps = 40;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		uint64_t count[2];

		p.seed = seed;
		for (int rep = 0; rep < 2; rep++) {
			memset(t, 0, sizeof(*t));
			t->n = 5;
			assert_int_equal(iopt_sim_create(&p, &s), 0);
			assert_int_equal(iopt_sim_run(s, counter_cpu, t), 0);
			iopt_sim_stats(s, rep ? &b : &a);
			count[rep] = t->count.v;
			iopt_sim_destroy(s);
		}
		assert_int_equal(count[0], count[1]);
		assert_int_equal(a.trace_hash, b.trace_hash);
		assert_true(count[0] <= 10);
		lost += count[0] < 10;
	}
	assert_true(lost > 0);
	free(t);
}

/* ---- threads inside and outside a run ----------------------------------------- */

struct th_t {
	struct line count;
	unsigned ids[8];
	uint64_t started_at;
};

static void *th_worker(void *arg)
{
	struct th_t *t = arg;
	uint64_t k;

	iopt_sim_work(100);
	k = plat_fetch_add_acq_rel64(&t->count.v, 1);
	t->ids[k] = iopt_sim_cpu();
	return NULL;
}

/* A host stress test's worker: runs until the main thread says stop. */
struct stop_t {
	struct line stop;
	struct line iters;
	struct plat_mutex lock;
	uint64_t in_lock;
};

static void *stop_worker(void *arg)
{
	struct stop_t *t = arg;

	while (!plat_load_acq64(&t->stop.v)) {
		plat_mutex_lock(&t->lock);
		/* The mutex excludes: nobody else inside. */
		if (t->in_lock++)
			(void)plat_fetch_add_rlx64(&t->iters.v, 1ull << 40);
		plat_sleep_ns(50);
		t->in_lock--;
		plat_mutex_unlock(&t->lock);
		(void)plat_fetch_add_rlx64(&t->iters.v, 1);
	}
	return NULL;
}

static void th_cpu(unsigned cpu, void *arg)
{
	struct th_t *t = arg;
	struct plat_thread th[4];

	if (cpu != 0)
		return;
	for (int i = 0; i < 4; i++)
		assert_int_equal(plat_thread_start(&th[i], th_worker, t), 0);
	for (int i = 0; i < 4; i++)
		plat_thread_join(&th[i]);
	/* Every thread has finished. */
	assert_int_equal(plat_load_acq64(&t->count.v), 4);
}

static void test_threads(void **state)
{
	struct iopt_sim *s;
	struct iopt_sim_stats st;
	struct plat_thread th[6];
	struct th_t t = { 0 };

	(void)state;
	/* Inside a run: threads are new CPUs beyond the run's. */
	s = mk(2, 5, IOPT_SIM_SC);
	assert_int_equal(iopt_sim_run(s, th_cpu, &t), 0);
	assert_int_equal(t.count.v, 4);
	for (int i = 0; i < 4; i++)
		assert_true(t.ids[i] >= 2 && t.ids[i] < IOPT_SIM_MAX_CPUS);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.cpus, 2 + 4);

	/* Outside a run (the host context): start queues, join runs. */
	memset(&t, 0, sizeof(t));
	for (int i = 0; i < 6; i++)
		assert_int_equal(plat_thread_start(&th[i], th_worker, &t), 0);
	assert_int_equal(t.count.v, 0);		/* nothing ran yet */
	plat_thread_join(&th[5]);
	assert_true(t.count.v >= 1);
	for (int i = 0; i < 6; i++)
		plat_thread_join(&th[i]);
	assert_int_equal(t.count.v, 6);
	/* The pattern of the host stress tests: start workers, sleep, set
	 * stop, join; the sleep is simulated time in which they run. */
	{
		struct stop_t st2 = { 0 };
		struct plat_thread w[4];

		plat_mutex_init(&st2.lock);
		for (int i = 0; i < 4; i++)
			assert_int_equal(plat_thread_start(&w[i], stop_worker, &st2), 0);
		plat_sleep_ns(100000);
		/* Release: pairs with the workers' acquire loads. */
		plat_store_rel64(&st2.stop.v, 1);
		for (int i = 0; i < 4; i++)
			plat_thread_join(&w[i]);
		/* The sections are exclusive (two inside at once would add
		 * 2^40) and each holds the lock 50 ns: within 100 us at most
		 * 2000, plus one per worker finishing after stop; and the
		 * workers did run. */
		assert_true(st2.iters.v > 100 && st2.iters.v <= 2000 + 4);
		plat_mutex_destroy(&st2.lock);
	}
	/* The host sleeping lets simulated time pass. */
	uint64_t t0 = plat_clock_ns();

	plat_sleep_ns(1000);
	assert_int_equal(plat_clock_ns() - t0, 1000);
	iopt_sim_destroy(s);
}

/* ---- 128 CPUs ----------------------------------------------------------------- */

static void many_cpu(unsigned cpu, void *arg)
{
	struct counter *t = arg;

	(void)cpu;
	for (int i = 0; i < 20; i++)
		(void)plat_fetch_add_rlx64(&t->count.v, 1);
	counter_cpu(cpu, t);
}

static void test_128_cpus(void **state)
{
	struct counter *t = calloc(1, sizeof(*t));
	struct iopt_sim *s = mk(128, 11, IOPT_SIM_SC);
	struct iopt_sim_stats st;

	(void)state;
	t->n = 4;
	t->locked = true;
	assert_int_equal(iopt_sim_run(s, many_cpu, t), 0);
	assert_int_equal(t->count.v, 128 * (20 + 4));
	iopt_sim_stats(s, &st);
	assert_int_equal(st.cpus, 128);
	for (unsigned i = 0; i < 128; i++)
		assert_true(iopt_sim_cpu_cycles(s, i) > 0);
	iopt_sim_destroy(s);
	free(t);
}

/* ---- the library itself on simulated CPUs ---------------------------------- */

struct lib_t {
	struct iopt_pgtable *pt;
	unsigned errors;
};

static void nf_all(void *c) { (void)c; }
static void nf_walk(uint64_t i, uint64_t s, uint64_t g, void *c)
{
	(void)i; (void)s; (void)g; (void)c;
}
static void nf_page(struct iopt_pgtable_gather *gt, uint64_t i, uint64_t g, void *c)
{
	(void)gt; (void)i; (void)g; (void)c;
}
static const struct iopt_pgtable_tlb_ops nf_tlb = {
	.flush_all = nf_all, .flush_walk = nf_walk, .add_page = nf_page,
};

static void lib_cpu(unsigned cpu, void *arg)
{
	struct lib_t *t = arg;
	struct iopt_pgtable_gather g;
	/* Each CPU its own 2 MiB of IOVA, adjacent CPUs sharing tables. */
	uint64_t base = (uint64_t)cpu << 21;

	iopt_pgtable_gather_init(&g);
	for (unsigned r = 0; r < 4; r++) {
		for (uint64_t i = 0; i < 64; i++)
			if (iopt_pgtable_map_pages(t->pt, base + i * 4096,
						   (1ull << 32) + base + i * 4096, 4096,
						   1, IOPT_READ | IOPT_WRITE, NULL))
				t->errors++;
		for (uint64_t i = 0; i < 64; i++) {
			uint64_t pa = 0;

			if (iopt_pgtable_iova_to_phys(t->pt, base + i * 4096 + 8, &pa) ||
			    pa != (1ull << 32) + base + i * 4096 + 8)
				t->errors++;
		}
		for (uint64_t i = 0; i < 64; i++)
			if (iopt_pgtable_unmap_pages(t->pt, base + i * 4096, 4096, 1,
						     &g) != 4096)
				t->errors++;
	}
}

static void test_library(void **state)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = 48, .coherent_walk = true, .tlb = &nf_tlb,
	};
	struct iopt_sim_stats st;
	struct lib_t t = { 0 };

	(void)state;
	for (int mm = 0; mm < 2; mm++) {
		struct iopt_sim *s = mk(8, 21, mm ? IOPT_SIM_TSO : IOPT_SIM_SC);

		assert_int_equal(iopt_pgtable_alloc(&cfg, &t.pt), 0);
		t.errors = 0;
		assert_int_equal(iopt_sim_run(s, lib_cpu, &t), 0);
		assert_int_equal(t.errors, 0);
		iopt_sim_stats(s, &st);
		assert_true(st.ops[IOPT_SIM_OP_RMW] > 0);
		assert_true(st.switches > 0);
		iopt_pgtable_free(t.pt);
		iopt_sim_destroy(s);
	}
}

/* ---- an SMMUv3 model and its driver on the timeline ----------------------- */

struct smmu_t {
	struct iopt_smmuv3_drv *drv;
	unsigned errors;
};

static void smmu_cpu(unsigned cpu, void *arg)
{
	struct smmu_t *t = arg;

	(void)cpu;
	for (int i = 0; i < 10; i++) {
		iopt_sim_work(1000);
		/* A CMD_SYNC: its completion (MSI) must reach the polling
		 * CPU through the model run on the simulation's timeline. */
		if (iopt_smmuv3_drv_sync(t->drv))
			t->errors++;
	}
}

static void test_smmu_timeline(void **state)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv3_drv_stats ds;
	struct iopt_sim_stats st;
	struct smmu_t t = { 0 };
	struct iopt_sim *s;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		s = mk(mode ? 4 : 1, 9, IOPT_SIM_SC);
		/* The model at 1 GHz on the simulation's clock, the driver
		 * probed from the host context (the model runs as it waits),
		 * no domain. */
		iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
		c.mem_size = 64ull << 20;
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = s;
		c.drv3.sync = mode ? IOPT_SMMUV3_DRV_SYNC_CONS : IOPT_SMMUV3_DRV_SYNC_MSI;
		c.dma = c.attach = false;
		assert_int_equal(iopt_testbed_create(&c, &tb), 0);
		t.drv = iopt_testbed_smmuv3_drv(tb);
		t.errors = 0;
		assert_int_equal(iopt_sim_run(s, smmu_cpu, &t), 0);
		assert_int_equal(t.errors, 0);
		iopt_smmuv3_drv_get_stats(t.drv, &ds);
		assert_int_equal(ds.sync_timeouts, 0);
		assert_true(ds.syncs >= (mode ? 40u : 10u));
		iopt_sim_stats(s, &st);
		assert_true(st.ops[IOPT_SIM_OP_MMIO] > 0);
		/* With MSI completion (IHI0070 4.7.3) the only register access
		 * a sync needs is the CMDQ_PROD write that publishes it: the
		 * waiter polls memory, where the model, run on the timeline,
		 * writes the MSI. (Without the model on the timeline the
		 * waiter backs off into register reads.) */
		if (!mode)
			assert_int_equal(st.ops[IOPT_SIM_OP_MMIO], 10);
		/* A sync takes the model's sync time at least: simulated time
		 * passed beyond the CPUs' own work. */
		assert_true(st.end_cycles > 10 * 1000);
		iopt_testbed_destroy(tb);
		iopt_sim_destroy(s);
	}
}

/* SMMUv2: syncs serialised per context bank (Linux's choice) each take
 * the model's sync_cycles, on the simulation's clock. */
struct v2_t {
	struct iopt_smmuv2_drv_domain *dom;
	unsigned errors;
};

static void v2_cpu(unsigned cpu, void *arg)
{
	struct v2_t *t = arg;

	(void)cpu;
	for (int i = 0; i < 5; i++)
		if (iopt_smmuv2_drv_tlb_sync(t->dom))
			t->errors++;
}

static void test_smmuv2_timeline(void **state)
{
	enum { CPUS = 8, SYNC = 2000 };
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv2_drv *drv;
	struct iopt_smmuv2_drv_stats ds;
	struct iopt_sim_stats st;
	struct v2_t t = { 0 };
	struct iopt_sim *s = mk(CPUS, 13, IOPT_SIM_SC);

	(void)state;
	/* An MMU-500 at 1 GHz on the simulation's clock, the CPUs at
	 * cpu_ghz (2.5 by default); the driver, no domain. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_size = 64ull << 20;
	c.v2.sync_cycles = SYNC;
	c.clock = IOPT_TESTBED_CLOCK_SIM;
	c.sim = s;
	c.drv2.sync = IOPT_SMMUV2_DRV_SYNC_BANK;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_smmuv2_drv_domain_alloc(drv, 1, &t.dom), 0);
	assert_int_equal(iopt_sim_run(s, v2_cpu, &t), 0);
	assert_int_equal(t.errors, 0);
	iopt_smmuv2_drv_get_stats(drv, &ds);
	assert_int_equal(ds.sync_timeouts, 0);
	assert_true(ds.syncs >= CPUS * 5);
	/* One bank lock: the 40 syncs of the run follow each other, each
	 * SYNC model cycles = 2.5 SYNC CPU cycles. */
	iopt_sim_stats(s, &st);
	assert_true(st.end_cycles >= (uint64_t)CPUS * 5 * SYNC * 5 / 2);
	assert_true(st.ops[IOPT_SIM_OP_MMIO] > 0);
	assert_int_equal(iopt_smmuv2_drv_domain_free(t.dom), 0);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(s);
}

/*
 * Detach: a detached model frees its slot (4 models at most) and is never
 * run by the engine again. The model is left with a sync due at cycle 8
 * (TLBSYNC written at 0; the sync rule of src/smmu_model/v2: done at the
 * write + sync_cycles): while attached a run past that cycle runs it (no
 * next event afterwards); detached, its next event is still cycle 8.
 */
static uint64_t dt_word;

static void dt_cpu(unsigned cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	for (int i = 0; i < 50; i++)
		(void)plat_load_acq64(&dt_word);	/* the engine runs models */
	iopt_sim_work(5000);
	(void)plat_load_acq64(&dt_word);
}

static void test_smmu_detach(void **state)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb[6];
	struct iopt_smmuv2 *m[6];
	struct iopt_sim *s = mk(2, 1, IOPT_SIM_SC);

	(void)state;
	/* Six MMU-500 models alone on a shared clock, on the first one's
	 * memory; attached to the simulation by the test. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_size = 16ull << 20;
	c.v2.shared_clock = true;
	c.probe = c.dma = c.attach = false;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(iopt_testbed_create(&c, &tb[i]), 0);
		m[i] = iopt_testbed_smmuv2(tb[i]);
		c.pm = iopt_testbed_physmem(tb[0]);
	}
	/* TLBSYNC of context bank 0 (GR0 + GR1 pages, then the banks). */
	uint64_t cb0 = (1ull << (c.v2.numpagendxb + 1)) << 12;

	for (int i = 4; i < 6; i++) {
		assert_int_equal(iopt_smmuv2_mmio_write(m[i], cb0 + 0x7f0, 4, 0, 0), 0);
		assert_int_equal(iopt_smmuv2_next_event(m[i]), 8);
	}
	assert_ptr_equal(iopt_sim_ambient(), s);
	for (int i = 0; i < 4; i++)
		assert_int_equal(iopt_sim_attach_smmuv2(s, m[i], 1.0), 0);
	assert_int_equal(iopt_sim_attach_smmuv2(s, m[4], 1.0), -ENOSPC);
	assert_int_equal(iopt_sim_detach_smmuv2(s, m[4]), -ENOENT);
	assert_int_equal(iopt_sim_detach_smmuv2(NULL, m[0]), -EINVAL);
	assert_int_equal(iopt_sim_detach_smmuv2(s, m[0]), 0);
	assert_int_equal(iopt_sim_detach_smmuv2(s, m[0]), -ENOENT);
	/* The slot is free again: m[4] attached, m[5] never. */
	assert_int_equal(iopt_sim_attach_smmuv2(s, m[4], 1.0), 0);
	assert_int_equal(iopt_sim_run(s, dt_cpu, NULL), 0);
	assert_int_equal(iopt_smmuv2_next_event(m[4]), UINT64_MAX);
	assert_int_equal(iopt_smmuv2_next_event(m[5]), 8);
	/* Detached, the engine leaves it where it is. */
	assert_int_equal(iopt_sim_detach_smmuv2(s, m[4]), 0);
	assert_int_equal(iopt_sim_attach_smmuv2(s, m[5], 1.0), 0);
	assert_int_equal(iopt_sim_detach_smmuv2(s, m[5]), 0);
	assert_int_equal(iopt_sim_run(s, dt_cpu, NULL), 0);
	assert_int_equal(iopt_smmuv2_next_event(m[5]), 8);
	for (int i = 1; i < 4; i++)
		assert_int_equal(iopt_sim_detach_smmuv2(s, m[i]), 0);
	for (int i = 5; i >= 0; i--)
		iopt_testbed_destroy(tb[i]);	/* tb[0] holds the memory */
	iopt_sim_destroy(s);
}

/*
 * The register port (plat_mmio_begin): two CPUs read a register of one
 * attached model at the same time; the second waits for the port, so
 * the two CPUs' times differ by at least mmio_port (set large here), and
 * a model that is not attached has no port to wait for.
 */
struct port_t {
	struct iopt_smmuv2_drv *drv;
	uint64_t cycles[2];
};

static void port_cpu(unsigned cpu, void *arg)
{
	struct port_t *t = arg;
	uint64_t v, t0 = iopt_sim_now();

	assert_int_equal(iopt_smmuv2_drv_read(t->drv, 0x20, 4, &v), 0);
	t->cycles[cpu] = iopt_sim_now() - t0;
}

static void port_case(bool attached, uint64_t *lo, uint64_t *hi)
{
	struct iopt_sim_params p;
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct port_t t = { 0 };
	struct iopt_sim *s;

	iopt_sim_params_default(&p);
	p.cpus = 2;
	p.mmio_port = 10000;
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	/* An MMU-500 on a shared clock: attached, the simulation's (its
	 * register port); not, the driver's virtual clock. No domain. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV2);
	c.mem_size = 16ull << 20;
	c.v2.shared_clock = true;
	if (attached) {
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = s;
	}
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	t.drv = iopt_testbed_smmuv2_drv(tb);
	assert_int_equal(iopt_sim_run(s, port_cpu, &t), 0);
	*lo = t.cycles[0] < t.cycles[1] ? t.cycles[0] : t.cycles[1];
	*hi = t.cycles[0] < t.cycles[1] ? t.cycles[1] : t.cycles[0];
	iopt_testbed_destroy(tb);		/* detaches the model */
	iopt_sim_destroy(s);
}

static void test_mmio_port(void **state)
{
	uint64_t lo, hi;

	(void)state;
	port_case(true, &lo, &hi);
	/* Each pays mmio (500) at least; the second the port's 10000 too. */
	assert_true(lo >= 500 && lo < 10000);
	assert_true(hi >= 10000 + 500);
	port_case(false, &lo, &hi);
	assert_true(hi < 10000);
}

/* ---- device memory: a model's accesses through the coherence model --------- */

/*
 * A device writes and reads memory through its memory callbacks
 * (iopt_smmu_physmem), inside a device call (plat_mmio_begin/end on a
 * device that is not attached: no port, no model run). The table line is
 * physical memory; CPUs access it through its host pointer.
 */
struct devmem_t {
	struct iopt_physmem *pm;
	struct iopt_smmu_mem mem;
	uint64_t pa;
	uint64_t *va;			/* the line: 8 doublewords */
	uint64_t hit_delta, miss_delta;
	uint32_t seen;
	uint64_t rd_before[2], rd_after[2];
	uint64_t ld_before, ld_after;
	uint32_t half_before;
	uint64_t cpu_sees;
};

static int devmem_dev;			/* the device's identity */

static void devmem_setup(struct devmem_t *t)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(iopt_physmem_create(0, IOPT_PHYSMEM_FRAME, &t->pm), 0);
	iopt_smmu_physmem(t->pm, 0, &t->mem);
	t->pa = 0x1000;
	t->va = iopt_physmem_ptr(t->pm, t->pa, 64);
	assert_non_null(t->va);
	t->va[0] = 0xaaaa;
	t->va[1] = 0xbbbb;
}

static void devmem_write32(struct devmem_t *t, uint64_t pa, uint32_t v)
{
	plat_mmio_begin(&devmem_dev);
	assert_int_equal(t->mem.write(t->mem.ctx, pa, &v, 4), 0);
	plat_mmio_end(&devmem_dev);
}

/*
 * A CPU polls the line (miss, then hits); a device writes an MSI into it;
 * the CPU's next load misses (miss_mem: the device took the line from
 * every CPU) and sees the MSI. cost_params: hit 1, miss_mem 100, no
 * transfer spacing; the test code is not instrumented, so a load's time
 * is its line cost alone.
 */
static void devmem_poll_cpu(unsigned cpu, void *arg)
{
	struct devmem_t *t = arg;
	uint32_t *word = (uint32_t *)t->va;
	uint64_t t0;

	(void)cpu;
	(void)plat_load_acq32(word);		/* miss */
	t0 = iopt_sim_now();
	(void)plat_load_acq32(word);		/* hit */
	t->hit_delta = iopt_sim_now() - t0;
	devmem_write32(t, t->pa, 0x5a5a);
	t0 = iopt_sim_now();
	t->seen = plat_load_acq32(word);
	t->miss_delta = iopt_sim_now() - t0;
}

static void test_devmem_write_invalidates(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	struct devmem_t t;

	(void)state;
	for (int mm = 0; mm < 2; mm++) {
		cost_params(&p, 1);
		p.memmodel = mm ? IOPT_SIM_TSO : IOPT_SIM_SC;
		assert_int_equal(iopt_sim_create(&p, &s), 0);
		devmem_setup(&t);
		assert_int_equal(iopt_sim_run(s, devmem_poll_cpu, &t), 0);
		assert_int_equal(t.hit_delta, p.hit);
		assert_int_equal(t.miss_delta, p.miss_mem);
		assert_int_equal(t.seen, 0x5a5a);
		iopt_physmem_destroy(t.pm);
		iopt_sim_destroy(s);
	}
}

/*
 * TSO, multi-copy atomicity: CPU 1 stores doubleword 1 of the line at
 * cycle 0 and keeps it buffered (drains 5000 cycles on) until its fence
 * at 2000. CPU 0's device reads at 1000 (a 16-byte read, a 4-byte read of
 * the stored doubleword's low half, a 64-bit load) see the old value;
 * at 20000, after the fence, the new one. Then CPU 1 stores doubleword 0
 * (buffered again) and the device writes it: the buffered store drains
 * first, so the device's value is what CPU 0 then loads.
 */
static void devmem_tso_cpu(unsigned cpu, void *arg)
{
	struct devmem_t *t = arg;
	uint64_t v;

	if (cpu == 1) {
		plat_store_rlx64(&t->va[1], 0x1234);
		iopt_sim_work(2000);
		plat_fence_seq_cst();
		iopt_sim_work(30000 - iopt_sim_now());
		plat_store_rlx64(&t->va[0], 0x7777);
		iopt_sim_work(10000);	/* its end would drain the buffer */
		return;
	}
	iopt_sim_work(1000);
	plat_mmio_begin(&devmem_dev);
	assert_int_equal(t->mem.read(t->mem.ctx, t->pa, t->rd_before, 16), 0);
	assert_int_equal(t->mem.read(t->mem.ctx, t->pa + 8, &t->half_before,
				     4), 0);
	assert_int_equal(t->mem.load64(t->mem.ctx, t->pa + 8, &t->ld_before),
			 0);
	plat_mmio_end(&devmem_dev);
	iopt_sim_work(20000 - iopt_sim_now());
	plat_mmio_begin(&devmem_dev);
	assert_int_equal(t->mem.read(t->mem.ctx, t->pa, t->rd_after, 16), 0);
	assert_int_equal(t->mem.load64(t->mem.ctx, t->pa + 8, &v), 0);
	t->ld_after = v;
	plat_mmio_end(&devmem_dev);
	iopt_sim_work(31000 - iopt_sim_now());
	devmem_write32(t, t->pa, 0x5a5a);
	t->cpu_sees = plat_load_acq64(&t->va[0]);
}

static void test_devmem_tso_reads(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s;
	struct devmem_t t;

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		cost_params(&p, 2);
		p.memmodel = IOPT_SIM_TSO;
		p.seed = seed;
		p.sb_drain_min = p.sb_drain_max = 5000;
		assert_int_equal(iopt_sim_create(&p, &s), 0);
		devmem_setup(&t);
		assert_int_equal(iopt_sim_run(s, devmem_tso_cpu, &t), 0);
		assert_int_equal(t.rd_before[0], 0xaaaa);
		assert_int_equal(t.rd_before[1], 0xbbbb);
		assert_int_equal(t.half_before, 0xbbbb);
		assert_int_equal(t.ld_before, 0xbbbb);
		assert_int_equal(t.rd_after[0], 0xaaaa);
		assert_int_equal(t.rd_after[1], 0x1234);
		assert_int_equal(t.ld_after, 0x1234);
		/* The device's 32-bit MSI over CPU 1's drained 0x7777. */
		assert_int_equal(t.cpu_sees, 0x5a5a);
		iopt_physmem_destroy(t.pm);
		iopt_sim_destroy(s);
	}
}

static void test_bad_params(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	(void)state;
	assert_int_equal(iopt_sim_available(), 1);
	iopt_sim_params_default(&p);
	p.cpus = 0;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	p.cpus = IOPT_SIM_MAX_CPUS + 1;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	iopt_sim_params_default(&p);
	p.sb_drain_min = 10;
	p.sb_drain_max = 9;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	iopt_sim_params_default(&p);
	p.cpu_ghz = 0;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	iopt_sim_params_default(&p);
	p.memmodel = (enum iopt_sim_memmodel)7;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	assert_null(s);
}

/* ---- instruction charging: a loop of known length ------------------------ */

/*
 * tests/sim_icharge_loop.c: sim_test_loop(n) executes 3n + 2 instructions
 * (its three blocks, counted by hand there) and is compiled with
 * instruction charging; this file is not, so between two platform
 * operations of a CPU here only the loop's instructions are charged.
 * Expected: each CPU is charged exactly ROUNDS x (3n + 2) instructions,
 * and its time is ROUNDS fences plus floor(instructions / ipc) cycles
 * (the engine carries the fraction over, so the sum rounds once); the
 * loop the host context runs before the run is nobody's. Exact, no
 * tolerance: the count does not depend on the compiler.
 */
uint64_t sim_test_loop(uint64_t n);

#define ICHARGE_ROUNDS 10

struct icharge_case {
	uint64_t n[2];
	uint64_t sum[2];
};

static void icharge_cpu(unsigned cpu, void *arg)
{
	struct icharge_case *t = arg;

	for (unsigned r = 0; r < ICHARGE_ROUNDS; r++) {
		t->sum[cpu] += sim_test_loop(t->n[cpu]);
		plat_fence_seq_cst();
	}
}

static void test_icharge_loop(void **state)
{
	static const double ipcs[] = { 2.0, 1.0, 0.0, 3.0 };

	(void)state;
#ifndef IOPT_TEST_ICHARGE
	skip();
#endif
	for (unsigned k = 0; k < sizeof(ipcs) / sizeof(ipcs[0]); k++) {
		struct icharge_case t = { { 1000, 10 }, { 0, 0 } };
		struct iopt_sim_params p;
		struct iopt_sim_stats st;
		struct iopt_sim *s = NULL;
		uint64_t insns[2], want_insns = 0;

		iopt_sim_params_default(&p);
		p.cpus = 2;
		p.ipc = ipcs[k];
		assert_int_equal(iopt_sim_create(&p, &s), 0);
		/* The host context's instructions are not charged. */
		assert_int_equal(sim_test_loop(5000), 5000 * 5001 / 2);
		assert_int_equal(iopt_sim_run(s, icharge_cpu, &t), 0);
		for (unsigned c = 0; c < 2; c++) {
			uint64_t n = t.n[c], cyc;

			assert_int_equal(t.sum[c], ICHARGE_ROUNDS * n * (n + 1) / 2);
			insns[c] = ICHARGE_ROUNDS * (3 * n + 2);
			want_insns += insns[c];
			cyc = ICHARGE_ROUNDS * p.fence;
			if (p.ipc > 0)
				cyc += (uint64_t)((double)insns[c] / p.ipc);
			assert_int_equal(iopt_sim_cpu_cycles(s, c), cyc);
		}
		iopt_sim_stats(s, &st);
		assert_int_equal(st.instructions, want_insns);
		iopt_sim_destroy(s);
	}
}

/* A bad ipc is refused. */
static void test_icharge_params(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	(void)state;
	iopt_sim_params_default(&p);
	p.ipc = -1.0;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	p.ipc = 0.0 / 0.0;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	p.ipc = 65.0;
	assert_int_equal(iopt_sim_create(&p, &s), -EINVAL);
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_store_buffering),
		cmocka_unit_test(test_message_passing),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_costs_topology),
		cmocka_unit_test(test_costs_queueing),
		cmocka_unit_test(test_spinlock_64),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_seeds_differ),
		cmocka_unit_test(test_rcu),
		cmocka_unit_test(test_deadlock),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_pct),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_128_cpus),
		cmocka_unit_test(test_library),
		cmocka_unit_test(test_smmu_timeline),
		cmocka_unit_test(test_smmuv2_timeline),
		cmocka_unit_test(test_smmu_detach),
		cmocka_unit_test(test_mmio_port),
		cmocka_unit_test(test_devmem_write_invalidates),
		cmocka_unit_test(test_devmem_tso_reads),
		cmocka_unit_test(test_icharge_loop),
		cmocka_unit_test(test_icharge_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
