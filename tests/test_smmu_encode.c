/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 command, STE and CD encoders at the edges of every field,
 * against the field positions and widths of IHI0070 typed in
 * smmu_enc_spec.h (chapter 4, 5.2, 5.4):
 *  - each field at its largest value encodes to exactly that value at
 *    that place, every other bit zero (the opcode aside), and decodes
 *    back;
 *  - one past it (the next bit above the field; for an address also a
 *    bit below the lowest it holds) is -EINVAL with the output words
 *    untouched, where the C member can hold such a value at all (a bool,
 *    or a 16- or 32-bit member as wide as its field, cannot);
 *  - every field at its largest value at once (no two fields overlap);
 *  - unknown opcodes are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "smmu_enc_spec.h"

#define PATTERN 0xa5a5a5a5a5a5a5a5ull

static void fill(uint64_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		w[i] = PATTERN ^ i;
}

static void assert_untouched(const uint64_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(w[i], PATTERN ^ i);
}

/* The words s encodes with nothing set but its opcode. */
static void base_words(const struct spec_struct *s, uint64_t *w)
{
	memset(w, 0, s->words * sizeof(uint64_t));
	w[0] = s->opcode;
}

static void check_words(const struct spec_struct *s, const uint64_t *got,
			const uint64_t *want, const char *what)
{
	for (unsigned i = 0; i < s->words; i++)
		if (got[i] != want[i])
			fail_msg("%s %s: word %u is %#llx, want %#llx", s->name,
				 what, i, (unsigned long long)got[i],
				 (unsigned long long)want[i]);
}

/* Encode o, expecting exactly want; decode and compare every field. */
static void round_trip(const struct spec_struct *s, const union spec_obj *o,
		       const uint64_t *want, const char *what)
{
	uint64_t w[8];
	union spec_obj back;

	fill(w, s->words);
	if (spec_encode(s, o, w))
		fail_msg("%s %s: refused an in-range value", s->name, what);
	check_words(s, w, want, what);
	assert_int_equal(spec_decode(s, w, &back), 0);
	for (unsigned i = 0; i < s->n; i++)
		if (spec_get(&back, &s->f[i]) != spec_get(o, &s->f[i]))
			fail_msg("%s %s: %s decodes as %#llx", s->name, what,
				 s->f[i].name,
				 (unsigned long long)spec_get(&back, &s->f[i]));
}

static void refused(const struct spec_struct *s, const struct spec_field *f,
		    uint64_t v)
{
	union spec_obj o;
	uint64_t w[8];

	spec_init(s, &o);
	spec_set(&o, f, v);
	fill(w, s->words);
	if (spec_encode(s, &o, w) != -EINVAL)
		fail_msg("%s.%s = %#llx (field %u bits from bit %u) not refused",
			 s->name, f->name, (unsigned long long)v, f->width, f->lo);
	assert_untouched(w, s->words);
}

static void edges(const struct spec_struct *s)
{
	union spec_obj all, o;
	uint64_t want_all[8], want[8];

	spec_init(s, &all);
	base_words(s, want_all);
	for (unsigned i = 0; i < s->n; i++) {
		const struct spec_field *f = &s->f[i];
		uint64_t max = spec_field_max(f);
		unsigned top = f->width + f->shift;	/* first bit above */

		/* The largest value the field holds. */
		spec_init(s, &o);
		spec_set(&o, f, max);
		base_words(s, want);
		spec_place(want, f, max);
		round_trip(s, &o, want, f->name);
		spec_set(&all, f, max);
		spec_place(want_all, f, max);

		/* One past it, if the member can say so. */
		if (!f->is_bool && top < 8 * f->size) {
			refused(s, f, max + (1ull << f->shift));
			refused(s, f, 1ull << top);
			refused(s, f, spec_member_max(f));
		}
		/* An address with a bit below those the field holds. */
		if (f->shift) {
			refused(s, f, 1ull << (f->shift - 1));
			refused(s, f, max | 1);
		}
	}
	round_trip(s, &all, want_all, "every field at its largest");
}

static void test_commands(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(spec_cmds) / sizeof(spec_cmds[0]); i++)
		edges(&spec_cmds[i]);
}

static void test_ste(void **state)
{
	(void)state;
	edges(&spec_ste);
}

static void test_cd(void **state)
{
	(void)state;
	edges(&spec_cd);
}

/* Opcodes the encoder does not know: refused, nothing written. */
static void test_unknown_opcodes(void **state)
{
	uint64_t w[2];

	(void)state;
	for (unsigned op = 0; op < 0x200; op++) {
		bool known = false;

		for (size_t i = 0; i < sizeof(spec_cmds) / sizeof(spec_cmds[0]); i++)
			known |= spec_cmds[i].opcode == op;
		struct iopt_smmuv3_cmd c = { .opcode = op };

		fill(w, 2);
		if (known) {
			assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
			assert_int_equal(w[0], op);
			assert_int_equal(w[1], 0);
		} else {
			assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), -EINVAL);
			assert_untouched(w, 2);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_ste),
		cmocka_unit_test(test_cd),
		cmocka_unit_test(test_unknown_opcodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
