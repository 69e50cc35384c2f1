// SPDX-License-Identifier: MIT
/*
 * Unit tests of the SystemC adapter (iopt::SmmuBase through iopt::Smmuv3):
 * register socket errors, the cycle <-> time mapping of register and
 * device accesses, temporal decoupling never sending the model back in
 * time, the event thread running commands without any register access,
 * MSIs through the walker socket, and interrupt pulses. Expectations are
 * computed here from the adapter's documented rules, the model's
 * documented timing parameters and IHI0070 field positions.
 * Exit status: the number of failed checks (0: all passed).
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/systemc/memory.h>
#include <iopgtable/systemc/smmuv3.h>

#include "tb.h"

using namespace sc_core;

namespace {

constexpr uint64_t kMemBase = 0x80000000, kMemSize = 8ull << 20;
const sc_time kPeriod(2, SC_NS);
constexpr unsigned kRegCycles = 3;
const sc_time kMemLat(20, SC_NS);

/* IHI0070 6.3 register offsets and fields used here. */
constexpr uint64_t kIdr0 = 0x00, kCr0 = 0x20, kGbpa = 0x44, kIrqCtrl = 0x50,
		   kStrtabBase = 0x80, kStrtabBaseCfg = 0x88, kCmdqBase = 0x90,
		   kCmdqProd = 0x98, kCmdqCons = 0x9c, kEventqBase = 0xa0,
		   kEventqProd = 0x100a8;
constexpr uint32_t kIdr0S2p = 1u << 0, kIdr0S1p = 1u << 1;
constexpr uint32_t kGbpaUpdate = 1u << 31;
constexpr uint32_t kCr0SmmuEn = 1u << 0, kCr0EventqEn = 1u << 2,
		   kCr0CmdqEn = 1u << 3;
constexpr uint32_t kIrqEventqEn = 1u << 2;
constexpr unsigned kEvtCBadSte = 0x04;		/* 7.3.5 */
constexpr unsigned kAbortNoEvent = IOPT_SMMUV3_EVT_ABORT;	/* GBPA.ABORT, no event */

/* Model timing parameters set for the test (docs/smmu_model.md: a
 * command completes at max(PROD write, previous) + its cost; CMD_SYNC
 * costs cmd + sync cycles, + msi cycles when it writes an MSI). */
constexpr unsigned kCmdCycles = 4, kSyncCycles = 8, kMsiCycles = 20,
		   kEventCycles = 20;

using tb::check;
using tb::failures;

/* Smmuv3 that records every cycle the adapter gives the C model. */
class RecordingSmmu : public iopt::Smmuv3 {
public:
	std::vector<uint64_t> cycles;

	RecordingSmmu(sc_module_name n, const iopt_smmuv3_params &p,
		      const iopt::SmmuTiming &t)
		: iopt::Smmuv3(n, p, t) {}

protected:
	int model_read(uint64_t off, unsigned size, uint64_t *val,
		       uint64_t cycle) override
	{
		cycles.push_back(cycle);
		return Smmuv3::model_read(off, size, val, cycle);
	}
	int model_write(uint64_t off, unsigned size, uint64_t val,
			uint64_t cycle) override
	{
		cycles.push_back(cycle);
		return Smmuv3::model_write(off, size, val, cycle);
	}
	int model_translate(const iopt::SmmuAccess &a, uint64_t cycle,
			    iopt::SmmuResult &r) override
	{
		cycles.push_back(cycle);
		return Smmuv3::model_translate(a, cycle, r);
	}
	void model_run_until(uint64_t cycle) override
	{
		cycles.push_back(cycle);
		Smmuv3::model_run_until(cycle);
	}
};

/* Records the rising and falling times of a line. */
class Edges : public sc_module {
public:
	sc_in<bool> in;
	std::vector<sc_time> rises, falls;

	SC_HAS_PROCESS(Edges);
	explicit Edges(sc_module_name n) : sc_module(n), in("in")
	{
		SC_METHOD(seen);
		sensitive << in;
		dont_initialize();
	}

private:
	void seen()
	{
		(in.read() ? rises : falls).push_back(sc_time_stamp());
	}
};

class Bench : public sc_module {
public:
	tlm_utils::simple_initiator_socket<Bench> regs, dev;
	bool finished = false;

	SC_HAS_PROCESS(Bench);
	Bench(sc_module_name n, iopt_physmem *pm, RecordingSmmu &s, Edges &sync,
	      Edges &evtq)
		: sc_module(n), regs("regs"), dev("dev"), pm_(pm), smmu_(s),
		  sync_(sync), evtq_(evtq)
	{
		SC_THREAD(main_thread);
		SC_THREAD(late_thread);
	}

private:
	iopt_physmem *pm_;
	RecordingSmmu &smmu_;
	Edges &sync_, &evtq_;
	sc_event go_late_, late_done_;
	sc_time late_delay_;
	tlm::tlm_response_status late_status_ = tlm::TLM_INCOMPLETE_RESPONSE;
	sc_time early_local_;

	tlm::tlm_response_status reg(tlm::tlm_command c, uint64_t off, void *buf,
				     unsigned len, sc_time &d, unsigned sw = 0,
				     unsigned char *be = nullptr)
	{
		tlm::tlm_generic_payload gp;

		tb::prepare(gp, c, off, buf, len, sw, be);
		regs->b_transport(gp, d);
		return gp.get_response_status();
	}
	void wr(uint64_t off, uint64_t v, unsigned len = 4)
	{
		sc_time d = SC_ZERO_TIME;
		uint32_t v32 = static_cast<uint32_t>(v);

		check(reg(tlm::TLM_WRITE_COMMAND, off,
			  len == 4 ? static_cast<void *>(&v32) : &v, len, d) ==
		      tlm::TLM_OK_RESPONSE, "register write accepted");
		wait(d);
	}
	uint64_t rd(uint64_t off, unsigned len = 4)
	{
		sc_time d = SC_ZERO_TIME;
		uint32_t v32 = 0;
		uint64_t v = 0;

		reg(tlm::TLM_READ_COMMAND, off,
		    len == 4 ? static_cast<void *>(&v32) : &v, len, d);
		wait(d);
		return len == 4 ? v32 : v;
	}
	/* A device access with StreamID 0 (or none). */
	tlm::tlm_response_status device(tlm::tlm_command c, uint64_t a, void *buf,
					unsigned len, sc_time &d,
					iopt::SmmuTxn *ext, unsigned sw = 0,
					unsigned char *be = nullptr)
	{
		tlm::tlm_generic_payload gp;

		tb::prepare(gp, c, a, buf, len, sw, be);
		if (ext)
			gp.set_extension(ext);
		dev->b_transport(gp, d);
		if (ext)
			gp.clear_extension(ext);
		return gp.get_response_status();
	}
	uint8_t *host(uint64_t pa, size_t len)
	{
		return static_cast<uint8_t *>(iopt_physmem_ptr(pm_, pa, len));
	}
	uint64_t cycle_ceil(const sc_time &t)
	{
		return (t.value() + kPeriod.value() - 1) / kPeriod.value();
	}

	void test_register_errors();
	void test_register_time();
	void test_device_bypass();
	void test_decoupling();
	void test_event_thread();
	void test_fault_irq();
	void main_thread();
	void late_thread();
};

void Bench::test_register_errors()
{
	uint64_t v = 0;
	unsigned char be[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	sc_time d = SC_ZERO_TIME;

	check(reg(tlm::TLM_READ_COMMAND, kIdr0, &v, 2, d) ==
	      tlm::TLM_BURST_ERROR_RESPONSE, "2-byte register read: burst error");
	check(reg(tlm::TLM_WRITE_COMMAND, kStrtabBase, &v, 16, d) ==
	      tlm::TLM_BURST_ERROR_RESPONSE, "16-byte register write: burst error");
	check(reg(tlm::TLM_READ_COMMAND, kIdr0, &v, 4, d, 2) ==
	      tlm::TLM_BURST_ERROR_RESPONSE, "streaming width 2: burst error");
	check(reg(tlm::TLM_READ_COMMAND, kIdr0, &v, 4, d, 0, be) ==
	      tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte enables: byte-enable error");
	check(reg(tlm::TLM_READ_COMMAND, 0x20000, &v, 4, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "offset 0x20000: address error");
	check(reg(tlm::TLM_READ_COMMAND, 0x22, &v, 4, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "misaligned 4-byte: address error");
	check(reg(tlm::TLM_READ_COMMAND, kStrtabBase + 4, &v, 8, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "misaligned 8-byte: address error");
	check(d == SC_ZERO_TIME, "refused accesses take no time");
	check(smmu_.cycles.empty(), "refused accesses never reach the model");

	/* A refused write changed nothing. */
	uint64_t base = 0x80004000;

	d = SC_ZERO_TIME;
	reg(tlm::TLM_WRITE_COMMAND, kStrtabBase, &base, 16, d);
	check(rd(kStrtabBase, 8) == 0, "refused write left STRTAB_BASE alone");

	uint64_t idr0 = rd(kIdr0);

	check((idr0 & kIdr0S1p) && (idr0 & kIdr0S2p), "IDR0: S1P and S2P");
	wr(kStrtabBase, base, 8);
	check(rd(kStrtabBase, 8) == base, "64-bit STRTAB_BASE round trip");
	check(rd(kStrtabBase, 4) == (base & 0xffffffffu), "32-bit low half");

	tlm::tlm_generic_payload gp;
	uint64_t dv = 0;

	gp.set_command(tlm::TLM_READ_COMMAND);
	gp.set_address(kStrtabBase);
	gp.set_data_ptr(reinterpret_cast<unsigned char *>(&dv));
	gp.set_data_length(8);
	check(regs->transport_dbg(gp) == 8 && dv == base, "debug read");
	gp.set_command(tlm::TLM_WRITE_COMMAND);
	check(regs->transport_dbg(gp) == 0, "debug write refused");
}

/* A register access at local time t enters at cycle ceil(t / period)
 * and returns reg_cycles later. */
void Bench::test_register_time()
{
	wait(sc_time(100, SC_NS) - sc_time_stamp());

	sc_time d(3, SC_NS);
	uint32_t v;

	reg(tlm::TLM_READ_COMMAND, kIdr0, &v, 4, d);
	/* ceil(103 / 2) = 52; + 3 cycles = 55: 110 ns, 10 ns after now. */
	check(smmu_.cycles.back() == 52, "register access at 103 ns enters cycle 52");
	check(d == sc_time(10, SC_NS), "register access annotates 10 ns");
	wait(d);
}

/* SMMUEN = 0 with GBPA.ABORT: aborted without an event; with bypass,
 * translated in zero model cycles, so a read costs the cycle round-up
 * and the memory's latency; a page-crossing write is split and lands. */
void Bench::test_device_bypass()
{
	uint8_t buf[8192];
	iopt::SmmuTxn ext(0);
	sc_time d = SC_ZERO_TIME;

	check(device(tlm::TLM_READ_COMMAND, kMemBase, buf, 64, d, nullptr) ==
	      tlm::TLM_GENERIC_ERROR_RESPONSE, "no SmmuTxn: generic error");
	check(device(tlm::TLM_READ_COMMAND, kMemBase, buf, 64, d, &ext) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE && ext.fault == kAbortNoEvent,
	      "GBPA.ABORT: address error, fault ABORT");
	wr(kGbpa, kGbpaUpdate);		/* ABORT = 0: bypass */

	sc_time now = sc_time_stamp();

	d = sc_time(5, SC_NS);
	check(device(tlm::TLM_READ_COMMAND, kMemBase + 0x100, buf, 64, d, &ext) ==
	      tlm::TLM_OK_RESPONSE && ext.oa == kMemBase + 0x100, "bypass read");
	check(d == kPeriod * double(cycle_ceil(now + sc_time(5, SC_NS))) - now + kMemLat,
	      "bypass read delay = cycle round-up + memory latency");
	wait(d);

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = static_cast<uint8_t>(i * 13 + 1);
	d = SC_ZERO_TIME;
	check(device(tlm::TLM_WRITE_COMMAND, kMemBase + 0x10800, buf, sizeof(buf), d,
		     &ext) == tlm::TLM_OK_RESPONSE, "page-crossing write");
	check(std::memcmp(host(kMemBase + 0x10800, sizeof(buf)), buf, sizeof(buf)) == 0,
	      "page-crossing write landed whole");
	check(d >= kMemLat * 3.0, "three pieces, each with the memory latency");
	wait(d);

	unsigned char be[8192];

	std::memset(be, 0xff, sizeof(be));
	d = SC_ZERO_TIME;
	check(device(tlm::TLM_WRITE_COMMAND, kMemBase + 0x10800, buf, sizeof(buf), d,
		     &ext, 0, be) == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE,
	      "page-crossing write with byte enables: byte-enable error");
	check(device(tlm::TLM_WRITE_COMMAND, kMemBase + 0x10ff0, buf, 64, d, &ext,
		     32) == tlm::TLM_BURST_ERROR_RESPONSE,
	      "page-crossing streaming write: burst error");
	check(device(tlm::TLM_WRITE_COMMAND, kMemBase + 0x10f00, buf, 64, d, &ext,
		     16) == tlm::TLM_OK_RESPONSE,
	      "streaming write inside a page passes through");
	check(std::memcmp(host(kMemBase + 0x10f00, 16), buf + 48, 16) == 0,
	      "streaming write: the window holds the last 16 bytes");

	tlm::tlm_generic_payload gp;
	tlm::tlm_dmi dmi;

	gp.set_address(kMemBase);
	gp.set_command(tlm::TLM_READ_COMMAND);
	check(!dev->get_direct_mem_ptr(gp, dmi), "no DMI upstream");
}

/* Two processes at the same global time: the first is 500 ns ahead in
 * local time, the second only 10 ns. The second must enter the model at
 * the first's cycle, and its annotated delay must say so. */
void Bench::test_decoupling()
{
	sc_time d(500, SC_NS);
	uint8_t buf[64];
	iopt::SmmuTxn ext(0);
	size_t mark = smmu_.cycles.size();

	early_local_ = sc_time_stamp() + d;
	check(device(tlm::TLM_READ_COMMAND, kMemBase, buf, 64, d, &ext) ==
	      tlm::TLM_OK_RESPONSE, "early (500 ns ahead) read");

	uint64_t early_cycle = smmu_.cycles.back();

	go_late_.notify();	/* immediate: the late thread runs next */
	wait(late_done_);
	check(late_status_ == tlm::TLM_OK_RESPONSE, "late (10 ns ahead) read");
	check(smmu_.cycles.size() > mark + 1 &&
	      smmu_.cycles[mark + 1] == early_cycle,
	      "late read entered at the early read's cycle");
	check(late_delay_ >= early_local_ - sc_time_stamp() + kMemLat,
	      "late read's delay covers the wait for the model's time");
	wait(d);
}

void Bench::late_thread()
{
	uint8_t buf[64];
	iopt::SmmuTxn ext(0);

	wait(go_late_);
	late_delay_ = sc_time(10, SC_NS);
	late_status_ = device(tlm::TLM_READ_COMMAND, kMemBase, buf, 64, late_delay_, &ext);
	late_done_.notify();
}

/* Commands complete from the event thread, with no register access:
 * a CMD_SYNC with CS=IRQ and no MSI pulses cmd_sync_irq for one period
 * at its completion cycle; one with an MSI writes it at its cycle. */
void Bench::test_event_thread()
{
	uint64_t cmdq = kMemBase + 0x20000, msi = kMemBase + 0x30000;
	iopt_smmuv3_cmd c{};
	uint64_t w[2];

	wr(kCmdqBase, cmdq | 4, 8);	/* 16 entries */
	wr(kCmdqProd, 0);
	wr(kCmdqCons, 0);
	wr(kCr0, kCr0CmdqEn);
	c.opcode = IOPT_SMMUV3_CMD_SYNC;
	c.cs = IOPT_SMMUV3_SYNC_CS_IRQ;
	iopt_smmuv3_cmd_encode(&c, w);
	std::memcpy(host(cmdq, 16), w, 16);
	c.msi_addr = msi;
	c.msi_data = 0x5a5a1234;
	iopt_smmuv3_cmd_encode(&c, w);
	std::memcpy(host(cmdq + 16, 16), w, 16);

	sc_time now = sc_time_stamp();
	uint64_t c0 = cycle_ceil(now);

	wr(kCmdqProd, 1);
	uint64_t sync_done = c0 + kCmdCycles + kSyncCycles;
	wait(kPeriod * double(sync_done + 5) - sc_time_stamp());
	check(sync_.rises.size() == 1 && sync_.rises[0] == kPeriod * double(sync_done),
	      "cmd_sync_irq rises at the CMD_SYNC's completion cycle");
	check(sync_.falls.size() == 1 && sync_.falls[0] == sync_.rises[0] + kPeriod,
	      "cmd_sync_irq falls one period later");

	uint64_t c1 = cycle_ceil(sc_time_stamp());
	uint64_t msi_done = c1 + kCmdCycles + kSyncCycles + kMsiCycles;
	uint32_t got;

	wr(kCmdqProd, 2);
	wait(kPeriod * double(msi_done - 1) - sc_time_stamp());
	std::memcpy(&got, host(msi, 4), 4);
	check(got == 0, "MSI not written before its cycle");
	wait(kPeriod * double(msi_done + 1) - sc_time_stamp());
	std::memcpy(&got, host(msi, 4), 4);
	check(got == 0x5a5a1234, "MSI written through the walker socket by its cycle");
	check(rd(kCmdqCons) == 2, "both commands consumed");
}

/* An invalid STE: C_BAD_STE, recorded; evtq_irq pulses event_cycles after
 * the request. */
void Bench::test_fault_irq()
{
	uint64_t strtab = kMemBase + 0x40000, evtq = kMemBase + 0x50000;
	uint8_t buf[64];
	iopt::SmmuTxn ext(0);

	wr(kCr0, 0);
	wr(kStrtabBase, strtab, 8);
	wr(kStrtabBaseCfg, 2);		/* 4 STEs, all zero: V = 0 */
	wr(kEventqBase, evtq | 4, 8);
	wr(kIrqCtrl, kIrqEventqEn);
	wr(kCr0, kCr0SmmuEn | kCr0EventqEn | kCr0CmdqEn);

	sc_time d = SC_ZERO_TIME, now = sc_time_stamp();
	uint64_t c = cycle_ceil(now);

	check(device(tlm::TLM_WRITE_COMMAND, 0x1000, buf, 64, d, &ext) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE && ext.fault == kEvtCBadSte,
	      "invalid STE: address error, fault C_BAD_STE");
	wait(sc_time(1, SC_US));
	check(evtq_.rises.size() == 1 &&
	      evtq_.rises[0] >= kPeriod * double(c + kEventCycles),
	      "evtq_irq rises event_cycles after the fault");
	check(evtq_.falls.size() == 1 && evtq_.falls[0] == evtq_.rises[0] + kPeriod,
	      "evtq_irq is a one-period pulse");
	check((rd(kEventqProd) & 0x1f) == 1, "one event queued");

	uint64_t rec0;

	std::memcpy(&rec0, host(evtq, 8), 8);
	check((rec0 & 0xff) == kEvtCBadSte && (rec0 >> 32) == 0,
	      "record: C_BAD_STE, StreamID 0 (IHI0070 7.3)");
}

void Bench::main_thread()
{
	test_register_errors();
	test_register_time();
	test_device_bypass();
	test_decoupling();
	test_event_thread();
	test_fault_irq();

	bool mono = true;

	for (size_t i = 1; i < smmu_.cycles.size(); i++)
		mono = mono && smmu_.cycles[i] >= smmu_.cycles[i - 1];
	check(mono, "every cycle given to the model is >= the one before");
	finished = true;
	sc_stop();
}

} // namespace

int sc_main(int, char *[])
{
	iopt_physmem *pm = nullptr;

	if (iopt_physmem_create(kMemBase, kMemSize, &pm))
		return 1;

	iopt_smmuv3_params p;

	iopt_smmuv3_default_params(&p);
	p.cmd_cycles = kCmdCycles;
	p.sync_cycles = kSyncCycles;
	p.msi_cycles = kMsiCycles;
	p.event_cycles = kEventCycles;

	iopt::SmmuTiming t;

	t.clock_period = kPeriod;
	t.reg_cycles = kRegCycles;
	t.desc_cycles = 10;
	{
		iopt::Memory mem("mem", pm, kMemBase, kMemSize, kMemLat);
		RecordingSmmu smmu("smmu", p, t);
		Edges sync("sync_edges"), evtq("evtq_edges");
		Bench bench("bench", pm, smmu, sync, evtq);
		sc_signal<bool> s_evtq("s_evtq"), s_gerror("s_gerror"), s_sync("s_sync");

		bench.regs.bind(smmu.regs);
		bench.dev.bind(smmu.upstream);
		smmu.downstream.bind(mem.socket);
		smmu.walker.bind(mem.socket);
		smmu.evtq_irq.bind(s_evtq);
		smmu.gerror_irq.bind(s_gerror);
		smmu.cmd_sync_irq.bind(s_sync);
		sync.in.bind(s_sync);
		evtq.in.bind(s_evtq);
		sc_start();
		if (!bench.finished) {
			std::printf("FAIL: the test thread did not finish\n");
			failures++;
		}
	}
	iopt_physmem_destroy(pm);
	std::printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
