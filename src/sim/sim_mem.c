/* SPDX-License-Identifier: MIT */
/*
 * Simulated memory: the coherence cost of each 64-byte line, the TSO store
 * buffers, and the platform's atomic operations on top (plat_sim.h).
 *
 * Coherence (MESI-like, per line: the set of CPUs holding it, and the one
 * holding it modified). An access by CPU c costs
 *   read,  c holds it:                    hit
 *   read,  another CPU o holds it modified: fetch_modified x topo(c, o)
 *   read,  others hold it clean:          fetch_shared x topo(c, nearest)
 *   read,  nobody holds it:               miss_mem
 *   write, c holds it modified, or is its only holder: hit
 *   write, c and k others hold it:        (upgrade + k per_sharer) x topo(farthest)
 *   write, k others hold it clean, c not: (fetch_shared + k per_sharer) x topo(farthest)
 *   write, another CPU holds it modified: fetch_modified x topo(c, o)
 *   write, nobody holds it:               miss_mem
 * topo is 100% inside a cluster, cross_cluster_pct between clusters and
 * cross_socket_pct between sockets. Every access that is not a hit moves
 * the line, and a line moves at most once per `transfer` cycles and stays
 * that long with the CPU it reaches: it reaches the k-th of CPUs arriving
 * together (k-1) transfers after the first (sim.h, docs/sim.md,
 * "Contention"). An access that waits for the line takes effect when the
 * line reaches it (line_cost(), line_wait()); until then the line's
 * holders keep it and their accesses hit.
 * A line nobody holds that a far atomic left at its home node comes from
 * there, at fetch_shared, instead of from memory.
 *
 * Atomics. A read-modify-write is a write access plus atomic_extra (near),
 * or, with atomic_far set and the line not held uniquely by the CPU (held
 * modified, or as its only holder), it executes at the line's home node
 * (far): it starts at max(now, the line's free_at), occupies the home for
 * far_atomic_home cycles (free_at), costs its wait + far_atomic + one
 * per_sharer per CPU holding the line, and leaves no CPU holding it (the
 * requester included) and the line at home. A far atomic does not move
 * the line: it counts in far_ops, not in transfers.
 *
 * Cache maintenance (plat_cache_clean): every line of the range is
 * cleaned to the point of coherency: a CPU holding it modified keeps it,
 * clean; the CPU pays cmo_line per line and cmo_barrier for the barrier
 * after them, plus, under TSO, the wait for its store buffer to drain.
 *
 * TSO. Memory always holds the newest value stored (so the storing CPU's
 * own loads, and its plain accesses, see it); a buffered store remembers
 * the value it replaced, which every other CPU still sees until the store
 * drains. At most one CPU has buffered stores to a line at a time: another
 * CPU's store or read-modify-write to the line first drains that CPU's
 * buffer up to its last store there (a valid TSO outcome: drains may
 * happen at any time). A load by another CPU that overlaps a buffered
 * store only in part drains it first too.
 *
 * Devices. An attached model's memory accesses (plat_dev_read/write, from
 * its memory callbacks) come from outside the CPUs: a write takes its lines
 * from every CPU, and a read sees no CPU's buffered stores.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>

#include "sim_internal.h"

/* ---- the line table ------------------------------------------------------- */

int sim_mem_init(struct iopt_sim *s)
{
	s->lines_cap = 1u << 12;
	s->lines = calloc(s->lines_cap, sizeof(*s->lines));
	return s->lines ? 0 : -ENOMEM;
}

void sim_mem_fini(struct iopt_sim *s)
{
	free(s->lines);
}

static inline size_t line_hash(uintptr_t key, size_t cap)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1);
}

static void lines_grow(struct iopt_sim *s)
{
	size_t cap = s->lines_cap * 2;
	struct sim_line *n = calloc(cap, sizeof(*n));

	if (!n)
		abort();	/* the simulation cannot go on without it */
	for (size_t i = 0; i < s->lines_cap; i++) {
		struct sim_line *l = &s->lines[i];
		size_t j;

		if (!l->key)
			continue;
		for (j = line_hash(l->key, cap); n[j].key; j = (j + 1) & (cap - 1))
			;
		n[j] = *l;
	}
	free(s->lines);
	s->lines = n;
	s->lines_cap = cap;
}

static struct sim_line *line_find(struct iopt_sim *s, const void *addr)
{
	uintptr_t key = (uintptr_t)addr >> SIM_LINE_SHIFT;
	size_t i = line_hash(key, s->lines_cap);

	for (;; i = (i + 1) & (s->lines_cap - 1)) {
		struct sim_line *l = &s->lines[i];

		if (l->key == key)
			return l;
		if (!l->key)
			break;
	}
	if (2 * (s->nlines + 1) > s->lines_cap) {
		lines_grow(s);
		return line_find(s, addr);
	}
	s->nlines++;
	s->lines[i].key = key;
	s->lines[i].owner = SIM_NONE;
	s->lines[i].sb_owner = SIM_NONE;
	s->lines[i].held_owner = SIM_NONE;
	return &s->lines[i];
}

/* The line holding addr if the table has it (no CPU has touched it
 * otherwise), without adding it. */
static struct sim_line *line_peek(struct iopt_sim *s, uintptr_t key)
{
	for (size_t i = line_hash(key, s->lines_cap);;
	     i = (i + 1) & (s->lines_cap - 1)) {
		struct sim_line *l = &s->lines[i];

		if (l->key == key)
			return l;
		if (!l->key)
			return NULL;
	}
}

/* ---- CPU sets ---------------------------------------------------------- */

static inline bool set_has(const struct sim_set *set, unsigned c)
{
	return set->w[c / 64] >> (c % 64) & 1;
}

static inline void set_add(struct sim_set *set, unsigned c)
{
	set->w[c / 64] |= (uint64_t)1 << (c % 64);
}

static inline void set_only(struct sim_set *set, unsigned c)
{
	memset(set, 0, sizeof(*set));
	set_add(set, c);
}

static inline unsigned set_count(const struct sim_set *set)
{
	unsigned n = 0;

	for (unsigned i = 0; i < SIM_SET_WORDS; i++)
		n += (unsigned)__builtin_popcountll(set->w[i]);
	return n;
}

/* ---- topology ------------------------------------------------------------ */

static uint32_t topo_pct(const struct iopt_sim *s, unsigned a, unsigned b)
{
	unsigned cpc = s->p.cores_per_cluster, cps = s->p.clusters_per_socket;

	if (!cpc || a / cpc == b / cpc)
		return 100;
	if (!cps || a / (cpc * cps) == b / (cpc * cps))
		return s->p.cross_cluster_pct;
	return s->p.cross_socket_pct;
}

/* The topology factor from c to the nearest (want_max false) or farthest
 * member of set other than c. */
static uint32_t topo_pct_set(const struct iopt_sim *s, unsigned c,
			     const struct sim_set *set, bool want_max)
{
	uint32_t best = want_max ? 0 : UINT32_MAX;

	if (!s->p.cores_per_cluster)
		return 100;
	for (unsigned i = 0; i < SIM_SET_WORDS; i++) {
		uint64_t w = set->w[i];

		while (w) {
			unsigned o = i * 64 + (unsigned)__builtin_ctzll(w);
			uint32_t pct;

			w &= w - 1;
			if (o == c)
				continue;
			pct = topo_pct(s, c, o);
			if (want_max ? pct > best : pct < best)
				best = pct;
		}
	}
	return best == 0 || best == UINT32_MAX ? 100 : best;
}

static inline uint64_t scaled(uint64_t cycles, uint32_t pct)
{
	return pct == 100 ? cycles : cycles * pct / 100;
}

/* ---- the coherence cost ------------------------------------------------ */

/* Whether an access by me hits a line held by (owner, set); a write by its
 * only holder upgrades it silently (exclusive). */
static bool hold_hit(uint16_t *owner, struct sim_set *set, unsigned me,
		     bool write)
{
	if (*owner == me)
		return true;
	if (!set_has(set, me))
		return false;
	if (!write)
		return true;
	if (*owner != SIM_NONE || set_count(set) != 1)
		return false;
	*owner = (uint16_t)me;
	return true;
}

/* The line comes to me: a reader joins its holders (a modified copy
 * becomes clean), a writer holds it alone, modified. */
static void hold_take(uint16_t *owner, struct sim_set *set, unsigned me,
		      bool write)
{
	if (write) {
		set_only(set, me);
		*owner = (uint16_t)me;
	} else {
		*owner = SIM_NONE;
		set_add(set, me);
	}
}

/* c's access waits for l: queue it, taking effect at cycle at. The first
 * waiter keeps who holds the line now in held. */
static void pend_push(struct iopt_sim *s, struct sim_line *l,
		      struct sim_cpu *c, uint64_t at)
{
	c->pend_at = at;
	c->pend_next = SIM_NONE;
	if (!l->npend++) {
		l->held = l->sharers;
		l->held_owner = l->owner;
		l->pend_head = (uint16_t)c->idx;
		l->pend_first = at;
	} else {
		s->cpu[l->pend_tail]->pend_next = (uint16_t)c->idx;
	}
	l->pend_tail = (uint16_t)c->idx;
	l->pend_last = at;
}

/* c's queued access takes effect: the line is c's (with the holders a
 * reader shares it with). Waiters take effect in order of their cycles,
 * which grow along the list; c is the head but in PCT mode, which may run
 * a CPU a little ahead of an earlier one. */
static void pend_take(struct iopt_sim *s, struct sim_line *l,
		      struct sim_cpu *c, bool write)
{
	uint16_t *link = &l->pend_head, prev = SIM_NONE;

	while (*link != c->idx) {
		prev = *link;
		link = &s->cpu[prev]->pend_next;
	}
	*link = c->pend_next;
	if (l->pend_tail == c->idx)
		l->pend_tail = prev;
	if (--l->npend) {
		l->pend_first = s->cpu[l->pend_head]->pend_at;
		l->pend_last = s->cpu[l->pend_tail]->pend_at;
	}
	hold_take(&l->held_owner, &l->held, c->idx, write);
}

/*
 * The cost of c's access to l, and the line's new holders. With wait
 * non-NULL the access may wait for the line (loads, stores without a
 * store buffer, near read-modify-writes): when the line is still moving
 * to earlier requesters, or other accesses already wait for it, *wait is
 * the cycle at which it reaches c and the access takes effect (the caller
 * stalls c until then: line_wait()), else 0 (it takes effect now). Until
 * the first waiting access takes effect the line stays with its holders
 * (held), whose accesses hit.
 */
static uint64_t line_cost(struct iopt_sim *s, struct sim_cpu *c,
			  struct sim_line *l, bool write, const void *pc,
			  uint64_t *wait)
{
	const struct iopt_sim_params *p = &s->p;
	unsigned me = c->idx;
	uint64_t base, start;
	bool moved = true, queue;

	if (wait)
		*wait = 0;
	if (write)
		l->writer_pc = pc;
	if (l->npend && c->now < l->pend_first &&
	    hold_hit(&l->held_owner, &l->held, me, write))
		return p->hit;
	if (hold_hit(&l->owner, &l->sharers, me, write))
		return p->hit;
	start = l->free_at > c->now ? l->free_at : c->now;
	queue = wait && (start > c->now || l->npend || l->hold_until > c->now);
	if (!write) {
		if (l->owner != SIM_NONE) {
			base = scaled(p->fetch_modified, topo_pct(s, me, l->owner));
		} else if (set_count(&l->sharers)) {
			base = scaled(p->fetch_shared,
				      topo_pct_set(s, me, &l->sharers, false));
		} else {
			base = l->at_home ? p->fetch_shared : p->miss_mem;
			moved = false;
		}
	} else {
		unsigned n = set_count(&l->sharers);

		if (l->owner != SIM_NONE) {
			base = scaled(p->fetch_modified, topo_pct(s, me, l->owner));
		} else if (set_has(&l->sharers, me)) {
			base = scaled(p->upgrade + (uint64_t)(n - 1) * p->per_sharer,
				      topo_pct_set(s, me, &l->sharers, true));
		} else if (n) {
			base = scaled(p->fetch_shared + (uint64_t)n * p->per_sharer,
				      topo_pct_set(s, me, &l->sharers, true));
		} else {
			base = l->at_home ? p->fetch_shared : p->miss_mem;
			moved = false;
		}
	}
	/* The line moves: after its previous move, one at a time. */
	l->free_at = start + p->transfer;
	if (moved)
		l->transfers++;
	if (!queue) {
		hold_take(&l->owner, &l->sharers, me, write);
		l->wait_cycles += start - c->now;
		l->hold_until = start + base + p->transfer;
		return start - c->now + base;
	}
	/* It arrives then, once its last taker has held it transfer cycles,
	 * after every earlier waiter's access. The first waiter keeps the
	 * holders before its move (pend_push(), before hold_take()). */
	*wait = start + base;
	if (*wait < l->hold_until)
		*wait = l->hold_until;
	if (l->npend && *wait <= l->pend_last)
		*wait = l->pend_last + 1;
	pend_push(s, l, c, *wait);
	hold_take(&l->owner, &l->sharers, me, write);
	l->wait_cycles += *wait - base - c->now;
	l->hold_until = *wait + p->transfer;
	return *wait - c->now;
}

uint64_t sim_line_access(struct iopt_sim *s, struct sim_cpu *c,
			 const void *addr, bool write, const void *pc)
{
	return line_cost(s, c, line_find(s, addr), write, pc, NULL);
}

/* ---- atomics: near or far ----------------------------------------------- */

/* Whether c's read-modify-write of l executes at the line's home node:
 * with atomic_far, unless c holds the line uniquely. */
static bool rmw_is_far(const struct iopt_sim *s, const struct sim_cpu *c,
		       const struct sim_line *l)
{
	if (!s->p.atomic_far || l->owner == c->idx)
		return false;
	return !(set_has(&l->sharers, c->idx) && set_count(&l->sharers) == 1);
}

/* A far atomic: every cached copy is invalidated, the home executes it
 * after the one before on this line. */
static uint64_t far_cost(struct iopt_sim *s, struct sim_cpu *c,
			 struct sim_line *l, const void *pc)
{
	const struct iopt_sim_params *p = &s->p;
	uint64_t holders = set_count(&l->sharers);
	uint64_t start = l->free_at > c->now ? l->free_at : c->now;

	l->writer_pc = pc;
	memset(&l->sharers, 0, sizeof(l->sharers));
	memset(&l->held, 0, sizeof(l->held));
	l->owner = SIM_NONE;
	l->held_owner = SIM_NONE;
	l->hold_until = 0;	/* no CPU holds it */
	l->at_home = true;
	l->free_at = start + p->far_atomic_home;
	l->wait_cycles += start - c->now;
	l->far_ops++;
	return start - c->now + p->far_atomic + holders * p->per_sharer;
}

/* The cost of c's read-modify-write of l; *wait as line_cost()'s (a far
 * atomic never waits for the line: the home queues it). */
static uint64_t rmw_cost(struct iopt_sim *s, struct sim_cpu *c,
			 struct sim_line *l, const void *pc, uint64_t *wait)
{
	if (rmw_is_far(s, c, l)) {
		if (wait)
			*wait = 0;
		return far_cost(s, c, l, pc);
	}
	return line_cost(s, c, l, true, pc, wait) + s->p.atomic_extra;
}

uint64_t sim_rmw_access(struct iopt_sim *s, struct sim_cpu *c,
			const void *addr, const void *pc)
{
	return rmw_cost(s, c, line_find(s, addr), pc, NULL);
}

/* ---- raw memory ------------------------------------------------------------ */

static inline uint64_t raw_load(const void *p, unsigned size)
{
	if (size == 8)
		return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
}

static inline void raw_store(void *p, unsigned size, uint64_t v)
{
	if (size == 8)
		__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELAXED);
	else
		__atomic_store_n((uint32_t *)p, (uint32_t)v, __ATOMIC_RELAXED);
}

static uint64_t rmw_apply(enum sim_rmw_op op, uint64_t old, uint64_t v)
{
	switch (op) {
	case SIM_RMW_ADD: return old + v;
	case SIM_RMW_SUB: return old - v;
	case SIM_RMW_OR: return old | v;
	case SIM_RMW_AND: return old & v;
	case SIM_RMW_XOR: return old ^ v;
	case SIM_RMW_XCHG: return v;
	}
	return v;
}

/* ---- store buffers ------------------------------------------------------ */

static inline struct sim_sbe *sb_at(const struct iopt_sim *s,
				    const struct sim_cpu *c, unsigned i)
{
	return &c->sb[(c->sb_head + i) % s->p.sb_entries];
}

/* Drain c's oldest buffered store. */
static void sb_pop(struct iopt_sim *s, struct sim_cpu *c)
{
	struct sim_sbe *e = sb_at(s, c, 0);
	struct sim_line *l = line_find(s, e->addr);

	if (--l->sb_count == 0)
		l->sb_owner = SIM_NONE;
	c->sb_head = (c->sb_head + 1) % s->p.sb_entries;
	c->sb_n--;
}

static void sb_next_update(struct iopt_sim *s)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < s->nslots; i++) {
		struct sim_cpu *c = s->cpu[i];

		if (c && c->sb_n && sb_at(s, c, 0)->deadline < next)
			next = sb_at(s, c, 0)->deadline;
	}
	s->sb_next = next;
}

/* Drain all of c's buffer; returns the cycles c waits for it (until its
 * newest store's deadline). */
uint64_t sim_sb_drain_all(struct iopt_sim *s, struct sim_cpu *c)
{
	uint64_t last;

	if (!c->sb_n)
		return 0;
	last = sb_at(s, c, c->sb_n - 1)->deadline;
	while (c->sb_n)
		sb_pop(s, c);
	sb_next_update(s);
	return last > c->now ? last - c->now : 0;
}

/* Drain c's buffer up to and including its newest store to line l. */
static void sb_drain_line(struct iopt_sim *s, struct sim_cpu *c,
			  const struct sim_line *l)
{
	unsigned last = 0;

	for (unsigned i = 0; i < c->sb_n; i++)
		if ((uintptr_t)sb_at(s, c, i)->addr >> SIM_LINE_SHIFT == l->key)
			last = i + 1;
	while (last--)
		sb_pop(s, c);
	sb_next_update(s);
}

/* Drain every store whose deadline has come by cycle now. */
static void sb_drain_due(struct iopt_sim *s, uint64_t now)
{
	for (unsigned i = 0; i < s->nslots; i++) {
		struct sim_cpu *c = s->cpu[i];

		while (c && c->sb_n && sb_at(s, c, 0)->deadline <= now)
			sb_pop(s, c);
	}
	sb_next_update(s);
}

/* Another CPU than the buffering one accesses l for writing. */
static void sb_foreign_write(struct iopt_sim *s, struct sim_cpu *c,
			     struct sim_line *l)
{
	if (l->sb_owner != SIM_NONE && l->sb_owner != c->idx)
		sb_drain_line(s, s->cpu[l->sb_owner], l);
}

/* The value a load by c of [addr, addr + size) sees, mem being memory's. */
static uint64_t sb_foreign_load(struct iopt_sim *s, struct sim_cpu *c,
				struct sim_line *l, const void *addr,
				unsigned size, uint64_t mem)
{
	struct sim_cpu *o;
	const char *a = addr;
	struct sim_sbe *exact = NULL;

	if (l->sb_owner == SIM_NONE || l->sb_owner == c->idx)
		return mem;
	o = s->cpu[l->sb_owner];
	for (unsigned i = 0; i < o->sb_n; i++) {
		struct sim_sbe *e = sb_at(s, o, i);
		const char *ea = e->addr;

		if (ea + e->size <= a || a + size <= ea)
			continue;
		if (ea == a && e->size == size) {
			if (!exact)
				exact = e;
			continue;
		}
		/* Partial overlap: drain, then memory is what all see. */
		sb_drain_line(s, o, l);
		return mem;
	}
	return exact ? exact->old : mem;
}

/* Buffer c's store; it drains after its line cost plus a seeded delay.
 * Returns the cycles c stalls (a full buffer waits for its oldest). */
static uint64_t sb_push(struct iopt_sim *s, struct sim_cpu *c,
			struct sim_line *l, void *addr, unsigned size,
			uint64_t old, uint64_t cost)
{
	const struct iopt_sim_params *p = &s->p;
	struct sim_sbe *e;
	uint64_t deadline, stall = 0;

	if (c->sb_n == p->sb_entries) {
		deadline = sb_at(s, c, 0)->deadline;
		stall = deadline > c->now ? deadline - c->now : 0;
		sb_pop(s, c);
	}
	deadline = c->now + stall + cost + p->sb_drain_min +
		   sim_rand(s) % ((uint64_t)p->sb_drain_max - p->sb_drain_min + 1);
	/* FIFO: never before the store ahead of it. */
	if (c->sb_n && sb_at(s, c, c->sb_n - 1)->deadline > deadline)
		deadline = sb_at(s, c, c->sb_n - 1)->deadline;
	e = sb_at(s, c, c->sb_n);
	*e = (struct sim_sbe){ addr, size, old, deadline };
	c->sb_n++;
	l->sb_owner = (uint16_t)c->idx;
	l->sb_count++;
	if (deadline < s->sb_next)
		s->sb_next = deadline;
	return stall;
}

/* ---- platform operations -------------------------------------------------- */

static inline bool tso(const struct iopt_sim *s)
{
	return s->p.memmodel == IOPT_SIM_TSO;
}

/* Before c's access: stores due drain; attached models catch up. */
static inline void pre_op(struct iopt_sim *s, struct sim_cpu *c)
{
	if (c->now >= s->sb_next)
		sb_drain_due(s, c->now);
}

/*
 * c waits for the line of addr its access queued for (line_cost()'s
 * *wait = at); other CPUs run meanwhile, and may add lines to the table
 * (which moves them). Then it holds the line; stores due by then drain.
 * Returns the line.
 */
static struct sim_line *line_wait(struct iopt_sim *s, struct sim_cpu *c,
				  const void *addr, bool write, uint64_t at)
{
	struct sim_line *l;

	sim_stall(s, c, at - c->now);
	l = line_find(s, addr);
	pend_take(s, l, c, write);
	if (c->now >= s->sb_next)
		sb_drain_due(s, c->now);
	return l;
}

uint64_t sim_load(const void *p, unsigned size, enum sim_order order)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	struct sim_line *l;
	uint64_t cost, v, at;

	if (!c)
		return raw_load(p, size);
	s = sim_cur_sim;
	sim_ipoint(s, c);
	pre_op(s, c);
	/* What an attached model has written by now is there to be read. */
	if (s->nmodels)
		sim_run_models(s, sim_safe_time(s, c));
	l = line_find(s, p);
	cost = line_cost(s, c, l, false, NULL, &at);
	if (at) {
		l = line_wait(s, c, p, false, at);
		if (s->nmodels)
			sim_run_models(s, sim_safe_time(s, c));
		cost = 0;
	}
	v = raw_load(p, size);
	if (tso(s))
		v = sb_foreign_load(s, c, l, p, size, v);
	sim_charge(s, c, IOPT_SIM_OP_LOAD, cost);
	return v;
}

void sim_store(void *p, unsigned size, enum sim_order order, uint64_t v)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	struct sim_line *l;
	uint64_t cost, at = 0;

	if (!c) {
		raw_store(p, size, v);
		return;
	}
	s = sim_cur_sim;
	sim_ipoint(s, c);
	pre_op(s, c);
	l = line_find(s, p);
	cost = line_cost(s, c, l, true, __builtin_return_address(0),
			 tso(s) ? NULL : &at);
	if (at) {
		l = line_wait(s, c, p, true, at);
		cost = 0;
	}
	if (tso(s)) {
		/* The buffer hides the line's cost from the CPU: the store
		 * drains once the line would have come (sb_push). */
		sb_foreign_write(s, c, l);
		cost = s->p.hit + sb_push(s, c, l, p, size, raw_load(p, size),
					  cost);
	}
	raw_store(p, size, v);
	sim_charge(s, c, IOPT_SIM_OP_STORE, cost);
}

/* A read-modify-write drains the CPU's own buffer first (TSO: locked
 * instructions are full barriers) and acts on memory directly. */
static struct sim_line *rmw_begin(struct iopt_sim *s, struct sim_cpu *c,
				  void *p, uint64_t *cost, const void *pc)
{
	struct sim_line *l;
	uint64_t wait = 0, at;

	sim_ipoint(s, c);
	pre_op(s, c);
	if (tso(s))
		wait = sim_sb_drain_all(s, c);
	l = line_find(s, p);
	if (tso(s))
		sb_foreign_write(s, c, l);
	*cost = wait + rmw_cost(s, c, l, pc, &at);
	if (at) {
		l = line_wait(s, c, p, true, at);
		*cost = wait + s->p.atomic_extra;
	}
	return l;
}

uint64_t sim_rmw(void *p, unsigned size, enum sim_order order,
		 enum sim_rmw_op op, uint64_t v)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	uint64_t old, cost;

	if (!c) {
		old = raw_load(p, size);
		raw_store(p, size, rmw_apply(op, old, v));
		return old;
	}
	s = sim_cur_sim;
	rmw_begin(s, c, p, &cost, __builtin_return_address(0));
	old = raw_load(p, size);
	raw_store(p, size, rmw_apply(op, old, v));
	sim_charge(s, c, IOPT_SIM_OP_RMW, cost);
	return old;
}

bool sim_cas(void *p, unsigned size, enum sim_order order, uint64_t *old,
	     uint64_t v)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	uint64_t cur, cost = 0;
	uint64_t mask = size == 8 ? UINT64_MAX : UINT32_MAX;
	bool ok;

	if (c) {
		s = sim_cur_sim;
		rmw_begin(s, c, p, &cost, __builtin_return_address(0));
	}
	cur = raw_load(p, size);
	ok = cur == (*old & mask);
	if (ok)
		raw_store(p, size, v);
	else
		*old = cur;
	if (c)
		sim_charge(sim_cur_sim, c, IOPT_SIM_OP_RMW, cost);
	return ok;
}

void sim_fence(void)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;

	if (!c)
		return;
	s = sim_cur_sim;
	sim_ipoint(s, c);
	pre_op(s, c);
	sim_charge(s, c, IOPT_SIM_OP_FENCE,
		   s->p.fence + (tso(s) ? sim_sb_drain_all(s, c) : 0));
}

/*
 * Clean [p, p + len) to the point of coherency and wait for it
 * (platform.h, "Cache maintenance"): DC CVAC per line, then DSB. The DSB
 * waits for the CPU's earlier stores too (TSO: the store buffer drains).
 * A line the CPU holds modified is written back and stays valid and clean
 * (its next store by that CPU is a silent upgrade again); what other CPUs
 * hold is unchanged. A device reading the lines (plat_dev_read) sees
 * memory, so nothing else changes.
 */
void plat_cache_clean(const void *p, size_t len)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *s;
	uintptr_t first, last;
	uint64_t wait = 0;

	if (!c || !len)
		return;
	s = sim_cur_sim;
	sim_ipoint(s, c);
	pre_op(s, c);
	if (tso(s))
		wait = sim_sb_drain_all(s, c);
	first = (uintptr_t)p >> SIM_LINE_SHIFT;
	last = ((uintptr_t)p + len - 1) >> SIM_LINE_SHIFT;
	for (uintptr_t k = first; k <= last; k++) {
		struct sim_line *l = line_peek(s, k);

		if (l) {
			l->owner = SIM_NONE;	/* still in its sharers: clean */
			l->held_owner = SIM_NONE;
		}
	}
	sim_charge(s, c, IOPT_SIM_OP_CMO,
		   wait + (uint64_t)(last - first + 1) * s->p.cmo_line +
		   s->p.cmo_barrier);
}

/* ---- SMMU models on the timeline ----------------------------------------- */

jmp_buf *sim_raw_escape;

/*
 * The latest time every CPU has reached: models may run up to it without
 * getting ahead of a CPU that will still call them (in PCT mode a CPU can
 * run ahead of others by up to pct_quantum).
 */
uint64_t sim_safe_time(const struct iopt_sim *s, const struct sim_cpu *c)
{
	uint64_t t = c ? c->now : s->now;

	for (unsigned i = 0; c && i < s->heap_n; i++) {
		const struct sim_cpu *o = s->heap[i];

		if (o != &s->host && o->now < t)
			t = o->now;
		if (s->p.sched != IOPT_SIM_SCHED_PCT)
			break;	/* the heap's top is the earliest */
	}
	return t;
}

/*
 * Run every attached model up to CPU cycle now. The models' own platform
 * calls run as the host context's (no cost, no switch). A model whose
 * lock a simulated CPU holds (it is inside a model call, suspended) is
 * skipped: its lock is the first thing a model call takes, so the escape
 * from the lock attempt leaves it unchanged, and it catches up later.
 */
static void run_model(struct sim_model *m, uint64_t t)
{
	jmp_buf escape, *outer = sim_raw_escape;

	sim_raw_escape = &escape;
	if (!setjmp(escape)) {
		if (m->kind == 3) {
			if (iopt_smmuv3_next_event(m->model) <= t)
				iopt_smmuv3_run_until(m->model, t);
		} else {
			if (iopt_smmuv2_next_event(m->model) <= t)
				iopt_smmuv2_run_until(m->model, t);
		}
		m->at = t;
	}
	sim_raw_escape = outer;
}

void sim_run_models(struct iopt_sim *s, uint64_t now)
{
	struct sim_cpu *c = sim_cur;
	struct iopt_sim *dev_outer = sim_dev_sim;
	uint64_t pending = sim_icount;	/* c's: the models' are nobody's */

	sim_cur = NULL;
	sim_dev_sim = s;
	sim_raw++;
	for (unsigned i = 0; i < s->nmodels; i++) {
		struct sim_model *m = &s->models[i];
		uint64_t t = (uint64_t)((double)now / s->p.cpu_ghz * m->ghz);

		if (t > m->at)
			run_model(m, t);
	}
	sim_raw--;
	sim_dev_sim = dev_outer;
	sim_cur = c;
	sim_icount = pending;
}

struct sim_cpu *sim_mmio_cpu;
struct iopt_sim *sim_dev_sim;
static unsigned mmio_nest;	/* begin calls inside a device call */

static struct sim_model *model_of(struct iopt_sim *s, const void *dev)
{
	for (unsigned i = 0; i < s->nmodels; i++)
		if (s->models[i].model == dev)
			return &s->models[i];
	return NULL;
}

/*
 * A driver's call into a device model (platform.h, "MMIO"). The device
 * serialises the accesses that reach it, as hardware does, not a lock on
 * the CPUs' side: each access occupies the model's register port for
 * p.mmio_port cycles, so an access waits until the port is free
 * (port_free: a busy-until time per attached model, taken in the order
 * the CPUs issue their accesses, which is time order). Then the model call
 * runs as one step in raw mode, as the engine's own runs of the model do:
 * sim_cur is NULL (its platform operations are plain host ones, no cost,
 * no switch) and sim_mmio_cpu names the caller, whose time the model's
 * clock reads (iopt_sim_model_cycles()). The access reaches the model at
 * the port's start time; the CPU has its result p.mmio cycles later.
 */
void plat_mmio_begin(const void *dev)
{
	struct sim_cpu *c = sim_cur;
	struct sim_model *m;
	struct iopt_sim *s;
	uint64_t at;

	if (!c) {
		if (sim_mmio_cpu) {
			mmio_nest++;	/* a device call inside one: one step */
			return;
		}
		s = sim_raw ? NULL : sim_ambient(false);
		if (s && s->nmodels)
			sim_run_models(s, s->now);
		return;
	}
	s = sim_cur_sim;
	sim_ipoint(s, c);
	pre_op(s, c);
	/* Ordered after the CPU's earlier stores (writel's barrier). */
	at = c->now + (tso(s) ? sim_sb_drain_all(s, c) : 0);
	m = model_of(s, dev);
	if (m) {
		if (m->port_free > at)
			at = m->port_free;
		m->port_free = at + s->p.mmio_port;
	}
	/* A scheduling point: CPUs earlier than the access's start run. */
	sim_charge(s, c, IOPT_SIM_OP_MMIO, at - c->now);
	if (s->nmodels)
		sim_run_models(s, sim_safe_time(s, c));
	sim_mmio_cpu = c;
	sim_dev_sim = s;
	sim_cur = NULL;
	sim_raw++;
}

void plat_mmio_end(const void *dev)
{
	struct sim_cpu *c = sim_mmio_cpu;

	(void)dev;
	if (!c)
		return;		/* the host context's call */
	if (mmio_nest) {
		mmio_nest--;
		return;
	}
	sim_raw--;
	sim_cur = c;
	sim_mmio_cpu = NULL;
	sim_dev_sim = NULL;
	sim_icount = 0;		/* the model's instructions: the device's time */
	sim_charge_more(sim_cur_sim, c, IOPT_SIM_OP_MMIO, sim_cur_sim->p.mmio);
}

/* ---- device memory ----------------------------------------------------- */

/*
 * A device's view of memory (platform.h, "Device memory"). Memory holds
 * every CPU's newest store, buffered or not (the TSO section above), so a
 * device read puts back the value each buffered store replaced: oldest
 * last, so that a byte two buffered stores wrote reads what was there
 * before both. At most one CPU buffers stores to a line, so each byte has
 * one buffer to look in. Host-context device calls (outside every CPU)
 * have no simulation to notify and stay plain host accesses.
 */
void plat_dev_read(const void *p, void *buf, size_t len)
{
	struct iopt_sim *s = sim_dev_sim;
	uintptr_t a = (uintptr_t)p, first, last;
	bool buffered = false;

	if (!s || !len || !tso(s))
		return;
	first = a >> SIM_LINE_SHIFT;
	last = (a + len - 1) >> SIM_LINE_SHIFT;
	for (uintptr_t k = first; k <= last && !buffered; k++) {
		const struct sim_line *l = line_peek(s, k);

		buffered = l && l->sb_owner != SIM_NONE;
	}
	if (!buffered)
		return;
	for (unsigned i = 0; i < s->nslots; i++) {
		const struct sim_cpu *c = s->cpu[i];

		for (unsigned j = c ? c->sb_n : 0; j--;) {
			const struct sim_sbe *e = sb_at(s, c, j);
			uintptr_t ea = (uintptr_t)e->addr;
			uintptr_t lo = ea > a ? ea : a;
			uintptr_t hi = ea + e->size < a + len ? ea + e->size
							      : a + len;
			uint32_t old32 = (uint32_t)e->old;
			const char *old = e->size == 8 ? (const char *)&e->old
						       : (const char *)&old32;

			if (lo < hi)
				memcpy((char *)buf + (lo - a), old + (lo - ea),
				       hi - lo);
		}
	}
}

/* A DMA write: the lines leave every CPU, which then misses on them. Their
 * buffered stores drain first (the device's write is the newer one). */
void plat_dev_write(const void *p, size_t len)
{
	struct iopt_sim *s = sim_dev_sim;
	uintptr_t a = (uintptr_t)p;

	if (!s || !len)
		return;
	for (uintptr_t k = a >> SIM_LINE_SHIFT;
	     k <= (a + len - 1) >> SIM_LINE_SHIFT; k++) {
		struct sim_line *l = line_peek(s, k);

		if (!l)
			continue;
		if (l->sb_owner != SIM_NONE)
			sb_drain_line(s, s->cpu[l->sb_owner], l);
		memset(&l->sharers, 0, sizeof(l->sharers));
		memset(&l->held, 0, sizeof(l->held));
		l->owner = SIM_NONE;
		l->held_owner = SIM_NONE;
		l->hold_until = 0;	/* no CPU holds it */
		l->at_home = false;	/* memory has the device's data */
	}
}

uint64_t iopt_sim_model_cycles(void *model)
{
	struct sim_cpu *c = sim_cur ? sim_cur : sim_mmio_cpu;
	struct iopt_sim *s = c ? sim_cur_sim : sim_ambient(false);
	struct sim_model *m;
	uint64_t now, t;

	if (!s)
		return 0;
	now = c ? c->now : s->now;
	m = model_of(s, model);
	if (!m)
		return 0;
	t = (uint64_t)((double)now / s->p.cpu_ghz * m->ghz);
	return t > m->at ? t : m->at;
}

/* ---- statistics ------------------------------------------------------------- */

static bool hotter(const struct sim_line *a, const struct iopt_sim_line_stat *b)
{
	return a->wait_cycles > b->wait_cycles ||
	       (a->wait_cycles == b->wait_cycles && a->transfers > b->transfers);
}

void sim_mem_hot(const struct iopt_sim *s, struct iopt_sim_line_stat *hot,
		 unsigned n)
{
	unsigned have = 0;

	for (size_t i = 0; i < s->lines_cap; i++) {
		const struct sim_line *l = &s->lines[i];
		unsigned j;

		if (!l->key || (!l->transfers && !l->far_ops))
			continue;
		if (have == n && !hotter(l, &hot[n - 1]))
			continue;
		j = have < n ? have++ : n - 1;
		while (j && hotter(l, &hot[j - 1])) {
			hot[j] = hot[j - 1];
			j--;
		}
		hot[j] = (struct iopt_sim_line_stat){
			.line = l->key << SIM_LINE_SHIFT,
			.transfers = l->transfers,
			.wait_cycles = l->wait_cycles,
			.last_writer_pc = l->writer_pc,
			.far_atomics = l->far_ops,
		};
	}
}
