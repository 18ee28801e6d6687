# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Replay a pcap on an interface through an AF_PACKET socket and capture the answers.

usage: afp_replay.py IFACE IN.pcap OUT.pcap [--from MAC] [--quiet-s S] [--max-s S]

Sends every frame of IN.pcap (classic pcap, Ethernet) in order, then keeps receiving until
no frame has arrived for --quiet-s seconds (default 1) or --max-s (default 30) have passed.
Frames received from --from (the peer's MAC) are written to OUT.pcap; our own outgoing
frames and anything else (kernel chatter) are left out.
"""

import argparse
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def read_pcap(path):
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        end = '<'
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        end = '>'
    else:
        raise ValueError(f'{path}: not a pcap file')
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'IIII', data[off:off + 16])[2]
        off += 16
        yield data[off:off + incl]
        off += incl


def write_pcap(path, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for ts, frame in frames:
            f.write(struct.pack('<IIII', int(ts), int((ts % 1) * 1e6), len(frame), len(frame)))
            f.write(frame)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('iface')
    ap.add_argument('inp')
    ap.add_argument('out')
    ap.add_argument('--from', dest='src', default=None)
    ap.add_argument('--quiet-s', type=float, default=1.0)
    ap.add_argument('--max-s', type=float, default=30.0)
    a = ap.parse_args()
    src = bytes.fromhex(a.src.replace(':', '')) if a.src else None

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.bind((a.iface, 0))
    s.setblocking(False)
    got = []

    def drain():
        n = 0
        while True:
            try:
                frame, addr = s.recvfrom(65535)
            except BlockingIOError:
                return n
            if addr[2] == PACKET_OUTGOING:
                continue
            if src is not None and frame[6:12] != src:
                continue
            got.append((time.time(), frame))
            n += 1

    sent = 0
    for frame in read_pcap(a.inp):
        while True:
            try:
                s.send(frame)
                break
            except BlockingIOError:
                drain()
        sent += 1
        if sent % 32 == 0:
            drain()
    start = last = time.time()
    while time.time() - last < a.quiet_s and time.time() - start < a.max_s:
        if drain():
            last = time.time()
        time.sleep(0.01)
    write_pcap(a.out, got)
    print(f'afp_replay: sent={sent} received={len(got)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
