/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * A rank sharded over k boxes: the joins, the identity of the calls, and the progress loop
 * that drives every box's communicator from one thread. The collectives and their map are
 * in shr_shard_coll.c.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <shr_proto.h>

#include "shr_shard_private.h"

static const char *
shard_addr(uint32_t ip, uint16_t port, char *buf, size_t len)
{
	struct in_addr a = { .s_addr = htonl(ip) };
	char ipb[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, ipb, sizeof(ipb));
	snprintf(buf, len, "%s:%u", ipb, port);
	return buf;
}

static int
shard_check(const struct shr_shard_params *p)
{
	uint16_t i, j;

	if (p == NULL || p->nboxes == 0 || p->nboxes > SHR_SHARD_MAX_BOXES || p->agg_ip == NULL)
		return -EINVAL;
	/* A DPDK port belongs to one communicator: k boxes need k devices. */
	if (p->nboxes > 1 && p->dev == NULL && p->comm.driver != NULL &&
	    strcmp(p->comm.driver, "udp") != 0)
		return -EINVAL;
	if (p->dev == NULL && p->comm.local_port != 0 &&
	    (uint32_t)p->comm.local_port + p->nboxes - 1 > 65535)
		return -EINVAL;
	/* Listed twice, a box would see two jobs of one id (devices given: the caller's). */
	for (i = 0; p->dev == NULL && i < p->nboxes; i++) {
		uint16_t pi = p->agg_port != NULL ? p->agg_port[i] : p->comm.agg_port;

		for (j = 0; j < i; j++) {
			uint16_t pj = p->agg_port != NULL ? p->agg_port[j] : p->comm.agg_port;

			if (p->agg_ip[i] == p->agg_ip[j] && pi == pj)
				return -EINVAL;
		}
	}
	return 0;
}

/* "box 2 of 3 (198.18.0.3:47000): " */
static int
shard_box_prefix(uint16_t j, uint16_t n, uint32_t ip, uint16_t port, char *buf, size_t len)
{
	char a[32];

	return snprintf(buf, len, "box %u of %u (%s): ", j + 1u, n,
			shard_addr(ip, port == 0 ? SHR_PROTO_UDP_PORT : port, a, sizeof(a)));
}

/* params why: the box that failed, then what its communicator said. */
static void
shard_create_why(const struct shr_shard_params *p, uint16_t j, const char *box_why, int err)
{
	uint16_t port = p->agg_port != NULL ? p->agg_port[j] : p->comm.agg_port;
	char text[256];
	int k;

	if (p->comm.why == NULL || p->comm.why_len == 0)
		return;
	if (p->nboxes == 1) {
		snprintf(p->comm.why, p->comm.why_len, "%s", box_why);	/* as shr_comm's */
		return;
	}
	if (box_why[0] == '\0')
		shr_comm_strerror(NULL, err, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s", box_why);
	k = shard_box_prefix(j, p->nboxes, p->agg_ip[j], port, p->comm.why, p->comm.why_len);
	if (k >= 0 && (size_t)k < p->comm.why_len)
		snprintf(p->comm.why + k, p->comm.why_len - (size_t)k, "%s", text);
}

static uint64_t shard_now_ns(void *ctx);

struct shr_shard *
shr_shard_create(const struct shr_shard_params *params)
{
	struct shr_shard *s;
	uint16_t j, made = 0;
	int err;

	err = shard_check(params);
	if (err < 0)
		goto fail_devs;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		err = -ENOMEM;
		goto fail_devs;
	}
	s->n = params->nboxes;
	/* the collectives' ranks: the tree's, when the boxes are leaves of trees */
	s->rank = params->comm.tree_world != 0 ? params->comm.tree_rank : params->comm.rank;
	s->world = params->comm.tree_world != 0 ? params->comm.tree_world : params->comm.world;
	s->dtype = params->comm.dtype;
	s->esize = shr_proto_dtype_size(params->comm.dtype);
	shr_spin_init(&s->spin, params->comm.spin, shard_now_ns, NULL);
	s->fail_box = -1;
	s->chunk = UINT32_MAX;
	for (j = 0; j < s->n; j++) {
		struct shr_comm_params cp = params->comm;
		struct shr_comm_info info;
		char why[256] = "";

		cp.agg_ip = params->agg_ip[j];
		cp.agg_port = params->agg_port != NULL ? params->agg_port[j] : cp.agg_port;
		cp.dev = params->dev != NULL ? params->dev[j] : NULL;
		if (cp.local_port != 0 && cp.dev == NULL)
			cp.local_port = (uint16_t)(cp.local_port + j);	/* one socket a box */
		cp.why = why;
		cp.why_len = sizeof(why);
		s->box[j].ip = cp.agg_ip;
		s->box[j].port = cp.agg_port != 0 ? cp.agg_port : SHR_PROTO_UDP_PORT;
		s->box[j].req = -1;
		s->box[j].comm = shr_comm_create(&cp);
		made = j + 1;	/* box j's device is the communicator's now, or closed */
		if (s->box[j].comm == NULL) {
			err = -errno;
			shard_create_why(params, j, why, err);
			goto fail_boxes;
		}
		shr_comm_info_get(s->box[j].comm, &info);
		if (info.chunk_elems < s->chunk)
			s->chunk = info.chunk_elems;
	}
	return s;

fail_boxes:
	while (j-- > 0)
		(void)shr_comm_destroy(s->box[j].comm);
	free(s);
fail_devs:
	/* The devices not yet handed to a communicator are ours to close. */
	if (params != NULL && params->dev != NULL)
		for (j = made; j < params->nboxes && j < SHR_SHARD_MAX_BOXES; j++)
			shr_drv_close(params->dev[j]);
	errno = -err;
	return NULL;
}

int
shr_shard_destroy(struct shr_shard *shard)
{
	int rc = 0;
	uint16_t j;

	if (shard == NULL)
		return 0;
	for (j = shard->n; j-- > 0;) {
		int r = shr_comm_destroy(shard->box[j].comm);

		if (r < 0 && rc == 0)
			rc = r;
		free(shard->box[j].stage);
	}
	free(shard);
	return rc;
}

void
shr_shard_split(uint64_t count, uint32_t chunk, uint16_t nboxes, uint16_t j, uint64_t *off,
		uint64_t *len)
{
	uint64_t nch = (count + chunk - 1) / chunk;
	uint64_t first = nch * j / nboxes, last = nch * (j + 1u) / nboxes;
	uint64_t end = last * chunk < count ? last * chunk : count;

	*off = first * chunk < count ? first * chunk : count;
	*len = end - *off;
}

int
shr_shard_ident_set(struct shr_shard *shard, uint32_t step, uint32_t tensor)
{
	/*
	 * As shr_comm_ident_set(), which each box's communicator then runs: steps never go back
	 * (compared as numbers, not modulo 2^32: 5 after 0xfffffff0 passed here and was refused
	 * by every box at the call), nor wrap past the first call's.
	 */
	if (step < shard->step)
		return -EINVAL;
	if (shard->called && step - shard->first_step >= 0x80000000u)
		return -EINVAL;
	shard->step = step;
	shard->tensor = tensor;
	return 0;
}

int
shard_ident_apply(struct shr_shard *s, uint16_t j)
{
	if (!s->called) {
		s->called = true;
		s->first_step = s->step;
	}
	return shr_comm_ident_set(s->box[j].comm, s->step, s->tensor);
}

void
shard_call_done(struct shr_shard *s)
{
	s->tensor++;
}

static uint64_t
shard_now_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
shard_results(const struct shard_box *b)
{
	struct shr_comm_stats st;

	shr_comm_stats_get(b->comm, &st);
	return st.ep.rx_results;
}

void
shard_call_begin(struct shr_shard *s)
{
	uint16_t j;

	s->call_ns = shard_now_ns(NULL);
	for (j = 0; j < s->n; j++) {
		s->box[j].results = shard_results(&s->box[j]);
		s->box[j].call_results = s->box[j].results;
		s->box[j].result_ns = s->call_ns;
	}
}

void
shard_box_moved(struct shr_shard *s, uint16_t j)
{
	struct shard_box *b = &s->box[j];
	uint64_t r = shard_results(b);

	if (r != b->results) {
		b->results = r;
		b->result_ns = shard_now_ns(NULL);
	}
}

int
shard_failed(struct shr_shard *s, uint16_t j, int err)
{
	uint64_t ms;
	uint16_t k;

	if (s->fail != 0)
		return err;
	s->fail = err;
	s->fail_box = j;
	for (k = 0; k < s->n; k++) {
		struct shard_box *b = &s->box[k];

		if (k == j || b->req < 0)
			continue;
		shard_box_moved(s, k);
		ms = (shard_now_ns(NULL) - b->result_ns) / 1000000;
		if (ms >= SHARD_SILENT_MS || b->results == b->call_results)
			b->silent_ms = ms >= UINT32_MAX ? UINT32_MAX : (uint32_t)ms + 1;
	}
	return err;
}

void *
shard_stage(struct shr_shard *s, uint16_t j, size_t len)
{
	struct shard_box *b = &s->box[j];
	void *p;

	if (b->stage_len >= len)
		return b->stage;
	p = realloc(b->stage, len);
	if (p == NULL)
		return NULL;
	b->stage = p;
	b->stage_len = len;
	return p;
}

/* Sleep until a datagram may be ready at a box, or the first box's timed work is due. */
static int
shard_sleep(struct shr_shard *s)
{
	struct pollfd pfd[SHR_SHARD_MAX_BOXES];
	uint64_t us = SHARD_MAX_SLEEP_US;
	struct timespec ts;
	unsigned int n = 0;
	uint16_t j;

	for (j = 0; j < s->n; j++) {
		uint64_t u;
		int fd;

		if (s->box[j].req < 0)
			continue;
		fd = shr_comm_fd(s->box[j].comm);
		if (fd < 0)
			return 0;	/* a device without a descriptor: keep polling */
		u = shr_comm_idle_us(s->box[j].comm, us);
		if (u < us)
			us = u;
		pfd[n].fd = fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	if (us == 0 || n == 0)
		return 0;
	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	if (ppoll(pfd, n, &ts, NULL) < 0 && errno != EINTR)
		return -EIO;
	return 0;
}

/* The only request in flight: its communicator waits for it (and sleeps) best. */
static int
shard_run_one(struct shr_shard *s)
{
	uint16_t j, n = 0, last = 0;
	int rc;

	for (j = 0; j < s->n; j++)
		if (s->box[j].req >= 0) {
			n++;
			last = j;
		}
	if (n != 1)
		return 1;
	rc = shr_comm_wait(s->box[last].comm, s->box[last].req);
	if (rc < 0)
		return shard_failed(s, last, rc);
	s->box[last].req = -1;
	return 0;
}

int
shard_run(struct shr_shard *s)
{
	bool first = true;
	uint16_t j;
	int rc;

	rc = shard_run_one(s);
	if (rc <= 0)
		return rc;
	shr_spin_begin(&s->spin);
	for (;; first = false) {
		bool pending = false, moved = false;

		for (j = 0; j < s->n; j++) {
			struct shard_box *b = &s->box[j];

			if (b->req < 0)
				continue;
			rc = shr_comm_progress(b->comm);
			if (rc < 0)
				return shard_failed(s, j, rc);
			if (rc == 0 && !first) {
				pending = true;	/* nothing came in: still not done */
				continue;
			}
			if (rc > 0) {
				shard_box_moved(s, j);
				moved = true;
			}
			rc = shr_comm_test(b->comm, b->req);
			if (rc < 0)
				return shard_failed(s, j, rc);
			if (rc == 1) {
				b->req = -1;
				moved = true;
			} else {
				pending = true;
			}
		}
		if (!pending)
			return 0;
		if (moved) {
			shr_spin_moved(&s->spin);
			continue;
		}
		if (!shr_spin_empty(&s->spin))
			continue;
		rc = shard_sleep(s);
		if (rc < 0) {
			for (j = 0; j < s->n && s->box[j].req < 0; j++)
				;
			return shard_failed(s, j, rc);
		}
	}
}

void
shr_shard_ident_get(const struct shr_shard *shard, uint32_t *step, uint32_t *tensor)
{
	if (step != NULL)
		*step = shard->step;
	if (tensor != NULL)
		*tensor = shard->tensor;
}

int
shr_shard_abort_get(const struct shr_shard *shard, struct shr_comm_abort *info, uint16_t *box)
{
	uint16_t j;

	for (j = 0; j < shard->n; j++) {
		if (shr_comm_abort_get(shard->box[j].comm, info) == 0) {
			if (box != NULL)
				*box = j;
			return 0;
		}
	}
	return -ENOENT;
}

struct shr_comm *
shr_shard_comm(const struct shr_shard *shard, uint16_t j)
{
	return j < shard->n ? shard->box[j].comm : NULL;
}

uint16_t
shr_shard_nboxes(const struct shr_shard *shard)
{
	return shard->n;
}

void
shr_shard_spin_get(const struct shr_shard *shard, uint32_t *spin, uint64_t *sleeps)
{
	struct shr_comm_stats st;

	if (shard->n > 1) {
		*spin = shard->spin.cur;
		*sleeps = shard->spin.sleeps;
		return;
	}
	shr_comm_stats_get(shard->box[0].comm, &st);
	*spin = st.spin;
	*sleeps = st.sleeps;
}

const char *
shr_shard_strerror(const struct shr_shard *shard, int err, char *buf, size_t len)
{
	const struct shard_box *b;
	uint16_t j;
	int k;

	if (len == 0)
		return buf;
	if (shard == NULL || shard->fail_box < 0) {
		if (shard != NULL && shard->n == 1)
			return shr_comm_strerror(shard->box[0].comm, err, buf, len);
		return shr_comm_strerror(NULL, err, buf, len);
	}
	b = &shard->box[shard->fail_box];
	/* -EPIPE after a failure: the failure itself is the news. */
	if (err == -EPIPE)
		err = shard->fail;
	if (shard->n == 1)
		return shr_comm_strerror(b->comm, err, buf, len);
	k = shard_box_prefix((uint16_t)shard->fail_box, shard->n, b->ip, b->port, buf, len);
	if (k >= 0 && (size_t)k < len)
		shr_comm_strerror(b->comm, err, buf + k, len - (size_t)k);
	/* the boxes that had not answered this call at all: often the cause */
	for (j = 0; j < shard->n; j++) {
		size_t used = strlen(buf);

		b = &shard->box[j];
		if (b->silent_ms == 0 || used + 1 >= len)
			continue;
		k = snprintf(buf + used, len - used, "; and ");
		if (k < 0 || used + (size_t)k >= len)
			break;
		used += (size_t)k;
		k = shard_box_prefix(j, shard->n, b->ip, b->port, buf + used, len - used);
		if (k < 0 || used + (size_t)k >= len)
			break;
		used += (size_t)k;
		/* "box 2 of 2 (198.18.0.2:47000): " -> "...: no result in this call for N ms" */
		snprintf(buf + used, len - used, "no result for %u ms", b->silent_ms);
	}
	return buf;
}
