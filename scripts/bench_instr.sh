#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The aggregator's instructions per DATA frame, by stage (issue 16): shouter-agg
# --bench-mpps (the real data path on one lcore, fed from memory: app/agg/agg_bench.c) and
# its roofline kernel (agg_bench_kernel(): the CRC checks, the sums and the result's CRC)
# under callgrind, one dump per timed phase, attributed by scripts/instr_tool.py. Counts are
# instructions, not time: they do not move with the machine's load, so "before" and "after"
# a change compare exactly. Not part of CI (it takes a few minutes).
#
#   scripts/bench_instr.sh [--seconds S] [--chunk N] [--build DIR] [--keep DIR]
#     --seconds S   each phase's length under callgrind (default 2: ~50k DATA frames)
#     --chunk N     int32 elements per chunk (shouter-agg --bench-chunk; default 256: 1 KiB)
#     --build DIR   build directory (default build-instr): configured with -Dcpu=x86-64-v3,
#                   since valgrind does not decode AVX-512 (a -march=native build on an
#                   AVX-512 machine dies with SIGILL under it)
#     --keep DIR    keep the callgrind dumps there (callgrind_annotate --auto=yes for lines)
#
# Prints the tables, then name=value lines: instr_per_data_zc (the data path, zero-copy
# fan-out, 4 ranks, 1 KiB int32 chunks unless --chunk), instr_per_data_roofline,
# instr_vs_roofline (the roofline's count over the data path's: agg_vs_roofline's form),
# instr_per_data_copy and instr_copy_<stage> (the same, copy fan-out), and
# instr_zc_<stage> for the stages rx_mbuf, l2_l4, validate, crc, pool, result, fanout, tx
# and ring_pmd (the in-process ring device's own rx/tx, as a NIC's PMD would be), other.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
secs=2
chunk=256
build=$top/build-instr
keep=
while (($#)); do
    case $1 in
    --seconds | --chunk | --build | --keep)
        (($# >= 2)) || { echo "bench_instr.sh: $1 needs a value (--help)" >&2; exit 2; } ;;
    esac
    case $1 in
    --seconds) secs=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '4,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_instr.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
[[ $secs =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "bench_instr.sh: --seconds: a number" >&2; exit 2; }
[[ $chunk =~ ^[0-9]+$ ]] && ((chunk >= 1 && chunk <= 2048)) ||
    { echo "bench_instr.sh: --chunk: an integer in 1..2048" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench_instr.sh: must run as root (DPDK)" >&2; exit 2; }
if ! command -v valgrind >/dev/null; then
    echo "bench_instr.sh: installing valgrind" >&2
    apt-get install -y -q valgrind >/dev/null
fi
py=/usr/bin/python3
[[ -x $py ]] || py=python3

if [[ ! -f $build/build.ninja ]]; then
    meson setup "$build" "$top" -Dcpu=x86-64-v3 -Ddebug=true -Dtests=false -Dpython=false \
        -De2e=false --buildtype=release >/dev/null
fi
ninja -C "$build" app/shouter-agg >/dev/null

out=$(mktemp -d /tmp/shr-instr.XXXXXX)
trap 'rm -rf "$out"; rm -rf /var/run/dpdk/shr-instr-$$' EXIT
# b_timed: the timed data path (its first call: the configured zero-copy fan-out; the second:
# copy), agg_bench_kernel: the roofline; each leaves a dump when it returns. b_run()'s checked
# pass before b_timed (b_verify(), which reads every result back through the data path's
# validation and CRC) is not counted: its cost would go to those stages, spread over as many
# frames as the phase's seconds fed (fewer on a loaded machine: more per frame)
valgrind --tool=callgrind --dump-instr=no \
    --toggle-collect=b_timed --toggle-collect=agg_bench_kernel \
    --dump-after=b_timed --dump-after=agg_bench_kernel \
    --callgrind-out-file="$out/cg.out" \
    "$build/app/shouter-agg" --no-pci --no-huge -m 1024 --file-prefix "shr-instr-$$" -l 0 \
    -- --bench-mpps "$secs" --bench-chunk "$chunk" >"$out/run.log" 2>&1 || {
    echo "bench_instr.sh: shouter-agg under callgrind failed:" >&2
    tail -n 20 "$out/run.log" >&2
    exit 1
}
for f in 1 2 3; do
    [[ -f $out/cg.out.$f ]] || { echo "bench_instr.sh: no dump $f" >&2; exit 1; }
done
res=$("$py" "$top/scripts/instr_tool.py" zc:"$out/cg.out.1":shr_pool_contribute_out \
    copy:"$out/cg.out.2":shr_pool_contribute_out roofline:"$out/cg.out.3":shr_pool_reduce_i32)
echo "$res" | grep -v '='
kv=$(echo "$res" | grep '=')
echo "$kv"
zc=$(echo "$kv" | sed -n 's/^instr_per_data_zc=//p')
rl=$(echo "$kv" | sed -n 's/^instr_per_data_roofline=//p')
awk -v a="$rl" -v b="$zc" 'BEGIN {printf "instr_vs_roofline=%.3f\n", a / b}'
if [[ -n $keep ]]; then
    mkdir -p "$keep"
    cp "$out"/cg.out.* "$out/run.log" "$keep/"
fi
