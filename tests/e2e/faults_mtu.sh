#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A chunk that does not fit the path (issue 17). The box's port and the bridge carry 9000
# bytes; worker link w0 carries 1500 (its veth and its bridge port), w1 9000. Ranks: w0 and
# w1 with the given drivers.
#
#  1. chunk auto (the default): the job runs exact and the ranks print the granted chunk,
#     the largest a 1500-byte path carries ((1500 - 28 - 64) / 4 = 352 elements of 4 bytes);
#  2. a fixed chunk that w0's path cannot carry (--chunk 1024): the rank fails at its own
#     start, before any JOIN (exit 2, naming MTU 1500 and the 352 elements that fit);
#  3. a job with a fixed chunk made from the large link (--chunk 1024), then an auto rank
#     from the small link: the box refuses it (reject_path_mtu) and aborts the job, still
#     filling, at once (ABORT EMSGSIZE): the w0 rank exits 2 naming MTU 1500, the w1 rank
#     exits 2 naming w0's rank and the chunk; the pool is idle afterwards.
#
#   faults_mtu.sh --drivers udp,dpdk
set -euo pipefail

drivers=udp,dpdk
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    *) echo "faults_mtu.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fm
IFS=, read -r -a drv <<<"$drivers"
((${#drv[@]} == 2)) || { cl_log "two drivers, please"; exit 2; }

cl_up 2
ip -n "$CL_PREFIX-w0" link set shr0 mtu 1500
ip -n "$CL_PREFIX-br" link set w0 mtu 1500
cl_agg_start --job-timeout-ms 2000
stats0=$(fl_tel /shouter/stats)

# 1. auto
cl_log "job 71: chunk auto, w0 at MTU 1500 (${drv[0]}), w1 at 9000 (${drv[1]})"
fl_start_job A 71 "${drv[0]} ${drv[1]}" 0 --dtype int32 --size 1M --iters 3 --warmup 1
fl_wait_job A || fl_fail "job 71 (chunk auto) not exact"
for log in "${FL_A_LOGS[@]}"; do
    grep -q "joined job 71: .*chunk 352," "$log" ||
        fl_fail "$(basename "$log"): not granted chunk 352: $(grep 'joined job' "$log")"
done

# 2. a fixed chunk too large for w0's path: w0 fails at its own start, naming the MTU
cl_log "job 72: --chunk 1024 from w0 (MTU 1500): refused before joining"
fl_start_job B 72 "${drv[0]}" 0 --dtype int32 --size 64K --iters 1 --chunk 1024
rc=0
wait "${FL_B_PIDS[0]}" || rc=$?
log=${FL_B_LOGS[0]}
((rc == 2)) || fl_fail "w0 with --chunk 1024: exit $rc, expected 2"
grep -q "MTU 1500.*at most 352 elements" "$log" ||
    fl_fail "w0's error does not name MTU 1500 and 352 elements: $(tail -n 2 "$log")"
grep -q "cannot join" "$log" && cl_log "  $(grep -o 'cannot join.*' "$log")"

# 3. a job with a fixed chunk made from w1, an auto rank from w0: refused by the box
cl_log "job 73: --chunk 1024 from w1 (MTU 9000), then chunk auto from w0: refused (EMSGSIZE)"
fl_start_rank C 1 73 1 2 "${drv[1]}" --dtype int32 --size 64K --iters 1 --chunk 1024 \
    --timeout-ms 20000
fl_wait_json /shouter/jobs "73/joined" 1 30 || fl_fail "w1 did not join job 73"
fl_start_rank D 0 73 0 2 "${drv[0]}" --dtype int32 --size 64K --iters 1
rc=0
wait "${FL_D_PIDS[0]}" || rc=$?
log=${FL_D_LOGS[0]}
((rc == 2)) || fl_fail "w0 joining job 73 (chunk 1024): exit $rc, expected 2"
grep -q "chunk of 1024 elements does not fit this host's path (MTU 1500" "$log" ||
    fl_fail "w0's error does not name the job's chunk and MTU 1500: $(tail -n 2 "$log")"
grep -q "cannot join" "$log" && cl_log "  $(grep -o 'cannot join.*' "$log")"
# w1 is told at once that the job cannot run (not after the box's wait for a rank)
rc=0
wait "${FL_C_PIDS[0]}" || rc=$?
log=${FL_C_LOGS[0]}
((rc == 2)) || fl_fail "w1 in job 73: exit $rc, expected 2"
grep -q "rank 0's path cannot carry the job's chunk of 1024 elements" "$log" ||
    fl_fail "w1's error does not name rank 0 and the chunk: $(tail -n 2 "$log")"
grep -q "cannot join" "$log" && cl_log "  $(grep -o 'cannot join.*' "$log")"

stats=$(fl_tel /shouter/stats)
fl_deltas "$stats0" "$stats"
((${FL_D[reject_path_mtu]:-0} >= 1)) || fl_fail "reject_path_mtu did not count"
fl_wait_json /shouter/pool slots_used 0 30 || fl_fail "pool not idle: $FL_LAST"
fl_finish
