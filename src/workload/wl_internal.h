/* SPDX-License-Identifier: MIT */
/*
 * What the workload models (iopgtable/workload.h) share: the DMA calls
 * with the no-IOMMU path, the wait a thread sleeps in until a handler
 * wakes it, time conversions and the run's bookkeeping.
 *
 * Only the simulation build compiles these files (the host library has
 * wl_stub.c). The models' state is the simulated machine's: what the
 * NIC or the SSD holds (a link's next free cycle, an arrival schedule) is
 * the device's and is updated in plain memory, which is exact because
 * exactly one simulated CPU runs at a time and switches happen only at
 * platform operations (docs/sim.md, "How it runs"); what CPUs share (a
 * ring's counters, a job's free I/Os) is under a spinlock taken with
 * local interrupts off, as a driver's queue lock is taken against its
 * completion interrupt.
 */
#ifndef IOPT_WL_INTERNAL_H
#define IOPT_WL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/dma.h>
#include <iopgtable/sim.h>
#include <iopgtable/workload.h>

#include "../platform/platform.h"

/* The simulation's clock and CPU count. */
struct wl_machine {
	double ghz;
	unsigned cpus;
};

void wl_machine(const struct iopt_sim *sim, struct wl_machine *m);

static inline uint64_t wl_ns_to_cyc(const struct wl_machine *m, uint64_t ns)
{
	return (uint64_t)((double)ns * m->ghz + 0.5);
}

/* DMA failures of a run: how many, and the first one's errno. */
struct wl_err {
	uint64_t n;
	int first;
};

static inline void wl_err_note(struct wl_err *e, int err)
{
	if (!e->n++)
		e->first = err;
}

/*
 * Map and unmap through d as the calling simulated CPU, or, with d NULL
 * (no IOMMU), the DMA address is the physical address and nothing runs.
 * 0 or the DMA layer's errno.
 *
 * Each call runs with local interrupts off: Linux's xmit runs with
 * bottom halves off, so the NAPI completion never interrupts it on its
 * CPU; the models do the same for every call, which for the NVMe
 * submission defers a completion by at most one map (docs/workload.md,
 * "Interrupts and the DMA calls"). The library's own spinlocks defer
 * interrupts as spin_lock_irqsave() does in any case (docs/sim.md,
 * "Interrupts").
 */
int wl_map(struct iopt_dma *d, uint64_t paddr, uint64_t size, unsigned prot,
	   uint64_t mask, uint64_t *iova);
int wl_unmap(struct iopt_dma *d, uint64_t iova, uint64_t size);
int wl_map_sg(struct iopt_dma *d, const struct iopt_dma_seg *sg, size_t n,
	      unsigned prot, uint64_t mask, uint64_t *iova, uint64_t *total);
int wl_unmap_sg(struct iopt_dma *d, uint64_t iova, uint64_t total);

/*
 * A thread's wait for a handler: a sleeping mutex used as a binary
 * semaphore. Its thread takes it once at start (wl_wait_init, from that
 * thread); wl_wait_sleep() then blocks until wl_wait_kick() has been
 * called since the last sleep (at once if it has). The simulation's mutex
 * is handed to its first waiter at the unlocker's time from any context,
 * a handler included, where unlocking never blocks: the wake-up a
 * completion handler gives a socket or an I/O waiter (Linux's
 * wake_up() on a wait queue). The caller tracks whether the thread
 * waits (under its own lock) so that every kick matches one sleep.
 */
struct wl_wait {
	struct plat_mutex m;
	bool waiting;		/* under the caller's lock */
};

void wl_wait_init(struct wl_wait *w);
void wl_wait_sleep(struct wl_wait *w);
void wl_wait_kick(struct wl_wait *w);

/*
 * Zeroed memory for n objects that CPUs share through platform operations
 * (locks, the waits' mutexes), each object on lines of its own: declare
 * the type WL_LINE_ALIGNED. The simulation charges per 64-byte line, so
 * objects sharing a line at an address-dependent offset would make a
 * run's costs depend on where the host's allocator put them. NULL when
 * out of memory; free() releases it.
 */
#define WL_LINE 64
#define WL_LINE_ALIGNED __attribute__((aligned(WL_LINE)))
void *wl_calloc_lines(size_t n, size_t size);

/* Sleep the calling simulated thread until cycle at (now if passed). */
void wl_sleep_until(const struct wl_machine *m, uint64_t at);

/* Work of cycles plus a fractional rate carried in *frac. */
void wl_work(double cycles, double *frac);

/*
 * CPU accounting of a run: the simulation's cycle counts of all threads
 * and its time before (wl_usage_begin) and after (wl_usage_end, the
 * utilisation of the cpus CPUs over the run).
 */
struct wl_usage {
	uint64_t busy, start;
};

void wl_usage_begin(const struct iopt_sim *sim, struct wl_usage *u);
double wl_usage_end(const struct iopt_sim *sim, const struct wl_usage *u,
		    unsigned cpus);

/* The CPU of queue or job i's interrupt. */
static inline unsigned wl_irq_cpu(unsigned irq_cpu, unsigned i, unsigned cpus)
{
	return irq_cpu == IOPT_WL_IRQ_SPREAD ? i % cpus : irq_cpu;
}

/* dma_mask is 2^n - 1 (n >= 12). */
static inline bool wl_mask_ok(uint64_t mask)
{
	return !(mask & (mask + 1)) && mask >= 0xfff;
}

/* Mappings of one skb's payload at most (MAX_SKB_FRAGS is 17). */
#define WL_TX_MAX_FRAGS 64

/* Parameter checks (wl_params.c): 0 or -EINVAL. */
int wl_tx_check(const struct iopt_wl_tx_params *p, unsigned cpus);
int wl_rx_check(const struct iopt_wl_rx_params *p, unsigned cpus);
int wl_nvme_check(const struct iopt_wl_nvme_params *p, unsigned cpus);
int wl_mapbench_check(const struct iopt_wl_mapbench_params *p);

#endif /* IOPT_WL_INTERNAL_H */
