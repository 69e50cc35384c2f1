/* SPDX-License-Identifier: MIT */
/*
 * Lock-free TLB hits (docs/smmu_model.md, "Lock-free TLB hits") against
 * invalidation, for the SMMUv3 and the SMMUv2 model; meant to run clean
 * under ThreadSanitizer.
 *
 * One model with a shared clock; device threads translate pages of a
 * small window again and again with no lock of the test's around the
 * model (so that most translations are TLB hits served without the
 * model's lock, concurrent with each other and with the mapper), while a
 * mapper thread moves each page from one output address to the next:
 * unmap, invalidate the page (v3: TLBI_NH_VA + CMD_SYNC through the
 * command queue, CONS polled; v2: TLBIVA + TLBSYNC, TLBSTATUS polled),
 * and only once the sync has completed record the old generation as
 * gone; then map the new one. Every output address encodes its page and
 * generation (the test's shadow, never the library's own decoding):
 *  - a device translation that starts after the test recorded generation
 *    g of a page as gone must not return g or older (a stale translation);
 *  - every successful translation lands in its own page at its offset;
 *  - right after each invalidation and sync, the mapper translates the
 *    page itself and must see a translation fault, and right after each
 *    map, the new generation.
 * IOPT_STRESS_OPS scales the mapper's work.
 *
 * Time and slots seen across threads (docs/smmu_model.md, "Lock-free
 * TLB hits"): lock-free hits keep their time and their translation
 * slots' busy times in their own thread's hit block, and read nothing
 * another hitting thread writes:
 *  - one translation slot, shared clock, more threads than the model has
 *    owned hit blocks (all threads then share the one slot): each thread
 *    reads the latest ready cycle any thread has published (acquire),
 *    translates at cycle 0 (behind the model's time, so taken as its
 *    time) and must be ready strictly later: the one slot is busy until
 *    at least then. Afterwards the model counts exactly the translations
 *    made;
 *  - no shared clock: one thread moves the locked path's time with
 *    run_until at rising cycles and publishes each cycle after its call
 *    returned (release); others read it (acquire) and translate one
 *    cycle earlier with the hit memo live, which the time rule must
 *    refuse (-EINVAL);
 *  - two device threads hitting against the test's shadow of the rule:
 *    each ordered after its own hits only, each with its half of four
 *    slots; the model's time afterwards the later thread's last hit.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "tutil.h"

#if defined(__SANITIZE_THREAD__)
#define OPS_DEFAULT 300
#elif defined(__SANITIZE_ADDRESS__)
#define OPS_DEFAULT 1500
#else
#define OPS_DEFAULT 6000
#endif

#define MEM_BASE	0x80000000ull
#define STRTAB		(MEM_BASE + 0x00000)
#define CMDQ		(MEM_BASE + 0x10000)	/* 1024 commands */
#define EVTQ		(MEM_BASE + 0x20000)
#define CDTAB		(MEM_BASE + 0x30000)
#define ASID		1
#define VA0		0x40000000ull
#define NPAGES		16
#define DEVICES		3
#define PAGE		4096ull

/* SMMUv3 register offsets and fields (IHI0070 6.3). */
#define V3_CR0		0x20
#define V3_CMDQ_PROD	0x98
#define V3_CMDQ_CONS	0x9c
/* SMMUv2 offsets and fields (the reference notes, as tests/test_smmuv2.c). */
#define V2_SCR0		0x000
#define V2_SMR0		0x800
#define V2_S2CR0	0xc00
#define V2_CBAR0	0x1000
#define V2_CBA2R0	0x1800
#define V2_CB_SCTLR	0x00
#define V2_CB_TCR2	0x10
#define V2_CB_TTBR0	0x20
#define V2_CB_TCR	0x30
#define V2_CB_MAIR0	0x38
#define V2_CB_TLBIVA	0x600
#define V2_CB_TLBSYNC	0x7f0
#define V2_CB_TLBSTATUS	0x7f4

/* Output address of generation g of page p: g in [51:32] (below the
 * 48-bit OAS for g < 2^16), the page in [31:12]. */
static uint64_t pa_of(unsigned p, uint32_t g)
{
	return (uint64_t)g << 32 | (uint64_t)p << 12;
}

struct rig {
	int version;
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s3;
	struct iopt_smmuv2 *s2;
	struct iopt_pgtable *pt;
	uint64_t cb0;			/* v2: context bank 0's page */
	/* The mapper's (the test thread's) own. */
	uint32_t prod;
	uint64_t cyc;
	uint32_t cur[NPAGES];		/* generation mapped now, 0: none */
	/* Atomic: the newest generation of each page whose unmap,
	 * invalidation and sync have completed (release by the mapper,
	 * acquire by the devices). */
	uint32_t gone[NPAGES];
	int stop;			/* atomic */
	unsigned started;		/* atomic: devices that translated */
	/* Atomic counters. */
	unsigned long ok, faults, stale, wrong, errors;
};

struct res {
	bool ok;
	uint64_t oa, ready;
};

/* Translate va at cycle (any thread, no lock). */
static int xlate(struct rig *r, uint64_t va, uint64_t cycle, struct res *o)
{
	int ret;

	if (r->version == 2) {
		struct iopt_smmuv2_txn t = { .sid = 0, .addr = va, .priv = true };
		struct iopt_smmuv2_resp resp;

		ret = iopt_smmuv2_translate(r->s2, &t, cycle, &resp);
		*o = (struct res){ 0 };
		if (ret)
			return ret;	/* resp not written */
		o->ok = resp.result == IOPT_SMMUV2_OK;
		o->oa = resp.oa;
		o->ready = resp.ready;
	} else {
		struct iopt_smmuv3_txn t = { .sid = 0, .addr = va, .priv = true };
		struct iopt_smmuv3_resp resp;

		ret = iopt_smmuv3_translate(r->s3, &t, cycle, &resp);
		*o = (struct res){ 0 };
		if (ret)
			return ret;	/* resp not written */
		o->ok = !resp.fault;
		o->oa = resp.oa;
		o->ready = resp.ready;
		if (resp.fault && resp.fault != IOPT_SMMUV3_EVT_F_TRANSLATION)
			ret = -1;
	}
	return ret;
}

static void bump(unsigned long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void *device_main(void *arg)
{
	struct rig *r = arg;
	uint64_t rnd = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&rnd;
	uint64_t cycle = 0;
	bool started = false;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		unsigned p = (unsigned)(tu_rand(&rnd) % NPAGES);
		uint64_t off = tu_rand(&rnd) & 0xff8;

		for (int k = 0; k < 8; k++) {
			/* Acquire: pairs with the mapper's release store after
			 * the sync completed. */
			uint32_t gone = __atomic_load_n(&r->gone[p], __ATOMIC_ACQUIRE);
			struct res o;

			if (xlate(r, VA0 + p * PAGE + off, cycle, &o)) {
				bump(&r->errors);
				continue;
			}
			cycle = o.ready;
			if (!started) {
				started = true;
				__atomic_fetch_add(&r->started, 1, __ATOMIC_RELAXED);
			}
			if (!o.ok) {
				bump(&r->faults);
				continue;
			}
			bump(&r->ok);
			if ((o.oa & 0xffffffffull) != ((uint64_t)p << 12 | off))
				bump(&r->wrong);
			else if ((uint32_t)(o.oa >> 32) <= gone)
				bump(&r->stale);
		}
	}
	return NULL;
}

/* ---- the mapper's side: invalidate one page and wait for the sync ------ */

static void v3_cmd(struct rig *r, const struct iopt_smmuv3_cmd *c)
{
	uint64_t w[2];

	assert_int_equal(iopt_smmuv3_cmd_encode(c, w), 0);
	memcpy(iopt_physmem_ptr(r->pm, CMDQ + (r->prod & 1023) * 16ull, 16), w, 16);
	r->prod = (r->prod + 1) & 2047;
}

static void invalidate(struct rig *r, uint64_t va)
{
	uint64_t v = 1;

	if (r->version == 2) {
		assert_int_equal(iopt_smmuv2_mmio_write(r->s2, r->cb0 + V2_CB_TLBIVA, 8,
							va >> 12 | (uint64_t)ASID << 48,
							r->cyc += 10), 0);
		assert_int_equal(iopt_smmuv2_mmio_write(r->s2, r->cb0 + V2_CB_TLBSYNC,
							4, 0, r->cyc += 10), 0);
		for (int i = 0; v & 1; i++) {
			assert_true(i < 1000000);
			assert_int_equal(iopt_smmuv2_mmio_read(r->s2,
							       r->cb0 + V2_CB_TLBSTATUS,
							       4, &v, r->cyc += 50), 0);
		}
		return;
	}
	v3_cmd(r, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA,
					   .asid = ASID, .addr = va });
	v3_cmd(r, &(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC });
	assert_int_equal(iopt_smmuv3_mmio_write(r->s3, V3_CMDQ_PROD, 4, r->prod,
						r->cyc += 10), 0);
	for (int i = 0;; i++) {
		assert_true(i < 1000000);
		assert_int_equal(iopt_smmuv3_mmio_read(r->s3, V3_CMDQ_CONS, 4, &v,
						       r->cyc += 50), 0);
		if ((v & 2047) == r->prod)
			break;
	}
}

/* ---- set-up ---------------------------------------------------------------- */

/* slots: translation slots (0: the preset's); shared: shared clock. */
static void rig_init_at(struct rig *r, int version, unsigned slots, bool shared)
{
	struct iopt_testbed_cfg c;
	struct iopt_pgtable_info info;

	memset(r, 0, sizeof(*r));
	r->version = version;
	uint64_t reserved;

	/* Memory (20-cycle accesses) and the model alone: the test
	 * programs it. */
	tu_model_cfg(&c, version == 2 ? IOPT_TESTBED_SMMUV2 : IOPT_TESTBED_SMMUV3,
		     MEM_BASE, 64u << 20);
	c.mem_latency = 20;
	c.v2.shared_clock = c.v3.shared_clock = shared;
	if (slots)
		c.v2.translation_slots = c.v3.translation_slots = slots;
	r->tb = tu_testbed(&c);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s2 = iopt_testbed_smmuv2(r->tb);
	r->s3 = iopt_testbed_smmuv3(r->tb);
	/* The stream table, queues and CD table: not for the page table. */
	assert_int_equal(iopt_physmem_alloc(r->pm, 1u << 20, &reserved), 0);
	assert_int_equal(reserved, MEM_BASE);
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };

	assert_int_equal(iopt_pgtable_alloc(&pc, &r->pt), 0);
	iopt_pgtable_get_info(r->pt, &info);
	if (version == 2) {
		r->cb0 = (1ull << (c.v2.numpagendxb + 1)) << 12;
		struct { uint64_t off; unsigned size; uint64_t v; } w[] = {
			{ V2_S2CR0, 4, 0 },			/* translate, bank 0 */
			{ V2_SMR0, 4, 1u << 31 },		/* VALID, ID 0 */
			{ V2_CBAR0, 4, 1u << 16 | 1 },		/* stage 1, VMID 1 */
			{ V2_CBA2R0, 4, 1 },			/* AArch64 */
			{ r->cb0 + V2_CB_TCR, 4, 16 | 1u << 23 }, /* T0SZ 16, EPD1 */
			{ r->cb0 + V2_CB_TCR2, 4, 5 },		/* PASize 48 bits */
			{ r->cb0 + V2_CB_TTBR0, 8, info.regs.ttbr | (uint64_t)ASID << 48 },
			{ r->cb0 + V2_CB_MAIR0, 4, (uint32_t)info.regs.mair },
			{ r->cb0 + V2_CB_SCTLR, 4, 1 },		/* M */
			{ V2_SCR0, 4, 1u << 10 },		/* USFCFG */
		};

		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
			assert_int_equal(iopt_smmuv2_mmio_write(r->s2, w[i].off, w[i].size,
								w[i].v, 0), 0);
		return;
	}
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };
	uint64_t words[8];

	assert_int_equal(iopt_smmuv3_cd_from_pgtable(r->pt, ASID, &cd), 0);
	iopt_smmuv3_cd_encode(&cd, words);
	memcpy(iopt_physmem_ptr(r->pm, CDTAB, 64), words, 64);
	iopt_smmuv3_ste_encode(&ste, words);
	memcpy(iopt_physmem_ptr(r->pm, STRTAB, 64), words, 64);
	/* 16 STEs, 1024 commands, 64 events; SMMUEN, EVENTQEN, CMDQEN. */
	tu_smmuv3_bringup(r->s3, &(struct tu_v3_bringup){
		.strtab = STRTAB, .sid_bits = 4, .cmdq = CMDQ, .cmdq_log2 = 10,
		.evtq = EVTQ, .evtq_log2 = 6, .cr0 = 0xd }, 0);
}

static void rig_init(struct rig *r, int version)
{
	rig_init_at(r, version, 0, true);
}

static void rig_fini(struct rig *r)
{
	iopt_pgtable_free(r->pt);
	iopt_testbed_destroy(r->tb);
}

static void run(int version)
{
	struct rig *r = calloc(1, sizeof(*r));
	pthread_t dev[DEVICES];
	long ops = tu_stress_ops(OPS_DEFAULT);
	uint64_t rnd = 12345;
	struct res o;

	assert_non_null(r);
	rig_init(r, version);
	for (unsigned p = 0; p < NPAGES; p++) {
		r->cur[p] = 1;
		assert_int_equal(iopt_pgtable_map_pages(r->pt, VA0 + p * PAGE, pa_of(p, 1), PAGE,
							1, IOPT_READ, NULL), 0);
	}
	for (unsigned i = 0; i < DEVICES; i++)
		assert_int_equal(pthread_create(&dev[i], NULL, device_main, r), 0);
	/* Every device has translated before the mapper starts (on a loaded
	 * host they might otherwise not run before it stops). */
	while (__atomic_load_n(&r->started, __ATOMIC_RELAXED) < DEVICES)
		sched_yield();
	for (long i = 0; i < ops; i++) {
		unsigned p = (unsigned)(tu_rand(&rnd) % NPAGES);
		uint64_t va = VA0 + p * PAGE;
		uint32_t g = r->cur[p];

		/* Warm the TLB (and the hit memo) with the page first. */
		for (int k = 0; k < 3; k++) {
			assert_int_equal(xlate(r, va + 8, r->cyc += 10, &o), 0);
			assert_true(o.ok);
			assert_int_equal(o.oa, pa_of(p, g) + 8);
		}
		assert_int_equal(iopt_pgtable_unmap_pages(r->pt, va, PAGE, 1, NULL), (int64_t)PAGE);
		invalidate(r, va);
		/* Release: pairs with the devices' acquire loads. */
		__atomic_store_n(&r->gone[p], g, __ATOMIC_RELEASE);
		assert_int_equal(xlate(r, va + 8, r->cyc += 10, &o), 0);
		assert_false(o.ok);		/* unmapped, invalidated, synced */
		g++;
		assert_true(g < 1u << 16);
		assert_int_equal(iopt_pgtable_map_pages(r->pt, va, pa_of(p, g), PAGE, 1,
							IOPT_READ, NULL), 0);
		r->cur[p] = g;
		assert_int_equal(xlate(r, va + 8, r->cyc += 10, &o), 0);
		assert_true(o.ok);
		assert_int_equal(o.oa, pa_of(p, g) + 8);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < DEVICES; i++)
		pthread_join(dev[i], NULL);
	print_message("v%d: %lu translated, %lu faults, %lu stale, %lu wrong, "
		      "%lu errors\n", version, r->ok, r->faults, r->stale, r->wrong,
		      r->errors);
	assert_int_equal(r->stale, 0);
	assert_int_equal(r->wrong, 0);
	assert_int_equal(r->errors, 0);
	assert_true(r->ok > 0);
	rig_fini(r);
	free(r);
}

static void test_v3_hits_vs_invalidation(void **state)
{
	(void)state;
	run(3);
}

static void test_v2_hits_vs_invalidation(void **state)
{
	(void)state;
	run(2);
}

/* ---- time and slots seen across threads -------------------------------- */

#define SLOT_THREADS	10	/* more than the model's owned hit blocks (8) */

struct seen {
	struct rig *r;
	long n;
	uint64_t pub;			/* atomic: latest ready / cycle published */
	unsigned long early, calls, errors;	/* atomic */
};

static uint64_t translations(struct rig *r)
{
	if (r->version == 2) {
		struct iopt_smmuv2_stats st;

		iopt_smmuv2_get_stats(r->s2, &st);
		return st.translations;
	}
	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(r->s3, &st);
	return st.translations;
}

/* One slot, shared clock: ready later than every ready published. */
static void *slot_main(void *arg)
{
	struct seen *x = arg;

	for (long i = 0; i < x->n; i++) {
		/* Acquire: pairs with the publishers' release CAS below. */
		uint64_t seen = __atomic_load_n(&x->pub, __ATOMIC_ACQUIRE);
		struct res o;

		bump(&x->calls);
		if (xlate(x->r, VA0 + 8, 0, &o) || !o.ok) {
			bump(&x->errors);
			continue;
		}
		if (o.ready <= seen)
			bump(&x->early);
		uint64_t cur = __atomic_load_n(&x->pub, __ATOMIC_RELAXED);

		/* Release: publishes the translation before the new value. */
		while (o.ready > cur &&
		       !__atomic_compare_exchange_n(&x->pub, &cur, o.ready, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	return NULL;
}

static void run_slots(int version)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct seen x = { .r = r, .n = tu_stress_ops(OPS_DEFAULT) * 5 };
	pthread_t th[SLOT_THREADS];
	struct res o;

	assert_non_null(r);
	rig_init_at(r, version, 1, true);
	assert_int_equal(iopt_pgtable_map_pages(r->pt, VA0, pa_of(0, 1), PAGE, 1, IOPT_READ,
						NULL), 0);
	/* Fill the TLB and the memo: the threads then hit. */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(xlate(r, VA0 + 8, 0, &o), 0);
		assert_true(o.ok);
	}
	for (unsigned i = 0; i < SLOT_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, slot_main, &x), 0);
	for (unsigned i = 0; i < SLOT_THREADS; i++)
		pthread_join(th[i], NULL);
	print_message("v%d slots: %lu calls, %lu early, %lu errors\n", version,
		      x.calls, x.early, x.errors);
	assert_int_equal(x.errors, 0);
	assert_int_equal(x.early, 0);
	assert_int_equal(translations(r), x.calls + 3);
	rig_fini(r);
	free(r);
}

/* Run the model up to cycle (a locked call that moves the locked path's
 * time and, with no command waiting, retires no hit memo). */
static int run_until(struct rig *r, uint64_t cycle)
{
	if (r->version == 2)
		return iopt_smmuv2_run_until(r->s2, cycle);
	return iopt_smmuv3_run_until(r->s3, cycle);
}

/* A register read at cycle (a locked call: the time rule of the model's
 * whole time). */
static int reg_read(struct rig *r, uint64_t cycle)
{
	uint64_t v;

	if (r->version == 2)
		return iopt_smmuv2_mmio_read(r->s2, V2_SCR0, 4, &v, cycle);
	return iopt_smmuv3_mmio_read(r->s3, V3_CR0, 4, &v, cycle);
}

/* No shared clock: a cycle behind the locked path's published time is
 * refused, by the hit path as by the locked path. */
static void *late_main(void *arg)
{
	struct seen *x = arg;

	for (long i = 0; i < x->n; i++) {
		/* Acquire: pairs with the writer's release store. */
		uint64_t seen = __atomic_load_n(&x->pub, __ATOMIC_ACQUIRE);
		struct res o;

		if (!seen)
			continue;
		bump(&x->calls);
		if (xlate(x->r, VA0 + 8, seen - 1, &o) != -EINVAL)
			bump(&x->early);
	}
	return NULL;
}

static void run_late(int version)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct seen x = { .r = r, .n = tu_stress_ops(OPS_DEFAULT) * 5 };
	pthread_t th[DEVICES];
	uint64_t cycle = 1000;
	struct res o;

	assert_non_null(r);
	rig_init_at(r, version, 0, false);
	assert_int_equal(iopt_pgtable_map_pages(r->pt, VA0, pa_of(0, 1), PAGE, 1, IOPT_READ,
						NULL), 0);
	/* A walk, then two locked TLB hits (the second records the hit
	 * memo): the late calls below are tried as lock-free hits first. */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(xlate(r, VA0 + 8, k, &o), 0);
		assert_true(o.ok);
	}
	for (unsigned i = 0; i < DEVICES; i++)
		assert_int_equal(pthread_create(&th[i], NULL, late_main, &x), 0);
	for (long i = 0; i < x.n; i++, cycle += 7) {
		assert_int_equal(run_until(r, cycle), 0);
		/* Release: the call at cycle happened before. */
		__atomic_store_n(&x.pub, cycle, __ATOMIC_RELEASE);
	}
	for (unsigned i = 0; i < DEVICES; i++)
		pthread_join(th[i], NULL);
	print_message("v%d late: %lu calls, %lu accepted\n", version, x.calls,
		      x.early);
	assert_int_equal(x.early, 0);
	rig_fini(r);
	free(r);
}

/* ---- each device thread's own time and share of the slots --------------- */

/*
 * The rule for hits of several device threads (docs/smmu_model.md,
 * "Lock-free TLB hits"): a hit is ordered after the locked path's time
 * and its own thread's earlier hits only, and with p threads hitting on
 * a model of n slots each has the slots i with i % p == its rank, taken
 * in turn. The test's shadow: with OWN_SLOTS = 4 slots and two threads,
 * each has 2 slots, so HITS hits at one cycle C, all slots idle before,
 * are ready at C + L, C + L, C + 2L, C + 2L, ... (L: one hit's latency,
 * read from a locked hit on an idle slot); a thread translating at its
 * own previous ready cycle is ready L later every time, whatever the
 * other thread's time. Afterwards the model's time (a register read, on
 * the locked path) is the later thread's last hit cycle.
 */
#define OWN_SLOTS	4
#define OWN_HITS	64
#define OWN_C		1000000ull
#define OWN_FAR		1000000000ull

struct own {
	struct rig *r;
	pthread_barrier_t *bar;
	unsigned id;
	uint64_t lat;
	uint64_t last;			/* its last hit's cycle */
	unsigned long bad;		/* hits off the shadow's rule */
};

/* A hit at cycle, ready at expect (0: at cycle + L or later). */
static void own_hit(struct own *w, uint64_t cycle, uint64_t expect)
{
	struct res o;

	if (xlate(w->r, VA0 + 8, cycle, &o) || !o.ok ||
	    (expect ? o.ready != expect : o.ready < cycle + w->lat))
		w->bad++;
	w->last = cycle;
}

static void *own_main(void *arg)
{
	struct own *w = arg;
	uint64_t cyc;

	/* Each thread's first hit claims its hit block; both are claimed
	 * before the hits measured. (While one is claimed and the other not
	 * yet, the first has every slot: the two may meet in one.) */
	own_hit(w, 20000, 0);
	pthread_barrier_wait(w->bar);
	/* Both threads at once, at the same cycle: its two slots. */
	for (unsigned i = 0; i < OWN_HITS; i++)
		own_hit(w, OWN_C, OWN_C + w->lat * (1 + i / 2));
	pthread_barrier_wait(w->bar);
	/* Thread 0 far ahead first, then thread 1 behind it, each at its
	 * own previous ready cycle. */
	cyc = w->id ? OWN_C + w->lat * (OWN_HITS / 2) : OWN_FAR;
	if (w->id)
		pthread_barrier_wait(w->bar);
	for (unsigned i = 0; i < OWN_HITS; i++, cyc += w->lat)
		own_hit(w, cyc, cyc + w->lat);
	if (!w->id)
		pthread_barrier_wait(w->bar);
	return NULL;
}

static void run_own(int version)
{
	struct rig *r = calloc(1, sizeof(*r));
	pthread_barrier_t bar;
	pthread_t th[2];
	struct own w[2];
	struct res o;

	assert_non_null(r);
	rig_init_at(r, version, OWN_SLOTS, false);
	assert_int_equal(iopt_pgtable_map_pages(r->pt, VA0, pa_of(0, 1), PAGE, 1, IOPT_READ,
						NULL), 0);
	/* A walk, then two locked TLB hits on idle slots (the latency of
	 * the second is L), the second recording the hit memo. No
	 * lock-free hit on this thread. */
	assert_int_equal(xlate(r, VA0 + 8, 0, &o), 0);
	assert_true(o.ok);
	assert_int_equal(xlate(r, VA0 + 8, 10000, &o), 0);
	assert_true(o.ok);
	assert_int_equal(xlate(r, VA0 + 8, 15000, &o), 0);
	assert_true(o.ok);
	assert_true(o.ready > 15000);
	assert_int_equal(pthread_barrier_init(&bar, NULL, 2), 0);
	for (unsigned i = 0; i < 2; i++) {
		w[i] = (struct own){ .r = r, .bar = &bar, .id = i, .lat = o.ready - 15000 };
		assert_int_equal(pthread_create(&th[i], NULL, own_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	print_message("v%d own: L %llu, %lu + %lu hits off the rule\n", version,
		      (unsigned long long)w[0].lat, w[0].bad, w[1].bad);
	assert_int_equal(w[0].bad, 0);
	assert_int_equal(w[1].bad, 0);
	/* The model's time: the larger of the threads' last hit cycles. */
	assert_true(w[0].last > w[1].last);
	assert_int_equal(reg_read(r, w[0].last - 1), -EINVAL);
	assert_int_equal(reg_read(r, w[0].last), 0);
	assert_int_equal(translations(r), 3 + 2 * (1 + 2 * OWN_HITS));
	rig_fini(r);
	free(r);
}

static void test_v3_hit_threads_own_time_and_share(void **state)
{
	(void)state;
	run_own(3);
}

static void test_v2_hit_threads_own_time_and_share(void **state)
{
	(void)state;
	run_own(2);
}

static void test_v3_time_and_slots_across_threads(void **state)
{
	(void)state;
	run_slots(3);
	run_late(3);
}

static void test_v2_time_and_slots_across_threads(void **state)
{
	(void)state;
	run_slots(2);
	run_late(2);
}

/* ---- the memo before anything was cached ------------------------------- */

/*
 * A new model has cached nothing, so its first translation cannot be a
 * TLB hit, whatever its stream and address: StreamID 0 at address 0
 * with access 0 matches the zeroed hit memo entries' key, address and
 * mask, and with the memo counted live from the start (generation 0 =
 * latest store's generation 0) it was replayed as a hit to output
 * address 0 before any register was written.
 */
static void test_memo_empty_at_creation(void **state)
{
	struct iopt_physmem *pm;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv3_params p;
	struct iopt_smmuv2_params q;
	struct iopt_smmuv3 *s3;
	struct iopt_smmuv2 *s2;
	struct iopt_smmuv3_stats st3;
	struct iopt_smmuv2_stats st2;
	struct iopt_smmuv3_txn t3 = { .sid = 0, .addr = 0 };
	struct iopt_smmuv2_txn t2 = { .sid = 0, .addr = 0 };
	struct iopt_smmuv3_resp r3;
	struct iopt_smmuv2_resp r2;

	(void)state;
	assert_int_equal(iopt_physmem_create(MEM_BASE, 16u << 20, &pm), 0);
	iopt_smmu_physmem(pm, 20, &mem);
	iopt_smmuv3_default_params(&p);
	assert_int_equal(iopt_smmuv3_create(&p, &mem, NULL, NULL, &s3), 0);
	assert_int_equal(iopt_smmuv3_translate(s3, &t3, 100, &r3), 0);
	iopt_smmuv3_get_stats(s3, &st3);
	assert_int_equal(st3.translations, 1);
	assert_int_equal(st3.tlb_hits, 0);
	iopt_smmuv3_destroy(s3);
	assert_int_equal(iopt_smmuv2_preset("mmu-500", &q), 0);
	assert_int_equal(iopt_smmuv2_create(&q, &mem, NULL, NULL, &s2), 0);
	assert_int_equal(iopt_smmuv2_translate(s2, &t2, 100, &r2), 0);
	iopt_smmuv2_get_stats(s2, &st2);
	assert_int_equal(st2.translations, 1);
	assert_int_equal(st2.tlb_hits, 0);
	iopt_smmuv2_destroy(s2);
	iopt_physmem_destroy(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v3_hits_vs_invalidation),
		cmocka_unit_test(test_v2_hits_vs_invalidation),
		cmocka_unit_test(test_v3_time_and_slots_across_threads),
		cmocka_unit_test(test_v2_time_and_slots_across_threads),
		cmocka_unit_test(test_v3_hit_threads_own_time_and_share),
		cmocka_unit_test(test_v2_hit_threads_own_time_and_share),
		cmocka_unit_test(test_memo_empty_at_creation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
