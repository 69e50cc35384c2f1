/* SPDX-License-Identifier: MIT */
/*
 * Command encoding (IHI0070 chapter 4): each opcode has a list of fields
 * at their absolute bit positions within the 128-bit command.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <iopgtable/smmu.h>

enum ck { K_BOOL, K_U32, K_U16, K_UINT, K_U64 };

struct cfield {
	uint8_t lo, width, kind, shift;
	size_t off;
};

#define C(lo, w, k, sh, m) { lo, w, k, sh, offsetof(struct iopt_smmu_cmd, m) }
#define SSV C(11, 1, K_BOOL, 0, ssv)
#define SSID C(12, 20, K_U32, 0, ssid)
#define SID C(32, 32, K_U32, 0, sid)
#define LEAF C(64, 1, K_BOOL, 0, leaf)
#define VMID C(32, 16, K_U16, 0, vmid)
#define ASID C(48, 16, K_U16, 0, asid)
#define NUM C(12, 5, K_UINT, 0, num)
#define SCALE C(20, 5, K_UINT, 0, scale)
#define TTL C(72, 2, K_UINT, 0, ttl)
#define TG C(74, 2, K_UINT, 0, tg)
#define VA C(76, 52, K_U64, 12, addr)		/* addr[63:12] */
#define END { 0, 0, 0, 0, 0 }

static const struct cfield f_prefetch_cfg[] = { SSV, SSID, SID, END };
static const struct cfield f_prefetch_addr[] = {
	SSV, SSID, SID, C(64, 5, K_UINT, 0, size), VA, END };
static const struct cfield f_cfgi_ste[] = { SID, LEAF, END };
static const struct cfield f_cfgi_ste_range[] = {
	SID, C(64, 5, K_UINT, 0, range), END };
static const struct cfield f_cfgi_cd[] = { SSID, SID, LEAF, END };
static const struct cfield f_cfgi_cd_all[] = { SID, END };
static const struct cfield f_none[] = { END };
static const struct cfield f_nh_asid[] = { VMID, ASID, END };
static const struct cfield f_nh_va[] = {
	NUM, SCALE, VMID, ASID, LEAF, TTL, TG, VA, END };
static const struct cfield f_nh_vaa[] = { NUM, SCALE, VMID, LEAF, TTL, TG, VA, END };
static const struct cfield f_s2_ipa[] = {
	NUM, SCALE, VMID, LEAF, TTL, TG, C(76, 40, K_U64, 12, addr), END };
static const struct cfield f_vmall[] = { VMID, END };
static const struct cfield f_atc[] = {
	SSV, SSID, SID, C(9, 1, K_BOOL, 0, global), C(64, 6, K_UINT, 0, size), VA,
	END };
static const struct cfield f_sync[] = {
	C(12, 2, K_UINT, 0, cs), C(22, 2, K_UINT, 0, msh),
	C(24, 4, K_UINT, 0, msi_attr), C(32, 32, K_U32, 0, msi_data),
	C(66, 50, K_U64, 2, msi_addr), END };		/* MSIAddress[51:2] */

static const struct cfield *fields_of(unsigned op)
{
	switch (op) {
	case IOPT_CMD_PREFETCH_CONFIG: return f_prefetch_cfg;
	case IOPT_CMD_PREFETCH_ADDR: return f_prefetch_addr;
	case IOPT_CMD_CFGI_STE: return f_cfgi_ste;
	case IOPT_CMD_CFGI_STE_RANGE: return f_cfgi_ste_range;
	case IOPT_CMD_CFGI_CD: return f_cfgi_cd;
	case IOPT_CMD_CFGI_CD_ALL: return f_cfgi_cd_all;
	case IOPT_CMD_TLBI_NH_ALL:
	case IOPT_CMD_TLBI_NSNH_ALL: return f_none;
	case IOPT_CMD_TLBI_NH_ASID: return f_nh_asid;
	case IOPT_CMD_TLBI_NH_VA: return f_nh_va;
	case IOPT_CMD_TLBI_NH_VAA: return f_nh_vaa;
	case IOPT_CMD_TLBI_S12_VMALL: return f_vmall;
	case IOPT_CMD_TLBI_S2_IPA: return f_s2_ipa;
	case IOPT_CMD_ATC_INV: return f_atc;
	case IOPT_CMD_SYNC: return f_sync;
	default: return NULL;
	}
}

static uint64_t cmask(unsigned w)
{
	return w >= 64 ? ~0ull : (1ull << w) - 1;
}

int iopt_smmu_cmd_encode(const struct iopt_smmu_cmd *cmd, uint64_t w[2])
{
	const struct cfield *f = fields_of(cmd->opcode);

	if (!f || cmd->opcode > 0xff)
		return -EINVAL;
	w[0] = cmd->opcode;
	w[1] = 0;
	for (; f->width; f++) {
		const char *p = (const char *)cmd + f->off;
		uint64_t v;

		switch (f->kind) {
		case K_BOOL: v = *(const bool *)(const void *)p; break;
		case K_U32: v = *(const uint32_t *)(const void *)p; break;
		case K_U16: v = *(const uint16_t *)(const void *)p; break;
		case K_UINT: v = *(const unsigned *)(const void *)p; break;
		default: v = *(const uint64_t *)(const void *)p >> f->shift; break;
		}
		w[f->lo / 64] |= (v & cmask(f->width)) << (f->lo % 64);
	}
	return 0;
}

int iopt_smmu_cmd_decode(const uint64_t w[2], struct iopt_smmu_cmd *cmd)
{
	const struct cfield *f = fields_of((unsigned)(w[0] & 0xff));

	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = (unsigned)(w[0] & 0xff);
	if (!f)
		return -EINVAL;
	for (; f->width; f++) {
		char *p = (char *)cmd + f->off;
		uint64_t v = (w[f->lo / 64] >> (f->lo % 64)) & cmask(f->width);

		switch (f->kind) {
		case K_BOOL: *(bool *)(void *)p = v; break;
		case K_U32: *(uint32_t *)(void *)p = (uint32_t)v; break;
		case K_U16: *(uint16_t *)(void *)p = (uint16_t)v; break;
		case K_UINT: *(unsigned *)(void *)p = (unsigned)v; break;
		default: *(uint64_t *)(void *)p = v << f->shift; break;
		}
	}
	return 0;
}
