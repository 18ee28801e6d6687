#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Two aggregation lcores in one box, on the real path: shouter-agg on net_af_packet with
# qpairs=2 (the kernel's PACKET_FANOUT spreads the frames over the two sockets by a flow hash,
# so about half of a lane's DATA reach the lcore that does not own it), EAL -l 0,1 and
# --lanes 2 (the main lcore and the worker lcore are the two data lcores). Allreduces under
# PCT% loss in each direction of every worker link: int32 exact, float32 bit-identical at all
# ranks (faults_matrix.sh's checks). Then, from /shouter/lcores:
#   - both data lcores summed DATA (msg_data > 0 on each): the slots are split between them;
#   - lane_foreign = 0 at both: no lcore took in a DATA sent to the port of a lane the other
#     lcore owns (workers put slot s on port base + s mod 2, so a DATA that was not handed to
#     its owner, or was handed to the wrong lcore, counts there);
#   - what one lcore handed off the other took in (sum of lane_fwd = sum of lane_in; a DATA
#     its owner's full ring refused counts in lane_drop, not in lane_fwd); how much was handed
#     off is printed (it depends on the flows' hashes).
#
#   lanes2.sh [--drivers udp,dpdk,udp,udp] [--loss 5] [--sizes 64K,1M] [--iters 3]
set -euo pipefail

drivers=udp,dpdk,udp,udp
loss=5
sizes=64K,1M
iters=3
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "lanes2.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# two data lcores: the main lcore and lcore 1 (two cores here), one af_packet socket each
export CL_AGG_LCORES=0,1 CL_AFP_QPAIRS=2
# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init l2

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_log "world=$world drivers=$drivers loss=$loss% sizes=$sizes iters=$iters, box: 2 lanes," \
    "2 data lcores, af_packet qpairs=2"
cl_up "$world"
for ((i = 0; i < world; i++)); do
    "$CL_NETNS" netem "w$i" "loss $loss%" --prefix "$CL_PREFIX"
done
cl_agg_start --lanes 2 --job-timeout-ms 5000
grep -q "2 lanes (UDP [0-9]*\.\.[0-9]*), 2 queue(s)" "$CL_DIR/agg.log" ||
    fl_fail "the box does not run 2 lanes on 2 queues: $(grep 'lanes (UDP' "$CL_DIR/agg.log")"

retx=0
IFS=, read -r -a szs <<<"$sizes"
for dt in int32 float32; do
    for sz in "${szs[@]}"; do
        cl_log "allreduce $dt size=$sz under loss $loss%"
        if ! cl_allreduce "${drv[*]}" --dtype "$dt" --size "$sz" --iters "$iters" --warmup 1; then
            fl_fail "$dt size $sz"
            continue
        fi
        for log in "${CL_RLOGS[@]}"; do
            grep -q "joined job .*, lanes 2$" "$log" ||
                fl_fail "a rank was not told 2 lanes: $(grep 'joined job' "$log")"
        done
        for line in "${CL_RESULTS[@]}"; do
            retx=$((retx + $(cl_field "$line" retx || echo 0)))
        done
    done
done
n=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
cl_log "loss: $n frames dropped at the bridge, ranks retransmitted $retx"
((n > 0)) || fl_fail "the loss rules dropped nothing"
((retx > 0)) || fl_fail "frames were dropped but no rank retransmitted"

# every job has ended (cl_allreduce waits for its ranks): the handoff rings are empty
lc=$(fl_tel /shouter/lcores)
fwd=0
in=0
drop=0
for id in 0 1; do
    d=$(fl_json "$lc" "$id/msg_data")
    f=$(fl_json "$lc" "$id/lane_foreign")
    a=$(fl_json "$lc" "$id/lane_fwd")
    b=$(fl_json "$lc" "$id/lane_in")
    c=$(fl_json "$lc" "$id/lane_drop")
    cl_log "lcore $id: rx_pkts=$(fl_json "$lc" "$id/rx_pkts") msg_data=$d" \
        "msg_completed=$(fl_json "$lc" "$id/msg_completed") lane_fwd=$a lane_in=$b" \
        "lane_drop=$c lane_foreign=$f"
    [[ $d =~ ^[0-9]+$ && $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ && $c =~ ^[0-9]+$ ]] ||
        { fl_fail "no counters for lcore $id in /shouter/lcores"; continue; }
    ((d > 0)) || fl_fail "lcore $id summed no DATA"
    [[ $f == 0 ]] || fl_fail "lcore $id took in $f DATA of a lane it does not own"
    fwd=$((fwd + a))
    in=$((in + b))
    drop=$((drop + c))
done
cl_log "handed to the other lcore: $fwd DATA ($in taken in, $drop dropped)"
((fwd == in)) || fl_fail "lane_fwd $fwd != lane_in $in (lane_drop $drop)"
fl_finish
