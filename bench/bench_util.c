/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iopgtable/sim.h>

uint64_t bench_now_ns(void)
{
	return plat_clock_ns();
}

#ifdef IOPT_PLATFORM_SIM
void bench_barrier_init(struct bench_barrier *b, unsigned n)
{
	b->n = n;
	b->count = 0;
	b->gen = 0;
}

void bench_barrier_wait(struct bench_barrier *b)
{
	uint64_t gen = plat_load_acq64(&b->gen);

	/* The last to arrive opens the next generation; its release store
	 * pairs with the waiters' acquire loads. */
	if (plat_fetch_add_acq_rel64(&b->count, 1) + 1 == b->n) {
		plat_store_rlx64(&b->count, 0);
		plat_store_rel64(&b->gen, gen + 1);
		return;
	}
	while (plat_load_acq64(&b->gen) == gen)
		plat_cpu_relax();
}

void bench_barrier_destroy(struct bench_barrier *b)
{
	(void)b;
}
#else
void bench_barrier_init(struct bench_barrier *b, unsigned n)
{
	b->host = malloc(sizeof(pthread_barrier_t));
	if (!b->host || pthread_barrier_init(b->host, NULL, n)) {
		fprintf(stderr, "iopt-bench: cannot create a barrier\n");
		exit(1);
	}
}

void bench_barrier_wait(struct bench_barrier *b)
{
	pthread_barrier_wait(b->host);
}

void bench_barrier_destroy(struct bench_barrier *b)
{
	pthread_barrier_destroy(b->host);
	free(b->host);
}
#endif

void bench_spin_start(uint64_t *ready, unsigned nthreads)
{
	/* The acq_rel add pairs with the other threads' acquire loads. */
	plat_fetch_add_acq_rel64(ready, 1);
	while (plat_load_acq64(ready) < nthreads)
		plat_cpu_relax();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (bench_sim_cpus())
		return bench_sim_cpus();
	return n < 1 ? 1u : (unsigned)n;
}

void bench_pin(unsigned cpu)
{
	cpu_set_t set;

	if (bench_sim_cpus())
		return;		/* a simulated CPU is its own CPU */

	CPU_ZERO(&set);
	CPU_SET(cpu % bench_ncpus(), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void *bench_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "iopt-bench: out of memory (%zu x %zu bytes)\n",
			n, size);
		exit(1);
	}
	return p;
}

void bench_must(int err, const char *what)
{
	if (err < 0) {
		fprintf(stderr, "iopt-bench: %s: %s\n", what, strerror(-err));
		exit(1);
	}
}

bool bench_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Digits only: decimal, or hex after 0x; with suffix, one of k m g t
 * after them. False when malformed or past 2^64 - 1. */
static bool parse_u64(const char *s, bool suffix, uint64_t *out)
{
	unsigned base = 10, shift = 0;
	const char *p = s, *digits;
	uint64_t v = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (digits = p; *p; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (p == digits)
		return false;
	if (suffix && *p) {
		const char *units = "kmgt", *u = strchr(units, tolower((unsigned char)*p));

		if (!u)
			return false;
		shift = 10 * (unsigned)(u - units + 1);
		if (v > UINT64_MAX >> shift)
			return false;
		v <<= shift;
		p++;
	}
	if (*p)
		return false;
	*out = v;
	return true;
}

bool bench_parse_size(const char *s, uint64_t *out)
{
	return parse_u64(s, true, out);
}

/* A finite decimal: a digit or a point first (no sign, space, nan). */
static bool parse_real(const char *s, double *out)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* The index of s in the NULL-terminated names, or -1. */
static int choice_of(const char *const *names, const char *s, size_t len)
{
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], s, len))
			return i;
	return -1;
}

/* An integer of o, with its range and rule. */
static bool int_ok(const struct bench_opt *o, const char *s, uint64_t *v)
{
	return parse_u64(s, o->type == BENCH_SIZE, v) && *v >= o->min &&
	       *v <= o->max && (!o->check || o->check(*v));
}

/* What a value of o must be, for the message naming a bad one. */
static void opt_wants(FILE *f, const struct bench_opt *o)
{
	const char *what = o->rule ? o->rule : o->type == BENCH_SIZE ?
			   "an integer (suffix k, m, g or t)" : "an integer";

	switch (o->type) {
	case BENCH_UINT:
	case BENCH_U64:
	case BENCH_SIZE:
		fprintf(f, "%s from %llu to %llu", what,
			(unsigned long long)o->min, (unsigned long long)o->max);
		break;
	case BENCH_LIST:
		fprintf(f, "a comma list of up to %u integers from %llu to %llu",
			o->cap, (unsigned long long)o->min,
			(unsigned long long)o->max);
		break;
	case BENCH_REAL:
		fprintf(f, "a number from %g to %g", o->lo, o->hi);
		break;
	case BENCH_CHOICE:
	case BENCH_CHOICES:
		fprintf(f, o->type == BENCH_CHOICE ? "one of:" :
			"a comma list of:");
		for (int i = 0; o->choices[i]; i++)
			fprintf(f, "%s %s", i ? "," : "", o->choices[i]);
		break;
	case BENCH_FLAG:
		break;
	}
}

/* Store s as o's value; false (nothing stored) when it is not one. */
static bool opt_set(const struct bench_opt *o, const char *s)
{
	uint64_t v;
	double d;
	int k;

	switch (o->type) {
	case BENCH_UINT:
		if (!int_ok(o, s, &v) || v > UINT_MAX)
			return false;
		*(unsigned *)o->val = (unsigned)v;
		return true;
	case BENCH_U64:
	case BENCH_SIZE:
		if (!int_ok(o, s, &v))
			return false;
		*(uint64_t *)o->val = v;
		return true;
	case BENCH_REAL:
		if (!parse_real(s, &d) || d < o->lo || d > o->hi)
			return false;
		*(double *)o->val = d;
		return true;
	case BENCH_CHOICE:
		if ((k = choice_of(o->choices, s, strlen(s))) < 0)
			return false;
		*(unsigned *)o->val = (unsigned)k;
		return true;
	case BENCH_LIST:
	case BENCH_CHOICES: {
		unsigned vals[64], n = 0, bits = 0;
		char item[32];

		/* Every item between commas, none empty. */
		for (const char *p = s;; p++) {
			size_t len = strcspn(p, ",");

			if (o->type == BENCH_CHOICES) {
				if ((k = choice_of(o->choices, p, len)) < 0)
					return false;
				bits |= 1u << k;
			} else {
				if (!len || len >= sizeof(item) || n == o->cap ||
				    n == sizeof(vals) / sizeof(vals[0]))
					return false;
				memcpy(item, p, len);
				item[len] = 0;
				if (!int_ok(o, item, &v) || v > UINT_MAX)
					return false;
				vals[n++] = (unsigned)v;
			}
			p += len;
			if (!*p)
				break;
		}
		if (o->type == BENCH_CHOICES) {
			*(unsigned *)o->val = bits;
		} else {
			memcpy(o->val, vals, n * sizeof(vals[0]));
			*o->count = n;
		}
		return true;
	}
	case BENCH_FLAG:
		break;
	}
	return false;
}

int bench_take_opt(const char *who, const struct bench_opt *opts, int argc,
		   char **argv, int *i)
{
	const char *a = argv[*i], *eq, *val;
	const struct bench_opt *o;
	size_t len;

	if (strncmp(a, "--", 2))
		return 0;
	a += 2;
	eq = strchr(a, '=');
	len = eq ? (size_t)(eq - a) : strlen(a);
	for (o = opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, a, len))
			break;
	if (!o->name)
		return 0;
	if (o->type == BENCH_FLAG) {
		if (eq) {
			fprintf(stderr, "iopt-bench %s: --%s takes no value\n",
				who, o->name);
			return -1;
		}
		*(bool *)o->val = true;
		return 1;
	}
	if (eq) {
		val = eq + 1;
	} else if (*i + 1 < argc) {
		val = argv[++*i];
	} else {
		fprintf(stderr, "iopt-bench %s: --%s needs a value\n", who, o->name);
		return -1;
	}
	if (opt_set(o, val))
		return 1;
	fprintf(stderr, "iopt-bench %s: --%s '%s' is not ", who, o->name, val);
	opt_wants(stderr, o);
	fputc('\n', stderr);
	return -1;
}

#define BENCH_MAX_CASES 32

/* One usage line: "  --name ARG", its help under a column, a help of
 * several lines indented to it. */
static void usage_line(const char *left, const char *help)
{
	const int col = 26;
	int n = printf("  %s", left);

	if (!*help)
		printf("\n");
	for (const char *h = help; *h;) {
		size_t len = strcspn(h, "\n");

		if (n >= col) {
			printf("\n");
			n = 0;
		}
		printf("%*s%.*s\n", col - n, "", (int)len, h);
		n = 0;
		h += len;
		if (*h)
			h++;
	}
}

/* Append s to the n bytes in buf[size], cutting it short at the end. */
static size_t append(char *buf, size_t size, size_t n, const char *s)
{
	size_t len = strlen(s);

	if (n + len >= size)
		len = size - 1 - n;
	memcpy(buf + n, s, len);
	buf[n + len] = 0;
	return n + len;
}

/* "  title a, b, c" wrapped at 78 columns: the names name(0, 1, ...). */
static void usage_names(const char *title, const char *(*name)(unsigned))
{
	size_t col = printf("  %s", title);

	for (unsigned i = 0; name(i); i++) {
		size_t l = strlen(name(i)) + 1;

		if (col + l + 1 > 78)
			col = printf("\n   ") - 1;
		col += printf(" %s%s", name(i), name(i + 1) ? "," : "");
	}
	printf("\n");
}

static void usage(const struct bench_cli *cli)
{
	char left[96];

	printf("usage: iopt-bench %s [options]\n%s\noptions:\n", cli->suite,
	       cli->about);
	for (const struct bench_opt *o = cli->opts; o->name; o++) {
		size_t n = append(left, sizeof(left), 0, "--");

		n = append(left, sizeof(left), n, o->name);
		if (o->type != BENCH_FLAG && o->arg) {
			n = append(left, sizeof(left), n, " ");
			n = append(left, sizeof(left), n, o->arg);
		}
		for (int k = 0; o->type != BENCH_FLAG && !o->arg && o->choices &&
		     o->choices[k]; k++) {
			n = append(left, sizeof(left), n, k ? "|" : " ");
			n = append(left, sizeof(left), n, o->choices[k]);
		}
		usage_line(left, o->help ? o->help : "");
	}
	if (cli->cases)
		usage_line("--case NAME", "only that case (default: all)");
	usage_line("--help", "this text");
	if (cli->cases) {
		printf("cases:\n");
		for (const struct bench_case *c = cli->cases; c->name; c++)
			usage_line(c->name, c->help);
	}
	if (!cli->no_sim) {
		printf("on N simulated CPUs (iopt-bench-sim, docs/sim.md):\n"
		       "  --sim N [--seed S] [--sim-mem sc|tso] "
		       "[--sim-sched random|pct] [--sim-hot]\n"
		       "  [--sim-ipc X (instructions a cycle, 0..64; 0: "
		       "instructions free)]\n"
		       "  [--sim-platform NAME] [--sim-param NAME=VALUE]... "
		       "[--smmu-preset NAME] [--smmu-param NAME=VALUE]...\n");
		usage_names("platforms:", iopt_sim_platform_name);
		usage_names("--sim-param names:", iopt_sim_param_name);
		usage_names("SMMU presets:", iopt_sim_smmu_preset_name);
		usage_names("--smmu-param names:", iopt_sim_smmu_param_name);
	}
}

bool bench_parse(const struct bench_cli *cli, int argc, char **argv, int *status)
{
	const char *names[BENCH_MAX_CASES + 1] = { 0 };
	unsigned pick = 0, ncases = 0;
	const struct bench_opt case_opt[] = {
		{ "case", BENCH_CHOICE, &pick, .choices = names },
		{ 0 },
	};

	for (const struct bench_case *c = cli->cases; c && c->name &&
	     ncases < BENCH_MAX_CASES; c++)
		names[ncases++] = c->name;
	*status = 2;
	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--help")) {
			usage(cli);
			*status = 0;
			return false;
		}
		r = bench_take_opt(cli->suite, cli->opts, argc, argv, &i);
		if (!r && cli->cases) {
			r = bench_take_opt(cli->suite, case_opt, argc, argv, &i);
			if (r == 1)
				*cli->only = names[pick];
		}
		if (r < 0)
			goto bad;
		if (!r) {
			fprintf(stderr, argv[i][0] == '-' ?
				"iopt-bench %s: unknown option '%s'\n" :
				"iopt-bench %s: unexpected argument '%s'\n",
				cli->suite, argv[i]);
			goto bad;
		}
	}
	return true;
bad:
	fprintf(stderr, "iopt-bench %s: see 'iopt-bench %s --help'\n", cli->suite,
		cli->suite);
	return false;
}
