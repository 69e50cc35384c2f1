// SPDX-License-Identifier: MIT
/*
 * Unit tests of the SystemC adapter over the SMMUv2 model (iopt::Smmuv2
 * on iopt::SmmuBase): register socket errors and window size, a
 * translation through a stage 1 context bank whose tables the library
 * builds in simulated memory (data and output address checked against the
 * PA mapped here), a terminate-mode fault raising the bank's context
 * interrupt with FSR/FAR/FSYNR0 read back through the register socket,
 * and stall mode: the device's b_transport waits until software writes
 * RESUME (retry: completes at the mapped PA; terminate: address error).
 * Register offsets and fields are written here as constants from the
 * reference facts (Linux arm-smmu and OpenBSD smmureg headers, MMU-500
 * TRM), never taken from the model.
 * Exit status: 1 when a check failed (each is printed), 0 otherwise.
 */
#include <cstdio>
#include <cstring>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/systemc/memory.h>
#include <iopgtable/systemc/smmuv2.h>

#include "tb.h"

using namespace sc_core;

namespace {

constexpr uint64_t kMemBase = 0x80000000, kMemSize = 16ull << 20;
const sc_time kPeriod(2, SC_NS);
const sc_time kMemLat(20, SC_NS);
constexpr unsigned kBanks = 4;

/* GR0 (page 0). */
constexpr uint64_t kScr0 = 0x000, kId0 = 0x020, kId1 = 0x024;
constexpr uint32_t kScr0Gfre = 1u << 1, kScr0Gfie = 1u << 2,
		   kScr0Usfcfg = 1u << 10;
constexpr uint64_t kSmr(unsigned n) { return 0x800 + 4ull * n; }
constexpr uint64_t kS2cr(unsigned n) { return 0xc00 + 4ull * n; }
constexpr uint32_t kSmrValid = 1u << 31;
constexpr uint32_t kS2crTranslate = 0u << 16;	/* TYPE 17:16 = 0 */
/* ID0.NUMSMRG 7:0; ID1.PAGESIZE 31, NUMPAGENDXB 30:28, NUMCB 7:0. */
/* GR1 (page 1). */
constexpr uint64_t kGr1 = 0x1000;
constexpr uint64_t kCbar(unsigned n) { return kGr1 + 4ull * n; }
constexpr uint64_t kCba2r(unsigned n) { return kGr1 + 0x800 + 4ull * n; }
constexpr uint32_t kCbarS1Bypass = 1u << 16;	/* TYPE 1: stage 1, s2 bypass */
constexpr uint32_t kCba2rVa64 = 1u << 0;
/* Context bank page. */
constexpr uint64_t kCbSctlr = 0x00, kCbResume = 0x08, kCbTcr2 = 0x10,
		   kCbTtbr0 = 0x20, kCbTcr = 0x30, kCbMair0 = 0x38,
		   kCbMair1 = 0x3c, kCbFsr = 0x58, kCbFar = 0x60,
		   kCbFsynr0 = 0x68;
constexpr uint32_t kSctlrM = 1u << 0, kSctlrCfre = 1u << 5,
		   kSctlrCfie = 1u << 6, kSctlrCfcfg = 1u << 7;
constexpr uint32_t kResumeTerminate = 1u << 0;
constexpr uint32_t kTcrEpd1 = 1u << 23;
constexpr uint32_t kTcrT0sz(unsigned n) { return n & 0x3f; }
constexpr uint32_t kTcr2Pasize48 = 5;		/* size code 5: 48 bits */
constexpr uint32_t kFsrTf = 1u << 1, kFsrSs = 1u << 30;
constexpr uint32_t kFsynr0Wnr = 1u << 4, kFsynr0Pnu = 1u << 5;

/* The test's mapping: StreamID kSid through SMR/S2CR 0 to bank kBank. */
constexpr uint32_t kSid = 0x15;
constexpr unsigned kBank = 2;
constexpr uint64_t kIova = 0x40000000, kPa = kMemBase + 0x300000;
constexpr uint64_t kHole = 0x40200000;	/* unmapped until the stall test */
constexpr uint64_t kHolePa = kMemBase + 0x380000;

using tb::check;
using tb::failures;

class Edges : public sc_module {
public:
	sc_in<bool> in;
	std::vector<sc_time> rises;

	SC_HAS_PROCESS(Edges);
	explicit Edges(sc_module_name n) : sc_module(n), in("in")
	{
		SC_METHOD(seen);
		sensitive << in.pos();
		dont_initialize();
	}

private:
	void seen() { rises.push_back(sc_time_stamp()); }
};

class Bench : public sc_module {
public:
	tlm_utils::simple_initiator_socket<Bench> regs, dev;
	bool finished = false;

	SC_HAS_PROCESS(Bench);
	Bench(sc_module_name n, iopt_physmem *pm, iopt::Smmuv2 &s, Edges &ctx,
	      Edges &global)
		: sc_module(n), regs("regs"), dev("dev"), pm_(pm), smmu_(s),
		  ctx_(ctx), global_(global)
	{
		SC_THREAD(main_thread);
		SC_THREAD(device_thread);
		SC_METHOD(method_access);
		sensitive << meth_go_;
		dont_initialize();
	}

private:
	iopt_physmem *pm_;
	iopt::Smmuv2 &smmu_;
	Edges &ctx_, &global_;
	iopt_pgtable *pt_ = nullptr;
	uint64_t cb0_ = 0;		/* offset of context bank 0 */

	/* Work for the device thread and what it saw. */
	sc_event dev_go_, dev_done_;
	bool dev_write_ = false;
	uint64_t dev_addr_ = 0;
	uint8_t dev_buf_[64];
	tlm::tlm_response_status dev_status_ = tlm::TLM_INCOMPLETE_RESPONSE;
	iopt::SmmuTxn dev_ext_{kSid, true};
	sc_time dev_end_;
	/* The SC_METHOD initiator's access. */
	sc_event meth_go_;
	tlm::tlm_response_status meth_status_ = tlm::TLM_INCOMPLETE_RESPONSE;

	tlm::tlm_response_status reg(tlm::tlm_command c, uint64_t off, void *buf,
				     unsigned len, sc_time &d, unsigned sw = 0)
	{
		tlm::tlm_generic_payload gp;

		tb::prepare(gp, c, off, buf, len, sw);
		regs->b_transport(gp, d);
		return gp.get_response_status();
	}
	void wr(uint64_t off, uint64_t v, unsigned len = 4)
	{
		sc_time d = SC_ZERO_TIME;
		uint32_t v32 = static_cast<uint32_t>(v);

		if (reg(tlm::TLM_WRITE_COMMAND, off,
			len == 4 ? static_cast<void *>(&v32) : &v, len, d) !=
		    tlm::TLM_OK_RESPONSE)
			check(false, "register write accepted");
		wait(d);
	}
	uint64_t rd(uint64_t off, unsigned len = 4)
	{
		sc_time d = SC_ZERO_TIME;
		uint32_t v32 = 0;
		uint64_t v = 0;

		if (reg(tlm::TLM_READ_COMMAND, off,
			len == 4 ? static_cast<void *>(&v32) : &v, len, d) !=
		    tlm::TLM_OK_RESPONSE)
			check(false, "register read accepted");
		wait(d);
		return len == 4 ? v32 : v;
	}
	uint64_t cb(unsigned n, uint64_t off) const
	{
		return cb0_ + (static_cast<uint64_t>(n) << 12) + off;
	}
	tlm::tlm_response_status device(tlm::tlm_command c, uint64_t a, void *buf,
					unsigned len, iopt::SmmuTxn &ext)
	{
		tlm::tlm_generic_payload gp;
		sc_time d = SC_ZERO_TIME;

		tb::prepare(gp, c, a, buf, len);
		gp.set_extension(&ext);
		dev->b_transport(gp, d);
		gp.clear_extension(&ext);
		wait(d);
		return gp.get_response_status();
	}
	uint8_t *host(uint64_t pa, size_t len)
	{
		return static_cast<uint8_t *>(iopt_physmem_ptr(pm_, pa, len));
	}

	/* Hand the device thread an access and let `settle` pass. */
	void start_device(bool write, uint64_t addr, const sc_time &settle)
	{
		dev_write_ = write;
		dev_addr_ = addr;
		dev_status_ = tlm::TLM_INCOMPLETE_RESPONSE;
		dev_go_.notify(SC_ZERO_TIME);
		wait(settle);
	}
	/* The device thread's access has returned (it may already have). */
	void wait_device()
	{
		while (dev_status_ == tlm::TLM_INCOMPLETE_RESPONSE)
			wait(dev_done_);
	}

	void test_registers();
	void setup_bank();
	void test_translate();
	void test_fault();
	void test_stall();
	void test_stall_method();
	void main_thread();
	void device_thread();
	void method_access();
};

void Bench::test_registers()
{
	uint64_t id1 = rd(kId1);
	unsigned numpage = 1u << (((id1 >> 28) & 7) + 1);
	uint64_t page = (id1 >> 31) ? 0x10000 : 0x1000;
	uint64_t window = 2 * numpage * page;

	check((id1 & 0xff) == kBanks, "ID1.NUMCB: the configured banks");
	check(smmu_.reg_window() == window,
	      "register window: 2 * 2^(NUMPAGENDXB + 1) pages");
	cb0_ = numpage * page;

	uint64_t v = 0;
	sc_time d = SC_ZERO_TIME;

	check(reg(tlm::TLM_READ_COMMAND, kId0, &v, 2, d) ==
	      tlm::TLM_BURST_ERROR_RESPONSE, "2-byte read: burst error");
	check(reg(tlm::TLM_READ_COMMAND, kId0, &v, 4, d, 2) ==
	      tlm::TLM_BURST_ERROR_RESPONSE, "streaming width 2: burst error");
	check(reg(tlm::TLM_READ_COMMAND, window, &v, 4, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "offset = window size: address error");
	check(reg(tlm::TLM_READ_COMMAND, window - 4, &v, 4, d) ==
	      tlm::TLM_OK_RESPONSE, "last word of the window: OK");
	check(reg(tlm::TLM_READ_COMMAND, kId0 + 2, &v, 4, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "misaligned: address error");
	uint32_t bad = 0x12345678;
	check(reg(tlm::TLM_WRITE_COMMAND, cb(kBank, kCbTtbr0) + 4, &bad, 8, d) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE, "misaligned 8-byte write refused");
	wait(d);
	check(rd(cb(kBank, kCbTtbr0), 8) == 0, "refused write changed nothing");
}

/* Stage 1 AArch64 bank over a table the library builds in simulated
 * memory; kIova -> kPa read/write. */
void Bench::setup_bank()
{
	pt_ = tb::physmem_table(pm_, 48, 40);
	if (!pt_)
		return;
	check(iopt_pgtable_map_pages(pt_, kIova, kPa, 4096, 2, IOPT_READ | IOPT_WRITE,
				     nullptr) == 0, "two pages mapped");

	iopt_pgtable_info info;

	iopt_pgtable_get_info(pt_, &info);
	wr(kS2cr(0), kS2crTranslate | kBank);
	wr(kSmr(0), kSmrValid | kSid);
	wr(kCbar(kBank), kCbarS1Bypass | 1);		/* VMID 1 */
	wr(kCba2r(kBank), kCba2rVa64);
	wr(cb(kBank, kCbTcr), kTcrT0sz(16) | kTcrEpd1);
	wr(cb(kBank, kCbTcr2), kTcr2Pasize48);
	wr(cb(kBank, kCbTtbr0), info.regs.ttbr | 7ull << 48, 8);	/* ASID 7 */
	wr(cb(kBank, kCbMair0), static_cast<uint32_t>(info.regs.mair));
	wr(cb(kBank, kCbMair1), static_cast<uint32_t>(info.regs.mair >> 32));
	wr(cb(kBank, kCbSctlr), kSctlrM | kSctlrCfre | kSctlrCfie);
	wr(kScr0, kScr0Gfre | kScr0Gfie | kScr0Usfcfg);	/* CLIENTPD = 0 */
}

void Bench::test_translate()
{
	uint8_t buf[256];

	for (unsigned i = 0; i < 4096 + 256; i++)
		host(kPa, 8192)[i] = static_cast<uint8_t>(i * 7 + 3);

	iopt::SmmuTxn ext(kSid, true);
	sc_time t0 = sc_time_stamp();

	check(device(tlm::TLM_READ_COMMAND, kIova + 0x40, buf, 64, ext) ==
	      tlm::TLM_OK_RESPONSE && ext.fault == 0, "read through bank: OK");
	check(ext.oa == kPa + 0x40, "output address = the PA mapped");
	bool same = true;

	for (unsigned i = 0; i < 64; i++)
		same = same && buf[i] == static_cast<uint8_t>((0x40 + i) * 7 + 3);
	check(same, "read data = the bytes at the mapped PA");
	check(sc_time_stamp() - t0 >= kMemLat, "the access took at least the memory latency");

	/* A write crossing into the second page lands at kPa + 0xf80... */
	std::memset(buf, 0xa5, sizeof(buf));
	check(device(tlm::TLM_WRITE_COMMAND, kIova + 0xf80, buf, 256, ext) ==
	      tlm::TLM_OK_RESPONSE, "page-crossing write: OK");
	same = true;
	for (unsigned i = 0; i < 256; i++)
		same = same && host(kPa + 0xf80 + i, 1)[0] == 0xa5;
	check(same, "page-crossing write landed at the mapped PAs");

	/* SubstreamID on SMMUv2: refused, nothing translated. */
	iopt::SmmuTxn ss(kSid, true);

	ss.ssv = true;
	check(device(tlm::TLM_READ_COMMAND, kIova, buf, 4, ss) ==
	      tlm::TLM_GENERIC_ERROR_RESPONSE, "SubstreamID on SMMUv2: generic error");
	check(smmu_.stats().translations >= 2, "model counted the translations");
}

/* Terminate mode: a write to an unmapped page aborts, the context
 * interrupt of the bank rises, FSR.TF, FAR (by page) and FSYNR0.WNR read
 * back through the register socket; FSR is write-1-to-clear. */
void Bench::test_fault()
{
	uint8_t buf[8] = {};
	iopt::SmmuTxn ext(kSid, true);
	size_t rises = ctx_.rises.size();

	check(device(tlm::TLM_WRITE_COMMAND, kHole + 0x128, buf, 8, ext) ==
	      tlm::TLM_ADDRESS_ERROR_RESPONSE && ext.fault == IOPT_SMMUV2_ABORT,
	      "unmapped write: address error, fault = ABORT");
	wait(sc_time(1, SC_US));
	check(ctx_.rises.size() == rises + 1, "context interrupt of the bank rose once");
	check(global_.rises.empty(), "no global fault interrupt");

	uint32_t fsr = static_cast<uint32_t>(rd(cb(kBank, kCbFsr)));

	check(fsr & kFsrTf, "FSR.TF");
	check(!(fsr & kFsrSs), "FSR.SS clear in terminate mode");
	check(rd(cb(kBank, kCbFar), 8) >> 12 == kHole >> 12, "FAR: the faulting page");
	uint32_t syn = static_cast<uint32_t>(rd(cb(kBank, kCbFsynr0)));

	check(syn & kFsynr0Wnr, "FSYNR0.WNR: a write");
	check(syn & kFsynr0Pnu, "FSYNR0.PNU: privileged");
	wr(cb(kBank, kCbFsr), fsr);
	check(rd(cb(kBank, kCbFsr)) == 0, "FSR cleared by writing its bits back");
}

/* The device thread issues one access when told, from an SC_THREAD. */
void Bench::device_thread()
{
	for (;;) {
		wait(dev_go_);
		dev_status_ = device(dev_write_ ? tlm::TLM_WRITE_COMMAND :
				     tlm::TLM_READ_COMMAND, dev_addr_, dev_buf_,
				     sizeof(dev_buf_), dev_ext_);
		dev_end_ = sc_time_stamp();
		dev_done_.notify(SC_ZERO_TIME);
	}
}

/* Stall mode (SCTLR.CFCFG = 1): the faulting read is held until RESUME.
 * Retry after mapping the page: the data of the new PA arrives, no
 * earlier than the RESUME write. Terminate: address error. */
void Bench::test_stall()
{
	wr(cb(kBank, kCbSctlr), kSctlrM | kSctlrCfre | kSctlrCfie | kSctlrCfcfg);
	for (unsigned i = 0; i < sizeof(dev_buf_); i++)
		host(kHolePa, 4096)[0x200 + i] = static_cast<uint8_t>(0x5a ^ i);

	size_t rises = ctx_.rises.size();

	start_device(false, kHole + 0x200, sc_time(2, SC_US));
	check(dev_status_ == tlm::TLM_INCOMPLETE_RESPONSE,
	      "stalled read: b_transport has not returned");
	check(ctx_.rises.size() == rises + 1, "stall raised the context interrupt");
	uint32_t fsr = static_cast<uint32_t>(rd(cb(kBank, kCbFsr)));

	check((fsr & (kFsrSs | kFsrTf)) == (kFsrSs | kFsrTf), "FSR.SS and FSR.TF");
	check(rd(cb(kBank, kCbFar), 8) >> 12 == kHole >> 12, "FAR: the stalled page");

	/* Software fixes the fault, clears FSR, retries. */
	check(iopt_pgtable_map_pages(pt_, kHole, kHolePa, 4096, 1, IOPT_READ | IOPT_WRITE,
				     nullptr) == 0, "hole mapped");
	wr(cb(kBank, kCbFsr), fsr & ~kFsrSs);
	sc_time resume_at = sc_time_stamp();

	wr(cb(kBank, kCbResume), 0);		/* retry */
	wait_device();
	check(dev_status_ == tlm::TLM_OK_RESPONSE && dev_ext_.fault == 0,
	      "RESUME retry: OK");
	check(dev_ext_.oa == kHolePa + 0x200, "retried: output address = the new PA");
	bool same = true;

	for (unsigned i = 0; i < sizeof(dev_buf_); i++)
		same = same && dev_buf_[i] == static_cast<uint8_t>(0x5a ^ i);
	check(same, "retried read returned the new PA's bytes");
	check(dev_end_ >= resume_at + kMemLat, "completed after RESUME + memory latency");
	check(!(rd(cb(kBank, kCbFsr)) & kFsrSs), "FSR.SS clear after RESUME");

	/* Another stall, terminated. */
	wr(cb(kBank, kCbFsr), 0xffffffffu);
	start_device(true, kHole + 0x100000, sc_time(2, SC_US));
	check(dev_status_ == tlm::TLM_INCOMPLETE_RESPONSE, "second stall: held");
	fsr = static_cast<uint32_t>(rd(cb(kBank, kCbFsr)));
	check(fsr & kFsrSs, "second stall: FSR.SS");
	wr(cb(kBank, kCbFsr), fsr & ~kFsrSs);
	wr(cb(kBank, kCbResume), kResumeTerminate);
	wait_device();
	check(dev_status_ == tlm::TLM_ADDRESS_ERROR_RESPONSE &&
	      dev_ext_.fault == IOPT_SMMUV2_ABORT,
	      "RESUME terminate: address error, fault = ABORT");
}

/* A read from an SC_METHOD: a stall cannot be waited for there. */
void Bench::method_access()
{
	tlm::tlm_generic_payload gp;
	sc_time d = SC_ZERO_TIME;
	uint8_t buf[8];
	iopt::SmmuTxn ext(kSid, true);

	tb::prepare(gp, tlm::TLM_READ_COMMAND, kHole + 0x2000, buf, sizeof(buf));
	gp.set_extension(&ext);
	dev->b_transport(gp, d);
	gp.clear_extension(&ext);
	meth_status_ = gp.get_response_status();
}

/* A stall from an SC_METHOD (error reported, not thrown here): generic
 * error, and its later outcome must not be handed to the thread whose
 * read was held behind it on the same bank. */
void Bench::test_stall_method()
{
	sc_actions old = sc_report_handler::set_actions(SC_ERROR, SC_DISPLAY);

	wr(cb(kBank, kCbFsr), 0xffffffffu);
	meth_go_.notify(SC_ZERO_TIME);
	wait(sc_time(1, SC_US));
	check(meth_status_ == tlm::TLM_GENERIC_ERROR_RESPONSE,
	      "stall in an SC_METHOD: generic error");
	check(rd(cb(kBank, kCbFsr)) & kFsrSs, "the method's read stalled");
	for (unsigned i = 0; i < sizeof(dev_buf_); i++)
		host(kHolePa + 0x3000, 4096)[0x40 + i] = static_cast<uint8_t>(0xc3 ^ i);
	start_device(false, kHole + 0x3040, sc_time(1, SC_US));
	check(dev_status_ == tlm::TLM_INCOMPLETE_RESPONSE,
	      "thread's read held behind the stall");
	check(iopt_pgtable_map_pages(pt_, kHole + 0x2000, kHolePa + 0x2000, 4096, 2,
				     IOPT_READ | IOPT_WRITE, nullptr) == 0, "pages mapped");
	wr(cb(kBank, kCbResume), 0);
	wait_device();
	check(dev_status_ == tlm::TLM_OK_RESPONSE &&
	      dev_ext_.oa == kHolePa + 0x3040,
	      "the thread got its own outcome, not the method's");
	bool same = true;

	for (unsigned i = 0; i < sizeof(dev_buf_); i++)
		same = same && dev_buf_[i] == static_cast<uint8_t>(0xc3 ^ i);
	check(same, "and its own data");
	sc_report_handler::set_actions(SC_ERROR, old);
}

void Bench::main_thread()
{
	test_registers();
	setup_bank();
	if (pt_) {
		test_translate();
		test_fault();
		test_stall();
		test_stall_method();
		iopt_pgtable_free(pt_);
		finished = true;
	}
	sc_stop();
}

/* The platform: memory, the SMMUv2 (kBanks banks) and the bench. */
int run(iopt_physmem *pm)
{
	iopt_smmuv2_params p;

	if (iopt_smmuv2_preset("generic", &p))
		return 1;
	p.num_cb = kBanks;

	iopt::SmmuTiming t;

	t.clock_period = kPeriod;
	t.desc_cycles = 10;

	iopt::Memory mem("mem", pm, kMemBase, kMemSize, kMemLat);
	iopt::Smmuv2 smmu("smmu", p, t);
	Edges ctx("ctx_edges"), global("global_edges");
	Bench bench("bench", pm, smmu, ctx, global);
	sc_vector<sc_signal<bool>> lines("line", 1 + kBanks);

	bench.regs.bind(smmu.regs);
	bench.dev.bind(smmu.upstream);
	smmu.downstream.bind(mem.socket);
	smmu.walker.bind(mem.socket);
	smmu.global_irq.bind(lines[0]);
	for (unsigned n = 0; n < kBanks; n++)
		smmu.context_irq(n).bind(lines[1 + n]);
	ctx.in.bind(lines[1 + kBank]);
	global.in.bind(lines[0]);
	sc_start();
	return tb::result(bench.finished);
}

} // namespace

int sc_main(int, char *[])
{
	iopt_physmem *pm = nullptr;
	int rc = 1;

	if (!iopt_physmem_create(kMemBase, kMemSize, &pm)) {
		rc = run(pm);
		iopt_physmem_destroy(pm);
	}
	return rc;
}
