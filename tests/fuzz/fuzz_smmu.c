/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the SMMUv3 model: raw bytes become register
 * writes (any offset, size and value), the contents of the stream table,
 * context descriptors, command queue and translation tables (all in one
 * simulated physical memory the bytes also fill), transactions, and time.
 * Checked: no crash, hang or sanitizer report; time never goes back;
 * every fault is a known event type.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmu.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x80000000ull
#define SPAN (4u << 20)

static bool known_event(unsigned f)
{
	switch (f) {
	case 0: case IOPT_EVT_ABORT: case IOPT_EVT_F_UUT: case IOPT_EVT_C_BAD_STREAMID:
	case IOPT_EVT_F_STE_FETCH: case IOPT_EVT_C_BAD_STE:
	case IOPT_EVT_F_STREAM_DISABLED: case IOPT_EVT_F_TRANSL_FORBIDDEN:
	case IOPT_EVT_C_BAD_SUBSTREAMID: case IOPT_EVT_F_CD_FETCH:
	case IOPT_EVT_C_BAD_CD: case IOPT_EVT_F_WALK_EABT:
	case IOPT_EVT_F_TRANSLATION: case IOPT_EVT_F_ADDR_SIZE:
	case IOPT_EVT_F_ACCESS: case IOPT_EVT_F_PERMISSION:
	case IOPT_EVT_F_CFG_CONFLICT:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct iopt_physmem *pm;
	struct iopt_smmu_params p;
	struct iopt_smmu_mem mem;
	struct iopt_smmu *s;
	uint64_t cycle = 0;

	if (iopt_physmem_create(BASE, SPAN, &pm))
		return 0;
	iopt_smmu_default_params(&p);
	p.tlb.entries = 64;
	unsigned feat = (unsigned)take(&in, 1);

	p.tlb.repl = (enum iopt_smmu_repl)(feat % 3);
	p.ats = feat & 4;
	iopt_smmu_physmem(pm, (unsigned)take(&in, 1), &mem);
	if (iopt_smmu_create(&p, &mem, NULL, NULL, &s)) {
		iopt_physmem_destroy(pm);
		return 0;
	}
	/* A sane start the bytes then disturb: tables at BASE. */
	iopt_smmu_mmio_write(s, 0x80, 8, BASE, 0);
	iopt_smmu_mmio_write(s, 0x88, 4, 6, 0);
	iopt_smmu_mmio_write(s, 0x90, 8, (BASE + 0x10000) | 6, 0);
	iopt_smmu_mmio_write(s, 0xa0, 8, (BASE + 0x20000) | 4, 0);
	iopt_smmu_mmio_write(s, 0x20, 4, 0xd, 0);
	for (int op = 0; op < 200 && in.n; op++) {
		unsigned kind = (unsigned)take(&in, 1) % 5;

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

			iopt_smmu_mmio_write(s, sz == 8 ? off & ~7ull : off, sz,
					     take(&in, 8), cycle);
			break;
		}
		case 2: {	/* register read */
			uint64_t v, off = take(&in, 3) & 0x1fffc;

			iopt_smmu_mmio_read(s, off, 4, &v, cycle);
			break;
		}
		case 3: {	/* transaction */
			struct iopt_smmu_txn t = {
				.sid = (uint32_t)take(&in, 1) % 80,
				.ssv = take(&in, 1) & 1,
				.ssid = (uint32_t)take(&in, 1),
				.addr = take(&in, 8),
			};
			unsigned f = (unsigned)take(&in, 1);
			struct iopt_smmu_resp r;

			t.write = f & 1;
			t.exec = f & 2;
			t.priv = f & 4;
			t.translated = f & 8;
			iopt_smmu_translate(s, &t, cycle, &r);
			if (!known_event(r.fault) || r.ready < cycle)
				abort();
			break;
		}
		default: {	/* time passes */
			cycle += take(&in, 2);
			iopt_smmu_run_until(s, cycle);
			uint64_t next = iopt_smmu_next_event(s);

			if (next != UINT64_MAX && next <= cycle)
				abort();	/* a due event was not run */
			break;
		}
		}
	}
	iopt_smmu_destroy(s);
	iopt_physmem_destroy(pm);
	return 0;
}
