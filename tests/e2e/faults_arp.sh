#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Neighbour poisoning from a third namespace on the job's segment (issue 15 item 1), by
# arp_poison.py in P-w2, during a job:
#
# 1, 2. The DPDK rank is told that the box's address is at the attacker's MAC: one ARP
#    request "who has <rank>? tell 198.18.0.1" with the attacker's MAC, then gratuitous ARP
#    replies "198.18.0.1 is at <attacker>" to the rank and to broadcast; at 100 frames a second
#    with the box's MAC resolved by ARP (job 51), at 2,000 with it given by --agg-mac (job 52).
#    The rank learns the box's MAC only from the reply to its own request and pins it.
# 3, 4. The box is told that rank 0 (kernel UDP) is at the attacker's MAC: forged ARP, ICMP
#    echoes and UDP datagrams "from" rank 0, at 100 (job 53) and 2,000 (job 54) frames a
#    second. The box learns a member's MAC from its admitted traffic only, and pins it.
#
# Each time: no frame of the job reaches the attacker (it counts UDP frames to its MAC, from
# the rank or the box, to or from the box's ports: must be 0); the job ends exact (int32, every
# rank checks its output, the same CRC at every rank); the poison reached its target and was
# refused: the DPDK rank's arp_ignored > 0, the box's arp or icmp counters grew and no_neigh
# did not. The kernel ranks' own defence is their host's (a permanent neighbour entry for the
# box, as an operator sets on an untrusted segment: Linux moves an existing entry on a
# gratuitous ARP).
# Ordering by construction: the ranks join, the attack starts and has sent 50 frames (its
# progress file), only then do the ranks start (--go-file); the attack runs until they end.
#
#   faults_arp.sh
set -euo pipefail

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fa

cl_up 3
cl_agg_start
box_mac=$(ip -n "$CL_PREFIX-agg" -o link show shr0 |
    awk '{for (i = 1; i < NF; i++) if ($i == "link/ether") print $(i + 1)}')
[[ $box_mac =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || fl_fail "no MAC for the box: '$box_mac'"
poison=$(dirname "$0")/arp_poison.py
rank0=$(cl_worker_ip 0)
for i in 0 1; do
    ip -n "$CL_PREFIX-w$i" neigh replace 198.18.0.1 lladdr "$box_mac" dev shr0 nud permanent
done

# run JOB NAME "DRIVERS" "POISON ARGS" [worker options]
run() {
    local J=$1 name=$2 drivers=$3 pargs=$4 prog ppid line r before
    shift 4
    cl_log "job $J ($name)"
    before=$(fl_tel /shouter/stats)
    fl_start_job P "$J" "$drivers" 0 --dtype int32 --size 1M --iters 20 --warmup 1 \
        --ready-file "$CL_DIR/ready$J.@RANK@" --go-file "$CL_DIR/go$J" "$@"
    fl_wait_ready 90 P "$CL_DIR/ready$J.0" "$CL_DIR/ready$J.1" ||
        fl_fail "job $J: the ranks did not join"
    prog=$CL_DIR/poison$J
    # shellcheck disable=SC2086
    ip netns exec "$CL_PREFIX-w2" /usr/bin/python3 "$poison" --iface shr0 $pargs \
        --progress-file "$prog" >"$prog.out" 2>&1 &
    ppid=$!
    CL_PIDS+=("$ppid")
    for ((r = 0; r < 300; r++)); do
        [[ -s $prog ]] && break
        kill -0 "$ppid" 2>/dev/null || break
        sleep 0.1
    done
    [[ -s $prog ]] || fl_fail "job $J: the attack did not start: $(cat "$prog.out")"
    touch "$CL_DIR/go$J"
    fl_wait_job P || fl_fail "job $J ($name): not exact under poisoning"
    kill -TERM "$ppid" 2>/dev/null || true
    wait "$ppid" || fl_fail "job $J: arp_poison.py failed: $(cat "$prog.out")"
    line=$(tail -n 1 "$prog.out")
    cl_log "attacker: $line"
    if [[ $line =~ ^sent=([0-9]+)\ captured=([0-9]+)$ ]]; then
        ((BASH_REMATCH[2] == 0)) ||
            fl_fail "job $J: ${BASH_REMATCH[2]} frames of the job reached the attacker"
    else
        fl_fail "job $J: the attacker said '$line'"
    fi
    fl_deltas "$before" "$(fl_tel /shouter/stats)"
    cl_log "box: arp +${FL_D[arp]:-?} icmp +${FL_D[icmp]:-?} no_neigh +${FL_D[no_neigh]:-?}"
    [[ ${FL_D[no_neigh]:-x} == 0 ]] || fl_fail "job $J: no_neigh +${FL_D[no_neigh]:-?}"
}

# the DPDK rank's refusals: arp_ignored on its stats line
rank_refused() {
    local line
    line=$(grep -h -o 'arp_ignored=[0-9]*' "${FL_P_LOGS[0]}" | tail -n 1)
    cl_log "DPDK rank: $line"
    [[ ${line#arp_ignored=} =~ ^[1-9][0-9]*$ ]] ||
        fl_fail "job $1: the DPDK rank refused no ARP frame ($line): the attack missed it"
}

to_rank="--claim 198.18.0.1 --target $rank0 --watch $rank0 --forms arp"
run 51 "DPDK rank, box MAC by ARP, 100/s" "dpdk udp" "$to_rank --rate 100"
rank_refused 51
run 52 "DPDK rank, --agg-mac, 2000/s" "dpdk udp" "$to_rank --rate 2000" --agg-mac "$box_mac"
rank_refused 52

to_box="--claim $rank0 --target 198.18.0.1 --target-mac $box_mac --watch 198.18.0.1"
to_box+=" --forms arp,icmp,udp"
for J in 53 54; do
    rate=$((J == 53 ? 100 : 2000))
    run "$J" "the box, $rate/s" "udp udp" "$to_box --rate $rate"
    ((${FL_D[arp]:-0} + ${FL_D[icmp]:-0} > 0)) ||
        fl_fail "job $J: the box saw none of the poison (arp/icmp counters)"
done
fl_finish
