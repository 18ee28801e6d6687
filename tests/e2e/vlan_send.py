#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Frames of other networks for the VLAN e2e test (issue 15 item 3, tests/e2e/vlan.sh).

From its own namespace on the segment, on a raw AF_PACKET socket, sends --count frames of each
of --kinds to --dst-mac / --dst-ip (UDP to --port, ARP requests for --dst-ip, ICMP echoes),
each in a network that a host on VLAN --vlan must refuse:
  udp200   UDP tagged with VID 200
  udpu     UDP untagged
  udp0     UDP priority-tagged (VID 0, PCP 5)
  udpqinq  UDP under an 802.1ad S-tag of VID --vlan and a C-tag of VID --vlan (QinQ)
  arp200   ARP request tagged with VID 200
  arpu     ARP request untagged
  icmp200  ICMP echo request tagged with VID 200
then one ARP request on VLAN --vlan ("who has --dst-ip? tell --src-ip"), the probe, and reads
until --dst-ip's ARP reply comes back. The target handles its frames in order, so once the
probe's answer is in, it has handled (refused) every frame sent before it, and any frame it
sent us before that answer (other=) is an answer to a frame it should have refused. The
kernel takes a received tag off into the packet's metadata: the reply's VLAN is read from
PACKET_AUXDATA. Prints one line:

  sent=N other=M probe_vid=V      (probe_vid=none: the answer came untagged)

Exits 1 if the probe is not answered within --timeout seconds.

  vlan_send.py --iface shr0 --dst-mac 02:..:01 --dst-ip 198.18.0.1 --src-ip 198.18.0.13
"""
import argparse
import fcntl
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_ARP = 0x0806
ETH_P_IP = 0x0800
TPID_C = 0x8100
TPID_S = 0x88A8
SIOCGIFHWADDR = 0x8927
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
BCAST = b"\xff" * 6
KINDS = ("udp200", "udpu", "udp0", "udpqinq", "arp200", "arpu", "icmp200")


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


def eth(dst, src, tags, etype):
    """Ethernet header; tags: (TPID, VID) pairs, outermost first."""
    h = dst + src
    for tpid, vid in tags:
        h += struct.pack("!HH", tpid, vid)
    return h + struct.pack("!H", etype)


def arp_req(sha, spa, tpa):
    return struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 1) + sha + spa + b"\0" * 6 + tpa


def ipv4(proto, sip, dip, l4):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0x5156, 0x4000, 64, proto, 0,
                      sip, dip)
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + l4


def frame_of(kind, k, a, mac, dmac, sip, dip):
    udp = ipv4(17, sip, dip, struct.pack("!HHHH", a.port, a.port, 8 + 64, 0) + b"\x5a" * 64)
    echo = struct.pack("!BBHHH", 8, 0, 0, 0x5356, k & 0xFFFF) + b"shouter-vlan"
    echo = echo[:2] + struct.pack("!H", csum(echo)) + echo[4:]
    if kind == "udp200":
        f = eth(dmac, mac, [(TPID_C, 200)], ETH_P_IP) + udp
    elif kind == "udpu":
        f = eth(dmac, mac, [], ETH_P_IP) + udp
    elif kind == "udp0":
        f = eth(dmac, mac, [(TPID_C, (5 << 13) | 0)], ETH_P_IP) + udp
    elif kind == "udpqinq":
        f = eth(dmac, mac, [(TPID_S, a.vlan), (TPID_C, a.vlan)], ETH_P_IP) + udp
    elif kind == "arp200":
        f = eth(dmac, mac, [(TPID_C, 200)], ETH_P_ARP) + arp_req(mac, sip, dip)
    elif kind == "arpu":
        f = eth(dmac, mac, [], ETH_P_ARP) + arp_req(mac, sip, dip)
    else:
        f = eth(dmac, mac, [(TPID_C, 200)], ETH_P_IP) + ipv4(1, sip, dip, echo)
    return f.ljust(60, b"\0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst-ip", required=True)
    ap.add_argument("--src-ip", required=True)
    ap.add_argument("--vlan", type=int, default=100, help="the target's VLAN (the probe's)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--count", type=int, default=10, help="frames of each kind")
    ap.add_argument("--port", type=int, default=47000)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--progress-file", help="written once every frame but the probe is sent")
    a = ap.parse_args()
    kinds = a.kinds.split(",") if a.kinds else []
    if any(k not in KINDS for k in kinds) or not 1 <= a.vlan <= 4094 or a.count < 0:
        ap.error(f"--kinds among {','.join(KINDS)}; --vlan 1..4094; --count >= 0")

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    mac = ifmac(s, a.iface)
    dmac = bytes.fromhex(a.dst_mac.replace(":", ""))
    sip = socket.inet_aton(a.src_ip)
    dip = socket.inet_aton(a.dst_ip)
    sent = 0
    for k in range(a.count):
        for kind in kinds:
            s.send(frame_of(kind, k, a, mac, dmac, sip, dip))
            sent += 1
    if a.progress_file:
        with open(a.progress_file, "w") as f:
            f.write(f"sent={sent}\n")
    s.send((eth(BCAST, mac, [(TPID_C, a.vlan)], ETH_P_ARP) + arp_req(mac, sip, dip))
           .ljust(64, b"\0"))
    other = 0
    end = time.monotonic() + a.timeout
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(32))
        except socket.timeout:
            break
        if len(data) < 14 or data[0:6] != mac or data[6:12] != dmac:
            continue
        vid = None
        for level, typ, cd in anc:
            if level == SOL_PACKET and typ == PACKET_AUXDATA and len(cd) >= 20:
                status, _, _, _, _, tci = struct.unpack("IIIHHH", cd[:18])
                if status & TP_STATUS_VLAN_VALID:
                    vid = tci & 0x0FFF
        etype = struct.unpack("!H", data[12:14])[0]
        if etype == TPID_C and len(data) >= 18:  # the tag left in the frame
            vid = struct.unpack("!H", data[14:16])[0] & 0x0FFF
            data = data[:12] + data[16:]
            etype = struct.unpack("!H", data[12:14])[0]
        if (etype == ETH_P_ARP and len(data) >= 42 and data[20:22] == b"\0\2"
                and data[28:32] == dip and data[38:42] == sip):
            print(f"sent={sent} other={other} probe_vid={vid if vid is not None else 'none'}",
                  flush=True)
            return 0
        other += 1
    print(f"sent={sent} other={other} probe=unanswered", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
