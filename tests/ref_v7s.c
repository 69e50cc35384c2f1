/* SPDX-License-Identifier: MIT */
/* Reference v7s walker: filled in with the v7s format. */
#include "tutil.h"
void ref_walk_v7s(const struct iopt_info *info, uint32_t quirks, tu_p2v_fn p2v,
		  void *ctx, uint64_t va, struct ref_walk *w);
void ref_walk_v7s(const struct iopt_info *info, uint32_t quirks, tu_p2v_fn p2v,
		  void *ctx, uint64_t va, struct ref_walk *w)
{
	(void)info; (void)quirks; (void)p2v; (void)ctx; (void)va;
	w->fault_level = 1;
}
