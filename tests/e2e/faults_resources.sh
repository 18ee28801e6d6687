#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Resources: after a long-ish run with loss (and one job aborted under loss: a rank killed),
# /shouter/pool must be back to the idle level: packet and header mbufs in use as before the
# traffic, 0 slots used. Readings:
#   idle0  before any traffic
#   idle   after one tiny warm-up job: in zero-copy mode each data lcore keeps one spare
#          payload mbuf for the next result (app/agg/agg_dp.c, tx_prepare), so the idle level
#          is idle0 + (at most) one per lcore; this is the reference
#   peak   the highest reading sampled during the run (informational)
#   end    after the run: must equal idle (polled for up to 3 s: a TX buffer may hold a few
#          frames until its next flush)
#
#   faults_resources.sh [--loss 5] [--seconds 20] [-- aggregator options, e.g. --no-zerocopy]
set -euo pipefail

loss=5
seconds=20
agg_args=()
while (($#)); do
    case $1 in
    --loss) loss=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --) shift; agg_args=("$@"); break ;;
    *) echo "faults_resources.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fr

cl_up 3
cl_agg_start --job-timeout-ms 1000 "${agg_args[@]}"
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
sleep 0.5
idle=$(fl_tel /shouter/pool)
cl_log "idle (after a warm-up job): $(pool_kv "$idle") ($lcores lcore(s))"
for k in pkt_mbufs_in_use hdr_mbufs_in_use; do
    (($(fl_json "$idle" $k) <= $(fl_json "$idle0" $k) + lcores)) ||
        fl_fail "$k: $(fl_json "$idle" $k) after one tiny job, $(fl_json "$idle0" $k) before"
done

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

# lossy jobs, one after the other, for about $seconds s; every one must be exact
t_end=$(($(date +%s) + seconds))
job=41
dts=(float32 int32)
n=0
while (($(date +%s) < t_end)); do
    dt=${dts[$((n % 2))]}
    fl_start_job L $job "udp dpdk udp" 0 --dtype "$dt" --size 1M --iters 3 --warmup 1
    while kill -0 "${FL_L_PIDS[0]}" 2>/dev/null; do sample; sleep 0.2; done
    fl_wait_job L >/dev/null || fl_fail "lossy job $job ($dt)"
    job=$((job + 1))
    n=$((n + 1))
done
cl_log "$n lossy jobs done"

# one job aborted under loss: a rank killed in the middle
fl_start_job K $job "udp dpdk udp" 0 --dtype float32 --size 4M --iters 50 --warmup 1 \
    --timeout-ms 8000
fl_wait_json /shouter/jobs "$job/active" 1 20 || fl_fail "job $job never became active"
sleep 0.5
sample
kill -KILL "$(fl_rank_pid K 2)"
fl_wait_job K >/dev/null 2>&1 || true    # (fails by design: exit 3, 3, 137; checked below)
cl_log "job $job aborted (rank 2 killed):" "${FL_RCS[@]}"
[[ ${FL_RCS[0]} == 3 && ${FL_RCS[1]} == 3 ]] ||
    fl_fail "job $job: ranks 0 and 1 exited ${FL_RCS[0]} and ${FL_RCS[1]}, not 3 (aborted)"
for f in "${FL_K_LOGS[@]:0:2}"; do grep -h -m 1 -E 'aborted|no result' "$f" || true; done

drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
cl_log "frames dropped at the bridge: $drops; peak in use: pkt=$peak_pkt hdr=$peak_hdr"
((drops > 0)) || fl_fail "the loss rules dropped nothing"
"$CL_NETNS" netem all none --prefix "$CL_PREFIX"

ok=0
for ((i = 0; i < 30; i++)); do
    end=$(fl_tel /shouter/pool)
    if [[ $(fl_json "$end" pkt_mbufs_in_use) == "$(fl_json "$idle" pkt_mbufs_in_use)" &&
          $(fl_json "$end" hdr_mbufs_in_use) == "$(fl_json "$idle" hdr_mbufs_in_use)" &&
          $(fl_json "$end" slots_used) == 0 ]]; then
        ok=1
        break
    fi
    echo "  not yet: $(pool_kv "$end")"
    sleep 0.1
done
cl_log "end: $(pool_kv "$end") (idle: $(pool_kv "$idle"))"
((ok)) || fl_fail "resources not back to the idle level: $end"
fl_finish
