/* SPDX-License-Identifier: MIT */
/*
 * Coroutine context switch (sim_ctx.h).
 *
 * sim_ctx_swap(save, load) pushes the callee-saved registers of the
 * platform's procedure call standard onto the current stack, stores the
 * stack pointer to *save, loads load as the stack pointer and pops the
 * registers saved there, then returns on that stack. Everything else is
 * caller-saved, so the C caller has already spilled it.
 *   x86-64 (System V ABI): rbx, rbp, r12-r15 and the return address.
 *   AArch64 (AAPCS64): x19-x28, x29 (frame), x30 (link), d8-d15.
 * The floating-point control words (MXCSR, x87 CW, FPCR) are not switched:
 * the library never changes them.
 *
 * A new context's stack holds a frame as sim_ctx_swap() would have left
 * it, whose return address is sim_ctx_start: it moves entry and arg from
 * two callee-saved slots into place and calls entry(arg).
 */
#include <stdint.h>
#include <string.h>

#include "sim_ctx.h"

#ifdef SIM_CTX_ASM

void sim_ctx_swap(void **save, void *load);
void sim_ctx_start(void);

#if defined(__x86_64__)
__asm__(
	".text\n"
	".globl sim_ctx_swap\n"
	".hidden sim_ctx_swap\n"
	".type sim_ctx_swap,@function\n"
	"sim_ctx_swap:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size sim_ctx_swap, .-sim_ctx_swap\n"
	".globl sim_ctx_start\n"
	".hidden sim_ctx_start\n"
	".type sim_ctx_start,@function\n"
	"sim_ctx_start:\n"
	"	movq %r13, %rdi\n"
	"	callq *%r12\n"
	"	ud2\n"
	".size sim_ctx_start, .-sim_ctx_start\n"
	".section .note.GNU-stack,\"\",@progbits\n"
	".text\n");

/* Frame, from the saved stack pointer up: r15 r14 r13 r12 rbx rbp ret. */
enum { FRAME_WORDS = 7, SLOT_ENTRY = 3, SLOT_ARG = 2, SLOT_RET = 6 };

#elif defined(__aarch64__)
__asm__(
	".text\n"
	".globl sim_ctx_swap\n"
	".hidden sim_ctx_swap\n"
	".type sim_ctx_swap,%function\n"
	"sim_ctx_swap:\n"
	"	sub sp, sp, #160\n"
	"	stp x19, x20, [sp, #0]\n"
	"	stp x21, x22, [sp, #16]\n"
	"	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n"
	"	stp x27, x28, [sp, #64]\n"
	"	stp x29, x30, [sp, #80]\n"
	"	stp d8, d9, [sp, #96]\n"
	"	stp d10, d11, [sp, #112]\n"
	"	stp d12, d13, [sp, #128]\n"
	"	stp d14, d15, [sp, #144]\n"
	"	mov x2, sp\n"
	"	str x2, [x0]\n"
	"	mov sp, x1\n"
	"	ldp x19, x20, [sp, #0]\n"
	"	ldp x21, x22, [sp, #16]\n"
	"	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n"
	"	ldp x27, x28, [sp, #64]\n"
	"	ldp x29, x30, [sp, #80]\n"
	"	ldp d8, d9, [sp, #96]\n"
	"	ldp d10, d11, [sp, #112]\n"
	"	ldp d12, d13, [sp, #128]\n"
	"	ldp d14, d15, [sp, #144]\n"
	"	add sp, sp, #160\n"
	"	ret\n"
	".size sim_ctx_swap, .-sim_ctx_swap\n"
	".globl sim_ctx_start\n"
	".hidden sim_ctx_start\n"
	".type sim_ctx_start,%function\n"
	"sim_ctx_start:\n"
	"	mov x0, x20\n"
	"	blr x19\n"
	"	brk #0\n"
	".size sim_ctx_start, .-sim_ctx_start\n"
	".section .note.GNU-stack,\"\",%progbits\n"
	".text\n");

/* Frame, in 8-byte words from the saved stack pointer: x19 x20 ... x28,
 * x29 x30, d8 .. d15 (160 bytes, keeps the stack 16-byte aligned). */
enum { FRAME_WORDS = 20, SLOT_ENTRY = 0, SLOT_ARG = 1, SLOT_RET = 11 };
#endif

void sim_ctx_init(struct sim_ctx *ctx, void *stack, size_t size,
		  void (*entry)(void *), void *arg)
{
	uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	void **frame;

	/* x86-64: after the 7 pops and the ret, rsp = top (16-aligned), so
	 * the call in sim_ctx_start enters entry with rsp = 8 mod 16 as the
	 * ABI wants. AArch64: the 160-byte frame keeps sp 16-aligned. */
	frame = (void **)(top - FRAME_WORDS * sizeof(void *));
	memset(frame, 0, FRAME_WORDS * sizeof(void *));
	frame[SLOT_ENTRY] = (void *)(uintptr_t)entry;
	frame[SLOT_ARG] = arg;
	frame[SLOT_RET] = (void *)(uintptr_t)sim_ctx_start;
	ctx->sp = frame;
}

void sim_ctx_switch(struct sim_ctx *from, struct sim_ctx *to)
{
	sim_ctx_swap(&from->sp, to->sp);
}

#else /* ucontext fallback: swapcontext() is a system call per switch */

/* makecontext() passes int arguments only: the context's address goes
 * through two of them. */
static void ctx_trampoline(unsigned lo, unsigned hi)
{
	struct sim_ctx *ctx =
		(struct sim_ctx *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);

	ctx->entry(ctx->arg);
}

void sim_ctx_init(struct sim_ctx *ctx, void *stack, size_t size,
		  void (*entry)(void *), void *arg)
{
	uintptr_t p = (uintptr_t)ctx;

	getcontext(&ctx->uc);
	ctx->uc.uc_stack.ss_sp = stack;
	ctx->uc.uc_stack.ss_size = size;
	ctx->uc.uc_link = NULL;
	ctx->entry = entry;
	ctx->arg = arg;
	makecontext(&ctx->uc, (void (*)(void))ctx_trampoline, 2,
		    (unsigned)(p & 0xffffffffu), (unsigned)(p >> 16 >> 16));
}

void sim_ctx_switch(struct sim_ctx *from, struct sim_ctx *to)
{
	swapcontext(&from->uc, &to->uc);
}

#endif
