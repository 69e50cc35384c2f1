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
#include "bench_rig.h"

#define MEM_BASE	BENCH_RIG_MEM_BASE
#define MEM_SIZE	BENCH_RIG_MEM_SIZE
#define SID		BENCH_RIG_SID
#define PAGE		BENCH_RIG_PAGE
#define REPS		5

struct opts {
	unsigned threads;
	double seconds;
	long ops;		/* per thread; 0: run for seconds */
	unsigned granule;	/* pages per mapping */
	uint64_t trans_ns;
	unsigned prot;
	const char *dir;
	struct bench_rig_opts rig;	/* SMMU, driver, DMA domain */
	unsigned sample;	/* translate every n-th mapping; 0: none */
	bool lat;		/* time each map and unmap */
	bool pin;		/* pin thread i to CPU i */
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

#define pol_name bench_rig_policy_name
#define v2_sync_name bench_rig_v2_sync_name
#define lock_name bench_rig_lock_name
#define rcache_flush_name bench_rig_rcache_flush_name

struct worker {
	const struct opts *o;
	struct bench_rig *r;
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
	uint64_t mask = o->rig.dma_bits >= 64 ? ~0ull : (1ull << o->rig.dma_bits) - 1;

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
	struct bench_rig r;
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
	ret = bench_rig_up(&r, &o->rig, o->threads);
	if (ret) {
		fprintf(stderr, "iopt-bench dma: setup failed: %s\n", strerror(-ret));
		bench_rig_down(&r);
		free(w);
		return ret;
	}
	uint64_t restarts0 = bench_rig_sync_restarts(&r);

	bench_rig_drv_stats(&r, &s0);
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
	bench_rig_drv_stats(&r, &s1);
	res->sync_restarts = bench_rig_sync_restarts(&r) - restarts0;
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
	bench_rig_down(&r);
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
		       "\"rcache_flush\":\"%s\",\"pci\":%s,\"iova_start\":%llu,\"iova_end\":%llu,"
		       "\"viommu_trap_ns\":%llu,\"viommu_trap_page_ns\":%llu,\"viommu_trap_map\":%s,\"walk\":\"%s\",\"fq_entries\":%u,"
		       "\"fq_timeout_ms\":%llu,\"fq_timer\":%s,\"hold\":%u,\"cpus\":%u,"
		       "\"iova_walk\":%s,\"walk_node_ns\":%u,\"load1\":%.2f}\n",
		       o->rig.none ? "none" : o->rig.v2 ? "v2" : "v3",
		       o->rig.v2 ? v2_sync_name[o->rig.v2_sync] : "",
		       lock_name[o->rig.lock], pol_name[o->rig.policy], o->threads,
		       o->rig.cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED ? "locked" : "lockfree",
		       o->rig.sync == IOPT_SMMUV3_DRV_SYNC_CONS ? "cons" : "msi",
		       o->granule, (unsigned long long)o->trans_ns, o->dir,
		       bench_sim() ? "sim" : o->rig.runner ? "runner" : "virtual",
		       r->map_ns, r->unmap_ns, r->map_sd, r->unmap_sd, r->map_max,
		       r->unmap_max, (unsigned long long)o->rig.sync_timeout_us,
		       r->ops_per_sec, r->ops_per_cpu_sec,
		       r->ops_per_cpu_sec_excl_dev, o->sample, o->rig.no_sev || o->rig.v2 ? "false" : "true",
		       (unsigned long long)r->ops, (unsigned long long)r->commands,
		       (unsigned long long)r->syncs, (unsigned long long)r->flush_alls,
		       (unsigned long long)r->sync_timeouts,
		       (unsigned long long)r->sync_restarts,
		       (unsigned long long)r->cas_retries,
		       (unsigned long long)r->dev_faults, (unsigned long long)r->errors,
		       o->lat ? "true" : "false",
		       o->rig.domain_lock ? lock_name[o->rig.domain_lock_kind] : "off",
		       rcache_flush_name[o->rig.rcache_flush], o->rig.pci ? "true" : "false",
		       (unsigned long long)o->rig.iova_start,
		       (unsigned long long)o->rig.iova_end,
		       (unsigned long long)o->rig.trap_ns,
		       (unsigned long long)o->rig.trap_page_ns,
		       o->rig.trap_map ? "true" : "false",
		       bench_rig_walk_name(&o->rig), o->rig.fq_entries,
		       (unsigned long long)o->rig.fq_timeout_ms,
		       o->rig.fq_timer ? "true" : "false", o->rig.hold,
		       o->rig.cpus > o->threads ? o->rig.cpus : o->threads,
		       o->rig.iova_walk ? "true" : "false", o->rig.walk_node_ns, load1());
	} else {
		if (o->rig.none)
			printf("none      ");
		else if (o->rig.v2)
			printf("v2/%-6s ", v2_sync_name[o->rig.v2_sync]);
		printf("%-7s %2u thr %-8s %-4s  map %8.1f ns (sd %8.1f)  unmap %8.1f ns "
		       "(sd %8.1f)  %10.0f ops/s  cmds %llu syncs %llu flush_alls %llu "
		       "timeouts %llu cas_retries %llu dev_faults %llu errors %llu\n",
		       pol_name[o->rig.policy], o->threads,
		       o->rig.cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED ? "locked" : "lockfree",
		       o->rig.sync == IOPT_SMMUV3_DRV_SYNC_CONS ? "cons" : "msi",
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
	struct bench_rig r;
	uint64_t lazy_cpu = 0, dev = 0, parts_cpu = 0, n = 0, k = 0;
	uint64_t end, mask = ~0ull, pa = 1ull << 32, iova_out;
	long next_sample = 0, i = 0;
	int ret;

	o.threads = 1;
	o.rig.policy = IOPT_INVAL_LAZY;
	o.rig.hold = 0;
	ret = bench_rig_up(&r, &o.rig, o.threads);
	if (ret) {
		bench_rig_down(&r);
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
	bench_rig_down(&r);
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
		v[i].rig.policy = IOPT_INVAL_STRICT;
		v[i].rig.cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKFREE;
		v[i].rig.sync = IOPT_SMMUV3_DRV_SYNC_MSI;
	}
	v[0].rig.policy = v[1].rig.policy = IOPT_INVAL_LAZY;
	v[1].threads = 2;
	v[3].rig.sync = IOPT_SMMUV3_DRV_SYNC_CONS;
	v[4].rig.cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKED;
	for (int i = 5; i < 9; i++) {
		v[i].rig.policy = IOPT_INVAL_LAZY;
		v[i].lat = false;
		v[i].threads = i == 6 || i == 8 ? 2 : 1;
		v[i].sample = i >= 7 ? 0 : base->sample;
	}
	v[9].rig.sync = IOPT_SMMUV3_DRV_SYNC_CONS;
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
		if (v[i].rig.policy == IOPT_INVAL_STRICT)
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
		v[i].rig.v2 = true;
		v[i].threads = i >= 3 ? nt : 1;
		v[i].rig.policy = i < 2 ? IOPT_INVAL_LAZY : IOPT_INVAL_STRICT;
		v[i].rig.v2_sync = IOPT_SMMUV2_DRV_SYNC_BANK;
	}
	v[1].threads = 2;
	v[3].rig.v2_sync = IOPT_SMMUV2_DRV_SYNC_NONE;
	v[5].rig.v2_sync = IOPT_SMMUV2_DRV_SYNC_GLOBAL;
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
int bench_dma_main(int argc, char **argv)
{
	struct opts o = {
		.threads = 1, .seconds = 1, .granule = 1, .sample = 64,
		.lat = true,
	};
	unsigned dir = 0;
	uint64_t ops = 0, parts_ops = 0;
	bool rep = false, no_lat = false;
	struct bench_opt opts[BENCH_RIG_NOPTS + 16] = {
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
	};
	const struct bench_opt tail[] = {
		{ "sample", BENCH_UINT, &o.sample, "N", "the device translates "
		  "every N-th mapping (64; 0 none)", .max = 1u << 30 },
		{ "no-lat", BENCH_FLAG, &no_lat, .help = "do not time each call "
		  "(ops/s only)" },
		{ "pin", BENCH_FLAG, &o.pin, .help = "pin thread i to CPU i (off: a "
		  "shared machine)" },
		{ "parts-ops", BENCH_U64, &parts_ops, "N", "run the parts' loop of "
		  "--report N times, untimed\n(for an instruction count), and "
		  "nothing else", .min = 1, .max = 1ull << 40 },
		{ "report", BENCH_FLAG, &rep, .help = "the side-by-side comparison "
		  "of docs/dma.md\n(with --smmu v2: lazy 1/2 threads, strict none/"
		  "bank/\nglobal at --threads, at least 32)" },
		{ "json", BENCH_FLAG, &o.json, .help = "one JSON object per line" },
	};
	size_t n = 6;

	bench_rig_opts_default(&o.rig);
	n += bench_rig_opts(&o.rig, opts + n);
	memcpy(opts + n, tail, sizeof(tail));
	n += sizeof(tail) / sizeof(tail[0]);
	opts[n] = (struct bench_opt){ 0 };
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
	bench_rig_resolve(&o.rig);
	o.lat = !no_lat;
	/* One model per simulation run, attached for good: one variant,
	 * on the simulation's clock. */
	if (bench_sim() && (rep || o.rig.runner)) {
		fprintf(stderr, "iopt-bench dma: --report and --clock runner are "
			"not available with --sim\n");
		return 2;
	}
	/* The report's variants are the IOMMU's. */
	if (rep && o.rig.none) {
		fprintf(stderr, "iopt-bench dma: --report is not available with "
			"--smmu none\n");
		return 2;
	}
	if (parts_ops)
		return parts_only(&o, (long)parts_ops);
	if (rep)
		return o.rig.v2 ? report_v2(&o) : report(&o);
	struct result r;

	if (run_variant(&o, &r))
		return 1;
	print_result(&o, &r);
	return 0;
}
