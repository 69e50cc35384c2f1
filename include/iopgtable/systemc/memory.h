// SPDX-License-Identifier: MIT
/*
 * iopt::Memory: a TLM-2.0 memory target over a simulated physical memory
 * (struct iopt_physmem, <iopgtable/physmem.h>), so that page tables the
 * library builds with iopt_physmem_mem_ops() and the data a platform moves
 * are the same bytes. C++ only.
 *
 * socket: a multi-passthrough target: bind any number of initiators
 * (CPU, an SMMU's downstream and walker sockets, DMA engines).
 *   b_transport: read/write with byte enables and streaming width; each
 *     access adds `latency` to the delay. Errors: an address outside the
 *     window TLM_ADDRESS_ERROR_RESPONSE; streaming width 0
 *     TLM_BURST_ERROR_RESPONSE; nothing is accessed on error (a streaming
 *     access checks its window first).
 *   DMI: granted per 2 MiB frame (IOPT_PHYSMEM_FRAME), read/write,
 *     latency `latency`; never invalidated (frames never move).
 *   transport_dbg: reads and writes without time.
 * It never calls wait(), so it may sit on an SMMU's walker socket.
 *
 * The physmem is the caller's and must outlive the module.
 */
#ifndef IOPGTABLE_SYSTEMC_MEMORY_H
#define IOPGTABLE_SYSTEMC_MEMORY_H

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <iopgtable/physmem.h>

namespace iopt {

class Memory : public sc_core::sc_module {
public:
	tlm_utils::multi_passthrough_target_socket<Memory> socket;

	Memory(sc_core::sc_module_name name, iopt_physmem *pm, uint64_t base,
	       uint64_t size, const sc_core::sc_time &latency);

	iopt_physmem *physmem() const { return pm_; }

private:
	void b_transport(int id, tlm::tlm_generic_payload &gp,
			 sc_core::sc_time &delay);
	bool get_dmi(int id, tlm::tlm_generic_payload &gp, tlm::tlm_dmi &dmi);
	unsigned dbg(int id, tlm::tlm_generic_payload &gp);
	tlm::tlm_response_status access(tlm::tlm_generic_payload &gp);

	iopt_physmem *pm_;
	uint64_t base_, size_;
	sc_core::sc_time latency_;
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_MEMORY_H
