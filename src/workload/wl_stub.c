/* SPDX-License-Identifier: MIT */
/*
 * The host library's iopgtable/workload.h: the models run only on the
 * simulation (iopgtable_sim), so here every run and calibration returns
 * -ENOTSUP; the *_default() functions (wl_params.c) exist in both.
 */
#include <errno.h>

#include <iopgtable/workload.h>

int iopt_wl_tx_run(struct iopt_sim *sim, struct iopt_dma *d,
		   const struct iopt_wl_tx_params *p, struct iopt_wl_tx_result *r)
{
	return -ENOTSUP;
}

int iopt_wl_rx_run(struct iopt_sim *sim, struct iopt_dma *d,
		   const struct iopt_wl_rx_params *p, struct iopt_wl_rx_result *r)
{
	return -ENOTSUP;
}

int iopt_wl_nvme_run(struct iopt_sim *sim, struct iopt_dma *d,
		     const struct iopt_wl_nvme_params *p,
		     struct iopt_wl_nvme_result *r)
{
	return -ENOTSUP;
}

int iopt_wl_mapbench_run(struct iopt_sim *sim, struct iopt_dma *d,
			 const struct iopt_wl_mapbench_params *p,
			 struct iopt_wl_mapbench_result *r)
{
	return -ENOTSUP;
}

int iopt_wl_tx_calibrate(const struct iopt_sim_params *sp,
			 struct iopt_wl_tx_params *p, double gbps, double tol)
{
	return -ENOTSUP;
}

int iopt_wl_rx_calibrate(const struct iopt_sim_params *sp,
			 struct iopt_wl_rx_params *p, double gbps, double tol)
{
	return -ENOTSUP;
}

int iopt_wl_nvme_calibrate(const struct iopt_sim_params *sp,
			   struct iopt_wl_nvme_params *p, double iops,
			   double tol)
{
	return -ENOTSUP;
}
