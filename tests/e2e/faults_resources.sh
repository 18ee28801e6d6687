#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Resources: after a run of lossy jobs (and one job aborted under loss: a rank killed),
# /shouter/pool must be back to the idle level: packet and header mbufs in use as before the
# traffic, 0 slots used. Readings:
#   idle0  before any traffic
#   idle   after one tiny warm-up job: header mbufs back to idle0, packet mbufs at most one
#          per lcore above it (each data lcore may keep a spare payload mbuf for its next
#          message, app/agg/agg_dp.c, tx_prepare, whether it holds one depends on the last
#          frame it handled); this is the idle level
#   peak   the highest reading sampled during the run (informational)
#   end    after the run: must come back to the idle level (waited for: a TX buffer may hold
#          a few frames until its next flush)
# The states are waited for (up to a generous 30 s each, the limit for a state that never
# comes); the lossy phase is a fixed number of jobs, not a length of time.
#
#   faults_resources.sh [--loss 5] [--jobs 4] [-- aggregator options, e.g. --no-zerocopy]
set -euo pipefail

loss=5
jobs=4
agg_args=()
while (($#)); do
    case $1 in
    --loss) loss=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --) shift; agg_args=("$@"); break ;;
    *) echo "faults_resources.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fr

cl_up 3
cl_agg_start --job-timeout-ms 3000 "${agg_args[@]}"
pool_kv() {
    local p=$1
    echo "pkt=$(fl_json "$p" pkt_mbufs_in_use) hdr=$(fl_json "$p" hdr_mbufs_in_use)" \
        "slots=$(fl_json "$p" slots_used)"
}
idle0=$(fl_tel /shouter/pool)
lcores=$(fl_json "$(fl_tel /shouter/stats)" lcores)
cl_log "idle0 (no traffic yet): $(pool_kv "$idle0")"

fl_start_job W 40 "udp udp" 0 --dtype int32 --size 4 --iters 1 --warmup 0
fl_wait_job W || fl_fail "warm-up job"
# pool_at P PKT_MAX HDR: PKT_MAX >= pkt_mbufs_in_use, hdr_mbufs_in_use == HDR, slots_used 0
pool_at() {
    local pkt hdr
    pkt=$(fl_json "$1" pkt_mbufs_in_use)
    hdr=$(fl_json "$1" hdr_mbufs_in_use)
    [[ $pkt =~ ^[0-9]+$ && $hdr =~ ^[0-9]+$ ]] && ((pkt <= $2 && hdr == $3)) &&
        [[ $(fl_json "$1" slots_used) == 0 ]]
}
# wait_pool PKT_MAX HDR: until the pool is there (30 s); the last reading in FL_LAST
wait_pool() {
    local end=$((SECONDS + 30))
    while ((SECONDS < end)); do
        FL_LAST=$(fl_tel /shouter/pool)
        pool_at "$FL_LAST" "$1" "$2" && return 0
        echo "  not yet: $(pool_kv "$FL_LAST")"
        sleep 0.1
    done
    return 1
}
wait_pool $(($(fl_json "$idle0" pkt_mbufs_in_use) + lcores)) \
    "$(fl_json "$idle0" hdr_mbufs_in_use)" ||
    fl_fail "not back to idle0 (+ a spare per lcore) after one tiny job: $(pool_kv "$FL_LAST")"
idle=$FL_LAST
cl_log "idle (after a warm-up job): $(pool_kv "$idle") ($lcores lcore(s))"

for i in 0 1 2; do "$CL_NETNS" netem "w$i" "loss $loss%" --prefix "$CL_PREFIX"; done
peak_pkt=0
peak_hdr=0
sample() {
    local p v
    p=$(fl_tel /shouter/pool)
    v=$(fl_json "$p" pkt_mbufs_in_use)
    [[ $v =~ ^[0-9]+$ ]] && ((v > peak_pkt)) && peak_pkt=$v
    v=$(fl_json "$p" hdr_mbufs_in_use)
    [[ $v =~ ^[0-9]+$ ]] && ((v > peak_hdr)) && peak_hdr=$v
    return 0
}

# $jobs lossy jobs, one after the other; every one must be exact
job=41
dts=(float32 int32)
n=0
while ((n < jobs)); do
    dt=${dts[$((n % 2))]}
    fl_start_job L $job "udp dpdk udp" 0 --dtype "$dt" --size 1M --iters 3 --warmup 1
    while kill -0 "${FL_L_PIDS[0]}" 2>/dev/null; do sample; sleep 0.2; done
    fl_wait_job L >/dev/null || fl_fail "lossy job $job ($dt)"
    job=$((job + 1))
    n=$((n + 1))
done
cl_log "$n lossy jobs done"

# one job aborted under loss: a rank killed in the middle (the job asks for 100000
# allreduces, so it cannot end by itself first; the kill comes once the box has completed a
# round of it since it became active). The survivors' --timeout-ms is long: they must be
# ended by the box's ABORT (--job-timeout-ms 3000), not give up by themselves
fl_start_job K $job "udp dpdk udp" 0 --dtype float32 --size 4M --iters 100000 --warmup 1 \
    --timeout-ms 30000
fl_wait_json /shouter/jobs "$job/active" 1 30 || fl_fail "job $job never became active"
fl_wait_grow /shouter/stats msg_completed 30 || fl_fail "job $job completes no round"
sample
kill -KILL "$(fl_rank_pid K 2)"
fl_wait_job K >/dev/null 2>&1 || true    # (fails by design: exit 3, 3, 137; checked below)
cl_log "job $job aborted (rank 2 killed):" "${FL_RCS[@]}"
[[ ${FL_RCS[0]} == 3 && ${FL_RCS[1]} == 3 ]] ||
    fl_fail "job $job: ranks 0 and 1 exited ${FL_RCS[0]} and ${FL_RCS[1]}, not 3 (aborted)"
for f in "${FL_K_LOGS[@]:0:2}"; do
    grep -h -m 1 -E 'aborted|no result' "$f" || true
    grep -q "job $job aborted by the aggregator 198.18.0.1: rank 2 did not join or send" "$f" ||
        fl_fail "job $job: $(basename "$f") does not say that the box aborted it for rank 2"
done

drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
cl_log "frames dropped at the bridge: $drops; peak in use: pkt=$peak_pkt hdr=$peak_hdr"
((drops > 0)) || fl_fail "the loss rules dropped nothing"
"$CL_NETNS" netem all none --prefix "$CL_PREFIX"

ok=0
wait_pool $(($(fl_json "$idle0" pkt_mbufs_in_use) + lcores)) \
    "$(fl_json "$idle0" hdr_mbufs_in_use)" && ok=1
end=$FL_LAST
cl_log "end: $(pool_kv "$end") (idle: $(pool_kv "$idle"))"
((ok)) || fl_fail "resources not back to the idle level: $end"
fl_finish
