/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 event record layouts for tests: the fields each event type
 * defines, with their bit positions, written from the record diagrams of
 * IHI0070 7.3.2-7.3.16. Used by test_smmu_fields.c (every record a
 * provoked event writes) and fuzz_smmu.c (every record the model writes).
 */
#ifndef IOPT_TEST_EVT_LAYOUT_H
#define IOPT_TEST_EVT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <iopgtable/smmuv3.h>

/*
 * Event record fields, {lowest bit, width} in the 256-bit record, and
 * which fields each event type defines (IHI0070 7.3.2-7.3.16, from the
 * record diagrams): every other bit is RES0 (7.3). Reason is the
 * IMPLEMENTATION DEFINED cause of F_UUT, F_STE_FETCH, F_CD_FETCH and
 * F_WALK_EABT; the FetchAddr and IPA fields sit in word 3 as
 * FetchAddr[55:3] at [247:195] and IPA[55:12] at [247:204].
 */
enum evf {
	EVF_TYPE, EVF_SSV, EVF_SSID, EVF_SID, EVF_REASON, EVF_STAG, EVF_GPCF,
	EVF_STALL, EVF_PNU, EVF_IND, EVF_RNW, EVF_S2, EVF_CLASS, EVF_NSIPA,
	EVF_TTRNW, EVF_INPUTADDR, EVF_FETCHADDR, EVF_IPA, EVF_N
};

static const struct { unsigned lo, width; } evf_pos[EVF_N] = {
	[EVF_TYPE] = { 0, 8 },		[EVF_SSV] = { 11, 1 },
	[EVF_SSID] = { 12, 20 },	[EVF_SID] = { 32, 32 },
	[EVF_REASON] = { 64, 16 },	[EVF_STAG] = { 64, 16 },
	[EVF_GPCF] = { 80, 1 },		[EVF_STALL] = { 95, 1 },
	[EVF_PNU] = { 97, 1 },		[EVF_IND] = { 98, 1 },
	[EVF_RNW] = { 99, 1 },		[EVF_S2] = { 103, 1 },
	[EVF_CLASS] = { 104, 2 },	[EVF_NSIPA] = { 106, 1 },
	[EVF_TTRNW] = { 108, 1 },	[EVF_INPUTADDR] = { 128, 64 },
	[EVF_FETCHADDR] = { 195, 53 },	[EVF_IPA] = { 204, 44 },
};

#define EVB(f)		(1u << EVF_##f)
#define EVB_W0		(EVB(TYPE) | EVB(SSV) | EVB(SSID) | EVB(SID))
#define EVB_ACCESS	(EVB(PNU) | EVB(IND) | EVB(RNW))
/* F_TRANSLATION, F_ADDR_SIZE, F_ACCESS, F_PERMISSION (7.3.13-16). */
#define EVB_XLATE	(EVB_W0 | EVB(STAG) | EVB(STALL) | EVB_ACCESS | \
			 EVB(S2) | EVB(CLASS) | EVB(NSIPA) | EVB(TTRNW) | \
			 EVB(INPUTADDR) | EVB(IPA))

static const struct { unsigned type; uint32_t fields; } ev_layout[] = {
	{ IOPT_SMMUV3_EVT_F_UUT, EVB_W0 | EVB(REASON) | EVB_ACCESS | EVB(INPUTADDR) },
	{ IOPT_SMMUV3_EVT_C_BAD_STREAMID, EVB_W0 },
	{ IOPT_SMMUV3_EVT_F_STE_FETCH, EVB_W0 | EVB(REASON) | EVB(GPCF) | EVB(FETCHADDR) },
	{ IOPT_SMMUV3_EVT_C_BAD_STE, EVB_W0 },
	/* 7.3.7: StreamID only, no SubstreamID or SSV. */
	{ IOPT_SMMUV3_EVT_F_STREAM_DISABLED, EVB(TYPE) | EVB(SID) },
	/* 7.3.8: StreamID, RnW and InputAddr only. */
	{ IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN,
	  EVB(TYPE) | EVB(SID) | EVB(RNW) | EVB(INPUTADDR) },
	/* 7.3.9: SubstreamID always valid, no SSV qualifier. */
	{ IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID, EVB(TYPE) | EVB(SSID) | EVB(SID) },
	{ IOPT_SMMUV3_EVT_F_CD_FETCH, EVB_W0 | EVB(REASON) | EVB(GPCF) | EVB(FETCHADDR) },
	{ IOPT_SMMUV3_EVT_C_BAD_CD, EVB_W0 },
	{ IOPT_SMMUV3_EVT_F_WALK_EABT, EVB_W0 | EVB(REASON) | EVB(GPCF) | EVB_ACCESS |
				EVB(S2) | EVB(CLASS) | EVB(INPUTADDR) |
				EVB(FETCHADDR) },
	{ IOPT_SMMUV3_EVT_F_TRANSLATION, EVB_XLATE },
	{ IOPT_SMMUV3_EVT_F_ADDR_SIZE, EVB_XLATE },
	{ IOPT_SMMUV3_EVT_F_ACCESS, EVB_XLATE },
	{ IOPT_SMMUV3_EVT_F_PERMISSION, EVB_XLATE },
	/* Not produced by the model (docs/smmu_model.md): F_BAD_ATS_TREQ
	 * (no ATS Translation Requests), F_TLB_CONFLICT and F_CFG_CONFLICT
	 * (no conflicts by construction), E_PAGE_REQUEST (no PRI),
	 * F_VMS_FETCH (no VMS). A record of any of them is not a known layout. */
};

/* The fields type defines (bit f: enum evf f), or 0 for a type the table
 * does not list. */
static inline uint32_t evt_layout_fields(unsigned type)
{
	for (size_t i = 0; i < sizeof(ev_layout) / sizeof(ev_layout[0]); i++)
		if (ev_layout[i].type == type)
			return ev_layout[i].fields;
	return 0;
}

static inline uint64_t evf_mask(enum evf f)
{
	unsigned w = evf_pos[f].width;

	return (w == 64 ? ~0ull : (1ull << w) - 1) << evf_pos[f].lo % 64;
}

/* Field f of a record (no field straddles a 64-bit word). */
static inline uint64_t evf_get(const uint64_t ev[4], enum evf f)
{
	unsigned lo = evf_pos[f].lo;

	return (ev[lo / 64] & evf_mask(f)) >> lo % 64;
}

/*
 * The bits of ev outside the fields of its type, word by word, into res0:
 * false when the type is not one the table lists (res0 then undefined),
 * else true (RES0 held when every res0 word is 0, 7.3).
 */
static inline int evt_layout_res0(const uint64_t ev[4], uint64_t res0[4])
{
	uint32_t fields = evt_layout_fields((unsigned)(ev[0] & 0xff));
	uint64_t def[4] = { 0 };

	if (!fields)
		return 0;
	for (unsigned f = 0; f < EVF_N; f++)
		if (fields & 1u << f)
			def[evf_pos[f].lo / 64] |= evf_mask((enum evf)f);
	for (unsigned i = 0; i < 4; i++)
		res0[i] = ev[i] & ~def[i];
	return 1;
}

#endif
