# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""An in-process stand-in for shouter.Comm, for the engine's and the backend's unit tests
(no box): N communicators of one Hub, used from N threads. Every call is a rendezvous of
the N ranks' k-th calls; like the box, the hub compares the calls' identities (kind, root,
step, tensor id, count) and fails every rank's call (FakeError, errno EPROTO, naming both
sides) when they differ; a rank that does not come within the hub's timeout fails the
others (ETIMEDOUT). Sums are float32 (numpy), in rank order."""

import errno
import threading

import numpy as np

try:
    import torch
except ImportError:         # the engine tests do not need it
    torch = None


class FakeError(Exception):
    def __init__(self, err, text):
        super().__init__(text)
        self.errno, self.strerror = err, text


def _np(x):
    if x is None:
        return None
    if torch is not None and isinstance(x, torch.Tensor):
        return x.numpy()
    return x


def _words(x):
    """The buffer's bytes as float32 (relays), or itself for float32."""
    a = _np(x).reshape(-1)
    return a if a.dtype == np.float32 else a.view(np.float32)


_OPS = {"sum": np.add, "min": np.minimum, "max": np.maximum, "prod": np.multiply}


class Hub:
    def __init__(self, world, timeout=10.0):
        self.world, self.timeout = world, timeout
        self.cv = threading.Condition()
        self.rounds = {}        # call index -> {rank: (ident, args)}
        self.results = {}       # call index -> {rank: result or exception}
        self.failed = None
        self.log = []           # (call index, ident) of each completed round

    def comm(self, rank):
        return FakeComm(self, rank)

    def call(self, rank, k, ident, args):
        with self.cv:
            if self.failed is not None:
                raise FakeError(errno.EPIPE, f"failed earlier: {self.failed}")
            r = self.rounds.setdefault(k, {})
            r[rank] = (ident, args)
            if len(r) == self.world:
                self._complete(k, r)
                self.cv.notify_all()
            ok = self.cv.wait_for(lambda: k in self.results or self.failed is not None,
                                  self.timeout)
            if not ok:
                self.failed = f"call {k}: ranks {sorted(set(range(self.world)) - set(r))} " \
                              "did not come"
                self.cv.notify_all()
            if k in self.results:
                res = self.results[k][rank]
                if isinstance(res, Exception):
                    raise res
                return res
            raise FakeError(errno.ETIMEDOUT, self.failed)

    def _complete(self, k, r):
        ident0 = r[0][0]
        for q in range(1, self.world):
            if r[q][0] != ident0:
                text = (f"ranks called different collectives: rank {q} called {r[q][0]} "
                        f"where rank 0 called {ident0}")
                self.failed = text
                self.results[k] = {q: FakeError(errno.ECONNABORTED, text)
                                   for q in range(self.world)}
                return
        self.log.append((k, ident0))
        kind = ident0[0]
        args = [r[q][1] for q in range(self.world)]
        out = {}
        if kind in ("allreduce", "reduce", "barrier"):
            op = ident0[5]
            acc = _np(args[0][0]).reshape(-1).astype(np.float32).copy()
            for q in range(1, self.world):
                acc = _OPS[op](acc, _np(args[q][0]).reshape(-1)).astype(np.float32)
            for q in range(self.world):
                if kind != "reduce" or q == ident0[1]:
                    dst = args[q][1] if args[q][1] is not None else args[q][0]
                    _np(dst).reshape(-1)[:] = acc
        elif kind == "broadcast":
            src = _words(args[ident0[1]][0]).copy()
            for q in range(self.world):
                _words(args[q][0])[:] = src
        elif kind in ("allgather", "gather"):
            cat = np.concatenate([_words(args[q][0]) for q in range(self.world)])
            for q in range(self.world):
                if kind == "allgather" or q == ident0[1]:
                    _words(args[q][1])[:] = cat
        elif kind == "scatter":
            src = _words(args[ident0[1]][0]).reshape(self.world, -1)
            for q in range(self.world):
                _words(args[q][1])[:] = src[q]
        elif kind == "alltoall":
            blocks = [_words(args[q][0]).reshape(self.world, -1) for q in range(self.world)]
            for q in range(self.world):
                _words(args[q][1])[:] = np.concatenate([blocks[i][q] for i in
                                                        range(self.world)])
        elif kind == "reduce_scatter":
            op = ident0[5]
            ins = [_np(args[q][0]).reshape(self.world, -1) for q in range(self.world)]
            for q in range(self.world):
                acc = ins[0][q].copy()
                for i in range(1, self.world):
                    acc = _OPS[op](acc, ins[i][q]).astype(np.float32)
                _np(args[q][1]).reshape(-1)[:] = acc
        for q in range(self.world):
            out[q] = None
        self.results[k] = out


class FakeComm:
    """The calls of shouter.Comm that the backend uses, through a Hub. Also records which
    thread called (the engine's, never two at once)."""

    def __init__(self, hub, rank):
        self.hub, self.rank, self.world = hub, rank, hub.world
        self.job, self.dtype, self.closed = 0, "float32", False
        self._k = 0
        self._step, self._tensor = 0, 0
        self.threads = set()
        self.calls = []         # identities, in call order
        self._busy = threading.Lock()

    def _go(self, kind, root, count, op, step, tensor, args):
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("FakeComm entered from two threads at once")
        try:
            self.threads.add(threading.get_ident())
            if step is not None:
                self._step = step
            if tensor is not None:
                self._tensor = tensor
            ident = (kind, root, self._step, self._tensor, count, op)
            self._tensor += 1
            self.calls.append(ident)
            k = self._k
            self._k += 1
            return self.hub.call(self.rank, k, ident, args)
        finally:
            self._busy.release()

    def allreduce(self, buf, out=None, *, op="sum", step=None, tensor=None):
        return self._go("allreduce", 0, _np(buf).size, op, step, tensor, (buf, out))

    def reduce(self, buf, out=None, *, root, op="sum", step=None, tensor=None):
        return self._go("reduce", root, _np(buf).size, op, step, tensor, (buf, out))

    def reduce_scatter(self, inp, out, *, op="sum", step=None, tensor=None):
        return self._go("reduce_scatter", 0, _np(out).size, op, step, tensor, (inp, out))

    def broadcast(self, buf, *, root=0, step=None, tensor=None):
        return self._go("broadcast", root, _words(buf).size, None, step, tensor, (buf,))

    def allgather(self, inp, out, *, step=None, tensor=None):
        return self._go("allgather", 0, _words(inp).size, None, step, tensor, (inp, out))

    def gather(self, inp, out, *, root, step=None, tensor=None):
        return self._go("gather", root, _words(inp).size, None, step, tensor, (inp, out))

    def scatter(self, inp, out, *, root, step=None, tensor=None):
        return self._go("scatter", root, _words(out).size, None, step, tensor, (inp, out))

    def alltoall(self, inp, out, *, step=None, tensor=None):
        return self._go("alltoall", 0, _words(inp).size, None, step, tensor, (inp, out))

    def barrier(self):
        return self._go("barrier", 0, 1, "sum", None, None,
                        (np.zeros(1, np.float32), None))

    def close(self):
        self.closed = True
