/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: arbitrary bytes choose a page-table configuration
 * (any format, granule, sizes and quirks, valid or not) and then a run of
 * operations with arbitrary arguments. Checked: no crash, no sanitizer
 * report, no leak; every error is one the API documents; a successful map
 * translates; an unmap never reports more than it was asked for.
 *
 * Built with -DIOPT_FUZZ=ON (clang). Every build also compiles it with a
 * small driver (fuzz_replay.c) that replays the committed corpus under
 * ctest, so the corpus is a regression test everywhere.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/pgtable.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int err_ok(int e, int a, int b, int c, int d)
{
	return e == 0 || e == a || e == b || e == c || e == d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	static const uint32_t granules[] = { 0, 4096, 16384, 65536, 8192 };
	struct iopt_cfg cfg = {
		.fmt = (enum iopt_fmt)(take(&in, 1) % (IOPT_FMT_COUNT + 1)),
		.granule = granules[take(&in, 1) % 5],
		.ias = (unsigned)(take(&in, 1) % 64),
		.oas = (unsigned)(take(&in, 1) % 64),
		.quirks = (uint32_t)take(&in, 1),
		.coherent_walk = true,
		.pgsize_bitmap = take(&in, 1) & 1 ? take(&in, 8) : 0,
	};
	struct iopt_pgtable *pt;
	int r = iopt_alloc(&cfg, &pt);

	if (r) {
		if (r != -EINVAL && r != -ENOMEM)
			abort();
		return 0;
	}
	struct iopt_info info;

	iopt_get_info(pt, &info);
	for (int op = 0; op < 64 && in.n; op++) {
		unsigned kind = (unsigned)take(&in, 1) % 6;
		/* Page sizes mostly from the bitmap, sometimes anything. */
		unsigned b = (unsigned)take(&in, 1);
		uint64_t pgsize = b & 0x80 ? 1ull << (b % 64) : 0;

		if (!pgsize) {
			uint64_t bm = info.pgsize_bitmap;
			unsigned k = b % (unsigned)__builtin_popcountll(bm);

			while (k--)
				bm &= bm - 1;
			pgsize = bm & -bm;
		}
		uint64_t iova = take(&in, 8), pa = take(&in, 8);
		size_t count = (size_t)take(&in, 2);
		unsigned prot = (unsigned)take(&in, 1);

		if (take(&in, 1) & 1) {		/* mostly aligned, in range */
			iova = (iova & ((1ull << (cfg.ias < 64 ? cfg.ias : 63)) - 1)) &
			       ~(pgsize - 1);
			pa = (pa & ((1ull << (cfg.oas < 64 ? cfg.oas : 63)) - 1)) &
			     ~(pgsize - 1);
			count = count % 8 + 1;
		}
		switch (kind) {
		case 0:
		case 1: {
			uint64_t mapped = 1;

			r = iopt_map_pages(pt, iova, pa, pgsize, count, prot, &mapped);
			if (!err_ok(r, -EINVAL, -ERANGE, -EEXIST, -ENOMEM))
				abort();
			if (r && mapped)
				abort();
			if (!r) {
				uint64_t got;

				if (mapped != pgsize * count ||
				    iopt_iova_to_phys(pt, iova, &got) || got != pa)
					abort();
			}
			break;
		}
		case 2: {
			int64_t u = iopt_unmap_pages(pt, iova, pgsize, count, NULL);

			if (u < 0 ? !err_ok((int)u, -EINVAL, -ERANGE, 0, 0) :
				    (uint64_t)u > pgsize * count)
				abort();
			break;
		}
		case 3: {
			uint64_t got;

			r = iopt_iova_to_phys(pt, iova, &got);
			if (!err_ok(r, -ENOENT, -ERANGE, 0, 0))
				abort();
			break;
		}
		case 4: {
			struct iopt_walk w;

			r = iopt_walk(pt, iova, &w);
			if (!err_ok(r, -ERANGE, 0, 0, 0) || w.nr_levels > 4)
				abort();
			break;
		}
		default:
			r = iopt_read_and_clear_dirty(pt, iova, pgsize * count, prot & 1, NULL,
						      NULL, NULL);
			if (!err_ok(r, -EINVAL, -ERANGE, 0, 0))
				abort();
			iopt_tlb_sync(pt);
			break;
		}
	}
	iopt_free(pt);
	return 0;
}
