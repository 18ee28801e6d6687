#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Telemetry of a running shouter-agg, for the integration tests (one process, one
connection to DPDK's telemetry socket, however many polls):

  tel.py PREFIX get CMD PATH           print one value of CMD's reply (PATH: keys joined by
                                       '/' after the command, e.g. "lcores", "1/joined";
                                       "": the whole reply; CMD may carry a parameter:
                                       /shouter/jobs,1); None if absent or the command
                                       failed
  tel.py PREFIX wait SECONDS CMD COND...
                                       poll CMD every 0.1 s until every COND ("PATH=VALUE",
                                       "PATH<=VALUE" or "PATH>=VALUE") holds: exit 0; after
                                       SECONDS (a bound
                                       for a box that never gets there, not a wait): print
                                       what does not hold and the last reply, exit 1
  tel.py PREFIX lcores                 check /shouter/lcores against /shouter/stats: one
                                       entry per data lcore ("lcores"), exactly one control
                                       lcore, distinct queues, and every counter of
                                       /shouter/stats that the lcores have summed over them
                                       (exit 1 naming each difference); call it once the
                                       box is idle (no frame in flight)

PREFIX is the EAL --file-prefix; the socket is where the EAL puts it (/var/run/dpdk as root,
else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk). Exit 2 on usage or connection errors.
"""

import json
import os
import socket
import sys
import time


def runtime_dir(prefix):
    if os.getuid() == 0:
        base = "/var/run"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def connect(prefix):
    path = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(path)
    info = json.loads(sock.recv(1 << 16).decode())
    return sock, int(info.get("max_output_len", 1 << 16))


def query(sock, maxlen, cmd):
    sock.send(cmd.encode())
    reply = json.loads(sock.recv(maxlen).decode())
    return reply.get(cmd.split(",")[0])     # the reply is keyed by the command alone


def lookup(d, path):
    if path == "":
        return d        # the whole reply (None: the command failed)
    for k in path.split("/"):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def unmet(d, conds):
    bad = []
    for cond in conds:
        op = "<=" if "<=" in cond else ">=" if ">=" in cond else "="
        path, want = cond.split(op, 1)
        v = lookup(d, path)
        if (v is None or (op == "<=" and v > int(want)) or (op == ">=" and v < int(want))
                or (op == "=" and str(v) != want)):
            bad.append("%s is %s, want %s%s" % (path, v, op if op != "=" else "", want))
    return bad


def check_lcores(sock, maxlen):
    stats = query(sock, maxlen, "/shouter/stats")
    lcores = query(sock, maxlen, "/shouter/lcores")
    bad = []
    if not isinstance(lcores, dict) or len(lcores) != stats.get("lcores"):
        bad.append("%s lcore entries, /shouter/stats says lcores=%s"
                   % (len(lcores) if isinstance(lcores, dict) else lcores,
                      stats.get("lcores")))
        return bad
    if sum(lc.get("control", 0) for lc in lcores.values()) != 1:
        bad.append("not exactly one control lcore")
    queues = [lc.get("queue") for lc in lcores.values()]
    if len(set(queues)) != len(queues):
        bad.append("queues repeat: %s" % queues)
    # idle_sleeps grows while the box waits, between the two replies
    shared = [k for k in stats if k != "idle_sleeps" and all(k in lc for lc in lcores.values())]
    if "rx_pkts" not in shared or "msg_data" not in shared:
        bad.append("the lcores lack rx_pkts/msg_data")
    for k in shared:
        total = sum(lc[k] for lc in lcores.values())
        if total != stats[k]:
            bad.append("%s: lcores sum to %s, /shouter/stats says %s" % (k, total, stats[k]))
    if not bad:
        print("ok: /shouter/lcores: %d lcore(s), %d counters sum to /shouter/stats"
              % (len(lcores), len(shared)))
    return bad


def main(argv):
    if len(argv) == 3 and argv[2] == "lcores":
        pass
    elif len(argv) < 5 or argv[2] not in ("get", "wait"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        sock, maxlen = connect(argv[1])
    except (OSError, ValueError) as e:
        print("tel.py: cannot connect to the telemetry of '%s': %s" % (argv[1], e),
              file=sys.stderr)
        return 2
    with sock:
        if argv[2] == "lcores":
            bad = check_lcores(sock, maxlen)
            for b in bad:
                print("tel.py: /shouter/lcores: %s" % b, file=sys.stderr)
            return 1 if bad else 0
        if argv[2] == "get":
            print(lookup(query(sock, maxlen, argv[3]), argv[4]))
            return 0
        end = time.monotonic() + float(argv[3])
        cmd, conds = argv[4], argv[5:]
        while True:
            d = query(sock, maxlen, cmd)
            bad = unmet(d, conds)
            if not bad:
                print("ok: %s: %s" % (cmd, " ".join(conds)))
                return 0
            if time.monotonic() >= end:
                print("tel.py: %s: %s\nlast reply: %s" % (cmd, "; ".join(bad), json.dumps(d)),
                      file=sys.stderr)
                return 1
            time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
