/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 configuration: the stream table and STE checks (5.1, 5.2), the
 * CD tables and CD checks (5.3, 5.4), nested CD fetches through stage 2,
 * and the configuration cache those decode into (struct cfg_entry) with
 * its invalidation (CMD_CFGI_*, 4.3).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "v3_model.h"

/* A structure read: its latency (cycles), or -EFAULT. */
static int64_t mem_read(struct iopt_smmuv3 *s, uint64_t pa, void *buf, size_t len)
{
	int64_t l = s->core.mem.read(s->core.mem.ctx, pa, buf, len);

	if (l < 0)
		return -EFAULT;
	return l + s->core.mem.desc_latency;
}

/*
 * Fetch the STE for sid: 0, or the event type. The stream table as
 * STRTAB_BASE and STRTAB_BASE_CFG (6.3.24-25) define it: LOG2SIZE as
 * written aligns the base, MIN(LOG2SIZE, SIDSIZE) bounds the StreamIDs;
 * reserved FMT values act as linear, reserved SPLIT values as 6.
 */
static unsigned fetch_ste(struct iopt_smmuv3 *s, uint32_t sid, struct iopt_smmuv3_ste *ste,
			  uint64_t w[8], int64_t *lat)
{
	unsigned lit = (unsigned)v3_fld(s->strtab_cfg, 5, 0);
	unsigned log2size = lit < s->p.sidsize ? lit : s->p.sidsize;
	unsigned split = (unsigned)v3_fld(s->strtab_cfg, 10, 6);
	unsigned fmt = (unsigned)v3_fld(s->strtab_cfg, 17, 16);
	uint64_t base = s->strtab_base & (((1ull << 52) - 1) & ~0x3full);
	uint64_t pa;
	int64_t l;

	/* A 32-bit StreamID with LOG2SIZE 32 has no bit above the table:
	 * shift only by less than the width. */
	if (log2size < 32 && (sid >> log2size))
		return IOPT_SMMUV3_EVT_C_BAD_STREAMID;
	if (fmt == 1 && s->p.strtab_2lvl) {
		uint64_t l1;
		int hi;

		if (split != 6 && split != 8 && split != 10)
			split = 6;
		/* ADDR[MAX(5, LOG2SIZE - SPLIT - 1 + 3):0] = 0. */
		hi = (int)lit + 2 - (int)split;
		base &= ~((2ull << (hi > 5 ? hi : 5)) - 1);
		s->fetch_pa = base + (uint64_t)(sid >> split) * 8;
		l = mem_read(s, s->fetch_pa, &l1, 8);
		if (l < 0)
			return IOPT_SMMUV3_EVT_F_STE_FETCH;
		*lat += l;
		unsigned span = (unsigned)v3_fld(l1, 4, 0);

		if (!span || span > split + 1 ||
		    (sid & ((1u << split) - 1)) >= (1u << (span - 1)))
			return IOPT_SMMUV3_EVT_C_BAD_STREAMID;
		pa = (l1 & (((1ull << 56) - 1) & ~0x3full) &
		      ~((64ull << (span - 1)) - 1)) +
		     (uint64_t)(sid & ((1u << split) - 1)) * 64;
	} else {
		/* Linear: ADDR[LOG2SIZE + 5:0] = 0. */
		base = lit + 5 >= 63 ? 0 : base & ~((2ull << (lit + 5)) - 1);
		pa = base + (uint64_t)sid * 64;
	}
	s->fetch_pa = pa;
	l = mem_read(s, pa, w, 8 * sizeof(uint64_t));
	if (l < 0)
		return IOPT_SMMUV3_EVT_F_STE_FETCH;
	*lat += l;
	iopt_smmuv3_ste_decode(w, ste);
	return 0;
}

/* Raw STE and CD bits the structures do not name (5.2, 5.4). */
#define STE_S1STALLD(w)	((w)[1] >> (91 - 64) & 1)
#define STE_S2ENDI(w)	((w)[2] >> (180 - 128) & 1)
#define CD_ENDI(w)	((w)[0] >> 15 & 1)

/*
 * Is the STE usable? 0, IOPT_SMMUV3_EVT_ABORT (no event), or C_BAD_STE for an
 * ILLEGAL one given what the ID registers advertise (5.2.2 SteIllegal()). The
 * stage 2 fields are checked where they are decoded (walk.c).
 */
static unsigned check_ste(struct iopt_smmuv3 *s, const struct iopt_smmuv3_ste *ste,
			  const uint64_t w[8])
{
	const bool s1 = ste->config == IOPT_SMMUV3_STE_S1 || ste->config == IOPT_SMMUV3_STE_NESTED;
	const bool s2 = ste->config == IOPT_SMMUV3_STE_S2 || ste->config == IOPT_SMMUV3_STE_NESTED;

	if (!ste->valid)
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* Config 0b000 aborts without an event; 0b001-0b011 are Reserved
	 * and behave as 0b000. */
	if (ste->config < IOPT_SMMUV3_STE_BYPASS)
		return IOPT_SMMUV3_EVT_ABORT;
	if ((s1 && !s->p.s1) || (s2 && !s->p.s2))
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* S1STALLD = 1 is ILLEGAL with IDR0.STALL_MODEL != 0b00 (here
	 * 0b01: no stall model). */
	if (s1 && STE_S1STALLD(w))
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* S1CDMax: 0..IDR1.SSIDSIZE; IGNORED when SSIDSIZE = 0. */
	if (s1 && s->p.ssidsize && ste->s1_cd_max > s->p.ssidsize)
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* S1ContextPtr: an IPA within the IAS (= OAS here) when stage 2
	 * translates, else a PA within the OAS (STES1ContextPtrOutOfRange). */
	if (s1 && s->p.oas < 64 && ste->s1_context_ptr >> s->p.oas)
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* S2VMID[15:8] must be zero with 8-bit VMIDs whenever it is not
	 * IGNORED: stage 2 implemented and some stage translates
	 * (IgnoreSTES2VMID(); STRW is RES0 as IDR0.Hyp = 0). */
	if ((s1 || s2) && s->p.s2 && !s->p.vmid16 && ste->s2_vmid >> 8)
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* No stall model (IDR0.STALL_MODEL = 0b01): S2S = 1 is ILLEGAL;
	 * only little-endian walks (IDR0.TTENDIAN = 0b10): S2ENDI = 1 is. */
	if (s2 && (ste->s2_s || STE_S2ENDI(w)))
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	/* EATS (5.2): IGNORED without ATS or with Config[1:0] = 0b00; split
	 * stage (0b10) is ILLEGAL with IDR0.NS1ATS = 1; 0b11 (DPT checks)
	 * behaves as 0b00 without IDR3.DPT. */
	if (s->p.ats && (s1 || s2) && ste->eats == 2)
		return IOPT_SMMUV3_EVT_C_BAD_STE;
	return 0;
}

void v3_cfg_insert(struct iopt_smmuv3 *s, const struct cfg_entry *in)
{
	if (!s->ncfg)
		return;
	struct cfg_entry *set = v3_cfg_set(s, in->sid, in->ssid), *v = NULL;

	/* An invalid entry, else the least recently used. */
	for (unsigned i = 0; i < s->p.cfg.ways; i++)
		if (!v || !set[i].valid || (v->valid && set[i].stamp < v->stamp))
			v = &set[i];
	*v = *in;
	v->valid = true;
	v->stamp = ++s->cfg_tick;
}

/* What the ID registers advertise, for the ILLEGAL-structure rules. */
static struct smmu_caps caps_of(const struct iopt_smmuv3 *s)
{
	return (struct smmu_caps){
		.oas = s->p.oas, .httu = s->p.httu,
		.grans = (s->p.gran4k ? 1u << 12 : 0) | (s->p.gran16k ? 1u << 14 : 0) |
			 (s->p.gran64k ? 1u << 16 : 0),
	};
}

/* Nested: a CD or L1CD address is an IPA. false, or true with a stage 2
 * fault in *w (its IPA set): the event's CLASS is CD (7.3.13). */
static bool ipa_to_pa(struct iopt_smmuv3 *s, const struct cfg_entry *c,
		      uint64_t *addr, int64_t *lat, struct smmu_walk_res *w)
{
	smmu_walk(&c->s2c, NULL,
		  smmu_core_walk_mem(&s->core, c->vmid, s->core.wc.asid), *addr,
		  0, w);
	*lat += (int64_t)w->fetches * s->core.mem.desc_latency;
	/* S2PTW: a CD fetch from a stage 2 page of any Device type is a
	 * stage 2 Permission fault (5.2 S2PTW), as a table walk's is. */
	if (!w->fault && c->s2c.ptw && !(w->desc >> 4 & 3)) {
		w->fault = SMMU_F_PERMISSION;
		w->fault_stage = 2;
	}
	if (w->fault) {
		w->ipa = *addr;
		return true;
	}
	*addr = w->oa;
	memset(w, 0, sizeof(*w));
	return false;
}

/*
 * Build the configuration for t from the stream table (and CD): 0, or the
 * event type; a stage 2 fault on the CD fetch fills *w. *lat gathers the
 * fetch latencies. On failure, what c holds so far still says how to
 * record (rec_s2).
 */
unsigned v3_build_cfg(struct iopt_smmuv3 *s, const struct iopt_smmuv3_txn *t,
		      struct cfg_entry *c, int64_t *lat,
		      struct smmu_walk_res *w)
{
	const struct smmu_caps caps = caps_of(s);
	struct iopt_smmuv3_ste ste;
	struct iopt_smmuv3_cd cd;
	uint64_t stew[8];
	unsigned ev;

	memset(c, 0, sizeof(*c));
	c->sid = t->sid;
	c->ssv = t->ssv;
	c->ssid = t->ssv ? t->ssid : 0;
	c->rec_s1 = c->rec_s2 = true;
	ev = fetch_ste(s, t->sid, &ste, stew, lat);
	if (!ev)
		ev = check_ste(s, &ste, stew);
	if (ev)
		return ev;
	c->s1 = ste.config & 1;
	c->s2 = ste.config & 2;
	c->ats_pass = s->p.ats && ste.eats == 1 && (c->s1 || c->s2);
	/* Translations are VMID-tagged with S2VMID whenever stage 2 is
	 * implemented, stage 1-only ones too (5.2 S2VMID, 3.17). */
	if (s->p.s2)
		c->vmid = ste.s2_vmid;
	if (c->s2) {
		if (smmu_cfg_from_ste_s2(&ste, &caps, &c->s2c))
			return IOPT_SMMUV3_EVT_C_BAD_STE;
		c->rec_s2 = ste.s2_r;
	}
	/* S1CDMax and S1DSS are IGNORED without substreams (IDR1.SSIDSIZE
	 * = 0), where a SubstreamID is refused (5.2 S1CDMax). */
	unsigned cd_max = s->p.ssidsize ? ste.s1_cd_max : 0;

	if (t->ssv && (!c->s1 || !cd_max || t->ssid >= (1u << cd_max)))
		return IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID;
	if (c->s1 && cd_max) {
		/* S1DSS: 0b00 (and Reserved 0b11) terminate a transaction
		 * without a SubstreamID; 0b01 bypasses stage 1 for it; 0b10
		 * gives it substream 0, which is then refused to
		 * transactions with a SubstreamID (F_STREAM_DISABLED). */
		if (t->ssv ? ste.s1_dss == 2 && t->ssid == 0 :
			     ste.s1_dss == 0 || ste.s1_dss == 3)
			return IOPT_SMMUV3_EVT_F_STREAM_DISABLED;
		if (!t->ssv && ste.s1_dss == 1)
			c->s1 = false;	/* bypass stage 1 */
	}
	if (!c->s1)
		return 0;
	uint64_t cdw[8], cd_pa;
	unsigned split = ste.s1_fmt == 1 ? 6 : ste.s1_fmt == 2 ? 10 : 0;
	int64_t l;

	if (cd_max && split) {
		/* Two-level CD table (5.3): an L1CD per 2^split CDs. */
		uint64_t l1_pa = ste.s1_context_ptr + (uint64_t)(c->ssid >> split) * 8, l1;

		if (c->s2 && ipa_to_pa(s, c, &l1_pa, lat, w))
			return v3_walk_fault_event(w->fault);
		s->fetch_pa = l1_pa;
		l = mem_read(s, l1_pa, &l1, 8);
		if (l < 0)
			return IOPT_SMMUV3_EVT_F_CD_FETCH;
		*lat += l;
		if (!(l1 & 1))
			return IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID;
		cd_pa = (l1 & (((1ull << 56) - 1) & ~0xfffull) &
			 ~((64ull << split) - 1)) +
			(uint64_t)(c->ssid & ((1u << split) - 1)) * 64;
	} else {
		cd_pa = ste.s1_context_ptr + (uint64_t)c->ssid * 64;
	}
	if (c->s2 && ipa_to_pa(s, c, &cd_pa, lat, w))
		return v3_walk_fault_event(w->fault);
	s->fetch_pa = cd_pa;
	l = mem_read(s, cd_pa, cdw, sizeof(cdw));

	if (l < 0)
		return IOPT_SMMUV3_EVT_F_CD_FETCH;
	*lat += l;
	iopt_smmuv3_cd_decode(cdw, &cd);
	/* 5.4.2 CdIllegal(): with STALL_MODEL = 0b01 CD.S = 1 is ILLEGAL,
	 * with TERM_MODEL = 1 CD.A = 0 is, with 8-bit ASIDs ASID[15:8] != 0
	 * is, and with TTENDIAN = 0b10 ENDI = 1 is unless both TTBs are
	 * disabled. */
	if (!cd.valid || cd.s || !cd.a || (!s->p.asid16 && cd.asid >> 8) ||
	    (CD_ENDI(cdw) && !(cd.epd0 && cd.epd1)))
		return IOPT_SMMUV3_EVT_C_BAD_CD;
	c->asid = cd.asid;
	c->rec_s1 = cd.r;
	for (int u = 0; u < 2; u++) {
		c->ttb_ok[u] = !(u ? cd.epd1 : cd.epd0);
		if (c->ttb_ok[u] && smmu_cfg_from_cd(&cd, u, &caps, &c->s1c[u]))
			return IOPT_SMMUV3_EVT_C_BAD_CD;
	}
	return 0;
}

void v3_cfg_invalidate(struct iopt_smmuv3 *s, bool all, uint32_t sid_lo,
		       uint32_t sid_hi, bool by_ssid, uint32_t ssid)
{
	for (unsigned i = 0; i < s->ncfg; i++) {
		struct cfg_entry *e = &s->cfg[i];

		if (e->valid && (all || (e->sid >= sid_lo && e->sid <= sid_hi &&
					 (!by_ssid || e->ssid == ssid))))
			e->valid = false;
	}
}
