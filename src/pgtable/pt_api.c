/* SPDX-License-Identifier: MIT */
/*
 * Public page-table entry points: map and unmap dispatch to the format's
 * compiled entry points (PT_DEFINE_IMPL in pt_algo.h); the rest run their
 * checks (pt_entry.h), the serialised-mode lock and the RCU read-side
 * section here around pt->impl. Also TLB sync and creation/destruction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_entry.h"

/* Without cfg.mem, tables whose addresses must fit fewer bits than host
 * addresses have (v7s: 32; LPAE: the output size, at most 40 for the
 * 32-bit formats) live in a private simulated window at 2-4 GiB, which
 * every format's table addresses can name. Host user addresses stay
 * below 2^48. */
#define PT_OWN_MEM_BASE 0x80000000ull
#define PT_OWN_MEM_SIZE 0x80000000ull
#define PT_HOST_PA_BITS 48

/* Identifies tables for the per-thread leaf-table caches. */
static uint64_t pt_next_id;

const char *iopt_pgtable_fmt_name(enum iopt_pgtable_fmt fmt)
{
	switch (fmt) {
	case IOPT_ARM_64_LPAE_S1: return "arm64-lpae-s1";
	case IOPT_ARM_64_LPAE_S2: return "arm64-lpae-s2";
	case IOPT_ARM_32_LPAE_S1: return "arm32-lpae-s1";
	case IOPT_ARM_32_LPAE_S2: return "arm32-lpae-s2";
	case IOPT_ARM_V7S: return "v7s";
	default: return "unknown";
	}
}

/* The section iova_to_phys, walk and dirty run in (map and unmap have
 * their own, in PT_DEFINE_IMPL): serialised-mode lock, RCU read side. */
static inline void pt_enter(struct iopt_pgtable *pt)
{
	if (pt->cfg.serialised)
		plat_lock(&pt->lock);
	plat_rcu_read_lock();
}

static inline void pt_leave(struct iopt_pgtable *pt)
{
	plat_rcu_read_unlock();
	if (pt->cfg.serialised)
		plat_unlock(&pt->lock);
}

void iopt_pgtable_gather_init(struct iopt_pgtable_gather *g)
{
	g->start = UINT64_MAX;
	g->last = 0;
	g->pgsize = 0;
	g->sizes = 0;
}

/*
 * Wait for every invalidation issued before the call. The state word holds
 * the pending bit and the number of syncs begun, so that claiming the
 * pending invalidations and taking a sync ticket are one atomic step: a
 * thread that finds the bit clear knows that whoever cleared it has a
 * ticket it can wait for.
 */
void pt_tlb_sync(struct iopt_pgtable *pt)
{
	if (!pt->cfg.tlb || !pt->cfg.tlb->sync)
		return;
	/* Acquire: pairs with the release OR in pt_tlb_mark_pending(). */
	uint64_t s = plat_load_acq64(&pt->sync_state);

	for (;;) {
		if (!(s & 1)) {
			uint64_t begun = s >> 1;

			/* Acquire: pairs with the release CAS below. */
			while (plat_load_acq64(&pt->sync_done) < begun)
				plat_cpu_relax();
			return;
		}
		if (plat_cas_acq_rel64(&pt->sync_state, &s, (s & ~1ull) + 2))
			break;
	}
	uint64_t ticket = (s >> 1) + 1;

	pt->cfg.tlb->sync(pt->cfg.tlb_cookie);
	uint64_t done = plat_load_acq64(&pt->sync_done);

	/* A later sync also covers every earlier one: keep the maximum. */
	while (done < ticket && !plat_cas_rel64(&pt->sync_done, &done, ticket))
		;
}

void iopt_pgtable_tlb_sync(struct iopt_pgtable *pt)
{
	pt_tlb_sync(pt);
}

int iopt_pgtable_map_pages(struct iopt_pgtable *pt, uint64_t iova, uint64_t paddr,
			   uint64_t pgsize, size_t pgcount, unsigned prot,
			   uint64_t *mapped)
{
	return pt->impl->map_pages(pt, iova, paddr, pgsize, pgcount, prot,
				   mapped);
}

int64_t iopt_pgtable_unmap_pages(struct iopt_pgtable *pt, uint64_t iova,
				 uint64_t pgsize, size_t pgcount,
				 struct iopt_pgtable_gather *gather)
{
	return pt->impl->unmap_pages(pt, iova, pgsize, pgcount, gather);
}

int iopt_pgtable_iova_to_phys(struct iopt_pgtable *pt, uint64_t iova, uint64_t *pa)
{
	int ret;

	if (pt_check_va(pt, iova, 1))
		return -ERANGE;
	pt_enter(pt);
	ret = pt->impl->iova_to_phys(pt, iova, pa);
	pt_leave(pt);
	return ret;
}

int iopt_pgtable_walk(struct iopt_pgtable *pt, uint64_t iova, struct iopt_pgtable_walk *walk)
{
	memset(walk, 0, sizeof(*walk));
	if (pt_check_va(pt, iova, 1))
		return -ERANGE;
	pt_enter(pt);
	pt->impl->walk(pt, iova, walk);
	pt_leave(pt);
	if (walk->mapped && (pt->cfg.quirks & IOPT_PGTABLE_QUIRK_HD)) {
		uint64_t d = walk->level[walk->nr_levels - 1].desc;

		/* Writable-dirty: DBM set and AP[2] (read-only) clear. */
		walk->dirty = (d & ((1ull << 51) | (1ull << 7))) == (1ull << 51);
	}
	return 0;
}

int iopt_pgtable_read_and_clear_dirty(struct iopt_pgtable *pt, uint64_t iova,
				      uint64_t size, unsigned flags,
				      struct iopt_pgtable_gather *gather,
				      void (*record)(uint64_t, uint64_t, void *),
				      void *arg)
{
	int ret;

	if (!(pt->cfg.quirks & IOPT_PGTABLE_QUIRK_HD) || (flags & ~IOPT_PGTABLE_DIRTY_NO_CLEAR) ||
	    !size)
		return -EINVAL;
	if (pt_check_va(pt, iova, size))
		return -ERANGE;
	pt_enter(pt);
	ret = pt->impl->dirty(pt, iova, size, flags, gather, record, arg);
	pt_leave(pt);
	return ret;
}

void iopt_pgtable_get_info(const struct iopt_pgtable *pt, struct iopt_pgtable_info *info)
{
	*info = pt->info;
}

void iopt_pgtable_get_stats(const struct iopt_pgtable *pt, struct iopt_pgtable_stats *st)
{
	struct iopt_pgtable *p = (struct iopt_pgtable *)pt;

	st->tables_allocated = plat_load_acq64(&p->n_alloc);
	st->tables_freed = plat_load_acq64(&p->n_free);
	st->splits = plat_load_acq64(&p->n_split);
	st->run_breaks = plat_load_acq64(&p->n_run_break);
}

static int pt_check_mem(const struct iopt_pgtable_cfg *cfg)
{
	const struct iopt_pgtable_mem_ops *m = cfg->mem;

	if (!m)
		return 0;
	if (!m->alloc || !m->free || !m->phys_to_virt)
		return -EINVAL;
	if (!cfg->coherent_walk && !m->sync)
		return -EINVAL;
	return 0;
}

int iopt_pgtable_alloc(const struct iopt_pgtable_cfg *cfg, struct iopt_pgtable **out)
{
	struct iopt_pgtable *pt;
	enum plat_lock_kind lk;
	int ret;

	if (!cfg || !out || (unsigned)cfg->fmt >= IOPT_PGTABLE_FMT_COUNT)
		return -EINVAL;
	ret = plat_lock_kind(cfg->lock_kind, PLAT_LOCK_TICKET, &lk);
	if (ret)
		return ret;
	ret = pt_check_mem(cfg);
	if (ret)
		return ret;
	/* Aligned: the struct keeps its written fields on lines of their own. */
	pt = aligned_alloc(_Alignof(struct iopt_pgtable), sizeof(*pt));
	if (!pt)
		return -ENOMEM;
	memset(pt, 0, sizeof(*pt));
	pt->cfg = *cfg;
	if (!pt->cfg.granule)
		pt->cfg.granule = 4096;
	if (!pt->cfg.mem && (cfg->fmt == IOPT_ARM_V7S ||
			     cfg->oas < PT_HOST_PA_BITS)) {
		ret = iopt_physmem_create(PT_OWN_MEM_BASE, PT_OWN_MEM_SIZE,
					  &pt->own_mem);
		if (ret)
			goto fail;
		pt->cfg.mem = iopt_physmem_mem_ops();
		pt->cfg.mem_ctx = pt->own_mem;
	} else if (!pt->cfg.mem) {
		pt->own_pool = pt_pool_create();
		if (!pt->own_pool) {
			ret = -ENOMEM;
			goto fail;
		}
		pt->cfg.mem = &pt_default_mem;
		pt->cfg.mem_ctx = pt->own_pool;
		pt->identity = true;
	}
	ret = cfg->fmt == IOPT_ARM_V7S ? pt_v7s_setup(pt) : pt_lpae_setup(pt);
	if (ret)
		goto fail;

	for (unsigned d = 0; d < pt->levels; d++)
		pt->idx_mask[d] = (1u << pt->bits[d]) - 1;
	pt->leaf_tag_shift = pt->shift[pt->levels - 1] + pt->bits[pt->levels - 1];
	pt->id = plat_fetch_add_acq_rel64(&pt_next_id, 1) + 1;
	for (unsigned i = 0; i < pt->nr_sizes; i++) {
		pt->size_idx[pt->sizes[i].lg2] = (uint8_t)(i + 1);
		pt->sizes[i].one_leaf = pt->sizes[i].depth + 1u == pt->levels &&
					!pt->sizes[i].run_lg2;
		pt->info.pgsize_bitmap |= 1ull << pt->sizes[i].lg2;
	}
	if ((pt->cfg.quirks & IOPT_PGTABLE_QUIRK_TTBR1)) {
		pt->va_first = ~0ull << pt->cfg.ias;
		pt->va_last = UINT64_MAX;
	} else {
		pt->va_first = 0;
		pt->va_last = (1ull << pt->cfg.ias) - 1;
	}
	pt->oa_last = pt->cfg.oas >= 64 ? UINT64_MAX : (1ull << pt->cfg.oas) - 1;

	ret = plat_mutex_init(&pt->split_lock);
	if (ret)
		goto fail;
	plat_lock_init(&pt->lock, lk);
	pt->top = pt_table_alloc(pt, 0, &pt->top_pa);
	if (!pt->top) {
		plat_mutex_destroy(&pt->split_lock);
		ret = -ENOMEM;
		goto fail;
	}
	pt_sync(pt, pt->top, pt->table_bytes[0]);

	pt->info.fmt = pt->cfg.fmt;
	pt->info.granule = pt->cfg.granule;
	pt->info.ias = pt->cfg.ias;
	pt->info.oas = pt->cfg.oas;
	pt->info.levels = pt->levels;
	pt->info.start_level = pt->start_level;
	if (!pt->info.concat)
		pt->info.concat = 1;
	if (pt->cfg.fmt == IOPT_ARM_V7S)
		pt_v7s_regs(pt);
	else
		pt_lpae_regs(pt);
	*out = pt;
	return 0;
fail:
	iopt_physmem_destroy(pt->own_mem);
	pt_pool_destroy(pt->own_pool);
	free(pt);
	return ret;
}

void iopt_pgtable_free(struct iopt_pgtable *pt)
{
	if (!pt)
		return;
	/* Acquire: pairs with the release decrement in each RCU callback, so
	 * that everything the callbacks did happens before the frees below. */
	while (plat_load_acq64(&pt->deferred))
		plat_rcu_barrier();
	pt->impl->free_subtree(pt, pt->top, 0);
	pt_table_free_now(pt, pt->top, pt->top_pa, 0);
	plat_mutex_destroy(&pt->split_lock);
	iopt_physmem_destroy(pt->own_mem);
	pt_pool_destroy(pt->own_pool);
	free(pt);
}
