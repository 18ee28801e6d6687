# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The torch backend's process group (shouter.torch) on the in-process fake communicator:
N ranks as N threads of this process, each with its own ProcessGroupShouter; every
collective and dtype path, Work/futures, errors, and DDP (explicit process_group) against a
single-process reference. No box."""

import threading

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist    # noqa: E402
import shouter.torch as st           # noqa: E402
from fake_comm import Hub           # noqa: E402
from test_engine import threads     # noqa: E402


def groups(world, order="priority"):
    hub = Hub(world)
    import os
    os.environ["SHOUTER_ORDER"] = order
    return hub, [st.ProcessGroupShouter(None, r, world, comm=hub.comm(r))
                 for r in range(world)]


def opts(cls, **kw):
    o = cls()
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def test_registered():
    assert "SHOUTER" in dist.Backend._plugins


@pytest.mark.parametrize("order", ["fifo", "priority"])
def test_collectives(order):
    world = 3
    hub, pgs = groups(world, order)

    def rank(r):
        pg = pgs[r]
        out = {}
        t = torch.arange(10, dtype=torch.float32) + r
        pg.allreduce([t]).wait()
        out["sum"] = t
        t = torch.arange(10, dtype=torch.float32) * (r + 1)
        pg.allreduce([t], opts(dist.AllreduceOptions, reduceOp=dist.ReduceOp.MAX)).wait()
        out["max"] = t
        t = torch.full((4,), float(r))
        pg.allreduce([t], opts(dist.AllreduceOptions, reduceOp=dist.ReduceOp.AVG)).wait()
        out["avg"] = t
        t = torch.tensor([1 << 40, -r, 7], dtype=torch.int64) * (r + 1)
        pg.allreduce([t]).wait()                        # int64: allgather + local sum
        out["i64"] = t
        t = torch.tensor([r == 1, False, True])
        pg.allreduce([t]).wait()                        # bool: 3 bytes, padded
        out["bool"] = t
        t = torch.tensor([0b1100 | r], dtype=torch.int32)
        pg.allreduce([t], opts(dist.AllreduceOptions, reduceOp=dist.ReduceOp.BOR)).wait()
        out["bor"] = t
        t = torch.full((3, 3), float(r), dtype=torch.float64)
        pg.broadcast([t], opts(dist.BroadcastOptions, rootRank=2)).wait()
        out["bcast64"] = t
        t = torch.arange(5, dtype=torch.int16) + 10 * r    # 10 bytes
        outs = [torch.empty(5, dtype=torch.int16) for _ in range(world)]
        pg.allgather([outs], [t]).wait()
        out["gather16"] = torch.stack(outs)
        o = torch.empty(2)
        ins = [torch.full((2,), float(r * 10 + q)) for q in range(world)]
        pg.reduce_scatter([o], [ins]).wait()
        out["rs"] = o
        o = torch.empty(2, dtype=torch.int64)
        ins = [torch.full((2,), r * 10 + q, dtype=torch.int64) for q in range(world)]
        pg.reduce_scatter([o], [ins]).wait()
        out["rs64"] = o
        t = torch.tensor([float(r)])
        pg.reduce([t], opts(dist.ReduceOptions, rootRank=1)).wait()
        out["reduce"] = t
        g = [torch.empty(2) for _ in range(world)] if r == 0 else []
        pg.gather([g] if r == 0 else [], [torch.full((2,), float(r))],
                  opts(dist.GatherOptions, rootRank=0)).wait()
        out["gather"] = g
        o = torch.empty(1, dtype=torch.int64)
        pg.scatter([o], [[torch.tensor([q * 3], dtype=torch.int64) for q in range(world)]]
                   if r == 1 else [], opts(dist.ScatterOptions, rootRank=1)).wait()
        out["scatter"] = o
        outs = [torch.empty(2) for _ in range(world)]
        pg.alltoall(outs, [torch.full((2,), float(r * 10 + q)) for q in range(world)],
                    dist.AllToAllOptions()).wait()
        out["a2a"] = torch.stack(outs)
        pg.barrier().wait()
        ot = torch.empty(world * 2)
        pg._allgather_base(ot, torch.full((2,), float(r))).wait()
        out["agbase"] = ot
        a, b = torch.ones(3) * r, torch.ones(2) * (r + 1)
        pg.allreduce_coalesced([a, b]).wait()
        out["coal"] = (a, b)
        nc = torch.arange(12, dtype=torch.float32).reshape(3, 4).t() * (r + 1)  # not contig.
        pg.allreduce([nc]).wait()
        out["noncontig"] = nc
        pg.shutdown()
        return out
    res = threads(world, rank)
    for r, o in enumerate(res):
        assert not isinstance(o, BaseException), o
        W = world
        assert torch.equal(o["sum"], torch.arange(10.) * W + sum(range(W)))
        assert torch.equal(o["max"], torch.arange(10.) * W)
        assert torch.allclose(o["avg"], torch.full((4,), sum(range(W)) / W))
        want = sum(torch.tensor([1 << 40, -q, 7]) * (q + 1) for q in range(W))
        assert torch.equal(o["i64"], want)
        assert o["bool"].tolist() == [True, False, True]
        assert o["bor"].item() == 0b1111
        assert torch.equal(o["bcast64"], torch.full((3, 3), 2., dtype=torch.float64))
        assert torch.equal(o["gather16"], torch.stack([torch.arange(5, dtype=torch.int16)
                                                       + 10 * q for q in range(W)]))
        assert torch.equal(o["rs"], torch.full((2,), float(sum(q * 10 + r for q in range(W)))))
        assert o["rs64"].tolist() == [sum(q * 10 + r for q in range(W))] * 2
        assert o["reduce"].item() == (sum(range(W)) if r == 1 else r)
        if r == 0:
            assert [g.tolist() for g in o["gather"]] == [[float(q)] * 2 for q in range(W)]
        assert o["scatter"].item() == r * 3
        assert torch.equal(o["a2a"], torch.stack([torch.full((2,), float(q * 10 + r))
                                                  for q in range(W)]))
        assert o["agbase"].tolist() == sum([[float(q)] * 2 for q in range(W)], [])
        assert o["coal"][0].tolist() == [float(sum(range(W)))] * 3
        assert o["coal"][1].tolist() == [float(sum(q + 1 for q in range(W)))] * 2
        ref = torch.arange(12, dtype=torch.float32).reshape(3, 4).t() * sum(range(1, W + 1))
        assert torch.equal(o["noncontig"], ref)


def test_errors_are_clear():
    hub, pgs = groups(1)
    pg = pgs[0]
    with pytest.raises(ValueError, match="AVG of torch.int64"):
        pg.allreduce([torch.ones(2, dtype=torch.int64)],
                     opts(dist.AllreduceOptions, reduceOp=dist.ReduceOp.AVG))
    with pytest.raises(ValueError, match="BAND of torch.float32"):
        pg.allreduce([torch.ones(2)], opts(dist.AllreduceOptions,
                                           reduceOp=dist.ReduceOp.BAND))
    with pytest.raises(RuntimeError, match="send/recv"):
        pg.send([torch.ones(1)], 0, 0)
    with pytest.raises(ValueError, match="equal splits"):
        pg.alltoall_base(torch.ones(4), torch.ones(4), [1, 3], [1, 3], None)
    pg.shutdown()


def test_env_errors(monkeypatch):
    monkeypatch.delenv("SHOUTER_BOX", raising=False)
    with pytest.raises(ValueError, match="SHOUTER_BOX is not set"):
        st.config_from_env(None, 0, 2)
    monkeypatch.setenv("SHOUTER_BOX", "198.18.0.1:x")
    with pytest.raises(ValueError, match="bad port"):
        st.config_from_env(None, 0, 2)
    monkeypatch.setenv("SHOUTER_BOX", "198.18.0.1:4791")
    monkeypatch.setenv("SHOUTER_JOB", "12")
    monkeypatch.setattr(st, "_shouter_groups", 0)
    kw = st.config_from_env(None, 1, 2)
    assert (kw["box"], kw["port"], kw["job"]) == ("198.18.0.1", 4791, 12)
    assert kw["cc_target_us"] is None
    for v, want in (("off", "off"), ("3000", 3000)):
        monkeypatch.setenv("SHOUTER_CC_TARGET_US", v)
        monkeypatch.setattr(st, "_shouter_groups", 0)
        assert st.config_from_env(None, 1, 2)["cc_target_us"] == want
    monkeypatch.setenv("SHOUTER_CC_TARGET_US", "3ms")
    monkeypatch.setattr(st, "_shouter_groups", 0)
    with pytest.raises(ValueError, match="SHOUTER_CC_TARGET_US='3ms' is not valid"):
        st.config_from_env(None, 1, 2)
    monkeypatch.delenv("SHOUTER_CC_TARGET_US")
    monkeypatch.setattr(st, "_shouter_groups", 1)
    with pytest.raises(ValueError, match="no rendezvous store"):
        st.config_from_env(None, 1, 2)          # a second group needs the store
    store = dist.HashStore()
    job = st.config_from_env(store, 0, 2)["job"]
    assert st.config_from_env(store, 1, 2)["job"] == job
    # a variable that is not valid does not use up SHOUTER_JOB: the retry reads it
    monkeypatch.setattr(st, "_shouter_groups", 0)
    monkeypatch.setenv("SHOUTER_WINDOW", "many")
    with pytest.raises(ValueError, match="SHOUTER_WINDOW='many' is not valid"):
        st.config_from_env(store, 1, 2)
    monkeypatch.delenv("SHOUTER_WINDOW")
    assert st.config_from_env(store, 1, 2)["job"] == 12
    # nor does a join that failed (its group gives its place back)
    monkeypatch.setattr(st, "_shouter_groups", 0)
    monkeypatch.setenv("SHOUTER_TIMEOUT_MS", "50")
    monkeypatch.setenv("SHOUTER_BOX", "198.18.0.1,198.18.0.1")   # refused before sending
    with pytest.raises(ValueError):
        st.ProcessGroupShouter(store, 0, 2)
    monkeypatch.setenv("SHOUTER_BOX", "198.18.0.1:4791")
    assert st._shouter_groups == 0
    assert st.config_from_env(store, 1, 2)["job"] == 12


def test_engine_env_checked_before_joining(monkeypatch):
    # SHOUTER_ORDER and SHOUTER_OP_WAIT_S are read before the job is joined, and named
    monkeypatch.setattr(st, "_shouter_groups", 0)
    monkeypatch.setenv("SHOUTER_BOX", "198.18.0.1")
    monkeypatch.setenv("SHOUTER_JOB", "12")
    for name, v, msg in (("SHOUTER_ORDER", "PRIORITY", "SHOUTER_ORDER='PRIORITY'"),
                         ("SHOUTER_OP_WAIT_S", "inf", "SHOUTER_OP_WAIT_S=inf"),
                         ("SHOUTER_OP_WAIT_S", "nan", "SHOUTER_OP_WAIT_S=nan"),
                         ("SHOUTER_OP_WAIT_S", "-1", "SHOUTER_OP_WAIT_S=-1.0")):
        monkeypatch.setenv(name, v)
        with pytest.raises(ValueError, match=msg):
            st.ProcessGroupShouter(dist.HashStore(), 0, 2)
        monkeypatch.delenv(name)
    assert st._shouter_groups == 0      # nothing was joined: SHOUTER_JOB is still the next's


def test_work_raises_comm_errors():
    hub, pgs = groups(2)
    hub.timeout = 1.0

    def rank(r):
        if r == 1:
            return None                           # never calls: rank 0 times out
        w = pgs[0].allreduce([torch.ones(3)])
        with pytest.raises(RuntimeError):
            w.wait()
        w2 = pgs[0].allreduce([torch.ones(3)])
        with pytest.raises(RuntimeError, match="failed earlier"):
            w2.wait()
        return True
    assert threads(2, rank)[0] is True


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 16)
        self.c = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


@pytest.mark.parametrize("hook", [False, True])
def test_ddp_matches_single_process(hook, monkeypatch):
    """DDP on 2 ranks (threads) with the fake: parameters equal at every rank after every
    step, and equal (float tolerance) to one process training on the whole batch."""
    world, steps = 2, 4
    hub, pgs = groups(world, "priority")
    torch.manual_seed(0)
    data = [(torch.randn(world * 4, 8), torch.randint(0, 3, (world * 4,)))
            for _ in range(steps)]
    ref = Net()
    init = {k: v.clone() for k, v in ref.state_dict().items()}
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    ref_params = []
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ref(x), y).backward()
        opt.step()
        ref_params.append([p.detach().clone() for p in ref.parameters()])
    barrier = threading.Barrier(world)
    monkeypatch.setattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", 1000)     # several buckets

    def rank(r):
        torch.manual_seed(r + 1)                # different init: DDP broadcasts rank 0's
        m = Net()
        if r == 0:
            m.load_state_dict(init)
        d = torch.nn.parallel.DistributedDataParallel(m, process_group=pgs[r],
                                                      bucket_cap_mb=0.001)
        if hook:
            d.register_comm_hook(pgs[r], st.priority_hook)
        o = torch.optim.SGD(d.parameters(), lr=0.1)
        got = []
        for x, y in data:
            o.zero_grad()
            xs, ys = x[r * 4:(r + 1) * 4], y[r * 4:(r + 1) * 4]
            torch.nn.functional.cross_entropy(d(xs), ys).backward()
            o.step()
            got.append([p.detach().clone() for p in m.parameters()])
            barrier.wait()
        pgs[r].shutdown()
        return got
    res = threads(world, rank, timeout=120)
    for r in range(world):
        assert not isinstance(res[r], BaseException), res[r]
    for s in range(steps):
        for p0, p1, pr in zip(res[0][s], res[1][s], ref_params[s]):
            assert torch.equal(p0, p1)
            assert torch.allclose(p0, pr, atol=1e-6), (p0 - pr).abs().max()
    if hook:
        assert len(pgs[0]._table.ids) > 1       # buckets registered
