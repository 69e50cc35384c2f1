/* SPDX-License-Identifier: MIT */
/*
 * Table memory: the default host allocator, allocation accounting, and
 * RCU-deferred freeing of unlinked subtrees.
 */
#define _DEFAULT_SOURCE	/* madvise(), MADV_HUGEPAGE */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pt_internal.h"

/*
 * Table pool of the default allocator (one per page table, ctx). A small
 * page table allocates each table from the heap, as a general allocator
 * would; from the PT_POOL_HEAP_TABLES-th table on, tables are carved from
 * 2 MiB chunks, 2 MiB aligned and advised for transparent huge pages, so
 * that walks over many tables miss the host TLB far less than with tables
 * spread over 4 KiB host pages (docs/pgtable.md, "Table memory"). A freed
 * table of either origin goes on a free list of its size for the next
 * allocation of that size. Tables are returned to the pool only by
 * pt_table_free_now(), which runs after the RCU grace period for every
 * table a walker may have seen (pt_defer_free()), so a recycled table is
 * never one a walker still holds. Everything is freed with the page table
 * (pt_pool_destroy()).
 */
#define PT_POOL_CHUNK_LG2 21	/* chunks of 2 MiB: huge-page advised */
#define PT_POOL_HEAP_TABLES 256	/* tables from the heap before chunks */
#define PT_POOL_MIN_LG2 3	/* pooled table sizes: 8 B ... */
#define PT_POOL_MAX_LG2 16	/* ... 64 KiB; larger from the heap */

struct pt_chunk {
	struct pt_chunk *next;
	void *mem;
};

struct pt_pool {
	struct plat_mutex lock;	/* everything below */
	void *free[PT_POOL_MAX_LG2 + 1];	/* by size lg2; link in word 0 */
	char *bump, *end;	/* unused part of the newest chunk */
	struct pt_chunk *chunks;
	unsigned nheap;		/* tables allocated from the heap */
	struct {
		void *p;
		size_t size;
	} heap[PT_POOL_HEAP_TABLES];
};

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Freed tables stay poisoned in the pool, so ASan still reports a use
 * after free (before the grace period ended, say) of a pooled table. */
#define PT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define PT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define PT_POISON(p, n) ((void)(p), (void)(n))
#define PT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct pt_pool *pt_pool_create(void)
{
	struct pt_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	if (plat_mutex_init(&pool->lock)) {
		free(pool);
		return NULL;
	}
	return pool;
}

void pt_pool_destroy(struct pt_pool *pool)
{
	if (!pool)
		return;
	while (pool->chunks) {
		struct pt_chunk *c = pool->chunks;

		pool->chunks = c->next;
		PT_UNPOISON(c->mem, (size_t)1 << PT_POOL_CHUNK_LG2);
		free(c->mem);
		free(c);
	}
	for (unsigned i = 0; i < pool->nheap; i++) {
		PT_UNPOISON(pool->heap[i].p, pool->heap[i].size);
		free(pool->heap[i].p);
	}
	plat_mutex_destroy(&pool->lock);
	free(pool);
}

static unsigned pt_lg2(size_t size)
{
	return (unsigned)(63 - __builtin_clzll((unsigned long long)size));
}

/* Is a table of size bytes pooled? (A power of two in range.) */
static bool pt_pooled(size_t size)
{
	return !(size & (size - 1)) && pt_lg2(size) >= PT_POOL_MIN_LG2 &&
	       pt_lg2(size) <= PT_POOL_MAX_LG2;
}

/* Add a chunk; pool->lock held. */
static bool pt_pool_grow(struct pt_pool *pool)
{
	size_t bytes = (size_t)1 << PT_POOL_CHUNK_LG2;
	struct pt_chunk *c = malloc(sizeof(*c));

	if (!c)
		return false;
	c->mem = aligned_alloc(bytes, bytes);
	if (!c->mem) {
		free(c);
		return false;
	}
	(void)madvise(c->mem, bytes, MADV_HUGEPAGE);	/* advice only */
	PT_POISON(c->mem, bytes);
	c->next = pool->chunks;
	pool->chunks = c;
	pool->bump = c->mem;
	pool->end = (char *)c->mem + bytes;
	return true;
}

/* A new table of size bytes (aligned to it); pool->lock held. */
static void *pt_pool_new(struct pt_pool *pool, size_t size)
{
	if (pool->nheap < PT_POOL_HEAP_TABLES) {
		void *p = aligned_alloc(size, size);

		if (p) {
			pool->heap[pool->nheap].p = p;
			pool->heap[pool->nheap++].size = size;
		}
		return p;
	}
	/* Tables are aligned to their size (the descriptor's address field
	 * drops the low bits); chunks to theirs. */
	uintptr_t a = ((uintptr_t)pool->bump + size - 1) & ~(uintptr_t)(size - 1);

	if (!pool->bump || a + size > (uintptr_t)pool->end) {
		if (!pt_pool_grow(pool))
			return NULL;
		a = (uintptr_t)pool->bump;
	}
	pool->bump = (char *)a + size;
	PT_UNPOISON((void *)a, size);
	return (void *)a;
}

static void *pt_pool_alloc(struct pt_pool *pool, size_t size)
{
	unsigned lg2 = pt_lg2(size);
	void *p;

	plat_mutex_lock(&pool->lock);
	p = pool->free[lg2];
	if (p) {
		PT_UNPOISON(p, size);
		pool->free[lg2] = *(void **)p;
	} else {
		p = pt_pool_new(pool, size);
	}
	plat_mutex_unlock(&pool->lock);
	if (p)
		memset(p, 0, size);
	return p;
}

static void pt_pool_free(struct pt_pool *pool, void *p, size_t size)
{
	unsigned lg2 = pt_lg2(size);

	plat_mutex_lock(&pool->lock);
	*(void **)p = pool->free[lg2];
	pool->free[lg2] = p;
	PT_POISON(p, size);
	plat_mutex_unlock(&pool->lock);
}

static void *default_alloc(size_t size, uint64_t *pa, void *ctx)
{
	void *p;

	if (ctx && pt_pooled(size)) {
		p = pt_pool_alloc(ctx, size);
	} else {
		size_t align = size < sizeof(void *) ? sizeof(void *) : size;

		p = aligned_alloc(align, size < align ? align : size);
		if (p)
			memset(p, 0, size);
	}
	if (!p)
		return NULL;
	*pa = (uint64_t)(uintptr_t)p;
	return p;
}

static void default_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	(void)pa;
	if (ctx && pt_pooled(size))
		pt_pool_free(ctx, va, size);
	else
		free(va);
}

static void *default_phys_to_virt(uint64_t pa, void *ctx)
{
	(void)ctx;
	return (void *)(uintptr_t)pa;
}

/* Clean the range to the point of coherency (platform.h, "Cache
 * maintenance": nothing on the host, whose memory is what the walker
 * reads; charged on the simulation). */
static void default_sync(void *va, size_t size, void *ctx)
{
	(void)ctx;
	plat_cache_clean(va, size);
}

const struct iopt_pgtable_mem_ops pt_default_mem = {
	.alloc = default_alloc,
	.free = default_free,
	.phys_to_virt = default_phys_to_virt,
	.sync = default_sync,
};

void pt_sync_cleared_nc(const struct iopt_pgtable *pt, void *p, size_t bytes)
{
	size_t esize = pt->cfg.fmt == IOPT_ARM_V7S ? 4 : 8;

	if (!(pt->cfg.quirks & IOPT_PGTABLE_QUIRK_UNMAP_SYNC_EACH)) {
		pt_sync(pt, p, bytes);
		return;
	}
	for (size_t off = 0; off < bytes; off += esize)
		pt_sync(pt, (char *)p + off, esize);
}

void *pt_table_alloc(struct iopt_pgtable *pt, unsigned depth, uint64_t *pa)
{
	void *p = pt->cfg.mem->alloc(pt->table_bytes[depth], pa,
				     pt->cfg.mem_ctx);

	if (p)
		plat_fetch_add_acq_rel64(&pt->n_alloc, 1);
	return p;
}

void pt_table_free_now(struct iopt_pgtable *pt, void *va, uint64_t pa,
		       unsigned depth)
{
	pt->cfg.mem->free(va, pa, pt->table_bytes[depth], pt->cfg.mem_ctx);
	plat_fetch_add_acq_rel64(&pt->n_free, 1);
}

struct pt_deferred {
	struct plat_rcu_head rcu;
	struct iopt_pgtable *pt;
	void *va;
	uint64_t pa;
	unsigned depth;
};

struct pt_deferred *pt_defer_prepare(void)
{
	return malloc(sizeof(struct pt_deferred));
}

void pt_defer_cancel(struct pt_deferred *rec)
{
	free(rec);
}

static void pt_deferred_run(struct plat_rcu_head *head)
{
	struct pt_deferred *rec = (struct pt_deferred *)(void *)head;
	struct iopt_pgtable *pt = rec->pt;

	pt->impl->free_subtree(pt, rec->va, rec->depth);
	pt_table_free_now(pt, rec->va, rec->pa, rec->depth);
	free(rec);
	/* Release: pairs with the acquire load in iopt_pgtable_free(). */
	plat_fetch_sub_rel64(&pt->deferred, 1);
}

void pt_defer_free(struct iopt_pgtable *pt, struct pt_deferred *rec,
		   void *va, uint64_t pa, unsigned depth)
{
	rec->pt = pt;
	rec->va = va;
	rec->pa = pa;
	rec->depth = depth;
	plat_fetch_add_acq_rel64(&pt->deferred, 1);
	plat_call_rcu(&rec->rcu, pt_deferred_run);
}
