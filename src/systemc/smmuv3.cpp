// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv3: binds SmmuBase's hooks to the C SMMUv3 model. Nothing
 * here decides SMMU behaviour; it converts between the adapter's types and
 * the C API's and routes the model's memory and interrupt callbacks back
 * into the base.
 */
#include <iopgtable/systemc/smmuv3.h>

namespace iopt {

Smmuv3::Smmuv3(sc_core::sc_module_name name, const iopt_smmuv3_params &params,
	       const SmmuTiming &timing)
	: Smmuv3Binding(name, timing, kRegWindow, 3),
	  evtq_irq(irq[IOPT_SMMUV3_IRQ_EVTQ]),
	  gerror_irq(irq[IOPT_SMMUV3_IRQ_GERROR]),
	  cmd_sync_irq(irq[IOPT_SMMUV3_IRQ_CMD_SYNC])
{
	iopt_smmu_mem mem = model_mem();

	throw_create_error(iopt_smmuv3_create(&params, &mem, model_irq,
					      static_cast<SmmuBase *>(this), &model_),
			   "iopt::Smmuv3: iopt_smmuv3_create");
}

iopt_smmuv3_stats Smmuv3::stats() const
{
	iopt_smmuv3_stats st;

	iopt_smmuv3_get_stats(model_, &st);
	return st;
}

int Smmuv3::model_translate(const SmmuAccess &a, uint64_t cycle, SmmuResult &r)
{
	iopt_smmuv3_txn t = common_txn<iopt_smmuv3_txn>(a);
	iopt_smmuv3_resp resp{};

	t.ssv = a.ssv;
	t.ssid = a.ssid;
	t.translated = a.translated;

	int rc = iopt_smmuv3_translate(model_, &t, cycle, &resp);

	r.fault = resp.fault;
	r.oa = resp.oa;
	r.ready = resp.ready;
	return rc;
}

} // namespace iopt
