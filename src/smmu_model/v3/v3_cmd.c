/* SPDX-License-Identifier: MIT */
/*
 * Command encoding (IHI0070 chapter 4). Each opcode's fields are listed
 * once, as X(lo, width, shift, member): the field's lowest bit within the
 * 128-bit command, its width, and how far the member is shifted right to
 * give the field (addresses keep their bits from shift up). The lists
 * expand into straight-line code in both directions, so that encoding a
 * command costs a few instructions a field and no table walk.
 */
#include <errno.h>
#include <string.h>

#include <iopgtable/smmuv3.h>

#include "v3_fields.h"

/* Fields common to several commands (4.1.6, 4.4.1). */
#define F_SSV(X)	X(11, 1, 0, ssv)
#define F_SSID(X)	X(12, 20, 0, ssid)
#define F_SID(X)	X(32, 32, 0, sid)
#define F_VMID(X)	X(32, 16, 0, vmid)
#define F_ASID(X)	X(48, 16, 0, asid)
#define F_LEAF(X)	X(64, 1, 0, leaf)
#define F_VA(X)		X(76, 52, 12, addr)	/* Address[63:12] */
/* 4.4.1.1, SMMU_IDR5.DS == 0: SCALE is 5 bits, [24:20]. */
#define F_RANGE(X)	X(12, 5, 0, num) X(20, 5, 0, scale) \
			X(72, 2, 0, ttl) X(74, 2, 0, tg)

#define PREFETCH_CONFIG(X)	F_SSV(X) F_SSID(X) F_SID(X)
#define PREFETCH_ADDR(X)	F_SSV(X) F_SSID(X) F_SID(X) \
				X(64, 5, 0, size) F_VA(X)
#define CFGI_STE(X)		F_SID(X) F_LEAF(X)
#define CFGI_STE_RANGE(X)	F_SID(X) X(64, 5, 0, range)
#define CFGI_CD(X)		F_SSID(X) F_SID(X) F_LEAF(X)
#define CFGI_CD_ALL(X)		F_SID(X)
#define TLBI_NH_ALL(X)		F_VMID(X)
#define TLBI_NH_ASID(X)		F_VMID(X) F_ASID(X)
#define TLBI_NH_VA(X)		F_RANGE(X) F_VMID(X) F_ASID(X) F_LEAF(X) F_VA(X)
#define TLBI_NH_VAA(X)		F_RANGE(X) F_VMID(X) F_LEAF(X) F_VA(X)
#define TLBI_S12_VMALL(X)	F_VMID(X)
/* IPA[51:12]: bits [55:52] are RES0 up to SMMUv3.3 (4.1.6). */
#define TLBI_S2_IPA(X)		F_RANGE(X) F_VMID(X) F_LEAF(X) \
				X(76, 40, 12, addr)
#define TLBI_NSNH_ALL(X)
#define ATC_INV(X)		F_SSV(X) F_SSID(X) F_SID(X) X(9, 1, 0, global) \
				X(64, 6, 0, size) F_VA(X)
/* MSIAddress[51:2] (4.7.3). */
#define SYNC(X)			X(12, 2, 0, cs) X(22, 2, 0, msh) \
				X(24, 4, 0, msi_attr) X(32, 32, 0, msi_data) \
				X(66, 50, 2, msi_addr)

/* Every opcode the encoder knows, with its field list. */
#define OPCODES(O)							\
	O(IOPT_SMMUV3_CMD_PREFETCH_CONFIG, PREFETCH_CONFIG)			\
	O(IOPT_SMMUV3_CMD_PREFETCH_ADDR, PREFETCH_ADDR)			\
	O(IOPT_SMMUV3_CMD_CFGI_STE, CFGI_STE)					\
	O(IOPT_SMMUV3_CMD_CFGI_STE_RANGE, CFGI_STE_RANGE)			\
	O(IOPT_SMMUV3_CMD_CFGI_CD, CFGI_CD)					\
	O(IOPT_SMMUV3_CMD_CFGI_CD_ALL, CFGI_CD_ALL)				\
	O(IOPT_SMMUV3_CMD_TLBI_NH_ALL, TLBI_NH_ALL)				\
	O(IOPT_SMMUV3_CMD_TLBI_NH_ASID, TLBI_NH_ASID)				\
	O(IOPT_SMMUV3_CMD_TLBI_NH_VA, TLBI_NH_VA)				\
	O(IOPT_SMMUV3_CMD_TLBI_NH_VAA, TLBI_NH_VAA)				\
	O(IOPT_SMMUV3_CMD_TLBI_S12_VMALL, TLBI_S12_VMALL)			\
	O(IOPT_SMMUV3_CMD_TLBI_S2_IPA, TLBI_S2_IPA)				\
	O(IOPT_SMMUV3_CMD_TLBI_NSNH_ALL, TLBI_NSNH_ALL)			\
	O(IOPT_SMMUV3_CMD_ATC_INV, ATC_INV)					\
	O(IOPT_SMMUV3_CMD_SYNC, SYNC)

#define ENC_FIELD(lo, width, shift, m) \
	fld_put(w, &bad, (uint64_t)cmd->m, lo, width, shift);
#define ENC_CASE(op, fields) case op: fields(ENC_FIELD) break;

int iopt_smmuv3_cmd_encode(const struct iopt_smmuv3_cmd *cmd, uint64_t words[2])
{
	uint64_t w[2] = { cmd->opcode, 0 }, bad = 0;

	switch (cmd->opcode) {
	OPCODES(ENC_CASE)
	default:
		return -EINVAL;
	}
	if (bad)
		return -EINVAL;
	words[0] = w[0];
	words[1] = w[1];
	return 0;
}

#define DEC_FIELD(lo, width, shift, m) cmd->m = fld_get(w, lo, width, shift);
#define DEC_CASE(op, fields) case op: fields(DEC_FIELD) return 0;

int iopt_smmuv3_cmd_decode(const uint64_t w[2], struct iopt_smmuv3_cmd *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = (unsigned)(w[0] & 0xff);
	switch (cmd->opcode) {
	OPCODES(DEC_CASE)
	default:
		return -EINVAL;
	}
}
