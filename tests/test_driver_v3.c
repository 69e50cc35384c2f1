/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 driver over the SMMUv3 model.
 *  - probe: the registers the model ends up with (CR0, queue and stream
 *    table bases) checked against IHI0070 field positions;
 *  - translation: after attach + map a device read gets the mapped PA and a
 *    write to a read-only page faults; after unmap + sync the model's TLB
 *    no longer translates it (F_TRANSLATION, delivered through the event
 *    queue); detach aborts; stage 1 and stage 2, every cmdq x sync mode,
 *    with and without range invalidation, linear and 2-level tables;
 *  - the commands the TLB ops produce, read back from the queue as the
 *    model fetched them and decoded with the architecture's field
 *    positions (TG/NUM/SCALE/TTL, per-page, whole-ASID);
 *  - errors: bad arguments, a sync that never completes (CMDQEN off, a
 *    stopped clock), an illegal command (recovered and counted);
 *  - the WFE-like wait (src/driver/drv_wait.h): a signal from another
 *    thread ends it, no signal times it out, a signal between taking the
 *    token and waiting is not lost; CONS syncs on an SMMU with SEV ask
 *    for SIG_SEV and complete from several threads with one poller
 *    signalling the others, without SEV they poll.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/testbed.h>

#include <pthread.h>
#include <sched.h>

#include "../src/driver/drv_wait.h"
#include "hold_clock.h"

#define MEM_BASE	0x80000000ull
#define MEM_SIZE	(64ull << 20)

/* IHI0070 constants, written here from the architecture. */
#define A_CR0		0x20
#define A_CR0ACK	0x24
#define A_GERROR	0x60
#define A_GERRORN	0x64
#define A_STRTAB_BASE_CFG 0x88
#define A_CMDQ_BASE	0x90
#define A_EVENTQ_BASE	0xa0
#define A_EVENTQ_PROD	0x100a8		/* page 1 */
#define A_EVENTQ_CONS	0x100ac
#define A_CR0_SMMUEN	0x1
#define A_CR0_EVENTQEN	0x4
#define A_CR0_CMDQEN	0x8
#define OP_TLBI_NH_ASID	0x11
#define OP_TLBI_NH_VA	0x12
#define OP_TLBI_S2_IPA	0x2a
#define OP_TLBI_S12_VMALL 0x28
#define OP_CMD_SYNC	0x46
#define EVT_F_TRANSLATION 0x10
#define EVT_F_PERMISSION 0x13

/* One command as the model read it from the queue. */
struct tcmd {
	uint64_t pa, w[2];
};

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	struct iopt_smmu_mem inner, mem;
	struct iopt_smmuv3_drv *drv;
	struct tcmd *trace;
	size_t ntrace, cap;
	struct iopt_smmuv3_drv_event ev[64];
	unsigned nev;
	uint64_t clock_cycle;
	bool clock_runs;
};

/* Memory as the model reaches it; 16-byte reads are command fetches. */
static int64_t t_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct rig *r = ctx;
	int64_t ret = r->inner.read(r->inner.ctx, pa, buf, len);

	if (ret >= 0 && len == 16) {
		struct tcmd c = { .pa = pa };

		memcpy(c.w, buf, 16);
		/* The model re-reads the command at CONS until it runs it. */
		if (r->ntrace && !memcmp(&r->trace[r->ntrace - 1], &c, sizeof(c)))
			return ret;
		if (r->ntrace == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			r->trace = realloc(r->trace, r->cap * sizeof(*r->trace));
		}
		r->trace[r->ntrace++] = c;
	}
	return ret;
}

static int64_t t_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct rig *r = ctx;

	return r->inner.write(r->inner.ctx, pa, buf, len);
}

static int t_load64(void *ctx, uint64_t pa, uint64_t *v)
{
	struct rig *r = ctx;

	return r->inner.load64(r->inner.ctx, pa, v);
}

static int t_cas64(void *ctx, uint64_t pa, uint64_t *old, uint64_t v)
{
	struct rig *r = ctx;

	return r->inner.cas64(r->inner.ctx, pa, old, v);
}

static void t_event(void *ctx, const struct iopt_smmuv3_drv_event *ev)
{
	struct rig *r = ctx;

	if (r->nev < 64)
		r->ev[r->nev++] = *ev;
}

/* An external clock that moves 10 cycles a reading while it runs. */
static uint64_t t_clock(void *ctx)
{
	struct rig *r = ctx;

	if (r->clock_runs)
		r->clock_cycle += 10;
	return r->clock_cycle;
}

/* The model's interrupts, to the driver the test probed. */
static void t_irq(void *ctx, unsigned line, uint64_t cycle)
{
	struct rig *r = ctx;

	(void)cycle;
	if (r->drv)
		iopt_smmuv3_drv_irq(r->drv, line);
}

/* Memory (read through the command tracer) and the model alone, on the
 * testbed; the tests probe the driver themselves (rig_probe()). */
static void rig_model(struct rig *r, const struct iopt_smmuv3_params *p)
{
	struct iopt_testbed_cfg c;

	memset(r, 0, sizeof(*r));
	assert_int_equal(iopt_physmem_create(MEM_BASE, MEM_SIZE, &r->pm), 0);
	iopt_smmu_physmem(r->pm, 10, &r->inner);
	r->mem = r->inner;
	r->mem.read = t_read;
	r->mem.write = t_write;
	r->mem.load64 = t_load64;
	r->mem.cas64 = t_cas64;
	r->mem.ctx = r;
	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.pm = r->pm;
	c.mem = &r->mem;
	if (p)
		c.v3 = *p;
	c.irq = t_irq;
	c.irq_ctx = r;
	c.probe = c.dma = c.attach = false;
	assert_int_equal(iopt_testbed_create(&c, &r->tb), 0);
	r->s = iopt_testbed_smmuv3(r->tb);
}

static void rig_cfg(struct rig *r, struct iopt_smmuv3_drv_cfg *c)
{
	iopt_smmuv3_drv_default_cfg(c);
	c->smmu = r->s;
	c->pm = r->pm;
	c->event = t_event;
	c->event_ctx = r;
}

static void rig_probe(struct rig *r, const struct iopt_smmuv3_drv_cfg *c)
{
	assert_int_equal(iopt_smmuv3_drv_probe(c, &r->drv), 0);
}

static void rig_free(struct rig *r)
{
	iopt_smmuv3_drv_remove(r->drv);
	iopt_testbed_destroy(r->tb);
	iopt_physmem_destroy(r->pm);
	free(r->trace);
}

static uint64_t model_reg(struct rig *r, uint64_t off, unsigned size)
{
	uint64_t v;

	assert_int_equal(iopt_smmuv3_mmio_read(r->s, off, size, &v,
					       iopt_smmuv3_drv_cycle(r->drv)), 0);
	return v;
}

static struct iopt_pgtable *make_pt(struct rig *r, enum iopt_pgtable_fmt fmt,
				    struct iopt_smmuv3_drv_domain *dom)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = fmt, .granule = 4096, .ias = 48, .oas = 48,
		.coherent_walk = true, .tlb = iopt_smmuv3_drv_tlb_ops(),
		.tlb_cookie = dom, .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm,
	};
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	return pt;
}

static struct iopt_smmuv3_resp dev_access(struct rig *r, uint32_t sid,
					  uint64_t addr, bool write)
{
	struct iopt_smmuv3_txn t = { .sid = sid, .addr = addr, .write = write };
	struct iopt_smmuv3_resp resp;

	assert_int_equal(iopt_smmuv3_drv_translate(r->drv, &t, &resp), 0);
	return resp;
}

/* ---- probe ----------------------------------------------------------- */

static void probe_registers(bool two_level)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_info info;
	struct rig r;

	iopt_smmuv3_default_params(&p);
	p.strtab_2lvl = two_level;
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	c.cmdq_log2 = 5;
	c.evtq_log2 = 4;
	rig_probe(&r, &c);
	iopt_smmuv3_drv_get_info(r.drv, &info);
	assert_true(info.st_2lvl == two_level);
	assert_int_equal(info.sid_bits, two_level ? 16 : 8);
	/* 6.3.9/6.3.10: every unit enabled and acknowledged. */
	assert_int_equal(model_reg(&r, A_CR0, 4),
			 A_CR0_SMMUEN | A_CR0_EVENTQEN | A_CR0_CMDQEN);
	assert_int_equal(model_reg(&r, A_CR0ACK, 4),
			 A_CR0_SMMUEN | A_CR0_EVENTQEN | A_CR0_CMDQEN);
	/* 6.3.26/6.3.29: LOG2SIZE [4:0]; base aligned to the queue size. */
	uint64_t cb = model_reg(&r, A_CMDQ_BASE, 8);
	uint64_t eb = model_reg(&r, A_EVENTQ_BASE, 8);

	assert_int_equal(cb & 0x1f, 5);
	assert_int_equal((cb & ((1ull << 52) - 1) & ~0x1full) % (16 << 5), 0);
	assert_int_equal(eb & 0x1f, 4);
	assert_int_equal((eb & ((1ull << 52) - 1) & ~0x1full) % (32 << 4), 0);
	/* 6.3.25: FMT [17:16], SPLIT [10:6], LOG2SIZE [5:0]. */
	uint64_t sc = model_reg(&r, A_STRTAB_BASE_CFG, 4);

	assert_int_equal((sc >> 16) & 3, two_level ? 1 : 0);
	assert_int_equal(sc & 0x3f, two_level ? 16 : 8);
	if (two_level)
		assert_int_equal((sc >> 6) & 0x1f, 8);
	rig_free(&r);
}

static void test_probe_linear(void **state)
{
	(void)state;
	probe_registers(false);
}

static void test_probe_2lvl(void **state)
{
	(void)state;
	probe_registers(true);
}

/* ---- translation through attach, map, unmap ---------------------------- */

#define IOVA	0x40200000ull
#define PA	0x12345000ull
#define SID	0x123	/* in a 2-level table's second leaf table */

static void map_unmap_fault(enum iopt_smmuv3_drv_cmdq cmdq,
			    enum iopt_smmuv3_drv_sync sync, bool ril,
			    unsigned stage)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_smmuv3_resp resp;
	struct iopt_pgtable *pt;
	struct rig r;

	iopt_smmuv3_default_params(&p);
	p.ril = ril;
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	c.cmdq = cmdq;
	c.sync = sync;
	c.cmdq_log2 = 4;
	rig_probe(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, stage, &dom), 0);
	pt = make_pt(&r, stage == 1 ? IOPT_ARM_64_LPAE_S1 : IOPT_ARM_64_LPAE_S2, dom);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, SID), 0);

	/* A 2 MiB block read/write and a 4 KiB page read-only. */
	assert_int_equal(iopt_pgtable_map_pages(pt, IOVA, PA & ~0x1fffffull, 2u << 20, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, IOVA + (4u << 20), PA, 4096, 1,
						IOPT_READ, NULL), 0);
	resp = dev_access(&r, SID, IOVA + 0x1234, false);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, (PA & ~0x1fffffull) + 0x1234);
	resp = dev_access(&r, SID, IOVA + 0x1ffff8, true);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, (PA & ~0x1fffffull) + 0x1ffff8);
	resp = dev_access(&r, SID, IOVA + (4u << 20) + 0x10, false);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, PA + 0x10);
	resp = dev_access(&r, SID, IOVA + (4u << 20) + 0x10, true);
	assert_int_equal(resp.fault, EVT_F_PERMISSION);

	/* The TLB holds both now; unmap + sync must remove them. */
	assert_int_equal(iopt_pgtable_unmap_pages(pt, IOVA + (4u << 20), 4096, 1, NULL), 4096);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, IOVA, 2u << 20, 1, NULL), 2u << 20);
	iopt_pgtable_tlb_sync(pt);
	resp = dev_access(&r, SID, IOVA + (4u << 20) + 0x10, false);
	assert_int_equal(resp.fault, EVT_F_TRANSLATION);
	resp = dev_access(&r, SID, IOVA + 0x1234, false);
	assert_int_equal(resp.fault, EVT_F_TRANSLATION);

	/* The faults arrive through the event queue, decoded (7.3.12). */
	r.nev = 0;
	assert_true(iopt_smmuv3_drv_poll(r.drv) >= 2);
	bool seen = false;

	for (unsigned i = 0; i < r.nev; i++)
		if (r.ev[i].type == EVT_F_TRANSLATION && r.ev[i].sid == SID &&
		    r.ev[i].addr == IOVA + 0x1234 && r.ev[i].read &&
		    r.ev[i].s2 == (stage == 2))
			seen = true;
	assert_true(seen);

	/* Splitting a cached 2 MiB block: the unmapped page faults, its
	 * neighbour translates through the new table. With range
	 * invalidation the TLBI carries the level hint (TTL) from add_page's
	 * granule, so this holds only because a split reports the replaced
	 * block's size (the TLB-maintenance contract of docs/pgtable.md). */
	uint64_t blk = IOVA + (8u << 20);

	assert_int_equal(iopt_pgtable_map_pages(pt, blk, 0x60000000, 2u << 20, 1,
						IOPT_READ, NULL), 0);
	assert_int_equal(dev_access(&r, SID, blk + 0x5008, false).oa, 0x60005008);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, blk + 0x5000, 4096, 1, NULL), 4096);
	iopt_pgtable_tlb_sync(pt);
	assert_int_equal(dev_access(&r, SID, blk + 0x5008, false).fault,
			 EVT_F_TRANSLATION);
	resp = dev_access(&r, SID, blk + 0x6008, false);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x60006008);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, blk, 4096, 5, NULL), 5 * 4096);
	assert_int_equal(iopt_pgtable_unmap_pages(pt, blk + 0x6000, 4096, 506, NULL),
			 506 * 4096);
	iopt_pgtable_tlb_sync(pt);

	/* Detach: the stream aborts (no translation, no event). */
	assert_int_equal(iopt_pgtable_map_pages(pt, IOVA, PA, 4096, 1, IOPT_READ, NULL), 0);
	assert_int_equal(dev_access(&r, SID, IOVA, false).fault, 0);
	assert_int_equal(iopt_smmuv3_drv_detach(dom, SID), 0);
	assert_int_equal(dev_access(&r, SID, IOVA, false).fault, IOPT_SMMUV3_EVT_ABORT);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	iopt_smmuv3_drv_get_stats(r.drv, &st);
	assert_int_equal(st.sync_timeouts, 0);
	assert_int_equal(st.cmd_errors, 0);
	assert_int_equal(st.tlb_errors, 0);
	iopt_pgtable_free(pt);
	rig_free(&r);
}

static void test_translate_matrix(void **state)
{
	(void)state;
	for (unsigned stage = 1; stage <= 2; stage++)
		for (int cq = 0; cq < 2; cq++)
			for (int sy = 0; sy < 2; sy++)
				for (int ril = 0; ril < 2; ril++)
					map_unmap_fault(cq, sy, ril, stage);
}

/* ---- the commands the TLB ops produce ---------------------------------- */

/* Commands of opcode op in the trace from index from on. */
static size_t find_cmds(struct rig *r, size_t from, unsigned op,
			struct tcmd *out, size_t max)
{
	size_t n = 0;

	for (size_t i = from; i < r->ntrace && n < max; i++)
		if ((r->trace[i].w[0] & 0xff) == op)
			out[n++] = r->trace[i];
	return n;
}

/* Fields of TLBI_NH_VA / TLBI_S2_IPA (4.4.1, 4.4.2). */
#define F_NUM(w0)	(((w0) >> 12) & 0x1f)
#define F_SCALE(w0)	(((w0) >> 20) & 0x1f)
#define F_ASID(w0)	((w0) >> 48)
#define F_LEAF(w1)	((w1) & 1)
#define F_TTL(w1)	(((w1) >> 8) & 3)
#define F_TG(w1)	(((w1) >> 10) & 3)
#define F_ADDR(w1)	((w1) & ~0xfffull)

static void test_tlbi_encoding(void **state)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_pgtable *pt;
	struct tcmd cmds[64];
	struct rig r;
	size_t mark, n;
	unsigned asid;

	(void)state;
	/* With range invalidation. */
	iopt_smmuv3_default_params(&p);
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	rig_probe(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 1, &dom), 0);
	asid = iopt_smmuv3_drv_domain_id(dom);
	pt = make_pt(&r, IOPT_ARM_64_LPAE_S1, dom);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 1), 0);

	/* 33 leaf pages: 1 page at level 3 (TTL 3), then 32 = 1 << 5. */
	mark = r.ntrace;
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, 0x100000, 33 * 4096, 4096, true), 0);
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	n = find_cmds(&r, mark, OP_TLBI_NH_VA, cmds, 64);
	assert_int_equal(n, 2);
	assert_int_equal(F_TG(cmds[0].w[1]), 1);	/* 4K */
	assert_int_equal(F_NUM(cmds[0].w[0]), 0);
	assert_int_equal(F_SCALE(cmds[0].w[0]), 0);
	assert_int_equal(F_TTL(cmds[0].w[1]), 3);
	assert_int_equal(F_LEAF(cmds[0].w[1]), 1);
	assert_int_equal(F_ASID(cmds[0].w[0]), asid);
	assert_int_equal(F_ADDR(cmds[0].w[1]), 0x100000);
	assert_int_equal(F_NUM(cmds[1].w[0]), 0);
	assert_int_equal(F_SCALE(cmds[1].w[0]), 5);
	assert_int_equal(F_ADDR(cmds[1].w[1]), 0x101000);

	/* Non-leaf, 33 pages: TTL 0, so the count becomes 34 (no
	 * TG != 0 / NUM = SCALE = TTL = 0 command): 17 << 1. */
	mark = r.ntrace;
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, 0x100000, 33 * 4096, 0, false), 0);
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	n = find_cmds(&r, mark, OP_TLBI_NH_VA, cmds, 64);
	assert_int_equal(n, 1);
	assert_int_equal(F_NUM(cmds[0].w[0]), 16);
	assert_int_equal(F_SCALE(cmds[0].w[0]), 1);
	assert_int_equal(F_TTL(cmds[0].w[1]), 0);
	assert_int_equal(F_LEAF(cmds[0].w[1]), 0);

	/* A 2 MiB leaf: TTL 2, one page of... 512 4K pages = 16 << 5. */
	mark = r.ntrace;
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, 0x200000, 2u << 20, 2u << 20, true), 0);
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	n = find_cmds(&r, mark, OP_TLBI_NH_VA, cmds, 64);
	assert_int_equal(n, 1);
	assert_int_equal(F_TTL(cmds[0].w[1]), 2);
	assert_int_equal((F_NUM(cmds[0].w[0]) + 1) << F_SCALE(cmds[0].w[0]), 512);

	/* flush_all: TLBI_NH_ASID + CMD_SYNC. */
	mark = r.ntrace;
	iopt_smmuv3_drv_tlb_ops()->flush_all(dom);
	n = find_cmds(&r, mark, OP_TLBI_NH_ASID, cmds, 64);
	assert_int_equal(n, 1);
	assert_int_equal(F_ASID(cmds[0].w[0]), asid);
	assert_int_equal(find_cmds(&r, mark, OP_CMD_SYNC, cmds, 64), 1);

	/* MSI syncs (4.7.3): CS = SIG_IRQ, MSIData 0, MSIAddress = the
	 * sync's own slot. */
	assert_int_equal((cmds[0].w[0] >> 12) & 3, 1);
	assert_int_equal(cmds[0].w[0] >> 32, 0);
	assert_int_equal(cmds[0].w[1] & (((1ull << 52) - 1) & ~3ull), cmds[0].pa);
	assert_int_equal(iopt_smmuv3_drv_detach(dom, 1), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_free(&r);

	/* Without range invalidation: one command per page, TG 0; above
	 * inv_all_bytes one TLBI of the ASID. */
	iopt_smmuv3_default_params(&p);
	p.ril = false;
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	c.inv_all_bytes = 16 * 4096;
	rig_probe(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 2, &dom), 0);
	pt = make_pt(&r, IOPT_ARM_64_LPAE_S2, dom);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 2), 0);
	mark = r.ntrace;
	iopt_smmuv3_drv_tlb_ops()->flush_walk(0x300000, 4 * 4096, 4096, dom);
	iopt_smmuv3_drv_tlb_ops()->sync(dom);
	n = find_cmds(&r, mark, OP_TLBI_S2_IPA, cmds, 64);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(F_TG(cmds[i].w[1]), 0);
		assert_int_equal(F_LEAF(cmds[i].w[1]), 0);
		assert_int_equal(F_ADDR(cmds[i].w[1]), 0x300000 + i * 4096);
		assert_int_equal((cmds[i].w[0] >> 32) & 0xffff,
				 iopt_smmuv3_drv_domain_id(dom));
	}
	mark = r.ntrace;
	iopt_smmuv3_drv_tlb_ops()->flush_walk(0x300000, 32 * 4096, 4096, dom);
	iopt_smmuv3_drv_tlb_ops()->sync(dom);
	assert_int_equal(find_cmds(&r, mark, OP_TLBI_S2_IPA, cmds, 64), 0);
	assert_int_equal(find_cmds(&r, mark, OP_TLBI_S12_VMALL, cmds, 64), 1);
	assert_int_equal(iopt_smmuv3_drv_detach(dom, 2), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_free(&r);
}

/* ---- ranges of 2^32 granules and more ----------------------------------- */

/*
 * Invalidate [iova, iova + size) through the driver with RIL and check,
 * by translating through the model, that entries the TLB held for the
 * range's first, middle and last granules are gone. The table has no TLB
 * ops, so its unmaps leave the TLB stale for the range invalidation to
 * clean up. With SCALE 5 bits wide (4.4.1.1) such a range needs a SCALE
 * of 31 or less per command, or the whole ASID/VMID.
 */
static void big_range(unsigned stage, uint32_t granule, uint64_t iova,
		      uint64_t size)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_pgtable *pt;
	struct rig r;
	const uint64_t at[3] = {
		iova, iova + (size / 2 & ~(uint64_t)(granule - 1)),
		iova + size - granule,
	};

	iopt_smmuv3_default_params(&p);
	assert_true(p.ril);
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	rig_probe(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, stage, &dom), 0);
	struct iopt_pgtable_cfg cfg = {
		.fmt = stage == 1 ? IOPT_ARM_64_LPAE_S1 : IOPT_ARM_64_LPAE_S2,
		.granule = granule, .ias = 48, .oas = 48, .coherent_walk = true,
		.mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm,
	};
	assert_int_equal(iopt_pgtable_alloc(&cfg, &pt), 0);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, SID), 0);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t pa = 0x20000000ull + (uint64_t)i * granule;

		assert_int_equal(iopt_pgtable_map_pages(pt, at[i], pa, granule, 1,
							IOPT_READ, NULL), 0);
		assert_int_equal(dev_access(&r, SID, at[i] + 8, false).oa, pa + 8);
	}
	/* Unmapped without invalidation: the TLB still translates. */
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(iopt_pgtable_unmap_pages(pt, at[i], granule, 1, NULL),
				 granule);
		assert_int_equal(dev_access(&r, SID, at[i] + 8, false).fault, 0);
	}
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, iova, size, 0, false), 0);
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	for (unsigned i = 0; i < 3; i++)
		if (dev_access(&r, SID, at[i] + 8, false).fault != EVT_F_TRANSLATION)
			fail_msg("stage %u granule %u range [%#llx, +%#llx): "
				 "%#llx still translates", stage, granule,
				 (unsigned long long)iova, (unsigned long long)size,
				 (unsigned long long)at[i]);
	iopt_smmuv3_drv_get_stats(r.drv, &st);
	assert_int_equal(st.cmd_errors, 0);
	/* Stage 2 addresses are IPAs of at most 52 bits (4.1.6). */
	if (stage == 2) {
		size_t mark = r.ntrace;
		struct tcmd got[4];

		assert_int_equal(iopt_smmuv3_drv_inv_range(dom, (1ull << 52) - 4096,
							   8192, 0, false), -EINVAL);
		assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
		assert_int_equal(find_cmds(&r, mark, OP_TLBI_S2_IPA, got, 4), 0);
	}
	assert_int_equal(iopt_smmuv3_drv_detach(dom, SID), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	iopt_pgtable_free(pt);
	rig_free(&r);
}

static void test_range_2_32_granules(void **state)
{
	(void)state;
	/* 2^32 4K granules (2^44 bytes): a SCALE of 32 in one command. */
	big_range(1, 4096, 0, 1ull << 44);
	big_range(2, 4096, 0, 1ull << 44);
	/* An odd count above 2^32: small steps, then the top in one. */
	big_range(1, 4096, 0x1000, ((1ull << 32) + 5) << 12);
	/* 2^33 granules, stage 2. */
	big_range(2, 4096, 0, 1ull << 45);
	/* A full 48-bit stage 1 with 64K pages: 2^32 granules. */
	big_range(1, 65536, 0, 1ull << 48);
	/* A full 48-bit stage 1 with 4K pages: 2^36 granules. */
	big_range(1, 4096, 0, 1ull << 48);
}

/* ---- errors ------------------------------------------------------------ */

static void test_bad_arguments(void **state)
{
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv *drv;
	struct iopt_smmuv3_drv_domain *dom, *dom2;
	struct iopt_pgtable *pt, *pt2;
	struct iopt_smmuv3_cmd cmd = { .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ALL };
	struct iopt_smmuv3_cmd many[65];
	struct rig r;

	(void)state;
	rig_model(&r, NULL);
	rig_cfg(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_probe(NULL, &drv), -EINVAL);
	c.smmu = NULL;
	assert_int_equal(iopt_smmuv3_drv_probe(&c, &drv), -EINVAL);
	rig_cfg(&r, &c);
	c.cmdq_log2 = 20;		/* above IDR1.CMDQS */
	assert_int_equal(iopt_smmuv3_drv_probe(&c, &drv), -EINVAL);
	rig_cfg(&r, &c);
	c.cmdq = 7;
	assert_int_equal(iopt_smmuv3_drv_probe(&c, &drv), -EINVAL);
	assert_int_equal(iopt_physmem_used(r.pm), 0);	/* nothing leaked */
	rig_cfg(&r, &c);
	/* The failed probes read ID registers at cycles up to 40 or so; the
	 * model never goes back in time. */
	c.start_cycle = 1000;
	rig_probe(&r, &c);

	assert_int_equal(iopt_smmuv3_drv_submit(r.drv, &cmd, 0, true), -EINVAL);
	for (int i = 0; i < 65; i++)
		many[i] = cmd;
	assert_int_equal(iopt_smmuv3_drv_submit(r.drv, many, 65, true), -EINVAL);
	cmd.opcode = 0x7f;
	assert_int_equal(iopt_smmuv3_drv_submit(r.drv, &cmd, 1, true), -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_submit(r.drv, many, 64, true), 0);

	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 3, &dom), -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 1, &dom), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 1, &dom2), 0);
	assert_int_not_equal(iopt_smmuv3_drv_domain_id(dom),
			     iopt_smmuv3_drv_domain_id(dom2));
	pt = make_pt(&r, IOPT_ARM_64_LPAE_S1, dom);
	pt2 = make_pt(&r, IOPT_ARM_64_LPAE_S2, dom2);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 1u << 16), -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_attach(dom2, pt2, 5), -EINVAL); /* S2 table, S1 domain */
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 5), 0);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 5), -EBUSY);
	assert_int_equal(iopt_smmuv3_drv_attach(dom, pt2, 6), -EINVAL); /* other table */
	assert_int_equal(iopt_smmuv3_drv_detach(dom2, 5), -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), -EBUSY);
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, 0x1000, 0, 0, true), -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_inv_range(dom, ~0ull - 0xfff, 0x2000, 0, true),
			 -EINVAL);
	assert_int_equal(iopt_smmuv3_drv_detach(dom, 5), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
	assert_int_equal(iopt_smmuv3_drv_domain_free(dom2), 0);
	iopt_pgtable_free(pt);
	iopt_pgtable_free(pt2);
	rig_free(&r);
}

static void test_sync_timeout_cmdq_off(void **state)
{
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_stats st;
	struct rig r;

	(void)state;
	for (int sy = 0; sy < 2; sy++) {
		for (int ext = 0; ext < 2; ext++) {
			rig_model(&r, NULL);
			rig_cfg(&r, &c);
			c.sync = sy;
			c.host_timeout_ns = 50000000;	/* 50 ms */
			if (ext) {
				/* A running clock: the limit is model time. */
				c.clock = t_clock;
				c.clock_ctx = &r;
				c.sync_timeout_cycles = 200000;
				c.host_timeout_ns = 60000000000ull;
				r.clock_runs = true;
			}
			rig_probe(&r, &c);
			/* Turn the command queue off behind the driver's back. */
			assert_int_equal(iopt_smmuv3_mmio_write(r.s, A_CR0, 4,
								A_CR0_SMMUEN | A_CR0_EVENTQEN,
								iopt_smmuv3_drv_cycle(r.drv)), 0);
			uint64_t t0 = iopt_smmuv3_drv_cycle(r.drv);

			assert_int_equal(iopt_smmuv3_drv_sync(r.drv), -ETIMEDOUT);
			/* Not before the limit. */
			if (ext)
				assert_true(iopt_smmuv3_drv_cycle(r.drv) - t0 >= 200000);
			iopt_smmuv3_drv_get_stats(r.drv, &st);
			assert_int_equal(st.sync_timeouts, 1);
			/* Back on: the queue goes on, later syncs complete. */
			assert_int_equal(iopt_smmuv3_mmio_write(r.s, A_CR0, 4,
								A_CR0_SMMUEN | A_CR0_EVENTQEN |
								A_CR0_CMDQEN,
								iopt_smmuv3_drv_cycle(r.drv)), 0);
			assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
			rig_free(&r);
		}
	}
}

static void test_sync_timeout_stopped_clock(void **state)
{
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_smmuv3_drv *drv;
	struct rig r;

	(void)state;
	rig_model(&r, NULL);
	rig_cfg(&r, &c);
	c.clock = t_clock;
	c.clock_ctx = &r;
	c.host_timeout_ns = 20000000;	/* 20 ms */
	/* The clock never moves: probe's first CMD_SYNC never completes,
	 * and probe says so rather than hanging, leaving nothing behind. */
	r.clock_runs = false;
	assert_int_equal(iopt_smmuv3_drv_probe(&c, &drv), -ETIMEDOUT);
	assert_int_equal(iopt_physmem_used(r.pm), 0);
	/* A clock that runs through probe, then stops. */
	r.clock_runs = true;
	rig_probe(&r, &c);
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	r.clock_runs = false;
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), -ETIMEDOUT);
	iopt_smmuv3_drv_get_stats(r.drv, &st);
	assert_int_equal(st.sync_timeouts, 1);
	r.clock_runs = true;
	assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
	rig_free(&r);
}

struct locked_arg {
	struct iopt_smmuv3_drv *drv;
	int ret;
	int done;		/* atomic: the call returned */
};

static void *locked_sync_thread(void *p)
{
	struct locked_arg *a = p;

	a->ret = iopt_smmuv3_drv_sync(a->drv);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *locked_cmd_thread(void *p)
{
	struct locked_arg *a = p;
	struct iopt_smmuv3_cmd cmd = { .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL };

	a->ret = iopt_smmuv3_drv_submit(a->drv, &cmd, 1, false);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The locked queue is Linux 5.3's: each command goes in on its own (three
 * TLBIs and a sync are four insertions: batches == commands), and a
 * CMD_SYNC awaited by polling CONS is awaited under the queue lock
 * (queue_poll_cons inside cmdq.lock), one awaited by MSI outside it. A
 * sync that cannot complete (the clock stopped) is waited for by thread
 * A; thread B then submits one command. CONS: B gets in only after A has
 * given up; MSI: B gets in while A still waits.
 */
static void test_locked_queue_is_5_3(void **state)
{
	(void)state;
	for (int sy = 0; sy < 2; sy++) {
		struct iopt_smmuv3_drv_cfg c;
		struct iopt_smmuv3_drv_stats st0, st;
		struct locked_arg a = { 0 }, b = { 0 };
		pthread_t ta, tb;
		struct rig r;

		rig_model(&r, NULL);
		rig_cfg(&r, &c);
		c.cmdq = IOPT_SMMUV3_DRV_CMDQ_LOCKED;
		c.sync = sy ? IOPT_SMMUV3_DRV_SYNC_MSI : IOPT_SMMUV3_DRV_SYNC_CONS;
		c.clock = t_clock;
		c.clock_ctx = &r;
		/* CONS: B waits this long; MSI: B must finish within it. */
		c.host_timeout_ns = sy ? 2000000000ull : 200000000ull;
		r.clock_runs = true;
		rig_probe(&r, &c);

		struct iopt_smmuv3_cmd cmds[3] = {
			{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
			{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
			{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
		};

		iopt_smmuv3_drv_get_stats(r.drv, &st0);
		assert_int_equal(iopt_smmuv3_drv_submit(r.drv, cmds, 3, true), 0);
		iopt_smmuv3_drv_get_stats(r.drv, &st);
		assert_int_equal(st.commands - st0.commands, 4);
		assert_int_equal(st.batches - st0.batches, 4);
		assert_int_equal(st.syncs - st0.syncs, 1);

		/* The clock stops: A's sync cannot complete. */
		r.clock_runs = false;
		a.drv = b.drv = r.drv;
		st0 = st;
		assert_int_equal(pthread_create(&ta, NULL, locked_sync_thread, &a), 0);
		/* A has inserted its sync and waits (syncs counts it just
		 * before the wait). */
		do {
			sched_yield();
			iopt_smmuv3_drv_get_stats(r.drv, &st);
		} while (st.syncs == st0.syncs);
		assert_int_equal(pthread_create(&tb, NULL, locked_cmd_thread, &b), 0);
		assert_int_equal(pthread_join(tb, NULL), 0);
		assert_int_equal(b.ret, 0);
		/* When B got in: after A returned (CONS), before (MSI). */
		assert_int_equal(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE), sy ? 0 : 1);
		assert_int_equal(pthread_join(ta, NULL), 0);
		assert_int_equal(a.ret, -ETIMEDOUT);
		r.clock_runs = true;
		assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
		rig_free(&r);
	}
}

static uint64_t runner_clock(void *ctx)
{
	return iopt_smmuv3_runner_now(ctx);
}

/* The free-running runner drives the model; the driver reads its clock
 * and waits in host time. */
static void test_runner_clock(void **state)
{
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_domain *dom;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_smmuv3_runner *run;
	struct iopt_pgtable *pt;
	struct rig r;

	(void)state;
	for (int sy = 0; sy < 2; sy++) {
		rig_model(&r, NULL);
		assert_int_equal(iopt_smmuv3_runner_start(r.s, 1.0, &run), 0);
		rig_cfg(&r, &c);
		c.sync = sy;
		c.clock = runner_clock;
		c.clock_ctx = run;
		rig_probe(&r, &c);
		assert_int_equal(iopt_smmuv3_drv_domain_alloc(r.drv, 1, &dom), 0);
		pt = make_pt(&r, IOPT_ARM_64_LPAE_S1, dom);
		assert_int_equal(iopt_smmuv3_drv_attach(dom, pt, 7), 0);
		assert_int_equal(iopt_pgtable_map_pages(pt, IOVA, PA, 4096, 1, IOPT_READ, NULL), 0);
		assert_int_equal(dev_access(&r, 7, IOVA + 8, false).oa, PA + 8);
		assert_int_equal(iopt_pgtable_unmap_pages(pt, IOVA, 4096, 1, NULL), 4096);
		iopt_pgtable_tlb_sync(pt);
		assert_int_equal(dev_access(&r, 7, IOVA + 8, false).fault,
				 EVT_F_TRANSLATION);
		assert_int_equal(iopt_smmuv3_drv_detach(dom, 7), 0);
		assert_int_equal(iopt_smmuv3_drv_domain_free(dom), 0);
		iopt_smmuv3_drv_get_stats(r.drv, &st);
		assert_int_equal(st.sync_timeouts, 0);
		iopt_pgtable_free(pt);
		iopt_smmuv3_drv_remove(r.drv);
		r.drv = NULL;
		iopt_smmuv3_runner_stop(run);
		rig_free(&r);
	}
}

static void test_illegal_command_recovered(void **state)
{
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_drv_stats st;
	struct iopt_smmuv3_stats ms;
	struct tcmd cmds[8];
	struct rig r;

	(void)state;
	for (int cq = 0; cq < 2; cq++) {
		rig_model(&r, NULL);
		rig_cfg(&r, &c);
		c.cmdq = cq;
		rig_probe(&r, &c);
		/* CMD_SYNC with CS = 0b11 is CERROR_ILL (4.7.3); the TLBI
		 * after it must still run once the driver has recovered. */
		struct iopt_smmuv3_cmd bad[2] = {
			{ .opcode = IOPT_SMMUV3_CMD_SYNC, .cs = 3 },
			{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID, .asid = 77 },
		};
		size_t mark = r.ntrace;

		assert_int_equal(iopt_smmuv3_drv_submit(r.drv, bad, 2, true), 0);
		iopt_smmuv3_drv_get_stats(r.drv, &st);
		assert_int_equal(st.cmd_errors, 1);
		iopt_smmuv3_get_stats(r.s, &ms);
		assert_int_equal(ms.cmd_errors, 1);
		/* GERROR.CMDQ_ERR acknowledged: GERRORN == GERROR (7.5). */
		assert_int_equal(model_reg(&r, A_GERROR, 4) & 1,
				 model_reg(&r, A_GERRORN, 4) & 1);
		assert_int_equal(find_cmds(&r, mark, OP_TLBI_NH_ASID, cmds, 8), 1);
		assert_int_equal(F_ASID(cmds[0].w[0]), 77);
		/* The queue goes on. */
		assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
		rig_free(&r);
	}
}

/* ---- the WFE-like wait ------------------------------------------------ */

static uint64_t now_ns(void)
{
	return plat_clock_ns();
}

struct sev_arg {
	struct drv_event *ev;
	uint64_t delay_ns;
};

static void *sev_later(void *p)
{
	struct sev_arg *a = p;
	uint64_t end = now_ns() + a->delay_ns;

	while (now_ns() < end)
		;
	drv_event_signal(a->ev);
	return NULL;
}

static void test_event_wait(void **state)
{
	struct drv_event ev;
	struct sev_arg a = { &ev, 2000000 };	/* 2 ms */
	pthread_t t;

	(void)state;
	drv_event_init(&ev);
	/* No signal: times out, and not early. */
	uint64_t tok = drv_event_seq(&ev), t0 = now_ns();

	assert_int_equal(drv_event_wait(&ev, tok, 3000000), -ETIMEDOUT);
	assert_true(now_ns() - t0 >= 3000000);
	/* A signal after the token, before the wait: returns at once. */
	drv_event_signal(&ev);
	assert_int_equal(drv_event_wait(&ev, tok, 60000000000ull), 0);
	/* A signal from another thread ends a wait long before its limit. */
	tok = drv_event_seq(&ev);
	assert_int_equal(pthread_create(&t, NULL, sev_later, &a), 0);
	t0 = now_ns();
	assert_int_equal(drv_event_wait(&ev, tok, 60000000000ull), 0);
	assert_true(now_ns() - t0 < 30000000000ull);
	assert_int_equal(drv_event_seq(&ev), tok + 1);
	pthread_join(t, NULL);
}

#define WFE_THREADS	4
#define WFE_SYNCS	300

struct wfe_arg {
	struct iopt_smmuv3_drv *drv;
	int fails;
};

static void *wfe_syncer(void *p)
{
	struct wfe_arg *a = p;

	for (int i = 0; i < WFE_SYNCS; i++)
		if (iopt_smmuv3_drv_sync(a->drv))
			a->fails++;
	return NULL;
}

/* IHI0070 4.7.3 CMD_SYNC: CS [13:12] (0 SIG_NONE, 1 SIG_IRQ, 2 SIG_SEV). */
static unsigned last_sync_cs(struct rig *r)
{
	for (size_t i = r->ntrace; i--;)
		if ((r->trace[i].w[0] & 0xff) == OP_CMD_SYNC)
			return (unsigned)(r->trace[i].w[0] >> 12 & 3);
	fail();
	return ~0u;
}

static void test_sync_cons_wfe(void **state)
{
	(void)state;
	for (int sev = 0; sev < 2; sev++) {
		struct iopt_smmuv3_params p;
		struct iopt_smmuv3_drv_cfg c;
		struct iopt_smmuv3_drv_stats st;
		struct wfe_arg a[WFE_THREADS];
		pthread_t t[WFE_THREADS];
		struct rig r;

		iopt_smmuv3_default_params(&p);
		p.sev = sev;
		rig_model(&r, &p);
		rig_cfg(&r, &c);
		c.sync = IOPT_SMMUV3_DRV_SYNC_CONS;
		c.cmdq_log2 = 4;	/* small: waiters wrap the queue */
		rig_probe(&r, &c);
		assert_int_equal(iopt_smmuv3_drv_sync(r.drv), 0);
		assert_int_equal(last_sync_cs(&r), sev ? 2 : 0);
		for (int i = 0; i < WFE_THREADS; i++) {
			a[i] = (struct wfe_arg){ r.drv, 0 };
			assert_int_equal(pthread_create(&t[i], NULL, wfe_syncer, &a[i]), 0);
		}
		for (int i = 0; i < WFE_THREADS; i++) {
			pthread_join(t[i], NULL);
			assert_int_equal(a[i].fails, 0);
		}
		iopt_smmuv3_drv_get_stats(r.drv, &st);
		assert_int_equal(st.sync_timeouts, 0);
		if (sev) {
			/* Every sync needed model time after its PROD write:
			 * a poller saw CONS move and signalled. */
			assert_true(st.sev_signals > 0);
		} else {
			assert_int_equal(st.sev_signals, 0);
			assert_int_equal(st.wfe_waits, 0);
		}
		rig_free(&r);
	}
}

/*
 * The driver adds no lock of its own around model calls with an external
 * clock (src/driver/drv_timeline.h): the model's lock orders them, as the
 * device orders the register accesses that reach it. Thread A's device
 * transaction is held inside the clock callback (a point every model call
 * passes, before the model) until thread B's transaction has got through
 * the driver and the model and returned. A driver that held one lock
 * across the clock read and the model call would keep B out: A's hold
 * then ends at its 5 s limit with B not through.
 */
struct hold_clock {
	struct hold_clock_gate g;	/* first: the clock's ctx */
	struct iopt_smmuv3_drv *drv;
};

static void *hold_other(void *arg)
{
	struct hold_clock *h = arg;
	struct iopt_smmuv3_txn t = { .sid = 7, .addr = IOVA };
	struct iopt_smmuv3_resp resp;

	hold_clock_wait_held(&h->g);
	if (iopt_smmuv3_drv_translate(h->drv, &t, &resp) == 0)
		hold_clock_b_done(&h->g);
	return NULL;
}

static void test_clock_no_driver_lock(void **state)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_drv_cfg c;
	struct iopt_smmuv3_txn t = { .sid = 7, .addr = IOVA };
	struct iopt_smmuv3_resp resp;
	struct hold_clock h = { 0 };
	pthread_t b;
	struct rig r;

	(void)state;
	iopt_smmuv3_default_params(&p);
	p.shared_clock = true;		/* the contract for an external clock */
	rig_model(&r, &p);
	rig_cfg(&r, &c);
	c.clock = hold_clock_read;
	c.clock_ctx = &h;
	rig_probe(&r, &c);
	h.drv = r.drv;
	assert_int_equal(pthread_create(&b, NULL, hold_other, &h), 0);
	__atomic_store_n(&h.g.armed, 1, __ATOMIC_RELEASE);
	assert_int_equal(iopt_smmuv3_drv_translate(r.drv, &t, &resp), 0);
	pthread_join(b, NULL);
	assert_int_equal(h.g.b_done, 1);
	assert_int_equal(h.g.b_done_in_hold, 1);
	rig_free(&r);
}

/* ---- event queue: records written while a drain runs ------------------- */

#define DRAIN_IOVA	0x50000000ull	/* not mapped: each access faults */

struct drain {
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_drv_domain *dom;
	uint64_t addr[64];	/* delivered records' input addresses */
	unsigned nev;
	unsigned inject;	/* faults still to raise from the callback */
	unsigned next;		/* page of the next injected fault */
	int in_cb, go;		/* two-poller test: the drainer's rendezvous */
	bool block;
};

/* The event callback: note the record; raise another fault (a device
 * access from the handler) while inject lasts; in the two-poller test,
 * wait in the first delivery until the main thread says go. */
static void drain_event(void *ctx, const struct iopt_smmuv3_drv_event *ev)
{
	struct drain *d = ctx;
	struct iopt_smmuv3_txn t = { .sid = SID };
	struct iopt_smmuv3_resp resp;

	assert_int_equal(ev->type, EVT_F_TRANSLATION);
	if (d->nev < 64)
		d->addr[d->nev++] = ev->addr;
	if (d->inject) {
		d->inject--;
		t.addr = DRAIN_IOVA + 4096ull * d->next++;
		assert_int_equal(iopt_smmuv3_drv_translate(d->r.drv, &t, &resp), 0);
		assert_int_equal(resp.fault, EVT_F_TRANSLATION);
	}
	if (d->block && d->nev == 1) {
		__atomic_store_n(&d->in_cb, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&d->go, __ATOMIC_ACQUIRE))
			sched_yield();
	}
}

static void drain_setup(struct drain *d)
{
	struct iopt_smmuv3_drv_cfg c;

	memset(d, 0, sizeof(*d));
	rig_model(&d->r, NULL);
	rig_cfg(&d->r, &c);
	c.event = drain_event;
	c.event_ctx = d;
	rig_probe(&d->r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(d->r.drv, 1, &d->dom), 0);
	d->pt = make_pt(&d->r, IOPT_ARM_64_LPAE_S1, d->dom);
	assert_int_equal(iopt_smmuv3_drv_attach(d->dom, d->pt, SID), 0);
}

/* One fault from the device, on page next. */
static void drain_fault(struct drain *d)
{
	assert_int_equal(dev_access(&d->r, SID, DRAIN_IOVA + 4096ull * d->next++,
				    false).fault, EVT_F_TRANSLATION);
}

/* Every fault delivered, in order, and the queue empty (PROD = CONS). */
static void drain_check(struct drain *d, unsigned n)
{
	struct iopt_smmuv3_drv_stats st;

	assert_int_equal(d->nev, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(d->addr[i], DRAIN_IOVA + 4096ull * i);
	assert_int_equal(model_reg(&d->r, A_EVENTQ_PROD, 4) & 0xfffff,
			 model_reg(&d->r, A_EVENTQ_CONS, 4) & 0xfffff);
	iopt_smmuv3_drv_get_stats(d->r.drv, &st);
	assert_int_equal(st.events, n);
}

static void drain_free(struct drain *d)
{
	assert_int_equal(iopt_smmuv3_drv_detach(d->dom, SID), 0);
	iopt_pgtable_free(d->pt);
	iopt_smmuv3_drv_domain_free(d->dom);
	rig_free(&d->r);
}

/*
 * Faults raised from the event handler while the drain delivers earlier
 * ones raise no interrupt (the queue never went empty, IHI0070 3.18.2):
 * the one poll the first fault prompted must deliver them all, and leave
 * the queue empty, so that the next fault interrupts again.
 */
static void test_event_during_drain(void **state)
{
	struct drain d;

	(void)state;
	drain_setup(&d);
	d.inject = 5;
	drain_fault(&d);
	assert_int_equal(iopt_smmuv3_drv_poll(d.r.drv), 6);
	drain_check(&d, 6);
	drain_fault(&d);
	assert_int_equal(iopt_smmuv3_drv_poll(d.r.drv), 1);
	drain_check(&d, 7);
	drain_free(&d);
}

static void *drain_poller(void *p)
{
	struct drain *d = p;

	return (void *)(intptr_t)iopt_smmuv3_drv_poll(d->r.drv);
}

/*
 * Two pollers: while one drains (held in its first delivery) a fault is
 * recorded and a second poll, finding the drain busy, returns 0 at once.
 * No second wake-up is needed: the drain in progress delivers that
 * record too before it returns.
 */
static void test_poll_while_draining(void **state)
{
	struct drain d;
	pthread_t t;
	void *ret;

	(void)state;
	drain_setup(&d);
	d.block = true;
	drain_fault(&d);
	assert_int_equal(pthread_create(&t, NULL, drain_poller, &d), 0);
	while (!__atomic_load_n(&d.in_cb, __ATOMIC_ACQUIRE))
		sched_yield();
	drain_fault(&d);
	assert_int_equal(iopt_smmuv3_drv_poll(d.r.drv), 0);
	__atomic_store_n(&d.go, 1, __ATOMIC_RELEASE);
	pthread_join(t, &ret);
	assert_int_equal((intptr_t)ret, 2);
	drain_check(&d, 2);
	drain_free(&d);
}

/*
 * SSV and SubstreamID decoded as each type defines them: C_BAD_SUBSTREAMID
 * (a SubstreamID on a stream without substreams) carries a SubstreamID
 * that is always valid and has no SSV bit (7.3.9); F_TRANSLATION carries
 * SSV, 0 here, and then no SubstreamID.
 */
static void test_event_substream_fields(void **state)
{
	struct drain d;
	struct iopt_smmuv3_txn t = { .sid = SID, .ssv = true, .ssid = 3,
				   .addr = DRAIN_IOVA };
	struct iopt_smmuv3_resp resp;
	struct iopt_smmuv3_drv_cfg c;

	(void)state;
	memset(&d, 0, sizeof(d));
	rig_model(&d.r, NULL);
	rig_cfg(&d.r, &c);
	rig_probe(&d.r, &c);
	assert_int_equal(iopt_smmuv3_drv_domain_alloc(d.r.drv, 1, &d.dom), 0);
	d.pt = make_pt(&d.r, IOPT_ARM_64_LPAE_S1, d.dom);
	assert_int_equal(iopt_smmuv3_drv_attach(d.dom, d.pt, SID), 0);
	assert_int_equal(iopt_smmuv3_drv_translate(d.r.drv, &t, &resp), 0);
	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	t.ssv = false;
	t.ssid = 0x55;		/* not presented: no SubstreamID recorded */
	assert_int_equal(iopt_smmuv3_drv_translate(d.r.drv, &t, &resp), 0);
	assert_int_equal(resp.fault, EVT_F_TRANSLATION);
	d.r.nev = 0;
	assert_int_equal(iopt_smmuv3_drv_poll(d.r.drv), 2);
	assert_int_equal(d.r.ev[0].type, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	assert_true(d.r.ev[0].ssv);
	assert_int_equal(d.r.ev[0].ssid, 3);
	assert_int_equal(d.r.ev[0].raw[0] >> 11 & 1, 0);	/* no SSV bit */
	assert_int_equal(d.r.ev[1].type, EVT_F_TRANSLATION);
	assert_false(d.r.ev[1].ssv);
	assert_int_equal(d.r.ev[1].ssid, 0);
	drain_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_linear),
		cmocka_unit_test(test_probe_2lvl),
		cmocka_unit_test(test_translate_matrix),
		cmocka_unit_test(test_tlbi_encoding),
		cmocka_unit_test(test_range_2_32_granules),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_sync_timeout_cmdq_off),
		cmocka_unit_test(test_sync_timeout_stopped_clock),
		cmocka_unit_test(test_locked_queue_is_5_3),
		cmocka_unit_test(test_illegal_command_recovered),
		cmocka_unit_test(test_runner_clock),
		cmocka_unit_test(test_event_wait),
		cmocka_unit_test(test_sync_cons_wfe),
		cmocka_unit_test(test_clock_no_driver_lock),
		cmocka_unit_test(test_event_during_drain),
		cmocka_unit_test(test_poll_while_draining),
		cmocka_unit_test(test_event_substream_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
