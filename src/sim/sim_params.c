/* SPDX-License-Identifier: MIT */
/*
 * The simulation's parameters by name: one table per parameter struct
 * (the engine's, the SMMU models'), parsing with one set of strict rules,
 * the platform presets and the hash that names a parameter set in every
 * JSON line (include/iopgtable/sim.h; docs/sim.md, "Parameters" and
 * "Platforms"), and the defaults themselves. Pure code: the host library
 * has it too, so its iopt_sim_params_default() gives the same values.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iopgtable/sim.h>

enum sp_kind {
	SP_U32,		/* uint32_t */
	SP_UINT,	/* unsigned */
	SP_U64,		/* uint64_t */
	SP_REAL,	/* double */
	SP_ENUM,	/* an enum stored as int: the index in choices */
};

struct sp_desc {
	const char *name;
	enum sp_kind kind;
	size_t off;
	uint64_t min, max;		/* integers */
	double lo, hi;			/* reals; lo_open: lo itself is out */
	bool lo_open;
	bool cost;			/* a platform sets it */
	const char *const *choices;	/* SP_ENUM, NULL-terminated */
};

/* SP_ENUM fields are enums, stored as int by every ABI the library
 * builds on. */
_Static_assert(sizeof(enum iopt_sim_memmodel) == sizeof(int) &&
	       sizeof(enum iopt_sim_sched) == sizeof(int), "enum size");

static const char *const sp_mem_names[] = { "sc", "tso", NULL };
static const char *const sp_sched_names[] = { "random", "pct", NULL };

#define SP_FIELD(f) .name = #f, .off = offsetof(struct iopt_sim_params, f)
#define SP_COST32(f) { SP_FIELD(f), .kind = SP_U32, .max = UINT32_MAX, .cost = true }

static const struct sp_desc sp_engine[] = {
	{ SP_FIELD(cpus), .kind = SP_UINT, .min = 1, .max = IOPT_SIM_MAX_CPUS },
	{ SP_FIELD(seed), .kind = SP_U64, .max = UINT64_MAX },
	{ SP_FIELD(memmodel), .kind = SP_ENUM, .choices = sp_mem_names },
	{ SP_FIELD(sched), .kind = SP_ENUM, .choices = sp_sched_names },
	{ SP_FIELD(pct_depth), .kind = SP_UINT, .max = UINT32_MAX },
	{ SP_FIELD(pct_steps), .kind = SP_U64, .max = UINT64_MAX },
	{ SP_FIELD(cpu_ghz), .kind = SP_REAL, .lo = 0, .hi = 1000, .lo_open = true,
	  .cost = true },
	SP_COST32(hit),
	SP_COST32(miss_mem),
	SP_COST32(fetch_shared),
	SP_COST32(fetch_modified),
	SP_COST32(upgrade),
	SP_COST32(per_sharer),
	SP_COST32(transfer),
	{ SP_FIELD(cores_per_cluster), .kind = SP_UINT, .max = IOPT_SIM_MAX_CPUS,
	  .cost = true },
	{ SP_FIELD(clusters_per_socket), .kind = SP_UINT, .max = IOPT_SIM_MAX_CPUS,
	  .cost = true },
	SP_COST32(cross_cluster_pct),
	SP_COST32(cross_socket_pct),
	SP_COST32(atomic_extra),
	SP_COST32(fence),
	SP_COST32(clock_read),
	SP_COST32(relax),
	SP_COST32(mmio),
	SP_COST32(mmio_port),
	SP_COST32(call),
	{ SP_FIELD(sb_entries), .kind = SP_UINT, .max = UINT32_MAX, .cost = true },
	SP_COST32(sb_drain_min),
	SP_COST32(sb_drain_max),
	{ SP_FIELD(stack_bytes), .kind = SP_U64, .min = 16384, .max = UINT64_MAX },
	{ SP_FIELD(pct_quantum), .kind = SP_U64, .max = UINT64_MAX },
	{ SP_FIELD(max_cycles), .kind = SP_U64, .max = UINT64_MAX },
	{ SP_FIELD(ipc), .kind = SP_REAL, .lo = 0, .hi = 64, .cost = true },
	{ SP_FIELD(sched_slice), .kind = SP_U64, .max = UINT64_MAX, .cost = true },
	SP_COST32(ctx_switch),
	{ SP_FIELD(wake_idle), .kind = SP_UINT, .max = 1, .cost = true },
	{ SP_FIELD(preempt_spin), .kind = SP_UINT, .max = 1, .cost = true },
	SP_COST32(irq_entry),
	{ SP_FIELD(share_cpus), .kind = SP_UINT, .max = 1 },
	/* Memory system: far atomics, cache maintenance. */
	{ SP_FIELD(atomic_far), .kind = SP_UINT, .max = 1, .cost = true },
	SP_COST32(far_atomic),
	SP_COST32(far_atomic_home),
	SP_COST32(cmo_line),
	SP_COST32(cmo_barrier),
};

#undef SP_FIELD
#define SP_FIELD(f) .name = #f, .off = offsetof(struct iopt_sim_smmu_params, f)
#define SP_SLOTS(f) { SP_FIELD(f), .kind = SP_UINT, .min = 1, .max = UINT32_MAX }
#define SP_CYCLES(f) { SP_FIELD(f), .kind = SP_UINT, .max = UINT32_MAX }

static const struct sp_desc sp_smmu[] = {
	SP_SLOTS(v3.translation_slots),
	SP_SLOTS(v3.walk_slots),
	SP_CYCLES(v3.cmd_cycles),
	SP_CYCLES(v3.tlbi_cycles),
	SP_CYCLES(v3.cfgi_cycles),
	SP_CYCLES(v3.sync_cycles),
	SP_CYCLES(v3.msi_cycles),
	SP_CYCLES(v3.event_cycles),
	SP_CYCLES(v3.tlb.latency),
	SP_CYCLES(v3.walk.latency),
	SP_CYCLES(v3.cfg.latency),
	SP_SLOTS(v2.translation_slots),
	SP_SLOTS(v2.walk_slots),
	SP_CYCLES(v2.tlbi_cycles),
	SP_CYCLES(v2.sync_cycles),
	SP_CYCLES(v2.ats_cycles),
	SP_CYCLES(v2.tlb.latency),
	SP_CYCLES(v2.walk.latency),
};

#define SP_COUNT(t) (sizeof(t) / sizeof((t)[0]))

static const struct sp_desc *sp_find(const struct sp_desc *t, size_t n,
				     const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/* Decimal or 0x hex digits only, at most 2^64 - 1. */
static bool sp_parse_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* Parse value for d into the field at base; false (nothing written) on a
 * bad value. */
static bool sp_store(const struct sp_desc *d, void *base, const char *value)
{
	char *field = (char *)base + d->off, *end;
	uint64_t v;
	double r;

	switch (d->kind) {
	case SP_ENUM:
		for (int i = 0; d->choices[i]; i++) {
			if (!strcmp(d->choices[i], value)) {
				*(int *)field = i;
				return true;
			}
		}
		return false;
	case SP_REAL:
		if (!((*value >= '0' && *value <= '9') || *value == '.'))
			return false;
		r = strtod(value, &end);
		if (*end || !isfinite(r) || r < d->lo || r > d->hi ||
		    (d->lo_open && r == d->lo))
			return false;
		*(double *)field = r;
		return true;
	default:
		if (!sp_parse_u64(value, &v) || v < d->min || v > d->max)
			return false;
		if (d->kind == SP_U32)
			*(uint32_t *)field = (uint32_t)v;
		else if (d->kind == SP_UINT)
			*(unsigned *)field = (unsigned)v;
		else
			*(uint64_t *)field = v;
		return true;
	}
}

/* The value as text: snprintf()'s result. */
static int sp_format(const struct sp_desc *d, const void *base, char *buf,
		     size_t len)
{
	const char *field = (const char *)base + d->off;
	int e;

	switch (d->kind) {
	case SP_ENUM:
		e = *(const int *)field;
		/* A value set by hand outside the names prints as a number. */
		for (int i = 0; d->choices[i]; i++)
			if (i == e)
				return snprintf(buf, len, "%s", d->choices[i]);
		return snprintf(buf, len, "%d", e);
	case SP_REAL:
		return snprintf(buf, len, "%.17g", *(const double *)field);
	case SP_U32:
		return snprintf(buf, len, "%" PRIu32, *(const uint32_t *)field);
	case SP_UINT:
		return snprintf(buf, len, "%u", *(const unsigned *)field);
	default:
		return snprintf(buf, len, "%" PRIu64, *(const uint64_t *)field);
	}
}

static int sp_set(const struct sp_desc *t, size_t n, void *base,
		  const char *name, const char *value)
{
	const struct sp_desc *d = sp_find(t, n, name);

	if (!base || !d || !value || !sp_store(d, base, value))
		return -EINVAL;
	return 0;
}

static int sp_get(const struct sp_desc *t, size_t n, const void *base,
		  const char *name, char *buf, size_t len)
{
	const struct sp_desc *d = sp_find(t, n, name);
	int w;

	if (!base || !d || !buf)
		return -EINVAL;
	w = sp_format(d, base, buf, len);
	if (w < 0 || (size_t)w >= len) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

#define SP_FNV_PRIME 0x100000001b3ull

static uint64_t sp_hash(const struct sp_desc *t, size_t n, const void *base,
			uint64_t h)
{
	char line[128];

	for (size_t i = 0; i < n; i++) {
		int w = snprintf(line, sizeof(line), "%s=", t[i].name);

		sp_format(&t[i], base, line + w, sizeof(line) - (size_t)w - 1);
		strcat(line, "\n");
		for (const char *c = line; *c; c++) {
			h ^= (unsigned char)*c;
			h *= SP_FNV_PRIME;
		}
	}
	return h;
}

/* Apply "name=value" settings (NULL-terminated) to base; false at the
 * first that does not parse (a preset table's own error). */
static bool sp_apply_list(const struct sp_desc *t, size_t n, void *base,
			  const char *const *set)
{
	char name[64];

	for (; *set; set++) {
		const char *eq = strchr(*set, '=');
		size_t l = eq ? (size_t)(eq - *set) : 0;

		if (!l || l >= sizeof(name))
			return false;
		memcpy(name, *set, l);
		name[l] = '\0';
		if (sp_set(t, n, base, name, eq + 1))
			return false;
	}
	return true;
}

/* ---- the engine's parameters ------------------------------------------ */

void iopt_sim_params_default(struct iopt_sim_params *p)
{
	/* Sources: docs/sim.md, "Parameters". */
	*p = (struct iopt_sim_params){
		.cpus = 4,
		.seed = 1,
		.memmodel = IOPT_SIM_SC,
		.sched = IOPT_SIM_SCHED_RANDOM,
		.pct_depth = 3,
		.pct_steps = 100000,
		.pct_quantum = 2000,
		.cpu_ghz = 2.5,
		.hit = 4,
		.miss_mem = 250,
		.fetch_shared = 110,
		.fetch_modified = 120,
		.upgrade = 110,
		.per_sharer = 10,
		.transfer = 120,
		.cores_per_cluster = 0,
		.clusters_per_socket = 0,
		.cross_cluster_pct = 100,
		.cross_socket_pct = 300,
		.atomic_extra = 20,
		.fence = 30,
		.clock_read = 40,
		.relax = 10,
		.mmio = 500,
		.mmio_port = 10,
		.call = 2,
		.sb_entries = 56,
		.sb_drain_min = 10,
		.sb_drain_max = 200,
		.stack_bytes = 256 * 1024,
		.ipc = 2.0,
		/* 3 ms: CFS's minimum granularity for 8 or more CPUs. */
		.sched_slice = 7500000,
		.ctx_switch = 4000,
		.wake_idle = 1,
		.preempt_spin = 1,
		.irq_entry = 1000,
		.atomic_far = 0,
		.far_atomic = 120,
		.far_atomic_home = 20,
		.cmo_line = 10,
		.cmo_barrier = 120,
	};
}


int iopt_sim_param_set(struct iopt_sim_params *p, const char *name,
		       const char *value)
{
	return sp_set(sp_engine, SP_COUNT(sp_engine), p, name, value);
}

int iopt_sim_param_get(const struct iopt_sim_params *p, const char *name,
		       char *buf, size_t len)
{
	return sp_get(sp_engine, SP_COUNT(sp_engine), p, name, buf, len);
}

const char *iopt_sim_param_name(unsigned i)
{
	return i < SP_COUNT(sp_engine) ? sp_engine[i].name : NULL;
}

uint64_t iopt_sim_params_hash(const struct iopt_sim_params *p)
{
	return sp_hash(sp_engine, SP_COUNT(sp_engine), p, 0xcbf29ce484222325ull);
}

/*
 * The platforms: what each sets over the defaults. docs/sim.md,
 * "Platforms", gives every value's source or marks it an assumption; the
 * two lists must say the same.
 */
struct sp_platform {
	const char *name, *about;
	const char *const *set;
};

static const char *const sp_graviton2[] = { NULL };

static const char *const sp_a72_8[] = {
	"cpu_ghz=3.0", "hit=4", "miss_mem=300",
	"fetch_shared=50", "fetch_modified=60", "upgrade=50",
	"per_sharer=10", "transfer=60",
	"cores_per_cluster=4", "cross_cluster_pct=250",
	"mmio=600", "clock_read=40", "ipc=1.5", "sched_slice=9000000",
	"atomic_far=0", "cmo_barrier=300", NULL,
};

static const char *const sp_thunderx2[] = {
	"cpu_ghz=2.2", "hit=4", "miss_mem=240",
	"fetch_shared=30", "fetch_modified=30", "upgrade=30",
	"per_sharer=10", "transfer=30",
	"cores_per_cluster=4", "clusters_per_socket=32",
	"cross_cluster_pct=400", "cross_socket_pct=1200",
	"mmio=440", "ipc=1.5", "sched_slice=6600000",
	"atomic_far=0", "far_atomic=120", "cmo_barrier=120", NULL,
};

static const char *const sp_kunpeng920[] = {
	"cpu_ghz=2.6", "hit=4", "miss_mem=260",
	"fetch_shared=80", "fetch_modified=90", "upgrade=80",
	"per_sharer=10", "transfer=90",
	"cores_per_cluster=4", "clusters_per_socket=16",
	"cross_cluster_pct=150", "cross_socket_pct=300",
	"mmio=520", "sched_slice=7800000",
	"atomic_far=0", "far_atomic=135", "cmo_barrier=135", NULL,
};

static const struct sp_platform sp_platforms[] = {
	{ "graviton2", "64 Neoverse N1 at 2.5 GHz, CMN-600 mesh (the defaults)",
	  sp_graviton2 },
	{ "a72-8", "8 Cortex-A72 at 3.0 GHz in two clusters of 4, MMU-500",
	  sp_a72_8 },
	{ "thunderx2", "Cavium ThunderX2: 32 cores x 4 threads at 2.2 GHz "
	  "a socket, SMMUv3", sp_thunderx2 },
	{ "kunpeng920", "HiSilicon Kunpeng 920 (Hi1620): 64 cores at 2.6 GHz "
	  "a socket in clusters of 4, SMMUv3", sp_kunpeng920 },
};

int iopt_sim_platform_apply(struct iopt_sim_params *p, const char *name)
{
	const struct sp_platform *pl = NULL;
	struct iopt_sim_params q, d;

	if (!p || !name)
		return -EINVAL;
	for (size_t i = 0; i < SP_COUNT(sp_platforms); i++)
		if (!strcmp(sp_platforms[i].name, name))
			pl = &sp_platforms[i];
	if (!pl)
		return -ENOENT;
	q = *p;
	iopt_sim_params_default(&d);
	for (size_t i = 0; i < SP_COUNT(sp_engine); i++) {
		const struct sp_desc *e = &sp_engine[i];
		size_t sz = e->kind == SP_U32 ? sizeof(uint32_t) :
			    e->kind == SP_UINT ? sizeof(unsigned) :
			    e->kind == SP_REAL ? sizeof(double) : sizeof(uint64_t);

		if (e->cost)
			memcpy((char *)&q + e->off, (const char *)&d + e->off, sz);
	}
	if (!sp_apply_list(sp_engine, SP_COUNT(sp_engine), &q, pl->set))
		return -EINVAL;	/* the table's own error: never shipped */
	*p = q;
	return 0;
}

const char *iopt_sim_platform_name(unsigned i)
{
	return i < SP_COUNT(sp_platforms) ? sp_platforms[i].name : NULL;
}

const char *iopt_sim_platform_about(unsigned i)
{
	return i < SP_COUNT(sp_platforms) ? sp_platforms[i].about : NULL;
}

/* ---- the SMMU models' parameters -------------------------------------- */

void iopt_sim_smmu_params_default(struct iopt_sim_smmu_params *m)
{
	memset(m, 0, sizeof(*m));
	iopt_smmuv3_default_params(&m->v3);
	iopt_smmuv2_preset("mmu-500", &m->v2);
}

int iopt_sim_smmu_param_set(struct iopt_sim_smmu_params *m, const char *name,
			    const char *value)
{
	return sp_set(sp_smmu, SP_COUNT(sp_smmu), m, name, value);
}

int iopt_sim_smmu_param_get(const struct iopt_sim_smmu_params *m,
			    const char *name, char *buf, size_t len)
{
	return sp_get(sp_smmu, SP_COUNT(sp_smmu), m, name, buf, len);
}

const char *iopt_sim_smmu_param_name(unsigned i)
{
	return i < SP_COUNT(sp_smmu) ? sp_smmu[i].name : NULL;
}

uint64_t iopt_sim_smmu_params_hash(const struct iopt_sim_smmu_params *m,
				   uint64_t h)
{
	return sp_hash(sp_smmu, SP_COUNT(sp_smmu), m, h);
}

/*
 * MMU-500: the model's "mmu-500" preset (the TRM's figures) with a sync
 * that completes within "a few hundred cycles" of its TLB invalidation, as
 * the MMU-500 users report (shared/seeds/000: "something that normally
 * shouldn't take more than a few hundred cycles"); docs/sim.md.
 */
static const char *const sp_mmu500[] = { "v2.sync_cycles=200", NULL };
static const char *const sp_smmuv3[] = { NULL };

static const struct {
	const char *name;
	bool v2;		/* the half it sets */
	const char *const *set;
} sp_smmu_presets[] = {
	{ "mmu-500", true, sp_mmu500 },
	{ "smmuv3", false, sp_smmuv3 },
};

int iopt_sim_smmu_preset(struct iopt_sim_smmu_params *m, const char *name)
{
	struct iopt_sim_smmu_params q, d;

	if (!m || !name)
		return -EINVAL;
	for (size_t i = 0; i < SP_COUNT(sp_smmu_presets); i++) {
		if (strcmp(sp_smmu_presets[i].name, name))
			continue;
		q = *m;
		iopt_sim_smmu_params_default(&d);
		if (sp_smmu_presets[i].v2)
			q.v2 = d.v2;
		else
			q.v3 = d.v3;
		if (!sp_apply_list(sp_smmu, SP_COUNT(sp_smmu), &q,
				   sp_smmu_presets[i].set))
			return -EINVAL;
		*m = q;
		return 0;
	}
	return -ENOENT;
}

const char *iopt_sim_smmu_preset_name(unsigned i)
{
	return i < SP_COUNT(sp_smmu_presets) ? sp_smmu_presets[i].name : NULL;
}
