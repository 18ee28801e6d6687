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

#include <shr_proto.h>

#include "_shouter.h"

#include <structmember.h>

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
		PyErr_SetString(PyExc_RuntimeError,
				"Comm.close() while another thread is in a call");
		return NULL;
	}
	comm_destroy(self);
	Py_RETURN_NONE;
}

#define COLL_METHOD(name, c) \
static PyObject * \
comm_##name(CommObject *self, PyObject *args, PyObject *kw) \
{ \
	return shr_py_coll(self, c, args, kw); \
}
COLL_METHOD(allreduce, SHR_PY_ALLREDUCE)
COLL_METHOD(reduce, SHR_PY_REDUCE)
COLL_METHOD(reduce_scatter, SHR_PY_REDUCE_SCATTER)
COLL_METHOD(broadcast, SHR_PY_BROADCAST)
COLL_METHOD(allgather, SHR_PY_ALLGATHER)
COLL_METHOD(gather, SHR_PY_GATHER)
COLL_METHOD(scatter, SHR_PY_SCATTER)
COLL_METHOD(alltoall, SHR_PY_ALLTOALL)

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
	{ "barrier", (PyCFunction)shr_py_barrier, METH_NOARGS, "barrier(): every rank got here" },
	{ "ident", (PyCFunction)comm_ident, METH_NOARGS,
	  "ident() -> (step, tensor): the identity the next call carries" },
	{ "stats", (PyCFunction)comm_stats, METH_NOARGS, "stats() -> dict of counters: the "
	  "totals over the boxes, and 'boxes': one dict per box" },
	{ "info", (PyCFunction)comm_info, METH_NOARGS, "info() -> list of dicts, one per box: "
	  "box, window, chunk, lanes, local_port, driver, group (the result group 'ip:port', or "
	  "None)" },
	{ "close", (PyCFunction)comm_close, METH_NOARGS, "close(): leave the job (idempotent)" },
	{ "_c_allreduce_loop", (PyCFunction)shr_py_c_loop, METH_VARARGS,
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
