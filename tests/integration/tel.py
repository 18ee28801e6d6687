#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Telemetry of a running shouter-agg, for the integration tests (one process, one
connection to DPDK's telemetry socket, however many polls):

  tel.py PREFIX get CMD PATH           print one value of CMD's reply (PATH: keys joined by
                                       '/' after the command, e.g. "lcores", "1/joined")
  tel.py PREFIX wait SECONDS CMD COND...
                                       poll CMD every 0.1 s until every COND ("PATH=VALUE" or
                                       "PATH<=VALUE") holds: exit 0; after SECONDS (a bound
                                       for a box that never gets there, not a wait): print
                                       what does not hold and the last reply, exit 1

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
    return reply.get(cmd)


def lookup(d, path):
    for k in path.split("/"):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def unmet(d, conds):
    bad = []
    for cond in conds:
        le = "<=" in cond
        path, want = cond.split("<=" if le else "=", 1)
        v = lookup(d, path)
        if v is None or (v > int(want) if le else str(v) != want):
            bad.append("%s is %s, want %s%s" % (path, v, "<=" if le else "", want))
    return bad


def main(argv):
    if len(argv) < 5 or argv[2] not in ("get", "wait"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        sock, maxlen = connect(argv[1])
    except (OSError, ValueError) as e:
        print("tel.py: cannot connect to the telemetry of '%s': %s" % (argv[1], e),
              file=sys.stderr)
        return 2
    with sock:
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
