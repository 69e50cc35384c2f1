/* SPDX-License-Identifier: MIT */
/*
 * The workload models' defaults (docs/workload.md gives each one's
 * source) and the checks of their ranges. In both libraries.
 */
#include <errno.h>
#include <string.h>

#include "wl_internal.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define PADDR_BASE 0x100000000ull	/* 4 GiB */

void iopt_wl_tx_default(struct iopt_wl_tx_params *p, enum iopt_wl_tx_kind kind)
{
	memset(p, 0, sizeof(*p));
	p->streams = 1;
	p->queues = 1;
	p->link_gbps = 50;
	p->send_cycles = 2500;
	p->skb_cycles = 5000;
	p->byte_cycles = 0.5;
	p->clean_cycles = 1000;
	p->irq_cpu = IOPT_WL_IRQ_SPREAD;
	p->duration_ns = 4000000;
	p->warmup_ns = 1000000;
	p->dma_mask = UINT64_MAX;
	p->paddr = PADDR_BASE;
	if (kind == IOPT_WL_UDP) {
		p->send_bytes = 32768;
		p->skb_bytes = 1480;
		p->mss = 1480;
		p->wire_overhead = 58;
		p->frags = 1;
		p->head_bytes = 42;
		p->link_gbps = 100;
		p->ring_entries = 1024;
		p->sndbuf_bytes = 212992;
		p->irq_frames = 32;
		p->irq_usecs_ns = 20000;
		return;
	}
	p->send_bytes = 128 * KIB;
	p->skb_bytes = 45 * 1448;
	p->mss = 1448;
	p->wire_overhead = 90;
	p->frags = 2;
	p->head_bytes = 66;
	p->ring_entries = 512;
	p->sndbuf_bytes = 256 * KIB;
	p->irq_frames = 30;
	p->irq_usecs_ns = 28000;
}

void iopt_wl_rx_default(struct iopt_wl_rx_params *p)
{
	memset(p, 0, sizeof(*p));
	p->streams = 1;
	p->mss = 1448;
	p->wire_overhead = 90;
	p->link_gbps = 50;
	p->ring_entries = 512;
	p->buf_bytes = 2048;
	p->budget = 64;
	p->pkt_cycles = 2000;
	p->byte_cycles = 0.5;
	p->irq_delay_ns = 10000;
	p->irq_cpu = IOPT_WL_IRQ_SPREAD;
	p->duration_ns = 4000000;
	p->warmup_ns = 1000000;
	p->dma_mask = UINT64_MAX;
	p->paddr = PADDR_BASE;
}

void iopt_wl_nvme_default(struct iopt_wl_nvme_params *p)
{
	memset(p, 0, sizeof(*p));
	p->jobs = 1;
	p->iodepth = 1;
	p->io_bytes = 4096;
	p->latency_ns = 80000;
	p->submit_cycles = 5000;
	p->complete_cycles = 2500;
	p->irq_cpu = IOPT_WL_IRQ_SPREAD;
	p->duration_ns = 4000000;
	p->warmup_ns = 1000000;
	p->dma_mask = UINT64_MAX;
	p->paddr = PADDR_BASE;
}

void iopt_wl_mapbench_default(struct iopt_wl_mapbench_params *p)
{
	memset(p, 0, sizeof(*p));
	p->threads = 1;
	p->npages = 1;
	p->prot = IOPT_READ | IOPT_WRITE;
	p->memset_byte_cycles = 0.125;
	p->duration_ns = 1000000;
	p->dma_mask = UINT64_MAX;
	p->paddr = PADDR_BASE;
}

static bool irq_cpu_ok(unsigned irq_cpu, unsigned cpus)
{
	return irq_cpu == IOPT_WL_IRQ_SPREAD || irq_cpu < cpus;
}

static bool window_ok(uint64_t duration, uint64_t warmup)
{
	return duration > warmup;
}

static bool paddr_ok(uint64_t paddr)
{
	return !(paddr & 0xfff) && paddr < (1ull << 47);
}

int wl_tx_check(const struct iopt_wl_tx_params *p, unsigned cpus)
{
	if (p->streams < 1 || p->streams > IOPT_SIM_MAX_CPUS ||
	    p->queues < 1 || p->queues > 256 || !p->send_bytes ||
	    !p->skb_bytes || p->skb_bytes > MIB || !p->mss ||
	    p->frags < 1 || p->frags > WL_TX_MAX_FRAGS ||
	    !(p->link_gbps > 0) || p->ring_entries < p->frags + 1 ||
	    p->sndbuf_bytes < p->skb_bytes || !(p->byte_cycles >= 0) ||
	    !p->irq_frames || !p->irq_usecs_ns ||
	    !irq_cpu_ok(p->irq_cpu, cpus) ||
	    !window_ok(p->duration_ns, p->warmup_ns) ||
	    !wl_mask_ok(p->dma_mask) || !paddr_ok(p->paddr))
		return -EINVAL;
	return 0;
}

int wl_rx_check(const struct iopt_wl_rx_params *p, unsigned cpus)
{
	if (p->streams < 1 || p->streams > 256 || !p->mss ||
	    !p->buf_bytes || p->buf_bytes > 64 * KIB || p->mss > p->buf_bytes ||
	    !(p->link_gbps > 0) || !p->ring_entries || !p->budget ||
	    !(p->byte_cycles >= 0) || !irq_cpu_ok(p->irq_cpu, cpus) ||
	    !window_ok(p->duration_ns, p->warmup_ns) ||
	    !wl_mask_ok(p->dma_mask) || !paddr_ok(p->paddr))
		return -EINVAL;
	return 0;
}

int wl_nvme_check(const struct iopt_wl_nvme_params *p, unsigned cpus)
{
	if (p->jobs < 1 || p->jobs > IOPT_SIM_MAX_CPUS || p->iodepth < 1 ||
	    p->iodepth > 4096 || p->io_bytes < 4096 || p->io_bytes > MIB ||
	    (p->io_bytes & 0xfff) || !(p->max_iops >= 0) ||
	    !irq_cpu_ok(p->irq_cpu, cpus) ||
	    !window_ok(p->duration_ns, p->warmup_ns) ||
	    !wl_mask_ok(p->dma_mask) || !paddr_ok(p->paddr))
		return -EINVAL;
	return 0;
}

int wl_mapbench_check(const struct iopt_wl_mapbench_params *p)
{
	if (p->threads < 1 || p->threads > IOPT_SIM_MAX_CPUS ||
	    p->npages < 1 || p->npages > 1024 ||
	    !(p->prot & (IOPT_READ | IOPT_WRITE)) ||
	    (p->prot & ~(unsigned)(IOPT_READ | IOPT_WRITE)) ||
	    !(p->memset_byte_cycles >= 0) || !p->duration_ns ||
	    !wl_mask_ok(p->dma_mask) || !paddr_ok(p->paddr))
		return -EINVAL;
	return 0;
}
