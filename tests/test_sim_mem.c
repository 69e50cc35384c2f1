/* SPDX-License-Identifier: MIT */
/*
 * The simulation's memory system beyond plain coherence (docs/sim.md,
 * "Far atomics" and "Cache maintenance"), each cost against a figure
 * computed here by hand from the parameters, not from the engine:
 *   - a script of accesses by two CPUs, each far apart in time (no
 *     queueing), costs per access what the tables of docs/sim.md give,
 *     near (atomic_far 0) and far (atomic_far 1): a far atomic costs
 *     far_atomic plus per_sharer per holder and leaves no CPU holding the
 *     line, so the next plain load by any CPU misses (from the home node:
 *     fetch_shared); a CPU holding the line uniquely executes near;
 *   - two CPUs alternating fetch_add on one line: far, every one costs
 *     exactly far_atomic and the line never moves; near, every one after
 *     the first moves the line (fetch_modified + atomic_extra);
 *   - two CPUs arriving together: the home starts their far atomics
 *     far_atomic_home apart;
 *   - plat_cache_clean(): lines x cmo_line + cmo_barrier, plus the store
 *     buffer's drain under TSO; a line cleaned stays with its CPU, clean;
 *   - a non-coherent table's map costs exactly the lines its contract
 *     makes it clean (every new table whole, every table descriptor and
 *     leaf written) x cmo_line plus one cmo_barrier per sync call, through
 *     both library table memories (the default one and physmem's); a
 *     coherent table's none.
 * Instructions are free (ipc 0) so that only the modelled costs count.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/sim.h>

#include "../src/platform/platform.h"

#define W 10000ull		/* between scripted accesses: no queueing */

/* Costs chosen apart from each other, so that each access's figure says
 * which row of docs/sim.md's tables it came from. */
static void params(struct iopt_sim_params *p, unsigned cpus, unsigned far)
{
	iopt_sim_params_default(p);
	p->cpus = cpus;
	p->ipc = 0;
	p->hit = 4;
	p->miss_mem = 250;
	p->fetch_shared = 110;
	p->fetch_modified = 120;
	p->upgrade = 115;
	p->per_sharer = 10;
	p->transfer = 120;
	p->atomic_extra = 20;
	p->atomic_far = far;
	p->far_atomic = 300;
	p->far_atomic_home = 50;
	p->cmo_line = 7;
	p->cmo_barrier = 90;
}

static struct iopt_sim *mk(const struct iopt_sim_params *p)
{
	struct iopt_sim *s = NULL;

	assert_int_equal(iopt_sim_create(p, &s), 0);
	return s;
}

/* A zeroed object on lines of its own: the structures below align their
 * words to lines (_Alignas(64)), which calloc() does not honour. */
static void *zalloc64(size_t size)
{
	size_t bytes = (size + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, bytes);

	if (p)
		memset(p, 0, bytes);
	return p;
}

/* The statistics of the line holding addr (zeros if it is not hot). */
static struct iopt_sim_line_stat line_stat(struct iopt_sim *s, const void *addr)
{
	struct iopt_sim_stats st;
	struct iopt_sim_line_stat none = { 0 };

	iopt_sim_stats(s, &st);
	for (unsigned i = 0; i < 8; i++)
		if (st.hot[i].line == ((uintptr_t)addr & ~(uintptr_t)63))
			return st.hot[i];
	return none;
}

/* Work until cycle t (the CPU's own time). */
static void until(uint64_t t)
{
	uint64_t now = iopt_sim_now();

	assert_true(now <= t);
	iopt_sim_work(t - now);
}

/* ---- a script of accesses --------------------------------------------- */

enum op { LOAD, STORE, ADD, CAS };

struct step {
	unsigned cpu;
	enum op op;
	uint64_t near, far;	/* its cycles with atomic_far 0, 1 */
};

/*
 * By hand, with params(): hit 4, miss_mem 250, fetch_shared 110,
 * fetch_modified 120, upgrade 115, per_sharer 10, atomic_extra 20,
 * far_atomic 300. Step i runs at cycle i x W.
 */
static const struct step script[] = {
	/* Nobody holds it: near from memory; far at home. */
	{ 0, ADD, 250 + 20, 300 },
	/* Near: CPU 0 has it modified. Far: nobody has it; from home. */
	{ 0, LOAD, 4, 110 },
	/* Both: CPU 0 holds it. */
	{ 0, LOAD, 4, 4 },
	/* Near: from CPU 0, modified. Far: CPU 0's copy invalidated. */
	{ 1, ADD, 120 + 20, 300 + 10 },
	/* Near: from CPU 1, modified. Far: from home again. */
	{ 0, LOAD, 120, 110 },
	/* Near: CPU 0 and CPU 1 share it: upgrade. Far: only CPU 0. */
	{ 0, STORE, 115 + 10, 4 },
	/* Both: CPU 0 holds it modified, so far mode executes near too. */
	{ 0, ADD, 4 + 20, 4 + 20 },
	/* Near: from CPU 0, modified. Far: one holder invalidated. */
	{ 1, CAS, 120 + 20, 300 + 10 },
	/* Near: CPU 1 has it. Far: from home. */
	{ 1, LOAD, 4, 110 },
	/* Both: CPU 1 its only holder: near, a silent upgrade. */
	{ 1, ADD, 4 + 20, 4 + 20 },
};

#define NSTEPS (sizeof(script) / sizeof(script[0]))

struct script_t {
	_Alignas(64) uint64_t x;
	unsigned far;
	uint64_t cost[NSTEPS];
};

static void script_cpu(unsigned cpu, void *arg)
{
	struct script_t *t = arg;

	for (unsigned i = 0; i < NSTEPS; i++) {
		uint64_t t0, old;

		if (script[i].cpu != cpu)
			continue;
		until(i * W);
		t0 = iopt_sim_now();
		switch (script[i].op) {
		case LOAD:
			(void)plat_load_acq64(&t->x);
			break;
		case STORE:
			plat_store_rel64(&t->x, 100);
			break;
		case ADD:
			(void)plat_fetch_add_acq_rel64(&t->x, 1);
			break;
		case CAS:
			old = 101;	/* the store's 100, plus one */
			assert_true(plat_cas_acq_rel64(&t->x, &old, 200));
			break;
		}
		t->cost[i] = iopt_sim_now() - t0;
	}
}

static void test_script(void **state)
{
	(void)state;
	for (unsigned far = 0; far < 2; far++) {
		struct iopt_sim_params p;
		struct iopt_sim_line_stat ls;
		struct script_t *t = zalloc64(sizeof(*t));
		struct iopt_sim *s;

		assert_non_null(t);
		params(&p, 2, far);
		s = mk(&p);
		assert_int_equal(iopt_sim_run(s, script_cpu, t), 0);
		for (unsigned i = 0; i < NSTEPS; i++) {
			uint64_t want = far ? script[i].far : script[i].near;

			if (t->cost[i] != want)
				fail_msg("atomic_far %u, step %u: %llu cycles, "
					 "wanted %llu", far, i,
					 (unsigned long long)t->cost[i],
					 (unsigned long long)want);
		}
		assert_int_equal(t->x, 201);
		ls = line_stat(s, &t->x);
		/* Near: steps 3, 4, 5 and 7 move the line. Far: none does;
		 * steps 0, 3 and 7 execute at home. */
		assert_int_equal(ls.transfers, far ? 0 : 4);
		assert_int_equal(ls.far_atomics, far ? 3 : 0);
		iopt_sim_destroy(s);
		free(t);
	}
}

/* ---- two CPUs alternating ------------------------------------------------ */

#define ROUNDS 50

struct alt_t {
	_Alignas(64) uint64_t x;
	bool together;		/* both CPUs at the same cycles */
	uint64_t cost[2][ROUNDS];
};

static void alt_cpu(unsigned cpu, void *arg)
{
	struct alt_t *t = arg;

	for (unsigned k = 0; k < ROUNDS; k++) {
		uint64_t t0;

		until(t->together ? k * W : (2 * k + cpu) * W);
		t0 = iopt_sim_now();
		(void)plat_fetch_add_acq_rel64(&t->x, 1);
		t->cost[cpu][k] = iopt_sim_now() - t0;
	}
}

static void test_alternating(void **state)
{
	(void)state;
	for (unsigned far = 0; far < 2; far++) {
		struct iopt_sim_params p;
		struct iopt_sim_line_stat ls;
		struct alt_t *t = zalloc64(sizeof(*t));
		struct iopt_sim *s;

		assert_non_null(t);
		params(&p, 2, far);
		s = mk(&p);
		assert_int_equal(iopt_sim_run(s, alt_cpu, t), 0);
		assert_int_equal(t->x, 2 * ROUNDS);
		for (unsigned k = 0; k < ROUNDS; k++) {
			for (unsigned c = 0; c < 2; c++) {
				/* Near: the first from memory, every other
				 * from the CPU that did the one before. */
				uint64_t want = far ? 300 : k + c == 0 ? 250 + 20
								       : 120 + 20;

				assert_int_equal(t->cost[c][k], want);
			}
		}
		ls = line_stat(s, &t->x);
		assert_int_equal(ls.transfers, far ? 0 : 2 * ROUNDS - 1);
		assert_int_equal(ls.far_atomics, far ? 2 * ROUNDS : 0);
		assert_int_equal(ls.wait_cycles, 0);
		iopt_sim_destroy(s);
		free(t);
	}
}

/* Arriving together, the home executes one far atomic after the other:
 * the later one waits far_atomic_home. */
static void test_home_serialises(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim_line_stat ls;
	struct alt_t *t = zalloc64(sizeof(*t));
	struct iopt_sim *s;

	(void)state;
	assert_non_null(t);
	t->together = true;
	params(&p, 2, 1);
	s = mk(&p);
	assert_int_equal(iopt_sim_run(s, alt_cpu, t), 0);
	assert_int_equal(t->x, 2 * ROUNDS);
	for (unsigned k = 0; k < ROUNDS; k++) {
		uint64_t a = t->cost[0][k], b = t->cost[1][k];
		uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

		assert_int_equal(lo, 300);
		assert_int_equal(hi, 300 + 50);
	}
	ls = line_stat(s, &t->x);
	assert_int_equal(ls.transfers, 0);
	assert_int_equal(ls.far_atomics, 2 * ROUNDS);
	assert_int_equal(ls.wait_cycles, ROUNDS * 50);
	iopt_sim_destroy(s);
	free(t);
}

/* A sleeping mutex's lock is an atomic exchange on its word: far too. */
struct mutex_t {
	_Alignas(64) struct plat_mutex m;
	uint64_t cost[2];
};

static void mutex_cpu(unsigned cpu, void *arg)
{
	struct mutex_t *t = arg;
	uint64_t t0;

	until(cpu * W);
	t0 = iopt_sim_now();
	plat_mutex_lock(&t->m);
	t->cost[cpu] = iopt_sim_now() - t0;
	plat_mutex_unlock(&t->m);
}

static void test_mutex_far(void **state)
{
	(void)state;
	for (unsigned far = 0; far < 2; far++) {
		struct iopt_sim_params p;
		struct mutex_t *t = zalloc64(sizeof(*t));
		struct iopt_sim *s;

		assert_non_null(t);
		plat_mutex_init(&t->m);
		params(&p, 2, far);
		s = mk(&p);
		assert_int_equal(iopt_sim_run(s, mutex_cpu, t), 0);
		/* CPU 0's unlock stores the word: it holds it modified.
		 * Near: CPU 1 takes it from CPU 0. Far: the first lock at
		 * home, CPU 1's with CPU 0's copy invalidated. */
		assert_int_equal(t->cost[0], far ? 300 : 250 + 20);
		assert_int_equal(t->cost[1], far ? 300 + 10 : 120 + 20);
		iopt_sim_destroy(s);
		plat_mutex_destroy(&t->m);
		free(t);
	}
}

/* ---- a contended compare-and-swap ------------------------------------------ */

/*
 * n CPUs arrive together at cycle 0, each to add one to a word with a
 * compare-and-swap loop that retries with the value the failed swap
 * returned, after CAS_GAP cycles of work (computing the new value), as
 * Linux's cmpxchg loops do. By hand, with params() (miss_mem 250,
 * fetch_modified 120, transfer 120, atomic_extra 20, hit 4):
 *   - the first CPU finds the line nowhere: its swap takes effect at 0,
 *     succeeds and costs 250 + 20; the line reaches it at 250;
 *   - the k-th (k >= 2) waits for the line, which stays with each CPU it
 *     reaches for transfer cycles: it reaches the k-th at a_k = 250 +
 *     120 (k - 1) (its move, from the CPU before it, fetch_modified, has
 *     started by then: at 120 (k - 1)), when its swap takes effect: it
 *     fails (its expected value is the one all read at 0), returning the
 *     newest value, at a_k + 20;
 *   - it then holds the line, modified, until the next move takes effect
 *     at a_k + 120: its retry at a_k + 20 + CAS_GAP hits (4 + 20) and
 *     succeeds, done at a_k + 20 + CAS_GAP + 24.
 * So one failure per CPU but the first, n - 1 transfers, and the CPUs
 * done at 270 and a_k + 54 (k = 2..n), whichever CPU comes first.
 */
#define CAS_CPUS	8
#define CAS_GAP		10

struct cas_t {
	_Alignas(64) uint64_t x;
	uint64_t fails[CAS_CPUS];
	uint64_t done[CAS_CPUS];
};

static void cas_cpu(unsigned cpu, void *arg)
{
	struct cas_t *t = arg;
	uint64_t old = 0;	/* the word's value when they all start */

	while (!plat_cas_acq_rel64(&t->x, &old, old + 1)) {
		t->fails[cpu]++;
		iopt_sim_work(CAS_GAP);
	}
	t->done[cpu] = iopt_sim_now();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_cas_together(void **state)
{
	(void)state;
	for (unsigned n = 2; n <= CAS_CPUS; n *= 2) {
		for (uint64_t seed = 1; seed <= 4; seed++) {
			struct iopt_sim_params p;
			struct iopt_sim_line_stat ls;
			struct cas_t *t = zalloc64(sizeof(*t));
			struct iopt_sim *s;
			uint64_t fails = 0;

			assert_non_null(t);
			params(&p, n, 0);
			p.seed = seed;
			s = mk(&p);
			assert_int_equal(iopt_sim_run(s, cas_cpu, t), 0);
			assert_int_equal(t->x, n);
			qsort(t->done, n, sizeof(t->done[0]), cmp_u64);
			for (unsigned c = 0; c < n; c++) {
				uint64_t want = c == 0 ? 250 + 20
						       : 250 + 120 * c + 20 +
							 CAS_GAP + 24;

				fails += t->fails[c];
				if (t->done[c] != want)
					fail_msg("%u CPUs, seed %llu: CPU done "
						 "%u-th at %llu, wanted %llu", n,
						 (unsigned long long)seed, c,
						 (unsigned long long)t->done[c],
						 (unsigned long long)want);
			}
			if (fails != n - 1)
				fail_msg("%u CPUs, seed %llu: %llu failed swaps, "
					 "wanted %u", n, (unsigned long long)seed,
					 (unsigned long long)fails, n - 1);
			ls = line_stat(s, &t->x);
			assert_int_equal(ls.transfers, n - 1);
			iopt_sim_destroy(s);
			free(t);
		}
	}
}

/*
 * The class: whatever the arrivals, a line stays transfer (120) cycles
 * with the CPU it reaches (docs/sim.md, "Contention"), and a failed
 * swap's retry comes atomic_extra + CAS_GAP = 30 cycles after the line
 * reached it: the retry hits, on the value the failure returned, and
 * succeeds. So every failed swap is followed by a success of the same
 * CPU: failures <= successes, for any spacing of the increments (seeded
 * random work between them, 0 to 2000 cycles, on 2 to 16 CPUs). When a
 * waiting access took effect at its issue this failed (the scripted
 * arrivals above: n(n-1)/2 failures for n successes).
 */
#define LOOP_CPUS	16
#define LOOP_ADDS	40

struct loop_t {
	_Alignas(64) uint64_t x;
	uint64_t seed;
	uint64_t fails[LOOP_CPUS];
};

static void loop_cpu(unsigned cpu, void *arg)
{
	struct loop_t *t = arg;
	uint64_t r = t->seed * 0x9e3779b97f4a7c15ull + cpu + 1;
	uint64_t old = plat_load_rlx64(&t->x);

	for (unsigned k = 0; k < LOOP_ADDS; k++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		iopt_sim_work((r >> 33) % 2001);
		while (!plat_cas_acq_rel64(&t->x, &old, old + 1)) {
			t->fails[cpu]++;
			iopt_sim_work(CAS_GAP);
		}
		old++;
	}
}

static void test_cas_loops(void **state)
{
	(void)state;
	for (unsigned n = 2; n <= LOOP_CPUS; n *= 2) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct iopt_sim_params p;
			struct loop_t *t = zalloc64(sizeof(*t));
			struct iopt_sim *s;
			uint64_t fails = 0;

			assert_non_null(t);
			t->seed = seed;
			params(&p, n, 0);
			p.seed = seed;
			s = mk(&p);
			assert_int_equal(iopt_sim_run(s, loop_cpu, t), 0);
			assert_int_equal(t->x, (uint64_t)n * LOOP_ADDS);
			for (unsigned c = 0; c < n; c++)
				fails += t->fails[c];
			if (fails > (uint64_t)n * LOOP_ADDS)
				fail_msg("%u CPUs, seed %llu: %llu failed swaps "
					 "for %u successes", n,
					 (unsigned long long)seed,
					 (unsigned long long)fails, n * LOOP_ADDS);
			iopt_sim_destroy(s);
			free(t);
		}
	}
}

/* ---- cache maintenance --------------------------------------------------- */

struct cmo_t {
	_Alignas(64) unsigned char buf[8192];
	uint64_t cost[8];
	unsigned n;
};

static uint64_t timed_clean(const void *p, size_t len)
{
	uint64_t t0 = iopt_sim_now();

	plat_cache_clean(p, len);
	return iopt_sim_now() - t0;
}

static void cmo_cpu(unsigned cpu, void *arg)
{
	struct cmo_t *t = arg;
	uint64_t *w = (uint64_t *)t->buf;
	uint64_t t0;

	if (cpu == 0) {
		t->cost[0] = timed_clean(t->buf, 1);
		t->cost[1] = timed_clean(t->buf + 60, 8);	/* two lines */
		t->cost[2] = timed_clean(t->buf, 4096);
		t->cost[3] = timed_clean(t->buf + 1, 4096);	/* 65 lines */
		t->cost[4] = timed_clean(t->buf, 0);
		/* CPU 0 holds a line modified, cleans it, stores again: its
		 * only holder, so a hit. */
		plat_store_rel64(w, 1);
		(void)timed_clean(w, 8);
		t0 = iopt_sim_now();
		plat_store_rel64(w, 2);
		t->cost[5] = iopt_sim_now() - t0;
		/* And cleans it again, for CPU 1 to read. */
		(void)timed_clean(w, 8);
		/* A line it keeps modified, for CPU 1 to compare. */
		plat_store_rel64(w + 8, 3);
	} else {
		until(W);
		t0 = iopt_sim_now();
		(void)plat_load_acq64(w);
		t->cost[6] = iopt_sim_now() - t0;
		t0 = iopt_sim_now();
		(void)plat_load_acq64(w + 8);
		t->cost[7] = iopt_sim_now() - t0;
	}
}

static void test_clean(void **state)
{
	struct iopt_sim_params p;
	struct iopt_sim_stats st;
	struct cmo_t *t = zalloc64(sizeof(*t));
	struct iopt_sim *s;

	(void)state;
	assert_non_null(t);
	params(&p, 2, 0);
	s = mk(&p);
	/* The host context's clean costs nothing and counts nothing. */
	plat_cache_clean(t->buf, sizeof(t->buf));
	assert_int_equal(iopt_sim_run(s, cmo_cpu, t), 0);
	assert_int_equal(t->cost[0], 1 * 7 + 90);
	assert_int_equal(t->cost[1], 2 * 7 + 90);
	assert_int_equal(t->cost[2], 64 * 7 + 90);
	assert_int_equal(t->cost[3], 65 * 7 + 90);
	assert_int_equal(t->cost[4], 0);	/* nothing to clean */
	assert_int_equal(t->cost[5], 4);	/* hit */
	/* A cleaned line comes clean from its holder; one kept modified
	 * comes modified. */
	assert_int_equal(t->cost[6], 110);
	assert_int_equal(t->cost[7], 120);
	iopt_sim_stats(s, &st);
	assert_int_equal(st.ops[IOPT_SIM_OP_CMO], 4 + 2);
	iopt_sim_destroy(s);
	free(t);
}

/* TSO: the barrier waits for the store buffer first. The store's line
 * is CPU 0's first touch (miss_mem) and its drain delay exactly 33, so
 * it drains 250 + 33 cycles after it was issued, hit cycles before the
 * clean starts. */
static void tso_cpu(unsigned cpu, void *arg)
{
	struct cmo_t *t = arg;

	(void)cpu;
	plat_store_rel64((uint64_t *)t->buf, 1);
	t->cost[0] = timed_clean(t->buf + 4096, 64);
}

static void test_clean_tso(void **state)
{
	struct iopt_sim_params p;
	struct cmo_t *t = zalloc64(sizeof(*t));
	struct iopt_sim *s;

	(void)state;
	assert_non_null(t);
	params(&p, 1, 0);
	p.memmodel = IOPT_SIM_TSO;
	p.sb_drain_min = p.sb_drain_max = 33;
	s = mk(&p);
	assert_int_equal(iopt_sim_run(s, tso_cpu, t), 0);
	assert_int_equal(t->cost[0], 250 + 33 - 4 + 7 + 90);
	iopt_sim_destroy(s);
	free(t);
}

/* ---- a table walker that does not snoop ------------------------------- */

#define IOVA 0x40000000ull

struct map_t {
	struct iopt_pgtable *pt;
	uint64_t cost[4];
	uint64_t cmo[4];
	int err;
};

static struct iopt_sim *map_sim;

/* Four maps: their cycles and the cleans counted so far after each. */
static void map_cpu(unsigned cpu, void *arg)
{
	static const uint64_t iova[4] = {
		IOVA, IOVA + 0x1000, IOVA + 7 * 0x1000, IOVA + 16 * 0x1000,
	};
	static const size_t n[4] = { 1, 1, 2, 8 };
	struct map_t *t = arg;
	struct iopt_sim_stats st;

	(void)cpu;
	for (unsigned i = 0; i < 4; i++) {
		uint64_t t0 = iopt_sim_now(), mapped = 0;

		if (iopt_pgtable_map_pages(t->pt, iova[i], iova[i], 4096, n[i],
					   IOPT_READ | IOPT_WRITE, &mapped) ||
		    mapped != n[i] * 4096)
			t->err = -1;
		t->cost[i] = iopt_sim_now() - t0;
		iopt_sim_stats(map_sim, &st);
		t->cmo[i] = st.ops[IOPT_SIM_OP_CMO];
	}
}

/*
 * What the maps clean, from the contract of a non-coherent walk (a table
 * is clean before it is published, then the descriptor pointing to it,
 * then each leaf written), in a 4-level table of 4 KiB tables (64 lines
 * each) with 8-byte entries:
 *   0: a fresh 4 KiB map: 3 new tables (levels 1-3) of 64 lines and their
 *      3 descriptors, then the leaf: 196 lines in 7 cleans;
 *   1: the next page, same leaf table: its leaf, 1 line in 1 clean;
 *   2: 2 pages at index 7 and 8: entries at bytes 56..71, 2 lines, 1 clean;
 *   3: 8 pages at index 16..23: bytes 128..191, 1 line, 1 clean.
 */
static const uint64_t map_lines[4] = { 3 * 64 + 3 + 1, 1, 2, 1 };
static const uint64_t map_cleans[4] = { 7, 1, 1, 1 };

/* The map costs with coherent_walk and cmo_line, cmo_barrier as given;
 * oas 48 takes the default table memory, oas 40 physmem's window. */
static void run_maps(bool coherent, unsigned oas, uint32_t line,
		     uint32_t barrier, struct map_t *t)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48,
		.oas = oas, .coherent_walk = coherent,
	};
	struct iopt_sim_params p;

	params(&p, 1, 0);
	p.cmo_line = line;
	p.cmo_barrier = barrier;
	map_sim = mk(&p);
	memset(t, 0, sizeof(*t));
	assert_int_equal(iopt_pgtable_alloc(&cfg, &t->pt), 0);
	assert_int_equal(iopt_sim_run(map_sim, map_cpu, t), 0);
	assert_int_equal(t->err, 0);
	iopt_pgtable_free(t->pt);
	iopt_sim_destroy(map_sim);
	map_sim = NULL;
}

static void test_noncoherent_map(void **state)
{
	static const unsigned oas[2] = { 48, 40 };

	(void)state;
	for (unsigned o = 0; o < 2; o++) {
		struct map_t free_, by_line, by_barrier, both, coh;

		run_maps(false, oas[o], 0, 0, &free_);
		run_maps(false, oas[o], 1000, 0, &by_line);
		run_maps(false, oas[o], 0, 100000, &by_barrier);
		run_maps(false, oas[o], 1000, 100000, &both);
		run_maps(true, oas[o], 1000, 100000, &coh);
		for (unsigned i = 0; i < 4; i++) {
			uint64_t prev = i ? free_.cmo[i - 1] : 0;

			assert_int_equal(free_.cmo[i] - prev, map_cleans[i]);
			assert_int_equal(by_line.cost[i] - free_.cost[i],
					 map_lines[i] * 1000);
			assert_int_equal(by_barrier.cost[i] - free_.cost[i],
					 map_cleans[i] * 100000);
			/* Coherent: nothing cleaned, whatever it costs. */
			assert_int_equal(coh.cmo[i], 0);
		}
		/* Into an existing leaf table the two walks do the same
		 * work but the clean: exactly its lines and barrier more. */
		for (unsigned i = 1; i < 4; i++)
			assert_int_equal(both.cost[i] - coh.cost[i],
					 map_lines[i] * 1000 +
					 map_cleans[i] * 100000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_alternating),
		cmocka_unit_test(test_home_serialises),
		cmocka_unit_test(test_mutex_far),
		cmocka_unit_test(test_cas_together),
		cmocka_unit_test(test_cas_loops),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_clean_tso),
		cmocka_unit_test(test_noncoherent_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
