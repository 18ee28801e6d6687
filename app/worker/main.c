/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter-worker: one rank of a collective benchmark (allreduce by default; --coll names
 * another) against a shouter aggregator.
 *
 * Every rank fills its input from a hash of (rank, iteration, index), so every rank can
 * compute the exact expected output of each collective, from any rank's inputs
 * (worker_coll.c), and check its output bit for bit; the
 * inputs have no period in the index that could alias with window x chunk (a previous
 * round's result in a slot is wrong in nearly every element). float32 inputs are odd integers of
 * magnitude up to (2^24 - 1) / world, a quarter of them negative: any partial sum of the
 * world's inputs, in any order, is an integer below 2^24 in magnitude, so it is exact in
 * float32 and the result is bit-identical whatever the summation order; yet more than 90%
 * of the sums need more than 17 significant bits at any world up to 4096 (they grow to
 * about 2^22), so a sum rounded through bfloat16 or float16, or truncated, is wrong and
 * caught. Odd inputs are never 0: a SUM that lacks one rank's input is wrong in every
 * element. MIN and MAX are exact too. int32 inputs span the whole range and sums wrap
 * (two's complement), as in the box.
 *
 * Each iteration: fill, barrier (so that no rank's fill or check delays another's timed
 * collective), timed collective, CRC32C of the output (continued from the previous
 * iteration's: the RESULT line's crc= covers every iteration, so ranks that print the same
 * crc= received the same bytes throughout), check. The first --warmup iterations are not
 * timed.
 */


#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>

#include "worker.h"


static void
print_result(const struct opts *o, const struct result *r)
{
	printf("RESULT rank=%ld world=%ld dtype=%s size=%" PRIu64 " iters=%" PRIu64
	       " ok=%d goodput_gbps=%.3f lat_us_p50=%.1f lat_us_p99=%.1f retx=%" PRIu64
	       " crc=%08x",
	       o->rank, o->world, o->dtype > 0 ? shr_proto_dtype_str((unsigned int)o->dtype) : "?",
	       o->size, o->iters, r->ok ? 1 : 0, r->goodput_gbps, r->lat_p50_us, r->lat_p99_us,
	       r->retx, r->crc);
	printf(" coll=%s", o->kind >= 0 ? shr_proto_kind_str((unsigned int)o->kind) : "?");
	if (!r->ok)
		printf(" error=%s", r->error != NULL ? r->error : "unknown");
	printf("\n");
	fflush(stdout);
}

/* ---- main ---- */

/*
 * Wait, in 5 ms steps up to GO_WAIT_MS, until path exists (exist) or is gone (!exist); with
 * comm, still a member: what the box (or anyone) sends meanwhile is taken and counted (a
 * refused MAC, a late RESULT). Returns 0, or -ETIMEDOUT.
 */
static int
wait_path(const char *path, bool exist, struct shr_shard *comm)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 5000000 };
	unsigned int waited_ms;

	for (waited_ms = 0; (access(path, F_OK) == 0) != exist; waited_ms += 5) {
		if (waited_ms >= GO_WAIT_MS)
			return -ETIMEDOUT;
		for (uint16_t b = 0; comm != NULL && b < shr_shard_nboxes(comm); b++)
			(void)shr_comm_progress(shr_shard_comm(comm, b));
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Option what's file path appears (wait_path()), or it is said and -ETIMEDOUT returned. */
static int
wait_appear(const char *what, const char *path, struct shr_shard *comm)
{
	if (wait_path(path, true, comm) == 0)
		return 0;
	fprintf(stderr, PROG ": %s: %s did not appear within %u s\n", what, path,
		GO_WAIT_MS / 1000);
	return -ETIMEDOUT;
}

/* --ready-file / --go-file: say that this rank has joined, then wait for the go. */
static int
hold(const struct opts *o)
{
	FILE *f;

	if (o->ready_file != NULL) {
		f = fopen(o->ready_file, "w");
		if (f == NULL || fclose(f) != 0) {
			fprintf(stderr, PROG ": --ready-file: cannot create %s\n", o->ready_file);
			return -EIO;
		}
	}
	return o->go_file != NULL ? wait_appear("--go-file", o->go_file, NULL) : 0;
}

/*
 * --end-file: say that the allreduces are done, then wait, still a member (taking what comes
 * in), until the file is removed (or the rank is killed; up to GO_WAIT_MS).
 */
static void
hold_end(const struct opts *o, struct shr_shard *comm)
{
	FILE *f;

	if (o->end_file == NULL)
		return;
	f = fopen(o->end_file, "w");
	if (f == NULL || fclose(f) != 0) {
		fprintf(stderr, PROG ": --end-file: cannot create %s\n", o->end_file);
		return;
	}
	(void)wait_path(o->end_file, false, comm);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values, in microseconds. */
static double
pct_us(const uint64_t *sorted, uint64_t n, unsigned int pct)
{
	uint64_t k = (n * pct + 99) / 100;

	if (n == 0)
		return 0;
	if (k == 0)
		k = 1;
	return (double)sorted[k - 1] / 1000.0;
}

/* --step, --tensor: the identity of iteration it's collective (the rest automatic). */
static int
ident(struct shr_shard *comm, const struct opts *o, uint64_t it)
{
	uint32_t step, tensor;

	if (!o->have_step && !o->have_tensor)
		return 0;
	shr_shard_ident_get(comm, &step, &tensor);
	return shr_shard_ident_set(comm, o->have_step ? o->step + (uint32_t)it : step,
				  o->have_tensor ? o->tensor : tensor);
}

/* Exit code and RESULT slug for an error of the comm API. */
static int
classify(int err, const char **slug)
{
	switch (-err) {
	case ETIMEDOUT:
		*slug = "timeout";
		return EXIT_TIMEOUT;
	case ECONNABORTED:
		*slug = "aborted";
		return EXIT_TIMEOUT;
	case EINVAL:
	case EADDRINUSE:
	case EADDRNOTAVAIL:
	case ENOSPC:
	case EBUSY:
		*slug = "config";
		return EXIT_USAGE;
	case ENOKEY:
	case EACCES:
	case EPERM:
		*slug = "denied";
		return EXIT_USAGE;
	case EMSGSIZE:
		*slug = "mtu";
		return EXIT_USAGE;
	case ENOMEM:
		*slug = "nomem";
		return EXIT_IO;
	default:
		*slug = "io";
		return EXIT_IO;
	}
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.driver = "udp", .agg_port = SHR_PROTO_UDP_PORT, .rank = -1, .world = -1,
		.data_rank = -1, .data_world = -1,
		.dtype = SHR_DTYPE_FLOAT32, .op = SHR_OP_SUM, .size = 4ull << 20, .iters = 10,
		.warmup = 2, .window = 128, .chunk = 0, .timeout_ms = 10000, .verify = true,
	};
	struct result res = { .ok = false };
	struct shr_shard_params sp = { .nboxes = 1 };
	struct shr_comm_params *cp = &sp.comm;
	struct shr_auth_secret secret;
	struct shr_comm_stats st;
	struct shr_comm_info info;
	struct shr_shard *comm = NULL;
	uint16_t box;
	int eal_argc = 1, opt_argc = argc, i, rc, code = EXIT_OK;
	char **opt_argv = argv, errbuf[512], why[256] = "";
	uint64_t *lat = NULL, n, it, total_ns = 0, wrong_iters = 0, in_elems, out_elems, sleeps;
	uint64_t drv_sleeps = 0;
	uint32_t spin;
	uint32_t crc = 0;	/* running CRC32C of every iteration's output */
	void *in = NULL, *out = NULL;

	/* EAL args before "--", options after; without "--" everything is an option. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			eal_argc = i;
			opt_argc = argc - i;
			opt_argv = argv + i;	/* opt_argv[0] is "--": stands in for argv[0] */
			break;
		}
	}
	rc = worker_parse_opts(opt_argc, opt_argv, &o);
	if (rc == 1) {
		worker_usage(stdout);
		return EXIT_OK;
	}
	if (rc < 0) {
		fprintf(stderr, "Try '" PROG " --help'.\n");
		res.error = "usage";
		print_result(&o, &res);
		return EXIT_USAGE;
	}

	n = o.size / shr_proto_dtype_size((unsigned int)o.dtype);
	if (coll_sizes(&o, n, &in_elems, &out_elems) < 0) {
		fprintf(stderr, PROG ": --size: %" PRIu64 " bytes per rank times --world %ld is "
			"too large (at most 4T)\n", o.size, o.data_world);
		res.error = "usage";
		code = EXIT_USAGE;
		goto done;
	}
	in = malloc(in_elems * 4 + 1);
	out = calloc(out_elems + 1, 4);	/* zero where this rank receives nothing */
	lat = calloc(o.iters, sizeof(*lat));
	if (in == NULL || out == NULL || lat == NULL) {
		fprintf(stderr, PROG ": cannot allocate %" PRIu64 " bytes of tensors\n",
			(in_elems + out_elems) * 4);
		res.error = "nomem";
		code = EXIT_IO;
		goto done;
	}

	cp->driver = o.driver;
	cp->agg_ip = o.agg_ip;
	cp->agg_port = o.agg_port;
	cp->local_ip = o.local_ip;
	cp->local_port = o.local_port;
	cp->job = o.job;
	cp->rank = (uint16_t)o.rank;
	cp->world = (uint16_t)o.world;
	if (o.tree) {
		cp->tree_rank = (uint16_t)o.data_rank;
		cp->tree_world = (uint16_t)o.data_world;
	}
	cp->dtype = (uint8_t)o.dtype;
	cp->repro = o.repro;
	cp->mac = o.mac;
	cp->window = o.window;
	cp->slots = o.slots;
	cp->chunk_elems = o.chunk;
	cp->timeout_ms = o.timeout_ms;
	cp->cc_target_us = o.cc_target_us;
	memcpy(cp->agg_mac, o.agg_mac, sizeof(cp->agg_mac));
	cp->vlan = o.vlan;
	cp->udp_no_gso = o.no_gso;
	cp->no_group = o.no_group;
	if (o.secret_file == NULL)
		o.secret_file = getenv("SHOUTER_SECRET_FILE");
	if (o.secret_file != NULL && *o.secret_file != '\0') {
		rc = shr_auth_secret_load(o.secret_file, &secret);
		if (rc < 0) {
			fprintf(stderr, PROG ": --secret-file %s: %s\n", o.secret_file,
				rc == -EINVAL ? "the secret must be a regular file of 16..64 bytes "
				"(trailing newlines not counted)" : rc == -EACCES ? "open to its "
				"group or others (chmod 600 it), or cannot be opened" :
				strerror(-rc));
			code = EXIT_USAGE;
			res.error = "config";
			goto done;
		}
		cp->secret = &secret;
	}
	if (o.mac && cp->secret == NULL) {
		/* the MAC is keyed from the secret: without one no JOIN could be signed */
		fprintf(stderr, PROG ": --mac: needs the job's secret (--secret-file PATH or "
			"$SHOUTER_SECRET_FILE)\n");
		code = EXIT_USAGE;
		res.error = "usage";
		goto done;
	}
	cp->eal_argc = eal_argc;
	cp->eal_argv = argv;
	cp->why = why;
	cp->why_len = sizeof(why);
	if (o.nboxes > 1) {
		sp.nboxes = o.nboxes;
		sp.agg_ip = o.agg_ips;
		for (box = 0; box < o.nboxes; box++)
			if (o.agg_ports[box] == 0)
				o.agg_ports[box] = o.agg_port;
		sp.agg_port = o.agg_ports;
	} else {
		sp.agg_ip = &o.agg_ip;
		if (o.agg_ports[0] != 0)
			o.agg_port = o.agg_ports[0];
		cp->agg_port = o.agg_port;
	}
	comm = shr_shard_create(&sp);
	if (comm == NULL) {
		rc = -errno;
		code = classify(rc, &res.error);
		if (why[0] != '\0')
			fprintf(stderr, PROG ": rank %ld: cannot join job %u: %s\n", o.rank, o.job,
				why);
		else if (rc == -ETIMEDOUT)
			fprintf(stderr, PROG ": rank %ld: job %u: no JOIN_ACK from %s:%u in %u ms "
				"(aggregator down, or not all %ld ranks joined)\n", o.rank, o.job,
				inet_ntoa((struct in_addr){ htonl(o.agg_ip) }), o.agg_port,
				o.timeout_ms, o.world);
		else
			fprintf(stderr, PROG ": rank %ld: cannot join job %u: %s\n", o.rank,
				o.job, shr_comm_strerror(NULL, rc, errbuf, sizeof(errbuf)));
		goto done;
	}
	shr_comm_info_get(shr_shard_comm(comm, 0), &info);
	printf(PROG ": rank %ld/%ld joined job %u: driver %s (CRC32C %s), local port %u, "
	       "window %u (%u slots), chunk %u, lanes %u", o.rank, o.world, o.job, info.driver,
	       shr_crc32c_impl(), info.local_port, info.window, info.slots, info.chunk_elems,
	       info.lanes);
	/* the boxes the sharded communicator joined (what the test checks), not --agg's count */
	if (shr_shard_nboxes(comm) > 1)
		printf(", sharded over %u boxes", shr_shard_nboxes(comm));
	if (info.group_ip != 0)
		printf(", result group %u.%u.%u.%u:%u", info.group_ip >> 24,
		       (info.group_ip >> 16) & 0xff, (info.group_ip >> 8) & 0xff,
		       info.group_ip & 0xff, info.group_port);
	printf("\n");
	fflush(stdout);
	o.granted_chunk = info.chunk_elems;
	rc = hold(&o);
	if (rc < 0) {
		code = classify(rc, &res.error);
		goto done;
	}

	for (it = 0; it < o.warmup + o.iters; it++) {
		struct bad_elem first_bad;
		uint64_t t0, t1, bad, checked;

		/* --mid-file: a test that must act while no rank has finished creates it
		 * once it has (still members meanwhile, taking what comes in) */
		if (it == 1 && o.mid_file != NULL) {
			rc = wait_appear("--mid-file", o.mid_file, comm);
			if (rc < 0)
				break;
		}
		coll_fill(&o, in, out, n, it);
		rc = shr_shard_barrier(comm);
		if (rc < 0)
			break;
		rc = ident(comm, &o, it);
		if (rc < 0)
			break;
		t0 = now_ns();
		rc = coll_run(comm, &o, in, out, n);
		t1 = now_ns();
		if (rc < 0)
			break;
		if (it >= o.warmup) {
			lat[it - o.warmup] = t1 - t0;
			total_ns += t1 - t0;
		}
		crc = shr_crc32c(crc, out, out_elems * 4);
		if (!o.verify)
			continue;
		bad = coll_check(&o, out, n, it, &checked, &first_bad);
		if (bad > 0) {
			wrong_iters++;
			fprintf(stderr, PROG ": rank %ld: iteration %" PRIu64 ": %" PRIu64
				" of %" PRIu64 " elements wrong, first at index %" PRIu64
				" (got %s, want %s)\n", o.rank, it, bad, checked, first_bad.index,
				first_bad.got, first_bad.want);
		}
	}
	if (rc >= 0)
		hold_end(&o, comm);
	res.retx = 0;
	for (box = 0; box < shr_shard_nboxes(comm); box++) {
		char who[16] = "";

		shr_comm_stats_get(shr_shard_comm(comm, box), &st);
		res.retx += st.ep.tx_retx;
		drv_sleeps += st.drv.wait_sleeps;
		if (o.nboxes > 1)
			snprintf(who, sizeof(who), " box %u:", box + 1u);
		fprintf(stderr, PROG ": rank %ld:%s tx_data=%" PRIu64 " retx=%" PRIu64 " (fast=%"
			PRIu64 " timer=%" PRIu64 " spurious=%" PRIu64 " peer=%" PRIu64
			" unneeded=%" PRIu64 " hinted=%" PRIu64 ") held=%" PRIu64
			" timeouts=%" PRIu64
			" results=%" PRIu64 " dup=%" PRIu64 " bad=%" PRIu64 " srtt_us=%.1f"
			" min_rtt_us=%.1f rto_us=%.1f drv_tx=%" PRIu64 " drv_gso=%" PRIu64
			"/%" PRIu64 " gso_off=%" PRIu64 " drv_rx=%" PRIu64
			" tx_drops=%" PRIu64 " deferred=%" PRIu64 " foreign=%" PRIu64
			" arp_ignored=%" PRIu64 " vlan_other=%" PRIu64 " cwnd=%u cc_decr=%" PRIu64
			" cc_decr_loss=%" PRIu64 " cc_loss_noq=%" PRIu64 " cc_loss_rare=%" PRIu64
			" cc_comp=%" PRIu64
			" qdelay_us=%.1f"
			" box_wait_us=%.1f host_us=%.1f mac_bad=%" PRIu64 " mac_replay=%" PRIu64
			" mac_missing=%" PRIu64 "\n", o.rank,
			who, st.ep.tx_data, st.ep.tx_retx, st.ep.tx_fast, st.ep.tx_rto,
			st.ep.spurious, st.ep.fast_peer, st.ep.rtx_unneeded, st.ep.hint_resent,
			st.ep.hint_held, st.ep.timeouts,
			st.ep.rx_results,
			st.ep.rx_dup, st.ep.rx_bad, st.ep.srtt_ns / 1000.0,
			st.ep.min_rtt_ns / 1000.0, st.ep.rto_ns / 1000.0, st.drv.tx_pkts,
			st.drv.tx_gso_pkts, st.drv.tx_gso_msgs, st.drv.tx_gso_off, st.drv.rx_pkts,
			st.drv.tx_drops,
			st.tx_deferred, st.rx_foreign, st.drv.ctl_ignored, st.drv.vlan_other,
			st.ep.cwnd, st.ep.cc_decr, st.ep.cc_decr_loss, st.ep.cc_loss_noq,
			st.ep.cc_loss_rare, st.ep.cc_comp, st.ep.qdelay_ns / 1000.0,
			st.ep.box_wait_ns / 1000.0, st.ep.host_delay_ns / 1000.0,
			st.mac_bad, st.mac_replay, st.mac_missing);
	}
	shr_shard_spin_get(comm, &spin, &sleeps);
	fprintf(stderr, PROG ": rank %ld: waits spin=%u sleeps=%" PRIu64 " drv_sleeps=%" PRIu64
		" timerslack_ns=%d\n", o.rank, spin, sleeps, drv_sleeps, prctl(PR_GET_TIMERSLACK));
	if (rc < 0) {
		struct shr_comm_abort ab;

		code = classify(rc, &res.error);
		if (rc == -ECONNABORTED && shr_shard_abort_get(comm, &ab, NULL) == 0 &&
		    ab.reason == EPROTO)
			res.error = "mismatch";	/* the ranks called different collectives */
		fprintf(stderr, PROG ": rank %ld: iteration %" PRIu64 ": %s\n", o.rank, it,
			shr_shard_strerror(comm, rc, errbuf, sizeof(errbuf)));
		goto done;
	}
	res.crc = crc;
	if (o.dtype == SHR_DTYPE_QINT32 && o.verify && !shr_proto_kind_relay((uint8_t)o.kind))
		fprintf(stderr, PROG ": rank %ld: qint32 max_err=%.6g max_err_over_bound=%.4f\n",
			o.rank, o.q_max_err, o.q_max_ratio);
	qsort(lat, o.iters, sizeof(*lat), cmp_u64);
	res.lat_p50_us = pct_us(lat, o.iters, 50);
	res.lat_p99_us = pct_us(lat, o.iters, 99);
	if (total_ns > 0)
		res.goodput_gbps = (double)o.size * 8.0 * (double)o.iters / (double)total_ns;
	if (wrong_iters > 0) {
		res.error = "wrong_result";
		code = EXIT_WRONG;
		goto done;
	}
	res.ok = true;
done:
	if (comm != NULL) {
		int lrc = shr_shard_destroy(comm);

		/* The results stand; the box frees the job at its idle bound instead. */
		if (lrc < 0)
			fprintf(stderr, PROG ": rank %ld: job %u: leaving: %s\n", o.rank, o.job,
				lrc == -ETIMEDOUT ? "no LEAVE_ACK from the aggregator (it frees "
				"the job when the job has been idle for its idle time)" :
				strerror(-lrc));
	}
	print_result(&o, &res);
	free(lat);
	free(out);
	free(in);
	return code;
}
