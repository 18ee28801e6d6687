#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Admission e2e helper (tests/e2e/faults_admission.sh), run inside a test namespace.

  adm_tool.py sniff IFACE READY OUT    capture the first JOIN that carries an admission block
                                       (a member's answer to the box's challenge); write
                                       "SRC_IP SRC_PORT HEX" to OUT; READY is created once
                                       the capture socket is open
  adm_tool.py replay LOCAL_IP PORT AGG_IP AGG_PORT HEX
                                       send those exact bytes again from LOCAL_IP:PORT
  adm_tool.py flood LOCAL_IP AGG_IP AGG_PORT N SEED
                                       N JOINs of mixed shapes (random job ids, world sizes,
                                       windows, chunks, nonces; some with a made-up
                                       admission block), valid CRC, from one socket

Standard library only. The shouter header v2 layout is lib/proto/shr_proto.h's.
"""
import os
import random
import socket
import struct
import sys

HDR_LEN = 64
ADM_LEN = 48
MSG_JOIN = 3


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def join_frame(job, rank, world, dtype, window, chunk, nonce, block=b""):
    """A JOIN header (v2) + optional admission block, with its CRC."""
    hdr = struct.pack(">HBBBBHIIIHHIIQIBBHQI", 0x5348, 2, MSG_JOIN, dtype, 0, rank, job,
                      window & 0x7FFFFFFF, chunk, 0, world, 0, 0, 0, 0, 0, 0, 0, nonce, 0)
    assert len(hdr) == 60
    crc = crc32c(block, crc32c(hdr))
    return hdr + struct.pack(">I", crc) + block


def sniff(iface, ready, out):
    # ETH_P_ALL: a tap of one protocol sees only received frames, not the ones sent
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    with open(ready, "w"):
        pass
    while True:
        frame = s.recv(65536)
        if frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        if len(ip) < 20 or ip[9] != 17:
            continue
        ihl = (ip[0] & 15) * 4
        udp = ip[ihl:]
        msg = udp[8:]
        if len(msg) != HDR_LEN + ADM_LEN or msg[0:2] != b"SH" or msg[3] != MSG_JOIN:
            continue
        src = socket.inet_ntoa(ip[12:16])
        sport = struct.unpack(">H", udp[0:2])[0]
        with open(out + ".tmp", "w") as f:
            f.write("%s %d %s\n" % (src, sport, msg.hex()))
        os.rename(out + ".tmp", out)
        return 0


def replay(local_ip, port, agg_ip, agg_port, hexmsg):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((local_ip, int(port)))
    s.sendto(bytes.fromhex(hexmsg), (agg_ip, int(agg_port)))
    return 0


def flood(local_ip, agg_ip, agg_port, n, seed):
    rnd = random.Random(int(seed))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((local_ip, 0))
    s.setblocking(False)
    sent = 0
    for i in range(int(n)):
        world = rnd.choice([1, 2, 8, 1024, 4096, 65535])
        block = b""
        if i % 3 == 0:
            block = bytes(rnd.getrandbits(8) for _ in range(ADM_LEN))
        frame = join_frame(job=rnd.getrandbits(32), rank=rnd.randrange(world) if world else 0,
                           world=world, dtype=rnd.choice([1, 2, 3, 4]),
                           window=rnd.choice([0, 1, 512, 0x7FFFFFFF]),
                           chunk=rnd.choice([1, 256, 2048, 0xFFFFFFFF]),
                           nonce=rnd.getrandbits(64) | 1, block=block)
        while True:
            try:
                s.sendto(frame, (agg_ip, int(agg_port)))
                break
            except BlockingIOError:
                continue
        sent += 1
        # drain the box's answers so the socket's buffer never fills
        try:
            while True:
                s.recv(2048)
        except BlockingIOError:
            pass
    print("flood: sent %d JOINs" % sent)
    return 0


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    cmd, args = argv[1], argv[2:]
    if cmd == "sniff" and len(args) == 3:
        return sniff(*args)
    if cmd == "replay" and len(args) == 5:
        return replay(*args)
    if cmd == "flood" and len(args) == 5:
        return flood(*args)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
