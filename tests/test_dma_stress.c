/* SPDX-License-Identifier: MIT */
/*
 * DMA layer under concurrency: four threads, acting as four CPUs, map and
 * unmap in one DMA domain over a small IOVA space (so that every IOVA is
 * handed out again and again) while a device thread translates through
 * the SMMUv3 model. Checked from the model and from ownership:
 *  - right after every map, a device read at the new IOVA gets the new
 *    PA: the previous mapping of that IOVA was translated (so cached in
 *    the model's TLB) right after its own map, and a lazy unmap does not
 *    invalidate, so an IOVA handed out again before a flush-all had
 *    completed would translate to the old PA;
 *  - no IOVA page is handed to two live mappings at once;
 *  - no IOVA is reused before a flush-all that started after its unmap
 *    has completed (flush-alls started, from the driver's count, against
 *    flush-alls completed, from the policy's);
 *  - every device read that translates lands in the page it asked for.
 * Every policy, both command-queue algorithms; TSan-clean (scripts/test).
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

#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/sim.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tthread.h"
#include "tutil.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define SID		9
#define PAGE		4096ull
#define NTHREADS	4
/* The IOVA space: 128 pages inside one 2 MiB region, so that one
 * last-level table holds every mapping (a pinned page keeps it). */
#define SPACE_START	0x40000000ull
#define SPACE_PAGES	128
/* Map+unmap rounds per thread and run (IOPT_STRESS_OPS overrides). */
#if defined(__SANITIZE_THREAD__)
#define OPS_DEFAULT	1000
#elif defined(__SANITIZE_ADDRESS__)
#define OPS_DEFAULT	2000
#else
#define OPS_DEFAULT	4000
#endif

struct stress {
	struct iopt_testbed *tb;
	struct iopt_smmuv3 *s;
	struct iopt_smmuv3_drv *drv;
	struct iopt_dma *d;
	long ops;
	enum iopt_inval pol;
	uint64_t owner[SPACE_PAGES];	/* thread + 1 of the live mapping */
	uint64_t unmap_start[SPACE_PAGES]; /* flushes started at unmap */
	uint64_t live[NTHREADS];	/* iova | pages, or 0: for the device */
	uint64_t stop;
	uint64_t stale, doubles, early, wrong_page, errors, retries;
	uint64_t dev_reads;		/* the device thread's translations */
};

static uint64_t ld(const uint64_t *p)
{
	return plat_load_acq64(p);
}

static void st(uint64_t *p, uint64_t v)
{
	plat_store_rel64(p, v);
}

static void bump(uint64_t *p)
{
	plat_fetch_add_rlx64(p, 1);
}

static void t_yield(void)
{
	tu_yield();
}

static uint64_t flushes_started(struct stress *s)
{
	struct iopt_smmuv3_drv_stats ds;

	iopt_smmuv3_drv_get_stats(s->drv, &ds);
	return ds.flush_alls;
}

static uint64_t flushes_completed(struct stress *s)
{
	struct iopt_dma_stats st;

	iopt_dma_get_stats(s->d, &st);
	return st.flush_alls;
}

struct worker {
	struct stress *s;
	unsigned cpu;
	struct plat_thread t;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (w->cpu + 1);

	for (long i = 0; i < s->ops; i++) {
		uint64_t pages = 1 + tu_rand(&rnd) % 3, iova, pfn, n;
		/* A PA no other mapping ever had. */
		uint64_t pa = ((uint64_t)(w->cpu + 1) << 36) + ((uint64_t)i << 14) +
			      (tu_rand(&rnd) & 0xff8);
		uint64_t size = pages * PAGE - (pa & (PAGE - 1)), done;
		int ret = iopt_dma_map(s->d, pa, size, IOPT_READ, ~0ull, w->cpu,
				       &iova);

		if (ret == -ENOMEM) {	/* the others hold the space */
			bump(&s->retries);
			continue;
		}
		if (ret) {
			bump(&s->errors);
			continue;
		}
		done = flushes_completed(s);
		pfn = (iova - SPACE_START) / PAGE;
		n = pages == 3 ? 4 : pages;
		for (uint64_t p = pfn; p < pfn + n && p < SPACE_PAGES; p++) {
			uint64_t o = 0;

			if (!plat_cas_acq_rel64(&s->owner[p], &o, w->cpu + 1))
				bump(&s->doubles);
			/* A flush-all that began after the last unmap of this
			 * page must have completed before the map returned. */
			uint64_t u = ld(&s->unmap_start[p]);

			if (u && done < u)
				bump(&s->early);
		}
		/* The device reads the new mapping: the new PA, never an
		 * old one still cached for this IOVA. */
		struct iopt_smmuv3_txn t = { .sid = SID, .addr = iova };
		struct iopt_smmuv3_resp r;

		if (iopt_smmuv3_drv_translate(s->drv, &t, &r) || r.fault ||
		    r.oa != pa)
			bump(&s->stale);
		st(&s->live[w->cpu], (iova & ~(PAGE - 1)) | pages);
		for (int k = 0; k < 4; k++)
			t_yield();
		st(&s->live[w->cpu], 0);

		/*
		 * Flush-alls the driver has started before the unmap; one
		 * more must start and complete before these pages come
		 * back. (The policy stamps a queued range with its own
		 * count of started flushes, which is at least this one, and
		 * counts a flush as completed no later than it releases
		 * ranges: no false alarm.) +1: 0 means "never unmapped".
		 */
		uint64_t started = flushes_started(s) + 1;

		for (uint64_t p = pfn; p < pfn + n && p < SPACE_PAGES; p++)
			st(&s->owner[p], 0);
		if (s->pol != IOPT_INVAL_STRICT)
			for (uint64_t p = pfn; p < pfn + n && p < SPACE_PAGES; p++)
				st(&s->unmap_start[p], started);
		ret = iopt_dma_unmap(s->d, iova, size, w->cpu);
		if (ret)
			bump(&s->errors);
	}
	return NULL;
}

/* The device: translates what the workers publish, and the whole space. */
static void *device_main(void *arg)
{
	struct stress *s = arg;
	uint64_t rnd = 12345;

	while (!ld(&s->stop)) {
		uint64_t v = ld(&s->live[tu_rand(&rnd) % NTHREADS]);
		uint64_t addr = v ? (v & ~(PAGE - 1)) + (tu_rand(&rnd) % (v & 3)) * PAGE :
				SPACE_START + (tu_rand(&rnd) % SPACE_PAGES) * PAGE;
		struct iopt_smmuv3_txn t = { .sid = SID, .addr = addr + 0x10 };
		struct iopt_smmuv3_resp r;

		if (iopt_smmuv3_drv_translate(s->drv, &t, &r)) {
			bump(&s->errors);
			continue;
		}
		bump(&s->dev_reads);
		/* Whatever it hits, it lands at the right place in a page. */
		if (!r.fault && (r.oa & (PAGE - 1)) != ((addr + 0x10) & (PAGE - 1)))
			bump(&s->wrong_page);
		/* Let the workers run: back to back, the device held the
		 * driver's timeline lock nearly all the time, and on a
		 * machine with fewer cores than threads most of the run went
		 * to workers spinning on it behind a descheduled holder. */
		t_yield();
	}
	return NULL;
}

static void run(enum iopt_inval pol, enum iopt_smmuv3_drv_cmdq cq,
		enum iopt_smmuv3_drv_sync sy)
{
	struct iopt_testbed_cfg c;
	struct worker w[NTHREADS];
	struct plat_thread dev;
	struct stress *s = calloc(1, sizeof(*s));
	uint64_t pin;

	assert_non_null(s);
	s->ops = tu_stress_ops(OPS_DEFAULT);
	s->pol = pol;
	/* On simulated CPUs (the _sim build): the model on the simulation's
	 * timeline, the driver on its clock (docs/sim.md). NULL on host. */
	struct iopt_sim *sim = iopt_sim_ambient();

	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	if (sim) {
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = sim;
	}
	c.drv3.cmdq = cq;
	c.drv3.sync = sy;
	c.drv3.cmdq_log2 = 4;	/* a small queue: many wraps */
	c.dma_cfg.policy = pol;
	c.dma_cfg.fq_entries = 8;	/* flushes often */
	c.dma_cfg.nr_cpus = NTHREADS;
	c.dma_cfg.iova_start = SPACE_START;
	c.dma_cfg.iova_end = SPACE_START + SPACE_PAGES * PAGE;
	c.sid = SID;
	assert_int_equal(iopt_testbed_create(&c, &s->tb), 0);
	s->s = iopt_testbed_smmuv3(s->tb);
	s->drv = iopt_testbed_smmuv3_drv(s->tb);
	s->d = iopt_testbed_dma(s->tb);
	/* Keeps the last-level table (so unmaps never remove it). */
	assert_int_equal(iopt_dma_map(s->d, 0x1000, PAGE, IOPT_READ, ~0ull, 0,
				      &pin), 0);
	s->owner[(pin - SPACE_START) / PAGE] = 99;

	TU_THREAD_START(&dev, device_main, s);
	/* The workers start once the device translates: on a loaded
	 * machine they could otherwise finish before it is first scheduled
	 * (no device traffic at all in one run of this test). */
	while (!ld(&s->dev_reads))
		t_yield();
	for (unsigned i = 0; i < NTHREADS; i++) {
		w[i].s = s;
		w[i].cpu = i;
		TU_THREAD_START(&w[i].t, worker_main, &w[i]);
	}
	for (unsigned i = 0; i < NTHREADS; i++)
		plat_thread_join(&w[i].t);
	st(&s->stop, 1);
	plat_thread_join(&dev);

	struct iopt_dma_stats ds;
	struct iopt_smmuv3_drv_stats vs;

	iopt_dma_get_stats(s->d, &ds);
	iopt_smmuv3_drv_get_stats(s->drv, &vs);
	print_message("policy %d cmdq %d sync %d: %llu maps, %llu -ENOMEM retries, "
		      "%llu flush-alls, %llu commands, %llu cas retries, "
		      "%llu device reads\n",
		      pol, cq, sy, (unsigned long long)ds.maps,
		      (unsigned long long)s->retries,
		      (unsigned long long)ds.flush_alls,
		      (unsigned long long)vs.commands,
		      (unsigned long long)vs.cas_retries,
		      (unsigned long long)s->dev_reads);
	assert_int_equal(s->stale, 0);
	assert_int_equal(s->doubles, 0);
	assert_int_equal(s->early, 0);
	assert_int_equal(s->wrong_page, 0);
	assert_int_equal(s->errors, 0);
	assert_int_equal(vs.sync_timeouts, 0);
	assert_int_equal(ds.inv_errors, 0);
	assert_true(ds.maps > (uint64_t)s->ops);	/* progress */
	assert_int_equal(ds.maps, ds.unmaps + 1);
	if (pol != IOPT_INVAL_STRICT)
		assert_true(ds.flush_alls > 0);

	iopt_testbed_destroy(s->tb);	/* detaches the model from sim */
	free(s);
}

static void test_lazy(void **state)
{
	(void)state;
	run(IOPT_INVAL_LAZY, IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_MSI);
	run(IOPT_INVAL_LAZY, IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_CONS);
}

static void test_single(void **state)
{
	(void)state;
	run(IOPT_INVAL_SINGLE, IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_CONS);
}

static void test_exhaust(void **state)
{
	(void)state;
	run(IOPT_INVAL_EXHAUST, IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_MSI);
}

static void test_strict(void **state)
{
	(void)state;
	run(IOPT_INVAL_STRICT, IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_SYNC_MSI);
	run(IOPT_INVAL_STRICT, IOPT_SMMUV3_DRV_CMDQ_LOCKED, IOPT_SMMUV3_DRV_SYNC_MSI);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_exhaust),
		cmocka_unit_test(test_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
