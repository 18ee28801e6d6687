# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Gloo allreduce baseline (PyTorch torch.distributed, backend gloo), one rank per process.

Run one process per rank, each in its worker namespace (scripts/bench.sh does this):

    ip netns exec P-wI /usr/bin/python3 scripts/gloo_bench.py --rank I --world N \\
        --master 198.18.0.10 --iface shr0

Measures what shouter-worker measures, on the same tensors: the goodput of a --size float32
allreduce (tensor bytes * 8 / seconds per allreduce) and the p50/p99 latency of a --lat-size
allreduce (--verify-last: of the --size allreduce, only the last iteration is checked). The
inputs are shouter-worker's float32 inputs (app/worker/main.c, val_f32): odd
integers of magnitude up to (2^24 - 1) / world hashed from (rank, iteration, index), a quarter
of them negative, so every partial sum is an integer below 2^24 (exact in float32 in any order)
while most sums need more than 17 significant bits (a reduced-precision or truncated sum is
caught), with no period in the index. Every rank checks every element of every iteration.
Rank 0 prints name=value lines (gloo_gbps, gloo_lat_us_p50, gloo_lat_us_p99, gloo_ok); exit
status 1 if any result was wrong.

With --coll NAME[,NAME...] (allreduce, reduce, reduce_scatter, broadcast, allgather, gather,
scatter, alltoall; --root R for the rooted ones) it runs those collectives instead, as
shouter-worker --coll does: --size is the per-rank block (the collective's count), each rank's
inputs are shouter-worker's (world blocks of them where the collective sends world blocks),
every output element is checked bit for bit as shouter-worker checks it, and the goodput
counts the --size bytes of the block per collective, over the mean time of the timed
collectives (each started after a barrier, timed at each rank): block bytes * 8 * iters /
summed seconds, as shouter-worker's goodput_gbps; rank 0 prints its mean over the ranks (what
scripts/bench.sh takes of the shouter ranks). Per collective: gloo_coll_NAME_gbps (or
"unsupported" when this PyTorch's Gloo process group refuses the collective: then
gloo_coll_NAME_error says why) and gloo_coll_NAME_ok, then gloo_ok. The Gloo calls: all_reduce,
reduce, reduce_scatter, broadcast, all_gather (into views of one tensor), gather, scatter,
all_to_all_single.

With --coll and --sweep SIZE[:ITERS][,...] it runs each named collective at each per-rank
block size (ITERS timed iterations, default --iters) instead, measured and checked as above;
rank 0 prints one line per point, "gloo_sweep coll=NAME world=N size=BYTES iters=I gbps=G
ok=0|1" (gbps=unsupported, once, for a collective the process group refuses), then gloo_ok
(scripts/bench.sh's goodput-against-size plot).
"""

import argparse
import os
import sys
import time


M32 = 0xFFFFFFFF
CHUNK = 1 << 20  # elements per step when filling or checking a tensor


# The input hash, as in app/worker/main.c. Written with + * % & ^ >> only, so that it works on
# Python ints and on torch int64 tensors alike; 32-bit products are split so that no
# intermediate leaves int64.
def mul32(x, c):
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & M32


def mix32(x):
    x = x ^ (x >> 16)
    x = mul32(x, 0x85EBCA6B)
    x = x ^ (x >> 13)
    x = mul32(x, 0xC2B2AE35)
    return x ^ (x >> 16)


def f32_odd_count(world):
    """Odd magnitudes 1, 3, ..., up to (2^24 - 1) / world: how many there are."""
    return ((0xFFFFFF // world) + 1) // 2


def val_int(nodd, rank, it, i):
    """shouter-worker's float32 input of rank at iteration it, index i, as an integer."""
    h = mix32((mix32((mix32((i & M32) ^ 0x5BD1E995) + (i >> 32) +
                      mul32(rank, 0x9E3779B9)) & M32) + mul32(it & M32, 0x27D4EB2F)) & M32)
    mag = 2 * ((h & 0x3FFFFFFF) % nodd) + 1
    neg = (h >> 31) & (h >> 30) & 1  # the top two bits set: one time in four
    return mag * (1 - 2 * neg)


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B") or "0"
    if s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


COLLS = ("allreduce", "reduce", "reduce_scatter", "broadcast", "allgather", "gather", "scatter",
         "alltoall")


def in_blocks(coll, world):
    """Blocks of --size in this rank's input: world where the collective sends world blocks."""
    return world if coll in ("reduce_scatter", "scatter", "alltoall") else 1


def out_blocks(coll, world):
    return world if coll in ("allgather", "gather", "alltoall") else 1


def is_unsupported(e):
    m = str(e)
    return "does not support" in m or "no support" in m or "not supported" in m


def run_colls(a, dist, torch):
    """--coll: each named collective, timed and checked as shouter-worker --coll does."""
    world, rank, root = a.world, a.rank, a.root
    nodd = f32_odd_count(world)

    def vals(r, it, lo, hi):
        return val_int(nodd, r, it, torch.arange(lo, hi, dtype=torch.int64))

    def fill(t, n, it, blocks):
        for lo in range(0, n * blocks, CHUNK):
            hi = min(n * blocks, lo + CHUNK)
            t[lo:hi].copy_(vals(rank, it, lo, hi).to(torch.float32))

    def want(coll, n, it):
        """This rank's expected output, or None where it receives nothing."""
        if coll in ("reduce", "gather") and rank != root:
            return None
        out = torch.empty(n * out_blocks(coll, world), dtype=torch.float32)
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            if coll in ("allreduce", "reduce", "reduce_scatter"):
                base = rank * n if coll == "reduce_scatter" else 0
                acc = torch.zeros(hi - lo, dtype=torch.int64)
                for r in range(world):
                    acc += vals(r, it, base + lo, base + hi)
                out[lo:hi].copy_(acc.to(torch.float32))
            elif coll == "broadcast":
                out[lo:hi].copy_(vals(root, it, lo, hi).to(torch.float32))
            elif coll == "scatter":
                out[lo:hi].copy_(vals(root, it, rank * n + lo, rank * n + hi).to(torch.float32))
            elif coll in ("allgather", "gather"):
                for b in range(world):
                    out[b * n + lo:b * n + hi].copy_(vals(b, it, lo, hi).to(torch.float32))
            else:  # alltoall: block b is rank b's block number <rank>
                for b in range(world):
                    out[b * n + lo:b * n + hi].copy_(
                        vals(b, it, rank * n + lo, rank * n + hi).to(torch.float32))
        return out

    def call(coll, inp, out):
        if coll == "allreduce":
            dist.all_reduce(inp, op=dist.ReduceOp.SUM)
        elif coll == "reduce":
            dist.reduce(inp, dst=root, op=dist.ReduceOp.SUM)
        elif coll == "reduce_scatter":
            dist.reduce_scatter(out, list(inp.chunk(world)), op=dist.ReduceOp.SUM)
        elif coll == "broadcast":
            dist.broadcast(inp, src=root)
        elif coll == "allgather":
            dist.all_gather(list(out.chunk(world)), inp)
        elif coll == "gather":
            dist.gather(inp, list(out.chunk(world)) if rank == root else None, dst=root)
        elif coll == "scatter":
            dist.scatter(out, list(inp.chunk(world)) if rank == root else None, src=root)
        else:
            dist.all_to_all_single(out, inp)

    def measure(coll, n, iters):
        """(mean goodput over the ranks in Gbit/s or None, refusal text or None, all ok)"""
        inp = torch.empty(n * in_blocks(coll, world), dtype=torch.float32)
        out = torch.empty(n * out_blocks(coll, world), dtype=torch.float32)
        # the in-place ones (all_reduce, reduce, broadcast) leave their result in the input
        res = inp if coll in ("allreduce", "reduce", "broadcast") else out
        ok = True
        total = 0.0
        error = None
        for it in range(a.warmup + iters):
            fill(inp, n, it, in_blocks(coll, world))
            dist.barrier()
            t0 = time.perf_counter()
            try:
                call(coll, inp, out)
            except RuntimeError as e:
                # refused by the process group before any traffic, at every rank alike
                if not is_unsupported(e):
                    raise
                error = str(e).splitlines()[0]
                break
            dt = time.perf_counter() - t0
            if it >= a.warmup:
                total += dt
            exp = want(coll, n, it)
            if exp is not None and not torch.equal(res, exp):
                bad = int((res != exp).sum().item())
                print(f"gloo_bench: rank {rank}: {coll} {n * 4} bytes iteration {it}: {bad} "
                      f"of {exp.numel()} elements wrong", file=sys.stderr)
                ok = False
        # every rank's goodput (mean over the ranks) and verdict
        gbps = n * 4 * 8 * iters / total / 1e9 if error is None and total > 0 else 0.0
        agg = torch.tensor([gbps, 0.0 if ok else 1.0], dtype=torch.float64)
        dist.all_reduce(agg)
        return (None if error is not None else agg[0].item() / world), error, agg[1].item() == 0

    allok = True
    if a.sweep is not None:
        lines = []
        for coll in a.coll:
            for size, iters in a.sweep:
                gbps, error, ok = measure(coll, size // 4, iters)
                allok = allok and ok
                head = f"gloo_sweep coll={coll} world={world} size={size // 4 * 4} iters={iters}"
                if error is not None:
                    lines.append(f"{head} gbps=unsupported ok=1")
                    break  # refused at one size: at every size
                lines.append(f"{head} gbps={gbps:.3f} ok={1 if ok else 0}")
    else:
        n = parse_size(a.size) // 4
        lines = [f"gloo_world={world}", f"gloo_size={n * 4}", f"gloo_iters={a.iters}",
                 f"gloo_root={root}"]
        for coll in a.coll:
            gbps, error, ok = measure(coll, n, a.iters)
            allok = allok and ok
            if error is not None:
                lines.append(f"gloo_coll_{coll}_gbps=unsupported")
                lines.append(f"gloo_coll_{coll}_error={error}")
            else:
                lines.append(f"gloo_coll_{coll}_gbps={gbps:.3f}")
            lines.append(f"gloo_coll_{coll}_ok={1 if ok else 0}")
    dist.destroy_process_group()
    if rank == 0:
        print("\n".join(lines))
        print(f"gloo_ok={1 if allok else 0}")
        sys.stdout.flush()
    return 0 if allok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="rank 0's address (TCP store)")
    ap.add_argument("--port", type=int, default=29500)
    ap.add_argument("--iface", default=None, help="GLOO_SOCKET_IFNAME")
    ap.add_argument("--size", default="64M",
                    help="goodput tensor bytes (float32); with --coll the per-rank block, "
                    "goodput counts these bytes per collective")
    ap.add_argument("--coll", default=None,
                    help="NAME[,NAME...]: run these collectives (" + ", ".join(COLLS) +
                    ") instead of the allreduce goodput and latency")
    ap.add_argument("--sweep", default=None, metavar="SIZE[:ITERS][,...]",
                    help="with --coll: each collective at each of these per-rank block sizes "
                    "(ITERS timed iterations each, default --iters); one gloo_sweep line each")
    ap.add_argument("--root", type=int, default=0,
                    help="root of reduce, broadcast, gather, scatter (default 0)")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--lat-size", default="4K", help="latency tensor bytes (float32)")
    ap.add_argument("--lat-iters", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--verify-last", action="store_true",
                    help="check only the last iteration of the --size allreduce (every "
                    "iteration's inputs still differ): the check of every element costs "
                    "world hashes per element, minutes at 64 MiB and N = 8 on 2 cores")
    ap.add_argument("--timeout-s", type=int, default=120)
    a = ap.parse_args()
    if a.coll is not None:
        a.coll = a.coll.split(",")
        for c in a.coll:
            if c not in COLLS:
                ap.error(f"--coll: unknown collective {c!r} (allowed: {', '.join(COLLS)})")
        if not 0 <= a.root < a.world:
            ap.error("--root: not a rank of the world")
        if a.iters < 1:
            ap.error("--iters: at least 1")
    if a.sweep is not None:
        if a.coll is None:
            ap.error("--sweep: needs --coll")
        pts = []
        for p in a.sweep.split(","):
            size, _, iters = p.partition(":")
            try:
                pt = (parse_size(size), int(iters) if iters else a.iters)
            except (ValueError, IndexError):
                ap.error(f"--sweep: bad point {p!r} (SIZE[:ITERS])")
            if pt[0] < 4 or pt[1] < 1:
                ap.error(f"--sweep: bad point {p!r} (at least 4 bytes, 1 iteration)")
            pts.append(pt)
        a.sweep = pts

    if a.iface:
        os.environ["GLOO_SOCKET_IFNAME"] = a.iface
    import datetime
    import torch
    import torch.distributed as dist

    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}",
                            rank=a.rank, world_size=a.world,
                            timeout=datetime.timedelta(seconds=a.timeout_s))

    if a.coll is not None:
        return run_colls(a, dist, torch)

    nodd = f32_odd_count(a.world)

    def fill(t, it):
        n = t.numel()
        for lo in range(0, n, CHUNK):
            idx = torch.arange(lo, min(n, lo + CHUNK), dtype=torch.int64)
            t[lo:lo + idx.numel()].copy_(val_int(nodd, a.rank, it, idx).to(torch.float32))

    def expected(n, it):
        # the exact sum (an integer below 2^24 in magnitude: exact in float32)
        out = torch.empty(n, dtype=torch.float32)
        for lo in range(0, n, CHUNK):
            idx = torch.arange(lo, min(n, lo + CHUNK), dtype=torch.int64)
            acc = torch.zeros(idx.numel(), dtype=torch.int64)
            for r in range(a.world):
                acc += val_int(nodd, r, it, idx)
            out[lo:lo + idx.numel()].copy_(acc.to(torch.float32))
        return out

    ok = True

    # goodput
    n = parse_size(a.size) // 4
    t = torch.empty(n, dtype=torch.float32)
    secs = []
    for it in range(a.warmup + a.iters):
        fill(t, it)
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        dt = time.perf_counter() - t0
        if it >= a.warmup:
            secs.append(dt)
        if a.verify_last and it < a.warmup + a.iters - 1:
            continue
        if not torch.equal(t, expected(n, it)):
            ok = False
    secs.sort()
    gbps = n * 4 * 8 / secs[len(secs) // 2] / 1e9

    # latency
    m = max(1, parse_size(a.lat_size) // 4)
    s = torch.empty(m, dtype=torch.float32)
    exp = expected(m, 0)
    lat = []
    dist.barrier()
    for it in range(a.lat_iters + 10):
        fill(s, 0)
        t0 = time.perf_counter()
        dist.all_reduce(s, op=dist.ReduceOp.SUM)
        dt = time.perf_counter() - t0
        if it >= 10:
            lat.append(dt * 1e6)
        if not torch.equal(s, exp):
            ok = False
    lat.sort()

    # every rank's verdict, summed
    bad = torch.tensor([0 if ok else 1], dtype=torch.int32)
    dist.all_reduce(bad)
    dist.destroy_process_group()
    if a.rank == 0:
        print(f"gloo_world={a.world}")
        print(f"gloo_size={n * 4}")
        print(f"gloo_gbps={gbps:.3f}")
        print(f"gloo_lat_size={m * 4}")
        print(f"gloo_lat_us_p50={lat[len(lat) // 2]:.1f}")
        print(f"gloo_lat_us_p99={lat[min(len(lat) - 1, int(len(lat) * 0.99))]:.1f}")
        print(f"gloo_ok={1 if int(bad.item()) == 0 else 0}")
        sys.stdout.flush()
    return 0 if int(bad.item()) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
