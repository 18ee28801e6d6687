# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""shouter: allreduce and the other collectives through a shouter aggregation box.

A binding of the C API (lib/comm/shr_comm.h, through lib/shard/shr_shard.h) as a CPython
extension module (shouter._shouter). Buffers are numpy arrays (or anything with the buffer
protocol) and CPU torch tensors, C-contiguous; they are read and written in place, never
copied. Every blocking call releases the GIL.

    import shouter
    c = shouter.Comm("198.18.0.1", job=7, rank=r, world=4, dtype="float32")
    c.allreduce(x)                       # in place; or c.allreduce(x, out=y)
    c.broadcast(x, root=0, step=3)       # step / tensor: the call's identity
    c.close()                            # or: with shouter.Comm(...) as c:

A list of boxes shards the job over them (lib/shard): each box sums a share of every call,
every rank lists the same boxes in the same order (udp driver only):

    c = shouter.Comm(["198.18.0.1", "198.18.0.2"], job=7, rank=r, world=4)

The seed's API works on a module-level communicator:

    shouter.init(["198.18.0.1", "198.18.0.2"], job=7, rank=r, world=4)   # or one box
    shouter.broadcast(params, step=0)
    shouter.allreduce(grads, step=1)
    shouter.finalize()

Element types: a summed collective (allreduce, reduce, reduce_scatter) takes buffers of the
job's type (float32 job: float32; int32: int32; float16: float16; bfloat16: torch.bfloat16
or numpy uint16 holding bfloat16 bits; qint32: float32 in and out). The relays (broadcast,
allgather, gather, scatter, alltoall) carry bytes: any buffer whose size is a whole number
of the job's elements. Checks fail before anything is sent: TypeError (wrong type, not a
buffer, a GPU tensor), ValueError (not contiguous, read-only output, sizes). A failure of
the C API raises shouter.Error (errno, strerror: the C text, abort: the box's abort fields).

One Comm is used by one thread at a time: a second thread entering it while a call runs
gets RuntimeError.
"""

from ._shouter import DEFAULT_PORT, Error
from ._shouter import Comm as _CComm

__all__ = ["Comm", "Error", "DEFAULT_PORT", "DTYPES", "init", "broadcast", "allreduce",
           "finalize", "default_comm"]

DTYPES = ("float32", "int32", "float16", "bfloat16", "qint32")


class Comm(_CComm):
    """One rank of one job.

    Comm(box, *, job, rank, world, dtype="float32", port=None, driver="udp",
         local_ip=None, local_port=0, window=0, chunk=0, timeout_ms=0, repro=False,
         secret_file=None, eal_args=None, tree_rank=0, tree_world=0, no_group=False,
         cc_target_us=None)

    box: the aggregator's IPv4 address, or a list of them: the job sharded over those boxes
    (lib/shard: each sums a share of every call; every rank lists them in the same order;
    a box listed twice, or the dpdk driver with several, is a ValueError); port: its base
    UDP port (default DEFAULT_PORT), or a list, one per box (None: the default); driver
    "udp" (kernel socket) or "dpdk" (one box only; then local_ip and eal_args); window: chunks
    in flight (0: the C default, 128; the box is asked for as many more slots, spare
    ones, so that a lost chunk's slot does not hold up the stream); chunk: elements per
    chunk (0: the largest the path carries); local_port: bind to this UDP port (box j of
    several: local_port + j);
    timeout_ms: fail a join or a stalled call after this long (0: 10 s); repro: a
    reproducible job; secret_file: the job's secret; tree_rank, tree_world: this rank's
    place in a tree of boxes (box a leaf, shouter-agg --upstream; C shr_comm_params): the
    collectives then take tree ranks (root, blocks and their number are the tree's; rank and
    world stay the job's at this rank's box), allreduce needs none; tree_rank >= tree_world,
    or a tree_rank without tree_world, is a ValueError; no_group: do not offer the box to
    receive the results at its result group (shouter-agg --result-group; offered by
    default); cc_target_us: the congestion control's queueing delay target in microseconds
    (None: the default, 1000; "off": none, the whole window from the start; anything else
    but 1..1000000 is a ValueError): raise it where ranks share cores (their hosts'
    scheduling shows in their round trips), at the cost of fairness between jobs that share
    a bottleneck; mac: the job uses the per-job message authentication code (the box's job
    has mac = 1; needs secret_file, else a ValueError). Joining blocks until every rank has
    joined (or timeout_ms), at every box in turn.

    Attributes (what the join settled): job rank world tree_rank tree_world dtype window
    chunk lanes local_port closed boxes (("ip:port", ...)). With several boxes window, chunk
    and lanes are the smallest any box granted, local_port the first box's; info() has each
    box's.
    A box that fails (aborts the job, goes silent) fails the call at every rank with an
    Error whose text names it ("box 2 of 2 (198.18.0.2:47000): ..."); the job is then over
    at every box.

    Collectives (each returns None; step and tensor name the call's identity, see
    shr_comm_ident_set(): step None keeps the current step, tensor None the automatic id):
      allreduce(buf, out=None, *, op="sum", step=None, tensor=None)
      reduce(buf, out=None, *, root, op="sum", step=None, tensor=None)
      reduce_scatter(inp, out, *, op="sum", step=None, tensor=None)
      broadcast(buf, *, root=0, step=None, tensor=None)
      allgather(inp, out, *, step=None, tensor=None)
      gather(inp, out, *, root, step=None, tensor=None)
      scatter(inp, out, *, root, step=None, tensor=None)
      alltoall(inp, out, *, step=None, tensor=None)
      barrier()
    and ident() -> (step, tensor), close(),
      stats() -> dict: the counters summed over the boxes (srtt_ns, rto_ns, qdelay_ns,
          box_wait_ns, host_delay_ns: the largest; min_rtt_ns: the smallest; cwnd: the congestion windows
          summed), and "boxes": a list of the same dict per box
      info() -> list, one dict per box: box ("ip:port"), window, slots (granted), chunk,
          lanes, local_port, driver, group (the result group "A.B.C.D:PORT", or None)
    """

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<shouter.Comm closed>"
        boxes = f" boxes={','.join(self.boxes)}" if len(self.boxes) > 1 else ""
        return (f"<shouter.Comm job={self.job} rank={self.rank}/{self.world} "
                f"dtype={self.dtype} window={self.window} chunk={self.chunk}{boxes}>")


_default = None


def init(iplist, ports=None, channel_num=None, *, job, rank, world, dtype="float32", **kw):
    """The seed's init: join job on the boxes of iplist (an address, or a list: the job
    sharded over them, in that order at every rank).

    ports: the boxes' base UDP port (None: DEFAULT_PORT; an int: every box's; a list of
    the same length as iplist); channel_num: chunks in flight (the window). Other keywords
    go to Comm. Makes the module's default communicator.
    """
    global _default
    if _default is not None:
        raise RuntimeError("shouter.init() called twice (shouter.finalize() first)")
    if isinstance(iplist, (list, tuple)):
        iplist = list(iplist)
        if isinstance(ports, (list, tuple)) and len(ports) != len(iplist):
            raise ValueError(f"ports: {len(ports)} ports for {len(iplist)} boxes in iplist")
        if len(iplist) == 1:        # one box: as Comm("ip") (and a port list of one)
            iplist = iplist[0]
            ports = ports[0] if isinstance(ports, (list, tuple)) else ports
    _default = Comm(iplist, job=job, rank=rank, world=world, dtype=dtype, port=ports,
                    window=channel_num or 0, **kw)
    return _default


def default_comm():
    """The communicator of shouter.init()."""
    if _default is None:
        raise RuntimeError("shouter.init() has not been called")
    return _default


def broadcast(tensor, step=None, root=0):
    """The seed's broadcast: tensor (in place) gets root's."""
    default_comm().broadcast(tensor, root=root, step=step)


def allreduce(tensor, step=None, op="sum"):
    """The seed's allreduce: tensor (in place) becomes the sum over the ranks."""
    default_comm().allreduce(tensor, op=op, step=step)


def finalize():
    """Leave the job of shouter.init() (no-op if none)."""
    global _default
    c, _default = _default, None
    if c is not None:
        c.close()
