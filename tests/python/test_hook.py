# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""shouter.hook: DDP on a Gloo process group with the gradient buckets through the box.

Each rank trains the same small model twice on its own data: with plain Gloo DDP, then with
Gloo DDP + shouter.hook.allreduce_hook (a HookState joined to the test's job). The hooked
run's parameters must be bit-identical at every rank and equal to the plain run's within
float tolerance; the hook must have sent every bucket of every step. A rank whose hook is a
step ahead makes the box abort the job: backward() raises at every rank (no hang).
"""

import numpy as np

RANK_SCRIPT = r"""
import datetime, hashlib
import torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
import shouter.hook

steps, cap_mb, skew = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(1)
os.environ.setdefault("GLOO_SOCKET_IFNAME", "shr0")
dist.init_process_group("gloo", init_method=f"tcp://198.18.0.10:{29600 + job % 1000}",
                        rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))

def train(hook):
    torch.manual_seed(3)
    m = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 10))
    # DDP's first bucket is 1 MiB whatever bucket_cap_mb says (PyTorch's documented knob)
    dist._DEFAULT_FIRST_BUCKET_BYTES = min(1 << 20, int(cap_mb * (1 << 20)))
    ddp = DDP(m, bucket_cap_mb=cap_mb)
    st = None
    if hook:
        st = shouter.hook.HookState(box, job=job, rank=rank, world=world, timeout_ms=20000)
        st.step = skew if rank == world - 1 else 0
        ddp.register_comm_hook(st, shouter.hook.allreduce_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)
    err = None
    try:
        for i in range(steps):
            x = torch.randn(8, 32, generator=g)
            y = torch.randint(0, 10, (8,), generator=g)
            opt.zero_grad()
            nn.functional.cross_entropy(ddp(x), y).backward()
            opt.step()
    except Exception as e:
        err = f"{type(e).__name__}: {e}"
    calls = st.calls if st else 0
    if st:
        st.close()
    p = torch.cat([q.detach().reshape(-1) for q in m.parameters()]).numpy().copy()
    return p, calls, err

plain, _, err0 = train(False)
hooked, calls, err = train(True)
save("plain", plain)
save("hooked", hooked)
emit(calls=calls, err=err, err0=err0,
     hash=hashlib.blake2b(hooked.tobytes(), digest_size=16).hexdigest())
"""


def check_ddp(run_ranks, n, steps, cap_mb):
    rs = run_ranks(RANK_SCRIPT, n, (steps, cap_mb, 0), timeout=240)
    for r in rs:
        assert r.rec.get("err0") is None, f"rank {r.rank}: plain Gloo DDP: {r.rec['err0']}"
        assert r.rec.get("err") is None, f"rank {r.rank}: DDP with the hook: {r.rec['err']}"
    calls = {r.rec["calls"] for r in rs}
    assert len(calls) == 1 and calls.pop() >= steps, [r.rec["calls"] for r in rs]
    h0 = rs[0].load("hooked")
    for r in rs[1:]:
        h = r.load("hooked")
        # (a bool: pytest would diff the two byte strings for minutes)
        same = h.tobytes() == h0.tobytes()
        assert same, f"rank {r.rank}'s parameters differ from rank 0's by up to " \
            f"{np.abs(h - h0).max()} ({np.count_nonzero(h != h0)} of {h.size} differ)"
    plain = rs[0].load("plain")
    np.testing.assert_allclose(h0, plain, rtol=1e-4, atol=1e-5)
    return rs


def test_hook_ddp_2_ranks(run_ranks):
    rs = check_ddp(run_ranks, 2, 8, 25.0)
    assert rs[0].rec["calls"] >= 8


def test_hook_ddp_2_ranks_many_buckets(run_ranks):
    # buckets of ~40 KiB: several per step (the 256x256 layer alone is 256 KiB; 16 calls in
    # 6 steps here)
    rs = check_ddp(run_ranks, 2, 6, 0.04)
    assert rs[0].rec["calls"] >= 2 * 6, rs[0].rec


def test_hook_ddp_4_ranks(run_ranks):
    rs = check_ddp(run_ranks, 4, 6, 0.04)
    assert rs[0].rec["calls"] >= 2 * 6, rs[0].rec


def test_hook_step_mismatch_fails_every_rank(run_ranks):
    # the last rank's hook counts steps from 5: the box sees two identities for one call
    # and aborts the job; every rank's backward() must raise (not hang, not sum)
    rs = run_ranks(RANK_SCRIPT, 2, (3, 25.0, 5), timeout=240)
    for r in rs:
        assert r.rec.get("err0") is None, r.rec
        assert r.rec.get("err"), f"rank {r.rank} trained through a mismatched job: {r.rec}"
    assert any("step" in r.rec["err"] for r in rs), [r.rec["err"] for r in rs]
