# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""A DDP communication hook that sends the gradient buckets through a shouter box.

For users who keep Gloo (or NCCL) as their process group: DDP's initial broadcast, its shape
checks and everything else the program does stay on that group, and only the gradient
allreduce goes through the box::

    import shouter.hook
    dist.init_process_group("gloo")
    ddp = DistributedDataParallel(model)
    state = shouter.hook.HookState("198.18.0.1", job=7, rank=rank, world=world)
    ddp.register_comm_hook(state, shouter.hook.allreduce_hook)
    ... train ...
    state.close()

HookState starts a background thread that joins the job (a shouter.Comm of float32, the only
thread that ever uses it) and then runs the buckets' allreduces in the order the hook hands
them over, which is the order DDP launches buckets in, the same at every rank. The hook
divides the bucket by the world size (as DDP's default hook does, before the sum), queues it
and returns a torch.futures.Future that the thread completes with the summed bucket, in
place; the autograd thread goes on with the backward pass meanwhile. Each call carries the
identity (step, tensor) = (the hook's step count, the bucket's index), so the box aborts the
job, and every later future fails with the shouter.Error naming the ranks, when ranks disagree
about which bucket of which step they send. An error fails that bucket's future and every
later one (DDP raises it from backward()).

HookState.from_env() reads the job from the environment as the shouter backend does
(SHOUTER_BOX=ip[:port], SHOUTER_JOB, ...: shouter.torch); without SHOUTER_JOB, rank 0 draws a
job id and broadcasts it over the process group.
"""

import queue
import threading

import torch

__all__ = ["HookState", "allreduce_hook"]


class HookState:
    """The hook's communicator and its thread.

    Args:
        box: the box's address (as shouter.Comm takes it).
        job, rank, world: the job; rank and world are normally the process group's.
        comm: a shouter.Comm already joined, to use instead of creating one (float32 or
            qint32); from then on only the hook's thread may use it, and close() closes it.
        **comm_kw: further shouter.Comm arguments (port, driver, local_ip, window, chunk,
            timeout_ms, repro, secret_file ...; dtype "float32", the default, or "qint32").

    Raises whatever shouter.Comm raises when the join fails.
    """

    def __init__(self, box=None, *, job=None, rank=None, world=None, comm=None, **comm_kw):
        if comm is None and (box is None or job is None or rank is None or world is None):
            raise ValueError("HookState: box, job, rank and world are needed (or comm)")
        self.step = 0
        self.calls = 0
        self._q = queue.SimpleQueue()
        self._error = None
        self._ready = threading.Event()
        self._comm = comm
        dtype = comm_kw.setdefault("dtype", "float32")
        if dtype not in ("float32", "qint32"):
            raise ValueError(f"HookState: dtype {dtype!r}: DDP's buckets are float32 (a "
                             "float32 job, or qint32: SwitchML's quantised floats)")
        self._args = (box, dict(comm_kw, job=job, rank=rank, world=world))
        self._thread = threading.Thread(target=self._run, name="shouter-hook", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._comm is None:
            self._thread.join()
            raise self._error
        self.world = self._comm.world
        self.rank = self._comm.rank

    @classmethod
    def from_env(cls, *, group=None, **comm_kw):
        """A HookState for the job the environment names, as the shouter backend reads it
        (shouter.torch.config_from_env: SHOUTER_BOX=ip[:port], SHOUTER_JOB, SHOUTER_DRIVER,
        SHOUTER_LOCAL_IP, SHOUTER_WINDOW, SHOUTER_CHUNK, SHOUTER_TIMEOUT_MS, ...).

        The rank and the world are group's (default: the default process group). Without
        SHOUTER_JOB, rank 0 draws a job id and broadcasts it over group: a collective, every
        rank of group must call from_env. comm_kw overrides what the environment says.
        """
        import torch.distributed as dist
        from shouter.torch import config_from_env

        rank = dist.get_rank(group)
        world = dist.get_world_size(group)
        kw = config_from_env(_BcastStore(group), rank, world)
        kw.update(comm_kw)
        return cls(kw.pop("box"), **kw)

    def _run(self):
        if self._comm is None:
            try:
                import shouter
                box, kw = self._args
                self._comm = shouter.Comm(box, **kw)
            except BaseException as e:  # handed to the constructor
                self._error = e
                self._ready.set()
                return
        self._ready.set()
        comm = self._comm
        while True:
            item = self._q.get()
            if item is None:
                break
            buf, fut, step, tensor = item
            if self._error is None:
                try:
                    comm.allreduce(buf, step=step, tensor=tensor)
                except BaseException as e:
                    self._error = e
            if self._error is None:
                fut.set_result(buf)
            else:
                fut.set_exception(self._error)
        try:
            comm.close()
        except Exception as e:  # the job is over either way; say why it did not end cleanly
            if self._error is None:
                self._error = e

    def submit(self, buf, step, tensor):
        """Queue an in-place float32 allreduce of buf; a Future of buf, summed."""
        if not self._thread.is_alive():
            raise RuntimeError("shouter.hook: the hook's thread has stopped (closed?)")
        fut = torch.futures.Future()
        self.calls += 1
        self._q.put((buf, fut, step, tensor))
        return fut

    def close(self):
        """Finish what is queued, leave the job, stop the thread (idempotent)."""
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _BcastStore:
    """What config_from_env needs of a store (rank 0 sets the job id, the others get it),
    as one broadcast over a process group."""

    def __init__(self, group):
        self.group = group

    def _bcast(self, v):
        import torch.distributed as dist

        t = torch.tensor([v], dtype=torch.int64)
        dist.broadcast(t, 0, group=self.group)
        return int(t.item())

    def set(self, key, value):
        self._bcast(int(value))

    def get(self, key):
        return str(self._bcast(0))


def allreduce_hook(state, bucket):
    """DDP communication hook: the bucket's mean over the ranks, summed by the box.

    Register with ddp_model.register_comm_hook(state, allreduce_hook), state a HookState.
    Returns a torch.futures.Future completed by the hook's thread with the bucket's buffer.
    """
    buf = bucket.buffer()
    if buf.dtype != torch.float32:
        raise TypeError(f"shouter.hook: bucket of {buf.dtype}, only float32 is supported")
    buf.div_(state.world)
    fut = state.submit(buf, state.step, bucket.index())
    if bucket.is_last():
        state.step += 1
    return fut
