/* SPDX-License-Identifier: MIT */
/*
 * Argument checks of the public page-table operations. Shared by pt_api.c
 * and by the per-format map/unmap entry points that PT_DEFINE_IMPL
 * compiles together with the algorithm, so that the hot paths are one
 * function each.
 *
 * Errors (docs/pgtable.md, "Errors"): -EINVAL for a size not in the
 * bitmap, zero count, bad prot or misalignment; -ERANGE for a range that
 * overflows or leaves the input (or, for map, output) address space.
 */
#ifndef IOPT_PT_ENTRY_H
#define IOPT_PT_ENTRY_H

#include <errno.h>

#include "pt_internal.h"

static inline const struct pt_size *pt_size_of(const struct iopt_pgtable *pt,
					       uint64_t pgsize)
{
	if (!pgsize || (pgsize & (pgsize - 1)))
		return NULL;
	unsigned idx = pt->size_idx[__builtin_ctzll(pgsize)];

	return idx ? &pt->sizes[idx - 1] : NULL;
}

/* Is [va, va + bytes) inside the input range? bytes >= 1. */
static inline int pt_check_va(const struct iopt_pgtable *pt, uint64_t va,
			      uint64_t bytes)
{
	uint64_t last = va + (bytes - 1);

	if (last < va || va < pt->va_first || last > pt->va_last)
		return -ERANGE;
	return 0;
}

/* pgsize * pgcount, or 0 if it overflows. */
static inline uint64_t pt_bytes(uint64_t pgsize, size_t pgcount)
{
	uint64_t bytes;

	if (__builtin_mul_overflow(pgsize, (uint64_t)pgcount, &bytes))
		return 0;
	return bytes;
}

/* Check a map request; on success *sz and *bytes describe it. */
static inline int pt_map_args(const struct iopt_pgtable *pt, uint64_t iova,
			      uint64_t paddr, uint64_t pgsize, size_t pgcount,
			      unsigned prot, const struct pt_size **sz,
			      uint64_t *bytes)
{
	uint64_t last;

	*sz = pt_size_of(pt, pgsize);
	if (!*sz || !pgcount || (prot & ~IOPT_PROT_MASK) ||
	    !(prot & (IOPT_READ | IOPT_WRITE)) || (iova & (pgsize - 1)) ||
	    (paddr & (pgsize - 1)))
		return -EINVAL;
	*bytes = pt_bytes(pgsize, pgcount);
	if (!*bytes || pt_check_va(pt, iova, *bytes))
		return -ERANGE;
	last = paddr + (*bytes - 1);
	if (last < paddr || last > pt->oa_last)
		return -ERANGE;
	return 0;
}

/* Check an unmap request; on success *sz describes it. */
static inline int pt_unmap_args(const struct iopt_pgtable *pt, uint64_t iova,
				uint64_t pgsize, size_t pgcount,
				const struct pt_size **sz)
{
	uint64_t bytes;

	*sz = pt_size_of(pt, pgsize);
	if (!*sz || !pgcount || (iova & (pgsize - 1)))
		return -EINVAL;
	bytes = pt_bytes(pgsize, pgcount);
	if (!bytes || pt_check_va(pt, iova, bytes))
		return -ERANGE;
	return 0;
}

#endif /* IOPT_PT_ENTRY_H */
