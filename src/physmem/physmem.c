/* SPDX-License-Identifier: MIT */
/*
 * Simulated physical memory (include/iopgtable/physmem.h).
 *
 * Frames (2 MiB of host memory each) hang off a two-level radix: a top
 * array of leaves of 4096 frame pointers. Leaves and frames are created on
 * first use and published with a release compare-and-swap; lookups load
 * them with acquire, which pairs with it, so translation takes no lock. The
 * allocator (bump pointer plus one free list per size) and its record of
 * live blocks (an open-addressing hash) are under a mutex.
 */
#define _DEFAULT_SOURCE	/* MAP_ANONYMOUS */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <iopgtable/physmem.h>

#include "../platform/platform.h"

#define FRAME_LG2 21
#define LEAF_LG2 12
#define LEAF_FRAMES (1u << LEAF_LG2)
#define MIN_LG2 6
#define MAX_LG2 FRAME_LG2

struct pm_block {		/* a live allocation, in the hash */
	uint64_t pa;		/* UINT64_MAX: empty slot */
	uint64_t size;
};

#define CPU_REGION (64u << 10)	/* small blocks come from per-CPU regions */
#define CPU_SLOTS 64

struct iopt_physmem {
	uint64_t base, size;
	uint64_t nleaves;
	uint64_t *leaves;	/* uint64_t holding a pointer to uint64_t[4096] */

	struct plat_mutex lock;
	uint64_t brk;		/* offset of never-allocated space */
	uint64_t free_head[MAX_LG2 + 1];	/* pa + 1 of a free block, 0: none */
	/* Fresh small blocks are carved from a region per CPU, so that tables
	 * made by different CPUs do not sit side by side: hardware prefetchers
	 * fetch neighbouring lines, which then bounce between the CPUs that
	 * write them. */
	uint64_t cpu_cur[CPU_SLOTS], cpu_end[CPU_SLOTS];	/* offsets */
	struct pm_block *live;
	uint64_t live_cap, live_n;
	uint64_t used;
};

int iopt_physmem_create(uint64_t base, uint64_t size, struct iopt_physmem **out)
{
	struct iopt_physmem *pm;

	if (!out || !size || (base | size) & (IOPT_PHYSMEM_FRAME - 1) ||
	    base + size < base || (size >> FRAME_LG2) > (1ull << 32))
		return -EINVAL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->base = base;
	pm->size = size;
	pm->nleaves = ((size >> FRAME_LG2) + LEAF_FRAMES - 1) >> LEAF_LG2;
	pm->leaves = calloc(pm->nleaves, sizeof(uint64_t));
	pm->live_cap = 64;
	pm->live = malloc(pm->live_cap * sizeof(*pm->live));
	if (!pm->leaves || !pm->live || plat_mutex_init(&pm->lock)) {
		free(pm->leaves);
		free(pm->live);
		free(pm);
		return -ENOMEM;
	}
	memset(pm->live, 0xff, pm->live_cap * sizeof(*pm->live));
	*out = pm;
	return 0;
}

void iopt_physmem_destroy(struct iopt_physmem *pm)
{
	if (!pm)
		return;
	for (uint64_t l = 0; l < pm->nleaves; l++) {
		uint64_t *leaf = (uint64_t *)(uintptr_t)pm->leaves[l];

		if (!leaf)
			continue;
		for (unsigned f = 0; f < LEAF_FRAMES; f++)
			if (leaf[f])
				munmap((void *)(uintptr_t)leaf[f],
				       IOPT_PHYSMEM_FRAME);
		free(leaf);
	}
	plat_mutex_destroy(&pm->lock);
	free(pm->leaves);
	free(pm->live);
	free(pm);
}

/*
 * A frame's host memory: zeroed, mapped on first touch, and page aligned,
 * so that a physical address's offset in its page, and so its cache line
 * and the lines a table spans, are the host address's too (the
 * simulation's coherence model keys lines by host address; a heap block
 * starts 16 bytes into a page).
 */
static void *pm_frame_map(void)
{
	void *p = mmap(NULL, IOPT_PHYSMEM_FRAME, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Load *slot, or create it (a frame, else zeroed heap of bytes) and
 * publish it. */
static void *pm_slot(uint64_t *slot, size_t bytes, bool frame)
{
	/* Acquire: pairs with the release CAS below. */
	uint64_t v = plat_load_acq64(slot);

	if (plat_likely(v))
		return (void *)(uintptr_t)v;
	void *p = frame ? pm_frame_map() : calloc(1, bytes);

	if (!p)
		return NULL;
	uint64_t old = 0;

	if (plat_cas_rel64(slot, &old, (uint64_t)(uintptr_t)p))
		return p;
	/* Lost the race: use the winner's. */
	if (frame)
		munmap(p, IOPT_PHYSMEM_FRAME);
	else
		free(p);
	return (void *)(uintptr_t)old;
}

/* The frame of off, creating its leaf table and frame the first time. Out
 * of line, so that iopt_physmem_ptr()'s lookup needs no stack frame. */
__attribute__((noinline, cold))
static void *pm_frame_create(struct iopt_physmem *pm, uint64_t off)
{
	uint64_t frame = off >> FRAME_LG2;
	uint64_t *leaf = pm_slot(&pm->leaves[frame >> LEAF_LG2],
				 LEAF_FRAMES * sizeof(uint64_t), false);
	uint8_t *f;

	if (!leaf)
		return NULL;
	f = pm_slot(&leaf[frame & (LEAF_FRAMES - 1)], IOPT_PHYSMEM_FRAME, true);
	return f ? f + (off & (IOPT_PHYSMEM_FRAME - 1)) : NULL;
}

void *iopt_physmem_ptr(struct iopt_physmem *pm, uint64_t pa, size_t len)
{
	uint64_t off = pa - pm->base;

	if (pa < pm->base || off >= pm->size || !len || len > pm->size - off ||
	    (off >> FRAME_LG2) != ((off + len - 1) >> FRAME_LG2))
		return NULL;
	uint64_t frame = off >> FRAME_LG2;
	/* Acquire: pairs with pm_slot()'s release CAS (leaf and frame). */
	uint64_t leaf = plat_load_acq64(&pm->leaves[frame >> LEAF_LG2]);
	uint64_t f = leaf ? plat_load_acq64((uint64_t *)(uintptr_t)leaf +
					    (frame & (LEAF_FRAMES - 1))) : 0;

	if (plat_unlikely(!f))
		return pm_frame_create(pm, off);
	return (uint8_t *)(uintptr_t)f + (off & (IOPT_PHYSMEM_FRAME - 1));
}

/* ---- live-block hash (under pm->lock) ------------------------------------ */

static uint64_t pm_hash(uint64_t pa, uint64_t cap)
{
	return (pa * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

static struct pm_block *pm_find(struct iopt_physmem *pm, uint64_t pa)
{
	for (uint64_t i = pm_hash(pa, pm->live_cap);; i = (i + 1) & (pm->live_cap - 1)) {
		if (pm->live[i].pa == pa || pm->live[i].pa == UINT64_MAX)
			return &pm->live[i];
	}
}

static int pm_grow(struct iopt_physmem *pm)
{
	struct pm_block *old = pm->live;
	uint64_t cap = pm->live_cap;
	struct pm_block *n = malloc(2 * cap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	memset(n, 0xff, 2 * cap * sizeof(*n));
	pm->live = n;
	pm->live_cap = 2 * cap;
	for (uint64_t i = 0; i < cap; i++)
		if (old[i].pa != UINT64_MAX)
			*pm_find(pm, old[i].pa) = old[i];
	free(old);
	return 0;
}

/* Remove the entry at b, re-inserting the rest of its probe chain. */
static void pm_erase(struct iopt_physmem *pm, struct pm_block *b)
{
	uint64_t i = (uint64_t)(b - pm->live), mask = pm->live_cap - 1;

	pm->live[i].pa = UINT64_MAX;
	for (i = (i + 1) & mask; pm->live[i].pa != UINT64_MAX; i = (i + 1) & mask) {
		struct pm_block e = pm->live[i];

		pm->live[i].pa = UINT64_MAX;
		*pm_find(pm, e.pa) = e;
	}
}

int iopt_physmem_alloc(struct iopt_physmem *pm, size_t size, uint64_t *pa)
{
	unsigned lg2;
	uint64_t p = 0;
	int ret = 0;

	if (size < (1u << MIN_LG2) || size > IOPT_PHYSMEM_FRAME ||
	    (size & (size - 1)))
		return -EINVAL;
	lg2 = (unsigned)__builtin_ctzll(size);
	plat_mutex_lock(&pm->lock);
	if ((pm->live_n + 1) * 2 > pm->live_cap && pm_grow(pm)) {
		ret = -ENOMEM;
		goto out;
	}
	if (pm->free_head[lg2]) {
		p = pm->free_head[lg2] - 1;
		uint64_t *node = iopt_physmem_ptr(pm, p, sizeof(uint64_t));

		pm->free_head[lg2] = *node;
	} else if (size < CPU_REGION) {
		unsigned c = plat_cpu_id() % CPU_SLOTS;
		uint64_t off = (pm->cpu_cur[c] + size - 1) & ~((uint64_t)size - 1);

		if (!pm->cpu_end[c] || off + size > pm->cpu_end[c]) {
			uint64_t r = (pm->brk + CPU_REGION - 1) & ~((uint64_t)CPU_REGION - 1);

			if (r > pm->size || CPU_REGION > pm->size - r) {
				ret = -ENOMEM;
				goto out;
			}
			pm->brk = r + CPU_REGION;
			off = r;
			pm->cpu_end[c] = r + CPU_REGION;
		}
		pm->cpu_cur[c] = off + size;
		p = pm->base + off;
	} else {
		uint64_t off = (pm->brk + size - 1) & ~((uint64_t)size - 1);

		if (off > pm->size || size > pm->size - off) {
			ret = -ENOMEM;
			goto out;
		}
		p = pm->base + off;
		pm->brk = off + size;
	}
	void *host = iopt_physmem_ptr(pm, p, size);

	if (!host) {
		/* No host memory for the frame: the block is lost to the
		 * window (bump space) but nothing else changes. */
		ret = -ENOMEM;
		goto out;
	}
	memset(host, 0, size);
	*pm_find(pm, p) = (struct pm_block){ p, size };
	pm->live_n++;
	pm->used += size;
	*pa = p;
out:
	plat_mutex_unlock(&pm->lock);
	return ret;
}

int iopt_physmem_free(struct iopt_physmem *pm, uint64_t pa, size_t size)
{
	int ret = 0;

	plat_mutex_lock(&pm->lock);
	struct pm_block *b = pm_find(pm, pa);

	if (b->pa != pa || b->size != size) {
		ret = -EINVAL;
		goto out;
	}
	pm_erase(pm, b);
	pm->live_n--;
	pm->used -= size;
	unsigned lg2 = (unsigned)__builtin_ctzll(size);
	uint64_t *node = iopt_physmem_ptr(pm, pa, sizeof(uint64_t));

	*node = pm->free_head[lg2];
	pm->free_head[lg2] = pa + 1;
out:
	plat_mutex_unlock(&pm->lock);
	return ret;
}

uint64_t iopt_physmem_used(const struct iopt_physmem *pm)
{
	struct iopt_physmem *p = (struct iopt_physmem *)pm;
	uint64_t u;

	plat_mutex_lock(&p->lock);
	u = p->used;
	plat_mutex_unlock(&p->lock);
	return u;
}

static void *pm_ops_alloc(size_t size, uint64_t *pa, void *ctx)
{
	struct iopt_physmem *pm = ctx;

	if (iopt_physmem_alloc(pm, size < 64 ? 64 : size, pa))
		return NULL;
	return iopt_physmem_ptr(pm, *pa, size);
}

static void pm_ops_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	(void)va;
	iopt_physmem_free(ctx, pa, size < 64 ? 64 : size);
}

static void *pm_ops_p2v(uint64_t pa, void *ctx)
{
	return iopt_physmem_ptr(ctx, pa, 1);
}

/* Clean the range to the point of coherency (platform.h, "Cache
 * maintenance"): the walker reads simulated physical memory, which is host
 * memory, so only the simulation charges it. */
static void pm_ops_sync(void *va, size_t size, void *ctx)
{
	(void)ctx;
	plat_cache_clean(va, size);
}

static const struct iopt_pgtable_mem_ops pm_ops = {
	.alloc = pm_ops_alloc,
	.free = pm_ops_free,
	.phys_to_virt = pm_ops_p2v,
	.sync = pm_ops_sync,
};

const struct iopt_pgtable_mem_ops *iopt_physmem_mem_ops(void)
{
	return &pm_ops;
}
