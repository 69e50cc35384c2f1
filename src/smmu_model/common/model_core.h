/* SPDX-License-Identifier: MIT */
/*
 * What every SMMU model is built on (SMMUv3 in v3/, SMMUv2 in v2/):
 * the memory and interrupt callbacks, the model's lock and clock
 * (model_time.h), the translation and walk slots of the timing core, the
 * TLB and the walk cache, and the translation steps both models take the
 * same way: a TLB lookup that checks the cached leaf's permissions, a
 * table walk in a walk slot charged by walk-cache probes and descriptor
 * fetches, and the TLB fill from the walk. Callers hold core.lock (taken
 * by every public entry point of a model), except for the lock-free TLB
 * hit (smmu_core_fast_hit), which replays a hit memo (hit_memo.h), takes
 * a translation slot of its thread's share of the slots, and keeps its
 * time, its slot turns and its statistics in its thread's hit block
 * (plain stores: one writer). A hit reads no word another hitting thread
 * writes (docs/smmu_model.md, "Lock-free TLB hits").
 *
 * A header over 600 lines on purpose: the per-translation steps are
 * inline here, so that neither model pays a call for them.
 */
#ifndef IOPT_SMMU_MODEL_CORE_H
#define IOPT_SMMU_MODEL_CORE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <iopgtable/smmuv3.h>

#include "../../platform/platform.h"
#include "tlb.h"
#include "walk.h"
#include "hit_memo.h"
#include "model_time.h"
#include "walk_cache.h"

#define SMMU_HIT_OWNED	8
/* Words per translation slot: the locked path's and one per hit block,
 * rounded up to whole lines. */
#define SMMU_SLOT_WRITERS	16

/*
 * A device thread's hit block in one model: the cycle its latest hit
 * started at (now: its part of the model's time), its hit count (n: its
 * part of the slot round robin), its share of the translation slots and
 * its hit statistics; and, outside the block, one word per translation
 * slot (when its hits make that slot free; struct smmu_core). The first
 * SMMU_HIT_OWNED threads that hit on a model each own a block (claimed
 * by a compare-and-swap of owner, never given back): the owner alone
 * stores to it and to its slot words, with relaxed stores (no locked
 * instruction). Other hitting threads never read a block (so a hit
 * moves no line another hit writes); the locked path reads now and n
 * under the model's lock (smmu_core_now, smmu_core_slot_take) and
 * get_stats the statistics, with relaxed loads. Later threads share the
 * last block and its words and update them with atomic
 * read-modify-writes (smmu_core_hit_shared). What a hit writes sits 64
 * bytes inside the 320-byte block, so that two blocks never share a
 * cache line however the model is aligned.
 */
struct smmu_hit_block {
	uint64_t pad0[8];
	/* The line every hit writes (now, n, run_n) and reads. */
	uint64_t now, n;
	/* Latency statistics: its latest hits' run of equal latencies
	 * (run_n hits of run_lat cycles), and the earlier runs' sum, maximum
	 * and log2 histogram (smmu_core_hit_flush). */
	uint64_t run_lat, run_n;
	/* Its share of the slots (smmu_core_hit_share), worked out for the
	 * set of used blocks used: slots off, off + step, ... (cnt of them);
	 * mask is cnt - 1 when cnt is a power of two, else UINT64_MAX.
	 * The owner's alone: plain. */
	uint64_t used, off, step, cnt, mask;
	uint64_t owner;		/* the owning thread's token; 0: free */
	uint64_t lat_sum, lat_max, hist[16];
	uint64_t pad1[4];
};

/* The calling thread's (simulation: CPU's) note of its hit block: each
 * model type's translate keeps one (PLAT_CPU_LOCAL) and passes it to
 * smmu_core_fast_hit(); its address is the thread's token. blk is its
 * block in the model whose core id is id (0: none yet). */
struct smmu_hit_tls {
	uint64_t id;
	unsigned blk;
};

/* What the lock-free hits counted, summed over the blocks. */
struct smmu_hit_stats {
	uint64_t n, lat_sum, lat_max, hist[16];
};

struct smmu_core {
	struct iopt_smmu_mem mem;
	void (*irq)(void *ctx, unsigned line, uint64_t cycle);
	void *irq_ctx;
	struct plat_mutex lock;
	struct smmu_clock clk;
	/*
	 * The slots' words, in one allocation aligned to 64 bytes
	 * (slot_mem): slot_free[i * SMMU_SLOT_WRITERS + w] is when slot i is
	 * free as far as writer w knows: w = 0 the locked path (relaxed
	 * stores by the lock holder), w = 1 + k hit block k (relaxed stores
	 * by its owner; the shared block's by compare-and-swap). Slot i is
	 * free from the maximum over its writers (smmu_core_slot_free), all
	 * of them in the slot's own two lines. Relaxed loads anywhere: each
	 * pairs by value with its writer's store. Since hitting threads use
	 * disjoint shares of the slots (smmu_core_hit_share), the words a
	 * hit reads beside its own are written only by the locked path, or
	 * by a thread that used the slot before the shares changed.
	 *
	 * The locked path's slot in turn is number (turn + every used
	 * block's hit count) % nslot; a hit's is the turn-th of its share,
	 * with turn = (turn + its own count) (smmu_core_fast_hit). turn
	 * counts the locked translations that took a slot (relaxed stores
	 * by the lock holder, relaxed loads by hits); nslot_mask is nslot -
	 * 1 when nslot is a power of two (no division), else 0.
	 */
	uint64_t *slot_free;
	void *slot_mem;			/* the allocation both are in */
	uint64_t turn;
	uint64_t nslot_mask;
	/* When the last locked translation's slot let it start
	 * (smmu_core_slot). Model lock. */
	uint64_t slot_start;
	uint64_t *walk_free;			/* each walk slot free from */
	unsigned nslot, nwalk, next_walk;
	unsigned tlb_latency, walk_latency;	/* cycles per lookup, per probe */
	struct tlb tlb;
	bool tlb_on;
	bool locked;			/* lock initialised */
	struct smmu_wcache wc;
	/* The last TLB lookup (smmu_core_tlb_hit) was a hit that changed no
	 * replacement state; the block mask of the entry. Model lock. */
	bool hit_pure;
	uint64_t hit_mask;
	/* Hit-memo generation: see hit_memo.h and smmu_core_gen_bump;
	 * memo_gen: the generation of the latest memo store (relaxed store
	 * by the lock holder), so that a translation skips the probe when
	 * no memo can be valid (smmu_core_memo_live). gen starts at 1,
	 * memo_gen at 0: the zeroed entries are never valid. */
	uint64_t gen, memo_gen;
	/* The hit blocks some thread has used: bit k for hb[k], set (a
	 * relaxed fetch-or) by the thread's first hit on this model, before
	 * it stores to the block; never cleared. Relaxed loads: a thread
	 * that reads the bit and not yet the block's values reads zeros,
	 * which the maximum and the sum ignore. The hits' slot shares are
	 * worked out from it (smmu_core_share). */
	uint64_t hb_used;
	uint64_t id;			/* unique to this core (hit_tls) */
	struct smmu_memo memo[1u << SMMU_MEMO_LG2];
	struct smmu_hit_block hb[SMMU_HIT_OWNED + 1];
	/* Admission to the memo (smmu_core_memo_keep): per memo entry, a
	 * hash of the (key, page) of the latest pure locked hit there that
	 * was not recorded. Model lock; hits never read it. */
	uint64_t memo_cand[1u << SMMU_MEMO_LG2];
	/* The walker's view of mem, with wc attached when enabled: built
	 * once by smmu_model_new (smmu_core_walk_mem). Last, so that the
	 * words the lock-free hits read keep their offsets. Model lock. */
	struct smmu_mem walk_mem;
};

/* What a model's parameters give its core. */
struct smmu_core_params {
	unsigned translation_slots, walk_slots;
	const struct iopt_smmu_cache_params *tlb, *walk;
	uint64_t seed;
	bool shared_clock;
};

/* The core parameters of a model's parameter struct *p (both models'
 * structs name these fields alike). */
#define SMMU_CORE_PARAMS(p)							\
	((const struct smmu_core_params){ (p)->translation_slots, (p)->walk_slots, \
					  &(p)->tlb, &(p)->walk, (p)->seed,	\
					  (p)->shared_clock })

/*
 * Create a model: size zeroed bytes (sizeof the model's struct) whose
 * struct smmu_core sits at core_off, with the core set up from mem, the
 * irq callback and cp: the model, or NULL with *err -EINVAL (mem lacks a
 * callback: nothing allocated), -ENOMEM or the mutex's negative errno
 * (nothing left allocated). The model then adds its own state; on a later
 * failure smmu_model_free() releases the core and the model.
 */
void *smmu_model_new(size_t size, size_t core_off, const struct iopt_smmu_mem *mem,
		     void (*irq)(void *, unsigned, uint64_t), void *irq_ctx,
		     const struct smmu_core_params *cp, int *err);
/* Release the core of a model from smmu_model_new() (whatever of it was
 * set up) and the model's memory. NULL: nothing. */
void smmu_model_free(void *model, size_t core_off);

/* Hit block k's latest hit cycle and hit count (struct smmu_hit_block). */
static inline const uint64_t *smmu_core_hb_now(const struct smmu_core *c, unsigned k)
{
	return &c->hb[k].now;
}

static inline const uint64_t *smmu_core_hb_n(const struct smmu_core *c, unsigned k)
{
	return &c->hb[k].n;
}

/* Slot i's word of writer w (0: the locked path, 1 + k: hit block k). */
static inline uint64_t *smmu_core_slot_word(const struct smmu_core *c, uint64_t i,
					    unsigned w)
{
	return &c->slot_free[i * SMMU_SLOT_WRITERS + w];
}

/* The model's time (model_time.h): now, or a later hit's cycle: the
 * largest over the locked path and every hit block. Relaxed loads: they
 * pair by value with the relaxed stores of smmu_core_time_set() and of
 * the hits (smmu_core_fast_hit). Any context; exact under the model's
 * lock with no hit running. */
static inline uint64_t smmu_core_now(const struct smmu_core *c)
{
	uint64_t now = plat_load_rlx64(&c->clk.now);

	for (uint64_t m = plat_load_rlx64(&c->hb_used); m; m &= m - 1) {
		uint64_t t = plat_load_rlx64(smmu_core_hb_now(c, (unsigned)__builtin_ctzll(m)));

		now = t > now ? t : now;
	}
	return now;
}

/* The time rule for an entry point at *cycle: 0 (with *cycle moved up to
 * the model's time where callers share the clock) or -EINVAL (the model
 * never goes back in time; nothing changed). Model lock held. */
static inline int smmu_core_time_at(const struct smmu_core *c, uint64_t *cycle)
{
	uint64_t now = smmu_core_now(c);

	if (plat_likely(*cycle >= now))
		return 0;
	if (!smmu_clock_lenient(&c->clk))
		return -EINVAL;
	*cycle = now;
	return 0;
}

/* Time moves forward to cycle (never back). Model lock held. */
static inline void smmu_core_time_set(struct smmu_core *c, uint64_t cycle)
{
	/* Only the lock holder stores now: the plain read is no race. The
	 * store pairs by value with the relaxed loads of smmu_core_now()
	 * and the hits. */
	if (cycle > c->clk.now)
		plat_store_rlx64(&c->clk.now, cycle);
}

/* Slot number i modulo the number of slots. */
static inline uint64_t smmu_core_slot_mod(const struct smmu_core *c, uint64_t i)
{
	return plat_likely(c->nslot_mask) ? i & c->nslot_mask : i % c->nslot;
}

/* The cycle slot i is free from: the maximum over the rows of the locked
 * path and of the hit blocks in used, the caller's relaxed load of
 * hb_used (relaxed loads; they pair by value with the rows' owners'
 * stores). Any context. */
static inline uint64_t smmu_core_slot_free(const struct smmu_core *c, uint64_t used,
					   uint64_t i)
{
	uint64_t f = plat_load_rlx64(smmu_core_slot_word(c, i, 0));

	for (uint64_t m = used; m; m &= m - 1) {
		unsigned w = 1 + (unsigned)__builtin_ctzll(m);
		uint64_t t = plat_load_rlx64(smmu_core_slot_word(c, i, w));

		f = t > f ? t : f;
	}
	return f;
}

/* The number of the next translation slot in turn (see struct
 * smmu_core), taken as the locked path's; used: the caller's relaxed
 * load of hb_used. Model lock held. */
static inline unsigned smmu_core_slot_take(struct smmu_core *c, uint64_t used)
{
	uint64_t i = c->turn;

	for (uint64_t m = used; m; m &= m - 1)
		/* Relaxed: pairs by value with the hits' stores of n. */
		i += plat_load_rlx64(smmu_core_hb_n(c, (unsigned)__builtin_ctzll(m)));
	/* Relaxed: the hits pair with it by value; only the lock holder
	 * stores turn. */
	plat_store_rlx64(&c->turn, c->turn + 1);
	return (unsigned)smmu_core_slot_mod(c, i);
}

/* The next translation slot (its locked-path word) and the cycle a translation
 * arriving at cycle starts in it; the caller says when the slot is busy
 * until with smmu_core_slot_done(). Model lock held. */
static inline uint64_t *smmu_core_slot(struct smmu_core *c, uint64_t cycle,
				       uint64_t *start)
{
	/* One load of hb_used for both, so that both count the same
	 * blocks (relaxed: pairs by value with the fetch-or of
	 * smmu_core_hit_block, as a load in each did). */
	uint64_t used = plat_load_rlx64(&c->hb_used);
	unsigned i = smmu_core_slot_take(c, used);
	uint64_t free = smmu_core_slot_free(c, used, i);

	*start = cycle > free ? cycle : free;
	c->slot_start = *start;
	c->hit_pure = false;		/* until this translation's TLB hit */
	return smmu_core_slot_word(c, i, 0);
}

/* The slot of smmu_core_slot() is busy until until (no earlier than the
 * start it gave). Model lock held. */
static inline void smmu_core_slot_done(uint64_t *slot, uint64_t until)
{
	/* The locked path's word is the lock holder's alone, and until is
	 * at least every writer's word for the slot: a relaxed store, which
	 * the readers of smmu_core_slot_free() pair with by value. */
	plat_store_rlx64(slot, until);
}

/*
 * Retire every hit memo: call, with the model's lock held, before
 * releasing it after anything that may change what a translation
 * returns or what a TLB hit changes (hit_memo.h).
 */
static inline void smmu_core_gen_bump(struct smmu_core *c)
{
	/* With no memo stored under the current generation (memo_gen
	 * behind it: the memo is not live) every entry is retired already:
	 * nothing to store, so a stream of misses leaves gen's line alone.
	 * Only lock holders store gen and memo_gen: the plain reads are no
	 * race. */
	if (c->gen != c->memo_gen)
		return;
	/* Release: pairs with the relaxed load in smmu_memo_find() (a
	 * reader that reads the new value must not use an older entry;
	 * hit_memo.h). */
	plat_store_rel64(&c->gen, c->gen + 1);
}

/*
 * Can any hit memo be valid? false when none was stored under the
 * current generation: a translation then goes to the locked path without
 * computing its key or probing. Relaxed loads: a stale answer only sends
 * a hit to the locked path, or to the probe, which validates the entry
 * itself (hit_memo.h). Any context.
 */
static inline bool smmu_core_memo_live(const struct smmu_core *c)
{
	return plat_load_rlx64(&c->gen) == plat_load_rlx64(&c->memo_gen);
}

/*
 * After a locked translation: was it a pure TLB hit (the core's part;
 * the caller adds its own: no configuration fill, no fault, nothing
 * outstanding that a later translation must act on first)? If so, the
 * caller records it with smmu_core_memo_keep(); if not, it retires the
 * memo (smmu_core_gen_bump). Callers test this first: a miss then skips
 * their own conditions. Model lock held.
 */
static inline bool smmu_core_memo_pure(const struct smmu_core *c)
{
	return c->hit_pure;
}

/*
 * Record the pure hit of smmu_core_memo_pure() for (key, addr), ready at
 * ready, as a hit memo -- on its second sighting: the first pure locked
 * hit on a (key, page) only notes it in memo_cand, the next one there
 * records it. A stream of hits on a page goes lock-free after one more
 * locked hit; a random stream, whose pages seldom repeat before their
 * entry is taken by another, stores no memo and so makes the following
 * translations neither probe the memo nor save registers for it. What
 * a translation returns is the same either way (a replay is exactly the
 * locked hit). Model lock held.
 */
static inline void smmu_core_memo_keep(struct smmu_core *c, uint64_t key,
				       uint64_t addr, uint64_t oa, unsigned attr,
				       unsigned cb, uint64_t ready)
{
	uint64_t h = (key ^ (addr >> 12)) * 0x9e3779b97f4a7c15ull;
	uint64_t *cand = &c->memo_cand[h >> (64 - SMMU_MEMO_LG2)];

	/* The index is smmu_memo_index()'s: the hash's top bits. */
	if (*cand != h) {
		*cand = h;
		return;
	}
	smmu_memo_store(c->memo, c->gen, key, addr, c->hit_mask, oa,
			ready - c->slot_start, attr, cb);
	/* Relaxed: read by smmu_core_memo_live() as a hint only; only lock
	 * holders store it. */
	plat_store_rlx64(&c->memo_gen, c->gen);
}

/* The calling thread's hit block in c when tls does not already name
 * it: claims a free one (or the shared last one) and marks it used. Any
 * thread, no lock held. */
unsigned smmu_core_hit_block(struct smmu_core *c, struct smmu_hit_tls *tls);

/*
 * The share of the translation slots of hit block k when the blocks in
 * used hit (k among them): with u used blocks, k the r-th of them
 * (counting from bit 0) and p = min(u, nslot), the slots i with
 * i % p == r % p: *off = r % p, *step = p, *cnt of them. One block alone
 * has every slot (off 0, step 1, cnt nslot). Any context.
 */
void smmu_core_share(const struct smmu_core *c, uint64_t used, unsigned k,
		     uint64_t *off, uint64_t *step, uint64_t *cnt);

/* Work out owned block k's share for used into the block (by its owner;
 * out of line: the used set changes a few times in a model's life). */
void smmu_core_hit_share(struct smmu_core *c, unsigned k, uint64_t used);

/* A lock-free hit, as smmu_core_fast_hit(), by a thread beyond the
 * SMMU_HIT_OWNED owners, in the shared block: atomic read-modify-writes
 * on its words. */
bool smmu_core_hit_shared(struct smmu_core *c, uint64_t cycle, uint64_t lat,
			  uint64_t *ready);

/* In an owned block (by its owner): end the run of equal latencies with
 * one hit of lat cycles, the run's hits moving to the sum, maximum and
 * histogram. */
void smmu_core_hit_flush(struct smmu_hit_block *b, uint64_t lat);

/*
 * A TLB hit without the model's lock: true when the memo holds one for
 * (key, addr) and the time rule accepts cycle, with *h and *ready filled
 * and the time, a translation slot and the hit statistics taken; false
 * (nothing changed but, on a thread's first hit, its block claimed) when
 * the locked path must decide. tls: the calling thread's note (struct
 * smmu_hit_tls). Call only when smmu_core_memo_live() (else no memo can
 * hold it). Any thread, no lock held; linearised at the memo lookup.
 *
 * What a hit reads and writes (docs/smmu_model.md, "Lock-free TLB
 * hits"): its own block's line and its slot words, and words only the
 * locked path writes (the memo, gen, clk.now, turn, hb_used, the locked
 * path's slot words); never a word another hitting thread writes, so
 * device threads hitting at once move no cache line between them.
 *  - Time: a hit is ordered after the locked path's time (clk.now) and
 *    after its own thread's previous hits (its block's now), not after
 *    other threads' hits: a cycle behind the larger of the two fails
 *    here and the locked path refuses it (-EINVAL) or, with a shared
 *    clock, the hit takes that larger time. The model's time stays the
 *    maximum over everything (smmu_core_now), which the locked path
 *    takes under the lock, so a locked translation, command or register
 *    access still never goes back behind any hit.
 *  - Slot: the (turn + its own count)-th slot, in turn, of the block's
 *    share (smmu_core_share): hitting threads never take the same slot,
 *    and a thread sharing the pipeline with p - 1 others has 1/p of its
 *    slots, a pessimistic model of their contention. The slot is free
 *    from the maximum over its words (the locked path's, its own, and
 *    those of threads whose share held it before the used set changed).
 * One thread alone (the discrete-event API) has every slot and gets
 * exactly what the locked path gives: the time and slot turn it reads
 * are those of every translation before it.
 */
static inline bool smmu_core_fast_hit(struct smmu_core *c, struct smmu_hit_tls *tls,
				      uint64_t key, uint64_t addr, uint64_t cycle,
				      struct smmu_memo_hit *h, uint64_t *ready)
{
	if (!smmu_memo_find(c->memo, &c->gen, key, addr, h))
		return false;
	/* The thread's block in this core (ids are never reused). */
	unsigned k = plat_likely(tls->id == c->id) ? tls->blk :
		     smmu_core_hit_block(c, tls);

	if (plat_unlikely(k == SMMU_HIT_OWNED))
		return smmu_core_hit_shared(c, cycle, h->lat, ready);
	struct smmu_hit_block *b = &c->hb[k];
	/* Relaxed: pairs by value with the fetch-or of smmu_core_hit_block
	 * (only the set of blocks matters, not what they hold). */
	uint64_t used = plat_load_rlx64(&c->hb_used);

	if (plat_unlikely(used != b->used))
		smmu_core_hit_share(c, k, used);
	/* The time: the locked path's (relaxed: pairs by value with the
	 * store of smmu_core_time_set) and this thread's latest hit (the
	 * owner's own word: a plain read). */
	uint64_t now = plat_load_rlx64(&c->clk.now), mine = b->now;

	now = mine > now ? mine : now;
	if (cycle < now) {
		if (plat_unlikely(!smmu_clock_lenient(&c->clk)))
			return false;		/* the locked path refuses it */
		cycle = now;
	}
	/* The slot: the (turn + n)-th of the share (turn: relaxed, pairs
	 * by value with the lock holder's store in smmu_core_slot_take). */
	uint64_t x = plat_load_rlx64(&c->turn) + b->n;
	uint64_t j = plat_likely(b->mask != UINT64_MAX) ? x & b->mask : x % b->cnt;
	uint64_t si = b->off + b->step * j;
	uint64_t *slot = &c->slot_free[si * SMMU_SLOT_WRITERS];
	/* The slot is free from the maximum over the locked path's word,
	 * its own and the other used blocks' (relaxed: each pairs by value
	 * with its writer's store: smmu_core_slot_done, its own below, the
	 * others' hits). Alone, or beside one other thread, without a loop:
	 * the loop over the used blocks cost a hit beside one other 20-30
	 * instructions more than a hit alone. */
	uint64_t other = used & ~(1ull << k), free;

	if (plat_likely(!(other & (other - 1)))) {	/* none or one */
		uint64_t t = plat_load_rlx64(&slot[1 + k]);

		free = plat_load_rlx64(&slot[0]);
		free = t > free ? t : free;
		if (other) {
			t = plat_load_rlx64(&slot[1 + __builtin_ctzll(other)]);
			free = t > free ? t : free;
		}
	} else {
		free = smmu_core_slot_free(c, used, si);
	}
	uint64_t done = (cycle > free ? cycle : free) + h->lat;
	uint64_t lat = done - cycle;

	*ready = done;
	/* This thread's words and block: it alone stores to them, so
	 * relaxed stores (pairing by value with the relaxed loads of
	 * smmu_core_now(), smmu_core_slot_take(), smmu_core_slot_free() and
	 * smmu_core_hit_stats(), by the locked path and get_stats). cycle
	 * is at least its latest. */
	plat_store_rlx64(&slot[1 + k], done);
	plat_store_rlx64(&b->now, cycle);
	plat_store_rlx64(&b->n, b->n + 1);
	if (plat_likely(lat == b->run_lat))
		plat_store_rlx64(&b->run_n, b->run_n + 1);
	else
		smmu_core_hit_flush(b, lat);
	return true;
}

/* The lock-free hits' statistics, summed over the blocks (any context;
 * a snapshot while hits run: a thread's current run of equal latencies
 * may be missed or counted twice while it moves to the histogram). */
static inline void smmu_core_hit_stats(struct smmu_core *c, struct smmu_hit_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i <= SMMU_HIT_OWNED; i++) {
		struct smmu_hit_block *hb = &c->hb[i];
		/* Relaxed: pair with the stores and adds of the hits. */
		uint64_t m = plat_load_rlx64(&hb->lat_max);
		uint64_t rl = plat_load_rlx64(&hb->run_lat), rn = plat_load_rlx64(&hb->run_n);

		if (rn && rl > m)
			m = rl;
		sum->n += plat_load_rlx64(smmu_core_hb_n(c, i));
		sum->lat_sum += plat_load_rlx64(&hb->lat_sum) + rl * rn;
		sum->lat_max = m > sum->lat_max ? m : sum->lat_max;
		for (unsigned k = 0; k < 16; k++)
			sum->hist[k] += plat_load_rlx64(&hb->hist[k]);
		if (rn)
			sum->hist[smmu_lat_bucket(rl)] += rn;
	}
}

/*
 * TLB lookup at *tcur (charged tlb_latency): the entry for ia under
 * (vmid, asid, stage) when its leaf (and, nested, its stage 2 leaf)
 * allows acc; NULL otherwise (a miss, or a hit the walk must redo).
 * *looked: the TLB was consulted (hit or miss is then the caller's to
 * count). hit_pure (false since smmu_core_slot, which a translation
 * takes first): an entry was returned and the lookup changed no
 * replacement state.
 */
static inline struct tlb_entry *
smmu_core_tlb_hit(struct smmu_core *c, const struct smmu_stage_cfg *first,
		  const struct smmu_stage_cfg *s2, uint16_t vmid, uint16_t asid,
		  uint8_t stage, uint64_t ia, unsigned acc, uint64_t *tcur,
		  bool *looked)
{
	/* Inline, as the walk and the fill below: each miss takes all
	 * three, and out of line they cost their calls' argument moves. */
	*tcur += c->tlb_latency;
	*looked = c->tlb_on;
	if (!c->tlb_on)
		return NULL;
	/* The tick moves only when a lookup changes an LRU stamp (tlb.h). */
	uint64_t tick = c->tlb.tick;
	struct tlb_entry *e = tlb_lookup(&c->tlb, vmid, asid, stage, ia);

	if (e && smmu_leaf_allows(first, e->desc, acc) &&
	    (!s2 || smmu_leaf_allows(s2, e->desc2, acc))) {
		c->hit_pure = c->tlb.tick == tick;
		c->hit_mask = (1ull << e->size_lg2) - 1;
		return e;
	}
	return NULL;
}

/* The walker's memory for walks tagged (vmid, asid) in the walk cache:
 * the core's walk_mem, with the tags set. Model lock held. */
static inline const struct smmu_mem *smmu_core_walk_mem(struct smmu_core *c,
							 uint16_t vmid,
							 uint16_t asid)
{
	smmu_wcache_tag(&c->wc, vmid, asid);
	return &c->walk_mem;
}

/*
 * Walk ia through first (then s2 when nested) in the next walk slot,
 * starting no earlier than *tcur; *tcur becomes the walk's completion:
 * walk_latency per walk-cache probe plus the memory's desc_latency per
 * descriptor fetched.
 */
static inline void smmu_core_walk(struct smmu_core *c, const struct smmu_stage_cfg *first,
				  const struct smmu_stage_cfg *s2, uint16_t vmid,
				  uint16_t asid, uint64_t ia, unsigned acc,
				  uint64_t *tcur, struct smmu_walk_res *w)
{
	uint64_t *ws = smmu_slot_next(c->walk_free, c->nwalk, &c->next_walk);
	uint64_t start = *tcur > *ws ? *tcur : *ws;

	smmu_walk(first, s2, smmu_core_walk_mem(c, vmid, asid), ia, acc, w);
	*tcur = start + (uint64_t)w->probes * c->walk_latency +
		(uint64_t)w->fetches * c->mem.desc_latency;
	*ws = *tcur;
}

/*
 * Would caching a walk's leaf of 2^size_lg2 bytes for ia under (vmid,
 * asid, stage) make two entries match ia? true when the TLB holds an entry
 * for those tags holding ia with another block size (a TLB match
 * conflict: the tables changed size at ia without the invalidation
 * break-before-make requires). Touches no replacement state.
 */
bool smmu_core_tlb_conflict_scan(const struct smmu_core *c, uint16_t vmid,
				 uint16_t asid, uint8_t stage, uint64_t ia,
				 unsigned size_lg2);

static inline bool smmu_core_tlb_conflict(const struct smmu_core *c, uint16_t vmid,
					  uint16_t asid, uint8_t stage, uint64_t ia,
					  unsigned size_lg2)
{
	/* Inline: with no other block size cached (the common case) there
	 * is nothing to scan. */
	if (!c->tlb_on || !(c->tlb.sizes & ~(1ull << size_lg2)))
		return false;
	return smmu_core_tlb_conflict_scan(c, vmid, asid, stage, ia, size_lg2);
}

/* Cache a successful walk's leaf (global: stage 1 nG = 0). The caller
 * retires the hit memo before releasing the lock (a fill follows a
 * miss: the call is not a pure hit; smmu_core_gen_bump). */
static inline void smmu_core_tlb_fill(struct smmu_core *c,
				      const struct smmu_stage_cfg *first,
				      uint8_t stage, uint16_t vmid, uint16_t asid,
				      bool global, uint64_t ia,
				      const struct smmu_walk_res *w)
{
	if (!c->tlb_on)
		return;
	struct tlb_entry e = {
		.global = global, .stage = stage, .g = (uint8_t)first->g,
		.level = (uint8_t)w->level, .size_lg2 = (uint8_t)w->size_lg2,
		.vmid = vmid, .asid = asid,
		.ia = ia & ~((1ull << w->size_lg2) - 1),
		.oa = w->oa & ~((1ull << w->size_lg2) - 1), .attr = w->attr,
		.desc = w->desc, .desc2 = w->desc2,
	};

	/* No generation move here: a fill follows a TLB miss in the same
	 * locked call, which is never a pure hit, so the call retires the
	 * memo before it releases the lock (smmu_core_memo_pure: a
	 * translation; a register access retires it in any case). */
	tlb_insert(&c->tlb, &e);
}

#endif
