/* SPDX-License-Identifier: MIT */
/*
 * The testbed (iopgtable/testbed.h): memory, model, clock, driver, DMA
 * domain, built in that order and torn down in the reverse one. A failed
 * step tears down what the steps before it built, so create either
 * returns the whole chain or leaves nothing behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/sim.h>
#include <iopgtable/testbed.h>

#include "../platform/platform.h"

#define TB_MEM_BASE	0x80000000ull
#define TB_MEM_SIZE	(256ull << 20)
#define TB_MEM_LATENCY	10
#define TB_SID		1

struct iopt_testbed {
	struct iopt_testbed_cfg cfg;
	struct iopt_physmem *pm;
	bool own_pm;
	struct iopt_smmu_mem mem;
	struct iopt_smmuv3 *s3;
	struct iopt_smmuv2 *s2;
	struct iopt_smmuv3_runner *run3;
	struct iopt_smmuv2_runner *run2;
	bool on_sim;
	/* drv3 as an integer, published once probe returns, for tb_irq(),
	 * which the model may call from another thread (a runner's) at any
	 * time. */
	uint64_t irq_drv;
	struct iopt_smmuv3_drv *drv3;
	struct iopt_smmuv2_drv *drv2;
	struct iopt_dma *d;
};

void iopt_testbed_default_cfg(struct iopt_testbed_cfg *cfg,
			      enum iopt_testbed_smmu smmu)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->smmu = smmu;
	cfg->mem_base = TB_MEM_BASE;
	cfg->mem_size = TB_MEM_SIZE;
	cfg->mem_latency = TB_MEM_LATENCY;
	iopt_smmuv3_default_params(&cfg->v3);
	iopt_smmuv2_preset("mmu-500", &cfg->v2);
	cfg->clock = IOPT_TESTBED_CLOCK_VIRTUAL;
	cfg->model_ghz = 1.0;
	cfg->probe = true;
	iopt_smmuv3_drv_default_cfg(&cfg->drv3);
	iopt_smmuv2_drv_default_cfg(&cfg->drv2);
	cfg->dma = true;
	iopt_dma_default_cfg(&cfg->dma_cfg);
	cfg->attach = true;
	cfg->sid = TB_SID;
}

static bool tb_cfg_valid(const struct iopt_testbed_cfg *c)
{
	if (c->smmu != IOPT_TESTBED_SMMUV2 && c->smmu != IOPT_TESTBED_SMMUV3)
		return false;
	switch (c->clock) {
	case IOPT_TESTBED_CLOCK_VIRTUAL:
		break;
	case IOPT_TESTBED_CLOCK_SIM:
		if (!c->sim)
			return false;
		/* fall through */
	case IOPT_TESTBED_CLOCK_RUNNER:
		if (!(c->model_ghz > 0))
			return false;
		break;
	default:
		return false;
	}
	if (c->dma && !c->probe)
		return false;
	if (c->attach && !c->dma)
		return false;
	if (c->irq_to_driver && c->smmu != IOPT_TESTBED_SMMUV3)
		return false;
	return true;
}

/* The model's interrupt lines: to the driver first (it only records the
 * line; iopt_smmuv3_drv_poll() does the work), then to the caller. */
static void tb_irq(void *ctx, unsigned line, uint64_t cycle)
{
	struct iopt_testbed *tb = ctx;
	uint64_t drv;

	if (tb->cfg.irq_to_driver) {
		/* Acquire pairs with the release store in tb_probe(): the
		 * driver is seen whole. */
		drv = plat_load_acq64(&tb->irq_drv);
		if (drv)
			iopt_smmuv3_drv_irq((struct iopt_smmuv3_drv *)(uintptr_t)drv,
					    line);
	}
	if (tb->cfg.irq)
		tb->cfg.irq(tb->cfg.irq_ctx, line, cycle);
}

static uint64_t tb_runner3_clock(void *ctx)
{
	return iopt_smmuv3_runner_now(ctx);
}

static uint64_t tb_runner2_clock(void *ctx)
{
	return iopt_smmuv2_runner_now(ctx);
}

static int tb_memory(struct iopt_testbed *tb)
{
	const struct iopt_testbed_cfg *c = &tb->cfg;
	int ret;

	if (c->pm) {
		tb->pm = c->pm;
	} else {
		ret = iopt_physmem_create(c->mem_base, c->mem_size, &tb->pm);
		if (ret)
			return ret;
		tb->own_pm = true;
	}
	if (c->mem)
		tb->mem = *c->mem;
	else
		iopt_smmu_physmem(tb->pm, c->mem_latency, &tb->mem);
	return 0;
}

/* The model and its clock; on failure the model is destroyed again. */
static int tb_model(struct iopt_testbed *tb)
{
	const struct iopt_testbed_cfg *c = &tb->cfg;
	void (*irq)(void *, unsigned, uint64_t) =
		c->irq || c->irq_to_driver ? tb_irq : NULL;
	bool sim = c->clock == IOPT_TESTBED_CLOCK_SIM;
	int ret;

	if (c->smmu == IOPT_TESTBED_SMMUV3) {
		struct iopt_smmuv3_params p = c->v3;

		p.shared_clock |= sim;
		ret = iopt_smmuv3_create(&p, &tb->mem, irq, tb, &tb->s3);
		if (ret)
			return ret;
		if (sim)
			ret = iopt_sim_attach_smmuv3(c->sim, tb->s3, c->model_ghz);
		else if (c->clock == IOPT_TESTBED_CLOCK_RUNNER)
			ret = iopt_smmuv3_runner_start(tb->s3, c->model_ghz,
						       &tb->run3);
		if (ret) {
			iopt_smmuv3_destroy(tb->s3);
			tb->s3 = NULL;
			return ret;
		}
	} else {
		struct iopt_smmuv2_params p = c->v2;

		p.shared_clock |= sim;
		ret = iopt_smmuv2_create(&p, &tb->mem, irq, tb, &tb->s2);
		if (ret)
			return ret;
		if (sim)
			ret = iopt_sim_attach_smmuv2(c->sim, tb->s2, c->model_ghz);
		else if (c->clock == IOPT_TESTBED_CLOCK_RUNNER)
			ret = iopt_smmuv2_runner_start(tb->s2, c->model_ghz,
						       &tb->run2);
		if (ret) {
			iopt_smmuv2_destroy(tb->s2);
			tb->s2 = NULL;
			return ret;
		}
	}
	tb->on_sim = sim;
	return 0;
}

static int tb_probe(struct iopt_testbed *tb)
{
	const struct iopt_testbed_cfg *c = &tb->cfg;
	int ret;

	if (tb->s3) {
		struct iopt_smmuv3_drv_cfg d = c->drv3;

		d.smmu = tb->s3;
		d.pm = tb->pm;
		if (tb->on_sim) {
			d.clock = iopt_sim_model_cycles;
			d.clock_ctx = tb->s3;
		} else if (tb->run3) {
			d.clock = tb_runner3_clock;
			d.clock_ctx = tb->run3;
		}
		ret = iopt_smmuv3_drv_probe(&d, &tb->drv3);
		if (!ret)
			/* Release pairs with the acquire load in tb_irq(). */
			plat_store_rel64(&tb->irq_drv, (uintptr_t)tb->drv3);
		return ret;
	}
	struct iopt_smmuv2_drv_cfg d = c->drv2;

	d.smmu = tb->s2;
	if (tb->on_sim) {
		d.clock = iopt_sim_model_cycles;
		d.clock_ctx = tb->s2;
	} else if (tb->run2) {
		d.clock = tb_runner2_clock;
		d.clock_ctx = tb->run2;
	}
	return iopt_smmuv2_drv_probe(&d, &tb->drv2);
}

int iopt_testbed_dma_cfg(const struct iopt_testbed *tb, struct iopt_dma_cfg *c)
{
	if (!tb || !c || (!tb->drv3 && !tb->drv2))
		return -EINVAL;
	*c = tb->cfg.dma_cfg;
	if (tb->drv3) {
		c->ops = iopt_dma_smmuv3_ops();
		c->drv = tb->drv3;
	} else {
		c->ops = iopt_dma_smmuv2_ops();
		c->drv = tb->drv2;
	}
	if (!c->pt.mem) {
		c->pt.mem = iopt_physmem_mem_ops();
		c->pt.mem_ctx = tb->pm;
	}
	return 0;
}

static int tb_domain(struct iopt_testbed *tb)
{
	struct iopt_dma_cfg dc;
	int ret;

	iopt_testbed_dma_cfg(tb, &dc);
	ret = iopt_dma_create(&dc, &tb->d);
	if (ret || !tb->cfg.attach)
		return ret;
	return iopt_dma_attach(tb->d, tb->cfg.sid);
}

void iopt_testbed_destroy(struct iopt_testbed *tb)
{
	if (!tb)
		return;
	iopt_dma_destroy(tb->d);
	iopt_smmuv3_drv_remove(tb->drv3);
	iopt_smmuv2_drv_remove(tb->drv2);
	if (tb->run3)
		iopt_smmuv3_runner_stop(tb->run3);
	if (tb->run2)
		iopt_smmuv2_runner_stop(tb->run2);
	if (tb->on_sim && tb->s3)
		iopt_sim_detach_smmuv3(tb->cfg.sim, tb->s3);
	if (tb->on_sim && tb->s2)
		iopt_sim_detach_smmuv2(tb->cfg.sim, tb->s2);
	if (tb->s3)
		iopt_smmuv3_destroy(tb->s3);
	if (tb->s2)
		iopt_smmuv2_destroy(tb->s2);
	if (tb->own_pm)
		iopt_physmem_destroy(tb->pm);
	free(tb);
}

int iopt_testbed_create(const struct iopt_testbed_cfg *cfg,
			struct iopt_testbed **out)
{
	struct iopt_testbed *tb;
	int ret;

	if (!cfg || !out || !tb_cfg_valid(cfg))
		return -EINVAL;
	tb = calloc(1, sizeof(*tb));
	if (!tb)
		return -ENOMEM;
	tb->cfg = *cfg;
	ret = tb_memory(tb);
	if (!ret)
		ret = tb_model(tb);
	if (!ret && cfg->probe)
		ret = tb_probe(tb);
	if (!ret && cfg->dma)
		ret = tb_domain(tb);
	if (ret) {
		iopt_testbed_destroy(tb);
		return ret;
	}
	*out = tb;
	return 0;
}

enum iopt_testbed_smmu iopt_testbed_smmu(const struct iopt_testbed *tb)
{
	return tb ? tb->cfg.smmu : 0;
}

struct iopt_physmem *iopt_testbed_physmem(const struct iopt_testbed *tb)
{
	return tb ? tb->pm : NULL;
}

struct iopt_smmuv3 *iopt_testbed_smmuv3(const struct iopt_testbed *tb)
{
	return tb ? tb->s3 : NULL;
}

struct iopt_smmuv2 *iopt_testbed_smmuv2(const struct iopt_testbed *tb)
{
	return tb ? tb->s2 : NULL;
}

struct iopt_smmuv3_drv *iopt_testbed_smmuv3_drv(const struct iopt_testbed *tb)
{
	return tb ? tb->drv3 : NULL;
}

struct iopt_smmuv2_drv *iopt_testbed_smmuv2_drv(const struct iopt_testbed *tb)
{
	return tb ? tb->drv2 : NULL;
}

struct iopt_dma *iopt_testbed_dma(const struct iopt_testbed *tb)
{
	return tb ? tb->d : NULL;
}

uint32_t iopt_testbed_sid(const struct iopt_testbed *tb)
{
	return tb ? tb->cfg.sid : 0;
}

int iopt_testbed_dev_access(struct iopt_testbed *tb, uint32_t sid,
			    uint64_t iova, bool write, uint64_t *pa,
			    unsigned *fault)
{
	int ret;

	if (tb && tb->drv3) {
		struct iopt_smmuv3_txn t = { .sid = sid, .addr = iova,
					   .write = write };
		struct iopt_smmuv3_resp r;

		ret = iopt_smmuv3_drv_translate(tb->drv3, &t, &r);
		if (ret)
			return ret;
		if (fault)
			*fault = r.fault;
		if (r.fault)
			return -EFAULT;
		if (pa)
			*pa = r.oa;
		return 0;
	}
	if (tb && tb->drv2) {
		struct iopt_smmuv2_txn t = { .sid = sid, .addr = iova,
					     .write = write };
		struct iopt_smmuv2_resp r;

		ret = iopt_smmuv2_drv_translate(tb->drv2, &t, &r);
		if (ret)
			return ret;
		if (fault)
			*fault = r.result;
		if (r.result != IOPT_SMMUV2_OK)
			return -EFAULT;
		if (pa)
			*pa = r.oa;
		return 0;
	}
	return -EINVAL;
}
