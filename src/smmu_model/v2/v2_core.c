/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv2 model's entry points: presets, creation, the register space
 * dispatch, translation, time (the rules of common/model_time.h, shared
 * with the SMMUv3 model), statistics and the free-running adapter.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../common/runner.h"
#include "v2_model.h"

int iopt_smmuv2_preset(const char *name, struct iopt_smmuv2_params *p)
{
	struct iopt_smmuv2_params q;

	if (!name || !p)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	q.s1 = q.s2 = true;
	q.aarch64 = q.aarch32l = true;
	q.gran4k = q.gran64k = true;
	q.numsidb = 15;
	q.seed = 1;
	q.sync_cycles = 8;
	q.ats_cycles = 4;
	if (!strcmp(name, "mmu-500")) {
		/* MMU-500 TRM (DDI0517): up to 128 context banks and 128 stream
		 * match register groups; 4K/16K/64K granules; 48-bit
		 * addresses; TLB hit latency "two clocks" best case (2.1). The
		 * TLB and walk-cache geometry is this model's assumption
		 * (docs/smmuv2_model.md). */
		q.num_smrg = 128;
		q.num_cb = 128;
		q.num_s2cb = 0;
		q.gran16k = true;
		q.ias = q.oas = 48;
		q.ubs = 48;
		q.numpagendxb = 7;	/* 256 pages: 128 banks + room */
		q.tlb = (struct iopt_smmu_cache_params){ true, 2048, 4, IOPT_SMMU_REPL_LRU, 2 };
		q.walk = (struct iopt_smmu_cache_params){ true, 256, 4, IOPT_SMMU_REPL_LRU, 0 };
		q.translation_slots = 16;
		q.walk_slots = 8;
		q.tlbi_cycles = 32;
		q.sync_mode = IOPT_SMMUV2_SYNC_RESTART;
		q.sync_blocked_by_stall = true;
	} else if (!strcmp(name, "generic")) {
		q.num_smrg = 16;
		q.num_cb = 8;
		q.aarch32s = true;
		q.num_s2cb = 0;
		q.ias = q.oas = 40;
		q.ubs = 40;
		q.numpagendxb = 3;	/* 16 pages */
		q.tlb = (struct iopt_smmu_cache_params){ true, 256, 4, IOPT_SMMU_REPL_LRU, 2 };
		q.walk = (struct iopt_smmu_cache_params){ true, 64, 4, IOPT_SMMU_REPL_LRU, 0 };
		q.translation_slots = 4;
		q.walk_slots = 2;
		q.tlbi_cycles = 16;
		q.sync_mode = IOPT_SMMUV2_SYNC_JOIN;
		q.sync_blocked_by_stall = false;
	} else {
		return -EINVAL;
	}
	*p = q;
	return 0;
}

static bool size_ok(unsigned bits)
{
	return bits == 32 || bits == 36 || bits == 40 || bits == 42 ||
	       bits == 44 || bits == 48;
}

static bool params_ok(const struct iopt_smmuv2_params *p)
{
	return p->num_smrg >= 1 && p->num_smrg <= 128 && p->num_cb >= 1 &&
	       p->num_cb <= 128 && p->num_s2cb <= p->num_cb &&
	       p->numsidb >= 1 && p->numsidb <= 15 && (p->s1 || p->s2) &&
	       (p->aarch64 || p->aarch32l || p->aarch32s) &&
	       (p->gran4k || p->gran16k || p->gran64k) && size_ok(p->ias) &&
	       size_ok(p->oas) && size_ok(p->ubs) && p->numpagendxb <= 7 &&
	       p->num_cb <= (1u << (p->numpagendxb + 1)) &&
	       p->translation_slots && p->walk_slots &&
	       (unsigned)p->sync_mode <= IOPT_SMMUV2_SYNC_JOIN &&
	       smmu_cache_params_ok(&p->tlb) && smmu_cache_params_ok(&p->walk);
}

int iopt_smmuv2_create(const struct iopt_smmuv2_params *p,
		       const struct iopt_smmu_mem *mem,
		       void (*irq)(void *ctx, unsigned line, uint64_t cycle),
		       void *irq_ctx, struct iopt_smmuv2 **out)
{
	struct iopt_smmuv2 *s;
	int err;

	if (!p || !out || !params_ok(p))
		return -EINVAL;
	s = smmu_model_new(sizeof(*s), offsetof(struct iopt_smmuv2, core), mem, irq,
			   irq_ctx, &SMMU_CORE_PARAMS(p), &err);
	if (!s)
		return err;
	s->p = *p;
	s->cb = calloc(p->num_cb, sizeof(*s->cb));
	if (!s->cb) {
		iopt_smmuv2_destroy(s);
		return -ENOMEM;
	}
	v2_regs_reset(s);
	*out = s;
	return 0;
}

void iopt_smmuv2_destroy(struct iopt_smmuv2 *s)
{
	if (s)
		free(s->cb);
	smmu_model_free(s, offsetof(struct iopt_smmuv2, core));
}

uint64_t iopt_smmuv2_mmio_size(const struct iopt_smmuv2 *s)
{
	return 2 * v2_numpage(s) << v2_page_shift(s);
}

/* The 64-bit registers of a context bank page (their halves are 32-bit
 * accessible too). */
static bool cb_reg64(uint32_t off)
{
	switch (off) {
	case CB_TTBR0: case CB_TTBR1: case CB_PAR: case CB_FAR: case CB_IPAFAR:
	case CB_TLBIVA: case CB_TLBIVAA: case CB_TLBIVAL: case CB_TLBIVAAL:
	case CB_TLBIIPAS2: case CB_TLBIIPAS2L:
	case CB_ATS1PR: case CB_ATS1PW: case CB_ATS1UR: case CB_ATS1UW:
		return true;
	default:
		return false;
	}
}

/* Where an access lands: page (GR0 0, GR1 1, bank NUMPAGE + n) and the
 * offset in it. -EINVAL: outside, misaligned, or an 8-byte access to a
 * 32-bit register. */
static int decode(const struct iopt_smmuv2 *s, uint64_t off, unsigned size,
		  uint64_t *page, uint32_t *in)
{
	unsigned ps = v2_page_shift(s);

	if ((size != 4 && size != 8) || (off & (size - 1)) ||
	    off >= iopt_smmuv2_mmio_size(s))
		return -EINVAL;
	*page = off >> ps;
	*in = (uint32_t)(off & ((1u << ps) - 1));
	if (size == 8) {
		if (*page >= v2_numpage(s))
			return cb_reg64(*in) ? 0 : -EINVAL;
		return *page == 0 && *in == V2_SGFAR ? 0 : -EINVAL;
	}
	return 0;
}

int iopt_smmuv2_mmio_read(struct iopt_smmuv2 *s, uint64_t off, unsigned size,
			  uint64_t *val, uint64_t cycle)
{
	uint64_t page, v = 0;
	uint32_t in;
	int ret;

	if (!s || !val)
		return -EINVAL;
	plat_mutex_lock(&s->core.lock);
	ret = smmu_core_time_at(&s->core, &cycle);
	if (!ret)
		ret = decode(s, off, size, &page, &in);
	if (!ret) {
		smmu_core_time_set(&s->core, cycle);
		/* A read may have effects too (ATS1*, syncs completing):
		 * retire the hit memo (common/hit_memo.h). */
		smmu_core_gen_bump(&s->core);
		/* A 32-bit read of a 64-bit register's upper half. */
		uint32_t base = in & ~7u, hi = size == 4 && (in & 4);
		bool r64;

		if (page == 0) {
			r64 = base == V2_SGFAR;
			v = v2_gr0_read(s, r64 ? base : in, cycle);
		} else if (page == 1) {
			r64 = false;
			v = v2_gr1_read(s, in);
		} else if (page >= v2_numpage(s) &&
			   page - v2_numpage(s) < s->p.num_cb) {
			r64 = cb_reg64(base);
			v = v2_cb_read(s, (unsigned)(page - v2_numpage(s)),
				       r64 ? base : in, r64 ? 8 : 4, cycle);
		} else {
			r64 = false;	/* unimplemented pages: RAZ */
		}
		if (r64 && size == 4)
			v = hi ? v >> 32 : (uint32_t)v;
		*val = v;
	}
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

int iopt_smmuv2_mmio_write(struct iopt_smmuv2 *s, uint64_t off, unsigned size,
			   uint64_t val, uint64_t cycle)
{
	uint64_t page;
	uint32_t in;
	int ret;

	if (!s)
		return -EINVAL;
	plat_mutex_lock(&s->core.lock);
	ret = smmu_core_time_at(&s->core, &cycle);
	if (!ret)
		ret = decode(s, off, size, &page, &in);
	if (!ret) {
		smmu_core_time_set(&s->core, cycle);
		if (size == 4)
			val = (uint32_t)val;
		if (page == 0) {
			if (in == V2_SGFAR || in == V2_SGFAR + 4)
				;	/* sGFAR: written by the SMMU only here */
			else
				v2_gr0_write(s, in, (uint32_t)val, cycle);
		} else if (page == 1) {
			v2_gr1_write(s, in, (uint32_t)val);
		} else if (page >= v2_numpage(s) &&
			   page - v2_numpage(s) < s->p.num_cb) {
			v2_cb_write(s, (unsigned)(page - v2_numpage(s)), in, size,
				    val, cycle);
		}
		/* Registers, TLB maintenance: retire the hit memo
		 * (common/hit_memo.h). */
		smmu_core_gen_bump(&s->core);
	}
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

/* This thread's (simulation: CPU's) hit block note (model_core.h). */
PLAT_CPU_LOCAL(struct smmu_hit_tls, smmu_v2_hit_tls);

/* A translation that the hit memo may serve (common/hit_memo.h): a
 * replayed hit, or else the locked path. Out of line, so that a
 * translation when no memo is live saves no registers for it. */
static __attribute__((noinline)) int
translate_memo(struct iopt_smmuv2 *s, const struct iopt_smmuv2_txn *txn,
	       uint64_t cycle, struct iopt_smmuv2_resp *resp)
{
	struct smmu_memo_hit h;

	if (!smmu_core_fast_hit(&s->core, plat_cpu_local(smmu_v2_hit_tls),
				v2_memo_key(txn), txn->addr, cycle, &h, &resp->ready))
		return v2_translate_locked(s, txn, cycle, resp);
	resp->result = IOPT_SMMUV2_OK;
	resp->oa = h.oa;
	resp->attr = h.attr;
	resp->cb = h.cb;
	return 0;
}

int iopt_smmuv2_translate(struct iopt_smmuv2 *s, const struct iopt_smmuv2_txn *txn,
			  uint64_t cycle, struct iopt_smmuv2_resp *resp)
{
	if (!s || !txn || !resp)
		return -EINVAL;
	/* A TLB hit the last locked translations left in the hit memo
	 * needs no lock (common/hit_memo.h): the memo holds only hits that
	 * changed nothing but time, slots and statistics, and every
	 * register access, fill, fault or stall since retires it. */
	if (smmu_core_memo_live(&s->core))
		return translate_memo(s, txn, cycle, resp);
	return v2_translate_locked(s, txn, cycle, resp);
}

void iopt_smmuv2_get_stats(struct iopt_smmuv2 *s, struct iopt_smmuv2_stats *st)
{
	struct smmu_hit_stats hs;

	plat_mutex_lock(&s->core.lock);
	s->st.walk_cache_hits = s->core.wc.hits;	/* counted by the shared cache */
	s->st.walk_cache_misses = s->core.wc.misses;
	*st = s->st;
	/* Lock-free hits: each a translation and a TLB hit. */
	smmu_core_hit_stats(&s->core, &hs);
	st->translations += hs.n;
	st->tlb_hits += hs.n;
	st->lat_sum += hs.lat_sum;
	if (hs.lat_max > st->lat_max)
		st->lat_max = hs.lat_max;
	plat_mutex_unlock(&s->core.lock);
}

int iopt_smmuv2_stalled(struct iopt_smmuv2 *s, unsigned n,
			struct iopt_smmuv2_resp *resp)
{
	int ret = -ENOENT;

	if (!s || !resp || n >= s->p.num_cb)
		return -EINVAL;
	plat_mutex_lock(&s->core.lock);
	struct v2_cb *cb = &s->cb[n];

	if (cb->ndone) {
		*resp = cb->done[cb->done_head];
		cb->done_head = (cb->done_head + 1) % V2_STALL_MAX;
		cb->ndone--;
		ret = 0;
	} else if (cb->nheld) {
		ret = -EAGAIN;
	}
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

uint64_t iopt_smmuv2_next_event(struct iopt_smmuv2 *s)
{
	uint64_t t;

	plat_mutex_lock(&s->core.lock);
	t = v2_next_event(s);
	plat_mutex_unlock(&s->core.lock);
	return t;
}

int iopt_smmuv2_run_until(struct iopt_smmuv2 *s, uint64_t cycle)
{
	int ret;

	if (!s)
		return -EINVAL;
	plat_mutex_lock(&s->core.lock);
	ret = smmu_core_time_at(&s->core, &cycle);
	/* Every internal event (an invalidation or sync completing, ATSR
	 * going idle) is a cycle compared with the time of the read that
	 * observes it: running the model is moving its time. */
	if (!ret)
		smmu_core_time_set(&s->core, cycle);
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

/* ---- free-running adapter (common/runner.c) ------------------------------ */

SMMU_RUNNER_DEFINE(iopt_smmuv2, struct iopt_smmuv2)
