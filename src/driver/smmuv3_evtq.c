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
	ev->ssv = EVT_SSV(w[0]);
	ev->ssid = EVT_SSID(w[0]);
	ev->sid = EVT_SID(w[0]);
	if (ev->type >= IOPT_EVT_F_TRANSLATION && ev->type <= IOPT_EVT_F_PERMISSION) {
		ev->pnu = w[1] & EVT1_PNU;
		ev->ind = w[1] & EVT1_IND;
		ev->read = w[1] & EVT1_RNW;
		ev->s2 = w[1] & EVT1_S2;
		ev->addr = w[2];
		ev->ipa = w[3] & EVT3_IPA_MASK;
	} else if (ev->type == IOPT_EVT_F_TRANSL_FORBIDDEN ||
		   ev->type == IOPT_EVT_F_UUT) {
		ev->read = w[1] & EVT1_RNW;
		ev->addr = w[2];
	}
}

int iopt_smmuv3_drv_poll(struct iopt_smmuv3_drv *drv)
{
	struct drv_queue *q;
	uint32_t prod, cons;
	int delivered = 0;

	if (!drv)
		return -EINVAL;
	q = &drv->evtq;
	/* Acquire pairs with iopt_smmuv3_drv_irq()'s release. */
	plat_xchg_acq_rel64(&drv->irq_pending, 0);
	drv_cmdq_recover(drv);
	/* Acquire pairs with the release store below: one drainer. */
	if (plat_xchg_acq_rel32(&drv->evtq_busy, 1))
		return 0;
	cons = drv->evtq_cons;
	if (drv_read32(drv, SMMU_EVENTQ_PROD, &prod))
		goto out;
	/*
	 * The model wrote the records before it advanced PROD, under its
	 * lock, which the PROD read above took after it: the records are
	 * visible.
	 */
	while ((prod & (2 * q->n - 1)) != (cons & (2 * q->n - 1))) {
		struct iopt_smmuv3_drv_event ev;
		uint64_t w[4];

		memcpy(w, q->ring + (size_t)q_idx(q, cons) * 4, sizeof(w));
		decode(w, &ev);
		if (drv->cfg.event)
			drv->cfg.event(drv->cfg.event_ctx, &ev);
		delivered++;
		cons = q_inc(q, cons, 1);
	}
	/* 7.4: acknowledge an overflow by copying OVFLG to OVACKFLG. */
	if ((prod ^ drv->evtq_cons) & Q_OVF)
		drv_count(drv, event_overflows, 1);
	cons = (cons & (2 * q->n - 1)) | (prod & Q_OVF);
	drv_write32(drv, SMMU_EVENTQ_CONS, cons);
	drv->evtq_cons = cons;
	drv_count(drv, events, (uint64_t)delivered);
out:
	plat_store_rel32(&drv->evtq_busy, 0);
	return delivered;
}
