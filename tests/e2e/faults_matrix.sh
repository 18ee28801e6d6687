#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Allreduce under loss, duplication or reordering on every worker link (both directions):
# int32 must be exact (every rank verifies against the exact sum) and float32 bit-identical
# at all ranks (equal crc= in the RESULT lines, a CRC32C over every iteration's result; the
# inputs are integers whose sums are exact in float32 in any order, and every rank verifies
# them bit for bit as well). The fault must have been applied:
# frames dropped (loss), frames copied (dup) or frames sent through the slow class
# (reorder), and the ranks must have retransmitted under loss.
#
#   faults_matrix.sh --drivers udp,dpdk --fault loss:5|dup:10|reorder:10
#                    [--sizes 64K,256K] [--iters 3] [--dtypes int32,float32]
#
# How each fault is made on this kernel (no sch_netem): see tests/e2e/faults_lib.sh.
set -euo pipefail

drivers=udp,udp
fault=loss:1
sizes=256K
iters=3
dtypes=int32,float32
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --fault) fault=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --dtypes) dtypes=$2; shift 2 ;;
    *) echo "faults_matrix.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
kind=${fault%%:*}
pct=${fault#*:}
[[ $kind =~ ^(loss|dup|reorder)$ && $pct =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
    { echo "faults_matrix.sh: --fault loss|dup|reorder:PCT" >&2; exit 2; }

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fm

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_log "world=$world drivers=$drivers fault=$kind $pct% sizes=$sizes iters=$iters"
cl_up "$world"
for ((i = 0; i < world; i++)); do
    case $kind in
    loss) "$CL_NETNS" netem "w$i" "loss $pct%" --prefix "$CL_PREFIX" ;;
    dup) fl_dup "$i" "$pct" ;;
    reorder) fl_reorder "$i" "$pct" ;;
    esac
done
cl_agg_start --job-timeout-ms 5000
before=$(fl_tel /shouter/stats)

retx=0
IFS=, read -r -a szs <<<"$sizes"
IFS=, read -r -a dts <<<"$dtypes"
for dt in "${dts[@]}"; do
    for sz in "${szs[@]}"; do
        cl_log "allreduce $dt size=$sz under $kind $pct%"
        t0=$(date +%s.%N)
        if ! cl_allreduce "${drv[*]}" --dtype "$dt" --size "$sz" --iters "$iters" --warmup 1; then
            fl_fail "$dt size $sz under $kind $pct%"
            continue
        fi
        for line in "${CL_RESULTS[@]}"; do
            retx=$((retx + $(cl_field "$line" retx || echo 0)))
        done
        cl_log "  $(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%.1f", t1 - t0}') s"
    done
done

after=$(fl_tel /shouter/stats)
fl_deltas "$before" "$after"
cl_log "box: data=${FL_D[msg_data]} completed=${FL_D[msg_completed]}" \
    "duplicates=${FL_D[msg_duplicates]} resent=${FL_D[msg_resent]} aborts=${FL_D[msg_aborts]}" \
    "rejects: $(fl_nonzero reject_); ranks retx=$retx"
case $kind in
loss)
    n=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
    cl_log "loss: $n frames dropped at the bridge"
    ((n > 0)) || fl_fail "the loss rules dropped nothing"
    ((retx > 0)) || fl_fail "frames were dropped but no rank retransmitted"
    ;;
dup)
    n=$(fl_rule_hits)
    cl_log "dup: $n frames duplicated at the bridge"
    ((n > 0)) || fl_fail "the dup rules copied nothing"
    ((FL_D[msg_duplicates] + FL_D[msg_resent] > 0)) ||
        fl_fail "frames were duplicated but the box saw no duplicate"
    ;;
reorder)
    n=$(fl_rule_hits)
    read -r s o dr <<<"$(fl_slow_stats)"
    cl_log "reorder: $n frames put in the slow class: $s delivered late (the class waited" \
        "$o times while the others overtook them), $dr dropped (its FIFO full)"
    ((s > 0 && o > 0)) || fl_fail "no frame was held back in the slow class"
    ;;
esac
((FL_D[msg_aborts] == 0)) || fl_fail "the box aborted a job"
fl_finish
