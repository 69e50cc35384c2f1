/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench smmu: the SMMUv3 model's own speed (host ns) and its modelled
 * latency (cycles).
 *
 * translate_hit     one mapped page translated again and again (TLB hit)
 * translate_walk    the same with the TLB off: a full 4-level stage 1 walk
 * translate_random  random pages over --footprint bytes (default 64 MiB)
 * cmdq              TLBI_NH_VA + CMD_SYNC pairs: commands per simulated us
 *                   (1 cycle = 1 ns)
 * mutex_pair        host ns of an uncontended pthread mutex lock+unlock
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmu.h>

#include "bench.h"

#define MEM_BASE 0x80000000ull
#define STRTAB (MEM_BASE)
#define CMDQ (MEM_BASE + 0x10000)
#define EVTQ (MEM_BASE + 0x20000)
#define CDTAB (MEM_BASE + 0x30000)

static bool json;

/* Timed repetitions: host figures are their medians. */
#define REPS 5

struct rig {
	struct iopt_physmem *pm;
	struct iopt_smmu *s;
	struct iopt_pgtable *pt;
	uint32_t prod;
	uint64_t cycle;
};

static void rig_init(struct rig *r, bool tlb, bool walk_cache)
{
	struct iopt_smmu_params p;
	struct iopt_smmu_mem mem;
	uint64_t pa, w[8];

	iopt_smmu_default_params(&p);
	p.tlb.enable = tlb;
	p.walk.enable = walk_cache;
	iopt_physmem_create(MEM_BASE, 256u << 20, &r->pm);
	iopt_physmem_alloc(r->pm, 1u << 20, &pa);
	iopt_smmu_physmem(r->pm, 100, &mem);	/* 100-cycle memory */
	iopt_smmu_create(&p, &mem, NULL, NULL, &r->s);
	iopt_smmu_mmio_write(r->s, 0x80, 8, STRTAB, 0);
	iopt_smmu_mmio_write(r->s, 0x88, 4, 4, 0);
	iopt_smmu_mmio_write(r->s, 0x90, 8, CMDQ | 10, 0);
	iopt_smmu_mmio_write(r->s, 0xa0, 8, EVTQ | 6, 0);
	iopt_smmu_mmio_write(r->s, 0x20, 4, 0xd, 0);
	struct iopt_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	iopt_alloc(&pc, &r->pt);
	struct iopt_cd cd;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = CDTAB };

	iopt_cd_from_pgtable(r->pt, 1, &cd);
	iopt_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(r->pm, CDTAB, 64), w, 64);
	iopt_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(r->pm, STRTAB, 64), w, 64);
	r->prod = 0;
	r->cycle = 0;
}

static void rig_fini(struct rig *r)
{
	iopt_free(r->pt);
	iopt_smmu_destroy(r->s);
	iopt_physmem_destroy(r->pm);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Translate n addresses from va_of(i); report host ns and cycles. */
static void run_xlate(const char *name, struct rig *r, long n,
		      uint64_t (*va_of)(long i, void *arg), void *arg,
		      double mutex_ns)
{
	uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)n);

	/* Touch the latency array first: its page faults are not the model's. */
	memset(lat, 0, sizeof(uint64_t) * (size_t)n);
	struct iopt_smmu_stats st0, st1;
	double sum = 0;

	/* Host time per translation: the median of REPS equal chunks, the
	 * same statistic as the mutex yardstick. */
	double chunk_ns[REPS];
	long i = 0;

	iopt_smmu_get_stats(r->s, &st0);
	for (int k = 0; k < REPS; k++) {
		long end = n * (k + 1) / REPS, start = i;
		uint64_t t0 = bench_now_ns();

		for (; i < end; i++) {
			struct iopt_smmu_txn t = { .sid = 0, .addr = va_of(i, arg),
						   .priv = true };
			struct iopt_smmu_resp resp;

			iopt_smmu_translate(r->s, &t, r->cycle, &resp);
			lat[i] = resp.ready - r->cycle;
			sum += (double)lat[i];
			r->cycle = resp.ready;
		}
		chunk_ns[k] = (double)(bench_now_ns() - t0) / (double)(end - start);
	}
	double host = bench_median(chunk_ns, REPS);

	iopt_smmu_get_stats(r->s, &st1);
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
		       (unsigned long long)walks, fetches, host / mutex_ns);
	else
		printf("%-23s %6.1f host ns  %6.1f cycles mean  p50 %4llu  p99 %4llu  "
		       "TLB hits %5.1f%%  walk cache hits %5.1f%%  %.2f fetches/walk  "
		       "%.1fx mutex pair\n", name, host,
		       sum / (double)n, (unsigned long long)lat[n / 2],
		       (unsigned long long)lat[n - 1 - n / 100], 100 * hit_rate,
		       100 * wc_rate, fetches, host / mutex_ns);
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

static void case_cmdq(void)
{
	struct rig r;
	const int pairs = 20000;

	rig_init(&r, true, true);
	uint64_t first = 0, last = 0, t0 = bench_now_ns();

	for (int i = 0; i < pairs; i++) {
		struct iopt_smmu_cmd c[2] = {
			{ .opcode = IOPT_CMD_TLBI_NH_VA, .asid = 1,
			  .addr = (uint64_t)i << 12 },
			{ .opcode = IOPT_CMD_SYNC },
		};

		for (int k = 0; k < 2; k++) {
			uint64_t w[2];

			iopt_smmu_cmd_encode(&c[k], w);
			memcpy(iopt_physmem_ptr(r.pm, CMDQ + (r.prod & 1023) * 16ull, 16),
			       w, 16);
			r.prod = (r.prod + 1) & 2047;
		}
		if (i % 256 == 255 || i == pairs - 1) {
			iopt_smmu_mmio_write(r.s, 0x98, 4, r.prod, r.cycle);
			uint64_t next;

			while ((next = iopt_smmu_next_event(r.s)) != UINT64_MAX) {
				if (!first)
					first = next;
				r.cycle = next;
				iopt_smmu_run_until(r.s, next);
			}
			last = r.cycle;
		}
	}
	double host = (double)(bench_now_ns() - t0) / (2.0 * pairs);
	double per_us = 2.0 * pairs / ((double)(last - first + 1) / 1000.0);

	struct iopt_smmu_stats st;

	iopt_smmu_get_stats(r.s, &st);
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

int bench_smmu_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, 0, 'j' },
		{ "footprint", required_argument, 0, 'f' },
		{ 0, 0, 0, 0 },
	};
	uint64_t footprint = 64u << 20;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 'f') {
			if (!bench_parse_size(optarg, &footprint) || footprint < 4096)
				goto bad;
		} else {
			goto bad;
		}
	}
	double mutex_ns = case_mutex();
	struct rig r;

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
		rig_init(&r, one[i].tlb, one[i].wc);
		iopt_map_pages(r.pt, 0x40000000, 0x7000000000ull, 4096, 1, IOPT_READ,
			       NULL);
		run_xlate(one[i].name, &r, one[i].n, same_va, NULL, mutex_ns);
		rig_fini(&r);
	}
	/* Random pages over the footprint, with and without walk caches. */
	for (int wc = 1; wc >= 0; wc--) {
		struct rnd x = { 0x9e3779b97f4a7c15ull, footprint / 4096 };

		rig_init(&r, true, wc);
		iopt_map_pages(r.pt, 0x100000000ull, 0x100000000ull, 4096, x.pages,
			       IOPT_READ, NULL);
		run_xlate(wc ? "translate_random" : "translate_random_nowc", &r,
			  500000, rnd_va, &x, mutex_ns);
		rig_fini(&r);
	}
	case_cmdq();
	return 0;
bad:
	fprintf(stderr, "usage: iopt-bench smmu [--json] [--footprint BYTES]\n");
	return 2;
}
