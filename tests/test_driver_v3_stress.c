/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 driver's command queue under contention: several threads
 * submit numbered commands (TLBI_NH_VA tagged with the thread in ASID and
 * a sequence number in the address) in batches of 1 to 12, some ending
 * with a CMD_SYNC, into an 8-entry queue that wraps thousands of times,
 * while another thread translates through the model. For each insertion
 * algorithm x sync mode, from the commands the model fetched (the
 * memory-read callback sees every fetch, in execution order):
 *  - every command executed exactly once, and nothing was lost;
 *  - each thread's commands executed in its program order;
 *  - no sync returned before every command its thread submitted before it
 *    had executed (the model had fetched a later slot before the return);
 *  - every MSI sync named its own slot (IHI0070 4.7.3).
 * Runs under ThreadSanitizer with debug-yield in the tsan build.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/sim.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tthread.h"
#include "tutil.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ITERS 150
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define ITERS 150
#endif
#endif
#ifndef ITERS
#define ITERS 2000
#endif

#define THREADS		4
#define MAX_BATCH	12
#define MAX_CMDS	(ITERS * MAX_BATCH)
#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define OP_TLBI_NH_VA	0x12
#define OP_CMD_SYNC	0x46
#define DEV_SID		9
#define DEV_IOVA	0x10000000ull
#define DEV_PA		0x40000000ull

struct tcmd {
	uint64_t pa, w[2];
};

struct sync_rec {
	uint64_t last_seq;	/* last command before the sync (or none) */
	bool any;
	size_t trace_len;	/* fetches seen when the sync returned */
};

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_smmu_mem inner, mem;
	struct iopt_smmuv3_drv *drv;
	pthread_mutex_t lock;	/* trace */
	struct tcmd *trace;
	size_t ntrace, cap;
	bool msi;
	uint64_t issued[THREADS];
	struct sync_rec *syncs[THREADS];
	size_t nsyncs[THREADS];
	int errors[THREADS];
	int stop;		/* device thread */
	int dev_errors;
	uint64_t translations;
};

struct targ {
	struct rig *r;
	unsigned id;
};

static int64_t t_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct rig *r = ctx;
	int64_t ret = r->inner.read(r->inner.ctx, pa, buf, len);

	if (ret >= 0 && len == 16) {
		struct tcmd c = { .pa = pa };

		memcpy(c.w, buf, 16);
		pthread_mutex_lock(&r->lock);
		/* The model re-reads the command at CONS until it runs it;
		 * a different read means the previous command completed. */
		if (!r->ntrace || memcmp(&r->trace[r->ntrace - 1], &c, sizeof(c))) {
			if (r->ntrace == r->cap) {
				r->cap = r->cap ? 2 * r->cap : 4096;
				r->trace = realloc(r->trace, r->cap * sizeof(*r->trace));
			}
			r->trace[r->ntrace++] = c;
		}
		pthread_mutex_unlock(&r->lock);
	}
	return ret;
}

static int64_t t_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct rig *r = ctx;

	return r->inner.write(r->inner.ctx, pa, buf, len);
}

static int t_load64(void *ctx, uint64_t pa, uint64_t *v)
{
	struct rig *r = ctx;

	return r->inner.load64(r->inner.ctx, pa, v);
}

static int t_cas64(void *ctx, uint64_t pa, uint64_t *old, uint64_t v)
{
	struct rig *r = ctx;

	return r->inner.cas64(r->inner.ctx, pa, old, v);
}

static size_t trace_len(struct rig *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->ntrace;
	pthread_mutex_unlock(&r->lock);
	return n;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Batches per producer: ITERS, or IOPT_STRESS_OPS when smaller (the
 * simulation sweep's budget, docs/sim.md). */
static unsigned n_iters(void)
{
	const char *e = getenv("IOPT_STRESS_OPS");
	long n = e ? atol(e) : 0;

	return n > 0 && n < ITERS ? (unsigned)n : ITERS;
}

static void *producer(void *arg)
{
	struct targ *a = arg;
	struct rig *r = a->r;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (a->id + 1), seq = 0;
	struct iopt_smmuv3_cmd cmds[MAX_BATCH];

	unsigned iters = n_iters();

	r->syncs[a->id] = calloc(ITERS, sizeof(struct sync_rec));
	for (unsigned it = 0; it < iters; it++) {
		unsigned n = 1 + (unsigned)(rnd(&seed) % MAX_BATCH);
		bool sync = rnd(&seed) % 3 == 0;

		for (unsigned i = 0; i < n; i++) {
			memset(&cmds[i], 0, sizeof(cmds[i]));
			cmds[i].opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA;
			cmds[i].asid = (uint16_t)(a->id + 1);
			cmds[i].addr = (seq + i) << 12;
		}
		int ret = iopt_smmuv3_drv_submit(r->drv, cmds, n, sync);

		if (ret) {
			print_message("thread %u: submit %d at iteration %u\n", a->id, ret, it);
			r->errors[a->id]++;
			break;
		}
		seq += n;
		if (sync) {
			struct sync_rec *s = &r->syncs[a->id][r->nsyncs[a->id]++];

			s->trace_len = trace_len(r);
			s->any = true;
			s->last_seq = seq - 1;
		}
	}
	r->issued[a->id] = seq;
	return NULL;
}

static void *device(void *arg)
{
	struct rig *r = arg;
	struct iopt_smmuv3_txn t = { .sid = DEV_SID };
	struct iopt_smmuv3_resp resp;
	uint64_t n = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		t.addr = DEV_IOVA + (n % 16) * 4096 + 8;
		if (iopt_smmuv3_drv_translate(r->drv, &t, &resp) ||
		    resp.fault || resp.oa != DEV_PA + (n % 16) * 4096 + 8) {
			r->dev_errors++;
			break;
		}
		n++;
		if (n % 16 == 0)
			tu_yield();	/* a device, not a CPU hog */
	}
	r->translations = n;
	return NULL;
}

static void run_variant(enum iopt_smmuv3_drv_cmdq cmdq,
			enum iopt_smmuv3_drv_sync sync)
{
	struct iopt_testbed_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_pgtable *pt;
	struct plat_thread th[THREADS], dev;
	struct targ args[THREADS];
	struct rig *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	pthread_mutex_init(&r->lock, NULL);
	assert_int_equal(iopt_physmem_create(MEM_BASE, MEM_SIZE, &r->pm), 0);
	iopt_smmu_physmem(r->pm, 10, &r->inner);
	r->mem = r->inner;
	r->mem.read = t_read;
	r->mem.write = t_write;
	r->mem.load64 = t_load64;
	r->mem.cas64 = t_cas64;
	r->mem.ctx = r;
	/* On simulated CPUs (the _sim build): the model on the simulation's
	 * timeline, the driver on its clock (docs/sim.md). NULL on host. */
	struct iopt_sim *sim = iopt_sim_ambient();

	/* The default model reading memory through the tracer, and the
	 * driver; the domain is made below. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.pm = r->pm;
	c.mem = &r->mem;
	if (sim) {
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = sim;
	}
	c.drv3.cmdq = cmdq;
	c.drv3.sync = sync;
	c.drv3.cmdq_log2 = 3;		/* 8 entries: constant wrapping */
	/* Sanitizer builds on a small host starve spinning threads for
	 * seconds; the model-time limit still applies. */
	c.drv3.host_timeout_ns = 120000000000ull;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->s = iopt_testbed_smmuv3(r->tb);
	r->drv = iopt_testbed_smmuv3_drv(r->tb);
	r->msi = sync == IOPT_SMMUV3_DRV_SYNC_MSI;

	/* A device keeps translating 16 pages meanwhile. */
	tu_smmuv3_s1_domain(r->drv, r->pm, DEV_SID, &dom, &pt);
	assert_int_equal(iopt_pgtable_map_pages(pt, DEV_IOVA, DEV_PA, 4096, 16,
						IOPT_READ | IOPT_WRITE, NULL), 0);

	size_t start = trace_len(r);

	TU_THREAD_START(&dev, device, r);
	for (unsigned i = 0; i < THREADS; i++) {
		args[i] = (struct targ){ r, i };
		TU_THREAD_START(&th[i], producer, &args[i]);
	}
	for (unsigned i = 0; i < THREADS; i++)
		plat_thread_join(&th[i]);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	plat_thread_join(&dev);
	assert_int_equal(iopt_smmuv3_drv_sync(r->drv), 0);
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(r->errors[i], 0);
	assert_int_equal(r->dev_errors, 0);

	/* Walk the fetches in execution order. */
	uint64_t next[THREADS] = { 0 };
	size_t *pos[THREADS];

	for (unsigned t = 0; t < THREADS; t++) {
		pos[t] = calloc(r->issued[t] + 1, sizeof(size_t));
		assert_non_null(pos[t]);
	}
	for (size_t i = start; i < r->ntrace; i++) {
		const struct tcmd *e = &r->trace[i];
		unsigned op = (unsigned)(e->w[0] & 0xff);

		if (op == OP_CMD_SYNC && r->msi && (e->w[0] >> 12 & 3) == 1) {
			/* MSIAddress [51:2] in word 1 = this slot. */
			assert_int_equal(e->w[1] & (((1ull << 52) - 1) & ~3ull), e->pa);
			continue;
		}
		if (op != OP_TLBI_NH_VA)
			continue;
		unsigned t = (unsigned)(e->w[0] >> 48) - 1;	/* ASID [63:48] */
		uint64_t seq = e->w[1] >> 12;			/* Address [63:12] */

		if (t >= THREADS)
			continue;	/* not a producer's command */
		/* Exactly once and in program order: the next one expected. */
		assert_int_equal(seq, next[t]);
		pos[t][seq] = i;
		next[t]++;
	}
	for (unsigned t = 0; t < THREADS; t++) {
		/* Nothing lost. */
		assert_int_equal(next[t], r->issued[t]);
		/* No sync returned before its thread's earlier commands ran:
		 * the model had fetched something after them. */
		for (size_t k = 0; k < r->nsyncs[t]; k++) {
			const struct sync_rec *s = &r->syncs[t][k];

			assert_true(pos[t][s->last_seq] + 1 < s->trace_len);
		}
		free(pos[t]);
		free(r->syncs[t]);
	}
	iopt_smmuv3_drv_get_stats(r->drv, &st);
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(st.cmd_errors, 0);
	assert_true(st.full_waits > 0);		/* the queue did fill */
	assert_true(r->translations > 0);
	print_message("cmdq %s sync %s: %llu commands, %llu syncs, %llu CAS retries, "
		      "%llu full waits, %llu translations\n",
		      cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKFREE ? "lockfree" : "locked",
		      r->msi ? "msi" : "cons", (unsigned long long)st.commands,
		      (unsigned long long)st.syncs, (unsigned long long)st.cas_retries,
		      (unsigned long long)st.full_waits,
		      (unsigned long long)r->translations);

	assert_int_equal(iopt_smmuv3_drv_detach(dom, DEV_SID), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	iopt_testbed_destroy(r->tb);	/* detaches the model from sim */
	iopt_physmem_destroy(r->pm);
	pthread_mutex_destroy(&r->lock);
	free(r->trace);
	free(r);
}

static void test_lockfree_msi(void **state)
{
	(void)state;
	run_variant(IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_MSI);
}

static void test_lockfree_cons(void **state)
{
	(void)state;
	run_variant(IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_CONS);
}

static void test_locked_msi(void **state)
{
	(void)state;
	run_variant(IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_MSI);
}

static void test_locked_cons(void **state)
{
	(void)state;
	run_variant(IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_CONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lockfree_msi),
		cmocka_unit_test(test_lockfree_cons),
		cmocka_unit_test(test_locked_msi),
		cmocka_unit_test(test_locked_cons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
