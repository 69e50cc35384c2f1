// SPDX-License-Identifier: MIT
/*
 * Example virtual platform: memory, an SMMUv3, a CPU and a DMA engine.
 *
 *   Cpu.mem ------------------------------> Memory.socket
 *   Cpu.smmu ----------> Smmuv3.regs
 *   Dma.bus -----------> Smmuv3.upstream
 *                        Smmuv3.downstream --> Memory.socket
 *                        Smmuv3.walker -----> Memory.socket
 *   Smmuv3.evtq_irq / cmd_sync_irq -> Cpu
 *
 * The CPU builds an arm64 stage 1 page table with the library, in the
 * simulated memory; writes an STE and a CD; programs the SMMU (stream
 * table, queues, IRQ_CTRL and CR0 handshakes, commands); maps two buffers;
 * lets the DMA engine copy between them through the SMMU and checks the
 * copy byte for byte; unmaps the destination, invalidates, provokes a
 * translation fault and checks the event record against IHI0070 7.3.
 * It prints the simulated time of each phase and exits non-zero on any
 * mismatch. docs/integration.md walks through it.
 */
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/systemc/memory.h>
#include <iopgtable/systemc/smmuv3.h>

#include "tb.h"

using namespace sc_core;

namespace {

/* Platform. */
constexpr uint64_t kMemBase = 0x80000000;
constexpr uint64_t kMemSize = 64ull << 20;
constexpr uint32_t kSid = 5;
constexpr uint16_t kAsid = 1;
constexpr uint64_t kIovaSrc = 0x10000000;
constexpr uint64_t kIovaDst = 0x20000000;
constexpr uint64_t kBufSize = 16384;	/* four 4 KiB pages each */
constexpr uint64_t kCopyOff = 0x100;	/* bursts straddle pages */
constexpr unsigned kCopyLen = 12288;
constexpr unsigned kBurst = 512;
constexpr uint32_t kMsiData = 0xc0ffee;

/* SMMUv3 registers (IHI0070 6.3) and fields. */
constexpr uint64_t kIdr0 = 0x00;
constexpr uint32_t kIdr0S1p = 1u << 1;		/* 6.3.1 */
constexpr uint64_t kCr0 = 0x20, kCr0Ack = 0x24;
constexpr uint32_t kCr0SmmuEn = 1u << 0, kCr0EventqEn = 1u << 2,
		   kCr0CmdqEn = 1u << 3;	/* 6.3.9 */
constexpr uint64_t kIrqCtrl = 0x50, kIrqCtrlAck = 0x54;
constexpr uint32_t kIrqGerrorEn = 1u << 0, kIrqEventqEn = 1u << 2; /* 6.3.21 */
constexpr uint64_t kGerror = 0x60;
constexpr uint64_t kStrtabBase = 0x80, kStrtabBaseCfg = 0x88;
constexpr unsigned kStrtabLog2 = 4;		/* 16 STEs, linear (FMT 0) */
constexpr uint64_t kCmdqBase = 0x90, kCmdqProd = 0x98, kCmdqCons = 0x9c;
constexpr unsigned kCmdqLog2 = 8;
constexpr uint64_t kEventqBase = 0xa0;
constexpr uint64_t kEventqProd = 0x100a8, kEventqCons = 0x100ac; /* page 1 */
constexpr unsigned kEventqLog2 = 5;

/* Event record (IHI0070 7.3, F_TRANSLATION 7.3.13): 32 bytes, four
 * little-endian 64-bit words; bit n of the record is bit n % 64 of word
 * n / 64. */
constexpr unsigned kEvtFTranslation = 0x10;
constexpr unsigned kEvtTypeLsb = 0, kEvtTypeBits = 8;	/* [7:0] */
constexpr unsigned kEvtSsv = 11;			/* [11] */
constexpr unsigned kEvtSidLsb = 32;			/* [63:32] */
constexpr unsigned kEvtPnU = 97, kEvtInD = 98, kEvtRnW = 99;
constexpr unsigned kEvtS2 = 103;
constexpr unsigned kEvtClassLsb = 104;			/* [105:104] */
constexpr unsigned kEvtClassIn = 2;			/* 0b10: IN */
constexpr unsigned kEvtInputAddrLsb = 128;		/* [191:128] */

uint64_t rec_bits(const uint64_t rec[4], unsigned lsb, unsigned n)
{
	uint64_t w = rec[lsb / 64] >> (lsb % 64);

	return n == 64 ? w : w & ((1ull << n) - 1);
}

/* The source pattern, independent of everything under test. */
uint8_t pattern(uint64_t i)
{
	return static_cast<uint8_t>((i * 7 + 3) ^ (i >> 8));
}

int failures;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::printf("FAIL: %s\n", what);
		failures++;
	}
}

void phase(const char *what)
{
	std::printf("[%12s] %s\n", sc_time_stamp().to_string().c_str(), what);
}

/* ---- DMA engine --------------------------------------------------------- */

struct DmaJob {
	uint64_t src = 0, dst = 0;
	unsigned len = 0;
	tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
	unsigned fault = 0;
	uint64_t fault_addr = 0;
};

/* Copies job.len bytes from IOVA src to IOVA dst in bursts, through the
 * SMMU, with StreamID kSid; loosely timed with a quantum keeper. */
class Dma : public sc_module {
public:
	tlm_utils::simple_initiator_socket<Dma> bus;
	sc_event start, done;
	DmaJob job;

	SC_HAS_PROCESS(Dma);
	explicit Dma(sc_module_name n) : sc_module(n), bus("bus"), buf_(kBurst)
	{
		SC_THREAD(run);
	}

private:
	/* A member, not a local: the thread is still suspended when the
	 * simulation stops, and its stack is dropped without unwinding. */
	std::vector<uint8_t> buf_;

	bool access(tlm::tlm_command cmd, uint64_t iova, uint8_t *buf,
		    unsigned len, tlm_utils::tlm_quantumkeeper &qk)
	{
		tlm::tlm_generic_payload gp;
		iopt::SmmuTxn ext(kSid);
		sc_time d = qk.get_local_time();

		gp.set_command(cmd);
		gp.set_address(iova);
		gp.set_data_ptr(buf);
		gp.set_data_length(len);
		gp.set_streaming_width(len);
		gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
		gp.set_extension(&ext);
		bus->b_transport(gp, d);
		gp.clear_extension(&ext);
		qk.set(d);
		if (qk.need_sync())
			qk.sync();
		if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) {
			job.status = gp.get_response_status();
			job.fault = ext.fault;
			job.fault_addr = iova;
			return false;
		}
		return true;
	}

	void run()
	{
		tlm_utils::tlm_quantumkeeper qk;

		for (;;) {
			wait(start);
			qk.reset();
			job.status = tlm::TLM_OK_RESPONSE;
			job.fault = 0;
			for (unsigned off = 0; off < job.len; off += kBurst) {
				unsigned n = job.len - off < kBurst ? job.len - off : kBurst;

				if (!access(tlm::TLM_READ_COMMAND, job.src + off,
					    buf_.data(), n, qk) ||
				    !access(tlm::TLM_WRITE_COMMAND, job.dst + off,
					    buf_.data(), n, qk))
					break;
			}
			qk.sync();
			done.notify(SC_ZERO_TIME);
		}
	}
};

/* ---- CPU ------------------------------------------------------------------ */

class Cpu : public sc_module {
public:
	tlm_utils::simple_initiator_socket<Cpu> mem;
	tlm_utils::simple_initiator_socket<Cpu> smmu;
	sc_in<bool> evtq_irq, cmd_sync_irq;
	bool finished = false;

	SC_HAS_PROCESS(Cpu);
	Cpu(sc_module_name n, iopt_physmem *pm, Dma &dma, iopt::Smmuv3 &s)
		: sc_module(n), mem("mem"), smmu("smmu"), evtq_irq("evtq_irq"),
		  cmd_sync_irq("cmd_sync_irq"), pm_(pm), dma_(dma), smmu_(s)
	{
		SC_THREAD(run);
	}

private:
	iopt_physmem *pm_;
	Dma &dma_;
	iopt::Smmuv3 &smmu_;
	uint32_t cmdq_prod_ = 0;
	uint64_t cmdq_pa_ = 0;

	/* One blocking access; the CPU is not decoupled: it waits out
	 * every delay. */
	bool xfer(tlm_utils::simple_initiator_socket<Cpu> &s, tlm::tlm_command c,
		  uint64_t a, void *buf, unsigned len)
	{
		tlm::tlm_generic_payload gp;
		sc_time d = SC_ZERO_TIME;

		tb::prepare(gp, c, a, buf, len);
		s->b_transport(gp, d);
		wait(d);
		return gp.get_response_status() == tlm::TLM_OK_RESPONSE;
	}

	void mem_write(uint64_t pa, const void *buf, unsigned len)
	{
		check(xfer(mem, tlm::TLM_WRITE_COMMAND, pa,
			   const_cast<void *>(buf), len), "memory write");
	}
	void mem_read(uint64_t pa, void *buf, unsigned len)
	{
		check(xfer(mem, tlm::TLM_READ_COMMAND, pa, buf, len), "memory read");
	}
	void reg_write(uint64_t off, uint64_t v, unsigned len = 4)
	{
		uint32_t v32 = static_cast<uint32_t>(v);

		check(xfer(smmu, tlm::TLM_WRITE_COMMAND, off,
			   len == 4 ? static_cast<void *>(&v32) : &v, len),
		      "register write");
	}
	uint64_t reg_read(uint64_t off, unsigned len = 4)
	{
		uint32_t v32 = 0;
		uint64_t v = 0;

		check(xfer(smmu, tlm::TLM_READ_COMMAND, off,
			   len == 4 ? static_cast<void *>(&v32) : &v, len),
		      "register read");
		return len == 4 ? v32 : v;
	}
	/* Poll a register until it reads `want` (bounded). */
	bool reg_poll(uint64_t off, uint32_t want)
	{
		for (int i = 0; i < 1000; i++) {
			if (reg_read(off) == want)
				return true;
			wait(10, SC_NS);
		}
		return false;
	}

	uint64_t alloc(size_t size)
	{
		uint64_t pa = 0;

		check(iopt_physmem_alloc(pm_, size, &pa) == 0, "physmem alloc");
		return pa;
	}

	void put_cmd(const iopt_smmuv3_cmd &c)
	{
		uint64_t w[2];

		check(iopt_smmuv3_cmd_encode(&c, w) == 0, "command encode");
		mem_write(cmdq_pa_ + (cmdq_prod_ & ((1u << kCmdqLog2) - 1)) * 16, w, 16);
		cmdq_prod_ = (cmdq_prod_ + 1) & ((2u << kCmdqLog2) - 1);
	}

	/* TLBI_NH_ASID for our ASID, then a CMD_SYNC with CS=IRQ (an MSI of
	 * data to msi_addr, or the wired line when msi_addr is 0); PROD
	 * published. */
	void put_tlbi_sync(uint64_t msi_addr, uint32_t data)
	{
		iopt_smmuv3_cmd c{};

		c.opcode = IOPT_SMMUV3_CMD_TLBI_NH_ASID;
		c.asid = kAsid;
		put_cmd(c);
		c = iopt_smmuv3_cmd{};
		c.opcode = IOPT_SMMUV3_CMD_SYNC;
		c.cs = IOPT_SMMUV3_SYNC_CS_IRQ;
		c.msi_addr = msi_addr;
		c.msi_data = data;
		put_cmd(c);
		reg_write(kCmdqProd, cmdq_prod_);
	}

	/* Wait for a rising edge of an interrupt line, or give up. */
	bool wait_irq(sc_in<bool> &line)
	{
		sc_event timeout;

		timeout.notify(100, SC_US);
		wait(line.posedge_event() | timeout);
		return line.read();
	}

	void run();
};

void Cpu::run()
{
	phase("reset: discovering the SMMU");
	check(reg_read(kIdr0) & kIdr0S1p, "IDR0.S1P (stage 1 supported)");

	/* ---- structures in simulated memory ---- */
	uint64_t strtab = alloc(64u << kStrtabLog2);
	uint64_t cd_pa = alloc(64);
	cmdq_pa_ = alloc(16u << kCmdqLog2);
	uint64_t evtq = alloc(32u << kEventqLog2);
	uint64_t msi = alloc(64);
	uint64_t src = alloc(kBufSize), dst = alloc(kBufSize);

	/* The page table lives in the simulated memory: its allocator is
	 * the physmem's, so the SMMU walks it through its walker socket. */
	iopt_pgtable *pt = tb::physmem_table(pm_, 48, 48);

	if (!pt) {
		finished = true;
		sc_stop();
		return;
	}

	iopt_smmuv3_cd cd{};
	iopt_smmuv3_ste ste{};
	uint64_t w[8];

	check(iopt_smmuv3_cd_from_pgtable(pt, kAsid, &cd) == 0, "CD from page table");
	check(iopt_smmuv3_cd_encode(&cd, w) == 0, "CD encoded");
	mem_write(cd_pa, w, 64);
	ste.valid = true;
	ste.config = IOPT_SMMUV3_STE_S1;
	ste.s1_context_ptr = cd_pa;
	check(iopt_smmuv3_ste_encode(&ste, w) == 0, "STE encoded");
	mem_write(strtab + kSid * 64, w, 64);

	phase("programming the SMMU: stream table, queues, IRQ_CTRL, CR0");
	reg_write(kStrtabBase, strtab, 8);
	reg_write(kStrtabBaseCfg, kStrtabLog2);
	reg_write(kCmdqBase, cmdq_pa_ | kCmdqLog2, 8);
	reg_write(kCmdqProd, 0);
	reg_write(kCmdqCons, 0);
	reg_write(kEventqBase, evtq | kEventqLog2, 8);
	reg_write(kEventqProd, 0);
	reg_write(kEventqCons, 0);
	reg_write(kIrqCtrl, kIrqGerrorEn | kIrqEventqEn);
	check(reg_poll(kIrqCtrlAck, kIrqGerrorEn | kIrqEventqEn), "IRQ_CTRLACK");
	reg_write(kCr0, kCr0SmmuEn | kCr0EventqEn | kCr0CmdqEn);
	check(reg_poll(kCr0Ack, kCr0SmmuEn | kCr0EventqEn | kCr0CmdqEn), "CR0ACK");

	/* Invalidate what the SMMU may hold for the stream and ASID, then
	 * a CMD_SYNC whose completion is an MSI into memory. */
	iopt_smmuv3_cmd c{};

	c.opcode = IOPT_SMMUV3_CMD_CFGI_STE;
	c.sid = kSid;
	c.leaf = true;
	put_cmd(c);
	put_tlbi_sync(msi, kMsiData);

	uint32_t got = 0;

	for (int i = 0; i < 1000 && got != kMsiData; i++) {
		wait(10, SC_NS);
		mem_read(msi, &got, 4);
	}
	check(got == kMsiData, "CMD_SYNC MSI written to memory");
	check(reg_read(kCmdqCons) == cmdq_prod_, "CMDQ_CONS caught up with PROD");
	phase("SMMU enabled; CMD_SYNC completed by MSI");

	/* ---- map and fill ---- */
	check(iopt_pgtable_map_pages(pt, kIovaSrc, src, 4096, kBufSize / 4096,
				     IOPT_READ | IOPT_WRITE | IOPT_CACHE, nullptr) == 0,
	      "map source");
	check(iopt_pgtable_map_pages(pt, kIovaDst, dst, 4096, kBufSize / 4096,
				     IOPT_READ | IOPT_WRITE | IOPT_CACHE, nullptr) == 0,
	      "map destination");

	std::vector<uint8_t> buf(kBufSize);

	for (uint64_t i = 0; i < kBufSize; i++)
		buf[i] = pattern(i);
	mem_write(src, buf.data(), kBufSize);
	phase("buffers mapped (4 KiB pages) and source filled");

	/* ---- DMA through the SMMU ---- */
	dma_.job.src = kIovaSrc + kCopyOff;
	dma_.job.dst = kIovaDst + kCopyOff;
	dma_.job.len = kCopyLen;
	dma_.start.notify(SC_ZERO_TIME);
	wait(dma_.done);
	check(dma_.job.status == tlm::TLM_OK_RESPONSE, "DMA copy completed");

	std::vector<uint8_t> out(kBufSize);
	unsigned bad = 0;

	mem_read(dst, out.data(), kBufSize);
	for (uint64_t i = 0; i < kBufSize; i++) {
		bool in = i >= kCopyOff && i < kCopyOff + kCopyLen;
		uint8_t want = in ? pattern(i) : 0;

		if (out[i] != want && bad++ < 4)
			std::printf("  dst[%#" PRIx64 "] = %#x, want %#x\n", i,
				    out[i], want);
	}
	check(bad == 0, "copied data matches byte for byte");

	iopt_smmuv3_stats st = smmu_.stats();

	std::printf("  %u bytes copied; translations %" PRIu64 ", TLB hits %" PRIu64
		    ", walks %" PRIu64 ", mean latency %.1f cycles\n", kCopyLen,
		    st.translations, st.tlb_hits, st.walks,
		    st.translations ? double(st.lat_sum) / st.translations : 0.0);
	phase("DMA copy through the SMMU checked");

	/* ---- unmap, invalidate, fault ---- */
	iopt_pgtable_gather g;

	iopt_pgtable_gather_init(&g);
	check(iopt_pgtable_unmap_pages(pt, kIovaDst, 4096, kBufSize / 4096, &g) ==
	      static_cast<int64_t>(kBufSize), "unmap destination");
	put_tlbi_sync(0, 0);	/* MSIAddress 0: the wired line */
	check(wait_irq(cmd_sync_irq), "CMD_SYNC wired interrupt");
	check(reg_read(kCmdqCons) == cmdq_prod_, "CMDQ_CONS after TLBI + SYNC");
	phase("destination unmapped; TLBI_NH_ASID + CMD_SYNC done (wired IRQ)");

	dma_.job.src = kIovaSrc;
	dma_.job.dst = kIovaDst + kCopyOff;
	dma_.job.len = kBurst;
	dma_.start.notify(SC_ZERO_TIME);
	wait(dma_.done);
	check(dma_.job.status == tlm::TLM_ADDRESS_ERROR_RESPONSE,
	      "DMA to an unmapped IOVA gets TLM_ADDRESS_ERROR_RESPONSE");
	check(dma_.job.fault == kEvtFTranslation, "SmmuTxn.fault is F_TRANSLATION");
	check(wait_irq(evtq_irq), "event queue wired interrupt");
	phase("translation fault signalled");

	uint32_t prod = static_cast<uint32_t>(reg_read(kEventqProd));

	check((prod & ((2u << kEventqLog2) - 1)) == 1, "one event record queued");

	uint64_t rec[4];

	mem_read(evtq, rec, 32);
	std::printf("  event record: %016" PRIx64 " %016" PRIx64 " %016" PRIx64
		    " %016" PRIx64 "\n", rec[0], rec[1], rec[2], rec[3]);
	check(rec_bits(rec, kEvtTypeLsb, kEvtTypeBits) == kEvtFTranslation,
	      "event type F_TRANSLATION (0x10)");
	check(rec_bits(rec, kEvtSsv, 1) == 0, "SSV 0");
	check(rec_bits(rec, kEvtSidLsb, 32) == kSid, "StreamID");
	check(rec_bits(rec, kEvtRnW, 1) == 0, "RnW 0 (write)");
	check(rec_bits(rec, kEvtInD, 1) == 0, "InD 0 (data)");
	check(rec_bits(rec, kEvtPnU, 1) == 0, "PnU 0 (unprivileged)");
	check(rec_bits(rec, kEvtS2, 1) == 0, "S2 0 (stage 1)");
	check(rec_bits(rec, kEvtClassLsb, 2) == kEvtClassIn, "CLASS IN");
	check(rec_bits(rec, kEvtInputAddrLsb, 64) == kIovaDst + kCopyOff,
	      "InputAddr is the faulting IOVA");
	reg_write(kEventqCons, prod);
	check(reg_read(kGerror) == 0, "no global error");

	/* The faulting write must not have reached the old page. */
	mem_read(dst, out.data(), kBufSize);
	bad = 0;
	for (uint64_t i = 0; i < kBufSize; i++) {
		bool in = i >= kCopyOff && i < kCopyOff + kCopyLen;

		bad += out[i] != (in ? pattern(i) : 0);
	}
	check(bad == 0, "faulting DMA wrote nothing");
	phase("event record checked against IHI0070 7.3.13");

	iopt_pgtable_free(pt);
	std::printf("%s: %d check(s) failed\n", failures ? "FAILED" : "PASSED",
		    failures);
	finished = true;
	sc_stop();
}

} // namespace

int sc_main(int, char *[])
{
	iopt_physmem *pm = nullptr;

	if (iopt_physmem_create(kMemBase, kMemSize, &pm)) {
		std::printf("FAIL: physmem\n");
		return 1;
	}
	tlm::tlm_global_quantum::instance().set(sc_time(1, SC_US));

	iopt_smmuv3_params p;

	iopt_smmuv3_default_params(&p);

	iopt::SmmuTiming timing;	/* 1 GHz, 1-cycle registers */

	timing.desc_cycles = 20;
	{
		iopt::Memory memory("memory", pm, kMemBase, kMemSize,
				    sc_time(20, SC_NS));
		iopt::Smmuv3 smmu("smmu", p, timing);
		Dma dma("dma");
		Cpu cpu("cpu", pm, dma, smmu);
		sc_signal<bool> evtq("evtq"), gerror("gerror"), sync("sync");

		cpu.mem.bind(memory.socket);
		cpu.smmu.bind(smmu.regs);
		dma.bus.bind(smmu.upstream);
		smmu.downstream.bind(memory.socket);
		smmu.walker.bind(memory.socket);
		smmu.evtq_irq.bind(evtq);
		smmu.gerror_irq.bind(gerror);
		smmu.cmd_sync_irq.bind(sync);
		cpu.evtq_irq.bind(evtq);
		cpu.cmd_sync_irq.bind(sync);

		sc_start();
		if (!cpu.finished) {
			std::printf("FAIL: the CPU thread did not finish\n");
			failures++;
		}
	}
	iopt_physmem_destroy(pm);
	return failures ? 1 : 0;
}
