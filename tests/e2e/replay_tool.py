#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""An on-path attacker for the e2e tests (issue 15 item 2): it sees every frame of a job and
sends on its segment, replaying captured frames and sending altered copies of them.

It runs in the bridge namespace of scripts/netns.sh: it captures on the box's bridge port
(--box-if, every frame to or from the box passes there) and sends raw frames out of the
bridge ports themselves (to the box on --box-if, to rank R on its port, --rank-if R=PORT), so
the bridge never sees them and learns nothing: a switch that copies and injects. From the
job's (--job) frames it keeps, per rank, the first and the last DATA and the last RESULT sent
to it (only frames with a token: after admission), and every --interval seconds, once it has
one DATA of every rank and one RESULT to every rank, it sends one attack round:

  to the box, per rank R (its DATA D):
    replay_last    D as captured (the same incarnation, moments later)
    replay_first   the first DATA of R captured (long ago in the job)
    alt_payload    D with one payload byte changed
    alt_step       D with step + 1
    alt_offset     D with offset + count
    alt_slot       D with slot + 1
    alt_rank       D as rank R+1: rank field, source address and port, Ethernet header of
                   that rank's captured DATA
    alt_token      D with the token's last byte changed
    alt_counter    D with the MAC trailer's counter set far ahead (a replay with a fresh
                   counter; only when D carries the MAC)
    strip_mac      D without its trailer and flag (only when D carries the MAC)
    forge_leave    a LEAVE made of D's header (type LEAVE, count 0, no payload; the trailer
                   kept when there is one)
  to rank R (the last RESULT T sent to it):
    replay_result  T as captured
    alt_result     T with one payload byte changed
    forge_abort    an ABORT made of T's header (type ABORT, rank 0, aux ECONNRESET, count 0,
                   no payload; the trailer kept when there is one)
    strip_result   T without its trailer and flag (only when T carries the MAC)

Every altered copy gets a correct CRC32C (written here: Castagnoli, reflected), IPv4 header
checksum and UDP checksum, so that only the MAC can refuse it. The tool never re-captures its
own frames (it remembers what it sent). A round counts as "mid" when none of --end-files
exists yet (the ranks are still in their allreduces); --first-file is created after the first
round (ranks run with shouter-worker --mid-file on it wait there before their second
allreduce, so that round is mid-run by construction). It stops when --stop-file exists (or on
SIGTERM) and prints one JSON line: rounds, rounds_mid, mac (whether the job's frames carry
the MAC), captured counts, and the frames sent per class to the box and to each rank.
--progress-file gets the same JSON after every round (a test waits on it).

  replay_tool.py --job 71 --box-if agg --rank-if 0=w0 --rank-if 1=w1 --stop-file F
"""
import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import time

from adm_tool import crc32c  # the same CRC32C as the admission tool

ETH_P_ALL = 0x0003
HDR = 64
CRC_SPAN = 60
MAC_LEN = 28
FLAG_MAC = 0x0020
FLAG_NOPAYLOAD = 0x0001
T_DATA, T_RESULT, T_JOIN, T_JOIN_ACK, T_LEAVE, T_LEAVE_ACK, T_ABORT = 1, 2, 3, 4, 5, 6, 7
ECONNRESET = 104
BOX_IP = socket.inet_aton("198.18.0.1")


def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


class Frame:
    """An Ethernet / IPv4 / UDP / shouter frame, split so that fields can be changed."""

    def __init__(self, raw):
        self.eth = raw[:14]
        ihl = (raw[14] & 0x0F) * 4
        self.ip = bytearray(raw[14:14 + ihl])
        udp = raw[14 + ihl:14 + ihl + 8]
        ulen = struct.unpack("!H", udp[4:6])[0]
        self.ports = udp[:4]
        msg = raw[14 + ihl + 8:14 + ihl + ulen]
        self.hdr = bytearray(msg[:HDR])
        flags = struct.unpack("!H", self.hdr[20:22])[0]
        self.trailer = bytearray(msg[-MAC_LEN:]) if flags & FLAG_MAC else bytearray()
        self.payload = bytearray(msg[HDR:len(msg) - len(self.trailer)])

    @staticmethod
    def parse(raw, job):
        """A Frame if raw is a message of job (after admission), else None."""
        if len(raw) < 14 + 20 + 8 + HDR or raw[12:14] != b"\x08\x00" or raw[23] != 17:
            return None
        ihl = (raw[14] & 0x0F) * 4
        m = 14 + ihl + 8
        if len(raw) < m + HDR or raw[m:m + 3] != b"\x53\x48\x02":
            return None
        if struct.unpack("!I", raw[m + 8:m + 12])[0] != job:
            return None
        if raw[m + 3] in (T_JOIN, T_JOIN_ACK) or raw[m + 48:m + 56] == b"\0" * 8:
            return None
        return Frame(raw)

    def get(self, off, fmt):
        return struct.unpack_from("!" + fmt, self.hdr, off)[0]

    def put(self, off, fmt, v):
        struct.pack_into("!" + fmt, self.hdr, off, v)

    def copy(self):
        f = Frame.__new__(Frame)
        f.eth, f.ip, f.ports = self.eth, bytearray(self.ip), self.ports
        f.hdr, f.payload = bytearray(self.hdr), bytearray(self.payload)
        f.trailer = bytearray(self.trailer)
        return f

    def build(self):
        """The frame's bytes with the CRC32C, IPv4 and UDP checksums made right."""
        flags = self.get(20, "H")
        flags = flags | FLAG_MAC if self.trailer else flags & ~FLAG_MAC
        self.put(20, "H", flags)
        crc = crc32c(bytes(self.payload), crc32c(bytes(self.hdr[:CRC_SPAN])))
        self.put(CRC_SPAN, "I", crc)
        msg = bytes(self.hdr) + bytes(self.payload) + bytes(self.trailer)
        ulen = 8 + len(msg)
        struct.pack_into("!H", self.ip, 2, len(self.ip) + ulen)
        struct.pack_into("!H", self.ip, 10, 0)
        struct.pack_into("!H", self.ip, 10, ~csum16(bytes(self.ip)) & 0xFFFF)
        udp = self.ports + struct.pack("!HH", ulen, 0)
        pseudo = bytes(self.ip[12:20]) + struct.pack("!BBH", 0, 17, ulen)
        c = ~csum16(pseudo + udp + msg) & 0xFFFF
        udp = self.ports + struct.pack("!HH", ulen, c or 0xFFFF)
        return (self.eth + bytes(self.ip) + udp + msg).ljust(60, b"\0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--box-if", required=True, help="the box's bridge port")
    ap.add_argument("--rank-if", action="append", default=[], help="R=PORT, per rank")
    ap.add_argument("--interval", type=float, default=0.05, help="seconds between rounds")
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--end-files", default="", help="comma-separated: mid-job until one exists")
    ap.add_argument("--progress-file")
    ap.add_argument("--first-file", help="created after the first round")
    ap.add_argument("--classes", default="", help="comma-separated: send only these classes")
    a = ap.parse_args()
    only = set(c for c in a.classes.split(",") if c)
    rank_if = {}
    for s in a.rank_if:
        r, port = s.split("=", 1)
        rank_if[int(r)] = port
    if not rank_if:
        ap.error("--rank-if R=PORT needed")
    world = len(rank_if)
    ends = [f for f in a.end_files.split(",") if f]

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    cap.bind((a.box_if, 0))
    cap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    cap.setblocking(False)
    tx = {}
    for port in [a.box_if] + list(rank_if.values()):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((port, 0))
        tx[port] = s

    first_data, last_data, last_result = {}, {}, {}
    captured = {"data": 0, "result": 0, "other": 0}
    ours = set()
    sent_box = {}
    sent_rank = {r: {} for r in rank_if}
    rounds = rounds_mid = 0
    mac = None

    def send(port, f, cls, d):
        if only and cls not in only:
            return
        d[cls] = d.get(cls, 0) + 1
        raw = f.build() if isinstance(f, Frame) else f
        ours.add(hash(raw))
        tx[port].send(raw)

    def drain():
        nonlocal mac
        while True:
            try:
                raw = cap.recv(65536)
            except BlockingIOError:
                return
            h = hash(raw)
            if h in ours:
                ours.discard(h)
                continue
            f = Frame.parse(raw, a.job)
            if f is None:
                continue
            t = f.hdr[3]
            if t == T_DATA and f.ip[16:20] == BOX_IP:
                r = f.get(6, "H")
                if r in rank_if:
                    first_data.setdefault(r, raw)
                    last_data[r] = raw
                    captured["data"] += 1
                    mac = bool(f.trailer)
            elif t == T_RESULT and f.ip[12:16] == BOX_IP:
                dst = f.ip[16:20]
                for r in rank_if:
                    if r in last_data and Frame(last_data[r]).ip[12:16] == dst:
                        last_result[r] = raw
                captured["result"] += 1
            else:
                captured["other"] += 1

    def attack():
        box = a.box_if
        for r in rank_if:
            d = Frame(last_data[r])
            send(box, last_data[r], "replay_last", sent_box)
            send(box, first_data[r], "replay_first", sent_box)
            if d.payload:
                f = d.copy()
                f.payload[len(f.payload) // 2] ^= 0x01
                send(box, f, "alt_payload", sent_box)
            f = d.copy()
            f.put(28, "I", (f.get(28, "I") + 1) & 0xFFFFFFFF)
            send(box, f, "alt_step", sent_box)
            f = d.copy()
            f.put(32, "Q", f.get(32, "Q") + max(1, f.get(16, "I")))
            send(box, f, "alt_offset", sent_box)
            f = d.copy()
            f.put(12, "I", (f.get(12, "I") & 0x80000000) | ((f.get(12, "I") + 1) & 0x7FFFFFFF))
            send(box, f, "alt_slot", sent_box)
            o = (r + 1) % world
            if world > 1 and o in last_data:
                other = Frame(last_data[o])
                f = d.copy()
                f.eth = other.eth
                f.ip[12:16] = other.ip[12:16]
                f.ports = other.ports[:2] + d.ports[2:]
                f.put(6, "H", o)
                send(box, f, "alt_rank", sent_box)
            f = d.copy()
            f.hdr[55] ^= 0x01
            send(box, f, "alt_token", sent_box)
            if d.trailer:
                f = d.copy()
                struct.pack_into("!Q", f.trailer, 4, struct.unpack_from("!Q", f.trailer, 4)[0]
                                 + (1 << 20))
                send(box, f, "alt_counter", sent_box)
                f = d.copy()
                f.trailer = bytearray()
                send(box, f, "strip_mac", sent_box)
            f = d.copy()
            f.hdr[3] = T_LEAVE
            f.put(16, "I", 0)
            f.payload = bytearray()
            send(box, f, "forge_leave", sent_box)
        for r, port in rank_if.items():
            t = Frame(last_result[r])
            send(port, last_result[r], "replay_result", sent_rank[r])
            if t.payload:
                f = t.copy()
                f.payload[len(f.payload) // 2] ^= 0x01
                send(port, f, "alt_result", sent_rank[r])
            f = t.copy()
            f.hdr[3] = T_ABORT
            f.put(6, "H", 0)
            f.put(16, "I", 0)
            f.put(40, "I", ECONNRESET)
            f.put(20, "H", f.get(20, "H") & ~FLAG_NOPAYLOAD)
            f.payload = bytearray()
            send(port, f, "forge_abort", sent_rank[r])
            if t.trailer:
                f = t.copy()
                f.trailer = bytearray()
                send(port, f, "strip_result", sent_rank[r])

    def report():
        return json.dumps({"rounds": rounds, "rounds_mid": rounds_mid, "mac": mac,
                           "captured": captured, "box": sent_box,
                           "rank": {str(r): v for r, v in sent_rank.items()}},
                          sort_keys=True)

    def progress():
        if a.progress_file:
            tmp = a.progress_file + ".tmp"
            with open(tmp, "w") as f:
                f.write(report() + "\n")
            os.replace(tmp, a.progress_file)

    progress()
    nxt = time.monotonic()
    while not stop and not os.path.exists(a.stop_file):
        if select.select([cap], [], [], 0.01)[0]:
            drain()
        now = time.monotonic()
        if now < nxt:
            continue
        if len(last_data) < world or len(last_result) < world:
            continue
        mid = not any(os.path.exists(e) for e in ends)
        attack()
        rounds += 1
        rounds_mid += mid
        if rounds == 1 and a.first_file:
            with open(a.first_file, "w"):
                pass
        if len(ours) > 100000:
            ours.clear()
        progress()
        nxt = time.monotonic() + a.interval
    drain()
    progress()
    print(report(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
