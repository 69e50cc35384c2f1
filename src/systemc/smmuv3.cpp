// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv3: binds SmmuBase's hooks to the C SMMUv3 model. Nothing
 * here decides SMMU behaviour; it converts between the adapter's types and
 * the C API's and routes the model's memory and interrupt callbacks back
 * into the base.
 */
#include <iopgtable/systemc/smmuv3.h>

namespace iopt {

Smmuv3::Smmuv3(sc_core::sc_module_name name, const iopt_smmu_params &params,
	       const SmmuTiming &timing)
	: SmmuBase(name, timing, kRegWindow, 3),
	  evtq_irq(irq[IOPT_SMMU_IRQ_EVTQ]),
	  gerror_irq(irq[IOPT_SMMU_IRQ_GERROR]),
	  cmd_sync_irq(irq[IOPT_SMMU_IRQ_CMD_SYNC])
{
	iopt_smmu_mem mem = model_mem();

	throw_create_error(iopt_smmu_create(&params, &mem, model_irq,
					    static_cast<SmmuBase *>(this), &smmu_),
			   "iopt::Smmuv3: iopt_smmu_create");
}

Smmuv3::~Smmuv3()
{
	iopt_smmu_destroy(smmu_);
}

iopt_smmu_stats Smmuv3::stats() const
{
	iopt_smmu_stats st;

	iopt_smmu_get_stats(smmu_, &st);
	return st;
}

int Smmuv3::model_read(uint64_t off, unsigned size, uint64_t *val,
		       uint64_t cycle)
{
	return iopt_smmu_mmio_read(smmu_, off, size, val, cycle);
}

int Smmuv3::model_write(uint64_t off, unsigned size, uint64_t val,
			uint64_t cycle)
{
	return iopt_smmu_mmio_write(smmu_, off, size, val, cycle);
}

int Smmuv3::model_translate(const SmmuAccess &a, uint64_t cycle, SmmuResult &r)
{
	iopt_smmu_txn t{};
	iopt_smmu_resp resp{};

	t.sid = a.sid;
	t.ssv = a.ssv;
	t.ssid = a.ssid;
	t.addr = a.addr;
	t.write = a.write;
	t.exec = a.instr;
	t.priv = a.priv;
	t.translated = a.translated;

	int rc = iopt_smmu_translate(smmu_, &t, cycle, &resp);

	r.fault = resp.fault;
	r.oa = resp.oa;
	r.ready = resp.ready;
	return rc;
}

uint64_t Smmuv3::model_next_event()
{
	return iopt_smmu_next_event(smmu_);
}

void Smmuv3::model_run_until(uint64_t cycle)
{
	iopt_smmu_run_until(smmu_, cycle);
}

} // namespace iopt
