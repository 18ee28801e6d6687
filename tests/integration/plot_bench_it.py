#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""scripts/plot_bench.gp (bench.sh's goodput-against-size picture) on a fixed CSV.

plot_bench_it.py PLOT_GP SAMPLE_CSV

Runs Debian's gnuplot on the sample (rows in no order; points that failed, gave wrong results
or that Gloo does not support; a collective with no data) and checks: exit 0; the per-panel
counts it prints against this script's own count of the CSV's ok rows; a PNG of the layout's
size; and, decoding the PNG here, that each panel holds the colour of each world size whose
points it has (N=2 blue, N=4 red: lines and filled markers) and that the panel with no data
holds neither. Then that a missing variable, a missing file and a malformed CSV each make it
exit non-zero. Exit 77 (skipped) without gnuplot (scripts/deps.sh installs gnuplot-nox).
"""

import csv
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

COLLS = ["allreduce", "broadcast", "allgather", "reduce_scatter", "gather"]
WORLDS = [2, 4]
COLOUR = {2: (0x1F, 0x77, 0xB4), 4: (0xD6, 0x27, 0x28)}
PANEL_W, PANEL_H = 600, 420  # the script's pngcairo size: 1200 x 420 per row of two panels
MIN_PIXELS = 40  # of a series' exact colour in its panel (markers alone are ~50 each)


def fail(msg):
    print(f"plot_bench_it: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def gnuplot(gp, variables):
    cmd = ["gnuplot", "-e", "; ".join(f"{k}='{v}'" for k, v in variables.items()), gp]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def png_pixels(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(typ + body) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            fail(f"{path}: bad CRC in chunk {typ!r}")
        if typ == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat += body
        elif typ == b"IEND":
            break
        pos += 12 + n
    if hdr is None:
        fail(f"{path}: no IHDR")
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail(f"{path}: depth {depth} colour type {ctype} interlace {interlace}: not decoded here")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        fail(f"{path}: {len(raw)} bytes of image data for {w} x {h}")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ft == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 0xFF
            elif ft != 0:
                fail(f"{path}: row {y}: filter {ft}")
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gp, sample = sys.argv[1], sys.argv[2]
    if shutil.which("gnuplot") is None:
        print("plot_bench_it: no gnuplot (scripts/deps.sh installs gnuplot-nox): skipped")
        return 77

    # this script's own count of what must be drawn
    ok, unsup, sizes = {}, {}, {}
    with open(sample, newline="") as f:
        for row in csv.DictReader(f):
            k = (row["collective"], int(row["world"]), row["impl"])
            ok[k] = ok.get(k, 0) + (row["status"] == "ok")
            if row["status"] == "ok":
                sizes.setdefault(k[:2], set()).add(int(row["bytes"]))
            if row["status"] == "unsupported":
                unsup[k[:2]] = unsup.get(k[:2], 0) + 1

    tmp = tempfile.mkdtemp(prefix="plot_bench_it.")
    try:
        png = os.path.join(tmp, "out.png")
        rc, out = gnuplot(gp, {"csv": sample, "png": png, "colls": " ".join(COLLS),
                               "worlds": " ".join(map(str, WORLDS)), "subtitle": "test"})
        if rc != 0:
            fail(f"gnuplot exit {rc}: {out}")
        got = re.findall(r"^plot_bench: (\S+) n=(\d+) shouter=(\d+) gloo=(\d+) "
                         r"gloo_unsupported=(\d+)$", out, re.M)
        want = [(c, str(w), str(ok.get((c, w, "shouter"), 0)), str(ok.get((c, w, "gloo"), 0)),
                 str(unsup.get((c, w), 0))) for c in COLLS for w in WORLDS]
        if got != want:
            fail(f"panel counts {got}, want {want}")
        if f"plot_bench: wrote {png}" not in out:
            fail(f"no 'wrote' line: {out}")
        if not os.path.isfile(png):
            fail(f"gnuplot exit 0, no {png}: {out}")
        w, h, rows = png_pixels(png)
        ncol, nrow = 2, (len(COLLS) + 1) // 2
        if (w, h) != (ncol * PANEL_W, nrow * PANEL_H):
            fail(f"PNG {w} x {h}, want {ncol * PANEL_W} x {nrow * PANEL_H}")
        for i, c in enumerate(COLLS):
            x0, y0 = (i % ncol) * PANEL_W, (i // ncol) * PANEL_H
            for wd in WORLDS:
                xs = [x for y in range(y0, y0 + PANEL_H) for x in range(x0, x0 + PANEL_W)
                      if rows[y][x] == COLOUR[wd]]
                n, span = len(xs), (max(xs) - min(xs) if xs else 0)
                pts = ok.get((c, wd, "shouter"), 0) + ok.get((c, wd, "gloo"), 0)
                if pts and n < MIN_PIXELS:
                    fail(f"panel {c}: N={wd} has {pts} points, {n} pixels of its colour")
                if not pts and n:
                    fail(f"panel {c}: N={wd} has no points, {n} pixels of its colour")
                # points from 64 KiB to 16 MiB (log x) reach across most of the panel, the
                # key's sample alone does not
                sz = sizes.get((c, wd), set())
                if sz and max(sz) >= 64 * min(sz) and span < PANEL_W // 2:
                    fail(f"panel {c}: N={wd}: {len(sz)} sizes from {min(sz)} to {max(sz)} "
                         f"bytes, its colour only {span} pixels wide")
                print(f"plot_bench_it: {c} N={wd}: {pts} points, {n} pixels, {span} wide")

        # what must fail
        rc, out = gnuplot(gp, {"png": png})
        if rc == 0:
            fail("no csv variable: exit 0")
        rc, out = gnuplot(gp, {"csv": os.path.join(tmp, "none.csv"), "png": png})
        if rc == 0:
            fail("missing CSV: exit 0")
        bad = os.path.join(tmp, "bad.csv")
        with open(sample) as f, open(bad, "w") as g:
            lines = f.read().splitlines()
            g.write("\n".join(lines[:5] + ["allreduce,2,shouter"] + lines[5:]) + "\n")
        rc, out = gnuplot(gp, {"csv": bad, "png": png})
        if rc == 0:
            fail("a row of 3 fields: exit 0")
    finally:
        shutil.rmtree(tmp)
    print("plot_bench_it: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
