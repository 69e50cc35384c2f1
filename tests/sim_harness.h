/* SPDX-License-Identifier: MIT */
/*
 * Force-included into every _sim test (tests/CMakeLists.txt): the test's
 * main() is compiled under this name and called by tests/sim_harness.c.
 */
#ifndef IOPT_SIM_HARNESS_H
#define IOPT_SIM_HARNESS_H

int iopt_sim_test_main(void);

#endif
