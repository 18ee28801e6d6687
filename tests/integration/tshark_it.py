#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""The Wireshark dissector (scripts/wireshark/shouter.lua) checked with Debian's tshark.

tshark_it.py GEN_PCAP DISSECTOR

shouter-pcapgen writes the project's traffic (every dtype, summed and relay kinds, JOINs, LEAVEs,
duplicates and retransmits); this script adds frames of its own: what the box sends (RESULT,
JOIN_ACK with and without the admission block, LEAVE_ACK, ABORT), a version 1 header, and
broken frames, one per refusal reason the dissector flags (a bad CRC, a bad type, ...). tshark
decodes every frame with the plugin (-T fields), and each field must equal what this script
decodes from the bytes itself (its own header layout, CRC32C and element decoders), and what
shouter-pcapgen says it wrote (frame and DATA counts, job, ranks, sources, the token); valid traffic
must have a good CRC and no refusal, each broken frame its CRC status, the box's reason
(shouter.refused) and the expert item naming it.
"""

import math
import os
import struct
import subprocess
import sys
import tempfile

GEN = sys.argv[1] if len(sys.argv) > 1 else None
LUA = sys.argv[2] if len(sys.argv) > 2 else None

# the traffic: shouter-pcapgen options
CASES = [
    ['--ranks', '3', '--dtype', 'int32', '--window', '4', '--rounds', '2', '--join',
     '--lossy', '--leave', '--lanes', '2', '--chunk', '64'],
    ['--ranks', '4', '--dtype', 'float32', '--op', 'max', '--special', '--window', '4',
     '--rounds', '2'],
    ['--ranks', '4', '--kind', 'allgather', '--dtype', 'float16', '--special', '--window', '4',
     '--rounds', '2', '--join'],
    ['--ranks', '3', '--kind', 'scatter', '--root', '1', '--dtype', 'bfloat16', '--special',
     '--window', '4', '--rounds', '2'],
    ['--ranks', '3', '--kind', 'reduce_scatter', '--dtype', 'qint32', '--window', '4',
     '--rounds', '2'],
    ['--ranks', '4', '--kind', 'broadcast', '--root', '2', '--window', '4', '--rounds', '2',
     '--lanes', '3', '--arp', '--icmp'],
]

TOKEN = 0x7368725f72706c79      # shouter-pcapgen's default --token
ESIZE = {1: 4, 2: 4, 3: 2, 4: 2, 5: 4}
SHOWN = 64                      # the dissector's default preference shouter.max_elems

FIELDS = ['frame.number', 'ip.src', 'udp.dstport', 'shouter.version', 'shouter.type',
          'shouter.dtype', 'shouter.op', 'shouter.rank', 'shouter.job', 'shouter.ver',
          'shouter.slot', 'shouter.count', 'shouter.flags', 'shouter.flags.nopayload',
          'shouter.world', 'shouter.tensor', 'shouter.step', 'shouter.offset', 'shouter.aux',
          'shouter.kind', 'shouter.root', 'shouter.token', 'shouter.nonce', 'shouter.feedback',
          'shouter.crc', 'shouter.crc.computed', 'shouter.crc.status', 'shouter.refused',
          'shouter.scale', 'shouter.dest', 'shouter.status', 'shouter.int32',
          'shouter.float32', 'shouter.float16', 'shouter.bfloat16', 'shouter.qint32',
          'shouter.qvalue', 'shouter.adm.epoch', 'shouter.adm.mac', 'shouter.adm.proof',
          '_ws.expert.message']

errors = []


def fail(msg):
    errors.append(msg)
    if len(errors) <= 30:
        print('FAIL: ' + msg, file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# this script's own decoder and encoder (independent of lib/proto and of the plugin)

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff


V2 = struct.Struct('>HBBBBHIIIHHIIQIBBHQII')
V1 = struct.Struct('>HBBBBHIIIHHIIQII')
NAMES2 = ['magic', 'version', 'type', 'dtype', 'op', 'rank', 'job', 'slotw', 'count', 'flags',
          'world', 'tensor', 'step', 'offset', 'aux', 'kind', 'reserved', 'root', 'token',
          'feedback', 'crc']
NAMES1 = ['magic', 'version', 'type', 'dtype', 'op', 'rank', 'job', 'slotw', 'count', 'flags',
          'world', 'tensor', 'step', 'offset', 'aux', 'crc']


def decode(msg):
    """Header fields and elements of a shouter message (the UDP payload)."""
    v1 = msg[2] == 1
    st, names = (V1, NAMES1) if v1 else (V2, NAMES2)
    h = dict(zip(names, st.unpack_from(msg)))
    hlen = st.size
    h['hlen'] = hlen
    h['payload'] = msg[hlen:]
    h['crc_ok'] = crc32c(msg[hlen:], crc32c(msg[:hlen - 4])) == h['crc']
    h.setdefault('kind', 0)
    h.setdefault('root', 0)
    return h


def elems(h):
    d, p = h['dtype'], h['payload']
    if h['type'] not in (1, 2) or d not in ESIZE:
        return []
    n = min(len(p) // ESIZE[d], SHOWN)
    out = []
    for i in range(n):
        if d in (1, 5):
            out.append(struct.unpack_from('<i', p, 4 * i)[0])
        elif d == 2:
            out.append(struct.unpack_from('<f', p, 4 * i)[0])
        elif d == 3:
            out.append(struct.unpack_from('<e', p, 2 * i)[0])
        else:
            b = struct.unpack_from('<H', p, 2 * i)[0]
            out.append(struct.unpack('<f', struct.pack('<I', b << 16))[0])
    return out


def encode(f, payload=b'', crc=None, v1=False):
    """A header with the given fields (the CRC computed unless given) and the payload."""
    d = dict(magic=0x5348, version=1 if v1 else 2, type=1, dtype=1, op=0, rank=0, job=1,
             slotw=0, count=0, flags=0, world=1, tensor=0, step=0, offset=0, aux=0, kind=0,
             reserved=0, root=0, token=TOKEN, feedback=0, crc=0)
    d.update(f)
    st, names = (V1, NAMES1) if v1 else (V2, NAMES2)
    b = bytearray(st.pack(*[d[n] for n in names]))
    if crc is None:
        crc = crc32c(payload, crc32c(b[:-4]))
    struct.pack_into('>I', b, len(b) - 4, crc)
    return bytes(b) + payload


def frame(msg, src='198.18.0.11', dst='198.18.0.1', sport=5000, dport=47000):
    """Ethernet / IPv4 / UDP around a message (UDP checksum 0: none)."""
    ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + 8 + len(msg), 0, 0x4000, 64, 17,
                               0, bytes(map(int, src.split('.'))),
                               bytes(map(int, dst.split('.')))))
    s = sum(struct.unpack('>10H', ip))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    struct.pack_into('>H', ip, 10, ~s & 0xffff)
    udp = struct.pack('>HHHH', sport, dport, 8 + len(msg), 0)
    eth = bytes.fromhex('020000000001' '020000000100' '0800')
    return eth + bytes(ip) + udp + msg


def read_pcap(path):
    with open(path, 'rb') as fh:
        data = fh.read()
    magic, = struct.unpack_from('<I', data)
    assert magic in (0xa1b2c3d4, 0xa1b23c4d), 'not a little-endian pcap'
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from('<IIII', data, off)
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def write_pcap(path, frames, snaplen=65535):
    """Frames cut at snaplen bytes, as a capture with that snap length writes them."""
    with open(path, 'wb') as fh:
        fh.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, snaplen, 1))
        for i, fr in enumerate(frames):
            fh.write(struct.pack('<IIII', 1, i, min(len(fr), snaplen), len(fr)))
            fh.write(fr[:snaplen])


def udp_payload(fr):
    if len(fr) < 42 or fr[12:14] != b'\x08\x00' or fr[23] != 17:
        return None
    ihl = (fr[14] & 0x0f) * 4
    ulen, = struct.unpack_from('>H', fr, 14 + ihl + 4)
    return fr[14 + ihl + 8:14 + ihl + ulen]


# ---------------------------------------------------------------------------------------------
# frames of this script's own: what the box sends, a version 1 header, broken frames
# (name, frame, expected: refused reason or '', CRC status 1 good / 0 bad, expert text)

def extra_frames():
    out = []
    pay = struct.pack('<8i', 1, -2, 3, -4, 5, 2147483647, -2147483648, 0)
    data = dict(type=1, dtype=1, op=0, rank=1, job=7, slotw=0x80000003, count=8, world=3,
                tensor=5, step=9, offset=1 << 40 | 24, flags=0x2)
    box = dict(src='198.18.0.1', dst='198.18.0.11', sport=47000, dport=5000)

    def add(name, msg, refused, crc_good, expert=None, **kw):
        out.append((name, frame(msg, **kw), refused, crc_good, expert))

    add('data ok', encode(data, pay), '', 1)
    add('result ok', encode(dict(data, type=2, rank=0xffff), pay), '', 1, **box)
    # a DPDK worker's port is the box's base port: a RESULT from lane 1 to it is no refusal
    add('result to a dpdk worker', encode(dict(data, type=2, rank=0xffff), pay), '', 1,
        src='198.18.0.1', dst='198.18.0.11', sport=47001, dport=47000)
    adm = bytes(range(48))
    add('join with proof', encode(dict(type=3, dtype=2, rank=2, world=3, job=7, slotw=16,
                                       count=2048, feedback=2200, token=0x1234), adm), '', 1)
    add('join_ack challenge', encode(dict(type=4, job=7, aux=126, offset=0x1234), adm), '', 1,
        **box)
    add('join_ack refused', encode(dict(type=4, job=7, aux=13, offset=0x1234)), '', 1,
        'JOIN_ACK EACCES', **box)
    add('join_ack ok', encode(dict(type=4, job=7, slotw=16, count=2048, tensor=2,
                                   offset=0x1234)), '', 1, **box)
    add('leave names its process', encode(dict(type=5, job=7, rank=1, world=3,
                                               offset=0x1234)), '', 1)
    add('leave_ack enoent', encode(dict(type=6, job=7, aux=2)), '', 1, 'LEAVE_ACK ENOENT', **box)
    add('abort eproto', encode(dict(type=7, job=7, rank=2, aux=71, op=3, flags=1, slotw=0,
                                    offset=5 << 32 | 9, feedback=8)), '', 1, 'ABORT EPROTO',
        **box)
    add('qint32 result', encode(dict(data, type=2, dtype=5, rank=0xffff, aux=4), pay), '', 1,
        **box)
    add('v1 data', encode(data, pay, v1=True), 'bad_version', 1, 'header version 1')
    # subnormals, infinities, NaNs and signed zeros of the 16-bit types
    sp = [0x0001, 0x8001, 0x03ff, 0x7c00, 0xfc00, 0x7e01, 0x0000, 0x8000, 0x3c00, 0x7bff]
    add('float16 specials', encode(dict(data, dtype=3, count=len(sp)),
                                   struct.pack(f'<{len(sp)}H', *sp)), '', 1)
    sp = [0x0001, 0x8001, 0x007f, 0x7f80, 0xff80, 0x7fc1, 0x0000, 0x8000, 0x3f80, 0x7f7f]
    add('bfloat16 specials', encode(dict(data, dtype=4, count=len(sp)),
                                    struct.pack(f'<{len(sp)}H', *sp)), '', 1)
    # broken frames: one reason each (the CRC computed after the change, but for bad_crc)
    good = encode(data, pay)
    flip = bytearray(good)
    flip[64 + 5] ^= 0x10
    add('bad crc (payload bit)', bytes(flip), 'bad_crc', 0, 'computed 0x')
    add('bad crc (header)', encode(data, pay, crc=0xdeadbeef), 'bad_crc', 0, 'CRC32C 0xdeadbeef')
    add('bad type 9', encode(dict(data, type=9), pay), 'bad_type', 1, 'unknown type 9')
    add('bad type 8', encode(dict(data, type=8), pay), 'bad_type', 1, 'unknown type 8')
    add('bad type 0', encode(dict(data, type=0), pay), 'bad_type', 1, 'unknown type 0')
    add('bad kind byte', encode(dict(data, kind=8), pay), 'bad_type', 1, 'kind 8 unknown')
    add('bad reserved', encode(dict(data, reserved=1), pay), 'bad_type', 1, 'reserved byte')
    add('result to the box', encode(dict(data, type=2), pay), 'bad_type', 1,
        'only the box sends it')
    add('bad version 3', encode(data, pay)[:2] + b'\x03' + encode(data, pay)[3:], 'bad_version',
        None, 'header version 3')
    add('bad dtype', encode(dict(data, dtype=6), pay), 'bad_dtype', 1, 'unknown dtype 6')
    add('bad op', encode(dict(data, op=4), pay), 'bad_op', 1, 'unknown op 4')
    add('qint32 prod', encode(dict(data, dtype=5, op=3), pay), 'bad_op', 1, 'qint32 has no PROD')
    add('bad len', encode(dict(data, count=9), pay), 'bad_len', 1, 'count 9 x 4 = 36')
    add('nopayload allreduce', encode(dict(data, flags=4)), 'bad_len', 1,
        'header-only (NOPAYLOAD) allreduce')
    add('leave with payload', encode(dict(type=5, job=7, rank=1, world=3), pay), 'bad_len', 1,
        'LEAVE with 32 payload bytes')
    add('join odd payload', encode(dict(type=3, rank=1, world=3, token=5), pay), 'bad_len', 1,
        'admission block')
    add('bad rank', encode(dict(data, rank=3), pay), 'bad_rank', 1, 'rank 3, world 3')
    add('count 0', encode(dict(data, count=0)), 'job_count', 1, 'DATA of 0 elements')
    add('relay to itself', encode(dict(data, kind=6, root=1, aux=1), pay), 'bad_kind', 1,
        'scatter root 1 aux 1')
    add('relay payload from non-source', encode(dict(data, kind=3, root=0, aux=0xffff), pay),
        'bad_kind', 1, 'broadcast root 0')
    add('allreduce with root', encode(dict(data, root=1), pay), 'bad_kind', 1, 'allreduce root 1')
    add('join without nonce', encode(dict(type=3, rank=1, world=3, token=0)), 'bad_token', 1,
        'JOIN without a nonce')
    # first reason in the box's order: a bad type and a bad CRC is bad_type
    add('bad type and crc', encode(dict(data, type=9), pay, crc=1), 'bad_type', 0, 'CRC32C')
    return out


# ---------------------------------------------------------------------------------------------

def tshark(pcap):
    cmd = ['tshark', '-n', '-X', 'lua_script:' + LUA, '-r', pcap, '-T', 'fields',
           '-E', 'separator=\t', '-E', 'occurrence=a', '-E', 'aggregator=|']
    for fl in FIELDS:
        cmd += ['-e', fl]
    # no user's preferences (ports, heuristics, profiles): an empty configuration directory
    env = dict(os.environ, WIRESHARK_CONFIG_DIR=os.path.join(os.path.dirname(pcap), 'wsconf'))
    os.makedirs(env['WIRESHARK_CONFIG_DIR'], exist_ok=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        sys.exit(1)
    noise = [ln for ln in r.stderr.splitlines()
             if ln.strip() and not ln.startswith('Running as user')]
    if noise:
        fail('tshark stderr: ' + ' / '.join(noise[:5]))
    rows = []
    for ln in r.stdout.splitlines():
        v = ln.split('\t')
        rows.append(dict(zip(FIELDS, v + [''] * (len(FIELDS) - len(v)))))
    return rows


def num(s):
    return int(s, 16) if s.startswith('0x') else int(s)


def fnum(s):
    return float(s)


def same_float(a, b):
    """a (as tshark shows it) is b, to the bit once rounded to float32 (b is a float32)."""
    if math.isnan(b):
        return math.isnan(a)
    return struct.pack('<f', a) == struct.pack('<f', b)


def check_frame(where, row, msg):
    """Every field tshark shows against this script's decoding of the same bytes."""
    h = decode(msg)
    want = {'shouter.version': h['version'], 'shouter.type': h['type'],
            'shouter.dtype': h['dtype'], 'shouter.op': h['op'], 'shouter.rank': h['rank'],
            'shouter.job': h['job'], 'shouter.ver': h['slotw'] >> 31,
            'shouter.slot': h['slotw'] & 0x7fffffff, 'shouter.count': h['count'],
            'shouter.flags': h['flags'], 'shouter.world': h['world'],
            'shouter.tensor': h['tensor'], 'shouter.step': h['step'],
            'shouter.offset': h['offset'], 'shouter.aux': h['aux'], 'shouter.crc': h['crc'],
            'shouter.crc.status': 1 if h['crc_ok'] else 0}
    if h['version'] == 2:
        want.update({'shouter.kind': h['kind'], 'shouter.root': h['root'],
                     'shouter.feedback': h['feedback']})
        want['shouter.nonce' if h['type'] == 3 else 'shouter.token'] = h['token']
    for k, v in want.items():
        got = row.get(k, '')
        if got == '' or num(got.split('|')[0]) != v:
            fail(f'{where}: {k} = {got!r}, want {v}')
    if h['type'] == 4 and h['version'] == 2 and row['shouter.nonce'] != '' and \
            num(row['shouter.nonce']) != h['offset']:
        fail(f'{where}: JOIN_ACK nonce {row["shouter.nonce"]} != offset {h["offset"]}')
    nop = (h['flags'] & 4) != 0
    if (row['shouter.flags.nopayload'] in ('1', 'True')) != nop:
        fail(f'{where}: nopayload {row["shouter.flags.nopayload"]!r}, flags {h["flags"]:#x}')
    # payload elements
    ev = elems(h)
    name = {1: 'shouter.int32', 2: 'shouter.float32', 3: 'shouter.float16',
            4: 'shouter.bfloat16', 5: 'shouter.qint32'}.get(h['dtype'])
    if ev:
        got = row[name].split('|') if row[name] else []
        if len(got) != len(ev):
            fail(f'{where}: {len(got)} {name} elements shown, want {len(ev)}')
        elif h['dtype'] in (1, 5):
            bad = [i for i, (g, w) in enumerate(zip(got, ev)) if int(g) != w]
            if bad:
                fail(f'{where}: {name}[{bad[0]}] = {got[bad[0]]}, want {ev[bad[0]]}')
        else:
            bad = [i for i, (g, w) in enumerate(zip(got, ev)) if not same_float(fnum(g), w)]
            if bad:
                fail(f'{where}: {name}[{bad[0]}] = {got[bad[0]]}, want {ev[bad[0]]}')
        if h['dtype'] == 5 and h['version'] == 2 and h['kind'] < 3:
            s = h['aux'] - (1 << 32) if h['aux'] >= 1 << 31 else h['aux']
            if row['shouter.scale'] == '' or int(row['shouter.scale']) != s:
                fail(f'{where}: scale {row["shouter.scale"]!r}, want {s}')
            qv = row['shouter.qvalue'].split('|')
            if len(qv) != len(ev) or any(abs(fnum(g) - w * 2.0 ** -s) > 1e-9 * abs(w * 2.0 ** -s)
                                         for g, w in zip(qv, ev)):
                fail(f'{where}: qvalue {qv[:4]} want {[w * 2.0 ** -s for w in ev[:4]]}')
    elif h['type'] in (1, 2) and name and row[name]:
        fail(f'{where}: elements shown for a header-only message')
    if h['type'] in (1, 2) and h['version'] == 2 and 3 <= h['kind'] < 8 and \
            (row['shouter.dest'] == '' or int(row['shouter.dest']) != h['aux'] & 0xffff):
        fail(f'{where}: dest {row["shouter.dest"]!r}, want aux {h["aux"]}')
    if h['type'] in (3, 4) and len(h['payload']) == 48:
        ep, = struct.unpack_from('>I', h['payload'])
        if row['shouter.adm.epoch'] == '' or int(row['shouter.adm.epoch']) != ep or \
                row['shouter.adm.proof'].replace(':', '') != h['payload'][16:].hex():
            fail(f'{where}: admission block {row["shouter.adm.epoch"]!r} '
                 f'{row["shouter.adm.proof"]!r}')
    if h['type'] in (4, 6, 7) and (row['shouter.status'] == '' or
                                   int(row['shouter.status']) != h['aux']):
        fail(f'{where}: status {row["shouter.status"]!r}, want {h["aux"]}')
    return h


def check_case(tmp, i, args):
    pcap = os.path.join(tmp, f'case{i}.pcap')
    r = subprocess.run([GEN, '--out', pcap] + args, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr, file=sys.stderr)
        sys.exit(1)
    kv = dict(w.split('=', 1) for w in r.stdout.split('\n')[0].split())
    frames = read_pcap(pcap)
    rows = tshark(pcap)
    opt = {a: b for a, b in zip(args, args[1:] + ['']) if not b.startswith('--')}
    ranks = int(opt['--ranks'])
    where = 'shouter-pcapgen ' + ' '.join(args)
    if len(frames) != int(kv['frames']) or len(rows) != len(frames):
        fail(f'{where}: {len(frames)} frames in the pcap, {len(rows)} rows from tshark, '
             f'shouter-pcapgen wrote {kv["frames"]}')
        return
    counts = {}
    for k, (fr, row) in enumerate(zip(frames, rows)):
        msg = udp_payload(fr)
        if msg is None or len(msg) < 48:
            if row['shouter.type'] != '':
                fail(f'{where} frame {k + 1}: not shouter, decoded as type {row["shouter.type"]}')
            continue
        h = check_frame(f'{where} frame {k + 1}', row, msg)
        counts[h['type']] = counts.get(h['type'], 0) + 1
        # what shouter-pcapgen wrote: valid traffic of job 1, every rank from its own address
        if row['shouter.refused'] != '' or row['shouter.crc.status'] != '1':
            fail(f'{where} frame {k + 1}: valid frame refused {row["shouter.refused"]!r} '
                 f'crc {row["shouter.crc.status"]!r}')
        if int(row['shouter.job']) != 1 or int(row['shouter.rank']) >= ranks or \
                row['ip.src'] != f'198.18.0.{11 + int(row["shouter.rank"])}':
            fail(f'{where} frame {k + 1}: job {row["shouter.job"]} rank '
                 f'{row["shouter.rank"]} from {row["ip.src"]}')
        if h['type'] == 1 and num(row['shouter.token']) != TOKEN:
            fail(f'{where} frame {k + 1}: token {row["shouter.token"]}')
        if h['type'] == 1 and int(row['udp.dstport']) != \
                47000 + int(row['shouter.slot']) % int(opt.get('--lanes', '1')):
            fail(f'{where} frame {k + 1}: slot {row["shouter.slot"]} on port '
                 f'{row["udp.dstport"]}')
    ndata = counts.get(1, 0)
    want_data = int(kv['data'])
    if '--lossy' in args:
        if ndata <= want_data:
            fail(f'{where}: {ndata} DATA frames, want more than {want_data} (--lossy)')
    elif ndata != want_data:
        fail(f'{where}: {ndata} DATA frames, shouter-pcapgen wrote {want_data}')
    if counts.get(3, 0) != (ranks if '--join' in args else 0):
        fail(f'{where}: {counts.get(3, 0)} JOINs')
    if counts.get(5, 0) != (ranks if '--leave' in args else 0):
        fail(f'{where}: {counts.get(5, 0)} LEAVEs')
    npay = sum(any(r[e] for e in ('shouter.int32', 'shouter.float32', 'shouter.float16',
                                  'shouter.bfloat16', 'shouter.qint32')) for r in rows)
    print(f'ok: {where}: {len(frames)} frames, {ndata} DATA, every field and {npay} '
          'payloads decoded')


def check_extra(tmp):
    ex = extra_frames()
    pcap = os.path.join(tmp, 'extra.pcap')
    write_pcap(pcap, [e[1] for e in ex])
    rows = tshark(pcap)
    if len(rows) != len(ex):
        fail(f'extra: {len(rows)} rows for {len(ex)} frames')
        return
    for (name, fr, refused, crc_good, expert), row in zip(ex, rows):
        msg = udp_payload(fr)
        if msg[2] in (1, 2):
            check_frame(name, row, msg)
        if row['shouter.refused'] != refused:
            fail(f'{name}: refused {row["shouter.refused"]!r}, want {refused!r}')
        if crc_good is not None and row['shouter.crc.status'] != str(crc_good):
            fail(f'{name}: crc status {row["shouter.crc.status"]!r}, want {crc_good}')
        exp = row['_ws.expert.message']
        if refused and f'(box: {refused})' not in exp:
            fail(f'{name}: no expert item "(box: {refused})" in {exp!r}')
        if expert is not None and expert not in exp:
            fail(f'{name}: expert {exp!r} lacks {expert!r}')
        if not refused and not expert and exp:
            fail(f'{name}: unexpected expert items {exp!r}')
    print(f'ok: {len(ex)} frames of the box, v1 and broken, each refused as the box would')
    # a capture's snap length cuts the payload (CRC unverified, the captured elements shown)
    # or the header (nothing decoded); neither is a refusal, nor a dissector error
    pay = struct.pack('<64i', *range(64))
    fr = frame(encode(dict(type=1, count=64, world=2), pay))
    for snap, nel in ((42 + 64 + 40, 10), (42 + 30, 0)):
        cut = os.path.join(tmp, f'cut{snap}.pcap')
        write_pcap(cut, [fr], snap)
        row = tshark(cut)[0]
        got = row['shouter.int32'].split('|') if row['shouter.int32'] else []
        if row['shouter.refused'] != '' or 'Lua Error' in row['_ws.expert.message'] or \
                got != [str(i) for i in range(nel)] or \
                row['shouter.crc.status'] != ('2' if nel else ''):
            fail(f'frame cut at {snap} bytes: refused {row["shouter.refused"]!r} crc '
                 f'{row["shouter.crc.status"]!r} elements {got} expert '
                 f'{row["_ws.expert.message"]!r}')
    print('ok: frames cut by the snap length: CRC unverified, no refusal')


def main():
    if GEN is None or LUA is None:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix='shouter-tshark.') as tmp:
        for i, args in enumerate(CASES):
            check_case(tmp, i, args)
        check_extra(tmp)
    if errors:
        print(f'{len(errors)} failures', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
