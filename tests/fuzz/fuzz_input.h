/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' input: a byte stream read as big-endian integers of
 * any width; past its end it reads as zeros, so every input is valid.
 */
#ifndef IOPT_FUZZ_INPUT_H
#define IOPT_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

#endif
