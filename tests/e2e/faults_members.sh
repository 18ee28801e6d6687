#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Members that fail, and an aggregator that fails.
#
# 1. A rank is killed (SIGKILL) in the middle of an allreduce. The aggregator runs with
#    --job-timeout-ms 1000: the other ranks must exit 3 saying "job J aborted by the
#    aggregator ...: rank R did not join or send in time" with R the killed rank (their own
#    --timeout-ms is 30000: had they given up by themselves, they would say "no result", so
#    the message proves who ended them); /shouter/jobs must no longer list the job,
#    /shouter/pool must show 0 slots used, msg_aborts +1; and a new job on the same
#    aggregator must pass.
# 2. The aggregator is killed (SIGKILL) in the middle of a job and started again at once:
#    the new aggregator must refuse their DATA (reject_unknown_job >= 1: the ranks resend
#    every 100 ms at most, and their --timeout-ms of 45000 is longer than the 30 s the new
#    aggregator is given to be ready, so they are still sending when it is); the ranks must
#    then exit with an error (3 or 4), never hang, and a new job on the new aggregator passes.
# 3. The aggregator is stopped (SIGTERM) in the middle of a job: before its port stops it
#    tells the members (ABORT, rank 0xffff: the aggregator is shutting down), so the ranks
#    (--timeout-ms 30000) exit 3 saying "the aggregator is shutting down"; the aggregator
#    exits 0 and its log says it told the job's members.
#
# "In the middle": every job here asks for 100000 allreduces (it cannot end by itself during
# the test), and the fault is injected only once the box has completed a round of it since
# it became active (msg_completed grew). No bound on how fast anything happens: a rank that
# never exits is stopped by its `timeout` wrapper (CL_RUN_TIMEOUT) and fails on its status.
#
#   faults_members.sh --drivers udp,dpdk,udp [--kill-rank 1]
set -euo pipefail

drivers=udp,dpdk,udp
kill_rank=1
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --kill-rank) kill_rank=$2; shift 2 ;;
    *) echo "faults_members.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fk

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
((kill_rank < world)) || { echo "faults_members.sh: --kill-rank < world" >&2; exit 2; }
cl_up "$world"
cl_agg_start --job-timeout-ms 1000

now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN {printf "%.2f", t1 - t0}'; }

# the ranks of GROUP other than SKIP must all exit with a status in CODES (the time since T0
# is printed for information only)
expect_exits() {
    local g=$1 skip=$2 codes=$3 t0=$4 r rc dt
    local -a pids logs
    eval "pids=(\"\${FL_${g}_PIDS[@]}\"); logs=(\"\${FL_${g}_LOGS[@]}\")"
    for r in "${!pids[@]}"; do
        rc=0
        wait "${pids[$r]}" || rc=$?
        dt=$(since "$t0")
        [[ $r == "$skip" ]] && continue
        echo "  rank $r: exit $rc after $dt s: $(grep -h 'RESULT' "${logs[$r]}" | tail -n 1)"
        grep -h -m 1 -E 'aborted|no result|iteration' "${logs[$r]}" | sed 's/^/    /' || true
        [[ " $codes " == *" $rc "* ]] || fl_fail "rank $r exit $rc (want one of $codes)"
    done
}

# mid_run J: wait until job J is active and the box has completed a round since then
mid_run() {
    fl_wait_json /shouter/jobs "$1/active" 1 30 || fl_fail "job $1 never became active"
    fl_wait_grow /shouter/stats msg_completed 30 || fl_fail "job $1 completes no round"
}

# --- 1. a rank dies ---
J=21
cl_log "job $J: $world ranks ($drivers); rank $kill_rank is killed mid-run"
before=$(fl_tel /shouter/stats)
fl_start_job K $J "${drv[*]}" 0 --dtype int32 --size 1M --iters 100000 --warmup 1 \
    --timeout-ms 30000
mid_run $J
pid=$(fl_rank_pid K "$kill_rank")
[[ -n $pid ]] || fl_fail "rank $kill_rank is not running"
t0=$(now)
kill -KILL "$pid"
cl_log "killed rank $kill_rank (pid $pid)"
expect_exits K "$kill_rank" 3 "$t0"
for r in "${!FL_K_LOGS[@]}"; do
    [[ $r == "$kill_rank" ]] && continue
    grep -q "job $J aborted by the aggregator 198.18.0.1: rank $kill_rank did not join or send" \
        "${FL_K_LOGS[$r]}" ||
        fl_fail "rank $r does not say that job $J's rank $kill_rank was silent"
done
fl_wait_json /shouter/pool slots_used 0 30 || fl_fail "slots still used: $FL_LAST"
jobs=$(fl_tel /shouter/jobs)
[[ $(fl_json "$jobs" "$J") == none ]] || fl_fail "job $J still listed: $jobs"
fl_deltas "$before" "$(fl_tel /shouter/stats)"
[[ ${FL_D[msg_aborts]} == 1 ]] || fl_fail "msg_aborts +${FL_D[msg_aborts]}, want +1"
cl_log "box: aborts=+${FL_D[msg_aborts]} reaborts=+${FL_D[msg_reaborts]}" \
    "jobs_freed=+${FL_D[msg_jobs_freed]}" \
    "rejects: $(fl_nonzero reject_)"

cl_log "a new job on the same box"
fl_start_job N 22 "${drv[*]}" 0 --dtype int32 --size 256K --iters 3 --warmup 1
fl_wait_job N || fl_fail "new job after the abort"

# --- 2. the box dies and comes back ---
J=23
cl_log "job $J: the aggregator is killed mid-run and restarted"
fl_start_job A $J "${drv[*]}" 0 --dtype float32 --size 1M --iters 100000 --warmup 1 \
    --timeout-ms 45000
mid_run $J
t0=$(now)
kill -KILL "$CL_AGG_PID"
wait "$CL_AGG_PID" 2>/dev/null || true
CL_AGG_PID=
mv "$CL_DIR/agg.log" "$CL_DIR/agg-killed.log"
cl_agg_start --job-timeout-ms 1000 || fl_fail "the aggregator does not start again"
cl_log "aggregator killed and restarted in $(since "$t0") s"
if fl_wait_min /shouter/stats reject_unknown_job 1 30; then
    cl_log "new box: refused $(fl_json "$FL_LAST" reject_unknown_job) DATA of the lost job" \
        "(unknown job)"
else
    fl_fail "the new aggregator did not refuse the lost job's DATA (reject_unknown_job):" \
        "$(fl_json "$FL_LAST" reject_unknown_job)"
fi
[[ $(fl_json "$(fl_tel /shouter/jobs)" "$J") == none ]] ||
    fl_fail "the new aggregator lists job $J"
expect_exits A -1 "3 4" "$t0"
fl_start_job N2 24 "${drv[*]}" 0 --dtype float32 --size 256K --iters 3 --warmup 1
fl_wait_job N2 || fl_fail "new job on the restarted aggregator"

# --- 3. the box is stopped mid-job ---
J=25
cl_log "job $J: the aggregator is stopped (SIGTERM) mid-run"
fl_start_job T $J "${drv[*]}" 0 --dtype int32 --size 1M --iters 100000 --warmup 1 \
    --timeout-ms 30000
mid_run $J
t0=$(now)
pid=$CL_AGG_PID
kill -TERM "$pid"
expect_exits T -1 3 "$t0"
for r in "${!FL_T_LOGS[@]}"; do
    grep -q "job $J aborted by the aggregator 198.18.0.1: the aggregator is shutting down" \
        "${FL_T_LOGS[$r]}" ||
        fl_fail "rank $r does not say that job $J ended because the aggregator shut down"
done
rc=0
wait "$pid" || rc=$?
CL_AGG_PID=
cl_log "aggregator exit $rc after SIGTERM, $(since "$t0") s"
((rc == 0)) || fl_fail "aggregator exit $rc after SIGTERM"
grep -q "told the members of 1 job(s) that the aggregator is shutting down" \
    "$CL_DIR/agg.log" || fl_fail "the aggregator did not tell job $J's members"
fl_finish
