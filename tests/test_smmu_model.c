/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 model at register level, driven as a driver would: stream
 * table, command and event queues in simulated physical memory, STEs and
 * CDs built with the encoders, page tables made by the library.
 *  - registers: ID values, CR0/CR0ACK, GBPA, RAZ/WI, base registers
 *    locked while enabled;
 *  - integration: random mappings translated through STE/CD and compared
 *    with iova_to_phys and the permissions; stale TLB entries until
 *    TLBI + CMD_SYNC, then F_TRANSLATION with the architected record;
 *  - commands: CERROR_ILL stops the queue until acknowledged; CMD_SYNC
 *    completes after earlier commands, writing its MSI at its cycle;
 *  - events: C_BAD_STREAMID, C_BAD_STE, abort without event, bypass,
 *    C_BAD_SUBSTREAMID, queue overflow;
 *  - stage 2 and two-level stream tables; determinism of cycles;
 *  - walk caches: descriptor fetches per walk, kept by Leaf=1 TLBI,
 *    removed by Leaf=0 and by-ASID TLBI.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

#include "tutil.h"

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)	/* 256 STEs */
#define CMDQ	(MEM_BASE + 0x010000)	/* 256 commands */
#define EVTQ	(MEM_BASE + 0x020000)	/* 64 events */
#define CDTAB	(MEM_BASE + 0x030000)
#define MSI	(MEM_BASE + 0x040000)
#define L2STE	(MEM_BASE + 0x050000)

struct rig {
	struct iopt_testbed *tb;
	struct iopt_physmem *pm;
	struct iopt_smmuv3 *s;
	uint64_t cycle;
	uint32_t prod;
	unsigned irqs[3];
};

static void on_irq(void *ctx, unsigned line, uint64_t cycle)
{
	struct rig *r = ctx;

	(void)cycle;
	r->irqs[line]++;
}

static uint64_t rd(struct rig *r, uint64_t off)
{
	uint64_t v;

	assert_int_equal(iopt_smmuv3_mmio_read(r->s, off, off == 0x80 || off == 0x90 ||
					       off == 0xa0 ? 8 : 4, &v, r->cycle), 0);
	return v;
}

static void wr(struct rig *r, uint64_t off, uint64_t v)
{
	assert_int_equal(iopt_smmuv3_mmio_write(r->s, off, off == 0x80 || off == 0x90 ||
						off == 0xa0 ? 8 : 4, v, r->cycle), 0);
}

static void setup_rig(struct rig *r, const struct iopt_smmuv3_params *p)
{
	struct iopt_testbed_cfg c;
	uint64_t pa;

	memset(r, 0, sizeof(*r));
	/* Memory and the model alone, its interrupts counted here. */
	tu_model_cfg(&c, IOPT_TESTBED_SMMUV3, MEM_BASE, 64u << 20);
	if (p)
		c.v3 = *p;
	c.irq = on_irq;
	c.irq_ctx = r;
	r->tb = tu_testbed(&c);
	r->pm = iopt_testbed_physmem(r->tb);
	r->s = iopt_testbed_smmuv3(r->tb);
	/* Reserve the fixed structures, then let page tables allocate. */
	assert_int_equal(iopt_physmem_alloc(r->pm, 1u << 20, &pa), 0);
	assert_int_equal(pa, MEM_BASE);
	/* 256 STEs, 256 commands, 64 events; CR2: RECINVSID, PTM; every
	 * interrupt; SMMUEN, EVENTQEN, CMDQEN. */
	tu_smmuv3_bringup(r->s, &(struct tu_v3_bringup){
		.strtab = STRTAB, .sid_bits = 8, .cmdq = CMDQ, .cmdq_log2 = 8,
		.evtq = EVTQ, .evtq_log2 = 6, .cr2 = 0x6, .irq_ctrl = 0x7,
		.cr0 = 0x1 | 0x4 | 0x8 }, r->cycle);
}

static void teardown_rig(struct rig *r)
{
	iopt_testbed_destroy(r->tb);
}

static void put_ste(struct rig *r, uint32_t sid, const struct iopt_smmuv3_ste *ste,
		    uint64_t base)
{
	uint64_t w[8];

	iopt_smmuv3_ste_encode(ste, w);
	memcpy(iopt_physmem_ptr(r->pm, base + sid * 64ull, 64), w, 64);
}

static void put_cd(struct rig *r, uint64_t pa, const struct iopt_smmuv3_cd *cd)
{
	uint64_t w[8];

	iopt_smmuv3_cd_encode(cd, w);
	memcpy(iopt_physmem_ptr(r->pm, pa, 64), w, 64);
}

/* Queue commands and run the model until they have all completed. */
static void cmds(struct rig *r, const struct iopt_smmuv3_cmd *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t w[2];

		assert_int_equal(iopt_smmuv3_cmd_encode(&c[i], w), 0);
		memcpy(iopt_physmem_ptr(r->pm, CMDQ + (r->prod & 255) * 16ull, 16), w,
		       16);
		r->prod = (r->prod + 1) & 511;
	}
	wr(r, 0x98, r->prod);
	uint64_t next;

	while ((next = iopt_smmuv3_next_event(r->s)) != UINT64_MAX) {
		r->cycle = next;
		iopt_smmuv3_run_until(r->s, r->cycle);
	}
}

/* Queue one command with an unknown opcode as the first entry; run to it. */
static void queue_illegal(struct rig *r)
{
	uint64_t bad[2] = { 0x7f, 0 };

	memcpy(iopt_physmem_ptr(r->pm, CMDQ, 16), bad, 16);
	r->prod = 1;
	wr(r, 0x98, 1);
	r->cycle = iopt_smmuv3_next_event(r->s);
	iopt_smmuv3_run_until(r->s, r->cycle);
}

/* Index of the next event record the model will write. */
static unsigned evt_next(struct rig *r)
{
	return (unsigned)(rd(r, 0x100a8) & 63);
}

static uint64_t evt_word(struct rig *r, unsigned idx, unsigned word)
{
	return ((uint64_t *)iopt_physmem_ptr(r->pm, EVTQ + (idx & 63) * 32ull, 32))[word];
}

static struct iopt_smmuv3_resp xlate(struct rig *r, uint32_t sid, uint64_t addr,
				     bool write)
{
	struct iopt_smmuv3_txn t = { .sid = sid, .addr = addr, .write = write,
				   .priv = true };
	struct iopt_smmuv3_resp resp;

	assert_int_equal(iopt_smmuv3_translate(r->s, &t, r->cycle, &resp), 0);
	r->cycle = resp.ready + 1;
	return resp;
}

/* A 48-bit, 4K-granule stage 1 table in the rig's memory, and its CD. */
static struct iopt_pgtable *s1_table(struct rig *r, uint16_t asid,
				     struct iopt_smmuv3_cd *cd)
{
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv3_cd_from_pgtable(pt, asid, cd), 0);
	return pt;
}

static void test_registers(void **state)
{
	struct rig r;
	uint64_t v;

	(void)state;
	setup_rig(&r, NULL);
	v = rd(&r, 0x0);				/* IDR0 */
	assert_int_equal(v & 3, 3);			/* S1P, S2P */
	assert_int_equal(v >> 19 & 1, 1);		/* CD2L: 2-level CD tables */
	assert_int_equal(v >> 21 & 3, 2);		/* TTENDIAN: little-endian */
	assert_int_equal(v >> 24 & 3, 1);		/* STALL_MODEL: no stall */
	assert_int_equal(v >> 26 & 1, 1);		/* TERM_MODEL */
	assert_int_equal(v >> 27 & 3, 1);		/* ST_LEVEL: 2-level */
	assert_int_equal(v >> 2 & 3, 2);		/* TTF: AArch64 */
	assert_int_equal(v >> 6 & 3, 2);		/* HTTU: AF + dirty */
	assert_int_equal(v >> 13 & 1, 1);		/* MSI */
	/* The whole word (6.3.1): S2P, S1P, TTF 0b10, COHACC, HTTU 0b10,
	 * ASID16, MSI, SEV, VMID16, CD2L, TTENDIAN 0b10, STALL_MODEL 0b01,
	 * TERM_MODEL, ST_LEVEL 0b01; nothing else (no ATS, RES0 bits 0). */
	assert_int_equal(v, 0x1 | 0x2 | 0x2 << 2 | 0x10 | 0x2 << 6 | 0x1000 |
			 0x2000 | 0x4000 | 0x40000 | 0x80000 | 0x2 << 21 |
			 0x1 << 24 | 0x4000000 | 0x1 << 27);
	v = rd(&r, 0x4);				/* IDR1 */
	assert_int_equal(v & 63, 16);			/* SIDSIZE */
	assert_int_equal(v >> 6 & 31, 10);		/* SSIDSIZE */
	assert_int_equal(v >> 21 & 31, 19);		/* CMDQS */
	v = rd(&r, 0x14);				/* IDR5 */
	assert_int_equal(v & 7, 5);			/* OAS 48 */
	assert_int_equal(v >> 4 & 7, 7);		/* 4K, 16K, 64K */
	assert_int_equal(rd(&r, 0xc) >> 10 & 1, 1);	/* IDR3.RIL */
	/* Base registers are locked while their unit is enabled. */
	wr(&r, 0x80, MEM_BASE + 0x100000);
	assert_int_equal(rd(&r, 0x80), STRTAB);
	/* Control registers read back what was written, within the fields
	 * this SMMU has (6.3.17: GERROR_IRQEN [0], EVENTQ_IRQEN [2]; PRIQ
	 * [1] is RES0 without PRI); IRQ_CTRLACK follows IRQ_CTRL. */
	wr(&r, 0x50, 0xff);
	assert_int_equal(rd(&r, 0x50), 0x5);
	assert_int_equal(rd(&r, 0x54), 0x5);
	/* 6.3.12: CR2 is read-only while SMMUEN = 1. */
	wr(&r, 0x2c, 0x0);
	assert_int_equal(rd(&r, 0x2c), 0x2);
	/* 6.3.21: *_IRQ_CFGn are IGNORED while their IRQEN is set. */
	wr(&r, 0x70, 0x12345678);			/* GERROR_IRQ_CFG1 */
	assert_int_equal(rd(&r, 0x70), 0);
	wr(&r, 0x50, 0);
	wr(&r, 0x70, 0x12345678);
	assert_int_equal(rd(&r, 0x70), 0x12345678);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xb0, 8, 0x8000000003ull, r.cycle), 0);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0xb0, 8, &v, r.cycle), 0);
	assert_int_equal(v, 0x8000000000ull);		/* ADDR [51:2] */
	/* Queue pointers owned by the SMMU ignore writes while enabled. */
	wr(&r, 0x9c, 5);				/* CMDQ_CONS */
	assert_int_equal(rd(&r, 0x9c), 0);
	wr(&r, 0x100a8, 5);				/* EVENTQ_PROD */
	assert_int_equal(rd(&r, 0x100a8), 0);
	/* RAZ/WI and bad sizes. */
	wr(&r, 0xfe0, 0x1234);
	assert_int_equal(rd(&r, 0xfe0), 0);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x2, 4, &v, r.cycle), -EINVAL);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x20, 2, 0, r.cycle), -EINVAL);
	/* Disabled: GBPA aborts by default, bypasses when cleared. */
	wr(&r, 0x20, 0);
	assert_int_equal(xlate(&r, 0, 0x1234, false).fault, IOPT_SMMUV3_EVT_ABORT);
	wr(&r, 0x44, 1u << 31);				/* UPDATE, ABORT=0 */
	struct iopt_smmuv3_resp resp = xlate(&r, 0, 0x1234, false);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x1234);
	teardown_rig(&r);
}

static void test_integration_s1(void **state)
{
	struct rig r;
	uint64_t rng = 5;

	(void)state;
	setup_rig(&r, NULL);
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm };
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };

	assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_smmuv3_cd_from_pgtable(pt, 42, &cd), 0);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 3, &ste, STRTAB);

	uint64_t vas[64];
	unsigned prots[64], n = 0;

	while (n < 64) {
		uint64_t sz = tu_rand(&rng) & 1 ? 0x1000 : 0x200000;
		uint64_t va = (tu_rand(&rng) % (1ull << 40)) & ~(sz - 1);
		uint64_t pa = (tu_rand(&rng) % (1ull << 40)) & ~(sz - 1);
		unsigned prot = IOPT_READ | (tu_rand(&rng) & 1 ? IOPT_WRITE : 0);

		if (iopt_pgtable_map_pages(pt, va, pa, sz, 1, prot, NULL))
			continue;
		vas[n] = va + (tu_rand(&rng) % sz);
		prots[n++] = prot;
	}
	for (unsigned pass = 0; pass < 2; pass++)	/* walks, then TLB hits */
		for (unsigned i = 0; i < n; i++) {
			uint64_t pa;

			assert_int_equal(iopt_pgtable_iova_to_phys(pt, vas[i], &pa), 0);
			struct iopt_smmuv3_resp resp = xlate(&r, 3, vas[i], false);

			assert_int_equal(resp.fault, 0);
			assert_int_equal(resp.oa, pa);
			resp = xlate(&r, 3, vas[i], true);
			assert_int_equal(resp.fault, prots[i] & IOPT_WRITE ? 0 :
					 IOPT_SMMUV3_EVT_F_PERMISSION);
		}
	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(r.s, &st);
	assert_true(st.tlb_hits >= n);
	/* Each fault recorded, or lost once the 64-entry queue filled. */
	assert_int_equal(st.events + st.events_lost, st.faults);
	assert_true(st.faults > 0);
	/* Permission fault record: type, StreamID, RnW=0 (write), address. */
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_SMMUV3_EVT_F_PERMISSION);
	assert_int_equal(evt_word(&r, 0, 0) >> 32, 3);
	assert_int_equal(evt_word(&r, 0, 1) >> 35 & 1, 0);
	/* The driver consumes the queue (and acknowledges any overflow). */
	uint64_t prod = rd(&r, 0x100a8);

	wr(&r, 0x100ac, prod);
	unsigned evbefore = (unsigned)(prod & 63);

	/* Unmap: the TLB still holds it until TLBI + SYNC. */
	uint64_t va = vas[0] & ~0xfffull, pa;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, va, &pa), 0);
	assert_true(iopt_pgtable_unmap_pages(pt, va, 0x1000, 1, NULL) > 0 ||
		    iopt_pgtable_unmap_pages(pt, va & ~0x1fffffull, 0x200000, 1, NULL) > 0);
	assert_int_equal(xlate(&r, 3, va, false).fault, 0);	/* stale */
	struct iopt_smmuv3_cmd c[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 42, .addr = va },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC },
	};

	cmds(&r, c, 2);
	assert_int_equal(rd(&r, 0x9c) & 0x1ff, 2);		/* CONS */
	struct iopt_smmuv3_resp resp = xlate(&r, 3, va + 8, false);

	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_int_equal(rd(&r, 0x100a8) & 127, ((prod & 127) + 1) & 127);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 0) & 0xff,
			 IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 2), va + 8);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 1) >> 35 & 1, 1); /* read */
	assert_true(r.irqs[IOPT_SMMUV3_IRQ_EVTQ] > 0);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

static void test_commands_errors_and_sync(void **state)
{
	struct rig r;

	(void)state;
	setup_rig(&r, NULL);
	/* An illegal command stops the queue at itself. */
	queue_illegal(&r);
	uint64_t cons = rd(&r, 0x9c);

	assert_int_equal(cons & 0x1ff, 0);
	assert_int_equal(cons >> 24 & 0x7f, 1);			/* CERROR_ILL */
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 1, 1);	/* CMDQ_ERR */
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 1);
	assert_int_equal(iopt_smmuv3_next_event(r.s), UINT64_MAX);	/* stopped */
	/* Software replaces it with a CMD_SYNC and acknowledges. */
	struct iopt_smmuv3_cmd sync = { .opcode = IOPT_SMMUV3_CMD_SYNC, .cs = IOPT_SMMUV3_SYNC_CS_IRQ,
				      .msi_addr = MSI, .msi_data = 0xcafe };
	uint64_t w[2];

	iopt_smmuv3_cmd_encode(&sync, w);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ, 16), w, 16);
	wr(&r, 0x64, rd(&r, 0x60));
	/* A TLBI ahead of... the SYNC completes after it, with its MSI. */
	struct iopt_smmuv3_cmd more[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC, .cs = IOPT_SMMUV3_SYNC_CS_IRQ, .msi_addr = MSI + 8,
		  .msi_data = 0xbeef },
	};
	uint64_t w0[2], w1[2];

	iopt_smmuv3_cmd_encode(&more[0], w0);
	iopt_smmuv3_cmd_encode(&more[1], w1);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 16, 16), w0, 16);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 32, 16), w1, 16);
	r.prod = 3;
	wr(&r, 0x98, 3);
	uint32_t *msi = iopt_physmem_ptr(r.pm, MSI, 16);
	uint64_t first = iopt_smmuv3_next_event(r.s);

	assert_true(first != UINT64_MAX);
	iopt_smmuv3_run_until(r.s, first - 1);
	assert_int_equal(msi[0], 0);			/* not yet */
	iopt_smmuv3_run_until(r.s, first);
	assert_int_equal(msi[0], 0xcafe);
	assert_int_equal(msi[2], 0);
	uint64_t second = iopt_smmuv3_next_event(r.s);	/* the TLBI */
	uint64_t third;

	iopt_smmuv3_run_until(r.s, second);
	third = iopt_smmuv3_next_event(r.s);		/* the second SYNC */
	assert_true(third > second && second > first);
	iopt_smmuv3_run_until(r.s, third - 1);
	assert_int_equal(msi[2], 0);
	iopt_smmuv3_run_until(r.s, third);
	assert_int_equal(msi[2], 0xbeef);
	r.cycle = third;
	assert_int_equal(rd(&r, 0x9c) & 0x1ff, 3);	/* CONS.ERR keeps its code */
	/* CS=SEV without SEV support is illegal; unknown CS too. */
	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(r.s, &st);
	assert_int_equal(st.syncs, 2);
	assert_int_equal(st.cmd_errors, 1);
	teardown_rig(&r);
}

static void test_bad_config_events(void **state)
{
	struct rig r;
	struct iopt_smmuv3_ste ste = { 0 };

	(void)state;
	setup_rig(&r, NULL);
	/* StreamID beyond the table (256 entries). */
	assert_int_equal(xlate(&r, 300, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STREAMID);
	/* Invalid STE. */
	assert_int_equal(xlate(&r, 1, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* Config 0: abort without an event. */
	ste.valid = true;
	put_ste(&r, 2, &ste, STRTAB);
	struct iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(r.s, &st);
	uint64_t ev = st.events;

	assert_int_equal(xlate(&r, 2, 0x1000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	iopt_smmuv3_get_stats(r.s, &st);
	assert_int_equal(st.events, ev);
	/* Reserved Config 0b0xx behaves as 0b000 (5.2): abort, no event. */
	ste.config = 2;
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(xlate(&r, 4, 0x1000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	iopt_smmuv3_get_stats(r.s, &st);
	assert_int_equal(st.events, ev);
	/* Bypass; a SubstreamID there is refused. */
	ste.config = IOPT_SMMUV3_STE_BYPASS;
	put_ste(&r, 5, &ste, STRTAB);
	assert_int_equal(xlate(&r, 5, 0xabc000, false).oa, 0xabc000);
	struct iopt_smmuv3_txn t = { .sid = 5, .ssv = true, .ssid = 1, .addr = 0 };
	struct iopt_smmuv3_resp resp;

	iopt_smmuv3_translate(r.s, &t, r.cycle, &resp);
	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	/* Event records for C_BAD_STREAMID and C_BAD_STE. */
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_SMMUV3_EVT_C_BAD_STREAMID);
	assert_int_equal(evt_word(&r, 0, 0) >> 32, 300);
	assert_int_equal(evt_word(&r, 1, 0) & 0xff, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* CR2.RECINVSID = 0: a bad StreamID aborts without a record. */
	unsigned e = evt_next(&r);

	wr(&r, 0x20, 0xc);			/* CR2 changes only with SMMUEN = 0 */
	wr(&r, 0x2c, 0x4);
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 300, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STREAMID);
	assert_int_equal(evt_next(&r), e);
	wr(&r, 0x20, 0xc);
	wr(&r, 0x2c, 0x6);
	wr(&r, 0x20, 0xd);
	/* Overflow: 64 entries, none consumed. */
	for (int i = 0; i < 80; i++)
		xlate(&r, 1, 0x1000, false);
	assert_int_equal(rd(&r, 0x100a8) >> 31, 1);		/* OVFLG */
	iopt_smmuv3_get_stats(r.s, &st);
	assert_true(st.events_lost > 0);
	assert_int_equal(st.events, 64);
	teardown_rig(&r);
}

static void test_stage2_two_level_and_determinism(void **state)
{
	uint64_t cycles[2][40];

	(void)state;
	for (int run = 0; run < 2; run++) {
		struct rig r;

		setup_rig(&r, NULL);
		/* Two-level stream table: SPLIT 8, StreamID 0x305 in L2 #3. */
		wr(&r, 0x20, 0);
		wr(&r, 0x88, 16 | 8 << 6 | 1 << 16);
		wr(&r, 0x20, 0xd);
		uint64_t l1 = L2STE | 9;			/* span 9: 256 STEs */

		memcpy(iopt_physmem_ptr(r.pm, STRTAB + 3 * 8, 8), &l1, 8);
		struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S2, .granule = 16384,
				       .ias = 40, .oas = 40, .coherent_walk = true,
				       .mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm };
		struct iopt_pgtable *pt;
		struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S2 };

		assert_int_equal(iopt_pgtable_alloc(&pc, &pt), 0);
		assert_int_equal(iopt_smmuv3_ste_s2_from_pgtable(pt, 7, &ste), 0);
		put_ste(&r, 5, &ste, L2STE);
		assert_int_equal(iopt_pgtable_map_pages(pt, 0x4000000, 0x9000000, 0x4000, 64,
							IOPT_READ | IOPT_WRITE, NULL), 0);
		for (int i = 0; i < 40; i++) {
			uint64_t ipa = 0x4000000 + (uint64_t)(i % 70) * 0x4000 + 0x10;
			struct iopt_smmuv3_resp resp = xlate(&r, 0x305, ipa, i & 1);

			if (i % 70 < 64) {
				assert_int_equal(resp.fault, 0);
				assert_int_equal(resp.oa, ipa + 0x5000000);
			}
			cycles[run][i] = resp.ready;
		}
		/* A StreamID in an L2 range beyond its span. */
		uint64_t l1b = L2STE | 1;			/* span 1: 1 STE */

		memcpy(iopt_physmem_ptr(r.pm, STRTAB + 4 * 8, 8), &l1b, 8);
		assert_int_equal(xlate(&r, 0x402, 0, false).fault,
				 IOPT_SMMUV3_EVT_C_BAD_STREAMID);
		iopt_pgtable_free(pt);
		teardown_rig(&r);
	}
	/* Same calls at the same cycles: the same cycles out. */
	assert_memory_equal(cycles[0], cycles[1], sizeof(cycles[0]));
	/* A TLB hit is faster than the walk before it. */
	assert_true(cycles[0][1] - cycles[0][0] < cycles[0][0]);
}

/* Two-level CD tables (S1Fmt 1: 4K leaves of 64 CDs) and substreams. */
static void test_two_level_cds(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd;
	const uint64_t l1 = CDTAB, l2 = CDTAB + 0x1000;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1, .s1_fmt = 1,
				.s1_cd_max = 8, .s1_context_ptr = l1, .s1_dss = 0 };

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 77, &cd);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x10000, 0x20000, 0x1000, 1, IOPT_READ,
						NULL), 0);
	put_cd(&r, l2 + 5 * 64, &cd);			/* SubstreamID 2*64+5 */
	uint64_t l1cd = l2 | 1;

	memcpy(iopt_physmem_ptr(r.pm, l1 + 2 * 8, 8), &l1cd, 8);
	put_ste(&r, 9, &ste, STRTAB);
	struct iopt_smmuv3_txn t = { .sid = 9, .ssv = true, .ssid = 2 * 64 + 5,
				   .addr = 0x10008, .priv = true };
	struct iopt_smmuv3_resp resp;

	assert_int_equal(iopt_smmuv3_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x20008);
	t.ssid = 3 * 64;				/* L1CD not valid */
	assert_int_equal(iopt_smmuv3_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	t.ssid = 256;					/* >= 2^S1CDMax */
	assert_int_equal(iopt_smmuv3_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID);
	t.ssv = false;					/* S1DSS 0: terminate */
	assert_int_equal(iopt_smmuv3_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_SMMUV3_EVT_F_STREAM_DISABLED);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

/* The free-running adapter completes a CMD_SYNC that nobody runs by hand;
 * the caller polls the MSI location as a driver would. */
static void test_free_running(void **state)
{
	struct rig r;
	struct iopt_smmuv3_runner *run;

	(void)state;
	setup_rig(&r, NULL);
	assert_int_equal(iopt_smmuv3_runner_start(r.s, 0, &run), -EINVAL);
	assert_int_equal(iopt_smmuv3_runner_start(r.s, 1.0, &run), 0);
	struct iopt_smmuv3_cmd c[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NSNH_ALL },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC, .cs = IOPT_SMMUV3_SYNC_CS_IRQ, .msi_addr = MSI,
		  .msi_data = 0x5a5a },
	};
	for (int i = 0; i < 2; i++) {
		uint64_t w[2];

		iopt_smmuv3_cmd_encode(&c[i], w);
		memcpy(iopt_physmem_ptr(r.pm, CMDQ + i * 16ull, 16), w, 16);
	}
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x98, 4, 2,
						iopt_smmuv3_runner_now(run)), 0);
	uint32_t *msi = iopt_physmem_ptr(r.pm, MSI, 4);

	/* No deadline: a loaded host may not schedule the runner for a
	 * while; ctest's timeout is the only bound. */
	while (__atomic_load_n(msi, __ATOMIC_ACQUIRE) != 0x5a5a)
		sched_yield();
	uint64_t cons;

	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x9c, 4, &cons,
					       iopt_smmuv3_runner_now(run)), 0);
	assert_int_equal(cons & 0x1ff, 2);
	iopt_smmuv3_runner_stop(run);
	teardown_rig(&r);
}

/* Fetches of the last translation: the counters' difference. */
static uint64_t fetches_of(struct rig *r, uint32_t sid, uint64_t va,
			   uint64_t *oa)
{
	struct iopt_smmuv3_stats a, b;

	iopt_smmuv3_get_stats(r->s, &a);
	struct iopt_smmuv3_resp resp = xlate(r, sid, va, false);

	iopt_smmuv3_get_stats(r->s, &b);
	assert_int_equal(resp.fault, 0);
	*oa = resp.oa;
	return b.fetches - a.fetches;
}

/*
 * Walk caches against the architecture's walk: a 48-bit 4K walk reads one
 * descriptor per level (4); a neighbour under the same last-level table
 * reads only its leaf (1) once the table address is cached. A Leaf=1 TLBI
 * keeps table entries; Leaf=0 and by-ASID remove them, so a table freed
 * and replaced by a block is never walked again after its TLBI + SYNC.
 */
static void test_walk_cache(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };
	const uint64_t va = 0x40000000, far = 0x7f0000000000ull;
	uint64_t oa;

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 9, &cd);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0x10000000, 0x1000, 8, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, far, 0x20000000, 0x1000, 1, IOPT_READ,
						NULL), 0);

	assert_int_equal(fetches_of(&r, 4, va, &oa), 4);
	assert_int_equal(oa, 0x10000000);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 1);
	assert_int_equal(oa, 0x10001000);
	assert_int_equal(fetches_of(&r, 4, far, &oa), 4);	/* other L0 entry */
	assert_int_equal(oa, 0x20000000);

	struct iopt_smmuv3_cmd leaf[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 9, .addr = va + 0x1000,
		  .leaf = true },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC },
	};

	cmds(&r, leaf, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 1);
	struct iopt_smmuv3_cmd asid[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID, .asid = 9 },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC },
	};

	cmds(&r, asid, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x2000, &oa), 4);
	assert_int_equal(oa, 0x10002000);

	/* Replace the last-level table with a block; invalidate its walk. */
	assert_int_equal(iopt_pgtable_unmap_pages(pt, va, 0x200000, 1, NULL), 0x200000);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0x30000000, 0x200000, 1, IOPT_READ,
						NULL), 0);
	struct iopt_smmuv3_cmd walk[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 9, .addr = va },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC },
	};

	cmds(&r, walk, 2);
	/* The 2 MiB block is read at level 2: three reads, nothing cached. */
	assert_int_equal(fetches_of(&r, 4, va + 0x3000, &oa), 3);
	assert_int_equal(oa, 0x30003000);
	/* A range TLBI (4K granule, 2^9 pages, Leaf=0) removes the table
	 * entries of the walk too. */
	struct iopt_smmuv3_cmd range[2] = {
		{ .opcode = IOPT_SMMUV3_CMD_TLBI_NH_VA, .asid = 9, .addr = va, .tg = 1,
		  .scale = 9 },
		{ .opcode = IOPT_SMMUV3_CMD_SYNC },
	};

	cmds(&r, range, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x4000, &oa), 3);
	assert_int_equal(oa, 0x30004000);
	iopt_pgtable_free(pt);

	/* Without walk caches every walk reads every level. */
	struct iopt_smmuv3_params p;

	teardown_rig(&r);
	iopt_smmuv3_default_params(&p);
	p.walk.enable = false;
	setup_rig(&r, &p);
	pt = s1_table(&r, 9, &cd);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(iopt_pgtable_map_pages(pt, va, 0x10000000, 0x1000, 2, IOPT_READ,
						NULL), 0);
	assert_int_equal(fetches_of(&r, 4, va, &oa), 4);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 4);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

static struct iopt_smmuv3_resp xlate_txn(struct rig *r, struct iopt_smmuv3_txn t)
{
	struct iopt_smmuv3_resp resp;

	assert_int_equal(iopt_smmuv3_translate(r->s, &t, r->cycle, &resp), 0);
	r->cycle = resp.ready + 1;
	return resp;
}


/*
 * ATS Translated traffic (3.9.1, 7.3.2, 7.3.8) and the access fields of
 * event records: without ATS a Translated transaction is unsupported
 * (F_UUT); with ATS it passes unchecked while CR0.ATSCHK = 0, and with
 * ATSCHK = 1 only through an STE with EATS = 1 that translates; SMMUEN = 0
 * forbids it. EATS = 2 (split stage) is ILLEGAL with NS1ATS = 1.
 */
static void test_ats_and_event_fields(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd;
	const uint64_t pa = 0x123456789000ull;
	struct iopt_smmuv3_txn tr = { .addr = pa + 0x10, .priv = true,
				    .translated = true };
	unsigned e;

	(void)state;
	/* No ATS: F_UUT with the incoming attributes and Reason 1. */
	setup_rig(&r, NULL);
	assert_int_equal(rd(&r, 0x0) >> 10 & 1, 0);		/* IDR0.ATS */
	e = evt_next(&r);
	tr.sid = 1;
	tr.exec = true;
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_SMMUV3_EVT_F_UUT);
	assert_int_equal(evt_word(&r, e, 0), IOPT_SMMUV3_EVT_F_UUT | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 1), 1ull << 35 | 1ull << 34 | 1ull << 33 | 1);
	assert_int_equal(evt_word(&r, e, 2), pa + 0x10);
	tr.exec = false;
	teardown_rig(&r);

	iopt_smmuv3_default_params(&p);
	p.ats = true;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 10 & 3, 3);		/* ATS, NS1ATS */
	pt = s1_table(&r, 3, &cd);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x5000, 0x9000, 0x1000, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	put_cd(&r, CDTAB, &cd);
	for (uint32_t sid = 1; sid <= 4; sid++) {
		/* EATS 0, 1, 1 with bypass, 2. */
		struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
					.s1_context_ptr = CDTAB,
					.eats = sid == 4 ? 2 : sid > 1 };

		if (sid == 3)
			ste.config = IOPT_SMMUV3_STE_BYPASS;
		put_ste(&r, sid, &ste, STRTAB);
	}
	/* ATSCHK = 0: Translated traffic is not checked. */
	tr.sid = 1;
	assert_int_equal(xlate_txn(&r, tr).fault, 0);
	assert_int_equal(xlate_txn(&r, tr).oa, pa + 0x10);
	wr(&r, 0x20, 0xd | 0x10);
	assert_int_equal(rd(&r, 0x24), 0x1d);			/* CR0ACK */
	/* EATS = 0: forbidden, with StreamID, RnW and the address. */
	e = evt_next(&r);
	tr.write = true;
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN);
	assert_int_equal(evt_word(&r, e, 0), IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 1), 0);		/* RnW = 0: write */
	assert_int_equal(evt_word(&r, e, 2), pa + 0x10);
	tr.write = false;
	tr.sid = 2;						/* EATS = 1 */
	struct iopt_smmuv3_resp resp = xlate_txn(&r, tr);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, pa + 0x10);
	tr.sid = 3;						/* bypass STE */
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN);
	tr.sid = 4;						/* EATS = 2 */
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	/* Untranslated traffic on the same stream still translates. */
	struct iopt_smmuv3_txn un = { .sid = 2, .addr = 0x5008, .priv = true };

	resp = xlate_txn(&r, un);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x9008);
	/* Translation fault fields: InD for an instruction read, never for
	 * a write; PnU; RnW. */
	un.addr = 0x7000;
	un.exec = true;
	e = evt_next(&r);
	assert_int_equal(xlate_txn(&r, un).fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 7);	/* RnW InD PnU */
	assert_int_equal(evt_word(&r, e, 1) >> 39 & 7, 2 << 1);	/* S2 0, CLASS IN */
	un.write = true;
	un.priv = false;
	e = evt_next(&r);
	assert_int_equal(xlate_txn(&r, un).fault, IOPT_SMMUV3_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 0);
	/* SMMUEN = 0 forbids Translated traffic. */
	wr(&r, 0x20, 0x4 | 0x8 | 0x10);
	tr.sid = 2;
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

/*
 * Event queue and GERROR interrupts as MSIs (6.3.20-22, 6.3.30-32): the
 * CFG1 data written to the CFG0 address instead of the wired line; a
 * failed event MSI sets GERROR.MSI_EVTQ_ABT_ERR; address 0 falls back to
 * the wired line.
 */
/* Empty the event queue: CONS = PROD. */
static void evt_consume(struct rig *r)
{
	wr(r, 0x100ac, rd(r, 0x100a8));
}

/*
 * Interrupts (3.18.2): the Event queue interrupt marks the queue going
 * from empty to non-empty; GERROR's marks a global error becoming active.
 * Each pulses the wired output (implemented here: the rig passes an irq
 * callback) and, with an MSI address, also writes the MSI. An MSI that
 * aborts activates GERROR.MSI_*_ABT_ERR (6.3.19), itself a global error.
 */
static void test_irq_msis(void **state)
{
	struct rig r;
	uint32_t *evt_msi, *gerr_msi;

	(void)state;
	setup_rig(&r, NULL);
	evt_msi = iopt_physmem_ptr(r.pm, MSI + 0x100, 4);
	gerr_msi = iopt_physmem_ptr(r.pm, MSI + 0x200, 4);
	wr(&r, 0x50, 0);		/* MSI configuration: interrupts off */
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xb0, 8, MSI + 0x100, r.cycle), 0);
	wr(&r, 0xb8, 0xabcd0001);
	wr(&r, 0xbc, 0x1f);
	assert_int_equal(rd(&r, 0xbc), 0x1f);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x68, 8, MSI + 0x200, r.cycle), 0);
	wr(&r, 0x70, 0x6e770002);
	wr(&r, 0x50, 0x5);
	/* An event (C_BAD_STE: STE 7 is not valid) into the empty queue:
	 * the MSI and the wired pulse. */
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(*evt_msi, 0xabcd0001);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_EVTQ], 1);
	/* A second record while the queue is not empty: no interrupt. */
	*evt_msi = 0;
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(rd(&r, 0x100a8), 2);
	assert_int_equal(*evt_msi, 0);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_EVTQ], 1);
	/* Consumed, the next one interrupts again. */
	evt_consume(&r);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(*evt_msi, 0xabcd0001);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_EVTQ], 2);
	/* GERROR.CMDQ_ERR from an illegal command: the GERROR MSI and pulse. */
	queue_illegal(&r);
	assert_int_equal(rd(&r, 0x60) & 1, 1);
	assert_int_equal(*gerr_msi, 0x6e770002);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 1);
	r.prod = 0;
	wr(&r, 0x98, 0);			/* 7.1: PROD back to CONS */
	wr(&r, 0x64, rd(&r, 0x60));			/* acknowledge */
	/* An event MSI to an address with no memory: MSI_EVTQ_ABT_ERR,
	 * signalled through the GERROR interrupt. */
	*gerr_msi = 0;
	wr(&r, 0x50, 0x1);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xb0, 8, 0x10000000000ull, r.cycle), 0);
	wr(&r, 0x50, 0x5);
	evt_consume(&r);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 0x20, 0x20);
	assert_int_equal(*gerr_msi, 0x6e770002);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_EVTQ], 3);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 2);
	/* Address 0: the wired line alone. */
	wr(&r, 0x50, 0x1);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xb0, 8, 0, r.cycle), 0);
	wr(&r, 0x50, 0x5);
	evt_consume(&r);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_EVTQ], 4);
	/* A GERROR MSI that aborts: MSI_GERROR_ABT_ERR [7] becomes active,
	 * a global error of its own (one more pulse); its own MSI aborts
	 * again, finding it already active. */
	wr(&r, 0x64, rd(&r, 0x60));
	wr(&r, 0x50, 0x4);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x68, 8, 0x10000000000ull, r.cycle), 0);
	wr(&r, 0x50, 0x5);
	queue_illegal(&r);
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 0x81, 0x81);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 4);
	teardown_rig(&r);
}

static unsigned xfault(struct rig *r, uint32_t sid, uint64_t addr, bool exec,
		       bool priv)
{
	struct iopt_smmuv3_txn t = { .sid = sid, .addr = addr, .exec = exec,
				   .priv = priv };

	return xlate_txn(r, t).fault;
}

/*
 * CD and STE fields that change translation are honoured, and those this
 * model cannot honour are ILLEGAL as the ID registers say (5.2, 5.4.2):
 * WXN, PAN, TBI0, S2PTW; CD.S = 1 (no stall model), CD.A = 0
 * (TERM_MODEL = 1) and STE.S2S = 1 give C_BAD_CD / C_BAD_STE.
 */
static void test_cd_ste_fields(void **state)
{
	struct rig r;
	struct iopt_pgtable_cfg sc = { .fmt = IOPT_ARM_64_LPAE_S2, .granule = 4096,
			       .ias = 40, .oas = 40, .coherent_walk = true };
	struct iopt_pgtable *pt, *s2;
	struct iopt_smmuv3_cd base, cd;

	(void)state;
	setup_rig(&r, NULL);
	sc.mem = iopt_physmem_mem_ops();
	sc.mem_ctx = r.pm;
	pt = s1_table(&r, 5, &base);
	assert_int_equal(iopt_pgtable_alloc(&sc, &s2), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x5000, 0x9000, 0x1000, 1,
						IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x6000, 0xa000, 0x1000, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x7000, 0xb000, 0x1000, 1,
						IOPT_READ | IOPT_PRIV, NULL), 0);
	/* One STE and CD per case: StreamID n uses the CD at CDTAB + 64n. */
	for (uint32_t sid = 1; sid <= 6; sid++) {
		struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
					.s1_context_ptr = CDTAB + 64 * sid };

		cd = base;
		cd.wxn = sid == 2;
		cd.pan = sid == 3;
		cd.tbi0 = sid == 4;
		cd.s = sid == 5;
		cd.a = sid != 6;
		put_cd(&r, CDTAB + 64 * sid, &cd);
		put_ste(&r, sid, &ste, STRTAB);
	}
	/* Plain: exec of a writable page is allowed (unprivileged: a page
	 * EL0 may write is privileged execute-never, Arm ARM D8.4); a tagged
	 * address faults. */
	assert_int_equal(xfault(&r, 1, 0x5000, true, false), 0);
	assert_int_equal(xfault(&r, 1, 0xab00000000005008ull, false, true),
			 IOPT_SMMUV3_EVT_F_TRANSLATION);
	/* WXN: writable pages do not execute, also from a TLB hit. */
	assert_int_equal(xfault(&r, 2, 0x5000, false, true), 0);
	assert_int_equal(xfault(&r, 2, 0x5000, true, true), IOPT_SMMUV3_EVT_F_PERMISSION);
	assert_int_equal(xfault(&r, 2, 0x6000, true, true), 0);
	/* PAN: no privileged data access to unprivileged pages. */
	assert_int_equal(xfault(&r, 3, 0x5000, false, true), IOPT_SMMUV3_EVT_F_PERMISSION);
	assert_int_equal(xfault(&r, 3, 0x5000, false, false), 0);
	assert_int_equal(xfault(&r, 3, 0x6000, true, true), 0);	/* fetch */
	assert_int_equal(xfault(&r, 3, 0x7000, false, true), 0);
	/* TBI0: the top byte is a tag. */
	struct iopt_smmuv3_txn tagged = { .sid = 4, .addr = 0xab00000000005008ull,
					.priv = true };
	struct iopt_smmuv3_resp resp = xlate_txn(&r, tagged);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x9008);
	/* ILLEGAL CDs. */
	assert_int_equal(xfault(&r, 5, 0x5000, false, true), IOPT_SMMUV3_EVT_C_BAD_CD);
	assert_int_equal(xfault(&r, 6, 0x5000, false, true), IOPT_SMMUV3_EVT_C_BAD_CD);

	/* Nested: stage 2 maps the window holding the stage 1 tables as
	 * Device memory and the output pages as Normal memory; a VMID per
	 * stream, since the stage 2 settings differ. */
	assert_int_equal(iopt_pgtable_map_pages(s2, MEM_BASE, MEM_BASE, 0x200000, 32,
						IOPT_READ | IOPT_WRITE | IOPT_MMIO, NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(s2, 0, 0, 0x200000, 1,
						IOPT_READ | IOPT_WRITE | IOPT_CACHE, NULL), 0);
	for (uint32_t sid = 7; sid <= 9; sid++) {
		struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_NESTED,
					.s1_context_ptr = CDTAB };

		assert_int_equal(iopt_smmuv3_ste_s2_from_pgtable(s2, (uint16_t)sid, &ste), 0);
		ste.config = IOPT_SMMUV3_STE_NESTED;
		ste.s1_context_ptr = CDTAB;
		ste.s2_ptw = sid == 8;
		ste.s2_s = sid == 9;
		put_ste(&r, sid, &ste, STRTAB);
	}
	put_cd(&r, CDTAB, &base);
	resp = xlate(&r, 7, 0x5008, false);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x9008);
	/* S2PTW: the CD fetch reads Device memory first: stage 2 permission
	 * fault, CLASS = CD, IPA = the CD's (5.2 S2PTW covers CD fetches
	 * and stage 1 walks; CLASS = TT: tests/test_smmu_fields.c). */
	unsigned e = evt_next(&r);

	assert_int_equal(xfault(&r, 8, 0x5008, false, true), IOPT_SMMUV3_EVT_F_PERMISSION);
	assert_int_equal(evt_word(&r, e, 1) >> 39 & 7, 1);	/* S2, CD */
	assert_int_equal(evt_word(&r, e, 3), CDTAB);
	assert_int_equal(xfault(&r, 9, 0x5008, false, true), IOPT_SMMUV3_EVT_C_BAD_STE);
	iopt_pgtable_free(pt);
	iopt_pgtable_free(s2);
	teardown_rig(&r);
}

/*
 * Aborts and address-size faults with their records (7.3.4, 7.3.10,
 * 7.3.12, 7.3.14): F_STE_FETCH and F_CD_FETCH carry FetchAddr[55:3] and no
 * input address; F_WALK_EABT the input address, the access fields and the
 * descriptor's FetchAddr; F_ADDR_SIZE an output beyond CD.IPS.
 */
static void test_aborts_and_addr_size(void **state)
{
	const uint64_t hole = 0x10000000000ull;	/* no memory there */
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd;
	unsigned e;

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 8, &cd);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x5000, 1ull << 44, 0x1000, 1,
						IOPT_READ, NULL), 0);
	/* StreamID 1: CD table in a hole. */
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = hole };

	put_ste(&r, 1, &ste, STRTAB);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 1, 0x5000, false).fault, IOPT_SMMUV3_EVT_F_CD_FETCH);
	assert_int_equal(evt_word(&r, e, 0), IOPT_SMMUV3_EVT_F_CD_FETCH | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 2), 0);
	assert_int_equal(evt_word(&r, e, 3), hole);
	/* StreamID 2: its CD's TTB0 in a hole: the level 0 descriptor read
	 * aborts. */
	struct iopt_smmuv3_cd bad = cd;

	bad.ttb0 = hole;
	put_cd(&r, CDTAB + 64, &bad);
	ste.s1_context_ptr = CDTAB + 64;
	put_ste(&r, 2, &ste, STRTAB);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 2, 0x5008, true).fault, IOPT_SMMUV3_EVT_F_WALK_EABT);
	assert_int_equal(evt_word(&r, e, 2), 0x5008);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 1);	/* write, PnU */
	assert_int_equal(evt_word(&r, e, 3), hole);		/* index 0 */
	/* StreamID 3: IPS 40 bits, an output at 2^44. */
	bad = cd;
	bad.ips = 2;
	put_cd(&r, CDTAB + 128, &bad);
	ste.s1_context_ptr = CDTAB + 128;
	put_ste(&r, 3, &ste, STRTAB);
	assert_int_equal(xlate(&r, 3, 0x5000, false).fault, IOPT_SMMUV3_EVT_F_ADDR_SIZE);
	ste.s1_context_ptr = CDTAB + 192;			/* a good CD */
	put_cd(&r, CDTAB + 192, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	struct iopt_smmuv3_resp resp = xlate(&r, 4, 0x5010, false);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, (1ull << 44) + 0x10);
	/* A two-level stream table whose level 2 table is in a hole. */
	wr(&r, 0x20, 0);
	wr(&r, 0x88, 16 | 8 << 6 | 1 << 16);
	wr(&r, 0x20, 0xd);
	uint64_t l1 = hole | 9;

	memcpy(iopt_physmem_ptr(r.pm, STRTAB + 2 * 8, 8), &l1, 8);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 0x203, 0, false).fault, IOPT_SMMUV3_EVT_F_STE_FETCH);
	assert_int_equal(evt_word(&r, e, 0), IOPT_SMMUV3_EVT_F_STE_FETCH | 0x203ull << 32);
	assert_int_equal(evt_word(&r, e, 3), hole + 3 * 64);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

static void cmd_sync(struct rig *r, struct iopt_smmuv3_cmd c)
{
	struct iopt_smmuv3_cmd both[2] = { c, { .opcode = IOPT_SMMUV3_CMD_SYNC } };

	cmds(r, both, 2);
}

/*
 * The configuration cache keeps a changed STE or CD until its CFGI_*
 * command (4.3): each of CFGI_STE, CFGI_STE_RANGE (a range, and 31 = all),
 * CFGI_CD and CFGI_CD_ALL makes the model read the new structure.
 * This model caches only usable configurations: an invalid one is read
 * again on every transaction.
 */
static void test_cfgi_commands(void **state)
{
	struct rig r;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_cd cd, bad;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
				.s1_context_ptr = CDTAB };
	struct iopt_smmuv3_ste off = { .valid = true, .config = IOPT_SMMUV3_STE_ABORT };

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 4, &cd);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0x5000, 0x9000, 0x1000, 1, IOPT_READ,
						NULL), 0);
	bad = cd;
	bad.valid = false;
	put_cd(&r, CDTAB, &cd);
	for (uint32_t sid = 20; sid < 24; sid++)
		put_ste(&r, sid, &ste, STRTAB);
	for (uint32_t sid = 20; sid < 24; sid++)
		assert_int_equal(xlate(&r, sid, 0x5000, false).fault, 0);
	/* STEs turned to abort: cached until invalidated. */
	for (uint32_t sid = 20; sid < 24; sid++)
		put_ste(&r, sid, &off, STRTAB);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, 0);
	/* Range 0: StreamIDs 22 and 23 (2^(0+1), aligned). */
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE_RANGE,
					     .sid = 23, .range = 0 });
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, 0);
	assert_int_equal(xlate(&r, 22, 0x5000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	assert_int_equal(xlate(&r, 23, 0x5000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE_RANGE,
					     .range = 31 });
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, IOPT_SMMUV3_EVT_ABORT);
	/* CDs: an invalid CD is seen after CFGI_CD, a good one after
	 * CFGI_CD_ALL. */
	put_ste(&r, 20, &ste, STRTAB);
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	put_cd(&r, CDTAB, &bad);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_CD, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_SMMUV3_EVT_C_BAD_CD);
	/* An ILLEGAL configuration is not cached: fixed, it is read again. */
	put_cd(&r, CDTAB, &cd);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	put_cd(&r, CDTAB, &bad);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	cmd_sync(&r, (struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_CD_ALL, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_SMMUV3_EVT_C_BAD_CD);
	iopt_pgtable_free(pt);
	teardown_rig(&r);
}

/* ---- commands, timing, registers and errors against IHI0070 -------------
 * Expected values come from the architecture's field positions and rules,
 * written here as constants; commands are packed by hand, not with
 * iopt_smmuv3_cmd_encode.
 */

/* Command words by hand (4.x): opcode [7:0] of word 0. */
#define OP(x)		((uint64_t)(x))
#define SSEC		(1ull << 10)		/* 4.1.6 */
#define TLBI_NUM(x)	((uint64_t)(x) << 12)	/* word 0 [16:12] */
#define TLBI_SCALE(x)	((uint64_t)(x) << 20)	/* word 0 [24:20] */
#define W1_LEAF		1ull			/* bit 64 */
#define W1_TTL(x)	((uint64_t)(x) << 8)	/* [73:72] */
#define W1_TG(x)	((uint64_t)(x) << 10)	/* [75:74] */
#define SYNC_CS(x)	((uint64_t)(x) << 12)	/* word 0 [13:12] */
#define SYNC_DATA(x)	((uint64_t)(x) << 32)	/* MSIData [63:32] */
#define SYNC_ADDR(a)	((uint64_t)(a) & ~3ull)	/* MSIAddress[55:2] at [119:66] */

#define R_CONS		0x9c
#define CONS_RD(v)	((v) & 0xfffff)
#define CONS_ERR(v)	((v) >> 24 & 0x7f)	/* 7.1: [30:24] */
#define GERROR_CMDQ	0x1u
#define GERROR_EVTQ_ABT	0x4u

/* Put one raw command at PROD (not yet published). */
static void put_raw(struct rig *r, uint64_t w0, uint64_t w1)
{
	uint64_t w[2] = { w0, w1 };

	memcpy(iopt_physmem_ptr(r->pm, CMDQ + (r->prod & 255) * 16ull, 16), w, 16);
	r->prod = (r->prod + 1) & 511;
}

/* Publish PROD and run until the queue stops or empties. */
static void run_queue(struct rig *r)
{
	uint64_t next;

	wr(r, 0x98, r->prod);
	while ((next = iopt_smmuv3_next_event(r->s)) != UINT64_MAX) {
		r->cycle = next;
		assert_int_equal(iopt_smmuv3_run_until(r->s, r->cycle), 0);
	}
}

/* Queue one raw command on an empty, running queue: its CONS.ERR (0:
 * consumed). An error is acknowledged and the command skipped, so the
 * next check starts clean. */
static unsigned raw_err(struct rig *r, uint64_t w0, uint64_t w1)
{
	uint32_t at = r->prod;
	uint64_t cons;
	unsigned err;

	put_raw(r, w0, w1);
	run_queue(r);
	cons = rd(r, R_CONS);
	/* CONS.ERR is meaningful while GERROR.CMDQ_ERR is active (7.1). */
	if (!((rd(r, 0x60) ^ rd(r, 0x64)) & GERROR_CMDQ)) {
		assert_int_equal(CONS_RD(cons) & 511, r->prod);
		return 0;
	}
	/* 4.1.3: CONS.RD points at the command that failed; nothing more
	 * is consumed. */
	err = (unsigned)CONS_ERR(cons);
	assert_true(err != 0);
	assert_int_equal(CONS_RD(cons) & 511, at);
	/* Recovery (7.1): replace the command with a CMD_SYNC, acknowledge. */
	uint64_t sync[2] = { OP(0x46), 0 };

	memcpy(iopt_physmem_ptr(r->pm, CMDQ + (at & 255) * 16ull, 16), sync, 16);
	wr(r, 0x64, rd(r, 0x60));
	run_queue(r);
	assert_int_equal(CONS_RD(rd(r, R_CONS)) & 511, r->prod);
	return err;
}

/*
 * Command legality (4.1.3, 4.3, 4.4, 4.5, 4.7.3) for the features the ID
 * registers advertise: default parameters (S1 + S2, RIL, SEV, no ATS, no
 * Hyp, no PRI, no stall model, no MPAM, IDR5.DS = 0), then a stage 2-only
 * SMMU and one without SEV.
 */
static void test_cmd_legality(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;

	(void)state;
	setup_rig(&r, NULL);
	/* Reserved opcodes and opcodes for features this SMMU lacks. */
	static const unsigned ill[] = {
		0x00, 0x07 /* VMS_PIDM: no MPAM */, 0x08, 0x14,
		0x18, 0x1a /* EL3: Secure queue only */,
		0x20, 0x21, 0x22, 0x23 /* EL2: IDR0.Hyp = 0 */,
		0x41 /* PRI_RESP: no PRI */, 0x44, 0x45 /* no stall model */,
		0x50, 0x58, 0x5a, 0x60 /* Secure: NS queue */,
		0x70, 0x73 /* DPT: not implemented */, 0x80, 0xff,
	};
	for (unsigned i = 0; i < sizeof(ill) / sizeof(ill[0]); i++)
		assert_int_equal(raw_err(&r, OP(ill[i]), 0), 1);
	/* Every command this SMMU implements is accepted in its plain form. */
	static const unsigned ok[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10,
				       0x11, 0x12, 0x13, 0x28, 0x2a, 0x30, 0x46 };
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(raw_err(&r, OP(ok[i]), 0), 0);
	/* 4.1.6: SSec = 1 on the Non-secure queue is ILLEGAL. */
	assert_int_equal(raw_err(&r, OP(0x03) | SSEC, 0), 1);	/* CFGI_STE */
	assert_int_equal(raw_err(&r, OP(0x04) | SSEC, 0), 1);	/* CFGI_STE_RANGE */
	assert_int_equal(raw_err(&r, OP(0x05) | SSEC, 0), 1);	/* CFGI_CD */
	assert_int_equal(raw_err(&r, OP(0x06) | SSEC, 0), 1);	/* CFGI_CD_ALL */
	assert_int_equal(raw_err(&r, OP(0x01) | SSEC, 0), 1);	/* PREFETCH_CONFIG */
	/* 4.4.1.1: TG != 0 with NUM = SCALE = TTL = 0 is Reserved. */
	assert_int_equal(raw_err(&r, OP(0x12), W1_TG(1)), 1);
	assert_int_equal(raw_err(&r, OP(0x13), W1_TG(3) | W1_LEAF), 1);
	assert_int_equal(raw_err(&r, OP(0x2a), W1_TG(2)), 1);
	/* ... and 16K with TTL = 1 is TTL = 0 when IDR5.DS = 0. */
	assert_int_equal(raw_err(&r, OP(0x12), W1_TG(2) | W1_TTL(1)), 1);
	/* Legal range forms: a TTL hint, or NUM/SCALE. */
	assert_int_equal(raw_err(&r, OP(0x12), W1_TG(1) | W1_TTL(3)), 0);
	assert_int_equal(raw_err(&r, OP(0x12) | TLBI_NUM(1), W1_TG(1)), 0);
	assert_int_equal(raw_err(&r, OP(0x2a) | TLBI_SCALE(2), W1_TG(3)), 0);
	assert_int_equal(raw_err(&r, OP(0x12), W1_TG(2) | W1_TTL(2)), 0);
	/* 4.5.1: ATC_INV is ILLEGAL with IDR0.ATS = 0. */
	assert_int_equal(raw_err(&r, OP(0x40), 0), 1);
	/* 4.7.3: CS = 0b11 is Reserved. */
	assert_int_equal(raw_err(&r, OP(0x46) | SYNC_CS(3), 0), 1);
	teardown_rig(&r);

	/* Stage 2 only: stage 1 TLBIs and CFGI_CD* are ILLEGAL (4.3.3,
	 * 4.3.4, 4.4.2); stage 2 ones and NSNH_ALL are not. */
	iopt_smmuv3_default_params(&p);
	p.s1 = false;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) & 3, 1);		/* IDR0: S2P only */
	static const unsigned s1only[] = { 0x05, 0x06, 0x10, 0x11, 0x12, 0x13 };
	for (unsigned i = 0; i < sizeof(s1only) / sizeof(s1only[0]); i++)
		assert_int_equal(raw_err(&r, OP(s1only[i]), 0), 1);
	assert_int_equal(raw_err(&r, OP(0x28), 0), 0);
	assert_int_equal(raw_err(&r, OP(0x2a), 0), 0);
	assert_int_equal(raw_err(&r, OP(0x30), 0), 0);
	assert_int_equal(raw_err(&r, OP(0x03), 0), 0);
	teardown_rig(&r);

	/* Stage 1 only: stage 2 TLBIs are ILLEGAL (4.4.3). */
	iopt_smmuv3_default_params(&p);
	p.s2 = false;
	setup_rig(&r, &p);
	assert_int_equal(raw_err(&r, OP(0x28), 0), 1);
	assert_int_equal(raw_err(&r, OP(0x2a), 0), 1);
	assert_int_equal(raw_err(&r, OP(0x10), 0), 0);
	teardown_rig(&r);

	/* Without RIL, TG is RES0 and this model detects it (4.1.5). */
	iopt_smmuv3_default_params(&p);
	p.ril = false;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0xc) >> 10 & 1, 0);
	assert_int_equal(raw_err(&r, OP(0x12), W1_TG(1) | W1_TTL(3)), 1);
	teardown_rig(&r);

	/* With ATS, ATC_INV is legal (and has nothing to invalidate);
	 * IDR0.ATS [10] set, NS1ATS [11] set with both stages only. */
	iopt_smmuv3_default_params(&p);
	p.ats = true;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 10 & 3, 3);
	assert_int_equal(raw_err(&r, OP(0x40), 0), 0);
	teardown_rig(&r);
	p.s2 = false;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 10 & 3, 1);
	teardown_rig(&r);

	/* 4.7.3: without IDR0.SEV, CS = SIG_SEV is SIG_NONE: consumed, no
	 * error and no interrupt. */
	iopt_smmuv3_default_params(&p);
	p.sev = false;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 14 & 1, 0);	/* IDR0.SEV */
	assert_int_equal(raw_err(&r, OP(0x46) | SYNC_CS(2), 0), 0);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_CMD_SYNC], 0);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 0);
	teardown_rig(&r);
}

/* Completion cycles of every command now waiting, in order. */
static unsigned completions(struct rig *r, uint64_t *out, unsigned max)
{
	unsigned n = 0;
	uint64_t next;

	while ((next = iopt_smmuv3_next_event(r->s)) != UINT64_MAX && n < max) {
		out[n++] = next;
		r->cycle = next;
		assert_int_equal(iopt_smmuv3_run_until(r->s, next), 0);
	}
	return n;
}

/*
 * docs/smmu_model.md, Timing: command k completes at max(the cycle PROD
 * made it visible, completion of k - 1) + its cost, the cost being
 * cmd_cycles plus tlbi_cycles (TLBI), cfgi_cycles (CFGI) or sync_cycles
 * (+ msi_cycles with an MSI) (CMD_SYNC). A later PROD write does not
 * delay commands that were already visible.
 */
static void test_cmd_timing(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	uint64_t t[16];
	const uint64_t nsnh = OP(0x30);

	(void)state;
	iopt_smmuv3_default_params(&p);
	p.cmd_cycles = 4;
	p.tlbi_cycles = 16;
	setup_rig(&r, &p);
	/* Four TLBIs published at cycle 100: 120, 140, 160, 180. */
	for (int i = 0; i < 4; i++)
		put_raw(&r, nsnh, 0);
	r.cycle = 100;
	wr(&r, 0x98, r.prod);
	assert_int_equal(completions(&r, t, 16), 4);
	assert_int_equal(t[0], 120);
	assert_int_equal(t[1], 140);
	assert_int_equal(t[2], 160);
	assert_int_equal(t[3], 180);
	teardown_rig(&r);

	/* The same four, then a fifth and a second PROD write at 130: the
	 * first four keep 120..180, the fifth follows at 200. */
	setup_rig(&r, &p);
	for (int i = 0; i < 4; i++)
		put_raw(&r, nsnh, 0);
	r.cycle = 100;
	wr(&r, 0x98, r.prod);
	r.cycle = 130;
	put_raw(&r, nsnh, 0);
	wr(&r, 0x98, r.prod);			/* runs the first (120) on the way */
	assert_int_equal(CONS_RD(rd(&r, R_CONS)), 1);
	assert_int_equal(completions(&r, t, 16), 4);
	assert_int_equal(t[0], 140);
	assert_int_equal(t[1], 160);
	assert_int_equal(t[2], 180);
	assert_int_equal(t[3], 200);
	/* A command published after the engine went idle waits for its own
	 * PROD write: at 1000, done at 1020. */
	r.cycle = 1000;
	put_raw(&r, nsnh, 0);
	wr(&r, 0x98, r.prod);
	assert_int_equal(completions(&r, t, 16), 1);
	assert_int_equal(t[0], 1020);
	/* Writes of other registers do not delay waiting commands. */
	put_raw(&r, nsnh, 0);
	put_raw(&r, nsnh, 0);
	r.cycle = 1100;
	wr(&r, 0x98, r.prod);
	r.cycle = 1110;
	wr(&r, 0x20, 0xd);			/* CR0, unchanged */
	wr(&r, 0x64, rd(&r, 0x64));		/* GERRORN, unchanged */
	assert_int_equal(completions(&r, t, 16), 2);
	assert_int_equal(t[0], 1120);
	assert_int_equal(t[1], 1140);
	teardown_rig(&r);

	/* Each command class costs what its parameters say, CMD_SYNC
	 * included (one cost rule for timing and effects). */
	p.cmd_cycles = 3;
	p.tlbi_cycles = 5;
	p.cfgi_cycles = 7;
	p.sync_cycles = 11;
	p.msi_cycles = 13;
	setup_rig(&r, &p);
	uint32_t *msi = iopt_physmem_ptr(r.pm, MSI, 4);

	put_raw(&r, OP(0x03), 0);				/* CFGI_STE: 3+7 */
	put_raw(&r, OP(0x10), 0);				/* TLBI_NH_ALL: 3+5 */
	put_raw(&r, OP(0x46), 0);				/* SYNC, NONE: 3+11 */
	put_raw(&r, OP(0x46) | SYNC_CS(1) | SYNC_DATA(0x77),	/* SYNC, MSI: 3+11+13 */
		SYNC_ADDR(MSI) << 0);
	put_raw(&r, OP(0x01), 0);				/* PREFETCH: 3 */
	put_raw(&r, OP(0x46) | SYNC_CS(1), 0);			/* SYNC, wired: 3+11 */
	put_raw(&r, OP(0x7f), 0);				/* illegal: 3 */
	r.cycle = 1000;
	wr(&r, 0x98, r.prod);
	assert_int_equal(completions(&r, t, 3), 3);
	assert_int_equal(t[0], 1010);
	assert_int_equal(t[1], 1018);
	assert_int_equal(t[2], 1032);
	assert_int_equal(iopt_smmuv3_next_event(r.s), 1059);
	assert_int_equal(iopt_smmuv3_run_until(r.s, 1058), 0);
	assert_int_equal(*msi, 0);				/* not before it completes */
	assert_int_equal(completions(&r, t, 16), 4);
	assert_int_equal(t[0], 1059);
	assert_int_equal(*msi, 0x77);
	assert_int_equal(t[1], 1062);
	assert_int_equal(t[2], 1076);
	/* SIG_IRQ pulses the wired output with or without an MSI (4.7.3). */
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_CMD_SYNC], 2);
	assert_int_equal(t[3], 1079);				/* the error, stopping */
	assert_int_equal(CONS_ERR(rd(&r, R_CONS)), 1);
	/* A queue restarted by the acknowledgement at 2000 takes its next
	 * command from then: the replacement SYNC at 2000 + 14. */
	uint64_t sync[2] = { OP(0x46), 0 };

	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 6 * 16, 16), sync, 16);
	r.cycle = 2000;
	wr(&r, 0x64, rd(&r, 0x60));
	assert_int_equal(completions(&r, t, 16), 1);
	assert_int_equal(t[0], 2014);
	teardown_rig(&r);
}

/* The model never goes back in time: every entry point that takes a cycle
 * rejects one before the model's time with -EINVAL and changes nothing;
 * with params.shared_clock it is taken as the model's time. */
static void test_time_never_goes_back(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_stats a, b;
	struct iopt_smmuv3_txn t = { .sid = 1, .addr = 0x1000 };
	struct iopt_smmuv3_resp resp;
	uint64_t v;

	(void)state;
	setup_rig(&r, NULL);
	r.cycle = 500;
	put_raw(&r, OP(0x30), 0);
	wr(&r, 0x98, r.prod);			/* completes at 500 + 20 */
	iopt_smmuv3_get_stats(r.s, &a);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x20, 4, 0, 499), -EINVAL);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0x98, 4, 0, 499), -EINVAL);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x20, 4, &v, 499), -EINVAL);
	assert_int_equal(iopt_smmuv3_translate(r.s, &t, 499, &resp), -EINVAL);
	assert_int_equal(iopt_smmuv3_run_until(r.s, 0), -EINVAL);
	iopt_smmuv3_get_stats(r.s, &b);
	assert_memory_equal(&a, &b, sizeof(a));	/* no translation, no event */
	assert_int_equal(rd(&r, 0x20), 0xd);	/* CR0 kept */
	assert_int_equal(rd(&r, 0x98), 1);	/* PROD kept */
	assert_int_equal(iopt_smmuv3_next_event(r.s), 520);
	/* The same cycle again is not going back. */
	assert_int_equal(iopt_smmuv3_run_until(r.s, 500), 0);
	assert_int_equal(iopt_smmuv3_run_until(r.s, 520), 0);
	r.cycle = 520;
	assert_int_equal(CONS_RD(rd(&r, R_CONS)), 1);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x20, 4, &v, 519), -EINVAL);
	teardown_rig(&r);

	iopt_smmuv3_default_params(&p);
	p.shared_clock = true;
	setup_rig(&r, &p);
	r.cycle = 500;
	rd(&r, 0x20);
	assert_int_equal(iopt_smmuv3_translate(r.s, &t, 400, &resp), 0);
	assert_true(resp.ready >= 500);		/* taken at 500 */
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x20, 4, &v, 10), 0);
	assert_int_equal(v, 0xd);
	teardown_rig(&r);
}

/* Walk-cache latency (params.walk.latency, cycles per probe) is part of a
 * walk's cycles: the same walk in two models that differ only in it is
 * later by latency x probes (the probes the statistics count), stage 1
 * alone and nested (the stage 2 walks of the stage 1 table addresses and
 * of the output probe the cache too). */
static void test_walk_cache_latency(void **state)
{
	(void)state;
	for (int nested = 0; nested < 2; nested++) {
		uint64_t ready[2], probes[2];

		for (int k = 0; k < 2; k++) {
			struct rig r;
			struct iopt_smmuv3_params p;
			struct iopt_pgtable *pt, *s2 = NULL;
			struct iopt_smmuv3_cd cd;
			struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1,
						.s1_context_ptr = CDTAB };
			struct iopt_smmuv3_stats a, b;

			iopt_smmuv3_default_params(&p);
			p.walk.latency = k ? 7 : 0;
			setup_rig(&r, &p);
			pt = s1_table(&r, 3, &cd);
			put_cd(&r, CDTAB, &cd);
			if (nested) {
				struct iopt_pgtable_cfg sc = {
					.fmt = IOPT_ARM_64_LPAE_S2, .granule = 4096,
					.ias = 40, .oas = 40, .coherent_walk = true,
					.mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm };

				assert_int_equal(iopt_pgtable_alloc(&sc, &s2), 0);
				assert_int_equal(iopt_pgtable_map_pages(s2, MEM_BASE, MEM_BASE,
									0x200000, 32,
									IOPT_READ | IOPT_WRITE,
									NULL), 0);
				assert_int_equal(iopt_pgtable_map_pages(s2, 0x9000000, 0x9000000,
									0x200000, 1,
									IOPT_READ | IOPT_CACHE,
									NULL), 0);
				assert_int_equal(iopt_smmuv3_ste_s2_from_pgtable(s2, 5, &ste), 0);
				ste.config = IOPT_SMMUV3_STE_NESTED;
				ste.s1_context_ptr = CDTAB;
			}
			put_ste(&r, 9, &ste, STRTAB);
			assert_int_equal(iopt_pgtable_map_pages(pt, 0x40000000, 0x9000000, 0x1000,
								2, IOPT_READ, NULL), 0);
			/* Warm the configuration cache and the walk cache, then
			 * walk the neighbour: same cycle in both models. */
			assert_int_equal(xlate(&r, 9, 0x40000000, false).fault, 0);
			r.cycle = 100000;
			iopt_smmuv3_get_stats(r.s, &a);
			struct iopt_smmuv3_resp resp = xlate(&r, 9, 0x40001000, false);

			iopt_smmuv3_get_stats(r.s, &b);
			assert_int_equal(resp.fault, 0);
			assert_int_equal(resp.oa, 0x9001000);
			assert_int_equal(b.walks - a.walks, 1);
			ready[k] = resp.ready;
			probes[k] = (b.walk_cache_hits + b.walk_cache_misses) -
				    (a.walk_cache_hits + a.walk_cache_misses);
			iopt_pgtable_free(pt);
			if (s2)
				iopt_pgtable_free(s2);
			teardown_rig(&r);
		}
		assert_int_equal(probes[0], probes[1]);
		assert_true(probes[1] > (nested ? 2u : 0u));
		assert_int_equal(ready[1] - ready[0], 7 * probes[1]);
	}
}

/* A 32-bit StreamID space with LOG2SIZE 32 (a two-level table, SPLIT 10:
 * its 2^22 L1STDs need 32 MiB alignment, which MEM_BASE has): every
 * StreamID is in range (6.3.25; no shift by the type's width). */
static void test_sid32_log2size32(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_ste byp = { .valid = true, .config = IOPT_SMMUV3_STE_BYPASS };
	uint64_t l1 = L2STE | 11;			/* span 11: 1024 STEs */

	(void)state;
	iopt_smmuv3_default_params(&p);
	p.sidsize = 32;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x4) & 63, 32);		/* IDR1.SIDSIZE */
	wr(&r, 0x20, 0xc);
	wr(&r, 0x88, 32 | 10 << 6 | 1 << 16);		/* 2-level, SPLIT 10 */
	wr(&r, 0x20, 0xd);
	memcpy(iopt_physmem_ptr(r.pm, STRTAB, 8), &l1, 8);
	memcpy(iopt_physmem_ptr(r.pm, STRTAB + 0x3fffffull * 8, 8), &l1, 8);
	put_ste(&r, 5, &byp, L2STE);
	put_ste(&r, 0x3ff, &byp, L2STE);
	struct iopt_smmuv3_resp resp = xlate(&r, 5, 0x123000, false);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x123000);
	resp = xlate(&r, 0xffffffffu, 0x456000, false);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x456000);
	teardown_rig(&r);
}

/*
 * Stream table registers (6.3.24-25): LOG2SIZE above SIDSIZE is used as
 * SIDSIZE for the StreamID range; the base is aligned by the literal
 * LOG2SIZE (linear: ADDR[LOG2SIZE+5:0] = 0); reserved FMT values act as
 * linear and reserved SPLIT values as 6; without ST_LEVEL, FMT and SPLIT
 * are RES0.
 */
static void test_stream_table_cfg(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;
	struct iopt_smmuv3_ste byp = { .valid = true, .config = IOPT_SMMUV3_STE_BYPASS };
	struct iopt_smmuv3_ste off = { .valid = true, .config = IOPT_SMMUV3_STE_ABORT };

	(void)state;
	iopt_smmuv3_default_params(&p);
	p.sidsize = 8;
	setup_rig(&r, &p);
	put_ste(&r, 5, &byp, STRTAB);
	put_ste(&r, 6, &off, STRTAB);
	/* LOG2SIZE 20 > SIDSIZE 8: StreamIDs up to 255 (the base, MEM_BASE,
	 * meets the 64 MiB alignment LOG2SIZE 20 asks). */
	wr(&r, 0x20, 0xc);
	wr(&r, 0x88, 20);
	wr(&r, 0x20, 0xd);
	assert_int_equal(rd(&r, 0x88), 20);		/* read back as written */
	assert_int_equal(xlate(&r, 5, 0x5000, false).fault, 0);
	assert_int_equal(xlate(&r, 256, 0x5000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STREAMID);
	/* Base STRTAB + 0x40 with LOG2SIZE 8: aligned to 16 KiB, STRTAB. */
	wr(&r, 0x20, 0xc);
	wr(&r, 0x80, STRTAB + 0x40);
	wr(&r, 0x88, 8);
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 5, 0x5000, false).fault, 0);
	/* FMT 0b10 (reserved) is linear. */
	wr(&r, 0x20, 0xc);
	wr(&r, 0x80, STRTAB);
	wr(&r, 0x88, 8 | 2 << 16);
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 5, 0x5000, false).fault, 0);
	/* Two-level with SPLIT 7 (reserved): SPLIT 6, L1STD per 64 STEs. */
	uint64_t l1 = L2STE | 7;			/* span 7: 64 STEs */

	memcpy(iopt_physmem_ptr(r.pm, STRTAB + 8, 8), &l1, 8);
	put_ste(&r, 5, &byp, L2STE);
	wr(&r, 0x20, 0xc);
	wr(&r, 0x88, 8 | 7 << 6 | 1 << 16);
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 64 + 5, 0x5000, false).fault, 0);
	teardown_rig(&r);

	/* Without two-level tables (ST_LEVEL = 0) FMT and SPLIT are RES0. */
	iopt_smmuv3_default_params(&p);
	p.strtab_2lvl = false;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 27 & 3, 0);	/* IDR0.ST_LEVEL */
	wr(&r, 0x20, 0xc);
	wr(&r, 0x88, 8 | 8 << 6 | 1 << 16);
	assert_int_equal(rd(&r, 0x88), 8);
	teardown_rig(&r);
}

/*
 * 7.2.1, 7.2.2, 6.3.19: an Event queue write that aborts activates
 * GERROR.EVENTQ_ABT_ERR (with the GERROR interrupt); PROD does not move
 * (synchronous abort); the queue is unwritable until the error is
 * acknowledged, then records are written again.
 */
static void test_eventq_abort(void **state)
{
	struct rig r;
	struct iopt_smmuv3_stats st;

	(void)state;
	setup_rig(&r, NULL);
	/* EVENTQEN = 0: records are discarded without overflow (7.2.1, 7.4). */
	wr(&r, 0x20, 0x9);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(rd(&r, 0x100a8), 0);		/* PROD, OVFLG clear */
	wr(&r, 0xa0, 0x10000000000ull | 6);		/* no memory there */
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & GERROR_EVTQ_ABT,
			 GERROR_EVTQ_ABT);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 1);
	assert_int_equal(rd(&r, 0x100a8), 0);		/* PROD unmoved */
	/* Unwritable: the next record is discarded, no second error. */
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 1);
	/* Software moves the queue to memory and acknowledges. */
	wr(&r, 0x20, 0x9);
	wr(&r, 0xa0, EVTQ | 6);
	wr(&r, 0x20, 0xd);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(rd(&r, 0x100a8), 0);		/* still unwritable */
	wr(&r, 0x64, rd(&r, 0x60));
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(rd(&r, 0x100a8), 1);
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(evt_word(&r, 0, 0) >> 32, 7);
	iopt_smmuv3_get_stats(r.s, &st);
	assert_int_equal(st.events, 1);
	teardown_rig(&r);
}

/*
 * Register rules of 6.3 beyond the ID values: reserved fields (RES0) read
 * as zero and are not reflected in the ACK registers; Guarded registers
 * ignore writes while their enable is set (the SMMUv3.2 behaviour);
 * GERRORN holds what was written to its defined fields.
 */
static void test_register_rules(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;

	(void)state;
	setup_rig(&r, NULL);
	/* ID registers are read-only. */
	uint64_t idr0 = rd(&r, 0x0);

	wr(&r, 0x0, ~idr0 & 0xffffffffu);
	assert_int_equal(rd(&r, 0x0), idr0);
	/* CR0 (6.3.9): without ATS, PRI, VMW, DPT only SMMUEN, EVENTQEN,
	 * CMDQEN exist; CR0ACK reflects exactly those. */
	wr(&r, 0x20, 0xffffffffu);
	assert_int_equal(rd(&r, 0x20), 0xd);
	assert_int_equal(rd(&r, 0x24), 0xd);
	/* CR0ACK, IRQ_CTRLACK, IDR1-5, AIDR are RO too (6.2.1). */
	wr(&r, 0x24, 0);
	assert_int_equal(rd(&r, 0x24), 0xd);
	uint64_t irqack = rd(&r, 0x54), idr1 = rd(&r, 0x4), aidr = rd(&r, 0x1c);

	wr(&r, 0x54, ~irqack & 0xffffffffu);
	wr(&r, 0x4, 0);
	wr(&r, 0x1c, 0);
	assert_int_equal(rd(&r, 0x54), irqack);
	assert_int_equal(rd(&r, 0x4), idr1);
	assert_int_equal(rd(&r, 0x1c), aidr);
	assert_int_equal(aidr, 0x2);			/* SMMUv3.2 */
	/* CR1 (6.3.11): TABLE_* [11:6] guarded by SMMUEN, QUEUE_* [5:0] by
	 * the queue enables; [31:12] RES0. */
	wr(&r, 0x28, 0xffffffffu);
	assert_int_equal(rd(&r, 0x28), 0);
	wr(&r, 0x20, 0x0);
	wr(&r, 0x28, 0xffffffffu);
	assert_int_equal(rd(&r, 0x28), 0xfff);
	wr(&r, 0x20, 0x1);				/* SMMUEN: TABLE_* locked */
	wr(&r, 0x28, 0);
	assert_int_equal(rd(&r, 0x28), 0xfc0);
	wr(&r, 0x20, 0x0);
	wr(&r, 0x28, 0xfff);
	wr(&r, 0x20, 0x8);				/* CMDQEN: QUEUE_* locked */
	wr(&r, 0x28, 0);
	assert_int_equal(rd(&r, 0x28), 0x03f);
	/* CR2 (6.3.12): RECINVSID only (no Hyp, BTM, ATSRECERR). */
	wr(&r, 0x20, 0x0);
	wr(&r, 0x2c, 0xffffffffu);
	assert_int_equal(rd(&r, 0x2c), 0x2);
	/* GBPA (6.3.14): a write without Update is IGNORED; with it the
	 * fields [20:16], [13:8], [4:0] are stored, Update reads 0. */
	wr(&r, 0x44, 0x0);
	assert_int_equal(rd(&r, 0x44), 1u << 20);	/* reset: ABORT */
	wr(&r, 0x44, 0xffffffffu);
	assert_int_equal(rd(&r, 0x44), 0x1f3f1f);
	/* Guarded base registers and pointers (6.3.23-29). */
	wr(&r, 0x20, 0xd);
	wr(&r, 0x88, 0);				/* STRTAB_BASE_CFG */
	assert_int_equal(rd(&r, 0x88), 8);
	wr(&r, 0x90, CMDQ | 4);				/* CMDQ_BASE */
	assert_int_equal(rd(&r, 0x90), CMDQ | 8);
	wr(&r, 0xa0, EVTQ | 4);				/* EVENTQ_BASE */
	assert_int_equal(rd(&r, 0xa0), EVTQ | 6);
	/* 6.2: both 32-bit halves of a 64-bit register are accessible on
	 * their own, [63:32] at +4; a write to one keeps the other. */
	wr(&r, 0x20, 0x9);				/* EVENTQEN off */
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xa4, 4, 0x000f1234, r.cycle), 0);
	assert_int_equal(rd(&r, 0xa0), 0x000f123400000000ull | EVTQ | 6);
	assert_int_equal(iopt_smmuv3_mmio_write(r.s, 0xa0, 4, 0x80001005, r.cycle), 0);
	uint64_t lo, hi;

	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0xa0, 4, &lo, r.cycle), 0);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0xa4, 4, &hi, r.cycle), 0);
	assert_int_equal(lo, 0x80001005);		/* ADDR [51:5], LOG2SIZE */
	assert_int_equal(hi, 0x000f1234);		/* [51:32]; [63:52] RES0 */
	wr(&r, 0xa0, EVTQ | 6);
	wr(&r, 0x20, 0xd);
	/* GERRORN (6.3.20): the defined fields as written; GERROR is RO. */
	wr(&r, 0x64, 0xffffffffu);
	assert_int_equal(rd(&r, 0x64), 0x1b5);		/* 0, 2, 4, 5, 7, 8 */
	wr(&r, 0x60, 0xffffffffu);
	assert_int_equal(rd(&r, 0x60), 0);
	wr(&r, 0x64, 0);
	teardown_rig(&r);

	/* Without MSIs the *_IRQ_CFGn registers are RES0 and GERROR's MSI
	 * abort bits do not exist. */
	iopt_smmuv3_default_params(&p);
	p.msi = false;
	setup_rig(&r, &p);
	wr(&r, 0x50, 0);
	wr(&r, 0x70, 0x1234);
	assert_int_equal(rd(&r, 0x70), 0);
	wr(&r, 0xb8, 0x1234);
	assert_int_equal(rd(&r, 0xb8), 0);
	wr(&r, 0x64, 0xffffffffu);
	assert_int_equal(rd(&r, 0x64), 0x105);
	teardown_rig(&r);
}

/*
 * Aborts on the command queue's memory (7.1, 4.7.3, 6.3.19): a command
 * fetch that aborts stops the queue with CONS.ERR = CERROR_ABT (0x02),
 * CONS.RD at the command and CMDQ_ERR active; a CMD_SYNC whose MSI write
 * aborts completes (consumed, no command error) and activates
 * MSI_CMDQ_ABT_ERR [4].
 */
static void test_cmdq_aborts(void **state)
{
	struct rig r;

	(void)state;
	setup_rig(&r, NULL);
	put_raw(&r, OP(0x46) | SYNC_CS(1) | SYNC_DATA(1), SYNC_ADDR(0x10000000000ull));
	run_queue(&r);
	assert_int_equal(CONS_RD(rd(&r, R_CONS)), 1);
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 0x11, 0x10);
	assert_int_equal(r.irqs[IOPT_SMMUV3_IRQ_GERROR], 1);
	wr(&r, 0x64, rd(&r, 0x60));
	/* The queue moved to memory that aborts. */
	wr(&r, 0x20, 0x5);				/* CMDQEN off */
	wr(&r, 0x90, 0x10000000000ull | 8);
	wr(&r, 0x9c, 3);				/* CONS while disabled */
	wr(&r, 0x20, 0xd);
	r.prod = 4;
	run_queue(&r);
	uint64_t cons = rd(&r, R_CONS);

	assert_int_equal(CONS_RD(cons), 3);
	assert_int_equal(CONS_ERR(cons), 2);		/* CERROR_ABT */
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 1, 1);
	assert_int_equal(iopt_smmuv3_next_event(r.s), UINT64_MAX);
	/* 6.3.28: with CMDQEN = 0 software writes RD; a written ERR is
	 * ignored or taken: never anything else. */
	wr(&r, 0x20, 0x5);
	wr(&r, 0x9c, 0x7f000001u);
	cons = rd(&r, R_CONS);
	assert_int_equal(CONS_RD(cons), 1);
	assert_true(CONS_ERR(cons) == 2 || CONS_ERR(cons) == 0x7f);
	teardown_rig(&r);
}

/*
 * Queue bases and sizes (6.3.26, 6.3.29): the effective base is ADDR
 * aligned down to the larger of the queue's size in bytes and 32; a
 * LOG2SIZE above IDR1.CMDQS/EVENTQS reads back as written but is used as
 * the maximum.
 */
static void test_queue_base_and_size(void **state)
{
	struct rig r;
	struct iopt_smmuv3_params p;

	(void)state;
	setup_rig(&r, NULL);
	/* 256 commands (4 KiB) at CMDQ + 0x40: the queue is at CMDQ. */
	wr(&r, 0x20, 0x5);
	wr(&r, 0x90, (CMDQ + 0x40) | 8);
	wr(&r, 0x20, 0xd);
	uint64_t w[2] = { OP(0x7f), 0 };		/* illegal, if read */

	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 0x40, 16), w, 16);
	assert_int_equal(raw_err(&r, OP(0x30), 0), 0);	/* read from CMDQ */
	/* 64 events (2 KiB) at EVTQ + 0x20: records land at EVTQ. */
	wr(&r, 0x20, 0x9);
	wr(&r, 0xa0, (EVTQ + 0x20) | 6);
	wr(&r, 0x20, 0xd);
	memset(iopt_physmem_ptr(r.pm, EVTQ, 64), 0, 64);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_SMMUV3_EVT_C_BAD_STE);
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_SMMUV3_EVT_C_BAD_STE);
	teardown_rig(&r);

	/* CMDQS = EVENTQS = 2: LOG2SIZE 8 reads back, 4 entries are used
	 * (PROD and CONS keep index and wrap bits [2:0]). */
	iopt_smmuv3_default_params(&p);
	p.cmdqs = 2;
	p.evtqs = 2;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x4) >> 21 & 31, 2);
	assert_int_equal(rd(&r, 0x90) & 31, 8);
	for (int i = 0; i < 4; i++)
		put_raw(&r, OP(0x30), 0);
	wr(&r, 0x98, 4);				/* full: wrap set, index 0 */
	run_queue(&r);
	assert_int_equal(CONS_RD(rd(&r, R_CONS)), 4);
	wr(&r, 0x98, 0xc);				/* bit 3: beyond the queue */
	assert_int_equal(rd(&r, 0x98), 4);
	for (int i = 0; i < 6; i++)
		xlate(&r, 7, 0x1000, false);
	assert_int_equal(rd(&r, 0x100a8), 0x80000004u);	/* 4 records, OVFLG */
	teardown_rig(&r);
}

/* ---- host failures: every allocation of create, the runner's thread ----
 * The test binary is linked with --wrap=calloc and --wrap=pthread_create
 * (tests/CMakeLists.txt): calls from the library reach these wrappers,
 * which fail on request.
 */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg);

static long calloc_fail_at;	/* fail the n-th calloc from now; 0: never */
static long calloc_calls;
static int thread_fail;		/* errno for the next pthread_create */

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_at && ++calloc_calls == calloc_fail_at)
		return NULL;
	return __real_calloc(n, size);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg)
{
	int e = thread_fail;

	thread_fail = 0;
	return e ? e : __real_pthread_create(t, a, fn, arg);
}

/* Each allocation of iopt_smmuv3_create failing in turn gives -ENOMEM and
 * leaks nothing (LeakSanitizer checks in the ASan build); bad cache
 * geometry is -EINVAL. */
static void test_create_alloc_failure(void **state)
{
	struct iopt_physmem *pm;
	struct iopt_smmuv3_params p;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv3 *s;
	long n;

	(void)state;
	assert_int_equal(iopt_physmem_create(MEM_BASE, 64u << 20, &pm), 0);
	iopt_smmu_physmem(pm, 10, &mem);
	iopt_smmuv3_default_params(&p);
	for (n = 1;; n++) {
		int rc;

		calloc_calls = 0;
		calloc_fail_at = n;
		rc = iopt_smmuv3_create(&p, &mem, NULL, NULL, &s);
		calloc_fail_at = 0;
		if (!rc)
			break;
		assert_int_equal(rc, -ENOMEM);
	}
	/* slot lanes, walk lanes, configuration cache, TLB (entries,
	 * round-robin state and occupied-set bitmap), walk cache (the same)
	 * and the model: 10. */
	assert_int_equal(n, 11);
	iopt_smmuv3_destroy(s);
	/* Bad geometry is the caller's: -EINVAL, before any allocation. */
	p.tlb.ways = 3;
	calloc_calls = 0;
	calloc_fail_at = 1;
	assert_int_equal(iopt_smmuv3_create(&p, &mem, NULL, NULL, &s), -EINVAL);
	calloc_fail_at = 0;
	assert_int_equal(calloc_calls, 0);
	iopt_smmuv3_default_params(&p);
	p.walk.entries = 96;			/* 24 sets: not a power of two */
	assert_int_equal(iopt_smmuv3_create(&p, &mem, NULL, NULL, &s), -EINVAL);
	iopt_smmuv3_default_params(&p);
	p.tlb.repl = (enum iopt_smmu_repl)7;
	assert_int_equal(iopt_smmuv3_create(&p, &mem, NULL, NULL, &s), -EINVAL);
	iopt_physmem_destroy(pm);
}

/* A runner whose thread cannot start reports the thread library's error
 * (-EAGAIN), leaves nothing attached (late cycles are rejected again) and
 * a later start works. */
static void test_runner_start_failure(void **state)
{
	struct rig r;
	struct iopt_smmuv3_runner *run = NULL;
	uint64_t v;

	(void)state;
	setup_rig(&r, NULL);
	r.cycle = 100;
	rd(&r, 0x20);
	thread_fail = EAGAIN;
	assert_int_equal(iopt_smmuv3_runner_start(r.s, 1.0, &run), -EAGAIN);
	assert_null(run);
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x20, 4, &v, 50), -EINVAL);
	calloc_calls = 0;
	calloc_fail_at = 1;
	assert_int_equal(iopt_smmuv3_runner_start(r.s, 1.0, &run), -ENOMEM);
	calloc_fail_at = 0;
	assert_int_equal(iopt_smmuv3_runner_start(r.s, 1.0, &run), 0);
	/* Attached: a cycle behind the model's time is taken as its time. */
	assert_int_equal(iopt_smmuv3_mmio_read(r.s, 0x20, 4, &v, 50), 0);
	iopt_smmuv3_runner_stop(run);
	teardown_rig(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers),
		cmocka_unit_test(test_integration_s1),
		cmocka_unit_test(test_commands_errors_and_sync),
		cmocka_unit_test(test_bad_config_events),
		cmocka_unit_test(test_stage2_two_level_and_determinism),
		cmocka_unit_test(test_two_level_cds),
		cmocka_unit_test(test_free_running),
		cmocka_unit_test(test_walk_cache),
		cmocka_unit_test(test_ats_and_event_fields),
		cmocka_unit_test(test_irq_msis),
		cmocka_unit_test(test_cd_ste_fields),
		cmocka_unit_test(test_aborts_and_addr_size),
		cmocka_unit_test(test_cfgi_commands),
		cmocka_unit_test(test_cmd_legality),
		cmocka_unit_test(test_cmd_timing),
		cmocka_unit_test(test_time_never_goes_back),
		cmocka_unit_test(test_walk_cache_latency),
		cmocka_unit_test(test_sid32_log2size32),
		cmocka_unit_test(test_stream_table_cfg),
		cmocka_unit_test(test_eventq_abort),
		cmocka_unit_test(test_register_rules),
		cmocka_unit_test(test_cmdq_aborts),
		cmocka_unit_test(test_queue_base_and_size),
		cmocka_unit_test(test_create_alloc_failure),
		cmocka_unit_test(test_runner_start_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
