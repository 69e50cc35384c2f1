/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench smmu [--version 2]: the SMMUv3 (default) or SMMUv2 model's own
 * speed (host ns) and its modelled latency (cycles).
 *
 * translate_hit     one mapped page translated again and again (TLB hit)
 * translate_walk    the same with the TLB off: a full 4-level stage 1 walk
 * translate_random  random pages over --footprint bytes (default 64 MiB)
 * translate_hit_threads  N device threads (1, 2 and the --threads list)
 *                   each translating the one mapped page at its previous
 *                   translation's ready cycle on one model (shared clock):
 *                   translations per second, and the ratio to one thread
 * cmdq              TLBI_NH_VA + CMD_SYNC pairs: commands per simulated us
 *                   (1 cycle = 1 ns)
 * drv_tlbi_batch    batches of 16 TLBI_NH_VA + CMD_SYNC (MSI) through the
 *                   SMMUv3 driver (iopt_smmuv3_drv_submit), one thread,
 *                   on the virtual clock (_host: on the host clock, the
 *                   free-running adapter, 1 cycle = 1 ns): host ns per
 *                   batch, median of REPS timed runs
 * mutex_pair        host ns of an uncontended pthread mutex lock+unlock
 * tlbsync (v2)      N threads each doing TLBIVA + TLBSYNC + poll TLBSTATUS
 *                   on one context bank through the free-running adapter
 *                   (1 cycle = 1 ns), with and without a sync lock: syncs
 *                   per second, worst wait (cycles, host ns), timeouts
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "bench.h"

#define MEM_BASE 0x80000000ull
#define STRTAB (MEM_BASE)
#define CMDQ (MEM_BASE + 0x10000)
#define EVTQ (MEM_BASE + 0x20000)
#define CDTAB (MEM_BASE + 0x30000)

static bool json;
/* --case NAME: run only that case (mutex_pair, the yardstick, always). */
static const char *only;

static bool want(const char *name)
{
	return !only || !strcmp(only, name);
}

/* Timed repetitions: host figures are their medians. */
#define REPS 5

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_pgtable *pt;
	uint32_t prod;
	uint64_t cycle;
};

/* The model alone (no driver) on 256 MiB of 100-cycle memory. */
static struct iopt_testbed *model_bed(enum iopt_testbed_smmu smmu, bool tlb,
				      bool walk_cache, bool shared)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;

	iopt_testbed_default_cfg(&c, smmu);
	bench_model_params(&c);
	c.mem_base = MEM_BASE;
	c.mem_size = 256u << 20;
	c.mem_latency = 100;
	c.v3.shared_clock = c.v2.shared_clock = shared;
	c.v3.tlb.enable = c.v2.tlb.enable = tlb;
	c.v3.walk.enable = c.v2.walk.enable = walk_cache;
	c.probe = c.dma = c.attach = false;
	bench_must(iopt_testbed_create(&c, &tb), "iopt_testbed_create");
	return tb;
}

static void rig_init_clk(struct rig *r, bool tlb, bool walk_cache, bool shared)
{
	uint64_t pa, w[8];

	r->tb = model_bed(IOPT_TESTBED_SMMUV3, tlb, walk_cache, shared);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv3(r->tb);
	bench_must(iopt_physmem_alloc(r->pm, 1u << 20, &pa), "iopt_physmem_alloc");
	iopt_smmuv3_mmio_write(r->s, 0x80, 8, STRTAB, 0);
	iopt_smmuv3_mmio_write(r->s, 0x88, 4, 4, 0);
	iopt_smmuv3_mmio_write(r->s, 0x90, 8, CMDQ | 10, 0);
	iopt_smmuv3_mmio_write(r->s, 0xa0, 8, EVTQ | 6, 0);
	iopt_smmuv3_mmio_write(r->s, 0x20, 4, 0xd, 0);
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	bench_must(iopt_pgtable_alloc(&pc, &r->pt), "iopt_pgtable_alloc");
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };

	iopt_smmuv3_cd_from_pgtable(r->pt, 1, &cd);
	iopt_smmuv3_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(r->pm, CDTAB, 64), w, 64);
	iopt_smmuv3_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(r->pm, STRTAB, 64), w, 64);
	r->prod = 0;
	r->cycle = 0;
}

/* Map pages of 4 KiB at va to pa, readable. */
static void rig_map(struct iopt_pgtable *pt, uint64_t va, uint64_t pa,
		    uint64_t pages)
{
	bench_must(iopt_pgtable_map_pages(pt, va, pa, 4096, pages, IOPT_READ, NULL),
		   "iopt_pgtable_map_pages");
}

static void rig_init(struct rig *r, bool tlb, bool walk_cache)
{
	rig_init_clk(r, tlb, walk_cache, false);
}

static void rig_fini(struct rig *r)
{
	iopt_pgtable_free(r->pt);
	iopt_testbed_destroy(r->tb);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What run_xlate() needs of a model: translate at a cycle (giving the
 * ready cycle), and its counters. */
struct xstats {
	uint64_t tlb_hits, tlb_misses, walk_cache_hits, walk_cache_misses;
	uint64_t walks, fetches;
};
struct xmodel {
	void *m;
	uint64_t (*xlate)(void *m, uint64_t va, uint64_t cycle);
	void (*stats)(void *m, struct xstats *st);
	uint64_t *cycle;
};

static uint64_t v3_xlate(void *m, uint64_t va, uint64_t cycle)
{
	struct iopt_smmuv3_txn t = { .sid = 0, .addr = va, .priv = true };
	struct iopt_smmuv3_resp resp;

	iopt_smmuv3_translate(m, &t, cycle, &resp);
	return resp.ready;
}

static void v3_stats(void *m, struct xstats *x)
{
	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(m, &st);
	*x = (struct xstats){ st.tlb_hits, st.tlb_misses, st.walk_cache_hits,
			      st.walk_cache_misses, st.walks, st.fetches };
}

/* Host ns per uncontended mutex lock+unlock pair, over iters pairs. */
static double mutex_chunk_ns(long iters)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint64_t t0 = bench_now_ns();

	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return (double)(bench_now_ns() - t0) / (double)iters;
}

/* Translate n addresses from va_of(i); report host ns and cycles. */
static void run_xlate(const char *name, struct xmodel *r, long n,
		      uint64_t (*va_of)(long i, void *arg), void *arg)
{
	uint64_t *lat;

	n = bench_iters(n, 1);	/* IOPT_BENCH_ITERS_DIV, for instruction counts */
	lat = bench_calloc((size_t)n, sizeof(uint64_t));

	/* Touch the latency array first: its page faults are not the model's. */
	memset(lat, 0, sizeof(uint64_t) * (size_t)n);
	struct xstats st0, st1;
	double sum = 0;

	/* Host time per translation: the median of REPS equal chunks, the
	 * same statistic as the mutex yardstick. Before each chunk, as many
	 * mutex pairs: the ratio to the mutex pair is the median of the
	 * chunks' own ratios, each taken in one machine state (this VM
	 * switches speed for seconds at a time). */
	double chunk_ns[REPS], ratio[REPS];
	long i = 0;

	r->stats(r->m, &st0);
	for (int k = 0; k < REPS; k++) {
		long end = n * (k + 1) / REPS, start = i;
		double m_ns = mutex_chunk_ns(end - start);
		uint64_t t0 = bench_now_ns();

		for (; i < end; i++) {
			uint64_t ready = r->xlate(r->m, va_of(i, arg), *r->cycle);

			lat[i] = ready - *r->cycle;
			sum += (double)lat[i];
			*r->cycle = ready;
		}
		chunk_ns[k] = (double)(bench_now_ns() - t0) / (double)(end - start);
		ratio[k] = chunk_ns[k] / m_ns;
	}
	double host = bench_median(chunk_ns, REPS), vs_mutex = bench_median(ratio, REPS);

	r->stats(r->m, &st1);
	qsort(lat, (size_t)n, sizeof(uint64_t), cmp_u64);
	uint64_t hits = st1.tlb_hits - st0.tlb_hits, miss = st1.tlb_misses - st0.tlb_misses;
	double hit_rate = hits + miss ? (double)hits / (double)(hits + miss) : 0;
	uint64_t wh = st1.walk_cache_hits - st0.walk_cache_hits;
	uint64_t wm = st1.walk_cache_misses - st0.walk_cache_misses;
	double wc_rate = wh + wm ? (double)wh / (double)(wh + wm) : 0;
	uint64_t walks = st1.walks - st0.walks;
	double fetches = walks ? (double)(st1.fetches - st0.fetches) / (double)walks : 0;

	if (json)
		printf("{\"suite\":\"smmu\",\"case\":\"%s\",\"translations\":%ld,"
		       "\"host_ns\":%.1f,\"cycles_mean\":%.1f,\"cycles_p50\":%llu,"
		       "\"cycles_p99\":%llu,\"tlb_hit_rate\":%.4f,"
		       "\"walk_cache_hit_rate\":%.4f,\"walks\":%llu,"
		       "\"fetches_per_walk\":%.2f,\"vs_mutex_pair\":%.2f}\n",
		       name, n, host, sum / (double)n,
		       (unsigned long long)lat[n / 2],
		       (unsigned long long)lat[n - 1 - n / 100], hit_rate, wc_rate,
		       (unsigned long long)walks, fetches, vs_mutex);
	else
		printf("%-23s %6.1f host ns  %6.1f cycles mean  p50 %4llu  p99 %4llu  "
		       "TLB hits %5.1f%%  walk cache hits %5.1f%%  %.2f fetches/walk  "
		       "%.1fx mutex pair\n", name, host,
		       sum / (double)n, (unsigned long long)lat[n / 2],
		       (unsigned long long)lat[n - 1 - n / 100], 100 * hit_rate,
		       100 * wc_rate, fetches, vs_mutex);
	free(lat);
}

static uint64_t same_va(long i, void *arg)
{
	(void)i;
	(void)arg;
	return 0x40000234;
}

struct rnd {
	uint64_t state, pages;
};

static uint64_t rnd_va(long i, void *arg)
{
	struct rnd *x = arg;

	(void)i;
	x->state ^= x->state << 13;
	x->state ^= x->state >> 7;
	x->state ^= x->state << 17;
	return 0x100000000ull + (x->state % x->pages) * 4096 + 8;
}

static double case_mutex(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	double ns[REPS];

	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = bench_now_ns();

		for (int i = 0; i < 1000000; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		ns[r] = (double)(bench_now_ns() - t0) / 1e6;
	}
	double med = bench_median(ns, REPS);

	if (json)
		printf("{\"suite\":\"smmu\",\"case\":\"mutex_pair\",\"host_ns\":%.2f}\n",
		       med);
	else
		printf("mutex_pair             %6.2f host ns (median of %d)\n", med, REPS);
	return med;
}

/* ---- the driver's command path ---------------------------------------- */

#define DRV_BATCH	16
#define DRV_BATCHES	10000

/* DRV_BATCHES batches of DRV_BATCH TLBI_NH_VA + CMD_SYNC; host ns each. */
static double drv_batches(struct iopt_smmuv3_drv *drv, uint64_t *va)
{
	struct iopt_smmuv3_cmd c[DRV_BATCH];
	uint64_t t0 = bench_now_ns();

	for (int b = 0; b < DRV_BATCHES; b++) {
		for (int k = 0; k < DRV_BATCH; k++) {
			c[k] = (struct iopt_smmuv3_cmd){
				.opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 1,
				.leaf = true, .addr = *va };
			*va = (*va + 4096) & ((1ull << 48) - 1);
		}
		if (iopt_smmuv3_drv_submit(drv, c, DRV_BATCH, true)) {
			fprintf(stderr, "drv_tlbi_batch: submit failed\n");
			exit(1);
		}
	}
	return (double)(bench_now_ns() - t0) / DRV_BATCHES;
}

static void case_drv_batch(bool host_clock)
{
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_smmuv3_drv *drv;
	double ns[REPS];
	uint64_t va = 0;

	/* The default model and driver on 16 MiB, no domain. */
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	bench_model_params(&c);
	c.mem_base = MEM_BASE;
	c.mem_size = 16u << 20;
	if (host_clock)
		c.clock = IOPT_TESTBED_CLOCK_RUNNER;
	c.dma = c.attach = false;
	if (iopt_testbed_create(&c, &tb))
		exit(1);
	drv = iopt_testbed_smmuv3_drv(tb);
	drv_batches(drv, &va);			/* warm up */
	for (int i = 0; i < REPS; i++)
		ns[i] = drv_batches(drv, &va);
	double med = bench_median(ns, REPS);

	if (json)
		printf("{\"suite\":\"smmu\",\"case\":\"drv_tlbi_batch%s\","
		       "\"clock\":\"%s\",\"batch\":\"16 TLBI_NH_VA + CMD_SYNC\","
		       "\"host_ns_per_batch\":%.1f}\n",
		       host_clock ? "_host" : "", host_clock ? "host" : "virtual", med);
	else
		printf("drv_tlbi_batch %-7s  %8.1f host ns per batch of 16 "
		       "TLBI_NH_VA + CMD_SYNC\n", host_clock ? "host" : "virtual",
		       med);
	iopt_testbed_destroy(tb);
}

static void case_cmdq(void)
{
	struct rig r;
	const int pairs = (int)bench_iters(20000, 1);

	rig_init(&r, true, true);
	uint64_t first = 0, last = 0, t0 = bench_now_ns();

	for (int i = 0; i < pairs; i++) {
		struct iopt_smmuv3_cmd c[2] = {
			{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 1,
			  .addr = (uint64_t)i << 12 },
			{ .opcode = IOPT_SMMUV3_CMD_SYNC },
		};

		for (int k = 0; k < 2; k++) {
			uint64_t w[2];

			iopt_smmuv3_cmd_encode(&c[k], w);
			memcpy(iopt_physmem_ptr(r.pm, CMDQ + (r.prod & 1023) * 16ull, 16),
			       w, 16);
			r.prod = (r.prod + 1) & 2047;
		}
		if (i % 256 == 255 || i == pairs - 1) {
			iopt_smmuv3_mmio_write(r.s, 0x98, 4, r.prod, r.cycle);
			uint64_t next;

			while ((next = iopt_smmuv3_next_event(r.s)) != UINT64_MAX) {
				if (!first)
					first = next;
				r.cycle = next;
				iopt_smmuv3_run_until(r.s, next);
			}
			last = r.cycle;
		}
	}
	double host = (double)(bench_now_ns() - t0) / (2.0 * pairs);
	double per_us = 2.0 * pairs / ((double)(last - first + 1) / 1000.0);

	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(r.s, &st);
	if (json)
		printf("{\"suite\":\"smmu\",\"case\":\"cmdq\",\"commands\":%d,"
		       "\"cycles\":%llu,\"cmds_per_sim_us\":%.1f,\"host_ns_per_cmd\":%.1f,"
		       "\"by_opcode\":{", 2 * pairs, (unsigned long long)(last - first),
		       per_us, host);
	else
		printf("cmdq                   %6.1f commands per simulated us (1 GHz), "
		       "%.1f host ns per command; by opcode:", per_us, host);
	/* What the model counted it consumed, by opcode. */
	const char *sep = "";

	for (unsigned op = 0; op < 256; op++) {
		if (!st.cmds[op])
			continue;
		if (json)
			printf("%s\"0x%02x\":%llu", sep, op, (unsigned long long)st.cmds[op]);
		else
			printf(" 0x%02x x %llu", op, (unsigned long long)st.cmds[op]);
		sep = ",";
	}
	printf(json ? "},\"syncs\":%llu}\n" : ", %llu syncs\n",
	       (unsigned long long)st.syncs);
	rig_fini(&r);
}

/* ---- SMMUv2 --------------------------------------------------------------- */

/* Register offsets (reference facts, as in tests/test_smmuv2.c). */
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

struct rig2 {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv2 *s;
	struct iopt_pgtable *pt;
	uint64_t cb0;		/* context bank 0's page */
	uint64_t cycle;
};

/* The "mmu-500" preset, StreamID 0 -> bank 0, AArch64 stage 1 over a
 * 48-bit table with ASID 1. */
static void rig2_init(struct rig2 *r, bool tlb, bool walk_cache, bool shared)
{
	struct iopt_smmuv2_params p;
	struct iopt_pgtable_info info;

	iopt_smmuv2_preset("mmu-500", &p);
	r->tb = model_bed(IOPT_TESTBED_SMMUV2, tlb, walk_cache, shared);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv2(r->tb);
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	bench_must(iopt_pgtable_alloc(&pc, &r->pt), "iopt_pgtable_alloc");
	iopt_pgtable_get_info(r->pt, &info);
	r->cb0 = (1ull << (p.numpagendxb + 1)) << 12;
	iopt_smmuv2_mmio_write(r->s, V2_S2CR0, 4, 0, 0);
	iopt_smmuv2_mmio_write(r->s, V2_SMR0, 4, 1u << 31, 0);
	iopt_smmuv2_mmio_write(r->s, V2_CBAR0, 4, 1u << 16 | 1, 0);
	iopt_smmuv2_mmio_write(r->s, V2_CBA2R0, 4, 1, 0);
	iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_TCR, 4, 16 | 1u << 23, 0);
	iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_TCR2, 4, 5, 0);
	iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_TTBR0, 8,
			       info.regs.ttbr | 1ull << 48, 0);
	iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_MAIR0, 4,
			       (uint32_t)info.regs.mair, 0);
	iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_SCTLR, 4, 1, 0);
	iopt_smmuv2_mmio_write(r->s, V2_SCR0, 4, 1u << 10, 0);	/* USFCFG */
	r->cycle = 0;
}

static void rig2_fini(struct rig2 *r)
{
	iopt_pgtable_free(r->pt);
	iopt_testbed_destroy(r->tb);
}

static uint64_t v2_xlate(void *m, uint64_t va, uint64_t cycle)
{
	struct iopt_smmuv2_txn t = { .sid = 0, .addr = va, .priv = true };
	struct iopt_smmuv2_resp resp;

	iopt_smmuv2_translate(m, &t, cycle, &resp);
	return resp.ready;
}

static void v2_stats(void *m, struct xstats *x)
{
	struct iopt_smmuv2_stats st;

	iopt_smmuv2_get_stats(m, &st);
	*x = (struct xstats){ st.tlb_hits, st.tlb_misses, st.walk_cache_hits,
			      st.walk_cache_misses, st.walks, st.fetches };
}

/* tlbsync: each thread loops TLBIVA + TLBSYNC + poll TLBSTATUS, polling
 * as the Linux driver does (10 reads, then a sleep doubling from 1 us),
 * but giving up after 1 ms instead of 1 s (a timeout). */
#define SYNC_TIMEOUT_NS 1000000ull

struct tsync {
	struct rig2 *r;
	struct iopt_smmuv2_runner *run;
	pthread_mutex_t *lock;		/* NULL: no sync lock */
	uint64_t stop;			/* set by the main thread */
	uint64_t syncs, timeouts, worst_cycles, worst_ns;
	unsigned id;
};

static void *tsync_main(void *arg)
{
	struct tsync *t = arg;
	struct rig2 *r = t->r;
	uint64_t page = t->id;

	bench_pin(t->id);
	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		if (t->lock)
			pthread_mutex_lock(t->lock);
		uint64_t c0 = iopt_smmuv2_runner_now(t->run), h0 = bench_now_ns();
		uint64_t v = 1, c = c0, h = h0;

		iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_TLBIVA, 8,
				       page | 1ull << 48, c0);
		iopt_smmuv2_mmio_write(r->s, r->cb0 + V2_CB_TLBSYNC, 4, 0,
				       iopt_smmuv2_runner_now(t->run));
		for (uint64_t delay = 1000; v & 1; delay *= 2) {
			for (int k = 0; k < 10 && (v & 1); k++) {
				c = iopt_smmuv2_runner_now(t->run);
				iopt_smmuv2_mmio_read(r->s, r->cb0 + V2_CB_TLBSTATUS, 4,
						      &v, c);
			}
			h = bench_now_ns();
			if (!(v & 1) || h - h0 > SYNC_TIMEOUT_NS)
				break;
			struct timespec ts = { 0, (long)delay };

			nanosleep(&ts, NULL);
		}
		if (t->lock)
			pthread_mutex_unlock(t->lock);
		if (v & 1) {
			t->timeouts++;
		} else {
			t->syncs++;
			if (c - c0 > t->worst_cycles)
				t->worst_cycles = c - c0;
			if (h - h0 > t->worst_ns)
				t->worst_ns = h - h0;
		}
		page = (page + 64) & 0xfffff;
	}
	return NULL;
}

static void case_tlbsync(unsigned nthreads, bool locked, double seconds)
{
	struct rig2 r;
	struct iopt_smmuv2_runner *run;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct tsync *t = calloc(nthreads, sizeof(*t));
	pthread_t *th = calloc(nthreads, sizeof(*th));

	rig2_init(&r, true, true, false);
	if (!t || !th || iopt_smmuv2_runner_start(r.s, 1.0, &run)) {
		fprintf(stderr, "tlbsync: cannot start\n");
		exit(1);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		t[i] = (struct tsync){ .r = &r, .run = run,
				       .lock = locked ? &lock : NULL, .id = i };
		if (pthread_create(&th[i], NULL, tsync_main, &t[i])) {
			fprintf(stderr, "tlbsync: cannot start a thread\n");
			exit(1);
		}
	}
	uint64_t t0 = bench_now_ns();
	struct timespec ts = { (time_t)seconds,
			       (long)((seconds - (double)(time_t)seconds) * 1e9) };

	nanosleep(&ts, NULL);
	for (unsigned i = 0; i < nthreads; i++)
		__atomic_store_n(&t[i].stop, 1, __ATOMIC_RELEASE);
	uint64_t syncs = 0, timeouts = 0, wc = 0, wn = 0;

	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		syncs += t[i].syncs;
		timeouts += t[i].timeouts;
		wc = t[i].worst_cycles > wc ? t[i].worst_cycles : wc;
		wn = t[i].worst_ns > wn ? t[i].worst_ns : wn;
	}
	double el = (double)(bench_now_ns() - t0) / 1e9;
	struct iopt_smmuv2_stats st;

	iopt_smmuv2_get_stats(r.s, &st);
	iopt_smmuv2_runner_stop(run);
	if (json)
		printf("{\"suite\":\"smmu\",\"version\":2,\"case\":\"tlbsync\","
		       "\"threads\":%u,\"sync_lock\":%s,\"syncs_per_sec\":%.0f,"
		       "\"worst_wait_cycles\":%llu,\"worst_wait_ns\":%llu,"
		       "\"timeouts\":%llu,\"sync_restarts\":%llu}\n",
		       nthreads, locked ? "true" : "false", (double)syncs / el,
		       (unsigned long long)wc, (unsigned long long)wn,
		       (unsigned long long)timeouts,
		       (unsigned long long)st.sync_restarts);
	else
		printf("tlbsync %3u threads %-7s %9.0f syncs/s  worst wait %8llu cycles "
		       "%9llu host ns  %llu timeouts (>1 ms)  %llu restarts\n",
		       nthreads, locked ? "lock" : "no-lock", (double)syncs / el,
		       (unsigned long long)wc, (unsigned long long)wn,
		       (unsigned long long)timeouts,
		       (unsigned long long)st.sync_restarts);
	rig2_fini(&r);
	free(t);
	free(th);
}

/* ---- translate_hit from N device threads ------------------------------ */

/*
 * Each thread translates the one mapped page (a TLB hit) at its previous
 * translation's ready cycle, on one model with a shared clock (a cycle
 * behind the model's time is taken as its time). The rate is all
 * threads' translations over the wall time from the start barrier to the
 * last join; the median of REPS runs, each on a fresh model. Beside it,
 * translations per thread CPU-second (CLOCK_THREAD_CPUTIME_ID, summed
 * over the threads): what one thread's hits cost another's (lines moved
 * between cores) lowers it, time spent waiting for a core does not.
 * Other load still moves it: when the threads only take turns on one
 * core they do not contend at all (docs/history/smmu_model.md, "Hit
 * scaling: measured").
 */
struct hit_thread {
	void *m;
	int version;
	long n;
	struct bench_barrier *go;
	uint64_t *ready;		/* threads spinning to start */
	unsigned nthreads, id;
	struct plat_thread th;
	uint64_t faults;
	uint64_t cpu_ns;		/* the thread's CPU time in its loop */
	uint64_t t0, t1;		/* its loop's start and end, wall */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *hit_thread_main(void *arg)
{
	struct hit_thread *h = arg;
	uint64_t cycle = 0;

	/* Each device thread on its own CPU, as the other suites' threads:
	 * left to the scheduler, the two threads of a short run were often
	 * woken onto one CPU and shared it for most of the run. */
	bench_pin(h->id);
	bench_barrier_wait(h->go);
	bench_spin_start(h->ready, h->nthreads);
	h->t0 = bench_now_ns();
	uint64_t c0 = thread_cpu_ns();

	if (h->version == 2) {
		struct iopt_smmuv2_txn t = { .sid = 0, .addr = 0x40000234, .priv = true };
		struct iopt_smmuv2_resp r;

		for (long i = 0; i < h->n; i++) {
			if (iopt_smmuv2_translate(h->m, &t, cycle, &r) ||
			    r.result != IOPT_SMMUV2_OK || r.oa != 0x7000000234ull)
				h->faults++;
			cycle = r.ready;
		}
	} else {
		struct iopt_smmuv3_txn t = { .sid = 0, .addr = 0x40000234, .priv = true };
		struct iopt_smmuv3_resp r;

		for (long i = 0; i < h->n; i++) {
			if (iopt_smmuv3_translate(h->m, &t, cycle, &r) || r.fault ||
			    r.oa != 0x7000000234ull)
				h->faults++;
			cycle = r.ready;
		}
	}
	h->cpu_ns = thread_cpu_ns() - c0;
	h->t1 = bench_now_ns();
	return NULL;
}

/* One run: nthreads device threads of n hits each on a fresh model (own:
 * one model each, the control); the translations per wall second from
 * the first loop's start to the last one's end (thread creation and
 * wake-up left out), *cpu_rate per thread CPU-second. */
static double hit_run(int version, unsigned nthreads, bool own, long n,
		      uint64_t *faults, double *cpu_rate)
{
	unsigned nm = own ? nthreads : 1;
	struct rig *r = calloc(nm, sizeof(*r));
	struct rig2 *r2 = calloc(nm, sizeof(*r2));
	struct bench_barrier go;
	struct hit_thread *h = calloc(nthreads, sizeof(*h));

	if (!h || !r || !r2) {
		fprintf(stderr, "translate_hit_threads: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < nm; i++) {
		if (version == 2) {
			rig2_init(&r2[i], true, true, true);
			rig_map(r2[i].pt, 0x40000000, 0x7000000000ull, 1);
		} else {
			rig_init_clk(&r[i], true, true, true);
			rig_map(r[i].pt, 0x40000000, 0x7000000000ull, 1);
		}
	}
	uint64_t ready = 0;

	bench_barrier_init(&go, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		unsigned k = own ? i : 0;

		h[i] = (struct hit_thread){
			.m = version == 2 ? (void *)r2[k].s : (void *)r[k].s,
			.version = version, .n = n, .go = &go, .ready = &ready,
			.nthreads = nthreads, .id = i };
		if (plat_thread_start(&h[i].th, hit_thread_main, &h[i])) {
			fprintf(stderr, "translate_hit_threads: no thread\n");
			exit(1);
		}
	}
	bench_barrier_wait(&go);
	uint64_t t0 = UINT64_MAX, t1 = 0, cpu = 0;

	for (unsigned i = 0; i < nthreads; i++) {
		plat_thread_join(&h[i].th);
		*faults += h[i].faults;
		cpu += h[i].cpu_ns;
		t0 = h[i].t0 < t0 ? h[i].t0 : t0;
		t1 = h[i].t1 > t1 ? h[i].t1 : t1;
	}
	double rate = (double)n * nthreads * 1e9 / (double)(t1 - t0);

	*cpu_rate = cpu ? (double)n * nthreads * 1e9 / (double)cpu : 0;
	bench_barrier_destroy(&go);
	free(h);
	for (unsigned i = 0; i < nm; i++) {
		if (version == 2)
			rig2_fini(&r2[i]);
		else
			rig_fini(&r[i]);
	}
	free(r);
	free(r2);
	return rate;
}

/*
 * translate_hit_threads with nthreads threads: HIT_PAIRS short runs, each
 * (when nthreads > 1) between two one-thread runs (one before, one after,
 * each shared with the next run), and its ratio to one thread taken
 * against their mean, so that a drift of the machine's speed across the
 * three cancels; the ratios reported are the medians of the runs' own.
 * This VM switches speed, and its guest scheduler or the host takes a
 * CPU from one thread for a tick (4 ms) at times: many runs let the
 * median stand for the machine's usual state where a few long ones could
 * all fall into one bad stretch, and each run is long enough (about
 * 10-20 ms) that one such tick costs it a fraction. The same series is
 * run on the control: each thread its own model (hit_run() own), the same
 * code sharing nothing, which is what the machine gives nthreads such
 * threads (its scheduler, and the host's placing of the vCPUs, SMT
 * siblings among them at times); the shared model's ratio is to be read
 * beside it.
 */
#define HIT_PAIRS 11

struct hit_fig {
	double rate, cpu_rate;		/* medians: per second, per CPU-s */
	double vs, q1, q3, cpu_vs;	/* against one thread */
};

/* The medians and quartiles of HIT_PAIRS runs' figures into f. */
static void hit_fig_of(struct hit_fig *f, double *rate, double *cpu_rate,
		       double *ratio, double *cpu_ratio)
{
	f->rate = bench_median(rate, HIT_PAIRS);
	f->cpu_rate = bench_median(cpu_rate, HIT_PAIRS);
	f->vs = bench_median(ratio, HIT_PAIRS);
	f->cpu_vs = bench_median(cpu_ratio, HIT_PAIRS);
	/* bench_median() sorted the ratios: their quartiles, to show how far
	 * the machine moved between runs. */
	f->q1 = ratio[HIT_PAIRS / 4];
	f->q3 = ratio[3 * HIT_PAIRS / 4];
}

/* HIT_PAIRS runs of nthreads on one model (m) and, with control, as many
 * on one model each (c), alternating, each between two one-thread runs
 * (shared with its neighbours). */
static void hit_series(int version, unsigned nthreads, bool control, long n,
		       struct hit_fig *m, struct hit_fig *c, uint64_t *faults)
{
	double rate[2][HIT_PAIRS], cpu_rate[2][HIT_PAIRS], ratio[2][HIT_PAIRS];
	double cpu_ratio[2][HIT_PAIRS], one, cpu_one, prev = 0, cpu_prev = 0;
	unsigned kinds = control ? 2 : 1;

	if (nthreads > 1)
		prev = hit_run(version, 1, false, n, faults, &cpu_prev);
	for (int k = 0; k < HIT_PAIRS; k++)
		for (unsigned own = 0; own < kinds; own++) {
			rate[own][k] = hit_run(version, nthreads, own, n, faults,
					       &cpu_rate[own][k]);
			ratio[own][k] = cpu_ratio[own][k] = 1.0;
			if (nthreads == 1)
				continue;
			one = hit_run(version, 1, false, n, faults, &cpu_one);
			ratio[own][k] = 2 * rate[own][k] / (prev + one);
			cpu_ratio[own][k] = 2 * cpu_rate[own][k] / (cpu_prev + cpu_one);
			prev = one;
			cpu_prev = cpu_one;
		}
	hit_fig_of(m, rate[0], cpu_rate[0], ratio[0], cpu_ratio[0]);
	if (control)
		hit_fig_of(c, rate[1], cpu_rate[1], ratio[1], cpu_ratio[1]);
}

static void case_hit_threads(int version, unsigned nthreads)
{
	/* Device threads are platform threads: on iopt-bench-sim (--sim N)
	 * each is a simulated CPU. */
	const long n = bench_iters(1000000, 100);
	struct hit_fig m, c = { .vs = 1.0, .q1 = 1.0, .q3 = 1.0, .cpu_vs = 1.0 };
	uint64_t faults = 0;
	/* Simulated CPUs are host threads of the simulation: their CPU
	 * time says nothing of the simulated machine's, so no CPU figure
	 * and no control. */
	bool host = !bench_sim_cpus();

	hit_series(version, nthreads, host && nthreads > 1, n, &m, &c, &faults);

	bool cpu = host && m.cpu_rate > 0;
	const char *v = version == 2 ? "\"version\":2," : "";

	if (json && cpu)
		printf("{\"suite\":\"smmu\",%s\"case\":\"translate_hit_threads\","
		       "\"threads\":%u,\"translations_per_sec\":%.0f,"
		       "\"vs_one_thread\":%.2f,\"vs_one_thread_q1\":%.2f,"
		       "\"vs_one_thread_q3\":%.2f,\"per_thread_cpu_sec\":%.0f,"
		       "\"cpu_vs_one_thread\":%.2f,\"own_models_vs_one_thread\":%.2f,"
		       "\"own_models_q1\":%.2f,\"own_models_q3\":%.2f,"
		       "\"own_models_cpu_vs_one_thread\":%.2f,\"faults\":%llu}\n",
		       v, nthreads, m.rate, m.vs, m.q1, m.q3, m.cpu_rate, m.cpu_vs,
		       c.vs, c.q1, c.q3, c.cpu_vs, (unsigned long long)faults);
	else if (json)
		printf("{\"suite\":\"smmu\",%s\"case\":\"translate_hit_threads\","
		       "\"threads\":%u,\"translations_per_sec\":%.0f,"
		       "\"vs_one_thread\":%.2f,\"vs_one_thread_q1\":%.2f,"
		       "\"vs_one_thread_q3\":%.2f,\"faults\":%llu}\n",
		       v, nthreads, m.rate, m.vs, m.q1, m.q3,
		       (unsigned long long)faults);
	else if (cpu)
		printf("translate_hit %3u threads %11.0f translations/s  %.2fx one "
		       "thread (quartiles %.2f-%.2f); %11.0f per thread CPU-s  "
		       "%.2fx one thread's; one model each %.2fx%s\n", nthreads,
		       m.rate, m.vs, m.q1, m.q3, m.cpu_rate, m.cpu_vs, c.vs,
		       faults ? "  FAULTS" : "");
	else
		printf("translate_hit %3u threads %11.0f translations/s  %.2fx one "
		       "thread (quartiles %.2f-%.2f)%s\n", nthreads, m.rate, m.vs,
		       m.q1, m.q3, faults ? "  FAULTS" : "");
}

/* translate_hit_threads for 1, 2 and the --threads list. */
static void hit_threads(int version, const unsigned *threads, unsigned nthreads)
{
	if (!want("translate_hit_threads"))
		return;
	for (unsigned i = 0; i < nthreads; i++)
		case_hit_threads(version, threads[i]);
}

static void bench_v2(uint64_t footprint, const unsigned *threads,
		     unsigned nthreads)
{
	static const struct {
		const char *name;
		bool tlb, wc;
		long n;
	} one[] = {
		{ "translate_hit", true, true, 2000000 },
		{ "translate_walk", false, false, 500000 },
		{ "translate_walk_wcache", false, true, 500000 },
	};
	struct rig2 r;

	for (unsigned i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		if (!want(one[i].name))
			continue;
		rig2_init(&r, one[i].tlb, one[i].wc, false);
		rig_map(r.pt, 0x40000000, 0x7000000000ull, 1);
		struct xmodel x = { r.s, v2_xlate, v2_stats, &r.cycle };

		run_xlate(one[i].name, &x, one[i].n, same_va, NULL);
		rig2_fini(&r);
	}
	struct rnd x = { 0x9e3779b97f4a7c15ull, footprint / 4096 };

	if (want("translate_random")) {
		rig2_init(&r, true, true, false);
		rig_map(r.pt, 0x100000000ull, 0x100000000ull, x.pages);
		struct xmodel xm = { r.s, v2_xlate, v2_stats, &r.cycle };

		run_xlate("translate_random", &xm, 500000, rnd_va, &x);
		rig2_fini(&r);
	}
	hit_threads(2, threads, nthreads);
	for (unsigned i = 0; i < nthreads && want("tlbsync"); i++)
		for (int locked = 0; locked < 2; locked++)
			case_tlbsync(threads[i], locked, 0.3);
}

static const struct bench_case smmu_cases[] = {
	{ "mutex_pair", "host ns of an uncontended mutex lock+unlock (the\n"
	  "yardstick: runs with every case)" },
	{ "translate_hit", "one mapped page again and again (a TLB hit)" },
	{ "translate_walk", "the same with no TLB: a full 4-level walk" },
	{ "translate_walk_wcache", "the same from the cached last-level table" },
	{ "translate_random", "random pages over --footprint" },
	{ "translate_random_nowc", "the same without walk caches (v3)" },
	{ "translate_hit_threads", "1, 2 and the --threads device threads on "
	  "one model" },
	{ "cmdq", "TLBI_NH_VA + CMD_SYNC pairs: commands per simulated us (v3)" },
	{ "tlbsync", "TLBIVA + TLBSYNC + poll from N threads (v2)" },
	{ "drv_tlbi_batch", "16 TLBI_NH_VA + CMD_SYNC batches through the "
	  "driver, virtual clock (v3)" },
	{ "drv_tlbi_batch_host", "the same on the host clock (v3)" },
	{ 0 },
};

/* The cases of one version only. */
static bool smmu_case_ok(int version, const char *name)
{
	static const char *const v3_only[] = {
		"translate_random_nowc", "cmdq", "drv_tlbi_batch",
		"drv_tlbi_batch_host", NULL,
	};
	static const char *const v2_only[] = { "tlbsync", NULL };
	const char *const *other = version == 2 ? v3_only : v2_only;

	for (int i = 0; name && other[i]; i++)
		if (!strcmp(name, other[i]))
			return false;
	return true;
}

int bench_smmu_main(int argc, char **argv)
{
	uint64_t footprint = 64u << 20;
	unsigned threads[16] = { 1, 2 }, nthreads = 2, extra = 0;
	unsigned version = 3;
	const struct bench_opt opts[] = {
		{ "version", BENCH_UINT, &version, "2|3", "the SMMUv3 (3, default) "
		  "or SMMUv2 model", .min = 2, .max = 3 },
		{ "footprint", BENCH_SIZE, &footprint, "BYTES", "translate_random's "
		  "mapped bytes (64m)", .min = 4096, .max = 16ull << 30 },
		{ "threads", BENCH_LIST, threads + 2, "N,N,...", "translate_hit_threads "
		  "(and, v2, tlbsync) with 1, 2\nand these thread counts",
		  .min = 1, .max = 1024, .count = &extra, .cap = 14 },
		{ "json", BENCH_FLAG, &json, .help = "one JSON object per line" },
		{ 0 },
	};
	const struct bench_cli cli = {
		.suite = "smmu",
		.about = "The SMMUv3 (default) or SMMUv2 model's own speed (host ns) "
			 "and its modelled\nlatency (cycles).",
		.opts = opts, .cases = smmu_cases, .only = &only,
	};
	int status;

	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	nthreads += extra;
	if (!smmu_case_ok((int)version, only)) {
		fprintf(stderr, "iopt-bench smmu: --case %s is not a case of "
			"--version %u\n", only, version);
		return 2;
	}
	case_mutex();
	struct rig r;

	if (version == 2) {
		bench_v2(footprint, threads, nthreads);
		return 0;
	}

	/* One page: TLB hits; walks with neither cache; walks from the
	 * cached last-level table. */
	static const struct {
		const char *name;
		bool tlb, wc;
		long n;
	} one[] = {
		{ "translate_hit", true, true, 2000000 },
		{ "translate_walk", false, false, 500000 },
		{ "translate_walk_wcache", false, true, 500000 },
	};
	for (unsigned i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		if (!want(one[i].name))
			continue;
		rig_init(&r, one[i].tlb, one[i].wc);
		rig_map(r.pt, 0x40000000, 0x7000000000ull, 1);
		struct xmodel x = { r.s, v3_xlate, v3_stats, &r.cycle };

		run_xlate(one[i].name, &x, one[i].n, same_va, NULL);
		rig_fini(&r);
	}
	/* Random pages over the footprint, with and without walk caches. */
	for (int wc = 1; wc >= 0; wc--) {
		struct rnd x = { 0x9e3779b97f4a7c15ull, footprint / 4096 };

		if (!want(wc ? "translate_random" : "translate_random_nowc"))
			continue;
		rig_init(&r, true, wc);
		rig_map(r.pt, 0x100000000ull, 0x100000000ull, x.pages);
		struct xmodel xm = { r.s, v3_xlate, v3_stats, &r.cycle };

		run_xlate(wc ? "translate_random" : "translate_random_nowc", &xm,
			  500000, rnd_va, &x);
		rig_fini(&r);
	}
	hit_threads(3, threads, nthreads);
	if (want("cmdq"))
		case_cmdq();
	if (want("drv_tlbi_batch"))
		case_drv_batch(false);
	if (want("drv_tlbi_batch_host"))
		case_drv_batch(true);
	return 0;
}
