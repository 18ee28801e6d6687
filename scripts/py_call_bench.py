#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The Python binding's per-call overhead: one rank of a job that times 4-byte allreduces
called from Python against the same calls made by a C loop, in the same process, on the
same communicator and box, in alternating blocks (so that both see the same load).

    py_call_bench.py --box A --job J --rank R --world W [--iters 50] [--blocks 60]
                     [--port P]

Every rank runs the same blocks (a barrier before each): a C block (Comm._c_allreduce_loop:
shr_comm_allreduce() in a C loop, no Python per call), a numpy block (c.allreduce(x) per
call, x a float32 numpy array of one element) and a torch block (the same with a CPU
tensor). Rank 0 prints, per call, the median over the blocks of each block's mean time:
    py_call_c_us=      C loop
    py_call_numpy_us=  Python, numpy array
    py_call_torch_us=  Python, torch tensor
the binding's own cost, without the network: calls of 0 elements (they send nothing), the
Python loop's mean minus the C loop's, median of 5 rounds of 20000 calls:
    py_call_dry_us_0b= numpy
    py_call_torch_dry_us_0b= torch
and the difference of the medians above (Python per call - C per call), last:
    py_call_us_4b=     numpy - C (the binding's overhead per call)
    py_call_torch_us_4b= torch - C
scripts/py_call_bench.sh runs it on a box and namespaces of its own; scripts/bench.sh on
its cluster.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import shouter


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--box", required=True)
    ap.add_argument("--port", type=int)
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--iters", type=int, default=50, help="calls per block")
    ap.add_argument("--blocks", type=int, default=60, help="blocks of each kind")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    c = shouter.Comm(a.box, port=a.port, job=a.job, rank=a.rank, world=a.world,
                     dtype="float32", timeout_ms=20000)
    x = np.zeros(1, np.float32)
    t = torch.zeros(1) if torch is not None else None
    per = {"c": [], "numpy": [], "torch": []}
    n = a.iters
    for b in range(a.blocks + 1):       # block 0 warms up, not counted
        c.barrier()
        ns = c._c_allreduce_loop(x, n)
        c.barrier()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            c.allreduce(x)
        t1 = time.perf_counter_ns()
        tt = None
        if t is not None:
            c.barrier()
            t2 = time.perf_counter_ns()
            for _ in range(n):
                c.allreduce(t)
            tt = time.perf_counter_ns() - t2
        if b == 0:
            continue
        per["c"].append(ns / n / 1e3)
        per["numpy"].append((t1 - t0) / n / 1e3)
        if tt is not None:
            per["torch"].append(tt / n / 1e3)
    # the binding alone: calls of 0 elements send nothing (no network, no box)
    z = np.zeros(0, np.float32)
    zt = torch.zeros(0) if torch is not None else None
    dry = {"c": [], "numpy": [], "torch": []}
    m = 20000
    for _ in range(5):
        dry["c"].append(c._c_allreduce_loop(z, m) / m / 1e3)
        t0 = time.perf_counter_ns()
        for _ in range(m):
            c.allreduce(z)
        dry["numpy"].append((time.perf_counter_ns() - t0) / m / 1e3)
        if zt is not None:
            t0 = time.perf_counter_ns()
            for _ in range(m):
                c.allreduce(zt)
            dry["torch"].append((time.perf_counter_ns() - t0) / m / 1e3)
    c.close()
    if a.rank != 0:
        return 0
    def med(v):
        return statistics.median(v) if v else float("nan")

    def diff(k):
        return med(per[k]) - med(per["c"])

    print(f"py_call_c_us={med(per['c']):.2f}")
    print(f"py_call_numpy_us={med(per['numpy']):.2f}")
    print(f"py_call_torch_us={med(per['torch']):.2f}")
    print(f"py_call_dry_us_0b={med([p - q for p, q in zip(dry['numpy'], dry['c'])]):.3f}")
    print(f"py_call_torch_dry_us_0b={med([p - q for p, q in zip(dry['torch'], dry['c'])]):.3f}")
    print(f"py_call_us_4b={diff('numpy'):.2f}")
    print(f"py_call_torch_us_4b={diff('torch'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
