/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 event queue and interrupts: records decoded (IHI0070 7.3) and
 * handed to the user's callback; overflow acknowledged (7.4); GERROR
 * handled through the command queue's recovery.
 */
#include <errno.h>
#include <string.h>

#include "smmuv3_drv_internal.h"
#include "smmuv3_regs.h"

void iopt_smmuv3_drv_irq(struct iopt_smmuv3_drv *drv, unsigned line)
{
	/* Release pairs with the exchange in iopt_smmuv3_drv_poll(). */
	if (drv && line < 64)
		plat_fetch_or_rel64(&drv->irq_pending, 1ull << line);
}

static void decode(const uint64_t w[4], struct iopt_smmuv3_drv_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->raw, w, sizeof(ev->raw));
	ev->type = EVT_TYPE(w[0]);
	ev->sid = EVT_SID(w[0]);
	/* SSV and SubstreamID where the type defines them: C_BAD_SUBSTREAMID's
	 * SubstreamID is always valid, without SSV (7.3.9); F_STREAM_DISABLED
	 * and F_TRANSL_FORBIDDEN have neither (7.3.7, 7.3.8). */
	if (ev->type == IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID)
		ev->ssv = true;
	else if (ev->type != IOPT_SMMUV3_EVT_F_STREAM_DISABLED &&
		 ev->type != IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN)
		ev->ssv = EVT_SSV(w[0]);
	if (ev->ssv)
		ev->ssid = EVT_SSID(w[0]);
	if (ev->type >= IOPT_SMMUV3_EVT_F_TRANSLATION && ev->type <= IOPT_SMMUV3_EVT_F_PERMISSION) {
		ev->pnu = w[1] & EVT1_PNU;
		ev->ind = w[1] & EVT1_IND;
		ev->read = w[1] & EVT1_RNW;
		ev->s2 = w[1] & EVT1_S2;
		ev->addr = w[2];
		ev->ipa = w[3] & EVT3_IPA_MASK;
	} else if (ev->type == IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN ||
		   ev->type == IOPT_SMMUV3_EVT_F_UUT) {
		ev->read = w[1] & EVT1_RNW;
		ev->addr = w[2];
	}
}

/*
 * One drainer at a time, and no request for a drain lost (drv->evtq_state):
 *  E1. Every poll sets EVTQ_AGAIN and EVTQ_BUSY in one compare-and-swap
 *      (acquire-release); the poll that found BUSY clear is the drainer,
 *      any other returns at once, leaving AGAIN for the drainer.
 *  E2. The drainer clears AGAIN (acquire-release) before each pass, and a
 *      pass reads EVENTQ_PROD again after every CONS write, until the queue
 *      is empty: a record written while earlier ones are delivered raises
 *      no interrupt (the queue never went empty, IHI0070 3.18.2) and is
 *      found by that re-read.
 *  E3. The drainer gives BUSY up only by a compare-and-swap (release) from
 *      BUSY alone; it fails when a poll set AGAIN since E2's clear, and the
 *      drainer makes another pass. A record the model wrote after the last
 *      PROD read found the queue empty and interrupted; the poll that
 *      interrupt prompts either finds BUSY clear (E1) or fails E3's swap.
 * All three act on one word, so its read-modify-writes are totally ordered.
 * The acquire of E1 pairs with E3's release: a new drainer sees the last
 * one's evtq_cons.
 */
#define EVTQ_BUSY	1ull
#define EVTQ_AGAIN	2ull

/* Deliver the records up to an empty queue (the drainer only). */
static int evtq_drain(struct iopt_smmuv3_drv *drv)
{
	struct drv_queue *q = &drv->evtq;
	const uint32_t idx = 2 * q->n - 1;	/* index and wrap bits */
	uint32_t prod, cons = drv->evtq_cons;
	int delivered = 0;

	/*
	 * The model wrote the records before it advanced PROD, under its
	 * lock, which each PROD read takes after it: the records are
	 * visible.
	 */
	while (!drv_read32(drv, SMMU_EVENTQ_PROD, &prod) &&
	       ((prod ^ cons) & (idx | Q_OVF))) {
		while ((prod & idx) != (cons & idx)) {
			struct iopt_smmuv3_drv_event ev;
			uint64_t w[4];

			memcpy(w, q->ring + (size_t)q_idx(q, cons) * 4, sizeof(w));
			decode(w, &ev);
			if (drv->cfg.event)
				drv->cfg.event(drv->cfg.event_ctx, &ev);
			delivered++;
			cons = q_inc(q, cons, 1);
		}
		/* 7.4: acknowledge an overflow by copying OVFLG to OVACKFLG
		 * (q_inc() dropped OVACKFLG from cons; evtq_cons holds it). */
		if ((prod ^ drv->evtq_cons) & Q_OVF)
			drv_count(drv, event_overflows, 1);
		cons = (cons & idx) | (prod & Q_OVF);
		drv_write32(drv, SMMU_EVENTQ_CONS, cons);
		drv->evtq_cons = cons;
	}
	drv_count(drv, events, (uint64_t)delivered);
	return delivered;
}

int iopt_smmuv3_drv_poll(struct iopt_smmuv3_drv *drv)
{
	uint64_t st;
	int delivered = 0;

	if (!drv)
		return -EINVAL;
	/* Acquire pairs with iopt_smmuv3_drv_irq()'s release. */
	plat_xchg_acq_rel64(&drv->irq_pending, 0);
	drv_cmdq_recover(drv);
	/* E1. */
	st = plat_load_rlx64(&drv->evtq_state);
	while (!plat_cas_acq_rel64(&drv->evtq_state, &st,
				   st | EVTQ_BUSY | EVTQ_AGAIN))
		;
	if (st & EVTQ_BUSY)
		return 0;
	do {
		plat_fetch_and_acq_rel64(&drv->evtq_state, ~EVTQ_AGAIN);	/* E2 */
		delivered += evtq_drain(drv);
		st = EVTQ_BUSY;
	} while (!plat_cas_rel64(&drv->evtq_state, &st, 0));		/* E3 */
	return delivered;
}
