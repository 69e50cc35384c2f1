/* SPDX-License-Identifier: MIT */
/*
 * The simulation backend of the platform layer (-DIOPT_PLATFORM_SIM,
 * library target iopgtable_sim; docs/sim.md). Included by platform.h only;
 * see there for the contract of each operation.
 *
 * Every operation is an inline wrapper over a few out-of-line entry points
 * of the engine (src/sim/), which take the address, the size, the memory
 * order and the value, perform the access on the simulated memory model
 * (sequentially consistent, or TSO with per-CPU store buffers), charge the
 * calling simulated CPU its cycles and may switch to another simulated CPU.
 * Outside a run (the "host context": no current simulated CPU) each entry
 * point performs the access directly, at no cost and without switching.
 *
 * The memory order is passed for the trace and for future weaker models;
 * the two modelled memory models give every load acquire and every store
 * release semantics already (TSO), or more (SC).
 */
#ifndef IOPT_PLAT_SIM_H
#define IOPT_PLAT_SIM_H

#ifndef IOPT_PLATFORM_H
#error "include platform.h, not plat_sim.h"
#endif

#include <iopgtable/sim.h>

enum sim_order { SIM_RLX, SIM_ACQ, SIM_REL, SIM_ACQ_REL };
enum sim_rmw_op { SIM_RMW_ADD, SIM_RMW_SUB, SIM_RMW_OR, SIM_RMW_AND,
		  SIM_RMW_XOR, SIM_RMW_XCHG };

/* Engine entry points (src/sim/sim_mem.c). size is 4 or 8. */
uint64_t sim_load(const void *p, unsigned size, enum sim_order order);
void sim_store(void *p, unsigned size, enum sim_order order, uint64_t v);
/* Returns the old value. */
uint64_t sim_rmw(void *p, unsigned size, enum sim_order order,
		 enum sim_rmw_op op, uint64_t v);
/* True on success; on failure *old receives the current value. */
bool sim_cas(void *p, unsigned size, enum sim_order order, uint64_t *old,
	     uint64_t v);
void sim_fence(void);

/* ---- 64-bit atomics on plain storage ---------------------------------- */

static inline uint64_t plat_load_rlx64(const uint64_t *p)
{
	return sim_load(p, 8, SIM_RLX);
}

static inline uint64_t plat_load_acq64(const uint64_t *p)
{
	return sim_load(p, 8, SIM_ACQ);
}

static inline void plat_store_rlx64(uint64_t *p, uint64_t v)
{
	sim_store(p, 8, SIM_RLX, v);
}

static inline void plat_store_rel64(uint64_t *p, uint64_t v)
{
	sim_store(p, 8, SIM_REL, v);
}

static inline bool plat_cas_rel64(uint64_t *p, uint64_t *old, uint64_t v)
{
	return sim_cas(p, 8, SIM_REL, old, v);
}

static inline bool plat_cas_acq_rel64(uint64_t *p, uint64_t *old, uint64_t v)
{
	return sim_cas(p, 8, SIM_ACQ_REL, old, v);
}

static inline uint64_t plat_xchg_acq_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_ACQ_REL, SIM_RMW_XCHG, v);
}

static inline uint64_t plat_fetch_or_rlx64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_RLX, SIM_RMW_OR, v);
}

static inline uint64_t plat_fetch_or_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_REL, SIM_RMW_OR, v);
}

static inline uint64_t plat_fetch_add_acq_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_ACQ_REL, SIM_RMW_ADD, v);
}

static inline uint64_t plat_fetch_sub_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_REL, SIM_RMW_SUB, v);
}

static inline uint64_t plat_fetch_add_rlx64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_RLX, SIM_RMW_ADD, v);
}

static inline uint64_t plat_fetch_and_acq_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_ACQ_REL, SIM_RMW_AND, v);
}

static inline uint64_t plat_fetch_xor_rel64(uint64_t *p, uint64_t v)
{
	return sim_rmw(p, 8, SIM_REL, SIM_RMW_XOR, v);
}

/* ---- 32-bit atomics on plain storage ---------------------------------- */

static inline uint32_t plat_load_rlx32(const uint32_t *p)
{
	return (uint32_t)sim_load(p, 4, SIM_RLX);
}

static inline uint32_t plat_load_acq32(const uint32_t *p)
{
	return (uint32_t)sim_load(p, 4, SIM_ACQ);
}

static inline void plat_store_rlx32(uint32_t *p, uint32_t v)
{
	sim_store(p, 4, SIM_RLX, v);
}

static inline void plat_store_rel32(uint32_t *p, uint32_t v)
{
	sim_store(p, 4, SIM_REL, v);
}

static inline bool plat_cas_rel32(uint32_t *p, uint32_t *old, uint32_t v)
{
	uint64_t o = *old;
	bool ok = sim_cas(p, 4, SIM_REL, &o, v);

	*old = (uint32_t)o;
	return ok;
}

static inline uint32_t plat_xchg_acq_rel32(uint32_t *p, uint32_t v)
{
	return (uint32_t)sim_rmw(p, 4, SIM_ACQ_REL, SIM_RMW_XCHG, v);
}

static inline uint32_t plat_xchg_acq32(uint32_t *p, uint32_t v)
{
	return (uint32_t)sim_rmw(p, 4, SIM_ACQ, SIM_RMW_XCHG, v);
}

static inline uint32_t plat_fetch_add_rlx32(uint32_t *p, uint32_t v)
{
	return (uint32_t)sim_rmw(p, 4, SIM_RLX, SIM_RMW_ADD, v);
}

/* ---- fences ----------------------------------------------------------- */

static inline void plat_fence_seq_cst(void)
{
	sim_fence();
}

/* A driver's call into a device model (platform.h, "MMIO"): begin waits
 * for the device's register port and runs the attached models up to the
 * caller's time, the call runs as one step, end charges IOPT_SIM_OP_MMIO
 * (src/sim/sim_mem.c). */
void plat_mmio_begin(const void *dev);
void plat_mmio_end(const void *dev);

/* A device model's access to memory (platform.h, "Device memory"):
 * inside a device call or an engine run of a model, read puts back into
 * buf what CPUs' buffered stores replaced, write invalidates the CPUs'
 * copies of the lines (src/sim/sim_mem.c). */
void plat_dev_read(const void *p, void *buf, size_t len);
void plat_dev_write(const void *p, size_t len);

/* Cache maintenance (platform.h, "Cache maintenance"): charges the
 * cleans and their barrier and marks the lines clean (src/sim/sim_mem.c). */
void plat_cache_clean(const void *p, size_t len);

/* ---- per-CPU storage -------------------------------------------------- */

/* One key per PLAT_CPU_LOCAL definition; the engine numbers it on first
 * use and keeps one zeroed instance of size bytes per simulated CPU (and
 * one for the host context). */
struct sim_local_key {
	size_t size;
	unsigned id;		/* 0: not numbered yet */
};

void *sim_cpu_local(struct sim_local_key *key);

#define PLAT_CPU_LOCAL(type, name)					\
	static struct sim_local_key name##_plat_key = { sizeof(type), 0 }; \
	static inline type *name##_plat_get(void)			\
	{								\
		return (type *)sim_cpu_local(&name##_plat_key);		\
	}								\
	struct sim_local_key
#define plat_cpu_local(name) (name##_plat_get())

/* ---- mutex and threads ------------------------------------------------ */

struct sim_cpu;

/* A simulated sleeping lock: a CPU that finds it held blocks (no busy
 * cost) and is handed the lock in FIFO order. word is the lock's line. */
struct plat_mutex {
	uint32_t word;			/* 1 while held */
	unsigned holder;		/* CPU index + 1; IOPT_SIM_MAX_CPUS + 1: host */
	struct sim_cpu *head, *tail;	/* waiters */
};

void plat_mutex_lock(struct plat_mutex *m);
void plat_mutex_unlock(struct plat_mutex *m);

struct plat_thread {
	struct iopt_sim *sim;
	unsigned cpu;			/* the simulated CPU running it */
	uint64_t gen;			/* that CPU slot's start count */
};

/* ---- preemption and local interrupts (src/sim/sim_sched.c) ------------ */

void sim_spin_hold(void);
void sim_spin_unhold(void);

static inline void plat_spin_hold(void)
{
	sim_spin_hold();
}

static inline void plat_spin_unhold(void)
{
	sim_spin_unhold();
}

static inline unsigned long plat_irq_save(void)
{
	return iopt_sim_irq_save();
}

static inline void plat_irq_restore(unsigned long flags)
{
	iopt_sim_irq_restore(flags);
}

static inline void plat_preempt_disable(void)
{
	iopt_sim_preempt_disable();
}

static inline void plat_preempt_enable(void)
{
	iopt_sim_preempt_enable();
}

/* ---- RCU read side ---------------------------------------------------- */

void plat_rcu_read_lock(void);
void plat_rcu_read_unlock(void);

#endif /* IOPT_PLAT_SIM_H */
