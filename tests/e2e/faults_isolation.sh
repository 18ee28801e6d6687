#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Isolation: two jobs at once on one aggregator (different job ids, 2 ranks each, in their
# own namespaces), one of them with loss on its links (nftables at the bridge, both
# directions). Both must be exact (int32) / bit-identical at their ranks (float32), the two
# jobs are active at the same time by construction (every rank holds after joining until all
# four have joined) and /shouter/jobs must list both active then, the loss
# must have hit only the lossy job's links, and the box must not have aborted anything.
# The jobs use different tensor sizes, so their crc= differ and a mix-up cannot pass.
#
#   faults_isolation.sh [--loss 3] [--dtypes int32,float32]
set -euo pipefail

loss=3
dtypes=int32,float32
while (($#)); do
    case $1 in
    --loss) loss=$2; shift 2 ;;
    --dtypes) dtypes=$2; shift 2 ;;
    *) echo "faults_isolation.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fiso

cl_up 4
"$CL_NETNS" netem w2 "loss $loss%" --prefix "$CL_PREFIX"
"$CL_NETNS" netem w3 "loss $loss%" --prefix "$CL_PREFIX"
cl_agg_start --job-timeout-ms 5000
before=$(fl_tel /shouter/stats)

ja=30
IFS=, read -r -a dts <<<"$dtypes"
for dt in "${dts[@]}"; do
    ja=$((ja + 1))
    jb=$((ja + 100))
    cl_log "$dt: job $ja (w0 udp, w1 dpdk, clean) and job $jb (w2 dpdk, w3 udp, $loss% loss)"
    # Overlap by construction: every rank joins, says so (--ready-file) and holds before its
    # first allreduce until the go file exists. Both jobs are then active at once (a rank has
    # its JOIN_ACK only when its job is active, and none has left): the box must list both.
    go=$CL_DIR/go-$dt
    fl_start_job A $ja "udp dpdk" 0 --dtype "$dt" --size 2M --iters 10 --warmup 1 \
        --ready-file "$CL_DIR/ready-$dt-A@RANK@" --go-file "$go"
    fl_start_job B $jb "dpdk udp" 2 --dtype "$dt" --size 1M --iters 10 --warmup 1 \
        --ready-file "$CL_DIR/ready-$dt-B@RANK@" --go-file "$go"
    fl_wait_ready 60 "A B" "$CL_DIR/ready-$dt-A"{0,1} "$CL_DIR/ready-$dt-B"{0,1} ||
        fl_fail "$dt: the ranks of jobs $ja and $jb did not all join"
    jobs=$(fl_tel /shouter/jobs)
    for j in $ja $jb; do
        [[ $(fl_json "$jobs" "$j/active") == 1 ]] ||
            fl_fail "$dt: job $j is not listed active while its ranks hold: $jobs"
    done
    touch "$go"
    fl_wait_job A || fl_fail "$dt: clean job $ja next to a lossy one"
    crc_a=$(cl_field "${FL_RESULTS[0]}" crc)
    fl_wait_job B || fl_fail "$dt: lossy job $jb next to a clean one"
    crc_b=$(cl_field "${FL_RESULTS[0]}" crc)
    cl_log "$dt: retx of job $jb: $(fl_sum_field retx)"
    [[ $crc_a != "$crc_b" ]] || fl_fail "$dt: both jobs have crc $crc_a (a mix-up?)"
done

drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX")
cl_log "frames dropped at the bridge (port dir n):" "$(tr "\n" " " <<<"$drops")"
awk '$1 ~ /^w[23]$/ {s += $3} END {exit !(s > 0)}' <<<"$drops" ||
    fl_fail "the loss rules on w2/w3 dropped nothing"
awk '$1 !~ /^w[23]$/ && $3 > 0 {bad = 1} END {exit bad}' <<<"$drops" ||
    fl_fail "frames dropped on a link of the clean job"
fl_deltas "$before" "$(fl_tel /shouter/stats)"
cl_log "box: completed=+${FL_D[msg_completed]} resent=+${FL_D[msg_resent]}" \
    "aborts=+${FL_D[msg_aborts]} rejects: $(fl_nonzero reject_)"
((FL_D[msg_aborts] == 0)) || fl_fail "the box aborted a job"
fl_finish
