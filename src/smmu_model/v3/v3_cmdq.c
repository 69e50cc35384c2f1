/* SPDX-License-Identifier: MIT */
/*
 * The SMMUv3 command queue (IHI0070 chapter 4): each command is checked
 * against what the ID registers advertise, costed, and performed at its
 * completion cycle by a sequential engine: command k completes at
 * max(its visibility, completion of k - 1) + its cost, so a CMD_SYNC
 * completes only after every earlier command has (docs/smmu_model.md,
 * Timing).
 */
#include <string.h>

#include "v3_model.h"

static bool is_tlbi(unsigned op)
{
	switch (op) {
	case IOPT_SMMUV3_CMD_TLBI_NH_ALL: case IOPT_SMMUV3_CMD_TLBI_NH_ASID:
	case IOPT_SMMUV3_CMD_TLBI_NH_VA: case IOPT_SMMUV3_CMD_TLBI_NH_VAA:
	case IOPT_SMMUV3_CMD_TLBI_S12_VMALL: case IOPT_SMMUV3_CMD_TLBI_S2_IPA:
	case IOPT_SMMUV3_CMD_TLBI_NSNH_ALL:
		return true;
	default:
		return false;
	}
}

static bool is_cfgi(unsigned op)
{
	return op >= IOPT_SMMUV3_CMD_CFGI_STE && op <= IOPT_SMMUV3_CMD_CFGI_CD_ALL;
}

/* Does a CMD_SYNC signal its completion with an MSI write (4.7.3)? */
static bool sync_msi(const struct iopt_smmuv3 *s, const struct iopt_smmuv3_cmd *c)
{
	return c->cs == IOPT_SMMUV3_SYNC_CS_IRQ && s->p.msi && c->msi_addr;
}

/*
 * Decode a command and check it against chapter 4 for the features the ID
 * registers advertise: 0, or CERROR_ILL. *cmd is what exec_cmd performs.
 * Checks and effects are separate so that the cost (cmd_cost) is known
 * when the command is taken and the effects happen when it completes.
 */
static uint32_t cmd_check(const struct iopt_smmuv3 *s, const uint64_t w[2],
			  struct iopt_smmuv3_cmd *cmd)
{
	unsigned op;

	if (iopt_smmuv3_cmd_decode(w, cmd))
		return CERROR_ILL;		/* 4.1.3: Reserved opcode */
	op = cmd->opcode;
	switch (op) {
	case IOPT_SMMUV3_CMD_PREFETCH_CONFIG: case IOPT_SMMUV3_CMD_PREFETCH_ADDR:
	case IOPT_SMMUV3_CMD_CFGI_STE: case IOPT_SMMUV3_CMD_CFGI_STE_RANGE:
	case IOPT_SMMUV3_CMD_CFGI_CD: case IOPT_SMMUV3_CMD_CFGI_CD_ALL:
		/* 4.1.6: SSec (bit 10) must be 0 on the Non-secure queue,
		 * the only one this model has. */
		if (w[0] >> CMD_SSEC_BIT & 1)
			return CERROR_ILL;
		break;
	default:
		break;
	}
	/* 4.3.3, 4.3.4: CFGI_CD and CFGI_CD_ALL need stage 1. */
	if ((op == IOPT_SMMUV3_CMD_CFGI_CD || op == IOPT_SMMUV3_CMD_CFGI_CD_ALL) && !s->p.s1)
		return CERROR_ILL;
	/* 4.4.2: stage 1 TLBIs need stage 1; 4.4.3: stage 2 ones stage 2. */
	if ((op == IOPT_SMMUV3_CMD_TLBI_NH_ALL || op == IOPT_SMMUV3_CMD_TLBI_NH_ASID ||
	     op == IOPT_SMMUV3_CMD_TLBI_NH_VA || op == IOPT_SMMUV3_CMD_TLBI_NH_VAA) && !s->p.s1)
		return CERROR_ILL;
	if ((op == IOPT_SMMUV3_CMD_TLBI_S2_IPA || op == IOPT_SMMUV3_CMD_TLBI_S12_VMALL) && !s->p.s2)
		return CERROR_ILL;
	if (op == IOPT_SMMUV3_CMD_TLBI_NH_VA || op == IOPT_SMMUV3_CMD_TLBI_NH_VAA ||
	    op == IOPT_SMMUV3_CMD_TLBI_S2_IPA) {
		/* 4.4.1.1: TG, TTL, NUM, SCALE are RES0 without RIL; this
		 * model detects a non-zero TG (4.1.5 lets it choose). */
		if (cmd->tg && !s->p.ril)
			return CERROR_ILL;
		if (cmd->tg) {
			/* 16K granule, TTL = 1 is Reserved without IDR5.DS
			 * (always 0 here) and treated as TTL = 0. */
			if (cmd->tg == 2 && cmd->ttl == 1)
				cmd->ttl = 0;
			/* NUM = SCALE = TTL = 0 with TG != 0: Reserved. */
			if (!cmd->num && !cmd->scale && !cmd->ttl)
				return CERROR_ILL;
		}
	}
	/* 4.5.1: CMD_ATC_INV is ILLEGAL when IDR0.ATS == 0. */
	if (op == IOPT_SMMUV3_CMD_ATC_INV && !s->p.ats)
		return CERROR_ILL;
	if (op == IOPT_SMMUV3_CMD_SYNC) {
		/* 4.7.3: CS = 0b11 is Reserved; SIG_SEV without IDR0.SEV is
		 * SIG_NONE. */
		if (cmd->cs > IOPT_SMMUV3_SYNC_CS_SEV)
			return CERROR_ILL;
		if (cmd->cs == IOPT_SMMUV3_SYNC_CS_SEV && !s->p.sev)
			cmd->cs = IOPT_SMMUV3_SYNC_CS_NONE;
	}
	return 0;
}

/*
 * The cycles a command takes from the engine taking it to its completion:
 * the one place the timing parameters turn into command cost. An illegal
 * or unreadable command costs cmd_cycles (it is consumed as far as that).
 */
static uint64_t cmd_cost(const struct iopt_smmuv3 *s, const struct iopt_smmuv3_cmd *c,
			 uint32_t err)
{
	uint64_t t = s->p.cmd_cycles;

	if (err)
		return t;
	if (is_cfgi(c->opcode))
		t += s->p.cfgi_cycles;
	else if (is_tlbi(c->opcode))
		t += s->p.tlbi_cycles;
	else if (c->opcode == IOPT_SMMUV3_CMD_SYNC)
		t += s->p.sync_cycles + (sync_msi(s, c) ? s->p.msi_cycles : 0);
	return t;
}

/* Perform one legal command (cmd_check passed) completing at cycle c. */
static void exec_cmd(struct iopt_smmuv3 *s, const struct iopt_smmuv3_cmd *cmd,
		     uint64_t c)
{
	struct tlb_match m;

	s->st.cmds[cmd->opcode]++;
	switch (cmd->opcode) {
	case IOPT_SMMUV3_CMD_CFGI_STE:
		v3_cfg_invalidate(s, false, cmd->sid, cmd->sid, false, 0);
		break;
	case IOPT_SMMUV3_CMD_CFGI_STE_RANGE:
		if (cmd->range == 31)
			v3_cfg_invalidate(s, true, 0, 0, false, 0);
		else
			v3_cfg_invalidate(s, false,
					  cmd->sid & ~((2u << cmd->range) - 1),
					  cmd->sid | ((2u << cmd->range) - 1), false, 0);
		break;
	case IOPT_SMMUV3_CMD_CFGI_CD:
		v3_cfg_invalidate(s, false, cmd->sid, cmd->sid, true, cmd->ssid);
		break;
	case IOPT_SMMUV3_CMD_CFGI_CD_ALL:
		v3_cfg_invalidate(s, false, cmd->sid, cmd->sid, false, 0);
		break;
	case IOPT_SMMUV3_CMD_SYNC:
		/* c is the completion cycle: every earlier command has
		 * completed (the engine is in order). */
		s->st.syncs++;
		/* 4.7.3 SIG_IRQ: the wired output, if implemented (an irq
		 * callback), regardless of MSIAddress; and the MSI when
		 * MSIs are implemented and MSIAddress is not 0. */
		if (cmd->cs == IOPT_SMMUV3_SYNC_CS_IRQ) {
			if (s->core.irq)
				s->core.irq(s->core.irq_ctx, IOPT_SMMUV3_IRQ_CMD_SYNC, c);
			if (sync_msi(s, cmd)) {
				uint32_t data = cmd->msi_data;

				if (s->core.mem.write(s->core.mem.ctx, cmd->msi_addr, &data, 4) < 0)
					v3_gerror_raise(s, GERROR_MSI_CMDQ_ABT, c);
			}
		}
		break;
	default:
		if (!is_tlbi(cmd->opcode))
			break;	/* PREFETCH_*, ATC_INV: no ATC, nothing to do */
		tlb_match_from_cmd(cmd, &m);
		if (s->p.tlb.enable)
			tlb_invalidate(&s->core.tlb, &m);
		/* Walk caches hold table descriptors: a Leaf=1 invalidation
		 * leaves them; the TTL hint names a leaf level, not theirs. */
		if (s->p.walk.enable && !(m.by_range && cmd->leaf)) {
			m.level = 0;
			m.or_global = false;
			tlb_invalidate(&s->core.wc.t, &m);
		}
		break;
	}
}

/* Index and wrap bits of a queue pointer. */
static uint32_t q_ptr(uint32_t v, unsigned l2)
{
	return v & ((2u << l2) - 1);
}

/* How far queue pointer a is ahead of b (index and wrap bits). */
static uint32_t q_dist(uint32_t a, uint32_t b, unsigned l2)
{
	return (a - b) & ((2u << l2) - 1);
}

/* PROD was written at cycle with the commands before prod now visible:
 * remember when the new ones became visible. */
void v3_cmd_publish(struct iopt_smmuv3 *s, uint32_t prod, uint64_t cycle)
{
	unsigned l2 = v3_q_log2(s->cmdq_base, s->p.cmdqs);
	uint32_t cons = q_ptr(s->cmdq_cons, l2);
	uint32_t d = q_dist(prod, cons, l2);

	s->cmd_visible = cycle;
	if (!d || d > (1u << l2)) {
		s->vis_n = 0;		/* empty, or a PROD past a full queue */
		return;
	}
	if (s->vis_n) {
		unsigned last = (s->vis_head + s->vis_n - 1) % CMD_VIS_MARKS;
		uint32_t dl = q_dist(s->vis[last].prod, cons, l2);

		if (d == dl)
			return;		/* no new command */
		if (d < dl || dl > (1u << l2)) {
			s->vis_n = 0;	/* PROD moved back: start again */
		} else if (s->vis_n == CMD_VIS_MARKS) {
			/* Full: the newest mark grows to the new commands and
			 * takes this cycle (docs/smmu_model.md, Timing). */
			s->vis[last].prod = prod;
			s->vis[last].cycle = cycle;
			return;
		}
	}
	if (!s->vis_n)
		s->vis_head = 0;
	s->vis[(s->vis_head + s->vis_n) % CMD_VIS_MARKS].prod = prod;
	s->vis[(s->vis_head + s->vis_n) % CMD_VIS_MARKS].cycle = cycle;
	s->vis_n++;
}

/* The cycle the command at cons became visible (marks it has passed are
 * dropped). */
static uint64_t cmd_visible_at(struct iopt_smmuv3 *s, uint32_t cons, unsigned l2)
{
	while (s->vis_n) {
		uint32_t d = q_dist(s->vis[s->vis_head].prod, cons, l2);

		if (d && d <= (1u << l2))
			return s->vis[s->vis_head].cycle;
		s->vis_head = (s->vis_head + 1) % CMD_VIS_MARKS;
		s->vis_n--;
	}
	return s->cmd_visible;
}

/*
 * The next command, if the queue runs: command k completes at
 * max(the cycle it became visible, completion of k - 1) + its cost
 * (cmd_cost). NULL if there is none. Read and checked once while it
 * waits at CONS (the cache in struct iopt_smmuv3).
 */
static const struct v3_cmd_step *next_cmd(struct iopt_smmuv3 *s)
{
	unsigned l2 = v3_q_log2(s->cmdq_base, s->p.cmdqs);
	uint32_t prod = q_ptr(s->cmdq_prod, l2), cons = q_ptr(s->cmdq_cons, l2);
	uint64_t base = v3_q_base(s->cmdq_base, 16ull << l2);
	struct v3_cmd_step *c = &s->cstep;
	uint64_t vis, start;

	if (v3_cmdq_stopped(s) || prod == cons)
		return NULL;
	if (s->cstep_ok && s->cstep_cons == s->cmdq_cons &&
	    s->cstep_free == s->cmd_free && s->cstep_gen == s->reg_gen)
		return c;
	vis = cmd_visible_at(s, cons, l2);
	start = s->cmd_free > vis ? s->cmd_free : vis;
	memset(&c->cmd, 0, sizeof(c->cmd));
	if (s->core.mem.read(s->core.mem.ctx, base + (uint64_t)(cons & ((1u << l2) - 1)) * 16,
			c->w, 16) < 0)
		c->err = CERROR_ABT;	/* 4.1.3: external abort on the fetch */
	else
		c->err = cmd_check(s, c->w, &c->cmd);
	c->done = start + cmd_cost(s, &c->cmd, c->err);
	s->cstep_cons = s->cmdq_cons;
	s->cstep_free = s->cmd_free;
	s->cstep_gen = s->reg_gen;
	s->cstep_ok = true;
	return c;
}

/* Perform commands that complete by until (their effects at their
 * completion cycle). */
void v3_run_cmds(struct iopt_smmuv3 *s, uint64_t until)
{
	const struct v3_cmd_step *c;

	while ((c = next_cmd(s)) && c->done <= until) {
		unsigned l2 = v3_q_log2(s->cmdq_base, s->p.cmdqs);
		uint32_t cons = q_ptr(s->cmdq_cons, l2);

		/* Invalidations, the queue's state: no hit memo survives a
		 * command (common/hit_memo.h). */
		smmu_core_gen_bump(&s->core);
		s->cmd_free = c->done;
		if (c->err) {
			/* 4.1.3, 7.1: the queue stops at the bad command;
			 * CONS points at it and CONS.ERR says why. */
			s->cmdq_cons = (s->cmdq_cons & ~(0x7fu << CONS_ERR_SHIFT)) |
				       c->err << CONS_ERR_SHIFT;
			s->st.cmd_errors++;
			v3_gerror_raise(s, GERROR_CMDQ_ERR, c->done);
			break;
		}
		exec_cmd(s, &c->cmd, c->done);
		s->cmdq_cons = (s->cmdq_cons & (0x7fu << CONS_ERR_SHIFT)) |
			       ((cons + 1) & ((2u << l2) - 1));
	}
	smmu_core_time_set(&s->core, until);
	/* Not for correctness (the model's lock orders all of the above):
	 * on the x86 host the command path (`iopt-bench smmu --case cmdq`)
	 * ran 1.2-1.8x slower without a full barrier here, with the same
	 * instructions and simulated cache misses; the compare-and-swap of
	 * the time that stood here before the time was per writer gave one.
	 * Commands only: translations with an idle queue never come here. */
	plat_fence_seq_cst();
}

uint64_t iopt_smmuv3_next_event(struct iopt_smmuv3 *s)
{
	const struct v3_cmd_step *c;
	uint64_t done = UINT64_MAX;

	plat_mutex_lock(&s->core.lock);
	if ((c = next_cmd(s)))
		done = c->done;
	plat_mutex_unlock(&s->core.lock);
	return done;
}

int iopt_smmuv3_run_until(struct iopt_smmuv3 *s, uint64_t cycle)
{
	int ret;

	plat_mutex_lock(&s->core.lock);
	ret = smmu_core_time_at(&s->core, &cycle);
	if (!ret)
		v3_run_cmds(s, cycle);
	plat_mutex_unlock(&s->core.lock);
	return ret;
}
