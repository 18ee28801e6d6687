#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A job sharded over two boxes (issue 10 item 2): box 1 in P-agg (198.18.0.1), box 2 in
# P-agg2 (198.18.0.2), N kernel-UDP ranks with --agg 198.18.0.1,198.18.0.2 (lib/shard: each
# box sums its share of every call), 5% loss on box 2's link and on worker 1's link.
#
# 1. int32 allreduce: every rank checks its output exact (shouter-worker's own check), and
#    both boxes completed rounds of the job (/shouter/stats rounds_allreduce grew at each);
# 2. float32 allreduce: bit-identical at every rank (the same CRC of every output);
# 3. allgather and broadcast (int32): exact, through the staging of per-rank blocks;
# 4. box 2 is killed (SIGKILL) mid-job: every rank exits 3 and its error names the box
#    ("box 2 of 2 (198.18.0.2:47000)"); box 1 is left by every rank (the job is no longer
#    listed there). "Mid-job": the job asks for 100000 iterations and the kill comes once
#    box 2 has completed a round of it since it became active.
#
#   shards.sh [--ranks N]
set -euo pipefail

n=4
while (($#)); do
    case $1 in
    --ranks) n=$2; shift 2 ;;
    *) echo "shards.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init sd

drv=$(for ((i = 0; i < n; i++)); do printf 'udp '; done)
boxes=(--agg "198.18.0.1,198.18.0.2")
cl_up "$n" 2
CL_BOX=1 cl_agg_start --job-timeout-ms 2000
box2_lcores=1
CL_BOX=2 CL_AGG_LCORES=$box2_lcores cl_agg_start --job-timeout-ms 2000
"$CL_NETNS" netem agg2 "loss 5%" --prefix "$CL_PREFIX"
"$CL_NETNS" netem w1 "loss 5%" --prefix "$CL_PREFIX"

now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN {printf "%.2f", t1 - t0}'; }

# rounds KIND BOX: the box's completed rounds of that kind
rounds() { CL_BOX=$2 fl_json "$(CL_BOX=$2 fl_tel /shouter/stats)" "rounds_$1"; }

# --- 1. int32 allreduce, exact; both boxes sum ---
J=31
r1=$(rounds allreduce 1)
r2=$(rounds allreduce 2)
cl_log "job $J: int32 allreduce, $n ranks sharded over 2 boxes, 5% loss on agg2 and w1"
fl_start_job I $J "$drv" 0 "${boxes[@]}" --dtype int32 --size 1M --iters 3 --warmup 1
fl_wait_job I || fl_fail "job $J (int32 allreduce over 2 boxes)"
grep -q "sharded over 2 boxes" "${FL_I_LOGS[0]}" || fl_fail "rank 0 does not say it is sharded"
d1=$(($(rounds allreduce 1) - r1))
d2=$(($(rounds allreduce 2) - r2))
cl_log "rounds completed: box 1 +$d1, box 2 +$d2"
((d1 > 0 && d2 > 0)) || fl_fail "a box summed nothing of job $J (box 1 +$d1, box 2 +$d2)"

# --- 2. float32 allreduce, bit-identical ---
J=32
fl_start_job F $J "$drv" 0 "${boxes[@]}" --dtype float32 --size 1M --iters 3 --warmup 1
fl_wait_job F || fl_fail "job $J (float32 allreduce over 2 boxes: not bit-identical or failed)"

# --- 3. per-rank blocks (staged) and a relay ---
J=33
for coll in allgather "broadcast --root 1"; do
    # shellcheck disable=SC2086
    fl_start_job C $J "$drv" 0 "${boxes[@]}" --dtype int32 --size 256K --iters 2 --warmup 1 \
        --coll $coll
    fl_wait_job C || fl_fail "job $J ($coll over 2 boxes)"
    J=$((J + 1))
done

# --- 4. box 2 dies mid-job ---
J=40
cl_log "job $J: box 2 is killed mid-run"
fl_start_job K $J "$drv" 0 "${boxes[@]}" --dtype int32 --size 1M --iters 100000 --warmup 1 \
    --timeout-ms 3000
CL_BOX=2 fl_wait_json /shouter/jobs "$J/active" 1 30 || fl_fail "job $J never active at box 2"
CL_BOX=2 fl_wait_grow /shouter/stats msg_completed 30 || fl_fail "box 2 completes no round"
t0=$(now)
kill -KILL "${CL_BOX_PIDS[2]}"
wait "${CL_BOX_PIDS[2]}" 2>/dev/null || true
cl_box_pid_set 2 ""
for r in "${!FL_K_PIDS[@]}"; do
    rc=0
    wait "${FL_K_PIDS[$r]}" || rc=$?
    echo "  rank $r: exit $rc after $(since "$t0") s: $(grep -h '^RESULT' "${FL_K_LOGS[$r]}" |
        tail -n 1)"
    grep -h -m 1 'iteration' "${FL_K_LOGS[$r]}" | sed 's/^/    /' || true
    ((rc == 3)) || fl_fail "rank $r exit $rc (want 3)"
    grep -q "box 2 of 2 (198.18.0.2:47000)" "${FL_K_LOGS[$r]}" ||
        fl_fail "rank $r does not name box 2"
done
fl_wait_json /shouter/jobs "$J" none 30 || fl_fail "box 1 still lists job $J: $FL_LAST"
fl_finish
