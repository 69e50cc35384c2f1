/* SPDX-License-Identifier: MIT */
/*
 * Deterministic multi-CPU simulation: the library's own code, unmodified,
 * running as 1 to IOPT_SIM_MAX_CPUS simulated CPUs on one host thread.
 *
 * The simulation runs in the library built with the simulation platform
 * backend (target iopgtable_sim, docs/sim.md). The host library exports
 * the same functions, where iopt_sim_create() returns -ENOTSUP and
 * iopt_sim_available() 0, so one program source serves both.
 *
 * Every platform operation of the library (atomic, fence, lock, clock
 * read, RCU, thread start/join, MMIO to an attached SMMU model) charges
 * the calling simulated CPU cycles from a cache-coherence cost model and
 * is a point where the scheduler may switch CPUs. Exactly one simulated
 * CPU runs at a time: the one with the smallest simulated time, ties
 * broken by a seeded random choice (or, in PCT mode, by seeded priorities).
 * A CPU runs one simulated thread at a time; more threads than CPUs take
 * turns under the scheduler model of iopt_sim_run_threads().
 * The same binary, parameters and seed give the same interleaving, the
 * same cycle counts and the same trace hash.
 *
 * Concurrency: a struct iopt_sim is used by one host thread at a time.
 * Functions marked "from a simulated CPU" may only be called by code that
 * runs inside iopt_sim_run() (directly or through the library).
 *
 * Threads started outside a run. A program's main thread (the "host
 * context", which is not a simulated CPU) may call plat_thread_start():
 * the thread becomes a simulated CPU of the ambient simulation (the most
 * recently created one not yet destroyed; if there is none, one is created
 * with the defaults, overridden by the environment variables IOPT_SIM_CPUS,
 * IOPT_SIM_SEED, IOPT_SIM_MEM=sc|tso and IOPT_SIM_SCHED=random|pct) and
 * waits. plat_thread_join() from the host context runs the simulation until
 * that CPU has finished; plat_sleep_ns(ns) runs it for ns of simulated
 * time; plat_clock_ns() reads its time; plat_cpu_relax() runs it a little.
 * So a test written for host threads runs unchanged on simulated CPUs.
 * The host context's own operations cost nothing and never switch.
 */
#ifndef IOPGTABLE_SIM_H
#define IOPGTABLE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/smmuv2.h>
#include <iopgtable/smmuv3.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOPT_SIM_MAX_CPUS 256

struct iopt_sim;

/* Memory model the simulated CPUs see. */
enum iopt_sim_memmodel {
	/* Every access takes effect at once, in scheduling order. */
	IOPT_SIM_SC = 0,
	/*
	 * Total store order: a store enters the CPU's FIFO store buffer and
	 * reaches memory later (after a seeded delay, or at a full fence, an
	 * atomic read-modify-write, or when the buffer is full); a load sees
	 * its own CPU's newest buffered store first. A missing store->load
	 * fence therefore shows up under some seed.
	 */
	IOPT_SIM_TSO = 1,
};

/* Which CPU runs next among those with the smallest time. */
enum iopt_sim_sched {
	IOPT_SIM_SCHED_RANDOM = 0,	/* seeded uniform choice among ties */
	/*
	 * Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010):
	 * seeded distinct priorities, the highest runnable priority wins
	 * regardless of time within the quantum, and pct_depth - 1 seeded
	 * change points lower the running CPU's priority.
	 */
	IOPT_SIM_SCHED_PCT = 1,
};

/*
 * Cost model, in CPU cycles. iopt_sim_params_default() fills every field
 * with the default docs/sim.md gives (and its source); 0 is a valid value
 * for every cost.
 */
struct iopt_sim_params {
	unsigned cpus;			/* 1 .. IOPT_SIM_MAX_CPUS */
	uint64_t seed;
	enum iopt_sim_memmodel memmodel;
	enum iopt_sim_sched sched;
	unsigned pct_depth;		/* PCT: bug depth d (change points d-1) */
	uint64_t pct_steps;		/* PCT: expected operation count k */
	double cpu_ghz;			/* cycles per simulated ns */

	/* Coherence, per 64-byte line. */
	uint32_t hit;			/* line in this CPU's cache, state allows it */
	uint32_t miss_mem;		/* no cache has it: from memory */
	uint32_t fetch_shared;		/* read a line others hold shared/clean */
	uint32_t fetch_modified;	/* read/write a line another CPU holds modified */
	uint32_t upgrade;		/* write to a shared line: invalidate sharers */
	uint32_t per_sharer;		/* extra per sharer invalidated */
	uint32_t transfer;		/* a line moves at most once per this many
					 * cycles, and stays this long with the
					 * CPU it reaches (docs/sim.md) */
	/* Topology multipliers (percent) for transfers between CPUs. */
	unsigned cores_per_cluster;	/* 0: one cluster */
	unsigned clusters_per_socket;	/* 0: one socket */
	uint32_t cross_cluster_pct;	/* e.g. 150: 1.5x the same-cluster cost */
	uint32_t cross_socket_pct;

	/* Other operations. */
	uint32_t atomic_extra;		/* an RMW beyond its line access */
	uint32_t fence;			/* full fence (plus draining the store buffer) */
	uint32_t clock_read;
	uint32_t relax;			/* one spin-wait iteration */
	uint32_t mmio;			/* one MMIO access: its latency to the CPU */
	/* How long one access occupies an attached model's register port:
	 * accesses from different CPUs reach the model at least this far
	 * apart (added with the lock-free driver timeline). */
	uint32_t mmio_port;
	uint32_t call;			/* any other platform call */
	/* TSO: store-buffer entries and the seeded drain delay range. */
	unsigned sb_entries;
	uint32_t sb_drain_min, sb_drain_max;
	/* RCU: a grace period needs every CPU to pass a quiescent point; a
	 * CPU outside any read section counts as quiescent. */
	uint64_t stack_bytes;		/* per simulated CPU */
	/* PCT: only CPUs within this many cycles of the earliest runnable
	 * one compete by priority, so a spinning high-priority CPU cannot
	 * starve the CPU it waits for (added with the engine). */
	uint64_t pct_quantum;
	/* A run in which some CPU's time passes this many cycles stops with
	 * -ETIMEDOUT (a livelock: CPUs spinning on what will never come);
	 * 0: no limit (added with the engine). */
	uint64_t max_cycles;
	/*
	 * Instructions per cycle of the simulated CPUs' own code: every basic
	 * block the instrumented library, benchmark and workload code runs
	 * costs its instruction count / ipc cycles (docs/sim.md, "What an
	 * instruction costs"); 0: instructions are counted but cost nothing.
	 * 0 .. 64.
	 */
	double ipc;

	/*
	 * Threads, the scheduler and interrupts (docs/sim.md, "Threads and
	 * the scheduler", "Interrupts"). With one thread per CPU (every run
	 * of iopt_sim_run(), and threads started through the platform
	 * layer, each of which gets a CPU of its own) no thread ever waits
	 * for a CPU and none of these costs is paid except irq_entry.
	 *
	 * sched_slice: cycles a thread runs while others wait for its CPU
	 * before the first of them takes over (a time slice; 0: never).
	 * ctx_switch: cycles a context switch costs the CPU, charged to the
	 * thread switched in. wake_idle: 1: a thread woken while its CPU
	 * runs another moves to the lowest-numbered idle CPU, if any (a
	 * wake-up balancer); 0: it queues on its own CPU. preempt_spin: 1:
	 * the library's spinlocks disable preemption while held, as a
	 * non-RT kernel's do; 0: a holder can be preempted (user space, or a
	 * vCPU), and its waiters spin on. irq_entry: cycles from an
	 * interrupt's delivery to its handler's first instruction plus the
	 * return from it, charged to the interrupted CPU. share_cpus: 0:
	 * every thread started through the platform layer gets a CPU of its
	 * own (beyond the cpus CPUs); 1: such threads share CPUs 0 .. cpus-1,
	 * each starting on the one with the fewest unfinished threads (the
	 * lowest-numbered on a tie), so `--threads 64 --sim 8` is 64 threads
	 * on 8 CPUs.
	 */
	uint64_t sched_slice;
	uint32_t ctx_switch;
	unsigned wake_idle;
	unsigned preempt_spin;
	uint32_t irq_entry;
	unsigned share_cpus;
	/* Memory system: far atomics, cache maintenance (docs/sim.md, "Far
	 * atomics" and "Cache maintenance"). */
	/* 0: every read-modify-write executes near (the line comes to the
	 * CPU); 1: one on a line the CPU does not hold uniquely executes far,
	 * at the line's home node, and leaves no CPU holding the line. */
	unsigned atomic_far;
	uint32_t far_atomic;		/* a far atomic's round trip to the home */
	uint32_t far_atomic_home;	/* the home starts far atomics to one line this far apart */
	uint32_t cmo_line;		/* one line cleaned to the point of coherency (DC CVAC) */
	uint32_t cmo_barrier;		/* the barrier that waits for the cleans (DSB) */
};

IOPT_API void iopt_sim_params_default(struct iopt_sim_params *p);

/*
 * Parameters by name (docs/sim.md, "Parameters" and "Platforms"). Every
 * field of struct iopt_sim_params has a name, its field's name; the table
 * order is the order of iopt_sim_param_name(0, 1, ...).
 *
 * A value is, by the field's kind: an integer (decimal or 0x hex digits
 * only: no sign, no spaces, no suffix) in the field's range; a real
 * (strtod()'s syntax, a digit or '.' first, finite) in its range; or, for
 * memmodel and sched, one of their names (sc|tso, random|pct). Ranges are
 * per field (cpus 1 .. IOPT_SIM_MAX_CPUS, cpu_ghz above 0 and at most
 * 1000, ipc 0 .. 64, stack_bytes at least 16384, atomic_far 0 .. 1, the
 * 32-bit costs up to 2^32 - 1); rules between fields (sb_drain_min <= sb_drain_max) are
 * iopt_sim_create()'s.
 *
 * iopt_sim_param_set(): 0; -EINVAL: p, name or value NULL, an unknown
 * name, an empty or malformed value, trailing characters, a negative or
 * out-of-range value, or an integer past 2^64 - 1. On error *p is
 * unchanged.
 * iopt_sim_param_get(): the value as set would read it back (integers in
 * decimal, reals with %.17g, choices by name) in buf, NUL-terminated; 0,
 * -EINVAL (unknown name, NULL argument; buf untouched), -ENOSPC (len too
 * small; buf holds "" when len > 0).
 * iopt_sim_param_name(i): the i-th name, NULL past the last.
 *
 * Platforms: named presets of the cost parameters, each applied over the
 * defaults (iopt_sim_params_default()), leaving cpus, seed, memmodel,
 * sched, pct_*, stack_bytes, max_cycles and share_cpus as they were in *p:
 * "graviton2" (the defaults), "a72-8", "thunderx2", "kunpeng920".
 * iopt_sim_platform_apply(): 0; -ENOENT: unknown name (nothing changed);
 * -EINVAL: p or name NULL. iopt_sim_platform_name(i): the i-th preset's
 * name, NULL past the last; iopt_sim_platform_about(i): one line saying
 * what machine it describes.
 *
 * iopt_sim_params_hash(): FNV-1a 64 over "name=value\n" of every field in
 * table order (the values as iopt_sim_param_get() prints them), so it is
 * the same in every process and every build for equal values, and changes
 * when any one of them does. The functions exist in the host library too.
 */
IOPT_API int iopt_sim_param_set(struct iopt_sim_params *p, const char *name,
				const char *value);
IOPT_API int iopt_sim_param_get(const struct iopt_sim_params *p,
				const char *name, char *buf, size_t len);
IOPT_API const char *iopt_sim_param_name(unsigned i);
IOPT_API int iopt_sim_platform_apply(struct iopt_sim_params *p,
				     const char *name);
IOPT_API const char *iopt_sim_platform_name(unsigned i);
IOPT_API const char *iopt_sim_platform_about(unsigned i);
IOPT_API uint64_t iopt_sim_params_hash(const struct iopt_sim_params *p);

/*
 * The SMMU models' timing parameters, as a simulated platform sets them:
 * the SMMUv3 model's (v3) and the SMMUv2 model's (v2), from which a
 * program creating a model copies the half it uses.
 * iopt_sim_smmu_params_default(): v3 from iopt_smmuv3_default_params(), v2
 * from iopt_smmuv2_preset("mmu-500") (the testbed's defaults).
 *
 * Names: "v3." or "v2." and the field (v3.sync_cycles, v2.tlbi_cycles,
 * v3.tlb.latency, ...): the slots (1 .. 2^32 - 1), the cycle costs and
 * the caches' lookup latencies (0 .. 2^32 - 1); integers as above.
 * iopt_sim_smmu_param_set/get/name: as iopt_sim_param_set/get/name.
 *
 * Presets, each setting its model's half over that model's defaults and
 * leaving the other half as it was: "mmu-500" (v2: the MMU-500 preset
 * with the sync and TLBI costs of published behaviour), "smmuv3" (v3: the
 * model's defaults). iopt_sim_smmu_preset(): 0, -ENOENT (unknown name,
 * nothing changed), -EINVAL (NULL argument).
 *
 * iopt_sim_smmu_params_hash(m, h): the FNV-1a 64 of iopt_sim_params_hash()
 * continued over m's "name=value\n" lines from h, so that one hash covers
 * the engine's and the models' parameters:
 * iopt_sim_smmu_params_hash(m, iopt_sim_params_hash(p)).
 */
struct iopt_sim_smmu_params {
	struct iopt_smmuv3_params v3;
	struct iopt_smmuv2_params v2;
};

IOPT_API void iopt_sim_smmu_params_default(struct iopt_sim_smmu_params *m);
IOPT_API int iopt_sim_smmu_param_set(struct iopt_sim_smmu_params *m,
				     const char *name, const char *value);
IOPT_API int iopt_sim_smmu_param_get(const struct iopt_sim_smmu_params *m,
				     const char *name, char *buf, size_t len);
IOPT_API const char *iopt_sim_smmu_param_name(unsigned i);
IOPT_API int iopt_sim_smmu_preset(struct iopt_sim_smmu_params *m,
				  const char *name);
IOPT_API const char *iopt_sim_smmu_preset_name(unsigned i);
IOPT_API uint64_t iopt_sim_smmu_params_hash(const struct iopt_sim_smmu_params *m,
					    uint64_t h);

/*
 * Create a simulation. 0 and *out, or -EINVAL (cpus 0 or above the
 * maximum, sb_drain_min > sb_drain_max, cpu_ghz not positive, unknown
 * memmodel/sched), -ENOMEM; -ENOTSUP when this library is not the
 * simulation build.
 */
IOPT_API int iopt_sim_create(const struct iopt_sim_params *p,
			     struct iopt_sim **out);
IOPT_API void iopt_sim_destroy(struct iopt_sim *sim);

/*
 * Run fn(cpu, arg) on every simulated CPU (cpu = 0 .. cpus-1) until all
 * return, each starting at the simulation's current time; threads they
 * start through the platform layer become further simulated CPUs (counted
 * against IOPT_SIM_MAX_CPUS). RCU callbacks due run before return.
 * 0, or -EDEADLK when every remaining CPU waits on something no CPU can
 * change (a lock held by a finished CPU, say), or -ETIMEDOUT when a CPU's
 * time passed params.max_cycles, with the state left for inspection (a
 * later run returns the same error); -EBUSY when called from inside a
 * run, or when fewer than cpus thread slots are free. A thread started
 * from the host context and not joined yet keeps its slot and its CPU,
 * which may be one of the run's (they then share it under the
 * scheduler: a flush-queue timer thread on CPU 0, say).
 */
IOPT_API int iopt_sim_run(struct iopt_sim *sim,
			  void (*fn)(unsigned cpu, void *arg), void *arg);

/*
 * Run fn(thread, arg) on threads simulated threads (thread = 0 ..
 * threads-1), thread i starting on CPU i % cpus, all at the simulation's
 * current time, until all return; as iopt_sim_run() otherwise (which is
 * this with threads = cpus). Threads that share a CPU take turns under
 * the scheduler model of docs/sim.md: a run queue per CPU in FIFO order,
 * time slices of params.sched_slice, a thread that blocks (a sleeping
 * mutex, a join, an RCU barrier, a sleep while others wait) gives its CPU
 * to the next, preemption only where the thread is preemptible (not
 * inside an interrupt handler, nor with preemption or interrupts
 * disabled, nor holding a library spinlock when params.preempt_spin).
 * 1 <= threads <= IOPT_SIM_MAX_CPUS: -EINVAL otherwise; -EBUSY when
 * fewer thread slots are free than that (threads started from the host
 * context and not joined keep theirs: the run's threads take the lowest
 * free slots, their thread numbers 0 .. threads-1 whatever the slots);
 * other errors as iopt_sim_run().
 */
IOPT_API int iopt_sim_run_threads(struct iopt_sim *sim, unsigned threads,
				  void (*fn)(unsigned thread, void *arg),
				  void *arg);

/*
 * From a simulated thread: the CPU it runs on (plat_cpu_id()'s value; 0
 * in the host context), its thread index (the run's thread number; a
 * thread started through the platform layer has its own), and its time
 * in cycles and in ns.
 */
IOPT_API unsigned iopt_sim_cpu(void);
IOPT_API unsigned iopt_sim_thread(void);
IOPT_API uint64_t iopt_sim_now(void);
IOPT_API uint64_t iopt_sim_now_ns(void);

/* The parameters sim was created with, into *p (zeroed for sim NULL and
 * in the host library). */
IOPT_API void iopt_sim_get_params(const struct iopt_sim *sim,
				  struct iopt_sim_params *p);

/* From a simulated CPU: spend cycles outside the library (the workload's
 * own time). A scheduling point. */
IOPT_API void iopt_sim_work(uint64_t cycles);

/*
 * Interrupts (docs/sim.md, "Interrupts").
 *
 * iopt_sim_irq_at(sim, cpu, at, fn, arg): raise an interrupt on CPU cpu
 * at simulated cycle at (a device completion, a timer). From a simulated
 * thread, a handler or the host context. It is delivered at the first
 * scheduling point of that CPU at or after at (an iopt_sim_work() that
 * would pass it is split there) where interrupts are enabled and no
 * handler already runs there; if the CPU is idle then, it wakes to run
 * it. Interrupts due at the same cycle run in the order they were raised.
 * Delivery charges params.irq_entry, then fn(cpu, arg) runs on that CPU
 * in interrupt context: not preemptible, with further interrupts held
 * until it returns; it may call the library (unmap, flush a queue,
 * iopt_sim_irq_at() to re-arm a timer) but must not block: a sleeping
 * mutex, a join, an RCU barrier or plat_sleep_ns() in a handler aborts
 * with a message. 0; -EINVAL: sim or fn NULL, cpu >= params.cpus;
 * -ENOMEM; -ENOTSUP in the host library.
 *
 * iopt_sim_irq_save() / iopt_sim_irq_restore(flags): local_irq_save-style
 * sections on the calling thread's CPU (nesting; interrupts due meanwhile
 * are delivered at the restore that enables them again), the calls the
 * platform layer's plat_irq_save()/plat_irq_restore() make;
 * iopt_sim_preempt_disable()/enable(): likewise for preemption (a time
 * slice that ended meanwhile is acted on at the enable). No-ops in the
 * host context and the host library. iopt_sim_in_irq(): nonzero inside a
 * handler.
 */
typedef void (*iopt_sim_irq_fn)(unsigned cpu, void *arg);

IOPT_API int iopt_sim_irq_at(struct iopt_sim *sim, unsigned cpu, uint64_t at,
			     iopt_sim_irq_fn fn, void *arg);
IOPT_API unsigned long iopt_sim_irq_save(void);
IOPT_API void iopt_sim_irq_restore(unsigned long flags);
IOPT_API void iopt_sim_preempt_disable(void);
IOPT_API void iopt_sim_preempt_enable(void);
IOPT_API int iopt_sim_in_irq(void);

/*
 * Put an SMMU model on the simulation's timeline: the scheduler runs the
 * model up to the current simulated time before any CPU observes it (a
 * driver's call into the model, any platform load of memory the model
 * writes), so MSIs, event records and sync completions land at their
 * model cycle. model_ghz converts model cycles to CPU time. A driver's
 * calls into the model (bracketed by the platform layer's
 * plat_mmio_begin/end, as both drivers do) queue for the model's register
 * port (params.mmio_port cycles each) and each runs as one step; the
 * model's cycle for such a call is the time it reaches the port. The
 * driver must take its cycles from iopt_sim_model_cycles() (below), and
 * the model must be created with params.shared_clock set: two CPUs'
 * calls can reach the model out of cycle order (PCT scheduling lets a CPU
 * run ahead of another by up to pct_quantum), and a shared clock takes a
 * cycle behind the model's time as its time instead of failing with
 * -EINVAL.
 * 0, -EINVAL, -ENOSPC (too many models), -EBUSY inside a run.
 */
IOPT_API int iopt_sim_attach_smmuv3(struct iopt_sim *sim,
				   struct iopt_smmuv3 *smmu, double model_ghz);
IOPT_API int iopt_sim_attach_smmuv2(struct iopt_sim *sim,
				     struct iopt_smmuv2 *smmu,
				     double model_ghz);

/*
 * Take a model off the simulation's timeline (attached with
 * iopt_sim_attach_smmuv*): call before destroying it. The simulation never
 * calls it again; another model may take its place. 0; -ENOENT: not attached
 * (nothing changed); -EINVAL: sim or model NULL; -EBUSY from inside a run, or
 * while a thread started from the host context has not been joined (it may
 * still call the model). The register port's occupancy goes with it.
 */
IOPT_API int iopt_sim_detach_smmuv3(struct iopt_sim *sim, struct iopt_smmuv3 *smmu);
IOPT_API int iopt_sim_detach_smmuv2(struct iopt_sim *sim,
				     struct iopt_smmuv2 *smmu);

/*
 * The ambient simulation: the one that plat_thread_start() from the host
 * context puts its threads in (the most recently created one not yet
 * destroyed, or one made from the defaults and the IOPT_SIM_* environment
 * variables, as the header's first comment says), so that a test written
 * for host threads can attach its model to it. From the host context
 * only; NULL in the host library (and on an allocation failure there is
 * none to make: it aborts, as plat_thread_start() would).
 */
IOPT_API struct iopt_sim *iopt_sim_ambient(void);

/*
 * A driver's clock for an attached model (cfg.clock, with clock_ctx the
 * model): the simulated time, of the calling CPU or else the host
 * context, in that model's cycles, never behind what the simulation has
 * run the model to. 0 for a model not attached. With it, the driver's
 * model calls and the simulation's runs of the model share one timeline;
 * a driver on its virtual clock would be rejected by a model the
 * simulation has run ahead.
 */
IOPT_API uint64_t iopt_sim_model_cycles(void *model);

/* Statistics of the last iopt_sim_run() (cumulative over runs). */
enum iopt_sim_op {
	IOPT_SIM_OP_LOAD, IOPT_SIM_OP_STORE, IOPT_SIM_OP_RMW, IOPT_SIM_OP_FENCE,
	IOPT_SIM_OP_LOCK, IOPT_SIM_OP_CLOCK, IOPT_SIM_OP_RELAX, IOPT_SIM_OP_RCU,
	IOPT_SIM_OP_MMIO, IOPT_SIM_OP_WORK, IOPT_SIM_OP_OTHER,
	IOPT_SIM_OP_IRQ,		/* an interrupt's entry and return */
	IOPT_SIM_OP_CMO,	/* a cache clean with its barrier (plat_cache_clean) */
	IOPT_SIM_OP_COUNT
};

struct iopt_sim_line_stat {
	uintptr_t line;			/* line address (64-byte aligned) */
	uint64_t transfers;		/* times it moved between CPUs */
	uint64_t wait_cycles;		/* cycles CPUs queued for it */
	const void *last_writer_pc;	/* call site of its last writer, or NULL */
	uint64_t far_atomics;		/* atomics executed at its home node */
};

struct iopt_sim_stats {
	unsigned cpus;			/* CPUs that ran (thread-started ones too) */
	uint64_t end_cycles;		/* largest CPU time */
	uint64_t ops[IOPT_SIM_OP_COUNT];
	uint64_t total_ops;
	uint64_t switches;		/* engine switches between threads */
	uint64_t instructions;		/* instructions charged, all CPUs */
	unsigned threads;		/* simulated threads that ran */
	uint64_t preemptions;		/* time slices that ended with others waiting */
	uint64_t ctx_switches;		/* a CPU changed threads (scheduler) */
	uint64_t interrupts;		/* handlers run */
	uint64_t grace_periods;
	uint64_t rcu_callbacks;
	uint64_t trace_hash;		/* FNV-1a over (cpu, op, cycles) of every op */
	double host_s;			/* host seconds spent inside runs */
	struct iopt_sim_line_stat hot[8];	/* most contended lines */
};

IOPT_API void iopt_sim_stats(const struct iopt_sim *sim,
			     struct iopt_sim_stats *st);
/* Cycles the given CPU has run (0 for one that never ran). */
IOPT_API uint64_t iopt_sim_cpu_cycles(const struct iopt_sim *sim,
				      unsigned cpu);

/* True when this library is the simulation build. */
IOPT_API int iopt_sim_available(void);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SIM_H */
