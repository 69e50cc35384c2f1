// SPDX-License-Identifier: MIT
/*
 * Helpers the SystemC examples and adapter tests share: the check()
 * counter and TLM payload set-up. Header-only, test code (not installed).
 */
#ifndef IOPT_EXAMPLES_SYSTEMC_TB_H
#define IOPT_EXAMPLES_SYSTEMC_TB_H

#include <cstdio>

#include <systemc>
#include <tlm>

#include <iopgtable/pgtable.h>
#include <iopgtable/physmem.h>

namespace tb {

/* Checks that failed; a test exits non-zero when any did. */
inline int failures;

inline void check(bool ok, const char *what)
{
	std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failures++;
}

/* A payload with full control over length, streaming width (0: the
 * length) and byte enables (nullptr: none). */
inline void prepare(tlm::tlm_generic_payload &gp, tlm::tlm_command c,
		    uint64_t a, void *buf, unsigned len, unsigned sw = 0,
		    unsigned char *be = nullptr)
{
	gp.set_command(c);
	gp.set_address(a);
	gp.set_data_ptr(static_cast<unsigned char *>(buf));
	gp.set_data_length(len);
	gp.set_streaming_width(sw ? sw : len);
	gp.set_byte_enable_ptr(be);
	gp.set_byte_enable_length(be ? len : 0);
	gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

/* A 4 KiB-granule AArch64 stage 1 table whose memory is the simulated
 * physical memory pm (the SMMU walks it through its walker socket).
 * nullptr when the library refuses (a failed check is counted). */
inline iopt_pgtable *physmem_table(iopt_physmem *pm, unsigned ias, unsigned oas)
{
	iopt_pgtable_cfg cfg{};
	iopt_pgtable *pt = nullptr;

	cfg.fmt = IOPT_ARM_64_LPAE_S1;
	cfg.granule = 4096;
	cfg.ias = ias;
	cfg.oas = oas;
	cfg.coherent_walk = true;
	cfg.mem = iopt_physmem_mem_ops();
	cfg.mem_ctx = pm;
	check(iopt_pgtable_alloc(&cfg, &pt) == 0, "page table allocated in physmem");
	return pt;
}

/* sc_main's exit status once the simulation has ended: the test thread
 * must have finished, and no check failed. */
inline int result(bool finished)
{
	if (!finished)
		check(false, "the test thread finished");
	std::printf("%d failed\n", failures);
	return failures ? 1 : 0;
}

} // namespace tb

#endif // IOPT_EXAMPLES_SYSTEMC_TB_H
