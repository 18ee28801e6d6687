# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The backend under torchrun, as a user starts it: `torchrun --standalone --nproc_per_node 2
script.py` in one worker namespace, the script calling dist.init_process_group("shouter")
with nothing but SHOUTER_BOX set (rank, world and the rendezvous store are torchrun's; the
job id is drawn by rank 0 and shared through that store). Both ranks sit on one host, so the
box sees two members at one address (kernel UDP sockets on different ports)."""

import os
import subprocess

# Debian's torch 1.13 under Python 3.11: torchrun's default --redirects 0 / --tee 0 parse to
# None (Python 3.11 no longer iterates an IntFlag's zero member), and it fails before it
# starts a rank ("'NoneType' object has no attribute 'get'"). 1 (stdout) parses.
DEBIAN_FIX = ("--redirects", "1", "--tee", "1")

SCRIPT = r'''
import json, os, sys
import torch
import torch.distributed as dist
import shouter.torch  # noqa: F401  (registers "shouter")

dist.init_process_group("shouter")
r, n = dist.get_rank(), dist.get_world_size()
assert n == int(os.environ["WORLD_SIZE"]) == 2, n
x = torch.full((1000,), float(r + 1))
dist.all_reduce(x)
assert torch.equal(x, torch.full((1000,), 3.0)), x[:4]
b = torch.arange(10, dtype=torch.int64) * (r + 7)
dist.broadcast(b, src=1)
assert torch.equal(b, torch.arange(10, dtype=torch.int64) * 8), b
out = [torch.empty(3) for _ in range(n)]
dist.all_gather(out, torch.full((3,), float(r)))
assert all(torch.equal(out[i], torch.full((3,), float(i))) for i in range(n)), out

torch.manual_seed(5)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(100 + r)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(16, 8, generator=g)).pow(2).sum().backward()
    opt.step()
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
got = [torch.empty_like(flat) for _ in range(n)]
dist.all_gather(got, flat)
assert torch.equal(got[0], got[1]), "parameters differ across ranks"
print(json.dumps({"rank": r, "ok": 1}), flush=True)
dist.destroy_process_group()
'''


def test_torchrun_two_ranks(cluster):
    path = os.path.join(cluster.tmp, "torchrun_script.py")
    with open(path, "w") as f:
        f.write(SCRIPT)
    env = cluster.env()
    env["SHOUTER_BOX"] = cluster.box
    for k in ("SHOUTER_JOB", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    p = subprocess.run(["ip", "netns", "exec", cluster.ns(0), "/usr/bin/python3", "-m",
                        "torch.distributed.run", "--standalone", "--nnodes", "1",
                        "--nproc_per_node", "2", *DEBIAN_FIX, path],
                       env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    oks = sorted(line for line in p.stdout.splitlines() if '"ok": 1' in line)
    assert len(oks) == 2, p.stdout[-2000:]
