// SPDX-License-Identifier: MIT
/*
 * iopt::SmmuBase: the SystemC TLM-2.0 glue every SMMU model of this
 * library shares (C++ only, SystemC 2.3.x, C++17). A model's sc_module
 * (iopt::Smmuv3 in <iopgtable/systemc/smmuv3.h>, iopt::Smmuv2 in
 * <iopgtable/systemc/smmuv2.h>) derives from it and binds the model_*
 * hooks to its C API; sockets, time, memory, stalls and interrupts live
 * here. docs/integration.md is the full description.
 *
 * Sockets (all 64-bit buses, loosely timed, b_transport):
 *   regs        target: the register file at offsets 0 .. reg_window-1.
 *               4- or 8-byte accesses, naturally aligned, no byte enables,
 *               streaming width = length. Errors (nothing is accessed):
 *                 byte enables present        TLM_BYTE_ENABLE_ERROR_RESPONSE
 *                 length not 4/8, or streaming width != length
 *                                             TLM_BURST_ERROR_RESPONSE
 *                 offset outside the window, or not aligned to the length
 *                                             TLM_ADDRESS_ERROR_RESPONSE
 *               Unknown registers inside the window follow the model
 *               (SMMUv3: RAZ/WI). TLM_IGNORE_COMMAND: OK, no effect.
 *               transport_dbg: reads only, without advancing the model.
 *   upstream    target: device traffic, each transaction carrying an
 *               iopt::SmmuTxn extension (<iopgtable/systemc/txn.h>).
 *               Translated page by page (4 KiB, the smallest granule) and
 *               forwarded on downstream at the output address. A fault:
 *               TLM_ADDRESS_ERROR_RESPONSE, SmmuTxn::fault = the model's
 *               fault code (SMMUv3: the event type, the event recorded
 *               as its configuration says; SMMUv2: IOPT_SMMUV2_ABORT); earlier pages of a split transaction have been
 *               performed. No extension: TLM_GENERIC_ERROR_RESPONSE.
 *               Byte enables or streaming width < length on a transaction
 *               that crosses a 4 KiB boundary: TLM_BYTE_ENABLE_ERROR /
 *               TLM_BURST_ERROR_RESPONSE (inside one page they pass
 *               through). A downstream error response is returned as is.
 *               No DMI (every access must be translated and timed);
 *               transport_dbg returns 0 (the C API has no translation
 *               without side effects).
 *   downstream  initiator: translated device traffic to the interconnect.
 *   walker      initiator: the model's own accesses (stream table, CDs,
 *               translation tables, command queue reads, event records,
 *               MSIs). Uses DMI where the target grants it. Targets bound
 *               here must not call wait() (the C model holds its lock
 *               during the access) nor throw (the exception would unwind
 *               through C frames): a wait is reported (SC_REPORT_WARNING),
 *               and a process entering the model meanwhile is
 *               SC_REPORT_FATAL rather than a deadlock.
 *
 * Time: cycle n is the time n * clock_period. A request at local time t
 * (sc_time_stamp() + delay) enters the model at cycle max(ceil(t /
 * period), the latest cycle the model has seen): the model is never asked
 * to go back in time. The annotated delay on return is (response cycle *
 * period) - sc_time_stamp(), so it includes the model's latency (TLB hit,
 * walk, queueing) and any wait for a cycle another initiator already
 * reached. Register accesses take reg_cycles. Internal events (command
 * completion, sync, MSIs) run from an SC_THREAD woken at the model's next
 * event time, re-armed after every register write.
 *
 * Stalls: a model whose translate hook answers `stalled` (SMMUv2 with
 * SCTLR.CFCFG = 1) holds the transaction until software resumes it. The
 * upstream b_transport then synchronises (wait(delay)), queues itself on
 * the result's stall_queue and waits on its own sc_event; after every
 * register write and every event-thread step the adapter collects the
 * model's completed stalled transactions (model_stalled hook) in order,
 * hands each to the oldest waiter of that queue and notifies it. The
 * transaction then continues as if it had not stalled (annotated delay up
 * to the ready cycle the model gives), or ends with
 * TLM_ADDRESS_ERROR_RESPONSE when terminated. Upstream initiators of a
 * model that can stall must therefore call b_transport from an SC_THREAD
 * (TLM-2.0 allows b_transport to wait); from an SC_METHOD a stall is
 * SC_REPORT_ERROR (it cannot be waited for there; if the error is set
 * not to throw, the transaction answers TLM_GENERIC_ERROR_RESPONSE and
 * its later outcome is discarded, so the bank's other waiters still get
 * their own).
 *
 * Interrupts: irq[i] (sc_out<bool>, every one must be bound) pulses high
 * for one clock period at the cycle the model signals line i (IHI0070
 * 3.18.2: wired interrupts are pulses, effectively edge-triggered); a
 * signal while the line is high is coalesced into that pulse (3.18
 * permits coalescing). MSIs are 32-bit writes on the walker socket.
 *
 * Concurrency: a SystemC module; call it from SystemC processes of one
 * simulation only.
 */
#ifndef IOPGTABLE_SYSTEMC_SMMU_BASE_H
#define IOPGTABLE_SYSTEMC_SMMU_BASE_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <iopgtable/smmu_common.h>
#include <iopgtable/systemc/txn.h>

namespace iopt {

/* Adapter timing. */
struct SmmuTiming {
	sc_core::sc_time clock_period{1, sc_core::SC_NS};
	unsigned reg_cycles = 1;	/* one register access */
	/* Cycles per descriptor load/update and added to each structure
	 * read (the model's desc_latency): the C API reports no latency for
	 * descriptor accesses, so a target's annotation cannot reach it. */
	unsigned desc_cycles = 100;
};

/* A device access as the model binding receives it (model-neutral). */
struct SmmuAccess {
	uint32_t sid = 0;
	bool ssv = false;
	uint32_t ssid = 0;
	uint64_t addr = 0;
	bool write = false, instr = false, priv = false, translated = false;
};

/* The model's answer: fault (0 or the model's fault code), output
 * address, and the cycle the response is ready; or stalled, held in the
 * model's queue stall_queue until model_stalled() returns it. */
struct SmmuResult {
	unsigned fault = 0;
	uint64_t oa = 0;
	uint64_t ready = 0;
	bool stalled = false;
	unsigned stall_queue = 0;
};

class SmmuBase : public sc_core::sc_module {
public:
	tlm_utils::simple_target_socket<SmmuBase> regs;
	tlm_utils::simple_target_socket<SmmuBase> upstream;
	tlm_utils::simple_initiator_socket<SmmuBase> downstream;
	tlm_utils::simple_initiator_socket<SmmuBase> walker;
	sc_core::sc_vector<sc_core::sc_out<bool>> irq;

	static constexpr uint64_t kPage = 4096;	/* split granule */

	const SmmuTiming &timing() const { return timing_; }
	/* Cycle at or after t (ceil), and the time of a cycle. */
	uint64_t cycle_at(const sc_core::sc_time &t) const;
	sc_core::sc_time time_of(uint64_t cycle) const;
	/* The latest cycle the model has been given. */
	uint64_t model_cycle() const { return last_cycle_; }

	SC_HAS_PROCESS(SmmuBase);

protected:
	SmmuBase(sc_core::sc_module_name name, const SmmuTiming &timing,
		 uint64_t reg_window, unsigned nr_irqs);
	~SmmuBase() override;

	/* The register window, for a model whose size is known only once
	 * it is created (call from the derived constructor). */
	void set_reg_window(uint64_t size) { reg_window_ = size; }
	/* Memory callbacks for the C model: every one routes to this
	 * module's mem_* below; desc_latency = timing().desc_cycles. */
	iopt_smmu_mem model_mem();
	/* The C model's irq callback: ctx is the SmmuBase (raise_irq). */
	static void model_irq(void *ctx, unsigned line, uint64_t cycle);
	/* Throw for a failed iopt_*_create(): std::invalid_argument for
	 * -EINVAL, std::bad_alloc for -ENOMEM, std::system_error otherwise. */
	static void throw_create_error(int rc, const char *what);

	/* The model binding. Each is called with the cycle the adapter
	 * chose (never smaller than an earlier one). Register hooks return
	 * 0 or a negative errno. */
	virtual int model_read(uint64_t off, unsigned size, uint64_t *val,
			       uint64_t cycle) = 0;
	virtual int model_write(uint64_t off, unsigned size, uint64_t val,
				uint64_t cycle) = 0;
	virtual int model_translate(const SmmuAccess &a, uint64_t cycle,
				    SmmuResult &r) = 0;
	virtual uint64_t model_next_event() = 0;	/* UINT64_MAX: none */
	virtual void model_run_until(uint64_t cycle) = 0;
	/* The oldest completed stalled transaction of stall queue q: 0 and
	 * its result; -EAGAIN while still stalled; -ENOENT none. The default
	 * (a model that never stalls) returns -ENOENT. */
	virtual int model_stalled(unsigned q, SmmuResult &r);

	/* Memory for the model's callbacks, through the walker socket.
	 * read/write: latency in cycles, or -EFAULT. load64/cas64: 0,
	 * -EFAULT (error response, or pa not 8-aligned), or for cas64
	 * -EAGAIN with *old set to the value found. */
	int64_t mem_read(uint64_t pa, void *buf, size_t len);
	int64_t mem_write(uint64_t pa, const void *buf, size_t len);
	int mem_load64(uint64_t pa, uint64_t *val);
	int mem_cas64(uint64_t pa, uint64_t *old, uint64_t val);

	/* The model signals wired line `line` at `cycle`. */
	void raise_irq(unsigned line, uint64_t cycle);

private:
	class Guard;	/* marks the model busy for one call */
	struct StallWaiter {
		SmmuResult r;
		bool done = false;
		bool orphan = false;	/* no process waits: discard */
		sc_core::sc_event ev;
	};

	bool wait_stalled(SmmuResult &r, sc_core::sc_time &delay);
	static int64_t mem_cb_read(void *c, uint64_t pa, void *buf, size_t len);
	static int64_t mem_cb_write(void *c, uint64_t pa, const void *buf,
				    size_t len);
	static int mem_cb_load64(void *c, uint64_t pa, uint64_t *val);
	static int mem_cb_cas64(void *c, uint64_t pa, uint64_t *old,
				uint64_t val);
	void collect_stalled();

	uint64_t enter_cycle(const sc_core::sc_time &local);
	void reg_b_transport(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	unsigned reg_dbg(tlm::tlm_generic_payload &gp);
	void up_b_transport(tlm::tlm_generic_payload &gp, sc_core::sc_time &delay);
	bool up_get_dmi(tlm::tlm_generic_payload &gp, tlm::tlm_dmi &dmi);
	unsigned up_dbg(tlm::tlm_generic_payload &gp);
	void walker_invalidate(sc_dt::uint64 start, sc_dt::uint64 end);
	void down_invalidate(sc_dt::uint64 start, sc_dt::uint64 end);
	void event_thread();
	unsigned char *dmi_ptr(uint64_t pa, size_t len, bool write,
			       uint64_t *lat_cycles);
	bool walker_transport(tlm::tlm_command cmd, uint64_t pa, void *buf,
			      size_t len, uint64_t *lat_cycles);
	uint64_t cycles_ceil(const sc_core::sc_time &d) const;

	SmmuTiming timing_;
	uint64_t reg_window_;
	uint64_t last_cycle_ = 0;
	bool busy_ = false;
	sc_core::sc_event kick_;
	std::vector<tlm::tlm_dmi> dmi_;
	std::map<unsigned, std::deque<StallWaiter *>> stall_waiters_;
	std::vector<std::unique_ptr<sc_core::sc_event_queue>> rise_;
	std::vector<std::unique_ptr<sc_core::sc_event>> fall_;
};

} // namespace iopt

#endif // IOPGTABLE_SYSTEMC_SMMU_BASE_H
