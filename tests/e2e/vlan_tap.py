#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""A VLAN subinterface in user space, for the VLAN e2e test (tests/e2e/vlan.sh) on kernels
built without 802.1Q (CONFIG_VLAN_8021Q unset: `ip link add ... type vlan` fails there).

Makes a TAP device --name (e.g. shr0.100) that the test gives the rank's address, and joins it
to --iface as `ip link add link IFACE name NAME type vlan id VID` would: every frame the kernel
sends on the TAP goes out on IFACE with an 802.1Q tag of VID --vid (priority 0); every frame
that comes in on IFACE tagged with that VID (the tag in the frame, or taken off by the kernel
into the packet's metadata) goes to the TAP untagged; anything else (other VIDs, untagged,
stacked tags) is not the subinterface's and is left alone. Writes --ready-file once the TAP
exists; runs until SIGTERM/SIGINT, then prints "up=N down=M ignored=K".

  vlan_tap.py --iface shr0 --name shr0.100 --vid 100 --ready-file /tmp/x
"""
import argparse
import fcntl
import os
import select
import signal
import socket
import struct
import sys

ETH_P_ALL = 0x0003
TPID_C = 0x8100
TPID_S = 0x88A8
TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--vid", type=int, required=True)
    ap.add_argument("--ready-file", required=True)
    a = ap.parse_args()
    if not 1 <= a.vid <= 4094 or len(a.name) > 15:
        ap.error("--vid 1..4094, --name at most 15 characters")

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    tap = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tap, TUNSETIFF, struct.pack("16sH", a.name.encode(), IFF_TAP | IFF_NO_PI))
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    raw.bind((a.iface, 0))
    raw.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    tag = struct.pack("!HH", TPID_C, a.vid)
    with open(a.ready_file, "w") as f:
        f.write("ready\n")
    up = down = ignored = 0
    while not stop:
        try:
            rd = select.select([tap, raw], [], [], 0.5)[0]
        except InterruptedError:
            continue
        if tap in rd:
            f = os.read(tap, 65536)
            if len(f) >= 14:
                raw.send(f[:12] + tag + f[12:])
                up += 1
        if raw in rd:
            f, anc, _, addr = raw.recvmsg(65536, socket.CMSG_SPACE(32))
            if addr[2] == PACKET_OUTGOING or len(f) < 14:
                continue
            tpid = vid = None
            for level, typ, cd in anc:
                if level == SOL_PACKET and typ == PACKET_AUXDATA and len(cd) >= 20:
                    st, _, _, _, _, tci, tp = struct.unpack("IIIHHHH", cd[:20])
                    if st & TP_STATUS_VLAN_VALID:
                        vid = tci & 0x0FFF
                        tpid = tp if st & TP_STATUS_VLAN_TPID_VALID else TPID_C
            if vid is None:
                t = struct.unpack("!H", f[12:14])[0]
                if t in (TPID_C, TPID_S) and len(f) >= 18:
                    tpid, vid = t, struct.unpack("!H", f[14:16])[0] & 0x0FFF
                    f = f[:12] + f[16:]
            inner = struct.unpack("!H", f[12:14])[0]
            if tpid != TPID_C or vid != a.vid or inner in (TPID_C, TPID_S):
                ignored += 1
                continue
            os.write(tap, f)
            down += 1
    print(f"up={up} down={down} ignored={ignored}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
