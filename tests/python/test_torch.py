# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The torch.distributed backend "shouter" through a real box (run.sh's cluster): every
collective against Gloo's results in the same processes, DDP on 2 and 4 ranks (parameters
identical at every rank after every step, and within float tolerance of a Gloo run from the
same start and data), a rank that disagrees on the tensor order. Rank script: torch_rank.py."""

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RANK = os.path.join(HERE, "torch_rank.py")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_collectives_match_gloo(run_ranks, n):
    res = run_ranks(RANK, n, ["coll"], timeout=240)
    for r in res:
        assert r.rec.get("bad") == [], f"rank {r.rank}: {r.rec}"
        assert r.rec["jobs"] == res[0].rec["jobs"]     # every rank in the same two jobs


@pytest.mark.parametrize("order", ["priority", "fifo"])
@pytest.mark.parametrize("n", [2, 4])
def test_ddp_identical_and_close_to_gloo(run_ranks, n, order):
    steps = 10
    res = run_ranks(RANK, n, ["ddp", steps, order], timeout=300)
    crcs = [r.rec["crcs"] for r in res]
    assert len(crcs[0]) == steps
    assert all(c == crcs[0] for c in crcs), "parameters differ between ranks"
    for r in res:
        assert r.rec["maxdiff"] < 1e-4, f"rank {r.rank}: {r.rec['diffs']}"
        if order == "priority":
            assert r.rec["table"] > 1           # buckets registered by priority_hook


def test_rank_disagreeing_on_tensor_order(run_ranks):
    res = run_ranks(RANK, 2, ["badorder"], timeout=120,
                    env={"SHOUTER_ORDER": "priority"})
    bad = res[1].rec
    assert "disagree on operation" in bad["error"], bad
    assert "tensor 0" in bad["error"] and "tensor 1" in bad["error"], bad
    good = res[0].rec
    assert good["error"], good                  # aborted by the box: never a sum
    assert "different collectives" in good["error"] or "aborted" in good["error"], good
    for r in res:
        assert r.rec["sums"] == [1.0, 1.0], r.rec   # the tensors were not touched


@pytest.mark.skipif(not os.environ.get("SHR_PY_PERF"), reason="figures only (SHR_PY_PERF=1)")
@pytest.mark.parametrize("order", ["priority", "fifo"])
def test_perf_figures(run_ranks, order):
    """Not a check: the mean time of an allreduce of 4 B and 1 MiB through the backend (each
    order) and through Gloo, and a DDP step, printed (pytest -s)."""
    n = int(os.environ.get("SHR_PY_PERF_RANKS", "4"))
    res = run_ranks(RANK, n, ["perf", 200], timeout=600, env={"SHOUTER_ORDER": order})
    print(f"\nperf {order} n={n}: {res[0].rec}")
    res = run_ranks(RANK, n, ["ddp", 30, order], timeout=600)
    print(f"ddp {order} n={n}: step_ms={res[0].rec['step_ms']} stats={res[0].rec['stats']}")
