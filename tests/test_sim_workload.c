/* SPDX-License-Identifier: MIT */
/*
 * The workload models (iopgtable/workload.h, docs/workload.md), each
 * against a figure worked out by hand from its parameters:
 *   - TX with no stack cost runs at the link rate times payload over wire
 *     bytes (per send: its skbs' payload plus per wire packet overhead);
 *     with byte_cycles b alone one stream runs at cpu_ghz x 8 / b Gbps and
 *     keeps one of the two CPUs busy;
 *   - RX with no stack cost runs at the link rate likewise; with b alone
 *     one queue runs at mss x 8 / (mss b + irq_entry / budget) per cycle;
 *   - NVMe at queue depth 1 completes one I/O per latency + submit +
 *     complete + irq_entry; with an IOPS cap and deep queues, at the cap;
 *   - dma_map_benchmark without an IOMMU measures one clock read per
 *     latency, and loops once per 4 clock reads + dma_trans_ns + memset;
 *   - every mapping is unmapped (the DMA layer's counters and a probe
 *     driver's view), and unmaps run in interrupt context on the CPU the
 *     parameters name (the probe driver records where each invalidation
 *     runs);
 *   - the same seed gives the same figures and trace hash;
 *   - bad parameters are -EINVAL with nothing run; calibration recovers
 *     a known per-byte cost and refuses a target above the link.
 * Instructions cost nothing (ipc 0) so that the only costs are the named
 * ones, the platform calls' few cycles and the interrupts' entries.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <iopgtable/dma.h>
#include <iopgtable/sim.h>
#include <iopgtable/testbed.h>
#include <iopgtable/workload.h>

#define GHZ 2.5

static struct iopt_sim *mk_sim(unsigned cpus, uint64_t seed)
{
	struct iopt_sim_params p;
	struct iopt_sim *s = NULL;

	iopt_sim_params_default(&p);
	p.cpus = cpus;
	p.seed = seed;
	p.cpu_ghz = GHZ;
	p.ipc = 0;
	p.irq_entry = 1000;
	p.ctx_switch = 0;
	/* A livelock (a CPU spinning on what never comes) ends the run
	 * with -ETIMEDOUT rather than hanging the test: no run here needs
	 * 20 ms. */
	p.max_cycles = (uint64_t)(20e6 * GHZ);
	assert_int_equal(iopt_sim_create(&p, &s), 0);
	return s;
}

static void within(double got, double want, double rel)
{
	double e = got > want ? got - want : want - got;

	if (e > rel * want)
		fail_msg("got %.4f, wanted %.4f within %.1f%%", got, want,
			 rel * 100);
}

/* ---- a probe driver: records where each invalidation runs ------------- */

struct probe {
	uint64_t invs, invs_outside_irq, invs_wrong_cpu;
	unsigned want_cpu;		/* IOPT_WL_IRQ_SPREAD: any */
};

static int pr_domain_alloc(void *drv, unsigned stage, void **dom)
{
	*dom = drv;
	return 0;
}

static int pr_domain_free(void *dom)
{
	return 0;
}

static int pr_attach(void *dom, struct iopt_pgtable *pt, uint32_t sid)
{
	return 0;
}

static int pr_detach(void *dom, uint32_t sid)
{
	return 0;
}

static int pr_inv_range(void *dom, uint64_t iova, uint64_t size,
			uint64_t granule, bool leaf)
{
	struct probe *p = dom;

	p->invs++;
	if (!iopt_sim_in_irq())
		p->invs_outside_irq++;
	if (p->want_cpu != IOPT_WL_IRQ_SPREAD && iopt_sim_cpu() != p->want_cpu)
		p->invs_wrong_cpu++;
	return 0;
}

static int pr_sync(void *dom)
{
	return 0;
}

static const struct iopt_dma_drv_ops probe_ops = {
	.name = "probe",
	.domain_alloc = pr_domain_alloc,
	.domain_free = pr_domain_free,
	.attach = pr_attach,
	.detach = pr_detach,
	.inv_range = pr_inv_range,
	.sync = pr_sync,
	.flush_all = pr_sync,
};

static struct iopt_dma *mk_probe_dma(struct probe *pr, unsigned cpus)
{
	struct iopt_dma_cfg c;
	struct iopt_dma *d = NULL;

	iopt_dma_default_cfg(&c);
	c.ops = &probe_ops;
	c.drv = pr;
	c.nr_cpus = cpus;
	assert_int_equal(iopt_dma_create(&c, &d), 0);
	return d;
}

/* Every mapping made was unmapped: the DMA layer's counters. */
static void all_unmapped(struct iopt_dma *d, uint64_t maps, uint64_t unmaps)
{
	struct iopt_dma_stats st;

	iopt_dma_get_stats(d, &st);
	assert_true(maps > 0);
	assert_int_equal(st.maps, maps);
	assert_int_equal(st.unmaps, unmaps);
	assert_int_equal(st.maps, st.unmaps);
	assert_int_equal(st.bad_unmaps, 0);
	assert_int_equal(st.map_errors, 0);
	assert_int_equal(st.held, 0);
}

/* ---- network TX --------------------------------------------------------- */

static void tx_free_of_cost(struct iopt_wl_tx_params *p)
{
	p->send_cycles = 0;
	p->skb_cycles = 0;
	p->byte_cycles = 0;
	p->clean_cycles = 0;
}

/* Wire bytes of one send, from its skbs and their packets. */
static double tx_wire_per_send(const struct iopt_wl_tx_params *p)
{
	double wire = 0;

	for (uint64_t left = p->send_bytes; left;) {
		uint64_t pl = left < p->skb_bytes ? left : p->skb_bytes;

		wire += (double)pl + (double)((pl + p->mss - 1) / p->mss) *
				     p->wire_overhead;
		left -= pl;
	}
	return wire;
}

static void t_tx_link_cap(void **state)
{
	enum iopt_wl_tx_kind kinds[] = { IOPT_WL_TCP, IOPT_WL_UDP };

	for (unsigned k = 0; k < 2; k++) {
		struct iopt_sim *s = mk_sim(2, 1);
		struct iopt_wl_tx_params p;
		struct iopt_wl_tx_result r;

		iopt_wl_tx_default(&p, kinds[k]);
		tx_free_of_cost(&p);
		p.irq_cpu = 1;
		/* Completions by the timer, soon enough that the socket's
		 * buffer covers the link meanwhile. */
		p.irq_frames = 1u << 30;
		p.irq_usecs_ns = 5000;
		assert_int_equal(iopt_wl_tx_run(s, NULL, &p, &r), 0);
		within(r.gbps, p.link_gbps * (double)p.send_bytes /
				       tx_wire_per_send(&p), 0.01);
		assert_int_equal(r.dma_errors, 0);
		iopt_sim_destroy(s);
	}
}

static void t_tx_per_byte(void **state)
{
	struct iopt_sim *s = mk_sim(2, 1);
	struct iopt_wl_tx_params p;
	struct iopt_wl_tx_result r;

	iopt_wl_tx_default(&p, IOPT_WL_TCP);
	tx_free_of_cost(&p);
	p.byte_cycles = 1.0;
	p.irq_cpu = 1;
	assert_int_equal(iopt_wl_tx_run(s, NULL, &p, &r), 0);
	within(r.gbps, GHZ * 8 / p.byte_cycles, 0.03);
	/* The sender's CPU is busy, the other one nearly idle. */
	within(r.cpu_util, 0.5, 0.06);
	iopt_sim_destroy(s);
}

/* Streams sharing CPUs: each CPU saturated, whichever thread it runs. */
static void t_tx_shared_cpus(void **state)
{
	struct iopt_sim *s = mk_sim(2, 2);
	struct iopt_wl_tx_params p;
	struct iopt_wl_tx_result r;

	iopt_wl_tx_default(&p, IOPT_WL_TCP);
	tx_free_of_cost(&p);
	p.streams = 5;
	p.queues = 2;
	p.byte_cycles = 2.0;
	assert_int_equal(iopt_wl_tx_run(s, NULL, &p, &r), 0);
	within(r.gbps, 2 * GHZ * 8 / p.byte_cycles, 0.03);
	within(r.cpu_util, 1.0, 0.03);
	iopt_sim_destroy(s);
}

/* What the calibration's bisection stands on: more cycles a byte, never
 * more throughput (beyond the window's granularity of whole skbs and
 * completion phases at the link cap, under 2%). */
static void t_tx_monotone_in_cost(void **state)
{
	double last = 1e9;

	for (double b = 0.125; b <= 4; b *= 2) {
		struct iopt_sim *s = mk_sim(4, 1);
		struct iopt_wl_tx_params p;
		struct iopt_wl_tx_result r;

		iopt_wl_tx_default(&p, IOPT_WL_TCP);
		p.streams = 3;
		p.queues = 3;
		p.byte_cycles = b;
		p.duration_ns = 1000000;
		p.warmup_ns = 200000;
		assert_int_equal(iopt_wl_tx_run(s, NULL, &p, &r), 0);
		assert_true(r.gbps <= last * 1.02);
		last = r.gbps;
		iopt_sim_destroy(s);
	}
}

/* More streams than CPUs through a DMA domain: every mapping unmapped,
 * every unmap in the completion interrupt on irq_cpu. */
static void t_tx_unmaps_in_irq(void **state)
{
	struct iopt_sim *s = mk_sim(2, 3);
	struct probe pr = { .want_cpu = 1 };
	struct iopt_dma *d = mk_probe_dma(&pr, 2);
	struct iopt_wl_tx_params p;
	struct iopt_wl_tx_result r;

	iopt_wl_tx_default(&p, IOPT_WL_TCP);
	p.streams = 5;
	p.queues = 2;
	p.irq_cpu = 1;
	p.duration_ns = 1000000;
	p.warmup_ns = 200000;
	assert_int_equal(iopt_wl_tx_run(s, d, &p, &r), 0);
	assert_int_equal(r.dma_errors, 0);
	all_unmapped(d, r.maps, r.unmaps);
	assert_int_equal(r.maps % (p.frags + 1), 0);	/* head + frags */
	assert_int_equal(pr.invs, r.unmaps);		/* strict: one each */
	assert_int_equal(pr.invs_outside_irq, 0);
	assert_int_equal(pr.invs_wrong_cpu, 0);
	assert_true(r.irqs > 0 && r.gbps > 0);
	iopt_dma_destroy(d);
	iopt_sim_destroy(s);
}

/* The real chain (SMMUv3 model on the simulation's clock): all unmapped,
 * and the IOMMU costs the CPU-bound sender throughput. */
static void t_tx_testbed(void **state)
{
	struct iopt_sim *s = mk_sim(2, 5);
	struct iopt_testbed_cfg c;
	struct iopt_testbed *tb;
	struct iopt_wl_tx_params p;
	struct iopt_wl_tx_result on, off;

	iopt_testbed_default_cfg(&c, IOPT_TESTBED_SMMUV3);
	c.clock = IOPT_TESTBED_CLOCK_SIM;
	c.sim = s;
	c.dma_cfg.nr_cpus = 2;
	assert_int_equal(iopt_testbed_create(&c, &tb), 0);
	iopt_wl_tx_default(&p, IOPT_WL_TCP);
	p.irq_cpu = 1;
	p.frags = 16;
	p.duration_ns = 1000000;
	p.warmup_ns = 200000;
	assert_int_equal(iopt_wl_tx_run(s, iopt_testbed_dma(tb), &p, &on), 0);
	assert_int_equal(on.dma_errors, 0);
	all_unmapped(iopt_testbed_dma(tb), on.maps, on.unmaps);
	iopt_testbed_destroy(tb);
	iopt_sim_destroy(s);

	s = mk_sim(2, 5);
	assert_int_equal(iopt_wl_tx_run(s, NULL, &p, &off), 0);
	iopt_sim_destroy(s);
	assert_true(on.gbps > 0);
	assert_true(on.gbps < off.gbps);
}

/* ---- network RX --------------------------------------------------------- */

static void t_rx_link_and_per_byte(void **state)
{
	struct iopt_wl_rx_params p;
	struct iopt_wl_rx_result r;
	struct iopt_sim *s = mk_sim(2, 1);

	iopt_wl_rx_default(&p);
	p.streams = 2;
	p.pkt_cycles = 0;
	p.byte_cycles = 0;
	assert_int_equal(iopt_wl_rx_run(s, NULL, &p, &r), 0);
	within(r.gbps, p.link_gbps * p.mss / (double)(p.mss + p.wire_overhead),
	       0.01);
	iopt_sim_destroy(s);

	/* CPU-bound: every NAPI round a full budget, one entry each. */
	s = mk_sim(2, 1);
	p.streams = 1;
	p.byte_cycles = 1.0;
	assert_int_equal(iopt_wl_rx_run(s, NULL, &p, &r), 0);
	within(r.gbps, p.mss * 8.0 * GHZ /
		       (p.mss * p.byte_cycles + 1000.0 / p.budget), 0.02);
	assert_true(r.stalls > 0);	/* the NIC waited for buffers */
	iopt_sim_destroy(s);
}

static void t_rx_unmaps_in_irq(void **state)
{
	struct iopt_sim *s = mk_sim(3, 2);
	struct probe pr = { .want_cpu = 2 };
	struct iopt_dma *d = mk_probe_dma(&pr, 3);
	struct iopt_wl_rx_params p;
	struct iopt_wl_rx_result r;
	struct iopt_dma_stats st;

	iopt_wl_rx_default(&p);
	p.streams = 4;
	p.irq_cpu = 2;
	p.ring_entries = 64;
	p.duration_ns = 500000;
	p.warmup_ns = 100000;
	assert_int_equal(iopt_wl_rx_run(s, d, &p, &r), 0);
	assert_int_equal(r.dma_errors, 0);
	all_unmapped(d, r.maps, r.unmaps);
	/* The rings' teardown unmaps in thread context; the rest are the
	 * handler's. */
	assert_int_equal(pr.invs, r.unmaps);
	assert_int_equal(pr.invs_outside_irq, (uint64_t)p.streams * p.ring_entries);
	iopt_dma_get_stats(d, &st);
	assert_true(r.packets > 0 && r.gbps > 0);
	iopt_dma_destroy(d);
	iopt_sim_destroy(s);
}

/* ---- NVMe --------------------------------------------------------------- */

static void t_nvme_qd1(void **state)
{
	struct iopt_sim *s = mk_sim(2, 1);
	struct iopt_wl_nvme_params p;
	struct iopt_wl_nvme_result r;
	double per_io_ns;

	iopt_wl_nvme_default(&p);
	p.latency_ns = 10000;
	p.submit_cycles = 2500;
	p.complete_cycles = 1000;
	assert_int_equal(iopt_wl_nvme_run(s, NULL, &p, &r), 0);
	per_io_ns = (double)p.latency_ns +
		    (double)(p.submit_cycles + p.complete_cycles + 1000) / GHZ;
	within(r.iops, 1e9 / per_io_ns, 0.03);
	within(r.lat_us, (p.latency_ns + p.complete_cycles / GHZ + 1000 / GHZ) /
			 1000.0, 0.03);
	iopt_sim_destroy(s);

	/* Deep queues against the device's cap. */
	s = mk_sim(2, 1);
	p.jobs = 4;
	p.iodepth = 32;
	p.max_iops = 200000;
	assert_int_equal(iopt_wl_nvme_run(s, NULL, &p, &r), 0);
	within(r.iops, p.max_iops, 0.02);
	iopt_sim_destroy(s);
}

static void t_nvme_unmaps_in_irq(void **state)
{
	for (int per_page = 0; per_page < 2; per_page++) {
		struct iopt_sim *s = mk_sim(2, 4);
		struct probe pr = { .want_cpu = 0 };
		struct iopt_dma *d = mk_probe_dma(&pr, 2);
		struct iopt_wl_nvme_params p;
		struct iopt_wl_nvme_result r;

		iopt_wl_nvme_default(&p);
		p.jobs = 3;
		p.iodepth = 4;
		p.io_bytes = 16384;
		p.map_per_page = per_page;
		p.irq_cpu = 0;
		p.latency_ns = 20000;
		p.duration_ns = 500000;
		p.warmup_ns = 100000;
		assert_int_equal(iopt_wl_nvme_run(s, d, &p, &r), 0);
		assert_int_equal(r.dma_errors, 0);
		all_unmapped(d, r.maps, r.unmaps);
		/* One sg mapping per I/O, or one per page. */
		assert_int_equal(r.maps % (per_page ? 4 : 1), 0);
		assert_int_equal(pr.invs, r.unmaps);
		assert_int_equal(pr.invs_outside_irq, 0);
		assert_int_equal(pr.invs_wrong_cpu, 0);
		assert_true(r.ios > 0);
		iopt_dma_destroy(d);
		iopt_sim_destroy(s);
	}
}

/* ---- dma_map_benchmark -------------------------------------------------- */

static void t_mapbench(void **state)
{
	struct iopt_sim_params sp;
	struct iopt_sim *s = NULL;
	struct iopt_wl_mapbench_params p;
	struct iopt_wl_mapbench_result r;
	struct probe pr = { .want_cpu = IOPT_WL_IRQ_SPREAD };
	struct iopt_dma *d;
	double per_loop_ns;

	iopt_sim_params_default(&sp);
	sp.cpus = 2;
	sp.cpu_ghz = GHZ;
	sp.ipc = 0;
	sp.clock_read = 250;		/* 100 ns */
	assert_int_equal(iopt_sim_create(&sp, &s), 0);
	iopt_wl_mapbench_default(&p);
	p.threads = 2;
	p.dma_trans_ns = 1000;
	assert_int_equal(iopt_wl_mapbench_run(s, NULL, &p, &r), 0);
	/* Nothing between two clock reads but the second one. */
	within(r.map_ns, 100, 0.001);
	within(r.unmap_ns, 100, 0.001);
	within(r.map_us, 0.1, 0.001);
	assert_true(r.map_stddev_us == 0);
	per_loop_ns = 4 * 100 + (double)p.dma_trans_ns +
		      p.memset_byte_cycles * p.npages * 4096 / GHZ;
	within((double)r.loops, 2 * (double)p.duration_ns / per_loop_ns, 0.02);
	iopt_sim_destroy(s);

	/* Through a domain: each loop one map and one unmap, measured. */
	assert_int_equal(iopt_sim_create(&sp, &s), 0);
	d = mk_probe_dma(&pr, 2);
	p.npages = 16;
	assert_int_equal(iopt_wl_mapbench_run(s, d, &p, &r), 0);
	all_unmapped(d, r.loops, r.loops);
	assert_true(r.map_ns > 100 && r.unmap_ns > 100);
	assert_int_equal(pr.invs_outside_irq, r.loops);	/* thread context */
	iopt_dma_destroy(d);
	iopt_sim_destroy(s);
}

/* ---- determinism, bad input, calibration -------------------------------- */

static void tx_once(uint64_t seed, struct iopt_wl_tx_result *r, uint64_t *hash)
{
	struct iopt_sim *s = mk_sim(2, seed);
	struct probe pr = { .want_cpu = IOPT_WL_IRQ_SPREAD };
	struct iopt_dma *d = mk_probe_dma(&pr, 2);
	struct iopt_wl_tx_params p;
	struct iopt_sim_stats st;

	iopt_wl_tx_default(&p, IOPT_WL_UDP);
	p.streams = 3;
	p.duration_ns = 300000;
	p.warmup_ns = 50000;
	assert_int_equal(iopt_wl_tx_run(s, d, &p, r), 0);
	iopt_sim_stats(s, &st);
	*hash = st.trace_hash;
	iopt_dma_destroy(d);
	iopt_sim_destroy(s);
}

/* tx_once() in a fresh process: a run is reproducible from the same
 * binary, parameters and seed, and the lines the coherence model sees
 * are host addresses, which a process that has run before lays out
 * differently (two objects may share a line in one heap and not in
 * another). */
static void tx_once_fresh(uint64_t seed, struct iopt_wl_tx_result *r,
			  uint64_t *hash)
{
	struct { struct iopt_wl_tx_result r; uint64_t h; } out;
	int fd[2], status;
	pid_t pid;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		tx_once(seed, &out.r, &out.h);
		_exit(write(fd[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &out, sizeof(out)), sizeof(out));
	close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*r = out.r;
	*hash = out.h;
}

static void t_same_seed_same_run(void **state)
{
	struct iopt_wl_tx_result a, b;
	uint64_t ha, hb;

	tx_once_fresh(9, &a, &ha);
	tx_once_fresh(9, &b, &hb);
	assert_int_equal(ha, hb);
	assert_true(a.gbps == b.gbps && a.cpu_util == b.cpu_util);
	assert_int_equal(a.bytes, b.bytes);
	assert_int_equal(a.irqs, b.irqs);
	assert_int_equal(a.maps, b.maps);
}

static void t_bad_params(void **state)
{
	struct iopt_sim *s = mk_sim(2, 1);
	struct iopt_wl_tx_params tx, t;
	struct iopt_wl_rx_params rx, x;
	struct iopt_wl_nvme_params nv, n;
	struct iopt_wl_mapbench_params mb, b;
	struct iopt_wl_tx_result tr, tr0;
	struct iopt_wl_rx_result rr;
	struct iopt_wl_nvme_result nr;
	struct iopt_wl_mapbench_result br;
	struct iopt_sim_stats st0, st1;

	iopt_wl_tx_default(&tx, IOPT_WL_TCP);
	iopt_wl_rx_default(&rx);
	iopt_wl_nvme_default(&nv);
	iopt_wl_mapbench_default(&mb);
	memset(&tr, 0xa5, sizeof(tr));
	tr0 = tr;
	iopt_sim_stats(s, &st0);

	assert_int_equal(iopt_wl_tx_run(NULL, NULL, &tx, &tr), -EINVAL);
	assert_int_equal(iopt_wl_tx_run(s, NULL, NULL, &tr), -EINVAL);
	assert_int_equal(iopt_wl_tx_run(s, NULL, &tx, NULL), -EINVAL);
#define BAD_TX(field, v) do { t = tx; t.field = v; \
	assert_int_equal(iopt_wl_tx_run(s, NULL, &t, &tr), -EINVAL); } while (0)
	BAD_TX(streams, 0);
	BAD_TX(queues, 0);
	BAD_TX(send_bytes, 0);
	BAD_TX(mss, 0);
	BAD_TX(frags, 0);
	BAD_TX(frags, 65);
	BAD_TX(ring_entries, tx.frags);
	BAD_TX(sndbuf_bytes, tx.skb_bytes - 1);
	BAD_TX(link_gbps, 0);
	BAD_TX(byte_cycles, -1);
	BAD_TX(irq_frames, 0);
	BAD_TX(irq_cpu, 2);
	BAD_TX(warmup_ns, tx.duration_ns);
	BAD_TX(dma_mask, 0x1000);
	BAD_TX(paddr, 0x123);
	assert_memory_equal(&tr, &tr0, sizeof(tr));

#define BAD_RX(field, v) do { x = rx; x.field = v; \
	assert_int_equal(iopt_wl_rx_run(s, NULL, &x, &rr), -EINVAL); } while (0)
	BAD_RX(streams, 0);
	BAD_RX(mss, rx.buf_bytes + 1);
	BAD_RX(ring_entries, 0);
	BAD_RX(budget, 0);
	BAD_RX(irq_cpu, 5);
#define BAD_NV(field, v) do { n = nv; n.field = v; \
	assert_int_equal(iopt_wl_nvme_run(s, NULL, &n, &nr), -EINVAL); } while (0)
	BAD_NV(jobs, 0);
	BAD_NV(iodepth, 0);
	BAD_NV(io_bytes, 4095);
	BAD_NV(io_bytes, 6000);
	BAD_NV(max_iops, -1);
#define BAD_MB(field, v) do { b = mb; b.field = v; \
	assert_int_equal(iopt_wl_mapbench_run(s, NULL, &b, &br), -EINVAL); } while (0)
	BAD_MB(threads, 0);
	BAD_MB(npages, 0);
	BAD_MB(prot, 0);
	BAD_MB(prot, IOPT_READ | IOPT_CACHE);
	BAD_MB(duration_ns, 0);

	/* Nothing ran. */
	iopt_sim_stats(s, &st1);
	assert_int_equal(st0.end_cycles, st1.end_cycles);
	assert_int_equal(st0.trace_hash, st1.trace_hash);
	iopt_sim_destroy(s);
}

static void t_calibrate(void **state)
{
	struct iopt_sim_params sp;
	struct iopt_wl_tx_params p, q;
	struct iopt_wl_nvme_params n;

	iopt_sim_params_default(&sp);
	sp.cpus = 2;
	sp.cpu_ghz = GHZ;
	sp.ipc = 0;
	iopt_wl_tx_default(&p, IOPT_WL_TCP);
	tx_free_of_cost(&p);
	p.irq_cpu = 1;
	p.duration_ns = 1000000;
	p.warmup_ns = 200000;
	/* 20 Gbps at 2.5 GHz is 1 cycle a byte. */
	assert_int_equal(iopt_wl_tx_calibrate(&sp, &p, 20.0, 0.005), 0);
	within(p.byte_cycles, 1.0, 0.03);
	/* Above what the link carries. */
	q = p;
	assert_int_equal(iopt_wl_tx_calibrate(&sp, &p, 60.0, 0.005), -ERANGE);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_int_equal(iopt_wl_tx_calibrate(&sp, &p, 0, 0.005), -EINVAL);
	assert_int_equal(iopt_wl_tx_calibrate(&sp, &p, 20, 1), -EINVAL);
	assert_int_equal(iopt_wl_tx_calibrate(NULL, &p, 20, 0.01), -EINVAL);

	/* NVMe at QD1: 50K IOPS with a 10 us device is 10 us of submission. */
	iopt_wl_nvme_default(&n);
	n.latency_ns = 10000;
	n.complete_cycles = 0;
	n.duration_ns = 2000000;
	n.warmup_ns = 200000;
	sp.irq_entry = 0;
	sp.ctx_switch = 0;
	assert_int_equal(iopt_wl_nvme_calibrate(&sp, &n, 50000, 0.005), 0);
	within((double)n.submit_cycles, 10000 * GHZ, 0.03);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tx_link_cap),
		cmocka_unit_test(t_tx_per_byte),
		cmocka_unit_test(t_tx_shared_cpus),
		cmocka_unit_test(t_tx_monotone_in_cost),
		cmocka_unit_test(t_tx_unmaps_in_irq),
		cmocka_unit_test(t_tx_testbed),
		cmocka_unit_test(t_rx_link_and_per_byte),
		cmocka_unit_test(t_rx_unmaps_in_irq),
		cmocka_unit_test(t_nvme_qd1),
		cmocka_unit_test(t_nvme_unmaps_in_irq),
		cmocka_unit_test(t_mapbench),
		cmocka_unit_test(t_same_seed_same_run),
		cmocka_unit_test(t_bad_params),
		cmocka_unit_test(t_calibrate),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);	/* one test, by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
