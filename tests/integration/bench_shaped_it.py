#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""scripts/bench_shaped.sh's command line and scripts/shaped_tool.py's arithmetic, no root.

bench_shaped_it.py BENCH_SHAPED_SH SHAPED_TOOL_PY

bench_shaped.sh --help exits 0 with its usage on stdout; every bad argument (unknown option,
a rate tc would not take, a world outside 2..64, a bad size or iteration count, an option
without its value) exits 2 naming it on stderr, before anything is created (the arguments are
checked before the check for root). shaped_tool.py window, on logs written here with known
rates, gives each flow's rate over the interval in which all of them ran (interpolated between
log lines), Jain's index and the first flow's share (with and without --scale-first); flows
that never overlap exit 1, a malformed flow exits 2.
"""

import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def cli(sh):
    r = run([sh, "--help"])
    check(r.returncode == 0, f"--help exits 0 (got {r.returncode})")
    for opt in ("--rates", "--worlds", "--size", "--no-gloo", "--lock", "--no-sweep",
                "--sweep-sizes", "--sweep-worlds", "--sweep-rate"):
        check(opt in r.stdout, f"--help names {opt}")
    bad = [
        (["--bogus"], "unknown argument '--bogus'"),
        (["--rates", "1mbps"], "bad rate '1mbps'"),
        (["--rates", "500mbit,fast"], "bad rate 'fast'"),
        (["--share-rate", "1g"], "bad rate '1g'"),
        (["--worlds", "1"], "bad world '1'"),
        (["--worlds", "4,65"], "bad world '65'"),
        (["--size", "12Q"], "bad --size '12Q'"),
        (["--iters", "0"], "bad --iters '0'"),
        (["--share-iters", "1"], "bad --share-iters '1'"),
        (["--rates"], "--rates: needs a value"),
        (["--sweep-sizes", "4K,1X"], "bad --sweep-sizes '1X'"),
        (["--sweep-worlds", "2,1"], "bad world '1'"),
        (["--sweep-rate", "fast"], "bad rate 'fast'"),
        (["--sweep-sizes", ""], "--sweep-sizes and --sweep-worlds: at least one each"),
        # what bash arithmetic would divide by or read as octal, refused before anything runs
        (["--sweep-sizes", "4K,0"], "bad --sweep-sizes '0'"),
        (["--rates", "0kbit"], "bad rate '0kbit'"),
        (["--worlds", "08"], "bad world '08'"),
        (["--sweep-worlds"], "--sweep-worlds: needs a value"),
    ]
    for args, msg in bad:
        r = run([sh] + args)
        check(r.returncode == 2 and msg in r.stderr,
              f"{' '.join(args)}: exit 2 naming it (got {r.returncode}: {r.stderr.strip()[:80]})")


def write_log(path, pts):
    with open(path, "w", encoding="ascii") as f:
        for t, b in pts:
            f.write(f"{int(t * 1e9)} {int(b)}\n")


def kv(out):
    return dict(line.split("=", 1) for line in out.split() if "=" in line)


def window(tool):
    d = tempfile.mkdtemp(prefix="bench_shaped_it.")
    gb = 1e9 / 8  # bytes per second at 1 Gbit/s
    # flow a: two ranks at 1 Gbit/s each, a line every second, from 0 s and 1 s to 10 s
    write_log(f"{d}/a0", [(t, gb * t) for t in range(0, 11)])
    write_log(f"{d}/a1", [(t, gb * (t - 1)) for t in range(1, 11)])
    # flow b: 0.5 Gbit/s from 2.5 s to 8.5 s, lines 3 s apart (the interval's ends fall
    # between them: interpolated)
    write_log(f"{d}/b", [(2.5, 0), (5.5, 1.5 * gb), (8.5, 3 * gb)])
    r = run([sys.executable, tool, "window", f"a={d}/a0,{d}/a1", f"b={d}/b"])
    v = kv(r.stdout)
    check(r.returncode == 0, f"window exits 0 (got {r.returncode}: {r.stderr.strip()[:80]})")
    check(v.get("gbps_a") == "1.000", f"gbps_a=1.000 (got {v.get('gbps_a')})")
    check(v.get("gbps_b") == "0.500", f"gbps_b=0.500 (got {v.get('gbps_b')})")
    check(v.get("overlap_s") == "6.000", f"overlap_s=6.000 (got {v.get('overlap_s')})")
    # (1 + 0.5)^2 / (2 (1 + 0.25)) = 0.9; share 1 / 1.5
    check(v.get("jain") == "0.900", f"jain=0.900 (got {v.get('jain')})")
    check(v.get("share_a") == "0.667", f"share_a=0.667 (got {v.get('share_a')})")
    r = run([sys.executable, tool, "window", "--scale-first", "2", f"a={d}/a0,{d}/a1",
             f"b={d}/b"])
    v = kv(r.stdout)
    # 2 and 0.5: (2.5)^2 / (2 (4 + 0.25)) = 0.735; share 2 / 2.5
    check(v.get("jain") == "0.735", f"--scale-first 2: jain=0.735 (got {v.get('jain')})")
    check(v.get("share_a") == "0.800", f"--scale-first 2: share_a=0.800 (got {v.get('share_a')})")
    # a flow that stalls inside the interval: half the bytes, half the rate
    write_log(f"{d}/c", [(2.5, 0), (4, 0), (5.5, 0), (8.5, 1.5 * gb)])
    r = run([sys.executable, tool, "window", f"b={d}/b", f"c={d}/c"])
    v = kv(r.stdout)
    check(v.get("gbps_c") == "0.250" and v.get("jain") == "0.900",
          f"a stalled flow: gbps_c=0.250 jain=0.900 (got {v.get('gbps_c')} {v.get('jain')})")
    write_log(f"{d}/late", [(11, 0), (12, gb)])
    r = run([sys.executable, tool, "window", f"a={d}/a0", f"l={d}/late"])
    check(r.returncode == 1 and "never ran at the same time" in r.stderr,
          f"flows that never overlap: exit 1 (got {r.returncode})")
    r = run([sys.executable, tool, "window", f"{d}/a0", f"b={d}/b"])
    check(r.returncode == 2, f"a flow without NAME=: exit 2 (got {r.returncode})")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cli(sys.argv[1])
    window(sys.argv[2])
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
