/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

/*
 * Buffers and errors of shouter._shouter. numpy arrays (and bytearray, memoryview...) come
 * through the buffer protocol, torch tensors through data_ptr(): torch has no buffer
 * protocol, and tensor.numpy() refuses tensors that require grad. Nothing is copied: the
 * collective reads and writes the caller's memory.
 */

#include <errno.h>
#include <string.h>

#include <shr_proto.h>

#include "_shouter.h"

PyObject *shr_py_error;

/* torch objects, looked up once torch has been imported by someone (never imported here) */
static PyObject *torch_name;	/* "torch" */
static PyObject *torch_tensor;	/* torch.Tensor */
static PyObject *torch_strided;	/* torch.strided */
static PyObject *torch_dt[5];	/* float32, int32, float16, bfloat16, by enum shr_py_el - 1 */

static const char *const el_names[] = {
	[SHR_PY_EL_OTHER] = "other", [SHR_PY_EL_F32] = "float32", [SHR_PY_EL_I32] = "int32",
	[SHR_PY_EL_F16] = "float16", [SHR_PY_EL_BF16] = "bfloat16", [SHR_PY_EL_U16] = "uint16",
};

const char *
shr_py_el_str(enum shr_py_el el)
{
	return (unsigned int)el < sizeof(el_names) / sizeof(el_names[0]) ? el_names[el] : "?";
}

void
shr_py_buf_release(struct shr_py_buf *b)
{
	if (b->has_view)
		PyBuffer_Release(&b->view);
	b->has_view = 0;
	Py_CLEAR(b->obj);
}

/* the element type of a buffer-protocol format ("f", "<i", "=e"...) */
static enum shr_py_el
fmt_el(const char *fmt, Py_ssize_t itemsize)
{
	if (fmt == NULL)
		return SHR_PY_EL_OTHER;	/* unsigned bytes */
	if (*fmt == '@' || *fmt == '=' || *fmt == '<')
		fmt++;
	else if (*fmt == '>' || *fmt == '!')
		return SHR_PY_EL_OTHER;	/* big-endian: the wire is little-endian */
	if (fmt[0] == '\0' || fmt[1] != '\0')
		return SHR_PY_EL_OTHER;
	switch (fmt[0]) {
	case 'f':
		return itemsize == 4 ? SHR_PY_EL_F32 : SHR_PY_EL_OTHER;
	case 'i':
	case 'l':
		return itemsize == 4 ? SHR_PY_EL_I32 : SHR_PY_EL_OTHER;
	case 'e':
		return itemsize == 2 ? SHR_PY_EL_F16 : SHR_PY_EL_OTHER;
	case 'H':
		return itemsize == 2 ? SHR_PY_EL_U16 : SHR_PY_EL_OTHER;
	default:
		return SHR_PY_EL_OTHER;
	}
}

static int
torch_lookup(void)
{
	static const char *const dt[] = { "float32", "int32", "float16", "bfloat16" };
	PyObject *torch;
	unsigned int i;

	if (torch_tensor != NULL)
		return 1;
	if (torch_name == NULL) {
		torch_name = PyUnicode_InternFromString("torch");
		if (torch_name == NULL)
			return -1;
	}
	torch = PyImport_GetModule(torch_name);
	if (torch == NULL)
		return PyErr_Occurred() ? -1 : 0;	/* not imported: obj is no tensor */
	torch_tensor = PyObject_GetAttrString(torch, "Tensor");
	torch_strided = PyObject_GetAttrString(torch, "strided");
	for (i = 0; i < 4; i++)
		torch_dt[i] = PyObject_GetAttrString(torch, dt[i]);
	Py_DECREF(torch);
	if (torch_tensor == NULL || torch_strided == NULL || torch_dt[3] == NULL) {
		Py_CLEAR(torch_tensor);
		return -1;
	}
	return 1;
}

/* a Python int attribute or method result */
static int
call_ssize(PyObject *obj, const char *meth, Py_ssize_t *v)
{
	PyObject *r = PyObject_CallMethod(obj, meth, NULL);

	if (r == NULL)
		return -1;
	*v = PyLong_AsSsize_t(r);
	Py_DECREF(r);
	return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

static int
tensor_get(PyObject *t, const char *name, struct shr_py_buf *b)
{
	PyObject *dev = NULL, *devtype = NULL, *layout = NULL, *dtype = NULL, *r;
	Py_ssize_t numel, esize, ptr;
	int rc = -1, cpu, contig;
	unsigned int i;

	layout = PyObject_GetAttrString(t, "layout");
	if (layout == NULL)
		goto out;
	if (layout != torch_strided) {
		PyErr_Format(PyExc_TypeError, "%s: a sparse or other non-strided tensor", name);
		goto out;
	}
	dev = PyObject_GetAttrString(t, "device");
	devtype = dev == NULL ? NULL : PyObject_GetAttrString(dev, "type");
	if (devtype == NULL)
		goto out;
	cpu = PyUnicode_Check(devtype) && PyUnicode_CompareWithASCIIString(devtype, "cpu") == 0;
	if (!cpu) {
		PyErr_Format(PyExc_TypeError, "%s: a tensor on device %S: only CPU tensors (.cpu())",
			     name, devtype);
		goto out;
	}
	r = PyObject_CallMethod(t, "is_contiguous", NULL);
	if (r == NULL)
		goto out;
	contig = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (contig != 1) {
		if (contig == 0)
			PyErr_Format(PyExc_ValueError, "%s: the tensor is not contiguous "
				     "(.contiguous() makes a copy)", name);
		goto out;
	}
	dtype = PyObject_GetAttrString(t, "dtype");
	if (dtype == NULL || call_ssize(t, "numel", &numel) < 0 ||
	    call_ssize(t, "element_size", &esize) < 0 || call_ssize(t, "data_ptr", &ptr) < 0)
		goto out;
	b->el = SHR_PY_EL_OTHER;
	for (i = 0; i < 4; i++)
		if (dtype == torch_dt[i])
			b->el = (enum shr_py_el)(i + 1);
	b->ptr = (void *)ptr;
	b->itemsize = esize;
	b->nbytes = numel * esize;
	Py_INCREF(t);
	b->obj = t;
	rc = 0;
out:
	Py_XDECREF(layout);
	Py_XDECREF(dev);
	Py_XDECREF(devtype);
	Py_XDECREF(dtype);
	return rc;
}

int
shr_py_buf_get(PyObject *obj, const char *name, int writable, struct shr_py_buf *b)
{
	int t;

	memset(b, 0, sizeof(*b));
	if (PyObject_CheckBuffer(obj)) {
		if (PyObject_GetBuffer(obj, &b->view, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
			return -1;
		b->has_view = 1;
		if (!PyBuffer_IsContiguous(&b->view, 'C')) {
			PyErr_Format(PyExc_ValueError, "%s is not C-contiguous "
				     "(numpy.ascontiguousarray() makes a copy)", name);
			goto fail;
		}
		if (writable && b->view.readonly) {
			PyErr_Format(PyExc_ValueError, "%s is read-only: the call writes it", name);
			goto fail;
		}
		b->ptr = b->view.buf;
		b->nbytes = b->view.len;
		b->itemsize = b->view.itemsize;
		b->el = fmt_el(b->view.format, b->view.itemsize);
		return 0;
	}
	t = torch_lookup();
	if (t < 0)
		return -1;
	if (t > 0) {
		t = PyObject_IsInstance(obj, torch_tensor);
		if (t < 0)
			return -1;
		if (t > 0)
			return tensor_get(obj, name, b);
	}
	PyErr_Format(PyExc_TypeError, "%s: expected a numpy array or a CPU torch tensor, not %.100s",
		     name, Py_TYPE(obj)->tp_name);
	return -1;
fail:
	shr_py_buf_release(b);
	return -1;
}

/* {"kind": "allgather", "root": 0, "tensor": 4, "step": 9, "count": 256} */
static PyObject *
call_dict(const struct shr_comm_call *c)
{
	return Py_BuildValue("{s:s,s:I,s:I,s:I,s:I}", "kind", shr_proto_kind_str(c->kind),
			     "root", (unsigned int)c->root, "tensor", (unsigned int)c->tensor,
			     "step", (unsigned int)c->step, "count", (unsigned int)c->count);
}

static PyObject *
abort_dict(const struct shr_comm *comm)
{
	struct shr_comm_abort a;

	if (comm == NULL || shr_comm_abort_get(comm, &a) < 0)
		Py_RETURN_NONE;
	if (!a.detailed)
		return Py_BuildValue("{s:I,s:s,s:i,s:O}", "reason", (unsigned int)a.reason,
				     "reason_name", strerror((int)a.reason), "rank",
				     a.rank == SHR_PROTO_RANK_ALL ? -1 : (int)a.rank,
				     "detailed", Py_False);
	return Py_BuildValue("{s:I,s:s,s:i,s:O,s:i,s:N,s:N}", "reason", (unsigned int)a.reason,
			     "reason_name", strerror((int)a.reason), "rank",
			     a.rank == SHR_PROTO_RANK_ALL ? -1 : (int)a.rank, "detailed", Py_True,
			     "other", (int)a.other, "called", call_dict(&a.called),
			     "other_called", call_dict(&a.other_called));
}

PyObject *
shr_py_raise(const struct shr_comm *comm, int rc, const char *why)
{
	char text[768];
	PyObject *exc, *ab, *err, *str;
	size_t n;
	int rc2;

	shr_comm_strerror(comm, rc, text, sizeof(text));
	n = strlen(text);
	if (why != NULL && why[0] != '\0' && n + 3 < sizeof(text))
		snprintf(text + n, sizeof(text) - n, ": %s", why);
	exc = PyObject_CallFunction(shr_py_error, "s", text);
	if (exc == NULL)
		return NULL;
	ab = abort_dict(comm);
	err = PyLong_FromLong(-rc);
	str = PyUnicode_FromString(text);
	rc2 = ab == NULL || err == NULL || str == NULL ||
	      PyObject_SetAttrString(exc, "errno", err) < 0 ||
	      PyObject_SetAttrString(exc, "strerror", str) < 0 ||
	      PyObject_SetAttrString(exc, "abort", ab) < 0;
	Py_XDECREF(ab);
	Py_XDECREF(err);
	Py_XDECREF(str);
	if (rc2) {
		Py_DECREF(exc);
		return NULL;
	}
	PyErr_SetObject(shr_py_error, exc);
	Py_DECREF(exc);
	return NULL;
}
