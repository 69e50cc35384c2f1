/* SPDX-License-Identifier: MIT */
/*
 * Spinlocks of a kind chosen at init, and a reader-writer spinlock: the
 * locks the kernels a driver stands for used (docs/driver.md, "Locks"),
 * so that a simulation reproduces their handoff order and their cache
 * traffic (docs/sim.md, "Locks").
 *
 * Every access goes through the platform atomics: on the host they are
 * the machine's atomics, in the simulation each is charged through the
 * coherence model. Kinds (enum plat_lock_kind, the values of the public
 * enum iopt_lock_kind):
 *   TAS     test-and-set: every try is an exchange on the lock word; who
 *           gets the line first after a release wins (unfair), and every
 *           waiter keeps pulling the line while it is held.
 *   TTAS    test-and-test-and-set (struct plat_spinlock): waiters read
 *           until the word is free, then exchange; still unfair, a
 *           releasing CPU that asks again at once usually retakes it.
 *   TICKET  FIFO ticket lock (struct plat_ticketlock): arm64 Linux up to
 *           4.18. Waiters all read the owner word.
 *   MCS     FIFO queued lock: each waiter spins on a node of its own line,
 *           its predecessor hands the lock over by one store there; the
 *           lock word is touched once per arrival and once per release.
 *           The ordering of arm64 Linux's qspinlock (from 4.19), which is
 *           this queue plus a pending bit and a locked byte for the
 *           uncontended cases.
 * A CPU's MCS nodes are per-CPU (host: per thread), PLAT_LOCK_MCS_DEPTH
 * of them: MCS locks a CPU holds or waits for at once must be released in
 * the reverse order of acquisition, at most that many deep.
 *
 * Bad input: plat_lock_kind() rejects an unknown kind with -EINVAL;
 * plat_lock_init() takes only a kind it accepted.
 */
#ifndef IOPT_PLAT_LOCK_H
#define IOPT_PLAT_LOCK_H

#include <errno.h>

#include <iopgtable/common.h>

#include "platform.h"

enum plat_lock_kind {
	PLAT_LOCK_TAS = IOPT_LOCK_TAS,
	PLAT_LOCK_TTAS = IOPT_LOCK_TTAS,
	PLAT_LOCK_TICKET = IOPT_LOCK_TICKET,
	PLAT_LOCK_MCS = IOPT_LOCK_MCS,
};

#define PLAT_LOCK_MCS_DEPTH 8

/* A waiter's queue node: a 64-byte line of its own. */
struct plat_mcs_node {
	_Alignas(64) uint64_t next;	/* struct plat_mcs_node *, 0: none */
	uint32_t wait;			/* 1 until the predecessor hands over */
};

struct plat_lock {
	uint32_t kind;			/* enum plat_lock_kind; set at init */
	union {
		struct plat_spinlock spin;	/* TAS, TTAS */
		struct plat_ticketlock ticket;
		struct {
			uint64_t tail;		/* last node queued, 0: free */
			struct plat_mcs_node *owner;	/* holder's: holder only */
		} mcs;
	} u;
};

/*
 * The lock kind a configuration field asks for: kind 0 (IOPT_LOCK_DEFAULT)
 * is dflt, the lock that user has always had. 0 and *out, or -EINVAL for
 * a value outside enum iopt_lock_kind (*out unchanged).
 */
static inline int plat_lock_kind(unsigned kind, enum plat_lock_kind dflt,
				 enum plat_lock_kind *out)
{
	if (kind > IOPT_LOCK_MCS)
		return -EINVAL;
	*out = kind == IOPT_LOCK_DEFAULT ? dflt : (enum plat_lock_kind)kind;
	return 0;
}

/* Out of line (plat_lock.c): the queue needs the CPU's node pool. */
void plat_mcs_lock(struct plat_lock *l);
void plat_mcs_unlock(struct plat_lock *l);

/* Before the lock is shared: kind then needs no ordering. */
static inline void plat_lock_init(struct plat_lock *l, enum plat_lock_kind kind)
{
	l->kind = kind;
	switch (kind) {
	case PLAT_LOCK_TICKET:
		plat_ticket_init(&l->u.ticket);
		break;
	case PLAT_LOCK_MCS:
		plat_store_rlx64(&l->u.mcs.tail, 0);
		l->u.mcs.owner = NULL;
		break;
	default:
		plat_spin_init(&l->u.spin);
		break;
	}
}

static inline void plat_lock(struct plat_lock *l)
{
	switch (l->kind) {
	case PLAT_LOCK_TAS:
		plat_spin_hold();
		/* Acquire pairs with the release store in plat_unlock(). */
		while (plat_xchg_acq32(&l->u.spin.v, 1))
			plat_cpu_relax();
		break;
	case PLAT_LOCK_TICKET:
		plat_ticket_lock(&l->u.ticket);
		break;
	case PLAT_LOCK_MCS:
		plat_mcs_lock(l);
		break;
	default:
		plat_spin_lock(&l->u.spin);
		break;
	}
}

static inline void plat_unlock(struct plat_lock *l)
{
	switch (l->kind) {
	case PLAT_LOCK_TICKET:
		plat_ticket_unlock(&l->u.ticket);
		break;
	case PLAT_LOCK_MCS:
		plat_mcs_unlock(l);
		break;
	default:
		plat_spin_unlock(&l->u.spin);	/* TAS, TTAS: release store */
		break;
	}
}

/*
 * Reader-writer spinlock, as the kernel's queued rwlock (qrwlock, arm64
 * arm64 before 4.19 too): one word counts readers (in units of PLAT_RW_READER) below
 * a writer byte (PLAT_RW_LOCKED) and a writer-waiting bit. A reader
 * enters at once unless a writer holds or waits; a writer waits for the
 * readers already in, and readers arriving meanwhile queue behind it on
 * the FIFO wait lock, so neither side starves the other. Not recursive:
 * a reader that reads again while a writer waits deadlocks, as in the
 * kernel's process context.
 */
struct plat_rwlock {
	uint64_t cnts;
	struct plat_ticketlock wait;	/* orders contended readers, writers */
};

#define PLAT_RW_LOCKED 0xffull		/* a writer holds it */
#define PLAT_RW_WAITING 0x100ull	/* a writer waits for the readers */
#define PLAT_RW_WMASK 0x1ffull
#define PLAT_RW_READER 0x200ull		/* one reader */

static inline void plat_rwlock_init(struct plat_rwlock *l)
{
	plat_store_rlx64(&l->cnts, 0);
	plat_ticket_init(&l->wait);
}

void plat_read_lock_slow(struct plat_rwlock *l);
void plat_write_lock_slow(struct plat_rwlock *l);

static inline void plat_read_lock(struct plat_rwlock *l)
{
	plat_spin_hold();
	/* Acquire pairs with the writer's release in plat_write_unlock(). */
	if (plat_likely(!(plat_fetch_add_acq_rel64(&l->cnts, PLAT_RW_READER) &
			  PLAT_RW_WMASK)))
		return;
	plat_read_lock_slow(l);
}

static inline void plat_read_unlock(struct plat_rwlock *l)
{
	/* Release: the section's reads before a writer's writes. */
	plat_fetch_sub_rel64(&l->cnts, PLAT_RW_READER);
	plat_spin_unhold();
}

static inline void plat_write_lock(struct plat_rwlock *l)
{
	uint64_t old = 0;

	plat_spin_hold();
	/* Acquire pairs with the release of the last unlock, either side. */
	if (plat_likely(plat_cas_acq_rel64(&l->cnts, &old, PLAT_RW_LOCKED)))
		return;
	plat_write_lock_slow(l);
}

static inline void plat_write_unlock(struct plat_rwlock *l)
{
	/* Release pairs with the next reader's or writer's acquire. Leaves
	 * a waiting writer's bit and the readers' counts as they are. */
	plat_fetch_sub_rel64(&l->cnts, PLAT_RW_LOCKED);
	plat_spin_unhold();
}

#endif /* IOPT_PLAT_LOCK_H */
