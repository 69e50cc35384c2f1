/* SPDX-License-Identifier: MIT */
/*
 * SMMUv2 stream matching: an SMR (VALID 31, MASK 30:16, ID 14:0) matches
 * StreamID s when ((s ^ ID) & ~MASK) == 0 over the ID field; a set MASK
 * bit ignores that ID bit. The matching SMR's index selects the S2CR.
 */
#include "v2_model.h"

int v2_stream_match(const struct iopt_smmuv2 *s, uint32_t sid, bool *conflict)
{
	int hit = -1;

	*conflict = false;
	for (unsigned i = 0; i < s->p.num_smrg; i++) {
		uint32_t smr = s->smr[i];
		uint32_t id = smr & SMR_FIELD;
		uint32_t mask = smr >> SMR_MASK_SHIFT & SMR_FIELD;

		if (!(smr & SMR_VALID) || ((sid ^ id) & ~mask & SMR_FIELD))
			continue;
		if (hit >= 0) {
			*conflict = true;	/* more than one */
			break;
		}
		hit = (int)i;
	}
	return hit;
}
