/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 data structures, as software writes them: the Stream Table Entry
 * (STE, IHI0070 5.2) and the Context Descriptor (CD, 5.4), with encoders
 * and decoders, so that drivers, tests and simulators never hand-pack
 * bits; and helpers that fill them from a page table's registers.
 *
 * Only the fields that select and shape a translation are named; every
 * other field encodes as zero. Addresses are byte addresses of which the
 * structure holds bits [51:4] (TTBs, S2TTB) or [55:6] (S1ContextPtr), as
 * the architecture does.
 *
 * Below them: a register-level SMMUv3 model (second half of this file). What it
 * shares with the SMMUv2 model (memory interface, cache geometry) is in
 * <iopgtable/smmu_common.h>.
 */
#ifndef IOPGTABLE_SMMUV3_H
#define IOPGTABLE_SMMUV3_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/pgtable.h>
#include <iopgtable/smmu_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* STE.Config (5.2): stage 1 in bit 0, stage 2 in bit 1, valid traffic bit 2. */
enum iopt_smmuv3_ste_config {
	IOPT_SMMUV3_STE_ABORT = 0,
	IOPT_SMMUV3_STE_BYPASS = 4,
	IOPT_SMMUV3_STE_S1 = 5,
	IOPT_SMMUV3_STE_S2 = 6,
	IOPT_SMMUV3_STE_NESTED = 7,
};

struct iopt_smmuv3_ste {
	bool valid;			/* V */
	unsigned config;		/* Config, enum iopt_smmuv3_ste_config */
	unsigned s1_fmt;		/* S1Fmt: 0 linear, 1/2 two-level CDs */
	uint64_t s1_context_ptr;	/* S1ContextPtr (bytes, 64-aligned) */
	unsigned s1_cd_max;		/* S1CDMax: log2 of the CD count */
	unsigned s1_dss;		/* S1DSS */
	unsigned eats;			/* EATS: 0 no ATS, 1 full ATS (2, 3: see docs) */
	uint16_t s2_vmid;		/* S2VMID */
	unsigned s2_t0sz;		/* S2T0SZ */
	unsigned s2_sl0;		/* S2SL0 */
	unsigned s2_ir0, s2_or0, s2_sh0;	/* S2IR0, S2OR0, S2SH0 */
	unsigned s2_tg;			/* S2TG: 0 4K, 1 64K, 2 16K */
	unsigned s2_ps;			/* S2PS */
	bool s2_aa64;			/* S2AA64 */
	bool s2_affd;			/* S2AFFD */
	bool s2_ptw;			/* S2PTW */
	bool s2_ha, s2_hd;		/* S2HA, S2HD */
	bool s2_s, s2_r;		/* S2S, S2R */
	uint64_t s2_ttb;		/* S2TTB (bytes, 16-aligned) */
};

struct iopt_smmuv3_cd {
	bool valid;			/* V */
	unsigned t0sz, tg0;		/* T0SZ, TG0 (0 4K, 1 64K, 2 16K) */
	unsigned ir0, or0, sh0;
	bool epd0;
	unsigned t1sz, tg1;		/* TG1: 1 16K, 2 4K, 3 64K */
	unsigned ir1, or1, sh1;
	bool epd1;
	unsigned ips;			/* IPS */
	bool affd, wxn, tbi0, tbi1, pan;
	bool aa64;			/* AA64 */
	bool hd, ha;			/* HD, HA */
	bool s, r, a;			/* fault behaviour: stall, record, abort */
	bool aset;			/* ASET */
	uint16_t asid;			/* ASID */
	uint64_t ttb0, ttb1;		/* TTB0, TTB1 (bytes, 16-aligned) */
	uint64_t mair;			/* {MAIR1, MAIR0} */
};

/*
 * Encode/decode 64-byte structures as eight little-endian 64-bit words.
 * Encoding returns 0, or -EINVAL when a member does not fit its field (a
 * value wider than the field, an address with bits outside those the
 * field holds) and leaves words untouched. Decoding never fails.
 */
IOPT_API int iopt_smmuv3_ste_encode(const struct iopt_smmuv3_ste *ste, uint64_t words[8]);
IOPT_API void iopt_smmuv3_ste_decode(const uint64_t words[8], struct iopt_smmuv3_ste *ste);
IOPT_API int iopt_smmuv3_cd_encode(const struct iopt_smmuv3_cd *cd, uint64_t words[8]);
IOPT_API void iopt_smmuv3_cd_decode(const uint64_t words[8], struct iopt_smmuv3_cd *cd);

/*
 * A valid AArch64 CD for a 64-bit LPAE stage 1 table (TTB0, or TTB1 with
 * IOPT_PGTABLE_QUIRK_TTBR1; HA/HD with IOPT_PGTABLE_QUIRK_HD), fault model
 * "abort and record". 0, or -EINVAL for other formats.
 */
IOPT_API int iopt_smmuv3_cd_from_pgtable(const struct iopt_pgtable *pt, uint16_t asid,
					 struct iopt_smmuv3_cd *cd);

/*
 * Fill the stage 2 fields of ste (S2TTB, S2T0SZ, S2SL0, S2TG, S2PS, walk
 * attributes, S2AA64, S2VMID, S2R) from a 64-bit LPAE stage 2 table; the
 * other fields are left as they were. 0, or -EINVAL for other formats.
 */
IOPT_API int iopt_smmuv3_ste_s2_from_pgtable(const struct iopt_pgtable *pt,
					     uint16_t vmid, struct iopt_smmuv3_ste *ste);

/* ---- commands (IHI0070 chapter 4) -------------------------------------- */

enum iopt_smmuv3_opcode {
	IOPT_SMMUV3_CMD_PREFETCH_CONFIG = 0x01,
	IOPT_SMMUV3_CMD_PREFETCH_ADDR = 0x02,
	IOPT_SMMUV3_CMD_CFGI_STE = 0x03,
	IOPT_SMMUV3_CMD_CFGI_STE_RANGE = 0x04,	/* Range 31: CMD_CFGI_ALL */
	IOPT_SMMUV3_CMD_CFGI_CD = 0x05,
	IOPT_SMMUV3_CMD_CFGI_CD_ALL = 0x06,
	IOPT_SMMUV3_CMD_TLBI_NH_ALL = 0x10,
	IOPT_SMMUV3_CMD_TLBI_NH_ASID = 0x11,
	IOPT_SMMUV3_CMD_TLBI_NH_VA = 0x12,
	IOPT_SMMUV3_CMD_TLBI_NH_VAA = 0x13,
	IOPT_SMMUV3_CMD_TLBI_S12_VMALL = 0x28,
	IOPT_SMMUV3_CMD_TLBI_S2_IPA = 0x2a,
	IOPT_SMMUV3_CMD_TLBI_NSNH_ALL = 0x30,
	IOPT_SMMUV3_CMD_ATC_INV = 0x40,
	IOPT_SMMUV3_CMD_SYNC = 0x46,
};

/* CMD_SYNC completion signal (CS). */
#define IOPT_SMMUV3_SYNC_CS_NONE 0
#define IOPT_SMMUV3_SYNC_CS_IRQ 1
#define IOPT_SMMUV3_SYNC_CS_SEV 2

/*
 * A command's fields; each opcode encodes only those it has, and ignores
 * the others:
 *   PREFETCH_CONFIG: ssv, ssid, sid        PREFETCH_ADDR: + size, addr
 *   CFGI_STE: sid, leaf                    CFGI_STE_RANGE: sid, range
 *   CFGI_CD: ssid, sid, leaf               CFGI_CD_ALL: sid
 *   TLBI_NH_ALL, TLBI_S12_VMALL: vmid      TLBI_NH_ASID: vmid, asid
 *   TLBI_NH_VA: vmid, asid, num, scale, leaf, ttl, tg, addr (VA)
 *   TLBI_NH_VAA, TLBI_S2_IPA: as NH_VA without asid (addr: VA, IPA)
 *   TLBI_NSNH_ALL: none
 *   ATC_INV: ssv, ssid, sid, global, size, addr
 *   SYNC: cs, msh, msi_attr, msi_data, msi_addr
 * Widths as chapter 4 gives them: ssid 20 bits, num and scale 5 (SCALE
 * as with SMMU_IDR5.DS = 0), ttl and tg 2, range 5, size 5 (PREFETCH_ADDR)
 * or 6 (ATC_INV), cs and msh 2, msi_attr 4. addr is a VA with bits [63:12]
 * (an IPA: [51:12]); msi_addr holds bits [51:2].
 */
struct iopt_smmuv3_cmd {
	unsigned opcode;
	bool ssv;
	uint32_t ssid, sid;
	bool leaf, global;
	unsigned range;		/* CFGI_STE_RANGE: 2^(range+1) StreamIDs */
	uint16_t vmid, asid;
	unsigned num, scale, ttl, tg;	/* range invalidation */
	unsigned size;		/* PREFETCH_ADDR, ATC_INV */
	uint64_t addr;
	unsigned cs, msh, msi_attr;
	uint32_t msi_data;
	uint64_t msi_addr;
};

/*
 * Encode into two 64-bit words. -EINVAL (words untouched): an unknown
 * opcode, or a field of the opcode that does not hold its member's value
 * (wider than the field, or an address with bits set outside the field's).
 */
IOPT_API int iopt_smmuv3_cmd_encode(const struct iopt_smmuv3_cmd *cmd,
				    uint64_t words[2]);
/* Decode; -EINVAL for an opcode this model does not know (CERROR_ILL). */
IOPT_API int iopt_smmuv3_cmd_decode(const uint64_t words[2],
				    struct iopt_smmuv3_cmd *cmd);

/* ---- the SMMUv3 model ------------------------------------------------- */

/*
 * The model is a deterministic discrete-event component. Every entry point
 * takes the current cycle; the model never goes back in time: a call whose
 * cycle is earlier than the latest cycle the model has been called or run at
 * fails with -EINVAL and changes nothing — unless params.shared_clock is set or
 * a runner is attached, when such a cycle is taken as the model's time (callers
 * on several threads read one clock before they take the model's lock).
 * Commands are consumed, syncs completed, events and MSIs written at cycles the
 * timing parameters decide; iopt_smmuv3_next_event() tells the simulator when
 * the next internal event is due and iopt_smmuv3_run_until() advances to it.
 * The same calls at the same cycles always give the same results.
 *
 * Thread safety: every entry point takes the model's lock.
 */

struct iopt_smmuv3_params {
	/* Features (SMMU_IDR0/1/3/5). */
	bool s1, s2;			/* stage 1, stage 2; both: nesting */
	bool msi, sev, ril, strtab_2lvl;
	bool ats;			/* ATS: Translated traffic (no ATC, no split stage) */
	unsigned httu;			/* 0 none, 1 access flag, 2 + dirty */
	bool asid16, vmid16;
	unsigned sidsize, ssidsize;	/* bits */
	unsigned cmdqs, evtqs;		/* log2 of the maximum queue sizes */
	unsigned oas;			/* bits */
	bool gran4k, gran16k, gran64k;
	/* Caches: TLB (leaves), walk cache (table descriptors, every level
	 * and stage), configuration cache (STE + CD). */
	struct iopt_smmu_cache_params tlb, walk, cfg;
	uint64_t seed;			/* random replacement */
	/* Timing, in cycles. */
	unsigned translation_slots;	/* translations in flight */
	unsigned walk_slots;		/* table walks in flight */
	unsigned cmd_cycles;		/* to consume one command */
	unsigned tlbi_cycles;		/* to perform one TLB invalidation */
	unsigned cfgi_cycles;		/* one configuration invalidation */
	unsigned sync_cycles;		/* to complete a CMD_SYNC */
	unsigned msi_cycles;		/* to write an MSI */
	unsigned event_cycles;		/* to write an event record */
	/* Callers share one clock across threads: a cycle behind the
	 * model's time is taken as the model's time instead of -EINVAL. */
	bool shared_clock;
};

/* One plausible implementation (docs/smmu_model.md says why each value). */
IOPT_API void iopt_smmuv3_default_params(struct iopt_smmuv3_params *p);

/* Interrupt lines for the irq callback: the wired interrupt outputs,
 * which the model implements when a callback is given (IHI0070 3.18.2).
 * An enabled interrupt pulses its line and, when params.msi is set and
 * its *_IRQ_CFG0 address is not 0, also writes its MSI (a 32-bit store of
 * *_IRQ_CFG1). The event queue interrupt marks the queue going from empty
 * to non-empty; GERROR's a global error becoming active. */
#define IOPT_SMMUV3_IRQ_EVTQ		0
#define IOPT_SMMUV3_IRQ_GERROR		1
#define IOPT_SMMUV3_IRQ_CMD_SYNC	2	/* CMD_SYNC with CS=IRQ (MSI or not) */

struct iopt_smmuv3;

/* irq (may be NULL: no wired outputs) is called with the model's lock
 * held and must not call the model. 0; -EINVAL: bad parameters (nothing
 * allocated); -ENOMEM: host memory ran out (nothing leaked); or the host
 * mutex's own negative errno. */
IOPT_API int iopt_smmuv3_create(const struct iopt_smmuv3_params *p,
				const struct iopt_smmu_mem *mem,
				void (*irq)(void *ctx, unsigned line, uint64_t cycle),
				void *irq_ctx, struct iopt_smmuv3 **out);
IOPT_API void iopt_smmuv3_destroy(struct iopt_smmuv3 *s);

/*
 * Register access at offset (page 0 at 0, page 1 at 0x10000), 4 or 8
 * bytes, at cycle. Unknown and reserved registers read as zero and ignore
 * writes (RAZ/WI); docs/smmu_conformance.md lists each register's rules.
 * -EINVAL: bad size or alignment, or a cycle before the model's time
 * (nothing read or changed).
 */
IOPT_API int iopt_smmuv3_mmio_read(struct iopt_smmuv3 *s, uint64_t offset,
				   unsigned size, uint64_t *val, uint64_t cycle);
IOPT_API int iopt_smmuv3_mmio_write(struct iopt_smmuv3 *s, uint64_t offset,
				    unsigned size, uint64_t val, uint64_t cycle);

/* A device transaction. */
struct iopt_smmuv3_txn {
	uint32_t sid;
	bool ssv;
	uint32_t ssid;
	uint64_t addr;
	bool write, exec, priv;
	/* PCIe ATS Translated (addr is already a PA): without params.ats an
	 * unsupported transaction (F_UUT, Reason 1); with it, passed through
	 * or F_TRANSL_FORBIDDEN as CR0.ATSCHK and STE.EATS say (7.3.8). */
	bool translated;
};

struct iopt_smmuv3_resp {
	/* 0: translated; otherwise the event type of the fault (the event is
	 * recorded when the configuration asks for it). */
	unsigned fault;
	uint64_t oa;
	unsigned attr;		/* stage 1 MAIR attribute byte, if any */
	uint64_t ready;		/* cycle the response is ready */
};

/* Event types (IHI0070 7.3). */
#define IOPT_SMMUV3_EVT_F_UUT			0x01
#define IOPT_SMMUV3_EVT_C_BAD_STREAMID		0x02
#define IOPT_SMMUV3_EVT_F_STE_FETCH		0x03
#define IOPT_SMMUV3_EVT_C_BAD_STE		0x04
#define IOPT_SMMUV3_EVT_F_STREAM_DISABLED	0x06
#define IOPT_SMMUV3_EVT_F_TRANSL_FORBIDDEN	0x07
#define IOPT_SMMUV3_EVT_C_BAD_SUBSTREAMID	0x08
#define IOPT_SMMUV3_EVT_F_CD_FETCH		0x09
#define IOPT_SMMUV3_EVT_C_BAD_CD		0x0a
#define IOPT_SMMUV3_EVT_F_WALK_EABT		0x0b
#define IOPT_SMMUV3_EVT_F_TRANSLATION		0x10
#define IOPT_SMMUV3_EVT_F_ADDR_SIZE		0x11
#define IOPT_SMMUV3_EVT_F_ACCESS		0x12
#define IOPT_SMMUV3_EVT_F_PERMISSION		0x13
#define IOPT_SMMUV3_EVT_F_CFG_CONFLICT		0x21
#define IOPT_SMMUV3_EVT_ABORT			0xff	/* aborted, no event (Config 0) */

/* 0 (the outcome in *resp, faults included); -EINVAL: a cycle before the
 * model's time (nothing changed). */
IOPT_API int iopt_smmuv3_translate(struct iopt_smmuv3 *s,
				   const struct iopt_smmuv3_txn *txn,
				   uint64_t cycle, struct iopt_smmuv3_resp *resp);

/* Cycle of the next internal event, or UINT64_MAX if none is pending. */
IOPT_API uint64_t iopt_smmuv3_next_event(struct iopt_smmuv3 *s);
/* Perform every internal event due at or before cycle. 0; -EINVAL: a
 * cycle before the model's time (nothing changed). */
IOPT_API int iopt_smmuv3_run_until(struct iopt_smmuv3 *s, uint64_t cycle);

/*
 * Free-running adapter: a thread that runs the model against host time, cycle =
 * (host ns since start) * cycles_per_ns, so that real threads can poll it (for
 * a CMD_SYNC's MSI, say) in benchmarks. Threads that call the model pass
 * iopt_smmuv3_runner_now() as the cycle; while a runner is attached a cycle
 * behind the model's time is taken as its time. 0; -EINVAL (bad arguments);
 * -ENOMEM; or the thread library's negative errno when the thread cannot start
 * (-EAGAIN: no resources). Nothing is left attached on failure.
 */
struct iopt_smmuv3_runner;
IOPT_API int iopt_smmuv3_runner_start(struct iopt_smmuv3 *s, double cycles_per_ns,
				      struct iopt_smmuv3_runner **out);
IOPT_API uint64_t iopt_smmuv3_runner_now(const struct iopt_smmuv3_runner *r);
IOPT_API void iopt_smmuv3_runner_stop(struct iopt_smmuv3_runner *r);

struct iopt_smmuv3_stats {
	uint64_t translations, faults, events, events_lost;
	uint64_t tlb_hits, tlb_misses, cfg_hits, cfg_misses;
	uint64_t walks, fetches;
	uint64_t walk_cache_hits, walk_cache_misses;
	uint64_t cmds[256];		/* consumed, by opcode */
	uint64_t syncs, cmd_errors;
	uint64_t lat_sum, lat_max;	/* translation latency, cycles */
	uint64_t lat_hist[16];		/* [k]: latency in [2^k, 2^(k+1)) */
};

IOPT_API void iopt_smmuv3_get_stats(struct iopt_smmuv3 *s,
				    struct iopt_smmuv3_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SMMUV3_H */
