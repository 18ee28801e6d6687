#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Forged frames from a third host (issue 14): while job 61 runs (rank 0 on kernel UDP at
# 198.18.0.10:47100, rank 1 on DPDK at 198.18.0.11:47000, or as --drivers says), a sender in
# another namespace on the same bridge (P-w<world>) writes raw IPv4 frames (faults_forge) with
# a valid shouter CRC and a random token, never the incarnation's:
#   to the box, from a member's address and port:  DATA, LEAVE   -> reject_bad_token
#                                                   RESULT, ABORT -> reject_bad_type
#   to a member, from the box's address and port:  RESULT, ABORT -> dropped by the worker
#                                                   (bad= / foreign= on its counters line)
# By construction the frames reach the job in both states that matter: a first round of them
# while the ranks hold after joining (queued at the workers, read before their first
# allreduce), then round after round while the allreduces run (chunks in flight), until
# every rank has finished (--end-file: they stay members). Then, with the ranks still
# members: the job is still active with every member, the box aborted nothing, and its
# reject counters went up by exactly what was sent to it (and nothing else); each worker
# counted at least the first round sent to it and no more than all of it. Released, the ranks
# leave and exit 0 with exact results (the worker checks every element) and equal crc=.
#
#   faults_forged.sh FAULTS_FORGE [--drivers udp,dpdk] [--dtype int32]
set -euo pipefail

forge=$1
shift
drivers=udp,dpdk
dtype=int32
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    *) echo "faults_forged.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init ffg
[[ -x $forge ]] || { cl_log "missing $forge"; exit 1; }

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
snd=$world
cl_up $((world + 1))
cl_agg_start --job-timeout-ms 5000

J=61
BOX=198.18.0.1:47000
port=()
for r in "${!drv[@]}"; do
    if [[ ${drv[$r]} == dpdk ]]; then port+=(47000); else port+=($((47100 + r))); fi
done
FL_A_PIDS=()
FL_A_LOGS=()
# shellcheck disable=SC2034  # read by fl_wait_job (through eval)
FL_A_DRV=()
for r in "${!drv[@]}"; do
    fl_start_rank A "$r" $J "$r" "$world" "${drv[$r]}" --dtype "$dtype" --size 256K \
        --iters 20 --warmup 0 --window 4 --local-port "${port[$r]}" \
        --ready-file "$CL_DIR/ready$r" --go-file "$CL_DIR/go" --end-file "$CL_DIR/end$r"
done
mapfile -t ready < <(for r in "${!drv[@]}"; do echo "$CL_DIR/ready$r"; done)
mapfile -t ends < <(for r in "${!drv[@]}"; do echo "$CL_DIR/end$r"; done)
fl_wait_ready 90 A "${ready[@]}" || fl_fail "job $J: the ranks did not join"
jobs=$(fl_tel /shouter/jobs)
chunk=$(fl_json "$jobs" "$J/chunk_elems")
[[ $chunk =~ ^[0-9]+$ ]] || { fl_fail "job $J not listed: $jobs"; fl_finish; }
before=$(fl_tel /shouter/stats)

# frames sent: to the box per type, to each rank (RESULT and ABORT)
declare -A sent=([data]=0 [leave]=0 [result]=0 [abort]=0)
to_rank=()
first_round=()
for r in "${!drv[@]}"; do to_rank+=(0); done

forge_send() {   # forge_send TYPE SRC DST RANK: 4 frames
    ip netns exec "$CL_PREFIX-w$snd" "$forge" send --type "$1" --src "$2" --dst "$3" \
        --job $J --rank "$4" --world "$world" --dtype "$dtype" --count "$chunk" --n 4 \
        >/dev/null
}

# one round: every kind, from/to every member
forge_round() {
    local r t src
    for r in "${!drv[@]}"; do
        src=$(cl_worker_ip "$r"):${port[$r]}
        for t in data leave result abort; do
            forge_send "$t" "$src" "$BOX" "$r"
            sent[$t]=$((sent[$t] + 4))
        done
        for t in result abort; do
            forge_send "$t" "$BOX" "$src" "$r"
            to_rank[r]=$((to_rank[r] + 4))
        done
    done
}

cl_log "job $J (chunk $chunk) holds: the first round of forged frames"
forge_round
for r in "${!drv[@]}"; do first_round+=("${to_rank[$r]}"); done
touch "$CL_DIR/go"
rounds=1
while :; do
    done_all=1
    for f in "${ends[@]}"; do [[ -e $f ]] || done_all=0; done
    ((done_all)) && break
    for r in "${!drv[@]}"; do
        [[ -e ${ends[$r]} ]] && continue
        pid=${FL_A_PIDS[$r]}
        kill -0 "$pid" 2>/dev/null || { fl_fail "rank $r exited during the forging"; break 2; }
    done
    forge_round
    rounds=$((rounds + 1))
done
cl_log "forged $rounds rounds while the job ran: to the box data=${sent[data]}" \
    "leave=${sent[leave]} result=${sent[result]} abort=${sent[abort]};" \
    "to the ranks (result+abort): ${to_rank[*]}"

# the ranks are done and still members: nothing may have ended
jobs=$(fl_tel /shouter/jobs)
after=$(fl_tel /shouter/stats)
[[ $(fl_json "$jobs" "$J/active") == 1 && $(fl_json "$jobs" "$J/joined") == "$world" ]] ||
    fl_fail "job $J lost its members to forged frames: $jobs"
fl_deltas "$before" "$after"
((FL_D[msg_aborts] == 0)) || fl_fail "the box aborted a job (msg_aborts +${FL_D[msg_aborts]})"
((FL_D[msg_leaves] == 0)) || fl_fail "the box took a LEAVE (msg_leaves +${FL_D[msg_leaves]})"
want_token=$((sent[data] + sent[leave]))
want_type=$((sent[result] + sent[abort]))
[[ ${FL_D[reject_bad_token]} == "$want_token" ]] ||
    fl_fail "reject_bad_token +${FL_D[reject_bad_token]}, forged DATA+LEAVE $want_token"
[[ ${FL_D[reject_bad_type]} == "$want_type" ]] ||
    fl_fail "reject_bad_type +${FL_D[reject_bad_type]}, forged RESULT+ABORT $want_type"
[[ ${FL_D[rejects]} == $((want_token + want_type)) ]] ||
    fl_fail "other rejects: $(fl_nonzero reject_)"
cl_log "box: bad_token=+${FL_D[reject_bad_token]} bad_type=+${FL_D[reject_bad_type]}" \
    "data=+${FL_D[msg_data]} completed=+${FL_D[msg_completed]} aborts=+${FL_D[msg_aborts]}"

rm -f "${ends[@]}"
fl_wait_job A || fl_fail "job $J under forged frames"
for r in "${!drv[@]}"; do
    line=$(grep -E "rank $r: tx_data=" "${FL_A_LOGS[$r]}" | tail -n 1 || true)
    bad=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' <<<"$line")
    foreign=$(sed -n 's/.* foreign=\([0-9]*\).*/\1/p' <<<"$line")
    if [[ -z $bad || -z $foreign ]]; then
        fl_fail "rank $r: no counters line"
        continue
    fi
    n=$((bad + foreign))
    cl_log "rank $r (${drv[$r]}): dropped bad=$bad foreign=$foreign of ${to_rank[$r]} forged" \
        "(first round ${first_round[$r]})"
    # (+1: the JOIN_ACK that tells every member the job is active echoes no member's nonce,
    # so each counts it as foreign and learns it from the answer to its repeated JOIN)
    ((n >= first_round[r] && n <= to_rank[r] + 1)) ||
        fl_fail "rank $r: $n forged frames dropped, sent ${to_rank[$r]}" \
            "(${first_round[$r]} before its first allreduce)"
done
fl_finish
