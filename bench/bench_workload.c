/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench workload: one workload model of iopgtable/workload.h (TCP or
 * UDP transmit, TCP receive, NVMe random reads, dma_map_benchmark) on the
 * simulation, over the dma suite's rig (bench_rig.h: SMMU model, driver,
 * DMA domain, or none), one JSON line (or table line) per run
 * (docs/workload.md, "From the command line").
 *
 * Needs --sim N: the models run only on the simulation library. The suite
 * runs on the simulation's host context (bench_simrun.c), whose N CPUs
 * are the model's. Every workload option sets one field of the kind's
 * parameters; an unset one keeps the model's default; an option of
 * another kind is an error. --calibrate-gbps / --calibrate-iops first
 * find byte_cycles (TX, RX) or submit_cycles (NVMe) that make a run
 * without an IOMMU on the same platform reach the figure
 * (iopt_wl_*_calibrate()), then run the rig with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/sim.h>
#include <iopgtable/workload.h>

#include "bench.h"
#include "bench_rig.h"

enum wl_kind { WL_TX, WL_RX, WL_NVME, WL_MAPBENCH };
static const char *const kind_names[] = { "tx", "rx", "nvme", "mapbench", NULL };
#define TX	(1u << WL_TX)
#define RX	(1u << WL_RX)
#define NVME	(1u << WL_NVME)
#define MB	(1u << WL_MAPBENCH)

/* The workload options: integers in iv[], reals in rv[], unset while
 * they hold WL_UNSET (resp. NaN). */
enum wl_val {
	V_STREAMS, V_QUEUES, V_SEND_BYTES, V_SKB_BYTES, V_MSS, V_WIRE_OVERHEAD,
	V_FRAGS, V_HEAD_BYTES, V_RING_ENTRIES, V_SNDBUF_BYTES, V_SEND_CYCLES,
	V_SKB_CYCLES, V_CLEAN_CYCLES, V_IRQ_FRAMES, V_IRQ_USECS_NS, V_IRQ_CPU,
	V_BUF_BYTES, V_BUDGET, V_PKT_CYCLES, V_IRQ_DELAY_NS, V_JOBS, V_QD,
	V_IO_BYTES, V_DEV_LATENCY_NS, V_SUBMIT_CYCLES, V_COMPLETE_CYCLES,
	V_THREADS, V_DMA_TRANS_NS,
	V_NINT,
	R_LINK_GBPS = 0, R_BYTE_CYCLES, R_DURATION_MS, R_WARMUP_MS, R_DEV_IOPS,
	R_MEMSET_BYTE_CYCLES, R_CAL_GBPS, R_CAL_IOPS,
	R_NREAL,
};
#define WL_UNSET UINT64_MAX

struct wl_field {
	const char *name;
	unsigned kinds;		/* TX | RX ...: the kinds it applies to */
	bool real;
	unsigned idx;		/* into iv[] or rv[] */
	const char *arg, *help;
	uint64_t min, max;
	double lo, hi;
};

static const struct wl_field fields[] = {
	{ "streams", TX | RX, false, V_STREAMS, "N", "tx/rx: streams (iperf -P), "
	  "one thread each (1)", .min = 1, .max = IOPT_SIM_MAX_CPUS },
	{ "queues", TX, false, V_QUEUES, "N", "tx: TX queues (1)", .min = 1, .max = 256 },
	{ "send-bytes", TX, false, V_SEND_BYTES, "N", "tx: bytes per send() "
	  "(tcp 131072, udp 32768)", .min = 1, .max = 1ull << 30 },
	{ "skb-bytes", TX, false, V_SKB_BYTES, "N", "tx: payload per skb "
	  "(tcp 65160, udp 1480)", .min = 1, .max = 1u << 20 },
	{ "mss", TX | RX, false, V_MSS, "N", "tx/rx: payload per wire packet "
	  "(1448; udp 1480)", .min = 1, .max = 1u << 16 },
	{ "wire-overhead", TX | RX, false, V_WIRE_OVERHEAD, "N", "tx/rx: header "
	  "and framing bytes per packet", .min = 0, .max = 1u << 16 },
	{ "frags", TX, false, V_FRAGS, "N", "tx: payload mappings per skb "
	  "(tcp 2, udp 1)", .min = 1, .max = 64 },
	{ "head-bytes", TX, false, V_HEAD_BYTES, "N", "tx: the skb head's "
	  "mapping (0: none)", .min = 0, .max = 1u << 16 },
	{ "ring-entries", TX | RX, false, V_RING_ENTRIES, "N", "tx/rx: "
	  "descriptors (buffers) per ring", .min = 1, .max = 1u << 20 },
	{ "sndbuf-bytes", TX, false, V_SNDBUF_BYTES, "N", "tx: bytes a stream "
	  "keeps in flight", .min = 1, .max = 1ull << 32 },
	{ "send-cycles", TX, false, V_SEND_CYCLES, "N", "tx: cycles per "
	  "send()", .min = 0, .max = 1ull << 32 },
	{ "skb-cycles", TX, false, V_SKB_CYCLES, "N", "tx: stack and xmit "
	  "cycles per skb", .min = 0, .max = 1ull << 32 },
	{ "clean-cycles", TX, false, V_CLEAN_CYCLES, "N", "tx: cycles per "
	  "completed skb in the handler", .min = 0, .max = 1ull << 32 },
	{ "irq-frames", TX, false, V_IRQ_FRAMES, "N", "tx: completions per "
	  "interrupt (coalescing)", .min = 1, .max = 1u << 20 },
	{ "irq-usecs-ns", TX, false, V_IRQ_USECS_NS, "N", "tx: coalescing "
	  "timer, ns", .min = 1, .max = 1ull << 32 },
	{ "irq-cpu", TX | RX | NVME, false, V_IRQ_CPU, "N|spread", "tx/rx/nvme: "
	  "the interrupts' CPU, or spread: queue\n(job) i's on CPU i % cpus "
	  "(the model's default)", .min = 0, .max = IOPT_SIM_MAX_CPUS - 1 },
	{ "buf-bytes", RX | MB, false, V_BUF_BYTES, "N", "rx: RX buffer bytes; "
	  "mapbench: bytes per mapping,\na multiple of 4096", .min = 1, .max = 4u << 20 },
	{ "budget", RX, false, V_BUDGET, "N", "rx: NAPI budget", .min = 1, .max = 1u << 16 },
	{ "pkt-cycles", RX, false, V_PKT_CYCLES, "N", "rx: cycles per packet", .min = 0, .max = 1ull << 32 },
	{ "irq-delay-ns", RX, false, V_IRQ_DELAY_NS, "N", "rx: arrival to "
	  "interrupt, ns", .min = 0, .max = 1ull << 32 },
	{ "jobs", NVME, false, V_JOBS, "N", "nvme: fio jobs, one thread each", .min = 1, .max = IOPT_SIM_MAX_CPUS },
	{ "qd", NVME, false, V_QD, "N", "nvme: I/Os in flight per job "
	  "(iodepth)", .min = 1, .max = 4096 },
	{ "io-bytes", NVME, false, V_IO_BYTES, "N", "nvme: bytes per I/O, a "
	  "multiple of 4096", .min = 4096, .max = 1u << 20 },
	{ "dev-latency-ns", NVME, false, V_DEV_LATENCY_NS, "N", "nvme: the "
	  "device's latency", .min = 0, .max = 1ull << 32 },
	{ "submit-cycles", NVME, false, V_SUBMIT_CYCLES, "N", "nvme: cycles "
	  "per submission", .min = 0, .max = 1ull << 32 },
	{ "complete-cycles", NVME, false, V_COMPLETE_CYCLES, "N", "nvme: cycles "
	  "per completion", .min = 0, .max = 1ull << 32 },
	{ "threads", MB, false, V_THREADS, "N", "mapbench: threads (--sim N's)", .min = 1, .max = IOPT_SIM_MAX_CPUS },
	{ "dma-trans-ns", MB, false, V_DMA_TRANS_NS, "N", "mapbench: delay "
	  "between map and unmap", .min = 0, .max = 10000000 },
	{ "link-gbps", TX | RX, true, R_LINK_GBPS, "X", "tx/rx: link rate (tcp "
	  "50, udp 100)", .lo = 0.001, .hi = 10000 },
	{ "byte-cycles", TX | RX, true, R_BYTE_CYCLES, "X", "tx/rx: cycles per "
	  "payload byte", .lo = 0, .hi = 1e6 },
	{ "duration-ms", TX | RX | NVME | MB, true, R_DURATION_MS, "X", "the "
	  "run's simulated length (the model's: 4)", .lo = 0.001, .hi = 60000 },
	{ "warmup-ms", TX | RX | NVME, true, R_WARMUP_MS, "X", "not counted "
	  "from the start (the model's: 1)", .lo = 0, .hi = 60000 },
	{ "dev-iops", NVME, true, R_DEV_IOPS, "X", "nvme: the device's IOPS "
	  "cap (0: none)", .lo = 0, .hi = 1e8 },
	{ "memset-byte-cycles", MB, true, R_MEMSET_BYTE_CYCLES, "X", "mapbench: "
	  "the memset's cycles per byte", .lo = 0, .hi = 1e6 },
	{ "calibrate-gbps", TX | RX, true, R_CAL_GBPS, "X", "tx/rx: first find "
	  "--byte-cycles that reach X Gbps\nwithout an IOMMU, then run with "
	  "it", .lo = 0.001, .hi = 10000 },
	{ "calibrate-iops", NVME, true, R_CAL_IOPS, "X", "nvme: first find "
	  "--submit-cycles that reach X IOPS\nwithout an IOMMU, then run with "
	  "it", .lo = 1, .hi = 1e8 },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

struct wl_cli {
	unsigned kind, proto, dir;
	bool share, map_per_page, irq_spread, json;
	uint64_t iv[V_NINT];
	double rv[R_NREAL];
	double cal_tol;
	struct bench_rig_opts rig;
};

static bool is_set(const struct wl_cli *c, const struct wl_field *f)
{
	return f->real ? !isnan(c->rv[f->idx]) : c->iv[f->idx] != WL_UNSET;
}

/* Integer option idx into *dst where given. */
#define SET_U(c, idx, dst) do { \
	if ((c)->iv[idx] != WL_UNSET) \
		(dst) = (c)->iv[idx]; \
} while (0)
#define SET_R(c, idx, dst) do { \
	if (!isnan((c)->rv[idx])) \
		(dst) = (c)->rv[idx]; \
} while (0)

static uint64_t ms_ns(double ms)
{
	return (uint64_t)llround(ms * 1e6);
}

static unsigned irq_cpu_of(const struct wl_cli *c, unsigned dflt)
{
	if (c->irq_spread)
		return IOPT_WL_IRQ_SPREAD;
	return c->iv[V_IRQ_CPU] != WL_UNSET ? (unsigned)c->iv[V_IRQ_CPU] : dflt;
}

static uint64_t mask_of(const struct bench_rig_opts *o)
{
	return o->dma_bits >= 64 ? ~0ull : (1ull << o->dma_bits) - 1;
}

static void tx_params(const struct wl_cli *c, struct iopt_wl_tx_params *p)
{
	iopt_wl_tx_default(p, c->proto ? IOPT_WL_UDP : IOPT_WL_TCP);
	SET_U(c, V_STREAMS, p->streams);
	SET_U(c, V_QUEUES, p->queues);
	SET_U(c, V_SEND_BYTES, p->send_bytes);
	SET_U(c, V_SKB_BYTES, p->skb_bytes);
	SET_U(c, V_MSS, p->mss);
	SET_U(c, V_WIRE_OVERHEAD, p->wire_overhead);
	SET_U(c, V_FRAGS, p->frags);
	SET_U(c, V_HEAD_BYTES, p->head_bytes);
	SET_U(c, V_RING_ENTRIES, p->ring_entries);
	SET_U(c, V_SNDBUF_BYTES, p->sndbuf_bytes);
	SET_U(c, V_SEND_CYCLES, p->send_cycles);
	SET_U(c, V_SKB_CYCLES, p->skb_cycles);
	SET_U(c, V_CLEAN_CYCLES, p->clean_cycles);
	SET_U(c, V_IRQ_FRAMES, p->irq_frames);
	SET_U(c, V_IRQ_USECS_NS, p->irq_usecs_ns);
	SET_R(c, R_LINK_GBPS, p->link_gbps);
	SET_R(c, R_BYTE_CYCLES, p->byte_cycles);
	if (!isnan(c->rv[R_DURATION_MS]))
		p->duration_ns = ms_ns(c->rv[R_DURATION_MS]);
	if (!isnan(c->rv[R_WARMUP_MS]))
		p->warmup_ns = ms_ns(c->rv[R_WARMUP_MS]);
	p->irq_cpu = irq_cpu_of(c, p->irq_cpu);
	p->dma_mask = mask_of(&c->rig);
}

static void rx_params(const struct wl_cli *c, struct iopt_wl_rx_params *p)
{
	iopt_wl_rx_default(p);
	SET_U(c, V_STREAMS, p->streams);
	SET_U(c, V_MSS, p->mss);
	SET_U(c, V_WIRE_OVERHEAD, p->wire_overhead);
	SET_U(c, V_RING_ENTRIES, p->ring_entries);
	SET_U(c, V_BUF_BYTES, p->buf_bytes);
	SET_U(c, V_BUDGET, p->budget);
	SET_U(c, V_PKT_CYCLES, p->pkt_cycles);
	SET_U(c, V_IRQ_DELAY_NS, p->irq_delay_ns);
	SET_R(c, R_LINK_GBPS, p->link_gbps);
	SET_R(c, R_BYTE_CYCLES, p->byte_cycles);
	if (!isnan(c->rv[R_DURATION_MS]))
		p->duration_ns = ms_ns(c->rv[R_DURATION_MS]);
	if (!isnan(c->rv[R_WARMUP_MS]))
		p->warmup_ns = ms_ns(c->rv[R_WARMUP_MS]);
	p->irq_cpu = irq_cpu_of(c, p->irq_cpu);
	p->dma_mask = mask_of(&c->rig);
}

static void nvme_params(const struct wl_cli *c, struct iopt_wl_nvme_params *p)
{
	iopt_wl_nvme_default(p);
	SET_U(c, V_JOBS, p->jobs);
	SET_U(c, V_QD, p->iodepth);
	SET_U(c, V_IO_BYTES, p->io_bytes);
	SET_U(c, V_DEV_LATENCY_NS, p->latency_ns);
	SET_U(c, V_SUBMIT_CYCLES, p->submit_cycles);
	SET_U(c, V_COMPLETE_CYCLES, p->complete_cycles);
	SET_R(c, R_DEV_IOPS, p->max_iops);
	if (c->map_per_page)
		p->map_per_page = 1;
	if (!isnan(c->rv[R_DURATION_MS]))
		p->duration_ns = ms_ns(c->rv[R_DURATION_MS]);
	if (!isnan(c->rv[R_WARMUP_MS]))
		p->warmup_ns = ms_ns(c->rv[R_WARMUP_MS]);
	p->irq_cpu = irq_cpu_of(c, p->irq_cpu);
	p->dma_mask = mask_of(&c->rig);
}

static const unsigned dir_prot[] = {
	IOPT_READ | IOPT_WRITE, IOPT_READ /* to the device: it reads */,
	IOPT_WRITE,
};

static void mb_params(const struct wl_cli *c, struct iopt_wl_mapbench_params *p)
{
	iopt_wl_mapbench_default(p);
	p->threads = bench_sim_cpus();
	SET_U(c, V_THREADS, p->threads);
	if (c->iv[V_BUF_BYTES] != WL_UNSET)
		p->npages = (unsigned)(c->iv[V_BUF_BYTES] / BENCH_RIG_PAGE);
	SET_U(c, V_DMA_TRANS_NS, p->dma_trans_ns);
	SET_R(c, R_MEMSET_BYTE_CYCLES, p->memset_byte_cycles);
	if (!isnan(c->rv[R_DURATION_MS]))
		p->duration_ns = ms_ns(c->rv[R_DURATION_MS]);
	p->prot = dir_prot[c->dir];
	p->dma_mask = mask_of(&c->rig);
}

/* The model's thread count, for --share's check. */
static unsigned kind_threads(const struct wl_cli *c)
{
	struct iopt_wl_tx_params tx;
	struct iopt_wl_rx_params rx;
	struct iopt_wl_nvme_params nv;
	struct iopt_wl_mapbench_params mb;

	switch (c->kind) {
	case WL_TX:
		tx_params(c, &tx);
		return tx.streams;
	case WL_RX:
		rx_params(c, &rx);
		return rx.streams;
	case WL_NVME:
		nvme_params(c, &nv);
		return nv.jobs;
	default:
		mb_params(c, &mb);
		return mb.threads;
	}
}

/* What every kind's line ends with. */
struct wl_common {
	uint64_t sync_timeouts, sync_restarts, errors;
	struct bench_rig_v2_polls polls;	/* the run's, SMMUv2 */
	/* The DMA layer's over the whole run (warm-up included). */
	uint64_t flush_alls, viommu_traps, viommu_trap_pages;
	int first_error;
	bool calibrated;
	double cal_value;	/* byte_cycles or submit_cycles */
};

static void json_head(const struct wl_cli *c)
{
	const struct bench_rig_opts *o = &c->rig;

	printf("{\"suite\":\"workload\",\"kind\":\"%s\",\"smmu\":\"%s\","
	       "\"v2_sync\":\"%s\",\"v2_poll\":\"%s\",\"lock\":\"%s\","
	       "\"policy\":\"%s\",\"cmdq\":\"%s\",\"sync\":\"%s\",\"sev\":%s,"
	       "\"sync_timeout_us\":%llu,\"v2_delay_cap_us\":%llu,\"domain_lock\":\"%s\","
	       "\"rcache_flush\":\"%s\",\"pci\":%s,\"iova_start\":%llu,\"iova_end\":%llu,"
	       "\"viommu_trap_ns\":%llu,\"viommu_trap_page_ns\":%llu,\"viommu_trap_map\":%s,\"walk\":\"%s\",\"fq_entries\":%u,"
	       "\"fq_timeout_ms\":%llu,\"fq_timer\":%s,\"hold\":%u,\"cpus\":%u,"
	       "\"dma_bits\":%u,\"iova_walk\":%s,\"walk_node_ns\":%u,",
	       kind_names[c->kind], o->none ? "none" : o->v2 ? "v2" : "v3",
	       o->v2 ? bench_rig_v2_sync_name[o->v2_sync] : "",
	       o->v2 ? bench_rig_v2_poll_name[o->v2_poll] : "",
	       bench_rig_lock_name[o->lock], bench_rig_policy_name[o->policy],
	       o->cmdq == IOPT_SMMUV3_DRV_CMDQ_LOCKED ? "locked" : "lockfree",
	       o->sync == IOPT_SMMUV3_DRV_SYNC_CONS ? "cons" : "msi",
	       o->no_sev || o->v2 || o->none ? "false" : "true",
	       (unsigned long long)o->sync_timeout_us,
	       (unsigned long long)o->v2_delay_cap_us,
	       o->domain_lock ? bench_rig_lock_name[o->domain_lock_kind] : "off",
	       bench_rig_rcache_flush_name[o->rcache_flush],
	       o->pci ? "true" : "false", (unsigned long long)o->iova_start,
	       (unsigned long long)o->iova_end,
	       (unsigned long long)o->trap_ns, (unsigned long long)o->trap_page_ns,
	       o->trap_map ? "true" : "false",
	       bench_rig_walk_name(o), o->fq_entries,
	       (unsigned long long)o->fq_timeout_ms, o->fq_timer ? "true" : "false",
	       o->hold, o->cpus > bench_sim_cpus() ? o->cpus : bench_sim_cpus(),
	       o->dma_bits, o->iova_walk ? "true" : "false", o->walk_node_ns);
}

static void json_tail(const struct wl_cli *c, const struct wl_common *w)
{
	if (w->calibrated)
		printf(",\"calibrated\":{\"%s\":%.6g}",
		       c->kind == WL_NVME ? "submit_cycles" : "byte_cycles",
		       w->cal_value);
	printf(",\"sync_timeouts\":%llu,\"sync_restarts\":%llu,"
	       "\"sync_polls\":%llu,\"sync_polls_active\":%llu,\"sync_waits\":[",
	       (unsigned long long)w->sync_timeouts,
	       (unsigned long long)w->sync_restarts,
	       (unsigned long long)w->polls.reads,
	       (unsigned long long)w->polls.active);
	unsigned most = 0;

	for (unsigned k = 0; k < IOPT_SMMUV2_DRV_SYNC_WAITS; k++) {
		printf("%s%llu", k ? "," : "", (unsigned long long)w->polls.waits[k]);
		if (w->polls.waits[k])
			most = k + 1;
	}
	printf("],\"sync_waits_max\":%u,\"nested_syncs\":%llu,\"errors\":%llu,"
	       "\"first_error\":%d,\"flush_alls\":%llu,\"viommu_traps\":%llu,"
	       "\"viommu_trap_pages\":%llu}\n", most,
	       (unsigned long long)w->polls.nested,
	       (unsigned long long)w->errors, w->first_error,
	       (unsigned long long)w->flush_alls,
	       (unsigned long long)w->viommu_traps,
	       (unsigned long long)w->viommu_trap_pages);
}

/* The table line of a network run. */
static void net_line(const char *kind, unsigned streams, double gbps,
		     double pps, double cpu, uint64_t maps, uint64_t irqs,
		     uint64_t errors)
{
	printf("%s %u streams: %.3f Gbps, %.0f pps, cpu %.3f, maps %llu, "
	       "irqs %llu, errors %llu\n", kind, streams, gbps, pps, cpu,
	       (unsigned long long)maps, (unsigned long long)irqs,
	       (unsigned long long)errors);
}

static int cal_failed(const char *what, int err)
{
	fprintf(stderr, "iopt-bench workload: %s: %s%s\n", what, strerror(-err),
		err == -ERANGE ? " (the link or the device caps the figure "
		"below the target)" : "");
	return 1;
}

/* Calibrate (where asked) and run kind c->kind on rig r; print. */
static int run_kind(const struct wl_cli *c, struct bench_rig *r,
		    struct wl_common *w)
{
	struct iopt_sim *sim = bench_sim();
	struct iopt_sim_params sp;
	double tol = c->cal_tol;
	int ret = 0;

	/* --smmu none: the models' own no-IOMMU path (identity addresses,
	 * no DMA layer), as the calibration runs it. */
	struct iopt_dma *d = c->rig.none ? NULL : r->d;

	iopt_sim_get_params(sim, &sp);
	switch (c->kind) {
	case WL_TX: {
		struct iopt_wl_tx_params p;
		struct iopt_wl_tx_result res;

		tx_params(c, &p);
		if (!isnan(c->rv[R_CAL_GBPS])) {
			ret = iopt_wl_tx_calibrate(&sp, &p, c->rv[R_CAL_GBPS], tol);
			if (ret)
				return cal_failed("iopt_wl_tx_calibrate", ret);
			w->calibrated = true;
			w->cal_value = p.byte_cycles;
		}
		ret = iopt_wl_tx_run(sim, d, &p, &res);
		if (ret)
			break;
		w->errors = res.dma_errors;
		w->first_error = res.first_dma_error;
		if (!c->json) {
			net_line("tx", p.streams, res.gbps, res.pps, res.cpu_util,
				 res.maps, res.irqs, res.dma_errors);
			return 0;
		}
		json_head(c);
		printf("\"proto\":\"%s\",\"streams\":%u,\"queues\":%u,"
		       "\"send_bytes\":%llu,\"skb_bytes\":%llu,\"frags\":%u,"
		       "\"link_gbps\":%g,\"byte_cycles\":%.6g,\"send_cycles\":%llu,"
		       "\"skb_cycles\":%llu,\"clean_cycles\":%llu,\"irq_frames\":%u,"
		       "\"irq_usecs_ns\":%llu,\"irq_cpu\":%d,\"duration_ns\":%llu,"
		       "\"warmup_ns\":%llu,\"gbps\":%.4f,\"pps\":%.0f,\"skbs_per_s\":%.0f,"
		       "\"cpu_util\":%.4f,\"maps\":%llu,\"unmaps\":%llu,\"irqs\":%llu,"
		       "\"waits\":%llu",
		       c->proto ? "udp" : "tcp", p.streams, p.queues,
		       (unsigned long long)p.send_bytes,
		       (unsigned long long)p.skb_bytes, p.frags, p.link_gbps,
		       p.byte_cycles, (unsigned long long)p.send_cycles,
		       (unsigned long long)p.skb_cycles,
		       (unsigned long long)p.clean_cycles, p.irq_frames,
		       (unsigned long long)p.irq_usecs_ns,
		       p.irq_cpu == IOPT_WL_IRQ_SPREAD ? -1 : (int)p.irq_cpu,
		       (unsigned long long)p.duration_ns,
		       (unsigned long long)p.warmup_ns, res.gbps, res.pps,
		       res.skbs_per_s, res.cpu_util, (unsigned long long)res.maps,
		       (unsigned long long)res.unmaps, (unsigned long long)res.irqs,
		       (unsigned long long)res.waits);
		break;
	}
	case WL_RX: {
		struct iopt_wl_rx_params p;
		struct iopt_wl_rx_result res;

		rx_params(c, &p);
		if (!isnan(c->rv[R_CAL_GBPS])) {
			ret = iopt_wl_rx_calibrate(&sp, &p, c->rv[R_CAL_GBPS], tol);
			if (ret)
				return cal_failed("iopt_wl_rx_calibrate", ret);
			w->calibrated = true;
			w->cal_value = p.byte_cycles;
		}
		ret = iopt_wl_rx_run(sim, d, &p, &res);
		if (ret)
			break;
		w->errors = res.dma_errors;
		w->first_error = res.first_dma_error;
		if (!c->json) {
			net_line("rx", p.streams, res.gbps, res.pps, res.cpu_util,
				 res.maps, res.irqs, res.dma_errors);
			return 0;
		}
		json_head(c);
		printf("\"streams\":%u,\"link_gbps\":%g,\"byte_cycles\":%.6g,"
		       "\"pkt_cycles\":%llu,\"budget\":%u,\"ring_entries\":%u,"
		       "\"buf_bytes\":%u,\"irq_cpu\":%d,\"duration_ns\":%llu,"
		       "\"warmup_ns\":%llu,\"gbps\":%.4f,\"pps\":%.0f,\"cpu_util\":%.4f,"
		       "\"maps\":%llu,\"unmaps\":%llu,\"irqs\":%llu,\"stalls\":%llu",
		       p.streams, p.link_gbps, p.byte_cycles,
		       (unsigned long long)p.pkt_cycles, p.budget, p.ring_entries,
		       p.buf_bytes,
		       p.irq_cpu == IOPT_WL_IRQ_SPREAD ? -1 : (int)p.irq_cpu,
		       (unsigned long long)p.duration_ns,
		       (unsigned long long)p.warmup_ns, res.gbps, res.pps,
		       res.cpu_util, (unsigned long long)res.maps,
		       (unsigned long long)res.unmaps, (unsigned long long)res.irqs,
		       (unsigned long long)res.stalls);
		break;
	}
	case WL_NVME: {
		struct iopt_wl_nvme_params p;
		struct iopt_wl_nvme_result res;

		nvme_params(c, &p);
		if (!isnan(c->rv[R_CAL_IOPS])) {
			ret = iopt_wl_nvme_calibrate(&sp, &p, c->rv[R_CAL_IOPS], tol);
			if (ret)
				return cal_failed("iopt_wl_nvme_calibrate", ret);
			w->calibrated = true;
			w->cal_value = (double)p.submit_cycles;
		}
		ret = iopt_wl_nvme_run(sim, d, &p, &res);
		if (ret)
			break;
		w->errors = res.dma_errors;
		w->first_error = res.first_dma_error;
		if (!c->json) {
			printf("nvme %u jobs qd %u: %.0f IOPS, %.2f us, cpu %.3f, "
			       "errors %llu\n", p.jobs, p.iodepth, res.iops,
			       res.lat_us, res.cpu_util,
			       (unsigned long long)res.dma_errors);
			return 0;
		}
		json_head(c);
		printf("\"jobs\":%u,\"qd\":%u,\"io_bytes\":%llu,\"map_per_page\":%s,"
		       "\"dev_latency_ns\":%llu,\"dev_iops\":%g,\"submit_cycles\":%llu,"
		       "\"complete_cycles\":%llu,\"irq_cpu\":%d,\"duration_ns\":%llu,"
		       "\"warmup_ns\":%llu,\"iops\":%.0f,\"lat_us\":%.3f,"
		       "\"cpu_util\":%.4f,\"ios\":%llu,\"maps\":%llu,\"unmaps\":%llu",
		       p.jobs, p.iodepth, (unsigned long long)p.io_bytes,
		       p.map_per_page ? "true" : "false",
		       (unsigned long long)p.latency_ns, p.max_iops,
		       (unsigned long long)p.submit_cycles,
		       (unsigned long long)p.complete_cycles,
		       p.irq_cpu == IOPT_WL_IRQ_SPREAD ? -1 : (int)p.irq_cpu,
		       (unsigned long long)p.duration_ns,
		       (unsigned long long)p.warmup_ns, res.iops, res.lat_us,
		       res.cpu_util, (unsigned long long)res.ios,
		       (unsigned long long)res.maps, (unsigned long long)res.unmaps);
		break;
	}
	default: {
		struct iopt_wl_mapbench_params p;
		struct iopt_wl_mapbench_result res;

		mb_params(c, &p);
		ret = iopt_wl_mapbench_run(sim, d, &p, &res);
		if (ret)
			break;
		w->errors = res.dma_errors;
		w->first_error = res.first_dma_error;
		if (!c->json) {
			printf("mapbench %u threads %u pages: map %.1f us (sd %.1f), "
			       "unmap %.1f us (sd %.1f), %llu loops\n", p.threads,
			       p.npages, res.map_us, res.map_stddev_us, res.unmap_us,
			       res.unmap_stddev_us, (unsigned long long)res.loops);
			return 0;
		}
		json_head(c);
		printf("\"threads\":%u,\"npages\":%u,\"dma_trans_ns\":%llu,"
		       "\"duration_ns\":%llu,\"map_us\":%.1f,\"unmap_us\":%.1f,"
		       "\"map_sd_us\":%.1f,\"unmap_sd_us\":%.1f,\"map_ns\":%.1f,"
		       "\"unmap_ns\":%.1f,\"loops\":%llu",
		       p.threads, p.npages, (unsigned long long)p.dma_trans_ns,
		       (unsigned long long)p.duration_ns, res.map_us, res.unmap_us,
		       res.map_stddev_us, res.unmap_stddev_us, res.map_ns,
		       res.unmap_ns, (unsigned long long)res.loops);
		break;
	}
	}
	if (ret) {
		fprintf(stderr, "iopt-bench workload: the %s run failed: %s\n",
			kind_names[c->kind], strerror(-ret));
		return 1;
	}
	return 0;
}

/* "--irq-cpu spread" / "--irq-cpu=spread" out of argv (bench_parse()
 * takes integers only); sets c->irq_spread. */
static int take_spread(struct wl_cli *c, int argc, char **argv)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--irq-cpu=spread")) {
			c->irq_spread = true;
			continue;
		}
		if (!strcmp(argv[i], "--irq-cpu") && i + 1 < argc &&
		    !strcmp(argv[i + 1], "spread")) {
			c->irq_spread = true;
			i++;
			continue;
		}
		argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

static const char *const proto_names[] = { "tcp", "udp", NULL };
static const char *const dir_names[] = { "bidir", "to", "from", NULL };

int bench_workload_main(int argc, char **argv)
{
	struct wl_cli c = { .cal_tol = 0.005 };
	struct bench_opt opts[NFIELDS + BENCH_RIG_NOPTS + 16];
	bool proto_set, dir_set;
	size_t n = 0;
	int status;

	for (unsigned i = 0; i < V_NINT; i++)
		c.iv[i] = WL_UNSET;
	for (unsigned i = 0; i < R_NREAL; i++)
		c.rv[i] = NAN;
	c.proto = c.dir = ~0u;	/* unset: tcp, bidir */
	memset(opts, 0, sizeof(opts));
	opts[n++] = (struct bench_opt){ "kind", BENCH_CHOICE, &c.kind,
		.choices = kind_names, .help = "the workload model (tx)" };
	opts[n++] = (struct bench_opt){ "proto", BENCH_CHOICE, &c.proto,
		.choices = proto_names, .help = "tx: iperf TCP or netperf UDP "
		"(tcp)" };
	opts[n++] = (struct bench_opt){ "dir", BENCH_CHOICE, &c.dir,
		.choices = dir_names, .help = "mapbench: DMA direction (bidir)" };
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct wl_field *f = &fields[i];

		opts[n++] = (struct bench_opt){
			f->name, f->real ? BENCH_REAL : BENCH_U64,
			f->real ? (void *)&c.rv[f->idx] : (void *)&c.iv[f->idx],
			f->arg, f->help, .min = f->min, .max = f->max,
			.lo = f->lo, .hi = f->hi,
		};
	}
	opts[n++] = (struct bench_opt){ "map-per-page", BENCH_FLAG,
		&c.map_per_page, .help = "nvme: one mapping per page, not one "
		"scatter list" };
	opts[n++] = (struct bench_opt){ "share", BENCH_FLAG, &c.share,
		.help = "more threads than --sim CPUs: they share them\nunder "
		"the scheduler (iperf -P64 on 8 CPUs)" };
	opts[n++] = (struct bench_opt){ "calibrate-tol", BENCH_REAL, &c.cal_tol,
		"X", "calibration's relative tolerance (0.005)", .lo = 1e-6,
		.hi = 0.5 };
	bench_rig_opts_default(&c.rig);
	n += bench_rig_opts(&c.rig, opts + n);
	opts[n++] = (struct bench_opt){ "json", BENCH_FLAG, &c.json,
		.help = "one JSON object per line" };
	const struct bench_cli cli = {
		.suite = "workload",
		.about = "one workload model (network TX/RX, NVMe, dma_map_"
			 "benchmark) on the simulation\nover the dma suite's "
			 "rig; one line per run (docs/workload.md). Needs\n"
			 "--sim N. --irq-cpu also takes spread.",
		.opts = opts,
	};

	argc = take_spread(&c, argc, argv);
	if (!bench_parse(&cli, argc, argv, &status))
		return status;
	proto_set = c.proto != ~0u;
	dir_set = c.dir != ~0u;
	if (!proto_set)
		c.proto = 0;
	if (!dir_set)
		c.dir = 0;
	bench_rig_resolve(&c.rig);
	/* Options of another kind: a mistake, not a no-op. */
	for (size_t i = 0; i < NFIELDS; i++)
		if (is_set(&c, &fields[i]) && !(fields[i].kinds & (1u << c.kind))) {
			fprintf(stderr, "iopt-bench workload: --%s does not apply to "
				"--kind %s\n", fields[i].name, kind_names[c.kind]);
			return 2;
		}
	if ((proto_set && c.kind != WL_TX) || (dir_set && c.kind != WL_MAPBENCH) ||
	    (c.map_per_page && c.kind != WL_NVME) ||
	    (c.irq_spread && c.kind == WL_MAPBENCH)) {
		fprintf(stderr, "iopt-bench workload: --%s does not apply to --kind "
			"%s\n", proto_set && c.kind != WL_TX ? "proto" :
			dir_set && c.kind != WL_MAPBENCH ? "dir" :
			c.map_per_page && c.kind != WL_NVME ? "map-per-page" :
			"irq-cpu", kind_names[c.kind]);
		return 2;
	}
	if (c.iv[V_BUF_BYTES] != WL_UNSET && c.kind == WL_MAPBENCH &&
	    c.iv[V_BUF_BYTES] % BENCH_RIG_PAGE) {
		fprintf(stderr, "iopt-bench workload: --buf-bytes must be a "
			"multiple of 4096 for mapbench\n");
		return 2;
	}
	if (!bench_sim()) {
		fprintf(stderr, "iopt-bench workload: the models run on the "
			"simulation only: give --sim N (docs/workload.md)\n");
		return 2;
	}
	if (c.rig.runner) {
		fprintf(stderr, "iopt-bench workload: --clock runner is not "
			"available with --sim\n");
		return 2;
	}
	unsigned nthreads = kind_threads(&c), ncpus = bench_sim_cpus();

	if (nthreads > ncpus && !c.share) {
		fprintf(stderr, "iopt-bench workload: %u threads on %u CPUs: give "
			"--share to let them share the CPUs\n", nthreads, ncpus);
		return 2;
	}
	if (c.iv[V_IRQ_CPU] != WL_UNSET && c.iv[V_IRQ_CPU] >= ncpus) {
		fprintf(stderr, "iopt-bench workload: --irq-cpu %llu: the "
			"simulation has %u CPUs\n",
			(unsigned long long)c.iv[V_IRQ_CPU], ncpus);
		return 2;
	}

	struct bench_rig r;
	struct iopt_smmuv3_drv_stats s0, s1;
	struct wl_common w = { 0 };
	uint64_t restarts0;
	struct bench_rig_v2_polls p0;
	int ret = bench_rig_up(&r, &c.rig, ncpus);

	if (ret) {
		fprintf(stderr, "iopt-bench workload: setup failed: %s\n",
			strerror(-ret));
		bench_rig_down(&r);
		return 1;
	}
	restarts0 = bench_rig_sync_restarts(&r);
	bench_rig_drv_stats(&r, &s0);
	bench_rig_v2_polls(&r, &p0);
	/* The line's tail needs the driver's counters after the run: the
	 * kind's part is printed first, without its newline. */
	ret = run_kind(&c, &r, &w);
	bench_rig_drv_stats(&r, &s1);
	w.sync_timeouts = s1.sync_timeouts - s0.sync_timeouts;
	w.sync_restarts = bench_rig_sync_restarts(&r) - restarts0;
	bench_rig_v2_polls(&r, &w.polls);
	w.polls.reads -= p0.reads;
	w.polls.active -= p0.active;
	w.polls.nested -= p0.nested;
	for (unsigned k = 0; k < IOPT_SMMUV2_DRV_SYNC_WAITS; k++)
		w.polls.waits[k] -= p0.waits[k];
	{
		struct iopt_dma_stats ds;

		iopt_dma_get_stats(r.d, &ds);
		w.flush_alls = ds.flush_alls;
		w.viommu_traps = ds.viommu_traps;
		w.viommu_trap_pages = ds.viommu_trap_pages;
	}
	if (!ret && c.json)
		json_tail(&c, &w);
	else if (!ret)
		printf("  sync timeouts %llu, sync restarts %llu\n",
		       (unsigned long long)w.sync_timeouts,
		       (unsigned long long)w.sync_restarts);
	fflush(stdout);
	bench_rig_down(&r);
	return ret;
}
