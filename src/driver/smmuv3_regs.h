/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 register offsets and fields the driver uses, from IHI0070
 * chapter 6 (register map 6.2, definitions 6.3). Written here, not taken
 * from the model: the driver knows the SMMU only through the architecture.
 */
#ifndef IOPT_SMMUV3_REGS_H
#define IOPT_SMMUV3_REGS_H

#define SMMU_IDR0		0x00	/* 6.3.1 */
#define SMMU_IDR1		0x04	/* 6.3.2 */
#define SMMU_IDR3		0x0c	/* 6.3.4 */
#define SMMU_IDR5		0x14	/* 6.3.6 */
#define SMMU_CR0		0x20	/* 6.3.9 */
#define SMMU_CR0ACK		0x24	/* 6.3.10 */
#define SMMU_CR1		0x28	/* 6.3.11 */
#define SMMU_CR2		0x2c	/* 6.3.12 */
#define SMMU_IRQ_CTRL		0x50	/* 6.3.16 */
#define SMMU_IRQ_CTRLACK	0x54	/* 6.3.17 */
#define SMMU_GERROR		0x60	/* 6.3.18 */
#define SMMU_GERRORN		0x64	/* 6.3.19 */
#define SMMU_STRTAB_BASE	0x80	/* 6.3.24 */
#define SMMU_STRTAB_BASE_CFG	0x88	/* 6.3.25 */
#define SMMU_CMDQ_BASE		0x90	/* 6.3.26 */
#define SMMU_CMDQ_PROD		0x98	/* 6.3.27 */
#define SMMU_CMDQ_CONS		0x9c	/* 6.3.28 */
#define SMMU_EVENTQ_BASE	0xa0	/* 6.3.29 */
#define SMMU_EVENTQ_PROD	0x100a8	/* 6.3.30, page 1 */
#define SMMU_EVENTQ_CONS	0x100ac	/* 6.3.31, page 1 */

/* IDR0 */
#define IDR0_S2P		(1u << 0)
#define IDR0_S1P		(1u << 1)
#define IDR0_TTF_SHIFT		2	/* [3:2]: 2 AArch64, 3 both */
#define IDR0_ASID16		(1u << 12)
#define IDR0_MSI		(1u << 13)
#define IDR0_SEV		(1u << 14)
#define IDR0_VMID16		(1u << 18)
#define IDR0_TTENDIAN_SHIFT	21	/* [22:21]: 0 mixed, 2 LE, 3 BE */
#define IDR0_ST_LEVEL_SHIFT	27	/* [28:27]: 0 linear, 1 2-level */
/* IDR1 */
#define IDR1_SIDSIZE(v)		((v) & 0x3f)
#define IDR1_EVENTQS(v)		(((v) >> 16) & 0x1f)
#define IDR1_CMDQS(v)		(((v) >> 21) & 0x1f)
#define IDR1_QUEUES_PRESET	(1u << 29)
#define IDR1_TABLES_PRESET	(1u << 30)
/* IDR3 */
#define IDR3_RIL		(1u << 10)
/* IDR5: OAS [2:0] */
#define IDR5_OAS(v)		((v) & 7)

/* CR0 / CR0ACK */
#define CR0_SMMUEN		(1u << 0)
#define CR0_EVENTQEN		(1u << 2)
#define CR0_CMDQEN		(1u << 3)
/* CR1: table and queue walk attributes; [11:10] table SH, [9:8] OC,
 * [7:6] IC, [5:4] queue SH, [3:2] OC, [1:0] IC. Inner shareable,
 * write-back cacheable (1 = WB) as Linux programs them. */
#define CR1_WBISH		((3u << 10) | (1u << 8) | (1u << 6) | \
				 (3u << 4) | (1u << 2) | (1u << 0))
/* CR2 */
#define CR2_RECINVSID		(1u << 1)
/* IRQ_CTRL */
#define IRQ_CTRL_GERROR_IRQEN	(1u << 0)
#define IRQ_CTRL_EVENTQ_IRQEN	(1u << 2)
/* GERROR */
#define GERROR_CMDQ_ERR		(1u << 0)
/* STRTAB_BASE: RA bit 62, ADDR [51:6]; STRTAB_BASE_CFG: LOG2SIZE [5:0],
 * SPLIT [10:6], FMT [17:16] (0 linear, 1 2-level). */
#define STRTAB_BASE_RA		(1ull << 62)
#define STRTAB_CFG(log2size, split, fmt) \
	((uint32_t)(log2size) | (uint32_t)(split) << 6 | (uint32_t)(fmt) << 16)
#define STRTAB_SPLIT		8	/* 2-level: 256 STEs per leaf table */
/* Level-1 stream table descriptor (5.1.2): Span [4:0], L2Ptr [51:6]. */
#define L1_DESC(l2pa, span)	((l2pa) | (uint64_t)(span))
/* Queue base (CMDQ_BASE, EVENTQ_BASE): RA/WA bit 62, ADDR [51:5],
 * LOG2SIZE [4:0]. */
#define Q_BASE_RWA		(1ull << 62)
/* Queue pointers: the wrap bit sits above the index; EVENTQ_PROD.OVFLG
 * and EVENTQ_CONS.OVACKFLG at bit 31; CMDQ_CONS.ERR at [30:24]. */
#define Q_OVF			(1u << 31)
#define CMDQ_CONS_ERR(v)	(((v) >> 24) & 0x7f)
#define CERROR_NONE		0
#define CERROR_ILL		1
#define CERROR_ABT		2
#define CERROR_ATC_INV_SYNC	3

/* Event record words (7.3): word 0 type [7:0], SSV [11], SubstreamID
 * [31:12], StreamID [63:32]; word 1 (translation faults) PnU 33, InD 34,
 * RnW 35, S2 39; word 2 InputAddr; word 3 IPA [51:12]. */
#define EVT_TYPE(w0)		((unsigned)((w0) & 0xff))
#define EVT_SSV(w0)		(((w0) >> 11) & 1)
#define EVT_SSID(w0)		((uint32_t)(((w0) >> 12) & 0xfffff))
#define EVT_SID(w0)		((uint32_t)((w0) >> 32))
#define EVT1_PNU		(1ull << 33)
#define EVT1_IND		(1ull << 34)
#define EVT1_RNW		(1ull << 35)
#define EVT1_S2			(1ull << 39)
#define EVT3_IPA_MASK		(((1ull << 52) - 1) & ~0xfffull)

#endif /* IOPT_SMMUV3_REGS_H */
