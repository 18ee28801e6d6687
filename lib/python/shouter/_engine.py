# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The engine of a process group: one thread that owns a shouter.Comm and runs the queued
collectives, in an order every rank agrees on.

The C communicator is not thread-safe, so exactly one thread (the engine's) calls it; the
Python threads that issue collectives (the training loop, DDP's autograd hooks) only queue
operations and get a completion callback, called from the engine thread when the operation
is done (or failed). Each blocking call of the binding releases the GIL, so the training
thread runs on meanwhile.

Every rank queues the same operations in the same order (torch.distributed's contract), so
each operation has the same sequence number (seq) at every rank. Two orders:

  fifo      operations run in seq order. Nothing to agree on.
  priority  operations on registered tensors (the tensor table: DDP's gradient buckets)
            that wait together run by priority (lower value first), not by seq; any other
            operation is a fence (it runs after everything queued before it, and before
            everything queued after it), without any exchange: every rank runs the same
            operations, so the oldest waiting one (the head) is the same at every rank.
            When the head is prioritised, the ranks, which queue at different times, may
            see other sets waiting: rank 0's engine decides. It takes the leading run of
            prioritised operations waiting, orders them, and announces the batch through
            the box (a broadcast from rank 0 of ANN_WORDS int32: magic, batch, count, then
            seq, tensor id, element count and kind per operation); each rank
            then runs exactly that batch, in that order, waiting for an operation it has
            not queued yet (at most `wait_s`). A rank whose operation at that seq names
            another tensor, kind or size than rank 0's fails with a message naming both; it
            still calls its own operation so that the box, which compares every round's
            identity (kind, tensor id, step, count) at every rank, aborts the job (EPROTO)
            at every rank at once: never a wrong sum, never a hang.

Identity on the wire: the step of every call is the engine's batch number (fifo: one batch
per operation), the tensor id the registered tensor's id (table ids from 0), or
UNREG_BASE + seq for an operation on an unregistered tensor, ANN_TENSOR for an
announcement. A failed C call leaves the communicator unusable (the box has aborted the job,
or the driver failed): every operation queued then or later fails with that error.
"""

import threading
import time

__all__ = ["Engine", "Op", "EngineFailed", "FENCE", "ANN_WORDS", "ANN_TENSOR", "UNREG_BASE"]

ANN_MAX = 20                    # operations per announcement
ANN_WORDS = 4 + 4 * ANN_MAX     # [magic, batch, count, 0, then 4 words per operation]
ANN_MAGIC = 0x5348_4131         # "SHA1"
ANN_TENSOR = 0x7FFF_FFF0        # tensor id of the announcements
UNREG_BASE = 0x4000_0000        # tensor ids of operations on unregistered tensors
FENCE = None                    # priority of an operation that is not reordered

KINDS = ("allreduce", "broadcast", "allgather", "reduce", "reduce_scatter", "gather",
         "scatter", "alltoall", "barrier")


class EngineFailed(RuntimeError):
    """The process group failed earlier; the communicator is no longer usable."""


class Op:
    """One queued operation.

    kind      one of KINDS (checked across ranks in priority order)
    tensor    the wire tensor id (a table id, or None: UNREG_BASE + seq)
    count     elements (checked across ranks in priority order)
    prio      priority (lower first) or FENCE
    key       operations with the same key keep their seq order (the tensor's storage)
    run       run(comm, step, tensor_id) -> result: the C calls, in the engine thread
    done      done(result) / fail(exc): completion callbacks, in the engine thread
    """

    __slots__ = ("seq", "kind", "tensor", "count", "prio", "key", "run", "done", "fail")

    def __init__(self, kind, count, run, done, fail, *, tensor=None, prio=FENCE, key=None):
        self.seq = -1
        self.kind, self.count, self.tensor, self.prio, self.key = kind, count, tensor, prio, key
        self.run, self.done, self.fail = run, done, fail

    def wire_tensor(self):
        return self.tensor if self.tensor is not None else UNREG_BASE + (self.seq & 0x3FFF_FFFF)

    def describe(self):
        t = f"tensor {self.tensor}" if self.tensor is not None else "unregistered tensor"
        return f"operation #{self.seq} ({self.kind}, {t}, {self.count} elements)"


def _earlier(err):
    """The error of an operation queued after the engine failed with err."""
    if str(err).startswith("the process group "):
        return err
    return EngineFailed(f"the process group failed earlier: {err}")


def _u32(v):
    return v & 0xFFFF_FFFF


class Engine:
    """Runs operations on comm in one thread. comm: a shouter.Comm (or any object with its
    broadcast(buf, root=, step=, tensor=)), rank and world: this rank's place. ann_buffer():
    a function returning a fresh zeroed int32 buffer of ANN_WORDS elements that comm takes
    and that supports slice assignment and tolist() (a numpy array). order: "priority" or
    "fifo". wait_s: how long a rank waits for an operation rank 0 announced before
    failing."""

    def __init__(self, comm, rank, world, ann_buffer, *, order="priority", wait_s=30.0,
                 name="shouter"):
        if order not in ("priority", "fifo"):
            raise ValueError(f"order: 'priority' or 'fifo', not {order!r}")
        self.comm, self.rank, self.world = comm, rank, world
        self.order, self.wait_s = order, wait_s
        self._ann_buffer = ann_buffer
        self._cv = threading.Condition()
        self._waiting = {}              # seq -> Op
        self._next_seq = 0
        self._failed = None             # the first error (an exception), then every op fails
        self._closing = False
        self._batch = 0
        self.stats = {"ops": 0, "batches": 0, "announce_s": 0.0, "run_s": 0.0,
                      "reordered": 0, "waited_for_op": 0}
        self._thread = threading.Thread(target=self._main, name=f"{name}-engine", daemon=True)
        self._thread.start()

    # ---- the callers' side

    def submit(self, op):
        """Queue op (its seq is set); returns op. If the engine failed or is closed, op fails
        at once (op.fail is called in this thread)."""
        with self._cv:
            op.seq = self._next_seq
            self._next_seq += 1
            err = self._failed
            if err is None and self._closing:
                err = EngineFailed("the process group is closed")
            if err is None:
                self._waiting[op.seq] = op
                self._cv.notify_all()
                return op
        op.fail(_earlier(err))
        return op

    def close(self, timeout=None):
        """Let the queued operations finish, then stop the thread."""
        with self._cv:
            self._closing = True
            self._cv.notify_all()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def failed(self):
        return self._failed

    # ---- the engine thread

    def _main(self):
        try:
            while True:
                with self._cv:
                    while not self._waiting and not self._closing:
                        self._cv.wait()
                    if not self._waiting:
                        return
                if self.order == "fifo" or self.world == 1:
                    with self._cv:
                        op = self._waiting.pop(min(self._waiting))
                    self._run(op)
                    self._batch += 1
                else:
                    self._priority_batch()
        except BaseException as e:      # a bug here must not leave callers waiting forever
            self._fail_all(e)

    def _choose(self):
        """Rank 0: the next batch among the waiting operations (called with the lock)."""
        seqs = sorted(self._waiting)
        run, keys = [], set()
        for s in seqs:
            op = self._waiting[s]
            if op.prio is FENCE or len(run) == ANN_MAX:
                break
            if op.key is not None and op.key in keys:
                break                   # a second use of the same tensor: after this batch
            keys.add(op.key)
            run.append(op)
        batch = sorted(run, key=lambda o: (o.prio, o.seq))
        if [o.seq for o in batch] != [o.seq for o in run]:
            self.stats["reordered"] += 1
        return batch

    def _priority_batch(self):
        with self._cv:
            head = self._waiting[min(self._waiting)]
            if head.prio is FENCE:      # runs alone and in order at every rank: no choice
                del self._waiting[head.seq]
        if head.prio is FENCE:
            if self._run(head):
                self._batch += 1
            return
        ann = self._ann_buffer()
        step = self._batch & 0x7FFF_FFFF
        if self.rank == 0:
            with self._cv:
                batch = self._choose()
            words = [ANN_MAGIC, _u32(self._batch), len(batch), 0]
            for op in batch:
                words += [_u32(op.seq), _u32(op.wire_tensor()), _u32(op.count),
                          KINDS.index(op.kind)]
            ann[:len(words)] = [w - (1 << 32) if w >= 1 << 31 else w for w in words]
        t0 = time.perf_counter()
        try:
            self.comm.broadcast(ann, root=0, step=step, tensor=ANN_TENSOR)
        except Exception as e:
            self._fail_all(e)
            return
        self.stats["announce_s"] += time.perf_counter() - t0
        self.stats["batches"] += 1
        if self.rank == 0:
            for op in batch:
                with self._cv:
                    if self._waiting.pop(op.seq, None) is None:
                        return          # failed meanwhile: _fail_all took it
                if not self._run(op):
                    return
            self._batch += 1
            return
        words = [_u32(w) for w in ann.tolist()]
        if words[0] != ANN_MAGIC or words[1] != _u32(self._batch) or words[2] > ANN_MAX:
            self._fail_all(EngineFailed(
                f"rank {self.rank}: malformed announcement from rank 0 (batch {words[1]}, "
                f"this rank's {self._batch}): the ranks disagree on the operations"))
            return
        for i in range(words[2]):
            seq, tensor, count, kind = words[4 + 4 * i:8 + 4 * i]
            op = self._wait_for(seq)
            if op is None and self._failed is not None:
                return
            if op is None:
                desc = f"operation #{seq} ({KINDS[kind] if kind < len(KINDS) else kind}, " \
                       f"tensor {tensor}, {count} elements)"
                self._fail_all(EngineFailed(
                    f"rank {self.rank}: rank 0 runs {desc} next, and this rank had not "
                    f"queued it after {self.wait_s:g} s: the ranks issue different "
                    "collectives"))
                return
            mine = (KINDS.index(op.kind), _u32(op.wire_tensor()), _u32(op.count))
            if mine != (kind, tensor, count):
                k = KINDS[kind] if kind < len(KINDS) else kind
                err = EngineFailed(
                    f"rank {self.rank}: the ranks disagree on operation #{seq}: rank 0 has "
                    f"{k} of tensor {tensor} ({count} elements), this rank "
                    f"{op.kind} of tensor {op.wire_tensor()} ({op.count} elements); the "
                    "tensor table (registration order) or the calls differ")
                # run it anyway: the box sees the mismatch and aborts the job at every rank
                self._run(op, forced_error=err)
                return
            if not self._run(op):
                return
        self._batch += 1

    def _wait_for(self, seq):
        deadline = time.monotonic() + self.wait_s
        with self._cv:
            if seq not in self._waiting:
                self.stats["waited_for_op"] += 1
            while seq not in self._waiting:
                left = deadline - time.monotonic()
                if left <= 0 or self._failed is not None or \
                        (self._closing and seq >= self._next_seq):
                    return None
                self._cv.wait(left)
            return self._waiting.pop(seq)

    def _run(self, op, forced_error=None):
        step = self._batch & 0x7FFF_FFFF
        t0 = time.perf_counter()
        try:
            res = op.run(self.comm, step, op.wire_tensor())
        except Exception as e:
            self.stats["run_s"] += time.perf_counter() - t0
            first = forced_error or e
            if forced_error is not None and str(e):
                first = EngineFailed(f"{forced_error}; the collective then failed: {e}")
            self._fail_all(first, op)
            return False
        self.stats["run_s"] += time.perf_counter() - t0
        self.stats["ops"] += 1
        if forced_error is not None:
            self._fail_all(forced_error, op)
            return False
        try:
            op.done(res)
        except Exception as e:          # a completion callback's error is the caller's
            self._fail_all(e)
            return False
        return True

    def _fail_all(self, err, op=None):
        with self._cv:
            if self._failed is None:
                self._failed = err
            ops = [self._waiting.pop(s) for s in sorted(self._waiting)]
            self._closing = True
            self._cv.notify_all()
        if op is not None:
            op.fail(err)
        later = _earlier(err)
        for o in ops:
            o.fail(later)
