/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 TLB maintenance and syncs (the ATS1* translation operations,
 * whose completion v2_next_event() also reports, are in v2_ats.c).
 *
 * Invalidation: the entries an operation names leave the TLB (and, for
 * the non-leaf forms, the walk cache) when it is written; the operation
 * is outstanding for tlbi_cycles of a sequential invalidation engine and
 * a sync waits for it. A bank's TLBSYNC covers the operations written to
 * that bank; sTLBGSYNC covers every operation, global or per bank (the
 * sources do not say whether a bank's sync also covers global ones; this
 * model says no: docs/smmuv2_model.md).
 *
 * Sync: SACTIVE/GSACTIVE read 1 until max(write, the covered operations'
 * completion) + sync_cycles: the status of the operations issued before
 * the most recent sync write, as the SMMUv2 register descriptions put
 * it (docs/smmuv2_model.md). A sync written while one is active on the
 * same register restarts it (IOPT_SMMUV2_SYNC_RESTART: completion
 * measured from the newest write) or joins it (IOPT_SMMUV2_SYNC_JOIN:
 * completion moves only as far as newer operations require). With
 * params.sync_blocked_by_stall, a sync also stays active while a stalled
 * context fault is pending in what it covers (its bank; any bank for the
 * global sync), and completes sync_cycles after the RESUME at the
 * earliest.
 */
#include <string.h>

#include "v2_model.h"

/* ---- invalidation ---------------------------------------------------------- */

/* Remove what m names from the TLB and, unless leaf-only, from the walk
 * cache (which holds table descriptors: no leaf ever lives there). */
static void invalidate(struct iopt_smmuv2 *s, struct tlb_match *m, bool leaf)
{
	if (s->core.tlb_on)
		tlb_invalidate(&s->core.tlb, m);
	if (s->core.wc.enabled && !leaf) {
		m->or_global = false;
		tlb_invalidate(&s->core.wc.t, m);
	}
}

/* The page a by-VA operand names: AArch64 banks write (VA >> 12) |
 * ASID << 48 as 64 bits, AArch32 banks (VA & ~0xfff) | ASID as 32 bits. */
static void va_operand(const struct v2_cb *cb, uint64_t val, uint64_t *va,
		       uint16_t *asid)
{
	if (cb->cba2r & CBA2R_VA64) {
		uint64_t pg = val & ((1ull << 44) - 1);

		*va = pg << 12;
		/* Sign-extend bit 55 of the VA (bit 43 of the page number)
		 * so that TTBR1 addresses match their entries. */
		if (*va >> 55 & 1)
			*va |= 0xffull << 56;
		*asid = (uint16_t)(val >> 48);
	} else {
		*va = val & 0xfffff000u;
		*asid = (uint16_t)(val & 0xffu);
	}
}

void v2_tlbi(struct iopt_smmuv2 *s, int n, uint32_t off, uint64_t val,
	     unsigned size, uint64_t cycle)
{
	struct tlb_match m;
	bool leaf = false;

	memset(&m, 0, sizeof(m));
	if (n < 0) {
		switch (off) {
		case V2_TLBIVMID:	/* VMID 15:0 */
			m.by_vmid = true;
			m.vmid = (uint16_t)(val & (s->scr0 & SCR0_VMID16EN ?
						   0xffffu : 0xffu));
			break;
		case V2_TLBIALLNSNH:	/* every non-secure, non-hyp entry */
			break;
		default:		/* TLBIALLH: no hyp contexts modelled */
			goto cost;
		}
	} else {
		const struct v2_cb *cb = &s->cb[n];
		uint64_t va;
		uint16_t asid;

		m.by_vmid = true;
		m.vmid = (uint16_t)(cb->cbar & CBAR_VMID);
		/* Nested banks' entries carry the stage 2 bank's VMID. */
		if ((cb->cbar >> CBAR_TYPE_SHIFT & 3u) == CBAR_TYPE_NESTED &&
		    (cb->cbar >> 8 & 0xffu) < s->p.num_cb)
			m.vmid = (uint16_t)(s->cb[cb->cbar >> 8 & 0xffu].cbar & CBAR_VMID);
		switch (off) {
		case CB_TLBIVAL:
		case CB_TLBIVAAL:
			leaf = true;
			/* fall through */
		case CB_TLBIVA:
		case CB_TLBIVAA:
			/* One page at VA; of one ASID (and global entries),
			 * or of every ASID (VAA). */
			va_operand(cb, val, &va, &asid);
			m.by_asid = m.or_global = off == CB_TLBIVA || off == CB_TLBIVAL;
			m.asid = asid;
			m.by_stage = true;
			m.stage = 1;
			m.by_range = true;
			m.lo = va;
			m.hi = va | 0xfff;
			break;
		case CB_TLBIASID:
			m.by_asid = true;	/* global entries stay */
			m.asid = (uint16_t)(cb->cba2r & CBA2R_VA64 ? val : val & 0xffu);
			m.by_stage = true;
			m.stage = 1;
			break;
		case CB_TLBIALL:
			break;			/* everything of the bank's VMID */
		case CB_TLBIIPAS2L:
			leaf = true;
			/* fall through */
		default:			/* TLBIIPAS2: IPA >> 12 */
			m.by_stage = true;
			m.stage = 2;
			m.by_range = true;
			m.lo = (size == 8 ? val : (uint32_t)val) << 12;
			m.hi = m.lo | 0xfff;
			break;
		}
	}
	invalidate(s, &m, leaf);
cost:
	s->st.tlbis++;
	uint64_t start = cycle > s->maint_free ? cycle : s->maint_free;

	s->maint_free = start + s->p.tlbi_cycles;
	s->maint_done = s->maint_free;
	if (n >= 0)
		s->cb[n].maint_done = s->maint_free;
}

/* ---- sync -------------------------------------------------------------------- */

static struct v2_sync *sync_of(struct iopt_smmuv2 *s, int n)
{
	return n < 0 ? &s->gsync : &s->cb[n].sync;
}

/* Is a stalled fault pending in what the sync of n covers? */
static bool stall_in_scope(const struct iopt_smmuv2 *s, int n)
{
	if (!s->p.sync_blocked_by_stall)
		return false;
	if (n >= 0)
		return s->cb[n].fsr & FSR_SS;
	for (unsigned i = 0; i < s->p.num_cb; i++)
		if (s->cb[i].fsr & FSR_SS)
			return true;
	return false;
}

bool v2_sync_active(struct iopt_smmuv2 *s, int n, uint64_t cycle)
{
	const struct v2_sync *y = sync_of(s, n);

	return cycle < y->done || y->blocked;
}

/* A read of TLBSTATUS (n >= 0) or sTLBGSTATUS (n < 0), counted. */
uint32_t v2_status_read(struct iopt_smmuv2 *s, int n, uint64_t cycle)
{
	bool active = v2_sync_active(s, n, cycle);

	s->st.sync_polls++;
	s->st.sync_polls_active += active;
	return active ? SACTIVE : 0;
}

void v2_sync_start(struct iopt_smmuv2 *s, int n, uint64_t cycle)
{
	struct v2_sync *y = sync_of(s, n);
	uint64_t maint = n < 0 ? s->maint_done : s->cb[n].maint_done;
	uint64_t from = (cycle > maint ? cycle : maint) + s->p.sync_cycles;

	s->st.syncs++;
	if (v2_sync_active(s, n, cycle)) {
		s->st.sync_restarts++;
		/* JOIN: the active sync goes on; only operations written
		 * since it started can move its completion. RESTART: it
		 * starts again from this write (which is never earlier than
		 * the restarted sync would have completed, as both cycle
		 * and maint only grow). */
		if (s->p.sync_mode == IOPT_SMMUV2_SYNC_JOIN) {
			from = maint + s->p.sync_cycles;
			if (from < y->done)
				from = y->done;
		}
	}
	if (from > y->done)
		y->done = from;
	if (stall_in_scope(s, n))
		y->blocked = true;
}

void v2_sync_block(struct iopt_smmuv2 *s, unsigned n)
{
	uint64_t now = smmu_core_now(&s->core);

	if (!s->p.sync_blocked_by_stall)
		return;
	/* Only a sync still active when the fault stalls is held. */
	if (now < s->cb[n].sync.done)
		s->cb[n].sync.blocked = true;
	if (now < s->gsync.done)
		s->gsync.blocked = true;
}

void v2_sync_unblock(struct iopt_smmuv2 *s, uint64_t cycle)
{
	uint64_t at = cycle + s->p.sync_cycles;

	for (int n = -1; n < (int)s->p.num_cb; n++) {
		struct v2_sync *y = sync_of(s, n);

		if (!y->blocked || stall_in_scope(s, n))
			continue;
		y->blocked = false;
		if (y->done < at)
			y->done = at;
	}
}

uint64_t v2_next_event(const struct iopt_smmuv2 *s)
{
	uint64_t now = smmu_core_now(&s->core), t = UINT64_MAX;

#define V2_EV(c) do { if ((c) > now && (c) < t) t = (c); } while (0)
	V2_EV(s->maint_done);
	V2_EV(s->gsync.done);
	for (unsigned i = 0; i < s->p.num_cb; i++) {
		V2_EV(s->cb[i].sync.done);
		V2_EV(s->cb[i].ats_done);
	}
#undef V2_EV
	return t;
}
