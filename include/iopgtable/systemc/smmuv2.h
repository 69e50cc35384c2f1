// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv2: the library's SMMUv2 model (<iopgtable/smmuv2.h>) as a
 * SystemC TLM-2.0 sc_module. Sockets, time, memory and interrupts are
 * those of iopt::SmmuBase (<iopgtable/systemc/smmu_base.h>); this class
 * binds them to iopt_smmuv2_*. C++ only. docs/integration.md describes
 * both.
 *
 * Register window: iopt_smmuv2_mmio_size() bytes (global pages, then one
 * page per context bank), offset 0 = GR0.
 * Wired interrupts: irq[0] the global fault interrupt (global_irq), and
 * irq[1 + n] the context interrupt of bank n (context_irq(n)), as
 * IOPT_SMMUV2_IRQ_GLOBAL / IOPT_SMMUV2_IRQ_CONTEXT(n); every one must be
 * bound.
 * Upstream: SmmuTxn's sid, priv and instr are used. SMMUv2 has no
 * SubstreamID and no ATS: a transaction with ssv or translated set is
 * refused with TLM_GENERIC_ERROR_RESPONSE (nothing reaches the model).
 * A terminated transaction (fault in terminate mode, or RESUME with
 * TERMINATE) answers TLM_ADDRESS_ERROR_RESPONSE with SmmuTxn::fault =
 * IOPT_SMMUV2_ABORT; the syndrome is in the bank's FSR/FAR/FSYNR0 (or
 * sGFSR for a global fault), read through the register socket.
 * Stall mode (SCTLR.CFCFG = 1): the b_transport waits until software
 * writes the bank's RESUME (see SmmuBase: call it from an SC_THREAD).
 *
 * Errors: the constructor throws std::invalid_argument when
 * iopt_smmuv2_create() rejects the parameters (-EINVAL), std::bad_alloc
 * when it runs out of memory, and std::system_error with the errno for
 * any other failure it reports.
 */
#ifndef IOPGTABLE_SYSTEMC_SMMUV2_H
#define IOPGTABLE_SYSTEMC_SMMUV2_H

#include <iopgtable/smmuv2.h>
#include <iopgtable/systemc/smmu_binding.h>

namespace iopt {

using Smmuv2Binding = SmmuBinding<iopt_smmuv2, iopt_smmuv2_mmio_read,
				  iopt_smmuv2_mmio_write, iopt_smmuv2_next_event,
				  iopt_smmuv2_run_until, iopt_smmuv2_destroy>;

class Smmuv2 : public Smmuv2Binding {
public:
	sc_core::sc_out<bool> &global_irq;

	Smmuv2(sc_core::sc_module_name name, const iopt_smmuv2_params &params,
	       const SmmuTiming &timing = SmmuTiming());

	/* Context interrupt of bank n (n < params.num_cb). */
	sc_core::sc_out<bool> &context_irq(unsigned n)
	{
		return irq[IOPT_SMMUV2_IRQ_CONTEXT(n)];
	}
	/* Size of the register window (iopt_smmuv2_mmio_size). */
	uint64_t reg_window() const;
	/* Counters of the C model (iopt_smmuv2_get_stats). */
	iopt_smmuv2_stats stats() const;

protected:
	int model_translate(const SmmuAccess &a, uint64_t cycle,
			    SmmuResult &r) override;
	int model_stalled(unsigned q, SmmuResult &r) override;
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_SMMUV2_H
