/* SPDX-License-Identifier: MIT */
/*
 * The testbed the dma and workload suites run on (the rig): an SMMU model
 * and its driver (SMMUv3, or SMMUv2 with the "mmu-500" model), a DMA
 * domain on it, or with --smmu none a DMA domain without an IOMMU
 * (IOPT_DMA_DIRECT), built from the command line's rig options. Both
 * suites take the same options with the same names (bench_rig_opts()) and
 * print them under the same JSON keys (bench_rig_json()).
 */
#ifndef IOPT_BENCH_RIG_H
#define IOPT_BENCH_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iopgtable/dma.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/smmuv3_drv.h>

#include "bench.h"

#define BENCH_RIG_MEM_BASE	0x80000000ull
#define BENCH_RIG_MEM_SIZE	(256ull << 20)
#define BENCH_RIG_SID		1
#define BENCH_RIG_PAGE		4096ull

/* The rig's options. The bench_opt table of bench_rig_opts() writes the
 * choice indices (*_k); bench_rig_resolve() turns them into the fields
 * below them. */
struct bench_rig_opts {
	unsigned smmu_k, policy_k, cmdq_k, sync_k, v2_sync_k, v2_poll_k, clock_k;
	enum iopt_inval policy;
	enum iopt_smmuv3_drv_cmdq cmdq;
	enum iopt_smmuv3_drv_sync sync;
	bool v2;		/* --smmu v2: the SMMUv2 driver and model */
	bool none;		/* --smmu none: no IOMMU (IOPT_DMA_DIRECT) */
	enum iopt_smmuv2_drv_sync v2_sync;
	enum iopt_smmuv2_drv_sync_poll v2_poll;
	unsigned lock;		/* drivers' lock_kind (enum iopt_lock_kind) */
	bool runner;		/* free-running model clock */
	bool no_sev;		/* model without IDR0.SEV (CONS syncs poll) */
	unsigned dma_bits;
	bool fine_clock;	/* flush queues on the precise host clock */
	unsigned fq_entries;	/* 0: the policy's default */
	uint64_t sync_timeout_us;	/* driver's sync timeout; 0: its default */
	uint64_t v2_delay_cap_us;	/* SMMUv2 cfg.sync_delay_cap_us */
	bool v2_count_nested;		/* SMMUv2 cfg.count_nested */
	uint64_t fq_timeout_ms;	/* 0: the policy's default */
	bool fq_timer;		/* a thread flushes expired queues */
	bool domain_lock;	/* --domain-lock: pgtbl_lock (Linux to 4.12) */
	unsigned domain_lock_kind;	/* enum iopt_lock_kind */
	unsigned rcache_flush;	/* enum iopt_iova_flush */
	bool pci;		/* IOPT_DMA_DEV_PCI: below 4 GiB first */
	uint64_t iova_start;	/* bytes; 0: the domain's default */
	uint64_t iova_end;	/* bytes; 0: the domain's default */
	uint64_t trap_ns;	/* --viommu-trap-ns */
	uint64_t trap_page_ns;	/* --viommu-trap-page-ns */
	bool trap_map;		/* --viommu-trap-map */
	bool noncoherent;	/* table walks that do not snoop */
	bool unmap_sync_each;	/* IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH */
	unsigned hold;		/* pages mapped for the whole run */
	bool iova_walk;		/* IOPT_IOVA_SEARCH_RBTREE_WALK */
	unsigned walk_node_ns;	/* its busy ns per node visited */
	unsigned cpus;		/* the domain's CPUs; 0: the suite's threads */
};

/* The defaults both suites start from: SMMUv3, lazy, lock-free queue,
 * MSI syncs, v2 bank syncs with the backoff poll, 64-bit mask. */
void bench_rig_opts_default(struct bench_rig_opts *o);

/* The rig's options into opts[0 ..] (at most BENCH_RIG_NOPTS entries, no
 * terminator); returns how many. Values go to *o. */
#define BENCH_RIG_NOPTS 32
size_t bench_rig_opts(struct bench_rig_opts *o, struct bench_opt *opts);
/* After parsing: the choice indices into the enums. */
void bench_rig_resolve(struct bench_rig_opts *o);

/* Names for printing, indexed by the enums. */
extern const char *const bench_rig_policy_name[];
extern const char *const bench_rig_v2_sync_name[];
extern const char *const bench_rig_v2_poll_name[];
extern const char *const bench_rig_lock_name[];
extern const char *const bench_rig_rcache_flush_name[];

/* The chain under test (iopgtable/testbed.h). */
struct bench_rig {
	struct iopt_testbed *tb;		/* NULL with --smmu none */
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv2 *s2;			/* --smmu v2 */
	struct iopt_smmuv2_drv *drv2;
	struct iopt_dma *d;
	uint64_t *held;				/* --hold's IOVAs */
	unsigned nheld;
};

/*
 * Build the rig of o for threads threads (the domain's CPUs: the larger
 * of o->cpus and threads): on the simulation's clock under --sim, else
 * the driver's virtual clock or (o->runner) the free-running runner; the
 * models' parameters of --smmu-preset/--smmu-param (bench_model_params()).
 * Then o->hold one-page mappings, mapped as CPU 0, that stay until
 * bench_rig_down(). 0 or the negative errno of the failing step (the rig
 * may be half built: bench_rig_down() it either way).
 */
int bench_rig_up(struct bench_rig *r, const struct bench_rig_opts *o,
		 unsigned threads);
void bench_rig_down(struct bench_rig *r);

/* The driver's counters (zeros without an IOMMU); v2: commands are the
 * TLBIs and syncs. */
void bench_rig_drv_stats(const struct bench_rig *r,
			 struct iopt_smmuv3_drv_stats *st);
/* The SMMUv2 model's sync restarts so far (0 without one). */
uint64_t bench_rig_sync_restarts(const struct bench_rig *r);

/* The SMMUv2 sync loop's samples so far (all 0 without SMMUv2): the
 * model's status reads and those that read active, the driver's
 * sync_waits and nested_syncs (struct iopt_smmuv2_drv_stats). */
struct bench_rig_v2_polls {
	uint64_t reads, active, nested;
	uint64_t waits[IOPT_SMMUV2_DRV_SYNC_WAITS];
};
void bench_rig_v2_polls(const struct bench_rig *r, struct bench_rig_v2_polls *p);

/* The JSON "walk" value: coherent, noncoherent (one clean per run of
 * cleared leaves) or noncoherent-per-pte (--unmap-sync-each). */
const char *bench_rig_walk_name(const struct bench_rig_opts *o);

#endif
