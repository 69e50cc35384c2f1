/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 global errors, interrupts and the event queue: GERROR and
 * GERRORN (7.5), the wired and MSI interrupts (3.18), and event records
 * (7.2-7.4).
 */
#include "v3_model.h"

/*
 * Signal the event queue or GERROR interrupt (3.18.2): a pulse on its
 * wired output, which this model implements when an irq callback is
 * given, and an MSI (a 32-bit write of *_IRQ_CFG1 to the *_IRQ_CFG0
 * address) when IDR0.MSI = 1 and the address is not 0; both when both
 * apply. A failed MSI write activates GERROR.MSI_*_ABT_ERR (7.5), which
 * (a global error) signals the GERROR interrupt in turn; an aborting
 * GERROR MSI finds MSI_GERROR_ABT_ERR already active the second time.
 */
static void raise_irq(struct iopt_smmuv3 *s, unsigned line, uint64_t cycle)
{
	if (s->core.irq)
		s->core.irq(s->core.irq_ctx, line, cycle);
	if (s->p.msi && line < 2 && s->msi[line].addr) {
		uint32_t data = s->msi[line].data;

		if (s->core.mem.write(s->core.mem.ctx, s->msi[line].addr, &data, 4) < 0)
			v3_gerror_raise(s, line == IOPT_SMMUV3_IRQ_EVTQ ? GERROR_MSI_EVTQ_ABT :
					GERROR_MSI_GERROR_ABT, cycle);
	}
}

/* GERROR bits are active while they differ from GERRORN (7.5). */
void v3_gerror_raise(struct iopt_smmuv3 *s, uint32_t bit, uint64_t cycle)
{
	if ((s->gerror ^ s->gerrorn) & bit)
		return;		/* already active */
	s->gerror ^= bit;
	if (s->irq_ctrl & IRQ_GERROR_EN)
		raise_irq(s, IOPT_SMMUV3_IRQ_GERROR, cycle);
}

/*
 * Word 0 of an event record (7.3): the type [7:0] and StreamID [63:32];
 * SSV [11] and SubstreamID [31:12] only in the types that define them.
 * F_STREAM_DISABLED and F_TRANSL_FORBIDDEN have neither (7.3.7, 7.3.8);
 * C_BAD_SUBSTREAMID has a SubstreamID without SSV, 0 for a transaction
 * without one (its CD 0 met a bad L1CD, 7.3.9). Where SSV is 0 the
 * SubstreamID (UNKNOWN) is written 0.
 */
static uint64_t event_word0(unsigned type, const struct iopt_smmuv3_txn *t)
{
	uint64_t w = type | (uint64_t)t->sid << 32;
	uint64_t ssid = t->ssv ? (uint64_t)(t->ssid & 0xfffff) << 12 : 0;

	switch (type) {
	case IOPT_SMMUV3_EVT_F_STREAM_DISABLED:
	case IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN:
		return w;
	case IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID:
		return w | ssid;
	default:
		return w | ssid | (t->ssv ? 1ull << 11 : 0);
	}
}

/* Write an event record (7.3): word 0 from type and t, words 1-3 as
 * given; lost (overflow flag) when the queue is full or disabled. */
void v3_event(struct iopt_smmuv3 *s, unsigned type, const struct iopt_smmuv3_txn *t,
	      uint64_t w1, uint64_t w2, uint64_t w3, uint64_t cycle)
{
	uint64_t rec[4];
	unsigned l2 = v3_q_log2(s->evtq_base, s->p.evtqs);
	uint32_t wrap = 1u << l2, mask = wrap - 1;
	uint32_t prod = s->evtq_prod & (wrap | mask), cons = s->evtq_cons & (wrap | mask);

	/* 7.2.1: writable only while enabled and without an active
	 * EVENTQ_ABT_ERR; otherwise the record is discarded silently. */
	if (!(s->cr0 & CR0_EVENTQEN) || ((s->gerror ^ s->gerrorn) & GERROR_EVENTQ_ABT)) {
		s->st.events_lost++;
		return;
	}
	if ((prod & mask) == (cons & mask) && (prod & wrap) != (cons & wrap)) {
		/* Full: toggle OVFLG (7.4) unless already unacknowledged. */
		if (((s->evtq_prod ^ s->evtq_cons) & Q_OVFLG) == 0)
			s->evtq_prod ^= Q_OVFLG;
		s->st.events_lost++;
		return;
	}
	bool was_empty = prod == cons;

	rec[0] = event_word0(type, t);
	rec[1] = w1;
	rec[2] = w2;
	rec[3] = w3;
	uint64_t base = v3_q_base(s->evtq_base, 32ull << l2);

	if (s->core.mem.write(s->core.mem.ctx, base + (uint64_t)(prod & mask) * 32, rec,
			 sizeof(rec)) < 0) {
		/* 7.2.2: a synchronous abort (this model's choice): PROD
		 * does not move, the record is lost, EVENTQ_ABT_ERR is
		 * activated and the queue is unwritable until acknowledged. */
		s->st.events_lost++;
		v3_gerror_raise(s, GERROR_EVENTQ_ABT, cycle);
		return;
	}
	s->evtq_prod = (s->evtq_prod & Q_OVFLG) | ((prod + 1) & ((wrap << 1) - 1));
	s->st.events++;
	/* 3.18.2: the interrupt marks the queue going from empty to
	 * non-empty, not every record. */
	if (was_empty && (s->irq_ctrl & IRQ_EVENTQ_EN))
		raise_irq(s, IOPT_SMMUV3_IRQ_EVTQ, cycle + s->p.event_cycles);
}
