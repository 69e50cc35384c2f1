// SPDX-License-Identifier: MIT
/*
 * iopt::SmmuBinding: the part of a model binding that is the same for
 * every C SMMU model of this library: the model handle, its destruction,
 * and the register, next-event and run-until hooks, each a direct call of
 * the C function given as a template argument. A model's sc_module
 * (iopt::Smmuv3, iopt::Smmuv2) derives from it and adds only what differs
 * between the C APIs: creation, translation (and stall collection).
 * C++ only; see <iopgtable/systemc/smmu_base.h> for the hooks' contract.
 *
 * Concurrency: as SmmuBase (one simulation's SystemC processes).
 */
#ifndef IOPGTABLE_SYSTEMC_SMMU_BINDING_H
#define IOPGTABLE_SYSTEMC_SMMU_BINDING_H

#include <cstdint>

#include <iopgtable/systemc/smmu_base.h>

namespace iopt {

template <typename Model,
	  int (*Read)(Model *, uint64_t, unsigned, uint64_t *, uint64_t),
	  int (*Write)(Model *, uint64_t, unsigned, uint64_t, uint64_t),
	  uint64_t (*NextEvent)(Model *),
	  int (*RunUntil)(Model *, uint64_t),
	  void (*Destroy)(Model *)>
class SmmuBinding : public SmmuBase {
protected:
	using SmmuBase::SmmuBase;
	~SmmuBinding() override
	{
		if (model_)
			Destroy(model_);
	}

	int model_read(uint64_t off, unsigned size, uint64_t *val,
		       uint64_t cycle) override
	{
		return Read(model_, off, size, val, cycle);
	}
	int model_write(uint64_t off, unsigned size, uint64_t val,
			uint64_t cycle) override
	{
		return Write(model_, off, size, val, cycle);
	}
	uint64_t model_next_event() override { return NextEvent(model_); }
	/* The adapter never goes back in time (enter_cycle), so the C
	 * model's only error (-EINVAL: a cycle before its time) cannot
	 * occur; the result is not needed. */
	void model_run_until(uint64_t cycle) override
	{
		(void)RunUntil(model_, cycle);
	}

	/* The fields every C model's transaction shares (sid, addr, write,
	 * exec, priv), from the adapter's access. */
	template <typename Txn>
	static Txn common_txn(const SmmuAccess &a)
	{
		Txn t{};

		t.sid = a.sid;
		t.addr = a.addr;
		t.write = a.write;
		t.exec = a.instr;
		t.priv = a.priv;
		return t;
	}

	Model *model_ = nullptr;	/* set by the derived constructor */
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_SMMU_BINDING_H
