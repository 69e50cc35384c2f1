/* SPDX-License-Identifier: MIT */
/*
 * Calibration from the no-IOMMU baseline (docs/workload.md,
 * "Calibration"): the workload cost that makes a run without an IOMMU
 * reach a published figure, by bisection over deterministic runs.
 */
#include <errno.h>
#include <string.h>

#include "wl_internal.h"

#define MAX_EVALS 40

/* One evaluation: the figure a run with cost x gives (fresh simulation,
 * no IOMMU), or a negative errno. */
typedef int (*wl_eval_fn)(const struct iopt_sim_params *sp, void *p, double x,
			  double *fig);

static int eval_tx(const struct iopt_sim_params *sp, void *arg, double x,
		   double *fig)
{
	struct iopt_wl_tx_params p = *(struct iopt_wl_tx_params *)arg;
	struct iopt_wl_tx_result r;
	struct iopt_sim *s;
	int ret = iopt_sim_create(sp, &s);

	if (ret)
		return ret;
	p.byte_cycles = x;
	ret = iopt_wl_tx_run(s, NULL, &p, &r);
	iopt_sim_destroy(s);
	if (!ret)
		*fig = r.gbps;
	return ret;
}

static int eval_rx(const struct iopt_sim_params *sp, void *arg, double x,
		   double *fig)
{
	struct iopt_wl_rx_params p = *(struct iopt_wl_rx_params *)arg;
	struct iopt_wl_rx_result r;
	struct iopt_sim *s;
	int ret = iopt_sim_create(sp, &s);

	if (ret)
		return ret;
	p.byte_cycles = x;
	ret = iopt_wl_rx_run(s, NULL, &p, &r);
	iopt_sim_destroy(s);
	if (!ret)
		*fig = r.gbps;
	return ret;
}

static int eval_nvme(const struct iopt_sim_params *sp, void *arg, double x,
		     double *fig)
{
	struct iopt_wl_nvme_params p = *(struct iopt_wl_nvme_params *)arg;
	struct iopt_wl_nvme_result r;
	struct iopt_sim *s;
	int ret = iopt_sim_create(sp, &s);

	if (ret)
		return ret;
	p.submit_cycles = (uint64_t)(x + 0.5);
	ret = iopt_wl_nvme_run(s, NULL, &p, &r);
	iopt_sim_destroy(s);
	if (!ret)
		*fig = r.iops;
	return ret;
}

static bool near(double fig, double target, double tol)
{
	double e = fig > target ? fig - target : target - fig;

	return e <= tol * target;
}

/*
 * The cost x >= 0 whose figure is within tol of target: the figure at 0
 * must reach the target (-ERANGE), then hi doubles from start until the
 * figure falls below the target, and [lo, hi] is halved. *x the best
 * cost found.
 */
static int bisect(const struct iopt_sim_params *sp, wl_eval_fn f, void *p,
		  double target, double tol, double start, double *x)
{
	double lo = 0, hi = start, fig, best = 0, best_err = -1;
	int ret, evals = 0;

	ret = f(sp, p, 0, &fig);
	if (ret)
		return ret;
	evals++;
	if (near(fig, target, tol)) {
		*x = 0;
		return 0;
	}
	if (fig < target)
		return -ERANGE;
	for (;;) {
		ret = f(sp, p, hi, &fig);
		if (ret)
			return ret;
		if (++evals >= MAX_EVALS || fig <= target)
			break;
		lo = hi;
		hi *= 2;
	}
	for (;;) {
		double mid = (lo + hi) / 2, e;

		ret = f(sp, p, mid, &fig);
		if (ret)
			return ret;
		e = fig > target ? fig - target : target - fig;
		if (best_err < 0 || e < best_err) {
			best = mid;
			best_err = e;
		}
		if (e <= tol * target || ++evals >= MAX_EVALS)
			break;
		if (fig > target)
			lo = mid;
		else
			hi = mid;
	}
	*x = best;
	return 0;
}

static bool args_ok(const struct iopt_sim_params *sp, const void *p,
		    double target, double tol)
{
	return sp && p && target > 0 && tol > 0 && tol < 1;
}

int iopt_wl_tx_calibrate(const struct iopt_sim_params *sp,
			 struct iopt_wl_tx_params *p, double gbps, double tol)
{
	double x;
	int ret;

	if (!args_ok(sp, p, gbps, tol) || wl_tx_check(p, sp->cpus))
		return -EINVAL;
	ret = bisect(sp, eval_tx, p, gbps, tol, 1.0, &x);
	if (!ret)
		p->byte_cycles = x;
	return ret;
}

int iopt_wl_rx_calibrate(const struct iopt_sim_params *sp,
			 struct iopt_wl_rx_params *p, double gbps, double tol)
{
	double x;
	int ret;

	if (!args_ok(sp, p, gbps, tol) || wl_rx_check(p, sp->cpus))
		return -EINVAL;
	ret = bisect(sp, eval_rx, p, gbps, tol, 1.0, &x);
	if (!ret)
		p->byte_cycles = x;
	return ret;
}

int iopt_wl_nvme_calibrate(const struct iopt_sim_params *sp,
			   struct iopt_wl_nvme_params *p, double iops,
			   double tol)
{
	double x;
	int ret;

	if (!args_ok(sp, p, iops, tol) || wl_nvme_check(p, sp->cpus))
		return -EINVAL;
	ret = bisect(sp, eval_nvme, p, iops, tol, 1000.0, &x);
	if (!ret)
		p->submit_cycles = (uint64_t)(x + 0.5);
	return ret;
}
