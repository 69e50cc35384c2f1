/* SPDX-License-Identifier: MIT */
/*
 * IOPT_IOVA_SEARCH_RBTREE_WALK on simulated CPUs, against costs computed
 * by hand from the engine's cost table (docs/sim.md, "Cost model"), with
 * instructions free (ipc 0) so that only memory operations and busy time
 * count:
 *  - a failed try that walks N nodes a CPU has never read costs N
 *    memory misses (miss_mem) more than the same walk once they are its
 *    own, and the walk of held lines costs N x walk_node_ns of busy time
 *    plus a few lock operations;
 *  - another CPU's walk of the same nodes fetches each from the first
 *    CPU's cache (fetch_shared, the default topology's factor 100%);
 *  - a flush of the CPU caches takes the tree's lock once per magazine,
 *    empty or not: 2 x CPUs x classes lock pairs more than the same
 *    flush without the walk, each a held line's exchange (hit +
 *    atomic_extra) and release store (hit).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/iova.h>
#include <iopgtable/sim.h>

#define L	((1ull << 20) - 1)	/* 4K pages: the 32-bit limit */
#define E	(1ull << 21)
#define N	1000u
#define NODE_NS	7u
#define CLASSES	6u			/* max_cached_order 5 */

struct run {
	struct iopt_iova *walk, *plain;
	uint64_t cold, warm, other;	/* cycles of three failed tries */
	uint64_t flush_walk, flush_plain;
	int err;
};

static uint64_t timed_fail(struct run *r)
{
	uint64_t p, t0 = iopt_sim_now();

	if (iopt_iova_alloc(r->walk, 1, L, &p) != -ENOMEM)
		r->err++;
	return iopt_sim_now() - t0;
}

static uint64_t timed_flush(struct iopt_iova *d)
{
	uint64_t t0;

	iopt_iova_flush_caches(d);	/* its lines now this CPU's */
	t0 = iopt_sim_now();
	iopt_iova_flush_caches(d);
	return iopt_sim_now() - t0;
}

static void cpu_main(unsigned cpu, void *arg)
{
	struct run *r = arg;
	uint64_t p;

	if (cpu == 1) {
		/* After CPU 0's walks: the same nodes from its cache. */
		iopt_sim_work(100000000);
		r->other = timed_fail(r);
		return;
	}
	/* A failed 32-bit try from below cached32 (the lowest range):
	 * no node, but the locks and the full-space hint are read. */
	if (iopt_iova_alloc(r->walk, 1, L, &p) != -ENOMEM)
		r->err++;
	/* A range above 4 GiB allocated and freed: cached32 cleared, so
	 * every 32-bit try walks all N nodes. */
	if (iopt_iova_alloc(r->walk, 1, E - 1, &p) || iopt_iova_free(r->walk, p, 1))
		r->err++;
	r->cold = timed_fail(r);
	r->warm = timed_fail(r);
	r->flush_walk = timed_flush(r->walk);
	r->flush_plain = timed_flush(r->plain);
}

static void test_walk_costs(void **state)
{
	struct iopt_sim_params sp;
	struct iopt_sim *s;
	struct run r = { 0 };
	struct iopt_iova_cfg c = { .start_pfn = L + 1 - N, .end_pfn = E,
				   .nr_cpus = 2,
				   .search = IOPT_IOVA_SEARCH_RBTREE_WALK,
				   .walk_node_ns = NODE_NS };
	struct iopt_iova_stats st;
	uint64_t p, node_cyc;

	(void)state;
	iopt_sim_params_default(&sp);
	sp.cpus = 2;
	sp.ipc = 0;
	assert_int_equal(iopt_sim_create(&sp, &s), 0);
	assert_int_equal(iopt_iova_create(&c, &r.walk), 0);
	c.search = IOPT_IOVA_SEARCH_FMAP;
	c.walk_node_ns = 0;
	c.nr_stripes = 1;
	assert_int_equal(iopt_iova_create(&c, &r.plain), 0);
	/* The 32-bit space full, top-down: cached32 ends at the lowest. */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(iopt_iova_alloc(r.walk, 1, L, &p), 0);
	assert_int_equal(p, L + 1 - N);
	assert_int_equal(iopt_sim_run(s, cpu_main, &r), 0);
	assert_int_equal(r.err, 0);
	iopt_iova_get_stats(r.walk, &st);
	assert_int_equal(st.tree_walks, 4);
	assert_int_equal(st.tree_visits, 3 * N);

	/* Cold against warm: one miss per node, nothing else differs. */
	assert_int_equal(r.cold - r.warm, (uint64_t)N * sp.miss_mem);
	/* Warm: the nodes' busy time, and a handful of lock operations. */
	node_cyc = (uint64_t)(N * NODE_NS * sp.cpu_ghz + 0.5);
	assert_true(r.warm >= node_cyc);
	assert_true(r.warm < node_cyc + 10 * (sp.miss_mem + sp.atomic_extra));
	/* The other CPU: each node fetched from CPU 0's cache (and a few
	 * lock and hint lines from it too). */
	assert_true(r.other >= node_cyc + (uint64_t)N * sp.fetch_shared);
	assert_true(r.other < node_cyc + (uint64_t)N * sp.fetch_shared +
			      10 * (sp.miss_mem + sp.atomic_extra));
	/* The flush: a lock pair per magazine (loaded and spare) per CPU
	 * per class, on a line this CPU holds. */
	assert_int_equal(r.flush_walk - r.flush_plain,
			 2ull * 2 * CLASSES * (2 * sp.hit + sp.atomic_extra));
	iopt_iova_destroy(r.walk);
	iopt_iova_destroy(r.plain);
	iopt_sim_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_costs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
