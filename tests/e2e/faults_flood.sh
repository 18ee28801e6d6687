#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A flood of JOINs (issues 7 and 14): faults_forge, in a namespace of its own on the bridge
# (P-w4), sends at least --joins JOINs of mixed shapes (new job ids, world 1 jobs that hold
# their window, worlds above the box's largest, window 2^31-1, chunk 0 and huge, no nonce, one
# nonce repeated, the real job's id with another world/chunk/dtype, the real job's rank 0
# from another address, an unknown dtype), in two phases:
#   one:  all from its own address (random source ports)
#   many: from random forged addresses of 198.18.0.0/15 (outside the members' /24)
# In each phase, by construction: a real job (ranks in P-w0, P-w1, --drivers) joins and holds
# until the flood has begun (the flood tool's started file is the ranks' --go-file); a new job
# (two kernel UDP ranks in P-w2, P-w3) is started once the flood is under way; the flood goes
# on until both jobs have finished (the stop file). Both must finish exact (the workers check
# every element). Then: every pending job the flood made has expired and every slot is back
# (the job table is empty, /shouter/pool slots_used 0, waited for as a state), and each
# refusal the shapes call for was counted under its own reason.
#
# Phase many: with forged sources the per-address share (--max-src-jobs) does not bound the
# flood, so the new job started during it may be refused (ENOSPC) while the flood's jobs fill
# the pool (world 1 jobs are active at once and hold their window until --idle-ms) or the
# table (--max-jobs, pending jobs until 4 job timeouts); the test then requires that the new
# job's ranks fail cleanly (a refusal or timeout, never a wrong result) and that a new job
# after the flood gets in, exact. Admission (issue 7 item 3: --allow, secrets; see
# faults_admission) is what keeps forged JOINs out: with --allow, the box admits JOINs from
# the members' /24 only and runs phase many alone; then every forged JOIN is refused as
# not_allowed and the new job started during the flood must get in, exact.
#
#   faults_flood.sh FAULTS_FORGE [--drivers udp,dpdk] [--joins 10000] [--gap-us 50] [--allow]
set -euo pipefail

forge=$1
shift
drivers=udp,dpdk
joins=10000
gap=50
allow=0
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --joins) joins=$2; shift 2 ;;
    --gap-us) gap=$2; shift 2 ;;
    --allow) allow=1; shift ;;
    *) echo "faults_flood.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init ffl
[[ -x $forge ]] || { cl_log "missing $forge"; exit 1; }

IFS=, read -r -a drv <<<"$drivers"
((${#drv[@]} == 2)) || { echo "faults_flood.sh: --drivers: two ranks" >&2; exit 2; }
snd=4
cl_up 5
tmo_ms=1500
idle_ms=4000
if ((allow)); then
    cl_agg_start --job-timeout-ms $tmo_ms --idle-ms $idle_ms --allow 198.18.0.0/24
else
    cl_agg_start --job-timeout-ms $tmo_ms --idle-ms $idle_ms
fi

njobs() {
    python3 -c 'import json, sys; print(len(next(iter(json.loads(sys.argv[1]).values()))))' "$1"
}

# flood_phase NAME SRC REALJOB NEWJOB: one phase; sets NEW_OK (1: the new job finished exact)
flood_phase() {
    local name=$1 src=$2 jr=$3 jn=$4 started stop fpid out rc line slots
    started=$CL_DIR/started-$name
    stop=$CL_DIR/stop-$name
    out=$CL_DIR/flood-$name.out
    cl_log "$name: job $jr joins and holds; the flood starts; job $jn starts during it"
    # (--chunk 256, the chunk the flood's JOINs for this job repeat: with chunk auto they
    # would all be job_count refusals, never reaching the address check)
    fl_start_job R "$jr" "${drv[*]}" 0 --dtype int32 --size 256K --iters 5 --warmup 0 \
        --chunk 256 --ready-file "$CL_DIR/ready-$jr-@RANK@" --go-file "$started"
    fl_wait_ready 90 R "$CL_DIR/ready-$jr-0" "$CL_DIR/ready-$jr-1" ||
        fl_fail "$name: job $jr did not join"
    # the slots its ranks asked for (their window and its spare slots), which the flood's
    # JOINs for it repeat: the box's grant
    slots=$(fl_json "$(fl_tel /shouter/jobs)" "$jr/window")
    ip netns exec "$CL_PREFIX-w$snd" "$forge" flood --dst 198.18.0.1:47000 --src "$src" \
        --n "$joins" --gap-us "$gap" --real "$jr:2:256:$slots" --started-file "$started" \
        --stop-file "$stop" >"$out" 2>&1 &
    fpid=$!
    CL_PIDS+=("$fpid")
    fl_wait_ready 30 R "$started" || fl_fail "$name: the flood did not start"
    fl_start_job N "$jn" "udp udp" 2 --dtype int32 --size 64K --iters 3 --warmup 0
    fl_wait_job R || fl_fail "$name: job $jr under the flood"
    NEW_OK=1
    fl_wait_job N || NEW_OK=0
    touch "$stop"
    rc=0
    wait "$fpid" || rc=$?
    ((rc == 0)) || fl_fail "$name: faults_forge exit $rc: $(cat "$out")"
    line=$(grep '^sent ' "$out" || true)
    cl_log "$name: flood $line"
    FLOOD_SENT=$(awk '{print $2}' <<<"$line")
    ((FLOOD_SENT >= joins)) || fl_fail "$name: fewer than $joins JOINs"
}

# wait_idle NAME: the job table empty and no slot used, polled (the deadline bounds a failure)
wait_idle() {
    local name=$1 end t0 took jobs pool
    t0=$SECONDS
    end=$((SECONDS + (4 * tmo_ms + idle_ms) / 1000 + 20))
    while :; do
        jobs=$(fl_tel /shouter/jobs)
        [[ $(njobs "$jobs") == 0 ]] && break
        if ((SECONDS >= end)); then
            fl_fail "$name: jobs left $((SECONDS - t0)) s after the flood: $jobs"
            break
        fi
        sleep 0.2
    done
    took=$((SECONDS - t0))
    pool=$(fl_tel /shouter/pool)
    [[ $(fl_json "$pool" slots_used) == 0 ]] || fl_fail "$name: slots still used: $pool"
    cl_log "$name: job table empty and slots free ${took} s after the flood"
}

# link_stat NS FIELD: the sum over NS's interfaces of stats64 FIELD ("rx.packets",
# "rx.dropped", ...); with NS "all", over every namespace of the test
link_stat() {
    local ns list=$1
    [[ $list == all ]] && list=$("$CL_NETNS" list --prefix "$CL_PREFIX")
    for ns in $list; do
        ip -n "$ns" -s -j link show
        echo
    done | /usr/bin/python3 -c '
import json, sys
d, k = sys.argv[1].split(".")
n = 0
for line in sys.stdin.read().split("\n"):
    if line.strip():
        n += sum(dev.get("stats64", {}).get(d, {}).get(k, 0) for dev in json.loads(line))
print(n)' "$2"
}

# check_rejects NAME REASON...: each reason's counter went up during the phase
check_rejects() {
    local name=$1 k
    shift
    cl_log "$name: rejects: $(fl_nonzero reject_)"
    cl_log "$name: jobs_created=+${FL_D[msg_jobs_created]} aborts=+${FL_D[msg_aborts]}" \
        "idle_reclaims=+${FL_D[msg_idle_reclaims]} incarnations=+${FL_D[msg_incarnations]}" \
        "neigh_full=+${FL_D[neigh_full]:-?} no_neigh=+${FL_D[no_neigh]:-?}"
    for k in "$@"; do
        ((${FL_D[reject_$k]:-0} > 0)) || fl_fail "$name: reject_$k not counted"
    done
}

if ((allow)); then
    before=$(fl_tel /shouter/stats)
    drops0=$(link_stat all tx.dropped)
    drops0=$((drops0 + $(link_stat all rx.dropped)))
    agg_rx0=$(link_stat "$CL_PREFIX-agg" rx.packets)
    flood_phase many many 81 82
    ((NEW_OK)) || fl_fail "many, --allow: job 82, started during the flood, did not get in"
    wait_idle many
    fl_deltas "$before" "$(fl_tel /shouter/stats)"
    # Frames that never reached the box's code: dropped on our links (a veth counts a frame
    # it could not hand on, e.g. a CPU's backlog full), or by the box's af_packet ring (the
    # kernel delivered them to the box's interface, rx.packets, but the DPDK port never read
    # them, port_ipackets; DPDK 22.11's af_packet does not count those in port_imissed). A
    # 20,000-frame/s flood on two busy cores can lose frames in both places.
    link_drops=$(($(link_stat all tx.dropped) + $(link_stat all rx.dropped) - drops0))
    ring_drops=$(($(link_stat "$CL_PREFIX-agg" rx.packets) - agg_rx0 - FL_D[port_ipackets]))
    ((ring_drops >= 0)) || ring_drops=0
    check_rejects many not_allowed
    # every JOIN that reached the box refused: by the allowlist, or (an unknown dtype) by the
    # header check first
    refused=$((FL_D[reject_not_allowed] + FL_D[reject_bad_dtype]))
    cl_log "many, --allow: refused $refused (not_allowed ${FL_D[reject_not_allowed]}," \
        "bad_dtype ${FL_D[reject_bad_dtype]}), lost before the box: links $link_drops," \
        "af_packet ring $ring_drops, port_imissed +${FL_D[port_imissed]:-0}"
    ((refused + link_drops + ring_drops + ${FL_D[port_imissed]:-0} >= FLOOD_SENT)) ||
        fl_fail "many, --allow: refused $refused + lost before the box" \
            "$((link_drops + ring_drops + ${FL_D[port_imissed]:-0})) < $FLOOD_SENT JOINs sent:" \
            "JOINs that reached the box were not refused"
    ((FL_D[msg_jobs_created] == 2)) ||
        fl_fail "many, --allow: jobs_created +${FL_D[msg_jobs_created]}: the flood made jobs"
    fl_finish
fi

before=$(fl_tel /shouter/stats)
flood_phase one "one:$(cl_worker_ip $snd)" 71 72
((NEW_OK)) || fl_fail "one: job 72, started during a flood from one address, did not get in"
wait_idle one
fl_deltas "$before" "$(fl_tel /shouter/stats)"
check_rejects one bad_rank job_count bad_token src_limit spoofed bad_dtype job_dtype

before=$(fl_tel /shouter/stats)
flood_phase many many 81 82
if ((NEW_OK)); then
    cl_log "many: job 82, started during the flood, got in"
else
    cl_log "many: job 82, started during the flood, was refused (flood jobs held the table)"
    for r in 0 1; do
        rc=${FL_RCS[$r]}
        ((rc == 2 || rc == 3)) || fl_fail "many: job 82 rank $r exit $rc (want 2 or 3)"
    done
fi
wait_idle many
fl_deltas "$before" "$(fl_tel /shouter/stats)"
check_rejects many bad_rank job_count bad_token spoofed bad_dtype
# the flood's own jobs (world 1 ones hold their window until the idle bound) fill the pool or
# the table first, whichever the mix of shapes reaches first: refused under one or the other
((FL_D[reject_jobs_full] + FL_D[reject_pool_full] > 0)) ||
    fl_fail "many: neither jobs_full nor pool_full counted"

cl_log "a new job after the floods"
fl_start_job N 91 "${drv[*]}" 0 --dtype int32 --size 64K --iters 3 --warmup 0
fl_wait_job N || fl_fail "a new job after the floods"
fl_finish
