/* SPDX-License-Identifier: MIT */
/*
 * SMMU building blocks: command encoding at the bit positions of IHI0070
 * chapter 4; the TLB's hits, misses, eviction order under each replacement
 * policy, the way each insertion takes against a reference of the rule,
 * invalidation scopes; and range invalidation arithmetic
 * against a brute-force reference.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/smmuv3.h>

#include "../src/smmu_model/common/tlb.h"
#include "tutil.h"

static uint64_t bitsat(const uint64_t w[2], unsigned lo, unsigned width)
{
	return (w[lo / 64] >> (lo % 64)) & (width == 64 ? ~0ull : (1ull << width) - 1);
}

/* Field by field: a compound literal leaves the padding unspecified. */
static void assert_same_cmd(const struct iopt_smmuv3_cmd *a,
			    const struct iopt_smmuv3_cmd *b)
{
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->ssv, b->ssv);
	assert_int_equal(a->ssid, b->ssid);
	assert_int_equal(a->sid, b->sid);
	assert_int_equal(a->leaf, b->leaf);
	assert_int_equal(a->global, b->global);
	assert_int_equal(a->range, b->range);
	assert_int_equal(a->vmid, b->vmid);
	assert_int_equal(a->asid, b->asid);
	assert_int_equal(a->num, b->num);
	assert_int_equal(a->scale, b->scale);
	assert_int_equal(a->ttl, b->ttl);
	assert_int_equal(a->tg, b->tg);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->addr, b->addr);
	assert_int_equal(a->cs, b->cs);
	assert_int_equal(a->msh, b->msh);
	assert_int_equal(a->msi_attr, b->msi_attr);
	assert_int_equal(a->msi_data, b->msi_data);
	assert_int_equal(a->msi_addr, b->msi_addr);
}

static void test_command_fields(void **state)
{
	uint64_t w[2];
	struct iopt_smmuv3_cmd c, d;

	(void)state;
	/* CMD_TLBI_NH_VA: NUM[16:12] SCALE[24:20] VMID[47:32] ASID[63:48]
	 * Leaf[64] TTL[73:72] TG[75:74] Address[127:76]. */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .num = 21,
				    .scale = 13, .vmid = 0x1234, .asid = 0xabcd,
				    .leaf = true, .ttl = 3, .tg = 1,
				    .addr = 0xfedcba9876543000ull };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 0, 8), 0x12);
	assert_int_equal(bitsat(w, 12, 5), 21);
	assert_int_equal(bitsat(w, 20, 5), 13);
	assert_int_equal(bitsat(w, 32, 16), 0x1234);
	assert_int_equal(bitsat(w, 48, 16), 0xabcd);
	assert_int_equal(bitsat(w, 64, 1), 1);
	assert_int_equal(bitsat(w, 72, 2), 3);
	assert_int_equal(bitsat(w, 74, 2), 1);
	assert_int_equal(bitsat(w, 76, 52), 0xfedcba9876543ull);
	assert_int_equal(iopt_smmuv3_cmd_decode(w, &d), 0);
	assert_same_cmd(&c, &d);
	/* CMD_SYNC: CS[13:12] MSH[23:22] MSIAttr[27:24] MSIData[63:32]
	 * MSIAddress[115:66] = addr[51:2]. */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC, .cs = 1, .msh = 3,
				    .msi_attr = 0xf, .msi_data = 0xdeadbeef,
				    .msi_addr = 0x000fedcba9876544ull };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 0, 8), 0x46);
	assert_int_equal(bitsat(w, 12, 2), 1);
	assert_int_equal(bitsat(w, 22, 2), 3);
	assert_int_equal(bitsat(w, 24, 4), 0xf);
	assert_int_equal(bitsat(w, 32, 32), 0xdeadbeef);
	assert_int_equal(bitsat(w, 66, 50), 0x000fedcba9876544ull >> 2);
	assert_int_equal(iopt_smmuv3_cmd_decode(w, &d), 0);
	assert_same_cmd(&c, &d);
	/* CMD_CFGI_CD: SSID[31:12] SID[63:32] Leaf[64]; CFGI_STE_RANGE:
	 * Range[68:64]. */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_CD, .ssid = 0xfffff,
				    .sid = 0x89abcdef, .leaf = true };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 12, 20), 0xfffff);
	assert_int_equal(bitsat(w, 32, 32), 0x89abcdef);
	assert_int_equal(bitsat(w, 64, 1), 1);
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE_RANGE, .sid = 7,
				    .range = 31 };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 64, 5), 31);
	/* S2_IPA: IPA[51:12] in [115:76]. */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_S2_IPA, .vmid = 5,
				    .addr = 0x000abcdef0123000ull };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 76, 40), 0x000abcdef0123000ull >> 12);
	/* A field an opcode does not have is not encoded. */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VAA, .asid = 0xffff };
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), 0);
	assert_int_equal(bitsat(w, 48, 16), 0);
	/* Unknown opcodes. */
	c.opcode = 0x7f;
	assert_int_equal(iopt_smmuv3_cmd_encode(&c, w), -EINVAL);
	w[0] = 0x7f;
	w[1] = 0;
	assert_int_equal(iopt_smmuv3_cmd_decode(w, &d), -EINVAL);
	assert_int_equal(d.opcode, 0x7f);
}

static struct tlb_entry ent(uint64_t ia, unsigned size_lg2, uint16_t vmid,
			    uint16_t asid, bool global, uint8_t stage)
{
	return (struct tlb_entry){ .ia = ia, .size_lg2 = (uint8_t)size_lg2,
				   .vmid = vmid, .asid = asid, .global = global,
				   .stage = stage, .g = 12,
				   .level = size_lg2 == 12 ? 3 : 2,
				   .oa = ia + 0x100000000ull };
}

static void test_hits_and_sizes(void **state)
{
	struct tlb t;

	(void)state;
	assert_int_equal(tlb_init(&t, 60, 4, TLB_LRU, 1), -EINVAL);	/* 15 sets */
	assert_int_equal(tlb_init(&t, 64, 0, TLB_LRU, 1), -EINVAL);
	assert_int_equal(tlb_init(&t, 64, 4, TLB_LRU, 1), 0);
	assert_null(tlb_lookup(&t, 1, 1, 1, 0x1000));
	struct tlb_entry a = ent(0x1000, 12, 1, 1, false, 1);
	struct tlb_entry b = ent(0x40000000, 21, 1, 1, true, 1);

	tlb_insert(&t, &a);
	tlb_insert(&t, &b);
	assert_non_null(tlb_lookup(&t, 1, 1, 1, 0x1fff));
	assert_null(tlb_lookup(&t, 1, 2, 1, 0x1fff));		/* other ASID */
	assert_null(tlb_lookup(&t, 2, 1, 1, 0x1fff));		/* other VMID */
	assert_null(tlb_lookup(&t, 1, 1, 2, 0x1fff));		/* other stage */
	assert_non_null(tlb_lookup(&t, 1, 77, 1, 0x401fffff));	/* global */
	assert_null(tlb_lookup(&t, 1, 1, 1, 0x40200000));
	assert_int_equal(t.hits, 2);
	assert_int_equal(t.misses, 5);
	tlb_fini(&t);
}

/* One set of 4 ways: the victim each policy picks. */
static void test_eviction_order(void **state)
{
	struct tlb t;

	(void)state;
	/* LRU: the least recently used goes. */
	assert_int_equal(tlb_init(&t, 4, 4, TLB_LRU, 1), 0);
	for (uint64_t i = 0; i < 4; i++) {
		struct tlb_entry e = ent(i << 12, 12, 0, 0, false, 1);

		tlb_insert(&t, &e);
	}
	tlb_lookup(&t, 0, 0, 1, 0x0000);
	tlb_lookup(&t, 0, 0, 1, 0x2000);
	struct tlb_entry e4 = ent(4 << 12, 12, 0, 0, false, 1);

	tlb_insert(&t, &e4);
	assert_null(tlb_lookup(&t, 0, 0, 1, 0x1000));		/* LRU victim */
	assert_non_null(tlb_lookup(&t, 0, 0, 1, 0x3000));
	assert_int_equal(t.evictions, 1);
	tlb_fini(&t);

	/* Round-robin: ways in order, whatever the use. */
	assert_int_equal(tlb_init(&t, 4, 4, TLB_RR, 1), 0);
	for (uint64_t i = 0; i < 4; i++) {
		struct tlb_entry e = ent(i << 12, 12, 0, 0, false, 1);

		tlb_insert(&t, &e);
	}
	for (uint64_t i = 4; i < 8; i++) {
		struct tlb_entry e = ent(i << 12, 12, 0, 0, false, 1);

		tlb_lookup(&t, 0, 0, 1, (i - 4) << 12);	/* touching does not help */
		tlb_insert(&t, &e);
		assert_null(tlb_lookup(&t, 0, 0, 1, (i - 4) << 12));
	}
	tlb_fini(&t);

	/* Seeded random: the victims of a reference xorshift64 sequence. */
	assert_int_equal(tlb_init(&t, 4, 4, TLB_RANDOM, 12345), 0);
	for (uint64_t i = 0; i < 4; i++) {
		struct tlb_entry e = ent(i << 12, 12, 0, 0, false, 1);

		tlb_insert(&t, &e);
	}
	uint64_t x = 12345;
	uint64_t way_page[4] = { 0, 1, 2, 3 };	/* page held by each way */

	for (uint64_t i = 4; i < 40; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned v = (unsigned)(x % 4);
		struct tlb_entry e = ent(i << 12, 12, 0, 0, false, 1);

		tlb_insert(&t, &e);
		assert_null(tlb_lookup(&t, 0, 0, 1, way_page[v] << 12));
		way_page[v] = i;
		for (unsigned w = 0; w < 4; w++)
			assert_non_null(tlb_lookup(&t, 0, 0, 1, way_page[w] << 12));
	}
	tlb_fini(&t);
}

/*
 * Which way each insertion takes, against a reference of the rule: the
 * way already holding the same block and tags (refreshed), else the first
 * invalid way, else the policy's victim (LRU: the least recently inserted
 * or hit; RR: ways in turn, counting evictions only; random: the
 * reference xorshift64 sequence). One set of 4 ways, 12 keys (6 pages,
 * 2 ASIDs), random inserts, hits and invalidations so that refreshes,
 * holes at any way and evictions mix.
 */
static void test_insert_ways_against_reference(void **state)
{
	(void)state;
	for (int pol = TLB_LRU; pol <= TLB_RANDOM; pol++) {
		struct { bool valid; unsigned key; uint64_t stamp; } ref[4] = { 0 };
		uint64_t rng = 99 + (uint64_t)pol, x = 321, clk = 0;
		unsigned rr = 0;
		struct tlb t;

		assert_int_equal(tlb_init(&t, 4, 4, (enum tlb_repl)pol, 321), 0);
		for (int op = 0; op < 4000; op++) {
			unsigned key = (unsigned)(tu_rand(&rng) % 12), kind = (unsigned)(tu_rand(&rng) % 4);
			uint64_t ia = (uint64_t)(key % 6) << 12;
			uint16_t asid = (uint16_t)(1 + key / 6);
			int at = -1;

			for (int w = 0; w < 4; w++)
				if (ref[w].valid && ref[w].key == key)
					at = w;
			if (kind < 2) {			/* insert */
				struct tlb_entry e = ent(ia, 12, 0, asid, false, 1);

				e.oa += (uint64_t)op << 24;	/* a refresh shows */
				if (at < 0)
					for (int w = 3; w >= 0; w--)
						if (!ref[w].valid)
							at = w;
				if (at < 0) {
					if (pol == TLB_LRU) {
						at = 0;
						for (int w = 1; w < 4; w++)
							if (ref[w].stamp < ref[at].stamp)
								at = w;
					} else if (pol == TLB_RR) {
						at = (int)rr;
						rr = (rr + 1) % 4;
					} else {
						x ^= x << 13;
						x ^= x >> 7;
						x ^= x << 17;
						at = (int)(x % 4);
					}
				}
				tlb_insert(&t, &e);
				ref[at].valid = true;
				ref[at].key = key;
				ref[at].stamp = ++clk;
				assert_int_equal(t.e[at].oa, e.oa);
			} else if (kind == 2) {		/* lookup */
				assert_int_equal(tlb_lookup(&t, 0, asid, 1, ia) != NULL, at >= 0);
				if (at >= 0)
					ref[at].stamp = ++clk;
			} else {			/* invalidate */
				struct tlb_match m = { .by_asid = true, .asid = asid,
						       .by_range = true, .lo = ia, .hi = ia };

				assert_int_equal(tlb_invalidate(&t, &m), at >= 0);
				if (at >= 0)
					ref[at].valid = false;
			}
			for (int w = 0; w < 4; w++) {
				assert_int_equal(t.e[w].valid, ref[w].valid);
				if (ref[w].valid) {
					assert_int_equal(t.e[w].ia, (uint64_t)(ref[w].key % 6) << 12);
					assert_int_equal(t.e[w].asid, 1 + ref[w].key / 6);
				}
			}
		}
		assert_true(t.evictions > 100);
		tlb_fini(&t);
	}
}

static unsigned count_valid(const struct tlb *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->sets * t->ways; i++)
		n += t->e[i].valid;
	return n;
}

static void test_invalidation_scopes(void **state)
{
	struct tlb t;
	struct tlb_match m;
	struct iopt_smmuv3_cmd c;

	(void)state;
	assert_int_equal(tlb_init(&t, 256, 4, TLB_LRU, 1), 0);
	/* VMID 1: ASIDs 1 and 2, a global; VMID 2: ASID 1; stage 2 of VMID 1. */
	struct tlb_entry es[] = {
		ent(0x1000, 12, 1, 1, false, 1), ent(0x2000, 12, 1, 2, false, 1),
		ent(0x200000, 21, 1, 0, true, 1), ent(0x1000, 12, 2, 1, false, 1),
		ent(0x1000, 12, 1, 0, false, 2), ent(0x5000, 12, 1, 0, false, 2),
	};
	for (unsigned i = 0; i < 6; i++)
		tlb_insert(&t, &es[i]);
	assert_int_equal(count_valid(&t), 6);

	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID, .vmid = 1,
				    .asid = 1 };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);		/* not the global */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .vmid = 1,
				    .asid = 9, .addr = 0x234000 };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);		/* the global */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_S2_IPA, .vmid = 1,
				    .addr = 0x1000 };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);
	assert_non_null(tlb_lookup(&t, 1, 0, 2, 0x5000));
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ALL, .vmid = 1 };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);		/* ASID 2 */
	assert_non_null(tlb_lookup(&t, 2, 1, 1, 0x1000));	/* VMID 2 stays */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_S12_VMALL, .vmid = 1 };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);		/* stage 2 left */
	c = (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL };
	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(tlb_invalidate(&t, &m), 1);
	assert_int_equal(count_valid(&t), 0);
	c.opcode = IOPT_SMMUV3_CMD_CFGI_STE;
	assert_int_equal(tlb_match_from_cmd(&c, &m), -EINVAL);
	tlb_fini(&t);
}

/* Range invalidation against brute force: which of many small entries a
 * (TG, SCALE, NUM, TTL, address) command removes. */
/*
 * Repeated fills and ASID invalidations against a shadow of what was
 * inserted: an invalidation removes exactly the shadow's entries of that
 * ASID (its count, and every one gone from lookups), leaves every other
 * entry, and a set emptied by one invalidation and filled again is
 * visited by the next (the occupied-set bitmap). Room for every entry,
 * so nothing is evicted.
 */
static void test_asid_invalidation_against_shadow(void **state)
{
	enum { N = 512 };
	static uint64_t ia[N];
	static uint16_t asid[N];
	static bool live[N];
	uint64_t rng = 77;
	struct tlb t;

	(void)state;
	/* 128 sets of 16: about four pages a set, of mixed ASIDs. */
	assert_int_equal(tlb_init(&t, 2048, 16, TLB_LRU, 1), 0);
	for (int i = 0; i < N; i++) {		/* distinct pages */
		ia[i] = ((uint64_t)i * 0x9e3779b1u % (1u << 20)) << 12;
		asid[i] = (uint16_t)(1 + tu_rand(&rng) % 4);
		live[i] = false;
	}
	for (int round = 0; round < 300; round++) {
		int fills = (int)(tu_rand(&rng) % 64);

		for (int k = 0; k < fills; k++) {
			int i = (int)(tu_rand(&rng) % N);
			struct tlb_entry e = ent(ia[i], 12, 0, asid[i], false, 1);

			tlb_insert(&t, &e);
			live[i] = true;
		}
		uint16_t a = (uint16_t)(1 + tu_rand(&rng) % 4);
		struct tlb_match m = { .by_asid = true, .asid = a };
		unsigned want = 0;

		for (int i = 0; i < N; i++)
			if (live[i] && asid[i] == a)
				want++;
		assert_int_equal(tlb_invalidate(&t, &m), want);
		for (int i = 0; i < N; i++) {
			if (asid[i] == a)
				live[i] = false;
			assert_int_equal(tlb_lookup(&t, 0, asid[i], 1, ia[i]) != NULL,
					 live[i]);
		}
	}
	assert_int_equal(t.evictions, 0);	/* the shadow's premise */
	tlb_fini(&t);
}

static void test_range_against_bruteforce(void **state)
{
	uint64_t rng = 4242;
	struct tlb t;

	(void)state;
	for (int round = 0; round < 400; round++) {
		unsigned tg = 1 + (unsigned)(tu_rand(&rng) % 3);
		unsigned g = tg == 1 ? 12 : tg == 2 ? 14 : 16;
		unsigned scale = (unsigned)(tu_rand(&rng) % 8);
		unsigned num = (unsigned)(tu_rand(&rng) % 32);
		unsigned ttl = (unsigned)(tu_rand(&rng) % 4);
		uint64_t base = (tu_rand(&rng) % (1ull << 30)) & ~((1ull << g) - 1);
		struct tlb_match m;
		struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VAA, .vmid = 3,
					   .num = num, .scale = scale, .ttl = ttl,
					   .tg = tg, .addr = base };

		/* Room for every entry: no eviction muddles the check. */
		assert_int_equal(tlb_init(&t, 8192, 64, TLB_LRU, 1), 0);
		/* Entries of granule size, both levels, around the range. */
		uint64_t ia[300];
		uint8_t lvl[300];

		for (int i = 0; i < 300; i++) {
			uint64_t off = (tu_rand(&rng) % (1ull << (g + 13)));
			bool dup;

			ia[i] = (base > (1ull << (g + 12)) ? base - (1ull << (g + 12)) : 0) +
				(off & ~((1ull << g) - 1));
			dup = false;
			for (int j = 0; j < i; j++)
				dup |= ia[j] == ia[i];
			if (dup) {		/* one entry per block */
				i--;
				continue;
			}
			lvl[i] = (uint8_t)(2 + tu_rand(&rng) % 2);
			struct tlb_entry e = ent(ia[i], g, 3, 0, false, 1);

			e.g = (uint8_t)g;
			e.level = lvl[i];
			tlb_insert(&t, &e);
		}
		assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
		tlb_invalidate(&t, &m);
		/* Reference: the span is (NUM + 1) granules 2^SCALE times,
		 * added up one granule at a time. */
		uint64_t span = 0;

		for (unsigned k = 0; k <= num; k++)
			for (uint64_t s = 0; s < (1ull << scale); s++)
				span += 1ull << g;
		for (int i = 0; i < 300; i++) {
			bool in = ia[i] >= base && ia[i] < base + span;
			bool hinted = ttl == 0 || lvl[i] == ttl;
			bool gone = !tlb_lookup(&t, 3, 0, 1, ia[i]);

			assert_int_equal(gone, in && hinted);
		}
		tlb_fini(&t);
	}
	/* A range past the top does not wrap to address 0. */
	struct tlb_match m;
	struct iopt_smmuv3_cmd c = { .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VAA, .tg = 1,
				   .scale = 31, .num = 31,
				   .addr = 0xffffffff00000000ull };

	assert_int_equal(tlb_match_from_cmd(&c, &m), 0);
	assert_int_equal(m.hi, UINT64_MAX);
	assert_int_equal(m.lo, 0xffffffff00000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_fields),
		cmocka_unit_test(test_hits_and_sizes),
		cmocka_unit_test(test_eviction_order),
		cmocka_unit_test(test_insert_ways_against_reference),
		cmocka_unit_test(test_invalidation_scopes),
		cmocka_unit_test(test_range_against_bruteforce),
		cmocka_unit_test(test_asid_invalidation_against_shadow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
