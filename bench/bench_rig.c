/* SPDX-License-Identifier: MIT */
/* The dma and workload suites' testbed and its options (bench_rig.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iopgtable/iova.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/testbed.h>

#include "bench_rig.h"

const char *const bench_rig_policy_name[] = { "strict", "lazy", "single",
					      "exhaust", NULL };
const char *const bench_rig_v2_sync_name[] = { "none", "bank", "global", NULL };
/* Indexed by enum iopt_smmuv2_drv_sync_poll. */
const char *const bench_rig_v2_poll_name[] = { "backoff", "udelay1", NULL };
/* Indexed by enum iopt_lock_kind. */
const char *const bench_rig_lock_name[] = { "default", "tas", "ttas", "ticket",
					    "mcs", NULL };
/* Indexed by enum iopt_iova_flush. */
const char *const bench_rig_rcache_flush_name[] = { "last-retry", "never",
						    "every-retry", NULL };

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

void bench_rig_opts_default(struct bench_rig_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy_k = IOPT_INVAL_LAZY;
	o->v2_sync_k = IOPT_SMMUV2_DRV_SYNC_BANK;
	o->v2_poll_k = IOPT_SMMUV2_DRV_POLL_BACKOFF;
	o->dma_bits = 64;
	bench_rig_resolve(o);
}

void bench_rig_resolve(struct bench_rig_opts *o)
{
	o->policy = (enum iopt_inval)o->policy_k;
	o->v2 = o->smmu_k == 1;
	o->none = o->smmu_k == 2;
	o->cmdq = cmdq_of[o->cmdq_k];
	o->sync = sync_of[o->sync_k];
	o->v2_sync = (enum iopt_smmuv2_drv_sync)o->v2_sync_k;
	o->v2_poll = (enum iopt_smmuv2_drv_sync_poll)o->v2_poll_k;
	o->runner = o->clock_k == 1;
}

size_t bench_rig_opts(struct bench_rig_opts *o, struct bench_opt *opts)
{
	const struct bench_opt t[] = {
		{ "policy", BENCH_CHOICE, &o->policy_k,
		  .choices = bench_rig_policy_name,
		  .help = "invalidation policy (lazy)" },
		{ "smmu", BENCH_CHOICE, &o->smmu_k, .choices = smmu_names,
		  .help = "SMMUv3 driver, or SMMUv2 (\"mmu-500\" model), or\n"
			  "none: no IOMMU, the DMA address is the physical one\n"
			  "(IOPT_DMA_DIRECT, dma-direct; past the mask: -EIO) (v3)" },
		{ "cmdq", BENCH_CHOICE, &o->cmdq_k, .choices = cmdq_names,
		  .help = "the SMMUv3 driver's command queue (lockfree)" },
		{ "sync", BENCH_CHOICE, &o->sync_k, .choices = sync_names,
		  .help = "CMD_SYNC completion (msi)" },
		{ "no-sev", BENCH_FLAG, &o->no_sev, .help = "SMMUv3 model without "
		  "IDR0.SEV: CONS waits poll\n(with SEV one waiter polls, the "
		  "others wait for it)" },
		{ "v2-sync", BENCH_CHOICE, &o->v2_sync_k,
		  .choices = bench_rig_v2_sync_name,
		  .help = "SMMUv2 TLBSYNC serialisation (bank)" },
		{ "v2-poll", BENCH_CHOICE, &o->v2_poll_k,
		  .choices = bench_rig_v2_poll_name,
		  .help = "SMMUv2 sync poll loop (cfg.sync_poll): spin, then\n"
			  "udelay doubling (backoff), or udelay(1) per read\n"
			  "(udelay1, Linux to 4.12) (backoff)" },
		{ "lock", BENCH_CHOICE, &o->lock, .choices = bench_rig_lock_name,
		  .help = "the drivers' spinlocks: SMMUv2 sync and bank locks,\n"
			  "SMMUv3 locked queue (default: test-and-test-and-set;\n"
			  "ticket: Linux arm64 to 4.18, mcs: from 4.19)" },
		{ "clock", BENCH_CHOICE, &o->clock_k, .choices = clock_names,
		  .help = "driver's virtual clock or the free-running model\n"
			  "(with --sim N: the simulation's clock, always)" },
		{ "sync-timeout-us", BENCH_U64, &o->sync_timeout_us, "N", "the "
		  "driver's sync timeout in model time (0: the\ndriver's default, "
		  "about 1 s)", .max = 100000000 },
		{ "v2-delay-cap-us", BENCH_U64, &o->v2_delay_cap_us, "N", "SMMUv2 "
		  "backoff loop: the longest wait between its\nbursts of reads "
		  "(cfg.sync_delay_cap_us; 0: none, Linux)", .max = 1000000 },
		{ "v2-count-nested", BENCH_FLAG, &o->v2_count_nested, .help =
		  "SMMUv2: count syncs nested in another's poll\n"
		  "(cfg.count_nested; moves the timing a little)" },
		{ "dma-bits", BENCH_UINT, &o->dma_bits, "N", "DMA mask bits (64)",
		  .min = 32, .max = 64 },
		{ "fq-entries", BENCH_UINT, &o->fq_entries, "N", "flush ring entries "
		  "(0: 256 lazy, 32768 single)", .max = 1u << 24 },
		{ "fq-timeout-ms", BENCH_U64, &o->fq_timeout_ms, "N", "flush queue "
		  "timeout (0: 10 lazy, 1000 single)", .max = 3600000 },
		{ "fq-timer", BENCH_FLAG, &o->fq_timer, .help = "a thread flushes "
		  "queues whose oldest entry is\n--fq-timeout-ms old, as the "
		  "kernel's flush-queue timer\n(default: only full rings flush; "
		  "the precise clock)" },
		{ "domain-lock", BENCH_FLAG, &o->domain_lock, .help = "one lock "
		  "around each map and unmap, the strict\nunmap's invalidation "
		  "and sync inside it (pgtbl_lock,\nLinux to 4.12)" },
		{ "domain-lock-kind", BENCH_CHOICE, &o->domain_lock_kind,
		  .choices = bench_rig_lock_name, .help = "--domain-lock's lock "
		  "(default: ticket)" },
		{ "rcache-flush", BENCH_CHOICE, &o->rcache_flush,
		  .choices = bench_rig_rcache_flush_name, .help = "when a failed "
		  "IOVA try flushes every CPU's cache:\nbefore the last try "
		  "(Linux from 4.15), never, or\nafter every failed try (to 4.14) "
		  "(last-retry)" },
		{ "pci", BENCH_FLAG, &o->pci, .help = "a PCI device: IOVAs below "
		  "4 GiB first" },
		{ "iova-start", BENCH_SIZE, &o->iova_start, "ADDR", "first IOVA, a "
		  "multiple of 4K (0: 4K); e.g.\n0xffff0000 leaves 16 pages "
		  "below 4 GiB", .max = 1ull << 47 },
		{ "iova-end", BENCH_SIZE, &o->iova_end, "ADDR", "end of the IOVA "
		  "space (exclusive), a multiple of\n4K (0: 2^48); a flush-all "
		  "with --viommu-trap-page-ns\nrefreshes all of it",
		  .max = 1ull << 48 },
		{ "cpus", BENCH_UINT, &o->cpus, "N", "the domain's CPUs (IOVA caches, "
		  "flush rings), at least\n--threads (0: --threads); thread i "
		  "is CPU i", .max = 4096 },
		{ "hold", BENCH_UINT, &o->hold, "N", "N one-page mappings held for "
		  "the whole run (0);\nwith --pci and --iova-start, e.g. a full "
		  "32-bit space", .max = 1u << 20 },
		{ "iova-walk", BENCH_FLAG, &o->iova_walk, .help = "a failed IOVA "
		  "try also pays Linux 4.13's rbtree\nwalk: every node below its "
		  "start node, a line read\neach (IOPT_IOVA_SEARCH_RBTREE_WALK; "
		  "one stripe)" },
		{ "iova-walk-node-ns", BENCH_UINT, &o->walk_node_ns, "N", "with "
		  "--iova-walk: N ns of busy time per node\nvisited (0)",
		  .max = IOPT_IOVA_WALK_NODE_NS_MAX },
		{ "viommu-trap-ns", BENCH_U64, &o->trap_ns, "N", "every "
		  "invalidation traps to a hypervisor,\none CPU at a time, for N "
		  "ns (s390 RPCIT) (0)", .max = IOPT_DMA_TRAP_NS_MAX },
		{ "viommu-trap-page-ns", BENCH_U64, &o->trap_page_ns, "N", "a "
		  "trapped refresh costs N ns more per 4K page\nit names (the "
		  "hypervisor walks them; a flush-all:\nthe whole IOVA space) (0)",
		  .max = IOPT_DMA_TRAP_PAGE_NS_MAX },
		{ "viommu-trap-map", BENCH_FLAG, &o->trap_map, .help = "with "
		  "a trap cost: every map traps too\n(the hypervisor "
		  "shadowing new entries, s390's iotlb_sync_map)" },
		{ "noncoherent", BENCH_FLAG, &o->noncoherent, .help = "table walks "
		  "do not snoop CPU caches: the page\ntable cleans each line it "
		  "writes" },
		{ "unmap-sync-each", BENCH_FLAG, &o->unmap_sync_each, .help =
		  "with --noncoherent: unmap cleans each cleared\nPTE on its own, "
		  "as Linux did before the 2024 batched clears\n"
		  "(IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH; default: one clean per\n"
		  "run of cleared leaves)" },
		{ "fq-fine-clock", BENCH_FLAG, &o->fine_clock, .help = "flush queues "
		  "read the precise host clock (default:\na coarse clock, as the "
		  "kernel's jiffies)" },
	};
	size_t n = sizeof(t) / sizeof(t[0]);

	_Static_assert(sizeof(t) / sizeof(t[0]) <= BENCH_RIG_NOPTS,
		       "BENCH_RIG_NOPTS too small");
	memcpy(opts, t, sizeof(t));
	return n;
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

/* The DMA layer's options of o, the same for every SMMU (none too). */
static void dma_opts(struct iopt_dma_cfg *c, const struct bench_rig_opts *o,
		     unsigned threads)
{
	c->policy = o->policy;
	c->nr_cpus = o->cpus > threads ? o->cpus : threads;
	c->fq_entries = o->fq_entries;
	c->fq_timeout_ns = o->fq_timeout_ms * 1000000ull;
	/* The timer thread reads the queues' clock: the precise one. */
	c->fq_timer = o->fq_timer;
	if (!o->fine_clock && !o->fq_timer)
		c->fq_clock = coarse_clock;
	c->domain_lock = o->domain_lock;
	c->domain_lock_kind = o->domain_lock_kind;
	c->rcache_flush = (enum iopt_iova_flush)o->rcache_flush;
	c->iova_search = o->iova_walk ? IOPT_IOVA_SEARCH_RBTREE_WALK :
					IOPT_IOVA_SEARCH_FMAP;
	c->iova_walk_node_ns = o->walk_node_ns;
	c->dev_flags = o->pci ? IOPT_DMA_DEV_PCI : 0;
	c->iova_start = o->iova_start;
	c->iova_end = o->iova_end;
	c->viommu_trap_ns = o->trap_ns;
	c->viommu_trap_page_ns = o->trap_page_ns;
	c->viommu_trap_map = o->trap_map;
	c->pt.coherent_walk = !o->noncoherent;
	if (o->unmap_sync_each)
		c->pt.quirks |= IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH;
}

static int rig_chain(struct bench_rig *r, const struct bench_rig_opts *o,
		     unsigned threads)
{
	struct iopt_testbed_cfg c;
	int ret;

	if (o->none) {
		struct iopt_dma_cfg dc;

		iopt_dma_default_cfg(&dc);
		dma_opts(&dc, o, threads);
		dc.mode = IOPT_DMA_DIRECT;
		return iopt_dma_create(&dc, &r->d);
	}
	/* The default SMMUv3 model (or the "mmu-500" SMMUv2) on the
	 * driver's virtual clock, the runner's or the simulation's (model
	 * at 1 GHz), the domain attached to BENCH_RIG_SID. */
	iopt_testbed_default_cfg(&c, o->v2 ? IOPT_TESTBED_SMMUV2 : IOPT_TESTBED_SMMUV3);
	bench_model_params(&c);
	c.mem_base = BENCH_RIG_MEM_BASE;
	c.mem_size = BENCH_RIG_MEM_SIZE;
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
	c.drv2.sync_poll = o->v2_poll;
	c.drv2.sync_timeout_cycles = o->sync_timeout_us * 1000;
	c.drv2.sync_delay_cap_us = o->v2_delay_cap_us;
	c.drv2.count_nested = o->v2_count_nested;
	c.drv2.lock_kind = o->lock;
	c.drv3.lock_kind = o->lock;
	dma_opts(&c.dma_cfg, o, threads);
	c.sid = BENCH_RIG_SID;
	ret = iopt_testbed_create(&c, &r->tb);
	if (ret)
		return ret;
	r->drv = iopt_testbed_smmuv3_drv(r->tb);
	r->s2 = iopt_testbed_smmuv2(r->tb);
	r->drv2 = iopt_testbed_smmuv2_drv(r->tb);
	r->d = iopt_testbed_dma(r->tb);
	return 0;
}

int bench_rig_up(struct bench_rig *r, const struct bench_rig_opts *o,
		 unsigned threads)
{
	uint64_t mask = o->dma_bits >= 64 ? ~0ull : (1ull << o->dma_bits) - 1;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = rig_chain(r, o, threads);
	if (ret)
		return ret;
	/* --hold: mappings that stay for the whole run, as a NIC's receive
	 * ring's (a PCI domain's go below 4 GiB first), mapped as CPU 0. */
	r->held = bench_calloc(o->hold, sizeof(*r->held));
	for (unsigned i = 0; i < o->hold; i++) {
		/* More than the rig's memory: its pages again (one page may
		 * be mapped at many IOVAs). */
		uint64_t pg = i % (BENCH_RIG_MEM_SIZE / BENCH_RIG_PAGE);

		bench_must(iopt_dma_map(r->d, BENCH_RIG_MEM_BASE + pg * BENCH_RIG_PAGE,
					BENCH_RIG_PAGE, IOPT_READ | IOPT_WRITE,
					mask, 0, &r->held[i]),
			   "--hold: iopt_dma_map");
		r->nheld = i + 1;
	}
	return 0;
}

void bench_rig_down(struct bench_rig *r)
{
	for (unsigned i = 0; i < r->nheld; i++)
		bench_must(iopt_dma_unmap(r->d, r->held[i], BENCH_RIG_PAGE, 0),
			   "--hold: iopt_dma_unmap");
	free(r->held);
	if (!r->tb)
		iopt_dma_destroy(r->d);
	iopt_testbed_destroy(r->tb);
	memset(r, 0, sizeof(*r));
}

void bench_rig_drv_stats(const struct bench_rig *r,
			 struct iopt_smmuv3_drv_stats *st)
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

void bench_rig_v2_polls(const struct bench_rig *r, struct bench_rig_v2_polls *p)
{
	struct iopt_smmuv2_drv_stats d;
	struct iopt_smmuv2_stats m;

	memset(p, 0, sizeof(*p));
	if (!r->s2 || !r->drv2)
		return;
	iopt_smmuv2_get_stats(r->s2, &m);
	iopt_smmuv2_drv_get_stats(r->drv2, &d);
	p->reads = m.sync_polls;
	p->active = m.sync_polls_active;
	p->nested = d.nested_syncs;
	memcpy(p->waits, d.sync_waits, sizeof(p->waits));
}

uint64_t bench_rig_sync_restarts(const struct bench_rig *r)
{
	struct iopt_smmuv2_stats m = { 0 };

	if (r->s2)
		iopt_smmuv2_get_stats(r->s2, &m);
	return m.sync_restarts;
}

const char *bench_rig_walk_name(const struct bench_rig_opts *o)
{
	if (!o->noncoherent)
		return "coherent";
	return o->unmap_sync_each ? "noncoherent-per-pte" : "noncoherent";
}
