/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 encoders' fields as the architecture gives them, typed here
 * from IHI0070 (chapter 4: commands; 5.2: STE; 5.4: CD) and never taken
 * from the library: for every command and structure the library encodes,
 * each member it names, with the field's lowest bit, width and, for an
 * address, the lowest address bit the field holds. Shared by the table
 * test (test_smmu_encode.c) and the encoder fuzz target.
 */
#ifndef IOPT_SMMU_ENC_SPEC_H
#define IOPT_SMMU_ENC_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <iopgtable/smmuv3.h>

struct spec_field {
	const char *name;
	size_t off, size;	/* the C member: offset, bytes */
	bool is_bool;
	unsigned lo, width;	/* the field: lowest bit, width */
	unsigned shift;		/* an address: the field holds addr[.. : shift] */
};

#define SPEC_MAX_FIELDS 32

struct spec_struct {
	const char *name;
	unsigned opcode;	/* commands: word 0 [7:0]; structures: 0 */
	unsigned words;		/* 2 (commands) or 8 (STE, CD) */
	unsigned n;
	struct spec_field f[SPEC_MAX_FIELDS];
};

#define SF(type, m, lo, width, shift)					\
	{ #m, offsetof(type, m), sizeof(((type *)0)->m),		\
	  __builtin_types_compatible_p(__typeof__(((type *)0)->m), bool), \
	  lo, width, shift }

/* Chapter 4 (4.1.6 common fields; 4.2-4.7 each command). */
#define C_(m, lo, w, sh)	SF(struct iopt_smmuv3_cmd, m, lo, w, sh)
#define C_SSV		C_(ssv, 11, 1, 0)
#define C_SSID		C_(ssid, 12, 20, 0)	/* SubstreamID [31:12] */
#define C_SID		C_(sid, 32, 32, 0)	/* StreamID [63:32] */
#define C_VMID		C_(vmid, 32, 16, 0)	/* VMID [47:32] */
#define C_ASID		C_(asid, 48, 16, 0)	/* ASID [63:48] */
#define C_LEAF		C_(leaf, 64, 1, 0)
#define C_NUM		C_(num, 12, 5, 0)	/* 4.4.1.1 NUM [16:12] */
#define C_SCALE		C_(scale, 20, 5, 0)	/* SCALE [24:20], IDR5.DS = 0 */
#define C_TTL		C_(ttl, 72, 2, 0)	/* TTL [73:72] */
#define C_TG		C_(tg, 74, 2, 0)	/* TG [75:74] */
#define C_VA		C_(addr, 76, 52, 12)	/* Address[63:12] in [127:76] */
#define C_IPA		C_(addr, 76, 40, 12)	/* Address[51:12] in [115:76] */

static const struct spec_struct spec_cmds[] = {
	{ "PREFETCH_CONFIG", 0x01, 2, 3, { C_SSV, C_SSID, C_SID } },
	{ "PREFETCH_ADDR", 0x02, 2, 5,
	  { C_SSV, C_SSID, C_SID, C_(size, 64, 5, 0), C_VA } },
	{ "CFGI_STE", 0x03, 2, 2, { C_SID, C_LEAF } },
	{ "CFGI_STE_RANGE", 0x04, 2, 2, { C_SID, C_(range, 64, 5, 0) } },
	{ "CFGI_CD", 0x05, 2, 3, { C_SSID, C_SID, C_LEAF } },
	{ "CFGI_CD_ALL", 0x06, 2, 1, { C_SID } },
	{ "TLBI_NH_ALL", 0x10, 2, 1, { C_VMID } },
	{ "TLBI_NH_ASID", 0x11, 2, 2, { C_VMID, C_ASID } },
	{ "TLBI_NH_VA", 0x12, 2, 8,
	  { C_NUM, C_SCALE, C_VMID, C_ASID, C_LEAF, C_TTL, C_TG, C_VA } },
	{ "TLBI_NH_VAA", 0x13, 2, 7,
	  { C_NUM, C_SCALE, C_VMID, C_LEAF, C_TTL, C_TG, C_VA } },
	{ "TLBI_S12_VMALL", 0x28, 2, 1, { C_VMID } },
	{ "TLBI_S2_IPA", 0x2a, 2, 7,
	  { C_NUM, C_SCALE, C_VMID, C_LEAF, C_TTL, C_TG, C_IPA } },
	{ "TLBI_NSNH_ALL", 0x30, 2, 0, { { 0 } } },
	{ "ATC_INV", 0x40, 2, 6,
	  { C_SSV, C_SSID, C_SID, C_(global, 9, 1, 0), C_(size, 64, 6, 0),
	    C_VA } },
	/* CS [13:12], MSH [23:22], MSIAttr [27:24], MSIData [63:32],
	 * MSIAddress[51:2] in [115:66]. */
	{ "SYNC", 0x46, 2, 5,
	  { C_(cs, 12, 2, 0), C_(msh, 22, 2, 0), C_(msi_attr, 24, 4, 0),
	    C_(msi_data, 32, 32, 0), C_(msi_addr, 66, 50, 2) } },
};

/* 5.2 (absolute bit numbers in the 512-bit STE). */
#define S_(m, lo, w, sh)	SF(struct iopt_smmuv3_ste, m, lo, w, sh)
static const struct spec_struct spec_ste = {
	"STE", 0, 8, 23, {
		S_(valid, 0, 1, 0), S_(config, 1, 3, 0), S_(s1_fmt, 4, 2, 0),
		S_(s1_context_ptr, 6, 50, 6),	/* [55:6] */
		S_(s1_cd_max, 59, 5, 0), S_(s1_dss, 64, 2, 0),
		S_(eats, 92, 2, 0), S_(s2_vmid, 128, 16, 0),
		S_(s2_t0sz, 160, 6, 0), S_(s2_sl0, 166, 2, 0),
		S_(s2_ir0, 168, 2, 0), S_(s2_or0, 170, 2, 0),
		S_(s2_sh0, 172, 2, 0), S_(s2_tg, 174, 2, 0),
		S_(s2_ps, 176, 3, 0), S_(s2_aa64, 179, 1, 0),
		S_(s2_affd, 181, 1, 0), S_(s2_ptw, 182, 1, 0),
		S_(s2_hd, 183, 1, 0), S_(s2_ha, 184, 1, 0),
		S_(s2_s, 185, 1, 0), S_(s2_r, 186, 1, 0),
		S_(s2_ttb, 196, 48, 4),		/* address [51:4] */
	}
};

/* 5.4 (absolute bit numbers in the 512-bit CD). */
#define D_(m, lo, w, sh)	SF(struct iopt_smmuv3_cd, m, lo, w, sh)
static const struct spec_struct spec_cd = {
	"CD", 0, 8, 30, {
		D_(t0sz, 0, 6, 0), D_(tg0, 6, 2, 0), D_(ir0, 8, 2, 0),
		D_(or0, 10, 2, 0), D_(sh0, 12, 2, 0), D_(epd0, 14, 1, 0),
		D_(t1sz, 16, 6, 0), D_(tg1, 22, 2, 0), D_(ir1, 24, 2, 0),
		D_(or1, 26, 2, 0), D_(sh1, 28, 2, 0), D_(epd1, 30, 1, 0),
		D_(valid, 31, 1, 0), D_(ips, 32, 3, 0), D_(affd, 35, 1, 0),
		D_(wxn, 36, 1, 0), D_(tbi0, 38, 1, 0), D_(tbi1, 39, 1, 0),
		D_(pan, 40, 1, 0), D_(aa64, 41, 1, 0), D_(hd, 42, 1, 0),
		D_(ha, 43, 1, 0), D_(s, 44, 1, 0), D_(r, 45, 1, 0),
		D_(a, 46, 1, 0), D_(aset, 47, 1, 0), D_(asid, 48, 16, 0),
		D_(ttb0, 68, 48, 4),		/* address [51:4] */
		D_(ttb1, 132, 48, 4),		/* address [51:4] */
		D_(mair, 192, 64, 0),		/* MAIR0 [223:192], MAIR1 [255:224] */
	}
};

/* ---- helpers ------------------------------------------------------------ */

/* The largest value the C member can hold. */
static inline uint64_t spec_member_max(const struct spec_field *f)
{
	return f->is_bool ? 1 : f->size >= 8 ? ~0ull : (1ull << (8 * f->size)) - 1;
}

/* The largest value the field holds (an address: its highest). */
static inline uint64_t spec_field_max(const struct spec_field *f)
{
	uint64_t m = f->width + f->shift >= 64 ? ~0ull :
		     (1ull << (f->width + f->shift)) - 1;

	return m & ~((1ull << f->shift) - 1);
}

static inline void spec_set(void *obj, const struct spec_field *f, uint64_t v)
{
	char *p = (char *)obj + f->off;

	if (f->is_bool) {
		bool b = v != 0;

		memcpy(p, &b, 1);
		return;
	}
	switch (f->size) {
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static inline uint64_t spec_get(const void *obj, const struct spec_field *f)
{
	const char *p = (const char *)obj + f->off;

	if (f->is_bool) {
		bool b;

		memcpy(&b, p, 1);
		return b;
	}
	switch (f->size) {
	case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
	case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
	default: { uint64_t x; memcpy(&x, p, 8); return x; }
	}
}

/* Does v fit f: no bits above the field, none below an address's shift? */
static inline bool spec_fits(const struct spec_field *f, uint64_t v)
{
	return (v & ~spec_field_max(f)) == 0;
}

/* Bits [lo, lo + width) of the words. */
static inline uint64_t spec_bits(const uint64_t *w, unsigned lo, unsigned width)
{
	uint64_t v = w[lo / 64] >> (lo % 64);

	return width >= 64 ? v : v & ((1ull << width) - 1);
}

/* Put v's field bits into w (the expected encoding), at f's place. */
static inline void spec_place(uint64_t *w, const struct spec_field *f, uint64_t v)
{
	w[f->lo / 64] |= (v >> f->shift) << (f->lo % 64);
}

/* Encode obj as s (a command's opcode is in obj); 0 or -EINVAL. */
static inline int spec_encode(const struct spec_struct *s, const void *obj,
			      uint64_t *w)
{
	if (s == &spec_ste)
		return iopt_smmuv3_ste_encode(obj, w);
	if (s == &spec_cd)
		return iopt_smmuv3_cd_encode(obj, w);
	return iopt_smmuv3_cmd_encode(obj, w);
}

static inline int spec_decode(const struct spec_struct *s, const uint64_t *w,
			      void *obj)
{
	if (s == &spec_ste) {
		iopt_smmuv3_ste_decode(w, obj);
		return 0;
	}
	if (s == &spec_cd) {
		iopt_smmuv3_cd_decode(w, obj);
		return 0;
	}
	return iopt_smmuv3_cmd_decode(w, obj);
}

/* Storage for any of the three (commands set opcode first). */
union spec_obj {
	struct iopt_smmuv3_cmd cmd;
	struct iopt_smmuv3_ste ste;
	struct iopt_smmuv3_cd cd;
};

static inline void spec_init(const struct spec_struct *s, union spec_obj *o)
{
	memset(o, 0, sizeof(*o));
	if (s->words == 2)
		o->cmd.opcode = s->opcode;
}

#endif
