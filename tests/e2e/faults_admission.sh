#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Admission (issue 7): a box that requires a secret (--secret-file) and admits JOINs only
# from an allowlist (--allow 198.18.0.10/31,198.18.0.12: namespaces w0, w1, w2; w3 is
# outside).
#
#  1. job 41 (udp + dpdk ranks, the right secret) is joined and held before its first
#     allreduce (--go-file); meanwhile a flood of JOINs of mixed shapes comes from inside
#     the allowlist (w2: each gets a challenge or a refusal, none makes a job) and from
#     outside it (w3: not_allowed); then job 41 runs to exact results at both ranks;
#  2. a rank with a wrong secret is refused (exit 2, "wrong secret"; reject_bad_auth);
#  3. a rank without a secret is refused (exit 2, "requires the job's secret");
#  4. a rank outside the allowlist is refused even with the right secret (exit 2,
#     "allowlist"; reject_not_allowed);
#  5. a replayed JOIN: a member's JOIN with its proof, captured on the wire (w2), sent again
#     from another member's address (reject_stale_auth), and from its own address and port
#     after the challenge's lifetime (reject_stale_auth): no job is made by either;
#  6. none of it left a job behind; the pool is idle; the box exits 0.
#
#   faults_admission.sh ADM_TOOL
set -euo pipefail

tool=$1
# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fa
py=/usr/bin/python3
[[ -x $py ]] || { cl_log "missing $py"; exit 1; }

cl_up 4
secret=$CL_DIR/secret
wrong=$CL_DIR/wrong
(umask 077; printf 'the-secret-of-job-41-and-others\n' >"$secret"
 printf 'not-the-secret-at-all-0123456789\n' >"$wrong")
TTL_MS=1000
cl_agg_start --job-timeout-ms 2000 --secret-file "$secret" \
    --allow 198.18.0.10/31,198.18.0.12 --auth-ttl-ms $TTL_MS

stats0=$(fl_tel /shouter/stats)

# --- 1. the right secret, a flood meanwhile ---
J=41
go=$CL_DIR/go41
cl_log "job $J: udp + dpdk ranks with the secret, held before the first allreduce"
fl_start_job J1 $J "udp dpdk" 0 --dtype int32 --size 256K --iters 4 --warmup 1 \
    --secret-file "$secret" --ready-file "$CL_DIR/ready41.@RANK@" --go-file "$go"
fl_wait_ready 60 J1 "$CL_DIR/ready41.0" "$CL_DIR/ready41.1" ||
    fl_fail "job $J: the ranks did not join with the secret"
jobs=$(fl_tel /shouter/jobs)
[[ $(fl_json "$jobs" "$J/active") == 1 ]] || fl_fail "job $J is not active after both joined"

cl_log "flood: 3000 JOINs from w2 (allowed, no secret) and 1000 from w3 (outside)"
timeout 120 ip netns exec "$CL_PREFIX-w2" $py "$tool" flood "$(cl_worker_ip 2)" 198.18.0.1 \
    47000 3000 1 || fl_fail "flood from w2 failed"
timeout 120 ip netns exec "$CL_PREFIX-w3" $py "$tool" flood "$(cl_worker_ip 3)" 198.18.0.1 \
    47000 1000 2 || fl_fail "flood from w3 failed"
jobs=$(fl_tel /shouter/jobs)
[[ $(fl_json "$jobs" "$J/active") == 1 ]] || fl_fail "job $J is not active after the flood"
njobs=$(python3 -c 'import json,sys; print(len(next(iter(json.loads(sys.argv[1]).values()))))' \
    "$jobs")
[[ $njobs == 1 ]] || fl_fail "the flood made jobs: $njobs listed ($jobs)"
touch "$go"
fl_wait_job J1 || fl_fail "job $J: not exact with the secret"

# --- 2, 3, 4: refused ranks ---
# refused GROUP NS MESSAGE [worker options]: the one rank of job 42 must exit 2 with MESSAGE
refused() {
    local g=$1 ns=$2 msg=$3 rc=0 log pid
    shift 3
    fl_start_job "$g" 42 "udp" "$ns" --dtype int32 --size 4K --iters 1 --warmup 0 \
        --timeout-ms 5000 "$@"
    eval "log=\${FL_${g}_LOGS[0]}; pid=\${FL_${g}_PIDS[0]}"
    wait "$pid" || rc=$?
    if ((rc != 2)) || ! grep -q "$msg" "$log"; then
        fl_fail "$g: expected exit 2 and '$msg', got exit $rc:"
        tail -n 5 "$log" >&2
    else
        cl_log "$g: refused as expected ($(grep -o "cannot join.*" "$log" | head -n 1))"
    fi
}
refused WRONG 2 "wrong secret" --secret-file "$wrong"
refused NOSECRET 2 "requires the job's secret"
refused OUTSIDE 3 "allowlist" --secret-file "$secret"

# --- 5. replayed JOIN ---
cl_log "replay: capture a member's answered JOIN on w2, run its job (43), replay it"
sniff_ready=$CL_DIR/sniff.ready
cap=$CL_DIR/join.cap
timeout 120 ip netns exec "$CL_PREFIX-w2" $py "$tool" sniff shr0 "$sniff_ready" "$cap" &
sniff_pid=$!
CL_PIDS+=("$sniff_pid")
for ((i = 0; i < 200; i++)); do [[ -e $sniff_ready ]] && break; sleep 0.05; done
[[ -e $sniff_ready ]] || fl_fail "the capture did not start"
fl_start_job J3 43 "udp" 2 --dtype int32 --size 4K --iters 1 --warmup 0 \
    --secret-file "$secret"
fl_wait_job J3 || fl_fail "job 43: not exact with the secret"
wait "$sniff_pid" || fl_fail "the capture failed"
read -r src sport hex <"$cap"
[[ $src == "$(cl_worker_ip 2)" ]] || fl_fail "captured a JOIN from $src"
before=$(fl_tel /shouter/stats)
ip netns exec "$CL_PREFIX-w0" $py "$tool" replay "$(cl_worker_ip 0)" "$sport" 198.18.0.1 \
    47000 "$hex"
fl_wait_json /shouter/stats reject_stale_auth \
    $(($(fl_json "$before" reject_stale_auth) + 1)) 10 ||
    fl_fail "the JOIN replayed from another address was not refused as stale_auth"
# after the challenge's lifetime (good for one to two of them), from its own address
sleep $((2 * TTL_MS / 1000 + 1))
before=$(fl_tel /shouter/stats)
ip netns exec "$CL_PREFIX-w2" $py "$tool" replay "$src" "$sport" 198.18.0.1 47000 "$hex"
fl_wait_json /shouter/stats reject_stale_auth \
    $(($(fl_json "$before" reject_stale_auth) + 1)) 10 ||
    fl_fail "the JOIN replayed after the challenge's lifetime was not refused as stale_auth"

# --- 6. nothing left behind; every refusal counted ---
fl_wait_json /shouter/jobs "43" none 10 || fl_fail "a job is left: $FL_LAST"
after=$(fl_tel /shouter/stats)
fl_deltas "$stats0" "$after"
cl_log "counters: $(fl_nonzero reject_) msg_challenges=${FL_D[msg_challenges]:-0}"
for k in reject_not_allowed reject_bad_auth reject_stale_auth msg_challenges; do
    ((${FL_D[$k]:-0} > 0)) || fl_fail "$k did not count"
done
# w3's whole flood and the outside rank: not_allowed
((${FL_D[reject_not_allowed]:-0} >= 1001)) ||
    fl_fail "reject_not_allowed ${FL_D[reject_not_allowed]:-0} < 1001"
((${FL_D[msg_jobs_created]:-0} == 2)) ||
    fl_fail "msg_jobs_created ${FL_D[msg_jobs_created]:-0}: only jobs 41 and 43 may be made"
pool=$(fl_tel /shouter/pool)
[[ $(fl_json "$pool" slots_used) == 0 ]] || fl_fail "pool not idle: $pool"
fl_finish
