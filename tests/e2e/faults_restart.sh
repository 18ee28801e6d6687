#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Restarted jobs (issue 14): a crashed run of a job never hands its sums, or its slots, to
# the next run of the same job id.
#
# 1. For each K of --after: the ranks of job 40+K, on fixed addresses and ports (a kernel UDP
#    rank on --local-port 4710R, a DPDK rank on 47000, as DPDK ranks are), join and run K
#    allreduces (K = 0: they join and hold), then say so (--ready-file / --end-file: the
#    state, not a sleep) and are SIGKILLed: no LEAVE, the job is still active at the box
#    with its slots in whatever state the crash left. Then the same ranks run again on the
#    same addresses and ports with other data (--seed): each worker checks every element of
#    every result and exits 0 only if all are exact, and the box must have ended the old
#    incarnation (msg_incarnations).
# 2. Orphans: the box again with a short --idle-ms; job 50's ranks join and hold (its slots
#    reserved), then are all SIGKILLed. The job's entry and its slots must be back (read
#    through /shouter/jobs and /shouter/pool) within the idle bound, counted as an idle
#    reclaim; then job 50 runs again from new ports, exact.
#
#   faults_restart.sh [--drivers dpdk,udp,udp] [--after 0,1,3] [--idle-ms 3000]
set -euo pipefail

drivers=dpdk,udp,udp
after=0,1,3
idle_ms=3000
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --idle-ms) idle_ms=$2; shift 2 ;;
    *) echo "faults_restart.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init frs

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_up "$world"
# one allreduce: 64 KiB of int32 in 256-element chunks, 64 slots of the 128-slot window
size=64K

# start_ranks GROUP JOB PORTBASE SEED [worker options]: rank r in P-wr on a fixed port
# (udp: PORTBASE + r, dpdk: 47000 + PORTBASE - 47100, i.e. 47000 for the first run)
start_ranks() {
    local g=$1 job=$2 pbase=$3 seed=$4 r port
    shift 4
    eval "FL_${g}_PIDS=(); FL_${g}_LOGS=(); FL_${g}_DRV=()"
    for r in "${!drv[@]}"; do
        if [[ ${drv[$r]} == dpdk ]]; then
            port=$((47000 + pbase - 47100))
        else
            port=$((pbase + r))
        fi
        fl_start_rank "$g" "$r" "$job" "$r" "$world" "${drv[$r]}" --dtype int32 \
            --size "$size" --local-port "$port" --seed "$seed" "${@//@RANK@/$r}" || return
    done
}

# kill_ranks GROUP: SIGKILL every worker of the group (no LEAVE), reap them
kill_ranks() {
    local g=$1 r pid
    local -a tpids
    eval "tpids=(\"\${FL_${g}_PIDS[@]}\")"
    for r in "${!tpids[@]}"; do
        pid=$(fl_rank_pid "$g" "$r")
        [[ -n $pid ]] || { fl_fail "$g rank $r: no worker process to kill"; continue; }
        kill -KILL "$pid"
    done
    for pid in "${tpids[@]}"; do wait "$pid" 2>/dev/null || true; done
}

# njobs JSON: how many jobs a /shouter/jobs reply lists
njobs() {
    python3 -c 'import json, sys; print(len(next(iter(json.loads(sys.argv[1]).values()))))' "$1"
}

files() { local p=$1 r; for r in "${!drv[@]}"; do echo "$p$r"; done; }

cl_agg_start --job-timeout-ms 5000
IFS=, read -r -a ks <<<"$after"
for k in "${ks[@]}"; do
    job=$((40 + k))
    cl_log "job $job ($drivers): crash after $k allreduce(s), restart with other data"
    if ((k == 0)); then
        start_ranks A "$job" 47100 1 --iters 1 --warmup 0 \
            --ready-file "$CL_DIR/held-$job-@RANK@" --go-file "$CL_DIR/never"
        mapfile -t wait_files < <(files "$CL_DIR/held-$job-")
    else
        start_ranks A "$job" 47100 1 --iters "$k" --warmup 0 \
            --end-file "$CL_DIR/done-$job-@RANK@"
        mapfile -t wait_files < <(files "$CL_DIR/done-$job-")
    fi
    # (a rank has its ready file once its job is active at the box, its end file after its
    # last allreduce: the job is active, with its slots, when they are all there)
    before=$(fl_tel /shouter/stats)
    fl_wait_ready 90 A "${wait_files[@]}" || fl_fail "job $job: the first run did not get there"
    kill_ranks A
    start_ranks B "$job" 47100 $((1000 + k)) --iters 3 --warmup 0
    fl_wait_job B || fl_fail "job $job: the restarted run after $k allreduce(s) is not exact"
    fl_deltas "$before" "$(fl_tel /shouter/stats)"
    cl_log "job $job: incarnations=+${FL_D[msg_incarnations]} aborts=+${FL_D[msg_aborts]}" \
        "idle_reclaims=+${FL_D[msg_idle_reclaims]} rejects: $(fl_nonzero reject_)"
    ((FL_D[msg_incarnations] >= 1)) ||
        fl_fail "job $job: the restart did not end the old incarnation"
done
jobs=$(fl_tel /shouter/jobs)
[[ $(njobs "$jobs") == 0 ]] || fl_fail "jobs left after the restarts: $jobs"
pool=$(fl_tel /shouter/pool)
[[ $(fl_json "$pool" slots_used) == 0 ]] || fl_fail "slots still used: $pool"

cl_log "orphans: the box with --idle-ms $idle_ms; job 50 joins, holds, all ranks killed"
cl_agg_stop || fl_fail "aggregator exit status $? after SIGINT"
cl_agg_start --job-timeout-ms 5000 --idle-ms "$idle_ms"
job=50
before=$(fl_tel /shouter/stats)
start_ranks A $job 47100 1 --iters 1 --warmup 0 \
    --ready-file "$CL_DIR/held-$job-@RANK@" --go-file "$CL_DIR/never"
mapfile -t wait_files < <(files "$CL_DIR/held-$job-")
# every rank has its JOIN_ACK: the job is active with its window of slots (reserved before
# the box answers); they are killed at once (a telemetry read takes longer than the bound)
fl_wait_ready 90 A "${wait_files[@]}" || fl_fail "job $job: the ranks did not join"
kill_ranks A
t0=$(date +%s.%N)
# the state, polled: entry gone and slots free (the deadline only bounds a failure)
bound_s=$(((3 * idle_ms + 999) / 1000 + 5))
back=0
end=$((SECONDS + bound_s))
while ((SECONDS < end)); do
    jobs=$(fl_tel /shouter/jobs)
    if [[ $(fl_json "$jobs" "$job") == none ]]; then
        back=1
        break
    fi
    sleep 0.1
done
took=$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%.2f", t1 - t0}')
pool=$(fl_tel /shouter/pool)
[[ $(fl_json "$pool" slots_used) == 0 ]] || back=0
if ((back)); then
    cl_log "job $job: entry and slots back $took s after the kill (idle bound $idle_ms ms)"
else
    fl_fail "job $job: still held $took s after all its ranks were killed: $jobs $pool"
fi
fl_deltas "$before" "$(fl_tel /shouter/stats)"
((FL_D[msg_idle_reclaims] == 1)) ||
    fl_fail "idle reclaims +${FL_D[msg_idle_reclaims]} (want 1)"
cl_log "job $job again from new ports"
start_ranks C $job 47200 7 --iters 2 --warmup 0
fl_wait_job C || fl_fail "job $job from new ports after the reclaim"
fl_finish
