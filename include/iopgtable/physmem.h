/* SPDX-License-Identifier: MIT */
/*
 * Simulated physical memory: a window of physical addresses [base,
 * base + size) backed sparsely by host memory in 2 MiB frames, created on
 * first use, with an allocator of naturally aligned power-of-two blocks.
 *
 * It lets page tables, stream tables and queues live at physical
 * addresses that are not host addresses (for example below 4 GiB for v7s,
 * or above 2^48 for 52-bit LPAE), and lets a model read and write them by
 * physical address the way hardware does.
 *
 * Concurrency: every function may be called from any thread. Translation
 * (iopt_physmem_ptr) is lock-free; allocation and freeing take a mutex.
 */
#ifndef IOPGTABLE_PHYSMEM_H
#define IOPGTABLE_PHYSMEM_H

#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/pgtable.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOPT_PHYSMEM_FRAME (2u << 20)	/* backing granule and largest block */

struct iopt_physmem;

/*
 * Create a window of size bytes at physical address base. base and size
 * must be multiples of IOPT_PHYSMEM_FRAME, size non-zero, and the window
 * must not wrap. Returns 0, -EINVAL or -ENOMEM.
 */
IOPT_API int iopt_physmem_create(uint64_t base, uint64_t size,
				 struct iopt_physmem **out);

/* Free the window and all its host memory. No other call may be running. */
IOPT_API void iopt_physmem_destroy(struct iopt_physmem *pm);

/*
 * Host pointer for [pa, pa + len), which must lie inside one frame and the
 * window; the frame is created (zeroed) if needed. NULL if outside the
 * window, crossing a frame, or out of memory. The host address has pa's
 * offset in its 4 KiB page (frames are page aligned), so the memory's host
 * cache lines are its physical ones.
 */
IOPT_API void *iopt_physmem_ptr(struct iopt_physmem *pm, uint64_t pa,
				size_t len);

/*
 * Allocate size bytes (a power of two from 64 bytes to IOPT_PHYSMEM_FRAME)
 * aligned to size, zeroed. Returns 0 and *pa, -EINVAL (bad size) or
 * -ENOMEM (window full or host memory exhausted).
 */
IOPT_API int iopt_physmem_alloc(struct iopt_physmem *pm, size_t size,
				uint64_t *pa);

/* Free a block from iopt_physmem_alloc(); -EINVAL if it is not one. */
IOPT_API int iopt_physmem_free(struct iopt_physmem *pm, uint64_t pa,
			       size_t size);

/* Bytes currently allocated. */
IOPT_API uint64_t iopt_physmem_used(const struct iopt_physmem *pm);

/*
 * Table-memory operations for struct iopt_pgtable_cfg, with the physmem as
 * mem_ctx. Their sync cleans the range to the point of coherency: nothing
 * on the host, where a walker that reads the physmem sees the CPU's writes;
 * on the simulation it costs the calling CPU the cleans and their barrier
 * (docs/sim.md, "Cache maintenance").
 */
IOPT_API const struct iopt_pgtable_mem_ops *iopt_physmem_mem_ops(void);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_PHYSMEM_H */
