# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""A torch.distributed backend through a shouter box (PyTorch 1.13).

    import shouter.torch                     # registers the backend "shouter"
    dist.init_process_group("shouter")       # under torchrun, or with rank/world_size/store
    model = DDP(model)                       # gradient buckets, broadcast, checks: the box

The process group is a torch.distributed.ProcessGroup subclassed in Python. Each process
group is one shouter job of dtype float32 (shouter.Comm), driven by one engine thread
(shouter._engine): a collective queues an operation and returns at once a Work whose future
completes from the engine thread, so DDP's backward pass overlaps its bucket allreduces.

Job parameters, from the environment:
  SHOUTER_BOX          the box, ip[:port] (required); or several, comma-separated
                       (ip[:port],ip[:port],...: the job sharded over them, lib/shard; the
                       same list in the same order at every rank, udp driver only)
  SHOUTER_JOB          job id of the first shouter group of the process (optional: without
                       it, rank 0 draws a random id and publishes it in the rendezvous
                       store, and the other ranks read it there; later groups always do so)
  SHOUTER_DRIVER       udp (default) or dpdk; SHOUTER_LOCAL_IP, SHOUTER_LOCAL_PORT,
                       SHOUTER_EAL_ARGS (dpdk: EAL arguments, space separated)
  SHOUTER_SECRET_FILE  the job's secret, for a box that requires one
  SHOUTER_MAC          1: the job uses the per-job MAC (the box's job has mac = 1; needs
                       SHOUTER_SECRET_FILE)
  SHOUTER_WINDOW, SHOUTER_CHUNK, SHOUTER_TIMEOUT_MS, SHOUTER_REPRO (1: a reproducible job)
  SHOUTER_CC_TARGET_US the congestion control's queueing delay target, microseconds, or
                       off (default: the C default, 1000; see shouter.Comm's cc_target_us)
  SHOUTER_ORDER        priority (default) or fifo: see shouter._engine
  SHOUTER_OP_WAIT_S    how long a rank waits for an operation rank 0 announced (default 30)

What goes through the box: float32 allreduce, reduce and reduce_scatter (SUM, MIN, MAX,
PRODUCT; AVG = SUM then a local division), and every relay (broadcast, allgather, gather,
scatter, alltoall with equal splits) of any dtype, as bytes. A reduction of another dtype
(int64, float64, int32, bool, ..., and BAND/BOR/BXOR of integers) goes through an allgather
(reduce_scatter: an alltoall) of the bytes and is reduced locally in the tensor's dtype, in
rank order, so it is exact and the same at every rank; it moves world times the data, which
suits what DDP and training loops reduce in other dtypes (DDP's int32 map of used
parameters, counters). Point-to-point (send/recv) is not supported.

Tensor table and priority: register_tensor() names a tensor once with an id (the tensor id
every packet of its collectives carries, which the box compares across ranks) and a
priority; priority_hook is a DDP communication hook that registers each gradient bucket
(id = bucket index, priority = -index: DDP's buckets are in reverse parameter order, so the
highest index holds the layers nearest the input, which the next forward pass needs first).
"""

import atexit
import collections
import datetime
import math
import os
import random
import threading

import numpy
import torch
import torch.distributed as dist

import shouter
from shouter._engine import FENCE, ANN_WORDS, Engine, Op
from shouter._torch_tensor import (_Bytes, _check_red, _cpu, _from_u8, _local_reduce,
                                   _red_name, _u8)

__all__ = ["ProcessGroupShouter", "register_tensor", "priority_hook", "config_from_env",
           "BACKEND"]

BACKEND = "shouter"
_STORE_KEY = "shouter/job"
_KEEP = 64                      # completed Works kept alive (see _Work; they hold results)
_work_lock = threading.Lock()
_groups = set()                         # every group, shut down (LEAVE) at exit
_shouter_groups = 0

def _env(name, default=None, conv=str):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return conv(v)
    except ValueError:
        raise ValueError(f"shouter backend: {name}={v!r} is not valid") from None


def _boxes(env):
    """SHOUTER_BOX: "ip[:port]" -> (ip, port or None); "ip[:port],ip[:port],..." (sharded)
    -> ([ip, ...], [port or None, ...])."""
    if env is None:
        raise ValueError("shouter backend: SHOUTER_BOX is not set (the aggregator's address, "
                         "ip[:port], e.g. SHOUTER_BOX=198.18.0.1; several boxes: "
                         "SHOUTER_BOX=198.18.0.1,198.18.0.2)")
    boxes, ports = [], []
    for b in env.split(","):
        b = b.strip()
        if not b:
            raise ValueError(f"shouter backend: SHOUTER_BOX={env!r}: an empty box")
        port = None
        if ":" in b:
            b, p = b.rsplit(":", 1)
            try:
                port = int(p)
            except ValueError:
                raise ValueError(f"shouter backend: SHOUTER_BOX: bad port {p!r}") from None
        boxes.append(b)
        ports.append(port)
    if len(boxes) == 1:
        return boxes[0], ports[0]
    return boxes, ports


def _cc_target(v):
    """SHOUTER_CC_TARGET_US: "off" or a number of microseconds (Comm checks its range)."""
    return v if v == "off" else int(v)


def config_from_env(store=None, rank=0, world=1):
    """The Comm keywords of a new group: the environment, and the job id from SHOUTER_JOB
    or the store (rank 0 draws it and sets it; the others get it)."""
    global _shouter_groups
    box, port = _boxes(_env("SHOUTER_BOX"))
    if world > 0xFFFF:
        raise ValueError(f"shouter backend: world size {world} > 65535")
    # every variable read before the job id is taken: one that is not valid must not use
    # up SHOUTER_JOB (the first group's), which a retry would then no longer read
    kw = dict(box=box, rank=rank, world=world, dtype="float32", port=port,
              driver=_env("SHOUTER_DRIVER", "udp"), local_ip=_env("SHOUTER_LOCAL_IP"),
              local_port=_env("SHOUTER_LOCAL_PORT", 0, int),
              window=_env("SHOUTER_WINDOW", 0, int), chunk=_env("SHOUTER_CHUNK", 0, int),
              timeout_ms=_env("SHOUTER_TIMEOUT_MS", 0, int),
              repro=bool(_env("SHOUTER_REPRO", 0, int)),
              secret_file=_env("SHOUTER_SECRET_FILE"),
              mac=bool(_env("SHOUTER_MAC", 0, int)),
              cc_target_us=_env("SHOUTER_CC_TARGET_US", None, _cc_target))
    eal = _env("SHOUTER_EAL_ARGS")
    if eal:
        kw["eal_args"] = eal.split()
    job = _env("SHOUTER_JOB", None, int) if _shouter_groups == 0 else None
    if job is None:
        if store is None:
            raise ValueError("shouter backend: SHOUTER_JOB is not set and there is no "
                             "rendezvous store to agree on a job id")
        if rank == 0:
            job = random.SystemRandom().randrange(1, 1 << 31)
            store.set(_STORE_KEY, str(job))
        else:
            try:
                job = int(store.get(_STORE_KEY))
            except RuntimeError as e:
                raise RuntimeError(f"shouter backend: rank {rank} got no job id from the "
                                   f"rendezvous store (rank 0 sets {_STORE_KEY}): {e}") from e
    _shouter_groups += 1
    kw["job"] = job
    return kw


def _config_failed():
    """The group config_from_env() was for was not made (the join failed): its place is
    given back, so that a retry of the first group reads SHOUTER_JOB again."""
    global _shouter_groups
    _shouter_groups -= 1


def _engine_env():
    """SHOUTER_ORDER and SHOUTER_OP_WAIT_S, checked (before anything is joined)."""
    order = _env("SHOUTER_ORDER", "priority")
    if order not in ("priority", "fifo"):
        raise ValueError(f"shouter backend: SHOUTER_ORDER={order!r}: priority or fifo")
    wait_s = _env("SHOUTER_OP_WAIT_S", 30.0, float)
    if not (math.isfinite(wait_s) and wait_s > 0):
        raise ValueError(f"shouter backend: SHOUTER_OP_WAIT_S={wait_s!r}: seconds, a finite "
                         "number above 0")
    return order, wait_s


# ---- the tensor table

class _Table:
    """Registered tensors: storage key -> (id, priority)."""

    def __init__(self):
        self.by_key = {}
        self.ids = {}

    @staticmethod
    def key(t):
        return (t.data_ptr(), t.numel(), t.dtype)

    def add(self, t, tensor_id, priority):
        if not 0 <= tensor_id < 0x4000_0000:
            raise ValueError(f"shouter: tensor id {tensor_id}: 0 to 2^30 - 1")
        k = self.key(t)
        old = self.ids.get(tensor_id)
        if old is not None and old != k:
            del self.by_key[old]
        self.by_key[k] = (tensor_id, priority)
        self.ids[tensor_id] = k

    def get(self, t):
        return self.by_key.get(self.key(t))


def _pg(group):
    g = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(g, ProcessGroupShouter):
        raise TypeError(f"shouter: {type(g).__name__} is not a shouter process group")
    return g


def register_tensor(tensor, tensor_id, priority=None, group=None):
    """Name tensor (its storage, size and dtype) as tensor_id (0 to 2^30 - 1) in group's table
    (default: the default group), with a priority (lower first; default -tensor_id: the
    last registered first). Every rank must register the same ids for the same tensors;
    a rank that does not is told so at its next collective on them (and the box aborts
    the job at every rank). Allreduces of registered tensors that wait together run by
    priority (SHOUTER_ORDER=priority)."""
    _pg(group)._table.add(tensor, tensor_id, -tensor_id if priority is None else priority)


def priority_hook(state, bucket):
    """DDP communication hook: allreduce (average) of each gradient bucket through the
    shouter group state (None: the default group), each bucket registered as tensor id =
    bucket index, priority -index (the layers nearest the input first).

        ddp.register_comm_hook(None, shouter.torch.priority_hook)
    """
    pg = _pg(state)
    buf = bucket.buffer()
    pg._table.add(buf, bucket.index(), -bucket.index())
    buf.div_(pg.size())
    return pg.allreduce([buf]).get_future().then(lambda f: f.value()[0])


# ---- Work

class _Work(dist.distributed_c10d.Work):
    """The Work of one operation: wait() blocks (GIL released) until the engine completes
    it and raises its error; get_future() is a torch Future that completes then (with an
    error, which DDP sees, when the operation failed). A Python subclass returned to C++
    (DDP, _broadcast_coalesced) keeps its Python methods only while the Python object lives:
    the group keeps every pending Work, and the last _KEEP completed ones, alive."""

    def __init__(self, pg, result):
        super().__init__()
        self._ev = threading.Event()
        self._result, self._error = result, None
        self._src = torch.futures.Future()
        self._fut = self._src.then(self._unwrap)
        self._callbacks = []
        self._pg = pg
        with _work_lock:
            pg._pending.add(self)

    def _unwrap(self, _):
        if self._error is not None:
            raise self._error
        return self._result

    def _complete(self, error=None):
        with _work_lock:
            self._error = error
            self._ev.set()
            cbs, self._callbacks = self._callbacks, None
            pg, self._pg = self._pg, None
            pg._pending.discard(self)
            pg._done.append(self)
        self._src.set_result(None)
        for cb in cbs:
            cb(self)

    def _on_complete(self, cb):
        with _work_lock:
            if self._callbacks is not None:
                self._callbacks.append(cb)
                return
        cb(self)

    def wait(self, timeout=None):
        if isinstance(timeout, datetime.timedelta):
            timeout = timeout.total_seconds()
        if not self._ev.wait(timeout or None):
            raise RuntimeError(f"shouter: operation not done after {timeout} s")
        if self._error is not None:
            raise self._error
        return True

    def get_future(self):
        return self._fut

    def is_completed(self):
        return self._ev.is_set()

    def is_success(self):
        return self._ev.is_set() and self._error is None

    def exception(self):
        return self._error

    def result(self):
        self.wait()
        return self._result


# ---- the process group

class ProcessGroupShouter(dist.ProcessGroup):
    """One shouter job (float32) and its engine thread. Made by the backend's creator
    (dist.init_process_group("shouter"), dist.new_group(backend="shouter"))."""

    def __init__(self, store, rank, size, timeout=None, *, comm=None, **comm_kw):
        super().__init__(rank, size)
        order, wait_s = _engine_env()
        if comm is None:
            kw = config_from_env(store, rank, size)
            kw.update(comm_kw)
            box = kw.pop("box")
            try:
                comm = shouter.Comm(box, **kw)
            except BaseException:
                _config_failed()
                raise
            self.job = kw["job"]
        else:                           # a communicator made elsewhere (tests)
            self.job = getattr(comm, "job", 0)
        self._comm = comm
        self._table = _Table()
        self._pending = set()
        self._done = collections.deque(maxlen=_KEEP)
        _groups.add(self)
        self._engine = Engine(self._comm, rank, size,
                              lambda: numpy.zeros(ANN_WORDS, dtype=numpy.int32),
                              order=order, wait_s=wait_s, name=f"shouter-job{self.job}")

    def getBackendName(self):
        return BACKEND

    def _get_backend_name(self):
        return BACKEND

    @property
    def comm(self):
        return self._comm

    @property
    def engine(self):
        return self._engine

    def shutdown(self, timeout=None):
        """Finish the queued collectives, stop the engine and leave the job."""
        if self._engine.close(timeout) and not self._comm.closed:
            self._comm.close()

    # ---- plumbing

    def _submit(self, kind, count, run, result, *, tensor=None, prio=FENCE, key=None,
                after=None):
        """Queue an operation; returns its Work. result: what the future gets; after():
        copies back, in the engine thread, once run succeeded."""
        work = _Work(self, result)

        def done(_):
            if after is not None:
                after()
            work._complete()

        def fail(e):
            if not isinstance(e, RuntimeError):     # shouter.Error: its C text
                err = RuntimeError(f"shouter: {e}")
                err.__cause__ = e
                e = err
            work._complete(e)

        if count == 0 and kind != "barrier":
            work._complete()
        else:
            self._engine.submit(Op(kind, count, run, done, fail, tensor=tensor, prio=prio,
                                   key=key))
        return work

    @staticmethod
    def _one(tensors, what):
        if len(tensors) != 1:
            raise ValueError(f"shouter: {what} takes one tensor per process ({len(tensors)} "
                             "given)")
        return _cpu(tensors[0], what)

    # ---- collectives

    def allreduce(self, tensors, opts=None):
        t = self._one(tensors, "allreduce")
        name = _red_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if not _check_red(t, name):
            return self._fallback_allreduce(t, tensors, name)
        reg = self._table.get(t)
        tid, prio = reg if reg is not None else (None, FENCE)
        buf = t if t.is_contiguous() else t.contiguous()
        world = self.size()

        def run(comm, step, tensor):
            comm.allreduce(buf, op="sum" if name == "avg" else name, step=step, tensor=tensor)
            if name == "avg":
                buf.div_(world)

        def after():
            if buf is not t:
                t.copy_(buf)

        return self._submit("allreduce", t.numel(), run, tensors, tensor=tid, prio=prio,
                            key=_Table.key(t), after=after)

    def allreduce_coalesced(self, tensors, opts=None):
        for t in tensors:
            _cpu(t, "allreduce_coalesced")
        if len({t.dtype for t in tensors}) > 1:
            raise ValueError("shouter: allreduce_coalesced: tensors of one dtype")
        flat = torch.cat([t.reshape(-1) for t in tensors]) if tensors else torch.zeros(0)
        work = self.allreduce([flat], opts)

        def unflatten():
            o = 0
            for t in tensors:
                t.copy_(flat[o:o + t.numel()].view_as(t))
                o += t.numel()
        return self._then(work, unflatten, tensors)

    def _then(self, work, fn, result):
        """A Work that completes with result once work did and fn() ran."""
        outer = _Work(self, result)

        def cb(w):
            if w._error is not None:
                outer._complete(w._error)
                return
            try:
                fn()
            except Exception as e:
                outer._complete(e)
                return
            outer._complete()
        work._on_complete(cb)
        return outer

    def _fallback_allreduce(self, t, tensors, name, root=None):
        """Reduce t through an allgather of its bytes (root None: everybody gets it)."""
        src = _Bytes(t)
        n = src.w.numel()
        world = self.size()
        out = torch.empty(world * n, dtype=torch.float32)

        def run(comm, step, tensor):
            comm.allgather(src.w, out, step=step, tensor=tensor)
            if root is None or root == self.rank():
                nb = t.numel() * t.element_size()
                b = out.view(torch.uint8).view(world, n * 4)
                blocks = [_from_u8(b[r, :nb], t) for r in range(world)]
                t.copy_(_local_reduce(blocks, name, t.dtype))

        return self._submit("allgather", n, run, tensors)

    def broadcast(self, tensors, opts=None):
        t = self._one(tensors, "broadcast")
        root = opts.rootRank if opts is not None else 0
        self._root(root)
        b = _Bytes(t)

        def run(comm, step, tensor):
            comm.broadcast(b.w, root=root, step=step, tensor=tensor)

        return self._submit("broadcast", b.w.numel(), run, tensors, after=b.finish)

    def _root(self, root):
        if not 0 <= root < self.size():
            raise ValueError(f"shouter: root {root} is not a rank of this group of "
                             f"{self.size()}")

    def allgather(self, output_tensors, input_tensors, opts=None):
        t = self._one(input_tensors, "allgather")
        if len(output_tensors) != 1 or len(output_tensors[0]) != self.size():
            raise ValueError(f"shouter: allgather: one list of {self.size()} output tensors")
        outs = output_tensors[0]
        for o in outs:
            _cpu(o, "allgather output")
            if o.dtype != t.dtype or o.numel() != t.numel():
                raise ValueError(f"shouter: allgather: every output like the input ({t.dtype}"
                                 f", {t.numel()} elements), not {o.dtype}, {o.numel()}")
        src = _Bytes(t)
        n = src.w.numel()
        world = self.size()
        out = torch.empty(world * n, dtype=torch.float32)
        nb = t.numel() * t.element_size()

        def run(comm, step, tensor):
            comm.allgather(src.w, out, step=step, tensor=tensor)

        def after():
            b = out.view(torch.uint8).view(world, n * 4)
            for r, o in enumerate(outs):
                o.copy_(_from_u8(b[r, :nb], o))

        return self._submit("allgather", n, run, output_tensors, after=after)

    def _allgather_base(self, output, input, opts=None):
        _cpu(output, "allgather output")
        _cpu(input, "allgather input")
        if output.dtype != input.dtype or output.numel() != input.numel() * self.size():
            raise ValueError("shouter: _allgather_base: output of world x input's elements, "
                             "same dtype")
        chunks = list(output.reshape(-1).chunk(self.size())) if input.numel() else []
        if not chunks:
            return self._submit("allgather", 0, None, output)
        return self._then(self.allgather([[c for c in chunks]], [input.reshape(-1)]),
                          lambda: None, output)

    def barrier(self, opts=None):
        def run(comm, step, tensor):
            comm.barrier()
        return self._submit("barrier", 1, run, [])

    def reduce(self, tensors, opts=None):
        t = self._one(tensors, "reduce")
        root = opts.rootRank if opts is not None else 0
        self._root(root)
        name = _red_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if not _check_red(t, name):
            return self._fallback_allreduce(t, tensors, name, root=root)
        buf = t if t.is_contiguous() else t.contiguous()
        me = self.rank()
        world = self.size()

        def run(comm, step, tensor):
            comm.reduce(buf, root=root, op="sum" if name == "avg" else name, step=step,
                        tensor=tensor)
            if name == "avg" and me == root:
                buf.div_(world)

        def after():
            if buf is not t and me == root:
                t.copy_(buf)

        return self._submit("reduce", t.numel(), run, tensors, after=after)

    def _flat_in(self, ins, like, what):
        if len(ins) != self.size():
            raise ValueError(f"shouter: {what}: {self.size()} input tensors, not {len(ins)}")
        for i in ins:
            _cpu(i, what)
            if i.dtype != like.dtype or i.numel() != like.numel():
                raise ValueError(f"shouter: {what}: every input like the output ({like.dtype},"
                                 f" {like.numel()} elements)")
        return torch.cat([i.reshape(-1) for i in ins])

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        out = self._one(output_tensors, "reduce_scatter")
        if len(input_tensors) != 1:
            raise ValueError("shouter: reduce_scatter: one list of input tensors")
        flat = self._flat_in(input_tensors[0], out, "reduce_scatter")
        return self._reduce_scatter_flat(out, flat, opts, output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):
        _cpu(output, "reduce_scatter output")
        _cpu(input, "reduce_scatter input")
        if input.dtype != output.dtype or input.numel() != output.numel() * self.size():
            raise ValueError("shouter: _reduce_scatter_base: input of world x output's "
                             "elements, same dtype")
        return self._reduce_scatter_flat(output, input.contiguous().reshape(-1), opts, output)

    def _reduce_scatter_flat(self, out, flat, opts, result):
        name = _red_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        world = self.size()
        if _check_red(out, name):
            buf = torch.empty(out.numel(), dtype=torch.float32)

            def run(comm, step, tensor):
                comm.reduce_scatter(flat, buf, op="sum" if name == "avg" else name,
                                    step=step, tensor=tensor)
                if name == "avg":
                    buf.div_(world)

            return self._submit("reduce_scatter", out.numel(), run, result,
                                after=lambda: out.copy_(buf.view_as(out)))
        # another dtype: an alltoall of the bytes, block r from rank r, reduced here
        nb = out.numel() * out.element_size()
        nw = (nb + 3) // 4
        src = torch.zeros(world * nw, dtype=torch.float32)
        sb = src.view(torch.uint8).view(world, nw * 4)
        fb = _u8(flat.contiguous()).view(world, nb)
        sb[:, :nb].copy_(fb)
        dst = torch.empty_like(src)

        def run2(comm, step, tensor):
            comm.alltoall(src, dst, step=step, tensor=tensor)
            db = dst.view(torch.uint8).view(world, nw * 4)
            blocks = [_from_u8(db[r, :nb], out) for r in range(world)]
            out.copy_(_local_reduce(blocks, name, out.dtype))

        return self._submit("alltoall", world * nw, run2, result)

    def gather(self, output_tensors, input_tensors, opts=None):
        t = self._one(input_tensors, "gather")
        root = opts.rootRank if opts is not None else 0
        self._root(root)
        me, world = self.rank(), self.size()
        if me == root:
            if len(output_tensors) != 1 or len(output_tensors[0]) != world:
                raise ValueError(f"shouter: gather: one list of {world} tensors at the root")
            outs = output_tensors[0]
            for o in outs:
                _cpu(o, "gather output")
                if o.dtype != t.dtype or o.numel() != t.numel():
                    raise ValueError("shouter: gather: every output like the input")
        src = _Bytes(t)
        n = src.w.numel()
        out = torch.empty(world * n, dtype=torch.float32) if me == root else None
        nb = t.numel() * t.element_size()

        def run(comm, step, tensor):
            comm.gather(src.w, out, root=root, step=step, tensor=tensor)

        def after():
            if out is not None:
                b = out.view(torch.uint8).view(world, n * 4)
                for r, o in enumerate(outs):
                    o.copy_(_from_u8(b[r, :nb], o))

        return self._submit("gather", n, run, output_tensors, after=after)

    def scatter(self, output_tensors, input_tensors, opts=None):
        t = self._one(output_tensors, "scatter")
        root = opts.rootRank if opts is not None else 0
        self._root(root)
        me, world = self.rank(), self.size()
        dst = _Bytes(t, copy_in=False)
        n = dst.w.numel()
        nb = t.numel() * t.element_size()
        inp = None
        if me == root:
            if len(input_tensors) != 1 or len(input_tensors[0]) != world:
                raise ValueError(f"shouter: scatter: one list of {world} tensors at the root")
            inp = torch.zeros(world * n, dtype=torch.float32)
            ib = inp.view(torch.uint8).view(world, n * 4)
            for r, i in enumerate(input_tensors[0]):
                _cpu(i, "scatter input")
                if i.dtype != t.dtype or i.numel() != t.numel():
                    raise ValueError("shouter: scatter: every input like the output")
                ib[r, :nb].copy_(_u8(i.contiguous()))

        def run(comm, step, tensor):
            comm.scatter(inp, dst.w, root=root, step=step, tensor=tensor)

        return self._submit("scatter", n, run, output_tensors, after=dst.finish)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        world = self.size()
        if len(output_tensors) != world or len(input_tensors) != world:
            raise ValueError(f"shouter: alltoall: {world} input and output tensors")
        like = _cpu(input_tensors[0], "alltoall input")
        for x in list(output_tensors) + list(input_tensors):
            _cpu(x, "alltoall")
            if x.dtype != like.dtype or x.numel() != like.numel():
                raise ValueError("shouter: alltoall: tensors of one dtype and size only "
                                 "(uneven splits are not supported)")
        nb = like.numel() * like.element_size()
        nw = (nb + 3) // 4
        src = torch.zeros(world * nw, dtype=torch.float32)
        sb = src.view(torch.uint8).view(world, nw * 4)
        for r, i in enumerate(input_tensors):
            sb[r, :nb].copy_(_u8(i.contiguous()))
        dst = torch.empty_like(src)

        def run(comm, step, tensor):
            comm.alltoall(src, dst, step=step, tensor=tensor)

        def after():
            db = dst.view(torch.uint8).view(world, nw * 4)
            for r, o in enumerate(output_tensors):
                o.copy_(_from_u8(db[r, :nb], o))

        return self._submit("alltoall", world * nw, run, output_tensors, after=after)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        world = self.size()
        if output_split_sizes or input_split_sizes:
            if len(set(output_split_sizes) | set(input_split_sizes)) > 1:
                raise ValueError("shouter: alltoall_single: equal splits only")
        _cpu(output, "alltoall output")
        _cpu(input, "alltoall input")
        if input.numel() % world or output.numel() != input.numel() or \
                output.dtype != input.dtype:
            raise ValueError("shouter: alltoall_single: input and output of the same size, "
                             "a multiple of the world size, and dtype")
        return self._then(self.alltoall(list(output.reshape(-1).chunk(world)),
                                        list(input.reshape(-1).chunk(world))),
                          lambda: None, output)

    def send(self, tensors, dst, tag=0):
        raise RuntimeError("shouter: send/recv (point to point) is not supported: the box "
                           "runs collectives")

    def recv(self, tensors, src, tag=0):
        self.send(tensors, src, tag)

    def recv_anysource(self, tensors, tag=0):
        self.send(tensors, -1, tag)


@atexit.register
def _shutdown_all():
    for g in list(_groups):
        try:
            g.shutdown(timeout=10)
        except Exception:               # exiting: a failed LEAVE changes nothing
            pass


def _create(store, rank, size, timeout):
    return ProcessGroupShouter(store, rank, size, timeout)


if BACKEND.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND, _create)
