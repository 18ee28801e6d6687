#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Bad input while a job runs. A job of real ranks (job 11) runs; meanwhile faults_badpkt, in
# a namespace of its own, sends the aggregator one frame of every malformed kind (see
# faults_badpkt.c: truncated at every header field, bad magic/version/type/dtype/op/length/
# CRC, unknown job, rank out of range, ranks spoofed from its address, and, from the bound
# addresses of a job of its own (job 12), wrong dtype, count above the chunk, slot outside
# the window, out of step with the open round), plus one datagram to a port that is no lane.
# Then, from /shouter/stats (dpdk-telemetry.py), every reject reason's counter must have gone
# up by exactly the number sent, and bad_port by 1.
#
# Exactly, not "at least": the two readings bracket only the garbage and job 11's DATA (the
# first reading is taken once job 11 is active, the second while it certainly still is: its
# ranks run with --end-file, so after their last allreduce they wait, still members, until
# the test removes the file after the second reading; checked). Without loss, the ranks' DATA is never refused: a resent
# DATA is a duplicate or a resend, not a reject; only the end of a job (LEAVE, and DATA of a
# rank that has left, from late copies: unknown_job once the job is freed, counted as stale
# before) can legitimately produce a reject, and that happens outside the window. The sender itself waits for the answers it is owed and
# for job 12's results, which come after its garbage on the same queue, so every frame has
# been counted when it exits. The garbage is fire-and-forget, so none of it may be lost on
# the way: job 11 runs with a window of 4 (at most 4 frames per rank in flight) and the
# sender paces its frames, so the box's receive ring (hundreds of frames) and the kernel's
# backlog cannot overflow. (With job 11 at full speed on two shared cores, the ring does
# overflow now and then and a frame of garbage goes missing: a count 1 short.) So the box's
# port_imissed and nombuf must not have gone up between the readings either: a count that is
# short because a frame was dropped on the way in is named as such.
#
# Also: job 12's round gets the exact sum despite the refused frames, then its member that
# answers the next round out of step gets the job aborted (EPROTO, at both ranks), job 11's results
# are exact (int32) / bit-identical (float32) at all ranks, the box answers ping and
# telemetry afterwards and runs a new job, and it exits 0 on SIGINT.
#
#   faults_badinput.sh FAULTS_BADPKT --drivers udp,udp --dtype int32
set -euo pipefail

badpkt=$1
shift
drivers=udp,udp
dtype=int32
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    *) echo "faults_badinput.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fb
[[ -x $badpkt ]] || { cl_log "missing $badpkt"; exit 1; }

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
snd=$world                          # the sender's namespace: P-w<world>
cl_up $((world + 1))
cl_agg_start --job-timeout-ms 5000

J1=11
J2=12
cl_log "job $J1: $world ranks ($drivers) $dtype, held open until the garbage is counted"
# (a fixed chunk: faults_badpkt's spoofed JOIN repeats the job's slots and chunk, which must
# be what the ranks asked for, not 0 = auto, to be refused as spoofed rather than as a JOIN
# that does not match the job; the slots are the box's grant, what the ranks asked for: the
# window and its spare slots)
fl_start_job J1 $J1 "${drv[*]}" 0 --dtype "$dtype" --size 256K --iters 1000 --warmup 1 \
    --window 4 --chunk 256 --end-file "$CL_DIR/end-$J1-@RANK@"
fl_wait_json /shouter/jobs "$J1/active" 1 20 || fl_fail "job $J1 never became active"
chunk=$(fl_json "$FL_LAST" "$J1/chunk_elems")
slots=$(fl_json "$FL_LAST" "$J1/window")
before=$(fl_tel /shouter/stats)

cl_log "garbage from $(cl_worker_ip "$snd") (job $J1 chunk $chunk, $slots slots; own job $J2)"
out=$CL_DIR/badpkt.out
rc=0
timeout 60 ip netns exec "$CL_PREFIX-w$snd" "$badpkt" --agg 198.18.0.1 \
    --local "$(cl_worker_ip "$snd")" --job1 $J1 --world1 "$world" --dtype1 "$dtype" \
    --chunk1 "$chunk" --window1 "$slots" --job2 $J2 >"$out" 2>&1 || rc=$?
sed 's/^/  badpkt: /' "$out"
((rc == 0)) || fl_fail "faults_badpkt exit $rc"

after=$(fl_tel /shouter/stats)
jobs=$(fl_tel /shouter/jobs)
[[ $(fl_json "$jobs" "$J1/active") == 1 ]] ||
    fl_fail "job $J1 was over before the second reading: the window is not clean"
# let job 11's ranks leave: each creates its end file after its last allreduce and waits
# until it is gone
ends=()
for ((r = 0; r < world; r++)); do ends+=("$CL_DIR/end-$J1-$r"); done
fl_wait_ready 300 J1 "${ends[@]}" || fl_fail "job $J1's ranks did not all finish their allreduces"
rm -f "${ends[@]}"
[[ $(fl_json "$jobs" "$J2") == none ]] || fl_fail "job $J2 still there after its LEAVEs"
[[ $(fl_json "$jobs" "$J1/joined") == "$world" ]] ||
    fl_fail "job $J1 lost a member (spoofed LEAVE?): $(fl_json "$jobs" "$J1")"

fl_deltas "$before" "$after"
expect=$(grep '^expect ' "$out" | tail -n 1 || true)
[[ -n $expect ]] || fl_fail "no expect line from faults_badpkt"
total=0
for kv in ${expect#expect }; do
    k=${kv%=*}
    want=${kv#*=}
    got=${FL_D[$k]:-missing}
    if [[ $got == "$want" ]]; then
        echo "  $k: +$got (sent $want)"
    else
        fl_fail "$k: +$got, sent $want"
    fi
    [[ $k == reject_* ]] && total=$((total + want))
done
[[ ${FL_D[rejects]} == "$total" ]] || fl_fail "rejects: +${FL_D[rejects]}, sent $total"
cl_log "box meanwhile: data=+${FL_D[msg_data]} completed=+${FL_D[msg_completed]}" \
    "port_imissed=+${FL_D[port_imissed]} nombuf=+${FL_D[nombuf]}"
[[ ${FL_D[port_imissed]} == 0 ]] ||
    fl_fail "port_imissed +${FL_D[port_imissed]}: the box's receive ring overflowed (frames lost)"
[[ ${FL_D[nombuf]} == 0 ]] ||
    fl_fail "nombuf +${FL_D[nombuf]}: the box ran out of mbufs (frames lost)"

fl_wait_job J1 || fl_fail "job $J1 under garbage"

ip netns exec "$CL_PREFIX-w$snd" ping -c 1 -w 30 -q 198.18.0.1 >/dev/null ||
    fl_fail "the box does not answer ping"
pool=$(fl_tel /shouter/pool)
[[ $(fl_json "$pool" slots_used) == 0 ]] || fl_fail "slots still used: $pool"

cl_log "a new job after the garbage"
fl_start_job J3 13 "${drv[*]}" 0 --dtype "$dtype" --size 64K --iters 2 --warmup 1
fl_wait_job J3 || fl_fail "a new job after the garbage"
fl_finish
