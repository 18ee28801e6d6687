#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Live capture of the box (issue 11 item 3): shouter-agg enables DPDK packet capture
# (rte_pdump_init), so dpdk-dumpcap, a DPDK secondary process, records its port's traffic
# while it runs. The aggregator runs on hugepages here (a secondary cannot map the memory
# of a --no-huge primary): a hugetlbfs of the test's own, with the pages it needs reserved
# for the run and given back after. One job runs while dpdk-dumpcap captures into a pcapng;
# tshark with the dissector (scripts/wireshark/shouter.lua) must find in it the job's JOINs
# and JOIN_ACKs, its DATA from every rank and its RESULTs to every rank, every CRC good and
# nothing the box would refuse.
#
#   capture.sh [--drivers dpdk,udp] [--size 256K] [--iters 2]
#
# Exit 77 (skip) when not root.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces, hugetlbfs)"
    exit 77
fi

drivers=dpdk,udp
size=256K
iters=2
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "capture.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
lua=$top/scripts/wireshark/shouter.lua
for t in dpdk-dumpcap tshark; do
    command -v "$t" >/dev/null || { echo "FAIL: $t not installed (scripts/deps.sh)" >&2; exit 1; }
done

# shellcheck source=tests/e2e/cluster.sh
source "$(dirname "$0")/cluster.sh"
CL_PREFIX=${CL_PREFIX:-cap$$}

PAGES=384                       # 2 MiB pages: the box's -m 512 and dumpcap's mbuf pool
HP_DIR=
HP_SAVED=
DUMP_PID=

cap_cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    if [[ -n $DUMP_PID ]]; then
        kill -INT "$DUMP_PID" 2>/dev/null
        wait "$DUMP_PID" 2>/dev/null
    fi
    # cl_cleanup stops everything else and exits: in a subshell, with our status
    (exit "$rc")
    (cl_cleanup)
    if [[ -n $HP_DIR ]]; then
        umount "$HP_DIR" 2>/dev/null
        rmdir "$HP_DIR" 2>/dev/null
    fi
    [[ -z $HP_SAVED ]] || echo "$HP_SAVED" >/proc/sys/vm/nr_hugepages
    exit "$rc"
}

fail() {
    cl_log "FAIL: $*"
    CL_FAILED=1
    exit 1
}

cl_init
cl_traps
trap cap_cleanup EXIT

# hugepages: our own mount, and enough free pages (restored at exit)
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
if ((free < PAGES)); then
    HP_SAVED=$(cat /proc/sys/vm/nr_hugepages)
    echo $((HP_SAVED + PAGES - free)) >/proc/sys/vm/nr_hugepages
    free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
    ((free >= PAGES)) || fail "only $free free 2 MiB hugepages, need $PAGES"
fi
HP_DIR=$(mktemp -d /tmp/shouter-huge.XXXXXX)
mount -t hugetlbfs -o pagesize=2M nodev "$HP_DIR"
CL_AGG_MEM="--huge-dir $HP_DIR -m 512"

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_up "$world"
cl_agg_start

# dpdk-dumpcap attaches to the box (its --file-prefix) and captures port 0; it starts
# counting ("Packets captured: 0") once the box copies packets to it (rte_pdump_enable
# returned). Snap length: a whole frame of the veths' 9000-byte MTU (dumpcap sizes its mbufs
# for the snap length plus the pcapng block in a 16-bit field: -s 65535 wraps it, and every
# packet is then dropped for want of an mbuf).
# the box's ports, as dpdk-dumpcap lists them
ip netns exec "$CL_PREFIX-agg" dpdk-dumpcap --file-prefix="$CL_PREFIX-agg" -D \
    >"$CL_DIR/dumpcap-D.log" 2>&1 || { cat "$CL_DIR/dumpcap-D.log" >&2; fail "dumpcap -D"; }
grep -q net_af_packet0 "$CL_DIR/dumpcap-D.log" ||
    { cat "$CL_DIR/dumpcap-D.log" >&2; fail "dumpcap -D does not list net_af_packet0"; }
cap=$CL_DIR/box.pcapng
ip netns exec "$CL_PREFIX-agg" dpdk-dumpcap --file-prefix="$CL_PREFIX-agg" \
    -i net_af_packet0 -s 9216 -w "$cap" >"$CL_DIR/dumpcap.log" 2>&1 &
DUMP_PID=$!
CL_PIDS+=("$DUMP_PID")
for ((i = 0; i < 300; i++)); do
    grep -qs "Packets captured" "$CL_DIR/dumpcap.log" && break
    kill -0 "$DUMP_PID" 2>/dev/null || break
    sleep 0.1
done
if ! grep -qs "Packets captured" "$CL_DIR/dumpcap.log"; then
    cat "$CL_DIR/dumpcap.log" >&2
    fail "dpdk-dumpcap did not start capturing"
fi
cl_log "dpdk-dumpcap capturing (pid $DUMP_PID)"

cl_allreduce "${drv[*]}" --dtype float32 --size "$size" --iters "$iters" ||
    fail "the job failed"
job=$CL_JOB
stats=$(cl_telemetry_kv /shouter/stats msg_data msg_completed)
cl_log "box: $stats"
box_data=$(grep -o 'msg_data=[0-9]*' <<<"$stats" | cut -d= -f2)

kill -INT "$DUMP_PID"
rc=0
wait "$DUMP_PID" || rc=$?
DUMP_PID=
sed 's/^/    dumpcap: /' "$CL_DIR/dumpcap.log" >&2
((rc == 0)) || fail "dpdk-dumpcap exited $rc"
[[ -s $cap ]] || fail "no capture file"
cl_agg_stop || fail "aggregator exit status $?"

# the capture, through the dissector
tshark -n -X "lua_script:$lua" -r "$cap" -Y shouter -T fields -E separator=, \
    -e shouter.type -e shouter.job -e shouter.rank -e shouter.crc.status \
    -e shouter.refused -e ip.src -e ip.dst >"$CL_DIR/fields.txt" 2>"$CL_DIR/tshark.err" ||
    { cat "$CL_DIR/tshark.err" >&2; fail "tshark failed"; }
summary=$(awk -F, -v job="$job" -v world="$world" '
    $2 == job { n[$1]++ }
    $2 == job && $1 == 1 { ranks[$3] = 1 }
    $2 == job && $1 == 2 { to[$7] = 1 }
    $4 != 1 { badcrc++ }
    $5 != "" { refused++ }
    END {
        nr = 0; for (r in ranks) nr++
        nt = 0; for (d in to) nt++
        printf "join=%d join_ack=%d data=%d result=%d leave=%d leave_ack=%d", n[3], n[4],
            n[1], n[2], n[5], n[6]
        printf " data_ranks=%d result_dests=%d badcrc=%d refused=%d\n", nr, nt, badcrc,
            refused
    }' "$CL_DIR/fields.txt")
cl_log "capture: $(wc -l <"$CL_DIR/fields.txt") shouter frames: $summary"
val() { grep -o "$1=[0-9]*" <<<"$summary" | cut -d= -f2; }
(($(val data) > 0)) || fail "no DATA captured"
(($(val result) > 0)) || fail "no RESULT captured"
(($(val join) >= world && $(val join_ack) >= world)) || fail "JOINs/JOIN_ACKs missing"
(($(val data_ranks) == world)) || fail "DATA from $(val data_ranks) ranks, want $world"
(($(val result_dests) == world)) || fail "RESULTs to $(val result_dests) ranks, want $world"
(($(val badcrc) == 0)) || fail "$(val badcrc) frames without a good CRC"
(($(val refused) == 0)) || fail "$(val refused) frames the box would refuse"
echo "capture: ok ($summary; box msg_data=$box_data)"
