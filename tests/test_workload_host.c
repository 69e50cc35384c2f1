/* SPDX-License-Identifier: MIT */
/*
 * The host library's workload.h: the models need the simulation, so
 * every run and calibration is -ENOTSUP there, whatever it is given; the
 * defaults exist and are the same as the simulation library's (each one
 * a value docs/workload.md lists).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <iopgtable/sim.h>
#include <iopgtable/workload.h>

static void t_host_not_supported(void **state)
{
	struct iopt_sim_params sp;
	struct iopt_wl_tx_params tx;
	struct iopt_wl_rx_params rx;
	struct iopt_wl_nvme_params nv;
	struct iopt_wl_mapbench_params mb;
	struct iopt_wl_tx_result tr;
	struct iopt_wl_rx_result rr;
	struct iopt_wl_nvme_result nr;
	struct iopt_wl_mapbench_result br;

	assert_false(iopt_sim_available());
	iopt_sim_params_default(&sp);
	iopt_wl_tx_default(&tx, IOPT_WL_TCP);
	iopt_wl_rx_default(&rx);
	iopt_wl_nvme_default(&nv);
	iopt_wl_mapbench_default(&mb);
	/* A few documented defaults. */
	assert_int_equal(tx.send_bytes, 131072);
	assert_int_equal(tx.mss, 1448);
	assert_int_equal(rx.budget, 64);
	assert_int_equal(nv.io_bytes, 4096);
	assert_int_equal(mb.npages, 1);
	iopt_wl_tx_default(&tx, IOPT_WL_UDP);
	assert_int_equal(tx.send_bytes, 32768);

	assert_int_equal(iopt_wl_tx_run(NULL, NULL, &tx, &tr), -ENOTSUP);
	assert_int_equal(iopt_wl_rx_run(NULL, NULL, &rx, &rr), -ENOTSUP);
	assert_int_equal(iopt_wl_nvme_run(NULL, NULL, &nv, &nr), -ENOTSUP);
	assert_int_equal(iopt_wl_mapbench_run(NULL, NULL, &mb, &br), -ENOTSUP);
	assert_int_equal(iopt_wl_tx_calibrate(&sp, &tx, 10, 0.01), -ENOTSUP);
	assert_int_equal(iopt_wl_rx_calibrate(&sp, &rx, 10, 0.01), -ENOTSUP);
	assert_int_equal(iopt_wl_nvme_calibrate(&sp, &nv, 1e5, 0.01), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_host_not_supported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
