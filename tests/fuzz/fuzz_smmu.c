/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SMMUv3 model: raw bytes become the model's
 * parameters (features, queue and StreamID sizes, caches, timing), register
 * writes (any offset, size and value), the contents of the stream table,
 * context descriptors, command queue and translation tables (all in one
 * simulated physical memory the bytes also fill), transactions, and time.
 *
 * Input: byte 0 selects features; with its bit 7 set, 16 more bytes give
 * the parameters (take_params), otherwise the defaults are used (the
 * format of the first corpus). Byte 1 is the memory latency; then ops.
 *
 * Checked, besides crashes, hangs and sanitizer reports, against the
 * architecture (IHI0070), by a harness that reads the registers after
 * every op and decides command legality itself from chapter 4:
 *  - CONS never passes PROD: no op consumes more commands than were
 *    published (3.5, 4.1.2);
 *  - every command the model consumes is legal for the parameters, and a
 *    command that stops the queue with CERROR_ILL is illegal (4.1.3);
 *  - an error stops the queue: CMDQ_ERR becomes active with CONS.ERR
 *    CERROR_ILL or CERROR_ABT, and while it is active nothing is consumed
 *    and no command is due (7.1); a running, non-empty queue always has a
 *    command due (4.1.2: commands are processed in finite time);
 *  - the event queue never overfills: the records one op adds fit the
 *    free space, and none are added while EVENTQEN is 0 or EVENTQ_ABT_ERR
 *    is active (7.2.1, 7.4);
 *  - every fault is a known event type, and every event record the model
 *    writes (its only 32-byte memory writes) has only the fields its type
 *    defines set, every other bit 0 (7.3 RES0; tests/evt_layout.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

#include "../evt_layout.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x80000000ull
#define SPAN (4u << 20)

/* Registers (6.3). */
#define CMDQ_BASE	0x90
#define CMDQ_PROD	0x98
#define CMDQ_CONS	0x9c
#define EVENTQ_BASE	0xa0
#define EVENTQ_PROD	0x100a8
#define EVENTQ_CONS	0x100ac

static bool known_event(unsigned f)
{
	switch (f) {
	case 0: case IOPT_SMMUV3_EVT_ABORT: case IOPT_SMMUV3_EVT_F_UUT: case IOPT_SMMUV3_EVT_C_BAD_STREAMID:
	case IOPT_SMMUV3_EVT_F_STE_FETCH: case IOPT_SMMUV3_EVT_C_BAD_STE:
	case IOPT_SMMUV3_EVT_F_STREAM_DISABLED: case IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN:
	case IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID: case IOPT_SMMUV3_EVT_F_CD_FETCH:
	case IOPT_SMMUV3_EVT_C_BAD_CD: case IOPT_SMMUV3_EVT_F_WALK_EABT:
	case IOPT_SMMUV3_EVT_F_TRANSLATION: case IOPT_SMMUV3_EVT_F_ADDR_SIZE:
	case IOPT_SMMUV3_EVT_F_ACCESS: case IOPT_SMMUV3_EVT_F_PERMISSION:
	case IOPT_SMMUV3_EVT_F_CFG_CONFLICT:
		return true;
	default:
		return false;
	}
}

/* A cache of 2^k sets of 2^w ways. */
static void take_cache(uint64_t f, struct iopt_smmu_cache_params *c)
{
	unsigned ways = 1u << (f & 3), sets = 1u << (f >> 2 & 3);

	c->enable = f >> 4 & 1;
	c->ways = ways;
	c->entries = ways * sets;
	c->repl = (enum iopt_smmu_repl)((f >> 5 & 3) % 3);
	c->latency = (unsigned)(f >> 7 & 3);
}

/* Parameters from 16 bytes: every value create accepts can occur. */
static void take_params(struct in *in, struct iopt_smmuv3_params *p)
{
	uint64_t f = take(in, 8), g = take(in, 8);
	unsigned gran = (unsigned)(f >> 38 & 7);

	p->s1 = f & 1;
	p->s2 = f >> 1 & 1;
	if (!p->s1 && !p->s2)
		p->s2 = true;
	p->msi = f >> 2 & 1;
	p->sev = f >> 3 & 1;
	p->ril = f >> 4 & 1;
	p->strtab_2lvl = f >> 5 & 1;
	p->ats = f >> 6 & 1;
	p->httu = (unsigned)(f >> 7 & 3) % 3;
	p->asid16 = f >> 9 & 1;
	p->vmid16 = f >> 10 & 1;
	p->shared_clock = f >> 11 & 1;
	p->sidsize = (unsigned)(f >> 12 & 63) % 33;
	p->ssidsize = (unsigned)(f >> 18 & 31) % 21;
	p->cmdqs = (unsigned)(f >> 23 & 31) % 20;
	p->evtqs = (unsigned)(f >> 28 & 31) % 20;
	p->oas = 32 + (unsigned)(f >> 33 & 31) % 21;
	if (!gran)
		gran = 1;
	p->gran4k = gran & 1;
	p->gran16k = gran >> 1 & 1;
	p->gran64k = gran >> 2 & 1;
	take_cache(f >> 41, &p->tlb);
	take_cache(f >> 50, &p->walk);
	take_cache(g, &p->cfg);
	p->seed = g >> 9 & 0xff;
	p->translation_slots = 1 + (unsigned)(g >> 17 & 15);
	p->walk_slots = 1 + (unsigned)(g >> 21 & 15);
	p->cmd_cycles = (unsigned)(g >> 25 & 7);
	p->tlbi_cycles = (unsigned)(g >> 28 & 31);
	p->cfgi_cycles = (unsigned)(g >> 33 & 31);
	p->sync_cycles = (unsigned)(g >> 38 & 31);
	p->msi_cycles = (unsigned)(g >> 43 & 31);
	p->event_cycles = (unsigned)(g >> 48 & 31);
}

/* ---- the harness's own reading of chapter 4 ------------------------------ */

/* Range fields of a TLBI by address (4.4.1.1): legal or not. */
static bool range_ok(const struct iopt_smmuv3_params *p, const uint64_t w[2])
{
	unsigned tg = (unsigned)(w[1] >> 10 & 3), ttl = (unsigned)(w[1] >> 8 & 3);
	unsigned num = (unsigned)(w[0] >> 12 & 31), scale = (unsigned)(w[0] >> 20 & 31);

	if (!tg)
		return true;
	if (!p->ril)
		return false;		/* TG is RES0; the model detects it */
	if (tg == 2 && ttl == 1)
		ttl = 0;		/* IDR5.DS = 0: Reserved, treated as 0 */
	return num || scale || ttl;
}

/* Is this command legal on this SMMU's Non-secure queue? */
static bool cmd_legal(const struct iopt_smmuv3_params *p, const uint64_t w[2])
{
	bool ssec = w[0] >> 10 & 1;

	switch (w[0] & 0xff) {
	case 0x01: case 0x02: case 0x03: case 0x04:	/* PREFETCH_*, CFGI_STE* */
		return !ssec;
	case 0x05: case 0x06:				/* CFGI_CD, CFGI_CD_ALL */
		return !ssec && p->s1;
	case 0x10: case 0x11:				/* TLBI_NH_ALL, _ASID */
		return p->s1;
	case 0x12: case 0x13:				/* TLBI_NH_VA, _VAA */
		return p->s1 && range_ok(p, w);
	case 0x28:					/* TLBI_S12_VMALL */
		return p->s2;
	case 0x2a:					/* TLBI_S2_IPA */
		return p->s2 && range_ok(p, w);
	case 0x30:					/* TLBI_NSNH_ALL */
		return true;
	case 0x40:					/* ATC_INV */
		return p->ats;
	case 0x46:					/* CMD_SYNC */
		return (w[0] >> 12 & 3) != 3;
	default:
		return false;
	}
}

/* ---- memory seen by the model, with the commands it fetched ----------------- */

struct fmem {
	struct iopt_smmu_mem inner;
	uint64_t (*cmd)[2];	/* per 16-byte slot of the window: last fetch */
};

static int64_t f_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct fmem *m = ctx;
	int64_t r = m->inner.read(m->inner.ctx, pa, buf, len);

	/* 16-byte reads are command fetches (structures are 8, 32 or 64). */
	if (r >= 0 && len == 16 && pa >= BASE && pa - BASE < SPAN && !(pa & 15))
		memcpy(m->cmd[(pa - BASE) / 16], buf, 16);
	return r;
}

static int64_t f_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct fmem *m = ctx;

	/* 32-byte writes are event records (MSIs are 4, updates CAS). */
	if (len == 32) {
		uint64_t ev[4], res0[4];

		memcpy(ev, buf, sizeof(ev));
		if (!evt_layout_res0(ev, res0) ||
		    (res0[0] | res0[1] | res0[2] | res0[3]))
			abort();
	}
	return m->inner.write(m->inner.ctx, pa, buf, len);
}

static int f_load64(void *ctx, uint64_t pa, uint64_t *v)
{
	struct fmem *m = ctx;

	return m->inner.load64(m->inner.ctx, pa, v);
}

static int f_cas64(void *ctx, uint64_t pa, uint64_t *old, uint64_t v)
{
	struct fmem *m = ctx;

	return m->inner.cas64(m->inner.ctx, pa, old, v);
}

/* ---- queue state as software reads it ------------------------------------- */

struct qview {
	uint32_t cprod, ccons, eprod, econs, gerr, cr0;
	unsigned cl2, el2;
	uint64_t cbase;
};

static uint32_t rd32(struct iopt_smmuv3 *s, uint64_t off, uint64_t cycle)
{
	uint64_t v = 0;

	if (iopt_smmuv3_mmio_read(s, off, 4, &v, cycle))
		abort();		/* cycles only grow here */
	return (uint32_t)v;
}

static unsigned q_l2(uint64_t base, unsigned max)
{
	unsigned l = (unsigned)(base & 31);

	return l > max ? max : l;
}

static void view(struct iopt_smmuv3 *s, const struct iopt_smmuv3_params *p,
		 uint64_t cycle, struct qview *q)
{
	uint64_t v = 0;

	q->cprod = rd32(s, CMDQ_PROD, cycle);
	q->ccons = rd32(s, CMDQ_CONS, cycle);
	q->eprod = rd32(s, EVENTQ_PROD, cycle);
	q->econs = rd32(s, EVENTQ_CONS, cycle);
	q->gerr = rd32(s, 0x60, cycle) ^ rd32(s, 0x64, cycle);
	q->cr0 = rd32(s, 0x20, cycle);
	if (iopt_smmuv3_mmio_read(s, CMDQ_BASE, 8, &v, cycle))
		abort();
	q->cbase = v;
	q->cl2 = q_l2(v, p->cmdqs);
	if (iopt_smmuv3_mmio_read(s, EVENTQ_BASE, 8, &v, cycle))
		abort();
	q->el2 = q_l2(v, p->evtqs);
}

/* A queue's effective base (6.3.26): ADDR aligned to its size in bytes
 * (16-byte commands), at least 32. */
static uint64_t q_base_of(uint64_t reg, unsigned l2)
{
	uint64_t align = 16ull << l2 > 32 ? 16ull << l2 : 32;

	return reg & ((1ull << 52) - 1) & ~(align - 1);
}

/* How far pointer a is ahead of b, index and wrap bits. */
static uint32_t dist(uint32_t a, uint32_t b, unsigned l2)
{
	return (a - b) & ((2u << l2) - 1);
}

/* The checks between two views around one op; wrote: the register the op
 * wrote, or 0. */
static void check(const struct iopt_smmuv3_params *p, struct fmem *m,
		  struct iopt_smmuv3 *s, const struct qview *a,
		  const struct qview *b, uint64_t wrote)
{
	unsigned l2 = a->cl2;
	uint32_t size = 1u << l2;
	bool cmd_regs = wrote == CMDQ_BASE || wrote == CMDQ_CONS ||
			wrote == 0x64 || wrote == 0x20;

	if (!cmd_regs && b->cl2 == l2) {
		/* Published: what was waiting, plus what a PROD write in this
		 * op added (commands before it may be consumed first). */
		uint32_t done = dist(b->ccons, a->ccons, l2);
		uint32_t waiting = dist(a->cprod, a->ccons, l2);
		uint32_t added = dist(b->cprod, a->cprod, l2);
		uint32_t avail = waiting <= size && added <= size ? waiting + added :
				 UINT32_MAX;
		bool err_a = a->gerr & 1, err_b = b->gerr & 1;

		/* CONS never passes PROD. */
		if (avail != UINT32_MAX && done > avail)
			abort();
		/* Nothing is consumed while an error is active. */
		if (err_a && done)
			abort();
		/* Each consumed command was legal, as fetched. */
		uint64_t base = q_base_of(a->cbase, l2);

		for (uint32_t k = 0; k < done && avail != UINT32_MAX; k++) {
			uint64_t pa = base + (uint64_t)((a->ccons + k) & (size - 1)) * 16;

			if (pa >= BASE && pa - BASE < SPAN &&
			    !cmd_legal(p, m->cmd[(pa - BASE) / 16]))
				abort();
		}
		/* An error that became active stops the queue at the bad
		 * command with CERROR_ILL (an illegal command) or ABT. */
		if (!err_a && err_b) {
			unsigned code = b->ccons >> 24 & 0x7f;
			uint64_t pa = base + (uint64_t)(b->ccons & (size - 1)) * 16;

			if (code != 1 && code != 2)
				abort();
			if (code == 1 && pa >= BASE && pa - BASE < SPAN &&
			    cmd_legal(p, m->cmd[(pa - BASE) / 16]))
				abort();
		}
	}
	/* Stopped or running: due commands agree with the queue state. */
	uint32_t pending = dist(b->cprod, b->ccons, b->cl2);
	uint64_t next = iopt_smmuv3_next_event(s);

	if ((b->gerr & 1) || !(b->cr0 & 8) || !pending) {
		if (next != UINT64_MAX)
			abort();
	} else if (pending <= (1u << b->cl2) && next == UINT64_MAX) {
		abort();
	}
	/* The event queue never overfills and is unwritable while
	 * disabled or after an abort. */
	bool evt_regs = wrote == EVENTQ_BASE || wrote == EVENTQ_PROD ||
			wrote == EVENTQ_CONS || wrote == 0x20 || wrote == 0x64;

	if (!evt_regs && b->el2 == a->el2) {
		unsigned e2 = a->el2;
		uint32_t used = dist(a->eprod, a->econs, e2);
		uint32_t added = dist(b->eprod, a->eprod, e2);

		if (used <= (1u << e2) && added > (1u << e2) - used)
			abort();
		if ((!(a->cr0 & 4) || (a->gerr & 4)) && added)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t (*cmdlog)[2];
	struct in in = { data, size };
	struct iopt_physmem *pm;
	struct iopt_smmuv3_params p;
	struct fmem fm;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv3 *s;
	struct qview qa, qb;
	uint64_t cycle = 0;

	/* Not cleared between inputs: a slot is consulted only after this
	 * input's model fetched it. */
	if (!cmdlog && !(cmdlog = calloc(SPAN / 16, sizeof(*cmdlog))))
		return 0;
	if (iopt_physmem_create(BASE, SPAN, &pm))
		return 0;
	iopt_smmuv3_default_params(&p);
	p.tlb.entries = 64;
	unsigned feat = (unsigned)take(&in, 1);

	p.tlb.repl = (enum iopt_smmu_repl)(feat % 3);
	p.ats = feat & 4;
	if (feat & 0x80)
		take_params(&in, &p);
	iopt_smmu_physmem(pm, (unsigned)take(&in, 1), &fm.inner);
	fm.cmd = cmdlog;
	mem = (struct iopt_smmu_mem){ f_read, f_write, f_load64, f_cas64,
				      fm.inner.desc_latency, &fm };
	if (iopt_smmuv3_create(&p, &mem, NULL, NULL, &s)) {
		iopt_physmem_destroy(pm);
		return 0;
	}
	/* A sane start the bytes then disturb: tables at BASE. */
	iopt_smmuv3_mmio_write(s, 0x80, 8, BASE, 0);
	iopt_smmuv3_mmio_write(s, 0x88, 4, p.sidsize < 6 ? p.sidsize : 6, 0);
	iopt_smmuv3_mmio_write(s, 0x90, 8, (BASE + 0x10000) | 6, 0);
	iopt_smmuv3_mmio_write(s, 0xa0, 8, (BASE + 0x20000) | 4, 0);
	iopt_smmuv3_mmio_write(s, 0x20, 4, 0xd, 0);
	view(s, &p, cycle, &qa);
	for (int op = 0; op < 200 && in.n; op++) {
		/* Inputs with their own parameters also have the command ops. */
		unsigned kind = (unsigned)take(&in, 1) % (feat & 0x80 ? 7 : 5);
		uint64_t wrote = 0;

		cycle += take(&in, 1);
		switch (kind) {
		case 0: {	/* memory: 8 bytes anywhere in the window */
			uint64_t off = take(&in, 3) % (SPAN / 8) * 8, v = take(&in, 8);
			uint64_t *q = iopt_physmem_ptr(pm, BASE + off, 8);

			if (q)
				memcpy(q, &v, 8);
			break;
		}
		case 1: {	/* register write */
			uint64_t off = take(&in, 3) & 0x1fffc;
			unsigned sz = take(&in, 1) & 1 ? 8 : 4;

			off = sz == 8 ? off & ~7ull : off;
			if (iopt_smmuv3_mmio_write(s, off, sz, take(&in, 8), cycle))
				abort();
			/* An 8-byte write covers the next register too. */
			wrote = off;
			if (sz == 8 && (off == CMDQ_PROD || off == EVENTQ_PROD))
				wrote = off == CMDQ_PROD ? CMDQ_CONS : EVENTQ_CONS;
			if (sz == 8 && off == 0x60)
				wrote = 0x64;
			break;
		}
		case 2: {	/* register read */
			uint64_t v, off = take(&in, 3) & 0x1fffc;

			if (iopt_smmuv3_mmio_read(s, off, 4, &v, cycle))
				abort();
			break;
		}
		case 3: {	/* transaction */
			struct iopt_smmuv3_txn t = {
				.sid = (uint32_t)take(&in, 1) % 80,
				.ssv = take(&in, 1) & 1,
				.ssid = (uint32_t)take(&in, 1),
				.addr = take(&in, 8),
			};
			unsigned f = (unsigned)take(&in, 1);
			struct iopt_smmuv3_resp r;

			t.write = f & 1;
			t.exec = f & 2;
			t.priv = f & 4;
			t.translated = f & 8;
			if (iopt_smmuv3_translate(s, &t, cycle, &r) || !known_event(r.fault))
				abort();
			break;
		}
		case 5: {	/* a command into the queue, its opcode from a list */
			static const uint8_t ops[] = {
				0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x10, 0x11,
				0x12, 0x13, 0x18, 0x20, 0x28, 0x2a, 0x30, 0x40, 0x41,
				0x44, 0x46, 0x46, 0x46, 0x50, 0x00,
			};
			unsigned l2 = qa.cl2, slot = (unsigned)take(&in, 1);
			uint64_t w[2];

			w[0] = take(&in, 8);
			w[1] = take(&in, 8);
			w[0] = (w[0] & ~0xffull) | ops[(unsigned)take(&in, 1) % sizeof(ops)];
			uint64_t pa = q_base_of(qa.cbase, l2) +
				      (uint64_t)((qa.cprod + slot % 2) & ((1u << l2) - 1)) * 16;
			void *q = pa >= BASE && pa - BASE < SPAN ?
				  iopt_physmem_ptr(pm, pa, 16) : NULL;

			if (q)
				memcpy(q, w, 16);
			break;
		}
		case 6: {	/* publish: PROD forward; or acknowledge GERROR */
			unsigned f = (unsigned)take(&in, 1);

			if (f & 0x80) {
				/* Recovery as 7.1 suggests: with bit 6, the command
				 * at CONS becomes a CMD_SYNC first. */
				uint64_t pa = q_base_of(qa.cbase, qa.cl2) +
					      (uint64_t)(qa.ccons & ((1u << qa.cl2) - 1)) * 16;
				uint64_t *q = (f & 0x40) && pa >= BASE && pa - BASE < SPAN ?
					      iopt_physmem_ptr(pm, pa, 16) : NULL;

				if (q) {
					q[0] = 0x46;
					q[1] = 0;
				}
				wrote = 0x64;
				if (iopt_smmuv3_mmio_write(s, 0x64, 4, qa.gerr ^ rd32(s, 0x64, cycle),
							   cycle))
					abort();
			} else {
				wrote = CMDQ_PROD;
				if (iopt_smmuv3_mmio_write(s, CMDQ_PROD, 4,
							   (qa.cprod + 1 + f % 4) &
							   ((2u << qa.cl2) - 1), cycle))
					abort();
			}
			break;
		}
		default:	/* time passes */
			cycle += take(&in, 2);
			if (iopt_smmuv3_run_until(s, cycle))
				abort();
			break;
		}
		view(s, &p, cycle, &qb);
		check(&p, &fm, s, &qa, &qb, wrote);
		qa = qb;
	}
	iopt_smmuv3_destroy(s);
	iopt_physmem_destroy(pm);
	return 0;
}
