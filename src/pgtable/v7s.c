/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include "pt_internal.h"
int pt_v7s_setup(struct iopt_pgtable *pt) { (void)pt; return -EINVAL; }
void pt_v7s_regs(struct iopt_pgtable *pt) { (void)pt; }
