/* SPDX-License-Identifier: MIT */
/*
 * What the two SMMU models share in their API: memory as a model reaches
 * it by physical address (struct iopt_smmu_mem, and an adapter over a
 * simulated physical memory) and the geometry of a model's caches
 * (struct iopt_smmu_cache_params). <iopgtable/smmuv3.h> and
 * <iopgtable/smmuv2.h> include it; the iopt_smmu_ prefix, without a
 * version, marks what is common to both.
 */
#ifndef IOPGTABLE_SMMU_COMMON_H
#define IOPGTABLE_SMMU_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iopgtable/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory as the SMMU reaches it, by physical address. */
struct iopt_smmu_mem {
	/* Copy len bytes; return the access's latency in cycles, or -EFAULT. */
	int64_t (*read)(void *ctx, uint64_t pa, void *buf, size_t len);
	int64_t (*write)(void *ctx, uint64_t pa, const void *buf, size_t len);
	/* Descriptor accesses: single-copy atomic; 0, -EFAULT, -EAGAIN. */
	int (*load64)(void *ctx, uint64_t pa, uint64_t *val);
	int (*cas64)(void *ctx, uint64_t pa, uint64_t *old, uint64_t val);
	unsigned desc_latency;		/* cycles per load64/cas64 */
	void *ctx;
};

struct iopt_physmem;
/* Memory ops over a simulated physical memory, each access costing
 * latency cycles; *mem is filled in. */
IOPT_API void iopt_smmu_physmem(struct iopt_physmem *pm, unsigned latency,
				struct iopt_smmu_mem *mem);

enum iopt_smmu_repl { IOPT_SMMU_REPL_LRU, IOPT_SMMU_REPL_RR, IOPT_SMMU_REPL_RANDOM };

struct iopt_smmu_cache_params {
	bool enable;
	unsigned entries, ways;		/* entries / ways: a power of two */
	enum iopt_smmu_repl repl;
	unsigned latency;		/* cycles per lookup (walk cache: per probe) */
};

#ifdef __cplusplus
}
#endif

#endif /* IOPGTABLE_SMMU_COMMON_H */
