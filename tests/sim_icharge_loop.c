/* SPDX-License-Identifier: MIT */
/*
 * A loop of known length for the instruction-charging test
 * (test_sim_engine.c, test_icharge_loop). Compiled with instruction
 * charging (iopt_sim_instrument), as the library is. Written in assembly
 * so that its blocks do not depend on the compiler:
 *
 *	sim_test_loop:	xorl %eax, %eax		block 1: 1 instruction
 *	1:		addq %rdi, %rax		block 2: 3 instructions,
 *			decq %rdi		         run n times
 *			jnz 1b
 *			ret			block 3: 1 instruction
 *
 * so sim_test_loop(n), n >= 1, executes 3n + 2 instructions and returns
 * n(n+1)/2.
 */
#include <stdint.h>

uint64_t sim_test_loop(uint64_t n);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl sim_test_loop\n"
	".type sim_test_loop, @function\n"
	"sim_test_loop:\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddq %rdi, %rax\n"
	"\tdecq %rdi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size sim_test_loop, .-sim_test_loop\n");
#else
uint64_t sim_test_loop(uint64_t n)
{
	return n * (n + 1) / 2;
}
#endif
