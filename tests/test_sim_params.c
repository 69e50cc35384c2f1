/* SPDX-License-Identifier: MIT */
/*
 * The simulation's parameters by name (iopgtable/sim.h; docs/sim.md,
 * "Parameters" and "Platforms"), against this file's own table of the
 * fields (name, offset, kind, range): every name sets its field and reads
 * back; every bad value (unknown name, empty, negative, past 2^64 - 1,
 * trailing characters, out of range) gives -EINVAL and leaves the struct
 * byte for byte as it was; the platforms and SMMU presets set the values
 * docs/sim.md's tables give (written here as constants) and nothing else;
 * the hash is FNV-1a 64 over "name=value\n" lines as computed here, is
 * equal for equal parameters and changes with any single one. Runs on the
 * host library, which has the same functions.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <iopgtable/sim.h>

enum kind { K_U32, K_UINT, K_U64, K_REAL, K_ENUM };

struct field {
	const char *name;
	size_t off;
	enum kind kind;
	const char *good;		/* a valid value other than the default */
	const char *too_big;		/* the smallest integer out of range, or NULL */
	const char *too_small;		/* the largest below range, or NULL */
};

#define E(f) #f, offsetof(struct iopt_sim_params, f)
#define C32(f, g) { E(f), K_U32, g, "4294967296", NULL }

/* Independent of src/sim/sim_params.c: sim.h's ranges, field by field. */
static const struct field engine[] = {
	{ E(cpus), K_UINT, "7", "257", "0" },
	{ E(seed), K_U64, "0xdeadbeef", NULL, NULL },
	{ E(memmodel), K_ENUM, "tso", NULL, NULL },
	{ E(sched), K_ENUM, "pct", NULL, NULL },
	{ E(pct_depth), K_UINT, "5", "4294967296", NULL },
	{ E(pct_steps), K_U64, "123456789012", NULL, NULL },
	{ E(cpu_ghz), K_REAL, "3.25", "1000.5", "0" },
	C32(hit, "5"),
	C32(miss_mem, "251"),
	C32(fetch_shared, "111"),
	C32(fetch_modified, "121"),
	C32(upgrade, "4294967295"),
	C32(per_sharer, "0"),
	C32(transfer, "0x10"),
	{ E(cores_per_cluster), K_UINT, "4", "257", NULL },
	{ E(clusters_per_socket), K_UINT, "2", "257", NULL },
	C32(cross_cluster_pct, "150"),
	C32(cross_socket_pct, "301"),
	C32(atomic_extra, "21"),
	C32(fence, "31"),
	C32(clock_read, "41"),
	C32(relax, "11"),
	C32(mmio, "501"),
	C32(mmio_port, "11"),
	C32(call, "3"),
	{ E(sb_entries), K_UINT, "8", "4294967296", NULL },
	C32(sb_drain_min, "1"),
	C32(sb_drain_max, "300"),
	{ E(stack_bytes), K_U64, "16384", NULL, "16383" },
	{ E(pct_quantum), K_U64, "18446744073709551615", NULL, NULL },
	{ E(max_cycles), K_U64, "1000000", NULL, NULL },
	{ E(ipc), K_REAL, "2.5", "64.001", NULL },
	{ E(sched_slice), K_U64, "3000000", NULL, NULL },
	C32(ctx_switch, "4001"),
	{ E(wake_idle), K_UINT, "0", "2", NULL },
	{ E(preempt_spin), K_UINT, "0", "2", NULL },
	C32(irq_entry, "999"),
	{ E(share_cpus), K_UINT, "1", "2", NULL },
	{ E(atomic_far), K_UINT, "1", "2", NULL },
	C32(far_atomic, "121"),
	C32(far_atomic_home, "0"),
	C32(cmo_line, "11"),
	C32(cmo_barrier, "4294967295"),
};

#undef E
#define E(f) #f, offsetof(struct iopt_sim_smmu_params, f)
#define SLOTS(f) { E(f), K_UINT, "3", "4294967296", "0" }
#define CYC(f) { E(f), K_UINT, "777", "4294967296", NULL }

static const struct field smmu[] = {
	SLOTS(v3.translation_slots), SLOTS(v3.walk_slots),
	CYC(v3.cmd_cycles), CYC(v3.tlbi_cycles), CYC(v3.cfgi_cycles),
	CYC(v3.sync_cycles), CYC(v3.msi_cycles), CYC(v3.event_cycles),
	CYC(v3.tlb.latency), CYC(v3.walk.latency), CYC(v3.cfg.latency),
	SLOTS(v2.translation_slots), SLOTS(v2.walk_slots),
	CYC(v2.tlbi_cycles), CYC(v2.sync_cycles), CYC(v2.ats_cycles),
	CYC(v2.tlb.latency), CYC(v2.walk.latency),
};

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* Bad values for every field, whatever its kind. */
static const char *const bad_any[] = {
	"", "-1", "+1", " 1", "1 ", "1x", "0x", "x1", "18446744073709551616",
	"99999999999999999999999", "nan", "inf", "-0", "1e", NULL,
};

/* The field's value as text, formatted here. */
static void field_text(const struct field *f, const void *base, char *buf,
		       size_t len)
{
	const char *p = (const char *)base + f->off;
	static const char *const mem[] = { "sc", "tso" };
	static const char *const sched[] = { "random", "pct" };

	switch (f->kind) {
	case K_U32:
		snprintf(buf, len, "%u", (unsigned)*(const uint32_t *)p);
		break;
	case K_UINT:
		snprintf(buf, len, "%u", *(const unsigned *)p);
		break;
	case K_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p);
		break;
	case K_REAL:
		snprintf(buf, len, "%.17g", *(const double *)p);
		break;
	case K_ENUM:
		snprintf(buf, len, "%s", !strcmp(f->name, "memmodel") ?
			 mem[*(const int *)p] : sched[*(const int *)p]);
		break;
	}
}

/* What the good value must store, as this file formats it. */
static const char *good_text(const struct field *f, char *buf, size_t len)
{
	unsigned long long v;

	if (f->kind == K_ENUM)
		return f->good;
	if (f->kind == K_REAL) {
		snprintf(buf, len, "%.17g", strtod(f->good, NULL));
		return buf;
	}
	v = strtoull(f->good, NULL, 0);
	snprintf(buf, len, "%llu", v);
	return buf;
}

typedef int (*set_fn)(void *base, const char *name, const char *value);
typedef int (*get_fn)(const void *base, const char *name, char *buf, size_t len);

static int eng_set(void *b, const char *n, const char *v)
{
	return iopt_sim_param_set(b, n, v);
}

static int eng_get(const void *b, const char *n, char *buf, size_t len)
{
	return iopt_sim_param_get(b, n, buf, len);
}

static int smmu_set(void *b, const char *n, const char *v)
{
	return iopt_sim_smmu_param_set(b, n, v);
}

static int smmu_get(const void *b, const char *n, char *buf, size_t len)
{
	return iopt_sim_smmu_param_get(b, n, buf, len);
}

/* Every name of the table, and only those, in the library's order. */
static void check_names(const struct field *t, size_t n,
			const char *(*name)(unsigned))
{
	for (unsigned i = 0; i < n; i++) {
		assert_non_null(name(i));
		assert_string_equal(name(i), t[i].name);
	}
	assert_null(name((unsigned)n));
}

static void check_set_get(const struct field *t, size_t n, void *base,
			  size_t size, set_fn set, get_fn get)
{
	unsigned char before[512], after[512];
	char want[64], got[64], lib[64];

	assert_true(size <= sizeof(before));
	for (size_t i = 0; i < n; i++) {
		memcpy(before, base, size);
		assert_int_equal(set(base, t[i].name, t[i].good), 0);
		field_text(&t[i], base, got, sizeof(got));
		assert_string_equal(got, good_text(&t[i], want, sizeof(want)));
		assert_int_equal(get(base, t[i].name, lib, sizeof(lib)), 0);
		assert_string_equal(lib, got);
		/* Only that field changed. */
		memcpy(after, base, size);
		memcpy(base, before, size);
		assert_int_equal(set(base, t[i].name, t[i].good), 0);
		for (size_t b = 0; b < size; b++) {
			bool in_field = b >= t[i].off && b < t[i].off +
				(t[i].kind == K_U64 || t[i].kind == K_REAL ? 8 : 4);

			if (!in_field)
				assert_int_equal(after[b], before[b]);
		}
		/* And back: the value read back sets the same struct. */
		memcpy(base, before, size);
		assert_int_equal(set(base, t[i].name, lib), 0);
		assert_memory_equal(base, after, size);
		memcpy(base, before, size);
	}
}

static void expect_rejected(const struct field *f, void *base, size_t size,
			    set_fn set, const char *value)
{
	unsigned char copy[512];

	memcpy(copy, base, size);
	if (set(base, f->name, value) != -EINVAL)
		fail_msg("%s='%s' accepted", f->name, value);
	assert_memory_equal(base, copy, size);
}

static void check_bad(const struct field *t, size_t n, void *base,
		      size_t size, set_fn set)
{
	unsigned char copy[512];

	for (size_t i = 0; i < n; i++) {
		for (const char *const *v = bad_any; *v; v++)
			expect_rejected(&t[i], base, size, set, *v);
		if (t[i].too_big)
			expect_rejected(&t[i], base, size, set, t[i].too_big);
		if (t[i].too_small)
			expect_rejected(&t[i], base, size, set, t[i].too_small);
		if (t[i].kind == K_ENUM) {
			expect_rejected(&t[i], base, size, set, "0");
			expect_rejected(&t[i], base, size, set, "SC");
		}
		if (t[i].kind == K_REAL)
			expect_rejected(&t[i], base, size, set, "1.5.");
	}
	memcpy(copy, base, size);
	assert_int_equal(set(base, "no_such_parameter", "1"), -EINVAL);
	assert_int_equal(set(base, "", "1"), -EINVAL);
	assert_int_equal(set(base, NULL, "1"), -EINVAL);
	assert_int_equal(set(base, t[0].name, NULL), -EINVAL);
	/* A prefix or a longer name is not the name. */
	assert_int_equal(set(base, "hi", "1"), -EINVAL);
	assert_int_equal(set(base, "hit_", "1"), -EINVAL);
	assert_int_equal(set(NULL, t[0].name, t[0].good), -EINVAL);
	assert_memory_equal(base, copy, size);
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t hash_here(const struct field *t, size_t n, const void *base,
			  uint64_t h)
{
	char v[64], line[128];

	for (size_t i = 0; i < n; i++) {
		field_text(&t[i], base, v, sizeof(v));
		snprintf(line, sizeof(line), "%s=%s\n", t[i].name, v);
		h = fnv(h, line);
	}
	return h;
}

static void t_engine_names(void **state)
{
	(void)state;
	check_names(engine, N(engine), iopt_sim_param_name);
}

static void t_engine_set_get(void **state)
{
	struct iopt_sim_params p;

	(void)state;
	iopt_sim_params_default(&p);
	check_set_get(engine, N(engine), &p, sizeof(p), eng_set, eng_get);
}

static void t_engine_bad(void **state)
{
	struct iopt_sim_params p;

	(void)state;
	iopt_sim_params_default(&p);
	check_bad(engine, N(engine), &p, sizeof(p), eng_set);
}

static void t_get_errors(void **state)
{
	struct iopt_sim_params p;
	char buf[8] = "zzzzzzz";

	(void)state;
	iopt_sim_params_default(&p);
	assert_int_equal(iopt_sim_param_get(&p, "nope", buf, sizeof(buf)), -EINVAL);
	assert_string_equal(buf, "zzzzzzz");
	assert_int_equal(iopt_sim_param_get(&p, "hit", NULL, 8), -EINVAL);
	assert_int_equal(iopt_sim_param_get(NULL, "hit", buf, sizeof(buf)), -EINVAL);
	/* "2.5" needs 4 bytes. */
	assert_int_equal(iopt_sim_param_get(&p, "cpu_ghz", buf, 3), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(iopt_sim_param_get(&p, "cpu_ghz", buf, 4), 0);
	assert_string_equal(buf, "2.5");
}

/* docs/sim.md, "Parameters": the defaults. */
static void t_defaults(void **state)
{
	struct iopt_sim_params p;

	(void)state;
	iopt_sim_params_default(&p);
	assert_int_equal(p.cpus, 4);
	assert_true(p.cpu_ghz == 2.5);
	assert_int_equal(p.hit, 4);
	assert_int_equal(p.miss_mem, 250);
	assert_int_equal(p.fetch_shared, 110);
	assert_int_equal(p.fetch_modified, 120);
	assert_int_equal(p.upgrade, 110);
	assert_int_equal(p.transfer, 120);
	assert_int_equal(p.cross_socket_pct, 300);
	assert_int_equal(p.mmio, 500);
	assert_true(p.ipc == 2.0);
	/* "Far atomics", "Cache maintenance": near by default. */
	assert_int_equal(p.atomic_far, 0);
	assert_int_equal(p.far_atomic, 120);
	assert_int_equal(p.far_atomic_home, 20);
	assert_int_equal(p.cmo_line, 10);
	assert_int_equal(p.cmo_barrier, 120);
}

struct setting {
	const char *name, *value;
};

/* docs/sim.md, "Platforms": what each sets over the defaults. */
static const struct setting set_a72[] = {
	{ "cpu_ghz", "3" }, { "miss_mem", "300" }, { "fetch_shared", "50" },
	{ "fetch_modified", "60" }, { "upgrade", "50" }, { "transfer", "60" },
	{ "cores_per_cluster", "4" }, { "cross_cluster_pct", "250" },
	{ "mmio", "600" }, { "ipc", "1.5" }, { "sched_slice", "9000000" },
	{ "cmo_barrier", "300" },
	{ NULL, NULL },
};
static const struct setting set_tx2[] = {
	{ "cpu_ghz", "2.2000000000000002" }, { "miss_mem", "240" },
	{ "fetch_shared", "30" }, { "fetch_modified", "30" },
	{ "upgrade", "30" }, { "transfer", "30" },
	{ "cores_per_cluster", "4" }, { "clusters_per_socket", "32" },
	{ "cross_cluster_pct", "400" }, { "cross_socket_pct", "1200" },
	{ "mmio", "440" }, { "ipc", "1.5" }, { "sched_slice", "6600000" },
	{ NULL, NULL },
};
static const struct setting set_kp920[] = {
	{ "cpu_ghz", "2.6000000000000001" }, { "miss_mem", "260" },
	{ "fetch_shared", "80" }, { "fetch_modified", "90" },
	{ "upgrade", "80" }, { "transfer", "90" },
	{ "cores_per_cluster", "4" }, { "clusters_per_socket", "16" },
	{ "cross_cluster_pct", "150" }, { "mmio", "520" },
	{ "sched_slice", "7800000" },
	{ "far_atomic", "135" }, { "cmo_barrier", "135" }, { NULL, NULL },
};
static const struct {
	const char *name;
	const struct setting *set;
} platforms[] = {
	{ "graviton2", NULL }, { "a72-8", set_a72 }, { "thunderx2", set_tx2 },
	{ "kunpeng920", set_kp920 },
};

/* For every field of t: the value the settings give it, else base's. */
static void check_settings(const struct field *t, size_t n, const void *got,
			   const void *base, const struct setting *set,
			   const char *who)
{
	char g[64], b[64];

	for (size_t i = 0; i < n; i++) {
		const char *want = NULL;

		for (const struct setting *s = set; s && s->name; s++)
			if (!strcmp(s->name, t[i].name))
				want = s->value;
		field_text(&t[i], got, g, sizeof(g));
		field_text(&t[i], base, b, sizeof(b));
		if (strcmp(g, want ? want : b))
			fail_msg("%s: %s is %s, wanted %s", who, t[i].name, g,
				 want ? want : b);
		if (want && !strcmp(want, b))
			fail_msg("%s: %s documented as changed but is the default",
				 who, t[i].name);
	}
}

static void t_platforms(void **state)
{
	struct iopt_sim_params d, p, copy;

	(void)state;
	iopt_sim_params_default(&d);
	for (unsigned i = 0; i < N(platforms); i++) {
		assert_string_equal(iopt_sim_platform_name(i), platforms[i].name);
		assert_non_null(iopt_sim_platform_about(i));
		/* Over the defaults it sets exactly its documented values. */
		p = d;
		assert_int_equal(iopt_sim_platform_apply(&p, platforms[i].name), 0);
		check_settings(engine, N(engine), &p, &d, platforms[i].set,
			       platforms[i].name);
		/* Over anything: the costs come from defaults and the preset,
		 * the run's own fields stay. */
		for (size_t f = 0; f < N(engine); f++)
			assert_int_equal(eng_set(&p, engine[f].name, engine[f].good), 0);
		copy = p;
		assert_int_equal(iopt_sim_platform_apply(&p, platforms[i].name), 0);
		assert_int_equal(p.cpus, copy.cpus);
		assert_int_equal(p.seed, copy.seed);
		assert_int_equal(p.memmodel, copy.memmodel);
		assert_int_equal(p.sched, copy.sched);
		assert_int_equal(p.pct_depth, copy.pct_depth);
		assert_int_equal(p.pct_steps, copy.pct_steps);
		assert_int_equal(p.pct_quantum, copy.pct_quantum);
		assert_int_equal(p.stack_bytes, copy.stack_bytes);
		assert_int_equal(p.max_cycles, copy.max_cycles);
		assert_int_equal(p.share_cpus, copy.share_cpus);
		p.cpus = d.cpus;
		p.seed = d.seed;
		p.memmodel = d.memmodel;
		p.sched = d.sched;
		p.pct_depth = d.pct_depth;
		p.pct_steps = d.pct_steps;
		p.pct_quantum = d.pct_quantum;
		p.stack_bytes = d.stack_bytes;
		p.max_cycles = d.max_cycles;
		p.share_cpus = d.share_cpus;
		check_settings(engine, N(engine), &p, &d, platforms[i].set,
			       platforms[i].name);
	}
	assert_null(iopt_sim_platform_name(N(platforms)));
	/* graviton2 is the defaults, byte for byte. */
	p = d;
	assert_int_equal(iopt_sim_platform_apply(&p, "graviton2"), 0);
	assert_memory_equal(&p, &d, sizeof(p));
	/* Unknown: -ENOENT, nothing changed. */
	p = d;
	assert_int_equal(eng_set(&p, "hit", "9"), 0);
	copy = p;
	assert_int_equal(iopt_sim_platform_apply(&p, "graviton3"), -ENOENT);
	assert_int_equal(iopt_sim_platform_apply(&p, ""), -ENOENT);
	assert_int_equal(iopt_sim_platform_apply(&p, NULL), -EINVAL);
	assert_int_equal(iopt_sim_platform_apply(NULL, "a72-8"), -EINVAL);
	assert_memory_equal(&p, &copy, sizeof(p));
}

static void t_engine_hash(void **state)
{
	struct iopt_sim_params d, p, q;
	uint64_t h0;

	(void)state;
	iopt_sim_params_default(&d);
	h0 = iopt_sim_params_hash(&d);
	assert_true(h0 == hash_here(engine, N(engine), &d, 0xcbf29ce484222325ull));
	/* Equal parameters, equal hashes; padding and other bytes aside. */
	memset(&q, 0xa5, sizeof(q));
	for (size_t i = 0; i < N(engine); i++) {
		char v[64];

		field_text(&engine[i], &d, v, sizeof(v));
		assert_int_equal(eng_set(&q, engine[i].name, v), 0);
	}
	assert_true(iopt_sim_params_hash(&q) == h0);
	/* Any single change changes it. */
	for (size_t i = 0; i < N(engine); i++) {
		p = d;
		assert_int_equal(eng_set(&p, engine[i].name, engine[i].good), 0);
		if (iopt_sim_params_hash(&p) == h0)
			fail_msg("hash unchanged by %s", engine[i].name);
		assert_true(iopt_sim_params_hash(&p) ==
			    hash_here(engine, N(engine), &p, 0xcbf29ce484222325ull));
	}
	for (unsigned i = 1; i < N(platforms); i++) {
		p = d;
		assert_int_equal(iopt_sim_platform_apply(&p, platforms[i].name), 0);
		assert_true(iopt_sim_params_hash(&p) != h0);
	}
}

static void t_smmu_names(void **state)
{
	(void)state;
	check_names(smmu, N(smmu), iopt_sim_smmu_param_name);
}

static void t_smmu_defaults(void **state)
{
	struct iopt_sim_smmu_params m;
	struct iopt_smmuv3_params v3;
	struct iopt_smmuv2_params v2;

	(void)state;
	iopt_sim_smmu_params_default(&m);
	iopt_smmuv3_default_params(&v3);
	assert_int_equal(iopt_smmuv2_preset("mmu-500", &v2), 0);
	assert_memory_equal(&m.v3, &v3, sizeof(v3));
	assert_memory_equal(&m.v2, &v2, sizeof(v2));
}

static void t_smmu_set_get(void **state)
{
	struct iopt_sim_smmu_params m;

	(void)state;
	iopt_sim_smmu_params_default(&m);
	check_set_get(smmu, N(smmu), &m, sizeof(m), smmu_set, smmu_get);
}

static void t_smmu_bad(void **state)
{
	struct iopt_sim_smmu_params m;

	(void)state;
	iopt_sim_smmu_params_default(&m);
	check_bad(smmu, N(smmu), &m, sizeof(m), smmu_set);
	/* A model's field without its prefix is no name. */
	assert_int_equal(smmu_set(&m, "sync_cycles", "1"), -EINVAL);
	assert_int_equal(smmu_set(&m, "v4.sync_cycles", "1"), -EINVAL);
}

/* docs/sim.md, "SMMU presets". */
static const struct setting set_mmu500[] = {
	{ "v2.sync_cycles", "200" }, { NULL, NULL },
};

static void t_smmu_presets(void **state)
{
	struct iopt_sim_smmu_params d, m, copy;

	(void)state;
	iopt_sim_smmu_params_default(&d);
	assert_string_equal(iopt_sim_smmu_preset_name(0), "mmu-500");
	assert_string_equal(iopt_sim_smmu_preset_name(1), "smmuv3");
	assert_null(iopt_sim_smmu_preset_name(2));
	m = d;
	assert_int_equal(iopt_sim_smmu_preset(&m, "mmu-500"), 0);
	check_settings(smmu, N(smmu), &m, &d, set_mmu500, "mmu-500");
	/* Features untouched: only the cycle costs differ. */
	copy = d;
	copy.v2.sync_cycles = 200;
	assert_memory_equal(&m, &copy, sizeof(m));
	/* A preset sets its own half only. */
	assert_int_equal(smmu_set(&m, "v3.sync_cycles", "5"), 0);
	assert_int_equal(smmu_set(&m, "v2.tlbi_cycles", "5"), 0);
	assert_int_equal(iopt_sim_smmu_preset(&m, "mmu-500"), 0);
	assert_int_equal(m.v3.sync_cycles, 5);
	assert_int_equal(m.v2.tlbi_cycles, d.v2.tlbi_cycles);
	assert_int_equal(iopt_sim_smmu_preset(&m, "smmuv3"), 0);
	assert_int_equal(m.v3.sync_cycles, d.v3.sync_cycles);
	assert_int_equal(m.v2.sync_cycles, 200);
	copy = m;
	assert_int_equal(iopt_sim_smmu_preset(&m, "mmu-400"), -ENOENT);
	assert_int_equal(iopt_sim_smmu_preset(&m, NULL), -EINVAL);
	assert_int_equal(iopt_sim_smmu_preset(NULL, "mmu-500"), -EINVAL);
	assert_memory_equal(&m, &copy, sizeof(m));
}

static void t_smmu_hash(void **state)
{
	struct iopt_sim_smmu_params d, m;
	struct iopt_sim_params p;
	uint64_t h0, he;

	(void)state;
	iopt_sim_smmu_params_default(&d);
	iopt_sim_params_default(&p);
	he = iopt_sim_params_hash(&p);
	h0 = iopt_sim_smmu_params_hash(&d, he);
	/* It continues the engine's hash over the models' lines. */
	assert_true(h0 == hash_here(smmu, N(smmu), &d, he));
	assert_true(h0 == hash_here(smmu, N(smmu), &d,
				    hash_here(engine, N(engine), &p,
					      0xcbf29ce484222325ull)));
	m = d;
	assert_true(iopt_sim_smmu_params_hash(&m, he) == h0);
	for (size_t i = 0; i < N(smmu); i++) {
		m = d;
		assert_int_equal(smmu_set(&m, smmu[i].name, smmu[i].good), 0);
		if (iopt_sim_smmu_params_hash(&m, he) == h0)
			fail_msg("hash unchanged by %s", smmu[i].name);
	}
	m = d;
	assert_int_equal(iopt_sim_smmu_preset(&m, "mmu-500"), 0);
	assert_true(iopt_sim_smmu_params_hash(&m, he) != h0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_engine_names),
		cmocka_unit_test(t_engine_set_get),
		cmocka_unit_test(t_engine_bad),
		cmocka_unit_test(t_get_errors),
		cmocka_unit_test(t_defaults),
		cmocka_unit_test(t_platforms),
		cmocka_unit_test(t_engine_hash),
		cmocka_unit_test(t_smmu_names),
		cmocka_unit_test(t_smmu_defaults),
		cmocka_unit_test(t_smmu_set_get),
		cmocka_unit_test(t_smmu_bad),
		cmocka_unit_test(t_smmu_presets),
		cmocka_unit_test(t_smmu_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
