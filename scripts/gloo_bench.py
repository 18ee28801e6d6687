# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Gloo allreduce baseline (PyTorch torch.distributed, backend gloo), one rank per process.

Run one process per rank, each in its worker namespace (scripts/bench.sh does this):

    ip netns exec P-wI /usr/bin/python3 scripts/gloo_bench.py --rank I --world N \\
        --master 198.18.0.10 --iface shr0

Measures what shouter-worker measures, on the same tensors: the goodput of a --size float32
allreduce (tensor bytes * 8 / seconds per allreduce) and the p50/p99 latency of a --lat-size
allreduce. Inputs are small integers derived from (rank, iteration, index), so the sum is exact
and every rank checks it. Rank 0 prints name=value lines (gloo_gbps, gloo_lat_us_p50,
gloo_lat_us_p99, gloo_ok); exit status 1 if any result was wrong.
"""

import argparse
import os
import sys
import time


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().rstrip("B") or "0"
    if s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="rank 0's address (TCP store)")
    ap.add_argument("--port", type=int, default=29500)
    ap.add_argument("--iface", default=None, help="GLOO_SOCKET_IFNAME")
    ap.add_argument("--size", default="64M", help="goodput tensor bytes (float32)")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--lat-size", default="4K", help="latency tensor bytes (float32)")
    ap.add_argument("--lat-iters", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--timeout-s", type=int, default=120)
    a = ap.parse_args()

    if a.iface:
        os.environ["GLOO_SOCKET_IFNAME"] = a.iface
    import datetime
    import torch
    import torch.distributed as dist

    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}",
                            rank=a.rank, world_size=a.world,
                            timeout=datetime.timedelta(seconds=a.timeout_s))

    def fill(t, it):
        # small integers: exact in float32, sum over ranks exact and order-independent
        n = t.numel()
        idx = torch.arange(n, dtype=torch.int64)
        t.copy_(((idx * 7 + a.rank * 13 + it * 5) % 61 - 30).to(torch.float32))

    def expected(n, it):
        idx = torch.arange(n, dtype=torch.int64)
        acc = torch.zeros(n, dtype=torch.int64)
        for r in range(a.world):
            acc += (idx * 7 + r * 13 + it * 5) % 61 - 30
        return acc.to(torch.float32)

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
        if it == a.warmup + a.iters - 1 and not torch.equal(t, expected(n, it)):
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
