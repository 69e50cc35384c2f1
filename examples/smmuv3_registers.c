/* SPDX-License-Identifier: MIT */
/*
 * Drive the SMMUv3 model at register level, as a simulator's bus would,
 * without the driver: put a stream table, a Context Descriptor and the
 * queues in (simulated) physical memory, program the registers, enable,
 * issue commands through the command queue, translate a device access,
 * and read the event record an unmapped access leaves in the event queue.
 * Register offsets and fields: IHI0070 chapter 6; records: 7.3.
 */
#include <stdio.h>
#include <string.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>

/* Registers (IHI0070 6.2); the event queue's pointers are on page 1. */
#define CR0		0x20
#define CR0ACK		0x24
#define STRTAB_BASE	0x80
#define STRTAB_BASE_CFG	0x88
#define CMDQ_BASE	0x90
#define CMDQ_PROD	0x98
#define CMDQ_CONS	0x9c
#define EVENTQ_BASE	0xa0
#define EVENTQ_PROD	0x100a8
#define EVENTQ_CONS	0x100ac
#define CR0_SMMUEN	(1u << 0)
#define CR0_EVENTQEN	(1u << 2)
#define CR0_CMDQEN	(1u << 3)

#define SID	3		/* the device's StreamID */
#define IOVA	0x10000ull
#define BUF	0x40000000ull	/* the page the device reaches */

static struct iopt_physmem *pm;
static struct iopt_smmuv3 *smmu;
static uint64_t now;		/* the simulator's clock, in model cycles */
static uint64_t cmdq, evtq;	/* queue bases (physical) */
static uint32_t cmd_prod;

static void wr(uint64_t off, unsigned size, uint64_t val)
{
	iopt_smmuv3_mmio_write(smmu, off, size, val, ++now);
}

static uint64_t rd(uint64_t off)
{
	uint64_t v = 0;

	iopt_smmuv3_mmio_read(smmu, off, 4, &v, ++now);
	return v;
}

/* Let the model do what it has pending (consume commands, write records):
 * a simulator advances it to each event's cycle. */
static void run(void)
{
	uint64_t next;

	while ((next = iopt_smmuv3_next_event(smmu)) != UINT64_MAX) {
		now = next > now ? next : now;
		iopt_smmuv3_run_until(smmu, now);
	}
}

/* Write one command into the queue (256 slots) and publish it via PROD. */
static void cmd(const struct iopt_smmuv3_cmd *c)
{
	uint64_t w[2];

	iopt_smmuv3_cmd_encode(c, w);
	memcpy(iopt_physmem_ptr(pm, cmdq + (cmd_prod & 255) * 16, 16), w, 16);
	cmd_prod = (cmd_prod + 1) & 511;	/* index + wrap bit */
	wr(CMDQ_PROD, 4, cmd_prod);
}

int main(void)
{
	struct iopt_smmuv3_params p;
	struct iopt_smmu_mem mem;
	struct iopt_pgtable *pt;
	struct iopt_smmuv3_ste ste = { .valid = true, .config = IOPT_SMMUV3_STE_S1 };
	struct iopt_smmuv3_cd cd;
	uint64_t strtab, cdpa, w[8];

	/* 16 MiB of physical memory and the model, reading it at 10 cycles. */
	if (iopt_physmem_create(0x80000000, 16 << 20, &pm))
		return 1;
	iopt_smmu_physmem(pm, 10, &mem);
	iopt_smmuv3_default_params(&p);
	if (iopt_smmuv3_create(&p, &mem, NULL, NULL, &smmu))
		return 1;

	/* A stage 1 page table in that memory: IOVA -> BUF, one 4K page. */
	struct iopt_pgtable_cfg pc = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
			       .ias = 48, .oas = 48, .coherent_walk = true,
			       .mem = iopt_physmem_mem_ops(), .mem_ctx = pm };

	if (iopt_pgtable_alloc(&pc, &pt) ||
	    iopt_pgtable_map_pages(pt, IOVA, BUF, 4096, 1, IOPT_READ | IOPT_WRITE, NULL))
		return 1;

	/* Stream table (16 STEs, linear), a CD, the command queue (256
	 * commands of 16 bytes) and the event queue (64 records of 32). */
	iopt_physmem_alloc(pm, 16 * 64, &strtab);
	iopt_physmem_alloc(pm, 64, &cdpa);
	iopt_physmem_alloc(pm, 256 * 16, &cmdq);
	iopt_physmem_alloc(pm, 64 * 32, &evtq);
	iopt_smmuv3_cd_from_pgtable(pt, 1, &cd);	/* ASID 1, record faults */
	iopt_smmuv3_cd_encode(&cd, w);
	memcpy(iopt_physmem_ptr(pm, cdpa, 64), w, 64);
	ste.s1_context_ptr = cdpa;
	iopt_smmuv3_ste_encode(&ste, w);
	memcpy(iopt_physmem_ptr(pm, strtab + SID * 64, 64), w, 64);

	/* Program the bases (LOG2SIZE in the low bits), then enable. */
	wr(STRTAB_BASE, 8, strtab);
	wr(STRTAB_BASE_CFG, 4, 4);		/* linear, 2^4 entries */
	wr(CMDQ_BASE, 8, cmdq | 8);
	wr(EVENTQ_BASE, 8, evtq | 6);
	wr(CR0, 4, CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN);
	if (rd(CR0ACK) != (CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN))
		return 1;

	/* The STE may be cached: invalidate it, then wait with a CMD_SYNC. */
	cmd(&(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_CFGI_STE, .sid = SID,
				     .leaf = true });
	cmd(&(struct iopt_smmuv3_cmd){ .opcode = IOPT_SMMUV3_CMD_SYNC });
	run();
	printf("commands consumed: CONS %llu\n", (unsigned long long)rd(CMDQ_CONS));
	if (rd(CMDQ_CONS) != cmd_prod)
		return 1;

	/* A device read at IOVA + 0x123. */
	struct iopt_smmuv3_txn t = { .sid = SID, .addr = IOVA + 0x123 };
	struct iopt_smmuv3_resp r;

	if (iopt_smmuv3_translate(smmu, &t, ++now, &r) || r.fault || r.oa != BUF + 0x123)
		return 1;
	printf("translated 0x%llx -> 0x%llx in %llu cycles\n",
	       (unsigned long long)t.addr, (unsigned long long)r.oa,
	       (unsigned long long)(r.ready - now));

	/* An access one page further: not mapped, so a translation fault,
	 * recorded in the event queue (F_TRANSLATION, 7.3.12). */
	t.addr = IOVA + 0x1000;
	if (iopt_smmuv3_translate(smmu, &t, ++now, &r) || r.fault != IOPT_SMMUV3_EVT_F_TRANSLATION)
		return 1;
	run();
	uint32_t prod = (uint32_t)rd(EVENTQ_PROD), cons = (uint32_t)rd(EVENTQ_CONS);

	if (prod == cons)
		return 1;
	const uint64_t *rec = iopt_physmem_ptr(pm, evtq + (cons & 63) * 32, 32);

	/* Record: type in bits [7:0], StreamID in [63:32], InputAddr in
	 * the third word. */
	printf("event 0x%02llx: StreamID %llu, InputAddr 0x%llx\n",
	       (unsigned long long)(rec[0] & 0xff),
	       (unsigned long long)(rec[0] >> 32), (unsigned long long)rec[2]);
	if ((rec[0] & 0xff) != IOPT_SMMUV3_EVT_F_TRANSLATION || rec[0] >> 32 != SID ||
	    rec[2] != t.addr)
		return 1;
	wr(EVENTQ_CONS, 4, cons + 1);		/* consumed */

	iopt_pgtable_free(pt);
	iopt_smmuv3_destroy(smmu);
	iopt_physmem_destroy(pm);
	return 0;
}
