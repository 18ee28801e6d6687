#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A box and its ranks on an IEEE 802.1Q VLAN (issue 15 item 3). The box's INI says
# `vlan = 100` (its af_packet port on the untagged veth); kernel-UDP ranks reach it through a
# tagged subinterface (shr0.100, which holds their 198.18.0.x address: the veth itself has
# none; made by vlan_tap.py where the kernel has no 802.1Q), the DPDK rank with --vlan 100 on
# af_packet. Checked:
#
# 1. An int32 allreduce (kernel UDP, DPDK, kernel UDP) is exact at every rank (same CRC).
#    Meanwhile frames of other networks reach the DPDK rank (vlan_send.py from a fourth
#    namespace, to its MAC: UDP tagged 200, untagged, priority-tagged and under a QinQ
#    S-tag): its stats line counts each in vlan_other, exactly, and it answers an ARP
#    request on VLAN 100, tagged 100.
# 2. Frames of other networks to the box while no job runs (the same kinds, plus ARP requests
#    tagged 200 and untagged and ICMP echoes tagged 200): vlan_other grows by exactly what
#    was sent, nothing else moves (no ARP or ICMP seen or answered, no message, no reject),
#    no frame answers them, and the box answers an ARP request on VLAN 100, tagged 100.
#    The probe orders it by construction: the box handles its queue in order, so its
#    answer to the probe comes after it has handled every frame sent before.
# 3. A second job is exact: nothing the other networks sent changed the box.
#
#   vlan.sh
set -euo pipefail

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init vl

VID=100
N=10    # frames of each kind
send=$(dirname "$0")/vlan_send.py

cl_up 4
mac_of() {
    ip -n "$CL_PREFIX-$1" -o link show shr0 |
        awk '{for (i = 1; i < NF; i++) if ($i == "link/ether") print $(i + 1)}'
}
box_mac=$(mac_of agg)
rank1_mac=$(mac_of w1)
for m in "$box_mac" "$rank1_mac"; do
    [[ $m =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || fl_fail "no MAC: '$m'"
done
# kernel ranks 0 and 2 on shr0.100; the sender in P-w3 has no address (raw socket only).
# A kernel without 802.1Q (CONFIG_VLAN_8021Q unset, as here) cannot make the subinterface:
# vlan_tap.py makes it in user space instead (a TAP that it joins to shr0, tagging and
# untagging as the kernel's would)
for i in 0 2; do
    ns=$CL_PREFIX-w$i
    "$CL_NETNS" kip "$i" off --prefix "$CL_PREFIX"
    if ip -n "$ns" link add link shr0 name "shr0.$VID" type vlan id "$VID" 2>/dev/null; then
        cl_log "w$i: shr0.$VID is the kernel's VLAN subinterface"
    else
        ip netns exec "$ns" /usr/bin/python3 "$(dirname "$0")/vlan_tap.py" --iface shr0 \
            --name "shr0.$VID" --vid "$VID" --ready-file "$CL_DIR/tap$i" \
            >"$CL_DIR/tap$i.log" 2>&1 &
        CL_PIDS+=($!)
        for ((r = 0; r < 100; r++)); do
            [[ -s $CL_DIR/tap$i ]] && break
            sleep 0.1
        done
        [[ -s $CL_DIR/tap$i ]] || { cl_log "vlan_tap.py: $(cat "$CL_DIR/tap$i.log")"; exit 1; }
        ip -n "$ns" link set "shr0.$VID" mtu "$(ip -n "$ns" -o link show shr0 |
            awk '{for (k = 1; k < NF; k++) if ($k == "mtu") print $(k + 1)}')"
        cl_log "w$i: no 802.1Q in this kernel: shr0.$VID is vlan_tap.py's TAP"
    fi
    ip -n "$ns" addr add "$(cl_worker_ip "$i")/24" dev "shr0.$VID"
    ip -n "$ns" link set "shr0.$VID" up
done
"$CL_NETNS" kip 3 off --prefix "$CL_PREFIX"

printf '[agg]\n; the port is on VLAN %s\nvlan = %s\n' "$VID" "$VID" >"$CL_DIR/agg.ini"
cl_agg_start --config "$CL_DIR/agg.ini"
[[ $(fl_json "$(fl_tel /shouter/stats)" vlan) == "$VID" ]] || fl_fail "the box is not on VLAN $VID"

# vl_start_rank GROUP NSIDX JOB RANK WORLD DRIVER [options]: as fl_start_rank, but a kernel
# rank keeps its address on shr0.VID (fl_start_rank would put it back on shr0)
vl_start_rank() {
    local g=$1 i=$2 job=$3 rank=$4 world=$5 drv=$6 log pid
    shift 6
    if [[ $drv == dpdk ]]; then
        fl_start_rank "$g" "$i" "$job" "$rank" "$world" dpdk --vlan "$VID" "$@"
        return
    fi
    CL_RUN=$((CL_RUN + 1))
    log=$CL_DIR/$g-job$job-r$rank-$CL_RUN.log
    timeout -k 5 "$CL_RUN_TIMEOUT" ip netns exec "$CL_PREFIX-w$i" "$CL_WORKER" \
        --driver udp --local "$(cl_worker_ip "$i")" --agg 198.18.0.1 \
        --job "$job" --rank "$rank" --world "$world" "$@" >"$log" 2>&1 &
    pid=$!
    CL_PIDS+=("$pid")
    eval "FL_${g}_PIDS+=($pid); FL_${g}_LOGS+=(\"$log\"); FL_${g}_DRV+=($drv)"
}

# vl_job GROUP JOB [options]: ranks udp (w0), dpdk (w1), udp (w2)
vl_job() {
    local g=$1 job=$2 r drv
    local -a drivers=(udp dpdk udp)
    shift 2
    eval "FL_${g}_PIDS=(); FL_${g}_LOGS=(); FL_${g}_DRV=()"
    for r in 0 1 2; do
        drv=${drivers[$r]}
        vl_start_rank "$g" "$r" "$job" "$r" 3 "$drv" --dtype int32 --size 1M --iters 5 \
            --warmup 1 "${@//@RANK@/$r}"
    done
}

# vl_send DST_MAC DST_IP KINDS [PROGRESS_FILE]: vlan_send.py from P-w3 to the box or a rank
vl_send() {
    local -a prog=()
    [[ -z ${4:-} ]] || prog=(--progress-file "$4")
    ip netns exec "$CL_PREFIX-w3" /usr/bin/python3 "$send" --iface shr0 --dst-mac "$1" \
        --dst-ip "$2" --src-ip "$(cl_worker_ip 3)" --vlan "$VID" --kinds "$3" --count "$N" \
        "${prog[@]}"
}

# 1. a job; other networks' frames to the DPDK rank meanwhile
cl_log "job 1: udp, dpdk --vlan $VID, udp; other networks' frames to the DPDK rank"
vl_job A 1 --ready-file "$CL_DIR/ready1.@RANK@" --go-file "$CL_DIR/go1"
fl_wait_ready 90 A "$CL_DIR"/ready1.{0,1,2} || fl_fail "job 1: the ranks did not join"
rank_kinds=udp200,udpu,udp0,udpqinq
vl_send "$rank1_mac" "$(cl_worker_ip 1)" "$rank_kinds" "$CL_DIR/sent1" \
    >"$CL_DIR/send1.out" 2>&1 &
spid=$!
CL_PIDS+=("$spid")
# the frames are in the rank's ring before it starts its collectives
for ((r = 0; r < 300; r++)); do
    [[ -s $CL_DIR/sent1 ]] && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
done
[[ -s $CL_DIR/sent1 ]] || fl_fail "job 1: vlan_send.py did not send: $(cat "$CL_DIR/send1.out")"
touch "$CL_DIR/go1"
fl_wait_job A || fl_fail "job 1 not exact on VLAN $VID"
wait "$spid" || fl_fail "job 1: the DPDK rank did not answer ARP on VLAN $VID"
line=$(tail -n 1 "$CL_DIR/send1.out")
cl_log "sender to the DPDK rank: $line"
want=$((N * 4))
[[ $line == "sent=$want other=0 probe_vid=$VID" ]] ||
    fl_fail "job 1: want sent=$want other=0 probe_vid=$VID, got '$line'"
got=$(grep -h -o 'vlan_other=[0-9]*' "${FL_A_LOGS[1]}" | tail -n 1)
cl_log "DPDK rank: $got"
[[ $got == "vlan_other=$want" ]] || fl_fail "job 1: the DPDK rank counted $got, sent $want"

# 2. other networks' frames to the box, no job running
cl_log "other networks' frames to the box"
before=$(fl_tel /shouter/stats)
vl_send "$box_mac" 198.18.0.1 udp200,udpu,udp0,udpqinq,arp200,arpu,icmp200 \
    >"$CL_DIR/send2.out" 2>&1 || fl_fail "the box did not answer ARP on VLAN $VID"
after=$(fl_tel /shouter/stats)
line=$(tail -n 1 "$CL_DIR/send2.out")
cl_log "sender to the box: $line"
want=$((N * 7))
[[ $line == "sent=$want other=0 probe_vid=$VID" ]] ||
    fl_fail "want sent=$want other=0 probe_vid=$VID, got '$line'"
fl_deltas "$before" "$after"
cl_log "box: vlan_other +${FL_D[vlan_other]:-?} rx_pkts +${FL_D[rx_pkts]:-?}" \
    "arp +${FL_D[arp]:-?} arp_reply +${FL_D[arp_reply]:-?}"
[[ ${FL_D[vlan_other]:-x} == "$want" ]] ||
    fl_fail "the box counted vlan_other +${FL_D[vlan_other]:-?}, sent $want"
# the probe alone: one ARP seen and answered; nothing else moved
[[ ${FL_D[arp]:-x} == 1 && ${FL_D[arp_reply]:-x} == 1 ]] ||
    fl_fail "arp +${FL_D[arp]:-?} arp_reply +${FL_D[arp_reply]:-?} (want 1 and 1: the probe)"
for k in icmp icmp_reply non_ip non_udp not_ours bad_l2 bad_ip bad_udp bad_port rejects \
    msg_rx; do
    [[ ${FL_D[$k]:-x} == 0 ]] || fl_fail "$k +${FL_D[$k]:-?}: another network's frame got in"
done

# 3. the box still works
cl_log "job 2: udp, dpdk --vlan $VID, udp"
vl_job B 2
fl_wait_job B || fl_fail "job 2 not exact on VLAN $VID"
fl_finish
