#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The result group (issue 16): a box started with --result-group 198.18.0.255 (the bridge's
# broadcast) sends each result for every rank once, and the bridge copies it to the four
# ranks, which joined the group at JOIN. Checked, through the real binaries:
#  1. int32 allreduce exact and float32 bit-identical at every rank; each rank's join line
#     names the group; the box counted results_group, and it sent fewer than 2 frames per
#     completed round (one copy per rank would be 4);
#  2. the same with 5% loss on rank 1's link: retransmissions happened, the box sent results
#     again (to one rank each, not to the group), every result right;
#  3. a DPDK rank among them (its driver takes the group's frames too): the same as 1;
#  4. ranks that do not offer the group (--no-group): no group, results_group unchanged, one
#     frame per rank per round, results right.
# Exit 77 (skip) when not root.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces)"
    exit 77
fi

# shellcheck source=tests/e2e/cluster.sh
source "$(dirname "$0")/cluster.sh"
CL_PREFIX=${CL_PREFIX:-grp$$}
CL_GROUP=198.18.0.255
cl_init
cl_traps
cl_up 4
cl_agg_start

fail=0
bad() { cl_log "FAIL: $*"; fail=1; }

# the box's counters: completed rounds, frames sent, results sent to the group and again
counters() {
    cl_telemetry /shouter/stats | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["/shouter/stats"]
print(d["msg_completed"], d["tx_pkts"], d["results_group"], d["msg_resent"])'
}

# run LABEL WANT_GROUP DRIVERS [worker options]: one allreduce job, then its checks
run() {
    local label=$1 want=$2 drivers=$3 c0 c1 t0 t1 g0 g1 r0 r1 rounds frames named line
    local retx=0
    shift 3
    read -r c0 t0 g0 r0 < <(counters)
    if ! cl_allreduce "$drivers" --iters 3 --warmup 1 "$@"; then
        bad "$label: the allreduce failed"
        return
    fi
    read -r c1 t1 g1 r1 < <(counters)
    rounds=$((c1 - c0))
    frames=$((t1 - t0))
    named=$(grep -l "result group 198.18.0.255:4800[0-9]" "${CL_RLOGS[@]}" | wc -l || true)
    for line in "${CL_RESULTS[@]}"; do
        retx=$((retx + $(cl_field "$line" retx || echo 0)))
    done
    cl_log "$label: rounds=$rounds frames=$frames results_group=$((g1 - g0))" \
        "results_again=$((r1 - r0)) ranks_naming_the_group=$named retx=$retx"
    ((rounds > 0)) || bad "$label: the box completed no round"
    if ((want)); then
        ((named == 4)) || bad "$label: $named of 4 ranks joined the result group"
        ((g1 - g0 > 0)) || bad "$label: no result went to the group"
        ((frames < 2 * rounds)) ||
            bad "$label: $frames frames for $rounds rounds: not once per round"
    else
        ((named == 0)) || bad "$label: $named ranks joined a result group"
        ((g1 == g0)) || bad "$label: $((g1 - g0)) results went to the group"
        ((frames >= 4 * rounds)) ||
            bad "$label: $frames frames for $rounds rounds of 4 ranks"
    fi
    LAST_RETX=$retx
    LAST_AGAIN=$((r1 - r0))
}

run "group int32" 1 "udp udp udp udp" --dtype int32 --size 1M
run "group float32" 1 "udp udp udp udp" --dtype float32 --size 256K

"$CL_NETNS" netem w1 "loss 5%" --prefix "$CL_PREFIX"
run "group float32, 5% loss on w1" 1 "udp udp udp udp" --dtype float32 --size 1M
((LAST_RETX > 0)) || bad "5% loss: no rank retransmitted"
((LAST_AGAIN > 0)) || bad "5% loss: the box sent no result again (to one rank)"
"$CL_NETNS" netem w1 none --prefix "$CL_PREFIX"

run "a DPDK rank" 1 "udp dpdk udp udp" --dtype float32 --size 1M
run "--no-group" 0 "udp dpdk udp udp" --dtype int32 --size 256K --no-group

agg_rc=0
cl_agg_stop || agg_rc=$?
((agg_rc == 0)) || bad "aggregator exit status $agg_rc after SIGINT"
((fail == 0)) || CL_FAILED=1
if ((fail)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
