// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv3: the library's SMMUv3 model (<iopgtable/smmuv3.h>) as a SystemC
 * TLM-2.0 sc_module. Sockets, time and interrupts are those of iopt::SmmuBase
 * (<iopgtable/systemc/smmu_base.h>); this class binds them to iopt_smmuv3_*
 * (through iopt::SmmuBinding). C++ only. docs/integration.md describes both.
 *
 * Register window: 0x20000 bytes (page 0 at 0, page 1 at 0x10000). Wired
 * interrupts: evtq_irq, gerror_irq, cmd_sync_irq (irq[0..2], in the order of
 * IOPT_SMMUV3_IRQ_*); every one must be bound.
 *
 * Errors: the constructor throws std::invalid_argument when
 * iopt_smmuv3_create() rejects the parameters (-EINVAL), std::bad_alloc when it
 * runs out of memory, and std::system_error with the errno for any other
 * failure it reports.
 */
#ifndef IOPGTABLE_SYSTEMC_SMMUV3_H
#define IOPGTABLE_SYSTEMC_SMMUV3_H

#include <iopgtable/smmuv3.h>
#include <iopgtable/systemc/smmu_binding.h>

namespace iopt {

using Smmuv3Binding = SmmuBinding<iopt_smmuv3, iopt_smmuv3_mmio_read,
				  iopt_smmuv3_mmio_write, iopt_smmuv3_next_event,
				  iopt_smmuv3_run_until, iopt_smmuv3_destroy>;

class Smmuv3 : public Smmuv3Binding {
public:
	static constexpr uint64_t kRegWindow = 0x20000;

	sc_core::sc_out<bool> &evtq_irq;
	sc_core::sc_out<bool> &gerror_irq;
	sc_core::sc_out<bool> &cmd_sync_irq;

	Smmuv3(sc_core::sc_module_name name, const iopt_smmuv3_params &params,
	       const SmmuTiming &timing = SmmuTiming());

	/* Counters of the C model (iopt_smmuv3_get_stats). */
	iopt_smmuv3_stats stats() const;

protected:
	int model_translate(const SmmuAccess &a, uint64_t cycle,
			    SmmuResult &r) override;
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_SMMUV3_H
