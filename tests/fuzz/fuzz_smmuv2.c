/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SMMUv2 model: raw bytes become the model's
 * parameters (preset, bank and SMR counts, stage support, sync
 * behaviour, caches), register writes and reads (any offset in and beyond
 * the register space, any size and value), the contents of the simulated
 * physical memory the translation tables live in, transactions and time.
 *
 * Input: byte 0 selects the parameters, byte 1 the memory latency, then
 * ops (take_op). Register offsets are drawn mostly inside the register
 * space, biased to the registers that exist (GR0, GR1, bank pages).
 *
 * Checked, besides crashes, hangs and sanitizer reports:
 *  - every call returns 0, or -EINVAL exactly for what the API says is
 *    bad (a size other than 4/8, misalignment, an offset beyond the
 *    space, an 8-byte access to a 32-bit register is allowed to fail);
 *  - a response is OK, ABORT or STALLED; a STALLED one has ready =
 *    UINT64_MAX, the others ready >= the cycle asked;
 *  - with sCR0.CLIENTPD every transaction passes untranslated;
 *  - sGFSR holds only architected bits (ICF..UUT, MULTI), FSR only
 *    TF..UUT, FORMAT, SS, MULTI (the model sets no others);
 *  - the model never hangs a sync: once every stalled transaction is
 *    terminated by RESUME, running to the model's last event makes every
 *    TLBSTATUS.SACTIVE and sTLBGSTATUS.GSACTIVE read 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x80000000ull
#define SPAN (4u << 20)		/* a multiple of IOPT_PHYSMEM_FRAME */

/* Register offsets (reference facts). */
#define SCR0		0x000
#define SGFSR		0x048
#define STLBGSTATUS	0x074
#define CB_RESUME	0x008
#define CB_FSR		0x058
#define CB_TLBSTATUS	0x7f4

#define SGFSR_KNOWN	(0x1ffu | 1u << 31)
#define FSR_KNOWN	(0x1feu | 3u << 9 | 1u << 30 | 1u << 31)

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* A register offset: mostly a known register of a page that exists. */
static uint64_t take_offset(struct in *in, uint64_t space, uint64_t cb0)
{
	static const uint16_t gr0[] = { 0x000, 0x020, 0x024, 0x028, 0x040,
					0x048, 0x04c, 0x050, 0x054, 0x064,
					0x068, 0x06c, 0x070, 0x074, 0x800,
					0x804, 0xc00, 0xc04 };
	static const uint16_t cb[] = { 0x000, 0x008, 0x010, 0x020, 0x024, 0x028,
				       0x030, 0x038, 0x03c, 0x050, 0x058, 0x05c,
				       0x060, 0x068, 0x070, 0x600, 0x608, 0x610,
				       0x618, 0x620, 0x628, 0x630, 0x638, 0x7f0,
				       0x7f4, 0x800, 0x808, 0x810, 0x818, 0x8f0 };
	unsigned kind = (unsigned)take(in, 1);
	unsigned idx = (unsigned)take(in, 1);

	switch (kind % 5) {
	case 0:	/* GR0 registers, SMR/S2CR n = idx % 16 */
		return gr0[idx % 18] + ((gr0[idx % 18] >= 0x800) ? 4u * (idx / 18 % 16) : 0);
	case 1:	/* GR1: CBAR, CBA2R of bank idx % 16 */
		return 0x1000 + (idx & 1 ? 0x800 : 0) + 4u * (idx / 2 % 16);
	case 2: case 3:	/* a bank's page */
		return cb0 + ((uint64_t)(idx % 16) << 12) + cb[(unsigned)take(in, 1) % 30];
	default:	/* anywhere, also beyond the space */
		return take(in, 4) % (space + 0x2000);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct iopt_physmem *pm;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv2_params p;
	struct iopt_smmuv2 *s;
	uint64_t cycle = 0, v;
	unsigned sel = (unsigned)take(&in, 1);

	iopt_smmuv2_preset(sel & 1 ? "mmu-500" : "generic", &p);
	p.num_cb = 1 + (sel >> 1 & 7);
	p.num_smrg = 1 + (sel >> 4 & 7);
	p.numpagendxb = 3;
	p.sync_mode = sel & 0x80 ? IOPT_SMMUV2_SYNC_JOIN : IOPT_SMMUV2_SYNC_RESTART;
	p.sync_blocked_by_stall = sel & 0x40;
	p.tlb = (struct iopt_smmu_cache_params){ sel & 2, 16, 2, IOPT_SMMU_REPL_LRU, 1 };
	p.walk = (struct iopt_smmu_cache_params){ sel & 4, 8, 2, IOPT_SMMU_REPL_RR, 1 };
	p.shared_clock = sel & 8;
	if (iopt_physmem_create(BASE, SPAN, &pm))
		return 0;
	iopt_smmu_physmem(pm, (unsigned)take(&in, 1), &mem);
	if (iopt_smmuv2_create(&p, &mem, NULL, NULL, &s)) {
		iopt_physmem_destroy(pm);
		return 0;
	}
	const uint64_t space = iopt_smmuv2_mmio_size(s);
	const uint64_t cb0 = space / 2;

	for (unsigned ops = 0; in.n && ops < 4096; ops++) {
		unsigned op = (unsigned)take(&in, 1);

		switch (op % 8) {
		case 0: case 1: {	/* register write */
			uint64_t off = take_offset(&in, space, cb0);
			unsigned sz = op & 8 ? 8 : 4;
			uint64_t val = take(&in, 8);
			int ret;

			/* Often an address in the memory (a TTBR, say). */
			if (op & 0x40)
				val = (val & 0xffff000000000000ull) | (BASE + val % SPAN);
			ret = iopt_smmuv2_mmio_write(s, off, sz, val, cycle);

			check(ret == 0 || ret == -EINVAL);
			check(ret == 0 || off >= space || (off & (sz - 1)) || sz == 8);
			break;
		}
		case 2: {		/* register read */
			uint64_t off = take_offset(&in, space, cb0);
			int ret = iopt_smmuv2_mmio_read(s, off, 4, &v, cycle);

			check(ret == 0 || off >= space || (off & 3));
			break;
		}
		case 3: {		/* memory: a descriptor anywhere in it */
			uint64_t pa = BASE + (take(&in, 3) % SPAN & ~7ull);
			uint64_t d = take(&in, 8);

			/* Often a table or page descriptor into the memory. */
			if (op & 0x40)
				d = (d & 0xfff0000000000fffull) | ((BASE + d % SPAN) & ~0xfffull);

			memcpy(iopt_physmem_ptr(pm, pa, 8), &d, 8);
			break;
		}
		case 4: case 5: {	/* a transaction */
			struct iopt_smmuv2_txn t = {
				.sid = (uint32_t)take(&in, 2),
				.addr = op & 0x80 ? take(&in, 8) : take(&in, 4),
				.write = op & 8, .exec = op & 16, .priv = op & 32,
			};
			struct iopt_smmuv2_resp r;
			uint64_t scr0;

			check(!iopt_smmuv2_mmio_read(s, SCR0, 4, &scr0, cycle));
			check(!iopt_smmuv2_translate(s, &t, cycle, &r));
			check(r.result <= IOPT_SMMUV2_STALLED);
			if (r.result == IOPT_SMMUV2_STALLED)
				check(r.ready == UINT64_MAX);
			else
				check(r.ready >= cycle);
			if (scr0 & 1)
				check(r.result == IOPT_SMMUV2_OK && r.oa == t.addr);
			break;
		}
		case 6: {		/* collect stalled outcomes */
			struct iopt_smmuv2_resp r;
			int ret = iopt_smmuv2_stalled(s, (unsigned)take(&in, 1) % 20, &r);

			check(ret == 0 || ret == -EAGAIN || ret == -ENOENT ||
			      ret == -EINVAL);
			if (!ret)
				check(r.result != IOPT_SMMUV2_STALLED && r.ready != UINT64_MAX);
			break;
		}
		default:		/* time */
			cycle += take(&in, 2);
			if (op & 8) {
				uint64_t next = iopt_smmuv2_next_event(s);

				if (next != UINT64_MAX && next > cycle)
					cycle = next;
				check(!iopt_smmuv2_run_until(s, cycle));
			}
			break;
		}
		check(!iopt_smmuv2_mmio_read(s, SGFSR, 4, &v, cycle));
		check(!(v & ~SGFSR_KNOWN));
	}
	/* Terminate every stall, then every sync completes. */
	for (unsigned round = 0; round < 64; round++) {
		bool any = false;

		for (unsigned n = 0; n < p.num_cb; n++) {
			check(!iopt_smmuv2_mmio_read(s, cb0 + ((uint64_t)n << 12) + CB_FSR,
						     4, &v, cycle));
			check(!(v & ~FSR_KNOWN));
			if (v & 1u << 30) {
				any = true;
				check(!iopt_smmuv2_mmio_write(s, cb0 + ((uint64_t)n << 12) +
							      CB_RESUME, 4, 1, cycle));
			}
		}
		if (!any)
			break;
	}
	for (unsigned k = 0; k < 1000; k++) {
		uint64_t next = iopt_smmuv2_next_event(s);

		if (next == UINT64_MAX)
			break;
		cycle = next > cycle ? next : cycle;
		check(!iopt_smmuv2_run_until(s, cycle));
	}
	for (unsigned n = 0; n < p.num_cb; n++) {
		check(!iopt_smmuv2_mmio_read(s, cb0 + ((uint64_t)n << 12) + CB_FSR, 4,
					     &v, cycle));
		check(!(v & 1u << 30));
		check(!iopt_smmuv2_mmio_read(s, cb0 + ((uint64_t)n << 12) + CB_TLBSTATUS,
					     4, &v, cycle));
		check(!(v & 1));
	}
	check(!iopt_smmuv2_mmio_read(s, STLBGSTATUS, 4, &v, cycle));
	check(!(v & 1));
	iopt_smmuv2_destroy(s);
	iopt_physmem_destroy(pm);
	return 0;
}
