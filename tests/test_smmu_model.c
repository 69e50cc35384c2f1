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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmu.h>

#include "tutil.h"

#define MEM_BASE 0x80000000ull
#define STRTAB	(MEM_BASE + 0x000000)	/* 256 STEs */
#define CMDQ	(MEM_BASE + 0x010000)	/* 256 commands */
#define EVTQ	(MEM_BASE + 0x020000)	/* 64 events */
#define CDTAB	(MEM_BASE + 0x030000)
#define MSI	(MEM_BASE + 0x040000)
#define L2STE	(MEM_BASE + 0x050000)

struct rig {
	struct iopt_physmem *pm;
	struct iopt_smmu *s;
	struct iopt_smmu_mem mem;
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

	assert_int_equal(iopt_smmu_mmio_read(r->s, off, off == 0x80 || off == 0x90 ||
					     off == 0xa0 ? 8 : 4, &v, r->cycle), 0);
	return v;
}

static void wr(struct rig *r, uint64_t off, uint64_t v)
{
	assert_int_equal(iopt_smmu_mmio_write(r->s, off, off == 0x80 || off == 0x90 ||
					      off == 0xa0 ? 8 : 4, v, r->cycle), 0);
}

static void setup_rig(struct rig *r, const struct iopt_smmu_params *p)
{
	struct iopt_smmu_params d;

	memset(r, 0, sizeof(*r));
	assert_int_equal(iopt_physmem_create(MEM_BASE, 64u << 20, &r->pm), 0);
	/* Reserve the fixed structures, then let page tables allocate. */
	uint64_t pa;

	assert_int_equal(iopt_physmem_alloc(r->pm, 1u << 20, &pa), 0);
	assert_int_equal(pa, MEM_BASE);
	iopt_smmu_physmem(r->pm, 10, &r->mem);
	if (!p) {
		iopt_smmu_default_params(&d);
		p = &d;
	}
	assert_int_equal(iopt_smmu_create(p, &r->mem, on_irq, r, &r->s), 0);
	wr(r, 0x80, STRTAB);			/* STRTAB_BASE */
	wr(r, 0x88, 8);				/* linear, 256 entries */
	wr(r, 0x90, CMDQ | 8);			/* CMDQ_BASE, 256 */
	wr(r, 0xa0, EVTQ | 6);			/* EVENTQ_BASE, 64 */
	wr(r, 0x2c, 0x6);			/* CR2: RECINVSID, PTM */
	wr(r, 0x50, 0x7);			/* IRQ_CTRL */
	wr(r, 0x20, 0x1 | 0x4 | 0x8);		/* SMMUEN, EVENTQEN, CMDQEN */
	assert_int_equal(rd(r, 0x24), 0xd);	/* CR0ACK */
}

static void teardown_rig(struct rig *r)
{
	iopt_smmu_destroy(r->s);
	iopt_physmem_destroy(r->pm);
}

static void put_ste(struct rig *r, uint32_t sid, const struct iopt_ste *ste,
		    uint64_t base)
{
	uint64_t w[8];

	iopt_ste_encode(ste, w);
	memcpy(iopt_physmem_ptr(r->pm, base + sid * 64ull, 64), w, 64);
}

static void put_cd(struct rig *r, uint64_t pa, const struct iopt_cd *cd)
{
	uint64_t w[8];

	iopt_cd_encode(cd, w);
	memcpy(iopt_physmem_ptr(r->pm, pa, 64), w, 64);
}

/* Queue commands and run the model until they have all completed. */
static void cmds(struct rig *r, const struct iopt_smmu_cmd *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t w[2];

		assert_int_equal(iopt_smmu_cmd_encode(&c[i], w), 0);
		memcpy(iopt_physmem_ptr(r->pm, CMDQ + (r->prod & 255) * 16ull, 16), w,
		       16);
		r->prod = (r->prod + 1) & 511;
	}
	wr(r, 0x98, r->prod);
	uint64_t next;

	while ((next = iopt_smmu_next_event(r->s)) != UINT64_MAX) {
		r->cycle = next;
		iopt_smmu_run_until(r->s, r->cycle);
	}
}

/* Queue one command with an unknown opcode as the first entry; run to it. */
static void queue_illegal(struct rig *r)
{
	uint64_t bad[2] = { 0x7f, 0 };

	memcpy(iopt_physmem_ptr(r->pm, CMDQ, 16), bad, 16);
	r->prod = 1;
	wr(r, 0x98, 1);
	r->cycle = iopt_smmu_next_event(r->s);
	iopt_smmu_run_until(r->s, r->cycle);
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

static struct iopt_smmu_resp xlate(struct rig *r, uint32_t sid, uint64_t addr,
				   bool write)
{
	struct iopt_smmu_txn t = { .sid = sid, .addr = addr, .write = write,
				   .priv = true };
	struct iopt_smmu_resp resp;

	assert_int_equal(iopt_smmu_translate(r->s, &t, r->cycle, &resp), 0);
	r->cycle = resp.ready + 1;
	return resp;
}

/* A 48-bit, 4K-granule stage 1 table in the rig's memory, and its CD. */
static struct iopt_pgtable *s1_table(struct rig *r, uint16_t asid,
				     struct iopt_cd *cd)
{
	struct iopt_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r->pm };
	struct iopt_pgtable *pt;

	assert_int_equal(iopt_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_cd_from_pgtable(pt, asid, cd), 0);
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
	assert_int_equal(v >> 2 & 3, 2);		/* TTF: AArch64 */
	assert_int_equal(v >> 6 & 3, 2);		/* HTTU: AF + dirty */
	assert_int_equal(v >> 13 & 1, 1);		/* MSI */
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
	/* Control registers read back what was written, within their
	 * fields; IRQ_CTRLACK follows IRQ_CTRL. */
	wr(&r, 0x50, 0xff);
	assert_int_equal(rd(&r, 0x50), 0x7);
	assert_int_equal(rd(&r, 0x54), 0x7);
	wr(&r, 0x2c, 0xff);				/* CR2: E2H, RECINVSID, PTM */
	assert_int_equal(rd(&r, 0x2c), 0x7);
	wr(&r, 0x70, 0x12345678);			/* GERROR_IRQ_CFG1 */
	assert_int_equal(rd(&r, 0x70), 0x12345678);
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0xb0, 8, 0x8000000003ull, 0), 0);
	assert_int_equal(iopt_smmu_mmio_read(r.s, 0xb0, 8, &v, 0), 0);
	assert_int_equal(v, 0x8000000000ull);		/* ADDR [51:2] */
	/* Queue pointers owned by the SMMU ignore writes while enabled. */
	wr(&r, 0x9c, 5);				/* CMDQ_CONS */
	assert_int_equal(rd(&r, 0x9c), 0);
	wr(&r, 0x100a8, 5);				/* EVENTQ_PROD */
	assert_int_equal(rd(&r, 0x100a8), 0);
	/* RAZ/WI and bad sizes. */
	wr(&r, 0xfe0, 0x1234);
	assert_int_equal(rd(&r, 0xfe0), 0);
	assert_int_equal(iopt_smmu_mmio_read(r.s, 0x2, 4, &v, 0), -EINVAL);
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0x20, 2, 0, 0), -EINVAL);
	/* Disabled: GBPA aborts by default, bypasses when cleared. */
	wr(&r, 0x20, 0);
	assert_int_equal(xlate(&r, 0, 0x1234, false).fault, IOPT_EVT_ABORT);
	wr(&r, 0x44, 1u << 31);				/* UPDATE, ABORT=0 */
	struct iopt_smmu_resp resp = xlate(&r, 0, 0x1234, false);

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
	struct iopt_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm };
	struct iopt_pgtable *pt;
	struct iopt_cd cd;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = CDTAB };

	assert_int_equal(iopt_alloc(&pc, &pt), 0);
	assert_int_equal(iopt_cd_from_pgtable(pt, 42, &cd), 0);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 3, &ste, STRTAB);

	uint64_t vas[64];
	unsigned prots[64], n = 0;

	while (n < 64) {
		uint64_t sz = tu_rand(&rng) & 1 ? 0x1000 : 0x200000;
		uint64_t va = (tu_rand(&rng) % (1ull << 40)) & ~(sz - 1);
		uint64_t pa = (tu_rand(&rng) % (1ull << 40)) & ~(sz - 1);
		unsigned prot = IOPT_READ | (tu_rand(&rng) & 1 ? IOPT_WRITE : 0);

		if (iopt_map_pages(pt, va, pa, sz, 1, prot, NULL))
			continue;
		vas[n] = va + (tu_rand(&rng) % sz);
		prots[n++] = prot;
	}
	for (unsigned pass = 0; pass < 2; pass++)	/* walks, then TLB hits */
		for (unsigned i = 0; i < n; i++) {
			uint64_t pa;

			assert_int_equal(iopt_iova_to_phys(pt, vas[i], &pa), 0);
			struct iopt_smmu_resp resp = xlate(&r, 3, vas[i], false);

			assert_int_equal(resp.fault, 0);
			assert_int_equal(resp.oa, pa);
			resp = xlate(&r, 3, vas[i], true);
			assert_int_equal(resp.fault, prots[i] & IOPT_WRITE ? 0 :
					 IOPT_EVT_F_PERMISSION);
		}
	struct iopt_smmu_stats st;

	iopt_smmu_get_stats(r.s, &st);
	assert_true(st.tlb_hits >= n);
	/* Each fault recorded, or lost once the 64-entry queue filled. */
	assert_int_equal(st.events + st.events_lost, st.faults);
	assert_true(st.faults > 0);
	/* Permission fault record: type, StreamID, RnW=0 (write), address. */
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_EVT_F_PERMISSION);
	assert_int_equal(evt_word(&r, 0, 0) >> 32, 3);
	assert_int_equal(evt_word(&r, 0, 1) >> 35 & 1, 0);
	/* The driver consumes the queue (and acknowledges any overflow). */
	uint64_t prod = rd(&r, 0x100a8);

	wr(&r, 0x100ac, prod);
	unsigned evbefore = (unsigned)(prod & 63);

	/* Unmap: the TLB still holds it until TLBI + SYNC. */
	uint64_t va = vas[0] & ~0xfffull, pa;

	assert_int_equal(iopt_iova_to_phys(pt, va, &pa), 0);
	assert_true(iopt_unmap_pages(pt, va, 0x1000, 1, NULL) > 0 ||
		    iopt_unmap_pages(pt, va & ~0x1fffffull, 0x200000, 1, NULL) > 0);
	assert_int_equal(xlate(&r, 3, va, false).fault, 0);	/* stale */
	struct iopt_smmu_cmd c[2] = {
		{ .opcode = IOPT_CMD_TLBI_NH_VA, .asid = 42, .addr = va },
		{ .opcode = IOPT_CMD_SYNC },
	};

	cmds(&r, c, 2);
	assert_int_equal(rd(&r, 0x9c) & 0x1ff, 2);		/* CONS */
	struct iopt_smmu_resp resp = xlate(&r, 3, va + 8, false);

	assert_int_equal(resp.fault, IOPT_EVT_F_TRANSLATION);
	assert_int_equal(rd(&r, 0x100a8) & 127, ((prod & 127) + 1) & 127);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 0) & 0xff,
			 IOPT_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 2), va + 8);
	assert_int_equal(evt_word(&r, (unsigned)evbefore, 1) >> 35 & 1, 1); /* read */
	assert_true(r.irqs[IOPT_SMMU_IRQ_EVTQ] > 0);
	iopt_free(pt);
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
	assert_int_equal(r.irqs[IOPT_SMMU_IRQ_GERROR], 1);
	assert_int_equal(iopt_smmu_next_event(r.s), UINT64_MAX);	/* stopped */
	/* Software replaces it with a CMD_SYNC and acknowledges. */
	struct iopt_smmu_cmd sync = { .opcode = IOPT_CMD_SYNC, .cs = IOPT_SYNC_CS_IRQ,
				      .msi_addr = MSI, .msi_data = 0xcafe };
	uint64_t w[2];

	iopt_smmu_cmd_encode(&sync, w);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ, 16), w, 16);
	wr(&r, 0x64, rd(&r, 0x60));
	/* A TLBI ahead of... the SYNC completes after it, with its MSI. */
	struct iopt_smmu_cmd more[2] = {
		{ .opcode = IOPT_CMD_TLBI_NSNH_ALL },
		{ .opcode = IOPT_CMD_SYNC, .cs = IOPT_SYNC_CS_IRQ, .msi_addr = MSI + 8,
		  .msi_data = 0xbeef },
	};
	uint64_t w0[2], w1[2];

	iopt_smmu_cmd_encode(&more[0], w0);
	iopt_smmu_cmd_encode(&more[1], w1);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 16, 16), w0, 16);
	memcpy(iopt_physmem_ptr(r.pm, CMDQ + 32, 16), w1, 16);
	r.prod = 3;
	wr(&r, 0x98, 3);
	uint32_t *msi = iopt_physmem_ptr(r.pm, MSI, 16);
	uint64_t first = iopt_smmu_next_event(r.s);

	assert_true(first != UINT64_MAX);
	iopt_smmu_run_until(r.s, first - 1);
	assert_int_equal(msi[0], 0);			/* not yet */
	iopt_smmu_run_until(r.s, first);
	assert_int_equal(msi[0], 0xcafe);
	assert_int_equal(msi[2], 0);
	uint64_t second = iopt_smmu_next_event(r.s);	/* the TLBI */
	uint64_t third;

	iopt_smmu_run_until(r.s, second);
	third = iopt_smmu_next_event(r.s);		/* the second SYNC */
	assert_true(third > second && second > first);
	iopt_smmu_run_until(r.s, third - 1);
	assert_int_equal(msi[2], 0);
	iopt_smmu_run_until(r.s, third);
	assert_int_equal(msi[2], 0xbeef);
	r.cycle = third;
	assert_int_equal(rd(&r, 0x9c) & 0x1ff, 3);	/* CONS.ERR keeps its code */
	/* CS=SEV without SEV support is illegal; unknown CS too. */
	struct iopt_smmu_stats st;

	iopt_smmu_get_stats(r.s, &st);
	assert_int_equal(st.syncs, 2);
	assert_int_equal(st.cmd_errors, 1);
	teardown_rig(&r);
}

static void test_bad_config_events(void **state)
{
	struct rig r;
	struct iopt_ste ste = { 0 };

	(void)state;
	setup_rig(&r, NULL);
	/* StreamID beyond the table (256 entries). */
	assert_int_equal(xlate(&r, 300, 0x1000, false).fault, IOPT_EVT_C_BAD_STREAMID);
	/* Invalid STE. */
	assert_int_equal(xlate(&r, 1, 0x1000, false).fault, IOPT_EVT_C_BAD_STE);
	/* Config 0: abort without an event. */
	ste.valid = true;
	put_ste(&r, 2, &ste, STRTAB);
	struct iopt_smmu_stats st;

	iopt_smmu_get_stats(r.s, &st);
	uint64_t ev = st.events;

	assert_int_equal(xlate(&r, 2, 0x1000, false).fault, IOPT_EVT_ABORT);
	iopt_smmu_get_stats(r.s, &st);
	assert_int_equal(st.events, ev);
	/* Reserved Config 0b0xx behaves as 0b000 (5.2): abort, no event. */
	ste.config = 2;
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(xlate(&r, 4, 0x1000, false).fault, IOPT_EVT_ABORT);
	iopt_smmu_get_stats(r.s, &st);
	assert_int_equal(st.events, ev);
	/* Bypass; a SubstreamID there is refused. */
	ste.config = IOPT_STE_BYPASS;
	put_ste(&r, 5, &ste, STRTAB);
	assert_int_equal(xlate(&r, 5, 0xabc000, false).oa, 0xabc000);
	struct iopt_smmu_txn t = { .sid = 5, .ssv = true, .ssid = 1, .addr = 0 };
	struct iopt_smmu_resp resp;

	iopt_smmu_translate(r.s, &t, r.cycle, &resp);
	assert_int_equal(resp.fault, IOPT_EVT_C_BAD_SUBSTREAMID);
	/* Event records for C_BAD_STREAMID and C_BAD_STE. */
	assert_int_equal(evt_word(&r, 0, 0) & 0xff, IOPT_EVT_C_BAD_STREAMID);
	assert_int_equal(evt_word(&r, 0, 0) >> 32, 300);
	assert_int_equal(evt_word(&r, 1, 0) & 0xff, IOPT_EVT_C_BAD_STE);
	/* CR2.RECINVSID = 0: a bad StreamID aborts without a record. */
	unsigned e = evt_next(&r);

	wr(&r, 0x2c, 0x4);
	assert_int_equal(xlate(&r, 300, 0x1000, false).fault, IOPT_EVT_C_BAD_STREAMID);
	assert_int_equal(evt_next(&r), e);
	wr(&r, 0x2c, 0x6);
	/* Overflow: 64 entries, none consumed. */
	for (int i = 0; i < 80; i++)
		xlate(&r, 1, 0x1000, false);
	assert_int_equal(rd(&r, 0x100a8) >> 31, 1);		/* OVFLG */
	iopt_smmu_get_stats(r.s, &st);
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
		struct iopt_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S2, .granule = 16384,
				       .ias = 40, .oas = 40, .coherent_walk = true,
				       .mem = iopt_physmem_mem_ops(), .mem_ctx = r.pm };
		struct iopt_pgtable *pt;
		struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S2 };

		assert_int_equal(iopt_alloc(&pc, &pt), 0);
		assert_int_equal(iopt_ste_s2_from_pgtable(pt, 7, &ste), 0);
		put_ste(&r, 5, &ste, L2STE);
		assert_int_equal(iopt_map_pages(pt, 0x4000000, 0x9000000, 0x4000, 64,
						IOPT_READ | IOPT_WRITE, NULL), 0);
		for (int i = 0; i < 40; i++) {
			uint64_t ipa = 0x4000000 + (uint64_t)(i % 70) * 0x4000 + 0x10;
			struct iopt_smmu_resp resp = xlate(&r, 0x305, ipa, i & 1);

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
				 IOPT_EVT_C_BAD_STREAMID);
		iopt_free(pt);
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
	struct iopt_cd cd;
	const uint64_t l1 = CDTAB, l2 = CDTAB + 0x1000;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1, .s1_fmt = 1,
				.s1_cd_max = 8, .s1_context_ptr = l1, .s1_dss = 0 };

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 77, &cd);
	assert_int_equal(iopt_map_pages(pt, 0x10000, 0x20000, 0x1000, 1, IOPT_READ,
					NULL), 0);
	put_cd(&r, l2 + 5 * 64, &cd);			/* SubstreamID 2*64+5 */
	uint64_t l1cd = l2 | 1;

	memcpy(iopt_physmem_ptr(r.pm, l1 + 2 * 8, 8), &l1cd, 8);
	put_ste(&r, 9, &ste, STRTAB);
	struct iopt_smmu_txn t = { .sid = 9, .ssv = true, .ssid = 2 * 64 + 5,
				   .addr = 0x10008, .priv = true };
	struct iopt_smmu_resp resp;

	assert_int_equal(iopt_smmu_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x20008);
	t.ssid = 3 * 64;				/* L1CD not valid */
	assert_int_equal(iopt_smmu_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_EVT_C_BAD_SUBSTREAMID);
	t.ssid = 256;					/* >= 2^S1CDMax */
	assert_int_equal(iopt_smmu_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_EVT_C_BAD_SUBSTREAMID);
	t.ssv = false;					/* S1DSS 0: terminate */
	assert_int_equal(iopt_smmu_translate(r.s, &t, r.cycle, &resp), 0);
	assert_int_equal(resp.fault, IOPT_EVT_F_STREAM_DISABLED);
	iopt_free(pt);
	teardown_rig(&r);
}

/* The free-running adapter completes a CMD_SYNC that nobody runs by hand;
 * the caller polls the MSI location as a driver would. */
static void test_free_running(void **state)
{
	struct rig r;
	struct iopt_smmu_runner *run;

	(void)state;
	setup_rig(&r, NULL);
	assert_int_equal(iopt_smmu_runner_start(r.s, 0, &run), -EINVAL);
	assert_int_equal(iopt_smmu_runner_start(r.s, 1.0, &run), 0);
	struct iopt_smmu_cmd c[2] = {
		{ .opcode = IOPT_CMD_TLBI_NSNH_ALL },
		{ .opcode = IOPT_CMD_SYNC, .cs = IOPT_SYNC_CS_IRQ, .msi_addr = MSI,
		  .msi_data = 0x5a5a },
	};
	for (int i = 0; i < 2; i++) {
		uint64_t w[2];

		iopt_smmu_cmd_encode(&c[i], w);
		memcpy(iopt_physmem_ptr(r.pm, CMDQ + i * 16ull, 16), w, 16);
	}
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0x98, 4, 2,
					      iopt_smmu_runner_now(run)), 0);
	uint32_t *msi = iopt_physmem_ptr(r.pm, MSI, 4);
	uint64_t t0 = iopt_smmu_runner_now(run);

	while (__atomic_load_n(msi, __ATOMIC_ACQUIRE) != 0x5a5a)
		assert_true(iopt_smmu_runner_now(run) - t0 < 2000000000ull);
	uint64_t cons;

	assert_int_equal(iopt_smmu_mmio_read(r.s, 0x9c, 4, &cons,
					     iopt_smmu_runner_now(run)), 0);
	assert_int_equal(cons & 0x1ff, 2);
	iopt_smmu_runner_stop(run);
	teardown_rig(&r);
}

/* Fetches of the last translation: the counters' difference. */
static uint64_t fetches_of(struct rig *r, uint32_t sid, uint64_t va,
			   uint64_t *oa)
{
	struct iopt_smmu_stats a, b;

	iopt_smmu_get_stats(r->s, &a);
	struct iopt_smmu_resp resp = xlate(r, sid, va, false);

	iopt_smmu_get_stats(r->s, &b);
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
	struct iopt_cd cd;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = CDTAB };
	const uint64_t va = 0x40000000, far = 0x7f0000000000ull;
	uint64_t oa;

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 9, &cd);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(iopt_map_pages(pt, va, 0x10000000, 0x1000, 8, IOPT_READ,
					NULL), 0);
	assert_int_equal(iopt_map_pages(pt, far, 0x20000000, 0x1000, 1, IOPT_READ,
					NULL), 0);

	assert_int_equal(fetches_of(&r, 4, va, &oa), 4);
	assert_int_equal(oa, 0x10000000);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 1);
	assert_int_equal(oa, 0x10001000);
	assert_int_equal(fetches_of(&r, 4, far, &oa), 4);	/* other L0 entry */
	assert_int_equal(oa, 0x20000000);

	struct iopt_smmu_cmd leaf[2] = {
		{ .opcode = IOPT_CMD_TLBI_NH_VA, .asid = 9, .addr = va + 0x1000,
		  .leaf = true },
		{ .opcode = IOPT_CMD_SYNC },
	};

	cmds(&r, leaf, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 1);
	struct iopt_smmu_cmd asid[2] = {
		{ .opcode = IOPT_CMD_TLBI_NH_ASID, .asid = 9 },
		{ .opcode = IOPT_CMD_SYNC },
	};

	cmds(&r, asid, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x2000, &oa), 4);
	assert_int_equal(oa, 0x10002000);

	/* Replace the last-level table with a block; invalidate its walk. */
	assert_int_equal(iopt_unmap_pages(pt, va, 0x200000, 1, NULL), 0x200000);
	assert_int_equal(iopt_map_pages(pt, va, 0x30000000, 0x200000, 1, IOPT_READ,
					NULL), 0);
	struct iopt_smmu_cmd walk[2] = {
		{ .opcode = IOPT_CMD_TLBI_NH_VA, .asid = 9, .addr = va },
		{ .opcode = IOPT_CMD_SYNC },
	};

	cmds(&r, walk, 2);
	/* The 2 MiB block is read at level 2: three reads, nothing cached. */
	assert_int_equal(fetches_of(&r, 4, va + 0x3000, &oa), 3);
	assert_int_equal(oa, 0x30003000);
	/* A range TLBI (4K granule, 2^9 pages, Leaf=0) removes the table
	 * entries of the walk too. */
	struct iopt_smmu_cmd range[2] = {
		{ .opcode = IOPT_CMD_TLBI_NH_VA, .asid = 9, .addr = va, .tg = 1,
		  .scale = 9 },
		{ .opcode = IOPT_CMD_SYNC },
	};

	cmds(&r, range, 2);
	assert_int_equal(fetches_of(&r, 4, va + 0x4000, &oa), 3);
	assert_int_equal(oa, 0x30004000);
	iopt_free(pt);

	/* Without walk caches every walk reads every level. */
	struct iopt_smmu_params p;

	teardown_rig(&r);
	iopt_smmu_default_params(&p);
	p.walk.enable = false;
	setup_rig(&r, &p);
	pt = s1_table(&r, 9, &cd);
	put_cd(&r, CDTAB, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	assert_int_equal(iopt_map_pages(pt, va, 0x10000000, 0x1000, 2, IOPT_READ,
					NULL), 0);
	assert_int_equal(fetches_of(&r, 4, va, &oa), 4);
	assert_int_equal(fetches_of(&r, 4, va + 0x1000, &oa), 4);
	iopt_free(pt);
	teardown_rig(&r);
}

static struct iopt_smmu_resp xlate_txn(struct rig *r, struct iopt_smmu_txn t)
{
	struct iopt_smmu_resp resp;

	assert_int_equal(iopt_smmu_translate(r->s, &t, r->cycle, &resp), 0);
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
	struct iopt_smmu_params p;
	struct iopt_pgtable *pt;
	struct iopt_cd cd;
	const uint64_t pa = 0x123456789000ull;
	struct iopt_smmu_txn tr = { .addr = pa + 0x10, .priv = true,
				    .translated = true };
	unsigned e;

	(void)state;
	/* No ATS: F_UUT with the incoming attributes and Reason 1. */
	setup_rig(&r, NULL);
	assert_int_equal(rd(&r, 0x0) >> 10 & 1, 0);		/* IDR0.ATS */
	e = evt_next(&r);
	tr.sid = 1;
	tr.exec = true;
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_EVT_F_UUT);
	assert_int_equal(evt_word(&r, e, 0), IOPT_EVT_F_UUT | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 1), 1ull << 35 | 1ull << 34 | 1ull << 33 | 1);
	assert_int_equal(evt_word(&r, e, 2), pa + 0x10);
	tr.exec = false;
	teardown_rig(&r);

	iopt_smmu_default_params(&p);
	p.ats = true;
	setup_rig(&r, &p);
	assert_int_equal(rd(&r, 0x0) >> 10 & 3, 3);		/* ATS, NS1ATS */
	pt = s1_table(&r, 3, &cd);
	assert_int_equal(iopt_map_pages(pt, 0x5000, 0x9000, 0x1000, 1,
					IOPT_READ | IOPT_WRITE, NULL), 0);
	put_cd(&r, CDTAB, &cd);
	for (uint32_t sid = 1; sid <= 4; sid++) {
		/* EATS 0, 1, 1 with bypass, 2. */
		struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
					.s1_context_ptr = CDTAB,
					.eats = sid == 4 ? 2 : sid > 1 };

		if (sid == 3)
			ste.config = IOPT_STE_BYPASS;
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
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_EVT_F_TRANSL_FORBIDDEN);
	assert_int_equal(evt_word(&r, e, 0), IOPT_EVT_F_TRANSL_FORBIDDEN | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 1), 0);		/* RnW = 0: write */
	assert_int_equal(evt_word(&r, e, 2), pa + 0x10);
	tr.write = false;
	tr.sid = 2;						/* EATS = 1 */
	struct iopt_smmu_resp resp = xlate_txn(&r, tr);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, pa + 0x10);
	tr.sid = 3;						/* bypass STE */
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_EVT_F_TRANSL_FORBIDDEN);
	tr.sid = 4;						/* EATS = 2 */
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_EVT_C_BAD_STE);
	/* Untranslated traffic on the same stream still translates. */
	struct iopt_smmu_txn un = { .sid = 2, .addr = 0x5008, .priv = true };

	resp = xlate_txn(&r, un);
	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x9008);
	/* Translation fault fields: InD for an instruction read, never for
	 * a write; PnU; RnW. */
	un.addr = 0x7000;
	un.exec = true;
	e = evt_next(&r);
	assert_int_equal(xlate_txn(&r, un).fault, IOPT_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 7);	/* RnW InD PnU */
	assert_int_equal(evt_word(&r, e, 1) >> 39 & 7, 2 << 1);	/* S2 0, CLASS IN */
	un.write = true;
	un.priv = false;
	e = evt_next(&r);
	assert_int_equal(xlate_txn(&r, un).fault, IOPT_EVT_F_TRANSLATION);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 0);
	/* SMMUEN = 0 forbids Translated traffic. */
	wr(&r, 0x20, 0x4 | 0x8 | 0x10);
	tr.sid = 2;
	assert_int_equal(xlate_txn(&r, tr).fault, IOPT_EVT_F_TRANSL_FORBIDDEN);
	iopt_free(pt);
	teardown_rig(&r);
}

/*
 * Event queue and GERROR interrupts as MSIs (6.3.20-22, 6.3.30-32): the
 * CFG1 data written to the CFG0 address instead of the wired line; a
 * failed event MSI sets GERROR.MSI_EVTQ_ABT_ERR; address 0 falls back to
 * the wired line.
 */
static void test_irq_msis(void **state)
{
	struct rig r;
	uint32_t *evt_msi, *gerr_msi;

	(void)state;
	setup_rig(&r, NULL);
	evt_msi = iopt_physmem_ptr(r.pm, MSI + 0x100, 4);
	gerr_msi = iopt_physmem_ptr(r.pm, MSI + 0x200, 4);
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0xb0, 8, MSI + 0x100, 0), 0);
	wr(&r, 0xb8, 0xabcd0001);
	wr(&r, 0xbc, 0x1f);
	assert_int_equal(rd(&r, 0xbc), 0x1f);
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0x68, 8, MSI + 0x200, 0), 0);
	wr(&r, 0x70, 0x6e770002);
	/* An event (C_BAD_STE: STE 7 is not valid): MSI, no wired line. */
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_EVT_C_BAD_STE);
	assert_int_equal(*evt_msi, 0xabcd0001);
	assert_int_equal(r.irqs[IOPT_SMMU_IRQ_EVTQ], 0);
	/* GERROR.CMDQ_ERR from an illegal command: the GERROR MSI. */
	queue_illegal(&r);
	assert_int_equal(rd(&r, 0x60) & 1, 1);
	assert_int_equal(*gerr_msi, 0x6e770002);
	assert_int_equal(r.irqs[IOPT_SMMU_IRQ_GERROR], 0);
	wr(&r, 0x64, rd(&r, 0x60));			/* acknowledge */
	/* An event MSI to an address with no memory: MSI_EVTQ_ABT_ERR, raised
	 * through the GERROR MSI. */
	*gerr_msi = 0;
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0xb0, 8, 0x10000000000ull, 0), 0);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_EVT_C_BAD_STE);
	assert_int_equal((rd(&r, 0x60) ^ rd(&r, 0x64)) & 0x20, 0x20);
	assert_int_equal(*gerr_msi, 0x6e770002);
	/* Address 0: the wired line again. */
	assert_int_equal(iopt_smmu_mmio_write(r.s, 0xb0, 8, 0, 0), 0);
	assert_int_equal(xlate(&r, 7, 0x1000, false).fault, IOPT_EVT_C_BAD_STE);
	assert_int_equal(r.irqs[IOPT_SMMU_IRQ_EVTQ], 1);
	teardown_rig(&r);
}

static unsigned xfault(struct rig *r, uint32_t sid, uint64_t addr, bool exec,
		       bool priv)
{
	struct iopt_smmu_txn t = { .sid = sid, .addr = addr, .exec = exec,
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
	struct iopt_cfg sc = { .fmt = IOPT_ARM_64_LPAE_S2, .granule = 4096,
			       .ias = 40, .oas = 40, .coherent_walk = true };
	struct iopt_pgtable *pt, *s2;
	struct iopt_cd base, cd;

	(void)state;
	setup_rig(&r, NULL);
	sc.mem = iopt_physmem_mem_ops();
	sc.mem_ctx = r.pm;
	pt = s1_table(&r, 5, &base);
	assert_int_equal(iopt_alloc(&sc, &s2), 0);
	assert_int_equal(iopt_map_pages(pt, 0x5000, 0x9000, 0x1000, 1,
					IOPT_READ | IOPT_WRITE, NULL), 0);
	assert_int_equal(iopt_map_pages(pt, 0x6000, 0xa000, 0x1000, 1, IOPT_READ,
					NULL), 0);
	assert_int_equal(iopt_map_pages(pt, 0x7000, 0xb000, 0x1000, 1,
					IOPT_READ | IOPT_PRIV, NULL), 0);
	/* One STE and CD per case: StreamID n uses the CD at CDTAB + 64n. */
	for (uint32_t sid = 1; sid <= 6; sid++) {
		struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
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
			 IOPT_EVT_F_TRANSLATION);
	/* WXN: writable pages do not execute, also from a TLB hit. */
	assert_int_equal(xfault(&r, 2, 0x5000, false, true), 0);
	assert_int_equal(xfault(&r, 2, 0x5000, true, true), IOPT_EVT_F_PERMISSION);
	assert_int_equal(xfault(&r, 2, 0x6000, true, true), 0);
	/* PAN: no privileged data access to unprivileged pages. */
	assert_int_equal(xfault(&r, 3, 0x5000, false, true), IOPT_EVT_F_PERMISSION);
	assert_int_equal(xfault(&r, 3, 0x5000, false, false), 0);
	assert_int_equal(xfault(&r, 3, 0x6000, true, true), 0);	/* fetch */
	assert_int_equal(xfault(&r, 3, 0x7000, false, true), 0);
	/* TBI0: the top byte is a tag. */
	struct iopt_smmu_txn tagged = { .sid = 4, .addr = 0xab00000000005008ull,
					.priv = true };
	struct iopt_smmu_resp resp = xlate_txn(&r, tagged);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, 0x9008);
	/* ILLEGAL CDs. */
	assert_int_equal(xfault(&r, 5, 0x5000, false, true), IOPT_EVT_C_BAD_CD);
	assert_int_equal(xfault(&r, 6, 0x5000, false, true), IOPT_EVT_C_BAD_CD);

	/* Nested: stage 2 maps the window holding the stage 1 tables as
	 * Device memory and the output pages as Normal memory; a VMID per
	 * stream, since the stage 2 settings differ. */
	assert_int_equal(iopt_map_pages(s2, MEM_BASE, MEM_BASE, 0x200000, 32,
					IOPT_READ | IOPT_WRITE | IOPT_MMIO, NULL), 0);
	assert_int_equal(iopt_map_pages(s2, 0, 0, 0x200000, 1,
					IOPT_READ | IOPT_WRITE | IOPT_CACHE, NULL), 0);
	for (uint32_t sid = 7; sid <= 9; sid++) {
		struct iopt_ste ste = { .valid = true, .config = IOPT_STE_NESTED,
					.s1_context_ptr = CDTAB };

		assert_int_equal(iopt_ste_s2_from_pgtable(s2, (uint16_t)sid, &ste), 0);
		ste.config = IOPT_STE_NESTED;
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

	assert_int_equal(xfault(&r, 8, 0x5008, false, true), IOPT_EVT_F_PERMISSION);
	assert_int_equal(evt_word(&r, e, 1) >> 39 & 7, 1);	/* S2, CD */
	assert_int_equal(evt_word(&r, e, 3), CDTAB);
	assert_int_equal(xfault(&r, 9, 0x5008, false, true), IOPT_EVT_C_BAD_STE);
	iopt_free(pt);
	iopt_free(s2);
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
	struct iopt_cd cd;
	unsigned e;

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 8, &cd);
	assert_int_equal(iopt_map_pages(pt, 0x5000, 1ull << 44, 0x1000, 1,
					IOPT_READ, NULL), 0);
	/* StreamID 1: CD table in a hole. */
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = hole };

	put_ste(&r, 1, &ste, STRTAB);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 1, 0x5000, false).fault, IOPT_EVT_F_CD_FETCH);
	assert_int_equal(evt_word(&r, e, 0), IOPT_EVT_F_CD_FETCH | 1ull << 32);
	assert_int_equal(evt_word(&r, e, 2), 0);
	assert_int_equal(evt_word(&r, e, 3), hole);
	/* StreamID 2: its CD's TTB0 in a hole: the level 0 descriptor read
	 * aborts. */
	struct iopt_cd bad = cd;

	bad.ttb0 = hole;
	put_cd(&r, CDTAB + 64, &bad);
	ste.s1_context_ptr = CDTAB + 64;
	put_ste(&r, 2, &ste, STRTAB);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 2, 0x5008, true).fault, IOPT_EVT_F_WALK_EABT);
	assert_int_equal(evt_word(&r, e, 2), 0x5008);
	assert_int_equal(evt_word(&r, e, 1) >> 33 & 7, 1);	/* write, PnU */
	assert_int_equal(evt_word(&r, e, 3), hole);		/* index 0 */
	/* StreamID 3: IPS 40 bits, an output at 2^44. */
	bad = cd;
	bad.ips = 2;
	put_cd(&r, CDTAB + 128, &bad);
	ste.s1_context_ptr = CDTAB + 128;
	put_ste(&r, 3, &ste, STRTAB);
	assert_int_equal(xlate(&r, 3, 0x5000, false).fault, IOPT_EVT_F_ADDR_SIZE);
	ste.s1_context_ptr = CDTAB + 192;			/* a good CD */
	put_cd(&r, CDTAB + 192, &cd);
	put_ste(&r, 4, &ste, STRTAB);
	struct iopt_smmu_resp resp = xlate(&r, 4, 0x5010, false);

	assert_int_equal(resp.fault, 0);
	assert_int_equal(resp.oa, (1ull << 44) + 0x10);
	/* A two-level stream table whose level 2 table is in a hole. */
	wr(&r, 0x20, 0);
	wr(&r, 0x88, 16 | 8 << 6 | 1 << 16);
	wr(&r, 0x20, 0xd);
	uint64_t l1 = hole | 9;

	memcpy(iopt_physmem_ptr(r.pm, STRTAB + 2 * 8, 8), &l1, 8);
	e = evt_next(&r);
	assert_int_equal(xlate(&r, 0x203, 0, false).fault, IOPT_EVT_F_STE_FETCH);
	assert_int_equal(evt_word(&r, e, 0), IOPT_EVT_F_STE_FETCH | 0x203ull << 32);
	assert_int_equal(evt_word(&r, e, 3), hole + 3 * 64);
	iopt_free(pt);
	teardown_rig(&r);
}

static void cmd_sync(struct rig *r, struct iopt_smmu_cmd c)
{
	struct iopt_smmu_cmd both[2] = { c, { .opcode = IOPT_CMD_SYNC } };

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
	struct iopt_cd cd, bad;
	struct iopt_ste ste = { .valid = true, .config = IOPT_STE_S1,
				.s1_context_ptr = CDTAB };
	struct iopt_ste off = { .valid = true, .config = IOPT_STE_ABORT };

	(void)state;
	setup_rig(&r, NULL);
	pt = s1_table(&r, 4, &cd);
	assert_int_equal(iopt_map_pages(pt, 0x5000, 0x9000, 0x1000, 1, IOPT_READ,
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
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_STE, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_EVT_ABORT);
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, 0);
	/* Range 0: StreamIDs 22 and 23 (2^(0+1), aligned). */
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_STE_RANGE,
					     .sid = 23, .range = 0 });
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, 0);
	assert_int_equal(xlate(&r, 22, 0x5000, false).fault, IOPT_EVT_ABORT);
	assert_int_equal(xlate(&r, 23, 0x5000, false).fault, IOPT_EVT_ABORT);
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_STE_RANGE,
					     .range = 31 });
	assert_int_equal(xlate(&r, 21, 0x5000, false).fault, IOPT_EVT_ABORT);
	/* CDs: an invalid CD is seen after CFGI_CD, a good one after
	 * CFGI_CD_ALL. */
	put_ste(&r, 20, &ste, STRTAB);
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_STE, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	put_cd(&r, CDTAB, &bad);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_CD, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_EVT_C_BAD_CD);
	/* An ILLEGAL configuration is not cached: fixed, it is read again. */
	put_cd(&r, CDTAB, &cd);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	put_cd(&r, CDTAB, &bad);
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, 0);
	cmd_sync(&r, (struct iopt_smmu_cmd){ .opcode = IOPT_CMD_CFGI_CD_ALL, .sid = 20 });
	assert_int_equal(xlate(&r, 20, 0x5000, false).fault, IOPT_EVT_C_BAD_CD);
	iopt_free(pt);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
