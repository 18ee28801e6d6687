#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# End-to-end allreduce through the real binaries: the DPDK aggregator in its namespace,
# one rank per worker namespace (DPDK on af_packet or kernel UDP), over a Linux bridge.
# Every rank verifies its result (shouter-worker does, from (rank, iteration, index)), and
# this script also requires the crc= (a CRC32C over every iteration's result) to be equal at
# all ranks (bit-identical), and the RESULT to echo the world, dtype and size.
#
#   allreduce.sh --drivers dpdk,udp,... --dtype int32|float32 --sizes 4,4K,1M
#                [--iters N] [--loss PCT [--loss-link wI]] [--op sum|min|max]
#                [--coll NAME [--root R]]
#                [-- extra worker options]
#
# --coll runs another collective (shouter-worker --coll: reduce, reduce_scatter, broadcast,
# allgather, gather, scatter, alltoall; --sizes are then per rank block): every rank checks
# its own output, crc= must agree only where every rank receives the same bytes (allreduce,
# broadcast, allgather), and the box's telemetry must count rounds of that kind
# (rounds_<kind> > 0) and none of any other kind but allreduce (the barriers).
#
# One aggregator serves every size in turn (one job per size). --loss drops PCT% of the IPv4
# frames in each direction of every worker link (scripts/netns.sh netem all "loss PCT%"), or
# of worker I's link alone with --loss-link wI, and
# then requires that retransmissions happened (retx > 0 at some rank) and still every result
# is right. The udp ranks' stats lines (drv_gso=) must show no datagram sent in a UDP GSO
# message with `-- --no-gso`, and some, by default, in an allreduce of 64 KiB or more. A
# DPDK rank that slept between polls (drv_sleeps= on its "waits" line) must have set its
# timer slack to 1 us (timerslack_ns=1000). --simd BITS starts the DPDK ranks with EAL's
# --force-max-simd-bitwidth=BITS: below 512 they must not fold their CRC32C with AVX-512
# (the "CRC32C" each rank names when it joins), the udp ranks run the box's (which folds
# where the CPU can), and the results stay exact and bit-identical across the versions.
# Exit 77 (skip) when not root: namespaces need it.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces)"
    exit 77
fi

drivers=udp,udp
dtype=int32
sizes=4K
iters=3
loss=
loss_link=all
op=
coll=allreduce
root=0
simd=
extra=()
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --loss-link) loss_link=$2; shift 2 ;;
    --op) op=$2; shift 2 ;;
    --coll) coll=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --simd) simd=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "allreduce.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/cluster.sh
source "$(dirname "$0")/cluster.sh"
CL_PREFIX=${CL_PREFIX:-e2e$$}
[[ -z $simd ]] || CL_WORKER_EAL=--force-max-simd-bitwidth=$simd
cl_init
cl_traps

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_log "world=$world drivers=$drivers dtype=$dtype sizes=$sizes iters=$iters loss=${loss:-0}"
cl_up "$world"
[[ -z $loss ]] || "$CL_NETNS" netem "$loss_link" "loss $loss%" --prefix "$CL_PREFIX"
cl_agg_start

fail=0
retx_total=0
gso_total=0
gso_off=0
drv_sleeps=0
opargs=(--coll "$coll" --root "$root")
[[ -z $op ]] || opargs+=(--op "$op")
case $coll in
allreduce | broadcast | allgather) CL_SAME_CRC=1 ;;
*) CL_SAME_CRC=0 ;;
esac
IFS=, read -r -a szs <<<"$sizes"
for sz in "${szs[@]}"; do
    cl_log "$coll $dtype size=$sz"
    if ! cl_allreduce "${drv[*]}" --dtype "$dtype" --size "$sz" --iters "$iters" --warmup 1 \
            "${opargs[@]}" "${extra[@]}"; then
        cl_log "FAIL: size $sz"
        fail=1
        continue
    fi
    for line in "${CL_RESULTS[@]}"; do
        retx_total=$((retx_total + $(cl_field "$line" retx || echo 0)))
    done
    # the CRC32C version each rank named when it joined, against the box's
    if [[ -n $simd ]]; then
        box_crc=$(sed -n 's/^shouter-agg: port 0: .*, CRC32C \([^ ]*\)$/\1/p' "$CL_DIR/agg.log")
        for i in "${!CL_RLOGS[@]}"; do
            c=$(sed -n 's/.* joined job .*: driver [a-z]* (CRC32C \([^)]*\)),.*/\1/p' \
                "${CL_RLOGS[$i]}")
            cl_log "rank $i (${drv[$i]}): CRC32C $c (box: $box_crc)"
            if [[ -z $c || -z $box_crc ]]; then
                cl_log "FAIL: rank $i or the box named no CRC32C version"
                fail=1
            elif [[ ${drv[$i]} == dpdk ]] && ((simd < 512)) && [[ $c == avx512* ]]; then
                cl_log "FAIL: rank $i folds with AVX-512 under --force-max-simd-bitwidth=$simd"
                fail=1
            elif [[ ${drv[$i]} == udp && $c != "$box_crc" ]]; then
                cl_log "FAIL: udp rank $i runs CRC32C $c, the box $box_crc (the same CPU)"
                fail=1
            fi
        done
    fi
    # the udp ranks' datagrams sent in GSO messages, and kernels that refused them
    read -r g o < <(sed -n 's/.* drv_gso=\([0-9]*\)\/[0-9]* gso_off=\([0-9]*\) .*/\1 \2/p' \
        "${CL_RLOGS[@]}" | awk '{g += $1; o += $2} END {print g + 0, o + 0}')
    gso_total=$((gso_total + g))
    gso_off=$((gso_off + o))
    # a DPDK rank that slept between polls (drv_sleeps) set its timer slack to 1 us first
    while read -r d t; do
        drv_sleeps=$((drv_sleeps + d))
        if ((d > 0 && t != 1000)); then
            cl_log "FAIL: a rank slept $d times between polls with a timer slack of $t ns"
            fail=1
        fi
    done < <(sed -n 's/.* drv_sleeps=\([0-9]*\) timerslack_ns=\([0-9]*\)$/\1 \2/p' \
        "${CL_RLOGS[@]}")
done
cl_log "DPDK ranks' sleeps between polls: $drv_sleeps (each with a timer slack of 1 us)"
# udp ranks: --no-gso sends datagram by datagram; by default an allreduce of 64 KiB or more
# (several chunks of 9,000 bytes at most) starts with a window of them in one burst to the
# box's one port (one lane here), which goes as GSO messages (unless the kernel refused them;
# a box of several lanes gets a burst's DATA on its lanes' ports in turn: runs of one)
max_sz=$(tr ',' '\n' <<<"$sizes" | awk '{n = $1 + 0; u = substr($1, length($1))
    if (u == "K") n *= 1024; else if (u == "M") n *= 1048576
    if (n > m) m = n} END {print m + 0}')
cl_log "datagrams sent in UDP GSO messages: $gso_total (kernels that refused them: $gso_off)"
if [[ " ${extra[*]} " == *" --no-gso "* ]]; then
    if ((gso_total != 0)); then
        cl_log "FAIL: --no-gso, yet $gso_total datagrams went in GSO messages"
        fail=1
    fi
elif [[ ",$drivers," == *",udp,"* && $coll == allreduce ]] &&
        ((max_sz >= 65536 && gso_total == 0 && gso_off == 0)); then
    cl_log "FAIL: the udp ranks sent no GSO message (and no kernel refused one)"
    fail=1
fi

if [[ -n $loss ]]; then
    drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
    cl_log "loss $loss%: frames dropped at the bridge=$drops, retransmissions=$retx_total"
    if ((drops == 0)); then
        cl_log "FAIL: the loss rules dropped nothing"
        fail=1
    elif ((retx_total == 0)); then
        cl_log "FAIL: frames were dropped but no rank retransmitted"
        fail=1
    fi
fi

echo "aggregator counters:"
stats=$(cl_telemetry /shouter/stats || true)
echo "$stats" | sed 's/^/  /'
if [[ $coll != allreduce ]]; then
    # every round of the collective went through the box as its kind, and no other kind
    # but the barriers' allreduce
    for k in allreduce reduce reduce_scatter broadcast allgather gather scatter alltoall; do
        v=$(echo "$stats" | /usr/bin/python3 -c \
            "import json,sys; print(json.load(sys.stdin)['/shouter/stats'].get('rounds_$k', -1))" \
            2>/dev/null || echo -1)
        if [[ $k == "$coll" ]] && ! ((v > 0)); then
            cl_log "FAIL: the box counted rounds_$k=$v"
            fail=1
        elif [[ $k != "$coll" && $k != allreduce ]] && ((v != 0)); then
            cl_log "FAIL: the box counted rounds_$k=$v for a $coll run"
            fail=1
        fi
    done
fi
agg_rc=0
cl_agg_stop || agg_rc=$?
if ((agg_rc != 0)); then
    cl_log "FAIL: aggregator exit status $agg_rc after SIGINT"
    fail=1
fi
tail -n 5 "$CL_DIR/agg.log" | sed 's/^/  agg: /'
((fail == 0)) || CL_FAILED=1
if ((fail)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
