// SPDX-License-Identifier: MIT
/*
 * iopt::Memory: a TLM-2.0 target over a struct iopt_physmem, with DMI per
 * backing frame.
 */
#include <cstring>

#include <iopgtable/systemc/memory.h>

using namespace sc_core;

namespace iopt {

Memory::Memory(sc_module_name name, iopt_physmem *pm, uint64_t base,
	       uint64_t size, const sc_time &latency)
	: sc_module(name), socket("socket"), pm_(pm), base_(base), size_(size),
	  latency_(latency)
{
	socket.register_b_transport(this, &Memory::b_transport);
	socket.register_get_direct_mem_ptr(this, &Memory::get_dmi);
	socket.register_transport_dbg(this, &Memory::dbg);
}

/* Copy the payload's bytes frame by frame; nothing is touched unless the
 * whole range is inside the window. */
tlm::tlm_response_status Memory::access(tlm::tlm_generic_payload &gp)
{
	uint64_t a = gp.get_address();
	unsigned len = gp.get_data_length();
	unsigned char *d = gp.get_data_ptr();
	const unsigned char *be = gp.get_byte_enable_ptr();
	unsigned be_len = gp.get_byte_enable_length();
	tlm::tlm_command cmd = gp.get_command();

	unsigned sw = gp.get_streaming_width();
	unsigned span = sw < len ? sw : len;	/* bytes of address touched */

	if (!sw)
		return tlm::TLM_BURST_ERROR_RESPONSE;
	if (a < base_ || span > size_ || a - base_ > size_ - span)
		return tlm::TLM_ADDRESS_ERROR_RESPONSE;
	if (be && !be_len)
		return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
	if (cmd == tlm::TLM_IGNORE_COMMAND)
		return tlm::TLM_OK_RESPONSE;
	if (sw < len) {
		/* Streaming: byte i at a + i % sw (a FIFO-like window). */
		for (unsigned i = 0; i < len; i++) {
			unsigned char *p = static_cast<unsigned char *>(
				iopt_physmem_ptr(pm_, a + i % sw, 1));

			if (!p)
				return tlm::TLM_ADDRESS_ERROR_RESPONSE;
			if (be && be[i % be_len] != TLM_BYTE_ENABLED)
				continue;
			if (cmd == tlm::TLM_READ_COMMAND)
				d[i] = *p;
			else
				*p = d[i];
		}
		return tlm::TLM_OK_RESPONSE;
	}
	for (unsigned off = 0; off < len;) {
		uint64_t pa = a + off;
		unsigned n = static_cast<unsigned>(IOPT_PHYSMEM_FRAME -
						   pa % IOPT_PHYSMEM_FRAME);

		if (n > len - off)
			n = len - off;

		unsigned char *p = static_cast<unsigned char *>(
			iopt_physmem_ptr(pm_, pa, n));

		if (!p)
			return tlm::TLM_ADDRESS_ERROR_RESPONSE;
		for (unsigned i = 0; i < n; i++) {
			if (be && be[(off + i) % be_len] != TLM_BYTE_ENABLED)
				continue;
			if (cmd == tlm::TLM_READ_COMMAND)
				d[off + i] = p[i];
			else
				p[i] = d[off + i];
		}
		off += n;
	}
	return tlm::TLM_OK_RESPONSE;
}

void Memory::b_transport(int, tlm::tlm_generic_payload &gp, sc_time &delay)
{
	tlm::tlm_response_status st = access(gp);

	if (st == tlm::TLM_OK_RESPONSE) {
		delay += latency_;
		gp.set_dmi_allowed(true);
	}
	gp.set_response_status(st);
}

bool Memory::get_dmi(int, tlm::tlm_generic_payload &gp, tlm::tlm_dmi &dmi)
{
	uint64_t a = gp.get_address();

	if (a < base_ || a - base_ >= size_)
		return false;

	uint64_t start = a - a % IOPT_PHYSMEM_FRAME;
	unsigned char *p = static_cast<unsigned char *>(
		iopt_physmem_ptr(pm_, start, IOPT_PHYSMEM_FRAME));

	if (!p)
		return false;
	dmi.set_dmi_ptr(p);
	dmi.set_start_address(start);
	dmi.set_end_address(start + IOPT_PHYSMEM_FRAME - 1);
	dmi.allow_read_write();
	dmi.set_read_latency(latency_);
	dmi.set_write_latency(latency_);
	return true;
}

unsigned Memory::dbg(int, tlm::tlm_generic_payload &gp)
{
	return access(gp) == tlm::TLM_OK_RESPONSE ? gp.get_data_length() : 0;
}

} // namespace iopt
