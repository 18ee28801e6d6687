# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Helpers of scripts/bench_shaped.sh (the shaped-link benchmark) and scripts/bench.sh.

Each subcommand runs in one network namespace (ip netns exec) and writes what it measured:

  rank       one rank of a shouter job (the Python binding, shouter.Comm, kernel UDP): after
             joining it creates --ready-file, waits for --go-file, then runs --iters float32
             allreduces of --size bytes (every rank's input is rank + 1, so every element of
             the sum is world * (world + 1) / 2; the last result is checked in full, every
             other one at its first and last element) and writes to --log one line
             "T_NS BYTES" before the first and after each allreduce (CLOCK_MONOTONIC, the
             tensor bytes done so far). Prints one line: ok=, and the endpoint's counters
             (stats(): resends by cause, timeouts, duplicates, RTT, RTO, window). Exit 1 on
             a wrong result.
  tcp-sink   accepts one TCP connection on --bind ADDR:PORT (creates --ready-file once
             listening) and reads it to its end, writing "T_NS BYTES" (bytes received so far)
             to --log every --every-ms and at the end; creates --flowing-file once --flowing
             bytes have arrived.
  tcp-source connects to --to ADDR:PORT and sends as fast as the socket takes until
             --stop-file exists (checked between sends), then closes.
  udp-echo   answers every datagram on --bind ADDR:PORT with the same bytes (creates
             --ready-file once bound) until killed.
  udp-ping   sends --count requests of --size bytes to --to ADDR:PORT, one at a time, each
             answered before the next (after --warmup untimed ones); prints
             udp_rtt_us_p50=, udp_rtt_us_p99=, udp_rtt_n=.
  window     reads logs of "T_NS BYTES" lines, one per flow (FLOW=PATH[,PATH...]: a flow's
             bytes are the sum over its paths, e.g. a job's ranks, each divided by the number
             of paths, i.e. a job's per-rank mean), takes the interval in which every flow
             was running (the latest first line to the earliest last line) and prints, for
             each flow, gbps_FLOW= (bytes within that interval, interpolated linearly between
             a log's lines, * 8 / its length) and then overlap_s=, jain= (Jain's fairness
             index over the flows' rates: (sum x)^2 / (n sum x^2)) and share_FIRST= (the
             first flow's rate over the sum, after --scale-first: the first flow's rate is
             multiplied by it first, e.g. a job's world to count every rank's bytes).
             Exit 1 if the flows never overlap.
"""

import argparse
import os
import socket
import sys
import time


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def touch(path):
    if path:
        with open(path, "w", encoding="ascii"):
            pass


def wait_file(path, timeout_s):
    t_end = time.monotonic() + timeout_s
    while not os.path.exists(path):
        if time.monotonic() > t_end:
            return False
        time.sleep(0.005)
    return True


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper()
    if s and s[-1] in mult:
        return int(s[:-1]) * mult[s[-1]]
    return int(s)


def addr_port(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


# stats() counters printed by rank, by their own names
RANK_COUNTERS = ("tx_retx", "tx_fast", "tx_rto", "timeouts", "spurious", "fast_peer", "rx_dup",
                 "rtx_unneeded", "hint_held", "hint_resent", "cwnd", "cc_decr", "cc_decr_loss",
                 "cc_comp")


def cmd_rank(a):
    import numpy as np
    import shouter

    n = parse_size(a.size) // 4
    c = shouter.Comm(a.box, job=a.job, rank=a.rank, world=a.world, dtype="float32",
                     window=a.window, chunk=a.chunk, timeout_ms=a.timeout_ms)
    touch(a.ready_file)
    if a.go_file and not wait_file(a.go_file, 120):
        print(f"shaped_tool rank {a.rank}: no {a.go_file} in 120 s", file=sys.stderr)
        return 2
    x = np.full(n, a.rank + 1, dtype=np.float32)
    y = np.empty(n, dtype=np.float32)
    want = np.float32(a.world * (a.world + 1) // 2)
    lines = [f"{now_ns()} 0"]
    ok = True
    for it in range(a.iters):
        c.allreduce(x, out=y)
        lines.append(f"{now_ns()} {(it + 1) * n * 4}")
        if y[0] != want or y[-1] != want:
            ok = False
    if not np.all(y == want):
        ok = False
    st = c.stats()
    c.close()
    with open(a.log, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    counters = " ".join(f"{k}={st.get(k, '?')}" for k in RANK_COUNTERS)
    print(f"rank={a.rank} job={a.job} ok={1 if ok else 0} "
          f"srtt_us={st.get('srtt_ns', 0) / 1000:.1f} rto_us={st.get('rto_ns', 0) / 1000:.1f} "
          f"host_us={st.get('host_delay_ns', 0) / 1000:.1f} {counters}")
    return 0 if ok else 1


def cmd_tcp_sink(a):
    host, port = addr_port(a.bind)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(1)
    touch(a.ready_file)
    s, _ = ls.accept()
    ls.close()
    buf = bytearray(1 << 20)
    got = 0
    flowing = False
    every = a.every_ms * 1000000
    lines = [f"{now_ns()} 0"]
    last = now_ns()
    while True:
        k = s.recv_into(buf)
        if k == 0:
            break
        got += k
        t = now_ns()
        if t - last >= every:
            lines.append(f"{t} {got}")
            last = t
        if not flowing and got >= a.flowing:
            touch(a.flowing_file)
            flowing = True
    lines.append(f"{now_ns()} {got}")
    s.close()
    with open(a.log, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def cmd_tcp_source(a):
    host, port = addr_port(a.to)
    s = socket.create_connection((host, port), timeout=30)
    s.settimeout(None)
    buf = bytes(256 << 10)
    sent = 0
    while not os.path.exists(a.stop_file):
        sent += s.send(buf)
    s.shutdown(socket.SHUT_WR)
    s.close()
    print(f"tcp_sent_bytes={sent}")
    return 0


def cmd_udp_echo(a):
    host, port = addr_port(a.bind)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, port))
    touch(a.ready_file)
    while True:
        data, peer = s.recvfrom(65536)
        s.sendto(data, peer)


def cmd_udp_ping(a):
    host, port = addr_port(a.to)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, port))
    s.settimeout(1.0)
    rtt = []
    lost = 0
    for i in range(a.warmup + a.count):
        req = i.to_bytes(4, "little") + bytes(a.size - 4)
        t0 = now_ns()
        s.send(req)
        try:
            while True:
                rep = s.recv(65536)
                if rep[:4] == req[:4]:
                    break
        except socket.timeout:
            lost += 1
            continue
        dt = now_ns() - t0
        if i >= a.warmup:
            rtt.append(dt / 1000.0)
    if not rtt:
        print("udp-ping: no reply", file=sys.stderr)
        return 1
    rtt.sort()
    print(f"udp_rtt_us_p50={rtt[len(rtt) // 2]:.1f}")
    print(f"udp_rtt_us_p99={rtt[min(len(rtt) - 1, int(len(rtt) * 0.99))]:.1f}")
    print(f"udp_rtt_n={len(rtt)} udp_rtt_lost={lost}")
    return 0


def read_log(path):
    pts = []
    with open(path, encoding="ascii") as f:
        for line in f:
            t, b = line.split()
            pts.append((int(t), int(b)))
    if not pts:
        raise ValueError(f"{path}: empty")
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        if t1 < t0 or b1 < b0:
            raise ValueError(f"{path}: time or bytes go back")
    return pts


def bytes_at(pts, t):
    """Bytes done at time t, linear between a log's points (t within the log)."""
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        if t0 <= t <= t1:
            return b0 if t1 == t0 else b0 + (b1 - b0) * (t - t0) / (t1 - t0)
    return pts[-1][1] if t >= pts[-1][0] else pts[0][1]


def cmd_window(a):
    flows = []
    for spec in a.flows:
        name, _, paths = spec.partition("=")
        if not name or not paths:
            print(f"window: bad flow {spec!r} (NAME=PATH[,PATH...])", file=sys.stderr)
            return 2
        flows.append((name, [read_log(p) for p in paths.split(",")]))
    lo = max(pts[0][0] for _, logs in flows for pts in logs)
    hi = min(pts[-1][0] for _, logs in flows for pts in logs)
    if hi <= lo:
        print("window: the flows never ran at the same time", file=sys.stderr)
        return 1
    rates = []
    for name, logs in flows:
        b = sum(bytes_at(p, hi) - bytes_at(p, lo) for p in logs) / len(logs)
        rates.append(b * 8 / ((hi - lo) / 1e9) / 1e9)
        print(f"gbps_{name}={rates[-1]:.3f}")
    rates[0] *= a.scale_first
    s = sum(rates)
    sq = sum(r * r for r in rates)
    print(f"overlap_s={(hi - lo) / 1e9:.3f}")
    print(f"jain={s * s / (len(rates) * sq):.3f}" if sq > 0 else "jain=nan")
    print(f"share_{flows[0][0]}={rates[0] / s:.3f}" if s > 0 else f"share_{flows[0][0]}=nan")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("rank")
    p.add_argument("--box", required=True)
    p.add_argument("--job", type=int, required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--size", default="4M")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--window", type=int, default=128)
    p.add_argument("--chunk", type=int, default=2048)
    p.add_argument("--timeout-ms", type=int, default=30000)
    p.add_argument("--ready-file")
    p.add_argument("--go-file")
    p.add_argument("--log", required=True)
    p = sub.add_parser("tcp-sink")
    p.add_argument("--bind", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--ready-file")
    p.add_argument("--flowing-file")
    p.add_argument("--flowing", type=int, default=4 << 20)
    p.add_argument("--every-ms", type=int, default=20)
    p = sub.add_parser("tcp-source")
    p.add_argument("--to", required=True)
    p.add_argument("--stop-file", required=True)
    p = sub.add_parser("udp-echo")
    p.add_argument("--bind", required=True)
    p.add_argument("--ready-file")
    p = sub.add_parser("udp-ping")
    p.add_argument("--to", required=True)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=50)
    p = sub.add_parser("window")
    p.add_argument("flows", nargs="+", metavar="NAME=PATH[,PATH...]")
    p.add_argument("--scale-first", type=float, default=1.0)
    a = ap.parse_args()
    if a.cmd == "udp-ping" and (a.size < 4 or a.count < 1):
        ap.error("udp-ping: --size at least 4, --count at least 1")
    return {"rank": cmd_rank, "tcp-sink": cmd_tcp_sink, "tcp-source": cmd_tcp_source,
            "udp-echo": cmd_udp_echo, "udp-ping": cmd_udp_ping,
            "window": cmd_window}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
