# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""What a rank process of the Python tests imports (conftest.py: run_ranks()).

    rank, world, job, box      this rank's place in the job run_ranks() made
    comm(**kw)                 shouter.Comm(box, job=job, rank=rank, world=world, **kw)
    emit(**kw)                 one JSON line on stdout (Rank.records / Rank.rec)
    save(name, array)          <SHR_PY_OUT>/<name>.npy (Rank.load(name))
    error_record(e)            a shouter.Error as a dict (errno, strerror, abort)
"""

import json
import os
import sys

import numpy as np

import shouter

rank = int(os.environ["SHR_PY_RANK"])
world = int(os.environ["SHR_PY_WORLD"])
job = int(os.environ["SHR_PY_JOB"])
box = os.environ["SHR_PY_BOX"]
outdir = os.environ.get("SHR_PY_OUT", ".")

__all__ = ["rank", "world", "job", "box", "outdir", "comm", "emit", "save", "error_record",
           "np", "shouter", "os", "sys"]


def comm(**kw):
    kw.setdefault("timeout_ms", 20000)
    return shouter.Comm(box, job=job, rank=rank, world=world, **kw)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def save(name, array):
    np.save(os.path.join(outdir, name + ".npy"), np.asarray(array))


def error_record(e):
    return {"type": type(e).__name__, "errno": getattr(e, "errno", None),
            "strerror": getattr(e, "strerror", None), "abort": getattr(e, "abort", None),
            "str": str(e)}
