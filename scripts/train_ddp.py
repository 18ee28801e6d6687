# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Train a small MLP on scikit-learn's digits with PyTorch DDP: one rank per process.

Run one process per rank (scripts/train.sh runs one in each worker namespace). The rank, the
world and the rendezvous come from the environment, as torchrun sets them: RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT (the TCP store at rank 0); GLOO_SOCKET_IFNAME picks Gloo's
interface. --backend shouter imports shouter.torch, which registers the "shouter" backend
(its own variables: SHOUTER_BOX, ...; see lib/python/shouter/torch.py); --backend gloo is
PyTorch's Gloo; --hook keeps the Gloo group for everything but sends DDP's gradient buckets
through the box (shouter.hook.allreduce_hook; SHOUTER_BOX, SHOUTER_JOB).

The data: sklearn.datasets.load_digits() (1797 8x8 images, shipped with Debian's
python3-sklearn, nothing downloaded), pixels / 16, a fixed stratified train/test split
(--split-seed), the training set shuffled per epoch by a generator seeded with (--seed,
epoch), the same at every rank. Every global batch of --batch samples is split between the
ranks (rank r takes samples r, r + world, ...), so DDP's averaged gradient is the whole
batch's. The model: 64 -> --hidden -> --hidden -> 10, ReLU, SGD with momentum, the same
initial weights at every rank (seeded; DDP broadcasts rank 0's anyway).

After every optimizer step each rank hashes its parameters (BLAKE2b over their bytes, in
order); the hashes, the step times (zero_grad .. optimizer.step, the hashing excluded) and the
final test accuracy go to --out (JSON). `train_ddp.py --summary DIR` (no rendezvous) reads the
rank files of each backend from DIR/BACKEND-rI.json and prints one line per backend and the
last line `train: shouter_acc=A gloo_acc=B identical=I step_vs_gloo=R` (A, B: test accuracy in
percent, rank 0's; I: 1 when shouter's parameters were bit-identical across the ranks after
every step; R: shouter's mean step time over Gloo's). Exit status 1 when a rank fails or (with
--summary) when the result is not what it should be.
"""

import argparse
import glob
import hashlib
import json
import os
import sys
import time


def env_int(name):
    v = os.environ.get(name)
    if v is None:
        sys.exit(f"train_ddp: {name} is not set (the launcher sets RANK, WORLD_SIZE, "
                 "MASTER_ADDR, MASTER_PORT)")
    try:
        return int(v)
    except ValueError:
        sys.exit(f"train_ddp: {name}={v!r} is not an integer")


def load_data(split_seed, test_frac):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=test_frac, random_state=split_seed, stratify=y)


def param_hash(model):
    h = hashlib.blake2b(digest_size=16)
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()


def train(a):
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = env_int("RANK")
    world = env_int("WORLD_SIZE")
    for v in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(v):
            sys.exit(f"train_ddp: {v} is not set")
    if a.batch % world:
        sys.exit(f"train_ddp: --batch {a.batch} is not a multiple of the world ({world})")
    torch.set_num_threads(a.threads)

    backend = a.backend
    hook_state = None
    if backend == "shouter":
        try:
            import shouter.torch  # noqa: F401  (registers the backend)
        except ImportError as e:
            sys.exit(f"train_ddp: cannot import shouter.torch ({e}): PYTHONPATH must hold "
                     "the shouter package (the build tree's lib/python, or meson install)")
    import datetime
    dist.init_process_group("gloo" if backend == "hook" else backend,
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=a.timeout_s))

    xtr, xte, ytr, yte = load_data(a.split_seed, a.test_frac)
    xtr, xte = torch.from_numpy(xtr), torch.from_numpy(xte)
    ytr, yte = torch.from_numpy(ytr), torch.from_numpy(yte)

    torch.manual_seed(a.seed)
    model = nn.Sequential(nn.Linear(64, a.hidden), nn.ReLU(), nn.Linear(a.hidden, a.hidden),
                          nn.ReLU(), nn.Linear(a.hidden, 10))
    ddp = DDP(model)
    if backend == "hook":
        try:
            import shouter.hook
        except ImportError as e:
            sys.exit(f"train_ddp: cannot import shouter.hook ({e})")
        hook_state = shouter.hook.HookState.from_env()
        ddp.register_comm_hook(hook_state, shouter.hook.allreduce_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=a.momentum)
    lossf = nn.CrossEntropyLoss()

    n = xtr.shape[0]
    nb = n // a.batch
    hashes = []
    step_s = []
    loss = float("nan")
    for ep in range(a.epochs):
        perm = torch.from_numpy(np.random.RandomState([a.seed, ep]).permutation(n))
        for b in range(nb):
            idx = perm[b * a.batch + rank:(b + 1) * a.batch:world]
            xb, yb = xtr[idx], ytr[idx]
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=False)
            out = lossf(ddp(xb), yb)
            out.backward()
            opt.step()
            step_s.append(time.perf_counter() - t0)
            loss = out.item()
            hashes.append(param_hash(model))
        if rank == 0 and a.verbose:
            print(f"train_ddp: {backend} epoch {ep + 1}/{a.epochs} loss {loss:.4f}",
                  file=sys.stderr, flush=True)

    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item() * 100.0
    if hook_state is not None:
        hook_state.close()
    dist.destroy_process_group()
    res = {"backend": backend, "rank": rank, "world": world, "epochs": a.epochs,
           "batch": a.batch, "steps": len(step_s), "warmup": a.warmup, "acc": acc,
           "loss": loss, "step_s": step_s, "hashes": hashes}
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f)
        os.replace(tmp, a.out)
    print(f"train_ddp: {backend} rank {rank}/{world}: {len(step_s)} steps, test accuracy "
          f"{acc:.2f}%, final loss {loss:.4f}, hash {hashes[-1] if hashes else '-'}",
          flush=True)
    return 0


def summarize_backend(d, backend):
    """(acc, identical, mean step seconds, text) of BACKEND's rank files in D, or None."""
    files = sorted(glob.glob(os.path.join(d, f"{backend}-r*.json")))
    if not files:
        return None
    rs = []
    for f in files:
        with open(f) as fh:
            rs.append(json.load(fh))
    rs.sort(key=lambda r: r["rank"])
    world = rs[0]["world"]
    if [r["rank"] for r in rs] != list(range(world)):
        return None, f"{backend}: rank files {[r['rank'] for r in rs]} of a world of {world}"
    steps = rs[0]["steps"]
    if any(r["steps"] != steps for r in rs):
        return None, f"{backend}: ranks ran different numbers of steps"
    first_diff = None
    for s in range(steps):
        if any(r["hashes"][s] != rs[0]["hashes"][s] for r in rs[1:]):
            first_diff = s
            break
    identical = 1 if first_diff is None else 0
    w = rs[0]["warmup"] if steps > rs[0]["warmup"] else 0
    times = [t for r in rs for t in r["step_s"][w:]]
    mean = sum(times) / len(times) if times else float("nan")
    srt = sorted(times)
    p50 = srt[len(srt) // 2] if srt else float("nan")
    accs = [r["acc"] for r in rs]
    txt = (f"{backend}: world {world}, {steps} steps, test accuracy {accs[0]:.2f}% (rank 0"
           + ("" if len(set(accs)) == 1 else f"; ranks: {', '.join(f'{x:.2f}' for x in accs)}")
           + "), parameters bit-identical across ranks after every step: "
           + ("yes" if identical else f"NO (first differ after step {first_diff + 1})")
           + f", step time mean {mean * 1e3:.3f} ms p50 {p50 * 1e3:.3f} ms"
           + f" (all ranks, steps after the first {w})")
    return (accs[0], identical, mean), txt


def summary(a):
    res = {}
    bad = []
    for be in ("shouter", "gloo", "hook"):
        r = summarize_backend(a.summary, be)
        if r is None:
            continue
        v, txt = r
        print(txt)
        if v is None:
            bad.append(txt)
        else:
            res[be] = v
    for be in ("shouter", "gloo"):
        if be not in res:
            bad.append(f"no complete result of {be} in {a.summary}")
    nan = float("nan")
    sa, si, st = res.get("shouter", (nan, 0, nan))
    ga, _, gt = res.get("gloo", (nan, 0, nan))
    ratio = st / gt if gt > 0 else nan
    if "shouter" in res and not si:
        bad.append("shouter: parameters not bit-identical across ranks after every step")
    if "shouter" in res and "gloo" in res and abs(sa - ga) > a.max_acc_diff:
        bad.append(f"shouter's accuracy {sa:.2f}% is more than {a.max_acc_diff} points from "
                   f"gloo's {ga:.2f}%")
    for b in bad:
        print(f"train: FAILED: {b}", file=sys.stderr)
    sys.stderr.flush()
    print(f"train: shouter_acc={sa:.2f} gloo_acc={ga:.2f} identical={si} "
          f"step_vs_gloo={ratio:.3f}", flush=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("shouter", "gloo", "hook"), default="shouter",
                    help="shouter: the shouter process group; gloo: Gloo; hook: Gloo with "
                    "shouter.hook.allreduce_hook for the gradients (default shouter)")
    ap.add_argument("--epochs", type=int, default=20, help="default 20")
    ap.add_argument("--batch", type=int, default=64,
                    help="global batch, a multiple of the world (default 64)")
    ap.add_argument("--hidden", type=int, default=128, help="hidden units (default 128)")
    ap.add_argument("--lr", type=float, default=0.05, help="default 0.05")
    ap.add_argument("--momentum", type=float, default=0.9, help="default 0.9")
    ap.add_argument("--seed", type=int, default=1, help="weights and shuffling (default 1)")
    ap.add_argument("--split-seed", type=int, default=0, help="train/test split (default 0)")
    ap.add_argument("--test-frac", type=float, default=0.25, help="default 0.25")
    ap.add_argument("--warmup", type=int, default=5,
                    help="steps left out of the mean step time (default 5)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--timeout-s", type=int, default=300, help="process group timeout")
    ap.add_argument("--out", default=None, help="this rank's results (JSON)")
    ap.add_argument("--verbose", action="store_true", help="rank 0 prints the loss per epoch")
    ap.add_argument("--summary", metavar="DIR", default=None,
                    help="do not train: summarise DIR/BACKEND-rI.json, print the last line")
    ap.add_argument("--max-acc-diff", type=float, default=1.0,
                    help="--summary fails when the accuracies differ by more (default 1.0)")
    a = ap.parse_args()
    if a.summary is not None:
        return summary(a)
    if a.epochs < 1 or a.batch < 1 or a.hidden < 1:
        ap.error("--epochs, --batch and --hidden must be at least 1")
    return train(a)


if __name__ == "__main__":
    sys.exit(main())
