/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench dma: the whole DMA path (IOVA + page table + SMMUv3 driver +
 * invalidation policy) over the SMMUv3 model, after the kernel's
 * dma_map_benchmark: each thread loops map, delay, unmap over its own
 * buffer, timing map and unmap, while the model translates a sample of
 * the mappings as the device would (through the driver's timeline, whose
 * clock is the driver's virtual clock or the free-running runner).
 *
 * One line (or JSON object) per variant. --report runs the variants the
 * docs quote side by side, interleaved, and prints medians: lazy map +
 * unmap against the sum of its parts (cached IOVA pair + one-page map +
 * one-page unmap, measured in the same run), 2 threads lazy against 1,
 * strict with MSI and CONS syncs; with --smmu v2, strict with each sync
 * serialisation at 32 or more threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/iova.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "bench.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(256ull << 20)
#define SID		1
#define PAGE		4096ull
#define REPS		5

struct opts {
	unsigned threads;
	double seconds;
	long ops;		/* per thread; 0: run for seconds */
	unsigned granule;	/* pages per mapping */
	uint64_t trans_ns;
	unsigned prot;
	const char *dir;
	enum iopt_inval policy;
	enum iopt_smmuv3_drv_cmdq cmdq;
	enum iopt_smmuv3_drv_sync sync;
	bool v2;		/* --smmu v2: the SMMUv2 driver and model */
	bool none;		/* --smmu none: no IOMMU (IOPT_DMA_DIRECT) */
	enum iopt_smmuv2_drv_sync v2_sync;
	unsigned lock;		/* drivers' lock_kind (enum iopt_lock_kind) */
	bool runner;		/* free-running model clock */
	bool no_sev;		/* model without IDR0.SEV (CONS syncs poll) */
	unsigned sample;	/* translate every n-th mapping; 0: none */
	unsigned dma_bits;
	bool lat;		/* time each map and unmap */
	bool pin;		/* pin thread i to CPU i */
	bool fine_clock;	/* flush queues on the precise host clock */
	unsigned fq_entries;	/* 0: the policy's default */
	uint64_t sync_timeout_us;	/* driver's sync timeout; 0: its default */
	uint64_t fq_timeout_ms;	/* 0: the policy's default */
	bool fq_timer;		/* a thread flushes expired queues */
	bool domain_lock;	/* --domain-lock: pgtbl_lock (Linux to 4.12) */
	unsigned domain_lock_kind;	/* enum iopt_lock_kind */
	unsigned rcache_flush;	/* enum iopt_iova_flush */
	bool pci;		/* IOPT_DMA_DEV_PCI: below 4 GiB first */
	uint64_t iova_start;	/* bytes; 0: the domain's default */
	uint64_t trap_ns;	/* --viommu-trap-ns */
	bool noncoherent;	/* table walks that do not snoop */
	unsigned hold;		/* pages mapped for the whole run */
	unsigned cpus;		/* the domain's CPUs; 0: threads */
	bool json;
};

struct result {
	double map_ns, unmap_ns, map_sd, unmap_sd, ops_per_sec;
	double map_max, unmap_max;	/* the slowest call of each */
	/* Pairs per second of the threads' own CPU time: what the code
	 * costs whether or not the machine gave the threads its CPUs. */
	double ops_per_cpu_sec;
	/* The same with the device's sampled translations taken out of the
	 * threads' CPU time (--no-lat only; else ops_per_cpu_sec): on
	 * hardware a device's translation is the SMMU's work, not the
	 * mapping CPU's; here the model runs on the thread. */
	double ops_per_cpu_sec_excl_dev;
	uint64_t cpu_ns;
	uint64_t dev_ns;	/* in the sampled translations (--no-lat) */
	uint64_t ops, commands, syncs, flush_alls, sync_timeouts, cas_retries;
	uint64_t dev_faults, errors;
	uint64_t sync_restarts;	/* v2 model: syncs written while one was active */
};

static const char *const pol_name[] = { "strict", "lazy", "single", "exhaust", NULL };
static const char *const v2_sync_name[] = { "none", "bank", "global", NULL };
/* Indexed by enum iopt_lock_kind. */
static const char *const lock_name[] = { "default", "tas", "ttas", "ticket",
					 "mcs", NULL };
/* Indexed by enum iopt_iova_flush. */
static const char *const rcache_flush_name[] = { "last-retry", "never",
						 "every-retry", NULL };

/* The chain under test (iopgtable/testbed.h). */
struct rig {
	struct iopt_testbed *tb;		/* NULL with --smmu none */
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv2 *s2;			/* --smmu v2 */
	struct iopt_smmuv2_drv *drv2;
	struct iopt_dma *d;
};

/* Driver counters in the result's terms (v2: commands = register
 * maintenance writes, TLBIs and syncs). */
static void drv_stats(struct rig *r, struct iopt_smmuv3_drv_stats *st)
{
	struct iopt_smmuv2_drv_stats s2;

	memset(st, 0, sizeof(*st));
	if (!r->tb)
		return;		/* no IOMMU, no driver */
	if (!r->drv2) {
		iopt_smmuv3_drv_get_stats(r->drv, st);
		return;
	}
	iopt_smmuv2_drv_get_stats(r->drv2, &s2);
	st->commands = s2.tlbis + s2.syncs;
	st->syncs = s2.syncs;
	st->flush_alls = s2.flush_alls;
	st->sync_timeouts = s2.sync_timeouts;
}

/* The flush queues' timestamps: a coarse clock, as the kernel's jiffies
 * (a host clock read per unmap costs about as much as the rest of it). */
static uint64_t coarse_clock(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	if (bench_sim_cpus())
		return bench_now_ns();	/* simulated time */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The options' testbed: the default SMMUv3 model (or the "mmu-500"
 * SMMUv2) on the driver's virtual clock, the runner's or the
 * simulation's (model at 1 GHz), the domain attached to SID. */
/* The DMA layer's options of o, the same for every SMMU (none too). */
static void dma_opts(struct iopt_dma_cfg *c, const struct opts *o)
{
	c->policy = o->policy;
	c->nr_cpus = o->cpus > o->threads ? o->cpus : o->threads;
	c->fq_entries = o->fq_entries;
	c->fq_timeout_ns = o->fq_timeout_ms * 1000000ull;
	/* The timer thread reads the queues' clock: the precise one. */
	c->fq_timer = o->fq_timer;
	if (!o->fine_clock && !o->fq_timer)
		c->fq_clock = coarse_clock;
	c->domain_lock = o->domain_lock;
	c->domain_lock_kind = o->domain_lock_kind;
	c->rcache_flush = (enum iopt_iova_flush)o->rcache_flush;
	c->dev_flags = o->pci ? IOPT_DMA_DEV_PCI : 0;
	c->iova_start = o->iova_start;
	c->viommu_trap_ns = o->trap_ns;
	c->pt.coherent_walk = !o->noncoherent;
}

static int rig_up(struct rig *r, const struct opts *o)
{
	struct iopt_testbed_cfg c;
	int ret;

	memset(r, 0, sizeof(*r));
	if (o->none) {
		struct iopt_dma_cfg dc;

		iopt_dma_default_cfg(&dc);
		dma_opts(&dc, o);
		dc.mode = IOPT_DMA_DIRECT;
		return iopt_dma_create(&dc, &r->d);
	}
	iopt_testbed_default_cfg(&c, o->v2 ? IOPT_TESTBED_SMMUV2 : IOPT_TESTBED_SMMUV3);
	bench_model_params(&c);
	c.mem_base = MEM_BASE;
	c.mem_size = MEM_SIZE;
	if (o->no_sev)
		c.v3.sev = false;
	if (bench_sim()) {
		c.clock = IOPT_TESTBED_CLOCK_SIM;
		c.sim = bench_sim();
	} else if (o->runner) {
		c.clock = IOPT_TESTBED_CLOCK_RUNNER;
	}
	c.drv3.cmdq = o->cmdq;
	c.drv3.sync = o->sync;
	c.drv3.sync_timeout_cycles = o->sync_timeout_us * 1000;	/* 1 GHz */
	c.drv2.sync = o->v2_sync;
	c.drv2.sync_timeout_cycles = o->sync_timeout_us * 1000;
	c.drv2.lock_kind = o->lock;
	c.drv3.lock_kind = o->lock;
	dma_opts(&c.dma_cfg, o);
	c.sid = SID;
	ret = iopt_testbed_create(&c, &r->tb);
	if (ret)
		return ret;
	r->drv = iopt_testbed_smmuv3_drv(r->tb);
	r->s2 = iopt_testbed_smmuv2(r->tb);
	r->drv2 = iopt_testbed_smmuv2_drv(r->tb);
	r->d = iopt_testbed_dma(r->tb);
	return 0;
}

static void rig_down(struct rig *r)
{
	if (!r->tb)
		iopt_dma_destroy(r->d);
	iopt_testbed_destroy(r->tb);
}

struct worker {
	const struct opts *o;
	struct rig *r;
	unsigned cpu;
	struct plat_thread t;
	uint64_t deadline;
	long ops;
	double map_sum, map_sq, unmap_sum, unmap_sq, map_max, unmap_max;
	uint64_t dev_faults, errors;
	uint64_t cpu_ns;	/* the thread's CPU time */
	uint64_t dev_ns;	/* of it, in device_sample() (--no-lat) */
} __attribute__((aligned(128)));	/* written every call: one line each */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = bench_now_ns() + ns;

	while (bench_now_ns() < end)
		;
}

/* The device translates iova (mapped to pa) as one of its sampled
 * transactions; a wrong or faulting translation counts in dev_faults. */
static void device_sample(struct worker *w, uint64_t iova, uint64_t pa)
{
	uint64_t oa;

	/* No IOMMU: the device puts the DMA address on the bus as it is. */
	if (!w->r->tb) {
		if (iova != pa)
			w->dev_faults++;
		return;
	}
	if (iopt_testbed_dev_access(w->r->tb, SID, iova, !(w->o->prot & IOPT_READ),
				    &oa, NULL) || oa != pa)
		w->dev_faults++;
}

/*
 * --no-lat: map, (device sample), (delay), unmap, nothing else per pair —
 * as lean as the parts' loop in measure_parts(), so that the lazy pair's
 * CPU time against the parts' compares the calls and not the loops.
 * Samples the same pairs as the timed loop (i % sample == 0).
 */
static void worker_loop_untimed(struct worker *w, uint64_t pa, uint64_t size,
				uint64_t mask)
{
	const struct opts *o = w->o;
	struct iopt_dma *d = w->r->d;
	const unsigned prot = o->prot, cpu = w->cpu;
	const long ops = o->ops;
	long i, map_errors = 0, unmap_errors = 0;
	long next_sample = o->sample ? 0 : -1;

	for (i = 0;; i++) {
		uint64_t iova;

		if (ops ? i >= ops : (i & 15) == 0 && bench_now_ns() >= w->deadline)
			break;
		if (iopt_dma_map(d, pa, size, prot, mask, cpu, &iova)) {
			map_errors++;
			continue;
		}
		if (i == next_sample) {
			/* Two clock reads a sample (1 in 64 pairs by
			 * default): the time the thread spent as the device,
			 * taken out of its CPU time for the map+unmap cost
			 * (a sample preempted inside would take out more:
			 * rare in ~1 us). */
			uint64_t t0 = bench_now_ns();

			next_sample += o->sample;
			device_sample(w, iova, pa);
			w->dev_ns += bench_now_ns() - t0;
		}
		if (o->trans_ns)
			spin_ns(o->trans_ns);
		if (iopt_dma_unmap(d, iova, size, cpu))
			unmap_errors++;
	}
	w->ops = i - map_errors;	/* pairs whose map succeeded, as timed */
	w->errors += (uint64_t)(map_errors + unmap_errors);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	/* Each thread's own buffer. */
	uint64_t pa = (uint64_t)(w->cpu + 1) << 32;
	uint64_t size = (uint64_t)o->granule * PAGE;
	uint64_t mask = o->dma_bits >= 64 ? ~0ull : (1ull << o->dma_bits) - 1;

	/* Under a narrower mask where it would lie above it: without an
	 * IOMMU the device must reach the buffer itself (no bounce buffers
	 * are modelled); the threads' buffers then start 1 MiB apart. */
	if (pa + size - 1 > mask)
		pa = MEM_BASE + ((uint64_t)w->cpu << 20);

	uint64_t cpu0 = thread_cpu_ns();

	if (o->pin)
		bench_pin(w->cpu);
	if (!o->lat) {
		worker_loop_untimed(w, pa, size, mask);
		w->cpu_ns = thread_cpu_ns() - cpu0;
		return NULL;
	}
	for (long i = 0;; i++) {
		uint64_t iova, t0, t1, t2, t3;
		int ret;

		if (o->ops ? i >= o->ops : (i & 15) == 0 && bench_now_ns() >= w->deadline)
			break;
		t0 = bench_now_ns();
		ret = iopt_dma_map(w->r->d, pa, size, o->prot, mask, w->cpu, &iova);
		t1 = bench_now_ns();
		if (ret) {
			w->errors++;
			continue;
		}
		if (o->sample && i % o->sample == 0)
			device_sample(w, iova, pa);
		if (o->trans_ns)
			spin_ns(o->trans_ns);
		t2 = bench_now_ns();
		ret = iopt_dma_unmap(w->r->d, iova, size, w->cpu);
		t3 = bench_now_ns();
		if (ret)
			w->errors++;
		double m = (double)(t1 - t0), u = (double)(t3 - t2);

		w->map_sum += m;
		w->map_sq += m * m;
		w->unmap_sum += u;
		w->unmap_sq += u * u;
		w->map_max = fmax(w->map_max, m);
		w->unmap_max = fmax(w->unmap_max, u);
		w->ops++;
	}
	w->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

static int run_variant(const struct opts *o, struct result *res)
{
	struct rig r;
	/* Aligned: neighbouring workers' counters in one cache line made
	 * the threads of a variant share a line written on every call. */
	struct worker *w = aligned_alloc(128, o->threads * sizeof(*w));
	struct iopt_smmuv3_drv_stats s0, s1;
	uint64_t t0, t1;
	int ret;

	if (!w) {
		fprintf(stderr, "iopt-bench dma: out of memory\n");
		return -ENOMEM;
	}
	memset(w, 0, o->threads * sizeof(*w));
	ret = rig_up(&r, o);
	if (ret) {
		fprintf(stderr, "iopt-bench dma: setup failed: %s\n", strerror(-ret));
		rig_down(&r);
		free(w);
		return ret;
	}
	struct iopt_smmuv2_stats m0 = { 0 }, m1 = { 0 };
	/* --hold: mappings that stay for the whole run, as a NIC's receive
	 * ring's (a PCI domain's go below 4 GiB first), mapped as CPU 0. */
	uint64_t *held = bench_calloc(o->hold, sizeof(*held));
	uint64_t hmask = o->dma_bits >= 64 ? ~0ull : (1ull << o->dma_bits) - 1;

	for (unsigned i = 0; i < o->hold; i++)
		bench_must(iopt_dma_map(r.d, MEM_BASE + i * PAGE, PAGE,
					IOPT_READ | IOPT_WRITE, hmask, 0, &held[i]),
			   "--hold: iopt_dma_map");
	if (r.s2)
		iopt_smmuv2_get_stats(r.s2, &m0);
	drv_stats(&r, &s0);
	t0 = bench_now_ns();
	for (unsigned i = 0; i < o->threads; i++) {
		w[i].o = o;
		w[i].r = &r;
		w[i].cpu = i;
		w[i].deadline = t0 + (uint64_t)(o->seconds * 1e9);
		if (plat_thread_start(&w[i].t, worker_main, &w[i])) {
			fprintf(stderr, "iopt-bench dma: cannot start thread %u\n", i);
			exit(1);
		}
	}
	memset(res, 0, sizeof(*res));
	double ms = 0, mq = 0, us = 0, uq = 0;

	for (unsigned i = 0; i < o->threads; i++) {
		plat_thread_join(&w[i].t);
		ms += w[i].map_sum;
		mq += w[i].map_sq;
		us += w[i].unmap_sum;
		uq += w[i].unmap_sq;
		res->ops += (uint64_t)w[i].ops;
		res->dev_faults += w[i].dev_faults;
		res->errors += w[i].errors;
		res->cpu_ns += w[i].cpu_ns;
		res->dev_ns += w[i].dev_ns;
		res->map_max = fmax(res->map_max, w[i].map_max);
		res->unmap_max = fmax(res->unmap_max, w[i].unmap_max);
	}
	t1 = bench_now_ns();
	drv_stats(&r, &s1);
	if (r.s2)
		iopt_smmuv2_get_stats(r.s2, &m1);
	res->sync_restarts = m1.sync_restarts - m0.sync_restarts;
	if (res->ops) {
		double n = (double)res->ops;

		res->map_ns = ms / n;
		res->unmap_ns = us / n;
		res->map_sd = sqrt(fmax(0, mq / n - res->map_ns * res->map_ns));
		res->unmap_sd = sqrt(fmax(0, uq / n - res->unmap_ns * res->unmap_ns));
	}
	res->ops_per_sec = (double)res->ops * 1e9 / (double)(t1 - t0);
	/* On the simulation every CPU runs on this one host thread: no
	 * per-thread CPU time. */
	if (res->cpu_ns && !bench_sim()) {
		res->ops_per_cpu_sec = (double)res->ops * 1e9 / (double)res->cpu_ns;
		res->ops_per_cpu_sec_excl_dev = res->ops_per_cpu_sec;
		if (res->dev_ns < res->cpu_ns)
			res->ops_per_cpu_sec_excl_dev = (double)res->ops * 1e9 /
				(double)(res->cpu_ns - res->dev_ns);
	}
	res->commands = s1.commands - s0.commands;
	res->syncs = s1.syncs - s0.syncs;
	res->flush_alls = s1.flush_alls - s0.flush_alls;
	res->sync_timeouts = s1.sync_timeouts - s0.sync_timeouts;
	res->cas_retries = s1.cas_retries - s0.cas_retries;
	for (unsigned i = 0; i < o->hold; i++)
		bench_must(iopt_dma_unmap(r.d, held[i], PAGE, 0),
			   "--hold: iopt_dma_unmap");
	free(held);
	rig_down(&r);
	free(w);
	return 0;
}

static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static void print_result(const struct opts *o, const struct result *r)
{
	if (o->json) {
		printf("{\"suite\":\"dma\",\"smmu\":\"%s\",\"v2_sync\":\"%s\","
		       "\"lock\":\"%s\",\"policy\":\"%s\",\"threads\":%u,"
		       "\"cmdq\":\"%s\",\"sync\":\"%s\",\"granule\":%u,\"trans_ns\":%llu,"
		       "\"dir\":\"%s\",\"clock\":\"%s\",\"map_ns\":%.1f,\"unmap_ns\":%.1f,"
		       "\"map_sd_ns\":%.1f,\"unmap_sd_ns\":%.1f,\"map_max_ns\":%.1f,"
		       "\"unmap_max_ns\":%.1f,\"sync_timeout_us\":%llu,\"ops_per_sec\":%.0f,"
		       "\"ops_per_cpu_sec\":%.0f,\"ops_per_cpu_sec_excl_dev\":%.0f,\"sample\":%u,\"sev\":%s,"
		       "\"ops\":%llu,\"commands\":%llu,\"syncs\":%llu,\"flush_alls\":%llu,"
		       "\"sync_timeouts\":%llu,\"sync_restarts\":%llu,\"cas_retries\":%llu,\"device_faults\":%llu,"
		       "\"errors\":%llu,\"timed\":%s,\"domain_lock\":\"%s\","
		       "\"rcache_flush\":\"%s\",\"pci\":%s,\"iova_start\":%llu,"
		       "\"viommu_trap_ns\":%llu,\"walk\":\"%s\",\"fq_entries\":%u,"
		       "\"fq_timeout_ms\":%llu,\"fq_timer\":%s,\"hold\":%u,\"cpus\":%u,"
		       "\"load1\":%.2f}\n",
		       o->none ? "none" : o->v2 ? "v2" : "v3",
		       o->v2 ? v2_sync_name[o->v2_sync] : "",
		       lock_name[o->lock], pol_name[o->policy], o->threads,
		       o->cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED ? "locked" : "lockfree",
		       o->sync == IOPT_SMMUV3_DRV_SYNC_CONS ? "cons" : "msi",
		       o->granule, (unsigned long long)o->trans_ns, o->dir,
		       bench_sim() ? "sim" : o->runner ? "runner" : "virtual",
		       r->map_ns, r->unmap_ns, r->map_sd, r->unmap_sd, r->map_max,
		       r->unmap_max, (unsigned long long)o->sync_timeout_us,
		       r->ops_per_sec, r->ops_per_cpu_sec,
		       r->ops_per_cpu_sec_excl_dev, o->sample, o->no_sev || o->v2 ? "false" : "true",
		       (unsigned long long)r->ops, (unsigned long long)r->commands,
		       (unsigned long long)r->syncs, (unsigned long long)r->flush_alls,
		       (unsigned long long)r->sync_timeouts,
		       (unsigned long long)r->sync_restarts,
		       (unsigned long long)r->cas_retries,
		       (unsigned long long)r->dev_faults, (unsigned long long)r->errors,
		       o->lat ? "true" : "false",
		       o->domain_lock ? lock_name[o->domain_lock_kind] : "off",
		       rcache_flush_name[o->rcache_flush], o->pci ? "true" : "false",
		       (unsigned long long)o->iova_start,
		       (unsigned long long)o->trap_ns,
		       o->noncoherent ? "noncoherent" : "coherent", o->fq_entries,
		       (unsigned long long)o->fq_timeout_ms,
		       o->fq_timer ? "true" : "false", o->hold,
		       o->cpus > o->threads ? o->cpus : o->threads, load1());
	} else {
		if (o->none)
			printf("none      ");
		else if (o->v2)
			printf("v2/%-6s ", v2_sync_name[o->v2_sync]);
		printf("%-7s %2u thr %-8s %-4s  map %8.1f ns (sd %8.1f)  unmap %8.1f ns "
		       "(sd %8.1f)  %10.0f ops/s  cmds %llu syncs %llu flush_alls %llu "
		       "timeouts %llu cas_retries %llu dev_faults %llu errors %llu\n",
		       pol_name[o->policy], o->threads,
		       o->cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED ? "locked" : "lockfree",
		       o->sync == IOPT_SMMUV3_DRV_SYNC_CONS ? "cons" : "msi",
		       r->map_ns, r->map_sd, r->unmap_ns, r->unmap_sd, r->ops_per_sec,
		       (unsigned long long)r->commands, (unsigned long long)r->syncs,
		       (unsigned long long)r->flush_alls,
		       (unsigned long long)r->sync_timeouts,
		       (unsigned long long)r->cas_retries,
		       (unsigned long long)r->dev_faults, (unsigned long long)r->errors);
	}
	fflush(stdout);
}

/* ---- the parts of a lazy map+unmap, measured the same way ------------- */

/* The page table of the parts has TLB ops, as the DMA domain's has, that
 * do what a lazy unmap's do: nothing per leaf (a gather is passed). */
static void nop_add_page(struct iopt_pgtable_gather *g, uint64_t iova, uint64_t gr,
			 void *cookie)
{
	(void)g; (void)iova; (void)gr; (void)cookie;
}

static void nop_flush_walk(uint64_t iova, uint64_t size, uint64_t gr,
			   void *cookie)
{
	(void)iova; (void)size; (void)gr; (void)cookie;
}

static void nop_cookie(void *cookie)
{
	(void)cookie;
}

static const struct iopt_pgtable_tlb_ops parts_tlb = {
	.flush_all = nop_cookie, .flush_walk = nop_flush_walk,
	.add_page = nop_add_page, .sync = NULL,
};

struct parts {
	double iova_pair_ns, pt_map_ns, pt_unmap_ns;	/* each timed */
	double bulk_ns;		/* the three in loops of 256, per op */
	/* The three one after the other per iteration, as the DMA path runs
	 * them, over 256 pages in turn (a lazy domain's IOVAs cycle through
	 * its flush queue), the loop timed as a whole. */
	double loop_ns;
	double loop_cpu_ns;	/* the same in the thread's CPU time */
};

#define PARTS_VA (1ull << 40)

/* The parts' IOVA domain (one CPU) and page table, with the last-level
 * table kept (as a live DMA domain has). */
static void parts_up(struct iopt_physmem **pm, struct iopt_iova **iova,
		     struct iopt_pgtable **pt)
{
	struct iopt_iova_cfg ic = { .granule = PAGE, .start_pfn = 1,
				    .end_pfn = 1ull << 36, .nr_cpus = 1 };
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true };

	bench_must(iopt_physmem_create(MEM_BASE, MEM_SIZE, pm), "iopt_physmem_create");
	pc.mem = iopt_physmem_mem_ops();
	pc.mem_ctx = *pm;
	pc.tlb = &parts_tlb;
	bench_must(iopt_iova_create(&ic, iova), "iopt_iova_create");
	bench_must(iopt_pgtable_alloc(&pc, pt), "iopt_pgtable_alloc");
	bench_must(iopt_pgtable_map_pages(*pt, PARTS_VA + PAGE, 0x1000, PAGE, 1, IOPT_READ,
					  NULL), "iopt_pgtable_map_pages");
}

/* One iteration of the parts in one loop: cached IOVA pair, one-page map,
 * gather, one-page unmap, at the k-th of 256 pages in turn (as a lazy
 * domain's IOVAs cycle through its flush queue). */
static inline void parts_one(struct iopt_iova *iova, struct iopt_pgtable *pt,
			     uint64_t k, unsigned prot)
{
	struct iopt_pgtable_gather g;
	uint64_t pfn, at = PARTS_VA + (2 + k % 256) * PAGE;

	iopt_iova_alloc_cached(iova, 1, ~0ull, 0, true, &pfn);
	iopt_iova_free_cached(iova, pfn, 1, 0);
	iopt_pgtable_map_pages(pt, at, 1ull << 32, PAGE, 1, prot, NULL);
	iopt_pgtable_gather_init(&g);
	iopt_pgtable_unmap_pages(pt, at, PAGE, 1, &g);
}

/* --parts-ops N: the parts' loop N times, untimed, for an instruction
 * count (callgrind) of the same code the --report loop runs. */
static int parts_only(const struct opts *o, long n)
{
	struct iopt_iova *iova;
	struct iopt_pgtable *pt;
	struct iopt_physmem *pm;

	parts_up(&pm, &iova, &pt);
	for (long k = 0; k < n; k++)
		parts_one(iova, pt, (uint64_t)k, o->prot);
	iopt_pgtable_free(pt);
	iopt_iova_destroy(iova);
	iopt_physmem_destroy(pm);
	printf("parts: %ld iterations\n", n);
	return 0;
}

static void measure_parts(const struct opts *o, struct parts *p)
{
	struct iopt_iova *iova;
	struct iopt_pgtable *pt;
	struct iopt_physmem *pm;
	double a = 0, m = 0, u = 0;
	long n = 0;
	uint64_t end, pfn, va = PARTS_VA;

	parts_up(&pm, &iova, &pt);
	if (o->pin)
		bench_pin(0);
	end = bench_now_ns() + (uint64_t)(o->seconds * 1e9);
	while (bench_now_ns() < end) {
		for (int k = 0; k < 64; k++, n++) {
			struct iopt_pgtable_gather g;
			uint64_t t0 = bench_now_ns(), t1, t2, t3;

			iopt_iova_alloc_cached(iova, 1, ~0ull, 0, true, &pfn);
			iopt_iova_free_cached(iova, pfn, 1, 0);
			t1 = bench_now_ns();
			iopt_pgtable_map_pages(pt, va, 1ull << 32, PAGE, 1, o->prot, NULL);
			t2 = bench_now_ns();
			iopt_pgtable_gather_init(&g);
			iopt_pgtable_unmap_pages(pt, va, PAGE, 1, &g);
			t3 = bench_now_ns();
			a += (double)(t1 - t0);
			m += (double)(t2 - t1);
			u += (double)(t3 - t2);
		}
	}
	p->iova_pair_ns = a / (double)n;
	p->pt_map_ns = m / (double)n;
	p->pt_unmap_ns = u / (double)n;
	/* The same without a clock read per operation: 256 pairs, 256
	 * one-page maps, 256 one-page unmaps (one last-level table), each
	 * loop timed as a whole. */
	double bulk = 0;
	long nb = 0;

	end = bench_now_ns() + (uint64_t)(o->seconds * 1e9);
	while (bench_now_ns() < end) {
		uint64_t t0 = bench_now_ns(), t1, t2, t3;
		struct iopt_pgtable_gather g;

		for (int k = 0; k < 256; k++) {
			iopt_iova_alloc_cached(iova, 1, ~0ull, 0, true, &pfn);
			iopt_iova_free_cached(iova, pfn, 1, 0);
		}
		t1 = bench_now_ns();
		for (uint64_t k = 2; k < 258; k++)
			iopt_pgtable_map_pages(pt, va + k * PAGE, 1ull << 32, PAGE, 1,
					       o->prot, NULL);
		t2 = bench_now_ns();
		iopt_pgtable_gather_init(&g);
		for (uint64_t k = 2; k < 258; k++)
			iopt_pgtable_unmap_pages(pt, va + k * PAGE, PAGE, 1, &g);
		t3 = bench_now_ns();
		bulk += (double)(t3 - t0);
		nb += 256;
		(void)t1;
		(void)t2;
	}
	p->bulk_ns = bulk / (double)nb;
	double lp = 0, lc = 0;
	long nl = 0;

	end = bench_now_ns() + (uint64_t)(o->seconds * 1e9);
	while (bench_now_ns() < end) {
		uint64_t t0 = bench_now_ns(), c0 = thread_cpu_ns();

		for (uint64_t k = 0; k < 1024; k++)
			parts_one(iova, pt, k, o->prot);
		lp += (double)(bench_now_ns() - t0);
		lc += (double)(thread_cpu_ns() - c0);
		nl += 1024;
	}
	p->loop_ns = lp / (double)nl;
	p->loop_cpu_ns = lc / (double)nl;
	iopt_pgtable_free(pt);
	iopt_iova_destroy(iova);
	iopt_physmem_destroy(pm);
}

/*
 * The lazy pair and its parts in alternating slices on one thread, each
 * slice's CPU time summed per side: whatever state the machine is in
 * (another session's build on the other CPU, a cache the host shares)
 * lands on both sides alike, where two one-second runs seconds apart
 * can differ by tens of percent. The pair is the untimed loop's
 * (worker_loop_untimed(): 1 in o->sample pairs translated by the device),
 * on a lazy one-CPU domain; the parts are parts_one(). *lazy_ns: the
 * pair's CPU time, and *lazy_excl_ns the same with the device's
 * translations taken out; *parts_ns: an iteration of the parts.
 */
#define PAIRED_SLICE 4096

static int measure_paired(const struct opts *base, double *lazy_ns,
			  double *lazy_excl_ns, double *parts_ns)
{
	struct opts o = *base;
	struct iopt_iova *iova;
	struct iopt_pgtable *pt;
	struct iopt_physmem *pm;
	struct worker w;
	struct rig r;
	uint64_t lazy_cpu = 0, dev = 0, parts_cpu = 0, n = 0, k = 0;
	uint64_t end, mask = ~0ull, pa = 1ull << 32, iova_out;
	long next_sample = 0, i = 0;
	int ret;

	o.threads = 1;
	o.policy = IOPT_INVAL_LAZY;
	ret = rig_up(&r, &o);
	if (ret) {
		rig_down(&r);
		return ret;
	}
	memset(&w, 0, sizeof(w));
	w.o = &o;
	w.r = &r;
	parts_up(&pm, &iova, &pt);
	if (o.pin)
		bench_pin(0);
	end = bench_now_ns() + (uint64_t)(o.seconds * 1e9);
	while (bench_now_ns() < end) {
		uint64_t c0 = thread_cpu_ns(), c1, c2;

		for (int j = 0; j < PAIRED_SLICE; j++, i++) {
			if (iopt_dma_map(r.d, pa, PAGE, o.prot, mask, 0, &iova_out)) {
				w.errors++;
				continue;
			}
			if (o.sample && i == next_sample) {
				uint64_t t0 = bench_now_ns();

				next_sample += o.sample;
				device_sample(&w, iova_out, pa);
				dev += bench_now_ns() - t0;
			}
			if (iopt_dma_unmap(r.d, iova_out, PAGE, 0))
				w.errors++;
		}
		c1 = thread_cpu_ns();
		for (int j = 0; j < PAIRED_SLICE; j++, k++)
			parts_one(iova, pt, k, o.prot);
		c2 = thread_cpu_ns();
		lazy_cpu += c1 - c0;
		parts_cpu += c2 - c1;
		n += PAIRED_SLICE;
	}
	*lazy_ns = (double)lazy_cpu / (double)n;
	*lazy_excl_ns = (double)(lazy_cpu - (dev < lazy_cpu ? dev : 0)) / (double)n;
	*parts_ns = (double)parts_cpu / (double)n;
	iopt_pgtable_free(pt);
	iopt_iova_destroy(iova);
	iopt_physmem_destroy(pm);
	rig_down(&r);
	if (w.errors || w.dev_faults) {
		fprintf(stderr, "iopt-bench dma: paired run: %llu errors, %llu device faults\n",
			(unsigned long long)w.errors, (unsigned long long)w.dev_faults);
		return -EIO;
	}
	return 0;
}

/* ---- --report ------------------------------------------------------------ */

#define NVAR 10

/* Each round's ratio, then the closing parenthesis of the line. */
static void print_rounds(const double *r)
{
	for (int k = 0; k < REPS; k++)
		printf(" %.2f", r[k]);
	printf(")\n");
}

/* v3: the comparisons docs/dma.md quotes, side by side. */
static int report(const struct opts *base)
{
	struct opts v[NVAR];
	const char *names[NVAR] = { "lazy_1t", "lazy_2t", "strict_msi_1t",
				    "strict_cons_1t", "strict_msi_locked_1t",
				    "lazy_1t_untimed", "lazy_2t_untimed",
				    "lazy_1t_untimed_nodev", "lazy_2t_untimed_nodev",
				    "strict_cons_2t" };
	struct result r[NVAR][REPS];
	struct parts pr[REPS];
	double pl[REPS], ple[REPS], pp[REPS], prat[REPS], prat_in[REPS];
	double l0 = load1();

	for (int i = 0; i < NVAR; i++) {
		v[i] = *base;
		v[i].threads = 1;
		v[i].policy = IOPT_INVAL_STRICT;
		v[i].cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKFREE;
		v[i].sync = IOPT_SMMUV3_DRV_SYNC_MSI;
	}
	v[0].policy = v[1].policy = IOPT_INVAL_LAZY;
	v[1].threads = 2;
	v[3].sync = IOPT_SMMUV3_DRV_SYNC_CONS;
	v[4].cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKED;
	for (int i = 5; i < 9; i++) {
		v[i].policy = IOPT_INVAL_LAZY;
		v[i].lat = false;
		v[i].threads = i == 6 || i == 8 ? 2 : 1;
		v[i].sample = i >= 7 ? 0 : base->sample;
	}
	v[9].sync = IOPT_SMMUV3_DRV_SYNC_CONS;
	v[9].threads = 2;
	for (int k = 0; k < REPS; k++) {
		measure_parts(base, &pr[k]);
		if (measure_paired(base, &pl[k], &ple[k], &pp[k]))
			return 1;
		prat[k] = ple[k] / pp[k];
		prat_in[k] = pl[k] / pp[k];
		for (int i = 0; i < NVAR; i++)
			if (run_variant(&v[i], &r[i][k]))
				return 1;
	}
	double med[NVAR][6], a[REPS], b[REPS], c[REPS], d[REPS], e[REPS];
	double x[REPS];

	for (int i = 0; i < NVAR; i++) {
		for (int k = 0; k < REPS; k++) {
			a[k] = r[i][k].map_ns;
			b[k] = r[i][k].unmap_ns;
			c[k] = r[i][k].ops_per_sec;
			d[k] = r[i][k].map_ns + r[i][k].unmap_ns;
			e[k] = r[i][k].ops_per_cpu_sec;
			x[k] = r[i][k].ops_per_cpu_sec_excl_dev;
		}
		med[i][0] = bench_median(a, REPS);
		med[i][1] = bench_median(b, REPS);
		med[i][2] = bench_median(c, REPS);
		med[i][3] = bench_median(d, REPS);
		med[i][4] = bench_median(e, REPS);
		med[i][5] = bench_median(x, REPS);
		/* The median run (by ops/s) as the variant's line. */
		for (int k = 0; k < REPS; k++)
			if (r[i][k].ops_per_sec == med[i][2]) {
				print_result(&v[i], &r[i][k]);
				break;
			}
	}
	for (int k = 0; k < REPS; k++) {
		a[k] = pr[k].iova_pair_ns;
		b[k] = pr[k].pt_map_ns;
		c[k] = pr[k].pt_unmap_ns;
		d[k] = a[k] + b[k] + c[k];
	}
	double pa = bench_median(a, REPS), pm = bench_median(b, REPS);
	double pu = bench_median(c, REPS), ps = bench_median(d, REPS);
	double ratio = med[0][3] / ps, scale = med[1][2] / med[0][2];
	for (int k = 0; k < REPS; k++) {
		a[k] = pr[k].bulk_ns;
		b[k] = pr[k].loop_ns;
		c[k] = pr[k].loop_cpu_ns;
	}
	double pbulk = bench_median(a, REPS), ploop = bench_median(b, REPS);
	double ploop_cpu = bench_median(c, REPS);
	/* CPU time of one untimed lazy pair (1 thread) against the parts'
	 * loop in CPU time: what the machine's other load cannot inflate. */
	double pair_cpu = 1e9 / med[5][4], ratio_cpu = pair_cpu / ploop_cpu;
	/* The same with the device's sampled translations taken out of the
	 * thread's CPU time (the SMMU's work on hardware); each round's ratio
	 * against that round's parts, and their median. */
	double rr[REPS];

	for (int k = 0; k < REPS; k++)
		rr[k] = 1e9 / r[5][k].ops_per_cpu_sec_excl_dev / pr[k].loop_cpu_ns;
	double pair_cpu_excl = 1e9 / med[5][5];
	double ratio_cpu_excl = bench_median(rr, REPS);
	/* Paired slices (measure_paired()). */
	double paired_ratio = bench_median(prat, REPS);
	double paired_ratio_in = bench_median(prat_in, REPS);
	double paired_lazy = bench_median(ple, REPS);
	double paired_lazy_in = bench_median(pl, REPS);
	double paired_parts = bench_median(pp, REPS);
	/* The same without device sampling (the device's translations run
	 * on the mapping thread here, as the model is driven by it). */
	double pair_cpu_nodev = 1e9 / med[7][4];
	double ratio_cpu_nodev = pair_cpu_nodev / ploop_cpu;
	double pair_untimed = 1e9 / med[5][2];
	double ratio_bulk = pair_untimed / pbulk, ratio_loop = pair_untimed / ploop;
	double scale_bulk = med[6][2] / med[5][2];
	double scale_nodev = med[8][2] / med[7][2];
	/* Per CPU-second: 1.0 means the second thread's work cost what the
	 * first's did (nothing serialised); the wall-clock scaling is then
	 * bounded by the CPU time the machine gave the threads. */
	double eff = med[6][4] / med[5][4], eff_nodev = med[8][4] / med[7][4];
	uint64_t timeouts = 0;

	for (int i = 2; i < NVAR; i++)
		if (v[i].policy == IOPT_INVAL_STRICT)
			for (int k = 0; k < REPS; k++)
				timeouts += r[i][k].sync_timeouts;
	if (base->json) {
		printf("{\"suite\":\"dma\",\"case\":\"report\",\"smmu\":\"v3\",\"reps\":%d,"
		       "\"iova_pair_ns\":%.1f,\"pt_map_ns\":%.1f,\"pt_unmap_ns\":%.1f,"
		       "\"parts_ns\":%.1f,\"lazy_pair_ns\":%.1f,\"lazy_vs_parts\":%.2f,"
		       "\"lazy_2t_vs_1t\":%.2f,\"parts_untimed_ns\":%.1f,"
		       "\"parts_loop_ns\":%.1f,"
		       "\"lazy_pair_untimed_ns\":%.1f,\"lazy_vs_parts_untimed\":%.2f,"
		       "\"lazy_vs_parts_loop\":%.2f,\"lazy_pair_cpu_ns\":%.1f,"
		       "\"parts_loop_cpu_ns\":%.1f,\"lazy_vs_parts_cpu\":%.2f,"
		       "\"lazy_pair_cpu_nodev_ns\":%.1f,\"lazy_vs_parts_cpu_nodev\":%.2f,"
		       "\"lazy_pair_cpu_excl_dev_ns\":%.1f,\"lazy_vs_parts_cpu_excl_dev\":%.2f,"
		       "\"paired_lazy_cpu_ns\":%.1f,\"paired_lazy_cpu_excl_dev_ns\":%.1f,"
		       "\"paired_parts_cpu_ns\":%.1f,\"paired_lazy_vs_parts\":%.2f,"
		       "\"paired_lazy_vs_parts_dev_in\":%.2f,"
		       "\"lazy_2t_vs_1t_untimed\":%.2f,\"lazy_2t_vs_1t_nodev\":%.2f,"
		       "\"lazy_2t_cpu_efficiency\":%.2f,\"lazy_2t_cpu_efficiency_nodev\":%.2f,"
		       "\"strict_timeouts\":%llu,"
		       "\"load1_before\":%.2f,\"load1_after\":%.2f,\"cpus\":%u}\n",
		       REPS, pa, pm, pu, ps, med[0][3], ratio, scale, pbulk, ploop,
		       pair_untimed, ratio_bulk, ratio_loop, pair_cpu, ploop_cpu, ratio_cpu,
		       pair_cpu_nodev, ratio_cpu_nodev, pair_cpu_excl, ratio_cpu_excl,
		       paired_lazy_in, paired_lazy, paired_parts, paired_ratio,
		       paired_ratio_in, scale_bulk, scale_nodev,
		       eff, eff_nodev,
		       (unsigned long long)timeouts, l0, load1(), bench_ncpus());
	} else {
		printf("\nmedians of %d interleaved runs (%s each):\n", REPS,
		       base->ops ? "--ops" : "--seconds");
		for (int i = 0; i < NVAR; i++)
			printf("  %-24s map %.1f + unmap %.1f ns, %.0f ops/s, %.0f ops/cpu-s\n",
			       names[i], med[i][0], med[i][1], med[i][2], med[i][4]);
		printf("  parts (each timed): cached IOVA pair %.1f + one-page map %.1f + "
		       "one-page unmap %.1f = %.1f ns\n", pa, pm, pu, ps);
		printf("  lazy map+unmap / parts, both timed per call = %.2fx\n",
		       ratio);
		printf("  untimed: lazy pair %.1f ns; parts in one loop %.1f ns (%.2fx), "
		       "parts in loops of 256 each %.1f ns (%.2fx)\n", pair_untimed,
		       ploop, ratio_loop, pbulk, ratio_bulk);
		printf("  paired slices of %d, thread CPU time, the device's sampled "
		       "translations taken out: lazy pair %.1f ns / parts %.1f ns = %.2fx "
		       "(rounds:", PAIRED_SLICE, paired_lazy, paired_parts,
		       paired_ratio);
		print_rounds(prat);
		printf("  the same with the translations in: lazy pair %.1f ns: %.2fx\n",
		       paired_lazy_in, paired_ratio_in);
		printf("  separate runs, thread CPU time (untimed): lazy pair %.1f ns "
		       "(%.1f without the translations), parts in one loop %.1f ns: %.2fx "
		       "(%.2fx; rounds:", pair_cpu, pair_cpu_excl, ploop_cpu, ratio_cpu,
		       ratio_cpu_excl);
		print_rounds(rr);
		printf("  the same without device sampling: lazy pair %.1f ns: %.2fx\n",
		       pair_cpu_nodev, ratio_cpu_nodev);
		printf("  lazy 2 threads / 1 thread = %.2fx timed, %.2fx untimed, %.2fx "
		       "untimed without device sampling\n", scale,
		       scale_bulk, scale_nodev);
		printf("  2 threads' ops per CPU-second / 1 thread's = %.2f (%.2f without "
		       "device sampling)\n", eff, eff_nodev);
		printf("  strict sync timeouts (msi, cons, locked, cons 2t): %llu\n",
		       (unsigned long long)timeouts);
		printf("  load average %.2f before, %.2f after, %u CPUs\n", l0, load1(),
		       bench_ncpus());
	}
	return 0;
}

#define NVAR2 6

/* v2 ("mmu-500" model): lazy 1 and 2 threads, strict with the three sync
 * serialisations at --threads (32 unless given more), and bank at 1. */
static int report_v2(const struct opts *base)
{
	struct opts v[NVAR2];
	const char *names[NVAR2] = { "lazy_1t", "lazy_2t", "strict_bank_1t",
				     "strict_none_Nt", "strict_bank_Nt",
				     "strict_global_Nt" };
	struct result r[NVAR2][REPS];
	unsigned nt = base->threads >= 32 ? base->threads : 32;
	double l0 = load1();

	for (int i = 0; i < NVAR2; i++) {
		v[i] = *base;
		v[i].v2 = true;
		v[i].threads = i >= 3 ? nt : 1;
		v[i].policy = i < 2 ? IOPT_INVAL_LAZY : IOPT_INVAL_STRICT;
		v[i].v2_sync = IOPT_SMMUV2_DRV_SYNC_BANK;
	}
	v[1].threads = 2;
	v[3].v2_sync = IOPT_SMMUV2_DRV_SYNC_NONE;
	v[5].v2_sync = IOPT_SMMUV2_DRV_SYNC_GLOBAL;
	for (int k = 0; k < REPS; k++)
		for (int i = 0; i < NVAR2; i++)
			if (run_variant(&v[i], &r[i][k]))
				return 1;
	double a[REPS];

	if (!base->json)
		printf("\nmedians of %d interleaved runs (%s each):\n", REPS,
		       base->ops ? "--ops" : "--seconds");
	for (int i = 0; i < NVAR2; i++) {
		uint64_t to = 0;

		for (int k = 0; k < REPS; k++) {
			a[k] = r[i][k].ops_per_sec;
			to += r[i][k].sync_timeouts;
		}
		double m = bench_median(a, REPS);

		for (int k = 0; k < REPS; k++)
			if (r[i][k].ops_per_sec == m) {
				print_result(&v[i], &r[i][k]);
				break;
			}
		if (!base->json)
			printf("  %-18s %.0f ops/s; sync timeouts in %d runs: %llu\n",
			       names[i], m, REPS, (unsigned long long)to);
	}
	if (!base->json)
		printf("  load average %.2f before, %.2f after, %u CPUs\n", l0,
		       load1(), bench_ncpus());
	return 0;
}

static const char *const dir_names[] = { "bidir", "to", "from", NULL };
static const unsigned dir_prot[] = {
	IOPT_READ | IOPT_WRITE, IOPT_READ /* to the device: it reads */,
	IOPT_WRITE,
};
static const char *const smmu_names[] = { "v3", "v2", "none", NULL };
static const char *const cmdq_names[] = { "lockfree", "locked", NULL };
static const enum iopt_smmuv3_drv_cmdq cmdq_of[] = {
	IOPT_SMMUV3_DRV_CMDQ_LOCKFREE, IOPT_SMMUV3_DRV_CMDQ_LOCKED,
};
static const char *const sync_names[] = { "msi", "cons", NULL };
static const enum iopt_smmuv3_drv_sync sync_of[] = {
	IOPT_SMMUV3_DRV_SYNC_MSI, IOPT_SMMUV3_DRV_SYNC_CONS,
};
static const char *const clock_names[] = { "virtual", "runner", NULL };

int bench_dma_main(int argc, char **argv)
{
	struct opts o = {
		.threads = 1, .seconds = 1, .granule = 1,
		.policy = IOPT_INVAL_LAZY, .sample = 64, .dma_bits = 64,
		.lat = true, .v2_sync = IOPT_SMMUV2_DRV_SYNC_BANK,
	};
	unsigned dir = 0, policy = o.policy, smmu = 0, cmdq = 0, sync = 0;
	unsigned v2_sync = o.v2_sync, clock = 0;
	uint64_t ops = 0, parts_ops = 0;
	bool rep = false, no_lat = false;
	const struct bench_opt opts[] = {
		{ "threads", BENCH_UINT, &o.threads, "N", "threads, each its own "
		  "CPU (1)", .min = 1, .max = 1024 },
		{ "seconds", BENCH_REAL, &o.seconds, "S", "run time per variant (1)",
		  .lo = 0.001, .hi = 300 },
		{ "ops", BENCH_U64, &ops, "N", "map+unmap pairs per thread instead "
		  "of --seconds\n(0: --seconds)", .max = 1ull << 40 },
		{ "granule", BENCH_UINT, &o.granule, "N", "pages per mapping (1)",
		  .min = 1, .max = 1024 },
		{ "trans-ns", BENCH_U64, &o.trans_ns, "N", "delay between map and "
		  "unmap (0)", .max = 10000000 },
		{ "dir", BENCH_CHOICE, &dir, .choices = dir_names,
		  .help = "DMA direction: device read+write, read, write" },
		{ "policy", BENCH_CHOICE, &policy, .choices = pol_name,
		  .help = "invalidation policy (lazy)" },
		{ "smmu", BENCH_CHOICE, &smmu, .choices = smmu_names,
		  .help = "SMMUv3 driver, or SMMUv2 (\"mmu-500\" model), or\n"
			  "none: no IOMMU, the DMA address is the physical one\n"
			  "(IOPT_DMA_DIRECT, dma-direct; past the mask: -EIO) (v3)" },
		{ "cmdq", BENCH_CHOICE, &cmdq, .choices = cmdq_names,
		  .help = "the SMMUv3 driver's command queue (lockfree)" },
		{ "sync", BENCH_CHOICE, &sync, .choices = sync_names,
		  .help = "CMD_SYNC completion (msi)" },
		{ "no-sev", BENCH_FLAG, &o.no_sev, .help = "SMMUv3 model without "
		  "IDR0.SEV: CONS waits poll\n(with SEV one waiter polls, the "
		  "others wait for it)" },
		{ "v2-sync", BENCH_CHOICE, &v2_sync, .choices = v2_sync_name,
		  .help = "SMMUv2 TLBSYNC serialisation (bank)" },
		{ "lock", BENCH_CHOICE, &o.lock, .choices = lock_name,
		  .help = "the drivers' spinlocks: SMMUv2 sync and bank locks,\n"
			  "SMMUv3 locked queue (default: test-and-test-and-set;\n"
			  "ticket: Linux arm64 to 4.18, mcs: from 4.19)" },
		{ "clock", BENCH_CHOICE, &clock, .choices = clock_names,
		  .help = "driver's virtual clock or the free-running model\n"
			  "(with --sim N: the simulation's clock, always)" },
		{ "sync-timeout-us", BENCH_U64, &o.sync_timeout_us, "N", "the "
		  "driver's sync timeout in model time (0: the\ndriver's default, "
		  "about 1 s)", .max = 100000000 },
		{ "sample", BENCH_UINT, &o.sample, "N", "the device translates "
		  "every N-th mapping (64; 0 none)", .max = 1u << 30 },
		{ "dma-bits", BENCH_UINT, &o.dma_bits, "N", "DMA mask bits (64)",
		  .min = 32, .max = 64 },
		{ "no-lat", BENCH_FLAG, &no_lat, .help = "do not time each call "
		  "(ops/s only)" },
		{ "pin", BENCH_FLAG, &o.pin, .help = "pin thread i to CPU i (off: a "
		  "shared machine)" },
		{ "fq-entries", BENCH_UINT, &o.fq_entries, "N", "flush ring entries "
		  "(0: 256 lazy, 32768 single)", .max = 1u << 24 },
		{ "fq-timeout-ms", BENCH_U64, &o.fq_timeout_ms, "N", "flush queue "
		  "timeout (0: 10 lazy, 1000 single)", .max = 3600000 },
		{ "fq-timer", BENCH_FLAG, &o.fq_timer, .help = "a thread flushes "
		  "queues whose oldest entry is\n--fq-timeout-ms old, as the "
		  "kernel's flush-queue timer\n(default: only full rings flush; "
		  "the precise clock)" },
		{ "domain-lock", BENCH_FLAG, &o.domain_lock, .help = "one lock "
		  "around each map and unmap, the strict\nunmap's invalidation "
		  "and sync inside it (pgtbl_lock,\nLinux to 4.12)" },
		{ "domain-lock-kind", BENCH_CHOICE, &o.domain_lock_kind,
		  .choices = lock_name, .help = "--domain-lock's lock (default: "
		  "ticket)" },
		{ "rcache-flush", BENCH_CHOICE, &o.rcache_flush,
		  .choices = rcache_flush_name, .help = "when a failed IOVA try "
		  "flushes every CPU's cache:\nbefore the last try (Linux from "
		  "4.15), never, or\nafter every failed try (to 4.14) "
		  "(last-retry)" },
		{ "pci", BENCH_FLAG, &o.pci, .help = "a PCI device: IOVAs below "
		  "4 GiB first" },
		{ "iova-start", BENCH_SIZE, &o.iova_start, "ADDR", "first IOVA, a "
		  "multiple of 4K (0: 4K); e.g.\n0xffff0000 leaves 16 pages "
		  "below 4 GiB", .max = 1ull << 47 },
		{ "cpus", BENCH_UINT, &o.cpus, "N", "the domain's CPUs (IOVA caches, "
		  "flush rings), at least\n--threads (0: --threads); thread i "
		  "is CPU i", .max = 4096 },
		{ "hold", BENCH_UINT, &o.hold, "N", "N one-page mappings held for "
		  "the whole run (0);\nwith --pci and --iova-start, e.g. a full "
		  "32-bit space", .max = 1u << 20 },
		{ "viommu-trap-ns", BENCH_U64, &o.trap_ns, "N", "every "
		  "invalidation traps to a hypervisor,\none CPU at a time, for N "
		  "ns (s390 RPCIT) (0)", .max = IOPT_DMA_TRAP_NS_MAX },
		{ "noncoherent", BENCH_FLAG, &o.noncoherent, .help = "table walks "
		  "do not snoop CPU caches: the page\ntable cleans each line it "
		  "writes" },
		{ "fq-fine-clock", BENCH_FLAG, &o.fine_clock, .help = "flush queues "
		  "read the precise host clock (default:\na coarse clock, as the "
		  "kernel's jiffies)" },
		{ "parts-ops", BENCH_U64, &parts_ops, "N", "run the parts' loop of "
		  "--report N times, untimed\n(for an instruction count), and "
		  "nothing else", .min = 1, .max = 1ull << 40 },
		{ "report", BENCH_FLAG, &rep, .help = "the side-by-side comparison "
		  "of docs/dma.md\n(with --smmu v2: lazy 1/2 threads, strict none/"
		  "bank/\nglobal at --threads, at least 32)" },
		{ "json", BENCH_FLAG, &o.json, .help = "one JSON object per line" },
		{ 0 },
	};
	const struct bench_cli cli = {
		.suite = "dma",
		.about = "dma_map_benchmark: each thread loops map, delay, unmap "
			 "over its own buffer\nthrough IOVA + page table + driver + "
			 "policy (docs/dma.md); one line per\nrun, or the --report "
			 "variants (no --case).",
		.opts = opts,
	};
	int status;

	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	o.ops = (long)ops;
	o.dir = dir_names[dir];
	o.prot = dir_prot[dir];
	o.policy = (enum iopt_inval)policy;
	o.v2 = smmu == 1;
	o.none = smmu == 2;
	o.cmdq = cmdq_of[cmdq];
	o.sync = sync_of[sync];
	o.v2_sync = (enum iopt_smmuv2_drv_sync)v2_sync;
	o.runner = clock == 1;
	o.lat = !no_lat;
	/* One model per simulation run, attached for good: one variant,
	 * on the simulation's clock. */
	if (bench_sim() && (rep || o.runner)) {
		fprintf(stderr, "iopt-bench dma: --report and --clock runner are "
			"not available with --sim\n");
		return 2;
	}
	/* The report's variants are the IOMMU's. */
	if (rep && o.none) {
		fprintf(stderr, "iopt-bench dma: --report is not available with "
			"--smmu none\n");
		return 2;
	}
	if (parts_ops)
		return parts_only(&o, (long)parts_ops);
	if (rep)
		return o.v2 ? report_v2(&o) : report(&o);
	struct result r;

	if (run_variant(&o, &r))
		return 1;
	print_result(&o, &r);
	return 0;
}
