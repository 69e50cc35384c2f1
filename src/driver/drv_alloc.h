/* SPDX-License-Identifier: MIT */
/*
 * Allocation of the drivers' own objects (both drivers).
 */
#ifndef IOPT_DRV_ALLOC_H
#define IOPT_DRV_ALLOC_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * A zeroed driver object aligned as its type asks (64 bytes where it
 * keeps contended words on lines of their own); free() releases it. size
 * is a multiple of align, as for every struct type. NULL: out of memory.
 */
static inline void *drv_zalloc(size_t size, size_t align)
{
	void *p = aligned_alloc(align, size);

	if (p)
		memset(p, 0, size);
	return p;
}

#endif /* IOPT_DRV_ALLOC_H */
