/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The shouter authors
 */

#ifndef SHR_PY_SHOUTER_H
#define SHR_PY_SHOUTER_H

/**
 * @file
 * Internals of the CPython extension shouter._shouter: buffers (numpy arrays and anything
 * else with the buffer protocol, CPU torch tensors through data_ptr()), errors, the boxes a
 * communicator is sharded over and their counters. Not an API: shouter/__init__.py is.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <shr_comm.h>
#include <shr_shard.h>

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
 * (shr_shard_strerror(): with several boxes it names the box that failed), abort (a dict of
 * shr_shard_abort_get(), with the box's index, or None).
 *
 * @param shard
 *   The communicator that failed, or NULL (shr_shard_create()).
 * @param rc
 *   The negative errno.
 * @param why
 *   Extra text (shr_comm_params.why), or NULL / "".
 * @return
 *   NULL, always.
 */
PyObject *shr_py_raise(const struct shr_shard *shard, int rc, const char *why);

/**
 * An IPv4 address argument (None: 0). Sets ValueError.
 *
 * @return
 *   0, or -1 with an exception set.
 */
int shr_py_parse_ip(PyObject *o, const char *name, uint32_t *ip);

/**
 * An integer argument: a Python int or anything with __index__ (numpy integers), not a bool,
 * in lo..hi. A format unit such as "I" would take 2**32 + 7 as 7 and -1 as 2**32 - 1.
 * @return 0, or -1 with TypeError (not an integer) or ValueError (out of range) set.
 */
int shr_py_uint(PyObject *o, const char *name, unsigned long long lo, unsigned long long hi,
		unsigned long long *out);

/**
 * Load the job's secret from the file secret_file names (None: no secret). Sets ValueError
 * (too short or long, readable by others, unreadable).
 *
 * @return
 *   1 (loaded), 0 (None), or -1 with an exception set.
 */
int shr_py_secret_load(PyObject *secret_file, struct shr_auth_secret *secret);

/**
 * The EAL's arguments (None: none; else a list of strings, after an argv[0] of "shouter"),
 * copied for the life of the process (the EAL may keep pointers into them). Sets TypeError.
 *
 * @return
 *   0 (argc and argv set unless None), or -1 with an exception set.
 */
int shr_py_eal_args(PyObject *eal_args, int *argc, char ***argv);

/** The boxes of a communicator, as Comm(box, port=...) gives them. */
struct shr_py_boxes {
	uint16_t n;				/**< Boxes, 1 .. SHR_SHARD_MAX_BOXES. */
	uint32_t ip[SHR_SHARD_MAX_BOXES];	/**< Addresses, host order. */
	uint16_t port[SHR_SHARD_MAX_BOXES];	/**< Base UDP ports (0: the default). */
	int port_given;				/**< port was not None. */
};

/**
 * Parse Comm()'s box and port: box an IPv4 address string or a list (tuple) of them, port
 * None, an int (every box) or a list of as many ints (None: the default). Sets ValueError
 * (a bad or missing address, a bad port, lengths that differ, no box or more than
 * SHR_SHARD_MAX_BOXES, a box listed twice).
 *
 * @return
 *   0, or -1 with an exception set.
 */
int shr_py_boxes_parse(PyObject *box, PyObject *port, struct shr_py_boxes *b);

/** "ip:port" of box j. */
const char *shr_py_box_str(const struct shr_py_boxes *b, uint16_t j, char *buf, size_t len);

/**
 * A join of several boxes that timed out: shr_shard_create()'s why is "box J of K (ip:port):
 * <the errno's text>"; replace that text with what the one-box text says (no JOIN_ACK in
 * timeout_ms ms, and why that happens). Anything else in why is left as it is.
 */
void shr_py_join_timeout_why(char *why, size_t len, unsigned int job, unsigned int rank,
			     unsigned int world, unsigned int timeout_ms);

/**
 * A communicator's counters as a dict (Comm.stats()): the totals over its boxes (srtt_ns
 * and rto_ns: the largest, min_rtt_ns: the smallest; with one box, that box's), and "boxes":
 * one dict of the same counters per box, in order. NULL with an exception set.
 */
PyObject *shr_py_stats(const struct shr_shard *shard);

/**
 * What each box granted (Comm.info()): a list, one dict per box in order: box ("ip:port"),
 * window, chunk, lanes, local_port, driver. NULL with an exception set.
 */
PyObject *shr_py_info(const struct shr_shard *shard, const struct shr_py_boxes *b);

/** One Comm object: one rank of one job, on one box or sharded (the module's type). */
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

/** The collectives, by what they take (shr_py_coll()). */
enum shr_py_coll {
	SHR_PY_ALLREDUCE,
	SHR_PY_REDUCE,
	SHR_PY_REDUCE_SCATTER,
	SHR_PY_BROADCAST,
	SHR_PY_ALLGATHER,
	SHR_PY_GATHER,
	SHR_PY_SCATTER,
	SHR_PY_ALLTOALL,
};

/**
 * Enter a call on a Comm: it must be open and idle; it is busy until the caller clears busy.
 *
 * @param self
 *   The Comm.
 * @param step, tensor
 *   The call's identity (shr_comm_ident_set()): NULL or None keeps the step / takes the
 *   automatic tensor id.
 * @return
 *   0, or -1 with an exception set: ValueError (closed; a step below the current one or too
 *   far above the first call's; a value out of range), RuntimeError (a call in progress in
 *   another thread), TypeError (not an integer).
 */
int shr_py_enter(CommObject *self, PyObject *step, PyObject *tensor);

/**
 * One collective call from Python: parse its arguments, check its buffers, enter, run it
 * with the GIL released.
 *
 * @param self
 *   The Comm.
 * @param c
 *   Which collective (its arguments: shouter/__init__.py).
 * @param args, kw
 *   The call's arguments.
 * @return
 *   None, or NULL with an exception set: TypeError (arguments, a buffer of the wrong element
 *   type, a required buffer missing), ValueError (sizes, overlap, root, op, a closed Comm),
 *   RuntimeError (another thread's call in progress), shouter.Error (the call failed).
 */
PyObject *shr_py_coll(CommObject *self, enum shr_py_coll c, PyObject *args, PyObject *kw);

/**
 * Comm.barrier(): every rank of the job has entered it.
 *
 * @return
 *   None, or NULL with an exception set (as shr_py_enter(), or shouter.Error).
 */
PyObject *shr_py_barrier(CommObject *self, PyObject *unused);

/**
 * Comm._c_allreduce_loop(buf, iters) -> ns: iters in-place allreduces of buf from a C loop
 * (no Python per call), for the binding's per-call overhead (scripts/py_call_bench.py).
 *
 * @return
 *   The nanoseconds the loop took, or NULL with an exception set (as shr_py_coll()).
 */
PyObject *shr_py_c_loop(CommObject *self, PyObject *args);

#endif /* SHR_PY_SHOUTER_H */
