/* SPDX-License-Identifier: MIT */
/*
 * Run functions of the reproductions that run a workload model over the
 * dma suite's rig (`iopt-bench workload`, repro_more.h): each point runs
 * the no-IOMMU baseline and the published variants on one set of
 * parameters; docs/experiments.md gives the set-ups, what each cost was
 * taken from and the verdicts.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repro_more.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A workload command line: the case's fixed options, then a variant's. */
struct wl_args {
	const char *v[REPRO_MAX_ARGS];
	unsigned n;
};

static void wl_add(struct wl_args *a, const char *const *opts)
{
	for (unsigned i = 0; opts && opts[i] && a->n + 1 < ARRAY_LEN(a->v); i++)
		a->v[a->n++] = opts[i];
	a->v[a->n] = NULL;
}

/*
 * Run `workload` on cpus CPUs with the option lists of opts (NULL-ended)
 * in order, into *s; its figure (s->gbps or s->iops, by the kind) times
 * scale into measured row r of p (r < 0: none). 0, or -1 after a message:
 * the run failed or dropped packets or I/Os on DMA errors (a figure with
 * drops measures the error path, not the variant).
 */
static int wl_row(const struct repro_case *c, struct repro_point *p,
		  unsigned cpus, const char *const *const *opts, double scale,
		  int r, struct repro_sim *s)
{
	struct wl_args a = { .n = 0 };

	for (unsigned i = 0; opts[i]; i++)
		wl_add(&a, opts[i]);
	if (repro_sim(c, p, "workload", cpus, a.v, s))
		return -1;
	if (s->errors) {
		fprintf(stderr, "iopt-bench repro: %s: %llu DMA errors in a run\n",
			c->name, (unsigned long long)s->errors);
		return -1;
	}
	if (r >= 0) {
		p->ours[r] = (isnan(s->gbps) ? s->iops : s->gbps) * scale;
		p->hash[r] = s->trace_hash;
		p->params[r] = s->sim_params;
	}
	return 0;
}

#define OPTS(...) ((const char *const *const []){ __VA_ARGS__, NULL })

const char *repro_more_missing(void)
{
	static const char *const opts[] = {
		"kind", "byte-cycles", "calibrate-gbps", "duration-ms", "viommu-trap-ns",
		"rcache-flush", "hold", "fq-entries", "sync", "no-sev", "iova-walk",
		"iova-walk-node-ns",
	};
	static char why[512];
	static bool asked;
	size_t n = 0;

	/* Each probe runs `iopt-bench workload --help`: once a process. */
	if (asked)
		return why[0] ? why : NULL;
	asked = true;
	for (unsigned i = 0; i < ARRAY_LEN(opts); i++)
		if (!repro_suite_has_opt("workload", opts[i]) && n < sizeof(why))
			n += (size_t)snprintf(why + n, sizeof(why) - n, "%s--%s",
					      n ? " " : "needs the workload models' "
					      "suite [iopt-bench workload ", opts[i]);
	if (n && n < sizeof(why))
		snprintf(why + n, sizeof(why) - n, "]");
	return why[0] ? why : NULL;
}

/* ---- cmd-sync ------------------------------------------------------------- */

/*
 * Seed 002: 16 netperf UDP_STREAM threads of 32768-byte datagrams over a
 * 100G hns3 on a Kunpeng 920, strict invalidation, the SMMUv3 driver of
 * Linux 5.8 (lock-free command queue): CMD_SYNC completion by an MSI
 * written back into the sync's slot, against CONS polling with SEV (the
 * WFE wait), and CONS without SEV (Robin Murphy's case: an SMMU with MSI
 * but no SEV, whose CONS wait is a busy poll). The stack costs are the
 * model's defaults: the seed gives no figure without the SMMU.
 */
#define CS_CPUS 16

int repro_cmd_sync(const struct repro_case *c, struct repro_point *p)
{
	const char *dur = p->quick ? "10" : "40", *warm = p->quick ? "2" : "4";
	const char *const base[] = {
		"--kind", "tx", "--proto", "udp", "--streams", "16", "--queues", "16",
		"--send-bytes", "32768", "--link-gbps", "100",
		"--duration-ms", dur, "--warmup-ms", warm, NULL
	};
	static const char *const msi[] = { "--smmu", "v3", "--policy", "strict",
					   "--sync", "msi", NULL };
	static const char *const sev[] = { "--smmu", "v3", "--policy", "strict",
					   "--sync", "cons", NULL };
	static const char *const nosev[] = { "--smmu", "v3", "--policy", "strict",
					     "--sync", "cons", "--no-sev", NULL };
	static const char *const off[] = { "--smmu", "none", NULL };
	struct repro_sim s;

	if (wl_row(c, p, CS_CPUS, OPTS(base, off), 1e3, CS_OFF, &s) ||
	    wl_row(c, p, CS_CPUS, OPTS(base, msi), 1e3, CS_MSI, &s) ||
	    wl_row(c, p, CS_CPUS, OPTS(base, sev), 1e3, CS_SEV, &s) ||
	    wl_row(c, p, CS_CPUS, OPTS(base, nosev), 1e3, CS_NOSEV, &s))
		return -1;
	return 0;
}

/* ---- rcache-flush ----------------------------------------------------------- */

/*
 * Seed 003: one iperf TCP thread pinned to one CPU of a 128-CPU
 * ThunderX2, a 40GbE XL710 (a PCI device: its maps try below 4 GiB
 * first), Linux 4.13 (strict), the 32-bit IOVA space full. Linux 4.13's
 * allocator is priced by --iova-walk (a failed try walks its rbtree:
 * include/iopgtable/iova.h, IOPT_IOVA_SEARCH_RBTREE_WALK), RF_WALK_NS a
 * node. The 32-bit space is RF_HOLD one-page ranges below 4 GiB, held by
 * mappings made before the run: the XL710's receive rings' buffers, one
 * queue pair per CPU of 512 descriptors (i40e's default), one buffer each
 * (an assumption on the queue count; with 64 KiB pages, 4 GiB exactly).
 * The no-IOMMU run is calibrated to the link (RF_CAL_GBPS), the only
 * absolute figure the set-up implies; the IOMMU runs reuse its per-byte
 * cost. The old rule's runs are longer (RF_EVERY_MS): a map there takes
 * milliseconds, and a 40 ms run would count a few skbs.
 */
#define RF_CPUS		128
#define RF_CAL_GBPS	"36"	/* 96% of 40GbE's TCP payload rate, 37.66 */
#define RF_HOLD		65536u	/* 128 queues x 512 receive buffers */
#define RF_WALK_NS	"55"	/* a node on the ring: 120 cycles (assumption) */

/* --iova-start for n one-page ranges just below 4 GiB. */
static void rf_start(unsigned n, char *buf, size_t len)
{
	snprintf(buf, len, "0x%llx", (unsigned long long)((1ull << 32) - n * 4096ull));
}

int repro_rcache_flush(const struct repro_case *c, struct repro_point *p)
{
	const char *dur = p->quick ? "10" : "40", *warm = p->quick ? "2" : "4";
	const char *edur = p->quick ? "500" : "1000", *ewarm = "100";
	const char *const base[] = {
		"--kind", "tx", "--proto", "tcp", "--streams", "1", "--link-gbps", "40",
		"--duration-ms", dur, "--warmup-ms", warm, NULL
	};
	const char *const ebase[] = {
		"--kind", "tx", "--proto", "tcp", "--streams", "1", "--link-gbps", "40",
		"--duration-ms", edur, "--warmup-ms", ewarm, NULL
	};
	static const char *const cal[] = { "--smmu", "none", "--calibrate-gbps",
					   RF_CAL_GBPS, NULL };
	static const char *const none[] = { "--smmu", "none", NULL };
	static const char *const every[] = { "--rcache-flush", "every-retry", NULL };
	static const char *const last[] = { "--rcache-flush", "last-retry", NULL };
	/* A swept per-byte cost replaces the calibration (a sender with CPU
	 * to spare at the link rate); the swept node count and node cost
	 * go to the IOMMU runs; another swept option (the interrupt's CPU)
	 * goes to every run, the calibration's too. */
	bool bc_swept = p->option && !strcmp(p->option, "--byte-cycles");
	bool hold_swept = p->option && !strcmp(p->option, "--hold");
	bool ns_swept = p->option && !strcmp(p->option, "--iova-walk-node-ns");
	bool all = p->option && !bc_swept && !hold_swept && !ns_swept;
	const char *const pt[] = { all ? p->option : NULL, p->option_val, NULL };
	char bc[32], start[32], hold[16];
	double off;
	struct repro_sim s;

	if (hold_swept)
		snprintf(hold, sizeof(hold), "%s", p->option_val);
	else
		snprintf(hold, sizeof(hold), "%u", RF_HOLD);
	rf_start((unsigned)strtoul(hold, NULL, 10), start, sizeof(start));
	const char *const on[] = {
		"--smmu", "v3", "--policy", "strict", "--pci", "--iova-start", start,
		"--hold", hold, "--cpus", "128", "--iova-walk", "--iova-walk-node-ns",
		ns_swept ? p->option_val : RF_WALK_NS, NULL
	};

	if (bc_swept) {
		snprintf(bc, sizeof(bc), "%s", p->option_val);
	} else {
		if (wl_row(c, p, RF_CPUS, OPTS(base, pt, cal), 1, RF_OFF_GBPS, &s))
			return -1;
		/* The line's byte_cycles is the calibrated cost. */
		if (isnan(s.byte_cycles)) {
			fprintf(stderr, "iopt-bench repro: %s: the calibration gave no "
				"byte_cycles\n", c->name);
			return -1;
		}
		snprintf(bc, sizeof(bc), "%.17g", s.byte_cycles);
	}
	const char *const cost[] = { "--byte-cycles", bc, NULL };

	if (bc_swept &&
	    wl_row(c, p, RF_CPUS, OPTS(base, none, cost), 1, RF_OFF_GBPS, &s))
		return -1;
	off = p->ours[RF_OFF_GBPS];
	p->ours[RF_OFF] = 100;
	p->hash[RF_OFF] = p->hash[RF_OFF_GBPS];
	p->params[RF_OFF] = p->params[RF_OFF_GBPS];
	if (wl_row(c, p, RF_CPUS, OPTS(ebase, pt, on, every, cost), 1, RF_EVERY,
		   &s) ||
	    wl_row(c, p, RF_CPUS, OPTS(base, pt, on, last, cost), 1, RF_LAST, &s))
		return -1;
	p->ours[RF_EVERY] *= 100 / off;
	p->ours[RF_LAST] *= 100 / off;
	return 0;
}

/* ---- flush-policy ------------------------------------------------------------ */

/*
 * Seed 004: NVMe 4 KiB random reads in an s390 guest whose every IOTLB
 * refresh (RPCIT) traps to the hypervisor, one at a time across the
 * guest's CPUs: a fixed cost (--viommu-trap-ns, FP_TRAP_NS) plus a cost
 * per page of the range the refresh names (--viommu-trap-page-ns,
 * FP_PAGE_NS: the hypervisor walks every page of it), a new mapping's as
 * well as an invalidation's (--viommu-trap-map: the seed's scheme
 * "reduces them by almost half" by deferring only unmap's). A flush-all
 * names the whole aperture: the IOVA space is s390's, [start_dma,
 * start_dma + the guest's memory) (FP_IOVA_START, FP_IOVA_END). All three
 * costs and the memory are assumptions, swept (docs/experiments.md).
 * Policies: strict, the flush queues at 256/10 ms (the default), 8192/100
 * ms and 32768/4000 ms, a single queue (32768/1 s), and s390's own
 * scheme, one flush-all when the IOVA space runs out.
 *
 * Each run lasts long enough to hold several of its flush cycles (a
 * cycle: the rings filling, or the timeout, then the flush-alls):
 * strict, exhaustion and the no-IOMMU run have none within any run this
 * size (exhaustion's first comes after the aperture's 2M maps), the
 * timed queues (256/10 ms, 8192/100 ms) run with the flush-queue timer
 * for FP_TIMED_MS after FP_TIMED_WARM_MS (their first timeout's burst of
 * unflushed I/O is over by then), the per-CPU 32768-entry queues for
 * FP_LONG_MS and the single queue for FP_SINGLE_MS, both without the
 * timer (their rings fill in about 1.3 s and 0.3 s, before the 4 s and
 * 1 s timeouts could expire). The single queue's run is the shortest that holds its flushes:
 * during each, every other CPU's unmap spins on the one ring's lock, and
 * a spinning simulated CPU costs the host an event per iteration. A trap
 * cost above the preset's stretches the long durations in proportion, so
 * that a run holds as many cycles.
 */
#define FP_CPUS		8
#define FP_TRAP_NS	10000u
#define FP_PAGE_NS	"50"
#define FP_IOVA_START	"0x100000000"	/* QEMU's ZPCI_SDMA_ADDR, 4 GiB */
#define FP_IOVA_END	"0x300000000"	/* + 8 GiB of guest memory */
#define FP_TIMED_MS	2000u		/* --quick: 1000 */
#define FP_TIMED_WARM_MS "500"
#define FP_LONG_MS	8000u		/* --quick: 4000 */
#define FP_SINGLE_MS	600u		/* --quick: 400 */

/* ms, stretched by trap_ns over the preset's, as a decimal string in buf. */
static const char *fp_ms(char *buf, size_t n, unsigned ms, const char *trap)
{
	unsigned long long t = strtoull(trap, NULL, 10), v = ms;

	if (t > FP_TRAP_NS)
		v = v * t / FP_TRAP_NS;
	snprintf(buf, n, "%llu", v);
	return buf;
}

/* The preset's value of a rig option, or the point's when it sweeps it. */
static const char *fp_opt(const struct repro_point *p, const char *name,
			  const char *preset)
{
	return p->option && !strcmp(p->option, name) ? p->option_val : preset;
}

int repro_flush_policy(const struct repro_case *c, struct repro_point *p)
{
	static const char *const own[] = { "--viommu-trap-ns",
					   "--viommu-trap-page-ns", "--iova-end",
					   NULL };
	char trap_buf[24], timed[24], lng[24], one[24];
	const char *trap, *dur = p->quick ? "10" : "40", *warm = p->quick ? "2" : "4";
	bool own_swept = false;

	snprintf(trap_buf, sizeof(trap_buf), "%u", FP_TRAP_NS);
	trap = fp_opt(p, "--viommu-trap-ns", trap_buf);
	for (unsigned i = 0; own[i]; i++)
		own_swept |= p->option && !strcmp(p->option, own[i]);
	fp_ms(timed, sizeof(timed), p->quick ? FP_TIMED_MS / 2 : FP_TIMED_MS, trap);
	fp_ms(lng, sizeof(lng), p->quick ? FP_LONG_MS / 2 : FP_LONG_MS, trap);
	fp_ms(one, sizeof(one), p->quick ? 400 : FP_SINGLE_MS, trap);

	const char *const base[] = {
		"--kind", "nvme", "--jobs", "4", "--qd", "32", "--io-bytes", "4096",
		NULL
	};
	const char *const on[] = {
		"--smmu", "v3", "--viommu-trap-ns", trap, "--viommu-trap-page-ns",
		fp_opt(p, "--viommu-trap-page-ns", FP_PAGE_NS), "--viommu-trap-map",
		"--iova-start", FP_IOVA_START, "--iova-end",
		fp_opt(p, "--iova-end", FP_IOVA_END), NULL
	};
	/* Another swept option (the device's latency) goes to every run. */
	const char *const pt[] = { own_swept ? NULL : p->option, p->option_val,
				   NULL };
	const char *const d_short[] = { "--duration-ms", dur, "--warmup-ms", warm,
					NULL };
	const char *const d_timed[] = { "--duration-ms", timed, "--warmup-ms",
					FP_TIMED_WARM_MS, "--fq-timer", NULL };
	const char *const d_long[] = { "--duration-ms", lng, "--warmup-ms", warm,
				       NULL };
	const char *const d_single[] = { "--duration-ms", one, "--warmup-ms", warm,
					 NULL };
	static const char *const strict[] = { "--policy", "strict", NULL };
	static const char *const fq256[] = { "--policy", "lazy", "--fq-entries", "256",
					     "--fq-timeout-ms", "10", NULL };
	static const char *const fq8k[] = { "--policy", "lazy", "--fq-entries", "8192",
					    "--fq-timeout-ms", "100", NULL };
	static const char *const fq32k[] = { "--policy", "lazy", "--fq-entries",
					     "32768", "--fq-timeout-ms", "4000", NULL };
	static const char *const single[] = { "--policy", "single", NULL };
	static const char *const exhaust[] = { "--policy", "exhaust", NULL };
	static const char *const off[] = { "--smmu", "none", NULL };
	const struct { const char *const *v, *const *d; int row; } runs[] = {
		{ exhaust, d_short, FP_EXHAUST }, { strict, d_short, FP_STRICT },
		{ fq32k, d_long, FP_FQ32K }, { fq8k, d_timed, FP_FQ8K },
		{ fq256, d_timed, FP_FQ256 }, { single, d_single, FP_SINGLE },
	};
	struct repro_sim s;

	for (unsigned i = 0; i < ARRAY_LEN(runs); i++)
		if (wl_row(c, p, FP_CPUS, OPTS(base, runs[i].d, on, runs[i].v, pt),
			   1e-3, runs[i].row, &s))
			return -1;
	return wl_row(c, p, FP_CPUS, OPTS(base, d_short, off, pt), 1e-3, FP_OFF, &s);
}
