/* SPDX-License-Identifier: MIT */
/*
 * The v7s (short-descriptor) format: quirk combinations x all four page
 * sizes (map at a stride, translate through iova_to_phys and the reference
 * walker, overlaps fail, unmap, remap), partial unmaps of large pages and
 * supersections at the first, a middle and the last item, descriptor bits
 * and registers against the Arm ARM, the MediaTek extension above 4 GiB,
 * non-coherent walks, and racing splits and run breaks.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tutil.h"

#define SZ_4K 0x1000ull
#define SZ_64K 0x10000ull
#define SZ_1M 0x100000ull
#define SZ_16M 0x1000000ull

static const char *cur;


struct qcase {
	const char *name;
	uint32_t quirks;
	unsigned oas;
	uint64_t table_base;	/* where tmem puts tables */
	uint64_t pa_base;	/* where the test maps to */
};

static const struct qcase qcases[] = {
	{ "plain", 0, 32, 0x10000000ull, 0x40000000ull },
	{ "ns", IOPT_PGTABLE_QUIRK_NS, 32, 0x10000000ull, 0x40000000ull },
	{ "no_perms", IOPT_PGTABLE_QUIRK_NO_PERMS, 32, 0x10000000ull, 0x80000000ull },
	{ "ns+no_perms", IOPT_PGTABLE_QUIRK_NS | IOPT_PGTABLE_QUIRK_NO_PERMS, 32, 0x10000000ull,
	  0x20000000ull },
	{ "mtk", IOPT_PGTABLE_QUIRK_MTK_EXT | IOPT_PGTABLE_QUIRK_NO_PERMS, 35, 0x10000000ull,
	  0x600000000ull },
	{ "mtk+ttbr_ext",
	  IOPT_PGTABLE_QUIRK_MTK_EXT | IOPT_PGTABLE_QUIRK_NO_PERMS | IOPT_PGTABLE_QUIRK_MTK_TTBR_EXT, 35,
	  0x500000000ull, 0x700000000ull },
};

static struct iopt_pgtable *make(const struct qcase *q, struct tmem *m,
				 bool coherent)
{
	struct iopt_pgtable_cfg cfg = {
		.fmt = IOPT_ARM_V7S, .ias = 32, .oas = q->oas, .quirks = q->quirks,
		.coherent_walk = coherent, .mem = &tmem_ops, .mem_ctx = m,
	};
	struct iopt_pgtable *pt = NULL;

	tmem_init(m, q->table_base, 32u << 20);
	cur = q->name;
	TU_CHK(cur, iopt_pgtable_alloc(&cfg, &pt) == 0);
	return pt;
}

static void expect(struct iopt_pgtable *pt, struct tmem *m,
		   const struct qcase *q, uint64_t va, bool mapped, uint64_t pa,
		   unsigned prot, tu_p2v_fn p2v)
{
	struct iopt_pgtable_info info;
	struct ref_walk w;
	uint64_t got = 0;

	iopt_pgtable_get_info(pt, &info);
	ref_walk(&info, q->quirks, p2v, m, va, &w);
	TU_CHK(cur, w.mapped == mapped);
	if (p2v == tmem_host_p2v)
		TU_CHK(cur, iopt_pgtable_iova_to_phys(pt, va, &got) == (mapped ? 0 : -ENOENT));
	if (!mapped)
		return;
	TU_CHK(cur, w.oa == pa);
	if (p2v == tmem_host_p2v)
		TU_CHK(cur, got == pa);
	TU_CHK(cur, w.prot == tu_expect_prot(IOPT_ARM_V7S, q->quirks, prot));
}

static void test_quirks_by_sizes(void **state)
{
	static const uint64_t sizes[] = { SZ_4K, SZ_64K, SZ_1M, SZ_16M };

	(void)state;
	for (unsigned k = 0; k < sizeof(qcases) / sizeof(qcases[0]); k++) {
		const struct qcase *q = &qcases[k];
		struct tmem m;
		struct iopt_pgtable *pt = make(q, &m, true);
		struct iopt_pgtable_info info;

		iopt_pgtable_get_info(pt, &info);
		TU_CHK(cur, info.pgsize_bitmap == (SZ_4K | SZ_64K | SZ_1M | SZ_16M));
		for (unsigned s = 0; s < 4; s++) {
			uint64_t sz = sizes[s], va = 2 * sz, stride = 2 * sz;
			uint64_t pa = q->pa_base;
			unsigned prot = IOPT_READ | IOPT_WRITE | IOPT_CACHE;

			for (unsigned i = 0; i < 3; i++)
				TU_CHK(cur, iopt_pgtable_map_pages(pt, va + i * stride, pa + i * sz, sz, 1,
						   prot, NULL) == 0);
			for (unsigned i = 0; i < 3; i++) {
				uint64_t v = va + i * stride, p = pa + i * sz;

				expect(pt, &m, q, v, true, p, prot, tmem_host_p2v);
				expect(pt, &m, q, v + sz - 1, true, p + sz - 1, prot,
				       tmem_host_p2v);
				expect(pt, &m, q, v + sz, false, 0, 0, tmem_host_p2v);
			}
			/* Overlaps fail, change nothing. */
			TU_CHK(cur, iopt_pgtable_map_pages(pt, va, 0, sz, 1, IOPT_READ, NULL) == -EEXIST);
			TU_CHK(cur, iopt_pgtable_map_pages(pt, va + sz - SZ_4K, 0, SZ_4K, 1, IOPT_READ,
					   NULL) == -EEXIST);
			TU_CHK(cur, iopt_pgtable_map_pages(pt, va - sz, 0, sz, 2, IOPT_READ, NULL) ==
			    -EEXIST);
			expect(pt, &m, q, va - sz, false, 0, 0, tmem_host_p2v);
			expect(pt, &m, q, va, true, pa, prot, tmem_host_p2v);
			for (unsigned i = 0; i < 3; i++)
				TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va + i * stride, sz, 1, NULL) ==
				    (int64_t)sz);
			expect(pt, &m, q, va + sz / 2, false, 0, 0, tmem_host_p2v);
			/* Remap with other attributes. */
			unsigned prot2 = IOPT_READ | IOPT_NOEXEC | IOPT_PRIV | IOPT_MMIO;

			TU_CHK(cur, iopt_pgtable_map_pages(pt, va, pa + sz, sz, 1, prot2, NULL) == 0);
			expect(pt, &m, q, va + 5, true, pa + sz + 5, prot2,
			       tmem_host_p2v);
			TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va, sz, 1, NULL) == (int64_t)sz);
		}
		iopt_pgtable_free(pt);
		TU_CHK(cur, m.live == 0);
		tmem_destroy(&m);
	}
}

/* Unmapping one page of a 64K large page or 16M supersection at its first,
 * a middle and its last item: every other page still translates. */
static void test_partial_unmap_of_runs(void **state)
{
	static const uint64_t runs[] = { SZ_64K, SZ_16M };

	(void)state;
	for (unsigned k = 0; k < sizeof(qcases) / sizeof(qcases[0]); k++)
		for (unsigned r = 0; r < 2; r++)
			for (unsigned p = 0; p < 3; p++) {
				const struct qcase *q = &qcases[k];
				uint64_t run = runs[r], item = run == SZ_64K ? SZ_4K : SZ_1M;
				uint64_t n = run / item;
				uint64_t pos[3] = { 0, n / 2 + 1, n - 1 };
				uint64_t va = 3 * run, pa = q->pa_base + run;
				struct tmem m;
				struct iopt_pgtable *pt = make(q, &m, true);
				struct iopt_pgtable_stats st;
				unsigned prot = IOPT_READ | IOPT_WRITE;
				uint64_t hole = va + pos[p] * item + (run == SZ_16M ? 5 * SZ_4K : 0);

				TU_CHK(cur, iopt_pgtable_map_pages(pt, va, pa, run, 1, prot, NULL) == 0);
				TU_CHK(cur, iopt_pgtable_unmap_pages(pt, hole, SZ_4K, 1, NULL) == SZ_4K);
				iopt_pgtable_get_stats(pt, &st);
				TU_CHK(cur, st.run_breaks == 1);
				for (uint64_t off = 0; off < run; off += SZ_4K)
					expect(pt, &m, q, va + off, va + off != hole, pa + off,
					       prot, tmem_host_p2v);
				iopt_pgtable_free(pt);
				TU_CHK(cur, m.live == 0);
				tmem_destroy(&m);
			}
}

static uint32_t desc(struct iopt_pgtable *pt, uint64_t va, unsigned level)
{
	struct iopt_pgtable_walk w;

	assert_int_equal(iopt_pgtable_walk(pt, va, &w), 0);
	assert_true(w.nr_levels >= level);
	return (uint32_t)w.level[level - 1].desc;
}

static void test_descriptor_bits_and_regs(void **state)
{
	struct tmem m;
	struct iopt_pgtable *pt = make(&qcases[1], &m, true);	/* NS */
	struct iopt_pgtable_info i;
	uint32_t d;

	(void)state;
	iopt_pgtable_get_info(pt, &i);
	assert_int_equal(i.regs.ttbr & ~0x7fu, 0x10000000u);
	assert_int_equal(i.regs.ttbr & 0x7f, (1u << 1) | (1u << 3) | (1u << 5) |
						     (1u << 6)); /* S RGN NOS IRGN0 */
	assert_int_equal(i.regs.tcr, 1u << 5);			/* N=0, PD1 */
	assert_int_equal(i.regs.prrr & 0xff, 2u | 1u << 2 | 2u << 6);
	assert_int_equal(i.regs.nmrr, 1u << 6 | 1u << 22);	/* idx 3 WBWA */

	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_1M, 0x40100000, SZ_1M, 1,
						IOPT_READ | IOPT_CACHE, NULL), 0);
	d = desc(pt, SZ_1M, 1);
	assert_int_equal(d & 3, 2);			/* section */
	assert_int_equal(d >> 18 & 1, 0);
	assert_int_equal(d >> 2 & 3, 3);		/* C B: index 3 */
	assert_int_equal(d >> 10 & 1, 1);		/* AP[0] = AF */
	assert_int_equal(d >> 11 & 1, 1);		/* AP[1] unprivileged */
	assert_int_equal(d >> 15 & 1, 1);		/* AP[2] read-only */
	assert_int_equal(d >> 16 & 1, 1);		/* S */
	assert_int_equal(d >> 19 & 1, 1);		/* NS */
	assert_int_equal(d >> 4 & 1, 0);		/* XN */
	assert_int_equal(d & 0xfff00000u, 0x40100000u);

	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_16M, 0x41000000, SZ_16M, 1,
						IOPT_WRITE | IOPT_NOEXEC | IOPT_PRIV, NULL), 0);
	d = desc(pt, SZ_16M + 5 * SZ_1M, 1);
	assert_int_equal(d & 3, 2);
	assert_int_equal(d >> 18 & 1, 1);		/* supersection */
	assert_int_equal(d & 0xff000000u, 0x41000000u);
	assert_int_equal(d >> 4 & 1, 1);		/* XN */
	assert_int_equal(d >> 11 & 1, 0);		/* privileged */
	assert_int_equal(d >> 15 & 1, 0);		/* writable */
	assert_int_equal(d >> 2 & 3, 0);		/* index 0: normal NC */
	assert_int_equal(desc(pt, SZ_16M, 1), d);	/* 16 identical items */

	assert_int_equal(iopt_pgtable_map_pages(pt, 0x3000000, 0x42345000, SZ_4K, 1,
						IOPT_READ | IOPT_NOEXEC | IOPT_MMIO, NULL), 0);
	uint32_t t = desc(pt, 0x3000000, 1);

	assert_int_equal(t & 3, 1);			/* table */
	assert_int_equal(t >> 3 & 1, 1);		/* NS (table) */
	d = desc(pt, 0x3000000, 2);
	assert_int_equal(d >> 1 & 1, 1);		/* small page */
	assert_int_equal(d & 1, 1);			/* XN */
	assert_int_equal(d >> 2 & 3, 1);		/* B: index 1, device */
	assert_int_equal(d >> 4 & 1, 1);		/* AF */
	assert_int_equal(d >> 5 & 1, 1);		/* unprivileged */
	assert_int_equal(d >> 9 & 1, 1);		/* read-only */
	assert_int_equal(d >> 10 & 1, 1);		/* S */
	assert_int_equal(d & 0xfffff000u, 0x42345000u);

	assert_int_equal(iopt_pgtable_map_pages(pt, 0x3010000, 0x42350000, SZ_64K, 1,
						IOPT_READ | IOPT_WRITE | IOPT_NOEXEC, NULL), 0);
	d = desc(pt, 0x3010000 + 7 * SZ_4K, 2);
	assert_int_equal(d & 3, 1);			/* large page */
	assert_int_equal(d >> 15 & 1, 1);		/* XN */
	assert_int_equal(d >> 9 & 1, 0);		/* writable */
	assert_int_equal(d & 0xffff0000u, 0x42350000u);
	iopt_pgtable_free(pt);
	tmem_destroy(&m);

	/* MediaTek: PA bits 32-34 in bits 9, 4, 5; tables above 4 GiB. */
	pt = make(&qcases[5], &m, true);
	iopt_pgtable_get_info(pt, &i);
	assert_int_equal(i.regs.ttbr & 7, 5);		/* table PA[34:32] */
	assert_int_equal(iopt_pgtable_map_pages(pt, SZ_4K, 0x512345000ull, SZ_4K, 1,
						IOPT_READ, NULL), 0);
	d = desc(pt, SZ_4K, 2);
	assert_int_equal(d >> 9 & 1, 1);		/* PA[32] */
	assert_int_equal(d >> 4 & 1, 0);		/* PA[33] */
	assert_int_equal(d >> 5 & 1, 1);		/* PA[34] */
	t = desc(pt, SZ_4K, 1);
	assert_int_equal(t >> 9 & 1, 1);		/* table at 0x5_xxxx_xxxx */
	assert_int_equal(t >> 5 & 1, 1);
	uint64_t got;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, SZ_4K + 0x10, &got), 0);
	assert_int_equal(got, 0x512345010ull);
	iopt_pgtable_free(pt);
	tmem_destroy(&m);
}

static void test_bad_configs(void **state)
{
	struct iopt_pgtable_cfg c = { .fmt = IOPT_ARM_V7S, .ias = 32, .oas = 32,
			      .coherent_walk = true };
	struct iopt_pgtable *pt;

	(void)state;
	c.quirks = IOPT_PGTABLE_QUIRK_MTK_EXT;			/* needs NO_PERMS */
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c.quirks = 0;
	c.oas = 33;					/* needs MTK */
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c.oas = 32;
	c.granule = 16384;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c.granule = 0;
	c.quirks = IOPT_PGTABLE_QUIRK_HD;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	c.quirks = 0;
	c.ias = 33;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), -EINVAL);
	/* Default table memory: a private window below 4 GiB. */
	c.ias = 32;
	assert_int_equal(iopt_pgtable_alloc(&c, &pt), 0);
	struct iopt_pgtable_info i;

	iopt_pgtable_get_info(pt, &i);
	assert_true(i.regs.ttbr < (1ull << 32) && i.regs.ttbr >= 0x80000000ull);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0, 0xfffff000ull, SZ_4K, 1, IOPT_READ,
						NULL), 0);
	assert_int_equal(iopt_pgtable_map_pages(pt, 0, 1ull << 32, SZ_4K, 1, IOPT_READ,
						NULL), -ERANGE);
	assert_int_equal(iopt_pgtable_read_and_clear_dirty(pt, 0, SZ_4K, 0, NULL, NULL, NULL),
			 -EINVAL);
	iopt_pgtable_free(pt);
}

/* Table memory that remembers the size of the first allocation (the
 * level-1 table: iopt_pgtable_alloc() allocates it first). */
struct szmem {
	struct tmem m;
	size_t first;
};

static void *sz_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct szmem *s = ctx;

	if (!s->first)
		s->first = size;
	return tmem_ops.alloc(size, pa, &s->m);
}

static void sz_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	tmem_ops.free(va, pa, size, &((struct szmem *)ctx)->m);
}

static void *sz_p2v(uint64_t pa, void *ctx)
{
	return tmem_host_p2v(pa, &((struct szmem *)ctx)->m);
}

static void sz_sync(void *va, size_t size, void *ctx)
{
	tmem_ops.sync(va, size, &((struct szmem *)ctx)->m);
}

static const struct iopt_pgtable_mem_ops sz_ops = { sz_alloc, sz_free, sz_p2v, sz_sync };

/*
 * Every ias from 0 to 40. The short-descriptor format (Arm ARM G8.2.165,
 * TTBCR) narrows TTBR0's range with TTBCR.N, bits [2:0], to 2^(32 - N)
 * bytes and its level-1 table to 16 KiB >> N: ias 25 to 32. The MediaTek
 * extension also indexes 33 and 34 bits (a 4 << (ias - 20) byte level-1
 * table; N stays 0). Everything else is -EINVAL and leaves nothing
 * allocated. Accepted: TTBCR holds N, PD1, and nothing in its RES0 bits
 * (3, 30:6) or EAE (31); TTBR0 is aligned to the table; the first and the
 * last page of the range translate through the reference walker (which
 * reads N), the page after the range is -ERANGE.
 */
static void test_every_ias(void **state)
{
	static const struct {
		uint32_t quirks;
		unsigned oas, max_ias;
	} qs[] = {
		{ 0, 32, 32 },
		{ IOPT_PGTABLE_QUIRK_NS, 32, 32 },
		{ IOPT_PGTABLE_QUIRK_MTK_EXT | IOPT_PGTABLE_QUIRK_NO_PERMS, 35, 34 },
	};

	(void)state;
	for (unsigned q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
		for (unsigned ias = 0; ias <= 40; ias++) {
			struct szmem sm = { .first = 0 };
			struct iopt_pgtable_cfg cfg = {
				.fmt = IOPT_ARM_V7S, .ias = ias, .oas = qs[q].oas,
				.quirks = qs[q].quirks, .coherent_walk = true,
				.mem = &sz_ops, .mem_ctx = &sm,
			};
			struct iopt_pgtable *pt = NULL;
			bool ok = ias >= 25 && ias <= qs[q].max_ias;
			char name[48];

			snprintf(name, sizeof(name), "quirks %#x ias %u",
				 qs[q].quirks, ias);
			tmem_init(&sm.m, 0x10000000ull, 4u << 20);
			int ret = iopt_pgtable_alloc(&cfg, &pt);

			TU_CHK(name, ret == (ok ? 0 : -EINVAL));
			if (!ok) {
				TU_CHK(name, sm.m.live == 0);
				tmem_destroy(&sm.m);
				continue;
			}
			struct iopt_pgtable_info i;
			unsigned n = ias < 32 ? 32 - ias : 0;
			size_t l1 = ias <= 32 ? (size_t)16384 >> n :
						(size_t)4 << (ias - 20);

			iopt_pgtable_get_info(pt, &i);
			TU_CHK(name, (i.regs.tcr & 7) == n);		/* N */
			TU_CHK(name, !(i.regs.tcr & (1u << 3)));	/* RES0 */
			TU_CHK(name, !(i.regs.tcr & (1u << 4)));	/* PD0 */
			TU_CHK(name, n == 0 || (i.regs.tcr & (1u << 5))); /* PD1 */
			TU_CHK(name, !(i.regs.tcr & 0x7fffffc0u));	/* RES0 */
			TU_CHK(name, !(i.regs.tcr >> 31));		/* EAE */
			TU_CHK(name, sm.first == l1);
			/* TTBR0 base: bits [31:14-N]; bits 6:0 are attributes. */
			TU_CHK(name, ((i.regs.ttbr & ~0x7full) & (l1 - 1)) == 0);

			uint64_t last = (1ull << ias) - SZ_4K;
			struct ref_walk w;

			TU_CHK(name, iopt_pgtable_map_pages(pt, 0, 0x1000000, SZ_4K, 1,
							    IOPT_READ, NULL) == 0);
			TU_CHK(name, iopt_pgtable_map_pages(pt, last, 0x2000000, SZ_4K, 1,
							    IOPT_READ, NULL) == 0);
			TU_CHK(name, iopt_pgtable_map_pages(pt, 1ull << ias, 0x3000000,
							    SZ_4K, 1, IOPT_READ,
							    NULL) == -ERANGE);
			ref_walk(&i, qs[q].quirks, tmem_host_p2v, &sm.m, 0x123, &w);
			TU_CHK(name, w.mapped && w.oa == 0x1000123);
			ref_walk(&i, qs[q].quirks, tmem_host_p2v, &sm.m,
				 last + 0x456, &w);
			TU_CHK(name, w.mapped && w.oa == 0x2000456);
			iopt_pgtable_free(pt);
			TU_CHK(name, sm.m.live == 0);
			tmem_destroy(&sm.m);
		}
}

static void test_noncoherent_device_view(void **state)
{
	uint64_t rng = 424242;

	(void)state;
	for (unsigned k = 0; k < sizeof(qcases) / sizeof(qcases[0]); k++) {
		const struct qcase *q = &qcases[k];
		struct tmem m;
		struct iopt_pgtable *pt = make(q, &m, false);
		static const uint64_t sizes[] = { SZ_4K, SZ_64K, SZ_1M, SZ_16M };

		for (int i = 0; i < 300; i++) {
			uint64_t sz = sizes[tu_rand(&rng) % 4];
			uint64_t va = (tu_rand(&rng) % (1ull << 32)) & ~(sz - 1);
			uint64_t pa = q->pa_base + ((tu_rand(&rng) % SZ_16M) & ~(sz - 1));

			if (iopt_pgtable_map_pages(pt, va, pa, sz, 1, IOPT_READ, NULL))
				continue;
			expect(pt, &m, q, va + sz - 1, true, pa + sz - 1, IOPT_READ,
			       tmem_dev_p2v);
			if (i % 2) {
				/* Partial unmaps split and break in the device
				 * view too. */
				uint64_t off = sz > SZ_4K ? SZ_4K : 0;

				TU_CHK(cur, iopt_pgtable_unmap_pages(pt, va + off, SZ_4K, 1, NULL) ==
				    SZ_4K);
				expect(pt, &m, q, va + off, false, 0, 0, tmem_dev_p2v);
				if (off)
					expect(pt, &m, q, va, true, pa, IOPT_READ,
					       tmem_dev_p2v);
			}
		}
		iopt_pgtable_free(pt);
		TU_CHK(cur, m.live == 0);
		tmem_destroy(&m);
	}
}

/* Threads unmapping different pages of the same section (racing splits),
 * the same large page and the same supersection (racing run breaks). */
struct rctx {
	struct iopt_pgtable *pt;
	int id, n;
	uint64_t va, size;
	uint8_t *gone;
};

static void *racer(void *arg)
{
	struct rctx *c = arg;

	for (uint64_t p = (uint64_t)c->id; p < c->size / SZ_4K; p += (uint64_t)c->n)
		if ((p * 2654435761u >> 7) % 5 == 0) {
			assert_int_equal(iopt_pgtable_unmap_pages(c->pt, c->va + p * SZ_4K,
								  SZ_4K, 1, NULL), SZ_4K);
			c->gone[p] = 1;
		}
	return NULL;
}

static void test_racing_splits_and_breaks(void **state)
{
	static const uint64_t sizes[] = { SZ_1M, SZ_64K, SZ_16M };

	(void)state;
	for (unsigned s = 0; s < 3; s++)
		for (int n = 2; n <= 4; n += 2) {
			struct tmem m;
			struct iopt_pgtable *pt = make(&qcases[0], &m, true);
			uint64_t va = 0x20000000, total = 2 * sizes[s];
			uint8_t gone[2 * SZ_16M / SZ_4K] = { 0 };
			struct rctx c[4];
			pthread_t th[4];

			assert_int_equal(iopt_pgtable_map_pages(pt, va, va, sizes[s], 2,
								IOPT_READ, NULL), 0);
			for (int i = 0; i < n; i++) {
				c[i] = (struct rctx){ pt, i, n, va, total, gone };
				pthread_create(&th[i], NULL, racer, &c[i]);
			}
			for (int i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			tu_expect_pages(pt, va, total, gone, 1, 0);
			iopt_pgtable_free(pt);
			assert_int_equal(m.live, 0);
			tmem_destroy(&m);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quirks_by_sizes),
		cmocka_unit_test(test_partial_unmap_of_runs),
		cmocka_unit_test(test_descriptor_bits_and_regs),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_every_ias),
		cmocka_unit_test(test_noncoherent_device_view),
		cmocka_unit_test(test_racing_splits_and_breaks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
