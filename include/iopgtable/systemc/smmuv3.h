// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv3: the library's SMMUv3 model (<iopgtable/smmu.h>) as a
 * SystemC TLM-2.0 sc_module. Sockets, time and interrupts are those of
 * iopt::SmmuBase (<iopgtable/systemc/smmu_base.h>); this class binds them
 * to iopt_smmu_* (through iopt::SmmuBinding). C++ only. docs/integration.md describes both.
 *
 * Register window: 0x20000 bytes (page 0 at 0, page 1 at 0x10000).
 * Wired interrupts: evtq_irq, gerror_irq, cmd_sync_irq (irq[0..2], in the
 * order of IOPT_SMMU_IRQ_*); every one must be bound.
 *
 * Errors: the constructor throws std::invalid_argument when
 * iopt_smmu_create() rejects the parameters (-EINVAL), std::bad_alloc
 * when it runs out of memory, and std::system_error with the errno for
 * any other failure it reports.
 */
#ifndef IOPGTABLE_SYSTEMC_SMMUV3_H
#define IOPGTABLE_SYSTEMC_SMMUV3_H

#include <iopgtable/smmu.h>
#include <iopgtable/systemc/smmu_binding.h>

namespace iopt {

using Smmuv3Binding = SmmuBinding<iopt_smmu, iopt_smmu_mmio_read,
				  iopt_smmu_mmio_write, iopt_smmu_next_event,
				  iopt_smmu_run_until, iopt_smmu_destroy>;

class Smmuv3 : public Smmuv3Binding {
public:
	static constexpr uint64_t kRegWindow = 0x20000;

	sc_core::sc_out<bool> &evtq_irq;
	sc_core::sc_out<bool> &gerror_irq;
	sc_core::sc_out<bool> &cmd_sync_irq;

	Smmuv3(sc_core::sc_module_name name, const iopt_smmu_params &params,
	       const SmmuTiming &timing = SmmuTiming());

	/* Counters of the C model (iopt_smmu_get_stats). */
	iopt_smmu_stats stats() const;

protected:
	int model_translate(const SmmuAccess &a, uint64_t cycle,
			    SmmuResult &r) override;
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_SMMUV3_H
