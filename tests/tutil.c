/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "tutil.h"
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv3_drv.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- configuration matrix --------------------------------------------- */

static void tu_add(struct tcfg *out, size_t *n, size_t max, enum iopt_pgtable_fmt fmt,
		   uint32_t granule, unsigned ias, unsigned oas)
{
	if (*n >= max)
		return;
	struct tcfg *t = &out[(*n)++];

	memset(t, 0, sizeof(*t));
	t->cfg.fmt = fmt;
	t->cfg.granule = granule;
	t->cfg.ias = ias;
	t->cfg.oas = oas;
	t->cfg.coherent_walk = true;
	snprintf(t->name, sizeof(t->name), "%s/%uK/ias%u/oas%u",
		 iopt_pgtable_fmt_name(fmt), granule / 1024, ias, oas);
}

size_t tu_lpae_matrix(struct tcfg *out, size_t max)
{
	static const unsigned sizes[] = { 32, 36, 40, 42, 44, 48 };
	static const uint32_t granules[] = { 4096, 16384, 65536 };
	size_t n = 0;

	for (int s = 0; s < 2; s++) {
		enum iopt_pgtable_fmt fmt = s ? IOPT_ARM_64_LPAE_S2 : IOPT_ARM_64_LPAE_S1;

		for (unsigned g = 0; g < 3; g++)
			for (unsigned i = 0; i < 6; i++)
				for (unsigned o = i; o < 6; o++)
					tu_add(out, &n, max, fmt, granules[g],
					       sizes[i], sizes[o]);
		tu_add(out, &n, max, fmt, 65536, 48, 52);
		tu_add(out, &n, max, fmt, 65536, 52, 52);
	}
	for (unsigned o = 32; o <= 40; o += 4)
		tu_add(out, &n, max, IOPT_ARM_32_LPAE_S1, 4096, 32, o);
	tu_add(out, &n, max, IOPT_ARM_32_LPAE_S1, 4096, 30, 40);
	for (unsigned i = 32; i <= 40; i += 4)
		tu_add(out, &n, max, IOPT_ARM_32_LPAE_S2, 4096, i, 40);
	return n;
}

size_t tu_sample(struct tcfg *out, size_t max)
{
	size_t n = 0;

	tu_add(out, &n, max, IOPT_ARM_64_LPAE_S1, 4096, 48, 48);
	tu_add(out, &n, max, IOPT_ARM_64_LPAE_S2, 4096, 40, 40);
	tu_add(out, &n, max, IOPT_ARM_64_LPAE_S1, 16384, 48, 48);
	tu_add(out, &n, max, IOPT_ARM_64_LPAE_S2, 65536, 48, 52);
	tu_add(out, &n, max, IOPT_ARM_32_LPAE_S1, 4096, 32, 40);
	tu_add(out, &n, max, IOPT_ARM_32_LPAE_S2, 4096, 40, 40);
	tu_add(out, &n, max, IOPT_ARM_V7S, 4096, 32, 32);
	tu_add(out, &n, max, IOPT_ARM_V7S, 4096, 32, 35);
	out[n - 1].cfg.quirks = IOPT_PGTABLE_QUIRK_MTK_EXT | IOPT_PGTABLE_QUIRK_NO_PERMS;
	snprintf(out[n - 1].name, sizeof(out[n - 1].name), "v7s/mtk/oas35");
	return n;
}

/* ---- reference walker (Arm ARM D8: VMSAv8-64; B3.6: VMSAv7 LPAE) -------- */

void *tu_identity_p2v(uint64_t pa, void *ctx)
{
	(void)ctx;
	return (void *)(uintptr_t)pa;
}

static uint64_t bits(uint64_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

static const unsigned ps_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 52 };

static void ref_walk_lpae(const struct iopt_pgtable_info *info, uint32_t quirks,
			  tu_p2v_fn p2v, void *ctx, uint64_t va,
			  struct ref_walk *w)
{
	const struct iopt_pgtable_regs *r = &info->regs;
	unsigned g = 12, ias, start, oas_bits;
	bool s2 = info->fmt == IOPT_ARM_64_LPAE_S2 ||
		  info->fmt == IOPT_ARM_32_LPAE_S2;
	bool oa52;

	switch (info->fmt) {
	case IOPT_ARM_64_LPAE_S1: {
		unsigned tsz, tg;

		if (quirks & IOPT_PGTABLE_QUIRK_TTBR1) {
			tsz = (unsigned)bits(r->tcr, 21, 16);
			tg = (unsigned)bits(r->tcr, 31, 30);
			g = tg == 1 ? 14 : tg == 2 ? 12 : 16;
		} else {
			tsz = (unsigned)bits(r->tcr, 5, 0);
			tg = (unsigned)bits(r->tcr, 15, 14);
			g = tg == 0 ? 12 : tg == 1 ? 16 : 14;
		}
		ias = 64 - tsz;
		unsigned levels = (ias - g + (g - 3) - 1) / (g - 3);

		start = 4 - levels;
		oas_bits = ps_bits[bits(r->tcr, 34, 32)];
		break;
	}
	case IOPT_ARM_64_LPAE_S2: {
		unsigned tg = (unsigned)bits(r->tcr, 15, 14);
		unsigned sl0 = (unsigned)bits(r->tcr, 7, 6);

		g = tg == 0 ? 12 : tg == 1 ? 16 : 14;
		ias = 64 - (unsigned)bits(r->tcr, 5, 0);
		start = g == 12 ? 2 - sl0 : 3 - sl0;
		oas_bits = ps_bits[bits(r->tcr, 18, 16)];
		break;
	}
	case IOPT_ARM_32_LPAE_S1: {
		unsigned tsz = (unsigned)bits(r->tcr, 2, 0);

		ias = 32 - tsz;
		start = tsz > 1 ? 2 : 1;
		oas_bits = 40;
		break;
	}
	default: {
		int t = (int)bits(r->tcr, 3, 0);

		if (t & 8)
			t -= 16;
		ias = (unsigned)(32 - t);
		start = bits(r->tcr, 7, 6) == 0 ? 2 : 1;
		oas_bits = 40;
		break;
	}
	}
	oa52 = oas_bits == 52;
	if (quirks & IOPT_PGTABLE_QUIRK_TTBR1) {
		if (ias < 64 && (va >> ias) != (~0ull >> ias)) {
			w->fault_level = -1;
			return;
		}
	} else if (ias < 64 && (va >> ias)) {
		w->fault_level = -1;
		return;
	}

	uint64_t base = r->ttbr & (((1ull << 48) - 1) & ~0x3full);

	if (oa52)
		base |= bits(r->ttbr, 5, 2) << 48;
	w->nstable_all = true;
	for (unsigned lvl = start; lvl <= 3; lvl++) {
		unsigned shift = g + (3 - lvl) * (g - 3);
		unsigned nbits = lvl == start ? ias - shift : g - 3;
		uint64_t idx = (va >> shift) & ((1ull << nbits) - 1);
		const uint64_t *tbl = p2v(base, ctx);
		uint64_t d = __atomic_load_n(&tbl[idx], __ATOMIC_ACQUIRE);
		uint64_t addr = d & ((1ull << 48) - 1) & ~((1ull << g) - 1);

		if (oa52)
			addr |= bits(d, 15, 12) << 48;
		if (!(d & 1)) {
			w->fault_level = (int)lvl;
			return;
		}
		if (lvl < 3 && (d & 3) == 3) {
			if (!(d >> 63))
				w->nstable_all = false;
			base = addr;
			w->tables++;
			continue;
		}
		if (lvl == 3 && (d & 3) != 3) {
			w->fault_level = 3;
			return;
		}
		/* Blocks: level 1 only with the 4K granule or 52-bit 64K;
		 * never at level 0. */
		if (lvl == 0 || (lvl == 1 && g == 14) ||
		    (lvl == 1 && g == 16 && !oa52)) {
			w->fault_level = (int)lvl;
			return;
		}
		uint64_t size = 1ull << shift;

		w->mapped = true;
		w->level = lvl;
		w->size = size;
		w->desc = d;
		w->oa = (addr & ~(size - 1)) | (va & (size - 1));
		w->cont = (d >> 52) & 1;
		if (!(d & (1ull << 10)))	/* AF clear: access fault */
			w->mapped = false;
		if (s2) {
			unsigned ma = (unsigned)bits(d, 5, 2);

			if (d & (1ull << 6))
				w->prot |= IOPT_READ;
			if (d & (1ull << 7))
				w->prot |= IOPT_WRITE;
			if (ma == 0x1)
				w->prot |= IOPT_MMIO;
			else if (ma == 0xf ||
				 ((quirks & IOPT_PGTABLE_QUIRK_S2FWB) && ma == 0x6))
				w->prot |= IOPT_CACHE;
		} else {
			unsigned idx8 = (unsigned)bits(d, 4, 2);
			unsigned attr = (unsigned)((r->mair >> (8 * idx8)) & 0xff);
			bool ro = d & (1ull << 7), dbm = (d >> 51) & 1;

			w->prot |= IOPT_READ;
			if (!ro || dbm)
				w->prot |= IOPT_WRITE;
			if (!(d & (1ull << 6)))
				w->prot |= IOPT_PRIV;
			if ((attr & 0xf0) == 0)
				w->prot |= IOPT_MMIO;
			else if (attr == 0xff)
				w->prot |= IOPT_CACHE;
			w->dirty = dbm && !ro;
			w->ns = (d >> 5) & 1;
		}
		if ((d >> 54) & 1)
			w->prot |= IOPT_NOEXEC;
		return;
	}
}

void ref_walk_v7s(const struct iopt_pgtable_info *info, uint32_t quirks, tu_p2v_fn p2v,
		  void *ctx, uint64_t va, struct ref_walk *w);

void ref_walk(const struct iopt_pgtable_info *info, uint32_t quirks, tu_p2v_fn p2v,
	      void *ctx, uint64_t va, struct ref_walk *w)
{
	memset(w, 0, sizeof(*w));
	if (info->fmt == IOPT_ARM_V7S)
		ref_walk_v7s(info, quirks, p2v, ctx, va, w);
	else
		ref_walk_lpae(info, quirks, p2v, ctx, va, w);
}

unsigned tu_expect_prot(enum iopt_pgtable_fmt fmt, uint32_t quirks, unsigned prot)
{
	unsigned e = prot & (IOPT_READ | IOPT_WRITE | IOPT_NOEXEC);

	if (prot & IOPT_MMIO)
		e |= IOPT_MMIO;
	else if (prot & IOPT_CACHE)
		e |= IOPT_CACHE;
	switch (fmt) {
	case IOPT_ARM_64_LPAE_S1:
	case IOPT_ARM_32_LPAE_S1:
		e |= IOPT_READ | (prot & IOPT_PRIV);
		break;
	case IOPT_ARM_V7S:
		if (quirks & IOPT_PGTABLE_QUIRK_NO_PERMS)
			e = (e & ~(IOPT_PRIV | IOPT_NOEXEC)) | IOPT_READ |
			    IOPT_WRITE;
		else
			e |= IOPT_READ | (prot & IOPT_PRIV);
		break;
	default:
		break;
	}
	return e;
}

/* ---- table memory ----------------------------------------------------- */

static void *tmem_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct tmem *m = ctx;
	unsigned lg2 = (unsigned)__builtin_ctzll(size);
	void *p = NULL;

	pthread_mutex_lock(&m->lock);
	if (m->fail_at && --m->fail_at == 0) {
		pthread_mutex_unlock(&m->lock);
		return NULL;
	}
	if (m->free_lists[lg2]) {
		p = m->free_lists[lg2];
		m->free_lists[lg2] = *(void **)p;
	} else {
		size_t off = (m->brk + size - 1) & ~(size - 1);

		if (off + size <= m->bytes) {
			p = m->host + off;
			m->brk = off + size;
		}
	}
	if (p) {
		memset(p, 0, size);
		/* The device view holds stale garbage until synced. */
		memset(m->dev + ((uint8_t *)p - m->host), 0xa5, size);
		m->allocs++;
		m->live++;
		*pa = m->base_pa + (uint64_t)((uint8_t *)p - m->host);
	}
	pthread_mutex_unlock(&m->lock);
	return p;
}

static void tmem_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	struct tmem *m = ctx;
	unsigned lg2 = (unsigned)__builtin_ctzll(size);

	pthread_mutex_lock(&m->lock);
	if (pa != m->base_pa + (uint64_t)((uint8_t *)va - m->host) ||
	    (uint8_t *)va < m->host || (uint8_t *)va >= m->host + m->bytes)
		abort();
	memset(va, 0xdd, size);		/* poison: use-after-free shows */
	*(void **)va = m->free_lists[lg2];
	m->free_lists[lg2] = va;
	m->frees++;
	m->live--;
	pthread_mutex_unlock(&m->lock);
}

void *tmem_host_p2v(uint64_t pa, void *ctx)
{
	struct tmem *m = ctx;

	if (pa < m->base_pa || pa - m->base_pa >= m->bytes)
		abort();
	return m->host + (pa - m->base_pa);
}

void *tmem_dev_p2v(uint64_t pa, void *ctx)
{
	struct tmem *m = ctx;

	if (pa < m->base_pa || pa - m->base_pa >= m->bytes)
		abort();
	return m->dev + (pa - m->base_pa);
}

static void tmem_sync(void *va, size_t size, void *ctx)
{
	struct tmem *m = ctx;
	size_t off = (size_t)((uint8_t *)va - m->host);

	if ((uint8_t *)va < m->host || off + size > m->bytes)
		abort();
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < size; i += 8) {
		uint64_t v = __atomic_load_n((uint64_t *)(void *)(m->host + off + i),
					     __ATOMIC_RELAXED);

		if (size - i >= 8)
			__atomic_store_n((uint64_t *)(void *)(m->dev + off + i), v,
					 __ATOMIC_RELAXED);
		else
			memcpy(m->dev + off + i, m->host + off + i, size - i);
	}
	m->syncs++;
	m->synced_bytes += size;
	pthread_mutex_unlock(&m->lock);
}

const struct iopt_pgtable_mem_ops tmem_ops = {
	.alloc = tmem_alloc,
	.free = tmem_free,
	.phys_to_virt = tmem_host_p2v,
	.sync = tmem_sync,
};

void tmem_init(struct tmem *m, uint64_t base_pa, size_t bytes)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->host = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	m->dev = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->host == MAP_FAILED || m->dev == MAP_FAILED)
		abort();
	m->base_pa = base_pa;
	m->bytes = bytes;
}

void tmem_destroy(struct tmem *m)
{
	munmap(m->host, m->bytes);
	munmap(m->dev, m->bytes);
	pthread_mutex_destroy(&m->lock);
}

/* ---- shadow ----------------------------------------------------------- */

void shadow_init(struct shadow *s)
{
	memset(s, 0, sizeof(*s));
}

void shadow_free(struct shadow *s)
{
	free(s->m);
	memset(s, 0, sizeof(*s));
}

/* First mapping whose last byte is >= va. */
static size_t shadow_lower(const struct shadow *s, uint64_t va)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->m[mid].va + (s->m[mid].size - 1) < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool shadow_overlaps(const struct shadow *s, uint64_t va, uint64_t size)
{
	size_t i = shadow_lower(s, va);

	return i < s->n && s->m[i].va <= va + (size - 1);
}

static void shadow_insert_at(struct shadow *s, size_t i, struct smap v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->m = realloc(s->m, s->cap * sizeof(*s->m));
		if (!s->m)
			abort();
	}
	memmove(&s->m[i + 1], &s->m[i], (s->n - i) * sizeof(*s->m));
	s->m[i] = v;
	s->n++;
}

void shadow_add(struct shadow *s, uint64_t va, uint64_t size, uint64_t pa,
		unsigned prot)
{
	shadow_insert_at(s, shadow_lower(s, va),
			 (struct smap){ va, size, pa, prot });
}

void shadow_remove(struct shadow *s, uint64_t va, uint64_t size)
{
	uint64_t last = va + (size - 1);
	size_t i = shadow_lower(s, va);

	while (i < s->n && s->m[i].va <= last) {
		struct smap old = s->m[i];
		uint64_t olast = old.va + (old.size - 1);

		memmove(&s->m[i], &s->m[i + 1], (s->n - i - 1) * sizeof(*s->m));
		s->n--;
		if (old.va < va) {
			shadow_insert_at(s, i, (struct smap){ old.va, va - old.va,
							       old.pa, old.prot });
			i++;
		}
		if (olast > last) {
			uint64_t off = last + 1 - old.va;

			shadow_insert_at(s, i, (struct smap){ last + 1, olast - last,
							       old.pa + off,
							       old.prot });
			i++;
		}
	}
}

const struct smap *shadow_find(const struct shadow *s, uint64_t va)
{
	size_t i = shadow_lower(s, va);

	if (i < s->n && s->m[i].va <= va)
		return &s->m[i];
	return NULL;
}

uint64_t shadow_mapped_prefix(const struct shadow *s, uint64_t va,
			      uint64_t max)
{
	uint64_t got = 0;

	while (got < max) {
		const struct smap *m = shadow_find(s, va + got);

		if (!m)
			break;
		got += m->va + m->size - (va + got);
	}
	return got < max ? got : max;
}

void tu_expect_pa(struct iopt_pgtable *pt, uint64_t va, uint64_t pa)
{
	uint64_t got = 0;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, va, &got), 0);
	assert_int_equal(got, pa);
}

void tu_expect_none(struct iopt_pgtable *pt, uint64_t va)
{
	uint64_t got;

	assert_int_equal(iopt_pgtable_iova_to_phys(pt, va, &got), -ENOENT);
}

void tu_expect_pages(struct iopt_pgtable *pt, uint64_t va, uint64_t bytes,
		     const uint8_t *gone, uint64_t off, uint64_t pa_off)
{
	for (uint64_t p = 0; p < bytes / 4096; p++) {
		uint64_t a = va + p * 4096 + off;

		if (gone[p])
			tu_expect_none(pt, a);
		else
			tu_expect_pa(pt, a, a + pa_off);
	}
}

/* ---- simulated physical memory with failure injection ------------------ */

static void *fpm_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct fpm *f = ctx;

	if (f->fail_all || (f->fail_at && ++f->count == f->fail_at)) {
		f->failed++;
		return NULL;
	}
	return iopt_physmem_mem_ops()->alloc(size, pa, f->pm);
}

static void fpm_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	struct fpm *f = ctx;

	iopt_physmem_mem_ops()->free(va, pa, size, f->pm);
}

static void *fpm_p2v(uint64_t pa, void *ctx)
{
	struct fpm *f = ctx;

	return iopt_physmem_mem_ops()->phys_to_virt(pa, f->pm);
}

const struct iopt_pgtable_mem_ops fpm_ops = {
	.alloc = fpm_alloc, .free = fpm_free, .phys_to_virt = fpm_p2v,
};

/* ---- SMMU models on the testbed ----------------------------------------- */

void tu_model_cfg(struct iopt_testbed_cfg *c, enum iopt_testbed_smmu smmu,
		  uint64_t base, uint64_t size)
{
	iopt_testbed_default_cfg(c, smmu);
	c->mem_base = base;
	c->mem_size = size;
	c->probe = c->dma = c->attach = false;
}

struct iopt_testbed *tu_testbed(const struct iopt_testbed_cfg *c)
{
	struct iopt_testbed *tb = NULL;

	assert_int_equal(iopt_testbed_create(c, &tb), 0);
	return tb;
}

void tu_smmuv3_s1_domain(struct iopt_smmuv3_drv *drv, struct iopt_physmem *pm,
			 uint32_t sid, struct iopt_smmuv3_drv_domain **dom,
			 struct iopt_pgtable **pt)
{
	struct iopt_pgtable_cfg pc = {
		.fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096, .ias = 48, .oas = 48,
		.coherent_walk = true, .tlb = iopt_smmuv3_drv_tlb_ops(),
		.mem = iopt_physmem_mem_ops(), .mem_ctx = pm,
	};

	assert_int_equal(iopt_smmuv3_drv_domain_alloc(drv, 1, dom), 0);
	pc.tlb_cookie = *dom;
	assert_int_equal(iopt_pgtable_alloc(&pc, pt), 0);
	assert_int_equal(iopt_smmuv3_drv_attach(*dom, *pt, sid), 0);
}

void tu_smmuv3_bringup(struct iopt_smmuv3 *s, const struct tu_v3_bringup *b,
		       uint64_t cycle)
{
	/* Register offsets of IHI0070 6.2. */
	const struct { uint64_t off; unsigned size; uint64_t v; } w[] = {
		{ 0x80, 8, b->strtab },			/* STRTAB_BASE */
		{ 0x88, 4, b->sid_bits },		/* STRTAB_BASE_CFG: linear */
		{ 0x90, 8, b->cmdq | b->cmdq_log2 },	/* CMDQ_BASE */
		{ 0xa0, 8, b->evtq | b->evtq_log2 },	/* EVENTQ_BASE */
		{ 0x2c, 4, b->cr2 },			/* CR2 */
		{ 0x50, 4, b->irq_ctrl },		/* IRQ_CTRL */
		{ 0x20, 4, b->cr0 },			/* CR0 */
	};
	uint64_t ack;

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		assert_int_equal(iopt_smmuv3_mmio_write(s, w[i].off, w[i].size,
							w[i].v, cycle), 0);
	assert_int_equal(iopt_smmuv3_mmio_read(s, 0x24, 4, &ack, cycle), 0);
	assert_int_equal(ack, b->cr0);		/* CR0ACK */
}
