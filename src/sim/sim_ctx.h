/* SPDX-License-Identifier: MIT */
/*
 * Coroutine contexts for the simulated CPUs: a hand-written register
 * switch on x86-64 and AArch64 (the callee-saved registers and the stack
 * pointer, a few dozen instructions, no system call), ucontext elsewhere.
 */
#ifndef IOPT_SIM_CTX_H
#define IOPT_SIM_CTX_H

#include <stddef.h>

/* -DIOPT_SIM_UCONTEXT forces the fallback (to measure it). */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(IOPT_SIM_UCONTEXT)
#define SIM_CTX_ASM 1
struct sim_ctx {
	void *sp;			/* saved stack pointer */
};
#else
#include <ucontext.h>
struct sim_ctx {
	ucontext_t uc;
	void (*entry)(void *);
	void *arg;
};
#endif

/* Prepare ctx to run entry(arg) on [stack, stack + size) at its first
 * switch. entry must never return. */
void sim_ctx_init(struct sim_ctx *ctx, void *stack, size_t size,
		  void (*entry)(void *), void *arg);
/* Save the running context into from and resume to. */
void sim_ctx_switch(struct sim_ctx *from, struct sim_ctx *to);

#endif /* IOPT_SIM_CTX_H */
