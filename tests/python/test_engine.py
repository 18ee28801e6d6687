# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The torch backend's engine (shouter._engine) and process group (shouter.torch) on an
in-process fake communicator (fake_comm.py: N ranks as N threads, identities compared as
the box does): order, priority, agreement, errors. No box, no root; runs anywhere."""

import threading

import numpy as np
import pytest

from fake_comm import FakeError, Hub
from shouter._engine import ANN_TENSOR, ANN_WORDS, FENCE, Engine, EngineFailed, Op


def ann():
    return np.zeros(ANN_WORDS, np.int32)


def threads(world, fn, timeout=30):
    """fn(rank) in world threads; returns the results (an exception for a rank that raised)."""
    res = [None] * world

    def one(r):
        try:
            res[r] = fn(r)
        except BaseException as e:          # noqa: B902 (the test looks at it)
            res[r] = e
    ts = [threading.Thread(target=one, args=(r,)) for r in range(world)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
        assert not t.is_alive(), "a rank thread hangs"
    return res


class Result:
    def __init__(self):
        self.ev = threading.Event()
        self.value = self.error = None

    def done(self, v):
        self.value = v
        self.ev.set()

    def fail(self, e):
        self.error = e
        self.ev.set()

    def get(self, timeout=20):
        assert self.ev.wait(timeout), "operation never completed"
        if self.error is not None:
            raise self.error
        return self.value


def allreduce_op(buf, tensor=None, prio=FENCE, gate=None):
    r = Result()

    def run(comm, step, tid):
        if gate is not None:
            assert gate.wait(20)
        comm.allreduce(buf, step=step, tensor=tid)
        return buf
    return Op("allreduce", buf.size, run, r.done, r.fail, tensor=tensor, prio=prio,
              key=id(buf)), r


def data_calls(comm):
    """The communicator's calls other than announcements: (kind, tensor id, count)."""
    return [(c[0], c[3], c[4]) for c in comm.calls if c[3] != ANN_TENSOR]


@pytest.mark.parametrize("order", ["fifo", "priority"])
@pytest.mark.parametrize("world", [1, 2, 3])
def test_sums_and_same_calls(order, world):
    hub = Hub(world)
    comms = [hub.comm(r) for r in range(world)]

    def rank(r):
        eng = Engine(comms[r], r, world, ann, order=order)
        rs = []
        for i in range(20):
            op, res = allreduce_op(np.full(5 + i, r + i, np.float32))
            eng.submit(op)
            rs.append(res)
        out = [res.get() for res in rs]
        assert eng.close(10)
        return out, comms[r].threads
    res = threads(world, rank)
    for r in range(world):
        out, thr = res[r]
        assert len(thr) == 1                    # one engine thread called the comm
        for i, o in enumerate(out):
            assert (o == sum(q + i for q in range(world))).all()
    assert all(data_calls(c) == data_calls(comms[0]) for c in comms)
    assert [c[0] for c in data_calls(comms[0])] == ["allreduce"] * 20
    # unregistered operations are fences: they run in order without an announcement
    assert all(len(c.calls) == 20 for c in comms)


def test_priority_reorders_waiting_ops_identically():
    """A gate keeps the engines busy until every rank has queued 6 registered allreduces;
    rank 0 then sees all of them waiting and runs them by priority (lower first), and so
    does every rank; the fence queued after them runs last."""
    world = 3
    hub = Hub(world)
    comms = [hub.comm(r) for r in range(world)]
    prios = [5, 3, 9, 0, 7, 1]
    gates = [threading.Event() for _ in range(world)]

    def rank(r):
        eng = Engine(comms[r], r, world, ann, order="priority")
        op, first = allreduce_op(np.ones(1, np.float32), gate=gates[r])
        eng.submit(op)
        rs = []
        for i, p in enumerate(prios):
            op, res = allreduce_op(np.full(10 + i, 1.0, np.float32), tensor=i, prio=p)
            eng.submit(op)
            rs.append(res)
        op, fence = allreduce_op(np.ones(2, np.float32))
        eng.submit(op)
        gates[r].set()
        first.get()
        [res.get() for res in rs]
        fence.get()
        eng.close(10)
        return eng.stats
    stats = threads(world, rank)
    want = [i for _, i in sorted((p, i) for i, p in enumerate(prios))]
    for c in comms:
        got = [t for k, t, n in data_calls(c)][1:-1]
        assert got == want, got
    assert stats[0]["reordered"] == 1


def test_priority_disagreeing_rank_fails_clearly():
    """Rank 1 names its tensors in another order (its table differs): it fails naming both
    sides, and the box (here the hub) aborts the job at the others: no hang, no sum."""
    world = 2
    hub = Hub(world)
    comms = [hub.comm(r) for r in range(world)]

    def rank(r):
        eng = Engine(comms[r], r, world, ann, order="priority")
        ids = [0, 1] if r == 0 else [1, 0]
        rs = []
        for i in ids:
            op, res = allreduce_op(np.full(8, 1.0, np.float32), tensor=i, prio=0)
            eng.submit(op)
            rs.append(res)
        errs = []
        for res in rs:
            with pytest.raises(Exception) as ei:
                res.get()
            errs.append(ei.value)
        eng.close(10)
        return errs
    errs = threads(world, rank)
    assert isinstance(errs[1][0], EngineFailed)
    assert "disagree on operation #0" in str(errs[1][0])
    assert "tensor 0" in str(errs[1][0]) and "tensor 1" in str(errs[1][0])
    assert isinstance(errs[0][0], FakeError) and "different collectives" in str(errs[0][0])
    assert all("earlier" in str(e[1]) for e in errs)
    assert not [k for k in hub.log if k[1][0] == "allreduce"]       # no sum went out


def test_priority_missing_op_times_out_clearly():
    world = 2
    hub = Hub(world, timeout=5)
    comms = [hub.comm(r) for r in range(world)]
    gates = [threading.Event() for _ in range(world)]

    def rank(r):
        eng = Engine(comms[r], r, world, ann, order="priority", wait_s=0.5)
        op, first = allreduce_op(np.ones(1, np.float32), gate=gates[r])
        eng.submit(op)
        mine = []
        for i in range(2 if r == 0 else 1):
            op, res = allreduce_op(np.ones(4, np.float32), tensor=i, prio=i)
            eng.submit(op)
            mine.append(res)
        gates[r].set()
        first.get()
        errs = []
        for res in mine:
            try:
                res.get()
                errs.append(None)
            except Exception as e:
                errs.append(e)
        eng.close(10)
        return errs, eng.failed
    res = threads(world, rank)
    assert res[1][0] == [None]                  # rank 1's own op ran
    msg = str(res[1][1])
    assert "rank 0 runs operation #2" in msg and "had not queued it" in msg, msg
    assert res[0][0][0] is None and isinstance(res[0][0][1], FakeError)     # timed out


def test_failure_fails_later_ops_at_once():
    world = 2
    hub = Hub(world, timeout=3)
    comms = [hub.comm(r) for r in range(world)]

    def rank(r):
        eng = Engine(comms[r], r, world, ann, order="fifo")
        if r == 1:
            eng.close()
            return None
        op, res = allreduce_op(np.ones(4, np.float32))
        eng.submit(op)
        with pytest.raises(FakeError):
            res.get()
        op, res2 = allreduce_op(np.ones(4, np.float32))
        eng.submit(op)
        with pytest.raises(EngineFailed, match="failed earlier"):
            res2.get(1)
        return True
    assert threads(world, rank)[0] is True
