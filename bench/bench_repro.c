/* SPDX-License-Identifier: MIT */
/*
 * iopt-bench repro [CASE...] [--quick] [--seed S] [--json] [--out FILE]
 * iopt-bench repro --jobs [--slurm] [CASE...] [--quick] [--seed S]
 * iopt-bench repro --point CASE:INDEX [--quick] [--seed S]
 * iopt-bench repro --merge FILE... [CASE...]
 *
 * The harness of the reproductions (bench_repro.h; the method and the
 * cases: docs/experiments.md). A case's points are point 0, the preset,
 * and one point per value of each swept parameter; a point's figures
 * come from simulations run as child processes (iopt-bench-sim beside
 * this binary), each point independent of the others. Every point
 * becomes JSON lines, one per published row, and every table is printed
 * from those lines: the direct run, --point (lines only) followed by
 * --merge, and --jobs | parallel | --merge print the same tables.
 *
 * Only deterministic fields go into the lines (no host time, no load):
 * the same command prints the same bytes. Progress (points and runs done,
 * elapsed host time) goes to stderr, never to stdout.
 *
 * Exit status: 0; 2 for a bad command line (a message naming it); 1 when
 * a simulation failed, a file could not be read, or a case named on the
 * command line cannot run (a message saying why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iopgtable/sim.h>

#include "bench.h"
#include "bench_repro.h"

#define WITHIN		0.35	/* design brief, section 8 */
#define FLAT		0.05	/* a ratio within 5% of 1 has no direction */
#define MAX_POINTS	64

static double t_start;		/* host seconds at the start */
static unsigned points_done, points_total;

static double host_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- child processes ---------------------------------------------------- */

/* The path of a program beside this one. */
static bool sibling(const char *name, char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	char *slash;

	if (n <= 0)
		return false;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash + 1 - path) + strlen(name) + 1 > len)
		return false;
	strcpy(slash + 1, name);
	return true;
}

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		if (!b->s) {
			fprintf(stderr, "iopt-bench repro: out of memory\n");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		buf_add(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);

	if (!big)
		exit(1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf_add(b, big, (size_t)n);
	free(big);
}

/* Run argv (argv[0] a path), its stdout and stderr into out and err: its
 * exit status, or -1 when it could not start or was killed. */
static int spawn(char *const argv[], struct buf *out, struct buf *err)
{
	int po[2], pe[2], st;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC))
		return -1;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return -1;
	}
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;

	while (open_fds) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			char tmp[4096];
			ssize_t n;

			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			n = read(fds[i].fd, tmp, sizeof(tmp));
			if (n > 0) {
				buf_add(i ? err : out, tmp, (size_t)n);
				continue;
			}
			close(fds[i].fd);
			fds[i].fd = -1;
			open_fds--;
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- flat JSON objects -------------------------------------------------- */

/* The value after "key": in a one-line object, or NULL. */
static const char *jfield(const char *line, const char *key)
{
	size_t l = strlen(key);

	for (const char *p = line; (p = strchr(p, '"')); p++)
		if (!strncmp(p + 1, key, l) && p[1 + l] == '"' && p[2 + l] == ':')
			return p + 3 + l;
	return NULL;
}

static bool jnum(const char *line, const char *key, double *v)
{
	const char *p = jfield(line, key);
	char *end;

	if (!p || !strncmp(p, "null", 4))
		return false;
	*v = strtod(p, &end);
	return end != p;
}

/* A count field into *dst; left as it was when the line lacks it. */
static void jcount(const char *line, const char *key, uint64_t *dst)
{
	double v;

	if (jnum(line, key, &v))
		*dst = (uint64_t)v;
}

static bool jstr(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = jfield(line, key), *q;

	if (!p || *p != '"' || !(q = strchr(p + 1, '"')) ||
	    (size_t)(q - p - 1) >= len)
		return false;
	memcpy(buf, p + 1, (size_t)(q - p - 1));
	buf[q - p - 1] = 0;
	return true;
}

static bool jhex(const char *line, const char *key, uint64_t *v)
{
	char s[32];

	if (!jstr(line, key, s, sizeof(s)))
		return false;
	*v = strtoull(s, NULL, 16);
	return true;
}

/* ---- the simulations ---------------------------------------------------- */

int repro_sim(const struct repro_case *c, struct repro_point *p,
	      const char *suite, unsigned cpus, const char *const *args,
	      struct repro_sim *out)
{
	char path[PATH_MAX], ncpu[16], seed[24], preset[256];
	char *argv[REPRO_MAX_ARGS + 16];
	struct buf o = { 0 }, e = { 0 };
	int n = 0, st;

	if (!sibling("iopt-bench-sim", path, sizeof(path))) {
		fprintf(stderr, "iopt-bench repro: cannot find iopt-bench-sim\n");
		return -1;
	}
	snprintf(ncpu, sizeof(ncpu), "%u", cpus);
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)p->seed);
	snprintf(preset, sizeof(preset), "%s", c->preset);
	argv[n++] = path;
	argv[n++] = (char *)suite;
	argv[n++] = "--sim";
	argv[n++] = ncpu;
	argv[n++] = "--seed";
	argv[n++] = seed;
	for (char *save, *t = strtok_r(preset, " ", &save); t && n < REPRO_MAX_ARGS;
	     t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	if (p->set_opt) {
		argv[n++] = (char *)p->set_opt;
		argv[n++] = (char *)p->set_val;
	}
	for (unsigned i = 0; args[i] && n < REPRO_MAX_ARGS + 12; i++)
		argv[n++] = (char *)args[i];
	argv[n++] = "--json";
	argv[n] = NULL;
	st = spawn(argv, &o, &e);
	p->runs++;
	fprintf(stderr, "iopt-bench repro: [point %u/%u] %s: run %u/%u, %.1f s\n",
		points_done + 1, points_total, p->label, p->runs, p->runs_total,
		host_s() - t_start);
	/* The last JSON object the suite printed. */
	const char *line = NULL;

	for (char *s = o.s; s && *s; ) {
		char *nl = strchr(s, '\n');

		if (*s == '{')
			line = s;
		if (!nl)
			break;
		*nl = 0;
		s = nl + 1;
	}
	double th = 0, v;

	memset(out, 0, sizeof(*out));
	out->gbps = out->iops = out->byte_cycles = out->submit_cycles = NAN;
	/* A figure: the dma suite's ops_per_sec or a workload's. */
	bool fig = line && (jnum(line, "ops_per_sec", &out->ops_per_sec) |
			    jnum(line, "gbps", &out->gbps) |
			    jnum(line, "iops", &out->iops));

	if (st || !fig || !jhex(line, "trace_hash", &out->trace_hash) ||
	    !jhex(line, "sim_params", &out->sim_params)) {
		fprintf(stderr, "iopt-bench repro: %s: '%s", c->name, path);
		for (int i = 1; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, "' failed (exit %d):\n%s", st, e.s ? e.s : "");
		free(o.s);
		free(e.s);
		return -1;
	}
	jnum(line, "map_ns", &out->map_ns);
	jnum(line, "unmap_ns", &out->unmap_ns);
	if (jnum(line, "threads", &th))
		out->threads = (unsigned)th;
	jcount(line, "errors", &out->errors);
	jcount(line, "sync_timeouts", &out->sync_timeouts);
	jcount(line, "sync_restarts", &out->sync_restarts);
	jcount(line, "sync_polls", &out->sync_polls);
	jcount(line, "sync_polls_active", &out->sync_polls_active);
	jcount(line, "nested_syncs", &out->nested_syncs);
	if (jnum(line, "sync_waits_max", &v))
		out->sync_waits_max = (unsigned)v;
	jnum(line, "byte_cycles", &out->byte_cycles);
	jnum(line, "submit_cycles", &out->submit_cycles);
	free(o.s);
	free(e.s);
	return 0;
}

bool repro_suite_has_opt(const char *suite, const char *opt)
{
	char path[PATH_MAX], want[128];
	char *argv[] = { path, (char *)suite, "--help", NULL };
	struct buf o = { 0 }, e = { 0 };
	bool has = false;

	if (!sibling("iopt-bench", path, sizeof(path)))
		return false;
	snprintf(want, sizeof(want), "--%s", opt);
	if (spawn(argv, &o, &e) == 0 && o.s) {
		size_t l = strlen(want);

		for (const char *s = o.s; (s = strstr(s, want)); s += l)
			if (!s[l] || s[l] == ' ' || s[l] == '\n' || s[l] == '=')
				has = true;
	}
	free(o.s);
	free(e.s);
	return has;
}

bool repro_has_param(const char *kind, const char *name)
{
	char tmp[64];

	if (!strcmp(kind, "sim-param")) {
		struct iopt_sim_params p;

		iopt_sim_params_default(&p);
		return iopt_sim_param_get(&p, name, tmp, sizeof(tmp)) == 0;
	}
	struct iopt_sim_smmu_params m;

	iopt_sim_smmu_params_default(&m);
	return iopt_sim_smmu_param_get(&m, name, tmp, sizeof(tmp)) == 0;
}

/* ---- points -------------------------------------------------------------- */

static unsigned sweep_count(const struct repro_sweep *s, bool quick)
{
	const char *const *v = quick ? s->quick : s->values;
	unsigned n = 0;

	while (n < 4 && v[n])
		n++;
	return n;
}

static unsigned case_points(const struct repro_case *c, bool quick)
{
	unsigned n = 1;

	if (c->status != REPRO_RUNS || (c->missing && c->missing()))
		return 1;
	for (unsigned i = 0; i < c->nsweep; i++)
		n += sweep_count(&c->sweep[i], quick);
	return n;
}

/* Point idx's setting: opt NULL for point 0. */
static void point_setting(const struct repro_case *c, bool quick, unsigned idx,
			  const char **opt, const char **name, const char **val)
{
	*opt = *name = *val = NULL;
	for (unsigned i = 0, k = 1; i < c->nsweep; i++) {
		unsigned n = sweep_count(&c->sweep[i], quick);

		if (idx < k + n) {
			if (idx >= k) {
				*opt = c->sweep[i].opt;
				*name = c->sweep[i].name;
				*val = (quick ? c->sweep[i].quick :
					c->sweep[i].values)[idx - k];
			}
			return;
		}
		k += n;
	}
}

static uint64_t fnv_mix(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* A derived row's hash: the two rows' hashes, mixed; equal ones stay. */
static uint64_t pair_hash(uint64_t a, uint64_t b)
{
	return a == b ? a : fnv_mix(fnv_mix(0xcbf29ce484222325ull, a), b);
}

static void line_head(struct buf *b, const struct repro_case *c, unsigned idx,
		      unsigned npts, const char *setting, bool quick,
		      uint64_t seed)
{
	buf_printf(b, "{\"suite\":\"repro\",\"case\":\"%s\",\"point\":%u,"
		   "\"points\":%u,\"setting\":\"%s\",\"preset\":\"%s\","
		   "\"quick\":%s,\"seed\":%llu,", c->name, idx, npts, setting,
		   c->preset, quick ? "true" : "false", (unsigned long long)seed);
}

/*
 * Point idx of case c into JSON lines in *b: one per row, or one status
 * line when the case cannot run here. 0, or -1 when a simulation failed
 * (nothing added).
 */
static int run_point(const struct repro_case *c, bool quick, uint64_t seed,
		     unsigned idx, struct buf *b)
{
	unsigned npts = case_points(c, quick);
	const char *why = c->status == REPRO_NEEDS_WORKLOAD ?
		"needs the workload models (include/iopgtable/workload.h)" :
		c->missing ? c->missing() : NULL;
	char setting[128] = "preset", label[256], optname[64];
	const char *opt, *name, *val;

	if (why) {
		line_head(b, c, 0, 1, setting, quick, seed);
		buf_printf(b, "\"status\":\"cannot run yet: %s\"}\n", why);
		return 0;
	}
	struct repro_point *p = calloc(1, sizeof(*p));

	if (!p)
		exit(1);
	point_setting(c, quick, idx, &opt, &name, &val);
	if (opt) {
		snprintf(setting, sizeof(setting), "%s=%s", name, val);
		if (!strcmp(opt, "option")) {
			snprintf(optname, sizeof(optname), "--%s", name);
			p->option = optname;
			p->option_val = val;
		} else {
			p->set_opt = !strcmp(opt, "sim-param") ? "--sim-param" :
								 "--smmu-param";
			p->set_val = setting;
		}
	}
	snprintf(label, sizeof(label), "%s %u/%u (%s)", c->name, idx, npts - 1,
		 setting);
	p->quick = quick;
	p->seed = seed;
	p->label = label;
	p->runs_total = c->runs_per_point;
	for (unsigned r = 0; r < REPRO_MAX_ROWS; r++)
		p->ours[r] = NAN;
	if (c->run(c, p)) {
		free(p);
		return -1;
	}
	for (unsigned r = 0; r < c->nrows; r++) {
		const struct repro_row *row = &c->rows[r];
		double ours = p->ours[r], pub = row->published;
		uint64_t h = p->hash[r], pm = p->params[r];

		if (row->num >= 0) {
			ours = p->ours[row->num] / p->ours[row->den];
			if (!pub)
				pub = c->rows[row->num].published /
				      c->rows[row->den].published;
			h = pair_hash(p->hash[row->num], p->hash[row->den]);
			pm = pair_hash(p->params[row->num], p->params[row->den]);
		}
		line_head(b, c, idx, npts, setting, quick, seed);
		buf_printf(b, "\"row\":%u,\"metric\":\"%s\",\"unit\":\"%s\",", r,
			   row->metric, row->unit);
		/* JSON has no NaN or infinity: null (a published 0 has no
		 * ratio). */
		if (isfinite(ours))
			buf_printf(b, "\"ours\":%.6g,", ours);
		else
			buf_printf(b, "\"ours\":null,");
		if (isfinite(ours / pub))
			buf_printf(b, "\"ratio\":%.4g,", ours / pub);
		else
			buf_printf(b, "\"ratio\":null,");
		if (isfinite(pub))
			buf_printf(b, "\"published\":%.6g,", pub);
		else
			buf_printf(b, "\"published\":null,");
		buf_printf(b, "\"headline\":%s,"
			   "\"trace_hash\":\"%016llx\",\"sim_params\":\"%016llx\","
			   "\"status\":\"ran\"}\n",
			   row->headline ? "true" : "false",
			   (unsigned long long)h, (unsigned long long)pm);
	}
	free(p);
	return 0;
}

/* ---- tables from lines ---------------------------------------------------- */

struct cell {
	bool set;
	double ours, pub;
	uint64_t hash, params;
};

struct case_view {
	char status[256];
	bool any, quick;
	unsigned points;
	char setting[MAX_POINTS][128];
	bool have[MAX_POINTS];
	struct cell cell[MAX_POINTS][REPRO_MAX_ROWS];
};

static int sgn(double ratio)
{
	return ratio > 1 + FLAT ? 1 : ratio < 1 - FLAT ? -1 : 0;
}

static const struct repro_case *find_case(const char *name)
{
	for (unsigned i = 0; i < repro_ncases; i++)
		if (!strcmp(repro_cases[i].name, name))
			return &repro_cases[i];
	return NULL;
}

/* The case's lines into *v. */
static void view_of(const struct repro_case *c, const char *text,
		    struct case_view *v)
{
	char name[64], buf[256];

	memset(v, 0, sizeof(*v));
	for (const char *s = text; s && *s; ) {
		const char *nl = strchr(s, '\n');
		size_t l = nl ? (size_t)(nl - s) : strlen(s);
		char *line = strndup(s, l);
		double d;

		s = nl ? nl + 1 : s + l;
		if (!line)
			exit(1);
		if (!jstr(line, "suite", buf, sizeof(buf)) || strcmp(buf, "repro") ||
		    !jstr(line, "case", name, sizeof(name)) || strcmp(name, c->name) ||
		    !jstr(line, "status", buf, sizeof(buf))) {
			free(line);
			continue;
		}
		v->any = true;
		v->quick = strstr(line, "\"quick\":true") != NULL;
		if (strcmp(buf, "ran")) {
			snprintf(v->status, sizeof(v->status), "%s", buf);
			free(line);
			continue;
		}
		double pt = -1, row = -1, np = 0;

		jnum(line, "point", &pt);
		jnum(line, "row", &row);
		jnum(line, "points", &np);
		/* A row's line has "published": a figure, or null where the
		 * source gives none. */
		if (pt < 0 || pt >= MAX_POINTS || row < 0 || row >= c->nrows ||
		    !jfield(line, "published")) {
			free(line);
			continue;
		}
		unsigned p = (unsigned)pt, r = (unsigned)row;
		struct cell *cl = &v->cell[p][r];

		v->points = np > v->points ? (unsigned)np : v->points;
		v->have[p] = true;
		jstr(line, "setting", v->setting[p], sizeof(v->setting[p]));
		cl->set = true;
		cl->ours = jnum(line, "ours", &d) ? d : NAN;
		cl->pub = jnum(line, "published", &d) ? d : NAN;
		jhex(line, "trace_hash", &cl->hash);
		jhex(line, "sim_params", &cl->params);
		free(line);
	}
}

/* Headline checks of one point: how many rows within 35%, how many in
 * the published direction, of how many. */
static void judge(const struct repro_case *c, const struct case_view *v,
		  unsigned p, unsigned *within, unsigned *dir, unsigned *n)
{
	*within = *dir = *n = 0;
	for (unsigned r = 0; r < c->nrows; r++) {
		const struct cell *cl = &v->cell[p][r];

		if (!c->rows[r].headline || !cl->set)
			continue;
		(*n)++;
		if (!isfinite(cl->ours))
			continue;
		if (fabs(cl->ours / cl->pub - 1) <= WITHIN)
			(*within)++;
		if (sgn(cl->ours) == sgn(cl->pub))
			(*dir)++;
	}
}

static const char *verdict(unsigned within, unsigned dir, unsigned n)
{
	if (n && within == n && dir == n)
		return "reproduced";
	if (n && dir == n)
		return "direction only";
	return "not reproduced";
}

static void print_published(const struct repro_case *c)
{
	printf("  %-46s %-6s %12s\n", "metric", "unit", "published");
	for (unsigned r = 0; r < c->nrows; r++) {
		const struct repro_row *row = &c->rows[r];
		double pub = row->published;

		if (row->num >= 0 && !pub)
			pub = c->rows[row->num].published / c->rows[row->den].published;
		if (isfinite(pub))
			printf("  %-46s %-6s %12.4g%s\n", row->metric, row->unit, pub,
			       row->headline ? "  (headline)" : "");
		else
			printf("  %-46s %-6s %12s\n", row->metric, row->unit,
			       "(none)");
	}
}

static void print_case(const struct repro_case *c, const char *text)
{
	struct case_view *v = calloc(1, sizeof(*v));

	if (!v)
		exit(1);
	view_of(c, text, v);
	printf("== %s: %s\n   source: %s\n   set-up: %s\n   preset: %s\n",
	       c->name, c->title, c->source, c->setup, c->preset);
	if (c->status == REPRO_NEEDS_WORKLOAD || v->status[0] || !v->have[0]) {
		const char *why = v->status[0] ? v->status :
			c->status == REPRO_NEEDS_WORKLOAD ?
			"cannot run yet: needs the workload models "
			"(include/iopgtable/workload.h)" : "not run (no lines)";

		printf("   status: %s\n", why);
		print_published(c);
		printf("\n");
		free(v);
		return;
	}
	printf("   %s run, %u points\n", v->quick ? "quick" : "full", v->points);
	printf("  %-46s %-6s %11s %11s %8s  %-16s %s\n", "metric", "unit", "ours",
	       "published", "ours/pub", "trace_hash", "sim_params");
	for (unsigned r = 0; r < c->nrows; r++) {
		const struct cell *cl = &v->cell[0][r];

		if (!cl->set)
			continue;
		char q[16] = "-", pub[16] = "(none)";	/* a published 0 has no ratio */

		if (isfinite(cl->ours / cl->pub))
			snprintf(q, sizeof(q), "%.3f", cl->ours / cl->pub);
		if (isfinite(cl->pub))
			snprintf(pub, sizeof(pub), "%.4g", cl->pub);
		printf("%c %-46s %-6s %11.4g %11s %8s  %016llx %016llx\n",
		       c->rows[r].headline ? '*' : ' ', c->rows[r].metric,
		       c->rows[r].unit, cl->ours, pub, q,
		       (unsigned long long)cl->hash, (unsigned long long)cl->params);
	}
	unsigned w, d, n;

	judge(c, v, 0, &w, &d, &n);
	printf("   verdict: %s (* headline: %u of %u within %.0f%% of the "
	       "published ratio, %u of %u in its direction)\n",
	       verdict(w, d, n), w, n, WITHIN * 100, d, n);
	if (v->points <= 1) {
		printf("\n");
		free(v);
		return;
	}
	printf("   sweep (headline rows, ours):\n  %-26s", "setting");
	for (unsigned r = 0; r < c->nrows; r++) {
		char col[16];

		snprintf(col, sizeof(col), "r%u", r);
		if (c->rows[r].headline)
			printf(" %6s", col);
	}
	printf("  effect\n");
	unsigned holds = 0, swept = 0;

	for (unsigned p = 0; p < v->points && p < MAX_POINTS; p++) {
		if (!v->have[p]) {
			printf("  %-26s (no lines)\n", "?");
			continue;
		}
		printf("  %-26s", p ? v->setting[p] : "preset");
		for (unsigned r = 0; r < c->nrows; r++)
			if (c->rows[r].headline)
				printf(" %6.4g", v->cell[p][r].ours);
		judge(c, v, p, &w, &d, &n);
		printf("  %s\n", verdict(w, d, n));
		if (p) {
			swept++;
			holds += d == n;
		}
	}
	printf("  (rN: row N of the table above, from 0)\n");
	printf("   effect (every headline in the published direction) holds at "
	       "%u of %u sweep points: %s\n\n", holds, swept,
	       !swept ? "no sweep point in these lines" :
	       holds == swept ? "holds across the range" :
	       holds ? "only in part of the range" : "does not hold");
	free(v);
}

/* ---- the command line ------------------------------------------------------ */

static bool is_case(const char *s)
{
	return find_case(s) != NULL;
}

static void usage_cases(FILE *f)
{
	fprintf(f, "cases:\n");
	for (unsigned i = 0; i < repro_ncases; i++)
		fprintf(f, "  %-16s %s%s\n", repro_cases[i].name, repro_cases[i].title,
			repro_cases[i].status == REPRO_NEEDS_WORKLOAD ?
			" [needs the workload models]" : "");
}

static char *read_file(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct buf b = { 0 };
	char tmp[8192];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		buf_add(&b, tmp, n);
	if (f != stdin)
		fclose(f);
	if (!b.s)
		buf_add(&b, "", 0);
	return b.s;
}

/* Shell-quote s into f. */
static void shq(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

static void emit_jobs(const struct repro_case **sel, unsigned nsel, bool quick,
		      uint64_t seed, bool slurm)
{
	char self[PATH_MAX];
	unsigned total = 0;

	if (!sibling("iopt-bench", self, sizeof(self)))
		snprintf(self, sizeof(self), "iopt-bench");
	for (unsigned i = 0; i < nsel; i++)
		if (sel[i]->status == REPRO_RUNS)
			total += case_points(sel[i], quick);
	if (slurm) {
		printf("#!/bin/bash\n"
		       "# iopt-bench repro: one array task per point; then\n"
		       "#   iopt-bench repro --merge repro-<jobid>_*.jsonl\n"
		       "#SBATCH --job-name=iopt-repro\n"
		       "#SBATCH --array=0-%u\n"
		       "#SBATCH --ntasks=1\n"
		       "#SBATCH --cpus-per-task=1\n"
		       "#SBATCH --output=repro-%%A_%%a.jsonl\n"
		       "#SBATCH --error=repro-%%A_%%a.err\n"
		       "points=(", total ? total - 1 : 0);
		for (unsigned i = 0; i < nsel; i++)
			for (unsigned k = 0; sel[i]->status == REPRO_RUNS &&
			     k < case_points(sel[i], quick); k++)
				printf(" %s:%u", sel[i]->name, k);
		printf(" )\nexec ");
		shq(stdout, self);
		printf(" repro --point \"${points[$SLURM_ARRAY_TASK_ID]}\" --seed %llu%s\n",
		       (unsigned long long)seed, quick ? " --quick" : "");
		return;
	}
	for (unsigned i = 0; i < nsel; i++)
		for (unsigned k = 0; sel[i]->status == REPRO_RUNS &&
		     k < case_points(sel[i], quick); k++) {
			shq(stdout, self);
			printf(" repro --point %s:%u --seed %llu%s\n", sel[i]->name, k,
			       (unsigned long long)seed, quick ? " --quick" : "");
		}
}

int bench_repro_main(int argc, char **argv)
{
	bool quick = false, json = false, jobs = false, slurm = false, merge = false;
	uint64_t seed = 1;
	const char *point = NULL, *outpath = NULL;
	const struct repro_case *sel[64];
	const char *files[256];
	unsigned nsel = 0, nfiles = 0;
	char *opt_argv[256];
	int opt_argc = 0;
	bool help = false;

	/* Positionals (cases, or --merge's files) out; options to the table
	 * parser. */
	for (int i = 1; i < argc; i++)
		merge |= !strcmp(argv[i], "--merge");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help"))
			help = true;
		if (!strcmp(a, "--merge"))
			continue;
		if (!strncmp(a, "--", 2) || (i > 1 && (!strcmp(argv[i - 1], "--seed") ||
						       !strcmp(argv[i - 1], "--point") ||
						       !strcmp(argv[i - 1], "--out")))) {
			if (opt_argc < 255)
				opt_argv[opt_argc++] = argv[i];
			continue;
		}
		if (is_case(a) && !(merge && access(a, R_OK) == 0)) {
			if (nsel < 64)
				sel[nsel++] = find_case(a);
		} else if (merge) {
			if (nfiles < 256)
				files[nfiles++] = a;
		} else {
			fprintf(stderr, "iopt-bench repro: '%s' is no case (iopt-bench "
				"repro --help lists them)\n", a);
			return 2;
		}
	}
	char *pointv = NULL, *outv = NULL;
	const struct bench_opt table[] = {
		{ "quick", BENCH_FLAG, &quick, .help = "every case reduced: fewer "
		  "operations and sweep points\n(headline ratios within 10% of the "
		  "full run's)" },
		{ "seed", BENCH_U64, &seed, "S", "the simulations' seed (1)",
		  .max = UINT64_MAX },
		{ "json", BENCH_FLAG, &json, .help = "JSON lines on stdout instead of "
		  "the tables" },
		{ "jobs", BENCH_FLAG, &jobs, .help = "print one command line per point "
		  "(for GNU parallel)" },
		{ "slurm", BENCH_FLAG, &slurm, .help = "with --jobs: an sbatch script "
		  "with one array task per point" },
		{ 0 },
	};
	char *pass[256];
	int npass = 0;

	pass[npass++] = argv[0];
	for (int i = 0; i < opt_argc; i++) {
		const char *a = opt_argv[i];
		char **dst = !strncmp(a, "--point", 7) && (!a[7] || a[7] == '=') ?
			&pointv : !strncmp(a, "--out", 5) && (!a[5] || a[5] == '=') ?
			&outv : NULL;

		if (!dst) {
			pass[npass++] = opt_argv[i];
			continue;
		}
		if (a[dst == &pointv ? 7 : 5] == '=') {
			*dst = strchr(a, '=') + 1;
		} else if (i + 1 < opt_argc) {
			*dst = opt_argv[++i];
		} else {
			fprintf(stderr, "iopt-bench repro: %s needs a value\n", a);
			return 2;
		}
	}
	pass[npass] = NULL;
	const struct bench_cli cli = {
		.suite = "repro",
		.about = "the published experiments on the simulation, ours beside "
			 "the published\n(docs/experiments.md). usage:\n"
			 "  iopt-bench repro [CASE...] [--quick] [--seed S] [--json] "
			 "[--out FILE]\n"
			 "  iopt-bench repro --jobs [--slurm] [CASE...] [--quick]\n"
			 "  iopt-bench repro --point CASE:INDEX [--quick]  (JSON lines)\n"
			 "  iopt-bench repro --merge FILE... [CASE...]  (FILE - : stdin)\n"
			 "--out FILE: the JSON lines into FILE beside the tables",
		.opts = table,
		.no_sim = true,
	};
	int status;

	if (!bench_parse(&cli, npass, pass, &status)) {
		if (help && !status)
			usage_cases(stdout);
		return status;
	}
	point = pointv;
	outpath = outv;
	if (slurm && !jobs) {
		fprintf(stderr, "iopt-bench repro: --slurm goes with --jobs\n");
		return 2;
	}
	if ((merge && (jobs || point)) || (jobs && point)) {
		fprintf(stderr, "iopt-bench repro: --merge, --jobs and --point "
			"exclude each other\n");
		return 2;
	}
	bool all = !nsel;

	if (all)
		for (unsigned i = 0; i < repro_ncases && nsel < 64; i++)
			sel[nsel++] = &repro_cases[i];
	t_start = host_s();
	if (merge) {
		struct buf text = { 0 };

		if (!nfiles) {
			fprintf(stderr, "iopt-bench repro: --merge needs files (- for "
				"stdin)\n");
			return 2;
		}
		for (unsigned i = 0; i < nfiles; i++) {
			char *t = read_file(files[i]);

			if (!t) {
				fprintf(stderr, "iopt-bench repro: %s: %s\n", files[i],
					strerror(errno));
				return 1;
			}
			buf_add(&text, t, strlen(t));
			free(t);
		}
		for (unsigned i = 0; i < nsel; i++)
			print_case(sel[i], text.s);
		free(text.s);
		return 0;
	}
	if (jobs) {
		emit_jobs(sel, nsel, quick, seed, slurm);
		return 0;
	}
	if (point) {
		char name[64];
		const char *colon = strrchr(point, ':');
		char *end;
		unsigned long idx;
		const struct repro_case *c;

		if (!colon || (size_t)(colon - point) >= sizeof(name)) {
			fprintf(stderr, "iopt-bench repro: --point '%s' is not "
				"CASE:INDEX\n", point);
			return 2;
		}
		memcpy(name, point, (size_t)(colon - point));
		name[colon - point] = 0;
		c = find_case(name);
		idx = strtoul(colon + 1, &end, 10);
		if (!c || !colon[1] || *end || idx >= case_points(c, quick)) {
			fprintf(stderr, "iopt-bench repro: --point '%s': no such "
				"case or point (iopt-bench repro --jobs lists them)\n",
				point);
			return 2;
		}
		struct buf b = { 0 };

		points_total = 1;
		if (run_point(c, quick, seed, (unsigned)idx, &b))
			return 1;
		fputs(b.s ? b.s : "", stdout);
		free(b.s);
		return 0;
	}
	/* The direct run: every point of every selected case. */
	struct buf text = { 0 };
	int ret = 0;

	for (unsigned i = 0; i < nsel; i++)
		points_total += sel[i]->status == REPRO_RUNS ?
			case_points(sel[i], quick) : 0;
	for (unsigned i = 0; i < nsel; i++) {
		const struct repro_case *c = sel[i];
		if (c->status != REPRO_RUNS) {
			if (!all) {
				fprintf(stderr, "iopt-bench repro: %s cannot run yet: it "
					"needs the workload models "
					"(include/iopgtable/workload.h)\n", c->name);
				ret = 1;
			}
			continue;
		}
		for (unsigned k = 0; k < case_points(c, quick); k++) {
			if (run_point(c, quick, seed, k, &text)) {
				free(text.s);
				return 1;
			}
			points_done++;
		}
		const char *why = c->missing ? c->missing() : NULL;

		if (why) {
			fprintf(stderr, "iopt-bench repro: %s cannot run yet: %s\n",
				c->name, why);
			if (!all)
				ret = 1;
		}
	}
	fprintf(stderr, "iopt-bench repro: %u/%u points, %.1f s\n", points_done,
		points_total, host_s() - t_start);
	if (outpath) {
		FILE *f = fopen(outpath, "w");

		if (!f || fputs(text.s ? text.s : "", f) < 0 || fclose(f)) {
			fprintf(stderr, "iopt-bench repro: %s: %s\n", outpath,
				strerror(errno));
			return 1;
		}
	}
	if (json)
		fputs(text.s ? text.s : "", stdout);
	else
		for (unsigned i = 0; i < nsel; i++)
			print_case(sel[i], text.s);
	free(text.s);
	return ret;
}
