/* SPDX-License-Identifier: MIT */
/*
 * Instruction charging (docs/sim.md, "What an instruction costs").
 *
 * The simulation build's library, benchmark and workload objects are
 * compiled through cmake/iopt_icharge_cc.sh, which puts at the start of
 * every basic block
 *
 *	call sim_icharge_thunk
 *	nopl N(%rax)		(0f 1f 80, then N as 32 bits)
 *
 * with N's low 16 bits the block's instruction count in the compiler's own
 * code (the high 16 bits: the engine-call arguments the count leaves out,
 * cmake/iopt_icharge.awk). The
 * thunk adds N to sim_icount, changing no register and no flag (the
 * instrumented code is the compiler's, unaware of the call), and returns
 * onto the NOP. The engine (sim_core.c, sim_ifold()) moves the pending
 * count onto the running simulated CPU at its platform operations, and
 * drops what the host context and the raw-mode model runs executed. This
 * file and the rest of src/sim/ are not instrumented: the engine, the
 * coroutine switch and the thunk cost nothing.
 *
 * x86-64 only; on other targets nothing is instrumented (the launcher is
 * not used) and sim_icount stays 0.
 */
#include <stdint.h>

#include "sim_internal.h"

uint64_t sim_icount;

#if defined(__x86_64__)
/* push/pop/mov/lea/ret leave the flags alone; rax and rcx are restored. */
__asm__(".text\n"
	".globl sim_icharge_thunk\n"
	".hidden sim_icharge_thunk\n"
	".type sim_icharge_thunk, @function\n"
	"sim_icharge_thunk:\n"
	"\tpushq %rax\n"
	"\tpushq %rcx\n"
	"\tmovq 16(%rsp), %rax\n"		/* return address: the NOP */
	"\tmovzwl 3(%rax), %eax\n"	/* its displacement's low half: N */
	"\tmovq sim_icount(%rip), %rcx\n"
	"\tleaq (%rcx,%rax), %rcx\n"
	"\tmovq %rcx, sim_icount(%rip)\n"
	"\tpopq %rcx\n"
	"\tpopq %rax\n"
	"\tret\n"
	".size sim_icharge_thunk, .-sim_icharge_thunk\n");
#endif
