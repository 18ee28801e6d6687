/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PY_SHOUTER_H
#define SHR_PY_SHOUTER_H

/**
 * @file
 * Internals of the CPython extension shouter._shouter: buffers (numpy arrays and anything
 * else with the buffer protocol, CPU torch tensors through data_ptr()) and errors. Not an
 * API: shouter/__init__.py is.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <shr_comm.h>

/** Element types a buffer can have, as far as the binding cares. */
enum shr_py_el {
	SHR_PY_EL_OTHER = 0,	/**< Anything else (relays accept it by its bytes). */
	SHR_PY_EL_F32,		/**< float32. */
	SHR_PY_EL_I32,		/**< int32. */
	SHR_PY_EL_F16,		/**< IEEE float16. */
	SHR_PY_EL_BF16,		/**< torch.bfloat16. */
	SHR_PY_EL_U16,		/**< numpy uint16: the bits of bfloat16 (numpy has no bfloat16). */
};

/** One buffer argument of a call, held until shr_py_buf_release(). */
struct shr_py_buf {
	Py_buffer view;		/**< Held when has_view (buffer protocol). */
	PyObject *obj;		/**< A reference held instead (torch tensor), or NULL. */
	int has_view;
	void *ptr;		/**< First byte. */
	Py_ssize_t nbytes;	/**< Bytes. */
	Py_ssize_t itemsize;	/**< Bytes per element. */
	enum shr_py_el el;	/**< Element type. */
	char desc[40];		/**< Its type, for messages ("float64", "torch.int64"). */
};

/** The exception class shouter.Error (created by the module). */
extern PyObject *shr_py_error;

/**
 * Take a buffer argument: a C-contiguous object with the buffer protocol (numpy), or a
 * contiguous, strided CPU torch tensor. Sets a Python exception on failure: TypeError (not a
 * buffer, a non-CPU or sparse tensor), ValueError (not C-contiguous, read-only when writable
 * is set).
 *
 * @param obj
 *   The argument.
 * @param name
 *   Its name, for the messages.
 * @param writable
 *   1: the call writes it.
 * @param b
 *   Filled; release it with shr_py_buf_release() (also after a failure: it is then empty).
 * @return
 *   0, or -1 with an exception set.
 */
int shr_py_buf_get(PyObject *obj, const char *name, int writable, struct shr_py_buf *b);

/** Release what shr_py_buf_get() holds (idempotent). */
void shr_py_buf_release(struct shr_py_buf *b);

/** The name of an element type, for messages. */
const char *shr_py_el_str(enum shr_py_el el);

/**
 * Raise shouter.Error for a negative errno of the C API: args (text,), errno, strerror
 * (shr_comm_strerror()), abort (a dict of shr_comm_abort_get() or None).
 *
 * @param comm
 *   The communicator that failed, or NULL (shr_comm_create()).
 * @param rc
 *   The negative errno.
 * @param why
 *   Extra text (shr_comm_params.why), or NULL / "".
 * @return
 *   NULL, always.
 */
PyObject *shr_py_raise(const struct shr_comm *comm, int rc, const char *why);

/** A communicator's counters as a dict (Comm.stats()); NULL with an exception set. */
PyObject *shr_py_stats(const struct shr_comm *comm);

#endif /* SHR_PY_SHOUTER_H */
