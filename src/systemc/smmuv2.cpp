// SPDX-License-Identifier: MIT
/*
 * iopt::Smmuv2: binds SmmuBase's hooks to the C SMMUv2 model. Nothing here
 * decides SMMU behaviour: it converts between the adapter's types and
 * iopt_smmuv2_*'s; memory and interrupt callbacks are SmmuBase's.
 */
#include <cerrno>

#include <iopgtable/systemc/smmuv2.h>

namespace iopt {

namespace {

/* Lines to allocate before the model validates num_cb: a count the model
 * will reject anyway gets only the global line (nothing huge allocated
 * for a parameter that is about to be refused). */
unsigned irq_lines(const iopt_smmuv2_params &p)
{
	return p.num_cb <= 256 ? IOPT_SMMUV2_IRQ_CONTEXT(p.num_cb) : 1u;
}

/* The adapter's view of a model response. */
void to_result(const iopt_smmuv2_resp &resp, SmmuResult &r)
{
	r.stalled = resp.result == IOPT_SMMUV2_STALLED;
	r.stall_queue = resp.cb;
	r.fault = resp.result == IOPT_SMMUV2_ABORT ? IOPT_SMMUV2_ABORT : 0;
	r.oa = resp.oa;
	r.ready = resp.ready;
}

} // namespace

Smmuv2::Smmuv2(sc_core::sc_module_name name, const iopt_smmuv2_params &params,
	       const SmmuTiming &timing)
	: Smmuv2Binding(name, timing, 0, irq_lines(params)),
	  global_irq(irq[IOPT_SMMUV2_IRQ_GLOBAL])
{
	iopt_smmu_mem mem = model_mem();

	throw_create_error(iopt_smmuv2_create(&params, &mem, model_irq,
					      static_cast<SmmuBase *>(this),
					      &model_),
			   "iopt::Smmuv2: iopt_smmuv2_create");
	set_reg_window(iopt_smmuv2_mmio_size(model_));
}

uint64_t Smmuv2::reg_window() const
{
	return iopt_smmuv2_mmio_size(model_);
}

iopt_smmuv2_stats Smmuv2::stats() const
{
	iopt_smmuv2_stats st;

	iopt_smmuv2_get_stats(model_, &st);
	return st;
}

int Smmuv2::model_translate(const SmmuAccess &a, uint64_t cycle, SmmuResult &r)
{
	/* No SubstreamID or ATS in SMMUv2: refused (header). */
	if (a.ssv || a.translated)
		return -EINVAL;

	iopt_smmuv2_txn t = common_txn<iopt_smmuv2_txn>(a);
	iopt_smmuv2_resp resp{};

	int rc = iopt_smmuv2_translate(model_, &t, cycle, &resp);

	if (!rc)
		to_result(resp, r);
	return rc;
}

int Smmuv2::model_stalled(unsigned q, SmmuResult &r)
{
	iopt_smmuv2_resp resp{};
	int rc = iopt_smmuv2_stalled(model_, q, &resp);

	if (!rc)
		to_result(resp, r);
	return rc;
}

} // namespace iopt
