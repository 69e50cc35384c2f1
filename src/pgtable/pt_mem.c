/* SPDX-License-Identifier: MIT */
/*
 * Table memory: the default host allocator, allocation accounting, and
 * RCU-deferred freeing of unlinked subtrees.
 */
#include <stdlib.h>
#include <string.h>

#include "pt_internal.h"

static void *default_alloc(size_t size, uint64_t *pa, void *ctx)
{
	size_t align = size < sizeof(void *) ? sizeof(void *) : size;
	void *p = aligned_alloc(align, size < align ? align : size);

	(void)ctx;
	if (!p)
		return NULL;
	memset(p, 0, size);
	*pa = (uint64_t)(uintptr_t)p;
	return p;
}

static void default_free(void *va, uint64_t pa, size_t size, void *ctx)
{
	(void)pa;
	(void)size;
	(void)ctx;
	free(va);
}

static void *default_phys_to_virt(uint64_t pa, void *ctx)
{
	(void)ctx;
	return (void *)(uintptr_t)pa;
}

/* Host memory is coherent with the host: nothing to clean. */
static void default_sync(void *va, size_t size, void *ctx)
{
	(void)va;
	(void)size;
	(void)ctx;
}

const struct iopt_mem_ops pt_default_mem = {
	.alloc = default_alloc,
	.free = default_free,
	.phys_to_virt = default_phys_to_virt,
	.sync = default_sync,
};

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
	/* Release: pairs with the acquire load in iopt_free(). */
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
