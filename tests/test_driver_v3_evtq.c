/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 driver's event queue under contention: device threads fault
 * (F_TRANSLATION, an unmapped page each time) through a 16-entry event
 * queue while two pollers call iopt_smmuv3_drv_poll() only when the model
 * has interrupted, one poll per EVTQ interrupt taken, over ROUNDS fresh
 * models (each round's interleaving differs). Nothing polls
 * unprompted, so every record the model wrote must reach the event
 * callback through the polls its interrupts prompted:
 *  - delivered == recorded (the model's events counter; records lost to
 *    a full queue are the model's events_lost and are never delivered),
 *  - each device's records arrive in its order (addresses increase),
 *  - the queue ends empty (EVENTQ_PROD == EVENTQ_CONS).
 * An interrupt a poll consumed while another drained must not strand a
 * record (smmuv3_evtq.c E1-E3). Runs under ThreadSanitizer (tsan build).
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
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include "tthread.h"
#include "tutil.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define IOPT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define IOPT_SANITIZED 1
#endif
#endif
#ifdef IOPT_SANITIZED
#define ITERS 300
#define ROUNDS 40
#else
#define ITERS 2000
#define ROUNDS 60
#endif

#define DEVICES		3
#define POLLERS		2
#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)
#define SID		5
#define IOVA(dev, n)	(((uint64_t)(dev) + 1) << 32 | (uint64_t)(n) << 12)
#define EVT_F_TRANSLATION 0x10
#define A_EVENTQ_PROD	0x100a8
#define A_EVENTQ_CONS	0x100ac

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_smmuv3_drv *drv;
	uint64_t irqs;		/* EVTQ interrupts raised */
	uint64_t taken;		/* ... and taken by a poller */
	unsigned running;	/* device threads not finished */
	/* Written by the drainer only (one at a time, E1). */
	uint64_t delivered, last[DEVICES], disorder, bad;
	int dev_errors;
};

/* The model's interrupt, after the testbed forwarded it to the driver:
 * counted for the pollers. */
static void t_irq(void *ctx, unsigned line, uint64_t cycle)
{
	struct rig *r = ctx;

	(void)cycle;
	if (!__atomic_load_n(&r->drv, __ATOMIC_ACQUIRE))
		return;
	if (line == IOPT_SMMUV3_IRQ_EVTQ)
		__atomic_fetch_add(&r->irqs, 1, __ATOMIC_RELEASE);
}

static void t_event(void *ctx, const struct iopt_smmuv3_drv_event *ev)
{
	struct rig *r = ctx;
	uint64_t dev = (ev->addr >> 32) - 1;

	r->delivered++;
	if (ev->type != EVT_F_TRANSLATION || ev->sid != SID || dev >= DEVICES) {
		r->bad++;
		return;
	}
	if (ev->addr <= r->last[dev])
		r->disorder++;
	r->last[dev] = ev->addr;
}

struct darg {
	struct rig *r;
	unsigned id;
};

static void *device(void *p)
{
	struct darg *a = p;
	struct iopt_smmuv3_txn t = { .sid = SID };
	struct iopt_smmuv3_resp resp;

	for (unsigned n = 1; n <= ITERS; n++) {
		t.addr = IOVA(a->id, n);
		if (iopt_smmuv3_drv_translate(a->r->drv, &t, &resp) ||
		    resp.fault != EVT_F_TRANSLATION) {
			__atomic_fetch_add(&a->r->dev_errors, 1, __ATOMIC_RELAXED);
			break;
		}
		if (n % 8 == 0)
			tu_yield();
	}
	__atomic_fetch_sub(&a->r->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Poll once per interrupt taken; stop when the devices are done and
 * every interrupt (all raised before a device finished) is taken. */
static void *poller(void *p)
{
	struct rig *r = p;

	for (;;) {
		uint64_t taken = __atomic_load_n(&r->taken, __ATOMIC_ACQUIRE);
		bool done = !__atomic_load_n(&r->running, __ATOMIC_ACQUIRE);

		if (taken < __atomic_load_n(&r->irqs, __ATOMIC_ACQUIRE)) {
			if (__atomic_compare_exchange_n(&r->taken, &taken, taken + 1,
							false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				assert_true(iopt_smmuv3_drv_poll(r->drv) >= 0);
		} else if (done) {
			return NULL;
		} else {
			tu_yield();
		}
	}
}

/* One round: a fresh model and driver, the threads, the checks. */
static void run_round(unsigned round)
{
	struct iopt_testbed_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_stats st;
	struct iopt_pgtable *pt;
	struct plat_thread dt[DEVICES], pt_th[POLLERS];
	struct darg args[DEVICES];
	struct rig *r = calloc(1, sizeof(*r));
	uint64_t prod, cons;

	assert_non_null(r);
	/* Memory, the default model with its interrupts to the driver (and
	 * to t_irq), the driver; the domain is made below. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	c.irq = t_irq;
	c.irq_ctx = r;
	c.irq_to_driver = true;
	c.drv3.evtq_log2 = 4;		/* 16 records: wraps, may overflow */
	c.drv3.event = t_event;
	c.drv3.event_ctx = r;
	c.drv3.host_timeout_ns = 120000000000ull;
	c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv3(r->tb);
	__atomic_store_n(&r->drv, iopt_testbed_smmuv3_drv(r->tb), __ATOMIC_RELEASE);
	tu_smmuv3_s1_domain(r->drv, r->pm, SID, &dom, &pt);
	/* Probe may have left records or interrupts behind: none here. */
	assert_int_equal(iopt_smmuv3_drv_poll(r->drv), 0);
	__atomic_store_n(&r->taken, __atomic_load_n(&r->irqs, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);

	r->running = DEVICES;
	for (unsigned i = 0; i < POLLERS; i++)
		TU_THREAD_START(&pt_th[i], poller, r);
	for (unsigned i = 0; i < DEVICES; i++) {
		args[i] = (struct darg){ r, i };
		TU_THREAD_START(&dt[i], device, &args[i]);
	}
	for (unsigned i = 0; i < DEVICES; i++)
		plat_thread_join(&dt[i]);
	for (unsigned i = 0; i < POLLERS; i++)
		plat_thread_join(&pt_th[i]);

	assert_int_equal(r->dev_errors, 0);
	iopt_smmuv3_get_stats(r->s, &st);
	if (round == 0)
		print_message("faults %u, recorded %llu, lost %llu, interrupts %llu\n",
			      DEVICES * ITERS, (unsigned long long)st.events,
			      (unsigned long long)st.events_lost,
			      (unsigned long long)r->irqs);
	assert_int_equal(st.events + st.events_lost, DEVICES * ITERS);
	assert_int_equal(r->delivered, st.events);
	assert_int_equal(r->bad, 0);
	assert_int_equal(r->disorder, 0);
	assert_int_equal(iopt_smmuv3_mmio_read(r->s, A_EVENTQ_PROD, 4, &prod,
					       iopt_smmuv3_drv_cycle(r->drv)), 0);
	assert_int_equal(iopt_smmuv3_mmio_read(r->s, A_EVENTQ_CONS, 4, &cons,
					       iopt_smmuv3_drv_cycle(r->drv)), 0);
	assert_int_equal(prod & 0x1f, cons & 0x1f);	/* index and wrap */

	assert_int_equal(iopt_smmuv3_drv_detach(dom, SID), 0);
	iopt_pgtable_free(pt);
	iopt_smmuv3_drv_domain_free(dom);
	iopt_testbed_destroy(r->tb);
	free(r);
}

static void test_pollers_lose_no_wakeup(void **state)
{
	(void)state;
	for (unsigned round = 0; round < ROUNDS; round++)
		run_round(round);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pollers_lose_no_wakeup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
