/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 translation (3.2, 3.4): the configuration from the cache or the
 * stream table, the TLB, the walk (common/walk.c) and the fault events
 * (7.3); and the lock-free replay of TLB hits (common/hit_memo.h).
 */
#include <string.h>

#include "v3_model.h"

/* ---- translation ---------------------------------------------------------- */

unsigned v3_walk_fault_event(enum smmu_fault f)
{
	switch (f) {
	case SMMU_F_TRANSLATION: return IOPT_SMMUV3_EVT_F_TRANSLATION;
	case SMMU_F_ADDR_SIZE: return IOPT_SMMUV3_EVT_F_ADDR_SIZE;
	case SMMU_F_ACCESS: return IOPT_SMMUV3_EVT_F_ACCESS;
	case SMMU_F_PERMISSION: return IOPT_SMMUV3_EVT_F_PERMISSION;
	default: return IOPT_SMMUV3_EVT_F_WALK_EABT;
	}
}

/* Event record word 1 access fields (7.3): RnW [35], InD [34], PnU [33]. */
static uint64_t access_bits(const struct iopt_smmuv3_txn *t, bool ind)
{
	return (t->write ? 0 : 1ull << 35) | (ind ? 1ull << 34 : 0) |
	       (t->priv ? 1ull << 33 : 0);
}

static unsigned acc_of(const struct iopt_smmuv3_txn *t)
{
	return (t->write ? SMMU_ACC_WRITE : 0) | (t->exec ? SMMU_ACC_EXEC : 0) |
	       (t->priv ? SMMU_ACC_PRIV : 0);
}

/* Inlined into its one caller, translate_serialised(): one call level,
 * one register save, per locked translation. */
static inline __attribute__((always_inline)) int
translate_locked(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *t,
		 uint64_t cycle, struct iopt_smmuv3_resp *r)
{
	uint64_t tcur;
	uint64_t *ts = smmu_core_slot(&s->core, cycle, &tcur);
	unsigned acc = acc_of(t), ev = 0;
	unsigned cls = 2;	/* event CLASS: 0 CD fetch, 1 table walk, 2 input */
	struct smmu_walk_res w;
	struct cfg_entry local;
	const struct cfg_entry *c = NULL;

	r->fault = 0;
	r->oa = 0;
	r->attr = 0;
	s->cfg_pure = false;
	w.fault = SMMU_OK;
	w.fault_stage = 0;
	w.ipa = 0;
	w.s2_on_walk = false;
	s->st.translations++;
	if (t->translated &&
	    (!s->p.ats || !(s->cr0 & CR0_SMMUEN) || !(s->cr0 & CR0_ATSCHK))) {
		/* 3.9.1: without ATS, unsupported; with SMMUEN = 0,
		 * forbidden; with ATSCHK = 0, passed unchecked. */
		if (!s->p.ats)
			ev = IOPT_SMMUV3_EVT_F_UUT;
		else if (!(s->cr0 & CR0_SMMUEN))
			ev = IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN;
		r->oa = t->addr;
		goto done;
	}
	if (!(s->cr0 & CR0_SMMUEN)) {
		/* Disabled: GBPA decides (6.3.14); an input address beyond
		 * the OAS aborts without an event (3.4). */
		if ((s->gbpa & GBPA_ABORT) || t->addr >> s->p.oas)
			ev = IOPT_SMMUV3_EVT_ABORT;
		r->oa = t->addr;
		goto done;
	}
	/* Configuration: the cache, or the stream table (and CD). */
	tcur += s->p.cfg.latency;
	c = v3_cfg_lookup(s, t->sid, t->ssv, t->ssv ? t->ssid : 0);
	if (c) {
		s->st.cfg_hits++;
	} else {
		int64_t lat = 0;

		s->st.cfg_misses++;
		memset(&w, 0, sizeof(w));
		ev = v3_build_cfg(s, t, &local, &lat, &w);
		tcur += (uint64_t)lat;
		if (ev) {
			if (w.fault) {
				/* A stage 2 fault on the CD fetch: CLASS = CD,
				 * recorded as STE.S2R says (local.rec_s2). */
				cls = 0;
				goto fault_event;
			}
			goto done;
		}
		v3_cfg_insert(s, &local);
		c = &local;
	}
	if (t->translated) {
		/* CR0.ATSCHK = 1: the STE decides (7.3.8). */
		if (!c->ats_pass)
			ev = IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN;
		r->oa = t->addr;
		goto done;
	}
	if (!c->s1 && !c->s2) {
		if (t->addr >> s->p.oas)
			goto s1_bypass_addr_size;
		r->oa = t->addr;	/* bypass */
		goto done;
	}
	const struct smmu_stage_cfg *first = &c->s2c;
	uint64_t ia = t->addr;	/* without its tag, under TBI */

	if (c->s1) {
		/* VA[55] selects TTB0 or TTB1 (3.4.1); a disabled one faults. */
		int u = (int)(t->addr >> 55 & 1);

		first = &c->s1c[u];
		if (!c->ttb_ok[u] || !smmu_in_region(first, t->addr)) {
			w.fault = SMMU_F_TRANSLATION;
			w.fault_stage = 1;
			w.tt_write = false;
			ev = IOPT_SMMUV3_EVT_F_TRANSLATION;
			goto fault_event;
		}
		if (first->tbi)
			ia = smmu_untag(ia);
	}
	/* TLB. */
	uint8_t stage = c->s1 ? 1 : 2;

	const struct smmu_stage_cfg *s2 = c->s1 && c->s2 ? &c->s2c : NULL;
	bool looked;
	struct tlb_entry *e = smmu_core_tlb_hit(&s->core, first, s2, c->vmid,
						c->asid, stage, ia, acc, &tcur,
						&looked);

	if (e) {
		s->st.tlb_hits++;
		r->oa = e->oa | (ia & ((1ull << e->size_lg2) - 1));
		r->attr = e->attr;
		goto done;
	}
	if (looked)
		s->st.tlb_misses++;
	/* Stage 1 bypassed: checked after the TLB, which cannot hold such an
	 * address (it holds only what walks translated). */
	if (!c->s1 && t->addr >> s->p.oas)
		goto s1_bypass_addr_size;
	/* Walk, in a walk slot: walk.latency per walk cache probe, plus
	 * the descriptor reads. */
	smmu_core_walk(&s->core, first, s2, c->vmid, c->asid, ia, acc, &tcur, &w);
	s->st.walks++;
	s->st.fetches += w.fetches;
	if (w.fault) {
		ev = v3_walk_fault_event(w.fault);
		goto fault_event;
	}
	r->oa = w.oa;
	r->attr = c->s1 ? w.attr : 0;
	smmu_core_tlb_fill(&s->core, first, stage, c->vmid, c->asid,
			   c->s1 && !(w.desc >> 11 & 1), ia, &w);
	goto done;

s1_bypass_addr_size:
	/* Stage 1 bypassed: an input address beyond the IAS (= OAS here;
	 * with both stages bypassed, the OAS) is a stage 1 Address Size
	 * fault, CLASS = IN (3.4, 7.3.14). No CD decides whether to record
	 * it: it is recorded (c->rec_s1 is true without a CD;
	 * docs/smmu_model.md). */
	w.fault = SMMU_F_ADDR_SIZE;
	w.fault_stage = 1;
	w.tt_write = false;
	ev = IOPT_SMMUV3_EVT_F_ADDR_SIZE;
fault_event:
	{
		/* CLASS (7.3): TT for a stage 2 fault on a stage 1 table
		 * access, and for an external abort on a stage 1 descriptor
		 * (S2 = 0, 7.3.12); CD for a stage 2 fault on the CD fetch
		 * (set above); IN otherwise. */
		if (w.s2_on_walk || (ev == IOPT_SMMUV3_EVT_F_WALK_EABT && w.fault_stage == 1))
			cls = 1;
		/* 7.3.13-16: InD is 0 for writes (post-override attributes);
		 * S2 [39]; CLASS [41:40]; TTRnW [44] in the four translation
		 * faults with CLASS = TT: 1 when the table access that
		 * faulted was a read, 0 when it was a hardware update of the
		 * descriptor. */
		uint64_t w1 = access_bits(t, t->exec && !t->write) |
			      (w.fault_stage == 2 ? 1ull << 39 : 0) | (uint64_t)cls << 40 |
			      (cls == 1 && !w.tt_write && ev != IOPT_SMMUV3_EVT_F_WALK_EABT ?
			       1ull << 44 : 0);

		/* IPA [51:12] for translation faults; FetchAddr [55:3] for
		 * F_WALK_EABT, which CD.R/STE.S2R do not suppress (5.5).
		 * Stage 2 faults (CLASS CD, TT or IN) follow STE.S2R, stage 1
		 * faults CD.R. */
		if (ev == IOPT_SMMUV3_EVT_F_WALK_EABT)
			v3_event(s, ev, t, w1, t->addr, w.fetch_pa & FETCH_MASK, tcur);
		else if (w.fault_stage == 2 ? (c ? c->rec_s2 : local.rec_s2) :
					      c->rec_s1)
			v3_event(s, ev, t, w1, t->addr,
				 w.ipa & (((1ull << 52) - 1) & ~0xfffull), tcur);
	}
	goto out_fault;
done:
	if (ev == IOPT_SMMUV3_EVT_F_UUT)	/* 7.3.2: incoming InD/PnU; Reason 1 */
		v3_event(s, ev, t, access_bits(t, t->exec) | 1, t->addr, 0, tcur);
	else if (ev == IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN)	/* 7.3.8: RnW only */
		v3_event(s, ev, t, t->write ? 0 : 1ull << 35, t->addr, 0, tcur);
	else if (ev == IOPT_SMMUV3_EVT_F_STE_FETCH || ev == IOPT_SMMUV3_EVT_F_CD_FETCH)
		v3_event(s, ev, t, 0, 0, s->fetch_pa & FETCH_MASK, tcur);	/* 7.3.4, 7.3.10 */
	else if (ev == IOPT_SMMUV3_EVT_C_BAD_STREAMID && !(s->cr2 & CR2_RECINVSID))
		;				/* 7.3.3: recorded only when asked */
	else if (ev && ev != IOPT_SMMUV3_EVT_ABORT)
		v3_event(s, ev, t, 0, 0, 0, tcur);	/* configuration errors: no address */
out_fault:
	if (ev)
		s->st.faults++;
	r->fault = ev;
	r->ready = tcur;
	smmu_core_slot_done(ts, tcur);
	smmu_lat_account(tcur - cycle, &s->st.lat_sum, &s->st.lat_max,
			 s->st.lat_hist);
	return 0;
}

/* The hit memo's key of a transaction (hit_memo.h): StreamID, SubstreamID
 * when valid, and the access. */
static uint64_t memo_key(const struct iopt_smmuv3_txn *t)
{
	return (uint64_t)t->sid | (uint64_t)(t->ssv ? t->ssid & 0xfffffu : 0) << 32 |
	       (uint64_t)t->ssv << 52 | (uint64_t)acc_of(t) << 53;
}

/* This thread's (simulation: CPU's) hit block note (model_core.h). */
PLAT_CPU_LOCAL(struct smmu_hit_tls, smmu_v3_hit_tls);

static bool cmdq_idle(const struct iopt_smmuv3 *s)
{
	return s->cmdq_prod == (s->cmdq_cons & ~(0x7fu << CONS_ERR_SHIFT));
}

/* A translation under the model's lock (iopt_smmuv3_translate without a
 * replayed hit). Out of line, so that the entry point and the replay's
 * path save no registers for it. */
static __attribute__((noinline)) int
translate_serialised(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *txn,
		     uint64_t cycle, struct iopt_smmuv3_resp *resp)
{
	/* No read-side section here: the walker takes one around its reads
	 * of translation tables (smmu_walk); stream and context tables are
	 * read through the memory callbacks by copy. */
	plat_mutex_lock(&s->core.lock);
	int ret = smmu_core_time_at(&s->core, &cycle);

	if (plat_unlikely(ret)) {
		plat_mutex_unlock(&s->core.lock);
		return ret;
	}
	if (!cmdq_idle(s))
		v3_run_cmds(s, cycle);	/* commands due by now take effect first */
	else
		smmu_core_time_set(&s->core, cycle);
	ret = translate_locked(s, txn, cycle, resp);
	/* A hit that changed nothing, with no command waiting, can be
	 * replayed without the lock; anything else retires the memo. */
	if (smmu_core_memo_pure(&s->core) && !resp->fault && s->cfg_pure &&
	    cmdq_idle(s) && !txn->translated)
		smmu_core_memo_keep(&s->core, memo_key(txn), txn->addr, resp->oa,
				    resp->attr, 0, resp->ready);
	else
		smmu_core_gen_bump(&s->core);
	plat_mutex_unlock(&s->core.lock);
	return ret;
}

/* A translation that the hit memo may serve (common/hit_memo.h): a
 * replayed hit, or else the locked path. Out of line, so that a
 * translation when no memo is live saves no registers for it. */
static __attribute__((noinline)) int
translate_memo(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *txn,
	       uint64_t cycle, struct iopt_smmuv3_resp *resp)
{
	struct smmu_memo_hit h;

	if (!smmu_core_fast_hit(&s->core, plat_cpu_local(smmu_v3_hit_tls),
				memo_key(txn), txn->addr, cycle, &h, &resp->ready))
		return translate_serialised(s, txn, cycle, resp);
	resp->fault = 0;
	resp->oa = h.oa;
	resp->attr = h.attr;
	return 0;
}

int iopt_smmuv3_translate(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *txn,
			  uint64_t cycle, struct iopt_smmuv3_resp *resp)
{
	/*
	 * A TLB hit the model's last locked translations left in the hit
	 * memo needs no lock (common/hit_memo.h): the memo holds only hits
	 * that changed nothing but time, slots and statistics, made while
	 * no command was waiting, and every register write, command,
	 * fill or fault since retires it.
	 */
	if (smmu_core_memo_live(&s->core) && !txn->translated)
		return translate_memo(s, txn, cycle, resp);
	return translate_serialised(s, txn, cycle, resp);
}
