#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A member that loses the ABORT. A rank is killed mid-allreduce; the aggregator
# (--job-timeout-ms 1000) aborts the job, but the bridge drops the first ABORT on its way to
# rank 0 (an nftables rule on the aggregator's bridge port: UDP to rank 0 whose shouter type
# byte is ABORT, a quota of one frame). Rank 0 keeps resending its DATA; the aggregator
# remembers the aborted job and answers that DATA with the ABORT again. So every surviving
# rank must exit 3 saying "job J aborted by the aggregator ...: rank R did not join or send in
# time" (rank 0's own --timeout-ms is 20000: without the second ABORT it would give up by
# itself, saying "no result"), exactly one ABORT must have been dropped, and the aggregator
# must count msg_reaborts >= 1. Together these prove that rank 0 learnt of the abort from the
# repeated ABORT; how fast is not measured (a rank that never exits is stopped by its
# `timeout` wrapper and fails on its status).
#
# The job asks for 100000 allreduces (it cannot end by itself during the test) and the rank
# is killed only once the box has completed a round of it since it became active.
#
#   faults_abort_lost.sh --drivers udp,dpdk,udp [--kill-rank 1]
set -euo pipefail

drivers=udp,dpdk,udp
kill_rank=1
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --kill-rank) kill_rank=$2; shift 2 ;;
    *) echo "faults_abort_lost.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fa

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
((kill_rank > 0 && kill_rank < world)) || {
    echo "faults_abort_lost.sh: --kill-rank in 1..world-1 (rank 0 loses the ABORT)" >&2
    exit 2
}
cl_up "$world"
cl_agg_start --job-timeout-ms 1000

now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN {printf "%.2f", t1 - t0}'; }

# the first ABORT (shouter type 7: UDP payload byte 3, transport header bit 88) from the box
# to rank 0 is dropped; "quota until" matches until its 100 bytes are used up (one frame)
fl_chain agg
fl_nft add rule netdev $FL_NFT in_agg ip daddr "$(cl_worker_ip 0)" udp dport != 0 \
    @th,88,8 7 quota until 100 bytes counter drop

J=31
cl_log "job $J: $world ranks ($drivers); rank $kill_rank is killed, rank 0 loses the ABORT"
before=$(fl_tel /shouter/stats)
fl_start_job K $J "${drv[*]}" 0 --dtype int32 --size 1M --iters 100000 --warmup 1 \
    --timeout-ms 20000
fl_wait_json /shouter/jobs "$J/active" 1 30 || fl_fail "job $J never became active"
fl_wait_grow /shouter/stats msg_completed 30 || fl_fail "job $J completes no round"
pid=$(fl_rank_pid K "$kill_rank")
[[ -n $pid ]] || fl_fail "rank $kill_rank is not running"
t0=$(now)
kill -KILL "$pid"
cl_log "killed rank $kill_rank (pid $pid)"
for r in "${!FL_K_PIDS[@]}"; do
    rc=0
    wait "${FL_K_PIDS[$r]}" || rc=$?
    dt=$(since "$t0")    # (for information: when the wait for this rank returned)
    [[ $r == "$kill_rank" ]] && continue
    log=${FL_K_LOGS[$r]}
    echo "  rank $r: exit $rc by $dt s: $(grep -h 'RESULT' "$log" | tail -n 1)"
    grep -h -m 1 -E 'aborted|no result' "$log" | sed 's/^/    /' || true
    ((rc == 3)) || fl_fail "rank $r exit $rc (want 3)"
    grep -q "job $J aborted by the aggregator 198.18.0.1: rank $kill_rank did not join or send" "$log" ||
        fl_fail "rank $r does not say that job $J's rank $kill_rank was silent"
done
dropped=$(fl_rule_hits)
cl_log "ABORT frames dropped on the way to rank 0: $dropped"
[[ $dropped == 1 ]] || fl_fail "$dropped ABORT frames dropped, want 1 (the rule did not work)"
fl_deltas "$before" "$(fl_tel /shouter/stats)"
cl_log "box: aborts=+${FL_D[msg_aborts]} reaborts=+${FL_D[msg_reaborts]:-none}" \
    "rejects: $(fl_nonzero reject_)"
[[ ${FL_D[msg_aborts]} == 1 ]] || fl_fail "msg_aborts +${FL_D[msg_aborts]}, want +1"
((${FL_D[msg_reaborts]:-0} >= 1)) || fl_fail "no ABORT sent again (msg_reaborts)"
fl_faults_clear
fl_finish
