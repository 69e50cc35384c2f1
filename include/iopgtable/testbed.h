/* SPDX-License-Identifier: MIT */
/*
 * Testbed: the whole chain a DMA mapping crosses, built in one call.
 *
 *   simulated physical memory (iopgtable/physmem.h)
 *     -> an SMMU model, SMMUv3 (iopgtable/smmuv3.h) or SMMUv2 (smmuv2.h) -> its
 *     driver, probed on the model (smmuv3_drv.h, smmuv2_drv.h) -> optionally a
 *     DMA domain (dma.h) with its invalidation policy,
 *        attached to one stream
 *     -> a device that translates through the model on the driver's
 *        timeline (iopt_testbed_dev_access()).
 *
 * Every part keeps its own API: the accessors below hand out the model,
 * the driver and the domain, and what they return is used as if it had
 * been created by hand. The configuration embeds each part's own
 * configuration (defaults from iopt_testbed_default_cfg()); the fields that
 * join the parts (the model of the driver, the driver of the domain, the
 * memory of the page table) are the testbed's to fill.
 *
 * Concurrency: create and destroy must not race with any other call on the
 * testbed; the accessors never fail and may be called from any thread;
 * iopt_testbed_dev_access() may be called from any thread at once, as the
 * drivers' translate calls may. docs/testbed.md has the defaults in a table.
 */
#ifndef IOPGTABLE_TESTBED_H
#define IOPGTABLE_TESTBED_H

#include <stdbool.h>
#include <stdint.h>

#include <iopgtable/common.h>
#include <iopgtable/dma.h>
#include <iopgtable/smmuv3_drv.h>
#include <iopgtable/smmuv2_drv.h>
#include <iopgtable/physmem.h>
#include <iopgtable/smmuv3.h>
#include <iopgtable/smmuv2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which SMMU (the value is the architecture version). */
enum iopt_testbed_smmu {
	IOPT_TESTBED_SMMUV2 = 2,
	IOPT_TESTBED_SMMUV3 = 3,
};

/* The clock the driver gives the model. */
enum iopt_testbed_clock {
	/* The driver's own virtual clock (or drv3/drv2.clock when set). */
	IOPT_TESTBED_CLOCK_VIRTUAL,
	/* A free-running runner thread (iopt_smmuv3_runner_start()). */
	IOPT_TESTBED_CLOCK_RUNNER,
	/* The simulation's timeline: the model attached to cfg.sim
	 * (iopt_sim_attach_smmuv3()), params.shared_clock set, the driver's
	 * clock iopt_sim_model_cycles(). The host library's sim.h stubs make
	 * create fail with -ENOTSUP. */
	IOPT_TESTBED_CLOCK_SIM,
};

struct iopt_sim;

struct iopt_testbed_cfg {
	enum iopt_testbed_smmu smmu;		/* default: the one asked for */

	/* Memory. pm NULL: the testbed creates [mem_base, mem_base +
	 * mem_size) and destroys it; otherwise the caller's (left alone by
	 * destroy). mem NULL: the model reaches pm through
	 * iopt_smmu_physmem(pm, mem_latency); otherwise through *mem (a
	 * wrapper that traces or injects faults, say), copied at create. */
	struct iopt_physmem *pm;
	uint64_t mem_base;			/* 0x80000000 */
	uint64_t mem_size;			/* 256 MiB (backed on use) */
	unsigned mem_latency;			/* 10 cycles */
	const struct iopt_smmu_mem *mem;

	/* The model: v3 for SMMUv3 (iopt_smmuv3_default_params()), v2 for
	 * SMMUv2 (the "mmu-500" preset). irq, when set, receives the
	 * model's interrupts (with the model's lock held: it must not call
	 * the model); irq_to_driver forwards them to iopt_smmuv3_drv_irq()
	 * first, once probe has returned (SMMUv3 only; the SMMUv2 driver
	 * takes no interrupts). With neither the model is created without
	 * wired interrupt outputs. */
	struct iopt_smmuv3_params v3;
	struct iopt_smmuv2_params v2;
	void (*irq)(void *ctx, unsigned line, uint64_t cycle);
	void *irq_ctx;
	bool irq_to_driver;			/* false */

	enum iopt_testbed_clock clock;		/* VIRTUAL */
	struct iopt_sim *sim;			/* CLOCK_SIM: the simulation */
	double model_ghz;			/* RUNNER, SIM: cycles per ns (1.0) */

	/* The driver. probe false: model only (no driver, no domain). The
	 * testbed sets drv3.smmu, drv3.pm, drv2.smmu, and with CLOCK_RUNNER
	 * or CLOCK_SIM the clock and clock_ctx; the rest is the caller's
	 * (iopt_smmuv3_drv_default_cfg(), iopt_smmuv2_drv_default_cfg()). */
	bool probe;				/* true */
	struct iopt_smmuv3_drv_cfg drv3;
	struct iopt_smmuv2_drv_cfg drv2;

	/* The DMA domain. dma false: none (iopt_testbed_dma_cfg() then
	 * prepares one for the caller to create). The testbed sets
	 * dma_cfg.ops and dma_cfg.drv, and dma_cfg.pt.mem/mem_ctx to the
	 * testbed's memory when pt.mem is NULL. The page table's format,
	 * granule, ias and oas are dma_cfg.pt's, the policy dma_cfg.policy
	 * (iopt_dma_default_cfg(): stage 1, 4K, 48/48 bits, strict). */
	bool dma;				/* true */
	struct iopt_dma_cfg dma_cfg;
	bool attach;				/* true: sid attached */
	uint32_t sid;				/* 1 */
};

struct iopt_testbed;

/*
 * Defaults for the given SMMU, as the comments above give them. An
 * unknown smmu is stored as given (create then refuses it). Never fails;
 * any thread.
 */
IOPT_API void iopt_testbed_default_cfg(struct iopt_testbed_cfg *cfg,
				       enum iopt_testbed_smmu smmu);

/*
 * Build the chain: memory, model, clock, driver (probe), domain, attach.
 * Returns 0 and *out, or:
 *   -EINVAL  NULL cfg or out; smmu neither v2 nor v3; clock out of range;
 *            CLOCK_SIM without sim; model_ghz not positive with RUNNER or
 *            SIM; dma without probe; attach without dma; irq_to_driver
 *            with SMMUv2; or a part's own -EINVAL (bad memory window,
 *            model parameters, driver or domain configuration);
 *   -ENOMEM  host memory;
 *   or the error of the part that failed, propagated: the model's, the
 *   runner's, the simulation's (-ENOTSUP in the host library), the
 *   driver's probe (-ENODEV, -ETIMEDOUT), the domain's create (-ENOSPC)
 *   or the attach (-EBUSY, -ETIMEDOUT).
 * On failure everything the call made is destroyed again, in reverse
 * order, and *out is untouched; a caller's pm keeps what it held before
 * (but for what the model wrote into it). Not concurrently with other
 * calls on the same cfg.pm or cfg.sim.
 */
IOPT_API int iopt_testbed_create(const struct iopt_testbed_cfg *cfg,
				 struct iopt_testbed **out);

/*
 * Tear down in reverse: domain (streams detached), driver, clock
 * (runner stopped, model taken off the simulation), model, memory (when
 * the testbed's). Nothing else may be running on any part; domains the
 * caller created on the driver must be destroyed first. NULL: no-op.
 */
IOPT_API void iopt_testbed_destroy(struct iopt_testbed *tb);

/* The parts; NULL where the testbed has none (the other SMMU's, no
 * driver, no domain) and for a NULL tb. Never fail; any thread. */
IOPT_API enum iopt_testbed_smmu iopt_testbed_smmu(const struct iopt_testbed *tb);
IOPT_API struct iopt_physmem *iopt_testbed_physmem(const struct iopt_testbed *tb);
IOPT_API struct iopt_smmuv3 *iopt_testbed_smmuv3(const struct iopt_testbed *tb);
IOPT_API struct iopt_smmuv2 *iopt_testbed_smmuv2(const struct iopt_testbed *tb);
IOPT_API struct iopt_smmuv3_drv *iopt_testbed_smmuv3_drv(const struct iopt_testbed *tb);
IOPT_API struct iopt_smmuv2_drv *iopt_testbed_smmuv2_drv(const struct iopt_testbed *tb);
IOPT_API struct iopt_dma *iopt_testbed_dma(const struct iopt_testbed *tb);
/* The stream the device uses (cfg.sid). 0 for NULL. */
IOPT_API uint32_t iopt_testbed_sid(const struct iopt_testbed *tb);

/*
 * *c as the testbed's own domain was (or would have been) configured:
 * cfg.dma_cfg with ops, drv and table memory filled, for a caller that
 * creates further domains on the testbed's driver. 0, or -EINVAL (NULL,
 * no driver). Any thread.
 */
IOPT_API int iopt_testbed_dma_cfg(const struct iopt_testbed *tb,
				  struct iopt_dma_cfg *c);

/*
 * The device reads (write false) or writes iova on stream sid through the
 * model, on the driver's timeline (iopt_smmuv3_drv_translate(),
 * iopt_smmuv2_drv_translate()). Returns 0 and *pa (may be NULL) when it
 * translated; -EFAULT when it faulted, with *fault (may be NULL) the SMMUv3
 * event type (IOPT_SMMUV3_EVT_*; the event record, when the configuration asks
 * for one, is read with iopt_smmuv3_drv_poll()) or the SMMUv2 result
 * (IOPT_SMMUV2_ABORT, IOPT_SMMUV2_STALLED; the bank's fault syndrome holds the
 * rest); -EINVAL with no driver; or the model's error. Any thread.
 */
IOPT_API int iopt_testbed_dev_access(struct iopt_testbed *tb, uint32_t sid,
				     uint64_t iova, bool write, uint64_t *pa,
				     unsigned *fault);

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_TESTBED_H */
