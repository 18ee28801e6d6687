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

/* "float64", "uint8"... for a message; else the format and item size */
static void
fmt_desc(const char *fmt, Py_ssize_t itemsize, char *buf, size_t len)
{
	const char *f = fmt != NULL ? fmt : "B", *kind = NULL;

	if (*f == '@' || *f == '=' || *f == '<')
		f++;
	if (f[0] != '\0' && f[1] == '\0') {
		if (strchr("bhilq", f[0]) != NULL)
			kind = "int";
		else if (strchr("BHILQ", f[0]) != NULL)
			kind = "uint";
		else if (strchr("efdg", f[0]) != NULL)
			kind = "float";
	}
	if (kind != NULL)
		snprintf(buf, len, "%s%zd", kind, itemsize * 8);
	else
		snprintf(buf, len, "format '%.8s' (%zd-byte items)", fmt != NULL ? fmt : "B",
			 itemsize);
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

/* interned attribute names of torch.Tensor */
enum { A_LAYOUT, A_IS_CPU, A_DEVICE, A_IS_CONTIGUOUS, A_DTYPE, A_NUMEL, A_ELEMENT_SIZE,
       A_DATA_PTR, A_IS_CONJ, A_IS_NEG, A_MAX };
static PyObject *attr[A_MAX];

static int
attr_init(void)
{
	static const char *const names[A_MAX] = { "layout", "is_cpu", "device", "is_contiguous",
						  "dtype", "numel", "element_size", "data_ptr",
						  "is_conj", "is_neg" };
	unsigned int i;

	for (i = 0; i < A_MAX; i++)
		if (attr[i] == NULL && (attr[i] = PyUnicode_InternFromString(names[i])) == NULL)
			return -1;
	return 0;
}

/* the int a method of t returns */
static int
call_ssize(PyObject *t, int a, Py_ssize_t *v)
{
	PyObject *r = PyObject_CallMethodNoArgs(t, attr[a]);

	if (r == NULL)
		return -1;
	*v = PyLong_AsSsize_t(r);
	Py_DECREF(r);
	return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/*
 * A torch tensor, through its attributes (about 0.5 us: tensor.numpy() alone takes 1.8 us,
 * device.type 0.6 us, and a tensor that requires grad makes numpy() raise, which costs
 * hundreds of microseconds).
 */
static int
tensor_get(PyObject *t, const char *name, struct shr_py_buf *b)
{
	static const Py_ssize_t el_size[] = { 0, 4, 4, 2, 2 };
	PyObject *v = NULL;
	Py_ssize_t numel, esize, ptr;
	int rc = -1, yes;
	unsigned int i;

	if (attr_init() < 0)
		return -1;
	v = PyObject_GetAttr(t, attr[A_LAYOUT]);
	if (v == NULL)
		return -1;
	yes = v == torch_strided;
	Py_DECREF(v);
	if (!yes) {
		PyErr_Format(PyExc_TypeError, "%s: a sparse or other non-strided tensor", name);
		return -1;
	}
	v = PyObject_GetAttr(t, attr[A_IS_CPU]);
	if (v == NULL)
		return -1;
	yes = PyObject_IsTrue(v);
	Py_DECREF(v);
	if (yes != 1) {
		if (yes == 0) {
			v = PyObject_GetAttr(t, attr[A_DEVICE]);
			PyErr_Format(PyExc_TypeError, "%s: a tensor on device %S: only CPU tensors "
				     "(.cpu() makes a copy)", name, v != NULL ? v : Py_None);
			Py_XDECREF(v);
		}
		return -1;
	}
	v = PyObject_CallMethodNoArgs(t, attr[A_IS_CONTIGUOUS]);
	if (v == NULL)
		return -1;
	yes = PyObject_IsTrue(v);
	Py_DECREF(v);
	if (yes != 1) {
		if (yes == 0)
			PyErr_Format(PyExc_ValueError, "%s: the tensor is not contiguous "
				     "(.contiguous() makes a copy)", name);
		return -1;
	}
	/*
	 * A conjugate or negative view (x.conj(), x.conj().imag) shares memory whose bits are
	 * not its values: sent or written as they are, they would be the wrong values.
	 */
	for (i = A_IS_CONJ; i <= A_IS_NEG; i++) {
		v = PyObject_CallMethodNoArgs(t, attr[i]);
		if (v == NULL)
			return -1;
		yes = PyObject_IsTrue(v);
		Py_DECREF(v);
		if (yes != 0) {
			if (yes == 1)
				PyErr_Format(PyExc_ValueError, "%s: a %s view (.%s() makes a copy)",
					     name, i == A_IS_CONJ ? "conjugate" : "negative",
					     i == A_IS_CONJ ? "resolve_conj" : "resolve_neg");
			return -1;
		}
	}
	v = PyObject_GetAttr(t, attr[A_DTYPE]);
	if (v == NULL)
		return -1;
	b->el = SHR_PY_EL_OTHER;
	for (i = 0; i < 4; i++)
		if (v == torch_dt[i])
			b->el = (enum shr_py_el)(i + 1);
	if (b->el == SHR_PY_EL_OTHER) {
		PyObject *str = PyObject_Str(v);
		const char *s = str != NULL ? PyUnicode_AsUTF8(str) : NULL;

		snprintf(b->desc, sizeof(b->desc), "%s", s != NULL ? s : "?");
		Py_XDECREF(str);
		PyErr_Clear();
		if (call_ssize(t, A_ELEMENT_SIZE, &esize) < 0)
			goto out;
	} else {
		snprintf(b->desc, sizeof(b->desc), "torch.%s", shr_py_el_str(b->el));
		esize = el_size[b->el];
	}
	if (call_ssize(t, A_NUMEL, &numel) < 0 || call_ssize(t, A_DATA_PTR, &ptr) < 0)
		goto out;
	b->ptr = (void *)ptr;
	b->itemsize = esize;
	b->nbytes = numel * esize;
	Py_INCREF(t);
	b->obj = t;
	rc = 0;
out:
	Py_DECREF(v);
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
		if (b->el != SHR_PY_EL_OTHER)
			snprintf(b->desc, sizeof(b->desc), "%s", shr_py_el_str(b->el));
		else
			fmt_desc(b->view.format, b->view.itemsize, b->desc, sizeof(b->desc));
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
	PyErr_Format(PyExc_TypeError, "%s: expected a numpy array or a CPU torch tensor, "
		     "not %.100s", name, Py_TYPE(obj)->tp_name);
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

/* box: the index (in the Comm's boxes) of the box that aborted the job */
static PyObject *
abort_dict(const struct shr_shard *shard)
{
	struct shr_comm_abort a;
	uint16_t box = 0;

	if (shard == NULL || shr_shard_abort_get(shard, &a, &box) < 0)
		Py_RETURN_NONE;
	if (!a.detailed)
		return Py_BuildValue("{s:I,s:s,s:i,s:O,s:I}", "reason", (unsigned int)a.reason,
				     "reason_name", strerror((int)a.reason), "rank",
				     a.rank == SHR_PROTO_RANK_ALL ? -1 : (int)a.rank,
				     "detailed", Py_False, "box", (unsigned int)box);
	return Py_BuildValue("{s:I,s:s,s:i,s:O,s:i,s:N,s:N,s:I}", "reason",
			     (unsigned int)a.reason, "reason_name", strerror((int)a.reason),
			     "rank", a.rank == SHR_PROTO_RANK_ALL ? -1 : (int)a.rank, "detailed",
			     Py_True, "other", (int)a.other, "called", call_dict(&a.called),
			     "other_called", call_dict(&a.other_called), "box", (unsigned int)box);
}

PyObject *
shr_py_raise(const struct shr_shard *shard, int rc, const char *why)
{
	char text[768];
	PyObject *exc, *ab, *err, *str;
	size_t n;
	int rc2;

	shr_shard_strerror(shard, rc, text, sizeof(text));
	n = strlen(text);
	if (why != NULL && why[0] != '\0' && n + 3 < sizeof(text))
		snprintf(text + n, sizeof(text) - n, ": %s", why);
	exc = PyObject_CallFunction(shr_py_error, "s", text);
	if (exc == NULL)
		return NULL;
	ab = abort_dict(shard);
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
