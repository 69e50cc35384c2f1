/* SPDX-License-Identifier: MIT */
#include "tlb.h"

#include <iopgtable/smmuv3.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tlb_init(struct tlb *t, unsigned entries, unsigned ways,
	     enum tlb_repl repl, uint64_t seed)
{
	memset(t, 0, sizeof(*t));
	if (!ways || entries % ways || (unsigned)repl > TLB_RANDOM)
		return -EINVAL;
	t->sets = entries / ways;
	if (!t->sets || (t->sets & (t->sets - 1)))
		return -EINVAL;
	t->ways = ways;
	t->repl = repl;
	t->rng = seed ? seed : 0x853c49e6748fea9bull;
	t->e = calloc(entries, sizeof(*t->e));
	t->rr = calloc(t->sets, sizeof(*t->rr));
	t->occ = calloc((t->sets + 63) / 64, sizeof(*t->occ));
	if (!t->e || !t->rr || !t->occ) {
		tlb_fini(t);
		return -ENOMEM;
	}
	return 0;
}

void tlb_fini(struct tlb *t)
{
	free(t->e);
	free(t->rr);
	free(t->occ);
	t->e = NULL;
	t->rr = NULL;
	t->occ = NULL;
}

void tlb_touch_scan(struct tlb *t, const struct tlb_entry *set, struct tlb_entry *e)
{
	for (unsigned w = 0; w < t->ways; w++)
		if (set[w].valid && set[w].stamp > e->stamp) {
			e->stamp = ++t->tick;
			return;
		}
}

void tlb_insert(struct tlb *t, const struct tlb_entry *in)
{
	unsigned s = tlb_set_of(t, in->ia, in->size_lg2);
	struct tlb_entry *set = &t->e[(size_t)s * t->ways];
	struct tlb_entry *same = NULL, *empty = NULL, *oldest = &set[0];

	/* One pass over the set for what each choice below needs: the
	 * entry for the same block and tags (refreshed in place), else the
	 * first invalid way, else the policy's victim -- under LRU the
	 * first way with the smallest stamp (every way is valid then). */
	for (unsigned w = 0; w < t->ways; w++) {
		struct tlb_entry *x = &set[w];

		if (!x->valid) {
			if (!empty)
				empty = x;
		} else if (x->size_lg2 == in->size_lg2 && x->ia == in->ia &&
			   x->stage == in->stage && x->level == in->level &&
			   x->vmid == in->vmid && x->global == in->global &&
			   x->asid == in->asid) {
			same = x;
			break;
		} else if (x->stamp < oldest->stamp) {
			oldest = x;
		}
	}
	struct tlb_entry *victim = same ? same : empty;

	if (!victim) {
		switch (t->repl) {
		case TLB_LRU:
			victim = oldest;
			break;
		case TLB_RR:
			victim = &set[t->rr[s]];
			t->rr[s] = (t->rr[s] + 1) % t->ways;
			break;
		default:
			t->rng ^= t->rng << 13;
			t->rng ^= t->rng >> 7;
			t->rng ^= t->rng << 17;
			victim = &set[t->rng % t->ways];
			break;
		}
		t->evictions++;
	}
	/* A valid victim's set is marked occupied already (every valid
	 * entry's set is): only filling an empty way may mark it. */
	if (!victim->valid)
		t->occ[s / 64] |= 1ull << (s % 64);
	*victim = *in;
	victim->valid = true;
	victim->stamp = ++t->tick;
	t->sizes |= 1ull << in->size_lg2;
}

static bool matches(const struct tlb_entry *e, const struct tlb_match *m)
{
	if (!e->valid)
		return false;
	if (m->by_vmid && e->vmid != m->vmid)
		return false;
	if (m->by_asid && (e->global ? !m->or_global : e->asid != m->asid))
		return false;
	if (m->by_stage && e->stage != m->stage)
		return false;
	if (m->g && e->g != m->g)
		return false;
	if (m->level && e->level != m->level)
		return false;
	if (m->by_range) {
		uint64_t last = e->ia + ((1ull << e->size_lg2) - 1);

		if (last < m->lo || e->ia > m->hi)
			return false;
	}
	return true;
}

unsigned tlb_invalidate(struct tlb *t, const struct tlb_match *m)
{
	unsigned n = 0;
	uint64_t sizes = 0;

	/* Only the occupied sets: an empty set has nothing to invalidate and
	 * nothing for t->sizes. The result is the full scan's, in the same
	 * order; a full TLB still costs the full scan. */
	for (unsigned wi = 0; wi < (t->sets + 63) / 64; wi++) {
		for (uint64_t bits = t->occ[wi]; bits; bits &= bits - 1) {
			unsigned s = wi * 64 + (unsigned)__builtin_ctzll(bits);
			struct tlb_entry *set = &t->e[(size_t)s * t->ways];
			bool left = false;

			for (unsigned w = 0; w < t->ways; w++) {
				if (matches(&set[w], m)) {
					set[w].valid = false;
					n++;
				} else if (set[w].valid) {
					sizes |= 1ull << set[w].size_lg2;
					left = true;
				}
			}
			if (!left)
				t->occ[wi] &= ~(1ull << (s % 64));
		}
	}
	t->sizes = sizes;
	t->invalidated += n;
	return n;
}

int tlb_match_from_cmd(const struct iopt_smmuv3_cmd *c, struct tlb_match *m)
{
	memset(m, 0, sizeof(*m));
	switch (c->opcode) {
	case IOPT_SMMUV3_CMD_TLBI_NSNH_ALL:
		return 0;
	case IOPT_SMMUV3_CMD_TLBI_S12_VMALL:
		m->by_vmid = true;
		m->vmid = c->vmid;
		return 0;
	case IOPT_SMMUV3_CMD_TLBI_NH_ALL:
		m->by_vmid = m->by_stage = true;
		m->vmid = c->vmid;
		m->stage = 1;
		return 0;
	case IOPT_SMMUV3_CMD_TLBI_NH_ASID:
		m->by_vmid = m->by_stage = m->by_asid = true;
		m->vmid = c->vmid;
		m->stage = 1;
		m->asid = c->asid;
		return 0;
	case IOPT_SMMUV3_CMD_TLBI_NH_VA:
		m->by_asid = m->or_global = true;
		m->asid = c->asid;
		/* fall through */
	case IOPT_SMMUV3_CMD_TLBI_NH_VAA:
		m->stage = 1;
		break;
	case IOPT_SMMUV3_CMD_TLBI_S2_IPA:
		m->stage = 2;
		break;
	default:
		return -EINVAL;
	}
	m->by_vmid = m->by_stage = m->by_range = true;
	m->vmid = c->vmid;
	m->leaf_only = c->leaf;
	if (c->tg == 0) {
		m->lo = m->hi = c->addr;
		return 0;
	}
	unsigned g = c->tg == 1 ? 12 : c->tg == 2 ? 14 : 16;
	unsigned lg2 = g + c->scale;
	uint64_t span = lg2 >= 64 ? 0 : ((uint64_t)c->num + 1) << lg2;

	m->g = (uint8_t)g;
	m->level = (uint8_t)c->ttl;
	m->lo = c->addr;
	/* Not wrapping: a range past the top stops at the top. */
	if (!span || (span >> lg2) != (uint64_t)c->num + 1 ||
	    span - 1 > UINT64_MAX - c->addr)
		m->hi = UINT64_MAX;
	else
		m->hi = c->addr + (span - 1);
	return 0;
}
