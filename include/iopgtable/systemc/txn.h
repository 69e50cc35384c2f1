// SPDX-License-Identifier: MIT
/*
 * iopt::SmmuTxn: the TLM-2.0 extension that carries what an SMMU needs to
 * know about a device transaction beyond address, command and data, and
 * what it answers about a fault. C++ only (SystemC >= 2.3, C++17).
 *
 * Attach one to every transaction sent to an SMMU's upstream socket
 * (gp.set_extension(&ext), and clear it before the payload is reused; or
 * use set_auto_extension with a memory-managed payload). A transaction
 * without it is refused with TLM_GENERIC_ERROR_RESPONSE: an SMMU cannot
 * translate traffic whose StreamID it does not know.
 *
 * Inputs (IHI0070 3.2 StreamID, 3.3 SubstreamID, 13.1 attributes):
 *   sid         StreamID of the requester
 *   ssv, ssid   SubstreamID valid, and its value (PASID)
 *   priv        privileged access (PnU = 1)
 *   instr       instruction fetch (InD = 1; reads only)
 *   translated  PCIe ATS Translated: the address is already physical
 * Outputs, written by the SMMU:
 *   fault       0, or what stopped the transaction: for SMMUv3 the
 *               event type (IOPT_SMMUV3_EVT_* in <iopgtable/smmuv3.h>), for
 *               SMMUv2 IOPT_SMMUV2_ABORT (<iopgtable/smmuv2.h>; the syndrome is
 *               in the FSR/FAR registers): the response status is then
 *               TLM_ADDRESS_ERROR_RESPONSE
 *   oa          output address of the first byte (valid when fault == 0)
 */
#ifndef IOPGTABLE_SYSTEMC_TXN_H
#define IOPGTABLE_SYSTEMC_TXN_H

#include <cstdint>

#include <tlm>

namespace iopt {

class SmmuTxn : public tlm::tlm_extension<SmmuTxn> {
public:
	uint32_t sid = 0;
	bool ssv = false;
	uint32_t ssid = 0;
	bool priv = false;
	bool instr = false;
	bool translated = false;

	unsigned fault = 0;
	uint64_t oa = 0;

	SmmuTxn() = default;
	explicit SmmuTxn(uint32_t stream, bool privileged = false)
		: sid(stream), priv(privileged) {}

	tlm::tlm_extension_base *clone() const override
	{
		return new SmmuTxn(*this);
	}
	void copy_from(const tlm::tlm_extension_base &other) override
	{
		*this = static_cast<const SmmuTxn &>(other);
	}
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_TXN_H
