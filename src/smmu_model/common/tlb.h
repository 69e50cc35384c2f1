/* SPDX-License-Identifier: MIT */
/*
 * A set-associative translation cache, shared by the SMMUv3 and SMMUv2
 * models: entries are tagged by VMID, ASID (or global), stage, granule and
 * level, and cover a naturally aligned block of 2^size_lg2 bytes. An
 * entry lives in the set chosen by its own block number, so a lookup
 * probes each block size present (a bitmap keeps that short). Replacement
 * is LRU, round-robin or seeded-random; the same operations in the same
 * order always choose the same victims. Under LRU a hit on the entry that
 * already is the most recently used of its set writes nothing (tlb_touch):
 * the order of a set's stamps, all that replacement compares, is the same
 * either way, and such a hit can be replayed without the model's lock
 * (common/hit_memo.h). Not thread-safe: the model locks.
 */
#ifndef IOPT_SMMU_TLB_H
#define IOPT_SMMU_TLB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tlb_repl { TLB_LRU, TLB_RR, TLB_RANDOM };

struct tlb_entry {
	bool valid;
	bool global;		/* nG == 0: matches every ASID */
	uint8_t stage;		/* 1: stage 1 (or combined nested), 2: stage 2 */
	uint8_t g;		/* granule lg2 */
	uint8_t level;		/* leaf level */
	uint8_t size_lg2;
	uint16_t vmid, asid;
	uint64_t ia;		/* input block base */
	uint64_t oa;		/* output block base */
	uint32_t perms, attr;
	uint64_t desc, desc2;	/* leaf descriptors: stage 1 (or only), stage 2 */
	uint64_t stamp;		/* LRU */
};

/* What an invalidation matches; every set field must match. */
struct tlb_match {
	bool by_vmid;
	uint16_t vmid;
	bool by_asid;		/* global entries match only with or_global */
	bool or_global;		/* by VA and ASID: global entries too */
	uint16_t asid;
	bool by_stage;
	uint8_t stage;
	bool by_range;		/* entries overlapping [lo, hi] */
	uint64_t lo, hi;
	bool leaf_only;		/* (all entries are leaves in this model) */
	uint8_t g;		/* TG hint: 0 any, else the granule lg2 */
	uint8_t level;		/* TTL hint: 0 any */
};

struct tlb {
	unsigned sets, ways;	/* sets: a power of two */
	enum tlb_repl repl;
	struct tlb_entry *e;	/* sets * ways */
	unsigned *rr;		/* per set */
	/* Bit s: set s may hold a valid entry (set by tlb_insert(), cleared
	 * by tlb_invalidate() when it leaves the set empty), so that an
	 * invalidation visits only the occupied sets. */
	uint64_t *occ;
	uint64_t tick, rng;
	uint64_t sizes;		/* bit n: some entry has size_lg2 n */
	uint64_t hits, misses, evictions, invalidated;
};

/* entries = sets * ways; 0, or -EINVAL / -ENOMEM. */
int tlb_init(struct tlb *t, unsigned entries, unsigned ways,
	     enum tlb_repl repl, uint64_t seed);
void tlb_fini(struct tlb *t);

/* The set a block of 2^size_lg2 bytes at ia lives in. */
static inline unsigned tlb_set_of(const struct tlb *t, uint64_t ia,
				  unsigned size_lg2)
{
	uint64_t blk = ia >> size_lg2;

	return (unsigned)((blk ^ (blk >> 13)) & (t->sets - 1));
}

/* Does e hold a translation for (vmid, asid, stage)? */
static inline bool tlb_tags_match(const struct tlb_entry *e, uint16_t vmid,
				  uint16_t asid, uint8_t stage)
{
	return e->valid && e->stage == stage && e->vmid == vmid &&
	       (e->global || e->asid == asid);
}

/* tlb_touch() when e's stamp is not the newest of all: out of line, so
 * that the lookup loop keeps its registers. */
void tlb_touch_scan(struct tlb *t, const struct tlb_entry *set, struct tlb_entry *e);

/* A hit on e in set: e becomes the most recently used of the set. The
 * tick (and e's stamp) move only if some other valid entry of the set is
 * more recent; otherwise the set's order already says so. */
static inline void tlb_touch(struct tlb *t, const struct tlb_entry *set,
			     struct tlb_entry *e)
{
	if (t->repl != TLB_LRU || e->stamp == t->tick)
		return;			/* LRU only; the newest stamp of all */
	tlb_touch_scan(t, set, e);
}

/* The entry holding ia for (vmid, asid, stage), or NULL (inline: the
 * translation hot path). */
static inline struct tlb_entry *tlb_lookup(struct tlb *t, uint16_t vmid,
					   uint16_t asid, uint8_t stage,
					   uint64_t ia)
{
	for (uint64_t sz = t->sizes; sz; sz &= sz - 1) {
		unsigned lg2 = (unsigned)__builtin_ctzll(sz);
		struct tlb_entry *set =
			&t->e[(size_t)tlb_set_of(t, ia, lg2) * t->ways];
		uint64_t base = lg2 >= 64 ? 0 : ia & ~((1ull << lg2) - 1);

		for (unsigned w = 0; w < t->ways; w++) {
			struct tlb_entry *e = &set[w];

			if (e->size_lg2 == lg2 && e->ia == base &&
			    tlb_tags_match(e, vmid, asid, stage)) {
				tlb_touch(t, set, e);
				t->hits++;
				return e;
			}
		}
	}
	t->misses++;
	return NULL;
}

/* As tlb_lookup(), for blocks of exactly 2^size_lg2 bytes at level (the
 * walk cache's probe; inline: every walk probes it, and out of line it
 * costs the walk cache's lookup a second call level). A hit always
 * renews the entry's LRU stamp: walk-cache hits are never replayed. */
static inline struct tlb_entry *tlb_lookup_level(struct tlb *t, uint16_t vmid,
						 uint16_t asid, uint8_t stage,
						 uint64_t ia, unsigned size_lg2,
						 unsigned level)
{
	if (t->sizes >> size_lg2 & 1) {
		struct tlb_entry *set = &t->e[(size_t)tlb_set_of(t, ia, size_lg2) * t->ways];
		uint64_t base = ia & ~((1ull << size_lg2) - 1);

		for (unsigned w = 0; w < t->ways; w++) {
			struct tlb_entry *e = &set[w];

			if (e->size_lg2 == size_lg2 && e->ia == base &&
			    e->level == level && tlb_tags_match(e, vmid, asid, stage)) {
				e->stamp = ++t->tick;
				t->hits++;
				return e;
			}
		}
	}
	t->misses++;
	return NULL;
}
/* Insert (replacing any entry for the same block and tags). */
void tlb_insert(struct tlb *t, const struct tlb_entry *e);
/* Invalidate what m matches; returns how many entries went. */
unsigned tlb_invalidate(struct tlb *t, const struct tlb_match *m);

struct iopt_smmuv3_cmd;
/*
 * The scope of a TLBI command (IHI0070 4.4): NH_ALL, NH_ASID, NH_VA,
 * NH_VAA, S12_VMALL, S2_IPA, NSNH_ALL. Range invalidation (TG != 0):
 * [addr, addr + (NUM + 1) * 2^SCALE * granule), not wrapping; TTL as a
 * level hint. -EINVAL: not a TLBI command this model knows.
 */
int tlb_match_from_cmd(const struct iopt_smmuv3_cmd *c, struct tlb_match *m);

#endif
