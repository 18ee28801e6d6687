/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * shouter._shouter: the calls of a Comm object (_shouter.c has the object). Each collective's
 * arguments are parsed and its buffers checked (element type, sizes, writability, overlap)
 * before anything is sent; then the call runs with the GIL released.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <shr_proto.h>

#include "_shouter.h"

/*
 * Enter a call: the object must be open and idle; step / tensor (None: keep / automatic)
 * name the call's identity (shr_comm_ident_set()).
 */
int
shr_py_enter(CommObject *self, PyObject *step, PyObject *tensor)
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


/*
 * One collective call: parse, check, enter, run with the GIL released, raise. a is the
 * input (or the only buffer), b the output.
 */
PyObject *
shr_py_coll(CommObject *self, enum shr_py_coll c, PyObject *args, PyObject *kw)
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
	case SHR_PY_ALLREDUCE:
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOO", kw_red, &ao, &bo, &op, &step,
						 &tensor);
		break;
	case SHR_PY_REDUCE:
		root = -2;
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOOO", kw_rroot, &ao, &bo, &ro,
						 &op, &step, &tensor);
		break;
	case SHR_PY_REDUCE_SCATTER:
		ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOO", kw_io, &ao, &bo, &op, &step,
						 &tensor);
		break;
	case SHR_PY_BROADCAST:
		root = 0;
		ok = PyArg_ParseTupleAndKeywords(args, kw, "O|$OOO", kw_bc, &ao, &ro, &step,
						 &tensor);
		break;
	case SHR_PY_GATHER:
	case SHR_PY_SCATTER:
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
	case SHR_PY_ALLREDUCE:
	case SHR_PY_REDUCE:
		/* out None: in place (reduce: at root; the others' buf is only read) */
		if (shr_py_buf_get(ao, "buf",
				   bo == Py_None && (c == SHR_PY_ALLREDUCE || is_root), &a) < 0 ||
		    check_el(self, &a, "buf") < 0)
			goto fail;
		if (bo != Py_None && (c == SHR_PY_ALLREDUCE || is_root)) {
			if (shr_py_buf_get(bo, "out", 1, &b) < 0 || check_el(self, &b, "out") < 0 ||
			    size_is(&b, "out", a.nbytes, "as many as buf") < 0 ||
			    no_overlap(&a, &b, 1) < 0)
				goto fail;
		}
		count = (uint64_t)(a.nbytes / es);
		break;
	case SHR_PY_REDUCE_SCATTER:
		if (shr_py_buf_get(ao, "inp", 0, &a) < 0 || check_el(self, &a, "inp") < 0 ||
		    shr_py_buf_get(bo, "out", 1, &b) < 0 || check_el(self, &b, "out") < 0 ||
		    size_is(&a, "inp", b.nbytes * w, "world x out") < 0 ||
		    no_overlap(&a, &b, 0) < 0)
			goto fail;
		count = (uint64_t)(b.nbytes / es);
		break;
	case SHR_PY_BROADCAST:
		if (shr_py_buf_get(ao, "buf", !is_root, &a) < 0 || check_bytes(self, &a, "buf") < 0)
			goto fail;
		count = (uint64_t)(a.nbytes / es);
		break;
	case SHR_PY_ALLGATHER:
	case SHR_PY_GATHER:
		if (shr_py_buf_get(ao, "inp", 0, &a) < 0 || check_bytes(self, &a, "inp") < 0)
			goto fail;
		count = (uint64_t)(a.nbytes / es);
		if (c == SHR_PY_ALLGATHER || is_root) {
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
	case SHR_PY_SCATTER:
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
	case SHR_PY_ALLTOALL:
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
	if (shr_py_enter(self, step, tensor) < 0)
		goto fail;

	Py_BEGIN_ALLOW_THREADS
	switch (c) {
	case SHR_PY_ALLREDUCE:
		rc = shr_shard_allreduce(comm, a.ptr, b.ptr != NULL ? b.ptr : a.ptr, count, opv);
		break;
	case SHR_PY_REDUCE:
		rc = shr_shard_reduce(comm, a.ptr, !is_root ? NULL : b.ptr != NULL ? b.ptr : a.ptr,
				      count, opv, (uint16_t)root);
		break;
	case SHR_PY_REDUCE_SCATTER:
		rc = shr_shard_reduce_scatter(comm, a.ptr, b.ptr, count, opv);
		break;
	case SHR_PY_BROADCAST:
		rc = shr_shard_broadcast(comm, a.ptr, count, (uint16_t)root);
		break;
	case SHR_PY_ALLGATHER:
		rc = shr_shard_allgather(comm, a.ptr, b.ptr, count);
		break;
	case SHR_PY_GATHER:
		rc = shr_shard_gather(comm, a.ptr, b.ptr, count, (uint16_t)root);
		break;
	case SHR_PY_SCATTER:
		rc = shr_shard_scatter(comm, a.ptr, b.ptr, count, (uint16_t)root);
		break;
	case SHR_PY_ALLTOALL:
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

PyObject *
shr_py_barrier(CommObject *self, PyObject *unused)
{
	struct shr_shard *comm = self->comm;
	int rc;

	(void)unused;
	if (shr_py_enter(self, NULL, NULL) < 0)
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
PyObject *
shr_py_c_loop(CommObject *self, PyObject *args)
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
	    shr_py_enter(self, NULL, NULL) < 0) {
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
