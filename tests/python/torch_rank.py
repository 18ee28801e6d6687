# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""One rank of the torch backend's tests (test_torch.py), run by conftest.py's run_ranks() in
a worker namespace: torch_rank.py MODE [args]. The default group is "shouter" (through the
box, job id from the rendezvous store), a second group in the same processes is Gloo (over
the namespaces' bridge); every mode prints one JSON record (emit()).

  coll                every collective through both groups, results compared bit for bit
                      (integer-valued inputs: every sum is exact in any order)
  ddp STEPS ORDER     DDP on a small MLP through each group from the same start and data;
                      per step a CRC of the parameters (shouter), the largest difference to
                      Gloo's parameters; ORDER: priority (with priority_hook) or fifo
  badorder            priority_hook's tensor ids registered by hand, in another order at
                      rank 1: the error each rank gets
  perf N              N allreduces of 4 bytes and of 1 MiB: mean time per call
"""

import json
import os
import sys
import time
import zlib

import torch
import torch.distributed as dist

import shouter.torch as st

rank = int(os.environ["SHR_PY_RANK"])
world = int(os.environ["SHR_PY_WORLD"])
job = int(os.environ["SHR_PY_JOB"])
os.environ["SHOUTER_BOX"] = os.environ["SHR_PY_BOX"]
os.environ.setdefault("SHOUTER_TIMEOUT_MS", "20000")
os.environ["GLOO_SOCKET_IFNAME"] = "shr0"
mode = sys.argv[1]
if mode == "ddp":
    os.environ["SHOUTER_ORDER"] = sys.argv[3]


def emit(**kw):
    print(json.dumps(kw), flush=True)


def init():
    port = 20000 + job % 20000
    dist.init_process_group("shouter", init_method=f"tcp://198.18.0.10:{port}", rank=rank,
                            world_size=world)
    return dist.new_group(backend="gloo")


def coll(gloo):
    W = world
    bad = []

    def both(name, fn):
        a, b = fn(None), fn(gloo)
        for x, y in zip(a, b):
            if not (x.dtype == y.dtype and torch.equal(x, y)):
                bad.append(f"{name}: shouter {x.flatten()[:6].tolist()} gloo "
                           f"{y.flatten()[:6].tolist()}")

    def allreduce(op, dtype, n=1000):
        def f(g):
            t = (torch.arange(n) % 97 - 40 + rank * 3).to(dtype)
            dist.all_reduce(t, op=op, group=g)
            return [t]
        return f
    R = dist.ReduceOp
    for op, nm in ((R.SUM, "sum"), (R.MIN, "min"), (R.MAX, "max")):
        both(f"allreduce {nm} f32", allreduce(op, torch.float32))
        both(f"allreduce {nm} i64", allreduce(op, torch.int64))
    both("allreduce prod f32", allreduce(R.PRODUCT, torch.float32, 8))
    both("allreduce sum f64", allreduce(R.SUM, torch.float64))
    both("allreduce sum i32", allreduce(R.SUM, torch.int32))
    both("allreduce sum f32 300k", allreduce(R.SUM, torch.float32, 300_000))

    def bcast(dtype, root, n):
        def f(g):
            t = torch.full((n,), rank + 1).to(dtype) * (torch.arange(n) % 13).to(dtype)
            dist.broadcast(t, src=root, group=g)
            return [t]
        return f
    for root in range(W):
        both(f"broadcast f32 root {root}", bcast(torch.float32, root, 5000))
    both("broadcast i64", bcast(torch.int64, W - 1, 7))
    both("broadcast u8 odd", bcast(torch.uint8, 0, 13))

    def allgather(dtype, n):
        def f(g):
            t = (torch.arange(n) + 100 * rank).to(dtype)
            outs = [torch.empty(n, dtype=dtype) for _ in range(W)]
            dist.all_gather(outs, t, group=g)
            return outs
        return f
    both("allgather f32", allgather(torch.float32, 3000))
    both("allgather i64", allgather(torch.int64, 5))

    def reduce(root):
        def f(g):
            t = (torch.arange(100) + rank).float()
            dist.reduce(t, dst=root, group=g)
            return [t] if rank == root else []      # elsewhere: unspecified
        return f
    both("reduce root 1", reduce(min(1, W - 1)))

    def gather(g):
        t = torch.full((10,), float(rank))
        outs = [torch.empty(10) for _ in range(W)] if rank == 0 else None
        dist.gather(t, outs, dst=0, group=g)
        return outs or [t]
    both("gather", gather)

    def scatter(g):
        o = torch.empty(10)
        ins = [torch.full((10,), float(q * 7)) for q in range(W)] if rank == W - 1 else None
        dist.scatter(o, ins, src=W - 1, group=g)
        return [o]
    both("scatter", scatter)

    def reduce_scatter(g):
        o = torch.empty(50)
        ins = [torch.full((50,), float(rank * 10 + q)) for q in range(W)]
        dist.reduce_scatter(o, ins, group=g)
        return [o]
    try:
        if not hasattr(gloo, "reduce_scatter"):
            raise RuntimeError("not supported")
        both("reduce_scatter", reduce_scatter)
    except RuntimeError as e:       # Gloo 1.13 has no reduce_scatter: check the sum
        if "not supported" not in str(e) and "does not support" not in str(e):
            raise
        o = reduce_scatter(None)[0]
        if not torch.equal(o, torch.full((50,), float(sum(q * 10 + rank
                                                            for q in range(W))))):
            bad.append(f"reduce_scatter: {o[:4].tolist()}")

    def alltoall(g):
        outs = [torch.empty(4) for _ in range(W)]
        dist.all_to_all(outs, [torch.full((4,), float(rank * 10 + q)) for q in range(W)],
                        group=g)
        return outs
    try:
        both("alltoall", alltoall)
    except RuntimeError as e:
        if "not supported" not in str(e) and "does not support" not in str(e):
            raise
        outs = alltoall(None)
        if not all(torch.equal(o, torch.full((4,), float(q * 10 + rank)))
                   for q, o in enumerate(outs)):
            bad.append(f"alltoall: {[o.tolist() for o in outs]}")
    # async: several in flight, waited for in reverse
    ts = [torch.full((2000,), float(i + rank)) for i in range(8)]
    ws = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(ws):
        w.wait()
    for i, t in enumerate(ts):
        if not torch.equal(t, torch.full((2000,), float(W * i + sum(range(W))))):
            bad.append(f"async allreduce {i}: {t[:3].tolist()}")
    # a second shouter group: its own job (id through the store, under the group's prefix)
    sub = dist.new_group(backend="shouter")
    t = torch.full((3000,), float(rank + 1))
    dist.all_reduce(t, group=sub)
    if not torch.equal(t, torch.full((3000,), float(sum(range(1, W + 1))))):
        bad.append(f"second group: {t[:3].tolist()}")
    jobs = [dist.distributed_c10d._get_default_group().job, sub.job]
    if jobs[0] == jobs[1]:
        bad.append(f"second group has the default group's job {jobs}")
    dist.barrier()
    emit(bad=bad, stats=st_stats(), jobs=jobs)


def st_stats():
    pg = dist.distributed_c10d._get_default_group()
    return dict(pg.engine.stats)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 128)
        self.l2 = torch.nn.Linear(128, 128)
        self.l3 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))


def crc(model):
    c = 0
    for p in model.parameters():
        c = zlib.crc32(p.detach().numpy().tobytes(), c)
    return c


def ddp(gloo, steps, order):
    torch.manual_seed(1234 + rank)      # different starts: DDP broadcasts rank 0's
    start = Net().state_dict()
    models = {}
    dist._DEFAULT_FIRST_BUCKET_BYTES = 20000        # several buckets from the first step
    for name, g in (("shouter", None), ("gloo", gloo)):
        m = Net()
        m.load_state_dict(start)
        d = torch.nn.parallel.DistributedDataParallel(m, process_group=g, bucket_cap_mb=0.02)
        if name == "shouter" and order == "priority":
            d.register_comm_hook(None, st.priority_hook)
        models[name] = (m, d, torch.optim.SGD(d.parameters(), lr=0.05, momentum=0.9))
    gen = torch.Generator().manual_seed(99 + rank)
    crcs, diffs, times = [], [], {"shouter": 0.0, "gloo": 0.0}
    for s in range(steps):
        x = torch.randn(32, 64, generator=gen)
        y = torch.randint(0, 10, (32,), generator=gen)
        for name in ("shouter", "gloo"):
            m, d, opt = models[name]
            t0 = time.perf_counter()
            opt.zero_grad()
            torch.nn.functional.cross_entropy(d(x), y).backward()
            opt.step()
            times[name] += time.perf_counter() - t0
        crcs.append(crc(models["shouter"][0]))
        diffs.append(max((a - b).abs().max().item() for a, b in
                         zip(models["shouter"][0].parameters(), models["gloo"][0].parameters())))
    pg = dist.distributed_c10d._get_default_group()
    emit(crcs=crcs, gloo_crcs=None, maxdiff=max(diffs), diffs=diffs,
         step_ms={k: 1000 * v / steps for k, v in times.items()},
         table=len(pg._table.ids), stats=st_stats())


def badorder(gloo):
    pg = dist.distributed_c10d._get_default_group()
    a, b = torch.ones(1000), torch.ones(2000)
    ids = (0, 1) if rank != 1 else (1, 0)
    st.register_tensor(a, ids[0])
    st.register_tensor(b, ids[1])
    err = None
    try:
        w1 = dist.all_reduce(a, async_op=True)
        w2 = dist.all_reduce(b, async_op=True)
        w1.wait()
        w2.wait()
    except RuntimeError as e:
        err = str(e)
    emit(error=err, sums=[a[0].item(), b[0].item()], failed=str(pg.engine.failed))
    os._exit(0)                     # the group is broken: no clean leave to wait for


def perf(gloo, n):
    res = {}
    for size in (1, 262144):
        for name, g in (("shouter", None), ("gloo", gloo)):
            t = torch.ones(size)
            dist.all_reduce(t, group=g)
            dist.barrier(group=g)
            t0 = time.perf_counter()
            for _ in range(n):
                dist.all_reduce(t, group=g)
            res[f"{name}_{size * 4}B_us"] = 1e6 * (time.perf_counter() - t0) / n
        # a registered tensor: in priority order, each call is announced by rank 0 first
        t = torch.ones(size)
        st.register_tensor(t, 7 + size)
        dist.all_reduce(t)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(t)
        res[f"shouter_registered_{size * 4}B_us"] = 1e6 * (time.perf_counter() - t0) / n
    emit(**res, stats=st_stats())


gloo = init()
if mode == "coll":
    coll(gloo)
elif mode == "ddp":
    ddp(gloo, int(sys.argv[2]), sys.argv[3])
elif mode == "badorder":
    badorder(gloo)
elif mode == "perf":
    perf(gloo, int(sys.argv[2]))
dist.barrier()
dist.destroy_process_group()
