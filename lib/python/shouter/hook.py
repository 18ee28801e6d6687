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

HookState joins the job (a shouter.Comm of float32) and hands it to an engine thread
(shouter._engine.Engine in queue order, as the backend's SHOUTER_ORDER=fifo; from then on the
only thread that uses it), which runs the buckets' allreduces in the order the hook hands
them over, which is the order DDP launches buckets in, the same at every rank. The hook
divides the bucket by the world size (as DDP's default hook does, before the sum), queues it
and returns a torch.futures.Future that the thread completes with the summed bucket, in
place; the autograd thread goes on with the backward pass meanwhile. Each call carries the
identity (step, tensor) = (the hook's step count, the bucket's index), so the box aborts the
job, and every later future fails with the shouter.Error naming the ranks, when ranks disagree
about which bucket of which step they send. An error fails that bucket's future and every
later one (DDP raises it from backward()).

HookState.from_env() reads the job from the environment as the shouter backend does
(SHOUTER_BOX=ip[:port], or ip[:port],ip[:port],... to shard the job over several boxes,
SHOUTER_JOB, ...: shouter.torch); without SHOUTER_JOB, rank 0 draws a job id and broadcasts
it over the process group.
"""

import torch

from ._engine import Engine, Op

__all__ = ["HookState", "allreduce_hook"]


class HookState:
    """The hook's communicator and its engine thread.

    Args:
        box: the box's address, or a list of boxes to shard over (as shouter.Comm takes it).
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
        dtype = comm_kw.setdefault("dtype", "float32")
        if dtype not in ("float32", "qint32"):
            raise ValueError(f"HookState: dtype {dtype!r}: DDP's buckets are float32 (a "
                             "float32 job, or qint32: SwitchML's quantised floats)")
        if comm is None:
            import shouter
            comm = shouter.Comm(box, **dict(comm_kw, job=job, rank=rank, world=world))
        self.step = 0
        self.calls = 0
        self._comm = comm
        self.world = comm.world
        self.rank = comm.rank
        self._engine = Engine(comm, comm.rank, comm.world, None, order="fifo",
                              name="shouter-hook")

    @classmethod
    def from_env(cls, *, group=None, **comm_kw):
        """A HookState for the job the environment names, as the shouter backend reads it
        (shouter.torch.config_from_env: SHOUTER_BOX=ip[:port][,ip[:port]...], SHOUTER_JOB,
        SHOUTER_DRIVER, SHOUTER_LOCAL_IP, SHOUTER_WINDOW, SHOUTER_CHUNK, SHOUTER_TIMEOUT_MS,
        ...).

        The rank and the world are group's (default: the default process group). Without
        SHOUTER_JOB, rank 0 draws a job id and broadcasts it over group: a collective, every
        rank of group must call from_env. comm_kw overrides what the environment says.
        """
        import torch.distributed as dist
        from shouter.torch import config_from_env, _config_failed

        rank = dist.get_rank(group)
        world = dist.get_world_size(group)
        kw = config_from_env(_BcastStore(group), rank, world)
        kw.update(comm_kw)
        try:
            return cls(kw.pop("box"), **kw)
        except BaseException:
            _config_failed()    # a retry reads SHOUTER_JOB again
            raise

    def submit(self, buf, step, tensor):
        """Queue an in-place float32 allreduce of buf; a Future of buf, summed. After an
        error, this and every later Future fail with it."""
        fut = torch.futures.Future()
        self.calls += 1
        self._engine.submit(Op("allreduce", buf.numel(),
                               lambda comm, _s, _t: comm.allreduce(buf, step=step,
                                                                   tensor=tensor),
                               lambda _r: fut.set_result(buf), fut.set_exception))
        return fut

    def close(self):
        """Finish what is queued, leave the job, stop the thread (idempotent)."""
        if self._comm is not None:
            self._engine.close()
            comm, self._comm = self._comm, None
            comm.close()

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
