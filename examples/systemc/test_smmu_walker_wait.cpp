// SPDX-License-Identifier: MIT
/*
 * A target on the walker socket that calls wait() breaks the adapter's
 * rule (the C model holds its lock during the access). Check that the
 * adapter turns the resulting re-entry into a report, not a deadlock:
 * process A's table walk waits inside the memory; process B then reads a
 * register; the adapter must refuse B with SC_REPORT_FATAL (made to
 * throw here) before it reaches the model's lock.
 * Exit status 0 when the report came, 1 otherwise.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/systemc/smmuv3.h>

using namespace sc_core;

namespace {

constexpr uint64_t kMemBase = 0x80000000, kMemSize = 2ull << 20;
constexpr uint64_t kStrtab = kMemBase;

/* A memory that waits 1 ns in every access: not allowed on a walker. */
class SlowMemory : public sc_module {
public:
	tlm_utils::simple_target_socket<SlowMemory> socket;
	iopt_physmem *pm;

	SlowMemory(sc_module_name n, iopt_physmem *p)
		: sc_module(n), socket("socket"), pm(p)
	{
		socket.register_b_transport(this, &SlowMemory::b_transport);
	}

private:
	void b_transport(tlm::tlm_generic_payload &gp, sc_time &)
	{
		wait(1, SC_NS);
		void *h = iopt_physmem_ptr(pm, gp.get_address(), gp.get_data_length());

		if (!h) {
			gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
			return;
		}
		if (gp.is_read())
			std::memcpy(gp.get_data_ptr(), h, gp.get_data_length());
		else
			std::memcpy(h, gp.get_data_ptr(), gp.get_data_length());
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
	}
};

class Bench : public sc_module {
public:
	tlm_utils::simple_initiator_socket<Bench> regs, dev;
	tlm_utils::simple_target_socket<Bench> down;

	SC_HAS_PROCESS(Bench);
	explicit Bench(sc_module_name n)
		: sc_module(n), regs("regs"), dev("dev"), down("down")
	{
		down.register_b_transport(this, &Bench::down_b_transport);
		SC_THREAD(a);
		SC_THREAD(b);
	}

private:
	sc_event started_;

	void down_b_transport(tlm::tlm_generic_payload &gp, sc_time &)
	{
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
	}
	static void prepare(tlm::tlm_generic_payload &gp, tlm::tlm_command c,
			    uint64_t a, void *buf, unsigned len)
	{
		gp.set_command(c);
		gp.set_address(a);
		gp.set_data_ptr(static_cast<unsigned char *>(buf));
		gp.set_data_length(len);
		gp.set_streaming_width(len);
	}
	void reg_write(uint64_t off, uint64_t v, unsigned len)
	{
		tlm::tlm_generic_payload gp;
		sc_time d = SC_ZERO_TIME;

		prepare(gp, tlm::TLM_WRITE_COMMAND, off, &v, len);
		regs->b_transport(gp, d);
	}
	void a()
	{
		reg_write(0x80, kStrtab, 8);		/* STRTAB_BASE */
		reg_write(0x88, 2, 4);			/* STRTAB_BASE_CFG: 4 STEs */
		reg_write(0x20, 1, 4);			/* CR0.SMMUEN */
		started_.notify(SC_ZERO_TIME);

		/* The STE fetch reaches SlowMemory, which waits. */
		tlm::tlm_generic_payload gp;
		iopt::SmmuTxn ext(0);
		uint32_t v = 0;
		sc_time d = SC_ZERO_TIME;

		prepare(gp, tlm::TLM_READ_COMMAND, 0x1000, &v, 4);
		gp.set_extension(&ext);
		dev->b_transport(gp, d);
		gp.clear_extension(&ext);
	}
	void b()
	{
		wait(started_);
		wait(SC_ZERO_TIME);	/* A is now inside the model, waiting */

		tlm::tlm_generic_payload gp;
		uint32_t v = 0;
		sc_time d = SC_ZERO_TIME;

		prepare(gp, tlm::TLM_READ_COMMAND, 0, &v, 4);
		regs->b_transport(gp, d);
		std::printf("FAIL: the register read entered the model\n");
		std::fflush(stdout);
		std::_Exit(1);
	}
};

} // namespace

int sc_main(int, char *[])
{
	iopt_physmem *pm = nullptr;

	if (iopt_physmem_create(kMemBase, kMemSize, &pm))
		return 1;
	sc_report_handler::set_actions(SC_FATAL, SC_DISPLAY | SC_THROW);
	sc_report_handler::set_actions(SC_WARNING, SC_DO_NOTHING);

	iopt_smmuv3_params p;

	iopt_smmuv3_default_params(&p);

	/* Never destroyed: process A stays suspended inside the model. */
	auto *mem = new SlowMemory("mem", pm);
	auto *smmu = new iopt::Smmuv3("smmu", p);
	auto *bench = new Bench("bench");
	auto *s0 = new sc_signal<bool>("s0");
	auto *s1 = new sc_signal<bool>("s1");
	auto *s2 = new sc_signal<bool>("s2");

	bench->regs.bind(smmu->regs);
	bench->dev.bind(smmu->upstream);
	smmu->downstream.bind(bench->down);
	smmu->walker.bind(mem->socket);
	smmu->evtq_irq.bind(*s0);
	smmu->gerror_irq.bind(*s1);
	smmu->cmd_sync_irq.bind(*s2);
	try {
		sc_start(sc_time(1, SC_US));
	} catch (const sc_report &r) {
		bool ok = r.get_severity() == SC_FATAL &&
			  std::strstr(r.get_msg(), "walker socket called wait()");

		std::printf("%s: re-entry refused with a fatal report\n",
			    ok ? "ok" : "FAIL");
		std::fflush(stdout);
		std::_Exit(ok ? 0 : 1);
	}
	std::printf("FAIL: no report\n");
	std::fflush(stdout);
	std::_Exit(1);
}
