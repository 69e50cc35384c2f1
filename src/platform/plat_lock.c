/* SPDX-License-Identifier: MIT */
/*
 * The out-of-line parts of plat_lock.h: the MCS queue with its per-CPU
 * node pool, and the reader-writer lock's contended paths. Built into both
 * libraries (in the simulation, on the simulated CPUs' instrumented code).
 */
#include <stdio.h>
#include <stdlib.h>

#include "plat_lock.h"

/* A CPU's nodes, each on a line of its own (the per-CPU storage is not
 * promised any alignment: the pool aligns inside its bytes). */
struct mcs_pool {
	unsigned depth;			/* nodes in use */
	unsigned char bytes[(PLAT_LOCK_MCS_DEPTH + 1) * 64];
};

PLAT_CPU_LOCAL(struct mcs_pool, mcs_pool);

static struct plat_mcs_node *mcs_node(struct mcs_pool *p, unsigned i)
{
	uintptr_t base = ((uintptr_t)p->bytes + 63) & ~(uintptr_t)63;

	return (struct plat_mcs_node *)(base + (uintptr_t)i * 64);
}

void plat_mcs_lock(struct plat_lock *l)
{
	struct mcs_pool *p = plat_cpu_local(mcs_pool);
	struct plat_mcs_node *me, *prev;

	if (p->depth >= PLAT_LOCK_MCS_DEPTH) {
		fprintf(stderr, "plat_mcs_lock: more than %d MCS locks nested\n",
			PLAT_LOCK_MCS_DEPTH);
		abort();
	}
	plat_spin_hold();
	me = mcs_node(p, p->depth++);
	plat_store_rlx64(&me->next, 0);
	plat_store_rlx32(&me->wait, 1);
	/* Release: a successor sees our node initialised before it can
	 * find it; acquire pairs with the release in plat_mcs_unlock()'s
	 * emptying of the queue (the previous holder's section). */
	prev = (struct plat_mcs_node *)(uintptr_t)
		plat_xchg_acq_rel64(&l->u.mcs.tail, (uint64_t)(uintptr_t)me);
	if (prev) {
		/* Release: our node's initialisation before the link the
		 * predecessor loads with acquire. */
		plat_store_rel64(&prev->next, (uint64_t)(uintptr_t)me);
		/* Acquire pairs with the handover store in plat_mcs_unlock():
		 * the previous holder's section happens before ours. */
		while (plat_load_acq32(&me->wait))
			plat_cpu_relax();
	}
	l->u.mcs.owner = me;		/* holder-only: ordered by the lock */
}

void plat_mcs_unlock(struct plat_lock *l)
{
	struct mcs_pool *p = plat_cpu_local(mcs_pool);
	struct plat_mcs_node *me = l->u.mcs.owner, *next;
	uint64_t old;

	if (p->depth == 0 || mcs_node(p, p->depth - 1) != me) {
		fprintf(stderr, "plat_mcs_unlock: not this CPU's latest lock\n");
		abort();
	}
	/* Acquire pairs with the successor's release store of the link. */
	next = (struct plat_mcs_node *)(uintptr_t)plat_load_acq64(&me->next);
	if (!next) {
		old = (uint64_t)(uintptr_t)me;
		/* Release: our section before the next arrival's exchange. */
		if (plat_cas_rel64(&l->u.mcs.tail, &old, 0))
			goto out;
		/* Someone queued behind us and is about to link itself. */
		while (!(next = (struct plat_mcs_node *)(uintptr_t)
				plat_load_acq64(&me->next)))
			plat_cpu_relax();
	}
	/* Release: our section before the successor's acquire load. */
	plat_store_rel32(&next->wait, 0);
out:
	p->depth--;
	plat_spin_unhold();
}

void plat_read_lock_slow(struct plat_rwlock *l)
{
	/* A writer holds or waits: step back and queue behind it. */
	plat_fetch_sub_rel64(&l->cnts, PLAT_RW_READER);
	plat_ticket_lock(&l->wait);
	plat_fetch_add_acq_rel64(&l->cnts, PLAT_RW_READER);
	/* Acquire pairs with the writer's release in plat_write_unlock(). A
	 * writer that waits holds l->wait, so only a holder can be here. */
	while (plat_load_acq64(&l->cnts) & PLAT_RW_LOCKED)
		plat_cpu_relax();
	plat_ticket_unlock(&l->wait);
}

void plat_write_lock_slow(struct plat_rwlock *l)
{
	uint64_t old = 0;

	plat_ticket_lock(&l->wait);
	/* Acquire pairs with the release of the last unlock. */
	if (plat_cas_acq_rel64(&l->cnts, &old, PLAT_RW_LOCKED))
		goto out;
	/* Readers arriving now step back and queue on l->wait. */
	plat_fetch_or_rlx64(&l->cnts, PLAT_RW_WAITING);
	for (;;) {
		old = PLAT_RW_WAITING;
		/* Every reader and the previous writer gone. */
		if (plat_load_rlx64(&l->cnts) == PLAT_RW_WAITING &&
		    plat_cas_acq_rel64(&l->cnts, &old, PLAT_RW_LOCKED))
			break;
		plat_cpu_relax();
	}
out:
	plat_ticket_unlock(&l->wait);
}
