# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""A job sharded over two boxes from Python (issue 10 item 2; run.sh --boxes 2: box 1 in
<prefix>-agg at 198.18.0.1, box 2 in <prefix>-agg2 at 198.18.0.2). Each test checks the
results and that both boxes took their share: every box's communicator completed calls
(Comm.stats()["boxes"]) and every box's own counters grew (its telemetry), so a binding that
sent everything to one box fails here even though its sums would be right.

The last test kills box 2: keep it last (pytest runs a file in order); the tests that need
both boxes skip once it is dead."""

import errno
import os
import textwrap
import threading
import time

import numpy as np
import pytest

BIG = 100_003           # elements: many chunks, so that each box gets a share


@pytest.fixture
def two_boxes(cluster):
    if len(cluster.boxes) < 2:
        pytest.skip("needs two boxes (run.sh --boxes 2)")
    if cluster.killed:
        pytest.skip(f"box {sorted(cluster.killed)} was killed by an earlier test")
    return cluster.boxes[:2]


def rounds(cluster, kind):
    """rounds_<kind> of each box."""
    return [cluster.telemetry(k, "/shouter/stats")[f"rounds_{kind}"] for k in (1, 2)]


def both_grew(before, after, what):
    grew = [b - a for a, b in zip(before, after)]
    assert all(g > 0 for g in grew), f"{what}: rounds completed per box {grew}"


def check_per_box(rec, nboxes=2):
    """A rank's record: both boxes listed, and each box's communicator did its share."""
    assert len(rec["boxes"]) == nboxes, rec["boxes"]
    assert [i["box"] for i in rec["info"]] == rec["boxes"], rec["info"]
    per = rec["stats"]["boxes"]
    assert len(per) == nboxes
    assert all(b["ops_done"] > 0 and b["tx_data"] > 0 for b in per), per
    assert rec["stats"]["ops_done"] == sum(b["ops_done"] for b in per)


def script(body):
    """A rank script: body (indented as in a test) after report(c, **kw), which prints what
    the rank's communicator says about its boxes, with kw."""
    return textwrap.dedent("""
        def report(c, **kw):
            emit(boxes=list(c.boxes), info=c.info(), stats=c.stats(), **kw)
        """) + textwrap.dedent(body)


def test_allreduce_int32_exact_float32_identical(run_ranks, cluster, two_boxes):
    r0 = rounds(cluster, "allreduce")
    res = run_ranks(script("""
        boxes = sys.argv[1].split(",")
        with shouter.Comm(boxes, job=job, rank=rank, world=world, dtype="int32",
                          timeout_ms=20000) as c:
            x = (np.arange(%d, dtype=np.int64) * (rank + 3) %% 1000003).astype(np.int32)
            want = sum((np.arange(%d, dtype=np.int64) * (r + 3) %% 1000003)
                       for r in range(world)).astype(np.int32)
            c.allreduce(x)
            int_ok = bool((x == want).all())
            int_bad = int((x != want).sum())
            report(c, int_ok=int_ok, int_bad=int_bad)
        with shouter.Comm(boxes, job=job + 10000, rank=rank, world=world, dtype="float32",
                          timeout_ms=20000) as c:
            rng = np.random.default_rng(1000 + rank)
            y = rng.standard_normal(%d).astype(np.float32)
            inp = y.copy()
            c.allreduce(y)
            save("in", inp)
            save("out", y)
            report(c, float_done=True)
    """ % (BIG, BIG, BIG)), 2, [",".join(two_boxes)])
    both_grew(r0, rounds(cluster, "allreduce"), "allreduce")
    for r in res:
        ints, floats = r.records
        assert ints["int_ok"], f"rank {r.rank}: {ints['int_bad']} int32 elements wrong"
        check_per_box(ints)
        check_per_box(floats)
        assert ints["boxes"] == [f"{b}:47000" for b in two_boxes]
    outs = [r.load("out") for r in res]
    assert all(o.tobytes() == outs[0].tobytes() for o in outs), "float32 results differ"
    exact = sum(r.load("in").astype(np.float64) for r in res)
    assert np.abs(outs[0] - exact).max() < 1e-5


def test_relays_and_blocks_exact(run_ranks, cluster, two_boxes):
    # broadcast and allgather (the brief), and the kinds staged per block (reduce_scatter,
    # alltoall, gather, scatter) and reduce: every one exact in int32
    rb, ra = rounds(cluster, "broadcast"), rounds(cluster, "allgather")
    res = run_ranks(script("""
        boxes = sys.argv[1].split(",")
        n = 30011
        def blk(r, m=n):
            return (np.arange(m, dtype=np.int64) * 7 + r * 1000).astype(np.int32)
        bad = []
        with shouter.Comm(boxes, job=job, rank=rank, world=world, dtype="int32",
                          timeout_ms=20000) as c:
            b = blk(rank, 3 * n)
            c.broadcast(b, root=1)
            if not (b == blk(1, 3 * n)).all():
                bad.append("broadcast")
            out = np.zeros(world * n, np.int32)
            c.allgather(blk(rank), out)
            if not (out == np.concatenate([blk(r) for r in range(world)])).all():
                bad.append("allgather")
            inp = np.concatenate([blk(rank + 10 * j) for j in range(world)])
            o = np.zeros(n, np.int32)
            c.reduce_scatter(inp, o)
            if not (o == sum(blk(r + 10 * rank).astype(np.int64)
                             for r in range(world)).astype(np.int32)).all():
                bad.append("reduce_scatter")
            o = np.zeros(world * n, np.int32)
            c.alltoall(inp, o)
            if not (o == np.concatenate([blk(r + 10 * rank) for r in range(world)])).all():
                bad.append("alltoall")
            o = np.zeros(world * n, np.int32)
            c.gather(blk(rank), o if rank == 0 else None, root=0)
            if rank == 0 and not (o == np.concatenate([blk(r) for r in range(world)])).all():
                bad.append("gather")
            o = np.zeros(n, np.int32)
            c.scatter(np.concatenate([blk(j) for j in range(world)]) if rank == 1 else None,
                      o, root=1)
            if not (o == blk(rank)).all():
                bad.append("scatter")
            x = blk(rank)
            c.reduce(x, root=0)
            if rank == 0 and not (x == sum(blk(r).astype(np.int64)
                                           for r in range(world)).astype(np.int32)).all():
                bad.append("reduce")
            c.barrier()
            report(c, bad=bad)
    """), 2, [",".join(two_boxes)])
    both_grew(rb, rounds(cluster, "broadcast"), "broadcast")
    both_grew(ra, rounds(cluster, "allgather"), "allgather")
    for r in res:
        assert r.rec["bad"] == [], f"rank {r.rank}: wrong {r.rec['bad']}"
        check_per_box(r.rec)


def test_seed_init_iplist(run_ranks, cluster, two_boxes):
    # shouter.init(iplist, ports=[...]): the seed's call with a list of two boxes
    r0 = rounds(cluster, "allreduce")
    res = run_ranks(script("""
        import torch
        boxes = sys.argv[1].split(",")
        shouter.init(boxes, ports=[shouter.DEFAULT_PORT] * 2, channel_num=64, job=job,
                     rank=rank, world=world, timeout_ms=20000)
        g = torch.full((%d,), float(rank + 1))
        shouter.allreduce(g, step=1)
        ok = bool((g == sum(range(1, world + 1))).all())
        report(shouter.default_comm(), ok=ok)
        shouter.finalize()
    """ % BIG), 2, [",".join(two_boxes)])
    both_grew(r0, rounds(cluster, "allreduce"), "allreduce")
    for r in res:
        assert r.rec["ok"]
        check_per_box(r.rec)


def test_torch_backend_two_boxes(run_ranks, cluster, two_boxes):
    # init_process_group("shouter") with SHOUTER_BOX="A,B": all_reduce exact
    r0 = rounds(cluster, "allreduce")
    res = run_ranks(script("""
        import torch
        import torch.distributed as dist
        import shouter.torch
        port = 20000 + job %% 20000
        dist.init_process_group("shouter", init_method=f"tcp://198.18.0.10:{port}",
                                rank=rank, world_size=world)
        t = (torch.arange(%d) %% 1000 + rank * 7).float()
        dist.all_reduce(t)
        want = sum((torch.arange(%d) %% 1000 + r * 7).float() for r in range(world))
        ok = bool(torch.equal(t, want))
        pg = dist.distributed_c10d._get_default_group()
        report(pg._comm, ok=ok)
        dist.barrier()
        dist.destroy_process_group()
    """ % (BIG, BIG)), 2, env={"SHOUTER_BOX": ",".join(two_boxes),
                              "SHOUTER_TIMEOUT_MS": 20000}, timeout=180)
    both_grew(r0, rounds(cluster, "allreduce"), "allreduce")
    for r in res:
        assert r.rec["ok"], f"rank {r.rank}: all_reduce not exact"
        check_per_box(r.rec)


def test_box_killed_every_rank_names_it(run_ranks, cluster, two_boxes):
    # Keep last: box 2 stays dead. Both ranks complete one allreduce over both boxes (so
    # the job is live at both), then wait; the test kills box 2 and waits until it is gone,
    # then lets the ranks make their next call: box 1's share completes, box 2's cannot, and
    # every rank gets shouter.Error naming box 2; its next call fails too (EPIPE), naming it.
    job = cluster.next_job()
    go = f"{cluster.tmp}/go-{job}"
    box2 = f"box 2 of 2 ({two_boxes[1]}:47000)"
    out = {}

    def ranks():
        out["res"] = run_ranks("""
            import time
            boxes, go = sys.argv[1].split(","), sys.argv[2]
            c = shouter.Comm(boxes, job=job, rank=rank, world=world, dtype="int32",
                             timeout_ms=3000)
            x = np.ones(%d, np.int32)
            c.allreduce(x)
            first_ok = bool((x == world).all())
            open(os.path.join(outdir, "ready"), "w").close()
            while not os.path.exists(go):
                time.sleep(0.01)
            t0 = time.monotonic()
            errs = []
            for _ in range(2):
                try:
                    c.allreduce(x)
                    errs.append(None)
                except shouter.Error as e:
                    errs.append(error_record(e))
            emit(first_ok=first_ok, errs=errs, secs=time.monotonic() - t0)
            c.close()
        """ % BIG, 2, [",".join(two_boxes), go], job=job, timeout=120)

    th = threading.Thread(target=ranks)
    th.start()
    try:
        ready = [f"{cluster.tmp}/job{job}-rank{i}/ready" for i in range(2)]
        while th.is_alive() and not all(os.path.exists(p) for p in ready):
            time.sleep(0.01)
        assert all(os.path.exists(p) for p in ready), "the ranks never got ready"
        cluster.kill_box(2)
    finally:
        open(go, "w").close()
        th.join()
    for r in out["res"]:
        rec = r.rec
        assert rec["first_ok"], rec
        first, later = rec["errs"]
        assert first is not None, f"rank {r.rank}: the call after box 2 died succeeded"
        assert first["type"] == "Error" and box2 in first["strerror"], first
        assert first["errno"] in (errno.ETIMEDOUT, errno.ECONNABORTED), first
        assert later is not None and later["errno"] == errno.EPIPE, later
        assert box2 in later["strerror"], later
        print(f"rank {r.rank}: failed after {rec['secs']:.2f} s: {first['strerror']}")
