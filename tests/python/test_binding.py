# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Every call of the binding through the real box: each collective at N = 3 (and 4), the
seed's calls, barrier, ident, stats; float32, int32, float16 and bfloat16; exact int32 results;
numpy arrays and torch tensors written in place (same object, same memory)."""

import os

import pytest


def ok(res):
    for r in res:
        assert r.rec.get("ok") is True, f"rank {r.rank}: {r.rec} {r.tail()}"


@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "bfloat16"])
def test_allreduce_dtypes(run_ranks, dtype):
    # integers small enough to be exact in every dtype (bfloat16: 8 significant bits)
    res = run_ranks("""
        import torch
        dtype = sys.argv[1]
        n = 1000 if dtype != "bfloat16" else 200
        c = comm(dtype=dtype)
        base = np.arange(n) % 20   # sums below 256: exact in bfloat16
        want = sum(base * (r + 1) + r for r in range(world))
        if dtype == "bfloat16":
            x = torch.tensor(base * (rank + 1) + rank, dtype=torch.bfloat16)
            c.allreduce(x)
            got = x.float().numpy()
        else:
            x = (base * (rank + 1) + rank).astype(dtype)
            c.allreduce(x)
            got = x
            assert got.dtype == np.dtype(dtype)
        emit(ok=bool((got == want).all()), first=float(got[1]), dtype=c.dtype)
        c.close()
    """, 3, [dtype])
    ok(res)
    assert all(r.rec["dtype"] == dtype for r in res)


def test_allreduce_int32_exact_ops(run_ranks):
    # wrapping int32 sums, MIN, MAX and PROD, 3 ranks, 100 k elements (many chunks)
    res = run_ranks("""
        c = comm(dtype="int32")
        rng = np.random.default_rng(1234)
        ins = [rng.integers(-2**31, 2**31, 100_000, dtype=np.int64).astype(np.int32)
               for _ in range(world)]
        x = ins[rank].copy()
        c.allreduce(x)
        s = ins[0].astype(np.int64)
        for a in ins[1:]:
            s += a
        want = ((s + 2**31) % 2**32 - 2**31).astype(np.int32)
        good = bool((x == want).all())
        for op, f in (("min", np.minimum), ("max", np.maximum)):
            x = ins[rank].copy()
            c.allreduce(x, op=op)
            good &= bool((x == f.reduce(ins)).all())
        small = np.array([rank + 2, -(rank + 1), 3], dtype=np.int32)
        out = np.zeros(3, dtype=np.int32)
        c.allreduce(small, out, op="prod")
        good &= out.tolist() == [2 * 3 * 4, -6, 27] and int(small[0]) == rank + 2
        emit(ok=bool(good))
    """, 3)
    ok(res)


def test_every_collective_int32(run_ranks):
    # every collective, exact, with the roots spread over the ranks; 3 ranks, 5000 elements
    # per block (two chunks and more)
    res = run_ranks("""
        c = comm(dtype="int32")
        W, n = world, 5000
        def data(r, k=1):
            return (np.arange(k * n, dtype=np.int64) * 7 + r * 1000003).astype(np.int32)
        checks = {}
        x = data(rank)
        out = np.zeros(n, np.int32)
        c.reduce(x, out, root=1)
        checks["reduce"] = rank != 1 or (out == sum(data(r) for r in range(W))).all()
        y = data(rank)
        c.reduce(y, root=2)                      # in place at the root
        checks["reduce_inplace"] = (y == (sum(data(r) for r in range(W)) if rank == 2
                                          else data(rank))).all()
        inp = data(rank, W)
        out = np.zeros(n, np.int32)
        c.reduce_scatter(inp, out)
        checks["reduce_scatter"] = (out == sum(data(r, W) for r in range(W))
                                    [rank * n:(rank + 1) * n]).all()
        b = data(rank)
        c.broadcast(b, root=2)
        checks["broadcast"] = (b == data(2)).all()
        out = np.zeros(W * n, np.int32)
        c.allgather(data(rank), out)
        checks["allgather"] = (out == np.concatenate([data(r) for r in range(W)])).all()
        out = np.zeros(W * n, np.int32)
        c.gather(data(rank), out if rank == 0 else None, root=0)
        checks["gather"] = rank != 0 or (out == np.concatenate(
            [data(r) for r in range(W)])).all()
        out = np.zeros(n, np.int32)
        c.scatter(data(rank, W) if rank == 1 else None, out, root=1)
        checks["scatter"] = (out == data(1, W)[rank * n:(rank + 1) * n]).all()
        out = np.zeros(W * n, np.int32)
        c.alltoall(data(rank, W), out)
        checks["alltoall"] = (out == np.concatenate(
            [data(i, W)[rank * n:(rank + 1) * n] for i in range(W)])).all()
        c.barrier()
        checks = {k: bool(v) for k, v in checks.items()}
        emit(ok=all(checks.values()), checks=checks)
    """, 3)
    ok(res)


def test_tree_ranks(run_ranks):
    # tree_rank/tree_world reach the box and the collectives: 3 ranks whose tree ranks are
    # their job ranks reversed (a box's members may stand anywhere in a tree), so a root and
    # a block in tree ranks are another job rank's: every rooted collective and gather is
    # checked against the tree rank's data; then the arguments refused
    res = run_ranks("""
        W, n = world, 3000
        g = W - 1 - rank
        c = comm(dtype="int32", tree_rank=g, tree_world=W)
        def data(t, k=1):
            return (np.arange(k * n, dtype=np.int64) * 5 + t * 1000003).astype(np.int32)
        checks = {"attrs": (c.tree_rank, c.tree_world, c.rank, c.world) == (g, W, rank, W)}
        b = data(g)
        c.broadcast(b, root=0)
        checks["broadcast"] = (b == data(0)).all()
        out = np.zeros(n, np.int32)
        c.reduce(data(g), out, root=1)
        checks["reduce"] = g != 1 or (out == sum(data(t) for t in range(W))).all()
        out = np.zeros(W * n, np.int32)
        c.allgather(data(g), out)
        checks["allgather"] = (out == np.concatenate([data(t) for t in range(W)])).all()
        out = np.zeros(n, np.int32)
        c.scatter(data(g, W) if g == 2 else None, out, root=2)
        checks["scatter"] = (out == data(2, W)[g * n:(g + 1) * n]).all()
        out = np.zeros(W * n, np.int32)
        c.alltoall(data(g, W), out)
        checks["alltoall"] = (out == np.concatenate(
            [data(t, W)[g * n:(g + 1) * n] for t in range(W)])).all()
        try:
            c.broadcast(np.zeros(4, np.int32), root=W)
            checks["root_refused"] = False
        except ValueError as e:
            checks["root_refused"] = "tree" in str(e)
        c.close()
        for kw in ({"tree_rank": W, "tree_world": W}, {"tree_rank": 1}):
            try:
                comm(dtype="int32", **kw)
                checks["refused %s" % kw] = False
            except ValueError as e:
                checks["refused %s" % kw] = "tree_rank" in str(e)
        checks = {k: bool(v) for k, v in checks.items()}
        emit(ok=all(checks.values()), checks=checks)
    """, 3)
    ok(res)


def test_every_collective_torch_float32(run_ranks):
    # the same through CPU torch tensors in a float32 job, 4 ranks; relays of other dtypes
    # (int64, uint8) carry their bytes
    res = run_ranks("""
        import torch
        c = comm(dtype="float32")
        W, n = world, 3000
        def data(r, k=1):
            return torch.arange(k * n, dtype=torch.float32) * 0.5 + r
        checks = {}
        x = data(rank)
        c.allreduce(x)
        checks["allreduce"] = torch.equal(x, sum(data(r) for r in range(W)))
        out = torch.zeros(n)
        c.reduce(data(rank), out, root=3)
        checks["reduce"] = rank != 3 or torch.equal(out, sum(data(r) for r in range(W)))
        out = torch.zeros(n)
        c.reduce_scatter(data(rank, W), out)
        checks["reduce_scatter"] = torch.equal(out, sum(data(r, W) for r in range(W))
                                               [rank * n:(rank + 1) * n])
        b = torch.arange(n, dtype=torch.int64) * (rank + 1)
        c.broadcast(b, root=1)
        checks["broadcast_int64"] = torch.equal(b, torch.arange(n, dtype=torch.int64) * 2)
        u = torch.full((4 * n,), rank, dtype=torch.uint8)
        c.broadcast(u, root=3)
        checks["broadcast_uint8"] = bool((u == 3).all())
        out = torch.zeros(W * n)
        c.allgather(data(rank), out)
        checks["allgather"] = torch.equal(out, torch.cat([data(r) for r in range(W)]))
        out = torch.zeros(W * n)
        c.gather(data(rank), out, root=2)
        checks["gather"] = rank != 2 or torch.equal(out, torch.cat([data(r) for r in range(W)]))
        out = torch.zeros(n)
        c.scatter(data(rank, W), out, root=0)
        checks["scatter"] = torch.equal(out, data(0, W)[rank * n:(rank + 1) * n])
        out = torch.zeros(W * n)
        c.alltoall(data(rank, W), out)
        checks["alltoall"] = torch.equal(out, torch.cat(
            [data(i, W)[rank * n:(rank + 1) * n] for i in range(W)]))
        emit(ok=all(checks.values()), checks=checks)
    """, 4)
    ok(res)


def test_in_place_same_object_and_memory(run_ranks):
    # numpy and torch: the call writes the caller's memory: same object, same data pointer,
    # and a view of it sees the result; out= leaves the input alone
    res = run_ranks("""
        import torch
        c = comm(dtype="float32")
        a = np.full(1 << 16, rank + 1, dtype=np.float32)
        view, ptr, ident = a[10:20], a.ctypes.data, id(a)
        c.allreduce(a)
        want = sum(r + 1 for r in range(world))
        good = id(a) == ident and a.ctypes.data == ptr and (a == want).all() \\
            and (view == want).all()
        t = torch.full((1 << 16,), float(rank + 1))
        tptr, tid, tview = t.data_ptr(), id(t), t[5:9]
        c.allreduce(t)
        good &= id(t) == tid and t.data_ptr() == tptr and bool((t == want).all()) \\
            and bool((tview == want).all())
        g = torch.full((8,), float(rank + 1), requires_grad=True)   # .data semantics
        c.broadcast(g, root=0)
        good &= bool((g.detach() == 1).all())
        inp = np.full(100, rank + 1, dtype=np.float32)
        out = np.zeros(100, dtype=np.float32)
        c.allreduce(inp, out)
        good &= bool((inp == rank + 1).all() and (out == want).all())
        m = np.zeros((4, 5), dtype=np.float32) + rank     # 2-D, C-contiguous
        c.allreduce(m)
        good &= bool((m == sum(range(world))).all())
        emit(ok=bool(good))
    """, 2)
    ok(res)


def test_seed_api(run_ranks):
    # shouter.init(iplist, ports, channel_num) / broadcast(tensor, step) / allreduce(tensor,
    # step) / finalize(): the steps are the calls' identities
    res = run_ranks("""
        import torch
        shouter.init([box], ports=[shouter.DEFAULT_PORT], channel_num=64, job=job,
                     rank=rank, world=world)
        c = shouter.default_comm()
        w = torch.full((1000,), float(rank * 10))
        shouter.broadcast(w, step=1)
        g = torch.full((1000,), float(rank + 1))
        shouter.allreduce(g, step=2)
        s1 = c.ident()
        shouter.allreduce(g, 3)
        emit(ok=bool((w == 0).all()) and bool((g == 2 * sum(range(1, world + 1))).all()),
             ident=list(s1), window=c.window)
        shouter.finalize()
        emit(ok=c.closed, ident=list(s1), window=c.window)
    """, 3)
    ok(res)
    for r in res:
        # step 2, and the automatic tensor id 2 (calls 0 and 1 before it)
        assert r.rec["ident"] == [2, 2]
        assert 1 <= r.records[0]["window"] <= 64


def test_ident_barrier_stats_attrs(run_ranks):
    res = run_ranks("""
        with comm(dtype="int32", window=32) as c:
            rec = {"ident0": list(c.ident()), "attrs": [c.job, c.rank, c.world, c.dtype],
                   "window": c.window, "chunk": c.chunk, "lanes": c.lanes,
                   "repr": repr(c)}
            x = np.ones(10, np.int32)
            c.allreduce(x, step=5, tensor=70)
            rec["ident1"] = list(c.ident())
            c.barrier()
            rec["ident2"] = list(c.ident())
            c.allreduce(x, step=9)
            rec["ident3"] = list(c.ident())
            try:
                c.allreduce(x, step=8)
            except ValueError as e:
                rec["step_back"] = str(e)
            st = c.stats()
            rec["stats"] = {k: st[k] for k in ("tx_data", "rx_results", "ops_done")}
            # one box: the per-box views have one entry, equal to the totals
            rec["boxes"], rec["info"] = list(c.boxes), c.info()
            rec["per_box_same"] = st["boxes"] == [{k: v for k, v in st.items()
                                                   if k != "boxes"}]
            rec["x"] = int(x[0])
        rec["closed"] = c.closed
        try:
            c.barrier()
        except ValueError as e:
            rec["after_close"] = str(e)
        emit(ok=True, **rec)
    """, 2)
    ok(res)
    for r in res:
        d = r.rec
        assert d["ident0"] == [0, 0]
        assert d["attrs"][1:] == [r.rank, 2, "int32"]
        assert 1 <= d["window"] <= 32 and d["chunk"] > 0 and d["lanes"] >= 1
        assert d["ident1"] == [5, 71] and d["ident2"] == [5, 72] and d["ident3"] == [9, 73]
        assert d["x"] == 4 and "below the current step 9" in d["step_back"]
        assert d["stats"]["ops_done"] == 3 and d["stats"]["tx_data"] >= 3
        assert d["stats"]["rx_results"] >= 3
        assert d["closed"] is True and "closed" in d["after_close"]
        assert d["boxes"] == [f"{os.environ['SHR_PY_BOX']}:47000"] and d["per_box_same"]
        assert len(d["info"]) == 1 and d["info"][0]["box"] == d["boxes"][0]
        assert d["info"][0]["window"] == d["window"] and d["info"][0]["chunk"] == d["chunk"]
        # 32 chunks in flight in 64 slots (as many spare slots), or a box's fewer slots, all
        # in use
        assert d["info"][0]["slots"] == (64 if d["window"] == 32 else d["window"])


def test_qint32_job(run_ranks):
    # a quantised job takes and gives float32; the sum is within shr_comm.h's bound
    res = run_ranks("""
        c = comm(dtype="qint32")
        rng = np.random.default_rng(7)
        ins = [rng.standard_normal(5000).astype(np.float32) for _ in range(world)]
        x = ins[rank].copy()
        c.allreduce(x)
        exact = sum(a.astype(np.float64) for a in ins)
        err = float(np.abs(x - exact).max())
        emit(ok=err < 1e-5, err=err)
    """, 3)
    ok(res)


def test_result_group(run_ranks, cluster):
    """The box's result group (run.sh starts every box with one): by default each rank
    offers it, joins it (info() names it) and takes its results there: the box counts them
    in results_group; with no_group=True none goes there and info() says None. The sums are
    exact either way."""
    script = """
        with comm(dtype="int32", no_group=NO_GROUP) as c:
            x = np.full(100000, rank + 1, np.int32)
            c.allreduce(x)
            emit(ok=bool((x == world * (world + 1) // 2).all()), group=c.info()[0]["group"])
    """
    got = {}
    for no_group in (False, True):
        before = cluster.telemetry(1, "/shouter/stats")["results_group"]
        res = run_ranks(script.replace("NO_GROUP", str(no_group)), 2)
        ok(res)
        got[no_group] = (cluster.telemetry(1, "/shouter/stats")["results_group"] - before,
                         [r.rec["group"] for r in res])
    n, groups = got[False]
    assert n > 0 and len(set(groups)) == 1 and groups[0].startswith("198.18.0.255:480"), got
    assert got[True] == (0, [None, None]), got


def test_cc_target(run_ranks):
    """cc_target_us: "off" starts with the whole window out (stats()'s cwnd is the window),
    a target starts from the congestion control's initial window; the sums are exact either
    way, and stats() has the time results waited in the host (host_delay_ns, from the kernel
    UDP driver's receive timestamps). 0, a target past 1 s, a bool or any other string is a ValueError, before anything is
    sent."""
    script = """
        checks = {}
        with comm(dtype="int32", window=64, cc_target_us=CC) as c:
            cwnd = c.stats()["cwnd"]
            x = np.full(100000, rank + 1, np.int32)
            c.allreduce(x)
            checks["exact"] = bool((x == world * (world + 1) // 2).all())
            # kernel UDP: the results came with the kernel's receive timestamps
            checks["host_delay"] = c.stats()["host_delay_ns"] > 0
            checks["window"] = c.window > 16   # (else "off" and a target start alike)
            checks["cwnd"] = cwnd == (c.window if CC == "off" else 16)
        for bad in (0, 1000001, True, "on", 1.5):
            try:
                comm(dtype="int32", cc_target_us=bad)
                checks["refused %r" % (bad,)] = False
            except ValueError as e:
                checks["refused %r" % (bad,)] = "cc_target_us" in str(e)
        emit(ok=all(checks.values()), checks=checks)
    """
    for cc in ('"off"', "3000"):
        ok(run_ranks(script.replace("CC", cc), 2))


@pytest.mark.parametrize("dtype,first", [("float16", 0x3c01), ("bfloat16", 0x3f81)])
def test_repro_half_rounded_once(run_ranks, dtype, first):
    """A reproducible job's float16 and bfloat16 sums are the exact sum rounded once to the
    wire type (round to nearest, ties to even), not rounded to float32 first. The references
    are computed here by other means: float16 by numpy from the float64 sum (exact for three
    float16 terms), bfloat16 from the exact sum as a Fraction. Element 0 is a sum that a trip
    through float32 gets wrong (1 + 2^-11 + 2^-24; bfloat16: 1 + 2^-8 + 2^-24), the rest
    random values of either sign over 16 binades (bfloat16) or the whole float16 range."""
    res = run_ranks("""
        import struct
        import torch
        from fractions import Fraction
        dtype = sys.argv[1]
        n = 3000
        rng = np.random.default_rng(77)
        if dtype == "float16":
            bits = rng.integers(0, 0x7c00, (world, n)) | (rng.integers(0, 2, (world, n)) << 15)
            bits[:, 0] = [0x3c00, 0x1000, 0x0001]
            ins = bits.astype(np.uint16).view(np.float16)
            x = ins[rank].copy()
            with comm(dtype="float16", repro=True) as c:
                c.allreduce(x)
            with np.errstate(over="ignore"):   # sums past 65520: infinity, as wanted
                want = ins.astype(np.float64).sum(axis=0).astype(np.float16)
            good = x.view(np.uint16) == want.view(np.uint16)
            first = int(x.view(np.uint16)[0])
        else:
            e = rng.integers(0x3800, 0x4000, (world, n)) & 0x7f80
            bits = e | rng.integers(0, 0x80, (world, n)) | (rng.integers(0, 2, (world, n)) << 15)
            bits[:, 0] = [0x3f80, 0x3b80, 0x3380]
            def val(h):
                return struct.unpack("<f", struct.pack("<I", int(h) << 16))[0]
            def bf16_rne(q):   # a Fraction to bfloat16 bits: normal range only, here
                if q == 0:
                    return 0
                s, q = (0x8000, -q) if q < 0 else (0, q)
                ex = q.numerator.bit_length() - q.denominator.bit_length()
                while Fraction(2) ** ex > q:
                    ex -= 1
                while Fraction(2) ** (ex + 1) <= q:
                    ex += 1
                ulp = Fraction(2) ** (ex - 7)
                k = q / ulp
                fl = k.numerator // k.denominator
                rem = k - fl
                if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
                    fl += 1
                f32 = struct.unpack("<I", struct.pack("<f", float(fl * ulp)))[0]
                return s | (f32 >> 16)
            x = torch.tensor(bits[rank].astype(np.int64).astype(np.int16)).view(torch.bfloat16)
            x = x.clone()
            with comm(dtype="bfloat16", repro=True) as c:
                c.allreduce(x)
            got = x.view(torch.int16).numpy().astype(np.uint16)
            want = np.array([bf16_rne(sum(Fraction(val(bits[r, i])) for r in range(world)))
                             for i in range(n)], dtype=np.uint16)
            good = got == want
            first = int(got[0])
        emit(ok=bool(good.all()), bad=int((~good).sum()), first=first)
    """, 3, [dtype])
    ok(res)
    assert all(r.rec["first"] == first for r in res), [r.rec for r in res]


def test_buffers_taken_int32(run_ranks):
    """What an int32 job takes, exact: a read-only array at broadcast's root and at reduce's
    other ranks (they only read it), out= the buffer itself (in place, said explicitly), in
    and out two adjacent parts of one array; an int64 array is refused, not taken as int32."""
    res = run_ranks("""
        c = comm(dtype="int32")
        n = 1000
        checks = {}
        try:
            c.allreduce(np.ones(n, np.int64))
            checks["int64_refused"] = False
        except TypeError as e:
            checks["int64_refused"] = "buf: a int64 buffer in a int32 job" in str(e)
        src = (np.arange(n) * 3 + 7).astype(np.int32)
        b = np.frombuffer(src.tobytes(), np.int32) if rank == 1 else np.zeros(n, np.int32)
        c.broadcast(b, root=1)
        checks["bcast_read_only_root"] = (b == src).all()
        mine = np.frombuffer((np.arange(n) + rank).astype(np.int32).tobytes(), np.int32)
        buf = mine.copy() if rank == 0 else mine
        c.reduce(buf, root=0)
        checks["reduce_read_only_other"] = (buf == (sum(np.arange(n) + r for r in range(world))
                                                    if rank == 0 else mine)).all()
        y = np.full(n, rank + 1, np.int32)
        c.allreduce(y, y)
        checks["out_is_buf"] = (y == world * (world + 1) // 2).all()
        big = np.zeros((world + 1) * n, np.int32)
        big[:n] = rank + 10
        c.allgather(big[:n], big[n:])
        checks["adjacent"] = (big[n:] == np.repeat(np.arange(world) + 10, n)).all() and \\
            (big[:n] == rank + 10).all()
        checks = {k: bool(v) for k, v in checks.items()}
        emit(ok=all(checks.values()), checks=checks)
    """, 2)
    ok(res)


def test_bfloat16_numpy_uint16(run_ranks):
    """numpy has no bfloat16: a bfloat16 job takes a numpy uint16 array as the values' bits
    and writes the sum's bits in place (small integers: exact)."""
    res = run_ranks("""
        c = comm(dtype="bfloat16")
        n = 500
        def bits(v):
            return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        x = bits(np.arange(n) % 16 + rank)
        c.allreduce(x)
        got = (x.astype(np.uint32) << 16).view(np.float32)
        want = sum(np.arange(n) % 16 + r for r in range(world))
        emit(ok=bool((got == want).all()) and x.dtype == np.uint16)
    """, 2)
    ok(res)


def test_references_and_views_released(run_ranks):
    """A call holds its buffers only while it runs: after calls that completed and calls
    refused after the input was taken (out of the wrong size), every numpy array's and torch
    tensor's reference count is what it was, and a bytearray can be resized (no view of it is
    left exported). The results are exact."""
    res = run_ranks("""
        import torch
        c = comm(dtype="float32")
        n = 256
        x = np.ones(n, np.float32)
        out = np.zeros(n, np.float32)
        t = torch.ones(n)
        tout = torch.zeros(n)
        ba = bytearray(range(256)) * 4 if rank == 0 else bytearray(4 * n)
        def refs():
            return [sys.getrefcount(o) for o in (x, out, t, tout, ba)]
        before = refs()
        seen = []
        for i in range(3):
            c.allreduce(x)
            c.allreduce(x, out)
            c.allreduce(t)
            c.allreduce(t, tout)
            c.broadcast(ba, root=0)
            seen.append(refs())
        refused = 0
        for i in range(3):
            for f in (lambda: c.allreduce(x, np.zeros(n + 1, np.float32)),
                      lambda: c.allreduce(t, torch.zeros(n + 1)),
                      lambda: c.alltoall(ba, bytearray(4))):
                try:
                    f()
                except ValueError:
                    refused += 1
            seen.append(refs())
        try:
            ba.extend(bytes(4))
            resized = len(ba) == 4 * n + 4
        except BufferError as e:
            resized = str(e)
        exact = bool((x == 8).all() and (out == 16).all() and (t == 8).all() and
                     (tout == 16).all()) and ba[:4 * n] == bytearray(range(256)) * 4
        emit(ok=all(s == before for s in seen) and refused == 9 and resized is True and exact,
             before=before, seen=seen, refused=refused, resized=resized, exact=exact)
    """, 2)
    ok(res)
