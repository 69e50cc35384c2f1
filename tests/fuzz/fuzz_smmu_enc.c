/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SMMUv3 encoders (commands, STE, CD): raw bytes
 * choose a command or structure and a value for each of its members,
 * drawn near the edges of the field (0, the largest, one past it, a bit
 * below an address's lowest, any value the member holds). For commands,
 * members the opcode does not have get values too, which must be ignored.
 *
 * Checked against the field positions and widths of IHI0070 in
 * tests/smmu_enc_spec.h (not against the library's own tables):
 *  - the encoder succeeds exactly when every member fits its field;
 *  - on success the words are the fields placed where the architecture
 *    puts them and nothing else, and decoding gives every member back;
 *  - on failure (-EINVAL) the output words are untouched.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../smmu_enc_spec.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCMDS (sizeof(spec_cmds) / sizeof(spec_cmds[0]))
#define PATTERN 0x5a5a5a5a5a5a5a5aull

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* A value for f, chosen by the input, that the member can hold. */
static uint64_t pick(struct in *in, const struct spec_field *f)
{
	uint64_t max = spec_field_max(f), unit = 1ull << f->shift, v;

	switch (take(in, 1) % 6) {
	case 0: v = 0; break;
	case 1: v = max; break;
	case 2: v = max + unit; break;			/* one past (or wraps) */
	case 3: v = f->shift ? 1ull << (f->shift - 1) : max; break;
	case 4: v = take(in, 8) & max; break;		/* in range */
	default: v = take(in, 8); break;
	}
	return v & spec_member_max(f);
}

/* Is f one of s's fields (same member)? */
static bool has(const struct spec_struct *s, const struct spec_field *f)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->f[i].off == f->off)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	unsigned sel = (unsigned)(take(&in, 1) % (NCMDS + 2));
	const struct spec_struct *s = sel < NCMDS ? &spec_cmds[sel] :
				      sel == NCMDS ? &spec_ste : &spec_cd;
	union spec_obj o, back;
	uint64_t want[8] = { 0 }, w[8];
	bool fits = true;

	spec_init(s, &o);
	want[0] = s->opcode;
	/* Members this opcode does not have: any value, ignored. */
	if (s->words == 2)
		for (unsigned k = 0; k < NCMDS; k++)
			for (unsigned i = 0; i < spec_cmds[k].n; i++) {
				const struct spec_field *f = &spec_cmds[k].f[i];

				if (!has(s, f))
					spec_set(&o, f, pick(&in, f));
			}
	for (unsigned i = 0; i < s->n; i++) {
		const struct spec_field *f = &s->f[i];
		uint64_t v = pick(&in, f);

		spec_set(&o, f, v);
		if (spec_fits(f, v))
			spec_place(want, f, v);
		else
			fits = false;
	}
	for (unsigned i = 0; i < 8; i++)
		w[i] = PATTERN ^ i;
	int ret = spec_encode(s, &o, w);

	if (!fits) {
		CHECK(ret == -EINVAL);
		for (unsigned i = 0; i < 8; i++)
			CHECK(w[i] == (PATTERN ^ i));
		return 0;
	}
	CHECK(ret == 0);
	for (unsigned i = 0; i < s->words; i++)
		CHECK(w[i] == want[i]);
	for (unsigned i = s->words; i < 8; i++)
		CHECK(w[i] == (PATTERN ^ i));
	CHECK(spec_decode(s, w, &back) == 0);
	for (unsigned i = 0; i < s->n; i++)
		CHECK(spec_get(&back, &s->f[i]) == spec_get(&o, &s->f[i]));
	return 0;
}
