# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The per-job message authentication code from Python (run.sh --mac-job J: box 1 has a static
job J of 2 float32 ranks with mac = 1 and the secret run.sh wrote): Comm(mac=True,
secret_file=...) joins it, and its allreduce is exact."""

import os


def test_mac_job(run_ranks):
    job = int(os.environ["SHR_PY_MAC_JOB"])     # run.sh --mac-job: not optional here
    res = run_ranks("""
        import os
        c = comm(mac=True, secret_file=os.environ["MAC_SECRET"], timeout_ms=20000)
        x = np.full(5000, rank + 1, np.float32)
        c.allreduce(x)
        emit(ok=bool((x == 3).all()))
        c.close()
    """, 2, job=job, env={"MAC_SECRET": os.environ["SHR_PY_MAC_SECRET"]})
    assert all(r.rec["ok"] for r in res), [r.tail() for r in res]
