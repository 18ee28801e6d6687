/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter._shouter: the CPython binding of lib/comm (shr_comm.h) through lib/shard
 * (shr_shard.h). One Comm object is one rank of one job, on one box or sharded over several
 * (a sharded communicator of one box is the box's communicator: the same calls, errors and
 * texts). Every blocking C call runs with the GIL released; the object refuses a second
 * thread while a call is in progress (the C communicator is not thread-safe). Buffers are
 * checked (type, contiguity, writability, sizes) before anything is sent, and are written in
 * place. shouter/__init__.py documents the Python API.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <shr_proto.h>

#include "_shouter.h"

#include <structmember.h>

typedef struct {
	PyObject_HEAD
	struct shr_shard *comm;
	struct shr_py_boxes boxes;
	int busy;		/* a call is in progress (GIL released) */
	unsigned int job, rank, world, window, chunk, lanes, local_port;
	unsigned int tree_rank, tree_world; /* a tree's member (0, 0: not one) */
	unsigned int crank, cworld;	/* the collectives' ranks: the tree's, else the job's */
	int dtype;		/* enum shr_proto_dtype */
	unsigned int esize;	/* bytes per element of the job's buffers (QINT32: 4) */
	enum shr_py_el el;	/* the element type summed calls take */
} CommObject;

/* the element type a summed collective of a job takes */
static enum shr_py_el
job_el(int dtype)
{
	switch (dtype) {
	case SHR_DTYPE_INT32:
		return SHR_PY_EL_I32;
	case SHR_DTYPE_FLOAT16:
		return SHR_PY_EL_F16;
	case SHR_DTYPE_BFLOAT16:
		return SHR_PY_EL_BF16;
	default:
		return SHR_PY_EL_F32;	/* float32, qint32 */
	}
}

/* cc_target_us: None (the default), "off", or 1..SHR_COMM_CC_TARGET_MAX_US. 0 or -1 (exception). */
static int
comm_cc_target(PyObject *o, uint32_t *us)
{
	unsigned long long v;

	*us = 0;
	if (o == Py_None)
		return 0;
	if (PyUnicode_Check(o) && PyUnicode_CompareWithASCIIString(o, "off") == 0) {
		*us = SHR_COMM_CC_OFF;
		return 0;
	}
	if (!PyUnicode_Check(o) &&
	    shr_py_uint(o, "cc_target_us", 1, SHR_COMM_CC_TARGET_MAX_US, &v) == 0) {
		*us = (uint32_t)v;	/* an int, or a numpy integer (__index__) */
		return 0;
	}
	PyErr_Clear();
	PyErr_Format(PyExc_ValueError, "cc_target_us: None (the default, 1000), 'off' or "
		     "1..%u microseconds", (unsigned int)SHR_COMM_CC_TARGET_MAX_US);
	return -1;
}

/* Comm(box, *, job, rank, world, dtype, port, driver, local_ip, local_port, window, chunk,
 *      timeout_ms, repro, secret_file, eal_args, tree_rank, tree_world, no_group,
 *      cc_target_us, mac); box: an address or a list (sharded) */
static int
comm_init(CommObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "box", "job", "rank", "world", "dtype", "port", "driver",
				  "local_ip", "local_port", "window", "chunk", "timeout_ms",
				  "repro", "secret_file", "eal_args", "tree_rank", "tree_world",
				  "no_group", "cc_target_us", "mac", NULL };
	PyObject *box, *local_ip = Py_None, *port = Py_None, *secret_file = Py_None;
	PyObject *eal_args = Py_None, *cc_target = Py_None;
	/* the integers as objects, checked by shr_py_uint() (none: the default, 0) */
	PyObject *o_job = NULL, *o_rank = NULL, *o_world = NULL, *o_lport = NULL;
	PyObject *o_window = NULL, *o_chunk = NULL, *o_timeout = NULL, *o_trank = NULL;
	PyObject *o_tworld = NULL;
	const char *dtype = "float32", *driver = "udp";
	unsigned int job, rank, world, local_port, window, chunk, timeout_ms;
	unsigned int tree_rank, tree_world;
	unsigned long long v[9];
	int repro = 0, no_group = 0, mac = 0, rc, dt, i;
	struct shr_shard_params sp = { .nboxes = 0 };
	struct shr_comm_params cp = { 0 };
	struct shr_auth_secret secret;
	struct shr_py_boxes boxes;
	struct shr_comm_info info;
	struct shr_shard *comm;
	char why[384] = "", a[32];
	uint16_t j;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOsOsOOOOOpOOOOpOp", kwlist, &box,
					 &o_job, &o_rank, &o_world, &dtype, &port, &driver,
					 &local_ip, &o_lport, &o_window, &o_chunk, &o_timeout,
					 &repro, &secret_file, &eal_args, &o_trank, &o_tworld,
					 &no_group, &cc_target, &mac))
		return -1;
	if (self->comm != NULL) {
		PyErr_SetString(PyExc_RuntimeError, "Comm is already initialised");
		return -1;
	}
	if (o_job == NULL || o_rank == NULL || o_world == NULL) {
		PyErr_SetString(PyExc_TypeError, "Comm() needs job=, rank= and world=");
		return -1;
	}
	{
		static const struct {
			const char *name;
			unsigned long long hi;
		} lim[9] = {
			{ "job", UINT32_MAX }, { "rank", UINT16_MAX }, { "world", UINT16_MAX },
			{ "local_port", UINT16_MAX }, { "window", UINT32_MAX },
			{ "chunk", UINT32_MAX }, { "timeout_ms", UINT32_MAX },
			{ "tree_rank", UINT16_MAX }, { "tree_world", UINT16_MAX },
		};
		PyObject *o[9] = { o_job, o_rank, o_world, o_lport, o_window, o_chunk, o_timeout,
				   o_trank, o_tworld };

		for (i = 0; i < 9; i++) {
			v[i] = 0;
			if (o[i] != NULL && shr_py_uint(o[i], lim[i].name, 0, lim[i].hi, &v[i]) < 0)
				return -1;
		}
	}
	job = (unsigned int)v[0];
	rank = (unsigned int)v[1];
	world = (unsigned int)v[2];
	local_port = (unsigned int)v[3];
	window = (unsigned int)v[4];
	chunk = (unsigned int)v[5];
	timeout_ms = (unsigned int)v[6];
	tree_rank = (unsigned int)v[7];
	tree_world = (unsigned int)v[8];
	dt = shr_proto_dtype_parse(dtype);
	if (dt < 0) {
		PyErr_Format(PyExc_ValueError, "dtype %s: not one of float32 int32 float16 "
			     "bfloat16 qint32", dtype);
		return -1;
	}
	if (world < 1 || world > 0xffff || rank >= world) {
		PyErr_Format(PyExc_ValueError, "rank %u, world %u: need 0 <= rank < world <= 65535",
			     rank, world);
		return -1;
	}
	if (tree_world > SHR_PROTO_MAX_WORLD || (tree_world != 0 && tree_rank >= tree_world) ||
	    (tree_world == 0 && tree_rank != 0)) {
		PyErr_Format(PyExc_ValueError, "tree_rank %u, tree_world %u: need 0 <= tree_rank "
			     "< tree_world <= %u (or both 0: not a tree's member)", tree_rank,
			     tree_world, (unsigned int)SHR_PROTO_MAX_WORLD);
		return -1;
	}
	if (comm_cc_target(cc_target, &cp.cc_target_us) < 0)
		return -1;
	if (shr_py_boxes_parse(box, port, &boxes) < 0 ||
	    shr_py_parse_ip(local_ip, "local_ip", &cp.local_ip) < 0)
		return -1;
	/* what shr_shard_create() refuses of several boxes (EINVAL), said before anything */
	if (boxes.n > 1 && strcmp(driver, "udp") != 0) {
		PyErr_Format(PyExc_ValueError, "driver %s: a job sharded over %u boxes needs the "
			     "udp driver (a DPDK port belongs to one communicator)", driver,
			     boxes.n);
		return -1;
	}
	if (local_port != 0 && local_port + boxes.n - 1 > 0xffff) {
		PyErr_Format(PyExc_ValueError, "local_port %u: box j binds local_port + j, above "
			     "65535 with %u boxes", local_port, boxes.n);
		return -1;
	}
	cp.agg_port = boxes.port[0];
	sp.nboxes = boxes.n;
	sp.agg_ip = boxes.ip;
	sp.agg_port = boxes.n > 1 ? boxes.port : NULL;
	rc = shr_py_secret_load(secret_file, &secret);
	if (rc < 0)
		return -1;
	cp.secret = rc > 0 ? &secret : NULL;
	if (mac && cp.secret == NULL) {
		/* the MAC is keyed from the secret (shr_comm_create() would say ENOKEY) */
		PyErr_SetString(PyExc_ValueError, "mac=True needs the job's secret (secret_file)");
		return -1;
	}
	if (shr_py_eal_args(eal_args, &cp.eal_argc, &cp.eal_argv) < 0) {
		memset(&secret, 0, sizeof(secret));	/* not left on the stack */
		return -1;
	}
	cp.driver = driver;
	cp.local_port = (uint16_t)local_port;
	cp.job = job;
	cp.rank = (uint16_t)rank;
	cp.world = (uint16_t)world;
	cp.tree_rank = (uint16_t)tree_rank;
	cp.tree_world = (uint16_t)tree_world;
	cp.dtype = (uint8_t)dt;
	cp.repro = (uint8_t)repro;
	cp.no_group = (uint8_t)no_group;
	cp.mac = (uint8_t)mac;
	cp.window = window;
	cp.chunk_elems = chunk;
	cp.timeout_ms = timeout_ms;
	cp.why = why;
	cp.why_len = sizeof(why);
	sp.comm = cp;

	Py_BEGIN_ALLOW_THREADS
	comm = shr_shard_create(&sp);
	rc = comm == NULL ? -errno : 0;
	Py_END_ALLOW_THREADS
	memset(&secret, 0, sizeof(secret));
	if (comm == NULL) {
		if (why[0] == '\0' && rc == -ETIMEDOUT)
			snprintf(why, sizeof(why), "job %u rank %u: no JOIN_ACK from %s in %u ms "
				 "(box down or unreachable, or not all %u ranks joined)", job, rank,
				 shr_py_box_str(&boxes, 0, a, sizeof(a)),
				 timeout_ms ? timeout_ms : 10000, world);
		else if (boxes.n > 1 && rc == -ETIMEDOUT)
			shr_py_join_timeout_why(why, sizeof(why), job, rank, world, timeout_ms);
		shr_py_raise(NULL, rc, why);
		return -1;
	}
	self->boxes = boxes;
	self->window = UINT32_MAX;
	self->chunk = UINT32_MAX;
	self->lanes = UINT32_MAX;
	for (j = 0; j < boxes.n; j++) {	/* the smallest grant of any box */
		shr_comm_info_get(shr_shard_comm(comm, j), &info);
		if (info.window < self->window)
			self->window = info.window;
		if (info.chunk_elems < self->chunk)
			self->chunk = info.chunk_elems;
		if (info.lanes < self->lanes)
			self->lanes = info.lanes;
		if (j == 0)
			self->local_port = info.local_port;
	}
	self->comm = comm;
	self->job = job;
	self->rank = rank;
	self->world = world;
	self->tree_rank = tree_rank;
	self->tree_world = tree_world;
	self->crank = tree_world != 0 ? tree_rank : rank;
	self->cworld = tree_world != 0 ? tree_world : world;
	self->dtype = dt;
	self->esize = shr_proto_dtype_size((unsigned int)dt);
	self->el = job_el(dt);
	return 0;
}

static void
comm_destroy(CommObject *self)
{
	struct shr_shard *comm = self->comm;

	self->comm = NULL;
	if (comm == NULL)
		return;
	Py_BEGIN_ALLOW_THREADS
	(void)shr_shard_destroy(comm);	/* -ETIMEDOUT: the box holds the rank until idle */
	Py_END_ALLOW_THREADS
}

static void
comm_dealloc(CommObject *self)
{
	if (!self->busy)
		comm_destroy(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
comm_close(CommObject *self, PyObject *unused)
{
	(void)unused;
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError, "Comm.close() while another thread is in a call");
		return NULL;
	}
	comm_destroy(self);
	Py_RETURN_NONE;
}

/*
 * Enter a call: the object must be open and idle; step / tensor (None: keep / automatic)
 * name the call's identity (shr_comm_ident_set()).
 */
static int
comm_enter(CommObject *self, PyObject *step, PyObject *tensor)
{
	uint32_t s, t;
	unsigned long long v;
	int rc;

	if (self->comm == NULL) {
		PyErr_SetString(PyExc_ValueError, "Comm is closed");
		return -1;
	}
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError, "Comm used by two threads at once (one "
				"communicator, one thread at a time)");
		return -1;
	}
	if ((step == NULL || step == Py_None) && (tensor == NULL || tensor == Py_None))
		goto ok;
	shr_shard_ident_get(self->comm, &s, &t);	/* t: the automatic id of the call */
	if (step != NULL && step != Py_None) {
		if (shr_py_uint(step, "step", 0, UINT32_MAX, &v) < 0)
			return -1;
		s = (uint32_t)v;
	}
	if (tensor != NULL && tensor != Py_None) {
		if (shr_py_uint(tensor, "tensor", 0, UINT32_MAX, &v) < 0)
			return -1;
		t = (uint32_t)v;
	}
	rc = shr_shard_ident_set(self->comm, s, t);
	if (rc < 0) {
		uint32_t cur;

		shr_shard_ident_get(self->comm, &cur, NULL);
		PyErr_Format(PyExc_ValueError, "step %u: below the current step %u, or 2^31 or "
			     "more above the first call's", s, cur);
		return -1;
	}
ok:
	self->busy = 1;
	return 0;
}

static int
parse_op(PyObject *op, uint8_t *out)
{
	const char *s = op == NULL ? "sum" : PyUnicode_Check(op) ? PyUnicode_AsUTF8(op) : NULL;
	int v = s == NULL ? -EINVAL : shr_proto_op_parse(s);

	if (v < 0) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "op: 'sum', 'min', 'max' or 'prod', not %R", op);
		return -1;
	}
	*out = (uint8_t)v;
	return 0;
}

/* a summed collective's buffer: the job's element type */
static int
check_el(CommObject *self, const struct shr_py_buf *b, const char *name)
{
	if (b->el == self->el ||
	    (self->dtype == SHR_DTYPE_BFLOAT16 && b->el == SHR_PY_EL_U16))
		return 0;
	PyErr_Format(PyExc_TypeError, "%s: a %s buffer in a %s job (%s%s)", name, b->desc,
		     shr_proto_dtype_str((unsigned int)self->dtype),
		     self->el == SHR_PY_EL_BF16 ? "torch.bfloat16 or numpy uint16" :
		     shr_py_el_str(self->el),
		     self->dtype == SHR_DTYPE_QINT32 ? " in and out" : " expected");
	return -1;
}

/* a relay's buffer: any type, a whole number of the job's elements */
static int
check_bytes(CommObject *self, const struct shr_py_buf *b, const char *name)
{
	if (b->nbytes % self->esize == 0)
		return 0;
	PyErr_Format(PyExc_ValueError, "%s: %zd bytes, not a multiple of the %s job's %u-byte "
		     "element", name, b->nbytes, shr_proto_dtype_str((unsigned int)self->dtype),
		     self->esize);
	return -1;
}

static int
size_is(const struct shr_py_buf *b, const char *name, Py_ssize_t want, const char *what)
{
	if (b->nbytes == want)
		return 0;
	PyErr_Format(PyExc_ValueError, "%s: %zd bytes where %zd (%s) are needed", name, b->nbytes,
		     want, what);
	return -1;
}

/* in and out must be the same buffer or not overlap at all (same == 1: may be the same) */
static int
no_overlap(const struct shr_py_buf *a, const struct shr_py_buf *b, int same)
{
	const char *pa = a->ptr, *pb = b->ptr;

	if (a->nbytes == 0 || b->nbytes == 0 || pa + a->nbytes <= pb || pb + b->nbytes <= pa)
		return 0;
	if (same && pa == pb && a->nbytes == b->nbytes)
		return 0;
	PyErr_SetString(PyExc_ValueError, same ? "in and out overlap (in place: the same buffer, "
			"or out=None)" : "in and out overlap: this collective needs two buffers");
	return -1;
}

/* the collectives, by what they take */
enum coll {
	C_ALLREDUCE, C_REDUCE, C_REDUCE_SCATTER, C_BROADCAST, C_ALLGATHER, C_GATHER, C_SCATTER,
	C_ALLTOALL,
};

/*
 * One collective call: parse, check, enter, run with the GIL released, raise. a is the
 * input (or the only buffer), b the output.
 */
static PyObject *
comm_coll(CommObject *self, enum coll c, PyObject *args, PyObject *kw)
{
	static char *kw_red[] = { "buf", "out", "op", "step", "tensor", NULL };
	static char *kw_rroot[] = { "buf", "out", "root", "op", "step", "tensor", NULL };
	static char *kw_io[] = { "inp", "out", "op", "step", "tensor", NULL };
	static char *kw_io2[] = { "inp", "out", "step", "tensor", NULL };
	static char *kw_ioroot[] = { "inp", "out", "root", "step", "tensor", NULL };
	static char *kw_bc[] = { "buf", "root", "step", "tensor", NULL };
	PyObject *ao, *bo = Py_None, *op = NULL, *step = Py_None, *tensor = Py_None;
	PyObject *ro = NULL;	/* root=, checked below */
	struct shr_py_buf a = { .has_view = 0 }, b = { .has_view = 0 };
	struct shr_shard *comm = self->comm;
	int root = -1, ok, is_root, rc = 0;
	Py_ssize_t w = self->cworld, es = self->esize;
	uint64_t count = 0;
	uint8_t opv = SHR_OP_SUM;

	switch (c) {
	case C_ALLREDUCE:
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOO", kw_red, &ao, &bo, &op, &step,
						 &tensor);
		break;
	case C_REDUCE:
		root = -2;
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOOO", kw_rroot, &ao, &bo, &ro,
						 &op, &step, &tensor);
		break;
	case C_REDUCE_SCATTER:
		ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOO", kw_io, &ao, &bo, &op, &step,
						 &tensor);
		break;
	case C_BROADCAST:
		root = 0;
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|$OOO", kw_bc, &ao, &ro, &step,
						 &tensor);
		break;
	case C_GATHER:
	case C_SCATTER:
		root = -2;
		ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOO", kw_ioroot, &ao, &bo, &ro,
						 &step, &tensor);
		break;
	default:
		ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO", kw_io2, &ao, &bo, &step,
						 &tensor);
		break;
	}
	if (!ok)
		return NULL;
	if (root == -2 && ro == NULL) {
		PyErr_SetString(PyExc_TypeError, "root= is required");
		return NULL;
	}
	if (ro != NULL) {
		unsigned long long r;

		if (shr_py_uint(ro, "root", 0, self->cworld - 1u, &r) < 0) {
			if (PyErr_ExceptionMatches(PyExc_ValueError)) {	/* said as a rank */
				PyErr_Clear();
				PyErr_Format(PyExc_ValueError, "root %R: not a rank of this world "
					     "of %u%s", ro, self->cworld,
					     self->tree_world != 0 ? " (the tree's)" : "");
			}
			return NULL;
		}
		root = (int)r;
	}
	if (parse_op(op, &opv) < 0)
		return NULL;
	if (self->comm == NULL) {
		PyErr_SetString(PyExc_ValueError, "Comm is closed");
		return NULL;
	}
	comm = self->comm;
	is_root = root >= 0 && (unsigned int)root == self->crank;

	switch (c) {
	case C_ALLREDUCE:
	case C_REDUCE:
		/* out None: in place (reduce: at root; the others' buf is only read) */
		if (shr_py_buf_get(ao, "buf", bo == Py_None && (c == C_ALLREDUCE || is_root), &a) < 0 ||
		    check_el(self, &a, "buf") < 0)
			goto fail;
		if (bo != Py_None && (c == C_ALLREDUCE || is_root)) {
			if (shr_py_buf_get(bo, "out", 1, &b) < 0 || check_el(self, &b, "out") < 0 ||
			    size_is(&b, "out", a.nbytes, "as many as buf") < 0 ||
			    no_overlap(&a, &b, 1) < 0)
				goto fail;
		}
		count = (uint64_t)(a.nbytes / es);
		break;
	case C_REDUCE_SCATTER:
		if (shr_py_buf_get(ao, "inp", 0, &a) < 0 || check_el(self, &a, "inp") < 0 ||
		    shr_py_buf_get(bo, "out", 1, &b) < 0 || check_el(self, &b, "out") < 0 ||
		    size_is(&a, "inp", b.nbytes * w, "world x out") < 0 || no_overlap(&a, &b, 0) < 0)
			goto fail;
		count = (uint64_t)(b.nbytes / es);
		break;
	case C_BROADCAST:
		if (shr_py_buf_get(ao, "buf", !is_root, &a) < 0 || check_bytes(self, &a, "buf") < 0)
			goto fail;
		count = (uint64_t)(a.nbytes / es);
		break;
	case C_ALLGATHER:
	case C_GATHER:
		if (shr_py_buf_get(ao, "inp", 0, &a) < 0 || check_bytes(self, &a, "inp") < 0)
			goto fail;
		count = (uint64_t)(a.nbytes / es);
		if (c == C_ALLGATHER || is_root) {
			if (bo == Py_None) {
				PyErr_SetString(PyExc_TypeError, "out is required (at the root)");
				goto fail;
			}
			if (shr_py_buf_get(bo, "out", 1, &b) < 0 ||
			    size_is(&b, "out", a.nbytes * w, "world x inp") < 0 ||
			    no_overlap(&a, &b, 0) < 0)
				goto fail;
		}
		break;
	case C_SCATTER:
		if (shr_py_buf_get(bo, "out", 1, &b) < 0 || check_bytes(self, &b, "out") < 0)
			goto fail;
		count = (uint64_t)(b.nbytes / es);
		if (is_root) {
			if (ao == Py_None) {
				PyErr_SetString(PyExc_TypeError, "inp is required at the root");
				goto fail;
			}
			if (shr_py_buf_get(ao, "inp", 0, &a) < 0 ||
			    size_is(&a, "inp", b.nbytes * w, "world x out") < 0 ||
			    no_overlap(&a, &b, 0) < 0)
				goto fail;
		}
		break;
	case C_ALLTOALL:
		if (shr_py_buf_get(ao, "inp", 0, &a) < 0 || check_bytes(self, &a, "inp") < 0 ||
		    shr_py_buf_get(bo, "out", 1, &b) < 0 ||
		    size_is(&b, "out", a.nbytes, "as many as inp") < 0 || no_overlap(&a, &b, 0) < 0)
			goto fail;
		if (a.nbytes % (w * es) != 0) {
			PyErr_Format(PyExc_ValueError, "inp: %zd bytes, not world (%zd) blocks of "
				     "whole elements", a.nbytes, w);
			goto fail;
		}
		count = (uint64_t)(a.nbytes / w / es);
		break;
	}
	if (comm_enter(self, step, tensor) < 0)
		goto fail;

	Py_BEGIN_ALLOW_THREADS
	switch (c) {
	case C_ALLREDUCE:
		rc = shr_shard_allreduce(comm, a.ptr, b.ptr != NULL ? b.ptr : a.ptr, count, opv);
		break;
	case C_REDUCE:
		rc = shr_shard_reduce(comm, a.ptr, !is_root ? NULL : b.ptr != NULL ? b.ptr : a.ptr,
				      count, opv, (uint16_t)root);
		break;
	case C_REDUCE_SCATTER:
		rc = shr_shard_reduce_scatter(comm, a.ptr, b.ptr, count, opv);
		break;
	case C_BROADCAST:
		rc = shr_shard_broadcast(comm, a.ptr, count, (uint16_t)root);
		break;
	case C_ALLGATHER:
		rc = shr_shard_allgather(comm, a.ptr, b.ptr, count);
		break;
	case C_GATHER:
		rc = shr_shard_gather(comm, a.ptr, b.ptr, count, (uint16_t)root);
		break;
	case C_SCATTER:
		rc = shr_shard_scatter(comm, a.ptr, b.ptr, count, (uint16_t)root);
		break;
	case C_ALLTOALL:
		rc = shr_shard_alltoall(comm, a.ptr, b.ptr, count);
		break;
	}
	Py_END_ALLOW_THREADS
	self->busy = 0;
	shr_py_buf_release(&a);
	shr_py_buf_release(&b);
	if (rc < 0)
		return shr_py_raise(comm, rc, NULL);
	Py_RETURN_NONE;
fail:
	shr_py_buf_release(&a);
	shr_py_buf_release(&b);
	return NULL;
}

#define COLL_METHOD(name, c) \
static PyObject * \
comm_##name(CommObject *self, PyObject *args, PyObject *kw) \
{ \
	return comm_coll(self, c, args, kw); \
}
COLL_METHOD(allreduce, C_ALLREDUCE)
COLL_METHOD(reduce, C_REDUCE)
COLL_METHOD(reduce_scatter, C_REDUCE_SCATTER)
COLL_METHOD(broadcast, C_BROADCAST)
COLL_METHOD(allgather, C_ALLGATHER)
COLL_METHOD(gather, C_GATHER)
COLL_METHOD(scatter, C_SCATTER)
COLL_METHOD(alltoall, C_ALLTOALL)

static PyObject *
comm_barrier(CommObject *self, PyObject *unused)
{
	struct shr_shard *comm = self->comm;
	int rc;

	(void)unused;
	if (comm_enter(self, NULL, NULL) < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = shr_shard_barrier(comm);
	Py_END_ALLOW_THREADS
	self->busy = 0;
	if (rc < 0)
		return shr_py_raise(comm, rc, NULL);
	Py_RETURN_NONE;
}

/*
 * _c_allreduce_loop(buf, iters) -> ns: iters in-place allreduces of buf from a C loop (no
 * Python per call), for the binding's per-call overhead (scripts/py_call_bench.py).
 */
static PyObject *
comm_c_loop(CommObject *self, PyObject *args)
{
	struct shr_py_buf a = { .has_view = 0 };
	struct shr_shard *comm = self->comm;
	unsigned long long i, iters;
	struct timespec t0, t1;
	PyObject *ao;
	int rc = 0;

	if (!PyArg_ParseTuple(args, "OK", &ao, &iters))
		return NULL;
	if (shr_py_buf_get(ao, "buf", 1, &a) < 0 || check_el(self, &a, "buf") < 0 ||
	    comm_enter(self, NULL, NULL) < 0) {
		shr_py_buf_release(&a);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters && rc == 0; i++)
		rc = shr_shard_allreduce(comm, a.ptr, a.ptr, (uint64_t)(a.nbytes / self->esize),
					 SHR_OP_SUM);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	Py_END_ALLOW_THREADS
	self->busy = 0;
	shr_py_buf_release(&a);
	if (rc < 0)
		return shr_py_raise(comm, rc, NULL);
	return PyLong_FromLongLong((long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
				   (t1.tv_nsec - t0.tv_nsec));
}

static PyObject *
comm_ident(CommObject *self, PyObject *unused)
{
	uint32_t s, t;

	(void)unused;
	if (self->comm == NULL) {
		PyErr_SetString(PyExc_ValueError, "Comm is closed");
		return NULL;
	}
	shr_shard_ident_get(self->comm, &s, &t);
	return Py_BuildValue("(II)", (unsigned int)s, (unsigned int)t);
}

static PyObject *
comm_stats(CommObject *self, PyObject *unused)
{
	(void)unused;
	if (self->comm == NULL) {
		PyErr_SetString(PyExc_ValueError, "Comm is closed");
		return NULL;
	}
	return shr_py_stats(self->comm);
}

static PyObject *
comm_info(CommObject *self, PyObject *unused)
{
	(void)unused;
	if (self->comm == NULL) {
		PyErr_SetString(PyExc_ValueError, "Comm is closed");
		return NULL;
	}
	return shr_py_info(self->comm, &self->boxes);
}

/* the boxes, as ("ip:port", ...), in the order given (also after close()) */
static PyObject *
comm_get_boxes(CommObject *self, void *closure)
{
	PyObject *t = PyTuple_New(self->boxes.n);
	char a[32];
	uint16_t j;

	(void)closure;
	for (j = 0; t != NULL && j < self->boxes.n; j++) {
		PyObject *s = PyUnicode_FromString(shr_py_box_str(&self->boxes, j, a, sizeof(a)));

		if (s == NULL) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, j, s);
	}
	return t;
}

static PyObject *
comm_get_dtype(CommObject *self, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(shr_proto_dtype_str((unsigned int)self->dtype));
}

static PyObject *
comm_get_closed(CommObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->comm == NULL);
}

static PyMethodDef comm_methods[] = {
	{ "allreduce", (PyCFunction)(void (*)(void))comm_allreduce, METH_VARARGS | METH_KEYWORDS,
	  "allreduce(buf, out=None, *, op='sum', step=None, tensor=None): out (default buf) = "
	  "op over every rank's buf" },
	{ "reduce", (PyCFunction)(void (*)(void))comm_reduce, METH_VARARGS | METH_KEYWORDS,
	  "reduce(buf, out=None, *, root, op='sum', step=None, tensor=None): at root, out "
	  "(default buf) = op over every rank's buf" },
	{ "reduce_scatter", (PyCFunction)(void (*)(void))comm_reduce_scatter,
	  METH_VARARGS | METH_KEYWORDS, "reduce_scatter(inp, out, *, op='sum', step=None, "
	  "tensor=None): inp world x count, out count: block rank of the reduction" },
	{ "broadcast", (PyCFunction)(void (*)(void))comm_broadcast, METH_VARARGS | METH_KEYWORDS,
	  "broadcast(buf, *, root=0, step=None, tensor=None): in place, root's buf to all" },
	{ "allgather", (PyCFunction)(void (*)(void))comm_allgather, METH_VARARGS | METH_KEYWORDS,
	  "allgather(inp, out, *, step=None, tensor=None): out (world x inp) block r = rank r's "
	  "inp" },
	{ "gather", (PyCFunction)(void (*)(void))comm_gather, METH_VARARGS | METH_KEYWORDS,
	  "gather(inp, out, *, root, step=None, tensor=None): allgather to root only (out "
	  "ignored elsewhere, may be None)" },
	{ "scatter", (PyCFunction)(void (*)(void))comm_scatter, METH_VARARGS | METH_KEYWORDS,
	  "scatter(inp, out, *, root, step=None, tensor=None): out = block rank of root's inp "
	  "(inp ignored elsewhere, may be None)" },
	{ "alltoall", (PyCFunction)(void (*)(void))comm_alltoall, METH_VARARGS | METH_KEYWORDS,
	  "alltoall(inp, out, *, step=None, tensor=None): out block i = rank i's inp block "
	  "rank" },
	{ "barrier", (PyCFunction)comm_barrier, METH_NOARGS, "barrier(): every rank got here" },
	{ "ident", (PyCFunction)comm_ident, METH_NOARGS,
	  "ident() -> (step, tensor): the identity the next call carries" },
	{ "stats", (PyCFunction)comm_stats, METH_NOARGS, "stats() -> dict of counters: the "
	  "totals over the boxes, and 'boxes': one dict per box" },
	{ "info", (PyCFunction)comm_info, METH_NOARGS, "info() -> list of dicts, one per box: "
	  "box, window, chunk, lanes, local_port, driver, group (the result group 'ip:port', or "
	  "None)" },
	{ "close", (PyCFunction)comm_close, METH_NOARGS, "close(): leave the job (idempotent)" },
	{ "_c_allreduce_loop", (PyCFunction)comm_c_loop, METH_VARARGS,
	  "_c_allreduce_loop(buf, iters) -> ns: iters allreduces from a C loop (benchmark)" },
	{ NULL, NULL, 0, NULL },
};

static PyMemberDef comm_members[] = {
	{ "job", T_UINT, offsetof(CommObject, job), READONLY, "job id" },
	{ "rank", T_UINT, offsetof(CommObject, rank), READONLY, "this rank" },
	{ "world", T_UINT, offsetof(CommObject, world), READONLY, "ranks in the job" },
	{ "tree_rank", T_UINT, offsetof(CommObject, tree_rank), READONLY,
	  "this rank in the whole tree of boxes (the collectives' rank; 0 with tree_world 0)" },
	{ "tree_world", T_UINT, offsetof(CommObject, tree_world), READONLY,
	  "ranks in the whole tree of boxes (0: not a tree's member)" },
	{ "window", T_UINT, offsetof(CommObject, window), READONLY,
	  "chunks in flight (the smallest of any box; within the slots granted)" },
	{ "chunk", T_UINT, offsetof(CommObject, chunk), READONLY,
	  "elements per chunk granted (the smallest of any box: the shards' unit)" },
	{ "lanes", T_UINT, offsetof(CommObject, lanes), READONLY,
	  "the box's UDP lanes (the fewest of any box)" },
	{ "local_port", T_UINT, offsetof(CommObject, local_port), READONLY,
	  "local UDP port (the first box's; box j's is info()[j])" },
	{ NULL, 0, 0, 0, NULL },
};

static PyGetSetDef comm_getset[] = {
	{ "dtype", (getter)comm_get_dtype, NULL, "the job's dtype name", NULL },
	{ "closed", (getter)comm_get_closed, NULL, "True after close()", NULL },
	{ "boxes", (getter)comm_get_boxes, NULL, "the boxes, (\"ip:port\", ...), in order",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject comm_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "shouter._shouter.Comm",
	.tp_basicsize = sizeof(CommObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Comm(box, *, job, rank, world, dtype='float32', port=None, driver='udp', "
		  "local_ip=None, local_port=0, window=0, chunk=0, timeout_ms=0, repro=False, "
		  "secret_file=None, eal_args=None, tree_rank=0, tree_world=0, no_group=False, "
		  "cc_target_us=None, mac=False): "
		  "one rank of one job (see shouter.Comm)",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)comm_init,
	.tp_dealloc = (destructor)comm_dealloc,
	.tp_methods = comm_methods,
	.tp_members = comm_members,
	.tp_getset = comm_getset,
};

static struct PyModuleDef shouter_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "shouter._shouter",
	.m_doc = "The C binding of lib/comm and lib/shard (shr_comm.h, shr_shard.h); use the "
		 "shouter package.",
	.m_size = -1,
};

PyMODINIT_FUNC PyInit__shouter(void);

PyMODINIT_FUNC
PyInit__shouter(void)
{
	PyObject *m, *attrs;

	if (PyType_Ready(&comm_type) < 0)
		return NULL;
	m = PyModule_Create(&shouter_module);
	if (m == NULL)
		return NULL;
	attrs = Py_BuildValue("{s:O,s:O,s:O,s:s}", "errno", Py_None, "strerror", Py_None,
			      "abort", Py_None, "__doc__", "A call of the C API failed: errno, "
			      "strerror (shr_shard_strerror(): the box that failed, with "
			      "several), abort (the box's abort fields or None)");
	shr_py_error = attrs == NULL ? NULL :
		       PyErr_NewException("shouter._shouter.Error", PyExc_Exception, attrs);
	Py_XDECREF(attrs);
	if (shr_py_error == NULL)
		goto fail;
	Py_INCREF(shr_py_error);
	Py_INCREF(&comm_type);
	if (PyModule_AddObject(m, "Error", shr_py_error) < 0 ||
	    PyModule_AddObject(m, "Comm", (PyObject *)&comm_type) < 0 ||
	    PyModule_AddIntConstant(m, "DEFAULT_PORT", SHR_PROTO_UDP_PORT) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
