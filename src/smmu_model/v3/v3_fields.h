/* SPDX-License-Identifier: MIT */
/*
 * Bit fields of the SMMUv3's little-endian structures and commands, as
 * arrays of 64-bit words: the one place the encoders (v3_cmd.c,
 * v3_structs.c) place and take a field. A field is (lo, width, shift):
 * its lowest bit counted from bit 0 of word 0, its width (never
 * straddling a word), and how far the value is shifted right to give the
 * field (an address whose bits below shift the field leaves out). Called
 * with constants, each inlines to a few instructions.
 */
#ifndef IOPT_SMMUV3_FIELDS_H
#define IOPT_SMMUV3_FIELDS_H

#include <stdint.h>

/*
 * OR v >> shift into bit lo of w. The bits of v the field cannot hold
 * (below shift, or above width once shifted) are ORed into *bad, so that
 * a caller refuses the value instead of truncating it.
 */
static inline void fld_put(uint64_t *w, uint64_t *bad, uint64_t v, unsigned lo,
			   unsigned width, unsigned shift)
{
	*bad |= v & ((1ull << shift) - 1);
	v >>= shift;
	if (width < 64)
		*bad |= v >> width;
	w[lo / 64] |= v << (lo % 64);
}

/* The field at bit lo of w, shifted back left by shift. */
static inline uint64_t fld_get(const uint64_t *w, unsigned lo, unsigned width,
			       unsigned shift)
{
	uint64_t v = w[lo / 64] >> (lo % 64);

	if (width < 64)
		v &= (1ull << width) - 1;
	return v << shift;
}

#endif
