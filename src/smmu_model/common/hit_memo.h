/* SPDX-License-Identifier: MIT */
/*
 * The hit memo: a small table of TLB-hit translations that a device
 * thread can replay without the model's lock (model_core.h,
 * smmu_core_fast_hit). Both SMMU models use it; docs/smmu_model.md
 * ("Lock-free TLB hits") has the whole contract.
 *
 * An entry says: under model generation gen, a transaction whose stream
 * and access key is key and whose input address lies in the block
 * [va, va + mask] translates to oa + (address & mask) with attr (and, for
 * SMMUv2, context bank cb), lat cycles after it starts in a translation
 * slot, and changes no model state other than time, slots and statistics
 * (the TLB and configuration entries it hit were already the most
 * recently used of their sets). The locked path writes an entry only
 * after a translation that was exactly such a hit; every locked
 * operation that may change what a translation returns or what it
 * changes -- register writes, commands, TLB and configuration fills and
 * invalidations, replacement-state updates, faults -- retires every
 * entry before it releases the lock (smmu_core_gen_bump: the model's
 * generation moves, unless no entry was stored under the current one).
 *
 * Ordering (each entry is a sequence-count-protected record with one
 * writer, the model's lock holder):
 *  - writer: seq made odd (relaxed store), the fields (release stores),
 *    seq made even (release store). A reader whose acquire load of any
 *    field sees the new value therefore also sees the odd (or a later)
 *    seq in its second load of seq, and rejects what it read;
 *  - reader: seq (acquire), the fields (acquire), the model's generation
 *    (relaxed; pairs with the release store in smmu_core_gen_bump), seq
 *    again (relaxed): the entry is used only if seq was even and
 *    unchanged and the generations match.
 * A generation bump is made with the model's lock held, before the lock
 * is released, so any thread that learns of a change through the model
 * (a register read, a CMD_SYNC's MSI write, the lock) reads the new
 * generation afterwards and cannot replay an entry from before it. No
 * fences: ThreadSanitizer does not model them.
 */
#ifndef IOPT_SMMU_HIT_MEMO_H
#define IOPT_SMMU_HIT_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "../../platform/platform.h"

#define SMMU_MEMO_LG2	4		/* 16 entries, direct mapped */

struct smmu_memo {
	uint64_t seq;		/* odd while the entry is written */
	uint64_t gen;		/* the model generation it holds under */
	uint64_t key;		/* stream and access (the model's packing) */
	uint64_t va;		/* input address & ~mask, tag bits included */
	uint64_t mask;		/* block size - 1 (of the TLB entry hit) */
	uint64_t oa;		/* output block base */
	uint64_t lat;		/* cycles from slot start to ready */
	uint64_t attr_cb;	/* attr | cb << 32 */
};	/* 64 bytes: one cache line when the table starts on one (the models
	 * are calloc'ed, so no over-aligned type is used) */

/* What a replayed entry gives. */
struct smmu_memo_hit {
	uint64_t oa, lat;
	unsigned attr, cb;
};

/* The entry for (key, address): by 4 KiB page, so that a few pages of a
 * stream, and a few streams, each keep one. */
static inline unsigned smmu_memo_index(uint64_t key, uint64_t addr)
{
	uint64_t h = (key ^ (addr >> 12)) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> (64 - SMMU_MEMO_LG2));
}

/*
 * Look (key, addr) up without the model's lock; gen is the model's
 * generation counter. true with *hit filled when a valid entry covers it.
 * Writes nothing.
 */
static inline bool smmu_memo_find(const struct smmu_memo *tab, const uint64_t *gen,
				  uint64_t key, uint64_t addr,
				  struct smmu_memo_hit *hit)
{
	const struct smmu_memo *m = &tab[smmu_memo_index(key, addr)];
	/* Acquire: pairs with the writer's final release store of seq. */
	uint64_t seq = plat_load_acq64(&m->seq);

	if (seq & 1)
		return false;
	/* Acquire: each pairs with the writer's release store of the field
	 * (see the ordering rules at the top of this file). */
	uint64_t mkey = plat_load_acq64(&m->key), va = plat_load_acq64(&m->va);
	uint64_t mask = plat_load_acq64(&m->mask), mgen = plat_load_acq64(&m->gen);

	if (mkey != key || (addr & ~mask) != va)
		return false;
	hit->oa = plat_load_acq64(&m->oa) | (addr & mask);
	hit->lat = plat_load_acq64(&m->lat);
	uint64_t ac = plat_load_acq64(&m->attr_cb);

	hit->attr = (unsigned)ac;
	hit->cb = (unsigned)(ac >> 32);
	/* Relaxed: pairs with the release store in smmu_core_gen_bump; the
	 * acquire loads above keep it after them. */
	if (plat_load_rlx64(gen) != mgen)
		return false;
	return plat_load_rlx64(&m->seq) == seq;
}

/* Record a pure hit (see above). Call with the model's lock held. */
static inline void smmu_memo_store(struct smmu_memo *tab, uint64_t gen,
				   uint64_t key, uint64_t addr, uint64_t mask,
				   uint64_t oa, uint64_t lat, unsigned attr,
				   unsigned cb)
{
	struct smmu_memo *m = &tab[smmu_memo_index(key, addr)];
	/* Only lock holders write an entry: the plain read is no race. */
	uint64_t seq = m->seq;

	/* Relaxed: the release stores below order it before them (pairs
	 * with the reader's acquire loads of the fields). */
	plat_store_rlx64(&m->seq, seq + 1);
	plat_store_rel64(&m->gen, gen);
	plat_store_rel64(&m->key, key);
	plat_store_rel64(&m->va, addr & ~mask);
	plat_store_rel64(&m->mask, mask);
	plat_store_rel64(&m->oa, oa & ~mask);
	plat_store_rel64(&m->lat, lat);
	plat_store_rel64(&m->attr_cb, (uint64_t)attr | (uint64_t)cb << 32);
	/* Release: pairs with the reader's first, acquire, load of seq. */
	plat_store_rel64(&m->seq, seq + 2);
}

#endif
