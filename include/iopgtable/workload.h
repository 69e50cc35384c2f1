/* SPDX-License-Identifier: MIT */
/*
 * Workload models: the CPU work and device behaviour of the published
 * experiments (a TCP or UDP sender, a TCP receiver, NVMe random reads,
 * the kernel's dma_map_benchmark) on a simulation (iopgtable/sim.h), with
 * every DMA mapping they make going through a DMA domain (iopgtable/dma.h)
 * on the simulated CPUs. docs/workload.md gives each model's mechanics and
 * each default's source.
 *
 * Every model runs on a struct iopt_sim (created by the caller, any
 * number of CPUs) and a DMA domain, or NULL for the no-IOMMU baseline:
 * then a buffer's DMA address is its physical address and no IOMMU code
 * runs. A domain must have been created with nr_cpus >= the simulation's
 * CPUs (every map and unmap passes the simulated CPU it runs on) and a
 * driver on the simulation's timeline (IOPT_TESTBED_CLOCK_SIM, or a
 * virtual clock). The models read the simulation's cpu_ghz and cpus.
 *
 * A run is one iopt_sim_run_threads() of the model's threads, starting at
 * the simulation's current time; it ends with every mapping it made
 * unmapped, no interrupt of its own still pending and its memory freed,
 * so runs may follow one another on one simulation. Throughput is counted
 * in the window [warmup_ns, duration_ns) from the run's start.
 *
 * Results are in the original experiments' units (Gbps, IOPS, us). CPU
 * utilisation is the cycles every thread and interrupt ran (the
 * simulation's per-thread cycle counts) over cpus x the run's length.
 *
 * Errors, for every run function: 0 and *r; -EINVAL: a NULL sim, params
 * or result, or a parameter outside the range its field's comment gives
 * (nothing run, *r untouched); -ENOMEM; -ENOTSUP in the host library; or
 * the simulation's error (-EDEADLK, -ETIMEDOUT, -EBUSY from
 * iopt_sim_run_threads()). A DMA map or unmap that fails does not stop
 * the run: the packet or I/O is dropped (as a driver drops an skb whose
 * mapping failed), the failure counts in dma_errors and its errno in
 * first_dma_error.
 *
 * Concurrency: from the host context only (not from inside a run), one
 * call at a time per simulation. The *_default() functions never fail
 * and run anywhere, in the host library too.
 */
#ifndef IOPGTABLE_WORKLOAD_H
#define IOPGTABLE_WORKLOAD_H

#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/sim.h>

#ifdef __cplusplus
extern "C" {
#endif

struct iopt_dma;

/* irq_cpu: queue (or job) i's interrupt on CPU i % cpus. */
#define IOPT_WL_IRQ_SPREAD 0xffffffffu

/* ---- network transmit ------------------------------------------------- */

/* Presets of iopt_wl_tx_default(). */
enum iopt_wl_tx_kind {
	IOPT_WL_TCP = 0,	/* iperf: 128 KiB writes, TSO 64 KiB skbs */
	IOPT_WL_UDP = 1,	/* netperf UDP_STREAM: 32 KiB datagrams, IP fragments */
};

/*
 * streams sending threads (thread i starts on CPU i % cpus; more threads
 * than CPUs share them under the scheduler) each loop send(): send_cycles,
 * then per skb of up to skb_bytes payload: byte_cycles per payload byte
 * (copy, checksum) and skb_cycles (the stack and the driver's xmit), a
 * DMA mapping of the skb's head (head_bytes, if nonzero) and one per
 * fragment (the payload split into frags mappings), one TX descriptor per
 * mapping on the stream's queue (stream i on queue i % queues). The NIC
 * sends skbs in posting order over one link of link_gbps, each as
 * ceil(payload / mss) wire packets of mss + wire_overhead bytes, and
 * raises its queue's completion interrupt irq_frames skbs after the
 * last one or irq_usecs_ns after the first completion not yet signalled,
 * whichever comes first; the handler, on irq_cpu, unmaps each completed
 * skb (clean_cycles each) and frees its descriptors. A sender sleeps
 * while its queue lacks descriptors for an skb or while it has more than
 * sndbuf_bytes posted and not completed (Linux stops the queue and the
 * socket waits for write space); the completion handler wakes it.
 */
struct iopt_wl_tx_params {
	unsigned streams;		/* 1 .. IOPT_SIM_MAX_CPUS */
	unsigned queues;		/* 1 .. 256 */
	uint64_t send_bytes;		/* per send(), >= 1 */
	uint64_t skb_bytes;		/* payload per skb, 1 .. 1 MiB */
	uint32_t mss;			/* payload per wire packet, >= 1 */
	uint32_t wire_overhead;		/* headers, preamble, gap per wire packet */
	unsigned frags;			/* payload mappings per skb, 1 .. 64 */
	uint32_t head_bytes;		/* the head's mapping; 0: none */
	double link_gbps;		/* > 0 */
	unsigned ring_entries;		/* descriptors per queue, >= frags + 1 */
	uint64_t sndbuf_bytes;		/* per stream in flight, >= skb_bytes */
	uint64_t send_cycles;
	uint64_t skb_cycles;
	double byte_cycles;		/* >= 0 */
	uint64_t clean_cycles;		/* per completed skb, in the handler */
	unsigned irq_frames;		/* >= 1 */
	uint64_t irq_usecs_ns;		/* >= 1 */
	unsigned irq_cpu;		/* < cpus, or IOPT_WL_IRQ_SPREAD */
	uint64_t duration_ns;		/* > warmup_ns */
	uint64_t warmup_ns;
	uint64_t dma_mask;		/* 2^n - 1 */
	uint64_t paddr;			/* buffers' physical base (4K aligned) */
};

struct iopt_wl_tx_result {
	double gbps;			/* payload bits completed in the window */
	double pps;			/* wire packets per second */
	double skbs_per_s;
	double cpu_util;		/* 0 .. 1 */
	uint64_t bytes, packets, skbs;	/* in the window */
	uint64_t maps, unmaps;		/* whole run */
	uint64_t irqs;			/* completion interrupts taken */
	uint64_t waits;			/* times a sender slept for space */
	uint64_t dma_errors;
	int first_dma_error;
};

IOPT_API void iopt_wl_tx_default(struct iopt_wl_tx_params *p,
				 enum iopt_wl_tx_kind kind);
IOPT_API int iopt_wl_tx_run(struct iopt_sim *sim, struct iopt_dma *d,
			    const struct iopt_wl_tx_params *p,
			    struct iopt_wl_tx_result *r);

/* ---- network receive -------------------------------------------------- */

/*
 * streams TCP streams, each on its own RX queue (RSS) whose interrupt is
 * on irq_cpu. Each queue's ring holds ring_entries buffers of buf_bytes,
 * mapped before the NIC starts. The link is shared fairly: each queue
 * receives at link_gbps / streams, a packet of mss payload every
 * (mss + wire_overhead) bytes of its share, into the next posted buffer;
 * a queue without a posted buffer holds its sender back (TCP's window:
 * no loss is modelled). The interrupt, irq_delay_ns after a packet
 * arrives at a queue whose interrupt is enabled, runs NAPI polls: up to
 * budget packets each, per packet pkt_cycles + byte_cycles x mss of stack
 * work, the buffer unmapped and a fresh one mapped and posted; after a
 * full budget the handler returns and the poll is raised again at once
 * (the softirq's next round), else the interrupt is enabled again.
 */
struct iopt_wl_rx_params {
	unsigned streams;		/* 1 .. 256 */
	uint32_t mss;			/* >= 1, <= buf_bytes */
	uint32_t wire_overhead;
	double link_gbps;		/* > 0 */
	unsigned ring_entries;		/* >= 1 */
	uint32_t buf_bytes;		/* 1 .. 64 KiB */
	unsigned budget;		/* >= 1 */
	uint64_t pkt_cycles;
	double byte_cycles;		/* >= 0 */
	uint64_t irq_delay_ns;
	unsigned irq_cpu;		/* < cpus, or IOPT_WL_IRQ_SPREAD */
	uint64_t duration_ns;		/* > warmup_ns */
	uint64_t warmup_ns;
	uint64_t dma_mask;
	uint64_t paddr;
};

struct iopt_wl_rx_result {
	double gbps;			/* payload bits processed in the window */
	double pps;
	double cpu_util;
	uint64_t bytes, packets;	/* in the window */
	uint64_t maps, unmaps;
	uint64_t irqs;			/* NAPI rounds (handler runs) */
	uint64_t stalls;		/* packets that waited for a buffer */
	uint64_t dma_errors;
	int first_dma_error;
};

IOPT_API void iopt_wl_rx_default(struct iopt_wl_rx_params *p);
IOPT_API int iopt_wl_rx_run(struct iopt_sim *sim, struct iopt_dma *d,
			    const struct iopt_wl_rx_params *p,
			    struct iopt_wl_rx_result *r);

/* ---- NVMe ----------------------------------------------------------- */

/*
 * jobs threads (fio jobs, thread i on CPU i % cpus) each keep iodepth
 * reads of io_bytes in flight: per I/O submit_cycles, a mapping of its
 * io_bytes / 4096 pages (physically scattered) as one scatter list
 * (iopt_dma_map_sg: one IOVA range for the list, as Linux's dma-iommu
 * maps one) or, with map_per_page, one iopt_dma_map per page; the device
 * completes it latency_ns after submission, but at most max_iops
 * completions a second overall (0: no cap); the completion interrupt
 * (on the job's CPU, or irq_cpu) unmaps, spends complete_cycles and
 * wakes the job, which sleeps while iodepth I/Os are in flight.
 */
struct iopt_wl_nvme_params {
	unsigned jobs;			/* 1 .. IOPT_SIM_MAX_CPUS */
	unsigned iodepth;		/* 1 .. 4096 */
	uint64_t io_bytes;		/* multiple of 4096, 4 KiB .. 1 MiB */
	int map_per_page;		/* 0: one scatter-list mapping */
	uint64_t latency_ns;
	double max_iops;		/* >= 0; 0: no cap */
	uint64_t submit_cycles;
	uint64_t complete_cycles;
	unsigned irq_cpu;		/* < cpus, or IOPT_WL_IRQ_SPREAD (the job's CPU) */
	uint64_t duration_ns;		/* > warmup_ns */
	uint64_t warmup_ns;
	uint64_t dma_mask;
	uint64_t paddr;
};

struct iopt_wl_nvme_result {
	double iops;			/* completions in the window */
	double lat_us;			/* mean submit-to-completion-handled */
	double cpu_util;
	uint64_t ios;			/* in the window */
	uint64_t maps, unmaps;		/* map calls (sg lists count one) */
	uint64_t dma_errors;
	int first_dma_error;
};

IOPT_API void iopt_wl_nvme_default(struct iopt_wl_nvme_params *p);
IOPT_API int iopt_wl_nvme_run(struct iopt_sim *sim, struct iopt_dma *d,
			      const struct iopt_wl_nvme_params *p,
			      struct iopt_wl_nvme_result *r);

/* ---- dma_map_benchmark ---------------------------------------------- */

/*
 * Linux's kernel/dma/map_benchmark.c: threads threads each loop, for
 * duration_ns: memset the buffer (unless the device only writes it:
 * prot without IOPT_READ), read the clock, map npages x 4096 bytes, read
 * the clock, busy-wait dma_trans_ns, read the clock, unmap, read the
 * clock; each latency truncated to 100 ns units, summed with its square,
 * as the kernel does. The averages and standard deviations come out as
 * the kernel's tool prints them (us, one decimal of 100 ns units: the
 * integer arithmetic of the kernel), and exactly, in ns.
 */
struct iopt_wl_mapbench_params {
	unsigned threads;		/* 1 .. IOPT_SIM_MAX_CPUS */
	unsigned npages;		/* 1 .. 1024 */
	unsigned prot;			/* IOPT_READ | IOPT_WRITE (bidirectional) */
	uint64_t dma_trans_ns;
	double memset_byte_cycles;	/* >= 0 */
	uint64_t duration_ns;		/* > 0 */
	uint64_t dma_mask;
	uint64_t paddr;
};

struct iopt_wl_mapbench_result {
	double map_us, map_stddev_us;	/* as the kernel's tool prints them */
	double unmap_us, unmap_stddev_us;
	double map_ns, unmap_ns;	/* exact means */
	uint64_t loops;
	uint64_t dma_errors;
	int first_dma_error;
};

IOPT_API void iopt_wl_mapbench_default(struct iopt_wl_mapbench_params *p);
IOPT_API int iopt_wl_mapbench_run(struct iopt_sim *sim, struct iopt_dma *d,
				  const struct iopt_wl_mapbench_params *p,
				  struct iopt_wl_mapbench_result *r);

/* ---- calibration from the no-IOMMU baseline -------------------------- */

/*
 * Find the workload cost that makes the model reach a published no-IOMMU
 * figure: byte_cycles for TX (target Gbps) and RX (target Gbps),
 * submit_cycles for NVMe (target IOPS). Each evaluation is a run on a
 * fresh simulation made from *sp without an IOMMU (d NULL); the figure
 * falls monotonically as the cost grows, and a bisection narrows the
 * cost until the figure is within tol (relative, e.g. 0.005) of the
 * target or 40 evaluations have run. On success the field is set in *p
 * and 0 returned; -ERANGE: the target is above what a zero cost reaches
 * (the link or the device caps it), *p unchanged; -EINVAL: NULL
 * arguments, a target not positive, tol not in (0, 1), or *p invalid;
 * the run's errors otherwise. Deterministic: the same inputs give the
 * same cost.
 */
IOPT_API int iopt_wl_tx_calibrate(const struct iopt_sim_params *sp,
				  struct iopt_wl_tx_params *p, double gbps,
				  double tol);
IOPT_API int iopt_wl_rx_calibrate(const struct iopt_sim_params *sp,
				  struct iopt_wl_rx_params *p, double gbps,
				  double tol);
IOPT_API int iopt_wl_nvme_calibrate(const struct iopt_sim_params *sp,
				    struct iopt_wl_nvme_params *p, double iops,
				    double tol);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_WORKLOAD_H */
