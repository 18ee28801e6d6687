#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""box_stats.py PREFIX: print the running shouter-agg's counters on one line, for the Pktgen
scripts (replay.lua reads it through io.popen):

  t=<seconds, CLOCK_MONOTONIC> rx_pkts=.. tx_pkts=.. msg_data=.. msg_completed=.. rejects=..
  tx_drop=.. port_imissed=.. (every numeric counter of /shouter/stats, in its order)

PREFIX is the box's EAL --file-prefix: the telemetry socket is
/var/run/dpdk/PREFIX/dpdk_telemetry.v2 as root, else under $XDG_RUNTIME_DIR/dpdk or
/tmp/dpdk (as DPDK puts it). Exit 2 if the box cannot be reached (the reason on stderr).
"""

import json
import os
import socket
import sys
import time


def socket_path(prefix):
    base = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix, "dpdk_telemetry.v2")


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    path = socket_path(argv[1])
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.connect(path)
            info = json.loads(s.recv(1 << 16).decode())
            s.send(b"/shouter/stats")
            reply = json.loads(s.recv(int(info.get("max_output_len", 1 << 16))).decode())
    except (OSError, ValueError) as e:
        print("box_stats.py: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 2
    stats = reply.get("/shouter/stats")
    if not isinstance(stats, dict):
        print("box_stats.py: %s: no /shouter/stats (not a shouter-agg?)" % path,
              file=sys.stderr)
        return 2
    words = ["t=%.6f" % time.monotonic()]
    words += ["%s=%d" % (k, v) for k, v in stats.items() if isinstance(v, int)]
    print(" ".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
