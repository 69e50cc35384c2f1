/* SPDX-License-Identifier: MIT */
/*
 * The reproductions' cases (bench_repro.h): one table entry and one run
 * function each. Published figures are the sources' own (design brief,
 * sections 4-6 and 8; shared/seeds/), every row of each; docs/experiments.md
 * has the set-ups, the parameters' sources and the verdicts.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_repro.h"
#include "repro_lockrm.h"
#include "repro_more.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Record simulation s as measured row r of point p. */
static void put(struct repro_point *p, unsigned r, double v,
		const struct repro_sim *s)
{
	p->ours[r] = v;
	p->hash[r] = s->trace_hash;
	p->params[r] = s->sim_params;
}

static int no_errors(const struct repro_case *c, const struct repro_sim *s)
{
	if (!s->errors)
		return 0;
	fprintf(stderr, "iopt-bench repro: %s: %llu map/unmap errors in a run\n",
		c->name, (unsigned long long)s->errors);
	return -1;
}

/* ---- cmdq-contention ------------------------------------------------------ */

/*
 * Per-CPU DMA map+unmap per second on 8 to 64 CPUs, strict invalidation,
 * the SMMUv3 command queue behind a spinlock (Linux before 5.4: the
 * queued spinlock of 4.19-5.3, CONS polling) against the lock-free
 * insertion of 5.4 (MSI completion, 5.4's choice on an SMMU with
 * coherent MSI writes).
 */
static const unsigned cc_cpus[] = { 8, 16, 32, 64 };

static const struct repro_row cc_rows[] = {
	REPRO_ROW("before (locked), 8 CPUs", "ops/s", 282e3),
	REPRO_ROW("before (locked), 16 CPUs", "ops/s", 115e3),
	REPRO_ROW("before (locked), 32 CPUs", "ops/s", 36e3),
	REPRO_ROW("before (locked), 64 CPUs", "ops/s", 11e3),
	REPRO_ROW("after (lock-free), 8 CPUs", "ops/s", 302e3),
	REPRO_ROW("after (lock-free), 16 CPUs", "ops/s", 193e3),
	REPRO_ROW("after (lock-free), 32 CPUs", "ops/s", 80e3),
	REPRO_ROW("after (lock-free), 64 CPUs", "ops/s", 30e3),
	REPRO_RATIO("after/before, 8 CPUs", 4, 0),
	REPRO_RATIO("after/before, 16 CPUs", 5, 1),
	REPRO_RATIO("after/before, 32 CPUs", 6, 2),
	REPRO_RATIO("after/before, 64 CPUs", 7, 3),
	REPRO_RATIO("before: 64 CPUs / 8 CPUs", 3, 0),
	REPRO_RATIO("after: 64 CPUs / 8 CPUs", 7, 4),
};

static const struct repro_sweep cc_sweep[] = {
	{ "sim-param", "transfer", { "30", "240" }, { "30" },
	  "how soon a line can move again, default 120 (a modelling choice): "
	  "30 stands for atomics done at the mesh's home node, 240 for a "
	  "slower interconnect" },
	{ "sim-param", "atomic_far", { "1" }, { "1" },
	  "read-modify-writes executed at the line's home node (far) rather "
	  "than in the requester's cache (near, the default): which one a "
	  "Neoverse mesh does under contention is not published for this part" },
	{ "sim-param", "mmio", { "250", "1000" }, { "1000" },
	  "an uncached register access (CMDQ_PROD/CONS), default 500 (200 ns): "
	  "100 to 400 ns" },
};

static int cc_run(const struct repro_case *c, struct repro_point *p)
{
	const char *ops = p->quick ? "75" : "150";
	static const char *const before[] = { "--cmdq", "locked", "--sync", "cons",
					      "--lock", "mcs", NULL };
	static const char *const after[] = { "--cmdq", "lockfree", "--sync", "msi",
					     NULL };
	const char *const *variant[2] = { before, after };

	for (unsigned v = 0; v < 2; v++) {
		for (unsigned k = 0; k < ARRAY_LEN(cc_cpus); k++) {
			const char *args[16] = { "--policy", "strict", "--ops", ops };
			unsigned n = 4;
			struct repro_sim s;

			for (unsigned i = 0; variant[v][i]; i++)
				args[n++] = variant[v][i];
			args[n] = NULL;
			if (repro_sim(c, p, "dma", cc_cpus[k], args, &s) ||
			    no_errors(c, &s))
				return -1;
			put(p, v * 4 + k, s.ops_per_sec / s.threads, &s);
		}
	}
	return 0;
}

/* ---- batched-unmap --------------------------------------------------------- */

/*
 * dma_map_benchmark's unmap latency on a non-coherent SMMU, one thread,
 * buffers of 4 KiB to 4 MiB: one cache clean per cleared leaf (Linux
 * before the 2024 change) against one per run of leaves. The pieces it
 * needs are the dma suite's non-coherent walk and per-PTE unmap sync
 * options and the simulation's cost of a cache clean per line; until
 * they exist, missing() says which are absent and the case runs nothing.
 */
#define BU_NONCOH_OPT	"noncoherent"
#define BU_EACH_OPT	"unmap-sync-each"
#define BU_CMO_PARAM	"cmo_line"

static const unsigned bu_kib[] = { 4, 8, 16, 32, 64, 128, 256, 512, 1024,
				   2048, 4096 };

static const struct repro_row bu_rows[] = {
	REPRO_ROW("per-PTE sync, 4 KiB", "us", 3),
	REPRO_ROW("per-PTE sync, 8 KiB", "us", 4),
	REPRO_ROW("per-PTE sync, 16 KiB", "us", 6.1),
	REPRO_ROW("per-PTE sync, 32 KiB", "us", 10.2),
	REPRO_ROW("per-PTE sync, 64 KiB", "us", 18.5),
	REPRO_ROW("per-PTE sync, 128 KiB", "us", 35),
	REPRO_ROW("per-PTE sync, 256 KiB", "us", 67.5),
	REPRO_ROW("per-PTE sync, 512 KiB", "us", 127.9),
	REPRO_ROW("per-PTE sync, 1 MiB", "us", 248.6),
	REPRO_ROW("per-PTE sync, 2 MiB (block)", "us", 65.5),
	REPRO_ROW("per-PTE sync, 4 MiB (blocks)", "us", 119.2),
	REPRO_ROW("batched sync, 4 KiB", "us", 3),
	REPRO_ROW("batched sync, 8 KiB", "us", 3.8),
	REPRO_ROW("batched sync, 16 KiB", "us", 5.4),
	REPRO_ROW("batched sync, 32 KiB", "us", 8.5),
	REPRO_ROW("batched sync, 64 KiB", "us", 14.9),
	REPRO_ROW("batched sync, 128 KiB", "us", 27.5),
	REPRO_ROW("batched sync, 256 KiB", "us", 52.2),
	REPRO_ROW("batched sync, 512 KiB", "us", 97.2),
	REPRO_ROW("batched sync, 1 MiB", "us", 187.4),
	REPRO_ROW("batched sync, 2 MiB (block)", "us", 65.5),
	REPRO_ROW("batched sync, 4 MiB (blocks)", "us", 119),
	REPRO_RATIO("batched/per-PTE, 4 KiB", 11, 0),
	REPRO_RATIO("batched/per-PTE, 8 KiB", 12, 1),
	REPRO_RATIO("batched/per-PTE, 16 KiB", 13, 2),
	REPRO_RATIO("batched/per-PTE, 32 KiB", 14, 3),
	REPRO_RATIO("batched/per-PTE, 64 KiB", 15, 4),
	REPRO_RATIO("batched/per-PTE, 128 KiB", 16, 5),
	REPRO_RATIO("batched/per-PTE, 256 KiB", 17, 6),
	REPRO_RATIO("batched/per-PTE, 512 KiB", 18, 7),
	REPRO_RATIO("batched/per-PTE, 1 MiB", 19, 8),
	REPRO_RATIO("batched/per-PTE, 2 MiB (block)", 20, 9),
	REPRO_RATIO("batched/per-PTE, 4 MiB (blocks)", 21, 10),
};

static const struct repro_sweep bu_sweep[] = {
	{ "sim-param", BU_CMO_PARAM, { "20", "200" }, { "200" },
	  "a clean of one line to the point of coherence and its share of the "
	  "barrier (assumption until the simulation's preset gives it)" },
	{ "sim-param", "mmio", { "250", "1000" }, { "1000" },
	  "an uncached register access (the unmap's TLBI and sync), 100 to "
	  "400 ns" },
};

static const char *bu_missing(void)
{
	static char why[256];
	bool noncoh = repro_suite_has_opt("dma", BU_NONCOH_OPT);
	bool each = repro_suite_has_opt("dma", BU_EACH_OPT);
	bool cmo = repro_has_param("sim-param", BU_CMO_PARAM);

	if (noncoh && each && cmo)
		return NULL;
	snprintf(why, sizeof(why), "needs%s%s%s",
		 noncoh ? "" : " [iopt-bench dma --" BU_NONCOH_OPT
		 ": the non-coherent table walk]",
		 each ? "" : " [iopt-bench dma --" BU_EACH_OPT
		 ": IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH]",
		 cmo ? "" : " [--sim-param " BU_CMO_PARAM
		 ": the cost of cache maintenance per line]");
	return why;
}

static int bu_run(const struct repro_case *c, struct repro_point *p)
{
	const char *ops = p->quick ? "10" : "40";

	for (unsigned v = 0; v < 2; v++) {
		for (unsigned k = 0; k < ARRAY_LEN(bu_kib); k++) {
			char gran[16];
			const char *args[16] = { "--smmu", "v2", "--policy", "strict",
						 "--ops", ops, "--granule", gran,
						 "--sample", "0",
						 "--" BU_NONCOH_OPT };
			unsigned n = 11;
			struct repro_sim s;

			snprintf(gran, sizeof(gran), "%u", bu_kib[k] / 4);
			if (!v)
				args[n++] = "--" BU_EACH_OPT;
			args[n] = NULL;
			if (repro_sim(c, p, "dma", 1, args, &s) || no_errors(c, &s))
				return -1;
			put(p, v * ARRAY_LEN(bu_kib) + k, s.unmap_ns / 1e3, &s);
		}
	}
	return 0;
}

/* ---- the cases that need the workload models -------------------------------- */

/* ---- the cases that run a workload model (repro_more.c) --------------------- */

/* A ratio of two rows that the source does not judge (printed, not a
 * headline); published: the source's own, or NAN. */
#define MORE_RATIO(m, n, d, p) { (m), "x", (p), (n), (d), false }

static const struct repro_row cs_rows[CS_NROWS] = {
	[CS_MSI] = REPRO_ROW("16 netperf UDP 32 KiB TX, strict, MSI polling", "Mbps",
			     25227.74),
	[CS_SEV] = REPRO_ROW("16 netperf UDP 32 KiB TX, strict, SEV/CONS polling",
			     "Mbps", 27145.59),
	[CS_NOSEV] = REPRO_ROW("same, CONS busy-polled (an SMMU without SEV)", "Mbps",
			       NAN),
	[CS_OFF] = REPRO_ROW("same, no IOMMU (model's stack costs)", "Mbps", NAN),
	[CS_SEV_MSI] = REPRO_RATIO("SEV/CONS / MSI", CS_SEV, CS_MSI),
	[CS_MSI_NOSEV] = MORE_RATIO("MSI / CONS without SEV (Robin: MSI wins)",
				    CS_MSI, CS_NOSEV, NAN),
	[CS_MSI_OFF] = MORE_RATIO("MSI / no IOMMU", CS_MSI, CS_OFF, NAN),
	[CS_SEV_OFF] = MORE_RATIO("SEV/CONS / no IOMMU", CS_SEV, CS_OFF, NAN),
};

static const struct repro_sweep cs_sweep[] = {
	{ "smmu-param", "v3.msi_cycles", { "0", "200", "500", "2000" },
	  { "500", "2000" },
	  "the SMMU's MSI write into the command queue, default 20 ns (a posted "
	  "write): 0 to 2 us, up to a write that waits on a busy interconnect "
	  "(the seed's explanation: MSI asks hardware to write memory)" },
	{ "sim-param", "mmio", { "130", "1040", "2080" }, { "1040", "2080" },
	  "a read of SMMU_CMDQ_CONS, Kunpeng preset 520 (200 ns): 50 to 800 ns "
	  "(the CONS poll's and the SEV waiter's per-read cost)" },
	{ "sim-param", "relax", { "2", "100" }, { "100" },
	  "one iteration of a polling loop, default 10: from a bare load to a "
	  "WFE that sleeps until the next event-stream tick or SEV (the SEV "
	  "waiters' wake-up latency)" },
	{ "sim-param", "mmio_port", { "160", "640" }, { "640" },
	  "how long one register access holds the SMMU's register port, "
	  "default 10 (4 ns): up to 250 ns, an interface that serialises the "
	  "busy pollers of CONS (Robin Murphy's case for MSI)" },
	{ "sim-param", "atomic_far", { "1" }, { "1" },
	  "read-modify-writes at the line's home node rather than in the "
	  "requester's cache (the parameter that decides cmdq-contention): "
	  "whether the TaiShan core does so is not published" },
};

static const struct repro_row rf_rows[RF_NROWS] = {
	[RF_OFF] = REPRO_ROW("1 iperf thread, SMMU off", "%", 100),
	[RF_EVERY] = REPRO_ROW("SMMU on, rcaches flushed on every failed 32-bit try",
			       "%", 0.02),
	[RF_LAST] = REPRO_ROW("SMMU on, rcaches flushed on the last retry only", "%",
			      100),
	[RF_OFF_GBPS] = REPRO_ROW("SMMU off, calibrated to the link (assumption)",
				  "Gbps", NAN),
	[RF_EVERY_OFF] = REPRO_RATIO("flush every failure / SMMU off", RF_EVERY,
				     RF_OFF),
	[RF_LAST_OFF] = REPRO_RATIO("flush on the last retry / SMMU off", RF_LAST,
				    RF_OFF),
	[RF_LAST_EVERY] = MORE_RATIO("last retry / every failure", RF_LAST, RF_EVERY,
				     0),
};

static const struct repro_sweep rf_sweep[] = {
	{ "option", "byte-cycles", { "0.1", "0.2" }, { "0.1" },
	  "the sender's cost per byte in place of the calibration: the seed "
	  "gives no absolute figure, and calibrating to the link leaves the CPU "
	  "no slack (0.3125 c/B); 0.2 and 0.1 leave it some at the link rate, "
	  "as the fix's 100% implies" },
	{ "sim-param", "ipc", { "0.75", "3" }, { "0.75" },
	  "instructions a cycle, ThunderX2 preset 1.5 (a thread with its core "
	  "to itself): 0.75 for four SMT threads sharing a core, 3 for a wider "
	  "core; the flush of 128 CPUs' caches is instructions and local lines" },
	{ "option", "irq-cpu", { "1" }, { "1" },
	  "the CPU of the NIC's completion interrupt (its unmaps): the model's "
	  "default is the sender's own CPU (i40e's one vector per CPU, XPS); "
	  "the seed pins only iperf, so irqbalance may have put it elsewhere" },
	{ "option", "iova-walk-node-ns", { "20", "110" }, { "110" },
	  "busy time per rbtree node a failed try visits, preset 55 (a node "
	  "one ring hop away, the platform's 120-cycle cross-core figure): "
	  "20 ns for a Broadwell-class L3 hit (AnandTech's 38-48 cycles), "
	  "110 ns for DRAM (the platform's miss_mem): the tree's 4-8 MiB in "
	  "L3 or not" },
	{ "option", "hold", { "16384", "131072" }, { "16384" },
	  "ranges filling the 32-bit space, preset 65536 (128 queues x 512 "
	  "descriptors of 64 KiB buffers): a quarter (32 queues, or larger "
	  "ranges filling it) to twice (1024 descriptors)" },
};

static const struct repro_row fp_rows[FP_NROWS] = {
	[FP_EXHAUST] = REPRO_ROW("flush on IOVA exhaustion (s390's scheme)", "KIOPS",
				 NAN),
	[FP_STRICT] = REPRO_ROW("strict", "KIOPS", NAN),
	[FP_FQ32K] = REPRO_ROW("flush queues 32768 entries, 4000 ms", "KIOPS", NAN),
	[FP_FQ8K] = REPRO_ROW("flush queues 8192 entries, 100 ms", "KIOPS", NAN),
	[FP_FQ256] = REPRO_ROW("flush queues 256 entries, 10 ms (default)", "KIOPS",
			       NAN),
	[FP_SINGLE] = REPRO_ROW("single flush queue (32768, 1 s)", "KIOPS", NAN),
	[FP_OFF] = REPRO_ROW("no IOMMU (model's device and costs)", "KIOPS", NAN),
	[FP_EXH_STRICT] = { "exhaustion / strict (about twice)", "x", 2, FP_EXHAUST,
			    FP_STRICT, true },
	[FP_FQ32K_EXH] = { "fq 32768/4000ms / exhaustion", "x", 0.91, FP_FQ32K,
			   FP_EXHAUST, true },
	[FP_FQ8K_EXH] = { "fq 8192/100ms / exhaustion", "x", 0.76, FP_FQ8K,
			  FP_EXHAUST, true },
	[FP_FQ256_STRICT] = { "fq default / strict (much worse than strict)", "x",
			      0.16, FP_FQ256, FP_STRICT, true },
	[FP_FQ256_EXH] = MORE_RATIO("fq default / exhaustion (less than 8%)",
				    FP_FQ256, FP_EXHAUST, 0.08),
	[FP_SINGLE_EXH] = MORE_RATIO("single queue / exhaustion", FP_SINGLE,
				     FP_EXHAUST, NAN),
	[FP_EXH_OFF] = MORE_RATIO("exhaustion / no IOMMU", FP_EXHAUST, FP_OFF, NAN),
};

static const struct repro_sweep fp_sweep[] = {
	{ "option", "viommu-trap-page-ns", { "20", "200" }, { "20" },
	  "the hypervisor's walk of one page of a refreshed range, assumed 50 "
	  "ns (QEMU's rpcit_service_call: an IOTLB hash lookup per page, and "
	  "three guest table reads for a mapped one; no published figure): "
	  "20 to 200 ns" },
	{ "option", "iova-end", { "0x180000000", "0xb00000000" }, { },
	  "the aperture a flush-all refreshes, [4 GiB, 4 GiB + the guest's "
	  "memory) (s390_iommu_aperture = high_memory), the guest's memory "
	  "assumed 8 GiB (the seed gives none): 2 GiB to 40 GiB" },
	{ "option", "viommu-trap-ns", { "2000", "50000" }, { },
	  "one trapped, serialised RPCIT's fixed cost, assumed 10 us (an exit "
	  "to the hypervisor, its shadow-table update and the host IOMMU's "
	  "invalidation; no published figure): 2 to 50 us" },
	{ "option", "dev-latency-ns", { "20000", "200000" }, { },
	  "the SSD's 4K random-read latency, the model's 80 us: 20 us (an "
	  "Optane-class device) to 200 us (a loaded NAND SSD); the seed names "
	  "no device" },
};

#define ROWS(r) (r), ARRAY_LEN(r)

const struct repro_case repro_cases[] = {
	{ "cmdq-contention", "SMMUv3 command queue: per-CPU DMA map+unmap, 8-64 CPUs",
	  "design brief 4.2 and 6 (the seeds hold no thread for these figures)",
	  "--sim-platform graviton2 --smmu-preset smmuv3",
	  "dma suite, strict, 1-page map+unmap loops on every CPU; locked cmdq "
	  "(MCS, CONS) vs lock-free (MSI)",
	  REPRO_RUNS, ROWS(cc_rows), cc_sweep, ARRAY_LEN(cc_sweep), 8, cc_run, NULL },
	{ "batched-unmap", "non-coherent unmap: per-PTE vs batched cache clean",
	  "seed 001 (Re: [PATCH V2 1/2] iommu: Optimize IOMMU UnMap, 2024); brief 3.5",
	  "--sim-platform graviton2 --smmu-preset mmu-500",
	  "dma suite, SMMUv2, strict, 1 thread, 4 KiB-4 MiB buffers, non-coherent "
	  "walk; unmap latency",
	  REPRO_RUNS, ROWS(bu_rows), bu_sweep, ARRAY_LEN(bu_sweep), 22, bu_run,
	  bu_missing },
	{ "lock-removal", "io-pgtable lock removal: 50GbE TX/RX and NVMf",
	  "seed 000 (Ray Jui's reply to [PATCH 0/8] io-pgtable lock removal, 2017)",
	  "--sim-platform a72-8 --smmu-preset mmu-500",
	  "workload suite on 8 CPUs, SMMUv2 strict: TCP TX/RX x1/x4/x8 and NVMf "
	  "4K randread 8 jobs; no IOMMU (calibrated), 4.12 page-table lock, "
	  "lock-free (bench/repro_lockrm.c)",
	  REPRO_RUNS, ROWS(repro_lr_rows), repro_lr_sweep,
	  ARRAY_LEN(repro_lr_sweep), REPRO_LR_RUNS, repro_lr_run, NULL },
	{ "v2-sync-timeout", "concurrent SMMUv2 TLB syncs time out",
	  "seed 000 (iperf -P64 report; 'Reintroduce locking around TLB sync')",
	  "--sim-platform a72-8 --smmu-preset mmu-500",
	  "workload suite: 8-64 TCP TX threads on 8 CPUs, completion interrupts "
	  "spread, SMMUv2 strict, sync without and with the bank lock, the "
	  "backoff loop's 20 bursts whole, its waits capped at 64 us "
	  "(bench/repro_lockrm.c)",
	  REPRO_RUNS, ROWS(repro_vs_rows), repro_vs_sweep,
	  ARRAY_LEN(repro_vs_sweep), REPRO_VS_RUNS, repro_vs_run, NULL },
	{ "cmd-sync", "CMD_SYNC completion: SEV/CONS polling vs MSI",
	  "seed 002 ([PATCH] iommu/arm-smmu-v3: remove the approach of MSI polling "
	  "for CMD SYNC, 2020, and Robin Murphy's reply)",
	  "--sim-platform kunpeng920 --smmu-preset smmuv3",
	  "workload tx: 16 UDP senders of 32 KiB on 16 CPUs, 100G link, SMMUv3 "
	  "strict, lock-free cmdq; MSI vs CONS+SEV vs CONS without SEV",
	  REPRO_RUNS, ROWS(cs_rows), cs_sweep, ARRAY_LEN(cs_sweep), 4,
	  repro_cmd_sync, repro_more_missing },
	{ "rcache-flush", "IOVA rcache flush on every failed 32-bit attempt",
	  "seed 003 ([PATCH 0/1] Optimise IOVA allocations for PCI devices, 2017)",
	  "--sim-platform thunderx2 --smmu-preset smmuv3",
	  "workload tx: 1 TCP sender on a 128-CPU machine, 40G link, PCI device, "
	  "32-bit space full (65536 ranges), strict, 4.13's rbtree walk on "
	  "failure; every-retry vs last-retry flush",
	  REPRO_RUNS, ROWS(rf_rows), rf_sweep, ARRAY_LEN(rf_sweep), 3,
	  repro_rcache_flush, repro_more_missing },
	{ "flush-policy", "flush on exhaustion vs strict vs flush queues",
	  "seed 004 (Re: [PATCH v4 1/2] iommu/s390: Fix race with release_device "
	  "ops, 2022)",
	  "--sim-platform graviton2 --smmu-preset smmuv3",
	  "workload nvme: 4 jobs x QD32 4K randread on 8 CPUs, every refresh "
	  "(map, unmap, flush-all) a trapped, serialised 10 us + 50 ns per page "
	  "named, a flush-all naming the 8 GiB aperture; strict, fq 256/10 ms, "
	  "8192/100 ms, 32768/4000 ms, single queue, flush on exhaustion",
	  REPRO_RUNS, ROWS(fp_rows), fp_sweep, ARRAY_LEN(fp_sweep), 7,
	  repro_flush_policy, repro_more_missing },
};

const unsigned repro_ncases = ARRAY_LEN(repro_cases);
