/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Comm()'s arguments in shouter._shouter: the boxes (one box, or a list: the job sharded over
 * them, lib/shard) and their ports, the local address, the secret, the EAL's arguments; and
 * what each box granted and counted.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shr_proto.h>

#include "_shouter.h"

int
shr_py_parse_ip(PyObject *o, const char *name, uint32_t *ip)
{
	struct in_addr a;
	const char *s;

	if (o == NULL || o == Py_None) {
		*ip = 0;
		return 0;
	}
	s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
	if (s == NULL || inet_pton(AF_INET, s, &a) != 1) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s: an IPv4 address string, not %R", name, o);
		return -1;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

int
shr_py_secret_load(PyObject *secret_file, struct shr_auth_secret *secret)
{
	PyObject *path = NULL;
	int rc;

	if (secret_file == NULL || secret_file == Py_None)
		return 0;
	if (!PyUnicode_FSConverter(secret_file, &path))
		return -1;
	rc = shr_auth_secret_load(PyBytes_AS_STRING(path), secret);
	Py_DECREF(path);
	if (rc < 0) {
		PyErr_Format(PyExc_ValueError, "secret_file %R: %s", secret_file,
			     rc == -EINVAL ? "the secret must be a regular file of 16..64 bytes" :
			     rc == -EACCES ? "open to its group or others (chmod 600 it)" :
			     strerror(-rc));
		return -1;
	}
	return 1;
}

int
shr_py_uint(PyObject *o, const char *name, unsigned long long lo, unsigned long long hi,
	    unsigned long long *out)
{
	unsigned long long v;
	PyObject *i;

	i = PyBool_Check(o) ? NULL : PyNumber_Index(o);
	if (i == NULL) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s: an integer %llu..%llu, not %R", name, lo, hi, o);
		return -1;
	}
	v = PyLong_AsUnsignedLongLong(i);	/* OverflowError when negative or too large */
	Py_DECREF(i);
	if ((v == (unsigned long long)-1 && PyErr_Occurred()) || v < lo || v > hi) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s: an integer %llu..%llu, not %R", name, lo, hi,
			     o);
		return -1;
	}
	*out = v;
	return 0;
}

int
shr_py_eal_args(PyObject *eal_args, int *argc, char ***argv)
{
	Py_ssize_t i, n;
	char **v;

	if (eal_args == NULL || eal_args == Py_None)
		return 0;
	/* the EAL may keep pointers into argv: these copies live as long as the process; a str
	 * is a sequence too, of its characters: refused */
	n = PySequence_Check(eal_args) && !PyUnicode_Check(eal_args) && !PyBytes_Check(eal_args) ?
		    PySequence_Size(eal_args) : -1;
	if (n < 0) {
		PyErr_Clear();
		PyErr_SetString(PyExc_TypeError, "eal_args: a list of strings");
		return -1;
	}
	v = calloc((size_t)n + 2, sizeof(*v));
	if (v == NULL)
		return PyErr_NoMemory(), -1;
	v[0] = strdup("shouter");
	for (i = 0; i < n; i++) {
		PyObject *a = PySequence_GetItem(eal_args, i);
		const char *s = a != NULL && PyUnicode_Check(a) ? PyUnicode_AsUTF8(a) : NULL;

		v[i + 1] = s != NULL ? strdup(s) : NULL;
		Py_XDECREF(a);
		if (v[i + 1] == NULL) {
			PyErr_Clear();
			PyErr_SetString(PyExc_TypeError, "eal_args: a list of strings");
			while (i >= 0)
				free(v[i--]);
			free(v);
			return -1;
		}
	}
	*argc = (int)n + 1;
	*argv = v;
	return 0;
}

static int
box_ip(PyObject *o, const char *name, Py_ssize_t i, uint32_t *ip)
{
	struct in_addr a;
	const char *s;

	s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
	if (s == NULL || inet_pton(AF_INET, s, &a) != 1 || a.s_addr == 0) {
		PyErr_Clear();
		if (i < 0)
			PyErr_Format(PyExc_ValueError, "%s: an IPv4 address string, not %R", name,
				     o);
		else
			PyErr_Format(PyExc_ValueError, "%s[%zd]: an IPv4 address string, not %R",
				     name, i, o);
		return -1;
	}
	*ip = ntohl(a.s_addr);
	return 0;
}

static int
box_port(PyObject *o, Py_ssize_t i, uint16_t *port)
{
	unsigned long long p;

	if (o == Py_None && i >= 0) {
		*port = 0;
		return 0;
	}
	if (shr_py_uint(o, "port", 1, 0xffff, &p) < 0) {
		PyErr_Clear();	/* said as a port, with its place in the list */
		if (i < 0)
			PyErr_Format(PyExc_ValueError, "port: a UDP port 1..65535, not %R", o);
		else
			PyErr_Format(PyExc_ValueError, "port[%zd]: a UDP port 1..65535 or None, "
				     "not %R", i, o);
		return -1;
	}
	*port = (uint16_t)p;
	return 0;
}

/* box i's port, the default for 0 */
static uint16_t
port_of(const struct shr_py_boxes *b, Py_ssize_t i)
{
	return b->port[i] ? b->port[i] : SHR_PROTO_UDP_PORT;
}

/* a list or a tuple, not a string: the boxes (or their ports) one by one */
static int
is_list(PyObject *o)
{
	return PyList_Check(o) || PyTuple_Check(o);
}

int
shr_py_boxes_parse(PyObject *box, PyObject *port, struct shr_py_boxes *b)
{
	Py_ssize_t i, j, n;
	char a[32];

	memset(b, 0, sizeof(*b));
	if (box == NULL || box == Py_None) {
		PyErr_SetString(PyExc_ValueError, "box: the aggregator's IPv4 address is required");
		return -1;
	}
	if (!is_list(box)) {
		if (box_ip(box, "box", -1, &b->ip[0]) < 0)
			return -1;
		n = 1;
	} else {
		n = PySequence_Fast_GET_SIZE(box);
		if (n < 1 || n > SHR_SHARD_MAX_BOXES) {
			PyErr_Format(PyExc_ValueError, "box: a list of 1 to %d aggregator "
				     "addresses, not %zd", SHR_SHARD_MAX_BOXES, n);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (box_ip(PySequence_Fast_GET_ITEM(box, i), "box", i, &b->ip[i]) < 0)
				return -1;
	}
	b->n = (uint16_t)n;
	b->port_given = port != NULL && port != Py_None;
	if (b->port_given && !is_list(port)) {
		if (box_port(port, -1, &b->port[0]) < 0)
			return -1;
		for (i = 1; i < n; i++)
			b->port[i] = b->port[0];
	} else if (b->port_given) {
		if (PySequence_Fast_GET_SIZE(port) != n) {
			PyErr_Format(PyExc_ValueError, "port: %zd ports for %zd boxes (one per "
				     "box, or one int for all)", PySequence_Fast_GET_SIZE(port), n);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (box_port(PySequence_Fast_GET_ITEM(port, i), i, &b->port[i]) < 0)
				return -1;
	}
	/* a box holds one job of an id: listed twice, the two shares would collide */
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (b->ip[i] == b->ip[j] && port_of(b, i) == port_of(b, j)) {
				PyErr_Format(PyExc_ValueError, "box: %s is listed twice (boxes %zd "
					     "and %zd)", shr_py_box_str(b, (uint16_t)i, a,
									sizeof(a)), j, i);
				return -1;
			}
	return 0;
}

const char *
shr_py_box_str(const struct shr_py_boxes *b, uint16_t j, char *buf, size_t len)
{
	struct in_addr a = { .s_addr = htonl(b->ip[j]) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, port_of(b, j));
	return buf;
}

void
shr_py_join_timeout_why(char *why, size_t len, unsigned int job, unsigned int rank,
			unsigned int world, unsigned int timeout_ms)
{
	char generic[128];
	char *p = strstr(why, "): ");

	shr_shard_strerror(NULL, -ETIMEDOUT, generic, sizeof(generic));
	if (p == NULL || strcmp(p + 3, generic) != 0)
		return;
	p += 3;
	snprintf(p, len - (size_t)(p - why), "job %u rank %u: no JOIN_ACK in %u ms (box down or "
		 "unreachable, or not all %u ranks joined it)", job, rank,
		 timeout_ms ? timeout_ms : 10000, world);
}

static PyObject *
stats_dict(const struct shr_comm_stats *st)
{
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
			     "s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
			     "s:K,s:K,s:K}",
		"tx_data", (unsigned long long)st->ep.tx_data,
		"tx_retx", (unsigned long long)st->ep.tx_retx,
		"rx_results", (unsigned long long)st->ep.rx_results,
		"rx_dup", (unsigned long long)st->ep.rx_dup,
		"ops_done", (unsigned long long)st->ep.ops_done,
		"srtt_ns", (unsigned long long)st->ep.srtt_ns,
		"min_rtt_ns", (unsigned long long)st->ep.min_rtt_ns,
		"rto_ns", (unsigned long long)st->ep.rto_ns,
		"timeouts", (unsigned long long)st->ep.timeouts,
		"tx_fast", (unsigned long long)st->ep.tx_fast,
		"tx_rto", (unsigned long long)st->ep.tx_rto,
		"spurious", (unsigned long long)st->ep.spurious,
		"fast_peer", (unsigned long long)st->ep.fast_peer,
		"cc_decr_loss", (unsigned long long)st->ep.cc_decr_loss,
		"cc_loss_noq", (unsigned long long)st->ep.cc_loss_noq,
		"cc_loss_rare", (unsigned long long)st->ep.cc_loss_rare,
		"rtx_unneeded", (unsigned long long)st->ep.rtx_unneeded,
		"hint_held", (unsigned long long)st->ep.hint_held,
		"hint_resent", (unsigned long long)st->ep.hint_resent,
		"tx_pkts", (unsigned long long)st->drv.tx_pkts,
		"tx_bytes", (unsigned long long)st->drv.tx_bytes,
		"rx_pkts", (unsigned long long)st->drv.rx_pkts,
		"rx_bytes", (unsigned long long)st->drv.rx_bytes,
		"tx_drops", (unsigned long long)st->drv.tx_drops,
		"tx_gso_msgs", (unsigned long long)st->drv.tx_gso_msgs,
		"tx_gso_pkts", (unsigned long long)st->drv.tx_gso_pkts,
		"rx_drops", (unsigned long long)st->drv.rx_drops,
		"rx_foreign", (unsigned long long)st->rx_foreign,
		"cwnd", (unsigned long long)st->ep.cwnd,
		"cc_decr", (unsigned long long)st->ep.cc_decr,
		"cc_comp", (unsigned long long)st->ep.cc_comp,
		"qdelay_ns", (unsigned long long)st->ep.qdelay_ns,
		"box_wait_ns", (unsigned long long)st->ep.box_wait_ns,
		"host_delay_ns", (unsigned long long)st->ep.host_delay_ns,
		"vlan_other", (unsigned long long)st->drv.vlan_other);
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))
#define MIN_OF(a, b) ((a) < (b) ? (a) : (b))

/* t += s (t the totals so far; first: t was empty) */
static void
stats_add(struct shr_comm_stats *t, const struct shr_comm_stats *s, int first)
{
	t->ep.tx_data += s->ep.tx_data;
	t->ep.tx_retx += s->ep.tx_retx;
	t->ep.rx_results += s->ep.rx_results;
	t->ep.rx_dup += s->ep.rx_dup;
	t->ep.ops_done += s->ep.ops_done;
	t->ep.srtt_ns = MAX_OF(t->ep.srtt_ns, s->ep.srtt_ns);
	t->ep.min_rtt_ns = first ? s->ep.min_rtt_ns : MIN_OF(t->ep.min_rtt_ns, s->ep.min_rtt_ns);
	t->ep.rto_ns = MAX_OF(t->ep.rto_ns, s->ep.rto_ns);
	t->ep.timeouts += s->ep.timeouts;
	t->ep.tx_fast += s->ep.tx_fast;
	t->ep.tx_rto += s->ep.tx_rto;
	t->ep.spurious += s->ep.spurious;
	t->ep.fast_peer += s->ep.fast_peer;
	t->ep.cc_decr_loss += s->ep.cc_decr_loss;
	t->ep.cc_loss_noq += s->ep.cc_loss_noq;
	t->ep.cc_loss_rare += s->ep.cc_loss_rare;
	t->ep.rtx_unneeded += s->ep.rtx_unneeded;
	t->ep.hint_held += s->ep.hint_held;
	t->ep.hint_resent += s->ep.hint_resent;
	t->drv.tx_pkts += s->drv.tx_pkts;
	t->drv.tx_bytes += s->drv.tx_bytes;
	t->drv.rx_pkts += s->drv.rx_pkts;
	t->drv.rx_bytes += s->drv.rx_bytes;
	t->drv.tx_drops += s->drv.tx_drops;
	t->drv.tx_gso_msgs += s->drv.tx_gso_msgs;
	t->drv.tx_gso_pkts += s->drv.tx_gso_pkts;
	t->drv.rx_drops += s->drv.rx_drops;
	t->rx_foreign += s->rx_foreign;
	t->ep.cwnd += s->ep.cwnd;
	t->ep.cc_decr += s->ep.cc_decr;
	t->ep.cc_comp += s->ep.cc_comp;
	t->ep.qdelay_ns = MAX_OF(t->ep.qdelay_ns, s->ep.qdelay_ns);
	t->ep.box_wait_ns = MAX_OF(t->ep.box_wait_ns, s->ep.box_wait_ns);
	t->ep.host_delay_ns = MAX_OF(t->ep.host_delay_ns, s->ep.host_delay_ns);
	t->drv.vlan_other += s->drv.vlan_other;
}

PyObject *
shr_py_stats(const struct shr_shard *shard)
{
	uint16_t j, n = shr_shard_nboxes(shard);
	struct shr_comm_stats tot, st;
	PyObject *boxes, *d = NULL, *one;

	memset(&tot, 0, sizeof(tot));
	boxes = PyList_New(n);
	if (boxes == NULL)
		return NULL;
	for (j = 0; j < n; j++) {
		shr_comm_stats_get(shr_shard_comm(shard, j), &st);
		stats_add(&tot, &st, j == 0);
		one = stats_dict(&st);
		if (one == NULL)
			goto fail;
		PyList_SET_ITEM(boxes, j, one);
	}
	d = stats_dict(&tot);
	if (d == NULL || PyDict_SetItemString(d, "boxes", boxes) < 0)
		goto fail;
	Py_DECREF(boxes);
	return d;
fail:
	Py_XDECREF(d);
	Py_DECREF(boxes);
	return NULL;
}

PyObject *
shr_py_info(const struct shr_shard *shard, const struct shr_py_boxes *b)
{
	uint16_t j, n = shr_shard_nboxes(shard);
	struct shr_comm_info info;
	PyObject *l, *one;
	char a[32], g[32];

	l = PyList_New(n);
	if (l == NULL)
		return NULL;
	for (j = 0; j < n; j++) {
		shr_comm_info_get(shr_shard_comm(shard, j), &info);
		/* the result group "A.B.C.D:PORT", or None */
		snprintf(g, sizeof(g), "%u.%u.%u.%u:%u", info.group_ip >> 24,
			 (info.group_ip >> 16) & 0xff, (info.group_ip >> 8) & 0xff,
			 info.group_ip & 0xff, info.group_port);
		one = Py_BuildValue("{s:s,s:I,s:I,s:I,s:I,s:I,s:s,s:z}", "box",
				    shr_py_box_str(b, j, a, sizeof(a)), "window",
				    (unsigned int)info.window, "slots", (unsigned int)info.slots,
				    "chunk",
				    (unsigned int)info.chunk_elems, "lanes",
				    (unsigned int)info.lanes, "local_port",
				    (unsigned int)info.local_port, "driver",
				    info.driver != NULL ? info.driver : "?", "group",
				    info.group_ip != 0 ? g : NULL);
		if (one == NULL) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, j, one);
	}
	return l;
}
