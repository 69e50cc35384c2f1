// SPDX-License-Identifier: MIT
/*
 * SystemC TLM-2.0 glue shared by the SMMU modules: register and device
 * sockets, the cycle <-> sc_time mapping, the walker socket behind the
 * model's memory callbacks, the event thread and interrupt pulses. No SMMU
 * behaviour lives here: every decision is the C model's, reached through
 * the model_* hooks.
 */
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include <iopgtable/systemc/smmu_base.h>

using namespace sc_core;

namespace iopt {

/* Marks the model busy for one call. A second entry while busy means a
 * walker target yielded inside a model access and another process came
 * in: the C model's lock is held, so that would deadlock. */
class SmmuBase::Guard {
public:
	explicit Guard(SmmuBase &b) : b_(b)
	{
		if (b_.busy_)
			SC_REPORT_FATAL(b_.name(),
					"model entered while busy: a target on the "
					"walker socket called wait() inside a model "
					"access");
		b_.busy_ = true;
	}
	~Guard() { b_.busy_ = false; }
	Guard(const Guard &) = delete;
	Guard &operator=(const Guard &) = delete;

private:
	SmmuBase &b_;
};

SmmuBase::SmmuBase(sc_module_name name, const SmmuTiming &timing,
		   uint64_t reg_window, unsigned nr_irqs)
	: sc_module(name), regs("regs"), upstream("upstream"),
	  downstream("downstream"), walker("walker"), irq("irq", nr_irqs),
	  timing_(timing), reg_window_(reg_window)
{
	if (timing_.clock_period == SC_ZERO_TIME)
		SC_REPORT_FATAL(this->name(), "clock period must not be zero");
	regs.register_b_transport(this, &SmmuBase::reg_b_transport);
	regs.register_transport_dbg(this, &SmmuBase::reg_dbg);
	upstream.register_b_transport(this, &SmmuBase::up_b_transport);
	upstream.register_get_direct_mem_ptr(this, &SmmuBase::up_get_dmi);
	upstream.register_transport_dbg(this, &SmmuBase::up_dbg);
	walker.register_invalidate_direct_mem_ptr(this, &SmmuBase::walker_invalidate);
	downstream.register_invalidate_direct_mem_ptr(this, &SmmuBase::down_invalidate);

	for (unsigned i = 0; i < nr_irqs; i++) {
		std::string n = "irq_rise_" + std::to_string(i);

		rise_.emplace_back(new sc_event_queue(n.c_str()));
		fall_.emplace_back(new sc_event());

		/* One method per line drives it (a signal has one driver):
		 * a rise sets it and schedules the fall one period later. */
		sc_spawn_options o;

		o.spawn_method();
		o.dont_initialize();
		o.set_sensitivity(&rise_[i]->default_event());
		o.set_sensitivity(fall_[i].get());
		sc_spawn([this, i] {
			if (rise_[i]->default_event().triggered()) {
				irq[i].write(true);
				fall_[i]->notify(timing_.clock_period);
			} else {
				irq[i].write(false);
			}
		}, sc_gen_unique_name("irq_pulse"), &o);
	}
	SC_THREAD(event_thread);
}

SmmuBase::~SmmuBase()
{
	/* Waiters in a thread live on its stack; only orphans are ours. */
	for (auto &kv : stall_waiters_)
		for (StallWaiter *w : kv.second)
			if (w->orphan)
				delete w;
}

/* ---- binding helpers ---------------------------------------------------- */

int64_t SmmuBase::mem_cb_read(void *c, uint64_t pa, void *buf, size_t len)
{
	return static_cast<SmmuBase *>(c)->mem_read(pa, buf, len);
}

int64_t SmmuBase::mem_cb_write(void *c, uint64_t pa, const void *buf, size_t len)
{
	return static_cast<SmmuBase *>(c)->mem_write(pa, buf, len);
}

int SmmuBase::mem_cb_load64(void *c, uint64_t pa, uint64_t *val)
{
	return static_cast<SmmuBase *>(c)->mem_load64(pa, val);
}

int SmmuBase::mem_cb_cas64(void *c, uint64_t pa, uint64_t *old, uint64_t val)
{
	return static_cast<SmmuBase *>(c)->mem_cas64(pa, old, val);
}

iopt_smmu_mem SmmuBase::model_mem()
{
	iopt_smmu_mem mem{};

	mem.read = mem_cb_read;
	mem.write = mem_cb_write;
	mem.load64 = mem_cb_load64;
	mem.cas64 = mem_cb_cas64;
	mem.desc_latency = timing_.desc_cycles;
	mem.ctx = static_cast<SmmuBase *>(this);
	return mem;
}

void SmmuBase::model_irq(void *ctx, unsigned line, uint64_t cycle)
{
	static_cast<SmmuBase *>(ctx)->raise_irq(line, cycle);
}

void SmmuBase::throw_create_error(int rc, const char *what)
{
	if (!rc)
		return;
	if (rc == -ENOMEM)
		throw std::bad_alloc();
	if (rc == -EINVAL)
		throw std::invalid_argument(std::string(what) +
					    ": the parameters were rejected");
	throw std::system_error(-rc, std::generic_category(), what);
}

/* ---- time ------------------------------------------------------------- */

uint64_t SmmuBase::cycle_at(const sc_time &t) const
{
	uint64_t p = timing_.clock_period.value();

	return (t.value() + p - 1) / p;
}

sc_time SmmuBase::time_of(uint64_t cycle) const
{
	return timing_.clock_period * static_cast<double>(cycle);
}

uint64_t SmmuBase::cycles_ceil(const sc_time &d) const
{
	return cycle_at(d);
}

/* The cycle a request at local time `local` enters the model: the clock
 * edge at or after it, but never before a cycle the model has already
 * seen (a temporally decoupled initiator may be behind another one). */
uint64_t SmmuBase::enter_cycle(const sc_time &local)
{
	uint64_t c = cycle_at(local);

	if (c < last_cycle_)
		c = last_cycle_;
	last_cycle_ = c;
	return c;
}

/* ---- registers -------------------------------------------------------- */

void SmmuBase::reg_b_transport(tlm::tlm_generic_payload &gp, sc_time &delay)
{
	uint64_t off = gp.get_address();
	unsigned len = gp.get_data_length();
	tlm::tlm_command cmd = gp.get_command();

	gp.set_dmi_allowed(false);
	if (gp.get_byte_enable_ptr()) {
		gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
		return;
	}
	if ((len != 4 && len != 8) || gp.get_streaming_width() != len) {
		gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
		return;
	}
	if (off >= reg_window_ || off % len) {
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		return;
	}
	if (cmd == tlm::TLM_IGNORE_COMMAND) {
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
		return;
	}

	uint64_t c = enter_cycle(sc_time_stamp() + delay);
	int rc;

	{
		Guard g(*this);

		if (cmd == tlm::TLM_READ_COMMAND) {
			uint64_t v = 0;

			rc = model_read(off, len, &v, c);
			if (!rc) {
				/* TLM data is in host order for a full-width
				 * access: copy the value's own bytes. */
				if (len == 4) {
					uint32_t v32 = static_cast<uint32_t>(v);

					std::memcpy(gp.get_data_ptr(), &v32, 4);
				} else {
					std::memcpy(gp.get_data_ptr(), &v, 8);
				}
			}
		} else {
			uint64_t v;

			if (len == 4) {
				uint32_t v32;

				std::memcpy(&v32, gp.get_data_ptr(), 4);
				v = v32;
			} else {
				std::memcpy(&v, gp.get_data_ptr(), 8);
			}
			rc = model_write(off, len, v, c);
		}
	}
	if (rc) {
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		return;
	}
	if (cmd == tlm::TLM_WRITE_COMMAND) {
		kick_.notify(SC_ZERO_TIME);	/* the next event may have moved */
		collect_stalled();		/* the write may have resumed one */
	}
	delay = time_of(c + timing_.reg_cycles) - sc_time_stamp();
	gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned SmmuBase::reg_dbg(tlm::tlm_generic_payload &gp)
{
	uint64_t off = gp.get_address();
	unsigned len = gp.get_data_length();
	uint64_t v = 0;

	if (gp.get_command() != tlm::TLM_READ_COMMAND || (len != 4 && len != 8) ||
	    off >= reg_window_ || off % len)
		return 0;
	{
		Guard g(*this);

		/* At the latest cycle already given: every event due by then
		 * has run, so the read changes nothing. */
		if (model_read(off, len, &v, last_cycle_))
			return 0;
	}
	if (len == 4) {
		uint32_t v32 = static_cast<uint32_t>(v);

		std::memcpy(gp.get_data_ptr(), &v32, 4);
	} else {
		std::memcpy(gp.get_data_ptr(), &v, 8);
	}
	return len;
}

/* ---- device traffic --------------------------------------------------- */

void SmmuBase::up_b_transport(tlm::tlm_generic_payload &gp, sc_time &delay)
{
	SmmuTxn *ext = gp.get_extension<SmmuTxn>();
	tlm::tlm_command cmd = gp.get_command();
	uint64_t addr = gp.get_address();
	unsigned len = gp.get_data_length();
	unsigned sw = gp.get_streaming_width();
	unsigned span = sw < len ? sw : len;	/* bytes of address touched */

	gp.set_dmi_allowed(false);
	if (!ext) {
		gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
		return;
	}
	ext->fault = 0;
	ext->oa = 0;
	if (cmd == tlm::TLM_IGNORE_COMMAND) {
		gp.set_response_status(tlm::TLM_OK_RESPONSE);
		return;
	}
	if (!len || !sw) {
		gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
		return;
	}
	if (addr + span - 1 < addr) {
		gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
		return;
	}

	bool one_page = addr / kPage == (addr + span - 1) / kPage;

	if (!one_page && gp.get_byte_enable_ptr()) {
		gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
		return;
	}
	if (!one_page && sw < len) {
		gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
		return;
	}

	unsigned char *data = gp.get_data_ptr();
	SmmuAccess a;

	a.sid = ext->sid;
	a.ssv = ext->ssv;
	a.ssid = ext->ssid;
	a.write = cmd == tlm::TLM_WRITE_COMMAND;
	a.instr = ext->instr && !a.write;
	a.priv = ext->priv;
	a.translated = ext->translated;

	/* One page at a time: translate at the current local time, then
	 * perform that piece downstream, which moves the local time on. */
	unsigned done = 0;
	tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;

	while (done < len) {
		uint64_t va = addr + done;
		unsigned piece = one_page ? len :
			static_cast<unsigned>(kPage - va % kPage);

		if (piece > len - done)
			piece = len - done;

		uint64_t c = enter_cycle(sc_time_stamp() + delay);
		SmmuResult r;
		int rc;

		a.addr = va;
		{
			Guard g(*this);

			rc = model_translate(a, c, r);
		}
		if (rc) {
			st = tlm::TLM_GENERIC_ERROR_RESPONSE;
			break;
		}
		if (r.stalled && !wait_stalled(r, delay)) {
			st = tlm::TLM_GENERIC_ERROR_RESPONSE;
			break;
		}
		if (time_of(r.ready) > sc_time_stamp() + delay)
			delay = time_of(r.ready) - sc_time_stamp();
		if (r.fault) {
			ext->fault = r.fault;
			st = tlm::TLM_ADDRESS_ERROR_RESPONSE;
			break;
		}
		if (!done)
			ext->oa = r.oa;
		gp.set_address(r.oa);
		gp.set_data_ptr(data + done);
		gp.set_data_length(piece);
		if (!one_page)
			gp.set_streaming_width(piece);
		gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
		downstream->b_transport(gp, delay);
		st = gp.get_response_status();
		if (st != tlm::TLM_OK_RESPONSE)
			break;
		done += piece;
	}
	gp.set_address(addr);
	gp.set_data_ptr(data);
	gp.set_data_length(len);
	gp.set_streaming_width(sw);
	gp.set_dmi_allowed(false);
	gp.set_response_status(st);
}

/* Every access must be translated and timed: deny DMI everywhere. */
bool SmmuBase::up_get_dmi(tlm::tlm_generic_payload &, tlm::tlm_dmi &dmi)
{
	dmi.allow_none();
	dmi.set_start_address(0);
	dmi.set_end_address(~static_cast<sc_dt::uint64>(0));
	return false;
}

unsigned SmmuBase::up_dbg(tlm::tlm_generic_payload &)
{
	return 0;
}

void SmmuBase::down_invalidate(sc_dt::uint64, sc_dt::uint64)
{
	/* No DMI is granted upstream, so nothing to pass on. */
}

/* ---- the model's memory ------------------------------------------------ */

void SmmuBase::walker_invalidate(sc_dt::uint64 start, sc_dt::uint64 end)
{
	for (size_t i = 0; i < dmi_.size();) {
		if (dmi_[i].get_start_address() <= end &&
		    dmi_[i].get_end_address() >= start) {
			dmi_[i] = dmi_.back();
			dmi_.pop_back();
		} else {
			i++;
		}
	}
}

unsigned char *SmmuBase::dmi_ptr(uint64_t pa, size_t len, bool write,
				 uint64_t *lat_cycles)
{
	for (const tlm::tlm_dmi &d : dmi_) {
		if (pa < d.get_start_address() ||
		    pa + len - 1 > d.get_end_address() || pa + len - 1 < pa)
			continue;
		if (write ? !d.is_write_allowed() : !d.is_read_allowed())
			continue;
		*lat_cycles = cycles_ceil(write ? d.get_write_latency() :
					  d.get_read_latency());
		return d.get_dmi_ptr() + (pa - d.get_start_address());
	}
	return nullptr;
}

/* One access on the walker socket: true and its latency, or false. */
bool SmmuBase::walker_transport(tlm::tlm_command cmd, uint64_t pa, void *buf,
				size_t len, uint64_t *lat_cycles)
{
	tlm::tlm_generic_payload gp;
	sc_time d = SC_ZERO_TIME;
	sc_dt::uint64 deltas = sc_delta_count();

	gp.set_command(cmd);
	gp.set_address(pa);
	gp.set_data_ptr(static_cast<unsigned char *>(buf));
	gp.set_data_length(static_cast<unsigned>(len));
	gp.set_streaming_width(static_cast<unsigned>(len));
	gp.set_byte_enable_ptr(nullptr);
	gp.set_dmi_allowed(false);
	gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
	walker->b_transport(gp, d);
	/* A warning, not an error: SystemC errors throw, and an exception
	 * must not unwind through the C model's frames (its lock is held).
	 * If another process entered the model meanwhile, Guard has already
	 * stopped the simulation. */
	if (sc_delta_count() != deltas)
		SC_REPORT_WARNING(name(), "a target on the walker socket called "
				  "wait(): the model's accesses must not yield");
	if (gp.get_response_status() != tlm::TLM_OK_RESPONSE)
		return false;
	if (gp.is_dmi_allowed()) {
		tlm::tlm_generic_payload q;
		tlm::tlm_dmi dmi;

		q.set_command(cmd);
		q.set_address(pa);
		if (walker->get_direct_mem_ptr(q, dmi))
			dmi_.push_back(dmi);
	}
	*lat_cycles = cycles_ceil(d);
	return true;
}

int64_t SmmuBase::mem_read(uint64_t pa, void *buf, size_t len)
{
	uint64_t lat;
	unsigned char *p = dmi_ptr(pa, len, false, &lat);

	if (p) {
		std::memcpy(buf, p, len);
		return static_cast<int64_t>(lat);
	}
	if (!walker_transport(tlm::TLM_READ_COMMAND, pa, buf, len, &lat))
		return -EFAULT;
	return static_cast<int64_t>(lat);
}

int64_t SmmuBase::mem_write(uint64_t pa, const void *buf, size_t len)
{
	uint64_t lat;
	unsigned char *p = dmi_ptr(pa, len, true, &lat);

	if (p) {
		if (len == 4 && !(pa & 3)) {
			/* An MSI or a 32-bit field: one single-copy-atomic
			 * store; release pairs with a poller's acquire load. */
			uint32_t v;

			std::memcpy(&v, buf, 4);
			__atomic_store_n(reinterpret_cast<uint32_t *>(p), v,
					 __ATOMIC_RELEASE);
		} else {
			std::memcpy(p, buf, len);
		}
		return static_cast<int64_t>(lat);
	}
	/* TLM payloads take a non-const pointer; a write does not modify. */
	if (!walker_transport(tlm::TLM_WRITE_COMMAND, pa, const_cast<void *>(buf),
			      len, &lat))
		return -EFAULT;
	return static_cast<int64_t>(lat);
}

int SmmuBase::mem_load64(uint64_t pa, uint64_t *val)
{
	uint64_t lat;

	if (pa & 7)
		return -EFAULT;

	unsigned char *p = dmi_ptr(pa, 8, false, &lat);

	if (p) {
		/* Acquire pairs with the release store with which page-table
		 * code publishes a descriptor (and the table under it). */
		*val = __atomic_load_n(reinterpret_cast<uint64_t *>(p),
				       __ATOMIC_ACQUIRE);
		return 0;
	}
	return walker_transport(tlm::TLM_READ_COMMAND, pa, val, 8, &lat) ?
	       0 : -EFAULT;
}

int SmmuBase::mem_cas64(uint64_t pa, uint64_t *old, uint64_t val)
{
	uint64_t lat;

	if (pa & 7)
		return -EFAULT;

	unsigned char *rp = dmi_ptr(pa, 8, false, &lat);
	unsigned char *wp = dmi_ptr(pa, 8, true, &lat);

	if (rp && rp == wp) {
		/* acq_rel: acquire as a descriptor load; release so that a
		 * reader of the updated AF/dirty state sees it whole. */
		return __atomic_compare_exchange_n(reinterpret_cast<uint64_t *>(wp),
						   old, val, false, __ATOMIC_ACQ_REL,
						   __ATOMIC_ACQUIRE) ? 0 : -EAGAIN;
	}
	/* Through b_transport: no other SystemC process runs between the
	 * read and the write (walker targets never wait), so the pair is
	 * atomic for every simulated observer. */
	uint64_t cur;

	if (!walker_transport(tlm::TLM_READ_COMMAND, pa, &cur, 8, &lat))
		return -EFAULT;
	if (cur != *old) {
		*old = cur;
		return -EAGAIN;
	}
	return walker_transport(tlm::TLM_WRITE_COMMAND, pa, &val, 8, &lat) ?
	       0 : -EFAULT;
}

/* ---- stalled transactions ---------------------------------------------- */

int SmmuBase::model_stalled(unsigned, SmmuResult &)
{
	return -ENOENT;
}

/* The calling b_transport's transaction is held by the model: wait (in
 * this process) until collect_stalled() hands it its outcome. false: the
 * caller is not a thread and cannot wait. */
bool SmmuBase::wait_stalled(SmmuResult &r, sc_time &delay)
{
	if (sc_get_current_process_handle().proc_kind() != SC_THREAD_PROC_) {
		/* Keep the queue in step with the model's: this place takes
		 * the outcome nobody waits for. */
		StallWaiter *o = new StallWaiter;

		o->orphan = true;
		stall_waiters_[r.stall_queue].push_back(o);
		SC_REPORT_ERROR(name(), "a transaction stalled in b_transport "
				"called outside an SC_THREAD: it cannot wait for "
				"RESUME");
		return false;
	}

	StallWaiter w;
	unsigned q = r.stall_queue;

	stall_waiters_[q].push_back(&w);
	/* Synchronise first: the RESUME comes from another process. */
	wait(delay);
	delay = SC_ZERO_TIME;
	while (!w.done)
		wait(w.ev);
	r = w.r;
	return true;
}

/* Hand every completed stalled transaction to its waiter, oldest first
 * per queue (the model completes them in the order they stalled). */
void SmmuBase::collect_stalled()
{
	for (auto &kv : stall_waiters_) {
		std::deque<StallWaiter *> &ws = kv.second;

		while (!ws.empty()) {
			SmmuResult r;
			int rc;

			{
				Guard g(*this);

				rc = model_stalled(kv.first, r);
			}
			if (rc)
				break;
			StallWaiter *w = ws.front();

			ws.pop_front();
			if (w->orphan) {
				delete w;
				continue;
			}
			w->r = r;
			w->done = true;
			w->ev.notify(SC_ZERO_TIME);
		}
	}
}

/* ---- internal events and interrupts ------------------------------------ */

void SmmuBase::raise_irq(unsigned line, uint64_t cycle)
{
	if (line >= rise_.size())
		return;

	sc_time t = time_of(cycle), now = sc_time_stamp();

	rise_[line]->notify(t > now ? t - now : SC_ZERO_TIME);
}

void SmmuBase::event_thread()
{
	for (;;) {
		uint64_t next;

		{
			Guard g(*this);

			next = model_next_event();
		}
		if (next == UINT64_MAX) {
			wait(kick_);
			continue;
		}

		sc_time t = time_of(next), now = sc_time_stamp();

		if (t > now) {
			wait(t - now, kick_);
			if (sc_time_stamp() < t)
				continue;	/* kicked: look again */
		}

		/* Due now: run the model to the current cycle (floor: the
		 * edge at or before now), never behind a cycle it has seen. */
		uint64_t c = sc_time_stamp().value() / timing_.clock_period.value();

		if (c < last_cycle_)
			c = last_cycle_;
		if (c < next)
			c = next;
		last_cycle_ = c;
		{
			Guard g(*this);

			model_run_until(c);
			next = model_next_event();
		}
		collect_stalled();
		if (next <= c) {
			/* Nothing advanced the model: wait for a register
			 * write instead of spinning. */
			wait(kick_);
		}
	}
}

} // namespace iopt
