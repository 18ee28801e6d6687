# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The harness of the Python tests: rank processes in network namespaces, through a real box.

tests/python/run.sh starts the cluster (tests/e2e/cluster.sh: one shouter-agg on DPDK in
$SHR_PY_PREFIX-agg at 198.18.0.1, worker namespaces $SHR_PY_PREFIX-w0 .. -w<N-1> with kernel
addresses 198.18.0.10+i) and then runs pytest here; without it (no SHR_PY_PREFIX in the
environment) every test that uses the fixtures below is skipped. By hand:

    flock /tmp/shr-e2e.lock meson test -C BUILD --suite python      # all of them
    flock /tmp/shr-e2e.lock tests/python/run.sh tests/python/test_binding.py -k gather
    (SHR_BUILD=BUILD; run.sh --ranks N makes N worker namespaces, default 4)

Fixtures:
  run_ranks(script, n, args=(), *, timeout=120, env=None, job=None, check=True)
      -> list of Rank
      Runs n rank processes, rank i as `ip netns exec <prefix>-w<i> /usr/bin/python3
      script args...`, all in one new job (a fresh job id per call unless job= is given),
      waits for all of them (killing, by PID, any still alive after timeout seconds) and
      returns their results in rank order. script is a path to a .py file, or Python source
      text (dedented, run after `from shr_rank import *`, see shr_rank.py: rank, world, job,
      box, comm(**kw), emit(**kw), save(name, array), np; torch is imported only if the
      text says so). check=True asserts that every rank exited 0 (the message carries each
      failing rank's stderr tail). The rank processes see, besides their own variables
      (SHR_PY_RANK, SHR_PY_WORLD, SHR_PY_JOB, SHR_PY_OUT: a directory for the rank's
      files), the harness's environment and PYTHONPATH = <build>/lib/python + tests/python.
  Rank: .rank .rc .out .err (text), .records (the JSON objects the rank printed, one per
      stdout line: emit()), .rec (the last one, {} if none), .load(name) (the array it
      save()d), .dir (its SHR_PY_OUT).
  cluster: .prefix .n .box .build .top .tmp (a scratch directory), .next_job(),
      .ns(i) (rank i's namespace name), .agg_ns; .boxes (every box's address: run.sh
      --boxes B starts B, box K > 1 in <prefix>-aggK at 198.18.0.K), .telemetry(k, cmd)
      (box k's reply to a DPDK telemetry command, k from 1, as a dict), .kill_box(k)
      (SIGKILL box k, by its pid, and wait until it is gone; run.sh then expects that).

Ranks on kernel UDP sockets, so ranks need no EAL. More ranks than namespaces: run.sh
--ranks. The helpers H2 and H3 add (torch backend, DDP) reuse run_ranks() with their own
scripts.
"""

import itertools
import json
import os
import subprocess
import tempfile
import textwrap
import time

import pytest

PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))


class Cluster:
    def __init__(self):
        self.prefix = os.environ["SHR_PY_PREFIX"]
        self.n = int(os.environ["SHR_PY_N"])
        self.box = os.environ["SHR_PY_BOX"]
        self.agg_ns = os.environ.get("SHR_PY_AGG_NS", self.prefix + "-agg")
        self.build = os.environ["SHR_BUILD"]
        self.top = os.environ.get("SHR_PY_TOP", os.path.dirname(os.path.dirname(HERE)))
        self.tmp = tempfile.mkdtemp(prefix="shr-py-", dir=os.environ.get("SHR_PY_DIR"))
        self.boxes = os.environ.get("SHR_PY_BOXES", self.box).split(",")
        self.box_ns = os.environ.get("SHR_PY_BOX_NS", self.agg_ns).split(",")
        self.box_pids = [int(p) for p in os.environ.get("SHR_PY_BOX_PIDS", "").split(",") if p]
        self.killed = set()
        # job ids: unique within this box's life (one box per run.sh)
        self._jobs = itertools.count(1000)
        self._scripts = itertools.count()

    def next_job(self):
        return next(self._jobs)

    def telemetry(self, k, cmd):
        """Box k's (1..) reply to one DPDK telemetry command, e.g. "/shouter/stats"."""
        ns = self.box_ns[k - 1]
        p = subprocess.run(["ip", "netns", "exec", ns, "dpdk-telemetry.py", "-f", ns],
                           input=cmd + "\n", capture_output=True, text=True, timeout=30)
        for line in p.stdout.splitlines():
            line = line.strip()
            if line.startswith("--> "):
                line = line[4:].strip()
            if line.startswith("{"):
                return json.loads(line)[cmd]
        raise AssertionError(f"box {k}: no telemetry reply to {cmd}: {p.stdout} {p.stderr}")

    def kill_box(self, k):
        """SIGKILL box k (its pid from run.sh), then wait until it is no longer running
        (a zombie until run.sh reaps it: the marker file tells run.sh to expect that)."""
        pid = self.box_pids[k - 1]
        open(os.path.join(os.environ["SHR_PY_DIR"], f"box{k}.killed"), "w").close()
        self.killed.add(k)
        os.kill(pid, 9)
        while True:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                # gone and reaped: before the open, or between the open and the read (ESRCH)
                return
            if state in ("Z", "X"):
                return
            time.sleep(0.01)

    def ns(self, i):
        return f"{self.prefix}-w{i}"

    def env(self):
        e = dict(os.environ)
        pp = [os.path.join(self.build, "lib", "python"), HERE]
        if e.get("PYTHONPATH"):
            pp.append(e["PYTHONPATH"])
        e["PYTHONPATH"] = ":".join(pp)
        e["PYTHONDONTWRITEBYTECODE"] = "1"
        return e


class Rank:
    def __init__(self, rank, rc, out, err, outdir):
        self.rank, self.rc, self.out, self.err, self.dir = rank, rc, out, err, outdir
        self.records = []
        for line in out.splitlines():
            if line.startswith("{"):
                try:
                    self.records.append(json.loads(line))
                except ValueError:
                    pass
        self.rec = self.records[-1] if self.records else {}

    def load(self, name):
        import numpy as np
        return np.load(os.path.join(self.dir, name + ".npy"))

    def __repr__(self):
        return f"<Rank {self.rank} rc={self.rc} rec={self.rec}>"

    def tail(self, lines=15):
        return "\n".join(self.err.splitlines()[-lines:])


def _script_file(cluster, script):
    if "\n" not in script and script.endswith(".py") and os.path.exists(script):
        return os.path.abspath(script)
    src = "from shr_rank import *\n" + textwrap.dedent(script)
    path = os.path.join(cluster.tmp, f"script{next(cluster._scripts)}.py")
    with open(path, "w") as f:
        f.write(src)
    return path


def _run_ranks(cluster, script, n, args=(), *, timeout=120, env=None, job=None, check=True):
    if n > cluster.n:
        pytest.skip(f"{n} ranks > {cluster.n} namespaces (run.sh --ranks)")
    path = _script_file(cluster, script)
    job = cluster.next_job() if job is None else job
    base = cluster.env()
    if env:
        base.update({k: str(v) for k, v in env.items()})
    procs = []
    try:
        for i in range(n):
            d = os.path.join(cluster.tmp, f"job{job}-rank{i}")
            os.makedirs(d, exist_ok=True)
            e = dict(base, SHR_PY_RANK=str(i), SHR_PY_WORLD=str(n), SHR_PY_JOB=str(job),
                     SHR_PY_OUT=d)
            out = open(os.path.join(d, "stdout"), "w+")
            err = open(os.path.join(d, "stderr"), "w+")
            p = subprocess.Popen(["ip", "netns", "exec", cluster.ns(i), PY, path,
                                  *map(str, args)], env=e, stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL)
            procs.append((p, out, err, d))
        deadline = time.monotonic() + timeout
        timed_out = []
        for i, (p, _, _, _) in enumerate(procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out.append(i)
                p.kill()
                p.wait()
    finally:
        for p, _, _, _ in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    res = []
    for i, (p, out, err, d) in enumerate(procs):
        out.seek(0)
        err.seek(0)
        res.append(Rank(i, p.returncode, out.read(), err.read(), d))
        out.close()
        err.close()
    if timed_out:
        pytest.fail(f"ranks {timed_out} still running after {timeout} s (killed): " +
                    "; ".join(f"rank {r.rank}: {r.tail(5)}" for r in res))
    if check:
        bad = [r for r in res if r.rc != 0]
        assert not bad, "\n".join(f"rank {r.rank} exit {r.rc}:\n{r.tail()}" for r in bad)
    return res


@pytest.fixture(scope="session")
def cluster():
    if "SHR_PY_PREFIX" not in os.environ:
        pytest.skip("no cluster: run through tests/python/run.sh (root)")
    return Cluster()


@pytest.fixture
def run_ranks(cluster):
    def run(script, n, args=(), **kw):
        return _run_ranks(cluster, script, n, args, **kw)
    return run
